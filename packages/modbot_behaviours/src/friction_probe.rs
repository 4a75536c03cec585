//! The friction probe (seed-000 §6.2, Lua `estimate_friction`; decision records 0046, 0058):
//! a lone wheel-foot module walks the forward low-velocity inchworm (`inchworm_fwd_low`)
//! and reads its wheel's force/torque sensor at every tick while the reset pose is
//! commanded; `modbot_planner::friction` keeps the maximum of each of steps 1–4, averages
//! them and bands the mean.
//!
//! A state machine on the robot interface: each [`FrictionProbe::tick`] reads the joints,
//! the IMU (the controller's heading) and the force sensor, and writes one joint command.
//!
//! **The reading.** The source reads the z component of a V-Rep force sensor whose z lies
//! along the wheel axis: the friction force on the ground disc along the module's long
//! axis. Ours is the same component of the wheel sensor's force: its x (the disc's axis),
//! sign turned so that friction holding the wheel back reads positive, times [`GAIN`],
//! which brings our module's reading per unit of terrain μ to the scale the source's band
//! edges imply. The sensor's own filter (the embedded binding's 50 ms mean, V-Rep's step)
//! is the sensor's business; record 0046 derives both.

use std::collections::BTreeMap;
use std::fmt;

use modbot_gaits::modular::{self, ModularRobot};
use modbot_gaits::{Controller, JointTarget, Observation};
use modbot_planner::friction::{BandEdges, FrictionEstimate, FrictionEstimator, WALKED_STEPS};
use nalgebra::{Isometry3, Translation3};

use crate::interface::{Module, Monotonic, RobotError, fresh};

/// The gait the probe walks.
pub const GAIT: &str = "inchworm_fwd_low";
/// Source-scale reading per N of axial force: the source's edges imply 0.881 N per unit μ,
/// our module reads 0.938 N per unit μ, 0.881 / 0.938 = 0.94 (record 0046).
pub const GAIN: f64 = 0.94;
/// Time allowed for the five steps, s (they take about 3 s).
pub const TIMEOUT_S: f64 = 30.0;
/// The force sensor and the IMU may be this old, s, before the probe stops.
pub use crate::SENSOR_TIMEOUT_S;
/// The force sensor's name, in errors.
pub const SENSOR: &str = "wheel_ft";

/// Where the probe is.
#[derive(Debug, Clone, PartialEq)]
pub enum ProbeState {
    /// Not ticked yet.
    Idle,
    /// Walking: strokes begun so far.
    Walking {
        /// Reset strokes begun (the estimate needs [`WALKED_STEPS`] complete).
        strokes: usize,
    },
    /// Finished with an estimate.
    Done(FrictionEstimate),
    /// Stopped, with the reason.
    Failed(String),
}

impl fmt::Display for ProbeState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeState::Idle => write!(f, "idle"),
            ProbeState::Walking { strokes } => write!(f, "walking (stroke {strokes} of {WALKED_STEPS})"),
            ProbeState::Done(e) => write!(
                f,
                "done: mean of the step maxima {:.3} → μ {}",
                e.mean,
                e.mu.map_or("none".into(), |m| format!("{m:.1}"))
            ),
            ProbeState::Failed(r) => write!(f, "failed: {r}"),
        }
    }
}

/// One tick's force while the reset pose was commanded: (time s, axial N, normal N), before
/// the gain.
pub type Sample = (f64, f64, f64);

/// The probe.
pub struct FrictionProbe {
    edges: BandEdges,
    period_s: f64,
    controller: Option<Box<dyn Controller>>,
    foot: [usize; 2],
    estimator: FrictionEstimator,
    raw: Vec<Vec<Sample>>,
    last_reset: Option<bool>,
    clock: Monotonic,
    start_s: Option<f64>,
    last_s: f64,
    state: ProbeState,
}

impl FrictionProbe {
    /// A probe that bands its mean with `edges`, ticked every `period_s` (its first tick's
    /// step; later ones take the clock's).
    pub fn new(edges: BandEdges, period_s: f64) -> FrictionProbe {
        FrictionProbe {
            edges,
            period_s,
            controller: None,
            foot: [0, 0],
            estimator: FrictionEstimator::new(),
            raw: Vec::new(),
            last_reset: None,
            clock: Monotonic::default(),
            start_s: None,
            last_s: 0.0,
            state: ProbeState::Idle,
        }
    }

    /// Where it is.
    pub fn state(&self) -> &ProbeState {
        &self.state
    }

