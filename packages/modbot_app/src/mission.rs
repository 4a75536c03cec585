//! The strategic-planning mission end to end on the embedded simulator (seed-000 §6,
//! issue 15; decision record 0049): friction estimate, initial scan, modelling, roles,
//! the plan, then the sequencer executing it row by row through the real controllers —
//! assembly into the quadruped, its position control and pass-over, reassembly into the
//! wheeled vehicle, its low-pose pass under the lath and its drive to the target.
//!
//! What the modules know: the obstacles' and the target's positions come from the scan
//! and the modelling step (camera measurements, relative to Module#1, with their noise);
//! the world file's positions are not read by any controller. In the configurations, the
//! body modules' cameras locked on the landmarks give the configuration's position
//! ([`crate::lockon`], §6.5), the compass its heading (the global yaw the source read
//! too). The lone modules walking to their staging points place themselves with their
//! cameras, and their partner's port guides the last stretch (record 0050). The mission
//! acts on a [`Plant`]: this process's simulator, or sim_node's over ROS (record 0052).

use std::collections::BTreeMap;

use modbot_core::{ModuleCatalog, Scenario, Topology};
use modbot_gaits::modular::Goal;
use modbot_gaits::modular::quadruped::{PassOver, QuadGait, QuadGoto, QuadWalk};
use modbot_gaits::modular::single::StepTable;
use modbot_gaits::modular::wheeled::{WheeledGoto, WheeledPose};
use modbot_gaits::{Controller, JointTarget};
use modbot_planner::assembly::{RoleAssignment, StagingOrigin, distribute_roles};
use modbot_planner::friction::BandEdges;
use modbot_planner::modeling::model;
use modbot_planner::sequencer::{Command, Pose2, Sequencer, SequencerSettings, Tick};
use modbot_planner::strategic::{Action, StrategicPlan, SubGoal, source_decomposition};
use modbot_sim::Plant;
use serde::Serialize;

use crate::assemble::{
    AssemblyOutcome, CameraLocalisation, Configuration, DriveHooks, Fleet, Rereferenced, SIMULATED_MU1,
    assemble_observed, drive_hooked, drive_until, fleet_simulator, reassemble,
};
use crate::lockon::LockOn;
use crate::scan::{ScanSettings, initial_scan_on, tagged_objects};

/// The mission's constants, one set for both executions (this lock-step one and the robot
/// interface's `modbot_behaviours::mission`).
pub use modbot_behaviours::mission::{
    CAPSIZED_DEG, GOAL_TOLERANCE_M, LOOK_TIMEOUT_S, ORIENT_TIMEOUT_S, PASS_OVER_APPROACH_M, PASS_OVER_BACK_S,
    PASS_OVER_CROSSED_M, PASS_OVER_CYCLES, PASS_OVER_FACING_DEG, PASS_OVER_TRIES, PASS_OVER_TURN_DEG, REACHED_M,
    ROW_TIMEOUT_S, STAND_AFTER_PASS_S, WHEEL_SPEED_DEG_S,
};
/// Trajectory samples per simulated second.
pub const TRAJECTORY_HZ: f64 = 10.0;

/// How a mission runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MissionSettings {
    /// The cameras (noise and its seed).
    pub scan: ScanSettings,
    /// Time a row may take, s.
    pub row_timeout_s: f64,
}

impl Default for MissionSettings {
    fn default() -> MissionSettings {
        MissionSettings {
            scan: ScanSettings::default(),
            row_timeout_s: ROW_TIMEOUT_S,
        }
    }
}

/// One phase of the mission as it ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseLog {
    /// Its name: `friction`, `scan`, `modelling`, `roles`, `plan`, `row N: …`.
    pub phase: String,
    /// Simulated start time, s.
    pub start_s: f64,
    /// Simulated end time, s.
    pub end_s: f64,
    /// `ok` or `failed`.
    pub outcome: String,
    /// What it did or why it failed.
    pub detail: String,
}

/// What a mission did.
#[derive(Debug, Clone, Serialize)]
pub struct MissionReport {
    /// The world's name.
    pub world: String,
    /// The phases in the order they ran.
    pub phases: Vec<PhaseLog>,
    /// Whether the configuration's reference point ended within [`REACHED_M`] of the target.
    pub reached: bool,
    /// Final distance of Role#1's reference point to the target (the world's), m.
    pub final_distance_m: f64,
    /// Final heading of Role#1 less the last row's (the target's published yaw plus the
    /// row's yaw offset), deg in (−180, 180].
    pub final_heading_error_deg: f64,
    /// The failure that ended it, if any: the phase and the reason.
    pub failure: Option<String>,
    /// The friction band's μ.
    pub friction_mu: Option<f64>,
    /// Role#r is Module#(roles[r-1] + 1).
    pub roles: Vec<usize>,
    /// The executed plan.
    pub plan: Vec<SubGoal>,
    /// The deliberative planner's configurations for the same world, row by row.
    pub searched_configurations: Vec<String>,
    /// Each module's trajectory: (t, x, y, yaw) of its reference point, world frame.
    pub trajectories: Vec<Vec<[f64; 4]>>,
    /// The target as modelled (world frame), m.
    pub target_m: [f64; 2],
    /// Each tagged object's modelled position (world frame), m.
    pub objects: BTreeMap<String, [f64; 2]>,
    /// Simulated time at the end, s.
    pub sim_s: f64,
    /// At each row reached, the distance between the position the cameras gave and the
    /// simulator's, m.
    pub localisation_error_m: Vec<f64>,
    /// At each staging point a walking module reached, the distance between the position
    /// its camera gave and the simulator's, both relative to Role#1 (its shared point, its
    /// true one), m.
    pub staging_localisation_error_m: Vec<f64>,
    /// Every dock made and broken, in order (what Gazebo's DetachableJoint systems are to
    /// do in the same run: record 0051).
    pub docks: Vec<DockEvent>,
    /// The execution's states as they changed: (simulated time, s; the state). Empty for a
    /// mission on the lock-step seam.
    pub timeline: Vec<(f64, String)>,
}

