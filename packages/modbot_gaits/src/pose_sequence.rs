//! Pose sequences: a list of poses, each held until every joint it lists is within its
//! tolerance (and, if it says so, for at least a while), then the next. The gaits of the
//! self-mobile modules (inchworm, trot, sidle, pass-over; seed 000) are written this way:
//! the source streams a pose and waits until every servo reports it reached within E_min.
//! One pass through the poses is a cycle; how long it takes is measured, not assumed.

use std::collections::BTreeMap;
use std::f64::consts::{PI, TAU};

use modbot_core::{Actuator, JointType, Topology};
use serde::{Deserialize, Serialize};

use crate::controller::{Controller, JointTarget, Observation};
use crate::error::{GaitError, Result};

/// A pose sequence file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoseSequenceFile {
    /// Name, for reports.
    pub name: String,
    /// Start again at the first pose after the last (default), or stop there.
    #[serde(default = "yes")]
    pub cyclic: bool,
    /// The poses in order.
    pub poses: Vec<PoseDef>,
}

fn yes() -> bool {
    true
}

/// One pose as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoseDef {
    /// Name, for messages.
    pub name: String,
    /// Least time spent in the pose, s (required for a pose without position targets).
    #[serde(default)]
    pub hold_s: f64,
    /// Targets by joint name; joints not listed keep their last target.
    pub targets: BTreeMap<String, TargetDef>,
}

/// One joint's target in a pose: exactly one of `position_deg` and `velocity_deg_s`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetDef {
    /// Position, deg (position-driven joints).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position_deg: Option<f64>,
    /// Speed, deg/s (velocity-driven joints).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub velocity_deg_s: Option<f64>,
    /// "Reached" tolerance, deg (default: the servo's `tolerance_deg`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance_deg: Option<f64>,
}

/// A resolved target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PoseTarget {
    /// Reach `angle` (rad) within `tolerance` (rad).
    Position {
        /// Angle, rad.
        angle: f64,
        /// Tolerance, rad.
        tolerance: f64,
    },
    /// Turn at this speed, rad/s.
    Velocity(f64),
}

/// How a joint is driven, as the sequence needs to know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JointMode {
    /// Position-driven; `wrap` for a continuous joint, whose errors go the short way round.
    Position {
        /// Continuous joint.
        wrap: bool,
    },
    /// Velocity-driven (a wheel): takes speeds, starts at rest.
    Velocity,
}

/// A resolved pose.
#[derive(Debug, Clone, PartialEq)]
pub struct Pose {
    /// Name.
    pub name: String,
    /// Per joint (command order): its target, or `None` to keep the last one.
    pub targets: Vec<Option<PoseTarget>>,
    /// Least time in the pose, s.
    pub hold_s: f64,
}

/// The controller.
#[derive(Debug, Clone)]
pub struct PoseSequence {
    name: String,
    poses: Vec<Pose>,
    /// Per joint: continuous (wrap-aware errors).
    wrap: Vec<bool>,
    /// Per joint: how it is driven.
    modes: Vec<JointMode>,
    cyclic: bool,
    current: usize,
    entered: f64,
    time: f64,
    passes: usize,
    /// Last commanded target per joint (None before the first tick).
    held: Option<Vec<JointTarget>>,
}

/// The difference a − b wrapped into (−π, π].
fn wrapped(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(TAU);
    if d > PI { d - TAU } else { d }
}

