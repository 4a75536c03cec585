//! What a search looks for: the genes (parameters with their bounds and resolution), the
//! objective, and one evaluation of a candidate in the simulator.

use std::fmt;

use modbot_core::{Scenario, Topology};
use modbot_gaits::GaitLibrary;
use modbot_gaits::params::ParamSpec;
use modbot_sim::maze::MazeRules;
use serde::{Deserialize, Serialize};

use crate::controller::ControllerSpec;
use crate::error::{AppError, Result};
use crate::evaluate::{EvalOptions, evaluate};
use crate::maze::evaluate_maze_stages;

/// Most genes a search takes.
pub const MAX_GENES: usize = 64;
/// Most values one gene may take (its range over its resolution).
pub const MAX_LEVELS: f64 = 1e9;

/// One searched parameter: its key, bounds and resolution (the GA's integer genome steps
/// through `min, min + step, …, max`; CMA-ES searches the interval).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gene {
    /// Canonical parameter key.
    pub key: String,
    /// Lowest value.
    pub min: f64,
    /// Highest value.
    pub max: f64,
    /// Resolution of the integer genome.
    pub step: f64,
}

impl Gene {
    /// A gene over a parameter's whole table range: 1 unit per step for angles (the thesis's
    /// integer genome in degrees), a thousandth of the range otherwise.
    pub fn from_spec(spec: &ParamSpec) -> Gene {
        let step = if spec.unit == "deg" {
            1.0
        } else {
            (spec.max - spec.min) / 1000.0
        };
        Gene {
            key: spec.key.to_string(),
            min: spec.min,
            max: spec.max,
            step,
        }
    }

    /// Checks the bounds against the parameter's table range and the resolution.
    pub fn check(&self, spec: &ParamSpec) -> Result<()> {
        let bad = |why: String| Err(AppError::BadInput(format!("gene `{}`: {why}", self.key)));
        if !(self.min.is_finite() && self.max.is_finite() && self.step.is_finite()) {
            return bad("bounds and step must be finite".into());
        }
        if self.min < spec.min || self.max > spec.max {
            return bad(format!(
                "[{}, {}] leaves the parameter's range [{}, {}]",
                self.min, self.max, spec.min, spec.max
            ));
        }
        if self.min > self.max {
            return bad(format!("min {} is above max {}", self.min, self.max));
        }
        if self.step <= 0.0 {
            return bad(format!("step {} must be positive", self.step));
        }
        if self.levels() as f64 >= MAX_LEVELS {
            return bad(format!("{} levels; at most {MAX_LEVELS}", self.levels()));
        }
        Ok(())
    }

    /// The highest integer level: the gene takes levels 0 ..= this.
    pub fn levels(&self) -> u64 {
        ((self.max - self.min) / self.step + 1e-9).floor().max(0.0) as u64
    }

    /// The value of integer level `k`.
    pub fn value_of_level(&self, k: u64) -> f64 {
        (self.min + k.min(self.levels()) as f64 * self.step).min(self.max)
    }

    /// The value at `u` ∈ [0, 1] of the interval (CMA-ES).
    pub fn value_at(&self, u: f64) -> f64 {
        self.min + u.clamp(0.0, 1.0) * (self.max - self.min)
    }
}

/// What a report is scored on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Metric {
    /// Step along the initial body axis, cm/cycle.
    StepX,
    /// Step across it (left positive), cm/cycle.
    StepY,
    /// Step length, cm/cycle.
    Step,
    /// Heading change, deg/cycle (anticlockwise positive).
    Heading,
    /// Roll, deg/cycle.
    Roll,
    /// Maze: the negated staged fitness of record 0027 (so higher is better).
    Maze,
}

impl Metric {
    const ALL: [(&'static str, Metric); 6] = [
        ("step_x", Metric::StepX),
        ("step_y", Metric::StepY),
        ("step", Metric::Step),
        ("heading", Metric::Heading),
        ("roll", Metric::Roll),
        ("maze", Metric::Maze),
    ];

    /// The metric's name.
    pub fn name(self) -> &'static str {
        Metric::ALL.iter().find(|(_, m)| *m == self).map_or("?", |(n, _)| n)
    }
}

