//! A small parameter sweep of the 8-module caterpillar (pp:8), printed as a table.
//!
//! `cargo run -p modbot --example sweep [X_AXIS] [Y_AXIS]`
//!
//! Each axis is `KEY=START:STOP:STEP` (default `A=20:40:20` and `dphi=-120:-90:30`: 2 × 2
//! points); every point runs one warm-up and one measured cycle through
//! `modbot_app::sweep`, the library call behind `modbot sweep`. A negative Δφ moves the
//! caterpillar towards its head (+x), so the best points step forward.

use anyhow::Result;
use modbot_app::{Axis, EvalOptions, SweepGrid, SweepPoint, load_catalog, load_robot, load_world_for, sweep};
use modbot_sim::RunPlan;

/// One row of the table: the point's coordinates and what it measured (or why it failed).
fn row(p: &SweepPoint) -> String {
    match &p.result {
        Ok(r) => format!(
            "{:>8} {:>8} {:>+12.2} {:>+12.2} {:>+10.2}  {}",
            p.x,
            p.y,
            r.step_x_m * 100.0,
            r.step_y_m * 100.0,
            r.heading_change_deg,
            r.status
        ),
        Err(e) => format!("{:>8} {:>8}  error: {e}", p.x, p.y),
    }
}

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let x: Axis = args.next().as_deref().unwrap_or("A=20:40:20").parse()?;
    let y: Axis = args.next().as_deref().unwrap_or("dphi=-120:-90:30").parse()?;

    let catalog = load_catalog(None)?;
    let robot = load_robot("pp:8", &catalog)?;
    let world = load_world_for(None, &robot)?;
    let options = EvalOptions {
        plan: RunPlan {
            warmup_cycles: 1,
            cycles: 1,
            ..RunPlan::default()
        },
        ..EvalOptions::default()
    };
    let total = x.values.len() * y.values.len();
    println!("pp:8 caterpillar: {} × {} = {total} points", x.key, y.key);
    let grid = SweepGrid {
        gait: "caterpillar",
        fixed: &[],
        x: &x,
        y: &y,
    };
    let points = sweep(&robot, grid, &world, &options, &mut |done, all| {
        eprintln!("  point {done} of {all} done");
    })?;

    println!(
        "{:>8} {:>8} {:>12} {:>12} {:>10}  status",
        x.key, y.key, "x cm/cycle", "y cm/cycle", "deg/cycle"
    );
    for p in &points {
        println!("{}", row(p));
    }
    let ran = points.iter().filter(|p| p.result.is_ok()).count();
    println!("{ran} of {} points ran", points.len());
    let best = points
        .iter()
        .filter_map(|p| p.result.as_ref().ok().map(|r| (p, r)))
        .max_by(|a, b| a.1.step_x_m.total_cmp(&b.1.step_x_m));
    if let Some((p, r)) = best {
        println!(
            "best step along the body: {:+.2} cm/cycle at {}={} {}={}",
            r.step_x_m * 100.0,
            x.key,
            p.x,
            y.key,
            p.y
        );
    }
    Ok(())
}
