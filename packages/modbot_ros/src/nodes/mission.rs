//! `mission_node`: the strategic mission on the ROS graph (issue 15, record 0052). One node
//! owns the six modules' controllers — the scan, the modelling, the roles, the plan and the
//! sequencer with the assembly, reassembly and the configurations' controllers, all of
//! modbot_app's [`run_mission_on`] — and drives the fleet's simulator in sim_node
//! (`fleet:=true`) over the fleet protocol (`fleet/request`, `fleet/reply`). The
//! deliberative search that the source's template is checked against is planner_node's
//! (`planner:=node`): the modelled start and target go out on `planner/start` and
//! `planner/goal` (planner_node's `odom` and `goal_pose`), its `strategic_plan` comes back. Each phase as
//! it ends is published on `mission/status` (JSON of the phase); at the end, the mission's
//! summary on `mission/summary` (latched JSON) and markers of the roles, the staging points
//! and the plan on `mission/markers` (latched, frame `odom`: the embedded simulator's world
//! is its odom frame, as in launch/mission.launch.yaml). The node exits
//! 0 when the mission reached the target, 1 with the phase and the reason otherwise.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use modbot_app::mission::{MissionReport, MissionSettings, run_mission_on, searched_configurations};
use modbot_core::Scenario;
use modbot_msgs::builtin_interfaces::msg::{Duration as RosDuration, Time};
use modbot_msgs::geometry_msgs::msg::{Point, Pose, PoseStamped, Quaternion, Vector3};
use modbot_msgs::modbot_msgs::msg::StrategicPlan;
use modbot_msgs::nav_msgs::msg::Odometry;
use modbot_msgs::std_msgs::msg::{ColorRGBA, Header, String as StringMsg};
use modbot_msgs::visualization_msgs::msg::{Marker, MarkerArray};
use modbot_planner::sequencer::Pose2;

use crate::error::{Result, RosError};
use crate::fleet::RemotePlant;
use crate::params::{Get, NodeConfig, ParamDecl, ParamMap, ParamValue};
use crate::transport::{Level, Pub, Qos, Sub, Transport};

/// The node's parameters, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct MissionNodeConfig {
    /// The mission's world file (six module starts, a ground obstacle, a lath, a target):
    /// the same file sim_node simulates.
    pub world: String,
    /// Wall seconds the simulator has to answer one request (and to appear at the start).
    pub request_timeout_s: f64,
    /// Seed of the cameras' noise.
    pub camera_seed: u64,
    /// Who answers the deliberative search: planner_node (`node`) or this node (`local`).
    pub planner: String,
    /// Wall seconds planner_node has to answer, s.
    pub planner_timeout_s: f64,
    /// Wall seconds the node stays after the mission, offering its latched summary and
    /// markers (the launch ends with it), s.
    pub linger_s: f64,
}

impl NodeConfig for MissionNodeConfig {
    fn declarations() -> Vec<ParamDecl> {
        vec![
            ParamDecl::new(
                "world",
                ParamValue::Str(String::new()),
                "the mission's world file, as sim_node's (empty: none; the node then only offers its topics)",
            ),
            ParamDecl::new(
                "request_timeout_s",
                ParamValue::Double(30.0),
                "wall seconds the fleet's simulator has to answer a request, s",
            ),
            ParamDecl::new("camera_seed", ParamValue::Int(0), "seed of the cameras' noise"),
            ParamDecl::new(
                "planner",
                ParamValue::Str("node".into()),
                "the deliberative search: node (planner_node, through planner/start, planner/goal and strategic_plan) or local",
            ),
            ParamDecl::new(
                "planner_timeout_s",
                ParamValue::Double(30.0),
                "wall seconds planner_node has to publish its plan, s",
            ),
            ParamDecl::new(
                "linger_s",
                ParamValue::Double(2.0),
                "wall seconds the node stays after the mission with its latched summary and markers (the launch ends with it; longer to look at them in RViz), s",
            ),
        ]
    }

    fn from_params(p: &ParamMap) -> std::result::Result<Self, String> {
        let g = Get(p);
        let cfg = MissionNodeConfig {
            world: g.str("world")?,
            request_timeout_s: g.f64_in("request_timeout_s", 0.1, 3600.0)?,
            camera_seed: g.i64_in("camera_seed", 0, i64::MAX)? as u64,
            planner: g.str("planner")?,
            planner_timeout_s: g.f64_in("planner_timeout_s", 0.1, 3600.0)?,
            linger_s: g.f64_in("linger_s", 0.0, 86400.0)?,
        };
        if !["node", "local"].contains(&cfg.planner.as_str()) {
            return Err(format!(
                "parameter `planner` = `{}`: expected node or local",
                cfg.planner
            ));
        }
        if !cfg.world.is_empty() {
            let w = cfg.scenario()?;
            if w.robot_starts.len() != 6 {
                return Err(format!(
                    "parameter `world` = `{}`: {} robot_starts, the mission needs six modules",
                    cfg.world,
                    w.robot_starts.len()
                ));
            }
        }
        Ok(cfg)
    }
}

