//! Role#1's camera locked on the current reference object (seed-000 §6.5; decision record
//! 0049): the configuration's position comes from that camera, not from the simulator.
//!
//! Every [`LOCK_PERIOD_S`] the mast camera of Role#1 looks. Each tagged object in view
//! whose position the modelling step gave (a landmark) places the reference point: the
//! object's modelled position less the measured vector to it, the vector carried from the
//! lens into the foot frame through the module's encoders and kinematic model, and into
//! the world by the foot's attitude (IMU and compass, as the source read the global yaw).
//! The estimate is the mean over the last [`WINDOW`] looks. The pan centres the row's
//! reference when it is in view (the source's `pan += atan2(detP_x, detP_z)` in its
//! z-forward frame), else the nearest landmark in view: the source locks on the reference
//! only, but its camera, 0.1 m ahead of the reference point and unable to tilt down more
//! than 10°, loses the ground obstacle before the approach point and the target before
//! the goal (record 0049). With nothing in view the pan searches in +10° steps (the
//! source's `search_target`; the tilt stays level) and the configuration stops until a
//! landmark is seen again (§6.5).

use std::collections::VecDeque;

use modbot_core::{LinkTree, ModuleCatalog, Topology};
use modbot_gaits::modular::{ModuleJoints, wrap_rad};
use modbot_sim::{Camera, CameraNoise, Detectable, Simulator};
use nalgebra::{Isometry3, Point3, Translation3};

use crate::scan::{CAMERA_LINK, FOOT_LINK, detectables, tagged_objects, wheelfoot_camera};

/// Time between two looks, s.
pub const LOCK_PERIOD_S: f64 = 0.1;
/// The pan's search step when the object is lost, deg (the source's 10°).
pub const SEARCH_STEP_DEG: f64 = 10.0;
/// Sightings averaged into the position estimate.
pub const WINDOW: usize = 5;
/// The object counts as lost when not seen for this long, s.
pub const LOST_AFTER_S: f64 = 0.5;

/// Role#1's camera, locked on one object at a time.
pub struct LockOn {
    camera: Camera,
    marks: Vec<Detectable>,
    joints: ModuleJoints,
    /// The simulator's index of each of the module model's joints, in the tree's order.
    model_joints: Vec<usize>,
    tree: LinkTree,
    tree_foot: usize,
    tree_camera: usize,
    lens: Isometry3<f64>,
    foot_link: usize,
    /// Every tagged object's modelled position (world x, y), by name.
    landmarks: std::collections::BTreeMap<String, [f64; 2]>,
    /// The row's reference, the object the camera prefers.
    object: Option<String>,
    pan_target: f64,
    recent: VecDeque<[f64; 2]>,
    estimate: Option<[f64; 2]>,
    last_seen_s: f64,
    next_look_s: f64,
    /// Sightings and looks since the start, for the report.
    pub sightings: usize,
    /// Looks since the start.
    pub looks: usize,
}

