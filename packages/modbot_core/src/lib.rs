#![doc = include_str!("../README.md")]

pub mod catalog;
pub mod error;
pub mod scenario;
pub mod topology;
pub mod tree;

pub use catalog::{Actuator, JointType, ModuleCatalog, ModuleKind};
pub use error::{CoreError, Result};
pub use scenario::{FrictionCombine, Scenario};
pub use topology::{ChainKind, RobotFile, RobotJoint, RobotSpec, Topology};
pub use tree::LinkTree;
