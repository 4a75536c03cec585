//! The module catalog: every module kind as a small kinematic tree of its own — links with
//! mass and shapes, joints with axis, limits and actuator, and named connection frames
//! (ports) where other modules attach.
//!
//! Loaded from YAML (`config/modules.yaml`); the shipped file is also compiled in as
//! [`ModuleCatalog::builtin`] so tools work from any directory. The format is decision
//! record 0019.
//!
//! Frames: a module's frame is the frame of its first link. A port's frame has **x pointing
//! out of the module** (the outward normal of the face) and z as the "up" from which a
//! connection's roll is measured.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use nalgebra::{Isometry3, Matrix3, Translation3, Unit, UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result, parse_yaml, read_text};

/// Heaviest link a module may have, kg. Modular robots' modules weigh grams to a few kg; a
/// 10¹⁵ kg link fell through the floor with exit 0 (issue 18), since no contact stiffness
/// holds it.
pub const MAX_LINK_MASS_KG: f64 = 1000.0;

/// The shipped catalog, `config/modules.yaml`.
pub const BUILTIN_MODULES_YAML: &str = include_str!("../../../config/modules.yaml");

/// All module kinds, by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModuleCatalog {
    /// Kind used by the chain presets when none is named.
    pub default_kind: String,
    /// Module kinds by name.
    pub modules: BTreeMap<String, ModuleKind>,
}

/// One kind of module: a tree of links joined by joints, with ports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModuleKind {
    /// Free text: where the numbers come from.
    #[serde(default)]
    pub description: String,
    /// Links; the first is the module's root and its frame is the module frame.
    pub links: Vec<LinkDef>,
    /// Joints between the links, in the order their commands take.
    #[serde(default)]
    pub joints: Vec<JointDef>,
    /// Rigid joints between links (two parts of one body with a sensor between them, say);
    /// they take no command.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixed_joints: Vec<FixedJointDef>,
    /// Connection frames by name.
    pub ports: BTreeMap<String, PortDef>,
    /// Contact properties of the module's surfaces.
    pub contact: Contact,
    /// The sensors it carries besides its joints' encoders and its fixed joints' force
    /// sensors (what its robot description declares to Gazebo).
    #[serde(default, skip_serializing_if = "SensorsDef::is_empty")]
    pub sensors: SensorsDef,
}

/// A module's IMU and camera.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SensorsDef {
    /// Its inertial unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imu: Option<ImuDef>,
    /// Its camera.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera: Option<CameraDef>,
}

impl SensorsDef {
    /// No sensor.
    pub fn is_empty(&self) -> bool {
        self.imu.is_none() && self.camera.is_none()
    }
}

/// An IMU fixed to a link, at the link's frame: its rate and its gyro's and accelerometer's
/// errors (the orientation filter's errors are the simulator's model; Gazebo's IMU reports
/// the true orientation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImuDef {
    /// The link it is fixed to.
    pub link: String,
    /// Output rate, Hz.
    pub rate_hz: f64,
    /// Gyro white noise, σ per reading, deg/s.
    pub gyro_sigma_deg_s: f64,
    /// Gyro bias, σ of each axis's constant offset, deg/s.
    pub gyro_bias_sigma_deg_s: f64,
    /// Accelerometer white noise, σ per reading, m/s².
    pub accel_sigma_m_s2: f64,
}

/// A camera fixed to a link, looking along its frame's x.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CameraDef {
    /// The link it is fixed to.
    pub link: String,
    /// The lens in the link frame, m.
    pub xyz: [f64; 3],
    /// Horizontal field of view, deg.
    pub hfov_deg: f64,
    /// Vertical field of view, deg.
    pub vfov_deg: f64,
    /// Farthest point it reports, m.
    pub range_m: f64,
    /// Frames per second.
    pub rate_hz: f64,
    /// Image width, pixels (the height follows from the two fields of view).
    pub width_px: u32,
}

/// A rigid link of a module.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkDef {
    /// Name, unique in the module.
    pub name: String,
    /// Mass, kg (> 0 when the link has collision shapes).
    pub mass_kg: f64,
    /// Explicit inertia; without it the link is a solid of its first shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inertia: Option<InertiaDef>,
    /// Shapes (collision and visual), in the link frame.
    #[serde(default)]
    pub shapes: Vec<ShapeDef>,
    /// Coulomb friction of this link's surface when it differs from the module's
    /// `contact.friction` (a foot plate that grips, a wheel that slides).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub friction: Option<f64>,
}

/// A rigid joint between two links of a module.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixedJointDef {
    /// Name, unique among the module's joints.
    pub name: String,
    /// Parent link.
    pub parent: String,
    /// Child link.
    pub child: String,
    /// Child frame in the parent link frame: position, m.
    #[serde(default)]
    pub xyz: [f64; 3],
    /// Orientation (fixed-axis roll, pitch, yaw), deg.
    #[serde(default)]
    pub rpy_deg: [f64; 3],
    /// A force/torque sensor measures what the joint transmits (the child's wrench on the
    /// parent, in the joint frame).
    #[serde(default)]
    pub force_sensor: bool,
    /// The ROS topic of that sensor's readings (geometry_msgs/WrenchStamped), relative to the
    /// module's namespace; default `<name>/wrench`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
}

