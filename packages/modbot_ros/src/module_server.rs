//! The other side of [`crate::robot`]: any module behind the robot interface (a module of
//! the embedded simulator, a driver of real hardware) served on the topics and services of
//! records 0062 and 0063, as gz-sim with gz_ros2_control and ros_gz_bridge serves a Gazebo
//! model. sim_node runs one per module of its fleet.
//!
//! Readings go out when the module has a newer one (by stamp); connector states when they
//! change (latched); commands are taken as ros2_control's forward command controllers take
//! them — the active controller's, of its joints' number, finite — and anything else is
//! dropped and logged (rate limited).

use modbot_interface::{ConnectorStatus, ControlMode, JointTarget, Module};
use modbot_msgs::controller_manager_msgs::srv::{SwitchController_Request, SwitchController_Response};
use modbot_msgs::geometry_msgs::msg::WrenchStamped;
use modbot_msgs::modbot_msgs::msg::{ConnectorState as ConnectorStateMsg, DockingReadingArray, TagDetectionArray};
use modbot_msgs::sensor_msgs::msg::{Imu as ImuMsg, JointState};
use modbot_msgs::std_msgs::msg::Float64MultiArray;
use modbot_msgs::std_srvs::srv::{SetBool_Request, SetBool_Response};

use crate::faults::{Faults, FaultyTransport};
use crate::interface_msgs;
use crate::robot::{ModuleDescription, POSITION_CONTROLLER, VELOCITY_CONTROLLER, WHEEL_POSITION_CONTROLLER};
use crate::transport::{Level, Pub, Qos, Server, Sub, Throttle, Transport};

/// One port's publishers and service.
struct PortIo<T: Transport> {
    name: String,
    state: T::P<ConnectorStateMsg>,
    docking: T::P<DockingReadingArray>,
    latch: T::Srv<SetBool_Request, SetBool_Response>,
    last_state: Option<ConnectorStatus>,
    last_docking: Option<f64>,
    /// Whether the last frame published had readings (an empty frame goes out once).
    had_readings: bool,
}

/// One module served on ROS 2.
pub struct ModuleServer<T: Transport> {
    desc: ModuleDescription,
    fixed: Vec<usize>,
    wheels: Vec<usize>,
    /// The IMU's variances published with each reading: orientation, rate, acceleration.
    imu_variances: [f64; 3],
    joint_pub: T::P<JointState>,
    imu_pub: T::P<ImuMsg>,
    ft_pub: Option<T::P<WrenchStamped>>,
    tags_pub: Option<T::P<TagDetectionArray>>,
    position_sub: T::S<Float64MultiArray>,
    velocity_sub: T::S<Float64MultiArray>,
    wheel_position_sub: T::S<Float64MultiArray>,
    switch: T::Srv<SwitchController_Request, SwitchController_Response>,
    ports: Vec<PortIo<T>>,
    /// Per joint, the last target its active controller was given.
    targets: Vec<Option<f64>>,
    published: [Option<f64>; 4],
    log: Throttle,
}

/// Why a command message is refused: the log's key and the reason.
fn check_command(m: &Float64MultiArray, n: usize, controller: &str) -> Result<(), (&'static str, String)> {
    if m.data.len() != n {
        let why = format!("{controller}/commands: {} values for {n} joints", m.data.len());
        return Err(("command length", why));
    }
    if let Some(k) = m.data.iter().position(|v| !v.is_finite()) {
        let why = format!("{controller}/commands: data[{k}] = {} is not finite", m.data[k]);
        return Err(("command value", why));
    }
    Ok(())
}

