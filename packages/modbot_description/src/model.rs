//! A URDF read back into a checked kinematic tree (via urdf-rs), with forward kinematics.
//! The embedded simulator loads robots through this, so any URDF a user brings is checked
//! the same way as the ones generated here.

use std::collections::{BTreeMap, HashMap};

use nalgebra::{Isometry3, Matrix3, Translation3, Unit, UnitQuaternion, Vector3};

use crate::error::{DescriptionError, Result};

/// How a joint moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JointKind {
    /// Rotation with limits.
    Revolute,
    /// Rotation without limits.
    Continuous,
    /// Translation along the axis.
    Prismatic,
    /// Rigid.
    Fixed,
    /// Floating, planar or spherical: not supported by chain kinematics.
    Other,
}

/// Joint limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Lower position limit (rad or m).
    pub lower: f64,
    /// Upper position limit.
    pub upper: f64,
    /// Effort limit (N·m or N).
    pub effort: f64,
    /// Velocity limit (rad/s or m/s).
    pub velocity: f64,
}

/// A collision or visual shape.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// Box with full extents.
    Box([f64; 3]),
    /// Cylinder along z.
    Cylinder {
        /// Radius.
        radius: f64,
        /// Length.
        length: f64,
    },
    /// Capsule along z.
    Capsule {
        /// Radius.
        radius: f64,
        /// Cylinder length.
        length: f64,
    },
    /// Sphere.
    Sphere(f64),
    /// Mesh file.
    Mesh(String),
}

/// A link.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// Name.
    pub name: String,
    /// Mass, kg.
    pub mass: f64,
    /// Inertial frame in the link frame.
    pub inertial_origin: Isometry3<f64>,
    /// Inertia tensor (ixx, ixy, ixz, iyy, iyz, izz) in the inertial frame.
    pub inertia: [f64; 6],
    /// Collision shapes with their poses in the link frame.
    pub collisions: Vec<(Isometry3<f64>, Shape)>,
    /// Visual shapes with their poses in the link frame.
    pub visuals: Vec<(Isometry3<f64>, Shape)>,
}

impl Link {
    /// With the link's frame at `pose` (in some frame F): its centre of mass and its inertia
    /// tensor about that centre, both in F's axes.
    pub fn mass_properties_at(&self, pose: &Isometry3<f64>) -> (Vector3<f64>, Matrix3<f64>) {
        let frame = pose * self.inertial_origin;
        let i = self.inertia;
        let local = Matrix3::new(i[0], i[1], i[2], i[1], i[3], i[4], i[2], i[4], i[5]);
        let r = frame.rotation.to_rotation_matrix();
        (frame.translation.vector, r * local * r.transpose())
    }
}

/// A joint.
#[derive(Debug, Clone, PartialEq)]
pub struct Joint {
    /// Name.
    pub name: String,
    /// Kind.
    pub kind: JointKind,
    /// Parent link index.
    pub parent: usize,
    /// Child link index.
    pub child: usize,
    /// Joint frame in the parent link frame.
    pub origin: Isometry3<f64>,
    /// Unit axis in the joint frame.
    pub axis: Unit<Vector3<f64>>,
    /// Limits (revolute and prismatic joints).
    pub limits: Option<Limits>,
}

/// A checked URDF kinematic tree.
#[derive(Debug, Clone, PartialEq)]
pub struct UrdfModel {
    /// Robot name.
    pub name: String,
    /// Links.
    pub links: Vec<Link>,
    /// Joints, ordered so that a joint's parent link is placed before it (root outward).
    pub joints: Vec<Joint>,
    /// Index of the root link.
    pub root: usize,
}

/// An isometry from a URDF `<origin xyz rpy>` (rpy: fixed-axis roll, pitch, yaw).
pub fn pose(xyz: [f64; 3], rpy: [f64; 3]) -> Isometry3<f64> {
    Isometry3::from_parts(
        Translation3::new(xyz[0], xyz[1], xyz[2]),
        UnitQuaternion::from_euler_angles(rpy[0], rpy[1], rpy[2]),
    )
}

