//! Every named gait of the source's master table (spec §5.0), each a recipe from
//! parameters (control or shape) to a point of a control space, then to a
//! [`SineGenerator`] for a concrete robot.

use std::collections::BTreeMap;

use modbot_core::Topology;

use crate::chain::JointKind;
use crate::shape as sh;

use crate::error::{GaitError, Result};
use crate::generator::{Oscillator, SineGenerator};
use crate::params::*;

/// The robot families the gaits are written for (decision record 0008).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// All joints pitch.
    PitchPitch,
    /// Pitch and yaw alternating, starting with pitch (includes the PYP).
    PitchYaw,
    /// Exactly pitch, yaw, pitch.
    PitchYawPitch,
}

impl Family {
    fn describe(self) -> &'static str {
        match self {
            Family::PitchPitch => "a pitch-pitch chain (pp:M)",
            Family::PitchYaw => "a pitch-yaw chain (py:M)",
            Family::PitchYawPitch => "the pitch-yaw-pitch robot (pyp)",
        }
    }

    fn accepts(self, kinds: &[JointKind]) -> bool {
        let alternating = kinds
            .iter()
            .enumerate()
            .all(|(i, k)| *k == if i % 2 == 0 { JointKind::Pitch } else { JointKind::Yaw });
        match self {
            Family::PitchPitch => kinds.len() >= 2 && kinds.iter().all(|k| *k == JointKind::Pitch),
            Family::PitchYaw => kinds.len() >= 2 && alternating,
            Family::PitchYawPitch => kinds.len() == 3 && alternating,
        }
    }
}

/// What a gait needs to know about the robot.
#[derive(Debug, Clone, PartialEq)]
pub struct RobotInfo {
    /// Topology name, for messages.
    pub name: String,
    /// Pitch/yaw label per joint.
    pub kinds: Vec<JointKind>,
    /// Module length L, m (the shortest, if kinds differ).
    pub length_m: f64,
    /// Module width W, m.
    pub width_m: f64,
    /// Module height H, m.
    pub height_m: f64,
    /// Reach of the joints, deg: the smallest of |min| and max over all hinges.
    pub reach_deg: f64,
    /// Servo speed limit, deg/s (the slowest servo).
    pub max_speed_deg_s: f64,
}

impl RobotInfo {
    /// Reads what the gaits need from a robot: the pitch/yaw label of each joint (a robot
    /// that is not a hinge chain is refused), and the smallest module extents, joint
    /// reach and servo speed.
    pub fn new(topology: &Topology) -> Result<RobotInfo> {
        let kinds = crate::chain::joint_kinds(topology)?;
        let mut ext = [f64::INFINITY; 3];
        for i in 0..topology.len() {
            let (lo, hi) = topology.kind_of(i).bounds_at_zero();
            for (e, d) in ext.iter_mut().zip((hi - lo).iter()) {
                *e = e.min(*d);
            }
        }
        let joints = topology.joints();
        let reach_deg = joints
            .iter()
            .map(|j| {
                let (lo, hi) = j.def.limits_rad();
                lo.abs().min(hi).to_degrees()
            })
            .fold(f64::INFINITY, f64::min);
        let max_speed_deg_s = joints
            .iter()
            .map(|j| j.def.actuator.max_speed_rad_s().to_degrees())
            .fold(f64::INFINITY, f64::min);
        Ok(RobotInfo {
            name: topology.name.clone(),
            kinds,
            length_m: ext[0],
            width_m: ext[1],
            height_m: ext[2],
            reach_deg,
            max_speed_deg_s,
        })
    }

    /// Number of modules M.
    pub fn modules(&self) -> usize {
        self.kinds.len()
    }
}

/// A control-space value and the parameter it came from (for error messages).
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    /// The value, deg.
    pub deg: f64,
    /// The parameter that set it, with the shape parameters it was derived from.
    pub key: String,
}

impl Value {
    fn given(deg: f64, spec: &ParamSpec) -> Value {
        Value {
            deg,
            key: spec.key.to_string(),
        }
    }
    fn derived(deg: f64, spec: &ParamSpec, from: &[&ParamSpec]) -> Value {
        let from: Vec<_> = from.iter().map(|s| s.key).collect();
        Value {
            deg,
            key: format!("{} (from {})", spec.key, from.join(", ")),
        }
    }
    fn fixed(deg: f64, what: &str) -> Value {
        Value {
            deg,
            key: what.to_string(),
        }
    }
}

