//! `modbot bench sim`: physics speed of the embedded simulator, single thread: the chains
//! under their sine gaits, the quadruped and the wheeled vehicle under their controllers.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Instant;

use anyhow::Result;
use modbot_core::Scenario;
use modbot_gaits::{Controller, Gait, JointTarget, Observation, SineGenerator};

use modbot_app::load::WHEELFOOT_WORLD_YAML;
use modbot_app::{ControllerSpec, EvalOptions, SimSession, build_controller, load_robot, load_world, modular_robot};
use modbot_sim::Simulator;

use crate::common::{ConfigArgs, emit};

#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// What to measure: `sim` (physics speed), `astar` (grid A* against `pathfinding`) or
    /// `ros` (DDS latency and rate over loopback, in a private network namespace).
    #[arg(value_parser = ["sim", "astar", "ros"])]
    pub what: String,
    #[command(flatten)]
    pub sim: crate::common::SimArgs,
    /// A* queries per map.
    #[arg(long, default_value_t = 100)]
    pub queries: usize,
    /// Simulated seconds per case (0.01, one control tick, to 3600).
    #[arg(long, default_value_t = 10.0, value_parser = crate::common::bench_seconds)]
    pub seconds: f64,
    /// No progress lines.
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub config: ConfigArgs,
}

/// What sets a benchmarked robot's joint targets each control tick.
enum Driver {
    /// A chain's sine gait, open loop (the generator alone, as the MuJoCo peer plays it).
    Sine(SineGenerator, Vec<f64>),
    /// A wheel-foot robot's closed-loop controller, its targets and their values.
    Closed(Box<dyn Controller>, Vec<JointTarget>, Vec<f64>),
}

impl Driver {
    /// The targets at control tick `k` of `dt` seconds.
    fn targets(&mut self, sim: &Simulator, k: usize, dt: f64) -> &[f64] {
        match self {
            Driver::Sine(generator, targets) => {
                generator.targets_at(k as f64 * dt, targets);
                targets
            }
            Driver::Closed(controller, out, values) => {
                let (q, qd) = (sim.joint_positions(), sim.joint_velocities());
                let sensors = BTreeMap::new();
                let obs = Observation {
                    time: sim.time(),
                    positions: &q,
                    velocities: &qd,
                    base: sim.root_pose(),
                    sensors: &sensors,
                };
                controller.step(dt, &obs, out);
                for (v, t) in values.iter_mut().zip(out.iter()) {
                    *v = t.value();
                }
                values
            }
        }
    }
}

pub fn run(args: &BenchArgs) -> Result<()> {
    let catalog = args.config.catalog()?;
    let library = args.config.library()?;
    let flat = load_world(None)?;
    // The wheel-foot robots on their terrain (μ = 1.0, multiplied).
    let terrain = Scenario::from_yaml(WHEELFOOT_WORLD_YAML, "worlds/wheelfoot_mu1.yaml")?;
    let mut out = String::from("engine,robot,gait,step_ms,simulated_s,wall_s,real_time_factor,steps_per_s\n");
    let mut steps = crate::common::Steps::new("cases", 8, args.quiet);
    for (robot, gait, world) in [
        ("pp:8", "caterpillar", &flat),
        ("py:16", "sidewinding", &flat),
        ("quadruped", "trot", &terrain),
        ("wheeled", "drive", &terrain),
    ] {
        // The 1 and 5 ms steps of the MuJoCo peer (bench/mujoco_sim.py), or the one asked.
        for step_ms in args.sim.step_ms.map_or(vec![1.0, 5.0], |s| vec![s]) {
            let topology = load_robot(robot, &catalog)?;
            let mut options = EvalOptions::default();
            args.sim.apply(&mut options);
            options.step_s = Some(step_ms / 1000.0);
            let mut s = SimSession::new(topology.clone(), world, options.settings(world), 0)?;
            let mut driver = if modular_robot(&topology).is_some() {
                let spec = ControllerSpec::Gait {
                    name: gait.into(),
                    params: vec![],
                };
                let built = build_controller(&spec, &topology, &library, &s.sim.joint_positions())?;
                let n = topology.joints().len();
                Driver::Closed(built.controller, vec![JointTarget::Position(0.0); n], vec![0.0; n])
            } else {
                Driver::Sine(
                    library.build(gait, &topology, &[])?.generator,
                    vec![0.0; topology.len()],
                )
            };
            let control_dt = 0.01;
            let ticks = (args.seconds / control_dt).round() as usize;
            let started = Instant::now();
            for k in 0..ticks {
                let targets = driver.targets(&s.sim, k, control_dt);
                s.sim.set_targets(targets)?;
                s.sim.advance_to((k + 1) as f64 * control_dt)?;
            }
            let wall = started.elapsed().as_secs_f64();
            let simulated = s.sim.time();
            let _ = writeln!(
                out,
                "{},{robot},{gait},{step_ms},{simulated:.3},{wall:.3},{:.2},{:.0}",
                args.sim.engine,
                simulated / wall,
                s.sim.steps() as f64 / wall
            );
            steps.step(&format!(
                "{robot} {gait}, {step_ms} ms steps: real-time factor {:.1}",
                simulated / wall
            ));
        }
    }
    emit(&out)
}
