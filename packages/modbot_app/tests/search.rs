//! The thesis's gait searches (seed-001 §2.6, App. B) reproduced with fixed seeds, and the
//! search's own guarantees: the same seed gives the same search on 1 and 2 threads, and a
//! resumed search ends where an uninterrupted one does. Decision record 0028.

use modbot_app::search::{
    Checkpoint, CmaesSettings, GaSettings, Hooks, Method, Objective, Problem, Requirement, SearchSettings,
    default_genes, minimal_configuration, minimal_robots, run_search,
};
use modbot_app::{ControllerSpec, EvalOptions, evaluate, load_world};
use modbot_core::{ModuleCatalog, Topology};
use modbot_gaits::GaitLibrary;
use modbot_sim::RunPlan;
use modbot_sim::maze::MazeRules;

fn robot(spec: &str) -> Topology {
    Topology::resolve(spec, &ModuleCatalog::builtin()).unwrap_or_else(|e| panic!("{e}"))
}

fn options() -> EvalOptions {
    EvalOptions {
        plan: RunPlan {
            warmup_cycles: 2,
            cycles: 3,
            ..RunPlan::default()
        },
        ..EvalOptions::default()
    }
}

/// The thesis's genome: H2 without O_h (A_v, A_h, Δφ_v, Δφ_h, Δφ_vh), integer degrees.
fn pitch_yaw_problem(spec: &str, objective: &str) -> Problem {
    let library = GaitLibrary::builtin();
    let fixed = vec![("offset_h_deg".to_string(), 0.0)];
    let genes = default_genes(&library, &robot(spec), "pitch_yaw", &fixed).unwrap_or_else(|e| panic!("{e}"));
    Problem {
        robot: robot(spec),
        gait: "pitch_yaw".into(),
        fixed,
        genes,
        objective: objective.parse::<Objective>().unwrap_or_else(|e| panic!("{e}")),
        world: load_world(None).unwrap_or_else(|e| panic!("{e}")),
        mazes: Vec::new(),
        rules: MazeRules::default(),
        options: options(),
    }
}

