//! `executive_node`: the reactive layer on the ROS graph. It executes `strategic_plan`
//! (modbot_msgs/StrategicPlan) row by row with the planner's sequencer against `odom`, and
//! drives the robot by sending `gait/command` (modbot_msgs/GaitCommand) to gait_node.
//!
//! Position control per configuration (decision record 0016): a chain whose gait moves
//! along its body axis only (`caterpillar`) drives forward or in reverse towards the
//! sub-goal's projection on its axis; a pitch-yaw chain (`straight`, `turning`,
//! `sidewinding` in the capability table) steers with the `turning` gait, its yaw offset
//! O_h proportional to the bearing error, in 5° steps, and runs `straight` when aligned.
//! A row that asks for another configuration or an ability this robot does not have is
//! reported and the robot holds; a row that is blocked or times out makes the executive
//! stop and re-send the plan's final goal on `goal_pose`, so planner_node replans from where
//! the robot is. Progress is published on `executive/status` (std_msgs/String).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use modbot_msgs::builtin_interfaces::msg::Time;
use modbot_msgs::geometry_msgs::msg::{Pose, PoseStamped};
use modbot_msgs::modbot_msgs::msg::{GaitCommand, StrategicPlan, SubGoal};
use modbot_msgs::nav_msgs::msg::Odometry;
use modbot_msgs::std_msgs::msg::{Header, String as StringMsg};
use modbot_planner::capabilities::Capabilities;
use modbot_planner::sequencer::{Command, Pose2, Sequencer, SequencerSettings, Tick};
use modbot_planner::strategic::{self, Action};

use crate::error::{Result, RosError};
use crate::params::{Get, NodeConfig, ParamDecl, ParamMap, ParamValue};
use crate::transport::{Level, Pub, Qos, Sub, Transport};

/// How the robot is steered to a sub-goal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Controller {
    /// Forward or reverse along the body axis (caterpillar).
    Axial,
    /// `turning` with O_h from the bearing error, `straight` when aligned (pitch-yaw chain).
    Steer,
}

/// The node's parameters, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecutiveNodeConfig {
    /// The configuration this robot is (a key of the capability table).
    pub configuration: String,
    /// Capability table ("" = shipped).
    pub capabilities: String,
    /// Position controller.
    pub controller: Controller,
    /// Position tolerance, m.
    pub position_tolerance_m: f64,
    /// Heading tolerance for aligning rows, deg.
    pub yaw_tolerance_deg: f64,
    /// Time allowed per row, s.
    pub row_timeout_s: f64,
    /// Largest yaw offset O_h the steering uses, deg.
    pub max_turn_deg: f64,
    /// O_h per degree of bearing error.
    pub turn_gain: f64,
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
            ParamDecl {
                name: "configuration",
                default: ParamValue::Str("snake".into()),
                description: "this robot's configuration",
            },
            ParamDecl {
                name: "capabilities",
                default: ParamValue::Str(String::new()),
                description: "capability table (empty: shipped)",
            },
            ParamDecl {
                name: "controller",
                default: ParamValue::Str("auto".into()),
                description: "auto, axial or steer",
            },
            ParamDecl {
                name: "position_tolerance_m",
                default: d(0.1),
                description: "sub-goal position tolerance, m",
            },
            ParamDecl {
                name: "yaw_tolerance_deg",
                default: d(1.0),
                description: "sub-goal heading tolerance, deg",
            },
            ParamDecl {
                name: "row_timeout_s",
                default: d(600.0),
                description: "time per row before a replan, s",
            },
            ParamDecl {
                name: "max_turn_deg",
                default: d(20.0),
                description: "largest turning offset O_h, deg",
            },
            ParamDecl {
                name: "turn_gain",
                default: d(0.5),
                description: "O_h per degree of bearing error",
            },
            ParamDecl {
                name: "rate_hz",
                default: d(10.0),
                description: "control updates per second",
            },
            ParamDecl {
                name: "heartbeat_s",
                default: d(1.0),
                description: "re-send the running command, s",
            },
            ParamDecl {
                name: "pose_window_s",
                default: d(2.0),
                description: "odometry averaged, and a gait held at least, over this window (one gait cycle), s; 0 = raw",
            },
        ]
    }

    fn from_params(p: &ParamMap) -> std::result::Result<Self, String> {
        let g = Get(p);
        let capabilities = g.str("capabilities")?;
        let caps = load_caps(&capabilities)?;
        let configuration = g.str("configuration")?;
        let cap = caps
            .configurations
            .get(&configuration)
            .ok_or_else(|| format!("configuration `{configuration}` is not in the capability table"))?;
        let controller = match g.str("controller")?.as_str() {
            "axial" => Controller::Axial,
            "steer" => Controller::Steer,
            "auto" => match cap.gait.as_str() {
                "caterpillar" => Controller::Axial,
                "straight" | "turning" | "sidewinding" => Controller::Steer,
                other => {
                    return Err(format!(
                        "configuration `{configuration}` drives with `{other}`, which modbot's gait library does not have yet; \
                         no position controller for it"
                    ));
                }
            },
            other => {
                return Err(format!(
                    "parameter `controller` = `{other}`: expected auto, axial or steer"
                ));
            }
        };
        Ok(ExecutiveNodeConfig {
            configuration,
            capabilities,
            controller,
            position_tolerance_m: g.f64_in("position_tolerance_m", 0.001, 10.0)?,
            yaw_tolerance_deg: g.f64_in("yaw_tolerance_deg", 0.01, 180.0)?,
            row_timeout_s: g.f64_in("row_timeout_s", 1.0, 86400.0)?,
            max_turn_deg: g.f64_in("max_turn_deg", 0.0, 45.0)?,
            turn_gain: g.f64_in("turn_gain", 0.0, 10.0)?,
            rate_hz: g.f64_in("rate_hz", 0.5, 200.0)?,
            heartbeat_s: g.f64_in("heartbeat_s", 0.05, 60.0)?,
            pose_window_s: g.f64_in("pose_window_s", 0.0, 60.0)?,
        })
    }
}

