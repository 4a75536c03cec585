//! The initial 360° scan of the strategic mission (seed-000 §6.2, Lua `initial_scan`) on
//! the embedded simulator, feeding the modelling step (`modbot_planner::modeling`, §6.3);
//! decision record 0047.
//!
//! The world's `robot_starts` place one lone wheel-foot module each (entry i is
//! Module#(i+1)). Each module carries the mast camera of [`wheelfoot_camera`] and, all at
//! once as the source's modules do, pans it 0 → 360° in 30° stops through the normal joint
//! commands (`cam_pan` position targets at the control rate; the other joints hold the rest
//! pose): the next stop is commanded once the pan encoder is within 10° of the current
//! one, and at that moment the camera is read. The pan joint turns ±180°, so the stops
//! are commanded as 0, 30, …, 180, −150, …, −30 and the turn from 180 to −150 swings back
//! through 0.
//!
//! What a module uses to turn a detection into a position (no other ground truth):
//! - the detection (camera frame, noisy);
//! - its own joint encoders and its kinematic model (`LinkTree`): the lens's pose in its
//!   foot frame — the source's mast offsets — with the foot taken as level;
//! - its **compass**: its global yaw, read from the simulator as the source read it;
//! - the seen module's heading as that module's compass publishes it (the source's
//!   shared `ornt`), and a tagged object's published yaw (the source read its dummy's).
//!
//! A module's reference point is then its DetPoint − 0.102 m along its heading
//! (`modeling::module_reference`); an object's point is its block's or bar's centre,
//! above its position on the ground. A module that sees the same thing at several stops
//! keeps the mean of its measurements.

use std::collections::BTreeMap;

use modbot_behaviours::scan::{InitialScan, KnownObject, ScanState};
use modbot_core::{LinkTree, ModuleCatalog, Scenario, Topology};
use modbot_gaits::modular::wrap_rad;
use modbot_planner::modeling::{ModuleScan, Seen, Sighting, module_reference};
use modbot_sim::embedded::{ImuModel, SensorModels, tag_detection};
use modbot_sim::{Camera, CameraNoise, Detectable, Plant, heading_of};
use nalgebra::{Isometry3, Point3, UnitQuaternion, Vector3};

pub use crate::embedded::{
    HFOV_DEG, NOISE, RANGE_M, TaggedObject, VFOV_DEG, detectables, tagged_objects, wheelfoot_camera,
};
pub use modbot_behaviours::scan::{
    CAMERA_LINK, Capture, DETPOINT_IN_MAST_M, FOOT_LINK, LENS_M, MAST_LINK, PAN_AXIS_AHEAD_M, PAN_JOINT,
    PAN_REACHED_DEG, PAN_STEP_DEG, SETTLE_S, STOPS, TIMEOUT_S, module_id, stop_angle,
};
/// Control rate, Hz: the simulator's default (record 0023).
pub use modbot_sim::DEFAULT_CONTROL_RATE_HZ as CONTROL_HZ;

/// How a scan runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScanSettings {
    /// The cameras' noise.
    pub noise: CameraNoise,
    /// The IMUs' errors (the compass), on the robot interface.
    pub imu: ImuModel,
    /// Seed of the noise (module i's camera draws from stream i).
    pub seed: u64,
}

impl Default for ScanSettings {
    fn default() -> ScanSettings {
        ScanSettings {
            noise: NOISE,
            imu: ImuModel::default(),
            seed: 0,
        }
    }
}

/// Where things really were (the simulator's truth, for tests; no module reads it):
/// relative to Module#1's reference point, world axes, m.
#[derive(Debug, Clone, PartialEq)]
pub struct Truth {
    /// Each module's reference point and heading (rad) at the end of the scan.
    pub modules: Vec<([f64; 2], f64)>,
    /// Each tagged object's position on the ground.
    pub objects: BTreeMap<String, [f64; 2]>,
}

/// What a scan did.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanOutcome {
    /// Each module's measurements, the modelling step's input.
    pub scans: Vec<ModuleScan>,
    /// Every camera reading, in order.
    pub captures: Vec<Capture>,
    /// The truth, for tests and reports (none where the stage has none).
    pub truth: Option<Truth>,
    /// Simulated time at the end, s.
    pub time_s: f64,
}

/// Running sum of one module's measurements of one thing.
struct Sum {
    seen: Seen,
    offset: [f64; 2],
    heading: f64,
    n: usize,
}

/// Runs the initial scan of every module of `world` (its `robot_starts`, lone wheel-foot
/// modules) on the robot interface's embedded binding (`modbot_behaviours::scan`, record
/// 0058) and returns their measurements, with the truth read from the simulator afterwards.
pub fn initial_scan(world: &Scenario, settings: &ScanSettings) -> Result<ScanOutcome, String> {
    let models = SensorModels {
        imu: settings.imu,
        ..SensorModels::standard()
    };
    let mut modules = crate::embedded::wheelfoot_modules(world, models, settings.noise, settings.seed)?;
    scan_modules(&mut modules, world)
}

