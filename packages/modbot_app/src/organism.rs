//! The digital-hormone organisms (seed-003 §2, §6) as robot files of `cube` modules, and
//! the hormone bus of any such robot: caterpillar of N (optionally with a pitched module
//! near the middle), the 'V' with equal arms, the 7-module scorpion (with or without its
//! tail). Decision record 0029.

use std::fmt::Write as _;

use modbot_core::{ModuleCatalog, Scenario, Topology};
use modbot_gaits::hormone::sensing::{IR_CLEAR, not_a_reading};
use modbot_gaits::hormone::{Bus, HormoneSettings, Side, is_pitched};
use modbot_gaits::{Controller, JointTarget, Observation};
use modbot_sim::sensors::{IrSensor, TiltSensor};
use modbot_sim::{MAX_KEPT_SAMPLES, Report, RunPlan, Sample, Simulator, run_controller_streaming};
use nalgebra::{Isometry3, Translation3, UnitQuaternion};

use crate::error::{AppError, Result};
use crate::evaluate::EvalOptions;
use crate::replay::{Frames, ReplayLink, replay_links};
use crate::session::SimSession;

/// Seconds per hormone tick (H1: the seed's time step is not in seconds). The cube's
/// 160°/s servo makes a ±45° switch in 0.56 s, within the 1 s (4 ticks) between one
/// module's switches (record 0029).
pub const TICK_S: f64 = 0.25;
/// Execution cycles per hormone tick: several per time step (§7, MDL2e's durations). A
/// module scans its IR sensors every cycle, so its ring of 10 readings spans about one
/// hinge move, and passes on every frame but locomotion hormones in the cycle after it
/// arrived (record 0029).
pub const CYCLES_PER_TICK: u64 = 8;
/// IR range, m: a reading of 128 at and beyond it (the seed gives the scale, not the range;
/// 0.8 m is a common IR ranger's, and a caterpillar needs to see a wall that far to turn
/// back in time, record 0029).
pub const IR_RANGE_M: f64 = 0.8;

/// The caterpillar's IR thresholds (B, F, R, L; the seed tunes them per side and organism,
/// H11): its leading end watches ahead to 0.69 m, which with the 0.8 m sensors leaves it
/// room to reverse, and to the sides to 0.25 m (record 0029).
pub const CATERPILLAR_IR_THRESHOLDS: [f64; 4] = [110.0, 110.0, 40.0, 40.0];

/// The V's IR thresholds (B, F, R, L): its centre's F and R, which face away from both arms
/// and watch the organism's left and right going forward (§7.2), see to 0.625 m, so the V
/// turns before an arm trailing behind meets what the centre saw; the rest 20 (12.5 cm)
/// like every organism's (record 0034).
pub const V_IR_THRESHOLDS: [f64; 4] = [20.0, 100.0, 100.0, 20.0];

/// Ticks per half wave of the V (the seed's n, 4 for the caterpillar, Table 8): 2. The seed
/// gives the V's wave no timing of its own; with n = 4 our 90° V of cubes slides backwards,
/// centre last, and with n = 2 it goes centre first for arms of 2 to 7 modules (record 0034).
pub const V_HALF_PERIOD: u64 = 2;

/// Parses `--ir-threshold B,F,R,L`: four readings, 0 … 128, below which a side's mean of ten
/// readings is an obstacle.
pub fn parse_thresholds(text: &str) -> Result<[f64; 4]> {
    let bad = |why: &str| AppError::BadInput(format!("--ir-threshold `{text}`: {why}"));
    let [b, f, r, l]: [f64; 4] = text
        .split(',')
        .map(|v| v.trim().parse::<f64>().ok())
        .collect::<Option<Vec<f64>>>()
        .and_then(|v| v.try_into().ok())
        .ok_or_else(|| bad("expected four numbers B,F,R,L, e.g. 110,110,40,40"))?;
    if let Some((side, v)) = not_a_reading(&[b, f, r, l]) {
        return Err(bad(&format!("side {side}: {v} is not a reading from 0 to 128")));
    }
    Ok([b, f, r, l])
}

/// The IR sensor of every module side: `ir/<module>/<side>`, at the port, looking out.
pub fn ir_sensors(robot: &Topology) -> Vec<IrSensor> {
    let mut out = Vec::new();
    for (i, m) in robot.modules.iter().enumerate() {
        let kind = robot.kind_of(i);
        for side in Side::ALL {
            let Some(port) = kind.ports.get(&side.to_string()) else {
                continue;
            };
            let Some(l) = kind.links.iter().position(|k| k.name == port.link) else {
                continue;
            };
            let [r, p, y] = port.rpy_deg.map(f64::to_radians);
            out.push(IrSensor {
                name: format!("ir/{}/{side}", m.name),
                link: robot.link_name(i, l),
                pose: Isometry3::from_parts(
                    Translation3::new(port.xyz[0], port.xyz[1], port.xyz[2]),
                    UnitQuaternion::from_euler_angles(r, p, y),
                ),
                range_m: IR_RANGE_M,
                // Walls, obstacles and other modules echo; the floor and the module's own
                // other half do not (record 0029).
                floor: false,
                ignore: (0..kind.links.len())
                    .filter(|&k| k != l)
                    .map(|k| robot.link_name(i, k))
                    .collect(),
            });
        }
    }
    out
}

/// The tilt sensor of every module: `tilt/<module>`, on its first half (the link its hinge
/// axis is fixed in).
pub fn tilt_sensors(robot: &Topology) -> Vec<TiltSensor> {
    robot
        .modules
        .iter()
        .enumerate()
        .map(|(i, _)| TiltSensor {
            name: tilt_name(robot, i),
            link: robot.link_name(i, 0),
        })
        .collect()
}

