//! Closed-loop driving for the gait node: a controller that reads the robot (the wheel-foot
//! robots' modular controllers, record 0024) fed with what the robot reports — joint states
//! by name and the base pose — and its typed targets split by ros2_control command
//! interface (record 0025). No middleware: the node converts messages and calls this.

use std::collections::BTreeMap;

use modbot_core::{Actuator, Topology};
use modbot_gaits::modular::{ModularRobot, params_of};
use modbot_gaits::{Controller, GaitLibrary, JointTarget, Observation};
use nalgebra::Isometry3;

use crate::controller::{ControllerSpec, build_controller};

/// One control tick's targets by command interface, each in controller order (the
/// `joints` list of `position_controller` / `velocity_controller` in
/// `config/controllers/<robot>.yaml`): angles in rad, wheel speeds in rad/s.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Commands {
    /// One angle per position-driven joint.
    pub position: Vec<f64>,
    /// One speed per velocity-driven joint; empty when the driver sends no speeds.
    pub velocity: Vec<f64>,
}

/// Which joints (indices in the robot's joint order) each command interface carries, in
/// the order the generated controllers file lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLayout {
    /// Position-driven joints.
    pub position: Vec<usize>,
    /// Velocity-driven joints (wheels).
    pub velocity: Vec<usize>,
}

impl CommandLayout {
    /// The layout of a robot: joints by their actuator, in joint order.
    pub fn of(topology: &Topology) -> CommandLayout {
        let wheel: Vec<bool> = topology
            .joints()
            .iter()
            .map(|j| matches!(j.def.actuator, Actuator::Velocity(_)))
            .collect();
        CommandLayout {
            position: (0..wheel.len()).filter(|&k| !wheel[k]).collect(),
            velocity: (0..wheel.len()).filter(|&k| wheel[k]).collect(),
        }
    }

    /// Typed targets (joint order) split by interface; a target of the wrong kind for its
    /// joint is refused naming the joint.
    pub fn split(&self, targets: &[JointTarget], names: &[String]) -> Result<Commands, String> {
        let pick = |joints: &[usize], speed: bool| {
            joints
                .iter()
                .map(|&k| match (targets[k], speed) {
                    (JointTarget::Position(v), false) | (JointTarget::Velocity(v), true) => Ok(v),
                    (t, _) => Err(format!(
                        "the controller sent {t:?} to joint `{}`, which takes {}",
                        names[k],
                        if speed { "speeds" } else { "positions" }
                    )),
                })
                .collect::<Result<Vec<f64>, String>>()
        };
        Ok(Commands {
            position: pick(&self.position, false)?,
            velocity: pick(&self.velocity, true)?,
        })
    }
}

/// The latest observation of the robot, in its joint order.
#[derive(Debug, Clone)]
pub struct Observed {
    names: Vec<String>,
    positions: Vec<f64>,
    velocities: Vec<f64>,
    joints_seen: bool,
    base: Option<Isometry3<f64>>,
}

impl Observed {
    /// Nothing observed yet of a robot with these joints.
    pub fn new(names: Vec<String>) -> Observed {
        let n = names.len();
        Observed {
            names,
            positions: vec![0.0; n],
            velocities: vec![0.0; n],
            joints_seen: false,
            base: None,
        }
    }

    /// A joint state (sensor_msgs/JointState's arrays): every joint of the robot by name, in
    /// any order, others ignored; `velocities` empty (JointState allows it) reads as zeros.
    /// Garbage (lengths that differ, a missing joint, a non-finite value) is refused and the
    /// previous observation kept.
    pub fn joints(&mut self, names: &[String], positions: &[f64], velocities: &[f64]) -> Result<(), String> {
        if positions.len() != names.len() || !(velocities.is_empty() || velocities.len() == names.len()) {
            return Err(format!(
                "{} names, {} positions and {} velocities",
                names.len(),
                positions.len(),
                velocities.len()
            ));
        }
        let mut q = Vec::with_capacity(self.names.len());
        let mut w = Vec::with_capacity(self.names.len());
        for joint in &self.names {
            let i = names
                .iter()
                .position(|n| n == joint)
                .ok_or_else(|| format!("joint `{joint}` is missing"))?;
            let v = velocities.get(i).copied().unwrap_or(0.0);
            if !(positions[i].is_finite() && v.is_finite()) {
                return Err(format!("joint `{joint}`: position {} velocity {v}", positions[i]));
            }
            q.push(positions[i]);
            w.push(v);
        }
        (self.positions, self.velocities, self.joints_seen) = (q, w, true);
        Ok(())
    }