impl PoseSequence {
    /// A sequence over `modes.len()` joints: position targets only for position-driven
    /// joints, speeds only for velocity-driven ones; continuous joints wrap.
    pub fn new(name: impl Into<String>, poses: Vec<Pose>, modes: Vec<JointMode>, cyclic: bool) -> Result<PoseSequence> {
        let wrap: Vec<bool> = modes
            .iter()
            .map(|m| matches!(m, JointMode::Position { wrap: true }))
            .collect();
        let name = name.into();
        let bad = |key: String, value: String, expected: &str| GaitError::Value {
            key,
            value,
            expected: expected.to_string(),
        };
        if poses.is_empty() {
            return Err(bad(format!("{name}.poses"), "[]".into(), "at least one pose"));
        }
        for p in &poses {
            if p.targets.len() != wrap.len() {
                return Err(bad(
                    format!("{name}.{}", p.name),
                    format!("{} joints", p.targets.len()),
                    "one entry per joint of the robot",
                ));
            }
            if !(p.hold_s.is_finite() && p.hold_s >= 0.0) {
                return Err(bad(
                    format!("{name}.{}.hold_s", p.name),
                    p.hold_s.to_string(),
                    "a time >= 0 s",
                ));
            }
            let waits = p.targets.iter().any(|t| matches!(t, Some(PoseTarget::Position { .. })));
            if !waits && p.hold_s <= 0.0 {
                return Err(bad(
                    format!("{name}.{}.hold_s", p.name),
                    p.hold_s.to_string(),
                    "a time > 0 s: a pose without position targets ends only by time",
                ));
            }
            for (k, t) in p.targets.iter().enumerate() {
                let Some(t) = t else { continue };
                let fits = matches!(
                    (t, modes[k]),
                    (PoseTarget::Position { .. }, JointMode::Position { .. })
                        | (PoseTarget::Velocity(_), JointMode::Velocity)
                );
                if !fits {
                    return Err(bad(
                        format!("{name}.{}.targets[{k}]", p.name),
                        format!("{t:?}"),
                        "a position for a position-driven joint, a speed for a velocity-driven one",
                    ));
                }
                let ok = match *t {
                    PoseTarget::Position { angle, tolerance } => {
                        angle.is_finite() && tolerance.is_finite() && tolerance > 0.0
                    }
                    PoseTarget::Velocity(v) => v.is_finite(),
                };
                if !ok {
                    return Err(bad(
                        format!("{name}.{}", p.name),
                        format!("{t:?}"),
                        "finite targets and tolerances > 0",
                    ));
                }
            }
        }
        Ok(PoseSequence {
            name,
            poses,
            wrap,
            modes,
            cyclic,
            current: 0,
            entered: 0.0,
            time: 0.0,
            passes: 0,
            held: None,
        })
    }

    /// Resolves a pose sequence file against a robot: joint names, units, tolerances (the
    /// servo's when not given), position targets only on position-driven joints and
    /// speeds only on velocity-driven ones, limits respected.
    pub fn from_file(file: &PoseSequenceFile, robot: &Topology) -> Result<PoseSequence> {
        let joints = robot.joints();
        let mut poses = Vec::with_capacity(file.poses.len());
        let value = |key: String, value: String, expected: &str| GaitError::Value {
            key,
            value,
            expected: expected.to_string(),
        };
        if file.poses.is_empty() {
            return Err(value("poses".into(), "[]".into(), "at least one pose"));
        }
        if file.cyclic && file.poses.len() == 1 && file.poses[0].hold_s <= 0.0 {
            return Err(value(
                "poses[0].hold_s".into(),
                file.poses[0].hold_s.to_string(),
                "a time > 0 s: a cyclic sequence of one pose would complete a cycle every tick",
            ));
        }
        for (pi, p) in file.poses.iter().enumerate() {
            let waits = p.targets.values().any(|t| t.position_deg.is_some());
            if !(p.hold_s.is_finite() && p.hold_s >= 0.0) || (!waits && p.hold_s <= 0.0) {
                return Err(value(
                    format!("poses[{pi}].hold_s"),
                    p.hold_s.to_string(),
                    "a time >= 0 s, > 0 for a pose without position targets (it ends only by time)",
                ));
            }
            let mut targets = vec![None; joints.len()];
            for (jname, t) in &p.targets {
                let key = format!("poses[{pi}].targets.{jname}");
                let bad = |value: String, expected: String| GaitError::Value {
                    key: key.clone(),
                    value,
                    expected,
                };
                let (k, j) = joints
                    .iter()
                    .enumerate()
                    .find(|(_, j)| &j.name == jname)
                    .ok_or_else(|| {
                        bad(
                            jname.clone(),
                            format!(
                                "a joint of {} ({})",
                                robot.name,
                                joints.iter().map(|j| j.name.as_str()).collect::<Vec<_>>().join(", ")
                            ),
                        )
                    })?;
                targets[k] = Some(match (t.position_deg, t.velocity_deg_s, j.def.actuator) {
                    (Some(a), None, Actuator::Position(s)) => {
                        let (lo, hi) = j.def.limits_rad();
                        let angle = a.to_radians();
                        if !(angle.is_finite() && angle >= lo - 1e-12 && angle <= hi + 1e-12) {
                            return Err(bad(
                                format!("position_deg {a}"),
                                format!(
                                    "an angle within the joint's limits [{}, {}] deg",
                                    lo.to_degrees(),
                                    hi.to_degrees()
                                ),
                            ));
                        }
                        let tol = t.tolerance_deg.unwrap_or(s.tolerance_deg);
                        if !(tol.is_finite() && tol > 0.0) {
                            return Err(bad(format!("tolerance_deg {tol}"), "a tolerance > 0 deg".into()));
                        }
                        PoseTarget::Position {
                            angle,
                            tolerance: tol.to_radians(),
                        }
                    }
                    (None, Some(v), Actuator::Velocity(d)) => {
                        if !(v.is_finite() && v.abs() <= d.max_speed_deg_s) {
                            return Err(bad(
                                format!("velocity_deg_s {v}"),
                                format!("a speed within ±{} deg/s", d.max_speed_deg_s),
                            ));
                        }
                        if t.tolerance_deg.is_some() {
                            return Err(bad(
                                "tolerance_deg".into(),
                                "no tolerance: a speed target is not waited for".into(),
                            ));
                        }
                        PoseTarget::Velocity(v.to_radians())
                    }
                    (Some(_), None, Actuator::Velocity(_)) => {
                        return Err(bad(
                            "position_deg".into(),
                            "velocity_deg_s: the joint is velocity-driven".into(),
                        ));
                    }
                    (None, Some(_), Actuator::Position(_)) => {
                        return Err(bad(
                            "velocity_deg_s".into(),
                            "position_deg: the joint is position-driven".into(),
                        ));
                    }
                    (pd, vd, _) => {
                        let given = match (pd.is_some(), vd.is_some()) {
                            (true, true) => "both position_deg and velocity_deg_s",
                            _ => "neither position_deg nor velocity_deg_s",
                        };
                        return Err(bad(
                            given.into(),
                            "exactly one of position_deg and velocity_deg_s".into(),
                        ));
                    }
                });
            }
            poses.push(Pose {
                name: p.name.clone(),
                targets,
                hold_s: p.hold_s,
            });
        }
        let modes = joints
            .iter()
            .map(|j| match j.def.actuator {
                Actuator::Position(_) => JointMode::Position {
                    wrap: j.def.kind == JointType::Continuous,
                },
                Actuator::Velocity(_) => JointMode::Velocity,
            })
            .collect();
        PoseSequence::new(file.name.clone(), poses, modes, file.cyclic)
    }

