//! `mission_node`: the strategic mission on the ROS graph (issues 15 and 50, records 0052
//! and 0064). One node owns the six modules' controllers — the scan, the modelling, the
//! roles, the plan and the sequencer with the assembly, reassembly and the configurations'
//! controllers, modbot_app's [`run_mission_staged`] — and reaches the modules only through
//! the robot interface's ROS binding (`m1/…` to `m6/…`: joint states, IMU, wheel
//! force/torque, the cameras' tags, the connectors; records 0062 and 0063), on its own
//! 100 Hz tick of the node's clock (`/clock` under `use_sim_time`). Whatever stands behind
//! those topics runs by itself: sim_node `modules:=true` free-running, a Gazebo world, real
//! modules. The deliberative search that the source's template is checked against is
//! planner_node's (`planner:=node`): the modelled start and target go out on `planner/start`
//! and `planner/goal` (planner_node's `odom` and `goal_pose`), its `strategic_plan` comes
//! back. Each phase as it ends is published on `mission/status` (JSON of the phase); at the
//! end, the mission's summary on `mission/summary` (latched JSON) and markers of the roles,
//! the staging points and the plan on `mission/markers` (latched, frame `odom`: the
//! simulator's world is its odom frame, as in launch/strategic_mission.launch.yaml). Where a
//! simulator publishes the world's truth (`ground_truth/poses`) the summary says how far
//! from the target the modules ended; without it, the mission's own word. The node exits 0
//! when the mission reached the target, 1 with the phase and the reason otherwise.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use modbot_app::embedded_mission::{run_mission_staged, sensed_modules};
use modbot_app::mission::{MissionReport, MissionSettings, searched_configurations};
use modbot_core::Scenario;
use modbot_msgs::builtin_interfaces::msg::{Duration as RosDuration, Time};
use modbot_msgs::geometry_msgs::msg::{Point, Pose, PoseStamped, Quaternion, Vector3};
use modbot_msgs::modbot_msgs::msg::StrategicPlan;
use modbot_msgs::nav_msgs::msg::Odometry;
use modbot_msgs::std_msgs::msg::{ColorRGBA, Header, String as StringMsg};
use modbot_msgs::visualization_msgs::msg::{Marker, MarkerArray};
use modbot_planner::sequencer::Pose2;

use crate::error::{Result, RosError};
use crate::faults::{Faults, FaultyTransport};
use crate::params::{Get, NodeConfig, ParamDecl, ParamMap, ParamValue};
use crate::robot::ModuleDescription;
use crate::ros_stage::RosStage;
use crate::transport::{Level, Pub, Qos, Shared, Sub, Transport};

/// The node's parameters, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct MissionNodeConfig {
    /// The mission's world file (six module starts, a ground obstacle, a lath, a target):
    /// the same file sim_node simulates.
    pub world: String,
    /// Wall seconds the modules have to show their first readings.
    pub wait_for_modules_s: f64,
    /// Wall seconds the clock may stand still while the mission waits for its next tick.
    pub stall_s: f64,
    /// Who answers the deliberative search: planner_node (`node`) or this node (`local`).
    pub planner: String,
    /// Wall seconds planner_node has to answer, s.
    pub planner_timeout_s: f64,
    /// Wall seconds the node stays after the mission, offering its latched summary and
    /// markers (the launch ends with it), s.
    pub linger_s: f64,
    /// The module starts drawn from this seed (`seeded_layout`), or the world file's own
    /// (−1): sim_node's `layout_seed`.
    pub layout_seed: i64,
    /// Faults injected into what the node receives (tests; `FaultyTransport`'s spec, ""
    /// none): latency, loss, silence.
    pub faults: Faults,
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
                "layout_seed",
                ParamValue::Int(-1),
                "the module starts drawn from this seed, as sim_node's layout_seed (-1: the world file's)",
            ),
            ParamDecl::new(
                "wait_for_modules_s",
                ParamValue::Double(60.0),
                "wall seconds the modules (m1 … m6) have to publish their first joint_states and imu, s",
            ),
            ParamDecl::new(
                "stall_s",
                ParamValue::Double(30.0),
                "wall seconds the clock may stand still before the mission ends (a simulator gone), s",
            ),
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
            ParamDecl::new(
                "faults",
                ParamValue::Str(String::new()),
                "faults injected into what the node receives, for tests: latency_ms=A..B,loss=P,seed=N,silence=TOPIC@START+LENGTH (empty: none)",
            ),
        ]
    }

    fn from_params(p: &ParamMap) -> std::result::Result<Self, String> {
        let g = Get(p);
        let cfg = MissionNodeConfig {
            world: g.str("world")?,
            layout_seed: g.i64_in("layout_seed", -1, i64::MAX)?,
            wait_for_modules_s: g.f64_in("wait_for_modules_s", 0.1, 3600.0)?,
            stall_s: g.f64_in("stall_s", 0.1, 3600.0)?,
            planner: g.str("planner")?,
            planner_timeout_s: g.f64_in("planner_timeout_s", 0.1, 3600.0)?,
            linger_s: g.f64_in("linger_s", 0.0, 86400.0)?,
            faults: Faults::parse(&g.str("faults")?).map_err(|e| format!("parameter `faults`: {e}"))?,
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
        let world = modbot_app::load_world(Some(std::path::Path::new(&self.world)))
            .map_err(|e| format!("parameter `world` = `{}`: {e}", self.world))?;
        super::laid_out(world, self.layout_seed)
    }
}

