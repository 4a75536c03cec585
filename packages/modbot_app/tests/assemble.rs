//! Assembly on the embedded simulator (seed-000 §5.2; decision record 0048): the six lone
//! modules of the strategic mission's world take their roles, walk to their staging and
//! pre-connection points with the lone module's position controller, dock port to port and
//! become a quadruped that stands and trots, or a wheeled vehicle that drives.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use std::path::PathBuf;

use modbot_app::assemble::{Configuration, Fleet, LATCH, SIMULATED_MU1, assemble, fleet_simulator};
use modbot_core::Scenario;
use modbot_planner::assembly::{StagingOrigin, distribute_roles};
use modbot_planner::sequencer::Pose2;
use modbot_sim::{Drive, Servo};

fn mission() -> Scenario {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../worlds/strategic_mission.yaml");
    Scenario::load(&path).unwrap()
}

fn run(configuration: Configuration) {
    let world = mission();
    let mut sim = fleet_simulator(&world).unwrap();
    let fleet = Fleet::of(&sim).unwrap();
    sim.advance_to(0.5).unwrap();
    let poses: Vec<Pose2> = (0..6).map(|i| fleet.pose(&sim, i)).collect();
    let roles = distribute_roles(&poses, StagingOrigin::DetPoint).unwrap();
    let wall = std::time::Instant::now();
    let out = assemble(&mut sim, &fleet, &roles, configuration, SIMULATED_MU1);
    eprintln!("wall {:.1} s", wall.elapsed().as_secs_f64());
    let out = out.unwrap_or_else(|e| panic!("{e}"));
    for r in &out.roles {
        eprintln!(
            "Role#{} (Module#{}): staged {:.1} s, pre-connection {:.1} s ({:.4} m off), docked {:.1} s, fit {:.4} m {:.2}° {:.2}°, {} cycles, wheel roll {:.1}°, FJ {:.1}°",
            r.role,
            r.module + 1,
            r.staged_s,
            r.pre_connection_s,
            r.stop_error_m,
            r.docked_s,
            r.fit.distance_m,
            r.fit.axis_deg,
            r.fit.roll_deg,
            r.cycles,
            r.wheel_roll_deg,
            r.fj_at_dock_deg
        );
    }
    eprintln!(
        "complete at {:.1} s, Role#1 drifted {:.4} m, end {:.1} s",
        out.complete_s, out.role1_drift_m, out.end_s
    );
    assert_eq!(out.roles.len(), 5);
    for r in &out.roles {
        assert!(r.fit.distance_m <= LATCH.position_m, "{r:?}");
    }
    assert_eq!(sim.link_groups().len(), 1, "all six modules move as one tree");
}

#[test]
#[ignore = "issue 15, work in progress (record 0048): Role#5's port misses Role#2's by 5.8 cm at docking"]
fn six_modules_assemble_into_a_quadruped() {
    run(Configuration::Quadruped);
}

/// A FrontJoint switches between the wheel's speed mode and the hip's servo at run time and
/// then does what the new drive says; a free joint, or a switch to no motor, is refused.
#[test]
fn a_front_joint_switches_between_speed_and_servo() {
    let world = mission();
    let mut sim = fleet_simulator(&world).unwrap();
    let fleet = Fleet::of(&sim).unwrap();
    let fj = fleet.modules[0].joints.fj;
    let speed = sim.drives()[fj];
    assert!(matches!(speed, Drive::Velocity { .. }), "{speed:?}");
    let servo = Drive::Position(Servo {
        kp: 8.6,
        max_speed: 6.0,
        max_torque: 0.5,
    });
    sim.advance_to(0.3).unwrap();
    sim.set_drive(fj, servo).unwrap();
    // The switch holds the current angle: nothing moves.
    assert!((sim.targets()[fj] - sim.joint_positions()[fj]).abs() < 1e-12);
    let mut targets = sim.targets().to_vec();
    targets[fj] = sim.joint_positions()[fj] + 0.5;
    sim.set_targets(&targets).unwrap();
    sim.advance_to(1.8).unwrap();
    let err = targets[fj] - sim.joint_positions()[fj];
    assert!(err.abs() < 0.02, "the servo reached within {err} rad");
    sim.set_drive(fj, speed).unwrap();
    assert_eq!(sim.targets()[fj], 0.0);
    let e = sim.set_drive(fj, Drive::Free).unwrap_err().to_string();
    assert!(e.contains("m1_front_joint") && e.contains("motor"), "{e}");
}
