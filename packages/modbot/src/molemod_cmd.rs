//! `modbot molemod`: plan MoleMOD reconfigurations, and benchmark the planner.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use modbot_planner::molemod::grid::Cell;
use modbot_planner::molemod::{
    Action, FAMILIES, HeuristicKind, MoleError, Options, Plan, Task, check_plan, family, plan,
};
use serde_json::json;

use clap::Subcommand;

use crate::common::{BadInput, emit};

#[derive(Debug, clap::Args)]
pub struct MolemodArgs {
    #[command(subcommand)]
    pub what: MolemodWhat,
}

#[derive(Debug, Subcommand)]
pub enum MolemodWhat {
    /// Plan a task file (initial and goal grids, options) and print the frames.
    Plan {
        /// Task YAML.
        task: PathBuf,
        /// Print one JSON object (cost, actions, states, expansions, micros).
        #[arg(long)]
        json: bool,
        /// Write an SVG storyboard.
        #[arg(long, value_name = "FILE")]
        svg: Option<PathBuf>,
        /// Time limit, ms (Timeout beyond).
        #[arg(long, default_value_t = 60_000)]
        time_limit_ms: u64,
        /// Heuristic: manhattan, source, strong or zero (default: the task's).
        #[arg(long)]
        heuristic: Option<String>,
        /// Weight of h (≥ 1; > 1 is bounded-suboptimal).
        #[arg(long, value_parser = crate::common::finite)]
        weight: Option<f64>,
    },
    /// Benchmark task families (row → L, column, stairs) on 5 × 5 up to 8 × 8, 1 to 6 robots.
    Bench {
        /// Time limit per task, ms.
        #[arg(long, default_value_t = 10_000)]
        time_limit_ms: u64,
        /// Largest grid side (5 to 8).
        #[arg(long, default_value_t = 6)]
        max_size: usize,
        /// No progress lines.
        #[arg(long, short)]
        quiet: bool,
    },
}

pub fn run(args: &MolemodArgs) -> Result<()> {
    match &args.what {
        MolemodWhat::Plan {
            task,
            json: as_json,
            svg,
            time_limit_ms,
            heuristic,
            weight,
        } => {
            let mut t = Task::load(task).map_err(|e| BadInput(e.to_string()))?;
            if let Some(h) = heuristic {
                t.options.heuristic = parse_heuristic(h)?;
            }
            if let Some(w) = weight {
                t.options.weight = *w;
            }
            t.validate().map_err(|e| BadInput(e.to_string()))?;
            let deadline = Instant::now() + Duration::from_millis(*time_limit_ms);
            let p = plan(&t, Some(deadline), &|| false)?;
            check_plan(&t, &p).context("the plan does not replay")?;
            if let Some(path) = svg {
                std::fs::write(path, storyboard(&p)).with_context(|| format!("writing {}", path.display()))?;
                eprintln!("wrote {}", path.display());
            }
            if *as_json {
                let actions: Vec<Vec<String>> = p
                    .steps
                    .iter()
                    .map(|s| s.actions.iter().map(|a| a.to_string()).collect())
                    .collect();
                let states: Vec<String> = p.states.iter().map(|s| s.to_string()).collect();
                let doc = json!({
                    "cost": p.cost,
                    "actions": actions,
                    "states": states,
                    "expansions": p.stats.expansions,
                    "generated": p.stats.generated,
                    "pruned": p.stats.pruned,
                    "reopened": p.stats.reopened,
                    "micros": p.stats.micros,
                });
                emit(serde_json::to_string_pretty(&doc)? + "\n")
            } else {
                emit(frames(&p))
            }
        }
        MolemodWhat::Bench {
            time_limit_ms,
            max_size,
            quiet,
        } => bench(*time_limit_ms, *max_size, *quiet),
    }
}