fn tilt_name(robot: &Topology, i: usize) -> String {
    format!("tilt/{}", robot.modules[i].name)
}

/// The organism's modules as one controller of the simulated robot: each tick of
/// [`TICK_S`] every module reads its four IR sensors, the bus delivers last tick's frames
/// and each module's hinge target is sent to its joint.
pub struct HormoneController {
    bus: Bus,
    /// Per module: its hinge's command index.
    hinge: Vec<Option<usize>>,
    /// Per module: its sensors' names, B F R L.
    ir: Vec<[String; 4]>,
    /// Per module: its tilt sensor's name (read at the first scan, at rest).
    tilt: Vec<String>,
    joints: usize,
    clock: f64,
    scans: u64,
    half_period: u64,
    closest: f64,
}

impl HormoneController {
    /// The controller of `robot` (a robot of `cube` modules).
    pub fn new(robot: &Topology, settings: HormoneSettings) -> Result<HormoneController> {
        let mut bus = bus_of(robot, settings)?;
        bus.set_cycles_per_tick(CYCLES_PER_TICK);
        let joints = robot.joints();
        let hinge = (0..robot.len())
            .map(|i| joints.iter().position(|j| j.module == i))
            .collect();
        let ir = ir_names(robot);
        Ok(HormoneController {
            bus,
            hinge,
            ir,
            tilt: (0..robot.len()).map(|i| tilt_name(robot, i)).collect(),
            joints: joints.len(),
            clock: 0.0,
            scans: 0,
            half_period: settings.half_period,
            closest: 128.0,
        })
    }

    /// The bus (modules, maps, roles).
    pub fn bus(&self) -> &Bus {
        &self.bus
    }

    /// The bus, to cut links and remove modules.
    pub fn bus_mut(&mut self) -> &mut Bus {
        &mut self.bus
    }

    /// The smallest IR reading any module has had, 0 (touching) … 128.
    pub fn closest(&self) -> f64 {
        self.closest
    }
}

impl Controller for HormoneController {
    fn name(&self) -> &str {
        "hormone"
    }

    fn joint_count(&self) -> usize {
        self.joints
    }

    fn step(&mut self, dt: f64, obs: &Observation<'_>, out: &mut [JointTarget]) {
        self.clock += dt;
        // CYCLES_PER_TICK execution cycles a tick, each with a scan (record 0029).
        let scan_s = TICK_S / CYCLES_PER_TICK as f64;
        while (self.scans + 1) as f64 * scan_s <= self.clock + 1e-9 {
            self.scans += 1;
            if self.scans == 1 {
                // Each module's tilt sensor, read once at rest before the first cycle, says
                // how it is mounted (record 0031); without one the robot file's rolls stand.
                for (i, name) in self.tilt.iter().enumerate() {
                    if let (Some(t), Some(m)) = (obs.sensors.get(name).and_then(|v| v.first()), self.bus.module_mut(i))
                    {
                        m.set_pitched(is_pitched(*t));
                    }
                }
            }
            for (i, names) in self.ir.iter().enumerate() {
                let r = ir_of(obs.sensors, names);
                // Joined sides read near 0 (covered); only open ones count as "seen".
                if let Some(m) = self.bus.module(i) {
                    for (k, v) in r.iter().enumerate() {
                        if m.map().status()[k].is_none() {
                            self.closest = self.closest.min(*v);
                        }
                    }
                }
                self.bus.sense(i, r);
            }
            self.bus.cycle();
        }
        for o in out.iter_mut() {
            *o = JointTarget::Position(0.0);
        }
        for (i, hinge) in self.hinge.iter().enumerate() {
            if let (Some(m), Some(o)) = (self.bus.module(i), hinge.and_then(|j| out.get_mut(j))) {
                *o = JointTarget::Position(m.hinge_deg().to_radians());
            }
        }
    }

    fn period(&self) -> Option<f64> {
        Some(2.0 * self.half_period as f64 * TICK_S)
    }

    fn completed_cycles(&self) -> usize {
        (self.bus.tick() / (2 * self.half_period)) as usize
    }
}

/// A fault made during an organism run (seed-003 §8): a connection cut, or a module removed
/// (it dies and its connectors let go of its neighbours).
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// The connection between two modules is cut at `at_s`.
    Cut {
        /// Time, s.
        at_s: f64,
        /// One module.
        a: String,
        /// The other.
        b: String,
    },
    /// A module is removed at `at_s`.
    Remove {
        /// Time, s.
        at_s: f64,
        /// The module.
        module: String,
    },
}

impl Fault {
    fn time(text: &str, flag: &str, example: &str) -> Result<(f64, String)> {
        let bad = || AppError::BadInput(format!("{flag} `{text}`: expected TIME:{example}"));
        let (t, rest) = text.split_once(':').ok_or_else(bad)?;
        let t: f64 = t.trim().parse().map_err(|_| bad())?;
        if !t.is_finite() {
            return Err(bad());
        }
        Ok((t, rest.trim().to_string()))
    }

    /// `TIME:A-B`: the connection between modules A and B is cut at TIME s.
    pub fn parse_cut(text: &str) -> Result<Fault> {
        let example = "MODULE-MODULE, e.g. 20:m5-m6";
        let (at_s, rest) = Fault::time(text, "--cut", example)?;
        let (a, b) = rest
            .split_once('-')
            .ok_or_else(|| AppError::BadInput(format!("--cut `{text}`: expected TIME:{example}")))?;
        Ok(Fault::Cut {
            at_s,
            a: a.trim().to_string(),
            b: b.trim().to_string(),
        })
    }

