//! `sim_node`: the embedded simulator as a ROS node, standing in for Gazebo or a robot.
//!
//! Subscribes `position_controller/commands` (std_msgs/Float64MultiArray, one angle per
//! position-driven joint in controller order) and, for a robot with wheels,
//! `velocity_controller/commands` (one speed per velocity-driven joint), as the generated
//! controllers file declares them; publishes `joint_states`, `odom` (odom → base_link),
//! `tf` (odom → base_link and base_link → every other link from the simulated poses),
//! `robot_description` (std_msgs/String, transient local) and, with `publish_clock`,
//! `/clock`. Commands of the wrong length or with non-finite values are logged and dropped.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use modbot_app::{Interface, Refusal, SimSession};
use modbot_core::{ModuleCatalog, Scenario};
use modbot_description::DescriptionConfig;
use modbot_msgs::builtin_interfaces::msg::Time;
use modbot_msgs::nav_msgs::msg::Odometry;
use modbot_msgs::rosgraph_msgs::msg::Clock;
use modbot_msgs::sensor_msgs::msg::JointState;
use modbot_msgs::std_msgs::msg::{Float64MultiArray, Header, String as StringMsg};
use modbot_msgs::tf2_msgs::msg::TFMessage;
use modbot_sim::SimSettings;
use nalgebra::Isometry3;

use crate::convert;
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
    /// Publish base_link → link transforms (off when robot_state_publisher runs).
    pub publish_link_tf: bool,
    /// Module catalog file ("" = built-in).
    pub modules_file: String,
    /// Physics engine: `rapier` (the node's default for now) or `native` (decision record
    /// 0018: the mission test's goal is at the edge of what the executive's steering reaches,
    /// and the native snake misses it by a few centimetres).
    pub engine: modbot_sim::Engine,
}

impl NodeConfig for SimNodeConfig {
    fn declarations() -> Vec<ParamDecl> {
        let (d, b, st) = (ParamValue::Double, ParamValue::Bool, |v: &str| {
            ParamValue::Str(v.into())
        });
        vec![
            super::robot_decl(),
            ParamDecl::new("world", st(""), "scenario YAML (empty: flat ground)"),
            ParamDecl::new("engine", st("rapier"), "physics engine: rapier (default) or native"),
            ParamDecl::new("step_ms", d(0.0), "physics step in ms (0: the scenario's)"),
            ParamDecl::new("publish_rate_hz", d(50.0), "rate of joint_states, odom and tf, Hz"),
            ParamDecl::new(
                "real_time_factor",
                d(1.0),
                "simulated seconds per wall second (0: as fast as possible)",
            ),
            ParamDecl::new("publish_clock", b(true), "publish /clock"),
            ParamDecl::new("publish_link_tf", b(true), "publish base_link -> link transforms"),
            super::modules_file_decl(),
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
        };
        let catalog = cfg.catalog()?;
        modbot_app::load_robot(&cfg.robot, &catalog).map_err(|e| format!("robot `{}`: {e}", cfg.robot))?;
        cfg.scenario()?;
        Ok(cfg)
    }
}

impl SimNodeConfig {
    fn catalog(&self) -> std::result::Result<ModuleCatalog, String> {
        super::module_catalog(&self.modules_file)
    }

