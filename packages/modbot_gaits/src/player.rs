//! Playing gaits in time without jumps: a ramp from rest, blends between gaits, and a
//! slew limit at the servo speed.

use crate::config::Transition;
use crate::generator::Gait;

/// Smoothstep 3s² − 2s³ on [0, 1]: zero slope at both ends.
pub fn smoothstep(s: f64) -> f64 {
    let s = s.clamp(0.0, 1.0);
    s * s * (3.0 - 2.0 * s)
}

/// Moves each `output` toward its `desired` value by at most its servo's `max_speed`
/// (rad/s) times `dt`; returns how many were clipped.
pub fn slew_toward(output: &mut [f64], desired: &[f64], max_speed: &[f64], dt: f64) -> u64 {
    let mut clipped = 0;
    for ((o, d), w) in output.iter_mut().zip(desired).zip(max_speed) {
        let max_step = w * dt;
        let delta = d - *o;
        if delta.abs() > max_step {
            *o += max_step.copysign(delta);
            clipped += 1;
        } else {
            *o = *d;
        }
    }
    clipped
}

enum Source {
    /// Hold these positions.
    Pose(Vec<f64>),
    /// A gait started at `start` (player time), ramped in from `rest` over `ramp` s.
    Running {
        gait: Box<dyn Gait>,
        start: f64,
        rest: Vec<f64>,
        ramp: f64,
    },
}

impl Source {
    fn eval(&self, t: f64, out: &mut [f64]) {
        match self {
            Source::Pose(p) => out.copy_from_slice(p),
            Source::Running {
                gait,
                start,
                rest,
                ramp,
            } => {
                let tau = t - start;
                gait.targets_at(tau, out);
                let e = if *ramp > 0.0 { smoothstep(tau / ramp) } else { 1.0 };
                if e < 1.0 {
                    for (o, r) in out.iter_mut().zip(rest) {
                        *o = r + e * (*o - r);
                    }
                }
            }
        }
    }
}

/// Plays gaits at a fixed control rate: starts from the robot's current pose and ramps
/// the first gait in, blends from one gait to the next over `blend_s`, and never moves a
/// target faster than its joint's servo can follow.
///
/// It holds the state the [`Gait`]s do not: the clock, the active gait, the last output.
/// Design: decision record 0006.
pub struct GaitPlayer {
    transition: Transition,
    max_speed: Vec<f64>,
    time: f64,
    from: Source,
    to: Option<(Source, f64)>,
    output: Vec<f64>,
    desired: Vec<f64>,
    scratch: Vec<f64>,
    limited: u64,
}

impl GaitPlayer {
    /// A player holding `pose` (rad); `max_speed_rad_s` per joint.
    pub fn new(pose: Vec<f64>, max_speed_rad_s: Vec<f64>, transition: Transition) -> GaitPlayer {
        let n = pose.len();
        GaitPlayer {
            transition,
            max_speed: max_speed_rad_s,
            time: 0.0,
            from: Source::Pose(pose.clone()),
            to: None,
            output: pose,
            desired: vec![0.0; n],
            scratch: vec![0.0; n],
            limited: 0,
        }
    }

    /// Changes the ramp and blend times used by the next [`GaitPlayer::start`].
    pub fn set_transition(&mut self, transition: Transition) {
        self.transition = transition;
    }

    /// The ramp and blend times in use.
    pub fn transition(&self) -> Transition {
        self.transition
    }

    /// Player time, s.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// The last targets emitted, rad.
    pub fn output(&self) -> &[f64] {
        &self.output
    }

    /// How many joint samples the slew limit has clipped so far.
    pub fn limited_samples(&self) -> u64 {
        self.limited
    }

    /// Switches to `gait` now. From rest (holding a pose) its amplitudes ramp in over
    /// `ramp_s`; from another gait the two blend over `blend_s`. A switch during a blend
    /// blends from the targets of that moment.
    pub fn start(&mut self, gait: Box<dyn Gait>) {
        let holding = matches!(self.from, Source::Pose(_)) && self.to.is_none();
        let running = Source::Running {
            gait,
            start: self.time,
            rest: self.output.clone(),
            ramp: if holding { self.transition.ramp_s } else { 0.0 },
        };
        if holding {
            self.from = running;
            self.to = None;
            return;
        }
        if self.to.is_some() {
            self.from = Source::Pose(self.output.clone());
        }
        self.to = Some((running, self.time));
        if self.transition.blend_s <= 0.0 {
            self.finish_blend();
        }
    }

    /// Stops: holds the current targets.
    pub fn hold(&mut self) {
        self.from = Source::Pose(self.output.clone());
        self.to = None;
    }

    fn finish_blend(&mut self) {
        if let Some((to, _)) = self.to.take() {
            self.from = to;
        }
    }

    /// Advances by `dt` seconds and returns the new targets (rad).
    pub fn step(&mut self, dt: f64) -> &[f64] {
        self.time += dt;
        self.from.eval(self.time, &mut self.desired);
        if let Some((to, t0)) = &self.to {
            let s = if self.transition.blend_s > 0.0 {
                smoothstep((self.time - t0) / self.transition.blend_s)
            } else {
                1.0
            };
            to.eval(self.time, &mut self.scratch);
            for (d, n) in self.desired.iter_mut().zip(&self.scratch) {
                *d += s * (n - *d);
            }
            if s >= 1.0 {
                self.finish_blend();
            }
        }
        self.limited += slew_toward(&mut self.output, &self.desired, &self.max_speed, dt);
        &self.output
    }
}

impl GaitPlayer {
    /// The period of the gait it is heading to (the blend's target, else the running one).
    pub fn running_period(&self) -> Option<f64> {
        let source = match &self.to {
            Some((s, _)) => s,
            None => &self.from,
        };
        match source {
            Source::Running { gait, .. } => Some(gait.period()),
            Source::Pose(_) => None,
        }
    }

    /// Time since the running gait started, s (0 while holding a pose).
    fn running_time(&self) -> f64 {
        match &self.from {
            Source::Running { start, .. } if self.to.is_none() => self.time - start,
            _ => 0.0,
        }
    }
}

/// The sine generators played with ramps, blends and the slew limit are one controller:
/// open loop in what it commands, clock driven in its cycles.
impl crate::controller::Controller for GaitPlayer {
    fn name(&self) -> &str {
        match &self.from {
            Source::Running { gait, .. } => gait.name(),
            Source::Pose(_) => "hold",
        }
    }

    fn joint_count(&self) -> usize {
        self.output.len()
    }

    fn step(&mut self, dt: f64, _obs: &crate::controller::Observation<'_>, out: &mut [crate::controller::JointTarget]) {
        let targets = GaitPlayer::step(self, dt);
        for (o, t) in out.iter_mut().zip(targets) {
            *o = crate::controller::JointTarget::Position(*t);
        }
    }

    fn period(&self) -> Option<f64> {
        self.running_period()
    }

    fn completed_cycles(&self) -> usize {
        match self.running_period() {
            Some(p) if p > 0.0 => (self.running_time() / p + 1e-9).floor() as usize,
            _ => 0,
        }
    }
}