/// What the mission's modules offer on ROS: six lone wheel-foot modules `m1` … `m6`, as the
/// wheel-foot module's model describes them (its joints and motors, its five ports, its
/// camera and its wheel's force sensor — what its robot_description and controllers file
/// declare).
fn module_descriptions(world: &Scenario) -> std::result::Result<Vec<ModuleDescription>, String> {
    use modbot_interface::Modules;
    let model = sensed_modules(world, &Default::default())?;
    (0..model.len())
        .map(|i| {
            model
                .embedded(i)
                .map(ModuleDescription::of_embedded)
                .ok_or_else(|| format!("module {i} is not in the model"))
        })
        .collect()
}

/// Runs the mission once; returns when it has ended (or at once when `stop` is set).
pub fn run<T: Transport>(t: &mut T, cfg: MissionNodeConfig, stop: Arc<AtomicBool>) -> Result<()> {
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
    let descriptions = module_descriptions(&world).map_err(RosError::Params)?;
    let names: Vec<String> = descriptions.iter().map(|d| d.name.clone()).collect();
    // The node's connection is held at once by the modules' binding (behind the faults, when
    // a test injects them), the planner's client and the progress log.
    let node = Shared::new(&mut *t);
    let faulty = FaultyTransport::new(node.clone(), cfg.faults.clone()).map_err(RosError::Params)?;
    let mut stage = RosStage::new(faulty, descriptions, cfg.stall_s, Arc::clone(&stop)).map_err(RosError::Node)?;
    if stop.load(Ordering::Relaxed) {
        return Ok(());
    }
    node.log(
        Level::Info,
        &format!(
            "waiting for the modules {} on the robot interface's topics",
            names.join(", ")
        ),
    );
    stage
        .wait_for_readings(cfg.wait_for_modules_s)
        .map_err(RosError::Node)?;
    node.log(
        Level::Info,
        &format!("the modules are up at {:.3} s: the mission starts", node.now()),
    );
    let settings = MissionSettings::default();
    let wall = std::time::Instant::now();
    let report = {
        let mut search = |w: &Scenario| -> std::result::Result<Vec<String>, String> {
            if cfg.planner == "local" {
                return searched_configurations(w);
            }
            ask_planner(
                &node,
                w,
                (&start_pub, &goal_pub, &plan_sub),
                cfg.planner_timeout_s,
                &stop,
            )
        };
        run_mission_staged(&mut stage, &world, &settings, &mut search, &mut |p| {
            node.log(
                if p.outcome == "ok" { Level::Info } else { Level::Warn },
                &format!(
                    "[{:8.1} – {:8.1} s] {} {}: {}",
                    p.start_s, p.end_s, p.phase, p.outcome, p.detail
                ),
            );
            let json = serde_json::to_string(p).unwrap_or_default();
            if let Err(e) = status.publish(StringMsg { data: json }) {
                node.log(Level::Warn, &format!("mission/status not sent: {e}"));
            }
        })
        .map_err(RosError::Node)?
    };
    let wall_s = wall.elapsed().as_secs_f64();
    let faults: serde_json::Map<String, serde_json::Value> = stage
        .transport()
        .stats()
        .into_iter()
        .map(|(topic, f)| {
            (
                topic,
                serde_json::json!({"received": f.received, "lost": f.lost, "resent": f.resent,
                    "stale": f.stale, "silenced": f.silenced, "delivered": f.delivered}),
            )
        })
        .collect();
    if !faults.is_empty() {
        node.log(
            Level::Info,
            &format!(
                "the injected faults on what the node received: {}",
                serde_json::Value::Object(faults.clone())
            ),
        );
    }
    let json = serde_json::json!({
        "world": report.world,
        "reached": report.reached,
        "final_distance_m": report.final_distance_m,
        "final_heading_error_deg": report.final_heading_error_deg,
        "failure": report.failure,
        "roles": report.roles.iter().map(|m| m + 1).collect::<Vec<_>>(),
        "phases": report.phases,
        "docks": report.docks,
        "simulated_s": report.sim_s,
        "wall_s": wall_s,
        "searched_configurations": report.searched_configurations,
        "faults": faults,
    });
    summary.publish(StringMsg { data: json.to_string() })?;
    markers.publish(mission_markers(&report))?;
    let line = format!(
        "mission `{}`: {} — {} after {:.1} s of the clock ({:.1} s wall)",
        report.world,
        match &report.failure {
            None if report.reached => "reached the target".to_string(),
            None => "ended short of the target".to_string(),
            Some(f) => format!("failed: {f}"),
        },
        if report.final_distance_m.is_finite() {
            format!(
                "{:.3} m and {:.1}° from the target by the world's truth",
                report.final_distance_m, report.final_heading_error_deg
            )
        } else {
            "no ground truth to measure it by".to_string()
        },
        report.sim_s,
        wall_s,
    );
    node.log(if report.reached { Level::Info } else { Level::Error }, &line);
    drop(stage);
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
