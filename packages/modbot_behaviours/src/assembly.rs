//! The assembly (seed-000 §5.2; decision records 0048, 0049, 0050, 0058, 0059) as a state
//! machine on the robot interface: six lone wheel-foot modules with their roles become a
//! quadruped or a wheeled vehicle.
//!
//! - **Stage 1, to the staging point.** Each of Roles #2…#6 walks with the lone module's
//!   position controller (`SingleGoto`, Table 3.15) to its staging point, which hangs from
//!   Role#1 as Role#1 knows itself: its camera's estimate of its reference point (from the
//!   shared point on) and its compass. The walking module knows where it is only through its
//!   own camera ([`LockOn`]) on the modelled landmarks and the other modules' DetPoints as
//!   they share them: Role#1's (primary), a staged or docked module's from its place in
//!   Role#1's frame (secondary), another walking module's own estimate (floating). It walks
//!   round the assembly ([`route_around`]), round a module standing in its way ([`detour`]),
//!   and stands while a walking module of a lower role is within [`YIELD_M`].
//! - **Stage 2, docking.** Its step-up rule allowing (Table 3.31), the module docks by its
//!   port's docking sensor and connector ([`Docking`]); Roles #5/#6 start only once Role#2
//!   is docked (their partner faces are Role#2's). A docking that fails sends the module back
//!   to its staging point, at most [`REAPPROACHES`] times.
//! - **conf_init.** All docked, each FrontJoint is switched to the configuration's control
//!   mode (a servo for the hips and the body's wheels, a speed drive for the vehicle's
//!   wheels) and the configuration's controller takes its initial pose for [`CONF_INIT_S`]
//!   through [`ConfigurationJoints`], the fleet's joints as one robot's.
//!
//! Nothing here reads a position from anywhere but a sensor: no link pose, no port fit.

use std::collections::BTreeMap;
use std::fmt;

use modbot_core::catalog::Actuator;
use modbot_core::{ModuleCatalog, Topology};
use modbot_gaits::modular::quadruped::{QuadGait, QuadWalk};
use modbot_gaits::modular::single::{Direction, GotoPhase, HeadingBands, SingleGoto, StepTable};
use modbot_gaits::modular::wheeled::{WheelCommand, WheeledDrive, WheeledPose};
use modbot_gaits::modular::{Goal, ModuleJoints, wrap_rad};
use modbot_gaits::{Controller, Observation};
use modbot_planner::assembly::{ForcedDirection, Offset, RoleTarget, role_target, target_pose};
use modbot_planner::sequencer::Pose2;
use nalgebra::{Isometry3, Translation3, Vector3};

use crate::docking::{Docking, DockingOrder, DockingState, on_wheel, wheel_roll};
use crate::interface::{ControlMode, JointTarget, Module, Modules, Monotonic};
use crate::lockon::{Landmark, LockOn};
use crate::scan::{PAN_AXIS_AHEAD_M, module_id};

/// Simulated time one stage may take before the assembly gives up, s.
pub const STAGE_TIMEOUT_S: f64 = 180.0;
/// How many times a module whose docking failed walks back to its staging point and comes
/// in again before the assembly ends.
pub const REAPPROACHES: usize = 2;
/// A walking module whose foot plate rolls more than this about its long axis has tipped
/// over, deg.
pub const TIPPED_DEG: f64 = 45.0;
/// A module walking to its staging point stands while a module of a lower role number,
/// also walking to its staging point, is this close by their shared positions, m (two
/// modules side by side on the ring tipped each other over; record 0050).
pub const YIELD_M: f64 = 0.25;
/// A module walking to its staging point steers round a module that gives way to it (a
/// walking module of a higher role number, which stands while it is within [`YIELD_M`])
/// when that one stands within this distance ahead on its way, m.
pub const DETOUR_AHEAD_M: f64 = 0.5;
/// ... and within this distance of its line, passing it this far to the side, m: a module is
/// 0.172 m long from its reference point (the positions shared), so two reference points
/// this far apart keep the bodies clear in any orientation.
pub const DETOUR_CLEAR_M: f64 = 0.3;
/// How far past the standing module the side-step goal lies along the way, m (turning back
/// onto its way there, the walker's body swings clear of it).
pub const DETOUR_PAST_M: f64 = 0.15;
/// Time the finished configuration is given to take its initial pose, s.
pub const CONF_INIT_S: f64 = 3.0;
/// Centre of the assembly's footprint, along Role#1's heading from its DetPoint, m: half
/// way between Role#1's body and Role#2's (record 0049).
pub const CORE_CENTRE_LONG_M: f64 = -0.1;
/// Radius of the ring a module walks around the assembly on, m: outside every staging
/// point (0.40 m for Roles #5/#6) and the body of a module waiting there (0.56 m).
pub const RING_M: f64 = 0.7;
/// How far round the ring the walking goal leads the module, deg.
pub const RING_LEAD_DEG: f64 = 45.0;
/// A module comes in to its staging point once it is within this angle of it about the
/// assembly's centre, deg.
pub const RADIAL_DEG: f64 = 20.0;

