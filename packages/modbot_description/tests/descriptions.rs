//! Generated descriptions: drift against the checked-in files, the URDF read back through
//! urdf-rs, its kinematics against modbot_core's, and bad input.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use std::collections::BTreeMap;
use std::path::PathBuf;

use modbot_core::{ModuleCatalog, Topology};
use modbot_description::model::{JointKind as UrdfJointKind, Shape};
use modbot_description::{DescriptionConfig, UrdfModel, artifacts, urdf};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use proptest::prelude::*;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn generate(spec: &str) -> (Topology, String) {
    let c = ModuleCatalog::builtin();
    let t = artifacts::robot(spec, &c).unwrap();
    let text = urdf::urdf(&t, &DescriptionConfig::builtin()).unwrap();
    (t, text)
}

/// A checked-in file that differs from the generator's output fails here; regenerate with
/// `modbot export all`.
#[test]
fn checked_in_files_are_fresh() {
    let all = artifacts::standard(&root(), &ModuleCatalog::builtin(), &DescriptionConfig::builtin()).unwrap();
    assert!(all.len() >= 15 + 5, "{} artifacts", all.len());
    for a in all {
        let path = root().join(&a.path);
        if std::env::var_os("MODBOT_BLESS").is_some() {
            // `MODBOT_BLESS=1 cargo test -p modbot_description` rewrites them, like `modbot export all`.
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &a.content).unwrap();
        }
        let on_disk = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}; run `modbot export all`", a.path.display()));
        assert!(
            on_disk == a.content,
            "{} is stale; run `modbot export all`",
            a.path.display()
        );
    }
}

/// urdf-rs reads every shipped URDF back with every joint, limit and inertia intact.
#[test]
fn shipped_urdfs_round_trip() {
    let c = ModuleCatalog::builtin();
    for spec in modbot_description::STANDARD_ROBOTS {
        let t = artifacts::robot(spec, &c).unwrap();
        let path = root().join(format!("urdf/{}.urdf", t.name));
        let m = UrdfModel::parse(&std::fs::read_to_string(&path).unwrap(), &path.display().to_string()).unwrap();
        assert_eq!(m.name, t.name);
        assert_eq!(m.links[m.root].name, "base_link");
        let movable: Vec<_> = m.movable_joints().collect();
        let mut names: Vec<String> = movable.iter().map(|j| j.name.clone()).collect();
        let mut want = t.joint_names();
        if t.modules.iter().all(|m| m.kind == "y1") {
            // A chain's tree order is its command order.
            assert_eq!(names, want);
        }
        names.sort();
        want.sort();
        assert_eq!(names, want, "{spec}");
        let joints = t.joints();
        for j in &movable {
            let def = &joints.iter().find(|r| r.name == j.name).unwrap().def;
            match def.limits {
                Some(lim) => {
                    let l = j.limits.unwrap();
                    assert_eq!(l.effort, def.actuator.max_torque_nm(), "{}", j.name);
                    assert!(
                        (l.velocity - def.actuator.max_speed_rad_s()).abs() < 1e-12,
                        "{}",
                        j.name
                    );
                    assert_eq!(j.kind, UrdfJointKind::Revolute, "{}", j.name);
                    assert!((l.lower - lim.min_deg.to_radians()).abs() < 1e-15, "{}", j.name);
                    assert!((l.upper - lim.max_deg.to_radians()).abs() < 1e-15, "{}", j.name);
                }
                // The URDF model keeps no limits of a continuous joint.
                None => assert_eq!(j.kind, UrdfJointKind::Continuous, "{}", j.name),
            }
        }
        if t.modules.iter().any(|m| m.kind != "y1") {
            continue;
        }
        for link in m.links.iter().filter(|l| l.name != "base_link") {
            assert_eq!(link.mass, 0.025);
            let (lx, w, h) = (0.036f64, 0.052f64, 0.052f64);
            let m2 = 0.025;
            let want = [
                m2 * (w * w + h * h) / 12.0,
                m2 * (lx * lx + h * h) / 12.0,
                m2 * (lx * lx + w * w) / 12.0,
            ];
            for (got, want) in [link.inertia[0], link.inertia[3], link.inertia[5]].iter().zip(want) {
                assert!((got - want).abs() < 1e-18, "{}: {got} vs {want}", link.name);
            }
            assert_eq!(link.collisions.len(), 1);
            assert_eq!(link.collisions[0].1, Shape::Box([0.036, 0.052, 0.052]));
        }
    }
}

