//! The physics world: the robot as a rapier3d multibody (reduced coordinates) with servo
//! motors, the ground and the scenario's obstacles.

use std::collections::BTreeMap;

use modbot_core::Scenario;
use modbot_description::model::{JointKind, Shape};
use nalgebra::{Isometry3, Matrix3, Point3, Translation3, UnitQuaternion, Vector3};
use rapier3d::parry::query::intersection_test;
use rapier3d::prelude::*;

use crate::convert::{from_pose, from_vec, to_pose, to_vec};
use crate::error::{Result, SimError};
use crate::robot::{Servo, SimRobot};

/// Numerical settings of the embedded simulator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimSettings {
    /// Physics step, s (default: the scenario's `physics.step_s`).
    pub step_s: f64,
    /// Solver iterations per step.
    pub solver_iterations: usize,
    /// Gauss-Seidel sweeps inside each solver iteration.
    pub pgs_iterations: usize,
    /// Damping coefficient of the velocity motor that realises the servo, N·m·s/rad.
    pub motor_damping: f64,
    /// Reflected rotor inertia added to each driven joint, kg·m².
    pub armature: f64,
    /// Viscous damping of each driven joint, N·m·s/rad.
    pub joint_damping: f64,
    /// Gap left under the robot at the start, m.
    pub start_clearance_m: f64,
}

impl SimSettings {
    /// Defaults for a scenario (decision record 0012).
    pub fn for_scenario(s: &Scenario) -> SimSettings {
        SimSettings {
            step_s: s.physics.step_s,
            solver_iterations: 8,
            pgs_iterations: 4,
            motor_damping: 5.0,
            armature: 2e-5,
            joint_damping: 0.0,
            start_clearance_m: 5e-4,
        }
    }

    fn validate(&self) -> Result<()> {
        let bad = |key: &str, v: f64, expected: &str| SimError::Settings {
            key: key.into(),
            value: v.to_string(),
            expected: expected.into(),
        };
        if !(self.step_s.is_finite() && self.step_s > 0.0 && self.step_s <= 0.02) {
            return Err(bad("step_s", self.step_s, "a physics step in (0, 0.02] s"));
        }
        if self.solver_iterations == 0 || self.solver_iterations > 256 {
            return Err(bad("solver_iterations", self.solver_iterations as f64, "1 to 256"));
        }
        if self.pgs_iterations == 0 || self.pgs_iterations > 64 {
            return Err(bad("pgs_iterations", self.pgs_iterations as f64, "1 to 64"));
        }
        if !(self.motor_damping.is_finite() && self.motor_damping > 0.0) {
            return Err(bad("motor_damping", self.motor_damping, "a finite number > 0"));
        }
        if !(self.joint_damping.is_finite() && self.joint_damping >= 0.0) {
            return Err(bad("joint_damping", self.joint_damping, "a finite number >= 0"));
        }
        if !(self.armature.is_finite() && self.armature >= 0.0) {
            return Err(bad("armature", self.armature, "a finite number >= 0"));
        }
        if !(self.start_clearance_m.is_finite() && self.start_clearance_m >= 0.0) {
            return Err(bad("start_clearance_m", self.start_clearance_m, "a finite number >= 0"));
        }
        Ok(())
    }
}

/// One rigid body: URDF links joined by fixed joints.
#[derive(Debug, Clone)]
struct Body {
    handle: RigidBodyHandle,
    /// Name of its first link (for messages).
    name: String,
}

/// A driven joint.
#[derive(Debug, Clone)]
struct DrivenJoint {
    handle: MultibodyJointHandle,
    parent: usize,
    child: usize,
    /// Joint frame (x = axis) in the parent body frame.
    frame1: Isometry3<f64>,
    /// Joint frame in the child body frame.
    frame2: Isometry3<f64>,
    servo: Servo,
    target: f64,
    lower: f64,
    upper: f64,
    /// Inserted child-to-parent (the multibody root is on the child's side).
    flipped: bool,
}

