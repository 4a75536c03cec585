//! The initial 360° scan of the strategic mission (seed-000 §6.2, Lua `initial_scan`;
//! decision records 0047, 0058) as a state machine on the robot interface: every lone
//! wheel-foot module pans its mast camera 0 → 360° in 30° stops, all at once as the
//! source's modules do, and turns what it sees into sightings for the modelling step
//! (`modbot_planner::modeling`, §6.3).
//!
//! Each tick, per module: the joint states and the IMU are read and kept for a second
//! (stamped); the pan is commanded to its stop (0, 30, …, 180, −150, …, −30: the joint
//! turns ±180°); once the pan encoder is within 10° of the stop (§6.2), the first camera
//! frame **captured after that moment** is used and the next stop is commanded. The frame
//! is converted with the joint angles and the compass **at its capture stamp** (the frame
//! arrives a latency later, when the pan has moved on), never with later ones.
//!
//! What a module uses (record 0047): the detection; its joint encoders and its kinematic
//! model (`LinkTree`: the lens's pose in its foot frame, the foot taken as level); its
//! compass (its IMU's yaw); the seen module's heading as that module's own IMU gives it
//! (the source's shared `ornt`); a tagged object's published yaw ([`KnownObject`]). A
//! module's reference point is its DetPoint − 0.102 m along its heading
//! (`modeling::module_reference`); a module that sees one thing at several stops keeps
//! the mean.

use std::collections::BTreeMap;
use std::fmt;

use modbot_core::scenario::Tag;
use modbot_gaits::modular::wrap_rad;
use modbot_planner::modeling::{ModuleScan, Seen, Sighting, module_reference};

use crate::interface::{JointTarget, Modules, Monotonic, TagDetection, fresh};
use crate::mast::MastView;
pub use crate::mast::{CAMERA_LINK, FOOT_LINK, LENS_M};

/// Pan increment, deg (§6.2).
pub const PAN_STEP_DEG: f64 = 30.0;
/// Stops of one turn.
pub const STOPS: usize = 12;
/// The next stop is commanded when the pan is this close to the current one, deg (§6.2).
pub const PAN_REACHED_DEG: f64 = 10.0;
/// Time the modules are left to settle on the ground before the scan, s.
pub const SETTLE_S: f64 = 0.5;
/// Time allowed for the scan after settling, s (it takes about 3 s).
pub const TIMEOUT_S: f64 = 20.0;
/// A camera that delivers no frame for this long stops the scan, s.
pub const FRAME_TIMEOUT_S: f64 = 1.0;
/// How far ahead of a module's reference point its camera pans, m: the `cam_pan` axis at
/// the DetPoint's x (the body frame at BackJoint1, x = 0.0945, plus the joint's 0.0075).
pub const PAN_AXIS_AHEAD_M: f64 = 0.102;
/// The DetPoint in the `mast` link's frame: the tilt axis, on the pan axis, 0.102 m ahead of
/// the reference point (module frame (0.102, 0, 0.062)).
pub const DETPOINT_IN_MAST_M: [f64; 3] = [0.0, 0.0, 0.02];
/// The pan link.
pub const MAST_LINK: &str = "m1_mast";
/// The pan joint.
pub const PAN_JOINT: &str = "m1_cam_pan";

/// The id a camera reports Module#(i+1) as.
pub fn module_id(i: usize) -> String {
    format!("module_{}", i + 1)
}

/// The pan command of a stop, rad: k · 30° wrapped to the joint's ±180°.
pub fn stop_angle(stop: usize) -> f64 {
    wrap_rad((stop as f64 * PAN_STEP_DEG).to_radians())
}

/// A tagged object the mission knows of: what a tag id stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct KnownObject {
    /// Its tag id (the world's obstacle or marker name).
    pub name: String,
    /// What it is.
    pub tag: Tag,
    /// Its published yaw, rad.
    pub yaw: f64,
}

/// One camera frame a module used.
#[derive(Debug, Clone, PartialEq)]
pub struct Capture {
    /// The module (0 = Module#1).
    pub module: usize,
    /// The stop (0 … 11).
    pub stop: usize,
    /// The frame's capture time, s.
    pub time_s: f64,
    /// The pan encoder then, deg.
    pub pan_deg: f64,
    /// What the camera reported.
    pub detections: Vec<TagDetection>,
}

/// Where the scan is.
#[derive(Debug, Clone, PartialEq)]
pub enum ScanState {
    /// Not ticked yet.
    Idle,
    /// The modules settle on the ground.
    Settling,
    /// Panning: each module's stops taken.
    Panning {
        /// Per module.
        stops: Vec<usize>,
    },
    /// Every module has taken its twelve stops.
    Done,
    /// Stopped, with the reason.
    Failed(String),
}

impl fmt::Display for ScanState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScanState::Idle => write!(f, "idle"),
            ScanState::Settling => write!(f, "settling"),
            ScanState::Panning { stops } => write!(f, "panning (stops taken {stops:?} of {STOPS})"),
            ScanState::Done => write!(f, "done"),
            ScanState::Failed(r) => write!(f, "failed: {r}"),
        }
    }
}

