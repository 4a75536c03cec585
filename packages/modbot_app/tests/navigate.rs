//! The reactive loop closed on the default (native) engine, in one process: the executive's
//! pure pursuit (turning radius (5.1) as the robot's model, the body's mean heading) drives
//! a py:8 snake through the gait driver to goals all around it (decision record 0033).

use modbot_app::navigate::{BodyFrame, LoopRates, Navigator, turn_model};
use modbot_app::{SimSession, load_catalog, load_gaits, load_robot, load_world};
use modbot_core::Topology;
use modbot_planner::capabilities::Capabilities;
use modbot_planner::executive::{ExecutiveSettings, TurnModel};
use modbot_planner::sequencer::Pose2;
use modbot_sim::{Engine, SimSettings};

fn snake() -> Topology {
    load_robot("py:8", &load_catalog(None).expect("catalog")).expect("py:8")
}

fn navigator(engine: Engine) -> Navigator {
    let topology = snake();
    let world = load_world(None).expect("world");
    let session =
        SimSession::new(topology.clone(), &world, SimSettings::for_engine(engine, &world), 0).expect("session");
    let library = load_gaits(None).expect("gaits");
    let settings = ExecutiveSettings {
        turn: turn_model(&topology, &library).expect("turning model"),
        ..ExecutiveSettings::default()
    };
    Navigator::new(
        session,
        library,
        &settings,
        &Capabilities::builtin(),
        LoopRates::default(),
    )
    .expect("navigator")
}

fn distance(p: Pose2, g: [f64; 2]) -> f64 {
    (p.x - g[0]).hypot(p.y - g[1])
}

/// (5.1) for the shipped py:8 and turning gait: l = 0.576 m (8 × 72 mm), α_v = 30 / (2 sin 60°)
/// = 17.32°, w_n(17.32°) = 0.9772 → c = 2 l w_n / M = 0.1407 m (O_h 30° ↔ r = 0.269 m).
#[test]
fn the_turning_model_is_formula_5_1_of_the_shipped_snake() {
    let m = turn_model(&snake(), &load_gaits(None).expect("gaits")).expect("model");
    assert!((m.offset_per_curvature_m - 0.1407).abs() < 5e-4, "{m:?}");
    assert!(
        (1.0 / m.curvature(30.0) - 0.2687).abs() < 2e-3,
        "{}",
        1.0 / m.curvature(30.0)
    );
    let pp = load_robot("pp:8", &load_catalog(None).expect("catalog")).expect("pp:8");
    let e = turn_model(&pp, &load_gaits(None).expect("gaits")).expect_err("a pitch-pitch chain cannot turn");
    assert!(e.contains("turning"), "{e}");
    assert!(TurnModel::default().offset_per_curvature_m > 0.0);
}

/// The body frame is the mean of the links: a straight py:8 at rest has its centre half a
/// body ahead of base_link and its heading; bending the yaw joints by O_h turns the mean
/// heading by about half the arc (4 joints × O_h / 2), where base_link's does not move.
#[test]
fn the_body_frame_is_the_middle_of_the_arc() {
    let t = snake();
    let body = BodyFrame::new(&t);
    let base =
        nalgebra::Isometry3::translation(1.0, 2.0, 0.0) * nalgebra::UnitQuaternion::from_euler_angles(0.0, 0.0, 0.5);
    let n = body.joint_names().len();
    let p = body.pose(&base, &vec![0.0; n]).expect("pose");
    assert!((p.yaw - 0.5).abs() < 1e-9);
    let ahead = (p.x - 1.0) * 0.5f64.cos() + (p.y - 2.0) * 0.5f64.sin();
    assert!((0.2..0.35).contains(&ahead), "{ahead}");
    // Every yaw joint (axis vertical at rest) bent 10° to the left.
    let tree = modbot_core::LinkTree::new(&t);
    let rest = tree
        .forward(&vec![0.0; n], &nalgebra::Isometry3::identity())
        .expect("fk");
    let mut q = vec![0.0; n];
    for (k, axis) in tree.joint_axes(&rest).iter().enumerate() {
        if axis.z.abs() > 0.5 {
            q[k] = 10f64.to_radians() * axis.z.signum();
        }
    }
    assert_eq!(q.iter().filter(|a| **a != 0.0).count(), 4, "py:8 has four yaw joints");
    let bent = body.pose(&base, &q).expect("pose");
    let turned = (bent.yaw - 0.5).to_degrees();
    assert!((turned - 20.0).abs() < 6.0, "mean heading turned {turned}°");
    assert!(body.pose(&base, &q[1..]).is_err());
    q[0] = f64::NAN;
    assert!(body.pose(&base, &q).is_err());
}

/// Eight goals around the snake, at 0.5 and 0.8 m from its body's centre, each from a fresh
/// start: every one reached (the executive reports the plan done with the body within its
/// 0.10 m tolerance) within two simulated minutes, whatever the bearing.
#[test]
fn the_snake_reaches_goals_all_around_it_on_the_native_engine() {
    let mut times = Vec::new();
    for k in 0..8 {
        let mut nav = navigator(Engine::Native);
        let start = nav.body_pose().expect("pose");
        let bearing = f64::from(k) * 45f64.to_radians();
        let d = if k % 2 == 0 { 0.5 } else { 0.8 };
        let goal = [start.x + d * bearing.cos(), start.y + d * bearing.sin()];
        let row = nav.row_to("snake", goal);
        let o = nav.execute(&[row], 120.0).expect("run");
        println!(
            "goal at {:>3}°, {d} m: done {} in {:.1} s, body ends {:.3} m away",
            45 * k,
            o.done,
            o.time_s,
            distance(o.pose, goal)
        );
        assert!(o.done, "goal at {}°: {:?}", 45 * k, o.statuses);
        assert!(distance(o.pose, goal) < 0.11, "{:?}", o.pose);
        times.push(o.time_s);
    }
    // Behind is reached in reverse, not by a loop: no goal costs more than three times the
    // quickest (a 0.8 m goal straight ahead takes ~30 s).
    let quickest = times.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(times.iter().all(|t| *t < 4.0 * quickest), "{times:?}");
}

/// One after another, the four goals of modbot_ros's tests/mission.rs (which sends them over
/// DDS through planner_node, executive_node, gait_node and sim_node).
#[test]
fn the_snake_visits_four_goals_in_turn() {
    let mut nav = navigator(Engine::Native);
    for goal in [[0.75, 0.15], [0.45, 0.7], [-0.2, 0.35], [0.1, -0.35]] {
        let row = nav.row_to("snake", goal);
        let o = nav.execute(&[row], 150.0).expect("run");
        println!(
            "{goal:?}: done {} in {:.1} s, {:.3} m away",
            o.done,
            o.time_s,
            distance(o.pose, goal)
        );
        assert!(o.done && distance(o.pose, goal) < 0.11, "{goal:?}: {:?}", o.statuses);
    }
}
