//! Running a controller on the simulator, closed loop, with the measurement protocol.

use modbot_gaits::{Controller, Gait, GaitPlayer, JointTarget, Observation, Transition};

use crate::error::{Result, SimError};
use crate::measure::{Recorder, Report, Sample};
use crate::robot::Drive;
use crate::world::Simulator;

/// The rate at which controllers send joint targets unless told otherwise, Hz: the rate the
/// wheel-foot servos were calibrated at (decision record 0023).
pub const DEFAULT_CONTROL_RATE_HZ: f64 = 100.0;

/// How long and how finely to run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunPlan {
    /// Cycles discarded before measuring (the source discards 2).
    pub warmup_cycles: usize,
    /// Cycles measured.
    pub cycles: usize,
    /// Rate at which joint targets are sent, Hz.
    pub control_rate_hz: f64,
    /// Simulated time after which a controller whose cycles end by events (a pose sequence
    /// that never reaches its pose) is given up, s.
    pub max_time_s: f64,
}

impl Default for RunPlan {
    fn default() -> Self {
        RunPlan {
            warmup_cycles: 2,
            cycles: 4,
            control_rate_hz: DEFAULT_CONTROL_RATE_HZ,
            max_time_s: 600.0,
        }
    }
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// Samples of the run, one per control tick up to [`crate::MAX_KEPT_SAMPLES`], thinned
    /// evenly beyond (the last always kept); the whole trajectory goes to the sink of
    /// [`run_controller_streaming`].
    pub samples: Vec<Sample>,
    /// Samples recorded (the first before any tick, then one per tick).
    pub recorded: u64,
    /// The protocol's measurements.
    pub report: Report,
}

/// Runs `controller` on `sim` from its current state for warm-up plus measured cycles, closed
/// loop: every control tick the controller sees the joint positions and velocities and the
/// base pose, and its targets go to the joints while physics runs at its own step.
/// A clock-driven controller's cycles are its periods; an event-driven one's (a pose
/// sequence) are counted as they complete, and the report gives their measured length.
/// `progress` is called after every tick with (simulated time, expected total time).
pub fn run_controller(
    sim: &mut Simulator,
    controller: &mut dyn Controller,
    plan: RunPlan,
    body_length_m: f64,
    progress: &mut dyn FnMut(f64, f64),
) -> Result<RunOutput> {
    run_controller_streaming(
        sim,
        controller,
        plan,
        body_length_m,
        progress,
        &mut |_, _| Ok(()),
        crate::measure::MAX_KEPT_SAMPLES,
    )
}

/// [`run_controller`] in bounded memory however long the run: every sample goes to `sink`
/// as it is recorded (a trajectory file), with the simulator in the state it was recorded
/// from (for what a sample does not hold: link poses, twists), the measurement keeps only
/// what the protocol needs, and at most `keep` samples are kept for the output. A sink's
/// error ends the run with that error.
pub fn run_controller_streaming(
    sim: &mut Simulator,
    controller: &mut dyn Controller,
    plan: RunPlan,
    body_length_m: f64,
    progress: &mut dyn FnMut(f64, f64),
    sink: &mut dyn FnMut(&Sample, &Simulator) -> std::result::Result<(), String>,
    keep: usize,
) -> Result<RunOutput> {
    if !(plan.max_time_s.is_finite() && plan.max_time_s > 0.0) {
        return Err(settings_error("max_time_s", plan.max_time_s, "a time > 0 s"));
    }
    let mut control = ControlLoop::new(sim, controller, plan.control_rate_hz)?;
    let wanted = plan.warmup_cycles + plan.cycles;
    let period = controller.period();
    let dt = control.dt;
    let expected_total = match period {
        Some(p) => wanted as f64 * p,
        None => plan.max_time_s,
    };
    let t_start = sim.time();
    let mut rec = Recorder::keeping(keep);
    let mut positions = sim.joint_positions();
    sink(rec.record(sim, &positions), sim).map_err(SimError::Sink)?;
    rec.mark(0.0);
    let mut velocities = sim.joint_velocities();
    let mut sensors = sim.sensor_readings();
    // Cycle boundaries marked so far (the start is the first).
    let mut marked = 1;
    let ticks = match period {
        Some(p) => (wanted as f64 * p / dt).ceil() as usize,
        None => (plan.max_time_s / dt).ceil() as usize,
    };
    for _ in 0..ticks {
        if !sensors.is_empty() {
            sensors = sim.sensor_readings();
        }
        let obs = Observation {
            time: sim.time() - t_start,
            positions: &positions,
            velocities: &velocities,
            base: sim.root_pose(),
            sensors: &sensors,
        };
        control.tick(sim, controller, &obs)?;
        sim.observe_clearance();
        let sample = rec.record(sim, control.values());
        sink(sample, sim).map_err(SimError::Sink)?;
        // The sample just recorded holds the joint angles the controller sees next.
        positions.clone_from(&sample.angles);
        let elapsed = sample.t - t_start;
        velocities = sim.joint_velocities();
        progress(sim.time() - t_start, expected_total);
        match period {
            // A clock-driven cycle ends at k·T: its boundary sample is the first at or after.
            Some(p) => {
                while marked <= wanted && elapsed >= marked as f64 * p - 1e-9 {
                    rec.mark(marked as f64 * p);
                    marked += 1;
                }
            }
            None => {
                while marked <= controller.completed_cycles().min(wanted) {
                    rec.mark(elapsed);
                    marked += 1;
                }
                if marked > wanted {
                    break;
                }
            }
        }
    }
    if period.is_none() && marked <= wanted {
        return Err(SimError::Stalled {
            controller: controller.name().to_string(),
            done: marked - 1,
            wanted,
            time: plan.max_time_s,
        });
    }
    let report = rec.report(plan.warmup_cycles, plan.cycles, body_length_m)?;
    Ok(RunOutput {
        recorded: rec.count(),
        samples: rec.into_samples(),
        report,
    })
}

