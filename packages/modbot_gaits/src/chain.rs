//! Forward kinematics of the hinge-module chains of the limbless-robot thesis, built from
//! a robot graph that is a serial chain of one-hinge modules.
//!
//! Frames (REP 103): the chain's base frame has x along the body from tail to head,
//! z up. A module's hinge axis is +y in the module's own frame; a module rolled 90°
//! about the chain axis therefore has its axis along +z. With the right-hand rule a
//! positive pitch angle bends the head side **down** and a positive yaw angle bends it
//! **left** (+y). The thesis does not fix this sign (spec §9.6); see
//! `docs/decisions/0002-frames-and-signs.md`.
//!
//! Each module is two halves of length L/2 joined by the hinge (the source's hexahedral
//! model with the axis on the centre line). The wired-model points are r_0 (tail end),
//! r_1 … r_M (joints) and r_{M+1} (head end).

use nalgebra::{Isometry3, Matrix4, Point3, Rotation3, Translation3, UnitQuaternion, Vector3};

use modbot_core::catalog::JointType;
use modbot_core::{CoreError, Topology};

use crate::error::{GaitError, Result};

/// Whether a joint bends in the vertical plane (pitch) or the ground plane (yaw) when the
/// chain lies straight in its base pose: the labels the limbless thesis's gaits are
/// written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JointKind {
    /// Bends in the vertical plane (axis +y); the source's "vertical" module.
    Pitch,
    /// Bends in the ground plane (axis +z); the source's "horizontal" module.
    Yaw,
}

impl std::fmt::Display for JointKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            JointKind::Pitch => "pitch",
            JointKind::Yaw => "yaw",
        })
    }
}

/// Roll of a module about the chain axis: 0° for a pitch module, 90° for a yaw module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Roll {
    Deg0,
    Deg90,
}

impl Roll {
    fn degrees(self) -> f64 {
        match self {
            Roll::Deg0 => 0.0,
            Roll::Deg90 => 90.0,
        }
    }
}

fn not_a_chain(t: &Topology, reason: String) -> GaitError {
    GaitError::Core(CoreError::Topology {
        topology: t.name.clone(),
        reason: format!(
            "the thesis's gaits need a hinge chain (one revolute joint per module, axes +y or +z when straight): {reason}; a robot of another shape runs pose sequences (`--poses FILE`)"
        ),
    })
}

/// The pitch/yaw label of every joint of a hinge chain (command order), from the direction
/// of its axis with the robot straight: +y is pitch, +z is yaw. A robot with another kind
/// of joint, or an axis pointing elsewhere, is refused naming the joint.
pub fn joint_kinds(t: &Topology) -> Result<Vec<JointKind>> {
    let tree = modbot_core::LinkTree::new(t);
    let poses = tree.forward(&vec![0.0; tree.joint_count], &Isometry3::identity())?;
    let axes = tree.joint_axes(&poses);
    t.joints()
        .iter()
        .zip(axes)
        .map(|(j, a)| {
            if j.def.kind != JointType::Revolute {
                return Err(not_a_chain(t, format!("joint `{}` is not revolute", j.name)));
            }
            if (a - Vector3::y()).norm() < 1e-9 {
                Ok(JointKind::Pitch)
            } else if (a - Vector3::z()).norm() < 1e-9 {
                Ok(JointKind::Yaw)
            } else {
                Err(not_a_chain(
                    t,
                    format!(
                        "joint `{}` has its axis along ({:.3}, {:.3}, {:.3}) with the robot straight; the chain gaits need +y (pitch) or +z (yaw)",
                        j.name, a.x, a.y, a.z
                    ),
                ))
            }
        })
        .collect()
}

/// A serial chain prepared for kinematics: per-module length, mass and hinge axis,
/// in tail-to-head order.
#[derive(Debug, Clone, PartialEq)]
pub struct Chain {
    /// Joint names in joint-vector order (`joint_1` …).
    pub joint_names: Vec<String>,
    /// Pitch/yaw label of each joint, in joint-vector order.
    pub joint_kinds: Vec<JointKind>,
    /// Module indices from tail to head.
    order: Vec<usize>,
    /// Per module (by module index): length L, m.
    lengths: Vec<f64>,
    /// Per module: mass, kg.
    masses: Vec<f64>,
    /// Per module: roll about the chain axis.
    rolls: Vec<Roll>,
}

