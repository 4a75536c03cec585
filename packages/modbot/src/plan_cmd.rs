//! `modbot plan --map FILE.map --scen FILE.scen`: every scenario of a Moving AI file, as CSV.
//! `modbot bench astar`: our A* against the `pathfinding` crate's on the same grids.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use modbot_planner::grid::{AStar, Connectivity, GridMap, Occupancy, PlanError, check_scen, parse_scen};

use crate::common::{BadInput, emit};

#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// Scenario YAML for a strategic plan.
    pub scenario: Option<PathBuf>,
    /// Goal x,y in m (default: the scenario's).
    #[arg(long, value_parser = parse_xy)]
    pub goal: Option<[f64; 2]>,
    /// Configurations available, comma separated.
    #[arg(long, default_value = "single_module,quadruped,wheeled")]
    pub available: String,
    /// Configuration at the start.
    #[arg(long, default_value = "single_module")]
    pub start: String,
    /// Capability table (default: the shipped config/capabilities.yaml).
    #[arg(long)]
    pub capabilities: Option<PathBuf>,
    /// Use the source's template decomposition instead of the search.
    #[arg(long)]
    pub source_mode: bool,
    /// Grid cell size for the search, m.
    #[arg(long, default_value_t = 0.05, value_parser = crate::common::positive)]
    pub resolution: f64,
    /// Write a PNG of the terrain, path and sub-goals (search mode).
    #[arg(long, value_name = "FILE")]
    pub png: Option<PathBuf>,
    /// Moving AI map (.map).
    #[arg(long, requires = "scen")]
    pub map: Option<PathBuf>,
    /// Moving AI scenarios (.scen).
    #[arg(long, requires = "map")]
    pub scen: Option<PathBuf>,
    /// 4-connected moves (default: 8-connected, octile, no corner cutting).
    #[arg(long)]
    pub four: bool,
}

fn parse_xy(s: &str) -> Result<[f64; 2], String> {
    let (x, y) = s.split_once(',').ok_or_else(|| format!("`{s}`: expected x,y"))?;
    let p = |v: &str| {
        v.trim()
            .parse::<f64>()
            .map_err(|_| format!("`{s}`: `{v}` is not a number"))
    };
    Ok([p(x)?, p(y)?])
}

pub fn run(args: &PlanArgs) -> Result<()> {
    match (&args.map, &args.scen, &args.scenario) {
        (Some(map), Some(scen), None) => movingai(map, scen, args.four),
        (None, None, Some(scenario)) => strategic(args, scenario),
        _ => Err(BadInput("give a scenario YAML, or --map FILE.map --scen FILE.scen".into()).into()),
    }
}

fn strategic(args: &PlanArgs, path: &std::path::Path) -> Result<()> {
    use modbot_planner::capabilities::load_or_builtin;
    use modbot_planner::strategic::conf_req;
    let mut scenario = modbot_core::Scenario::load(path)?;
    if let Some(g) = args.goal {
        scenario.goal = Some(g);
    }
    let caps = load_or_builtin(args.capabilities.as_ref())?;
    let available: Vec<&str> = args
        .available
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let (rows, summary) = if args.source_mode {
        let p = modbot_planner::strategic::source_decomposition(&scenario)?;
        (p.rows, "source template decomposition".to_string())
    } else {
        let p = modbot_planner::deliberative::plan(&scenario, &caps, &available, &args.start, args.resolution)?;
        if let Some(png) = &args.png {
            let map = modbot_planner::deliberative::TerrainMap::from_scenario(&scenario, args.resolution)?;
            let title = format!("{}: {}", scenario.name, p.configurations.join(" → "));
            crate::plot::strategic_plot(png, &title, &map, &p.plan.rows)?;
            eprintln!("wrote {}", png.display());
        }
        let summary = format!(
            "search: {:.0} s estimated, configurations {}, {} states expanded",
            p.time_s,
            p.configurations.join(" → "),
            p.expansions
        );
        (p.plan.rows, summary)
    };
    let mut out = format!(
        "{summary}
row,conf_req,configuration,reference,lateral_m,longitudinal_m,yaw_deg,ability,action
"
    );
    for (i, r) in rows.iter().enumerate() {
        let _ = writeln!(
            out,
            "{},{},{},{},{:.3},{:.3},{},{},{:?}",
            i + 1,
            conf_req(&r.configuration),
            r.configuration,
            r.reference,
            r.lateral_m,
            r.longitudinal_m,
            r.yaw_deg,
            u8::from(r.ability),
            r.action
        );
    }
    emit(out)
}