/// The simulator: one robot in one scenario.
pub struct Simulator {
    world: PhysicsWorld,
    settings: SimSettings,
    bodies: Vec<Body>,
    /// Per URDF link: its body and its pose in that body.
    link_body: Vec<(usize, Isometry3<f64>)>,
    link_mass: Vec<f64>,
    link_com: Vec<Point3<f64>>,
    joints: Vec<DrivenJoint>,
    joint_names: Vec<String>,
    total_mass: f64,
    /// Tail point (root link origin) and head point (far end of the last link), link-local.
    tail: (usize, Point3<f64>),
    head: (usize, Point3<f64>),
    steps: u64,
    time: f64,
}

fn rotation_x_to(axis: &Vector3<f64>) -> UnitQuaternion<f64> {
    UnitQuaternion::rotation_between(&Vector3::x(), axis)
        .unwrap_or_else(|| UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f64::consts::PI))
}

fn shape_of(s: &Shape) -> Option<(SharedShape, Isometry3<f64>)> {
    // rapier's cylinders and capsules run along y; URDF's along z.
    let z_to_y = Isometry3::from_parts(
        Translation3::identity(),
        UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::FRAC_PI_2),
    );
    match s {
        Shape::Box([x, y, z]) => Some((
            SharedShape::cuboid(*x as f32 / 2.0, *y as f32 / 2.0, *z as f32 / 2.0),
            Isometry3::identity(),
        )),
        Shape::Sphere(r) => Some((SharedShape::ball(*r as f32), Isometry3::identity())),
        Shape::Cylinder { radius, length } => {
            Some((SharedShape::cylinder(*length as f32 / 2.0, *radius as f32), z_to_y))
        }
        Shape::Capsule { radius, length } => {
            Some((SharedShape::capsule_y(*length as f32 / 2.0, *radius as f32), z_to_y))
        }
        Shape::Mesh(_) => None,
    }
}

/// The centre of a tree of `n` nodes given as edges: the node whose farthest node is nearest.
fn tree_center(n: usize, edges: &[(usize, usize)]) -> usize {
    let mut adj = vec![Vec::new(); n];
    for &(a, b) in edges {
        adj[a].push(b);
        adj[b].push(a);
    }
    let eccentricity = |start: usize| {
        let mut dist = vec![usize::MAX; n];
        dist[start] = 0;
        let mut queue = std::collections::VecDeque::from([start]);
        let mut far = 0;
        while let Some(v) = queue.pop_front() {
            far = far.max(dist[v]);
            for &w in &adj[v] {
                if dist[w] == usize::MAX {
                    dist[w] = dist[v] + 1;
                    queue.push_back(w);
                }
            }
        }
        far
    };
    (0..n).min_by_key(|&v| (eccentricity(v), v)).unwrap_or(0)
}

/// A collider with Coulomb friction (`min` combine, as Gazebo/ODE), no restitution, and
/// contacts only between the robot and the world (decision record 0012).
fn collider(shape: SharedShape, friction: f64, robot: bool) -> ColliderBuilder {
    let (member, filter) = if robot {
        (ROBOT_GROUP, WORLD_GROUP)
    } else {
        (WORLD_GROUP, ROBOT_GROUP)
    };
    ColliderBuilder::new(shape)
        .friction(friction as f32)
        .friction_combine_rule(CoefficientCombineRule::Min)
        .restitution(0.0)
        .collision_groups(InteractionGroups::new(member, filter, InteractionTestMode::And))
}

const ROBOT_GROUP: Group = Group::GROUP_1;
const WORLD_GROUP: Group = Group::GROUP_2;