/// Runs the initial scan on `modules` (the lone modules of `world` on the embedded binding),
/// from where they stand: their measurements, and the truth read from the simulator after.
pub fn scan_modules(stage: &mut dyn crate::embedded::Stage, world: &Scenario) -> Result<ScanOutcome, String> {
    let objects = tagged_objects(world)
        .into_iter()
        .map(|o| KnownObject {
            name: o.name,
            tag: o.tag,
            yaw: o.yaw,
        })
        .collect();
    let mut scan = InitialScan::new(objects);
    let t0 = stage.time();
    let dt = 1.0 / CONTROL_HZ;
    let mut tick: u64 = 0;
    loop {
        match scan.tick(stage.modules()) {
            ScanState::Done => break,
            ScanState::Failed(why) => return Err(why.clone()),
            _ => {}
        }
        tick = crate::embedded::next_tick(t0, tick, dt, stage.time());
        stage.advance_to(t0 + tick as f64 * dt)?;
    }
    let truth = match stage.truth() {
        Some(g) => Some(truth(&g.feet()?, &tagged_objects(world))),
        None => None,
    };
    Ok(ScanOutcome {
        scans: scan.scans().to_vec(),
        captures: scan.captures().to_vec(),
        truth,
        time_s: stage.time(),
    })
}

/// Where the modules' reference points and the objects are, relative to Module#1's.
fn truth(feet: &[Isometry3<f64>], objects: &[TaggedObject]) -> Truth {
    let at = |p: &Isometry3<f64>| ([p.translation.x, p.translation.y], heading_of(p));
    let origin = feet.first().map_or([0.0, 0.0], |p| at(p).0);
    let rel = |p: [f64; 2]| [p[0] - origin[0], p[1] - origin[1]];
    Truth {
        modules: feet.iter().map(|p| (rel(at(p).0), at(p).1)).collect(),
        objects: objects
            .iter()
            .map(|o| (o.name.clone(), rel([o.point[0], o.point[1]])))
            .collect(),
    }
}

