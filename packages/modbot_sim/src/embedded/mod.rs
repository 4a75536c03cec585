//! The embedded binding of the robot interface (`modbot_interface`; decision
//! record 0058): the simulator behind one [`EmbeddedModule`] per module, in process and
//! deterministic. What a behaviour reads is what the module's devices would report:
//!
//! - **joint states** at every control tick: angles, rates and the drives' torques;
//! - **IMU** at its rate ([`ImuModel`]): the foot plate's orientation with a drifting yaw,
//!   its angular velocity and specific force, each with a MEMS unit's errors;
//! - **the mast camera** ([`crate::CameraSpec`] for its geometry and noise,
//!   [`CameraTiming`] for its rate and latency): the tags it can see (field of view, range,
//!   occlusion, [`crate::Simulator::camera_view`]), stamped with the capture time and
//!   delivered a latency later, each with its covariance;
//! - **each port's docking sensor** ([`DockingModel`]): every partner face in its
//!   cone and range, turned towards it, unoccluded;
//! - **each port's connector** ([`LatchModel`]): engaged, it latches when the physics brings
//!   a partner face within its capture range ([`crate::Simulator::attach_keyed`]: a keyed
//!   face closes onto its key, record 0060), else reports failed; released, it opens;
//! - **the wheel force sensor**: the mean force of the last [`SensorModels::force_window_s`].
//!
//! Every reading passes its interface check before a behaviour sees it: a reading with a
//! NaN becomes [`RobotError::BadReading`] naming the sensor and the field.
//! [`EmbeddedModules::inject`] puts a fault on a sensor, for tests of what behaviours do
//! without it. Ground truth stays here: [`EmbeddedModules::simulator`] is for measuring a
//! run, never for a behaviour.

mod models;
mod module;
mod sampling;

use std::collections::VecDeque;

use modbot_interface::{
    ConnectorState, ConnectorStatus, ControlMode, Module, Modules, Result as RobotResult, RobotError,
};
use nalgebra::Vector3;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

pub use models::{CameraTiming, DockingModel, ImuModel, LatchModel, SensorModels, point_covariance, tag_detection};
pub use module::{EmbeddedModule, JointDrives, SensorFault};

use crate::camera::{Camera, CameraSpec, Detectable};
use crate::dock::Port;
use crate::error::{Result, SimError};
use crate::robot::Drive;
use crate::world::Simulator;
use module::PortState;

/// One module's devices, as the binding is told them.
#[derive(Debug, Clone)]
pub struct ModuleSetup {
    /// Its name (its namespace: `m3`).
    pub name: String,
    /// The simulator's robot that is this module (a lone module's whole robot).
    pub robot: usize,
    /// The link its IMU sits on (its frame is the IMU's).
    pub imu_link: String,
    /// Its mast camera, if it has one, and the tags that camera may report.
    pub camera: Option<(CameraSpec, Vec<Detectable>)>,
    /// Its ports: name, where, and whether keyless (on a wheel).
    pub ports: Vec<(String, Port, bool)>,
    /// Its wheel force sensor's name in the simulator, if it has one.
    pub force_sensor: Option<String>,
    /// Per joint of the robot (command order), the drives its motor can run as.
    pub drives: Vec<JointDrives>,
}

/// Per-module state the binding keeps beside what the module shows.
struct Devices {
    imu_link: usize,
    imu_rng: ChaCha8Rng,
    gyro_bias: Vector3<f64>,
    yaw_walk: f64,
    next_imu: f64,
    last_velocity: Option<(f64, Vector3<f64>)>,
    camera: Option<(Camera, Vec<Detectable>)>,
    next_frame: f64,
    frames: VecDeque<(f64, RobotResult<modbot_interface::TagFrame>)>,
    dock_rng: ChaCha8Rng,
    next_docking: f64,
    force_sensor: Option<String>,
    forces: VecDeque<Vector3<f64>>,
}

/// The simulator behind the robot interface, one [`EmbeddedModule`] per module.
pub struct EmbeddedModules {
    sim: Simulator,
    gravity: Vector3<f64>,
    models: SensorModels,
    modules: Vec<EmbeddedModule>,
    devices: Vec<Devices>,
    window: usize,
}

