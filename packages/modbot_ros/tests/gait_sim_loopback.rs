//! gait_node and sim_node end to end on the in-memory loopback transport (no DDS): the real
//! run loops in threads on one bus, a probe node reading and writing their topics. The
//! parameter validation of both nodes is checked here too. tests/system.rs keeps the same
//! pair on DDS, across processes and against rclpy.
#![allow(clippy::unwrap_used, missing_docs)]

mod loopback_support;

use loopback_support::{logged, s, spawn, wait_for, wait_log};
use modbot_app::Interface;
use modbot_msgs::modbot_msgs::msg::{GaitCommand, GaitState};
use modbot_msgs::nav_msgs::msg::Odometry;
use modbot_msgs::sensor_msgs::msg::JointState;
use modbot_msgs::std_msgs::msg::{Float64MultiArray, MultiArrayLayout, String as StringMsg};
use modbot_ros::loopback::{LoopbackBus, identity};
use modbot_ros::nodes::gait::{self, GaitNodeConfig};
use modbot_ros::nodes::sim::{self, SimCore, SimNodeConfig};
use modbot_ros::params::{NodeConfig, ParamValue, defaults, resolve};
use modbot_ros::{Pub, Qos, Sub, Transport};

fn last<M>(sub: &impl Sub<M>) -> Option<M> {
    let mut out = None;
    while let Some(m) = sub.take() {
        out = m.ok().or(out);
    }
    out
}

/// The caterpillar's commands drive the simulated robot: its joints follow them (joint
/// rates from the engine, not differences), odometry moves it forward, and garbage to
/// either node is dropped, logged at most once per kind in 5 s, and both keep running.
#[test]
fn the_gait_drives_the_simulated_robot_and_garbage_is_dropped() {
    let bus = LoopbackBus::new();
    let _sim = spawn::<SimNodeConfig>(
        &bus,
        "sim_node",
        &[("engine", s("native")), ("real_time_factor", ParamValue::Double(4.0))],
        sim::run,
    );
    let gait_node = spawn::<GaitNodeConfig>(&bus, "gait_node", &[("gait", s("caterpillar"))], gait::run);
    let mut probe = bus.node(identity("probe", "/m"));
    let js = probe
        .subscription::<JointState>("joint_states", Qos::SensorData)
        .unwrap();
    let odom = probe.subscription::<Odometry>("odom", Qos::SensorData).unwrap();
    let desc = probe
        .subscription::<StringMsg>("robot_description", Qos::Latched)
        .unwrap();
    let state = probe.subscription::<GaitState>("gait/state", Qos::Reliable).unwrap();
    let cmds = probe
        .publisher::<Float64MultiArray>("position_controller/commands", Qos::Reliable)
        .unwrap();
    let gait_cmd = probe.publisher::<GaitCommand>("gait/command", Qos::Reliable).unwrap();

    let urdf = wait_for(|| desc.take().and_then(Result::ok)).expect("robot_description");
    assert!(urdf.data.contains("<robot name=\"pp_8\""));
    let first = wait_for(|| odom.take().and_then(Result::ok)).expect("odom");
    // Let the caterpillar ramp in and walk a few seconds of simulated time.
    let moving = wait_for(|| {
        let j = last(&js)?;
        (j.header.stamp.sec >= 6 && j.velocity.iter().any(|v| v.abs() > 0.2)).then_some(j)
    })
    .expect("the joints move");
    assert_eq!(moving.name.len(), 8);
    assert_eq!(moving.velocity.len(), 8);
    let later = wait_for(|| last(&odom).filter(|o| o.header.stamp.sec >= 7)).expect("odom later");
    let dx = later.pose.pose.position.x - first.pose.pose.position.x;
    assert!(dx > 0.02, "the caterpillar moved {dx} m along +x");
    assert!(later.twist.twist.linear.x.is_finite());
    let st = wait_for(|| last(&state)).expect("gait/state");
    assert_eq!((st.gait.as_str(), st.holding), ("caterpillar", false));

    // Garbage: a short command, a NaN command, a refused gait command.
    for data in [vec![0.1; 3], vec![f64::NAN; 8]] {
        for _ in 0..20 {
            cmds.publish(Float64MultiArray {
                layout: MultiArrayLayout::default(),
                data: data.clone(),
            })
            .unwrap();
        }
    }
    for _ in 0..20 {
        gait_cmd
            .publish(GaitCommand {
                gait: "moonwalk".into(),
                ..Default::default()
            })
            .unwrap();
    }
    wait_log(&bus, "/m/sim_node", "command dropped");
    wait_log(&bus, "/m/gait_node", "moonwalk");
    // 40 bad commands of two kinds to the simulator, 20 to the gait node: a line per kind.
    assert!(logged(&bus, "/m/sim_node", "command dropped") <= 2, "{:#?}", bus.logs());
    assert!(logged(&bus, "/m/gait_node", "refused") <= 2, "{:#?}", bus.logs());
    assert!(gait_node.alive());
    let t0 = last(&js).map(|j| j.header.stamp.sec).unwrap_or(0);
    assert!(
        wait_for(|| last(&js).filter(|j| j.header.stamp.sec > t0 + 1)).is_some(),
        "the simulator goes on"
    );
    let st = wait_for(|| last(&state)).unwrap();
    assert_eq!(st.gait, "caterpillar", "a refused command changes nothing");
}

