//! `modbot bench sim`: physics speed of the embedded simulator, single thread.

use std::fmt::Write as _;
use std::time::Instant;

use anyhow::Result;
use modbot_gaits::Gait;

use crate::cli::BenchArgs;
use crate::sim_setup::{scenario, setup};

pub fn run(args: &BenchArgs) -> Result<()> {
    let catalog = args.config.catalog()?;
    let library = args.config.library()?;
    let scenario = scenario(None)?;
    let mut out = String::from("engine,robot,gait,step_ms,simulated_s,wall_s,real_time_factor,steps_per_s\n");
    for (robot, gait) in [("pp:8", "caterpillar"), ("py:16", "sidewinding")] {
        for step_ms in [1.0, 5.0] {
            let mut s = setup(
                robot,
                gait,
                &[],
                &scenario,
                &catalog,
                &library,
                args.engine,
                Some(step_ms / 1000.0),
                &|_| {},
            )?;
            let n = s.topology.len();
            let mut targets = vec![0.0; n];
            let control_dt = 0.01;
            let substeps = (control_dt / s.sim.step_size()).round() as usize;
            let ticks = (args.seconds / control_dt).round() as usize;
            let started = Instant::now();
            for k in 0..ticks {
                s.built.generator.targets_at(k as f64 * control_dt, &mut targets);
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
    crate::cli::emit(&out)
}
