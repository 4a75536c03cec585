//! Kinematics of the self-mobile wheel-foot module of the thesis "Strategic Planning for
//! Modular Robotic Structures" (spec seed 000, §2.6 and §3.1): the two DH chains the thesis
//! designs its inchworm gaits with, the four-tip leg variant of its quadruped, and the
//! brute-force pose searches of its Appendices A and B that print Tables 3.5, 3.6 and
//! 3.8–3.11. Decision record `docs/decisions/0022-wheelfoot-kinematics.md`.
//!
//! DH convention (3.1): Aᵢ = Rotz(θᵢ)·Transz(dᵢ)·Transx(aᵢ)·Rotx(αᵢ). Angles are in degrees
//! at the interface (the thesis's unit), lengths in metres.
//!
//! Frames:
//! - **Chain 1 / leg model frame** (Table 3.2, 3.18): base at the wheel connection point
//!   (centre of the wheel's front face); z_m points along the module from the wheel towards
//!   the foot (outward along a leg), y_m is vertical (negative = down), x_m is the robot's
//!   longitudinal axis for a leg (the thesis's "longitudinal y" is −x_m).
//! - **Chain 1 V-Rep frame** (3.6–3.8): origin at the wheel's lower tip, x forward (foot →
//!   wheel), z up: x_v = −z_m, y_v = −x_m, z_v = y_m + 0.025. The foot tip rests at
//!   x_v = −0.172, so the forward step is xd = 0.172 + x_v.
//! - **Chain 2 model frame** (Table 3.3): base at the (planted) lower tip of the foot plate,
//!   with a virtual joint θ1 there; x_m is up, y_m points from the foot towards the wheel.
//!   Its V-Rep frame (3.18–3.20) is (x, y, z) = (y_m, z_m, x_m); the wheel is pulled back by
//!   xd = 0.172 − x_wt and the caster centre is z_bc above the ground.
//!
//! Joint names: BJ1 = `BackJoint1` (shoulder), BJ2 = `BackJoint2` (elbow), FJ = wheel. In
//! chain 1 α1 = BJ1, α2 = BJ2, θ1 = FJ; in chain 2 θ4 = BJ1, θ3 = BJ2.

use std::fmt::{self, Write as _};
use std::ops::RangeInclusive;
use std::str::FromStr;

use nalgebra::{Matrix4, Point3};

use modbot_core::CoreError;

use crate::error::{GaitError, Result};

/// d1: wheel connection point (front-face centre) → BJ1, m.
pub const D1: f64 = 0.0775;
/// d2: BJ1 → BJ2, m.
pub const D2: f64 = 0.0475;
/// d3: BJ2 → outer centre of the foot plate, m.
pub const D3: f64 = 0.047;
/// a3: foot-plate centre → each of its four tips, m (the plate is 0.05 × 0.05).
pub const A3: f64 = 0.025;
/// Wheel radius = height of the wheel axis above the ground, m (d5wt of chain 2).
pub const WHEEL_RADIUS: f64 = 0.025;
/// Module length from the foot plate's outer face to the wheel's front face, m.
pub const MODULE_LENGTH: f64 = 0.172;
/// Height of the body caster's centre above the ground, m (−d5bc of chain 2).
pub const CASTER_HEIGHT: f64 = 0.005;
/// Distance of the caster's centre behind the wheel's lower tip, m (−a5bc of chain 2).
pub const CASTER_SETBACK: f64 = 0.075;

/// The standard DH matrix Rotz(θ)·Transz(d)·Transx(a)·Rotx(α), angles in radians.
fn dh(theta: f64, d: f64, a: f64, alpha: f64) -> Matrix4<f64> {
    let (st, ct) = theta.sin_cos();
    let (sa, ca) = alpha.sin_cos();
    Matrix4::new(
        ct,
        -st * ca,
        st * sa,
        a * ct,
        st,
        ct * ca,
        -ct * sa,
        a * st,
        0.0,
        sa,
        ca,
        d,
        0.0,
        0.0,
        0.0,
        1.0,
    )
}

fn translation(m: &Matrix4<f64>) -> Point3<f64> {
    Point3::new(m[(0, 3)], m[(1, 3)], m[(2, 3)])
}

/// Refuses a non-finite angle, naming the joint.
fn finite(joint: &str, value: f64) -> Result<f64> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(GaitError::Core(CoreError::NotFinite {
            joint: joint.to_string(),
            value,
        }))
    }
}

// ---------------------------------------------------------------------------------------
// Chain 1 and the leg variant
// ---------------------------------------------------------------------------------------

