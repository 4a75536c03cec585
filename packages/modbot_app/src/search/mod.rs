//! Gait search (seed-001 §2.6, App. B; decision record 0028): the thesis's GA or CMA-ES over
//! the parameters of any gait or controller, each generation's candidates evaluated in
//! parallel, reproducible bit for bit from a seed whatever the number of threads, and
//! resumable from a checkpoint.
//!
//! Reproducibility: every random draw is made on the calling thread from one ChaCha8
//! stream; candidates are evaluated independently (each run is deterministic) and their
//! results collected in candidate order, so threads only change the wall time.

pub mod cmaes;
pub mod float;
pub mod ga;
pub mod problem;
pub mod request;

use std::collections::HashMap;
use std::time::Instant;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

pub use cmaes::{Cmaes, CmaesSettings};
pub use ga::{Ga, GaSettings};
pub use problem::{Gene, Measured, Metric, Objective, Problem, Scored, default_genes, lookup_spec, param_specs};
pub use request::{SearchRequest, folder_slug, open_folder, parse_gene, save_generation, write_results};

use crate::error::{AppError, Result};

/// Which optimiser, with its settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum Method {
    /// The thesis's GA (PGAPack defaults).
    Ga(GaSettings),
    /// CMA-ES.
    Cmaes(CmaesSettings),
}

impl Method {
    /// The method's name.
    pub fn name(&self) -> &'static str {
        match self {
            Method::Ga(_) => "ga",
            Method::Cmaes(_) => "cmaes",
        }
    }
}

/// How long and how to search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchSettings {
    /// Optimiser.
    pub method: Method,
    /// Generations after the initial one (the thesis: 100).
    pub generations: usize,
    /// Seed of every random draw.
    pub seed: u64,
    /// Worker threads (0: one per core).
    pub threads: usize,
}

/// Most generations a search runs.
pub const MAX_GENERATIONS: usize = 1_000_000;

impl SearchSettings {
    /// Checks the settings.
    pub fn check(&self) -> Result<()> {
        match &self.method {
            Method::Ga(s) => s.check()?,
            Method::Cmaes(s) => s.check()?,
        }
        if self.generations > MAX_GENERATIONS {
            return Err(AppError::BadInput(format!(
                "generations = {}: at most {MAX_GENERATIONS}",
                self.generations
            )));
        }
        if self.threads > 1024 {
            return Err(AppError::BadInput(format!("threads = {}: at most 1024", self.threads)));
        }
        Ok(())
    }
}

/// The optimiser's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum State {
    /// GA population.
    Ga(Ga),
    /// CMA-ES distribution.
    Cmaes(Cmaes),
}

/// One generation in the history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GenerationStat {
    /// Generation (0 = initial).
    pub generation: usize,
    /// Evaluations run so far.
    pub evaluations: usize,
    /// Best fitness found so far.
    pub best: Option<f64>,
    /// Mean fitness of this generation's population (GA) or samples (CMA-ES) that ran.
    pub mean: Option<f64>,
}

/// Checkpoint format version.
pub const CHECKPOINT_FORMAT: u32 = 1;

/// Everything a search has done: enough to resume it and to write its results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Format version.
    pub format: u32,
    /// What was searched, how (a resumed search must match it exactly).
    pub problem: serde_json::Value,
    /// Seed.
    pub seed: u64,
    /// Position in the seed's random stream (decimal u128).
    pub rng_word_pos: String,
    /// Optimiser state.
    pub state: State,
    /// Generations completed (the initial one counts).
    pub generations_done: usize,
    /// Every evaluation, in order.
    pub evaluations: Vec<Scored>,
    /// Per generation.
    pub history: Vec<GenerationStat>,
}

impl Checkpoint {
    /// The best evaluation (the earliest of equals), if any ran.
    pub fn best(&self) -> Option<&Scored> {
        self.evaluations
            .iter()
            .filter(|s| s.fitness.is_some())
            .reduce(|a, b| if b.rank_value() > a.rank_value() { b } else { a })
    }
}

