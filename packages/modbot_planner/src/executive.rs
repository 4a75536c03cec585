//! The executive (decision record 0016): executes a strategic plan row by row with the
//! [`Sequencer`] against odometry and turns its commands into gait choices: the pose filter
//! (cycle-averaged odometry), the steering law per configuration (a position controller),
//! and the gait hold between changes with a heartbeat. Plain inputs and outputs (poses,
//! times, [`Drive`]); `executive_node` converts messages at its edge.
//!
//! Position control per configuration: a chain whose gait moves along its body axis only
//! (`caterpillar`) drives forward or in reverse towards the sub-goal's projection on its
//! axis ([`Controller::Axial`]); a pitch-yaw chain (`straight`, `turning`, `sidewinding` in
//! the capability table) steers by pure pursuit: the curvature of the circle through the
//! sub-goal, turned into the `turning` gait's yaw offset O_h by the source's turning radius
//! (5.1) ([`TurnModel`]), in 2.5° steps, and `straight` when aligned ([`Controller::Steer`],
//! decision record 0033).
//! A row that asks for another configuration or an ability this robot does not have is
//! reported and the robot holds; a row that is blocked or times out stops the robot and asks
//! for a replan to the plan's final goal.

use std::collections::{BTreeMap, VecDeque};

use crate::capabilities::Capabilities;
use crate::grid::PlanError;
use crate::sequencer::{Command, Pose2, Sequencer, SequencerSettings, Tick, wrap_angle};
use crate::strategic::{self, Action};

/// Why the executive refused a configuration or a plan.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExecutiveError {
    /// The configuration is not in the capability table (or the table did not load).
    #[error(transparent)]
    Capabilities(#[from] PlanError),
    /// The configuration drives with a gait no position controller exists for.
    #[error(
        "configuration `{configuration}` drives with `{gait}`, which modbot's gait library does not have yet; \
         no position controller for it"
    )]
    NoController {
        /// Configuration.
        configuration: String,
        /// Its capability gait.
        gait: String,
    },
    /// A plan row's target is not finite.
    #[error("row {row}: target is not finite")]
    NonFiniteTarget {
        /// Row, 1-based.
        row: usize,
    },
}

/// How the robot is steered to a sub-goal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Controller {
    /// Forward or reverse along the body axis (caterpillar).
    Axial,
    /// Pure pursuit with `turning` (O_h from the curvature), `straight` when aligned
    /// (pitch-yaw chain).
    Steer,
}

impl Controller {
    /// The controller for a configuration that drives with `gait` (its capability gait);
    /// `None` when there is none for that gait yet.
    pub fn for_gait(gait: &str) -> Option<Controller> {
        match gait {
            "caterpillar" => Some(Controller::Axial),
            "straight" | "turning" | "sidewinding" => Some(Controller::Steer),
            _ => None,
        }
    }
}

/// Which way a gait's travelling wave runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// As the gait defines it.
    AsGiven,
    /// Forward along the body axis.
    Forward,
    /// Reverse.
    Reverse,
}

/// What the executive wants the gait layer to run.
#[derive(Debug, Clone, PartialEq)]
pub enum Drive {
    /// Hold the pose.
    Stop,
    /// A gait with parameters and direction.
    Gait {
        /// Gait name.
        gait: String,
        /// Parameters (name, value in the gait library's units).
        params: Vec<(String, f64)>,
        /// Direction.
        direction: Direction,
    },
}

impl Drive {
    fn gait(gait: &str, params: Vec<(String, f64)>, direction: Direction) -> Drive {
        Drive::Gait {
            gait: gait.into(),
            params,
            direction,
        }
    }
}

/// The turning model of a pitch-yaw chain for pure pursuit: the `turning` gait's yaw offset
/// that makes the robot follow a circle of curvature κ. The source's formula (5.1),
/// |r| = l w_n(α_v)/α_h with α_h = O_h M/2, makes the radius inversely proportional to O_h,
/// so O_h = c κ with c = r(O_h)·O_h (rad·m); `modbot_app::navigate::turn_model` takes r from
/// modbot_gaits' `predict::turning_radius`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TurnModel {
    /// c: O_h in rad per unit curvature (1/m), m.
    pub offset_per_curvature_m: f64,
}