    /// `TIME:M`: module M is removed at TIME s.
    pub fn parse_remove(text: &str) -> Result<Fault> {
        let (at_s, module) = Fault::time(text, "--remove", "MODULE, e.g. 20:centre")?;
        Ok(Fault::Remove { at_s, module })
    }

    /// When it happens, s.
    pub fn at_s(&self) -> f64 {
        match self {
            Fault::Cut { at_s, .. } | Fault::Remove { at_s, .. } => *at_s,
        }
    }
}

/// What a fault breaks: connections (edge indices) and removed modules.
#[derive(Debug, Clone, Default, PartialEq)]
struct Breaks {
    edges: Vec<usize>,
    removed: Vec<usize>,
}

/// One part of an organism after its faults: the modules joined to each other, as they
/// mapped themselves, and how far the part's centre of mass moved.
#[derive(Debug, Clone)]
pub struct PartRun {
    /// Its modules: name, type, role.
    pub modules: Vec<(String, u16, String)>,
    /// Horizontal displacement of its centre of mass over the measured time, m.
    pub distance_m: f64,
    /// That over the measured time, m/s.
    pub speed_m_s: f64,
    /// The measured time: from one wave period after the last fault to the end, s.
    pub measured_s: f64,
}

/// What an organism run measured.
#[derive(Debug, Clone)]
pub struct OrganismRun {
    /// The protocol's report (cycles of one wave period, 2 s) up to the first fault.
    pub report: Report,
    /// One sample per control tick.
    pub samples: Vec<Sample>,
    /// Each module's name, type and role at the end (removed modules left out).
    pub modules: Vec<(String, u16, String)>,
    /// Smallest IR reading any module saw on an open side, 0 (touching) … 128.
    pub closest_ir: f64,
    /// With faults: the parts after the last one (each part's modules and its speed).
    pub parts: Vec<PartRun>,
    /// The organism's closest approach to a wall or block over the whole run, m (0:
    /// touching); None in a world without any.
    pub closest_approach_m: Option<f64>,
    /// Its links as a replay page draws them, and their poses over the whole run.
    pub links: Vec<ReplayLink>,
    /// See `links`.
    pub frames: Frames,
}

