//! Scenarios: the world a robot runs in (ground, gravity, physics step, obstacles, maze),
//! from one YAML file that drives the SDF world for Gazebo, the embedded simulator and
//! the planner's terrain alike.
//!
//! Frame: x forward (the robots start with their body axis along +x), z up, metres.

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result, parse_yaml, read_text};

/// A scenario file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// World name (SDF `<world name>`), `[A-Za-z0-9_]+`.
    pub name: String,
    /// Free text.
    #[serde(default)]
    pub description: String,
    /// Physics settings.
    #[serde(default)]
    pub physics: Physics,
    /// Gravity vector, m/s².
    #[serde(default = "default_gravity")]
    pub gravity: [f64; 3],
    /// The ground plane.
    #[serde(default)]
    pub ground: Ground,
    /// Where the robot starts: its tail end, heading along +x rotated by `yaw_deg`.
    #[serde(default)]
    pub robot_start: StartPose,
    /// Obstacles placed by hand.
    #[serde(default)]
    pub obstacles: Vec<Obstacle>,
    /// A maze built from pieces (their sizes from the wiki's repository, not the seed text).
    #[serde(default)]
    pub maze: Option<Maze>,
    /// Goal position (x, y), m, for planners and progress measures.
    #[serde(default)]
    pub goal: Option<[f64; 2]>,
    /// Start poses of several robots, in order, for a world of several robots (the
    /// strategic mission's lone wheel-foot modules: entry i is Module#(i+1)); empty for a
    /// one-robot world, which starts at `robot_start` (decision record 0047).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub robot_starts: Vec<StartPose>,
    /// Tagged points without a body (the source's target dummy), for the robots' cameras
    /// (decision record 0047).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub markers: Vec<Marker>,
}

/// What a camera recognises an object as: the source's `Type` of its detectable dummies
/// (1 ground obstacle, 2 lath obstacle, 3 system target; seed-000 §2.4). An untagged
/// object is not reported by a camera (it still occludes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tag {
    /// Type 1: a ground obstacle (an obstacle of kind `ground_obstacle`).
    GroundObstacle,
    /// Type 2: a lath obstacle (an obstacle of kind `lath`).
    Lath,
    /// Type 3: the system target (a marker).
    Target,
}

impl Tag {
    /// The source's `Type` number.
    pub fn source_type(self) -> u8 {
        match self {
            Tag::GroundObstacle => 1,
            Tag::Lath => 2,
            Tag::Target => 3,
        }
    }
}

/// A tagged point without a body: the source's target dummy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Marker {
    /// Unique name (among markers and obstacles).
    pub name: String,
    /// What a camera recognises it as (`target`).
    pub tag: Tag,
    /// Position (x, y) on the ground, m.
    pub position_m: [f64; 2],
    /// Height of the point above the ground, m.
    #[serde(default)]
    pub height_m: f64,
    /// Its heading (the frame a plan row's offsets are taken in), deg.
    #[serde(default)]
    pub yaw_deg: f64,
}

fn default_gravity() -> [f64; 3] {
    [0.0, 0.0, -9.81]
}

/// Physics settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Physics {
    /// Fixed physics step, s.
    pub step_s: f64,
    /// Target real-time factor for Gazebo (the embedded simulator runs as fast as it can).
    pub real_time_factor: f64,
}

impl Default for Physics {
    fn default() -> Self {
        Physics {
            step_s: 0.002,
            real_time_factor: 1.0,
        }
    }
}

/// The ground plane.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ground {
    /// Coulomb friction coefficient.
    pub friction: f64,
    /// Visual/collision extent (x, y), m.
    pub size_m: [f64; 2],
    /// How a surface's friction and the world's (ground, obstacles) make a contact's.
    #[serde(default, skip_serializing_if = "FrictionCombine::is_min")]
    pub friction_combine: FrictionCombine,
}

/// How two surfaces' friction coefficients make the contact's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrictionCombine {
    /// The smaller of the two (ODE, Gazebo's default).
    #[default]
    Min,
    /// The product (Bullet, V-Rep's default engine): the world's coefficient scales every
    /// surface's, as in the wheel-foot thesis's friction sweeps (decision 0023).
    Multiply,
}

impl FrictionCombine {
    /// Whether it is the default.
    pub fn is_min(&self) -> bool {
        *self == FrictionCombine::Min
    }

    /// The contact's coefficient from the world's `world` and a surface's `surface`.
    pub fn combine(&self, world: f64, surface: f64) -> f64 {
        match self {
            FrictionCombine::Min => world.min(surface),
            FrictionCombine::Multiply => world * surface,
        }
    }
}

impl Default for Ground {
    fn default() -> Self {
        Ground {
            friction: 0.2,
            size_m: [50.0, 50.0],
            friction_combine: FrictionCombine::Min,
        }
    }
}

