//! The sinusoidal generator (3.9) and the `Gait` trait.

use std::f64::consts::TAU;

/// A gait: joint position targets as a function of time. Time, period and module count
/// are inputs; an implementation holds no clock and no global state.
pub trait Gait: Send + Sync {
    /// Name of the gait (`caterpillar`, `sidewinding`, …).
    fn name(&self) -> &str;
    /// Number of joints it drives.
    fn joint_count(&self) -> usize;
    /// Period T of the motion, s.
    fn period(&self) -> f64;
    /// Targets in radians at global phase φ (rad), joint-vector order.
    fn targets_at_phase(&self, phase: f64, out: &mut [f64]);
    /// Targets in radians at time `t` (s) since the gait started: φ = ±2πt/T.
    fn targets_at(&self, t: f64, out: &mut [f64]);
}

/// One joint's oscillator: φ_i(φ) = A_i sin(φ + ψ_i) + O_i, degrees.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Oscillator {
    /// Amplitude A_i, deg.
    pub amplitude_deg: f64,
    /// Phase ψ_i, deg.
    pub phase_deg: f64,
    /// Offset O_i, deg.
    pub offset_deg: f64,
}

impl Oscillator {
    /// Value at global phase φ (rad), deg.
    pub fn value_deg(&self, phase: f64) -> f64 {
        self.amplitude_deg * (phase + self.phase_deg.to_radians()).sin() + self.offset_deg
    }

    /// Lowest and highest value over a cycle, deg.
    pub fn swing_deg(&self) -> (f64, f64) {
        (
            self.offset_deg - self.amplitude_deg.abs(),
            self.offset_deg + self.amplitude_deg.abs(),
        )
    }
}

/// The general sinusoidal generator (3.9): one oscillator per joint, one shared period.
/// `direction` = −1 runs the phase backwards (φ = −2πt/T), which reverses every gait.
#[derive(Debug, Clone, PartialEq)]
pub struct SineGenerator {
    /// Gait name.
    pub name: String,
    /// Period T, s.
    pub period_s: f64,
    /// +1 or −1.
    pub direction: f64,
    /// Per joint, joint-vector order.
    pub oscillators: Vec<Oscillator>,
}

impl SineGenerator {
    /// Global phase at time t, rad.
    pub fn phase_at(&self, t: f64) -> f64 {
        self.direction * TAU * t / self.period_s
    }

    /// Peak joint speed, deg/s: max_i 2π A_i / T.
    pub fn peak_speed_deg_s(&self) -> f64 {
        self.oscillators
            .iter()
            .map(|o| TAU * o.amplitude_deg.abs() / self.period_s)
            .fold(0.0, f64::max)
    }
}

impl Gait for SineGenerator {
    fn name(&self) -> &str {
        &self.name
    }

    fn joint_count(&self) -> usize {
        self.oscillators.len()
    }

    fn period(&self) -> f64 {
        self.period_s
    }

    fn targets_at_phase(&self, phase: f64, out: &mut [f64]) {
        for (o, osc) in out.iter_mut().zip(&self.oscillators) {
            *o = osc.value_deg(phase).to_radians();
        }
    }

    fn targets_at(&self, t: f64, out: &mut [f64]) {
        self.targets_at_phase(self.phase_at(t), out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spec §8 item 1: the value at t = 0, T/4, T/2 matches the closed form to 1e-9.
    #[test]
    fn closed_form_values() {
        let g = SineGenerator {
            name: "test".into(),
            period_s: 2.0,
            direction: 1.0,
            oscillators: vec![Oscillator {
                amplitude_deg: 40.0,
                phase_deg: 30.0,
                offset_deg: 10.0,
            }],
        };
        let mut out = [0.0];
        for (t, want) in [
            (0.0, 40.0 * 30f64.to_radians().sin() + 10.0),
            (0.5, 40.0 * 120f64.to_radians().sin() + 10.0),
            (1.0, 40.0 * 210f64.to_radians().sin() + 10.0),
        ] {
            g.targets_at(t, &mut out);
            assert!((out[0] - want.to_radians()).abs() < 1e-9);
        }
        assert!((g.peak_speed_deg_s() - 40.0 * std::f64::consts::PI).abs() < 1e-12);
    }
}