impl MissionReport {
    /// The report of a mission of `world` not yet run.
    pub(crate) fn empty(world: &Scenario) -> MissionReport {
        MissionReport {
            world: world.name.clone(),
            phases: Vec::new(),
            reached: false,
            final_distance_m: f64::NAN,
            final_heading_error_deg: f64::NAN,
            failure: None,
            friction_mu: None,
            roles: Vec::new(),
            plan: Vec::new(),
            searched_configurations: Vec::new(),
            trajectories: Vec::new(),
            target_m: [f64::NAN; 2],
            objects: BTreeMap::new(),
            sim_s: 0.0,
            localisation_error_m: Vec::new(),
            staging_localisation_error_m: Vec::new(),
            docks: Vec::new(),
            timeline: Vec::new(),
        }
    }
}

/// A dock made or broken during the mission.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DockEvent {
    /// Simulated time, s.
    pub time_s: f64,
    /// `attach` or `detach`.
    pub action: &'static str,
    /// The dock's name in the simulator (`role3.F-role1.R`).
    pub dock: String,
    /// The module that docks (0 = Module#1) and its port.
    pub module: usize,
    /// Its port.
    pub port: &'static str,
    /// The module it docks to, and that one's port.
    pub partner_module: usize,
    /// The partner's port.
    pub partner_port: &'static str,
}

/// The region seeded start layouts are drawn from, world x and y, m: the modules' side of
/// the ground obstacle, with room for the assembly's ring (record 0049).
pub const LAYOUT_X_M: (f64, f64) = (-1.0, 0.6);
/// See [`LAYOUT_X_M`].
pub const LAYOUT_Y_M: (f64, f64) = (-0.9, 0.9);
/// Least distance between two modules' reference points in a seeded layout, m (a module is
/// 0.172 m long).
pub const LAYOUT_SPACING_M: f64 = 0.4;
/// Layouts tried before a seed is refused.
const LAYOUT_TRIES: usize = 100_000;

/// `world` with its six module starts drawn from `seed` (the thesis's "random positions,
/// arranged so that Module#1 becomes Role#1"): in [`LAYOUT_X_M`] × [`LAYOUT_Y_M`], at least
/// [`LAYOUT_SPACING_M`] apart, any heading; Module#1 is the one nearest the centroid and
/// stands at x ≤ −0.1 m (its assembly's ring then stays short of the ground obstacle), and
/// some module's camera is within reach of the target so that the scan can place it: its pan
/// axis ([`crate::scan::PAN_AXIS_AHEAD_M`] ahead of the reference point) within the camera's
/// range less the lens's offset from that axis and 5 cm (measured from the reference point,
/// a module facing away from the target at 1.93 m had its lens 2.03 m away and saw nothing).
/// The same seed gives the same layout.
pub fn seeded_layout(world: &Scenario, seed: u64) -> Result<Scenario, String> {
    use rand::{Rng, SeedableRng};
    let goal = world
        .goal
        .ok_or_else(|| format!("world `{}` has no goal: a layout needs the target", world.name))?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..LAYOUT_TRIES {
        let mut p: Vec<[f64; 3]> = Vec::with_capacity(6);
        while p.len() < 6 {
            let c = [
                rng.random_range(LAYOUT_X_M.0..=LAYOUT_X_M.1),
                rng.random_range(LAYOUT_Y_M.0..=LAYOUT_Y_M.1),
                rng.random_range(-180.0..180.0),
            ];
            if p.iter().all(|q| (q[0] - c[0]).hypot(q[1] - c[1]) >= LAYOUT_SPACING_M) {
                p.push(c);
            } else if rng.random_range(0..50) == 0 {
                p.clear();
            }
        }
        let cx = p.iter().map(|q| q[0]).sum::<f64>() / 6.0;
        let cy = p.iter().map(|q| q[1]).sum::<f64>() / 6.0;
        let d = |q: &[f64; 3]| (q[0] - cx).hypot(q[1] - cy);
        let first = (0..6).min_by(|&a, &b| d(&p[a]).total_cmp(&d(&p[b]))).unwrap_or(0);
        // Module#1 strictly nearest, so that it becomes Role#1.
        let unique = (0..6).all(|i| i == first || d(&p[i]) > d(&p[first]) + 1e-3);
        let reach = crate::scan::RANGE_M - crate::scan::LENS_M[0] - 0.05;
        let sees_target = p.iter().any(|q| {
            let (s, c) = q[2].to_radians().sin_cos();
            let a = crate::scan::PAN_AXIS_AHEAD_M;
            (q[0] + a * c - goal[0]).hypot(q[1] + a * s - goal[1]) <= reach
        });
        if !unique || p[first][0] > -0.1 || !sees_target {
            continue;
        }
        p.swap(0, first);
        let mut out = world.clone();
        out.robot_starts = p
            .iter()
            .map(|q| modbot_core::scenario::StartPose {
                xyz: [q[0], q[1], 0.0],
                yaw_deg: q[2],
            })
            .collect();
        out.robot_start = out.robot_starts[0];
        out.name = format!("{}_seed{seed}", world.name);
        return Ok(out);
    }
    Err(format!("no layout for seed {seed} in {LAYOUT_TRIES} tries"))
}

/// Samples every module's reference point at [`TRAJECTORY_HZ`].
pub(crate) struct Tracker {
    pub(crate) fleet: Fleet,
    pub(crate) next_s: f64,
    pub(crate) tracks: Vec<Vec<[f64; 4]>>,
}

impl Tracker {
    pub(crate) fn observe(&mut self, sim: &dyn Plant) {
        let t = sim.time();
        if t + 1e-9 < self.next_s {
            return;
        }
        self.next_s = t + 1.0 / TRAJECTORY_HZ;
        for (i, track) in self.tracks.iter_mut().enumerate() {
            let p = self.fleet.pose(sim, i);
            track.push([t, p.x, p.y, p.yaw]);
        }
    }
}

/// The mission's bookkeeping of phases.
pub(crate) struct Phases<'a> {
    pub(crate) logs: Vec<PhaseLog>,
    /// At each row reached, how far the cameras' position was from the simulator's, m.
    pub(crate) localisation: Vec<f64>,
    /// At each staging point reached, how far the walking module's camera was off in
    /// Role#1's frame, m.
    pub(crate) staging_localisation: Vec<f64>,
    /// Docks made and broken.
    pub(crate) docks: Vec<DockEvent>,
    pub(crate) progress: &'a mut dyn FnMut(&PhaseLog),
}