fn load_caps(path: &str) -> std::result::Result<Capabilities, String> {
    if path.is_empty() {
        Ok(Capabilities::builtin())
    } else {
        Capabilities::load(std::path::Path::new(path)).map_err(|e| e.to_string())
    }
}

/// The pose of an undulating body averaged over a time window: mean position and circular
/// mean heading. The tail module of a snake (its base_link) wags with the gait, so its raw
/// yaw swings by tens of degrees within a cycle; steering on it switched O_h, and so
/// restarted the gait, every few hundred milliseconds (decision record 0018).
#[derive(Debug, Clone, Default)]
pub struct PoseFilter {
    window_s: f64,
    samples: std::collections::VecDeque<(f64, Pose2)>,
}

impl PoseFilter {
    /// A filter over `window_s` seconds (0 passes poses through).
    pub fn new(window_s: f64) -> PoseFilter {
        PoseFilter {
            window_s,
            samples: Default::default(),
        }
    }

    /// Adds the pose at time `now` (s) and returns the window's mean.
    pub fn push(&mut self, now: f64, pose: Pose2) -> Pose2 {
        // A clock going back (a restarted simulation) starts the window afresh.
        if self.samples.back().is_some_and(|(t, _)| *t > now) {
            self.samples.clear();
        }
        self.samples.push_back((now, pose));
        while self.samples.front().is_some_and(|(t, _)| *t < now - self.window_s) {
            self.samples.pop_front();
        }
        let n = self.samples.len() as f64;
        let (mut x, mut y, mut c, mut s) = (0.0, 0.0, 0.0, 0.0);
        for (_, p) in &self.samples {
            x += p.x;
            y += p.y;
            c += p.yaw.cos();
            s += p.yaw.sin();
        }
        Pose2 {
            x: x / n,
            y: y / n,
            yaw: if c == 0.0 && s == 0.0 { pose.yaw } else { s.atan2(c) },
        }
    }
}

fn yaw_of(p: &Pose) -> f64 {
    let q = &p.orientation;
    (2.0 * (q.w * q.z + q.x * q.y)).atan2(1.0 - 2.0 * (q.y * q.y + q.z * q.z))
}

