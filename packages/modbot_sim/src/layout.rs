//! What both engines simulate, built once from the robots and a scenario: rigid bodies (URDF
//! links merged along fixed joints) with their mass properties and collision shapes at the
//! start pose, the driven joints with their drives and limits, and the world's boxes.
//! Several robots make several independent trees, each rooted at its own body-tree centre.

use std::collections::BTreeMap;

use modbot_core::{FrictionCombine, Scenario};
use modbot_description::model::{JointKind, Shape};
use nalgebra::{Isometry3, Matrix3, Translation3, UnitQuaternion, Vector3};
use rapier3d::parry::query::intersection_test;
use rapier3d::prelude::SharedShape;

use crate::convert::to_pose;
use crate::error::{Result, SimError};
use crate::robot::{Drive, SimRobot};

/// A collision shape of a robot body.
#[derive(Clone)]
pub(crate) struct BodyCollider {
    /// The shape (parry, f32) for queries other than box-on-ground.
    pub shape: SharedShape,
    /// Half extents when the shape is a box (the fast ground path of the native engine).
    pub half_box: Option<Vector3<f64>>,
    /// Pose in the body frame.
    pub local: Isometry3<f64>,
    /// Coulomb friction of its surface (its link's, else its robot's).
    pub friction: f64,
    /// Its URDF link (index in [`Layout::link_body`]).
    pub link: usize,
}

/// One rigid body: URDF links joined by fixed joints.
#[derive(Clone)]
pub(crate) struct BodySpec {
    /// Name of its first link (for messages).
    pub name: String,
    /// World pose at the start.
    pub pose: Isometry3<f64>,
    /// Mass, kg.
    pub mass: f64,
    /// Centre of mass in the body frame.
    pub com: Vector3<f64>,
    /// Inertia about the centre of mass, body axes.
    pub inertia: Matrix3<f64>,
    /// Collision shapes.
    pub colliders: Vec<BodyCollider>,
    /// Index of its robot.
    pub robot: usize,
}

/// A driven joint between two bodies.
#[derive(Debug, Clone)]
pub(crate) struct JointSpec {
    /// Parent body (URDF sense).
    pub parent: usize,
    /// Child body.
    pub child: usize,
    /// Joint frame (x = axis) in the parent body frame.
    pub frame1: Isometry3<f64>,
    /// Joint frame in the child body frame.
    pub frame2: Isometry3<f64>,
    /// Its drive.
    pub drive: Drive,
    /// Lower limit, rad (−∞ for a continuous joint).
    pub lower: f64,
    /// Upper limit, rad.
    pub upper: f64,
}

/// A fixed box of the world.
#[derive(Clone)]
pub(crate) struct ObstacleSpec {
    /// World pose.
    pub pose: Isometry3<f64>,
    /// The box.
    pub shape: SharedShape,
    /// Coulomb friction.
    pub friction: f64,
}

/// Where a robot starts: the position of its tail end (z = 0 puts its lowest point on the
/// ground) and its heading about the vertical.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StartPose {
    /// Position (x, y, z), m.
    pub xyz: [f64; 3],
    /// Heading, rad.
    pub yaw: f64,
}

impl StartPose {
    /// The scenario's start pose (`robot_start`).
    pub fn of_scenario(scenario: &Scenario) -> StartPose {
        StartPose {
            xyz: scenario.robot_start.xyz,
            yaw: scenario.robot_start.yaw_deg.to_radians(),
        }
    }
}

/// Where one robot's parts sit in the layout's lists.
#[derive(Debug, Clone)]
pub(crate) struct RobotSpan {
    /// Robot name.
    pub name: String,
    /// Its driven joints (command order).
    pub joints: std::ops::Range<usize>,
    /// Its URDF links (model order).
    pub links: std::ops::Range<usize>,
}

/// Robots and world, ready for an engine.
#[derive(Clone)]
pub(crate) struct Layout {
    /// Bodies: robot after robot at the start, each robot's first body holding its URDF root
    /// link; after a run-time regrouping ([`Layout::regroup`]) in the order of their first
    /// links.
    pub bodies: Vec<BodySpec>,
    /// Driven joints in command order (robot after robot).
    pub joints: Vec<JointSpec>,
    /// Per URDF link (robot after robot): its body and its pose in that body.
    pub link_body: Vec<(usize, Isometry3<f64>)>,
    /// The robots.
    pub robots: Vec<RobotSpan>,
    /// Box obstacles.
    pub obstacles: Vec<ObstacleSpec>,
    /// Gravity, m/s².
    pub gravity: Vector3<f64>,
    /// Friction of the ground.
    pub ground_friction: f64,
    /// How the world's friction and a surface's combine.
    pub combine: FrictionCombine,
}