/// The faults checked against the robot and the run: each names existing modules (a cut
/// names two joined ones) and falls on a whole wave period from the third period on, at
/// least two periods before the end; grouped by time, in time order.
fn check_faults(robot: &Topology, faults: &[Fault], seconds: f64, period: f64) -> Result<Vec<(f64, Breaks)>> {
    let module = |name: &str| {
        robot.modules.iter().position(|m| m.name == name).ok_or_else(|| {
            let known: Vec<&str> = robot.modules.iter().map(|m| m.name.as_str()).collect();
            AppError::BadInput(format!(
                "fault: no module `{name}` (the organism has: {})",
                known.join(", ")
            ))
        })
    };
    let mut out: Vec<(f64, Breaks)> = Vec::new();
    for f in faults {
        let t = f.at_s();
        let whole = (t / period).round();
        if (t / period - whole).abs() > 1e-9 || whole < 3.0 || t > seconds - 2.0 * period + 1e-9 {
            return Err(AppError::BadInput(format!(
                "fault at {t} s: expected a whole number of {period} s wave periods from {} s to {} s (two periods of warm-up and one measured before it, one to settle and one measured after)",
                3.0 * period,
                seconds - 2.0 * period
            )));
        }
        let mut breaks = Breaks::default();
        match f {
            Fault::Cut { a, b, .. } => {
                let (ia, ib) = (module(a)?, module(b)?);
                let e = edge_between(robot, ia, ib)
                    .ok_or_else(|| AppError::BadInput(format!("--cut: modules `{a}` and `{b}` are not joined")))?;
                breaks.edges.push(e);
            }
            Fault::Remove { module: m, .. } => {
                let i = module(m)?;
                breaks.edges.extend(
                    robot
                        .edges
                        .iter()
                        .enumerate()
                        .filter(|(_, e)| e.a == i || e.b == i)
                        .map(|(k, _)| k),
                );
                breaks.removed.push(i);
            }
        }
        match out.iter_mut().find(|(at, _)| (*at - t).abs() < 1e-9) {
            Some((_, b)) => {
                b.edges.extend(breaks.edges);
                b.removed.extend(breaks.removed);
            }
            None => out.push((t, breaks)),
        }
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(out)
}

/// The organism's parts: modules still joined to each other (removed ones left out).
fn parts_of(robot: &Topology, cut: &[bool], alive: &[bool]) -> Vec<Vec<usize>> {
    let n = robot.len();
    let mut part = vec![usize::MAX; n];
    let mut parts = Vec::new();
    for start in (0..n).filter(|&i| alive[i]) {
        if part[start] != usize::MAX {
            continue;
        }
        let id = parts.len();
        part[start] = id;
        let mut members = vec![start];
        let mut k = 0;
        while k < members.len() {
            let m = members[k];
            k += 1;
            for (e, edge) in robot.edges.iter().enumerate() {
                let other = match (cut[e], edge.a == m, edge.b == m) {
                    (false, true, _) => edge.b,
                    (false, _, true) => edge.a,
                    _ => continue,
                };
                if alive[other] && part[other] == usize::MAX {
                    part[other] = id;
                    members.push(other);
                }
            }
        }
        members.sort_unstable();
        parts.push(members);
    }
    parts
}

/// Runs an organism in `world` for `seconds` (the first 4 s, two wave periods, are warm-up),
/// making the `faults` as it goes: at a fault the simulator cuts the connections it breaks
/// (record 0030) and the bus loses the same links or the removed module; the parts re-map
/// themselves, reset and carry on (§8), and each part's speed is measured from one period
/// after the last fault to the end.
pub fn run_organism(
    robot: &Topology,
    world: &Scenario,
    seconds: f64,
    faults: &[Fault],
    settings: HormoneSettings,
    options: &EvalOptions,
    progress: &mut dyn FnMut(f64, f64),
) -> Result<OrganismRun> {
    let period = 2.0 * settings.half_period as f64 * TICK_S;
    if !(seconds.is_finite() && seconds >= 3.0 * period && seconds <= 3600.0) {
        return Err(AppError::BadInput(format!(
            "--seconds {seconds}: expected {} to 3600 s (two wave periods of warm-up, one measured)",
            3.0 * period
        )));
    }
    let events = check_faults(robot, faults, seconds, period)?;
    let mut session = SimSession::new(robot.clone(), world, options.settings(world), 0)?;
    session.sim.set_ir_sensors(ir_sensors(robot))?;
    session.sim.set_tilt_sensors(tilt_sensors(robot))?;
    session.sim.watch_clearance();
    let mut controller = HormoneController::new(robot, settings)?;
    let periods = |t: f64| (t / period).round() as usize;
    let first_end = events.first().map(|(t, _)| *t).unwrap_or(seconds);
    let plan = RunPlan {
        warmup_cycles: 2,
        cycles: periods(first_end).saturating_sub(2).max(1),
        ..options.plan
    };
    // Every link's pose at every tick, for the replay (the segments below continue from
    // each other's last sample, which Frames keeps once).
    let links = replay_links(&session.sim, &[robot]);
    let mut frames = Frames::default();
    let mut record = |smp: &Sample, sim: &Simulator| -> std::result::Result<(), String> {
        frames.push(smp.t, &sim.link_poses(), smp.com);
        Ok(())
    };
    let out = run_controller_streaming(
        &mut session.sim,
        &mut controller,
        plan,
        session.body_length_m,
        &mut |t, _| progress(t, seconds),
        &mut record,
        MAX_KEPT_SAMPLES,
    )?;
    let mut report = out.report;
    // Judged as any run is (record 0038): a stall, a roll-over, a fall, no steady state.
    report.assess(false);
    let mut samples = out.samples;
    let mut cut = vec![false; robot.edges.len()];
    let mut alive = vec![true; robot.len()];
    let module_links: Vec<Vec<usize>> = (0..robot.len())
        .map(|i| {
            (0..robot.kind_of(i).links.len())
                .filter_map(|l| session.sim.link_index(&robot.link_name(i, l)))
                .collect()
        })
        .collect();
    let com = |sim: &Simulator, g: &[usize]| {
        let links: Vec<usize> = g.iter().flat_map(|&i| module_links[i].iter().copied()).collect();
        sim.com_of_links(&links)
    };
    let mut parts = Vec::new();
    for (k, (at, breaks)) in events.iter().enumerate() {
        for &e in &breaks.edges {
            if std::mem::replace(&mut cut[e], true) {
                continue;
            }
            cut_edge(&mut session, e)?;
            let edge = &robot.edges[e];
            let side: Side = edge
                .a_port
                .parse()
                .map_err(|e: String| AppError::BadInput(format!("port `{}`: {e}", edge.a_port)))?;
            controller.bus_mut().cut((edge.a, side));
        }
        for &i in &breaks.removed {
            alive[i] = false;
            controller.bus_mut().remove(i);
        }
        let end = events.get(k + 1).map(|(t, _)| *t).unwrap_or(seconds);
        // One period to settle (re-map, reset, restart), then the rest measured.
        let settle = RunPlan {
            warmup_cycles: 0,
            cycles: 1,
            ..options.plan
        };
        let out = run_controller_streaming(
            &mut session.sim,
            &mut controller,
            settle,
            session.body_length_m,
            &mut |t, _| progress(at + t, seconds),
            &mut record,
            MAX_KEPT_SAMPLES,
        )?;
        samples.extend(out.samples);
        let groups = parts_of(robot, &cut, &alive);
        let start: Vec<_> = groups.iter().map(|g| com(&session.sim, g)).collect();
        let t_start = session.sim.time();
        let rest = RunPlan {
            warmup_cycles: 0,
            cycles: periods(end - at).saturating_sub(1).max(1),
            ..options.plan
        };
        let out = run_controller_streaming(
            &mut session.sim,
            &mut controller,
            rest,
            session.body_length_m,
            &mut |t, _| progress(at + period + t, seconds),
            &mut record,
            MAX_KEPT_SAMPLES,
        )?;
        samples.extend(out.samples);
        if k + 1 == events.len() {
            let measured_s = session.sim.time() - t_start;
            for (g, s) in groups.iter().zip(start) {
                let (Some(a), Some(b)) = (s, com(&session.sim, g)) else {
                    continue;
                };
                let distance_m = ((b.x - a.x).powi(2) + (b.y - a.y).powi(2)).sqrt();
                parts.push(PartRun {
                    modules: g.iter().filter_map(|&i| module_row(robot, &controller, i)).collect(),
                    distance_m,
                    speed_m_s: distance_m / measured_s,
                    measured_s,
                });
            }
        }
    }
    let closest_ir = controller.closest();
    let modules = (0..robot.len())
        .filter_map(|i| module_row(robot, &controller, i))
        .collect();
    Ok(OrganismRun {
        report,
        samples,
        modules,
        closest_ir,
        parts,
        closest_approach_m: session.sim.closest_approach(),
        links,
        frames,
    })
}

/// A module's name, type and role, if it is still there.
fn module_row(robot: &Topology, controller: &HormoneController, i: usize) -> Option<(String, u16, String)> {
    let h = controller.bus().module(i)?;
    Some((
        robot.modules[i].name.clone(),
        h.module_type(),
        h.role().name().to_string(),
    ))
}

/// Most modules in an organism (the seed's simulator limit, §2).
pub const MAX_ORGANISM_MODULES: usize = 16;

/// An organism named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrganismSpec {
    /// `caterpillar:N`, its module ⌈N/2⌉ pitched if asked.
    Caterpillar {
        /// N.
        modules: usize,
        /// One module near the middle rolled 90°.
        pitched: bool,
    },
    /// `v:N`: N = 2·arm + 1 modules, two arms of equal length on a centre.
    V {
        /// Modules per arm (the centre not counted).
        arm: usize,
    },
    /// `scorpion`: head, two arms of two, a tail of two (or none).
    Scorpion {
        /// With its two tail modules.
        tail: bool,
    },
}

