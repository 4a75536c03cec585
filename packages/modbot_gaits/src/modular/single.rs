//! A lone `wheelfoot` module (seed 000 §3.1, §5.1; Lua `move_single`, `correct_ornt`,
//! `decide_direction`, `decide_velocity`): the four inchworm gaits, the heading controller
//! that turns the module about its foot tip with the wheel, a pivot turn, and the position
//! controller of Table 3.15.
//!
//! **Heading controller: text vs code.** The thesis text gives wheel speed bands
//! (300°/s above 5° of error, 90°/s between 0.5° and 5°, stop below 0.5°); the Lua adds a
//! fixed position increment per V-Rep step (18° above 10°, 1.8·err below), which has no rate
//! meaning without V-Rep's step, and presses the foot tip down with (BJ1, BJ2) = (15, 0)
//! while |err| > 10°. We take the text's speed bands (our wheel is velocity-driven) and
//! the code's foot press, the code's 10° gate on the gait and its 1° "reached" (spec §9.5).

use std::f64::consts::PI;

use super::{Goal, ModuleJoints, wrap_deg, wrap_rad, yaw_of};
use crate::controller::{Controller, JointTarget, Observation};

/// Both foot joints must be within this of their target for a pose to count as reached, deg
/// (`move_single`).
pub const POSE_TOLERANCE_DEG: f64 = 1.0;
/// The gait advances only while the heading error is below this, deg (`move_single`).
pub const GAIT_HEADING_LIMIT_DEG: f64 = 10.0;
/// A heading counts as reached within this, deg (`correct_ornt`'s caller).
pub const HEADING_REACHED_DEG: f64 = 1.0;
/// The foot pose (BJ1, BJ2) that presses the tip down while turning by more than
/// [`GAIT_HEADING_LIMIT_DEG`], deg (`correct_ornt`).
pub const PRESS_POSE_DEG: (f64, f64) = (15.0, 0.0);
/// The rest pose (BJ1, BJ2), deg.
pub const REST_POSE_DEG: (f64, f64) = (0.0, 0.0);

/// The four inchworm gaits (§3.1, `move_single`); poses are (BJ1, BJ2) in deg.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InchwormGait {
    /// Forward high velocity: (−41, 120) → (0, 0).
    FwdHigh,
    /// Forward low velocity: (−33, 61) → (0, 0).
    FwdLow,
    /// Backward high velocity: (−13, 72) → (−36, 90) → (−30, 30) → (0, 0). Pose 3 is the
    /// code's (−30, 30), not the text's (−45, 45) (spec §9.5).
    BwdHigh,
    /// Backward low velocity: (−1, 34) → (−27, 52) → (−15, 15) → (0, 0).
    BwdLow,
}

impl InchwormGait {
    /// The poses, (BJ1, BJ2) in deg, in order; the last is the rest pose.
    pub fn poses_deg(self) -> &'static [(f64, f64)] {
        match self {
            InchwormGait::FwdHigh => &[(-41.0, 120.0), (0.0, 0.0)],
            InchwormGait::FwdLow => &[(-33.0, 61.0), (0.0, 0.0)],
            InchwormGait::BwdHigh => &[(-13.0, 72.0), (-36.0, 90.0), (-30.0, 30.0), (0.0, 0.0)],
            InchwormGait::BwdLow => &[(-1.0, 34.0), (-27.0, 52.0), (-15.0, 15.0), (0.0, 0.0)],
        }
    }

    /// The registry's name.
    pub fn name(self) -> &'static str {
        match self {
            InchwormGait::FwdHigh => "inchworm_fwd_high",
            InchwormGait::FwdLow => "inchworm_fwd_low",
            InchwormGait::BwdHigh => "inchworm_bwd_high",
            InchwormGait::BwdLow => "inchworm_bwd_low",
        }
    }

    /// The gait for a direction and speed.
    pub fn of(direction: Direction, speed: Speed) -> InchwormGait {
        match (direction, speed) {
            (Direction::Forward, Speed::High) => InchwormGait::FwdHigh,
            (Direction::Forward, Speed::Low) => InchwormGait::FwdLow,
            (Direction::Backward, Speed::High) => InchwormGait::BwdHigh,
            (Direction::Backward, Speed::Low) => InchwormGait::BwdLow,
        }
    }
}

/// The heading controller's wheel speeds (thesis text, §3.1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeadingBands {
    /// Wheel speed above [`HeadingBands::FAST_ABOVE_DEG`] of error, deg/s (text: 300).
    pub fast_deg_s: f64,
    /// Wheel speed between [`HeadingBands::SLOW_ABOVE_DEG`] and the fast band, deg/s (text: 90).
    pub slow_deg_s: f64,
}

