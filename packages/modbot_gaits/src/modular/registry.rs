//! Building a modular controller from a name, the robot's joint names and parameters.
//!
//! The robot is recognised from its joint names: `m1_*` is the lone `wheelfoot` module,
//! `role1_*` … `role6_*` a six-module configuration. The quadruped and the wheeled
//! configuration have the same joint names, so a six-module robot's gait is named by a
//! name only one of them has (`trot`, `drive`, …) or qualified by the robot
//! (`quadruped/stand`, `wheeled/goto`); any name may be qualified.

use std::collections::BTreeMap;

use super::quadruped::{PassOver, QuadGait, QuadGoto, QuadWalk, STEP_HOLD_S};
use super::single::{Direction, HeadingBands, Inchworm, InchwormGait, Pivot, SingleGoto, StepTable, StepTime};
use super::wheeled::{WheelCommand, WheeledDrive, WheeledGoto, WheeledPose};
use super::{Goal, ModuleJoints, WHEEL_MAX_SPEED_DEG_S};
use crate::controller::Controller;
use crate::error::{GaitError, Result};

/// The robots these controllers drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModularRobot {
    /// One module, `m1`.
    Wheelfoot,
    /// Six modules `role1` … `role6` as a quadruped.
    Quadruped,
    /// Six modules `role1` … `role6` as a 4-wheeled skid-steer vehicle.
    Wheeled,
}

impl ModularRobot {
    /// Every robot.
    pub const ALL: [ModularRobot; 3] = [ModularRobot::Wheelfoot, ModularRobot::Quadruped, ModularRobot::Wheeled];

    /// The robot's name (its robot file's).
    pub fn name(self) -> &'static str {
        match self {
            ModularRobot::Wheelfoot => "wheelfoot",
            ModularRobot::Quadruped => "quadruped",
            ModularRobot::Wheeled => "wheeled",
        }
    }

    /// The gaits it has.
    pub fn gaits(self) -> &'static [&'static str] {
        match self {
            ModularRobot::Wheelfoot => &[
                "inchworm_fwd_high",
                "inchworm_fwd_low",
                "inchworm_bwd_high",
                "inchworm_bwd_low",
                "pivot",
                "goto",
            ],
            ModularRobot::Quadruped => &["stand", "trot", "sidle", "pass_over", "goto"],
            ModularRobot::Wheeled => &["stand", "drive", "spin", "low_pose", "goto"],
        }
    }

    /// The module prefixes of its joint names.
    fn modules(self) -> &'static [&'static str] {
        match self {
            ModularRobot::Wheelfoot => &["m1"],
            _ => &["role1", "role2", "role3", "role4", "role5", "role6"],
        }
    }
}

/// How a parameter's value is checked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamKind {
    /// Any value in [min, max].
    Real,
    /// A value in (0, max] (`min` is ignored).
    Positive,
    /// A whole number in [min, max].
    Integer,
    /// One of these values.
    OneOf(&'static [f64]),
}

/// One parameter of a modular gait.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParamDef {
    /// Key (units in the name when not SI).
    pub key: &'static str,
    /// Default; `None` = required.
    pub default: Option<f64>,
    /// Lowest allowed.
    pub min: f64,
    /// Highest allowed.
    pub max: f64,
    /// How it is checked.
    pub kind: ParamKind,
    /// One line on what it is.
    pub doc: &'static str,
}

const fn real(key: &'static str, default: Option<f64>, min: f64, max: f64, doc: &'static str) -> ParamDef {
    ParamDef {
        key,
        default,
        min,
        max,
        kind: ParamKind::Real,
        doc,
    }
}

const fn positive(key: &'static str, default: f64, max: f64, doc: &'static str) -> ParamDef {
    ParamDef {
        key,
        default: Some(default),
        min: 0.0,
        max,
        kind: ParamKind::Positive,
        doc,
    }
}

const fn one_of(key: &'static str, default: f64, values: &'static [f64], doc: &'static str) -> ParamDef {
    ParamDef {
        key,
        default: Some(default),
        min: f64::NEG_INFINITY,
        max: f64::INFINITY,
        kind: ParamKind::OneOf(values),
        doc,
    }
}

const W: f64 = WHEEL_MAX_SPEED_DEG_S;