    /// The world, loaded as `modbot run` loads it (`.yaml`, `.yml`, or the `.sdf`'s scenario).
    fn scenario(&self) -> std::result::Result<Scenario, String> {
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
    link_names: Vec<String>,
    base: usize,
    /// Commands dropped: refused or undecodable.
    pub refused: u64,
}

impl SimCore {
    /// Builds the robot and the world (the same session `modbot run` uses).
    pub fn new(cfg: &SimNodeConfig) -> std::result::Result<SimCore, String> {
        let catalog = cfg.catalog()?;
        let topology =
            modbot_app::load_robot(&cfg.robot, &catalog).map_err(|e| format!("robot `{}`: {e}", cfg.robot))?;
        let urdf =
            modbot_description::urdf::urdf(&topology, &DescriptionConfig::builtin()).map_err(|e| e.to_string())?;
        let scenario = cfg.scenario()?;
        let mut settings = SimSettings::for_engine(cfg.engine, &scenario);
        if cfg.step_ms > 0.0 {
            settings.step_s = cfg.step_ms / 1000.0;
        }
        let session = SimSession::new(topology, &scenario, settings, 0).map_err(|e| e.to_string())?;
        let model = &session.robot.model;
        Ok(SimCore {
            link_names: model.links.iter().map(|l| l.name.clone()).collect(),
            base: model.link("base_link").unwrap_or(model.root),
            session,
            urdf,
            refused: 0,
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

    /// Steps the physics `n` times.
    pub fn advance(&mut self, n: usize) -> std::result::Result<(), String> {
        for _ in 0..n {
            self.session.sim.step().map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    fn stamp(&self) -> Time {
        Time::from_secs_f64(self.session.sim.time())
    }

    /// joint_states: positions and the engine's own joint rates.
    pub fn joint_state(&self) -> JointState {
        JointState {
            header: Header {
                stamp: self.stamp(),
                frame_id: String::new(),
            },
            name: self.session.sim.joint_names().to_vec(),
            position: self.session.sim.joint_positions(),
            velocity: self.session.sim.joint_velocities(),
            effort: Vec::new(),
        }
    }

    /// Pose of base_link in odom (the world; the robot starts at the origin).
    pub fn base_pose(&self) -> Isometry3<f64> {
        self.session.sim.link_poses()[self.base]
    }

    /// odom: base_link's pose and its twist from the engine, in base_link's frame.
    pub fn odometry(&self) -> Odometry {
        let p = self.base_pose();
        let t = self.session.sim.link_twists()[self.base];
        let inv = p.rotation.inverse();
        convert::odometry(self.stamp(), &p, &(inv * t.linear), &(inv * t.angular))
    }

    /// tf: odom → base_link, then base_link → each other link when `links`.
    pub fn tf(&self, links: bool) -> TFMessage {
        let poses = self.session.sim.link_poses();
        let base = poses[self.base];
        let mut transforms = vec![convert::transform(self.stamp(), "odom", "base_link", &base)];
        if links {
            let inv = base.inverse();
            for (i, (name, pose)) in self.link_names.iter().zip(&poses).enumerate() {
                if i != self.base {
                    transforms.push(convert::transform(self.stamp(), "base_link", name, &(inv * pose)));
                }
            }
        }
        TFMessage { transforms }
    }
}

/// Runs sim_node until `stop` is set or the physics diverges (an error).
pub fn run<T: Transport>(t: &mut T, cfg: SimNodeConfig, stop: Arc<AtomicBool>) -> Result<()> {
    let mut core = SimCore::new(&cfg).map_err(RosError::Params)?;
    let cmd_sub = t.subscription::<Float64MultiArray>("position_controller/commands", Qos::Reliable)?;
    let vel_sub = if !core.session.interface_joints(Interface::Velocity).is_empty() {
        Some(t.subscription::<Float64MultiArray>("velocity_controller/commands", Qos::Reliable)?)
    } else {
        None
    };
    let js_pub = t.publisher::<JointState>("joint_states", Qos::SensorData)?;
    let odom_pub = t.publisher::<Odometry>("odom", Qos::SensorData)?;
    let tf_pub = t.publisher::<TFMessage>("tf", Qos::Reliable)?;
    let desc_pub = t.publisher::<StringMsg>("robot_description", Qos::Latched)?;
    let clock_pub = if cfg.publish_clock {
        Some(t.publisher::<Clock>("/clock", Qos::Clock)?)
    } else {
        None
    };
    desc_pub.publish(StringMsg {
        data: core.urdf.clone(),
    })?;
    t.log(
        Level::Info,
        &format!(
            "{} ({} joints) in `{}`, physics step {} ms, publishing at {} Hz, real-time factor {}",
            cfg.robot,
            core.session.sim.joint_names().len(),
            if cfg.world.is_empty() { "flat" } else { &cfg.world },
            core.session.sim.step_size() * 1000.0,
            cfg.publish_rate_hz,
            cfg.real_time_factor
        ),
    );
    let frame = 1.0 / cfg.publish_rate_hz;
    let substeps = (frame / core.session.sim.step_size()).round().max(1.0) as usize;
    let started = Instant::now();
    let mut throttle = Throttle::new(5.0);
    while !stop.load(Ordering::Relaxed) {
        for (k, v) in t.param_changes() {
            t.log(
                Level::Warn,
                &format!("parameter `{k}` = {v:?} takes effect at the next start"),
            );
        }
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
        core.advance(substeps)
            .map_err(|e| RosError::Node(format!("simulation stopped: {e}")))?;
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
        if cfg.real_time_factor > 0.0 {
            let due = Duration::from_secs_f64(core.session.sim.time() / cfg.real_time_factor);
            let el = started.elapsed();
            if due > el {
                std::thread::sleep(due - el);
            }
        }
    }
    Ok(())
}