/// Largest gravity a world may have, m/s² (ten times Earth's; beyond it the engines' contact
/// models leave their range, issue 18).
pub const MAX_GRAVITY_M_S2: f64 = 100.0;

/// Smallest physics step a scenario or a run may ask for, s: 10 µs, 100 000 steps per
/// simulated second. A smaller one (1e-300 passes "positive") would keep a run stepping
/// for days without showing why.
pub const MIN_PHYSICS_STEP_S: f64 = 1e-5;

/// Highest start above the ground, m.
pub const MAX_START_HEIGHT_M: f64 = 10.0;

/// Start pose of the robot.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StartPose {
    /// Position (x, y, z) of the tail end, m; z = 0 puts the body on the ground.
    #[serde(default)]
    pub xyz: [f64; 3],
    /// Heading, deg.
    #[serde(default)]
    pub yaw_deg: f64,
}

/// What an obstacle is, for planners (terrain) and for building it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ObstacleKind {
    /// Impassable.
    Wall,
    /// A low block to pass over (height h).
    GroundObstacle,
    /// A bar at height `clearance_m` on two posts, to pass under.
    Lath,
    /// A low bump across a corridor.
    Bump,
    /// A patch of rough ground (a thin plate): passable, slower.
    Rough,
}

/// One obstacle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Obstacle {
    /// Unique name.
    pub name: String,
    /// What it is.
    pub kind: ObstacleKind,
    /// Centre (x, y) on the ground, m.
    pub position_m: [f64; 2],
    /// Rotation about z, deg.
    #[serde(default)]
    pub yaw_deg: f64,
    /// Size (along its x, across, height), m. For a lath: bar depth, passage width, bar thickness.
    pub size_m: [f64; 3],
    /// Lath only: height of the bar's underside above the ground, m.
    #[serde(default)]
    pub clearance_m: Option<f64>,
    /// Friction of its surface (default: the ground's).
    #[serde(default)]
    pub friction: Option<f64>,
    /// What a camera recognises it as (`ground_obstacle` on a ground obstacle, `lath` on a
    /// lath); none: not reported by cameras (decision record 0047).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<Tag>,
}

impl Obstacle {
    /// The point a camera reports for a tagged obstacle, world frame, m: the centre of its
    /// block (a ground obstacle) or of its bar (a lath); on the ground below it lies
    /// `position_m`.
    pub fn tagged_point(&self) -> [f64; 3] {
        let [_, _, h] = self.size_m;
        let z = match self.kind {
            ObstacleKind::Lath => self.clearance_m.unwrap_or(0.0) + h / 2.0,
            _ => h / 2.0,
        };
        [self.position_m[0], self.position_m[1], z]
    }
}

/// A maze of pieces `s` straight (2 m), `l`/`r` corner, `b` bump (4 m). The seed-002 page
/// names mazes but not their geometry (it is on the page "Simulated Environment", not in the
/// seed): the piece letters, their lengths and the corner offsets come from the wiki's
/// repository (rmorenoga/Evolution, `getTPoints`; spec seed-002 §8), a later version than
/// the page; the corridor width, the walls and the bump's size are ours.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Maze {
    /// Pieces separated by spaces, e.g. `s l s`.
    pub sequence: String,
    /// Corridor width W, m.
    #[serde(default = "Maze::default_width")]
    pub corridor_width_m: f64,
    /// Wall height, m.
    #[serde(default = "Maze::default_wall_height")]
    pub wall_height_m: f64,
    /// Wall thickness, m.
    #[serde(default = "Maze::default_wall_thickness")]
    pub wall_thickness_m: f64,
    /// Corridor before the entrance (x < 0), m.
    #[serde(default = "Maze::default_lead_in")]
    pub lead_in_m: f64,
    /// Bump height, m.
    #[serde(default = "Maze::default_bump_height")]
    pub bump_height_m: f64,
    /// Bump length along the corridor, m.
    #[serde(default = "Maze::default_bump_length")]
    pub bump_length_m: f64,
}

impl Maze {
    fn default_width() -> f64 {
        1.0
    }
    fn default_wall_height() -> f64 {
        0.15
    }
    fn default_wall_thickness() -> f64 {
        0.05
    }
    fn default_lead_in() -> f64 {
        1.0
    }
    fn default_bump_height() -> f64 {
        0.03
    }
    fn default_bump_length() -> f64 {
        0.3
    }

    /// Length of a straight piece, m (the wiki's repository, `getTPoints`; spec seed-002 §8;
    /// not in the seed text).
    pub const STRAIGHT_M: f64 = 2.0;
    /// Length of a bump piece, m (the same repository; not in the seed text).
    pub const BUMP_PIECE_M: f64 = 4.0;

    /// The corner offsets (forward, sideways) of the wiki's repository (spec seed-002 §8,
    /// not the seed text): y_o = W/2 + 0.7 and
    /// |x_o| = W/2 + 0.075 + 0.625.
    pub fn corner_offsets(&self) -> (f64, f64) {
        let w = self.corridor_width_m;
        (w / 2.0 + 0.7, w / 2.0 + 0.075 + 0.625)
    }