/// One of the four tips of the foot plate: the end effectors of the leg model (Table 3.18).
/// Chain 1 (Table 3.2) is the [`PlateTip::Lower`] row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlateTip {
    /// Row 3lower: θ = −π/2, a = +0.025. The tip on the ground at rest.
    Lower,
    /// Row 3upper: θ = −π/2, a = −0.025.
    Upper,
    /// Row 3right: θ = 0, a = +0.025.
    Right,
    /// Row 3left: θ = 0, a = −0.025.
    Left,
}

impl PlateTip {
    /// The four tips in the order of Table 3.18.
    pub const ALL: [PlateTip; 4] = [PlateTip::Lower, PlateTip::Upper, PlateTip::Right, PlateTip::Left];

    /// DH θ of the tip's row of Table 3.18, rad.
    pub fn dh_theta(self) -> f64 {
        match self {
            PlateTip::Lower | PlateTip::Upper => -std::f64::consts::FRAC_PI_2,
            PlateTip::Right | PlateTip::Left => 0.0,
        }
    }

    /// DH a of the tip's row of Table 3.18, m ("a3lower and a3right are assigned to 0.025
    /// and a3upper and a3left are assigned to −0.025").
    pub fn dh_a(self) -> f64 {
        match self {
            PlateTip::Lower | PlateTip::Right => A3,
            PlateTip::Upper | PlateTip::Left => -A3,
        }
    }
}

impl fmt::Display for PlateTip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PlateTip::Lower => "lower",
            PlateTip::Upper => "upper",
            PlateTip::Right => "right",
            PlateTip::Left => "left",
        })
    }
}

/// T = A1·A2·A3 of chain 1 / the leg model (Tables 3.2 and 3.18): θ1 = FJ, α1 = BJ1 and
/// α2 = BJ2 in degrees, the twist carrying the foot joints. The base is the wheel
/// connection point; the end effector is the chosen plate tip.
pub fn chain1_transform(theta1_deg: f64, alpha1_deg: f64, alpha2_deg: f64, tip: PlateTip) -> Result<Matrix4<f64>> {
    let th1 = finite("FJ (theta1)", theta1_deg)?.to_radians();
    let al1 = finite("BJ1 (alpha1)", alpha1_deg)?.to_radians();
    let al2 = finite("BJ2 (alpha2)", alpha2_deg)?.to_radians();
    let a1 = dh(th1, D1, 0.0, al1);
    let a2 = dh(0.0, D2, 0.0, al2);
    let a3 = dh(tip.dh_theta(), D3, tip.dh_a(), 0.0);
    Ok(a1 * a2 * a3)
}

/// The plate tip in the chain-1 model frame (x_m longitudinal, y_m vertical with negative
/// down, z_m outward from the wheel connection point), for θ1 = FJ, α1 = BJ1, α2 = BJ2 in
/// degrees. A non-finite angle is refused, naming the joint.
pub fn chain1_tip(theta1_deg: f64, alpha1_deg: f64, alpha2_deg: f64, tip: PlateTip) -> Result<Point3<f64>> {
    Ok(translation(&chain1_transform(theta1_deg, alpha1_deg, alpha2_deg, tip)?))
}

/// The leg FK of the quadruped (Table 3.18): the same chain as [`chain1_tip`] with the
/// thesis's leg names, FJ (hip swing), BJ1 and BJ2 in degrees. Height below the hip is
/// y_m, outward reach z_m, and the thesis's longitudinal coordinate is −x_m.
pub fn leg_tip(fj_deg: f64, bj1_deg: f64, bj2_deg: f64, tip: PlateTip) -> Result<Point3<f64>> {
    chain1_tip(fj_deg, bj1_deg, bj2_deg, tip)
}

/// Chain-1 model frame → V-Rep frame with its origin at the wheel's lower tip
/// (3.6–3.8): x_v = −z_m, y_v = −x_m, z_v = y_m + 0.025.
pub fn chain1_model_to_vrep(p: &Point3<f64>) -> Point3<f64> {
    Point3::new(-p.z, -p.x, p.y + WHEEL_RADIUS)
}

/// A forward-gait pose of a single module evaluated with chain 1 (θ1 = 0, lower tip).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ForwardStep {
    /// The lower tip in the V-Rep frame (origin at the wheel's lower tip), m.
    pub tip: Point3<f64>,
    /// Step length xd = 0.172 + x_v, m: how far the planted tip pushes the module forward
    /// when the foot returns to rest.
    pub xd: f64,
}

/// Chain 1 with the wheel at 0 for a foot pose (α1, α2) = (BJ1, BJ2) in degrees: the lower
/// tip in the V-Rep frame and the forward step xd = 0.172 + x_v.
pub fn chain1_step(alpha1_deg: f64, alpha2_deg: f64) -> Result<ForwardStep> {
    let tip = chain1_model_to_vrep(&chain1_tip(0.0, alpha1_deg, alpha2_deg, PlateTip::Lower)?);
    Ok(ForwardStep {
        tip,
        xd: tip.x + MODULE_LENGTH,
    })
}

