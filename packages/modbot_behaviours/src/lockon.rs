//! A lone module's camera locked on landmarks (seed-000 §5.1, §6.5; decision records 0049,
//! 0050, 0058) on the robot interface: the module finds its own reference point from
//! landmarks whose positions it is given (the modelled objects, Role#1's DetPoint, other
//! modules'), and keeps its pan on one of them.
//!
//! Every new camera frame, each landmark in view places the reference point: the landmark's
//! position less the measured vector to it, carried from the lens into the foot frame by the
//! module's joints and kinematic model and into world axes by the IMU's orientation, all **at
//! the frame's capture stamp** ([`MastView::world_vector_tilted`]: the foot plate pitches in a
//! step, so the whole attitude, not the compass alone). The estimate is the mean of the last
//! [`WINDOW`] frames' placings. Secondary landmarks are used only when no primary one is in
//! view; floating ones (another walking module's estimate) leave the estimate unanchored.
//! The pan centres the preferred landmark when in view, else the nearest landmark in view;
//! with none for [`LOST_AFTER_S`] it searches in +10° steps, one per frame (the source's
//! `search_target`).

use std::collections::{BTreeMap, VecDeque};

use modbot_gaits::modular::wrap_rad;
use nalgebra::{Isometry3, Translation3, Vector3};

use crate::interface::{JointTarget, Module, Result as RobotResult, RobotError, fresh};
use crate::mast::MastView;
use crate::{SENSOR_LOST_S, SENSOR_TIMEOUT_S};

/// The pan's search step when nothing is seen, deg (the source's 10°).
pub const SEARCH_STEP_DEG: f64 = 10.0;
/// Frames' placings averaged into the estimate.
pub const WINDOW: usize = 5;
/// The landmarks count as lost when none has been seen for this long, s.
pub const LOST_AFTER_S: f64 = 0.5;
/// The pan joint.
const PAN: &str = "m1_cam_pan";
/// The tilt joint.
const TILT: &str = "m1_cam_tilt";

/// What a landmark's position rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Landmark {
    /// A modelled object or the shared reference point (Role#1's DetPoint): always used.
    Primary,
    /// Known apart from this camera (a docked module's DetPoint): used when no primary
    /// landmark is in view.
    Secondary,
    /// Another walking module's camera estimate: used as a secondary one, and an estimate
    /// resting on these alone is not anchored.
    Floating,
}

/// One camera of a lock-on: a module's mast, and where that module's foot is from the
/// reference foot's.
struct Eye {
    view: MastView,
    pan: usize,
    tilt: usize,
    pan_target: f64,
    last_frame: f64,
    /// This module's foot origin in the reference module's foot frame, m (zero for the
    /// reference module itself).
    offset: Vector3<f64>,
}

/// Cameras locked on landmarks: a lone module's own, or a configuration's body modules'
/// (Role#1's, the reference, and Role#2's, whose foot is joined to Role#1's).
pub struct LockOn {
    eyes: Vec<Eye>,
    landmarks: BTreeMap<String, ([f64; 2], Landmark)>,
    object: Option<String>,
    recent: VecDeque<[f64; 2]>,
    estimate: Option<[f64; 2]>,
    last_seen_s: f64,
    last_anchored_s: f64,
    /// Frames in which some landmark was in view.
    pub sightings: usize,
    /// Frames looked at.
    pub looks: usize,
}

impl LockOn {
    /// The lock-on of a lone wheel-foot module with joints `joint_names` on `landmarks`
    /// (world x, y by tag id; all primary).
    pub fn new(joint_names: &[String], landmarks: BTreeMap<String, [f64; 2]>) -> Result<LockOn, String> {
        LockOn::with_eyes(&[(joint_names, Vector3::zeros())], landmarks)
    }

