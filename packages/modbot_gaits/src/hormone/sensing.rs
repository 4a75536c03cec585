//! The IR sensors of one module (seed-003 §7): a ring buffer of the last 10 readings per
//! side (0 touching … 128 clear), an obstacle when the buffer's mean is below the side's
//! threshold. Only open sides are scanned; a pitched module skips L and R.

use crate::hormone::topology::Side;

/// Readings per buffer.
pub const RING: usize = 10;
/// A clear reading.
pub const IR_CLEAR: f64 = 128.0;

/// A module is pitched (mounted rolled 90° about its B-F axis relative to its neighbours)
/// when its tilt sensor (the roll of its hinge axis out of the horizontal), read at rest
/// before any wave, exceeds this, deg. The flag is latched then: pitching is how the module
/// is mounted in the organism, not where gravity points later. A moving V rolls its arms by
/// up to 57°, and an arm can tip onto its side, without any module being mounted
/// differently (record 0031).
pub const PITCHED_TILT_DEG: f64 = 45.0;

/// Whether a tilt reading at rest, deg, says the module is pitched ([`PITCHED_TILT_DEG`]).
pub fn is_pitched(tilt_deg: f64) -> bool {
    tilt_deg.abs() > PITCHED_TILT_DEG
}

/// The first of a module's four values (B, F, R, L) that is not an IR reading, finite and
/// 0 … 128: its side and the value (readings and thresholds are checked alike).
pub fn not_a_reading(values: &[f64; 4]) -> Option<(Side, f64)> {
    Side::ALL
        .into_iter()
        .zip(*values)
        .find(|(_, v)| !(v.is_finite() && (0.0..=IR_CLEAR).contains(v)))
}

/// One side's buffer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IrRing {
    values: [f64; RING],
    len: usize,
    next: usize,
}

impl Default for IrRing {
    fn default() -> Self {
        IrRing {
            values: [IR_CLEAR; RING],
            len: 0,
            next: 0,
        }
    }
}

impl IrRing {
    /// Adds a reading (clamped to 0 … 128; a non-finite one is ignored).
    pub fn push(&mut self, v: f64) {
        if !v.is_finite() {
            return;
        }
        self.values[self.next] = v.clamp(0.0, IR_CLEAR);
        self.next = (self.next + 1) % RING;
        self.len = (self.len + 1).min(RING);
    }

    /// Forgets the readings (the side was covered).
    pub fn clear(&mut self) {
        *self = IrRing::default();
    }

    /// The mean of a full buffer (`None` until 10 readings are in).
    pub fn mean(&self) -> Option<f64> {
        (self.len == RING).then(|| self.values.iter().sum::<f64>() / RING as f64)
    }
}

/// The four sides' buffers and thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct IrSensors {
    rings: [IrRing; 4],
}

impl IrSensors {
    /// Scans: a reading per side (index = [`Side::index`]) for the sides in `scan`; the
    /// others' buffers are emptied.
    pub fn scan(&mut self, readings: &[f64; 4], scan: &[Side]) {
        for side in Side::ALL {
            let ring = &mut self.rings[side.index()];
            if scan.contains(&side) {
                ring.push(readings[side.index()]);
            } else {
                ring.clear();
            }
        }
    }

    /// Whether `side` sees an obstacle: a full buffer whose mean is below `threshold`.
    pub fn blocked(&self, side: Side, threshold: f64) -> bool {
        self.rings[side.index()].mean().is_some_and(|m| m < threshold)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The raw reading is not enough (an end module's face swings at the ground and the
    /// sky): the mean of ten decides, and only once ten are in.
    #[test]
    fn the_mean_of_ten_decides() {
        let mut s = IrSensors::default();
        for _ in 0..9 {
            s.scan(&[0.0; 4], &[Side::F]);
        }
        assert!(!s.blocked(Side::F, 40.0), "nine readings are not enough");
        s.scan(&[0.0; 4], &[Side::F]);
        assert!(s.blocked(Side::F, 40.0));
        assert!(!s.blocked(Side::B, 40.0), "an unscanned side never trips");
        // Alternating ground (0) and clear (128): mean 64, not an obstacle at 40.
        for i in 0..10 {
            s.scan(&[if i % 2 == 0 { 0.0 } else { 128.0 }; 4], &[Side::F]);
        }
        assert!(!s.blocked(Side::F, 40.0));
        s.scan(&[f64::NAN; 4], &[Side::F]);
        assert!(!s.blocked(Side::F, 40.0), "NaN is ignored");
    }
}