impl<T: Transport> ModuleServer<T> {
    /// Serves `desc` under `<name>/`, relative to the node's namespace, on `t`.
    pub fn new(t: &mut T, desc: ModuleDescription, imu_variances: [f64; 3]) -> Result<Self, String> {
        desc.validate()?;
        let ns = desc.name.clone();
        let mw = |e: crate::error::RosError| e.to_string();
        let mut ports = Vec::with_capacity(desc.ports.len());
        for p in &desc.ports {
            ports.push(PortIo {
                name: p.clone(),
                state: t
                    .publisher(&format!("{ns}/connectors/{p}/state"), Qos::Latched)
                    .map_err(mw)?,
                docking: t
                    .publisher(&format!("{ns}/connectors/{p}/docking"), Qos::SensorData)
                    .map_err(mw)?,
                latch: t
                    .server(&format!("{ns}/connectors/{p}/latch"), "std_srvs", "SetBool")
                    .map_err(mw)?,
                last_state: None,
                last_docking: None,
                had_readings: false,
            });
        }
        let n = desc.joints.len();
        Ok(ModuleServer {
            fixed: (0..n).filter(|&k| !desc.drives[k].velocity).collect(),
            wheels: (0..n).filter(|&k| desc.drives[k].velocity).collect(),
            imu_variances,
            joint_pub: t.publisher(&format!("{ns}/joint_states"), Qos::Reliable).map_err(mw)?,
            imu_pub: t.publisher(&format!("{ns}/imu"), Qos::Reliable).map_err(mw)?,
            ft_pub: if desc.force {
                Some(t.publisher(&format!("{ns}/wheel_ft"), Qos::Reliable).map_err(mw)?)
            } else {
                None
            },
            tags_pub: if desc.camera {
                Some(t.publisher(&format!("{ns}/camera/tags"), Qos::Reliable).map_err(mw)?)
            } else {
                None
            },
            position_sub: t
                .subscription(&format!("{ns}/{POSITION_CONTROLLER}/commands"), Qos::Reliable)
                .map_err(mw)?,
            velocity_sub: t
                .subscription(&format!("{ns}/{VELOCITY_CONTROLLER}/commands"), Qos::Reliable)
                .map_err(mw)?,
            wheel_position_sub: t
                .subscription(&format!("{ns}/{WHEEL_POSITION_CONTROLLER}/commands"), Qos::Reliable)
                .map_err(mw)?,
            switch: t
                .server(
                    &format!("{ns}/controller_manager/switch_controller"),
                    "controller_manager_msgs",
                    "SwitchController",
                )
                .map_err(mw)?,
            ports,
            targets: vec![None; n],
            published: [None; 4],
            log: Throttle::new(2.0),
            desc,
        })
    }

