//! Driving a robot's joints from gait requests: the gait node's logic without middleware.
//! A request names a gait (or keeps the running one), its parameters, a speed scale, a
//! direction and a transition time; the driver checks it, builds the gait and plays it
//! through the gait player (ramp, blend, slew limit). A request the library refuses changes
//! nothing. The same gait again is a heartbeat, not a restart.
//!
//! For a wheel-foot robot (`modular_robot`) the gaits are the closed-loop modular
//! controllers of record 0024: the driver is fed the robot's joint states and base pose
//! ([`GaitDriver::observe_joints`], [`GaitDriver::observe_base`]), sends nothing until both
//! have arrived, and each tick returns position targets and wheel speeds by command
//! interface ([`Commands`], record 0025).

use std::collections::BTreeMap;

use modbot_core::{Actuator, Topology};
use modbot_gaits::cpg::CpgController;
use modbot_gaits::player::{slew_toward, smoothstep};
use modbot_gaits::{BuiltGait, Controller, GaitError, GaitLibrary, GaitPlayer, JointTarget, Observation, Transition};
use nalgebra::Isometry3;

use crate::closed_loop::{ClosedLoop, CommandLayout, Commands};
use crate::controller::modular_robot;

/// A gait request in plain terms (what a `modbot_msgs/GaitCommand` says).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GaitRequest {
    /// Stop: hold the current targets (everything else is ignored).
    pub stop: bool,
    /// Gait or preset; empty keeps the running gait.
    pub gait: String,
    /// Parameter overrides (keys or aliases).
    pub params: Vec<(String, f64)>,
    /// Period divisor in [0, 4]; 0 keeps 1.
    pub speed_scale: f64,
    /// −1 reverses, 0 or 1 as given.
    pub direction: i8,
    /// Blend/ramp time, s (negative: the library's).
    pub transition_s: f64,
}

/// Where the driver is, for a status message.
#[derive(Debug, Clone, PartialEq)]
pub struct GaitStatus {
    /// Running gait ("" while holding from the start).
    pub gait: String,
    /// Its period, s (0 if none).
    pub period_s: f64,
    /// Its resolved parameters.
    pub params: Vec<(String, f64)>,
    /// Phase in the current cycle, [0, 1).
    pub phase: f64,
    /// Completed cycles.
    pub cycles: u32,
    /// Holding a pose.
    pub holding: bool,
    /// Blending from the previous gait.
    pub transitioning: bool,
}

/// The seed-002 CPG running on a chain: the oscillators from rest, cross-faded from the
/// pose the switch found over the blend time, through the servos' slew limit.
struct CpgRun {
    name: String,
    /// Resolved values (canonical keys), for the status and to tell a heartbeat.
    values: BTreeMap<String, f64>,
    controller: CpgController,
    from: Vec<f64>,
    output: Vec<f64>,
    targets: Vec<JointTarget>,
    /// The cross-faded targets of this tick.
    desired: Vec<f64>,
    /// The servos' speed limits, rad/s.
    speeds: Vec<f64>,
    elapsed: f64,
    blend_s: f64,
}

/// The driver.
pub struct GaitDriver {
    topology: Topology,
    library: GaitLibrary,
    player: GaitPlayer,
    default_transition: Transition,
    running: Option<BuiltGait>,
    started_at: f64,
    holding: bool,
    layout: CommandLayout,
    /// The closed-loop controllers of a wheel-foot robot (`None`: the sine gaits).
    closed: Option<ClosedLoop>,
    /// The CPG, when it drives the chain instead of the sine gaits.
    cpg: Option<CpgRun>,
}

impl std::fmt::Debug for GaitDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GaitDriver")
            .field("robot", &self.topology.name)
            .field("holding", &self.holding())
            .field("closed_loop", &self.closed_loop())
            .finish()
    }
}

impl GaitDriver {
    /// A robot holding its zero pose.
    pub fn new(topology: Topology, library: GaitLibrary) -> GaitDriver {
        let speeds = topology.max_speeds_rad_s();
        let n = speeds.len();
        GaitDriver {
            player: GaitPlayer::new(vec![0.0; n], speeds, library.transition),
            default_transition: library.transition,
            library,
            layout: CommandLayout::of(&topology),
            closed: modular_robot(&topology).map(|k| ClosedLoop::new(k, &topology)),
            topology,
            running: None,
            started_at: 0.0,
            holding: true,
            cpg: None,
        }
    }

