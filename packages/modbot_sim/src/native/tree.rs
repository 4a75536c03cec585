//! The kinematic trees in reduced coordinates and their forward kinematics.
//!
//! Each tree (a robot) has a free root at its body-tree centre and one angle per hinge; its
//! bodies are numbered breadth first from the root, so a parent always precedes its children
//! (Featherstone 2008, §4.1.2, "regular numbering"). Several trees share one generalised
//! velocity vector ν, tree after tree: the root's spatial velocity `[ω; v₀]` (6 entries) then
//! its joint rates. Forward kinematics (§4.3) gives each body's pose, the motion subspace of
//! its inbound joint `s = [a; o × a]` (axis `a` through the point `o`, world axes) and its
//! velocity `V_b = V_parent + s_b q̇_b`.

use std::ops::Range;

use nalgebra::{Isometry3, Matrix3, Matrix6, Point3, Translation3, UnitQuaternion, Vector3, Vector6};

use super::spatial::spatial_inertia;
use crate::layout::Layout;
use crate::robot::Drive;

/// A body in tree order.
#[derive(Clone)]
pub(crate) struct TreeBody {
    /// Tree parent (None for a root).
    pub parent: Option<usize>,
    /// Its tree.
    pub tree: usize,
    /// Command index of its inbound joint (unused for a root).
    pub joint: usize,
    /// −1/+1: tree angle = sign · URDF angle.
    pub sign: f64,
    /// Inbound joint frame (x = axis) in the parent body.
    pub frame_in: Isometry3<f64>,
    /// Inverse of the inbound joint frame in this body.
    pub frame_out_inv: Isometry3<f64>,
    /// Mass, kg.
    pub mass: f64,
    /// Centre of mass, body frame.
    pub com: Vector3<f64>,
    /// Inertia about the centre of mass, body axes.
    pub inertia: Matrix3<f64>,
    /// Index in ν of its joint rate (of the first of its 6 for a root).
    pub dof: usize,
    /// Generalised coordinates that move it: its root's 6, then its joints' down the tree.
    pub path: Vec<usize>,
    /// Joint limits, tree sign, rad.
    pub lower: f64,
    /// Upper limit.
    pub upper: f64,
    /// Drive of its inbound joint.
    pub drive: Drive,
}

/// One tree: its root body and its range of ν.
#[derive(Debug, Clone)]
pub(crate) struct Tree {
    /// Root body.
    pub root: usize,
    /// Its generalised velocities.
    pub dofs: Range<usize>,
}

/// The trees (constant).
pub(crate) struct Model {
    /// Bodies, tree after tree.
    pub bodies: Vec<TreeBody>,
    /// The trees.
    pub trees: Vec<Tree>,
    /// Layout body → tree body.
    pub tree_of: Vec<usize>,
    /// Command index → tree body moved by that joint.
    pub body_of_joint: Vec<usize>,
    /// Number of generalised velocities.
    pub n: usize,
    /// ν index → the body it moves (a root for its 6).
    pub dof_body: Vec<usize>,
}

/// The state: root poses, joint angles, generalised velocity.
#[derive(Clone)]
pub(crate) struct State {
    /// Pose of each tree's root body.
    pub roots: Vec<Isometry3<f64>>,
    /// Angle of each body's inbound joint (tree sign; 0 for roots).
    pub q: Vec<f64>,
    /// Generalised velocity ν.
    pub nu: Vec<f64>,
}

/// What forward kinematics derives from the state.
#[derive(Clone)]
pub(crate) struct Kinematics {
    /// Body poses.
    pub poses: Vec<Isometry3<f64>>,
    /// Motion subspace of each body's inbound joint (zero for roots).
    pub s: Vec<Vector6<f64>>,
    /// Spatial velocity of each body.
    pub vel: Vec<Vector6<f64>>,
    /// Spatial inertia of each body about the world origin.
    pub inertia_o: Vec<Matrix6<f64>>,
}

