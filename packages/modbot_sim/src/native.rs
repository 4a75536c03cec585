//! modbot's own engine: the robot in reduced coordinates (a free root at the body-tree centre
//! plus one angle per hinge), the composite-rigid-body mass matrix and recursive Newton–Euler
//! bias forces in world-frame spatial algebra (Featherstone), and one projected Gauss–Seidel
//! solve per step over velocity-level rows: the servos (ODE's hinge motor: a target speed with
//! the torque capped), joint limits, and Coulomb contacts (a disc friction cone per point).
//! Semi-implicit Euler. Decision record 0018 says why it exists next to rapier.
//!
//! Spatial vectors are `[ω; v₀]`: angular velocity and the velocity of the body point at the
//! world origin, both in world axes, so every joint's motion subspace is a constant 6-vector
//! per step and the free root needs no frame bookkeeping.

use nalgebra::{DMatrix, Isometry3, Matrix3, Matrix6, Translation3, UnitQuaternion, Vector3, Vector6};
use rapier3d::parry::bounding_volume::{Aabb, BoundingVolume};
use rapier3d::parry::query::{
    ContactManifold, ContactManifoldsWorkspace, DefaultQueryDispatcher, PersistentQueryDispatcher,
};

use crate::convert::{from_vec, to_pose};
use crate::layout::{Layout, ObstacleSpec};

/// Solver settings of the native engine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct NativeParams {
    pub dt: f64,
    pub sweeps: usize,
    pub armature: f64,
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

/// Joint limits are watched from this far inside them, rad.
const LIMIT_MARGIN: f64 = 0.02;

/// A body in tree order (body 0 is the root).
#[derive(Clone)]
struct TreeBody {
    /// Tree parent (None for the root).
    parent: Option<usize>,
    /// Command index of its inbound joint, and −1/+1: tree angle = sign · URDF angle.
    joint: usize,
    sign: f64,
    /// Inbound joint frame (x = axis) in the parent body, and the inverse of it in this body.
    frame_in: Isometry3<f64>,
    frame_out_inv: Isometry3<f64>,
    mass: f64,
    com: Vector3<f64>,
    inertia: Matrix3<f64>,
    /// Generalised coordinates that move it: 0..6 (root) then its joints' indices.
    path: Vec<usize>,
    lower: f64,
    upper: f64,
}

/// A velocity-level constraint row.
#[derive(Debug, Clone, Copy)]
struct Row {
    /// Compliance: the row solves J ν + cfm λ = rhs.
    cfm: f64,
    /// Offset of its J and W in the row buffers.
    at: usize,
    /// 1 / (J M⁻¹ Jᵀ).
    inv_d: f64,
    /// Target of J ν.
    rhs: f64,
    lo: f64,
    hi: f64,
    lambda: f64,
}

