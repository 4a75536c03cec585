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
//! service, returned; a malformed map is refused and the previous one kept.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use modbot_core::Scenario;
use modbot_msgs::builtin_interfaces::msg::{Duration as RosDuration, Time};
use modbot_msgs::geometry_msgs::msg::{Point, Pose, PoseStamped, Quaternion, Vector3};
use modbot_msgs::modbot_msgs::msg::{StrategicPlan, SubGoal};
use modbot_msgs::modbot_msgs::srv::{Plan_Request, Plan_Response};
use modbot_msgs::nav_msgs::msg::{OccupancyGrid, Odometry, Path};
use modbot_msgs::std_msgs::msg::{ColorRGBA, Header};
use modbot_msgs::visualization_msgs::msg::{Marker, MarkerArray};
use modbot_planner::capabilities::Capabilities;
use modbot_planner::grid::{AStar, Connectivity, GridMap, PlanError};
use modbot_planner::sequencer::{Pose2, Sequencer, SequencerSettings, references};
use modbot_planner::strategic::{self, Action};

use crate::error::{Result, RosError};
use crate::params::{Get, NodeConfig, ParamDecl, ParamMap, ParamValue};
use crate::transport::{Level, Pub, Qos, Server, Sub, Transport};

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
    pub mode: String,
    /// Cell size of the strategic search, m.
    pub resolution_m: f64,
    /// Occupancy at or above which a map cell is occupied (0–100).
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
            ParamDecl {
                name: "scenario",
                default: s(""),
                description: "scenario YAML (empty: grid A* on map)",
            },
            ParamDecl {
                name: "capabilities",
                default: s(""),
                description: "capability table YAML (empty: shipped)",
            },
            ParamDecl {
                name: "available",
                default: ParamValue::StrArray(vec!["single_module".into(), "quadruped".into(), "wheeled".into()]),
                description: "configurations available",
            },
            ParamDecl {
                name: "start_configuration",
                default: s("single_module"),
                description: "configuration at the start",
            },
            ParamDecl {
                name: "mode",
                default: s("search"),
                description: "search or source",
            },
            ParamDecl {
                name: "resolution_m",
                default: ParamValue::Double(0.05),
                description: "strategic search cell, m",
            },
            ParamDecl {
                name: "occupied_threshold",
                default: ParamValue::Int(65),
                description: "occupied at or above (0-100)",
            },
            ParamDecl {
                name: "inflation_radius_m",
                default: ParamValue::Double(0.0),
                description: "map inflation, m",
            },
            ParamDecl {
                name: "eight_connected",
                default: ParamValue::Bool(true),
                description: "8-connected A*",
            },
            ParamDecl {
                name: "frame_id",
                default: s("map"),
                description: "frame of published plans",
            },
        ]
    }

    fn from_params(p: &ParamMap) -> std::result::Result<Self, String> {
        let g = Get(p);
        let threshold = match p.get("occupied_threshold") {
            Some(ParamValue::Int(i)) if (1..=100).contains(i) => *i,
            other => {
                return Err(format!(
                    "parameter `occupied_threshold` must be an integer 1..100, got {other:?}"
                ));
            }
        };
        let cfg = PlannerNodeConfig {
            scenario: g.str("scenario")?,
            capabilities: g.str("capabilities")?,
            available: g.strs("available")?,
            start_configuration: g.str("start_configuration")?,
            mode: g.str("mode")?,
            resolution_m: g.f64_in("resolution_m", 0.005, 1.0)?,
            occupied_threshold: threshold,
            inflation_radius_m: g.f64_in("inflation_radius_m", 0.0, 10.0)?,
            eight_connected: g.bool("eight_connected")?,
            frame_id: g.str("frame_id")?,
        };
        if cfg.mode != "search" && cfg.mode != "source" {
            return Err(format!("parameter `mode` = `{}`: expected search or source", cfg.mode));
        }
        let caps = cfg.load_capabilities()?;
        for a in cfg.available.iter().chain([&cfg.start_configuration]) {
            if !caps.configurations.contains_key(a) {
                return Err(format!("configuration `{a}` is not in the capability table"));
            }
        }
        if !cfg.available.contains(&cfg.start_configuration) {
            return Err(format!(
                "start_configuration `{}` is not in `available`",
                cfg.start_configuration
            ));
        }
        cfg.load_scenario()?;
        Ok(cfg)
    }
}

