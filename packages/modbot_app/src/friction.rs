//! Friction estimation on the embedded simulator (seed-000 §6.2, Lua `estimate_friction`;
//! decision record 0046): a lone wheel-foot module walks the forward low-velocity inchworm
//! (`inchworm_fwd_low`) through the gait driver, closed loop as `gait_node` runs it, and
//! reads the force sensor between its wheel discs (`m1_wheel_sensor`) at every control tick
//! while the reset pose is commanded; `modbot_planner::friction` keeps the maximum of each
//! of steps 1–4, averages them and bands the mean.
//!
//! **The reading.** The source reads the z component of a V-Rep force sensor whose z lies
//! along the wheel axis: the friction force on the front (ground) disc along the module's
//! long axis, which the push stroke slides the wheel along. Ours is the same component of
//! the simulator's sensor between the discs: its x (the disc's axis), sign turned so that
//! friction holding the wheel back reads positive, in N, averaged over the last
//! [`SAMPLE_S`] (50 ms, V-Rep's step: its sensor reports a constraint's impulse over one
//! step, so the wheel's touchdown impact, a few 1 ms steps here, does not stand for the
//! stroke), times [`GAIN`], which brings our module's reading per unit of terrain μ to the
//! scale the source's band edges imply (0.88 N per unit μ; ours 0.94 N). Record 0046
//! derives both.

use std::collections::VecDeque;

use modbot_core::Topology;
use modbot_gaits::GaitLibrary;
use modbot_planner::friction::{BandEdges, FrictionEstimate, FrictionEstimator, WALKED_STEPS};
use modbot_sim::SimSettings;

use crate::gait_driver::{GaitDriver, GaitRequest};
use crate::session::{Interface, SimSession};

/// The gait the estimate walks.
pub const GAIT: &str = "inchworm_fwd_low";
/// The sensor read: the lone module's force sensor between its wheel discs.
pub const SENSOR: &str = "m1_wheel_sensor";
/// The sensor's averaging time, s: V-Rep's step (50 ms), over which its force sensor
/// reports a constraint's impulse per step (record 0046).
pub const SAMPLE_S: f64 = 0.05;
/// Source-scale reading per N of axial force: the source's edges imply 0.881 N per unit μ
/// (least squares of the four edges against the mid-points between the levels), our
/// module reads 0.938 N per unit μ (least squares over μ = 0.2 … 1.0), 0.881 / 0.938 = 0.94
/// (record 0046).
pub const GAIN: f64 = 0.94;
/// Control rate, Hz: the simulator's default (record 0023).
pub use modbot_sim::DEFAULT_CONTROL_RATE_HZ as CONTROL_HZ;
/// Simulated time allowed for the five steps, s (they take about 3 s).
pub const TIMEOUT_S: f64 = 30.0;

/// What one estimate did.
#[derive(Debug, Clone, PartialEq)]
pub struct FrictionWalk {
    /// The estimate (readings in the source's scale).
    pub estimate: FrictionEstimate,
    /// Each tick's sensor force (50 ms mean) while the reset pose was commanded, by step,
    /// all five: (time s, axial friction N, normal load N), before the gain.
    pub raw: Vec<Vec<(f64, f64, f64)>>,
    /// Simulated time of the walk, s.
    pub time_s: f64,
    /// The module's mass, kg.
    pub mass_kg: f64,
    /// Distance walked by the module's reference point, m.
    pub walked_m: f64,
}

/// The last `len` physics steps' (axial, normal) forces, N.
struct Window {
    len: usize,
    forces: VecDeque<(f64, f64)>,
}

impl Window {
    fn new(len: usize) -> Window {
        Window {
            len,
            forces: VecDeque::with_capacity(len),
        }
    }

    fn push(&mut self, axial: f64, normal: f64) {
        if self.forces.len() == self.len {
            self.forces.pop_front();
        }
        self.forces.push_back((axial, normal));
    }

