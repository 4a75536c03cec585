//! The simulator: one robot in one scenario, on modbot's native reduced-coordinate engine
//! (the default) or on a rapier3d multibody (the cross-check); decision records 0012, 0018.

use modbot_core::Scenario;
use modbot_description::model::Shape;
use nalgebra::{Isometry3, Point3, Vector3};

use crate::error::{Result, SimError};
use crate::layout::{JointSpec, Layout};
use crate::native::{NativeParams, NativeWorld};
use crate::rapier_engine::{RapierParams, RapierWorld};
use crate::robot::SimRobot;

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

/// Compliance of the native engine's contact rows, as a fraction of each row's effective
/// inverse mass: it makes the statically indeterminate contact forces of a chain lying on
/// the ground unique, so Gauss–Seidel's order cannot pick a side (decision 0018).
const CONTACT_CFM: f64 = 0.03;

/// Numerical settings of the embedded simulator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimSettings {
    /// The engine.
    pub engine: Engine,
    /// Physics step, s (default: the scenario's `physics.step_s`).
    pub step_s: f64,
    /// Solver iterations per step (rapier: substeps; native: the solve is one, and its
    /// Gauss–Seidel sweeps are `solver_iterations × pgs_iterations`).
    pub solver_iterations: usize,
    /// Gauss-Seidel sweeps inside each solver iteration.
    pub pgs_iterations: usize,
    /// Damping coefficient of the rapier velocity motor that realises the servo, N·m·s/rad
    /// (the native engine's servo is a hard speed constraint with its torque capped).
    pub motor_damping: f64,
    /// Reflected rotor inertia added to each driven joint, kg·m².
    pub armature: f64,
    /// Viscous damping of each driven joint, N·m·s/rad.
    pub joint_damping: f64,
    /// Gap left under the robot at the start, m.
    pub start_clearance_m: f64,
}

impl SimSettings {
    /// Defaults of `engine` for a scenario.
    pub fn for_engine(engine: Engine, s: &Scenario) -> SimSettings {
        match engine {
            Engine::Native => SimSettings::for_scenario(s),
            Engine::Rapier => SimSettings::rapier(s),
        }
    }

    /// Defaults for a scenario on the native engine (decision record 0018).
    pub fn for_scenario(s: &Scenario) -> SimSettings {
        SimSettings {
            engine: Engine::Native,
            step_s: s.physics.step_s,
            solver_iterations: 10,
            pgs_iterations: 1,
            motor_damping: 5.0,
            armature: 2e-5,
            joint_damping: 0.0,
            start_clearance_m: 5e-4,
        }
    }

    /// Defaults for a scenario on the rapier engine (decision record 0012).
    pub fn rapier(s: &Scenario) -> SimSettings {
        SimSettings {
            engine: Engine::Rapier,
            step_s: s.physics.step_s,
            solver_iterations: 8,
            pgs_iterations: 4,
            motor_damping: 5.0,
            armature: 2e-5,
            joint_damping: 0.0,
            start_clearance_m: 5e-4,
        }
    }

    fn validate(&self) -> Result<()> {
        let bad = |key: &str, v: f64, expected: &str| SimError::Settings {
            key: key.into(),
            value: v.to_string(),
            expected: expected.into(),
        };
        if !(self.step_s.is_finite() && self.step_s > 0.0 && self.step_s <= 0.02) {
            return Err(bad("step_s", self.step_s, "a physics step in (0, 0.02] s"));
        }
        if self.solver_iterations == 0 || self.solver_iterations > 256 {
            return Err(bad("solver_iterations", self.solver_iterations as f64, "1 to 256"));
        }
        if self.pgs_iterations == 0 || self.pgs_iterations > 64 {
            return Err(bad("pgs_iterations", self.pgs_iterations as f64, "1 to 64"));
        }
        if !(self.motor_damping.is_finite() && self.motor_damping > 0.0) {
            return Err(bad("motor_damping", self.motor_damping, "a finite number > 0"));
        }
        if !(self.joint_damping.is_finite() && self.joint_damping >= 0.0) {
            return Err(bad("joint_damping", self.joint_damping, "a finite number >= 0"));
        }
        if !(self.armature.is_finite() && self.armature >= 0.0) {
            return Err(bad("armature", self.armature, "a finite number >= 0"));
        }
        if !(self.start_clearance_m.is_finite() && self.start_clearance_m >= 0.0) {
            return Err(bad("start_clearance_m", self.start_clearance_m, "a finite number >= 0"));
        }
        Ok(())
    }
}