/// One term of an objective: weight × metric (or its magnitude).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Term {
    /// Weight.
    pub weight: f64,
    /// The metric.
    pub metric: Metric,
    /// Score |metric| (either direction counts).
    pub magnitude: bool,
}

/// What the search maximises: a weighted sum of metrics, e.g. `step_y`,
/// `abs(heading)`, `-heading`, `0.5*step_x+0.1*abs(heading)`, or `maze` (alone).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Objective {
    /// The terms.
    pub terms: Vec<Term>,
}

impl std::str::FromStr for Objective {
    type Err = AppError;

    fn from_str(s: &str) -> Result<Objective> {
        let names: Vec<&str> = Metric::ALL.iter().map(|(n, _)| *n).collect();
        let bad = |why: String| {
            AppError::BadInput(format!(
                "objective `{s}`: {why} (a sum of [WEIGHT*]METRIC or [WEIGHT*]abs(METRIC), METRIC one of {})",
                names.join(", ")
            ))
        };
        let text: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        if text.is_empty() {
            return Err(bad("empty".into()));
        }
        // Split at '+' and at a '-' that starts a term (not one after '*' or 'e').
        let mut parts: Vec<String> = Vec::new();
        let mut cur = String::new();
        for (i, c) in text.char_indices() {
            let prev = text[..i].chars().last();
            let starts_term = matches!(c, '+' | '-') && i > 0 && !matches!(prev, Some('*' | 'e' | 'E' | '('));
            if starts_term {
                parts.push(std::mem::take(&mut cur));
            }
            if c != '+' || !starts_term {
                cur.push(c);
            }
        }
        parts.push(cur);
        let mut terms = Vec::new();
        for part in parts {
            let (weight, rest) = match part.split_once('*') {
                Some((w, r)) => (
                    w.parse::<f64>()
                        .ok()
                        .filter(|w| w.is_finite())
                        .ok_or_else(|| bad(format!("`{w}` is not a finite weight")))?,
                    r.to_string(),
                ),
                None => match part.strip_prefix('-') {
                    Some(r) => (-1.0, r.to_string()),
                    None => (1.0, part.clone()),
                },
            };
            let (name, magnitude) = match rest.strip_prefix("abs(").and_then(|r| r.strip_suffix(')')) {
                Some(inner) => (inner.to_string(), true),
                None => (rest.clone(), false),
            };
            let metric = Metric::ALL
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, m)| *m)
                .ok_or_else(|| bad(format!("unknown metric `{name}`")))?;
            terms.push(Term {
                weight,
                metric,
                magnitude,
            });
        }
        if terms.iter().any(|t| t.metric == Metric::Maze) && terms.len() > 1 {
            return Err(bad(
                "`maze` is scored by its own runs and cannot be summed with others".into()
            ));
        }
        Ok(Objective { terms })
    }
}

impl fmt::Display for Objective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, t) in self.terms.iter().enumerate() {
            if i > 0 {
                write!(f, "+")?;
            }
            if t.weight != 1.0 {
                write!(f, "{}*", t.weight)?;
            }
            if t.magnitude {
                write!(f, "abs({})", t.metric.name())?;
            } else {
                write!(f, "{}", t.metric.name())?;
            }
        }
        Ok(())
    }
}

impl Objective {
    /// True when the objective is the maze score.
    pub fn is_maze(&self) -> bool {
        self.terms.iter().any(|t| t.metric == Metric::Maze)
    }

    fn score(&self, m: &Measured) -> f64 {
        self.terms
            .iter()
            .map(|t| {
                let v = match t.metric {
                    Metric::StepX => m.step_x_cm,
                    Metric::StepY => m.step_y_cm,
                    Metric::Step => m.step_cm,
                    Metric::Heading => m.heading_deg,
                    Metric::Roll => m.roll_deg,
                    Metric::Maze => m.maze_score,
                };
                t.weight * if t.magnitude { v.abs() } else { v }
            })
            .sum()
    }
}