    /// The mean (axial, normal) force over the window, N.
    fn mean(&self) -> (f64, f64) {
        let n = self.forces.len().max(1) as f64;
        let (a, b) = self.forces.iter().fold((0.0, 0.0), |(a, b), f| (a + f.0, b + f.1));
        (a / n, b / n)
    }
}

/// Runs the estimate for the lone `wheelfoot` module in `world`, from its start.
pub fn estimate_friction(
    topology: Topology,
    world: &modbot_core::Scenario,
    edges: BandEdges,
) -> Result<FrictionWalk, String> {
    let mut session =
        SimSession::new(topology, world, SimSettings::for_scenario(world), 0).map_err(|e| e.to_string())?;
    let names = session.sim.joint_names().to_vec();
    let foot: Vec<usize> = ["m1_back_joint1", "m1_back_joint2"]
        .iter()
        .map(|j| {
            names.iter().position(|n| n == j).ok_or_else(|| {
                format!("the robot has no joint `{j}`: friction is estimated by a lone wheel-foot module")
            })
        })
        .collect::<Result<_, _>>()?;
    if !session.sim.force_sensors().contains_key(SENSOR) {
        return Err(format!(
            "the robot has no force sensor `{SENSOR}` (the native engine reads it)"
        ));
    }
    let mut driver = GaitDriver::new(session.topology.clone(), GaitLibrary::builtin());
    let base = session.base_link();
    let mass_kg = session.sim.total_mass();
    let start = session.sim.link_poses()[base].translation.vector;
    let dt = 1.0 / CONTROL_HZ;
    let t0 = session.sim.time();
    let mut estimator = FrictionEstimator::new();
    let mut raw: Vec<Vec<(f64, f64, f64)>> = Vec::new();
    let mut started = false;
    let mut tick: u64 = 0;
    let mut window = Window::new(((SAMPLE_S / session.sim.step_size()).round() as usize).max(1));
    loop {
        let now = session.sim.time() - t0;
        if now > TIMEOUT_S {
            return Err(format!(
                "{} of {WALKED_STEPS} steps in {TIMEOUT_S} s of simulated time",
                driver.status().cycles
            ));
        }
        driver.observe_joints(&names, &session.sim.joint_positions(), &session.sim.joint_velocities())?;
        driver.observe_base(session.sim.link_poses()[base])?;
        if !started {
            driver.request(&GaitRequest {
                gait: GAIT.into(),
                transition_s: -1.0,
                ..GaitRequest::default()
            })?;
            started = true;
        }
        if driver.status().cycles as usize >= WALKED_STEPS {
            break;
        }
        if let Some(c) = driver.step(dt) {
            let c = c?;
            session
                .command(Interface::Position, &c.position)
                .map_err(|e| e.to_string())?;
            session
                .command(Interface::Velocity, &c.velocity)
                .map_err(|e| e.to_string())?;
        }
        tick += 1;
        // Physics step by step to the next tick, every step's force into the window.
        let next = t0 + tick as f64 * dt;
        while session.sim.time() < next - 1e-9 {
            session.sim.step().map_err(|e| e.to_string())?;
            let f = session.sim.force_sensors().remove(SENSOR).unwrap_or_default();
            let [x, y, z] = f.as_slice() else {
                return Err(format!("`{SENSOR}` gave {} components, expected 3", f.len()));
            };
            window.push(-x, y.hypot(*z));
        }
        let (axial, normal) = window.mean();
        let out = driver.output();
        let reset = foot.iter().all(|&k| out[k].abs() < 1e-9);
        let begun = estimator.steps_begun();
        estimator.sample(reset, GAIN * axial).map_err(|e| e.to_string())?;
        if reset {
            if estimator.steps_begun() > begun {
                raw.push(Vec::new());
            }
            if let Some(step) = raw.last_mut() {
                step.push((session.sim.time() - t0, axial, normal));
            }
        }
    }
    let end = session.sim.link_poses()[base].translation.vector;
    Ok(FrictionWalk {
        estimate: estimator.estimate(edges).map_err(|e| e.to_string())?,
        raw,
        time_s: session.sim.time() - t0,
        mass_kg,
        walked_m: (end - start).xy().norm(),
    })
}
