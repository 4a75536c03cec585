//! Friction estimation, the first step of the deliberative layer's sensing (seed-000 §6.2,
//! Lua `estimate_friction`): a lone module walks five forward low-velocity steps; while the
//! reset pose is commanded (the stroke that pushes the module forward, the Lua's
//! `forw_step == 0`) it reads the force sensor between its wheel discs; the maximum of each
//! of steps 1–4 is kept, their mean is the reading, and a band table turns the reading
//! into the terrain's μ ∈ {0.2, 0.4, 0.6, 0.8, 1.0}, which selects the row of the d, t and
//! t180 tables.
//!
//! This module is the bookkeeping and the bands, over readings in the source's scale; what
//! the simulator's sensor measures and how it is brought to that scale is
//! `modbot_app::friction` and decision record 0046.

/// Forward low-velocity steps a module walks to estimate friction.
pub const WALKED_STEPS: usize = 5;
/// Steps whose maxima are averaged: 1–4, as the code does (the text says five).
pub const MEASURED_STEPS: usize = 4;
/// The μ levels the bands give, lowest first.
pub const LEVELS: [f64; 5] = [0.2, 0.4, 0.6, 0.8, 1.0];

/// Why an estimate could not be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FrictionError {
    /// A sensor reading that is not a finite number.
    #[error("force reading {0} is not a finite number")]
    NotFinite(f64),
    /// Fewer complete strokes than the estimate averages.
    #[error("{got} measured steps: the estimate needs {needed}")]
    TooFewSteps {
        /// Steps with readings.
        got: usize,
        /// Steps needed.
        needed: usize,
    },
    /// A step without any reading.
    #[error("step {0} has no reading")]
    EmptyStep(usize),
}

/// Which band edges turn the mean reading into μ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BandEdges {
    /// Table 3.33, read as half-open bands that cover every reading: 1.0 ≥ 0.75; 0.8 in
    /// [0.65, 0.75); 0.6 in [0.45, 0.65); 0.4 in [0.30, 0.45); 0.2 below 0.30 (modbot's
    /// choice, record 0046).
    Thesis,
    /// The Lua's open bands: 0.2 in (0.15, 0.25), 0.4 in (0.25, 0.45), 0.6 in (0.45, 0.65),
    /// 0.8 in (0.65, 0.75), 1.0 above 0.75; a reading on an edge or at or below 0.15 gets
    /// no estimate (the Lua then keeps its previous μ, 0 at the start).
    Lua,
}

/// The terrain μ of a mean reading; `None` where the edges give none (the Lua's gaps, or a
/// reading that is not a finite number).
pub fn band(reading: f64, edges: BandEdges) -> Option<f64> {
    if !reading.is_finite() {
        return None;
    }
    match edges {
        BandEdges::Thesis => Some(match reading {
            r if r >= 0.75 => 1.0,
            r if r >= 0.65 => 0.8,
            r if r >= 0.45 => 0.6,
            r if r >= 0.30 => 0.4,
            _ => 0.2,
        }),
        BandEdges::Lua => [
            (0.15, 0.25, 0.2),
            (0.25, 0.45, 0.4),
            (0.45, 0.65, 0.6),
            (0.65, 0.75, 0.8),
        ]
        .iter()
        .find(|(lo, hi, _)| reading > *lo && reading < *hi)
        .map(|b| b.2)
        .or((reading > 0.75).then_some(1.0)),
    }
}

/// The mean of each step's maximum reading, over the first [`MEASURED_STEPS`] steps.
pub fn mean_of_maxima(steps: &[Vec<f64>]) -> Result<f64, FrictionError> {
    if steps.len() < MEASURED_STEPS {
        return Err(FrictionError::TooFewSteps {
            got: steps.len(),
            needed: MEASURED_STEPS,
        });
    }
    let mut sum = 0.0;
    for (k, step) in steps.iter().take(MEASURED_STEPS).enumerate() {
        if let Some(&bad) = step.iter().find(|r| !r.is_finite()) {
            return Err(FrictionError::NotFinite(bad));
        }
        let max = step
            .iter()
            .copied()
            .reduce(f64::max)
            .ok_or(FrictionError::EmptyStep(k + 1))?;
        sum += max;
    }
    Ok(sum / MEASURED_STEPS as f64)
}

/// An estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct FrictionEstimate {
    /// Each measured step's maximum reading.
    pub maxima: Vec<f64>,
    /// Their mean.
    pub mean: f64,
    /// The band's μ (`None` in the Lua's gaps).
    pub mu: Option<f64>,
}

/// Collects readings tick by tick as the module walks: a step's readings are those taken
/// while the reset pose is commanded, from the tick it is commanded to the tick the next
/// pose is.
#[derive(Debug, Clone, Default)]
pub struct FrictionEstimator {
    steps: Vec<Vec<f64>>,
    in_reset: bool,
}

impl FrictionEstimator {
    /// Nothing read yet.
    pub fn new() -> FrictionEstimator {
        FrictionEstimator::default()
    }

    /// One tick's reading, and whether the reset pose is commanded at that tick. Readings
    /// outside the reset pose only close the step in progress; readings after the
    /// [`MEASURED_STEPS`]th step are not kept.
    pub fn sample(&mut self, reset_commanded: bool, reading: f64) -> Result<(), FrictionError> {
        if !reading.is_finite() {
            return Err(FrictionError::NotFinite(reading));
        }
        if reset_commanded {
            if !self.in_reset {
                self.steps.push(Vec::new());
                self.in_reset = true;
            }
            if self.steps.len() <= MEASURED_STEPS
                && let Some(step) = self.steps.last_mut()
            {
                step.push(reading);
            }
        } else {
            self.in_reset = false;
        }
        Ok(())
    }

