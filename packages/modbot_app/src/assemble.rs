//! Assembly of lone wheel-foot modules into the quadruped or the wheeled vehicle on the
//! embedded simulator (seed-000 §5.2, Lua `get_target_state`, `assembly_step_up`,
//! `connect`, `conf_init`); decision record 0048.
//!
//! The simulator holds one `wheelfoot` robot per module (a world's `robot_starts`), all
//! stepped together. Role#1 holds its rest pose. Every other role walks with the lone
//! module's position controller ([`SingleGoto`], Table 3.15) to its staging point (stage 1)
//! and, when its step-up rule lets it, to its pre-connection point (stage 2) in the walking
//! direction the code forces. There it docks: its port and its partner's port are joined by
//! [`Simulator::attach`] if they are within [`LATCH`]; a port out of that tolerance ends
//! the assembly with the role, the ports and the numbers. When all five have docked, Role#1
//! declares the configuration complete: the FrontJoints are put into the configuration's
//! mode (servo hips in the quadruped, wheels in speed mode in the wheeled vehicle;
//! [`Simulator::set_drive`]) and the configuration's controller takes the pose of
//! `conf_init`.
//!
//! What a module knows: the targets hang from Role#1's reference point (Role#1 does not
//! move) and its heading. With a [`CameraLocalisation`] (the mission's), Role#1's point is
//! the one the modules share (the modelling's, or the configuration's cameras'), and each
//! module walking to its staging point finds itself with its own mast camera (§5.1) on
//! Role#1's DetPoint and the modelled landmarks ([`LockOn::lone`]); from the staging
//! point to the pre-connection point it is guided by its partner's port relative to its
//! own, as a docking sensor measures it (record 0050). Without one (the assembly tests),
//! the module's pose is its foot plate's in the simulator (record 0048).

use std::ops::Range;

use modbot_core::Scenario;
use modbot_core::{ModuleCatalog, Topology};
use modbot_gaits::modular::quadruped::{QuadGait, QuadWalk};
use modbot_gaits::modular::single::{Direction, GotoPhase, HeadingBands, SingleGoto, StepTable, StepTime};
use modbot_gaits::modular::wheeled::{WheelCommand, WheeledDrive, WheeledPose};
use modbot_gaits::modular::{Goal, ModuleJoints, yaw_of};
use modbot_gaits::{Controller, JointTarget, Observation};
use modbot_planner::assembly::{ForcedDirection, RoleAssignment, RoleTarget, role_target, target_pose};
use modbot_planner::sequencer::Pose2;
use modbot_sim::{CameraNoise, DockFit, DockTolerance, Drive, Plant, Port, SimRobot};
use nalgebra::{Isometry3, Point3, Vector3};

use crate::lockon::{Landmark, LockOn};
use modbot_behaviours::scan::{DETPOINT_IN_MAST_M, MAST_LINK, module_id};

pub use crate::embedded::{PREFIX, fleet_simulator, port, port_in_foot};
pub use modbot_behaviours::assembly::{
    CONF_INIT_S, CORE_CENTRE_LONG_M, DETOUR_AHEAD_M, DETOUR_CLEAR_M, DETOUR_PAST_M, RADIAL_DEG, REAPPROACHES,
    RING_LEAD_DEG, RING_M, STAGE_TIMEOUT_S, TIPPED_DEG, YIELD_M, detour, route_around,
};
pub use modbot_behaviours::docking::{CATCH_M, LATCH_RETRY_S, SETTLED_DEG, STANDOFF_M};
/// Control rate, Hz: the simulator's default (record 0023).
pub use modbot_sim::DEFAULT_CONTROL_RATE_HZ as CONTROL_HZ;

/// The latch's capture range: how far apart two ports may be and still dock (record 0048).
/// The position controller stops within its low gait's step (1.8 cm forward, 0.9 cm
/// backward in our simulator) and the code's pre-connection points leave the ports 0.7–1.5
/// cm apart by design (record 0046), so a latch must catch up to 3 cm; the yaw is held
/// within 1° by the controller, the rest is the module's pitch on uneven contact.
pub const LATCH: DockTolerance = DockTolerance {
    position_m: 0.03,
    axis_deg: 8.0,
    roll_deg: 8.0,
};

/// The inchworm steps and cycle times measured in this simulator at μ = 1.0 (Tables
/// 3.12–3.14's rows; `packages/modbot_app/tests/wheelfoot.rs` measures them), which the
/// position controller plans with.
pub const SIMULATED_MU1: StepTable = StepTable {
    fwd_high: StepTime {
        step_m: 0.0690,
        cycle_s: 0.98,
    },
    fwd_low: StepTime {
        step_m: 0.0176,
        cycle_s: 0.60,
    },
    bwd_high: StepTime {
        step_m: 0.0229,
        cycle_s: 1.07,
    },
    bwd_low: StepTime {
        step_m: 0.0093,
        cycle_s: 0.84,
    },
    t180_s: 4.32,
};

/// The two configurations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Configuration {
    /// The quadruped (conf_req 1).
    Quadruped,
    /// The wheeled vehicle (conf_req 2).
    Wheeled,
}

impl Configuration {
    /// Its plan-row and robot-file name.
    pub fn name(self) -> &'static str {
        match self {
            Configuration::Quadruped => "quadruped",
            Configuration::Wheeled => "wheeled",
        }
    }
}

/// One module of the fleet in the simulator.
#[derive(Debug, Clone, PartialEq)]
pub struct ModuleIo {
    /// Its robot index.
    pub robot: usize,
    /// Its joints in the simulator's command vector.
    pub joints: ModuleJoints,
    /// Its joints' range.
    pub range: Range<usize>,
    /// Its foot plate's link (origin at the reference point).
    pub foot: usize,
}

/// The modules of a simulator whose robots are all lone wheel-foot modules.
#[derive(Debug, Clone, PartialEq)]
pub struct Fleet {
    /// By robot index (Module#(i+1) is `modules[i]`).
    pub modules: Vec<ModuleIo>,
}

