//! The simulator: one or several robots in one scenario, on modbot's native
//! reduced-coordinate engine (the default) or on rapier3d multibodies (the cross-check);
//! decision records 0012, 0018.

use std::collections::BTreeMap;
use std::ops::Range;

use modbot_core::Scenario;
use modbot_description::model::Shape;
use nalgebra::{Isometry3, Point3, Vector3};

use crate::error::{Result, SimError};
use crate::layout::{JointSpec, Layout, StartPose};
use crate::native::{NativeParams, NativeWorld};
use crate::rapier_engine::{RapierParams, RapierWorld};
use crate::robot::{Drive, SimRobot};

/// Which physics engine steps the world.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Engine {
    /// modbot's own reduced-coordinate engine (CRBA + Newton–Euler, one PGS solve over
    /// servos, limits and contacts): the default, and the fast one.
    #[default]
    Native,
    /// A rapier3d multibody, kept to cross-check the native engine.
    Rapier,
}

impl std::str::FromStr for Engine {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Engine, String> {
        match s {
            "native" => Ok(Engine::Native),
            "rapier" => Ok(Engine::Rapier),
            other => Err(format!("unknown engine `{other}` (native, rapier)")),
        }
    }
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Engine::Native => "native",
            Engine::Rapier => "rapier",
        })
    }
}

/// Settings of the native engine (decision record 0018).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NativeSettings {
    /// Projected Gauss–Seidel sweeps per step.
    pub sweeps: usize,
    /// Reflected rotor inertia added to each driven joint, kg·m².
    pub armature: f64,
    /// Viscous damping of each joint, N·m·s/rad.
    pub joint_damping: f64,
    /// Error reduction: the fraction of a penetration (contact or limit) removed per step.
    pub erp: f64,
    /// Compliance of the contact rows, as a fraction of each row's effective inverse mass:
    /// it makes the statically indeterminate contact forces of a chain lying on the ground
    /// unique, so Gauss–Seidel's order cannot pick a side.
    pub cfm: f64,
    /// Penetration left alone, m.
    pub slop_m: f64,
    /// Contacts are made this far before touching, m.
    pub margin_m: f64,
}

impl Default for NativeSettings {
    fn default() -> NativeSettings {
        NativeSettings {
            sweeps: 10,
            armature: 2e-5,
            joint_damping: 0.0,
            erp: 0.2,
            cfm: 0.03,
            slop_m: 5e-4,
            margin_m: 2e-3,
        }
    }
}

/// Settings of the rapier3d engine (decision record 0012).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RapierSettings {
    /// Solver iterations (substeps) per step.
    pub solver_iterations: usize,
    /// Gauss–Seidel sweeps inside each solver iteration.
    pub pgs_iterations: usize,
    /// Damping coefficient of the velocity motor that realises a drive, N·m·s/rad.
    pub motor_damping: f64,
    /// Reflected rotor inertia added to each driven joint, kg·m².
    pub armature: f64,
    /// Viscous damping of each joint, N·m·s/rad.
    pub joint_damping: f64,
}

impl Default for RapierSettings {
    fn default() -> RapierSettings {
        RapierSettings {
            solver_iterations: 8,
            pgs_iterations: 4,
            motor_damping: 5.0,
            armature: 2e-5,
            joint_damping: 0.0,
        }
    }
}

/// The engine and its own settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EngineSettings {
    /// modbot's native engine.
    Native(NativeSettings),
    /// The rapier3d multibody.
    Rapier(RapierSettings),
}

impl EngineSettings {
    /// The defaults of an engine.
    pub fn defaults(engine: Engine) -> EngineSettings {
        match engine {
            Engine::Native => EngineSettings::Native(NativeSettings::default()),
            Engine::Rapier => EngineSettings::Rapier(RapierSettings::default()),
        }
    }

    /// Which engine these are for.
    pub fn engine(&self) -> Engine {
        match self {
            EngineSettings::Native(_) => Engine::Native,
            EngineSettings::Rapier(_) => Engine::Rapier,
        }
    }
}

/// Numerical settings of the embedded simulator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimSettings {
    /// Physics step, s (default: the scenario's `physics.step_s`).
    pub step_s: f64,
    /// Gap left under each robot at the start, m.
    pub start_clearance_m: f64,
    /// The engine and its settings.
    pub engine: EngineSettings,
}

fn bad(key: &str, v: impl ToString, expected: &str) -> SimError {
    SimError::Settings {
        key: key.into(),
        value: v.to_string(),
        expected: expected.into(),
    }
}

fn finite_at_least(key: &str, v: f64, min: f64) -> Result<()> {
    if v.is_finite() && v >= min {
        Ok(())
    } else {
        Err(bad(key, v, &format!("a finite number >= {min}")))
    }
}

