//! The deliberative planner with real search: a time-optimal path over (cell, configuration)
//! states on the scenario's terrain, with reconfiguration edges and ability edges, turned
//! into the source's sub-goal rows (decision record 0014).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap};

use modbot_core::Scenario;
use modbot_core::scenario::ObstacleKind;
use serde::Serialize;

use crate::capabilities::{Capabilities, Capability};
use crate::grid::PlanError;
use crate::strategic::{Action, StrategicPlan, SubGoal};

/// Terrain of one cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Terrain {
    /// Impassable.
    pub wall: bool,
    /// Height of a ground obstacle or bump here, m.
    pub step_m: f64,
    /// Clearance under a lath here, m (infinite without one).
    pub clearance_m: f64,
    /// Index of the named obstacle here.
    pub obstacle: Option<usize>,
    /// Rough ground: passable at the configuration's rough-ground factor.
    pub rough: bool,
}

/// The scenario rasterised.
#[derive(Debug, Clone)]
pub struct TerrainMap {
    /// Cell size, m.
    pub resolution: f64,
    /// World (x, y) of cell (0, 0)'s centre.
    pub origin: [f64; 2],
    /// Columns.
    pub nx: usize,
    /// Rows.
    pub ny: usize,
    /// Cells, row-major.
    pub cells: Vec<Terrain>,
    /// Distance from each cell centre to the nearest wall cell centre, m.
    pub wall_distance: Vec<f64>,
    /// Obstacles by index: name, centre, yaw (rad).
    pub obstacles: Vec<(String, [f64; 2], f64)>,
}

impl TerrainMap {
    /// Rasterises a scenario's obstacles (walls, ground obstacles, bumps, laths and their
    /// posts, maze pieces) covering the start and the goal with a margin.
    pub fn from_scenario(s: &Scenario, resolution: f64) -> Result<TerrainMap, PlanError> {
        if !(resolution.is_finite() && resolution > 0.0) {
            return Err(PlanError::InvalidRequest(format!("resolution {resolution}")));
        }
        let boxes = s.boxes().map_err(|e| PlanError::InvalidRequest(e.to_string()))?;
        let goal = s
            .goal
            .ok_or_else(|| PlanError::InvalidRequest(format!("scenario `{}` has no goal", s.name)))?;
        let start = [s.robot_start.xyz[0], s.robot_start.xyz[1]];
        // Start and goal must be on the ground plane (centred on the origin, as the SDF
        // world places it); the error is in cells of the ground at this resolution.
        let half = [s.ground.size_m[0] / 2.0, s.ground.size_m[1] / 2.0];
        for p in [start, goal] {
            if !(p[0].abs() <= half[0] && p[1].abs() <= half[1]) {
                return Err(PlanError::OutOfBounds {
                    x: ((p[0] + half[0]) / resolution).floor() as i64,
                    y: ((p[1] + half[1]) / resolution).floor() as i64,
                    width: (s.ground.size_m[0] / resolution).ceil() as usize,
                    height: (s.ground.size_m[1] / resolution).ceil() as usize,
                });
            }
        }
        let (mut lo, mut hi) = (
            [start[0].min(goal[0]), start[1].min(goal[1])],
            [start[0].max(goal[0]), start[1].max(goal[1])],
        );
        for b in &boxes {
            let r = 0.5 * (b.size[0].hypot(b.size[1]));
            lo = [lo[0].min(b.center[0] - r), lo[1].min(b.center[1] - r)];
            hi = [hi[0].max(b.center[0] + r), hi[1].max(b.center[1] + r)];
        }
        let margin = 0.5;
        let origin = [lo[0] - margin, lo[1] - margin];
        // Sizes compared as f64 before any cast: a resolution of 1e-300 must not wrap.
        let fx = ((hi[0] - lo[0] + 2.0 * margin) / resolution).ceil() + 1.0;
        let fy = ((hi[1] - lo[1] + 2.0 * margin) / resolution).ceil() + 1.0;
        if !(fx.is_finite() && fy.is_finite() && fx * fy <= 4_000_000.0) {
            return Err(PlanError::InvalidRequest(format!(
                "{fx:.0} × {fy:.0} cells: use a coarser resolution"
            )));
        }
        let (nx, ny) = (fx as usize, fy as usize);
        let mut obstacles: Vec<(String, [f64; 2], f64)> = Vec::new();
        let mut index = BTreeMap::new();
        for o in &s.obstacles {
            index.insert(o.name.clone(), obstacles.len());
            obstacles.push((o.name.clone(), o.position_m, o.yaw_deg.to_radians()));
        }
        let mut cells = vec![
            Terrain {
                wall: false,
                step_m: 0.0,
                clearance_m: f64::INFINITY,
                obstacle: None,
                rough: false,
            };
            nx * ny
        ];
        for b in &boxes {
            let (c, sn) = (b.yaw.cos(), b.yaw.sin());
            let base = b.name.strip_suffix("_bar").unwrap_or(&b.name);
            let owner = index.get(base).copied();
            for j in 0..ny {
                for i in 0..nx {
                    let p = [origin[0] + i as f64 * resolution, origin[1] + j as f64 * resolution];
                    let d = [p[0] - b.center[0], p[1] - b.center[1]];
                    let (lx, ly) = (c * d[0] + sn * d[1], -sn * d[0] + c * d[1]);
                    // Conservative: a cell counts as covered when the box reaches into it, so no
                    // gap narrower than a cell opens between obstacles and walls.
                    let half = resolution / 2.0;
                    if lx.abs() > b.size[0] / 2.0 + half || ly.abs() > b.size[1] / 2.0 + half {
                        continue;
                    }
                    let cell = &mut cells[j * nx + i];
                    match b.kind {
                        ObstacleKind::Wall => cell.wall = true,
                        ObstacleKind::GroundObstacle | ObstacleKind::Bump => {
                            cell.step_m = cell.step_m.max(b.size[2]);
                            cell.obstacle = owner.or(cell.obstacle);
                        }
                        ObstacleKind::Lath if b.name.ends_with("_bar") => {
                            cell.clearance_m = cell.clearance_m.min(b.center[2] - b.size[2] / 2.0);
                            cell.obstacle = owner.or(cell.obstacle);
                        }
                        ObstacleKind::Lath => cell.wall = true, // a post
                        ObstacleKind::Rough => cell.rough = true,
                    }
                }
            }
        }
        let wall_distance = distance_transform(&cells, nx, ny, resolution);
        Ok(TerrainMap {
            resolution,
            origin,
            nx,
            ny,
            cells,
            wall_distance,
            obstacles,
        })
    }

