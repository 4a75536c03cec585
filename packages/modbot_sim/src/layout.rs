//! What both engines simulate, built once from the robots and a scenario: rigid bodies (URDF
//! links merged along fixed joints) with their mass properties and collision shapes at the
//! start pose, the driven joints with their drives and limits, and the world's boxes.
//! Several robots make several independent trees, each rooted at its own body-tree centre.

use std::collections::BTreeMap;

use modbot_core::{FrictionCombine, Scenario};
use modbot_description::model::{JointKind, Shape};
use nalgebra::{Isometry3, Matrix3, Point3, Translation3, UnitQuaternion, Vector3};
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
    /// Its bodies; the first holds its URDF root link.
    pub bodies: std::ops::Range<usize>,
    /// Its driven joints (command order).
    pub joints: std::ops::Range<usize>,
    /// Its URDF links (model order).
    pub links: std::ops::Range<usize>,
}

/// Robots and world, ready for an engine.
#[derive(Clone)]
pub(crate) struct Layout {
    /// Bodies, robot after robot; each robot's first body holds its URDF root link.
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
        for (index, (robot, start)) in robots.iter().enumerate() {
            let (bodies, joints, link_body) =
                Layout::one_robot(robot, start, clearance, &layout.obstacles, &obstacle_names, index)?;
            let b0 = layout.bodies.len();
            let span = RobotSpan {
                name: robot.model.name.clone(),
                bodies: b0..b0 + bodies.len(),
                joints: layout.joints.len()..layout.joints.len() + joints.len(),
                links: layout.link_body.len()..layout.link_body.len() + link_body.len(),
            };
            // Robots may not start inside each other.
            for (other, earlier) in layout.robots.iter().enumerate() {
                for a in &layout.bodies[earlier.bodies.clone()] {
                    for b in &bodies {
                        for ca in &a.colliders {
                            for cb in &b.colliders {
                                let hit = intersection_test(
                                    &to_pose(&(a.pose * ca.local)),
                                    ca.shape.as_ref(),
                                    &to_pose(&(b.pose * cb.local)),
                                    cb.shape.as_ref(),
                                )
                                .map(|r| r.intersecting)
                                .unwrap_or(false);
                                if hit {
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
            let l0 = layout.link_body.len();
            layout.bodies.extend(bodies.into_iter().map(|mut b| {
                for c in &mut b.colliders {
                    c.link += l0;
                }
                b
            }));
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

    /// One robot's bodies, joints and link placement (body indices local to it).
    #[allow(clippy::type_complexity)]
    fn one_robot(
        robot: &SimRobot,
        start: &StartPose,
        clearance: f64,
        obstacles: &[ObstacleSpec],
        obstacle_names: &[String],
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
        let mut driven = Vec::new();
        for (ji, j) in model.joints.iter().enumerate() {
            let (pb, p_off) = link_body[j.parent].ok_or_else(|| bad(format!("joint `{}` out of order", j.name)))?;
            match j.kind {
                JointKind::Fixed => {
                    link_body[j.child] = Some((pb, p_off * j.origin));
                    body_links[pb].push(j.child);
                }
                _ => {
                    link_body[j.child] = Some((body_links.len(), Isometry3::identity()));
                    body_links.push(vec![j.child]);
                    driven.push((ji, pb, body_links.len() - 1, p_off * j.origin));
                }
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
        let link_poses = model.forward(&BTreeMap::new(), &base);
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
        let link_poses: Vec<Isometry3<f64>> = link_poses.iter().map(|p| lift * p).collect();

        // Bodies with the URDF's mass properties.
        let mut bodies = Vec::with_capacity(body_links.len());
        for links in &body_links {
            let root_link = links[0];
            let pose = link_poses[root_link];
            let mut mass = 0.0;
            let mut com = Vector3::zeros();
            let mut inertia = Matrix3::zeros();
            let mut parts = Vec::new();
            for &l in links {
                let link = &model.links[l];
                let off = link_body[l].1;
                if link.mass > 0.0 {
                    let frame = off * link.inertial_origin;
                    let i = link.inertia;
                    let local = Matrix3::new(i[0], i[1], i[2], i[1], i[3], i[4], i[2], i[4], i[5]);
                    let r = frame.rotation.to_rotation_matrix();
                    parts.push((link.mass, frame.translation.vector, r * local * r.transpose()));
                    mass += link.mass;
                    com += link.mass * frame.translation.vector;
                }
            }
            if mass <= 0.0 {
                return Err(bad(format!(
                    "link `{}` has zero mass (missing <inertial>?)",
                    model.links[root_link].name
                )));
            }
            com /= mass;
            for (m, c, i) in &parts {
                let d = c - com;
                inertia += i + *m * (Matrix3::identity() * d.norm_squared() - d * d.transpose());
            }
            let mut colliders = Vec::new();
            for &l in links {
                let link = &model.links[l];
                let off = link_body[l].1;
                for (origin, shape) in &link.collisions {
                    let (shared, fix, half_box) = shape_of(shape)
                        .ok_or_else(|| bad(format!("link `{}`: mesh collisions are not simulated", link.name)))?;
                    let local = off * origin * fix;
                    let world_pose = pose * local;
                    for (name, o) in obstacle_names.iter().zip(obstacles) {
                        let hit = intersection_test(
                            &to_pose(&o.pose),
                            o.shape.as_ref(),
                            &to_pose(&world_pose),
                            shared.as_ref(),
                        )
                        .map(|r| r.intersecting)
                        .unwrap_or(false);
                        if hit {
                            return Err(SimError::ObstacleOverlap {
                                obstacle: name.clone(),
                                link: link.name.clone(),
                            });
                        }
                    }
                    colliders.push(BodyCollider {
                        shape: shared,
                        half_box,
                        local,
                        friction: robot.link_friction.get(&link.name).copied().unwrap_or(robot.friction),
                        link: l,
                    });
                }
            }
            bodies.push(BodySpec {
                name: model.links[root_link].name.clone(),
                pose,
                mass,
                com,
                inertia,
                colliders,
                robot: robot_index,
            });
        }

        // Driven joints in command order.
        let mut joints: Vec<Option<JointSpec>> = vec![None; robot.joint_names.len()];
        for (ji, pb, cb, frame_in_parent) in driven {
            let j = &model.joints[ji];
            let align = Isometry3::from_parts(Translation3::identity(), rotation_x_to(&j.axis.into_inner()));
            let (lower, upper) = match j.limits {
                Some(l) if j.kind == JointKind::Revolute => (l.lower, l.upper),
                _ => (f64::NEG_INFINITY, f64::INFINITY),
            };
            let index = robot
                .joint_names
                .iter()
                .position(|n| *n == j.name)
                .ok_or_else(|| bad(format!("joint `{}` has no servo", j.name)))?;
            joints[index] = Some(JointSpec {
                parent: pb,
                child: cb,
                frame1: frame_in_parent * align,
                frame2: align,
                drive: robot.drives[index],
                lower,
                upper,
            });
        }
        let joints: Vec<JointSpec> = joints
            .into_iter()
            .zip(&robot.joint_names)
            .map(|(j, name)| j.ok_or_else(|| bad(format!("servo `{name}` drives no movable joint"))))
            .collect::<Result<_>>()?;

        Ok((bodies, joints, link_body))
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

    /// Each robot's body-tree centre (the body whose farthest body is nearest): both engines
    /// root a robot there, so a chain's two halves are solved alike (decision 0012).
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
        self.robots
            .iter()
            .map(|r| {
                r.bodies
                    .clone()
                    .min_by_key(|&v| (eccentricity(v), v))
                    .unwrap_or(r.bodies.start)
            })
            .collect()
    }

    /// Per robot: its tree centre and its joints in breadth-first order from there, each
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

    /// A point given in a link's frame, as (body, point in that body's frame).
    pub fn point_in_body(&self, link: usize, p: Point3<f64>) -> (usize, Point3<f64>) {
        (self.link_body[link].0, self.link_body[link].1 * p)
    }
}
