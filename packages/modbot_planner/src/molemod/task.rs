//! A MoleMOD task: initial and goal grids and the planner's options (spec §10's choices).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::molemod::error::MoleError;
use crate::molemod::grid::GridState;

/// Which heuristic the search uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HeuristicKind {
    /// Manhattan over the min-cost matching of misplaced modules to unfilled goal cells
    /// (admissible; reproduces the worked example).
    Manhattan,
    /// The source's formula: Manhattan + max(0, n_wrong − n_robot) (not admissible).
    Source,
    /// Manhattan + the robot entries every misplaced module without a robot needs
    /// (admissible; decision record 0013).
    Strong,
    /// h = 0: uniform-cost search (Dijkstra), the optimality oracle.
    Zero,
}

/// When the +1 step penalty applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepPenalty {
    /// Only with more than one robot (reproduces the worked example, spec Q2).
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// Where SHIFT needs its supporting module (spec Q3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShiftSupport {
    /// Under the target cell (default).
    Target,
    /// Under the block being shifted.
    Block,
    /// Both.
    Both,
}

/// Planner options.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// Heuristic.
    pub heuristic: HeuristicKind,
    /// Weight w of f = g + w·h (1 = A*; > 1 bounded-suboptimal, cost ≤ w × optimal for an
    /// admissible h).
    pub weight: f64,
    /// Step penalty rule.
    pub step_penalty: StepPenalty,
    /// SHIFT support reading.
    pub shift_support: ShiftSupport,
    /// Allow the cooperative lifts.
    pub coop: bool,
    /// Cost of MOVE, LIFT, PUTDOWN, SHIFT, COOP.
    pub costs: Costs,
    /// Require robots in the goal's robot cells too.
    pub goal_robots: bool,
    /// Every module must rest on the ground or on a module (off: seed fidelity, spec Q5).
    pub require_support: bool,
    /// The modules must stay one 4-connected structure (off: seed fidelity, spec Q5).
    pub require_connected: bool,
    /// Merge joint steps that reach the same state (robots are anonymous), keeping the
    /// cheapest: prunes symmetric joint steps.
    pub prune_symmetric: bool,
    /// Expansion limit (Timeout beyond).
    pub max_expansions: u64,
}

/// Highest per-action cost a task accepts: the source's are 1 and 2. A bound keeps every
/// path cost far inside `u32` (the search also saturates, issue 18: a cost of 4·10⁹ used to
/// wrap the sum, link parents in a cycle and hang the path's reconstruction).
pub const MAX_ACTION_COST: u32 = 10_000;

/// Per-action costs d(m) (spec §3.6).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Costs {
    /// MOVE.
    pub r#move: u32,
    /// LIFT.
    pub lift: u32,
    /// PUTDOWN.
    pub putdown: u32,
    /// SHIFT.
    pub shift: u32,
    /// COOP_UP and COOP_DOWN.
    pub coop: u32,
}

impl Default for Costs {
    fn default() -> Self {
        Costs {
            r#move: 1,
            lift: 2,
            putdown: 2,
            shift: 1,
            coop: 1,
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            heuristic: HeuristicKind::Source,
            weight: 1.0,
            step_penalty: StepPenalty::Auto,
            shift_support: ShiftSupport::Target,
            coop: true,
            costs: Costs::default(),
            goal_robots: false,
            require_support: false,
            require_connected: false,
            prune_symmetric: true,
            max_expansions: 5_000_000,
        }
    }
}

/// A task: initial and goal grids plus options.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// Start.
    pub initial: GridState,
    /// Target arrangement.
    pub goal: GridState,
    /// Options.
    pub options: Options,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskFile {
    initial: String,
    goal: String,
    #[serde(default)]
    options: Options,
}

impl Task {
    /// Builds and checks a task.
    pub fn new(initial: GridState, goal: GridState, options: Options) -> Result<Task, MoleError> {
        let t = Task { initial, goal, options };
        t.validate()?;
        Ok(t)
    }

    /// Refuses inconsistent tasks with a reason.
    pub fn validate(&self) -> Result<(), MoleError> {
        let (i, g) = (&self.initial, &self.goal);
        if (i.rows(), i.cols()) != (g.rows(), g.cols()) {
            return Err(MoleError::InvalidTask(format!(
                "initial is {} × {} but goal is {} × {}",
                i.rows(),
                i.cols(),
                g.rows(),
                g.cols()
            )));
        }
        if i.module_count() != g.module_count() {
            return Err(MoleError::InvalidTask(format!(
                "initial has {} modules, goal has {}",
                i.module_count(),
                g.module_count()
            )));
        }
        if i.robot_count() == 0 {
            return Err(MoleError::InvalidTask("no robot in the initial grid".into()));
        }
        if self.options.goal_robots && i.robot_count() != g.robot_count() {
            return Err(MoleError::InvalidTask(format!(
                "goal_robots: initial has {} robots, goal has {}",
                i.robot_count(),
                g.robot_count()
            )));
        }
        let w = self.options.weight;
        if !(w.is_finite() && w >= 1.0) {
            return Err(MoleError::InvalidTask(format!("options.weight = {w}: expected ≥ 1")));
        }
        let c = &self.options.costs;
        for (key, cost) in [
            ("move", c.r#move),
            ("lift", c.lift),
            ("putdown", c.putdown),
            ("shift", c.shift),
            ("coop", c.coop),
        ] {
            if cost > MAX_ACTION_COST {
                return Err(MoleError::InvalidTask(format!(
                    "options.costs.{key} = {cost}: expected at most {MAX_ACTION_COST}"
                )));
            }
        }
        if self.options.max_expansions == 0 {
            return Err(MoleError::InvalidTask("options.max_expansions = 0".into()));
        }
        Ok(())
    }

    /// Parses a task file: `initial` and `goal` as matrix text, optional `options`.
    pub fn from_yaml(text: &str, origin: &str) -> Result<Task, MoleError> {
        let f: TaskFile = modbot_core::error::yaml_from_str(text).map_err(|e| MoleError::File {
            origin: origin.to_string(),
            message: e.to_string(),
        })?;
        let initial = GridState::parse(&f.initial, "initial")?;
        let goal = GridState::parse(&f.goal, "goal")?;
        Task::new(initial, goal, f.options).map_err(|e| MoleError::File {
            origin: origin.to_string(),
            message: e.to_string(),
        })
    }

    /// Loads a task file.
    pub fn load(path: &Path) -> Result<Task, MoleError> {
        let text = modbot_core::error::read_capped(path).map_err(|e| MoleError::File {
            origin: path.display().to_string(),
            message: e.to_string(),
        })?;
        Self::from_yaml(&text, &path.display().to_string())
    }
}
