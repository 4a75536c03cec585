//! Controllers of the self-mobile `wheelfoot` modules of seed 000 ("Strategic Planning for
//! Modular Robotic Structures"): a lone module's inchworm gaits, pivot turn and position
//! control (§3.1, §5.1), the quadruped's trot, sidle, pass-over and position control
//! (§3.2, §4.1, §6.6) and the wheeled configuration's drive, spin, low pose and position
//! control (§3.3, §4.2). Each is a [`Controller`](crate::Controller); [`build`] makes one
//! from a name, the robot's joint names and parameters.
//!
//! Conventions shared by every controller here:
//! - angles are the thesis's, in degrees in tables and parameters, radians in targets;
//! - a module's joints are `front_joint` (FJ, the wheel or hip), `back_joint1` (BJ1),
//!   `back_joint2` (BJ2), `cam_pan`, `cam_tilt`; the cameras are held at 0;
//! - `Observation::base` is the world pose of the first module's foot plate, origin at its
//!   lower tip (the module reference point); its yaw is the module's or robot's heading;
//! - a positive FJ speed rolls a lone module's front to the right (its yaw decreases).
//!
//! Where the thesis's text and code disagree, the choices are in decision record 0024.

pub mod quadruped;
pub mod registry;
pub mod single;
pub mod wheeled;

#[cfg(test)]
mod fake;

use std::f64::consts::{PI, TAU};

use nalgebra::Isometry3;

use crate::controller::JointTarget;

pub use registry::{ModularRobot, ParamDef, ParamKind, build, build_for, params_of};

/// A module's joints in command order (the suffixes of the robot's joint names).
pub const MODULE_JOINTS: [&str; 5] = ["front_joint", "back_joint1", "back_joint2", "cam_pan", "cam_tilt"];

/// The wheel joint's speed limit, deg/s (§2.3). Requested wheel speeds above it are refused.
pub const WHEEL_MAX_SPEED_DEG_S: f64 = 360.0;

/// Where one module's joints are in the robot's joint vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModuleJoints {
    /// FJ: the wheel (lone module, wheeled roles) or the hip (quadruped legs).
    pub fj: usize,
    /// BJ1, the first foot joint (positive = foot tip down).
    pub bj1: usize,
    /// BJ2, the second foot joint.
    pub bj2: usize,
    /// Camera pan.
    pub pan: usize,
    /// Camera tilt.
    pub tilt: usize,
}

impl ModuleJoints {
    /// The joints of module `prefix` (`m1`, `role3`, …) found by name: `<prefix>_front_joint`
    /// and so on. `None` when one is missing.
    pub fn find(prefix: &str, names: &[String]) -> Option<ModuleJoints> {
        let at = |suffix: &str| {
            let full = format!("{prefix}_{suffix}");
            names.iter().position(|n| *n == full)
        };
        Some(ModuleJoints {
            fj: at(MODULE_JOINTS[0])?,
            bj1: at(MODULE_JOINTS[1])?,
            bj2: at(MODULE_JOINTS[2])?,
            pan: at(MODULE_JOINTS[3])?,
            tilt: at(MODULE_JOINTS[4])?,
        })
    }

    /// Holds the camera at (0, 0).
    pub(crate) fn write_camera(&self, out: &mut [JointTarget]) {
        out[self.pan] = JointTarget::Position(0.0);
        out[self.tilt] = JointTarget::Position(0.0);
    }
}

/// An angle in degrees wrapped into (−180, 180].
pub fn wrap_deg(a: f64) -> f64 {
    let d = a.rem_euclid(360.0);
    if d > 180.0 { d - 360.0 } else { d }
}

/// An angle in radians wrapped into (−π, π].
pub fn wrap_rad(a: f64) -> f64 {
    let d = a.rem_euclid(TAU);
    if d > PI { d - TAU } else { d }
}

pub use modbot_interface::yaw_of;

/// The turn of `target` (rad) nearest to the current position `q` of a continuous joint.
pub(crate) fn nearest_turn(target: f64, q: f64) -> f64 {
    q + wrap_rad(target - q)
}

/// A goal in the world frame: the reference point's position (m) and the final heading (rad).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Goal {
    /// x, m.
    pub x: f64,
    /// y, m.
    pub y: f64,
    /// Heading, rad.
    pub yaw: f64,
}

impl Goal {
    /// Distance (m) and bearing (rad, world) from the base's reference point to the goal.
    pub fn range_bearing(&self, base: &Isometry3<f64>) -> (f64, f64) {
        let (dx, dy) = (self.x - base.translation.x, self.y - base.translation.y);
        (dx.hypot(dy), dy.atan2(dx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_and_yaw() {
        assert_eq!(wrap_deg(190.0), -170.0);
        assert_eq!(wrap_deg(-180.0), 180.0);
        assert!((wrap_rad(3.0 * PI) - PI).abs() < 1e-12);
        let pose = Isometry3::new(nalgebra::Vector3::zeros(), nalgebra::Vector3::z() * 2.0);
        assert!((yaw_of(&pose) - 2.0).abs() < 1e-12);
        // Pitched 85° nose up then turned 30°: the heading is still 30°.
        let pitched = nalgebra::UnitQuaternion::from_euler_angles(0.0, -85f64.to_radians(), 30f64.to_radians());
        let pose = Isometry3::from_parts(nalgebra::Translation3::identity(), pitched);
        assert!((yaw_of(&pose) - 30f64.to_radians()).abs() < 1e-9, "{}", yaw_of(&pose));
        assert!((nearest_turn(0.1, 4.0 * PI - 0.2) - (4.0 * PI + 0.1)).abs() < 1e-12);
    }
}
