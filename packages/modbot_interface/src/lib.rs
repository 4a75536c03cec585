#![doc = include_str!("../README.md")]
//!
//! The robot interface (decision record 0058): what one real module offers and accepts,
//! nothing more. A behaviour holds a `&mut dyn Module` (or a [`Modules`] set of them) and
//! each tick reads the latest readings and writes commands; the embedded simulator, ROS 2
//! topics (sim_node, Gazebo) and a servo bus are its bindings.
//!
//! - **Time** is the interface's clock ([`Clock::now`], s). Every reading carries the stamp
//!   of the moment it describes (a camera frame its capture time), so a behaviour judges
//!   age by stamps, never by when it happened to read.
//! - **Joints** in command order: names, positions, velocities, efforts; one command per
//!   joint, a position for a joint in position mode, a speed for one in velocity mode;
//!   [`Joints::switch_mode`] moves a joint between them as ros2_control switches the
//!   controller that claims it.
//! - **IMU**: orientation (its yaw is the compass heading the source reads, with drift),
//!   angular velocity, linear acceleration (specific force), in the module's body frame.
//! - **Camera**: tag detections in the camera frame, at the camera's rate, stamped with
//!   their capture time; only tags the camera can see.
//! - **Connectors**, one per port: engage, release, and the state the connector reports;
//!   whether a latch succeeds is the connector's business (its capture range), not the
//!   behaviour's. Each port's **docking sensor** reads the partner port face's pose at
//!   short range.
//! - **Force/torque** of the wheel, for the friction estimate.
//!
//! Errors are [`RobotError`]: typed, naming the sensor, joint or port. Readings are checked
//! by the binding before a behaviour sees them ([`ImuReading::check`] and its kin): a NaN
//! is an error naming the sensor and field, never a number.

use nalgebra::{Isometry3, Matrix3, UnitQuaternion, Vector3};

/// A joint's command for one tick.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum JointTarget {
    /// A position (rad; m for a prismatic joint) for a joint in position mode.
    Position(f64),
    /// A speed (rad/s) for a joint in velocity mode.
    Velocity(f64),
}

impl JointTarget {
    /// The number itself, whatever its kind.
    pub fn value(&self) -> f64 {
        match *self {
            JointTarget::Position(v) | JointTarget::Velocity(v) => v,
        }
    }
}

/// Heading of a pose about the vertical, rad: the angle of its x axis projected on the
/// ground plane, or of its y axis (turned back by 90°) when x points nearer up or down than
/// y does — a lone module's foot plate, its base, is pitched up to 80° in the inchworm poses,
/// where x's projection is short and noisy but y stays level.
pub fn yaw_of(pose: &Isometry3<f64>) -> f64 {
    let x = pose.rotation * Vector3::x();
    let y = pose.rotation * Vector3::y();
    if x.xy().norm() >= y.xy().norm() {
        x.y.atan2(x.x)
    } else {
        (-y.x).atan2(y.y)
    }
}

/// Why a call on the robot interface failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RobotError {
    /// A sensor has said nothing for longer than its timeout (or never has).
    #[error("sensor `{sensor}` lost: its last reading is {age_s:.3} s old (timeout {timeout_s} s)")]
    SensorLost {
        /// The sensor (its topic name: `imu`, `camera`, `dock/F`, …).
        sensor: String,
        /// Age of its last reading, s (infinite: none yet).
        age_s: f64,
        /// The timeout it broke, s.
        timeout_s: f64,
    },
    /// A reading failed its check: not finite, or out of its range.
    #[error("sensor `{sensor}` gave {field} = {value}: expected {expected}")]
    BadReading {
        /// The sensor.
        sensor: String,
        /// The field (`orientation.w`, `position[2]`, `detections[1].position.x`, …).
        field: String,
        /// The value read.
        value: f64,
        /// What it should have been.
        expected: &'static str,
    },
    /// A connector failed or refused an order.
    #[error("connector `{port}`: {what}")]
    ConnectorFault {
        /// The port.
        port: String,
        /// What happened.
        what: String,
    },
    /// A command the binding will not pass on (wrong length, not finite, wrong mode, beyond
    /// a limit).
    #[error("command refused for `{target}`: {reason}")]
    CommandRefused {
        /// The joint (or `joints` for the vector as a whole).
        target: String,
        /// Why.
        reason: String,
    },
    /// The interface's clock went backwards.
    #[error("the clock went back from {from_s} s to {to_s} s")]
    ClockWentBack {
        /// The later time seen before, s.
        from_s: f64,
        /// The earlier time seen now, s.
        to_s: f64,
    },
    /// A joint, port, sensor or module this binding does not have.
    #[error("no {kind} `{name}` here (there are: {known})")]
    Unknown {
        /// `joint`, `port`, `sensor`, `module`.
        kind: &'static str,
        /// The name asked for.
        name: String,
        /// The names there are.
        known: String,
    },
    /// The binding itself stopped (the simulation diverged, the bus closed).
    #[error("the robot's binding failed: {0}")]
    Binding(String),
}