    /// Whether the gaits read the robot (a wheel-foot robot's modular controllers): then
    /// the driver needs joint states and the base pose and sends nothing before both.
    pub fn closed_loop(&self) -> bool {
        self.closed.is_some()
    }

    /// The joints of each command interface (controller order).
    pub fn layout(&self) -> &CommandLayout {
        &self.layout
    }

    /// A joint state: names, positions (rad) and velocities (rad/s, or empty), as
    /// sensor_msgs/JointState has them, in any order. Refused (and the last one kept) when
    /// the lengths differ, a joint of the robot is missing or a value is not finite. The
    /// sine gaits are open loop and ignore it.
    pub fn observe_joints(&mut self, names: &[String], positions: &[f64], velocities: &[f64]) -> Result<(), String> {
        match &mut self.closed {
            Some(c) => c.observed.joints(names, positions, velocities),
            None => Ok(()),
        }
    }

    /// The base pose: the world pose of the robot's root link (odometry of base_link).
    /// Refused when not finite; ignored by the sine gaits.
    pub fn observe_base(&mut self, pose: Isometry3<f64>) -> Result<(), String> {
        match &mut self.closed {
            Some(c) => c.observed.base(pose),
            None => Ok(()),
        }
    }

    /// Whether the driver can send commands: always for the sine gaits; once a joint state
    /// and a base pose have arrived for a closed-loop robot.
    pub fn observed(&self) -> bool {
        self.closed.as_ref().is_none_or(|c| c.observed.ready())
    }

    /// Checks that `gait` with `params` builds for this robot (no side effect).
    pub fn check(&self, gait: &str, params: &[(String, f64)]) -> Result<(), String> {
        match &self.closed {
            Some(c) => c.build(&self.topology, &self.library, gait, params, false).map(|_| ()),
            None if self.is_cpg(gait) => self.build_cpg(gait, params).map(|_| ()),
            None => self.build(gait, params).map(|_| ()).map_err(|e| e.to_string()),
        }
    }

    fn is_cpg(&self, gait: &str) -> bool {
        self.library.cpg(gait, &[]).is_some()
    }

    /// Builds the CPG (or a preset of it) for this chain of position servos.
    fn build_cpg(
        &self,
        gait: &str,
        params: &[(String, f64)],
    ) -> Result<(CpgController, BTreeMap<String, f64>), String> {
        let settings = match self.library.cpg(gait, params) {
            Some(s) => s.map_err(|e| e.to_string())?,
            None => return Err(format!("`{gait}` is not the CPG")),
        };
        let joints = self.topology.joints();
        if let Some(j) = joints.iter().find(|j| !matches!(j.def.actuator, Actuator::Position(_))) {
            return Err(format!("the CPG drives position servos; joint `{}` is not one", j.name));
        }
        let limits = joints.iter().map(|j| j.def.limits_rad()).collect();
        let controller = CpgController::new(&settings, limits).map_err(|e| e.to_string())?;
        Ok((controller, settings.values))
    }

    /// Switches to the CPG from whatever the joints are commanded now.
    fn start_cpg(&mut self, name: &str, controller: CpgController, values: BTreeMap<String, f64>, blend: Option<f64>) {
        let from = self.output().to_vec();
        let n = from.len();
        self.cpg = Some(CpgRun {
            name: name.to_string(),
            values,
            controller,
            output: from.clone(),
            desired: from.clone(),
            from,
            targets: vec![JointTarget::Position(0.0); n],
            speeds: self.topology.max_speeds_rad_s(),
            elapsed: 0.0,
            blend_s: blend.unwrap_or(self.default_transition.blend_s),
        });
        self.running = None;
        self.holding = false;
    }

    /// Leaves the CPG: the sine player takes over from its last targets.
    fn leave_cpg(&mut self) {
        if let Some(run) = self.cpg.take() {
            self.player = GaitPlayer::new(run.output, self.topology.max_speeds_rad_s(), self.default_transition);
        }
    }

