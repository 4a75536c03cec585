#![doc = include_str!("../README.md")]

pub mod docking;
pub mod friction_probe;
pub mod lockon;
pub mod mast;
pub mod scan;

pub use friction_probe::{FrictionProbe, ProbeState};
pub use modbot_interface as interface;
pub use modbot_interface::{
    Clock, ConnectorState, ConnectorStatus, Connectors, ControlMode, DockingReading, ForceTorque, Imu, ImuReading,
    JointStates, JointTarget, Joints, Module, Modules, Monotonic, RobotError, TagCamera, TagDetection, TagFrame,
    Wrench, fresh,
};