#[test]
fn controllers_and_bridge_name_the_joints_in_order() {
    let (t, _) = generate("py:8");
    let y = urdf::controllers_yaml(&t, &DescriptionConfig::builtin());
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&y).unwrap();
    let cm = &doc["/**/controller_manager"]["ros__parameters"];
    assert_eq!(cm["update_rate"].as_f64(), Some(100.0));
    assert_eq!(
        cm["position_controller"]["type"].as_str(),
        Some("forward_command_controller/ForwardCommandController")
    );
    assert_eq!(
        cm["joint_state_broadcaster"]["type"].as_str(),
        Some("joint_state_broadcaster/JointStateBroadcaster")
    );
    let pc = &doc["/**/position_controller"]["ros__parameters"];
    assert_eq!(pc["interface_name"].as_str(), Some("position"));
    let joints: Vec<String> = pc["joints"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(joints, t.joint_names());

    let b: serde_yaml_ng::Value = serde_yaml_ng::from_str(&urdf::bridge_yaml(&t)).unwrap();
    let entries = b.as_sequence().unwrap();
    let topics: Vec<_> = entries.iter().map(|e| e["ros_topic_name"].as_str().unwrap()).collect();
    assert_eq!(topics, ["/clock", "odom", "tf"]);
    assert!(entries.iter().all(|e| e["direction"].as_str() == Some("GZ_TO_ROS")));
}

#[test]
fn urdf_has_the_control_and_gazebo_blocks() {
    let (t, text) = generate("pyp");
    assert!(text.contains("<plugin>gz_ros2_control/GazeboSimSystem</plugin>"));
    // The plain URDF is resolved (RViz, sim_node, check_urdf): no gz_ros2_control plugin and
    // no `$(` in it; the xacro adds the plugin, namespaced, with its controllers file by $(find).
    assert!(!text.contains("GazeboSimROS2ControlPlugin") && !text.contains("$("));
    assert!(text.contains("gz::sim::systems::OdometryPublisher"));
    let x = urdf::urdf_xacro(&t, &DescriptionConfig::builtin()).unwrap();
    assert!(x.contains("name=\"gz_ros2_control::GazeboSimROS2ControlPlugin\""));
    assert!(x.contains("<parameters>$(find modbot_bringup)/config/controllers/pyp_3.yaml</parameters>"));
    assert!(x.contains("<xacro:arg name=\"namespace\" default=\"\"/>"));
    assert!(x.contains("<ros>\n        <namespace>$(arg namespace)</namespace>\n      </ros>"));
    assert_eq!(text.matches("<command_interface name=\"position\">").count(), t.len());
    assert_eq!(text.matches("<state_interface name=\"velocity\"/>").count(), t.len());
    assert_eq!(text.matches("<mu1>0.2</mu1>").count(), 2 * t.len());
}

