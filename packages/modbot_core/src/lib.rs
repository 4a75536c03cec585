#![doc = include_str!("../README.md")]

pub mod catalog;
pub mod error;
pub mod kinematics;
pub mod predict;
pub mod scenario;
pub mod serpenoid;
pub mod shape;
pub mod topology;

pub use catalog::{ModuleCatalog, ModuleKind};
pub use error::{CoreError, Result};
pub use kinematics::{Chain, ChainPose};
pub use scenario::Scenario;
pub use topology::{ChainKind, Joint, JointKind, RobotSpec, Roll, Topology};