impl PlannerNodeConfig {
    fn load_capabilities(&self) -> std::result::Result<Capabilities, String> {
        if self.capabilities.is_empty() {
            Ok(Capabilities::builtin())
        } else {
            Capabilities::load(std::path::Path::new(&self.capabilities)).map_err(|e| e.to_string())
        }
    }

    fn load_scenario(&self) -> std::result::Result<Option<Scenario>, String> {
        if self.scenario.is_empty() {
            return Ok(None);
        }
        Scenario::load(std::path::Path::new(&self.scenario))
            .map(Some)
            .map_err(|e| format!("scenario `{}`: {e}", self.scenario))
    }
}

/// A plan in messages.
#[derive(Debug, Clone, Default)]
pub struct PlanOutput {
    /// Path through every sub-goal (or the grid path).
    pub path: Path,
    /// Sub-goal rows (empty for a grid plan).
    pub strategic: StrategicPlan,
    /// Markers: a sphere and a label per sub-goal.
    pub markers: MarkerArray,
}

/// The node's logic without middleware.
pub struct PlannerCore {
    cfg: PlannerNodeConfig,
    scenario: Option<Scenario>,
    caps: Capabilities,
    map: Option<GridMap>,
    astar: AStar,
    /// Last odometry position, the default start.
    pub start: Option<[f64; 2]>,
}

fn action_code(a: Action) -> u8 {
    match a {
        Action::Drive => SubGoal::ACTION_DRIVE,
        Action::PassOver => SubGoal::ACTION_PASS_OVER,
        Action::PassUnder => SubGoal::ACTION_PASS_UNDER,
    }
}

fn pose_at(x: f64, y: f64, yaw: f64, header: &Header) -> PoseStamped {
    PoseStamped {
        header: header.clone(),
        pose: Pose {
            position: Point { x, y, z: 0.0 },
            orientation: Quaternion {
                x: 0.0,
                y: 0.0,
                z: (yaw / 2.0).sin(),
                w: (yaw / 2.0).cos(),
            },
        },
    }
}

impl PlannerCore {
    /// Loads the scenario and capability table the configuration names.
    pub fn new(cfg: &PlannerNodeConfig) -> std::result::Result<PlannerCore, String> {
        Ok(PlannerCore {
            scenario: cfg.load_scenario()?,
            caps: cfg.load_capabilities()?,
            cfg: cfg.clone(),
            map: None,
            astar: AStar::new(),
            start: None,
        })
    }

    /// Takes a new map; a malformed one is refused (the previous map stays).
    pub fn set_map(&mut self, m: &OccupancyGrid) -> std::result::Result<(), String> {
        let info = &m.info;
        if !(info.resolution.is_finite() && info.resolution > 0.0) {
            return Err(format!("map resolution {} is not a cell size", info.resolution));
        }
        let o = &info.origin;
        if ![o.position.x, o.position.y].iter().all(|v| v.is_finite()) {
            return Err("map origin is not finite".into());
        }
        let q = &o.orientation;
        if q.x.abs() > 1e-6 || q.y.abs() > 1e-6 || q.z.abs() > 1e-6 {
            return Err("rotated map origins are not supported (yaw must be 0)".into());
        }
        let map = GridMap::from_occupancy(
            info.width as usize,
            info.height as usize,
            f64::from(info.resolution),
            [o.position.x, o.position.y],
            &m.data,
            self.cfg.occupied_threshold as i8,
        )
        .map_err(|e| e.to_string())?;
        self.map = Some(if self.cfg.inflation_radius_m > 0.0 {
            map.inflated(self.cfg.inflation_radius_m)
        } else {
            map
        });
        Ok(())
    }

