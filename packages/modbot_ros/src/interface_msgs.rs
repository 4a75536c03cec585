//! The robot interface's readings as ROS 2 messages, both ways (issue 50; decision record
//! 0062): joint states (sensor_msgs/JointState), the IMU (sensor_msgs/Imu), the wheel's
//! force/torque sensor (geometry_msgs/WrenchStamped), the camera's tags
//! (modbot_msgs/TagDetectionArray), a connector's state (modbot_msgs/ConnectorState) and a
//! port's docking sensor (modbot_msgs/DockingReadingArray). Every message read is checked —
//! finite, sizes that agree, codes that exist, unit quaternions — and refused with a
//! [`RobotError::BadReading`] naming the sensor and the field, so that a node drops it and logs
//! it; every stamp is the message header's (the capture time), never the arrival time.

use modbot_interface::{
    ConnectorState as State, ConnectorStatus, DockingReading, ImuReading, JointStates, RobotError, TagDetection,
    TagFrame, Wrench, finite,
};
use modbot_msgs::builtin_interfaces::msg::Time;
use modbot_msgs::geometry_msgs::msg::{
    Point, Pose, Quaternion, Vector3 as RosVector3, Wrench as RosWrench, WrenchStamped,
};
use modbot_msgs::modbot_msgs::msg::{
    ConnectorState, DockingReading as RosDockingReading, DockingReadingArray, TagDetection as RosTagDetection,
    TagDetectionArray,
};
use modbot_msgs::sensor_msgs::msg::{Imu, JointState};
use modbot_msgs::std_msgs::msg::Header;
use nalgebra::{Isometry3, Matrix3, Translation3, UnitQuaternion, Vector3};

type Result<T> = std::result::Result<T, RobotError>;

/// A quaternion read from a message is a rotation when its norm is within this of 1 (it is
/// then normalised): a publisher's float32 round trip stays far inside it.
pub const UNIT_TOLERANCE: f64 = 1e-3;

fn header(stamp: f64, frame_id: &str) -> Header {
    Header {
        stamp: Time::from_secs_f64(stamp),
        frame_id: frame_id.to_string(),
    }
}

fn bad(sensor: &str, field: String, value: f64, expected: &'static str) -> RobotError {
    RobotError::BadReading {
        sensor: sensor.to_string(),
        field,
        value,
        expected,
    }
}

fn stamp(sensor: &str, h: &Header) -> Result<f64> {
    // A Time's nanoseconds past 1e9 are not a time (rclpy refuses to build one).
    if h.stamp.nanosec >= 1_000_000_000 {
        return Err(bad(
            sensor,
            "header.stamp.nanosec".into(),
            f64::from(h.stamp.nanosec),
            "nanoseconds below 1e9",
        ));
    }
    Ok(h.stamp.as_secs_f64())
}

fn vector(sensor: &str, field: &str, v: &RosVector3) -> Result<Vector3<f64>> {
    let out = Vector3::new(v.x, v.y, v.z);
    for (k, x) in out.iter().enumerate() {
        finite(sensor, || format!("{field}.{}", ["x", "y", "z"][k]), *x)?;
    }
    Ok(out)
}

fn point(sensor: &str, field: &str, p: &Point) -> Result<Vector3<f64>> {
    vector(sensor, field, &RosVector3 { x: p.x, y: p.y, z: p.z })
}

fn vector_msg(v: &Vector3<f64>) -> RosVector3 {
    RosVector3 { x: v.x, y: v.y, z: v.z }
}

fn rotation(sensor: &str, field: &str, q: &Quaternion) -> Result<UnitQuaternion<f64>> {
    for (c, x) in [("x", q.x), ("y", q.y), ("z", q.z), ("w", q.w)] {
        finite(sensor, || format!("{field}.{c}"), x)?;
    }
    let q = nalgebra::Quaternion::new(q.w, q.x, q.y, q.z);
    let n = q.norm();
    if (n - 1.0).abs() > UNIT_TOLERANCE {
        return Err(bad(sensor, format!("{field} (norm)"), n, "a unit quaternion"));
    }
    Ok(UnitQuaternion::from_quaternion(q))
}