/// Running sum of one module's measurements of one thing.
#[derive(Debug, Clone)]
struct Sum {
    seen: Seen,
    offset: [f64; 2],
    heading: f64,
    n: usize,
}

/// One module's part of the scan.
#[derive(Debug, Clone)]
struct Panner {
    stop: usize,
    /// When the pan first came within reach of the current stop.
    reached_at: Option<f64>,
    view: MastView,
    /// The pan's index among the module's joints.
    pan: usize,
    /// The newest frame's stamp (the start before any).
    last_frame: f64,
    sums: Vec<Sum>,
}

/// The initial scan of every module of a [`Modules`] set of lone wheel-foot modules.
pub struct InitialScan {
    objects: BTreeMap<String, KnownObject>,
    panners: Vec<Panner>,
    captures: Vec<Capture>,
    scans: Vec<ModuleScan>,
    clock: Monotonic,
    start_s: Option<f64>,
    state: ScanState,
}

impl InitialScan {
    /// A scan that recognises `objects` (besides the modules, `module_1` …).
    pub fn new(objects: Vec<KnownObject>) -> InitialScan {
        InitialScan {
            objects: objects.into_iter().map(|o| (o.name.clone(), o)).collect(),
            panners: Vec::new(),
            captures: Vec::new(),
            scans: Vec::new(),
            clock: Monotonic::default(),
            start_s: None,
            state: ScanState::Idle,
        }
    }

    /// Where it is.
    pub fn state(&self) -> &ScanState {
        &self.state
    }

    /// Every frame used, in order.
    pub fn captures(&self) -> &[Capture] {
        &self.captures
    }

    /// Each module's measurements, the modelling step's input (once done).
    pub fn scans(&self) -> &[ModuleScan] {
        &self.scans
    }

    /// One tick: reads every module, commands every pan. Once `Done` or `Failed` it stays.
    pub fn tick(&mut self, io: &mut dyn Modules) -> &ScanState {
        if matches!(self.state, ScanState::Done | ScanState::Failed(_)) {
            return &self.state;
        }
        if let Err(reason) = self.advance(io) {
            self.state = ScanState::Failed(reason);
        }
        &self.state
    }

    fn advance(&mut self, io: &mut dyn Modules) -> Result<(), String> {
        let now = self
            .clock
            .check(io.module_ref(0).map_err(|e| e.to_string())?.now())
            .map_err(|e| e.to_string())?;
        let start = *self.start_s.get_or_insert(now);
        if self.panners.is_empty() {
            self.panners = (0..io.len())
                .map(|i| self.panner(io, i, start))
                .collect::<Result<_, _>>()?;
        }
        // A reading older than its timeout holds the scan (the pans keep their last order)
        // until a newer one comes; older than [`crate::SENSOR_LOST_S`], it ends the scan. Over
        // a network a node that has not read for a while sees its first readings late.
        if self.read(io, now)?.is_err() {
            return Ok(());
        }
        if now - start < SETTLE_S - 1e-9 {
            self.state = ScanState::Settling;
            return self.command(io);
        }
        if now - start > SETTLE_S + TIMEOUT_S {
            return Err(format!("the scan did not end in {TIMEOUT_S} s: {}", self.state));
        }
        for i in 0..self.panners.len() {
            self.stop_of(io, i, now)?;
        }
        self.state = ScanState::Panning {
            stops: self.panners.iter().map(|p| p.stop).collect(),
        };
        if self.panners.iter().all(|p| p.stop >= STOPS) {
            self.finish()?;
            self.state = ScanState::Done;
        }
        self.command(io)
    }

    /// Module `i`'s joints found by name.
    fn panner(&self, io: &dyn Modules, i: usize, start: f64) -> Result<Panner, String> {
        let m = io.module_ref(i).map_err(|e| e.to_string())?;
        let names = m.joint_names();
        let view = MastView::new(names).map_err(|e| format!("Module#{}: {e}", i + 1))?;
        let pan = names
            .iter()
            .position(|n| n == PAN_JOINT)
            .ok_or_else(|| format!("Module#{} has no joint `{PAN_JOINT}`", i + 1))?;
        Ok(Panner {
            stop: 0,
            reached_at: None,
            view,
            pan,
            last_frame: start,
            sums: Vec::new(),
        })
    }

    /// Every module's joints and compass into its history; the inner error names the first
    /// module whose IMU reading is older than [`crate::SENSOR_TIMEOUT_S`], the outer one a
    /// reading older than [`crate::SENSOR_LOST_S`].
    fn read(&mut self, io: &dyn Modules, now: f64) -> Result<Result<(), String>, String> {
        let mut stale = Ok(());
        for (i, p) in self.panners.iter_mut().enumerate() {
            let m = io.module_ref(i).map_err(|e| e.to_string())?;
            let js = m.joint_states().map_err(|e| format!("Module#{}: {e}", i + 1))?;
            let imu = m.imu().map_err(|e| format!("Module#{}: {e}", i + 1))?;
            fresh("imu", Some(imu.stamp), now, crate::SENSOR_LOST_S).map_err(|e| format!("Module#{}: {e}", i + 1))?;
            p.view.observe(&js, &imu);
            if let (Err(e), Ok(())) = (fresh("imu", Some(imu.stamp), now, crate::SENSOR_TIMEOUT_S), &stale) {
                stale = Err(format!("Module#{}: {e}", i + 1));
            }
        }
        Ok(stale)
    }

