//! The one error type of modbot_sim.

use modbot_core::CoreError;
use modbot_description::DescriptionError;
use modbot_gaits::GaitError;

/// Why a simulation could not be set up or could not go on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    /// A [`crate::Plant`] refused or failed (its message names what).
    #[error("{0}")]
    Plant(String),
    /// The robot description is unusable for simulation.
    #[error("robot `{robot}`: {what}")]
    Robot {
        /// Robot name.
        robot: String,
        /// What is wrong, naming the link or joint.
        what: String,
    },
    /// A command names a joint the robot does not have.
    #[error("unknown joint `{joint}` (the robot has: {known})")]
    UnknownJoint {
        /// The name given.
        joint: String,
        /// The robot's joints.
        known: String,
    },
    /// A command has the wrong number of values.
    #[error("expected {expected} joint targets, got {got}")]
    JointCount {
        /// Joints of the robot.
        expected: usize,
        /// Values given.
        got: usize,
    },
    /// A command value is NaN or infinite.
    #[error("joint `{joint}`: target {value} is not a finite number")]
    NotFinite {
        /// The joint.
        joint: String,
        /// The value.
        value: f64,
    },
    /// An obstacle overlaps the robot in its start pose.
    #[error("obstacle `{obstacle}` overlaps link `{link}` of the robot at the start pose")]
    ObstacleOverlap {
        /// The obstacle box.
        obstacle: String,
        /// The robot link.
        link: String,
    },
    /// The physics diverged (NaN or runaway energy).
    #[error("simulation diverged at step {step} (t = {time:.4} s): link `{link}`: {what}; the inputs: {setup}")]
    Diverged {
        /// Physics step index.
        step: u64,
        /// Simulated time, s.
        time: f64,
        /// The link whose state is bad.
        link: String,
        /// What is bad.
        what: String,
        /// What the run was started with (world, gravity, engine, step, start poses), so
        /// the input that drove it there can be found.
        setup: String,
    },
    /// Bad simulation settings.
    #[error("{key} = {value}: {expected}")]
    Settings {
        /// The setting.
        key: String,
        /// Its value.
        value: String,
        /// What was expected.
        expected: String,
    },
    /// What the run streams as it goes (its trajectory, link poses, recording) could not be
    /// written; the message names the file.
    #[error("recording the run: {0}")]
    Sink(String),
    /// Measurement asked for more cycles than were simulated.
    #[error("measurement needs {needed:.3} s of simulation, only {have:.3} s were run")]
    TooShort {
        /// Time needed.
        needed: f64,
        /// Time simulated.
        have: f64,
    },
    /// An event-driven controller did not complete its cycles in the time allowed.
    #[error(
        "controller `{controller}` completed {done} of {wanted} cycles in {time} s of simulation (a pose it never reaches?)"
    )]
    Stalled {
        /// The controller.
        controller: String,
        /// Cycles completed.
        done: usize,
        /// Cycles wanted.
        wanted: usize,
        /// Time allowed, s.
        time: f64,
    },
    /// A run-time attach, detach or cut was refused.
    #[error("dock `{dock}`: {what}")]
    Dock {
        /// The dock (or the joint cut).
        dock: String,
        /// Why it was refused.
        what: String,
    },
    /// From the description layer.
    #[error(transparent)]
    Description(#[from] DescriptionError),
    /// From the robot model.
    #[error(transparent)]
    Core(#[from] CoreError),
    /// From the gait library.
    #[error(transparent)]
    Gait(#[from] GaitError),
}

impl SimError {
    /// Whether what the user gave (robot, world, settings, commands) caused it, as opposed to
    /// the physics or the run failing: front ends map it to their "bad input" answer.
    pub fn is_input_error(&self) -> bool {
        match self {
            SimError::Robot { .. }
            | SimError::UnknownJoint { .. }
            | SimError::JointCount { .. }
            | SimError::NotFinite { .. }
            | SimError::ObstacleOverlap { .. }
            | SimError::Dock { .. }
            | SimError::Settings { .. }
            | SimError::Description(_)
            | SimError::Core(_)
            | SimError::Gait(_) => true,
            SimError::Diverged { .. }
            | SimError::TooShort { .. }
            | SimError::Stalled { .. }
            | SimError::Sink(_)
            | SimError::Plant(_) => false,
        }
    }
}

/// Result with [`SimError`].
pub type Result<T, E = SimError> = std::result::Result<T, E>;
