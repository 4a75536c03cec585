//! `modbot sweep`: a grid of two gait parameters, each point run and measured; a table and
//! a heat map (the source's step-vs-(A, Δφ) plots).

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result};
use modbot_sim::{RunPlan, run_gait};

use crate::cli::{BadInput, SweepArgs};
use crate::sim_setup::{scenario, setup};

/// Parses `KEY=START:STOP:STEP` into the key and its values.
pub fn parse_axis(s: &str) -> Result<(String, Vec<f64>), String> {
    let bad = || format!("`{s}`: expected KEY=START:STOP:STEP, e.g. A=10:60:10");
    let (k, range) = s.split_once('=').ok_or_else(bad)?;
    let parts: Vec<f64> = range
        .split(':')
        .map(|p| p.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|_| bad())?;
    let [start, stop, step] = parts[..] else {
        return Err(bad());
    };
    if !(step > 0.0 && stop >= start && start.is_finite() && stop.is_finite()) {
        return Err(bad());
    }
    let n = ((stop - start) / step + 1e-9).floor() as usize + 1;
    if n > 200 {
        return Err(format!("`{s}`: {n} values; at most 200 per axis"));
    }
    Ok((k.trim().to_string(), (0..n).map(|i| start + i as f64 * step).collect()))
}

pub fn run(args: &SweepArgs) -> Result<()> {
    if args.cycles == 0 {
        return Err(BadInput("--cycles must be at least 1".into()).into());
    }
    let catalog = args.config.catalog()?;
    let library = args.config.library()?;
    let scenario = scenario(args.world.as_deref())?;
    let (xk, xs) = &args.x;
    let (yk, ys) = &args.y;
    let plan = RunPlan {
        warmup_cycles: args.warmup,
        cycles: args.cycles,
        control_rate_hz: 100.0,
    };
    let mut table = format!("{xk},{yk},step_x_m,step_y_m,heading_change_deg,roll_per_cycle_deg,status\n");
    let mut grid = vec![vec![f64::NAN; xs.len()]; ys.len()];
    let total = xs.len() * ys.len();
    for (iy, y) in ys.iter().enumerate() {
        for (ix, x) in xs.iter().enumerate() {
            let mut set = args.set.clone();
            set.push((xk.clone(), *x));
            set.push((yk.clone(), *y));
            let result = setup(
                &args.robot,
                &args.gait,
                &set,
                &scenario,
                &catalog,
                &library,
                args.engine,
                None,
                &|_| {},
            )
            .and_then(|mut s| {
                let out = run_gait(
                    &mut s.sim,
                    Box::new(s.built.generator.clone()),
                    library.transition,
                    s.max_speeds.clone(),
                    plan,
                    s.body_length,
                    &mut |_, _| {},
                )?;
                Ok(out.report)
            });
            match result {
                Ok(r) => {
                    grid[iy][ix] = match args.metric.as_str() {
                        "step_y" => r.step_y_m * 100.0,
                        "step" => r.step_m * 100.0,
                        "heading" => r.heading_change_deg,
                        _ => r.step_x_m * 100.0,
                    };
                    let _ = writeln!(
                        table,
                        "{x},{y},{},{},{},{},ok",
                        r.step_x_m, r.step_y_m, r.heading_change_deg, r.roll_per_cycle_deg
                    );
                }
                Err(e) => {
                    let msg = format!("{e:#}").replace([',', '\n'], ";");
                    let _ = writeln!(table, "{x},{y},nan,nan,nan,nan,{msg}");
                }
            }
            if !args.quiet {
                eprint!("\r{} of {total} points", iy * xs.len() + ix + 1);
            }
        }
    }
    if !args.quiet {
        eprintln!();
    }
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("runs/sweep_{}_{}", args.robot.replace(':', "_"), args.gait)));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::write(dir.join("table.csv"), &table).with_context(|| format!("writing {}", dir.display()))?;
    let unit = if args.metric == "heading" {
        "deg/cycle"
    } else {
        "cm/cycle"
    };
    crate::plot::heatmap(
        &dir.join("heatmap.png"),
        &format!("{} {}: {} ({unit})", args.robot, args.gait, args.metric),
        xs,
        ys,
        &grid,
        (xk, yk),
    )?;
    crate::cli::emit(&table)?;
    eprintln!("wrote {}/table.csv and heatmap.png", dir.display());
    Ok(())
}
