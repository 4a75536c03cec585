//! A simulation session: a robot in a world on the embedded simulator, set up the same way
//! for a measured run, a sweep point, the search and `sim_node`.

use modbot_core::{LinkTree, Scenario, Topology};
use modbot_sim::{Drive, SimRobot, SimSettings, Simulator};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::Result;

/// Largest start-position offset of a perturbed start, m (decision record 0021).
pub const START_JITTER_M: f64 = 0.005;
/// Largest start-heading offset of a perturbed start, deg.
pub const START_JITTER_DEG: f64 = 2.0;

/// The world with its robot start moved by `seed`: seed 0 is the world as written; any
/// other seed moves the start by up to ±5 mm in x and y and turns it by up to ±2°, drawn
/// from ChaCha8 seeded with `seed` (the same on every machine). A search scores a gait
/// over several seeds so that it does not tune to one exact start.
pub fn perturbed_start(world: &Scenario, seed: u64) -> Scenario {
    let mut w = world.clone();
    if seed != 0 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        w.robot_start.xyz[0] += rng.random_range(-START_JITTER_M..=START_JITTER_M);
        w.robot_start.xyz[1] += rng.random_range(-START_JITTER_M..=START_JITTER_M);
        w.robot_start.yaw_deg += rng.random_range(-START_JITTER_DEG..=START_JITTER_DEG);
    }
    w
}

/// A command interface of the robot (the ros2_control controllers of its description).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interface {
    /// `position_controller`: one angle per position-driven joint.
    Position,
    /// `velocity_controller`: one speed (rad/s) per velocity-driven joint.
    Velocity,
}

/// Why a command was refused, by kind (rate-limited logging counts kinds separately).
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// Not one value per joint of the interface.
    Length(String),
    /// A value that is not a finite number.
    NotFinite(String),
    /// A speed above the joint's limit.
    Range(String),
    /// Anything else the simulator refused.
    Other(String),
}

impl Refusal {
    /// A short name of the kind: `length`, `not_finite`, `range`, `other`.
    pub fn kind(&self) -> &'static str {
        match self {
            Refusal::Length(_) => "length",
            Refusal::NotFinite(_) => "not_finite",
            Refusal::Range(_) => "range",
            Refusal::Other(_) => "other",
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Length(m) | Refusal::NotFinite(m) | Refusal::Range(m) | Refusal::Other(m) => f.write_str(m),
        }
    }
}

/// A robot on the simulator.
pub struct SimSession {
    /// The robot graph.
    pub topology: Topology,
    /// The robot as simulated (URDF, drives).
    pub robot: SimRobot,
    /// The simulator.
    pub sim: Simulator,
    /// Length of the robot along its base x axis with the joints at zero, m (a chain's
    /// body length, the unit of the source's speeds).
    pub body_length_m: f64,
    /// Joints of each command interface, in command order.
    position_joints: Vec<usize>,
    velocity_joints: Vec<usize>,
}

impl std::fmt::Debug for SimSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimSession")
            .field("robot", &self.topology.name)
            .field("time", &self.sim.time())
            .finish()
    }
}

impl SimSession {
    /// Puts `topology` into `world` (start moved by `seed`, see [`perturbed_start`]) on a
    /// simulator with `settings`.
    pub fn new(topology: Topology, world: &Scenario, settings: SimSettings, seed: u64) -> Result<SimSession> {
        let robot = SimRobot::from_topology(&topology)?;
        let world = perturbed_start(world, seed);
        let sim = Simulator::new(&robot, &world, settings)?;
        let (lo, hi) = LinkTree::new(&topology).bounds_at_zero(&topology);
        let wheel: Vec<bool> = sim
            .drives()
            .iter()
            .map(|d| matches!(d, Drive::Velocity { .. }))
            .collect();
        Ok(SimSession {
            body_length_m: hi.x - lo.x,
            position_joints: (0..wheel.len()).filter(|&k| !wheel[k]).collect(),
            velocity_joints: (0..wheel.len()).filter(|&k| wheel[k]).collect(),
            topology,
            robot,
            sim,
        })
    }

    /// The simulator's index of the link odometry reports: `base_link` (the root link of a
    /// robot whose description has none).
    pub fn base_link(&self) -> usize {
        let model = &self.robot.model;
        model.link("base_link").unwrap_or(model.root)
    }

    /// The joints (command order) an interface commands.
    pub fn interface_joints(&self, interface: Interface) -> &[usize] {
        match interface {
            Interface::Position => &self.position_joints,
            Interface::Velocity => &self.velocity_joints,
        }
    }

