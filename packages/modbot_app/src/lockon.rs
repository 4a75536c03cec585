//! The body modules' cameras locked on the landmarks (seed-000 §6.5; decision record
//! 0049): the configuration's position comes from the cameras, not from the simulator.
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
use modbot_sim::{Camera, CameraNoise, Detectable, Plant};
use nalgebra::{Isometry3, Point3, Translation3};

use crate::embedded::{detectables, tagged_objects, wheelfoot_camera};
use modbot_behaviours::scan::{CAMERA_LINK, FOOT_LINK};

/// Time between two looks, s.
pub const LOCK_PERIOD_S: f64 = 0.1;
/// The pan's search step when the object is lost, deg (the source's 10°).
pub const SEARCH_STEP_DEG: f64 = 10.0;
/// Sightings averaged into the position estimate.
pub const WINDOW: usize = 5;
/// The object counts as lost when not seen for this long, s.
pub const LOST_AFTER_S: f64 = 0.5;

/// What a landmark's position rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Landmark {
    /// A modelled object or the shared reference point (Role#1's DetPoint): always used.
    Primary,
    /// Known apart from this camera (a docked module's DetPoint, from Role#1's point and
    /// the configuration's geometry): used when no primary landmark is in view.
    Secondary,
    /// Another walking module's camera estimate: used as a secondary one, and an estimate
    /// resting on these alone is not anchored (two modules that see only each other would
    /// carry each other away).
    Floating,
}

/// One module's camera in the lock-on.
struct Eye {
    camera: Camera,
    marks: Vec<Detectable>,
    joints: ModuleJoints,
    /// The simulator's index of each of the module model's joints, in the tree's order.
    model_joints: Vec<usize>,
    foot_link: usize,
    pan_target: f64,
}

/// The body modules' cameras (Role#1's and Role#2's), locked on the landmarks.
pub struct LockOn {
    eyes: Vec<Eye>,
    tree: LinkTree,
    tree_foot: usize,
    tree_camera: usize,
    lens: Isometry3<f64>,
    /// Role#1's foot: the configuration's reference point.
    base_link: usize,
    /// Every tagged object's modelled position (world x, y), by name.
    landmarks: std::collections::BTreeMap<String, [f64; 2]>,
    /// The row's reference, the object the cameras prefer.
    object: Option<String>,
    recent: VecDeque<[f64; 2]>,
    estimate: Option<[f64; 2]>,
    last_seen_s: f64,
    /// Landmarks used only when no primary one is in view.
    secondary: std::collections::BTreeSet<String>,
    /// Landmarks placed by other walking modules' estimates.
    floating: std::collections::BTreeSet<String>,
    last_anchored_s: f64,
    next_look_s: f64,
    /// Looks in which some landmark was in view.
    pub sightings: usize,
    /// Looks since the start.
    pub looks: usize,
}

impl LockOn {
    /// The lock-on of the cameras of `modules` (robot indices with their joints; the first
    /// is Role#1, whose foot is the reference point) of a fleet simulator of `world`, the
    /// cameras' `noise` drawn from `seed`.
    pub fn new(
        sim: &dyn Plant,
        world: &modbot_core::Scenario,
        modules: &[(usize, ModuleJoints)],
        noise: CameraNoise,
        seed: u64,
        landmarks: std::collections::BTreeMap<String, [f64; 2]>,
    ) -> Result<LockOn, String> {
        LockOn::build(sim, world, modules, noise, seed, landmarks, false)
    }

    /// A lone module's camera (robot `module`), which also takes the other modules'
    /// DetPoints as landmarks: those whose positions are given ([`LockOn::set_landmark`]
    /// with [`crate::scan::module_id`]), as Role#1 shares its own during an assembly.
    pub fn lone(
        sim: &dyn Plant,
        world: &modbot_core::Scenario,
        module: (usize, ModuleJoints),
        noise: CameraNoise,
        seed: u64,
        landmarks: std::collections::BTreeMap<String, [f64; 2]>,
    ) -> Result<LockOn, String> {
        LockOn::build(sim, world, &[module], noise, seed, landmarks, true)
    }