fn search(problem: &Problem, ga: GaSettings, generations: usize, seed: u64, threads: usize) -> Checkpoint {
    let settings = SearchSettings {
        method: Method::Ga(ga),
        generations,
        seed,
        threads,
    };
    run_search(
        problem,
        &settings,
        None,
        &mut Hooks {
            generation: &mut |_, _| Ok(()),
            evaluation: &|| {},
        },
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// What a preset measures under the search's protocol.
fn preset(spec: &str, name: &str) -> modbot_sim::Report {
    let c = ControllerSpec::Gait {
        name: name.into(),
        params: vec![],
    };
    let world = load_world(None).unwrap_or_else(|e| panic!("{e}"));
    evaluate(&robot(spec), &c, &world, 0, &options(), &mut |_, _| {})
        .unwrap_or_else(|e| panic!("{e}"))
        .report
}

/// The genome's keys, in order: A_v, A_h, Δφ_v, Δφ_h, Δφ_vh.
fn genome_keys(p: &Problem) -> Vec<&str> {
    p.genes.iter().map(|g| g.key.as_str()).collect()
}

/// Thesis: a Δy search on the 32-module PY finds a sideways gait. With the GA's settings
/// but a population of 20 for 10 generations (seed 1; 36 evaluations, to keep CI short),
/// the best moves sideways further per cycle than the sidewinding preset of Table D.3, and it
/// is of the sideways families: isomorphous (Δφ_v = Δφ_h within 30°, as sidewinding and
/// rolling are) and moving across its axis far more than along it.
#[test]
fn a_step_y_search_on_py32_finds_a_sideways_gait_beating_the_preset() {
    let p = pitch_yaw_problem("py:32", "abs(step_y)");
    assert_eq!(
        genome_keys(&p),
        [
            "amplitude_v_deg",
            "amplitude_h_deg",
            "phase_diff_v_deg",
            "phase_diff_h_deg",
            "phase_diff_vh_deg"
        ]
    );
    let ga = GaSettings {
        population: 20,
        ..GaSettings::default()
    };
    let cp = search(&p, ga, 10, 1, 2);
    let best = cp.best().unwrap_or_else(|| panic!("nothing ran"));
    let v = &best.values;
    let m = best.measured;
    let preset_dy = preset("py:32", "py32_sidewinding").step_y_m.abs() * 100.0;
    eprintln!("py:32 Δy search: best {v:?} {m:?}; preset Δy {preset_dy:.2} cm/cycle");
    assert!(m.step_y_cm.abs() > preset_dy, "{} vs preset {preset_dy}", m.step_y_cm);
    assert!(
        (v[2] - v[3]).abs() <= 30.0,
        "not isomorphous: Δφ_v {} Δφ_h {}",
        v[2],
        v[3]
    );
    assert!(m.step_y_cm.abs() > 3.0 * m.step_x_cm.abs(), "{m:?}");
}

/// Thesis: the PYP rotation GA (`GA_PYn 2 1 YAW 3 100 100`: 100 strings, 100 generations),
/// here in full with seed 2: at least 30°/cycle and beyond the Minicube-II rotation preset
/// of Table D.3.
#[test]
fn the_pyp_rotation_ga_reaches_30_deg_per_cycle_and_beats_the_preset() {
    let p = pitch_yaw_problem("pyp", "abs(heading)");
    let cp = search(&p, GaSettings::default(), 100, 2, 2);
    let best = cp.best().unwrap_or_else(|| panic!("nothing ran"));
    let preset_yaw = preset("pyp", "minicube_ii_rotation").heading_change_deg.abs();
    eprintln!(
        "pyp rotation GA: best {:?} {:?} after {} evaluations; preset {preset_yaw:.2}°/cycle",
        best.values,
        best.measured,
        cp.evaluations.len()
    );
    let f = best.fitness.unwrap_or(f64::NAN);
    assert!(f >= 30.0 && f > preset_yaw, "{f}°/cycle vs preset {preset_yaw}");
    // 100 strings, then 10 new per generation; repeated strings are not run again.
    assert_eq!(cp.generations_done, 101);
    assert!(cp.evaluations.len() <= 100 + 100 * 10);
    assert_eq!(cp.history.len(), 101);
    // The best never gets worse (the best 90 % survive each generation).
    let bests: Vec<f64> = cp.history.iter().filter_map(|h| h.best).collect();
    assert!(bests.windows(2).all(|w| w[1] >= w[0]));
}

/// Thesis §6.3.3: the minimal configuration is the first chain, counting modules upwards,
/// "able to execute various gaits"; §6.4 and §6.10: it is the PYP (M = 3). Rotation alone
/// does not single it out here (a 2-module PY rotates, record 0028), rolling does: the PY of
/// two modules cannot roll, the PYP rolls a full turn per cycle. Rotation ≥ 20°/cycle (above
/// the Minicube-II preset's 12°) and rolling ≥ 180°/cycle, 30 generations, seed 1.
#[test]
fn the_minimal_configuration_that_rotates_and_rolls_is_the_pyp() {
    let requirements: Vec<Requirement> = ["abs(heading)>=20", "abs(roll)>=180"]
        .iter()
        .map(|r| r.parse().unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let robots = minimal_robots("py", 2, 4).unwrap_or_else(|e| panic!("{e}"));
    let (found, tries) = minimal_configuration::<modbot_app::AppError>(&robots, &requirements, &mut |robot, req| {
        let mut p = pitch_yaw_problem(robot, "step_x");
        p.objective = req.objective.clone();
        Ok(search(&p, GaSettings::default(), 30, 1, 2)
            .best()
            .and_then(|b| b.fitness))
    })
    .unwrap_or_else(|e| panic!("{e}"));
    eprintln!("minimal configuration: {found:?}; {tries:?}");
    assert_eq!(found.as_deref(), Some("pyp"));
    let summary: Vec<(&str, usize, bool)> = tries.iter().map(|t| (t.robot.as_str(), t.requirement, t.met)).collect();
    // py:2 rotates but cannot roll; the PYP does both; py:4 is never tried.
    assert_eq!(
        summary,
        [
            ("py:2", 0, true),
            ("py:2", 1, false),
            ("pyp", 0, true),
            ("pyp", 1, true)
        ]
    );
    assert!(
        tries[1].best.is_some_and(|b| b.abs() < 5.0),
        "py:2 rolls {:?}°/cycle",
        tries[1].best
    );
}

/// The same seed gives the same search on 1 and on 2 threads, bit for bit, with the GA and
/// with CMA-ES; and a search
/// resumed from its checkpoint after 2 generations ends exactly where the uninterrupted one
/// does.
#[test]
fn one_seed_one_search_on_any_thread_count_and_after_a_resume() {
    let p = pitch_yaw_problem("pyp", "step_x");
    let ga = GaSettings {
        population: 12,
        ..GaSettings::default()
    };
    // (Compared as JSON: NaN, for what a run did not measure, is never equal to itself.)
    let json = |c: &Checkpoint| serde_json::to_string(c).unwrap_or_else(|e| panic!("{e}"));
    let run = |method: Method,
               generations: usize,
               threads: usize,
               from: Option<Checkpoint>,
               keep: &mut Option<Checkpoint>| {
        let settings = SearchSettings {
            method,
            generations,
            seed: 7,
            threads,
        };
        run_search(
            &p,
            &settings,
            from,
            &mut Hooks {
                generation: &mut |_, cp| {
                    *keep = Some(cp.clone());
                    Ok(())
                },
                evaluation: &|| {},
            },
        )
        .unwrap_or_else(|e| panic!("{e}"))
    };
    let cmaes = Method::Cmaes(CmaesSettings {
        population: Some(8),
        ..CmaesSettings::default()
    });
    let mut one = None;
    for method in [Method::Ga(ga), cmaes] {
        let mut saved = None;
        let single = run(method, 4, 1, None, &mut None);
        let double = run(method, 4, 2, None, &mut None);
        assert_eq!(json(&single), json(&double), "{method:?}: 1 and 2 threads differ");
        assert!(single.evaluations.len() > 8, "{method:?}");
        // Interrupted after generation 2 (the checkpoint saved then), resumed to 4.
        let _ = run(method, 2, 2, None, &mut saved);
        let resumed = run(method, 4, 2, saved.clone(), &mut None);
        assert_eq!(json(&resumed), json(&single), "{method:?}: the resumed search differs");
        if one.is_none() {
            one = Some((single, saved));
        }
    }
    let (_, saved) = one.unwrap_or_else(|| panic!("no GA run"));
    let settings = |generations| SearchSettings {
        method: Method::Ga(ga),
        generations,
        seed: 7,
        threads: 2,
    };
    // A checkpoint of another search is refused, naming what differs.
    let other = pitch_yaw_problem("pyp", "step_y");
    let e = run_search(
        &other,
        &settings(4),
        saved,
        &mut Hooks {
            generation: &mut |_, _| Ok(()),
            evaluation: &|| {},
        },
    )
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    assert!(e.contains("objective"), "{e}");
}

/// A CPG searched on maze_sls reaches the goal. The repository's genome (amplitude, offset,
/// one phase lag, shared by the modules) on py:8, CMA-ES for 12 generations with seed 1;
/// the time limits scaled by the module size (our 7.2 cm modules in mazes built for 0.25 m
/// ones: maxTime 40 s → 140 s, the entry time 10 s → 35 s; record 0028).
#[test]
fn a_cpg_searched_on_maze_sls_reaches_the_goal() {
    let library = GaitLibrary::builtin();
    let genes = default_genes(&library, &robot("py:8"), "cpg", &[]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        genes.iter().map(|g| g.key.as_str()).collect::<Vec<_>>(),
        ["amplitude", "offset", "phase_lag_deg"]
    );
    let maze = modbot_app::load_maze("maze_sls").unwrap_or_else(|e| panic!("{e}"));
    let rules = MazeRules {
        max_time_s: 140.0,
        enter_within_s: 35.0,
    };
    let p = Problem {
        robot: robot("py:8"),
        gait: "cpg".into(),
        fixed: Vec::new(),
        genes,
        objective: "maze".parse::<Objective>().unwrap_or_else(|e| panic!("{e}")),
        world: maze.clone(),
        mazes: vec![maze],
        rules,
        options: options(),
    };
    let settings = SearchSettings {
        method: Method::Cmaes(CmaesSettings::default()),
        generations: 12,
        seed: 1,
        threads: 2,
    };
    let cp = run_search(
        &p,
        &settings,
        None,
        &mut Hooks {
            generation: &mut |_, _| Ok(()),
            evaluation: &|| {},
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let best = cp.best().unwrap_or_else(|| panic!("nothing ran"));
    eprintln!("maze_sls CPG search: best {:?} {:?}", best.values, best.measured);
    assert_eq!(best.measured.stages_solved, 1, "{:?}", best.measured);
    // Solved: the stage fitness t × 0.01 is at most maxTime × 0.01.
    let f = -best.fitness.unwrap_or(f64::NAN);
    assert!(f <= 1.4, "stage fitness {f}");
}
