//! Interop with real ROS 2: an rclpy node (ROS 2 Jazzy wheels from PyPI, Fast DDS) receives
//! gait_node's commands and sim_node's joint states and odometry with correct values, all
//! three through default-QoS (reliable) subscriptions, sees `/clock` with the one type
//! rosgraph_msgs/msg/Clock (record 0045), dumps every parameter of every kind of node as
//! `ros2 param dump` does (list_parameters, get_parameters, describe_parameters), changes the gait through gait_node's parameter service and by publishing a
//! modbot_msgs/GaitCommand (modbot_msgs built for rclpy from its .msg files with the rosidl
//! generators the wheels ship), and drives a sim_node with its own position commands.
//!
//! The wheels live in a virtualenv, `target/interop-venv` (or `$MODBOT_INTEROP_VENV`); when it
//! is missing the test creates it from `test/interop/requirements.txt` (PyPI), and fails, not
//! skips, when that is impossible (`test/interop/python_env.rs`, shared with modbot's launch
//! check).

mod common;
#[path = "../../../test/interop/python_env.rs"]
mod python_env;

use std::process::Command;
use std::time::Duration;

use common::*;
use modbot_msgs::modbot_msgs::msg::GaitState;
use modbot_msgs::std_srvs::srv::{SetBool_Request, SetBool_Response};
use modbot_ros::params::ParamValue;
use modbot_ros::{Client, Qos, Sub, Transport};

/// A parameter value as rclpy's `parameter_value_to_python` gives it, in JSON.
fn json_of(v: &ParamValue) -> serde_json::Value {
    match v {
        ParamValue::Bool(b) => (*b).into(),
        ParamValue::Int(i) => (*i).into(),
        ParamValue::Double(x) => (*x).into(),
        ParamValue::Str(s) => s.clone().into(),
        ParamValue::BoolArray(a) => a.clone().into(),
        ParamValue::IntArray(a) => a.clone().into(),
        ParamValue::DoubleArray(a) => a.clone().into(),
        ParamValue::StrArray(a) => a.clone().into(),
    }
}

#[test]
fn rclpy_receives_our_topics_and_changes_the_gait_over_the_parameter_service() {
    // Outside the namespace first: the venv may need PyPI.
    let py = python_env::python("rclpy, nav_msgs.msg, sensor_msgs.msg, std_msgs.msg");
    if reexec_in_netns("rclpy_receives_our_topics_and_changes_the_gait_over_the_parameter_service") {
        return;
    }
    for b in backends() {
        println!("== rclpy_receives_our_topics_and_changes_the_gait_over_the_parameter_service on {b}");
        rclpy_receives_our_topics_and_changes_the_gait_over_the_parameter_service_on(&py, b);
    }
}