/// The goal a module at `from` walks to on its way to the staging point `goal` with the
/// assembly anchored at Role#1's `role1` (record 0049). The source's modules walk straight
/// to their staging points and push through whatever is in the way (in our simulator a
/// module walking to its staging point knocked over one waiting at its own and the
/// assembly stopped); ours walk anticlockwise round a ring about the assembly's centre (a
/// goal leading them [`RING_LEAD_DEG`] round, heading along the way; one way round, so
/// that two never meet head-on) until they are within [`RADIAL_DEG`] of their staging
/// point, and come in about radially, past the docked modules and those waiting at their
/// staging points. A module already no farther out than its staging point (plus 0.1 m)
/// goes straight.
pub fn route_around(role1: Pose2, from: Pose2, goal: Pose2) -> Pose2 {
    let c = target_pose(
        role1,
        Offset {
            long_m: CORE_CENTRE_LONG_M,
            lat_m: 0.0,
            yaw_deg: 0.0,
        },
    );
    let (fx, fy) = (from.x - c.x, from.y - c.y);
    let (gx, gy) = (goal.x - c.x, goal.y - c.y);
    let a_from = fy.atan2(fx);
    let d = wrap_rad(gy.atan2(gx) - a_from);
    if fx.hypot(fy) <= gx.hypot(gy) + 0.1 || d.abs() <= RADIAL_DEG.to_radians() {
        return goal;
    }
    // Always anticlockwise, so that two modules on the ring never meet head-on (they did,
    // and stopped each other).
    let ccw = d.rem_euclid(std::f64::consts::TAU);
    let lead = RING_LEAD_DEG.to_radians();
    let a = a_from + ccw.min(lead);
    let (x, y) = (c.x + RING_M * a.cos(), c.y + RING_M * a.sin());
    Pose2 {
        x,
        y,
        yaw: (y - from.y).atan2(x - from.x),
    }
}

/// The goal a module at `from` walks to on its way to `goal` with modules standing at
/// `standing` (reference points): the nearest one less than [`DETOUR_AHEAD_M`] ahead along
/// the line to `goal` (and nearer than `goal`) and less than [`DETOUR_CLEAR_M`] from that
/// line is passed on the side away from it (on the right when it stands on the line, as the
/// ring is walked anticlockwise), by a goal [`DETOUR_CLEAR_M`] beside it and
/// [`DETOUR_PAST_M`] past it, facing that way; with nothing in the way, `goal`. The right of
/// way ([`YIELD_M`]) stops the module of the higher role where it stands, which was often on
/// the way of the other: the modules walking to their staging points tipped each other over
/// in four of fourteen seeded layouts (record 0049).
pub fn detour(from: Pose2, goal: Pose2, standing: &[[f64; 2]]) -> Pose2 {
    let (dx, dy) = (goal.x - from.x, goal.y - from.y);
    let dist = dx.hypot(dy);
    if dist < 1e-9 {
        return goal;
    }
    let (ux, uy) = (dx / dist, dy / dist);
    // Left normal.
    let (nx, ny) = (-uy, ux);
    let blocking = standing
        .iter()
        .map(|p| {
            let (rx, ry) = (p[0] - from.x, p[1] - from.y);
            (rx * ux + ry * uy, rx * nx + ry * ny, *p)
        })
        .filter(|&(along, lateral, _)| {
            along > 0.0 && along < DETOUR_AHEAD_M.min(dist) && lateral.abs() < DETOUR_CLEAR_M
        })
        .min_by(|a, b| a.0.total_cmp(&b.0));
    let Some((_, lateral, p)) = blocking else {
        return goal;
    };
    // Pass on the side away from it; on the right when it stands on the line.
    let side = if lateral < 0.0 { 1.0 } else { -1.0 };
    let x = p[0] + DETOUR_PAST_M * ux + side * DETOUR_CLEAR_M * nx;
    let y = p[1] + DETOUR_PAST_M * uy + side * DETOUR_CLEAR_M * ny;
    Pose2 {
        x,
        y,
        yaw: (y - from.y).atan2(x - from.x),
    }
}

/// What an assembly is asked to do.
#[derive(Debug, Clone)]
pub struct AssemblyOrder {
    /// The configuration: `quadruped` or `wheeled`.
    pub configuration: String,
    /// The module (index in the [`Modules`]) of each role, Role#1 first.
    pub roles: [usize; 6],
    /// The lone modules' inchworm steps and cycle times on this ground.
    pub table: StepTable,
    /// Every tagged object's modelled position by tag id (world x, y), m.
    pub landmarks: BTreeMap<String, [f64; 2]>,
    /// Role#1's reference point as the modules share it (world x, y), m.
    pub role1_xy: [f64; 2],
    /// Where the modelling placed each module (by module index; world x, y), m: a module
    /// whose camera has not yet found a landmark walks from there until it does; one not
    /// listed stands and looks.
    pub starts: BTreeMap<usize, [f64; 2]>,
    /// Roles (2…6) already docked (a reassembly's Role#2).
    pub connected: Vec<usize>,
}

/// Where one role is.
#[derive(Debug, Clone, PartialEq)]
pub enum RoleState {
    /// Walking to its staging point.
    ToStaging,
    /// Standing on the way to its staging point, and why.
    Waiting(String),
    /// At its staging point, waiting for its step-up rule.
    Staged,
    /// Docking.
    Docking(DockingState),
    /// Docked.
    Docked,
}

impl RoleState {
    /// The source's assembly counter: stages completed (a module settling or latching is at
    /// its pre-connection point).
    fn counter(&self) -> usize {
        match self {
            RoleState::ToStaging | RoleState::Waiting(_) => 0,
            RoleState::Docking(DockingState::Settling | DockingState::Latching) | RoleState::Docked => 2,
            RoleState::Staged | RoleState::Docking(_) => 1,
        }
    }
}

