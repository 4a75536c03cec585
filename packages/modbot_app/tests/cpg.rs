//! The seed-002 CPG driving chains in the embedded simulator (decision 0026).

use modbot_app::{ControllerSpec, EvalOptions, Evaluation, evaluate, load_world};
use modbot_core::{ModuleCatalog, Topology};
use modbot_sim::RunPlan;

fn run(robot: &str, params: &[(&str, f64)]) -> Evaluation {
    let t = Topology::resolve(robot, &ModuleCatalog::builtin()).unwrap_or_else(|e| panic!("{e}"));
    let spec = ControllerSpec::Gait {
        name: "cpg".into(),
        params: params.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
    };
    let options = EvalOptions {
        plan: RunPlan {
            warmup_cycles: 2,
            cycles: 3,
            max_time_s: 60.0,
            ..RunPlan::default()
        },
        ..EvalOptions::default()
    };
    let world = load_world(None).unwrap_or_else(|e| panic!("{e}"));
    evaluate(&t, &spec, &world, 0, &options, &mut |_, _| {}).unwrap_or_else(|e| panic!("{robot}: {e}"))
}

/// With the seed's defaults the pitch-pitch chain crawls along its axis, and the cycles the
/// report counts are turns of the locked chain at ν = 0.65 Hz (within the 0.05 s Euler
/// step's quantisation).
#[test]
fn the_default_cpg_moves_a_pitch_pitch_chain_along_its_axis() {
    let e = run("pp:8", &[]);
    let r = &e.report;
    eprintln!("pp:8 cpg: {r:?}");
    assert!(r.step_x_m.abs() > 0.05, "step {} m/cycle", r.step_x_m);
    assert!(
        r.step_y_m.abs() < 0.1 * r.step_x_m.abs(),
        "sideways {} m/cycle",
        r.step_y_m
    );
    assert!((r.period_s - 1.0 / 0.65).abs() < 0.05, "cycle {} s", r.period_s);
}

/// The pitch-yaw chain (alternating module orientation, as the repository's experiments
/// had it) moves too; with phases one tick late the chain locks near 0.40 Hz.
#[test]
fn the_cpg_moves_a_pitch_yaw_chain_and_a_delay_slows_it_to_0_4_hz() {
    let e = run("py:8", &[]);
    eprintln!("py:8 cpg: {:?}", e.report);
    assert!(e.report.step_m > 0.01, "step {} m/cycle", e.report.step_m);
    let late = run("py:8", &[("delay_ticks", 1.0)]);
    let f = 1.0 / late.report.period_s;
    assert!((f - 0.40).abs() < 0.03, "one tick late: {f} Hz");
}

/// Bad parameters are refused naming them, before anything runs.
#[test]
fn bad_cpg_parameters_are_refused_naming_them() {
    let t = Topology::resolve("pp:4", &ModuleCatalog::builtin()).unwrap_or_else(|e| panic!("{e}"));
    let world = load_world(None).unwrap_or_else(|e| panic!("{e}"));
    for (key, value, named) in [
        ("amplitude", 2.0, "amplitude"),
        ("amplitude.7", 0.3, "amplitude.7"),
        ("nu", f64::INFINITY, "frequency_hz"),
        ("wobble", 1.0, "wobble"),
    ] {
        let spec = ControllerSpec::Gait {
            name: "cpg".into(),
            params: vec![(key.into(), value)],
        };
        let err = evaluate(&t, &spec, &world, 0, &EvalOptions::default(), &mut |_, _| {})
            .err()
            .unwrap_or_else(|| panic!("{key} = {value} accepted"))
            .to_string();
        assert!(err.contains(named), "{key}: {err}");
    }
}

/// Maze scoring in the simulator: a chain that does not move is stopped at 10 s with
/// D_out = 1 (seed 002 §4.1); the CPG's crawl enters maze_sls and is scored by the
/// remaining distance when maxTime runs out; a world without a maze is refused.
#[test]
fn maze_runs_stop_by_the_seed_rules() {
    use modbot_app::{evaluate_maze, load_maze};
    use modbot_sim::maze::{MazeOutcome, MazeRules};
    let t = Topology::resolve("pp:8", &ModuleCatalog::builtin()).unwrap_or_else(|e| panic!("{e}"));
    let maze = load_maze("maze_sls").unwrap_or_else(|e| panic!("{e}"));
    let still = ControllerSpec::Gait {
        name: "cpg".into(),
        params: vec![("amplitude".into(), 0.0)],
    };
    let rules = MazeRules::default();
    let e = evaluate_maze(&t, &still, &maze, 0, &EvalOptions::default(), rules, &mut |_, _| {})
        .unwrap_or_else(|e| panic!("{e}"));
    match e.outcome {
        MazeOutcome::NotEntered { time_s, d_out } => {
            assert!((10.0..10.02).contains(&time_s), "stopped at {time_s} s");
            assert_eq!(d_out, 1.0);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(e.outcome.result(), [1.0, 0.0]);
    assert!(!e.solved && (e.fitness - 1.4).abs() < 1e-12);

    let crawl = ControllerSpec::Gait {
        name: "cpg".into(),
        params: vec![],
    };
    let short = MazeRules {
        max_time_s: 20.0,
        ..rules
    };
    let e = evaluate_maze(&t, &crawl, &maze, 0, &EvalOptions::default(), short, &mut |_, _| {})
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!("pp:8 cpg in maze_sls: {:?}, fitness {}", e.outcome, e.fitness);
    let MazeOutcome::TimedOut { d_out, .. } = e.outcome else {
        panic!("{:?}", e.outcome)
    };
    assert!(d_out < 1.0 && d_out > 0.5, "D_out {d_out}");
    // D along the path never grows by more than a wobble once inside.
    let inside: Vec<f64> = e.path.iter().filter(|p| p[3] >= 1.0).map(|p| p[4]).collect();
    assert!(inside.first() > inside.last());

    let flat = load_world(None).unwrap_or_else(|e| panic!("{e}"));
    let err = evaluate_maze(&t, &crawl, &flat, 0, &EvalOptions::default(), rules, &mut |_, _| {})
        .unwrap_err()
        .to_string();
    assert!(err.contains("no maze"), "{err}");
    assert!(load_maze("maze_nowhere").unwrap_err().to_string().contains("maze_sls"));
}
