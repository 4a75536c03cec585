//! The runnable examples of the repository's `examples/` folder, run as a user runs them:
//! each must exit 0 and print what it shows (one meaningful line checked per example).
//!
//! `cargo test -p modbot` builds the examples (into `target/<profile>/examples/`) before it
//! runs this test; `cargo test -p modbot --test examples` alone does not, and the test then
//! fails saying so. `ros_node` needs the `ros` feature (on by default).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use std::path::PathBuf;
use std::process::Command;

/// Where cargo put the example `name`: this test is `target/<profile>/deps/examples-<hash>`,
/// the examples are `target/<profile>/examples/<name>`.
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test binary is in target/<profile>/deps");
    profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

/// Runs the example `name`, asserts it succeeded, and returns its stdout.
fn run(name: &str) -> String {
    let bin = example(name);
    assert!(
        bin.exists(),
        "example `{name}` is not built ({} does not exist): build the examples first, \
         `cargo test -p modbot` builds them (or `cargo build -p modbot --examples`)",
        bin.display()
    );
    let o = Command::new(&bin)
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", bin.display()));
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "example `{name}` failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    stdout
}

/// The number that follows `prefix` on the first line starting with it (up to a space).
fn number_after(out: &str, prefix: &str) -> f64 {
    let rest = out
        .lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no line starting `{prefix}` in:\n{out}"));
    let word = rest.split_whitespace().next().unwrap_or_default();
    word.parse()
        .unwrap_or_else(|_| panic!("`{word}` after `{prefix}` is not a number:\n{out}"))
}

/// py_16 from its robot file sidewinds: mostly sideways, more than 5 cm per cycle (as
/// cli.rs's `a_robot_file_runs_like_its_preset` measures it after one warm-up cycle). Which
/// side it goes to is not fixed by anything the tests pin, so the magnitude is checked.
#[test]
fn gait_on_robot_file_moves_the_sidewinder_sideways() {
    let out = run("gait_on_robot_file");
    let across = number_after(&out, "step across (left +): ");
    let along = number_after(&out, "step along body axis: ");
    assert!(across.abs() > 5.0, "sideways {across} cm/cycle:\n{out}");
    assert!(across.abs() > along.abs(), "more across than along:\n{out}");
    assert!(out.lines().any(|l| l.starts_with("status: ")), "{out}");
}

/// Every point of the 2 × 2 caterpillar sweep runs, and with Δφ < 0 the best point moves
/// forward (towards the head, +x: config/gaits.yaml, decision 0002).
#[test]
fn sweep_runs_every_point_and_the_caterpillar_goes_forward() {
    let out = run("sweep");
    assert!(out.contains("4 of 4 points ran"), "{out}");
    let best = number_after(&out, "best step along the body: ");
    assert!(best > 0.0, "best step {best} cm/cycle:\n{out}");
}

/// A* reproduces the published optimal length of the first scenario, and the deliberative
/// search on the obstacle course gives the source's configurations in the source's order.
#[test]
fn plan_matches_the_published_optimum() {
    let out = run("plan");
    let cost = number_after(&out, "A* cost: ");
    let optimal = number_after(&out, "published optimal: ");
    assert!((cost - optimal).abs() < 1e-5, "{cost} vs {optimal}:\n{out}");
    assert!(out.contains("single_module → quadruped → wheeled"), "{out}");
}

/// The MoleMOD worked example: the optimal plan of cost 11, with its actions listed.
#[test]
fn molemod_plans_the_worked_example() {
    let out = run("molemod");
    assert!(out.lines().any(|l| l.starts_with("cost 11, 8 joint steps")), "{out}");
    let actions = out.lines().filter(|l| l.starts_with("action ")).count();
    assert!(actions > 0, "no actions listed:\n{out}");
}

/// gait_node on the loopback bus answers a GaitCommand with moving joint targets.
#[test]
fn ros_node_answers_a_gait_command() {
    if !cfg!(feature = "ros") {
        eprintln!("ros_node needs the `ros` feature: skipped");
        return;
    }
    let out = run("ros_node");
    assert!(number_after(&out, "received ") > 0.0, "{out}");
    let peak = number_after(&out, "peak |target|: ");
    assert!(
        peak > 0.01,
        "the joints do not move after the command: {peak} rad\n{out}"
    );
}
