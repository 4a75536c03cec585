//! The robot interface's ROS 2 binding (issue 50; records 0062, 0063): one [`RosModule`] per
//! module namespace reads the module's topics and sends its commands, so that the behaviours
//! of `modbot_behaviours` run the same against sim_node, a Gazebo world through
//! ros_gz_bridge and gz_ros2_control, or a real module's drivers.
//!
//! Readings are the newest by their header stamp (a sample delayed behind a newer one is
//! dropped: latency reorders), each checked by [`crate::interface_msgs`]; a bad one is
//! dropped and logged (rate limited) and the last good one stays. Commands go out at once:
//! joint targets on the ros2_control forward command controllers' topics, a mode switch as
//! a `controller_manager/switch_controller` request, a latch order as a
//! `connectors/<port>/latch` request. A request not answered within [`RESEND_S`] is sent
//! again (a request sent before discovery has matched the server is lost), so a lossy link
//! delays an order but does not lose it.

use modbot_interface::{
    Clock, ConnectorState, ConnectorStatus, Connectors, ControlMode, DockingReading, ForceTorque, Imu, ImuReading,
    JointStates, JointTarget, Joints, Module, Modules, Result, RobotError, TagCamera, TagFrame, Wrench,
};
use modbot_msgs::builtin_interfaces::msg::Duration as RosDuration;
use modbot_msgs::controller_manager_msgs::srv::{SwitchController_Request, SwitchController_Response};
use modbot_msgs::geometry_msgs::msg::WrenchStamped;
use modbot_msgs::modbot_msgs::msg::{ConnectorState as ConnectorStateMsg, DockingReadingArray, TagDetectionArray};
use modbot_msgs::sensor_msgs::msg::{Imu as ImuMsg, JointState};
use modbot_msgs::std_msgs::msg::Float64MultiArray;
use modbot_msgs::std_srvs::srv::{SetBool_Request, SetBool_Response};

use crate::interface_msgs;
use crate::transport::{Client, Level, Pub, Qos, Sub, Throttle, Transport};

/// A request unanswered this long (node time, s) is sent again.
pub const RESEND_S: f64 = 1.0;

/// The forward command controller of the joints that only run as position servos.
pub const POSITION_CONTROLLER: &str = "position_controller";
/// The forward command controller of the joints that run as velocity drives.
pub const VELOCITY_CONTROLLER: &str = "velocity_controller";
/// The forward command controller of the joints that can switch, in position mode
/// (inactive at start when they start as velocity drives).
pub const WHEEL_POSITION_CONTROLLER: &str = "wheel_position_controller";

/// What one joint's motor can run as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JointModes {
    /// As a position servo.
    pub position: bool,
    /// As a velocity drive.
    pub velocity: bool,
}

/// What a module offers, as its description (URDF, controllers file) says: the binding
/// subscribes and commands exactly this.
#[derive(Debug, Clone, PartialEq)]
pub struct ModuleDescription {
    /// Its name, which is its namespace without the slash (`m3`).
    pub name: String,
    /// Its joints, command order.
    pub joints: Vec<String>,
    /// Per joint, the modes its motor has.
    pub drives: Vec<JointModes>,
    /// Per joint, its mode at start (the active controllers').
    pub modes: Vec<ControlMode>,
    /// Its ports.
    pub ports: Vec<String>,
    /// Whether it has the mast camera.
    pub camera: bool,
    /// Whether it has the wheel force/torque sensor.
    pub force: bool,
}

impl ModuleDescription {
    /// Checks the description, naming the field: names that are valid ROS name tokens and
    /// unique, lists of one length, start modes the motors have, and — since ros2_control
    /// switches whole controllers — every velocity-capable joint able to switch, all of them
    /// starting in one mode, or none able to.
    pub fn validate(&self) -> std::result::Result<(), String> {
        let token = |what: &str, s: &str| {
            let ok = !s.is_empty()
                && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !s.starts_with(|c: char| c.is_ascii_digit());
            if ok {
                Ok(())
            } else {
                Err(format!("{what} `{s}`: not a ROS name token (letters, digits, `_`)"))
            }
        };
        token("name", &self.name)?;
        let n = self.joints.len();
        if self.drives.len() != n || self.modes.len() != n {
            return Err(format!(
                "module `{}`: {n} joints, {} drives, {} modes: one of each per joint",
                self.name,
                self.drives.len(),
                self.modes.len()
            ));
        }
        for (what, list) in [("joint", &self.joints), ("port", &self.ports)] {
            for (i, s) in list.iter().enumerate() {
                token(what, s)?;
                if list[..i].contains(s) {
                    return Err(format!("module `{}`: {what} `{s}` named twice", self.name));
                }
            }
        }
        for ((j, d), m) in self.joints.iter().zip(&self.drives).zip(&self.modes) {
            if !d.position && !d.velocity {
                return Err(format!("joint `{j}`: its motor has no mode"));
            }
            let able = match m {
                ControlMode::Position => d.position,
                ControlMode::Velocity => d.velocity,
            };
            if !able {
                return Err(format!("joint `{j}`: starts in {m:?} mode, which its motor has not"));
            }
        }
        let velocity: Vec<usize> = (0..n).filter(|&k| self.drives[k].velocity).collect();
        let both = velocity.iter().filter(|&&k| self.drives[k].position).count();
        if both > 0 && both != velocity.len() {
            return Err(format!(
                "module `{}`: some velocity joints can switch to position and some cannot; ros2_control \
                 switches `{VELOCITY_CONTROLLER}` as a whole",
                self.name
            ));
        }
        if both > 0 && velocity.iter().any(|&k| self.modes[k] != self.modes[velocity[0]]) {
            return Err(format!(
                "module `{}`: the switching joints start in different modes",
                self.name
            ));
        }
        Ok(())
    }
}

