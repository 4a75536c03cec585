//! `planner_node`: plans on a goal.
//!
//! Subscribes `map` (nav_msgs/OccupancyGrid, transient local, as map_server publishes it),
//! `goal_pose` (geometry_msgs/PoseStamped, what RViz's "2D Goal Pose" sends) and `odom`
//! (the start). With a `scenario` parameter it runs the deliberative planner (configuration
//! and ability per stretch) and publishes `strategic_plan` (modbot_msgs/StrategicPlan,
//! transient local), `plan` (nav_msgs/Path through every sub-goal) and `plan_markers`
//! (visualization_msgs/MarkerArray); with only a map it runs grid A* and publishes `plan`.
//! The `plan` service (modbot_msgs/srv/Plan) answers the same question on request.
//! A failed plan is logged with its typed reason (NoPath, OutOfBounds, ...) and, for the
//! service, returned; a malformed map is refused and the previous one kept. The planning
//! is modbot_planner's [`GoalPlanner`]; this file holds parameters, conversion
//! (`crate::convert`) and wiring.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use modbot_core::Scenario;
use modbot_msgs::builtin_interfaces::msg::Time;
use modbot_msgs::geometry_msgs::msg::PoseStamped;
use modbot_msgs::modbot_msgs::msg::StrategicPlan;
use modbot_msgs::modbot_msgs::srv::{Plan_Request, Plan_Response};
use modbot_msgs::nav_msgs::msg::{OccupancyGrid, Odometry, Path};
use modbot_msgs::std_msgs::msg::Header;
use modbot_msgs::visualization_msgs::msg::MarkerArray;
use modbot_planner::goal::{GoalPlanner, GoalSettings, Mode};
use modbot_planner::grid::Connectivity;

use crate::convert::{RouteMsgs, grid_map, route_msgs, xy};
use crate::error::{Result, RosError};
use crate::params::{Get, NodeConfig, ParamDecl, ParamMap, ParamValue};
use crate::transport::{Level, Pub, Qos, Server, Sub, Throttle, Transport};

/// The node's parameters, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannerNodeConfig {
    /// Scenario YAML for strategic plans ("" = grid A* on `map` only).
    pub scenario: String,
    /// Capability table ("" = the shipped one).
    pub capabilities: String,
    /// Configurations available to the strategic planner.
    pub available: Vec<String>,
    /// Configuration at the start.
    pub start_configuration: String,
    /// Strategic planner: `search` (time-optimal) or `source` (the source's template).
    pub mode: Mode,
    /// Cell size of the strategic search, m.
    pub resolution_m: f64,
    /// Occupancy at or above which a map cell is occupied (1–100).
    pub occupied_threshold: i64,
    /// Robot radius the map is inflated by, m.
    pub inflation_radius_m: f64,
    /// 8-connected grid A* (false: 4-connected).
    pub eight_connected: bool,
    /// Frame of published plans.
    pub frame_id: String,
}

impl NodeConfig for PlannerNodeConfig {
    fn declarations() -> Vec<ParamDecl> {
        let s = |x: &str| ParamValue::Str(x.into());
        vec![
            ParamDecl::new("scenario", s(""), "scenario YAML (empty: grid A* on map)"),
            ParamDecl::new("capabilities", s(""), "capability table YAML (empty: shipped)"),
            ParamDecl::new(
                "available",
                ParamValue::StrArray(vec!["single_module".into(), "quadruped".into(), "wheeled".into()]),
                "configurations available",
            ),
            ParamDecl::new("start_configuration", s("single_module"), "configuration at the start"),
            ParamDecl::new("mode", s("search"), "search or source"),
            ParamDecl::new("resolution_m", ParamValue::Double(0.05), "strategic search cell, m"),
            ParamDecl::new(
                "occupied_threshold",
                ParamValue::Int(65),
                "occupied at or above (0-100)",
            ),
            ParamDecl::new("inflation_radius_m", ParamValue::Double(0.0), "map inflation, m"),
            ParamDecl::new("eight_connected", ParamValue::Bool(true), "8-connected A*"),
            ParamDecl::new("frame_id", s("map"), "frame of published plans"),
        ]
    }

