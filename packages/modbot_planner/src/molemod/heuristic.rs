//! Heuristics (spec §3.7): Manhattan distance over a minimum-cost matching of misplaced
//! modules to unfilled goal cells, the source's robot term, and a stronger admissible one.

use pathfinding::kuhn_munkres::kuhn_munkres_min;
use pathfinding::matrix::Matrix;

use crate::molemod::actions::penalty;
use crate::molemod::grid::{Cell, GridState};
use crate::molemod::task::{HeuristicKind, Options};

/// Precomputed goal data.
#[derive(Debug, Clone)]
pub struct Heuristic {
    goal: GridState,
    kind: HeuristicKind,
    options: Options,
}

impl Heuristic {
    /// For a goal and options.
    pub fn new(goal: GridState, options: &Options) -> Heuristic {
        Heuristic {
            goal,
            kind: options.heuristic,
            options: *options,
        }
    }

    /// Misplaced modules (in cells the goal leaves empty) and unfilled goal cells.
    pub fn misplaced(&self, s: &GridState) -> (Vec<usize>, Vec<usize>) {
        let n = s.rows() * s.cols();
        let mut wrong = Vec::new();
        let mut unfilled = Vec::new();
        for i in 0..n {
            let has = s.cell(i) != Cell::Empty;
            let want = self.goal.cell(i) != Cell::Empty;
            if has && !want {
                wrong.push(i);
            } else if want && !has {
                unfilled.push(i);
            }
        }
        (wrong, unfilled)
    }

    /// Minimum total Manhattan distance of a perfect matching (modules are identical).
    pub fn matching(&self, s: &GridState, wrong: &[usize], unfilled: &[usize]) -> u32 {
        match wrong.len() {
            0 => 0,
            1 => manhattan(s, wrong[0], unfilled[0]),
            n => {
                let weights = Matrix::from_fn(n, n, |(a, b)| manhattan(s, wrong[a], unfilled[b]) as i64);
                kuhn_munkres_min(&weights).0 as u32
            }
        }
    }

    /// h(s).
    pub fn h(&self, s: &GridState) -> u32 {
        if self.kind == HeuristicKind::Zero {
            return 0;
        }
        let (wrong, unfilled) = self.misplaced(s);
        let base = self.matching(s, &wrong, &unfilled);
        match self.kind {
            HeuristicKind::Zero => 0,
            HeuristicKind::Manhattan => base,
            HeuristicKind::Source => base.saturating_add((wrong.len() as u32).saturating_sub(s.robot_count())),
            HeuristicKind::Strong => {
                if wrong.is_empty() {
                    return 0;
                }
                // Every misplaced module must move, and only a block holding a robot moves, so
                // each misplaced module without a robot must first be entered. With one robot
                // (or without COOP) only MOVE enters a module, once per action; COOP hand-overs
                // enter modules for free, so then no entry cost is claimed. At least one more
                // step is needed, which carries the step penalty when it applies.
                let robots = s.robot_count();
                let entries = if robots == 1 || !self.options.coop {
                    (wrong.iter().filter(|&&i| s.cell(i) != Cell::Robot).count() as u32)
                        .saturating_mul(self.options.costs.r#move)
                } else {
                    0
                };
                base.saturating_add(entries)
                    .saturating_add(penalty(&self.options, robots))
            }
        }
    }
}

fn manhattan(s: &GridState, a: usize, b: usize) -> u32 {
    let (ra, ca) = s.pos(a);
    let (rb, cb) = s.pos(b);
    ((ra - rb).abs() + (ca - cb).abs()) as u32
}