impl FixedJointDef {
    /// The ROS topic of its force sensor's readings, relative to the module's namespace.
    pub fn sensor_topic(&self) -> String {
        self.topic.clone().unwrap_or_else(|| format!("{}/wrench", self.name))
    }

    /// Child frame in the parent link frame.
    pub fn origin(&self) -> Isometry3<f64> {
        pose_deg(self.xyz, self.rpy_deg)
    }
}

/// An inertia tensor about the centre of mass, in a frame at `xyz`/`rpy_deg` of the link.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InertiaDef {
    /// Centre of mass in the link frame, m.
    #[serde(default)]
    pub xyz: [f64; 3],
    /// Orientation of the inertia frame (fixed-axis roll, pitch, yaw), deg.
    #[serde(default)]
    pub rpy_deg: [f64; 3],
    /// Moments and products of inertia, kg·m².
    pub ixx: f64,
    /// Iyy, kg·m².
    pub iyy: f64,
    /// Izz, kg·m².
    pub izz: f64,
    /// Ixy, kg·m².
    #[serde(default)]
    pub ixy: f64,
    /// Ixz, kg·m².
    #[serde(default)]
    pub ixz: f64,
    /// Iyz, kg·m².
    #[serde(default)]
    pub iyz: f64,
}

/// A shape of a link: exactly one of `box`, `cylinder`, `sphere`, with its pose.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShapeDef {
    /// A box of full extents (x, y, z), m.
    #[serde(default, rename = "box", skip_serializing_if = "Option::is_none")]
    pub box_m: Option<[f64; 3]>,
    /// A cylinder along the shape's z axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cylinder: Option<CylinderDef>,
    /// A sphere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sphere: Option<SphereDef>,
    /// Position in the link frame, m.
    #[serde(default)]
    pub xyz: [f64; 3],
    /// Orientation in the link frame (fixed-axis roll, pitch, yaw), deg.
    #[serde(default)]
    pub rpy_deg: [f64; 3],
    /// Whether it collides (false: visual only).
    #[serde(default = "yes")]
    pub collision: bool,
}

fn yes() -> bool {
    true
}

/// A cylinder.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CylinderDef {
    /// Radius, m.
    pub radius: f64,
    /// Length along z, m.
    pub length: f64,
}

/// A sphere.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SphereDef {
    /// Radius, m.
    pub radius: f64,
}

/// A shape's geometry, resolved.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Geometry {
    /// Box of full extents.
    Box([f64; 3]),
    /// Cylinder along z.
    Cylinder {
        /// Radius.
        radius: f64,
        /// Length.
        length: f64,
    },
    /// Sphere.
    Sphere(f64),
}

/// How a joint moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JointType {
    /// Rotation about the axis between limits (limits required).
    Revolute,
    /// Rotation about the axis without limits (a wheel).
    Continuous,
    /// Translation along the axis (not simulated yet; limits required).
    Prismatic,
}

/// A joint between two links of a module.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JointDef {
    /// Name, unique in the module.
    pub name: String,
    /// Revolute, continuous or prismatic.
    #[serde(rename = "type")]
    pub kind: JointType,
    /// Parent link.
    pub parent: String,
    /// Child link.
    pub child: String,
    /// Joint frame in the parent link frame: position, m.
    #[serde(default)]
    pub xyz: [f64; 3],
    /// Joint frame orientation (fixed-axis roll, pitch, yaw), deg.
    #[serde(default)]
    pub rpy_deg: [f64; 3],
    /// Axis in the joint frame (normalised on load).
    pub axis: [f64; 3],
    /// Position limits (revolute: required; continuous: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
    /// What drives it.
    pub actuator: Actuator,
}

/// Position limits of a revolute joint, deg; 0 is the joint's zero pose.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Lower limit, deg.
    pub min_deg: f64,
    /// Upper limit, deg.
    pub max_deg: f64,
}

/// What drives a joint; written `{position: {...}}` or `{velocity: {...}}`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ActuatorDef", into = "ActuatorDef")]
pub enum Actuator {
    /// A position servo: commanded speed w = kp (target − angle), clipped to the speed and
    /// torque limits (the source's servo model).
    Position(PositionServo),
    /// A velocity drive: commanded speed clipped to the speed limit, torque capped (a wheel).
    Velocity(VelocityDrive),
}

/// The written form of [`Actuator`]: exactly one of its keys.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActuatorDef {
    /// A position servo.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<PositionServo>,
    /// A velocity drive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub velocity: Option<VelocityDrive>,
}

impl TryFrom<ActuatorDef> for Actuator {
    type Error = String;
    fn try_from(d: ActuatorDef) -> std::result::Result<Actuator, String> {
        match (d.position, d.velocity) {
            (Some(p), None) => Ok(Actuator::Position(p)),
            (None, Some(v)) => Ok(Actuator::Velocity(v)),
            _ => Err("an actuator is exactly one of `position: {...}` and `velocity: {...}`".into()),
        }
    }
}