fn rotation_msg(q: &UnitQuaternion<f64>) -> Quaternion {
    Quaternion {
        x: q.i,
        y: q.j,
        z: q.k,
        w: q.w,
    }
}

fn pose(sensor: &str, field: &str, p: &Pose) -> Result<Isometry3<f64>> {
    let t = point(sensor, &format!("{field}.position"), &p.position)?;
    let r = rotation(sensor, &format!("{field}.orientation"), &p.orientation)?;
    Ok(Isometry3::from_parts(Translation3::from(t), r))
}

fn pose_msg(p: &Isometry3<f64>) -> Pose {
    let t = p.translation.vector;
    Pose {
        position: Point { x: t.x, y: t.y, z: t.z },
        orientation: rotation_msg(&p.rotation),
    }
}

/// A covariance: finite, symmetric (within 1e-9 relative), its diagonal ≥ 0.
fn covariance(sensor: &str, field: &str, c: &[f64]) -> Result<Matrix3<f64>> {
    for (k, x) in c.iter().enumerate() {
        finite(sensor, || format!("{field}[{k}]"), *x)?;
    }
    let m = Matrix3::from_row_slice(c);
    for i in 0..3 {
        if m[(i, i)] < 0.0 {
            return Err(bad(sensor, format!("{field}[{}]", 4 * i), m[(i, i)], "a variance ≥ 0"));
        }
        for j in 0..i {
            let scale = m[(i, j)].abs().max(m[(j, i)].abs()).max(1e-300);
            if (m[(i, j)] - m[(j, i)]).abs() > 1e-9 * scale {
                return Err(bad(
                    sensor,
                    format!("{field}[{}]", 3 * i + j),
                    m[(i, j)],
                    "a symmetric covariance",
                ));
            }
        }
    }
    Ok(m)
}

fn row_major(m: &Matrix3<f64>) -> [f64; 9] {
    let mut out = [0.0; 9];
    for i in 0..3 {
        for j in 0..3 {
            out[3 * i + j] = m[(i, j)];
        }
    }
    out
}

/// The joint states of the joints `names` (in that order) from a sensor_msgs/JointState,
/// which may list them in any order among others. Refused naming the field: a name missing
/// or repeated, arrays whose lengths disagree with `name` (velocity and effort may be
/// empty: read as zeros), a value not finite.
pub fn joint_states(m: &JointState, names: &[String], sensor: &str) -> Result<JointStates> {
    let n = m.name.len();
    for (field, len, may_be_empty) in [
        ("position", m.position.len(), false),
        ("velocity", m.velocity.len(), true),
        ("effort", m.effort.len(), true),
    ] {
        if len != n && !(may_be_empty && len == 0) {
            return Err(bad(
                sensor,
                format!("{field} (length)"),
                len as f64,
                "as many values as names",
            ));
        }
    }
    let mut out = JointStates {
        stamp: stamp(sensor, &m.header)?,
        position: Vec::with_capacity(names.len()),
        velocity: Vec::with_capacity(names.len()),
        effort: Vec::with_capacity(names.len()),
    };
    for want in names {
        let mut at = m.name.iter().enumerate().filter(|(_, n)| *n == want).map(|(k, _)| k);
        let (Some(k), None) = (at.next(), at.next()) else {
            return Err(RobotError::BadReading {
                sensor: sensor.to_string(),
                field: format!("name `{want}`"),
                value: m.name.iter().filter(|n| *n == want).count() as f64,
                expected: "each joint named exactly once",
            });
        };
        let get = |v: &[f64], field: &str| -> Result<f64> {
            let x = v.get(k).copied().unwrap_or(0.0);
            finite(sensor, || format!("{field}[{k}] ({want})"), x)
        };
        out.position.push(get(&m.position, "position")?);
        out.velocity.push(get(&m.velocity, "velocity")?);
        out.effort.push(get(&m.effort, "effort")?);
    }
    Ok(out)
}

/// A sensor_msgs/JointState of `names` (`frame_id` empty, as robot_state_publisher expects).
pub fn joint_state_msg(s: &JointStates, names: &[String]) -> JointState {
    JointState {
        header: header(s.stamp, ""),
        name: names.to_vec(),
        position: s.position.clone(),
        velocity: s.velocity.clone(),
        effort: s.effort.clone(),
    }
}

