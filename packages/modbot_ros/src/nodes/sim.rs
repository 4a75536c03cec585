//! `sim_node`: the embedded simulator as a ROS node, standing in for Gazebo or a robot.
//!
//! Subscribes `position_controller/commands` (std_msgs/Float64MultiArray, one angle per
//! position-driven joint in controller order) and, for a robot with wheels,
//! `velocity_controller/commands` (one speed per velocity-driven joint), as the generated
//! controllers file declares them; publishes `joint_states`, `odom` (odom → base_link),
//! `tf` (odom → base_link, and every other link in its URDF parent's frame, from the simulated poses),
//! `robot_description` (std_msgs/String, transient local) and, with `publish_clock`,
//! `/clock`. Commands of the wrong length or with non-finite values are logged and dropped.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use modbot_app::recording::Recording;
use modbot_app::ros_frames::SimFrames;
use modbot_app::{Interface, Refusal, SimSession};
use modbot_core::{ModuleCatalog, Scenario, Topology};
use modbot_description::DescriptionConfig;
use modbot_gaits::hormone::{HormoneSettings, Side};
use modbot_msgs::builtin_interfaces::msg::Time;
use modbot_msgs::modbot_msgs::msg::ModuleSensors;
use modbot_msgs::nav_msgs::msg::Odometry;
use modbot_msgs::rosgraph_msgs::msg::Clock;
use modbot_msgs::sensor_msgs::msg::JointState;
use modbot_msgs::std_msgs::msg::Float64;
use modbot_msgs::std_msgs::msg::{Float64MultiArray, Header, String as StringMsg};
use modbot_msgs::tf2_msgs::msg::TFMessage;
use modbot_sim::SimSettings;
use nalgebra::Isometry3;

use crate::error::{Result, RosError};
use crate::params::{Get, NodeConfig, ParamDecl, ParamMap, ParamValue};
use crate::transport::{Level, Pub, Qos, Sub, Throttle, Transport};

/// The node's parameters, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct SimNodeConfig {
    /// Robot (`pp:8`, `py:16`, `pyp:3`).
    pub robot: String,
    /// Scenario YAML ("" = flat ground, μ = 0.2).
    pub world: String,
    /// Physics step, ms (0 = the scenario's).
    pub step_ms: f64,
    /// Rate of joint_states, odom and tf, Hz.
    pub publish_rate_hz: f64,
    /// Simulated seconds per wall second (0 = as fast as possible).
    pub real_time_factor: f64,
    /// Publish `/clock` (for nodes with `use_sim_time`).
    pub publish_clock: bool,
    /// Publish each link's transform in its URDF parent (off when robot_state_publisher runs).
    pub publish_link_tf: bool,
    /// Module catalog file ("" = built-in).
    pub modules_file: String,
    /// Physics engine: `native` (modbot's, the default, as for `modbot run`) or `rapier` (the
    /// cross-check); decision records 0018 and 0033.
    pub engine: modbot_sim::Engine,
    /// A digital-hormone organism to simulate instead of `robot` (`caterpillar:10`, `v:5`,
    /// `scorpion` or a robot file of `cube` modules; "" = none): its module_nodes drive it.
    pub organism: String,
    /// The organism's flags: a caterpillar's pitched module, the scorpion without its tail.
    pub pitched: bool,
    /// See `pitched`.
    pub no_tail: bool,
    /// A module whose node has sent no hinge command for this long (sim time, s) has died:
    /// its connectors let go of its neighbours (0 = never).
    pub dead_after_s: f64,
    /// Wall seconds the organism's physics waits for every module_node's first command.
    pub wait_for_modules_s: f64,
    /// Simulate `world`'s module starts as lone wheel-foot modules (the strategic mission's
    /// six), each on the robot interface's ROS binding under `m1/`, `m2/`, … (records 0062 to
    /// 0064), instead of `robot`.
    pub modules: bool,
    /// Seed of the modules' sensor noise (the IMUs' bias and noise, the cameras').
    pub sensor_seed: u64,
    /// Modules: the module starts drawn from this seed (`seeded_layout`), or the world
    /// file's own (−1).
    pub layout_seed: i64,
    /// Modules: faults injected into the commands and requests the node receives (tests).
    pub faults: crate::faults::Faults,
    /// An MCAP file to record what the node publishes into (tf, joint_states, odom,
    /// robot_description, the commands it applies; "" = none). An existing file is refused.
    pub record: String,
}

