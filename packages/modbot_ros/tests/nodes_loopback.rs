//! planner_node and executive_node run loops end to end on the in-memory loopback
//! transport (no DDS, no network namespace): each node runs its real `run` in a thread on a
//! shared `LoopbackBus`, and a probe node on the same bus publishes inputs, reads outputs,
//! moves the clock and reads the captured log. tests/mission.rs keeps the same graph on DDS.
#![allow(clippy::unwrap_used, missing_docs)]

mod loopback_support;

use std::time::Duration;

use loopback_support::{logged, s, spawn, wait_for, wait_log};

use modbot_msgs::geometry_msgs::msg::PoseStamped;
use modbot_msgs::modbot_msgs::msg::{GaitCommand, StrategicPlan, SubGoal};
use modbot_msgs::modbot_msgs::srv::{Plan_Request, Plan_Response};
use modbot_msgs::nav_msgs::msg::{OccupancyGrid, Odometry, Path};
use modbot_msgs::std_msgs::msg::String as StringMsg;
use modbot_msgs::visualization_msgs::msg::{Marker, MarkerArray};
use modbot_ros::loopback::{LoopbackBus, identity};
use modbot_ros::nodes::executive::{self, ExecutiveNodeConfig};
use modbot_ros::nodes::planner::{self, PlannerNodeConfig};
use modbot_ros::params::{ParamValue, resolve};
use modbot_ros::{Client, Level, Pub, Qos, Sub, Transport};

fn goal(x: f64, y: f64) -> PoseStamped {
    let mut g = PoseStamped::default();
    g.header.frame_id = "map".into();
    g.pose.position.x = x;
    g.pose.position.y = y;
    g
}

fn odom(x: f64, y: f64, yaw: f64) -> Odometry {
    let mut o = Odometry::default();
    o.pose.pose.position.x = x;
    o.pose.pose.position.y = y;
    o.pose.pose.orientation.z = (yaw / 2.0).sin();
    o.pose.pose.orientation.w = (yaw / 2.0).cos();
    o
}

/// Claims to be geometry_msgs/PoseStamped (and nav_msgs/Odometry below) but is four bytes:
/// garbage for any reader of the real type, as on the wire.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct FakePose {
    word: u32,
}

impl modbot_msgs::RosMessage for FakePose {
    const PACKAGE: &'static str = "geometry_msgs";
    const NAME: &'static str = "PoseStamped";
    const FIELDS: &'static [(&'static str, &'static str)] = &[("word", "uint32")];
    const DEFINITION: &'static str = "uint32 word\n";
}

#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct FakeOdom {
    word: u8,
}

impl modbot_msgs::RosMessage for FakeOdom {
    const PACKAGE: &'static str = "nav_msgs";
    const NAME: &'static str = "Odometry";
    const FIELDS: &'static [(&'static str, &'static str)] = &[("word", "uint8")];
    const DEFINITION: &'static str = "uint8 word\n";
}

/// 20 × 20 cells of 0.1 m from (−1, −1), a wall at column 10 with a gap in the top row.
fn walled_map() -> OccupancyGrid {
    let mut g = OccupancyGrid::default();
    g.info.resolution = 0.1;
    g.info.width = 20;
    g.info.height = 20;
    g.info.origin.position.x = -1.0;
    g.info.origin.position.y = -1.0;
    g.info.origin.orientation.w = 1.0;
    g.data = vec![0; 400];
    for y in 0..19 {
        g.data[y * 20 + 10] = 100;
    }
    g
}

#[test]
fn planner_parameters_are_named() {
    for (k, v, want) in [
        ("mode", s("guess"), "guess"),
        (
            "available",
            ParamValue::StrArray(vec!["hovercraft".into()]),
            "hovercraft",
        ),
        ("start_configuration", s("snake"), "start_configuration"),
        ("scenario", s("/nonexistent.yaml"), "/nonexistent.yaml"),
        ("capabilities", s("/nonexistent/caps.yaml"), "/nonexistent/caps.yaml"),
        ("occupied_threshold", ParamValue::Int(500), "occupied_threshold"),
    ] {
        let e = resolve::<PlannerNodeConfig>(&[], &[(k.into(), v)])
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{k}: {e}");
    }
}