impl Row {
    /// A row at buffer offset `at` with J M⁻¹ Jᵀ = `d` (a row with no effective mass is inert).
    fn new(at: usize, d: f64, rhs: f64, lo: f64, hi: f64, lambda: f64) -> Row {
        Row {
            cfm: 0.0,
            at,
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
struct Contact {
    rows: [Row; 3],
    mu: f64,
    /// Warm-start slot.
    key: usize,
}

/// The native world.
pub(crate) struct NativeWorld {
    params: NativeParams,
    gravity: Vector3<f64>,
    bodies: Vec<TreeBody>,
    /// Layout body → tree body.
    tree_of: Vec<usize>,
    /// Command index → tree body moved by that joint.
    body_of_joint: Vec<usize>,
    colliders: Vec<(usize, crate::layout::BodyCollider)>,
    obstacles: Vec<ObstacleSpec>,
    /// Each obstacle's bounding box, loosened by the contact margin (they do not move).
    obstacle_aabbs: Vec<Aabb>,
    ground_mu: f64,
    robot_mu: f64,
    /// Root pose (tree body 0) and joint angles (tree order, tree sign).
    root: Isometry3<f64>,
    q: Vec<f64>,
    /// Generalised velocity: root [ω; v₀] then joint rates.
    nu: Vec<f64>,
    // Kinematics of the current state.
    poses: Vec<Isometry3<f64>>,
    s: Vec<Vector6<f64>>,
    vel: Vec<Vector6<f64>>,
    inertia_o: Vec<Matrix6<f64>>,
    // Work buffers.
    mass: DMatrix<f64>,
    /// M⁻¹, column-major (symmetric, so a column is also a row).
    minv: Vec<f64>,
    jrow: Vec<f64>,
    wrow: Vec<f64>,
    singles: Vec<Row>,
    contacts: Vec<Contact>,
    /// Warm start: per ground-contact slot (collider × 8 corners) the last impulses.
    warm: Vec<[f64; 3]>,
    warm_next: Vec<[f64; 3]>,
    /// Warm start of the servo rows (tree order).
    servo_warm: Vec<f64>,
    /// Index in `singles` of each joint's servo row this step (tree order).
    servo_rows: Vec<usize>,
    /// Servo targets (tree order, tree sign).
    targets: Vec<f64>,
    servo: Vec<crate::robot::Servo>,
    ground: rapier3d::prelude::SharedShape,
    manifolds: Vec<ContactManifold<(), ()>>,
    workspace: Option<ContactManifoldsWorkspace>,
}

fn cross_motion(v: &Vector6<f64>, m: &Vector6<f64>) -> Vector6<f64> {
    let (w, v0) = (v.fixed_rows::<3>(0), v.fixed_rows::<3>(3));
    let (a, b) = (m.fixed_rows::<3>(0), m.fixed_rows::<3>(3));
    let top = w.cross(&a);
    let bottom = w.cross(&b) + v0.cross(&a);
    Vector6::new(top.x, top.y, top.z, bottom.x, bottom.y, bottom.z)
}

fn cross_force(v: &Vector6<f64>, f: &Vector6<f64>) -> Vector6<f64> {
    let (w, v0) = (v.fixed_rows::<3>(0), v.fixed_rows::<3>(3));
    let (n, f3) = (f.fixed_rows::<3>(0), f.fixed_rows::<3>(3));
    let top = w.cross(&n) + v0.cross(&f3);
    let bottom = w.cross(&f3);
    Vector6::new(top.x, top.y, top.z, bottom.x, bottom.y, bottom.z)
}

fn skew(c: &Vector3<f64>) -> Matrix3<f64> {
    Matrix3::new(0.0, -c.z, c.y, c.z, 0.0, -c.x, -c.y, c.x, 0.0)
}

/// Spatial inertia about the world origin of mass `m` at `c` with inertia `ic` about `c`.
fn spatial_inertia(m: f64, c: &Vector3<f64>, ic: &Matrix3<f64>) -> Matrix6<f64> {
    let cx = skew(c);
    let mut out = Matrix6::zeros();
    out.fixed_view_mut::<3, 3>(0, 0).copy_from(&(ic - m * cx * cx));
    out.fixed_view_mut::<3, 3>(0, 3).copy_from(&(m * cx));
    out.fixed_view_mut::<3, 3>(3, 0).copy_from(&(-m * cx));
    out.fixed_view_mut::<3, 3>(3, 3).copy_from(&(Matrix3::identity() * m));
    out
}

/// Inverts a symmetric positive definite `n`×`n` matrix in place (column-major) through its
/// Cholesky factor: M⁻¹ = L⁻ᵀ L⁻¹. False if it is not positive definite. Written by hand
/// because nalgebra's generic `Cholesky::inverse` took a quarter of a step on 14×14
/// matrices (decision 0018).
fn spd_inverse(a: &mut [f64], n: usize) -> bool {
    // L (lower) over the lower triangle, column-major: a[i + j n] = L_ij.
    for j in 0..n {
        let mut d = a[j + j * n];
        for k in 0..j {
            d -= a[j + k * n] * a[j + k * n];
        }
        if !(d > 0.0 && d.is_finite()) {
            return false;
        }
        let d = d.sqrt();
        a[j + j * n] = d;
        for i in j + 1..n {
            let mut v = a[i + j * n];
            for k in 0..j {
                v -= a[i + k * n] * a[j + k * n];
            }
            a[i + j * n] = v / d;
        }
    }
    // L⁻¹ in place (lower triangle).
    for j in 0..n {
        a[j + j * n] = 1.0 / a[j + j * n];
        for i in j + 1..n {
            let mut v = 0.0;
            for k in j..i {
                v -= a[i + k * n] * a[k + j * n];
            }
            a[i + j * n] = v / a[i + i * n];
        }
    }
    // M⁻¹ = L⁻ᵀ L⁻¹: entry (i, j), i ≥ j, is Σ_{k ≥ i} L⁻¹_ki L⁻¹_kj.
    // Off-diagonal results go to the strict upper triangle, which is never read here; the
    // diagonal is written last.
    let mut diag = vec![0.0; n];
    for j in 0..n {
        for i in j..n {
            let mut v = 0.0;
            for k in i..n {
                v += a[k + i * n] * a[k + j * n];
            }
            if i == j {
                diag[j] = v;
            } else {
                a[j + i * n] = v;
            }
        }
    }
    for j in 0..n {
        a[j + j * n] = diag[j];
        for i in j + 1..n {
            a[i + j * n] = a[j + i * n];
        }
    }
    true
}

/// The corners of a box of half extents `h`, in a fixed order (slot numbers).
fn corners(h: &Vector3<f64>) -> [Vector3<f64>; 8] {
    let mut out = [Vector3::zeros(); 8];
    for (i, c) in out.iter_mut().enumerate() {
        *c = Vector3::new(
            if i & 1 == 0 { -h.x } else { h.x },
            if i & 2 == 0 { -h.y } else { h.y },
            if i & 4 == 0 { -h.z } else { h.z },
        );
    }
    out
}

impl NativeWorld {
    pub fn new(layout: &Layout, params: NativeParams) -> NativeWorld {
        // Tree order: breadth first from the centre.
        let center = layout.tree_center();
        let order = layout.joint_order();
        let mut tree_of = vec![usize::MAX; layout.bodies.len()];
        let spec = &layout.bodies[center];
        let mut bodies = vec![TreeBody {
            parent: None,
            joint: usize::MAX,
            sign: 1.0,
            frame_in: Isometry3::identity(),
            frame_out_inv: Isometry3::identity(),
            mass: spec.mass,
            com: spec.com,
            inertia: spec.inertia,
            path: (0..6).collect(),
            lower: f64::NEG_INFINITY,
            upper: f64::INFINITY,
        }];
        tree_of[center] = 0;
        let mut q = Vec::with_capacity(order.len());
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
            let mut path = bodies[parent].path.clone();
            path.push(5 + index);
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
                joint: k,
                sign,
                frame_in,
                frame_out_inv: frame_out.inverse(),
                mass: spec.mass,
                com: spec.com,
                inertia: spec.inertia,
                path,
                lower,
                upper,
            });
        }
        let n = 6 + q.len();
        let colliders: Vec<(usize, crate::layout::BodyCollider)> = layout
            .bodies
            .iter()
            .enumerate()
            .flat_map(|(b, s)| s.colliders.iter().map(move |c| (b, c.clone())))
            .map(|(b, c)| (tree_of[b], c))
            .collect();
        // Solve order: from the centre outwards, alternating sides (as the tree is numbered),
        // so neither end of a chain is favoured by Gauss–Seidel.
        let mut colliders = colliders;
        colliders.sort_by_key(|(b, _)| *b);
        let nb = bodies.len();
        let servo = bodies.iter().skip(1).map(|b| layout.joints[b.joint].servo).collect();
        let mut body_of_joint = vec![0; layout.joints.len()];
        for (i, b) in bodies.iter().enumerate().skip(1) {
            body_of_joint[b.joint] = i;
        }
        let mut world = NativeWorld {
            params,
            body_of_joint,
            gravity: layout.gravity,
            tree_of,
            warm: vec![[0.0; 3]; colliders.len() * 8],
            warm_next: vec![[0.0; 3]; colliders.len() * 8],
            colliders,
            obstacle_aabbs: layout
                .obstacles
                .iter()
                .map(|o| o.shape.compute_aabb(&to_pose(&o.pose)).loosened(params.margin as f32))
                .collect(),
            obstacles: layout.obstacles.clone(),
            ground_mu: layout.ground_friction,
            robot_mu: layout.robot_friction,
            root: layout.bodies[center].pose,
            targets: q.clone(),
            servo_warm: vec![0.0; q.len()],
            servo_rows: vec![0; q.len()],
            q,
            nu: vec![0.0; n],
            poses: vec![Isometry3::identity(); nb],
            s: vec![Vector6::zeros(); nb],
            vel: vec![Vector6::zeros(); nb],
            inertia_o: vec![Matrix6::zeros(); nb],
            mass: DMatrix::zeros(n, n),
            minv: vec![0.0; n * n],
            jrow: Vec::new(),
            wrow: Vec::new(),
            singles: Vec::new(),
            contacts: Vec::new(),
            servo,
            bodies,
            ground: rapier3d::prelude::SharedShape::halfspace(rapier3d::math::Vector::Z),
            manifolds: Vec::new(),
            workspace: None,
        };
        world.kinematics();
        world
    }

