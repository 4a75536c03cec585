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

use nalgebra::{DMatrix, Isometry3, Point3, Vector3};

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
