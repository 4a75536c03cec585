//! What a wheel-foot module knows of its mast camera's pose (decision records 0047, 0058):
//! its joint encoders and compass, kept for a second with their stamps, and its kinematic
//! model (`LinkTree`: the lens's pose in the foot frame, the source's mast offsets, the foot
//! taken as level). A detection is carried into world axes with the angles and the compass
//! **at the frame's capture stamp**, interpolated between the readings on either side (as
//! tf interpolates stamped transforms), never with later ones. Used by the scan and, next,
//! the lock-on.

use std::collections::VecDeque;

use modbot_core::{LinkTree, ModuleCatalog, Topology};
use modbot_gaits::modular::wrap_rad;
use nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion, Vector3};

use crate::interface::{ImuReading, JointStates};

/// Readings older than this are forgotten, s.
pub const HISTORY_S: f64 = 1.0;
/// A stamp this far outside the readings' span takes the nearest one, s; farther out there
/// is no answer (a frame older than the history, or newer than any reading).
pub const EDGE_S: f64 = 0.05;
/// The lens in the `camera` link's frame: the centre of the camera box's front face.
pub const LENS_M: [f64; 3] = [0.0075, 0.0, 0.0075];
/// The lone module's foot link (module `m1` of the `wheelfoot` robot).
pub const FOOT_LINK: &str = "m1_foot";
/// The link the camera sits on.
pub const CAMERA_LINK: &str = "m1_camera";

/// The catalog's wheel-foot module as a link tree: the tree, its joint names (tree order)
/// and a finder of its links by name.
pub(crate) struct WheelfootModel {
    pub tree: LinkTree,
    pub joints: Vec<String>,
}

impl WheelfootModel {
    pub(crate) fn new() -> Result<WheelfootModel, String> {
        let topology = Topology::resolve("wheelfoot", &ModuleCatalog::builtin()).map_err(|e| e.to_string())?;
        Ok(WheelfootModel {
            tree: LinkTree::new(&topology),
            joints: topology.joint_names(),
        })
    }

    /// The tree's index of link `name`.
    pub(crate) fn link(&self, name: &str) -> Result<usize, String> {
        self.tree
            .links
            .iter()
            .position(|l| l.name == name)
            .ok_or_else(|| format!("the wheel-foot module has no link `{name}`"))
    }

    /// Where each of the model's joints is among `joint_names` (a module's, command order).
    pub(crate) fn joint_map(&self, joint_names: &[String]) -> Result<Vec<usize>, String> {
        self.joints
            .iter()
            .map(|j| {
                joint_names
                    .iter()
                    .position(|n| n == j)
                    .ok_or_else(|| format!("no joint `{j}`"))
            })
            .collect()
    }
}

/// Stamped samples of a few angles, rad.
#[derive(Debug, Clone, Default)]
struct History(VecDeque<(f64, Vec<f64>)>);

impl History {
    fn remember(&mut self, stamp: f64, value: Vec<f64>) {
        if self.0.back().is_none_or(|(s, _)| *s < stamp) {
            self.0.push_back((stamp, value));
        }
        while self.0.front().is_some_and(|(s, _)| *s < stamp - HISTORY_S) {
            self.0.pop_front();
        }
    }

    /// The angles at `t`: interpolated between the samples on either side, angle by angle
    /// along the shorter way; the nearest end within [`EDGE_S`] outside the samples' span
    /// (a frame captured between two control ticks), `None` farther out.
    fn at(&self, t: f64) -> Option<Vec<f64>> {
        let (a, b, w) = self.bracket(t)?;
        Some(a.iter().zip(b).map(|(x, y)| x + w * wrap_rad(y - x)).collect())
    }

    /// The samples on either side of `t` and the weight of the later one.
    fn bracket(&self, t: f64) -> Option<(&Vec<f64>, &Vec<f64>, f64)> {
        let h = &self.0;
        let (first, last) = (h.front()?, h.back()?);
        if t < first.0 - EDGE_S || t > last.0 + EDGE_S {
            return None;
        }
        match h.iter().position(|(s, _)| *s >= t) {
            Some(0) => Some((&first.1, &first.1, 0.0)),
            Some(k) => {
                let (a, b) = (&h[k - 1], &h[k]);
                Some((&a.1, &b.1, if b.0 > a.0 { (t - a.0) / (b.0 - a.0) } else { 1.0 }))
            }
            None => Some((&last.1, &last.1, 0.0)),
        }
    }

