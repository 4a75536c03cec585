//! modbot's own engine: each robot in reduced coordinates (a free root at its body-tree centre
//! plus one angle per hinge), the composite-rigid-body mass matrix and recursive Newton–Euler
//! bias forces in world-frame spatial algebra (Featherstone 2008), and one projected
//! Gauss–Seidel solve per step over velocity-level rows: the drives (ODE's hinge motor: a
//! target speed with the torque capped), joint limits, and Coulomb contacts (a disc friction
//! cone per point). Semi-implicit Euler. Decision record 0018 says why it exists next to
//! rapier.
//!
//! - [`spatial`]: spatial vectors `[ω; v₀]`, cross products, spatial inertia;
//! - [`tree`]: the trees, their state and forward kinematics;
//! - [`dynamics`]: the mass matrix (CRBA) and bias forces (RNEA);
//! - [`linalg`]: the SPD inverse of the (block-diagonal) mass matrix;
//! - [`rows`]: drive, limit and contact rows and their Jacobians;
//! - [`contacts`]: which contacts there are;
//! - [`solver`]: projected Gauss–Seidel with warm start;
//! - here: the world and its step.
//!
//! One step: `M ν⁺ = M ν − dt c(q, ν) + Jᵀ λ` with λ from the rows at ν⁺, then q⁺ from ν⁺.

mod contacts;
mod dynamics;
mod linalg;
mod rows;
mod solver;
mod spatial;
mod tree;

#[cfg(test)]
mod tests;

use nalgebra::{DMatrix, Isometry3, Point3, Vector3, Vector6};

use crate::layout::Layout;
use contacts::Collision;
use rows::Rows;
use spatial::{angular, point_velocity};
use tree::{Kinematics, Model, State};

/// Solver settings of the native engine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct NativeParams {
    /// Step, s.
    pub dt: f64,
    /// Gauss–Seidel sweeps per step.
    pub sweeps: usize,
    /// Reflected rotor inertia on each joint, kg·m².
    pub armature: f64,
    /// Viscous joint damping, N·m·s/rad.
    pub joint_damping: f64,
    /// Fraction of a penetration removed per step.
    pub erp: f64,
    /// Penetration left alone, m.
    pub slop: f64,
    /// Contacts are made this far before touching, m.
    pub margin: f64,
    /// Regularisation of contact rows as a fraction of their effective inverse mass.
    pub cfm: f64,
}

/// The mass matrix, its inverse and a work buffer.
struct MassBuffers {
    mass: DMatrix<f64>,
    /// M⁻¹, column-major (symmetric, so a column is also a row; zero between trees).
    minv: Vec<f64>,
    scratch: Vec<f64>,
    /// Each tree's block.
    blocks: Vec<std::ops::Range<usize>>,
}

/// The native world.
pub(crate) struct NativeWorld {
    params: NativeParams,
    gravity: Vector3<f64>,
    model: Model,
    state: State,
    kin: Kinematics,
    mass: MassBuffers,
    rows: Rows,
    collision: Collision,
    /// Drive targets per tree body (tree sign): angles or speeds.
    targets: Vec<f64>,
    /// External wrench on each tree body, `[p × f; f]` about the world origin (world axes).
    external: Vec<Vector6<f64>>,
    /// Number of URDF links (layout order).
    links: usize,
}

impl NativeWorld {
    /// The world of a layout (checked free of kinematic loops).
    pub fn new(layout: &Layout, params: NativeParams) -> NativeWorld {
        let (model, state) = Model::new(layout);
        let n = model.n;
        let collision = Collision::new(layout, &model, params.margin);
        let mut world = NativeWorld {
            params,
            gravity: layout.gravity,
            kin: Kinematics::new(&model),
            mass: MassBuffers {
                mass: DMatrix::zeros(n, n),
                minv: vec![0.0; n * n],
                scratch: Vec::new(),
                blocks: model.trees.iter().map(|t| t.dofs.clone()).collect(),
            },
            rows: Rows::new(model.bodies.len(), collision.slots()),
            collision,
            targets: state.q.clone(),
            external: vec![Vector6::zeros(); model.bodies.len()],
            links: layout.link_body.len(),
            state,
            model,
        };
        world.kin.update(&world.model, &world.state);
        world
    }

