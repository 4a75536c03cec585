#![doc = include_str!("../README.md")]

pub mod controller;
pub mod error;
pub mod evaluate;
pub mod gait_driver;
pub mod load;
pub mod session;
pub mod sweep;

pub use controller::{BuiltController, ControllerSpec, build_controller};
pub use error::{AppError, Result};
pub use evaluate::{EvalOptions, Evaluation, evaluate};
pub use gait_driver::{GaitDriver, GaitRequest, GaitStatus};
pub use load::{load_catalog, load_gaits, load_robot, load_world};
pub use session::{Interface, Refusal, SimSession, perturbed_start};
pub use sweep::{Axis, SweepPoint, sweep};