    fn from_params(p: &ParamMap) -> std::result::Result<Self, String> {
        let g = Get(p);
        let threshold = g.i64_in("occupied_threshold", 1, 100)?;
        let mode = g.str("mode")?;
        let cfg = PlannerNodeConfig {
            scenario: g.str("scenario")?,
            capabilities: g.str("capabilities")?,
            available: g.strs("available")?,
            start_configuration: g.str("start_configuration")?,
            mode: Mode::parse(&mode).ok_or(format!("parameter `mode` = `{mode}`: expected search or source"))?,
            resolution_m: g.f64_in("resolution_m", 0.005, 1.0)?,
            occupied_threshold: threshold,
            inflation_radius_m: g.f64_in("inflation_radius_m", 0.0, 10.0)?,
            eight_connected: g.bool("eight_connected")?,
            frame_id: g.str("frame_id")?,
        };
        cfg.planner()?;
        Ok(cfg)
    }
}

impl PlannerNodeConfig {
    /// The goal planner these parameters describe (scenario and capability table loaded).
    pub fn planner(&self) -> std::result::Result<GoalPlanner, String> {
        let scenario = if self.scenario.is_empty() {
            None
        } else {
            let path = std::path::Path::new(&self.scenario);
            Some(Scenario::load(path).map_err(|e| format!("scenario `{}`: {e}", self.scenario))?)
        };
        let settings = GoalSettings {
            mode: self.mode,
            available: self.available.clone(),
            start_configuration: self.start_configuration.clone(),
            resolution_m: self.resolution_m,
            inflation_radius_m: self.inflation_radius_m,
            connectivity: if self.eight_connected {
                Connectivity::Eight
            } else {
                Connectivity::Four
            },
        };
        let caps = super::capabilities(&self.capabilities)?;
        GoalPlanner::new(settings, caps, scenario).map_err(|e| e.to_string())
    }
}

/// The planner, its configuration and its log throttle: what the loop's handlers share.
struct Node {
    planner: GoalPlanner,
    cfg: PlannerNodeConfig,
    throttle: Throttle,
}

impl Node {
    /// Plans `goal` from `start` into messages stamped now; errors as text.
    fn plan<T: Transport>(
        &mut self,
        t: &T,
        start: Option<[f64; 2]>,
        goal: [f64; 2],
    ) -> std::result::Result<RouteMsgs, String> {
        let header = Header {
            stamp: Time::from_secs_f64(t.now()),
            frame_id: self.cfg.frame_id.clone(),
        };
        let route = self.planner.plan(start, goal).map_err(|e| e.to_string())?;
        Ok(route_msgs(&route, &header))
    }

    fn on_map<T: Transport>(&mut self, t: &T, m: std::result::Result<OccupancyGrid, String>) {
        match m.and_then(|m| grid_map(&m, self.cfg.occupied_threshold as i8)) {
            Ok(map) => {
                let msg = format!("map {} × {}", map.width, map.height);
                self.throttle.log(t, "map_ok", Level::Info, &msg);
                self.planner.set_map(map);
            }
            Err(e) => drop(self.throttle.log(t, "map", Level::Warn, &format!("map refused: {e}"))),
        }
    }
}