// ---------------------------------------------------------------------------------------
// Chain 2
// ---------------------------------------------------------------------------------------

/// A backward-gait pose evaluated with chain 2 (Table 3.3), the foot tip planted and the
/// virtual tip joint θ1 set so that the wheel's lower tip is on the ground (3.17).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Chain2Pose {
    /// The virtual tip joint θ1 = atan2(`T_wt[x]`, `T_wt[y]`) of the θ1 = 0 chain, deg.
    pub theta1_deg: f64,
    /// The wheel's lower tip in the chain-2 V-Rep frame (y_m, z_m, x_m), m.
    pub wheel_tip: Point3<f64>,
    /// The caster centre in the chain-2 V-Rep frame, m.
    pub caster: Point3<f64>,
    /// How far the wheel is pulled back, xd = 0.172 − x_wt, m.
    pub xd: f64,
    /// Height of the caster centre above the ground, z_bc = `T_bc[x]`, m.
    pub caster_height: f64,
}

fn chain2_wheel_tip(theta1: f64, theta3: f64, theta4: f64) -> Matrix4<f64> {
    let a1 = dh(theta1, 0.0, A3, 0.0);
    let a2 = dh(std::f64::consts::FRAC_PI_2, 0.0, D3, 0.0);
    let a3 = dh(theta3, 0.0, D2, 0.0);
    let a4 = dh(theta4, 0.0, D1, -std::f64::consts::FRAC_PI_2);
    let a5wt = dh(0.0, WHEEL_RADIUS, 0.0, 0.0);
    a1 * a2 * a3 * a4 * a5wt
}

/// Chain-2 model frame → its V-Rep frame (3.18–3.20): (x, y, z) = (y_m, z_m, x_m).
pub fn chain2_model_to_vrep(p: &Point3<f64>) -> Point3<f64> {
    Point3::new(p.y, p.z, p.x)
}

/// Chain 2 for (θ3, θ4) = (BJ2, BJ1) in degrees, the thesis's argument order: computes the
/// wheel tip with θ1 = 0, sets θ1 = atan2(`T_wt[x]`, `T_wt[y]`) (3.17), which brings the wheel
/// tip to x_m = 0 (the ground), and recomputes the wheel tip and the caster
/// (T_bc = T_wt·A5bc). A non-finite angle is refused, naming the joint.
pub fn chain2(theta3_deg: f64, theta4_deg: f64) -> Result<Chain2Pose> {
    let th3 = finite("BJ2 (theta3)", theta3_deg)?.to_radians();
    let th4 = finite("BJ1 (theta4)", theta4_deg)?.to_radians();
    let first = chain2_wheel_tip(0.0, th3, th4);
    let th1 = first[(0, 3)].atan2(first[(1, 3)]);
    let wt = chain2_wheel_tip(th1, th3, th4);
    let bc = wt * dh(0.0, -CASTER_HEIGHT, -CASTER_SETBACK, 0.0);
    let wheel_tip = chain2_model_to_vrep(&translation(&wt));
    let caster = chain2_model_to_vrep(&translation(&bc));
    Ok(Chain2Pose {
        theta1_deg: th1.to_degrees(),
        wheel_tip,
        caster,
        xd: MODULE_LENGTH - wheel_tip.x,
        caster_height: caster.z,
    })
}

// ---------------------------------------------------------------------------------------
// Pose searches (Appendices A and B)
// ---------------------------------------------------------------------------------------

/// An interval of a real line, each end open or closed (an infinite end is open).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Lower end (may be −∞).
    pub min: f64,
    /// Whether `min` itself is inside.
    pub min_inclusive: bool,
    /// Upper end (may be +∞).
    pub max: f64,
    /// Whether `max` itself is inside.
    pub max_inclusive: bool,
}

impl Interval {
    /// (min, max).
    pub const fn open(min: f64, max: f64) -> Interval {
        Interval {
            min,
            min_inclusive: false,
            max,
            max_inclusive: false,
        }
    }

    /// (min, max].
    pub const fn open_closed(min: f64, max: f64) -> Interval {
        Interval {
            min,
            min_inclusive: false,
            max,
            max_inclusive: true,
        }
    }

    /// (min, +∞).
    pub const fn above(min: f64) -> Interval {
        Interval::open(min, f64::INFINITY)
    }

    /// [min, +∞).
    pub const fn at_least(min: f64) -> Interval {
        Interval {
            min,
            min_inclusive: true,
            max: f64::INFINITY,
            max_inclusive: false,
        }
    }

