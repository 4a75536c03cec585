//! A gait on a robot loaded from its robot file, measured with the source's protocol.
//!
//! `cargo run -p modbot --example gait_on_robot_file [ROBOT] [GAIT]`
//!
//! By default the 16-module pitch-yaw chain of `config/robots/py_16.yaml` sidewinds on the
//! default world (flat ground, μ = 0.2) for one warm-up cycle and two measured ones, on the
//! native engine: what `modbot run --robot config/robots/py_16.yaml --gait sidewinding
//! --warmup 1 --cycles 2` measures, through the library call behind it
//! (`modbot_app::evaluate`). ROBOT may be another robot file or a preset (`pp:8`, `py:16`).

use anyhow::Result;
use modbot_app::{ControllerSpec, EvalOptions, evaluate, load_catalog, load_robot, load_world_for};
use modbot_sim::RunPlan;

/// The robot file run when no argument names another.
const ROBOT_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../config/robots/py_16.yaml");

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let robot_arg = args.next().unwrap_or_else(|| ROBOT_FILE.to_string());
    let gait = args.next().unwrap_or_else(|| "sidewinding".to_string());

    // The shipped module catalog, the robot built from its file, the default world for it.
    let catalog = load_catalog(None)?;
    let robot = load_robot(&robot_arg, &catalog)?;
    let world = load_world_for(None, &robot)?;
    println!(
        "robot `{}`: {} modules, {} joints ({robot_arg})",
        robot.name,
        robot.len(),
        robot.joint_names().len()
    );
    println!("world `{}`", world.name);

    // The protocol: cycles discarded, then cycles measured (the command's default is 2 + 10).
    let options = EvalOptions {
        plan: RunPlan {
            warmup_cycles: 1,
            cycles: 2,
            ..RunPlan::default()
        },
        ..EvalOptions::default()
    };
    let controller = ControllerSpec::Gait {
        name: gait,
        params: Vec::new(),
    };
    let eval = evaluate(&robot, &controller, &world, 0, &options, &mut |_, _| {})?;
    let r = &eval.report;

    let params: Vec<String> = eval.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    println!("gait `{}` ({})", eval.controller, params.join(", "));
    println!(
        "{} warm-up + {} measured cycles of {:.2} s; {:.1} s simulated in {} steps of {} ms",
        r.warmup_cycles,
        r.cycles,
        r.period_s,
        eval.simulated_s,
        eval.steps,
        eval.step_s * 1000.0
    );
    println!("step along body axis: {:+.2} cm/cycle", r.step_x_m * 100.0);
    println!("step across (left +): {:+.2} cm/cycle", r.step_y_m * 100.0);
    println!("heading change: {:+.2} deg/cycle", r.heading_change_deg);
    println!("speed: {:.3} body lengths/cycle", r.speed_body_lengths_per_cycle);
    println!("status: {}", r.status);
    if r.findings.is_empty() {
        println!("findings: none");
    }
    for f in &r.findings {
        println!("finding: {f}");
    }
    Ok(())
}
