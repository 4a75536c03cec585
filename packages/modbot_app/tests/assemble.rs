//! Assembly on the embedded simulator (seed-000 §5.2; decision record 0048): the six lone
//! modules of the strategic mission's world take their roles, walk to their staging and
//! pre-connection points with the lone module's position controller, dock port to port and
//! become a quadruped that stands and trots, or a wheeled vehicle that drives.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use std::path::PathBuf;

use modbot_app::assemble::{
    AssemblyOutcome, Configuration, Fleet, LATCH, Rereferenced, SIMULATED_MU1, assemble, drive_for, fleet_simulator,
    port, reassemble,
};
use modbot_behaviours::assembly::{Assembly, AssemblyOrder, AssemblyState};
use modbot_core::Scenario;
use modbot_core::{ModuleCatalog, Topology};
use modbot_gaits::Controller;
use modbot_gaits::modular::quadruped::{QuadGait, QuadWalk};
use modbot_gaits::modular::wheeled::{WheelCommand, WheeledDrive, WheeledPose};
use modbot_gaits::modular::{ModuleJoints, yaw_of};
use modbot_planner::assembly::{RoleAssignment, StagingOrigin, distribute_roles};
use modbot_planner::sequencer::Pose2;
use modbot_sim::{DockTolerance, SimRobot, SimSettings, Simulator};
use modbot_sim::{Drive, Servo};
use nalgebra::{Point3, Vector3};

fn mission() -> Scenario {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../worlds/strategic_mission.yaml");
    Scenario::load(&path).unwrap()
}

fn run(configuration: Configuration) {
    let world = mission();
    let mut sim = fleet_simulator(&world).unwrap();
    let fleet = Fleet::of(&sim).unwrap();
    sim.advance_to(0.5).unwrap();
    let lying_com_z = sim.fleet_com().z;
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
    // Assembled from lone modules, the wheeled vehicle drives as the shipped one does.
    if configuration == Configuration::Wheeled {
        let drove = drive_straight(&mut sim, &fleet, &roles, &out);
        let shipped = shipped_wheeled();
        eprintln!(
            "assembled: CoM {:.4} m, drove {:.4} m in 3 s; shipped: CoM {:.4} m, {:.4} m",
            drove.com_z, drove.advance_m, shipped.com_z, shipped.advance_m
        );
        assert!(
            (drove.com_z - shipped.com_z).abs() < 0.003,
            "the assembled vehicle's CoM is at {:.4} m, the shipped one's at {:.4} m",
            drove.com_z,
            shipped.com_z
        );
        assert!(
            (drove.advance_m / shipped.advance_m - 1.0).abs() < 0.2,
            "the assembled vehicle drove {:.4} m, the shipped one {:.4} m",
            drove.advance_m,
            shipped.advance_m
        );
    }
    // Assembled from lone modules, the quadruped stands and trots as the shipped one does.
    if configuration == Configuration::Quadruped {
        let joints = fleet.role_joints(&roles);
        let n = sim.joint_names().len();
        let base = fleet.modules[roles.modules[0]].foot;
        let mut stand = Rereferenced::new(
            Box::new(QuadWalk::new("stand", joints, n, QuadGait::Stand)),
            &fleet,
            &roles,
            &out,
        );
        let stood = drive(&mut sim, &mut stand, base, 2.0);
        let mut trot = Rereferenced::new(
            Box::new(QuadWalk::new(
                "trot",
                joints,
                n,
                QuadGait::Trot {
                    s: 30.0,
                    r: 0.0,
                    l: 0.0,
                },
            )),
            &fleet,
            &roles,
            &out,
        );
        let trotted = drive(&mut sim, &mut trot, base, 6.0);
        let (shipped_stood, shipped_trotted) = shipped_quadruped();
        eprintln!(
            "assembled: CoM {:.4} m standing, trot {:.4} m in {} cycles; shipped: CoM {:.4} m, trot {:.4} m in {} cycles",
            stood.com_z,
            trotted.advance_m,
            trotted.cycles,
            shipped_stood.com_z,
            shipped_trotted.advance_m,
            shipped_trotted.cycles
        );
        // The whole fleet's CoM (record 0049: session 22 compared Module#1's alone and saw
        // a 1.1 cm gap that was Role#1's own CoM); lying as the lone modules did, 2.6 cm up.
        eprintln!("lying modules: CoM {lying_com_z:.4} m");
        assert!(stood.com_z > lying_com_z + 0.04, "it stood up");
        assert!(
            (stood.com_z - shipped_stood.com_z).abs() < 0.003,
            "the assembled quadruped's CoM stands at {:.4} m, the shipped one's at {:.4} m",
            stood.com_z,
            shipped_stood.com_z
        );
        let per_cycle = |d: &Drove| d.advance_m / d.cycles.max(1) as f64;
        assert!(trotted.cycles >= 3, "{trotted:?}");
        assert!(
            (per_cycle(&trotted) / per_cycle(&shipped_trotted) - 1.0).abs() < 0.3,
            "the assembled quadruped trots {:.4} m a cycle, the shipped one {:.4}",
            per_cycle(&trotted),
            per_cycle(&shipped_trotted)
        );
    }
}