fn setting(key: String, value: impl ToString, expected: &str) -> SimError {
    SimError::Settings {
        key,
        value: value.to_string(),
        expected: expected.into(),
    }
}

impl EmbeddedModules {
    /// The binding of `sim` (native engine: connectors and drive torques need it) with one
    /// module per setup, the devices' errors drawn from ChaCha8 seeded with `seed` (module i's
    /// devices on their own streams). Refused naming the key: a robot, link, sensor or joint
    /// that does not exist, a camera on another robot, a model out of range.
    pub fn new(
        sim: Simulator,
        gravity: [f64; 3],
        setups: Vec<ModuleSetup>,
        models: SensorModels,
        seed: u64,
    ) -> Result<EmbeddedModules> {
        models.validate()?;
        if sim.engine() != crate::Engine::Native {
            return Err(setting(
                "engine".into(),
                "rapier",
                "the native engine (connectors and drive torques)",
            ));
        }
        let window = ((models.force_window_s / sim.step_size()).round() as usize).max(1);
        let mut out = EmbeddedModules {
            gravity: Vector3::from(gravity),
            models,
            modules: Vec::new(),
            devices: Vec::new(),
            window,
            sim,
        };
        for (i, s) in setups.into_iter().enumerate() {
            let (module, devices) = out.module_of(i as u64, s, seed)?;
            out.modules.push(module);
            out.devices.push(devices);
        }
        out.refresh_joints()?;
        out.sample(true)?;
        Ok(out)
    }

    fn link(&self, key: &str, robot: usize, link: &str) -> Result<usize> {
        self.sim
            .links_of(robot)
            .find(|&l| self.sim.link_names()[l] == link)
            .ok_or_else(|| setting(key.into(), link, &format!("a link of robot {robot}")))
    }

    fn module_of(&self, i: u64, s: ModuleSetup, seed: u64) -> Result<(EmbeddedModule, Devices)> {
        let key = |k: &str| format!("modules.{}.{k}", s.name);
        if s.robot >= self.sim.robot_count() {
            return Err(setting(
                key("robot"),
                s.robot,
                &format!("one of the {} robots", self.sim.robot_count()),
            ));
        }
        let joints = self.sim.joints_of(s.robot);
        let names: Vec<String> = self.sim.joint_names()[joints.clone()].to_vec();
        if s.drives.len() != names.len() {
            return Err(setting(
                key("drives"),
                s.drives.len(),
                &format!("{} joints' drives", names.len()),
            ));
        }
        let drives_now = self.sim.drives();
        let mut modes = Vec::with_capacity(names.len());
        for (k, j) in joints.clone().enumerate() {
            modes.push(match drives_now[j] {
                Drive::Position(_) => ControlMode::Position,
                Drive::Velocity { .. } => ControlMode::Velocity,
                Drive::Free => {
                    return Err(setting(key(&format!("drives.{}", names[k])), "free", "a motor"));
                }
            });
        }
        let imu_link = self.link(&key("imu_link"), s.robot, &s.imu_link)?;
        let mut module = EmbeddedModule::new(s.name.clone(), s.robot, joints, names);
        module.drives = s.drives;
        module.modes = modes;
        let stream = |k: u64| {
            let mut r = ChaCha8Rng::seed_from_u64(seed);
            r.set_stream(i * 8 + k);
            r
        };
        let mut imu_rng = stream(0);
        let b = self.models.imu.gyro_bias_sigma_deg_s.to_radians();
        let gyro_bias = Vector3::new(
            models::normal(&mut imu_rng),
            models::normal(&mut imu_rng),
            models::normal(&mut imu_rng),
        ) * b;
        let camera = match s.camera {
            Some((spec, tags)) => {
                if spec.robot != s.robot {
                    return Err(setting(key("camera.robot"), spec.robot, &format!("robot {}", s.robot)));
                }
                self.link(&key("camera.link"), s.robot, &spec.link)?;
                module.has_camera = true;
                Some((Camera::new(spec, seed, i * 8 + 1)?, tags))
            }
            None => None,
        };
        if let Some(f) = &s.force_sensor {
            if !self.sim.force_sensors_of(s.robot).contains_key(f) {
                return Err(setting(key("force_sensor"), f, "a force sensor of the robot"));
            }
            module.has_force = true;
        }
        for (name, port, keyless) in s.ports {
            if port.robot != s.robot {
                return Err(setting(
                    key(&format!("ports.{name}.robot")),
                    port.robot,
                    &format!("robot {}", s.robot),
                ));
            }
            self.link(&key(&format!("ports.{name}.link")), s.robot, &port.link)?;
            module.port_names.push(name.clone());
            module.ports.push(PortState {
                name,
                port,
                keyless,
                status: ConnectorStatus {
                    stamp: self.sim.time(),
                    state: ConnectorState::Open,
                    partner: None,
                    reason: None,
                },
                engage_at: None,
                dock: None,
                release_asked: false,
                docking: Ok(Vec::new()),
                docking_queue: VecDeque::new(),
            });
        }
        let t = self.sim.time();
        let devices = Devices {
            imu_link,
            imu_rng,
            gyro_bias,
            yaw_walk: 0.0,
            next_imu: t,
            last_velocity: None,
            camera,
            next_frame: t,
            frames: VecDeque::new(),
            dock_rng: stream(2),
            next_docking: t,
            force_sensor: s.force_sensor,
            forces: VecDeque::new(),
        };
        Ok((module, devices))
    }