fn movingai(map_path: &std::path::Path, scen_path: &std::path::Path, four: bool) -> Result<()> {
    let map = GridMap::load_movingai(map_path).map_err(|e| BadInput(e.to_string()))?;
    let text =
        modbot_core::error::read_capped(scen_path).map_err(|e| BadInput(format!("{}: {e}", scen_path.display())))?;
    let origin = scen_path.display().to_string();
    let scen = parse_scen(&text, &origin).map_err(|e| BadInput(e.to_string()))?;
    check_scen(&scen, &map, &origin).map_err(|e| BadInput(e.to_string()))?;
    let conn = if four { Connectivity::Four } else { Connectivity::Eight };
    let mut planner = AStar::new();
    let mut out = String::from("index,cost,expansions,micros\n");
    for (i, s) in scen.iter().enumerate() {
        let t = Instant::now();
        let r = planner.plan(&map, s.start, s.goal, conn, 0, &|| false);
        let micros = t.elapsed().as_micros();
        match r {
            Ok(p) => {
                let _ = writeln!(out, "{i},{},{},{micros}", p.cost, p.expansions);
            }
            Err(PlanError::NoPath { expansions }) => {
                let _ = writeln!(out, "{i},nan,{expansions},{micros}");
            }
            Err(e) => {
                let _ = writeln!(out, "{i},nan,0,{micros}");
                eprintln!("scenario {i}: {e}");
            }
        }
    }
    emit(out)
}

fn random_map(n: usize, seed: u64) -> GridMap {
    let mut m = GridMap::new(n, n, 1.0);
    let mut x = seed | 1;
    for y in 0..n {
        for c in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x % 5 == 0 {
                m.set(c, y, Occupancy::Occupied);
            }
        }
    }
    m
}

/// The `pathfinding` crate's A* with the same moves and costs (integer-scaled √2 is not
/// exact, so costs are f64 through ordered wrappers).
fn pathfinding_astar(map: &GridMap, s: (usize, usize), g: (usize, usize)) -> Option<f64> {
    use pathfinding::prelude::astar;
    const SCALE: f64 = 1e9;
    let succ = |&(x, y): &(usize, usize)| {
        let mut v = Vec::with_capacity(8);
        for dx in -1i64..=1 {
            for dy in -1i64..=1 {
                if dx == 0 && dy == 0 {
                    continue;
                }
                let (nx, ny) = (x as i64 + dx, y as i64 + dy);
                if !map.passable(nx, ny) {
                    continue;
                }
                if dx != 0
                    && dy != 0
                    && !(map.passable(x as i64 + dx, y as i64) && map.passable(x as i64, y as i64 + dy))
                {
                    continue;
                }
                let c = if dx != 0 && dy != 0 {
                    std::f64::consts::SQRT_2
                } else {
                    1.0
                };
                v.push(((nx as usize, ny as usize), (c * SCALE).round() as u64));
            }
        }
        v
    };
    let h = |&(x, y): &(usize, usize)| {
        let dx = (x as f64 - g.0 as f64).abs();
        let dy = (y as f64 - g.1 as f64).abs();
        ((dx.max(dy) + (std::f64::consts::SQRT_2 - 1.0) * dx.min(dy)) * SCALE).floor() as u64
    };
    astar(&s, succ, h, |p| *p == g).map(|(_, c)| c as f64 / SCALE)
}

pub fn bench(queries: usize, sizes: &[usize]) -> Result<()> {
    let mut out = String::from("map,queries,modbot_ms,pathfinding_ms,speedup,max_cost_diff\n");
    for &n in sizes {
        let map = random_map(n, 0x9e37_79b9_7f4a_7c15 ^ n as u64);
        let mut rng = 0x2545_f491_4f6c_dd1du64 ^ n as u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut pairs = Vec::new();
        while pairs.len() < queries {
            let (a, b) = (next() as usize % (n * n), next() as usize % (n * n));
            let (s, g) = ((a % n, a / n), (b % n, b / n));
            if map.passable(s.0 as i64, s.1 as i64) && map.passable(g.0 as i64, g.1 as i64) {
                pairs.push((s, g));
            }
        }
        let mut planner = AStar::new();
        let t = Instant::now();
        let ours: Vec<Option<f64>> = pairs
            .iter()
            .map(|&(s, g)| {
                planner
                    .plan(&map, s, g, Connectivity::Eight, 0, &|| false)
                    .ok()
                    .map(|p| p.cost)
            })
            .collect();
        let ours_ms = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        let theirs: Vec<Option<f64>> = pairs.iter().map(|&(s, g)| pathfinding_astar(&map, s, g)).collect();
        let theirs_ms = t.elapsed().as_secs_f64() * 1e3;
        let mut diff: f64 = 0.0;
        for (a, b) in ours.iter().zip(&theirs) {
            match (a, b) {
                (Some(a), Some(b)) => diff = diff.max((a - b).abs()),
                (None, None) => {}
                _ => diff = f64::INFINITY,
            }
        }
        let _ = writeln!(
            out,
            "random-{n}-{n}-20,{queries},{ours_ms:.1},{theirs_ms:.1},{:.2},{diff:.2e}",
            theirs_ms / ours_ms
        );
    }
    emit(out)
}
