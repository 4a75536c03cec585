//! The wheeled (skid-steer) configuration (seed 000 §3.3, §4.2; Lua `conf_init`,
//! `move_whld`, `correct_ornt_whld`, `stop`): Role#1 and Role#2 are the body, Role#3–#6
//! the wheels FR, FL, BR, BL, joined foot-to-body and facing outward. The wheel modules'
//! FJ take speeds; the body's FJ is held at position 0; every foot and camera joint takes
//! positions.
//!
//! The wheels turn only once every module's BJ1 and BJ2 are within 3° of the pose (the
//! Lua's `Order_done` in this configuration; the wheel is not waited for). Speeds are
//! joint speeds in deg/s with the code's signs: straight = right wheels −v and left wheels
//! +v; a spin gives every wheel the same speed, +v turning the robot clockwise (right), as
//! `move_whld` sends +30 when the heading error is below −1°.

use super::{Goal, ModuleJoints, nearest_turn, wrap_deg, yaw_of};
use crate::controller::{Controller, JointTarget, Observation};

/// BJ1 and BJ2 of every module within this of the pose, deg, before the wheels turn.
pub const FEET_TOLERANCE_DEG: f64 = 3.0;
/// The bang-bang heading deadband, deg (`move_whld`, `correct_ornt_whld`).
pub const HEADING_DEADBAND_DEG: f64 = 1.0;

/// The robot's height mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WheeledPose {
    /// Table 3.30: body (FJ, BJ1, BJ2) = (0, −90, 90), wheels (0, −75, 90).
    Normal,
    /// §4.2, pass under a lath: body (0, 0, 0), wheels BJ1 = 30, BJ2 = 0. These are the Lua's
    /// values (`conf_init`, `move_whld`); Table 3.32's (0, 0, 30) lowers the attachment by
    /// only ≈ 5 mm against the Lua's ≈ 29 mm (spec §4.2, §9.5).
    Low,
}

impl WheeledPose {
    /// (BJ1, BJ2) of the body modules, deg.
    pub fn body_deg(self) -> (f64, f64) {
        match self {
            WheeledPose::Normal => (-90.0, 90.0),
            WheeledPose::Low => (0.0, 0.0),
        }
    }

    /// (BJ1, BJ2) of the wheel modules, deg.
    pub fn wheel_feet_deg(self) -> (f64, f64) {
        match self {
            WheeledPose::Normal => (-75.0, 90.0),
            WheeledPose::Low => (30.0, 0.0),
        }
    }

    /// (BJ1, BJ2) of role `r` (1…6), deg.
    fn feet_of(self, role: usize) -> (f64, f64) {
        if role <= 2 {
            self.body_deg()
        } else {
            self.wheel_feet_deg()
        }
    }
}

/// What the wheels do.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WheelCommand {
    /// Wheels at rest.
    Stop,
    /// Straight: right wheels −v, left wheels +v (deg/s); positive drives forward.
    Straight(f64),
    /// Spin in place: every wheel v (deg/s); positive turns clockwise.
    Spin(f64),
}

impl WheelCommand {
    /// Speeds of the wheels FR, FL, BR, BL (roles 3…6), deg/s.
    pub fn speeds_deg_s(self) -> [f64; 4] {
        match self {
            WheelCommand::Stop => [0.0; 4],
            WheelCommand::Straight(v) => [-v, v, -v, v],
            WheelCommand::Spin(v) => [v; 4],
        }
    }

    /// The bang-bang command for a heading error `err_deg` = wrap(required − current): spin
    /// toward it outside the ±1° deadband, else `inside`.
    pub fn toward(err_deg: f64, speed: f64, inside: WheelCommand) -> WheelCommand {
        if err_deg < -HEADING_DEADBAND_DEG {
            WheelCommand::Spin(speed)
        } else if err_deg > HEADING_DEADBAND_DEG {
            WheelCommand::Spin(-speed)
        } else {
            inside
        }
    }
}

/// The pose and wheel targets of the six modules, with the feet-first gate.
#[derive(Debug, Clone)]
struct Rig {
    roles: [ModuleJoints; 6],
    count: usize,
    pose: WheeledPose,
    feet_ready: bool,
}

