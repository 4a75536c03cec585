//! The quadruped configuration (seed 000 §3.2, §4.1, §6.6; Lua `move_quad`,
//! `qd_pass_over`, `stop`): six modules, Role#1 and Role#2 the body held at
//! (BJ1, BJ2) = (−90, 90), Role#3–#6 the legs FR, FL, BR, BL with the hip on FJ.
//! Every joint is position-driven; the hips are continuous and commanded to the nearest
//! turn of their target, so a gait after a pass-over does not unwind the hips.
//!
//! A step is done when FJ, BJ1 and BJ2 of every module are within 5° of their targets
//! (wrap-aware, the Lua's `Order_done`), and the next step is ordered [`STEP_HOLD_S`] after
//! that (the source's order/done round trip); the cameras are held at 0 and not waited for.

use super::{Goal, ModuleJoints, nearest_turn, wrap_deg, wrap_rad, yaw_of};
use crate::controller::{Controller, JointTarget, Observation};

/// (FJ, BJ1, BJ2) of the body modules (Role#1, Role#2), deg.
pub const BODY_DEG: [f64; 3] = [0.0, -90.0, 90.0];
/// (FJ, BJ1, BJ2) of a standing leg, deg.
pub const STANCE_DEG: [f64; 3] = [0.0, 60.0, 30.0];
/// (FJ, BJ1, BJ2) of a lifted leg, deg.
pub const LIFTED_DEG: [f64; 3] = [0.0, 0.0, 90.0];
/// A step is reached when every joint is within this of its target, deg.
pub const STEP_TOLERANCE_DEG: f64 = 5.0;
/// Time from a step being reached to the next step's targets, s: the source's order/done
/// round trip (each module raises `Order_done`, Role#1 sees every flag and orders the next
/// pose, the modules take it up), whose length the thesis does not give. Fitted together
/// with the hips' servo gain to the trot's figures of Tables 3.23, 3.24 and 3.27 (decision
/// 0057); at 100 Hz it is two control ticks.
pub const STEP_HOLD_S: f64 = 0.02;
/// The default swing s, deg (Table 3.19; ±30 leaves room for steering).
pub const SWING_DEG: f64 = 30.0;
/// The sidle's swing s, deg: the thesis text's BJ2 range −30 … 90 about 30 (the code's 30
/// gives 0 … 60 and a third of the source's measured sidle step; decision 0024).
pub const SIDLE_SWING_DEG: f64 = 60.0;
/// Steps in a trot or sidle cycle (Table 3.17 with the code's step 0).
pub const STEPS: usize = 5;
/// The leg roles in the tables' order: FR, FL, BR, BL.
pub const LEG_ROLES: [usize; 4] = [3, 4, 5, 6];

/// (FJ, BJ1, BJ2) of the four legs, in the order FR, FL, BR, BL, deg.
pub type LegTargets = [[f64; 3]; 4];

/// What the legs do.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum QuadGait {
    /// Stand: body (−90, 90), legs (0, 60, 30).
    Stand,
    /// Trot (Tables 3.19, 3.21): `s` = ±swing (+ forward, − backward), steering `r` on the
    /// right legs and `l` on the left, deg.
    Trot {
        /// Swing s, deg.
        s: f64,
        /// Right-leg steering r, deg.
        r: f64,
        /// Left-leg steering l, deg.
        l: f64,
    },
    /// Sidle (Tables 3.20, 3.22): `s` = ±swing (+ left, − right), steering `f` on the front
    /// legs and `b` on the back, deg.
    Sidle {
        /// Swing s, deg.
        s: f64,
        /// Front-leg steering f, deg.
        f: f64,
        /// Back-leg steering b, deg.
        b: f64,
    },
}

impl QuadGait {
    /// The leg targets of step `step` (0..5) of the timetable (Table 3.17), deg.
    ///
    /// Trot: step 2 FR = −s−r, FL = −s−l, BR = s+r, BL = s+l on FJ; step 4 the opposite
    /// (Table 3.21, as `move_quad` uses the signs). Sidle, in the code's form: BJ2 of the
    /// front legs 30−s−f at step 2 and 30+s+f at step 4, of the back legs 30+s+b and
    /// 30−s−b. With s = ±30 (the code's) that is the range 0…60 around 30, not the text's
    /// −30…90 (Table 3.20), which is s = ±60.
    pub fn legs(&self, step: usize) -> LegTargets {
        let (st, up) = (STANCE_DEG, LIFTED_DEG);
        let at = |fj: f64, bj2: f64| [fj, 60.0, bj2];
        match (*self, step % STEPS) {
            (QuadGait::Stand, _) | (_, 0) => [st; 4],
            (_, 1) => [st, up, up, st],
            (_, 3) => [up, st, st, up],
            (QuadGait::Trot { s, r, l }, 2) => [at(-s - r, 30.0), at(-s - l, 30.0), at(s + r, 30.0), at(s + l, 30.0)],
            (QuadGait::Trot { s, r, l }, _) => [at(s + r, 30.0), at(s + l, 30.0), at(-s - r, 30.0), at(-s - l, 30.0)],
            (QuadGait::Sidle { s, f, b }, 2) => [
                at(0.0, 30.0 - s - f),
                at(0.0, 30.0 - s - f),
                at(0.0, 30.0 + s + b),
                at(0.0, 30.0 + s + b),
            ],
            (QuadGait::Sidle { s, f, b }, _) => [
                at(0.0, 30.0 + s + f),
                at(0.0, 30.0 + s + f),
                at(0.0, 30.0 - s - b),
                at(0.0, 30.0 - s - b),
            ],
        }
    }
}

/// (FJ, BJ1, BJ2) of every module, role 1 … 6, with the body's pose: deg.
fn all_roles(legs: &LegTargets) -> [[f64; 3]; 6] {
    [BODY_DEG, BODY_DEG, legs[0], legs[1], legs[2], legs[3]]
}

/// True when FJ, BJ1 and BJ2 of every module are within 5° of `targets` (deg); FJ wrap-aware
/// unless `unwrapped` (then the joint must have turned all the way).
fn reached(roles: &[ModuleJoints; 6], targets: &[[f64; 3]; 6], q: &[f64], unwrapped: bool) -> bool {
    roles.iter().zip(targets).all(|(m, t)| {
        let fj = q[m.fj].to_degrees() - t[0];
        let fj = if unwrapped { fj } else { wrap_deg(fj) };
        fj.abs() < STEP_TOLERANCE_DEG
            && wrap_deg(q[m.bj1].to_degrees() - t[1]).abs() < STEP_TOLERANCE_DEG
            && wrap_deg(q[m.bj2].to_degrees() - t[2]).abs() < STEP_TOLERANCE_DEG
    })
}