impl Phases<'_> {
    /// Logs `phase` as failed with `reason`; the mission's error.
    pub(crate) fn failed(&mut self, phase: &str, start_s: f64, end_s: f64, reason: String) -> String {
        match self.close(phase, start_s, end_s, Err(reason)) {
            Err(e) => e,
            Ok(()) => format!("{phase} failed"),
        }
    }

    pub(crate) fn close(
        &mut self,
        phase: &str,
        start_s: f64,
        end_s: f64,
        result: Result<String, String>,
    ) -> Result<(), String> {
        let (outcome, detail) = match &result {
            Ok(d) => ("ok", d.clone()),
            Err(e) => ("failed", e.clone()),
        };
        let log = PhaseLog {
            phase: phase.to_string(),
            start_s,
            end_s,
            outcome: outcome.into(),
            detail,
        };
        (self.progress)(&log);
        self.logs.push(log);
        result.map(|_| ()).map_err(|e| format!("{phase}: {e}"))
    }
}

/// Runs the mission of `world` (six lone wheel-foot modules at its `robot_starts`, a ground
/// obstacle, a lath and a target) on the robot interface's embedded binding (record 0059:
/// each module sees only its own sensors; [`crate::embedded_mission`]), calling `progress`
/// as each phase ends. A failure ends the mission with the phase and its reason in the
/// report (never a panic or a hang: every phase has a time limit).
pub fn run_mission(
    world: &Scenario,
    settings: &MissionSettings,
    progress: &mut dyn FnMut(&PhaseLog),
) -> Result<MissionReport, String> {
    crate::embedded_mission::run_mission_interface(world, settings, &mut searched_configurations, progress)
}

/// The mission on the lock-step seam ([`run_mission_on`]) with this process's simulator: what
/// mission_node does over ROS with sim_node (record 0052), until the ROS binding of the robot
/// interface replaces that seam (issue 50).
pub fn run_mission_lockstep(
    world: &Scenario,
    settings: &MissionSettings,
    progress: &mut dyn FnMut(&PhaseLog),
) -> Result<MissionReport, String> {
    let mut sim = fleet_simulator(world)?;
    run_mission_on(&mut sim, world, settings, &mut searched_configurations, progress)
}

/// [`run_mission_lockstep`] on `plant`, which must hold the fleet of `world` as
/// [`fleet_simulator`] builds it, at its start (a simulator in another process: the ROS
/// mission, record 0052), with `search` the deliberative planner's configurations for the
/// modelled world ([`searched_configurations`] here; planner_node over ROS).
pub fn run_mission_on(
    plant: &mut dyn Plant,
    world: &Scenario,
    settings: &MissionSettings,
    search: &mut dyn FnMut(&Scenario) -> Result<Vec<String>, String>,
    progress: &mut dyn FnMut(&PhaseLog),
) -> Result<MissionReport, String> {
    let sim = plant;
    let fleet = Fleet::of(sim)?;
    if fleet.modules.len() != 6 {
        return Err(format!(
            "world `{}` has {} robot_starts: the mission needs six modules",
            world.name,
            fleet.modules.len()
        ));
    }
    let mut tracker = Tracker {
        fleet: fleet.clone(),
        next_s: 0.0,
        tracks: vec![Vec::new(); 6],
    };
    let mut phases = Phases {
        logs: Vec::new(),
        localisation: Vec::new(),
        staging_localisation: Vec::new(),
        docks: Vec::new(),
        progress,
    };
    let mut report = MissionReport::empty(world);
    let outcome = mission_phases(
        world,
        settings,
        search,
        sim,
        &fleet,
        &mut tracker,
        &mut phases,
        &mut report,
    );
    report.failure = outcome.err();
    let goal = world.goal.unwrap_or(report.target_m);
    if let Some(&r1) = report.roles.first() {
        let p = fleet.pose(sim, r1);
        report.final_distance_m = (p.x - goal[0]).hypot(p.y - goal[1]);
        report.final_heading_error_deg =
            modbot_gaits::modular::wrap_rad(p.yaw - final_heading(world, &report.plan)).to_degrees();
        report.reached = report.failure.is_none() && report.final_distance_m <= REACHED_M;
    }
    tracker.next_s = 0.0;
    tracker.observe(sim);
    report.phases = phases.logs;
    report.localisation_error_m = phases.localisation;
    report.staging_localisation_error_m = phases.staging_localisation;
    report.docks = phases.docks;
    report.trajectories = tracker.tracks;
    report.sim_s = sim.time();
    Ok(report)
}