/// The engine behind a simulator.
enum World {
    Native(Box<NativeWorld>),
    Rapier(Box<RapierWorld>),
}

/// The simulator: one robot in one scenario.
pub struct Simulator {
    world: World,
    settings: SimSettings,
    body_names: Vec<String>,
    /// Per URDF link: its body and its pose in that body.
    link_body: Vec<(usize, Isometry3<f64>)>,
    link_mass: Vec<f64>,
    link_com: Vec<Point3<f64>>,
    joints: Vec<JointSpec>,
    targets: Vec<f64>,
    joint_names: Vec<String>,
    total_mass: f64,
    /// Tail point (root link origin) and head point (far end of the last link), link-local.
    tail: (usize, Point3<f64>),
    head: (usize, Point3<f64>),
    steps: u64,
    time: f64,
}

impl Simulator {
    /// Builds the world: the robot at the scenario's start pose, resting on the ground with
    /// its body axis along the start heading, the ground and the obstacles.
    pub fn new(robot: &SimRobot, scenario: &Scenario, settings: SimSettings) -> Result<Simulator> {
        settings.validate()?;
        scenario.validate()?;
        let model = &robot.model;
        let layout = Layout::new(robot, scenario, settings.start_clearance_m)?;
        if layout.joint_order().len() != layout.joints.len() {
            return Err(SimError::Robot {
                robot: model.name.clone(),
                what: "the joints close a kinematic loop".into(),
            });
        }
        let world = match settings.engine {
            Engine::Native => World::Native(Box::new(NativeWorld::new(
                &layout,
                NativeParams {
                    dt: settings.step_s,
                    sweeps: settings.solver_iterations * settings.pgs_iterations,
                    armature: settings.armature,
                    joint_damping: settings.joint_damping,
                    erp: 0.2,
                    slop: 5e-4,
                    margin: 2e-3,
                    cfm: CONTACT_CFM,
                },
            ))),
            Engine::Rapier => World::Rapier(Box::new(
                RapierWorld::new(
                    &layout,
                    RapierParams {
                        dt: settings.step_s,
                        solver_iterations: settings.solver_iterations,
                        pgs_iterations: settings.pgs_iterations,
                        motor_damping: settings.motor_damping,
                        armature: settings.armature,
                        joint_damping: settings.joint_damping,
                    },
                )
                .ok_or_else(|| SimError::Robot {
                    robot: model.name.clone(),
                    what: "the joints close a kinematic loop".into(),
                })?,
            )),
        };

        // Tail: the root link's origin. Head: the far end (+x face) of the last link's first box.
        let last = model.joints.last().map(|j| j.child).unwrap_or(model.root);
        let head_local = model.links[last]
            .collisions
            .iter()
            .find_map(|(o, s)| match s {
                Shape::Box([x, _, _]) => Some(o * Point3::new(x / 2.0, 0.0, 0.0)),
                _ => None,
            })
            .unwrap_or_else(Point3::origin);

        Ok(Simulator {
            world,
            settings,
            body_names: layout.bodies.iter().map(|b| b.name.clone()).collect(),
            link_mass: model.links.iter().map(|l| l.mass).collect(),
            link_com: model
                .links
                .iter()
                .zip(&layout.link_body)
                .map(|(l, (_, off))| off * (l.inertial_origin * Point3::origin()))
                .collect(),
            tail: layout.point_in_body(model.root, Point3::origin()),
            head: layout.point_in_body(last, head_local),
            total_mass: layout.bodies.iter().map(|b| b.mass).sum(),
            targets: vec![0.0; layout.joints.len()],
            link_body: layout.link_body,
            joints: layout.joints,
            joint_names: robot.joint_names.clone(),
            steps: 0,
            time: 0.0,
        })
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

    /// Names of the driven joints, in command order.
    pub fn joint_names(&self) -> &[String] {
        &self.joint_names
    }

    /// Sets every joint target (rad, command order). Targets beyond a joint's limits are
    /// clamped to them, as a servo does.
    pub fn set_targets(&mut self, targets: &[f64]) -> Result<()> {
        if targets.len() != self.joints.len() {
            return Err(SimError::JointCount {
                expected: self.joints.len(),
                got: targets.len(),
            });
        }
        if let Some(i) = targets.iter().position(|t| !t.is_finite()) {
            return Err(SimError::NotFinite {
                joint: self.joint_names[i].clone(),
                value: targets[i],
            });
        }
        for ((slot, j), t) in self.targets.iter_mut().zip(&self.joints).zip(targets) {
            *slot = t.clamp(j.lower, j.upper);
        }
        Ok(())
    }

    /// Sets one joint's target by name.
    pub fn set_target(&mut self, joint: &str, target: f64) -> Result<()> {
        let i = self
            .joint_names
            .iter()
            .position(|n| n == joint)
            .ok_or_else(|| SimError::UnknownJoint {
                joint: joint.to_string(),
                known: self.joint_names.join(", "),
            })?;
        if !target.is_finite() {
            return Err(SimError::NotFinite {
                joint: joint.to_string(),
                value: target,
            });
        }
        let j = &self.joints[i];
        self.targets[i] = target.clamp(j.lower, j.upper);
        Ok(())
    }

    fn body_pose(&self, b: usize) -> Isometry3<f64> {
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

    /// Advances one physics step: the servos act on the current angles, then physics.
    /// A NaN or a runaway velocity ends the simulation with [`SimError::Diverged`].
    pub fn step(&mut self) -> Result<()> {
        match &mut self.world {
            World::Native(w) => w.step(&self.targets),
            World::Rapier(_) => {
                let speeds: Vec<f64> = (0..self.joints.len())
                    .map(|k| {
                        let s = self.joints[k].servo;
                        (s.kp * (self.targets[k] - self.angle(k))).clamp(-s.max_speed, s.max_speed)
                    })
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
                });
            }
        }
        Ok(())
    }