    /// The pieces, validated.
    pub fn pieces(&self) -> Result<Vec<char>> {
        let mut out = Vec::new();
        for tok in self.sequence.split_whitespace() {
            let mut chars = tok.chars();
            match (chars.next(), chars.next()) {
                (Some(c @ ('s' | 'l' | 'r' | 'b')), None) => out.push(c),
                _ => {
                    return Err(CoreError::invalid(
                        "maze.sequence",
                        tok,
                        "pieces s (straight), l (left corner), r (right corner), b (bump), separated by spaces",
                    ));
                }
            }
        }
        if out.is_empty() {
            return Err(CoreError::invalid("maze.sequence", "''", "at least one piece"));
        }
        Ok(out)
    }

    /// The corridor's centre line, from the start of the lead-in (at x = −lead_in) through the
    /// entrance (0, 0) to the exit, and the bumps' centres and headings.
    pub fn centre_line(&self) -> Result<CentreLine> {
        let (fwd_off, side_off) = self.corner_offsets();
        let mut pts = vec![[-self.lead_in_m, 0.0], [0.0, 0.0]];
        let mut bumps = Vec::new();
        let mut p = [0.0, 0.0];
        let mut heading: f64 = 0.0;
        let go = |p: &mut [f64; 2], h: f64, d: f64| {
            p[0] += d * h.cos();
            p[1] += d * h.sin();
        };
        for piece in self.pieces()? {
            match piece {
                's' => go(&mut p, heading, Self::STRAIGHT_M),
                'b' => {
                    let mut mid = p;
                    go(&mut mid, heading, Self::BUMP_PIECE_M / 2.0);
                    bumps.push(Bump { center: mid, heading });
                    go(&mut p, heading, Self::BUMP_PIECE_M);
                }
                turn => {
                    go(&mut p, heading, fwd_off);
                    push_point(&mut pts, p);
                    heading += if turn == 'l' {
                        std::f64::consts::FRAC_PI_2
                    } else {
                        -std::f64::consts::FRAC_PI_2
                    };
                    go(&mut p, heading, side_off);
                }
            }
            push_point(&mut pts, p);
        }
        Ok(CentreLine { points: pts, bumps })
    }
}

/// One piece of a maze as its progress is measured (the wiki repository's `getTPoints`,
/// spec seed-002 §8; not the seed text): where the centre line enters and leaves it, and
/// its path length.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MazePart {
    /// `s`, `l`, `r` or `b`.
    pub piece: char,
    /// Entry point on the centre line, m.
    pub entry: [f64; 2],
    /// Corridor heading at the entry, rad.
    pub entry_heading: f64,
    /// Exit point on the centre line, m.
    pub exit: [f64; 2],
    /// Corridor heading at the exit, rad.
    pub exit_heading: f64,
    /// Path length: 2 m straight, 4 m bump, |x_o| + y_o a corner.
    pub length_m: f64,
}

impl Maze {
    /// The pieces with their entry and exit points, from the entrance (0, 0) heading +x.
    pub fn parts(&self) -> Result<Vec<MazePart>> {
        let (fwd_off, side_off) = self.corner_offsets();
        let mut p = [0.0, 0.0];
        let mut heading: f64 = 0.0;
        let mut out = Vec::new();
        for piece in self.pieces()? {
            let (entry, entry_heading) = (p, heading);
            let length_m = match piece {
                's' | 'b' => {
                    let d = if piece == 's' {
                        Self::STRAIGHT_M
                    } else {
                        Self::BUMP_PIECE_M
                    };
                    p = [p[0] + d * heading.cos(), p[1] + d * heading.sin()];
                    d
                }
                turn => {
                    p = [p[0] + fwd_off * heading.cos(), p[1] + fwd_off * heading.sin()];
                    heading += if turn == 'l' {
                        std::f64::consts::FRAC_PI_2
                    } else {
                        -std::f64::consts::FRAC_PI_2
                    };
                    p = [p[0] + side_off * heading.cos(), p[1] + side_off * heading.sin()];
                    fwd_off + side_off
                }
            };
            out.push(MazePart {
                piece,
                entry,
                entry_heading,
                exit: p,
                exit_heading: heading,
                length_m,
            });
        }
        Ok(out)
    }
}

/// A maze corridor's centre line and its bumps.
#[derive(Debug, Clone, PartialEq)]
pub struct CentreLine {
    /// Corner points from the lead-in's start to the exit, m.
    pub points: Vec<[f64; 2]>,
    /// Bumps.
    pub bumps: Vec<Bump>,
}

/// A bump across a maze corridor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bump {
    /// Centre (x, y), m.
    pub center: [f64; 2],
    /// Corridor heading there, rad.
    pub heading: f64,
}