impl From<Actuator> for ActuatorDef {
    fn from(a: Actuator) -> ActuatorDef {
        match a {
            Actuator::Position(p) => ActuatorDef {
                position: Some(p),
                velocity: None,
            },
            Actuator::Velocity(v) => ActuatorDef {
                position: None,
                velocity: Some(v),
            },
        }
    }
}

/// Position servo data.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PositionServo {
    /// Maximum torque, N·m.
    pub max_torque_nm: f64,
    /// Maximum angular speed, deg/s.
    pub max_speed_deg_s: f64,
    /// Proportional gain from angle error (rad) to commanded speed (rad/s), 1/s.
    pub kp: f64,
    /// Position tolerance for "target reached", deg.
    pub tolerance_deg: f64,
}

/// Velocity drive data.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VelocityDrive {
    /// Maximum torque, N·m.
    pub max_torque_nm: f64,
    /// Maximum angular speed, deg/s.
    pub max_speed_deg_s: f64,
}

impl Actuator {
    /// Maximum torque, N·m.
    pub fn max_torque_nm(&self) -> f64 {
        match self {
            Actuator::Position(s) => s.max_torque_nm,
            Actuator::Velocity(v) => v.max_torque_nm,
        }
    }

    /// Maximum speed, rad/s.
    pub fn max_speed_rad_s(&self) -> f64 {
        match self {
            Actuator::Position(s) => s.max_speed_deg_s.to_radians(),
            Actuator::Velocity(v) => v.max_speed_deg_s.to_radians(),
        }
    }
}

/// A connection frame of a module.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortDef {
    /// The link it is fixed to.
    pub link: String,
    /// Position in the link frame, m.
    #[serde(default)]
    pub xyz: [f64; 3],
    /// Orientation in the link frame (fixed-axis roll, pitch, yaw), deg; x points out.
    #[serde(default)]
    pub rpy_deg: [f64; 3],
}

/// Contact (friction) properties of the module's surface.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contact {
    /// Coulomb friction coefficient against the ground.
    pub friction: f64,
}

/// A pose from a position (m) and fixed-axis roll, pitch, yaw (deg).
pub fn pose_deg(xyz: [f64; 3], rpy_deg: [f64; 3]) -> Isometry3<f64> {
    Isometry3::from_parts(
        Translation3::new(xyz[0], xyz[1], xyz[2]),
        UnitQuaternion::from_euler_angles(
            rpy_deg[0].to_radians(),
            rpy_deg[1].to_radians(),
            rpy_deg[2].to_radians(),
        ),
    )
}

impl ShapeDef {
    /// The geometry (validated: exactly one is set).
    pub fn geometry(&self) -> Geometry {
        if let Some(b) = self.box_m {
            Geometry::Box(b)
        } else if let Some(c) = self.cylinder {
            Geometry::Cylinder {
                radius: c.radius,
                length: c.length,
            }
        } else {
            Geometry::Sphere(self.sphere.map(|s| s.radius).unwrap_or(0.0))
        }
    }

    /// Pose in the link frame.
    pub fn pose(&self) -> Isometry3<f64> {
        pose_deg(self.xyz, self.rpy_deg)
    }
}

impl Geometry {
    /// Principal moments of inertia of a solid of this shape and mass `m`, shape axes.
    pub fn solid_inertia(&self, m: f64) -> [f64; 3] {
        match *self {
            Geometry::Box([x, y, z]) => [
                m * (y * y + z * z) / 12.0,
                m * (x * x + z * z) / 12.0,
                m * (x * x + y * y) / 12.0,
            ],
            Geometry::Cylinder { radius: r, length: l } => {
                let side = m * (3.0 * r * r + l * l) / 12.0;
                [side, side, m * r * r / 2.0]
            }
            Geometry::Sphere(r) => [2.0 * m * r * r / 5.0; 3],
        }
    }

    /// Axis-aligned bounds (min, max) of the shape placed at `pose`.
    pub fn bounds_in(&self, pose: &Isometry3<f64>) -> (Vector3<f64>, Vector3<f64>) {
        let r: Matrix3<f64> = pose.rotation.to_rotation_matrix().into_inner().abs();
        let half = r * self.bounds();
        let c = pose.translation.vector;
        (c - half, c + half)
    }

    /// Half extents of the shape's bounding box in its own frame.
    fn bounds(&self) -> Vector3<f64> {
        match *self {
            Geometry::Box([x, y, z]) => Vector3::new(x, y, z) / 2.0,
            Geometry::Cylinder { radius, length } => Vector3::new(radius, radius, length / 2.0),
            Geometry::Sphere(r) => Vector3::new(r, r, r),
        }
    }
}

/// Mass properties of a link: mass, inertial frame in the link frame, and the inertia
/// tensor (ixx, ixy, ixz, iyy, iyz, izz) in that frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MassProperties {
    /// Mass, kg.
    pub mass: f64,
    /// Inertial frame (origin at the centre of mass) in the link frame.
    pub frame: Isometry3<f64>,
    /// (ixx, ixy, ixz, iyy, iyz, izz), kg·m².
    pub inertia: [f64; 6],
}

