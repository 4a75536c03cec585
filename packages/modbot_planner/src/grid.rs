//! Grid maps with occupancy-grid semantics, the Moving AI benchmark formats, and A* on
//! 4- and 8-connected grids (octile heuristic, no corner cutting, deterministic ties).

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::f64::consts::SQRT_2;
use std::path::Path;

/// Why a grid query failed (the nav2 planner exceptions).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    /// The start cell is occupied or unknown.
    #[error("start ({0}, {1}) is occupied")]
    StartOccupied(usize, usize),
    /// The goal cell is occupied or unknown.
    #[error("goal ({0}, {1}) is occupied")]
    GoalOccupied(usize, usize),
    /// A cell outside the map.
    #[error("({x}, {y}) is outside the {width} × {height} map")]
    OutOfBounds {
        /// Column.
        x: i64,
        /// Row.
        y: i64,
        /// Map width.
        width: usize,
        /// Map height.
        height: usize,
    },
    /// No path exists.
    #[error("no path ({expansions} cells expanded)")]
    NoPath {
        /// Cells expanded.
        expansions: u64,
    },
    /// Expansion limit reached.
    #[error("timeout after {expansions} expansions")]
    Timeout {
        /// Cells expanded.
        expansions: u64,
    },
    /// The caller cancelled.
    #[error("cancelled after {expansions} expansions")]
    Cancelled {
        /// Cells expanded.
        expansions: u64,
    },
    /// The request itself is unusable (e.g. a scenario without a goal).
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// A map or scenario file is malformed.
    #[error("{origin}:{line}: {message}")]
    Malformed {
        /// File.
        origin: String,
        /// Line (1-based).
        line: usize,
        /// What is wrong.
        message: String,
    },
}

impl PlanError {
    /// Whether the request itself is at fault (a goal off the map, a malformed map or
    /// table, an invalid request), as opposed to the search failing on a valid request
    /// (no path, occupied start or goal, a timeout): front ends answer "bad input" for these.
    pub fn is_input_error(&self) -> bool {
        matches!(
            self,
            PlanError::InvalidRequest(_) | PlanError::OutOfBounds { .. } | PlanError::Malformed { .. }
        )
    }
}

/// Occupancy of a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occupancy {
    /// Traversable.
    Free,
    /// Blocked.
    Occupied,
    /// Not known (treated as blocked by the planner).
    Unknown,
}

/// A grid map: row-major cells, x = column, y = row (row 0 at the map's origin).
#[derive(Debug, Clone, PartialEq)]
pub struct GridMap {
    /// Columns.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Cell size, m.
    pub resolution: f64,
    /// World position of cell (0, 0)'s corner, m.
    pub origin: [f64; 2],
    cells: Vec<Occupancy>,
    /// Passability with a one-cell blocked border, row-major, (width + 2) × (height + 2):
    /// the planner's hot data, so neighbours need no bounds checks.
    pass: Vec<bool>,
}

impl GridMap {
    fn padded(width: usize, height: usize, cells: &[Occupancy]) -> Vec<bool> {
        let pw = width + 2;
        let mut pass = vec![false; pw * (height + 2)];
        for y in 0..height {
            for x in 0..width {
                pass[(y + 1) * pw + x + 1] = cells[y * width + x] == Occupancy::Free;
            }
        }
        pass
    }

    /// A free map.
    pub fn new(width: usize, height: usize, resolution: f64) -> GridMap {
        let cells = vec![Occupancy::Free; width * height];
        GridMap {
            width,
            height,
            resolution,
            origin: [0.0, 0.0],
            pass: Self::padded(width, height, &cells),
            cells,
        }
    }

    /// Cell (x, y).
    pub fn get(&self, x: usize, y: usize) -> Occupancy {
        self.cells[y * self.width + x]
    }

    /// Sets cell (x, y).
    pub fn set(&mut self, x: usize, y: usize, o: Occupancy) {
        self.cells[y * self.width + x] = o;
        self.pass[(y + 1) * (self.width + 2) + x + 1] = o == Occupancy::Free;
    }

    /// Is (x, y) inside and free?
    #[inline]
    pub fn passable(&self, x: i64, y: i64) -> bool {
        x >= 0
            && y >= 0
            && (x as usize) < self.width
            && (y as usize) < self.height
            && self.cells[y as usize * self.width + x as usize] == Occupancy::Free
    }