impl ModuleDescription {
    /// What a module of the embedded simulator offers as its controllers file declares it
    /// (sim_node serves it so): a joint that starts as a velocity drive is on
    /// `velocity_controller` and, when its motor can also hold a position, on
    /// `wheel_position_controller`; one that starts as a servo is on `position_controller`
    /// only (the simulator's servos could also run at a speed, but no controller offers it).
    pub fn of_embedded(m: &modbot_sim::EmbeddedModule) -> ModuleDescription {
        ModuleDescription {
            name: m.name().to_string(),
            joints: m.joint_names().to_vec(),
            drives: m
                .drives()
                .iter()
                .zip(m.control_modes())
                .map(|(d, mode)| match mode {
                    ControlMode::Position => JointModes {
                        position: true,
                        velocity: false,
                    },
                    ControlMode::Velocity => JointModes {
                        position: d.position.is_some(),
                        velocity: true,
                    },
                })
                .collect(),
            modes: m.control_modes().to_vec(),
            ports: m.ports().to_vec(),
            camera: m.has_camera(),
            force: m.has_force(),
        }
    }
}

/// A request out and not yet answered.
struct Asked<Id, Req> {
    id: Id,
    at: f64,
    request: Req,
}

/// One port's connector as the binding sees it.
struct Port<T: Transport> {
    name: String,
    state_sub: T::S<ConnectorStateMsg>,
    docking_sub: T::S<DockingReadingArray>,
    latch: T::Cli<SetBool_Request, SetBool_Response>,
    /// The newest state published.
    reported: Option<ConnectorStatus>,
    /// The newest docking frame: its stamp and readings.
    docking: Option<(f64, Vec<DockingReading>)>,
    /// The order last given (true: engage) and when, until a state at least as new answers.
    order: Option<(bool, f64)>,
    asked: Option<Asked<LatchId<T>, SetBool_Request>>,
    /// Why the connector's controller refused the last order, if it did.
    refused: Option<String>,
}

type LatchId<T> =
    <<T as Transport>::Cli<SetBool_Request, SetBool_Response> as Client<SetBool_Request, SetBool_Response>>::Id;
type SwitchCli<T> = <T as Transport>::Cli<SwitchController_Request, SwitchController_Response>;
type SwitchId<T> = <SwitchCli<T> as Client<SwitchController_Request, SwitchController_Response>>::Id;

/// One module on ROS 2: its readings, newest by stamp, and its commands.
pub struct RosModule<T: Transport> {
    desc: ModuleDescription,
    now: f64,
    modes: Vec<ControlMode>,
    /// Command order indices of the position-only joints, and of the velocity-capable ones.
    fixed: Vec<usize>,
    wheels: Vec<usize>,
    /// Whether the velocity-capable joints can switch.
    switchable: bool,
    joint_sub: T::S<JointState>,
    imu_sub: T::S<ImuMsg>,
    ft_sub: Option<T::S<WrenchStamped>>,
    tags_sub: Option<T::S<TagDetectionArray>>,
    position_pub: T::P<Float64MultiArray>,
    velocity_pub: T::P<Float64MultiArray>,
    wheel_position_pub: T::P<Float64MultiArray>,
    switch: SwitchCli<T>,
    switch_asked: Option<Asked<SwitchId<T>, SwitchController_Request>>,
    /// The controller manager refused the last switch: the message, reported by the next
    /// command.
    switch_refused: Option<String>,
    joint_states: Option<JointStates>,
    imu: Option<ImuReading>,
    wrench: Option<Wrench>,
    tags: Option<TagFrame>,
    ports: Vec<Port<T>>,
}

fn never(sensor: String) -> RobotError {
    RobotError::SensorLost {
        sensor,
        age_s: f64::INFINITY,
        timeout_s: 0.0,
    }
}

/// How far a reading's stamp may lie ahead of the node's clock, s: clocks of two machines
/// that agree to NTP's milliseconds, with room. A reading stamped later is refused — kept, it
/// would stay "the newest" and hide every true reading after it.
pub const AHEAD_S: f64 = 0.5;

