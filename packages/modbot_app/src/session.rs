//! A simulation session: a robot in a world on the embedded simulator, set up the same way
//! for a measured run, a sweep point, the search and `sim_node`.

use modbot_core::{LinkTree, Scenario, Topology};
use modbot_sim::{SimRobot, SimSettings, Simulator};
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
        Ok(SimSession {
            body_length_m: hi.x - lo.x,
            topology,
            robot,
            sim,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
