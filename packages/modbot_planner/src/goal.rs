//! Planning to a goal as `planner_node` does it (decision record 0016): with a scenario,
//! the deliberative planner (or the source's template) gives sub-goal rows with their
//! targets resolved and a path through them; with only a grid map, grid A* gives a path of
//! cell centres. Failures are typed ([`GoalError`]). The node converts maps and goals from
//! messages, and the [`Route`] back into messages.

use modbot_core::Scenario;

use crate::capabilities::Capabilities;
use crate::grid::{AStar, Connectivity, GridMap, PlanError};
use crate::sequencer::{Pose2, Sequencer, SequencerSettings, references};
use crate::strategic::{self, StrategicPlan};

/// Which strategic planner runs on a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Time-optimal search over (cell, configuration) (`deliberative::plan`).
    Search,
    /// The source's template decomposition (`strategic::source_decomposition`).
    Source,
}

impl Mode {
    /// `search` or `source`.
    pub fn parse(s: &str) -> Option<Mode> {
        match s {
            "search" => Some(Mode::Search),
            "source" => Some(Mode::Source),
            _ => None,
        }
    }
}

/// Why no route came out.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GoalError {
    /// Neither a scenario nor a grid map to plan on.
    #[error("no map received and no scenario set: nothing to plan on")]
    NoMap,
    /// A grid plan needs a start and none is known.
    #[error("no start: no odometry received yet and no start given")]
    NoStart,
    /// The planner's own failure (`OutOfBounds`, `NoPath`, `InvalidRequest`, ...).
    #[error(transparent)]
    Plan(#[from] PlanError),
}

/// How goals are planned.
#[derive(Debug, Clone, PartialEq)]
pub struct GoalSettings {
    /// Strategic planner on a scenario.
    pub mode: Mode,
    /// Configurations available to the strategic planner.
    pub available: Vec<String>,
    /// Configuration at the start.
    pub start_configuration: String,
    /// Cell size of the strategic search, m.
    pub resolution_m: f64,
    /// Radius grid maps are inflated by, m (0: none).
    pub inflation_radius_m: f64,
    /// Grid A* connectivity.
    pub connectivity: Connectivity,
}

impl GoalSettings {
    /// Checks the configurations against the table: each available one and the start
    /// configuration must be in it, and the start one must be available.
    pub fn validate(&self, caps: &Capabilities) -> Result<(), PlanError> {
        for a in self.available.iter().chain([&self.start_configuration]) {
            caps.get(a)?;
        }
        if !self.available.contains(&self.start_configuration) {
            return Err(PlanError::InvalidRequest(format!(
                "start_configuration `{}` is not in `available`",
                self.start_configuration
            )));
        }
        Ok(())
    }
}

/// One planned row: the sub-goal and its resolved target pose.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedRow {
    /// The source's row (configuration, reference, offsets, ability, action, gait, path).
    pub subgoal: strategic::SubGoal,
    /// Reference pose + offsets.
    pub target: Pose2,
}

/// A plan to a goal.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    /// Poses from the start through every row's path segment (or its target), or through
    /// the grid path's cell centres.
    pub path: Vec<Pose2>,
    /// Sub-goal rows (empty for a grid route).
    pub rows: Vec<PlannedRow>,
    /// Estimated time, s (0 when unknown).
    pub estimated_time_s: f64,
}

/// Plans to goals on a scenario or a grid map, remembering the last known start.
#[derive(Debug)]
pub struct GoalPlanner {
    settings: GoalSettings,
    caps: Capabilities,
    scenario: Option<Scenario>,
    map: Option<GridMap>,
    astar: AStar,
    start: Option<[f64; 2]>,
}

fn pose(p: [f64; 2]) -> Pose2 {
    Pose2 {
        x: p[0],
        y: p[1],
        yaw: 0.0,
    }
}

impl GoalPlanner {
    /// A planner; `scenario` makes it strategic. The settings are validated against `caps`.
    pub fn new(
        settings: GoalSettings,
        caps: Capabilities,
        scenario: Option<Scenario>,
    ) -> Result<GoalPlanner, PlanError> {
        settings.validate(&caps)?;
        Ok(GoalPlanner {
            settings,
            caps,
            scenario,
            map: None,
            astar: AStar::new(),
            start: None,
        })
    }

    /// Whether goals are planned on a scenario (rows) rather than a grid map.
    pub fn is_strategic(&self) -> bool {
        self.scenario.is_some()
    }