impl OrganismSpec {
    /// Parses `caterpillar:N`, `v:N` or `scorpion`; `pitched` and `no_tail` are the
    /// command's flags (refused where they do not apply).
    pub fn parse(text: &str, pitched: bool, no_tail: bool) -> Result<OrganismSpec> {
        let bad = |why: String| AppError::BadInput(format!("organism `{text}`: {why}"));
        let (kind, count) = match text.split_once(':') {
            Some((k, n)) => (k, Some(n)),
            None => (text, None),
        };
        let n = |c: Option<&str>| -> Result<usize> {
            c.ok_or_else(|| bad("give the number of modules, e.g. caterpillar:10".into()))?
                .parse::<usize>()
                .map_err(|_| bad("the number of modules is not a whole number".into()))
        };
        let spec = match kind {
            "caterpillar" => OrganismSpec::Caterpillar {
                modules: n(count)?,
                pitched,
            },
            "v" | "V" => {
                let total = n(count)?;
                if total < 3 || total % 2 == 0 {
                    return Err(bad(format!(
                        "a V with equal arms has an odd number of modules, at least 3 (centre + 2 arms), not {total}"
                    )));
                }
                OrganismSpec::V { arm: (total - 1) / 2 }
            }
            "scorpion" if count.is_none() => OrganismSpec::Scorpion { tail: !no_tail },
            "scorpion" => return Err(bad("the scorpion has a fixed size; no count".into())),
            _ => return Err(bad("expected caterpillar:N, v:N or scorpion".into())),
        };
        if pitched && !matches!(spec, OrganismSpec::Caterpillar { .. }) {
            return Err(bad("--pitched applies to a caterpillar".into()));
        }
        if no_tail && !matches!(spec, OrganismSpec::Scorpion { .. }) {
            return Err(bad("--no-tail applies to the scorpion".into()));
        }
        let m = spec.modules();
        if let OrganismSpec::Caterpillar { modules, pitched } = spec
            && (modules < 2 || (pitched && modules < 3))
        {
            return Err(bad(format!(
                "a caterpillar needs at least {} modules",
                if pitched { 3 } else { 2 }
            )));
        }
        if m > MAX_ORGANISM_MODULES {
            return Err(bad(format!(
                "{m} modules; an organism has at most {MAX_ORGANISM_MODULES} (the seed's limit)"
            )));
        }
        Ok(spec)
    }

    /// Its modules' settings: the defaults but for the IR thresholds (B, F, R, L), the
    /// caterpillar's looking far ahead ([`CATERPILLAR_IR_THRESHOLDS`]) and the V centre's to
    /// its sides ([`V_IR_THRESHOLDS`]); the scorpion's are the default (12.5 cm: its arms and
    /// tail are in view of its own sensors, record 0029).
    ///
    /// The V's wave switches every [`V_HALF_PERIOD`] ticks, not the caterpillar's 4: with 4
    /// the 90° V of our cubes slides backwards, centre last (record 0034).
    pub fn hormone_settings(&self) -> HormoneSettings {
        let default = HormoneSettings::default();
        HormoneSettings {
            ir_threshold: match self {
                OrganismSpec::Caterpillar { .. } => CATERPILLAR_IR_THRESHOLDS,
                OrganismSpec::V { .. } => V_IR_THRESHOLDS,
                OrganismSpec::Scorpion { .. } => default.ir_threshold,
            },
            half_period: match self {
                OrganismSpec::V { .. } => V_HALF_PERIOD,
                _ => default.half_period,
            },
            ..default
        }
    }

    /// Number of modules.
    pub fn modules(&self) -> usize {
        match *self {
            OrganismSpec::Caterpillar { modules, .. } => modules,
            OrganismSpec::V { arm } => 2 * arm + 1,
            OrganismSpec::Scorpion { tail } => {
                if tail {
                    7
                } else {
                    5
                }
            }
        }
    }

    /// Its name for files: `caterpillar_10`, `caterpillar_10_pitched`, `v_5`, `scorpion`.
    pub fn name(&self) -> String {
        match *self {
            OrganismSpec::Caterpillar { modules, pitched } => {
                format!("caterpillar_{modules}{}", if pitched { "_pitched" } else { "" })
            }
            OrganismSpec::V { arm } => format!("v_{}", 2 * arm + 1),
            OrganismSpec::Scorpion { tail } => format!("scorpion{}", if tail { "" } else { "_no_tail" }),
        }
    }