fn parse_heuristic(h: &str) -> Result<HeuristicKind> {
    Ok(match h {
        "manhattan" => HeuristicKind::Manhattan,
        "source" => HeuristicKind::Source,
        "strong" => HeuristicKind::Strong,
        "zero" => HeuristicKind::Zero,
        other => {
            return Err(BadInput(format!(
                "--heuristic {other}: expected manhattan, source, strong or zero"
            ))
            .into());
        }
    })
}

fn frames(p: &Plan) -> String {
    let mut out = format!(
        "cost {}, {} joint steps, {} actions, {} expansions, {} µs\n\nstate 0\n{}",
        p.cost,
        p.steps.len(),
        p.action_count(),
        p.stats.expansions,
        p.stats.micros,
        p.states[0]
    );
    for (k, step) in p.steps.iter().enumerate() {
        let acts: Vec<String> = step.actions.iter().map(|a| a.to_string()).collect();
        let _ = write!(out, "\nstep {}: {}\n{}", k + 1, acts.join(" + "), p.states[k + 1]);
    }
    out
}

/// An SVG storyboard: one frame per state, modules grey, robots orange; under each frame
/// after the first, the actions of the step that led to it.
fn storyboard(p: &Plan) -> String {
    let s0 = &p.states[0];
    let cell = 24.0;
    let (w, h) = (s0.cols() as f64 * cell, s0.rows() as f64 * cell);
    let gap = 16.0;
    // A row: the frames' titles, the frames, two lines of actions (10 px text), a gap.
    let (line, row_h) = (11.0, h + gap + 18.0 + 24.0);
    let per_row = 6usize;
    let n = p.states.len();
    let rows = n.div_ceil(per_row);
    let width = per_row.min(n) as f64 * (w + gap) + gap;
    let height = rows as f64 * row_h + gap;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    for (k, s) in p.states.iter().enumerate() {
        let x0 = gap + (k % per_row) as f64 * (w + gap);
        let y0 = gap + (k / per_row) as f64 * row_h + 14.0;
        let _ = writeln!(
            svg,
            "<text x=\"{x0}\" y=\"{}\">{}</text>",
            y0 - 4.0,
            if k == 0 {
                "start".to_string()
            } else {
                format!("step {k}")
            }
        );
        let _ = writeln!(
            svg,
            "<rect x=\"{x0}\" y=\"{y0}\" width=\"{w}\" height=\"{h}\" fill=\"none\" stroke=\"#999\"/>"
        );
        if let Some(step) = k.checked_sub(1).and_then(|i| p.steps.get(i)) {
            // Squeezed to the frame and its gap where a rough width estimate says it is wider.
            let room = w + gap - 4.0;
            for (i, text) in action_lines(&step.actions).iter().enumerate() {
                let fit = if text.chars().count() as f64 * 6.2 > room {
                    format!(" textLength=\"{room}\" lengthAdjust=\"spacingAndGlyphs\"")
                } else {
                    String::new()
                };
                let _ = writeln!(
                    svg,
                    "<text x=\"{x0}\" y=\"{}\" font-size=\"10\" fill=\"#444\"{fit}>{}</text>",
                    y0 + h + (i + 1) as f64 * line,
                    xml_escape(text)
                );
            }
        }
        for i in 0..s.rows() * s.cols() {
            let (r, c) = s.pos(i);
            let (x, y) = (x0 + c as f64 * cell, y0 + r as f64 * cell);
            match s.cell(i) {
                Cell::Empty => {}
                Cell::Module | Cell::Robot => {
                    let _ = writeln!(
                        svg,
                        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#bbb\" stroke=\"#555\"/>",
                        x + 1.0,
                        y + 1.0,
                        cell - 2.0,
                        cell - 2.0
                    );
                    if s.cell(i) == Cell::Robot {
                        let _ = writeln!(
                            svg,
                            "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"#e67e22\"/>",
                            x + cell / 2.0,
                            y + cell / 2.0,
                            cell / 4.0
                        );
                    }
                }
            }
        }
    }
    svg.push_str("</svg>\n");
    svg
}