/// A point of a control space.
#[derive(Debug, Clone, PartialEq)]
pub enum Control {
    /// H1 (PP): every joint A sin(φ + (i−1)Δφ).
    H1 {
        /// A.
        amplitude: Value,
        /// Δφ.
        phase_diff: Value,
    },
    /// H2 (PY, and the 4-D PYP space when the chain has 3 modules).
    H2 {
        /// A_v.
        amplitude_v: Value,
        /// A_h.
        amplitude_h: Value,
        /// Δφ_v.
        phase_diff_v: Value,
        /// Δφ_h.
        phase_diff_h: Value,
        /// Δφ_vh (control convention).
        phase_diff_vh: Value,
        /// O_h.
        offset_h: Value,
    },
}

/// A named gait.
pub struct GaitDef {
    /// Name, the source's (snake_case).
    pub name: &'static str,
    /// Robots it applies to.
    pub family: Family,
    /// One line on what it does.
    pub summary: &'static str,
    /// Where the source describes it.
    pub source: &'static str,
    /// Its own parameters (the common ones, period and direction, come on top).
    pub params: &'static [ParamSpec],
    resolve: fn(&Values, &RobotInfo, &mut Vec<String>) -> Result<Control>,
}

impl std::fmt::Debug for GaitDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GaitDef")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl GaitDef {
    /// The schema: own parameters plus the common ones.
    pub fn schema(&self) -> Schema {
        Schema::new(self.name, self.params)
    }
}

/// A gait built for a robot: the generator, the resolved parameters and remarks.
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltGait {
    /// The generator.
    pub generator: SineGenerator,
    /// Every parameter's final value (defaults and user values), canonical keys.
    pub params: BTreeMap<String, f64>,
    /// The control-space point.
    pub control: Control,
    /// Remarks that are not errors: instability, thresholds, conventions (the source's
    /// principles that this working point violates; decision record 0005).
    pub notes: Vec<String>,
}

fn m(r: &RobotInfo) -> usize {
    r.modules()
}

/// Which shape ↔ control mapping a serpenoid wave uses.
#[derive(Clone, Copy)]
enum Mapping {
    /// PP: A = 2α sin(πk/M), Δφ = 360k/M.
    Pp,
    /// PY group: A = 2α sin(2πk/M), Δφ = 720k/M.
    Py,
}

/// (A, Δφ) from the control keys `[a, dphi]`, or from the shape keys `[alpha, k]`.
fn wave(
    v: &Values,
    [a, dphi]: [&ParamSpec; 2],
    [alpha, k]: [&ParamSpec; 2],
    map: Mapping,
    modules: usize,
) -> Result<(Value, Value)> {
    if v.shape_mode(&[*alpha, *k], &[*a, *dphi])? {
        let (al, kk) = (v.get(alpha)?, v.get(k)?);
        let (amp, d) = match map {
            Mapping::Pp => (sh::pp_amplitude(al, kk, modules), sh::pp_phase_diff(kk, modules)),
            Mapping::Py => (sh::py_amplitude(al, kk, modules), sh::py_phase_diff(kk, modules)),
        };
        Ok((Value::derived(amp, a, &[alpha, k]), Value::derived(d, dphi, &[k])))
    } else {
        Ok((Value::given(v.get(a)?, a), Value::given(v.get(dphi)?, dphi)))
    }
}

fn vh(v: &Values, phase_diff_h: f64) -> Result<Value> {
    if v.shape_mode(&[DPHI_VH_SHAPE], &[DPHI_VH])? {
        Ok(Value::derived(
            v.get(&DPHI_VH_SHAPE)? + phase_diff_h / 2.0,
            &DPHI_VH,
            &[&DPHI_VH_SHAPE],
        ))
    } else {
        Ok(Value::given(v.get(&DPHI_VH)?, &DPHI_VH))
    }
}