impl Simulator {
    /// Builds the world: the robot at the scenario's start pose, resting on the ground with
    /// its body axis along the start heading, the ground and the obstacles.
    pub fn new(robot: &SimRobot, scenario: &Scenario, settings: SimSettings) -> Result<Simulator> {
        settings.validate()?;
        scenario.validate()?;
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
        let start = &scenario.robot_start;
        let base = Isometry3::from_parts(
            Translation3::new(start.xyz[0], start.xyz[1], 0.0),
            UnitQuaternion::from_axis_angle(&Vector3::z_axis(), start.yaw_deg.to_radians()),
        );
        let link_poses = model.forward(&BTreeMap::new(), &base);
        let mut min_z = f64::INFINITY;
        for (l, pose) in model.links.iter().zip(&link_poses) {
            for (origin, shape) in &l.collisions {
                let (shared, fix) = shape_of(shape)
                    .ok_or_else(|| bad(format!("link `{}`: mesh collisions are not simulated", l.name)))?;
                let aabb = shared.compute_aabb(&to_pose(&(pose * origin * fix)));
                min_z = min_z.min(aabb.mins.z as f64);
            }
        }
        if !min_z.is_finite() {
            return Err(bad("no collision geometry".into()));
        }
        let lift = Translation3::new(0.0, 0.0, start.xyz[2] - min_z + settings.start_clearance_m);
        let link_poses: Vec<Isometry3<f64>> = link_poses.iter().map(|p| lift * p).collect();

        let mut world = PhysicsWorld::new();
        world.gravity = to_vec(&Vector3::from(scenario.gravity));
        world.integration_parameters.dt = settings.step_s as f32;
        world.integration_parameters.num_solver_iterations = settings.solver_iterations;
        world.integration_parameters.num_internal_pgs_iterations = settings.pgs_iterations;
        world.integration_parameters.length_unit = 0.1;

        // Ground and obstacles.
        let ground = world.insert_body(RigidBodyBuilder::fixed());
        let ground_collider = collider(SharedShape::halfspace(Vector::Z), scenario.ground.friction, false);
        world.insert_collider(ground_collider, Some(ground));
        let boxes = scenario.boxes()?;
        let mut obstacle_shapes = Vec::new();
        for b in &boxes {
            let pose = Isometry3::from_parts(
                Translation3::new(b.center[0], b.center[1], b.center[2]),
                UnitQuaternion::from_axis_angle(&Vector3::z_axis(), b.yaw),
            );
            let shape = SharedShape::cuboid(b.size[0] as f32 / 2.0, b.size[1] as f32 / 2.0, b.size[2] as f32 / 2.0);
            let h = world.insert_body(RigidBodyBuilder::fixed().pose(to_pose(&pose)));
            let c = collider(shape.clone(), b.friction, false);
            world.insert_collider(c, Some(h));
            obstacle_shapes.push((b.name.clone(), pose, shape));
        }

        // Robot bodies with the URDF's mass properties; colliders carry no density.
        let mut bodies = Vec::with_capacity(body_links.len());
        let mut total_mass = 0.0;
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
            total_mass += mass;
            let props = MassProperties::with_inertia_matrix(
                to_vec(&com),
                mass as f32,
                Matrix::from_cols_array(&[
                    inertia[(0, 0)] as f32,
                    inertia[(1, 0)] as f32,
                    inertia[(2, 0)] as f32,
                    inertia[(0, 1)] as f32,
                    inertia[(1, 1)] as f32,
                    inertia[(2, 1)] as f32,
                    inertia[(0, 2)] as f32,
                    inertia[(1, 2)] as f32,
                    inertia[(2, 2)] as f32,
                ]),
            );
            let handle = world.insert_body(
                RigidBodyBuilder::dynamic()
                    .pose(to_pose(&pose))
                    .additional_mass_properties(props)
                    .can_sleep(false),
            );
            for &l in links {
                let link = &model.links[l];
                let off = link_body[l].1;
                for (origin, shape) in &link.collisions {
                    let (shared, fix) = shape_of(shape)
                        .ok_or_else(|| bad(format!("link `{}`: mesh collisions are not simulated", link.name)))?;
                    let local = off * origin * fix;
                    let world_pose = pose * local;
                    for (name, opose, oshape) in &obstacle_shapes {
                        let hit =
                            intersection_test(&to_pose(opose), oshape.as_ref(), &to_pose(&world_pose), shared.as_ref())
                                .map(|r| r.intersecting)
                                .unwrap_or(false);
                        if hit {
                            return Err(SimError::ObstacleOverlap {
                                obstacle: name.clone(),
                                link: link.name.clone(),
                            });
                        }
                    }
                    let c = collider(shared, robot.friction, true)
                        .position(to_pose(&local))
                        .density(0.0);
                    world.insert_collider(c, Some(handle));
                }
            }
            bodies.push(Body {
                handle,
                name: model.links[root_link].name.clone(),
            });
        }