impl MissionNodeConfig {
    fn scenario(&self) -> std::result::Result<Scenario, String> {
        modbot_app::load_world(Some(std::path::Path::new(&self.world)))
            .map_err(|e| format!("parameter `world` = `{}`: {e}", self.world))
    }
}

/// Runs the mission once; returns when it has ended (or at once when `stop` is set).
pub fn run<T: Transport>(t: &mut T, cfg: MissionNodeConfig, stop: Arc<AtomicBool>) -> Result<()> {
    let requests = t.publisher::<StringMsg>("fleet/request", Qos::Reliable)?;
    let replies = t.subscription::<StringMsg>("fleet/reply", Qos::Reliable)?;
    let status = t.publisher::<StringMsg>("mission/status", Qos::Reliable)?;
    let summary = t.publisher::<StringMsg>("mission/summary", Qos::Latched)?;
    let markers = t.publisher::<MarkerArray>("mission/markers", Qos::Latched)?;
    // The deliberative search's question to planner_node (its odom and goal_pose remapped
    // here) and its answer.
    let start_pub = t.publisher::<Odometry>("planner/start", Qos::Reliable)?;
    let goal_pub = t.publisher::<PoseStamped>("planner/goal", Qos::Reliable)?;
    let plan_sub = t.subscription::<StrategicPlan>("strategic_plan", Qos::Latched)?;
    if stop.load(Ordering::Relaxed) {
        return Ok(());
    }
    if cfg.world.is_empty() {
        t.log(Level::Warn, "no `world`: nothing to do");
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(100));
        }
        return Ok(());
    }
    let world = cfg.scenario().map_err(RosError::Params)?;
    t.log(
        Level::Info,
        "waiting for the fleet's simulator (sim_node fleet:=true) on fleet/request",
    );
    let timeout = Duration::from_secs_f64(cfg.request_timeout_s);
    let mut plant = RemotePlant::connect(requests, replies, timeout)
        .map_err(RosError::Node)?
        .stopped_by(Arc::clone(&stop));
    same_fleet(&plant, &world).map_err(RosError::Node)?;
    let settings = MissionSettings {
        scan: modbot_app::scan::ScanSettings {
            seed: cfg.camera_seed,
            ..Default::default()
        },
        ..Default::default()
    };
    let wall = std::time::Instant::now();
    let report = {
        let t: &T = t;
        let mut search = |w: &Scenario| -> std::result::Result<Vec<String>, String> {
            if cfg.planner == "local" {
                return searched_configurations(w);
            }
            ask_planner(t, w, (&start_pub, &goal_pub, &plan_sub), cfg.planner_timeout_s, &stop)
        };
        run_mission_on(&mut plant, &world, &settings, &mut search, &mut |p| {
            t.log(
                if p.outcome == "ok" { Level::Info } else { Level::Warn },
                &format!(
                    "[{:8.1} – {:8.1} s] {} {}: {}",
                    p.start_s, p.end_s, p.phase, p.outcome, p.detail
                ),
            );
            let json = serde_json::to_string(p).unwrap_or_default();
            if let Err(e) = status.publish(StringMsg { data: json }) {
                t.log(Level::Warn, &format!("mission/status not sent: {e}"));
            }
        })
        .map_err(RosError::Node)?
    };
    let wall_s = wall.elapsed().as_secs_f64();
    let json = serde_json::json!({
        "world": report.world,
        "reached": report.reached,
        "final_distance_m": report.final_distance_m,
        "failure": report.failure,
        "roles": report.roles.iter().map(|m| m + 1).collect::<Vec<_>>(),
        "phases": report.phases,
        "docks": report.docks,
        "simulated_s": report.sim_s,
        "wall_s": wall_s,
        "fleet_calls": plant.calls(),
        "searched_configurations": report.searched_configurations,
    });
    summary.publish(StringMsg { data: json.to_string() })?;
    markers.publish(mission_markers(&report))?;
    let line = format!(
        "mission `{}`: {} — {:.3} m from the target after {:.1} s simulated ({:.1} s wall, {} calls to the simulator)",
        report.world,
        match &report.failure {
            None if report.reached => "reached the target".to_string(),
            None => "ended short of the target".to_string(),
            Some(f) => format!("failed: {f}"),
        },
        report.final_distance_m,
        report.sim_s,
        wall_s,
        plant.calls()
    );
    t.log(if report.reached { Level::Info } else { Level::Error }, &line);
    // The latched summary and markers stay offered a while; the launch ends with the node.
    while !stop.load(Ordering::Relaxed) && wall.elapsed().as_secs_f64() < wall_s + cfg.linger_s {
        std::thread::sleep(Duration::from_millis(50));
    }
    if report.reached {
        Ok(())
    } else {
        Err(RosError::Node(line))
    }
}