impl LinkDef {
    /// Mass properties: the explicit inertia, or a solid of the first shape, or a point.
    pub fn mass_properties(&self) -> MassProperties {
        if let Some(i) = &self.inertia {
            return MassProperties {
                mass: self.mass_kg,
                frame: pose_deg(i.xyz, i.rpy_deg),
                inertia: [i.ixx, i.ixy, i.ixz, i.iyy, i.iyz, i.izz],
            };
        }
        match self.shapes.first() {
            Some(s) => {
                let [a, b, c] = s.geometry().solid_inertia(self.mass_kg);
                MassProperties {
                    mass: self.mass_kg,
                    frame: s.pose(),
                    inertia: [a, 0.0, 0.0, b, 0.0, c],
                }
            }
            None => MassProperties {
                mass: self.mass_kg,
                frame: Isometry3::identity(),
                inertia: [0.0; 6],
            },
        }
    }
}

impl JointDef {
    /// Joint frame in the parent link frame.
    pub fn origin(&self) -> Isometry3<f64> {
        pose_deg(self.xyz, self.rpy_deg)
    }

    /// Unit axis in the joint frame (validated non-zero).
    pub fn unit_axis(&self) -> Unit<Vector3<f64>> {
        Unit::try_new(Vector3::from(self.axis), 1e-12).unwrap_or(Vector3::x_axis())
    }

    /// Limits in radians, (−∞, ∞) for a continuous joint.
    pub fn limits_rad(&self) -> (f64, f64) {
        match (self.kind, self.limits) {
            (JointType::Continuous, _) | (_, None) => (f64::NEG_INFINITY, f64::INFINITY),
            (_, Some(l)) => (l.min_deg.to_radians(), l.max_deg.to_radians()),
        }
    }
}

impl PortDef {
    /// Port frame in its link frame.
    pub fn pose(&self) -> Isometry3<f64> {
        pose_deg(self.xyz, self.rpy_deg)
    }
}

fn is_identifier(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `name` as a name of letters, digits and `_` (names become file, link and joint names),
/// or an error naming `key`.
pub(crate) fn check_name(key: &str, name: &str) -> Result<()> {
    if is_identifier(name) {
        Ok(())
    } else {
        Err(CoreError::invalid(key, name, "a name of letters, digits and _"))
    }
}

/// [`check_name`], and `name` not yet in `seen` (which it joins).
pub(crate) fn check_new_name<'a>(seen: &mut BTreeSet<&'a str>, key: &str, name: &'a str) -> Result<()> {
    check_name(key, name)?;
    if seen.insert(name) {
        Ok(())
    } else {
        Err(CoreError::invalid(key, name, "a name no other entry uses"))
    }
}

impl ModuleKind {
    /// Index of a link by name.
    pub fn link_index(&self, name: &str) -> Option<usize> {
        self.links.iter().position(|l| l.name == name)
    }

    /// Total mass, kg.
    pub fn mass_kg(&self) -> f64 {
        self.links.iter().map(|l| l.mass_kg).sum()
    }

    /// Pose of every link in the module frame with every joint at zero.
    pub fn link_poses_at_zero(&self) -> Vec<Isometry3<f64>> {
        let mut poses = vec![Isometry3::identity(); self.links.len()];
        let mut placed = vec![false; self.links.len()];
        placed[0] = true;
        // The links form a tree rooted at link 0 (validated); relax until all are placed.
        for _ in 0..self.links.len() {
            let edges = self.joints.iter().map(|j| (&j.parent, &j.child, j.origin()));
            let fixed = self.fixed_joints.iter().map(|j| (&j.parent, &j.child, j.origin()));
            for (parent, child, origin) in edges.chain(fixed) {
                if let (Some(p), Some(c)) = (self.link_index(parent), self.link_index(child)) {
                    if placed[p] && !placed[c] {
                        poses[c] = poses[p] * origin;
                        placed[c] = true;
                    }
                }
            }
        }
        poses
    }

    /// Bounding box of the collision shapes in the module frame at zero joint angles:
    /// (min, max) corners.
    pub fn bounds_at_zero(&self) -> (Vector3<f64>, Vector3<f64>) {
        let poses = self.link_poses_at_zero();
        let mut lo = Vector3::repeat(f64::INFINITY);
        let mut hi = Vector3::repeat(f64::NEG_INFINITY);
        for (link, pose) in self.links.iter().zip(&poses) {
            for s in link.shapes.iter().filter(|s| s.collision) {
                let (a, b) = s.geometry().bounds_in(&(pose * s.pose()));
                lo = lo.inf(&a);
                hi = hi.sup(&b);
            }
        }
        (lo, hi)
    }

