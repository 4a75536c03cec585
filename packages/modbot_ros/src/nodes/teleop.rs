//! `teleop_node`: teleoperation on the ROS graph. Subscribes `cmd_vel`
//! (geometry_msgs/Twist) and `joy` (sensor_msgs/Joy), maps them onto the robot's gait
//! commands with `modbot_app::teleop` (profile per robot, levels with hysteresis, the
//! dead-man; decision record 0041) and publishes `gait/command` (modbot_msgs/GaitCommand)
//! for gait_node, only when the command changes (and as a heartbeat while moving). A timer
//! at `rate_hz` runs the dead-man: no input for `timeout_s` sends one stop. Garbage (NaN,
//! absurd speeds, a Joy shorter than its map, undecodable samples) is dropped with a
//! rate-limited log line and the node keeps running. Both inputs are subscribed best effort,
//! so reliable and best-effort publishers both match. This file holds parameters,
//! conversion and wiring.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use modbot_app::GaitRequest;
use modbot_app::teleop::{
    FullScale, INPUT_LIMIT, JoyAxis, JoyMap, Teleop, TeleopInput, TeleopProfile, TeleopSettings, describe,
};
use modbot_msgs::geometry_msgs::msg::Twist;
use modbot_msgs::modbot_msgs::msg::GaitCommand;
use modbot_msgs::sensor_msgs::msg::Joy;

use crate::error::{Result, RosError};
use crate::params::{Get, NodeConfig, ParamDecl, ParamMap, ParamValue};
use crate::transport::{Level, Pub, Qos, Sub, Throttle, Transport};

/// The node's parameters, validated.
#[derive(Debug, Clone)]
pub struct TeleopNodeConfig {
    /// Robot, as `modbot` spells it (`py:8`, `quadruped`, a robot file).
    pub robot: String,
    /// Module catalog file ("" = the built-in one).
    pub modules_file: String,
    /// What the robot can do under teleoperation.
    pub profile: TeleopProfile,
    /// Dead-man, heartbeat, full scale, top speed scale and turn.
    pub settings: TeleopSettings,
    /// Rate of the loop that reads the inputs and runs the dead-man, Hz.
    pub rate_hz: f64,
    /// How `joy` drives.
    pub joy: JoyMap,
}

/// The GaitCommand of a gait request ([`crate::convert::request_command`], which the
/// executive's drives go through too).
pub fn gait_command(r: &GaitRequest) -> GaitCommand {
    crate::convert::request_command(r)
}

impl NodeConfig for TeleopNodeConfig {
    fn declarations() -> Vec<ParamDecl> {
        let (d, i) = (ParamValue::Double, ParamValue::Int);
        vec![
            super::robot_decl(),
            super::modules_file_decl(),
            ParamDecl::new(
                "timeout_s",
                d(modbot_app::teleop::DEFAULT_TIMEOUT_S),
                "dead-man: no cmd_vel or joy for this long stops the robot, s",
            ),
            ParamDecl::new(
                "rate_hz",
                d(20.0),
                "rate of the loop that reads the inputs and runs the dead-man, Hz",
            ),
            ParamDecl::new(
                "heartbeat_s",
                d(1.0),
                "while moving, re-send the command this often for gait_node's watchdog, s (0: never)",
            ),
            ParamDecl::new(
                "max_speed_scale",
                d(2.0),
                "a chain's gait speed scale (period divisor) at full speed, (0, 4]",
            ),
            ParamDecl::new(
                "max_turn_deg",
                d(30.0),
                "the snake's turning offset O_h at full yaw rate, deg",
            ),
            ParamDecl::new(
                "full_scale.linear_m_s",
                d(0.0),
                "the cmd_vel forward speed that means full speed, m/s (0: the robot's nominal)",
            ),
            ParamDecl::new(
                "full_scale.lateral_m_s",
                d(0.0),
                "the cmd_vel sideways speed that means full speed, m/s (0: the robot's nominal)",
            ),
            ParamDecl::new(
                "full_scale.angular_rad_s",
                d(0.0),
                "the cmd_vel yaw rate that means full speed, rad/s (0: the robot's nominal)",
            ),
            ParamDecl::new("joy.axis_linear_x", i(1), "joy axis for forward and back (-1: none)"),
            ParamDecl::new("joy.axis_linear_y", i(2), "joy axis for sideways (-1: none)"),
            ParamDecl::new("joy.axis_angular_z", i(0), "joy axis for turning (-1: none)"),
            ParamDecl::new(
                "joy.scale_linear_x",
                d(1.0),
                "fraction of full speed at full deflection, [-1, 1] (negative inverts)",
            ),
            ParamDecl::new("joy.scale_linear_y", d(1.0), "as joy.scale_linear_x, sideways"),
            ParamDecl::new("joy.scale_angular_z", d(1.0), "as joy.scale_linear_x, turning"),
            ParamDecl::new("joy.deadzone", d(0.1), "axis deflections up to this are 0, [0, 1)"),
            ParamDecl::new(
                "joy.enable_button",
                i(0),
                "joy button that must be held for the sticks to count (-1: none)",
            ),
        ]
    }