impl NodeConfig for SimNodeConfig {
    fn declarations() -> Vec<ParamDecl> {
        let (d, b, st) = (ParamValue::Double, ParamValue::Bool, |v: &str| {
            ParamValue::Str(v.into())
        });
        vec![
            super::robot_decl(),
            ParamDecl::new("world", st(""), "scenario YAML (empty: flat ground)"),
            ParamDecl::new("engine", st("native"), "physics engine: native (default) or rapier"),
            ParamDecl::new("step_ms", d(0.0), "physics step in ms (0: the scenario's)"),
            ParamDecl::new("publish_rate_hz", d(50.0), "rate of joint_states, odom and tf, Hz"),
            ParamDecl::new(
                "real_time_factor",
                d(1.0),
                "simulated seconds per wall second (0: as fast as possible)",
            ),
            ParamDecl::new("publish_clock", b(true), "publish /clock"),
            ParamDecl::new(
                "publish_link_tf",
                b(true),
                "publish each link's transform in its URDF parent link",
            ),
            super::modules_file_decl(),
            ParamDecl::new(
                "organism",
                st(""),
                "digital-hormone organism driven by module_nodes instead of robot: caterpillar:N, v:N, scorpion or a robot file (empty: none)",
            ),
            ParamDecl::new("pitched", b(false), "organism: the caterpillar with its pitched module"),
            ParamDecl::new("no_tail", b(false), "organism: the scorpion without its tail"),
            ParamDecl::new(
                "dead_after_s",
                d(1.0),
                "organism: a module silent for this long (sim time, s) is dead and lets go of its neighbours (0: never)",
            ),
            ParamDecl::new(
                "wait_for_modules_s",
                d(60.0),
                "organism: wall seconds the physics waits for every module_node's first hinge command",
            ),
            ParamDecl::new(
                "modules",
                b(false),
                "simulate the world's module starts as lone wheel-foot modules, each on the robot interface's topics under m1/, m2/, … (the strategic mission's), instead of robot; publish_rate_hz is then the rate commands are applied and readings go out",
            ),
            ParamDecl::new("sensor_seed", ParamValue::Int(0), "modules: seed of the sensors' noise"),
            ParamDecl::new(
                "layout_seed",
                ParamValue::Int(-1),
                "modules: the module starts drawn from this seed, as the mission's seeded layouts (-1: the world file's)",
            ),
            ParamDecl::new(
                "faults",
                st(""),
                "modules: faults injected into the commands and requests received, for tests: latency_ms=A..B,loss=P,seed=N,silence=TOPIC@START+LENGTH (empty: none)",
            ),
            ParamDecl::new(
                "record",
                st(""),
                "MCAP file to record the published messages into (empty: none; an existing file is refused)",
            ),
        ]
    }