impl NativeSettings {
    fn validate(&self) -> Result<()> {
        if self.sweeps == 0 || self.sweeps > 4096 {
            return Err(bad("native.sweeps", self.sweeps, "1 to 4096"));
        }
        finite_at_least("native.armature", self.armature, 0.0)?;
        finite_at_least("native.joint_damping", self.joint_damping, 0.0)?;
        if !(self.erp.is_finite() && (0.0..=1.0).contains(&self.erp)) {
            return Err(bad("native.erp", self.erp, "a fraction in [0, 1]"));
        }
        finite_at_least("native.cfm", self.cfm, 0.0)?;
        finite_at_least("native.slop_m", self.slop_m, 0.0)?;
        finite_at_least("native.margin_m", self.margin_m, 0.0)
    }
}

impl RapierSettings {
    fn validate(&self) -> Result<()> {
        if self.solver_iterations == 0 || self.solver_iterations > 256 {
            return Err(bad("rapier.solver_iterations", self.solver_iterations, "1 to 256"));
        }
        if self.pgs_iterations == 0 || self.pgs_iterations > 64 {
            return Err(bad("rapier.pgs_iterations", self.pgs_iterations, "1 to 64"));
        }
        if !(self.motor_damping.is_finite() && self.motor_damping > 0.0) {
            return Err(bad("rapier.motor_damping", self.motor_damping, "a finite number > 0"));
        }
        finite_at_least("rapier.armature", self.armature, 0.0)?;
        finite_at_least("rapier.joint_damping", self.joint_damping, 0.0)
    }
}

impl SimSettings {
    /// Defaults of `engine` for a scenario.
    pub fn for_engine(engine: Engine, s: &Scenario) -> SimSettings {
        SimSettings {
            step_s: s.physics.step_s,
            start_clearance_m: 5e-4,
            engine: EngineSettings::defaults(engine),
        }
    }

    /// Defaults for a scenario on the native engine (decision record 0018).
    pub fn for_scenario(s: &Scenario) -> SimSettings {
        SimSettings::for_engine(Engine::Native, s)
    }

    /// Defaults for a scenario on the rapier engine (decision record 0012).
    pub fn rapier(s: &Scenario) -> SimSettings {
        SimSettings::for_engine(Engine::Rapier, s)
    }

    /// The engine.
    pub fn engine(&self) -> Engine {
        self.engine.engine()
    }

    /// Solver effort as the command line gives it: rapier takes both numbers as they are;
    /// the native engine, whose solve is one, sweeps `solver × pgs` times (by default
    /// `solver` = its sweeps and `pgs` = 1).
    pub fn with_iterations(mut self, solver: Option<usize>, pgs: Option<usize>) -> SimSettings {
        match &mut self.engine {
            EngineSettings::Native(n) => {
                n.sweeps = solver.unwrap_or(n.sweeps).saturating_mul(pgs.unwrap_or(1));
            }
            EngineSettings::Rapier(r) => {
                r.solver_iterations = solver.unwrap_or(r.solver_iterations);
                r.pgs_iterations = pgs.unwrap_or(r.pgs_iterations);
            }
        }
        self
    }

    fn validate(&self) -> Result<()> {
        if !(self.step_s.is_finite() && (modbot_core::scenario::MIN_PHYSICS_STEP_S..=0.02).contains(&self.step_s)) {
            return Err(bad("step_s", self.step_s, "a physics step from 1e-5 to 0.02 s"));
        }
        finite_at_least("start_clearance_m", self.start_clearance_m, 0.0)?;
        match &self.engine {
            EngineSettings::Native(n) => n.validate(),
            EngineSettings::Rapier(r) => r.validate(),
        }
    }
}

/// The engine behind a simulator.
pub(crate) enum World {
    Native(Box<NativeWorld>),
    Rapier(Box<RapierWorld>),
}

/// Velocity of a point of a body and the body's angular velocity, world frame.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Twist {
    /// Linear velocity of the point, m/s.
    pub linear: Vector3<f64>,
    /// Angular velocity, rad/s.
    pub angular: Vector3<f64>,
}

/// One robot's place in the simulator's lists.
struct RobotInfo {
    joints: Range<usize>,
    links: Range<usize>,
    mass: f64,
    /// Its URDF root link (index in the simulator's links).
    root_link: usize,
    /// Tail point (root link origin) and head point (far end of the last link), each as
    /// (link, point in that link's frame).
    tail: (usize, Point3<f64>),
    head: (usize, Point3<f64>),
    /// The link half way along the joint list (the chain's central module: the limbless
    /// thesis follows it in Exp. 24 and 33).
    middle: usize,
    /// Force sensors: name and the layout link they measure (the fixed joint's child).
    force_sensors: Vec<(String, usize)>,
}