    /// Checks one joint (moving or fixed) as an edge of the link tree: a new name, known
    /// parent and child links, a child other than the parent and the root that no other joint
    /// has as child; records the child's parent in `parent_of`.
    fn check_edge<'a>(
        &self,
        key: &str,
        jk: &str,
        (name, parent, child): (&'a str, &str, &str),
        names: &mut BTreeSet<&'a str>,
        parent_of: &mut [Option<usize>],
    ) -> Result<()> {
        check_new_name(names, &format!("{key}.{jk}.name"), name)?;
        let known = || self.links.iter().map(|l| l.name.clone()).collect::<Vec<_>>().join(", ");
        let p = self
            .link_index(parent)
            .ok_or_else(|| CoreError::invalid(format!("{key}.{jk}.parent"), parent, format!("one of: {}", known())))?;
        let c = self
            .link_index(child)
            .ok_or_else(|| CoreError::invalid(format!("{key}.{jk}.child"), child, format!("one of: {}", known())))?;
        if c == 0 || p == c {
            return Err(CoreError::invalid(
                format!("{key}.{jk}.child"),
                child,
                "a link other than the parent and the module's first (root) link",
            ));
        }
        if parent_of[c].is_some() {
            return Err(CoreError::invalid(
                format!("{key}.{jk}.child"),
                child,
                "a link with one parent joint (the links form a tree)",
            ));
        }
        parent_of[c] = Some(p);
        Ok(())
    }

    /// Checks every field; `key` is the dotted prefix used in error messages.
    pub fn validate(&self, key: &str) -> Result<()> {
        self.validate_links(key)?;
        let parent_of = self.validate_joints(key)?;
        // Every link but the root hangs from exactly one joint, and the root reaches them all.
        let mut reached = vec![false; self.links.len()];
        reached[0] = true;
        for _ in 0..self.links.len() {
            for (c, p) in parent_of.iter().enumerate() {
                if p.is_some_and(|p| reached[p]) {
                    reached[c] = true;
                }
            }
        }
        if let Some(lost) = reached.iter().position(|r| !r) {
            return Err(CoreError::invalid(
                format!("{key}.links[{lost}]"),
                &self.links[lost].name,
                "a link joined to the module's first link through joints",
            ));
        }
        if self.ports.is_empty() {
            return Err(CoreError::invalid(format!("{key}.ports"), "{}", "at least one port"));
        }
        for (name, p) in &self.ports {
            if !is_identifier(name) {
                return Err(CoreError::invalid(
                    format!("{key}.ports"),
                    name,
                    "port names of letters, digits and _",
                ));
            }
            if self.link_index(&p.link).is_none() {
                let known = self.links.iter().map(|l| l.name.clone()).collect::<Vec<_>>().join(", ");
                return Err(CoreError::invalid(
                    format!("{key}.ports.{name}.link"),
                    &p.link,
                    format!("one of: {known}"),
                ));
            }
            all_finite(key, format!("ports.{name}.xyz"), &p.xyz)?;
            all_finite(key, format!("ports.{name}.rpy_deg"), &p.rpy_deg)?;
        }
        self.validate_sensors(key)?;
        let mu = self.contact.friction;
        if !(mu.is_finite() && mu >= 0.0) {
            return Err(CoreError::invalid(
                format!("{key}.contact.friction"),
                mu,
                "a finite number >= 0",
            ));
        }
        Ok(())
    }