    /// The robot.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// Builds a sine gait for this robot (no side effect).
    pub fn build(&self, gait: &str, params: &[(String, f64)]) -> Result<BuiltGait, GaitError> {
        self.library.build(gait, &self.topology, params)
    }

    fn start(&mut self, built: BuiltGait, transition_s: Option<f64>) {
        self.leave_cpg();
        let mut tr = self.default_transition;
        if let Some(t) = transition_s {
            tr.blend_s = t;
            tr.ramp_s = t;
        }
        self.player.set_transition(tr);
        self.player.start(Box::new(built.generator.clone()));
        self.started_at = self.player.time();
        self.running = Some(built);
        self.holding = false;
    }

    /// Runs a gait by name (empty: hold).
    pub fn select(&mut self, gait: &str, params: &[(String, f64)]) -> Result<(), String> {
        if gait.is_empty() {
            self.stop();
            return Ok(());
        }
        if let Some(c) = &self.closed {
            let running = c.build(&self.topology, &self.library, gait, params, false)?;
            if let Some(c) = &mut self.closed {
                c.start(running);
            }
            return Ok(());
        }
        if self.is_cpg(gait) {
            let (controller, values) = self.build_cpg(gait, params)?;
            self.start_cpg(gait, controller, values, None);
            return Ok(());
        }
        let built = self.build(gait, params).map_err(|e| e.to_string())?;
        self.start(built, None);
        Ok(())
    }

    /// Applies a request; the error says why it was refused (nothing changes then).
    pub fn request(&mut self, r: &GaitRequest) -> Result<(), String> {
        if r.stop {
            self.stop();
            return Ok(());
        }
        if let Some((k, v)) = r.params.iter().find(|(_, v)| !v.is_finite()) {
            return Err(format!("parameter `{k}` is {v}"));
        }
        if !(r.speed_scale.is_finite() && (0.0..=4.0).contains(&r.speed_scale)) {
            return Err(format!("speed_scale {} is outside [0, 4] (0 keeps 1)", r.speed_scale));
        }
        if !r.transition_s.is_finite() || r.transition_s > 60.0 {
            return Err(format!("transition_time {} is not a time up to 60 s", r.transition_s));
        }
        let direction = match r.direction {
            0 | 1 => 1.0,
            -1 => -1.0,
            d => return Err(format!("direction {d} is not -1, 0 or 1")),
        };
        if self.closed.is_some() {
            return self.request_closed(r, direction < 0.0);
        }
        let name = if r.gait.is_empty() {
            match (&self.running, &self.cpg) {
                (_, Some(c)) => c.name.clone(),
                (Some(b), None) => b.generator.name.clone(),
                (None, None) => return Err("no gait named and none running".into()),
            }
        } else {
            r.gait.clone()
        };
        if self.is_cpg(&name) {
            return self.request_cpg(&name, r, direction);
        }
        let mut built = self.build(&name, &r.params).map_err(|e| e.to_string())?;
        let scale = if r.speed_scale == 0.0 { 1.0 } else { r.speed_scale };
        built.generator.period_s /= scale;
        built.generator.direction *= direction;
        // The same gait again is a heartbeat (a watchdog refresh), not a restart: restarting
        // would reset the phase and, sent every second, keep the robot from ever finishing a
        // cycle.
        if !self.holding && self.running.as_ref().is_some_and(|b| b.generator == built.generator) {
            return Ok(());
        }
        self.start(built, (r.transition_s >= 0.0).then_some(r.transition_s));
        Ok(())
    }

    /// A request for the CPG: the speed scale multiplies ν; it has no direction of its own
    /// (the sign of the phase lags sets it), so −1 is refused.
    fn request_cpg(&mut self, name: &str, r: &GaitRequest, direction: f64) -> Result<(), String> {
        if direction < 0.0 {
            return Err(format!(
                "`{name}` is reversed by the sign of its phase lags (phase_lag_deg), not by direction -1"
            ));
        }
        let mut params = r.params.clone();
        if r.speed_scale != 0.0 && r.speed_scale != 1.0 {
            let (_, values) = self.build_cpg(name, &r.params)?;
            let nu = values.get("frequency_hz").copied().unwrap_or(0.65);
            params.push(("frequency_hz".into(), nu * r.speed_scale));
        }
        let (controller, values) = self.build_cpg(name, &params)?;
        if !self.holding && self.cpg.as_ref().is_some_and(|c| c.name == name && c.values == values) {
            return Ok(()); // a heartbeat
        }
        self.start_cpg(
            name,
            controller,
            values,
            (r.transition_s >= 0.0).then_some(r.transition_s),
        );
        Ok(())
    }

