//! `launch/gazebo.launch.yaml` as far as it can be checked without gz-sim (decision record
//! 0044): for every shipped robot, with no namespace and with `snake1`, the dry run
//! (`modbot launch --print`'s expansion) leaves no substitution, names only files that
//! exist; the real ROS 2 xacro (PyPI, `test/interop/requirements.txt`) turns the command of
//! `robot_description` into a URDF that `check_urdf` accepts, with the gz_ros2_control
//! plugin in the namespace and its controllers file found through an ament prefix built as
//! colcon installs modbot_bringup; every spawner names `NS/controller_manager` and a
//! controller of the controllers file (together: all of them); every bridge entry has the
//! ros_gz_bridge keys, a direction and a type pair it supports, and its ROS type serializes
//! and deserializes through rclpy.
//!
//! The Python side lives in the interop virtualenv, `target/interop-venv` (or
//! `$MODBOT_INTEROP_VENV`), and tf2_msgs, which has no wheel, in modbot's rclpy build of its
//! messages under `target/interop-msgs`; `test/interop/python_env.rs` (shared with the rclpy
//! interop test) makes the venv when it lacks an import and the messages when they are
//! missing or stale, and fails naming the command.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../../../test/interop/python_env.rs"]
mod python_env;
use python_env::{msgs_prefix, msgs_pythonpath, repo_root as root, venv};

use modbot_ros::launch::{Launch, Options, modbot_packages, resolve_with, split_command};

/// An ament prefix as `colcon build` installs modbot_bringup: the package marker in the
/// resource index and `share/modbot_bringup` (here a link to the repository root, which holds
/// what its CMakeLists installs: launch/, urdf/, worlds/, config/).
fn ament_prefix() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("gazebo_launch_prefix_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    let index = p.join("share/ament_index/resource_index/packages");
    std::fs::create_dir_all(&index).unwrap();
    std::fs::write(index.join("modbot_bringup"), "").unwrap();
    std::os::unix::fs::symlink(root(), p.join("share/modbot_bringup")).unwrap();
    p
}

/// ros_gz_bridge's supported topic pairs (ROS type, Gazebo type) that modbot's bridge files
/// may use, from the table "The following message types can be bridged for topics" of
/// ros_gz_bridge's README.md (gazebosim/ros_gz, branch jazzy). A pair added to the bridge
/// generator must be in that table and then here.
const BRIDGE_PAIRS: &[(&str, &str)] = &[
    ("rosgraph_msgs/msg/Clock", "gz.msgs.Clock"),
    ("nav_msgs/msg/Odometry", "gz.msgs.Odometry"),
    ("nav_msgs/msg/Odometry", "gz.msgs.OdometryWithCovariance"),
    ("tf2_msgs/msg/TFMessage", "gz.msgs.Pose_V"),
    ("geometry_msgs/msg/PoseArray", "gz.msgs.Pose_V"),
    ("geometry_msgs/msg/Wrench", "gz.msgs.Wrench"),
    ("geometry_msgs/msg/WrenchStamped", "gz.msgs.Wrench"),
    ("geometry_msgs/msg/Twist", "gz.msgs.Twist"),
    ("sensor_msgs/msg/JointState", "gz.msgs.Model"),
    ("sensor_msgs/msg/Imu", "gz.msgs.IMU"),
    ("sensor_msgs/msg/Image", "gz.msgs.Image"),
    ("sensor_msgs/msg/CameraInfo", "gz.msgs.CameraInfo"),
    ("std_msgs/msg/Float64", "gz.msgs.Double"),
];

/// The keys of a ros_gz_bridge YAML entry modbot writes (the README's "Full set of
/// configurations" without the optional queue sizes and `lazy`), and its directions.
const BRIDGE_KEYS: &[&str] = &[
    "ros_topic_name",
    "gz_topic_name",
    "ros_type_name",
    "gz_type_name",
    "direction",
];
const BRIDGE_DIRECTIONS: &[&str] = &["BIDIRECTIONAL", "GZ_TO_ROS", "ROS_TO_GZ"];