    /// The lock-on of several modules' cameras: each module's joints and its foot origin in
    /// the first one's foot frame (the first is the reference: its foot is the point
    /// estimated, its IMU the attitude).
    pub fn with_eyes(
        eyes: &[(&[String], Vector3<f64>)],
        landmarks: BTreeMap<String, [f64; 2]>,
    ) -> Result<LockOn, String> {
        if eyes.is_empty() {
            return Err("a lock-on needs a camera".into());
        }
        let eyes = eyes
            .iter()
            .map(|(names, offset)| {
                let find = |j: &str| {
                    names
                        .iter()
                        .position(|n| n == j)
                        .ok_or_else(|| format!("no joint `{j}`"))
                };
                Ok(Eye {
                    view: MastView::new(names)?,
                    pan: find(PAN)?,
                    tilt: find(TILT)?,
                    pan_target: 0.0,
                    last_frame: f64::NEG_INFINITY,
                    offset: *offset,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(LockOn {
            eyes,
            landmarks: landmarks
                .into_iter()
                .map(|(k, xy)| (k, (xy, Landmark::Primary)))
                .collect(),
            object: None,
            recent: VecDeque::with_capacity(WINDOW),
            estimate: None,
            last_seen_s: f64::NEG_INFINITY,
            last_anchored_s: f64::NEG_INFINITY,
            sightings: 0,
            looks: 0,
        })
    }

    /// Takes `xy` as the estimate until the first sighting replaces it (a modelled start).
    pub fn start_from(&mut self, xy: [f64; 2]) {
        if self.sightings == 0 {
            self.estimate = Some(xy);
        }
    }

    /// Sets (or moves) landmark `id` to `xy`, of kind `kind`.
    pub fn set_landmark(&mut self, id: &str, xy: [f64; 2], kind: Landmark) {
        self.landmarks.insert(id.to_string(), (xy, kind));
    }

    /// Forgets landmark `id`.
    pub fn remove_landmark(&mut self, id: &str) {
        self.landmarks.remove(id);
    }

    /// Prefers `name` for the pan from now on.
    pub fn set_object(&mut self, name: &str) {
        self.object = Some(name.to_string());
    }

    /// Whether a landmark was seen within [`LOST_AFTER_S`] of `now`.
    pub fn locked(&self, now: f64) -> bool {
        now - self.last_seen_s <= LOST_AFTER_S
    }

    /// Whether an anchored landmark (not a floating one) was seen within [`LOST_AFTER_S`].
    pub fn anchored(&self, now: f64) -> bool {
        now - self.last_anchored_s <= LOST_AFTER_S
    }

    /// The estimated reference point (world x, y).
    pub fn estimate(&self) -> Option<[f64; 2]> {
        self.estimate
    }

    /// The base pose a controller sees: the estimate with the reference IMU's newest
    /// attitude.
    pub fn base(&self) -> Option<Isometry3<f64>> {
        let e = self.estimate?;
        let attitude = self.eyes[0].view.attitude_now()?;
        Some(Isometry3::from_parts(Translation3::new(e[0], e[1], 0.0), attitude))
    }

    /// The reference module's newest compass heading, rad.
    pub fn compass(&self) -> Option<f64> {
        self.eyes[0].view.compass_now()
    }

    /// A lone module: reads its joints, IMU and newest frame; a new frame updates the
    /// estimate and the pan.
    pub fn update(&mut self, io: &dyn Module) -> RobotResult<()> {
        self.update_eyes(&[io])
    }

    /// Reads each camera's module (`modules[k]` is eye k's) and its newest frame; new frames
    /// update the estimate and the pans.
    pub fn update_eyes(&mut self, modules: &[&dyn Module]) -> RobotResult<()> {
        if modules.len() != self.eyes.len() {
            return Err(RobotError::Binding(format!(
                "{} modules for {} cameras",
                modules.len(),
                self.eyes.len()
            )));
        }
        let mut frames = Vec::new();
        for (k, io) in modules.iter().enumerate() {
            let now = io.now();
            let js = io.joint_states()?;
            let imu = io.imu()?;
            // Readings older than SENSOR_LOST_S end the behaviour; older than their timeout,
            // they leave this eye out of the look (its frame waits) until newer ones come: over
            // a network a node that has not read for a while sees its first readings late.
            fresh("joint_states", Some(js.stamp), now, SENSOR_LOST_S)?;
            fresh("imu", Some(imu.stamp), now, SENSOR_LOST_S)?;
            let late = fresh("joint_states", Some(js.stamp), now, SENSOR_TIMEOUT_S)
                .and_then(|()| fresh("imu", Some(imu.stamp), now, SENSOR_TIMEOUT_S));
            if late.is_err() {
                continue;
            }
            self.eyes[k].view.observe(&js, &imu);
            if let Some(frame) = io.tags()?
                && frame.stamp > self.eyes[k].last_frame
            {
                self.eyes[k].last_frame = frame.stamp;
                frames.push((k, frame));
            }
        }
        let (mut primary, mut secondary, mut anchored) = (Vec::new(), Vec::new(), false);
        let mut newest = f64::NEG_INFINITY;
        for (k, frame) in &frames {
            self.looks += 1;
            newest = newest.max(frame.stamp);
            // The vector from the reference foot to this module's foot, world axes, at the
            // capture (the reference's attitude then).
            let to_foot = self.eyes[0]
                .view
                .attitude_at(frame.stamp)
                .map(|a| a * self.eyes[*k].offset);
            for d in &frame.detections {
                let Some(&(xy, kind)) = self.landmarks.get(&d.id) else {
                    continue;
                };
                let v = self.eyes[*k]
                    .view
                    .world_vector_tilted(&d.position, frame.stamp)
                    .map_err(RobotError::Binding)?;
                let (Some(v), Some(to_foot)) = (v, to_foot) else {
                    continue;
                };
                let v = v + to_foot;
                let placed = [xy[0] - v.x, xy[1] - v.y];
                match kind {
                    Landmark::Primary => primary.push(placed),
                    Landmark::Secondary => {
                        secondary.push(placed);
                        anchored = true;
                    }
                    Landmark::Floating => secondary.push(placed),
                }
            }
            self.aim(*k, &frame.detections, frame.stamp);
        }
        let used = if primary.is_empty() {
            secondary
        } else {
            anchored = true;
            primary
        };
        if used.is_empty() {
            return Ok(());
        }
        self.sightings += 1;
        self.last_seen_s = newest;
        if anchored {
            self.last_anchored_s = newest;
        }
        if self.recent.len() == WINDOW {
            self.recent.pop_front();
        }
        self.recent.push_back(mean(&used));
        self.estimate = Some(mean(self.recent.make_contiguous()));
        Ok(())
    }

    /// Eye k's pan onto the preferred landmark in view, else the nearest one, else searching.
    fn aim(&mut self, k: usize, seen: &[crate::interface::TagDetection], stamp: f64) {
        let name = self.object.clone().unwrap_or_default();
        let centre = seen.iter().find(|d| d.id == name).or_else(|| {
            seen.iter()
                .filter(|d| self.landmarks.contains_key(&d.id))
                .min_by(|a, b| a.range_m().total_cmp(&b.range_m()))
        });
        let last_seen_s = self.last_seen_s;
        let eye = &mut self.eyes[k];
        let pan_then = eye.view.joint_at(PAN, stamp).unwrap_or(eye.pan_target);
        match centre {
            Some(d) => eye.pan_target = wrap_rad(pan_then + d.bearing_rad()),
            None if stamp - last_seen_s > LOST_AFTER_S => {
                eye.pan_target = wrap_rad(eye.pan_target + SEARCH_STEP_DEG.to_radians());
            }
            None => {}
        }
    }

    /// A lone module: writes its camera's pan and tilt targets.
    pub fn command(&self, out: &mut [JointTarget]) {
        self.command_eye(0, out);
    }

    /// Writes eye k's pan and tilt targets into its module's command.
    pub fn command_eye(&self, k: usize, out: &mut [JointTarget]) {
        if let Some(e) = self.eyes.get(k) {
            out[e.pan] = JointTarget::Position(e.pan_target);
            out[e.tilt] = JointTarget::Position(0.0);
        }
    }

    /// Eye k's pan target, rad.
    pub fn pan_target(&self, k: usize) -> Option<f64> {
        self.eyes.get(k).map(|e| e.pan_target)
    }
}

fn mean(points: &[[f64; 2]]) -> [f64; 2] {
    let n = points.len().max(1) as f64;
    let (x, y) = points.iter().fold((0.0, 0.0), |(a, b), p| (a + p[0], b + p[1]));
    [x / n, y / n]
}