#[test]
fn gait_node_parameters_are_refused_by_name() {
    let c = GaitNodeConfig::from_params(&defaults::<GaitNodeConfig>()).unwrap();
    assert_eq!((c.robot.as_str(), c.control_rate_hz), ("pp:8", 100.0));
    for (k, v, want) in [
        ("gait", s("moonwalk"), "moonwalk"),
        ("robot", s("xx:3"), "xx:3"),
        ("robot", s("/nonexistent/robot.yaml"), "/nonexistent/robot.yaml"),
        ("control_rate_hz", ParamValue::Double(0.0), "control_rate_hz"),
        ("gait_params", ParamValue::StrArray(vec!["A40".into()]), "A40"),
        ("gait_params", ParamValue::StrArray(vec!["A=400".into()]), "400"),
        ("gait_params", ParamValue::StrArray(vec!["zz=1".into()]), "zz"),
    ] {
        let e = resolve::<GaitNodeConfig>(&[], &[(k.to_string(), v)])
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{k}: {e}");
    }
    let e = resolve::<GaitNodeConfig>(&[], &[("nope".into(), ParamValue::Int(1))])
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown parameter `nope`"), "{e}");
    let e = resolve::<GaitNodeConfig>(&[], &[("gait".into(), ParamValue::Int(1))])
        .unwrap_err()
        .to_string();
    assert!(e.contains("is a string"), "{e}");
}

/// The robot parameter takes robot files as the command line does.
#[test]
fn sim_node_takes_robot_files_and_names_bad_worlds() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let file = root.join("config/robots/pyp.yaml").display().to_string();
    let (_, cfg) = resolve::<SimNodeConfig>(&[], &[("robot".into(), ParamValue::Str(file))]).unwrap();
    let core = SimCore::new(&cfg).unwrap();
    assert_eq!(core.session.sim.joint_names(), ["joint_1", "joint_2", "joint_3"]);
    let e = resolve::<SimNodeConfig>(&[], &[("world".into(), s("/nonexistent/w.yaml"))])
        .unwrap_err()
        .to_string();
    assert!(e.contains("/nonexistent/w.yaml"), "{e}");
}

