//! teleop_node's run loop end to end on the in-memory loopback transport (no DDS): a probe
//! publishes Twists on `cmd_vel` and Joys on `joy`, reads the GaitCommands on
//! `gait/command`, moves the node's clock through the dead-man's timeout and floods it with
//! garbage.
#![allow(clippy::unwrap_used, missing_docs)]

mod loopback_support;

use std::time::Duration;

use loopback_support::{logged, s, spawn, wait_for, wait_log};

use modbot_app::teleop::ROLLING_LEFT_DIRECTION;
use modbot_msgs::geometry_msgs::msg::Twist;
use modbot_msgs::modbot_msgs::msg::GaitCommand;
use modbot_msgs::sensor_msgs::msg::Joy;
use modbot_ros::loopback::{LoopbackBus, identity};
use modbot_ros::nodes::teleop::{self, TeleopNodeConfig};
use modbot_ros::params::ParamValue;
use modbot_ros::{Level, Pub, Qos, Sub, Transport};

/// Claims to be geometry_msgs/Twist but is one byte: garbage for the node, as on the wire.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct FakeTwist {
    word: u8,
}

impl modbot_msgs::RosMessage for FakeTwist {
    const PACKAGE: &'static str = "geometry_msgs";
    const NAME: &'static str = "Twist";
    const FIELDS: &'static [(&'static str, &'static str)] = &[("word", "uint8")];
    const DEFINITION: &'static str = "uint8 word\n";
}

fn twist(x: f64, y: f64, yaw_rate: f64) -> Twist {
    let mut t = Twist::default();
    t.linear.x = x;
    t.linear.y = y;
    t.angular.z = yaw_rate;
    t
}

fn joy(axes: &[f32], buttons: &[i32]) -> Joy {
    Joy {
        axes: axes.to_vec(),
        buttons: buttons.to_vec(),
        ..Default::default()
    }
}

fn next(cmds: &impl Sub<GaitCommand>) -> GaitCommand {
    wait_for(|| cmds.take()).expect("a gait command").unwrap()
}

/// Nothing more on `gait/command` while the node runs 15 more loops.
fn quiet(cmds: &impl Sub<GaitCommand>) {
    std::thread::sleep(Duration::from_millis(150));
    let extra: Vec<_> = std::iter::from_fn(|| cmds.take()).collect();
    assert!(extra.is_empty(), "unexpected commands: {extra:?}");
}

/// A py:8 snake: cmd_vel ahead and turning, the joystick rolling it sideways and its enable
/// button stopping it; a noisy repeat sends nothing; garbage is dropped with one log line
/// per kind; no input for `timeout_s` of node time sends one stop, then silence; stopping
/// the node stops the robot.
#[test]
fn teleop_node_maps_cmd_vel_and_joy_with_a_dead_man() {
    let bus = LoopbackBus::new();
    let mut probe = bus.node(identity("probe", "/"));
    let cmds = probe
        .subscription::<GaitCommand>("/m/gait/command", Qos::Reliable)
        .unwrap();
    let twist_pub = probe.publisher::<Twist>("/m/cmd_vel", Qos::Reliable).unwrap();
    let fake_pub = probe.publisher::<FakeTwist>("/m/cmd_vel", Qos::Reliable).unwrap();
    let joy_pub = probe.publisher::<Joy>("/m/joy", Qos::Reliable).unwrap();
    let node = spawn::<TeleopNodeConfig>(
        &bus,
        "teleop_node",
        &[
            ("robot", s("py:8")),
            ("rate_hz", ParamValue::Double(100.0)),
            ("heartbeat_s", ParamValue::Double(0.0)),
        ],
        teleop::run,
    );
    wait_log(&bus, "/m/teleop_node", "teleoperating py:8 as a snake");

    // Ahead on cmd_vel, beyond the full scale: the top speed scale.
    twist_pub.publish(twist(0.5, 0.0, 0.0)).unwrap();
    let c = next(&cmds);
    assert_eq!(
        (c.gait.as_str(), c.direction, c.speed_scale, c.stop),
        ("straight", 1, 2.0, false)
    );
    // The same ask, noisy: nothing new.
    for i in 0..10 {
        twist_pub.publish(twist(0.5 + 0.01 * f64::from(i), 0.0, 0.0)).unwrap();
    }
    quiet(&cmds);
    // Yawing left at the full scale: `turning`, O_h at its 30° to the left.
    twist_pub.publish(twist(0.06, 0.0, 0.2)).unwrap();
    let c = next(&cmds);
    assert_eq!((c.gait.as_str(), c.direction), ("turning", 1));
    assert_eq!(
        (c.param_names, c.param_values),
        (vec!["offset_h_deg".to_string()], vec![30.0])
    );

    // The joystick, enable button held, the right stick to the left: rolling to the left.
    joy_pub.publish(joy(&[0.0, 0.0, 1.0], &[1])).unwrap();
    let c = next(&cmds);
    assert_eq!((c.gait.as_str(), c.direction), ("rolling", ROLLING_LEFT_DIRECTION));
    // The button released: stop, whatever the sticks say.
    joy_pub.publish(joy(&[0.0, 0.0, 1.0], &[0])).unwrap();
    assert!(next(&cmds).stop);

    // Garbage: NaN speeds, a Joy shorter than its map, undecodable bytes.
    for _ in 0..20 {
        twist_pub.publish(twist(f64::NAN, 0.0, 0.0)).unwrap();
        joy_pub.publish(joy(&[0.5], &[1])).unwrap();
        fake_pub.publish(FakeTwist { word: 7 }).unwrap();
    }
    wait_log(&bus, "/m/teleop_node", "cmd_vel refused: linear.x is NaN");
    wait_log(&bus, "/m/teleop_node", "joy refused: axes[1] (linear_x) is missing");
    wait_log(&bus, "/m/teleop_node", "undecodable cmd_vel dropped");
    quiet(&cmds);
    for what in ["cmd_vel refused", "joy refused", "undecodable cmd_vel"] {
        assert_eq!(
            logged(&bus, "/m/teleop_node", what),
            1,
            "{what}: one line per 5 s: {:#?}",
            bus.logs()
        );
    }
    assert!(node.alive());

    // Input returns, backwards at half speed; then the node's clock runs past the dead-man.
    twist_pub.publish(twist(-0.03, 0.0, 0.0)).unwrap();
    let c = next(&cmds);
    assert_eq!((c.gait.as_str(), c.direction, c.speed_scale), ("straight", -1, 1.0));
    bus.advance(0.3);
    quiet(&cmds);
    bus.advance(0.3);
    let c = next(&cmds);
    assert!(c.stop, "the dead-man's stop: {c:?}");
    wait_log(&bus, "/m/teleop_node", "no cmd_vel or joy for 0.5 s: stop");
    bus.advance(5.0);
    quiet(&cmds);

    // The joystick takes over again; stopping the node stops the robot.
    joy_pub.publish(joy(&[0.0, 1.0, 0.0], &[1])).unwrap();
    let c = next(&cmds);
    assert_eq!((c.gait.as_str(), c.speed_scale), ("straight", 2.0));
    drop(node);
    assert!(next(&cmds).stop, "a node that ends stops the robot");
    assert!(bus.logs().iter().all(|l| l.level <= Level::Warn), "{:#?}", bus.logs());
}