    /// Whether a grid map has been received.
    pub fn has_map(&self) -> bool {
        self.map.is_some()
    }

    /// Plans from `start` (default: last odometry, else the scenario's start) to `goal`.
    pub fn plan(
        &mut self,
        start: Option<[f64; 2]>,
        goal: [f64; 2],
        stamp: Time,
    ) -> std::result::Result<PlanOutput, String> {
        if !goal.iter().all(|v| v.is_finite()) {
            return Err(format!("goal {goal:?} is not finite"));
        }
        let header = Header {
            stamp,
            frame_id: self.cfg.frame_id.clone(),
        };
        let start = start.or(self.start);
        if let Some(sc) = &self.scenario {
            let mut sc = sc.clone();
            sc.goal = Some(goal);
            if let Some(s) = start {
                sc.robot_start.xyz[0] = s[0];
                sc.robot_start.xyz[1] = s[1];
            }
            let (plan, time) = if self.cfg.mode == "source" {
                (strategic::source_decomposition(&sc).map_err(|e| e.to_string())?, 0.0)
            } else {
                let available: Vec<&str> = self.cfg.available.iter().map(String::as_str).collect();
                let p = modbot_planner::deliberative::plan(
                    &sc,
                    &self.caps,
                    &available,
                    &self.cfg.start_configuration,
                    self.cfg.resolution_m,
                )
                .map_err(|e| e.to_string())?;
                (p.plan, p.time_s)
            };
            let seq = Sequencer::new(plan.clone(), references(&sc), SequencerSettings::default());
            let mut path = Path {
                header: header.clone(),
                poses: vec![pose_at(sc.robot_start.xyz[0], sc.robot_start.xyz[1], 0.0, &header)],
            };
            let mut rows = Vec::new();
            let mut markers = vec![Marker {
                header: header.clone(),
                action: Marker::DELETEALL,
                ..Default::default()
            }];
            for (i, r) in plan.rows.iter().enumerate() {
                let target = seq.target(i).unwrap_or(Pose2 {
                    x: goal[0],
                    y: goal[1],
                    yaw: 0.0,
                });
                if r.path.is_empty() {
                    path.poses.push(pose_at(target.x, target.y, target.yaw, &header));
                } else {
                    path.poses
                        .extend(r.path.iter().map(|p| pose_at(p[0], p[1], 0.0, &header)));
                }
                rows.push(SubGoal {
                    configuration: r.configuration.clone(),
                    reference: r.reference.clone(),
                    lateral_offset: r.lateral_m,
                    longitudinal_offset: r.longitudinal_m,
                    yaw_offset: r.yaw_deg.to_radians(),
                    ability: r.ability,
                    action: action_code(r.action),
                    gait: r.gait.clone(),
                    target: pose_at(target.x, target.y, target.yaw, &header).pose,
                    path: r
                        .path
                        .iter()
                        .map(|p| Point {
                            x: p[0],
                            y: p[1],
                            z: 0.0,
                        })
                        .collect(),
                });
                markers.extend(row_markers(i, r, target, &header));
            }
            return Ok(PlanOutput {
                path,
                strategic: StrategicPlan {
                    header,
                    rows,
                    estimated_time: time,
                },
                markers: MarkerArray { markers },
            });
        }
        let Some(map) = &self.map else {
            return Err("no map received and no scenario set: nothing to plan on".into());
        };
        let start = start.ok_or("no start: no odometry received yet and no start given")?;
        let cell = |p: [f64; 2]| -> std::result::Result<(usize, usize), String> {
            let x = ((p[0] - map.origin[0]) / map.resolution).floor();
            let y = ((p[1] - map.origin[1]) / map.resolution).floor();
            if x < 0.0 || y < 0.0 || x >= map.width as f64 || y >= map.height as f64 {
                return Err(PlanError::OutOfBounds {
                    x: x as i64,
                    y: y as i64,
                    width: map.width,
                    height: map.height,
                }
                .to_string());
            }
            Ok((x as usize, y as usize))
        };
        let conn = if self.cfg.eight_connected {
            Connectivity::Eight
        } else {
            Connectivity::Four
        };
        let p = self
            .astar
            .plan(map, cell(start)?, cell(goal)?, conn, 0, &|| false)
            .map_err(|e| e.to_string())?;
        let poses = p
            .cells
            .iter()
            .map(|&(x, y)| {
                pose_at(
                    map.origin[0] + (x as f64 + 0.5) * map.resolution,
                    map.origin[1] + (y as f64 + 0.5) * map.resolution,
                    0.0,
                    &header,
                )
            })
            .collect();
        Ok(PlanOutput {
            path: Path { header, poses },
            ..Default::default()
        })
    }
}

