//! `modbot launch` and `modbot node`: the ROS 2 YAML launch files run without ROS.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use modbot_msgs::nav_msgs::msg::Odometry;
use modbot_msgs::sensor_msgs::msg::JointState;
use modbot_ros::{Pub, Qos, Sub, Transport};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn modbot(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_modbot"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run modbot")
}

#[test]
fn sim_launch_resolves_arguments_namespaces_and_parameters() {
    let o = modbot(&[
        "launch",
        "launch/sim.launch.yaml",
        "--print",
        "robot:=py_16",
        "namespace:=snake2",
        "gait:=sidewinding",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].contains("node sim_node") && lines[0].contains("__ns:=/snake2") && lines[0].contains("robot:=py_16")
    );
    assert!(lines[0].contains("worlds/flat.yaml"));
    assert!(
        lines[1].contains("node gait_node")
            && lines[1].contains("gait:=sidewinding")
            && lines[1].contains("use_sim_time:=true")
    );
    // A wheel-foot robot and its gait reach both nodes.
    let o = modbot(&[
        "launch",
        "launch/sim.launch.yaml",
        "--print",
        "robot:=quadruped",
        "gait:=trot",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].contains("node sim_node") && lines[0].contains("robot:=quadruped"),
        "{text}"
    );
    assert!(
        lines[1].contains("node gait_node") && lines[1].contains("robot:=quadruped") && lines[1].contains("gait:=trot"),
        "{text}"
    );
    let o = modbot(&["launch", "launch/sim.launch.yaml", "--show-args"]);
    let text = String::from_utf8_lossy(&o.stdout);
    for a in ["robot", "world", "gait", "namespace", "rviz", "use_sim_time"] {
        assert!(
            text.lines().any(|l| l.starts_with(&format!("{a}: "))),
            "{a} undeclared:\n{text}"
        );
    }
}