    /// The robot file: `cube` modules, connections from the root outward (B of one on F of
    /// the next along a chain), a pitched module rolled 90° on its way in and back on its
    /// way out.
    pub fn robot_file(&self) -> String {
        let mut names: Vec<String> = Vec::new();
        // (from module, from port, to module, to port, roll)
        let mut links: Vec<(usize, &str, usize, &str, f64)> = Vec::new();
        match *self {
            OrganismSpec::Caterpillar { modules, pitched } => {
                names = (1..=modules).map(|i| format!("m{i}")).collect();
                let p = pitched.then(|| modules.div_ceil(2) - 1);
                for i in 1..modules {
                    let roll = if Some(i) == p {
                        90.0
                    } else if Some(i - 1) == p {
                        -90.0
                    } else {
                        0.0
                    };
                    links.push((i - 1, "B", i, "F", roll));
                }
            }
            OrganismSpec::V { arm } => {
                for i in 0..arm {
                    names.push(format!("left{}", i + 1));
                }
                names.push("centre".into());
                for i in 0..arm {
                    names.push(format!("right{}", i + 1));
                }
                links.push((0, "F", arm, "L", 0.0));
                for i in 1..arm {
                    links.push((i - 1, "B", i, "F", 0.0));
                }
                for i in arm + 1..=2 * arm {
                    links.push((i - 1, "B", i, "F", 0.0));
                }
            }
            OrganismSpec::Scorpion { tail } => {
                names = [
                    "right_outer_arm",
                    "right_inner_arm",
                    "head",
                    "left_inner_arm",
                    "left_outer_arm",
                ]
                .iter()
                .map(|s| s.to_string())
                .collect();
                links.extend([
                    (0, "B", 1, "F", 90.0),
                    (1, "B", 2, "F", -90.0),
                    (2, "B", 3, "B", 90.0),
                    (3, "F", 4, "B", -90.0),
                ]);
                if tail {
                    names.extend(["inner_tail".to_string(), "outer_tail".to_string()]);
                    links.extend([(2, "R", 5, "B", 0.0), (5, "F", 6, "B", 0.0)]);
                }
            }
        }
        let mut s = format!(
            "# {}: a digital-hormone organism of seed-003 (generated by modbot_app::organism)\nname: {}\nmodules:\n",
            self.name(),
            self.name()
        );
        for n in &names {
            let _ = writeln!(s, "  - {{name: {n}, kind: cube}}");
        }
        s.push_str("connections:\n");
        for (a, pa, b, pb, roll) in links {
            let _ = writeln!(
                s,
                "  - {{from: {}.{pa}, to: {}.{pb}, roll_deg: {roll}}}",
                names[a], names[b]
            );
        }
        s
    }

    /// The organism as a checked robot.
    pub fn topology(&self, catalog: &ModuleCatalog) -> Result<Topology> {
        Ok(Topology::from_yaml(
            &self.robot_file(),
            &format!("organism {}", self.name()),
            catalog,
        )?)
    }
}

/// The connection (edge index) between modules `a` and `b`, either way round.
pub fn edge_between(robot: &Topology, a: usize, b: usize) -> Option<usize> {
    robot
        .edges
        .iter()
        .position(|e| (e.a, e.b) == (a, b) || (e.a, e.b) == (b, a))
}

/// Cuts connection `e` of `session`'s robot (robot 0) in the simulator: its fixed joint
/// `<a>_to_<b>` goes and the robot splits there (record 0030).
pub fn cut_edge(session: &mut SimSession, e: usize) -> Result<()> {
    let robot = &session.topology;
    let edge = robot
        .edges
        .get(e)
        .ok_or_else(|| AppError::BadInput(format!("no connection {e}")))?;
    let (na, nb) = (&robot.modules[edge.a].name, &robot.modules[edge.b].name);
    let joint = [format!("{na}_to_{nb}"), format!("{nb}_to_{na}")]
        .into_iter()
        .find(|j| session.robot.model.joints.iter().any(|k| &k.name == j))
        .ok_or_else(|| AppError::BadInput(format!("no fixed joint joins `{na}` and `{nb}`")))?;
    session.sim.cut(0, &joint)?;
    Ok(())
}

/// Each module's IR sensor names, B F R L (as [`ir_sensors`] names them).
pub fn ir_names(robot: &Topology) -> Vec<[String; 4]> {
    robot
        .modules
        .iter()
        .map(|m| Side::ALL.map(|s| format!("ir/{}/{s}", m.name)))
        .collect()
}

/// A module's four IR readings (B F R L) out of the simulator's sensor readings by name;
/// 128 (clear) for one it does not have.
pub fn ir_of(readings: &std::collections::BTreeMap<String, Vec<f64>>, names: &[String; 4]) -> [f64; 4] {
    let read = |n: &String| readings.get(n).and_then(|v| v.first().copied()).unwrap_or(IR_CLEAR);
    [read(&names[0]), read(&names[1]), read(&names[2]), read(&names[3])]
}

/// Whether an organism is given as a robot file rather than by name.
pub fn is_robot_file(organism: &str) -> bool {
    let lower = organism.to_ascii_lowercase();
    lower.ends_with(".yaml") || lower.ends_with(".yml")
}

/// An organism's robot and its modules' settings: a named one (`caterpillar:N`, `v:N`,
/// `scorpion`, with its flags) with its own IR thresholds, or a robot file of `cube` modules
/// with the defaults (the flags apply to named organisms only).
pub fn load_organism(
    organism: &str,
    pitched: bool,
    no_tail: bool,
    catalog: &ModuleCatalog,
) -> Result<(Topology, HormoneSettings)> {
    if is_robot_file(organism) {
        if pitched || no_tail {
            return Err(AppError::BadInput(
                "pitched and no-tail apply to a named organism, not a robot file".into(),
            ));
        }
        let robot = Topology::load(std::path::Path::new(organism), catalog)?;
        bus_of(&robot, HormoneSettings::default())?;
        return Ok((robot, HormoneSettings::default()));
    }
    let spec = OrganismSpec::parse(organism, pitched, no_tail)?;
    Ok((spec.topology(catalog)?, spec.hormone_settings()))
}