    /// From nav_msgs/OccupancyGrid data (row-major, −1 unknown, 0–100 occupancy); cells at or
    /// above `occupied_threshold` (e.g. 65, map_server's 0.65) are occupied. `origin` is the
    /// world position of cell (0, 0)'s corner (an unrotated OccupancyGrid's `info.origin`);
    /// a resolution that is not a positive cell size, a non-finite origin or a data length
    /// other than width × height is `Malformed`.
    pub fn from_occupancy(
        width: usize,
        height: usize,
        resolution: f64,
        origin: [f64; 2],
        data: &[i8],
        occupied_threshold: i8,
    ) -> Result<GridMap, PlanError> {
        if !(resolution.is_finite() && resolution > 0.0) {
            return Err(PlanError::Malformed {
                origin: "OccupancyGrid".into(),
                line: 0,
                message: format!("resolution {resolution} is not a cell size"),
            });
        }
        if !origin.iter().all(|v| v.is_finite()) {
            return Err(PlanError::Malformed {
                origin: "OccupancyGrid".into(),
                line: 0,
                message: format!("origin {origin:?} is not finite"),
            });
        }
        if width.checked_mul(height) != Some(data.len()) {
            return Err(PlanError::Malformed {
                origin: "OccupancyGrid".into(),
                line: 0,
                message: format!("{} cells for a {width} × {height} grid", data.len()),
            });
        }
        let cells: Vec<Occupancy> = data
            .iter()
            .map(|&v| match v {
                v if v < 0 => Occupancy::Unknown,
                v if v >= occupied_threshold => Occupancy::Occupied,
                _ => Occupancy::Free,
            })
            .collect();
        Ok(GridMap {
            width,
            height,
            resolution,
            origin,
            pass: Self::padded(width, height, &cells),
            cells,
        })
    }

    /// The cell holding world point `p` (cell (0, 0)'s corner is at [`GridMap::origin`]);
    /// a point off the map, or not finite, is `OutOfBounds` with the cell it would be.
    pub fn cell_at(&self, p: [f64; 2]) -> Result<(usize, usize), PlanError> {
        let x = ((p[0] - self.origin[0]) / self.resolution).floor();
        let y = ((p[1] - self.origin[1]) / self.resolution).floor();
        if !(x >= 0.0 && y >= 0.0 && x < self.width as f64 && y < self.height as f64) {
            return Err(PlanError::OutOfBounds {
                x: x as i64,
                y: y as i64,
                width: self.width,
                height: self.height,
            });
        }
        Ok((x as usize, y as usize))
    }

    /// World position of the centre of cell (x, y).
    pub fn cell_center(&self, (x, y): (usize, usize)) -> [f64; 2] {
        [
            self.origin[0] + (x as f64 + 0.5) * self.resolution,
            self.origin[1] + (y as f64 + 0.5) * self.resolution,
        ]
    }

    /// To nav_msgs/OccupancyGrid data: free 0, occupied 100, unknown −1.
    pub fn to_occupancy(&self) -> Vec<i8> {
        self.cells
            .iter()
            .map(|c| match c {
                Occupancy::Free => 0,
                Occupancy::Occupied => 100,
                Occupancy::Unknown => -1,
            })
            .collect()
    }

    /// A copy with every cell within `radius_m` of an occupied cell occupied (the robot's
    /// footprint as a disc).
    pub fn inflated(&self, radius_m: f64) -> GridMap {
        let r = (radius_m / self.resolution).ceil() as i64;
        let mut out = self.clone();
        for y in 0..self.height as i64 {
            for x in 0..self.width as i64 {
                if self.get(x as usize, y as usize) != Occupancy::Occupied {
                    continue;
                }
                for dy in -r..=r {
                    for dx in -r..=r {
                        let (nx, ny) = (x + dx, y + dy);
                        if (dx * dx + dy * dy) as f64 * self.resolution * self.resolution <= radius_m * radius_m + 1e-12
                            && nx >= 0
                            && ny >= 0
                            && (nx as usize) < self.width
                            && (ny as usize) < self.height
                        {
                            out.set(nx as usize, ny as usize, Occupancy::Occupied);
                        }
                    }
                }
            }
        }
        out
    }

