//! A robot ready for simulation: a checked URDF and a drive per movable joint.

use std::collections::BTreeMap;

use modbot_core::{Actuator, Topology};
use modbot_description::model::JointKind;
use modbot_description::{DescriptionConfig, UrdfModel, urdf};

use crate::error::{Result, SimError};

/// The position servo of the source (Appendix D): commanded joint speed
/// w = kp (target − angle), clipped to ±max_speed, with the motor torque capped at max_torque.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Servo {
    /// P gain, 1/s.
    pub kp: f64,
    /// Speed limit, rad/s.
    pub max_speed: f64,
    /// Torque limit, N·m.
    pub max_torque: f64,
}

/// How a joint is driven.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Drive {
    /// The position servo of the source: its target is an angle, rad.
    Position(Servo),
    /// A velocity drive (a wheel): its target is a speed, rad/s, clipped to ±`max_speed`,
    /// reached with the motor torque capped at `max_torque`.
    Velocity {
        /// Speed limit, rad/s.
        max_speed: f64,
        /// Torque limit, N·m.
        max_torque: f64,
    },
    /// No motor: the joint turns freely (its target is ignored).
    Free,
}

impl Drive {
    /// Speed limit, rad/s (infinite for a free joint).
    pub fn max_speed(&self) -> f64 {
        match self {
            Drive::Position(s) => s.max_speed,
            Drive::Velocity { max_speed, .. } => *max_speed,
            Drive::Free => f64::INFINITY,
        }
    }

    /// Torque limit, N·m (zero for a free joint).
    pub fn max_torque(&self) -> f64 {
        match self {
            Drive::Position(s) => s.max_torque,
            Drive::Velocity { max_torque, .. } => *max_torque,
            Drive::Free => 0.0,
        }
    }

    /// The joint speed the drive asks for, rad/s, given its target and the joint's angle:
    /// kp (target − angle) for a servo, the target for a velocity drive, both clipped to
    /// ±max_speed; zero for a free joint.
    pub fn commanded_speed(&self, target: f64, angle: f64) -> f64 {
        match self {
            Drive::Position(s) => (s.kp * (target - angle)).clamp(-s.max_speed, s.max_speed),
            Drive::Velocity { max_speed, .. } => target.clamp(-max_speed, *max_speed),
            Drive::Free => 0.0,
        }
    }
}

/// A robot for the simulator.
#[derive(Debug, Clone, PartialEq)]
pub struct SimRobot {
    /// The kinematic tree.
    pub model: UrdfModel,
    /// Names of the driven joints, in command order.
    pub joint_names: Vec<String>,
    /// Drive of each driven joint (command order).
    pub drives: Vec<Drive>,
    /// Coulomb friction of the robot's surfaces.
    pub friction: f64,
    /// Links whose surface has its own friction (URDF link name → coefficient).
    pub link_friction: BTreeMap<String, f64>,
    /// Force sensors: (name, the link whose contact force it reads: the fixed joint's child).
    pub force_sensors: Vec<(String, String)>,
    /// The angle each driven joint starts at (command order, rad): the robot file's
    /// `initial_deg`, the URDF's gz_ros2_control `initial_value` (record 0056); zeros for a
    /// plain URDF.
    pub initial: Vec<f64>,
}

/// The index of `joint` among `names`, or an error listing the names.
pub(crate) fn joint_index(names: &[String], joint: &str) -> Result<usize> {
    names
        .iter()
        .position(|n| n == joint)
        .ok_or_else(|| SimError::UnknownJoint {
            joint: joint.to_string(),
            known: names.join(", "),
        })
}

impl SimRobot {
    /// A modbot robot: the URDF modbot_description generates from its graph (the same file
    /// Gazebo loads) and the actuator of each joint from its module kind.
    pub fn from_topology(topology: &Topology) -> Result<SimRobot> {
        let text = urdf::urdf(topology, &DescriptionConfig::builtin())?;
        let model = UrdfModel::parse(&text, &format!("{}.urdf", topology.name))?;
        let joints = topology.joints();
        let mut drives = Vec::with_capacity(joints.len());
        for j in &joints {
            let max_speed = j.def.actuator.max_speed_rad_s();
            drives.push(match j.def.actuator {
                Actuator::Position(s) => Drive::Position(Servo {
                    kp: s.kp,
                    max_speed,
                    max_torque: s.max_torque_nm,
                }),
                Actuator::Velocity(v) => Drive::Velocity {
                    max_speed,
                    max_torque: v.max_torque_nm,
                },
            });
        }
        let friction = (0..topology.len())
            .map(|i| topology.kind_of(i).contact.friction)
            .fold(f64::INFINITY, f64::min);
        let mut robot = Self::new(model, joints.iter().map(|j| j.name.clone()).collect(), drives, friction)?;
        robot.initial = topology.initial_positions();
        for m in 0..topology.len() {
            let kind = topology.kind_of(m);
            for (l, link) in kind.links.iter().enumerate() {
                let mu = link.friction.unwrap_or(kind.contact.friction);
                if mu != friction {
                    robot.link_friction.insert(topology.link_name(m, l), mu);
                }
            }
            for f in kind.fixed_joints.iter().filter(|f| f.force_sensor) {
                let child = kind.link_index(&f.child).unwrap_or(0);
                robot.force_sensors.push((
                    format!("{}_{}", topology.modules[m].name, f.name),
                    topology.link_name(m, child),
                ));
            }
        }
        Ok(robot)
    }