    /// The base pose (the robot's root link in the world, e.g. from odometry); a
    /// non-finite pose is refused.
    pub fn base(&mut self, pose: Isometry3<f64>) -> Result<(), String> {
        let v = pose.translation.vector;
        let q = pose.rotation.coords;
        if !(v.iter().chain(q.iter()).all(|x| x.is_finite())) {
            return Err(format!("base pose is not finite: {pose:?}"));
        }
        self.base = Some(pose);
        Ok(())
    }

    /// A joint state has arrived.
    pub fn joints_seen(&self) -> bool {
        self.joints_seen
    }

    /// Both a joint state and a base pose have arrived.
    pub fn ready(&self) -> bool {
        self.joints_seen && self.base.is_some()
    }

    /// Joint positions, rad (zeros before the first joint state).
    pub fn positions(&self) -> &[f64] {
        &self.positions
    }
}

/// A running modular controller with what the status reports.
pub(crate) struct Running {
    pub controller: Box<dyn Controller>,
    pub name: String,
    /// The parameters as requested (the heartbeat compares them).
    pub given: BTreeMap<String, f64>,
    /// Defaults overlaid with the requested ones (for the status).
    pub resolved: Vec<(String, f64)>,
    pub elapsed: f64,
}

/// The closed-loop side of [`crate::GaitDriver`]: a modular controller, or a hold.
pub(crate) struct ClosedLoop {
    pub kind: ModularRobot,
    pub names: Vec<String>,
    pub layout: CommandLayout,
    pub observed: Observed,
    pub running: Option<Running>,
    pub holding: bool,
    /// Position targets held (joint order), taken when the hold starts.
    hold: Option<Vec<f64>>,
    targets: Vec<JointTarget>,
    output: Vec<f64>,
    ran: bool,
}

impl ClosedLoop {
    pub fn new(kind: ModularRobot, topology: &Topology) -> ClosedLoop {
        let names = topology.joint_names();
        let n = names.len();
        ClosedLoop {
            kind,
            layout: CommandLayout::of(topology),
            observed: Observed::new(names.clone()),
            names,
            running: None,
            holding: true,
            hold: None,
            targets: vec![JointTarget::Position(0.0); n],
            output: vec![0.0; n],
            ran: false,
        }
    }

    /// Builds gait `name` (plain or `robot/gait`) with `params`, direction folded in
    /// (−1 negates the gait's `direction` parameter; a gait without one refuses it).
    pub fn build(
        &self,
        topology: &Topology,
        library: &GaitLibrary,
        name: &str,
        params: &[(String, f64)],
        reverse: bool,
    ) -> Result<Running, String> {
        let gait = match name.split_once('/') {
            Some((r, g)) if r == self.kind.name() => g,
            _ => name,
        };
        let defs = params_of(self.kind, gait).ok_or_else(|| {
            format!(
                "{} has no gait `{name}` (it has {})",
                self.kind.name(),
                self.kind.gaits().join(", ")
            )
        })?;
        let mut given: BTreeMap<String, f64> = params.iter().cloned().collect();
        if reverse {
            if !defs.iter().any(|d| d.key == "direction") {
                return Err(format!("`{gait}` has no direction to reverse"));
            }
            let d = given.get("direction").copied().unwrap_or(1.0);
            given.insert("direction".into(), -d);
        }
        let spec = ControllerSpec::Gait {
            name: gait.to_string(),
            params: given.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        };
        let built = build_controller(&spec, topology, library, &self.observed.positions).map_err(|e| e.to_string())?;
        let resolved = defs
            .iter()
            .filter_map(|d| {
                let v = given.get(d.key).copied().or(d.default)?;
                Some((d.key.to_string(), v))
            })
            .collect();
        Ok(Running {
            controller: built.controller,
            name: built.name,
            given,
            resolved,
            elapsed: 0.0,
        })
    }

    pub fn start(&mut self, running: Running) {
        self.running = Some(running);
        self.holding = false;
        self.hold = None;
    }

    pub fn stop(&mut self) {
        self.holding = true;
        self.hold = None;
    }