    /// Number of generalised velocities.
    fn n(&self) -> usize {
        self.nu.len()
    }

    /// Poses, motion subspaces, velocities and spatial inertias of the current state.
    fn kinematics(&mut self) {
        self.poses[0] = self.root;
        self.vel[0] = Vector6::from_column_slice(&self.nu[0..6]);
        for b in 1..self.bodies.len() {
            let body = &self.bodies[b];
            let p = body.parent.unwrap_or(0);
            let joint_frame = self.poses[p] * body.frame_in;
            let axis = joint_frame.rotation * Vector3::x();
            let o = joint_frame.translation.vector;
            let m = o.cross(&axis);
            self.s[b] = Vector6::new(axis.x, axis.y, axis.z, m.x, m.y, m.z);
            let rot = Isometry3::from_parts(
                Translation3::identity(),
                UnitQuaternion::from_axis_angle(&Vector3::x_axis(), self.q[b - 1]),
            );
            self.poses[b] = joint_frame * rot * body.frame_out_inv;
            self.vel[b] = self.vel[p] + self.s[b] * self.nu[5 + b];
        }
        for b in 0..self.bodies.len() {
            let body = &self.bodies[b];
            let r = self.poses[b].rotation.to_rotation_matrix();
            let c = self.poses[b] * nalgebra::Point3::from(body.com);
            let ic = r * body.inertia * r.transpose();
            self.inertia_o[b] = spatial_inertia(body.mass, &c.coords, &ic);
        }
    }