/// What driving a controller did.
#[derive(Debug)]
struct Drove {
    /// The CoM's height at the end, m.
    com_z: f64,
    /// How far the base's reference point moved along its starting heading, m.
    advance_m: f64,
    /// Cycles completed.
    cycles: usize,
}

fn drive(sim: &mut Simulator, c: &mut dyn Controller, base: usize, seconds: f64) -> Drove {
    let start = sim.link_poses()[base];
    let yaw = yaw_of(&start);
    drive_for(sim, c, base, seconds).unwrap();
    let end = sim.link_poses()[base];
    let d = end.translation.vector - start.translation.vector;
    Drove {
        com_z: sim.fleet_com().z,
        advance_m: d.x * yaw.cos() + d.y * yaw.sin(),
        cycles: c.completed_cycles(),
    }
}

/// Wheel speed of the driving checks, deg/s.
const WHEEL_DEG_S: f64 = 180.0;

/// An assembled wheeled vehicle driving straight for 3 s at [`WHEEL_DEG_S`].
fn drive_straight(sim: &mut Simulator, fleet: &Fleet, roles: &RoleAssignment, outcome: &AssemblyOutcome) -> Drove {
    let joints = fleet.role_joints(roles);
    let n = sim.joint_names().len();
    let base = fleet.modules[roles.modules[0]].foot;
    let mut straight = Rereferenced::new(
        Box::new(WheeledDrive::new(
            "drive",
            joints,
            n,
            WheeledPose::Normal,
            WheelCommand::Straight(WHEEL_DEG_S),
            1.0,
        )),
        fleet,
        roles,
        outcome,
    );
    drive(sim, &mut straight, base, 3.0)
}

/// The shipped wheeled vehicle (config/robots/wheeled.yaml) driving straight 3 s on the
/// mission's ground, after 3 s taking its pose.
fn shipped_wheeled() -> Drove {
    let catalog = ModuleCatalog::builtin();
    let topology = Topology::resolve("wheeled", &catalog).unwrap();
    let robot = SimRobot::from_topology(&topology).unwrap();
    let mut world = mission();
    world.obstacles.clear();
    let mut sim = Simulator::new(&robot, &world, SimSettings::for_scenario(&world)).unwrap();
    let names = sim.joint_names().to_vec();
    let joints = [1, 2, 3, 4, 5, 6].map(|r| ModuleJoints::find(&format!("role{r}"), &names).unwrap());
    let base = sim.link_names().iter().position(|l| l == "role1_foot").unwrap();
    let n = names.len();
    let mut stand = WheeledDrive::new("stand", joints, n, WheeledPose::Normal, WheelCommand::Stop, 1.0);
    drive(&mut sim, &mut stand, base, 3.0);
    let mut straight = WheeledDrive::new(
        "drive",
        joints,
        n,
        WheeledPose::Normal,
        WheelCommand::Straight(WHEEL_DEG_S),
        1.0,
    );
    drive(&mut sim, &mut straight, base, 3.0)
}