/// The fingerprint of a search: problem and optimiser settings (not the generation count,
/// so a finished search may be extended, and not the threads).
pub fn fingerprint(problem: &Problem, settings: &SearchSettings) -> serde_json::Value {
    let o = &problem.options;
    serde_json::json!({
        "robot": problem.robot.to_yaml(""),
        "gait": problem.gait,
        "fixed": problem.fixed,
        "genes": problem.genes,
        "objective": problem.objective.to_string(),
        "world": if problem.objective.is_maze() { serde_json::Value::Null } else { problem.world.name.clone().into() },
        "mazes": problem.mazes.iter().map(|m| m.name.clone()).collect::<Vec<_>>(),
        "maze_rules": [problem.rules.max_time_s, problem.rules.enter_within_s],
        "engine": format!("{:?}", o.engine),
        "step_s": o.step_s,
        "solver_iterations": o.solver_iterations,
        "pgs_iterations": o.pgs_iterations,
        "warmup_cycles": o.plan.warmup_cycles,
        "cycles": o.plan.cycles,
        "control_rate_hz": o.plan.control_rate_hz,
        "method": settings.method,
        "seed": settings.seed,
    })
}

/// Progress after each generation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Generation just finished (0 = initial).
    pub generation: usize,
    /// Generations in all (initial included).
    pub total: usize,
    /// Best fitness so far.
    pub best: Option<f64>,
    /// Evaluations run in this process.
    pub evaluations: usize,
    /// Evaluations per second of wall time in this process.
    pub evals_per_s: f64,
}

/// What the caller hears during a search.
pub struct Hooks<'a> {
    /// After every generation, with the checkpoint to save.
    pub generation: &'a mut dyn FnMut(&Progress, &Checkpoint) -> Result<()>,
    /// After each evaluation (from any worker thread).
    pub evaluation: &'a (dyn Fn() + Sync),
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// What one evaluation gives the search: the fitness (`None`: the candidate could not run),
/// what was measured, and `ok` or why not ([`Problem::evaluate`]).
pub type Outcome = (Option<f64>, Measured, String);

/// Evaluates a generation's new candidates, returning their outcomes in order.
pub type BatchEvaluator<'a> = dyn FnMut(&[Vec<f64>]) -> Result<Vec<Outcome>> + 'a;

/// Runs (or resumes) a search. `resume` must come from a search with the same fingerprint;
/// its generations done are not run again. A generation's new candidates are evaluated in
/// parallel on `settings.threads` worker threads.
pub fn run_search(
    problem: &Problem,
    settings: &SearchSettings,
    resume: Option<Checkpoint>,
    hooks: &mut Hooks<'_>,
) -> Result<Checkpoint> {
    settings.check()?;
    let threads = if settings.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        settings.threads
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| AppError::BadInput(format!("cannot start {threads} worker threads: {e}")))?;
    let each = hooks.evaluation;
    let mut in_pool = |batch: &[Vec<f64>]| -> Result<Vec<Outcome>> {
        Ok(pool.install(|| {
            batch
                .par_iter()
                .map(|v| {
                    let r = problem.evaluate(v);
                    each();
                    r
                })
                .collect()
        }))
    };
    run_search_with(problem, settings, resume, hooks.generation, &mut in_pool)
}