impl Model {
    /// The trees of a layout (checked free of loops by the caller) and the start state.
    pub fn new(layout: &Layout) -> (Model, State) {
        let mut tree_of = vec![usize::MAX; layout.bodies.len()];
        let mut bodies: Vec<TreeBody> = Vec::new();
        let mut trees = Vec::new();
        let mut roots = Vec::new();
        let mut q = Vec::new();
        let mut n = 0;
        for (t, (center, order)) in layout.trees().into_iter().enumerate() {
            let spec = &layout.bodies[center];
            let root = bodies.len();
            let offset = n;
            tree_of[center] = root;
            bodies.push(TreeBody {
                parent: None,
                tree: t,
                joint: usize::MAX,
                sign: 1.0,
                frame_in: Isometry3::identity(),
                frame_out_inv: Isometry3::identity(),
                mass: spec.mass,
                com: spec.com,
                inertia: spec.inertia,
                dof: offset,
                path: (offset..offset + 6).collect(),
                lower: f64::NEG_INFINITY,
                upper: f64::INFINITY,
                drive: Drive::Free,
            });
            roots.push(spec.pose);
            q.push(0.0);
            n += 6;
            for (k, flipped) in order {
                let j = &layout.joints[k];
                let (inboard, outboard, frame_in, frame_out, sign) = if flipped {
                    (j.child, j.parent, j.frame2, j.frame1, -1.0)
                } else {
                    (j.parent, j.child, j.frame1, j.frame2, 1.0)
                };
                let parent = tree_of[inboard];
                let index = bodies.len();
                tree_of[outboard] = index;
                let dof = n;
                n += 1;
                let mut path = bodies[parent].path.clone();
                path.push(dof);
                let (lower, upper) = if sign > 0.0 {
                    (j.lower, j.upper)
                } else {
                    (-j.upper, -j.lower)
                };
                let spec = &layout.bodies[outboard];
                // The start pose fixes the angle (zero for modbot's straight start).
                let rel = (layout.bodies[inboard].pose * frame_in).inverse() * (spec.pose * frame_out);
                let rq = rel.rotation.quaternion();
                q.push(2.0 * rq.i.atan2(rq.w));
                bodies.push(TreeBody {
                    parent: Some(parent),
                    tree: t,
                    joint: k,
                    sign,
                    frame_in,
                    frame_out_inv: frame_out.inverse(),
                    mass: spec.mass,
                    com: spec.com,
                    inertia: spec.inertia,
                    dof,
                    path,
                    lower,
                    upper,
                    drive: j.drive,
                });
            }
            trees.push(Tree { root, dofs: offset..n });
        }
        let mut body_of_joint = vec![0; layout.joints.len()];
        for (i, b) in bodies.iter().enumerate() {
            if b.parent.is_some() {
                body_of_joint[b.joint] = i;
            }
        }
        let mut dof_body = vec![0; n];
        for (i, b) in bodies.iter().enumerate() {
            match b.parent {
                Some(_) => dof_body[b.dof] = i,
                None => dof_body[b.dof..b.dof + 6].fill(i),
            }
        }
        let model = Model {
            bodies,
            trees,
            tree_of,
            body_of_joint,
            n,
            dof_body,
        };
        let state = State {
            roots,
            q,
            nu: vec![0.0; n],
        };
        (model, state)
    }

    /// The ν range of a body's tree.
    pub fn dofs_of(&self, body: usize) -> Range<usize> {
        self.trees[self.bodies[body].tree].dofs.clone()
    }
}

impl Kinematics {
    /// Buffers for a model.
    pub fn new(model: &Model) -> Kinematics {
        let nb = model.bodies.len();
        Kinematics {
            poses: vec![Isometry3::identity(); nb],
            s: vec![Vector6::zeros(); nb],
            vel: vec![Vector6::zeros(); nb],
            inertia_o: vec![Matrix6::zeros(); nb],
        }
    }

    /// Poses, motion subspaces, velocities and spatial inertias of a state (§4.3: parents
    /// before children).
    pub fn update(&mut self, model: &Model, state: &State) {
        for (b, body) in model.bodies.iter().enumerate() {
            let Some(p) = body.parent else {
                self.poses[b] = state.roots[body.tree];
                self.vel[b] = Vector6::from_column_slice(&state.nu[body.dof..body.dof + 6]);
                continue;
            };
            let joint_frame = self.poses[p] * body.frame_in;
            let axis = joint_frame.rotation * Vector3::x();
            let o = joint_frame.translation.vector;
            let m = o.cross(&axis);
            self.s[b] = Vector6::new(axis.x, axis.y, axis.z, m.x, m.y, m.z);
            let rot = Isometry3::from_parts(
                Translation3::identity(),
                UnitQuaternion::from_axis_angle(&Vector3::x_axis(), state.q[b]),
            );
            self.poses[b] = joint_frame * rot * body.frame_out_inv;
            self.vel[b] = self.vel[p] + self.s[b] * state.nu[body.dof];
        }
        for (b, body) in model.bodies.iter().enumerate() {
            let r = self.poses[b].rotation.to_rotation_matrix();
            let c = self.poses[b] * Point3::from(body.com);
            let ic = r * body.inertia * r.transpose();
            self.inertia_o[b] = spatial_inertia(body.mass, &c.coords, &ic);
        }
    }
}

impl State {
    /// Semi-implicit Euler's position update with the new velocity: each root by its twist
    /// (translation by the velocity of its origin, rotation by the exponential map), each
    /// joint angle by its rate.
    pub fn integrate(&mut self, model: &Model, dt: f64) {
        for tree in &model.trees {
            let o = tree.dofs.start;
            let root = &mut self.roots[model.bodies[tree.root].tree];
            let w = Vector3::new(self.nu[o], self.nu[o + 1], self.nu[o + 2]);
            let v0 = Vector3::new(self.nu[o + 3], self.nu[o + 4], self.nu[o + 5]);
            let p = root.translation.vector;
            let pdot = v0 + w.cross(&p);
            root.translation.vector += dt * pdot;
            let rot = UnitQuaternion::from_scaled_axis(w * dt) * root.rotation;
            root.rotation = UnitQuaternion::new_normalize(rot.into_inner());
        }
        for (b, body) in model.bodies.iter().enumerate() {
            if body.parent.is_some() {
                self.q[b] += dt * self.nu[body.dof];
            }
        }
    }
}