#[allow(clippy::too_many_arguments)]
fn mission_phases(
    world: &Scenario,
    settings: &MissionSettings,
    search: &mut dyn FnMut(&Scenario) -> Result<Vec<String>, String>,
    sim: &mut dyn Plant,
    fleet: &Fleet,
    tracker: &mut Tracker,
    phases: &mut Phases<'_>,
    report: &mut MissionReport,
) -> Result<(), String> {
    friction_phase(world, sim.time(), phases, report)?;
    // The position controller plans with the steps measured in this simulator at μ = 1.0,
    // the only band we have measured them for (record 0049).
    let table: StepTable = SIMULATED_MU1;

    // 2. Scan.
    let t0 = sim.time();
    let scan = initial_scan_on(sim, world, &settings.scan);
    tracker.observe(sim);
    let scan = match scan {
        Ok(s) => s,
        Err(e) => return phases.close("scan", t0, sim.time(), Err(e)),
    };
    let seen: usize = scan.scans.iter().map(|s| s.sightings.len()).sum();
    phases.close(
        "scan",
        t0,
        sim.time(),
        Ok(format!("{} readings, {seen} things seen", scan.captures.len())),
    )?;

    // 3.–5. Modelling, roles and the plan, Module#1's pose the world's origin.
    let origin = fleet.pose(sim, 0);
    let Planned {
        placed,
        objects,
        roles,
        plan,
        target_name,
    } = plan_mission(world, &scan, origin, sim.time(), search, phases, report)?;

    // 6. Role#1 turns in place to face the way through the first row's reference (record
    // 0049): the configurations keep Role#1's heading, and neither the quadruped's position
    // control nor its pass-over turns it round.
    let refs = references(world, &objects, &target_name);
    let first = plan
        .rows
        .first()
        .and_then(|r| refs.get(&r.reference))
        .copied()
        .ok_or_else(|| "the plan has no first row with a known reference".to_string())?;
    let t = sim.time();
    let r1 = fleet.modules[roles.modules[0]].clone();
    let here = fleet.pose(sim, roles.modules[0]);
    let mut turn = modbot_gaits::modular::single::SingleGoto::new(
        r1.joints,
        sim.joint_names().len(),
        Goal {
            x: here.x,
            y: here.y,
            yaw: first.yaw,
        },
        table,
        None,
        modbot_gaits::modular::single::HeadingBands::default(),
    );
    // In steps of 0.1 s (the goto's time restarts with each: it keeps none of its own).
    while turn.phase() != modbot_gaits::modular::single::GotoPhase::Done && sim.time() < t + ORIENT_TIMEOUT_S {
        drive_until(sim, &mut turn, r1.foot, 0.1, &mut |s| {
            tracker.observe(s);
            false
        })?;
    }
    let now = fleet.pose(sim, roles.modules[0]);
    let err = modbot_gaits::modular::wrap_rad(now.yaw - first.yaw).to_degrees();
    let result = if turn.phase() == modbot_gaits::modular::single::GotoPhase::Done {
        Ok(format!(
            "Role#1 turned from {:.1}° to {:.1}° ({err:+.1}° off), moved {:.3} m",
            here.yaw.to_degrees(),
            now.yaw.to_degrees(),
            (now.x - here.x).hypot(now.y - here.y)
        ))
    } else {
        Err(format!(
            "Role#1 did not turn to {:.1}° in {ORIENT_TIMEOUT_S} s ({err:+.1}° off)",
            first.yaw.to_degrees()
        ))
    };
    phases.close("orient", t, sim.time(), result)?;

    // 7. The sequencer, row by row.
    execute(
        sim,
        world,
        fleet,
        &roles,
        plan,
        refs,
        &objects,
        &placed.iter().enumerate().map(|(i, p)| (i, [p.x, p.y])).collect(),
        &target_name,
        table,
        settings,
        tracker,
        phases,
    )
}

/// What the modelling, the roles and the plan give the execution.
pub(crate) struct Planned {
    /// Each module as the modelling placed it (world frame).
    pub(crate) placed: Vec<Pose2>,
    /// Each tagged object's modelled position (world frame), m.
    pub(crate) objects: BTreeMap<String, [f64; 2]>,
    pub(crate) roles: RoleAssignment,
    pub(crate) plan: StrategicPlan,
    /// The target's tag id.
    pub(crate) target_name: String,
}

/// Modelling (positions relative to Module#1, placed in the world at `origin`, Module#1's
/// pose), roles and the plan (with the deliberative search's check), each a phase at `t`.
pub(crate) fn plan_mission(
    world: &Scenario,
    scan: &crate::scan::ScanOutcome,
    origin: Pose2,
    t: f64,
    search: &mut dyn FnMut(&Scenario) -> Result<Vec<String>, String>,
    phases: &mut Phases<'_>,
    report: &mut MissionReport,
) -> Result<Planned, String> {
    // 3. Modelling: positions relative to Module#1, placed in the world at Module#1's pose.
    let scene = model(&scan.scans).map_err(|e| e.to_string());
    let scene = match scene {
        Ok(s) => s,
        Err(e) => return Err(phases.failed("modelling", t, t, e)),
    };
    let unplaced: Vec<String> = scene
        .modules
        .iter()
        .enumerate()
        .filter(|(_, m)| m.is_none())
        .map(|(i, _)| format!("Module#{}", i + 1))
        .collect();
    if !unplaced.is_empty() {
        return Err(phases.failed(
            "modelling",
            t,
            t,
            format!("not placed by any scan: {}", unplaced.join(", ")),
        ));
    }
    let placed: Vec<Pose2> = scene
        .modules
        .iter()
        .flatten()
        .map(|p| Pose2 {
            x: origin.x + p.position[0],
            y: origin.y + p.position[1],
            yaw: p.heading,
        })
        .collect();
    let objects: BTreeMap<String, [f64; 2]> = scene
        .objects
        .iter()
        .map(|(name, (_, p))| (name.clone(), [origin.x + p.position[0], origin.y + p.position[1]]))
        .collect();
    report.objects = objects.clone();
    phases.close(
        "modelling",
        t,
        t,
        Ok(format!(
            "{} modules and {} objects placed in {} rounds",
            placed.len(),
            objects.len(),
            scene.rounds
        )),
    )?;

    // 4. Roles.
    let roles = match distribute_roles(&placed, StagingOrigin::DetPoint) {
        Ok(r) => r,
        Err(e) => return Err(phases.failed("roles", t, t, e.to_string())),
    };
    report.roles = roles.modules.to_vec();
    phases.close(
        "roles",
        t,
        t,
        Ok((1..=6)
            .map(|r| format!("Role#{r}=Module#{}", roles.modules[r - 1] + 1))
            .collect::<Vec<_>>()
            .join(" ")),
    )?;

    // 5. The plan, on the modelled world: the objects where the scan put them.
    let mut modelled = world.clone();
    for o in modelled.obstacles.iter_mut() {
        match objects.get(&o.name) {
            Some(p) => o.position_m = *p,
            None => {
                return Err(phases.failed("plan", t, t, format!("the scan did not see the obstacle `{}`", o.name)));
            }
        }
    }
    let target_name = world
        .markers
        .iter()
        .find(|m| m.tag == modbot_core::scenario::Tag::Target)
        .map(|m| m.name.clone())
        .unwrap_or_else(|| "target".into());
    let Some(&target) = objects.get(&target_name) else {
        return Err(phases.failed("plan", t, t, format!("the scan did not see the target `{target_name}`")));
    };
    report.target_m = target;
    modelled.goal = Some(target);
    let mut plan = match source_decomposition(&modelled) {
        Ok(p) => p,
        Err(e) => return Err(phases.failed("plan", t, t, e.to_string())),
    };
    // The approach before a pass-over stops farther back than the source's (record 0049).
    for i in 1..plan.rows.len() {
        if plan.rows[i].action == Action::PassOver && plan.rows[i - 1].action == Action::Drive {
            plan.rows[i - 1].longitudinal_m = PASS_OVER_APPROACH_M;
        }
    }
    report.plan = plan.rows.clone();
    let mut template: Vec<String> = plan.rows.iter().map(|r| r.configuration.clone()).collect();
    template.dedup();
    report.searched_configurations = match search(&modelled) {
        Ok(c) => c,
        Err(e) => return Err(phases.failed("plan", t, t, format!("the deliberative search: {e}"))),
    };
    if report.searched_configurations != template {
        return Err(phases.failed(
            "plan",
            t,
            t,
            format!(
                "the deliberative search chose {:?}, the source's template {:?}",
                report.searched_configurations, template
            ),
        ));
    }
    phases.close(
        "plan",
        t,
        t,
        Ok(format!(
            "{} rows: {}",
            plan.rows.len(),
            plan.rows
                .iter()
                .map(|r| format!(
                    "[{}, {}, {:+.2}, {}]",
                    r.configuration,
                    r.reference,
                    r.longitudinal_m,
                    if r.ability { 1 } else { 0 }
                ))
                .collect::<Vec<_>>()
                .join(" ")
        )),
    )?;
    Ok(Planned {
        placed,
        objects,
        roles,
        plan,
        target_name,
    })
}

