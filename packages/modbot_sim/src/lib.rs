#![doc = include_str!("../README.md")]

mod assess;
pub mod camera;
mod convert;
mod dock;
pub mod embedded;
pub mod error;
mod layout;
pub mod maze;
pub mod measure;
mod native;
pub mod plant;
mod rapier_engine;
pub mod robot;
pub mod run;
pub mod sensors;
pub mod world;

pub use assess::RunStatus;
pub use camera::{Camera, CameraNoise, CameraSpec, Detectable, Detection, Mark};
pub use dock::{DockFit, DockTolerance, Port};
pub use embedded::{EmbeddedModule, EmbeddedModules, ModuleSetup, SensorFault, SensorModels};
pub use error::{Result, SimError};
pub use layout::StartPose;
pub use measure::{Boundary, CycleStep, MAX_KEPT_SAMPLES, Recorder, Report, Sample};
pub use plant::Plant;
pub use robot::{Drive, Servo, SimRobot};
pub use run::{
    DEFAULT_CONTROL_RATE_HZ, MAX_CONTROL_RATE_HZ, RunOutput, RunPlan, is_control_rate, run_controller,
    run_controller_streaming, run_gait,
};
pub use world::{
    Engine, EngineSettings, NativeSettings, RapierSettings, Reference, SimSettings, Simulator, Twist, heading_of,
};
