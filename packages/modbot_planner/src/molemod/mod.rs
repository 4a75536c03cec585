//! The MoleMOD reconfiguration planner (Brejchová 2018, spec seed-004): robots inside
//! passive building modules on a 2-D grid rebuild a structure by moving modules; A* over
//! joint multi-robot steps finds the cheapest sequence.

pub mod actions;
pub mod error;
pub mod families;
pub mod grid;
pub mod heuristic;
pub mod search;
pub mod task;

pub use actions::{Action, JointStep};
pub use error::MoleError;
pub use families::{FAMILIES, family};
pub use grid::GridState;
pub use search::{Plan, SearchStats, check_plan, plan};
pub use task::{Costs, HeuristicKind, MAX_ACTION_COST, Options, ShiftSupport, StepPenalty, Task};
