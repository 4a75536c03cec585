//! The strategic mission's robot interface in three worlds (issue 50, record 0065): what
//! mission_node's binding ([`RosModule`]) subscribes to, publishes and calls for each of the
//! world's modules, against what sim_node serves for them ([`serve_embedded`]) and what a
//! Gazebo world of the same modules serves — the bridge file
//! `config/bridge/strategic_mission_modules.yaml` (the modules' sensors through
//! ros_gz_bridge) and, per module namespace, gz_ros2_control with the controllers file
//! `config/controllers/wheelfoot.yaml` (joint_state_broadcaster's `joint_states`, each forward
//! command controller's `commands`, the controller manager's `switch_controller`), each
//! controller's joints in the binding's command order.
//!
//! What a Gazebo world does not give by itself is named here, exactly: the tag detections
//! (a detector on the bridged `camera/image_raw` must publish them) and the connectors (their
//! state, docking sensor and latch service, over gz-sim's DetachableJoint, record 0051). A
//! topic that leaves or joins that list fails the test.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use std::collections::BTreeSet;
use std::path::PathBuf;

use modbot_interface::Modules;
use modbot_ros::loopback::{LoopbackBus, identity};
use modbot_ros::module_server::serve_embedded;
use modbot_ros::robot::{
    ModuleDescription, POSITION_CONTROLLER, RosModule, VELOCITY_CONTROLLER, WHEEL_POSITION_CONTROLLER,
};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn yaml(rel: &str) -> serde_yaml_ng::Value {
    let p = root().join(rel);
    serde_yaml_ng::from_str(&std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// (resolved name, ROS type).
type End = (String, String);

/// The topics of a bus that have a subscriber, that have a publisher, and its services.
fn graph(bus: &LoopbackBus) -> (BTreeSet<End>, BTreeSet<End>, BTreeSet<End>) {
    let topics = bus.topics();
    let subscribed = topics
        .iter()
        .filter(|t| !t.subscribers.is_empty())
        .map(|t| (t.name.clone(), t.ty.clone()))
        .collect();
    let published = topics
        .iter()
        .filter(|t| !t.publishers.is_empty())
        .map(|t| (t.name.clone(), t.ty.clone()))
        .collect();
    (subscribed, published, bus.services().into_iter().collect())
}

fn joints_of(controllers: &serde_yaml_ng::Value, name: &str) -> Vec<String> {
    controllers[format!("/**/{name}").as_str()]["ros__parameters"]["joints"]
        .as_sequence()
        .map(|s| s.iter().map(|j| j.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

#[test]
fn mission_node_reads_what_sim_node_and_a_gazebo_world_of_the_same_modules_serve() {
    let world = modbot_core::Scenario::load(&root().join("worlds/strategic_mission.yaml")).unwrap();
    let sim = modbot_app::embedded_mission::sensed_modules(&world, &Default::default()).unwrap();
    let descs: Vec<ModuleDescription> = (0..sim.len())
        .map(|i| ModuleDescription::of_embedded(sim.embedded(i).unwrap()))
        .collect();
    assert_eq!(descs.len(), world.robot_starts.len());

    // mission_node's side: the binding of every module, as mission_node makes it.
    let mission_bus = LoopbackBus::new();
    let mut mission = mission_bus.node(identity("mission_node", "/"));
    let _modules: Vec<_> = descs
        .iter()
        .map(|d| RosModule::new(&mut mission, d.clone()).unwrap())
        .collect();
    let (reads, commands, calls) = graph(&mission_bus);
    assert!(reads.len() >= 6 * 4, "{reads:?}");

    // sim_node's side: the servers of the same modules.
    let sim_bus = LoopbackBus::new();
    let mut sim_node = sim_bus.node(identity("sim_node", "/"));
    let _servers = serve_embedded(&mut sim_node, &sim).unwrap();
    let (sim_takes, sim_gives, sim_serves) = graph(&sim_bus);
    for (what, need, have) in [
        ("reads", &reads, &sim_gives),
        ("commands", &commands, &sim_takes),
        ("calls", &calls, &sim_serves),
    ] {
        let missing: Vec<_> = need.difference(have).collect();
        assert!(
            missing.is_empty(),
            "sim_node does not serve what mission_node {what}: {missing:?}"
        );
    }

    // Gazebo's side: the bridge's sensors, and per module gz_ros2_control's controllers.
    let bridge = yaml("config/bridge/strategic_mission_modules.yaml");
    let controllers = yaml("config/controllers/wheelfoot.yaml");
    let cm = controllers["/**/controller_manager"]["ros__parameters"]
        .as_mapping()
        .unwrap();
    let declared: Vec<String> = cm
        .iter()
        .filter(|(_, v)| v["type"].as_str().is_some())
        .map(|(k, _)| k.as_str().unwrap().to_string())
        .collect();
    let mut gz_gives = BTreeSet::new();
    let mut gz_takes = BTreeSet::new();
    let mut gz_serves = BTreeSet::new();
    for e in bridge.as_sequence().unwrap() {
        let s = |k: &str| e[k].as_str().unwrap().to_string();
        match s("direction").as_str() {
            "GZ_TO_ROS" => gz_gives.insert((s("ros_topic_name"), s("ros_type_name"))),
            "ROS_TO_GZ" => gz_takes.insert((s("ros_topic_name"), s("ros_type_name"))),
            d => panic!("direction {d}"),
        };
    }
    for d in &descs {
        let ns = format!("/{}", d.name);
        assert!(declared.iter().any(|c| c == "joint_state_broadcaster"), "{declared:?}");
        gz_gives.insert((format!("{ns}/joint_states"), "sensor_msgs/msg/JointState".into()));
        for c in declared.iter().filter(|c| *c != "joint_state_broadcaster") {
            gz_takes.insert((format!("{ns}/{c}/commands"), "std_msgs/msg/Float64MultiArray".into()));
        }
        gz_serves.insert((
            format!("{ns}/controller_manager/switch_controller"),
            "controller_manager_msgs/srv/SwitchController".into(),
        ));
        // Each controller drives the joints the binding commands through it, in its order.
        let pick = |f: &dyn Fn(usize) -> bool| -> Vec<String> {
            (0..d.joints.len())
                .filter(|&k| f(k))
                .map(|k| d.joints[k].clone())
                .collect()
        };
        assert_eq!(
            joints_of(&controllers, POSITION_CONTROLLER),
            pick(&|k| !d.drives[k].velocity),
            "{ns}"
        );
        assert_eq!(
            joints_of(&controllers, VELOCITY_CONTROLLER),
            pick(&|k| d.drives[k].velocity),
            "{ns}"
        );
        assert_eq!(
            joints_of(&controllers, WHEEL_POSITION_CONTROLLER),
            pick(&|k| d.drives[k].velocity && d.drives[k].position),
            "{ns}"
        );
    }

    // What Gazebo leaves to modbot's nodes, exactly.
    let mut left_reads = BTreeSet::new();
    let mut left_calls = BTreeSet::new();
    for d in &descs {
        let ns = format!("/{}", d.name);
        if d.camera {
            left_reads.insert((
                format!("{ns}/camera/tags"),
                "modbot_msgs/msg/TagDetectionArray".to_string(),
            ));
        }
        for p in &d.ports {
            left_reads.insert((
                format!("{ns}/connectors/{p}/state"),
                "modbot_msgs/msg/ConnectorState".into(),
            ));
            left_reads.insert((
                format!("{ns}/connectors/{p}/docking"),
                "modbot_msgs/msg/DockingReadingArray".into(),
            ));
            left_calls.insert((format!("{ns}/connectors/{p}/latch"), "std_srvs/srv/SetBool".to_string()));
        }
    }
    let unread: BTreeSet<End> = reads.difference(&gz_gives).cloned().collect();
    assert_eq!(
        unread, left_reads,
        "what mission_node reads and a Gazebo world does not give"
    );
    let untaken: Vec<_> = commands.difference(&gz_takes).collect();
    assert!(untaken.is_empty(), "commands no Gazebo controller takes: {untaken:?}");
    let unserved: BTreeSet<End> = calls.difference(&gz_serves).cloned().collect();
    assert_eq!(
        unserved, left_calls,
        "what mission_node calls and a Gazebo world does not serve"
    );
    // The bridge gives each module's IMU and force sensor under its namespace, and the camera's
    // images for the detector.
    for d in &descs {
        for (topic, ty) in [
            ("imu", "sensor_msgs/msg/Imu"),
            ("wheel_ft", "geometry_msgs/msg/WrenchStamped"),
            ("camera/image_raw", "sensor_msgs/msg/Image"),
            ("camera/camera_info", "sensor_msgs/msg/CameraInfo"),
        ] {
            assert!(
                gz_gives.contains(&(format!("/{}/{topic}", d.name), ty.to_string())),
                "the bridge gives no /{}/{topic} ({ty})",
                d.name
            );
        }
    }
}
