//! RViz against the nodes (issue 19). `config/modbot.rviz`: every topic a display reads is
//! one a node publishes, with the message type the display shows and a QoS that matches
//! every writer's; every topic a tool writes (the 2D Goal Pose) is one a node subscribes,
//! likewise. The topics, types and QoS come from the nodes' own code, not from a list here:
//! each node's run loop starts on the loopback bus with its stop flag already raised, so it
//! creates its endpoints and returns, and the bus lists them. The launch files that start
//! RViz remap /tf and /tf_static into the robot's namespace and stamp the plan in the fixed
//! frame.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use modbot_ros::Qos;
use modbot_ros::launch::{NodeLaunch, modbot_packages, resolve as resolve_launch};
use modbot_ros::loopback::{LoopbackBus, LoopbackNode, TopicInfo, compatible, identity};
use modbot_ros::nodes::executive::{self, ExecutiveNodeConfig};
use modbot_ros::nodes::gait::{self, GaitNodeConfig};
use modbot_ros::nodes::mission::{self, MissionNodeConfig};
use modbot_ros::nodes::planner::{self, PlannerNodeConfig};
use modbot_ros::nodes::sim::{self, SimNodeConfig};
use modbot_ros::nodes::teleop::{self, TeleopNodeConfig};
use modbot_ros::params::{NodeConfig, ParamValue, resolve};
use serde_yaml_ng::Value;

/// The namespace the nodes and RViz share in the graph test.
const NS: &str = "/snake1";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rviz_config() -> Value {
    let path = root().join("config/modbot.rviz");
    serde_yaml_ng::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

type RunFn<C> = fn(&mut LoopbackNode, C, Arc<AtomicBool>) -> modbot_ros::Result<()>;

/// Runs a node's loop with its stop flag raised: it creates its publishers, subscriptions
/// and services as it always does, then returns.
fn start<C: NodeConfig>(bus: &LoopbackBus, name: &str, params: &[(&str, ParamValue)], run: RunFn<C>) {
    let overrides: Vec<(String, ParamValue)> = params.iter().map(|(k, v)| ((*k).to_string(), v.clone())).collect();
    let (map, cfg) = resolve::<C>(&[], &overrides).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut node = bus.node_with_params::<C>(identity(name, NS), map);
    run(&mut node, cfg, Arc::new(AtomicBool::new(true))).unwrap_or_else(|e| panic!("{name}: {e}"));
}

/// The graph of launch/mission.launch.yaml and sim.launch.yaml plus teleop_node and
/// strategic_mission.launch.yaml's mission_node.
fn graph() -> Vec<TopicInfo> {
    let s = |v: &str| ParamValue::Str(v.into());
    let flat = root().join("worlds/flat.yaml").display().to_string();
    let bus = LoopbackBus::new();
    start::<SimNodeConfig>(&bus, "sim_node", &[("world", s(&flat))], sim::run);
    start::<GaitNodeConfig>(&bus, "gait_node", &[], gait::run);
    start::<PlannerNodeConfig>(
        &bus,
        "planner_node",
        &[
            ("scenario", s(&flat)),
            ("available", ParamValue::StrArray(vec!["snake".into()])),
            ("start_configuration", s("snake")),
        ],
        planner::run,
    );
    start::<ExecutiveNodeConfig>(&bus, "executive_node", &[("configuration", s("snake"))], executive::run);
    start::<TeleopNodeConfig>(&bus, "teleop_node", &[("robot", s("py:8"))], teleop::run);
    // launch/strategic_mission.launch.yaml's mission node (its markers).
    start::<MissionNodeConfig>(&bus, "mission_node", &[], mission::run);
    bus.topics()
}

/// A topic RViz reads (a display) or writes (a tool), as the config gives it.
#[derive(Debug)]
struct RvizTopic {
    /// Display or tool name, for messages.
    owner: String,
    /// As written (relative or absolute).
    topic: String,
    /// The ROS type the plugin reads or writes.
    ty: &'static str,
    /// The QoS the config asks for.
    qos: Qos,
    /// Tool (RViz publishes) or display (RViz subscribes).
    writes: bool,
}

/// The message type an rviz_default_plugins class reads or writes on its topic.
fn plugin_type(class: &str) -> Option<&'static str> {
    Some(match class.strip_prefix("rviz_default_plugins/")? {
        "RobotModel" => "std_msgs/msg/String",
        "Odometry" => "nav_msgs/msg/Odometry",
        "Path" => "nav_msgs/msg/Path",
        "Marker" => "visualization_msgs/msg/Marker",
        "MarkerArray" => "visualization_msgs/msg/MarkerArray",
        "Map" => "nav_msgs/msg/OccupancyGrid",
        "Pose" | "SetGoal" => "geometry_msgs/msg/PoseStamped",
        "PoseArray" => "geometry_msgs/msg/PoseArray",
        "SetInitialPose" => "geometry_msgs/msg/PoseWithCovarianceStamped",
        "PublishPoint" => "geometry_msgs/msg/PointStamped",
        "JointState" => "sensor_msgs/msg/JointState",
        _ => return None,
    })
}

