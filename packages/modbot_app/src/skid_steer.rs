//! Calibration of the wheeled vehicle's skid-steer model (spec seed-000 §3.3, after Mandow
//! et al.): for a symmetric vehicle, forward speed v = α (V_l + V_r)/2 and yaw rate
//! ω = α (V_r − V_l) / (2 x_ICR), with V_l, V_r the left and right wheels' rim speeds.
//! α comes from a straight run with equal inputs (distance over mean wheel travel) and
//! x_ICR from a spin with equal and opposite inputs (α times the rim-travel difference over
//! twice the turned angle). The thesis reports no values; this measures them on the
//! simulator.

use modbot_core::{ModuleCatalog, Scenario, Topology};
use modbot_gaits::modular::{wrap_rad, yaw_of};
use modbot_gaits::wheelfoot_kinematics::WHEEL_RADIUS;
use modbot_sim::SimSettings;
use nalgebra::Isometry3;

use crate::error::{AppError, Result};
use crate::session::{Interface, SimSession};

/// The wheeled vehicle's pose while it drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WheeledPose {
    /// Table 3.30: body (−90, 90), wheels (−75, 90).
    Normal,
    /// §4.2, the Lua values: body (0, 0), wheels (30, 0) (decision 0024).
    Low,
}

impl WheeledPose {
    /// (BJ1, BJ2) of the body modules and of the wheel modules, deg.
    pub fn feet_deg(self) -> ((f64, f64), (f64, f64)) {
        match self {
            WheeledPose::Normal => ((-90.0, 90.0), (-75.0, 90.0)),
            WheeledPose::Low => ((0.0, 0.0), (30.0, 0.0)),
        }
    }
}

/// What a calibration measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SkidSteerCalibration {
    /// Wheel joint speed used, rad/s.
    pub wheel_speed_rad_s: f64,
    /// Straight run: distance the reference point covered, m.
    pub straight_distance_m: f64,
    /// Straight run: mean rim travel of the four wheels, m.
    pub straight_wheel_travel_m: f64,
    /// α = distance / wheel travel.
    pub alpha: f64,
    /// Spin: angle turned, rad (signed, + = left).
    pub spin_angle_rad: f64,
    /// Spin: right minus left mean rim travel, m.
    pub spin_travel_difference_m: f64,
    /// x_ICR, m.
    pub x_icr_m: f64,
    /// Half the track of the wheels' contact points, m (x_ICR ≥ it when the wheels skid).
    pub half_track_m: f64,
}

/// Per wheel role (3: front right, 4: front left, 5: back right, 6: back left): +1 for a
/// left wheel, −1 for a right one (the joint speed that drives it forward is +v on the left,
/// −v on the right, the modules being mirrored).
const SIDES: [(usize, f64); 4] = [(3, -1.0), (4, 1.0), (5, -1.0), (6, 1.0)];