    /// Parses a pose sequence file's text and resolves it against a robot.
    pub fn from_yaml(text: &str, origin: &str, robot: &Topology) -> Result<PoseSequence> {
        let file: PoseSequenceFile = modbot_core::error::yaml_from_str(text).map_err(|e| GaitError::Config {
            origin: origin.to_string(),
            message: e.to_string(),
        })?;
        Self::from_file(&file, robot).map_err(|e| match e {
            GaitError::Value { key, value, expected } => GaitError::Value {
                key: format!("{origin}: {key}"),
                value,
                expected,
            },
            other => other,
        })
    }

    /// Index of the pose being held.
    pub fn current_pose(&self) -> usize {
        self.current
    }

    /// The poses.
    pub fn poses(&self) -> &[Pose] {
        &self.poses
    }

    fn reached(&self, pose: &Pose, positions: &[f64]) -> bool {
        pose.targets
            .iter()
            .zip(positions)
            .zip(&self.wrap)
            .all(|((t, &q), &wrap)| match *t {
                Some(PoseTarget::Position { angle, tolerance }) => {
                    let e = if wrap { wrapped(angle, q) } else { angle - q };
                    e.abs() <= tolerance
                }
                _ => true,
            })
    }
}

impl Controller for PoseSequence {
    fn name(&self) -> &str {
        &self.name
    }

    fn joint_count(&self) -> usize {
        self.wrap.len()
    }

