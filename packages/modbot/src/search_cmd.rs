//! `modbot search`: the thesis's gait search (GA) or CMA-ES over the parameters of a gait or
//! the CPG, parallel, seeded and resumable; every evaluation as CSV, the best as a gait
//! file, a convergence plot. `--minimal py --target T` is the thesis's minimal-configuration
//! search (M = 2, 3, … until the objective reaches T). Decision record 0028.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use modbot_app::search::{
    Checkpoint, Hooks, Method, Objective, Requirement, SearchRequest, folder_slug, minimal_configuration,
    minimal_robots, open_folder, run_search, save_generation, write_results,
};
use modbot_sim::Engine;
use serde_json::json;

use crate::common::{BadInput, ConfigArgs, MazeTimes, emit, parse_set};

#[derive(Debug, clap::Args)]
pub struct SearchArgs {
    /// Robot: a preset (pp:M, py:M, pyp) or a robot file.
    #[arg(long, short, default_value = "pyp")]
    pub robot: String,
    /// Gait, preset or `cpg` whose parameters are searched (`pitch_yaw` is all of H2).
    #[arg(long, short, default_value = "pitch_yaw")]
    pub gait: String,
    /// What is maximised: a sum of [WEIGHT*]METRIC or [WEIGHT*]abs(METRIC), METRIC one of
    /// step_x, step_y, step (cm/cycle), heading, roll (deg/cycle), or `maze` alone (the
    /// negated staged maze fitness).
    #[arg(long, default_value = "step_x", allow_hyphen_values = true)]
    pub objective: String,
    /// Optimiser: `ga` (the thesis's, PGAPack defaults) or `cmaes`.
    #[arg(long, default_value = "ga", value_parser = ["ga", "cmaes"])]
    pub method: String,
    /// Population (GA: 100; CMA-ES: λ = 4 + ⌊3 ln n⌋).
    #[arg(long)]
    pub population: Option<usize>,
    /// Generations after the initial population (the thesis: 100).
    #[arg(long, default_value_t = 100)]
    pub generations: usize,
    /// Seed of every random draw: the same seed gives the same search on any thread count.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// A searched parameter, KEY or KEY=MIN:MAX or KEY=MIN:MAX:STEP (default: the gait's own
    /// control parameters over their table ranges, 1° steps for angles).
    #[arg(long = "gene", value_name = "KEY[=MIN:MAX[:STEP]]")]
    pub genes: Vec<String>,
    /// A fixed parameter, KEY=VALUE (not searched).
    #[arg(long = "set", short = 's', value_name = "KEY=VALUE", value_parser = parse_set)]
    pub set: Vec<(String, f64)>,
    /// Cycles measured per evaluation.
    #[arg(long, default_value_t = 3)]
    pub cycles: usize,
    /// Warm-up cycles per evaluation (the thesis: 2).
    #[arg(long, default_value_t = 2)]
    pub warmup: usize,
    /// World of the step metrics (scenario .yaml or generated .sdf).
    #[arg(long, value_name = "FILE")]
    pub world: Option<PathBuf>,
    /// Mazes of the maze objective, comma separated, as `modbot maze --maze`.
    #[arg(long, value_delimiter = ',', default_value = "maze_sls")]
    pub maze: Vec<String>,
    #[command(flatten)]
    pub times: MazeTimes,
    #[command(flatten)]
    pub sim: crate::common::SimArgs,
    /// Minimal-configuration search: chains of this family (`pp` or `py`; py:3 is the PYP)
    /// from 2 modules up, until one performs every gait asked (--objective with --target,
    /// and each --require): the thesis's "first configuration able to execute various gaits".
    #[arg(long, value_name = "FAMILY")]
    pub minimal: Option<String>,
    /// The value of --objective the minimal-configuration search must reach.
    #[arg(long, value_parser = crate::common::finite)]
    pub target: Option<f64>,
    /// A further gait the minimal configuration must perform, OBJECTIVE>=VALUE (repeatable),
    /// e.g. `--require 'abs(roll)>=180'`.
    #[arg(long, value_name = "OBJECTIVE>=VALUE")]
    pub require: Vec<Requirement>,
    /// Most modules the minimal-configuration search tries.
    #[arg(long, default_value_t = 8)]
    pub max_modules: usize,
    /// Continue the search whose checkpoint is in the output folder (with more generations,
    /// if --generations is raised).
    #[arg(long)]
    pub resume: bool,
    /// Output folder (default runs/search_<robot>_<gait>).
    #[arg(long, short, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub config: ConfigArgs,
}