/// [`run_search`] with the evaluations done by `evaluate_batch`, which gets a generation's
/// new candidates (gene values, in gene order) and must return their outcomes in the same
/// order, each as [`Problem::evaluate`] gives it (a cluster's workers, e.g. Ray tasks). The
/// search itself — every random draw, the optimiser, the cache of evaluated candidates —
/// stays on the calling thread, so the same seed gives the same search whoever evaluates.
/// `settings.threads` is not used.
pub fn run_search_with(
    problem: &Problem,
    settings: &SearchSettings,
    resume: Option<Checkpoint>,
    on_generation: &mut dyn FnMut(&Progress, &Checkpoint) -> Result<()>,
    evaluate_batch: &mut BatchEvaluator<'_>,
) -> Result<Checkpoint> {
    problem.check()?;
    settings.check()?;
    let print = fingerprint(problem, settings);
    let n = problem.genes.len();
    let mut rng = ChaCha8Rng::seed_from_u64(settings.seed);
    let mut cp = match resume {
        Some(cp) => {
            if cp.format != CHECKPOINT_FORMAT {
                return Err(AppError::BadInput(format!(
                    "checkpoint format {} is not {CHECKPOINT_FORMAT}",
                    cp.format
                )));
            }
            if cp.problem != print {
                let differ: Vec<String> = match (&cp.problem, &print) {
                    (serde_json::Value::Object(a), serde_json::Value::Object(b)) => b
                        .iter()
                        .filter(|(k, v)| a.get(*k) != Some(*v))
                        .map(|(k, _)| k.clone())
                        .collect(),
                    _ => vec!["problem".into()],
                };
                return Err(AppError::BadInput(format!(
                    "the checkpoint is of a different search (differs in: {}); resume with the same settings or use another output folder",
                    differ.join(", ")
                )));
            }
            let pos: u128 = cp
                .rng_word_pos
                .parse()
                .map_err(|_| AppError::BadInput(format!("checkpoint rng_word_pos `{}`", cp.rng_word_pos)))?;
            rng.set_word_pos(pos);
            cp
        }
        None => Checkpoint {
            format: CHECKPOINT_FORMAT,
            problem: print,
            seed: settings.seed,
            rng_word_pos: "0".into(),
            state: match settings.method {
                Method::Ga(s) => State::Ga(Ga::new(s)),
                Method::Cmaes(s) => State::Cmaes(Cmaes::new(s, n)),
            },
            generations_done: 0,
            evaluations: Vec::new(),
            history: Vec::new(),
        },
    };
    let mut cache: HashMap<Vec<u64>, usize> = cp
        .evaluations
        .iter()
        .enumerate()
        .map(|(i, s)| (bits(&s.values), i))
        .collect();
    let total = settings.generations + 1;
    let started = Instant::now();
    let mut ran = 0usize;
    for generation in cp.generations_done..total {
        // Ask, on this thread only.
        let candidates: Vec<Vec<f64>> = match &mut cp.state {
            State::Ga(ga) => ga
                .ask(&problem.genes, &mut rng)
                .iter()
                .map(|lv| {
                    problem
                        .genes
                        .iter()
                        .zip(lv)
                        .map(|(g, k)| g.value_of_level(*k))
                        .collect()
                })
                .collect(),
            State::Cmaes(es) => es
                .ask(&mut rng)
                .iter()
                .map(|u| problem.genes.iter().zip(u).map(|(g, x)| g.value_at(*x)).collect())
                .collect(),
        };
        // The new candidates (first of equals only), evaluated in parallel, in order.
        let keys: Vec<Vec<u64>> = candidates.iter().map(|c| bits(c)).collect();
        let mut seen = std::collections::HashSet::new();
        let fresh: Vec<(&Vec<u64>, &Vec<f64>)> = keys
            .iter()
            .zip(&candidates)
            .filter(|(k, _)| !cache.contains_key(*k) && seen.insert(*k))
            .collect();
        let batch: Vec<Vec<f64>> = fresh.iter().map(|(_, v)| (*v).clone()).collect();
        let results = evaluate_batch(&batch)?;
        if results.len() != batch.len() {
            return Err(AppError::BadInput(format!(
                "the evaluator returned {} outcomes for {} candidates",
                results.len(),
                batch.len()
            )));
        }
        ran += results.len();
        for ((key, v), (fitness, measured, status)) in fresh.iter().zip(results) {
            let index = cp.evaluations.len();
            cache.insert((*key).clone(), index);
            cp.evaluations.push(Scored {
                index,
                generation,
                values: (*v).clone(),
                fitness,
                measured,
                status,
            });
        }
        let fitness: Vec<f64> = keys
            .iter()
            .map(|k| {
                cache
                    .get(k)
                    .map_or(f64::NEG_INFINITY, |&i| cp.evaluations[i].rank_value())
            })
            .collect();
        let mean_of = |f: &[f64]| {
            let ok: Vec<f64> = f.iter().copied().filter(|v| v.is_finite()).collect();
            (!ok.is_empty()).then(|| ok.iter().sum::<f64>() / ok.len() as f64)
        };
        let mean = match &mut cp.state {
            State::Ga(ga) => {
                ga.tell(&fitness);
                mean_of(&ga.fitness)
            }
            State::Cmaes(es) => {
                es.tell(&fitness);
                mean_of(&fitness)
            }
        };
        cp.generations_done = generation + 1;
        cp.rng_word_pos = rng.get_word_pos().to_string();
        let best = cp.best().and_then(|b| b.fitness);
        cp.history.push(GenerationStat {
            generation,
            evaluations: cp.evaluations.len(),
            best,
            mean,
        });
        let secs = started.elapsed().as_secs_f64();
        let progress = Progress {
            generation,
            total,
            best,
            evaluations: ran,
            evals_per_s: if secs > 0.0 { ran as f64 / secs } else { 0.0 },
        };
        on_generation(&progress, &cp)?;
    }
    Ok(cp)
}