    /// The controller active for the velocity-capable joints.
    fn wheel_controller(&self, module: &dyn Module) -> &'static str {
        match self.wheels.first().map(|&k| module.control_modes()[k]) {
            Some(ControlMode::Position) => WHEEL_POSITION_CONTROLLER,
            _ => VELOCITY_CONTROLLER,
        }
    }

    fn warn(&mut self, t: &T, key: &'static str, msg: &str) {
        let msg = format!("{}: {msg}", self.desc.name);
        self.log.log(t, key, Level::Warn, &msg);
    }

    /// What it serves.
    pub fn description(&self) -> &ModuleDescription {
        &self.desc
    }

    /// Takes the commands and requests that have come and gives them to `module`.
    pub fn take_orders(&mut self, t: &T, module: &mut dyn Module) {
        self.switches(t, module);
        let mut changed = false;
        let active = self.wheel_controller(module);
        let groups = [
            (POSITION_CONTROLLER, self.fixed.clone(), true),
            (VELOCITY_CONTROLLER, self.wheels.clone(), active == VELOCITY_CONTROLLER),
            (
                WHEEL_POSITION_CONTROLLER,
                self.wheels.clone(),
                active == WHEEL_POSITION_CONTROLLER,
            ),
        ];
        for (controller, joints, is_active) in groups {
            loop {
                let sample = match controller {
                    POSITION_CONTROLLER => self.position_sub.take(),
                    VELOCITY_CONTROLLER => self.velocity_sub.take(),
                    _ => self.wheel_position_sub.take(),
                };
                let Some(sample) = sample else { break };
                let checked = sample
                    .map_err(|e| ("command decode", e))
                    .and_then(|m| check_command(&m, joints.len(), controller).map(|()| m));
                match checked {
                    Err((key, e)) => self.warn(t, key, &format!("dropped a command: {e}")),
                    // ros2_control gives an inactive controller's commands to no joint.
                    Ok(_) if !is_active => {
                        self.warn(
                            t,
                            "inactive",
                            &format!("dropped a command: `{controller}` is not active"),
                        );
                    }
                    Ok(m) => {
                        for (&k, v) in joints.iter().zip(m.data) {
                            self.targets[k] = Some(v);
                        }
                        changed = true;
                    }
                }
            }
        }
        if changed {
            self.command(t, module);
        }
        self.latches(t, module);
    }

    /// Gives the module its targets; a joint without one holds (where it is, or still).
    fn command(&mut self, t: &T, module: &mut dyn Module) {
        let now_at = module.joint_states().map(|s| s.position).ok();
        let targets: Vec<JointTarget> = module
            .control_modes()
            .iter()
            .enumerate()
            .map(|(k, mode)| match mode {
                ControlMode::Position => {
                    JointTarget::Position(self.targets[k].unwrap_or_else(|| now_at.as_ref().map_or(0.0, |p| p[k])))
                }
                ControlMode::Velocity => JointTarget::Velocity(self.targets[k].unwrap_or(0.0)),
            })
            .collect();
        if let Err(e) = module.command(&targets) {
            self.warn(t, "refused", &format!("the module refused a command: {e}"));
        }
    }

    fn switches(&mut self, t: &T, module: &mut dyn Module) {
        while let Some(r) = self.switch.take() {
            let (token, r) = match r {
                Ok(x) => x,
                Err(e) => {
                    self.warn(t, "switch", &format!("dropped a switch request: {e}"));
                    continue;
                }
            };
            let answer = self.switch_to(module, &r);
            let response = SwitchController_Response {
                ok: answer.is_ok(),
                message: answer.err().unwrap_or_default(),
            };
            if let Err(e) = self.switch.respond(token, response) {
                self.warn(t, "switch", &format!("answering a switch: {e}"));
            }
        }
    }

    /// Carries out one switch request: the known controllers only, the velocity-capable
    /// joints' pair swapped as a whole.
    fn switch_to(&mut self, module: &mut dyn Module, r: &SwitchController_Request) -> Result<(), String> {
        let known = [POSITION_CONTROLLER, VELOCITY_CONTROLLER, WHEEL_POSITION_CONTROLLER];
        for c in r.activate_controllers.iter().chain(&r.deactivate_controllers) {
            if !known.contains(&c.as_str()) {
                return Err(format!("no controller `{c}` (there are: {})", known.join(", ")));
            }
        }
        let wants = |c: &str| r.activate_controllers.iter().any(|a| a == c);
        let mode = match (wants(VELOCITY_CONTROLLER), wants(WHEEL_POSITION_CONTROLLER)) {
            (true, true) => {
                return Err("velocity_controller and wheel_position_controller claim the same joints".into());
            }
            (true, false) => ControlMode::Velocity,
            (false, true) => ControlMode::Position,
            (false, false) => return Ok(()),
        };
        let Some(&first) = self.wheels.first() else {
            return Err(format!("module `{}` has no joint to switch", self.desc.name));
        };
        let already = module.control_modes()[first] == mode;
        // STRICT: the controller to deactivate must be the one active.
        let active = if already { mode } else { flip(mode) };
        let active_name = match active {
            ControlMode::Velocity => VELOCITY_CONTROLLER,
            ControlMode::Position => WHEEL_POSITION_CONTROLLER,
        };
        if r.strictness == SwitchController_Request::STRICT
            && !r
                .deactivate_controllers
                .iter()
                .all(|d| d == active_name || d == POSITION_CONTROLLER)
        {
            return Err(format!("`{active_name}` is the active one"));
        }
        for &k in &self.wheels {
            module.switch_mode(k, mode).map_err(|e| e.to_string())?;
            self.targets[k] = None;
        }
        Ok(())
    }

    fn latches(&mut self, t: &T, module: &mut dyn Module) {
        for i in 0..self.ports.len() {
            while let Some(r) = self.ports[i].latch.take() {
                let (token, r) = match r {
                    Ok(x) => x,
                    Err(e) => {
                        self.warn(t, "latch", &format!("dropped a latch request: {e}"));
                        continue;
                    }
                };
                let port = self.ports[i].name.clone();
                let done = if r.data {
                    module.engage(&port)
                } else {
                    module.release(&port)
                };
                let response = SetBool_Response {
                    success: done.is_ok(),
                    message: done.err().map(|e| e.to_string()).unwrap_or_default(),
                };
                if let Err(e) = self.ports[i].latch.respond(token, response) {
                    self.warn(t, "latch", &format!("answering a latch order: {e}"));
                }
            }
        }
    }

    /// Publishes what `module` reads that is newer than what went out.
    pub fn publish(&mut self, t: &T, module: &dyn Module) {
        let name = self.desc.name.clone();
        let fresh = |slot: &mut Option<f64>, stamp: f64| {
            let new = slot.is_none_or(|s| stamp > s);
            if new {
                *slot = Some(stamp);
            }
            new
        };
        let mut failed: Vec<String> = Vec::new();
        if let Ok(s) = module.joint_states()
            && fresh(&mut self.published[0], s.stamp)
            && let Err(e) = self
                .joint_pub
                .publish(interface_msgs::joint_state_msg(&s, &self.desc.joints))
        {
            failed.push(e.to_string());
        }
        if let Ok(r) = module.imu()
            && fresh(&mut self.published[1], r.stamp)
            && let Err(e) = self.imu_pub.publish(interface_msgs::imu_msg(
                &r,
                &format!("{name}/imu_link"),
                self.imu_variances,
            ))
        {
            failed.push(e.to_string());
        }
        if let Some(p) = &self.ft_pub
            && let Ok(w) = module.wrench()
            && fresh(&mut self.published[2], w.stamp)
            && let Err(e) = p.publish(interface_msgs::wrench_msg(&w, &format!("{name}/wheel_ft")))
        {
            failed.push(e.to_string());
        }
        if let Some(p) = &self.tags_pub
            && let Ok(Some(f)) = module.tags()
            && fresh(&mut self.published[3], f.stamp)
            && let Err(e) = p.publish(interface_msgs::tag_frame_msg(&f, &format!("{name}/camera_optical")))
        {
            failed.push(e.to_string());
        }
        let now = module.now();
        for p in &mut self.ports {
            let frame = format!("{name}/port_{}", p.name);
            if let Ok(s) = module.connector(&p.name) {
                let same = p
                    .last_state
                    .as_ref()
                    .is_some_and(|l| l.state == s.state && l.partner == s.partner && l.reason == s.reason);
                if !same {
                    if let Err(e) = p.state.publish(interface_msgs::connector_msg(&s, &p.name, &frame)) {
                        failed.push(e.to_string());
                    }
                    p.last_state = Some(s);
                }
            }
            if let Ok(r) = module.docking(&p.name) {
                match r.first().map(|d| d.stamp) {
                    Some(stamp) if p.last_docking.is_none_or(|l| stamp > l) => {
                        p.last_docking = Some(stamp);
                        p.had_readings = true;
                        if let Err(e) = p.docking.publish(interface_msgs::docking_msg(&r, stamp, &frame)) {
                            failed.push(e.to_string());
                        }
                    }
                    None if p.had_readings => {
                        p.had_readings = false;
                        if let Err(e) = p.docking.publish(interface_msgs::docking_msg(&[], now, &frame)) {
                            failed.push(e.to_string());
                        }
                    }
                    _ => {}
                }
            }
        }
        for e in failed {
            self.warn(t, "publish", &e);
        }
    }
}