    /// The sensors: on links of the module, rates and fields of view in range, errors >= 0.
    fn validate_sensors(&self, key: &str) -> Result<()> {
        let on_link = |what: &str, link: &str| -> Result<()> {
            if self.link_index(link).is_some() {
                return Ok(());
            }
            let known = self.links.iter().map(|l| l.name.clone()).collect::<Vec<_>>().join(", ");
            Err(CoreError::invalid(
                format!("{key}.sensors.{what}.link"),
                link,
                format!("one of: {known}"),
            ))
        };
        let at_least_zero = |name: String, v: f64| -> Result<()> {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(CoreError::invalid(format!("{key}.{name}"), v, "a finite number >= 0"))
            }
        };
        if let Some(imu) = &self.sensors.imu {
            on_link("imu", &imu.link)?;
            positive(key, "sensors.imu.rate_hz".into(), imu.rate_hz)?;
            at_least_zero("sensors.imu.gyro_sigma_deg_s".into(), imu.gyro_sigma_deg_s)?;
            at_least_zero("sensors.imu.gyro_bias_sigma_deg_s".into(), imu.gyro_bias_sigma_deg_s)?;
            at_least_zero("sensors.imu.accel_sigma_m_s2".into(), imu.accel_sigma_m_s2)?;
        }
        if let Some(c) = &self.sensors.camera {
            on_link("camera", &c.link)?;
            all_finite(key, "sensors.camera.xyz".into(), &c.xyz)?;
            for (name, v) in [("hfov_deg", c.hfov_deg), ("vfov_deg", c.vfov_deg)] {
                if !(v.is_finite() && v > 0.0 && v < 180.0) {
                    return Err(CoreError::invalid(
                        format!("{key}.sensors.camera.{name}"),
                        v,
                        "an angle in (0, 180) deg",
                    ));
                }
            }
            positive(key, "sensors.camera.range_m".into(), c.range_m)?;
            positive(key, "sensors.camera.rate_hz".into(), c.rate_hz)?;
            if !(16..=8192).contains(&c.width_px) {
                return Err(CoreError::invalid(
                    format!("{key}.sensors.camera.width_px"),
                    c.width_px,
                    "16 … 8192 pixels",
                ));
            }
        }
        Ok(())
    }

    /// The links: names, masses, inertias, friction, shapes.
    fn validate_links(&self, key: &str) -> Result<()> {
        if self.links.is_empty() {
            return Err(CoreError::invalid(format!("{key}.links"), "[]", "at least one link"));
        }
        let mut names = BTreeSet::new();
        for (i, l) in self.links.iter().enumerate() {
            let lk = format!("links[{i}]");
            check_new_name(&mut names, &format!("{key}.{lk}.name"), &l.name)?;
            let has_collision = l.shapes.iter().any(|s| s.collision);
            if has_collision {
                positive(key, format!("{lk}.mass_kg"), l.mass_kg)?;
            } else if !(l.mass_kg.is_finite() && l.mass_kg >= 0.0) {
                return Err(CoreError::invalid(
                    format!("{key}.{lk}.mass_kg"),
                    l.mass_kg,
                    "a finite number >= 0",
                ));
            }
            if l.mass_kg > MAX_LINK_MASS_KG {
                return Err(CoreError::invalid(
                    format!("{key}.{lk}.mass_kg"),
                    l.mass_kg,
                    format!("at most {MAX_LINK_MASS_KG} kg (a module's link; issue 18)"),
                ));
            }
            if let Some(i) = &l.inertia {
                all_finite(key, format!("{lk}.inertia.xyz"), &i.xyz)?;
                all_finite(key, format!("{lk}.inertia.rpy_deg"), &i.rpy_deg)?;
                all_finite(key, format!("{lk}.inertia"), &[i.ixy, i.ixz, i.iyz])?;
                for (n, v) in [("ixx", i.ixx), ("iyy", i.iyy), ("izz", i.izz)] {
                    positive(key, format!("{lk}.inertia.{n}"), v)?;
                }
            } else if l.mass_kg > 0.0 && l.shapes.is_empty() {
                return Err(CoreError::invalid(
                    format!("{key}.{lk}.inertia"),
                    "none",
                    "an inertia (a link with mass and no shape has no solid to take it from)",
                ));
            }
            if let Some(mu) = l.friction {
                if !(mu.is_finite() && mu >= 0.0) {
                    return Err(CoreError::invalid(
                        format!("{key}.{lk}.friction"),
                        mu,
                        "a finite number >= 0",
                    ));
                }
            }
            for (k, s) in l.shapes.iter().enumerate() {
                let sk = format!("{lk}.shapes[{k}]");
                let set = [s.box_m.is_some(), s.cylinder.is_some(), s.sphere.is_some()];
                if set.iter().filter(|x| **x).count() != 1 {
                    return Err(CoreError::invalid(
                        format!("{key}.{sk}"),
                        format!("{} geometries", set.iter().filter(|x| **x).count()),
                        "exactly one of box, cylinder, sphere",
                    ));
                }
                all_finite(key, format!("{sk}.xyz"), &s.xyz)?;
                all_finite(key, format!("{sk}.rpy_deg"), &s.rpy_deg)?;
                match s.geometry() {
                    Geometry::Box(b) => {
                        for (n, v) in ["x", "y", "z"].iter().zip(b) {
                            positive(key, format!("{sk}.box.{n}"), v)?;
                        }
                    }
                    Geometry::Cylinder { radius, length } => {
                        positive(key, format!("{sk}.cylinder.radius"), radius)?;
                        positive(key, format!("{sk}.cylinder.length"), length)?;
                    }
                    Geometry::Sphere(r) => positive(key, format!("{sk}.sphere.radius"), r)?,
                }
            }
        }
        Ok(())
    }

    /// The joints and fixed joints (each edge of the link tree once): the parent of each
    /// link, by index.
    fn validate_joints(&self, key: &str) -> Result<Vec<Option<usize>>> {
        let mut joint_names = BTreeSet::new();
        let mut parent_of: Vec<Option<usize>> = vec![None; self.links.len()];
        for (i, j) in self.joints.iter().enumerate() {
            let jk = format!("joints[{i}]");
            self.check_edge(
                key,
                &jk,
                (&j.name, &j.parent, &j.child),
                &mut joint_names,
                &mut parent_of,
            )?;
            all_finite(key, format!("{jk}.xyz"), &j.xyz)?;
            all_finite(key, format!("{jk}.rpy_deg"), &j.rpy_deg)?;
            all_finite(key, format!("{jk}.axis"), &j.axis)?;
            if Vector3::from(j.axis).norm() < 1e-9 {
                return Err(CoreError::invalid(
                    format!("{key}.{jk}.axis"),
                    "[0, 0, 0]",
                    "a non-zero axis",
                ));
            }
            match (j.kind, j.limits) {
                (JointType::Revolute | JointType::Prismatic, None) => {
                    return Err(CoreError::invalid(
                        format!("{key}.{jk}.limits"),
                        "none",
                        format!("limits (min_deg, max_deg): a {:?} joint needs them", j.kind).to_lowercase(),
                    ));
                }
                (JointType::Continuous, Some(_)) => {
                    return Err(CoreError::invalid(
                        format!("{key}.{jk}.limits"),
                        "given",
                        "no limits: a continuous joint turns freely (make it revolute to limit it)",
                    ));
                }
                (_, Some(l)) => {
                    if !(l.min_deg.is_finite() && l.min_deg >= -180.0 && l.min_deg <= 0.0) {
                        return Err(CoreError::invalid(
                            format!("{key}.{jk}.limits.min_deg"),
                            l.min_deg,
                            "a value in [-180, 0]",
                        ));
                    }
                    if !(l.max_deg.is_finite() && l.max_deg <= 180.0 && l.max_deg >= 0.0 && l.max_deg > l.min_deg) {
                        return Err(CoreError::invalid(
                            format!("{key}.{jk}.limits.max_deg"),
                            l.max_deg,
                            "a value in [0, 180] above limits.min_deg",
                        ));
                    }
                }
                (JointType::Continuous, None) => {}
            }
            match j.actuator {
                Actuator::Position(s) => {
                    positive(key, format!("{jk}.actuator.position.max_torque_nm"), s.max_torque_nm)?;
                    positive(
                        key,
                        format!("{jk}.actuator.position.max_speed_deg_s"),
                        s.max_speed_deg_s,
                    )?;
                    positive(key, format!("{jk}.actuator.position.kp"), s.kp)?;
                    positive(key, format!("{jk}.actuator.position.tolerance_deg"), s.tolerance_deg)?;
                }
                Actuator::Velocity(v) => {
                    positive(key, format!("{jk}.actuator.velocity.max_torque_nm"), v.max_torque_nm)?;
                    positive(
                        key,
                        format!("{jk}.actuator.velocity.max_speed_deg_s"),
                        v.max_speed_deg_s,
                    )?;
                }
            }
        }
        for (i, j) in self.fixed_joints.iter().enumerate() {
            let jk = format!("fixed_joints[{i}]");
            self.check_edge(
                key,
                &jk,
                (&j.name, &j.parent, &j.child),
                &mut joint_names,
                &mut parent_of,
            )?;
            all_finite(key, format!("{jk}.xyz"), &j.xyz)?;
            all_finite(key, format!("{jk}.rpy_deg"), &j.rpy_deg)?;
            if let Some(t) = &j.topic {
                if !j.force_sensor || !t.split('/').all(is_identifier) {
                    return Err(CoreError::invalid(
                        format!("{key}.{jk}.topic"),
                        t,
                        "a relative ROS topic name (identifiers joined by /) on a joint with force_sensor: true",
                    ));
                }
            }
        }
        Ok(parent_of)
    }
}