fn h2(a_v: Value, a_h: Value, dphi_v: Value, dphi_h: Value, dphi_vh: Value, o_h: Value) -> Control {
    Control::H2 {
        amplitude_v: a_v,
        amplitude_h: a_h,
        phase_diff_v: dphi_v,
        phase_diff_h: dphi_h,
        phase_diff_vh: dphi_vh,
        offset_h: o_h,
    }
}

fn zero(what: &str) -> Value {
    Value::fixed(0.0, what)
}

fn pp_notes(a: f64, dphi: f64, modules: usize, notes: &mut Vec<String>) {
    let d = dphi.abs();
    if d == 0.0 || d == 180.0 {
        notes.push(format!(
            "Δφ = {dphi}: in phase or anti-phase, no travelling wave and no locomotion (principle 10)"
        ));
    } else if !sh::pp_statically_stable(dphi, modules) {
        notes.push(format!(
            "k = {:.2} < 2: not statically stable (principle 5); stable needs |Δφ| ≥ {:.1} with {modules} modules",
            modules as f64 * d / 360.0,
            720.0 / modules as f64
        ));
    }
    if d > 0.0 && a > sh::amplitude_max_for_phase_diff(dphi) {
        notes.push(format!(
            "A = {a} exceeds the self-collision limit 240 sin(Δφ/2) = {:.1} (4.11)",
            sh::amplitude_max_for_phase_diff(dphi)
        ));
    }
}

fn caterpillar(v: &Values, r: &RobotInfo, notes: &mut Vec<String>) -> Result<Control> {
    let (a, dphi) = wave(v, [&A, &DPHI], [&ALPHA, &K], Mapping::Pp, m(r))?;
    pp_notes(a.deg, dphi.deg, m(r), notes);
    Ok(Control::H1 {
        amplitude: a,
        phase_diff: dphi,
    })
}

fn straight(v: &Values, r: &RobotInfo, notes: &mut Vec<String>) -> Result<Control> {
    let (a, dphi) = wave(v, [&A_V, &DPHI_V], [&ALPHA_V, &K_V], Mapping::Py, m(r))?;
    if !sh::py_straight_statically_stable(dphi.deg, m(r)) {
        notes.push(format!(
            "k_v = {:.2} < 2: not statically stable (needs ≥ 10 modules, §5.2)",
            m(r) as f64 * dphi.deg.abs() / 720.0
        ));
    }
    Ok(h2(a, zero("A_h"), dphi, zero("Δφ_h"), zero("Δφ_vh"), zero("O_h")))
}

fn turning(v: &Values, r: &RobotInfo, notes: &mut Vec<String>) -> Result<Control> {
    let (a, dphi) = wave(v, [&A_V, &DPHI_V], [&ALPHA_V, &K_V], Mapping::Py, m(r))?;
    let o_h = if v.shape_mode(&[ARC_H], &[O_H])? {
        Value::derived(sh::py_circular_amplitude(v.get(&ARC_H)?, m(r)), &O_H, &[&ARC_H])
    } else {
        Value::given(v.get(&O_H)?, &O_H)
    };
    if !sh::py_turning_statically_stable(dphi.deg, m(r)) {
        notes.push(format!(
            "k_v = {:.2} < 3: not statically stable while turning, the body sways (§5.3; needs ≥ 14 modules)",
            m(r) as f64 * dphi.deg.abs() / 720.0
        ));
    }
    Ok(h2(a, zero("A_h"), dphi, zero("Δφ_h"), zero("Δφ_vh"), o_h))
}

/// Shared by rolling and flapping: equal circular waves 90° apart.
fn circular_pair(v: &Values, r: &RobotInfo) -> Result<(Value, f64, f64)> {
    let a = if v.shape_mode(&[ARC], &[A])? {
        Value::derived(sh::py_circular_amplitude(v.get(&ARC)?, m(r)), &A, &[&ARC])
    } else {
        Value::given(v.get(&A)?, &A)
    };
    let arc = a.deg * m(r) as f64 / 2.0;
    let length = m(r) as f64 * r.length_m;
    Ok((a, arc, sh::rolling_alpha_min(length, r.height_m)))
}

