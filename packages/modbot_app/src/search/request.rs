//! One search as data, and its output folder: what `modbot search` and the Python package's
//! `python -m modbot.search` both run and write, and what a cluster's worker rebuilds its
//! [`Problem`] from (decision record 0039).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use modbot_core::Topology;
use modbot_gaits::GaitLibrary;
use modbot_sim::maze::MazeRules;
use modbot_sim::{Engine, RunPlan};
use serde::{Deserialize, Serialize};

use super::{
    Checkpoint, CmaesSettings, GaSettings, Gene, Method, Objective, Problem, SearchSettings, default_genes, lookup_spec,
};
use crate::error::{AppError, Result};
use crate::evaluate::EvalOptions;
use crate::load::{load_catalog, load_gaits, load_maze, load_robot, load_world_for};

/// A search's inputs, as the command line gives them (`modbot search --help` explains each).
/// Files are paths as the searching process sees them; a cluster's workers read them at the
/// same paths.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchRequest {
    /// A preset (pp:M, py:M, pyp) or a robot file.
    pub robot: String,
    /// Gait, preset or `cpg` whose parameters are searched.
    pub gait: String,
    /// What is maximised ([`Objective`]'s syntax).
    pub objective: String,
    /// `ga` or `cmaes`.
    pub method: String,
    /// Population (GA: 100; CMA-ES: λ = 4 + ⌊3 ln n⌋).
    pub population: Option<usize>,
    /// Generations after the initial population.
    pub generations: usize,
    /// Seed of every random draw.
    pub seed: u64,
    /// Worker threads of an in-process search (0: one per core).
    pub threads: usize,
    /// Searched parameters: `KEY`, `KEY=MIN:MAX` or `KEY=MIN:MAX:STEP` (none: the gait's own).
    pub genes: Vec<String>,
    /// Fixed parameters, in the order given.
    pub set: Vec<(String, f64)>,
    /// Cycles measured per evaluation.
    pub cycles: usize,
    /// Warm-up cycles per evaluation.
    pub warmup: usize,
    /// World of the step metrics (scenario .yaml or generated .sdf; none: flat ground).
    pub world: Option<PathBuf>,
    /// Mazes of the maze objective, in stage order.
    pub maze: Vec<String>,
    /// The maze rules' maxTime, s.
    pub max_time: f64,
    /// A robot not in the maze after this long is stopped, s.
    pub enter_within: f64,
    /// `native` or `rapier`.
    pub engine: String,
    /// Physics step, ms (none: the world's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_ms: Option<f64>,
    /// Solver iterations per physics step (none: the engine's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub solver_iterations: Option<usize>,
    /// Gauss–Seidel sweeps per solver iteration (none: the engine's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pgs_iterations: Option<usize>,
    /// Module catalog (none: the shipped one).
    pub modules: Option<PathBuf>,
    /// Gait file merged over the shipped one.
    pub gaits: Option<PathBuf>,
}

impl Default for SearchRequest {
    fn default() -> Self {
        SearchRequest {
            robot: "pyp".into(),
            gait: "pitch_yaw".into(),
            objective: "step_x".into(),
            method: "ga".into(),
            population: None,
            generations: 100,
            seed: 1,
            threads: 0,
            genes: Vec::new(),
            set: Vec::new(),
            cycles: 3,
            warmup: 2,
            world: None,
            maze: vec!["maze_sls".into()],
            max_time: 40.0,
            enter_within: 10.0,
            engine: "native".into(),
            step_ms: None,
            solver_iterations: None,
            pgs_iterations: None,
            modules: None,
            gaits: None,
        }
    }
}

/// `KEY`, `KEY=MIN:MAX` or `KEY=MIN:MAX:STEP` against the gait's table.
pub fn parse_gene(text: &str, library: &GaitLibrary, robot: &Topology, gait: &str) -> Result<Gene> {
    let bad = || AppError::BadInput(format!("gene `{text}`: expected KEY, KEY=MIN:MAX or KEY=MIN:MAX:STEP"));
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
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| bad())?;
        match parts[..] {
            [min, max] => (gene.min, gene.max) = (min, max),
            [min, max, step] => (gene.min, gene.max, gene.step) = (min, max, step),
            _ => return Err(bad()),
        }
    }
    gene.check(&spec)?;
    Ok(gene)
}