/// The pose of every part of a chain for one set of joint angles.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainPose {
    /// Wired-model points r_0 (tail end), r_1 … r_M (joints), r_{M+1} (head end).
    pub points: Vec<Point3<f64>>,
    /// Pose of the centre of each module half, tail half of module 1 first (2M entries),
    /// including the module's roll about its axis.
    pub halves: Vec<Isometry3<f64>>,
    /// Mass of each half, kg (same order as `halves`).
    pub half_masses: Vec<f64>,
    /// Frame of each hinge (at r_i, oriented like the half on its tail side, without the
    /// module's roll), in joint-vector order.
    pub joints: Vec<Isometry3<f64>>,
    /// World direction of each hinge axis, in joint-vector order.
    pub axes: Vec<Vector3<f64>>,
}

impl Chain {
    /// Prepares the chain of a robot: a serial chain from its first module, one revolute
    /// joint per module, each axis +y (pitch) or +z (yaw) with the robot straight. A
    /// module's length is the extent of its shapes along the chain.
    pub fn new(topology: &Topology) -> Result<Chain> {
        let order = topology.chain_order()?;
        let kinds = joint_kinds(topology)?;
        let joints = topology.joints();
        if joints.len() != topology.len() || joints.iter().enumerate().any(|(i, j)| j.module != i) {
            return Err(not_a_chain(topology, "every module needs exactly one joint".into()));
        }
        let mut lengths = Vec::with_capacity(topology.len());
        let mut masses = Vec::with_capacity(topology.len());
        for i in 0..topology.len() {
            let kind = topology.kind_of(i);
            let (lo, hi) = kind.bounds_at_zero();
            lengths.push(hi.x - lo.x);
            masses.push(kind.mass_kg());
        }
        Ok(Chain {
            joint_names: joints.iter().map(|j| j.name.clone()).collect(),
            rolls: kinds
                .iter()
                .map(|k| match k {
                    JointKind::Pitch => Roll::Deg0,
                    JointKind::Yaw => Roll::Deg90,
                })
                .collect(),
            joint_kinds: kinds,
            order,
            lengths,
            masses,
        })
    }

    /// Number of modules (= joints).
    pub fn len(&self) -> usize {
        self.lengths.len()
    }

    /// True for a chain without modules (never built by [`Chain::new`]).
    pub fn is_empty(&self) -> bool {
        self.lengths.is_empty()
    }

    /// Total length l = Σ L, m.
    pub fn total_length(&self) -> f64 {
        self.lengths.iter().sum()
    }

    /// Total mass, kg.
    pub fn total_mass(&self) -> f64 {
        self.masses.iter().sum()
    }

    /// Forward kinematics: joint angles in radians (joint-vector order) and the pose of the
    /// tail end r_0 (x along the body) give the pose of every point, half and hinge.
    pub fn forward(&self, angles: &[f64], base: &Isometry3<f64>) -> Result<ChainPose> {
        let m = self.len();
        if angles.len() != m {
            return Err(CoreError::JointCount {
                expected: m,
                got: angles.len(),
            }
            .into());
        }
        if let Some(i) = angles.iter().position(|a| !a.is_finite()) {
            return Err(CoreError::NotFinite {
                joint: self.joint_names[i].clone(),
                value: angles[i],
            }
            .into());
        }
        let mut points = Vec::with_capacity(m + 2);
        let mut halves = Vec::with_capacity(2 * m);
        let mut half_masses = Vec::with_capacity(2 * m);
        let mut joints = vec![Isometry3::identity(); m];
        let mut axes = vec![Vector3::zeros(); m];
        let mut frame = *base;
        points.push(Point3::from(frame.translation.vector));
        for &k in &self.order {
            let half = self.lengths[k] / 2.0;
            let roll = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), self.rolls[k].degrees().to_radians());
            let axis = roll * Vector3::y_axis();
            halves.push(frame * Translation3::new(half / 2.0, 0.0, 0.0) * roll);
            half_masses.push(self.masses[k] / 2.0);
            frame *= Translation3::new(half, 0.0, 0.0);
            points.push(Point3::from(frame.translation.vector));
            joints[k] = frame;
            axes[k] = frame.rotation * axis.into_inner();
            frame *= UnitQuaternion::from_axis_angle(&axis, angles[k]);
            halves.push(frame * Translation3::new(half / 2.0, 0.0, 0.0) * roll);
            half_masses.push(self.masses[k] / 2.0);
            frame *= Translation3::new(half, 0.0, 0.0);
        }
        points.push(Point3::from(frame.translation.vector));
        Ok(ChainPose {
            points,
            halves,
            half_masses,
            joints,
            axes,
        })
    }
}

impl ChainPose {
    /// Number of modules M.
    pub fn modules(&self) -> usize {
        self.points.len() - 2
    }