/// A step's actions as at most two lines, one each, the second noting any more.
fn action_lines(actions: &[Action]) -> Vec<String> {
    let more = actions.len().saturating_sub(2);
    actions
        .iter()
        .take(2)
        .enumerate()
        .map(|(i, a)| {
            if i == 1 && more > 0 {
                format!("{a} (+{more} more)")
            } else {
                a.to_string()
            }
        })
        .collect()
}

/// `text` escaped for XML character data and attribute values.
fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn bench(time_limit_ms: u64, max_size: usize, quiet: bool) -> Result<()> {
    let mut out = String::from("family,size,robots,heuristic,result,cost,expansions,micros\n");
    let sizes = 5..=max_size.clamp(5, 8);
    let total: usize = sizes.clone().map(|size| FAMILIES.len() * 6.min(size) * 2).sum();
    let mut steps = crate::common::Steps::new("tasks", total, quiet);
    for size in sizes {
        for fam in FAMILIES {
            for robots in 1..=6.min(size) {
                for h in [HeuristicKind::Source, HeuristicKind::Strong] {
                    let (initial, goal) = family(fam, size, robots)?;
                    let options = Options {
                        heuristic: h,
                        ..Options::default()
                    };
                    let task = Task::new(initial, goal, options)?;
                    let deadline = Instant::now() + Duration::from_millis(time_limit_ms);
                    let started = Instant::now();
                    let hname = if h == HeuristicKind::Source { "source" } else { "strong" };
                    let result = plan(&task, Some(deadline), &|| false);
                    steps.step(&format!(
                        "{fam} {size}×{size}, {robots} robot(s), {hname} heuristic: {}",
                        match &result {
                            Ok(p) => format!("cost {}", p.cost),
                            Err(MoleError::Timeout { .. }) => "timeout".into(),
                            Err(MoleError::NoPath { .. }) => "no path".into(),
                            Err(e) => e.to_string(),
                        }
                    ));
                    match result {
                        Ok(p) => {
                            check_plan(&task, &p)?;
                            let _ = writeln!(
                                out,
                                "{fam},{size},{robots},{hname},ok,{},{},{}",
                                p.cost, p.stats.expansions, p.stats.micros
                            );
                        }
                        Err(MoleError::Timeout { expansions, .. }) => {
                            let _ = writeln!(
                                out,
                                "{fam},{size},{robots},{hname},timeout,nan,{expansions},{}",
                                started.elapsed().as_micros()
                            );
                        }
                        Err(MoleError::NoPath { expansions }) => {
                            let _ = writeln!(
                                out,
                                "{fam},{size},{robots},{hname},no_path,nan,{expansions},{}",
                                started.elapsed().as_micros()
                            );
                        }
                        Err(e) => return Err(e.into()),
                    }
                }
            }
        }
    }
    emit(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use modbot_planner::molemod::GridState;

    #[test]
    fn the_storyboard_labels_each_step_with_its_actions() {
        let grid = |text: &str| GridState::parse(text, "grid").unwrap();
        let options = Options {
            heuristic: HeuristicKind::Manhattan,
            ..Options::default()
        };
        let task = Task::new(
            grid("0 0 0 0 0\n0 0 0 0 0\n0 0 0 0 0\n0 0 0 0 0\n2 1 1 1 1\n"),
            grid("0 0 0 0 0\n0 0 0 0 0\n0 1 0 0 0\n0 1 0 0 0\n0 1 1 1 0\n"),
            options,
        )
        .unwrap();
        let p = plan(&task, None, &|| false).unwrap();
        let svg = storyboard(&p);
        assert!(svg.contains(">start</text>") && svg.contains(&format!(">step {}</text>", p.steps.len())));
        for step in &p.steps {
            let first = xml_escape(&step.actions[0].to_string());
            assert!(
                svg.contains(&format!(">{first}</text>")),
                "no label `{first}` in\n{svg}"
            );
        }
        assert_eq!(xml_escape("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;");
    }
}