/// A robot or gait name as part of a folder name: `pp:8` → `pp_8`.
pub fn folder_slug(name: &str) -> String {
    name.replace([':', '/', '.'], "_")
}

impl SearchRequest {
    /// The output folder when none is given: `runs/search_<robot>_<gait>`.
    pub fn default_folder(&self) -> PathBuf {
        PathBuf::from(format!(
            "runs/search_{}_{}",
            folder_slug(&self.robot),
            folder_slug(&self.gait)
        ))
    }

    /// The request from JSON, unknown keys refused by name.
    pub fn from_json(text: &str) -> Result<SearchRequest> {
        serde_json::from_str(text).map_err(|e| AppError::BadInput(format!("search request: {e}")))
    }

    /// The request as JSON.
    pub fn to_json(&self) -> String {
        // A struct of strings, numbers and paths always serialises.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The optimiser, generations, seed and threads, checked.
    pub fn settings(&self) -> Result<SearchSettings> {
        if self.cycles == 0 {
            return Err(AppError::BadInput("cycles must be at least 1".into()));
        }
        let method = match self.method.as_str() {
            "cmaes" => Method::Cmaes(CmaesSettings {
                population: self.population,
                ..CmaesSettings::default()
            }),
            "ga" => Method::Ga(GaSettings {
                population: self.population.unwrap_or(100),
                ..GaSettings::default()
            }),
            other => return Err(AppError::BadInput(format!("method `{other}`: expected ga or cmaes"))),
        };
        let settings = SearchSettings {
            method,
            generations: self.generations,
            seed: self.seed,
            threads: self.threads,
        };
        settings.check()?;
        Ok(settings)
    }

    /// The maze rules, each time checked and named.
    pub fn rules(&self) -> Result<MazeRules> {
        MazeRules::checked(self.max_time, self.enter_within, ["max_time", "enter_within"]).map_err(AppError::BadInput)
    }

    /// The gait library the request names.
    pub fn library(&self) -> Result<GaitLibrary> {
        load_gaits(self.gaits.as_deref())
    }

    /// The problem: robot, genes (the gait's own when none are given), fixed parameters,
    /// objective, world or mazes, engine and protocol; checked.
    pub fn problem(&self) -> Result<Problem> {
        for (k, v) in &self.set {
            if !v.is_finite() {
                return Err(AppError::BadInput(format!("set {k}={v}: expected a finite number")));
            }
        }
        let objective: Objective = self.objective.parse()?;
        let rules = self.rules()?;
        let engine: Engine = self
            .engine
            .parse()
            .map_err(|e: String| AppError::BadInput(format!("engine: {e}")))?;
        let min_ms = modbot_core::scenario::MIN_PHYSICS_STEP_S * 1000.0;
        if let Some(ms) = self.step_ms
            && !(ms.is_finite() && (min_ms..=20.0).contains(&ms))
        {
            return Err(AppError::BadInput(format!("step_ms {ms}: expected {min_ms} to 20 ms")));
        }
        for (key, n) in [
            ("solver_iterations", self.solver_iterations),
            ("pgs_iterations", self.pgs_iterations),
        ] {
            if let Some(n) = n
                && !(1..=1000).contains(&n)
            {
                return Err(AppError::BadInput(format!("{key} {n}: expected 1 to 1000")));
            }
        }
        let library = self.library()?;
        let catalog = load_catalog(self.modules.as_deref())?;
        let robot = load_robot(&self.robot, &catalog)?;
        let world = load_world_for(self.world.as_deref(), &robot)?;
        let mazes = if objective.is_maze() {
            self.maze.iter().map(|m| load_maze(m)).collect::<Result<Vec<_>>>()?
        } else {
            Vec::new()
        };
        let genes = if self.genes.is_empty() {
            default_genes(&library, &robot, &self.gait, &self.set)?
        } else {
            self.genes
                .iter()
                .map(|g| parse_gene(g, &library, &robot, &self.gait))
                .collect::<Result<Vec<_>>>()?
        };
        let mut fixed = Vec::new();
        for (k, v) in &self.set {
            fixed.push((lookup_spec(&library, &robot, &self.gait, k)?.key.to_string(), *v));
        }
        let problem = Problem {
            robot,
            gait: self.gait.clone(),
            fixed,
            genes,
            objective,
            world,
            mazes,
            rules,
            options: EvalOptions {
                library,
                engine,
                step_s: self.step_ms.map(|ms| ms / 1000.0),
                solver_iterations: self.solver_iterations,
                pgs_iterations: self.pgs_iterations,
                plan: RunPlan {
                    warmup_cycles: self.warmup,
                    cycles: self.cycles,
                    ..RunPlan::default()
                },
            },
        };
        problem.check()?;
        Ok(problem)
    }
}

fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let failed = |e: std::io::Error| AppError::Write {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).map_err(failed)?;
    std::fs::rename(&tmp, path).map_err(failed)
}