/// The simulator: one or several robots in one scenario.
///
/// With several robots ([`Simulator::with_robots`]) joint commands, joint names, joint
/// positions and velocities and link poses and twists are each robot's in turn, in the order
/// the robots were given ([`Simulator::joints_of`], [`Simulator::links_of`]); the measures
/// without a robot index ([`Simulator::com`], [`Simulator::ends`], [`Simulator::root_pose`])
/// are the first robot's.
pub struct Simulator {
    pub(crate) world: World,
    pub(crate) settings: SimSettings,
    pub(crate) body_names: Vec<String>,
    /// Per body: its centre of mass in its frame.
    pub(crate) body_com: Vec<Point3<f64>>,
    /// Per URDF link: its body and its pose in that body.
    pub(crate) link_body: Vec<(usize, Isometry3<f64>)>,
    link_mass: Vec<f64>,
    /// Per URDF link: its centre of mass in its frame.
    link_com: Vec<Point3<f64>>,
    pub(crate) joints: Vec<JointSpec>,
    targets: Vec<f64>,
    joint_names: Vec<String>,
    robots: Vec<RobotInfo>,
    total_mass: f64,
    steps: u64,
    time: f64,
    reference: Reference,
    /// The inputs a divergence report names (world, gravity, engine, step, start poses).
    setup: String,
    /// URDF link names, in link order (every robot's).
    pub(crate) link_names: Vec<String>,
    /// What a ray can hit: the obstacles (world pose) and every body's colliders (body,
    /// link, shape, pose in the body).
    pub(crate) ray_obstacles: Vec<(rapier3d::parry::shape::SharedShape, Isometry3<f64>)>,
    pub(crate) ray_colliders: Vec<RayCollider>,
    /// IR range sensors (record 0029).
    pub(crate) ir: Vec<crate::sensors::IrSensor>,
    /// Tilt sensors.
    pub(crate) tilt: Vec<crate::sensors::TiltSensor>,
    /// The closest approach to the world's boxes so far, when watched.
    pub(crate) clearance: Option<f64>,
    /// The robots as given and the layout in force: what a run-time regrouping rebuilds
    /// from (record 0030).
    pub(crate) sim_robots: Vec<SimRobot>,
    pub(crate) layout: Layout,
    /// Fixed joints cut at run time: (robot, model joint index).
    pub(crate) cut: std::collections::BTreeSet<(usize, usize)>,
    /// Docks made at run time.
    pub(crate) docks: Vec<crate::dock::DockRecord>,
    /// External forces in force: (link, point in the link frame, force in world axes, N).
    external: Vec<(usize, Point3<f64>, Vector3<f64>)>,
}

/// What the measurement protocol follows on the first robot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reference {
    /// The centre of mass, heading along the tail → head axis (a limbless chain: the
    /// limbless thesis's protocol).
    #[default]
    Com,
    /// The root link's origin, heading of the root link (a module's reference point: the
    /// wheel-foot thesis measures its foot plate's lower tip and the module's yaw).
    Base,
}

pub use modbot_gaits::modular::yaw_of as heading_of;

/// The error for a layout whose joints close a kinematic loop, naming the robot of the first
/// joint no tree reaches.
pub(crate) fn layout_loop_error(layout: &Layout) -> SimError {
    let reached: std::collections::BTreeSet<usize> = layout.joint_order().into_iter().map(|(k, _)| k).collect();
    let missing = (0..layout.joints.len()).find(|k| !reached.contains(k)).unwrap_or(0);
    let r = layout
        .robots
        .iter()
        .position(|span| span.joints.contains(&missing))
        .unwrap_or(0);
    SimError::Robot {
        robot: layout.robots[r].name.clone(),
        what: "the joints close a kinematic loop".into(),
    }
}

/// rapier's collision groups give each robot a bit of its own and the world one: 31 robots.
const RAPIER_MAX_ROBOTS: usize = 31;

impl World {
    /// The engine's world of a layout; None if a joint closes a kinematic loop (rapier).
    pub(crate) fn of(layout: &Layout, settings: &SimSettings) -> Option<World> {
        Some(match settings.engine {
            EngineSettings::Native(n) => World::Native(Box::new(NativeWorld::new(
                layout,
                NativeParams {
                    dt: settings.step_s,
                    sweeps: n.sweeps,
                    armature: n.armature,
                    joint_damping: n.joint_damping,
                    erp: n.erp,
                    slop: n.slop_m,
                    margin: n.margin_m,
                    cfm: n.cfm,
                },
            ))),
            EngineSettings::Rapier(r) => World::Rapier(Box::new(RapierWorld::new(
                layout,
                RapierParams {
                    dt: settings.step_s,
                    solver_iterations: r.solver_iterations,
                    pgs_iterations: r.pgs_iterations,
                    motor_damping: r.motor_damping,
                    armature: r.armature,
                    joint_damping: r.joint_damping,
                },
            )?)),
        })
    }
}

/// What a ray can hit of a body: (body, link, shape, pose in the body).
pub(crate) type RayCollider = (usize, usize, rapier3d::parry::shape::SharedShape, Isometry3<f64>);

/// Per body of a layout: its name (robot-qualified with several robots), its centre of mass,
/// and its ray colliders.
pub(crate) fn body_tables(layout: &Layout, several: bool) -> (Vec<String>, Vec<Point3<f64>>, Vec<RayCollider>) {
    let names = layout
        .bodies
        .iter()
        .map(|b| {
            if several {
                format!("{}#{}/{}", layout.robots[b.robot].name, b.robot, b.name)
            } else {
                b.name.clone()
            }
        })
        .collect();
    let com = layout.bodies.iter().map(|b| Point3::from(b.com)).collect();
    let rays = layout
        .bodies
        .iter()
        .enumerate()
        .flat_map(|(b, body)| {
            body.colliders
                .iter()
                .map(move |c| (b, c.link, c.shape.clone(), c.local))
        })
        .collect();
    (names, com, rays)
}

