//! `gait_node`: turns gait commands into joint position targets at the control rate.
//!
//! Subscribes `gait/command` (modbot_msgs/GaitCommand), publishes
//! `position_controller/commands` (std_msgs/Float64MultiArray, the ForwardCommandController
//! convention, joints in controller order) and `gait/state` (modbot_msgs/GaitState). The
//! `gait` and `gait_params` parameters select the gait too, so `ros2 param set` drives it.
//! A command or parameter the gait library refuses is logged with its reason and dropped;
//! the running gait goes on.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use modbot_core::{ModuleCatalog, Topology};
use modbot_gaits::{BuiltGait, GaitLibrary, GaitPlayer, Transition};
use modbot_msgs::modbot_msgs::msg::{GaitCommand, GaitState};
use modbot_msgs::std_msgs::msg::{Float64MultiArray, Header, MultiArrayDimension, MultiArrayLayout};

use crate::error::{Result, RosError};
use crate::params::{Get, NodeConfig, ParamDecl, ParamMap, ParamValue};
use crate::transport::{Level, Pub, Qos, Sub, Transport};

/// The node's parameters, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct GaitNodeConfig {
    /// Robot, as `modbot` spells it (`pp:8`, `py:16`, `pyp:3`).
    pub robot: String,
    /// Gait or preset to run at start and whenever the parameter changes ("" = hold).
    pub gait: String,
    /// Parameters of that gait, `NAME=VALUE`.
    pub gait_params: Vec<(String, f64)>,
    /// Rate of `position_controller/commands`, Hz.
    pub control_rate_hz: f64,
    /// Rate of `gait/state`, Hz.
    pub state_rate_hz: f64,
    /// Hold the pose when no GaitCommand arrived for this long, s (0 = no watchdog).
    pub watchdog_s: f64,
    /// Module catalog file ("" = the built-in one).
    pub modules_file: String,
    /// Gait file merged over the built-in one ("").
    pub gaits_file: String,
}

fn parse_assignments(items: &[String]) -> std::result::Result<Vec<(String, f64)>, String> {
    items
        .iter()
        .map(|s| {
            let (k, v) = s
                .split_once('=')
                .ok_or_else(|| format!("gait_params entry `{s}` is not NAME=VALUE"))?;
            let x: f64 = v
                .trim()
                .parse()
                .map_err(|_| format!("gait_params entry `{s}`: `{v}` is not a number"))?;
            if !x.is_finite() {
                return Err(format!("gait_params entry `{s}` is not finite"));
            }
            Ok((k.trim().to_string(), x))
        })
        .collect()
}

impl GaitNodeConfig {
    fn catalog(&self) -> std::result::Result<ModuleCatalog, String> {
        super::module_catalog(&self.modules_file)
    }

    fn library(&self) -> std::result::Result<GaitLibrary, String> {
        if self.gaits_file.is_empty() {
            Ok(GaitLibrary::builtin())
        } else {
            GaitLibrary::load(std::path::Path::new(&self.gaits_file)).map_err(|e| format!("gaits_file: {e}"))
        }
    }
}

impl NodeConfig for GaitNodeConfig {
    fn declarations() -> Vec<ParamDecl> {
        vec![
            super::robot_decl(),
            ParamDecl {
                name: "gait",
                default: ParamValue::Str("caterpillar".into()),
                description: "gait or preset (modbot gaits); empty holds the pose",
            },
            ParamDecl {
                name: "gait_params",
                default: ParamValue::StrArray(Vec::new()),
                description: "gait parameters as NAME=VALUE",
            },
            ParamDecl {
                name: "control_rate_hz",
                default: ParamValue::Double(100.0),
                description: "rate of position_controller/commands, Hz",
            },
            ParamDecl {
                name: "state_rate_hz",
                default: ParamValue::Double(10.0),
                description: "rate of gait/state, Hz",
            },
            ParamDecl {
                name: "watchdog_s",
                default: ParamValue::Double(0.0),
                description: "hold the pose when no gait command arrived for this long (0: off)",
            },
            super::modules_file_decl(),
            ParamDecl {
                name: "gaits_file",
                default: ParamValue::Str(String::new()),
                description: "gait YAML merged over the built-in one (empty: none)",
            },
        ]
    }