    /// A request to a closed-loop robot: the gait and its parameters (reversed by the
    /// gait's `direction` parameter); the speed scale and transition belong to the sine
    /// gaits (these controllers move as fast as their poses are reached).
    fn request_closed(&mut self, r: &GaitRequest, reverse: bool) -> Result<(), String> {
        let Some(c) = &self.closed else {
            return Err("not a closed-loop robot".into());
        };
        let name = match (&r.gait, &c.running) {
            (g, _) if !g.is_empty() => g.clone(),
            (_, Some(run)) => run.name.clone(),
            (_, None) => return Err("no gait named and none running".into()),
        };
        if !(r.speed_scale == 0.0 || r.speed_scale == 1.0) {
            return Err(format!(
                "speed_scale {} applies to the sine gaits; `{name}` is event-driven (its speeds are parameters)",
                r.speed_scale
            ));
        }
        let running = c.build(&self.topology, &self.library, &name, &r.params, reverse)?;
        let same = c
            .running
            .as_ref()
            .is_some_and(|old| old.name == running.name && old.given == running.given);
        if !c.holding && same {
            return Ok(()); // a heartbeat
        }
        if let Some(c) = &mut self.closed {
            c.start(running);
        }
        Ok(())
    }

    /// Holds the current targets (a closed-loop robot: its last targets, wheels still).
    pub fn stop(&mut self) {
        self.leave_cpg();
        self.player.hold();
        self.holding = true;
        if let Some(c) = &mut self.closed {
            c.stop();
        }
    }

    /// Whether the robot holds a pose.
    pub fn holding(&self) -> bool {
        self.closed.as_ref().map_or(self.holding, |c| c.holding)
    }

    /// Advances by `dt` (s) and returns the targets by command interface: the sine gaits'
    /// angles for the position-driven joints (no speeds); a closed-loop controller's
    /// angles and wheel speeds. `None` while a closed-loop robot has not been observed yet
    /// (nothing may be sent); an error when a controller's target does not fit its joint.
    pub fn step(&mut self, dt: f64) -> Option<Result<Commands, String>> {
        if let Some(c) = &mut self.closed {
            return c.step(dt);
        }
        if let Some(run) = &mut self.cpg {
            run.elapsed += dt;
            let sensors = BTreeMap::new();
            let obs = Observation {
                time: run.elapsed,
                positions: &run.output,
                velocities: &[],
                base: Isometry3::identity(),
                sensors: &sensors,
            };
            run.controller.step(dt, &obs, &mut run.targets);
            let s = if run.blend_s > 0.0 {
                smoothstep(run.elapsed / run.blend_s)
            } else {
                1.0
            };
            for ((d, t), f) in run.desired.iter_mut().zip(&run.targets).zip(&run.from) {
                *d = f + s * (t.value() - f);
            }
            slew_toward(&mut run.output, &run.desired, &run.speeds, dt);
            let out = &run.output;
            return Some(Ok(Commands {
                position: self.layout.position.iter().map(|&k| out[k]).collect(),
                velocity: Vec::new(),
            }));
        }
        let out = self.player.step(dt);
        Some(Ok(Commands {
            position: self.layout.position.iter().map(|&k| out[k]).collect(),
            velocity: Vec::new(),
        }))
    }

    /// The last targets in joint order: angles, rad, and a closed-loop robot's wheel
    /// speeds, rad/s.
    pub fn output(&self) -> &[f64] {
        match (&self.closed, &self.cpg) {
            (Some(c), _) => c.output(),
            (None, Some(run)) => &run.output,
            (None, None) => self.player.output(),
        }
    }

