//! One module of the embedded binding: its latest readings and its pending orders, behind
//! the robot interface's traits. The fleet ([`super::EmbeddedModules`]) fills the readings
//! as the simulation runs and carries out the orders at its next step, as a ROS binding
//! caches the latest messages and publishes commands.

use std::collections::BTreeMap;

use modbot_interface::{
    Clock, ConnectorState, ConnectorStatus, Connectors, ControlMode, DockingReading, ForceTorque, Imu, ImuReading,
    JointStates, JointTarget, Joints, Module, Result, RobotError, TagCamera, TagFrame, Wrench,
};

use crate::dock::Port;
use crate::robot::Drive;

/// The drives a joint's motor can run as.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JointDrives {
    /// As a position servo, if it can.
    pub position: Option<Drive>,
    /// As a velocity drive, if it can.
    pub velocity: Option<Drive>,
}

/// A fault put on one of a module's sensors (tests of what behaviours do without it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SensorFault {
    /// It says nothing: its last reading stays and grows old.
    Silent,
    /// Its readings carry a NaN.
    NotANumber,
}

/// A port's connector as the binding keeps it.
#[derive(Debug, Clone)]
pub(crate) struct PortState {
    pub name: String,
    pub port: Port,
    /// On a wheel: no keyed roll, it latches at the roll it meets its partner with.
    pub keyless: bool,
    pub status: ConnectorStatus,
    /// Engage began at, s.
    pub engage_at: Option<f64>,
    /// The dock in force (the simulator's name), while latched.
    pub dock: Option<String>,
    pub release_asked: bool,
    pub docking: Result<Vec<DockingReading>>,
    /// Readings taken and not yet delivered: (deliver at, reading).
    pub docking_queue: std::collections::VecDeque<(f64, Vec<DockingReading>)>,
}

/// One module of the embedded binding.
pub struct EmbeddedModule {
    pub(crate) name: String,
    pub(crate) robot: usize,
    /// Its joints in the simulator's command order.
    pub(crate) joints: std::ops::Range<usize>,
    pub(crate) joint_names: Vec<String>,
    pub(crate) drives: Vec<JointDrives>,
    pub(crate) modes: Vec<ControlMode>,
    pub(crate) now: f64,
    pub(crate) joint_states: Result<JointStates>,
    pub(crate) imu: Result<ImuReading>,
    pub(crate) tags: Result<Option<TagFrame>>,
    pub(crate) wrench: Result<Wrench>,
    pub(crate) ports: Vec<PortState>,
    pub(crate) port_names: Vec<String>,
    /// Targets to apply at the next step.
    pub(crate) pending: Option<Vec<JointTarget>>,
    /// Mode switches to apply at the next step, in order.
    pub(crate) switches: Vec<(usize, ControlMode)>,
    /// Joints switched after the pending command was given: their targets are of the old
    /// mode and are not applied.
    pub(crate) switched_since_command: Vec<usize>,
    pub(crate) faults: BTreeMap<String, SensorFault>,
    pub(crate) has_camera: bool,
    pub(crate) has_force: bool,
}

fn never(sensor: &str) -> RobotError {
    RobotError::SensorLost {
        sensor: sensor.into(),
        age_s: f64::INFINITY,
        timeout_s: 0.0,
    }
}

impl EmbeddedModule {
    pub(crate) fn new(name: String, robot: usize, joints: std::ops::Range<usize>, joint_names: Vec<String>) -> Self {
        EmbeddedModule {
            name,
            robot,
            joints,
            joint_names,
            drives: Vec::new(),
            modes: Vec::new(),
            now: 0.0,
            joint_states: Err(never("joint_states")),
            imu: Err(never("imu")),
            tags: Ok(None),
            wrench: Err(never("wheel_ft")),
            ports: Vec::new(),
            port_names: Vec::new(),
            pending: None,
            switches: Vec::new(),
            switched_since_command: Vec::new(),
            faults: BTreeMap::new(),
            has_camera: false,
            has_force: false,
        }
    }

    /// Per joint (command order), the drives its motor can run as.
    pub fn drives(&self) -> &[JointDrives] {
        &self.drives
    }

    /// Whether it has the mast camera.
    pub fn has_camera(&self) -> bool {
        self.has_camera
    }

    /// Whether it has the wheel force sensor.
    pub fn has_force(&self) -> bool {
        self.has_force
    }

    /// The fault on sensor `sensor`, if any.
    pub(crate) fn fault(&self, sensor: &str) -> Option<SensorFault> {
        self.faults.get(sensor).copied()
    }

    /// The names of the module's sensors: `joint_states`, `imu`, `camera` and `wheel_ft` when
    /// it has them, `dock/<port>` for each port.
    pub(crate) fn sensors(&self) -> Vec<String> {
        let mut known: Vec<String> = vec!["joint_states".into(), "imu".into()];
        if self.has_camera {
            known.push("camera".into());
        }
        if self.has_force {
            known.push("wheel_ft".into());
        }
        known.extend(self.port_names.iter().map(|p| format!("dock/{p}")));
        known
    }

