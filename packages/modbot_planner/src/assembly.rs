//! Assembly of six wheel-foot modules into the quadruped or the wheeled vehicle (seed-000
//! §5.2, Lua `get_target_state`, `assembly_step_up`, `connect`) and the role distribution
//! that precedes it (§5.3, Table 3.34, Lua `role_dist`), as data and pure functions.
//!
//! - Each role but Role#1 drives its module's reference point (the foot plate's lower tip)
//!   to a stage-1 staging point, then to a stage-2 pre-connection point, then links one of
//!   its ports to a port of Role#1 or Role#2. The targets are given, as the source's code
//!   gives them, relative to **Role#1's DetPoint** (0.102 m ahead of its reference point) in
//!   Role#1's frame, as (long, lat, γ).
//! - [`reference_frame`] turns them into Role#1's reference frame, which is what the
//!   thesis's Tables 3.16 and 3.31 print; [`target_pose`] into the world from Role#1's pose.
//! - [`distribute_roles`] picks Role#1 nearest the modules' centroid and gives every other
//!   role the free module nearest its quadruped stage-1 point, ties to the last module as
//!   the source's loop leaves them.
//!
//! Roles are numbered 1…6 as in the source (and `quadruped::LEG_ROLES`), modules by their
//! index (0 = Module#1), configurations by their names (`quadruped`, `wheeled`, as in the
//! plan rows) and ports by the module catalog's names (`F`, `L`, `R`, `BF`, `BS`).
//! The choices where the thesis and its code disagree are in decision record 0046.

use crate::sequencer::{Pose2, wrap_angle};

/// Distance from a module's reference point to its DetPoint along its heading, m (§2.2).
pub const DETPOINT_M: f64 = 0.102;

/// Why an assembly or role query was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AssemblyError {
    /// The source's configurations are `quadruped` and `wheeled`.
    #[error("configuration `{0}`: expected `quadruped` or `wheeled`")]
    UnknownConfiguration(String),
    /// Roles are 1…6, and Role#1 has no target.
    #[error("role {role}: expected {expected}")]
    Role {
        /// The role asked for.
        role: usize,
        /// What was expected.
        expected: &'static str,
    },
    /// Stages are 1 (staging point) and 2 (pre-connection point).
    #[error("stage {0}: expected 1 or 2")]
    Stage(usize),
    /// Role distribution needs exactly the six modules.
    #[error("{0} modules: role distribution needs exactly 6")]
    ModuleCount(usize),
    /// A position or heading that is not a finite number.
    #[error("module {module}: {what} = {value} is not a finite number")]
    NotFinite {
        /// Module index (0 = Module#1).
        module: usize,
        /// `x`, `y` or `yaw`.
        what: &'static str,
        /// The value.
        value: f64,
    },
}

/// A target relative to Role#1's DetPoint in Role#1's frame (the Lua's `long_cons`,
/// `lat_cons`, `gamma_cons`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Offset {
    /// Along Role#1's heading, m.
    pub long_m: f64,
    /// To Role#1's left, m.
    pub lat_m: f64,
    /// Heading relative to Role#1's, deg.
    pub yaw_deg: f64,
}

const fn off(long_m: f64, lat_m: f64, yaw_deg: f64) -> Offset {
    Offset { long_m, lat_m, yaw_deg }
}

/// The direction a module must walk a stage in (the Lua's `forced_direction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForcedDirection {
    /// The position controller's least-time choice (0).
    LeastTime,
    /// Backward gaits only (−1): the module backs its foot into its partner.
    Backward,
}

impl ForcedDirection {
    /// The value of the lone module's `goto` parameter `forced_direction`.
    pub fn goto_param(self) -> f64 {
        match self {
            Self::LeastTime => 0.0,
            Self::Backward => -1.0,
        }
    }
}

/// When a role may leave its staging point for the pre-connection point
/// (`assembly_step_up`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepUp {
    /// As soon as its stage 1 is done.
    AfterStage1,
    /// Once Role#2 is connected (quadruped Roles #5 and #6).
    Role2Connected,
    /// Once Role#2 is a stage ahead of it or connected (wheeled Roles #5 and #6).
    Role2AheadOrConnected,
}