#[test]
fn sim_core_refuses_garbage_and_the_sim_goes_on() {
    let cfg = SimNodeConfig::from_params(&defaults::<SimNodeConfig>()).unwrap();
    let mut core = SimCore::new(&cfg).unwrap();
    let n = core.session.sim.joint_names().len();
    let msg = |data: Vec<f64>| Float64MultiArray {
        layout: MultiArrayLayout::default(),
        data,
    };
    let e = core.command(Interface::Position, &msg(vec![0.1; n - 1])).unwrap_err();
    assert!(e.kind() == "length" && e.to_string().contains(&format!("{n}")), "{e}");
    let e = core.command(Interface::Position, &msg(vec![f64::NAN; n])).unwrap_err();
    assert_eq!(e.kind(), "not_finite");
    assert_eq!(core.refused, 2);
    core.command(Interface::Position, &msg(vec![0.3; n])).unwrap();
    core.advance(200).unwrap();
    let js = core.joint_state();
    assert_eq!(js.name.len(), n);
    assert!(js.position.iter().all(|q| (q - 0.3).abs() < 0.1), "{:?}", js.position);
    let tf = core.tf(true);
    assert_eq!(tf.transforms[0].child_frame_id, "base_link");
    assert!(tf.transforms.len() > n);
    assert_eq!(core.odometry().header.frame_id, "odom");
}

/// A robot with a wheel: sim_node takes its hinge on `position_controller/commands` and its
/// wheel's speed on `velocity_controller/commands` (as the generated controllers file says),
/// and a command of the wrong length on either is dropped.
#[test]
fn wheels_take_speeds_on_the_velocity_controller() {
    let dir = std::env::temp_dir().join(format!("modbot_wheels_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let modules = dir.join("modules.yaml");
    std::fs::write(
        &modules,
        format!(
            "{}\n  wheel:\n    links:\n      - {{name: hub, mass_kg: 0.05, shapes: [{{box: [0.04, 0.04, 0.04], xyz: [0.02, 0, 0]}}]}}\n      - {{name: tyre, mass_kg: 0.02, shapes: [{{cylinder: {{radius: 0.03, length: 0.01}}, rpy_deg: [90, 0, 0]}}]}}\n    joints:\n      - {{name: spin, type: continuous, parent: hub, child: tyre, xyz: [0.02, 0.03, 0], axis: [0, 1, 0], actuator: {{velocity: {{max_torque_nm: 0.5, max_speed_deg_s: 360}}}}}}\n    ports:\n      back: {{link: hub, rpy_deg: [0, 0, 180]}}\n    contact: {{friction: 0.9}}\n",
            modbot_core::catalog::BUILTIN_MODULES_YAML
        ),
    )
    .unwrap();
    let robot = dir.join("cart.yaml");
    std::fs::write(
        &robot,
        "name: cart\nmodules:\n  - {name: body, kind: y1}\n  - {name: w, kind: wheel}\nconnections:\n  - {from: body.head, to: w.back}\n",
    )
    .unwrap();
    let path = |p: &std::path::Path| ParamValue::Str(p.display().to_string());
    let bus = LoopbackBus::new();
    let _sim = spawn::<SimNodeConfig>(
        &bus,
        "sim_node",
        &[
            ("robot", path(&robot)),
            ("modules_file", path(&modules)),
            ("engine", s("native")),
            ("real_time_factor", ParamValue::Double(4.0)),
        ],
        sim::run,
    );
    let mut probe = bus.node(identity("probe", "/m"));
    let js = probe
        .subscription::<JointState>("joint_states", Qos::SensorData)
        .unwrap();
    let pos = probe
        .publisher::<Float64MultiArray>("position_controller/commands", Qos::Reliable)
        .unwrap();
    let vel = probe
        .publisher::<Float64MultiArray>("velocity_controller/commands", Qos::Reliable)
        .unwrap();
    let msg = |data: Vec<f64>| Float64MultiArray {
        layout: MultiArrayLayout::default(),
        data,
    };
    let spinning = wait_for(|| {
        pos.publish(msg(vec![0.3])).ok()?;
        vel.publish(msg(vec![2.0])).ok()?;
        last(&js).filter(|j| (j.velocity[1] - 2.0).abs() < 0.05 && (j.position[0] - 0.3).abs() < 0.05)
    })
    .expect("the hinge reaches 0.3 rad and the wheel turns at 2 rad/s");
    assert_eq!(spinning.name, ["body_hinge", "w_spin"]);
    vel.publish(msg(vec![2.0, 1.0])).unwrap();
    wait_log(&bus, "/m/sim_node", "expected 1 joint targets, got 2");
    let _ = std::fs::remove_dir_all(&dir);
}