/// Appends a point, merging collinear runs so that walls are one box per straight stretch.
fn push_point(pts: &mut Vec<[f64; 2]>, p: [f64; 2]) {
    let n = pts.len();
    if n >= 2 {
        let (a, b) = (pts[n - 2], pts[n - 1]);
        let cross = (b[0] - a[0]) * (p[1] - b[1]) - (b[1] - a[1]) * (p[0] - b[0]);
        let dot = (b[0] - a[0]) * (p[0] - b[0]) + (b[1] - a[1]) * (p[1] - b[1]);
        if cross.abs() < 1e-12 && dot > 0.0 {
            pts[n - 1] = p;
            return;
        }
    }
    pts.push(p);
}

/// A box in the world, the one shape every obstacle is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct WorldBox {
    /// Unique name.
    pub name: String,
    /// What it belongs to.
    pub kind: ObstacleKind,
    /// Centre, m.
    pub center: [f64; 3],
    /// Rotation about z, rad.
    pub yaw: f64,
    /// Size (x, y, z) in its own frame, m.
    pub size: [f64; 3],
    /// Friction coefficient.
    pub friction: f64,
}

/// Thickness of a lath's posts, m.
pub const LATH_POST_M: f64 = 0.03;

fn finite_positive(key: &str, v: f64) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(CoreError::invalid(key, v, "a finite number > 0"))
    }
}

impl Scenario {
    /// Parses and validates a scenario from YAML text.
    pub fn from_yaml(text: &str, origin: &str) -> Result<Scenario> {
        let s: Scenario = parse_yaml(text, origin)?;
        s.validate().map_err(|e| e.in_file(origin))?;
        Ok(s)
    }

    /// Loads and validates a scenario file.
    pub fn load(path: &Path) -> Result<Scenario> {
        Self::from_yaml(&read_text(path)?, &path.display().to_string())
    }

    /// Checks every value; errors name the key.
    pub fn validate(&self) -> Result<()> {
        if self.name.is_empty() || !self.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(CoreError::invalid("name", &self.name, "letters, digits and _"));
        }
        finite_positive("physics.step_s", self.physics.step_s)?;
        if !(MIN_PHYSICS_STEP_S..=0.1).contains(&self.physics.step_s) {
            return Err(CoreError::invalid(
                "physics.step_s",
                self.physics.step_s,
                "from 1e-5 to 0.1 s",
            ));
        }
        finite_positive("physics.real_time_factor", self.physics.real_time_factor)?;
        let g = self.gravity;
        if g.iter().any(|g| !g.is_finite()) || (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt() > MAX_GRAVITY_M_S2 {
            return Err(CoreError::invalid(
                "gravity",
                format!("{g:?}"),
                format!("finite numbers, at most {MAX_GRAVITY_M_S2} m/s² in all (Earth's is 9.81)"),
            ));
        }
        if !(self.ground.friction.is_finite() && self.ground.friction >= 0.0) {
            return Err(CoreError::invalid(
                "ground.friction",
                self.ground.friction,
                "a finite number >= 0",
            ));
        }
        finite_positive("ground.size_m[0]", self.ground.size_m[0])?;
        finite_positive("ground.size_m[1]", self.ground.size_m[1])?;
        if self
            .robot_start
            .xyz
            .iter()
            .chain([&self.robot_start.yaw_deg])
            .any(|v| !v.is_finite())
        {
            return Err(CoreError::invalid(
                "robot_start",
                format!("{:?}", self.robot_start),
                "finite numbers",
            ));
        }
        let [x, y, z] = self.robot_start.xyz;
        if !(0.0..=MAX_START_HEIGHT_M).contains(&z) {
            return Err(CoreError::invalid(
                "robot_start.xyz[2]",
                z,
                format!(
                    "a height of 0 (on the ground) to {MAX_START_HEIGHT_M} m; a robot does not start under the ground"
                ),
            ));
        }
        for (k, v, half) in [(0, x, self.ground.size_m[0] / 2.0), (1, y, self.ground.size_m[1] / 2.0)] {
            if v.abs() > half {
                return Err(CoreError::invalid(
                    format!("robot_start.xyz[{k}]"),
                    v,
                    format!("a point on the ground, within ±{half} m (ground.size_m)"),
                ));
            }
        }
        let mut names = BTreeSet::new();
        for (i, o) in self.obstacles.iter().enumerate() {
            let key = format!("obstacles[{i}]");
            if o.name.is_empty() || !names.insert(o.name.clone()) {
                return Err(CoreError::invalid(
                    format!("{key}.name"),
                    &o.name,
                    "a unique, non-empty name",
                ));
            }
            for (j, v) in o.size_m.iter().enumerate() {
                finite_positive(&format!("{key}.size_m[{j}]"), *v)?;
            }
            if o.position_m.iter().chain([&o.yaw_deg]).any(|v| !v.is_finite()) {
                return Err(CoreError::invalid(
                    format!("{key}.position_m"),
                    format!("{:?}", o.position_m),
                    "finite numbers",
                ));
            }
            match (o.kind, o.clearance_m) {
                (ObstacleKind::Lath, Some(c)) => finite_positive(&format!("{key}.clearance_m"), c)?,
                (ObstacleKind::Lath, None) => {
                    return Err(CoreError::invalid(
                        format!("{key}.clearance_m"),
                        "missing",
                        "the bar's height above ground, m",
                    ));
                }
                (_, Some(c)) => {
                    return Err(CoreError::invalid(
                        format!("{key}.clearance_m"),
                        c,
                        "only a lath has a clearance",
                    ));
                }
                (_, None) => {}
            }
            if let Some(mu) = o.friction
                && !(mu.is_finite() && mu >= 0.0)
            {
                return Err(CoreError::invalid(
                    format!("{key}.friction"),
                    mu,
                    "a finite number >= 0",
                ));
            }
        }
        if let Some(m) = &self.maze {
            m.pieces()?;
            finite_positive("maze.corridor_width_m", m.corridor_width_m)?;
            finite_positive("maze.wall_height_m", m.wall_height_m)?;
            finite_positive("maze.wall_thickness_m", m.wall_thickness_m)?;
            finite_positive("maze.bump_height_m", m.bump_height_m)?;
            finite_positive("maze.bump_length_m", m.bump_length_m)?;
            if !(m.lead_in_m.is_finite() && m.lead_in_m >= 0.0) {
                return Err(CoreError::invalid(
                    "maze.lead_in_m",
                    m.lead_in_m,
                    "a finite number >= 0",
                ));
            }
        }
        if let Some(g) = self.goal
            && g.iter().any(|v| !v.is_finite())
        {
            return Err(CoreError::invalid("goal", format!("{g:?}"), "finite numbers"));
        }
        self.validate_starts_and_tags()
    }

