#![doc = include_str!("../README.md")]

mod convert;
pub mod error;
pub mod measure;
pub mod robot;
pub mod run;
pub mod world;

pub use error::{Result, SimError};
pub use measure::{Recorder, Report, Sample};
pub use robot::{Servo, SimRobot};
pub use run::{RunOutput, RunPlan, run_gait};
pub use world::{SimSettings, Simulator};