    /// World pose of every URDF link (in the model's link order).
    pub fn link_poses(&self) -> Vec<Isometry3<f64>> {
        let bodies: Vec<Isometry3<f64>> = (0..self.body_names.len()).map(|b| self.body_pose(b)).collect();
        self.link_body.iter().map(|(b, off)| bodies[*b] * off).collect()
    }

    /// Centre of mass of the robot, from the URDF's link masses.
    pub fn com(&self) -> Point3<f64> {
        let bodies: Vec<Isometry3<f64>> = (0..self.body_names.len()).map(|b| self.body_pose(b)).collect();
        let mut sum = Vector3::zeros();
        for (i, (b, _)) in self.link_body.iter().enumerate() {
            sum += self.link_mass[i] * (bodies[*b] * self.link_com[i]).coords;
        }
        Point3::from(sum / self.total_mass)
    }

    /// Tail and head points (root link origin; far end of the last link), world frame.
    pub fn ends(&self) -> (Point3<f64>, Point3<f64>) {
        (
            self.body_pose(self.tail.0) * self.tail.1,
            self.body_pose(self.head.0) * self.head.1,
        )
    }

    /// Pose of the root body (the tail module's back half for modbot chains).
    pub fn root_pose(&self) -> Isometry3<f64> {
        self.body_pose(0)
    }

    /// Total kinetic energy of the robot, J.
    pub fn kinetic_energy(&self) -> f64 {
        match &self.world {
            World::Native(w) => w.kinetic_energy(),
            World::Rapier(w) => w.kinetic_energy(),
        }
    }

    /// The engine in use.
    pub fn engine(&self) -> Engine {
        self.settings.engine
    }

    /// Total mass, kg.
    pub fn total_mass(&self) -> f64 {
        self.total_mass
    }
}