/// The loopback preset of an RViz topic property's reliability and durability.
fn qos_of(owner: &str, p: &Value) -> Qos {
    let reliability = p["Reliability Policy"].as_str().unwrap_or("Reliable");
    let durability = p["Durability Policy"].as_str().unwrap_or("Volatile");
    match (reliability, durability) {
        ("Reliable", "Volatile") => Qos::Reliable,
        ("Best Effort", "Volatile") => Qos::SensorData,
        ("Reliable", "Transient Local") => Qos::Latched,
        other => panic!("{owner}: QoS {other:?} is none the nodes use"),
    }
}

/// Every topic property (`Topic`, `Description Topic`, ...: a key ending in `Topic` with a
/// `Value`) of the displays (groups included) and the tools.
fn rviz_topics(v: &Value) -> Vec<RvizTopic> {
    fn visit(items: &Value, writes: bool, out: &mut Vec<RvizTopic>) {
        for item in items.as_sequence().into_iter().flatten() {
            let class = item["Class"].as_str().unwrap_or_default();
            let owner = item["Name"].as_str().unwrap_or(class).to_string();
            if class == "rviz_common/Group" {
                visit(&item["Displays"], writes, out);
                continue;
            }
            if class == "rviz_default_plugins/RobotModel" && item["Description Source"].as_str() == Some("File") {
                continue;
            }
            for (k, p) in item.as_mapping().into_iter().flatten() {
                let Some(key) = k.as_str().filter(|k| k.ends_with("Topic")) else {
                    continue;
                };
                let topic = p["Value"].as_str().or(p.as_str());
                let topic = topic
                    .unwrap_or_else(|| panic!("{owner}: `{key}` has no value"))
                    .to_string();
                let ty = plugin_type(class).unwrap_or_else(|| panic!("{owner}: the message type of {class} (add it)"));
                out.push(RvizTopic {
                    qos: qos_of(&owner, p),
                    owner: owner.clone(),
                    topic,
                    ty,
                    writes,
                });
            }
        }
    }
    let vm = &v["Visualization Manager"];
    let mut out = Vec::new();
    visit(&vm["Displays"], false, &mut out);
    visit(&vm["Tools"], true, &mut out);
    out
}