/// Whether the simulator holds the fleet of `world` at its start: the same joints and links
/// where this process would build them (a sim_node on another world file, or one already
/// driven, is refused before anything moves).
fn same_fleet<P: Pub<StringMsg>, S: Sub<StringMsg>>(
    plant: &RemotePlant<P, S>,
    world: &Scenario,
) -> std::result::Result<(), String> {
    use modbot_sim::Plant as _;
    let here = modbot_app::assemble::fleet_simulator(world)?;
    if plant.time() != 0.0 {
        return Err(format!(
            "the fleet's simulator is at {} s, not at its start: start a new sim_node",
            plant.time()
        ));
    }
    if plant.joint_names() != here.joint_names() || plant.link_names() != here.link_names() {
        return Err("the fleet's simulator holds other modules than the world file's".into());
    }
    let apart = plant
        .link_poses()
        .iter()
        .zip(here.link_poses())
        .map(|(a, b)| (a.translation.vector - b.translation.vector).norm())
        .fold(0.0, f64::max);
    if apart > 1e-6 {
        return Err(format!(
            "the fleet's simulator has its modules up to {apart:.3} m from where the world file `{}` puts them: is sim_node's `world` the same file?",
            world.name
        ));
    }
    Ok(())
}

/// The deliberative planner's configurations for the modelled world `w`, from planner_node:
/// its start (`w`'s robot_start) on `planner/start`, its goal (the modelled target) on
/// `planner/goal`, both sent again every 2 s until a plan comes on `strategic_plan`.
fn ask_planner<T: Transport, P1: Pub<Odometry>, P2: Pub<PoseStamped>, S: Sub<StrategicPlan>>(
    t: &T,
    w: &Scenario,
    (start_pub, goal_pub, plan_sub): (&P1, &P2, &S),
    timeout_s: f64,
    stop: &AtomicBool,
) -> std::result::Result<Vec<String>, String> {
    let goal = w.goal.ok_or("the modelled world has no target")?;
    let start = [w.robot_start.xyz[0], w.robot_start.xyz[1]];
    let header = Header {
        stamp: Time::from_secs_f64(0.0),
        frame_id: "odom".into(),
    };
    let pose = |[x, y]: [f64; 2]| Pose {
        position: Point { x, y, z: 0.0 },
        orientation: Quaternion {
            x: 0.0,
            y: 0.0,
            z: 0.0,
            w: 1.0,
        },
    };
    let began = std::time::Instant::now();
    let mut asked: Option<std::time::Instant> = None;
    let mut throttle = crate::transport::Throttle::new(5.0);
    loop {
        while let Some(p) = plan_sub.take() {
            // Only a plan to the goal asked (within a search cell): a latched plan of an
            // earlier question is not this one's answer.
            let to_goal = |p: &StrategicPlan| {
                p.rows.last().is_some_and(|r| {
                    (r.target.position.x - goal[0]).abs() < 0.051 && (r.target.position.y - goal[1]).abs() < 0.051
                })
            };
            match p {
                Ok(p) if to_goal(&p) => {
                    let mut c: Vec<String> = p.rows.iter().map(|r| r.configuration.clone()).collect();
                    c.dedup();
                    return Ok(c);
                }
                Ok(_) => drop(throttle.log(t, "other_plan", Level::Info, "a strategic_plan to another goal ignored")),
                Err(e) => drop(throttle.log(t, "plan", Level::Warn, &format!("strategic_plan dropped: {e}"))),
            }
        }
        if stop.load(Ordering::Relaxed) {
            return Err("stopped".into());
        }
        if began.elapsed().as_secs_f64() > timeout_s {
            return Err(format!("planner_node published no strategic_plan in {timeout_s} s"));
        }
        if asked.is_none_or(|a| a.elapsed() > Duration::from_secs(2)) {
            let mut odom = Odometry {
                header: header.clone(),
                ..Default::default()
            };
            odom.pose.pose = pose(start);
            start_pub.publish(odom).map_err(|e| e.to_string())?;
            // The start first: planner_node plans a goal from the last start it has.
            std::thread::sleep(Duration::from_millis(200));
            goal_pub
                .publish(PoseStamped {
                    header: header.clone(),
                    pose: pose(goal),
                })
                .map_err(|e| e.to_string())?;
            asked = Some(std::time::Instant::now());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The roles (at each module's start), the staging points of each assembly (from Role#1's
/// pose when it began) and the plan's references, in the world's frame (`odom`, the
/// embedded simulator's world, as the planner's markers in launch/mission.launch.yaml).
pub fn mission_markers(report: &MissionReport) -> MarkerArray {
    let header = Header {
        stamp: Time::from_secs_f64(report.sim_s),
        frame_id: "odom".into(),
    };
    let color = |r: f32, g: f32, b: f32| ColorRGBA { r, g, b, a: 0.9 };
    let mut markers = Vec::new();
    let mut add = |ns: &str, kind: i32, x: f64, y: f64, scale: f64, c: ColorRGBA, text: String| {
        let id = markers.len() as i32;
        markers.push(Marker {
            header: header.clone(),
            ns: ns.into(),
            id,
            r#type: kind,
            action: Marker::ADD,
            pose: Pose {
                position: Point {
                    x,
                    y,
                    z: if kind == Marker::TEXT_VIEW_FACING { 0.15 } else { 0.02 },
                },
                orientation: Quaternion {
                    x: 0.0,
                    y: 0.0,
                    z: 0.0,
                    w: 1.0,
                },
            },
            scale: Vector3 {
                x: scale,
                y: scale,
                z: scale,
            },
            color: c,
            lifetime: RosDuration { sec: 0, nanosec: 0 },
            text,
            ..Default::default()
        });
    };
    let white = ColorRGBA {
        r: 1.0,
        g: 1.0,
        b: 1.0,
        a: 1.0,
    };
    for (r, &m) in report.roles.iter().enumerate() {
        if let Some(&[_, x, y, _]) = report.trajectories.get(m).and_then(|t| t.first()) {
            add(
                "roles",
                Marker::SPHERE,
                x,
                y,
                0.06,
                color(0.12, 0.47, 0.71),
                String::new(),
            );
            add(
                "roles",
                Marker::TEXT_VIEW_FACING,
                x,
                y,
                0.05,
                white.clone(),
                format!("Role#{} (Module#{})", r + 1, m + 1),
            );
        }
    }
    // Staging points: each assembly's targets from Role#1's pose as the phase began.
    if let Some(&r1) = report.roles.first() {
        for phase in report.phases.iter() {
            let (conf, first_role) = if let Some(c) = phase.phase.split(": assembly ").nth(1) {
                (c, 2)
            } else if let Some(c) = phase.phase.split(": reassembly ").nth(1) {
                (c, 3)
            } else {
                continue;
            };
            let Some(track) = report.trajectories.get(r1) else {
                continue;
            };
            let Some(&[_, x, y, yaw]) = track
                .iter()
                .min_by(|a, b| (a[0] - phase.start_s).abs().total_cmp(&(b[0] - phase.start_s).abs()))
            else {
                continue;
            };
            let Ok(targets) = modbot_planner::assembly::roles(conf) else {
                continue;
            };
            for target in targets.iter().filter(|t| t.role >= first_role) {
                let p = modbot_planner::assembly::target_pose(Pose2 { x, y, yaw }, target.stage1);
                add(
                    "staging",
                    Marker::CUBE,
                    p.x,
                    p.y,
                    0.04,
                    color(1.0, 0.5, 0.05),
                    String::new(),
                );
                add(
                    "staging",
                    Marker::TEXT_VIEW_FACING,
                    p.x,
                    p.y,
                    0.04,
                    white.clone(),
                    format!("{conf} Role#{} staging", target.role),
                );
            }
        }
    }
    // The plan: each row at its reference, as the scan placed it.
    for (i, row) in report.plan.iter().enumerate() {
        let at = if row.reference == "target" {
            Some(report.target_m)
        } else {
            report.objects.get(&row.reference).copied()
        };
        let Some([x, y]) = at else { continue };
        add(
            "plan",
            Marker::CYLINDER,
            x,
            y,
            0.05,
            color(0.17, 0.63, 0.17),
            String::new(),
        );
        add(
            "plan",
            Marker::TEXT_VIEW_FACING,
            x,
            y + 0.1 * i as f64,
            0.05,
            white.clone(),
            format!("{} {} {:?} {}", i + 1, row.configuration, row.action, row.reference),
        );
    }
    MarkerArray { markers }
}