    fn from_params(p: &ParamMap) -> std::result::Result<Self, String> {
        let g = Get(p);
        let cfg = GaitNodeConfig {
            robot: g.str("robot")?,
            gait: g.str("gait")?,
            gait_params: parse_assignments(&g.strs("gait_params")?)?,
            control_rate_hz: g.f64_in("control_rate_hz", 1.0, 2000.0)?,
            state_rate_hz: g.f64_in("state_rate_hz", 0.1, 1000.0)?,
            watchdog_s: g.f64_in("watchdog_s", 0.0, 3600.0)?,
            modules_file: g.str("modules_file")?,
            gaits_file: g.str("gaits_file")?,
        };
        // The whole selection must build, so a bad `gait` is refused before it is stored.
        let core = GaitCore::new(&cfg)?;
        if !cfg.gait.is_empty() {
            core.build(&cfg.gait, &cfg.gait_params)?;
        }
        Ok(cfg)
    }
}

/// The node's logic, free of any middleware: testable with plain calls.
pub struct GaitCore {
    robot: String,
    topology: Topology,
    library: GaitLibrary,
    player: GaitPlayer,
    default_transition: Transition,
    running: Option<BuiltGait>,
    started_at: f64,
    holding: bool,
    /// Joint names in controller order.
    pub joint_names: Vec<String>,
}

impl GaitCore {
    /// A robot holding its zero pose.
    pub fn new(cfg: &GaitNodeConfig) -> std::result::Result<GaitCore, String> {
        let catalog = cfg.catalog()?;
        let library = cfg.library()?;
        let topology = Topology::resolve(&cfg.robot, &catalog).map_err(|e| format!("robot `{}`: {e}", cfg.robot))?;
        let joint_names = topology.joint_names();
        let max_speed = topology
            .joints()
            .iter()
            .map(|j| j.def.actuator.max_speed_rad_s())
            .collect();
        let n = joint_names.len();
        Ok(GaitCore {
            robot: cfg.robot.clone(),
            topology,
            player: GaitPlayer::new(vec![0.0; n], max_speed, library.transition),
            default_transition: library.transition,
            library,
            running: None,
            started_at: 0.0,
            holding: true,
            joint_names,
        })
    }

    /// Builds a gait for this robot (no side effect).
    pub fn build(&self, gait: &str, params: &[(String, f64)]) -> std::result::Result<BuiltGait, String> {
        self.library
            .build(gait, &self.topology, params)
            .map_err(|e| e.to_string())
    }