    /// Takes `xy` (world x, y) as the estimate until the first sighting replaces it: a lone
    /// module's modelled start.
    pub fn start_from(&mut self, xy: [f64; 2]) {
        if self.sightings == 0 {
            self.estimate = Some(xy);
        }
    }

    /// Sets (or moves) the landmark `id` to `xy` (world x, y), of the given kind.
    pub fn set_landmark(&mut self, id: &str, xy: [f64; 2], kind: Landmark) {
        self.landmarks.insert(id.to_string(), xy);
        self.secondary.remove(id);
        self.floating.remove(id);
        if kind != Landmark::Primary {
            self.secondary.insert(id.to_string());
        }
        if kind == Landmark::Floating {
            self.floating.insert(id.to_string());
        }
    }

    /// Forgets the landmark `id` (its position is no longer known).
    pub fn remove_landmark(&mut self, id: &str) {
        self.landmarks.remove(id);
        self.secondary.remove(id);
        self.floating.remove(id);
    }

    /// Whether an anchored landmark was seen within [`LOST_AFTER_S`]: the estimate does
    /// not rest on other walking modules' alone, and may be shared with them.
    pub fn anchored(&self, now: f64) -> bool {
        now - self.last_anchored_s <= LOST_AFTER_S
    }

    fn build(
        sim: &dyn Plant,
        world: &modbot_core::Scenario,
        modules: &[(usize, ModuleJoints)],
        noise: CameraNoise,
        seed: u64,
        landmarks: std::collections::BTreeMap<String, [f64; 2]>,
        module_marks: bool,
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
        let objects = tagged_objects(world);
        let mut eyes = Vec::with_capacity(modules.len());
        for &(module, joints) in modules {
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
            // A configuration's cameras take only the tagged objects (its own modules are
            // not landmarks); a lone module's also the other modules' DetPoints.
            let marks: Vec<Detectable> = detectables(module, sim.robot_count(), &objects)
                .into_iter()
                .filter(|d| module_marks || objects.iter().any(|o| o.name == d.id))
                .collect();
            // Its own noise stream, apart from the scan's (streams 0…5).
            let camera =
                Camera::new(wheelfoot_camera(module, noise), seed, 100 + module as u64).map_err(|e| e.to_string())?;
            eyes.push(Eye {
                camera,
                marks,
                joints,
                model_joints,
                foot_link,
                pan_target: 0.0,
            });
        }
        let base_link = eyes.first().map(|e| e.foot_link).ok_or("a lock-on needs a camera")?;
        let lens = eyes[0].camera.spec().pose;
        Ok(LockOn {
            eyes,
            tree,
            tree_foot,
            tree_camera,
            lens,
            base_link,
            landmarks,
            object: None,
            recent: VecDeque::with_capacity(WINDOW),
            estimate: None,
            last_seen_s: f64::NEG_INFINITY,
            secondary: std::collections::BTreeSet::new(),
            floating: std::collections::BTreeSet::new(),
            last_anchored_s: f64::NEG_INFINITY,
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

    /// The estimated reference point (world x, y), if a landmark has been seen.
    pub fn estimate(&self) -> Option<[f64; 2]> {
        self.estimate
    }

    /// Looks, if it is time: updates the estimate and the pans.
    pub fn update(&mut self, sim: &dyn Plant) -> Result<(), String> {
        let now = sim.time();
        if now + 1e-9 < self.next_look_s {
            return Ok(());
        }
        self.next_look_s = now + LOCK_PERIOD_S;
        let name = self.object.clone().unwrap_or_default();
        self.looks += 1;
        let q = sim.joint_positions();
        let poses = sim.link_poses();
        let base = poses[self.base_link];
        // Primary landmarks' placings, then the secondary ones' (and whether one of those
        // was anchored).
        let (mut primary, mut secondary, mut anchored) = (Vec::new(), Vec::new(), false);
        let mut seen_any = Vec::new();
        for eye in self.eyes.iter_mut() {
            let seen = eye.camera.capture(sim, &eye.marks).map_err(|e| e.to_string())?;
            // Every landmark in view places the reference point: its modelled position less
            // the measured vector to it, less the vector from the reference point to this
            // module's foot (the docked modules' own geometry).
            let qi: Vec<f64> = eye.model_joints.iter().map(|&k| q[k]).collect();
            let frames = self.tree.link_frames(
                &self
                    .tree
                    .forward(&qi, &Isometry3::identity())
                    .map_err(|e| e.to_string())?,
            );
            let lens_in_foot = frames[self.tree_foot].inverse() * frames[self.tree_camera] * self.lens;
            let foot = poses[eye.foot_link];
            let to_foot = foot.translation.vector - base.translation.vector;
            for d in &seen {
                let Some(xy) = self.landmarks.get(&d.id) else {
                    continue;
                };
                let v = foot.rotation * (lens_in_foot * Point3::from(d.position)).coords + to_foot;
                let placed = [xy[0] - v.x, xy[1] - v.y];
                if self.secondary.contains(&d.id) {
                    secondary.push(placed);
                    anchored |= !self.floating.contains(&d.id);
                } else {
                    primary.push(placed);
                }
            }
            // The pan centres the reference when it is in view, else the nearest landmark
            // in view (so that the camera keeps one), else it searches.
            let centre = seen.iter().find(|d| d.id == name).or_else(|| {
                seen.iter()
                    .filter(|d| self.landmarks.contains_key(&d.id))
                    .min_by(|a, b| a.position.norm().total_cmp(&b.position.norm()))
            });
            match centre {
                Some(d) => eye.pan_target = wrap_rad(q[eye.joints.pan] + d.position.y.atan2(d.position.x)),
                None if now - self.last_seen_s > LOST_AFTER_S || seen.is_empty() => {
                    eye.pan_target = wrap_rad(eye.pan_target + SEARCH_STEP_DEG.to_radians());
                }
                None => {}
            }
            seen_any.extend(seen.into_iter().map(|d| d.id));
        }
        // The secondary landmarks only when no primary one is in view.
        let used = if primary.is_empty() {
            secondary
        } else {
            anchored = true;
            primary
        };
        if !used.is_empty() {
            self.sightings += 1;
            self.last_seen_s = now;
            if anchored {
                self.last_anchored_s = now;
            }
            if self.recent.len() == WINDOW {
                self.recent.pop_front();
            }
            let count = used.len() as f64;
            let (sx, sy) = used.iter().fold((0.0, 0.0), |(a, b), p| (a + p[0], b + p[1]));
            self.recent.push_back([sx / count, sy / count]);
            let n = self.recent.len() as f64;
            let (sx, sy) = self.recent.iter().fold((0.0, 0.0), |(a, b), p| (a + p[0], b + p[1]));
            self.estimate = Some([sx / n, sy / n]);
        }
        Ok(())
    }

    /// Writes the cameras' pan and tilt targets.
    pub fn command(&self, out: &mut [modbot_gaits::JointTarget]) {
        for e in &self.eyes {
            out[e.joints.pan] = modbot_gaits::JointTarget::Position(e.pan_target);
            out[e.joints.tilt] = modbot_gaits::JointTarget::Position(0.0);
        }
    }

    /// The base pose the controllers see: Role#1's foot's attitude and height from the
    /// simulator (IMU, compass), its horizontal position from the cameras.
    pub fn base(&self, sim: &dyn Plant) -> Option<Isometry3<f64>> {
        let e = self.estimate?;
        let p = sim.link_poses()[self.base_link];
        Some(Isometry3::from_parts(
            Translation3::new(e[0], e[1], p.translation.z),
            p.rotation,
        ))
    }
}