    /// Takes a grid map (inflated by the settings' radius), replacing the previous one.
    pub fn set_map(&mut self, map: GridMap) {
        let r = self.settings.inflation_radius_m;
        self.map = Some(if r > 0.0 { map.inflated(r) } else { map });
    }

    /// The grid map in use.
    pub fn map(&self) -> Option<&GridMap> {
        self.map.as_ref()
    }

    /// Records where the robot is (the default start); a non-finite position is ignored
    /// (returns false).
    pub fn set_start(&mut self, p: [f64; 2]) -> bool {
        let ok = p.iter().all(|v| v.is_finite());
        if ok {
            self.start = Some(p);
        }
        ok
    }

    /// The last recorded start.
    pub fn start(&self) -> Option<[f64; 2]> {
        self.start
    }

    /// Plans from `start` (default: the last recorded one, else the scenario's start) to
    /// `goal`.
    pub fn plan(&mut self, start: Option<[f64; 2]>, goal: [f64; 2]) -> Result<Route, GoalError> {
        if !goal.iter().all(|v| v.is_finite()) {
            return Err(PlanError::InvalidRequest(format!("goal {goal:?} is not finite")).into());
        }
        if start.is_some_and(|s| !s.iter().all(|v| v.is_finite())) {
            return Err(PlanError::InvalidRequest(format!("start {start:?} is not finite")).into());
        }
        let start = start.or(self.start);
        if let Some(sc) = &self.scenario {
            let mut sc = sc.clone();
            sc.goal = Some(goal);
            if let Some(s) = start {
                sc.robot_start.xyz[0] = s[0];
                sc.robot_start.xyz[1] = s[1];
            }
            return Ok(self.strategic(&sc, goal)?);
        }
        let map = self.map.as_ref().ok_or(GoalError::NoMap)?;
        let start = start.ok_or(GoalError::NoStart)?;
        let p = self.astar.plan(
            map,
            map.cell_at(start)?,
            map.cell_at(goal)?,
            self.settings.connectivity,
            0,
            &|| false,
        )?;
        Ok(Route {
            path: p.cells.iter().map(|&c| pose(map.cell_center(c))).collect(),
            rows: Vec::new(),
            estimated_time_s: 0.0,
        })
    }

