//! `executive_node`: the reactive layer on the ROS graph. It executes `strategic_plan`
//! (modbot_msgs/StrategicPlan) against the body's pose (`odom` with `joint_states` through
//! the robot's kinematics, decision record 0033; or `odom` alone) with modbot_planner's [`Executive`] (the
//! sequencer, the pose filter, the steering law per configuration and the gait hold; see
//! decision record 0016) and drives the robot by sending `gait/command`
//! (modbot_msgs/GaitCommand) to gait_node. A row that is blocked or times out makes it
//! stop and re-send the plan's final goal on `goal_pose`, so planner_node replans from
//! where the robot is. Progress is published on `executive/status` (std_msgs/String).
//! This file holds the parameters, message conversion (`crate::convert`) and wiring.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use modbot_app::Observed;
use modbot_app::navigate::BodyFrame;
use modbot_msgs::builtin_interfaces::msg::Time;
use modbot_msgs::geometry_msgs::msg::PoseStamped;
use modbot_msgs::modbot_msgs::msg::{GaitCommand, StrategicPlan};
use modbot_msgs::nav_msgs::msg::Odometry;
use modbot_msgs::sensor_msgs::msg::JointState;
use modbot_msgs::std_msgs::msg::{Header, String as StringMsg};
use modbot_planner::executive::{Controller, Executive, ExecutiveSettings, TurnModel};
use modbot_planner::sequencer::{Pose2, SequencerSettings};

use crate::convert::{gait_command, isometry, odom_pose, pose_msg, target_rows};
use crate::error::{Result, RosError};
use crate::params::{Get, NodeConfig, ParamDecl, ParamMap, ParamValue};
use crate::transport::{Level, Pub, Qos, Sub, Throttle, Transport};

/// The node's parameters, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecutiveNodeConfig {
    /// The configuration this robot is (a key of the capability table).
    pub configuration: String,
    /// Capability table ("" = shipped).
    pub capabilities: String,
    /// Position controller (`auto` resolved from the configuration's capability gait).
    pub controller: Controller,
    /// Position tolerance, m.
    pub position_tolerance_m: f64,
    /// Heading tolerance for aligning rows, deg.
    pub yaw_tolerance_deg: f64,
    /// Time allowed per row, s.
    pub row_timeout_s: f64,
    /// Largest yaw offset O_h the steering uses, deg.
    pub max_turn_deg: f64,
    /// The robot (a preset or robot file) whose turning model (5.1) pure pursuit uses.
    pub robot: String,
    /// Its turning model (the shipped default for an axial controller).
    pub turn: TurnModel,
    /// The robot's body when steering the body's pose (odom with joint_states); `None`
    /// steers base_link's (odom alone).
    pub body: Option<BodyFrame>,
    /// Control updates per second.
    pub rate_hz: f64,
    /// Re-send the running command this often, s (gait_node's watchdog heartbeat).
    pub heartbeat_s: f64,
    /// Odometry is averaged over this window before steering, and a running gait is held
    /// at least this long before another replaces it, s (0: raw, no hold).
    pub pose_window_s: f64,
}

impl NodeConfig for ExecutiveNodeConfig {
    fn declarations() -> Vec<ParamDecl> {
        let d = ParamValue::Double;
        vec![
            ParamDecl::new(
                "configuration",
                ParamValue::Str("snake".into()),
                "this robot's configuration",
            ),
            ParamDecl::new(
                "capabilities",
                ParamValue::Str(String::new()),
                "capability table (empty: shipped)",
            ),
            ParamDecl::new("controller", ParamValue::Str("auto".into()), "auto, axial or steer"),
            ParamDecl::new(
                "pose_reference",
                ParamValue::Str("body".into()),
                "steer the body (mean of the links from odom and joint_states) or base_link (odom alone)",
            ),
            ParamDecl::new("position_tolerance_m", d(0.1), "sub-goal position tolerance, m"),
            ParamDecl::new("yaw_tolerance_deg", d(1.0), "sub-goal heading tolerance, deg"),
            ParamDecl::new("row_timeout_s", d(600.0), "time per row before a replan, s"),
            ParamDecl::new("max_turn_deg", d(30.0), "largest turning offset O_h, deg"),
            ParamDecl::new(
                "robot",
                ParamValue::Str("py:8".into()),
                "the robot (preset or robot file) whose turning radius (5.1) pure pursuit uses",
            ),
            ParamDecl::new("rate_hz", d(10.0), "control updates per second"),
            ParamDecl::new("heartbeat_s", d(1.0), "re-send the running command, s"),
            ParamDecl::new(
                "pose_window_s",
                d(2.0),
                "odometry averaged, and a gait held at least, over this window (one gait cycle), s; 0 = raw",
            ),
        ]
    }

