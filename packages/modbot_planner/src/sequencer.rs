//! The reactive sequencer (seed-000 §6.5): executes a strategic plan row by row. It
//! reassembles when the row's configuration differs from the current one, runs the ability
//! when the row says so, otherwise drives to the sub-goal; it advances within tolerance and
//! asks for a replan when a row is blocked or times out. It is written against plain
//! inputs (pose, configuration, blocked flag, time), so the embedded simulator, a fake or
//! ROS topics (`executive_node`) can drive it.

use std::collections::BTreeMap;

use crate::strategic::{Action, StrategicPlan};

/// An angle wrapped into (−π, π], rad: the planner's one wrap (headings, bearings, errors).
pub fn wrap_angle(a: f64) -> f64 {
    use std::f64::consts::{PI, TAU};
    let d = a.rem_euclid(TAU);
    if d > PI { d - TAU } else { d }
}

/// A planar pose.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pose2 {
    /// x, m.
    pub x: f64,
    /// y, m.
    pub y: f64,
    /// Heading, rad.
    pub yaw: f64,
}

impl Pose2 {
    /// The mean of `poses`: the mean position and the circular mean heading, or
    /// `yaw_if_cancelled` when the headings cancel out exactly; `None` for no poses.
    pub fn mean(poses: impl IntoIterator<Item = Pose2>, yaw_if_cancelled: f64) -> Option<Pose2> {
        let (mut n, mut x, mut y, mut c, mut s) = (0usize, 0.0, 0.0, 0.0, 0.0);
        for p in poses {
            n += 1;
            x += p.x;
            y += p.y;
            c += p.yaw.cos();
            s += p.yaw.sin();
        }
        (n > 0).then(|| Pose2 {
            x: x / n as f64,
            y: y / n as f64,
            yaw: if c == 0.0 && s == 0.0 {
                yaw_if_cancelled
            } else {
                s.atan2(c)
            },
        })
    }
}

/// The reference objects of a scenario for [`Sequencer::new`]: every obstacle at its
/// centre and yaw, and `target` at the goal (the start when there is no goal).
pub fn references(scenario: &modbot_core::Scenario) -> BTreeMap<String, Pose2> {
    let mut refs = BTreeMap::new();
    for o in &scenario.obstacles {
        refs.insert(
            o.name.clone(),
            Pose2 {
                x: o.position_m[0],
                y: o.position_m[1],
                yaw: o.yaw_deg.to_radians(),
            },
        );
    }
    let g = scenario
        .goal
        .unwrap_or([scenario.robot_start.xyz[0], scenario.robot_start.xyz[1]]);
    refs.insert(
        "target".into(),
        Pose2 {
            x: g[0],
            y: g[1],
            yaw: 0.0,
        },
    );
    refs
}

/// What the sequencer asks the acting layer to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Assemble or reassemble into this configuration.
    Reconfigure(String),
    /// Drive to the pose with the configuration's position control.
    Drive(Pose2),
    /// Run the ability towards the pose.
    Ability(Action, Pose2),
}

/// The outcome of one tick.
#[derive(Debug, Clone, PartialEq)]
pub enum Tick {
    /// Keep doing this.
    Command(Command),
    /// Row `n` (0-based) was reached; the next tick starts the next row.
    Reached(usize),
    /// Every row is done.
    Done,
    /// Row `n` cannot be completed: blocked or out of time. The caller replans from here.
    Replan {
        /// The row.
        row: usize,
        /// Why.
        reason: String,
    },
}

