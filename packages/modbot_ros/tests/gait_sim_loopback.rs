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

/// sim_node on the native engine at four times real time.
fn spawn_sim(bus: &LoopbackBus) -> loopback_support::Running {
    spawn::<SimNodeConfig>(
        bus,
        "sim_node",
        &[("engine", s("native")), ("real_time_factor", ParamValue::Double(4.0))],
        sim::run,
    )
}

/// The caterpillar's commands drive the simulated robot: its joints follow them (joint
/// rates from the engine, not differences), odometry moves it forward, and garbage to
/// either node is dropped, logged at most once per kind in 5 s, and both keep running.
#[test]
fn the_gait_drives_the_simulated_robot_and_garbage_is_dropped() {
    let bus = LoopbackBus::new();
    let _sim = spawn_sim(&bus);
    let gait_node = spawn::<GaitNodeConfig>(&bus, "gait_node", &[("gait", s("caterpillar"))], gait::run);
    let mut probe = bus.node(identity("probe", "/m"));
    // Reliable readers, as robot_state_publisher, ros2_control and a default-QoS rclpy
    // subscriber are: sim_node publishes joint states and odometry reliable (issue 19), and
    // a reliable reader does not match a best-effort writer.
    let js = probe.subscription::<JointState>("joint_states", Qos::Reliable).unwrap();
    let odom = probe.subscription::<Odometry>("odom", Qos::Reliable).unwrap();
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

/// Simulated seconds of a message's header stamp.
fn secs(h: &modbot_msgs::std_msgs::msg::Header) -> f64 {
    h.stamp.sec as f64 + h.stamp.nanosec as f64 * 1e-9
}

/// sim_node for a wheel-foot robot on the native engine, 3× real time (flat world, as the
/// launch file's default).
fn wheelfoot_sim(bus: &LoopbackBus, robot: &str) -> loopback_support::Running {
    spawn::<SimNodeConfig>(
        bus,
        "sim_node",
        &[
            ("robot", s(robot)),
            ("engine", s("native")),
            ("real_time_factor", ParamValue::Double(3.0)),
        ],
        sim::run,
    )
}

/// The quadruped's trot runs closed loop over the bus: gait_node holds (sends nothing, says
/// so once) until joint states and odometry arrive, drops garbage ones with a rate-limited
/// log, then trots sim_node's quadruped forward more than 0.1 m in 6 s of simulated time.
/// sim_node publishes all 30 joints and the root link's pose.
#[test]
fn the_quadruped_trots_forward_closed_loop_over_the_bus() {
    let bus = LoopbackBus::new();
    let quad = [("robot", s("quadruped")), ("gait", s("trot"))];
    let gait_node = spawn::<GaitNodeConfig>(&bus, "gait_node", &quad, gait::run);
    let mut probe = bus.node(identity("probe", "/m"));
    let pos = probe
        .subscription::<Float64MultiArray>("position_controller/commands", Qos::Reliable)
        .unwrap();
    let state = probe.subscription::<GaitState>("gait/state", Qos::Reliable).unwrap();
    let bad_js = probe.publisher::<JointState>("joint_states", Qos::SensorData).unwrap();
    let bad_odom = probe.publisher::<Odometry>("odom", Qos::SensorData).unwrap();
    wait_log(&bus, "/m/gait_node", "until the first joint_states and odom");
    let mut nan_odom = Odometry::default();
    nan_odom.pose.pose.orientation.w = 1.0;
    nan_odom.pose.pose.position.x = f64::NAN;
    for _ in 0..20 {
        let short = JointState {
            name: vec!["role1_front_joint".into()],
            position: vec![0.0, 1.0],
            ..Default::default()
        };
        bad_js.publish(short).unwrap();
        bad_odom.publish(nan_odom.clone()).unwrap();
    }
    wait_log(&bus, "/m/gait_node", "joint_states dropped");
    wait_log(&bus, "/m/gait_node", "odom dropped");
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(
        pos.take().is_none(),
        "gait_node sent commands before observing the robot"
    );
    assert_eq!(logged(&bus, "/m/gait_node", "until the first joint_states"), 1);
    assert!(logged(&bus, "/m/gait_node", "dropped") <= 2, "{:#?}", bus.logs());

    let _sim = wheelfoot_sim(&bus, "quadruped");
    let js = probe
        .subscription::<JointState>("joint_states", Qos::SensorData)
        .unwrap();
    let odom = probe.subscription::<Odometry>("odom", Qos::SensorData).unwrap();
    let first = wait_for(|| odom.take().and_then(Result::ok)).expect("odom");
    let cmd = wait_for(|| last(&pos)).expect("position commands once the robot is observed");
    assert_eq!(cmd.data.len(), 30, "the quadruped's joints are all position-driven");
    let j = wait_for(|| last(&js)).expect("joint_states");
    assert_eq!((j.name.len(), j.position.len(), j.velocity.len()), (30, 30, 30));
    let later = wait_for(|| last(&odom).filter(|o| secs(&o.header) >= 6.0)).expect("6 s of odometry");
    let (p0, p1) = (&first.pose.pose.position, &later.pose.pose.position);
    let (dx, dy) = (p1.x - p0.x, p1.y - p0.y);
    eprintln!("quadruped trot over the bus: dx = {dx:.3} m, dy = {dy:.3} m in 6 s");
    assert!(dx > 0.1 && dx > 2.0 * dy.abs(), "the quadruped moved ({dx}, {dy}) m");
    let st = wait_for(|| last(&state).filter(|s| s.cycle_count >= 2)).expect("trot cycles");
    assert_eq!((st.gait.as_str(), st.holding), ("trot", false));
    assert!(gait_node.alive());
}

/// sim_node's odometry is the pose of the robot's root link (the first module's foot
/// plate), which is what the modular controllers take as the base pose.
#[test]
fn sim_node_odometry_is_the_root_link_of_a_wheel_foot_robot() {
    let (_, cfg) =
        resolve::<SimNodeConfig>(&[], &[("robot".into(), s("quadruped")), ("engine".into(), s("native"))]).unwrap();
    let mut core = SimCore::new(&cfg).unwrap();
    core.advance(100).unwrap();
    let root = core.session.sim.root_pose();
    let odom = modbot_ros::convert::isometry(&core.odometry().pose.pose).unwrap();
    assert!((odom.to_homogeneous() - root.to_homogeneous()).norm() < 1e-9);
    assert_eq!(core.joint_state().name, core.session.topology.joint_names());
}

fn wheel_speeds(j: &JointState) -> Vec<f64> {
    ["role3", "role4", "role5", "role6"]
        .iter()
        .map(|r| {
            let k = j.name.iter().position(|n| *n == format!("{r}_front_joint")).unwrap();
            j.velocity[k]
        })
        .collect()
}

/// The wheeled robot's `drive`: once its feet are in the pose, gait_node sends the wheels'
/// speeds on velocity_controller/commands with the code's signs (right wheels −, left +;
/// order role3 FR, role4 FL, role5 BR, role6 BL as the controllers file lists them) and
/// the robot drives forward.
#[test]
fn the_wheeled_robot_drives_on_velocity_commands() {
    let bus = LoopbackBus::new();
    let _sim = wheelfoot_sim(&bus, "wheeled");
    let mut probe = bus.node(identity("probe", "/m"));
    let vel = probe
        .subscription::<Float64MultiArray>("velocity_controller/commands", Qos::Reliable)
        .unwrap();
    let pos = probe
        .subscription::<Float64MultiArray>("position_controller/commands", Qos::Reliable)
        .unwrap();
    let odom = probe.subscription::<Odometry>("odom", Qos::SensorData).unwrap();
    let first = wait_for(|| odom.take().and_then(Result::ok)).expect("odom");
    let drive = [("robot", s("wheeled")), ("gait", s("drive"))];
    let _gait = spawn::<GaitNodeConfig>(&bus, "gait_node", &drive, gait::run);
    let v = wait_for(|| last(&vel).filter(|m| m.data.iter().any(|x| *x != 0.0))).expect("wheel speeds");
    let w = 360f64.to_radians();
    assert_eq!(v.data.len(), 4);
    for (got, want) in v.data.iter().zip([-w, w, -w, w]) {
        assert!((got - want).abs() < 1e-9, "wheel speeds {:?}", v.data);
    }
    assert_eq!(wait_for(|| last(&pos)).expect("positions").data.len(), 26);
    let later = wait_for(|| last(&odom).filter(|o| secs(&o.header) >= 3.0)).expect("3 s of odometry");
    let (p0, p1) = (&first.pose.pose.position, &later.pose.pose.position);
    let (dx, dy) = (p1.x - p0.x, p1.y - p0.y);
    eprintln!("wheeled drive over the bus: dx = {dx:.3} m, dy = {dy:.3} m in 3 s");
    assert!(
        dx > 0.1 && dx > 5.0 * dy.abs(),
        "the wheeled robot moved ({dx}, {dy}) m"
    );
}

/// A wheel speed above the joint's limit (401°/s against 360°/s) is refused by sim_node
/// and logged by kind, and the wheels keep the speed they had.
#[test]
fn a_wheel_speed_above_the_limit_is_refused_and_the_wheels_keep_theirs() {
    let bus = LoopbackBus::new();
    let _sim = wheelfoot_sim(&bus, "wheeled");
    let mut probe = bus.node(identity("probe", "/m"));
    let js = probe
        .subscription::<JointState>("joint_states", Qos::SensorData)
        .unwrap();
    let vel = probe
        .publisher::<Float64MultiArray>("velocity_controller/commands", Qos::Reliable)
        .unwrap();
    let msg = |w: f64| Float64MultiArray {
        layout: MultiArrayLayout::default(),
        data: vec![-w, w, -w, w],
    };
    let half = std::f64::consts::PI; // 180°/s
    let near = |j: &JointState, w: f64| {
        wheel_speeds(j)
            .iter()
            .zip([-w, w, -w, w])
            .all(|(got, want)| (got - want).abs() < 0.2)
    };
    wait_for(|| {
        vel.publish(msg(half)).ok()?;
        last(&js).filter(|j| near(j, half))
    })
    .expect("the wheels turn at 180°/s");
    let fast = 401f64.to_radians();
    vel.publish(msg(fast)).unwrap();
    wait_log(&bus, "/m/sim_node", "above its speed limit");
    let t0 = last(&js).map(|j| secs(&j.header)).unwrap_or(0.0);
    let after = wait_for(|| last(&js).filter(|j| secs(&j.header) > t0 + 1.0)).expect("1 s later");
    assert!(
        near(&after, half),
        "the wheels changed speed: {:?}",
        wheel_speeds(&after)
    );
}

/// The seed-002 CPG as gait_node's controller (`gait:=cpg`): the simulated pitch-pitch chain
/// crawls along its axis and gait/state names the CPG.
#[test]
fn the_cpg_drives_the_simulated_robot_from_gait_node() {
    let bus = LoopbackBus::new();
    let _sim = spawn_sim(&bus);
    let gait_node = spawn::<GaitNodeConfig>(&bus, "gait_node", &[("gait", s("cpg"))], gait::run);
    let mut probe = bus.node(identity("probe", "/m"));
    let odom = probe.subscription::<Odometry>("odom", Qos::SensorData).unwrap();
    let state = probe.subscription::<GaitState>("gait/state", Qos::Reliable).unwrap();
    let first = wait_for(|| odom.take().and_then(Result::ok)).expect("odom");
    let later = wait_for(|| last(&odom).filter(|o| o.header.stamp.sec >= 8)).expect("odom later");
    let dx = later.pose.pose.position.x - first.pose.pose.position.x;
    let dy = later.pose.pose.position.y - first.pose.pose.position.y;
    assert!(
        dx.abs() > 0.1 && dy.abs() < 0.3 * dx.abs(),
        "the CPG moved ({dx}, {dy}) m"
    );
    let st = wait_for(|| last(&state)).expect("gait/state");
    assert_eq!((st.gait.as_str(), st.holding), ("cpg", false));
    assert!(gait_node.alive());
}

/// sim_node's `record` parameter: what it publishes, frame by frame, goes into an MCAP file
/// (ROS 2 CDR with `ros2msg` schemas) that is whole when the node stops; an existing file and
/// a missing folder are refused by name.
#[test]
fn sim_node_records_what_it_publishes_into_mcap() {
    use modbot_msgs::RosMessage as _;
    use modbot_msgs::tf2_msgs::msg::TFMessage;
    let dir = std::env::temp_dir().join(format!("modbot-sim-record-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("sim.mcap");
    let bus = LoopbackBus::new();
    let sim = spawn::<SimNodeConfig>(
        &bus,
        "sim_node",
        &[
            ("engine", s("native")),
            ("real_time_factor", ParamValue::Double(4.0)),
            ("record", s(path.to_str().unwrap())),
        ],
        sim::run,
    );
    let _gait = spawn::<GaitNodeConfig>(&bus, "gait_node", &[("gait", s("caterpillar"))], gait::run);
    let mut probe = bus.node(identity("probe", "/m"));
    let js = probe
        .subscription::<JointState>("joint_states", Qos::SensorData)
        .unwrap();
    wait_for(|| last(&js).filter(|j| j.header.stamp.sec >= 2)).expect("2 s of simulation");
    drop(sim);
    wait_log(&bus, "/m/sim_node", "recorded");

    let bytes = std::fs::read(&path).unwrap();
    let mut count = std::collections::BTreeMap::<String, usize>::new();
    let mut last_tf = None;
    let mut commands_moving = false;
    for m in mcap::MessageStream::new(&bytes).unwrap() {
        let m = m.unwrap();
        let schema = m.channel.schema.as_ref().unwrap();
        assert_eq!(
            (m.channel.message_encoding.as_str(), schema.encoding.as_str()),
            ("cdr", "ros2msg")
        );
        *count.entry(m.channel.topic.clone()).or_default() += 1;
        match m.channel.topic.as_str() {
            "/tf" => {
                assert_eq!(schema.name, "tf2_msgs/msg/TFMessage");
                assert_eq!(schema.data.as_ref(), TFMessage::DEFINITION.as_bytes());
                last_tf = Some(modbot_msgs::cdr::from_bytes::<TFMessage>(&m.data).unwrap());
            }
            "/robot_description" => {
                let d = modbot_msgs::cdr::from_bytes::<StringMsg>(&m.data).unwrap();
                assert!(d.data.contains("<robot name=\"pp_8\""));
            }
            "/position_controller/commands" => {
                let c = modbot_msgs::cdr::from_bytes::<Float64MultiArray>(&m.data).unwrap();
                assert_eq!(c.data.len(), 8);
                commands_moving |= c.data.iter().any(|x| x.abs() > 0.1);
            }
            _ => {}
        }
    }
    let frames = count["/tf"];
    assert!(frames >= 50, "{count:?}");
    for topic in ["/joint_states", "/odom", "/position_controller/commands"] {
        assert_eq!(count[topic], frames, "{topic}: {count:?}");
    }
    assert_eq!(count["/robot_description"], 1);
    assert!(commands_moving, "the gait's commands are recorded as applied");
    let tf = last_tf.unwrap();
    // odom → base_link and every other link of the 8 modules in its URDF parent.
    assert!(tf.transforms.len() > 8 && tf.transforms[0].child_frame_id == "base_link");
    assert!(tf.transforms[0].header.stamp.sec >= 2);

    let e = resolve::<SimNodeConfig>(&[], &[("record".into(), s(path.to_str().unwrap()))])
        .unwrap_err()
        .to_string();
    assert!(e.contains("record") && e.contains("exists"), "{e}");
    let e = resolve::<SimNodeConfig>(&[], &[("record".into(), s("/nonexistent/dir/x.mcap"))])
        .unwrap_err()
        .to_string();
    assert!(e.contains("record") && e.contains("does not exist"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