    fn from_params(p: &ParamMap) -> std::result::Result<Self, String> {
        let g = Get(p);
        let cfg = SimNodeConfig {
            robot: g.str("robot")?,
            world: g.str("world")?,
            step_ms: g.f64_in("step_ms", 0.0, 20.0)?,
            publish_rate_hz: g.f64_in("publish_rate_hz", 0.1, 1000.0)?,
            real_time_factor: g.f64_in("real_time_factor", 0.0, 1000.0)?,
            publish_clock: g.bool("publish_clock")?,
            publish_link_tf: g.bool("publish_link_tf")?,
            modules_file: g.str("modules_file")?,
            engine: g.str("engine")?.parse()?,
            organism: g.str("organism")?,
            pitched: g.bool("pitched")?,
            no_tail: g.bool("no_tail")?,
            dead_after_s: g.f64_in("dead_after_s", 0.0, 3600.0)?,
            wait_for_modules_s: g.f64_in("wait_for_modules_s", 0.0, 3600.0)?,
            modules: g.bool("modules")?,
            sensor_seed: g.i64_in("sensor_seed", 0, i64::MAX)? as u64,
            layout_seed: g.i64_in("layout_seed", -1, i64::MAX)?,
            faults: crate::faults::Faults::parse(&g.str("faults")?).map_err(|e| format!("parameter `faults`: {e}"))?,
            record: g.str("record")?,
        };
        if cfg.modules {
            if !cfg.organism.is_empty() || !cfg.record.is_empty() {
                return Err("parameter `modules`: not with `organism` or `record`".into());
            }
            let world = cfg.modules_world()?;
            if world.robot_starts.is_empty() {
                return Err(format!(
                    "parameter `modules`: world `{}` has no robot_starts",
                    cfg.world
                ));
            }
            modbot_app::embedded_mission::sensed_modules(&world, &cfg.scan_settings())
                .map_err(|e| format!("parameter `modules`: the modules of world `{}`: {e}", cfg.world))?;
        }
        if !cfg.record.is_empty() {
            let path = std::path::Path::new(&cfg.record);
            if path.exists() {
                return Err(format!(
                    "record: `{}` exists (a recording is never overwritten)",
                    cfg.record
                ));
            }
            let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
            if parent.is_some_and(|p| !p.is_dir()) {
                return Err(format!("record: the folder of `{}` does not exist", cfg.record));
            }
        }
        cfg.topology()?;
        cfg.scenario()?;
        Ok(cfg)
    }
}

impl SimNodeConfig {
    /// The world of `modules`: the file's, its module starts drawn from `layout_seed`.
    pub(crate) fn modules_world(&self) -> std::result::Result<Scenario, String> {
        let world = self.scenario()?;
        super::laid_out(world, self.layout_seed)
    }

    /// The modules' sensor models, seeded with `sensor_seed`.
    pub(crate) fn scan_settings(&self) -> modbot_app::scan::ScanSettings {
        modbot_app::scan::ScanSettings {
            seed: self.sensor_seed,
            ..Default::default()
        }
    }

    fn catalog(&self) -> std::result::Result<ModuleCatalog, String> {
        super::module_catalog(&self.modules_file)
    }

    /// The robot: the organism's when one is set, else `robot`'s; with the organism's
    /// settings.
    fn topology(&self) -> std::result::Result<(Topology, Option<HormoneSettings>), String> {
        let catalog = self.catalog()?;
        if self.organism.is_empty() {
            if self.pitched || self.no_tail {
                return Err("parameters `pitched` and `no_tail` apply to an `organism`".into());
            }
            return modbot_app::load_robot(&self.robot, &catalog)
                .map(|t| (t, None))
                .map_err(|e| format!("robot `{}`: {e}", self.robot));
        }
        modbot_app::organism::load_organism(&self.organism, self.pitched, self.no_tail, &catalog)
            .map(|(t, s)| (t, Some(s)))
            .map_err(|e| format!("organism `{}`: {e}", self.organism))
    }

    /// The world, loaded as `modbot run` loads it (`.yaml`, `.yml`, or the `.sdf`'s scenario).
    pub(crate) fn scenario(&self) -> std::result::Result<Scenario, String> {
        let path = (!self.world.is_empty()).then(|| std::path::Path::new(&self.world));
        modbot_app::load_world(path).map_err(|e| format!("world `{}`: {e}", self.world))
    }
}

/// The node's state: a simulation session of modbot_app and what the messages need.
pub struct SimCore {
    /// The robot on the simulator (commands by interface are checked there).
    pub session: SimSession,
    /// URDF of the robot (published on robot_description).
    pub urdf: String,
    /// joint_states, odom and tf of the simulator (shared with `modbot run --mcap`).
    frames: SimFrames,
    /// Commands dropped: refused or undecodable.
    pub refused: u64,
    /// The organism's modules, when it simulates one.
    pub organism: Option<OrganismCore>,
}

