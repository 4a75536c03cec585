//! Maze traversal scoring (seed 002 §4.1 and the repository's `getTPoints`/`getDistance`
//! and `CalcFitnessMazeRS234`, §8): which maze part the robot is in, the remaining path
//! distance D, the result vector [D_out or 0, time or 0], the termination rules and the
//! staged fitness. Decision record 0027.

use modbot_core::scenario::{Maze, MazePart};
use modbot_gaits::{Controller, Observation};

use crate::error::Result;
use crate::run::{ControlLoop, settings_error};
use crate::world::Simulator;

/// Signed distance of `p` past the line through `origin` across `heading`.
fn along(p: [f64; 2], origin: [f64; 2], heading: f64) -> f64 {
    (p[0] - origin[0]) * heading.cos() + (p[1] - origin[1]) * heading.sin()
}

fn dist(a: [f64; 2], b: [f64; 2]) -> f64 {
    (a[0] - b[0]).hypot(a[1] - b[1])
}

/// Where a robot is in a maze: part 0 before the entrance, 1 … n inside, n + 1 out of the
/// exit (the goal).
#[derive(Debug, Clone, PartialEq)]
pub struct MazeTracker {
    parts: Vec<MazePart>,
    total_m: f64,
    part: usize,
}

impl MazeTracker {
    /// A tracker at the maze's start (part 0).
    pub fn new(maze: &Maze) -> Result<MazeTracker> {
        let parts = maze.parts()?;
        let total_m = parts.iter().map(|p| p.length_m).sum();
        Ok(MazeTracker {
            parts,
            total_m,
            part: 0,
        })
    }

    /// The parts.
    pub fn parts(&self) -> &[MazePart] {
        &self.parts
    }

    /// Σ of the parts' lengths, m.
    pub fn total_m(&self) -> f64 {
        self.total_m
    }

    /// Current part (0 = not entered, n + 1 = goal).
    pub fn part(&self) -> usize {
        self.part
    }

    /// Past the last part's exit.
    pub fn reached_goal(&self) -> bool {
        self.part > self.parts.len()
    }

    /// Moves the part index as `p` crosses the current part's exit line (forward, possibly
    /// through several parts) or its entry line (back one part), each line across the
    /// corridor's heading there.
    pub fn update(&mut self, p: [f64; 2]) {
        if self.part == 0 {
            let first = &self.parts[0];
            if along(p, first.entry, first.entry_heading) >= 0.0 {
                self.part = 1;
            } else {
                return;
            }
        }
        while (1..=self.parts.len()).contains(&self.part) {
            let cur = &self.parts[self.part - 1];
            if along(p, cur.exit, cur.exit_heading) >= 0.0 {
                self.part += 1;
            } else {
                if along(p, cur.entry, cur.entry_heading) < 0.0 {
                    self.part -= 1;
                }
                break;
            }
        }
    }

    /// D: the straight distance from `p` to the current part's exit plus the lengths of the
    /// parts after it (before the entrance: to the entrance plus the whole maze); 0 at the
    /// goal.
    pub fn remaining_m(&self, p: [f64; 2]) -> f64 {
        match self.part {
            0 => dist(p, self.parts[0].entry) + self.total_m,
            k if k <= self.parts.len() => {
                dist(p, self.parts[k - 1].exit) + self.parts[k..].iter().map(|q| q.length_m).sum::<f64>()
            }
            _ => 0.0,
        }
    }

    /// D_out = min(D / Σ lengths, 1).
    pub fn d_out(&self, p: [f64; 2]) -> f64 {
        (self.remaining_m(p) / self.total_m).min(1.0)
    }
}

/// The termination rules of seed 002 §4.1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MazeRules {
    /// `maxTime`, s (the repository's experiment: 40).
    pub max_time_s: f64,
    /// A robot still before the entrance after this long is stopped, s (the seed's 10).
    pub enter_within_s: f64,
}