    /// Whether `v` is inside (never for NaN).
    pub fn contains(&self, v: f64) -> bool {
        let lo = if self.min_inclusive {
            v >= self.min
        } else {
            v > self.min
        };
        let hi = if self.max_inclusive {
            v <= self.max
        } else {
            v < self.max
        };
        lo && hi
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let end = |v: f64| {
            if v == f64::INFINITY {
                "∞".to_string()
            } else if v == f64::NEG_INFINITY {
                "−∞".to_string()
            } else {
                format!("{v}")
            }
        };
        write!(
            f,
            "{}{}, {}{}",
            if self.min_inclusive { '[' } else { '(' },
            end(self.min),
            end(self.max),
            if self.max_inclusive { ']' } else { ')' }
        )
    }
}

/// The conditions of a chain-1 search (Appendix A): every integer (α1, α2) of the ranges,
/// α1 outer and α2 inner, θ1 = 0, kept when the lower tip's V-Rep x and z are inside.
#[derive(Debug, Clone, PartialEq)]
pub struct Chain1Search {
    /// α1 = BJ1 values, deg, step 1.
    pub alpha1_deg: RangeInclusive<i32>,
    /// α2 = BJ2 values, deg, step 1.
    pub alpha2_deg: RangeInclusive<i32>,
    /// Allowed tip x_v, m (xd = 0.172 + x_v).
    pub tip_x: Interval,
    /// Allowed tip height z_v, m.
    pub tip_z: Interval,
}

/// The "close to" condition of a chain-2 search: angle_dif = |θ3* − θ3| + |θ4* − θ4| below
/// a limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Near {
    /// θ3* (BJ2), deg.
    pub theta3_deg: i32,
    /// θ4* (BJ1), deg.
    pub theta4_deg: i32,
    /// angle_dif must be strictly below this, deg.
    pub below_deg: i32,
}

impl Near {
    /// angle_dif of (θ3, θ4) from the target, deg.
    pub fn angle_dif(&self, theta3_deg: i32, theta4_deg: i32) -> i32 {
        (self.theta3_deg - theta3_deg).abs() + (self.theta4_deg - theta4_deg).abs()
    }
}

/// The conditions of a chain-2 search (Appendix B): every integer (θ3, θ4) of the ranges,
/// θ3 outer and θ4 inner, kept when the wheel tip's V-Rep x (`pos_lf(1)`), the caster
/// height (`Abc(1,4)`) and the optional closeness are inside.
#[derive(Debug, Clone, PartialEq)]
pub struct Chain2Search {
    /// θ3 = BJ2 values, deg, step 1.
    pub theta3_deg: RangeInclusive<i32>,
    /// θ4 = BJ1 values, deg, step 1.
    pub theta4_deg: RangeInclusive<i32>,
    /// Allowed wheel-tip x_wt, m (xd = 0.172 − x_wt).
    pub wheel_x: Interval,
    /// Allowed caster height z_bc, m.
    pub caster_z: Interval,
    /// Closeness to a chosen pose, if the search asks for it (printed as angle_dif).
    pub near: Option<Near>,
}

/// One row of a chain-1 table (3.5, 3.6), as the thesis prints it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ForwardRow {
    /// 1-based row number.
    pub number: usize,
    /// α1 = BJ1, deg.
    pub alpha1_deg: i32,
    /// α2 = BJ2, deg.
    pub alpha2_deg: i32,
    /// Tip x_v, m.
    pub x: f64,
    /// Tip z_v, m.
    pub z: f64,
    /// Step xd = 0.172 + x_v, m.
    pub xd: f64,
}

/// One row of a chain-2 table (3.8–3.11), as the thesis prints it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BackwardRow {
    /// 1-based row number.
    pub number: usize,
    /// Virtual tip joint θ1, deg.
    pub theta1_deg: f64,
    /// θ3 = BJ2, deg.
    pub theta3_deg: i32,
    /// θ4 = BJ1, deg.
    pub theta4_deg: i32,
    /// xdif = 0.172 − x_wt, m.
    pub xdif: f64,
    /// Caster centre height, m.
    pub zcaster: f64,
    /// angle_dif from the search's [`Near`] target, deg (Tables 3.10, 3.11 only).
    pub angle_dif_deg: Option<i32>,
}

/// A row of any of the six tables.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Row {
    /// A chain-1 (forward gait) row.
    Forward(ForwardRow),
    /// A chain-2 (backward gait) row.
    Backward(BackwardRow),
}

impl Row {
    /// 1-based row number.
    pub fn number(&self) -> usize {
        match self {
            Row::Forward(r) => r.number,
            Row::Backward(r) => r.number,
        }
    }

    /// The pose as (BJ1, BJ2), deg: the order the Lua gait tables use.
    pub fn bj1_bj2_deg(&self) -> (i32, i32) {
        match self {
            Row::Forward(r) => (r.alpha1_deg, r.alpha2_deg),
            Row::Backward(r) => (r.theta4_deg, r.theta3_deg),
        }
    }

