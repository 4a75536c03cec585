//! The strategic-planning mission end to end on the embedded simulator (seed-000 §6,
//! issue 15; decision record 0049): from the shipped layout and three seeded ones, the six
//! modules sense, take roles, assemble the quadruped, pass over the ground obstacle,
//! reassemble as the wheeled vehicle, pass under the lath and reach the target, in the
//! order of phases the source observed (spec §6.7).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use std::path::PathBuf;

use modbot_app::mission::{
    MissionReport, MissionSettings, PASS_OVER_FACING_DEG, REACHED_M, run_mission, seeded_layout,
};
use modbot_app::scan;
use modbot_core::Scenario;

fn mission() -> Scenario {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../worlds/strategic_mission.yaml");
    Scenario::load(&path).unwrap()
}

/// The phases the source observed (spec §6.7), as the mission names them.
const ORDER: [&str; 14] = [
    "friction",
    "scan",
    "modelling",
    "roles",
    "plan",
    "orient",
    "row 1: assembly quadruped",
    "row 1: quadruped drive to ground_obstacle",
    "row 2: quadruped pass over ground_obstacle",
    "row 3: quadruped drive to ground_obstacle",
    "row 4: reassembly wheeled",
    "row 4: wheeled drive to lath",
    "row 5: wheeled pass under lath",
    "row 6: wheeled drive to target",
];

fn run(world: &Scenario) -> MissionReport {
    let wall = std::time::Instant::now();
    let report = run_mission(world, &MissionSettings::default(), &mut |p| {
        eprintln!(
            "[{:6.1} – {:6.1} s] {} {}: {}",
            p.start_s, p.end_s, p.phase, p.outcome, p.detail
        )
    })
    .unwrap();
    let wall = wall.elapsed().as_secs_f64();
    eprintln!(
        "{}: wall {wall:.1} s, simulated {:.1} s (real-time factor {:.1}), final distance {:.3} m, failure {:?}",
        world.name,
        report.sim_s,
        report.sim_s / wall,
        report.final_distance_m,
        report.failure
    );
    report
}