fn rotation_x_to(axis: &Vector3<f64>) -> UnitQuaternion<f64> {
    UnitQuaternion::rotation_between(&Vector3::x(), axis)
        .unwrap_or_else(|| UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f64::consts::PI))
}

/// A URDF shape as a parry shape, with the fix of its axis (parry's cylinders and capsules run
/// along y, URDF's along z) and its half extents if it is a box.
fn shape_of(s: &Shape) -> Option<(SharedShape, Isometry3<f64>, Option<Vector3<f64>>)> {
    let z_to_y = Isometry3::from_parts(
        Translation3::identity(),
        UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::FRAC_PI_2),
    );
    match s {
        Shape::Box([x, y, z]) => Some((
            SharedShape::cuboid(*x as f32 / 2.0, *y as f32 / 2.0, *z as f32 / 2.0),
            Isometry3::identity(),
            Some(Vector3::new(x / 2.0, y / 2.0, z / 2.0)),
        )),
        Shape::Sphere(r) => Some((SharedShape::ball(*r as f32), Isometry3::identity(), None)),
        Shape::Cylinder { radius, length } => Some((
            SharedShape::cylinder(*length as f32 / 2.0, *radius as f32),
            z_to_y,
            None,
        )),
        Shape::Capsule { radius, length } => Some((
            SharedShape::capsule_y(*length as f32 / 2.0, *radius as f32),
            z_to_y,
            None,
        )),
        Shape::Mesh(_) => None,
    }
}

/// A rigid joining of two links made at run time (a dock): frame(b) = frame(a) · rel.
#[derive(Debug, Clone)]
pub(crate) struct Weld {
    /// First link (index in [`Layout::link_body`]).
    pub a: usize,
    /// Second link.
    pub b: usize,
    /// Pose of `b`'s frame in `a`'s.
    pub rel: Isometry3<f64>,
}

/// A link placed in a body: its robot, its index in that robot's model, its index in the
/// layout's links and its pose in the body frame.
struct Part<'a> {
    robot: &'a SimRobot,
    link: usize,
    global: usize,
    off: Isometry3<f64>,
}

/// The joint frame (x = axis) of a URDF joint in its child link's frame.
fn axis_frame(j: &modbot_description::model::Joint) -> Isometry3<f64> {
    Isometry3::from_parts(Translation3::identity(), rotation_x_to(&j.axis.into_inner()))
}