impl fmt::Display for RoleState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RoleState::ToStaging => write!(f, "walking to its staging point"),
            RoleState::Waiting(why) => write!(f, "standing: {why}"),
            RoleState::Staged => write!(f, "staged"),
            RoleState::Docking(d) => write!(f, "docking: {d}"),
            RoleState::Docked => write!(f, "docked"),
        }
    }
}

/// Where the assembly is.
#[derive(Debug, Clone, PartialEq)]
pub enum AssemblyState {
    /// Not ticked yet.
    Idle,
    /// Roles walking and docking: how many are docked.
    Gathering {
        /// Roles docked.
        docked: usize,
    },
    /// All docked: the configuration takes its initial pose.
    Initialising,
    /// Done.
    Assembled,
    /// Ended: the role concerned (0 for none) and why.
    Failed {
        /// The role, 0 for none.
        role: usize,
        /// Why.
        reason: String,
    },
}

impl fmt::Display for AssemblyState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AssemblyState::Idle => write!(f, "idle"),
            AssemblyState::Gathering { docked } => write!(f, "gathering ({docked} of 5 docked)"),
            AssemblyState::Initialising => write!(f, "taking the initial pose"),
            AssemblyState::Assembled => write!(f, "assembled"),
            AssemblyState::Failed { role: 0, reason } => write!(f, "failed: {reason}"),
            AssemblyState::Failed { role, reason } => write!(f, "failed, Role#{role}: {reason}"),
        }
    }
}

/// What happened to one role.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RoleRecord {
    /// The role, 2…6.
    pub role: usize,
    /// Its module (index).
    pub module: usize,
    /// When it reached its staging point, s (NaN if it did not).
    pub staged_s: f64,
    /// When it latched, s (NaN if it did not).
    pub docked_s: f64,
    /// Inchworm cycles it walked to its staging points.
    pub cycles: usize,
    /// Times it walked back to its staging point after a failed docking.
    pub reapproaches: usize,
    /// The roll its keyless (wheel) port latched at, deg (0 for a keyed port).
    pub wheel_roll_deg: f64,
    /// Its FrontJoint's encoder when it latched, deg.
    pub fj_at_dock_deg: f64,
}

/// The fleet's joints as one robot's: the modules' joint vectors one after another in role
/// order, so that a configuration's controller (written for one robot's joint vector)
/// reads and commands the modules. Each FrontJoint is read and commanded in the
/// configuration's terms, `nominal = encoder + offset`: a leg docked by its wheel port takes
/// its zero at the roll it latched with; every other FrontJoint reads 0 where the assembly
/// completed.
#[derive(Debug, Clone)]
pub struct ConfigurationJoints {
    /// Module of each role.
    modules: [usize; 6],
    /// Where each role's joints start in the joint vector.
    starts: [usize; 6],
    /// The joint vector's length.
    count: usize,
    /// Each role's joints in the joint vector.
    roles: [ModuleJoints; 6],
    /// Each role's FrontJoint offset, rad.
    offsets: [f64; 6],
}

impl ConfigurationJoints {
    /// The joints of `fleet`'s modules with roles `roles` (module of each role), FrontJoint
    /// offsets `offsets` (rad, Role#1 first).
    pub fn new(fleet: &dyn Modules, roles: [usize; 6], offsets: [f64; 6]) -> Result<ConfigurationJoints, String> {
        let mut starts = [0; 6];
        let mut joints = Vec::with_capacity(6);
        let mut count = 0;
        for (r, &m) in roles.iter().enumerate() {
            let io = fleet.module_ref(m).map_err(|e| e.to_string())?;
            let j = ModuleJoints::find("m1", io.joint_names())
                .ok_or_else(|| format!("module `{}` has no wheel-foot joints (m1_front_joint …)", io.name()))?;
            starts[r] = count;
            joints.push(ModuleJoints {
                fj: count + j.fj,
                bj1: count + j.bj1,
                bj2: count + j.bj2,
                pan: count + j.pan,
                tilt: count + j.tilt,
            });
            count += io.joint_names().len();
        }
        let roles_joints: [ModuleJoints; 6] = joints
            .try_into()
            .map_err(|_| "six roles have six modules".to_string())?;
        Ok(ConfigurationJoints {
            modules: roles,
            starts,
            count,
            roles: roles_joints,
            offsets,
        })
    }

    /// Each role's joints in the joint vector (what a configuration's controller takes).
    pub fn role_joints(&self) -> [ModuleJoints; 6] {
        self.roles
    }

    /// The joint vector's length.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The joints' positions and velocities, FrontJoints in the configuration's terms, and
    /// the newest stamp among them.
    pub fn read(&self, fleet: &dyn Modules) -> Result<(Vec<f64>, Vec<f64>), String> {
        let (mut q, mut v) = (Vec::with_capacity(self.count), Vec::with_capacity(self.count));
        for &m in &self.modules {
            let js = fleet
                .module_ref(m)
                .and_then(|io| io.joint_states())
                .map_err(|e| e.to_string())?;
            q.extend_from_slice(&js.position);
            v.extend_from_slice(&js.velocity);
        }
        for (j, c) in self.roles.iter().zip(self.offsets) {
            q[j.fj] += c;
        }
        Ok((q, v))
    }