    fn latest(&self) -> Option<&(f64, Vec<f64>)> {
        self.0.back()
    }
}

/// One module's mast camera as the module knows it.
#[derive(Debug, Clone)]
pub struct MastView {
    tree: LinkTree,
    model_joints: Vec<String>,
    /// Model joint → the module's joint index.
    joint_map: Vec<usize>,
    tree_foot: usize,
    tree_camera: usize,
    lens: Isometry3<f64>,
    joints: History,
    compass: History,
    /// (stamp, the IMU's orientation as w, x, y, z).
    attitude: History,
}

impl MastView {
    /// The view of a lone wheel-foot module whose joints are `joint_names` (command order).
    pub fn new(joint_names: &[String]) -> Result<MastView, String> {
        let model = WheelfootModel::new()?;
        let (tree_foot, tree_camera) = (model.link(FOOT_LINK)?, model.link(CAMERA_LINK)?);
        let joint_map = model.joint_map(joint_names)?;
        Ok(MastView {
            tree: model.tree,
            model_joints: model.joints,
            joint_map,
            tree_foot,
            tree_camera,
            lens: Isometry3::from_parts(
                Translation3::new(LENS_M[0], LENS_M[1], LENS_M[2]),
                UnitQuaternion::identity(),
            ),
            joints: History::default(),
            compass: History::default(),
            attitude: History::default(),
        })
    }

    /// Takes a joint state and an IMU reading into the history.
    pub fn observe(&mut self, js: &JointStates, imu: &ImuReading) {
        let q = self.joint_map.iter().map(|&k| js.position[k]).collect();
        self.joints.remember(js.stamp, q);
        self.compass.remember(imu.stamp, vec![imu.yaw()]);
        let q = imu.orientation.quaternion();
        self.attitude.remember(imu.stamp, vec![q.w, q.i, q.j, q.k]);
    }

    /// The IMU's orientation at `t`: the quaternions on either side blended and normalised
    /// (they are 10 ms apart, where this is the slerp to within 1e-6 rad).
    pub fn attitude_at(&self, t: f64) -> Option<UnitQuaternion<f64>> {
        let (a, b, w) = self.attitude.bracket(t)?;
        let pick = |v: &Vec<f64>| nalgebra::Quaternion::new(v[0], v[1], v[2], v[3]);
        let (a, b) = (pick(a), pick(b));
        // The short way: q and −q are one rotation.
        let b = if a.dot(&b) < 0.0 { -b } else { b };
        Some(UnitQuaternion::from_quaternion(a * (1.0 - w) + b * w))
    }

    /// The IMU's newest orientation.
    pub fn attitude_now(&self) -> Option<UnitQuaternion<f64>> {
        let (t, _) = self.attitude.latest()?;
        self.attitude_at(*t)
    }

    /// A point `p` of the camera frame, seen in a frame captured at `stamp`, as a vector from
    /// the foot's reference point in world axes, m, through the IMU's whole orientation (the
    /// foot plate pitches up to 80° in a step, where the level-foot assumption of
    /// [`MastView::world_vector`] fails); `None` before any reading.
    pub fn world_vector_tilted(&self, p: &Vector3<f64>, stamp: f64) -> Result<Option<Vector3<f64>>, String> {
        let (Some(q), Some(attitude)) = (self.joints.at(stamp), self.attitude_at(stamp)) else {
            return Ok(None);
        };
        Ok(Some(attitude * (self.lens_in_foot(&q)? * Point3::from(*p)).coords))
    }

    fn lens_in_foot(&self, q: &[f64]) -> Result<Isometry3<f64>, String> {
        let frames = self.tree.link_frames(
            &self
                .tree
                .forward(q, &Isometry3::identity())
                .map_err(|e| e.to_string())?,
        );
        Ok(frames[self.tree_foot].inverse() * frames[self.tree_camera] * self.lens)
    }

    /// The model's index of joint `name`.
    fn model_index(&self, name: &str) -> Option<usize> {
        self.model_joints.iter().position(|j| j == name)
    }

    /// Joint `name`'s newest angle and its stamp.
    pub fn joint_now(&self, name: &str) -> Option<(f64, f64)> {
        let k = self.model_index(name)?;
        self.joints.latest().map(|(s, q)| (*s, q[k]))
    }

