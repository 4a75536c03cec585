//! The measurement protocol of the source (§2.4–§2.5 of the spec): start at rest with the body
//! axis along x, discard the first cycles, then measure the CoM step in the initial body
//! frame, the heading change, roll, CoM height and speed per cycle.

use nalgebra::Point3;

use crate::world::{Reference, heading_of};
use serde::Serialize;

use crate::assess::RunStatus;
use crate::error::{Result, SimError};
use crate::world::Simulator;

/// One recorded instant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sample {
    /// Time, s.
    pub t: f64,
    /// Centre of mass, m.
    pub com: [f64; 3],
    /// The point whose steps are measured (x, y), m: the centre of mass, or the root link's
    /// origin ([`Reference`]).
    pub point: [f64; 2],
    /// Heading of the tail→head vector (or of the root link), rad, unwrapped.
    pub heading: f64,
    /// Roll of the tail module's up axis about the tail→head axis, from upright, rad,
    /// unwrapped (a full turn per cycle when the chain rolls).
    pub roll: f64,
    /// Origin of the middle link ([`Simulator::middle_pose`]: a chain's central module), m.
    pub middle: [f64; 3],
    /// Roll of the middle link about its own long (x) axis, rad, unwrapped: the
    /// inclination of the body where it is, free of the pitch and yaw of the wave (the
    /// tail→head roll above also sees a curved body's pitching tail as roll).
    pub middle_roll: f64,
    /// How far the body has turned over since the first sample, deg, 0…180: the angle by
    /// which world up has moved in the frame of a link, the larger over the middle link and
    /// the base for a robot measured at its CoM (a chain's central and tail modules), the
    /// base's for one measured at its base (the wheel-foot robots, whose middle link may be
    /// a wheel). Free of the heading; a roll and a pitch over the top both count.
    pub body_tilt_deg: f64,
    /// Joint targets, rad.
    pub targets: Vec<f64>,
    /// Joint angles, rad.
    pub angles: Vec<f64>,
}

fn unwrap(prev: Option<f64>, raw: f64) -> f64 {
    match prev {
        None => raw,
        Some(p) => {
            let d = (raw - p + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI;
            p + d
        }
    }
}

/// Height and roll extremes (and the height's mean) of a run of samples.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Spread {
    count: usize,
    height_sum: f64,
    height_min: f64,
    height_max: f64,
    roll_min: f64,
    roll_max: f64,
}

impl Default for Spread {
    fn default() -> Self {
        Spread {
            count: 0,
            height_sum: 0.0,
            height_min: f64::INFINITY,
            height_max: f64::NEG_INFINITY,
            roll_min: f64::INFINITY,
            roll_max: f64::NEG_INFINITY,
        }
    }
}

impl Spread {
    fn add(&mut self, s: &Sample) {
        self.count += 1;
        self.height_sum += s.com[2];
        self.height_min = self.height_min.min(s.com[2]);
        self.height_max = self.height_max.max(s.com[2]);
        self.roll_min = self.roll_min.min(s.roll);
        self.roll_max = self.roll_max.max(s.roll);
    }

    fn merge(&mut self, o: &Spread) {
        self.count += o.count;
        self.height_sum += o.height_sum;
        self.height_min = self.height_min.min(o.height_min);
        self.height_max = self.height_max.max(o.height_max);
        self.roll_min = self.roll_min.min(o.roll_min);
        self.roll_max = self.roll_max.max(o.roll_max);
    }
}

/// Samples kept for plots and inspection, at most a bound: when full, every other one is
/// dropped and from then on one in twice as many is kept; the last sample is always there.
#[derive(Debug, Clone)]
struct Thinned {
    cap: usize,
    every: u64,
    seen: u64,
    samples: Vec<Sample>,
}

impl Thinned {
    fn push(&mut self, s: &Sample) {
        if self.seen % self.every == 0 {
            if self.samples.len() >= self.cap.max(2) {
                let mut k = 0;
                self.samples.retain(|_| {
                    k += 1;
                    k % 2 == 1
                });
                self.every *= 2;
            }
            if self.seen % self.every == 0 {
                self.samples.push(s.clone());
            }
        }
        self.seen += 1;
    }
}

/// The most samples a run keeps in memory (for its plot and its caller); the whole
/// trajectory streams to a sink ([`crate::run::run_controller_streaming`]). 20 000 samples
/// of a 16-joint robot are about 6 MB.
pub const MAX_KEPT_SAMPLES: usize = 20_000;

/// Records a simulation for the measurement protocol in bounded memory: the samples at the
/// cycle boundaries ([`Recorder::mark`]), the height and roll spread between them, and a
/// thinned copy of the samples (at most `keep`).
#[derive(Debug, Clone)]
pub struct Recorder {
    last: Option<Sample>,
    /// (boundary time since the first sample, the first sample at or after it).
    marks: Vec<(f64, Sample)>,
    /// Spread of the samples after each mark up to and including the next.
    segments: Vec<Spread>,
    pending: Spread,
    kept: Thinned,
    /// World up in the frames of the links the overturn check follows, at the first sample.
    up0: Option<[nalgebra::Vector3<f64>; 2]>,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::keeping(MAX_KEPT_SAMPLES)
    }
}