/// Result with [`RobotError`].
pub type Result<T, E = RobotError> = std::result::Result<T, E>;

/// A value checked finite, or [`RobotError::BadReading`] naming `sensor` and `field`.
pub fn finite(sensor: &str, field: impl FnOnce() -> String, value: f64) -> Result<f64> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(RobotError::BadReading {
            sensor: sensor.to_string(),
            field: field(),
            value,
            expected: "a finite number",
        })
    }
}

fn finite_vec(sensor: &str, field: &str, v: &Vector3<f64>) -> Result<()> {
    for (k, x) in v.iter().enumerate() {
        finite(sensor, || format!("{field}.{}", ["x", "y", "z"][k]), *x)?;
    }
    Ok(())
}

fn finite_stamp(sensor: &str, stamp: f64) -> Result<()> {
    finite(sensor, || "stamp".into(), stamp).map(|_| ())
}

/// How a joint is commanded: which of ros2_control's controllers claims it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ControlMode {
    /// `position_controller`: the command is an angle, rad.
    Position,
    /// `velocity_controller`: the command is a speed, rad/s.
    Velocity,
}

/// The joints' state at one moment (sensor_msgs/JointState), command order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JointStates {
    /// When, s on the interface's clock.
    pub stamp: f64,
    /// Angles, rad.
    pub position: Vec<f64>,
    /// Rates, rad/s.
    pub velocity: Vec<f64>,
    /// Motor torques, N·m.
    pub effort: Vec<f64>,
}

impl JointStates {
    /// Every field finite and every vector `n` long; refused naming the field.
    pub fn check(&self, sensor: &str, n: usize) -> Result<()> {
        finite_stamp(sensor, self.stamp)?;
        for (field, v) in [
            ("position", &self.position),
            ("velocity", &self.velocity),
            ("effort", &self.effort),
        ] {
            if v.len() != n {
                return Err(RobotError::BadReading {
                    sensor: sensor.into(),
                    field: format!("{field} (length)"),
                    value: v.len() as f64,
                    expected: "one value per joint",
                });
            }
            for (k, x) in v.iter().enumerate() {
                finite(sensor, || format!("{field}[{k}]"), *x)?;
            }
        }
        Ok(())
    }
}

/// One IMU reading (sensor_msgs/Imu), body frame of the module (x forward, z up).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImuReading {
    /// When, s.
    pub stamp: f64,
    /// Orientation of the body in the world (the IMU's fused estimate: its yaw drifts).
    pub orientation: UnitQuaternion<f64>,
    /// Angular velocity, body axes, rad/s.
    pub angular_velocity: Vector3<f64>,
    /// Specific force (acceleration minus gravity), body axes, m/s²: +9.81 z at rest, level.
    pub linear_acceleration: Vector3<f64>,
}

impl ImuReading {
    /// Every field finite and the quaternion of unit length; refused naming the field.
    pub fn check(&self, sensor: &str) -> Result<()> {
        finite_stamp(sensor, self.stamp)?;
        let q = self.orientation.quaternion();
        for (field, x) in [("w", q.w), ("x", q.i), ("y", q.j), ("z", q.k)] {
            finite(sensor, || format!("orientation.{field}"), x)?;
        }
        let norm = q.norm();
        if (norm - 1.0).abs() > 1e-6 {
            return Err(RobotError::BadReading {
                sensor: sensor.into(),
                field: "orientation (norm)".into(),
                value: norm,
                expected: "a unit quaternion",
            });
        }
        finite_vec(sensor, "angular_velocity", &self.angular_velocity)?;
        finite_vec(sensor, "linear_acceleration", &self.linear_acceleration)
    }

