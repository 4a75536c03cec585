//! `modbot search`: the thesis's gait search (GA) or CMA-ES over the parameters of a gait or
//! the CPG, parallel, seeded and resumable; every evaluation as CSV, the best as a gait
//! file, a convergence plot. `--minimal py --target T` is the thesis's minimal-configuration
//! search (M = 2, 3, … until the objective reaches T). Decision record 0028.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use modbot_app::search::{
    Checkpoint, CmaesSettings, GaSettings, Gene, Hooks, Method, Objective, Problem, Requirement, SearchSettings,
    default_genes, lookup_spec, minimal_configuration, minimal_robots, run_search,
};
use modbot_app::{EvalOptions, load_maze, load_robot, load_world_for};
use modbot_core::Topology;
use modbot_gaits::GaitLibrary;
use modbot_sim::maze::MazeRules;
use modbot_sim::{Engine, RunPlan};
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
    /// Physics engine: `native` or `rapier`.
    #[arg(long, default_value = "native")]
    pub engine: Engine,
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

/// `KEY`, `KEY=MIN:MAX` or `KEY=MIN:MAX:STEP` against the gait's table.
fn parse_gene(text: &str, library: &GaitLibrary, robot: &Topology, gait: &str) -> Result<Gene> {
    let bad = || {
        BadInput(format!(
            "--gene `{text}`: expected KEY, KEY=MIN:MAX or KEY=MIN:MAX:STEP"
        ))
    };
    let (key, range) = match text.split_once('=') {
        Some((k, r)) => (k.trim(), Some(r)),
        None => (text.trim(), None),
    };
    let spec = lookup_spec(library, robot, gait, key)?;
    let mut gene = Gene::from_spec(&spec);
    if let Some(r) = range {
        let parts: Vec<f64> = r
            .split(':')
            .map(|p| p.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|_| bad())?;
        match parts[..] {
            [min, max] => (gene.min, gene.max) = (min, max),
            [min, max, step] => (gene.min, gene.max, gene.step) = (min, max, step),
            _ => return Err(bad().into()),
        }
    }
    gene.check(&spec)?;
    Ok(gene)
}

/// The underlying gait and the preset's parameters, for the gait file of the best.
fn underlying(library: &GaitLibrary, robot: &Topology, gait: &str) -> (String, BTreeMap<String, f64>) {
    match library.presets.get(gait) {
        // Canonical keys, so the gait file's defaults added later cannot repeat one.
        Some(p) => (
            p.gait.clone(),
            p.params
                .iter()
                .map(|(k, v)| {
                    let key = lookup_spec(library, robot, gait, k).map_or(k.clone(), |s| s.key.to_string());
                    (key, *v)
                })
                .collect(),
        ),
        None => (gait.to_string(), BTreeMap::new()),
    }
}

fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}

fn csv_of(problem: &Problem, cp: &Checkpoint) -> String {
    let mut s = String::from("index,generation,");
    for g in &problem.genes {
        s.push_str(&g.key);
        s.push(',');
    }
    s.push_str("fitness,step_x_cm,step_y_cm,step_cm,heading_deg,roll_deg,maze_score,stages_solved,status\n");
    for e in &cp.evaluations {
        let _ = write!(s, "{},{},", e.index, e.generation);
        for v in &e.values {
            let _ = write!(s, "{v},");
        }
        let m = &e.measured;
        let f = e.fitness.map_or("nan".to_string(), |f| f.to_string());
        let _ = writeln!(
            s,
            "{f},{},{},{},{},{},{},{},{}",
            m.step_x_cm, m.step_y_cm, m.step_cm, m.heading_deg, m.roll_deg, m.maze_score, m.stages_solved, e.status
        );
    }
    s
}