    fn from_params(p: &ParamMap) -> std::result::Result<Self, String> {
        let g = Get(p);
        let robot = g.str("robot")?;
        let modules_file = g.str("modules_file")?;
        let catalog = super::module_catalog(&modules_file)?;
        let topology =
            modbot_app::load_robot(&robot, &catalog).map_err(|e| format!("parameter `robot` = `{robot}`: {e}"))?;
        let profile = TeleopProfile::of(&topology).map_err(|e| format!("parameter `robot` = `{robot}`: {e}"))?;
        let nominal = profile.full_scale();
        let full = |key: &str, nominal: f64| -> std::result::Result<f64, String> {
            let v = g.f64_in(key, 0.0, INPUT_LIMIT)?;
            Ok(if v > 0.0 { v } else { nominal })
        };
        let settings = TeleopSettings {
            timeout_s: g.f64_in("timeout_s", 0.01, 3600.0)?,
            heartbeat_s: g.f64_in("heartbeat_s", 0.0, 3600.0)?,
            full: FullScale {
                linear_m_s: full("full_scale.linear_m_s", nominal.linear_m_s)?,
                lateral_m_s: full("full_scale.lateral_m_s", nominal.lateral_m_s)?,
                angular_rad_s: full("full_scale.angular_rad_s", nominal.angular_rad_s)?,
            },
            max_speed_scale: g.f64_in("max_speed_scale", 0.01, 4.0)?,
            max_turn_deg: g.f64_in("max_turn_deg", modbot_app::teleop::TURN_STEP_DEG, 90.0)?,
        };
        settings.validate().map_err(|e| e.to_string())?;
        let axis = |index: &str, scale: &str| -> std::result::Result<Option<JoyAxis>, String> {
            let i = g.i64_in(index, -1, 1023)?;
            let s = g.f64_in(scale, -1.0, 1.0)?;
            Ok(usize::try_from(i).ok().map(|index| JoyAxis { index, scale: s }))
        };
        let joy = JoyMap {
            linear_x: axis("joy.axis_linear_x", "joy.scale_linear_x")?,
            linear_y: axis("joy.axis_linear_y", "joy.scale_linear_y")?,
            angular_z: axis("joy.axis_angular_z", "joy.scale_angular_z")?,
            deadzone: g.f64_in("joy.deadzone", 0.0, 0.99)?,
            enable_button: usize::try_from(g.i64_in("joy.enable_button", -1, 1023)?).ok(),
        };
        joy.validate().map_err(|e| e.to_string())?;
        Ok(TeleopNodeConfig {
            robot,
            modules_file,
            profile,
            settings,
            rate_hz: g.f64_in("rate_hz", 1.0, 1000.0)?,
            joy,
        })
    }
}