/// The robots of a minimal-configuration search (thesis §2.6, "M = 1, 2, 3 …"): chains of
/// `family` (`pp` or `py`) from `from` to `to` modules; the 3-module pitch-yaw chain is the
/// PYP. A chain has at least 2 modules (record 0028).
pub fn minimal_robots(family: &str, from: usize, to: usize) -> Result<Vec<String>> {
    if !["pp", "py"].contains(&family) {
        return Err(AppError::BadInput(format!(
            "minimal-configuration family `{family}`: expected pp or py"
        )));
    }
    if from < 2 || to < from || to > 64 {
        return Err(AppError::BadInput(format!(
            "minimal-configuration modules {from} to {to}: need 2 ≤ from ≤ to ≤ 64 (a chain has at least 2 modules)"
        )));
    }
    Ok((from..=to)
        .map(|m| {
            if family == "py" && m == 3 {
                "pyp".to_string()
            } else {
                format!("{family}:{m}")
            }
        })
        .collect())
}

/// One gait a minimal configuration must perform: an objective and the least value its
/// search's best must reach. Written `OBJECTIVE>=VALUE` (`abs(heading)>=30`).
#[derive(Debug, Clone, PartialEq)]
pub struct Requirement {
    /// What is maximised.
    pub objective: Objective,
    /// The least best value that counts as "performs the gait".
    pub target: f64,
}

impl std::str::FromStr for Requirement {
    type Err = AppError;

    fn from_str(s: &str) -> Result<Requirement> {
        let (objective, target) = s.rsplit_once(">=").ok_or_else(|| {
            AppError::BadInput(format!(
                "requirement `{s}`: expected OBJECTIVE>=VALUE, e.g. abs(heading)>=30"
            ))
        })?;
        let objective: Objective = objective.trim().parse()?;
        let target: f64 = target
            .trim()
            .parse()
            .map_err(|_| AppError::BadInput(format!("requirement `{s}`: `{}` is not a number", target.trim())))?;
        Requirement::new(objective, target).map_err(|e| AppError::BadInput(format!("requirement `{s}`: {e}")))
    }
}

impl Requirement {
    /// A requirement, checked: a gait's objective (not the maze fitness) and a finite target.
    pub fn new(objective: Objective, target: f64) -> Result<Requirement> {
        if objective.is_maze() {
            return Err(AppError::BadInput(
                "the maze objective is a fitness, not a gait; search it without --minimal".into(),
            ));
        }
        if !target.is_finite() {
            return Err(AppError::BadInput(format!("the value {target} must be finite")));
        }
        Ok(Requirement { objective, target })
    }
}

impl std::fmt::Display for Requirement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}>={}", self.objective, self.target)
    }
}

/// How a minimal-configuration search runs one search: the best value a robot reaches on a
/// requirement's objective.
pub type SearchOne<'a, E> = dyn FnMut(&str, &Requirement) -> std::result::Result<Option<f64>, E> + 'a;

/// One search of a minimal-configuration run: a robot, a requirement and what it reached.
#[derive(Debug, Clone, PartialEq)]
pub struct MinimalTry {
    /// The chain searched.
    pub robot: String,
    /// Index of the requirement in the list given.
    pub requirement: usize,
    /// The search's best value (None: every candidate was refused).
    pub best: Option<f64>,
    /// Whether the best reached the requirement's target.
    pub met: bool,
}

/// The thesis's minimal-configuration search (§6.3.3): "start from the configuration of
/// M = 1 and then go increasing the number of modules … until the first configuration is
/// reached that is able to execute various gaits". Each robot in turn is searched once per
/// requirement (`search(robot, requirement)` returns the best value); the first robot that
/// meets every requirement is the minimal configuration. A robot's remaining requirements
/// are not searched once one fails. Returns the robot found (if any) and every search made.
pub fn minimal_configuration<E: From<AppError>>(
    robots: &[String],
    requirements: &[Requirement],
    search: &mut SearchOne<'_, E>,
) -> std::result::Result<(Option<String>, Vec<MinimalTry>), E> {
    if requirements.is_empty() {
        return Err(AppError::BadInput(
            "a minimal-configuration search needs at least one requirement (--target or --require)".into(),
        )
        .into());
    }
    let mut tries = Vec::new();
    for robot in robots {
        let mut all = true;
        for (i, req) in requirements.iter().enumerate() {
            let best = search(robot, req)?;
            let met = best.is_some_and(|b| b >= req.target);
            tries.push(MinimalTry {
                robot: robot.clone(),
                requirement: i,
                best,
                met,
            });
            if !met {
                all = false;
                break;
            }
        }
        if all {
            return Ok((Some(robot.clone()), tries));
        }
    }
    Ok((None, tries))
}