    /// The several robots' starts, the obstacles' tags and the markers (decision record
    /// 0047).
    fn validate_starts_and_tags(&self) -> Result<()> {
        let half = [self.ground.size_m[0] / 2.0, self.ground.size_m[1] / 2.0];
        for (i, s) in self.robot_starts.iter().enumerate() {
            let key = format!("robot_starts[{i}]");
            if s.xyz.iter().chain([&s.yaw_deg]).any(|v| !v.is_finite()) {
                return Err(CoreError::invalid(key, format!("{s:?}"), "finite numbers"));
            }
            if !(0.0..=MAX_START_HEIGHT_M).contains(&s.xyz[2]) {
                return Err(CoreError::invalid(
                    format!("{key}.xyz[2]"),
                    s.xyz[2],
                    format!("a height of 0 (on the ground) to {MAX_START_HEIGHT_M} m"),
                ));
            }
            for (k, (v, h)) in s.xyz.iter().zip(half).enumerate() {
                if v.abs() > h {
                    return Err(CoreError::invalid(
                        format!("{key}.xyz[{k}]"),
                        v,
                        format!("a point on the ground, within ±{h} m (ground.size_m)"),
                    ));
                }
            }
        }
        for (i, o) in self.obstacles.iter().enumerate() {
            let fits = matches!(
                (o.tag, o.kind),
                (None, _)
                    | (Some(Tag::GroundObstacle), ObstacleKind::GroundObstacle)
                    | (Some(Tag::Lath), ObstacleKind::Lath)
            );
            if !fits {
                return Err(CoreError::invalid(
                    format!("obstacles[{i}].tag"),
                    format!("{:?} on a {:?}", o.tag, o.kind),
                    "ground_obstacle on a ground_obstacle, lath on a lath (a target is a marker)",
                ));
            }
        }
        let mut names: BTreeSet<&str> = self.obstacles.iter().map(|o| o.name.as_str()).collect();
        for (i, m) in self.markers.iter().enumerate() {
            let key = format!("markers[{i}]");
            if m.name.is_empty() || !names.insert(m.name.as_str()) {
                return Err(CoreError::invalid(
                    format!("{key}.name"),
                    &m.name,
                    "a unique, non-empty name (among markers and obstacles)",
                ));
            }
            if m.tag != Tag::Target {
                return Err(CoreError::invalid(
                    format!("{key}.tag"),
                    format!("{:?}", m.tag),
                    "target (an obstacle's tag goes on the obstacle)",
                ));
            }
            if m.position_m.iter().chain([&m.yaw_deg]).any(|v| !v.is_finite())
                || m.position_m[0].abs() > half[0]
                || m.position_m[1].abs() > half[1]
            {
                return Err(CoreError::invalid(
                    format!("{key}.position_m"),
                    format!("{:?}, yaw {}", m.position_m, m.yaw_deg),
                    "finite numbers, a point on the ground (ground.size_m)",
                ));
            }
            if !(m.height_m.is_finite() && (0.0..=MAX_START_HEIGHT_M).contains(&m.height_m)) {
                return Err(CoreError::invalid(
                    format!("{key}.height_m"),
                    m.height_m,
                    format!("0 to {MAX_START_HEIGHT_M} m above the ground"),
                ));
            }
        }
        Ok(())
    }