    fn step(&mut self, dt: f64, obs: &Observation<'_>, out: &mut [JointTarget]) {
        self.time += dt;
        if self.held.is_none() {
            // Position joints hold where they are, wheels start at rest.
            let start = obs.positions.iter().zip(&self.modes).map(|(&q, m)| match m {
                JointMode::Position { .. } => JointTarget::Position(q),
                JointMode::Velocity => JointTarget::Velocity(0.0),
            });
            self.held = Some(start.collect());
        }
        // Advance (at most once a tick) when the pose is reached and held long enough.
        let pose = &self.poses[self.current];
        let done_here = self.time - self.entered >= pose.hold_s - 1e-12;
        let finished = !self.cyclic && self.passes > 0;
        if !finished && done_here && self.reached(pose, obs.positions) {
            if self.current + 1 == self.poses.len() {
                self.passes += 1;
                if self.cyclic {
                    self.current = 0;
                }
            } else {
                self.current += 1;
            }
            self.entered = self.time;
        }
        let pose = &self.poses[self.current];
        let held = self.held.as_deref_mut().unwrap_or_default();
        for (k, o) in out.iter_mut().enumerate() {
            if let Some(t) = pose.targets[k] {
                held[k] = match t {
                    PoseTarget::Position { angle, .. } => {
                        let q = obs.positions[k];
                        // A continuous joint goes the short way: aim at the nearest turn.
                        JointTarget::Position(if self.wrap[k] { q + wrapped(angle, q) } else { angle })
                    }
                    PoseTarget::Velocity(v) => JointTarget::Velocity(v),
                };
            }
            *o = held[k];
        }
    }

    fn period(&self) -> Option<f64> {
        None
    }