    fn strategic(&self, sc: &Scenario, goal: [f64; 2]) -> Result<Route, PlanError> {
        let (plan, time): (StrategicPlan, f64) = match self.settings.mode {
            Mode::Source => (strategic::source_decomposition(sc)?, 0.0),
            Mode::Search => {
                let available: Vec<&str> = self.settings.available.iter().map(String::as_str).collect();
                let p = crate::deliberative::plan(
                    sc,
                    &self.caps,
                    &available,
                    &self.settings.start_configuration,
                    self.settings.resolution_m,
                )?;
                (p.plan, p.time_s)
            }
        };
        let seq = Sequencer::new(plan.clone(), references(sc), SequencerSettings::default());
        let mut path = vec![pose([sc.robot_start.xyz[0], sc.robot_start.xyz[1]])];
        let mut rows = Vec::with_capacity(plan.rows.len());
        for (i, r) in plan.rows.into_iter().enumerate() {
            let target = seq.target(i).unwrap_or(pose(goal));
            if r.path.is_empty() {
                path.push(target);
            } else {
                path.extend(r.path.iter().map(|p| pose(*p)));
            }
            rows.push(PlannedRow { subgoal: r, target });
        }
        Ok(Route {
            path,
            rows,
            estimated_time_s: time,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategic::Action;

    fn settings(available: &[&str], start: &str, mode: Mode) -> GoalSettings {
        GoalSettings {
            mode,
            available: available.iter().map(|s| (*s).to_string()).collect(),
            start_configuration: start.into(),
            resolution_m: 0.05,
            inflation_radius_m: 0.0,
            connectivity: Connectivity::Eight,
        }
    }

    fn obstacle_course() -> Scenario {
        Scenario::from_yaml(
            include_str!("../../../worlds/obstacle_course.yaml"),
            "obstacle_course.yaml",
        )
        .expect("scenario")
    }

    #[test]
    fn the_source_scene_gives_its_configurations_in_order() {
        let sc = obstacle_course();
        let goal = sc.goal.expect("goal");
        let all = ["single_module", "quadruped", "wheeled"];
        let mut p = GoalPlanner::new(
            settings(&all, "single_module", Mode::Search),
            Capabilities::builtin(),
            Some(sc.clone()),
        )
        .expect("planner");
        assert!(p.is_strategic());
        let r = p.plan(None, goal).expect("plan");
        let mut order: Vec<&str> = Vec::new();
        for c in r.rows.iter().map(|r| r.subgoal.configuration.as_str()) {
            if order.last() != Some(&c) {
                order.push(c);
            }
        }
        // The robot starts as a single module and reassembles before the first row.
        assert_eq!(order, ["quadruped", "wheeled"]);
        for a in [Action::PassOver, Action::PassUnder] {
            assert!(r.rows.iter().any(|r| r.subgoal.action == a), "{a:?}");
        }
        assert!(r.path.len() > r.rows.len());
        assert!(r.estimated_time_s > 0.0);
        let last = r.rows.last().expect("rows").target;
        assert!(
            (last.x - goal[0]).hypot(last.y - goal[1]) < 1e-9,
            "the last row is the goal"
        );
        // The source's own template, by setting.
        let mut p = GoalPlanner::new(
            settings(&all, "single_module", Mode::Source),
            Capabilities::builtin(),
            Some(sc),
        )
        .expect("planner");
        let r = p.plan(None, goal).expect("plan");
        assert_eq!(r.rows.len(), 6);
        assert_eq!(r.estimated_time_s, 0.0);
    }

    #[test]
    fn grid_routes_go_through_cell_centres_and_failures_are_typed() {
        let mut p = GoalPlanner::new(
            settings(&["snake"], "snake", Mode::Search),
            Capabilities::builtin(),
            None,
        )
        .expect("p");
        assert_eq!(p.plan(Some([0.0, 0.0]), [1.0, 1.0]), Err(GoalError::NoMap));
        // 10 × 10 cells of 0.1 m at (−0.5, −0.5), a wall at column 5 with a gap in row 9.
        let mut data = vec![0i8; 100];
        for y in 0..9 {
            data[y * 10 + 5] = 100;
        }
        let map = |d: &[i8]| GridMap::from_occupancy(10, 10, 0.1, [-0.5, -0.5], d, 65).expect("map");
        p.set_map(map(&data));
        assert_eq!(p.plan(None, [0.45, -0.45]), Err(GoalError::NoStart));
        assert!(!p.set_start([f64::NAN, 0.0]));
        assert!(p.set_start([-0.45, -0.45]));
        let r = p.plan(None, [0.45, -0.45]).expect("route");
        assert!(r.rows.is_empty());
        assert!(r.path.iter().any(|q| q.y > 0.35), "through the gap");
        let first = r.path[0];
        assert!(
            (first.x + 0.45).abs() < 1e-9 && (first.y + 0.45).abs() < 1e-9,
            "{first:?}"
        );
        assert!(matches!(
            p.plan(None, [5.0, 5.0]),
            Err(GoalError::Plan(PlanError::OutOfBounds { .. }))
        ));
        assert!(matches!(
            p.plan(None, [f64::NAN, 0.0]),
            Err(GoalError::Plan(PlanError::InvalidRequest(_)))
        ));
        data[95] = 100;
        p.set_map(map(&data));
        assert!(matches!(
            p.plan(None, [0.45, -0.45]),
            Err(GoalError::Plan(PlanError::NoPath { .. }))
        ));
        // Inflation closes a one-cell gap.
        let mut s = settings(&["snake"], "snake", Mode::Search);
        s.inflation_radius_m = 0.1;
        let mut p = GoalPlanner::new(s, Capabilities::builtin(), None).expect("p");
        data[95] = 0;
        p.set_map(map(&data));
        assert!(matches!(
            p.plan(Some([-0.45, -0.45]), [0.45, -0.45]),
            Err(GoalError::Plan(PlanError::NoPath { .. }))
        ));
    }

    #[test]
    fn bad_settings_are_named() {
        let caps = Capabilities::builtin();
        let e = settings(&["hovercraft"], "hovercraft", Mode::Search)
            .validate(&caps)
            .expect_err("unknown");
        assert!(e.to_string().contains("hovercraft"), "{e}");
        let e = settings(&["snake"], "quadruped", Mode::Search)
            .validate(&caps)
            .expect_err("not available");
        assert!(e.to_string().contains("start_configuration"), "{e}");
        assert_eq!(Mode::parse("source"), Some(Mode::Source));
        assert_eq!(Mode::parse("guess"), None);
    }
}