/// The shipped quadruped (config/robots/quadruped.yaml) standing 2 s then trotting 6 s on the
/// mission's ground.
fn shipped_quadruped() -> (Drove, Drove) {
    let catalog = ModuleCatalog::builtin();
    let topology = Topology::resolve("quadruped", &catalog).unwrap();
    let robot = SimRobot::from_topology(&topology).unwrap();
    let mut world = mission();
    world.obstacles.clear();
    let mut sim = Simulator::new(&robot, &world, SimSettings::for_scenario(&world)).unwrap();
    let names = sim.joint_names().to_vec();
    let joints = [1, 2, 3, 4, 5, 6].map(|r| ModuleJoints::find(&format!("role{r}"), &names).unwrap());
    let base = sim.link_names().iter().position(|l| l == "role1_foot").unwrap();
    let n = names.len();
    let stood = drive(
        &mut sim,
        &mut QuadWalk::new("stand", joints, n, QuadGait::Stand),
        base,
        2.0,
    );
    let trotted = drive(
        &mut sim,
        &mut QuadWalk::new(
            "trot",
            joints,
            n,
            QuadGait::Trot {
                s: 30.0,
                r: 0.0,
                l: 0.0,
            },
        ),
        base,
        6.0,
    );
    (stood, trotted)
}

#[test]
fn six_modules_assemble_into_a_quadruped() {
    run(Configuration::Quadruped);
}

#[test]
fn six_modules_assemble_into_a_wheeled_vehicle() {
    run(Configuration::Wheeled);
}