    /// Strokes begun so far (the step being walked included).
    pub fn steps_begun(&self) -> usize {
        self.steps.len()
    }

    /// The readings of each measured step so far.
    pub fn steps(&self) -> &[Vec<f64>] {
        &self.steps[..self.steps.len().min(MEASURED_STEPS)]
    }

    /// The estimate, once [`MEASURED_STEPS`] strokes are complete.
    pub fn estimate(&self, edges: BandEdges) -> Result<FrictionEstimate, FrictionError> {
        let complete = if self.in_reset {
            self.steps.len().saturating_sub(1)
        } else {
            self.steps.len()
        };
        if complete < MEASURED_STEPS {
            return Err(FrictionError::TooFewSteps {
                got: complete,
                needed: MEASURED_STEPS,
            });
        }
        let steps = self.steps();
        let mean = mean_of_maxima(steps)?;
        Ok(FrictionEstimate {
            maxima: steps
                .iter()
                .map(|s| s.iter().copied().fold(f64::NEG_INFINITY, f64::max))
                .collect(),
            mean,
            mu: band(mean, edges),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Table 3.33 as half-open bands, every edge on both sides.
    #[test]
    fn thesis_bands() {
        let t = |r| band(r, BandEdges::Thesis);
        for (r, mu) in [
            (2.0, 1.0),
            (0.75, 1.0),
            (0.7499, 0.8),
            (0.65, 0.8),
            (0.6499, 0.6),
            (0.45, 0.6),
            (0.4499, 0.4),
            (0.30, 0.4),
            (0.2999, 0.2),
            (0.25, 0.2),
            (0.15, 0.2),
            (0.0, 0.2),
            (-0.1, 0.2),
        ] {
            assert_eq!(t(r), Some(mu), "reading {r}");
        }
        assert_eq!(t(f64::NAN), None);
        assert_eq!(t(f64::INFINITY), None);
    }

    /// The Lua's bands: the 0.4/0.2 edge at 0.25, and no estimate on an edge or at or
    /// below 0.15.
    #[test]
    fn lua_bands_and_their_gaps() {
        let l = |r| band(r, BandEdges::Lua);
        for (r, mu) in [
            (0.76, Some(1.0)),
            (0.75, None),
            (0.70, Some(0.8)),
            (0.65, None),
            (0.5, Some(0.6)),
            (0.45, None),
            (0.28, Some(0.4)),
            (0.25, None),
            (0.2, Some(0.2)),
            (0.15, None),
            (0.1, None),
        ] {
            assert_eq!(l(r), mu, "reading {r}");
        }
        // Where the two disagree: 0.25 … 0.30.
        assert_eq!((band(0.27, BandEdges::Thesis), l(0.27)), (Some(0.2), Some(0.4)));
    }

    /// The maximum of each of steps 1–4, averaged; a fifth step is ignored.
    #[test]
    fn mean_of_the_step_maxima() {
        let steps = vec![
            vec![0.1, 0.7, 0.2],
            vec![0.6],
            vec![0.3, 0.5, 0.4],
            vec![0.8, 0.0],
            vec![9.0],
        ];
        assert_eq!(mean_of_maxima(&steps), Ok((0.7 + 0.6 + 0.5 + 0.8) / 4.0));
        assert_eq!(
            mean_of_maxima(&steps[..3]),
            Err(FrictionError::TooFewSteps { got: 3, needed: 4 })
        );
        let mut empty = steps.clone();
        empty[2].clear();
        assert_eq!(mean_of_maxima(&empty), Err(FrictionError::EmptyStep(3)));
        let mut nan = steps;
        nan[1].push(f64::NAN);
        assert!(matches!(mean_of_maxima(&nan), Err(FrictionError::NotFinite(_))));
    }

    /// Tick by tick: only reset-pose readings count, a step ends when the next pose is
    /// commanded, the fifth stroke is walked but not kept, and the estimate waits for the
    /// fourth stroke to end.
    #[test]
    fn the_estimator_splits_the_walk_into_strokes() {
        let mut e = FrictionEstimator::new();
        // (reset commanded, reading) per tick: pose 1, stroke, pose 1, stroke, …
        let strokes = [
            [0.2, 0.9, 0.4],
            [0.5, 0.8, 0.1],
            [0.7, 0.3, 0.0],
            [0.6, 0.65, 0.6],
            [5.0, 5.0, 5.0],
        ];
        for (k, s) in strokes.iter().enumerate() {
            e.sample(false, 3.0).unwrap();
            e.sample(false, -3.0).unwrap();
            for &r in s {
                e.sample(true, r).unwrap();
            }
            if k == 3 {
                assert!(matches!(
                    e.estimate(BandEdges::Thesis),
                    Err(FrictionError::TooFewSteps { got: 3, needed: 4 })
                ));
            }
        }
        e.sample(false, 0.0).unwrap();
        assert_eq!(e.steps_begun(), 5);
        assert_eq!(e.steps().len(), 4);
        let est = e.estimate(BandEdges::Thesis).unwrap();
        assert_eq!(est.maxima, [0.9, 0.8, 0.7, 0.65]);
        assert!((est.mean - 0.7625).abs() < 1e-12);
        assert_eq!(est.mu, Some(1.0));
        assert!(matches!(e.sample(true, f64::NAN), Err(FrictionError::NotFinite(_))));
    }
}