impl StepUp {
    /// Whether a role at `own_stage` (its stage-1 point reached: 1) may go on to stage 2,
    /// with Role#2 at `role2_stage` and `role2_connected`.
    pub fn allows(self, own_stage: usize, role2_stage: usize, role2_connected: bool) -> bool {
        match self {
            Self::AfterStage1 => true,
            Self::Role2Connected => role2_connected,
            Self::Role2AheadOrConnected => role2_connected || role2_stage > own_stage,
        }
    }
}

/// One role's part in an assembly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoleTarget {
    /// The role, 2…6.
    pub role: usize,
    /// The staging point.
    pub stage1: Offset,
    /// The pre-connection point.
    pub stage2: Offset,
    /// How the module walks to the pre-connection point (stage 1 is always least time).
    pub stage2_direction: ForcedDirection,
    /// Its own port that links (the Lua's `conn_points[k]`).
    pub port: &'static str,
    /// The role it links to.
    pub partner_role: usize,
    /// The partner's port.
    pub partner_port: &'static str,
    /// When it may go on to stage 2.
    pub step_up: StepUp,
    /// It links only once Role#2 is connected (Roles #5 and #6, `connect`).
    pub connect_after_role2: bool,
}

const fn role(
    role: usize,
    stage1: Offset,
    stage2: Offset,
    stage2_direction: ForcedDirection,
    port: &'static str,
    partner: (usize, &'static str),
    step_up: StepUp,
) -> RoleTarget {
    RoleTarget {
        role,
        stage1,
        stage2,
        stage2_direction,
        port,
        partner_role: partner.0,
        partner_port: partner.1,
        step_up,
        connect_after_role2: role >= 5,
    }
}

use ForcedDirection::{Backward, LeastTime};
use StepUp::{AfterStage1, Role2AheadOrConnected, Role2Connected};

/// The quadruped's Roles #2…#6 (Lua `get_target_state`, conf_req 1): the body's back
/// half foot to foot, the legs wheel (F) to the body's sides.
#[rustfmt::skip]
pub const QUADRUPED: [RoleTarget; 5] = [
    role(2, off(-0.292, 0.0, 180.0), off(-0.112, 0.0, 180.0), Backward, "BS", (1, "BF"), AfterStage1),
    role(3, off(0.035, -0.23, 90.0), off(0.035, -0.19, 90.0), LeastTime, "F", (1, "R"), AfterStage1),
    role(4, off(0.035, 0.23, -90.0), off(0.035, 0.19, -90.0), LeastTime, "F", (1, "L"), AfterStage1),
    role(5, off(-0.239, -0.372, 90.0), off(-0.239, -0.19, 90.0), LeastTime, "F", (2, "L"), Role2Connected),
    role(6, off(-0.239, 0.372, -90.0), off(-0.239, 0.19, -90.0), LeastTime, "F", (2, "R"), Role2Connected),
];

/// The wheeled vehicle's Roles #2…#6 (conf_req 2): the same body, the wheels foot (BF) to
/// the body's sides, facing out, backed in. Roles #5/#6 stage at lat ±0.372 as the code
/// has it (Table 3.31 prints ±0.230; record 0046).
#[rustfmt::skip]
pub const WHEELED: [RoleTarget; 5] = [
    role(2, off(-0.292, 0.0, 180.0), off(-0.112, 0.0, 180.0), Backward, "BS", (1, "BF"), AfterStage1),
    role(3, off(0.035, -0.23, -90.0), off(0.035, -0.04, -90.0), Backward, "BF", (1, "R"), AfterStage1),
    role(4, off(0.035, 0.23, 90.0), off(0.035, 0.04, 90.0), Backward, "BF", (1, "L"), AfterStage1),
    role(5, off(-0.239, -0.372, -90.0), off(-0.239, -0.04, -90.0), Backward, "BF", (2, "L"), Role2AheadOrConnected),
    role(6, off(-0.239, 0.372, 90.0), off(-0.239, 0.04, 90.0), Backward, "BF", (2, "R"), Role2AheadOrConnected),
];

/// The role table of a configuration (`quadruped` or `wheeled`).
pub fn roles(configuration: &str) -> Result<&'static [RoleTarget; 5], AssemblyError> {
    match configuration {
        "quadruped" => Ok(&QUADRUPED),
        "wheeled" => Ok(&WHEELED),
        other => Err(AssemblyError::UnknownConfiguration(other.to_string())),
    }
}