/// What one evaluation measured (per cycle; NaN where not measured).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// cm/cycle.
    #[serde(with = "crate::search::float::one")]
    pub step_x_cm: f64,
    /// cm/cycle.
    #[serde(with = "crate::search::float::one")]
    pub step_y_cm: f64,
    /// cm/cycle.
    #[serde(with = "crate::search::float::one")]
    pub step_cm: f64,
    /// deg/cycle.
    #[serde(with = "crate::search::float::one")]
    pub heading_deg: f64,
    /// deg/cycle.
    #[serde(with = "crate::search::float::one")]
    pub roll_deg: f64,
    /// −(staged maze fitness); NaN outside maze searches.
    #[serde(with = "crate::search::float::one")]
    pub maze_score: f64,
    /// Maze stages solved.
    pub stages_solved: usize,
}

impl Measured {
    const NONE: Measured = Measured {
        step_x_cm: f64::NAN,
        step_y_cm: f64::NAN,
        step_cm: f64::NAN,
        heading_deg: f64::NAN,
        roll_deg: f64::NAN,
        maze_score: f64::NAN,
        stages_solved: 0,
    };
}

/// One evaluated candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scored {
    /// Running number of the evaluation, from 0.
    pub index: usize,
    /// Generation it was made in (0 = the initial population).
    pub generation: usize,
    /// Gene values, in gene order.
    pub values: Vec<f64>,
    /// The objective, `None` when the candidate could not run (out of the gait's limits).
    pub fitness: Option<f64>,
    /// What was measured.
    pub measured: Measured,
    /// `ok`, or why the candidate could not run.
    pub status: String,
}

impl Scored {
    /// Fitness for ranking: a candidate that could not run ranks below every one that did.
    pub fn rank_value(&self) -> f64 {
        self.fitness.unwrap_or(f64::NEG_INFINITY)
    }
}

/// Everything one evaluation needs: the robot, the controller and its fixed parameters,
/// the genes, the objective, and where and how to run.
#[derive(Debug, Clone)]
pub struct Problem {
    /// The robot.
    pub robot: Topology,
    /// Gait, preset or `cpg`.
    pub gait: String,
    /// Parameters held fixed (canonical keys).
    pub fixed: Vec<(String, f64)>,
    /// The searched parameters.
    pub genes: Vec<Gene>,
    /// What is maximised.
    pub objective: Objective,
    /// World of the step metrics.
    pub world: Scenario,
    /// Mazes of the maze objective, in stage order.
    pub mazes: Vec<Scenario>,
    /// Maze rules.
    pub rules: MazeRules,
    /// Engine, protocol, gait library.
    pub options: EvalOptions,
}

/// The parameter table of a gait, preset or the CPG; for a wheel-foot robot, of its
/// modular controller (`trot`, `quadruped/trot`, …).
pub fn param_specs(library: &GaitLibrary, robot: &Topology, gait: &str) -> Result<Vec<ParamSpec>> {
    if let Some(kind) = crate::controller::modular_robot(robot) {
        let name = match gait.split_once('/') {
            Some((r, g)) if r == kind.name() => g,
            _ => gait,
        };
        let defs = modbot_gaits::modular::params_of(kind, name).ok_or_else(|| {
            AppError::BadInput(format!(
                "`{gait}` is not a controller of the {} (known: {})",
                kind.name(),
                kind.gaits().join(", ")
            ))
        })?;
        return Ok(defs.iter().map(modular_spec).collect());
    }
    if library.cpg(gait, &[]).is_some() {
        return Ok(modbot_gaits::cpg::schema().specs().to_vec());
    }
    let sel = library.lookup(gait)?;
    Ok(sel.def.schema().specs().to_vec())
}