impl Rig {
    /// Latches the gate once every BJ1 and BJ2 is within 3° of the pose; true when open.
    fn feet_ready(&mut self, q: &[f64]) -> bool {
        if !self.feet_ready {
            self.feet_ready = self.roles.iter().enumerate().all(|(i, m)| {
                let (b1, b2) = self.pose.feet_of(i + 1);
                (q[m.bj1].to_degrees() - b1).abs() < FEET_TOLERANCE_DEG
                    && (q[m.bj2].to_degrees() - b2).abs() < FEET_TOLERANCE_DEG
            });
        }
        self.feet_ready
    }

    /// Writes the pose and, once the feet are ready, the wheel speeds.
    fn write(&self, cmd: WheelCommand, q: &[f64], out: &mut [JointTarget]) {
        let speeds = if self.feet_ready { cmd.speeds_deg_s() } else { [0.0; 4] };
        for (i, m) in self.roles.iter().enumerate() {
            let (b1, b2) = self.pose.feet_of(i + 1);
            out[m.fj] = if i < 2 {
                JointTarget::Position(nearest_turn(0.0, q[m.fj]))
            } else {
                JointTarget::Velocity(speeds[i - 2].to_radians())
            };
            out[m.bj1] = JointTarget::Position(b1.to_radians());
            out[m.bj2] = JointTarget::Position(b2.to_radians());
            m.write_camera(out);
        }
    }
}

/// Stand, drive straight or spin in a pose, open loop.
///
/// Cycles: `stand` has none of its own, so it reports one cycle when the feet reach the
/// pose. Driving and spinning are continuous, so they report a **notional cycle** every
/// `cycle_s` seconds of wheel motion (time after the feet reached the pose): a measured
/// report then gives displacement and heading change per `cycle_s` of driving, which is
/// what the skid-steer calibration (x_ICR, α; §3.3) needs.
#[derive(Debug, Clone)]
pub struct WheeledDrive {
    name: String,
    rig: Rig,
    cmd: WheelCommand,
    cycle_s: f64,
    motion_s: f64,
}

impl WheeledDrive {
    /// A drive on a robot of `joint_count` joints (`roles[i]` is Role#(i+1)).
    pub fn new(
        name: &str,
        roles: [ModuleJoints; 6],
        joint_count: usize,
        pose: WheeledPose,
        cmd: WheelCommand,
        cycle_s: f64,
    ) -> WheeledDrive {
        WheeledDrive {
            name: name.to_string(),
            rig: Rig {
                roles,
                count: joint_count,
                pose,
                feet_ready: false,
            },
            cmd,
            cycle_s,
            motion_s: 0.0,
        }
    }

    /// Time the wheels have been turning, s.
    pub fn motion_s(&self) -> f64 {
        self.motion_s
    }
}

impl Controller for WheeledDrive {
    fn name(&self) -> &str {
        &self.name
    }

    fn joint_count(&self) -> usize {
        self.rig.count
    }

    fn step(&mut self, dt: f64, obs: &Observation<'_>, out: &mut [JointTarget]) {
        if self.rig.feet_ready(obs.positions) && self.cmd != WheelCommand::Stop {
            self.motion_s += dt;
        }
        self.rig.write(self.cmd, obs.positions, out);
    }

    fn period(&self) -> Option<f64> {
        None
    }

    fn completed_cycles(&self) -> usize {
        match self.cmd {
            WheelCommand::Stop => usize::from(self.rig.feet_ready),
            _ => (self.motion_s / self.cycle_s + 1e-9).floor() as usize,
        }
    }
}

/// Phases of [`WheeledGoto`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WheeledGotoPhase {
    /// Rotating to the goal's bearing and driving to it.
    Drive,
    /// Within the stop distance: rotating to the goal's heading.
    Align,
    /// Done.
    Done,
}

/// The wheeled position controller (`move_whld`, `correct_ornt_whld`): rotate in place until
/// the goal's bearing is within ±1°, drive straight with the same bang-bang deadband, stop
/// within `stop_distance` (0.1 m), then rotate in place to the goal's heading within 1°.
/// In the low pose it passes under a lath (§4.2). One cycle = the goal first reached.
///
/// Unlike the source's, it holds the goal: the vehicle turns about a point 0.1 m from its
/// reference point, so the final turn can carry that point out of the stop distance (a 30°
/// turn at 0.046 m left it 0.078 m off, where the mission's sequencer waited for it until
/// its row timed out); then it drives again, and a heading that drifts out of the deadband
/// while it stands is turned back (decision 0055).
#[derive(Debug, Clone)]
pub struct WheeledGoto {
    rig: Rig,
    goal: Goal,
    speed: f64,
    stop_distance: f64,
    phase: WheeledGotoPhase,
    cmd: WheelCommand,
    /// The goal has been reached once (the cycle count).
    arrived: bool,
    /// Drives again after the goal was left.
    redrives: usize,
}

