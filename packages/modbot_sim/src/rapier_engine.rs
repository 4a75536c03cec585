//! The rapier3d engine: each robot as one rapier multibody (reduced coordinates) rooted at its
//! body-tree centre, drives as rapier velocity motors, the ground as a half-space. Kept as the
//! cross-check of the native engine (decision records 0012 and 0018).

use modbot_core::FrictionCombine;
use nalgebra::{Isometry3, Matrix3, Vector3};
use rapier3d::prelude::*;

use crate::convert::{from_pose, from_vec, to_pose, to_vec};
use crate::layout::Layout;

/// rapier's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RapierParams {
    pub dt: f64,
    pub solver_iterations: usize,
    pub pgs_iterations: usize,
    pub motor_damping: f64,
    pub armature: f64,
    pub joint_damping: f64,
}

struct Motor {
    handle: MultibodyJointHandle,
    flipped: bool,
}

/// The rapier world.
pub(crate) struct RapierWorld {
    world: PhysicsWorld,
    bodies: Vec<RigidBodyHandle>,
    motors: Vec<Motor>,
    motor_damping: f64,
}

/// A collider with Coulomb friction, no restitution, and contacts only between a robot and
/// the world or another robot, never inside a robot (decision record 0012): robot `r` is in
/// a group of its own, the world in another. Robot colliders combine by `min` (Gazebo/ODE);
/// the world's by the scenario's rule, which rapier's priority (multiply over min) makes
/// the rule of every robot–world contact.
fn collider(
    shape: SharedShape,
    friction: f64,
    robot: Option<usize>,
    robots: usize,
    combine: FrictionCombine,
) -> ColliderBuilder {
    let all_robots = (0..robots).fold(Group::NONE, |g, r| g | robot_group(r));
    let (member, filter) = match robot {
        Some(r) => (robot_group(r), WORLD_GROUP | (all_robots - robot_group(r))),
        None => (WORLD_GROUP, all_robots),
    };
    ColliderBuilder::new(shape)
        .friction(friction as f32)
        .friction_combine_rule(match combine {
            FrictionCombine::Min => CoefficientCombineRule::Min,
            FrictionCombine::Multiply => CoefficientCombineRule::Multiply,
        })
        .restitution(0.0)
        .collision_groups(InteractionGroups::new(member, filter, InteractionTestMode::And))
}

const WORLD_GROUP: Group = Group::GROUP_2;

/// Robot 0 in group 1, the world in group 2, robots 1.. in groups 3..=32.
fn robot_group(r: usize) -> Group {
    if r == 0 {
        Group::GROUP_1
    } else {
        Group::from_bits_truncate(1u32 << (r + 1).min(31))
    }
}

fn inertia_matrix(i: &Matrix3<f64>) -> Matrix {
    Matrix::from_cols_array(&[
        i[(0, 0)] as f32,
        i[(1, 0)] as f32,
        i[(2, 0)] as f32,
        i[(0, 1)] as f32,
        i[(1, 1)] as f32,
        i[(2, 1)] as f32,
        i[(0, 2)] as f32,
        i[(1, 2)] as f32,
        i[(2, 2)] as f32,
    ])
}