/// Keeps `new` in `slot` when it is at least as new as what is there; refuses a reading
/// stamped more than [`AHEAD_S`] after `now`.
fn newest<R>(slot: &mut Option<R>, new: R, stamp: impl Fn(&R) -> f64, now: f64) -> Result<(), String> {
    let s = stamp(&new);
    if s > now + AHEAD_S {
        return Err(format!("stamped {s:.3} s, {:.3} s ahead of the clock", s - now));
    }
    if slot.as_ref().is_none_or(|old| s >= stamp(old)) {
        *slot = Some(new);
    }
    Ok(())
}

impl<T: Transport> RosModule<T> {
    /// The module `desc` on node `t`'s graph: subscriptions and publishers under
    /// `<name>/`, relative to the node's namespace (`/m1/…` for a node in `/`, as the
    /// launch puts them). Refused: a description that fails [`ModuleDescription::validate`], a
    /// middleware error.
    pub fn new(t: &mut T, desc: ModuleDescription) -> std::result::Result<RosModule<T>, String> {
        desc.validate()?;
        let ns = desc.name.clone();
        let mw = |e: crate::error::RosError| e.to_string();
        let fixed: Vec<usize> = (0..desc.joints.len()).filter(|&k| !desc.drives[k].velocity).collect();
        let wheels: Vec<usize> = (0..desc.joints.len()).filter(|&k| desc.drives[k].velocity).collect();
        let switchable = wheels.iter().any(|&k| desc.drives[k].position);
        let mut ports = Vec::with_capacity(desc.ports.len());
        for p in &desc.ports {
            ports.push(Port {
                name: p.clone(),
                state_sub: t
                    .subscription(&format!("{ns}/connectors/{p}/state"), Qos::Latched)
                    .map_err(mw)?,
                docking_sub: t
                    .subscription(&format!("{ns}/connectors/{p}/docking"), Qos::SensorData)
                    .map_err(mw)?,
                latch: t
                    .client(&format!("{ns}/connectors/{p}/latch"), "std_srvs", "SetBool")
                    .map_err(mw)?,
                reported: None,
                docking: None,
                order: None,
                asked: None,
                refused: None,
            });
        }
        Ok(RosModule {
            now: t.now(),
            modes: desc.modes.clone(),
            fixed,
            wheels,
            switchable,
            joint_sub: t
                .subscription(&format!("{ns}/joint_states"), Qos::SensorData)
                .map_err(mw)?,
            imu_sub: t.subscription(&format!("{ns}/imu"), Qos::SensorData).map_err(mw)?,
            ft_sub: if desc.force {
                Some(t.subscription(&format!("{ns}/wheel_ft"), Qos::SensorData).map_err(mw)?)
            } else {
                None
            },
            tags_sub: if desc.camera {
                Some(
                    t.subscription(&format!("{ns}/camera/tags"), Qos::SensorData)
                        .map_err(mw)?,
                )
            } else {
                None
            },
            position_pub: t
                .publisher(&format!("{ns}/{POSITION_CONTROLLER}/commands"), Qos::Reliable)
                .map_err(mw)?,
            velocity_pub: t
                .publisher(&format!("{ns}/{VELOCITY_CONTROLLER}/commands"), Qos::Reliable)
                .map_err(mw)?,
            wheel_position_pub: t
                .publisher(&format!("{ns}/{WHEEL_POSITION_CONTROLLER}/commands"), Qos::Reliable)
                .map_err(mw)?,
            switch: t
                .client(
                    &format!("{ns}/controller_manager/switch_controller"),
                    "controller_manager_msgs",
                    "SwitchController",
                )
                .map_err(mw)?,
            switch_asked: None,
            switch_refused: None,
            joint_states: None,
            imu: None,
            wrench: None,
            tags: None,
            ports,
            desc,
        })
    }

    /// The description it was made from.
    pub fn description(&self) -> &ModuleDescription {
        &self.desc
    }

