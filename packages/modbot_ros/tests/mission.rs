//! The whole graph of the architecture's data flow, as separate processes on a private
//! network: a goal on `goal_pose` → planner_node → `strategic_plan` → executive_node →
//! `gait/command` → gait_node → `position_controller/commands` → sim_node → `odom` back to
//! the planner and the executive. The snake must arrive at four goals around it, on the
//! simulator's default (native) engine. And the `plan` service answers.

mod common;

use std::time::{Duration, Instant};

use common::*;
use modbot_app::Observed;
use modbot_app::navigate::BodyFrame;
use modbot_msgs::geometry_msgs::msg::PoseStamped;
use modbot_msgs::modbot_msgs::msg::StrategicPlan;
use modbot_msgs::modbot_msgs::srv::{Plan_Request, Plan_Response};
use modbot_msgs::nav_msgs::msg::{Odometry, Path};
use modbot_msgs::sensor_msgs::msg::JointState;
use modbot_msgs::std_msgs::msg::String as StringMsg;
use modbot_msgs::visualization_msgs::msg::MarkerArray;
use modbot_ros::dds::Wire;
use modbot_ros::{Pub, Qos, Sub, Transport};

fn flat() -> String {
    repo_root().join("worlds/flat.yaml").display().to_string()
}

#[test]
fn a_goal_pose_makes_the_snake_arrive_through_planner_executive_gait_and_sim() {
    if reexec_in_netns("a_goal_pose_makes_the_snake_arrive_through_planner_executive_gait_and_sim") {
        return;
    }
    for b in backends() {
        println!("== a_goal_pose_makes_the_snake_arrive_through_planner_executive_gait_and_sim on {b}");
        a_goal_pose_makes_the_snake_arrive_through_planner_executive_gait_and_sim_on(b);
    }
}

fn a_goal_pose_makes_the_snake_arrive_through_planner_executive_gait_and_sim_on(backend: &str) {
    let ns = ["--ros-args", "-r", "__ns:=/m"];
    let robot = ["-p", "robot:=py:8"];
    let sim_time = ["-p", "use_sim_time:=true"];
    // sim_node on its default engine, the native one (decision record 0033).
    let _sim = NodeProc::spawn_on(
        backend,
        sim_node(),
        &[&ns[..], &robot, &["-p", "real_time_factor:=4.0"]].concat(),
    );
    let gait = NodeProc::spawn_on(
        backend,
        gait_node(),
        &[&ns[..], &robot, &sim_time, &["-p", "gait:=''"]].concat(),
    );
    let planner = NodeProc::spawn_on(
        backend,
        env!("CARGO_BIN_EXE_planner_node"),
        &[
            &ns[..],
            &[
                "-p",
                &format!("scenario:={}", flat()),
                "-p",
                "available:=[snake]",
                "-p",
                "start_configuration:=snake",
            ],
        ]
        .concat(),
    );
    let exec = NodeProc::spawn_on(
        backend,
        env!("CARGO_BIN_EXE_executive_node"),
        &[
            &ns[..],
            &sim_time,
            &robot,
            // Pure pursuit of the body's pose (odom with joint_states) with the turning
            // radius (5.1) of py:8; arrival within 0.10 m of the body's centre.
            &["-p", "configuration:=snake", "-p", "position_tolerance_m:=0.10"],
        ]
        .concat(),
    );
    let mut probe = probe("mission_probe");
    let goal = probe
        .publisher::<PoseStamped>("/m/goal_pose", Qos::Reliable)
        .expect("goal");
    let odom = probe
        .subscription::<Odometry>("/m/odom", Qos::SensorData)
        .expect("odom");
    let joint_states = probe
        .subscription::<JointState>("/m/joint_states", Qos::SensorData)
        .expect("joint_states");
    let plan = probe
        .subscription::<StrategicPlan>("/m/strategic_plan", Qos::Latched)
        .expect("plan");
    let path = probe.subscription::<Path>("/m/plan", Qos::Reliable).expect("path");
    let markers = probe
        .subscription::<MarkerArray>("/m/plan_markers", Qos::Reliable)
        .expect("markers");
    let status = probe
        .subscription::<StringMsg>("/m/executive/status", Qos::Reliable)
        .expect("status");
    let topology = modbot_app::load_robot("py:8", &modbot_app::load_catalog(None).expect("catalog")).expect("py:8");
    let body = BodyFrame::new(&topology);
    let mut seen = Observed::new(body.joint_names().to_vec());
    wait_for(Duration::from_secs(20), || odom.take().and_then(Result::ok)).expect("odometry");

    // Four goals around the start, one after another from wherever the last ended: ahead,
    // to the left, behind, to the right (the body's centre starts at (0.25, 0)).
    for (k, target) in [[0.75, 0.15], [0.45, 0.7], [-0.2, 0.35], [0.1, -0.35]]
        .into_iter()
        .enumerate()
    {
        let mut g = PoseStamped::default();
        g.header.frame_id = "map".into();
        g.pose.position.x = target[0];
        g.pose.position.y = target[1];
        while status.take().is_some() {}
        let p = wait_for(Duration::from_secs(20), || {
            goal.publish(g.clone()).ok()?;
            std::thread::sleep(Duration::from_millis(200));
            plan.take().and_then(Result::ok).filter(|p| {
                p.rows
                    .last()
                    .is_some_and(|r| (r.target.position.x - target[0]).abs() < 0.051)
            })
        })
        .unwrap_or_else(|| panic!("no strategic plan for goal {k}:\n{}", planner.log()));
        assert!(p.rows.iter().all(|r| r.configuration == "snake"));
        if k == 0 {
            assert!(
                wait_for(Duration::from_secs(5), || path.take().and_then(Result::ok))
                    .is_some_and(|p| p.poses.len() >= 2)
            );
            assert!(
                wait_for(Duration::from_secs(5), || markers.take().and_then(Result::ok))
                    .is_some_and(|m| m.markers.len() >= 3)
            );
        }
        let started = Instant::now();
        let mut statuses = Vec::new();
        let mut last_odom = None;
        let done = wait_for(Duration::from_secs(90), || {
            while let Some(Ok(o)) = odom.take() {
                last_odom = Some(o);
            }
            while let Some(Ok(j)) = joint_states.take() {
                seen.joints(&j.name, &j.position, &j.velocity).expect("joint_states");
            }
            while let Some(Ok(s)) = status.take() {
                statuses.push(s.data);
            }
            statuses.iter().any(|s| s.starts_with("done")).then_some(())
        });
        let o = last_odom.expect("odometry during the mission");
        let base = modbot_ros::convert::isometry(&o.pose.pose).expect("pose");
        let c = body.pose(&base, seen.positions()).expect("body");
        println!(
            "goal {k} {target:?}: body at ({:.3}, {:.3}) at sim time {:.1} s after {:.1} s wall; statuses: {statuses:?}",
            c.x,
            c.y,
            o.header.stamp.as_secs_f64(),
            started.elapsed().as_secs_f64()
        );
        assert!(
            done.is_some(),
            "goal {k}: the executive never finished; statuses {statuses:?}\n{}\n{}",
            exec.log(),
            gait.log()
        );
        assert!(
            (c.x - target[0]).hypot(c.y - target[1]) < 0.13,
            "goal {k}: body at ({}, {})",
            c.x,
            c.y
        );
    }
    assert!(gait.log().contains("gait command accepted"), "{}", gait.log());
}