    /// The heading, rad in (−π, π]: the compass the source reads (record 0047), the yaw of
    /// the body's x axis on the ground plane, or of its y axis when x points nearer up or
    /// down ([`yaw_of`]).
    pub fn yaw(&self) -> f64 {
        yaw_of(&Isometry3::from_parts(
            nalgebra::Translation3::identity(),
            self.orientation,
        ))
    }
}

/// One tag a camera saw.
#[derive(Debug, Clone, PartialEq)]
pub struct TagDetection {
    /// The tag's id (a fiducial's number; a module's `module_3`, an object's name).
    pub id: String,
    /// Its position in the camera frame (x the optical axis, y left, z up), m.
    pub position: Vector3<f64>,
    /// The covariance of `position`, m².
    pub covariance: Matrix3<f64>,
}

impl TagDetection {
    /// Distance from the lens, m.
    pub fn range_m(&self) -> f64 {
        self.position.norm()
    }

    /// Azimuth, rad, positive to the left.
    pub fn bearing_rad(&self) -> f64 {
        self.position.y.atan2(self.position.x)
    }

    /// Elevation, rad, positive up.
    pub fn elevation_rad(&self) -> f64 {
        self.position.z.atan2(self.position.xy().norm())
    }
}

/// What a camera saw in one frame.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TagFrame {
    /// The capture time, s (the frame reaches the behaviour a latency later).
    pub stamp: f64,
    /// Its detections.
    pub detections: Vec<TagDetection>,
}

impl TagFrame {
    /// Every field finite, ids not empty; refused naming the field.
    pub fn check(&self, sensor: &str) -> Result<()> {
        finite_stamp(sensor, self.stamp)?;
        for (i, d) in self.detections.iter().enumerate() {
            if d.id.is_empty() {
                return Err(RobotError::BadReading {
                    sensor: sensor.into(),
                    field: format!("detections[{i}].id"),
                    value: f64::NAN,
                    expected: "a tag id",
                });
            }
            finite_vec(sensor, &format!("detections[{i}].position"), &d.position)?;
            for (k, x) in d.covariance.iter().enumerate() {
                finite(sensor, || format!("detections[{i}].covariance[{k}]"), *x)?;
            }
        }
        Ok(())
    }

    /// The detection of tag `id`, if in this frame.
    pub fn find(&self, id: &str) -> Option<&TagDetection> {
        self.detections.iter().find(|d| d.id == id)
    }
}

/// What a connector reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ConnectorState {
    /// Open: nothing held.
    Open,
    /// Closing, looking for a partner face within its capture range.
    Engaging,
    /// Closed on a partner.
    Latched,
    /// The last engage found no partner in range (or the latch broke); `engage` tries again.
    Failed,
}

/// A connector's state with what it is latched to.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectorStatus {
    /// When the state last changed, s.
    pub stamp: f64,
    /// The state.
    pub state: ConnectorState,
    /// The partner (`<module>/<port>`) while latched.
    pub partner: Option<String>,
    /// Why it failed, when it did.
    pub reason: Option<String>,
}

/// The docking sensor's reading: the partner port face it sees, at short range.
#[derive(Debug, Clone, PartialEq)]
pub struct DockingReading {
    /// The capture time, s.
    pub stamp: f64,
    /// The face's id (`<module>/<port>`).
    pub partner: String,
    /// The partner face's frame in this port's frame (x out of each face: mated faces have
    /// their x axes opposed).
    pub pose: Isometry3<f64>,
}

impl DockingReading {
    /// Every field finite; refused naming the field.
    pub fn check(&self, sensor: &str) -> Result<()> {
        finite_stamp(sensor, self.stamp)?;
        finite_vec(sensor, "pose.translation", &self.pose.translation.vector)?;
        let q = self.pose.rotation.quaternion();
        for (field, x) in [("w", q.w), ("x", q.i), ("y", q.j), ("z", q.k)] {
            finite(sensor, || format!("pose.rotation.{field}"), x)?;
        }
        Ok(())
    }
}