    /// Sets the targets of one interface's joints (the others keep theirs): exactly one
    /// finite value per joint, or nothing changes.
    pub fn command(&mut self, interface: Interface, data: &[f64]) -> std::result::Result<(), Refusal> {
        let joints = self.interface_joints(interface);
        if data.len() != joints.len() {
            return Err(Refusal::Length(format!(
                "expected {} joint targets, got {}",
                joints.len(),
                data.len()
            )));
        }
        if let Some(i) = data.iter().position(|v| !v.is_finite()) {
            let name = &self.sim.joint_names()[joints[i]];
            return Err(Refusal::NotFinite(format!(
                "joint {name} = {}: not a finite number",
                data[i]
            )));
        }
        if interface == Interface::Velocity {
            let limits = self.sim.drives().iter().map(|d| d.max_speed()).collect::<Vec<_>>();
            for (&k, &v) in joints.iter().zip(data) {
                if v.abs() > limits[k] * (1.0 + 1e-9) {
                    let name = &self.sim.joint_names()[k];
                    return Err(Refusal::Range(format!(
                        "joint {name} = {v} rad/s: above its speed limit {:.4} rad/s",
                        limits[k]
                    )));
                }
            }
        }
        let mut next = self.sim.targets().to_vec();
        for (&k, &v) in joints.iter().zip(data) {
            next[k] = v;
        }
        self.sim.set_targets(&next).map_err(|e| Refusal::Other(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_go_to_their_interface_and_garbage_changes_nothing() {
        let c = modbot_core::ModuleCatalog::builtin();
        let t = Topology::resolve("pp:3", &c).unwrap_or_else(|e| panic!("{e}"));
        let w = Scenario::from_yaml("name: flat\n", "flat").unwrap_or_else(|e| panic!("{e}"));
        let mut s = SimSession::new(t, &w, SimSettings::for_scenario(&w), 0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.interface_joints(Interface::Position), [0, 1, 2]);
        assert!(s.interface_joints(Interface::Velocity).is_empty());
        let e = s.command(Interface::Position, &[0.1, 0.2]).unwrap_err();
        assert_eq!(
            (e.kind(), e.to_string().as_str()),
            ("length", "expected 3 joint targets, got 2")
        );
        let e = s.command(Interface::Position, &[0.1, f64::NAN, 0.0]).unwrap_err();
        assert_eq!(e.kind(), "not_finite");
        assert!(e.to_string().contains("joint_2 = NaN"), "{e}");
        assert_eq!(s.command(Interface::Velocity, &[1.0]).unwrap_err().kind(), "length");
        // A wheel speed above the joint's limit (the wheel-foot module's 360°/s) is refused
        // naming the joint; the targets stay as they were.
        let wt = Topology::resolve("wheelfoot", &c).unwrap_or_else(|e| panic!("{e}"));
        let mut ws = SimSession::new(wt, &w, SimSettings::for_scenario(&w), 0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ws.interface_joints(Interface::Velocity), [0]);
        let before = ws.sim.targets().to_vec();
        let e = ws.command(Interface::Velocity, &[7.0]).unwrap_err();
        assert_eq!(e.kind(), "range");
        assert!(e.to_string().contains("m1_front_joint"), "{e}");
        assert_eq!(ws.sim.targets(), &before[..]);
        ws.command(Interface::Velocity, &[6.0])
            .unwrap_or_else(|e| panic!("{e}"));
        s.command(Interface::Position, &[0.3, 0.3, 0.3])
            .unwrap_or_else(|e| panic!("{e}"));
        for _ in 0..300 {
            s.sim.step().unwrap_or_else(|e| panic!("{e}"));
        }
        assert!(s.sim.joint_positions().iter().all(|q| (q - 0.3).abs() < 0.05));
    }

    #[test]
    fn seeds_move_the_start_reproducibly_and_boundedly() {
        let w = Scenario::from_yaml("name: flat\n", "flat").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(perturbed_start(&w, 0), w);
        let a = perturbed_start(&w, 7);
        assert_eq!(a, perturbed_start(&w, 7));
        assert_ne!(a, perturbed_start(&w, 8));
        for seed in 1..200 {
            let p = perturbed_start(&w, seed).robot_start;
            assert!(p.xyz[0].abs() <= START_JITTER_M && p.xyz[1].abs() <= START_JITTER_M);
            assert!(p.yaw_deg.abs() <= START_JITTER_DEG);
        }
    }
}