/// A modular controller's parameter as a search sees it: a positive one from a thousandth
/// of its range; a one-of (direction) with no finite range, never a default gene.
fn modular_spec(d: &modbot_gaits::modular::ParamDef) -> ParamSpec {
    use modbot_gaits::modular::ParamKind;
    let min = match d.kind {
        ParamKind::Positive => d.max / 1000.0,
        _ => d.min,
    };
    ParamSpec {
        key: d.key,
        alias: "",
        unit: if d.key.ends_with("_deg") || d.doc.contains(", deg") {
            "deg"
        } else {
            ""
        },
        min,
        max: d.max,
        doc: d.doc,
        shape: false,
    }
}

/// The default genes of a gait: its own control parameters (not the shape alternatives, the
/// period, the direction, or any in `fixed`); for the CPG, amplitude, offset and the lag
/// (the repository's three searched values, seed-002 §8).
pub fn default_genes(
    library: &GaitLibrary,
    robot: &Topology,
    gait: &str,
    fixed: &[(String, f64)],
) -> Result<Vec<Gene>> {
    let specs = param_specs(library, robot, gait)?;
    let skip = |s: &ParamSpec| {
        fixed
            .iter()
            .any(|(k, _)| k == s.key || (k == s.alias && !s.alias.is_empty()))
    };
    let wanted: Vec<&ParamSpec> = if crate::controller::modular_robot(robot).is_some() {
        specs
            .iter()
            .filter(|s| s.min.is_finite() && s.max.is_finite() && !s.key.ends_with("_s") && !s.key.ends_with("_m"))
            .collect()
    } else if library.cpg(gait, &[]).is_some() {
        specs
            .iter()
            .filter(|s| ["amplitude", "offset", "phase_lag_deg"].contains(&s.key))
            .collect()
    } else {
        specs
            .iter()
            .filter(|s| !s.shape && s.key != "period_s" && s.key != "direction")
            .collect()
    };
    Ok(wanted.into_iter().filter(|s| !skip(s)).map(Gene::from_spec).collect())
}

/// Resolves `key` (canonical or alias) in the gait's table.
pub fn lookup_spec(library: &GaitLibrary, robot: &Topology, gait: &str, key: &str) -> Result<ParamSpec> {
    let specs = param_specs(library, robot, gait)?;
    specs
        .iter()
        .find(|s| s.key == key || (!s.alias.is_empty() && s.alias == key))
        .copied()
        .ok_or_else(|| {
            let keys: Vec<&str> = specs.iter().map(|s| s.key).collect();
            AppError::BadInput(format!(
                "`{key}` is not a parameter of `{gait}` (known: {})",
                keys.join(", ")
            ))
        })
}

impl Problem {
    /// Checks the problem before any run: genes known, in range, not repeated and not fixed;
    /// the objective's worlds present.
    pub fn check(&self) -> Result<()> {
        if self.genes.is_empty() {
            return Err(AppError::BadInput("a search needs at least one gene".into()));
        }
        if self.genes.len() > MAX_GENES {
            return Err(AppError::BadInput(format!(
                "{} genes; at most {MAX_GENES}",
                self.genes.len()
            )));
        }
        for (i, g) in self.genes.iter().enumerate() {
            let spec = lookup_spec(&self.options.library, &self.robot, &self.gait, &g.key)?;
            if spec.key != g.key {
                return Err(AppError::BadInput(format!(
                    "gene `{}`: use the canonical key `{}`",
                    g.key, spec.key
                )));
            }
            g.check(&spec)?;
            if self.genes[..i].iter().any(|o| o.key == g.key) {
                return Err(AppError::BadInput(format!("gene `{}` is given twice", g.key)));
            }
            if self.fixed.iter().any(|(k, _)| *k == g.key) {
                return Err(AppError::BadInput(format!(
                    "`{}` is both a gene and fixed (--set)",
                    g.key
                )));
            }
        }
        if self.objective.is_maze() && self.mazes.is_empty() {
            return Err(AppError::BadInput("the maze objective needs at least one maze".into()));
        }
        Ok(())
    }

