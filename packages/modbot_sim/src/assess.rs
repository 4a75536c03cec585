//! What a run did beyond its mean step: the per-cycle checks that keep a summary honest
//! (issue 20; thresholds and their reasons: decision record 0038). A robot stuck at an
//! obstacle after moving, one that overturned or fell, or one whose step is still changing
//! is reported as such, not as its mean.

use serde::Serialize;

use crate::measure::{CycleStep, Report};

/// A cycle moves when its CoM covers this share of the body length (0.5 %) …
pub const MOVING_SHARE_OF_BODY: f64 = 0.005;
/// … or turns the heading this far, deg.
pub const MOVING_TURN_DEG: f64 = 2.0;
/// A cycle after moving ones stalls when it makes less than this share of their mean
/// progress, both in distance and in turn.
pub const STALL_SHARE: f64 = 0.2;
/// Overturned: world up moved this far in the frame of the body (a chain's central or tail
/// module, a wheel-foot robot's base) since the start: past lying on its side.
pub const OVERTURN_DEG: f64 = 100.0;
/// Fell: the CoM ended a cycle this far below its starting height, m …
pub const FALL_M: f64 = 0.03;
/// … or by this share of it, whichever is larger.
pub const FALL_SHARE: f64 = 0.3;
/// Not steady: the mean step of the measured cycles' second half differs from the first
/// half's by more than this share of the larger.
pub const UNSTEADY_SHARE: f64 = 0.25;

/// The run's verdict, the most serious finding first: `fell` > `overturned` > `stalled` >
/// `unsteady` > `ok`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Nothing beyond the mean to report.
    #[default]
    Ok,
    /// The step is still changing over the measured cycles.
    Unsteady,
    /// Cycles with no progress after moving ones (stuck at an obstacle, a wall).
    Stalled,
    /// The body turned over, by a roll or end over end (a gait that is not meant to roll).
    Overturned,
    /// The CoM ended a cycle well below where it started.
    Fell,
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RunStatus::Ok => "ok",
            RunStatus::Unsteady => "unsteady",
            RunStatus::Stalled => "stalled",
            RunStatus::Overturned => "overturned",
            RunStatus::Fell => "fell",
        })
    }
}

/// The cycle number a user reads: counted from the start of the run, the warm-up included,
/// from 1.
fn cycle_number(report: &Report, measured: usize) -> usize {
    report.warmup_cycles + measured + 1
}

impl Report {
    /// Checks the cycles and sets [`Report::status`] and [`Report::findings`] afresh.
    /// `rolls_by_design` is true for a gait whose motion is a roll about the body's long
    /// axis (rolling): its roll is the gait, not an overturn. [`crate::Recorder::report`]
    /// assesses with `false`; a caller that knows the gait assesses again.
    pub fn assess(&mut self, rolls_by_design: bool) {
        let mut found: Vec<(RunStatus, String)> = Vec::new();
        let start = self.boundaries.first().copied();
        if let Some(start) = start {
            let limit = FALL_M.max(FALL_SHARE * start.com_height_m);
            if let Some((k, b)) = self
                .boundaries
                .iter()
                .enumerate()
                .skip(1)
                .find(|(_, b)| b.com_height_m < start.com_height_m - limit)
            {
                found.push((
                    RunStatus::Fell,
                    format!(
                        "fell: the CoM ended cycle {k} at {:.1} cm, {:.1} cm below its start",
                        b.com_height_m * 100.0,
                        (start.com_height_m - b.com_height_m) * 100.0
                    ),
                ));
            }
            let over = self
                .boundaries
                .iter()
                .enumerate()
                .skip(1)
                .find(|(_, b)| !rolls_by_design && b.body_tilt_deg >= OVERTURN_DEG);
            if let Some((k, b)) = over {
                found.push((
                    RunStatus::Overturned,
                    format!(
                        "overturned: the body had turned {:.0}° from upright by the end of cycle {k}{}",
                        b.body_tilt_deg,
                        if k <= self.warmup_cycles {
                            " (in the warm-up)"
                        } else {
                            ""
                        }
                    ),
                ));
            }
        }
        let stalled = self.stalled_cycles();
        if let Some(&first) = stalled.first() {
            let all_after = stalled.len() == self.per_cycle.len() - first;
            let text = if all_after {
                format!(
                    "stalled: no progress from cycle {} on after {:.2} cm/cycle before it; the mean step hides it",
                    cycle_number(self, first),
                    self.per_cycle[..first].iter().map(CycleStep::distance_m).sum::<f64>() / first as f64 * 100.0
                )
            } else {
                let list: Vec<String> = stalled.iter().map(|&k| cycle_number(self, k).to_string()).collect();
                format!("stalled: no progress in cycle(s) {}", list.join(", "))
            };
            found.push((RunStatus::Stalled, text));
        } else if let Some(text) = self.unsteady() {
            found.push((RunStatus::Unsteady, text));
        }
        found.sort_by_key(|f| std::cmp::Reverse(f.0));
        self.status = found.first().map(|f| f.0).unwrap_or(RunStatus::Ok);
        self.findings = found.into_iter().map(|f| f.1).collect();
    }