const TURN: ParamDef = positive(
    "turn_speed_deg_s",
    300.0,
    W,
    "wheel speed while the heading error is above 5°, deg/s (text: 300)",
);
const FINE_TURN: ParamDef = positive(
    "fine_turn_speed_deg_s",
    90.0,
    W,
    "wheel speed while the heading error is between 0.5° and 5°, deg/s (text: 90)",
);
const X: ParamDef = real("x", None, -1000.0, 1000.0, "goal x in the world frame, m");
const Y: ParamDef = real("y", None, -1000.0, 1000.0, "goal y in the world frame, m");
const YAW: ParamDef = real(
    "yaw_deg",
    Some(0.0),
    -360.0,
    360.0,
    "goal heading in the world frame, deg",
);
const STOP: ParamDef = positive(
    "stop_distance_m",
    0.1,
    10.0,
    "the goal is reached within this distance, m",
);
const DIRECTION: ParamDef = one_of("direction", 1.0, &[1.0, -1.0], "+1 or -1 (the sign of s)");
const SWING: ParamDef = real("swing_deg", Some(30.0), 0.0, 60.0, "swing s, deg (code: 30)");
const STEER: f64 = 30.0;
const SPEED: ParamDef = real(
    "speed_deg_s",
    Some(360.0),
    -W,
    W,
    "wheel joint speed, deg/s, within the wheel's 360 deg/s",
);
const GOTO_SPEED: ParamDef = positive(
    "speed_deg_s",
    360.0,
    W,
    "wheel joint speed, deg/s, within the wheel's 360 deg/s",
);
const CYCLE: ParamDef = positive("cycle_s", 1.0, 600.0, "seconds of wheel motion per notional cycle");

const INCHWORM: &[ParamDef] = &[
    real(
        "heading_deg",
        Some(0.0),
        -180.0,
        180.0,
        "heading to hold, relative to the start heading, deg",
    ),
    TURN,
    FINE_TURN,
];

const PIVOT: &[ParamDef] = &[
    real(
        "heading_deg",
        Some(180.0),
        -180.0,
        180.0,
        "heading to turn to, relative to the start heading, deg",
    ),
    TURN,
    FINE_TURN,
];

const SINGLE_GOTO: &[ParamDef] = &[
    X,
    Y,
    YAW,
    positive(
        "step_fwd_high_m",
        0.0635,
        1.0,
        "forward high gait's step per cycle, m (Table 3.12, μ = 1)",
    ),
    positive("cycle_fwd_high_s", 0.95, 600.0, "forward high gait's cycle time, s"),
    positive("step_fwd_low_m", 0.0162, 1.0, "forward low gait's step per cycle, m"),
    positive("cycle_fwd_low_s", 0.65, 600.0, "forward low gait's cycle time, s"),
    positive(
        "step_bwd_high_m",
        0.0233,
        1.0,
        "backward high gait's step per cycle, m (Table 3.13)",
    ),
    positive("cycle_bwd_high_s", 1.05, 600.0, "backward high gait's cycle time, s"),
    positive("step_bwd_low_m", 0.0123, 1.0, "backward low gait's step per cycle, m"),
    positive("cycle_bwd_low_s", 0.80, 600.0, "backward low gait's cycle time, s"),
    positive("t180_s", 4.20, 600.0, "time of a 180° pivot, s (Table 3.14)"),
    one_of(
        "forced_direction",
        0.0,
        &[0.0, 1.0, -1.0],
        "0 = least time, +1 forward, -1 backward",
    ),
    TURN,
    FINE_TURN,
];

const HOLD: ParamDef = real(
    "hold_s",
    Some(STEP_HOLD_S),
    0.0,
    1.0,
    "time from a step reached to the next step's order, s (the source's order/done round trip, fitted: decision 0057)",
);

const TROT: &[ParamDef] = &[
    DIRECTION,
    real("r", Some(0.0), -STEER, STEER, "right-leg steering r, deg (Table 3.21)"),
    real("l", Some(0.0), -STEER, STEER, "left-leg steering l, deg"),
    SWING,
    HOLD,
];

// The sidle's swing is the thesis text's (BJ2 −30 … 90, s = 60), not the code's (s = 30,
// 0 … 60): the text's range is the one whose steps match Table 3.27 (decision 0024).
const SIDLE: &[ParamDef] = &[
    DIRECTION,
    real("f", Some(0.0), -STEER, STEER, "front-leg steering f, deg (Table 3.22)"),
    real("b", Some(0.0), -STEER, STEER, "back-leg steering b, deg"),
    real(
        "swing_deg",
        Some(60.0),
        0.0,
        60.0,
        "swing s, deg (text: 60, BJ2 −30…90; code: 30)",
    ),
    HOLD,
];