impl MazeRules {
    /// The rules with both times checked: `max_time_s` in (0, 86400] s, `enter_within_s` in
    /// (0, `max_time_s`]; a refusal names the offending time by the caller's `names` for
    /// (max time, enter within), e.g. its command-line options.
    pub fn checked(max_time_s: f64, enter_within_s: f64, names: [&str; 2]) -> Result<MazeRules, String> {
        if !(max_time_s.is_finite() && max_time_s > 0.0 && max_time_s <= 86_400.0) {
            return Err(format!("{} {max_time_s}: expected a time in (0, 86400] s", names[0]));
        }
        if !(enter_within_s.is_finite() && enter_within_s > 0.0 && enter_within_s <= max_time_s) {
            return Err(format!(
                "{} {enter_within_s}: expected a time in (0, {}] s",
                names[1], names[0]
            ));
        }
        Ok(MazeRules {
            max_time_s,
            enter_within_s,
        })
    }
}

impl Default for MazeRules {
    fn default() -> Self {
        MazeRules {
            max_time_s: 40.0,
            enter_within_s: 10.0,
        }
    }
}

/// How a maze run ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MazeOutcome {
    /// Out of the exit at `time_s`.
    Goal {
        /// Time, s.
        time_s: f64,
    },
    /// Still before the entrance after `enter_within_s`.
    NotEntered {
        /// Time of the stop, s.
        time_s: f64,
        /// D_out then.
        d_out: f64,
    },
    /// Past `max_time_s` inside the maze.
    TimedOut {
        /// Time of the stop, s.
        time_s: f64,
        /// D_out then.
        d_out: f64,
    },
}

impl MazeOutcome {
    /// The seed's result vector: [0, t] at the goal, [D_out, 0] otherwise.
    pub fn result(&self) -> [f64; 2] {
        match *self {
            MazeOutcome::Goal { time_s } => [0.0, time_s],
            MazeOutcome::NotEntered { d_out, .. } | MazeOutcome::TimedOut { d_out, .. } => [d_out, 0.0],
        }
    }

    /// When the run stopped, s.
    pub fn time_s(&self) -> f64 {
        match *self {
            MazeOutcome::Goal { time_s }
            | MazeOutcome::NotEntered { time_s, .. }
            | MazeOutcome::TimedOut { time_s, .. } => time_s,
        }
    }

    /// One word for reports.
    pub fn label(&self) -> &'static str {
        match self {
            // The seed's rule is "not in the maze after 10 s": a robot that went in and
            // backed out again is stopped the same way.
            MazeOutcome::Goal { .. } => "goal",
            MazeOutcome::NotEntered { .. } => "not in the maze",
            MazeOutcome::TimedOut { .. } => "timed out",
        }
    }
}

/// Applies the rules at time `t` with the robot at `p`: `Some` when the run ends.
pub fn check(tracker: &MazeTracker, rules: &MazeRules, t: f64, p: [f64; 2]) -> Option<MazeOutcome> {
    if tracker.reached_goal() {
        return Some(MazeOutcome::Goal { time_s: t });
    }
    if t > rules.enter_within_s && tracker.part() < 1 {
        return Some(MazeOutcome::NotEntered {
            time_s: t,
            d_out: tracker.d_out(p),
        });
    }
    if t > rules.max_time_s {
        return Some(MazeOutcome::TimedOut {
            time_s: t,
            d_out: tracker.d_out(p),
        });
    }
    None
}

/// A stage's fitness (the repository's `CalcFitnessMazeRS234`; lower is better): time × 0.01
/// at the goal, else D_out + maxTime × 0.01. Solved when it is at most maxTime × 0.01.
pub fn stage_fitness(outcome: &MazeOutcome, max_time_s: f64) -> (f64, bool) {
    let [d, t] = outcome.result();
    let f = if d == 0.0 { t * 0.01 } else { d + max_time_s * 0.01 };
    (f, f <= max_time_s * 0.01)
}

/// The staged fitness over stages run in order until one fails (lower is better): f0 if
/// the first failed; f1 − 2 if the second; f2 − 4 if the third; the mean of all − 4 if every
/// one passed. `stages` are (fitness, solved) of the stages that ran; with more than three
/// stages the pattern continues (−2 per stage passed).
pub fn staged_fitness(stages: &[(f64, bool)]) -> f64 {
    for (i, (f, solved)) in stages.iter().enumerate() {
        if !solved {
            return f - 2.0 * i as f64;
        }
    }
    let n = stages.len().max(1) as f64;
    stages.iter().map(|(f, _)| f).sum::<f64>() / n - 2.0 * (stages.len().saturating_sub(1)) as f64
}