/// Runs planner_node until `stop` is set.
pub fn run<T: Transport>(t: &mut T, cfg: PlannerNodeConfig, stop: Arc<AtomicBool>) -> Result<()> {
    let planner = cfg.planner().map_err(RosError::Params)?;
    let map_sub = t.subscription::<OccupancyGrid>("map", Qos::Latched)?;
    let goal_sub = t.subscription::<PoseStamped>("goal_pose", Qos::Reliable)?;
    let odom_sub = t.subscription::<Odometry>("odom", Qos::SensorData)?;
    let path_pub = t.publisher::<Path>("plan", Qos::Reliable)?;
    let strategic_pub = t.publisher::<StrategicPlan>("strategic_plan", Qos::Latched)?;
    let marker_pub = t.publisher::<MarkerArray>("plan_markers", Qos::Reliable)?;
    let server = t.server::<Plan_Request, Plan_Response>("plan", "modbot_msgs", "Plan")?;
    let on = if cfg.scenario.is_empty() {
        "on the map with A*".to_string()
    } else {
        format!("with scenario {}", cfg.scenario)
    };
    let goals = t.resolve("goal_pose");
    t.log(
        Level::Info,
        &format!("planning {on} (mode {:?}); goals on {goals}", cfg.mode),
    );
    let mut n = Node {
        planner,
        cfg,
        throttle: Throttle::new(5.0),
    };
    while !stop.load(Ordering::Relaxed) {
        super::warn_next_start(t, &mut n.throttle);
        while let Some(m) = map_sub.take() {
            n.on_map(t, m);
        }
        while let Some(o) = odom_sub.take() {
            match o.map(|o| n.planner.set_start([o.pose.pose.position.x, o.pose.pose.position.y])) {
                Ok(true) => true,
                Ok(false) => n
                    .throttle
                    .log(t, "odom", Level::Warn, "odometry with a non-finite position dropped"),
                Err(e) => n
                    .throttle
                    .log(t, "odom", Level::Warn, &format!("undecodable odometry dropped: {e}")),
            };
        }
        while let Some(g) = goal_sub.take() {
            let goal = match g.map(|g| xy(&g)) {
                Ok(g) if g.iter().all(|v| v.is_finite()) => g,
                bad => {
                    let why = match bad {
                        Ok(g) => format!("goal {g:?} is not finite: dropped"),
                        Err(e) => format!("undecodable goal dropped: {e}"),
                    };
                    n.throttle.log(t, "goal", Level::Warn, &why);
                    continue;
                }
            };
            let to = format!("({:.2}, {:.2})", goal[0], goal[1]);
            match n.plan(t, None, goal) {
                Ok(out) => {
                    let (poses, rows) = (out.path.poses.len(), out.strategic.rows.len());
                    let msg = format!("plan to {to}: {poses} poses, {rows} sub-goals");
                    n.throttle.log(t, "planned", Level::Info, &msg);
                    let mut sent = vec![path_pub.publish(out.path)];
                    if n.planner.is_strategic() {
                        sent.push(strategic_pub.publish(out.strategic));
                        sent.push(marker_pub.publish(out.markers));
                    }
                    for e in sent.into_iter().filter_map(std::result::Result::err) {
                        n.throttle.log(t, "publish", Level::Warn, &e.to_string());
                    }
                }
                Err(e) => drop(
                    n.throttle
                        .log(t, "no_plan", Level::Error, &format!("no plan to {to}: {e}")),
                ),
            }
        }
        while let Some(req) = server.take() {
            let (token, r) = match req {
                Ok(x) => x,
                Err(e) => {
                    let why = format!("undecodable plan request dropped: {e}");
                    n.throttle.log(t, "request", Level::Warn, &why);
                    continue;
                }
            };
            let start = (!r.start.header.frame_id.is_empty()).then(|| xy(&r.start));
            let resp = match n.plan(t, start, xy(&r.goal)) {
                Ok(out) => Plan_Response {
                    success: true,
                    message: String::new(),
                    path: out.path,
                    strategic_plan: out.strategic,
                },
                Err(message) => Plan_Response {
                    success: false,
                    message,
                    ..Default::default()
                },
            };
            if let Err(e) = server.respond(token, resp) {
                n.throttle.log(t, "publish", Level::Warn, &e.to_string());
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}
