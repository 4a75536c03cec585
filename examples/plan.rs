//! Grid A* on a Moving AI benchmark map, then the deliberative planner on the obstacle course.
//!
//! `cargo run -p modbot --example plan [SCENARIO_INDEX]`
//!
//! Plans scenario SCENARIO_INDEX (default 0, the first line) of the shipped
//! `random-32-32-20.map.scen` on its map, 8-connected with octile costs and no corner
//! cutting (what `modbot plan --map … --scen …` runs for every line), prints the cost next
//! to the published optimal length and draws the path. Then it plans the strategic thesis's
//! `worlds/obstacle_course.yaml` with the deliberative search (`modbot plan SCENARIO`).

use std::path::Path;

use anyhow::{Context, Result};
use modbot_planner::capabilities::Capabilities;
use modbot_planner::deliberative;
use modbot_planner::grid::{AStar, Connectivity, GridMap, check_scen, parse_scen};

/// The Moving AI map and its scenarios, shipped with modbot_planner's tests.
const MAP: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../modbot_planner/tests/data/random-32-32-20.map"
);
const SCEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../modbot_planner/tests/data/random-32-32-20.map.scen"
);
/// The strategic thesis's test scene: a ground obstacle, a lath, a target.
const SCENE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../worlds/obstacle_course.yaml");

fn main() -> Result<()> {
    let index: usize = match std::env::args().nth(1) {
        Some(a) => a.parse().with_context(|| format!("`{a}` is not a scenario index"))?,
        None => 0,
    };
    let map = GridMap::load_movingai(Path::new(MAP))?;
    let text = std::fs::read_to_string(SCEN).with_context(|| format!("reading {SCEN}"))?;
    let scen = parse_scen(&text, SCEN)?;
    check_scen(&scen, &map, SCEN)?;
    let s = scen
        .get(index)
        .with_context(|| format!("scenario {index}: the file has {}", scen.len()))?;

    let mut planner = AStar::new();
    let path = planner.plan(&map, s.start, s.goal, Connectivity::Eight, 0, &|| false)?;
    println!("map {} × {}, {} scenarios", map.width, map.height, scen.len());
    println!("scenario {index}: {:?} → {:?}", s.start, s.goal);
    println!("A* cost: {:.6}", path.cost);
    println!("published optimal: {:.6}", s.optimal);
    println!("path: {} cells, {} cells expanded", path.cells.len(), path.expansions);
    for y in 0..map.height {
        let line: String = (0..map.width)
            .map(|x| match (x, y) {
                c if c == s.start => 'S',
                c if c == s.goal => 'G',
                c if path.cells.contains(&c) => '*',
                _ if map.passable(x as i64, y as i64) => '.',
                _ => '@',
            })
            .collect();
        println!("  {line}");
    }

    // The deliberative search: configurations and sub-goals for a self-mobile robot.
    let scene = modbot_core::Scenario::load(Path::new(SCENE))?;
    let caps = Capabilities::builtin();
    let available = ["single_module", "quadruped", "wheeled"];
    let p = deliberative::plan(&scene, &caps, &available, "single_module", 0.05)?;
    println!(
        "deliberative plan of `{}`: {} ({:.0} s estimated, {} cells expanded)",
        scene.name,
        p.configurations.join(" → "),
        p.time_s,
        p.expansions
    );
    for (i, r) in p.plan.rows.iter().enumerate() {
        println!(
            "  {}. {} to {} {:+.2} m: {:?}",
            i + 1,
            r.configuration,
            r.reference,
            r.longitudinal_m,
            r.action
        );
    }
    Ok(())
}