fn wrap(a: f64) -> f64 {
    (a + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI
}

/// What the executive wants gait_node to run.
#[derive(Debug, Clone, PartialEq)]
pub enum Drive {
    /// Hold the pose.
    Stop,
    /// A gait with parameters and direction.
    Gait {
        /// Gait name.
        gait: String,
        /// Parameters.
        params: Vec<(String, f64)>,
        /// GaitCommand direction.
        direction: i8,
    },
}

impl Drive {
    /// The GaitCommand for it.
    pub fn command(&self) -> GaitCommand {
        match self {
            Drive::Stop => GaitCommand {
                stop: true,
                ..Default::default()
            },
            Drive::Gait {
                gait,
                params,
                direction,
            } => GaitCommand {
                gait: gait.clone(),
                param_names: params.iter().map(|p| p.0.clone()).collect(),
                param_values: params.iter().map(|p| p.1).collect(),
                direction: *direction,
                ..Default::default()
            },
        }
    }
}

/// The node's logic without middleware.
pub struct ExecutiveCore {
    cfg: ExecutiveNodeConfig,
    gait: String,
    seq: Option<Sequencer>,
    goal: Option<[f64; 2]>,
    rows: usize,
    /// Human-readable state.
    pub status: String,
}

impl ExecutiveCore {
    /// An executive with no plan.
    pub fn new(cfg: &ExecutiveNodeConfig) -> std::result::Result<ExecutiveCore, String> {
        let caps = load_caps(&cfg.capabilities)?;
        let gait = caps
            .configurations
            .get(&cfg.configuration)
            .map(|c| c.gait.clone())
            .ok_or_else(|| format!("configuration `{}` is not in the capability table", cfg.configuration))?;
        Ok(ExecutiveCore {
            cfg: cfg.clone(),
            gait,
            seq: None,
            goal: None,
            rows: 0,
            status: "waiting for a plan".into(),
        })
    }

    /// Takes a new plan (replacing any running one).
    pub fn set_plan(&mut self, m: &StrategicPlan) -> std::result::Result<(), String> {
        let mut rows = Vec::with_capacity(m.rows.len());
        let mut refs = BTreeMap::new();
        for (i, r) in m.rows.iter().enumerate() {
            let t = &r.target;
            if ![t.position.x, t.position.y, t.orientation.z, t.orientation.w]
                .iter()
                .all(|v| v.is_finite())
            {
                return Err(format!("row {}: target is not finite", i + 1));
            }
            let action = match r.action {
                SubGoal::ACTION_DRIVE => Action::Drive,
                SubGoal::ACTION_PASS_OVER => Action::PassOver,
                SubGoal::ACTION_PASS_UNDER => Action::PassUnder,
                a => return Err(format!("row {}: unknown action {a}", i + 1)),
            };
            // Each row refers to its own target, so the sequencer needs no scenario.
            let name = format!("row{i}");
            refs.insert(
                name.clone(),
                Pose2 {
                    x: t.position.x,
                    y: t.position.y,
                    yaw: yaw_of(t),
                },
            );
            rows.push(strategic::SubGoal {
                configuration: r.configuration.clone(),
                reference: name,
                lateral_m: 0.0,
                longitudinal_m: 0.0,
                yaw_deg: 0.0,
                ability: r.ability,
                action,
                gait: r.gait.clone(),
                path: r.path.iter().map(|p| [p.x, p.y]).collect(),
            });
        }
        self.goal = m.rows.last().map(|r| [r.target.position.x, r.target.position.y]);
        self.rows = rows.len();
        let settings = SequencerSettings {
            position_m: self.cfg.position_tolerance_m,
            yaw_rad: self.cfg.yaw_tolerance_deg.to_radians(),
            row_timeout_s: self.cfg.row_timeout_s,
        };
        self.seq = Some(Sequencer::new(strategic::StrategicPlan { rows }, refs, settings));
        self.status = format!("plan of {} rows", self.rows);
        Ok(())
    }

    /// The plan's final goal.
    pub fn goal(&self) -> Option<[f64; 2]> {
        self.goal
    }

    fn drive_to(&self, pose: Pose2, target: Pose2) -> Drive {
        let (dx, dy) = (target.x - pose.x, target.y - pose.y);
        match self.cfg.controller {
            Controller::Axial => {
                let along = pose.yaw.cos() * dx + pose.yaw.sin() * dy;
                Drive::Gait {
                    gait: self.gait.clone(),
                    params: Vec::new(),
                    direction: if along >= 0.0 {
                        GaitCommand::DIRECTION_FORWARD
                    } else {
                        GaitCommand::DIRECTION_REVERSE
                    },
                }
            }
            Controller::Steer => {
                let err = wrap(dy.atan2(dx) - pose.yaw).to_degrees();
                // Positive O_h turns left (positive yaw), decision record 0002.
                let o_h = (self.cfg.turn_gain * err).clamp(-self.cfg.max_turn_deg, self.cfg.max_turn_deg);
                let o_h = (o_h / 5.0).round() * 5.0;
                if o_h == 0.0 {
                    Drive::Gait {
                        gait: "straight".into(),
                        params: Vec::new(),
                        direction: GaitCommand::DIRECTION_AS_GIVEN,
                    }
                } else {
                    Drive::Gait {
                        gait: "turning".into(),
                        params: vec![("O_h".into(), o_h)],
                        direction: GaitCommand::DIRECTION_AS_GIVEN,
                    }
                }
            }
        }
    }

    /// One control step: what to drive, and whether to ask for a replan.
    pub fn step(&mut self, now: f64, pose: Pose2) -> (Drive, bool) {
        let Some(seq) = self.seq.as_mut() else {
            return (Drive::Stop, false);
        };
        let tick = seq.tick(now, pose, &self.cfg.configuration, false);
        match tick {
            Tick::Done => {
                self.status = format!("done: {} rows", self.rows);
                self.seq = None;
                (Drive::Stop, false)
            }
            Tick::Reached(n) => {
                self.status = format!("reached row {}/{}", n + 1, self.rows);
                (Drive::Stop, false)
            }
            Tick::Replan { row, reason } => {
                self.status = format!("row {}/{}: {reason}; replanning", row + 1, self.rows);
                self.seq = None;
                (Drive::Stop, true)
            }
            Tick::Command(Command::Reconfigure(to)) => {
                self.status = format!(
                    "row {}/{}: needs configuration `{to}`, but this robot is `{}` and cannot reassemble itself",
                    seq.row() + 1,
                    self.rows,
                    self.cfg.configuration
                );
                (Drive::Stop, false)
            }
            Tick::Command(Command::Ability(a, _)) => {
                self.status = format!(
                    "row {}/{}: ability {a:?} is not available to `{}`",
                    seq.row() + 1,
                    self.rows,
                    self.cfg.configuration
                );
                (Drive::Stop, false)
            }
            Tick::Command(Command::Drive(target)) => {
                let row = seq.row();
                self.status = format!(
                    "row {}/{}: driving to ({:.2}, {:.2})",
                    row + 1,
                    self.rows,
                    target.x,
                    target.y
                );
                (self.drive_to(pose, target), false)
            }
        }
    }
}

/// Runs executive_node until `stop` is set.
pub fn run<T: Transport>(t: &mut T, cfg: ExecutiveNodeConfig, stop: Arc<AtomicBool>) -> Result<()> {
    let mut core = ExecutiveCore::new(&cfg).map_err(RosError::Params)?;
    let plan_sub = t.subscription::<StrategicPlan>("strategic_plan", Qos::Latched)?;
    let odom_sub = t.subscription::<Odometry>("odom", Qos::SensorData)?;
    let cmd_pub = t.publisher::<GaitCommand>("gait/command", Qos::Reliable)?;
    let goal_pub = t.publisher::<PoseStamped>("goal_pose", Qos::Reliable)?;
    let status_pub = t.publisher::<StringMsg>("executive/status", Qos::Reliable)?;
    t.log(
        Level::Info,
        &format!(
            "executing plans as `{}` ({:?} control)",
            cfg.configuration, cfg.controller
        ),
    );
    let period = Duration::from_secs_f64(1.0 / cfg.rate_hz);
    let mut pose: Option<Pose2> = None;
    let mut filter = PoseFilter::new(cfg.pose_window_s);
    let mut last_drive: Option<Drive> = None;
    let mut last_sent = f64::NEG_INFINITY;
    let mut last_change = f64::NEG_INFINITY;
    let mut last_status = String::new();
    while !stop.load(Ordering::Relaxed) {
        while let Some(p) = plan_sub.take() {
            match p.and_then(|p| core.set_plan(&p)) {
                Ok(()) => t.log(Level::Info, &core.status),
                Err(e) => t.log(Level::Warn, &format!("plan refused: {e}")),
            }
        }
        while let Some(o) = odom_sub.take() {
            if let Ok(o) = o {
                let p = &o.pose.pose;
                let y = yaw_of(p);
                if p.position.x.is_finite() && p.position.y.is_finite() && y.is_finite() {
                    let raw = Pose2 {
                        x: p.position.x,
                        y: p.position.y,
                        yaw: y,
                    };
                    pose = Some(filter.push(t.now(), raw));
                }
            }
        }
        let now = t.now();
        if let Some(p) = pose {
            let (mut drive, replan) = core.step(now, p);
            // A new gait or new gait parameters restart the gait's phase in gait_node, so a
            // running gait is held for one averaging window (a gait cycle) before it is
            // changed for another; stopping is never delayed.
            if let (Some(prev @ Drive::Gait { .. }), Drive::Gait { .. }) = (&last_drive, &drive)
                && *prev != drive
                && now - last_change < cfg.pose_window_s
            {
                drive = prev.clone();
            }
            if last_drive.as_ref() != Some(&drive) {
                last_change = now;
            }
            if last_drive.as_ref() != Some(&drive) || now - last_sent >= cfg.heartbeat_s {
                if let Err(e) = cmd_pub.publish(drive.command()) {
                    t.log(Level::Warn, &e.to_string());
                }
                last_drive = Some(drive);
                last_sent = now;
            }
            if replan && let Some(g) = core.goal() {
                let msg = PoseStamped {
                    header: Header {
                        stamp: Time::from_secs_f64(now),
                        frame_id: "map".into(),
                    },
                    pose: Pose {
                        position: modbot_msgs::geometry_msgs::msg::Point {
                            x: g[0],
                            y: g[1],
                            z: 0.0,
                        },
                        ..Default::default()
                    },
                };
                if let Err(e) = goal_pub.publish(msg) {
                    t.log(Level::Warn, &e.to_string());
                }
            }
        }
        if core.status != last_status {
            last_status = core.status.clone();
            t.log(Level::Info, &last_status);
            let _ = status_pub.publish(StringMsg {
                data: last_status.clone(),
            });
        }
        std::thread::sleep(period);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{defaults, resolve};
    use modbot_msgs::geometry_msgs::msg::{Point, Quaternion};

    fn plan(rows: &[(&str, [f64; 2], u8)]) -> StrategicPlan {
        StrategicPlan {
            rows: rows
                .iter()
                .map(|(c, xy, a)| SubGoal {
                    configuration: (*c).into(),
                    reference: "target".into(),
                    action: *a,
                    ability: *a != SubGoal::ACTION_DRIVE,
                    target: Pose {
                        position: Point {
                            x: xy[0],
                            y: xy[1],
                            z: 0.0,
                        },
                        orientation: Quaternion::default(),
                    },
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    fn at(x: f64, y: f64, yaw: f64) -> Pose2 {
        Pose2 { x, y, yaw }
    }

    /// The wagging tail's heading averages out over a cycle; the window slides.
    #[test]
    fn pose_filter_averages_the_wag_out() {
        let mut f = PoseFilter::new(2.0);
        let mut out = at(0.0, 0.0, 0.0);
        for k in 0..400 {
            let t = k as f64 * 0.01;
            let wag = 30f64.to_radians() * (std::f64::consts::PI * t).sin();
            out = f.push(t, at(0.01 * t, 0.0, 10f64.to_radians() + wag));
        }
        assert!((out.yaw.to_degrees() - 10.0).abs() < 1.0, "{}", out.yaw.to_degrees());
        // Mean position over the last 2 s: x(t) = 0.01 t on [2, 4] s.
        assert!((out.x - 0.03).abs() < 1e-3, "{}", out.x);
        // Headings near ±180° average to 180°, not 0°.
        let mut f = PoseFilter::new(1.0);
        f.push(0.0, at(0.0, 0.0, 179f64.to_radians()));
        let p = f.push(0.5, at(0.0, 0.0, -179f64.to_radians()));
        assert!(p.yaw.abs() > 179f64.to_radians(), "{}", p.yaw);
        // A window of 0 passes poses through; a clock going back starts afresh.
        let mut f = PoseFilter::new(0.0);
        f.push(1.0, at(1.0, 0.0, 0.0));
        assert_eq!(f.push(2.0, at(2.0, 0.0, 0.5)), at(2.0, 0.0, 0.5));
        assert_eq!(f.push(0.5, at(3.0, 0.0, 0.2)), at(3.0, 0.0, 0.2));
    }

    #[test]
    fn a_snake_steers_towards_its_sub_goals_and_finishes() {
        let cfg = ExecutiveNodeConfig::from_params(&defaults::<ExecutiveNodeConfig>()).expect("defaults");
        assert_eq!(cfg.controller, Controller::Steer);
        let mut ex = ExecutiveCore::new(&cfg).expect("core");
        assert_eq!(ex.step(0.0, at(0.0, 0.0, 0.0)).0, Drive::Stop);
        ex.set_plan(&plan(&[("snake", [1.0, 0.0], 0), ("snake", [1.0, 1.0], 0)]))
            .expect("plan");
        let (d, _) = ex.step(0.0, at(0.0, 0.0, 0.0));
        assert_eq!(d.command().gait, "straight");
        // Target to the left: turn left (positive O_h), capped.
        let (d, _) = ex.step(1.0, at(0.0, 0.0, -1.0));
        let c = d.command();
        assert_eq!(c.gait, "turning");
        assert_eq!(c.param_values, vec![20.0]);
        assert_eq!(ex.step(2.0, at(0.95, 0.0, 0.0)).0, Drive::Stop); // row 1 reached
        let (d, _) = ex.step(3.0, at(0.95, 0.0, 0.0));
        assert_eq!(d.command().param_values, vec![20.0], "second row is 90° to the left");
        ex.step(4.0, at(1.0, 0.95, 1.5));
        assert_eq!(ex.step(5.0, at(1.0, 0.95, 1.5)).0, Drive::Stop);
        assert!(ex.status.starts_with("done"), "{}", ex.status);
    }

    #[test]
    fn a_caterpillar_drives_along_its_axis_and_what_it_cannot_do_is_reported() {
        let (_, cfg) =
            resolve::<ExecutiveNodeConfig>(&[], &[("configuration".into(), ParamValue::Str("caterpillar".into()))])
                .expect("config");
        assert_eq!(cfg.controller, Controller::Axial);
        let mut ex = ExecutiveCore::new(&cfg).expect("core");
        ex.set_plan(&plan(&[("caterpillar", [-1.0, 0.0], 0)])).expect("plan");
        let c = ex.step(0.0, at(0.0, 0.0, 0.0)).0.command();
        assert_eq!(
            (c.gait.as_str(), c.direction),
            ("caterpillar", GaitCommand::DIRECTION_REVERSE)
        );
        ex.set_plan(&plan(&[("quadruped", [1.0, 0.0], 0)])).expect("plan");
        assert_eq!(ex.step(0.0, at(0.0, 0.0, 0.0)).0, Drive::Stop);
        assert!(ex.status.contains("cannot reassemble"), "{}", ex.status);
        ex.set_plan(&plan(&[("caterpillar", [1.0, 0.0], SubGoal::ACTION_PASS_OVER)]))
            .expect("plan");
        ex.step(0.0, at(0.0, 0.0, 0.0));
        assert!(ex.status.contains("PassOver"), "{}", ex.status);
        // Timeout → replan.
        ex.set_plan(&plan(&[("caterpillar", [1.0, 0.0], 0)])).expect("plan");
        ex.step(0.0, at(0.0, 0.0, 0.0));
        let (d, replan) = ex.step(10_000.0, at(0.0, 0.0, 0.0));
        assert!(replan && d == Drive::Stop, "{}", ex.status);
        assert_eq!(ex.goal(), Some([1.0, 0.0]));
    }

    #[test]
    fn bad_plans_and_parameters_are_refused() {
        let cfg = ExecutiveNodeConfig::from_params(&defaults::<ExecutiveNodeConfig>()).expect("defaults");
        let mut ex = ExecutiveCore::new(&cfg).expect("core");
        let mut p = plan(&[("snake", [f64::NAN, 0.0], 0)]);
        assert!(ex.set_plan(&p).unwrap_err().contains("row 1"));
        p = plan(&[("snake", [1.0, 0.0], 9)]);
        assert!(ex.set_plan(&p).unwrap_err().contains("action 9"));
        let e = resolve::<ExecutiveNodeConfig>(&[], &[("configuration".into(), ParamValue::Str("wheeled".into()))])
            .unwrap_err()
            .to_string();
        assert!(e.contains("skid_steer"), "{e}");
    }
}