impl Default for HeadingBands {
    fn default() -> HeadingBands {
        HeadingBands {
            fast_deg_s: 300.0,
            slow_deg_s: 90.0,
        }
    }
}

impl HeadingBands {
    /// Errors above this turn the wheel at the fast speed, deg.
    pub const FAST_ABOVE_DEG: f64 = 5.0;
    /// Errors at or below this stop the wheel, deg.
    pub const SLOW_ABOVE_DEG: f64 = 0.5;

    /// The FJ speed (deg/s) for a heading error `err_deg` = wrap(required − current). A
    /// positive FJ speed turns the module clockwise (yaw decreases), so a positive error
    /// (turn left) gets a negative speed, as the Lua's Δ = −18°·sign(err).
    pub fn wheel_speed_deg_s(&self, err_deg: f64) -> f64 {
        let a = err_deg.abs();
        let speed = if a > Self::FAST_ABOVE_DEG {
            self.fast_deg_s
        } else if a > Self::SLOW_ABOVE_DEG {
            self.slow_deg_s
        } else {
            0.0
        };
        -speed * err_deg.signum()
    }
}

/// Writes a lone module's targets: the wheel speed (deg/s) and the foot pose (deg).
fn write(m: &ModuleJoints, wheel_deg_s: f64, foot_deg: (f64, f64), out: &mut [JointTarget]) {
    out[m.fj] = JointTarget::Velocity(wheel_deg_s.to_radians());
    out[m.bj1] = JointTarget::Position(foot_deg.0.to_radians());
    out[m.bj2] = JointTarget::Position(foot_deg.1.to_radians());
    m.write_camera(out);
}

/// True when both foot joints are within [`POSE_TOLERANCE_DEG`] of `foot_deg`.
fn foot_at(m: &ModuleJoints, q: &[f64], foot_deg: (f64, f64)) -> bool {
    (q[m.bj1].to_degrees() - foot_deg.0).abs() < POSE_TOLERANCE_DEG
        && (q[m.bj2].to_degrees() - foot_deg.1).abs() < POSE_TOLERANCE_DEG
}

/// The heading error wrap(required − current), deg.
fn heading_error_deg(required: f64, obs: &Observation<'_>) -> f64 {
    wrap_deg((required - yaw_of(&obs.base)).to_degrees())
}

/// An inchworm gait with heading hold. Each pose is commanded once the previous one is
/// reached (both foot joints within 1°) while the heading error is under 10°; above 10°
/// the foot presses down (15, 0) and the wheel turns the module back. A cycle completes
/// when the last pose is reached.
///
/// After a press the interrupted pose is commanded again (the Lua goes on to the next
/// one, skipping it), so every cycle passes through every pose.
#[derive(Debug, Clone)]
pub struct Inchworm {
    name: String,
    joints: ModuleJoints,
    count: usize,
    gait: InchwormGait,
    bands: HeadingBands,
    /// Heading to hold relative to the start heading, rad (used on the first tick).
    offset: f64,
    /// Heading to hold, rad (world), once known.
    heading: Option<f64>,
    current: usize,
    pressing: bool,
    cycles: usize,
}

impl Inchworm {
    /// An inchworm gait on a robot of `joint_count` joints, holding the start heading plus
    /// `heading_offset_deg`.
    pub fn new(
        joints: ModuleJoints,
        joint_count: usize,
        gait: InchwormGait,
        heading_offset_deg: f64,
        bands: HeadingBands,
    ) -> Inchworm {
        Inchworm {
            name: gait.name().to_string(),
            joints,
            count: joint_count,
            gait,
            bands,
            offset: heading_offset_deg.to_radians(),
            heading: None,
            current: 0,
            pressing: false,
            cycles: 0,
        }
    }

    /// Switches to another gait, starting at its first pose.
    pub fn set_gait(&mut self, gait: InchwormGait) {
        self.gait = gait;
        self.current = 0;
    }

    /// Holds this heading (rad, world) from now on.
    pub fn set_heading(&mut self, yaw: f64) {
        self.heading = Some(yaw);
    }

    /// The gait.
    pub fn gait(&self) -> InchwormGait {
        self.gait
    }

    /// Index of the pose being commanded.
    pub fn current_pose(&self) -> usize {
        self.current
    }

    /// True while the foot presses down for a large heading correction.
    pub fn pressing(&self) -> bool {
        self.pressing
    }

    /// The heading held, rad (world): fixed on the first tick.
    fn heading(&mut self, obs: &Observation<'_>) -> f64 {
        let offset = self.offset;
        *self.heading.get_or_insert_with(|| yaw_of(&obs.base) + offset)
    }

