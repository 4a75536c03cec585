//! The one error type of modbot_gaits.

use modbot_core::CoreError;

/// Why a gait could not be built or a gait file could not be loaded. Every variant names
/// the gait and the parameter at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GaitError {
    /// No gait or preset of that name.
    #[error("unknown gait `{name}` (known: {known})")]
    UnknownGait {
        /// The name asked for.
        name: String,
        /// Known gaits and presets, comma separated.
        known: String,
    },
    /// A parameter the gait does not have.
    #[error("gait `{gait}`: unknown parameter `{key}` (it takes: {known})")]
    UnknownKey {
        /// The gait.
        gait: String,
        /// The unknown key.
        key: String,
        /// The keys it takes, comma separated.
        known: String,
    },
    /// The same parameter given twice (by its name and its alias).
    #[error("gait `{gait}`: `{key}` is given twice (as `{key}` and `{alias}`)")]
    DuplicateKey {
        /// The gait.
        gait: String,
        /// The canonical key.
        key: String,
        /// The alias also given.
        alias: String,
    },
    /// A parameter outside its range.
    #[error("gait `{gait}`: {key} = {value} is out of range [{min}, {max}]")]
    OutOfRange {
        /// The gait.
        gait: String,
        /// The parameter.
        key: String,
        /// Its value.
        value: f64,
        /// Lowest allowed.
        min: f64,
        /// Highest allowed.
        max: f64,
    },
    /// |O| + A exceeds the joint's reach (constraint 3.11 and the module's hinge range).
    #[error(
        "gait `{gait}`: |{offset_key}| + {amplitude_key} = |{offset}| + {amplitude} = {sum} exceeds the joint range of {limit} deg (|O| + A ≤ {limit})"
    )]
    AmplitudePlusOffset {
        /// The gait.
        gait: String,
        /// The amplitude parameter.
        amplitude_key: String,
        /// The offset parameter.
        offset_key: String,
        /// Amplitude, deg.
        amplitude: f64,
        /// Offset, deg.
        offset: f64,
        /// |O| + A, deg.
        sum: f64,
        /// The reach of the joint, deg.
        limit: f64,
    },
    /// The period is too short for the servo to follow the amplitude.
    #[error(
        "gait `{gait}`: period_s = {period} s is too short for {amplitude_key} = {amplitude} deg: the servo's {max_speed} deg/s needs T ≥ 2πA/ω = {min_period:.3} s"
    )]
    ServoSpeed {
        /// The gait.
        gait: String,
        /// The period asked for, s.
        period: f64,
        /// The shortest period the servo can follow, s.
        min_period: f64,
        /// The amplitude parameter that sets it.
        amplitude_key: String,
        /// The amplitude, deg.
        amplitude: f64,
        /// The servo's speed limit, deg/s.
        max_speed: f64,
    },
    /// The gait does not apply to this robot.
    #[error("gait `{gait}` needs {needs}, not `{robot}`")]
    WrongRobot {
        /// The gait.
        gait: String,
        /// What it needs.
        needs: String,
        /// The robot given.
        robot: String,
    },
    /// The parameters do not describe a valid gait (e.g. a shape parameter without its pair).
    #[error("gait `{gait}`: {reason}")]
    Invalid {
        /// The gait.
        gait: String,
        /// What is wrong.
        reason: String,
    },
    /// A gait configuration file is malformed.
    #[error("{origin}: {message}")]
    Config {
        /// File or source.
        origin: String,
        /// What is wrong, naming the key.
        message: String,
    },
    /// A value of a controller file or definition is refused.
    #[error("{key} = {value}: expected {expected}")]
    Value {
        /// Dotted path of the key.
        key: String,
        /// The value, as text.
        value: String,
        /// What was expected.
        expected: String,
    },
    /// An error from the robot model.
    #[error(transparent)]
    Core(#[from] CoreError),
}

/// Result with [`GaitError`].
pub type Result<T, E = GaitError> = std::result::Result<T, E>;
