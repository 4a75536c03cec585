//! Running a gait on the simulator with the measurement protocol.

use modbot_gaits::{Gait, GaitPlayer, Transition};

use crate::error::{Result, SimError};
use crate::measure::{Recorder, Report, Sample};
use crate::world::Simulator;

/// How long and how finely to run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunPlan {
    /// Cycles discarded before measuring (the source discards 2).
    pub warmup_cycles: usize,
    /// Cycles measured.
    pub cycles: usize,
    /// Rate at which joint targets are sent, Hz.
    pub control_rate_hz: f64,
}

impl Default for RunPlan {
    fn default() -> Self {
        RunPlan {
            warmup_cycles: 2,
            cycles: 4,
            control_rate_hz: 100.0,
        }
    }
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// One sample per control tick.
    pub samples: Vec<Sample>,
    /// The protocol's measurements.
    pub report: Report,
}

/// Plays `gait` from rest (ramped in by a [`GaitPlayer`]) for warm-up plus measured cycles,
/// sending targets at the control rate while physics runs at its own step. `progress` is
/// called after every control tick with (simulated time, total time).
pub fn run_gait(
    sim: &mut Simulator,
    gait: Box<dyn Gait>,
    transition: Transition,
    max_speed_rad_s: Vec<f64>,
    plan: RunPlan,
    body_length_m: f64,
    progress: &mut dyn FnMut(f64, f64),
) -> Result<RunOutput> {
    if !(plan.control_rate_hz.is_finite() && plan.control_rate_hz > 0.0) {
        return Err(SimError::Settings {
            key: "control_rate_hz".into(),
            value: plan.control_rate_hz.to_string(),
            expected: "a rate > 0 Hz".into(),
        });
    }
    let period = gait.period();
    let total = (plan.warmup_cycles + plan.cycles) as f64 * period;
    let dt = 1.0 / plan.control_rate_hz;
    let substeps = (dt / sim.step_size()).round().max(1.0) as usize;
    let n = sim.joint_names().len();
    let mut player = GaitPlayer::new(vec![0.0; n], max_speed_rad_s, transition);
    player.start(gait);
    let mut rec = Recorder::default();
    rec.record(sim, &vec![0.0; n]);
    let ticks = (total / dt).ceil() as usize;
    for _ in 0..ticks {
        let targets = player.step(dt).to_vec();
        sim.set_targets(&targets)?;
        for _ in 0..substeps {
            sim.step()?;
        }
        rec.record(sim, &targets);
        progress(sim.time(), total);
    }
    let report = rec.report(period, plan.warmup_cycles, plan.cycles, body_length_m)?;
    Ok(RunOutput {
        samples: rec.samples,
        report,
    })
}