/// A force/torque sensor's reading (geometry_msgs/WrenchStamped), in its own frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Wrench {
    /// When, s.
    pub stamp: f64,
    /// Force, N.
    pub force: Vector3<f64>,
    /// Torque, N·m; `None` for a sensor that measures force only.
    pub torque: Option<Vector3<f64>>,
}

impl Wrench {
    /// Every field finite; refused naming the field.
    pub fn check(&self, sensor: &str) -> Result<()> {
        finite_stamp(sensor, self.stamp)?;
        finite_vec(sensor, "force", &self.force)?;
        if let Some(t) = &self.torque {
            finite_vec(sensor, "torque", t)?;
        }
        Ok(())
    }
}

/// The interface's clock.
pub trait Clock {
    /// Now, s.
    fn now(&self) -> f64;
}

/// The module's joints.
pub trait Joints {
    /// Names, command order.
    fn joint_names(&self) -> &[String];
    /// The latest joint states.
    fn joint_states(&self) -> Result<JointStates>;
    /// Each joint's mode, command order.
    fn control_modes(&self) -> &[ControlMode];
    /// Moves joint `joint` (command order) to `mode`; its command until the next one is
    /// to hold where it is (position) or stand still (velocity).
    fn switch_mode(&mut self, joint: usize, mode: ControlMode) -> Result<()>;
    /// One command per joint, each of its joint's mode; the whole vector or nothing.
    fn command(&mut self, targets: &[JointTarget]) -> Result<()>;
}

/// The module's IMU.
pub trait Imu {
    /// The latest reading.
    fn imu(&self) -> Result<ImuReading>;
}

/// The module's mast camera, reporting tags.
pub trait TagCamera {
    /// The newest frame delivered (`None` before the first).
    fn tags(&self) -> Result<Option<TagFrame>>;
}

/// The module's connectors, one per port, and their docking sensors.
pub trait Connectors {
    /// The ports, by name.
    fn ports(&self) -> &[String];
    /// Closes port `port`'s latch: it reports [`ConnectorState::Engaging`], then
    /// `Latched` if a partner face comes within its capture range, else `Failed`.
    fn engage(&mut self, port: &str) -> Result<()>;
    /// Opens port `port`'s latch.
    fn release(&mut self, port: &str) -> Result<()>;
    /// What port `port`'s connector reports.
    fn connector(&self, port: &str) -> Result<ConnectorStatus>;
    /// Port `port`'s docking sensor: its newest frame, every partner face it sees, nearest
    /// first (empty when it sees none, or before its first frame).
    fn docking(&self, port: &str) -> Result<Vec<DockingReading>>;
}

/// The module's wheel force/torque sensor.
pub trait ForceTorque {
    /// The latest reading.
    fn wrench(&self) -> Result<Wrench>;
}

/// One real module: everything above, and its name.
pub trait Module: Clock + Joints + Imu + TagCamera + Connectors + ForceTorque {
    /// Its name (its namespace: `m3`).
    fn name(&self) -> &str;
}

/// The modules a behaviour drives together (a fleet, a configuration), by index.
pub trait Modules {
    /// How many.
    fn len(&self) -> usize;
    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Module `i`.
    fn module(&mut self, i: usize) -> Result<&mut dyn Module>;
    /// Module `i`, to read.
    fn module_ref(&self, i: usize) -> Result<&dyn Module>;
}

/// Checks that a clock never runs backwards: each call gets the time, or
/// [`RobotError::ClockWentBack`] if it is earlier than one seen before.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Monotonic {
    last: Option<f64>,
}

impl Monotonic {
    /// `now`, checked finite and not earlier than the last time seen.
    pub fn check(&mut self, now: f64) -> Result<f64> {
        finite("clock", || "now".into(), now)?;
        if let Some(last) = self.last
            && now < last
        {
            return Err(RobotError::ClockWentBack {
                from_s: last,
                to_s: now,
            });
        }
        self.last = Some(now);
        Ok(now)
    }
}