impl Simulator {
    /// Builds the world: the robot at the scenario's start pose, resting on the ground with
    /// its body axis along the start heading, the ground and the obstacles.
    pub fn new(robot: &SimRobot, scenario: &Scenario, settings: SimSettings) -> Result<Simulator> {
        Simulator::build(&[(robot, StartPose::of_scenario(scenario))], scenario, settings)
    }

    /// Builds a world of several robots (independent kinematic trees), each at its own start
    /// pose (z = 0: resting on the ground); the scenario's own start pose is not used. Joint
    /// commands are the robots' joints in the order given.
    pub fn with_robots(
        robots: &[(SimRobot, StartPose)],
        scenario: &Scenario,
        settings: SimSettings,
    ) -> Result<Simulator> {
        let list: Vec<(&SimRobot, StartPose)> = robots.iter().map(|(r, p)| (r, *p)).collect();
        Simulator::build(&list, scenario, settings)
    }

    fn build(robots: &[(&SimRobot, StartPose)], scenario: &Scenario, settings: SimSettings) -> Result<Simulator> {
        settings.validate()?;
        scenario.validate()?;
        if robots.is_empty() {
            return Err(bad("robots", 0, "at least one robot"));
        }
        if settings.engine() == Engine::Rapier && robots.len() > RAPIER_MAX_ROBOTS {
            return Err(bad(
                "robots",
                robots.len(),
                &format!("at most {RAPIER_MAX_ROBOTS} robots on the rapier engine"),
            ));
        }
        for (r, start) in robots {
            if start.xyz.iter().chain([&start.yaw]).any(|v| !v.is_finite()) {
                return Err(SimError::Robot {
                    robot: r.model.name.clone(),
                    what: format!("start pose {start:?} is not finite"),
                });
            }
        }
        let layout = Layout::new(robots, scenario, settings.start_clearance_m)?;
        let loop_error = || layout_loop_error(&layout);
        if layout.joint_order().len() != layout.joints.len() {
            return Err(loop_error());
        }
        let world = World::of(&layout, &settings).ok_or_else(loop_error)?;

        let several = robots.len() > 1;
        let mut infos = Vec::with_capacity(robots.len());
        let mut link_mass = Vec::new();
        let mut link_com = Vec::new();
        let mut joint_names = Vec::new();
        let mut link_names = Vec::new();
        for ((robot, _), span) in robots.iter().zip(&layout.robots) {
            let model = &robot.model;
            let link = |l: usize| span.links.start + l;
            // Tail: the root link's origin. Head: the far end (+x face) of the last link's
            // first box.
            let last = model.joints.last().map(|j| j.child).unwrap_or(model.root);
            let head_local = model.links[last]
                .collisions
                .iter()
                .find_map(|(o, s)| match s {
                    Shape::Box([x, _, _]) => Some(o * Point3::new(x / 2.0, 0.0, 0.0)),
                    _ => None,
                })
                .unwrap_or_else(Point3::origin);
            for l in &model.links {
                link_names.push(l.name.clone());
                link_mass.push(l.mass);
                link_com.push(l.inertial_origin * Point3::origin());
            }
            joint_names.extend(robot.joint_names.iter().cloned());
            infos.push(RobotInfo {
                joints: span.joints.clone(),
                links: span.links.clone(),
                mass: model.links.iter().map(|l| l.mass).sum(),
                root_link: link(model.root),
                tail: (link(model.root), Point3::origin()),
                head: (link(last), head_local),
                middle: model
                    .joints
                    .get(model.joints.len() / 2)
                    .map_or(link(model.root), |j| link(j.child)),
                force_sensors: robot
                    .force_sensors
                    .iter()
                    .filter_map(|(name, child)| {
                        let i = model.links.iter().position(|l| &l.name == child)?;
                        Some((name.clone(), link(i)))
                    })
                    .collect(),
            });
        }
        let (body_names, body_com, ray_colliders) = body_tables(&layout, several);
        let ray_obstacles = layout.obstacles.iter().map(|o| (o.shape.clone(), o.pose)).collect();
        let starts: Vec<String> = robots
            .iter()
            .zip(&infos)
            .map(|((r, p), info)| {
                format!(
                    "`{}` ({:.3} kg) at ({:.3}, {:.3}, {:.3}) m, yaw {:.1}°",
                    r.model.name,
                    info.mass,
                    p.xyz[0],
                    p.xyz[1],
                    p.xyz[2],
                    p.yaw.to_degrees()
                )
            })
            .collect();
        let setup = format!(
            "world `{}`, gravity {:?} m/s², {} engine, physics step {} ms, {}",
            scenario.name,
            scenario.gravity,
            settings.engine(),
            settings.step_s * 1000.0,
            starts.join(", ")
        );
        Ok(Simulator {
            setup,
            link_names,
            ray_obstacles,
            ray_colliders,
            ir: Vec::new(),
            tilt: Vec::new(),
            clearance: None,
            world,
            settings,
            body_names,
            body_com,
            link_mass,
            link_com,
            total_mass: layout.bodies.iter().map(|b| b.mass).sum(),
            targets: vec![0.0; layout.joints.len()],
            link_body: layout.link_body.clone(),
            joints: layout.joints.clone(),
            sim_robots: robots.iter().map(|(r, _)| (*r).clone()).collect(),
            layout,
            cut: Default::default(),
            docks: Vec::new(),
            external: Vec::new(),
            joint_names,
            robots: infos,
            steps: 0,
            time: 0.0,
            reference: Reference::Com,
        })
    }