/// gz_ros2_control's position interface runs `v = gain · update_rate · (command − position)`:
/// the xacro's `position_proportional_gain` is the modules' servo kp over the controllers'
/// update rate (Y1 8.6 /s, wheel-foot 16.6 /s at 100 Hz), so gz-sim moves a joint as the
/// module's servo does (record 0042); a robot whose servos differ gets the gain most of them
/// have; a gain over 1 (an update rate too low for the servo) is refused naming the joint.
#[test]
fn the_xacro_gives_gz_ros2_control_the_modules_servo_gain() {
    let c = ModuleCatalog::builtin();
    let config = DescriptionConfig::builtin();
    for (robot, kp) in [
        ("pp:8", 8.6),
        ("quadruped", 16.6),
        ("wheeled", 16.6),
        ("wheelfoot", 16.6),
    ] {
        let t = artifacts::robot(robot, &c).unwrap();
        let gain = kp / config.controller_update_rate_hz;
        assert_eq!(urdf::position_gain(&t, &config).unwrap(), Some(gain), "{robot}");
        let x = urdf::urdf_xacro(&t, &config).unwrap();
        let tag = format!(
            "<position_proportional_gain>{}</position_proportional_gain>",
            modbot_description::xml::num(gain)
        );
        assert_eq!(x.matches(&tag).count(), 1, "{robot}: {tag}");
        // Inside the gz_ros2_control plugin block, not the odometry plugin's.
        let plugin = x.find("GazeboSimROS2ControlPlugin").unwrap();
        let end = plugin + x[plugin..].find("</plugin>").unwrap();
        assert!((plugin..end).contains(&x.find(&tag).unwrap()), "{robot}");
    }
    // Three Y1 modules and one whose hinge servo is twice as fast: the Y1 gain, the majority's.
    let catalog = ModuleCatalog::from_yaml(
        &modbot_core::catalog::BUILTIN_MODULES_YAML.replace(
            "  wheelfoot:\n",
            &format!("  y1fast:\n{}  wheelfoot:\n", y1_block_with_kp(17.2)),
        ),
        "modules.yaml",
    )
    .unwrap();
    let file = "name: mixed\nmodules:\n  - {name: a, kind: y1}\n  - {name: b, kind: y1}\n  - {name: c, kind: y1}\n  - {name: d, kind: y1fast}\nconnections:\n  - {from: a.head, to: b.tail}\n  - {from: b.head, to: c.tail}\n  - {from: c.head, to: d.tail}\n";
    let t = Topology::from_yaml(file, "mixed.yaml", &catalog).unwrap();
    assert_eq!(urdf::position_gain(&t, &config).unwrap(), Some(0.086));
    // 10 Hz: 16.6 /s (the feet's, the majority; the hips have 30 /s, record 0057) would be a
    // gain of 1.66, refused naming the first joint of that gain and the key.
    let slow = DescriptionConfig {
        controller_update_rate_hz: 10.0,
        ..config.clone()
    };
    let t = artifacts::robot("quadruped", &c).unwrap();
    let e = urdf::urdf_xacro(&t, &slow).unwrap_err().to_string();
    assert!(
        e.contains("role1_back_joint1") && e.contains("controller_update_rate_hz = 10") && e.contains("(0, 1]"),
        "{e}"
    );
    // The plain URDF has no plugin block and no gain.
    assert!(urdf::urdf(&t, &slow).is_ok());
}

/// The y1 kind's block of the shipped catalog with its hinge's kp replaced.
fn y1_block_with_kp(kp: f64) -> String {
    let text = modbot_core::catalog::BUILTIN_MODULES_YAML;
    let start = text.find("  y1:\n").unwrap() + "  y1:\n".len();
    let end = text.find("  wheelfoot:\n").unwrap();
    text[start..end].replace("kp: 8.6", &format!("kp: {kp}"))
}

proptest! {
    /// For any chain: total mass = M × module mass, every hinge axis points along +y (pitch)
    /// or +z (yaw) in the straight pose as the preset alternates them, and the URDF's
    /// kinematics (urdf-rs + nalgebra) equal modbot_core's link tree to 1e-9 for any joint
    /// angles (the zero pose included).
    #[test]
    fn urdf_kinematics_equal_core(m in 2usize..=24, py in any::<bool>(),
                                  angles in prop::collection::vec(-1.5f64..1.5, 24), zero in any::<bool>()) {
        let spec = format!("{}:{m}", if py { "py" } else { "pp" });
        let (t, text) = generate(&spec);
        let model = UrdfModel::parse(&text, &spec).unwrap();
        prop_assert!((model.total_mass() - m as f64 * 0.050).abs() < 1e-12);
        let straight = model.forward(&BTreeMap::new(), &Isometry3::identity());
        for (i, name) in t.joint_names().iter().enumerate() {
            let j = model.joints.iter().find(|j| &j.name == name).unwrap();
            let world = (straight[j.parent] * j.origin).rotation * j.axis.into_inner();
            let want = if py && i % 2 == 1 { Vector3::z() } else { Vector3::y() };
            prop_assert!((world - want).norm() < 1e-12, "{name}: {world}");
        }
        let q: Vec<f64> = if zero { vec![0.0; m] } else { angles[..m].to_vec() };
        let base = Isometry3::from_parts(Translation3::new(0.3, -0.2, 0.05), UnitQuaternion::from_euler_angles(0.1, -0.2, 0.7));
        let tree = modbot_core::LinkTree::new(&t);
        let core = tree.link_frames(&tree.forward(&q, &base).unwrap());
        let positions: BTreeMap<String, f64> = t.joint_names().into_iter().zip(q.iter().copied()).collect();
        let poses = model.forward(&positions, &base);
        for (k, l) in tree.links.iter().enumerate() {
            let u = model.link(&l.name).unwrap();
            prop_assert!((poses[u].translation.vector - core[k].translation.vector).norm() < 1e-9, "{}", l.name);
            prop_assert!(poses[u].rotation.angle_to(&core[k].rotation) < 1e-9, "{}", l.name);
            // The box of each half sits at the middle of the half, 18 mm along its x axis.
            let visual = poses[u] * model.links[u].visuals[0].0;
            let want = core[k] * Translation3::new(0.018, 0.0, 0.0);
            prop_assert!((visual.translation.vector - want.translation.vector).norm() < 1e-9, "{}", l.name);
        }
    }
}