impl TurnModel {
    /// The model through one point: offset `o_h_deg` turns on a circle of `radius_m`.
    pub fn through(o_h_deg: f64, radius_m: f64) -> TurnModel {
        TurnModel {
            offset_per_curvature_m: radius_m * o_h_deg.to_radians(),
        }
    }

    /// The yaw offset O_h (deg) for curvature `kappa` (1/m, positive to the left).
    pub fn offset_deg(&self, kappa: f64) -> f64 {
        (self.offset_per_curvature_m * kappa).to_degrees()
    }

    /// The curvature (1/m) the offset `o_h_deg` turns on.
    pub fn curvature(&self, o_h_deg: f64) -> f64 {
        o_h_deg.to_radians() / self.offset_per_curvature_m
    }
}

impl Default for TurnModel {
    /// The shipped py:8 (8 modules of 72 mm) under the shipped `turning` gait (A_v = 30°,
    /// Δφ_v = −120°, so α_v = 17.3° and w_n = 0.985): c = 2 l w_n / M = 2 × 0.072 × 0.985
    /// = 0.142 m.
    fn default() -> Self {
        TurnModel {
            offset_per_curvature_m: 2.0 * 0.072 * 0.985,
        }
    }
}

/// The steering law: the position controller and, for a pitch-yaw chain, its largest turn
/// and its turning model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Steering {
    /// Position controller.
    pub controller: Controller,
    /// Largest yaw offset O_h, deg.
    pub max_turn_deg: f64,
    /// O_h for a curvature.
    pub turn: TurnModel,
}

/// O_h changes in steps of this size (deg): every change restarts the gait's blend.
const TURN_STEP_DEG: f64 = 2.5;

impl Steering {
    /// The drive that takes a robot at `pose` towards `target`; `gait` is the configuration's
    /// capability gait (used by the axial controller).
    pub fn drive_to(&self, gait: &str, pose: Pose2, target: Pose2) -> Drive {
        let (dx, dy) = (target.x - pose.x, target.y - pose.y);
        match self.controller {
            Controller::Axial => {
                let along = pose.yaw.cos() * dx + pose.yaw.sin() * dy;
                let direction = if along >= 0.0 {
                    Direction::Forward
                } else {
                    Direction::Reverse
                };
                Drive::gait(gait, Vec::new(), direction)
            }
            Controller::Steer => {
                let (kappa, reverse) = self.pursue(pose, target);
                let direction = if reverse {
                    Direction::Reverse
                } else {
                    Direction::Forward
                };
                // Positive O_h bends the body to the left (decision record 0002): forward it
                // turns left, in reverse the robot backs along the same circle.
                let o_h = self.turn.offset_deg(kappa);
                let o_h = (o_h / TURN_STEP_DEG).round() * TURN_STEP_DEG;
                if o_h == 0.0 {
                    Drive::gait("straight", Vec::new(), direction)
                } else {
                    Drive::gait("turning", vec![("O_h".into(), o_h)], direction)
                }
            }
        }
    }

    /// Pure pursuit of `target` from `pose`, forward or in reverse (a pitch-yaw chain backs
    /// along the same circle when its wave runs the other way): the curvature of the circle
    /// tangent to the body through the target, κ = 2 sin α / d with α the bearing from the
    /// direction of travel (positive: the circle's centre on the body's left), and whether
    /// to reverse. A target ahead (|α| ≤ 90°) is pursued forward, one behind in reverse. A
    /// target inside the tightest circle (κ beyond the largest turn's) cannot be reached by
    /// turning (turning there orbits it for ever): the robot drives straight away from it,
    /// which brings it towards the body's axis, until the circle through it can be driven.
    pub fn pursue(&self, pose: Pose2, target: Pose2) -> (f64, bool) {
        let (dx, dy) = (target.x - pose.x, target.y - pose.y);
        let d = dx.hypot(dy);
        if d < 1e-9 {
            return (0.0, false);
        }
        let alpha = wrap_angle(dy.atan2(dx) - pose.yaw);
        let reverse = alpha.abs() > std::f64::consts::FRAC_PI_2;
        let travel = if reverse {
            wrap_angle(alpha - std::f64::consts::PI)
        } else {
            alpha
        };
        let k = 2.0 * travel.sin() / d;
        let k_max = self.turn.curvature(self.max_turn_deg).abs();
        if k.abs() > k_max {
            (0.0, !reverse)
        } else if reverse {
            (-k, true)
        } else {
            (k, false)
        }
    }
}