/// One role's entry of a configuration's table.
pub fn role_target(configuration: &str, role: usize) -> Result<&'static RoleTarget, AssemblyError> {
    roles(configuration)?
        .iter()
        .find(|r| r.role == role)
        .ok_or(AssemblyError::Role {
            role,
            expected: "2…6 (Role#1 is the anchor and has no target)",
        })
}

/// A role's target at `stage` (1 or 2).
pub fn stage_offset(configuration: &str, role: usize, stage: usize) -> Result<Offset, AssemblyError> {
    let r = role_target(configuration, role)?;
    match stage {
        1 => Ok(r.stage1),
        2 => Ok(r.stage2),
        s => Err(AssemblyError::Stage(s)),
    }
}

/// An offset in Role#1's reference frame (origin at its reference point): (x, y, γ deg),
/// x = long + 0.102. What Tables 3.16 and 3.31 print.
pub fn reference_frame(offset: Offset) -> (f64, f64, f64) {
    (offset.long_m + DETPOINT_M, offset.lat_m, offset.yaw_deg)
}

/// The world pose of a target from Role#1's pose (its reference point and heading):
/// DetPoint + R(γ₁)·(long, lat), heading γ₁ + γ (the source's goal for `move_single`).
pub fn target_pose(role1: Pose2, offset: Offset) -> Pose2 {
    let (c, s) = (role1.yaw.cos(), role1.yaw.sin());
    let long = DETPOINT_M + offset.long_m;
    Pose2 {
        x: role1.x + c * long - s * offset.lat_m,
        y: role1.y + s * long + c * offset.lat_m,
        yaw: wrap_angle(role1.yaw + offset.yaw_deg.to_radians()),
    }
}

/// Which point of Role#1 the role distribution's staging points hang from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StagingOrigin {
    /// Its DetPoint, as the assembly's targets do (modbot's default, record 0046).
    DetPoint,
    /// Its reference point, as the Lua's `role_dist` does (0.102 m behind the points the
    /// modules are later sent to).
    ReferencePoint,
}

/// The outcome of the role distribution.
#[derive(Debug, Clone, PartialEq)]
pub struct RoleAssignment {
    /// `modules[r - 1]` is the module (index, 0 = Module#1) that takes Role#r.
    pub modules: [usize; 6],
    /// The modules' centroid (x, y), m.
    pub centroid: [f64; 2],
    /// The staging points the roles were assigned by, Role#2…#6 (world x, y), m.
    pub staging: [[f64; 2]; 5],
}

impl RoleAssignment {
    /// The module that takes `role` (1…6).
    pub fn module(&self, role: usize) -> Option<usize> {
        role.checked_sub(1).and_then(|r| self.modules.get(r)).copied()
    }

    /// The role (1…6) of `module`.
    pub fn role_of(&self, module: usize) -> Option<usize> {
        self.modules.iter().position(|&m| m == module).map(|r| r + 1)
    }
}

/// The index of the smallest of `d`, ties to the **last** (the Lua's `for i = 1, 6 … if
/// dist_min == dist[i]` overwrites its choice at every match).
fn last_nearest(d: &[f64]) -> usize {
    let min = d.iter().copied().fold(f64::INFINITY, f64::min);
    d.iter().rposition(|&v| v == min).unwrap_or(0)
}