    /// The step length: xd (chain 1) or xdif (chain 2), m.
    pub fn xd(&self) -> f64 {
        match self {
            Row::Forward(r) => r.xd,
            Row::Backward(r) => r.xdif,
        }
    }
}

/// Runs a chain-1 search: the rows in the order the MATLAB loops find them.
pub fn search_chain1(search: &Chain1Search) -> Vec<ForwardRow> {
    let mut rows = Vec::new();
    for a1 in search.alpha1_deg.clone() {
        for a2 in search.alpha2_deg.clone() {
            // Integer angles are always finite.
            let Ok(step) = chain1_step(f64::from(a1), f64::from(a2)) else {
                continue;
            };
            if search.tip_z.contains(step.tip.z) && search.tip_x.contains(step.tip.x) {
                rows.push(ForwardRow {
                    number: rows.len() + 1,
                    alpha1_deg: a1,
                    alpha2_deg: a2,
                    x: step.tip.x,
                    z: step.tip.z,
                    xd: step.xd,
                });
            }
        }
    }
    rows
}

/// Runs a chain-2 search: the rows in the order the MATLAB loops find them.
pub fn search_chain2(search: &Chain2Search) -> Vec<BackwardRow> {
    let mut rows = Vec::new();
    for t3 in search.theta3_deg.clone() {
        for t4 in search.theta4_deg.clone() {
            // Integer angles are always finite.
            let Ok(pose) = chain2(f64::from(t3), f64::from(t4)) else {
                continue;
            };
            let near_ok = search.near.is_none_or(|n| n.angle_dif(t3, t4) < n.below_deg);
            if search.wheel_x.contains(pose.wheel_tip.x) && search.caster_z.contains(pose.caster_height) && near_ok {
                rows.push(BackwardRow {
                    number: rows.len() + 1,
                    theta1_deg: pose.theta1_deg,
                    theta3_deg: t3,
                    theta4_deg: t4,
                    xdif: pose.xd,
                    zcaster: pose.caster_height,
                    angle_dif_deg: search.near.map(|n| n.angle_dif(t3, t4)),
                });
            }
        }
    }
    rows
}

/// The conditions of one of the six searches.
#[derive(Debug, Clone, PartialEq)]
pub enum Conditions {
    /// A chain-1 search (Appendix A).
    Chain1(Chain1Search),
    /// A chain-2 search (Appendix B).
    Chain2(Chain2Search),
}

/// How the thesis picks a row of a table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Choice {
    /// The largest step ("the maximum displacement is achieved when …").
    LargestXd,
    /// The step closest to a target, m, compared **as printed** (rounded to 4 decimals),
    /// the first row winning a tie.
    XdClosestTo(f64),
    /// The smallest angle_dif ("the most suitable values"), the first row winning a tie.
    SmallestAngleDif,
}

impl fmt::Display for Choice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Choice::LargestXd => f.write_str("largest xd"),
            Choice::XdClosestTo(t) => write!(f, "xd closest to {t:.3} m as printed, first row on a tie"),
            Choice::SmallestAngleDif => f.write_str("smallest angle_dif"),
        }
    }
}

/// The six pose searches of the single-module inchworm gaits, named by the pose they
/// design; each prints one table of the thesis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PoseSearch {
    /// Table 3.5: pose 1 of the high-velocity forward gait (chain 1).
    ForwardHighPose1,
    /// Table 3.6: pose 1 of the low-velocity forward gait (chain 1).
    ForwardLowPose1,
    /// Table 3.8: pose 2 (the caster-pivot pull) of the high-velocity backward gait (chain 2).
    BackwardHighPose2,
    /// Table 3.9: pose 2 of the low-velocity backward gait (chain 2).
    BackwardLowPose2,
    /// Table 3.10: pose 1 (the pre-pose) of the high-velocity backward gait (chain 2).
    BackwardHighPose1,
    /// Table 3.11: pose 1 of the low-velocity backward gait (chain 2).
    BackwardLowPose1,
}

/// Chain-1 ranges of Appendix A: α1 = −90:0, α2 = −120:120. (Table 3.4's pseudo-code says
/// α1 from −90 to 90; the code's −90:0 is what printed Table 3.5: up to 90 adds 219 rows.)
const CHAIN1_ALPHA1: RangeInclusive<i32> = -90..=0;
const CHAIN1_ALPHA2: RangeInclusive<i32> = -120..=120;
/// Chain-2 ranges of Appendix B: θ3 = −90:90, θ4 = −90:90. (Table 3.7's pseudo-code says
/// −90…90 and −120…120; the wider range adds rows to Tables 3.8 and 3.9.)
const CHAIN2_THETA3: RangeInclusive<i32> = -90..=90;
const CHAIN2_THETA4: RangeInclusive<i32> = -90..=90;