/// The pose of an undulating body averaged over a time window: mean position and circular
/// mean heading. The tail module of a snake (its base_link) wags with the gait, so its raw
/// yaw swings by tens of degrees within a cycle; steering on it switched O_h, and so
/// restarted the gait, every few hundred milliseconds (decision record 0018).
#[derive(Debug, Clone, Default)]
pub struct PoseFilter {
    window_s: f64,
    samples: VecDeque<(f64, Pose2)>,
}

impl PoseFilter {
    /// A filter over `window_s` seconds (0 passes poses through).
    pub fn new(window_s: f64) -> PoseFilter {
        PoseFilter {
            window_s,
            samples: VecDeque::new(),
        }
    }

    /// Adds the pose at time `now` (s) and returns the window's mean.
    pub fn push(&mut self, now: f64, pose: Pose2) -> Pose2 {
        // A clock going back (a restarted simulation) starts the window afresh.
        if self.samples.back().is_some_and(|(t, _)| *t > now) {
            self.samples.clear();
        }
        self.samples.push_back((now, pose));
        while self.samples.front().is_some_and(|(t, _)| *t < now - self.window_s) {
            self.samples.pop_front();
        }
        Pose2::mean(self.samples.iter().map(|(_, p)| *p), pose.yaw).unwrap_or(pose)
    }
}

/// Decides when a drive is sent: a change of gait (or of its parameters) restarts the gait's
/// phase in the gait layer, so a running gait is held for `hold_s` (one averaging window, a
/// gait cycle) before another replaces it; stopping is never delayed; the same drive is
/// re-sent every `heartbeat_s` (the gait layer's watchdog).
#[derive(Debug, Clone)]
pub struct DriveGate {
    hold_s: f64,
    heartbeat_s: f64,
    last: Option<Drive>,
    last_sent: f64,
    last_change: f64,
}

impl DriveGate {
    /// A gate that has sent nothing yet.
    pub fn new(hold_s: f64, heartbeat_s: f64) -> DriveGate {
        DriveGate {
            hold_s,
            heartbeat_s,
            last: None,
            last_sent: f64::NEG_INFINITY,
            last_change: f64::NEG_INFINITY,
        }
    }

    /// The drive to send at `now` for the `wanted` one, or `None` when nothing is due.
    pub fn offer(&mut self, now: f64, wanted: Drive) -> Option<Drive> {
        let mut drive = wanted;
        if let (Some(prev @ Drive::Gait { .. }), Drive::Gait { .. }) = (&self.last, &drive)
            && *prev != drive
            && now - self.last_change < self.hold_s
        {
            drive = prev.clone();
        }
        let changed = self.last.as_ref() != Some(&drive);
        if changed {
            self.last_change = now;
        }
        if changed || now - self.last_sent >= self.heartbeat_s {
            self.last = Some(drive.clone());
            self.last_sent = now;
            return Some(drive);
        }
        None
    }
}

/// One row of a plan as an executor receives it: the sub-goal with its target already
/// resolved (modbot_msgs/SubGoal carries it), so no scenario is needed.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetRow {
    /// Configuration required.
    pub configuration: String,
    /// Run the configuration's ability instead of position control.
    pub ability: bool,
    /// What to run.
    pub action: Action,
    /// The configuration's gait (may be empty).
    pub gait: String,
    /// The sub-goal pose.
    pub target: Pose2,
    /// The path segment to it (x, y), possibly empty.
    pub path: Vec<[f64; 2]>,
}