/// An IMU reading from a sensor_msgs/Imu. The interface needs the orientation: a message
/// saying it has none (`orientation_covariance[0] = -1`, REP 145) is refused, as is a
/// rotation that is not a unit quaternion or anything not finite.
pub fn imu_reading(m: &Imu, sensor: &str) -> Result<ImuReading> {
    if m.orientation_covariance[0] == -1.0 {
        return Err(bad(
            sensor,
            "orientation_covariance[0]".into(),
            -1.0,
            "an orientation (this IMU says it gives none)",
        ));
    }
    Ok(ImuReading {
        stamp: stamp(sensor, &m.header)?,
        orientation: rotation(sensor, "orientation", &m.orientation)?,
        angular_velocity: vector(sensor, "angular_velocity", &m.angular_velocity)?,
        linear_acceleration: vector(sensor, "linear_acceleration", &m.linear_acceleration)?,
    })
}

/// A sensor_msgs/Imu of a reading in `frame_id`, with the diagonal variances given
/// (orientation rad², angular velocity (rad/s)², acceleration (m/s²)²).
pub fn imu_msg(r: &ImuReading, frame_id: &str, variances: [f64; 3]) -> Imu {
    let diag = |v: f64| [v, 0.0, 0.0, 0.0, v, 0.0, 0.0, 0.0, v];
    Imu {
        header: header(r.stamp, frame_id),
        orientation: rotation_msg(&r.orientation),
        orientation_covariance: diag(variances[0]),
        angular_velocity: vector_msg(&r.angular_velocity),
        angular_velocity_covariance: diag(variances[1]),
        linear_acceleration: vector_msg(&r.linear_acceleration),
        linear_acceleration_covariance: diag(variances[2]),
    }
}

/// A force/torque reading from a geometry_msgs/WrenchStamped (the torque always present).
pub fn wrench(m: &WrenchStamped, sensor: &str) -> Result<Wrench> {
    Ok(Wrench {
        stamp: stamp(sensor, &m.header)?,
        force: vector(sensor, "wrench.force", &m.wrench.force)?,
        torque: Some(vector(sensor, "wrench.torque", &m.wrench.torque)?),
    })
}

/// A geometry_msgs/WrenchStamped in `frame_id`; a force-only sensor's torque is sent as 0
/// (the message has no way to say "not measured").
pub fn wrench_msg(w: &Wrench, frame_id: &str) -> WrenchStamped {
    WrenchStamped {
        header: header(w.stamp, frame_id),
        wrench: RosWrench {
            force: vector_msg(&w.force),
            torque: vector_msg(&w.torque.unwrap_or_else(Vector3::zeros)),
        },
    }
}

/// A camera frame from a modbot_msgs/TagDetectionArray: each detection's id not empty, its
/// position finite, its covariance finite, symmetric, with variances ≥ 0.
pub fn tag_frame(m: &TagDetectionArray, sensor: &str) -> Result<TagFrame> {
    let mut detections = Vec::with_capacity(m.detections.len());
    for (i, d) in m.detections.iter().enumerate() {
        if d.id.is_empty() {
            return Err(bad(sensor, format!("detections[{i}].id"), f64::NAN, "a tag id"));
        }
        detections.push(TagDetection {
            id: d.id.clone(),
            position: point(sensor, &format!("detections[{i}].position"), &d.position)?,
            covariance: covariance(sensor, &format!("detections[{i}].covariance"), &d.covariance)?,
        });
    }
    let f = TagFrame {
        stamp: stamp(sensor, &m.header)?,
        detections,
    };
    f.check(sensor)?;
    Ok(f)
}

/// A modbot_msgs/TagDetectionArray of a frame seen from the optical frame `frame_id`.
pub fn tag_frame_msg(f: &TagFrame, frame_id: &str) -> TagDetectionArray {
    TagDetectionArray {
        header: header(f.stamp, frame_id),
        detections: f
            .detections
            .iter()
            .map(|d| RosTagDetection {
                id: d.id.clone(),
                position: Point {
                    x: d.position.x,
                    y: d.position.y,
                    z: d.position.z,
                },
                covariance: row_major(&d.covariance),
            })
            .collect(),
    }
}

