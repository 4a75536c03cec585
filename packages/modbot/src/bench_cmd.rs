//! `modbot bench sim`: physics speed of the embedded simulator, single thread: the chains
//! under their sine gaits, the quadruped and the wheeled vehicle under their controllers.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Instant;

use anyhow::Result;
use modbot_core::Scenario;
use modbot_gaits::{Gait, JointTarget, Observation};

use modbot_app::{ControllerSpec, EvalOptions, SimSession, build_controller, load_robot, load_world};
use modbot_sim::Engine;

use crate::common::{ConfigArgs, emit};

#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// What to measure: `sim` (physics speed), `astar` (grid A* against `pathfinding`) or
    /// `ros` (DDS latency and rate over loopback, in a private network namespace).
    #[arg(value_parser = ["sim", "astar", "ros"])]
    pub what: String,
    /// Physics engine: `native` (modbot's reduced-coordinate engine, the default) or
    /// `rapier` (a rapier3d multibody, the cross-check).
    #[arg(long, default_value = "native")]
    pub engine: Engine,
    /// A* queries per map.
    #[arg(long, default_value_t = 100)]
    pub queries: usize,
    /// Simulated seconds per case.
    #[arg(long, default_value_t = 10.0)]
    pub seconds: f64,
    #[command(flatten)]
    pub config: ConfigArgs,
}

pub fn run(args: &BenchArgs) -> Result<()> {
    let catalog = args.config.catalog()?;
    let library = args.config.library()?;
    let world = load_world(None)?;
    let mut out = String::from("engine,robot,gait,step_ms,simulated_s,wall_s,real_time_factor,steps_per_s\n");
    for (robot, gait) in [("pp:8", "caterpillar"), ("py:16", "sidewinding")] {
        for step_ms in [1.0, 5.0] {
            let topology = load_robot(robot, &catalog)?;
            let generator = library.build(gait, &topology, &[])?.generator;
            let options = EvalOptions {
                engine: args.engine,
                step_s: Some(step_ms / 1000.0),
                ..EvalOptions::default()
            };
            let mut s = SimSession::new(topology, &world, options.settings(&world), 0)?;
            let n = s.topology.len();
            let mut targets = vec![0.0; n];
            let control_dt = 0.01;
            let substeps = (control_dt / s.sim.step_size()).round() as usize;
            let ticks = (args.seconds / control_dt).round() as usize;
            let started = Instant::now();
            for k in 0..ticks {
                generator.targets_at(k as f64 * control_dt, &mut targets);
                s.sim.set_targets(&targets)?;
                for _ in 0..substeps {
                    s.sim.step()?;
                }
            }
            let wall = started.elapsed().as_secs_f64();
            let simulated = s.sim.time();
            let _ = writeln!(
                out,
                "{},{robot},{gait},{step_ms},{simulated:.3},{wall:.3},{:.2},{:.0}",
                args.engine,
                simulated / wall,
                s.sim.steps() as f64 / wall
            );
        }
    }
    // The wheel-foot robots under their closed-loop controllers (terrain μ = 1.0).
    let wf_world = Scenario::from_yaml(WHEELFOOT_WORLD, "wheelfoot bench world")?;
    for (robot, gait) in [("quadruped", "trot"), ("wheeled", "drive")] {
        for step_ms in [1.0, 5.0] {
            let topology = load_robot(robot, &catalog)?;
            let options = EvalOptions {
                engine: args.engine,
                step_s: Some(step_ms / 1000.0),
                ..EvalOptions::default()
            };
            let mut s = SimSession::new(topology.clone(), &wf_world, options.settings(&wf_world), 0)?;
            let spec = ControllerSpec::Gait {
                name: gait.into(),
                params: vec![],
            };
            let mut built = build_controller(&spec, &topology, &library, &s.sim.joint_positions())?;
            let mut out_targets = vec![JointTarget::Position(0.0); topology.joints().len()];
            let sensors = BTreeMap::new();
            let control_dt = 0.01;
            let substeps = (control_dt / s.sim.step_size()).round().max(1.0) as usize;
            let ticks = (args.seconds / control_dt).round() as usize;
            let started = Instant::now();
            for _ in 0..ticks {
                let (q, qd) = (s.sim.joint_positions(), s.sim.joint_velocities());
                let obs = Observation {
                    time: s.sim.time(),
                    positions: &q,
                    velocities: &qd,
                    base: s.sim.root_pose(),
                    sensors: &sensors,
                };
                built.controller.step(control_dt, &obs, &mut out_targets);
                let values: Vec<f64> = out_targets.iter().map(JointTarget::value).collect();
                s.sim.set_targets(&values)?;
                for _ in 0..substeps {
                    s.sim.step()?;
                }
            }
            let wall = started.elapsed().as_secs_f64();
            let simulated = s.sim.time();
            let _ = writeln!(
                out,
                "{},{robot},{gait},{step_ms},{simulated:.3},{wall:.3},{:.2},{:.0}",
                args.engine,
                simulated / wall,
                s.sim.steps() as f64 / wall
            );
        }
    }
    emit(&out)
}

/// Flat ground of terrain μ = 1.0, friction multiplied (worlds/wheelfoot_mu1.yaml's ground).
const WHEELFOOT_WORLD: &str =
    "name: wheelfoot_bench\nground: {friction: 1.0, size_m: [50.0, 50.0], friction_combine: multiply}\n";