    fn from_params(p: &ParamMap) -> std::result::Result<Self, String> {
        let g = Get(p);
        let controller = match g.str("controller")?.as_str() {
            "auto" => None,
            "axial" => Some(Controller::Axial),
            "steer" => Some(Controller::Steer),
            other => {
                return Err(format!(
                    "parameter `controller` = `{other}`: expected auto, axial or steer"
                ));
            }
        };
        let mut cfg = ExecutiveNodeConfig {
            configuration: g.str("configuration")?,
            capabilities: g.str("capabilities")?,
            controller: controller.unwrap_or(Controller::Steer),
            position_tolerance_m: g.f64_in("position_tolerance_m", 0.001, 10.0)?,
            yaw_tolerance_deg: g.f64_in("yaw_tolerance_deg", 0.01, 180.0)?,
            row_timeout_s: g.f64_in("row_timeout_s", 1.0, 86400.0)?,
            max_turn_deg: g.f64_in("max_turn_deg", 0.0, 45.0)?,
            robot: g.str("robot")?,
            turn: TurnModel::default(),
            body: None,
            rate_hz: g.f64_in("rate_hz", 0.5, 200.0)?,
            heartbeat_s: g.f64_in("heartbeat_s", 0.05, 60.0)?,
            pose_window_s: g.f64_in("pose_window_s", 0.0, 60.0)?,
        };
        let mut settings = cfg.settings();
        settings.controller = controller;
        cfg.controller = cfg.executive(&settings)?.controller();
        let topology = modbot_app::load_catalog(None)
            .and_then(|c| modbot_app::load_robot(&cfg.robot, &c))
            .map_err(|e| format!("parameter `robot` = `{}`: {e}", cfg.robot))?;
        cfg.body = match g.str("pose_reference")?.as_str() {
            "body" => Some(BodyFrame::new(&topology)),
            "base_link" => None,
            other => {
                return Err(format!(
                    "parameter `pose_reference` = `{other}`: expected body or base_link"
                ));
            }
        };
        if cfg.controller == Controller::Steer {
            cfg.turn = modbot_app::navigate::turn_model(&topology, &modbot_gaits::GaitLibrary::builtin())
                .map_err(|e| format!("parameter `robot` = `{}`: {e}", cfg.robot))?;
        }
        Ok(cfg)
    }
}

impl ExecutiveNodeConfig {
    /// The executive's settings.
    pub fn settings(&self) -> ExecutiveSettings {
        ExecutiveSettings {
            configuration: self.configuration.clone(),
            controller: Some(self.controller),
            sequencer: SequencerSettings {
                position_m: self.position_tolerance_m,
                yaw_rad: self.yaw_tolerance_deg.to_radians(),
                row_timeout_s: self.row_timeout_s,
                goal_position_m: None,
                // The executive's robots turn as the source's do (no turn on the spot).
                pass_over_yaw_rad: None,
                pass_over_position_m: None,
            },
            max_turn_deg: self.max_turn_deg,
            turn: self.turn,
            heartbeat_s: self.heartbeat_s,
            pose_window_s: self.pose_window_s,
        }
    }

    fn executive(&self, settings: &ExecutiveSettings) -> std::result::Result<Executive, String> {
        let caps = super::capabilities(&self.capabilities)?;
        Executive::new(settings, &caps).map_err(|e| e.to_string())
    }
}