fn rolling(v: &Values, r: &RobotInfo, notes: &mut Vec<String>) -> Result<Control> {
    let (a, arc, arc_min) = circular_pair(v, r)?;
    if arc < arc_min {
        notes.push(format!(
            "arc α = {arc:.1} is below the rolling threshold α_min = {arc_min:.1} (5.21): the chain flaps instead"
        ));
    }
    let dphi_vh = Value::given(v.get(&DPHI_VH)?, &DPHI_VH);
    Ok(h2(a.clone(), a, zero("Δφ_v"), zero("Δφ_h"), dphi_vh, zero("O_h")))
}

fn flapping(v: &Values, r: &RobotInfo, notes: &mut Vec<String>) -> Result<Control> {
    let (a, arc, arc_min) = circular_pair(v, r)?;
    if arc >= arc_min {
        notes.push(format!(
            "arc α = {arc:.1} reaches the rolling threshold α_min = {arc_min:.1} (5.21): the chain rolls instead"
        ));
    }
    let dphi_vh = Value::given(v.get(&DPHI_VH)?, &DPHI_VH);
    Ok(h2(a.clone(), a, zero("Δφ_v"), zero("Δφ_h"), dphi_vh, zero("O_h")))
}

fn sidewinding(v: &Values, r: &RobotInfo, _notes: &mut Vec<String>) -> Result<Control> {
    let (a_v, a_h, dphi) = if v.shape_mode(&[ALPHA_H, ALPHA_V, K], &[A_V, A_H, DPHI])? {
        let (al_h, al_v, k) = (v.get(&ALPHA_H)?, v.get(&ALPHA_V)?, v.get(&K)?);
        (
            Value::derived(sh::py_amplitude(al_v, k, m(r)), &A_V, &[&ALPHA_V, &K]),
            Value::derived(sh::py_amplitude(al_h, k, m(r)), &A_H, &[&ALPHA_H, &K]),
            Value::derived(sh::py_phase_diff(k, m(r)), &DPHI, &[&K]),
        )
    } else {
        (
            Value::given(v.get(&A_V)?, &A_V),
            Value::given(v.get(&A_H)?, &A_H),
            Value::given(v.get(&DPHI)?, &DPHI),
        )
    };
    let dphi_vh = vh(v, dphi.deg)?;
    Ok(h2(a_v, a_h, dphi.clone(), dphi, dphi_vh, zero("O_h")))
}

fn inclined_sidewinding(v: &Values, r: &RobotInfo, notes: &mut Vec<String>) -> Result<Control> {
    let (a_v, a_h, dphi) = if v.shape_mode(&[ALPHA, BETA, K], &[A_V, A_H, DPHI])? {
        let (al, beta, k) = (v.get(&ALPHA)?, v.get(&BETA)?.to_radians(), v.get(&K)?);
        (
            Value::derived(sh::py_amplitude(al * beta.sin(), k, m(r)), &A_V, &[&ALPHA, &BETA, &K]),
            Value::derived(sh::py_amplitude(al * beta.cos(), k, m(r)), &A_H, &[&ALPHA, &BETA, &K]),
            Value::derived(sh::py_phase_diff(k, m(r)), &DPHI, &[&K]),
        )
    } else {
        (
            Value::given(v.get(&A_V)?, &A_V),
            Value::given(v.get(&A_H)?, &A_H),
            Value::given(v.get(&DPHI)?, &DPHI),
        )
    };
    let dphi_vh = vh(v, dphi.deg)?;
    if dphi_vh.deg == 0.0 {
        notes.push(
            "Δφ_vh = 0 exactly is the inclined motion of ACM-R3, which needs passive wheels; the sideways gait uses a small non-zero Δφ_vh (§5.6)".into(),
        );
    }
    Ok(h2(a_v, a_h, dphi.clone(), dphi, dphi_vh, zero("O_h")))
}