    /// The cell holding world point p.
    pub fn cell_of(&self, p: [f64; 2]) -> Option<usize> {
        let i = ((p[0] - self.origin[0]) / self.resolution).round();
        let j = ((p[1] - self.origin[1]) / self.resolution).round();
        (i >= 0.0 && j >= 0.0 && (i as usize) < self.nx && (j as usize) < self.ny)
            .then(|| j as usize * self.nx + i as usize)
    }

    /// World centre of a cell.
    pub fn point(&self, cell: usize) -> [f64; 2] {
        [
            self.origin[0] + (cell % self.nx) as f64 * self.resolution,
            self.origin[1] + (cell / self.nx) as f64 * self.resolution,
        ]
    }
}

/// Chamfer distance (1, √2) from every cell to the nearest wall, m.
fn distance_transform(cells: &[Terrain], nx: usize, ny: usize, res: f64) -> Vec<f64> {
    let mut d: Vec<f64> = cells.iter().map(|c| if c.wall { 0.0 } else { f64::INFINITY }).collect();
    let s2 = std::f64::consts::SQRT_2;
    for _ in 0..2 {
        for j in 0..ny {
            for i in 0..nx {
                let k = j * nx + i;
                let mut v = d[k];
                if i > 0 {
                    v = v.min(d[k - 1] + 1.0)
                }
                if j > 0 {
                    v = v.min(d[k - nx] + 1.0)
                }
                if i > 0 && j > 0 {
                    v = v.min(d[k - nx - 1] + s2)
                }
                if i + 1 < nx && j > 0 {
                    v = v.min(d[k - nx + 1] + s2)
                }
                d[k] = v;
            }
        }
        for j in (0..ny).rev() {
            for i in (0..nx).rev() {
                let k = j * nx + i;
                let mut v = d[k];
                if i + 1 < nx {
                    v = v.min(d[k + 1] + 1.0)
                }
                if j + 1 < ny {
                    v = v.min(d[k + nx] + 1.0)
                }
                if i + 1 < nx && j + 1 < ny {
                    v = v.min(d[k + nx + 1] + s2)
                }
                if i > 0 && j + 1 < ny {
                    v = v.min(d[k + nx - 1] + s2)
                }
                d[k] = v;
            }
        }
    }
    d.into_iter().map(|v| v * res).collect()
}