/// A maze run: how it ended and the robot's path.
#[derive(Debug, Clone, PartialEq)]
pub struct MazeRun {
    /// The end.
    pub outcome: MazeOutcome,
    /// (t, x, y, part, D) per control tick: the robot's centre of mass.
    pub path: Vec<[f64; 5]>,
    /// Σ of the parts' lengths, m.
    pub total_m: f64,
}

/// Runs `controller` on `sim` in `maze` under `rules`, the robot's centre of mass as its
/// position (record 0027), checking the rules every control tick.
pub fn run_maze(
    sim: &mut Simulator,
    controller: &mut dyn Controller,
    maze: &Maze,
    rules: MazeRules,
    control_rate_hz: f64,
    progress: &mut dyn FnMut(f64, f64),
) -> Result<MazeRun> {
    for (key, v) in [
        ("max_time_s", rules.max_time_s),
        ("enter_within_s", rules.enter_within_s),
    ] {
        if !(v.is_finite() && v > 0.0 && v <= 86_400.0) {
            return Err(settings_error(key, v, "a time in (0, 86400] s"));
        }
    }
    let mut control = ControlLoop::new(sim, controller, control_rate_hz)?;
    let mut tracker = MazeTracker::new(maze)?;
    let dt = control.dt;
    let t0 = sim.time();
    let mut path = Vec::new();
    let mut sensors = sim.sensor_readings();
    loop {
        let com = sim.com();
        let p = [com.x, com.y];
        let t = sim.time() - t0;
        tracker.update(p);
        path.push([t, p[0], p[1], tracker.part() as f64, tracker.remaining_m(p)]);
        if let Some(outcome) = check(&tracker, &rules, t, p) {
            return Ok(MazeRun {
                outcome,
                path,
                total_m: tracker.total_m(),
            });
        }
        let positions = sim.joint_positions();
        let velocities = sim.joint_velocities();
        if !sensors.is_empty() {
            sensors = sim.sensor_readings();
        }
        let obs = Observation {
            time: t,
            positions: &positions,
            velocities: &velocities,
            base: sim.root_pose(),
            sensors: &sensors,
        };
        control.tick(sim, controller, &obs)?;
        progress(t + dt, rules.max_time_s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use modbot_core::Scenario;

    fn maze(seq: &str) -> Maze {
        let s = Scenario::from_yaml(&format!("name: m\nmaze: {{sequence: \"{seq}\"}}\n"), "m")
            .unwrap_or_else(|e| panic!("{e}"));
        s.maze.unwrap_or_else(|| panic!("no maze"))
    }

    /// Points every `step` metres along the centre line from the lead-in through the exit
    /// and 0.3 m beyond.
    fn carried(m: &Maze, step: f64) -> Vec<[f64; 2]> {
        let mut line = m.centre_line().unwrap_or_else(|e| panic!("{e}")).points;
        let last = line[line.len() - 1];
        let before = line[line.len() - 2];
        let (dx, dy) = (last[0] - before[0], last[1] - before[1]);
        let n = dx.hypot(dy);
        line.push([last[0] + 0.3 * dx / n, last[1] + 0.3 * dy / n]);
        let mut out = Vec::new();
        for w in line.windows(2) {
            let len = (w[1][0] - w[0][0]).hypot(w[1][1] - w[0][1]);
            let k = (len / step).ceil() as usize;
            for i in 0..k {
                let f = i as f64 / k as f64;
                out.push([w[0][0] + f * (w[1][0] - w[0][0]), w[0][1] + f * (w[1][1] - w[0][1])]);
            }
        }
        out.push(line[line.len() - 1]);
        out
    }

    /// A robot carried along the centre line: D_out stays 1 before the entrance, then
    /// falls (never rises) to 0, the parts count up one by one, and the goal is reached.
    #[test]
    fn a_robot_carried_along_the_centre_line_reaches_the_goal() {
        for seq in ["s l s", "b", "s r s", "s l s s l s l s l l"] {
            let m = maze(seq);
            let mut tr = MazeTracker::new(&m).unwrap_or_else(|e| panic!("{e}"));
            let mut last_d = f64::INFINITY;
            let mut last_part = 0;
            for p in carried(&m, 0.01) {
                tr.update(p);
                let d = tr.d_out(p);
                if tr.part() == 0 {
                    assert_eq!(d, 1.0, "{seq}: before the entrance");
                } else {
                    assert!(d <= last_d + 1e-9, "{seq}: D_out rises at {p:?}: {last_d} → {d}");
                    last_d = d;
                }
                assert!(
                    tr.part() == last_part || tr.part() == last_part + 1,
                    "{seq}: part jumps"
                );
                last_part = tr.part();
            }
            assert!(tr.reached_goal(), "{seq}: goal not reached (part {})", tr.part());
            assert_eq!(last_d, 0.0, "{seq}");
            let rules = MazeRules::default();
            let out = check(&tr, &rules, 12.5, [0.0, 0.0]).unwrap_or_else(|| panic!("no end"));
            assert_eq!(out.result(), [0.0, 12.5]);
            assert_eq!(stage_fitness(&out, 40.0), (0.125, true));
        }
    }

    /// Halfway along the first straight of `s l s` (total 6.4 m): D = 1 + 2.4 + 2 = 5.4.
    /// Walking back over the entry line of the corner returns to part 1.
    #[test]
    fn remaining_distance_and_going_back() {
        let m = maze("s l s");
        let mut tr = MazeTracker::new(&m).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(tr.total_m(), 6.4);
        tr.update([1.0, 0.0]);
        assert_eq!(tr.part(), 1);
        assert!((tr.remaining_m([1.0, 0.0]) - 5.4).abs() < 1e-12);
        tr.update([2.5, 0.0]);
        assert_eq!(tr.part(), 2);
        tr.update([1.9, 0.0]);
        assert_eq!(tr.part(), 1);
        tr.update([-0.1, 0.0]);
        assert_eq!(tr.part(), 0);
        assert_eq!(tr.d_out([-0.1, 0.0]), 1.0);
    }

    #[test]
    fn termination_rules_and_the_staged_fitness() {
        let m = maze("s l s");
        let tr = MazeTracker::new(&m).unwrap_or_else(|e| panic!("{e}"));
        let rules = MazeRules::default();
        assert_eq!(check(&tr, &rules, 9.99, [-0.8, 0.0]), None);
        let stop = check(&tr, &rules, 10.01, [-0.8, 0.0]).unwrap_or_else(|| panic!("no stop"));
        assert_eq!(stop.result(), [1.0, 0.0]);
        assert_eq!(stop.label(), "not in the maze");
        let mut inside = tr.clone();
        inside.update([3.0, 0.0]);
        assert!(check(&inside, &rules, 39.0, [3.0, 0.0]).is_none());
        let out = check(&inside, &rules, 40.01, [3.0, 0.0]).unwrap_or_else(|| panic!("no stop"));
        let [d, t] = out.result();
        assert!((d - (0.2f64.hypot(1.2) + 2.0) / 6.4).abs() < 1e-12 && t == 0.0);
        let (f, solved) = stage_fitness(&out, 40.0);
        assert!(!solved && (f - (d + 0.4)).abs() < 1e-12);
        // Staged: first failed → f0; second failed → f1 − 2; third → f2 − 4; all → mean − 4.
        assert_eq!(staged_fitness(&[(1.0, false)]), 1.0);
        assert_eq!(staged_fitness(&[(0.2, true), (0.9, false)]), 0.9 - 2.0);
        assert_eq!(staged_fitness(&[(0.2, true), (0.3, true), (0.9, false)]), 0.9 - 4.0);
        let all = staged_fitness(&[(0.2, true), (0.3, true), (0.4, true)]);
        assert!((all - (0.3 - 4.0)).abs() < 1e-12);
    }
}
