//! Teleoperation without middleware: velocities (a `geometry_msgs/Twist` on `cmd_vel`, a
//! joystick's axes, the keys of `modbot teleop`) mapped onto a robot's gait requests
//! (decision record 0041). `teleop_node` and `modbot teleop` are this module behind their
//! inputs; nothing here knows about ROS or terminals.
//!
//! - [`TeleopInput`]: forward speed (m/s), sideways speed (m/s, left positive) and yaw rate
//!   (rad/s, anticlockwise positive), as a Twist has them ([`TeleopInput::from_twist`]) or
//!   from a joystick through a [`JoyMap`] (axes, scales, dead zone, enable button).
//! - [`TeleopProfile`]: what the robot can do, from its modules ([`TeleopProfile::of`]): a
//!   pitch-yaw snake (`straight`, `turning`, `rolling`), the pitch-yaw-pitch robot (its
//!   `pyp_` gaits), a pitch-pitch caterpillar (forward and back only), the wheel-foot
//!   quadruped (`trot` and `sidle` with the source's steering states) and the wheeled
//!   vehicle (`drive` and `spin`, skid-steer).
//! - [`Teleop`]: the state machine. Each input is read as a fraction of the robot's full
//!   speed ([`FullScale`]), quantised into levels with hysteresis, so a noisy stick does not
//!   flood gait_node; a [`GaitRequest`] comes out only when the request changes (and, if
//!   asked, as a slow heartbeat). No input for `timeout_s` (the dead-man) gives one stop,
//!   then silence until input returns. Garbage (NaN, infinity, absurd values) is refused
//!   with an error naming the field, and does not count as input.
//!
//! ```
//! use modbot_app::teleop::{Teleop, TeleopInput, TeleopProfile, TeleopSettings};
//!
//! let robot = modbot_app::load_robot("py:8", &modbot_core::ModuleCatalog::builtin())?;
//! let profile = TeleopProfile::of(&robot)?;
//! let mut teleop = Teleop::new(profile, TeleopSettings::for_profile(profile))?;
//! let full = teleop.settings().full;
//! let go = teleop.input(0.0, TeleopInput::new(full.linear_m_s, 0.0, 0.0))?;
//! assert_eq!(go.map(|r| r.gait), Some("straight".to_string()));
//! assert!(teleop.tick(0.4).is_none()); // within the dead-man's 0.5 s
//! assert!(teleop.tick(0.6).is_some_and(|r| r.stop)); // released: one stop
//! assert!(teleop.tick(5.0).is_none()); // then silence
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt::Write as _;

use modbot_core::Topology;
use modbot_gaits::JointKind;
use modbot_gaits::modular::{ModularRobot, WHEEL_MAX_SPEED_DEG_S};

use crate::controller::modular_robot;
use crate::gait_driver::GaitRequest;

/// The dead-man's default: no input for this long, s, stops the robot.
pub const DEFAULT_TIMEOUT_S: f64 = 0.5;

/// The largest magnitude an input may have (m/s or rad/s). Values above a robot's full
/// scale saturate; values above this are garbage and refused.
pub const INPUT_LIMIT: f64 = 100.0;

/// Speed levels per direction: an input moves in steps of a tenth of the full speed.
pub const SPEED_LEVELS: i32 = 10;

/// The snake's turning offset O_h changes in steps of this, deg (the executive's step,
/// `modbot_planner::executive`: every change restarts the gait's blend).
pub const TURN_STEP_DEG: f64 = 2.5;

/// The quadruped's steering states for a turn to the left (anticlockwise), mildest first:
/// (r, l) of the trot (Table 3.21) and (f, b) of the sidle (Table 3.22), deg; the passive
/// states (0, −5) and (5, −5), the aggressive ones (10, −10) and (15, −15) (spec seed-000
/// Tables 3.23–3.26). A turn to the right mirrors them: (l, r). They are the ladder of the
/// source's quadruped position controller (`modbot_gaits::modular::quadruped::decide`).
pub const STEERING_STATES: [(f64, f64); 4] = [(0.0, -5.0), (5.0, -5.0), (10.0, -10.0), (15.0, -15.0)];

/// The `direction` of the rolling gaits that rolls the chain to its left (+y); the source
/// does not say which way its rolling goes. The unit test
/// `sine_requests_move_a_snake_the_way_asked` checks it on the embedded simulator.
pub const ROLLING_LEFT_DIRECTION: i8 = -1;

/// How far past the middle between two levels an input must go to change level, in levels:
/// a stick resting near a boundary does not chatter between the two.
const HYSTERESIS: f64 = 0.25;

/// Axis values of a joystick may exceed ±1 by this much (float noise of a driver).
const AXIS_TOLERANCE: f64 = 1e-3;

/// Why an input or a setting was refused, or a robot has no teleoperation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TeleopError {
    /// A value is NaN or infinite.
    #[error("{field} is {value}: not a finite number")]
    NotFinite {
        /// The field (`linear.x`, `axes[1]`, …).
        field: String,
        /// Its value.
        value: f64,
    },
    /// A value is outside its range.
    #[error("{field} = {value} is outside [{min}, {max}]")]
    OutOfRange {
        /// The field.
        field: String,
        /// Its value.
        value: f64,
        /// Lowest allowed.
        min: f64,
        /// Highest allowed.
        max: f64,
    },
    /// A joystick message is shorter than the map reads.
    #[error("{field} is missing: the message has {len} {kind}")]
    Missing {
        /// What the map reads (`axes[3] (linear_x)`).
        field: String,
        /// How many the message has.
        len: usize,
        /// `axes` or `buttons`.
        kind: &'static str,
    },
    /// The robot is not one teleoperation can drive.
    #[error("robot `{robot}` has no teleoperation: {why}")]
    NoProfile {
        /// The robot's name.
        robot: String,
        /// Why.
        why: String,
    },
    /// A setting is out of its range.
    #[error("setting `{key}` = {value}: expected {expected}")]
    Setting {
        /// The setting.
        key: &'static str,
        /// Its value.
        value: f64,
        /// What it must be.
        expected: String,
    },
}

fn checked(field: &str, value: f64, limit: f64) -> Result<f64, TeleopError> {
    if !value.is_finite() {
        return Err(TeleopError::NotFinite {
            field: field.to_string(),
            value,
        });
    }
    if value.abs() > limit {
        return Err(TeleopError::OutOfRange {
            field: field.to_string(),
            value,
            min: -limit,
            max: limit,
        });
    }
    Ok(value)
}

/// What the operator asks for, in the robot's frame (REP 103), as a Twist says it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TeleopInput {
    /// Forward speed, m/s (negative: back).
    pub linear_x: f64,
    /// Sideways speed, m/s (positive: to the left).
    pub linear_y: f64,
    /// Yaw rate, rad/s (positive: anticlockwise, to the left).
    pub angular_z: f64,
}