impl WheeledGoto {
    /// A goto to `goal` (world frame) at wheel speed `speed_deg_s` (> 0).
    pub fn new(
        roles: [ModuleJoints; 6],
        joint_count: usize,
        pose: WheeledPose,
        goal: Goal,
        speed_deg_s: f64,
        stop_distance: f64,
    ) -> WheeledGoto {
        WheeledGoto {
            rig: Rig {
                roles,
                count: joint_count,
                pose,
                feet_ready: false,
            },
            goal,
            speed: speed_deg_s,
            stop_distance,
            phase: WheeledGotoPhase::Drive,
            cmd: WheelCommand::Stop,
            arrived: false,
            redrives: 0,
        }
    }

    /// The phase.
    pub fn phase(&self) -> WheeledGotoPhase {
        self.phase
    }

    /// Times it drove again after the final turn (or a drift) left it beyond the stop
    /// distance.
    pub fn redrives(&self) -> usize {
        self.redrives
    }

    /// The wheel command of the last tick.
    pub fn command(&self) -> WheelCommand {
        self.cmd
    }
}

impl Controller for WheeledGoto {
    fn name(&self) -> &str {
        "goto"
    }

    fn joint_count(&self) -> usize {
        self.rig.count
    }

    fn step(&mut self, _dt: f64, obs: &Observation<'_>, out: &mut [JointTarget]) {
        self.rig.feet_ready(obs.positions);
        let yaw = yaw_of(&obs.base);
        let (d, bearing) = self.goal.range_bearing(&obs.base);
        if self.phase == WheeledGotoPhase::Drive && d <= self.stop_distance {
            self.phase = WheeledGotoPhase::Align;
        } else if self.phase != WheeledGotoPhase::Drive && d > self.stop_distance {
            // The final turn (or a drift) left the goal: drive back to it.
            self.phase = WheeledGotoPhase::Drive;
            self.redrives += 1;
        } else if self.phase == WheeledGotoPhase::Done
            && WheelCommand::toward(
                wrap_deg((self.goal.yaw - yaw).to_degrees()),
                self.speed,
                WheelCommand::Stop,
            ) != WheelCommand::Stop
        {
            self.phase = WheeledGotoPhase::Align;
        }
        self.cmd = match self.phase {
            WheeledGotoPhase::Drive => WheelCommand::toward(
                wrap_deg((bearing - yaw).to_degrees()),
                self.speed,
                WheelCommand::Straight(self.speed),
            ),
            WheeledGotoPhase::Align => {
                let c = WheelCommand::toward(
                    wrap_deg((self.goal.yaw - yaw).to_degrees()),
                    self.speed,
                    WheelCommand::Stop,
                );
                if c == WheelCommand::Stop {
                    self.phase = WheeledGotoPhase::Done;
                    self.arrived = true;
                }
                c
            }
            WheeledGotoPhase::Done => WheelCommand::Stop,
        };
        self.rig.write(self.cmd, obs.positions, out);
    }

    fn period(&self) -> Option<f64> {
        None
    }