/// Reassembly (§5.2): the standing quadruped puts its feet down, its legs let go and take
/// three high steps backward, and they assemble into the wheeled vehicle with Roles #1 and
/// #2 still joined; the vehicle then drives as the shipped one does.
#[test]
fn the_quadruped_reassembles_into_a_wheeled_vehicle() {
    let world = mission();
    let mut sim = fleet_simulator(&world).unwrap();
    let fleet = Fleet::of(&sim).unwrap();
    sim.advance_to(0.5).unwrap();
    let poses: Vec<Pose2> = (0..6).map(|i| fleet.pose(&sim, i)).collect();
    let roles = distribute_roles(&poses, StagingOrigin::DetPoint).unwrap();
    let quad =
        assemble(&mut sim, &fleet, &roles, Configuration::Quadruped, SIMULATED_MU1).unwrap_or_else(|e| panic!("{e}"));
    let leg_at = |sim: &Simulator, role: usize| fleet.pose(sim, roles.modules[role - 1]);
    let before: Vec<Pose2> = (3..=6).map(|r| leg_at(&sim, r)).collect();
    let wall = std::time::Instant::now();
    let mut samples = 0usize;
    let wheeled = reassemble(
        &mut sim,
        &fleet,
        &roles,
        Configuration::Quadruped,
        Configuration::Wheeled,
        SIMULATED_MU1,
        None,
        &mut |_| samples += 1,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "reassembled in {:.1} s simulated ({:.1} s wall), from {:.1} s",
        wheeled.end_s - quad.end_s,
        wall.elapsed().as_secs_f64(),
        quad.end_s
    );
    for r in &wheeled.roles {
        eprintln!(
            "Role#{}: staged {:.1} s, docked {:.1} s, fit {:.4} m {:.2}°",
            r.role, r.staged_s, r.docked_s, r.fit.distance_m, r.fit.axis_deg
        );
    }
    // Roles #3–#6 docked again, Role#2 stayed; one tree; observed every step.
    let mut docked: Vec<usize> = wheeled.roles.iter().map(|r| r.role).collect();
    docked.sort_unstable();
    assert_eq!(docked, vec![3, 4, 5, 6]);
    assert_eq!(sim.link_groups().len(), 1);
    assert!(
        samples as f64 >= (wheeled.end_s - quad.end_s) * 100.0 - 1.0,
        "{samples}"
    );
    // The legs moved away from where they stood.
    for (r, b) in (3..=6).zip(before) {
        let a = leg_at(&sim, r);
        assert!((a.x - b.x).hypot(a.y - b.y) > 0.05, "Role#{r} did not move");
    }
    // It drives as the shipped vehicle does.
    let drove = drive_straight(&mut sim, &fleet, &roles, &wheeled);
    let shipped = shipped_wheeled();
    assert!((drove.com_z - shipped.com_z).abs() < 0.003, "{drove:?} {shipped:?}");
    assert!(
        (drove.advance_m / shipped.advance_m - 1.0).abs() < 0.2,
        "{drove:?} {shipped:?}"
    );
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

/// Two wheel-foot modules docked foot to foot (Role#2's `BS` on Role#1's `BF`, the
/// quadruped's and the wheeled vehicle's spine) stay together under a 5 N pull; detached,
/// the same pull takes one away; then docking them again is refused with the gap.
#[test]
fn docked_modules_hold_a_5_n_pull_and_let_go_when_detached() {
    let mut world = mission();
    world.obstacles.clear();
    world.markers.clear();
    world.robot_starts.truncate(2);
    world.robot_starts[0].xyz = [0.0, 0.0, 0.0];
    world.robot_starts[0].yaw_deg = 0.0;
    // Plate behind plate, 8 mm apart (their boxes would overlap at 0).
    world.robot_starts[1].xyz = [-0.008, 0.0, 0.0];
    world.robot_starts[1].yaw_deg = 180.0;
    let mut sim = fleet_simulator(&world).unwrap();
    let fleet = Fleet::of(&sim).unwrap();
    let catalog = ModuleCatalog::builtin();
    let a = port(&catalog, 0, "BF").unwrap();
    let b = port(&catalog, 1, "BS").unwrap();
    sim.advance_to(0.3).unwrap();
    let fit = sim.attach("spine", &a, &b, 0.0, &DockTolerance::default()).unwrap();
    assert!(fit.distance_m < 0.01, "{fit:?}");
    let gap = |sim: &Simulator| sim.port_fit(&a, &b, 0.0).unwrap().distance_m;
    // 5 N on module 2's body, straight away from module 1 (module 2 faces −x).
    let body = sim.links_of(1).find(|&l| sim.link_names()[l] == "m1_body").unwrap();
    let pull = Vector3::new(-5.0, 0.0, 0.0);
    sim.set_external_force(body, Point3::origin(), pull).unwrap();
    let start_b = fleet.pose(&sim, 1);
    sim.advance_to(2.3).unwrap();
    let moved = |sim: &Simulator| {
        let p = fleet.pose(sim, 1);
        (p.x - start_b.x).hypot(p.y - start_b.y)
    };
    let (held_gap, held_moved) = (gap(&sim), moved(&sim));
    sim.detach("spine").unwrap();
    sim.advance_to(4.3).unwrap();
    let (free_gap, free_moved) = (gap(&sim), moved(&sim));
    eprintln!(
        "docked: gap {held_gap:.4} m, module 2 moved {held_moved:.4} m in 2 s; detached: gap {free_gap:.4} m, moved {free_moved:.4} m"
    );
    // Welded as they met (8 mm): the gap stays, while the pull drags the pair along.
    assert!(
        (held_gap - fit.distance_m).abs() < 0.001,
        "docked modules parted from {} to {held_gap} m under 5 N",
        fit.distance_m
    );
    assert!(held_moved > 0.1, "the pull moved the docked pair only {held_moved} m");
    assert!(
        free_gap > 0.05,
        "detached, the pull took module 2 only {free_gap} m away"
    );
    sim.set_external_force(body, Point3::origin(), Vector3::zeros())
        .unwrap();
    let e = sim
        .attach("spine", &a, &b, 0.0, &DockTolerance::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("apart") && e.contains("m1_foot"), "{e}");
    // A force that is not finite, or on a link that does not exist, is refused by name.
    let e = sim
        .set_external_force(body, Point3::origin(), Vector3::new(f64::NAN, 0.0, 0.0))
        .unwrap_err()
        .to_string();
    assert!(e.contains("m1_body") && e.contains("not finite"), "{e}");
    assert!(sim.set_external_force(9999, Point3::origin(), pull).is_err());
}

/// The foot of module `i` in the embedded binding's simulator (the truth a test reads).
fn foot_of(m: &modbot_sim::EmbeddedModules, i: usize) -> usize {
    let sim = m.simulator();
    sim.links_of(i).find(|&l| sim.link_names()[l] == "m1_foot").unwrap()
}

/// Runs `c` on the assembled modules through `joints` for `seconds` (10 ms ticks).
fn drive_modules(
    m: &mut modbot_sim::EmbeddedModules,
    joints: &modbot_behaviours::assembly::ConfigurationJoints,
    c: &mut dyn Controller,
    base_module: usize,
    seconds: f64,
) -> Drove {
    use modbot_gaits::Observation;
    let base = foot_of(m, base_module);
    let start = m.simulator().link_poses()[base];
    let yaw = yaw_of(&start);
    let t0 = m.simulator().time();
    let sensors = std::collections::BTreeMap::new();
    let mut out = vec![modbot_gaits::JointTarget::Position(0.0); joints.count()];
    let mut k = 0;
    while (k as f64) * 0.01 < seconds {
        let (q, v) = joints.read(&*m).unwrap();
        let obs = Observation {
            time: k as f64 * 0.01,
            positions: &q,
            velocities: &v,
            base: m.simulator().link_poses()[base],
            sensors: &sensors,
        };
        c.step(0.01, &obs, &mut out);
        joints.command(m, &out).unwrap();
        k += 1;
        m.advance_to(t0 + k as f64 * 0.01).unwrap();
    }
    let end = m.simulator().link_poses()[base];
    let d = end.translation.vector - start.translation.vector;
    Drove {
        com_z: m.simulator().fleet_com().z,
        advance_m: d.x * yaw.cos() + d.y * yaw.sin(),
        cycles: c.completed_cycles(),
    }
}

/// The mission world's six modules on the embedded binding (standard sensor models, seed
/// 7), settled; their roles from their true start poses; an order for `configuration` with
/// the world's tagged objects as the landmarks and the true starts as the modelled ones.
fn interface_fleet(configuration: &str) -> (modbot_sim::EmbeddedModules, RoleAssignment, AssemblyOrder, f64) {
    use modbot_app::embedded::{NOISE, tagged_objects, wheelfoot_modules};
    use modbot_sim::embedded::SensorModels;
    let world = mission();
    let mut m = wheelfoot_modules(&world, SensorModels::standard(), NOISE, 7).unwrap();
    m.advance_to(0.5).unwrap();
    let truth: Vec<Pose2> = (0..6)
        .map(|i| {
            let p = m.simulator().link_poses()[foot_of(&m, i)];
            Pose2 {
                x: p.translation.x,
                y: p.translation.y,
                yaw: yaw_of(&p),
            }
        })
        .collect();
    let lying_com_z = m.simulator().fleet_com().z;
    let roles = distribute_roles(&truth, StagingOrigin::DetPoint).unwrap();
    let order = AssemblyOrder {
        configuration: configuration.into(),
        roles: roles.modules,
        table: SIMULATED_MU1,
        landmarks: tagged_objects(&world)
            .into_iter()
            .map(|o| (o.name, [o.point[0], o.point[1]]))
            .collect(),
        role1_xy: [truth[roles.modules[0]].x, truth[roles.modules[0]].y],
        starts: truth.iter().enumerate().map(|(i, p)| (i, [p.x, p.y])).collect(),
        connected: Vec::new(),
    };
    (m, roles, order, lying_com_z)
}

/// What one tick of a state machine says: its state, and its end (Ok, or Err with why).
type MachineTick = (String, Option<Result<(), String>>);

/// Ticks a state machine on `m` every 10 ms until `tick` says it is done (Ok) or failed
/// (panics), printing its state whenever it changes (up to a parenthesis); at most
/// `limit_s` simulated seconds.
fn run_machine(
    m: &mut modbot_sim::EmbeddedModules,
    limit_s: f64,
    tick: &mut dyn FnMut(&mut modbot_sim::EmbeddedModules) -> MachineTick,
) -> f64 {
    let t0 = m.simulator().time();
    let mut t = t0;
    let mut last = String::new();
    loop {
        let (now, end) = tick(m);
        if now.split(" (").next() != last.split(" (").next() {
            eprintln!("{t:7.2} s  {now}");
        }
        last = now;
        match end {
            Some(Ok(())) => return t,
            Some(Err(e)) => panic!("{e}"),
            None => {}
        }
        assert!(t - t0 < limit_s, "not done in {limit_s} s: {last}");
        t += 0.01;
        m.advance_to(t).unwrap();
    }
}

/// Runs an assembly on `m` to its end.
fn run_assembly(m: &mut modbot_sim::EmbeddedModules, assembly: &mut Assembly) -> f64 {
    run_machine(m, 900.0, &mut |m| {
        let state = assembly.tick(m).clone();
        let roles: Vec<String> = assembly
            .role_states()
            .iter()
            .map(|(r, s)| format!("#{r} {s}"))
            .collect();
        let end = match &state {
            AssemblyState::Assembled => Some(Ok(())),
            AssemblyState::Failed { .. } => Some(Err(state.to_string())),
            _ => None,
        };
        (format!("{state} | {}", roles.join("; ")), end)
    })
}

/// Every role of `configuration` latched to the face its role table names, on both sides,
/// and the simulator holding one tree.
fn all_latched(m: &modbot_sim::EmbeddedModules, roles: &RoleAssignment, configuration: &str) {
    use modbot_behaviours::interface::{ConnectorState, Modules};
    for role in 2..=6 {
        let target = modbot_planner::assembly::role_target(configuration, role).unwrap();
        let own = m.module_ref(roles.modules[role - 1]).unwrap();
        let partner = format!("m{}", roles.modules[target.partner_role - 1] + 1);
        let status = own.connector(target.port).unwrap();
        assert_eq!(status.state, ConnectorState::Latched, "Role#{role}");
        let faces = modbot_behaviours::docking::face_names(&format!("{partner}/{}", target.partner_port)).unwrap();
        assert!(
            faces.contains(status.partner.as_ref().unwrap()),
            "Role#{role}: {status:?}"
        );
    }
    assert_eq!(m.simulator().link_groups().len(), 1, "all six modules move as one tree");
}

/// The assembly as a state machine on the robot interface (issue 49, record 0059): the six
/// modules of the mission's world, each seeing only its own sensors (its camera on the
/// modelled landmarks and the other modules' DetPoints, its IMU, its docking sensors and
/// connectors), assemble; every role latches by its connector to the face the role table
/// names, the simulator holds one tree, and the configuration stands, trots or drives as the
/// shipped robot does (the independent answer: the robot file's own kinematics).
fn assemble_on_the_interface(configuration: &str) {
    let (mut m, roles, order, lying_com_z) = interface_fleet(configuration);
    let mut assembly = Assembly::new(&m, order).unwrap();
    let wall = std::time::Instant::now();
    let t = run_assembly(&mut m, &mut assembly);
    eprintln!(
        "assembled ({configuration}) at {:.1} s, complete {:.1} s, wall {:.1} s",
        t,
        assembly.complete_s(),
        wall.elapsed().as_secs_f64()
    );
    for r in assembly.records() {
        eprintln!("{r:?}");
    }
    all_latched(&m, &roles, configuration);
    // Role#2's foot where its docking sensor saw the faces latch, from Role#1's (the
    // configuration's lock-on carries Role#2's camera by it): horizontally within 5 mm of the
    // truth after the stand (the readings' σ is 2 mm, the weld yields a little under the
    // standing load, mostly in z); the catalog's ports alone leave the latch's gap out.
    let foot = |r: usize| m.simulator().link_poses()[foot_of(&m, roles.modules[r])];
    let truth = (foot(0).inverse() * foot(1)).translation.vector;
    let seen = assembly.role2_foot_in_role1().unwrap().translation.vector;
    let model = modbot_behaviours::configuration::role2_foot_in_role1(configuration)
        .unwrap()
        .translation
        .vector;
    let off = |p: &Vector3<f64>| (truth - p).xy().norm();
    eprintln!(
        "Role#2's foot: {:.4} m from where the docking sensor put it, {:.4} m from the catalog's ({truth:?} {seen:?})",
        off(&seen),
        off(&model)
    );
    assert!(off(&seen) < 0.005, "{truth:?} {seen:?}");
    let joints = assembly.configuration_joints().unwrap().clone();
    let base = roles.modules[0];
    if configuration == "quadruped" {
        let stood_com = m.simulator().fleet_com().z;
        let mut trot = QuadWalk::new(
            "trot",
            joints.role_joints(),
            joints.count(),
            QuadGait::Trot {
                s: 30.0,
                r: 0.0,
                l: 0.0,
            },
        );
        let trotted = drive_modules(&mut m, &joints, &mut trot, base, 6.0);
        let (shipped_stood, shipped_trotted) = shipped_quadruped();
        eprintln!(
            "on the interface: CoM {stood_com:.4} m standing (lying {lying_com_z:.4}), trot {:.4} m in {} cycles; shipped: CoM {:.4} m, trot {:.4} m in {} cycles",
            trotted.advance_m, trotted.cycles, shipped_stood.com_z, shipped_trotted.advance_m, shipped_trotted.cycles
        );
        assert!(
            (stood_com - shipped_stood.com_z).abs() < 0.003,
            "standing CoM {stood_com:.4} m, the shipped quadruped's {:.4} m",
            shipped_stood.com_z
        );
        let per_cycle = |d: &Drove| d.advance_m / d.cycles.max(1) as f64;
        assert!(trotted.cycles >= 3, "{trotted:?}");
        assert!(
            (per_cycle(&trotted) / per_cycle(&shipped_trotted) - 1.0).abs() < 0.3,
            "trots {:.4} m a cycle, the shipped quadruped {:.4}",
            per_cycle(&trotted),
            per_cycle(&shipped_trotted)
        );
    } else {
        drives_as_shipped(&mut m, &joints, base);
    }
}

/// The assembled wheeled vehicle drives straight 3 s as the shipped one does.
fn drives_as_shipped(
    m: &mut modbot_sim::EmbeddedModules,
    joints: &modbot_behaviours::assembly::ConfigurationJoints,
    base: usize,
) {
    let mut straight = WheeledDrive::new(
        "drive",
        joints.role_joints(),
        joints.count(),
        WheeledPose::Normal,
        WheelCommand::Straight(WHEEL_DEG_S),
        1.0,
    );
    let drove = drive_modules(m, joints, &mut straight, base, 3.0);
    let shipped = shipped_wheeled();
    eprintln!(
        "on the interface: CoM {:.4} m, drove {:.4} m in 3 s; shipped: CoM {:.4} m, {:.4} m",
        drove.com_z, drove.advance_m, shipped.com_z, shipped.advance_m
    );
    assert!((drove.com_z - shipped.com_z).abs() < 0.003, "{drove:?} {shipped:?}");
    assert!(
        (drove.advance_m / shipped.advance_m - 1.0).abs() < 0.2,
        "{drove:?} {shipped:?}"
    );
}

/// Reassembly on the robot interface (§5.2, record 0059): the quadruped assembled on the
/// interface puts its feet down, its legs open their connectors and step out backward, and
/// they assemble the wheeled vehicle with Roles #1 and #2 still joined; the legs moved, every
/// role is latched as the wheeled table says, and the vehicle drives as the shipped one does.
#[test]
fn the_quadruped_reassembles_into_a_wheeled_vehicle_on_the_robot_interface() {
    use modbot_behaviours::reassembly::{Reassembly, ReassemblyState};
    let (mut m, roles, order, _) = interface_fleet("quadruped");
    let mut assembly = Assembly::new(&m, order.clone()).unwrap();
    let t_quad = run_assembly(&mut m, &mut assembly);
    let leg_at = |m: &modbot_sim::EmbeddedModules, role: usize| {
        m.simulator().link_poses()[foot_of(m, roles.modules[role - 1])]
            .translation
            .vector
    };
    let before: Vec<_> = (3..=6).map(|r| leg_at(&m, r)).collect();
    let mut again = Reassembly::new(
        "quadruped",
        AssemblyOrder {
            configuration: "wheeled".into(),
            starts: Default::default(),
            role1_xy: assembly.role1_estimate().unwrap(),
            ..order
        },
    )
    .unwrap();
    let t = run_machine(&mut m, 900.0, &mut |m| {
        let state = again.tick(m).clone();
        let roles: Vec<String> = again
            .assembly()
            .map(|a| a.role_states().iter().map(|(r, s)| format!("#{r} {s}")).collect())
            .unwrap_or_default();
        let end = match &state {
            ReassemblyState::Assembled => Some(Ok(())),
            ReassemblyState::Failed { .. } => Some(Err(state.to_string())),
            _ => None,
        };
        (format!("{state} | {}", roles.join("; ")), end)
    });
    eprintln!("reassembled in {:.1} s from {t_quad:.1} s", t - t_quad);
    all_latched(&m, &roles, "wheeled");
    for (r, b) in (3..=6).zip(before) {
        let a = leg_at(&m, r);
        assert!((a - b).xy().norm() > 0.05, "Role#{r} did not move");
    }
    let joints = again.assembly().unwrap().configuration_joints().unwrap().clone();
    drives_as_shipped(&mut m, &joints, roles.modules[0]);
}

#[test]
fn six_modules_assemble_into_a_quadruped_on_the_robot_interface() {
    assemble_on_the_interface("quadruped");
}

#[test]
fn six_modules_assemble_into_a_wheeled_vehicle_on_the_robot_interface() {
    assemble_on_the_interface("wheeled");
}