fn state_code(s: State) -> u8 {
    match s {
        State::Open => ConnectorState::OPEN,
        State::Engaging => ConnectorState::ENGAGING,
        State::Latched => ConnectorState::LATCHED,
        State::Failed => ConnectorState::FAILED,
    }
}

/// A connector's status from a modbot_msgs/ConnectorState, which must be of port `port`:
/// a state code that exists, a partner exactly while latched, a reason only when failed.
pub fn connector_status(m: &ConnectorState, port: &str, sensor: &str) -> Result<ConnectorStatus> {
    let refuse = |field: &str, value: f64, expected: &'static str| Err(bad(sensor, field.into(), value, expected));
    if m.port != port {
        return Err(RobotError::ConnectorFault {
            port: port.to_string(),
            what: format!("its state topic reports port `{}`", m.port),
        });
    }
    let state = match m.state {
        ConnectorState::OPEN => State::Open,
        ConnectorState::ENGAGING => State::Engaging,
        ConnectorState::LATCHED => State::Latched,
        ConnectorState::FAILED => State::Failed,
        other => return refuse("state", f64::from(other), "OPEN, ENGAGING, LATCHED or FAILED (0–3)"),
    };
    if (state == State::Latched) == m.partner.is_empty() {
        return refuse(
            "partner",
            m.partner.len() as f64,
            "a partner `<module>/<port>` exactly while LATCHED",
        );
    }
    if state != State::Failed && !m.reason.is_empty() {
        return refuse("reason", m.reason.len() as f64, "a reason only when FAILED");
    }
    Ok(ConnectorStatus {
        stamp: stamp(sensor, &m.header)?,
        state,
        partner: (!m.partner.is_empty()).then(|| m.partner.clone()),
        reason: (!m.reason.is_empty()).then(|| m.reason.clone()),
    })
}

/// A modbot_msgs/ConnectorState of port `port` (its frame `frame_id`).
pub fn connector_msg(s: &ConnectorStatus, port: &str, frame_id: &str) -> ConnectorState {
    ConnectorState {
        header: header(s.stamp, frame_id),
        port: port.to_string(),
        state: state_code(s.state),
        partner: s.partner.clone().unwrap_or_default(),
        reason: s.reason.clone().unwrap_or_default(),
    }
}

/// A docking sensor's frame from a modbot_msgs/DockingReadingArray: every reading stamped
/// with the frame's capture time; partners not empty; poses finite with unit rotations.
pub fn docking_readings(m: &DockingReadingArray, sensor: &str) -> Result<Vec<DockingReading>> {
    let t = stamp(sensor, &m.header)?;
    m.readings
        .iter()
        .enumerate()
        .map(|(i, r)| {
            if r.partner.is_empty() {
                return Err(bad(sensor, format!("readings[{i}].partner"), f64::NAN, "a face id"));
            }
            Ok(DockingReading {
                stamp: t,
                partner: r.partner.clone(),
                pose: pose(sensor, &format!("readings[{i}].pose"), &r.pose)?,
            })
        })
        .collect()
}