fn urdf_pose(p: &urdf_rs::Pose) -> Isometry3<f64> {
    pose(p.xyz.0, p.rpy.0)
}

fn shape(g: &urdf_rs::Geometry) -> Shape {
    match g {
        urdf_rs::Geometry::Box { size } => Shape::Box(size.0),
        urdf_rs::Geometry::Cylinder { radius, length } => Shape::Cylinder {
            radius: *radius,
            length: *length,
        },
        urdf_rs::Geometry::Capsule { radius, length } => Shape::Capsule {
            radius: *radius,
            length: *length,
        },
        urdf_rs::Geometry::Sphere { radius } => Shape::Sphere(*radius),
        urdf_rs::Geometry::Mesh { filename, .. } => Shape::Mesh(filename.clone()),
    }
}

impl UrdfModel {
    /// Parses and checks a URDF; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<UrdfModel> {
        let robot = urdf_rs::read_from_string(text).map_err(|e| DescriptionError::UrdfParse {
            origin: origin.to_string(),
            message: e.to_string(),
        })?;
        let bad = |what: String| DescriptionError::InvalidUrdf {
            origin: origin.to_string(),
            what,
        };
        let mut index = HashMap::new();
        let mut links = Vec::with_capacity(robot.links.len());
        for l in &robot.links {
            if index.insert(l.name.clone(), links.len()).is_some() {
                return Err(bad(format!("link `{}` is defined twice", l.name)));
            }
            let i = &l.inertial;
            let inertia = [
                i.inertia.ixx,
                i.inertia.ixy,
                i.inertia.ixz,
                i.inertia.iyy,
                i.inertia.iyz,
                i.inertia.izz,
            ];
            if !(i.mass.value.is_finite() && i.mass.value >= 0.0) || inertia.iter().any(|v| !v.is_finite()) {
                return Err(bad(format!(
                    "link `{}`: mass and inertia must be finite, mass ≥ 0",
                    l.name
                )));
            }
            links.push(Link {
                name: l.name.clone(),
                mass: i.mass.value,
                inertial_origin: urdf_pose(&i.origin),
                inertia,
                collisions: l
                    .collision
                    .iter()
                    .map(|c| (urdf_pose(&c.origin), shape(&c.geometry)))
                    .collect(),
                visuals: l
                    .visual
                    .iter()
                    .map(|v| (urdf_pose(&v.origin), shape(&v.geometry)))
                    .collect(),
            });
        }
        if links.is_empty() {
            return Err(bad("no links".into()));
        }
        let mut joints = Vec::with_capacity(robot.joints.len());
        let mut parent_of: Vec<Option<usize>> = vec![None; links.len()];
        let mut names = std::collections::HashSet::new();
        for j in &robot.joints {
            if !names.insert(j.name.clone()) {
                return Err(bad(format!("joint `{}` is defined twice", j.name)));
            }
            let find = |l: &str, role: &str| {
                index
                    .get(l)
                    .copied()
                    .ok_or_else(|| bad(format!("joint `{}`: {role} link `{l}` does not exist", j.name)))
            };
            let (parent, child) = (find(&j.parent.link, "parent")?, find(&j.child.link, "child")?);
            if let Some(prev) = parent_of[child] {
                return Err(bad(format!(
                    "link `{}` has two parent joints (`{}` and `{}`)",
                    j.child.link, robot.joints[prev].name, j.name
                )));
            }
            parent_of[child] = Some(joints.len());
            let kind = match j.joint_type {
                urdf_rs::JointType::Revolute => JointKind::Revolute,
                urdf_rs::JointType::Continuous => JointKind::Continuous,
                urdf_rs::JointType::Prismatic => JointKind::Prismatic,
                urdf_rs::JointType::Fixed => JointKind::Fixed,
                _ => JointKind::Other,
            };
            let axis = Vector3::from(j.axis.xyz.0);
            let axis = if kind == JointKind::Fixed {
                Vector3::x_axis()
            } else {
                Unit::try_new(axis, 1e-9).ok_or_else(|| bad(format!("joint `{}`: zero axis", j.name)))?
            };
            let limits = match kind {
                JointKind::Revolute | JointKind::Prismatic => {
                    let l = &j.limit;
                    if !(l.lower.is_finite() && l.upper.is_finite() && l.lower <= l.upper) {
                        return Err(bad(format!(
                            "joint `{}`: limits lower = {}, upper = {} (need finite lower ≤ upper)",
                            j.name, l.lower, l.upper
                        )));
                    }
                    Some(Limits {
                        lower: l.lower,
                        upper: l.upper,
                        effort: l.effort,
                        velocity: l.velocity,
                    })
                }
                _ => None,
            };
            joints.push(Joint {
                name: j.name.clone(),
                kind,
                parent,
                child,
                origin: urdf_pose(&j.origin),
                axis,
                limits,
            });
        }
        let roots: Vec<usize> = (0..links.len()).filter(|&i| parent_of[i].is_none()).collect();
        let root = match roots.as_slice() {
            [r] => *r,
            [] => return Err(bad("the joints form a cycle: every link has a parent".into())),
            many => {
                let names: Vec<_> = many.iter().map(|&i| links[i].name.as_str()).collect();
                return Err(bad(format!(
                    "more than one root link (not connected): {}",
                    names.join(", ")
                )));
            }
        };
        // Order joints root outward; links left unplaced sit on a cycle.
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); links.len()];
        for (ji, j) in joints.iter().enumerate() {
            children[j.parent].push(ji);
        }
        let mut order = Vec::with_capacity(joints.len());
        let mut stack = vec![root];
        let mut placed = vec![false; links.len()];
        placed[root] = true;
        while let Some(l) = stack.pop() {
            for &ji in &children[l] {
                let c = joints[ji].child;
                if !placed[c] {
                    placed[c] = true;
                    order.push(ji);
                    stack.push(c);
                }
            }
        }
        if let Some(lost) = placed.iter().position(|p| !p) {
            return Err(bad(format!(
                "the joints form a cycle through link `{}`",
                links[lost].name
            )));
        }
        let joints = order.into_iter().map(|i| joints[i].clone()).collect();
        Ok(UrdfModel {
            name: robot.name,
            links,
            joints,
            root,
        })
    }

    /// Index of a link by name.
    pub fn link(&self, name: &str) -> Option<usize> {
        self.links.iter().position(|l| l.name == name)
    }

    /// Total mass, kg.
    pub fn total_mass(&self) -> f64 {
        self.links.iter().map(|l| l.mass).sum()
    }

    /// The movable joints (revolute, continuous, prismatic) in tree order.
    pub fn movable_joints(&self) -> impl Iterator<Item = &Joint> {
        self.joints.iter().filter(|j| {
            matches!(
                j.kind,
                JointKind::Revolute | JointKind::Continuous | JointKind::Prismatic
            )
        })
    }

    /// Pose of every link (by index) with the root at `base` and the named joint positions
    /// (missing joints at 0).
    pub fn forward(&self, positions: &BTreeMap<String, f64>, base: &Isometry3<f64>) -> Vec<Isometry3<f64>> {
        let mut poses = vec![Isometry3::identity(); self.links.len()];
        poses[self.root] = *base;
        for j in &self.joints {
            let q = positions.get(&j.name).copied().unwrap_or(0.0);
            let motion = match j.kind {
                JointKind::Revolute | JointKind::Continuous => {
                    Isometry3::from_parts(Translation3::identity(), UnitQuaternion::from_axis_angle(&j.axis, q))
                }
                JointKind::Prismatic => {
                    Isometry3::from_parts(Translation3::from(j.axis.into_inner() * q), UnitQuaternion::identity())
                }
                JointKind::Fixed | JointKind::Other => Isometry3::identity(),
            };
            poses[j.child] = poses[j.parent] * j.origin * motion;
        }
        poses
    }
}