    /// Takes what has arrived (newest by stamp; bad samples dropped and logged through
    /// `log`), collects answers, sends again what went unanswered, and sets the clock.
    pub fn poll(&mut self, t: &T, now: f64, log: &mut Throttle) {
        self.now = now;
        let name = self.desc.name.clone();
        let drop = |log: &mut Throttle, key: &'static str, e: &dyn std::fmt::Display| {
            log.log(t, key, Level::Warn, &format!("{name}/{key} dropped: {e}"));
        };
        let sensor = |s: &str| format!("{}/{s}", self.desc.name);
        let (js, imu, ft, tags) = (
            sensor("joint_states"),
            sensor("imu"),
            sensor("wheel_ft"),
            sensor("camera/tags"),
        );
        while let Some(m) = self.joint_sub.take() {
            match m
                .map_err(|e| e.to_string())
                .and_then(|m| interface_msgs::joint_states(&m, &self.desc.joints, &js).map_err(|e| e.to_string()))
            {
                Ok(r) => {
                    if let Err(e) = newest(&mut self.joint_states, r, |r| r.stamp, now) {
                        drop(log, "joint_states", &e);
                    }
                }
                Err(e) => drop(log, "joint_states", &e),
            }
        }
        while let Some(m) = self.imu_sub.take() {
            match m
                .map_err(|e| e.to_string())
                .and_then(|m| interface_msgs::imu_reading(&m, &imu).map_err(|e| e.to_string()))
            {
                Ok(r) => {
                    if let Err(e) = newest(&mut self.imu, r, |r| r.stamp, now) {
                        drop(log, "imu", &e);
                    }
                }
                Err(e) => drop(log, "imu", &e),
            }
        }
        if let Some(sub) = &self.ft_sub {
            while let Some(m) = sub.take() {
                match m
                    .map_err(|e| e.to_string())
                    .and_then(|m| interface_msgs::wrench(&m, &ft).map_err(|e| e.to_string()))
                {
                    Ok(r) => {
                        if let Err(e) = newest(&mut self.wrench, r, |r| r.stamp, now) {
                            drop(log, "wheel_ft", &e);
                        }
                    }
                    Err(e) => drop(log, "wheel_ft", &e),
                }
            }
        }
        if let Some(sub) = &self.tags_sub {
            while let Some(m) = sub.take() {
                match m
                    .map_err(|e| e.to_string())
                    .and_then(|m| interface_msgs::tag_frame(&m, &tags).map_err(|e| e.to_string()))
                {
                    Ok(r) => {
                        if let Err(e) = newest(&mut self.tags, r, |r| r.stamp, now) {
                            drop(log, "camera/tags", &e);
                        }
                    }
                    Err(e) => drop(log, "camera/tags", &e),
                }
            }
        }
        for p in &mut self.ports {
            let state = format!("{}/connectors/{}/state", self.desc.name, p.name);
            while let Some(m) = p.state_sub.take() {
                match m
                    .map_err(|e| e.to_string())
                    .and_then(|m| interface_msgs::connector_status(&m, &p.name, &state).map_err(|e| e.to_string()))
                {
                    Ok(r) => {
                        if let Err(e) = newest(&mut p.reported, r, |r| r.stamp, now) {
                            drop(log, "connector state", &e);
                        }
                    }
                    Err(e) => drop(log, "connector state", &e),
                }
            }
            let docking = format!("{}/connectors/{}/docking", self.desc.name, p.name);
            while let Some(m) = p.docking_sub.take() {
                let read = m.map_err(|e| e.to_string()).and_then(|m| {
                    let r = interface_msgs::docking_readings(&m, &docking).map_err(|e| e.to_string())?;
                    Ok((m.header.stamp.as_secs_f64(), r))
                });
                match read {
                    Ok(r) => {
                        if let Err(e) = newest(&mut p.docking, r, |r| r.0, now) {
                            drop(log, "docking", &e);
                        }
                    }
                    Err(e) => drop(log, "docking", &e),
                }
            }
            // The order is answered by a state at least as new as the order.
            if let (Some((_, at)), Some(r)) = (p.order, &p.reported)
                && r.stamp >= at
            {
                p.order = None;
            }
            if let Some(a) = &p.asked {
                match p.latch.response(&a.id) {
                    Some(Ok(r)) => {
                        p.refused = (!r.success).then_some(r.message);
                        p.asked = None;
                    }
                    Some(Err(e)) => {
                        drop(log, "latch answer", &e);
                        p.asked = None;
                    }
                    None if now - a.at > RESEND_S => {
                        let request = a.request.clone();
                        p.asked = p.latch.call(&request).ok().map(|id| Asked { id, at: now, request });
                    }
                    None => {}
                }
            }
        }
        if let Some(a) = &self.switch_asked {
            match self.switch.response(&a.id) {
                Some(Ok(r)) => {
                    if !r.ok {
                        self.switch_refused = Some(if r.message.is_empty() {
                            "the controller manager refused the switch".into()
                        } else {
                            r.message
                        });
                    }
                    self.switch_asked = None;
                }
                Some(Err(e)) => {
                    drop(log, "switch answer", &e);
                    self.switch_asked = None;
                }
                None if now - a.at > RESEND_S => {
                    let request = a.request.clone();
                    self.switch_asked = self.switch.call(&request).ok().map(|id| Asked { id, at: now, request });
                }
                None => {}
            }
        }
    }

    fn port(&self, port: &str) -> Result<usize> {
        self.ports
            .iter()
            .position(|p| p.name == port)
            .ok_or_else(|| RobotError::Unknown {
                kind: "port",
                name: format!("{}/{port}", self.desc.name),
                known: self.desc.ports.join(", "),
            })
    }

    fn refuse(&self, joint: usize, reason: String) -> RobotError {
        RobotError::CommandRefused {
            target: self.desc.joints.get(joint).cloned().unwrap_or_else(|| "joints".into()),
            reason,
        }
    }

    fn order(&mut self, port: &str, engage: bool) -> Result<()> {
        let i = self.port(port)?;
        let now = self.now;
        let current = self.connector(port)?.state;
        let p = &mut self.ports[i];
        let needed = matches!(
            (engage, current),
            (true, ConnectorState::Open | ConnectorState::Failed)
                | (
                    false,
                    ConnectorState::Latched | ConnectorState::Engaging | ConnectorState::Failed
                )
        );
        if !needed {
            return Ok(());
        }
        let request = SetBool_Request { data: engage };
        let id = p.latch.call(&request).map_err(|e| RobotError::ConnectorFault {
            port: port.to_string(),
            what: e.to_string(),
        })?;
        p.asked = Some(Asked { id, at: now, request });
        p.order = Some((engage, now));
        p.refused = None;
        Ok(())
    }
}