fn rclpy_receives_our_topics_and_changes_the_gait_over_the_parameter_service_on(py: &std::path::Path, backend: &str) {
    let ns = ["--ros-args", "-r", "__ns:=/snake1", "-p", "robot:=py:8"];
    let _sim = NodeProc::spawn_on(backend, sim_node(), &ns);
    let gait = NodeProc::spawn_on(backend, gait_node(), &[&ns[..], &["-p", "gait:=straight"]].concat());
    // A second simulator that only the rclpy peer drives.
    let _sim2 = NodeProc::spawn_on(
        backend,
        sim_node(),
        &["--ros-args", "-r", "__ns:=/driven", "-p", "robot:=pp:4"],
    );
    // One node of every other kind, for the parameter dump and for rclpy to listen to. The
    // planner plans in /plan from the goal rclpy sends and the odometry of a third simulator
    // in /others, where the executive takes its plan and publishes its own goals (a
    // namespace apart from the goal rclpy sends, so that what rclpy counts on `goal_pose`
    // is the executive's); teleop turns rclpy's twist into gait commands in /teleop.
    // A wheeled vehicle, whose gait_node also commands wheel speeds.
    let _sim_w = NodeProc::spawn_on(
        backend,
        sim_node(),
        &["--ros-args", "-r", "__ns:=/wheeled", "-p", "robot:=wheeled"],
    );
    let _gait_w = NodeProc::spawn_on(
        backend,
        gait_node(),
        &[
            "--ros-args",
            "-r",
            "__ns:=/wheeled",
            "-p",
            "robot:=wheeled",
            "-p",
            "gait:=drive",
        ],
    );
    let flat = repo_root().join("worlds/flat.yaml").display().to_string();
    let _sim3 = NodeProc::spawn_on(
        backend,
        sim_node(),
        &["--ros-args", "-r", "__ns:=/others", "-p", "robot:=py:8"],
    );
    let others: Vec<(&str, &str, Vec<String>, Vec<String>)> = vec![
        (
            "planner_node",
            "/plan",
            vec![
                format!("scenario:={flat}"),
                "available:=[snake]".into(),
                "start_configuration:=snake".into(),
            ],
            vec!["odom:=/others/odom".into()],
        ),
        (
            "executive_node",
            "/others",
            // A row that takes more than a second asks the planner again (goal_pose).
            vec!["configuration:=snake".into(), "row_timeout_s:=1.0".into()],
            vec!["strategic_plan:=/plan/strategic_plan".into()],
        ),
        ("teleop_node", "/teleop", vec!["robot:=py:8".into()], vec![]),
        // A two-module caterpillar organism in /org (as `modbot export launch caterpillar:2`
        // wires it): its modules talk hormones and sim_node publishes their sensors.
        ("module_node", "/org/m1", vec![], vec!["in/B:=/org/m2/out/F".into()]),
        ("module_node", "/org/m2", vec![], vec!["in/F:=/org/m1/out/B".into()]),
    ];
    let _sim_org = NodeProc::spawn_on(
        backend,
        sim_node(),
        &["--ros-args", "-r", "__ns:=/org", "-p", "organism:=caterpillar:2"],
    );
    let mut other_procs = Vec::new();
    for (exec, ns, params, remaps) in &others {
        let mut argv = vec!["--ros-args".to_string(), "-r".into(), format!("__ns:={ns}")];
        for r in remaps {
            argv.extend(["-r".to_string(), r.clone()]);
        }
        for p in params {
            argv.extend(["-p".to_string(), p.clone()]);
        }
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let bin = match *exec {
            "planner_node" => env!("CARGO_BIN_EXE_planner_node"),
            "executive_node" => env!("CARGO_BIN_EXE_executive_node"),
            "teleop_node" => env!("CARGO_BIN_EXE_teleop_node"),
            _ => env!("CARGO_BIN_EXE_module_node"),
        };
        other_procs.push(NodeProc::spawn_on(backend, bin, &argv));
    }
    // Every topic every node publishes, from its own code (as the reference page lists
    // them), subscribed by rclpy with the profile a ROS user picks for that kind: the
    // default for reliable topics, sensor data for best-effort ones, transient local for
    // latched ones.
    let mut listen = Vec::new();
    let mut listen_to_some = |exec: &str, ns: &str, params: &[(&str, ParamValue)], keep: &dyn Fn(&str) -> bool| {
        for (name, ty, qos) in modbot_ros::reference::publications(exec, params).expect("publications") {
            if !keep(&name) {
                continue;
            }
            let topic = if name.starts_with('/') {
                name
            } else {
                format!("{ns}/{name}")
            };
            let kind = match qos {
                Qos::SensorData | Qos::Clock => "sensor",
                Qos::Latched => "latched",
                Qos::Reliable => "default",
            };
            let spec = format!("{topic}={ty}={kind}");
            if !listen.contains(&spec) {
                listen.push(spec);
            }
        }
    };
    let mut listen_to =
        |exec: &str, ns: &str, params: &[(&str, ParamValue)]| listen_to_some(exec, ns, params, &|_| true);
    listen_to("sim_node", "/snake1", &[("robot", ParamValue::Str("py:8".into()))]);
    listen_to(
        "gait_node",
        "/snake1",
        &[
            ("robot", ParamValue::Str("py:8".into())),
            ("gait", ParamValue::Str("straight".into())),
        ],
    );
    listen_to(
        "sim_node",
        "/org",
        &[("organism", ParamValue::Str("caterpillar:2".into()))],
    );
    listen_to(
        "gait_node",
        "/wheeled",
        &[
            ("robot", ParamValue::Str("wheeled".into())),
            ("gait", ParamValue::Str("drive".into())),
        ],
    );
    for (exec, ns, params, remaps) in &others {
        let params: Vec<(&str, ParamValue)> = params
            .iter()
            .map(|kv| {
                let (k, v) = kv.split_once(":=").expect("k:=v");
                (k, ParamValue::parse_yaml(v).expect("a -p value"))
            })
            .collect();
        // A module sends hormone frames only through its docked connectors (module_node's
        // docs): m1's B and m2's F here, the sides wired to a neighbour.
        let docked = |name: &str| {
            name.strip_prefix("out/")
                .is_none_or(|side| remaps.iter().any(|r| r.starts_with(&format!("in/{side}:="))))
        };
        listen_to_some(exec, ns, &params, &docked);
    }
    assert!(listen.len() >= 20, "{listen:?}");
    let mut probe = probe("interop_probe");
    let state = probe
        .subscription::<GaitState>("/snake1/gait/state", Qos::Reliable)
        .expect("state");
    let out = Command::new(py)
        .arg(repo_root().join("test/interop/rclpy_peer.py"))
        .args([
            "--ns",
            "/snake1",
            "--node",
            "gait_node",
            "--set-gait",
            "sidewinding",
            "--timeout",
            "40",
        ])
        .args(["--drive-sim", "/driven", "--joints", "4", "--command-gait", "rolling"])
        .args(["--dump", "/snake1/gait_node", "--dump", "/snake1/sim_node"])
        .args(listen.iter().flat_map(|l| ["--listen".to_string(), l.clone()]))
        .args([
            "--publish",
            // Every 4 s: each new plan restarts the executive's row, whose 1 s timeout
            // then asks for a replan on its own goal_pose.
            "/plan/goal_pose=geometry_msgs/msg/PoseStamped=header.frame_id:map,pose.position.x:1.0,pose.orientation.w:1.0=4.0",
            "--publish",
            "/teleop/cmd_vel=geometry_msgs/msg/Twist=linear.x:0.2",
        ])
        .args(
            others
                .iter()
                .flat_map(|(exec, ns, _, _)| ["--dump".to_string(), format!("{ns}/{exec}")]),
        )
        .env("PYTHONPATH", python_env::msgs_pythonpath())
        .env("LD_LIBRARY_PATH", python_env::msgs_prefix().join("lib"))
        .env_remove("LD_PRELOAD")
        .output()
        .expect("run the rclpy peer");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let doc: serde_json::Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("peer output is not JSON ({e}):\n{stdout}\n{stderr}\n{}", gait.log()));
    println!("rclpy peer: {doc}");
    assert!(out.status.success(), "peer failed: {doc}\n{stderr}\n{}", gait.log());
    // Received through rclpy's default QoS (reliable, volatile, keep last 10).
    for t in ["commands", "joint_states", "odom"] {
        assert!(doc["counts"][t].as_u64().unwrap_or(0) >= 20, "{t}: {doc}");
    }
    for l in &listen {
        let topic = l.split('=').next().unwrap_or_default();
        assert!(
            doc["listened"][topic].as_u64().unwrap_or(0) >= 1,
            "rclpy received nothing on {l}: {}",
            doc["listened"]
        );
    }
    // The graph as `ros2 topic list -t` and `ros2 topic info -v` show it (issue 19): one type
    // per topic, `/clock` included (every node's reader and sim_node's writer are
    // rosgraph_msgs/msg/Clock, record 0045), and sim_node offering joint states and odometry
    // reliable.
    let graph = &doc["graph"];
    assert_eq!(
        graph["types"]["/clock"],
        serde_json::json!(["rosgraph_msgs/msg/Clock"]),
        "{graph}"
    );
    assert_eq!(
        graph["types"]["/snake1/odom"],
        serde_json::json!(["nav_msgs/msg/Odometry"]),
        "{graph}"
    );
    assert_eq!(
        graph["types"]["/snake1/joint_states"],
        serde_json::json!(["sensor_msgs/msg/JointState"]),
        "{graph}"
    );
    for t in ["/snake1/odom", "/snake1/joint_states"] {
        let pubs = graph["publishers"][t].as_array().expect("publishers");
        assert!(!pubs.is_empty(), "no publisher of {t} in rclpy's graph: {graph}");
        assert!(
            pubs.iter().all(|p| p["reliable"] == true),
            "{t} offered best effort: {graph}"
        );
    }
    // `ros2 param dump` of every node: every declared parameter and use_sim_time, each with
    // its start-up value (the default unless the command line set it) and its description.
    let started: Vec<(String, &str, Vec<String>)> = [
        (
            "/snake1/gait_node".to_string(),
            "gait_node",
            vec!["robot:=py:8".to_string(), "gait:=straight".into()],
        ),
        (
            "/snake1/sim_node".to_string(),
            "sim_node",
            vec!["robot:=py:8".to_string()],
        ),
    ]
    .into_iter()
    .chain(
        others
            .iter()
            .map(|(exec, ns, p, _)| (format!("{ns}/{exec}"), *exec, p.clone())),
    )
    .collect();
    for (fq, exec, set) in &started {
        let dumped = &doc["dump"][fq.as_str()];
        let params = dumped["params"]
            .as_object()
            .unwrap_or_else(|| panic!("no parameter dump of {fq}: {dumped}"));
        let decls = modbot_ros::node_declarations(exec).expect("declarations");
        let mut expected: Vec<&str> = decls.iter().map(|d| d.name).chain(["use_sim_time"]).collect();
        expected.sort_unstable();
        let mut got: Vec<&str> = params.keys().map(String::as_str).collect();
        got.sort_unstable();
        assert_eq!(got, expected, "{fq}: the parameters listed");
        for d in &decls {
            let value = match set.iter().find_map(|kv| kv.strip_prefix(&format!("{}:=", d.name))) {
                Some(text) => match (&d.default, ParamValue::parse_yaml(text).expect("a -p value")) {
                    (ParamValue::Double(_), ParamValue::Int(i)) => ParamValue::Double(i as f64),
                    (_, v) => v,
                },
                None => d.default.clone(),
            };
            assert_eq!(params[d.name], json_of(&value), "{fq}: {}", d.name);
            assert_eq!(dumped["described"][d.name], d.description, "{fq}: {}", d.name);
        }
        assert_eq!(params["use_sim_time"], false, "{fq}");
    }
    let cmds: Vec<f64> = serde_json::from_value(doc["last_commands"].clone()).expect("commands");
    assert_eq!(cmds.len(), 8);
    assert!(cmds.iter().all(|x| x.is_finite() && x.abs() < 1.6));
    let names: Vec<String> = serde_json::from_value(doc["last_joint_states"]["name"].clone()).expect("names");
    assert_eq!(names, (1..=8).map(|i| format!("joint_{i}")).collect::<Vec<_>>());
    let first: Vec<f64> = serde_json::from_value(doc["odom_first"].clone()).expect("odom");
    let last: Vec<f64> = serde_json::from_value(doc["odom_last"].clone()).expect("odom");
    assert!(last[3] > first[3], "odom stamps advance");
    assert!(first.iter().chain(&last).all(|x| x.is_finite()));
    assert_eq!(doc["set"]["successful"], true, "{doc}");
    assert_eq!(doc["read_back"], "sidewinding");
    assert_eq!(doc["set_unknown"]["successful"], false, "{doc}");
    assert!(
        doc["set_unknown"]["reason"]
            .as_str()
            .unwrap_or("")
            .contains("no_such_gait"),
        "{doc}"
    );
    assert_eq!(doc["read_back_after_unknown"], "sidewinding");
    // A GaitCommand from rclpy (modbot_msgs built with rosidl) changes the gait, with its
    // parameter (A = 30° on both waves of rolling).
    assert_eq!(doc["commanded"]["gait"], "rolling", "{doc}");
    assert_eq!(doc["commanded"]["holding"], false);
    let params = doc["commanded"]["params"].as_object().expect("params");
    assert!(params.values().any(|v| v.as_f64() == Some(30.0)), "{params:?}");
    // rclpy as the controller: sim_node follows the pose it sends.
    let driven: Vec<f64> =
        serde_json::from_value(doc["driven"]["positions"].clone()).expect("driven sim's joint states");
    assert_eq!(driven.len(), 4);
    assert!(driven.iter().all(|q| (q - 0.3).abs() < 0.1), "{driven:?}");
    // gait_node's log reached rclpy through /rosout.
    let rosout = doc["rosout"].as_array().expect("rosout");
    assert!(
        rosout
            .iter()
            .any(|l| l[0] == "snake1.gait_node" && l[2].as_str().unwrap_or("").contains("sidewinding")),
        "no gait_node line about the new gait on /rosout: {rosout:?}"
    );
    // And gait_node acted on the parameter.
    let s = wait_for(Duration::from_secs(10), || {
        state.take().and_then(Result::ok).filter(|s| s.gait == "sidewinding")
    });
    assert!(s.is_some(), "gait/state never showed sidewinding:\n{}", gait.log());
}

