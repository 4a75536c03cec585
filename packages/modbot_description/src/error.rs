//! The one error type of modbot_description.

use modbot_core::CoreError;

/// Why a description could not be generated or read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DescriptionError {
    /// A URDF could not be parsed.
    #[error("{origin}: malformed URDF: {message}")]
    UrdfParse {
        /// File or source.
        origin: String,
        /// The parser's message.
        message: String,
    },
    /// A URDF parsed but is not a usable robot (cycle, missing link, bad inertial, …).
    #[error("{origin}: {what}")]
    InvalidUrdf {
        /// File or source.
        origin: String,
        /// What is wrong, naming the link or joint.
        what: String,
    },
    /// A description configuration file is malformed.
    #[error("{origin}: {message}")]
    Config {
        /// File or source.
        origin: String,
        /// What is wrong, naming the key.
        message: String,
    },
    /// An error from the robot model (catalog, topology, scenario).
    #[error(transparent)]
    Core(#[from] CoreError),
}

/// Result with [`DescriptionError`].
pub type Result<T, E = DescriptionError> = std::result::Result<T, E>;
