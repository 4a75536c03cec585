//! The deliberative search: the source's scene gives its configurations in its order;
//! scenes where one configuration is the only way through make the planner choose it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use modbot_core::Scenario;
use modbot_planner::capabilities::Capabilities;
use modbot_planner::deliberative::plan;
use modbot_planner::grid::PlanError;
use modbot_planner::strategic::{Action, conf_req, source_decomposition};

const SELF_MOBILE: [&str; 3] = ["single_module", "quadruped", "wheeled"];

fn corridor(obstacle: &str, width: f64) -> Scenario {
    let half = width / 2.0 + 0.025;
    let text = format!(
        "name: t\nrobot_start: {{xyz: [0, 0, 0]}}\ngoal: [3.0, 0.0]\nobstacles:\n{obstacle}  - {{name: wl, kind: wall, position_m: [1.5, {half}], size_m: [4.2, 0.05, 0.3]}}\n  - {{name: wr, kind: wall, position_m: [1.5, -{half}], size_m: [4.2, 0.05, 0.3]}}\n  - {{name: wb, kind: wall, position_m: [-0.6, 0], size_m: [0.05, {w2}, 0.3]}}\n  - {{name: wf, kind: wall, position_m: [3.6, 0], size_m: [0.05, {w2}, 0.3]}}\n",
        w2 = width + 0.2
    );
    Scenario::from_yaml(&text, "t").unwrap()
}

#[test]
fn the_source_scene_gives_the_source_configurations() {
    let text = include_str!("../../../worlds/obstacle_course.yaml");
    let s = Scenario::from_yaml(text, "obstacle_course").unwrap();
    let caps = Capabilities::builtin();
    let p = plan(&s, &caps, &SELF_MOBILE, "single_module", 0.05).unwrap();
    assert_eq!(p.configurations, vec!["single_module", "quadruped", "wheeled"]);
    let searched: Vec<(u8, bool)> = p
        .plan
        .rows
        .iter()
        .map(|r| (conf_req(&r.configuration), r.ability))
        .collect();
    let source: Vec<(u8, bool)> = source_decomposition(&s)
        .unwrap()
        .rows
        .iter()
        .map(|r| (conf_req(&r.configuration), r.ability))
        .collect();
    assert_eq!(searched, source, "{:#?}", p.plan.rows);
    let refs: Vec<&str> = p.plan.rows.iter().map(|r| r.reference.as_str()).collect();
    assert_eq!(
        refs,
        [
            "ground_obstacle",
            "ground_obstacle",
            "ground_obstacle",
            "lath",
            "lath",
            "target"
        ]
    );
    assert_eq!(p.plan.rows[1].action, Action::PassOver);
    assert_eq!(p.plan.rows[4].action, Action::PassUnder);
    // Approach before the obstacle, exit beyond it (obstacle frame, x along the course).
    assert!(p.plan.rows[0].longitudinal_m < 0.0 && p.plan.rows[1].longitudinal_m > 0.0);
    assert!(p.plan.rows[3].longitudinal_m < 0.0 && p.plan.rows[4].longitudinal_m > 0.0);
    assert!(p.time_s > 2.0 * caps.reconfigure_s);
    assert_eq!(p.plan.rows[0].gait, "trot");
    assert_eq!(p.plan.rows[5].gait, "skid_steer");
}

/// Rough ground is passable but slower: the plan takes longer, or goes around.
#[test]
fn rough_ground_slows_the_plan() {
    let caps = Capabilities::builtin();
    let flat = corridor("", 0.6);
    let rough = corridor(
        "  - {name: gravel, kind: rough, position_m: [1.5, 0], size_m: [1.0, 0.6, 0.01]}\n",
        0.6,
    );
    let a = plan(&flat, &caps, &["wheeled"], "wheeled", 0.05).unwrap();
    let b = plan(&rough, &caps, &["wheeled"], "wheeled", 0.05).unwrap();
    // 1 m at 0.4 × 0.15 m/s instead of 0.15 m/s: about 10 s more.
    assert!(b.time_s > a.time_s + 8.0, "{} vs {}", a.time_s, b.time_s);
}