impl Fleet {
    /// The fleet of `sim`; every robot must be a lone wheel-foot module.
    pub fn of(sim: &dyn Plant) -> Result<Fleet, String> {
        let names = sim.joint_names();
        let links = sim.link_names();
        let mut modules = Vec::with_capacity(sim.robot_count());
        for r in 0..sim.robot_count() {
            let range = sim.joints_of(r);
            let local: Vec<String> = names[range.clone()].to_vec();
            let joints = ModuleJoints::find(PREFIX, &local)
                .ok_or_else(|| format!("robot {} is not a lone wheel-foot module (joints {local:?})", r + 1))?;
            let shift = |k: usize| k + range.start;
            let joints = ModuleJoints {
                fj: shift(joints.fj),
                bj1: shift(joints.bj1),
                bj2: shift(joints.bj2),
                pan: shift(joints.pan),
                tilt: shift(joints.tilt),
            };
            let foot_name = format!("{PREFIX}_foot");
            let foot = sim
                .links_of(r)
                .find(|&l| links[l] == foot_name)
                .ok_or_else(|| format!("robot {} has no link `{foot_name}`", r + 1))?;
            modules.push(ModuleIo {
                robot: r,
                joints,
                range,
                foot,
            });
        }
        Ok(Fleet { modules })
    }

    /// A module's planar pose: its reference point and heading.
    pub fn pose(&self, sim: &dyn Plant, module: usize) -> Pose2 {
        let p = sim.link_poses()[self.modules[module].foot];
        Pose2 {
            x: p.translation.x,
            y: p.translation.y,
            yaw: yaw_of(&p),
        }
    }

    /// The role → joints table of an assembled configuration.
    pub fn role_joints(&self, roles: &RoleAssignment) -> [ModuleJoints; 6] {
        [0, 1, 2, 3, 4, 5].map(|r| self.modules[roles.modules[r]].joints)
    }
}

/// The pre-connection pose of a module whose port `own_in_foot` is to meet the partner's
/// port at world pose `partner`, `STANDOFF_M` short of it: the module's reference point
/// and heading (`modbot_behaviours::docking::pre_connection`).
pub fn pre_connection(partner: &Isometry3<f64>, own_in_foot: &Isometry3<f64>) -> Pose2 {
    let [x, y, yaw] = modbot_behaviours::docking::pre_connection(partner, own_in_foot);
    Pose2 { x, y, yaw }
}

/// Where a role is in its assembly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Walking to its staging point.
    ToStaging,
    /// At its staging point, waiting for its step-up rule.
    Staged,
    /// Walking to its pre-connection point.
    ToPreConnection,
    /// Its port within the latch's reach: stopped, its foot going to rest before it links
    /// (a module caught mid-step would be welded with its foot lifted).
    Settling,
    /// At its pre-connection point, waiting to link (Roles #5/#6 wait for Role#2).
    AtPreConnection,
    /// Linked.
    Connected,
}

impl Stage {
    /// The Lua's assembly counter: stages completed.
    fn counter(self) -> usize {
        match self {
            Stage::ToStaging => 0,
            Stage::Staged | Stage::ToPreConnection | Stage::Settling => 1,
            Stage::AtPreConnection | Stage::Connected => 2,
        }
    }
}

/// What happened to one role.
#[derive(Debug, Clone, PartialEq)]
pub struct RoleLog {
    /// The role, 2…6.
    pub role: usize,
    /// Its module (0 = Module#1).
    pub module: usize,
    /// When it reached its staging point, s.
    pub staged_s: f64,
    /// When it reached its pre-connection point, s.
    pub pre_connection_s: f64,
    /// When it docked, s.
    pub docked_s: f64,
    /// Its distance from the pre-connection point when it stopped, m.
    pub stop_error_m: f64,
    /// How its port met its partner's.
    pub fit: DockFit,
    /// Inchworm cycles it walked.
    pub cycles: usize,
    /// The roll its wheel port linked at, deg (0 for a port off the wheel).
    pub wheel_roll_deg: f64,
    /// Its FrontJoint's angle when it linked, deg.
    pub fj_at_dock_deg: f64,
    /// With a [`CameraLocalisation`]: how far its camera's position relative to Role#1's
    /// shared point was from the simulator's relative to Role#1's true one, when it reached
    /// its staging point, m (NaN without one).
    pub staging_localisation_m: f64,
}

/// How the walking modules localise themselves in the mission (record 0050).
#[derive(Debug, Clone)]
pub struct CameraLocalisation<'a> {
    /// The world (its tagged objects are what the cameras can see).
    pub world: &'a Scenario,
    /// The cameras' noise.
    pub noise: CameraNoise,
    /// The noise's seed.
    pub seed: u64,
    /// Every tagged object's modelled position (world x, y), m.
    pub landmarks: std::collections::BTreeMap<String, [f64; 2]>,
    /// Role#1's reference point as the modules share it (world x, y), m.
    pub role1_xy: [f64; 2],
    /// Where the modelling placed each module (by fleet index; world x, y), m: a module
    /// whose camera has not yet found a landmark (one beyond its range) walks from there on
    /// its heading until it does. A module not listed stands and looks.
    pub starts: std::collections::BTreeMap<usize, [f64; 2]>,
}

/// What an assembly did.
#[derive(Debug, Clone, PartialEq)]
pub struct AssemblyOutcome {
    /// The configuration.
    pub configuration: Configuration,
    /// Roles #2…#6 in the order they docked.
    pub roles: Vec<RoleLog>,
    /// Simulated time when the last role docked, s.
    pub complete_s: f64,
    /// Simulated time at the end (the initial pose taken), s.
    pub end_s: f64,
    /// How far Role#1's reference point moved during the assembly, m.
    pub role1_drift_m: f64,
    /// Each role's FrontJoint zero in the configuration: the configuration's angle is the
    /// encoder's plus this, rad (Role#1 first).
    pub fj_offsets: [f64; 6],
    /// In a reassembly, when Roles #3–#6 let go of the old configuration, s.
    pub detached_s: Option<f64>,
}

/// A configuration's controller on docked modules: each FrontJoint is read and commanded
/// in the configuration's terms, `nominal = encoder + offset` ([`AssemblyOutcome::fj_offsets`]).
/// A leg docked by its wheel port took its zero where its wheel linked; every other
/// FrontJoint reads 0 where the assembly completed.
pub struct Rereferenced {
    inner: Box<dyn Controller>,
    offsets: Vec<(usize, f64)>,
    q: Vec<f64>,
}

impl Rereferenced {
    /// `inner` (a controller of the configuration, on the fleet's joint indices) with the
    /// outcome's FrontJoint zeros.
    pub fn new(inner: Box<dyn Controller>, fleet: &Fleet, roles: &RoleAssignment, outcome: &AssemblyOutcome) -> Self {
        let joints = fleet.role_joints(roles);
        Rereferenced {
            inner,
            offsets: joints.iter().zip(outcome.fj_offsets).map(|(j, c)| (j.fj, c)).collect(),
            q: Vec::new(),
        }
    }
}

