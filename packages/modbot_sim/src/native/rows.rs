//! Velocity-level constraint rows, ODE style: each row asks `J ν + cfm λ = rhs` of the
//! post-step velocity ν with its impulse λ kept in `[lo, hi]`, where a position error enters
//! the target speed through the error-reduction parameter (`rhs = erp · error / dt`) and the
//! constraint force mixing `cfm` makes a row slightly soft.
//!
//! - **Servo** (ODE's hinge motor): `q̇ = kp (target − q)` clipped to ±max_speed, the impulse
//!   capped at ±max_torque·dt.
//! - **Velocity drive**: `q̇ = target` clipped to ±max_speed, the same torque cap.
//! - **Limit**: one-sided `q̇ ≥ −gap/dt` (or its mirror) from [`LIMIT_MARGIN`] inside a
//!   limit; a penetration is pushed out at `erp` per step.
//! - **Contact**: a normal row `vₙ ≥ −dist/dt` (approaching up to touching is free, a
//!   penetration beyond the slop is pushed out at `erp` per step) and two friction rows in
//!   the tangent plane, bounded by the disc cone |λ_t| ≤ μ λₙ in the solver.
//!
//! A row's Jacobian on a body is the wrench-like 6-vector `w` with `J ν = w · V_b`; along the
//! body's path in its tree that is `w` on the root's 6 velocities and `w · s_k` on each joint
//! rate `k`. Every row keeps J and `W = M⁻¹ Jᵀ` (so applying an impulse is `ν += W Δλ`) and
//! its effective inverse mass `J M⁻¹ Jᵀ`.

use nalgebra::{Vector3, Vector6};

use super::NativeParams;
use super::spatial::point_wrench;
use super::tree::{Kinematics, Model, State};
use crate::robot::Drive;

/// Joint limits are watched from this far inside them, rad.
pub(crate) const LIMIT_MARGIN: f64 = 0.02;

/// A velocity-level constraint row.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Row {
    /// Compliance: the row solves J ν + cfm λ = rhs.
    pub cfm: f64,
    /// Offset of its J and W in the row buffers.
    pub at: usize,
    /// The generalised velocities it touches: `from..to` (its tree's, or two trees' span).
    pub from: usize,
    /// End of that span.
    pub to: usize,
    /// 1 / (J M⁻¹ Jᵀ + cfm).
    pub inv_d: f64,
    /// Target of J ν.
    pub rhs: f64,
    /// Impulse bounds.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
    /// Impulse.
    pub lambda: f64,
}

/// What a row asks of its impulse: the velocity right-hand side and the impulse's bounds.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    /// The velocity the row drives its Jacobian's product towards.
    pub rhs: f64,
    /// Lower impulse bound.
    pub lo: f64,
    /// Upper impulse bound.
    pub hi: f64,
}

/// A contact point for [`Rows::contact`].
#[derive(Debug, Clone, Copy)]
pub struct ContactAt<'a> {
    /// The body the normal points at, and the other (None: the fixed world).
    pub bodies: (usize, Option<usize>),
    /// The point, world frame.
    pub point: &'a Vector3<f64>,
    /// The unit normal, world frame.
    pub normal: &'a Vector3<f64>,
    /// Signed distance (negative: penetration), m.
    pub dist: f64,
    /// Friction coefficient.
    pub mu: f64,
    /// Warm-start slot.
    pub key: usize,
}

impl Row {
    /// A row at buffer offset `at` over `from..to` with J M⁻¹ Jᵀ = `d` (a row with no
    /// effective mass is inert).
    fn new(at: usize, span: (usize, usize), d: f64, rhs: f64, lo: f64, hi: f64, lambda: f64) -> Row {
        Row {
            cfm: 0.0,
            at,
            from: span.0,
            to: span.1,
            inv_d: if d > 1e-12 { 1.0 / d } else { 0.0 },
            rhs,
            lo,
            hi,
            lambda,
        }
    }
}

/// A contact point: normal then two friction rows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Contact {
    /// Normal, first and second friction row.
    pub rows: [Row; 3],
    /// Coulomb friction.
    pub mu: f64,
    /// Warm-start slot (`usize::MAX`: none).
    pub key: usize,
    /// World directions of the three rows (normal, friction, friction).
    pub dirs: [Vector3<f64>; 3],
    /// The collider the normal points at and the other one (`usize::MAX`: the world).
    pub colliders: [usize; 2],
}