/// The reading stamped `stamp` is no older than `timeout_s` at `now`, or
/// [`RobotError::SensorLost`] naming `sensor`.
pub fn fresh(sensor: &str, stamp: Option<f64>, now: f64, timeout_s: f64) -> Result<()> {
    let age_s = stamp.map_or(f64::INFINITY, |s| now - s);
    if age_s <= timeout_s {
        Ok(())
    } else {
        Err(RobotError::SensorLost {
            sensor: sensor.to_string(),
            age_s,
            timeout_s,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_keeps_its_number() {
        assert_eq!(JointTarget::Position(0.5).value(), 0.5);
        assert_eq!(JointTarget::Velocity(-2.0).value(), -2.0);
    }

    #[test]
    fn readings_with_nan_are_refused_naming_the_field() {
        let imu = ImuReading {
            stamp: 1.0,
            orientation: UnitQuaternion::identity(),
            angular_velocity: Vector3::new(0.0, f64::NAN, 0.0),
            linear_acceleration: Vector3::z() * 9.81,
        };
        let e = imu.check("imu").unwrap_err();
        assert!(
            matches!(&e, RobotError::BadReading { sensor, field, .. } if sensor == "imu" && field == "angular_velocity.y"),
            "{e}"
        );
        let js = JointStates {
            stamp: 0.0,
            position: vec![0.0, f64::INFINITY],
            velocity: vec![0.0; 2],
            effort: vec![0.0; 2],
        };
        assert!(
            js.check("joint_states", 2)
                .unwrap_err()
                .to_string()
                .contains("position[1]")
        );
        assert!(js.check("joint_states", 3).unwrap_err().to_string().contains("length"));
        let frame = TagFrame {
            stamp: 0.0,
            detections: vec![TagDetection {
                id: "t".into(),
                position: Vector3::new(1.0, 0.0, f64::NAN),
                covariance: Matrix3::identity(),
            }],
        };
        assert!(
            frame
                .check("camera")
                .unwrap_err()
                .to_string()
                .contains("detections[0].position.z")
        );
        let skewed = ImuReading {
            orientation: UnitQuaternion::new_unchecked(nalgebra::Quaternion::new(2.0, 0.0, 0.0, 0.0)),
            ..imu
        };
        let skewed = ImuReading {
            angular_velocity: Vector3::zeros(),
            ..skewed
        };
        assert!(
            skewed
                .check("imu")
                .unwrap_err()
                .to_string()
                .contains("orientation (norm)")
        );
        let w = Wrench {
            stamp: f64::NAN,
            force: Vector3::zeros(),
            torque: None,
        };
        assert!(w.check("wheel_ft").unwrap_err().to_string().contains("stamp"));
    }

    #[test]
    fn the_clock_may_not_run_back_and_old_readings_are_lost() {
        let mut m = Monotonic::default();
        assert_eq!(m.check(1.0), Ok(1.0));
        assert_eq!(m.check(1.0), Ok(1.0));
        assert_eq!(m.check(0.5), Err(RobotError::ClockWentBack { from_s: 1.0, to_s: 0.5 }));
        assert!(fresh("camera", Some(1.0), 1.4, 0.5).is_ok());
        let e = fresh("camera", Some(1.0), 1.6, 0.5).unwrap_err();
        assert!(e.to_string().contains("`camera` lost"), "{e}");
        assert!(matches!(
            fresh("imu", None, 0.0, 1.0),
            Err(RobotError::SensorLost { .. })
        ));
    }

    #[test]
    fn a_detection_gives_its_bearing_elevation_and_range() {
        // A tag 1 m ahead, 1 m to the left, 0 up: 45° left, √2 m.
        let d = TagDetection {
            id: "t".into(),
            position: Vector3::new(1.0, 1.0, 0.0),
            covariance: Matrix3::zeros(),
        };
        assert!((d.bearing_rad() - std::f64::consts::FRAC_PI_4).abs() < 1e-12);
        assert!((d.range_m() - 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(d.elevation_rad(), 0.0);
        // A yaw of 30° read back from the orientation.
        let imu = ImuReading {
            stamp: 0.0,
            orientation: UnitQuaternion::from_euler_angles(0.0, 0.0, 30f64.to_radians()),
            angular_velocity: Vector3::zeros(),
            linear_acceleration: Vector3::zeros(),
        };
        assert!((imu.yaw() - 30f64.to_radians()).abs() < 1e-12);
    }
}