/// Every evaluation as CSV: index, generation, the genes, fitness, what was measured, status.
pub fn evaluations_csv(problem: &Problem, cp: &Checkpoint) -> String {
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

/// The checkpoint of a search's folder, if there is one; refused when there is one and
/// `resume` is false (a search is never overwritten), and when there is none and
/// `must_resume` is true.
pub fn open_folder(dir: &Path, resume: bool, must_resume: bool) -> Result<Option<Checkpoint>> {
    let cp_path = dir.join("checkpoint.json");
    if must_resume && !cp_path.exists() {
        return Err(AppError::BadInput(format!(
            "--resume: {} holds no search to continue (no checkpoint.json); leave out --resume to start one",
            cp_path.display()
        )));
    }
    std::fs::create_dir_all(dir).map_err(|e| AppError::Write {
        path: dir.to_path_buf(),
        message: e.to_string(),
    })?;
    if !cp_path.exists() {
        return Ok(None);
    }
    if !resume {
        return Err(AppError::BadInput(format!(
            "{} holds a search already: pass --resume to continue it, or choose another --out",
            dir.display()
        )));
    }
    let text =
        std::fs::read_to_string(&cp_path).map_err(|e| AppError::BadInput(format!("{}: {e}", cp_path.display())))?;
    let cp: Checkpoint = serde_json::from_str(&text)
        .map_err(|e| AppError::BadInput(format!("{}: not a search checkpoint: {e}", cp_path.display())))?;
    Ok(Some(cp))
}

/// Saves a generation: `checkpoint.json` and `evaluations.csv`, each replaced atomically.
pub fn save_generation(dir: &Path, problem: &Problem, cp: &Checkpoint) -> Result<()> {
    let text = serde_json::to_string(cp).map_err(|e| AppError::BadInput(e.to_string()))?;
    write_atomic(&dir.join("checkpoint.json"), &text)?;
    write_atomic(&dir.join("evaluations.csv"), &evaluations_csv(problem, cp))
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

/// Writes a finished search's results into `dir`: the best as a gait file (`best.yaml`, or
/// `best.txt` with the `modbot run` command for a wheel-foot controller) and
/// `summary.json`. `robot_name` is the robot as the user named it; `wall_s` the wall time of
/// this process's part.
pub fn write_results(
    dir: &Path,
    robot_name: &str,
    problem: &Problem,
    settings: &SearchSettings,
    cp: &Checkpoint,
    wall_s: f64,
) -> Result<()> {
    let library = &problem.options.library;
    let gait_name = problem.gait.as_str();
    let best = cp.best();
    let (gait, mut params) = underlying(library, &problem.robot, gait_name);
    for (k, v) in &problem.fixed {
        params.insert(k.clone(), *v);
    }
    // The gait file's defaults too, so the preset does not depend on the gait file it ran with.
    let modular = crate::controller::modular_robot(&problem.robot).is_some();
    if !modular {
        if let Ok(specs) = super::param_specs(library, &problem.robot, gait_name) {
            for s in specs.iter().filter(|s| !s.shape) {
                let default = if gait == modbot_gaits::cpg::CPG {
                    library.cpg_default_of(s.key)
                } else {
                    library.default_of(&gait, s.key)
                };
                if let Some(d) = default {
                    params.entry(s.key.to_string()).or_insert(d);
                }
            }
        }
    }
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| AppError::Write {
            path,
            message: e.to_string(),
        })
    };
    if let Some(b) = best {
        for (g, v) in problem.genes.iter().zip(&b.values) {
            params.insert(g.key.clone(), *v);
        }
        if modular {
            // A wheel-foot controller takes its parameters on the command line, not from
            // a gait file's presets.
            let sets: Vec<String> = params.iter().map(|(k, v)| format!("--set {k}={v}")).collect();
            let cmd = format!(
                "modbot run --robot {robot_name} --gait {gait_name} {} --warmup {} --cycles {}\n",
                sets.join(" "),
                problem.options.plan.warmup_cycles,
                problem.options.plan.cycles
            );
            write("best.txt", &cmd)?;
        } else {
            let mut text = format!(
                "# modbot search: {gait_name} on {robot_name}, objective {} ({}, seed {}, {} evaluations)\n",
                problem.objective,
                settings.method.name(),
                settings.seed,
                cp.evaluations.len()
            );
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
            write("best.yaml", &text)?;
        }
    }
    let summary = serde_json::json!({
        "robot": robot_name,
        "gait": gait_name,
        "objective": problem.objective.to_string(),
        "method": settings.method,
        "generations": cp.generations_done.saturating_sub(1),
        "seed": settings.seed,
        "evaluations": cp.evaluations.len(),
        "wall_s_this_run": wall_s,
        "genes": problem.genes,
        "fixed": problem.fixed,
        "best": best.map(|b| serde_json::json!({
            "fitness": b.fitness,
            "values": problem.genes.iter().zip(&b.values).map(|(g, v)| (g.key.clone(), *v)).collect::<BTreeMap<_, _>>(),
            "measured": b.measured,
            "evaluation": b.index,
            "generation": b.generation,
        })),
        "history": cp.history,
    });
    let text = serde_json::to_string_pretty(&summary).map_err(|e| AppError::BadInput(e.to_string()))?;
    write("summary.json", &(text + "\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_refuses_unknown_keys_and_bad_values_by_name() {
        let e = SearchRequest::from_json(r#"{"robot": "pyp", "generatons": 3}"#)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("generatons"), "{e}");
        let r = SearchRequest {
            method: "pso".into(),
            ..SearchRequest::default()
        };
        assert!(r.settings().is_err_and(|e| e.to_string().contains("`pso`")));
        let r = SearchRequest {
            cycles: 0,
            ..SearchRequest::default()
        };
        assert!(r.settings().is_err_and(|e| e.to_string().contains("cycles")));
        let r = SearchRequest {
            max_time: f64::NAN,
            ..SearchRequest::default()
        };
        assert!(r.rules().is_err_and(|e| e.to_string().contains("max_time")));
        let r = SearchRequest {
            set: vec![("A".into(), f64::INFINITY)],
            ..SearchRequest::default()
        };
        assert!(r.problem().is_err_and(|e| e.to_string().contains("set A")));
        let r = SearchRequest {
            genes: vec!["amplitude_v_deg=1:x".into()],
            ..SearchRequest::default()
        };
        assert!(
            r.problem()
                .is_err_and(|e| e.to_string().contains("gene `amplitude_v_deg=1:x`")),
            "{:?}",
            r.problem().err()
        );
        let back = SearchRequest::from_json(&SearchRequest::default().to_json()).ok();
        assert_eq!(back, Some(SearchRequest::default()));
    }
}