fn check(report: &MissionReport) {
    assert!(report.failure.is_none(), "{}: {:?}", report.world, report.failure);
    assert!(
        report.reached && report.final_distance_m <= REACHED_M,
        "{}: {:.3} m from the target",
        report.world,
        report.final_distance_m
    );
    // Issue 49: within 10° of the last row's heading too (measured within 1.1° over seeds
    // 1–45, `modbot mission --layout-seed N`, summary.json's final_heading_error_deg).
    assert!(
        report.final_heading_error_deg.abs() <= 10.0,
        "{}: {:.1}° off the target heading",
        report.world,
        report.final_heading_error_deg
    );
    let phases: Vec<&str> = report.phases.iter().map(|p| p.phase.as_str()).collect();
    assert_eq!(phases, ORDER, "{}", report.world);
    // The execution's states as they changed (issue 49): in time order, through orienting,
    // the assembly, the pass-over's cycles, the reassembly and the drives, ending done.
    let states: Vec<&str> = report.timeline.iter().map(|(_, s)| s.as_str()).collect();
    assert!(report.timeline.windows(2).all(|w| w[0].0 <= w[1].0));
    let mut from = 0;
    for want in [
        "orienting",
        "row 1: assembly quadruped: gathering",
        "row 1: assembly quadruped: assembled",
        "row 2: pass-over 1, cycles",
        "row 4: reassembly wheeled: feet down",
        "row 6: goto",
        "done",
    ] {
        let at = states[from..]
            .iter()
            .position(|s| s.contains(want))
            .unwrap_or_else(|| panic!("{}: no state `{want}` after {from} in {states:?}", report.world));
        from += at;
    }
    assert!(report.phases.iter().all(|p| p.outcome == "ok" && p.end_s >= p.start_s));
    assert_eq!(report.searched_configurations, ["quadruped", "wheeled"]);
    // The configurations were localised by their cameras, within 5 cm of the truth (measured
    // 0.1–3.7 cm over the shipped layout and seeds 1, 3, 9; the rows stop within 10 cm).
    assert_eq!(
        report.localisation_error_m.len(),
        6,
        "{:?}",
        report.localisation_error_m
    );
    assert!(
        report.localisation_error_m.iter().all(|e| *e < 0.05),
        "{}: {:?}",
        report.world,
        report.localisation_error_m
    );
    // The modules walking to their staging points were localised by their own cameras:
    // five in the assembly, the four legs in the reassembly; in Role#1's frame, within 5 cm
    // (measured 0.1–1.5 cm over the shipped layout and seeds 1, 3, 9; the staging points are
    // 0.1–0.3 m from the pre-connection ones).
    eprintln!(
        "{}: cameras at the staging points off by {:?} m",
        report.world, report.staging_localisation_error_m
    );
    assert_eq!(
        report.staging_localisation_error_m.len(),
        9,
        "{:?}",
        report.staging_localisation_error_m
    );
    assert!(
        report.staging_localisation_error_m.iter().all(|e| *e < 0.05),
        "{}: {:?}",
        report.world,
        report.staging_localisation_error_m
    );
    // The docks, in time order: the quadruped's five, its four legs let go at one instant,
    // the wheeled vehicle's four (Roles #1 and #2 stay joined).
    let actions: Vec<&str> = report.docks.iter().map(|d| d.action).collect();
    assert_eq!(
        actions,
        [["attach"; 5].as_slice(), &["detach"; 4], &["attach"; 4]].concat()
    );
    assert!(report.docks.windows(2).all(|w| w[0].time_s <= w[1].time_s));
    let roles = &report.roles;
    for d in &report.docks {
        assert_ne!(d.module, d.partner_module, "{d:?}");
        assert!(d.dock.starts_with(&format!(
            "role{}.{}-",
            1 + roles.iter().position(|&m| m == d.module).unwrap(),
            d.port
        )));
    }
    assert_eq!(report.trajectories.len(), 6);
    for t in &report.trajectories {
        assert!(t.len() as f64 >= report.sim_s * 9.0, "{} samples", t.len());
    }
    // The quadruped began its pass-over facing the way (the obstacle's +x, yaw 0 here):
    // within 5° of it, turned on the spot at the approach point if the walk left it off
    // (record 0055). The heading is the compass's at the instant the sequencer found the row
    // reached, as the row's detail reports it: the trajectories are sampled every 0.1 s,
    // and the turn on the spot (up to 60°/s over 0.1 s within a step) can still be under
    // way then (seed 1's last sample before the row's end once read −9.3°, the row −4.7°).
    let approach = report
        .phases
        .iter()
        .find(|p| p.phase == "row 1: quadruped drive to ground_obstacle")
        .unwrap();
    let heading: f64 = approach
        .detail
        .split("heading ")
        .nth(1)
        .and_then(|h| h.split('°').next())
        .and_then(|h| h.parse().ok())
        .unwrap_or_else(|| panic!("no heading in {:?}", approach.detail));
    assert!(
        heading.abs() <= PASS_OVER_FACING_DEG,
        "{}: the pass-over began {heading:.1}° off the way",
        report.world
    );
}

#[test]
fn the_mission_reaches_the_target_from_the_shipped_layout() {
    check(&run(&mission()));
}

/// Seeded layouts reach the target on the robot interface (record 0059: each module sees
/// only its own sensors). Seed 2 ended in the reassembly, a latch refused at 8.6° against a
/// body that leant on a twisted weld, until keyed faces closed onto their key (record 0060);
/// seed 3's reassembly waited on a loaded foot joint at 0.11° until the feet were down within
/// a servo's error (the seed sweep's count is in record 0060). Seeds 2 and 3 run through the
/// robot interface's ROS 2 binding with network faults instead (modbot_ros's
/// tests/bus_mission.rs): the same behaviours with the binding and the faults between them
/// and this simulator. One test per seed, so that the harness runs them side by side.
fn seeded(seed: u64) {
    let w = seeded_layout(&mission(), seed).unwrap();
    eprintln!(
        "seed {seed}: {:?}",
        w.robot_starts
            .iter()
            .map(|s| (s.xyz[0], s.xyz[1], s.yaw_deg))
            .collect::<Vec<_>>()
    );
    check(&run(&w));
}