impl Controller for Rereferenced {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn joint_count(&self) -> usize {
        self.inner.joint_count()
    }

    fn step(&mut self, dt: f64, obs: &Observation<'_>, out: &mut [JointTarget]) {
        self.q.clear();
        self.q.extend_from_slice(obs.positions);
        for &(k, c) in &self.offsets {
            self.q[k] += c;
        }
        let seen = Observation {
            positions: &self.q,
            ..*obs
        };
        self.inner.step(dt, &seen, out);
        for &(k, c) in &self.offsets {
            if let JointTarget::Position(p) = out[k] {
                out[k] = JointTarget::Position(p - c);
            }
        }
    }

    fn period(&self) -> Option<f64> {
        self.inner.period()
    }

    fn completed_cycles(&self) -> usize {
        self.inner.completed_cycles()
    }
}

/// Why an assembly stopped.
#[derive(Debug, Clone, PartialEq)]
pub struct AssemblyFailure {
    /// The role concerned (0 if none).
    pub role: usize,
    /// What went wrong.
    pub reason: String,
}

impl std::fmt::Display for AssemblyFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.role == 0 {
            write!(f, "assembly: {}", self.reason)
        } else {
            write!(f, "assembly, Role#{}: {}", self.role, self.reason)
        }
    }
}

fn fail(role: usize, reason: impl Into<String>) -> AssemblyFailure {
    AssemblyFailure {
        role,
        reason: reason.into(),
    }
}

/// The rest pose of a lone module: foot (0, 0), wheel still, camera centred.
fn rest(m: &ModuleJoints, out: &mut [JointTarget]) {
    out[m.fj] = JointTarget::Velocity(0.0);
    out[m.bj1] = JointTarget::Position(0.0);
    out[m.bj2] = JointTarget::Position(0.0);
    out[m.pan] = JointTarget::Position(0.0);
    out[m.tilt] = JointTarget::Position(0.0);
}

/// A walking role's state.
struct Walker {
    target: &'static RoleTarget,
    /// Its own port and its partner's.
    ports: (Port, Port),
    /// Its own port in its foot frame at rest.
    own_in_foot: Isometry3<f64>,
    /// The link of its partner's port.
    partner_link: usize,
    /// Its current goal.
    goal: Pose2,
    module: usize,
    stage: Stage,
    goto: Option<SingleGoto>,
    log: RoleLog,
    stage_started_s: f64,
    cycles_before: usize,
    /// Times it walked back to its staging point after the latch refused it.
    reapproaches: usize,
    /// Since when the latch has refused it, s.
    refused_since: Option<f64>,
    /// Its camera, with a [`CameraLocalisation`].
    eye: Option<LockOn>,
}

fn goal_of(pose: Pose2) -> Goal {
    Goal {
        x: pose.x,
        y: pose.y,
        yaw: pose.yaw,
    }
}

/// The drives of a configuration's FrontJoints: what the configuration's robot file gives
/// each role's `front_joint` (a servo for the quadruped's hips and the body's wheels, a
/// speed drive for the wheeled vehicle's wheels).
fn front_joint_drives(configuration: Configuration) -> Result<[Drive; 6], String> {
    let catalog = ModuleCatalog::builtin();
    let topology = Topology::resolve(configuration.name(), &catalog).map_err(|e| e.to_string())?;
    let robot = SimRobot::from_topology(&topology).map_err(|e| e.to_string())?;
    let mut out = [Drive::Free; 6];
    for (r, d) in out.iter_mut().enumerate() {
        let name = format!("role{}_front_joint", r + 1);
        let k = robot
            .joint_names
            .iter()
            .position(|n| *n == name)
            .ok_or_else(|| format!("robot `{}` has no joint `{name}`", configuration.name()))?;
        *d = robot.drives[k];
    }
    Ok(out)
}

/// Runs `controller` on `sim` for `seconds` at [`CONTROL_HZ`], its base the pose of link
/// `base_link`, its time counted from now.
pub fn drive_for(
    sim: &mut dyn Plant,
    controller: &mut dyn Controller,
    base_link: usize,
    seconds: f64,
) -> Result<(), String> {
    drive_until(sim, controller, base_link, seconds, &mut |_| false)
}

/// What a drive asks of its caller each control step ([`drive_hooked`]).
pub trait DriveHooks {
    /// The base pose the controller sees; `None`: the base link's pose in the simulator.
    fn base(&mut self, _sim: &dyn Plant) -> Option<Isometry3<f64>> {
        None
    }

    /// Whether the controller stands still this step: it is not stepped, the servos hold
    /// their last targets and the speed-driven joints stop.
    fn hold(&mut self, _sim: &dyn Plant) -> bool {
        false
    }

    /// Changes the controller's outputs before they are sent (a camera the controller does
    /// not own).
    fn adjust(&mut self, _sim: &dyn Plant, _out: &mut [JointTarget]) {}

    /// Called after every control step with the simulator; true ends the drive.
    fn after(&mut self, _sim: &dyn Plant) -> Result<bool, String> {
        Ok(false)
    }
}

/// Runs `controller` on `sim` at [`CONTROL_HZ`] for at most `seconds`, its time counted
/// from now, its base the pose of link `base_link` unless `hooks` give another, its
/// outputs adjusted and the drive ended by `hooks`.
pub fn drive_hooked(
    sim: &mut dyn Plant,
    controller: &mut dyn Controller,
    base_link: usize,
    seconds: f64,
    hooks: &mut dyn DriveHooks,
) -> Result<(), String> {
    let dt = 1.0 / CONTROL_HZ;
    let sensors = std::collections::BTreeMap::new();
    let mut out = vec![JointTarget::Position(0.0); sim.joint_names().len()];
    let mut first = true;
    let t0 = sim.time();
    let mut t = t0;
    while t < t0 + seconds - 1e-9 {
        if !first && hooks.hold(sim) {
            // Stopped: the servos hold their targets, the speed-driven joints stop.
            for o in out.iter_mut() {
                if let JointTarget::Velocity(_) = o {
                    *o = JointTarget::Velocity(0.0);
                }
            }
        } else {
            let q = sim.joint_positions();
            let v = sim.joint_velocities();
            let base = hooks.base(sim).unwrap_or(sim.link_poses()[base_link]);
            let obs = Observation {
                time: t - t0,
                positions: &q,
                velocities: &v,
                base,
                sensors: &sensors,
            };
            controller.step(dt, &obs, &mut out);
            first = false;
        }
        hooks.adjust(sim, &mut out);
        let targets: Vec<f64> = out.iter().map(JointTarget::value).collect();
        sim.set_targets(&targets).map_err(|e| e.to_string())?;
        t += dt;
        sim.advance_to(t).map_err(|e| e.to_string())?;
        if hooks.after(sim)? {
            break;
        }
    }
    Ok(())
}

