//! The measurement protocol of the source (§2.4–§2.5 of the spec): start at rest with the body
//! axis along x, discard the first cycles, then measure the CoM step in the initial body
//! frame, the heading change, roll, CoM height and speed per cycle.

use nalgebra::Point3;

use crate::world::{Reference, heading_of};
use serde::Serialize;

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
    /// Roll of the tail module about its own axis, rad, unwrapped.
    pub roll: f64,
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

/// Records samples of a simulation.
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    /// The samples so far.
    pub samples: Vec<Sample>,
}

impl Recorder {
    /// Records the simulator's state now.
    pub fn record(&mut self, sim: &Simulator, targets: &[f64]) {
        let (tail, head) = sim.ends();
        let o = head - tail;
        // Roll: the tail module's up axis about the tail→head axis, from upright.
        let axis = o.normalize();
        let up = sim.root_pose().rotation * nalgebra::Vector3::z();
        let reference = nalgebra::Vector3::z() - axis * axis.z;
        let side = axis.cross(&reference);
        let u = up - axis * up.dot(&axis);
        let roll_raw = u.dot(&side).atan2(u.dot(&reference));
        let last = self.samples.last();
        let c = sim.com();
        let (raw_heading, p) = match sim.reference() {
            Reference::Com => (o.y.atan2(o.x), c),
            Reference::Base => {
                let base = sim.root_pose();
                (heading_of(&base), Point3::from(base.translation.vector))
            }
        };
        let heading = unwrap(last.map(|s| s.heading), raw_heading);
        let roll = unwrap(last.map(|s| s.roll), roll_raw);
        self.samples.push(Sample {
            t: sim.time(),
            com: [c.x, c.y, c.z],
            point: [p.x, p.y],
            heading,
            roll,
            targets: targets.to_vec(),
            angles: sim.joint_positions(),
        });
    }

    fn at(&self, t: f64) -> &Sample {
        let i = self.samples.partition_point(|s| s.t < t - 1e-9);
        &self.samples[i.min(self.samples.len() - 1)]
    }

    /// Applies the protocol: discard `warmup` cycles, measure over the next `cycles`.
    /// `boundaries` are the times the cycles start and end (time since the first sample:
    /// k·T for a clock-driven gait, measured for an event-driven one), at least
    /// `warmup + cycles + 1` of them. `body_length` (m) scales the speed.
    pub fn report(&self, boundaries: &[f64], warmup: usize, cycles: usize, body_length: f64) -> Result<Report> {
        let start = self.samples.first().map(|s| s.t).unwrap_or(0.0);
        let have = self.samples.last().map(|s| s.t).unwrap_or(0.0) - start;
        let Some(&end) = boundaries.get(warmup + cycles) else {
            return Err(SimError::TooShort {
                needed: f64::INFINITY,
                have,
            });
        };
        if cycles == 0 || have + 1e-9 < end {
            return Err(SimError::TooShort { needed: end, have });
        }
        let boundary = |k: usize| start + boundaries[warmup + k];
        let (t0, t1) = (boundary(0), boundary(cycles));
        let period = (t1 - t0) / cycles as f64;
        let first = &self.samples[0];
        let gamma0 = first.heading;
        let body = |s: &Sample, from: &Sample| {
            let (dx, dy) = (s.point[0] - from.point[0], s.point[1] - from.point[1]);
            let (c, sn) = (gamma0.cos(), gamma0.sin());
            (c * dx + sn * dy, -sn * dx + c * dy)
        };
        let per_cycle: Vec<CycleStep> = (0..cycles)
            .map(|k| {
                let a = self.at(boundary(k));
                let b = self.at(boundary(k + 1));
                let (dx, dy) = body(b, a);
                CycleStep {
                    duration_s: boundary(k + 1) - boundary(k),
                    dx_m: dx,
                    dy_m: dy,
                    dheading_deg: (b.heading - a.heading).to_degrees(),
                    droll_deg: (b.roll - a.roll).to_degrees(),
                }
            })
            .collect();
        let (s0, s1) = (self.at(t0), self.at(t1));
        let n = cycles as f64;
        let (dx, dy) = body(s1, s0);
        let window: Vec<&Sample> = self
            .samples
            .iter()
            .filter(|s| s.t >= t0 - 1e-9 && s.t <= t1 + 1e-9)
            .collect();
        let heights: Vec<f64> = window.iter().map(|s| s.com[2]).collect();
        let mean_h = heights.iter().sum::<f64>() / heights.len() as f64;
        let rolls: Vec<f64> = window.iter().map(|s| s.roll).collect();
        let (rmin, rmax) = rolls
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), r| (a.min(*r), b.max(*r)));
        let step = (dx * dx + dy * dy).sqrt() / n;
        Ok(Report {
            period_s: period,
            warmup_cycles: warmup,
            cycles,
            body_length_m: body_length,
            step_x_m: dx / n,
            step_y_m: dy / n,
            step_m: step,
            heading_change_deg: (s1.heading - s0.heading).to_degrees() / n,
            roll_per_cycle_deg: (s1.roll - s0.roll).to_degrees() / n,
            roll_range_deg: (rmax - rmin).to_degrees(),
            com_height_mean_m: mean_h,
            com_height_min_m: heights.iter().copied().fold(f64::INFINITY, f64::min),
            com_height_max_m: heights.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            speed_body_lengths_per_cycle: step / body_length,
            speed_m_s: step / period,
            per_cycle,
        })
    }
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
}