/// Our service client (the ros2-client backend's) against an rclpy std_srvs/SetBool server,
/// the latch a connector offers (record 0062): each request arrives with its data and each
/// answer comes back to the request that asked it, as rclpy sent it.
#[test]
fn our_service_client_calls_an_rclpy_server() {
    let py = python_env::python("rclpy, std_srvs.srv");
    if reexec_in_netns("our_service_client_calls_an_rclpy_server") {
        return;
    }
    let service = "/peer/connectors/front/latch";
    let peer = Command::new(&py)
        .arg(repo_root().join("test/interop/latch_peer.py"))
        .args(["--service", service, "--timeout", "40"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("latch_peer.py");
    let mut probe = probe("latch_probe");
    let client = probe
        .client::<SetBool_Request, SetBool_Response>(service, "std_srvs", "SetBool")
        .expect("client");
    // A request sent before discovery has matched the server is lost, as in rclcpp without
    // wait_for_service: ask again every half second until answered.
    let answer = |data: bool| {
        let mut id = None;
        let mut asked = std::time::Instant::now() - Duration::from_secs(1);
        wait_for(Duration::from_secs(30), || {
            if asked.elapsed() > Duration::from_millis(500) {
                id = Some(client.call(&SetBool_Request { data }).expect("call"));
                asked = std::time::Instant::now();
            }
            client.response(id.as_ref()?)
        })
        .expect("an answer from rclpy")
        .expect("the answer decodes")
    };
    let closed = answer(true);
    assert_eq!((closed.success, closed.message.as_str()), (true, "closing"));
    let opened = answer(false);
    assert_eq!(
        (opened.success, opened.message.as_str()),
        (false, "refused: nothing to open")
    );
    let out = peer.wait_with_output().expect("latch_peer.py ends");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let seen: Vec<bool> = serde_json::from_value(report["requests"].clone()).expect("requests");
    // Re-sent requests may each be answered: what matters is that true came before false.
    assert!(seen.first() == Some(&true) && seen.last() == Some(&false), "{report}");
    assert!(out.status.success(), "{report}");
}