    /// Advances one step. The targets are in command order, URDF sign: angles for position
    /// servos, speeds for velocity drives.
    pub fn step(&mut self, targets: &[f64]) {
        let n = self.model.n;
        let dt = self.params.dt;
        for (b, body) in self.model.bodies.iter().enumerate() {
            if body.parent.is_some() {
                self.targets[b] = body.sign * targets[body.joint];
            }
        }
        dynamics::mass_matrix(&self.model, &self.kin, self.params.armature, &mut self.mass.mass);
        let bias = dynamics::bias_forces(
            &self.model,
            &self.kin,
            &self.state,
            &self.gravity,
            self.params.joint_damping,
            &self.external,
        );
        let m = &mut self.mass;
        if !linalg::block_inverse(m.mass.as_slice(), n, &m.blocks, &mut m.minv, &mut m.scratch) {
            // A singular mass matrix cannot be stepped; the state becomes NaN so the caller
            // reports the divergence with the step and the body.
            self.state.nu.fill(f64::NAN);
            return;
        }
        // Unconstrained velocity, tree by tree (M⁻¹ is block diagonal).
        for tree in &self.model.trees {
            let (s, e) = (tree.dofs.start, tree.dofs.end);
            for (k, b) in bias.iter().enumerate().take(e).skip(s) {
                let column = &m.minv[k * n + s..k * n + e];
                for (v, mk) in self.state.nu[s..e].iter_mut().zip(column) {
                    *v -= dt * mk * b;
                }
            }
        }
        self.rows.clear();
        self.rows
            .drive_and_limit_rows(&self.model, &self.state, &self.targets, &m.minv, &self.params);
        self.collision
            .collide(&self.model, &self.kin, &m.minv, &self.params, &mut self.rows);
        self.rows.solve(&mut self.state.nu, self.params.sweeps);
        self.state.integrate(&self.model, dt);
        self.kin.update(&self.model, &self.state);
    }

    /// Spatial velocity `[ω; v₀]` of a layout body (world axes, velocity of the body point at
    /// the world origin).
    pub fn spatial_velocity(&self, layout_body: usize) -> Vector6<f64> {
        self.kin.vel[self.model.tree_of[layout_body]]
    }

    /// Starts a world built from a regrouped layout (at the current poses) with the old
    /// motion: the joint angles given (command order, URDF sign; continuous joints keep their
    /// turns) and the velocity that carries over the generalised momentum of the old motion,
    /// `ν = M⁻¹ p` with `p_root = Σ h` over the tree and `p_k = s_kᵀ Σ h` over the subtree of
    /// joint k plus its armature's `a q̇_k` — `h` being each layout body's spatial momentum
    /// `[L₀; P]` in the old motion. A split keeps every velocity (the old motion is already
    /// one of the new trees'); a join keeps the linear and angular momentum of the joined
    /// trees and loses the kinetic energy of the impact. False if a mass matrix is singular.
    pub fn carry_over(&mut self, momentum: &[Vector6<f64>], angles: &[f64], rates: &[f64]) -> bool {
        let n = self.model.n;
        for (b, body) in self.model.bodies.iter().enumerate() {
            if body.parent.is_some() {
                self.state.q[b] = body.sign * angles[body.joint];
            }
        }
        self.state.nu.fill(0.0);
        self.kin.update(&self.model, &self.state);
        dynamics::mass_matrix(&self.model, &self.kin, self.params.armature, &mut self.mass.mass);
        let m = &mut self.mass;
        if !linalg::block_inverse(m.mass.as_slice(), n, &m.blocks, &mut m.minv, &mut m.scratch) {
            return false;
        }
        // Subtree momenta, children before parents.
        let mut acc = vec![Vector6::zeros(); self.model.bodies.len()];
        for (layout_body, h) in momentum.iter().enumerate() {
            acc[self.model.tree_of[layout_body]] += h;
        }
        for b in (0..self.model.bodies.len()).rev() {
            if let Some(p) = self.model.bodies[b].parent {
                let child = acc[b];
                acc[p] += child;
            }
        }
        let mut p = vec![0.0; n];
        for (b, body) in self.model.bodies.iter().enumerate() {
            match body.parent {
                None => p[body.dof..body.dof + 6].copy_from_slice(acc[b].as_slice()),
                Some(_) => {
                    p[body.dof] = self.kin.s[b].dot(&acc[b]) + self.params.armature * body.sign * rates[body.joint];
                }
            }
        }
        for tree in &self.model.trees {
            for i in tree.dofs.clone() {
                self.state.nu[i] = tree.dofs.clone().map(|k| m.minv[k * n + i] * p[k]).sum();
            }
        }
        self.kin.update(&self.model, &self.state);
        true
    }