fn expand(robot: &str, ns: &str) -> Launch {
    let file = root().join("launch/gazebo.launch.yaml");
    let overrides = [
        ("robot".to_string(), robot.to_string()),
        ("namespace".to_string(), ns.to_string()),
        // The held pose suits every robot (gait_node's parameters are checked elsewhere).
        ("gait".to_string(), String::new()),
    ];
    resolve_with(&file, &overrides, &modbot_packages(&root()), Options { dry_run: true })
        .unwrap_or_else(|e| panic!("{robot} ns `{ns}`: {e}"))
}

/// Every path under the repository root a string names (a whole word, or after `:=`).
fn paths_in(s: &str, root: &str) -> Vec<PathBuf> {
    s.split_whitespace()
        .map(|w| w.rsplit(":=").next().unwrap_or(w))
        .filter(|w| w.starts_with(root))
        .map(PathBuf::from)
        .collect()
}

/// The text of the first `<tag>` element inside `block` (empty for `<tag/>`).
fn element<'a>(block: &'a str, tag: &str) -> Option<&'a str> {
    if block.contains(&format!("<{tag}/>")) {
        return Some("");
    }
    let open = format!("<{tag}>");
    let start = block.find(&open)? + open.len();
    let end = block[start..].find(&format!("</{tag}>"))?;
    Some(block[start..start + end].trim())
}

/// The blocks `<tag name='NAME' type='TYPE'>…</tag>` of an SDF as sdformat prints it (single
/// quotes, no nesting of the same tag): (name, type, body).
fn sdf_blocks<'a>(sdf: &'a str, tag: &str) -> Vec<(String, String, &'a str)> {
    let mut out = Vec::new();
    let open = format!("<{tag} name='");
    let close = format!("</{tag}>");
    let mut at = 0;
    while let Some(k) = sdf[at..].find(&open) {
        let start = at + k + open.len();
        let name_end = start + sdf[start..].find('\'').unwrap();
        let head_end = start + sdf[start..].find('>').unwrap();
        let head = &sdf[name_end..head_end];
        let ty = head
            .split("type='")
            .nth(1)
            .and_then(|t| t.split('\'').next())
            .unwrap_or_default()
            .to_string();
        let end = head_end + sdf[head_end..].find(&close).unwrap();
        out.push((sdf[start..name_end].to_string(), ty, &sdf[head_end + 1..end]));
        at = end;
    }
    out
}