    /// Where the driver is.
    pub fn status(&self) -> GaitStatus {
        if let Some(c) = &self.closed {
            let (gait, period_s, params, cycles) = match &c.running {
                Some(r) => (
                    r.name.clone(),
                    r.controller.period().unwrap_or(0.0),
                    r.resolved.clone(),
                    r.controller.completed_cycles() as u32,
                ),
                None => (String::new(), 0.0, Vec::new(), 0),
            };
            return GaitStatus {
                gait,
                period_s,
                params,
                phase: 0.0,
                cycles,
                holding: c.holding,
                transitioning: false,
            };
        }
        if let Some(run) = &self.cpg {
            return GaitStatus {
                gait: run.name.clone(),
                period_s: 0.0,
                params: run.values.iter().map(|(k, v)| (k.clone(), *v)).collect(),
                phase: 0.0,
                cycles: run.controller.completed_cycles() as u32,
                holding: false,
                transitioning: run.elapsed < run.blend_s,
            };
        }
        let (gait, period_s, params) = match &self.running {
            Some(b) => (
                b.generator.name.clone(),
                b.generator.period_s,
                b.params.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            ),
            None => (String::new(), 0.0, Vec::new()),
        };
        let elapsed = (self.player.time() - self.started_at).max(0.0);
        let (phase, cycles) = if period_s > 0.0 && !self.holding {
            let c = elapsed / period_s;
            (c.fract(), c.floor() as u32)
        } else {
            (0.0, 0)
        };
        GaitStatus {
            gait,
            period_s,
            params,
            phase,
            cycles,
            holding: self.holding,
            transitioning: !self.holding && elapsed < self.player.transition().blend_s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use modbot_core::ModuleCatalog;

    fn driver(robot: &str) -> GaitDriver {
        let t = Topology::resolve(robot, &ModuleCatalog::builtin()).unwrap_or_else(|e| panic!("{e}"));
        GaitDriver::new(t, GaitLibrary::builtin())
    }

    fn tick(d: &mut GaitDriver) -> Vec<f64> {
        d.step(0.01)
            .unwrap_or_else(|| panic!("no commands"))
            .unwrap_or_else(|e| panic!("{e}"))
            .position
    }

    fn req(gait: &str) -> GaitRequest {
        GaitRequest {
            gait: gait.into(),
            transition_s: -1.0,
            ..Default::default()
        }
    }

    #[test]
    fn requests_are_validated_and_nothing_changes_on_refusal() {
        let mut d = driver("pp:8");
        d.select("caterpillar", &[]).unwrap_or_else(|e| panic!("{e}"));
        for _ in 0..100 {
            tick(&mut d);
        }
        let before = d.status();
        let bad = [
            req("moonwalk"),
            GaitRequest {
                params: vec![("A".into(), f64::NAN)],
                ..req("caterpillar")
            },
            GaitRequest {
                params: vec![("A".into(), 500.0)],
                ..req("caterpillar")
            },
            GaitRequest {
                direction: 5,
                ..req("caterpillar")
            },
            GaitRequest {
                speed_scale: -1.0,
                ..req("caterpillar")
            },
            GaitRequest {
                transition_s: f64::INFINITY,
                ..req("caterpillar")
            },
        ];
        for r in &bad {
            assert!(d.request(r).is_err(), "{r:?} accepted");
        }
        let after = d.status();
        assert_eq!((before.gait, before.params), (after.gait, after.params));
        assert!(!after.holding);
    }

    #[test]
    fn a_request_changes_gait_speed_and_direction_and_a_repeat_is_a_heartbeat() {
        let mut d = driver("py:16");
        let r = GaitRequest {
            speed_scale: 2.0,
            direction: -1,
            transition_s: 0.5,
            ..req("sidewinding")
        };
        d.request(&r).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.status().gait, "sidewinding");
        for _ in 0..50 {
            tick(&mut d);
        }
        let phase = d.status().phase;
        d.request(&r).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.status().phase, phase);
        let base = d.build("sidewinding", &[]).unwrap_or_else(|e| panic!("{e}"));
        assert!((d.status().period_s - base.generator.period_s / 2.0).abs() < 1e-12);
        for _ in 0..300 {
            tick(&mut d);
        }
        assert!(d.output().iter().any(|x| x.abs() > 0.1));
        d.request(&GaitRequest {
            stop: true,
            ..Default::default()
        })
        .unwrap_or_else(|e| panic!("{e}"));
        let held = tick(&mut d);
        assert_eq!(tick(&mut d), held);
        assert!(d.status().holding);
    }