/// Runs `controller` on `sim` as [`drive_for`] does, for at most `seconds`, calling `stop`
/// after every control step with the simulator; it ends early when `stop` says so (the
/// mission records its trajectories there and ends a phase on its own condition).
pub fn drive_until(
    sim: &mut dyn Plant,
    controller: &mut dyn Controller,
    base_link: usize,
    seconds: f64,
    stop: &mut dyn FnMut(&dyn Plant) -> bool,
) -> Result<(), String> {
    struct StopWhen<'a>(&'a mut dyn FnMut(&dyn Plant) -> bool);
    impl DriveHooks for StopWhen<'_> {
        fn after(&mut self, sim: &dyn Plant) -> Result<bool, String> {
            Ok((self.0)(sim))
        }
    }
    drive_hooked(sim, controller, base_link, seconds, &mut StopWhen(stop))
}

/// Assembles `configuration` from the fleet's modules with the roles `roles`, docking
/// each role when its port is within [`LATCH`] of its partner's; then puts the FrontJoints
/// into the configuration's mode and takes its initial pose. The simulator must hold only
/// the fleet's lone modules, undocked.
pub fn assemble(
    sim: &mut dyn Plant,
    fleet: &Fleet,
    roles: &RoleAssignment,
    configuration: Configuration,
    table: StepTable,
) -> Result<AssemblyOutcome, AssemblyFailure> {
    assemble_observed(sim, fleet, roles, configuration, table, &[], None, &mut |_| {})
}

/// The name of a role's dock in the simulator: `role3.F-role1.R`.
pub fn dock_name(target: &RoleTarget) -> String {
    format!(
        "role{}.{}-role{}.{}",
        target.role, target.port, target.partner_role, target.partner_port
    )
}