/// The rows of one step and what carries over to the next (the solver's buffers).
#[derive(Default)]
pub(crate) struct Rows {
    /// Jacobians, n entries per row.
    pub jrow: Vec<f64>,
    /// M⁻¹ Jᵀ, n entries per row.
    pub wrow: Vec<f64>,
    /// Drive and limit rows.
    pub singles: Vec<Row>,
    /// Contacts.
    pub contacts: Vec<Contact>,
    /// Warm start: per ground-contact slot (collider × 8 corners) the last impulses.
    pub warm: Vec<[f64; 3]>,
    /// Next step's warm start, being filled.
    pub warm_next: Vec<[f64; 3]>,
    /// Warm start of each body's drive row (tree order).
    pub drive_warm: Vec<f64>,
    /// Index in `singles` of each body's drive row this step.
    pub drive_rows: Vec<Option<usize>>,
}

impl Rows {
    /// Buffers for `bodies` tree bodies and `slots` warm-started contact slots.
    pub fn new(bodies: usize, slots: usize) -> Rows {
        Rows {
            warm: vec![[0.0; 3]; slots],
            warm_next: vec![[0.0; 3]; slots],
            drive_warm: vec![0.0; bodies],
            drive_rows: vec![None; bodies],
            ..Rows::default()
        }
    }

    /// Empties the rows of the last step.
    pub fn clear(&mut self) {
        self.jrow.clear();
        self.wrow.clear();
        self.singles.clear();
        self.contacts.clear();
        self.drive_rows.fill(None);
    }

    /// A row whose Jacobian is the sum over `parts` of `w · V_b` (bodies of different trees);
    /// returns it with its effective mass.
    pub fn body_row(
        &mut self,
        model: &Model,
        kin: &Kinematics,
        minv: &[f64],
        parts: &[(usize, Vector6<f64>)],
        Target { rhs, lo, hi }: Target,
        lambda: f64,
    ) -> Row {
        let n = model.n;
        let at = self.jrow.len();
        self.jrow.resize(at + n, 0.0);
        self.wrow.resize(at + n, 0.0);
        let mut span = (n, 0);
        for (b, w) in parts {
            let path = &model.bodies[*b].path;
            for (i, &k) in path.iter().enumerate() {
                let v = if i < 6 { w[i] } else { w.dot(&kin.s[model.dof_body[k]]) };
                self.jrow[at + k] = v;
            }
            let dofs = model.dofs_of(*b);
            span = (span.0.min(dofs.start), span.1.max(dofs.end));
            for &k in path {
                let j = self.jrow[at + k];
                let column = &minv[k * n + dofs.start..k * n + dofs.end];
                for (out, m) in self.wrow[at + dofs.start..at + dofs.end].iter_mut().zip(column) {
                    *out += m * j;
                }
            }
        }
        let mut d = 0.0;
        for (b, _) in parts {
            for &k in &model.bodies[*b].path {
                d += self.jrow[at + k] * self.wrow[at + k];
            }
        }
        Row::new(at, span, d, rhs, lo, hi, lambda)
    }

    /// A row on one generalised coordinate `k` of the tree spanning `dofs`.
    pub fn dof_row(
        &mut self,
        n: usize,
        minv: &[f64],
        k: usize,
        dofs: std::ops::Range<usize>,
        Target { rhs, lo, hi }: Target,
    ) -> Row {
        let at = self.jrow.len();
        self.jrow.resize(at + n, 0.0);
        self.jrow[at + k] = 1.0;
        self.wrow.extend_from_slice(&minv[k * n..(k + 1) * n]);
        let d = minv[k * n + k];
        Row::new(at, (dofs.start, dofs.end), d, rhs, lo, hi, 0.0)
    }