    /// Joint `name`'s angle at `t`.
    pub fn joint_at(&self, name: &str, t: f64) -> Option<f64> {
        Some(self.joints.at(t)?[self.model_index(name)?])
    }

    /// The newest compass heading, rad.
    pub fn compass_now(&self) -> Option<f64> {
        self.compass.latest().map(|(_, c)| c[0])
    }

    /// The compass at `t`, rad.
    pub fn compass_at(&self, t: f64) -> Option<f64> {
        Some(self.compass.at(t)?[0])
    }

    /// A point `p` of the camera frame, seen in a frame captured at `stamp`, as a vector from
    /// the foot's reference point in world axes, m; `None` before any reading.
    pub fn world_vector(&self, p: &Vector3<f64>, stamp: f64) -> Result<Option<Vector3<f64>>, String> {
        let (Some(q), Some(compass)) = (self.joints.at(stamp), self.compass_at(stamp)) else {
            return Ok(None);
        };
        let frames = self.tree.link_frames(
            &self
                .tree
                .forward(&q, &Isometry3::identity())
                .map_err(|e| e.to_string())?,
        );
        let lens_in_foot = frames[self.tree_foot].inverse() * frames[self.tree_camera] * self.lens;
        let level = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), compass);
        Ok(Some(level * (lens_in_foot * Point3::from(*p)).coords))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Halfway between two samples the angle is halfway, the short way round ±π.
    #[test]
    fn angles_interpolate_the_short_way() {
        let mut h = History::default();
        h.remember(0.0, vec![0.0, 3.0]);
        h.remember(0.1, vec![1.0, -3.0]);
        let mid = h.at(0.05).unwrap_or_default();
        assert!((mid[0] - 0.5).abs() < 1e-12);
        // From 3.0 to −3.0 is 0.283 rad forward across π, not 6 back.
        let expect = 3.0 + 0.5 * (2.0 * std::f64::consts::PI - 6.0);
        assert!((mid[1] - expect).abs() < 1e-12, "{}", mid[1]);
        assert_eq!(h.at(-0.01), Some(vec![0.0, 3.0]));
        assert_eq!(h.at(0.12), Some(vec![1.0, -3.0]));
        // Farther out than EDGE_S: no answer.
        assert_eq!(h.at(-1.0), None);
        assert_eq!(h.at(1.0), None);
        // Forgotten after a second: the sample at 0 goes, the one at 0.1 stays.
        h.remember(1.05, vec![2.0, 0.0]);
        assert_eq!(h.0.len(), 2);
    }

    /// Level, pan and tilt at zero: the lens is 0.0075 m ahead of and above the DetPoint
    /// (record 0047), so a point 1 m ahead of the lens is (0.0075 + 1, 0, 0.0075) from the
    /// DetPoint; turned by the compass.
    #[test]
    fn a_point_is_carried_into_world_axes() {
        let names: Vec<String> = ["front_joint", "back_joint1", "back_joint2", "cam_pan", "cam_tilt"]
            .iter()
            .map(|j| format!("m1_{j}"))
            .collect();
        let mut v = MastView::new(&names).unwrap_or_else(|e| panic!("{e}"));
        let js = JointStates {
            stamp: 0.0,
            position: vec![0.0; 5],
            velocity: vec![0.0; 5],
            effort: vec![0.0; 5],
        };
        let imu = |yaw: f64| ImuReading {
            stamp: 0.0,
            orientation: UnitQuaternion::from_euler_angles(0.0, 0.0, yaw),
            angular_velocity: Vector3::zeros(),
            linear_acceleration: Vector3::zeros(),
        };
        v.observe(&js, &imu(0.0));
        let w = v
            .world_vector(&Vector3::x(), 0.0)
            .unwrap_or_default()
            .unwrap_or_default();
        assert!(
            (w - Vector3::new(0.102 + 0.0075 + 1.0, 0.0, 0.062 + 0.0075)).norm() < 1e-9,
            "{w}"
        );
        let mut v = MastView::new(&names).unwrap_or_else(|e| panic!("{e}"));
        v.observe(&js, &imu(std::f64::consts::FRAC_PI_2));
        let w = v
            .world_vector(&Vector3::x(), 0.0)
            .unwrap_or_default()
            .unwrap_or_default();
        assert!((w - Vector3::new(0.0, 1.1095, 0.0695)).norm() < 1e-9, "{w}");
    }
}
