//! A MoleMOD reconfiguration planned and replayed: robots inside passive building modules
//! rebuild a structure by moving modules.
//!
//! `cargo run -p modbot --example molemod [TASK.yaml]`
//!
//! Plans `config/molemod/row_to_l.yaml` by default, the worked example of Brejchová (2018):
//! five modules in a row with one robot become an L (optimal cost 11, 8 actions). The plan is
//! checked by replaying it (`check_plan`), then printed action by action with the states
//! before and after, as `modbot molemod plan` prints its frames.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use modbot_planner::molemod::{Task, check_plan, plan};

/// The task planned when no argument names another.
const TASK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../config/molemod/row_to_l.yaml");

fn main() -> Result<()> {
    let file = std::env::args().nth(1).unwrap_or_else(|| TASK.to_string());
    let task = Task::load(Path::new(&file))?;
    task.validate()?;
    // Grid key: 0 empty, 1 a module, 2 a module with a robot inside.
    println!("task {file}\ninitial:\n{}goal:\n{}", task.initial, task.goal);

    let deadline = Instant::now() + Duration::from_secs(60);
    let p = plan(&task, Some(deadline), &|| false)?;
    check_plan(&task, &p).context("the plan does not replay")?;
    println!(
        "cost {}, {} joint steps, {} actions, {} expansions, {} µs",
        p.cost,
        p.steps.len(),
        p.action_count(),
        p.stats.expansions,
        p.stats.micros
    );

    // A joint step is what all robots do at once; its actions are listed in order.
    let mut n = 0;
    for (k, step) in p.steps.iter().enumerate() {
        for a in &step.actions {
            n += 1;
            println!("action {n} (step {}): {a}", k + 1);
        }
    }
    if let Some(last) = p.states.last() {
        println!("final state:\n{last}");
    }
    Ok(())
}