/// The executive's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecutiveSettings {
    /// The configuration this robot is (a key of the capability table).
    pub configuration: String,
    /// Position controller; `None` picks it from the configuration's capability gait.
    pub controller: Option<Controller>,
    /// Sequencer tolerances and row timeout.
    pub sequencer: SequencerSettings,
    /// Largest yaw offset O_h, deg.
    pub max_turn_deg: f64,
    /// The turning model of a pitch-yaw chain (pure pursuit).
    pub turn: TurnModel,
    /// Re-send the running drive this often, s.
    pub heartbeat_s: f64,
    /// Odometry averaging window and least hold of a running gait, s (0: raw, no hold).
    pub pose_window_s: f64,
}

impl Default for ExecutiveSettings {
    /// The shipped executive_node defaults, as a snake.
    fn default() -> Self {
        ExecutiveSettings {
            configuration: "snake".into(),
            controller: None,
            sequencer: SequencerSettings::default(),
            max_turn_deg: 30.0,
            turn: TurnModel::default(),
            heartbeat_s: 1.0,
            pose_window_s: 2.0,
        }
    }
}

/// What one [`Executive::update`] asks of the acting layer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Update {
    /// A drive to send now (a change, or the heartbeat).
    pub send: Option<Drive>,
    /// Ask the deliberative layer for a new plan to this goal (x, y).
    pub replan_to: Option<[f64; 2]>,
    /// The status, when it changed.
    pub status: Option<String>,
}

/// The executive: sequencer, steering, pose filter and drive gate.
#[derive(Debug, Clone)]
pub struct Executive {
    configuration: String,
    gait: String,
    steering: Steering,
    sequencer: SequencerSettings,
    seq: Option<Sequencer>,
    goal: Option<[f64; 2]>,
    rows: usize,
    status: String,
    reported: String,
    filter: PoseFilter,
    pose: Option<Pose2>,
    gate: DriveGate,
}

impl Executive {
    /// An executive with no plan, for `settings.configuration` of `caps`.
    pub fn new(settings: &ExecutiveSettings, caps: &Capabilities) -> Result<Executive, ExecutiveError> {
        let gait = caps.get(&settings.configuration)?.gait.clone();
        let controller = match settings.controller {
            Some(c) => c,
            None => Controller::for_gait(&gait).ok_or_else(|| ExecutiveError::NoController {
                configuration: settings.configuration.clone(),
                gait: gait.clone(),
            })?,
        };
        Ok(Executive {
            configuration: settings.configuration.clone(),
            gait,
            steering: Steering {
                controller,
                max_turn_deg: settings.max_turn_deg,
                turn: settings.turn,
            },
            sequencer: settings.sequencer,
            seq: None,
            goal: None,
            rows: 0,
            status: "waiting for a plan".into(),
            reported: String::new(),
            filter: PoseFilter::new(settings.pose_window_s),
            pose: None,
            gate: DriveGate::new(settings.pose_window_s, settings.heartbeat_s),
        })
    }

    /// The position controller in use.
    pub fn controller(&self) -> Controller {
        self.steering.controller
    }

    /// Human-readable state.
    pub fn status(&self) -> &str {
        &self.status
    }

    /// The plan's final goal.
    pub fn goal(&self) -> Option<[f64; 2]> {
        self.goal
    }

    /// Takes a new plan (replacing any running one); a row with a non-finite target refuses
    /// the whole plan and keeps the running one.
    pub fn set_plan(&mut self, plan: &[TargetRow]) -> Result<(), ExecutiveError> {
        let mut rows = Vec::with_capacity(plan.len());
        let mut refs = BTreeMap::new();
        for (i, r) in plan.iter().enumerate() {
            let t = r.target;
            if ![t.x, t.y, t.yaw].iter().all(|v| v.is_finite()) {
                return Err(ExecutiveError::NonFiniteTarget { row: i + 1 });
            }
            // Each row refers to its own target, so the sequencer needs no scenario.
            let name = format!("row{i}");
            refs.insert(name.clone(), t);
            rows.push(strategic::SubGoal {
                configuration: r.configuration.clone(),
                reference: name,
                lateral_m: 0.0,
                longitudinal_m: 0.0,
                yaw_deg: 0.0,
                ability: r.ability,
                action: r.action,
                gait: r.gait.clone(),
                path: r.path.clone(),
            });
        }
        self.goal = plan.last().map(|r| [r.target.x, r.target.y]);
        self.rows = rows.len();
        self.seq = Some(Sequencer::new(strategic::StrategicPlan { rows }, refs, self.sequencer));
        self.status = format!("plan of {} rows", self.rows);
        Ok(())
    }