impl<T: Transport> Clock for RosModule<T> {
    fn now(&self) -> f64 {
        self.now
    }
}

impl<T: Transport> Joints for RosModule<T> {
    fn joint_names(&self) -> &[String] {
        &self.desc.joints
    }

    fn joint_states(&self) -> Result<JointStates> {
        self.joint_states
            .clone()
            .ok_or_else(|| never(format!("{}/joint_states", self.desc.name)))
    }

    fn control_modes(&self) -> &[ControlMode] {
        &self.modes
    }

    /// Switches the velocity-capable joints, all of them (ros2_control switches
    /// controllers, not joints): `velocity_controller` ↔ `wheel_position_controller`.
    fn switch_mode(&mut self, joint: usize, mode: ControlMode) -> Result<()> {
        let Some(d) = self.desc.drives.get(joint) else {
            return Err(RobotError::Unknown {
                kind: "joint",
                name: joint.to_string(),
                known: self.desc.joints.join(", "),
            });
        };
        let able = match mode {
            ControlMode::Position => d.position,
            ControlMode::Velocity => d.velocity,
        };
        if !able {
            return Err(self.refuse(joint, format!("its motor has no {mode:?} mode")));
        }
        if self.modes[joint] == mode {
            return Ok(());
        }
        if !self.switchable {
            return Err(self.refuse(joint, "its controllers cannot switch".into()));
        }
        let (on, off) = match mode {
            ControlMode::Position => (WHEEL_POSITION_CONTROLLER, VELOCITY_CONTROLLER),
            ControlMode::Velocity => (VELOCITY_CONTROLLER, WHEEL_POSITION_CONTROLLER),
        };
        let request = SwitchController_Request {
            activate_controllers: vec![on.to_string()],
            deactivate_controllers: vec![off.to_string()],
            strictness: SwitchController_Request::STRICT,
            activate_asap: true,
            timeout: RosDuration::default(),
        };
        let id = self
            .switch
            .call(&request)
            .map_err(|e| self.refuse(joint, format!("switch_controller: {e}")))?;
        self.switch_asked = Some(Asked {
            id,
            at: self.now,
            request,
        });
        self.switch_refused = None;
        for &k in &self.wheels {
            self.modes[k] = mode;
        }
        Ok(())
    }

    fn command(&mut self, targets: &[JointTarget]) -> Result<()> {
        if targets.len() != self.desc.joints.len() {
            return Err(self.refuse(
                usize::MAX,
                format!("{} targets for {} joints", targets.len(), self.desc.joints.len()),
            ));
        }
        if let Some(why) = self.switch_refused.take() {
            return Err(self.refuse(usize::MAX, format!("the last mode switch failed: {why}")));
        }
        for (k, (t, mode)) in targets.iter().zip(&self.modes).enumerate() {
            if !t.value().is_finite() {
                return Err(self.refuse(k, format!("{} is not a finite number", t.value())));
            }
            match (t, mode) {
                (JointTarget::Position(_), ControlMode::Position)
                | (JointTarget::Velocity(_), ControlMode::Velocity) => {}
                _ => {
                    return Err(self.refuse(
                        k,
                        format!("a {t:?} command for a joint in {mode:?} mode (switch its mode first)"),
                    ));
                }
            }
        }
        let of = |which: &[usize]| Float64MultiArray {
            data: which.iter().map(|&k| targets[k].value()).collect(),
            ..Default::default()
        };
        let sent = |e: crate::error::RosError| RobotError::Binding(e.to_string());
        if !self.fixed.is_empty() {
            self.position_pub.publish(of(&self.fixed)).map_err(sent)?;
        }
        if let Some(&w) = self.wheels.first() {
            match self.modes[w] {
                ControlMode::Velocity => self.velocity_pub.publish(of(&self.wheels)).map_err(sent)?,
                ControlMode::Position => self.wheel_position_pub.publish(of(&self.wheels)).map_err(sent)?,
            }
        }
        Ok(())
    }
}

impl<T: Transport> Imu for RosModule<T> {
    fn imu(&self) -> Result<ImuReading> {
        self.imu.ok_or_else(|| never(format!("{}/imu", self.desc.name)))
    }
}