/// Every module of `sim` served on `t`, each under its name (`m1`, …), its IMU's covariance
/// the simulator's model's: what sim_node serves, and the far side of a [`BusStage`].
pub fn serve_embedded<T: Transport>(
    t: &mut T,
    sim: &modbot_sim::EmbeddedModules,
) -> Result<Vec<ModuleServer<T>>, String> {
    use modbot_interface::Modules;
    let imu = sim.models().imu;
    let variances = [
        imu.tilt_sigma_deg.to_radians().powi(2),
        imu.gyro_sigma_deg_s.to_radians().powi(2),
        imu.accel_sigma_m_s2.powi(2),
    ];
    (0..sim.len())
        .map(|i| {
            let m = sim
                .embedded(i)
                .ok_or_else(|| format!("module {i} is not in the simulator"))?;
            ModuleServer::new(t, ModuleDescription::of_embedded(m), variances)
        })
        .collect()
}

/// Takes the orders that have come for every module of `sim`, runs the world to `t` (s), and
/// publishes what the modules read: one turn of sim_node's loop, and of a [`BusStage`]'s
/// far side.
pub fn serve_turn<T: Transport>(
    node: &T,
    servers: &mut [ModuleServer<T>],
    sim: &mut modbot_sim::EmbeddedModules,
    t: f64,
) -> Result<(), String> {
    use modbot_interface::Modules;
    for (i, s) in servers.iter_mut().enumerate() {
        let m = sim.module(i).map_err(|e| e.to_string())?;
        s.take_orders(node, m);
    }
    sim.advance_to(t).map_err(|e| e.to_string())?;
    for (i, s) in servers.iter_mut().enumerate() {
        let m = sim.module_ref(i).map_err(|e| e.to_string())?;
        s.publish(node, m);
    }
    Ok(())
}