/// The role distribution (§5.3, Table 3.34, Lua `role_dist`) over the six modules' poses
/// (their reference points and headings, world or Module#1's frame): Role#1 is the module
/// nearest the centroid; the staging points of Roles #2…#6 are the **quadruped** stage-1
/// targets from Role#1's pose (for both configurations, as the source); in order i = 2…6,
/// Role#i takes the not yet assigned module nearest its point. Distances are Euclidean in
/// the plane; exact ties go to the module of the highest index. Only Role#1's heading is
/// used.
pub fn distribute_roles(modules: &[Pose2], origin: StagingOrigin) -> Result<RoleAssignment, AssemblyError> {
    if modules.len() != 6 {
        return Err(AssemblyError::ModuleCount(modules.len()));
    }
    for (i, m) in modules.iter().enumerate() {
        for (what, value) in [("x", m.x), ("y", m.y), ("yaw", m.yaw)] {
            if !value.is_finite() {
                return Err(AssemblyError::NotFinite { module: i, what, value });
            }
        }
    }
    let centroid = [
        modules.iter().map(|m| m.x).sum::<f64>() / 6.0,
        modules.iter().map(|m| m.y).sum::<f64>() / 6.0,
    ];
    let dist = |m: &Pose2, p: [f64; 2]| (p[0] - m.x).hypot(p[1] - m.y);
    let first = last_nearest(&modules.iter().map(|m| dist(m, centroid)).collect::<Vec<_>>());
    let mut assigned = [first; 6];
    let mut taken = [false; 6];
    taken[first] = true;
    let mut anchor = modules[first];
    if origin == StagingOrigin::ReferencePoint {
        // The Lua adds the DetPoint-relative constants to the reference point.
        anchor.x -= DETPOINT_M * anchor.yaw.cos();
        anchor.y -= DETPOINT_M * anchor.yaw.sin();
    }
    let mut staging = [[0.0; 2]; 5];
    for (k, r) in QUADRUPED.iter().enumerate() {
        let g = target_pose(anchor, r.stage1);
        staging[k] = [g.x, g.y];
        let d: Vec<f64> = modules
            .iter()
            .enumerate()
            .map(|(i, m)| if taken[i] { f64::INFINITY } else { dist(m, staging[k]) })
            .collect();
        let pick = last_nearest(&d);
        taken[pick] = true;
        assigned[r.role - 1] = pick;
    }
    Ok(RoleAssignment {
        modules: assigned,
        centroid,
        staging,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pose(x: f64, y: f64, yaw_deg: f64) -> Pose2 {
        Pose2 {
            x,
            y,
            yaw: yaw_deg.to_radians(),
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    /// Table 3.16 (quadruped, module reference points in Role#1's frame before the final
    /// connection) from the code's stage-1 values: Roles #3…#6 exactly; Role#2 at the
    /// code's −0.190, where the table prints −0.175 (record 0046).
    #[test]
    fn quadruped_stage_1_reproduces_table_3_16() {
        let table: [(usize, f64, f64, f64); 5] = [
            (2, -0.175, 0.0, 180.0),
            (3, 0.137, -0.230, 90.0),
            (4, 0.137, 0.23, -90.0),
            (5, -0.137, -0.372, 90.0),
            (6, -0.137, 0.372, -90.0),
        ];
        for (role, x, y, g) in table {
            let (rx, ry, rg) = reference_frame(stage_offset("quadruped", role, 1).unwrap());
            if role == 2 {
                assert!(close(rx, -0.190) && !close(rx, x), "Role#2 at {rx}");
            } else {
                assert!(close(rx, x), "role {role}: x {rx} vs {x}");
            }
            assert!(close(ry, y) && rg == g, "role {role}: ({ry}, {rg}) vs ({y}, {g})");
        }
    }

    /// Table 3.31 (wheeled) from the code's stage-1 values: Roles #2…#4 and the x and γ of
    /// #5/#6 exactly; #5/#6 at the code's lat ∓0.372 where the table prints ∓0.230.
    #[test]
    fn wheeled_stage_1_reproduces_table_3_31() {
        let table: [(usize, f64, f64, f64); 5] = [
            (2, -0.175, 0.0, 180.0),
            (3, 0.137, -0.230, -90.0),
            (4, 0.137, 0.230, 90.0),
            (5, -0.137, -0.230, -90.0),
            (6, -0.137, 0.230, 90.0),
        ];
        for (role, x, y, g) in table {
            let (rx, ry, rg) = reference_frame(stage_offset("wheeled", role, 1).unwrap());
            assert!(close(rx, if role == 2 { -0.190 } else { x }), "role {role}: x {rx}");
            assert_eq!(rg, g, "role {role}");
            match role {
                5 | 6 => assert!(close(ry, 0.372 * y.signum()) && !close(ry, y), "role {role}: y {ry}"),
                _ => assert!(close(ry, y), "role {role}: y {ry} vs {y}"),
            }
        }
    }

    /// The §5.2 table as data: stage-2 points, forced directions, links, step-up rules.
    #[test]
    fn stage_2_links_and_rules_are_the_codes() {
        let s2 = |c: &str, r: usize| reference_frame(stage_offset(c, r, 2).unwrap());
        assert_eq!(s2("quadruped", 2), (-0.112 + DETPOINT_M, 0.0, 180.0));
        assert_eq!(s2("quadruped", 3), (0.035 + DETPOINT_M, -0.19, 90.0));
        assert_eq!(s2("quadruped", 6), (-0.239 + DETPOINT_M, 0.19, -90.0));
        assert_eq!(s2("wheeled", 4), (0.035 + DETPOINT_M, 0.04, 90.0));
        assert_eq!(s2("wheeled", 5), (-0.239 + DETPOINT_M, -0.04, -90.0));
        let links = |c: &str| {
            roles(c)
                .unwrap()
                .iter()
                .map(|r| (r.role, r.port, r.partner_role, r.partner_port))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            links("quadruped"),
            [
                (2, "BS", 1, "BF"),
                (3, "F", 1, "R"),
                (4, "F", 1, "L"),
                (5, "F", 2, "L"),
                (6, "F", 2, "R")
            ]
        );
        assert_eq!(
            links("wheeled"),
            [
                (2, "BS", 1, "BF"),
                (3, "BF", 1, "R"),
                (4, "BF", 1, "L"),
                (5, "BF", 2, "L"),
                (6, "BF", 2, "R")
            ]
        );
        let dirs = |c: &str| roles(c).unwrap().map(|r| r.stage2_direction);
        assert_eq!(
            dirs("quadruped"),
            [Backward, LeastTime, LeastTime, LeastTime, LeastTime]
        );
        assert_eq!(dirs("wheeled"), [Backward; 5]);
        assert_eq!(Backward.goto_param(), -1.0);
        assert_eq!(LeastTime.goto_param(), 0.0);
        // Step-up: Roles 2–4 at once; quadruped 5/6 only once Role#2 is connected; wheeled
        // 5/6 also when Role#2 is a stage ahead. 5/6 link only after Role#2 has.
        for c in ["quadruped", "wheeled"] {
            for r in roles(c).unwrap() {
                assert_eq!(r.connect_after_role2, r.role >= 5);
                let ahead = r.step_up.allows(1, 2, false);
                let connected = r.step_up.allows(1, 2, true);
                let neither = r.step_up.allows(1, 1, false);
                let want = match (c, r.role) {
                    (_, 2..=4) => (true, true, true),
                    ("quadruped", _) => (false, true, false),
                    _ => (true, true, false),
                };
                assert_eq!((ahead, connected, neither), want, "{c} role {}", r.role);
            }
        }
        assert!(matches!(roles("snake"), Err(AssemblyError::UnknownConfiguration(_))));
        assert!(matches!(
            role_target("wheeled", 1),
            Err(AssemblyError::Role { role: 1, .. })
        ));
        assert!(matches!(stage_offset("wheeled", 3, 3), Err(AssemblyError::Stage(3))));
    }

    /// Table 3.1's dummies (module frame, x along the module, z up): where a link's two
    /// ports meet once every module stands on its stage-2 point (joints at zero, Role#2
    /// linked): each module's port is within 1.5 cm of its partner's (0.7 cm for the legs'
    /// wheels, 1.0 cm for Role#2's plate, 1.5 cm for the wheels' plates).
    #[test]
    fn stage_2_puts_each_port_next_to_its_partners() {
        let dummy = |name: &str| -> [f64; 2] {
            match name {
                "F" => [0.172, 0.0],
                "L" => [0.137, 0.025],
                "R" => [0.137, -0.025],
                _ => [0.0, 0.0], // BF, BS: the plate centre
            }
        };
        let at = |p: Pose2, name: &str| {
            let d = dummy(name);
            [
                p.x + p.yaw.cos() * d[0] - p.yaw.sin() * d[1],
                p.y + p.yaw.sin() * d[0] + p.yaw.cos() * d[1],
            ]
        };
        let role1 = pose(0.4, -0.2, 35.0);
        // Role#2 once linked: its plate on Role#1's, facing back.
        let role2 = Pose2 {
            yaw: wrap_angle(role1.yaw + std::f64::consts::PI),
            ..role1
        };
        for c in ["quadruped", "wheeled"] {
            for r in roles(c).unwrap() {
                let me = target_pose(role1, r.stage2);
                let partner = if r.partner_role == 1 { role1 } else { role2 };
                let (a, b) = (at(me, r.port), at(partner, r.partner_port));
                let gap = (a[0] - b[0]).hypot(a[1] - b[1]);
                assert!(gap <= 0.015 + 1e-9, "{c} role {}: gap {gap}", r.role);
            }
        }
    }

    /// The link table is the one the shipped robot files build the two shapes with
    /// (`config/robots/{quadruped,wheeled}.yaml`, module `roleN` = Role#N). The wheeled file
    /// joins the wheels by `BS` where the source's `connect` uses `BF` (conn_points[2]):
    /// the catalog puts both at the same frame (record 0023), so the joint is the same.
    #[test]
    fn the_links_are_the_shipped_robot_files() {
        use modbot_core::ModuleCatalog;
        use modbot_core::topology::RobotFile;
        let kind = ModuleCatalog::builtin().kind("wheelfoot").cloned().unwrap();
        assert_eq!(kind.ports["BF"], kind.ports["BS"]);
        for (c, text) in [
            ("quadruped", include_str!("../../../config/robots/quadruped.yaml")),
            ("wheeled", include_str!("../../../config/robots/wheeled.yaml")),
        ] {
            let file: RobotFile = serde_yaml_ng::from_str(text).unwrap();
            let same = |a: &str, b: &str| a.replace(".BS", ".BF") == b.replace(".BS", ".BF");
            assert_eq!(file.connections.len(), 5, "{c}");
            for r in roles(c).unwrap() {
                let mine = format!("role{}.{}", r.role, r.port);
                let theirs = format!("role{}.{}", r.partner_role, r.partner_port);
                assert!(
                    file.connections
                        .iter()
                        .any(|k| (same(&k.from, &theirs) && same(&k.to, &mine))
                            || (same(&k.from, &mine) && same(&k.to, &theirs))),
                    "{c}: no connection {mine} – {theirs} in {:?}",
                    file.connections
                );
            }
        }
    }

    /// World targets: DetPoint + R(γ₁)·(long, lat), heading γ₁ + γ, wrapped.
    #[test]
    fn world_targets_turn_with_role_1() {
        let p = target_pose(pose(1.0, 2.0, 90.0), stage_offset("quadruped", 3, 1).unwrap());
        // Facing +y: long goes along +y, lat (−0.23, to the right) along +x.
        assert!(close(p.x, 1.23) && close(p.y, 2.0 + 0.137), "{p:?}");
        assert!(close(p.yaw, std::f64::consts::PI), "{p:?}");
        let p = target_pose(pose(0.0, 0.0, 0.0), stage_offset("wheeled", 2, 2).unwrap());
        assert!(
            close(p.x, -0.010) && close(p.y, 0.0) && close(p.yaw, std::f64::consts::PI),
            "{p:?}"
        );
    }

    /// Six modules on the quadruped's stage-1 points around Module#4 (shuffled): Role#1 is
    /// the one at the centroid, and every role gets the module on its own point.
    #[test]
    fn modules_on_their_staging_points_get_those_roles() {
        let role1 = pose(0.3, 0.1, 30.0);
        let mut modules = vec![role1; 6];
        // Module k stands on role order[k]'s point.
        let order = [5, 2, 6, 1, 3, 4];
        for (k, &r) in order.iter().enumerate() {
            if r != 1 {
                modules[k] = target_pose(role1, stage_offset("quadruped", r, 1).unwrap());
            }
        }
        // The centroid of these points is nearer Role#1's spot than any other.
        let a = distribute_roles(&modules, StagingOrigin::DetPoint).unwrap();
        assert_eq!(a.modules, [3, 1, 4, 5, 0, 2]);
        for (k, &r) in order.iter().enumerate() {
            assert_eq!(a.role_of(k), Some(r));
            assert_eq!(a.module(r), Some(k));
        }
        assert_eq!(a.module(0), None);
        assert_eq!(a.module(7), None);
    }

    /// A scattered scene worked by hand: centroid (0, 0); module 2 at (0.05, 0) is nearest
    /// and takes Role#1, facing 45°, which turns the staging points: #2 (−0.084, −0.134)
    /// takes module 0 (0.343 away), #3 (0.310, −0.066) module 1, #4 (−0.016, 0.260)
    /// module 5 (0.053; module 3 is 0.323 away), #5 (0.216, −0.360) module 4, #6 module 3.
    #[test]
    fn greedy_assignment_in_role_order() {
        let m = [
            pose(-0.4, 0.0, 0.0),
            pose(0.3, -0.3, 0.0),
            pose(0.05, 0.0, 45.0),
            pose(0.2, 0.5, 0.0),
            pose(-0.1, -0.5, 0.0),
            pose(-0.05, 0.3, 0.0),
        ];
        let sum: f64 = m.iter().map(|p| p.x).sum();
        assert!(close(sum, 0.0));
        // Role#1 = module 2 (0.05 from the centroid); its heading 45° turns the points.
        let a = distribute_roles(&m, StagingOrigin::DetPoint).unwrap();
        assert_eq!(a.modules[0], 2);
        let g2 = target_pose(m[2], QUADRUPED[0].stage1);
        assert!(close(a.staging[0][0], g2.x) && close(a.staging[0][1], g2.y));
        // Check each pick against a brute-force nearest among the free modules.
        let mut free: Vec<usize> = (0..6).filter(|&i| i != 2).collect();
        for (k, r) in QUADRUPED.iter().enumerate() {
            let g = a.staging[k];
            let best = free
                .iter()
                .copied()
                .min_by(|&i, &j| {
                    let di = (m[i].x - g[0]).hypot(m[i].y - g[1]);
                    let dj = (m[j].x - g[0]).hypot(m[j].y - g[1]);
                    di.total_cmp(&dj)
                })
                .unwrap();
            assert_eq!(a.modules[r.role - 1], best, "role {}", r.role);
            free.retain(|&i| i != best);
        }
        assert_eq!(a.modules, [2, 0, 1, 5, 4, 3]);
    }

    /// Exact ties go to the module of the highest index, as the Lua's loop leaves them:
    /// for Role#1 (two modules equally near the centroid) and for a staging point (two free
    /// modules mirrored about it).
    #[test]
    fn ties_go_to_the_last_module() {
        // Modules 1 and 4 both 0.125 from the centroid (0, 0) (binary fractions: the sums
        // and distances are exact); 4 wins.
        let m = [
            pose(1.0, 0.0, 0.0),
            pose(0.125, 0.0, 0.0),
            pose(-1.0, 0.5, 0.0),
            pose(0.0, 1.0, 0.0),
            pose(-0.125, 0.0, 0.0),
            pose(0.0, -1.5, 0.0),
        ];
        let c = [m.iter().map(|p| p.x).sum::<f64>(), m.iter().map(|p| p.y).sum::<f64>()];
        assert_eq!(c, [0.0, 0.0]);
        let a = distribute_roles(&m, StagingOrigin::DetPoint).unwrap();
        assert_eq!(a.modules[0], 4);
        // Role#1 facing +x at the origin: Role#2's point is (−0.190, 0). Modules 1 and 3 at
        // (−0.190, ±0.25) are equally near; 3 wins. (Module 0 sits on the centroid.)
        let m = [
            pose(0.0, 0.0, 0.0),
            pose(-0.190, 0.25, 0.0),
            pose(2.0, 0.0, 0.0),
            pose(-0.190, -0.25, 0.0),
            pose(-1.0, 0.0, 0.0),
            pose(-0.62, 0.0, 0.0),
        ];
        let c: f64 = m.iter().map(|p| p.x).sum::<f64>() / 6.0;
        assert!(close(c, 0.0) && close(m.iter().map(|p| p.y).sum::<f64>(), 0.0));
        let a = distribute_roles(&m, StagingOrigin::DetPoint).unwrap();
        assert_eq!(a.modules[0], 0);
        assert!(close(a.staging[0][0], -0.190) && a.staging[0][1] == 0.0);
        assert_eq!(a.modules[1], 3, "the tie goes to the last module");
    }

    /// The Lua's staging points hang from Role#1's reference point: 0.102 m behind ours.
    /// A module halfway between the two versions of Role#2's point goes the other way.
    #[test]
    fn the_lua_origin_shifts_the_staging_points_by_the_detpoint() {
        let m = [
            pose(0.0, 0.0, 0.0),
            pose(-0.18, 0.0, 0.0),  // 0.010 from (−0.190, 0), 0.112 from (−0.292, 0)
            pose(-0.30, 0.02, 0.0), // 0.112 from (−0.190, 0), 0.021 from (−0.292, 0)
            pose(0.5, -0.3, 0.0),
            pose(0.5, 0.3, 0.0),
            pose(-0.52, -0.02, 0.0),
        ];
        let ours = distribute_roles(&m, StagingOrigin::DetPoint).unwrap();
        let lua = distribute_roles(&m, StagingOrigin::ReferencePoint).unwrap();
        assert_eq!((ours.modules[0], lua.modules[0]), (0, 0));
        assert_eq!(ours.staging[0], [-0.190, 0.0]);
        assert!(close(lua.staging[0][0], -0.292) && close(lua.staging[0][1], 0.0));
        assert_eq!((ours.modules[1], lua.modules[1]), (1, 2));
        for k in 0..5 {
            assert!(close(ours.staging[k][0] - lua.staging[k][0], DETPOINT_M));
        }
    }

    proptest::proptest! {
        /// Any six finite poses: the roles are a permutation of the modules, Role#1 is as
        /// near the centroid as any module, and each Role#i is as near its staging point as
        /// any module still free when its turn came (the greedy rule, checked against the
        /// distances themselves), on either origin.
        #[test]
        fn roles_are_a_greedy_permutation(
            xy in proptest::collection::vec((-2.0f64..2.0, -2.0f64..2.0, -180.0f64..180.0), 6),
            lua in proptest::bool::ANY,
        ) {
            let m: Vec<Pose2> = xy.iter().map(|&(x, y, g)| pose(x, y, g)).collect();
            let origin = if lua { StagingOrigin::ReferencePoint } else { StagingOrigin::DetPoint };
            let a = distribute_roles(&m, origin).unwrap();
            let mut sorted = a.modules;
            sorted.sort_unstable();
            proptest::prop_assert_eq!(sorted, [0, 1, 2, 3, 4, 5]);
            let d = |i: usize, p: [f64; 2]| (m[i].x - p[0]).hypot(m[i].y - p[1]);
            let first = a.modules[0];
            proptest::prop_assert!((0..6).all(|i| d(first, a.centroid) <= d(i, a.centroid)));
            let mut free: Vec<usize> = (0..6).filter(|&i| i != first).collect();
            for k in 0..5 {
                let pick = a.modules[k + 1];
                proptest::prop_assert!(free.contains(&pick));
                proptest::prop_assert!(free.iter().all(|&i| d(pick, a.staging[k]) <= d(i, a.staging[k])));
                free.retain(|&i| i != pick);
            }
            // The staging points are the quadruped's stage-1 targets from Role#1's pose.
            let mut anchor = m[first];
            if lua {
                anchor.x -= DETPOINT_M * anchor.yaw.cos();
                anchor.y -= DETPOINT_M * anchor.yaw.sin();
            }
            for (k, r) in QUADRUPED.iter().enumerate() {
                let g = target_pose(anchor, r.stage1);
                proptest::prop_assert!((g.x - a.staging[k][0]).abs() < 1e-12 && (g.y - a.staging[k][1]).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn bad_input_is_refused_by_name() {
        let six = vec![pose(0.0, 0.0, 0.0); 6];
        assert_eq!(
            distribute_roles(&six[..5], StagingOrigin::DetPoint),
            Err(AssemblyError::ModuleCount(5))
        );
        assert_eq!(
            distribute_roles(&[six.clone(), six.clone()].concat(), StagingOrigin::DetPoint),
            Err(AssemblyError::ModuleCount(12))
        );
        let mut bad = six.clone();
        bad[3].yaw = f64::NAN;
        let e = distribute_roles(&bad, StagingOrigin::DetPoint).unwrap_err();
        assert!(
            matches!(
                e,
                AssemblyError::NotFinite {
                    module: 3,
                    what: "yaw",
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("module 3: yaw = NaN"), "{e}");
        let mut bad = six;
        bad[0].x = f64::INFINITY;
        assert!(matches!(
            distribute_roles(&bad, StagingOrigin::DetPoint),
            Err(AssemblyError::NotFinite {
                module: 0,
                what: "x",
                ..
            })
        ));
    }
}