impl PoseSearch {
    /// The six searches in table order.
    pub const ALL: [PoseSearch; 6] = [
        PoseSearch::ForwardHighPose1,
        PoseSearch::ForwardLowPose1,
        PoseSearch::BackwardHighPose2,
        PoseSearch::BackwardLowPose2,
        PoseSearch::BackwardHighPose1,
        PoseSearch::BackwardLowPose1,
    ];

    /// The thesis's table number ("3.5" …).
    pub fn table_number(self) -> &'static str {
        match self {
            PoseSearch::ForwardHighPose1 => "3.5",
            PoseSearch::ForwardLowPose1 => "3.6",
            PoseSearch::BackwardHighPose2 => "3.8",
            PoseSearch::BackwardLowPose2 => "3.9",
            PoseSearch::BackwardHighPose1 => "3.10",
            PoseSearch::BackwardLowPose1 => "3.11",
        }
    }

    /// A kebab-case name for command lines (`forward-high-pose1` …).
    pub fn name(self) -> &'static str {
        match self {
            PoseSearch::ForwardHighPose1 => "forward-high-pose1",
            PoseSearch::ForwardLowPose1 => "forward-low-pose1",
            PoseSearch::BackwardHighPose2 => "backward-high-pose2",
            PoseSearch::BackwardLowPose2 => "backward-low-pose2",
            PoseSearch::BackwardHighPose1 => "backward-high-pose1",
            PoseSearch::BackwardLowPose1 => "backward-low-pose1",
        }
    }

    /// The thesis's caption of the table.
    pub fn caption(self) -> &'static str {
        match self {
            PoseSearch::ForwardHighPose1 => {
                "α1 and α2 values for the first pose of the high velocity gait for forward locomotion"
            }
            PoseSearch::ForwardLowPose1 => {
                "α1 and α2 values for first pose of the low velocity gait for forward locomotion"
            }
            PoseSearch::BackwardHighPose2 => {
                "θ3 and θ4 values for second pose of the high velocity gait for backward locomotion"
            }
            PoseSearch::BackwardLowPose2 => {
                "θ3 and θ4 values for second pose of the low velocity gait for backward locomotion"
            }
            PoseSearch::BackwardHighPose1 => {
                "θ3 and θ4 values for first pose of the high velocity gait for backward locomotion"
            }
            PoseSearch::BackwardLowPose1 => {
                "θ3 and θ4 values for first pose of the low velocity gait for backward locomotion"
            }
        }
    }

    /// The search conditions, taken from the appendix code where the text and the code
    /// disagree (each disagreement is noted on its line).
    pub fn conditions(self) -> Conditions {
        match self {
            // Appendix A: 0.005 < z_v < 0.01 and x_v > −0.1 (xd > 0.072). Text and Table 3.4
            // say z_v < 0.0075; both give the same 11 rows.
            PoseSearch::ForwardHighPose1 => Conditions::Chain1(Chain1Search {
                alpha1_deg: CHAIN1_ALPHA1,
                alpha2_deg: CHAIN1_ALPHA2,
                tip_x: Interval::above(-0.1),
                tip_z: Interval::open(0.005, 0.01),
            }),
            // The appendix prints only the high search; "xd around 25 mm" is read as
            // 0.023 < xd < 0.025, the round bounds that give exactly the 13 printed rows.
            PoseSearch::ForwardLowPose1 => Conditions::Chain1(Chain1Search {
                alpha1_deg: CHAIN1_ALPHA1,
                alpha2_deg: CHAIN1_ALPHA2,
                tip_x: Interval::open(-0.149, -0.147),
                tip_z: Interval::open(0.005, 0.01),
            }),
            // Appendix B "caster pivot high-vel search": 0.122 < x_wt < 0.127 (0.045 < xd <
            // 0.050), 0.0025 < z_bc ≤ 0.005. The text's xd > 0.045, z_bc < 0.005 gives 391 rows.
            PoseSearch::BackwardHighPose2 => Conditions::Chain2(Chain2Search {
                theta3_deg: CHAIN2_THETA3,
                theta4_deg: CHAIN2_THETA4,
                wheel_x: Interval::open(0.122, 0.127),
                caster_z: Interval::open_closed(0.0025, 0.005),
                near: None,
            }),
            // Appendix B "caster pivot low-vel search": 0.0195 < xd < 0.0205, 0 < z_bc ≤ 0.005.
            PoseSearch::BackwardLowPose2 => Conditions::Chain2(Chain2Search {
                theta3_deg: CHAIN2_THETA3,
                theta4_deg: CHAIN2_THETA4,
                wheel_x: Interval::open(0.1515, 0.1525),
                caster_z: Interval::open_closed(0.0, 0.005),
                near: None,
            }),
            // Appendix B "first pose high-vel search": 0 < xd < 0.045, z_bc ≥ 0.015 ("caster
            // off the ground"), |90 − θ3| + |−36 − θ4| < 45.
            PoseSearch::BackwardHighPose1 => Conditions::Chain2(Chain2Search {
                theta3_deg: CHAIN2_THETA3,
                theta4_deg: CHAIN2_THETA4,
                wheel_x: Interval::open(0.127, 0.172),
                caster_z: Interval::at_least(0.015),
                near: Some(Near {
                    theta3_deg: 90,
                    theta4_deg: -36,
                    below_deg: 45,
                }),
            }),
            // Appendix B "first pose low-vel search" (the active line): 0.018 < xd < 0.020,
            // z_bc ≥ 0.015, |52 − θ3| + |−27 − θ4| < 50.
            PoseSearch::BackwardLowPose1 => Conditions::Chain2(Chain2Search {
                theta3_deg: CHAIN2_THETA3,
                theta4_deg: CHAIN2_THETA4,
                wheel_x: Interval::open(0.152, 0.154),
                caster_z: Interval::at_least(0.015),
                near: Some(Near {
                    theta3_deg: 52,
                    theta4_deg: -27,
                    below_deg: 50,
                }),
            }),
        }
    }

    /// The rule the thesis states for picking its row.
    pub fn choice(self) -> Choice {
        match self {
            // "the maximum displacement is achieved when α1 is −41 and α2 is 120".
            PoseSearch::ForwardHighPose1 => Choice::LargestXd,
            // "the distance traveled condition to be around 25 millimeters".
            PoseSearch::ForwardLowPose1 => Choice::XdClosestTo(0.025),
            // "the maximum displacement is achieved when θ3 is 90 and θ4 is −36".
            PoseSearch::BackwardHighPose2 => Choice::LargestXd,
            // "the desired displacement of 20 millimeters is achieved" at (52, −27). Unrounded,
            // row 8 (53, −29) is closer (0.020066 vs 0.020092); the thesis compared the
            // printed 0.0201 of rows 5, 8, 11 and 13 and took the first.
            PoseSearch::BackwardLowPose2 => Choice::XdClosestTo(0.020),
            // "the most suitable values": θ3, θ4 closest to pose 2.
            PoseSearch::BackwardHighPose1 | PoseSearch::BackwardLowPose1 => Choice::SmallestAngleDif,
        }
    }
}