    /// Centre of mass by the source's equation (3.4), wired model with equal modules:
    /// r = (r_0 + 3 r_1 + 4 Σ_{i=2}^{M−1} r_i + 3 r_M + r_{M+1}) / (4M).
    pub fn com_wired(&self) -> Point3<f64> {
        let m = self.modules();
        let p = &self.points;
        let mut sum = p[0].coords + 3.0 * p[1].coords + 3.0 * p[m].coords + p[m + 1].coords;
        for q in &p[2..m] {
            sum += 4.0 * q.coords;
        }
        Point3::from(sum / (4.0 * m as f64))
    }

    /// Centre of mass from the half masses at the half centres (any module masses).
    pub fn com(&self) -> Point3<f64> {
        let total: f64 = self.half_masses.iter().sum();
        let sum = self
            .halves
            .iter()
            .zip(&self.half_masses)
            .fold(Vector3::zeros(), |acc, (h, &w)| acc + w * h.translation.vector);
        Point3::from(sum / total)
    }

    /// Orientation vector o = r_{M+1} − r_0, from the tail end to the head end (§3.4).
    pub fn orientation(&self) -> Vector3<f64> {
        self.points[self.points.len() - 1] - self.points[0]
    }

    /// Heading: angle of the orientation vector's ground projection from +x, rad.
    pub fn heading(&self) -> f64 {
        let o = self.orientation();
        o.y.atan2(o.x)
    }
}

/// The homogeneous-transform forward kinematics of the minimal robots exactly as the
/// source writes them (spec §4), in the **source's frame**: y along the body, x the pitch
/// axis, z up, positive pitch angle = head up.
pub mod minimal {
    use super::*;

    fn rx(a: f64) -> Matrix4<f64> {
        Rotation3::from_axis_angle(&Vector3::x_axis(), a).to_homogeneous()
    }
    fn rz(a: f64) -> Matrix4<f64> {
        Rotation3::from_axis_angle(&Vector3::z_axis(), a).to_homogeneous()
    }
    fn ty(d: f64) -> Matrix4<f64> {
        Translation3::new(0.0, d, 0.0).to_homogeneous()
    }
    fn origin_of(h: &Matrix4<f64>) -> Point3<f64> {
        Point3::new(h[(0, 3)], h[(1, 3)], h[(2, 3)])
    }

    /// Minimal PP (2 modules): points P0 … P3 for ground angle φ0 and joints φ1, φ2 (rad).
    /// H_G^0 = R_x(φ0), H_0^1 = T_y(L/2) R_x(φ1), H_1^2 = T_y(L) R_x(φ2).
    pub fn pp_points(l: f64, phi0: f64, phi1: f64, phi2: f64) -> [Point3<f64>; 4] {
        let h0 = rx(phi0);
        let h1 = h0 * ty(l / 2.0) * rx(phi1);
        let h2 = h1 * ty(l) * rx(phi2);
        let h3 = h2 * ty(l / 2.0);
        [origin_of(&h0), origin_of(&h1), origin_of(&h2), origin_of(&h3)]
    }

    /// Minimal PYP (3 modules): points P0 … P4 for ground angle φ0 and joints φ1 (pitch),
    /// φ2 (yaw), φ3 (pitch), rad. H_0^1 = T_y(L/2) R_x(φ1), H_1^2 = T_y(L) R_z(φ2),
    /// H_2^3 = T_y(L) R_x(φ3).
    pub fn pyp_points(l: f64, phi0: f64, phi1: f64, phi2: f64, phi3: f64) -> [Point3<f64>; 5] {
        let h0 = rx(phi0);
        let h1 = h0 * ty(l / 2.0) * rx(phi1);
        let h2 = h1 * ty(l) * rz(phi2);
        let h3 = h2 * ty(l) * rx(phi3);
        let h4 = h3 * ty(l / 2.0);
        [
            origin_of(&h0),
            origin_of(&h1),
            origin_of(&h2),
            origin_of(&h3),
            origin_of(&h4),
        ]
    }