fn row_markers(i: usize, r: &strategic::SubGoal, t: Pose2, header: &Header) -> [Marker; 2] {
    const PALETTE: [(f32, f32, f32); 5] = [
        (0.12, 0.47, 0.71),
        (1.0, 0.5, 0.05),
        (0.17, 0.63, 0.17),
        (0.84, 0.15, 0.16),
        (0.58, 0.4, 0.74),
    ];
    let k = r.configuration.bytes().map(usize::from).sum::<usize>() % PALETTE.len();
    let (cr, cg, cb) = PALETTE[k];
    let base = Marker {
        header: header.clone(),
        ns: "subgoals".into(),
        id: (2 * i) as i32,
        r#type: Marker::SPHERE,
        action: Marker::ADD,
        pose: pose_at(t.x, t.y, t.yaw, header).pose,
        scale: Vector3 {
            x: 0.08,
            y: 0.08,
            z: 0.08,
        },
        color: ColorRGBA {
            r: cr,
            g: cg,
            b: cb,
            a: 0.9,
        },
        lifetime: RosDuration { sec: 0, nanosec: 0 },
        ..Default::default()
    };
    let mut label = base.clone();
    label.id += 1;
    label.r#type = Marker::TEXT_VIEW_FACING;
    label.pose.position.z = 0.15;
    label.scale.z = 0.06;
    label.color = ColorRGBA {
        r: 1.0,
        g: 1.0,
        b: 1.0,
        a: 1.0,
    };
    label.text = format!(
        "{} {}{}",
        i + 1,
        r.configuration,
        match r.action {
            Action::Drive => String::new(),
            a => format!(" {a:?}"),
        }
    );
    [base, label]
}

fn xy(p: &PoseStamped) -> [f64; 2] {
    [p.pose.position.x, p.pose.position.y]
}