impl TeleopInput {
    /// No motion: the robot stops.
    pub const ZERO: TeleopInput = TeleopInput {
        linear_x: 0.0,
        linear_y: 0.0,
        angular_z: 0.0,
    };

    /// An input from its three values.
    pub fn new(linear_x: f64, linear_y: f64, angular_z: f64) -> TeleopInput {
        TeleopInput {
            linear_x,
            linear_y,
            angular_z,
        }
    }

    /// The input of a Twist's linear and angular vectors. The three components a ground
    /// robot cannot follow (linear z, angular x and y) are ignored, but a Twist with any
    /// component NaN, infinite or beyond [`INPUT_LIMIT`] is garbage and refused, naming it.
    pub fn from_twist(linear: [f64; 3], angular: [f64; 3]) -> Result<TeleopInput, TeleopError> {
        for (name, v) in ["linear.x", "linear.y", "linear.z"].iter().zip(linear) {
            checked(name, v, INPUT_LIMIT)?;
        }
        for (name, v) in ["angular.x", "angular.y", "angular.z"].iter().zip(angular) {
            checked(name, v, INPUT_LIMIT)?;
        }
        Ok(TeleopInput::new(linear[0], linear[1], angular[2]))
    }

    /// Refuses a value that is not finite or beyond [`INPUT_LIMIT`], naming the field.
    pub fn check(&self) -> Result<(), TeleopError> {
        checked("linear_x", self.linear_x, INPUT_LIMIT)?;
        checked("linear_y", self.linear_y, INPUT_LIMIT)?;
        checked("angular_z", self.angular_z, INPUT_LIMIT)?;
        Ok(())
    }
}

/// The input that means "full speed" on each axis: a larger input saturates (is clipped to
/// it), a smaller one is that fraction of the gait's top speed. Nominal values, from the
/// sources where they measured speeds; a joystick or `modbot teleop` works in fractions of
/// them, so they only matter for Twists from elsewhere.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FullScale {
    /// Forward speed at full stick, m/s.
    pub linear_m_s: f64,
    /// Sideways speed at full stick, m/s.
    pub lateral_m_s: f64,
    /// Yaw rate at full stick, rad/s.
    pub angular_rad_s: f64,
}

/// What a robot can do under teleoperation, and with which gaits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TeleopProfile {
    /// A pitch-yaw chain (`py:M`): `straight` forward and back (speed scale and direction),
    /// `turning` (its offset O_h, the sign the side), `rolling` sideways.
    Snake,
    /// The pitch-yaw-pitch robot (`pyp`): `pyp_straight`, `pyp_turning`, `pyp_rolling`.
    Pyp,
    /// A pitch-pitch chain (`pp:M`): `caterpillar`, forward and back only.
    Caterpillar,
    /// The wheel-foot quadruped: `trot` forward and back, `sidle` left and right, each with
    /// the steering states of the source ([`STEERING_STATES`]).
    Quadruped,
    /// The wheel-foot wheeled vehicle: `drive` forward and back, `spin` in place
    /// (skid-steer), at wheel speeds up to the wheel's 360 deg/s.
    Wheeled,
}

impl TeleopProfile {
    /// The profile of a robot: a wheel-foot robot by its shape (`modular_robot`), a chain
    /// of hinges by its joints' axes with the chain straight (all pitch: a caterpillar;
    /// pitch and yaw alternating: a snake, or the pitch-yaw-pitch robot with three). The
    /// lone wheel-foot module and anything else are refused, saying why.
    pub fn of(topology: &Topology) -> Result<TeleopProfile, TeleopError> {
        let refuse = |why: String| TeleopError::NoProfile {
            robot: topology.name.clone(),
            why,
        };
        match modular_robot(topology) {
            Some(ModularRobot::Quadruped) => return Ok(TeleopProfile::Quadruped),
            Some(ModularRobot::Wheeled) => return Ok(TeleopProfile::Wheeled),
            Some(ModularRobot::Wheelfoot) => {
                return Err(refuse(
                    "the lone wheel-foot module moves by inchworm gaits that hold a heading, not by speeds; \
                     teleoperate the quadruped or the wheeled vehicle"
                        .into(),
                ));
            }
            None => {}
        }
        let kinds = modbot_gaits::chain::joint_kinds(topology).map_err(|e| refuse(e.to_string()))?;
        let alternating = kinds
            .iter()
            .enumerate()
            .all(|(i, k)| *k == if i % 2 == 0 { JointKind::Pitch } else { JointKind::Yaw });
        match kinds.len() {
            0 | 1 => Err(refuse("a chain needs at least two hinges".into())),
            _ if kinds.iter().all(|k| *k == JointKind::Pitch) => Ok(TeleopProfile::Caterpillar),
            3 if alternating => Ok(TeleopProfile::Pyp),
            _ if alternating => Ok(TeleopProfile::Snake),
            _ => Err(refuse(
                "its hinges are neither all pitch (a caterpillar) nor pitch and yaw alternating from the tail (a snake)"
                    .into(),
            )),
        }
    }

    /// Its name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            TeleopProfile::Snake => "snake",
            TeleopProfile::Pyp => "pitch-yaw-pitch",
            TeleopProfile::Caterpillar => "caterpillar",
            TeleopProfile::Quadruped => "quadruped",
            TeleopProfile::Wheeled => "wheeled",
        }
    }

    /// The gaits it sends.
    pub fn gaits(self) -> &'static [&'static str] {
        match self {
            TeleopProfile::Snake => &["straight", "turning", "rolling"],
            TeleopProfile::Pyp => &["pyp_straight", "pyp_turning", "pyp_rolling"],
            TeleopProfile::Caterpillar => &["caterpillar"],
            TeleopProfile::Quadruped => &["trot", "sidle"],
            TeleopProfile::Wheeled => &["drive", "spin"],
        }
    }

    /// The nominal input of full speed (see [`FullScale`]).
    /// - Chains: twice the speed the shipped gaits reach at their own period (the default
    ///   top speed scale is 2): the 8-module caterpillar walks about 3 cm/s on the embedded
    ///   simulator, rolling about 17 cm a cycle of 2 s (Table 5.9 point A); the yaw rate is a
    ///   round figure for the sharpest default turn.
    /// - Quadruped: trot 0.085 m/s and sidle 0.061 m/s at μ = 1, and 20°/cycle of 1.25 s in
    ///   the most aggressive steering state (spec seed-000 Tables 3.23, 3.27).
    /// - Wheeled: the wheel's 360 deg/s on its 25 mm radius, 0.157 m/s; the yaw rate is a
    ///   nominal 0.5 rad/s (the source reports no x_ICR; `modbot calibrate skid-steer`
    ///   measures it).
    pub fn full_scale(self) -> FullScale {
        match self {
            TeleopProfile::Snake | TeleopProfile::Pyp => FullScale {
                linear_m_s: 0.06,
                lateral_m_s: 0.17,
                angular_rad_s: 0.2,
            },
            TeleopProfile::Caterpillar => FullScale {
                linear_m_s: 0.06,
                lateral_m_s: 0.06,
                angular_rad_s: 0.2,
            },
            TeleopProfile::Quadruped => FullScale {
                linear_m_s: 0.085,
                lateral_m_s: 0.061,
                angular_rad_s: 0.28,
            },
            TeleopProfile::Wheeled => FullScale {
                linear_m_s: WHEEL_MAX_SPEED_DEG_S.to_radians() * 0.025,
                lateral_m_s: 0.157,
                angular_rad_s: 0.5,
            },
        }
    }
}