#[test]
fn the_plan_service_answers_and_names_failures() {
    if reexec_in_netns("the_plan_service_answers_and_names_failures") {
        return;
    }
    for b in backends() {
        println!("== the_plan_service_answers_and_names_failures on {b}");
        the_plan_service_answers_and_names_failures_on(b);
    }
}

fn the_plan_service_answers_and_names_failures_on(backend: &str) {
    let planner = NodeProc::spawn_on(
        backend,
        env!("CARGO_BIN_EXE_planner_node"),
        &[
            "--ros-args",
            "-r",
            "__ns:=/p",
            "-p",
            &format!(
                "scenario:={}",
                repo_root().join("worlds/obstacle_course.yaml").display()
            ),
        ],
    );
    let ctx = ros2_client::Context::new().expect("context");
    let mut node = ctx
        .new_node(
            ros2_client::NodeName::new("/", "plan_client").expect("name"),
            ros2_client::NodeOptions::new().enable_rosout(false),
        )
        .expect("node");
    let qos = ros2_client::QosProfile::publisher_default();
    let client = node
        .create_client::<Wire<Plan_Request>, Wire<Plan_Response>>(
            ros2_client::ServiceMapping::Enhanced,
            &ros2_client::Name::new("/p", "plan").expect("name"),
            &ros2_client::ServiceTypeName::new("modbot_msgs", "Plan"),
            qos.clone(),
            qos,
        )
        .expect("client");
    let call = |goal: [f64; 2]| -> Plan_Response {
        let mut req = Plan_Request::default();
        req.goal.pose.position.x = goal[0];
        req.goal.pose.position.y = goal[1];
        req.start.header.frame_id = "map".into(); // explicit start at the origin
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            let id = client.send_request(Wire(req.clone())).expect("send");
            let sent = Instant::now();
            while sent.elapsed() < Duration::from_secs(1) {
                if let Ok(Some((rid, Wire(resp)))) = client.receive_response() {
                    if rid == id {
                        return resp;
                    }
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            assert!(
                Instant::now() < until,
                "no answer from the plan service:\n{}",
                planner.log()
            );
        }
    };
    let sc = modbot_core::Scenario::load(&repo_root().join("worlds/obstacle_course.yaml")).expect("scenario");
    let ok = call(sc.goal.expect("goal"));
    assert!(ok.success, "{}", ok.message);
    let confs: Vec<&str> = ok
        .strategic_plan
        .rows
        .iter()
        .map(|r| r.configuration.as_str())
        .collect();
    assert!(confs.contains(&"quadruped") && confs.contains(&"wheeled"), "{confs:?}");
    assert!(ok.path.poses.len() > ok.strategic_plan.rows.len());
    let bad = call([500.0, 500.0]);
    assert!(!bad.success);
    assert!(
        bad.message.contains("outside"),
        "a goal off the ground is out of bounds: {}",
        bad.message
    );
    println!("out-of-map goal: {}", bad.message);
}