    /// The first robot's force/torque sensors, by name: the force its measured link (the
    /// sensor joint's child, e.g. the wheel-foot module's front wheel disc) receives from its
    /// contacts in the last step, in that link's frame, N — what the joint passes on to the
    /// sensor, neglecting the link's own weight and inertia. Empty on the rapier engine,
    /// which keeps no per-link contact forces here.
    pub fn force_sensors(&self) -> BTreeMap<String, Vec<f64>> {
        let World::Native(w) = &self.world else {
            return BTreeMap::new();
        };
        let forces = w.link_forces();
        let Some(robot) = self.robots.first() else {
            return BTreeMap::new();
        };
        robot
            .force_sensors
            .iter()
            .map(|(name, l)| {
                let (b, off) = self.link_body[*l];
                let frame = self.body_pose(b) * off;
                let f = frame.rotation.inverse() * forces[*l];
                (name.clone(), vec![f.x, f.y, f.z])
            })
            .collect()
    }

    /// What the measurement protocol follows ([`Reference::Com`] unless set).
    pub fn reference(&self) -> Reference {
        self.reference
    }

    /// Sets what the measurement protocol follows.
    pub fn set_reference(&mut self, reference: Reference) {
        self.reference = reference;
    }

    /// Simulated time, s.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Physics steps taken.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The physics step, s.
    pub fn step_size(&self) -> f64 {
        self.settings.step_s
    }

    /// The targets in force, command order (angles clamped to the limits, speeds as given).
    pub fn targets(&self) -> &[f64] {
        &self.targets
    }

    /// Names of the driven joints, in command order.
    pub fn joint_names(&self) -> &[String] {
        &self.joint_names
    }

    /// Number of robots.
    pub fn robot_count(&self) -> usize {
        self.robots.len()
    }

    /// A robot's joints in the command order (and in [`Simulator::joint_names`]).
    ///
    /// # Panics
    /// If `robot` ≥ [`Simulator::robot_count`].
    pub fn joints_of(&self, robot: usize) -> Range<usize> {
        self.robots[robot].joints.clone()
    }

    /// A robot's links in [`Simulator::link_poses`] and [`Simulator::link_twists`].
    ///
    /// # Panics
    /// If `robot` ≥ [`Simulator::robot_count`].
    pub fn links_of(&self, robot: usize) -> Range<usize> {
        self.robots[robot].links.clone()
    }

    /// The target a joint's drive will use: an angle clamped to the limits for a position
    /// servo, a speed for a velocity drive (clipped to its limit when applied).
    fn accept(&self, i: usize, target: f64) -> Result<f64> {
        if !target.is_finite() {
            return Err(SimError::NotFinite {
                joint: self.joint_names[i].clone(),
                value: target,
            });
        }
        let j = &self.joints[i];
        Ok(match j.drive {
            Drive::Position(_) => target.clamp(j.lower, j.upper),
            Drive::Velocity { .. } | Drive::Free => target,
        })
    }

    /// Sets every joint target (command order): an angle (rad) for a position-servo joint,
    /// clamped to its limits as a servo does; a speed (rad/s) for a velocity-driven joint;
    /// ignored for a free joint. Every value must be finite.
    pub fn set_targets(&mut self, targets: &[f64]) -> Result<()> {
        if targets.len() != self.joints.len() {
            return Err(SimError::JointCount {
                expected: self.joints.len(),
                got: targets.len(),
            });
        }
        let accepted = targets
            .iter()
            .enumerate()
            .map(|(i, t)| self.accept(i, *t))
            .collect::<Result<Vec<f64>>>()?;
        self.targets = accepted;
        Ok(())
    }

    /// Switches joint `joint` (command index) to another motor drive at run time: a servo
    /// put into speed mode or back. The wheel-foot module's FrontJoint is a wheel alone and in
    /// the wheeled vehicle but a hip in the quadruped, and the same modules dock into both
    /// (record 0048). Only a driven joint changes, and only to another motor drive (its
    /// reflected rotor inertia stays); its target becomes the current angle (a servo) or 0 (a
    /// speed), so the switch itself moves nothing. Docking keeps the new drive. Native engine
    /// only, as docking.
    pub fn set_drive(&mut self, joint: usize, drive: Drive) -> Result<()> {
        let Some(r) = (0..self.robots.len()).find(|&r| self.robots[r].joints.contains(&joint)) else {
            return Err(SimError::JointCount {
                expected: self.joints.len(),
                got: joint.saturating_add(1),
            });
        };
        let name = self.joint_names[joint].clone();
        let refuse = |what: String| SimError::Robot {
            robot: self.sim_robots[r].model.name.clone(),
            what: format!("joint `{name}`: {what}"),
        };
        if matches!(drive, Drive::Free) || matches!(self.joints[joint].drive, Drive::Free) {
            return Err(refuse(
                "only a motor drive can switch to another (a free joint has no motor)".into(),
            ));
        }
        let World::Native(w) = &mut self.world else {
            return Err(refuse("switching a drive at run time needs the native engine".into()));
        };
        let local = joint - self.robots[r].joints.start;
        let local_name = self.sim_robots[r].joint_names[local].clone();
        self.sim_robots[r] = self.sim_robots[r].clone().with_drive(&local_name, drive)?;
        w.set_drive(joint, drive);
        self.joints[joint].drive = drive;
        self.layout.joints[joint].drive = drive;
        self.targets[joint] = match drive {
            Drive::Position(_) => self.angle(joint),
            _ => 0.0,
        };
        Ok(())
    }