impl<T: Transport> TagCamera for RosModule<T> {
    fn tags(&self) -> Result<Option<TagFrame>> {
        if !self.desc.camera {
            return Err(RobotError::Unknown {
                kind: "sensor",
                name: format!("{}/camera", self.desc.name),
                known: "joint_states, imu".into(),
            });
        }
        Ok(self.tags.clone())
    }
}

impl<T: Transport> Connectors for RosModule<T> {
    fn ports(&self) -> &[String] {
        &self.desc.ports
    }

    fn engage(&mut self, port: &str) -> Result<()> {
        self.order(port, true)
    }

    fn release(&mut self, port: &str) -> Result<()> {
        self.order(port, false)
    }

    /// The state the connector last published, or — while an order is newer than that —
    /// what the order makes of it at once, as the embedded binding reports: engaging after
    /// engage, open after release of a connector not latched (a latched one reports latched
    /// until it has opened). A refusal by the connector's controller is FAILED with its
    /// message.
    fn connector(&self, port: &str) -> Result<ConnectorStatus> {
        let p = &self.ports[self.port(port)?];
        let reported = p.reported.clone().unwrap_or(ConnectorStatus {
            stamp: 0.0,
            state: ConnectorState::Open,
            partner: None,
            reason: None,
        });
        if let Some(why) = &p.refused {
            return Ok(ConnectorStatus {
                stamp: self.now,
                state: ConnectorState::Failed,
                partner: None,
                reason: Some(why.clone()),
            });
        }
        let pending = |state| ConnectorStatus {
            stamp: p.order.map_or(self.now, |o| o.1),
            state,
            partner: None,
            reason: None,
        };
        Ok(match (p.order, reported.state) {
            (Some((true, _)), ConnectorState::Open | ConnectorState::Failed) => pending(ConnectorState::Engaging),
            (Some((false, _)), ConnectorState::Engaging | ConnectorState::Failed) => pending(ConnectorState::Open),
            _ => reported,
        })
    }

    fn docking(&self, port: &str) -> Result<Vec<DockingReading>> {
        let p = &self.ports[self.port(port)?];
        Ok(p.docking.as_ref().map(|d| d.1.clone()).unwrap_or_default())
    }
}

impl<T: Transport> ForceTorque for RosModule<T> {
    fn wrench(&self) -> Result<Wrench> {
        if !self.desc.force {
            return Err(RobotError::Unknown {
                kind: "sensor",
                name: format!("{}/wheel_ft", self.desc.name),
                known: "joint_states, imu".into(),
            });
        }
        self.wrench.ok_or_else(|| never(format!("{}/wheel_ft", self.desc.name)))
    }
}

impl<T: Transport> Module for RosModule<T> {
    fn name(&self) -> &str {
        &self.desc.name
    }
}

/// Modules on one node's connection to the graph: what a behaviour drives over ROS 2.
pub struct RosModules<T: Transport> {
    transport: T,
    modules: Vec<RosModule<T>>,
    log: Throttle,
}

impl<T: Transport> RosModules<T> {
    /// One [`RosModule`] per description, on `transport`.
    pub fn new(mut transport: T, descriptions: Vec<ModuleDescription>) -> std::result::Result<Self, String> {
        let mut modules = Vec::with_capacity(descriptions.len());
        for d in descriptions {
            if modules.iter().any(|m: &RosModule<T>| m.desc.name == d.name) {
                return Err(format!("module `{}` given twice", d.name));
            }
            modules.push(RosModule::new(&mut transport, d)?);
        }
        Ok(RosModules {
            transport,
            modules,
            log: Throttle::new(2.0),
        })
    }

    /// Takes what has arrived for every module and sets their clocks to the node's.
    pub fn poll(&mut self) {
        let now = self.transport.now();
        for m in &mut self.modules {
            m.poll(&self.transport, now, &mut self.log);
        }
    }

    /// The node's connection.
    pub fn transport(&self) -> &T {
        &self.transport
    }

    /// The modules whose joint states or IMU have not come yet (what a behaviour needs
    /// first), by name.
    pub fn awaiting_readings(&self) -> Vec<&str> {
        self.modules
            .iter()
            .filter(|m| m.joint_states.is_none() || m.imu.is_none())
            .map(|m| m.desc.name.as_str())
            .collect()
    }
}

impl<T: Transport> Modules for RosModules<T> {
    fn len(&self) -> usize {
        self.modules.len()
    }

    fn module(&mut self, i: usize) -> Result<&mut dyn Module> {
        let n = self.modules.len();
        self.modules
            .get_mut(i)
            .map(|m| m as &mut dyn Module)
            .ok_or_else(|| RobotError::Unknown {
                kind: "module",
                name: i.to_string(),
                known: format!("0..{n}"),
            })
    }