/// The friction estimate (§6.2): Module#1 walks its five low steps on the world's ground,
/// alone (record 0049), a phase at `t`.
pub(crate) fn friction_phase(
    world: &Scenario,
    t: f64,
    phases: &mut Phases<'_>,
    report: &mut MissionReport,
) -> Result<(), String> {
    let catalog = ModuleCatalog::builtin();
    // 1. Friction: Module#1 walks its five low steps on the world's ground, alone (record 0049).
    let topology = Topology::resolve("wheelfoot", &catalog).map_err(|e| e.to_string())?;
    let walk = crate::friction::estimate_friction(topology, world, BandEdges::Thesis);
    let (mu, detail) = match walk {
        Ok(w) => (
            w.estimate.mu,
            Ok(format!(
                "mean of the step maxima {:.3} → μ {}",
                w.estimate.mean,
                w.estimate.mu.map_or("none".into(), |m| format!("{m:.1}"))
            )),
        ),
        Err(e) => (None, Err(e)),
    };
    phases.close("friction", t, t, detail)?;
    report.friction_mu = mu;
    Ok(())
}

/// The deliberative planner's configurations in order, for the modelled world, with the
/// quadruped and the wheeled vehicle available and the quadruped first (the source's plan
/// assembles it first): the search's sequence, to set beside the template's. From the
/// world's `robot_start` to its `goal` (the modelled target), at 0.05 m cells.
pub fn searched_configurations(world: &Scenario) -> Result<Vec<String>, String> {
    let caps = modbot_planner::capabilities::Capabilities::builtin();
    modbot_planner::deliberative::plan(world, &caps, &["quadruped", "wheeled"], "quadruped", 0.05)
        .map(|p| p.configurations)
        .map_err(|e| e.to_string())
}

/// The heading the plan ends with: its last row's reference's published yaw plus the row's
/// yaw offset, rad (NaN without a plan or when the reference is not a tagged object of the
/// world: no heading to compare with, and the summary says so).
pub(crate) fn final_heading(world: &Scenario, plan: &[SubGoal]) -> f64 {
    let Some(last) = plan.last() else {
        return f64::NAN;
    };
    let objects = tagged_objects(world);
    let reference = objects.iter().find(|o| {
        o.name == last.reference || (last.reference == "target" && o.tag == modbot_core::scenario::Tag::Target)
    });
    reference.map_or(f64::NAN, |o| o.yaw) + last.yaw_deg.to_radians()
}

/// The references of the plan's rows: each obstacle's and the target's modelled position,
/// with its published yaw (as the source's camera read it).
pub(crate) fn references(
    world: &Scenario,
    objects: &BTreeMap<String, [f64; 2]>,
    target: &str,
) -> BTreeMap<String, Pose2> {
    let yaws: BTreeMap<String, f64> = tagged_objects(world).into_iter().map(|o| (o.name, o.yaw)).collect();
    let mut refs = BTreeMap::new();
    for (name, p) in objects {
        let yaw = yaws.get(name).copied().unwrap_or(0.0);
        let key = if name == target {
            "target".to_string()
        } else {
            name.clone()
        };
        refs.insert(key, Pose2 { x: p[0], y: p[1], yaw });
    }
    refs
}

/// The hooks of the configuration's drives: Role#1's camera locked on the row's reference
/// localises the base and stops the configuration while the reference is lost; the
/// trajectories are sampled; a copy of the sequencer ends a drive when its row is reached.
struct Hooks<'a> {
    lock: &'a mut LockOn,
    tracker: &'a mut Tracker,
    /// Localise by the camera (position control); otherwise the controller needs no base.
    localise: bool,
    /// End as soon as the reference is seen.
    until_locked: bool,
    probe: Option<(Sequencer, String)>,
}

impl DriveHooks for Hooks<'_> {
    fn base(&mut self, sim: &dyn Plant) -> Option<nalgebra::Isometry3<f64>> {
        if self.localise { self.lock.base(sim) } else { None }
    }

    fn hold(&mut self, sim: &dyn Plant) -> bool {
        self.localise && !self.lock.locked(sim.time())
    }

    fn adjust(&mut self, _sim: &dyn Plant, out: &mut [JointTarget]) {
        self.lock.command(out);
    }

    fn after(&mut self, sim: &dyn Plant) -> Result<bool, String> {
        self.tracker.observe(sim);
        self.lock.update(sim)?;
        if self.until_locked {
            return Ok(self.lock.locked(sim.time()) && self.lock.estimate().is_some());
        }
        if let Some((probe, conf)) = self.probe.as_mut()
            && let Some(p) = estimated_pose(self.lock, sim)
        {
            return Ok(!matches!(probe.tick(sim.time(), p, conf, false), Tick::Command(_)));
        }
        Ok(false)
    }
}