    /// Moves on to the next pose when the current one is reached; true when that completes
    /// a cycle.
    pub fn advance(&mut self, obs: &Observation<'_>) -> bool {
        let err = heading_error_deg(self.heading(obs), obs);
        if err.abs() > GAIT_HEADING_LIMIT_DEG {
            self.pressing = true;
        } else if err.abs() < GAIT_HEADING_LIMIT_DEG && foot_at(&self.joints, obs.positions, self.foot_target_deg()) {
            if self.pressing {
                self.pressing = false;
            } else {
                let n = self.gait.poses_deg().len();
                self.current = (self.current + 1) % n;
                if self.current == 0 {
                    self.cycles += 1;
                    return true;
                }
            }
        }
        false
    }

    /// Writes the targets: the heading bands' wheel speed and the foot target.
    pub fn write(&mut self, obs: &Observation<'_>, out: &mut [JointTarget]) {
        let err = heading_error_deg(self.heading(obs), obs);
        write(
            &self.joints,
            self.bands.wheel_speed_deg_s(err),
            self.foot_target_deg(),
            out,
        );
    }

    /// The foot target being commanded, (BJ1, BJ2) deg.
    pub fn foot_target_deg(&self) -> (f64, f64) {
        if self.pressing {
            PRESS_POSE_DEG
        } else {
            self.gait.poses_deg()[self.current]
        }
    }
}

impl Controller for Inchworm {
    fn name(&self) -> &str {
        &self.name
    }

    fn joint_count(&self) -> usize {
        self.count
    }

    fn step(&mut self, _dt: f64, obs: &Observation<'_>, out: &mut [JointTarget]) {
        self.advance(obs);
        self.write(obs, out);
    }

    fn period(&self) -> Option<f64> {
        None
    }

    fn completed_cycles(&self) -> usize {
        self.cycles
    }
}

/// Turns a lone module in place about its foot tip to a heading, with the heading bands and
/// the foot press (held from the first |err| > 10° until the heading is reached, as the
/// Lua keeps (15, 0) until it sets the rest pose). One cycle when within 1°. A pivot by a
/// relative angle ([`Pivot::new`], the `pivot` gait) then turns by the same angle again,
/// so each cycle is one turn (Table 3.14's t180 for 180°); a pivot to a heading
/// ([`Pivot::to_heading`]) stops there: the wheel stops and the foot goes to rest.
#[derive(Debug, Clone)]
pub struct Pivot {
    joints: ModuleJoints,
    count: usize,
    bands: HeadingBands,
    offset: f64,
    heading: Option<f64>,
    pressing: bool,
    done: bool,
    repeat: bool,
    turns: usize,
    /// (last raw yaw, unwrapped yaw), rad: a repeating pivot keeps turning one way.
    yaw: Option<(f64, f64)>,
}

impl Pivot {
    /// A pivot by `heading_deg` relative to the start heading.
    pub fn new(joints: ModuleJoints, joint_count: usize, heading_deg: f64, bands: HeadingBands) -> Pivot {
        Pivot {
            joints,
            count: joint_count,
            bands,
            offset: heading_deg.to_radians(),
            heading: None,
            pressing: false,
            done: false,
            repeat: true,
            turns: 0,
            yaw: None,
        }
    }

    /// A pivot to an absolute heading (rad, world), once.
    pub fn to_heading(joints: ModuleJoints, joint_count: usize, yaw: f64, bands: HeadingBands) -> Pivot {
        Pivot {
            heading: Some(yaw),
            repeat: false,
            ..Pivot::new(joints, joint_count, 0.0, bands)
        }
    }

    /// True once the heading is reached.
    pub fn done(&self) -> bool {
        self.done
    }
}

impl Controller for Pivot {
    fn name(&self) -> &str {
        "pivot"
    }

    fn joint_count(&self) -> usize {
        self.count
    }

    fn step(&mut self, _dt: f64, obs: &Observation<'_>, out: &mut [JointTarget]) {
        let offset = self.offset;
        let raw = yaw_of(&obs.base);
        let (last, unwrapped) = self.yaw.unwrap_or((raw, raw));
        let now = unwrapped + wrap_rad(raw - last);
        self.yaw = Some((raw, now));
        let heading = *self.heading.get_or_insert(now + offset);
        // A repeating pivot turns one way through whole turns (unwrapped error); a pivot to
        // a heading takes the short way.
        let error = |h: f64| {
            if self.repeat {
                (h - now).to_degrees()
            } else {
                heading_error_deg(h, obs)
            }
        };
        let mut err = error(heading);
        if !self.done {
            if err.abs() < HEADING_REACHED_DEG {
                self.turns += 1;
                if self.repeat {
                    // The next turn, by the same angle from the heading just reached.
                    self.heading = Some(heading + offset);
                    err = error(heading + offset);
                    self.pressing = err.abs() > GAIT_HEADING_LIMIT_DEG;
                } else {
                    self.done = true;
                }
            } else if err.abs() > GAIT_HEADING_LIMIT_DEG {
                self.pressing = true;
            }
        }
        let (wheel, foot) = if self.done {
            (0.0, REST_POSE_DEG)
        } else if self.pressing {
            (self.bands.wheel_speed_deg_s(err), PRESS_POSE_DEG)
        } else {
            (self.bands.wheel_speed_deg_s(err), REST_POSE_DEG)
        };
        write(&self.joints, wheel, foot, out);
    }