impl Recorder {
    /// A recorder that keeps at most `keep` samples (at least 2).
    pub fn keeping(keep: usize) -> Recorder {
        Recorder {
            last: None,
            marks: Vec::new(),
            segments: Vec::new(),
            pending: Spread::default(),
            up0: None,
            kept: Thinned {
                cap: keep.max(2),
                every: 1,
                seen: 0,
                samples: Vec::new(),
            },
        }
    }

    /// The samples kept (all of them up to the bound, then thinned; always the last).
    pub fn into_samples(mut self) -> Vec<Sample> {
        if let Some(l) = self.last.take()
            && self.kept.samples.last() != Some(&l)
        {
            self.kept.samples.push(l);
        }
        self.kept.samples
    }

    /// Samples recorded.
    pub fn count(&self) -> u64 {
        self.kept.seen
    }

    /// Marks the last sample as the one at a cycle boundary `at` seconds after the first
    /// (the first sample at or after it); boundaries come in order, the first at 0.
    pub fn mark(&mut self, at: f64) {
        if let Some(s) = &self.last {
            if !self.marks.is_empty() {
                self.segments.push(std::mem::take(&mut self.pending));
            }
            self.marks.push((at, s.clone()));
        }
    }

    /// Records the simulator's state now and returns the sample.
    pub fn record(&mut self, sim: &Simulator, targets: &[f64]) -> &Sample {
        let (tail, head) = sim.ends();
        let o = head - tail;
        // Roll: the tail module's up axis about the tail→head axis, from upright.
        let axis = o.normalize();
        let root = sim.root_pose();
        let up = root.rotation * nalgebra::Vector3::z();
        let reference = nalgebra::Vector3::z() - axis * axis.z;
        let side = axis.cross(&reference);
        let u = up - axis * up.dot(&axis);
        let roll_raw = u.dot(&side).atan2(u.dot(&reference));
        let last = self.last.as_ref();
        let c = sim.com();
        let (raw_heading, p) = match sim.reference() {
            Reference::Com => (o.y.atan2(o.x), c),
            Reference::Base => (heading_of(&root), Point3::from(root.translation.vector)),
        };
        let heading = unwrap(last.map(|s| s.heading), raw_heading);
        let roll = unwrap(last.map(|s| s.roll), roll_raw);
        let mid = sim.middle_pose();
        // Roll about the link's own x axis: the angle of its y axis out of the horizontal
        // plane, against its z axis (ZYX Euler roll; pitch and yaw do not enter).
        let r = mid.rotation.to_rotation_matrix();
        let middle_roll = unwrap(last.map(|s| s.middle_roll), r[(2, 1)].atan2(r[(2, 2)]));
        let z = nalgebra::Vector3::z();
        let world_up = [mid.rotation.inverse() * z, root.rotation.inverse() * z];
        let up0 = *self.up0.get_or_insert(world_up);
        let tilt = |k: usize| world_up[k].dot(&up0[k]).clamp(-1.0, 1.0).acos().to_degrees();
        let body_tilt_deg = match sim.reference() {
            Reference::Com => tilt(0).max(tilt(1)),
            Reference::Base => tilt(1),
        };
        let sample = Sample {
            t: sim.time(),
            com: [c.x, c.y, c.z],
            point: [p.x, p.y],
            heading,
            roll,
            middle: mid.translation.vector.into(),
            middle_roll,
            body_tilt_deg,
            targets: targets.to_vec(),
            angles: sim.joint_positions(),
        };
        if !self.marks.is_empty() {
            self.pending.add(&sample);
        }
        self.kept.push(&sample);
        self.last.insert(sample)
    }