/// `v`, a finite number > 0, or an error naming `key.name`.
fn positive(key: &str, name: String, v: f64) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(CoreError::invalid(format!("{key}.{name}"), v, "a finite number > 0"))
    }
}

/// Every value of `v` finite, or an error naming `key.name` and the first that is not.
fn all_finite(key: &str, name: String, v: &[f64]) -> Result<()> {
    match v.iter().find(|x| !x.is_finite()) {
        Some(x) => Err(CoreError::invalid(format!("{key}.{name}"), x, "a finite number")),
        None => Ok(()),
    }
}

impl ModuleCatalog {
    /// Parses and validates a catalog from YAML text; `origin` names the source in errors.
    pub fn from_yaml(text: &str, origin: &str) -> Result<Self> {
        let catalog: ModuleCatalog = parse_yaml(text, origin)?;
        catalog.validate().map_err(|e| e.in_file(origin))?;
        Ok(catalog)
    }

    /// Loads and validates a catalog file.
    pub fn load(path: &Path) -> Result<Self> {
        Self::from_yaml(&read_text(path)?, &path.display().to_string())
    }

    /// The shipped catalog (`config/modules.yaml`, compiled in), parsed and validated once
    /// per process: behaviours ask for it on their ticks, and parsing the YAML there was a
    /// quarter of a mission's run time (perf, session 37).
    pub fn builtin() -> Self {
        Self::builtin_ref().clone()
    }