    /// Parses a Moving AI `.map` (`type octile`, `height`, `width`, `map`, then rows; `.`,
    /// `G` and `S` are passable, `@`, `O`, `T`, `W` are not).
    pub fn parse_movingai(text: &str, origin: &str) -> Result<GridMap, PlanError> {
        let bad = |line: usize, message: String| PlanError::Malformed {
            origin: origin.to_string(),
            line,
            message,
        };
        let mut lines = text.lines().enumerate();
        let (mut kind, mut width, mut height) = (None, None, None);
        loop {
            let (i, l) = lines.next().ok_or_else(|| bad(0, "missing `map` line".into()))?;
            let mut parts = l.split_whitespace();
            let (key, value, rest) = (parts.next(), parts.next(), parts.next());
            if rest.is_some() {
                return Err(bad(i + 1, format!("unexpected header line `{l}`")));
            }
            match (key, value) {
                (Some("type"), Some(v)) => {
                    if v != "octile" {
                        return Err(bad(i + 1, format!("type `{v}`: only `octile` maps are known")));
                    }
                    if kind.replace(v).is_some() {
                        return Err(bad(i + 1, "type given twice".into()));
                    }
                }
                (Some(k @ ("height" | "width")), Some(v)) => {
                    let n = v.parse::<usize>().map_err(|_| bad(i + 1, format!("{k} `{v}`")))?;
                    let slot = if k == "height" { &mut height } else { &mut width };
                    if slot.replace(n).is_some() {
                        return Err(bad(i + 1, format!("{k} given twice")));
                    }
                }
                (Some("map"), None) => break,
                _ => return Err(bad(i + 1, format!("unexpected header line `{l}`"))),
            }
        }
        kind.ok_or_else(|| bad(0, "missing `type octile` line".into()))?;
        let (w, h) = (
            width.ok_or_else(|| bad(0, "missing width".into()))?,
            height.ok_or_else(|| bad(0, "missing height".into()))?,
        );
        // Checked before allocating: the product must not wrap, and a map holds at most
        // MAX_MAP_CELLS cells (the largest Moving AI benchmark maps hold ~6·10⁶).
        if w == 0 || h == 0 || w.checked_mul(h).is_none_or(|n| n > MAX_MAP_CELLS) {
            return Err(bad(
                0,
                format!("size {w} × {h}: expected both > 0 and at most {MAX_MAP_CELLS} cells"),
            ));
        }
        let mut map = GridMap::new(w, h, 1.0);
        let mut y = 0;
        for (i, l) in lines {
            if y == h {
                if l.trim().is_empty() {
                    continue;
                }
                return Err(bad(i + 1, format!("more than {h} rows")));
            }
            let row = l.trim_end_matches('\r');
            if row.chars().count() != w {
                return Err(bad(
                    i + 1,
                    format!("row has {} cells, width is {w}", row.chars().count()),
                ));
            }
            for (x, c) in row.chars().enumerate() {
                let o = match c {
                    '.' | 'G' | 'S' => Occupancy::Free,
                    '@' | 'O' | 'T' | 'W' => Occupancy::Occupied,
                    other => return Err(bad(i + 1, format!("unknown terrain `{other}` at column {x}"))),
                };
                map.set(x, y, o);
            }
            y += 1;
        }
        if y != h {
            return Err(bad(0, format!("{y} rows, height is {h}")));
        }
        Ok(map)
    }

    /// Loads a Moving AI `.map` file.
    pub fn load_movingai(path: &Path) -> Result<GridMap, PlanError> {
        let text = modbot_core::error::read_capped(path).map_err(|e| PlanError::Malformed {
            origin: path.display().to_string(),
            line: 0,
            message: e.to_string(),
        })?;
        Self::parse_movingai(&text, &path.display().to_string())
    }
}

/// Most cells a Moving AI map may hold (checked before anything is allocated).
pub const MAX_MAP_CELLS: usize = 100_000_000;

/// One Moving AI scenario line.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Line in the file (1-based), for messages.
    pub line: usize,
    /// The map's size the line was written for (width, height).
    pub map_size: (usize, usize),
    /// Start (x, y).
    pub start: (usize, usize),
    /// Goal (x, y).
    pub goal: (usize, usize),
    /// Published optimal length.
    pub optimal: f64,
}