/// The rigid body of some links: mass properties from the URDF's, colliders with their
/// surfaces' friction. `robot` names the robot it is counted to.
fn body_of(parts: &[Part<'_>], pose: Isometry3<f64>, robot: usize) -> Result<BodySpec> {
    let first = &parts[0];
    let bad = |what: String| SimError::Robot {
        robot: first.robot.model.name.clone(),
        what,
    };
    let mut mass = 0.0;
    let mut com = Vector3::zeros();
    let mut inertia = Matrix3::zeros();
    let mut masses = Vec::new();
    for p in parts {
        let link = &p.robot.model.links[p.link];
        if link.mass > 0.0 {
            let (c, i) = link.mass_properties_at(&p.off);
            masses.push((link.mass, c, i));
            mass += link.mass;
            com += link.mass * c;
        }
    }
    if mass <= 0.0 {
        return Err(bad(format!(
            "link `{}` has zero mass (missing <inertial>?)",
            first.robot.model.links[first.link].name
        )));
    }
    com /= mass;
    for (m, c, i) in &masses {
        let d = c - com;
        inertia += i + *m * (Matrix3::identity() * d.norm_squared() - d * d.transpose());
    }
    let mut colliders = Vec::new();
    for p in parts {
        let link = &p.robot.model.links[p.link];
        for (origin, shape) in &link.collisions {
            let (shared, fix, half_box) = shape_of(shape)
                .ok_or_else(|| bad(format!("link `{}`: mesh collisions are not simulated", link.name)))?;
            colliders.push(BodyCollider {
                shape: shared,
                half_box,
                local: p.off * origin * fix,
                friction: p
                    .robot
                    .link_friction
                    .get(&link.name)
                    .copied()
                    .unwrap_or(p.robot.friction),
                link: p.global,
            });
        }
    }
    Ok(BodySpec {
        name: first.robot.model.links[first.link].name.clone(),
        pose,
        mass,
        com,
        inertia,
        colliders,
        robot,
    })
}

/// The movable joint that servo `index` (command order) of a robot drives.
fn servo_joint(robot: &SimRobot, index: usize) -> Result<&modbot_description::model::Joint> {
    let name = &robot.joint_names[index];
    robot
        .model
        .joints
        .iter()
        .find(|j| &j.name == name && j.kind != JointKind::Fixed)
        .ok_or_else(|| SimError::Robot {
            robot: robot.model.name.clone(),
            what: format!("servo `{name}` drives no movable joint"),
        })
}

/// Servo `index`'s joint `j` between two bodies, its parent link at `parent_off` in body
/// `parent`, its child link at `child_off` in `child`.
fn joint_spec(
    robot: &SimRobot,
    index: usize,
    j: &modbot_description::model::Joint,
    (parent, parent_off): (usize, Isometry3<f64>),
    (child, child_off): (usize, Isometry3<f64>),
) -> JointSpec {
    let (lower, upper) = match j.limits {
        Some(l) if j.kind == JointKind::Revolute => (l.lower, l.upper),
        _ => (f64::NEG_INFINITY, f64::INFINITY),
    };
    JointSpec {
        parent,
        child,
        frame1: parent_off * j.origin * axis_frame(j),
        frame2: child_off * axis_frame(j),
        drive: robot.drives[index],
        lower,
        upper,
    }
}

/// Whether two placed shapes overlap.
fn overlap(a: &SharedShape, pa: &Isometry3<f64>, b: &SharedShape, pb: &Isometry3<f64>) -> bool {
    intersection_test(&to_pose(pa), a.as_ref(), &to_pose(pb), b.as_ref())
        .map(|r| r.intersecting)
        .unwrap_or(false)
}

impl Layout {
    /// Builds the layout: each robot at its start pose, its lowest point `clearance` above
    /// the start height, its body axis along the start heading; robots may not overlap
    /// each other or an obstacle at the start.
    pub fn new(robots: &[(&SimRobot, StartPose)], scenario: &Scenario, clearance: f64) -> Result<Layout> {
        let mut obstacles = Vec::new();
        let mut obstacle_names = Vec::new();
        for b in scenario.boxes()? {
            let pose = Isometry3::from_parts(
                Translation3::new(b.center[0], b.center[1], b.center[2]),
                UnitQuaternion::from_axis_angle(&Vector3::z_axis(), b.yaw),
            );
            let shape = SharedShape::cuboid(b.size[0] as f32 / 2.0, b.size[1] as f32 / 2.0, b.size[2] as f32 / 2.0);
            obstacles.push(ObstacleSpec {
                pose,
                shape,
                friction: b.friction,
            });
            obstacle_names.push(b.name.clone());
        }
        let mut layout = Layout {
            bodies: Vec::new(),
            joints: Vec::new(),
            link_body: Vec::new(),
            robots: Vec::new(),
            obstacles,
            gravity: Vector3::from(scenario.gravity),
            ground_friction: scenario.ground.friction,
            combine: scenario.ground.friction_combine,
        };
        let mut robot_bodies: Vec<std::ops::Range<usize>> = Vec::new();
        for (index, (robot, start)) in robots.iter().enumerate() {
            let l0 = layout.link_body.len();
            let (bodies, joints, link_body) = Layout::one_robot(robot, start, clearance, l0, index)?;
            for body in &bodies {
                for c in &body.colliders {
                    let world_pose = body.pose * c.local;
                    for (name, o) in obstacle_names.iter().zip(&layout.obstacles) {
                        if overlap(&o.shape, &o.pose, &c.shape, &world_pose) {
                            return Err(SimError::ObstacleOverlap {
                                obstacle: name.clone(),
                                link: robot.model.links[c.link - l0].name.clone(),
                            });
                        }
                    }
                }
            }
            let b0 = layout.bodies.len();
            let span = RobotSpan {
                name: robot.model.name.clone(),
                joints: layout.joints.len()..layout.joints.len() + joints.len(),
                links: l0..l0 + link_body.len(),
            };
            // Robots may not start inside each other.
            for (other, (earlier, range)) in layout.robots.iter().zip(&robot_bodies).enumerate() {
                for a in &layout.bodies[range.clone()] {
                    for b in &bodies {
                        for ca in &a.colliders {
                            for cb in &b.colliders {
                                if overlap(&ca.shape, &(a.pose * ca.local), &cb.shape, &(b.pose * cb.local)) {
                                    return Err(SimError::Robot {
                                        robot: robot.model.name.clone(),
                                        what: format!(
                                            "robot {index}, body `{}`, overlaps body `{}` of robot {other} (`{}`) at the start",
                                            b.name, a.name, earlier.name
                                        ),
                                    });
                                }
                            }
                        }
                    }
                }
            }
            robot_bodies.push(b0..b0 + bodies.len());
            layout.bodies.extend(bodies);
            layout.joints.extend(joints.into_iter().map(|mut j| {
                j.parent += b0;
                j.child += b0;
                j
            }));
            layout
                .link_body
                .extend(link_body.into_iter().map(|(b, off)| (b + b0, off)));
            layout.robots.push(span);
        }
        Ok(layout)
    }

    /// One robot's bodies, joints and link placement (body indices local to it; colliders
    /// name their links from `first_link` on).
    #[allow(clippy::type_complexity)]
    fn one_robot(
        robot: &SimRobot,
        start: &StartPose,
        clearance: f64,
        first_link: usize,
        robot_index: usize,
    ) -> Result<(Vec<BodySpec>, Vec<JointSpec>, Vec<(usize, Isometry3<f64>)>)> {
        let model = &robot.model;
        let bad = |what: String| SimError::Robot {
            robot: model.name.clone(),
            what,
        };

        // Group links into rigid bodies along fixed joints.
        let n = model.links.len();
        let mut link_body: Vec<Option<(usize, Isometry3<f64>)>> = vec![None; n];
        let mut body_links: Vec<Vec<usize>> = vec![vec![model.root]];
        link_body[model.root] = Some((0, Isometry3::identity()));
        for j in &model.joints {
            let (pb, p_off) = link_body[j.parent].ok_or_else(|| bad(format!("joint `{}` out of order", j.name)))?;
            if j.kind == JointKind::Fixed {
                link_body[j.child] = Some((pb, p_off * j.origin));
                body_links[pb].push(j.child);
            } else {
                link_body[j.child] = Some((body_links.len(), Isometry3::identity()));
                body_links.push(vec![j.child]);
            }
        }
        let link_body: Vec<(usize, Isometry3<f64>)> = link_body
            .into_iter()
            .enumerate()
            .map(|(i, lb)| lb.ok_or_else(|| bad(format!("link `{}` is not connected", model.links[i].name))))
            .collect::<Result<_>>()?;

        // Start pose: heading and position from the scenario, lowest point on the ground.
        let base = Isometry3::from_parts(
            Translation3::new(start.xyz[0], start.xyz[1], 0.0),
            UnitQuaternion::from_axis_angle(&Vector3::z_axis(), start.yaw),
        );
        // The joints at their initial angles (the robot file's initial pose, else zero).
        let initial: BTreeMap<String, f64> = robot
            .joint_names
            .iter()
            .cloned()
            .zip(robot.initial.iter().copied())
            .collect();
        let link_poses = model.forward(&initial, &base);
        let mut min_z = f64::INFINITY;
        for (l, pose) in model.links.iter().zip(&link_poses) {
            for (origin, shape) in &l.collisions {
                let (shared, fix, _) = shape_of(shape)
                    .ok_or_else(|| bad(format!("link `{}`: mesh collisions are not simulated", l.name)))?;
                let aabb = shared.compute_aabb(&to_pose(&(pose * origin * fix)));
                min_z = min_z.min(aabb.mins.z as f64);
            }
        }
        if !min_z.is_finite() {
            return Err(bad("no collision geometry".into()));
        }
        let lift = Translation3::new(0.0, 0.0, start.xyz[2] - min_z + clearance);

        let bodies = body_links
            .iter()
            .map(|links| {
                let parts: Vec<Part<'_>> = links
                    .iter()
                    .map(|&l| Part {
                        robot,
                        link: l,
                        global: first_link + l,
                        off: link_body[l].1,
                    })
                    .collect();
                body_of(&parts, lift * link_poses[links[0]], robot_index)
            })
            .collect::<Result<Vec<_>>>()?;

        // Driven joints in command order.
        let joints = (0..robot.joint_names.len())
            .map(|index| {
                let j = servo_joint(robot, index)?;
                Ok(joint_spec(robot, index, j, link_body[j.parent], link_body[j.child]))
            })
            .collect::<Result<Vec<_>>>()?;
        if let Some(j) = model
            .joints
            .iter()
            .find(|j| j.kind != JointKind::Fixed && !robot.joint_names.contains(&j.name))
        {
            return Err(bad(format!("joint `{}` has no servo", j.name)));
        }
        Ok((bodies, joints, link_body))
    }

    /// The layout regrouped at run time: the same robots, links and driven joints, with the
    /// robots' fixed joints in `cut` (robot, model joint index) split and the `welds` joined,
    /// every link at its pose in `link_poses`. Bodies are the links joined rigidly (in the
    /// order of their first links); trees are the bodies joined by driven joints, so a cut
    /// robot becomes several trees and welded robots one.
    pub fn regroup(
        &self,
        robots: &[&SimRobot],
        link_poses: &[Isometry3<f64>],
        cut: &std::collections::BTreeSet<(usize, usize)>,
        welds: &[Weld],
    ) -> Result<Layout> {
        let n = self.link_body.len();
        // Rigid edges between links: (other link, pose of the other in this one's frame).
        let mut rigid: Vec<Vec<(usize, Isometry3<f64>)>> = vec![Vec::new(); n];
        let mut owner = vec![(0, 0); n];
        for (r, (robot, span)) in robots.iter().zip(&self.robots).enumerate() {
            for l in 0..robot.model.links.len() {
                owner[span.links.start + l] = (r, l);
            }
            for (ji, j) in robot.model.joints.iter().enumerate() {
                if j.kind == JointKind::Fixed && !cut.contains(&(r, ji)) {
                    let (a, b) = (span.links.start + j.parent, span.links.start + j.child);
                    rigid[a].push((b, j.origin));
                    rigid[b].push((a, j.origin.inverse()));
                }
            }
        }
        for w in welds {
            rigid[w.a].push((w.b, w.rel));
            rigid[w.b].push((w.a, w.rel.inverse()));
        }
        let mut link_body: Vec<Option<(usize, Isometry3<f64>)>> = vec![None; n];
        let mut bodies = Vec::new();
        for first in 0..n {
            if link_body[first].is_some() {
                continue;
            }
            let b = bodies.len();
            link_body[first] = Some((b, Isometry3::identity()));
            let mut members = vec![first];
            let mut queue = std::collections::VecDeque::from([first]);
            while let Some(l) = queue.pop_front() {
                let off = link_body[l].map(|(_, o)| o).unwrap_or_else(Isometry3::identity);
                for (other, t) in &rigid[l] {
                    if link_body[*other].is_none() {
                        link_body[*other] = Some((b, off * t));
                        members.push(*other);
                        queue.push_back(*other);
                    }
                }
            }
            members.sort_unstable();
            let parts: Vec<Part<'_>> = members
                .iter()
                .map(|&g| Part {
                    robot: robots[owner[g].0],
                    link: owner[g].1,
                    global: g,
                    off: link_body[g].map(|(_, o)| o).unwrap_or_else(Isometry3::identity),
                })
                .collect();
            // The first link is the body frame's.
            bodies.push(body_of(&parts, link_poses[first], owner[first].0)?);
        }
        let link_body: Vec<(usize, Isometry3<f64>)> = link_body
            .into_iter()
            .map(|lb| lb.unwrap_or((0, Isometry3::identity())))
            .collect();
        let mut joints = Vec::with_capacity(self.joints.len());
        for (robot, span) in robots.iter().zip(&self.robots) {
            for index in 0..robot.joint_names.len() {
                let j = servo_joint(robot, index)?;
                let parent = link_body[span.links.start + j.parent];
                let child = link_body[span.links.start + j.child];
                if parent.0 == child.0 {
                    return Err(SimError::Robot {
                        robot: robot.model.name.clone(),
                        what: format!("joint `{}` would join a body to itself (a rigid loop)", j.name),
                    });
                }
                joints.push(joint_spec(robot, index, j, parent, child));
            }
        }
        Ok(Layout {
            bodies,
            joints,
            link_body,
            robots: self.robots.clone(),
            obstacles: self.obstacles.clone(),
            gravity: self.gravity,
            ground_friction: self.ground_friction,
            combine: self.combine,
        })
    }

    /// Body adjacency through the driven joints: per body, the joints at it.
    fn adjacency(&self) -> Vec<Vec<usize>> {
        let mut adjacency: Vec<Vec<usize>> = vec![Vec::new(); self.bodies.len()];
        for (k, j) in self.joints.iter().enumerate() {
            adjacency[j.parent].push(k);
            adjacency[j.child].push(k);
        }
        adjacency
    }

    /// The bodies joined by driven joints, each group sorted, in the order of its first
    /// body: one group per robot at the start.
    pub fn components(&self) -> Vec<Vec<usize>> {
        let adjacency = self.adjacency();
        let mut seen = vec![false; self.bodies.len()];
        let mut groups = Vec::new();
        for first in 0..self.bodies.len() {
            if seen[first] {
                continue;
            }
            seen[first] = true;
            let mut group = vec![first];
            let mut queue = std::collections::VecDeque::from([first]);
            while let Some(v) = queue.pop_front() {
                for &k in &adjacency[v] {
                    let j = &self.joints[k];
                    let w = if j.parent == v { j.child } else { j.parent };
                    if !seen[w] {
                        seen[w] = true;
                        group.push(w);
                        queue.push_back(w);
                    }
                }
            }
            group.sort_unstable();
            groups.push(group);
        }
        groups
    }

    /// Each tree's body-tree centre (the body whose farthest body is nearest): both engines
    /// root a tree there, so a chain's two halves are solved alike (decision 0012).
    pub fn tree_centers(&self) -> Vec<usize> {
        let nb = self.bodies.len();
        let adjacency = self.adjacency();
        let eccentricity = |start: usize| {
            let mut dist = vec![usize::MAX; nb];
            dist[start] = 0;
            let mut queue = std::collections::VecDeque::from([start]);
            let mut far = 0;
            while let Some(v) = queue.pop_front() {
                far = far.max(dist[v]);
                for &k in &adjacency[v] {
                    let j = &self.joints[k];
                    let w = if j.parent == v { j.child } else { j.parent };
                    if dist[w] == usize::MAX {
                        dist[w] = dist[v] + 1;
                        queue.push_back(w);
                    }
                }
            }
            far
        };
        self.components()
            .into_iter()
            .map(|group| {
                group
                    .iter()
                    .copied()
                    .min_by_key(|&v| (eccentricity(v), v))
                    .unwrap_or(group[0])
            })
            .collect()
    }

    /// Per tree: its centre and its joints in breadth-first order from there, each
    /// with `flipped` = its URDF parent is on the far side from the centre. A joint missing
    /// from every list closes a kinematic loop.
    pub fn trees(&self) -> Vec<(usize, Vec<(usize, bool)>)> {
        let adjacency = self.adjacency();
        let mut seen = vec![false; self.bodies.len()];
        self.tree_centers()
            .into_iter()
            .map(|center| {
                let mut order = Vec::new();
                let mut queue = std::collections::VecDeque::from([center]);
                seen[center] = true;
                while let Some(b) = queue.pop_front() {
                    for &k in &adjacency[b] {
                        let j = &self.joints[k];
                        let other = if j.parent == b { j.child } else { j.parent };
                        if !seen[other] {
                            seen[other] = true;
                            order.push((k, j.parent != b));
                            queue.push_back(other);
                        }
                    }
                }
                (center, order)
            })
            .collect()
    }

    /// All trees' joints in order ([`Layout::trees`] concatenated).
    pub fn joint_order(&self) -> Vec<(usize, bool)> {
        self.trees().into_iter().flat_map(|(_, order)| order).collect()
    }
}