/// A map and a goal give a grid plan on `plan` through the wall's gap; the `plan` service
/// answers the same and returns typed failures; garbage goals, maps and odometry are
/// dropped with a rate-limited log line and the node keeps planning.
#[test]
fn the_planner_plans_on_a_map_and_survives_garbage() {
    let bus = LoopbackBus::new();
    let mut probe = bus.node(identity("probe", "/"));
    let plans = probe.subscription::<Path>("/m/plan", Qos::Reliable).unwrap();
    let strategic = probe
        .subscription::<StrategicPlan>("/m/strategic_plan", Qos::Latched)
        .unwrap();
    let map_pub = probe.publisher::<OccupancyGrid>("/m/map", Qos::Latched).unwrap();
    let goal_pub = probe.publisher::<PoseStamped>("/m/goal_pose", Qos::Reliable).unwrap();
    let fake_goal = probe.publisher::<FakePose>("/m/goal_pose", Qos::Reliable).unwrap();
    let odom_pub = probe.publisher::<Odometry>("/m/odom", Qos::SensorData).unwrap();
    map_pub.publish(walled_map()).unwrap(); // latched: the node gets it when it subscribes
    let node = spawn::<PlannerNodeConfig>(&bus, "planner_node", &[], planner::run);
    wait_log(&bus, "/m/planner_node", "map 20 × 20");
    wait_log(&bus, "/m/planner_node", "goals on /m/goal_pose");

    odom_pub.publish(odom(-0.95, -0.95, 0.0)).unwrap();
    let path = wait_for(|| {
        goal_pub.publish(goal(0.95, -0.95)).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        plans.take()
    })
    .expect("a plan")
    .unwrap();
    assert_eq!(path.header.frame_id, "map");
    assert!(path.poses.iter().any(|p| p.pose.position.y > 0.85), "through the gap");
    let first = &path.poses[0].pose.position;
    assert!(
        (first.x + 0.95).abs() < 1e-9 && (first.y + 0.95).abs() < 1e-9,
        "from the odometry"
    );
    assert!(strategic.take().is_none(), "no strategic plan without a scenario");

    // The service: a plan from a given start, and a typed failure.
    let client = probe
        .client::<Plan_Request, Plan_Response>("/m/plan", "modbot_msgs", "Plan")
        .unwrap();
    let call = |start: Option<[f64; 2]>, to: [f64; 2]| -> Plan_Response {
        let mut req = Plan_Request {
            goal: goal(to[0], to[1]),
            ..Default::default()
        };
        if let Some(s) = start {
            req.start = goal(s[0], s[1]);
        }
        let id = client.call(&req).unwrap();
        wait_for(|| client.response(&id)).expect("an answer").unwrap()
    };
    let ok = call(Some([0.95, 0.95]), [-0.95, 0.95]);
    assert!(ok.success && ok.path.poses.len() == 20, "{} poses", ok.path.poses.len());
    let bad = call(None, [5.0, 5.0]);
    assert!(!bad.success && bad.message.contains("outside"), "{}", bad.message);

    // Garbage: undecodable goals, a non-finite goal, a malformed map, NaN odometry.
    for _ in 0..20 {
        fake_goal.publish(FakePose { word: 7 }).unwrap();
        goal_pub.publish(goal(f64::NAN, 0.0)).unwrap();
    }
    let mut broken = walled_map();
    broken.data.truncate(7);
    map_pub.publish(broken).unwrap();
    odom_pub.publish(odom(f64::NAN, 0.0, 0.0)).unwrap();
    wait_log(&bus, "/m/planner_node", "map refused");
    wait_log(&bus, "/m/planner_node", "odometry with a non-finite position dropped");
    wait_for(|| (bus.dropped("/m/goal_pose") > 0 || logged(&bus, "/m/planner_node", "goal") > 0).then_some(()));
    std::thread::sleep(Duration::from_millis(100));
    let n = logged(&bus, "/m/planner_node", "dropped") - 1; // minus the odometry line
    assert_eq!(
        n,
        1,
        "one line per key and period while the clock stands: {:#?}",
        bus.logs()
    );
    // A period later the next one says how many were suppressed.
    bus.advance(6.0);
    fake_goal.publish(FakePose { word: 7 }).unwrap();
    wait_log(&bus, "/m/planner_node", "more like it suppressed");
    // And the node still plans, on the last good map.
    let _ = std::iter::from_fn(|| plans.take()).count();
    let again = wait_for(|| {
        goal_pub.publish(goal(0.95, -0.95)).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        plans.take()
    });
    assert!(again.is_some_and(|p| p.is_ok()), "no plan after garbage");
    assert!(node.alive());
    // A parameter change is reported, not applied.
    bus.set_param("/m/planner_node", "frame_id", s("odom")).unwrap();
    wait_log(&bus, "/m/planner_node", "takes effect at the next start");
    assert!(
        bus.set_param("/m/planner_node", "mode", s("guess"))
            .unwrap_err()
            .contains("guess")
    );
}