    fn start(&mut self, built: BuiltGait, transition_s: Option<f64>) {
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

    /// Runs a gait by name with `NAME=VALUE` parameters (the parameter interface).
    pub fn select(&mut self, gait: &str, params: &[(String, f64)]) -> std::result::Result<(), String> {
        if gait.is_empty() {
            self.stop();
            return Ok(());
        }
        let built = self.build(gait, params)?;
        self.start(built, None);
        Ok(())
    }

    /// Applies a GaitCommand; the error says why it was refused (nothing changes then).
    pub fn command(&mut self, c: &GaitCommand) -> std::result::Result<(), String> {
        if c.stop {
            self.stop();
            return Ok(());
        }
        if c.param_names.len() != c.param_values.len() {
            return Err(format!(
                "{} parameter names but {} values",
                c.param_names.len(),
                c.param_values.len()
            ));
        }
        if let Some(i) = c.param_values.iter().position(|v| !v.is_finite()) {
            return Err(format!("parameter `{}` is {}", c.param_names[i], c.param_values[i]));
        }
        if !(c.speed_scale.is_finite() && c.speed_scale >= 0.0 && c.speed_scale <= 4.0) {
            return Err(format!("speed_scale {} is outside [0, 4] (0 keeps 1)", c.speed_scale));
        }
        if !c.transition_time.is_finite() || c.transition_time > 60.0 {
            return Err(format!(
                "transition_time {} is not a time up to 60 s",
                c.transition_time
            ));
        }
        let direction = match c.direction {
            GaitCommand::DIRECTION_AS_GIVEN => 1.0,
            GaitCommand::DIRECTION_FORWARD => 1.0,
            GaitCommand::DIRECTION_REVERSE => -1.0,
            d => return Err(format!("direction {d} is not -1, 0 or 1")),
        };
        let name = if c.gait.is_empty() {
            match &self.running {
                Some(b) => b.generator.name.clone(),
                None => return Err("no gait named and none running".into()),
            }
        } else {
            c.gait.clone()
        };
        let params: Vec<(String, f64)> = c
            .param_names
            .iter()
            .cloned()
            .zip(c.param_values.iter().copied())
            .collect();
        let mut built = self.build(&name, &params)?;
        let scale = if c.speed_scale == 0.0 { 1.0 } else { c.speed_scale };
        built.generator.period_s /= scale;
        built.generator.direction *= direction;
        // The same gait again is a heartbeat (a watchdog refresh), not a restart: restarting
        // would reset the phase and, sent every second, keep the robot from ever finishing a
        // cycle.
        if !self.holding && self.running.as_ref().is_some_and(|r| r.generator == built.generator) {
            return Ok(());
        }
        let tr = (c.transition_time >= 0.0).then_some(c.transition_time);
        self.start(built, tr);
        Ok(())
    }

    /// Holds the current targets.
    pub fn stop(&mut self) {
        self.player.hold();
        self.holding = true;
    }

    /// Whether the robot holds a pose.
    pub fn holding(&self) -> bool {
        self.holding
    }

    /// Advances by `dt` and returns the targets, rad.
    pub fn tick(&mut self, dt: f64) -> &[f64] {
        self.player.step(dt)
    }

    /// The command message for the current targets.
    pub fn commands_msg(&self) -> Float64MultiArray {
        let n = self.joint_names.len() as u32;
        Float64MultiArray {
            layout: MultiArrayLayout {
                dim: vec![MultiArrayDimension {
                    label: "joints".into(),
                    size: n,
                    stride: n,
                }],
                data_offset: 0,
            },
            data: self.player.output().to_vec(),
        }
    }

    /// The state message.
    pub fn state_msg(&self, header: Header) -> GaitState {
        let (gait, period, names, values) = match &self.running {
            Some(b) => (
                b.generator.name.clone(),
                b.generator.period_s,
                b.params.keys().cloned().collect(),
                b.params.values().copied().collect(),
            ),
            None => (String::new(), 0.0, Vec::new(), Vec::new()),
        };
        let elapsed = (self.player.time() - self.started_at).max(0.0);
        let (phase, cycles) = if period > 0.0 && !self.holding {
            let c = elapsed / period;
            (c.fract(), c.floor() as u32)
        } else {
            (0.0, 0)
        };
        GaitState {
            header,
            gait,
            robot: self.robot.clone(),
            phase,
            cycle_count: cycles,
            period,
            param_names: names,
            param_values: values,
            holding: self.holding,
            transitioning: self.player.time() - self.started_at < self.player.transition().blend_s && !self.holding,
        }
    }
}

/// Runs gait_node on a transport until `stop` is set.
pub fn run<T: Transport>(t: &mut T, cfg: GaitNodeConfig, stop: Arc<AtomicBool>) -> Result<()> {
    let mut core = GaitCore::new(&cfg).map_err(RosError::Params)?;
    let commands_pub = t.publisher::<Float64MultiArray>("position_controller/commands", Qos::Reliable)?;
    let state_pub = t.publisher::<GaitState>("gait/state", Qos::Reliable)?;
    let command_sub = t.subscription::<GaitCommand>("gait/command", Qos::Reliable)?;
    let mut cfg = cfg;
    if !cfg.gait.is_empty() {
        core.select(&cfg.gait, &cfg.gait_params).map_err(RosError::Params)?;
    }
    t.log(
        Level::Info,
        &format!(
            "driving {} joints of {} at {} Hz, gait `{}`; commands on {}",
            core.joint_names.len(),
            cfg.robot,
            cfg.control_rate_hz,
            cfg.gait,
            t.resolve("position_controller/commands")
        ),
    );
    let mut period = Duration::from_secs_f64(1.0 / cfg.control_rate_hz);
    let mut next = Instant::now();
    let mut last_state = Instant::now() - Duration::from_secs(3600);
    let mut last_command = Instant::now();
    let mut watchdog_fired = false;
    let mut rejected = 0u64;
    // With use_sim_time the gait advances with /clock, so a simulator running faster or
    // slower than real time still sees the gait's own period.
    let sim_time = matches!(t.param("use_sim_time"), Some(ParamValue::Bool(true)));
    let mut last_clock = t.now();
    while !stop.load(Ordering::Relaxed) {
        // Parameter changes accepted by the service (already validated).
        let changes = t.param_changes();
        if !changes.is_empty() {
            let mut map: BTreeMap<String, ParamValue> = BTreeMap::new();
            for d in GaitNodeConfig::declarations() {
                if let Some(v) = t.param(d.name) {
                    map.insert(d.name.to_string(), v);
                }
            }
            match GaitNodeConfig::from_params(&map) {
                Ok(new) => {
                    let reselect = new.gait != cfg.gait || new.gait_params != cfg.gait_params;
                    if new.robot != cfg.robot
                        || new.modules_file != cfg.modules_file
                        || new.gaits_file != cfg.gaits_file
                    {
                        t.log(
                            Level::Warn,
                            "robot, modules_file and gaits_file take effect at the next start",
                        );
                    }
                    period = Duration::from_secs_f64(1.0 / new.control_rate_hz);
                    cfg = GaitNodeConfig {
                        robot: cfg.robot.clone(),
                        modules_file: cfg.modules_file.clone(),
                        gaits_file: cfg.gaits_file.clone(),
                        ..new
                    };
                    if reselect {
                        match core.select(&cfg.gait, &cfg.gait_params) {
                            Ok(()) => t.log(Level::Info, &format!("gait `{}` from parameters", cfg.gait)),
                            Err(e) => t.log(Level::Error, &format!("gait parameters refused: {e}")),
                        }
                    }
                }
                Err(e) => t.log(Level::Error, &format!("parameter change refused: {e}")),
            }
        }
        while let Some(msg) = command_sub.take() {
            match msg {
                Ok(c) => match core.command(&c) {
                    Ok(()) => {
                        last_command = Instant::now();
                        watchdog_fired = false;
                        t.log(
                            Level::Info,
                            &format!("gait command accepted: `{}`", if c.stop { "stop" } else { &c.gait }),
                        );
                    }
                    Err(e) => {
                        rejected += 1;
                        t.log(Level::Warn, &format!("gait command refused ({rejected} so far): {e}"));
                    }
                },
                Err(e) => {
                    rejected += 1;
                    t.log(Level::Warn, &format!("undecodable gait command dropped: {e}"));
                }
            }
        }
        if cfg.watchdog_s > 0.0 && !watchdog_fired && last_command.elapsed().as_secs_f64() > cfg.watchdog_s {
            watchdog_fired = true;
            if !core.holding() {
                core.stop();
                t.log(
                    Level::Warn,
                    &format!("no gait command for {} s: holding the pose", cfg.watchdog_s),
                );
            }
        }
        let dt = if sim_time {
            let now = t.now();
            let d = (now - last_clock).clamp(0.0, 1.0);
            last_clock = now;
            d
        } else {
            period.as_secs_f64()
        };
        core.tick(dt);
        if let Err(e) = commands_pub.publish(core.commands_msg()) {
            t.log(Level::Warn, &e.to_string());
        }
        if last_state.elapsed().as_secs_f64() >= 1.0 / cfg.state_rate_hz {
            last_state = Instant::now();
            let header = Header {
                stamp: modbot_msgs::builtin_interfaces::msg::Time::from_secs_f64(t.now()),
                frame_id: String::new(),
            };
            if let Err(e) = state_pub.publish(core.state_msg(header)) {
                t.log(Level::Warn, &e.to_string());
            }
        }
        next += period;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else if now - next > period * 10 {
            next = now; // fell far behind (suspended): do not burst
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{defaults, resolve};

    fn cfg() -> GaitNodeConfig {
        GaitNodeConfig::from_params(&defaults::<GaitNodeConfig>()).unwrap()
    }

    #[test]
    fn defaults_validate() {
        let c = cfg();
        assert_eq!(c.robot, "pp:8");
        assert_eq!(c.control_rate_hz, 100.0);
    }

    #[test]
    fn bad_parameters_are_refused_by_name() {
        for (k, v, want) in [
            ("gait", ParamValue::Str("moonwalk".into()), "moonwalk"),
            ("robot", ParamValue::Str("xx:3".into()), "xx:3"),
            ("control_rate_hz", ParamValue::Double(0.0), "control_rate_hz"),
            ("gait_params", ParamValue::StrArray(vec!["A40".into()]), "A40"),
            ("gait_params", ParamValue::StrArray(vec!["A=400".into()]), "400"),
            ("gait_params", ParamValue::StrArray(vec!["zz=1".into()]), "zz"),
        ] {
            let e = resolve::<GaitNodeConfig>(&[], &[(k.to_string(), v)])
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{k}: {e}");
        }
        let e = resolve::<GaitNodeConfig>(&[], &[("nope".into(), ParamValue::Int(1))])
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown parameter `nope`"), "{e}");
        let e = resolve::<GaitNodeConfig>(&[], &[("gait".into(), ParamValue::Int(1))])
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a string"), "{e}");
    }

    #[test]
    fn commands_are_validated_and_nothing_changes_on_refusal() {
        let mut core = GaitCore::new(&cfg()).unwrap();
        core.select("caterpillar", &[]).unwrap();
        for _ in 0..100 {
            core.tick(0.01);
        }
        let before = core.state_msg(Header::default());
        let bad = [
            GaitCommand {
                gait: "moonwalk".into(),
                ..Default::default()
            },
            GaitCommand {
                gait: "caterpillar".into(),
                param_names: vec!["A".into()],
                param_values: vec![f64::NAN],
                ..Default::default()
            },
            GaitCommand {
                gait: "caterpillar".into(),
                param_names: vec!["A".into(), "dphi".into()],
                param_values: vec![30.0],
                ..Default::default()
            },
            GaitCommand {
                gait: "caterpillar".into(),
                param_names: vec!["A".into()],
                param_values: vec![500.0],
                ..Default::default()
            },
            GaitCommand {
                gait: "caterpillar".into(),
                direction: 5,
                ..Default::default()
            },
            GaitCommand {
                gait: "caterpillar".into(),
                speed_scale: -1.0,
                ..Default::default()
            },
        ];
        for c in &bad {
            assert!(core.command(c).is_err(), "{c:?} accepted");
        }
        let after = core.state_msg(Header::default());
        assert_eq!(before.gait, after.gait);
        assert_eq!(before.param_values, after.param_values);
        assert!(!after.holding);
    }

    #[test]
    fn a_command_changes_gait_speed_and_direction() {
        let mut core = GaitCore::new(&GaitNodeConfig {
            robot: "py:16".into(),
            ..cfg()
        })
        .unwrap();
        core.command(&GaitCommand {
            gait: "sidewinding".into(),
            speed_scale: 2.0,
            direction: GaitCommand::DIRECTION_REVERSE,
            transition_time: 0.5,
            ..Default::default()
        })
        .unwrap();
        let s = core.state_msg(Header::default());
        assert_eq!(s.gait, "sidewinding");
        for _ in 0..50 {
            core.tick(0.01);
        }
        // The same command again is a heartbeat: the phase goes on.
        let phase = core.state_msg(Header::default()).phase;
        core.command(&GaitCommand {
            gait: "sidewinding".into(),
            speed_scale: 2.0,
            direction: GaitCommand::DIRECTION_REVERSE,
            transition_time: 0.5,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(core.state_msg(Header::default()).phase, phase);
        let base = core.build("sidewinding", &[]).unwrap();
        assert!((s.period - base.generator.period_s / 2.0).abs() < 1e-12);
        for _ in 0..300 {
            core.tick(0.01);
        }
        let m = core.commands_msg();
        assert_eq!(m.data.len(), 16);
        assert_eq!(m.layout.dim[0].size, 16);
        assert!(m.data.iter().any(|x| x.abs() > 0.1));
        core.command(&GaitCommand {
            stop: true,
            ..Default::default()
        })
        .unwrap();
        let held = core.tick(0.01).to_vec();
        assert_eq!(core.tick(0.01), held.as_slice());
        assert!(core.state_msg(Header::default()).holding);
    }
}
