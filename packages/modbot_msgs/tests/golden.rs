//! The generated types against real ROS 2: CDR bytes identical to
//! `rclpy.serialization.serialize_message` and field lists identical to rosidl's, for the
//! golden file `tests/golden.json` written by `test/interop/golden.py` (rclpy 7.1.6, Jazzy; modbot's
//! own interfaces built for rclpy by `test/interop/build_modbot_msgs.sh`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use modbot_msgs::builtin_interfaces::msg::{Duration, Time};
use modbot_msgs::cdr::{from_bytes, to_bytes};
use modbot_msgs::geometry_msgs::msg::{Point, PoseStamped, TransformStamped};
use modbot_msgs::nav_msgs::msg::{OccupancyGrid, Odometry, Path};
use modbot_msgs::rosgraph_msgs::msg::Clock;
use modbot_msgs::sensor_msgs::msg::{JointState, Joy};
use modbot_msgs::std_msgs::msg::{ColorRGBA, Float64MultiArray, Header, MultiArrayDimension, String as StringMsg};
use modbot_msgs::visualization_msgs::msg::{Marker, MarkerArray};
use modbot_msgs::{RosMessage, fields_of};
use serde_json::Value;

fn golden() -> Value {
    serde_json::from_str(include_str!("golden.json")).unwrap()
}