    /// The shipped six-module robots start (`initial_deg` of their robot files, the URDF's
    /// `initial_value`) in the pose their `stand` gait holds: the quadruped's stance, the
    /// wheeled vehicle's normal pose. The robot file and the gait code say it twice; this
    /// keeps them one.
    #[test]
    fn the_six_module_robots_start_in_the_pose_they_stand_in() {
        for robot in ["quadruped", "wheeled"] {
            let mut d = driver(robot);
            let names = d.topology().joint_names();
            let initial = d.topology().initial_positions();
            assert!(initial.iter().any(|q| *q != 0.0), "{robot} starts flat");
            d.request(&req("stand")).unwrap_or_else(|e| panic!("{e}"));
            d.observe_joints(&names, &initial, &[])
                .unwrap_or_else(|e| panic!("{e}"));
            d.observe_base(Isometry3::identity()).unwrap_or_else(|e| panic!("{e}"));
            tick(&mut d);
            for (k, ((name, q0), target)) in names.iter().zip(&initial).zip(d.output()).enumerate() {
                if d.layout().velocity.contains(&k) {
                    assert_eq!(*target, 0.0, "{robot}: wheel `{name}` still");
                } else {
                    assert!(
                        (q0 - target).abs() < 1e-9,
                        "{robot}: `{name}` starts at {q0}, stands at {target}"
                    );
                }
            }
        }
    }