/// Role#1's pose as the lock-on estimates it: position from the camera, heading from the
/// compass.
fn estimated_pose(lock: &LockOn, sim: &dyn Plant) -> Option<Pose2> {
    lock.base(sim).map(|b| Pose2 {
        x: b.translation.x,
        y: b.translation.y,
        yaw: modbot_gaits::modular::yaw_of(&b),
    })
}

/// Holds every joint at the targets it had when it started.
struct HoldTargets(Vec<f64>);

impl Controller for HoldTargets {
    fn name(&self) -> &str {
        "hold"
    }

    fn joint_count(&self) -> usize {
        self.0.len()
    }

    fn step(&mut self, _dt: f64, _obs: &modbot_gaits::Observation<'_>, out: &mut [JointTarget]) {
        for (o, v) in out.iter_mut().zip(&self.0) {
            *o = JointTarget::Position(*v);
        }
    }

    fn period(&self) -> Option<f64> {
        None
    }

    fn completed_cycles(&self) -> usize {
        0
    }
}

#[allow(clippy::too_many_arguments)]
fn execute(
    sim: &mut dyn Plant,
    world: &Scenario,
    fleet: &Fleet,
    roles: &RoleAssignment,
    plan: StrategicPlan,
    refs: BTreeMap<String, Pose2>,
    landmarks: &BTreeMap<String, [f64; 2]>,
    modelled_starts: &BTreeMap<usize, [f64; 2]>,
    target_name: &str,
    table: StepTable,
    settings: &MissionSettings,
    tracker: &mut Tracker,
    phases: &mut Phases<'_>,
) -> Result<(), String> {
    let mut seq = Sequencer::new(
        plan.clone(),
        refs.clone(),
        SequencerSettings {
            row_timeout_s: settings.row_timeout_s,
            goal_position_m: Some(GOAL_TOLERANCE_M),
            pass_over_yaw_rad: Some(PASS_OVER_FACING_DEG.to_radians()),
            ..SequencerSettings::default()
        },
    );
    let n = sim.joint_names().len();
    let joints = fleet.role_joints(roles);
    let r1 = roles.modules[0];
    let role1_modelled = *modelled_starts
        .get(&r1)
        .ok_or_else(|| format!("the modelling did not place Role#1 (Module#{})", r1 + 1))?;
    let base = fleet.modules[r1].foot;
    let mut lock = LockOn::new(
        sim,
        world,
        &[
            (fleet.modules[r1].robot, joints[0]),
            (fleet.modules[roles.modules[1]].robot, joints[1]),
        ],
        settings.scan.noise,
        settings.scan.seed,
        landmarks.clone(),
    )?;
    let mut configuration = "single_module".to_string();
    let mut assembled: Option<AssemblyOutcome> = None;
    let mut row_start = sim.time();
    // Pass-overs run in the current row (more than one when one did not cross).
    let mut pass_over_tries = 0;
    loop {
        let now = sim.time();
        let row = seq.row();
        let label = |row: usize| {
            plan.rows.get(row).map_or(String::new(), |r| {
                format!(
                    "row {}: {} {} {}",
                    row + 1,
                    r.configuration,
                    action_name(r.action),
                    r.reference
                )
            })
        };
        // The camera on the row's reference, and in a configuration that is to move, its
        // sighting: the configuration looks before it drives.
        let mut pose = fleet.pose(sim, r1);
        if let Some(r) = plan.rows.get(row) {
            let object = if r.reference == "target" {
                target_name
            } else {
                r.reference.as_str()
            };
            lock.set_object(object);
            if r.configuration == configuration {
                let mut hold = HoldTargets(sim.targets().to_vec());
                let mut hooks = Hooks {
                    lock: &mut lock,
                    tracker,
                    localise: false,
                    until_locked: true,
                    probe: None,
                };
                if !(hooks.lock.locked(now) && hooks.lock.estimate().is_some()) {
                    drive_hooked(sim, &mut hold, base, LOOK_TIMEOUT_S, &mut hooks)?;
                }
                if !lock.locked(sim.time()) {
                    return phases.close(
                        &label(row),
                        row_start,
                        sim.time(),
                        Err(format!(
                            "Role#1's camera saw no landmark in {LOOK_TIMEOUT_S} s (looking for `{object}`)"
                        )),
                    );
                }
                pose = estimated_pose(&lock, sim).unwrap_or(pose);
            }
        }
        let now = sim.time();
        match seq.tick(now, pose, &configuration, false) {
            Tick::Done => return Ok(()),
            Tick::Reached(n) => {
                let d = seq.target(n).map_or(f64::NAN, |t| (t.x - pose.x).hypot(t.y - pose.y));
                let truth = fleet.pose(sim, r1);
                phases.localisation.push((truth.x - pose.x).hypot(truth.y - pose.y));
                phases.close(
                    &label(n),
                    row_start,
                    now,
                    Ok(format!(
                        "reached at ({:.3}, {:.3}) by the camera ({:.3} m off the simulator's), {:.3} m from the row's point, heading {:.1}°{}",
                        pose.x,
                        pose.y,
                        (truth.x - pose.x).hypot(truth.y - pose.y),
                        d,
                        pose.yaw.to_degrees(),
                        if pass_over_tries > 1 {
                            format!(", across at pass-over {pass_over_tries}")
                        } else {
                            String::new()
                        }
                    )),
                )?;
                pass_over_tries = 0;
                row_start = now;
            }
            Tick::Replan { row, reason } => {
                // The source replans nothing (spec §6.1); the mission ends with the row.
                return phases.close(&label(row), row_start, now, Err(reason));
            }
            Tick::Command(Command::Reconfigure(to)) => {
                let to_conf = match to.as_str() {
                    "quadruped" => Configuration::Quadruped,
                    "wheeled" => Configuration::Wheeled,
                    other => {
                        return phases.close(
                            &label(row),
                            row_start,
                            now,
                            Err(format!("no assembly for the configuration `{other}`")),
                        );
                    }
                };
                let t0 = sim.time();
                let mut observe = |sim: &dyn Plant| tracker.observe(sim);
                // The walking modules find themselves with their cameras, from Role#1's
                // point as the modelling placed it or, in a configuration, as its cameras
                // last placed it (record 0050).
                let localise = CameraLocalisation {
                    world,
                    noise: settings.scan.noise,
                    seed: settings.scan.seed,
                    landmarks: landmarks.clone(),
                    role1_xy: match (&assembled, lock.estimate()) {
                        (Some(_), Some(e)) => e,
                        _ => role1_modelled,
                    },
                    // The modelled starts serve the first assembly; reassembling, the legs
                    // leave from beside the body, in sight of it.
                    starts: if assembled.is_none() {
                        modelled_starts.clone()
                    } else {
                        BTreeMap::new()
                    },
                };
                let result = match assembled.as_ref().map(|a| a.configuration) {
                    None => assemble_observed(sim, fleet, roles, to_conf, table, &[], Some(&localise), &mut observe),
                    Some(from) => reassemble(sim, fleet, roles, from, to_conf, table, Some(&localise), &mut observe),
                };
                let phase = format!(
                    "row {}: {} {}",
                    row + 1,
                    if assembled.is_none() { "assembly" } else { "reassembly" },
                    to
                );
                match result {
                    Ok(out) => {
                        let located: Vec<f64> = out
                            .roles
                            .iter()
                            .map(|r| r.staging_localisation_m)
                            .filter(|e| e.is_finite())
                            .collect();
                        phases.staging_localisation.extend(&located);
                        phases.docks.extend(dock_events(roles, assembled.as_ref(), &out)?);
                        let detail = format!(
                            "{} docks, complete at {:.1} s, Role#1 moved {:.3} m, the walking modules' cameras {:.3} m at most off the simulator's at their staging points",
                            out.roles.len(),
                            out.complete_s,
                            out.role1_drift_m,
                            located.iter().copied().fold(0.0, f64::max)
                        );
                        assembled = Some(out);
                        configuration = to.clone();
                        seq.restart_row_clock(sim.time());
                        phases.close(&phase, t0, sim.time(), Ok(detail))?;
                    }
                    Err(e) => return phases.close(&phase, t0, sim.time(), Err(e.to_string())),
                }
            }
            Tick::Command(cmd) => {
                let Some(out) = assembled.as_ref() else {
                    return phases.close(&label(row), row_start, now, Err("no configuration assembled".into()));
                };
                let stop_m = if row + 1 == plan.rows.len() {
                    GOAL_TOLERANCE_M
                } else {
                    SequencerSettings::default().position_m
                };
                // A drive row that leads to a pass-over row ends facing that row's way.
                let facing = seq.pass_over_way(row);
                let inner: Box<dyn Controller> = match (&cmd, out.configuration) {
                    (Command::Ability(Action::PassOver, _), Configuration::Quadruped) => {
                        Box::new(PassOver::new(joints, n, PASS_OVER_CYCLES))
                    }
                    (Command::Drive(t), Configuration::Quadruped) => match facing {
                        // The approach to a pass-over: there, turn on the spot to face the
                        // way it climbs (record 0055).
                        Some(way) => Box::new(
                            QuadGoto::new(
                                joints,
                                n,
                                Goal {
                                    yaw: way.yaw,
                                    ..goal_of(*t)
                                },
                                stop_m,
                            )
                            .aligned_within(PASS_OVER_TURN_DEG),
                        ),
                        None => Box::new(QuadGoto::new(joints, n, goal_of(*t), stop_m)),
                    },
                    (Command::Drive(t), Configuration::Wheeled) => Box::new(WheeledGoto::new(
                        joints,
                        n,
                        WheeledPose::Normal,
                        goal_of(*t),
                        WHEEL_SPEED_DEG_S,
                        stop_m,
                    )),
                    (Command::Ability(Action::PassUnder, t), Configuration::Wheeled) => Box::new(WheeledGoto::new(
                        joints,
                        n,
                        WheeledPose::Low,
                        goal_of(*t),
                        WHEEL_SPEED_DEG_S,
                        stop_m,
                    )),
                    (c, conf) => {
                        return phases.close(
                            &label(row),
                            row_start,
                            now,
                            Err(format!("`{}` cannot do {c:?}", conf.name())),
                        );
                    }
                };
                let pass_over = matches!(cmd, Command::Ability(Action::PassOver, _));
                let mut c = Rereferenced::new(inner, fleet, roles, out);
                let limit = row_start + settings.row_timeout_s + 1.0;
                if pass_over {
                    // Its cycles, then the stance (§6.4). It needs no position; the camera
                    // keeps looking. Then where it stands is checked: not across, it walks
                    // back to the approach point and tries again.
                    let reference = plan.rows[row].reference.clone();
                    let way = refs.get(&reference).copied();
                    let approach = row.checked_sub(1).and_then(|r| seq.target(r));
                    // Role#1's foot frame's vector that is vertical while the quadruped
                    // stands (it stands at the approach point): how far from upright a
                    // pass-over left it.
                    let foot = fleet.modules[r1].foot;
                    let upright = sim.link_poses()[foot].rotation.inverse() * nalgebra::Vector3::z();
                    // The reason to end the row when the body is capsized (more than
                    // CAPSIZED_DEG from upright), Role#1 at `at`.
                    let capsized = |sim: &dyn Plant, at: Pose2, what: String| {
                        let up = sim.link_poses()[foot].rotation * upright;
                        let tilt = up.z.clamp(-1.0, 1.0).acos().to_degrees();
                        (tilt > CAPSIZED_DEG)
                            .then(|| format!("{what}: its body {tilt:.0}° from upright at ({:.3}, {:.3})", at.x, at.y))
                    };
                    let how_far = |past: f64| {
                        if past < 0.0 {
                            format!("{:.3} m short of", -past)
                        } else {
                            format!("{past:.3} m past")
                        }
                    };
                    loop {
                        pass_over_tries += 1;
                        let mut hooks = Hooks {
                            lock: &mut lock,
                            tracker,
                            localise: false,
                            until_locked: false,
                            probe: None,
                        };
                        while c.completed_cycles() < PASS_OVER_CYCLES && sim.time() < limit {
                            drive_hooked(sim, &mut c, base, 0.1, &mut hooks)?;
                        }
                        let mut stand = Rereferenced::new(
                            Box::new(QuadWalk::new("stand", joints, n, QuadGait::Stand)),
                            fleet,
                            roles,
                            out,
                        );
                        drive_hooked(sim, &mut stand, base, STAND_AFTER_PASS_S, &mut hooks)?;
                        if c.completed_cycles() < PASS_OVER_CYCLES {
                            // Out of time: the sequencer ends the row.
                            break;
                        }
                        // Where it stands, by the camera (looking first if it lost sight).
                        hooks.until_locked = true;
                        if !(hooks.lock.locked(sim.time()) && hooks.lock.estimate().is_some()) {
                            let mut hold = HoldTargets(sim.targets().to_vec());
                            drive_hooked(sim, &mut hold, base, LOOK_TIMEOUT_S, &mut hooks)?;
                        }
                        let here = estimated_pose(&lock, sim).unwrap_or_else(|| fleet.pose(sim, r1));
                        if let Some(why) =
                            capsized(sim, here, format!("pass-over {pass_over_tries} capsized the quadruped"))
                        {
                            return phases.close(&label(row), row_start, sim.time(), Err(why));
                        }
                        let past = way.map_or(f64::INFINITY, |w| {
                            (here.x - w.x) * w.yaw.cos() + (here.y - w.y) * w.yaw.sin()
                        });
                        if past > PASS_OVER_CROSSED_M {
                            seq.ability_complete();
                            break;
                        }
                        let Some(approach) = approach.filter(|_| pass_over_tries < PASS_OVER_TRIES) else {
                            return phases.close(
                                &label(row),
                                row_start,
                                sim.time(),
                                Err(format!(
                                    "{pass_over_tries} pass-overs, the last leaving the quadruped's centre {} `{reference}` (across: more than {PASS_OVER_CROSSED_M} m past it)",
                                    how_far(past)
                                )),
                            );
                        };
                        // Back to the approach point, localised by the camera, then again.
                        // Facing the way again (record 0055).
                        let facing = way.map_or(approach.yaw, |w| w.yaw);
                        let mut back = Rereferenced::new(
                            Box::new(
                                QuadGoto::new(
                                    joints,
                                    n,
                                    Goal {
                                        yaw: facing,
                                        ..goal_of(approach)
                                    },
                                    stop_m,
                                )
                                .aligned_within(PASS_OVER_TURN_DEG),
                            ),
                            fleet,
                            roles,
                            out,
                        );
                        let mut hooks = Hooks {
                            lock: &mut lock,
                            tracker,
                            localise: true,
                            until_locked: false,
                            probe: None,
                        };
                        let back_start = sim.time();
                        loop {
                            drive_hooked(sim, &mut back, base, 0.5, &mut hooks)?;
                            let p = estimated_pose(hooks.lock, sim).unwrap_or_else(|| fleet.pose(sim, r1));
                            let off_deg = modbot_gaits::modular::wrap_rad(p.yaw - facing).to_degrees();
                            if let Some(why) = capsized(
                                sim,
                                p,
                                format!(
                                    "the quadruped capsized walking back to its approach point after pass-over {pass_over_tries}"
                                ),
                            ) {
                                return phases.close(&label(row), row_start, sim.time(), Err(why));
                            }
                            if (p.x - approach.x).hypot(p.y - approach.y) <= stop_m
                                && off_deg.abs() <= PASS_OVER_FACING_DEG
                            {
                                break;
                            }
                            if sim.time() - back_start > PASS_OVER_BACK_S || sim.time() > limit {
                                return phases.close(
                                    &label(row),
                                    row_start,
                                    sim.time(),
                                    Err(format!(
                                        "pass-over {pass_over_tries} left the quadruped's centre {} `{reference}` (across: more than {PASS_OVER_CROSSED_M} m past it), and it did not get back to its approach point facing the way in {:.0} s (still {:.3} m from it, {:+.1}° off the way)",
                                        how_far(past),
                                        sim.time() - back_start,
                                        (p.x - approach.x).hypot(p.y - approach.y),
                                        off_deg
                                    )),
                                );
                            }
                        }
                        c = Rereferenced::new(Box::new(PassOver::new(joints, n, PASS_OVER_CYCLES)), fleet, roles, out);
                    }
                } else {
                    // Drive until the sequencer says the row is reached (or its time is up),
                    // localised by the camera.
                    let mut hooks = Hooks {
                        lock: &mut lock,
                        tracker,
                        localise: true,
                        until_locked: false,
                        probe: Some((seq.clone(), configuration.clone())),
                    };
                    drive_hooked(sim, &mut c, base, settings.row_timeout_s + 1.0, &mut hooks)?;
                }
            }
        }
    }
}

