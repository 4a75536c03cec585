//! Friction estimation on the embedded simulator (seed-000 §6.2, Lua `estimate_friction`;
//! decision records 0046, 0058): the friction probe (`modbot_behaviours::FrictionProbe`, a
//! state machine on the robot interface) run by a lone wheel-foot module on the embedded
//! binding. The probe walks the forward low-velocity inchworm and reads the wheel's force
//! sensor, which reports the mean force of its last 50 ms (V-Rep's step: its sensor reports
//! a constraint's impulse per step, so the wheel's touchdown impact, a few 1 ms steps here,
//! does not stand for the stroke); record 0046 derives the window and the probe's gain.

use modbot_behaviours::{FrictionProbe, Modules, ProbeState};
use modbot_core::Topology;
use modbot_planner::friction::{BandEdges, FrictionEstimate};
use modbot_sim::embedded::{ModuleSetup, SensorModels, both_modes};
use modbot_sim::{EmbeddedModules, SimRobot, SimSettings, Simulator};

pub use modbot_behaviours::friction_probe::{GAIN, GAIT, TIMEOUT_S};

/// The sensor read: the lone module's force sensor between its wheel discs.
pub use crate::embedded::FORCE_SENSOR as SENSOR;
/// Control rate, Hz: the simulator's default (record 0023).
pub use modbot_sim::DEFAULT_CONTROL_RATE_HZ as CONTROL_HZ;

/// What one estimate did.
#[derive(Debug, Clone, PartialEq)]
pub struct FrictionWalk {
    /// The estimate (readings in the source's scale).
    pub estimate: FrictionEstimate,
    /// Each tick's sensor force (50 ms mean) while the reset pose was commanded, by step,
    /// all five: (time s, axial friction N, normal load N), before the gain.
    pub raw: Vec<Vec<(f64, f64, f64)>>,
    /// Simulated time of the walk, s.
    pub time_s: f64,
    /// The module's mass, kg.
    pub mass_kg: f64,
    /// Distance walked by the module's reference point, m (measured in the simulator).
    pub walked_m: f64,
}

/// Runs the estimate for `topology` (a lone `wheelfoot` module) in `world`, from its start.
pub fn estimate_friction(
    topology: Topology,
    world: &modbot_core::Scenario,
    edges: BandEdges,
) -> Result<FrictionWalk, String> {
    let robot = SimRobot::from_topology(&topology).map_err(|e| e.to_string())?;
    let sim = Simulator::new(&robot, world, SimSettings::for_scenario(world)).map_err(|e| e.to_string())?;
    let base = robot.model.link("base_link").unwrap_or(robot.model.root);
    let has_sensor = sim.force_sensors_of(0).contains_key(SENSOR);
    let setup = ModuleSetup {
        name: "m1".into(),
        robot: 0,
        imu_link: sim.link_names()[base].clone(),
        camera: None,
        ports: Vec::new(),
        force_sensor: has_sensor.then(|| SENSOR.to_string()),
        drives: both_modes(&robot.drives, None),
    };
    let mass_kg = sim.total_mass();
    let mut modules = EmbeddedModules::new(sim, world.gravity, vec![setup], SensorModels::standard(), 0)
        .map_err(|e| e.to_string())?;
    let start = modules.simulator().link_poses()[base].translation.vector;
    let dt = 1.0 / CONTROL_HZ;
    let mut probe = FrictionProbe::new(edges, dt);
    let t0 = modules.simulator().time();
    let mut tick: u64 = 0;
    let estimate = loop {
        let module = modules.module(0).map_err(|e| e.to_string())?;
        match probe.tick(module) {
            ProbeState::Done(e) => break e.clone(),
            ProbeState::Failed(why) => return Err(why.clone()),
            ProbeState::Idle | ProbeState::Walking { .. } => {}
        }
        tick += 1;
        modules.advance_to(t0 + tick as f64 * dt).map_err(|e| e.to_string())?;
    };
    let end = modules.simulator().link_poses()[base].translation.vector;
    Ok(FrictionWalk {
        estimate,
        raw: probe.raw().to_vec(),
        time_s: modules.simulator().time() - t0,
        mass_kg,
        walked_m: (end - start).xy().norm(),
    })
}
