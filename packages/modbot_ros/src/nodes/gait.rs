//! `gait_node`: turns gait commands into joint targets at the control rate.
//!
//! Subscribes `gait/command` (modbot_msgs/GaitCommand), publishes
//! `position_controller/commands` (std_msgs/Float64MultiArray, the ForwardCommandController
//! convention, joints in controller order) and `gait/state` (modbot_msgs/GaitState). The
//! `gait` and `gait_params` parameters select the gait too, so `ros2 param set` drives it.
//! A command or parameter the gait library refuses is logged with its reason and dropped;
//! the running gait goes on.
//!
//! A wheel-foot robot (`wheelfoot`, `quadruped`, `wheeled`) runs its closed-loop
//! controllers: the node also subscribes `joint_states` and `odom` (the base pose), sends
//! nothing until both have arrived, and sends its wheels' speeds (rad/s) on
//! `velocity_controller/commands` (record 0025; the edge is [`super::gait_io`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use modbot_app::GaitDriver;
use modbot_core::ModuleCatalog;
use modbot_gaits::GaitLibrary;
use modbot_msgs::modbot_msgs::msg::{GaitCommand, GaitState};
use modbot_msgs::std_msgs::msg::Header;

use super::gait_io::{CommandPubs, Feedback};
use crate::convert;
use crate::error::{Result, RosError};
use crate::params::{Get, NodeConfig, ParamDecl, ParamMap, ParamValue};
use crate::transport::{Level, Pub, Qos, Sub, Throttle, Transport};

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
        .map(|s| modbot_gaits::params::parse_assignment(s).map_err(|e| format!("gait_params entry {e}")))
        .collect()
}

impl GaitNodeConfig {
    fn catalog(&self) -> std::result::Result<ModuleCatalog, String> {
        super::module_catalog(&self.modules_file)
    }

    /// The gait driver of modbot_app for this robot, holding its zero pose: all the logic.
    pub fn driver(&self) -> std::result::Result<GaitDriver, String> {
        let topology = modbot_app::load_robot(&self.robot, &self.catalog()?)
            .map_err(|e| format!("robot `{}`: {e}", self.robot))?;
        Ok(GaitDriver::new(topology, self.library()?))
    }

    fn library(&self) -> std::result::Result<GaitLibrary, String> {
        let path = (!self.gaits_file.is_empty()).then(|| std::path::Path::new(&self.gaits_file));
        modbot_app::load_gaits(path).map_err(|e| format!("gaits_file: {e}"))
    }
}