#[test]
fn bad_robot_files_and_catalogs_are_refused_by_name() {
    let c = ModuleCatalog::builtin();
    let text = "name: r\nmodules:\n  - {name: a, kind: y1}\n  - {name: b, kind: hexbot}\n";
    let e = Topology::from_yaml(text, "r.yaml", &c).unwrap_err().to_string();
    assert!(
        e.contains("unknown module kind `hexbot`") && e.contains("module `b`"),
        "{e}"
    );

    let text = modbot_core::catalog::BUILTIN_MODULES_YAML.replacen(
        "box: [0.036, 0.052, 0.052]",
        "box: [0.036, -0.052, 0.052]",
        1,
    );
    let e = ModuleCatalog::from_yaml(&text, "modules.yaml").unwrap_err().to_string();
    assert!(
        e.contains("modules.y1.links[0].shapes[0].box.y") && e.contains("-0.052"),
        "{e}"
    );
}

/// A robot file's initial pose: each angle written into the URDF's gz_ros2_control
/// `initial_value` (record 0056); an unknown joint, an angle beyond the joint's limits or
/// not finite, refused naming the field.
#[test]
fn initial_poses_reach_the_urdf_and_bad_ones_are_refused() {
    let c = ModuleCatalog::builtin();
    let t = Topology::resolve("quadruped", &c).unwrap();
    let text = urdf::urdf(&t, &DescriptionConfig::builtin()).unwrap();
    let value = |joint: &str| {
        let at = text
            .find(&format!("<joint name=\"{joint}\">\n      <command_interface"))
            .unwrap();
        let rest = &text[at..];
        let v = rest.find("initial_value\">").unwrap() + "initial_value\">".len();
        rest[v..v + rest[v..].find('<').unwrap()].parse::<f64>().unwrap()
    };
    assert!((value("role1_back_joint1") + 90f64.to_radians()).abs() < 1e-12);
    assert!((value("role3_back_joint1") - 60f64.to_radians()).abs() < 1e-12);
    assert!((value("role3_back_joint2") - 30f64.to_radians()).abs() < 1e-12);
    assert_eq!(value("role3_front_joint"), 0.0);
    for (pose, needle) in [
        ("{knee: 10}", "modules[0].initial_deg.knee"),
        ("{back_joint1: 120}", "-100 to 100 deg"),
        ("{back_joint2: .nan}", "modules[0].initial_deg.back_joint2"),
        ("{front_joint: 400}", "-360 to 360 deg"),
    ] {
        let file = format!("name: r\nmodules:\n  - {{name: a, kind: wheelfoot, initial_deg: {pose}}}\n");
        let e = Topology::from_yaml(&file, "r.yaml", &c).unwrap_err().to_string();
        assert!(e.contains(needle) && e.contains("r.yaml"), "{pose}: {e}");
    }
}