impl SimCore {
    /// Builds the robot and the world (the same session `modbot run` uses).
    pub fn new(cfg: &SimNodeConfig) -> std::result::Result<SimCore, String> {
        let (topology, hormone) = cfg.topology()?;
        let urdf =
            modbot_description::urdf::urdf(&topology, &DescriptionConfig::builtin()).map_err(|e| e.to_string())?;
        let scenario = cfg.scenario()?;
        let mut settings = SimSettings::for_engine(cfg.engine, &scenario);
        if cfg.step_ms > 0.0 {
            settings.step_s = cfg.step_ms / 1000.0;
        }
        let mut session = SimSession::new(topology, &scenario, settings, 0).map_err(|e| e.to_string())?;
        let organism = match hormone {
            Some(_) => Some(OrganismCore::new(&mut session, cfg.dead_after_s)?),
            None => None,
        };
        Ok(SimCore {
            frames: SimFrames::of(&session.sim),
            session,
            urdf,
            refused: 0,
            organism,
        })
    }

    /// Applies a `position_controller` or `velocity_controller` command; the refusal says
    /// why it was dropped and of which kind.
    pub fn command(&mut self, interface: Interface, m: &Float64MultiArray) -> std::result::Result<(), Refusal> {
        let off = m.layout.data_offset as usize;
        let r = self.session.command(interface, m.data.get(off..).unwrap_or(&[]));
        self.refused += u64::from(r.is_err());
        r
    }

    /// Steps the physics until its clock reaches `t` (s; [`modbot_sim::Simulator::advance_to`]).
    pub fn advance_to(&mut self, t: f64) -> std::result::Result<(), String> {
        self.session.sim.advance_to(t).map_err(|e| e.to_string())
    }