impl SearchArgs {
    /// The single search these arguments ask for, on `robot_name` with `objective`.
    pub fn request(&self, robot_name: &str, objective: &Objective) -> SearchRequest {
        SearchRequest {
            robot: robot_name.to_string(),
            gait: self.gait.clone(),
            objective: objective.to_string(),
            method: self.method.clone(),
            population: self.population,
            generations: self.generations,
            seed: self.seed,
            threads: self.threads,
            genes: self.genes.clone(),
            set: self.set.clone(),
            cycles: self.cycles,
            warmup: self.warmup,
            world: self.world.clone(),
            maze: self.maze.clone(),
            max_time: self.times.max_time,
            enter_within: self.times.enter_within,
            engine: match self.sim.engine {
                Engine::Native => "native".into(),
                Engine::Rapier => "rapier".into(),
            },
            step_ms: self.sim.step_ms,
            solver_iterations: self.sim.solver_iterations,
            pgs_iterations: self.sim.pgs_iterations,
            modules: self.config.modules.clone(),
            gaits: self.config.gaits.clone(),
        }
    }
}

/// One search in `dir`; returns the final checkpoint.
fn search_one(args: &SearchArgs, robot_name: &str, objective: &Objective, dir: &Path) -> Result<Checkpoint> {
    let request = args.request(robot_name, objective);
    let settings = request.settings()?;
    let problem = request.problem()?;
    // A minimal-configuration search resumes the robots it reached and starts the others.
    let resume = open_folder(dir, args.resume, args.resume && args.minimal.is_none())?;
    let per_gen = match settings.method {
        Method::Ga(s) => (s.population, s.replaced()),
        Method::Cmaes(s) => (s.lambda(problem.genes.len()), s.lambda(problem.genes.len())),
    };
    let expected = (per_gen.0 + settings.generations * per_gen.1) as u64;
    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(expected)
    };
    bar.set_style(
        ProgressStyle::with_template("{prefix} {bar:30} {pos}/{len} evals {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_prefix(format!("{} {}", problem.robot.name, args.gait));
    let mut on_generation = |p: &modbot_app::search::Progress, cp: &Checkpoint| -> modbot_app::Result<()> {
        save_generation(dir, &problem, cp)?;
        bar.set_position((per_gen.0 + p.generation * per_gen.1) as u64);
        bar.set_message(format!(
            "gen {}/{}  best {}  {:.1} evals/s",
            p.generation,
            p.total - 1,
            p.best.map_or("-".into(), |b| format!("{b:.3}")),
            p.evals_per_s
        ));
        Ok(())
    };
    let on_eval = || bar.inc(1);
    let started = Instant::now();
    let cp = run_search(
        &problem,
        &settings,
        resume,
        &mut Hooks {
            generation: &mut on_generation,
            evaluation: &on_eval,
        },
    )?;
    bar.finish_and_clear();
    let wall = started.elapsed().as_secs_f64();
    write_results(dir, robot_name, &problem, &settings, &cp, wall)?;
    crate::plot::convergence_plot(
        &dir.join("convergence.png"),
        &format!(
            "{} {} on {robot_name}: {} ({})",
            settings.method.name(),
            args.gait,
            problem.objective,
            if problem.objective.is_maze() {
                "higher is better"
            } else {
                "maximised"
            }
        ),
        &cp.history,
    )?;
    Ok(cp)
}

fn describe(cp: &Checkpoint, problem_genes: &[String]) -> String {
    match cp.best() {
        Some(b) => {
            let vals: Vec<String> = problem_genes
                .iter()
                .zip(&b.values)
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            format!(
                "best {:.4} ({}) at evaluation {} of {}",
                b.fitness.unwrap_or(f64::NAN),
                vals.join(" "),
                b.index,
                cp.evaluations.len()
            )
        }
        None => format!("no candidate ran ({} evaluations)", cp.evaluations.len()),
    }
}

/// A folder name for an objective: `abs(heading)` → `abs_heading`.
fn objective_slug(objective: &Objective) -> String {
    let text: String = objective
        .to_string()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    text.trim_matches('_').to_string()
}

fn gene_keys(cp: &Checkpoint) -> Vec<String> {
    cp.problem["genes"]
        .as_array()
        .map(|a| a.iter().filter_map(|g| g["key"].as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

pub fn run(args: &SearchArgs) -> Result<()> {
    if args.cycles == 0 {
        return Err(BadInput("--cycles must be at least 1".into()).into());
    }
    let objective: Objective = args.objective.parse()?;
    // The settings and the rules, checked before any folder is made.
    args.request(&args.robot, &objective).settings()?;
    args.times.rules()?;
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| args.request(&args.robot, &objective).default_folder());
    if args.minimal.is_none() && !args.require.is_empty() {
        return Err(BadInput("--require belongs to a minimal-configuration search (--minimal FAMILY)".into()).into());
    }
    match (&args.minimal, args.target) {
        (None, None) => {
            let cp = search_one(args, &args.robot, &objective, &dir)?;
            let best = if dir.join("best.txt").exists() {
                "best.txt"
            } else {
                "best.yaml"
            };
            emit(format!(
                "{}\noutput: {} (evaluations.csv, {best}, convergence.png, summary.json, checkpoint.json)\n",
                describe(&cp, &gene_keys(&cp)),
                dir.display()
            ))
        }
        (Some(family), target) if target.is_some() || !args.require.is_empty() => {
            let mut requirements = Vec::new();
            if let Some(target) = target {
                let requirement = Requirement::new(objective.clone(), target)
                    .map_err(|e| BadInput(format!("--objective/--target: {e}")))?;
                requirements.push(requirement);
            }
            requirements.extend(args.require.iter().cloned());
            let robots = minimal_robots(family, 2, args.max_modules)?;
            // One folder per robot, one sub-folder per gait searched on it.
            let folder =
                |robot: &str, req: &Requirement| dir.join(folder_slug(robot)).join(objective_slug(&req.objective));
            let (found, tries) = minimal_configuration::<anyhow::Error>(&robots, &requirements, &mut |robot, req| {
                let sub = folder(robot, req);
                let cp = search_one(args, robot, &req.objective, &sub)?;
                emit(format!("{robot:<6} {req}: {}\n", describe(&cp, &gene_keys(&cp))))?;
                Ok(cp.best().and_then(|b| b.fitness))
            })?;
            let rows: Vec<_> = tries
                .iter()
                .map(|t| {
                    let req = &requirements[t.requirement];
                    json!({
                        "robot": t.robot,
                        "requirement": req.to_string(),
                        "best": t.best,
                        "met": t.met,
                        "folder": folder(&t.robot, req),
                    })
                })
                .collect();
            let summary = json!({
                "family": family,
                "requirements": requirements.iter().map(|r| r.to_string()).collect::<Vec<_>>(),
                "minimal": found,
                "tried": rows,
            });
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            std::fs::write(dir.join("minimal.json"), serde_json::to_string_pretty(&summary)? + "\n")
                .context("writing minimal.json")?;
            let asked = requirements
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(", ");
            let verdict = match found {
                Some(r) => format!("minimal configuration: {r} ({asked})"),
                None => format!("no chain of 2 to {} modules performs {asked}", args.max_modules),
            };
            emit(format!(
                "{verdict}\noutput: {} (minimal.json, one folder per robot and gait)\n",
                dir.display()
            ))
        }
        (None, _) => Err(BadInput(
            "--target and --require belong to a minimal-configuration search (--minimal FAMILY)".into(),
        )
        .into()),
        (Some(_), _) => Err(BadInput(
            "--minimal FAMILY needs what to reach: --target VALUE (of --objective) or --require OBJECTIVE>=VALUE"
                .into(),
        )
        .into()),
    }
}