    /// Any URDF: every revolute joint gets a position servo with gain `kp` and the speed and
    /// effort limits of its `<limit>` element; a continuous joint, whose limits the URDF
    /// model does not keep, turns freely ([`Drive::Free`]) until [`SimRobot::with_drive`]
    /// gives it a drive (a wheel's [`Drive::Velocity`], say).
    pub fn from_urdf(text: &str, origin: &str, kp: f64, friction: f64) -> Result<SimRobot> {
        let model = UrdfModel::parse(text, origin)?;
        let mut names = Vec::new();
        let mut drives = Vec::new();
        for j in model.movable_joints() {
            names.push(j.name.clone());
            drives.push(match j.limits {
                Some(limits) => Drive::Position(Servo {
                    kp,
                    max_speed: limits.velocity,
                    max_torque: limits.effort,
                }),
                None => Drive::Free,
            });
        }
        Self::new(model, names, drives, friction)
    }

    /// The same robot with joint `joint` driven by `drive` instead (e.g. a wheel's velocity
    /// drive, or a free joint); the drive is checked as the constructors check theirs.
    pub fn with_drive(mut self, joint: &str, drive: Drive) -> Result<SimRobot> {
        let i = joint_index(&self.joint_names, joint)?;
        self.drives[i] = drive;
        let link_friction = std::mem::take(&mut self.link_friction);
        let force_sensors = std::mem::take(&mut self.force_sensors);
        let initial = std::mem::take(&mut self.initial);
        let mut robot = Self::new(self.model, self.joint_names, self.drives, self.friction)?;
        robot.link_friction = link_friction;
        robot.force_sensors = force_sensors;
        robot.initial = initial;
        Ok(robot)
    }

    /// Speed limit of each joint, rad/s (command order): what a gait player needs.
    pub fn max_speeds(&self) -> Vec<f64> {
        self.drives.iter().map(Drive::max_speed).collect()
    }

    fn new(model: UrdfModel, joint_names: Vec<String>, drives: Vec<Drive>, friction: f64) -> Result<SimRobot> {
        let bad = |what: String| SimError::Robot {
            robot: model.name.clone(),
            what,
        };
        for j in &model.joints {
            match j.kind {
                JointKind::Revolute | JointKind::Continuous | JointKind::Fixed => {}
                JointKind::Prismatic | JointKind::Other => {
                    return Err(bad(format!(
                        "joint `{}`: only revolute, continuous and fixed joints are simulated",
                        j.name
                    )));
                }
            }
        }
        if drives.len() != joint_names.len() {
            return Err(bad(format!("{} drives for {} joints", drives.len(), joint_names.len())));
        }
        for (name, d) in joint_names.iter().zip(&drives) {
            let checks: &[(&str, f64)] = match d {
                Drive::Position(s) => &[
                    ("kp", s.kp),
                    ("velocity limit", s.max_speed),
                    ("effort limit", s.max_torque),
                ],
                Drive::Velocity { max_speed, max_torque } => {
                    &[("velocity limit", *max_speed), ("effort limit", *max_torque)]
                }
                Drive::Free => &[],
            };
            for &(what, v) in checks {
                if !(v.is_finite() && v > 0.0) {
                    return Err(bad(format!(
                        "joint `{name}`: {what} = {v}, expected a finite number > 0"
                    )));
                }
            }
        }
        for l in &model.links {
            if !l.collisions.is_empty() && l.mass <= 0.0 {
                return Err(bad(format!(
                    "link `{}` has collision geometry but no mass (missing <inertial>?)",
                    l.name
                )));
            }
            if l.mass > 0.0 && (l.inertia[0] <= 0.0 || l.inertia[3] <= 0.0 || l.inertia[5] <= 0.0) {
                return Err(bad(format!("link `{}`: inertia must be positive definite", l.name)));
            }
        }
        if !(friction.is_finite() && friction >= 0.0) {
            return Err(bad(format!("friction = {friction}, expected a finite number >= 0")));
        }
        let initial = vec![0.0; joint_names.len()];
        Ok(SimRobot {
            model,
            joint_names,
            drives,
            friction,
            link_friction: BTreeMap::new(),
            force_sensors: Vec::new(),
            initial,
        })
    }
}