/// How long a [`BusStage`] waits for the modules' first readings, s of simulated time.
pub const READY_WITHIN_S: f64 = 2.0;

/// The embedded simulator served on an in-process bus and driven through the robot
/// interface's ROS binding: what a behaviour meets over ROS 2 — messages and their stamps,
/// requests and their answers, and the network's faults on both sides ([`Faults`]) — in
/// one process, deterministic, at the speed of the simulation (the bus's clock is the
/// simulator's, as `/clock` is under `use_sim_time`).
pub struct BusStage {
    bus: crate::loopback::LoopbackBus,
    sim: modbot_sim::EmbeddedModules,
    node: FaultyTransport<crate::loopback::LoopbackNode>,
    servers: Vec<ModuleServer<FaultyTransport<crate::loopback::LoopbackNode>>>,
    remote: crate::robot::RosModules<FaultyTransport<crate::loopback::LoopbackNode>>,
}

impl BusStage {
    /// Serves every module of `sim`; `faults` reach what each side receives (the behaviours'
    /// readings and the simulator's commands), each side drawing from its own seed.
    pub fn new(sim: modbot_sim::EmbeddedModules, faults: Faults) -> Result<BusStage, String> {
        let bus = crate::loopback::LoopbackBus::new();
        bus.set_now(sim.simulator().time());
        let mut node = FaultyTransport::new(
            bus.node(crate::loopback::identity("sim_node", "/")),
            Faults {
                seed: faults.seed ^ 0x5157,
                ..faults.clone()
            },
        )?;
        let servers = serve_embedded(&mut node, &sim)?;
        let descriptions = servers.iter().map(|s| s.description().clone()).collect();
        let mission = FaultyTransport::new(bus.node(crate::loopback::identity("mission_node", "/")), faults)?;
        let remote = crate::robot::RosModules::new(mission, descriptions)?;
        let mut stage = BusStage {
            bus,
            sim,
            node,
            servers,
            remote,
        };
        stage.wait_for_readings()?;
        Ok(stage)
    }

    /// Runs the world, nothing commanded, until every module's joint states and IMU have
    /// come (at most [`READY_WITHIN_S`] of simulated time), as a mission node waits for its
    /// robots before it starts.
    fn wait_for_readings(&mut self) -> Result<(), String> {
        use modbot_app::embedded::Stage;
        let t0 = self.sim.simulator().time();
        let mut k = 0u32;
        loop {
            if self.remote.awaiting_readings().is_empty() {
                return Ok(());
            }
            k += 1;
            let t = t0 + f64::from(k) * 0.01;
            if t - t0 > READY_WITHIN_S {
                return Err(format!(
                    "the modules' first readings did not come within {READY_WITHIN_S} s"
                ));
            }
            self.advance_to(t)?;
        }
    }

    /// What the faults did, per topic, on the behaviours' side.
    pub fn faults_seen(&self) -> std::collections::BTreeMap<String, crate::faults::FaultStats> {
        self.remote.transport().stats()
    }
}

impl modbot_app::embedded::Stage for BusStage {
    fn modules(&mut self) -> &mut dyn modbot_interface::Modules {
        &mut self.remote
    }

    fn modules_ref(&self) -> &dyn modbot_interface::Modules {
        &self.remote
    }

    fn time(&self) -> f64 {
        self.sim.simulator().time()
    }

    fn truth(&self) -> Option<&dyn modbot_app::embedded::GroundTruth> {
        Some(self.sim.simulator())
    }

    /// The simulator's side takes the orders that have come, the world runs to `t`, the
    /// simulator's side publishes what the modules read, and the behaviours' side takes it.
    fn advance_to(&mut self, t: f64) -> Result<(), String> {
        self.bus.set_now(t);
        self.node.now();
        serve_turn(&self.node, &mut self.servers, &mut self.sim, t)?;
        self.remote.poll();
        Ok(())
    }
}