    /// Module `i` at its stop: the pan reached, then the first frame taken after.
    fn stop_of(&mut self, io: &dyn Modules, i: usize, now: f64) -> Result<(), String> {
        let p = &mut self.panners[i];
        if p.stop >= STOPS {
            return Ok(());
        }
        let m = io.module_ref(i).map_err(|e| e.to_string())?;
        let frame = m.tags().map_err(|e| format!("Module#{}: {e}", i + 1))?;
        if let Some(f) = &frame {
            p.last_frame = p.last_frame.max(f.stamp);
        }
        if now - p.last_frame > FRAME_TIMEOUT_S {
            return Err(format!(
                "Module#{}'s camera delivered no frame for {:.2} s (timeout {FRAME_TIMEOUT_S} s)",
                i + 1,
                now - p.last_frame
            ));
        }
        let (stamp, pan) = p.view.joint_now(PAN_JOINT).ok_or("no joint states")?;
        if p.reached_at.is_none() && wrap_rad(pan - stop_angle(p.stop)).abs() <= PAN_REACHED_DEG.to_radians() {
            p.reached_at = Some(stamp);
        }
        let (Some(reached), Some(frame)) = (p.reached_at, frame) else {
            return Ok(());
        };
        if frame.stamp < reached {
            return Ok(());
        }
        let pan = p.view.joint_at(PAN_JOINT, frame.stamp).ok_or_else(|| {
            format!(
                "Module#{}: no joint states near the frame's capture at {:.3} s (the newest at {stamp:.3} s)",
                i + 1,
                frame.stamp
            )
        })?;
        for d in &frame.detections {
            self.sight(i, frame.stamp, d)?;
        }
        let p = &mut self.panners[i];
        self.captures.push(Capture {
            module: i,
            stop: p.stop,
            time_s: frame.stamp,
            pan_deg: pan.to_degrees(),
            detections: frame.detections,
        });
        p.stop += 1;
        p.reached_at = None;
        Ok(())
    }

    /// One detection of module `i`, in a frame captured at `stamp`, into its sums.
    fn sight(&mut self, i: usize, stamp: f64, d: &TagDetection) -> Result<(), String> {
        let Some(v) = self.panners[i].view.world_vector(&d.position, stamp)? else {
            return Err(format!("Module#{}: no joint states or compass yet", i + 1));
        };
        let (seen, offset, heading) = if let Some(j) = (0..self.panners.len()).find(|&j| module_id(j) == d.id) {
            // The seen module's heading as its own compass gives it now.
            let theirs = self.panners[j].view.compass_now().ok_or("no compass")?;
            (Seen::Module(j), module_reference([v.x, v.y], theirs), theirs)
        } else if let Some(o) = self.objects.get(&d.id) {
            (
                Seen::Object {
                    name: o.name.clone(),
                    tag: o.tag,
                },
                [v.x, v.y],
                o.yaw,
            )
        } else {
            return Err(format!("Module#{}'s camera reported an unknown tag `{}`", i + 1, d.id));
        };
        let sums = &mut self.panners[i].sums;
        match sums.iter_mut().find(|s| s.seen == seen) {
            Some(s) => {
                s.offset = [s.offset[0] + offset[0], s.offset[1] + offset[1]];
                s.heading = heading;
                s.n += 1;
            }
            None => sums.push(Sum {
                seen,
                offset,
                heading,
                n: 1,
            }),
        }
        Ok(())
    }

    /// Every pan to its stop (back to 0 when done), everything else at rest.
    fn command(&self, io: &mut dyn Modules) -> Result<(), String> {
        for (i, p) in self.panners.iter().enumerate() {
            let m = io.module(i).map_err(|e| e.to_string())?;
            let mut out = crate::hold(m.control_modes(), None);
            let scanning = self.state != ScanState::Settling && p.stop < STOPS;
            out[p.pan] = JointTarget::Position(if scanning { stop_angle(p.stop) } else { 0.0 });
            m.command(&out).map_err(|e| format!("Module#{}: {e}", i + 1))?;
        }
        Ok(())
    }

    /// The scans: each module's compass and the mean of each thing it saw.
    fn finish(&mut self) -> Result<(), String> {
        let mut scans = Vec::with_capacity(self.panners.len());
        for (i, p) in self.panners.iter().enumerate() {
            scans.push(ModuleScan {
                heading: p
                    .view
                    .compass_now()
                    .ok_or_else(|| format!("Module#{}: no compass reading", i + 1))?,
                sightings: p
                    .sums
                    .iter()
                    .map(|s| Sighting {
                        seen: s.seen.clone(),
                        offset: [s.offset[0] / s.n as f64, s.offset[1] / s.n as f64],
                        heading: s.heading,
                    })
                    .collect(),
            });
        }
        self.scans = scans;
        Ok(())
    }
}
