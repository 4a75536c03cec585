//! Digital-hormone organisms in the embedded simulator (seed-003 §9.1; decision 0029): the
//! modules' own controllers, IR by ray casts, nothing scripted from outside.

use modbot_app::organism::{OrganismSpec, run_organism};
use modbot_app::{EvalOptions, load_world};
use modbot_core::ModuleCatalog;

fn speed(text: &str, pitched: bool, no_tail: bool) -> f64 {
    let spec = OrganismSpec::parse(text, pitched, no_tail).unwrap_or_else(|e| panic!("{e}"));
    let robot = spec
        .topology(&ModuleCatalog::builtin())
        .unwrap_or_else(|e| panic!("{e}"));
    let world = load_world(None).unwrap_or_else(|e| panic!("{e}"));
    let run = run_organism(&robot, &world, 30.0, &EvalOptions::default(), &mut |_, _| {})
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    eprintln!("{}: {:?} {:?}", spec.name(), run.report.speed_m_s, run.modules);
    run.report.speed_m_s
}

/// The seed's straight-line ordering, the part our physics reproduces: the caterpillar is
/// fastest, a pitched module slows it, the scorpion is slower still but moves.
#[test]
fn the_caterpillar_outruns_its_pitched_self_and_the_scorpion() {
    let plain = speed("caterpillar:10", false, false);
    let pitched = speed("caterpillar:10", true, false);
    let scorpion = speed("scorpion", false, false);
    assert!(plain > pitched, "{plain} vs pitched {pitched}");
    assert!(pitched > scorpion, "{pitched} vs scorpion {scorpion}");
    assert!(scorpion > 0.005, "the scorpion strokes forward: {scorpion} m/s");
}

#[test]
fn bad_run_lengths_are_refused() {
    let spec = OrganismSpec::parse("caterpillar:4", false, false).unwrap_or_else(|e| panic!("{e}"));
    let robot = spec
        .topology(&ModuleCatalog::builtin())
        .unwrap_or_else(|e| panic!("{e}"));
    let world = load_world(None).unwrap_or_else(|e| panic!("{e}"));
    for s in [1.0, f64::NAN, 1e9] {
        let e = run_organism(&robot, &world, s, &EvalOptions::default(), &mut |_, _| {})
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("--seconds"), "{s}: {e}");
    }
}