    /// Sends `out` (the configuration's terms) to the modules.
    pub fn command(&self, fleet: &mut dyn Modules, out: &[JointTarget]) -> Result<(), String> {
        if out.len() != self.count {
            return Err(format!("{} joint targets for {} joints", out.len(), self.count));
        }
        let mut out = out.to_vec();
        for (j, c) in self.roles.iter().zip(self.offsets) {
            if let JointTarget::Position(p) = out[j.fj] {
                out[j.fj] = JointTarget::Position(p - c);
            }
        }
        for (r, &m) in self.modules.iter().enumerate() {
            let io = fleet.module(m).map_err(|e| e.to_string())?;
            let n = io.joint_names().len();
            io.command(&out[self.starts[r]..self.starts[r] + n])
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

/// The control mode of each role's FrontJoint in `configuration` (its robot's actuators:
/// a servo for the quadruped's hips and the body's wheels, a speed drive for the wheeled
/// vehicle's wheels).
pub fn front_joint_modes(configuration: &str) -> Result<[ControlMode; 6], String> {
    let topology = Topology::resolve(configuration, &ModuleCatalog::builtin()).map_err(|e| e.to_string())?;
    let joints = topology.joints();
    let mut out = [ControlMode::Position; 6];
    for (r, mode) in out.iter_mut().enumerate() {
        let name = format!("role{}_front_joint", r + 1);
        let j = joints
            .iter()
            .find(|j| j.name == name)
            .ok_or_else(|| format!("robot `{configuration}` has no joint `{name}`"))?;
        *mode = match j.def.actuator {
            Actuator::Position(_) => ControlMode::Position,
            Actuator::Velocity(_) => ControlMode::Velocity,
        };
    }
    Ok(out)
}

/// The configuration's standing controller on `joints` (its initial pose).
pub fn standing(configuration: &str, joints: &ConfigurationJoints) -> Result<Box<dyn Controller>, String> {
    let (roles, n) = (joints.role_joints(), joints.count());
    match configuration {
        "quadruped" => Ok(Box::new(QuadWalk::new("stand", roles, n, QuadGait::Stand))),
        "wheeled" => Ok(Box::new(WheeledDrive::new(
            "stand",
            roles,
            n,
            WheeledPose::Normal,
            WheelCommand::Stop,
            1.0,
        ))),
        other => Err(format!("no assembly for the configuration `{other}`")),
    }
}

/// One role's walker.
struct Role {
    target: &'static RoleTarget,
    module: usize,
    state: RoleState,
    /// When its current walk or wait began, s.
    since: f64,
    /// Its camera on the landmarks (none for a role docked from the start).
    eye: Option<LockOn>,
    goto: Option<SingleGoto>,
    dock: Option<Docking>,
    joints: Option<ModuleJoints>,
    record: RoleRecord,
    /// The partner's face in the own port's frame as the docking sensor last saw it before
    /// the latch.
    face_at_latch: Option<Isometry3<f64>>,
}

/// What a module knows of the others this tick.
struct Shared {
    /// Role#1's pose as the modules share it.
    role1: Pose2,
    /// DetPoints by module: where, and what they rest on.
    detpoints: Vec<(usize, [f64; 2], Landmark)>,
    /// The walking roles' estimated reference points.
    walking: Vec<(usize, [f64; 2])>,
    /// Role#2's counter and whether it is docked.
    role2: (usize, bool),
    /// How many modules there are.
    modules: usize,
    /// Role#1's module.
    role1_module: usize,
    /// The lone modules' steps.
    table: StepTable,
}

/// The assembly.
pub struct Assembly {
    order: AssemblyOrder,
    roles: Vec<Role>,
    role1_eye: LockOn,
    clock: Monotonic,
    last_s: Option<f64>,
    state: AssemblyState,
    complete_s: f64,
    init: Option<(ConfigurationJoints, Box<dyn Controller>, f64)>,
}

/// Where a module's DetPoint is for its reference point `xy` and heading `yaw`.
fn detpoint(xy: [f64; 2], yaw: f64) -> [f64; 2] {
    [
        xy[0] + PAN_AXIS_AHEAD_M * yaw.cos(),
        xy[1] + PAN_AXIS_AHEAD_M * yaw.sin(),
    ]
}

fn goal_of(p: Pose2) -> Goal {
    Goal {
        x: p.x,
        y: p.y,
        yaw: p.yaw,
    }
}

type Failure = (usize, String);

impl Assembly {
    /// An assembly of `order.configuration` from `fleet`'s modules.
    pub fn new(fleet: &dyn Modules, order: AssemblyOrder) -> Result<Assembly, String> {
        if order.roles.iter().any(|&m| m >= fleet.len()) {
            return Err(format!("the roles name modules beyond the fleet's {}", fleet.len()));
        }
        let mut seen = order.roles.to_vec();
        seen.sort_unstable();
        seen.dedup();
        if seen.len() != 6 {
            return Err(format!("the roles name a module twice: {:?}", order.roles));
        }
        let lock = |m: usize| -> Result<LockOn, String> {
            let io = fleet.module_ref(m).map_err(|e| e.to_string())?;
            LockOn::new(io.joint_names(), order.landmarks.clone())
        };
        let mut role1_eye = lock(order.roles[0])?;
        role1_eye.start_from(order.role1_xy);
        let mut roles = Vec::with_capacity(5);
        for role in 2..=6 {
            let target = role_target(&order.configuration, role).map_err(|e| e.to_string())?;
            let module = order.roles[role - 1];
            let connected = order.connected.contains(&role);
            let eye = if connected {
                None
            } else {
                let mut eye = lock(module)?;
                if let Some(&xy) = order.starts.get(&module) {
                    eye.start_from(xy);
                }
                Some(eye)
            };
            roles.push(Role {
                target,
                module,
                state: if connected {
                    RoleState::Docked
                } else {
                    RoleState::ToStaging
                },
                since: 0.0,
                eye,
                goto: None,
                dock: None,
                joints: None,
                face_at_latch: None,
                record: RoleRecord {
                    role,
                    module,
                    staged_s: f64::NAN,
                    docked_s: f64::NAN,
                    cycles: 0,
                    reapproaches: 0,
                    wheel_roll_deg: 0.0,
                    fj_at_dock_deg: f64::NAN,
                },
            });
        }
        Ok(Assembly {
            order,
            roles,
            role1_eye,
            clock: Monotonic::default(),
            last_s: None,
            state: AssemblyState::Idle,
            complete_s: f64::NAN,
            init: None,
        })
    }

    /// Where it is.
    pub fn state(&self) -> &AssemblyState {
        &self.state
    }

    /// Each role's state (Roles #2…#6).
    pub fn role_states(&self) -> Vec<(usize, &RoleState)> {
        self.roles.iter().map(|r| (r.target.role, &r.state)).collect()
    }

    /// What happened to each role (Roles #2…#6).
    pub fn records(&self) -> Vec<RoleRecord> {
        self.roles.iter().map(|r| r.record.clone()).collect()
    }

    /// When the last role docked, s (NaN before).
    pub fn complete_s(&self) -> f64 {
        self.complete_s
    }

    /// The configuration's joints, once all are docked.
    pub fn configuration_joints(&self) -> Option<&ConfigurationJoints> {
        self.init.as_ref().map(|(j, _, _)| j)
    }

    /// Role#2's foot in Role#1's foot frame as Role#2's docking sensor saw the two faces
    /// when they latched (the latch holds them as they were, within its capture range);
    /// `None` when Role#2 did not dock in this assembly.
    pub fn role2_foot_in_role1(&self) -> Option<Isometry3<f64>> {
        let r2 = self.roles.first()?;
        let face = r2.face_at_latch?;
        let own = crate::docking::port_in_foot(r2.target.port).ok()?;
        let partner = crate::docking::port_in_foot(r2.target.partner_port).ok()?;
        Some((own * face * partner.inverse()).inverse())
    }

    /// Role `role`'s reference point as its own camera places it (a walking role's).
    pub fn role_estimate(&self, role: usize) -> Option<[f64; 2]> {
        self.roles
            .iter()
            .find(|r| r.target.role == role)
            .and_then(|r| r.eye.as_ref())
            .and_then(LockOn::estimate)
    }

    /// Role#1's reference point as the modules share it (its camera's, or the order's).
    pub fn role1_shared(&self) -> [f64; 2] {
        self.role1_eye.estimate().unwrap_or(self.order.role1_xy)
    }

    /// Role#1's reference point as its camera places it.
    pub fn role1_estimate(&self) -> Option<[f64; 2]> {
        self.role1_eye.estimate()
    }

    /// One tick on `fleet`: reads the sensors, writes the commands.
    pub fn tick(&mut self, fleet: &mut dyn Modules) -> &AssemblyState {
        if matches!(self.state, AssemblyState::Assembled | AssemblyState::Failed { .. }) {
            return &self.state;
        }
        if let Err((role, reason)) = self.advance(fleet) {
            self.state = AssemblyState::Failed { role, reason };
        }
        &self.state
    }

    fn advance(&mut self, fleet: &mut dyn Modules) -> Result<(), Failure> {
        let m1 = self.order.roles[0];
        let now = fleet
            .module_ref(m1)
            .map_err(|e| (1, e.to_string()))
            .and_then(|io| self.clock.check(io.now()).map_err(|e| (1, e.to_string())))?;
        let dt = self.last_s.map_or(0.01, |l| (now - l).max(1e-6));
        self.last_s = Some(now);
        if self.init.is_some() {
            return self.initialise(fleet, now, dt);
        }
        let shared = self.share(fleet, now)?;
        for i in 0..self.roles.len() {
            self.tick_role(i, fleet, now, dt, &shared)?;
        }
        let docked = self.roles.iter().filter(|r| r.state == RoleState::Docked).count();
        self.state = AssemblyState::Gathering { docked };
        if docked == self.roles.len() {
            self.complete_s = now;
            self.start_initialising(fleet, now)?;
        }
        Ok(())
    }

    /// Role#1 finds itself and holds; what the modules share this tick.
    fn share(&mut self, fleet: &mut dyn Modules, now: f64) -> Result<Shared, Failure> {
        let m1 = self.order.roles[0];
        let io = fleet.module(m1).map_err(|e| (1, e.to_string()))?;
        self.role1_eye.update(io).map_err(|e| (1, e.to_string()))?;
        let yaw1 = io.imu().map_err(|e| (1, e.to_string()))?.yaw();
        let xy = self.role1_eye.estimate().unwrap_or(self.order.role1_xy);
        let role1 = Pose2 {
            x: xy[0],
            y: xy[1],
            yaw: yaw1,
        };
        let mut out = crate::hold(io.control_modes(), None);
        self.role1_eye.command(&mut out);
        io.command(&out).map_err(|e| (1, e.to_string()))?;
        let mut detpoints = vec![(m1, detpoint(xy, yaw1), Landmark::Primary)];
        let mut walking = Vec::new();
        for r in &self.roles {
            let placed = |o: Offset| {
                let p = target_pose(role1, o);
                detpoint([p.x, p.y], p.yaw)
            };
            match (&r.state, r.eye.as_ref()) {
                (RoleState::ToStaging | RoleState::Waiting(_), Some(eye)) => {
                    if let Some(e) = eye.estimate() {
                        walking.push((r.target.role, e));
                        if eye.anchored(now) {
                            let yaw = fleet
                                .module_ref(r.module)
                                .and_then(|io| io.imu())
                                .map_err(|e| (r.target.role, e.to_string()))?
                                .yaw();
                            detpoints.push((r.module, detpoint(e, yaw), Landmark::Floating));
                        }
                    }
                }
                (RoleState::Staged, _) => detpoints.push((r.module, placed(r.target.stage1), Landmark::Secondary)),
                (RoleState::Docked, _) => detpoints.push((r.module, placed(r.target.stage2), Landmark::Secondary)),
                _ => {}
            }
        }
        let role2 = self
            .roles
            .first()
            .map_or((2, true), |r| (r.state.counter(), r.state == RoleState::Docked));
        Ok(Shared {
            role1,
            detpoints,
            walking,
            role2,
            modules: fleet.len(),
            role1_module: m1,
            table: self.order.table,
        })
    }

    fn tick_role(
        &mut self,
        i: usize,
        fleet: &mut dyn Modules,
        now: f64,
        dt: f64,
        shared: &Shared,
    ) -> Result<(), Failure> {
        let role = self.roles[i].target.role;
        let module = self.roles[i].module;
        let partner = self.order.roles[self.roles[i].target.partner_role - 1];
        let partner_name = fleet
            .module_ref(partner)
            .map(|io| io.name().to_string())
            .map_err(|e| (role, e.to_string()))?;
        let io = fleet.module(module).map_err(|e| (role, e.to_string()))?;
        let r = &mut self.roles[i];
        match r.state.clone() {
            RoleState::ToStaging | RoleState::Waiting(_) => r.walk(io, now, dt, shared),
            RoleState::Staged => {
                let (counter2, docked2) = shared.role2;
                let t = r.target;
                if t.step_up.allows(1, counter2, docked2) && (!t.connect_after_role2 || docked2) {
                    let forced = match t.stage2_direction {
                        ForcedDirection::LeastTime => None,
                        ForcedDirection::Backward => Some(Direction::Backward),
                    };
                    r.dock = Some(
                        Docking::new(DockingOrder {
                            port: t.port.into(),
                            partner: format!("{partner_name}/{}", t.partner_port),
                            forced,
                            table: self.order.table,
                        })
                        .map_err(|e| (role, e))?,
                    );
                    r.state = RoleState::Docking(DockingState::Idle);
                    r.since = now;
                }
                io.command(&crate::hold(io.control_modes(), None))
                    .map_err(|e| (role, e.to_string()))
            }
            RoleState::Docking(_) => r.dock_tick(io, now),
            RoleState::Docked => Ok(()),
        }
    }

    /// All docked: the FrontJoints' zeros and modes, and the standing controller.
    fn start_initialising(&mut self, fleet: &mut dyn Modules, now: f64) -> Result<(), Failure> {
        let mut offsets = [0.0; 6];
        let modes = front_joint_modes(&self.order.configuration).map_err(|e| (0, e))?;
        for (r, offset) in offsets.iter_mut().enumerate() {
            let m = self.order.roles[r];
            let io = fleet.module(m).map_err(|e| (r + 1, e.to_string()))?;
            let j = ModuleJoints::find("m1", io.joint_names())
                .ok_or_else(|| (r + 1, format!("module `{}` has no FrontJoint", io.name())))?;
            let fj = io.joint_states().map_err(|e| (r + 1, e.to_string()))?.position[j.fj];
            let roll = self
                .roles
                .iter()
                .find(|w| w.target.role == r + 1 && w.record.wheel_roll_deg != 0.0)
                .map(|w| w.record.wheel_roll_deg.to_radians());
            *offset = match roll {
                Some(roll) => wrap_rad(fj + roll) - fj,
                None => -fj,
            };
            io.switch_mode(j.fj, modes[r]).map_err(|e| (r + 1, e.to_string()))?;
        }
        let joints = ConfigurationJoints::new(&*fleet, self.order.roles, offsets).map_err(|e| (0, e))?;
        let controller = standing(&self.order.configuration, &joints).map_err(|e| (0, e))?;
        self.init = Some((joints, controller, now));
        self.state = AssemblyState::Initialising;
        Ok(())
    }

    /// conf_init: the standing controller for [`CONF_INIT_S`].
    fn initialise(&mut self, fleet: &mut dyn Modules, now: f64, dt: f64) -> Result<(), Failure> {
        let Some((joints, controller, since)) = self.init.as_mut() else {
            return Ok(());
        };
        let (q, v) = joints.read(&*fleet).map_err(|e| (0, e))?;
        let base = self.role1_eye.base().unwrap_or_else(Isometry3::identity);
        let sensors = BTreeMap::new();
        let obs = Observation {
            time: now - *since,
            positions: &q,
            velocities: &v,
            base,
            sensors: &sensors,
        };
        let mut out = vec![JointTarget::Position(0.0); joints.count()];
        controller.step(dt, &obs, &mut out);
        joints.command(fleet, &out).map_err(|e| (0, e))?;
        if now - *since >= CONF_INIT_S {
            self.state = AssemblyState::Assembled;
        }
        Ok(())
    }
}

impl Role {
    /// One tick of the walk to the staging point.
    fn walk(&mut self, io: &mut dyn Module, now: f64, dt: f64, shared: &Shared) -> Result<(), Failure> {
        let role = self.target.role;
        let err = |e: String| (role, e);
        let joints = match self.joints {
            Some(j) => j,
            None => *self.joints.insert(
                ModuleJoints::find("m1", io.joint_names())
                    .ok_or_else(|| err("no wheel-foot joints (m1_front_joint …)".into()))?,
            ),
        };
        let Some(eye) = self.eye.as_mut() else {
            return Err(err("a walking module needs its camera".into()));
        };
        for m in (0..shared.modules).filter(|&m| m != self.module) {
            let id = module_id(m);
            match shared.detpoints.iter().find(|(k, _, _)| *k == m) {
                Some((_, xy, kind)) => eye.set_landmark(&id, *xy, *kind),
                None => eye.remove_landmark(&id),
            }
        }
        eye.set_object(&module_id(shared.role1_module));
        eye.update(io).map_err(|e| err(e.to_string()))?;
        let js = io.joint_states().map_err(|e| err(e.to_string()))?;
        let imu = io.imu().map_err(|e| err(e.to_string()))?;
        // Rolled about its long axis (the inchworm only pitches it).
        let side = imu.orientation * Vector3::y();
        let tilt = side.z.clamp(-1.0, 1.0).asin().abs().to_degrees();
        if tilt > TIPPED_DEG {
            return Err(err(format!(
                "Module#{} tipped over (rolled {tilt:.0}°) walking to its staging point",
                self.module + 1
            )));
        }
        let turning = self
            .goto
            .as_ref()
            .is_some_and(|g| matches!(g.phase(), GotoPhase::Turn | GotoPhase::Settle));
        // Before its first sighting it walks from its modelled start; once it has seen, it
        // stands whenever it loses sight (at its point and turning about its foot tip, it
        // needs no new sighting).
        let base = eye.base().filter(|_| eye.sightings == 0 || turning || eye.locked(now));
        let mut waiting = None;
        let here = base.map(|b| Pose2 {
            x: b.translation.x,
            y: b.translation.y,
            yaw: imu.yaw(),
        });
        match here {
            None => waiting = Some(format!("its camera sees no landmark (for {STAGE_TIMEOUT_S} s)")),
            Some(h) if !turning => {
                if let Some(&(first, _)) = shared
                    .walking
                    .iter()
                    .find(|(r, p)| *r < role && (p[0] - h.x).hypot(p[1] - h.y) < YIELD_M)
                {
                    waiting = Some(format!("giving way to Role#{first} (for {STAGE_TIMEOUT_S} s)"));
                }
            }
            Some(_) => {}
        }
        let mut out = crate::hold(io.control_modes(), None);
        // A new walk's clock starts at its first tick (waiting counts; a walk does not
        // start again after a wait).
        if matches!(self.state, RoleState::ToStaging) && self.goto.is_none() {
            self.since = now;
        }
        if now - self.since > STAGE_TIMEOUT_S {
            let why = match (&waiting, &self.state) {
                (Some(w), _) | (None, RoleState::Waiting(w)) => w.clone(),
                _ => "walking".into(),
            };
            return Err(err(format!(
                "did not reach its staging point in {STAGE_TIMEOUT_S} s: {why}"
            )));
        }
        let (Some(base), Some(here), None) = (base, here, waiting.clone()) else {
            self.state = RoleState::Waiting(waiting.unwrap_or_default());
            eye.command(&mut out);
            return io.command(&out).map_err(|e| err(e.to_string()));
        };
        self.state = RoleState::ToStaging;
        let staging = target_pose(shared.role1, self.target.stage1);
        let routed = route_around(shared.role1, here, staging);
        let giving_way: Vec<[f64; 2]> = shared
            .walking
            .iter()
            .filter(|(r, _)| *r > role)
            .map(|(_, p)| *p)
            .collect();
        let goal = goal_of(detour(here, routed, &giving_way));
        let goto = self.goto.get_or_insert_with(|| {
            SingleGoto::new(
                joints,
                js.position.len(),
                goal,
                shared.table,
                None,
                HeadingBands::default(),
            )
        });
        goto.set_goal(goal);
        let sensors = BTreeMap::new();
        let obs = Observation {
            time: now - self.since,
            positions: &js.position,
            velocities: &js.velocity,
            base: Isometry3::from_parts(Translation3::new(here.x, here.y, 0.0), base.rotation),
            sensors: &sensors,
        };
        goto.step(dt, &obs, &mut out);
        eye.command(&mut out);
        if goto.phase() == GotoPhase::Done {
            self.record.cycles += goto.gait_cycles();
            self.goto = None;
            self.state = RoleState::Staged;
            self.record.staged_s = now;
            out = crate::hold(io.control_modes(), None);
        }
        io.command(&out).map_err(|e| err(e.to_string()))
    }

    /// One tick of the docking; a failed one walks back to the staging point.
    fn dock_tick(&mut self, io: &mut dyn Module, now: f64) -> Result<(), Failure> {
        let role = self.target.role;
        let Some(dock) = self.dock.as_mut() else {
            return Err((role, "docking without a docking".into()));
        };
        let state = dock.tick(io).clone();
        match &state {
            DockingState::Docked { .. } => {
                let joints =
                    ModuleJoints::find("m1", io.joint_names()).ok_or_else(|| (role, "no FrontJoint".to_string()))?;
                let fj = io.joint_states().map_err(|e| (role, e.to_string()))?.position[joints.fj];
                self.record.fj_at_dock_deg = fj.to_degrees();
                self.record.docked_s = now;
                self.face_at_latch = dock.face_at_latch();
                if on_wheel(self.target.port).map_err(|e| (role, e))? {
                    let face = dock
                        .last_face()
                        .ok_or_else(|| (role, "latched without a reading of the face".to_string()))?;
                    self.record.wheel_roll_deg = wheel_roll(face);
                }
                self.state = RoleState::Docked;
            }
            DockingState::Failed(_) if self.record.reapproaches < REAPPROACHES => {
                self.record.reapproaches += 1;
                self.dock = None;
                self.goto = None;
                self.state = RoleState::ToStaging;
                self.since = now;
            }
            DockingState::Failed(why) => {
                return Err((
                    role,
                    format!("docking failed after {REAPPROACHES} new approaches: {why}"),
                ));
            }
            other => self.state = RoleState::Docking(other.clone()),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_walker_steps_round_a_module_standing_in_its_way_and_ignores_the_others() {
        let goal = Pose2 {
            x: 1.0,
            y: 0.0,
            yaw: 0.0,
        };
        let from = pose(0.0, 0.0);
        // Dead ahead 0.3 m: passed on the right, 0.3 m beside it and 0.15 m past it.
        let g = detour(from, goal, &[[0.3, 0.0]]);
        assert!(
            (g.x - 0.45).abs() < 1e-12 && (g.y + DETOUR_CLEAR_M).abs() < 1e-12,
            "{g:?}"
        );
        assert!((g.yaw - g.y.atan2(g.x)).abs() < 1e-12);
        // A little to the left of the line: passed on the right; to the right: on the left.
        assert!(detour(from, goal, &[[0.3, 0.1]]).y < -0.19);
        assert!(detour(from, goal, &[[0.3, -0.1]]).y > 0.19);
        // The nearer of two in the way is the one passed.
        let g = detour(from, goal, &[[0.45, 0.0], [0.2, 0.05]]);
        assert!((g.x - 0.35).abs() < 1e-12, "{g:?}");
        // Behind, beside (0.3 m or more off the line), beyond 0.5 m or beyond the goal: no
        // detour.
        for p in [[-0.1, 0.0], [0.3, 0.31], [0.3, -0.3], [0.55, 0.0]] {
            assert_eq!(detour(from, goal, &[p]), goal, "{p:?}");
        }
        let near = Pose2 {
            x: 0.2,
            y: 0.0,
            yaw: 0.0,
        };
        assert_eq!(detour(from, near, &[[0.25, 0.0]]), near);
    }

    fn pose(x: f64, y: f64) -> Pose2 {
        Pose2 { x, y, yaw: 0.0 }
    }

    /// Role#1 at the origin facing +x: the assembly's centre is 0.002 m ahead of it.
    const ROLE1: Pose2 = Pose2 {
        x: 0.0,
        y: 0.0,
        yaw: 0.0,
    };

    #[test]
    fn a_module_across_the_assembly_walks_round_it_and_comes_in_radially() {
        let c = 0.102 + CORE_CENTRE_LONG_M;
        // Staging point straight behind the centre, module straight ahead 1 m out: the ring
        // goal is 45° round, 0.7 m from the centre.
        let goal = pose(c - 0.4, 0.0);
        let g = route_around(ROLE1, pose(c + 1.0, 0.0), goal);
        assert!(((g.x - c).hypot(g.y) - RING_M).abs() < 1e-12, "{g:?}");
        let angle = g.y.atan2(g.x - c).to_degrees().abs();
        assert!((angle - RING_LEAD_DEG).abs() < 1e-9, "{angle}");
        // Within 20° of the staging point's bearing it goes straight there.
        let a = (180.0f64 - 19.0).to_radians();
        let near = pose(c + 0.7 * a.cos(), 0.7 * a.sin());
        assert_eq!(route_around(ROLE1, near, goal), goal);
        // So does one no farther out than the staging point plus 0.1 m, on any bearing.
        assert_eq!(route_around(ROLE1, pose(c + 0.45, 0.0), goal), goal);
        // Beyond 20° it stays on the ring, always anticlockwise: 25° before the staging
        // point's bearing it goes on to it, 25° past it the whole way round.
        let a = (180.0f64 - 25.0).to_radians();
        let g = route_around(ROLE1, pose(c + 0.7 * a.cos(), 0.7 * a.sin()), goal);
        assert!(((g.x - c).hypot(g.y) - RING_M).abs() < 1e-12);
        assert!((g.y.atan2(g.x - c).to_degrees() - 180.0).abs() < 1e-9, "{g:?}");
        let a = (180.0f64 + 25.0).to_radians();
        let g = route_around(ROLE1, pose(c + 0.7 * a.cos(), 0.7 * a.sin()), goal);
        let bearing = g.y.atan2(g.x - c).to_degrees().rem_euclid(360.0);
        assert!((bearing - (205.0 + RING_LEAD_DEG)).abs() < 1e-9, "{bearing}");
    }
}