    /// Applies the protocol to the marked boundaries: discard `warmup` cycles, measure over
    /// the next `cycles`. `body_length` (m) scales the speed.
    pub fn report(&self, warmup: usize, cycles: usize, body_length: f64) -> Result<Report> {
        let start = self.marks.first().map(|m| m.1.t).unwrap_or(0.0);
        let have = self.last.as_ref().map(|s| s.t).unwrap_or(0.0) - start;
        let Some(end) = self.marks.get(warmup + cycles) else {
            return Err(SimError::TooShort {
                needed: f64::INFINITY,
                have,
            });
        };
        if cycles == 0 {
            return Err(SimError::TooShort { needed: end.0, have });
        }
        let mark = |k: usize| &self.marks[warmup + k];
        let (t0, t1) = (mark(0).0, mark(cycles).0);
        let period = (t1 - t0) / cycles as f64;
        let gamma0 = self.marks[0].1.heading;
        let body = |s: &Sample, from: &Sample| {
            let (dx, dy) = (s.point[0] - from.point[0], s.point[1] - from.point[1]);
            let (c, sn) = (gamma0.cos(), gamma0.sin());
            (c * dx + sn * dy, -sn * dx + c * dy)
        };
        let per_cycle: Vec<CycleStep> = (0..cycles)
            .map(|k| {
                let (a, b) = (&mark(k).1, &mark(k + 1).1);
                let (dx, dy) = body(b, a);
                CycleStep {
                    duration_s: mark(k + 1).0 - mark(k).0,
                    dx_m: dx,
                    dy_m: dy,
                    dheading_deg: (b.heading - a.heading).to_degrees(),
                    droll_deg: (b.roll - a.roll).to_degrees(),
                }
            })
            .collect();
        let (s0, s1) = (&mark(0).1, &mark(cycles).1);
        let n = cycles as f64;
        let (dx, dy) = body(s1, s0);
        // The window: the sample at its start and every one after it up to its end.
        let mut spread = Spread::default();
        spread.add(s0);
        for seg in &self.segments[warmup..warmup + cycles] {
            spread.merge(seg);
        }
        let step = (dx * dx + dy * dy).sqrt() / n;
        let boundaries = self.marks[..=warmup + cycles]
            .iter()
            .map(|(at, s)| Boundary {
                t_s: *at,
                com_height_m: s.com[2],
                body_tilt_deg: s.body_tilt_deg,
            })
            .collect();
        let mut report = Report {
            period_s: period,
            warmup_cycles: warmup,
            cycles,
            body_length_m: body_length,
            step_x_m: dx / n,
            step_y_m: dy / n,
            step_m: step,
            heading_change_deg: (s1.heading - s0.heading).to_degrees() / n,
            roll_per_cycle_deg: (s1.roll - s0.roll).to_degrees() / n,
            roll_range_deg: (spread.roll_max - spread.roll_min).to_degrees(),
            com_height_mean_m: spread.height_sum / spread.count as f64,
            com_height_min_m: spread.height_min,
            com_height_max_m: spread.height_max,
            speed_body_lengths_per_cycle: step / body_length,
            speed_m_s: step / period,
            per_cycle,
            boundaries,
            status: RunStatus::Ok,
            findings: Vec::new(),
        };
        report.assess(false);
        Ok(report)
    }
}

/// The robot's state at a cycle boundary (warm-up included), for the run's assessment.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Boundary {
    /// Time since the first boundary, s.
    pub t_s: f64,
    /// CoM height, m.
    pub com_height_m: f64,
    /// How far the body has turned over since the start ([`Sample::body_tilt_deg`]), deg.
    pub body_tilt_deg: f64,
}

/// Displacement over one cycle.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CycleStep {
    /// How long the cycle took, s.
    pub duration_s: f64,
    /// Along the initial body axis, m.
    pub dx_m: f64,
    /// Across it (left positive), m.
    pub dy_m: f64,
    /// Heading change, deg.
    pub dheading_deg: f64,
    /// Roll change, deg.
    pub droll_deg: f64,
}

impl CycleStep {
    /// The cycle's step √(Δx² + Δy²), m: the thesis protocols' per-cycle d.
    pub fn distance_m(&self) -> f64 {
        self.dx_m.hypot(self.dy_m)
    }
}

/// What the protocol measures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Cycle time, s: the period T of a clock-driven gait, the measured mean of an
    /// event-driven one.
    pub period_s: f64,
    /// Cycles discarded.
    pub warmup_cycles: usize,
    /// Cycles measured.
    pub cycles: usize,
    /// Robot length, m.
    pub body_length_m: f64,
    /// Mean CoM step along the initial body axis, m per cycle.
    pub step_x_m: f64,
    /// Mean CoM step across it (left positive), m per cycle.
    pub step_y_m: f64,
    /// Mean CoM step length, m per cycle.
    pub step_m: f64,
    /// Mean heading change, deg per cycle (anticlockwise positive).
    pub heading_change_deg: f64,
    /// Mean roll change, deg per cycle.
    pub roll_per_cycle_deg: f64,
    /// Roll range over the window, deg.
    pub roll_range_deg: f64,
    /// CoM height over the window: mean, m.
    pub com_height_mean_m: f64,
    /// CoM height minimum, m.
    pub com_height_min_m: f64,
    /// CoM height maximum, m.
    pub com_height_max_m: f64,
    /// Speed, body lengths per cycle.
    pub speed_body_lengths_per_cycle: f64,
    /// Speed, m/s.
    pub speed_m_s: f64,
    /// Every measured cycle.
    pub per_cycle: Vec<CycleStep>,
    /// Every cycle boundary from the start, the warm-up's included.
    pub boundaries: Vec<Boundary>,
    /// What the run did beyond its mean step ([`Report::assess`]).
    pub status: RunStatus,
    /// What set the status, a sentence each (empty when `ok`).
    pub findings: Vec<String>,
}