    /// Each stroke's samples so far, all five.
    pub fn raw(&self) -> &[Vec<Sample>] {
        &self.raw
    }

    /// Time since the first tick, s.
    pub fn elapsed_s(&self) -> f64 {
        self.start_s.map_or(0.0, |s| self.last_s - s)
    }

    /// One tick: reads `io`'s sensors, writes its joints. Returns the state; once `Done` or
    /// `Failed` it stays there and commands nothing.
    pub fn tick(&mut self, io: &mut dyn Module) -> &ProbeState {
        if matches!(self.state, ProbeState::Done(_) | ProbeState::Failed(_)) {
            return &self.state;
        }
        if let Err(reason) = self.advance(io) {
            self.state = ProbeState::Failed(reason);
        }
        &self.state
    }

    fn advance(&mut self, io: &mut dyn Module) -> Result<(), String> {
        let now = self.clock.check(io.now()).map_err(|e| e.to_string())?;
        if !(self.period_s.is_finite() && self.period_s > 0.0 && self.period_s <= 1.0) {
            return Err(format!(
                "period_s = {}: expected a tick period in (0, 1] s",
                self.period_s
            ));
        }
        let dt = match self.start_s {
            Some(_) => now - self.last_s,
            None => self.period_s,
        };
        self.last_s = now;
        let start = *self.start_s.get_or_insert(now);
        if self.controller.is_none() {
            self.begin(io)?;
        }
        let joints = io.joint_states().map_err(|e| e.to_string())?;
        let imu = io.imu().map_err(|e| e.to_string())?;
        fresh("imu", Some(imu.stamp), now, SENSOR_TIMEOUT_S).map_err(|e| e.to_string())?;
        // The force over the last tick, paired with the command that ruled it.
        if let Some(reset) = self.last_reset {
            let w = io.wrench().map_err(|e| e.to_string())?;
            fresh(SENSOR, Some(w.stamp), now, SENSOR_TIMEOUT_S).map_err(|e| e.to_string())?;
            let (axial, normal) = (-w.force.x, w.force.y.hypot(w.force.z));
            let begun = self.estimator.steps_begun();
            self.estimator.sample(reset, GAIN * axial).map_err(|e| e.to_string())?;
            if reset {
                if self.estimator.steps_begun() > begun {
                    self.raw.push(Vec::new());
                }
                if let Some(stroke) = self.raw.last_mut() {
                    stroke.push((now - start, axial, normal));
                }
            }
        }
        let Some(controller) = self.controller.as_mut() else {
            return Err("no controller".into());
        };
        if controller.completed_cycles() >= WALKED_STEPS {
            let estimate = self.estimator.estimate(self.edges).map_err(|e| e.to_string())?;
            self.state = ProbeState::Done(estimate);
            return Ok(());
        }
        if now - start > TIMEOUT_S {
            return Err(format!(
                "{} of {WALKED_STEPS} steps in {TIMEOUT_S} s",
                controller.completed_cycles()
            ));
        }
        let sensors = BTreeMap::new();
        let obs = Observation {
            time: now - start,
            positions: &joints.position,
            velocities: &joints.velocity,
            base: Isometry3::from_parts(Translation3::identity(), imu.orientation),
            sensors: &sensors,
        };
        let mut out = vec![JointTarget::Position(0.0); joints.position.len()];
        controller.step(dt, &obs, &mut out);
        io.command(&out).map_err(|e: RobotError| e.to_string())?;
        self.last_reset = Some(self.foot.iter().all(|&k| out[k].value().abs() < 1e-9));
        self.state = ProbeState::Walking {
            strokes: self.estimator.steps_begun(),
        };
        Ok(())
    }

    /// Builds the gait for `io`'s joints: a lone wheel-foot module's, or refused naming what
    /// is missing.
    fn begin(&mut self, io: &dyn Module) -> Result<(), String> {
        let names = io.joint_names().to_vec();
        for (i, j) in ["back_joint1", "back_joint2"].iter().enumerate() {
            let full = format!("m1_{j}");
            self.foot[i] = names.iter().position(|n| *n == full).ok_or_else(|| {
                format!("the robot has no joint `{full}`: friction is estimated by a lone wheel-foot module")
            })?;
        }
        let c = modular::build_for(ModularRobot::Wheelfoot, GAIT, &names, &BTreeMap::new())
            .map_err(|e| format!("the friction probe's gait: {e}"))?;
        self.controller = Some(c);
        Ok(())
    }
}
