//! What the gait tests share: one gait run of a preset chain on flat ground.

use modbot_core::{ModuleCatalog, Scenario, Topology};
use modbot_gaits::GaitLibrary;
use modbot_sim::{Drive, RunOutput, RunPlan, SimRobot, SimSettings, Simulator, run_gait};

/// Module length L and height H of the catalog's limbless module, m.
pub const L: f64 = 0.072;
pub const H: f64 = 0.052;

/// What a run changes in the shipped module and world, to measure how a result depends on
/// them (record 0037). The default changes nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Variation {
    /// Every servo's torque cap times this.
    pub torque_scale: f64,
    /// The Coulomb μ of every robot–ground contact instead of the shipped 0.2.
    pub friction: Option<f64>,
}

impl Default for Variation {
    fn default() -> Self {
        Variation {
            torque_scale: 1.0,
            friction: None,
        }
    }
}

/// Runs `gait` with the parameters `set` on the preset `robot` on flat ground for the
/// protocol's warm-up and `cycles` measured cycles, the control loop at `rate_hz`, and
/// prints the measured step. A gait the library refuses panics with its message; the run's
/// own error (a bad rate) is returned.
#[allow(dead_code)] // thesis.rs, which shares this file, runs everything through the varied one
pub fn run_gait_on_flat(
    robot: &str,
    gait: &str,
    set: &[(&str, f64)],
    cycles: usize,
    rate_hz: f64,
) -> modbot_sim::Result<RunOutput> {
    run_gait_on_flat_varied(robot, gait, set, cycles, rate_hz, Variation::default())
}

/// [`run_gait_on_flat`] with the module or the ground changed by `vary`.
pub fn run_gait_on_flat_varied(
    robot: &str,
    gait: &str,
    set: &[(&str, f64)],
    cycles: usize,
    rate_hz: f64,
    vary: Variation,
) -> modbot_sim::Result<RunOutput> {
    let cat = ModuleCatalog::builtin();
    let topo = Topology::from_spec(&robot.parse().unwrap(), &cat).unwrap();
    let lib = GaitLibrary::builtin();
    let set: Vec<(String, f64)> = set.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let built = lib
        .build(gait, &topo, &set)
        .unwrap_or_else(|e| panic!("{robot} {gait} {set:?}: {e}"));
    let scenario = match vary.friction {
        // Both surfaces at μ: the contact takes the smaller (ODE's and Gazebo's rule).
        Some(mu) => Scenario::from_yaml(
            &format!("name: flat\nground: {{friction: {mu}, size_m: [50, 50]}}\n"),
            "flat",
        )
        .unwrap(),
        None => Scenario::from_yaml("name: flat\n", "flat").unwrap(),
    };
    let mut model = SimRobot::from_topology(&topo).unwrap();
    if let Some(mu) = vary.friction {
        model.friction = mu;
    }
    for drive in &mut model.drives {
        if let Drive::Position(servo) = drive {
            servo.max_torque *= vary.torque_scale;
        }
    }
    let mut sim = Simulator::new(&model, &scenario, SimSettings::for_scenario(&scenario)).unwrap();
    let plan = RunPlan {
        cycles,
        control_rate_hz: rate_hz,
        ..RunPlan::default()
    };
    let out = run_gait(
        &mut sim,
        Box::new(built.generator),
        lib.transition,
        model.max_speeds(),
        plan,
        topo.len() as f64 * L,
        &mut |_, _| {},
    )?;
    let r = &out.report;
    eprintln!(
        "{robot} {gait} {set:?}: step ({:+.2}, {:+.2}) cm/cycle, heading {:+.2} deg/cycle, roll {:+.1} deg/cycle",
        r.step_x_m * 100.0,
        r.step_y_m * 100.0,
        r.heading_change_deg,
        r.roll_per_cycle_deg
    );
    Ok(out)
}