/// Runs executive_node until `stop` is set.
pub fn run<T: Transport>(t: &mut T, cfg: ExecutiveNodeConfig, stop: Arc<AtomicBool>) -> Result<()> {
    let mut ex = cfg.executive(&cfg.settings()).map_err(RosError::Params)?;
    let plan_sub = t.subscription::<StrategicPlan>("strategic_plan", Qos::Latched)?;
    let odom_sub = t.subscription::<Odometry>("odom", Qos::SensorData)?;
    // The body's pose needs the joint angles: the latest joint_states with each odom.
    let body = &cfg.body;
    let joints_sub = match body {
        Some(_) => Some(t.subscription::<JointState>("joint_states", Qos::SensorData)?),
        None => None,
    };
    let mut joints = body.as_ref().map(|b| Observed::new(b.joint_names().to_vec()));
    let cmd_pub = t.publisher::<GaitCommand>("gait/command", Qos::Reliable)?;
    let goal_pub = t.publisher::<PoseStamped>("goal_pose", Qos::Reliable)?;
    let status_pub = t.publisher::<StringMsg>("executive/status", Qos::Reliable)?;
    let what = format!("`{}` ({:?} control)", cfg.configuration, cfg.controller);
    t.log(Level::Info, &format!("executing plans as {what}"));
    let period = Duration::from_secs_f64(1.0 / cfg.rate_hz);
    let mut throttle = Throttle::new(5.0);
    while !stop.load(Ordering::Relaxed) {
        super::warn_next_start(t, &mut throttle);
        while let Some(p) = plan_sub.take() {
            let r = p.and_then(|p| target_rows(&p));
            match r.and_then(|rows| ex.set_plan(&rows).map_err(|e| e.to_string())) {
                Ok(()) => drop(throttle.log(t, "plan_ok", Level::Info, ex.status())),
                Err(e) => drop(throttle.log(t, "plan", Level::Warn, &format!("plan refused: {e}"))),
            }
        }
        if let (Some(sub), Some(seen)) = (&joints_sub, &mut joints) {
            while let Some(m) = sub.take() {
                if let Err(e) = m.and_then(|m| seen.joints(&m.name, &m.position, &m.velocity)) {
                    throttle.log(t, "joint_states", Level::Warn, &format!("joint_states dropped: {e}"));
                }
            }
        }
        while let Some(o) = odom_sub.take() {
            let pose = o.and_then(|o| match (body, &joints) {
                (Some(b), Some(seen)) if seen.joints_seen() => {
                    isometry(&o.pose.pose).and_then(|base| b.pose(&base, seen.positions()).map(Some))
                }
                (Some(_), _) => Ok(None), // no joint angles yet
                _ => Ok(Some(odom_pose(&o))),
            });
            match pose.map(|p| p.map(|p| ex.odometry(t.now(), p))) {
                Ok(Some(true) | None) => true,
                Ok(Some(false)) => throttle.log(t, "odom", Level::Warn, "odometry with a non-finite pose dropped"),
                Err(e) => throttle.log(t, "odom", Level::Warn, &format!("odometry dropped: {e}")),
            };
        }
        let now = t.now();
        let u = ex.update(now);
        let mut sent = Vec::new();
        if let Some(d) = u.send {
            sent.push(cmd_pub.publish(gait_command(&d)));
        }
        if let Some([x, y]) = u.replan_to {
            let header = Header {
                stamp: Time::from_secs_f64(now),
                frame_id: "map".into(),
            };
            let pose = pose_msg(Pose2 { x, y, yaw: 0.0 });
            sent.push(goal_pub.publish(PoseStamped { header, pose }));
        }
        if let Some(s) = u.status {
            // A change of status, at most one per control tick: the executive's narrative.
            t.log(Level::Info, &s);
            sent.push(status_pub.publish(StringMsg { data: s }));
        }
        for e in sent.into_iter().filter_map(std::result::Result::err) {
            throttle.log(t, "publish", Level::Warn, &e.to_string());
        }
        std::thread::sleep(period);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{defaults, resolve};

    #[test]
    fn parameters_pick_the_controller_and_bad_ones_are_named() {
        let cfg = ExecutiveNodeConfig::from_params(&defaults::<ExecutiveNodeConfig>()).expect("defaults");
        assert_eq!(cfg.controller, Controller::Steer);
        assert!(cfg.body.is_some());
        assert!(
            (cfg.turn.offset_per_curvature_m - 0.1407).abs() < 5e-4,
            "{:?}",
            cfg.turn
        );
        let with = |k: &str, v: &str| resolve::<ExecutiveNodeConfig>(&[], &[(k.into(), ParamValue::Str(v.into()))]);
        assert_eq!(
            with("configuration", "caterpillar").expect("cfg").1.controller,
            Controller::Axial
        );
        for (k, v, want) in [
            ("configuration", "wheeled", "skid_steer"),
            ("configuration", "hovercraft", "hovercraft"),
            ("controller", "joystick", "controller"),
            ("capabilities", "/nonexistent/caps.yaml", "/nonexistent/caps.yaml"),
            ("pose_reference", "odometer", "pose_reference"),
            ("robot", "hexapod", "`robot` = `hexapod`"),
            // A snake's pure pursuit needs a turning gait: a pitch-pitch chain has none.
            ("robot", "pp:8", "turning"),
        ] {
            let e = with(k, v).expect_err(k).to_string();
            assert!(e.contains(want), "{k}: {e}");
        }
        let (_, cfg) = resolve::<ExecutiveNodeConfig>(
            &[],
            &[
                ("configuration".into(), ParamValue::Str("wheeled".into())),
                ("controller".into(), ParamValue::Str("axial".into())),
            ],
        )
        .expect("an explicit controller serves any configuration");
        assert_eq!(cfg.settings().controller, Some(Controller::Axial));
    }
}
