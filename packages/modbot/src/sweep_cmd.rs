//! `modbot sweep`: a grid of two gait parameters, each point run and measured; a table and
//! a heat map (the source's step-vs-(A, Δφ) plots).

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result};
use modbot_app::{Axis, EvalOptions, SweepGrid, load_robot, load_world_for, sweep};
use modbot_sim::RunPlan;

use crate::common::{BadInput, ConfigArgs, emit, fresh_dir, parse_set};

#[derive(Debug, clap::Args)]
pub struct SweepArgs {
    /// Robot: a preset (pp:M, py:M, pyp) or a robot file.
    #[arg(long, short, default_value = "pp:8")]
    pub robot: String,
    #[command(flatten)]
    pub sim: crate::common::SimArgs,
    /// Gait or preset name.
    #[arg(long, short, default_value = "caterpillar")]
    pub gait: String,
    /// First axis, KEY=START:STOP:STEP (e.g. A=10:60:10).
    #[arg(long, value_parser = parse_axis)]
    pub x: Axis,
    /// Second axis, KEY=START:STOP:STEP (e.g. dphi=30:180:30).
    #[arg(long, value_parser = parse_axis)]
    pub y: Axis,
    /// Fixed parameters, KEY=VALUE.
    #[arg(long = "set", short = 's', value_name = "KEY=VALUE", value_parser = parse_set)]
    pub set: Vec<(String, f64)>,
    /// Cycles measured per point.
    #[arg(long, default_value_t = 3)]
    pub cycles: usize,
    /// Warm-up cycles per point.
    #[arg(long, default_value_t = 2)]
    pub warmup: usize,
    /// Quantity in the heat map: step_x, step_y, step or heading.
    #[arg(long, default_value = "step_x", value_parser = ["step_x", "step_y", "step", "heading"])]
    pub metric: String,
    /// World (scenario .yaml or generated .sdf).
    #[arg(long, value_name = "FILE")]
    pub world: Option<PathBuf>,
    /// Output folder (default runs/sweep_<robot>_<gait>, numbered -2, -3, … when that holds
    /// an earlier sweep). A named folder that holds files is refused without --force.
    #[arg(long, short, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Overwrite the output folder's files instead of refusing (--out) or numbering.
    #[arg(long)]
    pub force: bool,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub config: ConfigArgs,
}

/// Parses `KEY=START:STOP:STEP` (clap's value parser; the rules are modbot_app's `Axis`).
fn parse_axis(s: &str) -> Result<Axis, String> {
    s.parse::<Axis>().map_err(|e| e.to_string())
}

pub fn run(args: &SweepArgs) -> Result<()> {
    if args.cycles == 0 {
        return Err(BadInput("--cycles must be at least 1".into()).into());
    }
    let catalog = args.config.catalog()?;
    let library = args.config.library()?;
    let robot = load_robot(&args.robot, &catalog)?;
    let world = load_world_for(args.world.as_deref(), &robot)?;
    let (x, y) = (&args.x, &args.y);
    let mut options = EvalOptions {
        library,
        plan: RunPlan {
            warmup_cycles: args.warmup,
            cycles: args.cycles,
            ..RunPlan::default()
        },
        ..EvalOptions::default()
    };
    args.sim.apply(&mut options);
    let quiet = args.quiet;
    // Decided before the points run, so a refused folder costs nothing.
    let dir = match &args.out {
        Some(d) => fresh_dir(d, true, args.force)?,
        None => fresh_dir(
            &PathBuf::from(format!("runs/sweep_{}_{}", args.robot.replace(':', "_"), args.gait)),
            false,
            args.force,
        )?,
    };
    let mut steps = crate::common::Steps::new("points", x.values.len() * y.values.len(), quiet);
    let grid = SweepGrid {
        gait: &args.gait,
        fixed: &args.set,
        x,
        y,
    };
    let points = sweep(&robot, grid, &world, &options, &mut |done, _| {
        let (ix, iy) = ((done - 1) % x.values.len(), (done - 1) / x.values.len());
        steps.step(&format!("{}={} {}={}", x.key, x.values[ix], y.key, y.values[iy]));
    })?;
    let mut table = format!(
        "{},{},step_x_m,step_y_m,heading_change_deg,roll_per_cycle_deg,status,notes\n",
        x.key, y.key
    );
    let mut grid = vec![vec![f64::NAN; x.values.len()]; y.values.len()];
    let mut counts: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for (k, p) in points.iter().enumerate() {
        let (iy, ix) = (k / x.values.len(), k % x.values.len());
        match &p.result {
            Ok(r) => {
                grid[iy][ix] = match args.metric.as_str() {
                    "step_y" => r.step_y_m * 100.0,
                    "step" => r.step_m * 100.0,
                    "heading" => r.heading_change_deg,
                    _ => r.step_x_m * 100.0,
                };
                let notes = csv_field(&r.findings.join("; "));
                let _ = writeln!(
                    table,
                    "{},{},{},{},{},{},{},{notes}",
                    p.x, p.y, r.step_x_m, r.step_y_m, r.heading_change_deg, r.roll_per_cycle_deg, r.status
                );
                *counts.entry(r.status.to_string()).or_insert(0) += 1;
            }
            Err(e) => {
                let msg = csv_field(e);
                let _ = writeln!(table, "{},{},nan,nan,nan,nan,error,{msg}", p.x, p.y);
                *counts.entry("error".to_string()).or_insert(0) += 1;
            }
        }
    }
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
        &x.values,
        &y.values,
        &grid,
        (&x.key, &y.key),
        &format!("{} ({unit})", args.metric),
    )?;
    let counts: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    emit(format!(
        "{} points: {}\nwrote {}/table.csv and heatmap.png\n",
        points.len(),
        counts.join(", "),
        dir.display()
    ))?;
    Ok(())
}

/// A free-text CSV field: quoted, its quotes doubled (RFC 4180), on one line.
fn csv_field(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\"").replace(['\n', '\r'], " "))
}