#[test]
fn the_mission_reaches_the_target_from_seed_8() {
    seeded(8);
}

#[test]
fn the_mission_reaches_the_target_from_seed_9() {
    seeded(9);
}

#[test]
fn the_mission_reaches_the_target_from_seed_14() {
    seeded(14);
}

/// A mission that cannot go on ends with the phase and the reason, its phases so far and
/// its trajectories kept: with the target moved 1.5 m further (beyond every camera's 2 m)
/// the scan does not see it and the plan cannot be made. (Seed 19's first pass-over used to
/// throw the quadruped back over itself and end the mission there, naming it capsized,
/// record 0055; since the hips were fitted, record 0057, no layout of seeds 1–52 capsizes a
/// pass-over, and the case has no fixture.)
#[test]
fn a_failed_mission_ends_with_its_phase_and_reason() {
    let mut far = mission();
    far.goal = Some([4.0, 0.0]);
    let target = far.markers.iter_mut().find(|m| m.name == "target").unwrap();
    target.position_m = [4.0, 0.0];
    let r = run(&far);
    let failure = r.failure.clone().unwrap_or_default();
    assert!(failure.starts_with("plan: "), "{failure}");
    assert!(failure.contains("did not see the target"), "{failure}");
    assert!(!r.reached);
    let last = r.phases.last().unwrap();
    assert_eq!((last.phase.as_str(), last.outcome.as_str()), ("plan", "failed"));
    assert!(r.phases[..r.phases.len() - 1].iter().all(|p| p.outcome == "ok"));
    assert!(r.trajectories.iter().all(|t| !t.is_empty()));
}

/// The same seed draws the same layout; another seed another one; Module#1 is nearest the
/// centroid.
#[test]
fn seeded_layouts_are_reproducible() {
    let world = mission();
    let a = seeded_layout(&world, 7).unwrap();
    let b = seeded_layout(&world, 7).unwrap();
    let c = seeded_layout(&world, 8).unwrap();
    assert_eq!(a.robot_starts, b.robot_starts);
    assert_ne!(a.robot_starts, c.robot_starts);
    let n = a.robot_starts.len() as f64;
    let cx = a.robot_starts.iter().map(|s| s.xyz[0]).sum::<f64>() / n;
    let cy = a.robot_starts.iter().map(|s| s.xyz[1]).sum::<f64>() / n;
    let d: Vec<f64> = a
        .robot_starts
        .iter()
        .map(|s| (s.xyz[0] - cx).hypot(s.xyz[1] - cy))
        .collect();
    assert!(d[1..].iter().all(|&x| x > d[0]), "{d:?}");
}

/// Every seeded layout has a camera within reach of the target, measured from where the
/// camera pans (the `mast` link's origin, whose x the layout's constant must be), not from
/// the module's reference point: seeds 3, 5, 8 and 14 used to put the only module near the
/// target facing away from it, its lens 2.03 m from a 2 m camera.
#[test]
fn seeded_layouts_have_a_camera_within_reach_of_the_target() {
    let kind = modbot_core::ModuleCatalog::builtin().kind("wheelfoot").unwrap().clone();
    let mast = kind.link_poses_at_zero()[kind.link_index("mast").unwrap()]
        .translation
        .vector;
    assert!(
        (mast.x - scan::PAN_AXIS_AHEAD_M).abs() < 1e-12 && mast.y.abs() < 1e-12,
        "{mast}"
    );
    let world = mission();
    let goal = world.goal.unwrap();
    for seed in 1..=40 {
        let w = seeded_layout(&world, seed).unwrap();
        let nearest = w
            .robot_starts
            .iter()
            .map(|s| {
                let (sn, c) = s.yaw_deg.to_radians().sin_cos();
                let lens = scan::PAN_AXIS_AHEAD_M + scan::LENS_M[0];
                (s.xyz[0] + lens * c - goal[0]).hypot(s.xyz[1] + lens * sn - goal[1])
            })
            .fold(f64::INFINITY, f64::min);
        assert!(
            nearest <= scan::RANGE_M - 0.05,
            "seed {seed}: nearest lens {nearest:.3} m from the target"
        );
    }
}