    /// The drive row of every driven joint (servo or velocity drive, warm started with its
    /// last impulse) and the limit rows of joints near a limit. `targets` per tree body,
    /// tree sign.
    pub fn drive_and_limit_rows(
        &mut self,
        model: &Model,
        state: &State,
        targets: &[f64],
        minv: &[f64],
        params: &NativeParams,
    ) {
        let (n, dt) = (model.n, params.dt);
        for (b, body) in model.bodies.iter().enumerate() {
            if body.parent.is_none() {
                continue;
            }
            let k = body.dof;
            let q = state.q[b];
            let dofs = model.dofs_of(b);
            if !matches!(body.drive, Drive::Free) {
                let w = body.drive.commanded_speed(targets[b], q);
                let cap = body.drive.max_torque() * dt;
                let mut row = self.dof_row(
                    n,
                    minv,
                    k,
                    dofs.clone(),
                    Target {
                        rhs: w,
                        lo: -cap,
                        hi: cap,
                    },
                );
                row.lambda = self.drive_warm[b].clamp(-cap, cap);
                self.drive_rows[b] = Some(self.singles.len());
                self.singles.push(row);
            }
            let (lower, upper) = (body.lower, body.upper);
            if q < lower + LIMIT_MARGIN {
                let gap = q - lower;
                let rhs = if gap < 0.0 { -gap * params.erp / dt } else { -gap / dt };
                let row = self.dof_row(
                    n,
                    minv,
                    k,
                    dofs.clone(),
                    Target {
                        rhs,
                        lo: 0.0,
                        hi: f64::INFINITY,
                    },
                );
                self.singles.push(row);
            }
            if q > upper - LIMIT_MARGIN {
                let gap = upper - q;
                let rhs = if gap < 0.0 { gap * params.erp / dt } else { gap / dt };
                let row = self.dof_row(
                    n,
                    minv,
                    k,
                    dofs,
                    Target {
                        rhs,
                        lo: f64::NEG_INFINITY,
                        hi: 0.0,
                    },
                );
                self.singles.push(row);
            }
        }
    }

    /// A contact at world point `point` with unit normal `normal` (pointing at body `b`,
    /// away from `other`, which is None for the fixed world) at signed distance `dist`:
    /// a normal and two friction rows, warm started from slot `key`.
    pub fn contact(&mut self, model: &Model, kin: &Kinematics, minv: &[f64], params: &NativeParams, c: ContactAt<'_>) {
        let ContactAt {
            bodies: (b, other),
            point,
            normal,
            dist,
            mu,
            key,
        } = c;
        // Approaching up to touching is free; a penetration is pushed out at erp per step.
        let rhs = if dist > 0.0 {
            -dist / params.dt
        } else {
            params.erp * (-dist - params.slop).max(0.0) / params.dt
        };
        let t1 = if normal.z.abs() < 0.9 {
            normal.cross(&Vector3::z()).normalize()
        } else {
            normal.cross(&Vector3::x()).normalize()
        };
        let t2 = normal.cross(&t1);
        let warm = if key < self.warm.len() {
            self.warm[key]
        } else {
            [0.0; 3]
        };
        let mut rows = [Row::new(0, (0, 0), 0.0, 0.0, 0.0, 0.0, 0.0); 3];
        for (i, dir) in [normal, &t1, &t2].into_iter().enumerate() {
            let w = point_wrench(point, dir);
            let target = if i == 0 {
                Target {
                    rhs,
                    lo: 0.0,
                    hi: f64::INFINITY,
                }
            } else {
                Target {
                    rhs: 0.0,
                    lo: f64::NEG_INFINITY,
                    hi: f64::INFINITY,
                }
            };
            let mut row = match other {
                None => self.body_row(model, kin, minv, &[(b, w)], target, warm[i]),
                Some(o) => self.body_row(model, kin, minv, &[(b, w), (o, -w)], target, warm[i]),
            };
            if row.inv_d > 0.0 {
                row.cfm = params.cfm / row.inv_d;
                row.inv_d = 1.0 / (1.0 / row.inv_d + row.cfm);
            }
            rows[i] = row;
        }
        self.contacts.push(Contact {
            rows,
            mu,
            key,
            dirs: [*normal, t1, t2],
            colliders: [usize::MAX; 2],
        });
    }

    /// Names the colliders of the contact just added: `ci` (the normal points at it) and
    /// `other` (None: the world).
    pub fn tag_last(&mut self, ci: usize, other: Option<usize>) {
        if let Some(c) = self.contacts.last_mut() {
            c.colliders = [ci, other.unwrap_or(usize::MAX)];
        }
    }
}