#[test]
fn every_rviz_topic_is_one_a_node_publishes_or_subscribes() {
    let v = rviz_config();
    let topics = rviz_topics(&v);
    let graph = graph();
    let rviz = identity("rviz2", NS);
    let mut problems = Vec::new();
    for t in &topics {
        if t.topic.starts_with('/') {
            problems.push(format!(
                "{}: `{}` is absolute; RViz in a namespace would miss it",
                t.owner, t.topic
            ));
        }
        let name = rviz.resolve(&t.topic);
        let Some(info) = graph.iter().find(|i| i.name == name) else {
            problems.push(format!("{}: no node publishes or subscribes `{name}`", t.owner));
            continue;
        };
        if info.ty != t.ty {
            problems.push(format!(
                "{}: `{name}` carries {}, the plugin {}",
                t.owner, info.ty, t.ty
            ));
        }
        let (peers, what) = if t.writes {
            (&info.subscribers, "subscribes")
        } else {
            (&info.publishers, "publishes")
        };
        if peers.is_empty() {
            problems.push(format!("{}: no node {what} `{name}`", t.owner));
        }
        for q in peers {
            let ok = if t.writes {
                compatible(t.qos, *q)
            } else {
                compatible(*q, t.qos)
            };
            if !ok {
                problems.push(format!(
                    "{}: RViz's {:?} does not match a node's {q:?} on `{name}`",
                    t.owner, t.qos
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}\nthe graph: {graph:#?}");

    // What the issue asks RViz to show and send, and that the check saw it.
    let shown = |ty: &str| topics.iter().any(|t| !t.writes && t.ty == ty);
    for ty in [
        "std_msgs/msg/String",
        "nav_msgs/msg/Odometry",
        "nav_msgs/msg/Path",
        "visualization_msgs/msg/MarkerArray",
    ] {
        assert!(shown(ty), "no display of {ty}: {topics:#?}");
    }
    assert!(
        topics
            .iter()
            .any(|t| t.writes && t.owner == "rviz_default_plugins/SetGoal" && t.topic == "goal_pose"),
        "no 2D Goal Pose tool on goal_pose: {topics:#?}"
    );
    let vm = &v["Visualization Manager"];
    assert_eq!(vm["Global Options"]["Fixed Frame"].as_str(), Some("odom"));
    let classes: Vec<&str> = vm["Displays"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter_map(|d| d["Class"].as_str())
        .collect();
    for c in ["Grid", "RobotModel", "TF", "Odometry", "Path", "MarkerArray"] {
        assert!(classes.contains(&format!("rviz_default_plugins/{c}").as_str()), "{c}");
    }
}

/// The config's check also catches what issue 19 found: markers on a topic nobody publishes.
#[test]
fn the_check_refuses_a_topic_no_node_publishes() {
    let v: Value = serde_yaml_ng::from_str(
        "Visualization Manager:\n  Displays:\n  - Class: rviz_default_plugins/MarkerArray\n    Name: M\n    \
         Topic: {Value: markers, Reliability Policy: Reliable, Durability Policy: Volatile}\n",
    )
    .unwrap();
    let topics = rviz_topics(&v);
    assert_eq!(topics.len(), 1);
    let name = identity("rviz2", NS).resolve(&topics[0].topic);
    assert!(!graph().iter().any(|i| i.name == name), "{name}");
}

fn rviz_nodes(file: &str, args: &[(&str, &str)]) -> Vec<NodeLaunch> {
    let overrides: Vec<(String, String)> = args.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect();
    let l = resolve_launch(&root().join(file), &overrides, &modbot_packages(&root())).unwrap();
    l.nodes.into_iter().filter(|n| n.pkg == "rviz2").collect()
}

/// RViz in a namespace: in the robot's namespace, /tf and /tf_static remapped there (its TF
/// listener subscribes the absolute names), the shipped config; the planner's frame is the
/// config's fixed frame, so the path and markers show without a map → odom transform.
#[test]
fn launched_rviz_follows_the_namespace_and_the_plan_frame() {
    let fixed = rviz_config()["Visualization Manager"]["Global Options"]["Fixed Frame"]
        .as_str()
        .unwrap()
        .to_string();
    for file in ["launch/sim.launch.yaml", "launch/mission.launch.yaml"] {
        assert!(rviz_nodes(file, &[]).is_empty(), "{file}: RViz only with rviz:=true");
        let nodes = rviz_nodes(file, &[("rviz", "true"), ("namespace", "snake1")]);
        assert_eq!(nodes.len(), 1, "{file}");
        let n = &nodes[0];
        assert_eq!(n.namespace.as_deref(), Some("/snake1"), "{file}");
        for (from, to) in [("/tf", "tf"), ("/tf_static", "tf_static")] {
            assert!(n.remaps.contains(&(from.into(), to.into())), "{file}: {:?}", n.remaps);
        }
        let d = n.args.iter().position(|a| a == "-d").expect("-d");
        let config = Path::new(&n.args[d + 1]);
        assert!(
            config.ends_with("config/modbot.rviz") && config.exists(),
            "{file}: {config:?}"
        );
    }
    let overrides = vec![("rviz".to_string(), "true".to_string())];
    let l = resolve_launch(
        &root().join("launch/mission.launch.yaml"),
        &overrides,
        &modbot_packages(&root()),
    )
    .unwrap();
    let planner = l.nodes.iter().find(|n| n.exec == "planner_node").unwrap();
    assert!(
        planner.params.contains(&("frame_id".into(), fixed.clone())),
        "planner_node stamps its plan in {fixed}: {:?}",
        planner.params
    );
}

/// Every launch file that starts rviz2 (those `modbot launch` cannot resolve, such as the
/// Gazebo one, included) remaps /tf and /tf_static.
#[test]
fn every_launch_of_rviz_remaps_tf() {
    fn rviz_bodies<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
        match v {
            Value::Sequence(s) => s.iter().for_each(|x| rviz_bodies(x, out)),
            Value::Mapping(m) => {
                if m.get("pkg").and_then(Value::as_str) == Some("rviz2") {
                    out.push(v);
                }
                m.values().for_each(|x| rviz_bodies(x, out));
            }
            _ => {}
        }
    }
    let mut seen = 0;
    for e in std::fs::read_dir(root().join("launch")).unwrap() {
        let path = e.unwrap().path();
        let v: Value = serde_yaml_ng::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let mut bodies = Vec::new();
        rviz_bodies(&v, &mut bodies);
        for b in bodies {
            seen += 1;
            let remaps: Vec<(&str, &str)> = b["remap"]
                .as_sequence()
                .into_iter()
                .flatten()
                .filter_map(|r| Some((r["from"].as_str()?, r["to"].as_str()?)))
                .collect();
            for r in [("/tf", "tf"), ("/tf_static", "tf_static")] {
                assert!(remaps.contains(&r), "{}: {remaps:?}", path.display());
            }
        }
    }
    assert!(seen >= 3, "{seen} rviz2 nodes");
}