const PASS_OVER: &[ParamDef] = &[ParamDef {
    key: "cycles",
    default: Some(2.0),
    min: 1.0,
    max: 100.0,
    kind: ParamKind::Integer,
    doc: "pass-over cycles before standing (code: 2)",
}];

const QUAD_GOTO: &[ParamDef] = &[
    X,
    Y,
    YAW,
    STOP,
    real(
        "align_deg",
        Some(0.0),
        0.0,
        90.0,
        "at the goal, turn on the spot to the goal heading within this, deg (0: no turn, the source's; else at least 1)",
    ),
];

const DRIVE: &[ParamDef] = &[SPEED, CYCLE];

const WHEELED_GOTO: &[ParamDef] = &[
    X,
    Y,
    YAW,
    GOTO_SPEED,
    STOP,
    one_of(
        "low_pose",
        0.0,
        &[0.0, 1.0],
        "1 = drive in the low pose (pass under a lath)",
    ),
];

/// The parameters of a gait of a robot (`None` if it has no such gait).
pub fn params_of(robot: ModularRobot, gait: &str) -> Option<&'static [ParamDef]> {
    Some(match (robot, gait) {
        (
            ModularRobot::Wheelfoot,
            "inchworm_fwd_high" | "inchworm_fwd_low" | "inchworm_bwd_high" | "inchworm_bwd_low",
        ) => INCHWORM,
        (ModularRobot::Wheelfoot, "pivot") => PIVOT,
        (ModularRobot::Wheelfoot, "goto") => SINGLE_GOTO,
        (ModularRobot::Quadruped | ModularRobot::Wheeled, "stand") => &[],
        (ModularRobot::Quadruped, "trot") => TROT,
        (ModularRobot::Quadruped, "sidle") => SIDLE,
        (ModularRobot::Quadruped, "pass_over") => PASS_OVER,
        (ModularRobot::Quadruped, "goto") => QUAD_GOTO,
        (ModularRobot::Wheeled, "drive" | "spin" | "low_pose") => DRIVE,
        (ModularRobot::Wheeled, "goto") => WHEELED_GOTO,
        _ => return None,
    })
}

/// Checked values: defaults overlaid with the user's.
struct Values {
    gait: String,
    values: BTreeMap<&'static str, f64>,
}

impl Values {
    fn new(gait: &str, defs: &'static [ParamDef], given: &BTreeMap<String, f64>) -> Result<Values> {
        let mut values = BTreeMap::new();
        for (key, &value) in given {
            let def = defs
                .iter()
                .find(|d| d.key == key)
                .ok_or_else(|| GaitError::UnknownKey {
                    gait: gait.to_string(),
                    key: key.clone(),
                    known: if defs.is_empty() {
                        "no parameters".to_string()
                    } else {
                        defs.iter().map(|d| d.key).collect::<Vec<_>>().join(", ")
                    },
                })?;
            check(gait, def, value)?;
            values.insert(def.key, value);
        }
        for def in defs {
            match (values.contains_key(def.key), def.default) {
                (true, _) => {}
                (false, Some(v)) => {
                    values.insert(def.key, v);
                }
                (false, None) => {
                    return Err(GaitError::Value {
                        key: format!("{gait}.{}", def.key),
                        value: "missing".into(),
                        expected: format!("{} (required)", def.doc),
                    });
                }
            }
        }
        Ok(Values {
            gait: gait.to_string(),
            values,
        })
    }

    fn get(&self, key: &str) -> f64 {
        // Every key of the gait's table has a value after `new`.
        self.values.get(key).copied().unwrap_or(f64::NAN)
    }

    fn refuse(&self, key: &str, expected: String) -> GaitError {
        GaitError::Value {
            key: format!("{}.{key}", self.gait),
            value: self.get(key).to_string(),
            expected,
        }
    }
}