/// How a [`Teleop`] maps and times its inputs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TeleopSettings {
    /// The dead-man: no input for this long, s, gives one stop ([`DEFAULT_TIMEOUT_S`]).
    pub timeout_s: f64,
    /// While moving, re-send the running request this often, s, so a gait_node with its
    /// watchdog on keeps going (a repeat is a heartbeat to it, not a restart); 0: never.
    pub heartbeat_s: f64,
    /// The inputs of full speed.
    pub full: FullScale,
    /// The speed scale (period divisor) of a chain's gait at full speed, in (0, 4] (the
    /// gait driver's range); default 2.
    pub max_speed_scale: f64,
    /// The snake's turning offset O_h at full yaw rate, deg, in [2.5, 90] (O_h's range is
    /// ±90); default 30, the executive's largest turn.
    pub max_turn_deg: f64,
}

impl TeleopSettings {
    /// The defaults for a profile: 0.5 s dead-man, no heartbeat, the profile's full scale,
    /// speed scale 2 and a 30° offset at full stick.
    pub fn for_profile(profile: TeleopProfile) -> TeleopSettings {
        TeleopSettings {
            timeout_s: DEFAULT_TIMEOUT_S,
            heartbeat_s: 0.0,
            full: profile.full_scale(),
            max_speed_scale: 2.0,
            max_turn_deg: 30.0,
        }
    }

    /// Refuses a setting out of its range, naming it.
    pub fn validate(&self) -> Result<(), TeleopError> {
        let within = |key: &'static str, value: f64, lo: f64, hi: f64, open_lo: bool| {
            let ok = value.is_finite() && value <= hi && if open_lo { value > lo } else { value >= lo };
            if ok {
                Ok(())
            } else {
                let open = if open_lo { "(" } else { "[" };
                Err(TeleopError::Setting {
                    key,
                    value,
                    expected: format!("a value in {open}{lo}, {hi}]"),
                })
            }
        };
        within("timeout_s", self.timeout_s, 0.0, 3600.0, true)?;
        within("heartbeat_s", self.heartbeat_s, 0.0, 3600.0, false)?;
        within("full.linear_m_s", self.full.linear_m_s, 0.0, INPUT_LIMIT, true)?;
        within("full.lateral_m_s", self.full.lateral_m_s, 0.0, INPUT_LIMIT, true)?;
        within("full.angular_rad_s", self.full.angular_rad_s, 0.0, INPUT_LIMIT, true)?;
        // The gait driver refuses a speed scale outside [0, 4] (0 keeps 1).
        within("max_speed_scale", self.max_speed_scale, 0.0, 4.0, true)?;
        // O_h's range in the gait library (modbot_gaits::params::O_H) is ±90.
        within(
            "max_turn_deg",
            self.max_turn_deg,
            TURN_STEP_DEG,
            modbot_gaits::params::O_H.max,
            false,
        )
    }
}

/// One axis quantised into levels −n…n with hysteresis.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Level {
    n: i32,
    k: i32,
}

impl Level {
    fn new(n: i32) -> Level {
        Level { n: n.max(1), k: 0 }
    }

    /// Moves to the level nearest `fraction` (clipped to ±1) once it is more than half a
    /// level plus the hysteresis away from the current one.
    fn update(&mut self, fraction: f64) {
        let target = fraction.clamp(-1.0, 1.0) * f64::from(self.n);
        if (target - f64::from(self.k)).abs() > 0.5 + HYSTERESIS {
            self.k = (target.round() as i32).clamp(-self.n, self.n);
        }
    }
}

fn sign(k: i32) -> i8 {
    if k < 0 { -1 } else { 1 }
}

/// A sine gait of a chain at a speed scale and direction, the library's transition.
fn sine(gait: &str, params: Vec<(String, f64)>, speed_scale: f64, direction: i8) -> GaitRequest {
    GaitRequest {
        stop: false,
        gait: gait.to_string(),
        params,
        speed_scale,
        direction,
        transition_s: -1.0,
    }
}

/// A wheel-foot robot's controller: its parameters only (its speed is its own; the gait
/// driver refuses a speed scale other than 1 and reverses through the `direction`
/// parameter, which these requests set themselves).
fn modular(gait: &str, params: Vec<(String, f64)>) -> GaitRequest {
    GaitRequest {
        stop: false,
        gait: gait.to_string(),
        params,
        speed_scale: 1.0,
        direction: 0,
        transition_s: -1.0,
    }
}

/// The stop request (hold the pose), with a GaitCommand's defaults in the other fields.
pub fn stop_request() -> GaitRequest {
    GaitRequest {
        stop: true,
        speed_scale: 1.0,
        transition_s: -1.0,
        ..GaitRequest::default()
    }
}

/// A request in a few words, for a status line or a log: `stop`, or the gait, its
/// parameters, direction and speed scale (ASCII only).
pub fn describe(r: &GaitRequest) -> String {
    if r.stop {
        return "stop".into();
    }
    let mut s = r.gait.clone();
    for (k, v) in &r.params {
        let _ = write!(s, " {k}={v}");
    }
    if r.direction != 0 {
        let _ = write!(s, " dir {:+}", r.direction);
    }
    if r.speed_scale != 1.0 && r.speed_scale != 0.0 {
        let _ = write!(s, " speed x{:.2}", r.speed_scale);
    }
    s
}

/// The teleoperation state machine: inputs with their times in, gait requests out when
/// they change, the dead-man on [`Teleop::tick`].
#[derive(Debug, Clone)]
pub struct Teleop {
    profile: TeleopProfile,
    settings: TeleopSettings,
    linear: Level,
    lateral: Level,
    angular: Level,
    /// When the last accepted input came, s.
    last_input: Option<f64>,
    /// The dead-man has stopped the robot since the last input.
    timed_out: bool,
    /// The last request sent, and when.
    sent: Option<GaitRequest>,
    sent_at: f64,
}