    /// Pushes link `link` (index in [`Simulator::link_names`]) with `force` (world axes, N)
    /// at `point` (the link's frame, m) from the next step on, until changed or cleared: a
    /// test's hand pulling on a robot. A second force on the same link replaces the first; a
    /// zero force removes it. Native engine only; docking and splitting keep it.
    pub fn set_external_force(&mut self, link: usize, point: Point3<f64>, force: Vector3<f64>) -> Result<()> {
        let name = self.link_names.get(link).cloned().ok_or_else(|| SimError::Robot {
            robot: "simulator".into(),
            what: format!("no link {link} (there are {})", self.link_names.len()),
        })?;
        if point.coords.iter().chain(force.iter()).any(|v| !v.is_finite()) {
            return Err(SimError::Robot {
                robot: "simulator".into(),
                what: format!("the force on link `{name}` is not finite: {force:?} at {point:?}"),
            });
        }
        if !matches!(self.world, World::Native(_)) {
            return Err(SimError::Robot {
                robot: "simulator".into(),
                what: "external forces need the native engine".into(),
            });
        }
        self.external.retain(|(l, _, _)| *l != link);
        if force != Vector3::zeros() {
            self.external.push((link, point, force));
        } else if let World::Native(w) = &mut self.world {
            // The last force gone: the engine's must go too.
            if self.external.is_empty() {
                w.set_external(&vec![nalgebra::Vector6::zeros(); self.layout.bodies.len()]);
            }
        }
        Ok(())
    }

    /// Sets one joint's target by name (the first joint of that name with several robots).
    pub fn set_target(&mut self, joint: &str, target: f64) -> Result<()> {
        let i = crate::robot::joint_index(&self.joint_names, joint)?;
        self.targets[i] = self.accept(i, target)?;
        Ok(())
    }

    pub(crate) fn body_pose(&self, b: usize) -> Isometry3<f64> {
        match &self.world {
            World::Native(w) => w.body_pose(b),
            World::Rapier(w) => w.body_pose(b),
        }
    }

    fn body_velocity(&self, b: usize) -> (Vector3<f64>, Vector3<f64>) {
        match &self.world {
            World::Native(w) => w.body_velocity(b),
            World::Rapier(w) => w.body_velocity(b),
        }
    }

    /// Current joint angles, rad (command order).
    pub fn joint_positions(&self) -> Vec<f64> {
        (0..self.joints.len()).map(|k| self.angle(k)).collect()
    }

    /// The drive of every joint (command order): what its target means.
    pub fn drives(&self) -> Vec<Drive> {
        self.joints.iter().map(|j| j.drive).collect()
    }

    /// Current joint rates, rad/s (command order), from the engine's state: the native
    /// engine's generalised velocities, rapier's bodies' angular velocities about the axis.
    pub fn joint_velocities(&self) -> Vec<f64> {
        (0..self.joints.len())
            .map(|k| match &self.world {
                World::Native(w) => w.joint_velocity(k),
                World::Rapier(w) => w.joint_velocity(k).unwrap_or_else(|| {
                    let j = &self.joints[k];
                    let axis = (self.body_pose(j.parent) * j.frame1).rotation * Vector3::x();
                    let (_, wp) = self.body_velocity(j.parent);
                    let (_, wc) = self.body_velocity(j.child);
                    (wc - wp).dot(&axis)
                }),
            })
            .collect()
    }

    /// The torque each joint's drive applied in the last step (command order), N·m; `None`
    /// on the rapier engine, which does not report it here.
    pub fn joint_efforts(&self) -> Option<Vec<f64>> {
        match &self.world {
            World::Native(w) => Some((0..self.joints.len()).map(|k| w.joint_effort(k)).collect()),
            World::Rapier(_) => None,
        }
    }

    /// Robot `robot`'s force/torque sensors, by name ([`Simulator::force_sensors`] for any
    /// robot of the world); empty on the rapier engine or for a robot that does not exist.
    pub fn force_sensors_of(&self, robot: usize) -> BTreeMap<String, Vector3<f64>> {
        let (World::Native(w), Some(info)) = (&self.world, self.robots.get(robot)) else {
            return BTreeMap::new();
        };
        let forces = w.link_forces();
        info.force_sensors
            .iter()
            .map(|(name, l)| {
                let (b, off) = self.link_body[*l];
                let frame = self.body_pose(b) * off;
                (name.clone(), frame.rotation.inverse() * forces[*l])
            })
            .collect()
    }