    /// The simulator: ground truth, for measuring a run and for tests; never for a behaviour.
    pub fn simulator(&self) -> &Simulator {
        &self.sim
    }

    /// The simulator to change the world (a test's hand pushing a module), not to command it.
    pub fn simulator_mut(&mut self) -> &mut Simulator {
        &mut self.sim
    }

    /// The models in force.
    pub fn models(&self) -> &SensorModels {
        &self.models
    }

    /// Puts `fault` on module `module`'s sensor `sensor` (`joint_states`, `imu`, `camera`,
    /// `wheel_ft`, `dock/<port>`), or clears it with `None`.
    pub fn inject(&mut self, module: usize, sensor: &str, fault: Option<SensorFault>) -> RobotResult<()> {
        let m = self.module_mut(module)?;
        if !m.sensors().iter().any(|k| k == sensor) {
            return Err(m.no_sensor(sensor));
        }
        match fault {
            Some(f) => m.faults.insert(sensor.to_string(), f),
            None => m.faults.remove(sensor),
        };
        Ok(())
    }

    /// Module `i` as the binding keeps it (its drives and devices, for a description).
    pub fn embedded(&self, i: usize) -> Option<&EmbeddedModule> {
        self.modules.get(i)
    }

    fn module_mut(&mut self, i: usize) -> RobotResult<&mut EmbeddedModule> {
        let n = self.modules.len();
        self.modules.get_mut(i).ok_or_else(|| RobotError::Unknown {
            kind: "module",
            name: i.to_string(),
            known: format!("0..{n}"),
        })
    }

    /// Runs the world until `t` (s): the modules' orders carried out first, then physics step
    /// by step, each device sampled at its own rate; the joint states are read at the end.
    pub fn advance_to(&mut self, t: f64) -> Result<()> {
        if !t.is_finite() {
            return Err(setting("advance_to.t".into(), t, "a finite time, s"));
        }
        self.apply_orders()?;
        while self.sim.time() < t - 1e-9 {
            self.sim.step()?;
            self.sample(false)?;
            self.latch()?;
        }
        self.refresh_joints()
    }