impl Teleop {
    /// A teleoperation of a robot with `profile`; the settings are checked first.
    pub fn new(profile: TeleopProfile, settings: TeleopSettings) -> Result<Teleop, TeleopError> {
        settings.validate()?;
        let angular = match profile {
            // O_h in steps of 2.5° up to the largest turn.
            TeleopProfile::Snake | TeleopProfile::Pyp => (settings.max_turn_deg / TURN_STEP_DEG).round() as i32,
            // The four steering states.
            TeleopProfile::Quadruped => STEERING_STATES.len() as i32,
            TeleopProfile::Caterpillar | TeleopProfile::Wheeled => SPEED_LEVELS,
        };
        Ok(Teleop {
            profile,
            settings,
            linear: Level::new(SPEED_LEVELS),
            lateral: Level::new(SPEED_LEVELS),
            angular: Level::new(angular),
            last_input: None,
            timed_out: false,
            sent: None,
            sent_at: 0.0,
        })
    }

    /// The robot's profile.
    pub fn profile(&self) -> TeleopProfile {
        self.profile
    }

    /// The settings.
    pub fn settings(&self) -> &TeleopSettings {
        &self.settings
    }

    /// The last request sent (`None` before the first).
    pub fn current(&self) -> Option<&GaitRequest> {
        self.sent.as_ref()
    }

    /// Whether the dead-man has stopped the robot and no input came since.
    pub fn timed_out(&self) -> bool {
        self.timed_out
    }

    /// An input at time `now` (s, any clock that [`Teleop::tick`] gets too). Returns the
    /// request to send when it differs from the last one sent; a refused input (not finite,
    /// beyond [`INPUT_LIMIT`]) changes nothing and does not hold off the dead-man. The first
    /// input takes control: centred sticks then send a stop.
    pub fn input(&mut self, now: f64, input: TeleopInput) -> Result<Option<GaitRequest>, TeleopError> {
        input.check()?;
        checked("time", now, f64::MAX)?;
        let full = self.settings.full;
        self.linear.update(input.linear_x / full.linear_m_s);
        self.lateral.update(input.linear_y / full.lateral_m_s);
        self.angular.update(input.angular_z / full.angular_rad_s);
        self.last_input = Some(now);
        self.timed_out = false;
        let wanted = self.request();
        if self.sent.as_ref() == Some(&wanted) {
            return Ok(None);
        }
        self.sent = Some(wanted.clone());
        self.sent_at = now;
        Ok(Some(wanted))
    }

    /// Time passes (call it at a steady rate): the dead-man's stop once no input came for
    /// `timeout_s` (none when the robot is already stopped), then nothing until an input;
    /// while moving, the heartbeat's repeat every `heartbeat_s`.
    pub fn tick(&mut self, now: f64) -> Option<GaitRequest> {
        let last = self.last_input?;
        if self.timed_out {
            return None;
        }
        if now - last > self.settings.timeout_s {
            self.timed_out = true;
            return self.halt(now);
        }
        let moving = self.sent.as_ref().filter(|r| !r.stop)?;
        if self.settings.heartbeat_s > 0.0 && now - self.sent_at >= self.settings.heartbeat_s {
            let again = moving.clone();
            self.sent_at = now;
            return Some(again);
        }
        None
    }

    /// The operator let go for good (the program ends): the stop to send if the robot
    /// moves, and the levels back to rest.
    pub fn release(&mut self, now: f64) -> Option<GaitRequest> {
        self.timed_out = true;
        self.halt(now)
    }

    fn halt(&mut self, now: f64) -> Option<GaitRequest> {
        for l in [&mut self.linear, &mut self.lateral, &mut self.angular] {
            l.k = 0;
        }
        if self.sent.as_ref().is_none_or(|r| r.stop) {
            return None;
        }
        let stop = stop_request();
        self.sent = Some(stop.clone());
        self.sent_at = now;
        Some(stop)
    }

    /// The speed scale of a chain's gait at speed level `k`.
    fn scale(&self, k: i32) -> f64 {
        self.settings.max_speed_scale * f64::from(k.abs()) / f64::from(SPEED_LEVELS)
    }

    /// The request for the current levels. Where two axes compete for one gait, the
    /// larger (in levels) wins, forward and back on a tie.
    fn request(&self) -> GaitRequest {
        let (x, y, w) = (self.linear.k, self.lateral.k, self.angular.k);
        if x == 0 && y == 0 && w == 0 {
            return stop_request();
        }
        match self.profile {
            TeleopProfile::Snake | TeleopProfile::Pyp => {
                let (straight, turning, rolling) = match self.profile {
                    TeleopProfile::Pyp => ("pyp_straight", "pyp_turning", "pyp_rolling"),
                    _ => ("straight", "turning", "rolling"),
                };
                if y.abs() > x.abs() {
                    // Sideways: rolling, its direction the side (the yaw rate is ignored).
                    return sine(rolling, Vec::new(), self.scale(y), sign(y) * ROLLING_LEFT_DIRECTION);
                }
                let direction = sign(x);
                // A turn alone moves at half the top speed (the gait's own period by default).
                let scale = if x == 0 {
                    self.settings.max_speed_scale / 2.0
                } else {
                    self.scale(x)
                };
                if w == 0 {
                    return sine(straight, Vec::new(), scale, direction);
                }
                // O_h > 0 bends the body to the left (decision record 0002): forward the
                // robot turns left. Backing along the same circle turns it the other way, so
                // in reverse the offset flips and the yaw rate keeps the sign asked for.
                let step = self.settings.max_turn_deg / f64::from(self.angular.n);
                let o_h = f64::from(w) * step * f64::from(direction);
                sine(turning, vec![("offset_h_deg".into(), o_h)], scale, direction)
            }
            TeleopProfile::Caterpillar => {
                if x == 0 {
                    // Sideways or turning: a pitch-pitch chain cannot.
                    return stop_request();
                }
                sine("caterpillar", Vec::new(), self.scale(x), sign(x))
            }
            TeleopProfile::Quadruped => {
                // The steering state: its index is the yaw level; a right turn mirrors it.
                let (a, b) = match w {
                    0 => (0.0, 0.0),
                    w => {
                        let (p, q) = STEERING_STATES[(w.unsigned_abs() as usize).min(STEERING_STATES.len()) - 1];
                        if w > 0 { (p, q) } else { (q, p) }
                    }
                };
                // Trot and sidle each walk at their one speed (the source measured the
                // steering states at swing ±30 and ±60): the stick picks the direction.
                if y.abs() > x.abs() {
                    let d = f64::from(sign(y));
                    modular("sidle", vec![("direction".into(), d), ("f".into(), a), ("b".into(), b)])
                } else {
                    // A turn alone trots forward in the steering state: the quadruped has no
                    // turn on the spot.
                    let d = f64::from(sign(x));
                    modular("trot", vec![("direction".into(), d), ("r".into(), a), ("l".into(), b)])
                }
            }
            TeleopProfile::Wheeled => {
                // Skid-steer as the source's controller drives it: straight or in place, the
                // larger of the two asks winning (sideways it cannot).
                let max = WHEEL_MAX_SPEED_DEG_S;
                let levels = f64::from(SPEED_LEVELS);
                if x.abs() >= w.abs() {
                    if x == 0 {
                        return stop_request();
                    }
                    modular("drive", vec![("speed_deg_s".into(), max * f64::from(x) / levels)])
                } else {
                    // `spin` turns clockwise for a positive speed; the yaw rate is positive
                    // anticlockwise.
                    modular("spin", vec![("speed_deg_s".into(), -max * f64::from(w) / levels)])
                }
            }
        }
    }
}