    /// The error for a sensor `sensor` this module does not have, naming the ones it has.
    pub(crate) fn no_sensor(&self, sensor: &str) -> RobotError {
        RobotError::Unknown {
            kind: "sensor",
            name: format!("{}/{sensor}", self.name),
            known: self.sensors().join(", "),
        }
    }

    fn port(&self, port: &str) -> Result<usize> {
        self.ports
            .iter()
            .position(|p| p.name == port)
            .ok_or_else(|| RobotError::Unknown {
                kind: "port",
                name: format!("{}/{port}", self.name),
                known: self.port_names.join(", "),
            })
    }

    fn refuse(&self, joint: usize, reason: String) -> RobotError {
        RobotError::CommandRefused {
            target: self.joint_names.get(joint).cloned().unwrap_or_else(|| "joints".into()),
            reason,
        }
    }
}

impl Clock for EmbeddedModule {
    fn now(&self) -> f64 {
        self.now
    }
}

impl Joints for EmbeddedModule {
    fn joint_names(&self) -> &[String] {
        &self.joint_names
    }

    fn joint_states(&self) -> Result<JointStates> {
        self.joint_states.clone()
    }

    fn control_modes(&self) -> &[ControlMode] {
        &self.modes
    }

    fn switch_mode(&mut self, joint: usize, mode: ControlMode) -> Result<()> {
        let Some(d) = self.drives.get(joint) else {
            return Err(RobotError::Unknown {
                kind: "joint",
                name: joint.to_string(),
                known: self.joint_names.join(", "),
            });
        };
        let able = match mode {
            ControlMode::Position => d.position.is_some(),
            ControlMode::Velocity => d.velocity.is_some(),
        };
        if !able {
            return Err(self.refuse(joint, format!("its motor has no {mode:?} mode")));
        }
        if self.modes[joint] != mode {
            self.modes[joint] = mode;
            self.switches.push((joint, mode));
            if self.pending.is_some() {
                self.switched_since_command.push(joint);
            }
        }
        Ok(())
    }

    fn command(&mut self, targets: &[JointTarget]) -> Result<()> {
        if targets.len() != self.joint_names.len() {
            return Err(self.refuse(
                usize::MAX,
                format!("{} targets for {} joints", targets.len(), self.joint_names.len()),
            ));
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
        self.pending = Some(targets.to_vec());
        self.switched_since_command.clear();
        Ok(())
    }
}

impl Imu for EmbeddedModule {
    fn imu(&self) -> Result<ImuReading> {
        self.imu.clone()
    }
}

impl TagCamera for EmbeddedModule {
    fn tags(&self) -> Result<Option<TagFrame>> {
        if !self.has_camera {
            return Err(self.no_sensor("camera"));
        }
        self.tags.clone()
    }
}

impl Connectors for EmbeddedModule {
    fn ports(&self) -> &[String] {
        &self.port_names
    }

    fn engage(&mut self, port: &str) -> Result<()> {
        let i = self.port(port)?;
        let now = self.now;
        let p = &mut self.ports[i];
        match p.status.state {
            ConnectorState::Latched | ConnectorState::Engaging => {}
            ConnectorState::Open | ConnectorState::Failed => {
                p.engage_at = Some(now);
                p.status = ConnectorStatus {
                    stamp: now,
                    state: ConnectorState::Engaging,
                    partner: None,
                    reason: None,
                };
            }
        }
        Ok(())
    }

    fn release(&mut self, port: &str) -> Result<()> {
        let i = self.port(port)?;
        let now = self.now;
        let p = &mut self.ports[i];
        match p.status.state {
            ConnectorState::Latched => p.release_asked = true,
            ConnectorState::Engaging | ConnectorState::Failed => {
                p.engage_at = None;
                p.status = ConnectorStatus {
                    stamp: now,
                    state: ConnectorState::Open,
                    partner: None,
                    reason: None,
                };
            }
            ConnectorState::Open => {}
        }
        Ok(())
    }

    fn connector(&self, port: &str) -> Result<ConnectorStatus> {
        Ok(self.ports[self.port(port)?].status.clone())
    }

    fn docking(&self, port: &str) -> Result<Vec<DockingReading>> {
        self.ports[self.port(port)?].docking.clone()
    }
}

impl ForceTorque for EmbeddedModule {
    fn wrench(&self) -> Result<Wrench> {
        if !self.has_force {
            return Err(self.no_sensor("wheel_ft"));
        }
        self.wrench.clone()
    }
}

impl Module for EmbeddedModule {
    fn name(&self) -> &str {
        &self.name
    }
}