/// Runs the straight and the spin test on the `wheeled` robot in `world`, each for `seconds`
/// at wheel joint speed `speed_rad_s` (at most the joint's limit), after `settle_s` in `pose`.
pub fn calibrate_skid_steer(
    catalog: &ModuleCatalog,
    world: &Scenario,
    pose: WheeledPose,
    speed_rad_s: f64,
    seconds: f64,
) -> Result<SkidSteerCalibration> {
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= 60.0) {
        return Err(AppError::BadInput(format!(
            "seconds = {seconds}: expected a number in (0, 60]"
        )));
    }
    if !(speed_rad_s.is_finite() && speed_rad_s > 0.0) {
        return Err(AppError::BadInput(format!(
            "wheel speed = {speed_rad_s} rad/s: expected a number > 0"
        )));
    }
    let topology = Topology::resolve("wheeled", catalog)?;
    let mut s = SimSession::new(topology, world, SimSettings::for_scenario(world), 0)?;
    let names = s.sim.joint_names().to_vec();
    let index = |n: String| {
        names
            .iter()
            .position(|x| *x == n)
            .ok_or_else(|| AppError::BadInput(format!("the wheeled robot has no joint {n}")))
    };
    let ((b1, b2), (w1, w2)) = pose.feet_deg();
    let mut positions = Vec::new();
    for k in s.interface_joints(Interface::Position).to_vec() {
        let n = &names[k];
        let role: usize = n.get(4..5).and_then(|c| c.parse().ok()).unwrap_or(0);
        let (a, b) = if role <= 2 { (b1, b2) } else { (w1, w2) };
        positions.push(if n.ends_with("back_joint1") {
            a.to_radians()
        } else if n.ends_with("back_joint2") {
            b.to_radians()
        } else {
            0.0
        });
    }
    let wheels: Vec<(usize, f64)> = SIDES
        .iter()
        .map(|&(role, side)| Ok((index(format!("role{role}_front_joint"))?, side)))
        .collect::<Result<_>>()?;
    let velocity_joints = s.interface_joints(Interface::Velocity).to_vec();
    let refuse = |e: crate::session::Refusal| AppError::BadInput(e.to_string());
    s.command(Interface::Position, &positions).map_err(refuse)?;
    // Wheel commands in the order of the velocity interface.
    let wheel_command = |sign_of: &dyn Fn(f64) -> f64| -> Vec<f64> {
        velocity_joints
            .iter()
            .map(|k| {
                wheels
                    .iter()
                    .find(|(w, _)| w == k)
                    .map(|(_, side)| sign_of(*side) * speed_rad_s)
                    .unwrap_or(0.0)
            })
            .collect()
    };
    let dt = s.sim.step_size();
    // Settle into the pose with the wheels held.
    s.command(Interface::Velocity, &vec![0.0; velocity_joints.len()])
        .map_err(refuse)?;
    run(&mut s, 1.5, dt, &wheels)?;
    // Straight: every wheel forward.
    s.command(Interface::Velocity, &wheel_command(&|side| side))
        .map_err(refuse)?;
    let start = s.sim.root_pose();
    let straight = run(&mut s, seconds, dt, &wheels)?;
    let end = s.sim.root_pose();
    let distance = (end.translation.vector - start.translation.vector).xy().norm();
    let travel = straight.rim.iter().map(|x| x.abs()).sum::<f64>() / 4.0;
    let alpha = distance / travel.max(1e-12);
    // Stop, then spin: every joint at +v, i.e. left wheels forward, right wheels backward.
    s.command(Interface::Velocity, &vec![0.0; velocity_joints.len()])
        .map_err(refuse)?;
    run(&mut s, 1.0, dt, &wheels)?;
    s.command(Interface::Velocity, &wheel_command(&|_| 1.0))
        .map_err(refuse)?;
    let spin = run(&mut s, seconds, dt, &wheels)?;
    s.command(Interface::Velocity, &vec![0.0; velocity_joints.len()])
        .map_err(refuse)?;
    let mean = |side: f64| {
        spin.rim
            .iter()
            .zip(SIDES)
            .filter(|(_, (_, sd))| *sd == side)
            .map(|(x, _)| *x)
            .sum::<f64>()
            / 2.0
    };
    let difference = mean(-1.0) - mean(1.0);
    let x_icr = alpha * difference / (2.0 * spin.yaw);
    // The wheels' contact half-track: lateral distance of the wheel links from the centre.
    let poses = s.sim.link_poses();
    let centre = s.sim.root_pose();
    let half_track = half_track(&s, &poses, &centre);
    Ok(SkidSteerCalibration {
        wheel_speed_rad_s: speed_rad_s,
        straight_distance_m: distance,
        straight_wheel_travel_m: travel,
        alpha,
        spin_angle_rad: spin.yaw,
        spin_travel_difference_m: difference,
        x_icr_m: x_icr,
        half_track_m: half_track,
    })
}

/// What a run of the simulator turned: each wheel's forward rim travel (m, in [`SIDES`]
/// order) and the base's yaw (rad, unwrapped).
struct Turned {
    rim: [f64; 4],
    yaw: f64,
}

fn run(s: &mut SimSession, seconds: f64, dt: f64, wheels: &[(usize, f64)]) -> Result<Turned> {
    let steps = (seconds / dt).round() as usize;
    let mut rim = [0.0; 4];
    let mut turned = 0.0;
    let mut last = yaw_of(&s.sim.root_pose());
    for _ in 0..steps {
        s.sim.step()?;
        let v = s.sim.joint_velocities();
        for (i, (k, side)) in wheels.iter().enumerate() {
            rim[i] += side * v[*k] * WHEEL_RADIUS * dt;
        }
        let now = yaw_of(&s.sim.root_pose());
        turned += wrap_rad(now - last);
        last = now;
    }
    Ok(Turned { rim, yaw: turned })
}

/// Half the distance between the left and right front wheels' outer discs, in the base frame.
fn half_track(s: &SimSession, poses: &[Isometry3<f64>], base: &Isometry3<f64>) -> f64 {
    let links = s.sim.links_of(0);
    let names = s.robot.model.links.iter().map(|l| l.name.clone()).collect::<Vec<_>>();
    let find = |n: &str| names.iter().position(|x| x == n).map(|i| poses[links.start + i]);
    match (find("role3_wheel_front"), find("role4_wheel_front")) {
        (Some(r), Some(l)) => {
            let (r, l) = (base.inverse() * r, base.inverse() * l);
            (l.translation.vector.y - r.translation.vector.y).abs() / 2.0
        }
        _ => f64::NAN,
    }
}