/// Parses a Moving AI `.scen`: a `version 1` (or `1.0`) line, then tab-separated lines of
/// bucket, map, map width, map height, start x, y, goal x, y, optimal length (finite, ≥ 0).
/// [`check_scen`] checks them against the map.
pub fn parse_scen(text: &str, origin: &str) -> Result<Vec<Scenario>, PlanError> {
    let bad = |line: usize, message: String| PlanError::Malformed {
        origin: origin.to_string(),
        line,
        message,
    };
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    match lines.next().map(|(_, l)| l.split_whitespace().collect::<Vec<_>>()) {
        Some(v) if v.len() == 2 && v[0] == "version" && (v[1] == "1" || v[1] == "1.0") => {}
        Some(v) if v.first() == Some(&"version") => {
            return Err(bad(
                1,
                format!("version `{}`: only version 1 is known", v[1..].join(" ")),
            ));
        }
        _ => return Err(bad(1, "expected a first line `version 1`".into())),
    }
    for (i, l) in lines {
        if l.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = l.split('\t').collect();
        if f.len() != 9 {
            return Err(bad(i + 1, format!("{} fields, expected 9", f.len())));
        }
        let num = |k: usize| {
            f[k].trim()
                .parse::<usize>()
                .map_err(|_| bad(i + 1, format!("field {} `{}`", k + 1, f[k])))
        };
        let optimal = f[8]
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| {
                bad(
                    i + 1,
                    format!("optimal length `{}`: expected a finite length ≥ 0", f[8]),
                )
            })?;
        out.push(Scenario {
            line: i + 1,
            map_size: (num(2)?, num(3)?),
            start: (num(4)?, num(5)?),
            goal: (num(6)?, num(7)?),
            optimal,
        });
    }
    Ok(out)
}

/// Checks scenario lines against the map they are run on: each line's map size must be the
/// map's, and its start and goal cells inside it.
pub fn check_scen(scen: &[Scenario], map: &GridMap, origin: &str) -> Result<(), PlanError> {
    for s in scen {
        let bad = |message: String| PlanError::Malformed {
            origin: origin.to_string(),
            line: s.line,
            message,
        };
        if s.map_size != (map.width, map.height) {
            return Err(bad(format!(
                "written for a {} × {} map; the map is {} × {}",
                s.map_size.0, s.map_size.1, map.width, map.height
            )));
        }
        for (what, (x, y)) in [("start", s.start), ("goal", s.goal)] {
            if x >= map.width || y >= map.height {
                return Err(bad(format!("{what} ({x}, {y}) is outside the map")));
            }
        }
    }
    Ok(())
}

/// Neighbourhood.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connectivity {
    /// Up, down, left, right (cost 1).
    Four,
    /// Plus diagonals (cost √2), no corner cutting.
    Eight,
}

/// A path and what it cost to find.
#[derive(Debug, Clone, PartialEq)]
pub struct GridPath {
    /// Cells from start to goal.
    pub cells: Vec<(usize, usize)>,
    /// Length.
    pub cost: f64,
    /// Cells expanded.
    pub expansions: u64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Entry {
    f: f64,
    g: f64,
    cell: u32,
}

impl Eq for Entry {}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // Min f; ties: larger g (deeper), then lower cell index: deterministic.
        other
            .f
            .total_cmp(&self.f)
            .then(self.g.total_cmp(&other.g))
            .then(other.cell.cmp(&self.cell))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A reusable A* planner: flat per-cell arrays stamped with a search id, so a query
/// allocates nothing per node and nothing is cleared between queries.
#[derive(Debug, Default)]
pub struct AStar {
    /// Per padded cell: g, parent, and a state word (2·search = open, 2·search + 1 = closed),
    /// together so one cache line serves a visit.
    nodes: Vec<NodeData>,
    search: u32,
    heap: BinaryHeap<Entry>,
}

#[derive(Debug, Clone, Copy, Default)]
struct NodeData {
    g: f64,
    parent: u32,
    state: u32,
}

impl AStar {
    /// A planner (buffers grow to the largest map used).
    pub fn new() -> AStar {
        AStar::default()
    }

