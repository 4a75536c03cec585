//! Friction estimation on the embedded simulator (seed-000 §6.2, Lua `estimate_friction`,
//! decision record 0046): a lone wheel-foot module walks five forward low-velocity steps
//! through the gait driver on the thesis's terrains and bands the mean of its force
//! sensor's step maxima. Every figure is printed.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use std::path::PathBuf;

use modbot_app::friction::{FrictionWalk, estimate_friction};
use modbot_app::{load_robot, load_world};
use modbot_core::ModuleCatalog;
use modbot_planner::friction::{BandEdges, MEASURED_STEPS, band};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn estimate(world: &str) -> (f64, FrictionWalk) {
    let w = load_world(Some(&root().join(format!("worlds/{world}.yaml")))).unwrap();
    let t = load_robot("wheelfoot", &ModuleCatalog::builtin()).unwrap();
    let walk = estimate_friction(t, &w, BandEdges::Thesis).unwrap_or_else(|e| panic!("{world}: {e}"));
    (w.ground.friction, walk)
}

/// On the μ = 1.0, 0.6 and 0.2 worlds the estimate is the world's μ; the three mean
/// readings are apart by more than a band's width, each step's maximum is within 2 % of
/// the others (the estimate is not one lucky sample), and the module walked its steps.
#[test]
fn the_estimate_is_the_band_of_the_worlds_mu() {
    let mut means = Vec::new();
    for world in ["wheelfoot_mu1", "wheelfoot_mu06", "wheelfoot_mu02"] {
        let (mu, walk) = estimate(world);
        let e = &walk.estimate;
        eprintln!(
            "{world:<15} μ {mu:.1}: mean reading {:.4} → μ {:?} (Lua edges: {:?}); step maxima {:?}; \
             walked {:.4} m in {:.2} s",
            e.mean,
            e.mu,
            band(e.mean, BandEdges::Lua),
            e.maxima.iter().map(|m| format!("{m:.4}")).collect::<Vec<_>>(),
            walk.walked_m,
            walk.time_s
        );
        assert_eq!(e.mu, Some(mu), "{world}: mean reading {:.4}", e.mean);
        assert_eq!(e.maxima.len(), MEASURED_STEPS);
        let (lo, hi) = e
            .maxima
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), m| (l.min(*m), h.max(*m)));
        assert!(hi - lo < 0.02 * e.mean, "{world}: step maxima {:?}", e.maxima);
        // Five steps walked (all five strokes read), forward.
        assert_eq!(walk.raw.len(), 5, "{world}");
        assert!(walk.walked_m > 5.0 * 0.005, "{world}: walked {:.4} m", walk.walked_m);
        means.push(e.mean);
    }
    // Ordered as μ, each step apart by more than the 0.6 band's width's half (0.10).
    assert!(means[0] - means[1] > 0.1 && means[1] - means[2] > 0.1, "{means:?}");
}

/// A robot that is not a lone wheel-foot module is refused, naming what is missing.
#[test]
fn only_a_lone_wheel_foot_module_estimates() {
    let w = load_world(Some(&root().join("worlds/wheelfoot_mu1.yaml"))).unwrap();
    let t = load_robot("quadruped", &ModuleCatalog::builtin()).unwrap();
    let e = estimate_friction(t, &w, BandEdges::Thesis).unwrap_err();
    assert!(
        e.contains("m1_back_joint1") && e.contains("lone wheel-foot module"),
        "{e}"
    );
}