/// A bad run setting, named.
pub(crate) fn settings_error(key: &str, value: f64, expected: &str) -> SimError {
    SimError::Settings {
        key: key.into(),
        value: value.to_string(),
        expected: expected.into(),
    }
}

/// Highest control rate a run accepts, Hz: ten times the finest physics step worlds are
/// checked for (1 ms); above it a tick is shorter than any step and the recorded samples
/// only grow (issue 18).
pub const MAX_CONTROL_RATE_HZ: f64 = 10_000.0;

/// Whether `hz` is a control rate a loop accepts: finite, > 0 and at most
/// [`MAX_CONTROL_RATE_HZ`].
pub fn is_control_rate(hz: f64) -> bool {
    hz.is_finite() && hz > 0.0 && hz <= MAX_CONTROL_RATE_HZ
}

/// The actuation side of a closed loop, shared by [`run_controller`] and the maze run: the
/// control rate and the controller's joint count checked once; each tick the controller
/// steps, its targets are checked against the joints' drives and sent, and physics runs
/// until the simulated clock reaches the tick's end. The clock is kept per tick, not as a
/// whole number of steps per tick, so a control period that is not a multiple of the
/// physics step (300 Hz on 2 ms) or is shorter than it (1 kHz on 2 ms: every other tick
/// runs no step, and physics sees the latest targets) still simulates exactly the
/// controller's time.
pub(crate) struct ControlLoop {
    /// Control period, s.
    pub dt: f64,
    /// Simulated time at the loop's start, s.
    t0: f64,
    /// Ticks done.
    ticks: u64,
    drives: Vec<Drive>,
    targets: Vec<JointTarget>,
    values: Vec<f64>,
}

impl ControlLoop {
    pub(crate) fn new(sim: &Simulator, controller: &dyn Controller, control_rate_hz: f64) -> Result<ControlLoop> {
        if !is_control_rate(control_rate_hz) {
            return Err(settings_error(
                "control_rate_hz",
                control_rate_hz,
                &format!("a rate > 0 Hz and at most {MAX_CONTROL_RATE_HZ} Hz"),
            ));
        }
        let n = sim.joint_names().len();
        if controller.joint_count() != n {
            return Err(SimError::JointCount {
                expected: n,
                got: controller.joint_count(),
            });
        }
        let dt = 1.0 / control_rate_hz;
        Ok(ControlLoop {
            dt,
            t0: sim.time(),
            ticks: 0,
            drives: sim.drives(),
            targets: vec![JointTarget::Position(0.0); n],
            values: vec![0.0; n],
        })
    }

    /// One control tick from `obs`.
    pub(crate) fn tick(
        &mut self,
        sim: &mut Simulator,
        controller: &mut dyn Controller,
        obs: &Observation<'_>,
    ) -> Result<()> {
        controller.step(self.dt, obs, &mut self.targets);
        send_targets(sim, controller.name(), &self.drives, &self.targets, &mut self.values)?;
        self.ticks += 1;
        sim.advance_to(self.t0 + self.ticks as f64 * self.dt)
    }

    /// The values last sent, joint order.
    pub(crate) fn values(&self) -> &[f64] {
        &self.values
    }
}

/// Sends a controller's targets to the joints: each target's kind must fit its joint's
/// drive (a position to a servo, a speed to a velocity joint); `values` is scratch space of
/// the joints' count.
pub(crate) fn send_targets(
    sim: &mut Simulator,
    controller: &str,
    drives: &[Drive],
    targets: &[JointTarget],
    values: &mut [f64],
) -> Result<()> {
    for (k, (v, t)) in values.iter_mut().zip(targets).enumerate() {
        let fits = matches!(
            (t, drives[k]),
            (JointTarget::Position(_), Drive::Position(_) | Drive::Free)
                | (JointTarget::Velocity(_), Drive::Velocity { .. } | Drive::Free)
        );
        if !fits {
            return Err(SimError::Robot {
                robot: controller.to_string(),
                what: format!(
                    "controller sends a {} target to joint `{}`, which is driven by {:?}",
                    match t {
                        JointTarget::Position(_) => "position",
                        JointTarget::Velocity(_) => "velocity",
                    },
                    sim.joint_names()[k],
                    drives[k]
                ),
            });
        }
        *v = t.value();
    }
    sim.set_targets(values)
}

/// Plays a sine `gait` from rest (ramped in by a [`GaitPlayer`], blends and slew limit as the
/// gait node does) for warm-up plus measured cycles: [`run_controller`] with the player.
pub fn run_gait(
    sim: &mut Simulator,
    gait: Box<dyn Gait>,
    transition: Transition,
    max_speed_rad_s: Vec<f64>,
    plan: RunPlan,
    body_length_m: f64,
    progress: &mut dyn FnMut(f64, f64),
) -> Result<RunOutput> {
    let mut player = GaitPlayer::new(sim.joint_positions(), max_speed_rad_s, transition);
    player.start(gait);
    run_controller(sim, &mut player, plan, body_length_m, progress)
}