impl fmt::Display for PoseSearch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PoseSearch {
    type Err = GaitError;

    /// Parses a search by its name (`backward-high-pose2`) or its table number (`3.8`,
    /// `table-3.8`).
    fn from_str(s: &str) -> Result<PoseSearch> {
        let key = s.trim().trim_start_matches("table-").trim_start_matches("table ");
        PoseSearch::ALL
            .into_iter()
            .find(|p| p.name() == key || p.table_number() == key)
            .ok_or_else(|| GaitError::Value {
                key: "pose search".into(),
                value: s.to_string(),
                expected: format!(
                    "a table number (3.5, 3.6, 3.8, 3.9, 3.10, 3.11) or one of {}",
                    PoseSearch::ALL.map(PoseSearch::name).join(", ")
                ),
            })
    }
}

/// The rows of a search's table, in the order the thesis prints them.
pub fn table(search: PoseSearch) -> Vec<Row> {
    match search.conditions() {
        Conditions::Chain1(c) => search_chain1(&c).into_iter().map(Row::Forward).collect(),
        Conditions::Chain2(c) => search_chain2(&c).into_iter().map(Row::Backward).collect(),
    }
}

/// Picks a row by a rule; `None` only for an empty table.
pub fn choose(rows: &[Row], choice: Choice) -> Option<Row> {
    let mut best: Option<(Row, f64)> = None;
    for row in rows {
        let score = match choice {
            Choice::LargestXd => -row.xd(),
            Choice::XdClosestTo(target) => ((row.xd() * 1e4).round() - (target * 1e4).round()).abs(),
            Choice::SmallestAngleDif => match row {
                Row::Backward(BackwardRow {
                    angle_dif_deg: Some(d), ..
                }) => f64::from(*d),
                _ => f64::INFINITY,
            },
        };
        // Strictly better only: the first row wins a tie.
        if best.is_none_or(|(_, s)| score < s) {
            best = Some((*row, score));
        }
    }
    best.map(|(r, _)| r)
}

/// The row the thesis chooses from a search's table, by the rule it states
/// ([`PoseSearch::choice`]).
pub fn chosen(search: PoseSearch) -> Row {
    // The six searches are fixed and none is empty (tested); an empty table would be a
    // defect of this file, not of any input.
    #[allow(clippy::expect_used)]
    choose(&table(search), search.choice()).expect("every pose search of the thesis has rows")
}