/// Runs the initial scan on `sim`, a fleet simulator of `world` (one lone wheel-foot module
/// per `robot_starts` entry), from its current time: what the mission does after its
/// friction estimate. The mission's own until it moves to the robot interface (issue 49,
/// record 0058): it reads the compass from the simulator and the camera without latency.
pub fn initial_scan_on(sim: &mut dyn Plant, world: &Scenario, settings: &ScanSettings) -> Result<ScanOutcome, String> {
    let n = world.robot_starts.len();
    if sim.robot_count() != n {
        return Err(format!(
            "the simulator holds {} robots, the world {n} module starts",
            sim.robot_count()
        ));
    }
    let t0 = sim.time();
    let catalog = ModuleCatalog::builtin();
    let topology = Topology::resolve("wheelfoot", &catalog).map_err(|e| e.to_string())?;

    // The module's kinematic model: its joints in the tree's order and its links.
    let tree = LinkTree::new(&topology);
    let model_joints = topology.joint_names();
    let tree_link = |name: &str| {
        tree.links
            .iter()
            .position(|l| l.name == name)
            .ok_or_else(|| format!("the wheel-foot module has no link `{name}`"))
    };
    let (tree_foot, tree_camera) = (tree_link(FOOT_LINK)?, tree_link(CAMERA_LINK)?);
    let names = sim.joint_names().to_vec();
    // Per module: the simulator's index of each model joint, and of the pan joint.
    let mut joint_map: Vec<Vec<usize>> = Vec::with_capacity(n);
    let mut pan: Vec<usize> = Vec::with_capacity(n);
    let mut foot: Vec<usize> = Vec::with_capacity(n);
    for r in 0..n {
        let range = sim.joints_of(r);
        let find = |j: &str| {
            range
                .clone()
                .find(|&k| names[k] == j)
                .ok_or_else(|| format!("module {} has no joint `{j}`", r + 1))
        };
        joint_map.push(model_joints.iter().map(|j| find(j)).collect::<Result<_, _>>()?);
        pan.push(find(PAN_JOINT)?);
        foot.push(
            sim.links_of(r)
                .find(|&l| sim.link_names()[l] == FOOT_LINK)
                .ok_or_else(|| format!("module {} has no link `{FOOT_LINK}`", r + 1))?,
        );
    }
    let objects = tagged_objects(world);
    let object_of: BTreeMap<&str, &TaggedObject> = objects.iter().map(|o| (o.name.as_str(), o)).collect();
    let marks: Vec<Vec<Detectable>> = (0..n).map(|i| detectables(i, n, &objects)).collect();
    let mut cameras: Vec<Camera> = (0..n)
        .map(|i| Camera::new(wheelfoot_camera(i, settings.noise), settings.seed, i as u64))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let lens = cameras[0].spec().pose;

    let mut stop = vec![0usize; n];
    let mut sums: Vec<Vec<Sum>> = (0..n).map(|_| Vec::new()).collect();
    let mut captures = Vec::new();
    let dt = 1.0 / CONTROL_HZ;
    let mut targets = sim.targets().to_vec();
    let mut tick: u64 = 0;
    loop {
        let t = t0 + tick as f64 * dt;
        if t - t0 > SETTLE_S + TIMEOUT_S {
            let late: Vec<String> = (0..n)
                .filter(|&i| stop[i] < STOPS)
                .map(|i| format!("Module#{} at stop {}", i + 1, stop[i]))
                .collect();
            return Err(format!("the scan did not end in {TIMEOUT_S} s: {}", late.join(", ")));
        }
        sim.advance_to(t).map_err(|e| e.to_string())?;
        if t - t0 >= SETTLE_S - 1e-9 {
            let q = sim.joint_positions();
            let poses = sim.link_poses();
            // Every module's compass (the ground-truth yaw the source read too).
            let compass: Vec<f64> = foot.iter().map(|&l| heading_of(&poses[l])).collect();
            for i in 0..n {
                if stop[i] >= STOPS || wrap_rad(q[pan[i]] - stop_angle(stop[i])).abs() > PAN_REACHED_DEG.to_radians() {
                    continue;
                }
                let detections = cameras[i].capture(sim, &marks[i]).map_err(|e| e.to_string())?;
                // The lens in the foot frame from the encoders and the model (the mast offsets).
                let qi: Vec<f64> = joint_map[i].iter().map(|&k| q[k]).collect();
                let frames = tree.link_frames(&tree.forward(&qi, &Isometry3::identity()).map_err(|e| e.to_string())?);
                let lens_in_foot = frames[tree_foot].inverse() * frames[tree_camera] * lens;
                let level = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), compass[i]);
                for d in &detections {
                    let v = level * (lens_in_foot * Point3::from(d.position)).coords;
                    let (seen, offset, heading) = if let Some(j) = (0..n).find(|&j| module_id(j) == d.id) {
                        (Seen::Module(j), module_reference([v.x, v.y], compass[j]), compass[j])
                    } else if let Some(o) = object_of.get(d.id.as_str()) {
                        (
                            Seen::Object {
                                name: o.name.clone(),
                                tag: o.tag,
                            },
                            [v.x, v.y],
                            o.yaw,
                        )
                    } else {
                        return Err(format!("camera {} reported an unknown id `{}`", i + 1, d.id));
                    };
                    match sums[i].iter_mut().find(|s| s.seen == seen) {
                        Some(s) => {
                            s.offset = [s.offset[0] + offset[0], s.offset[1] + offset[1]];
                            s.heading = heading;
                            s.n += 1;
                        }
                        None => sums[i].push(Sum {
                            seen,
                            offset,
                            heading,
                            n: 1,
                        }),
                    }
                }
                let n = settings.noise;
                captures.push(Capture {
                    module: i,
                    stop: stop[i],
                    time_s: t,
                    pan_deg: q[pan[i]].to_degrees(),
                    detections: detections.into_iter().map(|d| tag_detection(d, n)).collect(),
                });
                stop[i] += 1;
            }
            for i in 0..n {
                targets[pan[i]] = if stop[i] < STOPS { stop_angle(stop[i]) } else { 0.0 };
            }
            sim.set_targets(&targets).map_err(|e| e.to_string())?;
        }
        if stop.iter().all(|&s| s >= STOPS) {
            break;
        }
        tick += 1;
    }

    let poses = sim.link_poses();
    let at = |l: usize| {
        let p = poses[l].translation.vector;
        ([p.x, p.y], heading_of(&poses[l]))
    };
    let feet: Vec<Isometry3<f64>> = foot.iter().map(|&l| poses[l]).collect();
    let truth = Some(truth(&feet, &objects));
    let scans = foot
        .iter()
        .zip(sums)
        .map(|(&l, sums)| ModuleScan {
            heading: at(l).1,
            sightings: sums
                .into_iter()
                .map(|s| Sighting {
                    seen: s.seen,
                    offset: [s.offset[0] / s.n as f64, s.offset[1] / s.n as f64],
                    heading: s.heading,
                })
                .collect(),
        })
        .collect();
    Ok(ScanOutcome {
        scans,
        captures,
        truth,
        time_s: sim.time(),
    })
}