    /// Every obstacle as boxes: hand-placed obstacles (a lath is a bar and two posts) and
    /// the maze's walls and bumps.
    pub fn boxes(&self) -> Result<Vec<WorldBox>> {
        let mut out = Vec::new();
        for o in &self.obstacles {
            let yaw = o.yaw_deg.to_radians();
            let friction = o.friction.unwrap_or(self.ground.friction);
            let [l, w, h] = o.size_m;
            match o.kind {
                ObstacleKind::Lath => {
                    let c = o.clearance_m.unwrap_or(0.0);
                    out.push(WorldBox {
                        name: format!("{}_bar", o.name),
                        kind: o.kind,
                        center: [o.position_m[0], o.position_m[1], c + h / 2.0],
                        yaw,
                        size: [l, w + 2.0 * LATH_POST_M, h],
                        friction,
                    });
                    for (side, s) in [("left", 1.0), ("right", -1.0)] {
                        let off = s * (w / 2.0 + LATH_POST_M / 2.0);
                        out.push(WorldBox {
                            name: format!("{}_post_{side}", o.name),
                            kind: o.kind,
                            center: [
                                o.position_m[0] - off * yaw.sin(),
                                o.position_m[1] + off * yaw.cos(),
                                c / 2.0,
                            ],
                            yaw,
                            size: [l, LATH_POST_M, c],
                            friction,
                        });
                    }
                }
                _ => out.push(WorldBox {
                    name: o.name.clone(),
                    kind: o.kind,
                    center: [o.position_m[0], o.position_m[1], h / 2.0],
                    yaw,
                    size: [l, w, h],
                    friction,
                }),
            }
        }
        if let Some(m) = &self.maze {
            out.extend(maze_boxes(m, self.ground.friction)?);
        }
        Ok(out)
    }
}

