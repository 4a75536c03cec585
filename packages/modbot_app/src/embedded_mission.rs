//! The strategic mission on the robot interface's embedded binding (issue 49, decision
//! record 0059): the six lone modules of a world as [`EmbeddedModules`], each seeing only its
//! own sensors; the scan, the modelling, the roles and the plan as before
//! ([`crate::mission`]), then the execution as one state machine ticked every 10 ms
//! ([`modbot_behaviours::mission::Mission`]). The simulator's truth is read here only to
//! report (trajectories, the final distance and heading, the cameras' errors), never by the
//! mission.

use std::collections::BTreeMap;

use modbot_behaviours::interface::{ConnectorState, Modules};
use modbot_behaviours::mission::{Mission, MissionOrder, MissionState};
use modbot_core::Scenario;
use modbot_planner::assembly::role_target;
use modbot_planner::sequencer::Pose2;
use modbot_sim::EmbeddedModules;
use modbot_sim::embedded::SensorModels;

use crate::assemble::{SIMULATED_MU1, dock_name};
use crate::embedded::Stage;
use crate::mission::{
    DockEvent, MissionReport, MissionSettings, PhaseLog, Phases, Planned, REACHED_M, TRAJECTORY_HZ, final_heading,
    friction_phase, plan_mission, references,
};

/// The mission's execution may run this long in simulated time at most, s: every row's time
/// limit, the assembly's and the reassembly's, with room.
pub const EXECUTION_LIMIT_S: f64 = 6000.0;
/// The control period, s.
const DT: f64 = 0.01;

/// Runs the mission of `world` on the embedded binding, calling `progress` as each phase
/// ends; `search` gives the deliberative planner's configurations for the modelled world.
pub fn run_mission_interface(
    world: &Scenario,
    settings: &MissionSettings,
    search: &mut dyn FnMut(&Scenario) -> Result<Vec<String>, String>,
    progress: &mut dyn FnMut(&PhaseLog),
) -> Result<MissionReport, String> {
    let mut modules = mission_modules(world, settings)?;
    run_mission_staged(&mut modules, world, settings, search, progress)
}

/// The six lone wheel-foot modules of `world` on the embedded binding, with the mission's
/// sensor models; refused when the world has not six module starts.
pub fn mission_modules(world: &Scenario, settings: &MissionSettings) -> Result<EmbeddedModules, String> {
    let modules = sensed_modules(world, &settings.scan)?;
    if modules.len() != 6 || world.robot_starts.len() != 6 {
        return Err(format!(
            "world `{}` has {} robot_starts: the mission needs six modules",
            world.name,
            world.robot_starts.len()
        ));
    }
    Ok(modules)
}

/// The lone wheel-foot modules of `world` on the embedded binding with the scan's sensor
/// models (its IMU, its cameras' noise and seed): what sim_node serves to mission_node.
pub fn sensed_modules(world: &Scenario, scan: &crate::scan::ScanSettings) -> Result<EmbeddedModules, String> {
    let models = SensorModels {
        imu: scan.imu,
        ..SensorModels::standard()
    };
    crate::embedded::wheelfoot_modules(world, models, scan.noise, scan.seed)
}