/// The ROS 2 launch file (YAML) of an organism: sim_node simulating it (`organism`,
/// `pitched`, `no_tail` as given) and one module_node per module in namespace
/// `<namespace>/<module>`, each connector's `in/X` remapped onto the `out/Y` of the module
/// joined there, the organism's IR thresholds, mapping level, wave half period and timing
/// constants (H7, H11) as every module's parameters. Errors name a module or organism name that is not a valid ROS name.
pub fn organism_launch(
    robot: &Topology,
    organism: &str,
    pitched: bool,
    no_tail: bool,
    settings: &HormoneSettings,
) -> Result<String> {
    let ns = robot.name.replace(['-', '.', ':'], "_");
    if !ros_name(&ns) {
        return Err(AppError::BadInput(format!(
            "organism name `{}` does not make a ROS namespace",
            robot.name
        )));
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# The digital-hormone organism `{}` on ROS 2 (seed-003; decision records 0029, 0031):\n\
         # sim_node simulates it and one module_node per module runs its hormone controller.\n\
         # Hormones and handshakes travel only between neighbours: each module's in/X is wired\n\
         # to the out/Y of the module joined to its connector X. Kill a module_node and the\n\
         # organism splits; each part re-maps itself, resets and carries on.\n\
         # Generated by `modbot export launch {organism}{}{}`; edit the robot file, not this.\n\
         #   ros2 launch modbot_bringup <this file>\n\
         #   modbot launch <this file>            (no ROS install)",
        robot.name,
        if pitched { " --pitched" } else { "" },
        if no_tail { " --no-tail" } else { "" },
    );
    let _ = writeln!(s, "launch:");
    let _ = writeln!(
        s,
        "- arg: {{name: world, default: flat, description: \"scenario under worlds/ (flat, hormone_arena, hormone_wall, hormone_v_left, hormone_v_right)\"}}"
    );
    let _ = writeln!(
        s,
        "- arg: {{name: namespace, default: {ns}, description: \"namespace of the organism's nodes and topics\"}}"
    );
    let _ = writeln!(
        s,
        "- arg: {{name: real_time_factor, default: \"1.0\", description: \"simulated seconds per wall second\"}}"
    );
    let _ = writeln!(s, "- group:\n  - push-ros-namespace: {{namespace: $(var namespace)}}");
    let _ = writeln!(
        s,
        "  - node:\n      pkg: modbot_ros\n      exec: sim_node\n      name: sim_node\n      param:\n      \
         - {{from: $(find-pkg-share modbot_bringup)/config/params/sim_node.yaml}}\n      \
         - {{name: organism, value: \"{organism}\"}}\n      - {{name: pitched, value: {pitched}}}\n      \
         - {{name: no_tail, value: {no_tail}}}\n      - {{name: engine, value: native}}\n      \
         - {{name: world, value: $(find-pkg-share modbot_bringup)/worlds/$(var world).yaml}}\n      \
         - {{name: publish_clock, value: true}}\n      - {{name: publish_rate_hz, value: 64.0}}\n      \
         - {{name: real_time_factor, value: $(var real_time_factor)}}"
    );
    let ir: Vec<String> = settings.ir_threshold.iter().map(|v| format!("{v:.1}")).collect();
    for (i, m) in robot.modules.iter().enumerate() {
        if !ros_name(&m.name) {
            return Err(AppError::BadInput(format!(
                "module name `{}` is not a valid ROS name (letters, digits, _; not starting with a digit)",
                m.name
            )));
        }
        let _ = writeln!(
            s,
            "  - node:\n      pkg: modbot_ros\n      exec: module_node\n      name: module_node\n      \
             namespace: {}\n      param:\n      \
             - {{from: $(find-pkg-share modbot_bringup)/config/params/module_node.yaml}}\n      \
             - {{name: use_sim_time, value: true}}\n      \
             - {{name: ir_threshold, value: [{}]}}\n      - {{name: max_level, value: {}}}\n      \
             - {{name: half_period, value: {}}}\n      - {{name: handshake_every, value: {}}}\n      \
             - {{name: timeout_ticks, value: {}}}\n      - {{name: obstacle_every, value: {}}}\n      \
             - {{name: stroke_timeout, value: {}}}\n      - {{name: v_turn_half_periods, value: {}}}",
            m.name,
            ir.join(", "),
            settings.max_level,
            settings.half_period,
            settings.handshake_every,
            settings.timeout_ticks,
            settings.obstacle_every,
            settings.stroke_timeout,
            settings.v_turn_half_periods,
        );
        let mut remaps = Vec::new();
        for e in &robot.edges {
            let (mine, other, theirs) = if e.a == i {
                (&e.a_port, e.b, &e.b_port)
            } else if e.b == i {
                (&e.b_port, e.a, &e.a_port)
            } else {
                continue;
            };
            remaps.push(format!(
                "      - {{from: in/{mine}, to: /$(var namespace)/{}/out/{theirs}}}",
                robot.modules[other].name
            ));
        }
        if !remaps.is_empty() {
            let _ = writeln!(s, "      remap:\n{}", remaps.join("\n"));
        }
    }
    Ok(s)
}

/// A valid ROS name token: letters, digits and underscores, not starting with a digit.
fn ros_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|f| f.is_ascii_alphabetic() || f == '_') && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