impl NodeConfig for GaitNodeConfig {
    fn declarations() -> Vec<ParamDecl> {
        let (d, st) = (ParamValue::Double, |v: &str| ParamValue::Str(v.into()));
        vec![
            super::robot_decl(),
            ParamDecl::new(
                "gait",
                st("caterpillar"),
                "gait or preset (modbot gaits); empty holds the pose",
            ),
            ParamDecl::new(
                "gait_params",
                ParamValue::StrArray(Vec::new()),
                "gait parameters as NAME=VALUE",
            ),
            ParamDecl::new("control_rate_hz", d(100.0), "rate of position_controller/commands, Hz"),
            ParamDecl::new("state_rate_hz", d(10.0), "rate of gait/state, Hz"),
            ParamDecl::new(
                "watchdog_s",
                d(0.0),
                "hold the pose when no gait command arrived for this long (0: off)",
            ),
            super::modules_file_decl(),
            ParamDecl::new(
                "gaits_file",
                st(""),
                "gait YAML merged over the built-in one (empty: none)",
            ),
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
        let driver = cfg.driver()?;
        if !cfg.gait.is_empty() {
            driver.check(&cfg.gait, &cfg.gait_params)?;
        }
        Ok(cfg)
    }
}

/// Runs gait_node on a transport until `stop` is set.
pub fn run<T: Transport>(t: &mut T, cfg: GaitNodeConfig, stop: Arc<AtomicBool>) -> Result<()> {
    let mut core = cfg.driver().map_err(RosError::Params)?;
    let joints = core.topology().joint_names().len();
    let mut commands = CommandPubs::new(t, &core)?;
    let mut feedback = if core.closed_loop() {
        Some(Feedback::new(t)?)
    } else {
        None
    };
    let state_pub = t.publisher::<GaitState>("gait/state", Qos::Reliable)?;
    let command_sub = t.subscription::<GaitCommand>("gait/command", Qos::Reliable)?;
    let mut cfg = cfg;
    if !cfg.gait.is_empty() {
        core.select(&cfg.gait, &cfg.gait_params).map_err(RosError::Params)?;
    }
    t.log(
        Level::Info,
        &format!(
            "driving {} joints of {} at {} Hz, gait `{}`; commands on {}{}",
            joints,
            cfg.robot,
            cfg.control_rate_hz,
            cfg.gait,
            t.resolve("position_controller/commands"),
            if core.closed_loop() {
                " and velocity_controller/commands, closed loop on joint_states and odom"
            } else {
                ""
            }
        ),
    );
    let mut period = Duration::from_secs_f64(1.0 / cfg.control_rate_hz);
    let mut next = Instant::now();
    let mut last_state = Instant::now() - Duration::from_secs(3600);
    let mut last_command = Instant::now();
    let mut watchdog_fired = false;
    let mut rejected = 0u64;
    let mut last_accepted = None;
    let mut throttle = Throttle::new(5.0);
    // With use_sim_time the gait advances with /clock, so a simulator running faster or
    // slower than real time still sees the gait's own period.
    let sim_time = matches!(t.param("use_sim_time"), Some(ParamValue::Bool(true)));
    let mut last_clock = t.now();
    while !stop.load(Ordering::Relaxed) {
        // Parameter changes accepted by the service (already validated).
        if let Some(reread) = super::reread::<GaitNodeConfig, T>(t) {
            match reread {
                Ok(new) => {
                    let reselect = new.gait != cfg.gait || new.gait_params != cfg.gait_params;
                    if new.robot != cfg.robot
                        || new.modules_file != cfg.modules_file
                        || new.gaits_file != cfg.gaits_file
                    {
                        throttle.log(
                            t,
                            "next_start",
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
                        let (level, msg) = match core.select(&cfg.gait, &cfg.gait_params) {
                            Ok(()) => (Level::Info, format!("gait `{}` from parameters", cfg.gait)),
                            Err(e) => (Level::Error, format!("gait parameters refused: {e}")),
                        };
                        throttle.log(t, "gait_params", level, &msg);
                    }
                }
                Err(e) => drop(throttle.log(t, "params", Level::Error, &format!("parameter change refused: {e}"))),
            }
        }
        while let Some(msg) = command_sub.take() {
            match msg {
                Ok(c) => match convert::gait_request(&c).and_then(|r| core.request(&r).map(|()| r)) {
                    Ok(r) => {
                        last_command = Instant::now();
                        watchdog_fired = false;
                        // A command repeated (a heartbeat) is not news; a change is, at most
                        // one line per 5 s (issue 18: valid commands at 1 kHz are a flood too).
                        if last_accepted.as_ref() != Some(&r) {
                            let what = if c.stop { "stop" } else { &c.gait };
                            let msg = format!("gait command accepted: `{what}`");
                            throttle.log(t, "accepted", Level::Info, &msg);
                            last_accepted = Some(r);
                        }
                    }
                    Err(e) => {
                        rejected += 1;
                        let msg = format!("gait command refused ({rejected} so far): {e}");
                        throttle.log(t, "refused", Level::Warn, &msg);
                    }
                },
                Err(e) => {
                    rejected += 1;
                    let msg = format!("undecodable gait command dropped ({rejected} so far): {e}");
                    throttle.log(t, "undecodable", Level::Warn, &msg);
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
        if let Some(f) = &mut feedback {
            f.drain(t, &mut core, &mut throttle);
        }
        let step = core.step(dt);
        commands.publish(t, step, &mut throttle);
        if last_state.elapsed().as_secs_f64() >= 1.0 / cfg.state_rate_hz {
            last_state = Instant::now();
            let header = Header {
                stamp: modbot_msgs::builtin_interfaces::msg::Time::from_secs_f64(t.now()),
                frame_id: String::new(),
            };
            if let Err(e) = state_pub.publish(convert::gait_state(&core.status(), &cfg.robot, header)) {
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