/// The docks a reassembly broke (the old configuration's Roles #3–#6, when `out` is a
/// reassembly of `before`) and the ones `out` made, in order.
fn dock_events(
    roles: &RoleAssignment,
    before: Option<&AssemblyOutcome>,
    out: &AssemblyOutcome,
) -> Result<Vec<DockEvent>, String> {
    let event = |time_s: f64, action: &'static str, conf: Configuration, role: usize| {
        modbot_planner::assembly::role_target(conf.name(), role)
            .map(|t| DockEvent {
                time_s: (time_s * 1000.0).round() / 1000.0,
                action,
                dock: crate::assemble::dock_name(t),
                module: roles.modules[role - 1],
                port: t.port,
                partner_module: roles.modules[t.partner_role - 1],
                partner_port: t.partner_port,
            })
            .map_err(|e| e.to_string())
    };
    let mut events = Vec::new();
    if let (Some(t), Some(b)) = (out.detached_s, before) {
        for role in 3..=6 {
            events.push(event(t, "detach", b.configuration, role)?);
        }
    }
    for r in &out.roles {
        events.push(event(r.docked_s, "attach", out.configuration, r.role)?);
    }
    Ok(events)
}

fn goal_of(p: Pose2) -> Goal {
    Goal {
        x: p.x,
        y: p.y,
        yaw: p.yaw,
    }
}

fn action_name(a: Action) -> &'static str {
    match a {
        Action::Drive => "drive to",
        Action::PassOver => "pass over",
        Action::PassUnder => "pass under",
    }
}