    fn completed_cycles(&self) -> usize {
        self.passes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use modbot_core::ModuleCatalog;
    use std::collections::BTreeMap;

    fn obs<'a>(q: &'a [f64], sensors: &'a BTreeMap<String, Vec<f64>>) -> Observation<'a> {
        Observation {
            time: 0.0,
            positions: q,
            velocities: q,
            base: nalgebra::Isometry3::identity(),
            sensors,
        }
    }

    fn two_poses() -> PoseSequence {
        let p = |name: &str, a: f64| Pose {
            name: name.into(),
            targets: vec![
                Some(PoseTarget::Position {
                    angle: a,
                    tolerance: 0.05,
                }),
                None,
            ],
            hold_s: 0.0,
        };
        let pos = JointMode::Position { wrap: false };
        PoseSequence::new("t", vec![p("up", 0.5), p("down", -0.5)], vec![pos, pos], true).unwrap()
    }

    #[test]
    fn advances_only_when_the_listed_joints_are_within_tolerance() {
        let mut s = two_poses();
        let none = BTreeMap::new();
        let mut out = [JointTarget::Position(0.0); 2];
        s.step(0.01, &obs(&[0.0, 0.3], &none), &mut out);
        assert_eq!(out, [JointTarget::Position(0.5), JointTarget::Position(0.3)]);
        s.step(0.01, &obs(&[0.44, 0.3], &none), &mut out);
        assert_eq!(s.current_pose(), 0, "0.06 rad away is not within 0.05");
        s.step(0.01, &obs(&[0.46, 0.3], &none), &mut out);
        assert_eq!((s.current_pose(), out[0]), (1, JointTarget::Position(-0.5)));
        assert_eq!(s.completed_cycles(), 0);
        s.step(0.01, &obs(&[-0.5, 0.3], &none), &mut out);
        assert_eq!((s.current_pose(), s.completed_cycles()), (0, 1));
    }

    #[test]
    fn continuous_joints_take_the_short_way_round() {
        let pose = Pose {
            name: "turn".into(),
            targets: vec![Some(PoseTarget::Position {
                angle: 0.1,
                tolerance: 0.05,
            })],
            hold_s: 0.0,
        };
        let mut s = PoseSequence::new("w", vec![pose], vec![JointMode::Position { wrap: true }], true).unwrap();
        let none = BTreeMap::new();
        let mut out = [JointTarget::Position(0.0)];
        // At 4π − 0.2 the target 0.1 is 0.3 ahead, not 4π − 0.3 behind.
        let q = 4.0 * PI - 0.2;
        s.step(0.01, &obs(&[q], &none), &mut out);
        assert!((out[0].value() - (q + 0.3)).abs() < 1e-12, "{:?}", out[0]);
        // And 2π + 0.12 counts as reached.
        s.step(0.01, &obs(&[TAU + 0.12], &none), &mut out);
        assert_eq!(s.completed_cycles(), 1);
    }

    #[test]
    fn hold_times_and_bad_poses() {
        let pose = Pose {
            name: "roll".into(),
            targets: vec![Some(PoseTarget::Velocity(3.0))],
            hold_s: 0.0,
        };
        let wheel = [JointMode::Velocity];
        let e = PoseSequence::new("w", vec![pose.clone()], wheel.to_vec(), true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("w.roll.hold_s"), "{e}");
        let timed = Pose {
            hold_s: 0.05,
            ..pose.clone()
        };
        let e = PoseSequence::new("w", vec![timed], vec![JointMode::Position { wrap: true }], true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("w.roll.targets[0]") && e.contains("velocity-driven"), "{e}");
        let mut s = PoseSequence::new("w", vec![Pose { hold_s: 0.05, ..pose }], wheel.to_vec(), true).unwrap();
        let none = BTreeMap::new();
        let mut out = [JointTarget::Position(0.0)];
        for _ in 0..4 {
            s.step(0.01, &obs(&[0.0], &none), &mut out);
        }
        assert_eq!((out[0], s.completed_cycles()), (JointTarget::Velocity(3.0), 0));
        s.step(0.01, &obs(&[0.0], &none), &mut out);
        assert_eq!(s.completed_cycles(), 1);
        // A wheel the first pose does not list starts at rest, not at a position.
        let arm = Pose {
            name: "arm".into(),
            targets: vec![
                Some(PoseTarget::Position {
                    angle: 0.2,
                    tolerance: 0.05,
                }),
                None,
            ],
            hold_s: 0.0,
        };
        let modes = vec![JointMode::Position { wrap: false }, JointMode::Velocity];
        let mut s = PoseSequence::new("a", vec![arm], modes, true).unwrap();
        let mut out = [JointTarget::Position(0.0); 2];
        s.step(0.01, &obs(&[0.0, 7.0], &none), &mut out);
        assert_eq!(out, [JointTarget::Position(0.2), JointTarget::Velocity(0.0)]);
    }

    #[test]
    fn files_are_checked_against_the_robot() {
        let c = ModuleCatalog::builtin();
        let robot = Topology::from_spec(&"pp:2".parse().unwrap(), &c).unwrap();
        let ok = "name: wave\nposes:\n  - {name: a, targets: {joint_1: {position_deg: 30}}}\n  - {name: b, targets: {joint_1: {position_deg: -30, tolerance_deg: 2}}}\n";
        let s = PoseSequence::from_yaml(ok, "w.yaml", &robot).unwrap();
        assert_eq!(
            s.poses()[1].targets[0],
            Some(PoseTarget::Position {
                angle: (-30f64).to_radians(),
                tolerance: 2f64.to_radians()
            })
        );
        // The servo's own tolerance (5°) when none is given.
        assert_eq!(
            s.poses()[0].targets[0],
            Some(PoseTarget::Position {
                angle: 30f64.to_radians(),
                tolerance: 5f64.to_radians()
            })
        );
        for (text, named) in [
            (
                ok.replace("joint_1: {position_deg: 30}", "joint_9: {position_deg: 30}"),
                "joint_9",
            ),
            (ok.replace("position_deg: 30}", "position_deg: 120}"), "[-90, 90]"),
            (
                ok.replace(
                    "{name: a, targets: {joint_1: {position_deg: 30}}}",
                    "{name: a, hold_s: 0.1, targets: {joint_1: {velocity_deg_s: 30}}}",
                ),
                "position-driven",
            ),
            (ok.replace("{name: a,", "{name: a, speed: 2,"), "speed"),
            (
                ok.replace("position_deg: 30}", "position_deg: 30, velocity_deg_s: 3}"),
                "both position_deg",
            ),
            (
                ok.replace(
                    "{name: a, targets: {joint_1: {position_deg: 30}}}",
                    "{name: a, hold_s: 0.1, targets: {joint_1: {}}}",
                ),
                "neither position_deg",
            ),
            (
                ok.replace("tolerance_deg: 2", "tolerance_deg: 0"),
                "poses[1].targets.joint_1",
            ),
            (
                "name: one\nposes:\n  - {name: a, targets: {joint_1: {position_deg: 30}}}\n".into(),
                "poses[0].hold_s",
            ),
            ("name: none\nposes: []\n".into(), "at least one pose"),
        ] {
            let e = PoseSequence::from_yaml(&text, "w.yaml", &robot)
                .unwrap_err()
                .to_string();
            assert!(e.contains(named) && e.contains("w.yaml"), "{named}: {e}");
        }
    }
}