/// The robot's URDF (xacro-expanded) through sdformat's own URDF parser (`ign sdf -p`, what
/// gz-sim does when it spawns it), checked against the module catalog: every force sensor's
/// fixed joint survives (sdformat lumps a fixed joint's child into its parent, and a sensor on
/// that joint with it, unless `preserveFixedJoint`) with its force_torque sensor; each
/// module's IMU and camera are there with the catalog's rate, field of view, image size and
/// range. Returns the gz topics the sensors publish (a camera's info beside its image).
fn sensors_through_sdformat(at: &str, urdf_file: &Path, topology: &modbot_core::Topology) -> BTreeSet<String> {
    let out = Command::new("ign")
        .args(["sdf", "-p"])
        .arg(urdf_file)
        .output()
        .expect("ign sdf -p");
    let sdf = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success() && sdf.contains("<model"),
        "{at}: ign sdf -p failed: {}{sdf}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sensors = sdf_blocks(&sdf, "sensor");
    let joints = sdf_blocks(&sdf, "joint");
    let sensor = |name: &str, ty: &str| -> &str {
        sensors
            .iter()
            .find(|(n, t, _)| n == name && t == ty)
            .unwrap_or_else(|| panic!("{at}: sdformat dropped sensor {name} ({ty}); sensors: {sensors:?}"))
            .2
    };
    let number = |block: &str, tag: &str| -> f64 {
        element(block, tag)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{at}: no number <{tag}> in {block}"))
    };
    let mut topics = BTreeSet::new();
    let mut expected = 0;
    for (m, module) in topology.modules.iter().enumerate() {
        let kind = topology.kind_of(m);
        for f in kind.fixed_joints.iter().filter(|f| f.force_sensor) {
            let name = format!("{}_{}", module.name, f.name);
            let (_, ty, body) = joints
                .iter()
                .find(|(n, _, _)| *n == name)
                .unwrap_or_else(|| panic!("{at}: sdformat lumped the force sensor's joint {name}"));
            assert_eq!(ty, "fixed", "{at}: {name}");
            assert!(
                body.contains(&format!("<sensor name='{name}_ft' type='force_torque'>")),
                "{at}: {name}: {body}"
            );
            topics.insert(
                element(sensor(&format!("{name}_ft"), "force_torque"), "topic")
                    .unwrap()
                    .to_string(),
            );
            expected += 1;
        }
        if let Some(imu) = &kind.sensors.imu {
            let b = sensor(&format!("{}_imu", module.name), "imu");
            assert_eq!(number(b, "update_rate"), imu.rate_hz, "{at}: imu");
            let stddev = number(element(b, "angular_velocity").unwrap(), "stddev");
            assert!(
                (stddev - imu.gyro_sigma_deg_s.to_radians()).abs() < 1e-9,
                "{at}: gyro σ {stddev}"
            );
            topics.insert(element(b, "topic").unwrap().to_string());
            expected += 1;
        }
        if let Some(c) = &kind.sensors.camera {
            let b = sensor(&format!("{}_camera", module.name), "camera");
            assert_eq!(number(b, "update_rate"), c.rate_hz, "{at}: camera");
            let hfov = number(b, "horizontal_fov");
            let (w, h) = (number(b, "width"), number(b, "height"));
            assert!((hfov.to_degrees() - c.hfov_deg).abs() < 1e-6, "{at}: hfov {hfov}");
            assert_eq!(w, f64::from(c.width_px), "{at}");
            // The vertical field of view the image's aspect gives (square pixels).
            let vfov = 2.0 * ((hfov / 2.0).tan() * h / w).atan();
            assert!(
                (vfov.to_degrees() - c.vfov_deg).abs() < 0.1,
                "{at}: vfov {}",
                vfov.to_degrees()
            );
            assert_eq!(number(b, "far"), c.range_m, "{at}");
            let image = element(b, "topic").unwrap().to_string();
            let info = format!("{}/camera_info", image.rsplit_once('/').unwrap().0);
            topics.insert(image);
            topics.insert(info);
            expected += 1;
        }
    }
    // Nothing else is declared a sensor.
    assert_eq!(sensors.len(), expected, "{at}: {sensors:?}");
    topics
}

/// How far the launch's spawn height may be from [`spawn_height`], m (it is written to 1 mm).
const SPAWN_Z_TOLERANCE_M: f64 = 0.001;