    /// Shortest path from `start` to `goal` (x, y). `max_expansions` = 0 means no limit;
    /// `cancel` is polled every 4096 expansions.
    pub fn plan(
        &mut self,
        map: &GridMap,
        start: (usize, usize),
        goal: (usize, usize),
        conn: Connectivity,
        max_expansions: u64,
        cancel: &dyn Fn() -> bool,
    ) -> Result<GridPath, PlanError> {
        let (w, h) = (map.width, map.height);
        for &(x, y) in [&start, &goal] {
            if x >= w || y >= h {
                return Err(PlanError::OutOfBounds {
                    x: x as i64,
                    y: y as i64,
                    width: w,
                    height: h,
                });
            }
        }
        if !map.passable(start.0 as i64, start.1 as i64) {
            return Err(PlanError::StartOccupied(start.0, start.1));
        }
        if !map.passable(goal.0 as i64, goal.1 as i64) {
            return Err(PlanError::GoalOccupied(goal.0, goal.1));
        }
        let pw = w + 2;
        let n = pw * (h + 2);
        if self.nodes.len() < n {
            self.nodes.resize(n, NodeData::default());
        }
        self.search += 1;
        if self.search >= u32::MAX / 2 {
            self.nodes.iter_mut().for_each(|d| d.state = 0);
            self.search = 1;
        }
        let (open, closed) = (2 * self.search, 2 * self.search + 1);
        self.heap.clear();
        let (gx, gy) = (goal.0 as f64, goal.1 as f64);
        // Padded coordinates: the goal sits at (gx + 1, gy + 1).
        let hxy = |x: f64, y: f64| {
            let dx = (x - 1.0 - gx).abs();
            let dy = (y - 1.0 - gy).abs();
            match conn {
                Connectivity::Four => dx + dy,
                Connectivity::Eight => dx.max(dy) + (SQRT_2 - 1.0) * dx.min(dy),
            }
        };
        let hfun = |c: usize| hxy((c % pw) as f64, (c / pw) as f64);
        let at = |x: usize, y: usize| (y + 1) * pw + x + 1;
        let s = at(start.0, start.1) as u32;
        let gidx = at(goal.0, goal.1) as u32;
        self.nodes[s as usize] = NodeData {
            g: 0.0,
            parent: s,
            state: open,
        };
        self.heap.push(Entry {
            f: hfun(s as usize),
            g: 0.0,
            cell: s,
        });
        let mut expansions = 0u64;
        let pwi = pw as isize;
        // (offset, cost, orthogonal offsets a diagonal needs free, dx, dy)
        let moves: [(isize, f64, isize, isize, f64, f64); 8] = [
            (1, 1.0, 0, 0, 1.0, 0.0),
            (-1, 1.0, 0, 0, -1.0, 0.0),
            (pwi, 1.0, 0, 0, 0.0, 1.0),
            (-pwi, 1.0, 0, 0, 0.0, -1.0),
            (1 + pwi, SQRT_2, 1, pwi, 1.0, 1.0),
            (1 - pwi, SQRT_2, 1, -pwi, 1.0, -1.0),
            (-1 + pwi, SQRT_2, -1, pwi, -1.0, 1.0),
            (-1 - pwi, SQRT_2, -1, -pwi, -1.0, -1.0),
        ];
        let moves = if conn == Connectivity::Four {
            &moves[..4]
        } else {
            &moves[..]
        };
        let pass = &map.pass;
        while let Some(Entry { g, cell, .. }) = self.heap.pop() {
            let c = cell as usize;
            if self.nodes[c].state == closed || g > self.nodes[c].g {
                continue;
            }
            self.nodes[c].state = closed;
            if cell == gidx {
                let to_xy = |k: usize| (k % pw - 1, k / pw - 1);
                let mut cells = vec![goal];
                let mut k = cell;
                while k != s {
                    k = self.nodes[k as usize].parent;
                    cells.push(to_xy(k as usize));
                }
                cells.reverse();
                return Ok(GridPath {
                    cells,
                    cost: g,
                    expansions,
                });
            }
            expansions += 1;
            if max_expansions > 0 && expansions >= max_expansions {
                return Err(PlanError::Timeout { expansions });
            }
            if expansions % 4096 == 0 && cancel() {
                return Err(PlanError::Cancelled { expansions });
            }
            let (cx, cy) = ((c % pw) as f64, (c / pw) as f64);
            for &(off, cost, ox, oy, dx, dy) in moves {
                let nc = (c as isize + off) as usize;
                if !pass[nc] {
                    continue;
                }
                // No corner cutting: a diagonal needs both orthogonal neighbours free.
                if ox != 0 && !(pass[(c as isize + ox) as usize] && pass[(c as isize + oy) as usize]) {
                    continue;
                }
                let node = &mut self.nodes[nc];
                if node.state == closed {
                    continue;
                }
                let ng = g + cost;
                if node.state != open || ng < node.g {
                    *node = NodeData {
                        g: ng,
                        parent: cell,
                        state: open,
                    };
                    self.heap.push(Entry {
                        f: ng + hxy(cx + dx, cy + dy),
                        g: ng,
                        cell: nc as u32,
                    });
                }
            }
        }
        Err(PlanError::NoPath { expansions })
    }
}