    /// One tick: `None` until the robot has been observed (nothing may be sent before).
    pub fn step(&mut self, dt: f64) -> Option<Result<Commands, String>> {
        if !self.observed.ready() {
            return None;
        }
        let obs = &self.observed;
        match (&mut self.running, self.holding) {
            (Some(r), false) => {
                r.elapsed += dt;
                let sensors = BTreeMap::new();
                let o = Observation {
                    time: r.elapsed,
                    positions: &obs.positions,
                    velocities: &obs.velocities,
                    base: obs.base.unwrap_or_else(Isometry3::identity),
                    sensors: &sensors,
                };
                r.controller.step(dt, &o, &mut self.targets);
                self.ran = true;
            }
            _ => {
                // Hold the last targets (or, before any, the observed pose), wheels still.
                let from = if self.ran { &self.output } else { &obs.positions };
                let hold = self.hold.get_or_insert_with(|| from.clone());
                for (k, t) in self.targets.iter_mut().enumerate() {
                    *t = if self.layout.velocity.contains(&k) {
                        JointTarget::Velocity(0.0)
                    } else {
                        JointTarget::Position(hold[k])
                    };
                }
            }
        }
        let split = self.layout.split(&self.targets, &self.names);
        if split.is_ok() {
            for (o, t) in self.output.iter_mut().zip(&self.targets) {
                *o = t.value();
            }
        }
        Some(split)
    }

    /// The last targets (joint order): angles, and speeds for the wheels.
    pub fn output(&self) -> &[f64] {
        &self.output
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use modbot_core::ModuleCatalog;

    fn topology(name: &str) -> Topology {
        Topology::resolve(name, &ModuleCatalog::builtin()).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn layouts_follow_the_controllers_file() {
        let t = topology("wheeled");
        let l = CommandLayout::of(&t);
        let names = t.joint_names();
        let wheels: Vec<&str> = l.velocity.iter().map(|&k| names[k].as_str()).collect();
        assert_eq!(
            wheels,
            [
                "role3_front_joint",
                "role4_front_joint",
                "role5_front_joint",
                "role6_front_joint"
            ]
        );
        assert_eq!(l.position.len(), 26);
        let file = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../config/controllers/wheeled.yaml"
        ))
        .unwrap_or_else(|e| panic!("{e}"));
        // position_controller's and velocity_controller's joints, then the wheels again as
        // wheel_position_controller's (the same joints as servos, switched in for the wheels).
        fn items(s: &str) -> Vec<&str> {
            s.lines().filter_map(|s| s.trim().strip_prefix("- ")).collect()
        }
        let (drives, servos) = file
            .split_once("/**/wheel_position_controller:")
            .unwrap_or_else(|| panic!("no wheel_position_controller in wheeled.yaml"));
        let ours: Vec<&str> = l
            .position
            .iter()
            .chain(&l.velocity)
            .map(|&k| names[k].as_str())
            .collect();
        assert_eq!(items(drives), ours);
        assert_eq!(items(servos), wheels);
        let e = l.split(&vec![JointTarget::Position(0.0); 30], &names).unwrap_err();
        assert!(e.contains("role3_front_joint"), "{e}");
    }

    #[test]
    fn observations_are_taken_by_name_and_garbage_is_refused() {
        let mut o = Observed::new(vec!["a".into(), "b".into()]);
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(!o.ready());
        o.joints(&names(&["b", "x", "a"]), &[2.0, 9.0, 1.0], &[])
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(o.positions(), [1.0, 2.0]);
        for (n, q, w) in [
            (names(&["a", "b"]), vec![1.0], vec![]),
            (names(&["a", "b"]), vec![1.0, 2.0], vec![0.0]),
            (names(&["a"]), vec![1.0], vec![]),
            (names(&["a", "b"]), vec![f64::NAN, 2.0], vec![]),
            (names(&["a", "b"]), vec![1.0, 2.0], vec![0.0, f64::INFINITY]),
        ] {
            assert!(o.joints(&n, &q, &w).is_err(), "{n:?} {q:?} {w:?}");
        }
        assert_eq!(o.positions(), [1.0, 2.0]);
        assert!(!o.ready());
        let mut bad = Isometry3::identity();
        bad.translation.x = f64::NAN;
        assert!(o.base(bad).is_err());
        assert!(!o.ready());
        o.base(Isometry3::identity()).unwrap_or_else(|e| panic!("{e}"));
        assert!(o.ready());
    }
}