    /// Mass matrix (composite rigid bodies) and bias forces (Newton–Euler with gravity).
    fn dynamics(&mut self) -> Vec<f64> {
        let n = self.n();
        let nb = self.bodies.len();
        let mut composite = self.inertia_o.clone();
        for b in (1..nb).rev() {
            let p = self.bodies[b].parent.unwrap_or(0);
            let c = composite[b];
            composite[p] += c;
        }
        self.mass.fill(0.0);
        self.mass.view_mut((0, 0), (6, 6)).copy_from(&composite[0]);
        for (b, ic) in composite.iter().enumerate().skip(1) {
            let j = 5 + b;
            let f = ic * self.s[b];
            self.mass[(j, j)] = self.s[b].dot(&f) + self.params.armature;
            let mut a = self.bodies[b].parent.unwrap_or(0);
            while a != 0 {
                let i = 5 + a;
                let v = self.s[a].dot(&f);
                self.mass[(i, j)] = v;
                self.mass[(j, i)] = v;
                a = self.bodies[a].parent.unwrap_or(0);
            }
            for r in 0..6 {
                self.mass[(r, j)] = f[r];
                self.mass[(j, r)] = f[r];
            }
        }
        // Bias: accelerations with ν̇ = 0 and the world accelerating at −g.
        let mut acc = vec![Vector6::zeros(); nb];
        acc[0] = Vector6::new(0.0, 0.0, 0.0, -self.gravity.x, -self.gravity.y, -self.gravity.z);
        let mut force = vec![Vector6::zeros(); nb];
        for b in 0..nb {
            if b > 0 {
                let p = self.bodies[b].parent.unwrap_or(0);
                acc[b] = acc[p] + cross_motion(&self.vel[b], &self.s[b]) * self.nu[5 + b];
            }
            let iv = self.inertia_o[b] * self.vel[b];
            force[b] = self.inertia_o[b] * acc[b] + cross_force(&self.vel[b], &iv);
        }
        let mut bias = vec![0.0; n];
        for b in (1..nb).rev() {
            bias[5 + b] = self.s[b].dot(&force[b]) + self.params.joint_damping * self.nu[5 + b];
            let p = self.bodies[b].parent.unwrap_or(0);
            let f = force[b];
            force[p] += f;
        }
        bias[0..6].copy_from_slice(force[0].as_slice());
        bias
    }