/// Writes every module's targets (deg); FJ to the nearest turn of its target.
fn write(roles: &[ModuleJoints; 6], targets: &[[f64; 3]; 6], q: &[f64], out: &mut [JointTarget]) {
    for (m, t) in roles.iter().zip(targets) {
        out[m.fj] = JointTarget::Position(nearest_turn(t[0].to_radians(), q[m.fj]));
        out[m.bj1] = JointTarget::Position(t[1].to_radians());
        out[m.bj2] = JointTarget::Position(t[2].to_radians());
        m.write_camera(out);
    }
}

/// Stand, trot or sidle: the 5-step timetable run 0, 1, 2, 3, 4, 0, … (the step-0 stance
/// is part of every cycle, as in the code). A cycle is steps 0…4, counted when step 0 is
/// ordered after step 4 (a hold after step 4 was reached); `Stand` counts one cycle when the
/// stance is reached (without the hold) and holds it.
#[derive(Debug, Clone)]
pub struct QuadWalk {
    name: String,
    roles: [ModuleJoints; 6],
    count: usize,
    gait: QuadGait,
    step: usize,
    cycles: usize,
    /// `Stand` has reached the stance.
    stood: bool,
    /// Time from reaching a step to ordering the next, s.
    hold_s: f64,
    /// Time since the current step was reached (latched, as the source's `Order_done`), s.
    done_for: Option<f64>,
}

impl QuadWalk {
    /// A walk on a robot of `joint_count` joints; `roles[i]` is Role#(i+1).
    pub fn new(name: &str, roles: [ModuleJoints; 6], joint_count: usize, gait: QuadGait) -> QuadWalk {
        QuadWalk {
            name: name.to_string(),
            roles,
            count: joint_count,
            gait,
            step: 0,
            cycles: 0,
            stood: false,
            hold_s: STEP_HOLD_S,
            done_for: None,
        }
    }

    /// The same walk with another order/done round trip (s, finite and ≥ 0; 0 orders the
    /// next step on the tick the current one is reached).
    pub fn with_hold(mut self, hold_s: f64) -> QuadWalk {
        self.hold_s = if hold_s.is_finite() {
            hold_s.max(0.0)
        } else {
            STEP_HOLD_S
        };
        self
    }

    /// The order/done round trip, s.
    pub fn hold_s(&self) -> f64 {
        self.hold_s
    }

    /// The gait.
    pub fn gait(&self) -> QuadGait {
        self.gait
    }

    /// Changes the gait: the current step's targets become the new gait's at once, and what
    /// was reached of the old ones does not count (a decision at the start of a cycle,
    /// where step 0 is the same stance for every gait).
    pub fn set_gait(&mut self, gait: QuadGait) {
        if gait == QuadGait::Stand && self.gait != QuadGait::Stand {
            self.step = 0;
            self.stood = false;
        }
        if gait != self.gait {
            // New targets: what was reached of the old ones does not count.
            self.done_for = None;
        }
        self.gait = gait;
    }

    /// The step being commanded (0..5).
    pub fn step_index(&self) -> usize {
        self.step
    }

    /// Targets of every module at the current step, deg.
    pub fn targets(&self) -> [[f64; 3]; 6] {
        all_roles(&self.gait.legs(self.step))
    }

    /// Moves to the next step when this one has been reached for the hold (`dt`: the time
    /// since the last call, s); true when that ends a cycle (for `Stand`: when the stance is
    /// first reached, without the hold).
    pub fn advance(&mut self, q: &[f64], dt: f64) -> bool {
        if self.gait == QuadGait::Stand {
            if !reached(&self.roles, &self.targets(), q, false) {
                return false;
            }
            let first = !self.stood;
            self.stood = true;
            return first;
        }
        let done_for = match self.done_for {
            Some(t) => t + dt,
            None if reached(&self.roles, &self.targets(), q, false) => 0.0,
            None => return false,
        };
        if done_for < self.hold_s - 1e-9 {
            self.done_for = Some(done_for);
            return false;
        }
        self.done_for = None;
        self.step = (self.step + 1) % STEPS;
        if self.step == 0 {
            self.cycles += 1;
        }
        self.step == 0
    }

    /// Trot or sidle cycles walked (steps 0…4).
    pub fn walked_cycles(&self) -> usize {
        self.cycles
    }

    /// Writes the current step's targets.
    pub fn write(&self, q: &[f64], out: &mut [JointTarget]) {
        write(&self.roles, &self.targets(), q, out);
    }
}

impl Controller for QuadWalk {
    fn name(&self) -> &str {
        &self.name
    }

    fn joint_count(&self) -> usize {
        self.count
    }

    fn step(&mut self, dt: f64, obs: &Observation<'_>, out: &mut [JointTarget]) {
        self.advance(obs.positions, dt);
        self.write(obs.positions, out);
    }

    fn period(&self) -> Option<f64> {
        None
    }

    fn completed_cycles(&self) -> usize {
        if self.gait == QuadGait::Stand {
            usize::from(self.stood)
        } else {
            self.cycles
        }
    }
}

/// Hip angles of the pass-over poses 0…3 (Table 3.29 in the code's order), right legs, deg,
/// unwrapped: 0 → −135 → +135 (≡ −225) → 0 (≡ −360). The left legs are the mirror.
pub const PASS_OVER_RIGHT_HIP_DEG: [f64; 4] = [0.0, -135.0, -225.0, -360.0];

/// Pass over a ground obstacle (§4.1, Table 3.29, `qd_pass_over`): all four hips turn
/// together 0 → ±135 → ∓135 → 0 with BJ1, BJ2 = (60, 30), `cycles` times (the code's 2),
/// then the robot stands. The hip targets are unwrapped so that each hip turns
/// monotonically through a full turn per cycle in the direction of the code's first move
/// (right legs negative, left legs positive), never back through 0 (spec §9.7; whether that
/// direction climbs rather than backs off is for the simulator to confirm). After the last
/// cycle the standing pose keeps the hips where they are (−720° ≡ 0), without unwinding.
#[derive(Debug, Clone)]
pub struct PassOver {
    roles: [ModuleJoints; 6],
    count: usize,
    wanted: usize,
    pose: usize,
    cycles: usize,
    /// Each leg's hip zero (rad), the turn of 0 nearest its start position.
    anchor: Option<[f64; 4]>,
}

impl PassOver {
    /// A pass-over of `cycles` cycles.
    pub fn new(roles: [ModuleJoints; 6], joint_count: usize, cycles: usize) -> PassOver {
        PassOver {
            roles,
            count: joint_count,
            wanted: cycles,
            pose: 0,
            cycles: 0,
            anchor: None,
        }
    }

    /// The pose being commanded (0..4).
    pub fn pose(&self) -> usize {
        self.pose
    }