/// A value as printed with `decimals` decimals, without a "−0.0000".
fn fixed(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
        s[1..].to_string()
    } else {
        s
    }
}

/// The table as the thesis prints it: caption, header, one line per row (angles as
/// integers, θ1 to 2 decimals, lengths to 4 decimals, angle_dif as an integer), then the
/// chosen row and the rule.
pub fn format_table(search: PoseSearch) -> String {
    let rows = table(search);
    let mut out = format!("Table {}: {}\n", search.table_number(), search.caption());
    let with_dif = matches!(
        search.conditions(),
        Conditions::Chain2(Chain2Search { near: Some(_), .. })
    );
    match search.conditions() {
        Conditions::Chain1(_) => {
            let _ = writeln!(
                out,
                "{:>3} {:>5} {:>5} {:>8} {:>7} {:>7}",
                "", "α1", "α2", "x (m)", "z (m)", "xd (m)"
            );
        }
        Conditions::Chain2(_) => {
            let _ = write!(
                out,
                "{:>3} {:>7} {:>6} {:>6} {:>8} {:>11}",
                "", "θ1(°)", "θ3(°)", "θ4(°)", "xdif(m)", "zcaster(m)"
            );
            if with_dif {
                let _ = write!(out, " {:>13}", "angle_dif(°)");
            }
            out.push('\n');
        }
    }
    for row in &rows {
        match row {
            Row::Forward(r) => {
                let _ = writeln!(
                    out,
                    "{:>3} {:>5} {:>5} {:>8} {:>7} {:>7}",
                    r.number,
                    r.alpha1_deg,
                    r.alpha2_deg,
                    fixed(r.x, 4),
                    fixed(r.z, 4),
                    fixed(r.xd, 4)
                );
            }
            Row::Backward(r) => {
                let _ = write!(
                    out,
                    "{:>3} {:>7} {:>6} {:>6} {:>8} {:>11}",
                    r.number,
                    fixed(r.theta1_deg, 2),
                    r.theta3_deg,
                    r.theta4_deg,
                    fixed(r.xdif, 4),
                    fixed(r.zcaster, 4)
                );
                if let Some(d) = r.angle_dif_deg {
                    let _ = write!(out, " {d:>13}");
                }
                out.push('\n');
            }
        }
    }
    if let Some(c) = choose(&rows, search.choice()) {
        let (bj1, bj2) = c.bj1_bj2_deg();
        let _ = writeln!(
            out,
            "chosen: row {} ({}): (BJ1, BJ2) = ({bj1}, {bj2})",
            c.number(),
            search.choice()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn wheelfoot_non_finite_angles_are_refused_naming_the_joint() {
        let e = chain1_tip(0.0, f64::NAN, 0.0, PlateTip::Lower).unwrap_err();
        assert!(e.to_string().contains("BJ1"), "{e}");
        let e = chain2(0.0, f64::INFINITY).unwrap_err();
        assert!(e.to_string().contains("BJ1"), "{e}");
    }

    #[test]
    fn wheelfoot_interval_ends() {
        let i = Interval::open_closed(0.0, 0.005);
        assert!(!i.contains(0.0) && i.contains(0.005) && !i.contains(f64::NAN));
        assert!(Interval::at_least(0.015).contains(0.015));
        assert_eq!(Interval::open_closed(0.0025, 0.005).to_string(), "(0.0025, 0.005]");
        assert_eq!(Interval::at_least(0.015).to_string(), "[0.015, ∞)");
    }

    #[test]
    fn wheelfoot_pose_search_parses_names_and_table_numbers() {
        for p in PoseSearch::ALL {
            assert_eq!(p.name().parse::<PoseSearch>().unwrap(), p);
            assert_eq!(p.table_number().parse::<PoseSearch>().unwrap(), p);
        }
        assert_eq!(
            "table-3.10".parse::<PoseSearch>().unwrap(),
            PoseSearch::BackwardHighPose1
        );
        assert!("3.7".parse::<PoseSearch>().is_err());
    }

    #[test]
    fn wheelfoot_ties_go_to_the_first_row() {
        let row = |number, xdif| {
            Row::Backward(BackwardRow {
                number,
                theta1_deg: 0.0,
                theta3_deg: 0,
                theta4_deg: 0,
                xdif,
                zcaster: 0.0,
                angle_dif_deg: None,
            })
        };
        let rows = [row(1, 0.0198), row(2, 0.020092), row(3, 0.020066)];
        assert_eq!(choose(&rows, Choice::XdClosestTo(0.020)).unwrap().number(), 2);
        assert!(choose(&[], Choice::LargestXd).is_none());
    }

    #[test]
    fn wheelfoot_no_negative_zero_is_printed() {
        assert_eq!(fixed(-0.00001, 4), "0.0000");
        assert_eq!(fixed(-0.0978, 4), "-0.0978");
    }
}
