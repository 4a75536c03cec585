//! `modbot run`: a gait on the embedded simulator, measured with the source's protocol.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use modbot_sim::{Report, RunPlan, run_gait};
use serde_json::json;

use crate::cli::{BadInput, RunArgs};
use crate::sim_setup::{scenario, setup};

pub fn run(args: &RunArgs) -> Result<()> {
    if args.cycles == 0 {
        return Err(BadInput("--cycles must be at least 1".into()).into());
    }
    let catalog = args.config.catalog()?;
    let library = args.config.library()?;
    let scenario = scenario(args.world.as_deref())?;
    let step_s = args.step_ms.map(|ms| ms / 1000.0);
    let (iterations, pgs) = (args.solver_iterations, args.pgs_iterations);
    let mut s = setup(
        &args.robot,
        &args.gait,
        &args.set,
        &scenario,
        &catalog,
        &library,
        args.engine,
        step_s,
        &|st| *st = st.with_iterations(iterations, pgs),
    )?;
    for note in &s.built.notes {
        eprintln!("note: {note}");
    }
    let plan = RunPlan {
        warmup_cycles: args.warmup,
        cycles: args.cycles,
        control_rate_hz: args.rate,
    };
    let period = s.built.generator.period_s;
    let total = (plan.warmup_cycles + plan.cycles) as f64 * period;
    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new((total * 1000.0).round() as u64)
    };
    bar.set_style(ProgressStyle::with_template("{bar:40} sim {msg}").unwrap_or_else(|_| ProgressStyle::default_bar()));
    let started = Instant::now();
    let mut last_draw = 0.0;
    let out = run_gait(
        &mut s.sim,
        Box::new(s.built.generator.clone()),
        library.transition,
        s.max_speeds.clone(),
        plan,
        s.body_length,
        &mut |t, total| {
            if t - last_draw >= 0.1 || t >= total {
                last_draw = t;
                let rtf = t / started.elapsed().as_secs_f64().max(1e-9);
                bar.set_position((t * 1000.0).round() as u64);
                bar.set_message(format!("{t:.1}/{total:.1} s, real-time factor {rtf:.1}"));
            }
        },
    )?;
    let wall = started.elapsed().as_secs_f64();
    bar.finish_and_clear();
    let rtf = s.sim.time() / wall.max(1e-9);

    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("runs/{}_{}", s.spec.name(), args.gait)));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let joint_names = s.topology.joint_names();

    let mut csv = String::from("time_s,com_x_m,com_y_m,com_z_m,heading_rad,roll_rad");
    for j in &joint_names {
        let _ = write!(csv, ",{j}_target_rad");
    }
    for j in &joint_names {
        let _ = write!(csv, ",{j}_angle_rad");
    }
    csv.push('\n');
    for smp in &out.samples {
        let _ = write!(
            csv,
            "{},{},{},{},{},{}",
            smp.t, smp.com[0], smp.com[1], smp.com[2], smp.heading, smp.roll
        );
        for v in smp.targets.iter().chain(&smp.angles) {
            let _ = write!(csv, ",{v}");
        }
        csv.push('\n');
    }
    let csv_path = dir.join("trajectory.csv");
    std::fs::write(&csv_path, csv).with_context(|| format!("writing {}", csv_path.display()))?;

    let summary = json!({
        "robot": s.spec.to_string(),
        "gait": args.gait,
        "params": s.built.params,
        "notes": s.built.notes,
        "world": scenario.name,
        "engine": s.sim.engine().to_string(),
        "physics_step_s": s.sim.step_size(),
        "control_rate_hz": args.rate,
        "physics_steps": s.sim.steps(),
        "simulated_s": s.sim.time(),
        "wall_s": wall,
        "real_time_factor": rtf,
        "report": out.report,
    });
    let json_path = dir.join("summary.json");
    std::fs::write(&json_path, serde_json::to_string_pretty(&summary)? + "\n")
        .with_context(|| format!("writing {}", json_path.display()))?;
    let png = dir.join("plot.png");
    crate::plot::run_plot(&png, &format!("{} {}", s.spec, args.gait), &out.samples, &joint_names)?;

    let table = summary_table(&out.report, rtf, s.sim.engine());
    let mut stdout = std::io::stdout().lock();
    let _ = write!(stdout, "{table}");
    let _ = writeln!(
        stdout,
        "run folder: {} (trajectory.csv, summary.json, plot.png)",
        dir.display()
    );
    Ok(())
}

fn summary_table(r: &Report, rtf: f64, engine: modbot_sim::Engine) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "measured over {} cycles after {} warm-up cycles (T = {} s)",
        r.cycles, r.warmup_cycles, r.period_s
    );
    let rows = [
        ("step along body axis", format!("{:+.2} cm/cycle", r.step_x_m * 100.0)),
        ("step across (left +)", format!("{:+.2} cm/cycle", r.step_y_m * 100.0)),
        (
            "step length",
            format!(
                "{:.2} cm/cycle = {:.3} body lengths/cycle",
                r.step_m * 100.0,
                r.speed_body_lengths_per_cycle
            ),
        ),
        ("speed", format!("{:.2} cm/s", r.speed_m_s * 100.0)),
        ("heading change", format!("{:+.2} deg/cycle", r.heading_change_deg)),
        (
            "roll",
            format!(
                "{:+.1} deg/cycle (range {:.1} deg)",
                r.roll_per_cycle_deg, r.roll_range_deg
            ),
        ),
        (
            "CoM height",
            format!(
                "{:.1} cm mean, {:.1} to {:.1} cm",
                r.com_height_mean_m * 100.0,
                r.com_height_min_m * 100.0,
                r.com_height_max_m * 100.0
            ),
        ),
        ("real-time factor", format!("{rtf:.1} ({engine} engine)")),
    ];
    for (k, v) in rows {
        let _ = writeln!(t, "  {k:<22} {v}");
    }
    t
}