fn rotation_s(v: &Values, r: &RobotInfo, _notes: &mut Vec<String>) -> Result<Control> {
    let (a_v, a_h, dphi_h) = if v.shape_mode(&[ALPHA_H, ALPHA_V, K], &[A_V, A_H, DPHI_H])? {
        let (al_h, al_v, k) = (v.get(&ALPHA_H)?, v.get(&ALPHA_V)?, v.get(&K)?);
        (
            Value::derived(sh::py_amplitude(al_v, 2.0 * k, m(r)), &A_V, &[&ALPHA_V, &K]),
            Value::derived(sh::py_amplitude(al_h, k, m(r)), &A_H, &[&ALPHA_H, &K]),
            Value::derived(sh::py_phase_diff(k, m(r)), &DPHI_H, &[&K]),
        )
    } else {
        (
            Value::given(v.get(&A_V)?, &A_V),
            Value::given(v.get(&A_H)?, &A_H),
            Value::given(v.get(&DPHI_H)?, &DPHI_H),
        )
    };
    let dphi_v = 2.0 * dphi_h.deg;
    if dphi_v.abs() > 180.0 {
        return Err(GaitError::Invalid {
            gait: "rotation_s".into(),
            reason: format!(
                "{} = {}: the vertical wave needs Δφ_v = 2Δφ_h = {dphi_v}, beyond ±180 (k ≤ M/8, Table 5.4)",
                dphi_h.key, dphi_h.deg
            ),
        });
    }
    let dphi_vh = Value::given(v.get(&DPHI_VH)?, &DPHI_VH);
    Ok(h2(
        a_v,
        a_h,
        Value::fixed(dphi_v, &format!("Δφ_v = 2 × {}", dphi_h.key)),
        dphi_h,
        dphi_vh,
        zero("O_h"),
    ))
}

fn rotation_u(v: &Values, r: &RobotInfo, _notes: &mut Vec<String>) -> Result<Control> {
    let (a_v, dphi_v) = wave(v, [&A_V, &DPHI_V], [&ALPHA_V, &K_V], Mapping::Py, m(r))?;
    let a_h = if v.shape_mode(&[ARC_H], &[A_H])? {
        Value::derived(sh::py_circular_amplitude(v.get(&ARC_H)?.abs(), m(r)), &A_H, &[&ARC_H])
    } else {
        Value::given(v.get(&A_H)?, &A_H)
    };
    let dphi_vh = Value::given(v.get(&DPHI_VH)?, &DPHI_VH);
    Ok(h2(a_v, a_h, dphi_v, zero("Δφ_h"), dphi_vh, zero("O_h")))
}

fn pyp_straight(v: &Values, _r: &RobotInfo, _notes: &mut Vec<String>) -> Result<Control> {
    Ok(h2(
        Value::given(v.get(&A)?, &A),
        zero("A_h"),
        Value::given(v.get(&DPHI)?, &DPHI),
        zero("Δφ_h"),
        zero("Δφ_vh"),
        zero("O_h"),
    ))
}

fn pyp_turning(v: &Values, _r: &RobotInfo, _notes: &mut Vec<String>) -> Result<Control> {
    Ok(h2(
        Value::given(v.get(&A)?, &A),
        zero("A_h"),
        Value::given(v.get(&DPHI)?, &DPHI),
        zero("Δφ_h"),
        zero("Δφ_vh"),
        Value::given(v.get(&O_H)?, &O_H),
    ))
}

fn pyp_rolling(v: &Values, r: &RobotInfo, notes: &mut Vec<String>) -> Result<Control> {
    let a = Value::given(v.get(&A)?, &A);
    let (ahl, avl) = sh::pyp_roll_limits(r.length_m, r.width_m, r.height_m);
    if a.deg < ahl.max(avl) {
        notes.push(format!(
            "A = {} is below A_min = max(A_hL, A_vL) = {:.1} (6.31–6.32): the robot shifts sideways instead of rolling",
            a.deg,
            ahl.max(avl)
        ));
    }
    let dphi_vh = Value::given(v.get(&DPHI_VH)?, &DPHI_VH);
    Ok(h2(a.clone(), a, zero("Δφ_v"), zero("Δφ_h"), dphi_vh, zero("O_h")))
}