/// Sub-goals from a strategic plan and odometry become GaitCommands: a fake snake (unicycle
/// kinematics: `straight` ahead, `turning` at a yaw rate ∝ O_h) is driven through two rows
/// to the end; garbage plans and odometry are dropped and logged; a row the snake cannot do
/// times out into a replan request on `goal_pose`.
#[test]
fn the_executive_drives_a_fake_snake_through_its_plan() {
    let bus = LoopbackBus::new();
    let mut probe = bus.node(identity("probe", "/"));
    let cmds = probe
        .subscription::<GaitCommand>("/m/gait/command", Qos::Reliable)
        .unwrap();
    let status = probe
        .subscription::<StringMsg>("/m/executive/status", Qos::Reliable)
        .unwrap();
    let replans = probe
        .subscription::<PoseStamped>("/m/goal_pose", Qos::Reliable)
        .unwrap();
    let plan_pub = probe
        .publisher::<StrategicPlan>("/m/strategic_plan", Qos::Latched)
        .unwrap();
    let odom_pub = probe.publisher::<Odometry>("/m/odom", Qos::SensorData).unwrap();
    let fake_odom = probe.publisher::<FakeOdom>("/m/odom", Qos::SensorData).unwrap();
    let row = |c: &str, x: f64, y: f64| SubGoal {
        configuration: c.into(),
        reference: "target".into(),
        target: goal(x, y).pose,
        ..Default::default()
    };
    let node = spawn::<ExecutiveNodeConfig>(
        &bus,
        "executive_node",
        &[
            ("configuration", s("snake")),
            // The fake publishes odometry only (no joint_states): steer base_link.
            ("pose_reference", s("base_link")),
            ("rate_hz", ParamValue::Double(100.0)),
            ("row_timeout_s", ParamValue::Double(60.0)),
            // The fake turns on the spot faster than a snake: a shorter window, less lag.
            ("pose_window_s", ParamValue::Double(0.5)),
        ],
        executive::run,
    );
    wait_log(&bus, "/m/executive_node", "waiting for a plan");

    // Garbage first: a plan with an unknown action, undecodable and non-finite odometry.
    let mut bad = StrategicPlan::default();
    bad.rows.push(row("snake", 1.0, 0.0));
    bad.rows[0].action = 9;
    plan_pub.publish(bad).unwrap();
    for _ in 0..10 {
        fake_odom.publish(FakeOdom { word: 1 }).unwrap();
        odom_pub.publish(odom(0.0, f64::NAN, 0.0)).unwrap();
    }
    wait_log(&bus, "/m/executive_node", "plan refused: row 1: unknown action 9");
    wait_log(&bus, "/m/executive_node", "odometry");
    assert!(cmds.take().is_none(), "nothing is driven without a plan and a pose");

    let plan = StrategicPlan {
        rows: vec![row("snake", 1.0, 0.0), row("snake", 1.0, 0.8)],
        ..Default::default()
    };
    plan_pub.publish(plan).unwrap();
    wait_log(&bus, "/m/executive_node", "plan of 2 rows");
    let (mut x, mut y, mut yaw) = (0.0f64, 0.0f64, 0.0f64);
    let mut drive: Option<GaitCommand> = None;
    let mut seen = Vec::new();
    let dt = 0.1;
    let mut done = false;
    for _ in 0..1500 {
        while let Some(c) = cmds.take() {
            let c = c.unwrap();
            if seen.last() != Some(&(c.gait.clone(), c.param_values.clone())) {
                seen.push((c.gait.clone(), c.param_values.clone()));
            }
            drive = Some(c);
        }
        if let Some(c) = drive.as_ref().filter(|c| !c.stop) {
            // Reverse backs along the same circle.
            let s = if c.direction == GaitCommand::DIRECTION_REVERSE {
                -1.0
            } else {
                1.0
            };
            let o_h = c.param_values.first().copied().unwrap_or(0.0);
            yaw += s * 0.03 * o_h * dt;
            x += s * 0.1 * yaw.cos() * dt;
            y += s * 0.1 * yaw.sin() * dt;
        }
        bus.advance(dt);
        odom_pub.publish(odom(x, y, yaw)).unwrap();
        if std::iter::from_fn(|| status.take()).any(|s| s.unwrap().data.starts_with("done")) {
            done = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    while let Some(c) = cmds.take() {
        drive = Some(c.unwrap());
    }
    assert!(done, "not done at ({x:.2}, {y:.2}, {yaw:.2}); commands {seen:?}");
    assert!((x - 1.0).hypot(y - 0.8) < 0.35, "ended at ({x:.2}, {y:.2})");
    assert_eq!(seen[0].0, "straight");
    assert!(
        seen.iter().any(|(g, p)| g == "turning" && p[0] > 0.0),
        "turns left to the second row: {seen:?}"
    );
    assert!(drive.is_some_and(|c| c.stop), "stops at the end");
    assert_eq!(
        logged(&bus, "/m/executive_node", "dropped"),
        1,
        "rate-limited: {:#?}",
        bus.logs()
    );

    // A row for another configuration holds the snake, then times out into a replan.
    let other = StrategicPlan {
        rows: vec![row("quadruped", 2.0, 3.0)],
        ..Default::default()
    };
    plan_pub.publish(other).unwrap();
    wait_log(&bus, "/m/executive_node", "cannot reassemble");
    let g = wait_for(|| {
        bus.advance(5.0);
        odom_pub.publish(odom(x, y, yaw)).unwrap();
        std::thread::sleep(Duration::from_millis(10));
        replans.take()
    })
    .expect("a replan request")
    .unwrap();
    assert_eq!([g.pose.position.x, g.pose.position.y], [2.0, 3.0]);
    assert!(node.alive());
    assert!(bus.logs().iter().all(|l| l.level <= Level::Warn), "{:#?}", bus.logs());
}

/// planner_node and executive_node on one bus: a goal becomes a strategic plan (with its
/// path and markers) and the executive starts driving towards it.
#[test]
fn planner_and_executive_chain_on_one_bus() {
    let bus = LoopbackBus::new();
    let flat = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../worlds/flat.yaml");
    let mut probe = bus.node(identity("probe", "/"));
    let cmds = probe
        .subscription::<GaitCommand>("/m/gait/command", Qos::Reliable)
        .unwrap();
    let markers = probe
        .subscription::<MarkerArray>("/m/plan_markers", Qos::Reliable)
        .unwrap();
    let plans = probe.subscription::<Path>("/m/plan", Qos::Reliable).unwrap();
    let goal_pub = probe.publisher::<PoseStamped>("/m/goal_pose", Qos::Reliable).unwrap();
    let odom_pub = probe.publisher::<Odometry>("/m/odom", Qos::SensorData).unwrap();
    let _planner = spawn::<PlannerNodeConfig>(
        &bus,
        "planner_node",
        &[
            ("scenario", s(&flat.display().to_string())),
            ("available", ParamValue::StrArray(vec!["snake".into()])),
            ("start_configuration", s("snake")),
        ],
        planner::run,
    );
    let _exec = spawn::<ExecutiveNodeConfig>(
        &bus,
        "executive_node",
        &[("pose_reference", s("base_link"))],
        executive::run,
    );
    wait_log(&bus, "/m/planner_node", "goals on /m/goal_pose");
    wait_log(&bus, "/m/executive_node", "waiting for a plan");
    odom_pub.publish(odom(0.0, 0.0, 0.0)).unwrap();
    goal_pub.publish(goal(0.5, 0.3)).unwrap();
    wait_log(&bus, "/m/executive_node", "plan of");
    let m = wait_for(|| markers.take()).expect("markers").unwrap();
    assert_eq!(m.markers[0].action, Marker::DELETEALL);
    let p = plans.take().expect("path").unwrap();
    let end = &p.poses.last().expect("poses").pose.position;
    assert!((end.x - 0.5).abs() < 0.1 && (end.y - 0.3).abs() < 0.1, "{end:?}");
    let c = wait_for(|| {
        bus.advance(0.1);
        odom_pub.publish(odom(0.0, 0.0, 0.0)).unwrap();
        std::thread::sleep(Duration::from_millis(10));
        std::iter::from_fn(|| cmds.take()).map(Result::unwrap).find(|c| !c.stop)
    })
    .expect("a gait command");
    // The goal is 31° to the left: turn left.
    assert!(c.gait == "turning" && c.param_values[0] > 0.0, "{c:?}");
}

/// Issue 19: every node binary answers `--help` (and `-h`) before `--ros-args` with its name,
/// a line on what it does and every parameter it declares, from the same declarations the
/// node validates against, and exits 0 without joining the graph.
#[test]
fn every_node_binary_prints_its_help() {
    let bins = [
        ("gait_node", env!("CARGO_BIN_EXE_gait_node")),
        ("sim_node", env!("CARGO_BIN_EXE_sim_node")),
        ("planner_node", env!("CARGO_BIN_EXE_planner_node")),
        ("executive_node", env!("CARGO_BIN_EXE_executive_node")),
        ("module_node", env!("CARGO_BIN_EXE_module_node")),
        ("teleop_node", env!("CARGO_BIN_EXE_teleop_node")),
        ("mission_node", env!("CARGO_BIN_EXE_mission_node")),
    ];
    assert_eq!(
        bins.iter().map(|b| b.0).collect::<Vec<_>>(),
        modbot_ros::NODES,
        "a node without a binary here"
    );
    for (exec, bin) in bins {
        for flag in ["--help", "-h"] {
            let o = std::process::Command::new(bin)
                .arg(flag)
                .output()
                .expect("run the node");
            let text = String::from_utf8_lossy(&o.stdout);
            assert!(
                o.status.success(),
                "{exec} {flag}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            assert!(text.starts_with(&format!("{exec}: ")), "{text}");
            for d in modbot_ros::node_declarations(exec).expect("declarations") {
                assert!(
                    text.lines()
                        .any(|l| l.split_whitespace().next() == Some(d.name) && l.contains(d.description)),
                    "{exec}: no row for `{}`:\n{text}",
                    d.name
                );
            }
        }
    }
}
