//! Errors of the ROS runtime and nodes.

/// What went wrong.
#[derive(Debug, thiserror::Error)]
pub enum RosError {
    /// A bad `--ros-args` argument.
    #[error("command line: {0}")]
    Args(String),
    /// A bad parameter file or value.
    #[error("parameters: {0}")]
    Params(String),
    /// The middleware refused something (participant, topic, reader, writer).
    #[error("middleware: {0}")]
    Middleware(String),
    /// A node failed to set up or run.
    #[error("{0}")]
    Node(String),
}

/// Result of this crate.
pub type Result<T> = std::result::Result<T, RosError>;
