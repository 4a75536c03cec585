//! The digital-hormone organisms (seed-003 §2, §6) as robot files of `cube` modules, and
//! the hormone bus of any such robot: caterpillar of N (optionally with a pitched module
//! near the middle), the 'V' with equal arms, the 7-module scorpion (with or without its
//! tail). Decision record 0029.

use std::fmt::Write as _;

use modbot_core::{ModuleCatalog, Scenario, Topology};
use modbot_gaits::hormone::{Bus, HormoneSettings, Side};
use modbot_gaits::{Controller, JointTarget, Observation};
use modbot_sim::sensors::IrSensor;
use modbot_sim::{Report, RunPlan, Sample, run_controller};
use nalgebra::{Isometry3, Translation3, UnitQuaternion};

use crate::error::{AppError, Result};
use crate::evaluate::EvalOptions;
use crate::session::SimSession;

/// Seconds per hormone tick (H1: the seed's time step is not in seconds; the cube's servo
/// reaches ±45° within one).
pub const TICK_S: f64 = 0.25;
/// IR range, m: a reading of 128 at and beyond it (the seed gives the scale, not the range).
pub const IR_RANGE_M: f64 = 0.3;

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
            });
        }
    }
    out
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
    joints: usize,
    clock: f64,
    ticks: u64,
    half_period: u64,
    closest: f64,
}

impl HormoneController {
    /// The controller of `robot` (a robot of `cube` modules).
    pub fn new(robot: &Topology, settings: HormoneSettings) -> Result<HormoneController> {
        let bus = bus_of(robot, settings)?;
        let joints = robot.joints();
        let hinge = (0..robot.len())
            .map(|i| joints.iter().position(|j| j.module == i))
            .collect();
        let ir = robot
            .modules
            .iter()
            .map(|m| Side::ALL.map(|s| format!("ir/{}/{s}", m.name)))
            .collect();
        Ok(HormoneController {
            bus,
            hinge,
            ir,
            joints: joints.len(),
            clock: 0.0,
            ticks: 0,
            half_period: settings.half_period,
            closest: 128.0,
        })
    }

    /// The bus (modules, maps, roles).
    pub fn bus(&self) -> &Bus {
        &self.bus
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
        while (self.ticks + 1) as f64 * TICK_S <= self.clock + 1e-9 {
            for (i, names) in self.ir.iter().enumerate() {
                let read = |n: &String| obs.sensors.get(n).and_then(|v| v.first().copied()).unwrap_or(128.0);
                let r = [read(&names[0]), read(&names[1]), read(&names[2]), read(&names[3])];
                // Joined sides read near 0 (covered); only open ones count as "seen".
                if let Some(m) = self.bus.module(i) {
                    for (k, v) in r.iter().enumerate() {
                        if m.map().status()[k].is_none() {
                            self.closest = self.closest.min(*v);
                        }
                    }
                }
                self.bus.set_ir(i, r);
            }
            self.bus.step();
            self.ticks += 1;
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
        (self.ticks / (2 * self.half_period)) as usize
    }
}

/// What an organism run measured.
#[derive(Debug, Clone)]
pub struct OrganismRun {
    /// The protocol's report (cycles of one wave period, 2 s).
    pub report: Report,
    /// One sample per control tick.
    pub samples: Vec<Sample>,
    /// Each module's name, type and role at the end.
    pub modules: Vec<(String, u16, String)>,
    /// Smallest IR reading any module saw on an open side, 0 (touching) … 128.
    pub closest_ir: f64,
}

/// Runs an organism in `world` for `seconds` (the first 4 s, two wave periods, are warm-up).
pub fn run_organism(
    robot: &Topology,
    world: &Scenario,
    seconds: f64,
    options: &EvalOptions,
    progress: &mut dyn FnMut(f64, f64),
) -> Result<OrganismRun> {
    let period = 2.0 * HormoneSettings::default().half_period as f64 * TICK_S;
    if !(seconds.is_finite() && seconds >= 3.0 * period && seconds <= 3600.0) {
        return Err(AppError::BadInput(format!(
            "--seconds {seconds}: expected {} to 3600 s (two wave periods of warm-up, one measured)",
            3.0 * period
        )));
    }
    let mut session = SimSession::new(robot.clone(), world, options.settings(world), 0)?;
    session.sim.set_ir_sensors(ir_sensors(robot))?;
    let mut controller = HormoneController::new(robot, HormoneSettings::default())?;
    let plan = RunPlan {
        warmup_cycles: 2,
        cycles: ((seconds / period).floor() as usize).saturating_sub(2).max(1),
        ..options.plan
    };
    let out = run_controller(&mut session.sim, &mut controller, plan, session.body_length_m, progress)?;
    let closest_ir = controller.closest();
    let modules = robot
        .modules
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            controller
                .bus()
                .module(i)
                .map(|h| (m.name.clone(), h.module_type(), h.role().name().to_string()))
        })
        .collect();
    Ok(OrganismRun {
        report: out.report,
        samples: out.samples,
        modules,
        closest_ir,
    })
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
    // Each module's roll about the chain axis, summed from the root (module 0) outward.
    let mut roll: Vec<Option<f64>> = vec![None; robot.len()];
    roll[0] = Some(0.0);
    for _ in 0..robot.len() {
        for e in &robot.edges {
            if let (Some(ra), None) = (roll[e.a], roll[e.b]) {
                roll[e.b] = Some(ra + e.roll.to_degrees());
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