    /// The shipped catalog, shared.
    pub fn builtin_ref() -> &'static Self {
        static BUILTIN: std::sync::OnceLock<ModuleCatalog> = std::sync::OnceLock::new();
        BUILTIN.get_or_init(|| {
            // The shipped file is checked by a test; failing here is a build defect, not user
            // input.
            #[allow(clippy::expect_used)]
            Self::from_yaml(BUILTIN_MODULES_YAML, "config/modules.yaml").expect("shipped config/modules.yaml is valid")
        })
    }

    /// Checks every module kind and the default kind.
    pub fn validate(&self) -> Result<()> {
        if self.modules.is_empty() {
            return Err(CoreError::invalid("modules", "{}", "at least one module kind"));
        }
        for (name, kind) in &self.modules {
            if !is_identifier(name) {
                return Err(CoreError::invalid(
                    "modules",
                    name,
                    "kind names of letters, digits and _",
                ));
            }
            kind.validate(&format!("modules.{name}"))?;
        }
        self.kind(&self.default_kind)
            .map_err(|_| CoreError::invalid("default_kind", &self.default_kind, format!("one of: {}", self.known())))?;
        Ok(())
    }

    /// Looks up a module kind by name.
    pub fn kind(&self, name: &str) -> Result<&ModuleKind> {
        self.modules.get(name).ok_or_else(|| CoreError::UnknownModuleKind {
            kind: name.to_string(),
            known: self.known(),
        })
    }

    /// The default module kind.
    pub fn default_module(&self) -> Result<&ModuleKind> {
        self.kind(&self.default_kind)
    }

    fn known(&self) -> String {
        self.modules.keys().cloned().collect::<Vec<_>>().join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn y1() -> ModuleKind {
        ModuleCatalog::builtin()
            .default_module()
            .unwrap_or_else(|e| panic!("{e}"))
            .clone()
    }

    #[test]
    fn builtin_is_the_y1_module() {
        let c = ModuleCatalog::builtin();
        assert_eq!(c.default_kind, "y1");
        let y1 = y1();
        assert_eq!(y1.mass_kg(), 0.050);
        let (lo, hi) = y1.bounds_at_zero();
        assert!(
            (hi - lo - Vector3::new(0.072, 0.052, 0.052)).norm() < 1e-12,
            "{lo} {hi}"
        );
        assert_eq!(y1.joints.len(), 1);
        let j = &y1.joints[0];
        assert_eq!(j.limits_rad(), ((-90f64).to_radians(), 90f64.to_radians()));
        let Actuator::Position(s) = j.actuator else {
            panic!("the Y1 hinge is a position servo")
        };
        assert_eq!((s.max_torque_nm, s.max_speed_deg_s, s.kp), (0.314, 260.0, 8.6));
        // W_max = 13π/9 rad/s (Table D.2)
        assert!((j.actuator.max_speed_rad_s() - 13.0 * std::f64::consts::PI / 9.0).abs() < 1e-12);
        assert_eq!(y1.ports.keys().cloned().collect::<Vec<_>>(), ["head", "tail"]);
    }

    #[test]
    fn unknown_key_is_named() {
        let text = BUILTIN_MODULES_YAML.replace("kp: 8.6", "kp: 8.6\n            gain_typo: 1");
        let err = ModuleCatalog::from_yaml(&text, "test.yaml").unwrap_err().to_string();
        assert!(err.contains("gain_typo"), "{err}");
        assert!(err.contains("test.yaml"), "{err}");
    }

    #[test]
    fn bad_values_are_named() {
        let text = BUILTIN_MODULES_YAML.replacen("mass_kg: 0.025", "mass_kg: -1", 1);
        let err = ModuleCatalog::from_yaml(&text, "test.yaml").unwrap_err().to_string();
        assert!(err.contains("modules.y1.links[0].mass_kg"), "{err}");
        // Issue 18: a 10¹⁵ kg module used to fall through the floor with exit 0.
        let text = BUILTIN_MODULES_YAML.replacen("mass_kg: 0.025", "mass_kg: 1.0e15", 1);
        let err = ModuleCatalog::from_yaml(&text, "test.yaml").unwrap_err().to_string();
        assert!(
            err.contains("modules.y1.links[0].mass_kg") && err.contains("at most 1000 kg"),
            "{err}"
        );
        let text = BUILTIN_MODULES_YAML.replace("default_kind: y1", "default_kind: y9");
        let err = ModuleCatalog::from_yaml(&text, "test.yaml").unwrap_err().to_string();
        assert!(err.contains("default_kind") && err.contains("y9"), "{err}");
        let text = BUILTIN_MODULES_YAML.replace("max_deg: 90.0", "max_deg: -95.0");
        let err = ModuleCatalog::from_yaml(&text, "test.yaml").unwrap_err().to_string();
        assert!(err.contains("limits.max_deg"), "{err}");
    }

    #[test]
    fn a_revolute_joint_without_limits_is_refused() {
        let text = BUILTIN_MODULES_YAML.replace("limits: {min_deg: -90.0, max_deg: 90.0}", "");
        let err = ModuleCatalog::from_yaml(&text, "test.yaml").unwrap_err().to_string();
        assert!(
            (err.contains("modules.y1.joints[0].limits") || err.contains("modules.cube.joints[0].limits"))
                && err.contains("revolute"),
            "{err}"
        );
    }

    #[test]
    fn unknown_links_and_ports_are_named() {
        let text = BUILTIN_MODULES_YAML.replace("child: front", "child: middle");
        let err = ModuleCatalog::from_yaml(&text, "test.yaml").unwrap_err().to_string();
        assert!(err.contains("joints[0].child") && err.contains("middle"), "{err}");
        let text = BUILTIN_MODULES_YAML.replace("head: {link: front", "head: {link: nose");
        let err = ModuleCatalog::from_yaml(&text, "test.yaml").unwrap_err().to_string();
        assert!(err.contains("ports.head.link") && err.contains("nose"), "{err}");
    }

    #[test]
    fn unknown_kind_lists_known() {
        let err = ModuleCatalog::builtin().kind("tetrahedron").unwrap_err().to_string();
        assert!(err.contains("tetrahedron") && err.contains("y1"), "{err}");
    }

    #[test]
    fn solid_inertias() {
        let b = Geometry::Box([0.036, 0.052, 0.052]).solid_inertia(0.025);
        assert!((b[0] - 0.025 * (2.0 * 0.052 * 0.052) / 12.0).abs() < 1e-15);
        let c = Geometry::Cylinder {
            radius: 0.025,
            length: 0.01,
        }
        .solid_inertia(0.02);
        assert!((c[2] - 0.02 * 0.025 * 0.025 / 2.0).abs() < 1e-15);
    }
}