        // Driven joints as multibody joints with a velocity motor and limits. The multibody is
        // rooted at the centre of the body tree, so a chain's two halves are solved alike
        // (rooted at the tail, PGS biases symmetric gaits towards the head; decision 0012).
        let nb = body_links.len();
        let mut adjacency: Vec<Vec<usize>> = vec![Vec::new(); nb];
        for (k, (_, pb, cb, _)) in driven.iter().enumerate() {
            adjacency[*pb].push(k);
            adjacency[*cb].push(k);
        }
        let center = tree_center(nb, &driven.iter().map(|(_, p, c, _)| (*p, *c)).collect::<Vec<_>>());
        let mut order = Vec::with_capacity(driven.len());
        let mut seen = vec![false; nb];
        let mut queue = std::collections::VecDeque::from([center]);
        seen[center] = true;
        while let Some(b) = queue.pop_front() {
            for &k in &adjacency[b] {
                let (_, pb, cb, _) = driven[k];
                let other = if pb == b { cb } else { pb };
                if !seen[other] {
                    seen[other] = true;
                    order.push((k, pb != b));
                    queue.push_back(other);
                }
            }
        }
        let mut joints = Vec::new();
        for (k, flipped) in order {
            let (ji, pb, cb, frame_in_parent) = driven[k];
            let j = &model.joints[ji];
            let align = Isometry3::from_parts(Translation3::identity(), rotation_x_to(&j.axis.into_inner()));
            let frame1 = frame_in_parent * align;
            let frame2 = align;
            let (lower, upper) = match j.limits {
                Some(l) if j.kind == JointKind::Revolute => (l.lower, l.upper),
                _ => (f64::NEG_INFINITY, f64::INFINITY),
            };
            let index = robot
                .joint_names
                .iter()
                .position(|n| *n == j.name)
                .ok_or_else(|| bad(format!("joint `{}` has no servo", j.name)))?;
            let servo = robot.servos[index];
            let mut builder = GenericJointBuilder::new(JointAxesMask::LOCKED_REVOLUTE_AXES)
                .local_frame1(to_pose(&frame1))
                .local_frame2(to_pose(&frame2))
                .contacts_enabled(false)
                .motor_model(JointAxis::AngX, MotorModel::ForceBased)
                .motor_velocity(JointAxis::AngX, 0.0, settings.motor_damping as f32)
                .motor_max_force(JointAxis::AngX, servo.max_torque as f32);
            if lower.is_finite() {
                builder = builder.limits(JointAxis::AngX, [lower as f32, upper as f32]);
            }
            let mut data = builder.build();
            let (b1, b2) = if flipped {
                data.flip();
                (cb, pb)
            } else {
                (pb, cb)
            };
            let handle = world
                .multibody_joints
                .insert(bodies[b1].handle, bodies[b2].handle, data, true)
                .ok_or_else(|| bad(format!("joint `{}` closes a kinematic loop", j.name)))?;
            joints.push((
                index,
                DrivenJoint {
                    handle,
                    parent: pb,
                    child: cb,
                    frame1,
                    frame2,
                    servo,
                    target: 0.0,
                    lower,
                    upper,
                    flipped,
                },
            ));
        }
        joints.sort_by_key(|(i, _)| *i);
        if joints.len() != robot.joint_names.len() {
            return Err(bad(format!(
                "{} servos for {} movable joints",
                robot.joint_names.len(),
                joints.len()
            )));
        }
        let joints: Vec<DrivenJoint> = joints.into_iter().map(|(_, j)| j).collect();
        // rapier gives every angular multibody DOF a default damping of 0.1 N·m·s/rad, the
        // free root's included: a drag on the whole robot's rotation and, on a 0.314 N·m
        // servo, a cap of 3.14 rad/s. The source's model has neither; the joints get the
        // configured damping (0 by default) and the root none (decision 0012).
        if let Some(j) = joints.first()
            && let Some((mb, _)) = world.multibody_joints.get_mut(j.handle)
        {
            mb.damping_mut().fill(0.0);
        }
        for j in &joints {
            if let Some((mb, link)) = world.multibody_joints.get_mut(j.handle)
                && let Some(dof) = mb.link(link).map(|l| l.assembly_id())
            {
                if dof < mb.damping().len() {
                    mb.damping_mut()[dof] = settings.joint_damping as f32;
                }
                if dof < mb.armature().len() {
                    mb.armature_mut()[dof] = settings.armature as f32;
                }
            }
        }