/// [`assemble`], with `connected` the roles (2…6) already docked (Role#2 in a
/// reassembly), the walking modules localised by `localise` (else by the simulator) and
/// `observe` called with the simulator after every control step.
#[allow(clippy::too_many_arguments)]
pub fn assemble_observed(
    sim: &mut dyn Plant,
    fleet: &Fleet,
    roles: &RoleAssignment,
    configuration: Configuration,
    table: StepTable,
    connected: &[usize],
    localise: Option<&CameraLocalisation<'_>>,
    observe: &mut dyn FnMut(&dyn Plant),
) -> Result<AssemblyOutcome, AssemblyFailure> {
    let catalog = ModuleCatalog::builtin();
    let n = sim.joint_names().len();
    let dt = 1.0 / CONTROL_HZ;
    let module_of = |role: usize| roles.modules[role - 1];
    if roles.modules.iter().any(|&m| m >= fleet.modules.len()) {
        return Err(fail(
            0,
            format!("the roles name modules beyond the fleet's {}", fleet.modules.len()),
        ));
    }
    let role1 = fleet.pose(sim, module_of(1));
    let start_s = sim.time();
    let role1_id = module_id(fleet.modules[module_of(1)].robot);
    // A module's camera, taking `start` as its position until its first sighting.
    let eye_of = |l: &CameraLocalisation<'_>, m: usize, start: Option<[f64; 2]>| {
        let mut eye = LockOn::lone(
            sim,
            l.world,
            (fleet.modules[m].robot, fleet.modules[m].joints),
            l.noise,
            l.seed,
            l.landmarks.clone(),
        )?;
        if let Some(xy) = start {
            eye.start_from(xy);
        }
        Ok::<LockOn, String>(eye)
    };
    // Every module's mast, where its DetPoint is.
    let masts = fleet
        .modules
        .iter()
        .enumerate()
        .map(|(m, io)| {
            sim.links_of(io.robot)
                .find(|&l| sim.link_names()[l] == MAST_LINK)
                .ok_or_else(|| fail(0, format!("Module#{} has no link `{MAST_LINK}`", m + 1)))
        })
        .collect::<Result<Vec<usize>, AssemblyFailure>>()?;
    let mut walkers: Vec<Walker> = (2..=6)
        .map(|role| {
            let target = role_target(configuration.name(), role).map_err(|e| fail(role, e.to_string()))?;
            let robot_of = |r: usize| fleet.modules[module_of(r)].robot;
            let own = port(&catalog, robot_of(role), target.port).map_err(|e| fail(role, e))?;
            let theirs =
                port(&catalog, robot_of(target.partner_role), target.partner_port).map_err(|e| fail(role, e))?;
            let own_in_foot = port_in_foot(target.port).map_err(|e| fail(role, e))?;
            let partner_link = sim
                .links_of(theirs.robot)
                .find(|&l| sim.link_names()[l] == theirs.link)
                .ok_or_else(|| fail(role, format!("the partner has no link `{}`", theirs.link)))?;
            Ok(Walker {
                target,
                own_in_foot,
                partner_link,
                goal: target_pose(role1, target.stage1),
                ports: (own, theirs),
                module: module_of(role),
                stage: if connected.contains(&role) {
                    Stage::Connected
                } else {
                    Stage::ToStaging
                },
                goto: None,
                log: RoleLog {
                    role,
                    module: module_of(role),
                    staged_s: f64::NAN,
                    pre_connection_s: f64::NAN,
                    docked_s: f64::NAN,
                    stop_error_m: f64::NAN,
                    fit: DockFit {
                        distance_m: f64::NAN,
                        axis_deg: f64::NAN,
                        roll_deg: f64::NAN,
                        twist_deg: f64::NAN,
                    },
                    cycles: 0,
                    wheel_roll_deg: 0.0,
                    fj_at_dock_deg: f64::NAN,
                    staging_localisation_m: f64::NAN,
                },
                stage_started_s: start_s,
                cycles_before: 0,
                reapproaches: 0,
                refused_since: None,
                eye: match localise {
                    Some(l) if !connected.contains(&role) => Some(
                        eye_of(l, module_of(role), l.starts.get(&module_of(role)).copied())
                            .map_err(|e| fail(role, e))?,
                    ),
                    _ => None,
                },
            })
        })
        .collect::<Result<_, AssemblyFailure>>()?;
    // Role#1 keeps finding itself with its own camera on the modelled landmarks (a module
    // that docks may push it), from the shared point on.
    let mut role1_eye = match localise {
        Some(l) => Some(eye_of(l, module_of(1), Some(l.role1_xy)).map_err(|e| fail(1, e))?),
        None => None,
    };
    let bands = HeadingBands::default();
    let goto = |m: usize, offset, forced: Option<Direction>| {
        SingleGoto::new(
            fleet.modules[m].joints,
            n,
            goal_of(target_pose(role1, offset)),
            table,
            forced,
            bands,
        )
    };
    let mut docked: Vec<RoleLog> = Vec::new();
    let mut out = vec![JointTarget::Position(0.0); n];
    let sensors = std::collections::BTreeMap::new();
    let mut t = start_s;
    loop {
        let role2 = &walkers[0];
        let (role2_counter, role2_connected) = (role2.stage.counter(), role2.stage == Stage::Connected);
        // Step-up and start of each stage.
        for w in walkers.iter_mut() {
            match w.stage {
                Stage::ToStaging if w.goto.is_none() => {
                    w.goto = Some(goto(w.module, w.target.stage1, None));
                    w.stage_started_s = t;
                }
                Stage::Staged if w.target.step_up.allows(1, role2_counter, role2_connected) => {
                    let forced = match w.target.stage2_direction {
                        ForcedDirection::LeastTime => None,
                        ForcedDirection::Backward => Some(Direction::Backward),
                    };
                    w.goto = Some(goto(w.module, w.target.stage2, forced));
                    w.stage = Stage::ToPreConnection;
                    w.stage_started_s = t;
                }
                _ => {}
            }
        }
        // Docking of the roles at their pre-connection points.
        for i in 0..walkers.len() {
            let role2_connected = walkers[0].stage == Stage::Connected;
            let w = &walkers[i];
            if w.stage != Stage::AtPreConnection || (w.target.connect_after_role2 && !role2_connected) {
                continue;
            }
            let role = w.target.role;
            let (own, theirs) = w.ports.clone();
            let name = dock_name(w.target);
            // The wheel's connector has no keyed roll: a port on the wheel links at the roll
            // it meets its partner with, and the FrontJoint's zero is taken there (record 0048).
            let on_wheel = own.link.ends_with("_wheel_front");
            let roll = if on_wheel {
                let f0 = sim
                    .port_fit(&theirs, &own, 0.0)
                    .map_err(|e| fail(role, e.to_string()))?;
                let residual = |r: f64| {
                    sim.port_fit(&theirs, &own, r)
                        .map(|f| f.roll_deg)
                        .unwrap_or(f64::INFINITY)
                };
                if residual(f0.twist_deg) <= residual(-f0.twist_deg) {
                    f0.twist_deg
                } else {
                    -f0.twist_deg
                }
            } else {
                0.0
            };
            let fj_angle = sim.joint_positions()[fleet.modules[w.module].joints.fj];
            let attached = sim.attach(&name, &theirs, &own, roll, &LATCH);
            // Refused: the module holds still and the latch tries again for LATCH_RETRY_S
            // (a module rocking on uneven contact settles), then it walks back to its
            // staging point and comes in again, at most REAPPROACHES times (record 0049).
            if attached.is_err() {
                let w = &mut walkers[i];
                let since = *w.refused_since.get_or_insert(t);
                if t - since < LATCH_RETRY_S {
                    continue;
                }
                if w.reapproaches < REAPPROACHES {
                    w.reapproaches += 1;
                    w.refused_since = None;
                    w.stage = Stage::ToStaging;
                    w.goto = None;
                    continue;
                }
            }
            let w = &walkers[i];
            let fit = attached.map_err(|e| {
                let now1 = fleet.pose(sim, module_of(1));
                let poses = sim.link_poses();
                let link_of = |p: &Port| sim.links_of(p.robot).find(|&l| sim.link_names()[l] == p.link).unwrap_or(0);
                let at = |p: &Port| (poses[link_of(p)] * p.frame).translation.vector;
                let model = (poses[fleet.modules[w.module].foot] * w.own_in_foot).translation.vector;
                let e = format!(
                    "{e}; own port at {:?} (its model says {:?}), partner's at {:?}",
                    at(&own).as_slice(),
                    model.as_slice(),
                    at(&theirs).as_slice()
                );
                fail(
                    role,
                    format!(
                        "{e} (it stopped {:.3} m from its pre-connection point {:?}, at {:?}; Role#1 has moved {:.3} m and turned {:.1}° since the start)",
                        w.log.stop_error_m,
                        w.goal,
                        fleet.pose(sim, w.module),
                        (now1.x - role1.x).hypot(now1.y - role1.y),
                        (now1.yaw - role1.yaw).to_degrees()
                    ),
                )
            })?;
            let w = &mut walkers[i];
            w.log.wheel_roll_deg = roll;
            w.log.fj_at_dock_deg = fj_angle.to_degrees();
            w.stage = Stage::Connected;
            w.log.fit = fit;
            w.log.docked_s = t;
            docked.push(w.log.clone());
        }
        if walkers.iter().all(|w| w.stage == Stage::Connected) {
            break;
        }
        // Control.
        let q = sim.joint_positions();
        let v = sim.joint_velocities();
        let poses = sim.link_poses();
        rest(&fleet.modules[module_of(1)].joints, &mut out);
        // The goals hang from Role#1 as it is now: its heading (IMU, compass) and its
        // reference point, the shared one with a localisation.
        let role1_true = fleet.pose(sim, module_of(1));
        let role1_now = match role1_eye.as_mut() {
            Some(eye) => {
                eye.update(sim).map_err(|e| fail(1, e))?;
                eye.command(&mut out);
                let xy = eye.estimate().or(localise.map(|l| l.role1_xy)).unwrap_or_default();
                Pose2 {
                    x: xy[0],
                    y: xy[1],
                    yaw: role1_true.yaw,
                }
            }
            None => role1_true,
        };
        // The modules' DetPoints as the modules know them: a module's point (x, y) plus
        // the vector from its foot to its DetPoint (its own kinematics: encoders, IMU).
        // Role#1's from its shared point; a docked module's, or one past its staging point
        // (guided by its partner's port), from Role#1's and its place relative to Role#1; a
        // module walking to its staging point shares what its camera gives while it sees.
        let detpoint = |m: usize, at: [f64; 2]| {
            let d = poses[masts[m]] * Point3::new(DETPOINT_IN_MAST_M[0], DETPOINT_IN_MAST_M[1], DETPOINT_IN_MAST_M[2]);
            let f = poses[fleet.modules[m].foot].translation.vector;
            [at[0] + d.x - f.x, at[1] + d.y - f.y]
        };
        let from_role1 = |m: usize| {
            let f = poses[fleet.modules[m].foot].translation.vector;
            [role1_now.x + f.x - role1_true.x, role1_now.y + f.y - role1_true.y]
        };
        // A walking module's is shared while an anchored landmark is in its view, and not
        // counted as anchored by the others: two modules that see only each other would
        // otherwise carry each other away.
        let mut shared: Vec<(usize, [f64; 2], Landmark)> = vec![(
            module_of(1),
            detpoint(module_of(1), [role1_now.x, role1_now.y]),
            Landmark::Primary,
        )];
        for w in &walkers {
            let at = match (w.stage, w.eye.as_ref()) {
                (Stage::ToStaging, Some(eye)) if eye.anchored(t) => eye.estimate().map(|e| (e, Landmark::Floating)),
                (Stage::ToStaging, _) => None,
                _ => Some((from_role1(w.module), Landmark::Secondary)),
            };
            if let Some((at, kind)) = at {
                shared.push((w.module, detpoint(w.module, at), kind));
            }
        }
        // Where the modules walking to their staging points are, as they share it (their
        // cameras' estimates; the simulator's without a localisation).
        let walking: Vec<(usize, [f64; 2])> = walkers
            .iter()
            .filter(|w| w.stage == Stage::ToStaging)
            .filter_map(|w| {
                let at = match (&w.eye, localise) {
                    (Some(eye), _) => eye.estimate(),
                    (None, Some(_)) => None,
                    (None, None) => {
                        let f = poses[fleet.modules[w.module].foot].translation.vector;
                        Some([f.x, f.y])
                    }
                };
                at.map(|p| (w.target.role, p))
            })
            .collect();
        for w in walkers.iter_mut() {
            let io = &fleet.modules[w.module];
            // Walking to its staging point, the module sees itself through its camera.
            let mut seen_base = None;
            // Why it stands this tick, if it does (ends the assembly after the stage's time).
            let mut waiting: Option<String> = None;
            // At its point and turning to its heading (about its foot tip), it needs no
            // new sighting: its position stays what the camera last gave.
            let turning = w
                .goto
                .as_ref()
                .is_some_and(|g| matches!(g.phase(), GotoPhase::Turn | GotoPhase::Settle));
            if w.stage == Stage::ToStaging
                && let Some(eye) = w.eye.as_mut()
            {
                for m in 0..fleet.modules.len() {
                    if m == w.module {
                        continue;
                    }
                    let id = module_id(fleet.modules[m].robot);
                    match shared.iter().find(|(k, _, _)| *k == m) {
                        Some((_, xy, kind)) => eye.set_landmark(&id, *xy, *kind),
                        None => eye.remove_landmark(&id),
                    }
                }
                eye.set_object(&role1_id);
                eye.update(sim).map_err(|e| fail(w.target.role, e))?;
                // Before its first sighting it walks from its modelled start; once it has
                // seen, it stops whenever it loses sight.
                match eye.base(sim).filter(|_| eye.sightings == 0 || turning || eye.locked(t)) {
                    Some(b) => seen_base = Some(b),
                    // Nothing in view: it stands and looks.
                    None => {
                        waiting = Some(format!(
                            "its camera saw no landmark in {STAGE_TIMEOUT_S} s, walking to its staging point"
                        ))
                    }
                }
            }
            let base = seen_base.unwrap_or(poses[io.foot]);
            // Right of way by role: it stands while a module of a lower role, walking too,
            // is within YIELD_M (strict order: no two wait for each other).
            if waiting.is_none() && w.stage == Stage::ToStaging && !turning {
                let me = [base.translation.x, base.translation.y];
                if let Some(&(first, _)) = walking
                    .iter()
                    .find(|(r, p)| *r < w.target.role && (p[0] - me[0]).hypot(p[1] - me[1]) < YIELD_M)
                {
                    waiting = Some(format!(
                        "still waiting for Role#{first} after {STAGE_TIMEOUT_S} s, walking to its staging point"
                    ));
                }
            }
            if let Some(why) = waiting {
                if t - w.stage_started_s > STAGE_TIMEOUT_S {
                    return Err(fail(w.target.role, why));
                }
                rest(&io.joints, &mut out);
                if let Some(eye) = w.eye.as_ref() {
                    eye.command(&mut out);
                }
                continue;
            }
            if w.stage != Stage::Connected {
                // Rolled about its long axis (the inchworm only pitches it).
                let side = poses[io.foot].rotation * Vector3::y();
                let tilt = side.z.clamp(-1.0, 1.0).asin().abs().to_degrees();
                if tilt > TIPPED_DEG {
                    let here = fleet.pose(sim, w.module);
                    return Err(fail(
                        w.target.role,
                        format!(
                            "Module#{} tipped over (rolled {tilt:.0}°) at ({:.3}, {:.3}), walking to its {}",
                            w.module + 1,
                            here.x,
                            here.y,
                            if w.stage == Stage::ToStaging {
                                "staging point"
                            } else {
                                "pre-connection point"
                            }
                        ),
                    ));
                }
            }
            match w.goto.as_mut() {
                Some(g) if matches!(w.stage, Stage::ToStaging | Stage::ToPreConnection) => {
                    let goal = if w.stage == Stage::ToStaging {
                        let here = Pose2 {
                            x: base.translation.x,
                            y: base.translation.y,
                            yaw: yaw_of(&base),
                        };
                        let routed = route_around(role1_now, here, target_pose(role1_now, w.target.stage1));
                        // The walking modules that give way to this one (higher roles).
                        let giving_way: Vec<[f64; 2]> = walking
                            .iter()
                            .filter(|(r, _)| *r > w.target.role)
                            .map(|(_, p)| *p)
                            .collect();
                        detour(here, routed, &giving_way)
                    } else {
                        // Stage 2 aims at the partner's port as it is (record 0048).
                        pre_connection(&(poses[w.partner_link] * w.ports.1.frame), &w.own_in_foot)
                    };
                    w.goal = goal;
                    g.set_goal(goal_of(goal));
                    let obs = Observation {
                        time: t - w.stage_started_s,
                        positions: &q,
                        velocities: &v,
                        base,
                        sensors: &sensors,
                    };
                    g.step(dt, &obs, &mut out);
                    if w.stage == Stage::ToStaging
                        && let Some(eye) = w.eye.as_ref()
                    {
                        eye.command(&mut out);
                    }
                    // The latch catches its partner's port as soon as it is within reach with
                    // the foot at rest, between two steps (caught mid-step, the module would be
                    // welded with its foot lifted).
                    let at_rest = [io.joints.bj1, io.joints.bj2]
                        .iter()
                        .all(|&k| q[k].abs() < SETTLED_DEG.to_radians());
                    let caught = w.stage == Stage::ToPreConnection
                        && at_rest
                        && sim
                            .port_fit(&w.ports.1, &w.ports.0, 0.0)
                            .is_ok_and(|f| f.distance_m <= CATCH_M && f.axis_deg <= LATCH.axis_deg);
                    if caught || g.phase() == GotoPhase::Done {
                        let here = fleet.pose(sim, w.module);
                        let goal = w.goal;
                        w.log.cycles = w.cycles_before + g.gait_cycles();
                        w.cycles_before = w.log.cycles;
                        if w.stage == Stage::ToStaging {
                            if seen_base.is_some() {
                                // Relative to Role#1, the frame the goals hang from: a
                                // pushed Role#1 shifts both alike.
                                w.log.staging_localisation_m = ((here.x - role1_true.x)
                                    - (base.translation.x - role1_now.x))
                                    .hypot((here.y - role1_true.y) - (base.translation.y - role1_now.y));
                            }
                            w.stage = Stage::Staged;
                            w.log.staged_s = t;
                        } else {
                            w.stage = Stage::Settling;
                            w.log.pre_connection_s = t;
                            w.log.stop_error_m = (here.x - goal.x).hypot(here.y - goal.y);
                        }
                        w.goto = None;
                        rest(&io.joints, &mut out);
                    } else if t - w.stage_started_s > STAGE_TIMEOUT_S {
                        let here = fleet.pose(sim, w.module);
                        let goal = w.goal;
                        return Err(fail(
                            w.target.role,
                            format!(
                                "did not reach its {} point in {STAGE_TIMEOUT_S} s: {:.3} m from it",
                                if w.stage == Stage::ToStaging {
                                    "staging"
                                } else {
                                    "pre-connection"
                                },
                                (here.x - goal.x).hypot(here.y - goal.y)
                            ),
                        ));
                    }
                }
                _ => {
                    if w.stage == Stage::Settling
                        && [io.joints.bj1, io.joints.bj2]
                            .iter()
                            .all(|&k| q[k].abs() < SETTLED_DEG.to_radians())
                    {
                        w.stage = Stage::AtPreConnection;
                    }
                    rest(&io.joints, &mut out);
                }
            }
        }
        // A module docked into the configuration keeps holding its rest pose until all are.
        let targets: Vec<f64> = out.iter().map(JointTarget::value).collect();
        sim.set_targets(&targets).map_err(|e| fail(0, e.to_string()))?;
        t += dt;
        sim.advance_to(t).map_err(|e| fail(0, e.to_string()))?;
        observe(sim);
    }
    let complete_s = t;
    let end1 = fleet.pose(sim, module_of(1));
    let role1_drift_m = (end1.x - role1.x).hypot(end1.y - role1.y);

    // The FrontJoints' zeros in the configuration.
    let q = sim.joint_positions();
    let mut fj_offsets = [0.0; 6];
    for (r, c) in fj_offsets.iter_mut().enumerate() {
        let fj = q[fleet.modules[module_of(r + 1)].joints.fj];
        let roll = docked
            .iter()
            .find(|l| l.role == r + 1 && l.wheel_roll_deg != 0.0)
            .map(|l| l.wheel_roll_deg.to_radians());
        *c = match roll {
            Some(roll) => modbot_gaits::modular::wrap_rad(fj + roll) - fj,
            None => -fj,
        };
    }
    let outcome = AssemblyOutcome {
        configuration,
        roles: docked,
        complete_s: t,
        end_s: t,
        role1_drift_m: 0.0,
        fj_offsets,
        detached_s: None,
    };

    // conf_init: the FrontJoints into the configuration's mode, then its initial pose.
    let drives = front_joint_drives(configuration).map_err(|e| fail(0, e))?;
    for (r, d) in drives.iter().enumerate() {
        let joint = fleet.modules[module_of(r + 1)].joints.fj;
        sim.set_drive(joint, *d).map_err(|e| fail(r + 1, e.to_string()))?;
    }
    let role_joints = fleet.role_joints(roles);
    let init: Box<dyn Controller> = match configuration {
        Configuration::Quadruped => Box::new(QuadWalk::new("stand", role_joints, n, QuadGait::Stand)),
        Configuration::Wheeled => Box::new(WheeledDrive::new(
            "stand",
            role_joints,
            n,
            WheeledPose::Normal,
            WheelCommand::Stop,
            1.0,
        )),
    };
    let mut init = Rereferenced::new(init, fleet, roles, &outcome);
    let base_link = fleet.modules[module_of(1)].foot;
    drive_until(sim, &mut init, base_link, CONF_INIT_S, &mut |sim| {
        observe(sim);
        false
    })
    .map_err(|e| fail(0, e))?;
    let t = sim.time();
    Ok(AssemblyOutcome {
        complete_s,
        end_s: t,
        role1_drift_m,
        ..outcome
    })
}

