#![doc = include_str!("../README.md")]

pub mod assemble;
pub mod closed_loop;
pub mod controller;
pub mod embedded;
pub mod embedded_mission;
pub mod error;
pub mod evaluate;
pub mod friction;
pub mod gait_driver;
pub mod load;
pub mod lockon;
pub mod maze;
pub mod mission;
pub mod navigate;
pub mod organism;
pub mod recording;
pub mod replay;
pub mod ros_frames;
pub mod scan;
pub mod search;
pub mod session;
pub mod skid_steer;
pub mod sweep;
pub mod table;
pub mod teleop;

pub use closed_loop::{CommandLayout, Commands, Observed};
pub use controller::{BuiltController, ControllerSpec, build_controller, modular_robot};
pub use error::{AppError, Result};
pub use evaluate::{EvalOptions, Evaluation, evaluate, evaluate_streaming};
pub use gait_driver::{GaitDriver, GaitRequest, GaitStatus};
pub use load::{load_catalog, load_gaits, load_maze, load_robot, load_world, load_world_for};
pub use maze::{MazeEvaluation, evaluate_maze, evaluate_maze_stages};
pub use session::{Interface, Refusal, SimSession, perturbed_start};
pub use skid_steer::{SkidSteerCalibration, WheeledPose, calibrate_skid_steer};
pub use sweep::{Axis, SweepGrid, SweepPoint, sweep};
pub use table::gait_table;