    /// The controller a candidate names: the fixed parameters, then the genes.
    pub fn controller(&self, values: &[f64]) -> ControllerSpec {
        let mut params = self.fixed.clone();
        params.extend(self.genes.iter().zip(values).map(|(g, v)| (g.key.clone(), *v)));
        ControllerSpec::Gait {
            name: self.gait.clone(),
            params,
        }
    }

    /// Runs one candidate and scores it. A candidate the gait refuses (e.g. |O_h| + A_h > 90)
    /// or that the simulator cannot run is a result of the search (fitness `None`, the
    /// reason in `status`), not a failure of it.
    pub fn evaluate(&self, values: &[f64]) -> (Option<f64>, Measured, String) {
        let spec = self.controller(values);
        let measured = if self.objective.is_maze() {
            evaluate_maze_stages(
                &self.robot,
                &spec,
                &self.mazes,
                0,
                &self.options,
                self.rules,
                &mut |_, _, _| {},
            )
            .map(|(staged, stages)| Measured {
                maze_score: -staged,
                stages_solved: stages.iter().filter(|s| s.solved).count(),
                ..Measured::NONE
            })
        } else {
            evaluate(&self.robot, &spec, &self.world, 0, &self.options, &mut |_, _| {}).map(|e| {
                let r = e.report;
                Measured {
                    step_x_cm: r.step_x_m * 100.0,
                    step_y_cm: r.step_y_m * 100.0,
                    step_cm: r.step_m * 100.0,
                    heading_deg: r.heading_change_deg,
                    roll_deg: r.roll_per_cycle_deg,
                    ..Measured::NONE
                }
            })
        };
        match measured {
            Ok(m) => {
                let f = self.objective.score(&m);
                if f.is_finite() {
                    (Some(f), m, "ok".into())
                } else {
                    (
                        None,
                        m,
                        "the objective is not finite (the run did not measure it)".into(),
                    )
                }
            }
            Err(e) => (None, Measured::NONE, e.to_string().replace(['\n', ','], ";")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objectives_parse_and_refuse_by_name() {
        let o: Objective = "0.5*step_x + 0.1*abs(heading) - roll"
            .parse()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(o.terms.len(), 3);
        assert_eq!(o.terms[0].weight, 0.5);
        assert!(o.terms[1].magnitude && o.terms[1].metric == Metric::Heading);
        assert_eq!(o.terms[2].weight, -1.0);
        assert_eq!(o.to_string(), "0.5*step_x+0.1*abs(heading)+-1*roll");
        let o: Objective = "-1e-2*step_y".parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(o.terms[0].weight, -0.01);
        for bad in ["", "speed", "x*step", "inf*step_x", "maze+step_x", "abs(maze"] {
            let e = bad
                .parse::<Objective>()
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.contains(&format!("`{bad}`")), "{bad}: {e}");
        }
        let m = Measured {
            step_x_cm: 2.0,
            heading_deg: -10.0,
            roll_deg: 1.0,
            ..Measured::NONE
        };
        let o: Objective = "0.5*step_x+0.1*abs(heading)-roll"
            .parse()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!((o.score(&m) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn genes_step_through_their_range() {
        let g = Gene {
            key: "amplitude_v_deg".into(),
            min: 0.0,
            max: 90.0,
            step: 1.0,
        };
        assert_eq!(g.levels(), 90);
        assert_eq!(g.value_of_level(45), 45.0);
        assert_eq!(g.value_of_level(1000), 90.0);
        assert_eq!(g.value_at(0.5), 45.0);
        let spec = modbot_gaits::params::A_V;
        assert!(g.check(&spec).is_ok());
        for (min, max, step) in [
            (-1.0, 90.0, 1.0),
            (10.0, 5.0, 1.0),
            (0.0, 90.0, 0.0),
            (0.0, f64::NAN, 1.0),
        ] {
            let b = Gene {
                min,
                max,
                step,
                ..g.clone()
            };
            let e = b.check(&spec).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains("amplitude_v_deg"), "{e}");
        }
    }
}