/// Runs teleop_node until `stop` is set; on the way out a moving robot is stopped.
pub fn run<T: Transport>(t: &mut T, cfg: TeleopNodeConfig, stop: Arc<AtomicBool>) -> Result<()> {
    let mut teleop = Teleop::new(cfg.profile, cfg.settings).map_err(|e| RosError::Params(e.to_string()))?;
    let twist_sub = t.subscription::<Twist>("cmd_vel", Qos::SensorData)?;
    let joy_sub = t.subscription::<Joy>("joy", Qos::SensorData)?;
    let cmd_pub = t.publisher::<GaitCommand>("gait/command", Qos::Reliable)?;
    t.log(
        Level::Info,
        &format!(
            "teleoperating {} as a {} ({}): {} and {} in, gait commands on {}; dead-man {} s",
            cfg.robot,
            cfg.profile.name(),
            cfg.profile.gaits().join(", "),
            t.resolve("cmd_vel"),
            t.resolve("joy"),
            t.resolve("gait/command"),
            cfg.settings.timeout_s
        ),
    );
    let period = Duration::from_secs_f64(1.0 / cfg.rate_hz);
    let full = cfg.settings.full;
    let mut throttle = Throttle::new(5.0);
    let mut dropped = 0u64;
    let mut logged: Option<GaitRequest> = None;
    while !stop.load(Ordering::Relaxed) {
        super::warn_next_start(t, &mut throttle);
        let now = t.now();
        let mut out = Vec::new();
        let mut refused = |t: &T, throttle: &mut Throttle, key: &'static str, what: String| {
            dropped += 1;
            throttle.log(t, key, Level::Warn, &format!("{what} ({dropped} dropped so far)"));
        };
        while let Some(m) = twist_sub.take() {
            let tw = match m {
                Ok(tw) => tw,
                Err(e) => {
                    refused(
                        &*t,
                        &mut throttle,
                        "undecodable",
                        format!("undecodable cmd_vel dropped: {e}"),
                    );
                    continue;
                }
            };
            let (l, a) = (&tw.linear, &tw.angular);
            match TeleopInput::from_twist([l.x, l.y, l.z], [a.x, a.y, a.z]).and_then(|i| teleop.input(now, i)) {
                Ok(r) => out.extend(r),
                Err(e) => refused(&*t, &mut throttle, "cmd_vel", format!("cmd_vel refused: {e}")),
            }
        }
        while let Some(m) = joy_sub.take() {
            let joy = match m {
                Ok(j) => j,
                Err(e) => {
                    refused(
                        &*t,
                        &mut throttle,
                        "undecodable",
                        format!("undecodable joy dropped: {e}"),
                    );
                    continue;
                }
            };
            match cfg
                .joy
                .input(&joy.axes, &joy.buttons, &full)
                .and_then(|i| teleop.input(now, i))
            {
                Ok(r) => out.extend(r),
                Err(e) => refused(&*t, &mut throttle, "joy", format!("joy refused: {e}")),
            }
        }
        if let Some(r) = teleop.tick(now) {
            if r.stop && teleop.timed_out() {
                let msg = format!("no cmd_vel or joy for {} s: stop", cfg.settings.timeout_s);
                throttle.log(t, "deadman", Level::Info, &msg);
            }
            out.push(r);
        }
        for r in out {
            // A change is news (one line per 5 s at most); a heartbeat is not.
            if logged.as_ref() != Some(&r) {
                throttle.log(t, "command", Level::Info, &format!("gait command: {}", describe(&r)));
                logged = Some(r.clone());
            }
            if let Err(e) = cmd_pub.publish(gait_command(&r)) {
                throttle.log(t, "publish", Level::Warn, &e.to_string());
            }
        }
        std::thread::sleep(period);
    }
    if let Some(r) = teleop.release(t.now()) {
        if let Err(e) = cmd_pub.publish(gait_command(&r)) {
            t.log(Level::Warn, &e.to_string());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::resolve;

    #[test]
    fn parameters_pick_the_profile_and_bad_ones_are_named() {
        let (_, cfg) = resolve::<TeleopNodeConfig>(&[], &[]).expect("defaults");
        assert_eq!(cfg.profile, TeleopProfile::Caterpillar, "the default robot pp:8");
        assert_eq!(cfg.settings.full, TeleopProfile::Caterpillar.full_scale());
        assert_eq!(cfg.joy, JoyMap::default());
        let with = |k: &str, v: ParamValue| resolve::<TeleopNodeConfig>(&[], &[(k.into(), v)]);
        let (_, cfg) = with("robot", ParamValue::Str("quadruped".into())).expect("quadruped");
        assert_eq!(cfg.profile, TeleopProfile::Quadruped);
        let (_, cfg) = with("full_scale.angular_rad_s", ParamValue::Double(1.5)).expect("full scale");
        assert_eq!(cfg.settings.full.angular_rad_s, 1.5);
        let (_, cfg) = with("joy.enable_button", ParamValue::Int(-1)).expect("no enable button");
        assert_eq!(cfg.joy.enable_button, None);
        for (k, v, want) in [
            ("robot", ParamValue::Str("wheelfoot".into()), "inchworm"),
            ("robot", ParamValue::Str("hexapod".into()), "`robot` = `hexapod`"),
            ("timeout_s", ParamValue::Double(0.0), "timeout_s"),
            ("max_turn_deg", ParamValue::Double(120.0), "max_turn_deg"),
            ("max_speed_scale", ParamValue::Double(9.0), "max_speed_scale"),
            ("joy.deadzone", ParamValue::Double(1.0), "joy.deadzone"),
            ("joy.scale_linear_y", ParamValue::Double(-3.0), "joy.scale_linear_y"),
            ("joy.axis_angular_z", ParamValue::Int(-2), "joy.axis_angular_z"),
            (
                "full_scale.linear_m_s",
                ParamValue::Double(-1.0),
                "full_scale.linear_m_s",
            ),
        ] {
            let e = with(k, v).expect_err(k).to_string();
            assert!(e.contains(want), "{k}: {e}");
        }
    }

    #[test]
    fn a_request_goes_on_the_wire_as_gait_node_reads_it() {
        let r = GaitRequest {
            stop: false,
            gait: "turning".into(),
            params: vec![("offset_h_deg".into(), -7.5)],
            speed_scale: 1.2,
            direction: -1,
            transition_s: -1.0,
        };
        let c = gait_command(&r);
        assert_eq!(
            (c.param_names.clone(), c.param_values.clone(), c.direction),
            (vec!["offset_h_deg".to_string()], vec![-7.5], -1)
        );
        assert_eq!(crate::convert::gait_request(&c), Ok(r));
        assert_eq!(
            gait_command(&modbot_app::teleop::stop_request()),
            GaitCommand {
                stop: true,
                ..GaitCommand::default()
            }
        );
    }
}