    /// True once every cycle is done (the robot stands).
    pub fn done(&self) -> bool {
        self.cycles >= self.wanted
    }

    /// Unwrapped targets (deg, FJ relative to each hip's zero) of the current pose.
    fn targets(&self, anchor: &[f64; 4]) -> [[f64; 3]; 6] {
        let right = PASS_OVER_RIGHT_HIP_DEG[self.pose] - 360.0 * self.cycles as f64;
        // FR and BR turn negative, FL and BL positive.
        let hips = [right, -right, right, -right];
        let mut legs = [STANCE_DEG; 4];
        for (k, leg) in legs.iter_mut().enumerate() {
            leg[0] = anchor[k].to_degrees() + hips[k];
        }
        all_roles(&legs)
    }
}

impl Controller for PassOver {
    fn name(&self) -> &str {
        "pass_over"
    }

    fn joint_count(&self) -> usize {
        self.count
    }

    fn step(&mut self, _dt: f64, obs: &Observation<'_>, out: &mut [JointTarget]) {
        let q = obs.positions;
        let roles = self.roles;
        let anchor = *self.anchor.get_or_insert_with(|| {
            LEG_ROLES.map(|r| {
                let fj = q[roles[r - 1].fj];
                fj - wrap_rad(fj)
            })
        });
        if !self.done() && reached(&self.roles, &self.targets(&anchor), q, true) {
            self.pose += 1;
            if self.pose == PASS_OVER_RIGHT_HIP_DEG.len() {
                self.pose = 0;
                self.cycles += 1;
            }
        }
        // Unwrapped targets are written as they are, not to the nearest turn.
        for (m, t) in self.roles.iter().zip(self.targets(&anchor)) {
            out[m.fj] = JointTarget::Position(t[0].to_radians());
            out[m.bj1] = JointTarget::Position(t[1].to_radians());
            out[m.bj2] = JointTarget::Position(t[2].to_radians());
            m.write_camera(out);
        }
    }

    fn period(&self) -> Option<f64> {
        None
    }

    fn completed_cycles(&self) -> usize {
        self.cycles
    }
}

/// The gait decision of the quadruped position controller (§6.6: Table 3.28 as corrected by
/// `move_quad`), from the goal in the robot frame (`lat` > 0 left, `long` > 0 ahead, m) and
/// `ornt_dif_deg` = wrap(goal yaw − robot yaw).
///
/// Two fixes to the code: the trot steering ladder of the first quadrant compares degrees
/// (the code compares radians with 10/15/20, so only (0, −5) ever fired), and the steering
/// resets to 0 when |ornt_dif| ≤ 5° (the code keeps the previous r, l). Goals exactly on an
/// axis count as left (lat = 0) or ahead (long = 0), and |ornt_dif| = 5° as aligned, where
/// the code's strict comparisons leave the previous decision standing.
pub fn decide(lat: f64, long: f64, ornt_dif_deg: f64) -> QuadGait {
    let o = ornt_dif_deg;
    let trot = |s: f64, (r, l): (f64, f64)| QuadGait::Trot { s, r, l };
    // The code's sidle reuses r, l as f, b.
    let sidle = |s: f64, (f, b): (f64, f64)| QuadGait::Sidle { s, f, b };
    // Steering ladders: to the left (ornt_dif > 5) and to the right (ornt_dif < −5).
    let left = if o > 20.0 {
        (15.0, -15.0)
    } else if o > 15.0 {
        (10.0, -10.0)
    } else if o > 10.0 {
        (5.0, -5.0)
    } else {
        (0.0, -5.0)
    };
    let right = if o < -20.0 {
        (-15.0, 15.0)
    } else if o < -15.0 {
        (-10.0, 10.0)
    } else if o < -10.0 {
        (-5.0, 5.0)
    } else {
        (-5.0, 0.0)
    };
    let s = SWING_DEG;
    // The sidle swings the text's range (decision 0024): its sign is the code's s.
    let sidle = |s: f64, fb: (f64, f64)| sidle(SIDLE_SWING_DEG.copysign(s), fb);
    if o.abs() <= 5.0 {
        return if lat.abs() > long.abs() {
            sidle(s.copysign(lat), (0.0, 0.0))
        } else {
            trot(s.copysign(long), (0.0, 0.0))
        };
    }
    let (is_left, ahead, turn_left) = (lat >= 0.0, long >= 0.0, o > 5.0);
    match (is_left, ahead, turn_left) {
        (true, true, false) => sidle(s, (-15.0, 15.0)),
        (true, true, true) => trot(s, left),
        (true, false, false) => trot(-s, right),
        (true, false, true) => sidle(s, (15.0, -15.0)),
        (false, true, false) => trot(s, right),
        (false, true, true) => sidle(-s, (15.0, -15.0)),
        (false, false, false) => sidle(-s, (-15.0, 15.0)),
        (false, false, true) => trot(-s, left),
    }
}

/// Phases of [`QuadGoto`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuadGotoPhase {
    /// Walking, deciding the gait once per cycle.
    Walking,
    /// Within the stop distance, heading off the goal yaw by more than the alignment's
    /// tolerance: turning on the spot ([`turn_on_the_spot`]), deciding once per cycle.
    Aligning,
    /// Within the stop distance (and aligned, when asked): going to the stance; aligning,
    /// it turns again if the stance leaves it off the goal yaw.
    Stopping,
    /// Standing at the goal.
    Done,
}

/// The quadruped position controller (§6.6): at the start and at the start of every cycle
/// it decides trot or sidle and the steering from the goal in the robot frame and the
/// heading error to the goal yaw ([`decide`]); on any tick the reference point (the base,
/// the body's foot junction) is within `stop_distance` of the goal it stands. One cycle =
/// standing at the goal. The goal yaw is only steered toward while walking, as in the code.
#[derive(Debug, Clone)]
pub struct QuadGoto {
    walk: QuadWalk,
    goal: Goal,
    stop_distance: f64,
    phase: QuadGotoPhase,
    started: bool,
    decisions: usize,
    /// Turn on the spot to the goal yaw within this (deg) before standing; `None`: the
    /// source's controller (the yaw is only steered toward while walking).
    align_deg: Option<f64>,
    /// Cycles turned on the spot.
    turn_cycles: usize,
}

/// The steering (r, −r) of a full-rate turn on the spot, deg: the trot's most aggressive
/// state (Table 3.21) with no swing.
pub const TURN_STEER_DEG: f64 = 15.0;
/// Heading error (deg) below which the turn on the spot steers in proportion (down to
/// [`TURN_STEER_MIN_DEG`]), so that it does not step over a tolerance of a few degrees.
pub const TURN_FULL_ABOVE_DEG: f64 = 20.0;
/// The least steering of a turn on the spot, deg.
pub const TURN_STEER_MIN_DEG: f64 = 3.0;
/// A turn on the spot gives up after this many cycles (it then stands where it is).
pub const TURN_MAX_CYCLES: usize = 40;
/// An aligning goto that the turn carries beyond this many stop distances from the goal
/// walks back to it.
pub const REWALK_FACTOR: f64 = 1.5;