    fn period(&self) -> Option<f64> {
        None
    }

    fn completed_cycles(&self) -> usize {
        self.turns
    }
}

/// Forward (the foot pushes, toward +x) or backward.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Forward gaits.
    Forward,
    /// Backward gaits.
    Backward,
}

/// High- or low-velocity gait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speed {
    /// High velocity.
    High,
    /// Low velocity.
    Low,
}

/// One gait's step per cycle and cycle time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepTime {
    /// Step (displacement of the reference point per cycle), m.
    pub step_m: f64,
    /// Cycle time, s.
    pub cycle_s: f64,
}

/// The friction-dependent tables the position controller plans with (Tables 3.12–3.14).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepTable {
    /// Forward high velocity.
    pub fwd_high: StepTime,
    /// Forward low velocity.
    pub fwd_low: StepTime,
    /// Backward high velocity.
    pub bwd_high: StepTime,
    /// Backward low velocity.
    pub bwd_low: StepTime,
    /// Time of a 180° pivot, s.
    pub t180_s: f64,
}

impl Default for StepTable {
    /// The source's values at μ = 1.0 (to be replaced by values measured in our simulator).
    fn default() -> StepTable {
        let st = |step_m, cycle_s| StepTime { step_m, cycle_s };
        StepTable {
            fwd_high: st(0.0635, 0.95),
            fwd_low: st(0.0162, 0.65),
            bwd_high: st(0.0233, 1.05),
            bwd_low: st(0.0123, 0.80),
            t180_s: 4.20,
        }
    }
}

impl StepTable {
    /// The (high, low) gaits of a direction.
    pub fn of(&self, d: Direction) -> (StepTime, StepTime) {
        match d {
            Direction::Forward => (self.fwd_high, self.fwd_low),
            Direction::Backward => (self.bwd_high, self.bwd_low),
        }
    }

    /// Time to walk `distance` (m) in direction `d`: whole high-velocity cycles, then whole
    /// low-velocity cycles for the rest. The Lua floors the remaining distance before
    /// dividing, which makes its low-velocity term always 0; this is the intended form.
    pub fn walk_time(&self, d: Direction, distance: f64) -> f64 {
        let (high, low) = self.of(d);
        let n_high = (distance / high.step_m).floor();
        let n_low = ((distance - n_high * high.step_m) / low.step_m).floor();
        n_high * high.cycle_s + n_low * low.cycle_s
    }

    /// Time to turn by `angle` rad at the 180° pivot rate.
    pub fn turn_time(&self, angle: f64) -> f64 {
        wrap_deg(angle.to_degrees()).abs() * self.t180_s / 180.0
    }

    /// Estimated time to reach a goal `distance` away at `bearing` from a module heading
    /// `yaw`, ending at heading `yaw_des` (all rad), walking in direction `d`: turn to the
    /// bearing (t1), walk (t2), turn to the final heading (t3) — `decide_direction`.
    pub fn estimated_time(&self, d: Direction, yaw: f64, bearing: f64, yaw_des: f64, distance: f64) -> f64 {
        let flip = match d {
            Direction::Forward => 0.0,
            Direction::Backward => PI,
        };
        self.turn_time(bearing - yaw + flip) + self.walk_time(d, distance) + self.turn_time(yaw_des - bearing + flip)
    }

    /// The direction of least estimated time (forward on a tie) unless `forced`, and the
    /// heading the module must hold: the bearing, or the bearing + 180° walking backward.
    pub fn decide_direction(
        &self,
        yaw: f64,
        bearing: f64,
        yaw_des: f64,
        distance: f64,
        forced: Option<Direction>,
    ) -> (Direction, f64) {
        let d = forced.unwrap_or_else(|| {
            let fwd = self.estimated_time(Direction::Forward, yaw, bearing, yaw_des, distance);
            let bwd = self.estimated_time(Direction::Backward, yaw, bearing, yaw_des, distance);
            if bwd < fwd {
                Direction::Backward
            } else {
                Direction::Forward
            }
        });
        let heading = match d {
            Direction::Forward => bearing,
            Direction::Backward => bearing + PI,
        };
        (d, heading)
    }