    /// Contact force on each URDF link (layout order) in the last step, world frame, N: from
    /// the last step's contact rows, which stay until the next step, so only a reader of the
    /// sensors pays for it.
    pub fn link_forces(&self) -> Vec<Vector3<f64>> {
        let mut out = vec![Vector3::zeros(); self.links];
        self.collision.link_forces(&self.rows, self.params.dt, &mut out);
        out
    }

    /// World pose of a layout body.
    pub fn body_pose(&self, layout_body: usize) -> Isometry3<f64> {
        self.kin.poses[self.model.tree_of[layout_body]]
    }

    /// Linear velocity of the centre of mass and angular velocity of a layout body.
    pub fn body_velocity(&self, layout_body: usize) -> (Vector3<f64>, Vector3<f64>) {
        let b = self.model.tree_of[layout_body];
        let v = self.kin.vel[b];
        let c = self.kin.poses[b] * Point3::from(self.model.bodies[b].com);
        (point_velocity(&v, &c.coords), angular(&v))
    }

    /// The external wrench on each layout body (about the world origin, world axes), applied
    /// at every step until set again.
    pub fn set_external(&mut self, layout_wrenches: &[Vector6<f64>]) {
        self.external.fill(Vector6::zeros());
        for (layout_body, w) in layout_wrenches.iter().enumerate() {
            self.external[self.model.tree_of[layout_body]] += w;
        }
    }

    /// Switches a joint's drive (command index); the next step's row uses it, started cold.
    pub fn set_drive(&mut self, joint: usize, drive: crate::robot::Drive) {
        let b = self.model.body_of_joint[joint];
        self.model.bodies[b].drive = drive;
        self.rows.drive_warm[b] = 0.0;
    }

    /// URDF angle of a joint (command index).
    pub fn joint_angle(&self, joint: usize) -> f64 {
        let b = self.model.body_of_joint[joint];
        self.model.bodies[b].sign * self.state.q[b]
    }

    /// URDF rate of a joint (command index), rad/s: the engine's generalised velocity.
    pub fn joint_velocity(&self, joint: usize) -> f64 {
        let b = self.model.body_of_joint[joint];
        let body = &self.model.bodies[b];
        body.sign * self.state.nu[body.dof]
    }

    /// The torque a joint's drive applied in the last step (command index), N·m, URDF sign:
    /// its drive row's impulse over the step (0 for a free joint).
    pub fn joint_effort(&self, joint: usize) -> f64 {
        let b = self.model.body_of_joint[joint];
        let body = &self.model.bodies[b];
        if matches!(body.drive, crate::robot::Drive::Free) {
            return 0.0;
        }
        body.sign * self.rows.drive_warm[b] / self.params.dt
    }

    /// Kinetic energy ½ Σ Vᵀ I V of the bodies (no armature), J.
    pub fn kinetic_energy(&self) -> f64 {
        self.kin
            .vel
            .iter()
            .zip(&self.kin.inertia_o)
            .map(|(v, i)| 0.5 * v.dot(&(i * v)))
            .sum()
    }
}
