//! The strategic-planning mission end to end on the embedded simulator (seed-000 §6,
//! issue 15; decision record 0049).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use std::path::PathBuf;

use modbot_app::mission::{MissionSettings, run_mission};
use modbot_core::Scenario;

fn mission() -> Scenario {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../worlds/strategic_mission.yaml");
    Scenario::load(&path).unwrap()
}

#[test]
fn the_mission_reaches_the_target() {
    let world = mission();
    let wall = std::time::Instant::now();
    let report = run_mission(&world, &MissionSettings::default(), &mut |p| {
        eprintln!(
            "[{:7.1} – {:7.1} s] {} {}: {}",
            p.start_s, p.end_s, p.phase, p.outcome, p.detail
        )
    })
    .unwrap();
    eprintln!(
        "wall {:.1} s, sim {:.1} s, reached {}, final distance {:.3} m, failure {:?}",
        wall.elapsed().as_secs_f64(),
        report.sim_s,
        report.reached,
        report.final_distance_m,
        report.failure
    );
    assert!(report.reached, "{:?}", report.failure);
}
