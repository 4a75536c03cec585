//! Spatial vectors in world axes (Featherstone, "Rigid Body Dynamics Algorithms", 2008, ch. 2).
//!
//! A motion vector is `[ω; v₀]`: the angular velocity and the velocity of the body point at
//! the world origin, both in world axes (Plücker coordinates of the world frame, §2.3). A force
//! vector is `[n₀; f]`: the moment about the world origin and the force. With every body's
//! velocity in the one world frame a joint's motion subspace is a constant 6-vector per step
//! and the free root needs no frame bookkeeping.

use nalgebra::{Matrix3, Matrix6, Vector3, Vector6};

/// The motion cross product `v × m` (§2.9, eq. 2.31):
/// `[ω; v₀] × [a; b] = [ω × a; ω × b + v₀ × a]`.
pub(crate) fn cross_motion(v: &Vector6<f64>, m: &Vector6<f64>) -> Vector6<f64> {
    let (w, v0) = (v.fixed_rows::<3>(0), v.fixed_rows::<3>(3));
    let (a, b) = (m.fixed_rows::<3>(0), m.fixed_rows::<3>(3));
    let top = w.cross(&a);
    let bottom = w.cross(&b) + v0.cross(&a);
    Vector6::new(top.x, top.y, top.z, bottom.x, bottom.y, bottom.z)
}

/// The force cross product `v ×* f = −(v ×)ᵀ f` (§2.9, eq. 2.32):
/// `[ω; v₀] ×* [n; f] = [ω × n + v₀ × f; ω × f]`.
pub(crate) fn cross_force(v: &Vector6<f64>, f: &Vector6<f64>) -> Vector6<f64> {
    let (w, v0) = (v.fixed_rows::<3>(0), v.fixed_rows::<3>(3));
    let (n, f3) = (f.fixed_rows::<3>(0), f.fixed_rows::<3>(3));
    let top = w.cross(&n) + v0.cross(&f3);
    let bottom = w.cross(&f3);
    Vector6::new(top.x, top.y, top.z, bottom.x, bottom.y, bottom.z)
}

/// The skew matrix `c×` with `(c×) x = c × x`.
pub(crate) fn skew(c: &Vector3<f64>) -> Matrix3<f64> {
    Matrix3::new(0.0, -c.z, c.y, c.z, 0.0, -c.x, -c.y, c.x, 0.0)
}

/// Spatial inertia about the world origin of mass `m` at `c` with rotational inertia `ic`
/// about `c` in world axes (§2.13, eq. 2.63):
/// `I = [I_c − m c×c×, m c×; −m c×, m 1]`.
pub(crate) fn spatial_inertia(m: f64, c: &Vector3<f64>, ic: &Matrix3<f64>) -> Matrix6<f64> {
    let cx = skew(c);
    let mut out = Matrix6::zeros();
    out.fixed_view_mut::<3, 3>(0, 0).copy_from(&(ic - m * cx * cx));
    out.fixed_view_mut::<3, 3>(0, 3).copy_from(&(m * cx));
    out.fixed_view_mut::<3, 3>(3, 0).copy_from(&(-m * cx));
    out.fixed_view_mut::<3, 3>(3, 3).copy_from(&(Matrix3::identity() * m));
    out
}

/// The angular part ω of a motion vector.
pub(crate) fn angular(v: &Vector6<f64>) -> Vector3<f64> {
    Vector3::new(v[0], v[1], v[2])
}

/// The velocity of the body point `p` (world) under the motion vector `v`: v₀ + ω × p.
pub(crate) fn point_velocity(v: &Vector6<f64>, p: &Vector3<f64>) -> Vector3<f64> {
    Vector3::new(v[3], v[4], v[5]) + angular(v).cross(p)
}

/// The motion-vector row of a unit impulse `dir` applied at world point `p`: the wrench
/// `[p × dir; dir]`, so that `w · V` is the speed of that point along `dir`.
pub(crate) fn point_wrench(p: &Vector3<f64>, dir: &Vector3<f64>) -> Vector6<f64> {
    let m = p.cross(dir);
    Vector6::new(m.x, m.y, m.z, dir.x, dir.y, dir.z)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// ½ Vᵀ I V is the kinetic energy ½ m |v_c|² + ½ ωᵀ I_c ω of the body.
    #[test]
    fn spatial_inertia_gives_the_kinetic_energy() {
        let c = Vector3::new(0.3, -0.2, 0.5);
        let ic = Matrix3::new(0.02, 0.001, 0.0, 0.001, 0.03, -0.002, 0.0, -0.002, 0.025);
        let m = 1.7;
        let v = Vector6::new(0.4, -1.2, 0.7, 0.9, 0.2, -0.3);
        let w = angular(&v);
        let vc = point_velocity(&v, &c);
        let direct = 0.5 * m * vc.norm_squared() + 0.5 * w.dot(&(ic * w));
        let spatial = 0.5 * v.dot(&(spatial_inertia(m, &c, &ic) * v));
        assert!((direct - spatial).abs() < 1e-12, "{direct} {spatial}");
    }
}