    /// Steps the physics `n` times.
    pub fn advance(&mut self, n: usize) -> std::result::Result<(), String> {
        for _ in 0..n {
            self.session.sim.step().map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    fn stamp(&self) -> Time {
        SimFrames::stamp(&self.session.sim)
    }

    /// joint_states: positions and the engine's own joint rates.
    pub fn joint_state(&self) -> JointState {
        self.frames.joint_state(&self.session.sim)
    }

    /// Pose of base_link in odom (the world; the robot starts at the origin).
    pub fn base_pose(&self) -> Isometry3<f64> {
        self.frames.base_pose(&self.session.sim)
    }

    /// odom: base_link's pose and its twist from the engine, in base_link's frame.
    pub fn odometry(&self) -> Odometry {
        self.frames.odometry(&self.session.sim)
    }

    /// tf: odom → base_link, then base_link → each other link when `links`.
    pub fn tf(&self, links: bool) -> TFMessage {
        self.frames.tf(&self.session.sim, links)
    }
}

/// The organism side of sim_node: each module's hinge command in, its sensing out (IR per
/// side, tilt, docked connectors), modules whose node died and links cut let go.
pub struct OrganismCore {
    robot: Topology,
    /// Per module: its hinge joint's name.
    hinge: Vec<Option<String>>,
    /// Per module: the simulator's index of its back half (the tilt sensor's link).
    back: Vec<Option<usize>>,
    /// Per module: its IR sensors' names, B F R L.
    ir: Vec<[String; 4]>,
    /// Per module and side (B F R L): the connection made there.
    port_edge: Vec<[Option<usize>; 4]>,
    /// Per connection (the robot's edges): cut.
    cut: Vec<bool>,
    /// Per module: not dead.
    alive: Vec<bool>,
    /// Per module: sim time of its last hinge command.
    last_cmd: Vec<Option<f64>>,
    dead_after_s: f64,
}

impl OrganismCore {
    /// The organism of `session`'s robot, its IR sensors set on the simulator.
    pub fn new(session: &mut SimSession, dead_after_s: f64) -> std::result::Result<OrganismCore, String> {
        let robot = session.topology.clone();
        session
            .sim
            .set_ir_sensors(modbot_app::organism::ir_sensors(&robot))
            .map_err(|e| e.to_string())?;
        let joints = robot.joints();
        let n = robot.len();
        Ok(OrganismCore {
            hinge: (0..n)
                .map(|i| joints.iter().find(|j| j.module == i).map(|j| j.name.clone()))
                .collect(),
            back: (0..n).map(|i| session.sim.link_index(&robot.link_name(i, 0))).collect(),
            ir: modbot_app::organism::ir_names(&robot),
            port_edge: (0..n)
                .map(|i| {
                    Side::ALL.map(|s| {
                        robot.edges.iter().position(|e| {
                            (e.a == i && e.a_port == s.to_string()) || (e.b == i && e.b_port == s.to_string())
                        })
                    })
                })
                .collect(),
            cut: vec![false; robot.edges.len()],
            alive: vec![true; n],
            last_cmd: vec![None; n],
            dead_after_s,
            robot,
        })
    }

    /// The modules that have not commanded their hinge yet.
    pub fn silent(&self) -> Vec<String> {
        (0..self.robot.len())
            .filter(|&i| self.hinge[i].is_some() && self.last_cmd[i].is_none())
            .map(|i| self.robot.modules[i].name.clone())
            .collect()
    }

    /// The modules' names.
    pub fn modules(&self) -> Vec<String> {
        self.robot.modules.iter().map(|m| m.name.clone()).collect()
    }

    /// Module `i`'s hinge command, rad, at sim time `now` (a dead module's are dropped).
    pub fn command(
        &mut self,
        session: &mut SimSession,
        i: usize,
        rad: f64,
        now: f64,
    ) -> std::result::Result<(), String> {
        if !self.alive.get(i).copied().unwrap_or(false) {
            return Err(format!("module {i} is dead"));
        }
        let Some(joint) = &self.hinge[i] else {
            return Err(format!("module `{}` has no hinge", self.robot.modules[i].name));
        };
        session.sim.set_target(joint, rad).map_err(|e| e.to_string())?;
        self.last_cmd[i] = Some(now);
        Ok(())
    }

    /// Cuts the connection between modules `a` and `b` (`A-B` by name); says what it did.
    pub fn cut_link(&mut self, session: &mut SimSession, text: &str) -> std::result::Result<String, String> {
        let (a, b) = text
            .split_once('-')
            .ok_or_else(|| format!("`{text}`: expected MODULE-MODULE, e.g. m5-m6"))?;
        let find = |n: &str| {
            self.robot
                .modules
                .iter()
                .position(|m| m.name == n.trim())
                .ok_or_else(|| format!("`{text}`: no module `{}`", n.trim()))
        };
        let (ia, ib) = (find(a)?, find(b)?);
        let e = modbot_app::organism::edge_between(&self.robot, ia, ib)
            .ok_or_else(|| format!("`{text}`: the modules are not joined"))?;
        if self.cut[e] {
            return Err(format!("`{text}`: already cut"));
        }
        self.cut_edge(session, e)?;
        Ok(format!("cut {text}"))
    }

    fn cut_edge(&mut self, session: &mut SimSession, e: usize) -> std::result::Result<(), String> {
        modbot_app::organism::cut_edge(session, e).map_err(|e| e.to_string())?;
        self.cut[e] = true;
        Ok(())
    }

    /// Modules silent for `dead_after_s` die: their connections are cut (their connectors let
    /// go, record 0031). Returns the names of those that died now, and the cuts that failed.
    pub fn reap(&mut self, session: &mut SimSession, now: f64) -> (Vec<String>, Vec<String>) {
        let mut died = Vec::new();
        let mut failed = Vec::new();
        if self.dead_after_s <= 0.0 {
            return (died, failed);
        }
        for i in 0..self.robot.len() {
            let silent = self.last_cmd[i].is_some_and(|t| now - t > self.dead_after_s);
            if !(self.alive[i] && silent) {
                continue;
            }
            self.alive[i] = false;
            for e in self.port_edge[i].into_iter().flatten() {
                if !self.cut[e]
                    && let Err(why) = self.cut_edge(session, e)
                {
                    failed.push(why);
                }
            }
            died.push(self.robot.modules[i].name.clone());
        }
        (died, failed)
    }

    /// The physics starts: a module that has not commanded yet counts as having commanded
    /// now, so it is reaped if it stays silent.
    pub fn release(&mut self, now: f64) {
        for t in self.last_cmd.iter_mut() {
            t.get_or_insert(now);
        }
    }

    /// Module `i`'s sensing now.
    pub fn sensors(
        &self,
        i: usize,
        readings: &std::collections::BTreeMap<String, Vec<f64>>,
        poses: &[Isometry3<f64>],
        stamp: Time,
    ) -> ModuleSensors {
        let ir = modbot_app::organism::ir_of(readings, &self.ir[i]);
        let roll_deg = self.back[i]
            .and_then(|l| poses.get(l))
            // The tilt of its hinge axis (y) from the horizontal: 0 upright (or upside down),
            // ±90 rolled onto its side, whatever its yaw and its wave's pitch.
            .map(modbot_sim::sensors::tilt_deg)
            .unwrap_or(0.0);
        let docked = self.port_edge[i].map(|e| e.is_some_and(|e| !self.cut[e]));
        ModuleSensors {
            header: Header {
                stamp,
                frame_id: self.robot.link_name(i, 0),
            },
            ir,
            roll_deg,
            docked,
        }
    }
}

/// The organism's topics on sim_node: per module `<module>/hinge_cmd` in and
/// `<module>/sensors` out, and `cut` (std_msgs/String `A-B`) to cut a connection.
struct OrganismIo<T: Transport> {
    hinge: Vec<T::S<Float64>>,
    sensors: Vec<T::P<ModuleSensors>>,
    cut: T::S<StringMsg>,
}

impl<T: Transport> OrganismIo<T> {
    fn new(t: &mut T, org: &OrganismCore) -> Result<OrganismIo<T>> {
        let mut hinge = Vec::new();
        let mut sensors = Vec::new();
        for m in org.modules() {
            hinge.push(t.subscription::<Float64>(&format!("{m}/hinge_cmd"), Qos::Reliable)?);
            sensors.push(t.publisher::<ModuleSensors>(&format!("{m}/sensors"), Qos::SensorData)?);
        }
        Ok(OrganismIo {
            hinge,
            sensors,
            cut: t.subscription::<StringMsg>("cut", Qos::Reliable)?,
        })
    }

    /// Takes the hinge commands and cuts, steps nothing; logs (rate limited) what it drops.
    fn take(&self, t: &T, core: &mut SimCore, throttle: &mut Throttle) {
        let now = core.session.sim.time();
        let SimCore {
            session,
            organism,
            refused,
            ..
        } = core;
        let Some(org) = organism.as_mut() else {
            return;
        };
        for (i, sub) in self.hinge.iter().enumerate() {
            while let Some(m) = sub.take() {
                if let Err(e) = m.and_then(|m| org.command(session, i, m.data, now)) {
                    *refused += 1;
                    let msg = format!("hinge command of module {} dropped ({} so far): {e}", i, refused);
                    throttle.log(t, "hinge", Level::Warn, &msg);
                }
            }
        }
        while let Some(m) = self.cut.take() {
            match m.and_then(|m| org.cut_link(session, &m.data)) {
                Ok(what) => t.log(Level::Info, &what),
                Err(e) => {
                    throttle.log(t, "cut", Level::Warn, &format!("cut dropped: {e}"));
                }
            }
        }
    }

    /// Publishes every living module's sensing and lets dead modules go.
    fn publish(&self, t: &T, core: &mut SimCore) -> Result<()> {
        let now = core.session.sim.time();
        let stamp = core.stamp();
        let SimCore { session, organism, .. } = core;
        let Some(org) = organism.as_mut() else {
            return Ok(());
        };
        let (died, failed) = org.reap(session, now);
        for why in failed {
            t.log(Level::Error, &format!("letting a dead module go: {why}"));
        }
        for name in died {
            t.log(
                Level::Warn,
                &format!(
                    "module `{name}` has sent nothing for {} s: dead, its connectors let go",
                    org.dead_after_s
                ),
            );
        }
        let readings = session.sim.ir_readings();
        let poses = session.sim.link_poses();
        for (i, p) in self.sensors.iter().enumerate() {
            if org.alive[i] {
                p.publish(org.sensors(i, &readings, &poses, stamp.clone()))?;
            }
        }
        Ok(())
    }
}

/// Runs sim_node until `stop` is set or the physics diverges (an error).
pub fn run<T: Transport>(t: &mut T, cfg: SimNodeConfig, stop: Arc<AtomicBool>) -> Result<()> {
    if cfg.modules {
        return super::modules::run(t, &cfg, stop);
    }
    let mut core = SimCore::new(&cfg).map_err(RosError::Params)?;
    let cmd_sub = t.subscription::<Float64MultiArray>("position_controller/commands", Qos::Reliable)?;
    let vel_sub = if !core.session.interface_joints(Interface::Velocity).is_empty() {
        Some(t.subscription::<Float64MultiArray>("velocity_controller/commands", Qos::Reliable)?)
    } else {
        None
    };
    // Reliable, as robot_state_publisher, ros2_control and Nav2 expect: a default-QoS
    // subscriber matches (record 0043); best-effort subscribers match too.
    let js_pub = t.publisher::<JointState>("joint_states", Qos::Reliable)?;
    let odom_pub = t.publisher::<Odometry>("odom", Qos::Reliable)?;
    let tf_pub = t.publisher::<TFMessage>("tf", Qos::Reliable)?;
    let desc_pub = t.publisher::<StringMsg>("robot_description", Qos::Latched)?;
    // `/clock` offered reliable (as ros_gz_bridge does): rclcpp's and rclpy's time sources
    // (best effort, ClockQoS) and a default-QoS subscriber both match it (record 0045).
    let clock_pub = if cfg.publish_clock {
        Some(t.publisher::<Clock>("/clock", Qos::Reliable)?)
    } else {
        None
    };
    let org_io = match &core.organism {
        Some(org) => Some(OrganismIo::new(t, org)?),
        None => None,
    };
    desc_pub.publish(StringMsg {
        data: core.urdf.clone(),
    })?;
    // Dropping the recording (at the end or on an error) closes the file whole.
    let mut recording = if cfg.record.is_empty() {
        None
    } else {
        let world = cfg.scenario().map_err(RosError::Params)?;
        let r = Recording::create(
            std::path::Path::new(&cfg.record),
            &core.session.sim,
            &core.urdf,
            None,
            &world,
        )
        .map_err(|e| RosError::Params(format!("record: {e}")))?;
        t.log(Level::Info, &format!("recording to {}", cfg.record));
        Some(r)
    };
    t.log(
        Level::Info,
        &format!(
            "{} ({} joints) in `{}`, physics step {} ms, publishing at {} Hz, real-time factor {}",
            if cfg.organism.is_empty() {
                cfg.robot.clone()
            } else {
                format!("organism {} (driven by its module_nodes)", cfg.organism)
            },
            core.session.sim.joint_names().len(),
            if cfg.world.is_empty() { "flat" } else { &cfg.world },
            core.session.sim.step_size() * 1000.0,
            cfg.publish_rate_hz,
            cfg.real_time_factor
        ),
    );
    let frame = 1.0 / cfg.publish_rate_hz;
    // Frames keep their own clock (not a whole number of steps each), so the published
    // rate is the one asked for whatever the physics step (issue 18).
    let t0 = core.session.sim.time();
    let mut frames: u64 = 0;
    let started = Instant::now();
    let mut throttle = Throttle::new(5.0);
    let mut released = false;
    let mut paused = 0.0;
    while !stop.load(Ordering::Relaxed) {
        super::warn_next_start(t, &mut throttle);
        let velocity = std::iter::from_fn(|| vel_sub.as_ref().and_then(|s| s.take()).map(|m| (true, m)));
        let position = std::iter::from_fn(|| cmd_sub.take().map(|m| (false, m)));
        for (wheels, m) in position.chain(velocity) {
            let interface = if wheels {
                Interface::Velocity
            } else {
                Interface::Position
            };
            let r = match m {
                Ok(m) => core.command(interface, &m).map_err(|e| (e.kind(), e.to_string())),
                Err(e) => {
                    core.refused += 1;
                    Err(("undecodable", e))
                }
            };
            if let Err((kind, e)) = r {
                // One line per kind every 5 s of node time, so garbage cannot flood rosout.
                let msg = format!("command dropped ({} so far): {e}", core.refused);
                throttle.log(t, kind, Level::Warn, &msg);
            }
        }
        if let Some(io) = &org_io {
            io.take(t, &mut core, &mut throttle);
        }
        // An organism's physics waits (its clock held at 0) until every module_node has
        // commanded its hinge once, at most `wait_for_modules_s` of wall time: each module
        // reads its tilt sensor at rest (record 0031).
        let waiting = match &core.organism {
            Some(org) if started.elapsed().as_secs_f64() < cfg.wait_for_modules_s => org.silent(),
            _ => Vec::new(),
        };
        if waiting.is_empty() {
            if !released {
                let now = core.session.sim.time();
                if let Some(org) = core.organism.as_mut() {
                    let silent = org.silent();
                    org.release(now);
                    if silent.is_empty() {
                        t.log(Level::Info, "every module has commanded: physics runs");
                    } else {
                        t.log(
                            Level::Warn,
                            &format!(
                                "physics runs without the module_nodes of {} (waited {} s)",
                                silent.join(", "),
                                cfg.wait_for_modules_s
                            ),
                        );
                    }
                }
                released = true;
            }
            frames += 1;
            core.advance_to(t0 + frames as f64 * frame)
                .map_err(|e| RosError::Node(format!("simulation stopped: {e}")))?;
        } else {
            let msg = format!("holding physics for the module_nodes of {}", waiting.join(", "));
            throttle.log(t, "holding", Level::Info, &msg);
            std::thread::sleep(Duration::from_secs_f64(frame));
            paused += frame;
        }
        if let Some(io) = &org_io {
            io.publish(t, &mut core)?;
        }
        let js = core.joint_state();
        let odom = core.odometry();
        let tf = core.tf(cfg.publish_link_tf);
        for r in [js_pub.publish(js), odom_pub.publish(odom), tf_pub.publish(tf)] {
            if let Err(e) = r {
                t.log(Level::Warn, &e.to_string());
            }
        }
        if let Some(c) = &clock_pub {
            let _ = c.publish(Clock { clock: core.stamp() });
        }
        if let Some(r) = recording.as_mut() {
            let sim = &core.session.sim;
            if let Err(e) = r.record(sim, sim.targets()) {
                // A full disk ends the recording, not the simulation.
                t.log(Level::Error, &format!("recording stopped: {e}"));
                recording = None;
            }
        }
        if cfg.real_time_factor > 0.0 {
            let due = Duration::from_secs_f64(core.session.sim.time() / cfg.real_time_factor + paused);
            let el = started.elapsed();
            if due > el {
                std::thread::sleep(due - el);
            }
        }
    }
    if let Some(r) = recording {
        match r.finish() {
            Ok(n) => t.log(Level::Info, &format!("recorded {n} messages to {}", cfg.record)),
            Err(e) => t.log(Level::Error, &format!("recording not closed: {e}")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `cut` topic's requests: a joined pair is cut once; a second cut, an unjoined pair,
    /// an unknown module and a text without `-` are refused naming the problem.
    #[test]
    fn cut_requests_cut_a_joined_pair_once_and_name_bad_ones() {
        let catalog = ModuleCatalog::builtin();
        let (robot, _) =
            modbot_app::organism::load_organism("scorpion", false, false, &catalog).unwrap_or_else(|e| panic!("{e}"));
        let world = Scenario::from_yaml("name: flat\n", "flat").unwrap_or_else(|e| panic!("{e}"));
        let mut session =
            SimSession::new(robot, &world, SimSettings::for_scenario(&world), 0).unwrap_or_else(|e| panic!("{e}"));
        let mut org = OrganismCore::new(&mut session, 1.0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            org.cut_link(&mut session, "head-inner_tail"),
            Ok("cut head-inner_tail".to_string())
        );
        assert_eq!(org.cut.iter().filter(|c| **c).count(), 1);
        for (text, says) in [
            ("inner_tail-head", "already cut"),
            ("head-outer_tail", "not joined"),
            ("head-nobody", "no module `nobody`"),
            ("head", "MODULE-MODULE"),
        ] {
            let e = org.cut_link(&mut session, text).err().unwrap_or_default();
            assert!(e.contains(says), "{text}: {e}");
        }
        assert_eq!(org.cut.iter().filter(|c| **c).count(), 1);
    }
}