/// One joystick axis: which, and the fraction of the full speed at full deflection
/// (negative inverts it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JoyAxis {
    /// Index into `sensor_msgs/Joy` `axes`.
    pub index: usize,
    /// Full deflection gives this fraction of the full speed, in [−1, 1].
    pub scale: f64,
}

/// How a joystick (`sensor_msgs/Joy`) drives: an axis per input (or none), a dead zone and
/// an enable button (a second dead-man: released, the sticks mean stop). Joy axes are in
/// [−1, 1], left and up positive, as ROS's joy drivers report them.
#[derive(Debug, Clone, PartialEq)]
pub struct JoyMap {
    /// Forward and back.
    pub linear_x: Option<JoyAxis>,
    /// Sideways.
    pub linear_y: Option<JoyAxis>,
    /// Turning.
    pub angular_z: Option<JoyAxis>,
    /// Deflections up to this are 0; beyond, rescaled so the output starts at 0, in [0, 1).
    pub deadzone: f64,
    /// The button that must be held for the sticks to count (`None`: always).
    pub enable_button: Option<usize>,
}

impl Default for JoyMap {
    /// The ROS `joy` package's layout of a game pad (SDL): the left stick drives (axis 1 up
    /// forward, axis 0 left turns left), the right stick's horizontal (axis 2) goes
    /// sideways; button 0 enables (teleop_twist_joy's default); dead zone 0.1.
    fn default() -> Self {
        let axis = |index| Some(JoyAxis { index, scale: 1.0 });
        JoyMap {
            linear_x: axis(1),
            linear_y: axis(2),
            angular_z: axis(0),
            deadzone: 0.1,
            enable_button: Some(0),
        }
    }
}

impl JoyMap {
    /// Refuses a scale outside [−1, 1] or a dead zone outside [0, 1), naming it.
    pub fn validate(&self) -> Result<(), TeleopError> {
        for (name, a) in [
            ("joy.scale_linear_x", self.linear_x),
            ("joy.scale_linear_y", self.linear_y),
            ("joy.scale_angular_z", self.angular_z),
        ] {
            if let Some(a) = a.filter(|a| !(a.scale.is_finite() && a.scale.abs() <= 1.0)) {
                return Err(TeleopError::Setting {
                    key: name,
                    value: a.scale,
                    expected: "a value in [-1, 1]".into(),
                });
            }
        }
        if !(self.deadzone.is_finite() && (0.0..1.0).contains(&self.deadzone)) {
            return Err(TeleopError::Setting {
                key: "joy.deadzone",
                value: self.deadzone,
                expected: "a value in [0, 1)".into(),
            });
        }
        Ok(())
    }

