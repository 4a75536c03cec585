//! Conversions between modbot's nalgebra f64 types and rapier's glam f32 types.

use nalgebra::{Isometry3, Quaternion, Translation3, UnitQuaternion, Vector3};
use rapier3d::glamx::Quat;
use rapier3d::math::{Pose, Vector};

/// nalgebra isometry to rapier pose.
pub fn to_pose(iso: &Isometry3<f64>) -> Pose {
    let t = iso.translation.vector;
    let q = iso.rotation.quaternion();
    Pose::from_parts(
        Vector::new(t.x as f32, t.y as f32, t.z as f32),
        Quat::from_xyzw(q.i as f32, q.j as f32, q.k as f32, q.w as f32).normalize(),
    )
}

/// rapier pose to nalgebra isometry.
pub fn from_pose(p: &Pose) -> Isometry3<f64> {
    let t = p.translation;
    let q = p.rotation;
    Isometry3::from_parts(
        Translation3::new(t.x as f64, t.y as f64, t.z as f64),
        UnitQuaternion::from_quaternion(Quaternion::new(q.w as f64, q.x as f64, q.y as f64, q.z as f64)),
    )
}

/// nalgebra vector to rapier vector.
pub fn to_vec(v: &Vector3<f64>) -> Vector {
    Vector::new(v.x as f32, v.y as f32, v.z as f32)
}

/// rapier vector to nalgebra vector.
pub fn from_vec(v: Vector) -> Vector3<f64> {
    Vector3::new(v.x as f64, v.y as f64, v.z as f64)
}
