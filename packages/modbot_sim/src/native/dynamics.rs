//! The equations of motion `M(q) ν̇ + c(q, ν) = τ` of the trees (Featherstone 2008).
//!
//! - `M` by the composite-rigid-body algorithm (§6.2): each body's composite inertia
//!   `I^c_b = I_b + Σ_children I^c`, then `M_jj = s_jᵀ I^c_j s_j`, `M_ij = s_iᵀ I^c_j s_j` for
//!   every ancestor `i` of `j`, and the root rows `I^c_j s_j`. With all quantities in world
//!   axes no transforms appear. Trees do not couple: `M` is block diagonal, one block per tree.
//! - `c` by recursive Newton–Euler (§5.3) with ν̇ = 0 and gravity as a base acceleration of
//!   −g: `a_b = a_parent + (V_b × s_b) q̇_b`, `f_b = I_b a_b + V_b ×* I_b V_b`, then the
//!   forces summed towards the root, `c_j = s_jᵀ f_j` (plus viscous joint damping).

use nalgebra::{DMatrix, Vector3, Vector6};

use super::spatial::{cross_force, cross_motion};
use super::tree::{Kinematics, Model, State};

/// Composite-rigid-body mass matrix (§6.2) into `mass` (n×n, zero between trees), with
/// `armature` (reflected rotor inertia) added on the joint diagonal.
pub(crate) fn mass_matrix(model: &Model, kin: &Kinematics, armature: f64, mass: &mut DMatrix<f64>) {
    let bodies = &model.bodies;
    let mut composite = kin.inertia_o.clone();
    for b in (0..bodies.len()).rev() {
        if let Some(p) = bodies[b].parent {
            let c = composite[b];
            composite[p] += c;
        }
    }
    mass.fill(0.0);
    for (b, ic) in composite.iter().enumerate() {
        let body = &bodies[b];
        let Some(parent) = body.parent else {
            mass.view_mut((body.dof, body.dof), (6, 6)).copy_from(ic);
            continue;
        };
        let j = body.dof;
        let f = ic * kin.s[b];
        mass[(j, j)] = kin.s[b].dot(&f) + armature;
        let mut a = parent;
        while bodies[a].parent.is_some() {
            let i = bodies[a].dof;
            let v = kin.s[a].dot(&f);
            mass[(i, j)] = v;
            mass[(j, i)] = v;
            a = bodies[a].parent.unwrap_or(a);
        }
        let o = bodies[a].dof;
        for r in 0..6 {
            mass[(o + r, j)] = f[r];
            mass[(j, o + r)] = f[r];
        }
    }
}

/// Bias forces `c(q, ν)` by recursive Newton–Euler (§5.3) with gravity `gravity`, viscous
/// joint damping `damping · q̇` and the external wrenches `external` on the bodies (about the
/// world origin, world axes; they enter with a minus sign, as forces the world applies).
pub(crate) fn bias_forces(
    model: &Model,
    kin: &Kinematics,
    state: &State,
    gravity: &Vector3<f64>,
    damping: f64,
    external: &[Vector6<f64>],
) -> Vec<f64> {
    let bodies = &model.bodies;
    let nb = bodies.len();
    // Accelerations with ν̇ = 0 and the world accelerating at −g.
    let mut acc = vec![Vector6::zeros(); nb];
    let mut force = vec![Vector6::zeros(); nb];
    for b in 0..nb {
        acc[b] = match bodies[b].parent {
            None => Vector6::new(0.0, 0.0, 0.0, -gravity.x, -gravity.y, -gravity.z),
            Some(p) => acc[p] + cross_motion(&kin.vel[b], &kin.s[b]) * state.nu[bodies[b].dof],
        };
        let iv = kin.inertia_o[b] * kin.vel[b];
        force[b] = kin.inertia_o[b] * acc[b] + cross_force(&kin.vel[b], &iv) - external[b];
    }
    let mut bias = vec![0.0; model.n];
    for b in (0..nb).rev() {
        let body = &bodies[b];
        match body.parent {
            Some(p) => {
                bias[body.dof] = kin.s[b].dot(&force[b]) + damping * state.nu[body.dof];
                let f = force[b];
                force[p] += f;
            }
            None => bias[body.dof..body.dof + 6].copy_from_slice(force[b].as_slice()),
        }
    }
    bias
}