    /// The input of a joystick message, full deflection being `full`. Every axis must be
    /// finite and within ±1, and every axis and button the map reads must be there; else
    /// the message is refused, naming the field. With the enable button released the input
    /// is zero (stop).
    pub fn input(&self, axes: &[f32], buttons: &[i32], full: &FullScale) -> Result<TeleopInput, TeleopError> {
        for (i, a) in axes.iter().enumerate() {
            checked(&format!("axes[{i}]"), f64::from(*a), 1.0 + AXIS_TOLERANCE)?;
        }
        if let Some(b) = self.enable_button {
            let pressed = buttons.get(b).ok_or_else(|| TeleopError::Missing {
                field: format!("buttons[{b}] (the enable button)"),
                len: buttons.len(),
                kind: "buttons",
            })?;
            if *pressed == 0 {
                return Ok(TeleopInput::ZERO);
            }
        }
        let read = |name: &str, axis: Option<JoyAxis>| -> Result<f64, TeleopError> {
            let Some(axis) = axis else {
                return Ok(0.0);
            };
            let raw = axes.get(axis.index).ok_or_else(|| TeleopError::Missing {
                field: format!("axes[{}] ({name})", axis.index),
                len: axes.len(),
                kind: "axes",
            })?;
            let a = f64::from(*raw).clamp(-1.0, 1.0);
            let beyond = (a.abs() - self.deadzone).max(0.0) / (1.0 - self.deadzone);
            Ok(beyond.copysign(a) * axis.scale)
        };
        Ok(TeleopInput {
            linear_x: read("linear_x", self.linear_x)? * full.linear_m_s,
            linear_y: read("linear_y", self.linear_y)? * full.lateral_m_s,
            angular_z: read("angular_z", self.angular_z)? * full.angular_rad_s,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gait_driver::GaitDriver;
    use modbot_core::ModuleCatalog;
    use modbot_gaits::GaitLibrary;

    fn robot(name: &str) -> Topology {
        Topology::resolve(name, &ModuleCatalog::builtin()).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    fn teleop(name: &str) -> Teleop {
        let p = TeleopProfile::of(&robot(name)).unwrap_or_else(|e| panic!("{e}"));
        Teleop::new(p, TeleopSettings::for_profile(p)).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The request for fractions (fx, fy, fw) of full speed, from rest.
    fn ask(name: &str, fx: f64, fy: f64, fw: f64) -> GaitRequest {
        first(&teleop(name), fx, fy, fw)
    }

    /// The first request of a fresh copy of `t` for fractions of full speed.
    fn first(t: &Teleop, fx: f64, fy: f64, fw: f64) -> GaitRequest {
        let mut t = t.clone();
        let f = t.settings.full;
        let input = TeleopInput::new(fx * f.linear_m_s, fy * f.lateral_m_s, fw * f.angular_rad_s);
        t.input(0.0, input)
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("the first input sends"))
    }

    fn param(r: &GaitRequest, key: &str) -> f64 {
        r.params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| *v)
            .unwrap_or_else(|| panic!("{key} not in {r:?}"))
    }

    /// Every request a robot's mapping can make is one the gait driver accepts (gait,
    /// parameters within their ranges, speed scale, direction).
    fn all_accepted(name: &str) {
        let mut d = GaitDriver::new(robot(name), GaitLibrary::builtin());
        let fresh = teleop(name);
        let steps = [-1.0, -0.66, -0.3, 0.0, 0.15, 0.5, 1.0, 3.0];
        for fx in steps {
            for fy in steps {
                for fw in steps {
                    let r = first(&fresh, fx, fy, fw);
                    if let Err(e) = d.request(&r) {
                        panic!("{name}: ({fx}, {fy}, {fw}) gave {r:?}, refused: {e}");
                    }
                }
            }
        }
    }

    #[test]
    fn profiles_come_from_the_robots_modules() {
        for (name, want) in [
            ("pp:8", TeleopProfile::Caterpillar),
            ("pp:2", TeleopProfile::Caterpillar),
            ("py:8", TeleopProfile::Snake),
            ("py:16", TeleopProfile::Snake),
            ("pyp", TeleopProfile::Pyp),
            ("quadruped", TeleopProfile::Quadruped),
            ("wheeled", TeleopProfile::Wheeled),
        ] {
            assert_eq!(TeleopProfile::of(&robot(name)), Ok(want), "{name}");
        }
        let e = TeleopProfile::of(&robot("wheelfoot")).unwrap_err().to_string();
        assert!(e.contains("wheelfoot") && e.contains("inchworm"), "{e}");
    }

    #[test]
    fn a_snake_goes_straight_turns_and_rolls() {
        let r = ask("py:8", 1.0, 0.0, 0.0);
        assert_eq!((r.gait.as_str(), r.direction, r.speed_scale), ("straight", 1, 2.0));
        assert!(!r.stop && r.params.is_empty());
        let r = ask("py:8", -0.5, 0.0, 0.0);
        assert_eq!((r.gait.as_str(), r.direction, r.speed_scale), ("straight", -1, 1.0));
        // Beyond full scale saturates.
        assert_eq!(ask("py:8", 7.0, 0.0, 0.0), ask("py:8", 1.0, 0.0, 0.0));
        // A turn alone: `turning` at half the top speed, O_h to the side asked, 2.5° steps.
        let r = ask("py:8", 0.0, 0.0, 1.0);
        assert_eq!((r.gait.as_str(), r.direction, r.speed_scale), ("turning", 1, 1.0));
        assert_eq!(param(&r, "offset_h_deg"), 30.0);
        let r = ask("py:8", 1.0, 0.0, -0.5);
        assert_eq!((r.gait.as_str(), r.direction, r.speed_scale), ("turning", 1, 2.0));
        assert_eq!(param(&r, "offset_h_deg"), -15.0);
        // Backing while yawing left bends the body right.
        let r = ask("py:8", -1.0, 0.0, 0.5);
        assert_eq!((r.gait.as_str(), r.direction), ("turning", -1));
        assert_eq!(param(&r, "offset_h_deg"), -15.0);
        // Sideways: rolling, its direction the side; the larger axis wins.
        let r = ask("py:8", 0.0, 1.0, 0.0);
        assert_eq!(
            (r.gait.as_str(), r.direction, r.speed_scale),
            ("rolling", ROLLING_LEFT_DIRECTION, 2.0)
        );
        assert_eq!(ask("py:8", 0.3, -0.5, 1.0).direction, -ROLLING_LEFT_DIRECTION);
        assert_eq!(ask("py:8", 0.5, 0.3, 0.0).gait, "straight");
        assert!(ask("py:8", 0.0, 0.0, 0.0).stop);
        // The pitch-yaw-pitch robot: its own gaits.
        assert_eq!(ask("pyp", 1.0, 0.0, 0.0).gait, "pyp_straight");
        assert_eq!(param(&ask("pyp", 0.0, 0.0, -1.0), "offset_h_deg"), -30.0);
        assert_eq!(ask("pyp", 0.0, -1.0, 0.0).gait, "pyp_rolling");
        all_accepted("py:8");
        all_accepted("pyp");
    }

    #[test]
    fn a_caterpillar_goes_forward_and_back_only() {
        let r = ask("pp:8", 0.7, 0.0, 0.0);
        assert_eq!((r.gait.as_str(), r.direction), ("caterpillar", 1));
        assert!((r.speed_scale - 1.4).abs() < 1e-12, "{r:?}");
        assert_eq!(ask("pp:8", -1.0, 0.5, 0.5).direction, -1);
        assert!(ask("pp:8", 0.0, 1.0, 0.0).stop);
        assert!(ask("pp:8", 0.0, 0.0, -1.0).stop);
        all_accepted("pp:8");
    }

    #[test]
    fn a_quadruped_trots_and_sidles_in_the_steering_states() {
        let r = ask("quadruped", 1.0, 0.0, 0.0);
        assert_eq!(r.gait, "trot");
        assert_eq!((r.speed_scale, r.direction), (1.0, 0));
        assert_eq!(
            (param(&r, "direction"), param(&r, "r"), param(&r, "l")),
            (1.0, 0.0, 0.0)
        );
        assert_eq!(param(&ask("quadruped", -0.4, 0.0, 0.0), "direction"), -1.0);
        // The ladder: a quarter of the yaw rate is the passive (0, −5), full the aggressive
        // (15, −15); to the right mirrored.
        for (fw, (r, l)) in [
            (0.25, (0.0, -5.0)),
            (0.5, (5.0, -5.0)),
            (0.75, (10.0, -10.0)),
            (1.0, (15.0, -15.0)),
            (-0.25, (-5.0, 0.0)),
            (-1.0, (-15.0, 15.0)),
        ] {
            let t = ask("quadruped", 1.0, 0.0, fw);
            assert_eq!(
                (t.gait.as_str(), param(&t, "r"), param(&t, "l")),
                ("trot", r, l),
                "{fw}"
            );
            let s = ask("quadruped", 0.0, -1.0, fw);
            assert_eq!(
                (s.gait.as_str(), param(&s, "direction"), param(&s, "f"), param(&s, "b")),
                ("sidle", -1.0, r, l),
                "{fw}"
            );
        }
        assert_eq!(param(&ask("quadruped", 0.2, 0.6, 0.0), "direction"), 1.0);
        // A turn alone trots forward, steering.
        let r = ask("quadruped", 0.0, 0.0, 1.0);
        assert_eq!(
            (r.gait.as_str(), param(&r, "direction"), param(&r, "r")),
            ("trot", 1.0, 15.0)
        );
        all_accepted("quadruped");
    }

    #[test]
    fn the_wheeled_vehicle_drives_and_spins() {
        let r = ask("wheeled", 1.0, 0.0, 0.0);
        assert_eq!((r.gait.as_str(), param(&r, "speed_deg_s")), ("drive", 360.0));
        let r = ask("wheeled", -0.5, 0.0, 0.2);
        assert_eq!((r.gait.as_str(), param(&r, "speed_deg_s")), ("drive", -180.0));
        // Anticlockwise is a negative spin speed; the larger ask wins.
        let r = ask("wheeled", 0.2, 0.0, 1.0);
        assert_eq!((r.gait.as_str(), param(&r, "speed_deg_s")), ("spin", -360.0));
        assert_eq!(param(&ask("wheeled", 0.0, 0.0, -0.3), "speed_deg_s"), 108.0);
        assert!(ask("wheeled", 0.0, 1.0, 0.0).stop);
        // Full speed forward is the wheel's 360 deg/s on its 25 mm radius.
        let f = TeleopProfile::Wheeled.full_scale();
        assert!((f.linear_m_s - 0.157).abs() < 1e-3);
        all_accepted("wheeled");
    }

    /// A stick wobbling around a level, or resting on a boundary between two, sends one
    /// request; moving a level and a quarter past the middle sends the next.
    #[test]
    fn hysteresis_keeps_a_noisy_stick_quiet() {
        let mut t = teleop("py:8");
        let full = t.settings.full.linear_m_s;
        let mut sent = Vec::new();
        for i in 0..200 {
            let noise = 0.04 * ((i as f64) * 1.7).sin();
            if let Some(r) = t
                .input(i as f64 * 0.01, TeleopInput::new((0.5 + noise) * full, 0.0, 0.0))
                .unwrap()
            {
                sent.push(r);
            }
        }
        assert_eq!(sent.len(), 1, "{sent:?}");
        assert_eq!(sent[0].speed_scale, 1.0);
        // On the boundary between 50 % and 60 %: still level 5.
        for i in 0..100 {
            let x = 0.55 + 0.02 * ((i as f64) * 0.9).sin();
            assert_eq!(
                t.input(2.0 + i as f64 * 0.01, TeleopInput::new(x * full, 0.0, 0.0)),
                Ok(None)
            );
        }
        // 0.58 is 0.8 of a level from 5: level 6, then it stays down to 0.525.
        let r = t.input(3.0, TeleopInput::new(0.58 * full, 0.0, 0.0)).unwrap();
        assert!(r.is_some_and(|r| (r.speed_scale - 1.2).abs() < 1e-12));
        assert_eq!(t.input(3.1, TeleopInput::new(0.53 * full, 0.0, 0.0)), Ok(None));
        let r = t.input(3.2, TeleopInput::new(0.52 * full, 0.0, 0.0)).unwrap();
        assert!(r.is_some_and(|r| r.speed_scale == 1.0));
        // A small wobble at rest stays a stop: the first input took control with one.
        let mut t = teleop("quadruped");
        let f = t.settings.full;
        let first = t.input(0.0, TeleopInput::new(0.05 * f.linear_m_s, 0.0, 0.0)).unwrap();
        assert!(first.is_some_and(|r| r.stop));
        for i in 1..50 {
            let w = 0.07 * (i as f64).sin();
            let input = TeleopInput::new(w * f.linear_m_s, -w * f.lateral_m_s, w * f.angular_rad_s);
            assert_eq!(t.input(i as f64 * 0.02, input), Ok(None));
        }
    }

    #[test]
    fn the_dead_man_stops_once_then_waits_for_input() {
        let mut t = teleop("py:8");
        assert_eq!(t.tick(10.0), None, "no input yet: nothing to stop");
        let go = TeleopInput::new(0.03, 0.0, 0.0);
        assert!(t.input(0.0, go).unwrap().is_some());
        assert_eq!(t.input(0.3, go), Ok(None));
        assert_eq!(t.tick(0.7), None, "0.4 s since the last input");
        let stop = t.tick(0.85).unwrap_or_else(|| panic!("the dead-man"));
        assert!(stop.stop && t.timed_out());
        for now in [0.9, 1.5, 30.0] {
            assert_eq!(t.tick(now), None, "silence after the stop");
        }
        // Input returns: the same ask moves again.
        let again = t.input(31.0, go).unwrap();
        assert!(again.is_some_and(|r| r.gait == "straight") && !t.timed_out());
        // Stopped by the operator (centred stick), the dead-man has nothing to send.
        assert!(t.input(31.1, TeleopInput::ZERO).unwrap().is_some_and(|r| r.stop));
        assert_eq!(t.tick(40.0), None);
        assert!(t.timed_out());
        // The program ending stops a moving robot, once.
        assert!(t.input(41.0, go).unwrap().is_some());
        assert!(t.release(41.1).is_some_and(|r| r.stop));
        assert_eq!(t.release(41.2), None);
    }

    #[test]
    fn a_heartbeat_repeats_a_moving_request_only() {
        let p = TeleopProfile::Snake;
        let mut s = TeleopSettings::for_profile(p);
        s.heartbeat_s = 1.0;
        let mut t = Teleop::new(p, s).unwrap();
        let go = TeleopInput::new(0.06, 0.0, 0.0);
        let first = t.input(0.0, go).unwrap().unwrap();
        let mut repeats = Vec::new();
        for i in 1..=25 {
            let now = i as f64 * 0.1;
            assert_eq!(t.input(now, go), Ok(None));
            if let Some(r) = t.tick(now) {
                repeats.push((now, r));
            }
        }
        assert_eq!(repeats.len(), 2, "{repeats:?}");
        assert!(repeats.iter().all(|(_, r)| *r == first));
        assert!((repeats[0].0 - 1.0).abs() < 1e-9 && (repeats[1].0 - 2.0).abs() < 1e-9);
        assert!(t.input(2.6, TeleopInput::ZERO).unwrap().is_some_and(|r| r.stop));
        assert!(
            (27..60).all(|i| t.tick(i as f64 * 0.1).is_none()),
            "stopped: no heartbeat"
        );
    }

    #[test]
    fn garbage_is_refused_by_name_and_does_not_hold_off_the_dead_man() {
        let mut t = teleop("py:8");
        assert!(t.input(0.0, TeleopInput::new(0.06, 0.0, 0.0)).unwrap().is_some());
        for (input, field) in [
            (TeleopInput::new(f64::NAN, 0.0, 0.0), "linear_x"),
            (TeleopInput::new(0.0, f64::INFINITY, 0.0), "linear_y"),
            (TeleopInput::new(0.0, 0.0, -1e6), "angular_z"),
        ] {
            let e = t.input(0.3, input).unwrap_err();
            assert!(e.to_string().starts_with(field), "{e}");
        }
        let e = t.input(0.4, TeleopInput::new(0.0, 0.0, 1e3)).unwrap_err();
        assert_eq!(
            e,
            TeleopError::OutOfRange {
                field: "angular_z".into(),
                value: 1e3,
                min: -INPUT_LIMIT,
                max: INPUT_LIMIT
            }
        );
        assert!(t.current().is_some_and(|r| r.gait == "straight"));
        assert!(t.tick(0.51).is_some_and(|r| r.stop), "garbage is not input");
        // A Twist: every component checked, the ground ones kept.
        let e = TeleopInput::from_twist([0.1, 0.0, f64::NAN], [0.0; 3]).unwrap_err();
        assert!(e.to_string().starts_with("linear.z is NaN"), "{e}");
        let e = TeleopInput::from_twist([0.0; 3], [0.0, -200.0, 0.0]).unwrap_err();
        assert!(e.to_string().contains("angular.y = -200"), "{e}");
        assert_eq!(
            TeleopInput::from_twist([0.1, -0.2, 5.0], [1.0, 2.0, 0.3]),
            Ok(TeleopInput::new(0.1, -0.2, 0.3))
        );
        // Settings.
        let mut s = TeleopSettings::for_profile(TeleopProfile::Snake);
        s.max_turn_deg = 120.0;
        let e = Teleop::new(TeleopProfile::Snake, s).unwrap_err().to_string();
        assert!(e.contains("max_turn_deg") && e.contains("90"), "{e}");
        s.max_turn_deg = 30.0;
        s.max_speed_scale = 5.0;
        assert!(
            Teleop::new(TeleopProfile::Snake, s)
                .unwrap_err()
                .to_string()
                .contains("max_speed_scale")
        );
        s.max_speed_scale = 2.0;
        s.timeout_s = 0.0;
        assert!(
            Teleop::new(TeleopProfile::Snake, s)
                .unwrap_err()
                .to_string()
                .contains("timeout_s")
        );
        s.timeout_s = 0.5;
        s.full.angular_rad_s = f64::NAN;
        assert!(
            Teleop::new(TeleopProfile::Snake, s)
                .unwrap_err()
                .to_string()
                .contains("full.angular_rad_s")
        );
    }

    #[test]
    fn a_joystick_maps_through_dead_zone_scales_and_enable_button() {
        let map = JoyMap::default();
        let full = TeleopProfile::Snake.full_scale();
        let held = [1, 0];
        // Inside the dead zone nothing; beyond it rescaled from 0: 0.55 → 0.5.
        let i = map.input(&[0.05, 0.55, -1.0], &held, &full).unwrap();
        assert_eq!(i.angular_z, 0.0);
        assert!((i.linear_x - 0.5 * full.linear_m_s).abs() < 1e-6, "{i:?}");
        assert!((i.linear_y + full.lateral_m_s).abs() < 1e-9, "{i:?}");
        // Released: stop, whatever the sticks say.
        assert_eq!(map.input(&[1.0, 1.0, 1.0], &[0, 1], &full), Ok(TeleopInput::ZERO));
        // Garbage, by name.
        let e = map.input(&[0.0, f32::NAN, 0.0], &held, &full).unwrap_err().to_string();
        assert!(e.starts_with("axes[1] is NaN"), "{e}");
        let e = map.input(&[0.0, 1.5, 0.0], &held, &full).unwrap_err().to_string();
        assert!(e.starts_with("axes[1] = 1.5"), "{e}");
        let e = map.input(&[0.0, 0.5], &held, &full).unwrap_err().to_string();
        assert_eq!(e, "axes[2] (linear_y) is missing: the message has 2 axes");
        let e = map.input(&[0.0, 0.5, 0.0], &[], &full).unwrap_err().to_string();
        assert!(e.contains("buttons[0] (the enable button) is missing"), "{e}");
        // No enable button, an inverted half-scale axis, an unmapped one.
        let map = JoyMap {
            linear_x: Some(JoyAxis { index: 3, scale: -0.5 }),
            linear_y: None,
            angular_z: None,
            deadzone: 0.0,
            enable_button: None,
        };
        let i = map.input(&[0.0, 0.0, 0.0, 1.0], &[], &full).unwrap();
        assert_eq!(i, TeleopInput::new(-0.5 * full.linear_m_s, 0.0, 0.0));
        let bad = JoyMap {
            deadzone: 1.0,
            ..JoyMap::default()
        };
        assert!(bad.validate().unwrap_err().to_string().contains("joy.deadzone"));
        let bad = JoyMap {
            angular_z: Some(JoyAxis { index: 0, scale: 2.0 }),
            ..JoyMap::default()
        };
        assert!(bad.validate().unwrap_err().to_string().contains("joy.scale_angular_z"));
        // Through the teleop: full stick forward is the top speed.
        let mut t = teleop("py:8");
        let r = t.input(0.0, JoyMap::default().input(&[0.0, 1.0, 0.0], &held, &full).unwrap());
        assert!(r.unwrap().is_some_and(|r| r.gait == "straight" && r.speed_scale == 2.0));
    }

    #[test]
    fn requests_read_in_a_few_words() {
        assert_eq!(describe(&stop_request()), "stop");
        assert_eq!(
            describe(&ask("py:8", -1.0, 0.0, 0.5)),
            "turning offset_h_deg=-15 dir -1 speed x2.00"
        );
        assert_eq!(describe(&ask("wheeled", 0.5, 0.0, 0.0)), "drive speed_deg_s=180");
    }

    /// The mapping moves a snake the way the input asks, on the embedded simulator:
    /// forward goes +x, a left turn turns anticlockwise, rolling to the left goes +y
    /// (which pins [`ROLLING_LEFT_DIRECTION`]).
    #[test]
    fn sine_requests_move_a_snake_the_way_asked() {
        use crate::{ControllerSpec, EvalOptions, evaluate, load_world};
        let topology = robot("py:8");
        let world = load_world(None).unwrap_or_else(|e| panic!("{e}"));
        let mut options = EvalOptions::default();
        options.plan.warmup_cycles = 1;
        options.plan.cycles = 2;
        let run = |r: &GaitRequest| {
            // The speed scale is left out (the gait's own period); the direction is the
            // generator's, as the gait driver applies it.
            let mut params = r.params.clone();
            params.push(("direction".into(), f64::from(r.direction)));
            let spec = ControllerSpec::Gait {
                name: r.gait.clone(),
                params,
            };
            evaluate(&topology, &spec, &world, 0, &options, &mut |_, _| {})
                .unwrap_or_else(|e| panic!("{r:?}: {e}"))
                .report
        };
        let forward = run(&ask("py:8", 0.5, 0.0, 0.0));
        assert!(forward.step_x_m > 0.01, "straight: {} m/cycle", forward.step_x_m);
        let left = run(&ask("py:8", 0.5, 0.0, 1.0));
        assert!(
            left.heading_change_deg > 2.0,
            "turning left: {}°/cycle",
            left.heading_change_deg
        );
        let rolled = run(&ask("py:8", 0.0, 1.0, 0.0));
        assert!(
            rolled.step_y_m > 0.03,
            "rolling left with direction {ROLLING_LEFT_DIRECTION}: {} m/cycle sideways (flip ROLLING_LEFT_DIRECTION if negative)",
            rolled.step_y_m
        );
    }
}
