//! A controller scored in a maze (seed 002 §4.1, §8): one stage, or the repository's staged
//! evaluation over several mazes (s-l-s, then b, then s-r-s). Decision record 0027.

use modbot_core::{Scenario, Topology};
use modbot_sim::maze::{MazeOutcome, MazeRules, run_maze, stage_fitness, staged_fitness};

use crate::controller::{ControllerSpec, build_controller};
use crate::error::{AppError, Result};
use crate::evaluate::EvalOptions;
use crate::session::SimSession;

/// One maze run, scored.
#[derive(Debug, Clone)]
pub struct MazeEvaluation {
    /// The world's name.
    pub world: String,
    /// How it ended.
    pub outcome: MazeOutcome,
    /// (t, x, y, part, D) per control tick (the robot's centre of mass).
    pub path: Vec<[f64; 5]>,
    /// Σ of the maze parts' lengths, m.
    pub total_m: f64,
    /// The stage fitness (lower is better) and whether the stage is solved.
    pub fitness: f64,
    /// Fitness ≤ maxTime × 0.01.
    pub solved: bool,
    /// Controller name and its resolved parameters.
    pub controller: String,
    /// Resolved parameters.
    pub params: std::collections::BTreeMap<String, f64>,
    /// Physics steps taken.
    pub steps: u64,
}

/// Runs `controller` on `robot` in the maze of `world` (a world without a maze is refused)
/// from the world's start (moved by `seed` as `evaluate` does).
pub fn evaluate_maze(
    robot: &Topology,
    controller: &ControllerSpec,
    world: &Scenario,
    seed: u64,
    options: &EvalOptions,
    rules: MazeRules,
    progress: &mut dyn FnMut(f64, f64),
) -> Result<MazeEvaluation> {
    let maze = world
        .maze
        .clone()
        .ok_or_else(|| AppError::BadInput(format!("world `{}` has no maze (a `maze:` section)", world.name)))?;
    let mut session = SimSession::new(robot.clone(), world, options.settings(world), seed)?;
    let start = session.sim.joint_positions();
    let mut built = build_controller(controller, robot, &options.library, &start)?;
    let run = run_maze(
        &mut session.sim,
        built.controller.as_mut(),
        &maze,
        rules,
        options.plan.control_rate_hz,
        progress,
    )?;
    let (fitness, solved) = stage_fitness(&run.outcome, rules.max_time_s);
    Ok(MazeEvaluation {
        world: world.name.clone(),
        outcome: run.outcome,
        path: run.path,
        total_m: run.total_m,
        fitness,
        solved,
        controller: built.name,
        params: built.params,
        steps: session.sim.steps(),
    })
}

/// The staged evaluation: the worlds in order, each only if the one before was solved;
/// returns the staged fitness and the stages that ran. `progress` is called with the
/// world's name, the simulated time and the stage's time limit.
pub fn evaluate_maze_stages(
    robot: &Topology,
    controller: &ControllerSpec,
    worlds: &[Scenario],
    seed: u64,
    options: &EvalOptions,
    rules: MazeRules,
    progress: &mut dyn FnMut(&str, f64, f64),
) -> Result<(f64, Vec<MazeEvaluation>)> {
    if worlds.is_empty() {
        return Err(AppError::BadInput(
            "a staged maze evaluation needs at least one maze".into(),
        ));
    }
    let mut stages = Vec::new();
    for w in worlds {
        let e = evaluate_maze(robot, controller, w, seed, options, rules, &mut |t, total| {
            progress(&w.name, t, total)
        })?;
        let solved = e.solved;
        stages.push(e);
        if !solved {
            break;
        }
    }
    let scores: Vec<(f64, bool)> = stages.iter().map(|e| (e.fitness, e.solved)).collect();
    Ok((staged_fitness(&scores), stages))
}