/// Tolerances and limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SequencerSettings {
    /// Position tolerance, m (the source: 0.1).
    pub position_m: f64,
    /// Heading tolerance for configurations that align, rad (the source: 1°).
    pub yaw_rad: f64,
    /// Time allowed per row before asking for a replan, s.
    pub row_timeout_s: f64,
    /// Position tolerance of the last row (the goal), m; `None`: `position_m`. The embedded
    /// mission asks for less than the source's 0.1 m here, so that the true target is
    /// within 0.1 m despite the camera's error in where the target is (record 0049).
    pub goal_position_m: Option<f64>,
    /// Heading tolerance, rad, of a row that leads to a pass-over (the robot must face the
    /// way it will climb): reached only when also aligned to the pass-over row's heading;
    /// `None`: position only, as the source (whose quadruped turns only while walking).
    /// The embedded mission asks for 5° (its quadruped turns on the spot, record 0055).
    pub pass_over_yaw_rad: Option<f64>,
    /// Position tolerance, m, of a row that leads to a pass-over; `None`: `position_m`. The
    /// embedded mission asks for 7 cm: its quadruped's pass-over starts where the approach
    /// stops, and one stopped 10 cm short (within the source's 0.1 m) was carried 1 cm too
    /// little across the kerb (session 32, the shipped layout; record 0059).
    pub pass_over_position_m: Option<f64>,
}

impl Default for SequencerSettings {
    fn default() -> Self {
        SequencerSettings {
            position_m: 0.1,
            yaw_rad: 1f64.to_radians(),
            row_timeout_s: 600.0,
            goal_position_m: None,
            pass_over_yaw_rad: None,
            pass_over_position_m: None,
        }
    }
}

/// The sequencer's state.
#[derive(Debug, Clone)]
pub struct Sequencer {
    plan: StrategicPlan,
    references: BTreeMap<String, Pose2>,
    settings: SequencerSettings,
    row: usize,
    row_started: Option<f64>,
    /// The acting layer reported the current row's ability complete.
    ability_done: bool,
}

impl Sequencer {
    /// A sequencer for a plan; `references` gives each reference object's pose (obstacles
    /// and `target`).
    pub fn new(plan: StrategicPlan, references: BTreeMap<String, Pose2>, settings: SequencerSettings) -> Sequencer {
        Sequencer {
            plan,
            references,
            settings,
            row: 0,
            row_started: None,
            ability_done: false,
        }
    }

    /// The current row (0-based).
    pub fn row(&self) -> usize {
        self.row
    }

    /// The sub-goal pose of a row: reference + R(yaw_ref)·(longitudinal, lateral), heading
    /// yaw_ref + yaw offset (the source's `goal = ref + R(ref_yaw)(long, lat)`).
    pub fn target(&self, row: usize) -> Option<Pose2> {
        let r = self.plan.rows.get(row)?;
        let reference = self.references.get(&r.reference)?;
        let (c, s) = (reference.yaw.cos(), reference.yaw.sin());
        Some(Pose2 {
            x: reference.x + c * r.longitudinal_m - s * r.lateral_m,
            y: reference.y + s * r.longitudinal_m + c * r.lateral_m,
            yaw: reference.yaw + r.yaw_deg.to_radians(),
        })
    }

    /// When `row` is a drive row that leads to a pass-over row, that row's point and the way
    /// it climbs (its heading); `None` otherwise.
    pub fn pass_over_way(&self, row: usize) -> Option<Pose2> {
        let next = self.plan.rows.get(row + 1)?;
        let leads = !self.plan.rows[row].ability && next.ability && next.action == Action::PassOver;
        if leads { self.target(row + 1) } else { None }
    }

    /// The acting layer's report that the current row's ability has run to its end (the
    /// quadruped's pass-over after its two cycles): a pass-over row is complete then,
    /// wherever the robot is (the source's `qd_pass_over`).
    pub fn ability_complete(&mut self) {
        self.ability_done = true;
    }

    /// Starts the current row's clock again at `now`: the acting layer has finished a
    /// reconfiguration, which has its own time limits, and the row's own work starts now.
    pub fn restart_row_clock(&mut self, now: f64) {
        self.row_started = Some(now);
    }