    /// Carries out the modules' mode switches, joint targets and releases.
    fn apply_orders(&mut self) -> Result<()> {
        let mut targets = self.sim.targets().to_vec();
        let mut changed = false;
        for m in &mut self.modules {
            for (k, mode) in std::mem::take(&mut m.switches) {
                let d = &m.drives[k];
                let drive = match mode {
                    ControlMode::Position => d.position,
                    ControlMode::Velocity => d.velocity,
                };
                if let Some(drive) = drive {
                    self.sim.set_drive(m.joints.start + k, drive)?;
                    targets[m.joints.start + k] = self.sim.targets()[m.joints.start + k];
                    changed = true;
                }
            }
            if let Some(p) = m.pending.take() {
                // A joint switched after the command keeps its switch's hold.
                for (k, t) in p.iter().enumerate() {
                    if !m.switched_since_command.contains(&k) {
                        targets[m.joints.start + k] = t.value();
                    }
                }
                changed = true;
            }
            m.switched_since_command.clear();
        }
        if changed {
            self.sim.set_targets(&targets)?;
        }
        self.releases()
    }

    /// Opens the latched connectors whose release was asked, and their partners.
    fn releases(&mut self) -> Result<()> {
        let now = self.sim.time();
        for i in 0..self.modules.len() {
            for p in 0..self.modules[i].ports.len() {
                if !std::mem::take(&mut self.modules[i].ports[p].release_asked) {
                    continue;
                }
                let Some(dock) = self.modules[i].ports[p].dock.clone() else {
                    continue;
                };
                self.sim.detach(&dock)?;
                for m in &mut self.modules {
                    for q in &mut m.ports {
                        if q.dock.as_deref() == Some(dock.as_str()) {
                            q.dock = None;
                            q.status = ConnectorStatus {
                                stamp: now,
                                state: ConnectorState::Open,
                                partner: None,
                                reason: None,
                            };
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn refresh_joints(&mut self) -> Result<()> {
        let q = self.sim.joint_positions();
        let v = self.sim.joint_velocities();
        let e = self
            .sim
            .joint_efforts()
            .ok_or_else(|| setting("engine".into(), "rapier", "the native engine"))?;
        let now = self.sim.time();
        for m in &mut self.modules {
            m.now = now;
            if m.fault("joint_states") == Some(SensorFault::Silent) {
                continue;
            }
            let r = m.joints.clone();
            let mut js = modbot_interface::JointStates {
                stamp: now,
                position: q[r.clone()].to_vec(),
                velocity: v[r.clone()].to_vec(),
                effort: e[r].to_vec(),
            };
            if m.fault("joint_states") == Some(SensorFault::NotANumber) {
                js.position[0] = f64::NAN;
            }
            m.joint_states = js.check("joint_states", m.joint_names.len()).map(|_| js);
        }
        Ok(())
    }
}

impl Modules for EmbeddedModules {
    fn len(&self) -> usize {
        self.modules.len()
    }

    fn module(&mut self, i: usize) -> RobotResult<&mut dyn Module> {
        Ok(self.module_mut(i)?)
    }

    fn module_ref(&self, i: usize) -> RobotResult<&dyn Module> {
        let n = self.modules.len();
        self.modules
            .get(i)
            .map(|m| m as &dyn Module)
            .ok_or_else(|| RobotError::Unknown {
                kind: "module",
                name: i.to_string(),
                known: format!("0..{n}"),
            })
    }
}

/// Every joint's drives for a robot whose motors run in both modes with the same limits: a
/// servo's velocity mode at its speed and torque limits; a velocity drive's position mode as
/// `servo` (the module's servo law), when given.
pub fn both_modes(drives: &[Drive], servo: Option<Drive>) -> Vec<JointDrives> {
    drives
        .iter()
        .map(|d| match *d {
            Drive::Position(s) => JointDrives {
                position: Some(*d),
                velocity: Some(Drive::Velocity {
                    max_speed: s.max_speed,
                    max_torque: s.max_torque,
                }),
            },
            Drive::Velocity { .. } => JointDrives {
                position: servo,
                velocity: Some(*d),
            },
            Drive::Free => JointDrives {
                position: None,
                velocity: None,
            },
        })
        .collect()
}

impl std::fmt::Debug for EmbeddedModules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedModules")
            .field(
                "modules",
                &self.modules.iter().map(|m| m.name.clone()).collect::<Vec<_>>(),
            )
            .field("time", &self.sim.time())
            .finish()
    }
}
