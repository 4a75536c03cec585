//! The controller seam: every way of moving a robot — a sine generator played with ramps
//! and blends, a pose sequence, later a CPG or a module's hormone rules — is a stateful,
//! closed-loop [`Controller`]. Each control tick it is given the time step and an
//! [`Observation`] of the robot and writes one [`JointTarget`] per joint it drives.
//! Decision record 0020.

use std::collections::BTreeMap;

use nalgebra::Isometry3;

pub use modbot_interface::JointTarget;

/// What a controller sees of the robot at a tick.
#[derive(Debug, Clone, Copy)]
pub struct Observation<'a> {
    /// Time since the controller started, s.
    pub time: f64,
    /// Joint positions, rad (command order).
    pub positions: &'a [f64],
    /// Joint velocities, rad/s (command order).
    pub velocities: &'a [f64],
    /// Pose of the robot's base frame in the world.
    pub base: Isometry3<f64>,
    /// Named sensor readings (force, IR ranges, …); empty for a robot without sensors.
    pub sensors: &'a BTreeMap<String, Vec<f64>>,
}

/// A closed-loop, stateful controller.
pub trait Controller: Send {
    /// Name, for reports and messages.
    fn name(&self) -> &str;

    /// Number of joints it writes targets for.
    fn joint_count(&self) -> usize;

    /// One control tick of `dt` seconds: reads `obs`, writes one target per joint to `out`
    /// (`out.len() == joint_count()`).
    fn step(&mut self, dt: f64, obs: &Observation<'_>, out: &mut [JointTarget]);

    /// The period of a clock-driven controller (a sine gait), s; `None` for one whose
    /// cycles end when the robot gets somewhere (a pose sequence).
    fn period(&self) -> Option<f64>;

    /// Cycles completed so far: clock cycles, or passes through a pose sequence.
    fn completed_cycles(&self) -> usize;
}