fn check(gait: &str, def: &ParamDef, value: f64) -> Result<()> {
    let ok = value.is_finite()
        && match def.kind {
            ParamKind::Real => (def.min..=def.max).contains(&value),
            ParamKind::Positive => value > 0.0 && value <= def.max,
            ParamKind::Integer => (def.min..=def.max).contains(&value) && value.fract() == 0.0,
            ParamKind::OneOf(set) => set.contains(&value),
        };
    if ok {
        return Ok(());
    }
    let range = match def.kind {
        ParamKind::Real => format!("a value in [{}, {}]", def.min, def.max),
        ParamKind::Positive => format!("a value in (0, {}]", def.max),
        ParamKind::Integer => format!("a whole number in [{}, {}]", def.min, def.max),
        ParamKind::OneOf(set) => format!(
            "one of {}",
            set.iter().map(f64::to_string).collect::<Vec<_>>().join(", ")
        ),
    };
    Err(GaitError::Value {
        key: format!("{gait}.{}", def.key),
        value: value.to_string(),
        expected: format!("{range}: {}", def.doc),
    })
}

/// The robot whose joints these are, with each module's joint indices; refuses any other
/// set of joint names.
pub fn recognise(joint_names: &[String]) -> Result<(&'static [ModularRobot], Vec<ModuleJoints>)> {
    const SINGLE: &[ModularRobot] = &[ModularRobot::Wheelfoot];
    const SIX: &[ModularRobot] = &[ModularRobot::Quadruped, ModularRobot::Wheeled];
    for robots in [SINGLE, SIX] {
        let found: Option<Vec<_>> = robots[0]
            .modules()
            .iter()
            .map(|p| ModuleJoints::find(p, joint_names))
            .collect();
        if let Some(found) = found.filter(|f| f.len() * super::MODULE_JOINTS.len() == joint_names.len()) {
            return Ok((robots, found));
        }
    }
    Err(GaitError::Value {
        key: "joint_names".into(),
        value: joint_names.join(", "),
        expected: "the joints of the wheelfoot module (m1_front_joint, m1_back_joint1, m1_back_joint2, m1_cam_pan, m1_cam_tilt) or of the six-module quadruped/wheeled robots (role1_front_joint … role6_cam_tilt), nothing else".into(),
    })
}