    /// Adds a row whose Jacobian is the wrench-like 6-vector `w` on tree body `b`
    /// (J ν = w · V_b); returns it with its effective mass.
    fn body_row(&mut self, b: usize, w: &Vector6<f64>, rhs: f64, lo: f64, hi: f64, lambda: f64) -> Row {
        let n = self.n();
        let at = self.jrow.len();
        self.jrow.resize(at + n, 0.0);
        self.wrow.resize(at + n, 0.0);
        let path = &self.bodies[b].path;
        for &k in path {
            let v = if k < 6 { w[k] } else { w.dot(&self.s[k - 5]) };
            self.jrow[at + k] = v;
        }
        let mut d = 0.0;
        for &k in path {
            let j = self.jrow[at + k];
            let column = &self.minv[k * n..(k + 1) * n];
            for (out, m) in self.wrow[at..at + n].iter_mut().zip(column) {
                *out += m * j;
            }
        }
        for &k in path {
            d += self.jrow[at + k] * self.wrow[at + k];
        }
        Row::new(at, d, rhs, lo, hi, lambda)
    }

    /// A row on one generalised coordinate.
    fn dof_row(&mut self, k: usize, rhs: f64, lo: f64, hi: f64) -> Row {
        let n = self.n();
        let at = self.jrow.len();
        self.jrow.resize(at + n, 0.0);
        self.jrow[at + k] = 1.0;
        self.wrow.extend_from_slice(&self.minv[k * n..(k + 1) * n]);
        let d = self.minv[k * n + k];
        Row::new(at, d, rhs, lo, hi, 0.0)
    }