/// How a configuration crosses a cell: normally, with an ability, or not at all.
fn crossing(t: &Terrain, wall_distance: f64, k: &Capability) -> Option<(Action, f64)> {
    if t.wall || wall_distance + 1e-9 < k.width_m / 2.0 {
        return None;
    }
    if t.step_m <= k.max_step_m && t.clearance_m >= k.height_m {
        let factor = if t.rough { k.rough_speed_factor } else { 1.0 };
        return Some((Action::Drive, k.speed_m_s * factor));
    }
    if let Some(p) = k.pass_over
        && t.step_m <= p.max_height_m
        && t.clearance_m >= k.height_m
    {
        return Some((Action::PassOver, p.speed_m_s));
    }
    if let Some(p) = k.pass_under
        && t.step_m <= k.max_step_m
        && t.clearance_m >= p.height_m
    {
        return Some((Action::PassUnder, p.speed_m_s));
    }
    None
}

/// A searched plan.
#[derive(Debug, Clone, Serialize)]
pub struct SearchedPlan {
    /// The sub-goal rows.
    pub plan: StrategicPlan,
    /// Estimated time, s.
    pub time_s: f64,
    /// Configurations used, in order (reconfigurations in between).
    pub configurations: Vec<String>,
    /// Cells expanded.
    pub expansions: u64,
}

#[derive(PartialEq)]
struct Item(f64, usize);
impl Eq for Item {}
impl Ord for Item {
    fn cmp(&self, o: &Self) -> Ordering {
        o.0.total_cmp(&self.0).then(o.1.cmp(&self.1))
    }
}
impl PartialOrd for Item {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// The search's result: the states from start to goal (`cell * configurations + k`), the
/// time, how each state was entered, and the states expanded.
struct Searched {
    trail: Vec<usize>,
    time_s: f64,
    how: Vec<Action>,
    expansions: u64,
}

/// Dijkstra over (cell, configuration): a step to one of the 8 neighbours in the same
/// configuration at that configuration's speed there, or a reconfiguration in place
/// (`reconfigure_s`) where the new one can drive.
fn search(
    map: &TerrainMap,
    configs: &[(&str, &Capability)],
    reconfigure_s: f64,
    (s, k0): (usize, usize),
    g: usize,
) -> Result<Searched, PlanError> {
    let nk = configs.len();
    let n = map.nx * map.ny * nk;
    let mut dist = vec![f64::INFINITY; n];
    let mut parent = vec![usize::MAX; n];
    let mut how = vec![Action::Drive; n];
    let mut heap = BinaryHeap::new();
    let id = |cell: usize, k: usize| cell * nk + k;
    dist[id(s, k0)] = 0.0;
    heap.push(Item(0.0, id(s, k0)));
    let mut expansions = 0u64;
    let mut found = None;
    while let Some(Item(d, st)) = heap.pop() {
        if d > dist[st] {
            continue;
        }
        let (cell, k) = (st / nk, st % nk);
        if cell == g {
            found = Some(st);
            break;
        }
        expansions += 1;
        // Reconfigure here (the new configuration must fit the cell normally).
        for (k2, (_, cap)) in configs.iter().enumerate() {
            if k2 == k {
                continue;
            }
            if matches!(
                crossing(&map.cells[cell], map.wall_distance[cell], cap),
                Some((Action::Drive, _))
            ) {
                let nd = d + reconfigure_s;
                let t = id(cell, k2);
                if nd < dist[t] {
                    dist[t] = nd;
                    parent[t] = st;
                    how[t] = Action::Drive;
                    heap.push(Item(nd, t));
                }
            }
        }
        let (i, j) = ((cell % map.nx) as i64, (cell / map.nx) as i64);
        for (di, dj) in [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)] {
            let (ni, nj) = (i + di, j + dj);
            if ni < 0 || nj < 0 || ni as usize >= map.nx || nj as usize >= map.ny {
                continue;
            }
            let nc = nj as usize * map.nx + ni as usize;
            let Some((action, speed)) = crossing(&map.cells[nc], map.wall_distance[nc], configs[k].1) else {
                continue;
            };
            let len = if di != 0 && dj != 0 {
                std::f64::consts::SQRT_2
            } else {
                1.0
            } * map.resolution;
            let nd = d + len / speed;
            let t = id(nc, k);
            if nd < dist[t] {
                dist[t] = nd;
                parent[t] = st;
                how[t] = action;
                heap.push(Item(nd, t));
            }
        }
    }
    let Some(end) = found else {
        return Err(PlanError::NoPath { expansions });
    };
    // Back to the start: (cell, configuration, how it was entered).
    let mut trail = vec![end];
    while trail[trail.len() - 1] != id(s, k0) {
        let p = parent[trail[trail.len() - 1]];
        trail.push(p);
    }
    trail.reverse();
    Ok(Searched {
        trail,
        time_s: dist[end],
        how,
        expansions,
    })
}