fn flip(m: ControlMode) -> ControlMode {
    match m {
        ControlMode::Position => ControlMode::Velocity,
        ControlMode::Velocity => ControlMode::Position,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use modbot_app::embedded::wheelfoot_modules;
    use modbot_core::Scenario;
    use modbot_interface::{ConnectorState, Modules};
    use modbot_sim::CameraNoise;
    use modbot_sim::EmbeddedModules;
    use modbot_sim::embedded::SensorModels;

    use super::*;
    use crate::loopback::{LoopbackBus, LoopbackNode, identity};
    use crate::robot::RosModules;

    /// Module 1 at the origin facing +x, module 2 1.2 m ahead facing back, a tag in view.
    fn fleet() -> EmbeddedModules {
        let w = Scenario::from_yaml(
            "name: served\n\
             ground: {friction: 1.0, size_m: [20.0, 20.0]}\n\
             robot_starts:\n  - {xyz: [0.0, 0.0, 0.0], yaw_deg: 0.0}\n  - {xyz: [1.2, 0.0, 0.0], yaw_deg: 180.0}\n\
             markers:\n  - {name: near, tag: target, position_m: [1.0, 0.3], height_m: 0.0695}\n",
            "served",
        )
        .unwrap();
        wheelfoot_modules(&w, SensorModels::standard(), CameraNoise::NONE, 7).unwrap()
    }

    struct Rig {
        bus: LoopbackBus,
        sim: EmbeddedModules,
        node: LoopbackNode,
        server: ModuleServer<LoopbackNode>,
        remote: RosModules<LoopbackNode>,
    }

    impl Rig {
        fn new() -> Rig {
            let sim = fleet();
            let bus = LoopbackBus::new();
            let desc = ModuleDescription::of_embedded(sim.embedded(0).unwrap());
            let mut node = bus.node(identity("sim", "/"));
            let server = ModuleServer::new(&mut node, desc.clone(), [1e-4, 1e-5, 1e-3]).unwrap();
            let remote = RosModules::new(bus.node(identity("mission", "/")), vec![desc]).unwrap();
            Rig {
                bus,
                sim,
                node,
                server,
                remote,
            }
        }

        /// Simulates `seconds` at 100 Hz, serving module 1 and reading it back each tick.
        fn run(&mut self, seconds: f64) {
            let t0 = self.sim.simulator().time();
            for k in 1..=(seconds * 100.0).round() as usize {
                let t = t0 + k as f64 * 0.01;
                self.server.take_orders(&self.node, self.sim.module(0).unwrap());
                self.sim.advance_to(t).unwrap();
                self.bus.set_now(t);
                self.server.publish(&self.node, self.sim.module_ref(0).unwrap());
                self.remote.poll();
            }
        }
    }

    /// What the module reads arrives as it read it: joint states, IMU, the camera's tags
    /// (module 2 and the marker), the connectors' states.
    #[test]
    fn a_served_module_reads_remotely_as_it_reads_itself() {
        let mut rig = Rig::new();
        rig.run(0.6);
        let here = rig.sim.module_ref(0).unwrap();
        let there = rig.remote.module_ref(0).unwrap();
        let (a, b) = (here.joint_states().unwrap(), there.joint_states().unwrap());
        // A stamp crosses the wire in whole nanoseconds.
        assert!((a.stamp - b.stamp).abs() < 1e-9, "{} / {}", a.stamp, b.stamp);
        for (x, y) in a.position.iter().zip(&b.position) {
            assert!((x - y).abs() < 1e-12, "{a:?} / {b:?}");
        }
        let (a, b) = (here.imu().unwrap(), there.imu().unwrap());
        assert!((a.stamp - b.stamp).abs() < 1e-9 && a.orientation.angle_to(&b.orientation) < 1e-9);
        let (a, b) = (here.tags().unwrap().unwrap(), there.tags().unwrap().unwrap());
        assert!((a.stamp - b.stamp).abs() < 1e-9, "{} / {}", a.stamp, b.stamp);
        let ids = |f: &modbot_interface::TagFrame| {
            let mut v: Vec<String> = f.detections.iter().map(|d| d.id.clone()).collect();
            v.sort();
            v
        };
        assert_eq!(ids(&a), ids(&b));
        assert!(ids(&a).contains(&"near".to_string()), "{:?}", ids(&a));
        for d in &a.detections {
            let e = b.find(&d.id).unwrap();
            assert!((d.position - e.position).norm() < 1e-12, "{}", d.id);
        }
        for p in here.ports() {
            assert_eq!(
                here.connector(p).unwrap().state,
                there.connector(p).unwrap().state,
                "{p}"
            );
        }
    }

    /// Orders given remotely move the simulated module: back joints to their targets (the
    /// servo reaches them), the wheel switched to position control and turned, a latch that
    /// finds no partner reporting failed after its engage time.
    #[test]
    fn orders_given_remotely_reach_the_module() {
        let mut rig = Rig::new();
        rig.run(0.2);
        let names = rig.remote.module_ref(0).unwrap().joint_names().to_vec();
        let front = names.iter().position(|n| n.contains("front")).unwrap();
        let back: Vec<usize> = (0..names.len()).filter(|&k| names[k].contains("back_joint")).collect();
        assert_eq!(back.len(), 2, "{names:?}");
        let m = rig.remote.module(0).unwrap();
        m.switch_mode(front, ControlMode::Position).unwrap();
        rig.run(0.05);
        assert_eq!(
            rig.sim.module_ref(0).unwrap().control_modes()[front],
            ControlMode::Position
        );
        let start = rig.remote.module_ref(0).unwrap().joint_states().unwrap().position;
        let mut targets: Vec<JointTarget> = start.iter().map(|&p| JointTarget::Position(p)).collect();
        targets[back[0]] = JointTarget::Position(start[back[0]] + 0.3);
        targets[front] = JointTarget::Position(start[front] + 0.5);
        for _ in 0..150 {
            rig.remote.module(0).unwrap().command(&targets).unwrap();
            rig.run(0.01);
        }
        let truth = rig.sim.module_ref(0).unwrap().joint_states().unwrap().position;
        for k in [back[0], front] {
            assert!(
                (truth[k] - targets[k].value()).abs() < 0.05,
                "{}: {} for {}",
                names[k],
                truth[k],
                targets[k].value()
            );
        }
        // A latch with nothing in front of it: engaging, then failed.
        let port = rig.remote.module_ref(0).unwrap().ports()[0].clone();
        rig.remote.module(0).unwrap().engage(&port).unwrap();
        assert_eq!(
            rig.remote.module_ref(0).unwrap().connector(&port).unwrap().state,
            ConnectorState::Engaging
        );
        rig.run(0.5);
        let s = rig.remote.module_ref(0).unwrap().connector(&port).unwrap();
        assert_eq!(s.state, ConnectorState::Failed, "{s:?}");
        assert_eq!(
            rig.sim.module_ref(0).unwrap().connector(&port).unwrap().state,
            ConnectorState::Failed
        );
    }

    /// Commands of the wrong length, with a NaN, or for an inactive controller are dropped
    /// and logged; an unknown controller's switch is refused naming it.
    #[test]
    fn garbage_orders_are_dropped_and_logged() {
        let mut rig = Rig::new();
        let mut probe = rig.bus.node(identity("probe", "/m1"));
        let pos = probe
            .publisher::<Float64MultiArray>("position_controller/commands", Qos::Reliable)
            .unwrap();
        let wheel = probe
            .publisher::<Float64MultiArray>("wheel_position_controller/commands", Qos::Reliable)
            .unwrap();
        let cm = probe
            .client::<SwitchController_Request, SwitchController_Response>(
                "controller_manager/switch_controller",
                "controller_manager_msgs",
                "SwitchController",
            )
            .unwrap();
        let n = rig.server.fixed.len();
        pos.publish(Float64MultiArray {
            data: vec![0.0; n + 1],
            ..Default::default()
        })
        .unwrap();
        let mut nan = vec![0.0; n];
        nan[0] = f64::NAN;
        pos.publish(Float64MultiArray {
            data: nan,
            ..Default::default()
        })
        .unwrap();
        wheel
            .publish(Float64MultiArray {
                data: vec![0.0],
                ..Default::default()
            })
            .unwrap();
        let id = crate::transport::Client::call(
            &cm,
            &SwitchController_Request {
                activate_controllers: vec!["arm_controller".into()],
                ..Default::default()
            },
        )
        .unwrap();
        rig.run(0.05);
        let logs: Vec<String> = rig.bus.logs().into_iter().map(|l| l.msg).collect();
        for want in [
            "values for",
            "is not finite",
            "`wheel_position_controller` is not active",
        ] {
            assert!(logs.iter().any(|l| l.contains(want)), "{want}: {logs:?}");
        }
        let r = crate::transport::Client::response(&cm, &id).unwrap().unwrap();
        assert!(!r.ok && r.message.contains("`arm_controller`"), "{r:?}");
        assert_eq!(
            rig.sim.module_ref(0).unwrap().control_modes(),
            ModuleDescription::of_embedded(rig.sim.embedded(0).unwrap()).modes
        );
    }
}
