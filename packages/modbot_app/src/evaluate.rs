//! `evaluate(robot, controller, world, seed) -> report`: one measured run, the function the
//! command line, the nodes' tools and the gait search share.

use std::collections::BTreeMap;

use modbot_core::{Scenario, Topology};
use modbot_gaits::GaitLibrary;
use modbot_sim::{Engine, Report, RunPlan, Sample, SimSettings, Simulator};

use crate::controller::{ControllerSpec, build_controller};
use crate::error::Result;
use crate::session::SimSession;

/// How to run: the engine and its settings, the gait library, the protocol.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    /// The gait library gaits are built from.
    pub library: GaitLibrary,
    /// The physics engine.
    pub engine: Engine,
    /// Physics step, s (default: the world's).
    pub step_s: Option<f64>,
    /// Solver iterations (default: the engine's).
    pub solver_iterations: Option<usize>,
    /// Gauss–Seidel sweeps per iteration (default: the engine's).
    pub pgs_iterations: Option<usize>,
    /// Warm-up and measured cycles, control rate, time limit.
    pub plan: RunPlan,
}

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions {
            library: GaitLibrary::builtin(),
            engine: Engine::Native,
            step_s: None,
            solver_iterations: None,
            pgs_iterations: None,
            plan: RunPlan::default(),
        }
    }
}

impl EvalOptions {
    /// The simulator settings for a world.
    pub fn settings(&self, world: &Scenario) -> SimSettings {
        let mut s =
            SimSettings::for_engine(self.engine, world).with_iterations(self.solver_iterations, self.pgs_iterations);
        if let Some(step) = self.step_s {
            s.step_s = step;
        }
        s
    }
}

/// What a run measured, with what it ran.
#[derive(Debug, Clone)]
pub struct Evaluation {
    /// The protocol's measurements.
    pub report: Report,
    /// One sample per control tick, thinned beyond [`modbot_sim::MAX_KEPT_SAMPLES`].
    pub samples: Vec<Sample>,
    /// The controller's name.
    pub controller: String,
    /// Resolved gait parameters (empty for a pose sequence).
    pub params: BTreeMap<String, f64>,
    /// The gait library's remarks.
    pub notes: Vec<String>,
    /// The joint names, in the order of the samples' vectors.
    pub joint_names: Vec<String>,
    /// Engine used.
    pub engine: Engine,
    /// Physics step, s.
    pub step_s: f64,
    /// Physics steps taken.
    pub steps: u64,
    /// Simulated time, s.
    pub simulated_s: f64,
}

impl Evaluation {
    /// The run's summary as `modbot run` writes it to summary.json, without its wall-clock
    /// fields (the command adds `wall_s` and `real_time_factor`): `robot` as the user named
    /// it, the robot's and the world's names, the seed and the control rate it ran with.
    pub fn summary(
        &self,
        robot: &str,
        robot_name: &str,
        world: &str,
        seed: u64,
        control_rate_hz: f64,
    ) -> serde_json::Value {
        serde_json::json!({
            "robot": robot,
            "robot_name": robot_name,
            "controller": self.controller,
            "params": self.params,
            "status": self.report.status,
            "notes": self.notes.iter().chain(&self.report.findings).collect::<Vec<_>>(),
            "world": world,
            "seed": seed,
            "engine": self.engine.to_string(),
            "physics_step_s": self.step_s,
            "control_rate_hz": control_rate_hz,
            "physics_steps": self.steps,
            "simulated_s": self.simulated_s,
            "report": self.report,
        })
    }
}

/// Runs `controller` on `robot` in `world` (start moved by `seed`, 0 = as written) with the
/// measurement protocol, closed loop, and returns the report. `progress` gets (simulated
/// time, expected total) after every control tick.
pub fn evaluate(
    robot: &Topology,
    controller: &ControllerSpec,
    world: &Scenario,
    seed: u64,
    options: &EvalOptions,
    progress: &mut dyn FnMut(f64, f64),
) -> Result<Evaluation> {
    evaluate_streaming(robot, controller, world, seed, options, progress, &mut |_, _| Ok(()))
}

/// [`evaluate`] with every sample streamed to `sink` as it is recorded (a trajectory file;
/// the simulator is the one the sample was recorded from: link poses for a replay),
/// in bounded memory however long the run ([`modbot_sim::run_controller_streaming`]).
pub fn evaluate_streaming(
    robot: &Topology,
    controller: &ControllerSpec,
    world: &Scenario,
    seed: u64,
    options: &EvalOptions,
    progress: &mut dyn FnMut(f64, f64),
    sink: &mut dyn FnMut(&Sample, &Simulator) -> std::result::Result<(), String>,
) -> Result<Evaluation> {
    let mut session = SimSession::new(robot.clone(), world, options.settings(world), seed)?;
    if crate::controller::modular_robot(robot).is_some() {
        // The wheel-foot thesis measures its reference point and the module's yaw.
        session.sim.set_reference(modbot_sim::Reference::Base);
    }
    let start = session.sim.joint_positions();
    let mut built = build_controller(controller, robot, &options.library, &start)?;
    let out = modbot_sim::run_controller_streaming(
        &mut session.sim,
        built.controller.as_mut(),
        options.plan,
        session.body_length_m,
        progress,
        sink,
        modbot_sim::MAX_KEPT_SAMPLES,
    )?;
    let mut report = out.report;
    // A preset is judged by the gait it runs (py20_rolling rolls as rolling does).
    let gait = options
        .library
        .presets
        .get(&built.name)
        .map_or(built.name.as_str(), |p| p.gait.as_str());
    report.assess(modbot_gaits::library::rolls_by_design(gait));
    Ok(Evaluation {
        report,
        samples: out.samples,
        controller: built.name,
        params: built.params,
        notes: built.notes,
        joint_names: robot.joint_names(),
        engine: session.sim.engine(),
        step_s: session.sim.step_size(),
        steps: session.sim.steps(),
        simulated_s: session.sim.time(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use modbot_core::ModuleCatalog;

    fn options(cycles: usize) -> EvalOptions {
        EvalOptions {
            plan: RunPlan {
                warmup_cycles: 1,
                cycles,
                ..RunPlan::default()
            },
            ..EvalOptions::default()
        }
    }

    /// The same robot from its file and from its preset gives the same step to the last
    /// digit; a seed moves the start, and the step stays within a few per cent.
    #[test]
    fn file_and_preset_agree_and_seeds_perturb() {
        let c = ModuleCatalog::builtin();
        let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
        let world = Scenario::from_yaml("name: flat\n", "flat").unwrap_or_else(|e| panic!("{e}"));
        let gait = ControllerSpec::Gait {
            name: "caterpillar".into(),
            params: vec![],
        };
        let file = Topology::load(&root.join("config/robots/pp_8.yaml"), &c).unwrap_or_else(|e| panic!("{e}"));
        let preset = Topology::resolve("pp:8", &c).unwrap_or_else(|e| panic!("{e}"));
        let run = |t: &Topology, seed| {
            evaluate(t, &gait, &world, seed, &options(2), &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}"))
        };
        let (a, b) = (run(&file, 0), run(&preset, 0));
        assert_eq!(a.report.step_x_m.to_bits(), b.report.step_x_m.to_bits());
        assert!(a.report.step_x_m > 0.05, "{}", a.report.step_x_m);
        let c3 = run(&preset, 3);
        assert_ne!(c3.samples[0].com, a.samples[0].com);
        let rel = (c3.report.step_m - a.report.step_m).abs() / a.report.step_m;
        assert!(rel < 0.05, "seed 3 changes the step by {:.1} %", rel * 100.0);
    }
}