/// The hormone bus of a robot of `cube` modules: one hormone controller per module, its
/// connectors joined as the robot's ports are, the modules rolled by ±90° pitched.
pub fn bus_of(robot: &Topology, settings: HormoneSettings) -> Result<Bus> {
    if robot.len() > MAX_ORGANISM_MODULES {
        return Err(AppError::BadInput(format!(
            "{}: {} modules; an organism has at most {MAX_ORGANISM_MODULES}",
            robot.name,
            robot.len()
        )));
    }
    if let Some(m) = robot.modules.iter().find(|m| m.kind != "cube") {
        return Err(AppError::BadInput(format!(
            "{}: module `{}` is a `{}`; hormone organisms are made of `cube` modules",
            robot.name, m.name, m.kind
        )));
    }
    let mut bus = Bus::new(robot.len(), settings);
    let side = |port: &str| -> Result<Side> {
        port.parse::<Side>()
            .map_err(|e| AppError::BadInput(format!("{}: port `{port}`: {e}", robot.name)))
    };
    for e in &robot.edges {
        bus.link((e.a, side(&e.a_port)?), (e.b, side(&e.b_port)?))
            .map_err(AppError::BadInput)?;
    }
    // Each module's roll about the chain axis, summed from the root (module 0) outward,
    // whichever way round a connection is written (a connection's roll turns its second
    // module relative to its first).
    let mut roll: Vec<Option<f64>> = vec![None; robot.len()];
    roll[0] = Some(0.0);
    for _ in 0..robot.len() {
        for e in &robot.edges {
            let r = e.roll.to_degrees();
            match (roll[e.a], roll[e.b]) {
                (Some(ra), None) => roll[e.b] = Some(ra + r),
                (None, Some(rb)) => roll[e.a] = Some(rb - r),
                _ => {}
            }
        }
    }
    let roll: Vec<f64> = roll.into_iter().map(|r| r.unwrap_or(0.0)).collect();
    for (i, r) in roll.iter().enumerate() {
        let pitched = ((r.rem_euclid(180.0)) - 90.0).abs() < 1.0;
        if let Some(m) = bus.module_mut(i) {
            m.set_pitched(pitched);
        }
    }
    Ok(bus)
}

#[cfg(test)]
mod tests {
    use super::*;
    use modbot_gaits::hormone::Role;

    fn mapped(spec: OrganismSpec) -> (Topology, Bus) {
        let t = spec
            .topology(&ModuleCatalog::builtin())
            .unwrap_or_else(|e| panic!("{e}"));
        let mut bus = bus_of(&t, HormoneSettings::default()).unwrap_or_else(|e| panic!("{e}"));
        bus.run(40);
        (t, bus)
    }

    /// The organisms' robot files map to the seed's types and roles on the bus.
    #[test]
    fn organisms_map_to_the_seeds_types_and_roles() {
        let (_, b) = mapped(OrganismSpec::parse("scorpion", false, false).unwrap_or_else(|e| panic!("{e}")));
        let types: Vec<u16> = (0..7).filter_map(|i| b.module(i).map(|m| m.module_type())).collect();
        assert_eq!(types, [2, 10, 73, 9, 2, 11, 2]);
        assert_eq!(
            b.module(1).map(|m| m.role()),
            Some(Role::ScorpionInnerArm { right: true })
        );
        let (_, b) = mapped(OrganismSpec::parse("caterpillar:10", true, false).unwrap_or_else(|e| panic!("{e}")));
        let roles: Vec<Role> = (0..10).filter_map(|i| b.module(i).map(|m| m.role())).collect();
        assert_eq!(roles[4], Role::Pitched, "module ⌈10/2⌉ = 5 is pitched");
        assert_eq!(roles.iter().filter(|r| **r == Role::Pitched).count(), 1);
        assert_eq!(
            (roles[0], roles[9]),
            (Role::CaterpillarFrontEnd, Role::CaterpillarRearEnd)
        );
        // Without its tail the head has the same joins as the left inner arm (B to B, F to
        // B); the tilt carried by the handshakes tells the pitched arm from the upright head.
        let (_, b) = mapped(OrganismSpec::parse("scorpion", false, true).unwrap_or_else(|e| panic!("{e}")));
        let roles: Vec<Role> = (0..5).filter_map(|i| b.module(i).map(|m| m.role())).collect();
        assert_eq!(
            roles,
            [
                Role::ScorpionOuterArm { right: true },
                Role::ScorpionInnerArm { right: true },
                Role::ScorpionHead,
                Role::ScorpionInnerArm { right: false },
                Role::ScorpionOuterArm { right: false },
            ]
        );
        let (t, b) = mapped(OrganismSpec::parse("v:5", false, false).unwrap_or_else(|e| panic!("{e}")));
        assert_eq!(t.len(), 5);
        assert_eq!(
            b.module(2).map(|m| (m.module_type(), m.role())),
            Some((1026, Role::VCentre))
        );
    }

    #[test]
    fn bad_organisms_name_the_problem() {
        for (text, pitched, no_tail, says) in [
            ("caterpillar:17", false, false, "at most 16"),
            ("caterpillar", false, false, "number of modules"),
            ("caterpillar:1", false, false, "at least 2"),
            ("v:4", false, false, "odd"),
            ("scorpion:7", false, false, "fixed size"),
            ("v:5", true, false, "--pitched"),
            ("caterpillar:5", false, true, "--no-tail"),
            ("blob", false, false, "expected"),
        ] {
            let e = OrganismSpec::parse(text, pitched, no_tail)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.contains(says), "{text}: {e}");
        }
        let y1 = Topology::resolve("pp:4", &ModuleCatalog::builtin()).unwrap_or_else(|e| panic!("{e}"));
        let e = bus_of(&y1, HormoneSettings::default())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("cube"), "{e}");
    }
}