    fn completed_cycles(&self) -> usize {
        usize::from(self.arrived)
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

    /// Wheel speeds FR, FL, BR, BL in the targets, deg/s; panics on a position target.
    fn wheels(t: &[JointTarget]) -> [f64; 4] {
        let r = roles();
        [2, 3, 4, 5].map(|i| match t[r[i].fj] {
            JointTarget::Velocity(v) => (v.to_degrees() * 1e9).round() / 1e9,
            other => panic!("role {} wheel got {other:?}", i + 1),
        })
    }

    /// Places every foot joint at the pose plus `off` deg on role `bad`'s BJ1.
    fn place(plant: &mut FakePlant, pose: WheeledPose, bad: usize, off: f64) {
        for (i, m) in roles().iter().enumerate() {
            let (b1, b2) = pose.feet_of(i + 1);
            let extra = if i + 1 == bad { off } else { 0.0 };
            plant.q[m.bj1] = (b1 + extra).to_radians();
            plant.q[m.bj2] = b2.to_radians();
        }
    }

    #[test]
    fn poses_of_table_3_30_and_the_lua_low_pose() {
        let r = roles();
        for (pose, body, feet) in [
            (WheeledPose::Normal, (-90.0, 90.0), (-75.0, 90.0)),
            (WheeledPose::Low, (0.0, 0.0), (30.0, 0.0)),
        ] {
            let mut c = WheeledDrive::new("stand", r, 30, pose, WheelCommand::Stop, 1.0);
            let mut plant = FakePlant::new(30);
            let t = plant.tick(&mut c, 0.01).to_vec();
            for (i, m) in r.iter().enumerate() {
                let want = if i < 2 { body } else { feet };
                assert_eq!((deg(t[m.bj1]), deg(t[m.bj2])), want, "{pose:?} role {}", i + 1);
                assert_eq!(
                    (t[m.pan], t[m.tilt]),
                    (JointTarget::Position(0.0), JointTarget::Position(0.0))
                );
                if i < 2 {
                    assert_eq!(t[m.fj], JointTarget::Position(0.0), "the body's FJ holds 0");
                }
            }
            assert_eq!(wheels(&t), [0.0; 4]);
            assert_eq!(c.completed_cycles(), 0);
            for _ in 0..100 {
                plant.tick(&mut c, 0.01);
            }
            assert_eq!(c.completed_cycles(), 1, "stand: one cycle once the pose is reached");
        }
    }

    #[test]
    fn the_wheels_wait_for_the_feet_within_three_degrees() {
        let r = roles();
        let mut c = WheeledDrive::new("drive", r, 30, WheeledPose::Normal, WheelCommand::Straight(360.0), 1.0);
        let mut plant = FakePlant::new(30);
        plant.max_speed = 0.0;
        place(&mut plant, WheeledPose::Normal, 4, 3.5);
        plant.tick(&mut c, 0.01);
        assert_eq!(wheels(&plant.last), [0.0; 4], "FL's BJ1 3.5° off: wheels at rest");
        place(&mut plant, WheeledPose::Normal, 1, -3.5);
        plant.tick(&mut c, 0.01);
        assert_eq!(wheels(&plant.last), [0.0; 4], "the body's BJ1 3.5° off: wheels at rest");
        place(&mut plant, WheeledPose::Normal, 4, 2.5);
        plant.tick(&mut c, 0.01);
        assert_eq!(wheels(&plant.last), [-360.0, 360.0, -360.0, 360.0]);
        // Latched: a foot bumped afterwards does not stop the wheels.
        place(&mut plant, WheeledPose::Normal, 4, 10.0);
        plant.tick(&mut c, 0.01);
        assert_eq!(wheels(&plant.last), [-360.0, 360.0, -360.0, 360.0]);
    }

    #[test]
    fn drive_spin_and_notional_cycles() {
        let r = roles();
        let mut c = WheeledDrive::new("drive", r, 30, WheeledPose::Low, WheelCommand::Straight(200.0), 0.5);
        let mut plant = FakePlant::new(30);
        place(&mut plant, WheeledPose::Low, 0, 0.0);
        for _ in 0..120 {
            plant.tick(&mut c, 0.01);
        }
        // Right wheels (FR, BR) -v, left (FL, BL) +v.
        assert_eq!(wheels(&plant.last), [-200.0, 200.0, -200.0, 200.0]);
        assert!((c.motion_s() - 1.2).abs() < 1e-9);
        assert_eq!(c.completed_cycles(), 2, "one cycle per 0.5 s of motion");
        // The wheel joints integrated the speed.
        assert!((plant.deg(r[3].fj) - 240.0).abs() < 1e-6);
        let mut c = WheeledDrive::new("spin", r, 30, WheeledPose::Normal, WheelCommand::Spin(-90.0), 1.0);
        place(&mut plant, WheeledPose::Normal, 0, 0.0);
        plant.tick(&mut c, 0.01);
        assert_eq!(wheels(&plant.last), [-90.0; 4], "a spin: every wheel the same speed");
    }

    /// Skid-steer kinematics of the fake: wheel radius 0.025 m, track 0.3 m; a right wheel
    /// drives forward at −ω·r, a left wheel at +ω·r.
    fn skid(plant: &mut FakePlant, dt: f64) {
        let r = roles();
        let w = |i: usize| plant.qd[r[i].fj];
        let right = -(w(2) + w(4)) / 2.0 * 0.025;
        let left = (w(3) + w(5)) / 2.0 * 0.025;
        let (v, omega) = ((right + left) / 2.0, (right - left) / 0.3);
        let (x, y, yaw) = plant.base_xy_yaw();
        let a = yaw.to_radians();
        plant.set_base(
            x + v * a.cos() * dt,
            y + v * a.sin() * dt,
            yaw + omega.to_degrees() * dt,
        );
    }

    #[test]
    fn goto_rotates_drives_stops_and_aligns() {
        let r = roles();
        let goal = Goal {
            x: -0.4,
            y: 0.5,
            yaw: (-45f64).to_radians(),
        };
        let mut c = WheeledGoto::new(r, 30, WheeledPose::Normal, goal, 360.0, 0.1);
        let mut plant = FakePlant::new(30);
        // The goal's bearing is 128.7° to the left: the first command spins left (all -v),
        // but the wheels wait for the feet.
        plant.tick(&mut c, 0.01);
        assert_eq!(c.command(), WheelCommand::Spin(-360.0));
        assert_eq!(wheels(&plant.last), [0.0; 4]);
        let mut saw = Vec::new();
        for _ in 0..20_000 {
            plant.tick(&mut c, 0.01);
            skid(&mut plant, 0.01);
            let cmd = c.command();
            if saw.last() != Some(&cmd) {
                saw.push(cmd);
            }
            if c.completed_cycles() == 1 {
                break;
            }
        }
        assert_eq!(c.completed_cycles(), 1);
        let (d, _) = goal.range_bearing(&plant.base);
        assert!(d <= 0.1, "{d}");
        let (_, _, yaw) = plant.base_xy_yaw();
        assert!(wrap_deg(yaw + 45.0).abs() <= HEADING_DEADBAND_DEG, "{yaw}");
        assert_eq!(saw.first(), Some(&WheelCommand::Spin(-360.0)));
        assert!(saw.contains(&WheelCommand::Straight(360.0)));
        // The final alignment turns right (all +v): from ≈129° to -45°.
        assert!(saw.contains(&WheelCommand::Spin(360.0)));
        assert_eq!(saw.last(), Some(&WheelCommand::Stop));
    }

    /// The source's controller stops for good after its final turn; this one holds the goal:
    /// carried out of the stop distance it drives again, and a heading that drifts out of
    /// the deadband while it stands is turned back.
    #[test]
    fn goto_drives_again_when_left_beyond_the_stop_distance_and_turns_back_a_drift() {
        let r = roles();
        let goal = Goal {
            x: 0.5,
            y: 0.0,
            yaw: 0.0,
        };
        let mut c = WheeledGoto::new(r, 30, WheeledPose::Normal, goal, 360.0, 0.05);
        let mut plant = FakePlant::new(30);
        place(&mut plant, WheeledPose::Normal, 0, 0.0);
        // Standing at the goal, aligned: done at once.
        plant.set_base(0.48, 0.0, 0.0);
        plant.tick(&mut c, 0.01);
        assert_eq!((c.phase(), c.completed_cycles()), (WheeledGotoPhase::Done, 1));
        // Its heading drifts 3°: it turns back (right, all +v), then stands again.
        plant.set_base(0.48, 0.0, 3.0);
        plant.tick(&mut c, 0.01);
        assert_eq!(c.command(), WheelCommand::Spin(360.0));
        plant.set_base(0.48, 0.0, 0.5);
        plant.tick(&mut c, 0.01);
        assert_eq!((c.phase(), c.command()), (WheeledGotoPhase::Done, WheelCommand::Stop));
        // Pushed 0.078 m off (as a final turn left it in the mission): it drives back.
        plant.set_base(0.422, 0.0, 0.0);
        plant.tick(&mut c, 0.01);
        assert_eq!(c.phase(), WheeledGotoPhase::Drive);
        assert_eq!(c.command(), WheelCommand::Straight(360.0));
        assert_eq!((c.redrives(), c.completed_cycles()), (1, 1));
        for _ in 0..2_000 {
            plant.tick(&mut c, 0.01);
            skid(&mut plant, 0.01);
            if c.phase() == WheeledGotoPhase::Done {
                break;
            }
        }
        assert_eq!(c.phase(), WheeledGotoPhase::Done);
        let (d, _) = goal.range_bearing(&plant.base);
        assert!(d <= 0.05, "{d}");
    }

    #[test]
    fn bang_bang_deadband() {
        let s = WheelCommand::Straight(100.0);
        assert_eq!(WheelCommand::toward(-1.5, 100.0, s), WheelCommand::Spin(100.0));
        assert_eq!(WheelCommand::toward(1.5, 100.0, s), WheelCommand::Spin(-100.0));
        assert_eq!(WheelCommand::toward(0.9, 100.0, s), s);
        assert_eq!(WheelCommand::toward(-0.9, 100.0, s), s);
    }
}
