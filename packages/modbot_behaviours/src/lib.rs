#![doc = include_str!("../README.md")]

pub mod assembly;
pub mod configuration;
pub mod docking;
pub mod friction_probe;
pub mod lockon;
pub mod mast;
pub mod mission;
pub mod reassembly;
pub mod scan;

pub use friction_probe::{FrictionProbe, ProbeState};

/// The IMU's and the joints' readings may be this old before a behaviour stops, s (ten of
/// their 10 ms periods).
pub const SENSOR_TIMEOUT_S: f64 = 0.1;

/// A reading older than [`SENSOR_TIMEOUT_S`] holds a behaviour that can wait (the scan, a
/// camera's look in the lock-on) until a newer one comes; one older than this ends it, s.
pub const SENSOR_LOST_S: f64 = 1.0;

/// A command that holds still: every position-mode joint at `positions` (or 0, the rest
/// pose, when `None`), every velocity-mode joint stopped.
pub fn hold(modes: &[ControlMode], positions: Option<&[f64]>) -> Vec<JointTarget> {
    modes
        .iter()
        .enumerate()
        .map(|(k, mode)| match mode {
            ControlMode::Position => JointTarget::Position(positions.map_or(0.0, |q| q[k])),
            ControlMode::Velocity => JointTarget::Velocity(0.0),
        })
        .collect()
}
pub use modbot_interface as interface;
pub use modbot_interface::{
    Clock, ConnectorState, ConnectorStatus, Connectors, ControlMode, DockingReading, ForceTorque, Imu, ImuReading,
    JointStates, JointTarget, Joints, Module, Modules, Monotonic, RobotError, TagCamera, TagDetection, TagFrame,
    Wrench, fresh,
};
