//! Digital-hormone organisms in the embedded simulator (seed-003 §9.1; decision 0029): the
//! modules' own controllers, IR by ray casts, nothing scripted from outside.

use std::path::Path;

use modbot_app::organism::{Fault, OrganismRun, OrganismSpec, run_organism};
use modbot_app::{EvalOptions, load_world};
use modbot_core::{ModuleCatalog, Topology};
use modbot_gaits::hormone::HormoneSettings;

/// An organism (`text` with its flags, its own IR settings changed by `tune`) run in
/// `world` (a file of the repository's worlds/, or flat ground) for `seconds` with `faults`.
fn run_in(
    world: Option<&str>,
    text: &str,
    pitched: bool,
    no_tail: bool,
    seconds: f64,
    faults: &[Fault],
    tune: &dyn Fn(&mut HormoneSettings),
) -> OrganismRun {
    let spec = OrganismSpec::parse(text, pitched, no_tail).unwrap_or_else(|e| panic!("{e}"));
    let robot = spec
        .topology(&ModuleCatalog::builtin())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut settings = spec.hormone_settings();
    tune(&mut settings);
    run_robot(&robot, world, seconds, faults, settings)
}

/// `robot` with `settings` run in `world` (a file of the repository's worlds/, or flat
/// ground) for `seconds` with `faults`.
fn run_robot(
    robot: &Topology,
    world: Option<&str>,
    seconds: f64,
    faults: &[Fault],
    settings: HormoneSettings,
) -> OrganismRun {
    let path = world.map(|w| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../worlds").join(w));
    let world = load_world(path.as_deref()).unwrap_or_else(|e| panic!("{e}"));
    run_organism(
        robot,
        &world,
        seconds,
        faults,
        settings,
        &EvalOptions::default(),
        &mut |_, _| {},
    )
    .unwrap_or_else(|e| panic!("{}: {e}", robot.name))
}

/// The organism's own settings, unchanged.
fn as_is(_: &mut HormoneSettings) {}

/// Direction of the centre of mass's displacement over the run, degrees.
fn travel_deg(run: &OrganismRun) -> f64 {
    let (Some(a), Some(b)) = (run.samples.first(), run.samples.last()) else {
        panic!("no samples")
    };
    (b.com[1] - a.com[1]).atan2(b.com[0] - a.com[0]).to_degrees()
}

/// [`run_in`] on flat ground.
fn run_on_flat(text: &str, pitched: bool, no_tail: bool, seconds: f64, faults: &[Fault]) -> OrganismRun {
    run_in(None, text, pitched, no_tail, seconds, faults, &as_is)
}

/// §9.1: a caterpillar heading for a wall reverses and does not touch it for the rest of the
/// run. The wall is 1.8 m ahead; the caterpillar's leading end sees it, the obstacle hormone
/// and the direction change cross the organism within a tick, and the wave under way stops
/// (record 0029). Measured: closest approach 26.5 cm, then it crawls back.
#[test]
fn a_caterpillar_heading_for_a_wall_reverses_and_never_touches_it() {
    let run = run_in(
        Some("hormone_wall.yaml"),
        "caterpillar:10",
        false,
        false,
        60.0,
        &[],
        &as_is,
    );
    let closest = run.closest_approach_m.unwrap_or(0.0);
    assert!(closest > 0.10, "closest approach {closest} m");
    let xs: Vec<f64> = run.samples.iter().map(|s| s.point[0]).collect();
    let furthest = xs.iter().copied().fold(f64::MIN, f64::max);
    let last = xs.last().copied().unwrap_or(f64::NAN);
    assert!(furthest > 0.8, "it went toward the wall: {furthest} m");
    assert!(last < furthest - 1.0, "it turned back: from {furthest} m to {last} m");
}

fn speed(text: &str, pitched: bool, no_tail: bool) -> f64 {
    let run = run_on_flat(text, pitched, no_tail, 30.0, &[]);
    eprintln!(
        "{text} {pitched} {no_tail}: {:?} {:?}",
        run.report.speed_m_s, run.modules
    );
    run.report.speed_m_s
}

/// The seed's straight-line ordering (§9.1): caterpillar, then caterpillar with a pitched
/// module, then V, then scorpion (slowest); and the scorpion is faster without its tail. Each margin is at
/// least 10 % of the slower speed, so a near tie does not pass.
#[test]
fn straight_line_speeds_are_in_the_seeds_order() {
    let plain = speed("caterpillar:10", false, false);
    let pitched = speed("caterpillar:10", true, false);
    let v = speed("v:9", false, false);
    let scorpion = speed("scorpion", false, false);
    let no_tail = speed("scorpion", false, true);
    let faster = |a: f64, b: f64| a > 1.1 * b;
    assert!(faster(plain, pitched), "caterpillar {plain} vs pitched {pitched}");
    assert!(faster(pitched, v), "pitched {pitched} vs V {v}");
    assert!(faster(v, scorpion), "V {v} vs scorpion {scorpion}");
    assert!(scorpion > 0.005, "the scorpion strokes forward: {scorpion} m/s");
    assert!(
        faster(no_tail, scorpion),
        "scorpion without its tail {no_tail} vs with {scorpion}"
    );
}

/// Seed §6.2: the V's ends drive waves toward its centre and the V moves "toward the region
/// the centre module is pointing to", between its two arms' directions of travel. v:9 starts
/// with its centre pointing at +45° (arms along −x and −y); measured 67.6° over 40 s
/// (record 0034). With the caterpillar's half period (4 ticks) it slid backwards, at 175°.
#[test]
fn a_v_goes_centre_first() {
    let run = run_on_flat("v:9", false, false, 40.0, &[]);
    let dir = travel_deg(&run);
    let dist = run.report.speed_m_s * 36.0;
    assert!(
        (0.0..90.0).contains(&dir),
        "the V went at {dir:.1}°, not between its arms"
    );
    assert!(dist > 1.0, "the V went {dist:.2} m in 36 s");
}

/// Seed §7.2 and §9.1: going forward, a V whose centre sees an obstacle on one side stops the
/// arm on the other side and turns away. A wall closes in from the V's left
/// (worlds/hormone_v_left.yaml) and from its right (hormone_v_right.yaml): blind (thresholds
/// 0) the V walks into it; with its own thresholds it never touches it and its way bends away
/// from the wall, right of the blind run's for the left wall, left of it for the right one.
/// Measured (60 s): left, blind −3.2° and touching, seeing −41.9° and 33 cm away at the
/// closest; right, blind 13.7° and touching, seeing 52.9° and 32 cm (record 0034).
#[test]
fn a_v_turns_away_from_an_obstacle_on_one_side() {
    for (world, away) in [("hormone_v_left.yaml", -1.0), ("hormone_v_right.yaml", 1.0)] {
        let blind = run_in(Some(world), "v:9", false, false, 60.0, &[], &|s| {
            s.ir_threshold = [0.0; 4]
        });
        let seeing = run_in(Some(world), "v:9", false, false, 60.0, &[], &as_is);
        let touched = blind.closest_approach_m.unwrap_or(f64::NAN);
        let closest = seeing.closest_approach_m.unwrap_or(f64::NAN);
        let turn = travel_deg(&seeing) - travel_deg(&blind);
        eprintln!("{world}: blind {touched:.3} m, seeing {closest:.3} m, turned {turn:.1}°");
        assert!(
            touched < 0.01,
            "{world}: the wall is not in the blind V's way ({touched} m)"
        );
        assert!(closest > 0.1, "{world}: the V came within {closest} m of the wall");
        assert!(
            turn * away > 15.0,
            "{world}: the V turned {turn:.1}° from the blind run's way, not away from the wall"
        );
    }
}

/// Why a 4-module caterpillar on flat ground refuses to run for `seconds` with `faults`
/// ("" when it runs).
fn refusal(seconds: f64, faults: &[Fault]) -> String {
    let spec = OrganismSpec::parse("caterpillar:4", false, false).unwrap_or_else(|e| panic!("{e}"));
    let robot = spec
        .topology(&ModuleCatalog::builtin())
        .unwrap_or_else(|e| panic!("{e}"));
    let world = load_world(None).unwrap_or_else(|e| panic!("{e}"));
    run_organism(
        &robot,
        &world,
        seconds,
        faults,
        HormoneSettings::default(),
        &EvalOptions::default(),
        &mut |_, _| {},
    )
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default()
}

#[test]
fn bad_run_lengths_are_refused() {
    for s in [1.0, f64::NAN, 1e9] {
        let e = refusal(s, &[]);
        assert!(e.contains("--seconds"), "{s}: {e}");
    }
}

fn faulted(text: &str, seconds: f64, faults: &[Fault]) -> OrganismRun {
    let run = run_on_flat(text, false, false, seconds, faults);
    for p in &run.parts {
        eprintln!("{text}: {:.1} cm {:?}", p.distance_m * 100.0, p.modules);
    }
    run
}

fn roles(p: &modbot_app::organism::PartRun) -> Vec<&str> {
    p.modules.iter().map(|(_, _, r)| r.as_str()).collect()
}

/// Seed §8: a 10-module caterpillar cut in the middle goes on as two caterpillars, each
/// mapping itself (two ends, middles) and moving on by itself.
#[test]
fn a_cut_caterpillar_goes_on_as_two_caterpillars() {
    let cut = Fault::parse_cut("20:m5-m6").unwrap_or_else(|e| panic!("{e}"));
    let run = faulted("caterpillar:10", 40.0, &[cut]);
    assert_eq!(run.parts.len(), 2);
    for p in &run.parts {
        let r = roles(p);
        assert_eq!(r.len(), 5);
        assert_eq!(r.iter().filter(|r| r.contains("end")).count(), 2, "{r:?}");
        assert!(r.iter().all(|r| r.starts_with("caterpillar")), "{r:?}");
        // Both move on: more than two of their own body lengths (5 × 8 cm) in 18 s.
        assert!(p.distance_m > 0.2, "{:?}: {:.3} m", r, p.distance_m);
    }
}

/// Seed §8: the V without its centre is two caterpillars that both move on; a scorpion's
/// detached two-module tail maps itself as a caterpillar and does not progress.
#[test]
fn a_v_without_its_centre_and_a_detached_tail_are_caterpillars() {
    let remove = Fault::parse_remove("20:centre").unwrap_or_else(|e| panic!("{e}"));
    let run = faulted("v:9", 40.0, &[remove]);
    assert_eq!(run.parts.len(), 2);
    for p in &run.parts {
        let r = roles(p);
        assert_eq!(r.len(), 4);
        assert!(r.iter().all(|r| r.starts_with("caterpillar")), "{r:?}");
        // Both move on: more than five of their own body lengths (4 × 8 cm) in 18 s;
        // measured 115 and 113 cm.
        assert!(p.distance_m > 0.2, "{:?}: {:.3} m", r, p.distance_m);
    }
    assert!(!run.modules.iter().any(|(n, _, _)| n == "centre"));

    let cut = Fault::parse_cut("20:head-inner_tail").unwrap_or_else(|e| panic!("{e}"));
    let run = faulted("scorpion", 40.0, &[cut]);
    assert_eq!(run.parts.len(), 2);
    let tail = run
        .parts
        .iter()
        .find(|p| p.modules.iter().any(|(n, _, _)| n == "outer_tail"))
        .unwrap_or_else(|| panic!("no tail part"));
    let r = roles(tail);
    assert_eq!(r.len(), 2);
    assert!(
        r.contains(&"caterpillar front end") && r.contains(&"caterpillar rear end"),
        "{r:?}"
    );
    // Too short to make a wave: under 1 cm/s, where a 5-module caterpillar makes > 1 cm/s.
    assert!(tail.speed_m_s < 0.01, "the tail progresses: {} m/s", tail.speed_m_s);
    let body = run
        .parts
        .iter()
        .find(|p| p.modules.len() == 5)
        .unwrap_or_else(|| panic!("no body"));
    assert!(roles(body).contains(&"scorpion head"), "{:?}", roles(body));
}

/// A user's robot file.
fn user_robot(text: &str) -> Topology {
    Topology::from_yaml(text, "user file", &ModuleCatalog::builtin()).unwrap_or_else(|e| panic!("{e}"))
}

/// A caterpillar written back to front (each connection names the module behind first) with
/// its middle module rolled 90°: in the simulator the tilt sensors read that module on its
/// side from its pose, and the map (the bus alone, no physics) finds it pitched too.
#[test]
fn a_caterpillar_written_back_to_front_finds_its_pitched_module() {
    let text = "name: backwards\nmodules:\n  - {name: m1, kind: cube}\n  - {name: m2, kind: cube}\n  \
                - {name: m3, kind: cube}\n  - {name: m4, kind: cube}\n  - {name: m5, kind: cube}\n\
                connections:\n  - {from: m2.F, to: m1.B}\n  - {from: m3.F, to: m2.B, roll_deg: 90}\n  \
                - {from: m4.F, to: m3.B, roll_deg: -90}\n  - {from: m5.F, to: m4.B}\n";
    let want = [
        "caterpillar front end",
        "caterpillar middle",
        "pitched",
        "caterpillar middle",
        "caterpillar rear end",
    ];
    let robot = user_robot(text);
    let run = run_robot(&robot, None, 8.0, &[], HormoneSettings::default());
    let roles: Vec<&str> = run.modules.iter().map(|(_, _, r)| r.as_str()).collect();
    assert_eq!(roles, want, "{:?}", run.modules);
    let mut bus = modbot_app::organism::bus_of(&robot, HormoneSettings::default()).unwrap_or_else(|e| panic!("{e}"));
    bus.run(30);
    let mapped: Vec<&str> = (0..5).filter_map(|i| bus.module(i).map(|m| m.role().name())).collect();
    assert_eq!(mapped, want);
}

/// Any tree of cubes a user writes is an organism: a T (a spine of four, a branch of two off
/// the second's R, the last joined L to F) maps each module's type from its joins as the file
/// states them (the neighbour's side code per connector, B + 8F + 64R + 512L), each module
/// takes a role, and it runs in the simulator.
#[test]
fn a_user_written_tree_of_cubes_maps_and_runs() {
    let joins = [
        ("a1", "B", "a2", "F"),
        ("a2", "B", "a3", "F"),
        ("a3", "B", "a4", "F"),
        ("a2", "R", "b1", "F"),
        ("b1", "B", "b2", "L"),
    ];
    let names = ["a1", "a2", "a3", "a4", "b1", "b2"];
    let mut text = String::from("name: tee\nmodules:\n");
    for n in names {
        text += &format!("  - {{name: {n}, kind: cube}}\n");
    }
    text += "connections:\n";
    for (a, pa, b, pb) in joins {
        text += &format!("  - {{from: {a}.{pa}, to: {b}.{pb}}}\n");
    }
    let code = |s: &str| "BFRL".find(s).map(|i| i as u16 + 1).unwrap_or(0);
    let weight = |s: &str| 8u16.pow("BFRL".find(s).unwrap_or(0) as u32);
    let want: Vec<(String, u16)> = names
        .iter()
        .map(|n| {
            let t = joins
                .iter()
                .map(|(a, pa, b, pb)| {
                    if a == n {
                        weight(pa) * code(pb)
                    } else if b == n {
                        weight(pb) * code(pa)
                    } else {
                        0
                    }
                })
                .sum();
            (n.to_string(), t)
        })
        .collect();
    let run = run_robot(&user_robot(&text), None, 8.0, &[], HormoneSettings::default());
    let got: Vec<(String, u16)> = run.modules.iter().map(|(n, t, _)| (n.clone(), *t)).collect();
    assert_eq!(got, want);
    assert_eq!(
        got[1].1,
        2 + 8 + 64 * 2,
        "a2: its B on an F, its F on a B, its R on an F"
    );
    assert!(run.modules.iter().all(|(_, _, r)| r != "alone"), "{:?}", run.modules);
    assert!(run.samples.len() > 10 && run.report.speed_m_s.is_finite());
}

/// Faults naming what is not there, or falling off the wave periods, are refused.
#[test]
fn bad_faults_are_refused() {
    for (fault, text) in [
        (Fault::parse_cut("20:m1-m3"), "not joined"),
        (Fault::parse_cut("20:m1-m9"), "no module `m9`"),
        (Fault::parse_remove("21:m2"), "whole number"),
        (Fault::parse_remove("2:m2"), "whole number"),
        (Fault::parse_remove("38:m2"), "whole number"),
    ] {
        let fault = fault.unwrap_or_else(|e| panic!("{e}"));
        let e = refusal(40.0, &[fault]);
        assert!(e.contains(text), "{text}: {e}");
    }
    for bad in ["m1-m2", "x:m1-m2", "inf:m1-m2", "20:m1"] {
        let e = Fault::parse_cut(bad).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("--cut") && e.contains("TIME:MODULE-MODULE"), "{bad}: {e}");
    }
}