    fn module_ref(&self, i: usize) -> Result<&dyn Module> {
        self.modules
            .get(i)
            .map(|m| m as &dyn Module)
            .ok_or_else(|| RobotError::Unknown {
                kind: "module",
                name: i.to_string(),
                known: format!("0..{}", self.modules.len()),
            })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use modbot_msgs::builtin_interfaces::msg::Time;
    use modbot_msgs::std_msgs::msg::Header;

    use super::*;
    use crate::loopback::{LoopbackBus, LoopbackNode, identity};
    use crate::transport::Server;

    /// A wheel-foot-like module: two position-only joints, a wheel that can switch, one port.
    fn desc() -> ModuleDescription {
        let both = JointModes {
            position: true,
            velocity: true,
        };
        let servo = JointModes {
            position: true,
            velocity: false,
        };
        ModuleDescription {
            name: "m1".into(),
            joints: vec!["back1".into(), "back2".into(), "front".into()],
            drives: vec![servo, servo, both],
            modes: vec![ControlMode::Position, ControlMode::Position, ControlMode::Velocity],
            ports: vec!["F".into()],
            camera: false,
            force: false,
        }
    }

    fn stamped(t: f64, frame: &str) -> Header {
        Header {
            stamp: Time::from_secs_f64(t),
            frame_id: frame.into(),
        }
    }

    fn joint_state(t: f64, front: f64) -> JointState {
        // Another order than the command order, and a joint that is not the module's.
        JointState {
            header: stamped(t, ""),
            name: vec!["front".into(), "other".into(), "back2".into(), "back1".into()],
            position: vec![front, 9.0, 0.2, 0.1],
            velocity: vec![3.0, 0.0, 0.0, 0.0],
            effort: vec![],
        }
    }

    fn setup() -> (LoopbackBus, RosModules<LoopbackNode>, LoopbackNode) {
        let bus = LoopbackBus::new();
        bus.set_now(10.0);
        let modules = RosModules::new(bus.node(identity("mission", "/")), vec![desc()]).unwrap();
        let driver = bus.node(identity("driver", "/m1"));
        (bus, modules, driver)
    }

    /// Joint states by name into command order; the newest by stamp wins, whatever the
    /// order of arrival; a sample with a NaN is dropped, logged, and the last good one stays.
    #[test]
    fn readings_are_the_newest_by_stamp_and_bad_ones_are_dropped() {
        let (bus, mut modules, mut driver) = setup();
        let js = driver.publisher::<JointState>("joint_states", Qos::Reliable).unwrap();
        let m = modules.module_ref(0).unwrap();
        assert!(matches!(m.joint_states(), Err(RobotError::SensorLost { .. })));
        js.publish(joint_state(5.0, 0.3)).unwrap();
        js.publish(joint_state(4.0, 0.7)).unwrap();
        modules.poll();
        let s = modules.module_ref(0).unwrap().joint_states().unwrap();
        assert_eq!((s.stamp, s.position.clone()), (5.0, vec![0.1, 0.2, 0.3]));
        assert_eq!(s.velocity, vec![0.0, 0.0, 3.0]);
        js.publish(joint_state(6.0, f64::NAN)).unwrap();
        modules.poll();
        assert_eq!(modules.module_ref(0).unwrap().joint_states().unwrap().stamp, 5.0);
        assert!(
            bus.logs()
                .iter()
                .any(|l| l.msg.contains("m1/joint_states") && l.msg.contains("position[0]")),
            "{:?}",
            bus.logs()
        );
        assert_eq!(modules.module_ref(0).unwrap().now(), 10.0);
    }

    /// Position-only joints on position_controller, the wheel on velocity_controller; a
    /// switch is the ros2_control request, after which the wheel's target goes to
    /// wheel_position_controller; a refused switch fails the next command with its message.
    #[test]
    fn commands_and_the_controller_switch_follow_ros2_control() {
        let (_bus, mut modules, mut driver) = setup();
        let pos = driver
            .subscription::<Float64MultiArray>("position_controller/commands", Qos::Reliable)
            .unwrap();
        let vel = driver
            .subscription::<Float64MultiArray>("velocity_controller/commands", Qos::Reliable)
            .unwrap();
        let wheel_pos = driver
            .subscription::<Float64MultiArray>("wheel_position_controller/commands", Qos::Reliable)
            .unwrap();
        let cm = driver
            .server::<SwitchController_Request, SwitchController_Response>(
                "controller_manager/switch_controller",
                "controller_manager_msgs",
                "SwitchController",
            )
            .unwrap();
        let m = modules.module(0).unwrap();
        m.command(&[
            JointTarget::Position(0.1),
            JointTarget::Position(-0.2),
            JointTarget::Velocity(4.0),
        ])
        .unwrap();
        assert_eq!(pos.take().unwrap().unwrap().data, vec![0.1, -0.2]);
        assert_eq!(vel.take().unwrap().unwrap().data, vec![4.0]);
        // The wrong kind for a joint's mode is refused naming the joint.
        let e = m
            .command(&[
                JointTarget::Position(0.1),
                JointTarget::Position(-0.2),
                JointTarget::Position(4.0),
            ])
            .unwrap_err();
        assert!(e.to_string().contains("`front`"), "{e}");
        m.switch_mode(2, ControlMode::Position).unwrap();
        let (token, r) = cm.take().unwrap().unwrap();
        assert_eq!(r.activate_controllers, vec!["wheel_position_controller"]);
        assert_eq!(r.deactivate_controllers, vec!["velocity_controller"]);
        assert_eq!(r.strictness, 2);
        assert!(r.activate_asap);
        m.command(&[
            JointTarget::Position(0.1),
            JointTarget::Position(-0.2),
            JointTarget::Position(1.5),
        ])
        .unwrap();
        assert_eq!(wheel_pos.take().unwrap().unwrap().data, vec![1.5]);
        assert!(vel.take().is_none());
        // A position-only joint cannot switch.
        assert!(m.switch_mode(0, ControlMode::Velocity).is_err());
        cm.respond(
            token,
            SwitchController_Response {
                ok: false,
                message: "wheel_position_controller is not loaded".into(),
            },
        )
        .unwrap();
        modules.poll();
        let e = modules
            .module(0)
            .unwrap()
            .command(&[
                JointTarget::Position(0.1),
                JointTarget::Position(-0.2),
                JointTarget::Position(1.5),
            ])
            .unwrap_err();
        assert!(e.to_string().contains("not loaded"), "{e}");
    }

    /// Engage: a SetBool(true) request, ENGAGING at once, the request sent again while
    /// unanswered, then the connector's published state, newest by stamp.
    #[test]
    fn a_latch_order_is_a_request_and_its_outcome_the_state_topic() {
        let (bus, mut modules, mut driver) = setup();
        let latch = driver
            .server::<SetBool_Request, SetBool_Response>("connectors/F/latch", "std_srvs", "SetBool")
            .unwrap();
        let state = driver
            .publisher::<ConnectorStateMsg>("connectors/F/state", Qos::Latched)
            .unwrap();
        let open = |t: f64| ConnectorStateMsg {
            header: stamped(t, "m1/port_F"),
            port: "F".into(),
            state: ConnectorStateMsg::OPEN,
            partner: String::new(),
            reason: String::new(),
        };
        state.publish(open(9.0)).unwrap();
        modules.poll();
        let m = modules.module(0).unwrap();
        assert_eq!(m.connector("F").unwrap().state, ConnectorState::Open);
        m.engage("F").unwrap();
        assert_eq!(m.connector("F").unwrap().state, ConnectorState::Engaging);
        let (_, r) = latch.take().unwrap().unwrap();
        assert!(r.data);
        // Unanswered: asked again after RESEND_S, not before.
        bus.advance(RESEND_S * 0.5);
        modules.poll();
        assert!(latch.take().is_none());
        bus.advance(RESEND_S);
        modules.poll();
        let (token, r) = latch.take().unwrap().unwrap();
        assert!(r.data);
        latch
            .respond(
                token,
                SetBool_Response {
                    success: true,
                    message: String::new(),
                },
            )
            .unwrap();
        // A state older than the order does not undo it; a newer one is the answer.
        state.publish(open(9.5)).unwrap();
        modules.poll();
        assert_eq!(
            modules.module_ref(0).unwrap().connector("F").unwrap().state,
            ConnectorState::Engaging
        );
        state
            .publish(ConnectorStateMsg {
                header: stamped(11.2, "m1/port_F"),
                state: ConnectorStateMsg::LATCHED,
                partner: "m2/L".into(),
                ..open(0.0)
            })
            .unwrap();
        modules.poll();
        let s = modules.module_ref(0).unwrap().connector("F").unwrap();
        assert_eq!(
            (s.state, s.partner.as_deref(), s.stamp),
            (ConnectorState::Latched, Some("m2/L"), 11.2)
        );
        assert!(latch.take().is_none(), "nothing asked again once answered");
        assert!(matches!(
            modules.module(0).unwrap().engage("Q"),
            Err(RobotError::Unknown { kind: "port", .. })
        ));
    }

    #[test]
    fn descriptions_are_checked_naming_the_field() {
        let mut d = desc();
        d.joints[1] = "back1".into();
        assert!(d.validate().unwrap_err().contains("`back1` named twice"));
        let mut d = desc();
        d.modes[0] = ControlMode::Velocity;
        assert!(d.validate().unwrap_err().contains("joint `back1`"));
        let mut d = desc();
        d.ports[0] = "F/x".into();
        assert!(d.validate().unwrap_err().contains("port `F/x`"));
        let mut d = desc();
        d.drives.pop();
        assert!(d.validate().unwrap_err().contains("one of each per joint"));
        let mut d = desc();
        d.joints.push("wheel2".into());
        d.drives.push(JointModes {
            position: false,
            velocity: true,
        });
        d.modes.push(ControlMode::Velocity);
        assert!(d.validate().unwrap_err().contains("as a whole"));
        let bus = LoopbackBus::new();
        assert!(RosModules::new(bus.node(identity("x", "/")), vec![desc(), desc()]).is_err());
    }
}