/// Where gz-sim should spawn a shipped robot's root (m): 5 cm over the ground for a robot that
/// starts flat; for one with an initial pose (its robot file's initial_deg), 5 mm over the
/// root's height in that pose as the embedded simulator stands it on the ground (the first
/// row of `modbot run`'s links.csv).
fn spawn_height(robot: &str) -> f64 {
    let t = modbot_core::Topology::resolve(robot, &modbot_core::ModuleCatalog::builtin())
        .unwrap_or_else(|e| panic!("{robot}: {e}"));
    if t.initial_positions().iter().all(|q| *q == 0.0) {
        return 0.05;
    }
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "spawn_height_{}_{}",
        robot.replace(':', "_"),
        std::process::id()
    ));
    let run = Command::new(env!("CARGO_BIN_EXE_modbot"))
        .args([
            "run",
            "--robot",
            robot,
            "--gait",
            "stand",
            "--warmup",
            "0",
            "--cycles",
            "1",
            "--quiet",
            "--no-replay",
            "--force",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let text = std::fs::read_to_string(out.join("links.csv")).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let first: Vec<&str> = lines.next().unwrap().split(',').collect();
    let _ = std::fs::remove_dir_all(&out);
    let col = head.iter().position(|c| *c == "base_link_z_m").unwrap();
    first[col].parse::<f64>().unwrap() + 0.005
}

fn yaml(path: &Path) -> serde_yaml_ng::Value {
    serde_yaml_ng::from_str(&std::fs::read_to_string(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_gazebo_launch_expands_to_files_that_exist_a_valid_urdf_and_matching_controllers_and_bridges() {
    let started = std::time::Instant::now();
    let py = python_env::python(
        "rclpy, rclpy.serialization, nav_msgs.msg, geometry_msgs.msg, rosgraph_msgs.msg, xacro, ament_index_python",
    );
    let msgs = msgs_pythonpath();
    let which = Command::new("check_urdf").arg("--help").output();
    assert!(which.is_ok(), "check_urdf is missing: apt-get install liburdfdom-tools");
    let prefix = ament_prefix();
    let share = prefix.join("share/modbot_bringup");
    let root_s = root().display().to_string();
    let mut ros_types = BTreeSet::new();
    let mut robots = 0;
    let mut spawn_z = std::collections::BTreeMap::new();
    for spec in modbot_description::STANDARD_ROBOTS {
        let robot = modbot_description::artifacts::robot(spec, &modbot_core::ModuleCatalog::builtin())
            .unwrap()
            .name;
        robots += 1;
        for ns in ["", "snake1"] {
            let at = format!("{robot}, namespace `{ns}`");
            let l = expand(&robot, ns);
            let ns_prefix = if ns.is_empty() { String::new() } else { format!("/{ns}") };
            let want_ns = (!ns.is_empty()).then(|| ns_prefix.clone());

            // Nothing left unresolved, and every file it names under the share root exists.
            let mut named = 0;
            let mut all: Vec<(String, String)> = l.nodes.iter().flat_map(|n| n.fields()).collect();
            for i in &l.includes {
                all.push(("include".into(), i.file.clone()));
                all.extend(i.args.iter().cloned());
            }
            for (field, v) in &all {
                assert!(!v.contains("$("), "{at}: {field} = {v}");
                assert!(!v.contains("<find-pkg-share modbot"), "{at}: {field} = {v}");
                for p in paths_in(v, &root_s) {
                    assert!(p.exists(), "{at}: {field} names {}, which does not exist", p.display());
                    named += 1;
                }
            }
            // The world, the xacro, the bridge file and the controllers file (once per spawner
            // of a controller with joints).
            assert!(named >= 4, "{at}: only {named} files named");

            // Gazebo itself: ros_gz_sim's launch file, the world, closing Gazebo ends the launch.
            assert_eq!(l.includes.len(), 1, "{at}");
            let inc = &l.includes[0];
            assert_eq!(inc.file, "<find-pkg-share ros_gz_sim>/launch/gz_sim.launch.py", "{at}");
            assert_eq!(
                inc.args,
                vec![
                    ("gz_args".to_string(), format!("-r {root_s}/worlds/flat.sdf")),
                    ("on_exit_shutdown".to_string(), "true".to_string())
                ],
                "{at}"
            );
            for n in &l.nodes {
                assert_eq!(n.namespace, want_ns, "{at}: {}", n.label());
            }

            // robot_description: the xacro through the real xacro, then check_urdf.
            let rsp = l
                .nodes
                .iter()
                .find(|n| n.pkg == "robot_state_publisher")
                .unwrap_or_else(|| panic!("{at}: no robot_state_publisher"));
            assert_eq!(rsp.command_params.len(), 1, "{at}");
            let (param, line) = &rsp.command_params[0];
            assert_eq!(param, "robot_description", "{at}");
            let argv = split_command(line);
            assert_eq!(
                argv,
                vec![
                    "xacro".to_string(),
                    format!("{root_s}/urdf/{robot}.urdf.xacro"),
                    format!("namespace:={ns}")
                ],
                "{at}"
            );
            // As installed: the same file through the ament prefix.
            let xacro_file = share.join(format!("urdf/{robot}.urdf.xacro"));
            let out = Command::new(venv().join("bin/xacro"))
                .arg(&xacro_file)
                .args(&argv[2..])
                .env("AMENT_PREFIX_PATH", &prefix)
                .output()
                .expect("run xacro");
            assert!(
                out.status.success(),
                "{at}: xacro failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let urdf = String::from_utf8(out.stdout).unwrap();
            assert!(!urdf.contains("$("), "{at}: xacro left a substitution");
            let urdf_file = prefix.join(format!("{robot}_{ns}.urdf"));
            std::fs::write(&urdf_file, &urdf).unwrap();
            let check = Command::new("check_urdf").arg(&urdf_file).output().expect("check_urdf");
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&check.stdout),
                String::from_utf8_lossy(&check.stderr)
            );
            assert!(check.status.success(), "{at}: check_urdf failed:\n{text}");
            assert!(
                !text.lines().any(|l| l.starts_with("Error")),
                "{at}: check_urdf reported an error:\n{text}"
            );
            let topology = modbot_description::artifacts::robot(spec, &modbot_core::ModuleCatalog::builtin()).unwrap();
            let mut gz_topics = sensors_through_sdformat(&at, &urdf_file, &topology);
            for plugin in ["odom_topic", "tf_topic"] {
                gz_topics.insert(element(&urdf, plugin).unwrap().to_string());
            }
            // The same robot as the plain URDF RViz and sim_node read.
            let plain = modbot_description::UrdfModel::parse(
                &std::fs::read_to_string(root().join(format!("urdf/{robot}.urdf"))).unwrap(),
                "plain",
            )
            .unwrap();
            let expanded = modbot_description::UrdfModel::parse(&urdf, "xacro").unwrap();
            assert_eq!(expanded.joints.len(), plain.joints.len(), "{at}");
            assert_eq!(expanded.links.len(), plain.links.len(), "{at}");
            // The gz_ros2_control plugin: in the namespace, its controllers file found.
            let plugin_at = urdf
                .find("filename=\"gz_ros2_control-system\"")
                .unwrap_or_else(|| panic!("{at}: no gz_ros2_control plugin"));
            let plugin = &urdf[plugin_at..plugin_at + urdf[plugin_at..].find("</plugin>").unwrap()];
            assert_eq!(element(plugin, "namespace"), Some(ns), "{at}: {plugin}");
            let params = PathBuf::from(element(plugin, "parameters").unwrap());
            assert_eq!(params, share.join(format!("config/controllers/{robot}.yaml")), "{at}");
            assert!(params.is_file(), "{at}: {} is not a file", params.display());

            // The controllers: spawned on NS/controller_manager, each one in the file, all of them.
            let controllers_file = root().join(format!("config/controllers/{robot}.yaml"));
            let doc = yaml(&controllers_file);
            let cm = &doc["/**/controller_manager"]["ros__parameters"];
            let declared: BTreeSet<String> = cm
                .as_mapping()
                .unwrap()
                .iter()
                .filter(|(_, v)| v["type"].as_str().is_some())
                .map(|(k, _)| k.as_str().unwrap().to_string())
                .collect();
            // The wildcard section reaches the namespaced controller manager, as rcl matches it.
            let cm_params = modbot_ros::params::load_params_file(
                &controllers_file,
                "controller_manager",
                if ns.is_empty() { "/" } else { &ns_prefix },
            )
            .unwrap();
            assert!(cm_params.contains_key("update_rate"), "{at}: {cm_params:?}");
            let mut spawned = BTreeSet::new();
            for s in l.nodes.iter().filter(|n| n.pkg == "controller_manager") {
                assert_eq!(s.exec, "spawner", "{at}");
                let name = s.args[0].clone();
                let flag = |f: &str| {
                    let k = s
                        .args
                        .iter()
                        .position(|a| a == f)
                        .unwrap_or_else(|| panic!("{at}: {name} without {f}"));
                    s.args[k + 1].clone()
                };
                assert_eq!(flag("-c"), format!("{ns_prefix}/controller_manager"), "{at}: {name}");
                // The wheels' servo controller waits inactive for a switch; the rest run.
                assert_eq!(
                    s.args.iter().any(|a| a == "--inactive"),
                    name == "wheel_position_controller",
                    "{at}: {name}: {:?}",
                    s.args
                );
                assert!(
                    declared.contains(&name),
                    "{at}: {name} is not in {}",
                    controllers_file.display()
                );
                if name != "joint_state_broadcaster" {
                    assert_eq!(PathBuf::from(flag("--param-file")), controllers_file, "{at}: {name}");
                    let joints = doc[format!("/**/{name}").as_str()]["ros__parameters"]["joints"]
                        .as_sequence()
                        .map_or(0, Vec::len);
                    assert!(joints > 0, "{at}: {name} has no joints");
                }
                spawned.insert(name);
            }
            assert_eq!(spawned, declared, "{at}: spawned controllers");

            // ros_gz_sim create reads the namespaced robot_description and spawns the model
            // at its spawn height (record 0056).
            let create = l.nodes.iter().find(|n| n.pkg == "ros_gz_sim").unwrap();
            let z = spawn_z.entry(robot.clone()).or_insert_with(|| spawn_height(spec));
            assert_eq!(
                create.args[..5],
                [
                    "-topic",
                    &format!("{ns_prefix}/robot_description"),
                    "-name",
                    &robot,
                    "-z",
                ],
                "{at}"
            );
            let given: f64 = create.args[5].parse().unwrap_or(f64::NAN);
            assert!(
                (given - *z).abs() <= SPAWN_Z_TOLERANCE_M,
                "{at}: spawned at z = {given}, the robot's spawn height is {z:.4} m"
            );

            // The bridge.
            let bridge = l.nodes.iter().find(|n| n.pkg == "ros_gz_bridge").unwrap();
            let config = bridge.params.iter().find(|(k, _)| k == "config_file").unwrap();
            let config = PathBuf::from(&config.1);
            assert_eq!(config, root().join(format!("config/bridge/{robot}.yaml")), "{at}");
            for e in yaml(&config).as_sequence().unwrap() {
                let keys: BTreeSet<&str> = e.as_mapping().unwrap().keys().map(|k| k.as_str().unwrap()).collect();
                assert_eq!(keys, BRIDGE_KEYS.iter().copied().collect(), "{at}: {e:?}");
                let s = |k: &str| e[k].as_str().unwrap().to_string();
                assert!(BRIDGE_DIRECTIONS.contains(&s("direction").as_str()), "{at}: {e:?}");
                let pair = (s("ros_type_name"), s("gz_type_name"));
                assert!(
                    BRIDGE_PAIRS.iter().any(|(r, g)| *r == pair.0 && *g == pair.1),
                    "{at}: ros_gz_bridge does not bridge {pair:?}"
                );
                let gz = s("gz_topic_name");
                assert!(
                    gz == "/clock" || gz.starts_with(&format!("/model/{robot}/")),
                    "{at}: {gz}"
                );
                // Every bridged model topic is one the model publishes.
                assert!(
                    gz == "/clock" || gz_topics.contains(&gz),
                    "{at}: the bridge reads {gz}, which no sensor or plugin of the model publishes ({gz_topics:?})"
                );
                gz_topics.remove(&gz);
                ros_types.insert(pair.0);
            }
            // And every topic the model publishes is bridged.
            assert!(gz_topics.is_empty(), "{at}: not bridged: {gz_topics:?}");
        }
    }
    assert_eq!(robots, 8);

    // Every bridged ROS type imports from the wheels (tf2_msgs from modbot's build) and a
    // message round-trips through rclpy's serialization.
    let script = format!(
        "import importlib\n\
         from rclpy.serialization import serialize_message, deserialize_message\n\
         for name in {types:?}:\n\
         \x20   pkg, _, typ = name.split('/')\n\
         \x20   cls = getattr(importlib.import_module(pkg + '.msg'), typ)\n\
         \x20   m = cls()\n\
         \x20   if hasattr(m, 'header'):\n\
         \x20       m.header.frame_id = 'odom'\n\
         \x20       m.header.stamp.sec = 12\n\
         \x20   if typ == 'Clock':\n\
         \x20       m.clock.sec, m.clock.nanosec = 3, 500\n\
         \x20   if typ == 'Odometry':\n\
         \x20       m.child_frame_id = 'base_link'; m.pose.pose.position.x = 0.25\n\
         \x20   if typ == 'Wrench':\n\
         \x20       m.force.z = -1.5; m.torque.x = 0.125\n\
         \x20   if typ == 'TFMessage':\n\
         \x20       from geometry_msgs.msg import TransformStamped\n\
         \x20       t = TransformStamped(); t.child_frame_id = 'base_link'; t.transform.translation.x = 1.0\n\
         \x20       m.transforms = [t]\n\
         \x20   data = serialize_message(m)\n\
         \x20   back = deserialize_message(data, cls)\n\
         \x20   assert back == m, name\n\
         \x20   print(name, len(data), 'bytes')\n",
        types = ros_types.iter().collect::<Vec<_>>()
    );
    let out = Command::new(&py)
        .args(["-c", &script])
        .env("PYTHONPATH", &msgs)
        .env("LD_LIBRARY_PATH", msgs_prefix().join("lib"))
        .output()
        .expect("python");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "round trip failed:\n{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for t in &ros_types {
        assert!(text.lines().any(|l| l.starts_with(&format!("{t} "))), "{t}:\n{text}");
    }
    assert!(ros_types.len() >= 4, "{ros_types:?}");
    let _ = std::fs::remove_dir_all(&prefix);
    eprintln!("checked in {:.1} s: {ros_types:?}", started.elapsed().as_secs_f64());
}

/// `modbot launch --print` shows the same expansion: Gazebo's include, every node of every
/// package, robot_description as the xacro command line; running it is still refused.
#[test]
fn print_shows_the_gazebo_launch_and_running_it_is_refused() {
    let m = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_modbot"))
            .args(args)
            .current_dir(root())
            .output()
            .unwrap()
    };
    let o = m(&[
        "launch",
        "launch/gazebo.launch.yaml",
        "--print",
        "robot:=py_16",
        "gait:=sidewinding",
        "namespace:=snake1",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let root_s = root().display().to_string();
    assert!(
        text.starts_with("include '<find-pkg-share ros_gz_sim>/launch/gz_sim.launch.py'"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "'robot_description:=<output of: xacro {root_s}/urdf/py_16.urdf.xacro namespace:=snake1>'"
        )),
        "{text}"
    );
    assert!(
        text.contains("ros2 run controller_manager spawner position_controller -c /snake1/controller_manager"),
        "{text}"
    );
    assert!(
        text.contains("node gait_node ") && text.contains("gait:=sidewinding"),
        "{text}"
    );
    assert!(!text.contains("$("), "{text}");
    // A gait py_16 cannot run is refused by the same check as in a running launch.
    let o = m(&["launch", "launch/gazebo.launch.yaml", "--print", "robot:=py_16"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("gait_node: bad parameters"));
}