/// Steps the leaving modules take out of the configuration (§5.2).
pub const BACK_OUT_STEPS: usize = 3;
/// The feet are at rest within this, deg (§5.2: 0.1°).
pub const FEET_DOWN_DEG: f64 = 0.1;
/// Time the feet are given to come to rest, and the back-out steps to be taken, s.
pub const REASSEMBLY_STEP_TIMEOUT_S: f64 = 20.0;

/// The lone module's FrontJoint drive (a wheel in speed mode).
fn lone_front_joint_drive() -> Result<Drive, String> {
    let catalog = ModuleCatalog::builtin();
    let topology = Topology::resolve("wheelfoot", &catalog).map_err(|e| e.to_string())?;
    let robot = SimRobot::from_topology(&topology).map_err(|e| e.to_string())?;
    let name = format!("{PREFIX}_front_joint");
    let k = robot
        .joint_names
        .iter()
        .position(|n| *n == name)
        .ok_or_else(|| format!("the wheel-foot module has no joint `{name}`"))?;
    Ok(robot.drives[k])
}

/// Reassembles the configuration `from` (assembled by [`assemble`] with `roles`) into
/// `to` (§5.2): every FrontJoint back to the lone module's wheel, every foot to rest
/// (within [`FEET_DOWN_DEG`]), Roles #3–#6 unlinked, three high steps out of the old
/// configuration (backward leaving the quadruped, forward leaving the wheeled vehicle),
/// then the assembly of `to` with Roles #1 and #2 still joined (Role#2 counts as
/// connected), the walking modules localised by `localise` as in [`assemble_observed`].
/// `observe` is called with the simulator after every control step.
#[allow(clippy::too_many_arguments)]
pub fn reassemble(
    sim: &mut dyn Plant,
    fleet: &Fleet,
    roles: &RoleAssignment,
    from: Configuration,
    to: Configuration,
    table: StepTable,
    localise: Option<&CameraLocalisation<'_>>,
    observe: &mut dyn FnMut(&dyn Plant),
) -> Result<AssemblyOutcome, AssemblyFailure> {
    if from == to {
        return Err(fail(0, format!("the modules are already the {}", to.name())));
    }
    let n = sim.joint_names().len();
    let joints = fleet.role_joints(roles);
    let base = fleet.modules[roles.modules[0]].foot;
    // Every FrontJoint a wheel again, every foot to rest.
    let wheel = lone_front_joint_drive().map_err(|e| fail(0, e))?;
    for (r, j) in joints.iter().enumerate() {
        sim.set_drive(j.fj, wheel).map_err(|e| fail(r + 1, e.to_string()))?;
    }
    let mut down = AllAtRest { joints, count: n };
    let mut settled = false;
    drive_until(sim, &mut down, base, REASSEMBLY_STEP_TIMEOUT_S, &mut |sim| {
        observe(sim);
        let q = sim.joint_positions();
        settled = joints
            .iter()
            .all(|j| q[j.bj1].abs() < FEET_DOWN_DEG.to_radians() && q[j.bj2].abs() < FEET_DOWN_DEG.to_radians());
        settled
    })
    .map_err(|e| fail(0, e))?;
    if !settled {
        return Err(fail(
            0,
            format!("the feet did not come to rest within {FEET_DOWN_DEG}° in {REASSEMBLY_STEP_TIMEOUT_S} s"),
        ));
    }
    // Roles #3–#6 let go.
    let detached_s = sim.time();
    for role in 3..=6 {
        let target = role_target(from.name(), role).map_err(|e| fail(role, e.to_string()))?;
        sim.detach(&dock_name(target)).map_err(|e| fail(role, e.to_string()))?;
    }
    // Three high steps out.
    let gait = match from {
        Configuration::Quadruped => modbot_gaits::modular::single::InchwormGait::BwdHigh,
        Configuration::Wheeled => modbot_gaits::modular::single::InchwormGait::FwdHigh,
    };
    // Each leaving module holds its own heading (its foot's, as the lone module does).
    let mut walkers: Vec<(usize, modbot_gaits::modular::single::Inchworm)> = (3..=6)
        .map(|role| {
            (
                role,
                modbot_gaits::modular::single::Inchworm::new(joints[role - 1], n, gait, 0.0, HeadingBands::default()),
            )
        })
        .collect();
    let dt = 1.0 / CONTROL_HZ;
    let sensors = std::collections::BTreeMap::new();
    let mut out = vec![JointTarget::Position(0.0); n];
    let t0 = sim.time();
    let mut t = t0;
    while walkers.iter().any(|(_, w)| w.completed_cycles() < BACK_OUT_STEPS) {
        if t - t0 > REASSEMBLY_STEP_TIMEOUT_S {
            let late: Vec<String> = walkers
                .iter()
                .filter(|(_, w)| w.completed_cycles() < BACK_OUT_STEPS)
                .map(|(r, w)| format!("Role#{r} ({} steps)", w.completed_cycles()))
                .collect();
            return Err(fail(
                0,
                format!(
                    "the leaving modules did not take {BACK_OUT_STEPS} steps in {REASSEMBLY_STEP_TIMEOUT_S} s: {}",
                    late.join(", ")
                ),
            ));
        }
        let q = sim.joint_positions();
        let v = sim.joint_velocities();
        let poses = sim.link_poses();
        rest(&joints[0], &mut out);
        rest(&joints[1], &mut out);
        for (role, w) in walkers.iter_mut() {
            let j = &joints[*role - 1];
            if w.completed_cycles() >= BACK_OUT_STEPS {
                rest(j, &mut out);
                continue;
            }
            let obs = Observation {
                time: t - t0,
                positions: &q,
                velocities: &v,
                base: poses[fleet.modules[roles.modules[*role - 1]].foot],
                sensors: &sensors,
            };
            w.step(dt, &obs, &mut out);
        }
        let targets: Vec<f64> = out.iter().map(JointTarget::value).collect();
        sim.set_targets(&targets).map_err(|e| fail(0, e.to_string()))?;
        t += dt;
        sim.advance_to(t).map_err(|e| fail(0, e.to_string()))?;
        observe(sim);
    }
    assemble_observed(sim, fleet, roles, to, table, &[2], localise, observe).map(|o| AssemblyOutcome {
        detached_s: Some(detached_s),
        ..o
    })
}

/// Every module of a configuration at rest: wheels still, feet (0, 0), cameras centred.
struct AllAtRest {
    joints: [ModuleJoints; 6],
    count: usize,
}

impl Controller for AllAtRest {
    fn name(&self) -> &str {
        "rest"
    }

    fn joint_count(&self) -> usize {
        self.count
    }

    fn step(&mut self, _dt: f64, _obs: &Observation<'_>, out: &mut [JointTarget]) {
        for j in &self.joints {
            rest(j, out);
        }
    }

    fn period(&self) -> Option<f64> {
        None
    }

    fn completed_cycles(&self) -> usize {
        0
    }
}