/// One search in `dir`; returns the final checkpoint.
fn search_one(
    args: &SearchArgs,
    robot_name: &str,
    library: &GaitLibrary,
    settings: &SearchSettings,
    objective: &Objective,
    rules: MazeRules,
    dir: &Path,
) -> Result<Checkpoint> {
    let catalog = args.config.catalog()?;
    let robot = load_robot(robot_name, &catalog)?;
    let world = load_world_for(args.world.as_deref(), &robot)?;
    let mazes = if objective.is_maze() {
        args.maze.iter().map(|m| load_maze(m)).collect::<Result<Vec<_>, _>>()?
    } else {
        Vec::new()
    };
    let genes = if args.genes.is_empty() {
        default_genes(library, &robot, &args.gait, &args.set)?
    } else {
        args.genes
            .iter()
            .map(|g| parse_gene(g, library, &robot, &args.gait))
            .collect::<Result<Vec<_>>>()?
    };
    let mut fixed = Vec::new();
    for (k, v) in &args.set {
        fixed.push((lookup_spec(library, &robot, &args.gait, k)?.key.to_string(), *v));
    }
    let problem = Problem {
        robot,
        gait: args.gait.clone(),
        fixed,
        genes,
        objective: objective.clone(),
        world,
        mazes,
        rules,
        options: EvalOptions {
            library: library.clone(),
            engine: args.engine,
            plan: RunPlan {
                warmup_cycles: args.warmup,
                cycles: args.cycles,
                ..RunPlan::default()
            },
            ..EvalOptions::default()
        },
    };
    problem.check()?;
    let cp_path = dir.join("checkpoint.json");
    // A minimal-configuration search resumes the robots it reached and starts the others.
    if args.resume && args.minimal.is_none() && !cp_path.exists() {
        return Err(BadInput(format!(
            "--resume: {} holds no search to continue (no checkpoint.json); leave out --resume to start one",
            cp_path.display()
        ))
        .into());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let resume = if cp_path.exists() {
        if !args.resume {
            return Err(BadInput(format!(
                "{} holds a search already: pass --resume to continue it, or choose another --out",
                dir.display()
            ))
            .into());
        }
        let text = std::fs::read_to_string(&cp_path).with_context(|| format!("reading {}", cp_path.display()))?;
        let cp: Checkpoint = serde_json::from_str(&text)
            .map_err(|e| BadInput(format!("{}: not a search checkpoint: {e}", cp_path.display())))?;
        Some(cp)
    } else {
        None
    };
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
    let csv_path = dir.join("evaluations.csv");
    let mut on_generation = |p: &modbot_app::search::Progress, cp: &Checkpoint| -> modbot_app::Result<()> {
        let text = serde_json::to_string(cp).map_err(|e| modbot_app::AppError::BadInput(e.to_string()))?;
        write_atomic(&cp_path, &text).map_err(|e| modbot_app::AppError::BadInput(format!("{e:#}")))?;
        write_atomic(&csv_path, &csv_of(&problem, cp)).map_err(|e| modbot_app::AppError::BadInput(format!("{e:#}")))?;
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
        settings,
        resume,
        &mut Hooks {
            generation: &mut on_generation,
            evaluation: &on_eval,
        },
    )?;
    bar.finish_and_clear();
    let wall = started.elapsed().as_secs_f64();
    write_results(args, robot_name, library, &problem, settings, &cp, dir, wall)?;
    Ok(cp)
}

#[allow(clippy::too_many_arguments)]
fn write_results(
    args: &SearchArgs,
    robot_name: &str,
    library: &GaitLibrary,
    problem: &Problem,
    settings: &SearchSettings,
    cp: &Checkpoint,
    dir: &Path,
    wall_s: f64,
) -> Result<()> {
    let best = cp.best();
    let (gait, mut params) = underlying(library, &problem.robot, &args.gait);
    for (k, v) in &problem.fixed {
        params.insert(k.clone(), *v);
    }
    // The gait file's defaults too, so the preset does not depend on the gait file it ran with.
    let modular = modbot_app::modular_robot(&problem.robot).is_some();
    if let Ok(specs) = modbot_app::search::param_specs(library, &problem.robot, &args.gait)
        && !modular
    {
        for s in specs.iter().filter(|s| !s.shape) {
            let default = if gait == modbot_gaits::cpg::CPG {
                library.cpg_default_of(s.key)
            } else {
                library.default_of(&gait, s.key)
            };
            if let Some(d) = default
                && !params.contains_key(s.key)
            {
                params.insert(s.key.to_string(), d);
            }
        }
    }
    let mut text = format!(
        "# modbot search: {} on {robot_name}, objective {} ({}, seed {}, {} evaluations)\n",
        args.gait,
        problem.objective,
        settings.method.name(),
        settings.seed,
        cp.evaluations.len()
    );
    if let Some(b) = best {
        for (g, v) in problem.genes.iter().zip(&b.values) {
            params.insert(g.key.clone(), *v);
        }
        if modular {
            // A wheel-foot controller takes its parameters on the command line, not from
            // a gait file's presets.
            let sets: Vec<String> = params.iter().map(|(k, v)| format!("--set {k}={v}")).collect();
            let cmd = format!(
                "modbot run --robot {robot_name} --gait {} {} --warmup {} --cycles {}\n",
                args.gait,
                sets.join(" "),
                problem.options.plan.warmup_cycles,
                problem.options.plan.cycles
            );
            std::fs::write(dir.join("best.txt"), cmd).context("writing best.txt")?;
        } else {
            let body: Vec<String> = params.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            let _ = write!(
                text,
                "# `modbot run --gaits {} --robot {robot_name} --gait search_best --warmup {} --cycles {}`\npresets:\n  search_best:\n    gait: {gait}\n    robot: \"{robot_name}\"\n    description: \"modbot search, objective {} = {}\"\n    params: {{{}}}\n",
                dir.join("best.yaml").display(),
                problem.options.plan.warmup_cycles,
                problem.options.plan.cycles,
                problem.objective,
                b.fitness.unwrap_or(f64::NAN),
                body.join(", ")
            );
            std::fs::write(dir.join("best.yaml"), &text).context("writing best.yaml")?;
        }
    }
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
    let summary = json!({
        "robot": robot_name,
        "gait": args.gait,
        "objective": problem.objective.to_string(),
        "method": settings.method,
        "generations": cp.generations_done.saturating_sub(1),
        "seed": settings.seed,
        "evaluations": cp.evaluations.len(),
        "wall_s_this_run": wall_s,
        "genes": problem.genes,
        "fixed": problem.fixed,
        "best": best.map(|b| json!({
            "fitness": b.fitness,
            "values": problem.genes.iter().zip(&b.values).map(|(g, v)| (g.key.clone(), *v)).collect::<BTreeMap<_, _>>(),
            "measured": b.measured,
            "evaluation": b.index,
            "generation": b.generation,
        })),
        "history": cp.history,
    });
    std::fs::write(dir.join("summary.json"), serde_json::to_string_pretty(&summary)? + "\n")
        .context("writing summary.json")?;
    Ok(())
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
    let rules = args.times.rules()?;
    let objective: Objective = args.objective.parse()?;
    let library = args.config.library()?;
    let method = match args.method.as_str() {
        "cmaes" => Method::Cmaes(CmaesSettings {
            population: args.population,
            ..CmaesSettings::default()
        }),
        _ => Method::Ga(GaSettings {
            population: args.population.unwrap_or(100),
            ..GaSettings::default()
        }),
    };
    let settings = SearchSettings {
        method,
        generations: args.generations,
        seed: args.seed,
        threads: args.threads,
    };
    settings.check()?;
    let slug = |s: &str| s.replace([':', '/', '.'], "_");
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("runs/search_{}_{}", slug(&args.robot), slug(&args.gait))));
    if args.minimal.is_none() && !args.require.is_empty() {
        return Err(BadInput("--require belongs to a minimal-configuration search (--minimal FAMILY)".into()).into());
    }
    match (&args.minimal, args.target) {
        (None, None) => {
            let cp = search_one(args, &args.robot, &library, &settings, &objective, rules, &dir)?;
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
            let folder = |robot: &str, req: &Requirement| dir.join(slug(robot)).join(objective_slug(&req.objective));
            let (found, tries) = minimal_configuration::<anyhow::Error>(&robots, &requirements, &mut |robot, req| {
                let sub = folder(robot, req);
                let cp = search_one(args, robot, &library, &settings, &req.objective, rules, &sub)?;
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