fn pyp_lateral_shift(v: &Values, r: &RobotInfo, notes: &mut Vec<String>) -> Result<Control> {
    let a_h = Value::given(v.get(&A_H)?, &A_H);
    let (ahl, _) = sh::pyp_roll_limits(r.length_m, r.width_m, r.height_m);
    if a_h.deg >= ahl {
        notes.push(format!(
            "A_h = {} reaches A_hL = {ahl:.1} (6.31): the robot rolls instead of shifting",
            a_h.deg
        ));
    }
    let dphi_vh = Value::given(v.get(&DPHI_VH)?, &DPHI_VH);
    Ok(h2(
        Value::given(v.get(&A_V)?, &A_V),
        a_h,
        zero("Δφ_v"),
        zero("Δφ_h"),
        dphi_vh,
        zero("O_h"),
    ))
}

fn pyp_rotation(v: &Values, _r: &RobotInfo, _notes: &mut Vec<String>) -> Result<Control> {
    Ok(h2(
        Value::given(v.get(&A_V)?, &A_V),
        Value::given(v.get(&A_H)?, &A_H),
        Value::fixed(180.0, "Δφ_v"),
        zero("Δφ_h"),
        Value::given(v.get(&DPHI_VH)?, &DPHI_VH),
        zero("O_h"),
    ))
}

/// The whole of H2 (§3.5.3): every pitch-yaw and PYP gait above is a point of it; the
/// thesis's gait search (App. B) runs over it. On the PYP (one yaw joint) Δφ_h has no
/// effect; on two modules neither Δφ_v nor Δφ_h has.
fn pitch_yaw(v: &Values, r: &RobotInfo, notes: &mut Vec<String>) -> Result<Control> {
    let (pitch, yaw) = r.kinds.iter().fold((0, 0), |(p, y), k| match k {
        JointKind::Pitch => (p + 1, y),
        JointKind::Yaw => (p, y + 1),
    });
    if yaw < 2 && v.given(&DPHI_H) && v.get(&DPHI_H)? != 0.0 {
        notes.push(format!("Δφ_h has no effect: {} has one yaw joint", r.name));
    }
    if pitch < 2 && v.given(&DPHI_V) && v.get(&DPHI_V)? != 0.0 {
        notes.push(format!("Δφ_v has no effect: {} has one pitch joint", r.name));
    }
    Ok(h2(
        Value::given(v.get(&A_V)?, &A_V),
        Value::given(v.get(&A_H)?, &A_H),
        Value::given(v.get(&DPHI_V)?, &DPHI_V),
        Value::given(v.get(&DPHI_H)?, &DPHI_H),
        Value::given(v.get(&DPHI_VH)?, &DPHI_VH),
        Value::given(v.get(&O_H)?, &O_H),
    ))
}

/// Whether the gait `name` moves by rolling the body about its long axis (lateral rolling,
/// the PYP's rolling, and the general H2 gait, whose points include rolling): a run's
/// roll-over check does not apply to them (decision record 0038).
pub fn rolls_by_design(name: &str) -> bool {
    matches!(name, "rolling" | "pyp_rolling" | "pitch_yaw")
}