impl RapierWorld {
    /// Builds the rapier world; None if a joint closes a kinematic loop.
    pub fn new(layout: &Layout, params: RapierParams) -> Option<RapierWorld> {
        let mut world = PhysicsWorld::new();
        world.gravity = to_vec(&layout.gravity);
        world.integration_parameters.dt = params.dt as f32;
        world.integration_parameters.num_solver_iterations = params.solver_iterations;
        world.integration_parameters.num_internal_pgs_iterations = params.pgs_iterations;
        world.integration_parameters.length_unit = 0.1;

        let robots = layout.robots.len();
        let ground = world.insert_body(RigidBodyBuilder::fixed());
        world.insert_collider(
            collider(
                SharedShape::halfspace(Vector::Z),
                layout.ground_friction,
                None,
                robots,
                layout.combine,
            ),
            Some(ground),
        );
        for o in &layout.obstacles {
            let h = world.insert_body(RigidBodyBuilder::fixed().pose(to_pose(&o.pose)));
            world.insert_collider(
                collider(o.shape.clone(), o.friction, None, robots, layout.combine),
                Some(h),
            );
        }

        let mut bodies = Vec::with_capacity(layout.bodies.len());
        for b in &layout.bodies {
            let props = MassProperties::with_inertia_matrix(to_vec(&b.com), b.mass as f32, inertia_matrix(&b.inertia));
            let handle = world.insert_body(
                RigidBodyBuilder::dynamic()
                    .pose(to_pose(&b.pose))
                    .additional_mass_properties(props)
                    .can_sleep(false),
            );
            for c in &b.colliders {
                let col = collider(c.shape.clone(), c.friction, Some(b.robot), robots, FrictionCombine::Min)
                    .position(to_pose(&c.local))
                    .density(0.0);
                world.insert_collider(col, Some(handle));
            }
            bodies.push(handle);
        }

        let mut motors: Vec<Option<Motor>> = (0..layout.joints.len()).map(|_| None).collect();
        for (k, flipped) in layout.joint_order() {
            let j = &layout.joints[k];
            let mut builder = GenericJointBuilder::new(JointAxesMask::LOCKED_REVOLUTE_AXES)
                .local_frame1(to_pose(&j.frame1))
                .local_frame2(to_pose(&j.frame2))
                .contacts_enabled(false)
                .motor_model(JointAxis::AngX, MotorModel::ForceBased)
                .motor_velocity(JointAxis::AngX, 0.0, params.motor_damping as f32)
                .motor_max_force(JointAxis::AngX, j.drive.max_torque() as f32);
            if j.lower.is_finite() {
                builder = builder.limits(JointAxis::AngX, [j.lower as f32, j.upper as f32]);
            }
            let mut data = builder.build();
            let (b1, b2) = if flipped {
                data.flip();
                (j.child, j.parent)
            } else {
                (j.parent, j.child)
            };
            let handle = world.multibody_joints.insert(bodies[b1], bodies[b2], data, true)?;
            motors[k] = Some(Motor { handle, flipped });
        }
        let motors: Vec<Motor> = motors.into_iter().collect::<Option<_>>()?;
        // rapier gives every angular multibody DOF a default damping of 0.1 N·m·s/rad, the
        // free root's included: a drag on the whole robot's rotation and, on a 0.314 N·m
        // servo, a cap of 3.14 rad/s. The source's model has neither (decision 0012).
        for m in &motors {
            if let Some((mb, _)) = world.multibody_joints.get_mut(m.handle) {
                mb.damping_mut().fill(0.0);
            }
        }
        for m in &motors {
            if let Some((mb, link)) = world.multibody_joints.get_mut(m.handle)
                && let Some(dof) = mb.link(link).map(|l| l.assembly_id())
            {
                if dof < mb.damping().len() {
                    mb.damping_mut()[dof] = params.joint_damping as f32;
                }
                if dof < mb.armature().len() {
                    mb.armature_mut()[dof] = params.armature as f32;
                }
            }
        }
        Some(RapierWorld {
            world,
            bodies,
            motors,
            motor_damping: params.motor_damping,
        })
    }

    /// Drive speeds from `w` (rad/s per joint, URDF sign), then one rapier step.
    pub fn step(&mut self, w: &[f64]) {
        for (m, w) in self.motors.iter().zip(w) {
            let w = if m.flipped { -w } else { *w };
            if let Some((mb, link)) = self.world.multibody_joints.get_mut(m.handle)
                && let Some(l) = mb.link_mut(link)
            {
                l.joint
                    .data
                    .set_motor_velocity(JointAxis::AngX, w as f32, self.motor_damping as f32);
            }
        }
        self.world.step();
    }

    /// URDF rate of a joint (command index), rad/s: the multibody's generalised velocity.
    pub fn joint_velocity(&self, joint: usize) -> Option<f64> {
        let m = &self.motors[joint];
        let (mb, link) = self.world.multibody_joints.get(m.handle)?;
        let v = mb.joint_velocity(mb.link(link)?).get(0).copied()? as f64;
        Some(if m.flipped { -v } else { v })
    }

    pub fn body_pose(&self, b: usize) -> Isometry3<f64> {
        from_pose(self.world.bodies[self.bodies[b]].position())
    }

    /// Linear velocity of the centre of mass and angular velocity.
    pub fn body_velocity(&self, b: usize) -> (Vector3<f64>, Vector3<f64>) {
        let rb = &self.world.bodies[self.bodies[b]];
        (from_vec(rb.linvel()), from_vec(rb.angvel()))
    }

    /// Kinetic energy, J.
    pub fn kinetic_energy(&self) -> f64 {
        self.bodies
            .iter()
            .map(|h| {
                let rb = &self.world.bodies[*h];
                let v = from_vec(rb.linvel());
                let w = from_vec(rb.angvel());
                let m = rb.mass() as f64;
                let inertia = rb.mass_properties().local_mprops.principal_inertia();
                0.5 * m * v.norm_squared()
                    + 0.5 * (inertia.x as f64 * w.x * w.x + inertia.y as f64 * w.y * w.y + inertia.z as f64 * w.z * w.z)
            })
            .sum()
    }
}