#[test]
fn the_only_way_through_is_chosen() {
    let caps = Capabilities::builtin();
    // A bar that of the assembled configurations only the wheeled low pose passes under
    // (0.112 m tall; the quadruped stands 0.161 m). A lone module (0.077 m) would pass too,
    // so the quadruped and the wheeled vehicle are the choices here.
    let s = corridor(
        "  - {name: bar, kind: lath, position_m: [1.5, 0], size_m: [0.04, 0.6, 0.02], clearance_m: 0.12}\n",
        0.6,
    );
    let p = plan(&s, &caps, &["quadruped", "wheeled"], "quadruped", 0.05).unwrap();
    assert!(
        p.configurations.contains(&"wheeled".to_string()),
        "{:?}",
        p.configurations
    );
    assert!(
        p.plan
            .rows
            .iter()
            .any(|r| r.action == Action::PassUnder && r.reference == "bar")
    );
    // A step only the quadruped climbs.
    let s = corridor(
        "  - {name: step, kind: ground_obstacle, position_m: [1.5, 0], size_m: [0.1, 0.6, 0.05]}\n",
        0.6,
    );
    let p = plan(&s, &caps, &SELF_MOBILE, "single_module", 0.05).unwrap();
    assert!(
        p.plan
            .rows
            .iter()
            .any(|r| r.action == Action::PassOver && r.configuration == "quadruped")
    );
    // A slot only the caterpillar fits (10 cm between walls).
    let slot = "  - {name: sl, kind: wall, position_m: [1.5, 0.175], size_m: [0.4, 0.25, 0.3]}\n  - {name: sr, kind: wall, position_m: [1.5, -0.175], size_m: [0.4, 0.25, 0.3]}\n";
    let s = corridor(slot, 0.6);
    let p = plan(&s, &caps, &["quadruped", "wheeled", "caterpillar"], "wheeled", 0.025).unwrap();
    assert_eq!(p.configurations, vec!["wheeled", "caterpillar"]);
    // Nothing passes a wall across the corridor.
    let s = corridor(
        "  - {name: block, kind: wall, position_m: [1.5, 0], size_m: [0.1, 0.7, 0.3]}\n",
        0.6,
    );
    assert!(matches!(
        plan(&s, &caps, &SELF_MOBILE, "single_module", 0.05),
        Err(PlanError::NoPath { .. })
    ));
    // Bad requests are named.
    let e = plan(&s, &caps, &["hovercraft"], "hovercraft", 0.05)
        .unwrap_err()
        .to_string();
    assert!(e.contains("hovercraft"), "{e}");
}

#[test]
fn capability_files_are_checked() {
    let text = modbot_planner::capabilities::BUILTIN_CAPABILITIES_YAML.replacen("speed_m_s: 0.084", "speed_m_s: -1", 1);
    let e = Capabilities::from_yaml(&text, "caps.yaml").unwrap_err().to_string();
    assert!(e.contains("caps.yaml") && e.contains("quadruped.speed_m_s"), "{e}");
    let e = Capabilities::from_yaml("reconfigure_s: 1\nconfigurations: {}\nwarp: 9\n", "caps.yaml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("warp"), "{e}");
}

#[test]
fn a_goal_off_the_ground_is_out_of_bounds() {
    let mut s = Scenario::from_yaml(include_str!("../../../worlds/flat.yaml"), "flat").unwrap();
    s.goal = Some([500.0, 0.0]);
    let e = plan(&s, &Capabilities::builtin(), &["snake"], "snake", 0.05).unwrap_err();
    assert!(matches!(e, PlanError::OutOfBounds { .. }), "{e}");
}