/// Runs planner_node until `stop` is set.
pub fn run<T: Transport>(t: &mut T, cfg: PlannerNodeConfig, stop: Arc<AtomicBool>) -> Result<()> {
    let mut core = PlannerCore::new(&cfg).map_err(RosError::Params)?;
    let map_sub = t.subscription::<OccupancyGrid>("map", Qos::Latched)?;
    let goal_sub = t.subscription::<PoseStamped>("goal_pose", Qos::Reliable)?;
    let odom_sub = t.subscription::<Odometry>("odom", Qos::SensorData)?;
    let path_pub = t.publisher::<Path>("plan", Qos::Reliable)?;
    let strategic_pub = t.publisher::<StrategicPlan>("strategic_plan", Qos::Latched)?;
    let marker_pub = t.publisher::<MarkerArray>("plan_markers", Qos::Reliable)?;
    let server = t.server::<Plan_Request, Plan_Response>("plan", "modbot_msgs", "Plan")?;
    t.log(
        Level::Info,
        &format!(
            "planning {} (mode {}); goals on {}",
            if cfg.scenario.is_empty() {
                "on the map with A*".to_string()
            } else {
                format!("with scenario {}", cfg.scenario)
            },
            cfg.mode,
            t.resolve("goal_pose")
        ),
    );
    let stamp = |t: &T| Time::from_secs_f64(t.now());
    while !stop.load(Ordering::Relaxed) {
        for (k, v) in t.param_changes() {
            t.log(
                Level::Warn,
                &format!("parameter `{k}` = {v:?} takes effect at the next start"),
            );
        }
        while let Some(m) = map_sub.take() {
            match m.and_then(|m| core.set_map(&m).map(|()| (m.info.width, m.info.height))) {
                Ok((w, h)) => t.log(Level::Info, &format!("map {w} × {h}")),
                Err(e) => t.log(Level::Warn, &format!("map refused: {e}")),
            }
        }
        while let Some(o) = odom_sub.take() {
            if let Ok(o) = o {
                let p = &o.pose.pose.position;
                if p.x.is_finite() && p.y.is_finite() {
                    core.start = Some([p.x, p.y]);
                }
            }
        }
        while let Some(g) = goal_sub.take() {
            let goal = match g {
                Ok(g) => xy(&g),
                Err(e) => {
                    t.log(Level::Warn, &format!("undecodable goal dropped: {e}"));
                    continue;
                }
            };
            match core.plan(None, goal, stamp(t)) {
                Ok(out) => {
                    t.log(
                        Level::Info,
                        &format!(
                            "plan to ({:.2}, {:.2}): {} poses, {} sub-goals",
                            goal[0],
                            goal[1],
                            out.path.poses.len(),
                            out.strategic.rows.len()
                        ),
                    );
                    publish_all(t, &path_pub, &strategic_pub, &marker_pub, out, core.scenario.is_some());
                }
                Err(e) => t.log(
                    Level::Error,
                    &format!("no plan to ({:.2}, {:.2}): {e}", goal[0], goal[1]),
                ),
            }
        }
        while let Some(req) = server.take() {
            match req {
                Ok((token, r)) => {
                    let start = (!r.start.header.frame_id.is_empty()).then(|| xy(&r.start));
                    let resp = match core.plan(start, xy(&r.goal), stamp(t)) {
                        Ok(out) => Plan_Response {
                            success: true,
                            message: String::new(),
                            path: out.path,
                            strategic_plan: out.strategic,
                        },
                        Err(e) => Plan_Response {
                            success: false,
                            message: e,
                            ..Default::default()
                        },
                    };
                    if let Err(e) = server.respond(token, resp) {
                        t.log(Level::Warn, &e.to_string());
                    }
                }
                Err(e) => t.log(Level::Warn, &format!("undecodable plan request dropped: {e}")),
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

fn publish_all<T: Transport>(
    t: &T,
    path_pub: &T::P<Path>,
    strategic_pub: &T::P<StrategicPlan>,
    marker_pub: &T::P<MarkerArray>,
    out: PlanOutput,
    strategic: bool,
) {
    let mut r = vec![path_pub.publish(out.path)];
    if strategic {
        r.push(strategic_pub.publish(out.strategic));
        r.push(marker_pub.publish(out.markers));
    }
    for e in r.into_iter().filter_map(std::result::Result::err) {
        t.log(Level::Warn, &e.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{defaults, resolve};

    fn root() -> std::path::PathBuf {
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    #[test]
    fn the_source_scene_gives_its_configurations_in_order() {
        let sc = root().join("worlds/obstacle_course.yaml");
        let (_, cfg) =
            resolve::<PlannerNodeConfig>(&[], &[("scenario".into(), ParamValue::Str(sc.display().to_string()))])
                .expect("config");
        let mut core = PlannerCore::new(&cfg).expect("core");
        let s = Scenario::load(&sc).expect("scenario");
        let out = core.plan(None, s.goal.expect("goal"), Time::default()).expect("plan");
        let confs: Vec<&str> = out.strategic.rows.iter().map(|r| r.configuration.as_str()).collect();
        let mut order: Vec<&str> = Vec::new();
        for c in confs {
            if order.last() != Some(&c) {
                order.push(c);
            }
        }
        // The robot starts as a single module and reassembles before the first row.
        assert_eq!(order, ["quadruped", "wheeled"]);
        assert!(out.strategic.rows.iter().any(|r| r.action == SubGoal::ACTION_PASS_OVER));
        assert!(
            out.strategic
                .rows
                .iter()
                .any(|r| r.action == SubGoal::ACTION_PASS_UNDER)
        );
        assert!(out.path.poses.len() > out.strategic.rows.len());
        assert_eq!(out.markers.markers[0].action, Marker::DELETEALL);
        assert_eq!(out.markers.markers.len(), 1 + 2 * out.strategic.rows.len());
        // The source's own template, by parameter.
        let (_, cfg) = resolve::<PlannerNodeConfig>(
            &[],
            &[
                ("scenario".into(), ParamValue::Str(sc.display().to_string())),
                ("mode".into(), ParamValue::Str("source".into())),
            ],
        )
        .expect("config");
        let out = PlannerCore::new(&cfg)
            .expect("core")
            .plan(None, s.goal.expect("goal"), Time::default())
            .expect("plan");
        assert_eq!(out.strategic.rows.len(), 6);
    }

    #[test]
    fn grid_plans_on_an_occupancy_grid_and_failures_are_typed() {
        let cfg = PlannerNodeConfig::from_params(&defaults::<PlannerNodeConfig>()).expect("defaults");
        let mut core = PlannerCore::new(&cfg).expect("core");
        assert!(
            core.plan(Some([0.0, 0.0]), [1.0, 1.0], Time::default())
                .unwrap_err()
                .contains("no map")
        );
        // 10 × 10 cells of 0.1 m, a wall at x = 5 with a gap at y = 9.
        let mut data = vec![0i8; 100];
        for y in 0..9 {
            data[y * 10 + 5] = 100;
        }
        let mut g = OccupancyGrid::default();
        g.info.resolution = 0.1;
        g.info.width = 10;
        g.info.height = 10;
        g.data = data.clone();
        core.set_map(&g).expect("map");
        let out = core
            .plan(Some([0.05, 0.05]), [0.95, 0.05], Time::default())
            .expect("plan");
        assert!(
            out.path.poses.iter().any(|p| p.pose.position.y > 0.85),
            "the path goes through the gap"
        );
        assert!(out.strategic.rows.is_empty());
        let e = core.plan(Some([0.05, 0.05]), [5.0, 5.0], Time::default()).unwrap_err();
        assert!(
            e.contains("outside") || e.contains("bounds") || e.contains("OutOfBounds"),
            "{e}"
        );
        data[95] = 100;
        g.data = data;
        core.set_map(&g).expect("closed map");
        let e = core
            .plan(Some([0.05, 0.05]), [0.95, 0.05], Time::default())
            .unwrap_err();
        assert!(e.to_lowercase().contains("no path"), "{e}");
        // Malformed maps are refused and the last good one stays.
        g.data = vec![0; 7];
        assert!(core.set_map(&g).unwrap_err().contains("7 cells"));
        g.info.resolution = 0.0;
        assert!(core.set_map(&g).is_err());
        assert!(core.has_map());
    }

    #[test]
    fn bad_parameters_are_named() {
        for (k, v, want) in [
            ("mode", ParamValue::Str("guess".into()), "guess"),
            (
                "available",
                ParamValue::StrArray(vec!["hovercraft".into()]),
                "hovercraft",
            ),
            (
                "scenario",
                ParamValue::Str("/nonexistent.yaml".into()),
                "/nonexistent.yaml",
            ),
            ("occupied_threshold", ParamValue::Int(500), "occupied_threshold"),
        ] {
            let e = resolve::<PlannerNodeConfig>(&[], &[(k.into(), v)])
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{k}: {e}");
        }
    }
}