/// Runs the mission of `world` on `stage` (its six modules as [`mission_modules`] makes
/// them, behind whatever binding the stage puts between them and the behaviours).
pub fn run_mission_staged(
    stage: &mut dyn Stage,
    world: &Scenario,
    settings: &MissionSettings,
    search: &mut dyn FnMut(&Scenario) -> Result<Vec<String>, String>,
    progress: &mut dyn FnMut(&PhaseLog),
) -> Result<MissionReport, String> {
    let mut tracker = Tracker {
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
    let outcome = phases_on(world, settings, search, stage, &mut tracker, &mut phases, &mut report);
    report.failure = outcome.err();
    let goal = world.goal.unwrap_or(report.target_m);
    if let Some(&r1) = report.roles.first() {
        // Without the world's truth (real modules) the mission's own word is all there is:
        // it ended without a failure; the distance and heading stay unknown (NaN).
        report.final_distance_m = f64::NAN;
        report.final_heading_error_deg = f64::NAN;
        report.reached = report.failure.is_none();
        if let Some(truth) = stage.truth() {
            let p = pose2(&truth.feet()?, r1)?;
            report.final_distance_m = (p.x - goal[0]).hypot(p.y - goal[1]);
            report.final_heading_error_deg =
                modbot_gaits::modular::wrap_rad(p.yaw - final_heading(world, &report.plan)).to_degrees();
            report.reached = report.failure.is_none() && report.final_distance_m <= REACHED_M;
        }
    }
    tracker.next_s = 0.0;
    tracker.observe(&*stage)?;
    report.phases = phases.logs;
    report.localisation_error_m = phases.localisation;
    report.staging_localisation_error_m = phases.staging_localisation;
    report.docks = phases.docks;
    report.trajectories = tracker.tracks;
    report.sim_s = stage.time();
    Ok(report)
}

/// Module `i`'s foot plate in the plane.
fn pose2(feet: &[nalgebra::Isometry3<f64>], i: usize) -> Result<Pose2, String> {
    let p = feet
        .get(i)
        .ok_or_else(|| format!("the world's truth has no module {}", i + 1))?;
    Ok(Pose2 {
        x: p.translation.x,
        y: p.translation.y,
        yaw: modbot_gaits::modular::yaw_of(p),
    })
}

/// Samples every module's foot plate from the stage's truth at [`TRAJECTORY_HZ`] (nothing
/// where the stage has none).
struct Tracker {
    next_s: f64,
    tracks: Vec<Vec<[f64; 4]>>,
}

impl Tracker {
    fn observe(&mut self, stage: &dyn Stage) -> Result<(), String> {
        let t = stage.time();
        let Some(truth) = stage.truth() else {
            return Ok(());
        };
        if t + 1e-9 < self.next_s {
            return Ok(());
        }
        self.next_s = t + 1.0 / TRAJECTORY_HZ;
        let feet = truth.feet()?;
        for (i, track) in self.tracks.iter_mut().enumerate() {
            let p = pose2(&feet, i)?;
            track.push([t, p.x, p.y, p.yaw]);
        }
        Ok(())
    }
}

fn phases_on(
    world: &Scenario,
    settings: &MissionSettings,
    search: &mut dyn FnMut(&Scenario) -> Result<Vec<String>, String>,
    stage: &mut dyn Stage,
    tracker: &mut Tracker,
    phases: &mut Phases<'_>,
    report: &mut MissionReport,
) -> Result<(), String> {
    friction_phase(world, stage.time(), phases, report)?;
    // The scan, from where the modules stand.
    let t0 = stage.time();
    let scan = match crate::scan::scan_modules(stage, world) {
        Ok(s) => s,
        Err(e) => return phases.close("scan", t0, stage.time(), Err(e)),
    };
    tracker.observe(&*stage)?;
    let seen: usize = scan.scans.iter().map(|s| s.sightings.len()).sum();
    let t = stage.time();
    phases.close(
        "scan",
        t0,
        t,
        Ok(format!("{} readings, {seen} things seen", scan.captures.len())),
    )?;
    // Module#1 stands where the world file puts it: the mission's origin (a robot's map
    // frame), its axes the compass's.
    let start = world.robot_starts[0];
    let origin = Pose2 {
        x: start.xyz[0],
        y: start.xyz[1],
        yaw: start.yaw_deg.to_radians(),
    };
    let planned = plan_mission(world, &scan, origin, t, search, phases, report)?;
    execute(world, settings, planned, stage, tracker, phases, &mut report.timeline)
}

/// Adds `state` to the timeline when it differs from the last entry but for what its
/// parentheses say (distances and counts that change every tick).
fn timeline(out: &mut Vec<(f64, String)>, t: f64, state: &MissionState) {
    let now = state.to_string();
    let key = |s: &str| {
        let mut depth = 0usize;
        s.chars()
            .filter(|&c| {
                match c {
                    '(' => depth += 1,
                    ')' => depth = depth.saturating_sub(1),
                    _ => return depth == 0,
                }
                false
            })
            .collect::<String>()
    };
    if out.last().is_none_or(|(_, last)| key(last) != key(&now)) {
        out.push(((t * 1000.0).round() / 1000.0, now));
    }
}

/// The execution: the mission's state machine every [`DT`], its phases logged as they end,
/// what it did checked against the truth (the cameras' errors, the docks).
fn execute(
    world: &Scenario,
    settings: &MissionSettings,
    planned: Planned,
    stage: &mut dyn Stage,
    tracker: &mut Tracker,
    phases: &mut Phases<'_>,
    timeline_out: &mut Vec<(f64, String)>,
) -> Result<(), String> {
    let Planned {
        placed,
        objects,
        roles,
        plan,
        target_name,
    } = planned;
    let order = MissionOrder {
        refs: references(world, &objects, &target_name),
        plan,
        landmarks: objects,
        starts: placed.iter().enumerate().map(|(i, p)| (i, [p.x, p.y])).collect(),
        roles: roles.modules,
        table: SIMULATED_MU1,
        row_timeout_s: settings.row_timeout_s,
        target_name,
    };
    let mut mission = Mission::new(order)?;
    let mut watch = Watch::new(roles.modules);
    let t0 = stage.time();
    let mut k: u64 = 0;
    loop {
        let state = mission.tick(stage.modules()).clone();
        timeline(timeline_out, stage.time(), &state);
        watch.events(&mission, stage, phases)?;
        tracker.observe(&*stage)?;
        match state {
            MissionState::Done => return Ok(()),
            MissionState::Failed { phase, reason } => return Err(format!("{phase}: {reason}")),
            _ => {}
        }
        k = crate::embedded::next_tick(t0, k, DT, stage.time());
        let t = t0 + k as f64 * DT;
        if t - t0 > EXECUTION_LIMIT_S {
            return Err(format!("the execution ran {EXECUTION_LIMIT_S} s ({state})"));
        }
        stage.advance_to(t)?;
    }
}

/// What the report takes from the run as it goes: the phases as they end, the cameras'
/// errors against the truth, the docks made and broken.
struct Watch {
    roles: [usize; 6],
    events: usize,
    reached: usize,
    /// Roles whose staging point was reached in the current assembly, by (assembly, role).
    staged: Vec<(usize, usize)>,
    /// Each role's own port's partner while latched, by (module, port).
    latched: BTreeMap<(usize, String), String>,
}

impl Watch {
    fn new(roles: [usize; 6]) -> Watch {
        Watch {
            roles,
            events: 0,
            reached: 0,
            staged: Vec::new(),
            latched: BTreeMap::new(),
        }
    }

    fn events(&mut self, mission: &Mission, stage: &dyn Stage, phases: &mut Phases<'_>) -> Result<(), String> {
        let feet = match stage.truth() {
            Some(truth) => Some(truth.feet()?),
            None => None,
        };
        let now = stage.time();
        for e in &mission.events()[self.events..] {
            let log = PhaseLog {
                phase: e.phase.clone(),
                start_s: e.start_s,
                end_s: e.end_s,
                outcome: if e.ok { "ok" } else { "failed" }.into(),
                detail: e.detail.clone(),
            };
            (phases.progress)(&log);
            phases.logs.push(log);
        }
        self.events = mission.events().len();
        for r in &mission.reached()[self.reached..] {
            if let Some(feet) = &feet {
                let truth = pose2(feet, self.roles[0])?;
                phases
                    .localisation
                    .push((truth.x - r.pose[0]).hypot(truth.y - r.pose[1]));
            }
        }
        self.reached = mission.reached().len();
        if let Some(a) = mission.active_assembly() {
            let which = mission.assemblies().len();
            for rec in a.records() {
                if rec.staged_s.is_finite() && !self.staged.contains(&(which, rec.role)) {
                    self.staged.push((which, rec.role));
                    // Relative to Role#1, the frame the goals hang from.
                    let Some(feet) = &feet else { continue };
                    let (me, one) = (pose2(feet, rec.module)?, pose2(feet, self.roles[0])?);
                    if let Some(e) = a.role_estimate(rec.role) {
                        let s = a.role1_shared();
                        phases
                            .staging_localisation
                            .push(((me.x - one.x) - (e[0] - s[0])).hypot((me.y - one.y) - (e[1] - s[1])));
                    }
                }
            }
        }
        self.docks(stage.modules_ref(), now, phases)
    }

    /// The roles' own ports' connectors, latched and opened, as dock events.
    fn docks(&mut self, modules: &dyn Modules, now: f64, phases: &mut Phases<'_>) -> Result<(), String> {
        for configuration in ["quadruped", "wheeled"] {
            for role in 2..=6 {
                let t = role_target(configuration, role).map_err(|e| e.to_string())?;
                let module = self.roles[role - 1];
                let partner_module = self.roles[t.partner_role - 1];
                let status = modules
                    .module_ref(module)
                    .and_then(|io| io.connector(t.port))
                    .map_err(|e| e.to_string())?;
                let partner_face = format!("m{}/{}", partner_module + 1, t.partner_port);
                let names = modbot_behaviours::docking::face_names(&partner_face)?;
                let key = (module, t.port.to_string());
                let was = self.latched.get(&key).cloned();
                let event = |action: &'static str| DockEvent {
                    time_s: (now * 1000.0).round() / 1000.0,
                    action,
                    dock: dock_name(t),
                    module,
                    port: t.port,
                    partner_module,
                    partner_port: t.partner_port,
                };
                match (status.state, status.partner, was) {
                    (ConnectorState::Latched, Some(p), None) if names.contains(&p) => {
                        self.latched.insert(key, p);
                        phases.docks.push(event("attach"));
                    }
                    (ConnectorState::Latched, _, _) => {}
                    (_, _, Some(p)) if names.contains(&p) => {
                        self.latched.remove(&key);
                        phases.docks.push(event("detach"));
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }
}