    /// High velocity at or beyond the high gait's step, low at or beyond the low gait's,
    /// else `None`: the position is reached (`decide_velocity`).
    pub fn decide_velocity(&self, d: Direction, distance: f64) -> Option<Speed> {
        let (high, low) = self.of(d);
        if distance >= high.step_m {
            Some(Speed::High)
        } else if distance >= low.step_m {
            Some(Speed::Low)
        } else {
            None
        }
    }
}

/// Phases of [`SingleGoto`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GotoPhase {
    /// Walking with the inchworm gaits, deciding direction and speed once per cycle.
    Approach,
    /// Position reached; turning to the goal heading.
    Turn,
    /// Heading reached; the foot goes to rest.
    Settle,
    /// Done.
    Done,
}

/// The single-module position controller (Table 3.15): at the start and whenever a gait
/// cycle ends (the foot at rest) it measures the goal's distance and bearing, picks the
/// direction of least estimated time and the gait by distance band, and walks holding the
/// bearing (or its opposite backward). When the distance is below the low gait's step it
/// turns to the goal heading (within 1°) and rests the foot. One cycle = the goal reached.
#[derive(Debug, Clone)]
pub struct SingleGoto {
    joints: ModuleJoints,
    goal: Goal,
    table: StepTable,
    forced: Option<Direction>,
    bands: HeadingBands,
    walker: Inchworm,
    phase: GotoPhase,
    started: bool,
    decision: Option<(Direction, Speed)>,
    pressing: bool,
}

impl SingleGoto {
    /// A goto to `goal` (world frame).
    pub fn new(
        joints: ModuleJoints,
        joint_count: usize,
        goal: Goal,
        table: StepTable,
        forced: Option<Direction>,
        bands: HeadingBands,
    ) -> SingleGoto {
        SingleGoto {
            joints,
            goal,
            table,
            forced,
            bands,
            walker: Inchworm::new(joints, joint_count, InchwormGait::FwdHigh, 0.0, bands),
            phase: GotoPhase::Approach,
            started: false,
            decision: None,
            pressing: false,
        }
    }

    /// The phase.
    pub fn phase(&self) -> GotoPhase {
        self.phase
    }

    /// Moves the goal (a goal seen relative to another module that moves); the next decision
    /// uses it.
    pub fn set_goal(&mut self, goal: Goal) {
        self.goal = goal;
    }

    /// The last direction and speed decided (None before the first, or once reached).
    pub fn decision(&self) -> Option<(Direction, Speed)> {
        self.decision
    }

    /// The inchworm gait walker.
    pub fn walker(&self) -> &Inchworm {
        &self.walker
    }

    /// Inchworm cycles walked.
    pub fn gait_cycles(&self) -> usize {
        self.walker.completed_cycles()
    }

    fn decide(&mut self, obs: &Observation<'_>) {
        let (distance, bearing) = self.goal.range_bearing(&obs.base);
        let yaw = yaw_of(&obs.base);
        let (d, heading) = self
            .table
            .decide_direction(yaw, bearing, self.goal.yaw, distance, self.forced);
        match self.table.decide_velocity(d, distance) {
            Some(v) => {
                self.decision = Some((d, v));
                self.walker.set_gait(InchwormGait::of(d, v));
                self.walker.set_heading(heading);
            }
            None => {
                self.decision = None;
                self.phase = GotoPhase::Turn;
            }
        }
    }
}

impl Controller for SingleGoto {
    fn name(&self) -> &str {
        "goto"
    }

    fn joint_count(&self) -> usize {
        self.walker.joint_count()
    }

    fn step(&mut self, _dt: f64, obs: &Observation<'_>, out: &mut [JointTarget]) {
        if !self.started {
            self.started = true;
            self.decide(obs);
        }
        if self.phase == GotoPhase::Approach {
            // Decide again as soon as a cycle ends (the foot at rest), before the next
            // cycle's first pose is commanded.
            if self.walker.advance(obs) {
                self.decide(obs);
            }
            if self.phase == GotoPhase::Approach {
                self.walker.write(obs, out);
                return;
            }
        }
        let err = heading_error_deg(self.goal.yaw, obs);
        if self.phase == GotoPhase::Turn {
            if err.abs() < HEADING_REACHED_DEG {
                self.phase = GotoPhase::Settle;
            } else if err.abs() > GAIT_HEADING_LIMIT_DEG {
                self.pressing = true;
            }
        }
        if self.phase == GotoPhase::Settle && foot_at(&self.joints, obs.positions, REST_POSE_DEG) {
            self.phase = GotoPhase::Done;
        }
        let (wheel, foot) = match self.phase {
            GotoPhase::Turn if self.pressing => (self.bands.wheel_speed_deg_s(err), PRESS_POSE_DEG),
            GotoPhase::Turn => (self.bands.wheel_speed_deg_s(err), REST_POSE_DEG),
            _ => (0.0, REST_POSE_DEG),
        };
        write(&self.joints, wheel, foot, out);
    }