    /// A wheel-foot robot's gaits read the robot: nothing is sent before a joint state and
    /// a base pose; then the modular controller's angles and wheel speeds come out by
    /// interface; repeats are heartbeats, direction reverses through the gait's parameter,
    /// and a stop holds the last angles with the wheels still.
    #[test]
    fn a_wheel_foot_robot_is_driven_closed_loop() {
        let mut d = driver("wheeled");
        assert!(d.closed_loop() && !driver("pp:8").closed_loop());
        assert!(d.check("drive", &[]).is_ok());
        assert!(d.check("trot", &[]).unwrap_err().contains("no gait `trot`"));
        assert!(d.check("drive", &[("speed_deg_s".into(), 400.0)]).is_err());
        d.request(&req("drive")).unwrap_or_else(|e| panic!("{e}"));
        assert!(d.step(0.01).is_none(), "no commands before the robot is observed");
        let names = d.topology().joint_names();
        // The robot in its normal pose (Table 3.30), so the wheels may turn.
        let pose: Vec<f64> = names
            .iter()
            .map(|n| {
                let role: usize = n[4..5].parse().unwrap_or(0);
                let (bj1, bj2) = if role <= 2 { (-90.0, 90.0) } else { (-75.0, 90.0) };
                let deg = if n.ends_with("back_joint1") {
                    bj1
                } else if n.ends_with("back_joint2") {
                    bj2
                } else {
                    0.0
                };
                f64::to_radians(deg)
            })
            .collect();
        d.observe_joints(&names, &pose, &[]).unwrap_or_else(|e| panic!("{e}"));
        assert!(!d.observed());
        assert!(d.observe_joints(&names[1..], &pose[1..], &[]).is_err());
        d.observe_base(Isometry3::identity()).unwrap_or_else(|e| panic!("{e}"));
        let c = d
            .step(0.01)
            .unwrap_or_else(|| panic!("observed"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((c.position.len(), c.velocity.len()), (26, 4));
        let v = 360f64.to_radians();
        for (got, want) in c.velocity.iter().zip([-v, v, -v, v]) {
            assert!((got - want).abs() < 1e-9, "{:?}", c.velocity);
        }
        d.request(&req("drive")).unwrap_or_else(|e| panic!("{e}"));
        assert!(d.status().cycles == 0 && d.status().gait == "drive");
        assert!(
            d.request(&GaitRequest {
                speed_scale: 2.0,
                ..req("drive")
            })
            .is_err()
        );
        assert!(
            d.request(&GaitRequest {
                direction: -1,
                ..req("drive")
            })
            .unwrap_err()
            .contains("direction")
        );
        d.stop();
        let held = d
            .step(0.01)
            .unwrap_or_else(|| panic!("observed"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(held.velocity, [0.0; 4]);
        assert_eq!(held.position, c.position);
        assert!(d.status().holding);

        let mut q = driver("quadruped");
        q.request(&GaitRequest {
            direction: -1,
            ..req("trot")
        })
        .unwrap_or_else(|e| panic!("{e}"));
        let st = q.status();
        assert!(st.params.contains(&("direction".to_string(), -1.0)), "{:?}", st.params);
        assert!(q.request(&req("quadruped/stand")).is_ok());
        assert_eq!(q.status().gait, "stand");
    }

    /// The CPG as the gait node's controller: cross-faded in from the pose it finds, then
    /// exactly the oscillators' output; its status, speed scale (ν), refusals, heartbeat,
    /// stop and the way back to a sine gait.
    #[test]
    fn the_cpg_drives_a_chain_through_the_driver() {
        use modbot_gaits::cpg::CpgController;
        let mut d = driver("py:8");
        let r = GaitRequest {
            params: vec![("R".into(), 0.4)],
            ..req("cpg")
        };
        d.request(&r).unwrap_or_else(|e| panic!("{e}"));
        let lib = GaitLibrary::builtin();
        let settings = lib
            .cpg("cpg", &[("R".into(), 0.4)])
            .unwrap_or_else(|| panic!("cpg"))
            .unwrap_or_else(|e| panic!("{e}"));
        let limits = d.topology().joints().iter().map(|j| j.def.limits_rad()).collect();
        let mut alone = CpgController::new(&settings, limits).unwrap_or_else(|e| panic!("{e}"));
        let mut want = vec![JointTarget::Position(0.0); 8];
        let sensors = BTreeMap::new();
        let mut out = Vec::new();
        for k in 0..400 {
            tick(&mut d);
            out = d.output().to_vec();
            let obs = Observation {
                time: 0.01 * (k + 1) as f64,
                positions: &out,
                velocities: &[],
                base: Isometry3::identity(),
                sensors: &sensors,
            };
            alone.step(0.01, &obs, &mut want);
        }
        // After the 1.5 s blend the targets are the CPG's own, through the servos' slew limit:
        // the Euler step holds the output for 0.05 s and then jumps (≤ 0.13 rad here), which
        // the 260°/s servo follows within three ticks; a joint not mid-jump is exact.
        for (o, w) in out.iter().zip(&want) {
            assert!((o - w.value()).abs() < 0.14, "{out:?} vs {want:?}");
        }
        assert!(
            out.iter().zip(&want).filter(|(o, w)| **o == w.value()).count() >= 2,
            "{out:?} vs {want:?}"
        );
        assert!(out.iter().any(|v| v.abs() > 0.1), "{out:?}");
        let st = d.status();
        assert_eq!(st.gait, "cpg");
        assert!(st.cycles >= 2 && !st.holding, "{st:?}");
        assert!(st.params.contains(&("amplitude".to_string(), 0.4)));
        // The same request again is a heartbeat; a bad one changes nothing.
        d.request(&r).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.status().cycles, st.cycles);
        for bad in [
            GaitRequest {
                direction: -1,
                ..r.clone()
            },
            GaitRequest {
                params: vec![("R".into(), 3.0)],
                ..req("cpg")
            },
            GaitRequest {
                params: vec![("amplitude.9".into(), 0.1)],
                ..req("cpg")
            },
        ] {
            assert!(d.request(&bad).is_err(), "{bad:?} accepted");
        }
        assert_eq!(d.status().params, st.params);
        // Twice the speed: ν doubles.
        d.request(&GaitRequest {
            speed_scale: 2.0,
            ..r.clone()
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            d.status().params.contains(&("frequency_hz".to_string(), 1.3)),
            "{:?}",
            d.status().params
        );
        // Stop holds the last targets; a sine gait takes over from them.
        tick(&mut d);
        d.stop();
        let held = d.output().to_vec();
        tick(&mut d);
        assert_eq!(d.output(), held);
        d.request(&req("straight")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.status().gait, "straight");
        // A wheel-foot robot has no CPG (its joints include wheels).
        assert!(driver("quadruped").check("cpg", &[]).is_err());
    }
}