#[test]
fn mission_launch_starts_the_four_nodes_of_the_data_flow() {
    let o = modbot(&[
        "launch",
        "launch/mission.launch.yaml",
        "--print",
        "robot:=pp_8",
        "configuration:=caterpillar",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    for n in ["sim_node", "gait_node", "planner_node", "executive_node"] {
        assert!(text.contains(&format!("node {n} ")), "{n} missing:\n{text}");
    }
    assert!(
        text.contains("available:=[caterpillar]") && text.contains("configuration:=caterpillar"),
        "{text}"
    );
}

#[test]
fn launch_refuses_what_it_cannot_run_and_says_why() {
    let o = modbot(&["launch", "launch/gazebo.launch.yaml"]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("package `ros_gz_sim` is not installed") && e.contains("ros2 launch"),
        "{e}"
    );
    let o = modbot(&["launch", "launch/sim.launch.yaml", "rviz:=true"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("rviz2"));
    let o = modbot(&["launch", "launch/sim.launch.yaml", "colour:=red"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("`colour` is not declared"));
    let o = modbot(&["launch", "launch/sim.launch.yaml", "robot"]);
    assert_eq!(o.status.code(), Some(2));
    // Running still refuses other packages' nodes, and says how to see them.
    let o = modbot(&["launch", "launch/gazebo.launch.yaml", "--print"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = modbot(&["node", "mapper_node"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("gait_node, sim_node, planner_node, executive_node"));
}

/// Runs `modbot launch launch/sim.launch.yaml namespace:=NS ARGS` and watches its odometry
/// until `sim_s` of simulated time: (first (t, x), last (t, x), joints in joint_states).
fn launch_and_watch(ns: &str, args: &[&str], sim_s: f64) -> ((f64, f64), (f64, f64), usize) {
    let namespace = format!("namespace:={ns}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_modbot"))
        .args(["launch", "launch/sim.launch.yaml", &namespace, "--duration", "60"])
        .args(args)
        .current_dir(root())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("modbot launch");
    let mut probe = modbot_ros::dds::DdsTransport::plain("launch_probe").expect("probe");
    let odom = probe
        .subscription::<Odometry>(&format!("/{ns}/odom"), Qos::SensorData)
        .expect("odom");
    let js = probe
        .subscription::<JointState>(&format!("/{ns}/joint_states"), Qos::SensorData)
        .expect("js");
    let until = Instant::now() + Duration::from_secs(45);
    let (mut first, mut last, mut joints) = (None, None, 0);
    while Instant::now() < until {
        while let Some(Ok(o)) = odom.take() {
            let s = (o.header.stamp.as_secs_f64(), o.pose.pose.position.x);
            first.get_or_insert(s);
            last = Some(s);
        }
        while let Some(Ok(j)) = js.take() {
            joints = j.name.len();
        }
        if last.is_some_and(|l: (f64, f64)| l.0 > sim_s) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    (
        first.expect("odometry from the launched sim_node"),
        last.expect("odometry"),
        joints,
    )
}

#[test]
fn sim_launch_walks_the_robot_on_sim_time() {
    if modbot_ros::netns::reexec_in_netns("sim_launch_walks_the_robot_on_sim_time") {
        return;
    }
    let (f, l, joints) = launch_and_watch("snake1", &[], 10.0);
    assert_eq!(joints, 8);
    // The default caterpillar walks about 2.9 cm/s once ramped in; over 10 s of sim time at
    // least 12 cm (forward is +x).
    assert!(l.0 >= 10.0, "sim time reached only {} s", l.0);
    assert!(l.1 - f.1 > 0.12, "moved {} m from t={} to t={}", l.1 - f.1, f.0, l.0);
}

/// `robot:=quadruped gait:=trot`: sim_node and gait_node come up and the quadruped trots
/// forward closed loop on sim_node's joint states and odometry (about 9 cm/s on the
/// default flat world).
#[test]
fn sim_launch_trots_the_quadruped() {
    if modbot_ros::netns::reexec_in_netns("sim_launch_trots_the_quadruped") {
        return;
    }
    let (f, l, joints) = launch_and_watch("quad1", &["robot:=quadruped", "gait:=trot"], 6.0);
    eprintln!(
        "launched quadruped: x {:.3} -> {:.3} m from t = {:.2} to {:.2} s",
        f.1, l.1, f.0, l.0
    );
    assert_eq!(joints, 30);
    assert!(l.0 >= 6.0, "sim time reached only {} s", l.0);
    assert!(l.1 - f.1 > 0.1, "moved {} m from t={} to t={}", l.1 - f.1, f.0, l.0);
}

/// The shipped organism launch files are what `modbot export launch` writes now, and
/// `modbot launch --print` starts sim_node with the organism and one module_node per module.
#[test]
fn organism_launch_files_are_current_and_start_one_module_node_per_module() {
    for (file, args, modules) in [
        ("launch/organism_caterpillar_10.launch.yaml", vec!["caterpillar:10"], 10),
        ("launch/organism_v_9.launch.yaml", vec!["v:9"], 9),
        ("launch/organism_scorpion.launch.yaml", vec!["scorpion"], 7),
    ] {
        let o = modbot(&[&["export", "launch"][..], &args].concat());
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let shipped = std::fs::read_to_string(root().join(file)).unwrap();
        assert_eq!(
            shipped,
            String::from_utf8_lossy(&o.stdout),
            "{file} is stale: regenerate it with `modbot export launch {} --out {file}`",
            args.join(" ")
        );
        let o = modbot(&["launch", file, "--print"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8_lossy(&o.stdout);
        assert_eq!(text.matches("node module_node ").count(), modules, "{text}");
        assert_eq!(text.matches("node sim_node ").count(), 1, "{text}");
        assert!(text.contains(&format!("organism:={}", args[0])), "{text}");
    }
}

/// Issue 19: a parameter combination a node refuses (the default caterpillar on a pitch-yaw
/// snake) fails the launch at once with the node's reason, before any node starts, as a
/// dry run does; a combination it accepts starts.
#[test]
fn a_bad_parameter_combination_fails_at_launch_before_any_node_starts() {
    let t = Instant::now();
    let o = modbot(&["launch", "launch/sim.launch.yaml", "robot:=py_16", "--duration", "30"]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("gait_node: bad parameters, nothing started") && e.contains("caterpillar") && e.contains("py_16"),
        "{e}"
    );
    assert!(!e.contains("[launch] started"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(10), "took {:?}", t.elapsed());
    let o = modbot(&["launch", "launch/sim.launch.yaml", "robot:=py_16", "--print"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("gait_node: bad parameters"));
    let o = modbot(&[
        "launch",
        "launch/sim.launch.yaml",
        "robot:=py_16",
        "gait:=sidewinding",
        "--print",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The check reads parameter files as the node does (name and namespace sections).
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("launch_params_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("p.yaml"),
        "/snake1/gait_node:\n  ros__parameters:\n    gait: moonwalk\n",
    )
    .unwrap();
    let f = dir.join("t.launch.yaml");
    std::fs::write(
        &f,
        format!(
            "launch:\n- arg: {{name: namespace, default: snake1}}\n- node:\n    pkg: modbot_ros\n    exec: gait_node\n    name: gait_node\n    namespace: $(var namespace)\n    param: [{{from: {}}}]\n",
            dir.join("p.yaml").display()
        ),
    )
    .unwrap();
    let f = f.display().to_string();
    let o = modbot(&["launch", &f, "--print"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("moonwalk"));
    let o = modbot(&["launch", &f, "--print", "namespace:=other"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A launch file of sim_node, which exits at once with an error (its recording cannot be
/// created: `/proc` takes no files), and gait_node; sim_node has `on_exit: shutdown` or not.
fn exiting_launch(dir: &std::path::Path, shutdown: bool) -> String {
    let f = dir.join(format!("exit_{shutdown}.launch.yaml"));
    std::fs::write(
        &f,
        format!(
            "launch:\n\
             - node:\n    pkg: modbot_ros\n    exec: sim_node\n    name: sim_node\n{}    param:\n\
             \x20   - {{name: robot, value: pp_8}}\n\
             \x20   - {{name: world, value: {}}}\n\
             \x20   - {{name: record, value: /proc/modbot-{}.mcap}}\n\
             - node:\n    pkg: modbot_ros\n    exec: gait_node\n    name: gait_node\n    param: [{{name: robot, value: pp_8}}]\n",
            if shutdown { "    on_exit: shutdown\n" } else { "" },
            root().join("worlds/flat.yaml").display(),
            std::process::id()
        ),
    )
    .unwrap();
    f.display().to_string()
}

/// As under ros2 launch: a node that exits is reported and the others keep running, unless
/// it says `on_exit: shutdown`; the launcher exits nonzero when a node failed.
#[test]
fn a_node_exit_stops_the_launch_only_with_on_exit_shutdown() {
    if modbot_ros::netns::reexec_in_netns("a_node_exit_stops_the_launch_only_with_on_exit_shutdown") {
        return;
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("launch_exit_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Without on_exit: sim_node's failure is reported, gait_node runs on to --duration.
    let t = Instant::now();
    let o = modbot(&["launch", &exiting_launch(&dir, false), "--duration", "4"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("[launch] sim_node failed"), "{e}");
    assert!(!e.contains("stopping the launch"), "{e}");
    assert!(e.contains("[launch] stopped gait_node"), "{e}");
    assert!(t.elapsed() >= Duration::from_secs(4), "{:?}\n{e}", t.elapsed());
    // With on_exit: shutdown the launch stops when sim_node exits, long before --duration.
    let t = Instant::now();
    let o = modbot(&["launch", &exiting_launch(&dir, true), "--duration", "60"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("[launch] sim_node failed") && e.contains("on_exit: shutdown; stopping the launch"),
        "{e}"
    );
    assert!(e.contains("[launch] stopped gait_node"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}\n{e}", t.elapsed());
    // The shipped launch files say it of their simulator.
    for f in ["launch/sim.launch.yaml", "launch/mission.launch.yaml"] {
        let o = modbot(&["launch", f, "--print"]);
        let text = String::from_utf8_lossy(&o.stdout);
        let sim = text.lines().find(|l| l.contains("node sim_node ")).unwrap();
        assert!(sim.ends_with("# on_exit: shutdown"), "{f}: {sim}");
        assert!(
            text.lines().filter(|l| l.ends_with("# on_exit: shutdown")).count() == 1,
            "{f}: {text}"
        );
    }
}

/// `teleop:=true` adds teleop_node to the simulator launch, in the robot's namespace, loading
/// its parameter file first; without it there is none.
#[test]
fn sim_launch_starts_teleop_on_request() {
    let o = modbot(&[
        "launch",
        "launch/sim.launch.yaml",
        "--print",
        "robot:=py_8",
        "gait:=straight",
        "namespace:=snake3",
        "teleop:=true",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let teleop: Vec<&str> = text.lines().filter(|l| l.contains("node teleop_node")).collect();
    assert_eq!(teleop.len(), 1, "{text}");
    assert!(
        teleop[0].contains("__ns:=/snake3")
            && teleop[0].contains("config/params/teleop_node.yaml")
            && teleop[0].contains("robot:=py_8"),
        "{}",
        teleop[0]
    );
    let o = modbot(&[
        "launch",
        "launch/sim.launch.yaml",
        "--print",
        "robot:=py_8",
        "gait:=straight",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!String::from_utf8_lossy(&o.stdout).contains("teleop_node"));
}

/// The strategic mission through ROS (issues 15 and 50, records 0052 and 0064): `modbot
/// launch launch/strategic_mission.launch.yaml` in a private network namespace starts
/// sim_node with the six modules free-running as fast as it can (`/clock`), planner_node and
/// mission_node, which asks planner_node's deliberative search and drives the modules
/// through their topics over DDS towards the target, while a third node sends garbage on
/// topics mission_node reads, which it drops and logs. The first configuration assembles; the
/// launch ends when the mission does, at the target (the latched summary: the first module
/// within 0.1 m and 10° of it by the simulator's ground truth) or with a named reason in a
/// later row; the source's template's configurations were chosen, and the markers show the
/// six roles, the nine staging points and the six rows.
#[test]
fn the_strategic_mission_launch_reaches_the_target_over_ros() {
    use modbot_msgs::builtin_interfaces::msg::Time;
    use modbot_msgs::sensor_msgs::msg::Imu;
    use modbot_msgs::std_msgs::msg::String as StringMsg;
    use modbot_msgs::tf2_msgs::msg::TFMessage;
    use modbot_msgs::visualization_msgs::msg::MarkerArray;
    if modbot_ros::netns::reexec_in_netns("the_strategic_mission_launch_reaches_the_target_over_ros") {
        return;
    }
    let seed = std::env::var("MODBOT_SEED").unwrap_or("-1".into());
    let log = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("strategic_mission_{}.log", std::process::id()));
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_modbot"))
        .args([
            "launch",
            "launch/strategic_mission.launch.yaml",
            "namespace:=mission1",
            "linger_s:=1.0",
            &format!("layout_seed:={seed}"),
        ])
        .current_dir(root())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("modbot launch");
    let mut probe = modbot_ros::dds::DdsTransport::plain("mission_probe").expect("probe");
    let summary_sub = probe
        .subscription::<StringMsg>("/mission1/mission/summary", Qos::Latched)
        .unwrap();
    let markers_sub = probe
        .subscription::<MarkerArray>("/mission1/mission/markers", Qos::Latched)
        .unwrap();
    let status_sub = probe
        .subscription::<StringMsg>("/mission1/mission/status", Qos::Reliable)
        .unwrap();
    // A third node sends garbage on topics mission_node reads: joint states of the wrong
    // size stamped far ahead, a NaN IMU reading, a truth without the modules.
    let bad_joints = probe
        .publisher::<JointState>("/mission1/m4/joint_states", Qos::SensorData)
        .unwrap();
    let bad_imu = probe.publisher::<Imu>("/mission1/m2/imu", Qos::SensorData).unwrap();
    let bad_truth = probe
        .publisher::<TFMessage>("/mission1/ground_truth/poses", Qos::SensorData)
        .unwrap();
    let mut garbage_sent = Instant::now();
    let (mut summary, mut markers, mut statuses) = (None, None, 0);
    let status = loop {
        if garbage_sent.elapsed() > Duration::from_millis(500) {
            garbage_sent = Instant::now();
            let mut js = JointState {
                name: vec!["m1_FJ".into()],
                position: vec![0.0, 1.0],
                ..Default::default()
            };
            js.header.stamp = Time::from_secs_f64(1e6);
            bad_joints.publish(js).unwrap();
            let mut imu = Imu::default();
            imu.orientation.w = f64::NAN;
            imu.header.stamp = Time::from_secs_f64(1e6);
            bad_imu.publish(imu).unwrap();
            bad_truth.publish(TFMessage::default()).unwrap();
        }
        while let Some(Ok(s)) = summary_sub.take() {
            summary = Some(serde_json::from_str::<serde_json::Value>(&s.data).unwrap());
        }
        while let Some(Ok(m)) = markers_sub.take() {
            markers = Some(m);
        }
        while let Some(Ok(_)) = status_sub.take() {
            statuses += 1;
        }
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(900) {
            let _ = child.kill();
            panic!(
                "the mission did not end in 900 s:\n{}",
                std::fs::read_to_string(&log).unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = std::fs::read_to_string(&log).unwrap();
    // The scan and the plan pass over ROS; the mission then reaches the target, or ends with
    // its named reason: a lone module walking to its staging point among the others tips
    // over now and then (records 0063, 0064; the issue's "completes or ends with a named
    // reason" for a node given garbage).
    assert!(text.contains("plan ok"), "{status}\n{text}");
    let assembled = text.contains("row 1: assembly quadruped ok");
    let reached = status.success() && text.contains("reached the target");
    let named = !status.success()
        && text
            .lines()
            .any(|l| l.contains("mission `strategic_mission`: failed: row ") && l.contains(": failed, Role#"));
    assert!(reached || named, "neither reached nor a named reason: {status}\n{text}");
    // The garbage was seen, dropped and said so (rate limited), and the mission went on.
    for topic in ["m4/joint_states", "m2/imu", "ground_truth/poses"] {
        let lines = text
            .lines()
            .filter(|l| l.contains(topic) && l.contains("dropped"))
            .count();
        assert!(lines >= 1, "nothing said about garbage on {topic}:\n{text}");
    }
    let summary = summary.unwrap_or_else(|| panic!("no mission/summary\n{text}"));
    let num = |k: &str| summary[k].as_f64().unwrap_or(f64::NAN);
    eprintln!(
        "ROS mission (layout_seed {seed}): {:.1} s simulated in {:.1} s wall by mission_node, {:.1} s in all; {:.3} m and {:.1}° from the target; faults {}",
        num("simulated_s"),
        num("wall_s"),
        start.elapsed().as_secs_f64(),
        num("final_distance_m"),
        num("final_heading_error_deg"),
        summary["faults"]
    );
    assert_eq!(summary["reached"], reached);
    if reached {
        assert!(num("final_distance_m") <= 0.1, "{}", summary["final_distance_m"]);
        assert!(
            num("final_heading_error_deg").abs() <= 10.0,
            "{}",
            summary["final_heading_error_deg"]
        );
    }
    // planner_node's deliberative search chose the source's template's configurations.
    assert_eq!(
        summary["searched_configurations"],
        serde_json::json!(["quadruped", "wheeled"])
    );
    let phases: Vec<&str> = summary["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["phase"].as_str().unwrap())
        .collect();
    for phase in ["friction", "scan", "modelling", "roles", "plan"] {
        assert!(phases.contains(&phase), "{phases:?}");
    }
    // Five docks into the quadruped, and four into the wheeled vehicle when it got there.
    let attached = summary["docks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["action"] == "attach")
        .count();
    assert!(
        attached
            >= if reached {
                9
            } else if assembled {
                5
            } else {
                0
            },
        "{}",
        summary["docks"]
    );
    assert!(statuses > 0, "no mission/status seen");
    let markers = markers.unwrap_or_else(|| panic!("no mission/markers\n{text}"));
    let count = |ns: &str| markers.markers.iter().filter(|m| m.ns == ns && m.r#type == 9).count();
    // Text labels: six roles, 5 + 4 staging points (at least the quadruped's 5 when the
    // reassembly ended it), six rows.
    assert_eq!((count("roles"), count("plan")), (6, 6));
    let staging = count("staging");
    assert!(
        if reached { staging == 9 } else { staging <= 9 },
        "{staging} staging points"
    );
    assert!(markers.markers.iter().all(|m| m.header.frame_id == "odom"));
}

/// The strategic mission in wall-clock time (issue 50): the same launch with
/// `real_time_factor:=1`, watched from outside until the first dock — the scan, the
/// modelling, the plan and the orientation report ok on `mission/status` and a module's
/// connector reports itself LATCHED to a partner on its latched `connectors/<port>/state`.
/// `/clock` meanwhile advances no faster than the wall (the pacing: free-running as fast as
/// it can, this graph's clock ran 1.46 times the wall to the same dock, which fails this
/// test). Slower is allowed: on a loaded machine the simulator falls behind the wall (0.64
/// beside the other mission launch on the 2-core machine), and the mission keeps to its
/// clock. The launch is stopped there.
#[test]
fn the_strategic_mission_launch_scans_and_docks_in_real_time() {
    use modbot_msgs::modbot_msgs::msg::ConnectorState;
    use modbot_msgs::rosgraph_msgs::msg::Clock;
    use modbot_msgs::std_msgs::msg::String as StringMsg;
    if modbot_ros::netns::reexec_in_netns("the_strategic_mission_launch_scans_and_docks_in_real_time") {
        return;
    }
    let log = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("strategic_rtf1_{}.log", std::process::id()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_modbot"))
        .args([
            "launch",
            "launch/strategic_mission.launch.yaml",
            "namespace:=mission2",
            "real_time_factor:=1",
            "--duration",
            "300",
        ])
        .current_dir(root())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("modbot launch");
    let mut probe = modbot_ros::dds::DdsTransport::plain("rtf_probe").expect("probe");
    let clock = probe.subscription::<Clock>("/clock", Qos::SensorData).unwrap();
    let status_sub = probe
        .subscription::<StringMsg>("/mission2/mission/status", Qos::Reliable)
        .unwrap();
    let mut connectors = Vec::new();
    for m in 1..=6 {
        for p in ["F", "L", "R", "BF", "BS"] {
            let topic = format!("/mission2/m{m}/connectors/{p}/state");
            connectors.push((
                format!("m{m}/{p}"),
                probe.subscription::<ConnectorState>(&topic, Qos::Latched).unwrap(),
            ));
        }
    }
    let start = Instant::now();
    let (mut first_clock, mut last_clock) = (None::<(f64, Instant)>, None::<(f64, Instant)>);
    let mut phases: Vec<(String, String)> = Vec::new();
    let docked = loop {
        while let Some(Ok(c)) = clock.take() {
            let s = (c.clock.as_secs_f64(), Instant::now());
            first_clock.get_or_insert(s);
            last_clock = Some(s);
        }
        while let Some(Ok(s)) = status_sub.take() {
            let v: serde_json::Value = serde_json::from_str(&s.data).unwrap();
            phases.push((
                v["phase"].as_str().unwrap_or_default().to_string(),
                v["outcome"].as_str().unwrap_or_default().to_string(),
            ));
        }
        let latched = connectors.iter().find_map(|(name, sub)| {
            let mut hit = None;
            while let Some(Ok(s)) = sub.take() {
                if s.state == ConnectorState::LATCHED && !s.partner.is_empty() {
                    hit = Some(format!("{name} latched to {}", s.partner));
                }
            }
            hit
        });
        if let Some(d) = latched {
            break d;
        }
        if let Some(s) = child.try_wait().unwrap() {
            panic!(
                "the launch ended ({s}) before a dock:\n{}",
                std::fs::read_to_string(&log).unwrap()
            );
        }
        if start.elapsed() > Duration::from_secs(280) {
            let _ = child.kill();
            panic!(
                "no dock in 280 s of wall time; phases {phases:?}:\n{}",
                std::fs::read_to_string(&log).unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let _ = child.kill();
    let _ = child.wait();
    let ((c0, w0), (c1, w1)) = (first_clock.expect("/clock"), last_clock.expect("/clock"));
    let rate = (c1 - c0) / (w1 - w0).as_secs_f64();
    eprintln!(
        "rtf 1: {docked} at {c1:.1} s of the clock, {:.1} s wall after the launch; clock/wall {rate:.3}; phases {phases:?}",
        start.elapsed().as_secs_f64()
    );
    for phase in ["scan", "modelling", "plan", "orient"] {
        assert!(
            phases.iter().any(|(p, o)| p == phase && o == "ok"),
            "{phase} not ok before the first dock: {phases:?}"
        );
    }
    assert!(c1 - c0 > 10.0, "the clock ran only {:.1} s", c1 - c0);
    assert!(rate <= 1.05, "clock/wall {rate:.3} with real_time_factor 1");
}