    fn contact(&mut self, b: usize, point: &Vector3<f64>, normal: &Vector3<f64>, dist: f64, mu: f64, key: usize) {
        let p = &self.params;
        // Approaching up to touching is free; a penetration is pushed out at erp per step.
        let rhs = if dist > 0.0 {
            -dist / p.dt
        } else {
            p.erp * (-dist - p.slop).max(0.0) / p.dt
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
        let mut rows = [Row::new(0, 0.0, 0.0, 0.0, 0.0, 0.0); 3];
        for (i, dir) in [normal, &t1, &t2].into_iter().enumerate() {
            let m = point.cross(dir);
            let w = Vector6::new(m.x, m.y, m.z, dir.x, dir.y, dir.z);
            let (r, lo, hi) = if i == 0 {
                (rhs, 0.0, f64::INFINITY)
            } else {
                (0.0, f64::NEG_INFINITY, f64::INFINITY)
            };
            let mut row = self.body_row(b, &w, r, lo, hi, warm[i]);
            if row.inv_d > 0.0 {
                row.cfm = self.params.cfm / row.inv_d;
                row.inv_d = 1.0 / (1.0 / row.inv_d + row.cfm);
            }
            rows[i] = row;
        }
        self.contacts.push(Contact { rows, mu, key });
    }

    fn collide(&mut self) {
        let margin = self.params.margin;
        let ground_mu = self.ground_mu.min(self.robot_mu);
        for ci in 0..self.colliders.len() {
            let (b, c) = (self.colliders[ci].0, &self.colliders[ci].1);
            let pose = self.poses[b] * c.local;
            if let Some(h) = c.half_box {
                let corners = corners(&h);
                for (k, corner) in corners.iter().enumerate() {
                    let x = pose * nalgebra::Point3::from(*corner);
                    if x.z < margin {
                        self.contact(b, &x.coords, &Vector3::z(), x.z, ground_mu, ci * 8 + k);
                    }
                }
            } else {
                let ground = self.ground.clone();
                self.manifold_contacts(b, &pose, ci, ground.as_ref(), &Isometry3::identity(), ground_mu);
            }
            if self.obstacles.is_empty() {
                continue;
            }
            let aabb = self.colliders[ci].1.shape.compute_aabb(&to_pose(&pose));
            for oi in 0..self.obstacles.len() {
                if !aabb.intersects(&self.obstacle_aabbs[oi]) {
                    continue;
                }
                let o = &self.obstacles[oi];
                let (shape, at, mu) = (o.shape.clone(), o.pose, o.friction.min(self.robot_mu));
                self.manifold_contacts(b, &pose, ci, shape.as_ref(), &at, mu);
            }
        }
    }

    /// Contacts between a robot collider (tree body `b`, world pose `pose`) and a world shape,
    /// from parry's contact manifolds.
    fn manifold_contacts(
        &mut self,
        b: usize,
        pose: &Isometry3<f64>,
        ci: usize,
        other: &dyn rapier3d::parry::shape::Shape,
        other_pose: &Isometry3<f64>,
        mu: f64,
    ) {
        let shape = self.colliders[ci].1.shape.clone();
        let pos12 = to_pose(&(other_pose.inverse() * pose));
        let mut manifolds = std::mem::take(&mut self.manifolds);
        manifolds.clear();
        let ok = DefaultQueryDispatcher
            .contact_manifolds(
                &pos12,
                other,
                shape.as_ref(),
                self.params.margin as f32,
                &mut manifolds,
                &mut self.workspace,
            )
            .is_ok();
        if ok {
            for m in &manifolds {
                // Normal of the world shape, pointing at the robot.
                let n = other_pose.rotation * from_vec(m.local_n1);
                for p in &m.points {
                    let x = other_pose * nalgebra::Point3::from(from_vec(p.local_p1));
                    self.contact(b, &x.coords, &n, p.dist as f64, mu, usize::MAX);
                }
            }
        }
        self.manifolds = manifolds;
    }

    fn apply(&mut self, at: usize, delta: f64) {
        let n = self.nu.len();
        for (v, w) in self.nu.iter_mut().zip(&self.wrow[at..at + n]) {
            *v += w * delta;
        }
    }

    fn jv(&self, at: usize) -> f64 {
        let n = self.nu.len();
        self.jrow[at..at + n].iter().zip(&self.nu).map(|(j, v)| j * v).sum()
    }

    fn solve_single(&mut self, i: usize) {
        let r = self.singles[i];
        let lambda = (r.lambda + (r.rhs - self.jv(r.at)) * r.inv_d).clamp(r.lo, r.hi);
        let delta = lambda - r.lambda;
        if delta != 0.0 {
            self.apply(r.at, delta);
            self.singles[i].lambda = lambda;
        }
    }

    fn solve_contact(&mut self, i: usize) {
        let c = self.contacts[i];
        let [rn, r1, r2] = c.rows;
        let ln = (rn.lambda + (rn.rhs - self.jv(rn.at) - rn.cfm * rn.lambda) * rn.inv_d).max(0.0);
        if ln != rn.lambda {
            self.apply(rn.at, ln - rn.lambda);
        }
        let mut l1 = r1.lambda - (self.jv(r1.at) + r1.cfm * r1.lambda) * r1.inv_d;
        let mut l2 = r2.lambda - (self.jv(r2.at) + r2.cfm * r2.lambda) * r2.inv_d;
        let limit = c.mu * ln;
        let norm = (l1 * l1 + l2 * l2).sqrt();
        if norm > limit {
            let s = if norm > 0.0 { limit / norm } else { 0.0 };
            l1 *= s;
            l2 *= s;
        }
        if l1 != r1.lambda {
            self.apply(r1.at, l1 - r1.lambda);
        }
        if l2 != r2.lambda {
            self.apply(r2.at, l2 - r2.lambda);
        }
        let c = &mut self.contacts[i];
        c.rows[0].lambda = ln;
        c.rows[1].lambda = l1;
        c.rows[2].lambda = l2;
    }

    /// Advances one step. The servo targets are URDF angles in command order.
    pub fn step(&mut self, targets: &[f64]) {
        let n = self.n();
        let dt = self.params.dt;
        for b in 1..self.bodies.len() {
            let body = &self.bodies[b];
            self.targets[b - 1] = body.sign * targets[body.joint];
        }
        let bias = self.dynamics();
        self.minv.copy_from_slice(self.mass.as_slice());
        if !spd_inverse(&mut self.minv, n) {
            // A singular mass matrix cannot be stepped; the state becomes NaN so the caller
            // reports the divergence with the step and the body.
            self.nu.fill(f64::NAN);
            return;
        }
        // Unconstrained velocity.
        for (k, b) in bias.iter().enumerate() {
            let column = &self.minv[k * n..(k + 1) * n];
            for (v, m) in self.nu.iter_mut().zip(column) {
                *v -= dt * m * b;
            }
        }
        // Rows.
        self.jrow.clear();
        self.wrow.clear();
        self.singles.clear();
        self.contacts.clear();
        for b in 1..self.bodies.len() {
            let k = 5 + b;
            let servo = self.servo[b - 1];
            let q = self.q[b - 1];
            let w = (servo.kp * (self.targets[b - 1] - q)).clamp(-servo.max_speed, servo.max_speed);
            let cap = servo.max_torque * dt;
            let mut row = self.dof_row(k, w, -cap, cap);
            row.lambda = self.servo_warm[b - 1].clamp(-cap, cap);
            self.servo_rows[b - 1] = self.singles.len();
            self.singles.push(row);
            let (lower, upper) = (self.bodies[b].lower, self.bodies[b].upper);
            if q < lower + LIMIT_MARGIN {
                let gap = q - lower;
                let rhs = if gap < 0.0 {
                    -gap * self.params.erp / dt
                } else {
                    -gap / dt
                };
                let row = self.dof_row(k, rhs, 0.0, f64::INFINITY);
                self.singles.push(row);
            }
            if q > upper - LIMIT_MARGIN {
                let gap = upper - q;
                let rhs = if gap < 0.0 {
                    gap * self.params.erp / dt
                } else {
                    gap / dt
                };
                let row = self.dof_row(k, rhs, f64::NEG_INFINITY, 0.0);
                self.singles.push(row);
            }
        }
        self.collide();
        // Warm start: last step's servo and contact impulses.
        for i in 0..self.singles.len() {
            let r = self.singles[i];
            if r.lambda != 0.0 {
                self.apply(r.at, r.lambda);
            }
        }
        for i in 0..self.contacts.len() {
            let c = self.contacts[i];
            for r in c.rows {
                if r.lambda != 0.0 {
                    self.apply(r.at, r.lambda);
                }
            }
        }
        // Projected Gauss–Seidel, alternating the sweep direction so neither end of a chain
        // is favoured.
        for sweep in 0..self.params.sweeps {
            if sweep % 2 == 0 {
                for i in 0..self.singles.len() {
                    self.solve_single(i);
                }
                for i in 0..self.contacts.len() {
                    self.solve_contact(i);
                }
            } else {
                for i in (0..self.contacts.len()).rev() {
                    self.solve_contact(i);
                }
                for i in (0..self.singles.len()).rev() {
                    self.solve_single(i);
                }
            }
        }
        for v in self.warm_next.iter_mut() {
            *v = [0.0; 3];
        }
        for c in &self.contacts {
            if c.key < self.warm_next.len() {
                self.warm_next[c.key] = [c.rows[0].lambda, c.rows[1].lambda, c.rows[2].lambda];
            }
        }
        std::mem::swap(&mut self.warm, &mut self.warm_next);
        for (warm, &row) in self.servo_warm.iter_mut().zip(&self.servo_rows) {
            *warm = self.singles[row].lambda;
        }
        // Semi-implicit Euler.
        let w = Vector3::new(self.nu[0], self.nu[1], self.nu[2]);
        let v0 = Vector3::new(self.nu[3], self.nu[4], self.nu[5]);
        let p = self.root.translation.vector;
        let pdot = v0 + w.cross(&p);
        self.root.translation.vector += dt * pdot;
        let rot = UnitQuaternion::from_scaled_axis(w * dt) * self.root.rotation;
        self.root.rotation = UnitQuaternion::new_normalize(rot.into_inner());
        for k in 0..self.q.len() {
            self.q[k] += dt * self.nu[6 + k];
        }
        self.kinematics();
    }

    /// World pose of a layout body.
    pub fn body_pose(&self, layout_body: usize) -> Isometry3<f64> {
        self.poses[self.tree_of[layout_body]]
    }

    /// Linear velocity of the centre of mass and angular velocity of a layout body.
    pub fn body_velocity(&self, layout_body: usize) -> (Vector3<f64>, Vector3<f64>) {
        let b = self.tree_of[layout_body];
        let v = self.vel[b];
        let w = Vector3::new(v[0], v[1], v[2]);
        let c = self.poses[b] * nalgebra::Point3::from(self.bodies[b].com);
        (Vector3::new(v[3], v[4], v[5]) + w.cross(&c.coords), w)
    }

    /// URDF angle of a joint (command index).
    pub fn joint_angle(&self, joint: usize) -> f64 {
        let b = self.body_of_joint[joint];
        self.bodies[b].sign * self.q[b - 1]
    }

    /// Kinetic energy ½ νᵀ M ν of the bodies (no armature), J.
    pub fn kinetic_energy(&self) -> f64 {
        self.vel
            .iter()
            .zip(&self.inertia_o)
            .map(|(v, i)| 0.5 * v.dot(&(i * v)))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spd_inverse_inverts() {
        let n = 7;
        let b = DMatrix::from_fn(n, n, |i, j| {
            ((i * 7 + j * 3) % 5) as f64 - 2.0 + if i == j { 0.5 } else { 0.0 }
        });
        let m = &b * b.transpose() + DMatrix::identity(n, n);
        let mut a = m.as_slice().to_vec();
        assert!(spd_inverse(&mut a, n));
        let inv = DMatrix::from_column_slice(n, n, &a);
        let err = (&m * inv - DMatrix::<f64>::identity(n, n)).abs().max();
        assert!(err < 1e-10, "{err}");
        let mut not_spd = vec![1.0, 2.0, 2.0, 1.0];
        assert!(!spd_inverse(&mut not_spd, 2));
    }

    #[test]
    fn spatial_cross_products_match_the_definitions() {
        let v = Vector6::new(0.3, -1.0, 2.0, 0.5, 0.1, -0.7);
        let m = Vector6::new(-0.2, 0.4, 1.5, 2.0, -1.0, 0.3);
        // v ×* f = −(v ×)ᵀ f: the force product is the negative transpose of the motion one.
        let f = Vector6::new(1.0, 2.0, 3.0, -1.0, 0.5, 0.25);
        let lhs = cross_force(&v, &f).dot(&m);
        let rhs = -f.dot(&cross_motion(&v, &m));
        assert!((lhs - rhs).abs() < 1e-12);
        assert!(cross_motion(&v, &v).norm() < 1e-12);
    }
}