/// Walls on both sides of the maze's centre line (mitred offset polylines, one box per
/// straight stretch) and one box per bump.
fn maze_boxes(m: &Maze, friction: f64) -> Result<Vec<WorldBox>> {
    let CentreLine { points: pts, bumps } = m.centre_line()?;
    let half = m.corridor_width_m / 2.0 + m.wall_thickness_m / 2.0;
    let dir = |a: [f64; 2], b: [f64; 2]| {
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let n = (dx * dx + dy * dy).sqrt();
        [dx / n, dy / n]
    };
    let mut out = Vec::new();
    for (side_name, side) in [("left", 1.0), ("right", -1.0)] {
        // Offset polyline with mitred joints: offset = half (n1 + n2) / (1 + n1·n2).
        let n = pts.len();
        let normals: Vec<[f64; 2]> = (0..n - 1)
            .map(|i| {
                let d = dir(pts[i], pts[i + 1]);
                [-d[1] * side, d[0] * side]
            })
            .collect();
        let offset: Vec<[f64; 2]> = (0..n)
            .map(|i| {
                let (n1, n2) = (normals[i.saturating_sub(1)], normals[i.min(n - 2)]);
                let k = half / (1.0 + n1[0] * n2[0] + n1[1] * n2[1]);
                [pts[i][0] + k * (n1[0] + n2[0]), pts[i][1] + k * (n1[1] + n2[1])]
            })
            .collect();
        for i in 0..n - 1 {
            let (a, b) = (offset[i], offset[i + 1]);
            let len = ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2)).sqrt();
            out.push(WorldBox {
                name: format!("maze_wall_{side_name}_{i}"),
                kind: ObstacleKind::Wall,
                center: [(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0, m.wall_height_m / 2.0],
                yaw: (b[1] - a[1]).atan2(b[0] - a[0]),
                // Extend by the thickness so consecutive walls close their corners.
                size: [len + m.wall_thickness_m, m.wall_thickness_m, m.wall_height_m],
                friction,
            });
        }
    }
    for (i, b) in bumps.iter().enumerate() {
        out.push(WorldBox {
            name: format!("maze_bump_{i}"),
            kind: ObstacleKind::Bump,
            center: [b.center[0], b.center[1], m.bump_height_m / 2.0],
            yaw: b.heading,
            size: [m.bump_length_m, m.corridor_width_m, m.bump_height_m],
            friction,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn maze(seq: &str) -> Scenario {
        Scenario::from_yaml(
            &format!("name: m\nmaze: {{sequence: \"{seq}\", corridor_width_m: 1.0}}\n"),
            "t",
        )
        .unwrap()
    }

    #[test]
    fn maze_parts_chain_from_the_entrance_with_the_seed_lengths() {
        let s = maze("s l s b r");
        let parts = s.maze.as_ref().unwrap().parts().unwrap();
        let lengths: Vec<f64> = parts.iter().map(|p| p.length_m).collect();
        // Corner: y_o = W/2 + 0.7 = 1.2, |x_o| = W/2 + 0.075 + 0.625 = 1.2 at W = 1.
        assert_eq!(lengths, [2.0, 2.4, 2.0, 4.0, 2.4]);
        assert_eq!(parts[0].entry, [0.0, 0.0]);
        for w in parts.windows(2) {
            assert_eq!(w[0].exit, w[1].entry);
            assert_eq!(w[0].exit_heading, w[1].entry_heading);
        }
        let corner = parts[1];
        assert!((corner.exit[0] - 3.2).abs() < 1e-12 && (corner.exit[1] - 1.2).abs() < 1e-12);
        assert!((corner.exit_heading - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
        // The last part ends where the centre line does.
        let line = s.maze.as_ref().unwrap().centre_line().unwrap().points;
        let end = parts.last().unwrap().exit;
        let last = line.last().unwrap();
        assert!((end[0] - last[0]).abs() < 1e-12 && (end[1] - last[1]).abs() < 1e-12);
    }

    #[test]
    fn straight_maze_is_two_walls() {
        let s = maze("s s");
        let b = s.boxes().unwrap();
        assert_eq!(b.len(), 2, "collinear pieces merge: {b:?}");
        for w in &b {
            assert!((w.size[0] - (5.0 + 0.05)).abs() < 1e-12); // lead-in 1 + 2 × 2 m
            assert!((w.center[1].abs() - 0.525).abs() < 1e-12);
        }
    }

    #[test]
    fn corner_follows_the_seed_offsets() {
        let s = maze("s l s");
        let pts = s.maze.as_ref().unwrap().centre_line().unwrap().points;
        // W = 1: y_o = 1.2, |x_o| = 1.2; the exit heads +y after going 2 + 1.2 along x.
        let last = pts[pts.len() - 1];
        assert!(
            (last[0] - 3.2).abs() < 1e-12 && (last[1] - 3.2).abs() < 1e-12,
            "{pts:?}"
        );
        let walls = s.boxes().unwrap();
        assert_eq!(walls.len(), 4);
        // Every wall keeps W/2 + t/2 from the centre line at its middle.
        let r = maze("s r s");
        let pts = r.maze.as_ref().unwrap().centre_line().unwrap().points;
        assert!(pts[pts.len() - 1][1] < 0.0);
    }

    #[test]
    fn bump_piece() {
        let s = maze("b");
        let b = s.boxes().unwrap();
        let bump = b.iter().find(|b| b.kind == ObstacleKind::Bump).unwrap();
        assert_eq!(bump.center, [2.0, 0.0, 0.015]);
    }

    #[test]
    fn lath_is_a_bar_on_posts() {
        let s = Scenario::from_yaml(
            "name: l\nobstacles:\n  - {name: lath, kind: lath, position_m: [2, 0], size_m: [0.05, 0.6, 0.03], clearance_m: 0.15}\n",
            "t",
        )
        .unwrap();
        let b = s.boxes().unwrap();
        assert_eq!(b.len(), 3);
        assert!((b[0].center[2] - 0.165).abs() < 1e-12);
        assert!((b[1].center[1] - 0.315).abs() < 1e-12 && (b[1].size[2] - 0.15).abs() < 1e-12);
    }

    /// Tags (record 0047): old worlds load unchanged and untagged; a tag must fit its
    /// obstacle, a marker is the target; unknown tags are refused naming them; several
    /// robots' starts are checked like `robot_start`.
    #[test]
    fn tags_markers_and_several_starts() {
        let s = Scenario::from_yaml(
            "name: m\nrobot_starts: [{xyz: [0, 0, 0]}, {xyz: [1, 0.5, 0], yaw_deg: 30}]\nobstacles:\n  - {name: g, kind: ground_obstacle, position_m: [1, 0], size_m: [0.1, 0.8, 0.05], tag: ground_obstacle}\n  - {name: l, kind: lath, position_m: [2, 0], size_m: [0.04, 0.8, 0.02], clearance_m: 0.13, tag: lath}\n  - {name: w, kind: wall, position_m: [3, 0], size_m: [0.1, 1, 0.2]}\nmarkers:\n  - {name: t, tag: target, position_m: [2.5, 0], height_m: 0.05}\n",
            "t",
        )
        .unwrap();
        assert_eq!(s.robot_starts.len(), 2);
        assert_eq!(s.obstacles[0].tag, Some(Tag::GroundObstacle));
        assert_eq!(s.obstacles[2].tag, None);
        assert_eq!(s.obstacles[0].tagged_point(), [1.0, 0.0, 0.025]);
        assert!((s.obstacles[1].tagged_point()[2] - 0.14).abs() < 1e-12);
        assert_eq!(s.markers[0].tag.source_type(), 3);
        // Serialising a world without the new keys writes none of them.
        let old = Scenario::from_yaml(
            "name: a\nobstacles:\n  - {name: x, kind: wall, position_m: [0, 0], size_m: [1, 1, 1]}\n",
            "t",
        )
        .unwrap();
        let text = serde_yaml_ng::to_string(&old).unwrap();
        for key in ["tag", "markers", "robot_starts"] {
            assert!(!text.contains(key), "{text}");
        }
        for (text, needle) in [
            (
                "name: a\nobstacles:\n  - {name: x, kind: wall, position_m: [0, 0], size_m: [1, 1, 1], tag: doorway}\n",
                "doorway",
            ),
            (
                "name: a\nobstacles:\n  - {name: x, kind: wall, position_m: [0, 0], size_m: [1, 1, 1], tag: lath}\n",
                "obstacles[0].tag",
            ),
            (
                "name: a\nobstacles:\n  - {name: x, kind: ground_obstacle, position_m: [0, 0], size_m: [1, 1, 1], tag: target}\n",
                "obstacles[0].tag",
            ),
            (
                "name: a\nmarkers: [{name: t, tag: beacon, position_m: [1, 0]}]\n",
                "beacon",
            ),
            (
                "name: a\nmarkers: [{name: t, tag: lath, position_m: [1, 0]}]\n",
                "markers[0].tag",
            ),
            ("name: a\nmarkers: [{name: t, position_m: [1, 0]}]\n", "tag"),
            (
                "name: a\nobstacles:\n  - {name: t, kind: wall, position_m: [0, 0], size_m: [1, 1, 1]}\nmarkers: [{name: t, tag: target, position_m: [1, 0]}]\n",
                "markers[0].name",
            ),
            (
                "name: a\nmarkers: [{name: t, tag: target, position_m: [1, 0], height_m: -1}]\n",
                "markers[0].height_m",
            ),
            (
                "name: a\nrobot_starts: [{xyz: [0, 0, 0]}, {xyz: [0, 0, -1]}]\n",
                "robot_starts[1].xyz[2]",
            ),
            (
                "name: a\nground: {friction: 0.5, size_m: [4, 4]}\nrobot_starts: [{xyz: [0, 3, 0]}]\n",
                "robot_starts[0].xyz[1]",
            ),
        ] {
            let e = Scenario::from_yaml(text, "scen.yaml").unwrap_err().to_string();
            assert!(e.contains(needle) && e.contains("scen.yaml"), "{text}: {e}");
        }
    }

    #[test]
    fn bad_scenarios_name_the_key() {
        for (text, needle) in [
            ("name: a b\n", "name"),
            ("name: a\nphysics: {step_s: 0, real_time_factor: 1}\n", "physics.step_s"),
            (
                "name: a\nphysics: {step_s: 1e-9, real_time_factor: 1}\n",
                "physics.step_s",
            ),
            ("name: a\nground: {friction: -1, size_m: [1, 1]}\n", "ground.friction"),
            (
                "name: a\nobstacles:\n  - {name: x, kind: wall, position_m: [0, 0], size_m: [1, -1, 1]}\n",
                "obstacles[0].size_m[1]",
            ),
            (
                "name: a\nobstacles:\n  - {name: x, kind: lath, position_m: [0, 0], size_m: [1, 1, 1]}\n",
                "clearance_m",
            ),
            (
                "name: a\nobstacles:\n  - {name: x, kind: tree, position_m: [0, 0], size_m: [1, 1, 1]}\n",
                "tree",
            ),
            (
                "name: a\nobstacles:\n  - {name: x, kind: wall, position_m: [0, 0], size_m: [1, 1, 1]}\n  - {name: x, kind: wall, position_m: [0, 0], size_m: [1, 1, 1]}\n",
                "obstacles[1].name",
            ),
            ("name: a\nmaze: {sequence: \"s q\"}\n", "maze.sequence"),
            (
                "name: a\nmaze: {sequence: \"s\", corridor_width_m: 0}\n",
                "corridor_width_m",
            ),
            ("name: a\nwind: 3\n", "wind"),
            // Issue 18: physical ranges, not only finiteness.
            ("name: a\ngravity: [0, 0, -1.0e6]\n", "at most 100 m/s²"),
            ("name: a\nrobot_start: {xyz: [0, 0, -5]}\n", "robot_start.xyz[2]"),
            ("name: a\nrobot_start: {xyz: [0, 0, 50]}\n", "robot_start.xyz[2]"),
            (
                "name: a\nground: {friction: 0.5, size_m: [4, 4]}\nrobot_start: {xyz: [3, 0, 0]}\n",
                "robot_start.xyz[0]",
            ),
        ] {
            let e = Scenario::from_yaml(text, "scen.yaml").unwrap_err().to_string();
            assert!(e.contains(needle) && e.contains("scen.yaml"), "{text}: {e}");
        }
    }
}
