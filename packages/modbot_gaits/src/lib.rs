#![doc = include_str!("../README.md")]

pub mod chain;
pub mod config;
pub mod controller;
pub mod cpg;
pub mod error;
pub mod generator;
pub mod hormone;
pub mod library;
pub mod modular;
pub mod params;
pub mod player;
pub mod pose_sequence;
pub mod predict;
pub mod serpenoid;
pub mod shape;
pub mod wheelfoot_kinematics;

pub use chain::{Chain, ChainPose, JointKind};
pub use config::{GaitLibrary, Preset, Selection, Transition};
pub use controller::{Controller, JointTarget, Observation};
pub use error::{GaitError, Result};
pub use generator::{Gait, Oscillator, SineGenerator};
pub use library::{BuiltGait, Control, Family, GAITS, GaitDef, RobotInfo};
pub use player::GaitPlayer;
pub use pose_sequence::{JointMode, Pose, PoseSequence};