/// The quadruped's turn on the spot toward a heading error `err_deg` (> 0: to the left): the
/// trot's timetable (Tables 3.17, 3.21) with swing s = 0 and steering (r, l) = (k, −k), so
/// that the right legs stroke backward (+θ1 forward) while the left legs stroke forward and
/// the body turns about its centre. The source turns the quadruped only while walking
/// (§6.6); this is modbot's extension for a pass-over that must face its obstacle (decision
/// 0055). k is [`TURN_STEER_DEG`] above [`TURN_FULL_ABOVE_DEG`] of error and in proportion
/// below, at least [`TURN_STEER_MIN_DEG`].
pub fn turn_on_the_spot(err_deg: f64) -> QuadGait {
    let k = if err_deg.abs() >= TURN_FULL_ABOVE_DEG {
        TURN_STEER_DEG
    } else {
        (TURN_STEER_DEG * err_deg.abs() / TURN_FULL_ABOVE_DEG).max(TURN_STEER_MIN_DEG)
    };
    let k = k.copysign(err_deg);
    QuadGait::Trot { s: 0.0, r: k, l: -k }
}

impl QuadGoto {
    /// A goto to `goal` (world frame), stopping within `stop_distance` m (the code's 0.1).
    pub fn new(roles: [ModuleJoints; 6], joint_count: usize, goal: Goal, stop_distance: f64) -> QuadGoto {
        QuadGoto {
            walk: QuadWalk::new("goto", roles, joint_count, QuadGait::Stand),
            goal,
            stop_distance,
            phase: QuadGotoPhase::Walking,
            started: false,
            decisions: 0,
            align_deg: None,
            turn_cycles: 0,
        }
    }

    /// Before standing at the goal, turns on the spot ([`turn_on_the_spot`]) until the
    /// heading is within `tolerance_deg` of the goal yaw (at most [`TURN_MAX_CYCLES`]).
    pub fn aligned_within(mut self, tolerance_deg: f64) -> QuadGoto {
        self.align_deg = Some(tolerance_deg);
        self
    }

    /// Cycles turned on the spot so far.
    pub fn turn_cycles(&self) -> usize {
        self.turn_cycles
    }

    /// The heading error to the goal yaw, wrap(goal yaw − yaw), deg.
    fn heading_error(&self, obs: &Observation<'_>) -> f64 {
        wrap_deg((self.goal.yaw - yaw_of(&obs.base)).to_degrees())
    }

    /// Still to turn: alignment asked, the error above its tolerance and turns left.
    fn must_turn(&self, obs: &Observation<'_>) -> bool {
        self.align_deg
            .is_some_and(|tol| self.heading_error(obs).abs() > tol && self.turn_cycles < TURN_MAX_CYCLES)
    }

    /// At the goal: when still to turn ([`QuadGoto::must_turn`]), turns (again) on the spot
    /// toward the goal yaw, from the next step on, and says so.
    fn turn_if_off(&mut self, obs: &Observation<'_>) -> bool {
        if !self.must_turn(obs) {
            return false;
        }
        self.phase = QuadGotoPhase::Aligning;
        self.walk.set_gait(turn_on_the_spot(self.heading_error(obs)));
        self.decisions += 1;
        true
    }

    /// Stands: the stance from the next step on.
    fn stop(&mut self) {
        self.phase = QuadGotoPhase::Stopping;
        self.walk.set_gait(QuadGait::Stand);
    }

    /// The gait being walked.
    pub fn gait(&self) -> QuadGait {
        self.walk.gait()
    }

    /// The phase.
    pub fn phase(&self) -> QuadGotoPhase {
        self.phase
    }

    /// Decisions made so far.
    pub fn decisions(&self) -> usize {
        self.decisions
    }

    /// Gait cycles walked.
    pub fn gait_cycles(&self) -> usize {
        self.walk.walked_cycles()
    }

    fn decide(&mut self, obs: &Observation<'_>) {
        let (d, bearing) = self.goal.range_bearing(&obs.base);
        let yaw = yaw_of(&obs.base);
        let rel = bearing - yaw;
        let ornt = wrap_deg((self.goal.yaw - yaw).to_degrees());
        self.walk.set_gait(decide(d * rel.sin(), d * rel.cos(), ornt));
        self.decisions += 1;
    }
}

impl Controller for QuadGoto {
    fn name(&self) -> &str {
        "goto"
    }

    fn joint_count(&self) -> usize {
        self.walk.joint_count()
    }

    fn step(&mut self, dt: f64, obs: &Observation<'_>, out: &mut [JointTarget]) {
        let q = obs.positions;
        let (d, _) = self.goal.range_bearing(&obs.base);
        if self.phase == QuadGotoPhase::Walking && d <= self.stop_distance && !self.turn_if_off(obs) {
            self.stop();
        }
        match self.phase {
            QuadGotoPhase::Walking => {
                let cycle_ended = self.walk.advance(q, dt);
                if !self.started || cycle_ended {
                    self.started = true;
                    self.decide(obs);
                }
            }
            QuadGotoPhase::Aligning => {
                if d > REWALK_FACTOR * self.stop_distance {
                    // The turn carried it off the goal: walk back (the decision comes at the
                    // next cycle's start, as in walking).
                    self.phase = QuadGotoPhase::Walking;
                } else if self.walk.advance(q, dt) {
                    self.turn_cycles += 1;
                    if !self.turn_if_off(obs) {
                        self.stop();
                    }
                }
            }
            QuadGotoPhase::Stopping => {
                if self.walk.advance(q, dt) {
                    // Going to the stance from a turn moves the legs with every foot down and
                    // turns the body a little more: standing, it checks again.
                    if !self.turn_if_off(obs) {
                        self.phase = QuadGotoPhase::Done;
                    }
                }
            }
            QuadGotoPhase::Done => {}
        }
        self.walk.write(q, out);
    }

    fn period(&self) -> Option<f64> {
        None
    }