/// Builds the controller `name` for the robot with these joint names (command order) and
/// parameters. `name` is a gait of the robot, or `robot/gait` (`quadruped/goto`); `stand`
/// and `goto` of a six-module robot must be qualified, since the quadruped and the wheeled
/// robot have the same joint names.
///
/// | robot | gaits | parameters |
/// |---|---|---|
/// | wheelfoot | `inchworm_fwd_high`, `inchworm_fwd_low`, `inchworm_bwd_high`, `inchworm_bwd_low` | `heading_deg` (0), `turn_speed_deg_s` (300), `fine_turn_speed_deg_s` (90) |
/// | wheelfoot | `pivot` | `heading_deg` (180, relative), turn speeds |
/// | wheelfoot | `goto` | `x`, `y` (required), `yaw_deg` (0), `step_*_m`, `cycle_*_s`, `t180_s`, `forced_direction` (0), turn speeds |
/// | quadruped | `stand` | – |
/// | quadruped | `trot` | `direction` (±1), `r`, `l` (0), `swing_deg` (30), `hold_s` (0.02) |
/// | quadruped | `sidle` | `direction` (±1), `f`, `b` (0), `swing_deg` (60), `hold_s` (0.02) |
/// | quadruped | `pass_over` | `cycles` (2) |
/// | quadruped | `goto` | `x`, `y`, `yaw_deg` (0), `stop_distance_m` (0.1) |
/// | wheeled | `stand` | – |
/// | wheeled | `drive`, `spin`, `low_pose` | `speed_deg_s` (360, at most the wheel's 360), `cycle_s` (1) |
/// | wheeled | `goto` | `x`, `y`, `yaw_deg` (0), `speed_deg_s` (360), `stop_distance_m` (0.1), `low_pose` (0) |
pub fn build(name: &str, joint_names: &[String], params: &BTreeMap<String, f64>) -> Result<Box<dyn Controller>> {
    let (robots, _) = recognise(joint_names)?;
    let known = || {
        robots
            .iter()
            .flat_map(|r| r.gaits().iter().map(move |g| (r, g)))
            .map(|(r, g)| {
                let shared = robots.len() > 1 && robots.iter().filter(|o| o.gaits().contains(g)).count() > 1;
                if shared {
                    format!("{}/{g}", r.name())
                } else {
                    g.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (robot, gait) = match name.split_once('/') {
        Some((r, g)) => match robots.iter().find(|x| x.name() == r) {
            Some(robot) => (*robot, g),
            None => {
                return Err(GaitError::UnknownGait {
                    name: name.to_string(),
                    known: known(),
                });
            }
        },
        None => {
            let having: Vec<_> = robots.iter().filter(|r| r.gaits().contains(&name)).collect();
            match having[..] {
                [robot] => (*robot, name),
                [] => {
                    return Err(GaitError::UnknownGait {
                        name: name.to_string(),
                        known: known(),
                    });
                }
                _ => {
                    return Err(GaitError::Invalid {
                        gait: name.to_string(),
                        reason: format!(
                            "the quadruped and the wheeled robot have the same joints; name it {}",
                            having
                                .iter()
                                .map(|r| format!("`{}/{name}`", r.name()))
                                .collect::<Vec<_>>()
                                .join(" or ")
                        ),
                    });
                }
            }
        }
    };
    build_for(robot, gait, joint_names, params)
}

/// Builds gait `gait` of `robot` (no qualification) for these joint names and parameters.
pub fn build_for(
    robot: ModularRobot,
    gait: &str,
    joint_names: &[String],
    params: &BTreeMap<String, f64>,
) -> Result<Box<dyn Controller>> {
    let (robots, modules) = recognise(joint_names)?;
    if !robots.contains(&robot) {
        return Err(GaitError::WrongRobot {
            gait: gait.to_string(),
            needs: format!("the {} robot's joints", robot.name()),
            robot: robots.iter().map(|r| r.name()).collect::<Vec<_>>().join("/"),
        });
    }
    let defs = params_of(robot, gait).ok_or_else(|| GaitError::UnknownGait {
        name: gait.to_string(),
        known: robot.gaits().join(", "),
    })?;
    let v = Values::new(gait, defs, params)?;
    let n = joint_names.len();
    let goal = || Goal {
        x: v.get("x"),
        y: v.get("y"),
        yaw: v.get("yaw_deg").to_radians(),
    };
    if robot == ModularRobot::Wheelfoot {
        let m = modules[0];
        let bands = HeadingBands {
            fast_deg_s: v.get("turn_speed_deg_s"),
            slow_deg_s: v.get("fine_turn_speed_deg_s"),
        };
        let inchworm = |g| Inchworm::new(m, n, g, v.get("heading_deg"), bands);
        return Ok(match gait {
            "inchworm_fwd_high" => Box::new(inchworm(InchwormGait::FwdHigh)),
            "inchworm_fwd_low" => Box::new(inchworm(InchwormGait::FwdLow)),
            "inchworm_bwd_high" => Box::new(inchworm(InchwormGait::BwdHigh)),
            "inchworm_bwd_low" => Box::new(inchworm(InchwormGait::BwdLow)),
            "pivot" => Box::new(Pivot::new(m, n, v.get("heading_deg"), bands)),
            _ => {
                let st = |d: &str, c: &str| StepTime {
                    step_m: v.get(d),
                    cycle_s: v.get(c),
                };
                let table = StepTable {
                    fwd_high: st("step_fwd_high_m", "cycle_fwd_high_s"),
                    fwd_low: st("step_fwd_low_m", "cycle_fwd_low_s"),
                    bwd_high: st("step_bwd_high_m", "cycle_bwd_high_s"),
                    bwd_low: st("step_bwd_low_m", "cycle_bwd_low_s"),
                    t180_s: v.get("t180_s"),
                };
                for (low, high) in [
                    ("step_fwd_low_m", "step_fwd_high_m"),
                    ("step_bwd_low_m", "step_bwd_high_m"),
                ] {
                    if v.get(low) >= v.get(high) {
                        return Err(v.refuse(low, format!("a step shorter than {high} = {}", v.get(high))));
                    }
                }
                let forced = match v.get("forced_direction") {
                    x if x > 0.0 => Some(Direction::Forward),
                    x if x < 0.0 => Some(Direction::Backward),
                    _ => None,
                };
                Box::new(SingleGoto::new(m, n, goal(), table, forced, bands))
            }
        });
    }
    let roles: [ModuleJoints; 6] = [0, 1, 2, 3, 4, 5].map(|i| modules[i]);
    if robot == ModularRobot::Quadruped {
        let swing = || v.get("swing_deg") * v.get("direction");
        return Ok(match gait {
            "stand" => Box::new(QuadWalk::new("stand", roles, n, QuadGait::Stand)),
            "trot" => {
                let (r, l) = (v.get("r"), v.get("l"));
                // The hips swing at most ±60° (the 89.5 mm non-collision limit, §3.2).
                if v.get("swing_deg") + r.abs().max(l.abs()) > 60.0 {
                    return Err(v.refuse(
                        "swing_deg",
                        format!("swing_deg + max(|r|, |l|) ≤ 60 (the legs' non-collision limit); r = {r}, l = {l}"),
                    ));
                }
                Box::new(
                    QuadWalk::new("trot", roles, n, QuadGait::Trot { s: swing(), r, l }).with_hold(v.get("hold_s")),
                )
            }
            "sidle" => {
                // BJ2 = 30 ± (s + f or b) stays within [−60, 120] by the ranges of swing_deg
                // (≤ 60) and f, b (≤ 30): above the height constraint (−81) and within the
                // joint's design range (120).
                let (f, b) = (v.get("f"), v.get("b"));
                Box::new(
                    QuadWalk::new("sidle", roles, n, QuadGait::Sidle { s: swing(), f, b }).with_hold(v.get("hold_s")),
                )
            }
            "pass_over" => Box::new(PassOver::new(roles, n, v.get("cycles") as usize)),
            _ => {
                let goto = QuadGoto::new(roles, n, goal(), v.get("stop_distance_m"));
                let a = v.get("align_deg");
                if a == 0.0 {
                    Box::new(goto)
                } else if a < 1.0 {
                    return Err(v.refuse("align_deg", "0 (no turn) or at least 1 deg".to_string()));
                } else {
                    Box::new(goto.aligned_within(a))
                }
            }
        });
    }
    let drive = |pose, cmd| Box::new(WheeledDrive::new(gait, roles, n, pose, cmd, v.get("cycle_s")));
    Ok(match gait {
        "stand" => Box::new(WheeledDrive::new(
            "stand",
            roles,
            n,
            WheeledPose::Normal,
            WheelCommand::Stop,
            1.0,
        )),
        "drive" => drive(WheeledPose::Normal, WheelCommand::Straight(v.get("speed_deg_s"))),
        "spin" => drive(WheeledPose::Normal, WheelCommand::Spin(v.get("speed_deg_s"))),
        "low_pose" => drive(WheeledPose::Low, WheelCommand::Straight(v.get("speed_deg_s"))),
        _ => {
            let pose = if v.get("low_pose") == 1.0 {
                WheeledPose::Low
            } else {
                WheeledPose::Normal
            };
            Box::new(WheeledGoto::new(
                roles,
                n,
                pose,
                goal(),
                v.get("speed_deg_s"),
                v.get("stop_distance_m"),
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::JointTarget;
    use crate::modular::fake::{FakePlant, six_names, wheelfoot_names};

    fn p(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    fn err(name: &str, names: &[String], params: &[(&str, f64)]) -> String {
        match build(name, names, &p(params)) {
            Ok(c) => panic!("{name} with {params:?} was built: {}", c.name()),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn every_gait_builds_and_drives_its_interfaces() {
        let goal = [("x", 1.0), ("y", 0.5)];
        for robot in ModularRobot::ALL {
            let names = if robot == ModularRobot::Wheelfoot {
                wheelfoot_names()
            } else {
                six_names()
            };
            for gait in robot.gaits() {
                let params = if *gait == "goto" { p(&goal) } else { p(&[]) };
                let qualified = format!("{}/{gait}", robot.name());
                let mut c = build(&qualified, &names, &params).unwrap();
                assert_eq!(c.joint_count(), names.len());
                let mut plant = FakePlant::new(names.len());
                let t = plant.tick(c.as_mut(), 0.01).to_vec();
                for (name, t) in names.iter().zip(&t) {
                    // Velocity: the lone module's wheel and the wheeled robot's wheels 3–6.
                    let wheel = name.ends_with("front_joint")
                        && (robot == ModularRobot::Wheelfoot
                            || (robot == ModularRobot::Wheeled
                                && !name.starts_with("role1")
                                && !name.starts_with("role2")));
                    assert_eq!(
                        matches!(t, JointTarget::Velocity(_)),
                        wheel,
                        "{qualified}: {name} got {t:?}"
                    );
                    if name.contains("cam_") {
                        assert_eq!(*t, JointTarget::Position(0.0));
                    }
                }
            }
        }
        // Unqualified names that only one robot has.
        assert_eq!(build("trot", &six_names(), &p(&[])).unwrap().name(), "trot");
        assert_eq!(build("low_pose", &six_names(), &p(&[])).unwrap().name(), "low_pose");
        assert_eq!(build("pivot", &wheelfoot_names(), &p(&[])).unwrap().name(), "pivot");
        assert_eq!(build("goto", &wheelfoot_names(), &p(&goal)).unwrap().name(), "goto");
    }

    #[test]
    fn joints_are_found_by_name_in_any_order() {
        let mut names = six_names();
        names.reverse();
        let (robots, modules) = recognise(&names).unwrap();
        assert_eq!(robots, &[ModularRobot::Quadruped, ModularRobot::Wheeled]);
        assert_eq!(modules[0].fj, 29);
        assert_eq!(modules[5].tilt, 0);
        let mut extra = wheelfoot_names();
        extra.push("m1_extra".into());
        assert!(err("pivot", &extra, &[]).contains("joint_names"));
        assert!(err("pivot", &wheelfoot_names()[..4], &[]).contains("joint_names"));
    }

    #[test]
    fn unknown_gaits_list_the_robots_gaits() {
        let e = err("trot", &wheelfoot_names(), &[]);
        assert!(e.contains("unknown gait `trot`"), "{e}");
        for g in ModularRobot::Wheelfoot.gaits() {
            assert!(e.contains(g), "{e}");
        }
        let e = err("walk", &six_names(), &[]);
        assert!(
            e.contains("quadruped/stand")
                && e.contains("wheeled/goto")
                && e.contains("pass_over")
                && e.contains("drive"),
            "{e}"
        );
        let e = err("wheeled/trot", &six_names(), &[]);
        assert!(e.contains("unknown gait `trot`") && e.contains("low_pose"), "{e}");
        let e = err("quadruped/pivot", &wheelfoot_names(), &[]);
        assert!(e.contains("quadruped/pivot") && e.contains("inchworm_fwd_high"), "{e}");
        // Shared names of the six-module robots must be qualified.
        let e = err("stand", &six_names(), &[]);
        assert!(e.contains("`quadruped/stand` or `wheeled/stand`"), "{e}");
        assert!(build_for(ModularRobot::Quadruped, "trot", &wheelfoot_names(), &p(&[])).is_err());
    }

    #[test]
    fn unknown_and_bad_params_name_the_key() {
        let e = err("trot", &six_names(), &[("speed", 2.0)]);
        assert!(e.contains("`speed`") && e.contains("direction, r, l, swing_deg"), "{e}");
        let e = err("quadruped/stand", &six_names(), &[("r", 2.0)]);
        assert!(e.contains("`r`") && e.contains("no parameters"), "{e}");
        for (name, params, key) in [
            ("trot", vec![("direction", 0.5)], "trot.direction"),
            ("trot", vec![("r", f64::NAN)], "trot.r"),
            ("trot", vec![("l", 31.0)], "trot.l"),
            ("trot", vec![("swing_deg", 45.0), ("r", 20.0)], "trot.swing_deg"),
            ("sidle", vec![("f", -40.0)], "sidle.f"),
            ("sidle", vec![("swing_deg", 61.0)], "sidle.swing_deg"),
            ("trot", vec![("hold_s", -0.01)], "trot.hold_s"),
            ("trot", vec![("hold_s", f64::INFINITY)], "trot.hold_s"),
            ("sidle", vec![("hold_s", 1.5)], "sidle.hold_s"),
            ("pass_over", vec![("cycles", 1.5)], "pass_over.cycles"),
            ("pass_over", vec![("cycles", 0.0)], "pass_over.cycles"),
            ("quadruped/goto", vec![("x", 1.0)], "goto.y"),
            ("quadruped/goto", vec![("x", f64::INFINITY), ("y", 0.0)], "goto.x"),
            (
                "quadruped/goto",
                vec![("x", 1.0), ("y", 0.0), ("align_deg", 0.5)],
                "goto.align_deg",
            ),
            (
                "quadruped/goto",
                vec![("x", 1.0), ("y", 0.0), ("align_deg", 91.0)],
                "goto.align_deg",
            ),
            (
                "wheeled/goto",
                vec![("x", 1.0), ("y", 0.0), ("low_pose", 2.0)],
                "goto.low_pose",
            ),
            ("drive", vec![("cycle_s", 0.0)], "drive.cycle_s"),
        ] {
            let e = err(name, &six_names(), &params);
            assert!(e.contains(key), "{name} {params:?}: {e}");
        }
        for (name, params, key) in [
            ("pivot", vec![("heading_deg", 200.0)], "pivot.heading_deg"),
            (
                "inchworm_fwd_low",
                vec![("turn_speed_deg_s", 400.0)],
                "inchworm_fwd_low.turn_speed_deg_s",
            ),
            (
                "goto",
                vec![("x", 0.0), ("y", 0.0), ("forced_direction", 2.0)],
                "goto.forced_direction",
            ),
            (
                "goto",
                vec![("x", 0.0), ("y", 0.0), ("step_fwd_low_m", 0.07)],
                "goto.step_fwd_low_m",
            ),
            ("goto", vec![("x", 0.0), ("y", 0.0), ("t180_s", -1.0)], "goto.t180_s"),
        ] {
            let e = err(name, &wheelfoot_names(), &params);
            assert!(e.contains(key), "{name} {params:?}: {e}");
        }
    }

    #[test]
    fn wheel_speeds_above_the_joint_limit_are_refused() {
        for name in ["drive", "spin", "low_pose", "wheeled/goto"] {
            let goal = [("x", 1.0), ("y", 0.0)];
            let mut params = if name == "wheeled/goto" { goal.to_vec() } else { vec![] };
            params.push(("speed_deg_s", 360.0));
            assert!(build(name, &six_names(), &p(&params)).is_ok(), "{name} at 360");
            params.pop();
            params.push(("speed_deg_s", 361.0));
            match build(name, &six_names(), &p(&params)) {
                Err(GaitError::Value { key, value, expected }) => {
                    assert!(key.ends_with(".speed_deg_s"), "{key}");
                    assert_eq!(value, "361");
                    assert!(expected.contains("360"), "{expected}");
                }
                other => panic!("{name} at 361: {:?}", other.map(|c| c.name().to_string())),
            }
        }
        assert!(build("drive", &six_names(), &p(&[("speed_deg_s", -361.0)])).is_err());
        assert!(build("drive", &six_names(), &p(&[("speed_deg_s", -360.0)])).is_ok());
        let e = err("pivot", &wheelfoot_names(), &[("fine_turn_speed_deg_s", 361.0)]);
        assert!(e.contains("pivot.fine_turn_speed_deg_s"), "{e}");
    }

    #[test]
    fn params_reach_the_controllers() {
        // A trot backward with steering: step 2 of Table 3.21 with s = -30, r = 5, l = -5.
        let names = six_names();
        let mut c = build("trot", &names, &p(&[("direction", -1.0), ("r", 5.0), ("l", -5.0)])).unwrap();
        let mut plant = FakePlant::new(30);
        let mut fr = Vec::new();
        for _ in 0..400 {
            let t = plant.tick(c.as_mut(), 0.01).to_vec();
            let v = (t[10].value().to_degrees() * 1e6).round() / 1e6; // role3_front_joint
            if fr.last() != Some(&v) {
                fr.push(v);
            }
        }
        assert_eq!(&fr[..3], &[0.0, 25.0, 0.0], "FR: -s-r = 25 at step 2, {fr:?}");
        // The order/done hold: the plant reaches each step on the tick it is ordered (it
        // is found reached at the next), so a cycle (5 steps) takes 5 ticks plus 5 holds.
        // Over 2 s: at hold 0 about 40 cycles, at the default 0.02 s about 13, at 0.2 s
        // under 2.
        let cycles = |hold: Option<f64>| {
            let mut v = vec![("direction", 1.0)];
            v.extend(hold.map(|h| ("hold_s", h)));
            let mut c = build("trot", &names, &p(&v)).unwrap();
            let mut plant = FakePlant::new(30);
            plant.max_speed = 1e6;
            for _ in 0..200 {
                plant.tick(c.as_mut(), 0.01);
            }
            c.completed_cycles()
        };
        let (none, default, slow) = (cycles(Some(0.0)), cycles(None), cycles(Some(0.2)));
        assert!(
            none >= 30 && (10..=16).contains(&default) && slow <= 2,
            "{none}, {default}, {slow}"
        );
        // A drive at 100 deg/s: right wheels -100.
        let mut c = build("drive", &names, &p(&[("speed_deg_s", 100.0)])).unwrap();
        for _ in 0..200 {
            plant.tick(c.as_mut(), 0.01);
        }
        assert!((plant.last[10].value().to_degrees() + 100.0).abs() < 1e-9);
        assert!((plant.last[15].value().to_degrees() - 100.0).abs() < 1e-9);
    }
}
