//! Every file shipped under config/, urdf/ and worlds/ loads with the loader that owns it
//! (launch/ joins when the launch files land).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() { out.extend(files(&p)) } else { out.push(p) }
    }
    out.sort();
    out
}

fn yaml(path: &Path) -> serde_yaml_ng::Value {
    serde_yaml_ng::from_str(&std::fs::read_to_string(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_shipped_file_loads() {
    let mut checked = 0;
    for dir in ["config", "urdf", "worlds"] {
        for path in files(&root().join(dir)) {
            let rel = path.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/");
            let parent = path
                .parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .to_string();
            let ext = path
                .extension()
                .map(|e| e.to_string_lossy().to_string())
                .unwrap_or_default();
            match (rel.as_str(), parent.as_str(), ext.as_str()) {
                ("config/modules.yaml", _, _) => {
                    modbot_core::ModuleCatalog::load(&path).unwrap();
                }
                ("config/gaits.yaml", _, _) => {
                    modbot_gaits::GaitLibrary::load(&path).unwrap();
                }
                ("config/capabilities.yaml", _, _) => {
                    modbot_planner::capabilities::Capabilities::load(&path).unwrap();
                }
                ("config/description.yaml", _, _) => {
                    modbot_description::DescriptionConfig::load(&path).unwrap();
                }
                (_, "controllers", "yaml") => {
                    let v = yaml(&path);
                    assert!(
                        v["/**/controller_manager"]["ros__parameters"]["update_rate"]
                            .as_f64()
                            .unwrap()
                            > 0.0
                    );
                    assert!(
                        !v["/**/position_controller"]["ros__parameters"]["joints"]
                            .as_sequence()
                            .unwrap()
                            .is_empty()
                    );
                }
                (_, "bridge", "yaml") => {
                    for e in yaml(&path).as_sequence().unwrap() {
                        for key in [
                            "ros_topic_name",
                            "gz_topic_name",
                            "ros_type_name",
                            "gz_type_name",
                            "direction",
                        ] {
                            assert!(e[key].as_str().is_some(), "{rel}: {key}");
                        }
                    }
                }
                (_, _, "rviz") => {
                    let v = yaml(&path);
                    let vm = &v["Visualization Manager"];
                    assert_eq!(vm["Global Options"]["Fixed Frame"].as_str(), Some("odom"), "{rel}");
                    let classes: Vec<&str> = vm["Displays"]
                        .as_sequence()
                        .unwrap()
                        .iter()
                        .filter_map(|d| d["Class"].as_str())
                        .collect();
                    for c in ["RobotModel", "TF", "Odometry", "Path", "MarkerArray"] {
                        assert!(
                            classes.contains(&format!("rviz_default_plugins/{c}").as_str()),
                            "{rel}: {c}"
                        );
                    }
                }
                (_, "poses", "yaml") => {
                    let robot = modbot_core::Topology::resolve("pp:2", &modbot_core::ModuleCatalog::builtin()).unwrap();
                    let text = std::fs::read_to_string(&path).unwrap();
                    modbot_gaits::PoseSequence::from_yaml(&text, &rel, &robot).unwrap();
                }
                (_, "robots", "yaml") => {
                    let t = modbot_core::Topology::load(&path, &modbot_core::ModuleCatalog::builtin()).unwrap();
                    assert!(!t.joint_names().is_empty(), "{rel}");
                }
                (_, "params", "yaml") => {
                    // A node's parameter file (record 0045): its section loads for that node
                    // (modbot_ros/tests/reference.rs keeps it equal to the code's defaults).
                    let exec = path.file_stem().unwrap().to_string_lossy().to_string();
                    let v = yaml(&path);
                    assert!(
                        v[format!("/**/{exec}").as_str()]["ros__parameters"].is_mapping(),
                        "{rel}"
                    );
                    #[cfg(feature = "ros")]
                    assert!(
                        !modbot_ros::params::load_params_file(&path, &exec, "/")
                            .unwrap()
                            .is_empty(),
                        "{rel}"
                    );
                }
                (_, "molemod", "yaml") => {
                    modbot_planner::molemod::Task::load(&path).unwrap();
                }
                (_, "urdf", "urdf") => {
                    let m =
                        modbot_description::UrdfModel::parse(&std::fs::read_to_string(&path).unwrap(), &rel).unwrap();
                    assert!(m.movable_joints().count() >= 2, "{rel}");
                }
                (_, "urdf", "xacro") => {
                    // The Gazebo description: the plain URDF plus the gz_ros2_control plugin
                    // (packages/modbot/tests/gazebo_launch.rs runs it through xacro).
                    let text = std::fs::read_to_string(&path).unwrap();
                    let plain = root().join(rel.trim_end_matches(".xacro"));
                    assert!(plain.is_file(), "{rel} has no plain URDF beside it");
                    assert!(
                        text.contains("<xacro:arg name=\"namespace\" default=\"\"/>")
                            && text.contains("<namespace>$(arg namespace)</namespace>"),
                        "{rel}"
                    );
                }
                (_, "worlds", "yaml") => {
                    modbot_core::Scenario::load(&path).unwrap();
                    assert!(path.with_extension("sdf").exists(), "{rel} has no generated world");
                }
                (_, "worlds", "sdf") => {
                    let text = std::fs::read_to_string(&path).unwrap();
                    assert!(
                        text.starts_with("<?xml") && text.contains("<sdf version=\"1.9\">"),
                        "{rel}"
                    );
                    assert!(path.with_extension("yaml").exists(), "{rel} has no scenario file");
                }
                _ => panic!("{rel}: no loader test for this file; add one here"),
            }
            checked += 1;
        }
    }
    assert!(checked >= 3 + 5 + 5 + 5 + 1 + 1 + 5 + 10, "{checked} files");
}

/// The no-ROS build of the `modbot` command links no DDS stack. (The message types and their
/// CDR encoding, `modbot_msgs`, are in it: `modbot run --mcap` records ROS 2 messages without
/// any middleware.)
#[test]
fn the_no_ros_build_has_no_dds() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "tree",
            "-p",
            "modbot",
            "--no-default-features",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--offline",
        ])
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let tree = String::from_utf8_lossy(&out.stdout);
    for dds in ["ros2-client", "rustdds", "modbot_ros"] {
        assert!(
            !tree.lines().any(|l| l.starts_with(&format!("{dds} "))),
            "{dds} in the no-ROS build"
        );
    }
    assert!(tree.lines().any(|l| l.starts_with("modbot_app ")), "{tree}");
    // With the default feature the DDS stack is there.
    let out = std::process::Command::new(env!("CARGO"))
        .args(["tree", "-p", "modbot", "-e", "normal", "--prefix", "none", "--offline"])
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .any(|l| l.starts_with("ros2-client "))
    );
}