    /// The measured cycles that make less than [`STALL_SHARE`] of the mean progress of the
    /// moving cycles before them, in distance and in turn alike.
    fn stalled_cycles(&self) -> Vec<usize> {
        let moving_m = MOVING_SHARE_OF_BODY * self.body_length_m;
        let mut out = Vec::new();
        let (mut sum_m, mut sum_deg, mut moved) = (0.0, 0.0, 0usize);
        for (k, c) in self.per_cycle.iter().enumerate() {
            let (d, turn) = (c.distance_m(), c.dheading_deg.abs());
            if moved > 0 {
                let (mean_m, mean_deg) = (sum_m / moved as f64, sum_deg / moved as f64);
                let progress =
                    d >= (STALL_SHARE * mean_m).max(moving_m) || turn >= (STALL_SHARE * mean_deg).max(MOVING_TURN_DEG);
                if !progress {
                    out.push(k);
                    continue;
                }
            }
            if d >= moving_m || turn >= MOVING_TURN_DEG {
                sum_m += d;
                sum_deg += turn;
                moved += 1;
            }
        }
        out
    }

    /// A sentence when the second half of the measured cycles steps or turns differently
    /// from the first by more than [`UNSTEADY_SHARE`].
    fn unsteady(&self) -> Option<String> {
        let n = self.per_cycle.len();
        if n < 2 {
            return None;
        }
        let (a, b) = self.per_cycle.split_at(n / 2);
        // Each cycle's distance, not its vector: a turning robot's steps point ever elsewhere
        // in the initial body frame.
        let mean = |h: &[CycleStep]| {
            let m = h.len() as f64;
            (
                h.iter().map(CycleStep::distance_m).sum::<f64>() / m,
                h.iter().map(|c| c.dheading_deg).sum::<f64>() / m,
            )
        };
        let ((la, ah), (lb, bh)) = (mean(a), mean(b));
        let step_changes =
            la.max(lb) >= MOVING_SHARE_OF_BODY * self.body_length_m && (la - lb).abs() > UNSTEADY_SHARE * la.max(lb);
        let turn_changes =
            ah.abs().max(bh.abs()) >= MOVING_TURN_DEG && (ah - bh).abs() > UNSTEADY_SHARE * ah.abs().max(bh.abs());
        let (first, last) = (cycle_number(self, 0), cycle_number(self, n - 1));
        let mid = cycle_number(self, n / 2);
        let span = |a: usize, b: usize| {
            if a == b {
                format!("cycle {a}")
            } else {
                format!("cycles {a}–{b}")
            }
        };
        let (early, late) = (span(first, mid - 1), span(mid, last));
        if step_changes {
            Some(format!(
                "unsteady: {:.2} cm/cycle over {early} and {:.2} over {late}; more warm-up or cycles would settle it",
                la * 100.0,
                lb * 100.0
            ))
        } else if turn_changes {
            Some(format!(
                "unsteady: {ah:+.1}°/cycle over {early} and {bh:+.1} over {late}"
            ))
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::Boundary;

    fn report(steps: &[(f64, f64)], heights: &[f64], tilts: &[f64]) -> Report {
        let per_cycle: Vec<CycleStep> = steps
            .iter()
            .map(|&(dx, dh)| CycleStep {
                duration_s: 2.0,
                dx_m: dx,
                dy_m: 0.0,
                dheading_deg: dh,
                droll_deg: 0.0,
            })
            .collect();
        let boundaries = heights
            .iter()
            .zip(tilts)
            .enumerate()
            .map(|(k, (&h, &r))| Boundary {
                t_s: 2.0 * k as f64,
                com_height_m: h,
                body_tilt_deg: r,
            })
            .collect();
        let mut r = Report {
            period_s: 2.0,
            warmup_cycles: 2,
            cycles: steps.len(),
            body_length_m: 0.576,
            step_x_m: 0.0,
            step_y_m: 0.0,
            step_m: 0.0,
            heading_change_deg: 0.0,
            roll_per_cycle_deg: 0.0,
            roll_range_deg: 0.0,
            com_height_mean_m: 0.03,
            com_height_min_m: 0.03,
            com_height_max_m: 0.03,
            speed_body_lengths_per_cycle: 0.0,
            speed_m_s: 0.0,
            per_cycle,
            boundaries,
            status: RunStatus::Ok,
            findings: Vec::new(),
        };
        r.assess(false);
        r
    }

    const FLAT: [f64; 7] = [0.03; 7];
    const UPRIGHT: [f64; 7] = [0.0; 7];

    #[test]
    fn a_steady_walk_is_ok() {
        let r = report(&[(0.064, 0.0); 5], &FLAT, &UPRIGHT);
        assert_eq!(r.status, RunStatus::Ok, "{:?}", r.findings);
        assert!(r.findings.is_empty());
    }

    #[test]
    fn stuck_after_moving_is_a_stall_from_that_cycle_on() {
        let r = report(
            &[(0.064, 0.0), (0.064, 0.0), (0.046, 0.0), (0.0, 0.1), (0.0004, 0.0)],
            &FLAT,
            &UPRIGHT,
        );
        assert_eq!(r.status, RunStatus::Stalled);
        assert!(r.findings[0].contains("from cycle 6 on"), "{:?}", r.findings);
        // One slow cycle among moving ones is named alone.
        let r = report(
            &[(0.064, 0.0), (0.001, 0.0), (0.064, 0.0), (0.064, 0.0), (0.064, 0.0)],
            &FLAT,
            &UPRIGHT,
        );
        assert_eq!(r.status, RunStatus::Stalled);
        assert!(r.findings[0].contains("cycle(s) 4"), "{:?}", r.findings);
    }

    #[test]
    fn turning_in_place_is_progress_and_standing_still_throughout_is_not_a_stall() {
        let r = report(&[(0.0, 30.0); 5], &FLAT, &UPRIGHT);
        assert_eq!(r.status, RunStatus::Ok, "{:?}", r.findings);
        let r = report(&[(0.0, 0.0); 5], &FLAT, &UPRIGHT);
        assert_eq!(r.status, RunStatus::Ok, "{:?}", r.findings);
        // A turn that stops is a stall too.
        let r = report(
            &[(0.0, 30.0), (0.0, 30.0), (0.0, 0.5), (0.0, 0.2), (0.0, 0.0)],
            &FLAT,
            &UPRIGHT,
        );
        assert_eq!(r.status, RunStatus::Stalled, "{:?}", r.findings);
    }

    #[test]
    fn an_overturn_counts_unless_the_gait_rolls() {
        let tilts = [0.0, 5.0, 120.0, 170.0, 60.0, 150.0, 100.0];
        let mut r = report(&[(0.064, 0.0); 5], &FLAT, &tilts);
        assert_eq!(r.status, RunStatus::Overturned);
        assert!(r.findings[0].contains("cycle 2 (in the warm-up)"), "{:?}", r.findings);
        r.assess(true);
        assert_eq!(r.status, RunStatus::Ok, "{:?}", r.findings);
        // A body pitching 70° with the wave, or lying on its side, is not over.
        let r = report(&[(0.064, 0.0); 5], &FLAT, &[0.0, 70.0, 20.0, 70.0, 90.0, 20.0, 0.0]);
        assert_eq!(r.status, RunStatus::Ok);
    }

    #[test]
    fn a_fall_outranks_everything_else() {
        let heights = [0.16, 0.16, 0.16, 0.05, 0.05, 0.05, 0.05];
        let r = report(
            &[(0.064, 0.0), (0.0, 0.0), (0.0, 0.0), (0.0, 0.0), (0.0, 0.0)],
            &heights,
            &[0.0, 0.0, 0.0, 110.0, 110.0, 110.0, 110.0],
        );
        assert_eq!(r.status, RunStatus::Fell);
        assert_eq!(r.findings.len(), 3, "{:?}", r.findings);
        assert!(r.findings[0].starts_with("fell: the CoM ended cycle 3 at 5.0 cm, 11.0 cm below"));
        // A limbless chain's CoM bobbing by a centimetre is not a fall.
        let r = report(
            &[(0.064, 0.0); 5],
            &[0.03, 0.04, 0.02, 0.04, 0.02, 0.04, 0.02],
            &UPRIGHT,
        );
        assert_eq!(r.status, RunStatus::Ok);
    }

    #[test]
    fn a_step_still_growing_is_unsteady() {
        let r = report(
            &[(0.02, 0.0), (0.03, 0.0), (0.05, 0.0), (0.06, 0.0), (0.064, 0.0)],
            &FLAT,
            &UPRIGHT,
        );
        assert_eq!(r.status, RunStatus::Unsteady);
        assert!(r.findings[0].contains("cycles 3–4"), "{:?}", r.findings);
        let r = report(
            &[(0.0, 10.0), (0.0, 10.0), (0.0, 20.0), (0.0, 30.0), (0.0, 30.0)],
            &FLAT,
            &UPRIGHT,
        );
        assert_eq!(r.status, RunStatus::Unsteady, "{:?}", r.findings);
        // Within a quarter is steady.
        let r = report(
            &[(0.060, 0.0), (0.064, 0.0), (0.062, 0.0), (0.066, 0.0), (0.063, 0.0)],
            &FLAT,
            &UPRIGHT,
        );
        assert_eq!(r.status, RunStatus::Ok);
    }
}
