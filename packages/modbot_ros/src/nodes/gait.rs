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

use modbot_app::{GaitDriver, GaitRequest};
use modbot_core::{ModuleCatalog, Topology};
use modbot_gaits::{BuiltGait, GaitLibrary};
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

/// The node's state: the gait driver of modbot_app (all the logic) and the robot's name.
pub struct GaitCore {
    robot: String,
    driver: GaitDriver,
    /// Joint names in controller order.
    pub joint_names: Vec<String>,
}

/// A GaitCommand in the driver's plain terms (checked there).
pub fn request(c: &GaitCommand) -> std::result::Result<GaitRequest, String> {
    if c.param_names.len() != c.param_values.len() {
        return Err(format!(
            "{} parameter names but {} values",
            c.param_names.len(),
            c.param_values.len()
        ));
    }
    Ok(GaitRequest {
        stop: c.stop,
        gait: c.gait.clone(),
        params: c
            .param_names
            .iter()
            .cloned()
            .zip(c.param_values.iter().copied())
            .collect(),
        speed_scale: c.speed_scale,
        direction: c.direction,
        transition_s: c.transition_time,
    })
}

impl GaitCore {
    /// A robot holding its zero pose.
    pub fn new(cfg: &GaitNodeConfig) -> std::result::Result<GaitCore, String> {
        let catalog = cfg.catalog()?;
        let library = cfg.library()?;
        let topology = Topology::resolve(&cfg.robot, &catalog).map_err(|e| format!("robot `{}`: {e}", cfg.robot))?;
        Ok(GaitCore {
            robot: cfg.robot.clone(),
            joint_names: topology.joint_names(),
            driver: GaitDriver::new(topology, library),
        })
    }

    /// Builds a gait for this robot (no side effect).
    pub fn build(&self, gait: &str, params: &[(String, f64)]) -> std::result::Result<BuiltGait, String> {
        self.driver.build(gait, params).map_err(|e| e.to_string())
    }

    /// Runs a gait by name with `NAME=VALUE` parameters (the parameter interface).
    pub fn select(&mut self, gait: &str, params: &[(String, f64)]) -> std::result::Result<(), String> {
        self.driver.select(gait, params).map_err(|e| e.to_string())
    }

    /// Applies a GaitCommand; the error says why it was refused (nothing changes then).
    pub fn command(&mut self, c: &GaitCommand) -> std::result::Result<(), String> {
        self.driver.request(&request(c)?)
    }

    /// Holds the current targets.
    pub fn stop(&mut self) {
        self.driver.stop();
    }

    /// Whether the robot holds a pose.
    pub fn holding(&self) -> bool {
        self.driver.holding()
    }

    /// Advances by `dt` and returns the targets, rad.
    pub fn tick(&mut self, dt: f64) -> &[f64] {
        self.driver.tick(dt)
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
            data: self.driver.output().to_vec(),
        }
    }

    /// The state message.
    pub fn state_msg(&self, header: Header) -> GaitState {
        let s = self.driver.status();
        GaitState {
            header,
            gait: s.gait,
            robot: self.robot.clone(),
            phase: s.phase,
            cycle_count: s.cycles,
            period: s.period_s,
            param_names: s.params.iter().map(|(k, _)| k.clone()).collect(),
            param_values: s.params.iter().map(|(_, v)| *v).collect(),
            holding: s.holding,
            transitioning: s.transitioning,
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

    /// The message is converted for the driver (whose own tests cover the gait logic):
    /// mismatched names and values are refused here, the rest there, and a refused
    /// command changes nothing.
    #[test]
    fn commands_reach_the_driver() {
        let mut core = GaitCore::new(&cfg()).unwrap();
        core.select("caterpillar", &[]).unwrap();
        let before = core.state_msg(Header::default());
        let e = core
            .command(&GaitCommand {
                gait: "caterpillar".into(),
                param_names: vec!["A".into(), "dphi".into()],
                param_values: vec![30.0],
                ..Default::default()
            })
            .unwrap_err();
        assert!(e.contains("2 parameter names but 1 values"), "{e}");
        assert!(
            core.command(&GaitCommand {
                gait: "caterpillar".into(),
                direction: 5,
                ..Default::default()
            })
            .is_err()
        );
        assert_eq!(core.state_msg(Header::default()).param_values, before.param_values);
        core.command(&GaitCommand {
            gait: "caterpillar".into(),
            param_names: vec!["A".into()],
            param_values: vec![30.0],
            direction: GaitCommand::DIRECTION_REVERSE,
            transition_time: -1.0,
            ..Default::default()
        })
        .unwrap();
        let s = core.state_msg(Header::default());
        assert!(
            s.param_names
                .iter()
                .zip(&s.param_values)
                .any(|(k, v)| k == "amplitude_deg" && *v == 30.0),
            "{s:?}"
        );
        let m = core.commands_msg();
        assert_eq!((m.data.len(), m.layout.dim[0].size), (8, 8));
        core.command(&GaitCommand {
            stop: true,
            ..Default::default()
        })
        .unwrap();
        assert!(core.state_msg(Header::default()).holding);
    }
}