    /// World pose of link `link` (index in [`Simulator::link_names`]).
    pub fn pose_of_link(&self, link: usize) -> Isometry3<f64> {
        self.link_pose(link)
    }

    fn angle(&self, k: usize) -> f64 {
        if let World::Native(w) = &self.world {
            return w.joint_angle(k);
        }
        let j = &self.joints[k];
        let a = self.body_pose(j.parent) * j.frame1;
        let b = self.body_pose(j.child) * j.frame2;
        let rel = a.rotation.inverse() * b.rotation;
        let q = rel.quaternion();
        2.0 * q.i.atan2(q.w)
    }

    /// Advances one physics step: the drives act on the current angles, then physics.
    /// A NaN or a runaway velocity ends the simulation with [`SimError::Diverged`].
    pub fn step(&mut self) -> Result<()> {
        if !self.external.is_empty() {
            let mut wrenches = vec![nalgebra::Vector6::zeros(); self.layout.bodies.len()];
            for &(link, point, force) in &self.external {
                let p = self.link_pose(link) * point;
                let m = p.coords.cross(&force);
                wrenches[self.link_body[link].0] += nalgebra::Vector6::new(m.x, m.y, m.z, force.x, force.y, force.z);
            }
            if let World::Native(w) = &mut self.world {
                w.set_external(&wrenches);
            }
        }
        match &mut self.world {
            World::Native(w) => w.step(&self.targets),
            World::Rapier(_) => {
                let speeds: Vec<f64> = (0..self.joints.len())
                    .map(|k| self.joints[k].drive.commanded_speed(self.targets[k], self.angle(k)))
                    .collect();
                if let World::Rapier(w) = &mut self.world {
                    w.step(&speeds);
                }
            }
        }
        self.steps += 1;
        self.time = self.steps as f64 * self.settings.step_s;
        self.check()
    }

    /// Steps physics until the simulated clock has reached `t` (s): none when it already has.
    /// A control loop calls it with its own clock (tick × period), so the time simulated is
    /// the controller's whatever the ratio of control period to step; physics is never
    /// behind the controller, and at most one step ahead of it.
    pub fn advance_to(&mut self, t: f64) -> Result<()> {
        while self.time < t - 1e-9 {
            self.step()?;
        }
        Ok(())
    }

    fn check(&self) -> Result<()> {
        for (b, name) in self.body_names.iter().enumerate() {
            let p = self.body_pose(b).translation.vector;
            let (v, w) = self.body_velocity(b);
            let what = if !(p.iter().all(|x| x.is_finite())
                && v.iter().all(|x| x.is_finite())
                && w.iter().all(|x| x.is_finite()))
            {
                Some("position or velocity is not a number".to_string())
            } else if v.norm() > 50.0 {
                Some(format!("runaway linear speed {:.1} m/s", v.norm()))
            } else if w.norm() > 2000.0 {
                Some(format!("runaway angular speed {:.0} rad/s", w.norm()))
            } else if p.norm() > 1e4 {
                Some(format!("position {:.0} m from the origin", p.norm()))
            } else {
                None
            };
            if let Some(what) = what {
                return Err(SimError::Diverged {
                    step: self.steps,
                    time: self.time,
                    link: name.clone(),
                    what,
                    setup: self.setup.clone(),
                });
            }
        }
        Ok(())
    }

    /// URDF link names, in the order of [`Simulator::link_poses`] (robot after robot).
    pub fn link_names(&self) -> &[String] {
        &self.link_names
    }

    /// The visual shapes of every URDF link with their poses in the link's frame, in the
    /// order of [`Simulator::link_poses`]: what a replay draws.
    pub fn link_visuals(&self) -> Vec<&[(Isometry3<f64>, Shape)]> {
        self.sim_robots
            .iter()
            .flat_map(|r| r.model.links.iter().map(|l| l.visuals.as_slice()))
            .collect()
    }

    /// Each link's parent link in its robot's URDF (an index of [`Simulator::link_poses`]),
    /// `None` for a robot's root: the tree tf follows.
    pub fn link_parents(&self) -> Vec<Option<usize>> {
        let mut out = Vec::with_capacity(self.link_names.len());
        for (robot, info) in self.sim_robots.iter().zip(&self.robots) {
            let mut parents = vec![None; robot.model.links.len()];
            for j in &robot.model.joints {
                parents[j.child] = Some(info.links.start + j.parent);
            }
            out.extend(parents);
        }
        out
    }

    /// The link odometry and tf start from on the first robot: its `base_link` when its
    /// description has one, else its URDF root link (an index of [`Simulator::link_poses`]).
    pub fn base_link(&self) -> usize {
        self.robots[0]
            .links
            .clone()
            .find(|&l| self.link_names[l] == "base_link")
            .unwrap_or(self.robots[0].root_link)
    }