    /// Takes an odometry pose at `now`; a non-finite one is ignored (returns false).
    pub fn odometry(&mut self, now: f64, pose: Pose2) -> bool {
        if ![pose.x, pose.y, pose.yaw].iter().all(|v| v.is_finite()) {
            return false;
        }
        self.pose = Some(self.filter.push(now, pose));
        true
    }

    /// One control update at `now` on the filtered pose: the drive to send (through the
    /// gate), a replan request, and the status when it changed. Nothing is driven before
    /// the first odometry.
    pub fn update(&mut self, now: f64) -> Update {
        let mut out = Update::default();
        if let Some(p) = self.pose {
            let (drive, replan) = self.step(now, p);
            out.send = self.gate.offer(now, drive);
            out.replan_to = self.goal.filter(|_| replan);
        }
        if self.status != self.reported {
            self.reported = self.status.clone();
            out.status = Some(self.status.clone());
        }
        out
    }

    /// One sequencer step at `pose` (no filter, no gate): what to drive, and whether to ask
    /// for a replan.
    pub fn step(&mut self, now: f64, pose: Pose2) -> (Drive, bool) {
        let Some(seq) = self.seq.as_mut() else {
            return (Drive::Stop, false);
        };
        let (row, rows, me) = (seq.row() + 1, self.rows, &self.configuration);
        match seq.tick(now, pose, me, false) {
            Tick::Done => {
                self.status = format!("done: {rows} rows");
                self.seq = None;
                (Drive::Stop, false)
            }
            Tick::Reached(n) => {
                self.status = format!("reached row {}/{rows}", n + 1);
                (Drive::Stop, false)
            }
            Tick::Replan { row, reason } => {
                self.status = format!("row {}/{rows}: {reason}; replanning", row + 1);
                self.seq = None;
                (Drive::Stop, true)
            }
            Tick::Command(Command::Reconfigure(to)) => {
                self.status = format!(
                    "row {row}/{rows}: needs configuration `{to}`, but this robot is `{me}` and cannot reassemble itself"
                );
                (Drive::Stop, false)
            }
            Tick::Command(Command::Ability(a, _)) => {
                self.status = format!("row {row}/{rows}: ability {a:?} is not available to `{me}`");
                (Drive::Stop, false)
            }
            Tick::Command(Command::Drive(target)) => {
                self.status = format!("row {row}/{rows}: driving to ({:.2}, {:.2})", target.x, target.y);
                (self.steering.drive_to(&self.gait, pose, target), false)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(rows: &[(&str, [f64; 2], Action)]) -> Vec<TargetRow> {
        rows.iter()
            .map(|(c, xy, a)| TargetRow {
                configuration: (*c).into(),
                ability: *a != Action::Drive,
                action: *a,
                gait: String::new(),
                target: at(xy[0], xy[1], 0.0),
                path: Vec::new(),
            })
            .collect()
    }

    fn at(x: f64, y: f64, yaw: f64) -> Pose2 {
        Pose2 { x, y, yaw }
    }

    fn gait_of(d: &Drive) -> (&str, Vec<f64>, Direction) {
        match d {
            Drive::Gait {
                gait,
                params,
                direction,
            } => (gait.as_str(), params.iter().map(|p| p.1).collect(), *direction),
            Drive::Stop => ("", Vec::new(), Direction::AsGiven),
        }
    }

    fn executive(configuration: &str) -> Executive {
        let s = ExecutiveSettings {
            configuration: configuration.into(),
            ..ExecutiveSettings::default()
        };
        Executive::new(&s, &Capabilities::builtin()).expect("executive")
    }

    /// The wagging tail's heading averages out over a cycle; the window slides.
    #[test]
    fn pose_filter_averages_the_wag_out() {
        let mut f = PoseFilter::new(2.0);
        let mut out = at(0.0, 0.0, 0.0);
        for k in 0..400 {
            let t = k as f64 * 0.01;
            let wag = 30f64.to_radians() * (std::f64::consts::PI * t).sin();
            out = f.push(t, at(0.01 * t, 0.0, 10f64.to_radians() + wag));
        }
        assert!((out.yaw.to_degrees() - 10.0).abs() < 1.0, "{}", out.yaw.to_degrees());
        // Mean position over the last 2 s: x(t) = 0.01 t on [2, 4] s.
        assert!((out.x - 0.03).abs() < 1e-3, "{}", out.x);
        // Headings near ±180° average to 180°, not 0°.
        let mut f = PoseFilter::new(1.0);
        f.push(0.0, at(0.0, 0.0, 179f64.to_radians()));
        let p = f.push(0.5, at(0.0, 0.0, -179f64.to_radians()));
        assert!(p.yaw.abs() > 179f64.to_radians(), "{}", p.yaw);
        // A window of 0 passes poses through; a clock going back starts afresh.
        let mut f = PoseFilter::new(0.0);
        f.push(1.0, at(1.0, 0.0, 0.0));
        assert_eq!(f.push(2.0, at(2.0, 0.0, 0.5)), at(2.0, 0.0, 0.5));
        assert_eq!(f.push(0.5, at(3.0, 0.0, 0.2)), at(3.0, 0.0, 0.2));
    }

    #[test]
    fn a_snake_steers_towards_its_sub_goals_and_finishes() {
        let mut ex = executive("snake");
        assert_eq!(ex.controller(), Controller::Steer);
        assert_eq!(ex.step(0.0, at(0.0, 0.0, 0.0)).0, Drive::Stop);
        ex.set_plan(&plan(&[
            ("snake", [1.0, 0.0], Action::Drive),
            ("snake", [1.0, 1.0], Action::Drive),
        ]))
        .expect("plan");
        let (d, _) = ex.step(0.0, at(0.0, 0.0, 0.0));
        assert_eq!(gait_of(&d), ("straight", vec![], Direction::Forward));
        // Target 57° to the left at 1 m: the circle through it, κ = 2 sin(1)/1 = 1.68/m,
        // O_h = 0.1418 × 1.68 rad = 13.7° → 12.5°.
        let (d, _) = ex.step(1.0, at(0.0, 0.0, -1.0));
        assert_eq!(gait_of(&d), ("turning", vec![12.5], Direction::Forward));
        assert_eq!(ex.step(2.0, at(0.95, 0.0, 0.0)).0, Drive::Stop); // row 1 reached
        let (d, _) = ex.step(3.0, at(0.95, 0.0, 0.0));
        // The second row 87° to the left at 1 m: κ = 2.0/m, O_h = 16.2° → 15°.
        assert_eq!(gait_of(&d).1, vec![15.0], "second row is 87° to the left");
        ex.step(4.0, at(1.0, 0.95, 1.5));
        assert_eq!(ex.step(5.0, at(1.0, 0.95, 1.5)).0, Drive::Stop);
        assert!(ex.status().starts_with("done"), "{}", ex.status());
    }

    /// Pure pursuit: the circle tangent to the body through the target, forward to a target
    /// ahead and in reverse to one behind; a target inside the tightest circle is not
    /// orbited (straight away from it until it can be reached); O_h from (5.1) in 2.5°
    /// steps, its sign the side of the circle's centre.
    #[test]
    fn pure_pursuit_follows_the_circle_through_the_target() {
        let s = Steering {
            controller: Controller::Steer,
            max_turn_deg: 30.0,
            turn: TurnModel::default(),
        };
        let k_max = s.turn.curvature(30.0);
        // c = 2 l w_n / M = 2 × 0.072 × 0.985.
        assert!((s.turn.offset_per_curvature_m - 0.14184).abs() < 1e-5);
        assert!((s.turn.offset_deg(k_max) - 30.0).abs() < 1e-9);
        let cases = [
            (-170.0f64, 1.0),
            (-120.0, 0.5),
            (-60.0, 1.0),
            (-30.0, 2.0),
            (-5.0, 1.0),
            (0.0, 1.0),
            (12.0, 0.5),
            (45.0, 1.0),
            (100.0, 2.0),
            (60.0, 0.2),
            (-80.0, 0.3),
            (95.0, 0.3),
            (170.0, 0.05f64),
        ];
        for k in -36..36 {
            let yaw = f64::from(k) * 10f64.to_radians();
            let pose = at(1.0, 2.0, yaw);
            for (err_deg, d) in cases {
                let b = yaw + err_deg.to_radians();
                let target = at(1.0 + d * b.cos(), 2.0 + d * b.sin(), 0.0);
                let (kappa, reverse) = s.pursue(pose, target);
                let behind = err_deg.abs() > 90.0;
                let travel = if behind {
                    err_deg - 180f64.copysign(err_deg)
                } else {
                    err_deg
                };
                let pursuit = 2.0 * travel.to_radians().sin() / d;
                if pursuit.abs() > k_max {
                    // Inside the tightest circle: straight, away from the target.
                    assert_eq!((kappa, reverse), (0.0, !behind), "{err_deg}° at {d} m");
                    continue;
                }
                assert_eq!(reverse, behind, "{err_deg}° at {d} m");
                let want = if behind { -pursuit } else { pursuit };
                assert!(
                    (kappa - want).abs() < 1e-9,
                    "{err_deg}° at {d} m, yaw {yaw}: {kappa} vs {want}"
                );
                // The circle of curvature κ tangent to the body passes through the target
                // (a curvature of rounding size is a straight line: its circle's radius
                // would be ~1e16 m).
                if kappa.abs() > 1e-9 {
                    let (cx, cy) = (pose.x - yaw.sin() / kappa, pose.y + yaw.cos() / kappa);
                    let r = (target.x - cx).hypot(target.y - cy);
                    assert!((r - 1.0 / kappa.abs()).abs() < 1e-9, "{err_deg}° at {d} m");
                }
                let drive = s.drive_to("", pose, target);
                let (g, p, dir) = gait_of(&drive);
                assert_eq!(dir, if behind { Direction::Reverse } else { Direction::Forward });
                let o_h = (s.turn.offset_deg(want) / 2.5).round() * 2.5;
                if o_h == 0.0 {
                    assert_eq!((g, p.len()), ("straight", 0), "{err_deg}");
                } else {
                    assert_eq!(g, "turning");
                    assert!((p[0] - o_h).abs() < 1e-9, "{err_deg}° at {yaw}: {p:?} vs {o_h}");
                    // The body bends towards the target's side, forward or in reverse (backing
                    // round a centre on the left goes back and to the left).
                    assert!(p[0].abs() <= 30.0 && p[0] * err_deg > 0.0, "{err_deg}: {p:?}");
                }
            }
        }
    }

    #[test]
    fn a_caterpillar_drives_along_its_axis_and_what_it_cannot_do_is_reported() {
        let mut ex = executive("caterpillar");
        assert_eq!(ex.controller(), Controller::Axial);
        ex.set_plan(&plan(&[("caterpillar", [-1.0, 0.0], Action::Drive)]))
            .expect("plan");
        let (d, _) = ex.step(0.0, at(0.0, 0.0, 0.0));
        assert_eq!(gait_of(&d), ("caterpillar", vec![], Direction::Reverse));
        ex.set_plan(&plan(&[("quadruped", [1.0, 0.0], Action::Drive)]))
            .expect("plan");
        assert_eq!(ex.step(0.0, at(0.0, 0.0, 0.0)).0, Drive::Stop);
        assert!(ex.status().contains("cannot reassemble"), "{}", ex.status());
        ex.set_plan(&plan(&[("caterpillar", [1.0, 0.0], Action::PassOver)]))
            .expect("plan");
        ex.step(0.0, at(0.0, 0.0, 0.0));
        assert!(ex.status().contains("PassOver"), "{}", ex.status());
        // Timeout → replan.
        ex.set_plan(&plan(&[("caterpillar", [1.0, 0.0], Action::Drive)]))
            .expect("plan");
        ex.step(0.0, at(0.0, 0.0, 0.0));
        let (d, replan) = ex.step(10_000.0, at(0.0, 0.0, 0.0));
        assert!(replan && d == Drive::Stop, "{}", ex.status());
        assert_eq!(ex.goal(), Some([1.0, 0.0]));
    }

    #[test]
    fn bad_plans_and_configurations_are_refused() {
        let mut ex = executive("snake");
        let p = plan(&[
            ("snake", [1.0, 0.0], Action::Drive),
            ("snake", [f64::NAN, 0.0], Action::Drive),
        ]);
        assert_eq!(ex.set_plan(&p), Err(ExecutiveError::NonFiniteTarget { row: 2 }));
        let s = |c: &str| ExecutiveSettings {
            configuration: c.into(),
            ..ExecutiveSettings::default()
        };
        let e = Executive::new(&s("wheeled"), &Capabilities::builtin()).expect_err("no controller");
        assert!(e.to_string().contains("skid_steer"), "{e}");
        let e = Executive::new(&s("hovercraft"), &Capabilities::builtin()).expect_err("unknown");
        assert!(e.to_string().contains("hovercraft"), "{e}");
        // An explicit controller overrides the capability gait's.
        let forced = ExecutiveSettings {
            controller: Some(Controller::Axial),
            ..s("wheeled")
        };
        assert_eq!(
            Executive::new(&forced, &Capabilities::builtin())
                .expect("forced")
                .controller(),
            Controller::Axial
        );
    }

    /// A new gait waits for the hold; stopping does not; the same drive is re-sent on the
    /// heartbeat only.
    #[test]
    fn the_gate_holds_gaits_and_beats_the_heart() {
        let straight = Drive::gait("straight", Vec::new(), Direction::AsGiven);
        let turn = Drive::gait("turning", vec![("O_h".into(), 10.0)], Direction::AsGiven);
        let mut g = DriveGate::new(2.0, 1.0);
        assert_eq!(g.offer(0.0, straight.clone()), Some(straight.clone()));
        assert_eq!(g.offer(0.5, straight.clone()), None);
        assert_eq!(g.offer(0.9, turn.clone()), None, "held for the window");
        assert_eq!(
            g.offer(1.0, turn.clone()),
            Some(straight.clone()),
            "heartbeat of the held gait"
        );
        assert_eq!(g.offer(2.0, turn.clone()), Some(turn.clone()));
        assert_eq!(
            g.offer(2.1, Drive::Stop),
            Some(Drive::Stop),
            "stopping is never delayed"
        );
        assert_eq!(
            g.offer(2.2, straight.clone()),
            Some(straight),
            "after a stop a gait starts at once"
        );
    }

    /// The whole loop on filtered odometry: a wagging snake gets one gait per window, not
    /// one per wag; the status is reported once per change; a timeout asks for a replan.
    #[test]
    fn update_filters_gates_and_reports() {
        let mut ex = executive("snake");
        assert_eq!(ex.update(0.0).status.as_deref(), Some("waiting for a plan"));
        assert_eq!(ex.update(0.1), Update::default(), "nothing before odometry");
        assert!(!ex.odometry(0.1, at(f64::NAN, 0.0, 0.0)));
        ex.set_plan(&plan(&[("snake", [10.0, 0.0], Action::Drive)]))
            .expect("plan");
        let mut sent = Vec::new();
        for k in 0..100 {
            let t = f64::from(k) * 0.1;
            let wag = 30f64.to_radians() * (std::f64::consts::PI * t).sin();
            assert!(ex.odometry(t, at(0.0, 0.0, wag)));
            if let Some(d) = ex.update(t).send {
                sent.push((t, d));
            }
        }
        let changes = sent.windows(2).filter(|w| w[0].1 != w[1].1).count();
        assert!(changes <= 2, "{sent:?}");
        // About one send per heartbeat (1 s) over 10 s.
        assert!((9..=13).contains(&sent.len()), "{}", sent.len());
        let u = ex.update(10_000.0);
        assert_eq!((u.send, u.replan_to), (Some(Drive::Stop), Some([10.0, 0.0])));
        assert!(u.status.is_some_and(|s| s.contains("replanning")));
    }
}