    /// Maps a point from the source's frame (x pitch axis, y body, z up) to modbot's
    /// (x body, y left, z up): (x, y, z) ↦ (y, −x, z), a proper rotation. Under it the
    /// source's pitch angle is the negative of modbot's; yaw angles agree.
    pub fn source_to_modbot(p: &Point3<f64>) -> Point3<f64> {
        Point3::new(p.y, -p.x, p.z)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;
    use modbot_core::ModuleCatalog;
    use std::f64::consts::FRAC_PI_2;

    fn chain(spec: &str) -> Chain {
        let c = ModuleCatalog::builtin();
        Chain::new(&Topology::from_spec(&spec.parse().unwrap(), &c).unwrap()).unwrap()
    }

    #[test]
    fn straight_chain_lies_on_x() {
        let ch = chain("py:4");
        let p = ch.forward(&[0.0; 4], &Isometry3::identity()).unwrap();
        let l = 0.072;
        for (i, q) in p.points.iter().enumerate() {
            let x = if i == 0 {
                0.0
            } else if i == 5 {
                4.0 * l
            } else {
                (i as f64 - 0.5) * l
            };
            assert_relative_eq!(q.coords, Vector3::new(x, 0.0, 0.0), epsilon = 1e-12);
        }
        assert_relative_eq!(p.com_wired(), Point3::new(2.0 * l, 0.0, 0.0), epsilon = 1e-12);
        assert_relative_eq!(p.axes[0], Vector3::y(), epsilon = 1e-12);
        assert_relative_eq!(p.axes[1], Vector3::z(), epsilon = 1e-12);
        assert_relative_eq!(p.orientation(), Vector3::new(4.0 * l, 0.0, 0.0), epsilon = 1e-12);
    }

    #[test]
    fn wrong_joint_count_and_nan_are_refused() {
        let ch = chain("pp:3");
        assert!(matches!(
            ch.forward(&[0.0; 2], &Isometry3::identity()),
            Err(GaitError::Core(CoreError::JointCount { expected: 3, got: 2 }))
        ));
        let e = ch.forward(&[0.0, f64::NAN, 0.0], &Isometry3::identity()).unwrap_err();
        assert!(e.to_string().contains("joint_2"), "{e}");
    }

    /// Hand-computed poses: PP(2), L = 1 (scaled), joint 1 bent 90° head-up.
    #[test]
    fn minimal_pp_by_hand() {
        let l = 0.072;
        // Source frame: P0 = 0, P1 = (0, L/2, 0), P2 = (0, L/2, L), P3 = (0, L/2, 3L/2).
        let src = minimal::pp_points(l, 0.0, FRAC_PI_2, 0.0);
        let expect = [[0.0, 0.0, 0.0], [0.0, 0.5, 0.0], [0.0, 0.5, 1.0], [0.0, 0.5, 1.5]];
        for (p, e) in src.iter().zip(expect) {
            assert_relative_eq!(p.coords, Vector3::from(e) * l, epsilon = 1e-12);
        }
        // modbot: head-up is a negative pitch angle; x is the body axis.
        let p = chain("pp:2")
            .forward(&[-FRAC_PI_2, 0.0], &Isometry3::identity())
            .unwrap();
        let expect = [[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [0.5, 0.0, 1.0], [0.5, 0.0, 1.5]];
        for (p, e) in p.points.iter().zip(expect) {
            assert_relative_eq!(p.coords, Vector3::from(e) * l, epsilon = 1e-12);
        }
        // (3.4) for M = 2: r = (3 r1 + 3 r2 + r3)/8 with r0 = 0.
        let com = (3.0 * Vector3::new(0.5, 0.0, 0.0) + 3.0 * Vector3::new(0.5, 0.0, 1.0) + Vector3::new(0.5, 0.0, 1.5))
            * l
            / 8.0;
        let pose = chain("pp:2")
            .forward(&[-FRAC_PI_2, 0.0], &Isometry3::identity())
            .unwrap();
        assert_relative_eq!(pose.com_wired().coords, com, epsilon = 1e-12);
    }

    /// Hand-computed poses: PYP, yaw joint at +90° (head turns left).
    #[test]
    fn minimal_pyp_by_hand() {
        let l = 0.072;
        let src = minimal::pyp_points(l, 0.0, 0.0, FRAC_PI_2, 0.0);
        let expect = [
            [0.0, 0.0, 0.0],
            [0.0, 0.5, 0.0],
            [0.0, 1.5, 0.0],
            [-1.0, 1.5, 0.0],
            [-1.5, 1.5, 0.0],
        ];
        for (p, e) in src.iter().zip(expect) {
            assert_relative_eq!(p.coords, Vector3::from(e) * l, epsilon = 1e-12);
        }
        let p = chain("pyp")
            .forward(&[0.0, FRAC_PI_2, 0.0], &Isometry3::identity())
            .unwrap();
        let expect = [
            [0.0, 0.0, 0.0],
            [0.5, 0.0, 0.0],
            [1.5, 0.0, 0.0],
            [1.5, 1.0, 0.0],
            [1.5, 1.5, 0.0],
        ];
        for (p, e) in p.points.iter().zip(expect) {
            assert_relative_eq!(p.coords, Vector3::from(e) * l, epsilon = 1e-12);
        }
        assert_relative_eq!(p.heading(), (1.5f64).atan2(1.5), epsilon = 1e-12);
    }
}