    /// World pose of every URDF link (in the model's link order, robot after robot).
    pub fn link_poses(&self) -> Vec<Isometry3<f64>> {
        let bodies: Vec<Isometry3<f64>> = (0..self.body_names.len()).map(|b| self.body_pose(b)).collect();
        self.link_body.iter().map(|(b, off)| bodies[*b] * off).collect()
    }

    /// Twist of every URDF link (in the model's link order, robot after robot): the world
    /// velocity of the link's origin and the link's angular velocity, from the engine's state.
    pub fn link_twists(&self) -> Vec<Twist> {
        let bodies: Vec<(Isometry3<f64>, Vector3<f64>, Vector3<f64>)> = (0..self.body_names.len())
            .map(|b| {
                let (v, w) = self.body_velocity(b);
                (self.body_pose(b), v, w)
            })
            .collect();
        self.link_body
            .iter()
            .map(|(b, off)| {
                let (pose, v_com, w) = &bodies[*b];
                let origin = pose * Point3::from(off.translation.vector);
                let com = pose * self.body_com[*b];
                Twist {
                    linear: v_com + w.cross(&(origin - com)),
                    angular: *w,
                }
            })
            .collect()
    }

    /// Centre of mass of the first robot, from the URDF's link masses.
    pub fn com(&self) -> Point3<f64> {
        self.com_of(0)
    }

    /// Centre of mass of every robot together (a fleet docked into one machine), from the
    /// URDF's link masses.
    pub fn fleet_com(&self) -> Point3<f64> {
        let mut sum = Vector3::zeros();
        let mut mass = 0.0;
        for r in &self.robots {
            for i in r.links.clone() {
                sum += self.link_mass[i] * (self.link_pose(i) * self.link_com[i]).coords;
            }
            mass += r.mass;
        }
        Point3::from(sum / mass)
    }

    /// Centre of mass of a robot, from the URDF's link masses.
    ///
    /// # Panics
    /// If `robot` ≥ [`Simulator::robot_count`].
    pub fn com_of(&self, robot: usize) -> Point3<f64> {
        let r = &self.robots[robot];
        let mut sum = Vector3::zeros();
        for i in r.links.clone() {
            sum += self.link_mass[i] * (self.link_pose(i) * self.link_com[i]).coords;
        }
        Point3::from(sum / r.mass)
    }

    /// Centre of mass of some links (indices in [`Simulator::link_poses`]), from the URDF's
    /// link masses; None if an index is out of range or the links have no mass.
    pub fn com_of_links(&self, links: &[usize]) -> Option<Point3<f64>> {
        let mut sum = Vector3::zeros();
        let mut mass = 0.0;
        for &i in links {
            let m = *self.link_mass.get(i)?;
            sum += m * (self.link_pose(i) * self.link_com[i]).coords;
            mass += m;
        }
        (mass > 0.0).then(|| Point3::from(sum / mass))
    }

    /// Tail and head points of the first robot (root link origin; far end of the last
    /// link), world frame.
    pub fn ends(&self) -> (Point3<f64>, Point3<f64>) {
        self.ends_of(0)
    }

    /// Tail and head points of a robot, world frame.
    ///
    /// # Panics
    /// If `robot` ≥ [`Simulator::robot_count`].
    pub fn ends_of(&self, robot: usize) -> (Point3<f64>, Point3<f64>) {
        let r = &self.robots[robot];
        (self.link_pose(r.tail.0) * r.tail.1, self.link_pose(r.head.0) * r.head.1)
    }

    /// Pose of the first robot's middle link: the child of the joint half way along its
    /// joint list (for a modbot chain the central module; the root link if it has no joints).
    pub fn middle_pose(&self) -> Isometry3<f64> {
        self.link_pose(self.robots[0].middle)
    }

    /// Pose of the first robot's URDF root link (the tail module's back half for modbot
    /// chains).
    pub fn root_pose(&self) -> Isometry3<f64> {
        self.root_pose_of(0)
    }

    /// Pose of a robot's URDF root link.
    ///
    /// # Panics
    /// If `robot` ≥ [`Simulator::robot_count`].
    pub fn root_pose_of(&self, robot: usize) -> Isometry3<f64> {
        self.link_pose(self.robots[robot].root_link)
    }

    /// World pose of one URDF link (index in [`Simulator::link_poses`]).
    pub(crate) fn link_pose(&self, link: usize) -> Isometry3<f64> {
        let (b, off) = self.link_body[link];
        self.body_pose(b) * off
    }

    /// Total kinetic energy of the robots, J.
    pub fn kinetic_energy(&self) -> f64 {
        match &self.world {
            World::Native(w) => w.kinetic_energy(),
            World::Rapier(w) => w.kinetic_energy(),
        }
    }

    /// The engine in use.
    pub fn engine(&self) -> Engine {
        self.settings.engine()
    }

    /// Total mass of the robots, kg.
    pub fn total_mass(&self) -> f64 {
        self.total_mass
    }

    /// Mass of a robot, kg.
    ///
    /// # Panics
    /// If `robot` ≥ [`Simulator::robot_count`].
    pub fn mass_of(&self, robot: usize) -> f64 {
        self.robots[robot].mass
    }
}
