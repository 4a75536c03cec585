//! The strategic mission through the robot interface's ROS 2 binding (issue 50): the six
//! modules of the embedded simulator served on the topics and services of records 0062 and
//! 0063 (`ModuleServer`), the mission reading and commanding them only through
//! `RosModules`, with the network's faults on both sides — every reading and command
//! 0–20 ms late (a best-effort reading overtaken by a later one dropped, a reliable one held
//! for the one before it), 1 % of the best-effort readings lost and the reliable ones' losses
//! sent again. In one process on the in-memory bus, at simulation
//! speed; the same binding over DDS between processes is sim_node's and mission_node's.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use std::path::PathBuf;

use modbot_app::embedded_mission::{mission_modules, run_mission_staged};
use modbot_app::mission::{MissionSettings, REACHED_M, searched_configurations, seeded_layout};
use modbot_core::Scenario;
use modbot_ros::faults::Faults;
use modbot_ros::module_server::BusStage;

fn mission() -> Scenario {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../worlds/strategic_mission.yaml");
    Scenario::load(&path).unwrap()
}

/// Seeds 8 and 14, one test each so that the harness runs them side by side. MODBOT_SEED
/// and MODBOT_FAULTS measure other seeds and faults with the same test
/// (bench/bus_mission_sweep.sh).
#[test]
fn the_mission_reaches_the_target_through_the_ros_binding_from_seed_8() {
    seeded(8);
}

#[test]
fn the_mission_reaches_the_target_through_the_ros_binding_from_seed_14() {
    seeded(14);
}

fn seeded(default_seed: u64) {
    let seed = std::env::var("MODBOT_SEED")
        .map_or(Ok(default_seed), |s| s.parse())
        .unwrap();
    let world = seeded_layout(&mission(), seed).unwrap();
    let settings = MissionSettings::default();
    let faults =
        Faults::parse(&std::env::var("MODBOT_FAULTS").unwrap_or("latency_ms=0..20,loss=0.01,seed=7".into())).unwrap();
    let mut stage = BusStage::new(mission_modules(&world, &settings).unwrap(), faults).unwrap();
    let wall = std::time::Instant::now();
    let report = run_mission_staged(&mut stage, &world, &settings, &mut searched_configurations, &mut |p| {
        eprintln!(
            "[{:6.1} – {:6.1} s] {} {}: {}",
            p.start_s, p.end_s, p.phase, p.outcome, p.detail
        )
    })
    .unwrap();
    let seen = stage.faults_seen();
    let lost: u64 = seen.values().map(|s| s.lost).sum();
    let resent: u64 = seen.values().map(|s| s.resent).sum();
    let stale: u64 = seen.values().map(|s| s.stale).sum();
    eprintln!(
        "wall {:.1} s, simulated {:.1} s; final distance {:.3} m, heading error {:.1}°; \
         on the mission's side {lost} readings lost, {resent} sent again, {stale} overtaken and dropped",
        wall.elapsed().as_secs_f64(),
        report.sim_s,
        report.final_distance_m,
        report.final_heading_error_deg
    );
    assert!(report.failure.is_none(), "{:?}", report.failure);
    assert!(
        report.reached && report.final_distance_m <= REACHED_M,
        "{:.3} m",
        report.final_distance_m
    );
    assert!(
        report.final_heading_error_deg.abs() <= 10.0,
        "{:.1}°",
        report.final_heading_error_deg
    );
    // The faults were there: readings lost, overtaken, and sent again.
    assert!(lost > 0 && resent > 0 && stale > 0, "{seen:?}");
}