        // Tail: the root link's origin. Head: the far end (+x face) of the last link's first box.
        let last = model.joints.last().map(|j| j.child).unwrap_or(model.root);
        let head_local = model.links[last]
            .collisions
            .iter()
            .find_map(|(o, s)| match s {
                Shape::Box([x, _, _]) => Some(o * Point3::new(x / 2.0, 0.0, 0.0)),
                _ => None,
            })
            .unwrap_or_else(Point3::origin);
        let to_body = |l: usize, p: Point3<f64>| (link_body[l].0, link_body[l].1 * p);

        Ok(Simulator {
            world,
            settings,
            link_mass: model.links.iter().map(|l| l.mass).collect(),
            link_com: model
                .links
                .iter()
                .zip(&link_body)
                .map(|(l, (_, off))| off * (l.inertial_origin * Point3::origin()))
                .collect(),
            tail: to_body(model.root, Point3::origin()),
            head: to_body(last, head_local),
            link_body,
            bodies,
            joints,
            joint_names: robot.joint_names.clone(),
            total_mass,
            steps: 0,
            time: 0.0,
        })
    }

    /// Simulated time, s.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Physics steps taken.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The physics step, s.
    pub fn step_size(&self) -> f64 {
        self.settings.step_s
    }

    /// Names of the driven joints, in command order.
    pub fn joint_names(&self) -> &[String] {
        &self.joint_names
    }

    /// Sets every joint target (rad, command order). Targets beyond a joint's limits are
    /// clamped to them, as a servo does.
    pub fn set_targets(&mut self, targets: &[f64]) -> Result<()> {
        if targets.len() != self.joints.len() {
            return Err(SimError::JointCount {
                expected: self.joints.len(),
                got: targets.len(),
            });
        }
        if let Some(i) = targets.iter().position(|t| !t.is_finite()) {
            return Err(SimError::NotFinite {
                joint: self.joint_names[i].clone(),
                value: targets[i],
            });
        }
        for (j, t) in self.joints.iter_mut().zip(targets) {
            j.target = t.clamp(j.lower, j.upper);
        }
        Ok(())
    }

    /// Sets one joint's target by name.
    pub fn set_target(&mut self, joint: &str, target: f64) -> Result<()> {
        let i = self
            .joint_names
            .iter()
            .position(|n| n == joint)
            .ok_or_else(|| SimError::UnknownJoint {
                joint: joint.to_string(),
                known: self.joint_names.join(", "),
            })?;
        if !target.is_finite() {
            return Err(SimError::NotFinite {
                joint: joint.to_string(),
                value: target,
            });
        }
        let j = &mut self.joints[i];
        j.target = target.clamp(j.lower, j.upper);
        Ok(())
    }

    fn body_pose(&self, b: usize) -> Isometry3<f64> {
        from_pose(self.world.bodies[self.bodies[b].handle].position())
    }

    /// Current joint angles, rad (command order).
    pub fn joint_positions(&self) -> Vec<f64> {
        self.joints.iter().map(|j| self.angle(j)).collect()
    }

    fn angle(&self, j: &DrivenJoint) -> f64 {
        let a = self.body_pose(j.parent) * j.frame1;
        let b = self.body_pose(j.child) * j.frame2;
        let rel = a.rotation.inverse() * b.rotation;
        let q = rel.quaternion();
        2.0 * q.i.atan2(q.w)
    }

    /// Advances one physics step: servo commands from the current angles, then physics.
    /// A NaN or a runaway velocity ends the simulation with [`SimError::Diverged`].
    pub fn step(&mut self) -> Result<()> {
        for k in 0..self.joints.len() {
            let j = &self.joints[k];
            let angle = self.angle(j);
            let w = (j.servo.kp * (j.target - angle)).clamp(-j.servo.max_speed, j.servo.max_speed);
            let w = if j.flipped { -w } else { w };
            let (handle, damping) = (j.handle, self.settings.motor_damping);
            if let Some((mb, link)) = self.world.multibody_joints.get_mut(handle)
                && let Some(l) = mb.link_mut(link)
            {
                l.joint
                    .data
                    .set_motor_velocity(JointAxis::AngX, w as f32, damping as f32);
            }
        }
        self.world.step();
        self.steps += 1;
        self.time = self.steps as f64 * self.settings.step_s;
        self.check()
    }

    fn check(&self) -> Result<()> {
        for (bi, b) in self.bodies.iter().enumerate() {
            let rb = &self.world.bodies[b.handle];
            let p = from_vec(rb.translation());
            let v = from_vec(rb.linvel());
            let w = from_vec(rb.angvel());
            let what = if !(p.iter().all(|x| x.is_finite())
                && v.iter().all(|x| x.is_finite())
                && w.iter().all(|x| x.is_finite()))
            {
                Some("position or velocity is not a number".to_string())
            } else if v.norm() > 50.0 {
                Some(format!("runaway linear speed {:.1} m/s", v.norm()))
            } else if w.norm() > 2000.0 {
                Some(format!("runaway angular speed {:.0} rad/s", w.norm()))
            } else if p.norm() > 1e4 {
                Some(format!("position {:.0} m from the origin", p.norm()))
            } else {
                None
            };
            if let Some(what) = what {
                let _ = bi;
                return Err(SimError::Diverged {
                    step: self.steps,
                    time: self.time,
                    link: b.name.clone(),
                    what,
                });
            }
        }
        Ok(())
    }

    /// World pose of every URDF link (in the model's link order).
    pub fn link_poses(&self) -> Vec<Isometry3<f64>> {
        let bodies: Vec<Isometry3<f64>> = (0..self.bodies.len()).map(|b| self.body_pose(b)).collect();
        self.link_body.iter().map(|(b, off)| bodies[*b] * off).collect()
    }

    /// Centre of mass of the robot, from the URDF's link masses.
    pub fn com(&self) -> Point3<f64> {
        let bodies: Vec<Isometry3<f64>> = (0..self.bodies.len()).map(|b| self.body_pose(b)).collect();
        let mut sum = Vector3::zeros();
        for (i, (b, _)) in self.link_body.iter().enumerate() {
            sum += self.link_mass[i] * (bodies[*b] * self.link_com[i]).coords;
        }
        Point3::from(sum / self.total_mass)
    }

    /// Tail and head points (root link origin; far end of the last link), world frame.
    pub fn ends(&self) -> (Point3<f64>, Point3<f64>) {
        (
            self.body_pose(self.tail.0) * self.tail.1,
            self.body_pose(self.head.0) * self.head.1,
        )
    }

    /// Pose of the root body (the tail module's back half for modbot chains).
    pub fn root_pose(&self) -> Isometry3<f64> {
        self.body_pose(0)
    }

    /// Total kinetic energy of the robot, J.
    pub fn kinetic_energy(&self) -> f64 {
        self.bodies
            .iter()
            .map(|b| {
                let rb = &self.world.bodies[b.handle];
                let v = from_vec(rb.linvel());
                let w = from_vec(rb.angvel());
                let m = rb.mass() as f64;
                let inertia = rb.mass_properties().local_mprops.principal_inertia();
                0.5 * m * v.norm_squared()
                    + 0.5 * (inertia.x as f64 * w.x * w.x + inertia.y as f64 * w.y * w.y + inertia.z as f64 * w.z * w.z)
            })
            .sum()
    }

    /// The rapier world, for tuning and inspection.
    pub fn world_mut(&mut self) -> &mut PhysicsWorld {
        &mut self.world
    }

    /// Total mass, kg.
    pub fn total_mass(&self) -> f64 {
        self.total_mass
    }
}
