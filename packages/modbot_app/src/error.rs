//! The one error type of the application layer, and whether an error is the user's input.

use std::path::PathBuf;

use modbot_core::CoreError;
use modbot_description::DescriptionError;
use modbot_gaits::GaitError;
use modbot_sim::SimError;

/// Why loading, setting up or running failed.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// Something the user asked for is not possible as asked (an option, a file kind).
    #[error("{0}")]
    BadInput(String),
    /// The robot model, a robot file, the catalog or a world.
    #[error(transparent)]
    Core(#[from] CoreError),
    /// A gait, its parameters, a gait file or a pose sequence.
    #[error(transparent)]
    Gait(#[from] GaitError),
    /// A description.
    #[error(transparent)]
    Description(#[from] DescriptionError),
    /// The simulator.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// An output could not be written.
    #[error("cannot write {path}: {message}")]
    Write {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        message: String,
    },
}

/// Result with [`AppError`].
pub type Result<T, E = AppError> = std::result::Result<T, E>;

impl AppError {
    /// True when the user's input (arguments, files, parameters) caused it; false when the
    /// work itself failed (a diverging simulation, an unwritable output). The error is asked,
    /// each library deciding for its own errors.
    pub fn is_input_error(&self) -> bool {
        match self {
            AppError::BadInput(_) | AppError::Core(_) | AppError::Gait(_) | AppError::Description(_) => true,
            AppError::Sim(e) => e.is_input_error(),
            AppError::Write { .. } => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_says_whose_fault_it_is() {
        assert!(AppError::BadInput("x".into()).is_input_error());
        let diverged = SimError::Diverged {
            step: 1,
            time: 0.0,
            link: "l".into(),
            what: "NaN".into(),
            setup: "world `flat`".into(),
        };
        assert!(!AppError::Sim(diverged).is_input_error());
        assert!(AppError::Sim(SimError::JointCount { expected: 2, got: 3 }).is_input_error());
        assert!(
            !AppError::Write {
                path: "x".into(),
                message: "full".into()
            }
            .is_input_error()
        );
    }
}