/// Minimum-time plan from the scenario's start (in `start_configuration`) to its goal, using
/// the `available` configurations of the capability table.
pub fn plan(
    scenario: &Scenario,
    capabilities: &Capabilities,
    available: &[&str],
    start_configuration: &str,
    resolution: f64,
) -> Result<SearchedPlan, PlanError> {
    let map = TerrainMap::from_scenario(scenario, resolution)?;
    let configs: Vec<(&str, &Capability)> =
        available
            .iter()
            .map(|n| {
                capabilities.configurations.get(*n).map(|c| (*n, c)).ok_or_else(|| {
                    PlanError::InvalidRequest(format!("configuration `{n}` is not in the capability table"))
                })
            })
            .collect::<Result<_, _>>()?;
    let k0 = configs
        .iter()
        .position(|(n, _)| *n == start_configuration)
        .ok_or_else(|| {
            PlanError::InvalidRequest(format!("start configuration `{start_configuration}` is not available"))
        })?;
    let start = [scenario.robot_start.xyz[0], scenario.robot_start.xyz[1]];
    let goal = scenario.goal.unwrap_or(start);
    let (s, g) = (map.cell_of(start), map.cell_of(goal));
    let (Some(s), Some(g)) = (s, g) else {
        return Err(PlanError::OutOfBounds {
            x: goal[0].round() as i64,
            y: goal[1].round() as i64,
            width: map.nx,
            height: map.ny,
        });
    };
    let nk = configs.len();
    let Searched {
        trail,
        time_s,
        how,
        expansions,
    } = search(&map, &configs, capabilities.reconfigure_s, (s, k0), g)?;
    let gait_of = |n: &str| {
        capabilities
            .configurations
            .get(n)
            .map(|c| c.gait.clone())
            .unwrap_or_default()
    };
    let sub_goal = |name: &str,
                    reference: &str,
                    (lateral_m, longitudinal_m): (f64, f64),
                    action: Action,
                    ability: bool,
                    path: Vec<[f64; 2]>| SubGoal {
        configuration: name.to_string(),
        reference: reference.to_string(),
        lateral_m,
        longitudinal_m,
        yaw_deg: 0.0,
        ability,
        action,
        gait: gait_of(name),
        path,
    };
    let mut rows = Vec::new();
    let mut used = vec![configs[k0].0.to_string()];
    let mut segment: Vec<[f64; 2]> = Vec::new();
    let mut k = 0;
    while k < trail.len() {
        let (cell, ck) = (trail[k] / nk, trail[k] % nk);
        let name = configs[ck].0;
        if used.last().map(|u| u.as_str()) != Some(name) {
            used.push(name.to_string());
        }
        segment.push(map.point(cell));
        let action = if k == 0 { Action::Drive } else { how[trail[k]] };
        if action != Action::Drive {
            // An ability run: approach row, ability row to the exit, and for pass-over a
            // reposition row (the manoeuvre leaves the pose uncontrolled).
            let obstacle = map.cells[cell].obstacle;
            let (reference, center, yaw) = obstacle
                .map(|o| map.obstacles[o].clone())
                .unwrap_or_else(|| ("terrain".into(), map.point(cell), 0.0));
            let local = |p: [f64; 2]| {
                let d = [p[0] - center[0], p[1] - center[1]];
                (
                    -yaw.sin() * d[0] + yaw.cos() * d[1],
                    yaw.cos() * d[0] + yaw.sin() * d[1],
                )
            };
            let before = map.point(trail[k - 1] / nk);
            rows.push(sub_goal(
                name,
                &reference,
                local(before),
                Action::Drive,
                false,
                std::mem::take(&mut segment),
            ));
            let mut m = k;
            while m + 1 < trail.len() && how[trail[m + 1]] == action && trail[m + 1] % nk == ck {
                m += 1;
                segment.push(map.point(trail[m] / nk));
            }
            let exit = if m + 1 < trail.len() {
                map.point(trail[m + 1] / nk)
            } else {
                map.point(trail[m] / nk)
            };
            segment.push(exit);
            let at_exit = local(exit);
            rows.push(sub_goal(
                name,
                &reference,
                at_exit,
                action,
                true,
                std::mem::take(&mut segment),
            ));
            if action == Action::PassOver {
                rows.push(sub_goal(name, &reference, at_exit, Action::Drive, false, Vec::new()));
            }
            k = m + 1;
            continue;
        }
        k += 1;
    }
    let last = used.last().cloned().unwrap_or_default();
    rows.push(sub_goal(&last, "target", (0.0, 0.0), Action::Drive, false, segment));
    Ok(SearchedPlan {
        plan: StrategicPlan { rows },
        time_s,
        configurations: used,
        expansions,
    })
}