/// A module joined head to head (its hinge crossed against its kind's direction) and a
/// wheel-like continuous velocity joint come out as URDF that reads back with the same
/// kinematics, a `<limit>` without range for the wheel and a velocity controller.
#[test]
fn trees_with_reversed_and_velocity_joints() {
    let catalog = ModuleCatalog::from_yaml(
        &format!(
            "{}\n  wheel:\n    links:\n      - {{name: hub, mass_kg: 0.05, shapes: [{{box: [0.04, 0.04, 0.04]}}]}}\n      - {{name: tyre, mass_kg: 0.02, shapes: [{{cylinder: {{radius: 0.025, length: 0.01}}, rpy_deg: [90, 0, 0]}}]}}\n    joints:\n      - {{name: spin, type: continuous, parent: hub, child: tyre, xyz: [0, 0.025, 0], axis: [0, 1, 0], actuator: {{velocity: {{max_torque_nm: 0.5, max_speed_deg_s: 360}}}}}}\n    ports:\n      back: {{link: hub, xyz: [-0.02, 0, 0], rpy_deg: [0, 0, 180]}}\n    contact: {{friction: 0.9}}\n",
            modbot_core::catalog::BUILTIN_MODULES_YAML
        ),
        "modules.yaml",
    )
    .unwrap();
    let text = "name: t\nmodules:\n  - {name: a, kind: y1}\n  - {name: b, kind: y1}\n  - {name: w, kind: wheel}\n\
                connections:\n  - {from: a.head, to: b.head, roll_deg: 90}\n  - {from: b.tail, to: w.back}\n";
    let t = Topology::from_yaml(text, "t.yaml", &catalog).unwrap();
    assert_eq!(t.joint_names(), ["a_hinge", "b_hinge", "w_spin"]);
    let cfg = DescriptionConfig::builtin();
    let text = urdf::urdf(&t, &cfg).unwrap();
    let model = UrdfModel::parse(&text, "t.urdf").unwrap();
    let spin = model.joints.iter().find(|j| j.name == "w_spin").unwrap();
    assert_eq!(spin.kind, UrdfJointKind::Continuous);
    assert!(text.contains("<command_interface name=\"velocity\">"), "{text}");
    let q = [0.4, -0.7, 1.3];
    let tree = modbot_core::LinkTree::new(&t);
    let core = tree.link_frames(&tree.forward(&q, &Isometry3::identity()).unwrap());
    let positions: BTreeMap<String, f64> = t.joint_names().into_iter().zip(q).collect();
    let poses = model.forward(&positions, &Isometry3::identity());
    for (k, l) in tree.links.iter().enumerate() {
        let u = model.link(&l.name).unwrap();
        // The URDF frame of a link entered through a reversed joint is the tree frame; the
        // kind's link frame is that times the offset.
        let urdf_kind_frame = poses[u] * l.offset;
        assert!(
            (urdf_kind_frame.translation.vector - core[k].translation.vector).norm() < 1e-9,
            "{}",
            l.name
        );
        assert!(
            urdf_kind_frame.rotation.angle_to(&core[k].rotation) < 1e-9,
            "{}",
            l.name
        );
    }
    let y = urdf::controllers_yaml(&t, &cfg);
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&y).unwrap();
    assert_eq!(
        doc["/**/velocity_controller"]["ros__parameters"]["joints"][0].as_str(),
        Some("w_spin")
    );
    assert_eq!(
        doc["/**/position_controller"]["ros__parameters"]["joints"][1].as_str(),
        Some("b_hinge")
    );
}

#[test]
fn bad_urdfs_are_refused_by_name() {
    let link = |n: &str| {
        format!(
            "<link name=\"{n}\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial></link>"
        )
    };
    let joint = |n: &str, p: &str, c: &str| {
        format!(
            "<joint name=\"{n}\" type=\"revolute\"><parent link=\"{p}\"/><child link=\"{c}\"/><axis xyz=\"0 1 0\"/><limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/></joint>"
        )
    };
    let robot = |body: String| format!("<robot name=\"r\">{body}</robot>");
    let cases = [
        (
            robot(format!("{}{}{}", link("a"), link("b"), joint("j", "a", "c"))),
            "child link `c`",
        ),
        (
            robot(format!(
                "{}{}{}{}",
                link("a"),
                link("b"),
                joint("j1", "a", "b"),
                joint("j2", "b", "a")
            )),
            "cycle",
        ),
        (
            robot(format!("{}{}{}", link("a"), link("b"), link("c")) + &joint("j", "a", "b")),
            "more than one root",
        ),
        (
            robot(format!("{}{}", link("a"), link("a"))),
            "link `a` is defined twice",
        ),
        (
            robot(format!(
                "{}{}{}",
                link("a"),
                link("b"),
                joint("j", "a", "b").replace("lower=\"-1\"", "lower=\"2\"")
            )),
            "joint `j`: limits",
        ),
        (
            robot(format!(
                "{}{}{}",
                link("a"),
                link("b"),
                joint("j", "a", "b").replace("0 1 0", "0 0 0")
            )),
            "zero axis",
        ),
        (
            robot(format!(
                "{}{}",
                link("a"),
                link("b").replace("value=\"1\"", "value=\"-1\"")
            )),
            "link `b`",
        ),
        ("<robot name=\"r\"><link name=\"a\">".to_string(), "malformed URDF"),
    ];
    for (text, needle) in cases {
        let e = UrdfModel::parse(&text, "bad.urdf").unwrap_err().to_string();
        assert!(e.contains(needle) && e.contains("bad.urdf"), "{needle}: {e}");
    }
}