fn header(sec: i32, nanosec: u32, frame: &str) -> Header {
    Header {
        stamp: Time { sec, nanosec },
        frame_id: frame.into(),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Byte equality up to CDR alignment padding: rclpy (Fast CDR) leaves the padding bytes
/// between fields and after the last one uninitialised (two runs of golden.py differ there),
/// while we write zeros. A differing byte is accepted only where ours is a zero that a
/// 4-aligned offset of the body follows within 7 zero bytes (where padding can be), or in at
/// most 7 trailing bytes that end the body on a 4-byte boundary (an RTPS payload's length is
/// a multiple of 4: std_srvs/SetBool's one-byte request arrives as four). Values are checked
/// separately: rclpy's bytes must decode to the very message we encoded.
fn same_but_padding(ours: &[u8], theirs: &[u8]) -> Result<(), String> {
    if theirs.len() < ours.len() || theirs.len() - ours.len() > 7 {
        return Err(format!("length {} vs rclpy's {}", ours.len(), theirs.len()));
    }
    if theirs.len() > ours.len() && (theirs.len() - 4) % 4 != 0 {
        return Err(format!(
            "rclpy's {} trailing bytes do not end on a 4-byte boundary",
            theirs.len() - ours.len()
        ));
    }
    for i in (0..ours.len()).filter(|&i| ours[i] != theirs[i]) {
        let padding =
            i >= 4 && (i + 1..=(i + 7).min(ours.len())).any(|b| (b - 4) % 4 == 0 && ours[i..b].iter().all(|&x| x == 0));
        if !padding {
            return Err(format!(
                "byte {i} differs ({:02x} vs {:02x}) and is not alignment padding",
                ours[i], theirs[i]
            ));
        }
    }
    Ok(())
}

fn check<M: RosMessage + PartialEq>(name: &str, m: M) {
    let g = golden();
    let case = &g["messages"][name];
    assert_eq!(case["type"].as_str().unwrap(), M::ros_type(), "{name}: type");
    let want = unhex(case["hex"].as_str().unwrap());
    let ours = to_bytes(&m).unwrap();
    if let Err(e) = same_but_padding(&ours, &want) {
        panic!("{name}: {e}\n ours:  {}\n rclpy: {}", hex(&ours), hex(&want));
    }
    let back: M = from_bytes(&want).unwrap();
    assert_eq!(back, m, "{name}: rclpy's bytes decode to another value");
    // Re-encoding what rclpy sent gives our bytes exactly (padding zeroed).
    assert_eq!(to_bytes(&back).unwrap(), ours);
}

#[test]
fn the_padding_rule_rejects_real_differences() {
    let ours = [0, 1, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4];
    let mut theirs = ours;
    theirs[9] = 0x77; // padding before an 8-aligned double: fine
    assert!(same_but_padding(&ours, &theirs).is_ok());
    theirs[4] = 6; // a value byte
    assert!(same_but_padding(&ours, &theirs).is_err());
    let mut theirs = ours;
    theirs[13] = 9;
    assert!(same_but_padding(&ours, &theirs).is_err());
    let mut theirs = ours;
    theirs[2] = 1; // the encapsulation header
    assert!(same_but_padding(&ours, &theirs).is_err());
    assert!(same_but_padding(&ours, &ours[..12]).is_err());
    // Trailing padding ends the body on a 4-byte boundary, and only there.
    let short = [0, 1, 0, 0, 1];
    assert!(same_but_padding(&short, &[0, 1, 0, 0, 1, 0x55, 0, 0]).is_ok());
    assert!(same_but_padding(&short, &[0, 1, 0, 0, 1, 0x55, 0]).is_err());
}

/// sensor_msgs/Joy, what teleop_node reads on `joy`.
#[test]
fn joy() {
    check(
        "joy",
        Joy {
            header: header(7, 8, "joy"),
            axes: vec![0.5, -1.0],
            buttons: vec![1, 0],
        },
    );
}

#[test]
fn float64_multi_array() {
    let mut m = Float64MultiArray::default();
    m.layout.dim = vec![MultiArrayDimension {
        label: "joints".into(),
        size: 3,
        stride: 3,
    }];
    m.data = vec![0.1, -0.2, 0.3];
    check("float64_multi_array", m);
}

#[test]
fn joint_state() {
    check(
        "joint_state",
        JointState {
            header: header(12, 345, "base_link"),
            name: vec!["j1".into(), "j2".into()],
            position: vec![0.5, -0.25],
            velocity: vec![1.0, 2.0],
            effort: vec![],
        },
    );
}

#[test]
fn odometry_with_fixed_covariance_arrays() {
    let mut o = Odometry {
        header: header(1, 2, "odom"),
        child_frame_id: "base_link".into(),
        ..Default::default()
    };
    o.pose.pose.position = Point { x: 1.0, y: 2.0, z: 3.0 };
    o.pose.covariance = std::array::from_fn(|i| i as f64 * 0.5);
    o.twist.twist.linear.x = 0.1;
    o.twist.twist.linear.y = 0.2;
    o.twist.twist.linear.z = 0.3;
    o.twist.twist.angular.z = 0.5;
    check("odometry", o);
}

#[test]
fn clock_transform_pose_path_string() {
    check(
        "clock",
        Clock {
            clock: Time { sec: 5, nanosec: 6 },
        },
    );
    let mut t = TransformStamped {
        header: header(3, 4, "odom"),
        child_frame_id: "base_link".into(),
        ..Default::default()
    };
    t.transform.translation.x = 0.5;
    t.transform.translation.z = 0.1;
    t.transform.rotation.z = std::f64::consts::FRAC_1_SQRT_2;
    t.transform.rotation.w = std::f64::consts::FRAC_1_SQRT_2;
    check("transform_stamped", t.clone());
    check(
        "tf_message",
        modbot_msgs::tf2_msgs::msg::TFMessage { transforms: vec![t] },
    );
    let mut p = PoseStamped {
        header: header(0, 0, "map"),
        ..Default::default()
    };
    p.pose.position.x = 1.5;
    p.pose.position.y = -2.0;
    // The quaternion's .msg default (w = 1) is what rclpy sends untouched.
    assert_eq!(p.pose.orientation.w, 1.0);
    check("pose_stamped", p);
    let poses = [0.0, 1.0]
        .iter()
        .map(|&x| {
            let mut q = PoseStamped {
                header: header(0, 0, "map"),
                ..Default::default()
            };
            q.pose.position.x = x;
            q
        })
        .collect();
    check(
        "path",
        Path {
            header: header(0, 0, "map"),
            poses,
        },
    );
    check(
        "string",
        StringMsg {
            data: "<robot name=\"x\"/>".into(),
        },
    );
}

#[test]
fn marker_array_with_every_nested_kind() {
    let mut mk = Marker {
        header: header(0, 0, "map"),
        ns: "subgoals".into(),
        id: 7,
        r#type: Marker::SPHERE,
        action: Marker::ADD,
        ..Default::default()
    };
    mk.pose.position.x = 1.0;
    mk.pose.position.y = 2.0;
    mk.scale.x = 0.1;
    mk.scale.y = 0.1;
    mk.scale.z = 0.1;
    mk.color = ColorRGBA {
        r: 1.0,
        g: 0.0,
        b: 0.0,
        a: 1.0,
    };
    mk.lifetime = Duration { sec: 0, nanosec: 0 };
    mk.points = vec![Point::default()];
    mk.text = "row 1".into();
    check("marker_array", MarkerArray { markers: vec![mk] });
}

#[test]
fn occupancy_grid_with_signed_bytes() {
    let mut g = OccupancyGrid {
        header: header(0, 0, "map"),
        ..Default::default()
    };
    g.info.resolution = 0.05;
    g.info.width = 3;
    g.info.height = 2;
    g.info.origin.position.x = -1.0;
    g.info.origin.position.y = -1.0;
    g.data = vec![0, 100, -1, 0, 0, 100];
    check("occupancy_grid", g);
}

#[test]
fn modbot_own_interfaces_as_rclpy_builds_them() {
    use modbot_msgs::modbot_msgs::msg::{GaitCommand, GaitState, StrategicPlan, SubGoal};
    check(
        "gait_command",
        GaitCommand {
            gait: "sidewinding".into(),
            param_names: vec!["A".into(), "dphi".into()],
            param_values: vec![40.0, -110.0],
            speed_scale: 1.5,
            direction: GaitCommand::DIRECTION_REVERSE,
            transition_time: 0.5,
            stop: false,
        },
    );
    check(
        "gait_state",
        GaitState {
            header: header(7, 8, ""),
            gait: "caterpillar".into(),
            robot: "pp:8".into(),
            phase: 0.25,
            cycle_count: 3,
            period: 2.0,
            param_names: vec!["amplitude_deg".into()],
            param_values: vec![40.0],
            holding: false,
            transitioning: true,
        },
    );
    let mut row = SubGoal {
        configuration: "quadruped".into(),
        reference: "ground_obstacle".into(),
        longitudinal_offset: -0.1,
        ability: true,
        action: SubGoal::ACTION_PASS_OVER,
        gait: "trot".into(),
        path: vec![Point { x: 1.0, y: 0.5, z: 0.0 }],
        ..Default::default()
    };
    row.target.position.x = 1.0;
    row.target.position.y = 0.5;
    check(
        "strategic_plan",
        StrategicPlan {
            header: header(0, 0, "map"),
            rows: vec![row],
            estimated_time: 12.5,
        },
    );
}

/// The robot interface's messages (issue 50): the standard ones (sensor_msgs/Imu,
/// geometry_msgs/WrenchStamped, std_srvs/SetBool) and modbot's own, byte for byte as rclpy
/// serialises them.
#[test]
fn robot_interface_messages_as_rclpy_builds_them() {
    use modbot_msgs::geometry_msgs::msg::{Pose, Quaternion, Vector3, Wrench, WrenchStamped};
    use modbot_msgs::modbot_msgs::msg::{
        ConnectorState, DockingReading, DockingReadingArray, TagDetection, TagDetectionArray,
    };
    use modbot_msgs::sensor_msgs::msg::Imu;
    use modbot_msgs::std_srvs::srv::{SetBool_Request, SetBool_Response};
    let h = std::f64::consts::FRAC_1_SQRT_2;
    check(
        "imu",
        Imu {
            header: header(4, 250_000_000, "m1/imu_link"),
            orientation: Quaternion {
                x: 0.0,
                y: 0.0,
                z: h,
                w: h,
            },
            orientation_covariance: [1e-4, 0.0, 0.0, 0.0, 1e-4, 0.0, 0.0, 0.0, 1e-4],
            angular_velocity: Vector3 { x: 0.0, y: 0.0, z: 0.3 },
            linear_acceleration: Vector3 {
                x: 0.0,
                y: 0.0,
                z: 9.81,
            },
            ..Default::default()
        },
    );
    check(
        "wrench_stamped",
        WrenchStamped {
            header: header(1, 0, "m1/wheel_ft"),
            wrench: Wrench {
                force: Vector3 {
                    x: 1.0,
                    y: -2.0,
                    z: 30.0,
                },
                ..Default::default()
            },
        },
    );
    check("set_bool_request", SetBool_Request { data: true });
    check(
        "set_bool_response",
        SetBool_Response {
            success: false,
            message: "no port `Q`".into(),
        },
    );
    check(
        "tag_detection_array",
        TagDetectionArray {
            header: header(12, 345_000_000, "m1/camera_optical"),
            detections: vec![TagDetection {
                id: "target".into(),
                position: Point { x: 2.0, y: 0.5, z: 0.1 },
                covariance: [0.01, 0.002, 0.0, 0.002, 0.02, 0.0, 0.0, 0.0, 0.03],
            }],
        },
    );
    check(
        "connector_state",
        ConnectorState {
            header: header(7, 0, "m1/port_F"),
            port: "F".into(),
            state: ConnectorState::LATCHED,
            partner: "m2/L".into(),
            reason: String::new(),
        },
    );
    check(
        "docking_reading_array",
        DockingReadingArray {
            header: header(2, 500_000_000, "m1/port_F"),
            readings: vec![DockingReading {
                partner: "m4/BF".into(),
                pose: Pose {
                    position: Point {
                        x: 0.05,
                        y: 0.01,
                        z: 0.0,
                    },
                    orientation: Quaternion {
                        x: 0.0,
                        y: 0.0,
                        z: 1.0,
                        w: 0.0,
                    },
                },
            }],
        },
    );
}

/// The controller switch of the robot interface (record 0063): controller_manager_msgs/
/// SwitchController, byte for byte as rclpy serialises the rosidl build of the same definition.
#[test]
fn the_controller_switch_as_rclpy_builds_it() {
    use modbot_msgs::builtin_interfaces::msg::Duration;
    use modbot_msgs::controller_manager_msgs::srv::{SwitchController_Request, SwitchController_Response};
    check(
        "switch_controller_request",
        SwitchController_Request {
            activate_controllers: vec!["wheel_position_controller".into()],
            deactivate_controllers: vec!["velocity_controller".into()],
            strictness: SwitchController_Request::STRICT,
            activate_asap: true,
            timeout: Duration { sec: 1, nanosec: 5 },
        },
    );
    check(
        "switch_controller_response",
        SwitchController_Response {
            ok: false,
            message: "not loaded".into(),
        },
    );
}

#[test]
fn every_field_list_matches_rosidl() {
    let g = golden();
    let fields = g["fields"].as_object().unwrap();
    // The standard messages and modbot's own (built for rclpy with rosidl), the Plan
    // service's request and response included.
    assert!(fields.len() >= 35, "{}", fields.len());
    assert!(fields.contains_key("modbot_msgs/srv/Plan_Response"));
    for (ty, list) in fields {
        let ours = fields_of(ty).unwrap_or_else(|| panic!("{ty}: no generated type"));
        let theirs: Vec<(String, String)> = list
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p[0].as_str().unwrap().to_string(), p[1].as_str().unwrap().to_string()))
            .collect();
        let ours: Vec<(String, String)> = ours.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        assert_eq!(ours, theirs, "{ty}: fields differ from rosidl's");
    }
}

#[test]
fn wire_type_names_are_the_ros_ones() {
    assert_eq!(JointState::dds_type(), "sensor_msgs::msg::dds_::JointState_");
    assert_eq!(
        modbot_msgs::modbot_msgs::msg::GaitCommand::dds_type(),
        "modbot_msgs::msg::dds_::GaitCommand_"
    );
    assert_eq!(Clock::ros_type(), "rosgraph_msgs/msg/Clock");
}

#[test]
fn malformed_bytes_are_named_errors() {
    let e = from_bytes::<JointState>(&[0, 1]).unwrap_err().to_string();
    assert!(e.contains("sensor_msgs/msg/JointState") && e.contains("header"), "{e}");
    let e = from_bytes::<JointState>(&[7, 7, 0, 0, 1]).unwrap_err().to_string();
    assert!(e.contains("encapsulation"), "{e}");
    // A sequence length far beyond the payload.
    let e = from_bytes::<Float64MultiArray>(&[0, 1, 0, 0, 0xff, 0xff, 0xff, 0x7f])
        .unwrap_err()
        .to_string();
    assert!(e.contains("malformed"), "{e}");
}
