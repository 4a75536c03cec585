//! A robot ready for simulation: a checked URDF and a servo per movable joint.

use modbot_core::{Actuator, Topology};
use modbot_description::model::JointKind;
use modbot_description::{DescriptionConfig, UrdfModel, urdf};

use crate::error::{Result, SimError};

/// The position servo of the source (Appendix D): commanded joint speed
/// w = kp (target − angle), clipped to ±max_speed, with the motor torque capped at max_torque.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Servo {
    /// P gain, 1/s.
    pub kp: f64,
    /// Speed limit, rad/s.
    pub max_speed: f64,
    /// Torque limit, N·m.
    pub max_torque: f64,
}

/// A robot for the simulator.
#[derive(Debug, Clone, PartialEq)]
pub struct SimRobot {
    /// The kinematic tree.
    pub model: UrdfModel,
    /// Names of the driven joints, in command order.
    pub joint_names: Vec<String>,
    /// Servo of each driven joint.
    pub servos: Vec<Servo>,
    /// Coulomb friction of the robot's surfaces.
    pub friction: f64,
}

impl SimRobot {
    /// A modbot robot: the URDF modbot_description generates from its graph (the same file
    /// Gazebo loads) and the actuator of each joint from its module kind.
    pub fn from_topology(topology: &Topology) -> Result<SimRobot> {
        let text = urdf::urdf(topology, &DescriptionConfig::builtin())?;
        let model = UrdfModel::parse(&text, &format!("{}.urdf", topology.name))?;
        let joints = topology.joints();
        let mut servos = Vec::with_capacity(joints.len());
        for j in &joints {
            match j.def.actuator {
                Actuator::Position(s) => servos.push(Servo {
                    kp: s.kp,
                    max_speed: j.def.actuator.max_speed_rad_s(),
                    max_torque: s.max_torque_nm,
                }),
                Actuator::Velocity(_) => {
                    return Err(SimError::Robot {
                        robot: topology.name.clone(),
                        what: format!("joint `{}` is velocity-driven, which this engine does not drive", j.name),
                    });
                }
            }
        }
        let friction = (0..topology.len())
            .map(|i| topology.kind_of(i).contact.friction)
            .fold(f64::INFINITY, f64::min);
        Self::new(model, joints.iter().map(|j| j.name.clone()).collect(), servos, friction)
    }

    /// Any URDF: every movable joint gets a servo with gain `kp` and the speed and effort
    /// limits of its `<limit>` element.
    pub fn from_urdf(text: &str, origin: &str, kp: f64, friction: f64) -> Result<SimRobot> {
        let model = UrdfModel::parse(text, origin)?;
        let mut names = Vec::new();
        let mut servos = Vec::new();
        for j in model.movable_joints() {
            let limits = j.limits.ok_or_else(|| SimError::Robot {
                robot: model.name.clone(),
                what: format!(
                    "joint `{}` has no <limit> (a continuous joint needs effort and velocity)",
                    j.name
                ),
            })?;
            names.push(j.name.clone());
            servos.push(Servo {
                kp,
                max_speed: limits.velocity,
                max_torque: limits.effort,
            });
        }
        Self::new(model, names, servos, friction)
    }

    fn new(model: UrdfModel, joint_names: Vec<String>, servos: Vec<Servo>, friction: f64) -> Result<SimRobot> {
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
        for (name, s) in joint_names.iter().zip(&servos) {
            for (what, v) in [
                ("kp", s.kp),
                ("velocity limit", s.max_speed),
                ("effort limit", s.max_torque),
            ] {
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
        Ok(SimRobot {
            model,
            joint_names,
            servos,
            friction,
        })
    }
}