    fn period(&self) -> Option<f64> {
        None
    }

    fn completed_cycles(&self) -> usize {
        usize::from(self.phase == GotoPhase::Done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modular::fake::{FakePlant, deg, wheelfoot_names};

    fn m1() -> ModuleJoints {
        ModuleJoints::find("m1", &wheelfoot_names()).unwrap()
    }

    /// The foot targets each time they change, over `ticks` ticks.
    fn foot_targets(c: &mut dyn Controller, plant: &mut FakePlant, ticks: usize) -> Vec<(f64, f64)> {
        let j = m1();
        let mut seen: Vec<(f64, f64)> = Vec::new();
        for _ in 0..ticks {
            let t = plant.tick(c, 0.01);
            let pose = (deg(t[j.bj1]).round(), deg(t[j.bj2]).round());
            if seen.last() != Some(&pose) {
                seen.push(pose);
            }
        }
        seen
    }

    #[test]
    fn the_four_inchworm_gaits_run_their_poses_in_order() {
        for (gait, poses) in [
            (InchwormGait::FwdHigh, vec![(-41.0, 120.0), (0.0, 0.0)]),
            (InchwormGait::FwdLow, vec![(-33.0, 61.0), (0.0, 0.0)]),
            (
                InchwormGait::BwdHigh,
                vec![(-13.0, 72.0), (-36.0, 90.0), (-30.0, 30.0), (0.0, 0.0)],
            ),
            (
                InchwormGait::BwdLow,
                vec![(-1.0, 34.0), (-27.0, 52.0), (-15.0, 15.0), (0.0, 0.0)],
            ),
        ] {
            let mut c = Inchworm::new(m1(), 5, gait, 0.0, HeadingBands::default());
            let mut plant = FakePlant::new(5);
            // 3 s at 200°/s is enough for a few cycles of every gait.
            let seen = foot_targets(&mut c, &mut plant, 300);
            let expected: Vec<_> = poses.iter().cycle().take(seen.len()).copied().collect();
            assert_eq!(seen, expected, "{gait:?}");
            assert!(c.completed_cycles() >= 2, "{gait:?}: {}", c.completed_cycles());
            // A cycle is counted when the last pose is reached: full passes through the poses.
            assert_eq!(c.completed_cycles(), (seen.len() - 1) / poses.len(), "{gait:?}");
        }
    }

    #[test]
    fn a_pose_advances_only_within_one_degree_on_both_foot_joints() {
        let j = m1();
        let mut c = Inchworm::new(j, 5, InchwormGait::FwdHigh, 0.0, HeadingBands::default());
        let mut plant = FakePlant::new(5);
        plant.max_speed = 0.0; // the test places the joints itself
        plant.tick(&mut c, 0.01);
        assert_eq!(c.current_pose(), 0);
        // BJ1 exact, BJ2 1.5° off: no advance.
        plant.q[j.bj1] = (-41f64).to_radians();
        plant.q[j.bj2] = 118.5f64.to_radians();
        for _ in 0..5 {
            plant.tick(&mut c, 0.01);
        }
        assert_eq!(c.current_pose(), 0);
        // BJ1 1.5° off, BJ2 exact: no advance either.
        plant.q[j.bj1] = (-39.5f64).to_radians();
        plant.q[j.bj2] = 120f64.to_radians();
        plant.tick(&mut c, 0.01);
        assert_eq!(c.current_pose(), 0);
        // Both within 0.5°: advance, and the rest pose is commanded at once.
        plant.q[j.bj1] = (-40.5f64).to_radians();
        plant.q[j.bj2] = 119.5f64.to_radians();
        let t = plant.tick(&mut c, 0.01).to_vec();
        assert_eq!(c.current_pose(), 1);
        assert_eq!((deg(t[j.bj1]), deg(t[j.bj2])), (0.0, 0.0));
        assert_eq!(c.completed_cycles(), 0);
        plant.q[j.bj1] = 0.0;
        plant.q[j.bj2] = 0.0;
        plant.tick(&mut c, 0.01);
        assert_eq!((c.current_pose(), c.completed_cycles()), (0, 1));
    }

    #[test]
    fn a_heading_error_of_ten_degrees_holds_the_gait_and_presses_the_foot() {
        let j = m1();
        let mut c = Inchworm::new(j, 5, InchwormGait::FwdLow, 0.0, HeadingBands::default());
        let mut plant = FakePlant::new(5);
        plant.tick(&mut c, 0.01); // the start heading (0) is held from now on
        plant.set_base(0.0, 0.0, -12.0); // turned 12° right: error +12°
        for _ in 0..100 {
            plant.tick(&mut c, 0.01);
        }
        assert!(c.pressing());
        assert_eq!((plant.deg(j.bj1).round(), plant.deg(j.bj2).round()), (15.0, 0.0));
        assert_eq!(c.current_pose(), 0, "no advance while the error is above 10°");
        // The wheel turns the module left (negative FJ speed) at the fast band.
        assert!((deg(plant.last[j.fj]) + 300.0).abs() < 1e-9);
        assert!(matches!(plant.last[j.fj], JointTarget::Velocity(_)));
        // 9°: the press is released once reached, the interrupted pose is commanded again.
        plant.set_base(0.0, 0.0, -9.0);
        plant.tick(&mut c, 0.01);
        assert!(!c.pressing());
        assert_eq!(c.foot_target_deg(), (-33.0, 61.0));
        for _ in 0..100 {
            plant.tick(&mut c, 0.01);
        }
        assert_eq!(c.current_pose(), 1, "the gait runs under 10°");
    }

    #[test]
    fn heading_bands_of_the_thesis_text() {
        let b = HeadingBands::default();
        assert_eq!(b.wheel_speed_deg_s(20.0), -300.0);
        assert_eq!(b.wheel_speed_deg_s(5.5), -300.0);
        assert_eq!(b.wheel_speed_deg_s(4.0), -90.0);
        assert_eq!(b.wheel_speed_deg_s(-4.0), 90.0);
        assert_eq!(b.wheel_speed_deg_s(-0.6), 90.0);
        assert_eq!(b.wheel_speed_deg_s(0.4), 0.0);
        assert_eq!(b.wheel_speed_deg_s(-0.4), 0.0);
        assert_eq!(b.wheel_speed_deg_s(-170.0), 300.0);
    }

    /// A lone module pivoting about its foot tip: the wheel (r = 0.025 m) 0.172 m ahead of
    /// the tip turns it at ω·r/L.
    fn pivot_plant(plant: &mut FakePlant, fj: usize, dt: f64) {
        let (x, y, yaw) = plant.base_xy_yaw();
        let rate = -plant.qd[fj].to_degrees() * 0.025 / 0.172;
        plant.set_base(x, y, yaw + rate * dt);
    }

    #[test]
    fn pivot_turns_by_its_angle_each_cycle() {
        let j = m1();
        let mut c = Pivot::new(j, 5, 180.0, HeadingBands::default());
        let mut plant = FakePlant::new(5);
        plant.set_base(0.3, -0.2, 30.0);
        let mut pressed = false;
        for _ in 0..3000 {
            plant.tick(&mut c, 0.01);
            pivot_plant(&mut plant, j.fj, 0.01);
            pressed |= (plant.deg(j.bj1) - 15.0).abs() < 1.0;
            if c.completed_cycles() == 1 {
                break;
            }
        }
        assert_eq!(c.completed_cycles(), 1);
        assert!(pressed, "the foot presses down for the large turn");
        let (_, _, yaw) = plant.base_xy_yaw();
        assert!(wrap_deg(yaw - 210.0).abs() < HEADING_REACHED_DEG, "{yaw}");
        // Then it turns on by another 180°: the next cycle.
        plant.tick(&mut c, 0.01);
        assert!(plant.last[j.fj].value() != 0.0, "{:?}", plant.last[j.fj]);
        // A pivot to a heading stops there: the wheel stops and the foot rests.
        let mut c = Pivot::to_heading(j, 5, 90f64.to_radians(), HeadingBands::default());
        let mut plant = FakePlant::new(5);
        for _ in 0..3000 {
            plant.tick(&mut c, 0.01);
            pivot_plant(&mut plant, j.fj, 0.01);
        }
        assert_eq!(c.completed_cycles(), 1);
        assert_eq!(plant.last[j.fj], JointTarget::Velocity(0.0));
        assert_eq!(deg(plant.last[j.bj1]), 0.0);
    }

    #[test]
    fn direction_by_least_time_and_gait_by_distance() {
        let t = StepTable::default();
        // The intended t2 counts the low-velocity cycles: 1 high + 2 low.
        let d = 0.0635 + 2.0 * 0.0162 + 0.001;
        assert!((t.walk_time(Direction::Forward, d) - (0.95 + 2.0 * 0.65)).abs() < 1e-12);
        // Goal 0.2 m straight ahead, same final heading: forward.
        assert_eq!(t.decide_direction(0.0, 0.0, 0.0, 0.2, None), (Direction::Forward, 0.0));
        // Goal 0.2 m behind, keep the heading: backward (9.2 s against 11.25 s), holding the
        // bearing + 180° = the current heading.
        let (dir, heading) = t.decide_direction(0.0, PI, 0.0, 0.2, None);
        assert_eq!(dir, Direction::Backward);
        assert!(wrap_deg(heading.to_degrees()).abs() < 1e-9);
        assert!((t.estimated_time(Direction::Backward, 0.0, PI, 0.0, 0.2) - 9.2).abs() < 1e-9);
        assert!((t.estimated_time(Direction::Forward, 0.0, PI, 0.0, 0.2) - 11.25).abs() < 1e-9);
        // 3 m behind: walking backward takes too long, turn and go forward.
        assert_eq!(t.decide_direction(0.0, PI, 0.0, 3.0, None).0, Direction::Forward);
        // Forced.
        assert_eq!(
            t.decide_direction(0.0, 0.0, 0.0, 0.2, Some(Direction::Backward)).0,
            Direction::Backward
        );
        // Distance bands.
        assert_eq!(t.decide_velocity(Direction::Forward, 0.0635), Some(Speed::High));
        assert_eq!(t.decide_velocity(Direction::Forward, 0.06), Some(Speed::Low));
        assert_eq!(t.decide_velocity(Direction::Forward, 0.0161), None);
        assert_eq!(t.decide_velocity(Direction::Backward, 0.02), Some(Speed::Low));
        assert_eq!(t.decide_velocity(Direction::Backward, 0.0234), Some(Speed::High));
        assert_eq!(t.decide_velocity(Direction::Backward, 0.012), None);
    }

    /// Runs a goto on a plant whose base moves by the table's step when a cycle's last pose
    /// (the stroke back to rest) is commanded, along its heading (backward for the backward
    /// gaits), and pivots by the wheel.
    fn run_goto(
        goal: Goal,
        start: (f64, f64, f64),
        forced: Option<Direction>,
    ) -> (SingleGoto, FakePlant, Vec<Direction>) {
        let j = m1();
        let table = StepTable::default();
        let mut c = SingleGoto::new(j, 5, goal, table, forced, HeadingBands::default());
        let mut plant = FakePlant::new(5);
        plant.set_base(start.0, start.1, start.2);
        let mut directions = Vec::new();
        let last = |c: &SingleGoto| c.walker().current_pose() + 1 == c.walker().gait().poses_deg().len();
        for _ in 0..60_000 {
            let was_last = last(&c);
            plant.tick(&mut c, 0.01);
            pivot_plant(&mut plant, j.fj, 0.01);
            if c.phase() == GotoPhase::Approach && last(&c) && !was_last {
                let (d, v) = c.decision().expect("walking with a decision");
                directions.push(d);
                let (high, low) = table.of(d);
                let step = match v {
                    Speed::High => high.step_m,
                    Speed::Low => low.step_m,
                };
                let sign = if d == Direction::Forward { 1.0 } else { -1.0 };
                let (x, y, yaw) = plant.base_xy_yaw();
                let r = yaw.to_radians();
                plant.set_base(x + sign * step * r.cos(), y + sign * step * r.sin(), yaw);
            }
            if c.completed_cycles() == 1 {
                break;
            }
        }
        (c, plant, directions)
    }

    #[test]
    fn goto_reaches_the_goal_then_turns_to_its_heading() {
        let goal = Goal {
            x: 0.5,
            y: 0.3,
            yaw: 90f64.to_radians(),
        };
        let (c, plant, dirs) = run_goto(goal, (0.0, 0.0, 0.0), None);
        assert_eq!(c.completed_cycles(), 1, "phase {:?}", c.phase());
        let (x, y, yaw) = plant.base_xy_yaw();
        let (d, _) = goal.range_bearing(&plant.base);
        assert!(d < 0.0162 + 0.02, "ended {d} m from the goal at ({x}, {y})");
        assert!(wrap_deg(yaw - 90.0).abs() < HEADING_REACHED_DEG, "{yaw}");
        assert!(dirs.iter().all(|d| *d == Direction::Forward));
        // The foot rests at the end.
        assert!(plant.deg(m1().bj1).abs() < 1.0 && plant.deg(m1().bj2).abs() < 1.0);
    }

    #[test]
    fn goto_backs_up_to_a_goal_just_behind() {
        let goal = Goal {
            x: -0.1,
            y: 0.0,
            yaw: 0.0,
        };
        let (c, plant, dirs) = run_goto(goal, (0.0, 0.0, 0.0), None);
        assert_eq!(c.completed_cycles(), 1);
        assert!(
            !dirs.is_empty() && dirs.iter().all(|d| *d == Direction::Backward),
            "{dirs:?}"
        );
        let (d, _) = goal.range_bearing(&plant.base);
        assert!(d < 0.0123 + 0.01, "{d}");
    }
}
