//! The deliberative (strategic) layer's plan: ordered sub-goals, each the source's 6-field
//! row {configuration, reference object, lateral offset, longitudinal offset, yaw offset,
//! ability flag} (seed-000 §6.4). This module holds the row types and the source's own
//! template decomposition; the search over (cell, configuration) comes with its issue.

use modbot_core::Scenario;
use modbot_core::scenario::ObstacleKind;
use serde::Serialize;

use crate::grid::PlanError;

/// The source's conf_req code of a configuration name: 1 quadruped, 2 wheeled, 0 others.
pub fn conf_req(configuration: &str) -> u8 {
    match configuration {
        "quadruped" => 1,
        "wheeled" => 2,
        _ => 0,
    }
}

/// What a sub-goal asks the reactive layer to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Position control to the sub-goal with the configuration's gait.
    Drive,
    /// The quadruped's pass-over manoeuvre.
    PassOver,
    /// The wheeled vehicle's low pose, driving under.
    PassUnder,
}

/// One sub-goal: the source's 6-field row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubGoal {
    /// Configuration required (a key of the capability table).
    pub configuration: String,
    /// Name of the reference object (an obstacle, or `target`).
    pub reference: String,
    /// Lateral offset in the reference object's frame, m.
    pub lateral_m: f64,
    /// Longitudinal offset in the reference object's frame, m.
    pub longitudinal_m: f64,
    /// Yaw offset from the object's yaw, deg.
    pub yaw_deg: f64,
    /// Run the configuration's ability (pass over, pass under) instead of position control.
    pub ability: bool,
    /// What to run.
    pub action: Action,
    /// The gait the configuration drives with (from the capability table; empty in the
    /// source mode, which has none).
    pub gait: String,
    /// The path segment to this sub-goal (world x, y), when a search produced it.
    pub path: Vec<[f64; 2]>,
}

/// An ordered list of sub-goals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StrategicPlan {
    /// Rows, executed in order.
    pub rows: Vec<SubGoal>,
}

fn row(c: &str, reference: &str, long: f64, action: Option<Action>) -> SubGoal {
    SubGoal {
        configuration: c.to_string(),
        reference: reference.to_string(),
        lateral_m: 0.0,
        longitudinal_m: long,
        yaw_deg: 0.0,
        ability: action.is_some(),
        action: action.unwrap_or(Action::Drive),
        gait: String::new(),
        path: Vec::new(),
    }
}

/// The source's template decomposition (`strategic_planning`, spec §6.4): per ground
/// obstacle three quadruped rows (approach at −0.1 m, pass over, reposition at +0.5 m), per
/// lath two wheeled rows (approach at −0.3 m, low-pose drive to +0.3 m), obstacles farther
/// from the goal first, then the goal row in the last group's configuration. The source
/// handles exactly one obstacle of each kind; any number is ordered the same way here, and
/// walls and bumps are not part of its template. The printed lath-first table's rows 3–4
/// look like typos (spec §6.4); the ground group is the same whichever comes first.
pub fn source_decomposition(scenario: &Scenario) -> Result<StrategicPlan, PlanError> {
    let goal = scenario
        .goal
        .ok_or_else(|| PlanError::InvalidRequest(format!("scenario `{}` has no goal", scenario.name)))?;
    let mut obstacles: Vec<_> = scenario
        .obstacles
        .iter()
        .filter(|o| matches!(o.kind, ObstacleKind::GroundObstacle | ObstacleKind::Lath))
        .collect();
    let dist = |p: [f64; 2]| ((p[0] - goal[0]).powi(2) + (p[1] - goal[1]).powi(2)).sqrt();
    obstacles.sort_by(|a, b| {
        dist(b.position_m)
            .total_cmp(&dist(a.position_m))
            .then(a.name.cmp(&b.name))
    });
    let mut rows = Vec::new();
    for o in &obstacles {
        match o.kind {
            ObstacleKind::GroundObstacle => {
                rows.push(row("quadruped", &o.name, -0.1, None));
                rows.push(row("quadruped", &o.name, 0.5, Some(Action::PassOver)));
                rows.push(row("quadruped", &o.name, 0.5, None));
            }
            _ => {
                rows.push(row("wheeled", &o.name, -0.3, None));
                rows.push(row("wheeled", &o.name, 0.3, Some(Action::PassUnder)));
            }
        }
    }
    let last = rows
        .last()
        .map(|r| r.configuration.clone())
        .unwrap_or_else(|| "wheeled".into());
    rows.push(row(&last, "target", 0.0, None));
    Ok(StrategicPlan { rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact 6-row plan of spec §6.4 for the source's scene (ground obstacle nearer the
    /// start, then the lath, then the target): our `worlds/obstacle_course.yaml`.
    #[test]
    fn source_plan_for_its_scene() {
        let text = include_str!("../../../worlds/obstacle_course.yaml");
        let s = Scenario::from_yaml(text, "obstacle_course.yaml").unwrap();
        let p = source_decomposition(&s).unwrap();
        let want: [(u8, &str, f64, f64, f64, bool); 6] = [
            (1, "ground_obstacle", 0.0, -0.1, 0.0, false),
            (1, "ground_obstacle", 0.0, 0.5, 0.0, true),
            (1, "ground_obstacle", 0.0, 0.5, 0.0, false),
            (2, "lath", 0.0, -0.3, 0.0, false),
            (2, "lath", 0.0, 0.3, 0.0, true),
            (2, "target", 0.0, 0.0, 0.0, false),
        ];
        assert_eq!(p.rows.len(), 6);
        for (r, w) in p.rows.iter().zip(want) {
            assert_eq!(
                (
                    conf_req(&r.configuration),
                    r.reference.as_str(),
                    r.lateral_m,
                    r.longitudinal_m,
                    r.yaw_deg,
                    r.ability
                ),
                w
            );
        }
        // Lath nearer the start: the lath group first, the goal row quadruped.
        let swapped = text.replace("position_m: [1.0, 0.0]", "position_m: [2.9, 0.0]");
        let p = source_decomposition(&Scenario::from_yaml(&swapped, "x").unwrap()).unwrap();
        let order: Vec<(u8, bool)> = p.rows.iter().map(|r| (conf_req(&r.configuration), r.ability)).collect();
        assert_eq!(
            order,
            vec![(2, false), (2, true), (1, false), (1, true), (1, false), (1, false)]
        );
        let no_goal = Scenario::from_yaml("name: x\n", "x").unwrap();
        assert!(matches!(
            source_decomposition(&no_goal),
            Err(PlanError::InvalidRequest(_))
        ));
    }
}