    fn completed_cycles(&self) -> usize {
        usize::from(self.phase == QuadGotoPhase::Done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modular::fake::{FakePlant, deg, six_names};

    fn roles() -> [ModuleJoints; 6] {
        let names = six_names();
        [1, 2, 3, 4, 5, 6].map(|r| ModuleJoints::find(&format!("role{r}"), &names).unwrap())
    }

    /// (FJ, BJ1, BJ2) of roles 1…6 in the targets, deg, rounded to 1e-6.
    fn commanded(t: &[JointTarget]) -> [[f64; 3]; 6] {
        let r = roles();
        let d = |k: usize| (deg(t[k]) * 1e6).round() / 1e6;
        [0, 1, 2, 3, 4, 5].map(|i| [d(r[i].fj), d(r[i].bj1), d(r[i].bj2)])
    }

    /// The distinct commanded poses over `ticks` ticks.
    fn steps(c: &mut dyn Controller, plant: &mut FakePlant, ticks: usize) -> Vec<[[f64; 3]; 6]> {
        let mut seen: Vec<[[f64; 3]; 6]> = Vec::new();
        for _ in 0..ticks {
            let t = commanded(plant.tick(c, 0.01));
            if seen.last() != Some(&t) {
                seen.push(t);
            }
        }
        seen
    }

    /// Puts every module's (FJ, BJ1, BJ2) of roles 1…6 at `rows` (deg).
    fn place(plant: &mut FakePlant, rows: [[f64; 3]; 6]) {
        for (m, t) in roles().iter().zip(rows) {
            plant.q[m.fj] = t[0].to_radians();
            plant.q[m.bj1] = t[1].to_radians();
            plant.q[m.bj2] = t[2].to_radians();
        }
    }

    fn legs(rows: &[[f64; 3]; 6]) -> LegTargets {
        [rows[2], rows[3], rows[4], rows[5]]
    }

    /// Table 3.19 (trot forward, s = 30), rows = steps 0…4, legs FR, FL, BR, BL.
    const TABLE_3_19: [LegTargets; 5] = [
        [[0.0, 60.0, 30.0]; 4],
        [[0.0, 60.0, 30.0], [0.0, 0.0, 90.0], [0.0, 0.0, 90.0], [0.0, 60.0, 30.0]],
        [
            [-30.0, 60.0, 30.0],
            [-30.0, 60.0, 30.0],
            [30.0, 60.0, 30.0],
            [30.0, 60.0, 30.0],
        ],
        [[0.0, 0.0, 90.0], [0.0, 60.0, 30.0], [0.0, 60.0, 30.0], [0.0, 0.0, 90.0]],
        [
            [30.0, 60.0, 30.0],
            [30.0, 60.0, 30.0],
            [-30.0, 60.0, 30.0],
            [-30.0, 60.0, 30.0],
        ],
    ];

    /// Table 3.20 (sidle left) with the code's amplitude: BJ2 swings 0…60 (the text's −30
    /// is 0 here and its 90 is 60).
    const TABLE_3_20_CODE: [LegTargets; 5] = [
        [[0.0, 60.0, 30.0]; 4],
        [[0.0, 60.0, 30.0], [0.0, 0.0, 90.0], [0.0, 0.0, 90.0], [0.0, 60.0, 30.0]],
        [[0.0, 60.0, 0.0], [0.0, 60.0, 0.0], [0.0, 60.0, 60.0], [0.0, 60.0, 60.0]],
        [[0.0, 0.0, 90.0], [0.0, 60.0, 30.0], [0.0, 60.0, 30.0], [0.0, 0.0, 90.0]],
        [[0.0, 60.0, 60.0], [0.0, 60.0, 60.0], [0.0, 60.0, 0.0], [0.0, 60.0, 0.0]],
    ];

    fn check_table(gait: QuadGait, table: &[LegTargets; 5]) {
        let mut c = QuadWalk::new("walk", roles(), 30, gait);
        let mut plant = FakePlant::new(30);
        let seen = steps(&mut c, &mut plant, 1500);
        assert!(seen.len() >= 11, "{gait:?}: {} steps", seen.len());
        for (k, rows) in seen.iter().enumerate() {
            assert_eq!(legs(rows), table[k % 5], "{gait:?} step {}", k % 5);
            assert_eq!([rows[0], rows[1]], [BODY_DEG, BODY_DEG], "body held at (-90, 90)");
        }
        assert_eq!(c.completed_cycles(), (seen.len() - 1) / 5);
        assert!(c.completed_cycles() >= 2);
    }

    #[test]
    fn trot_runs_table_3_19_with_step_0_in_every_cycle() {
        check_table(
            QuadGait::Trot {
                s: 30.0,
                r: 0.0,
                l: 0.0,
            },
            &TABLE_3_19,
        );
    }

    #[test]
    fn sidle_runs_table_3_20_with_the_codes_amplitude() {
        check_table(
            QuadGait::Sidle {
                s: 30.0,
                f: 0.0,
                b: 0.0,
            },
            &TABLE_3_20_CODE,
        );
    }

    #[test]
    fn backward_swaps_the_swing_signs() {
        let back = QuadGait::Trot {
            s: -30.0,
            r: 0.0,
            l: 0.0,
        };
        let fwd = QuadGait::Trot {
            s: 30.0,
            r: 0.0,
            l: 0.0,
        };
        assert_eq!(back.legs(2), fwd.legs(4));
        assert_eq!(back.legs(4), fwd.legs(2));
        let right = QuadGait::Sidle {
            s: -30.0,
            f: 0.0,
            b: 0.0,
        };
        assert_eq!(right.legs(2), TABLE_3_20_CODE[4]);
    }

    #[test]
    fn steering_offsets_of_tables_3_21_and_3_22() {
        // Trot, (r, l) = (5, -5): step 2 FR = -s-r, FL = -s-l, BR = s+r, BL = s+l.
        let t = QuadGait::Trot {
            s: 30.0,
            r: 5.0,
            l: -5.0,
        };
        let fj = |rows: LegTargets| rows.map(|l| l[0]);
        assert_eq!(fj(t.legs(2)), [-35.0, -25.0, 35.0, 25.0]);
        assert_eq!(fj(t.legs(4)), [35.0, 25.0, -35.0, -25.0]);
        // The swing range changes by 2|r| on each side: 70 right, 50 left.
        assert_eq!(fj(t.legs(4))[0] - fj(t.legs(2))[0], 70.0);
        assert_eq!(fj(t.legs(4))[1] - fj(t.legs(2))[1], 50.0);
        // Sidle, code form with (f, b) = (10, -10): front 30-s-f / 30+s+f, back 30+s+b / 30-s-b.
        let s = QuadGait::Sidle {
            s: 30.0,
            f: 10.0,
            b: -10.0,
        };
        let bj2 = |rows: LegTargets| rows.map(|l| l[2]);
        assert_eq!(bj2(s.legs(2)), [-10.0, -10.0, 50.0, 50.0]);
        assert_eq!(bj2(s.legs(4)), [70.0, 70.0, 10.0, 10.0]);
        // FJ stays 0 and BJ1 60 in every sidle step with the leg down.
        assert!(s.legs(2).iter().chain(&s.legs(4)).all(|l| l[0] == 0.0 && l[1] == 60.0));
    }

    #[test]
    fn a_step_advances_only_when_every_joint_is_within_five_degrees() {
        let r = roles();
        let mut c = QuadWalk::new(
            "trot",
            r,
            30,
            QuadGait::Trot {
                s: 30.0,
                r: 0.0,
                l: 0.0,
            },
        )
        .with_hold(0.0);
        let mut plant = FakePlant::new(30);
        plant.max_speed = 0.0;
        place(&mut plant, all_roles(&TABLE_3_19[0]));
        plant.tick(&mut c, 0.01);
        assert_eq!(c.step_index(), 1);
        // Step 1 with FL's BJ2 5.5° short: no advance.
        let mut rows = all_roles(&TABLE_3_19[1]);
        rows[3][2] -= 5.5;
        place(&mut plant, rows);
        plant.tick(&mut c, 0.01);
        assert_eq!(c.step_index(), 1);
        // The body's BJ1 5.5° off also holds it.
        let mut rows = all_roles(&TABLE_3_19[1]);
        rows[1][1] += 5.5;
        place(&mut plant, rows);
        plant.tick(&mut c, 0.01);
        assert_eq!(c.step_index(), 1);
        // 4.5° off: advance.
        let mut rows = all_roles(&TABLE_3_19[1]);
        rows[3][2] -= 4.5;
        place(&mut plant, rows);
        plant.tick(&mut c, 0.01);
        assert_eq!(c.step_index(), 2);
        // The hips are wrap-aware: FR at -30° + 2 turns + 3° counts as reached.
        let mut rows = all_roles(&TABLE_3_19[2]);
        rows[2][0] += 720.0 + 3.0;
        place(&mut plant, rows);
        let t = plant.tick(&mut c, 0.01).to_vec();
        assert_eq!(c.step_index(), 3);
        // ... and is commanded to the nearest turn of 0, not unwound.
        assert!((deg(t[r[2].fj]) - 720.0).abs() < 1e-9, "{}", deg(t[r[2].fj]));
    }

    #[test]
    fn the_next_step_is_ordered_a_hold_after_every_joint_is_within_five_degrees() {
        let r = roles();
        let trot = QuadGait::Trot {
            s: 30.0,
            r: 0.0,
            l: 0.0,
        };
        let c = QuadWalk::new("trot", r, 30, trot);
        assert_eq!(c.hold_s(), STEP_HOLD_S);
        let mut c = c.with_hold(0.03);
        let mut plant = FakePlant::new(30);
        plant.max_speed = 0.0;
        // Step 0 reached at the first tick; the next is ordered 0.03 s (three 10 ms ticks)
        // later, and meanwhile step 0's targets stay commanded.
        place(&mut plant, all_roles(&TABLE_3_19[0]));
        for k in 0..3 {
            let t = commanded(plant.tick(&mut c, 0.01));
            assert_eq!((c.step_index(), legs(&t)), (0, TABLE_3_19[0]), "tick {k}");
        }
        plant.tick(&mut c, 0.01);
        assert_eq!(c.step_index(), 1);
        // Done is latched, as the source's Order_done: a joint that leaves the tolerance
        // after the step was reached does not take the order back.
        place(&mut plant, all_roles(&TABLE_3_19[1]));
        plant.tick(&mut c, 0.01);
        let mut rows = all_roles(&TABLE_3_19[1]);
        rows[3][2] -= 8.0;
        place(&mut plant, rows);
        for _ in 0..2 {
            plant.tick(&mut c, 0.01);
        }
        assert_eq!(c.step_index(), 1);
        plant.tick(&mut c, 0.01);
        assert_eq!(c.step_index(), 2);
        // Never reached: never ordered.
        for _ in 0..50 {
            plant.tick(&mut c, 0.01);
        }
        assert_eq!(c.step_index(), 2);
        // A new gait clears what was reached: step 2 of another steering is re-reached and
        // held again.
        place(&mut plant, all_roles(&TABLE_3_19[2]));
        plant.tick(&mut c, 0.01);
        c.set_gait(QuadGait::Trot {
            s: 30.0,
            r: 0.0,
            l: -5.0,
        });
        let mut rows = all_roles(&TABLE_3_19[2]);
        rows[3][0] = -25.0; // FL: -s-l
        rows[5][0] = 25.0; // BL: s+l
        place(&mut plant, rows);
        for _ in 0..3 {
            plant.tick(&mut c, 0.01);
        }
        assert_eq!(c.step_index(), 2);
        plant.tick(&mut c, 0.01);
        assert_eq!(c.step_index(), 3);
        // Stand is not held: its one cycle counts on the tick the stance is reached.
        let mut s = QuadWalk::new("stand", r, 30, QuadGait::Stand).with_hold(0.5);
        place(&mut plant, all_roles(&TABLE_3_19[0]));
        plant.tick(&mut s, 0.01);
        assert_eq!(s.completed_cycles(), 1);
        // A non-finite hold is the default, a negative one none.
        assert_eq!(
            QuadWalk::new("t", r, 30, trot).with_hold(f64::NAN).hold_s(),
            STEP_HOLD_S
        );
        assert_eq!(QuadWalk::new("t", r, 30, trot).with_hold(-1.0).hold_s(), 0.0);
    }

    #[test]
    fn pass_over_turns_every_hip_monotonically_two_turns_then_stands() {
        let r = roles();
        let mut c = PassOver::new(r, 30, 2);
        let mut plant = FakePlant::new(30);
        plant.max_speed = 400f64.to_radians();
        // Start the right hips at +10° and the left at -10°: pose 0 (0°) is then a move,
        // in each leg's turning direction.
        for (k, role) in LEG_ROLES.iter().enumerate() {
            plant.q[r[role - 1].fj] = if k % 2 == 0 { 10f64 } else { -10.0 }.to_radians();
        }
        let mut positions: Vec<[f64; 4]> = Vec::new();
        let mut hips: Vec<[f64; 4]> = Vec::new();
        let mut poses: Vec<[f64; 4]> = Vec::new();
        for _ in 0..2000 {
            let t = plant.tick(&mut c, 0.01).to_vec();
            let h = LEG_ROLES.map(|role| deg(t[r[role - 1].fj]));
            if poses.last() != Some(&h) {
                poses.push(h);
            }
            hips.push(h);
            positions.push(LEG_ROLES.map(|role| plant.deg(r[role - 1].fj)));
            for role in LEG_ROLES {
                assert_eq!((deg(t[r[role - 1].bj1]), deg(t[r[role - 1].bj2])), (60.0, 30.0));
            }
        }
        assert!(c.done());
        assert_eq!(c.completed_cycles(), 2);
        // Monotonic: right legs (FR, BR) never increase, left legs (FL, BL) never decrease.
        for w in hips.windows(2).chain(positions.windows(2)) {
            assert!(w[1][0] <= w[0][0] && w[1][2] <= w[0][2], "{w:?}");
            assert!(w[1][1] >= w[0][1] && w[1][3] >= w[0][3], "{w:?}");
        }
        // Table 3.29 pose by pose (mod 360), two cycles, then standing at -720/+720 (≡ 0).
        let table_3_29 = [
            [0.0, 0.0, 0.0, 0.0],
            [-135.0, 135.0, -135.0, 135.0],
            [135.0, -135.0, 135.0, -135.0],
            [0.0, 0.0, 0.0, 0.0],
        ];
        // Poses 3 and the next cycle's 0 coincide, so the distinct targets are 0,1,2,3,1,2,3.
        let order = [0, 1, 2, 3, 1, 2, 3];
        assert_eq!(poses.len(), order.len(), "{poses:?}");
        for (p, k) in poses.iter().zip(order) {
            assert_eq!(p.map(wrap_deg), table_3_29[k].map(wrap_deg), "pose {k}");
        }
        assert_eq!(*poses.last().unwrap(), [-720.0, 720.0, -720.0, 720.0]);
        // The joints got there: the robot stands.
        for role in LEG_ROLES {
            let m = r[role - 1];
            assert!((plant.deg(m.fj).abs() - 720.0).abs() < 1e-6);
            assert!((plant.deg(m.bj1) - 60.0).abs() < 1e-6 && (plant.deg(m.bj2) - 30.0).abs() < 1e-6);
        }
        for m in &r[..2] {
            assert_eq!((plant.deg(m.bj1).round(), plant.deg(m.bj2).round()), (-90.0, 90.0));
        }
    }

    #[test]
    fn quadrant_decisions_of_section_6_6() {
        let trot = |s, r, l| QuadGait::Trot { s, r, l };
        let sidle = |s, f, b| QuadGait::Sidle { s, f, b };
        // One goal per quadrant, with the goal yaw to the right (-8°) and to the left (+8°).
        assert_eq!(decide(1.0, 1.0, -8.0), sidle(60.0, -15.0, 15.0));
        assert_eq!(decide(1.0, 1.0, 8.0), trot(30.0, 0.0, -5.0));
        assert_eq!(decide(1.0, -1.0, -8.0), trot(-30.0, -5.0, 0.0));
        assert_eq!(decide(1.0, -1.0, 8.0), sidle(60.0, 15.0, -15.0));
        assert_eq!(decide(-1.0, 1.0, -8.0), trot(30.0, -5.0, 0.0));
        assert_eq!(decide(-1.0, 1.0, 8.0), sidle(-60.0, 15.0, -15.0));
        assert_eq!(decide(-1.0, -1.0, -8.0), sidle(-60.0, -15.0, 15.0));
        assert_eq!(decide(-1.0, -1.0, 8.0), trot(-30.0, 0.0, -5.0));
        // The ladders, in degrees in every quadrant (the code's first quadrant compared
        // radians and stayed at (0, -5)).
        assert_eq!(decide(1.0, 1.0, 12.0), trot(30.0, 5.0, -5.0));
        assert_eq!(decide(1.0, 1.0, 17.0), trot(30.0, 10.0, -10.0));
        assert_eq!(decide(1.0, 1.0, 25.0), trot(30.0, 15.0, -15.0));
        assert_eq!(decide(-1.0, -1.0, 12.0), trot(-30.0, 5.0, -5.0));
        assert_eq!(decide(-1.0, -1.0, 25.0), trot(-30.0, 15.0, -15.0));
        assert_eq!(decide(1.0, -1.0, -12.0), trot(-30.0, -5.0, 5.0));
        assert_eq!(decide(1.0, -1.0, -17.0), trot(-30.0, -10.0, 10.0));
        assert_eq!(decide(-1.0, 1.0, -25.0), trot(30.0, -15.0, 15.0));
        // Aligned: the larger component picks the gait, steering reset to 0.
        assert_eq!(decide(0.5, 0.2, 3.0), sidle(60.0, 0.0, 0.0));
        assert_eq!(decide(-0.5, 0.2, -3.0), sidle(-60.0, 0.0, 0.0));
        assert_eq!(decide(0.1, -0.2, 0.0), trot(-30.0, 0.0, 0.0));
        assert_eq!(decide(0.2, 0.2, 5.0), trot(30.0, 0.0, 0.0));
    }

    #[test]
    fn goto_decides_once_per_cycle_and_stands_within_a_tenth_of_a_metre() {
        let r = roles();
        // Goal 1 m ahead and 0.3 m right of a robot facing +x, same yaw: trot forward.
        let goal = Goal {
            x: 1.0,
            y: -0.3,
            yaw: 0.0,
        };
        let mut c = QuadGoto::new(r, 30, goal, 0.1);
        let mut plant = FakePlant::new(30);
        plant.tick(&mut c, 0.01);
        assert_eq!(
            c.gait(),
            QuadGait::Trot {
                s: 30.0,
                r: 0.0,
                l: 0.0
            }
        );
        assert_eq!(c.decisions(), 1);
        // Mid-cycle the goal moves to the left side and the heading changes: the gait stays.
        for _ in 0..20 {
            plant.tick(&mut c, 0.01);
        }
        plant.set_base(0.0, 0.0, -10.0);
        while c.gait_cycles() == 0 {
            assert_eq!(
                c.gait(),
                QuadGait::Trot {
                    s: 30.0,
                    r: 0.0,
                    l: 0.0
                }
            );
            plant.tick(&mut c, 0.01);
        }
        // At the cycle's end it decides again: goal yaw 10° to the left, goal ahead and (by
        // 6.7°) right in the robot frame: sidle right with (f, b) = (15, -15).
        assert_eq!(c.decisions(), 2);
        assert_eq!(
            c.gait(),
            QuadGait::Sidle {
                s: -60.0,
                f: 15.0,
                b: -15.0
            }
        );
        // Within 0.1 m on any tick: stand, then report the goal reached.
        plant.set_base(0.95, -0.3, 0.0);
        plant.tick(&mut c, 0.01);
        assert_eq!(c.phase(), QuadGotoPhase::Stopping);
        for _ in 0..200 {
            plant.tick(&mut c, 0.01);
        }
        assert_eq!(c.completed_cycles(), 1);
        assert_eq!(legs(&commanded(&plant.last)), [STANCE_DEG; 4]);
    }

    #[test]
    fn the_turn_on_the_spot_is_the_trot_with_no_swing_and_opposite_steering() {
        // Full rate above 20° of error, in proportion below, at least 3°; + turns left.
        assert_eq!(
            turn_on_the_spot(72.0),
            QuadGait::Trot {
                s: 0.0,
                r: 15.0,
                l: -15.0
            }
        );
        assert_eq!(
            turn_on_the_spot(-25.0),
            QuadGait::Trot {
                s: 0.0,
                r: -15.0,
                l: 15.0
            }
        );
        assert_eq!(
            turn_on_the_spot(10.0),
            QuadGait::Trot {
                s: 0.0,
                r: 7.5,
                l: -7.5
            }
        );
        assert_eq!(
            turn_on_the_spot(-1.0),
            QuadGait::Trot {
                s: 0.0,
                r: -3.0,
                l: 3.0
            }
        );
        // Step 2: the right legs stroke back (FR −r, BR +r on a +forward hip) as the left
        // legs stroke forward; step 4 the opposite (Table 3.21 with s = 0).
        let legs = turn_on_the_spot(30.0).legs(2);
        assert_eq!(
            [legs[0][0], legs[1][0], legs[2][0], legs[3][0]],
            [-15.0, 15.0, 15.0, -15.0]
        );
        let legs = turn_on_the_spot(30.0).legs(4);
        assert_eq!(
            [legs[0][0], legs[1][0], legs[2][0], legs[3][0]],
            [15.0, -15.0, -15.0, 15.0]
        );
    }

    #[test]
    fn an_aligning_goto_turns_on_the_spot_at_the_goal_until_it_faces_the_goal_yaw() {
        let r = roles();
        let goal = Goal {
            x: 0.05,
            y: 0.0,
            yaw: 60f64.to_radians(),
        };
        // Without alignment (the source's): within 0.1 m it stands, 60° off.
        let mut plain = QuadGoto::new(r, 30, goal, 0.1);
        let mut plant = FakePlant::new(30);
        plant.max_speed = 400f64.to_radians();
        for _ in 0..300 {
            plant.tick(&mut plain, 0.01);
        }
        assert_eq!(plain.completed_cycles(), 1);
        assert_eq!(plain.turn_cycles(), 0);
        // Aligning within 3°: it turns left at the full rate; the plant turns the base by
        // 25° × r / 15 as each turning cycle enters its last step (a proportional turn).
        let mut c = QuadGoto::new(r, 30, goal, 0.1).aligned_within(3.0);
        let mut plant = FakePlant::new(30);
        plant.max_speed = 400f64.to_radians();
        let mut turns = Vec::new();
        for _ in 0..20_000 {
            let step = c.walk.step_index();
            plant.tick(&mut c, 0.01);
            if c.phase() == QuadGotoPhase::Aligning && step == 3 && c.walk.step_index() == 4 {
                let gait = c.gait();
                let QuadGait::Trot { s, r, l } = gait else {
                    panic!("turning with {gait:?}")
                };
                assert_eq!((s, l), (0.0, -r));
                turns.push(r);
                let (x, y, yaw) = plant.base_xy_yaw();
                plant.set_base(x, y, yaw + 25.0 * r / TURN_STEER_DEG);
            }
            if c.completed_cycles() == 1 {
                break;
            }
        }
        assert_eq!(c.phase(), QuadGotoPhase::Done);
        let rounded: Vec<f64> = turns.iter().map(|r| (r * 1e6).round() / 1e6).collect();
        assert_eq!(rounded, [15.0, 15.0, 7.5], "{turns:?}");
        assert_eq!(c.turn_cycles(), 3);
        let (_, _, yaw) = plant.base_xy_yaw();
        assert!((yaw - 60.0).abs() <= 3.0, "{yaw} after {turns:?}");
        assert_eq!(legs(&commanded(&plant.last)), [STANCE_DEG; 4]);
        // Aligned at the goal it stands; if going to the stance leaves it 10° off, standing
        // it turns again (to the right, k = 7.5).
        let mut c = QuadGoto::new(r, 30, goal, 0.1).aligned_within(3.0);
        let mut plant = FakePlant::new(30);
        plant.max_speed = 400f64.to_radians();
        plant.set_base(0.0, 0.0, 60.0);
        plant.tick(&mut c, 0.01);
        assert_eq!(c.phase(), QuadGotoPhase::Stopping);
        plant.set_base(0.0, 0.0, 70.0);
        for _ in 0..1_000 {
            if c.phase() != QuadGotoPhase::Stopping {
                break;
            }
            plant.tick(&mut c, 0.01);
        }
        assert_eq!(c.phase(), QuadGotoPhase::Aligning);
        let rounded = |g: QuadGait| match g {
            QuadGait::Trot { s, r, l } => (
                (s * 1e6).round() / 1e6,
                (r * 1e6).round() / 1e6,
                (l * 1e6).round() / 1e6,
            ),
            other => panic!("{other:?}"),
        };
        assert_eq!(rounded(c.gait()), (0.0, -7.5, 7.5));
        // Carried more than 1.5 stop distances off the goal while turning, it walks back.
        let mut c = QuadGoto::new(r, 30, goal, 0.1).aligned_within(3.0);
        let mut plant = FakePlant::new(30);
        plant.tick(&mut c, 0.01);
        assert_eq!(c.phase(), QuadGotoPhase::Aligning);
        plant.set_base(-0.2, 0.0, 0.0);
        plant.tick(&mut c, 0.01);
        assert_eq!(c.phase(), QuadGotoPhase::Walking);
    }

    #[test]
    fn goto_walks_to_the_goal_on_a_stepping_plant() {
        // The plant moves the base by the Table 3.27 step (0.106 trot, 0.110 sidle) at the
        // end of each cycle, in the direction of the gait walked.
        let r = roles();
        let goal = Goal {
            x: -0.6,
            y: 0.8,
            yaw: 0.0,
        };
        let mut c = QuadGoto::new(r, 30, goal, 0.1);
        let mut plant = FakePlant::new(30);
        plant.max_speed = 400f64.to_radians();
        let mut cycles = 0;
        for _ in 0..20_000 {
            let gait = c.gait();
            plant.tick(&mut c, 0.01);
            if c.gait_cycles() > cycles {
                cycles = c.gait_cycles();
                let (x, y, yaw) = plant.base_xy_yaw();
                let (fwd, left) = match gait {
                    QuadGait::Trot { s, .. } => (0.106 * s.signum(), 0.0),
                    QuadGait::Sidle { s, .. } => (0.0, 0.110 * s.signum()),
                    QuadGait::Stand => (0.0, 0.0),
                };
                let a = yaw.to_radians();
                plant.set_base(
                    x + fwd * a.cos() - left * a.sin(),
                    y + fwd * a.sin() + left * a.cos(),
                    yaw,
                );
            }
            if c.completed_cycles() == 1 {
                break;
            }
        }
        assert_eq!(c.completed_cycles(), 1);
        let (d, _) = goal.range_bearing(&plant.base);
        assert!(d <= 0.1, "{d}");
        assert!(cycles >= 8, "{cycles} cycles for 1 m");
    }
}