/// A quadruped and the wheeled vehicle on the same node: trot with a steering state, sidle,
/// drive and spin from cmd_vel.
#[test]
fn teleop_node_drives_the_wheel_foot_robots() {
    let bus = LoopbackBus::new();
    let mut probe = bus.node(identity("probe", "/"));
    let cmds = probe
        .subscription::<GaitCommand>("/m/gait/command", Qos::Reliable)
        .unwrap();
    let twist_pub = probe.publisher::<Twist>("/m/cmd_vel", Qos::Reliable).unwrap();
    let param = |c: &GaitCommand, k: &str| {
        c.param_names
            .iter()
            .position(|n| n == k)
            .map(|i| c.param_values[i])
            .unwrap_or_else(|| panic!("{k} not in {c:?}"))
    };
    {
        let _node = spawn::<TeleopNodeConfig>(
            &bus,
            "teleop_node",
            &[("robot", s("quadruped")), ("rate_hz", ParamValue::Double(100.0))],
            teleop::run,
        );
        wait_log(&bus, "/m/teleop_node", "as a quadruped");
        // Ahead, yawing left at half the full rate: the trot in the state (5, −5).
        twist_pub.publish(twist(0.085, 0.0, 0.14)).unwrap();
        let c = next(&cmds);
        assert_eq!(c.gait, "trot");
        assert_eq!(
            (param(&c, "direction"), param(&c, "r"), param(&c, "l")),
            (1.0, 5.0, -5.0)
        );
        // To the right: the sidle, direction −1.
        twist_pub.publish(twist(0.0, -0.061, 0.0)).unwrap();
        let c = next(&cmds);
        assert_eq!((c.gait.as_str(), param(&c, "direction")), ("sidle", -1.0));
    }
    assert!(next(&cmds).stop);
    {
        let _node = spawn::<TeleopNodeConfig>(
            &bus,
            "teleop_node",
            &[("robot", s("wheeled")), ("rate_hz", ParamValue::Double(100.0))],
            teleop::run,
        );
        wait_log(&bus, "/m/teleop_node", "as a wheeled");
        twist_pub.publish(twist(-0.5, 0.0, 0.0)).unwrap();
        let c = next(&cmds);
        assert_eq!((c.gait.as_str(), param(&c, "speed_deg_s")), ("drive", -360.0));
        twist_pub.publish(twist(0.0, 0.0, -0.25)).unwrap();
        let c = next(&cmds);
        assert_eq!((c.gait.as_str(), param(&c, "speed_deg_s")), ("spin", 180.0));
    }
}