/// Every gait, in the order of the source's master table, then the general H2 gait.
pub static GAITS: &[GaitDef] = &[
    GaitDef {
        name: "caterpillar",
        family: Family::PitchPitch,
        summary: "1D straight line (forward/backward by the sign of Δφ or direction)",
        source: "§5.1, §5.10",
        params: &[A, DPHI, ALPHA, K],
        resolve: caterpillar,
    },
    GaitDef {
        name: "straight",
        family: Family::PitchYaw,
        summary: "straight line: vertical serpenoid, yaw joints at rest",
        source: "§5.2",
        params: &[A_V, DPHI_V, ALPHA_V, K_V],
        resolve: straight,
    },
    GaitDef {
        name: "turning",
        family: Family::PitchYaw,
        summary: "circular path: vertical serpenoid plus a constant yaw offset O_h (its sign sets the side)",
        source: "§5.3",
        params: &[A_V, DPHI_V, O_H, ALPHA_V, K_V, ARC_H],
        resolve: turning,
    },
    GaitDef {
        name: "rolling",
        family: Family::PitchYaw,
        summary: "lateral rolling: equal circular waves 90° apart (sign of Δφ_vh sets the side)",
        source: "§5.4",
        params: &[A, DPHI_VH, ARC],
        resolve: rolling,
    },
    GaitDef {
        name: "flapping",
        family: Family::PitchYaw,
        summary: "flapping / rowing: the rolling co-ordination below the rolling threshold",
        source: "§5.7",
        params: &[A, DPHI_VH, ARC],
        resolve: flapping,
    },
    GaitDef {
        name: "sidewinding",
        family: Family::PitchYaw,
        summary: "sideways: isomorphous flat wave (k_v = k_h), Δφ_vh ≈ ±90",
        source: "§5.5",
        params: &[A_V, A_H, DPHI, DPHI_VH, DPHI_VH_SHAPE, ALPHA_H, ALPHA_V, K],
        resolve: sidewinding,
    },
    GaitDef {
        name: "inclined_sidewinding",
        family: Family::PitchYaw,
        summary: "inclined sideways: linear isomorphous wave tilted by β, Δφ_vh small and non-zero",
        source: "§5.6",
        params: &[A_V, A_H, DPHI, DPHI_VH, DPHI_VH_SHAPE, ALPHA, BETA, K],
        resolve: inclined_sidewinding,
    },
    GaitDef {
        name: "rotation_s",
        family: Family::PitchYaw,
        summary: "rotation \"S\": flat non-isomorphous wave, k_v = 2k_h (Δφ_v = 2Δφ_h), Δφ_vh = 0 or 180",
        source: "§5.8",
        params: &[A_V, A_H, DPHI_H, DPHI_VH, ALPHA_H, ALPHA_V, K],
        resolve: rotation_s,
    },
    GaitDef {
        name: "rotation_u",
        family: Family::PitchYaw,
        summary: "rotation \"U\": vertical serpenoid, horizontal circular wave, Δφ_vh = 90",
        source: "§5.9",
        params: &[A_V, A_H, DPHI_V, DPHI_VH, ALPHA_V, K_V, ARC_H],
        resolve: rotation_u,
    },
    GaitDef {
        name: "pyp_straight",
        family: Family::PitchYawPitch,
        summary: "PYP straight line: the pitch joints as a PP with a long centre, yaw at rest",
        source: "§5.11",
        params: &[A, DPHI],
        resolve: pyp_straight,
    },
    GaitDef {
        name: "pyp_turning",
        family: Family::PitchYawPitch,
        summary: "PYP circular path: straight plus a constant yaw offset",
        source: "§5.11",
        params: &[A, DPHI, O_H],
        resolve: pyp_turning,
    },
    GaitDef {
        name: "pyp_rolling",
        family: Family::PitchYawPitch,
        summary: "PYP lateral rolling: Δφ_v = 0, Δφ_vh = 90, A_v = A_h = A > A_min",
        source: "§5.11 (6.18)",
        params: &[A, DPHI_VH],
        resolve: pyp_rolling,
    },
    GaitDef {
        name: "pyp_lateral_shift",
        family: Family::PitchYawPitch,
        summary: "PYP sideways (lateral shift / flapping): rolling co-ordination with A_h < A_hL",
        source: "§5.11 (6.34)",
        params: &[A_V, A_H, DPHI_VH],
        resolve: pyp_lateral_shift,
    },
    GaitDef {
        name: "pyp_rotation",
        family: Family::PitchYawPitch,
        summary: "PYP rotation: Δφ_v = 180, Δφ_vh = 90; A_h sets the angle",
        source: "§5.11 (6.36)",
        params: &[A_V, A_H, DPHI_VH],
        resolve: pyp_rotation,
    },
    GaitDef {
        name: "pitch_yaw",
        family: Family::PitchYaw,
        summary: "the general pitch-yaw gait, all of H2 (A_v, A_h, Δφ_v, Δφ_h, Δφ_vh, O_h): the gait search's genome",
        source: "§3.5.3, App. B",
        params: &[A_V, A_H, DPHI_V, DPHI_H, DPHI_VH, O_H],
        resolve: pitch_yaw,
    },
];

/// Looks a gait up by name.
pub fn gait_def(name: &str) -> Option<&'static GaitDef> {
    GAITS.iter().find(|g| g.name == name)
}