/// A modbot_msgs/DockingReadingArray of one frame (`stamp`, the port's frame `frame_id`).
pub fn docking_msg(readings: &[DockingReading], stamp: f64, frame_id: &str) -> DockingReadingArray {
    DockingReadingArray {
        header: header(stamp, frame_id),
        readings: readings
            .iter()
            .map(|r| RosDockingReading {
                partner: r.partner.clone(),
                pose: pose_msg(&r.pose),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn field_of(e: RobotError) -> String {
        match e {
            RobotError::BadReading { field, .. } => field,
            other => panic!("not a bad reading: {other}"),
        }
    }

    /// A tag 2 m ahead, 0.5 m left and 0.1 m up round-trips; its bearing and range are the
    /// closed form's (atan2(0.5, 2), √4.26).
    #[test]
    fn a_tag_frame_round_trips_and_keeps_its_geometry() {
        let c = Matrix3::new(0.01, 0.002, 0.0, 0.002, 0.02, 0.0, 0.0, 0.0, 0.03);
        let f = TagFrame {
            stamp: 12.345,
            detections: vec![TagDetection {
                id: "target".into(),
                position: Vector3::new(2.0, 0.5, 0.1),
                covariance: c,
            }],
        };
        let m = tag_frame_msg(&f, "m1/camera_optical");
        assert_eq!(m.header.frame_id, "m1/camera_optical");
        assert_eq!((m.header.stamp.sec, m.header.stamp.nanosec), (12, 345_000_000));
        assert_eq!(m.detections[0].covariance[1], 0.002);
        assert_eq!(m.detections[0].covariance[4], 0.02);
        let back = tag_frame(&m, "camera").unwrap();
        assert!((back.stamp - 12.345).abs() < 1e-9);
        let d = back.find("target").unwrap();
        assert_eq!(d.covariance, c);
        assert!((d.bearing_rad() - 0.5f64.atan2(2.0)).abs() < 1e-12);
        assert!((d.range_m() - 4.26f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn a_bad_tag_frame_is_refused_naming_the_field() {
        let good = tag_frame_msg(
            &TagFrame {
                stamp: 1.0,
                detections: vec![TagDetection {
                    id: "lath".into(),
                    position: Vector3::new(1.0, 0.0, 0.0),
                    covariance: Matrix3::identity() * 1e-4,
                }],
            },
            "cam",
        );
        let mut m = good.clone();
        m.detections[0].position.y = f64::NAN;
        assert_eq!(
            field_of(tag_frame(&m, "camera").unwrap_err()),
            "detections[0].position.y"
        );
        let mut m = good.clone();
        m.detections[0].id.clear();
        assert_eq!(field_of(tag_frame(&m, "camera").unwrap_err()), "detections[0].id");
        let mut m = good.clone();
        m.detections[0].covariance[8] = -1.0;
        assert_eq!(
            field_of(tag_frame(&m, "camera").unwrap_err()),
            "detections[0].covariance[8]"
        );
        let mut m = good.clone();
        m.detections[0].covariance[3] = 0.5;
        assert_eq!(
            field_of(tag_frame(&m, "camera").unwrap_err()),
            "detections[0].covariance[3]"
        );
        let mut m = good;
        m.header.stamp.nanosec = 1_000_000_000;
        assert_eq!(field_of(tag_frame(&m, "camera").unwrap_err()), "header.stamp.nanosec");
    }

    #[test]
    fn joint_states_are_read_by_name_in_any_order() {
        let names: Vec<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
        let m = JointState {
            header: header(3.5, ""),
            name: vec!["x".into(), "b".into(), "a".into()],
            position: vec![9.0, 0.2, 0.1],
            velocity: vec![],
            effort: vec![0.0, 1.5, -1.5],
        };
        let s = joint_states(&m, &names, "joint_states").unwrap();
        assert_eq!(
            (s.position, s.velocity, s.effort),
            (vec![0.1, 0.2], vec![0.0, 0.0], vec![-1.5, 1.5])
        );
        assert_eq!(s.stamp, 3.5);
        let mut short = m.clone();
        short.position.pop();
        assert_eq!(
            field_of(joint_states(&short, &names, "js").unwrap_err()),
            "position (length)"
        );
        let mut twice = m.clone();
        twice.name[0] = "a".into();
        assert_eq!(field_of(joint_states(&twice, &names, "js").unwrap_err()), "name `a`");
        let mut missing = m.clone();
        missing.name[1] = "c".into();
        assert_eq!(field_of(joint_states(&missing, &names, "js").unwrap_err()), "name `b`");
        let mut nan = m;
        nan.effort[1] = f64::INFINITY;
        assert_eq!(field_of(joint_states(&nan, &names, "js").unwrap_err()), "effort[1] (b)");
    }

    /// A 90° yaw round-trips; a quaternion of norm 1.01, a NaN rate or an IMU that says it has
    /// no orientation are refused.
    #[test]
    fn an_imu_reading_round_trips_and_a_bad_one_is_refused() {
        let r = ImuReading {
            stamp: 4.25,
            orientation: UnitQuaternion::from_euler_angles(0.0, 0.0, std::f64::consts::FRAC_PI_2),
            angular_velocity: Vector3::new(0.0, 0.0, 0.3),
            linear_acceleration: Vector3::new(0.0, 0.0, 9.81),
        };
        let m = imu_msg(&r, "m1/imu_link", [1e-4, 1e-5, 1e-2]);
        assert_eq!(m.orientation_covariance[4], 1e-4);
        let back = imu_reading(&m, "imu").unwrap();
        assert!((back.yaw() - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
        assert_eq!(back.linear_acceleration, r.linear_acceleration);
        let mut m2 = m.clone();
        m2.orientation.w *= 1.01 / 1.0;
        m2.orientation.z *= 1.01;
        assert_eq!(field_of(imu_reading(&m2, "imu").unwrap_err()), "orientation (norm)");
        let mut m3 = m.clone();
        m3.angular_velocity.x = f64::NAN;
        assert_eq!(field_of(imu_reading(&m3, "imu").unwrap_err()), "angular_velocity.x");
        let mut m4 = m;
        m4.orientation_covariance[0] = -1.0;
        assert_eq!(
            field_of(imu_reading(&m4, "imu").unwrap_err()),
            "orientation_covariance[0]"
        );
    }

    #[test]
    fn a_connector_state_round_trips_and_contradictions_are_refused() {
        let latched = ConnectorStatus {
            stamp: 7.0,
            state: State::Latched,
            partner: Some("m2/L".into()),
            reason: None,
        };
        let m = connector_msg(&latched, "F", "m1/port_F");
        assert_eq!(m.state, 2);
        assert_eq!(connector_status(&m, "F", "connector F").unwrap(), latched);
        let failed = ConnectorStatus {
            stamp: 8.0,
            state: State::Failed,
            partner: None,
            reason: Some("no face within 3 cm".into()),
        };
        assert_eq!(
            connector_status(&connector_msg(&failed, "F", ""), "F", "c").unwrap(),
            failed
        );
        let mut bad_code = m.clone();
        bad_code.state = 9;
        assert_eq!(field_of(connector_status(&bad_code, "F", "c").unwrap_err()), "state");
        let mut no_partner = m.clone();
        no_partner.partner.clear();
        assert_eq!(
            field_of(connector_status(&no_partner, "F", "c").unwrap_err()),
            "partner"
        );
        let mut open_with_partner = m.clone();
        open_with_partner.state = ConnectorState::OPEN;
        assert_eq!(
            field_of(connector_status(&open_with_partner, "F", "c").unwrap_err()),
            "partner"
        );
        assert!(matches!(
            connector_status(&m, "BF", "c"),
            Err(RobotError::ConnectorFault { .. })
        ));
    }

    #[test]
    fn docking_readings_round_trip_with_the_frames_stamp() {
        let p = Isometry3::from_parts(
            Translation3::new(0.05, 0.01, 0.0),
            UnitQuaternion::from_euler_angles(0.0, 0.0, std::f64::consts::PI),
        );
        let r = DockingReading {
            stamp: 2.5,
            partner: "m4/BF".into(),
            pose: p,
        };
        let m = docking_msg(std::slice::from_ref(&r), 2.5, "m1/port_F");
        let back = docking_readings(&m, "dock/F").unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].partner, "m4/BF");
        assert!((back[0].pose.translation.vector - p.translation.vector).norm() < 1e-12);
        assert!(back[0].pose.rotation.angle_to(&p.rotation) < 1e-12);
        let mut m2 = m.clone();
        m2.readings[0].pose.orientation.w = 0.5;
        assert_eq!(
            field_of(docking_readings(&m2, "dock/F").unwrap_err()),
            "readings[0].pose.orientation (norm)"
        );
        let mut m3 = m;
        m3.readings[0].pose.position.z = f64::NEG_INFINITY;
        assert_eq!(
            field_of(docking_readings(&m3, "dock/F").unwrap_err()),
            "readings[0].pose.position.z"
        );
    }

    #[test]
    fn a_wrench_round_trips() {
        let w = Wrench {
            stamp: 1.0,
            force: Vector3::new(1.0, -2.0, 30.0),
            torque: None,
        };
        let back = wrench(&wrench_msg(&w, "m1/wheel_ft"), "wheel_ft").unwrap();
        assert_eq!(back.force, w.force);
        assert_eq!(back.torque, Some(Vector3::zeros()));
        let mut m = wrench_msg(&w, "");
        m.wrench.force.z = f64::NAN;
        assert_eq!(field_of(wrench(&m, "wheel_ft").unwrap_err()), "wrench.force.z");
    }
}
