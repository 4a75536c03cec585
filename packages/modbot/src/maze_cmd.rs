//! `modbot maze`: a controller scored in a maze (seed 002 §4.1, §8), with a run folder that
//! draws the path over the maze.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use modbot_app::{ControllerSpec, EvalOptions, evaluate_maze_stages, load_maze, load_robot};
use modbot_sim::RunPlan;
use serde_json::json;

use crate::common::{ConfigArgs, MazeTimes, parse_set};

#[derive(Debug, clap::Args)]
pub struct MazeArgs {
    /// Robot: a preset (pp:M, py:M, pyp) or a robot file.
    #[arg(long, short, default_value = "py:8")]
    pub robot: String,
    /// Gait, preset or `cpg` (see `modbot gaits`).
    #[arg(long, short, default_value = "cpg")]
    pub gait: String,
    /// Parameter value, KEY=VALUE (e.g. R=0.6, phi=-54, amplitude.3=0.2).
    #[arg(long = "set", short = 's', value_name = "KEY=VALUE", value_parser = parse_set)]
    pub set: Vec<(String, f64)>,
    /// Maze: a shipped one (maze_sls, maze_b, maze_srs) or a scenario file with a `maze:`
    /// section; several, comma separated, run as the repository's staged evaluation (each
    /// stage only if the one before was solved).
    #[arg(long, short, default_value = "maze_sls", value_delimiter = ',')]
    pub maze: Vec<String>,
    #[command(flatten)]
    pub times: MazeTimes,
    /// Start-pose perturbation seed (0: the world's start as written).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Control rate, Hz.
    #[arg(long, default_value_t = 100.0, value_parser = crate::common::control_rate)]
    pub rate: f64,
    #[command(flatten)]
    pub sim: crate::common::SimArgs,
    /// Run folder (default runs/<robot>_<gait>_maze, or the next free runs/<…>_maze-2, …;
    /// a named folder holding files is refused unless --force).
    #[arg(long, short, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Overwrite the files of an earlier run in the folder.
    #[arg(long)]
    pub force: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub config: ConfigArgs,
}

pub fn run(args: &MazeArgs) -> Result<()> {
    let rules = args.times.rules()?;
    let catalog = args.config.catalog()?;
    let library = args.config.library()?;
    let robot = load_robot(&args.robot, &catalog)?;
    let worlds = args.maze.iter().map(|m| load_maze(m)).collect::<Result<Vec<_>, _>>()?;
    let controller = ControllerSpec::Gait {
        name: args.gait.clone(),
        params: args.set.clone(),
    };
    let mut options = EvalOptions {
        library,
        plan: RunPlan {
            control_rate_hz: args.rate,
            ..RunPlan::default()
        },
        ..EvalOptions::default()
    };
    args.sim.apply(&mut options);
    let dir = match &args.out {
        Some(d) => crate::common::fresh_dir(d, true, args.force)?,
        None => crate::common::fresh_dir(
            &PathBuf::from(format!("runs/{}_{}_maze", robot.name, args.gait)),
            false,
            args.force,
        )?,
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let started = Instant::now();
    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new((rules.max_time_s * 1000.0) as u64)
    };
    bar.set_style(ProgressStyle::with_template("{bar:40} {msg}").unwrap_or_else(|_| ProgressStyle::default_bar()));
    let (staged, stages) = evaluate_maze_stages(
        &robot,
        &controller,
        &worlds,
        args.seed,
        &options,
        rules,
        &mut |world, t, _| {
            bar.set_position((t * 1000.0) as u64);
            bar.set_message(format!("{world} sim {t:.1} s"));
        },
    )?;
    bar.finish_and_clear();
    let mut text = String::new();
    for (e, world) in stages.iter().zip(&worlds) {
        let [d, t] = e.outcome.result();
        let last = e.path.last().copied().unwrap_or([0.0; 5]);
        writeln!(
            text,
            "{:<10} {:<12} result [{d:.4}, {t:.2}]  part {}/{}  D {:.2} of {:.2} m  after {:.2} s  fitness {:.4} ({})",
            e.world,
            e.outcome.label(),
            last[3],
            world
                .maze
                .as_ref()
                .map(|m| m.pieces().map(|p| p.len()).unwrap_or(0))
                .unwrap_or(0),
            last[4],
            e.total_m,
            e.outcome.time_s(),
            e.fitness,
            if e.solved { "solved" } else { "not solved" }
        )?;
        let mut csv = String::from("time_s,x_m,y_m,part,remaining_m\n");
        for p in &e.path {
            let _ = writeln!(csv, "{},{},{},{},{}", p[0], p[1], p[2], p[3], p[4]);
        }
        let csv_path = dir.join(format!("path_{}.csv", e.world));
        std::fs::write(&csv_path, csv).with_context(|| format!("writing {}", csv_path.display()))?;
        crate::plot::maze_plot(
            &dir.join(format!("maze_{}.png", e.world)),
            &format!(
                "{} {} in {}: {} (fitness {:.3})",
                args.robot,
                e.controller,
                e.world,
                e.outcome.label(),
                e.fitness
            ),
            world,
            &e.path,
        )?;
    }
    if worlds.len() > 1 {
        writeln!(
            text,
            "staged fitness {staged:.4} over {} of {} stages (lower is better)",
            stages.len(),
            worlds.len()
        )?;
    }
    let summary = json!({
        "robot": args.robot,
        "controller": stages.first().map(|e| e.controller.clone()),
        "params": stages.first().map(|e| e.params.clone()),
        "seed": args.seed,
        "max_time_s": rules.max_time_s,
        "staged_fitness": staged,
        "wall_s": started.elapsed().as_secs_f64(),
        "stages": stages.iter().map(|e| json!({
            "world": e.world,
            "outcome": e.outcome.label(),
            "result": e.outcome.result(),
            "time_s": e.outcome.time_s(),
            "total_m": e.total_m,
            "fitness": e.fitness,
            "solved": e.solved,
            "physics_steps": e.steps,
        })).collect::<Vec<_>>(),
    });
    let json_path = dir.join("summary.json");
    std::fs::write(&json_path, serde_json::to_string_pretty(&summary)? + "\n")
        .with_context(|| format!("writing {}", json_path.display()))?;
    print!("{text}");
    println!(
        "run folder: {} (summary.json, path_<maze>.csv, maze_<maze>.png)",
        dir.display()
    );
    Ok(())
}