    /// One step of the sense → sequence → act loop.
    pub fn tick(&mut self, now: f64, pose: Pose2, configuration: &str, blocked: bool) -> Tick {
        let Some(row) = self.plan.rows.get(self.row).cloned() else {
            return Tick::Done;
        };
        let started = *self.row_started.get_or_insert(now);
        if blocked || now - started > self.settings.row_timeout_s {
            return Tick::Replan {
                row: self.row,
                reason: if blocked {
                    "blocked".into()
                } else {
                    format!("no progress in {} s", self.settings.row_timeout_s)
                },
            };
        }
        if row.configuration != configuration {
            return Tick::Command(Command::Reconfigure(row.configuration.clone()));
        }
        let Some(target) = self.target(self.row) else {
            return Tick::Replan {
                row: self.row,
                reason: format!("unknown reference object `{}`", row.reference),
            };
        };
        let dist = (target.x - pose.x).hypot(target.y - pose.y);
        // Wheeled sub-goals, the pass-under too, also align to the reference's heading (the
        // source's ±1°: its wheeled controller stays active through the low-pose pass).
        let off = |yaw: f64| wrap_angle(pose.yaw - yaw).abs();
        let mut aligned = row.configuration != "wheeled" || off(target.yaw) <= self.settings.yaw_rad;
        // A row that leads to a pass-over faces the way the pass-over climbs, when asked.
        if let Some(tolerance) = self.settings.pass_over_yaw_rad
            && let Some(way) = self.pass_over_way(self.row)
        {
            aligned &= off(way.yaw) <= tolerance;
        }
        // The pass-over runs its cycles and is complete wherever it ends (its position fields
        // are ignored, spec §6.4); every other row within the position tolerance.
        let reached = if row.action == Action::PassOver {
            self.ability_done
        } else {
            let leads = self.pass_over_way(self.row).is_some();
            let tolerance = match (self.settings.goal_position_m, self.settings.pass_over_position_m) {
                (Some(g), _) if self.row + 1 == self.plan.rows.len() => g,
                (_, Some(p)) if leads => p,
                _ => self.settings.position_m,
            };
            dist <= tolerance && aligned
        };
        if reached {
            let done = self.row;
            self.row += 1;
            self.row_started = None;
            self.ability_done = false;
            return Tick::Reached(done);
        }
        Tick::Command(if row.ability {
            Command::Ability(row.action, target)
        } else {
            Command::Drive(target)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategic::source_decomposition;
    use modbot_core::Scenario;

    #[test]
    fn angles_wrap_into_minus_pi_to_pi() {
        use std::f64::consts::PI;
        for (a, want) in [
            (0.0, 0.0),
            (PI, PI),
            (-PI, PI),
            (3.0 * PI / 2.0, -PI / 2.0),
            (-7.0 * PI, PI),
            (0.1 - 4.0 * PI, 0.1),
        ] {
            assert!(
                (wrap_angle(a) - want).abs() < 1e-12,
                "wrap({a}) = {}, want {want}",
                wrap_angle(a)
            );
        }
    }

    /// A fake robot: moves towards its command at a speed, turns to align, and takes a
    /// fixed time to reconfigure.
    struct FakeRobot {
        pose: Pose2,
        configuration: String,
        busy_until: f64,
        reconfigurations: Vec<String>,
        abilities: Vec<Action>,
        stuck_at_x: Option<f64>,
    }

    impl FakeRobot {
        /// Acts, and reports its pass-over complete once it is within 0.3 m of the row's
        /// point (the real one's ends after two cycles wherever it is).
        fn act_for(&mut self, seq: &mut Sequencer, now: f64, dt: f64, c: &Command) {
            self.act(now, dt, c);
            if let Command::Ability(Action::PassOver, target) = c
                && (target.x - self.pose.x).hypot(target.y - self.pose.y) < 0.3
            {
                seq.ability_complete();
            }
        }

        fn act(&mut self, now: f64, dt: f64, c: &Command) {
            if now < self.busy_until {
                return;
            }
            match c {
                Command::Reconfigure(to) => {
                    self.configuration = to.clone();
                    self.busy_until = now + 5.0;
                    self.reconfigurations.push(to.clone());
                }
                Command::Drive(t) | Command::Ability(_, t) => {
                    if let Command::Ability(a, _) = c
                        && self.abilities.last() != Some(a)
                    {
                        self.abilities.push(*a);
                    }
                    let (dx, dy) = (t.x - self.pose.x, t.y - self.pose.y);
                    let d = dx.hypot(dy);
                    let step = (0.1 * dt).min(d);
                    if d > 1e-9 {
                        let nx = self.pose.x + step * dx / d;
                        if self.stuck_at_x.is_some_and(|x| nx > x) {
                            return;
                        }
                        self.pose.x = nx;
                        self.pose.y += step * dy / d;
                    }
                    if d < 0.05 {
                        let e = t.yaw - self.pose.yaw;
                        self.pose.yaw += e.clamp(-0.5 * dt, 0.5 * dt);
                    }
                }
            }
        }
    }

    fn setup(stuck_at_x: Option<f64>) -> (Sequencer, FakeRobot) {
        let s = Scenario::from_yaml(include_str!("../../../worlds/obstacle_course.yaml"), "oc").unwrap();
        let plan = source_decomposition(&s).unwrap();
        let refs = references(&s);
        let settings = SequencerSettings {
            row_timeout_s: 120.0,
            ..SequencerSettings::default()
        };
        let robot = FakeRobot {
            pose: Pose2 {
                x: 0.0,
                y: 0.0,
                yaw: 0.3,
            },
            configuration: "single_module".into(),
            busy_until: 0.0,
            reconfigurations: Vec::new(),
            abilities: Vec::new(),
            stuck_at_x,
        };
        (Sequencer::new(plan, refs, settings), robot)
    }

    #[test]
    fn executes_the_source_plan() {
        let (mut seq, mut robot) = setup(None);
        let dt = 0.1;
        let mut reached = Vec::new();
        let mut t = 0.0;
        loop {
            match seq.tick(t, robot.pose, &robot.configuration.clone(), false) {
                Tick::Command(c) => robot.act_for(&mut seq, t, dt, &c),
                Tick::Reached(n) => reached.push(n),
                Tick::Done => break,
                Tick::Replan { row, reason } => panic!("replan at row {row}: {reason}"),
            }
            t += dt;
            assert!(t < 2000.0, "stuck at row {}", seq.row());
        }
        assert_eq!(reached, vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(robot.reconfigurations, vec!["quadruped", "wheeled"]);
        assert_eq!(robot.abilities, vec![Action::PassOver, Action::PassUnder]);
        assert!((robot.pose.x - 3.5).abs() <= 0.1 && robot.pose.y.abs() <= 0.1);
        assert!(
            robot.pose.yaw.abs() <= 1f64.to_radians(),
            "the wheeled goal aligns to the target's yaw"
        );
    }

    /// The pass-over row ends when the acting layer says its cycles are done, wherever the
    /// robot is; the wheeled pass-under row ends only within 0.1 m and aligned within 1°.
    #[test]
    fn pass_over_ends_on_its_report_and_pass_under_aligns() {
        let (mut seq, robot) = setup(None);
        let quad = "quadruped";
        let mut t = 0.0;
        // Row 0: reach the approach point.
        let approach = seq.target(0).unwrap();
        assert_eq!(seq.tick(t, approach, quad, false), Tick::Reached(0));
        // Row 1, the pass-over: at its own point it is still running until the report.
        let over = seq.target(1).unwrap();
        t += 1.0;
        assert!(matches!(
            seq.tick(t, over, quad, false),
            Tick::Command(Command::Ability(Action::PassOver, _))
        ));
        // Reported, it is complete 1 m short of that point.
        seq.ability_complete();
        let short = Pose2 {
            x: over.x - 1.0,
            ..over
        };
        assert_eq!(seq.tick(t, short, quad, false), Tick::Reached(1));
        // Rows 2–3 reached where they are; row 4 is the wheeled pass-under.
        for row in 2..4 {
            let p = seq.target(row).unwrap();
            let c = seq.plan.rows[row].configuration.clone();
            assert_eq!(seq.tick(t, p, &c, false), Tick::Reached(row));
        }
        let under = seq.target(4).unwrap();
        assert_eq!(seq.plan.rows[4].action, Action::PassUnder);
        let turned = Pose2 {
            yaw: under.yaw + 2f64.to_radians(),
            ..under
        };
        assert!(matches!(
            seq.tick(t, turned, "wheeled", false),
            Tick::Command(Command::Ability(Action::PassUnder, _))
        ));
        let aligned = Pose2 {
            yaw: under.yaw + 0.5f64.to_radians(),
            ..under
        };
        assert_eq!(seq.tick(t, aligned, "wheeled", false), Tick::Reached(4));
        let _ = robot;
    }

    /// Asked to (the embedded mission), the row before a pass-over is reached only facing the
    /// pass-over's way; by default (the source) at its position whatever the heading.
    #[test]
    fn the_approach_to_a_pass_over_faces_its_way_when_asked() {
        let (source, _) = setup(None);
        let mut facing = Sequencer::new(
            source.plan.clone(),
            source.references.clone(),
            SequencerSettings {
                pass_over_yaw_rad: Some(5f64.to_radians()),
                ..source.settings
            },
        );
        let mut source = source;
        assert_eq!(source.plan.rows[1].action, Action::PassOver);
        let (approach, way) = (facing.target(0).unwrap(), facing.target(1).unwrap());
        // Row 0 leads to the pass-over (row 1); no other row of the plan does.
        assert_eq!(facing.pass_over_way(0), Some(way));
        assert!((1..facing.plan.rows.len()).all(|r| facing.pass_over_way(r).is_none()));
        let off = |deg: f64| Pose2 {
            yaw: way.yaw + deg.to_radians(),
            ..approach
        };
        assert_eq!(source.tick(0.0, off(72.0), "quadruped", false), Tick::Reached(0));
        assert!(matches!(
            facing.tick(0.0, off(72.0), "quadruped", false),
            Tick::Command(Command::Drive(_))
        ));
        assert!(matches!(
            facing.tick(0.1, off(-6.0), "quadruped", false),
            Tick::Command(Command::Drive(_))
        ));
        assert_eq!(facing.tick(0.2, off(4.0), "quadruped", false), Tick::Reached(0));
        // The pass-over row itself and the rows after it are not held to it.
        facing.ability_complete();
        assert_eq!(facing.tick(0.3, off(72.0), "quadruped", false), Tick::Reached(1));
    }

    /// Asked to, the row before a pass-over is reached only within its own tolerance; the
    /// other rows keep the source's 0.1 m.
    #[test]
    fn the_approach_to_a_pass_over_has_its_own_tolerance_when_asked() {
        let (source, _) = setup(None);
        let mut close = Sequencer::new(
            source.plan.clone(),
            source.references.clone(),
            SequencerSettings {
                pass_over_position_m: Some(0.05),
                ..source.settings
            },
        );
        let mut source = source;
        let approach = close.target(0).unwrap();
        let short = |m: f64| Pose2 {
            x: approach.x - m * approach.yaw.cos(),
            y: approach.y - m * approach.yaw.sin(),
            ..approach
        };
        assert_eq!(source.tick(0.0, short(0.08), "quadruped", false), Tick::Reached(0));
        assert!(matches!(
            close.tick(0.0, short(0.08), "quadruped", false),
            Tick::Command(Command::Drive(_))
        ));
        assert_eq!(close.tick(0.1, short(0.04), "quadruped", false), Tick::Reached(0));
    }

    #[test]
    fn asks_for_a_replan_when_stuck_or_blocked() {
        let (mut seq, mut robot) = setup(Some(2.0));
        let dt = 0.1;
        let mut t = 0.0;
        let outcome = loop {
            match seq.tick(t, robot.pose, &robot.configuration.clone(), false) {
                Tick::Command(c) => robot.act_for(&mut seq, t, dt, &c),
                Tick::Reached(_) => {}
                other => break other,
            }
            t += dt;
        };
        assert!(matches!(outcome, Tick::Replan { row: 3, .. }), "{outcome:?}");
        let (mut seq, robot) = setup(None);
        assert!(matches!(
            seq.tick(0.0, robot.pose, "single_module", true),
            Tick::Replan { row: 0, .. }
        ));
    }
}