/// Resolves parameters for a robot and builds the generator, checking (3.11), the joint
/// range and the servo speed. `defaults` and `user` are normalised parameter sets.
pub fn build(
    def: &GaitDef,
    robot: &RobotInfo,
    defaults: &BTreeMap<&'static str, f64>,
    user: &BTreeMap<&'static str, f64>,
) -> Result<BuiltGait> {
    if !def.family.accepts(&robot.kinds) {
        return Err(GaitError::WrongRobot {
            gait: def.name.into(),
            needs: def.family.describe().into(),
            robot: robot.name.clone(),
        });
    }
    let values = Values::new(def.name, defaults, user);
    let mut notes = Vec::new();
    let control = (def.resolve)(&values, robot, &mut notes)?;
    let period = values.get(&PERIOD)?;
    let direction = values.get(&DIRECTION)?;
    let schema = def.schema();
    for (key, value) in values.all() {
        schema.check(schema.lookup(key)?, *value)?;
    }

    let oscillators = oscillators(&control, &robot.kinds);
    check_control(def.name, &control, robot, period)?;
    let generator = SineGenerator {
        name: def.name.to_string(),
        period_s: period,
        direction,
        oscillators,
    };
    Ok(BuiltGait {
        generator,
        params: values.all().iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        control,
        notes,
    })
}

/// The oscillators of a control-space point on a chain with these joint kinds.
pub fn oscillators(control: &Control, kinds: &[JointKind]) -> Vec<Oscillator> {
    match control {
        Control::H1 { amplitude, phase_diff } => (0..kinds.len())
            .map(|i| Oscillator {
                amplitude_deg: amplitude.deg,
                phase_deg: i as f64 * phase_diff.deg,
                offset_deg: 0.0,
            })
            .collect(),
        Control::H2 {
            amplitude_v,
            amplitude_h,
            phase_diff_v,
            phase_diff_h,
            phase_diff_vh,
            offset_h,
        } => {
            let (mut nv, mut nh) = (0.0, 0.0);
            kinds
                .iter()
                .map(|k| match k {
                    JointKind::Pitch => {
                        let o = Oscillator {
                            amplitude_deg: amplitude_v.deg,
                            phase_deg: nv * phase_diff_v.deg,
                            offset_deg: 0.0,
                        };
                        nv += 1.0;
                        o
                    }
                    JointKind::Yaw => {
                        let o = Oscillator {
                            amplitude_deg: amplitude_h.deg,
                            phase_deg: nh * phase_diff_h.deg + phase_diff_vh.deg,
                            offset_deg: offset_h.deg,
                        };
                        nh += 1.0;
                        o
                    }
                })
                .collect()
        }
    }
}

fn check_control(gait: &str, control: &Control, robot: &RobotInfo, period: f64) -> Result<()> {
    let zero_offset = Value::fixed(0.0, "offset");
    let pairs: Vec<(&Value, &Value)> = match control {
        Control::H1 { amplitude, .. } => vec![(amplitude, &zero_offset)],
        Control::H2 {
            amplitude_v,
            amplitude_h,
            offset_h,
            ..
        } => vec![(amplitude_v, &zero_offset), (amplitude_h, offset_h)],
    };
    let limit = robot.reach_deg.min(90.0);
    for (a, o) in &pairs {
        if !(a.deg.is_finite() && (0.0..=90.0).contains(&a.deg)) {
            return Err(GaitError::OutOfRange {
                gait: gait.into(),
                key: a.key.clone(),
                value: a.deg,
                min: 0.0,
                max: 90.0,
            });
        }
        let sum = a.deg + o.deg.abs();
        if sum > limit + 1e-9 {
            return Err(GaitError::AmplitudePlusOffset {
                gait: gait.into(),
                amplitude_key: a.key.clone(),
                offset_key: o.key.clone(),
                amplitude: a.deg,
                offset: o.deg,
                sum,
                limit,
            });
        }
    }
    let (a_max, key) = pairs
        .iter()
        .map(|(a, _)| (a.deg, a.key.clone()))
        .fold((0.0, String::new()), |best, x| if x.0 > best.0 { x } else { best });
    let t_min = sh::min_period(a_max, robot.max_speed_deg_s);
    if period < t_min {
        return Err(GaitError::ServoSpeed {
            gait: gait.into(),
            period,
            min_period: t_min,
            amplitude_key: key,
            amplitude: a_max,
            max_speed: robot.max_speed_deg_s,
        });
    }
    Ok(())
}