impl LockOn {
    /// The lock-on of `module` (its robot index) of a fleet simulator of `world`, its joints
    /// `joints`, with the cameras' `noise` drawn from `seed`.
    pub fn new(
        sim: &Simulator,
        world: &modbot_core::Scenario,
        module: usize,
        joints: ModuleJoints,
        noise: CameraNoise,
        seed: u64,
        landmarks: std::collections::BTreeMap<String, [f64; 2]>,
    ) -> Result<LockOn, String> {
        let catalog = ModuleCatalog::builtin();
        let topology = Topology::resolve("wheelfoot", &catalog).map_err(|e| e.to_string())?;
        let tree = LinkTree::new(&topology);
        let link = |name: &str| {
            tree.links
                .iter()
                .position(|l| l.name == name)
                .ok_or_else(|| format!("the wheel-foot module has no link `{name}`"))
        };
        let (tree_foot, tree_camera) = (link(FOOT_LINK)?, link(CAMERA_LINK)?);
        let names = sim.joint_names();
        let range = sim.joints_of(module);
        let model_joints = topology
            .joint_names()
            .iter()
            .map(|j| {
                range
                    .clone()
                    .find(|&k| names[k] == *j)
                    .ok_or_else(|| format!("module {} has no joint `{j}`", module + 1))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let foot_link = sim
            .links_of(module)
            .find(|&l| sim.link_names()[l] == FOOT_LINK)
            .ok_or_else(|| format!("module {} has no link `{FOOT_LINK}`", module + 1))?;
        let objects = tagged_objects(world);
        // Only the tagged objects: the reference is never a module.
        let marks: Vec<Detectable> = detectables(module, sim.robot_count(), &objects)
            .into_iter()
            .filter(|d| objects.iter().any(|o| o.name == d.id))
            .collect();
        // Its own noise stream, apart from the scan's (streams 0…5).
        let camera = Camera::new(wheelfoot_camera(module, noise), seed, 100 + module as u64).map_err(|e| e.to_string())?;
        let lens = camera.spec().pose;
        Ok(LockOn {
            camera,
            marks,
            joints,
            model_joints,
            tree,
            tree_foot,
            tree_camera,
            lens,
            foot_link,
            landmarks,
            object: None,
            pan_target: 0.0,
            recent: VecDeque::with_capacity(WINDOW),
            estimate: None,
            last_seen_s: f64::NEG_INFINITY,
            next_look_s: f64::NEG_INFINITY,
            sightings: 0,
            looks: 0,
        })
    }

    /// Prefers `name` (the row's reference) from now on.
    pub fn set_object(&mut self, name: &str) {
        if self.object.as_deref() != Some(name) {
            self.object = Some(name.to_string());
        }
    }

    /// Whether a landmark was seen within [`LOST_AFTER_S`].
    pub fn locked(&self, now: f64) -> bool {
        now - self.last_seen_s <= LOST_AFTER_S
    }

    /// The estimated reference point (world x, y), if the object has been seen.
    pub fn estimate(&self) -> Option<[f64; 2]> {
        self.estimate
    }

    /// Looks, if it is time: updates the estimate and the pan.
    pub fn update(&mut self, sim: &Simulator) -> Result<(), String> {
        let now = sim.time();
        if now + 1e-9 < self.next_look_s {
            return Ok(());
        }
        self.next_look_s = now + LOCK_PERIOD_S;
        let name = self.object.clone().unwrap_or_default();
        self.looks += 1;
        let seen = self.camera.capture(sim, &self.marks).map_err(|e| e.to_string())?;
        let q = sim.joint_positions();
        // Every landmark in view gives the reference point's position: its modelled
        // position less the measured vector to it.
        let qi: Vec<f64> = self.model_joints.iter().map(|&k| q[k]).collect();
        let frames = self
            .tree
            .link_frames(&self.tree.forward(&qi, &Isometry3::identity()).map_err(|e| e.to_string())?);
        let lens_in_foot = frames[self.tree_foot].inverse() * frames[self.tree_camera] * self.lens;
        let attitude = sim.link_poses()[self.foot_link].rotation;
        let mut sum = [0.0, 0.0];
        let mut count = 0usize;
        for d in &seen {
            let Some(xy) = self.landmarks.get(&d.id) else {
                continue;
            };
            let v = attitude * (lens_in_foot * Point3::from(d.position)).coords;
            sum = [sum[0] + xy[0] - v.x, sum[1] + xy[1] - v.y];
            count += 1;
        }
        if count > 0 {
            self.sightings += 1;
            self.last_seen_s = now;
            if self.recent.len() == WINDOW {
                self.recent.pop_front();
            }
            self.recent.push_back([sum[0] / count as f64, sum[1] / count as f64]);
            let n = self.recent.len() as f64;
            let (sx, sy) = self.recent.iter().fold((0.0, 0.0), |(a, b), p| (a + p[0], b + p[1]));
            self.estimate = Some([sx / n, sy / n]);
        }
        if std::env::var("LOCK_DEBUG").is_ok() && self.looks % 5 == 0 {
            let f = sim.link_poses()[self.foot_link];
            eprintln!("look t {:.1} obj {name} est {:?} truth ({:.3},{:.3}) pan q {:.1} target {:.1} seen {:?}", now, self.estimate, f.translation.x, f.translation.y, q[self.joints.pan].to_degrees(), self.pan_target.to_degrees(), seen.iter().map(|d| d.id.clone()).collect::<Vec<_>>());
        }
        // The pan centres the reference when it is in view, else the nearest landmark in
        // view (so that the camera keeps one), else it searches.
        let centre = seen.iter().find(|d| d.id == name).or_else(|| {
            seen.iter()
                .filter(|d| self.landmarks.contains_key(&d.id))
                .min_by(|a, b| a.position.norm().total_cmp(&b.position.norm()))
        });
        match centre {
            Some(d) => self.pan_target = wrap_rad(q[self.joints.pan] + d.position.y.atan2(d.position.x)),
            None if !self.locked(now) => {
                self.pan_target = wrap_rad(self.pan_target + SEARCH_STEP_DEG.to_radians());
            }
            None => {}
        }
        Ok(())
    }

    /// The pan target, rad.
    pub fn pan_target(&self) -> f64 {
        self.pan_target
    }

    /// Role#1's camera joints as the lock-on commands them.
    pub fn joints(&self) -> ModuleJoints {
        self.joints
    }

    /// The base pose the controllers see: the foot's attitude and height from the
    /// simulator (IMU, compass), its horizontal position from the camera.
    pub fn base(&self, sim: &Simulator) -> Option<Isometry3<f64>> {
        let e = self.estimate?;
        let p = sim.link_poses()[self.foot_link];
        Some(Isometry3::from_parts(
            Translation3::new(e[0], e[1], p.translation.z),
            p.rotation,
        ))
    }
}
