//! Errors of the MoleMOD planner.

/// Why a task was refused or a search ended without a plan.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MoleError {
    /// The grid text is malformed.
    #[error("{what}: {reason}")]
    Grid {
        /// Which grid (`initial`, `goal`).
        what: String,
        /// What is wrong, with the row and column.
        reason: String,
    },
    /// The task is inconsistent.
    #[error("invalid task: {0}")]
    InvalidTask(String),
    /// A task file is malformed.
    #[error("{origin}: {message}")]
    File {
        /// The file.
        origin: String,
        /// What is wrong, naming the key.
        message: String,
    },
    /// The goal cannot be reached.
    #[error("no plan: the goal is unreachable ({expansions} states explored)")]
    NoPath {
        /// States expanded.
        expansions: u64,
    },
    /// The search hit its time or expansion limit.
    #[error("timeout: {reason} after {expansions} expansions")]
    Timeout {
        /// Which limit.
        reason: String,
        /// States expanded.
        expansions: u64,
    },
    /// The caller cancelled the search.
    #[error("cancelled after {expansions} expansions")]
    Cancelled {
        /// States expanded.
        expansions: u64,
    },
    /// The search's own tree is inconsistent (a bug, reported instead of looping).
    #[error("internal error: {0}")]
    Internal(String),
    /// A plan does not replay.
    #[error("plan step {step}: {reason}")]
    BadPlan {
        /// Step index.
        step: usize,
        /// What failed.
        reason: String,
    },
}
