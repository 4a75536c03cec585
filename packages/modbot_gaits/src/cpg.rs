//! The coupled-oscillator CPG of seed 002 §3 (rmorenoga's V-REP chain, after Crespi et
//! al.): one phase oscillator per module, coupled to the preceding and the following
//! module, with critically damped amplitude and offset dynamics, integrated by explicit
//! Euler with every update from the old values, and the joint target
//! q = (π/2)(x + r cos θ). Decision record 0026.
//!
//! Seed-faithful choices (record 0026): ν = 0.65 Hz, w = 7, a_r = 50, a_x = 30, dt = 0.05 s;
//! the seed's `if (teta3)` guard is dropped (every module integrates from the first tick,
//! including the last one, which has no successor); neighbour phases are those of the same
//! tick by default, or one tick late (`delay_ticks = 1`, as per-module processes that
//! exchange messages would see them).

use std::collections::BTreeMap;
use std::f64::consts::{FRAC_PI_2, PI, TAU};

use crate::controller::{Controller, JointTarget, Observation};
use crate::error::{GaitError, Result};
use crate::params::{ParamSpec, Schema, control as spec};

/// The name the CPG goes by in gait files and on the command line.
pub const CPG: &str = "cpg";

/// Target amplitude R, normalised (1 = ±90°).
pub const AMPLITUDE: ParamSpec = spec("amplitude", "R", "", 0.0, 1.0, "target amplitude R (1 = ±90°)");
/// Target offset X, normalised (1 = 90°).
pub const OFFSET: ParamSpec = spec("offset", "X", "", -1.0, 1.0, "target offset X (1 = 90°)");
/// Both phase lags at once.
pub const PHASE_LAG: ParamSpec = spec(
    "phase_lag_deg",
    "phi",
    "deg",
    -180.0,
    180.0,
    "phase lag φ toward both neighbours (sets φ0 and φ1)",
);
/// φ0, the lag toward the predecessor.
pub const PHASE_LAG_PREV: ParamSpec = spec(
    "phase_lag_prev_deg",
    "phi0",
    "deg",
    -180.0,
    180.0,
    "phase lag φ0 toward the preceding module (overrides φ)",
);
/// φ1, the lag toward the successor.
pub const PHASE_LAG_NEXT: ParamSpec = spec(
    "phase_lag_next_deg",
    "phi1",
    "deg",
    -180.0,
    180.0,
    "phase lag φ1 toward the following module (overrides φ)",
);
/// ν.
pub const FREQUENCY: ParamSpec = spec("frequency_hz", "nu", "Hz", 0.01, 10.0, "intrinsic frequency ν");
/// w.
pub const COUPLING: ParamSpec = spec("coupling", "w", "1/s", 0.0, 100.0, "coupling weight w");
/// a_r.
pub const AMPLITUDE_GAIN: ParamSpec = spec("amplitude_gain", "a_r", "1/s", 0.0, 1000.0, "amplitude gain a_r");
/// a_x.
pub const OFFSET_GAIN: ParamSpec = spec("offset_gain", "a_x", "1/s", 0.0, 1000.0, "offset gain a_x");
/// dt of the Euler step.
pub const STEP: ParamSpec = spec("step_s", "dt", "s", 0.001, 0.5, "Euler time step dt");
/// 0: neighbours' phases of the same tick; 1: one tick late.
pub const DELAY: ParamSpec = spec(
    "delay_ticks",
    "delay",
    "",
    0.0,
    1.0,
    "0: neighbour phases of the same tick; 1: one tick late (≈ 0.40 Hz instead of ν)",
);

/// Every CPG parameter.
pub const PARAMS: [ParamSpec; 11] = [
    AMPLITUDE,
    OFFSET,
    PHASE_LAG,
    PHASE_LAG_PREV,
    PHASE_LAG_NEXT,
    FREQUENCY,
    COUPLING,
    AMPLITUDE_GAIN,
    OFFSET_GAIN,
    STEP,
    DELAY,
];

/// Parameters that may also be given per module as `key.i` (i = joint index from 0).
pub const PER_MODULE: [ParamSpec; 5] = [AMPLITUDE, OFFSET, PHASE_LAG, PHASE_LAG_PREV, PHASE_LAG_NEXT];

/// The seed's defaults (and the repository's for R, X, φ: seed 002 §8).
pub const DEFAULTS: [(&str, f64); 9] = [
    ("amplitude", 0.5),
    ("offset", 0.0),
    ("phase_lag_deg", 54.0),
    ("frequency_hz", 0.65),
    ("coupling", 7.0),
    ("amplitude_gain", 50.0),
    ("offset_gain", 30.0),
    ("step_s", 0.05),
    ("delay_ticks", 0.0),
];

/// The CPG's parameter schema (shared keys; per-module keys are checked by
/// [`normalise`]).
pub fn schema() -> Schema {
    Schema::bare(CPG, &PARAMS)
}

/// Normalises (key or alias, value) pairs to canonical keys: shared keys as the schema
/// spells them, per-module keys as `canonical.i`. Unknown keys, bad indices and values out
/// of range are refused naming the key.
pub fn normalise<'a>(pairs: impl IntoIterator<Item = (&'a str, f64)>) -> Result<BTreeMap<String, f64>> {
    let schema = schema();
    let mut out = BTreeMap::new();
    for (key, value) in pairs {
        let (canonical, spec) = match key.split_once('.') {
            Some((base, index)) => {
                let spec = *schema.lookup(base)?;
                if !PER_MODULE.iter().any(|p| p.key == spec.key) {
                    return Err(invalid(format!(
                        "`{key}`: only {} can be given per module",
                        PER_MODULE.iter().map(|p| p.key).collect::<Vec<_>>().join(", ")
                    )));
                }
                let i: usize = index.parse().map_err(|_| {
                    invalid(format!(
                        "`{key}`: the part after the dot must be a joint index (0, 1, …)"
                    ))
                })?;
                (format!("{}.{i}", spec.key), spec)
            }
            None => {
                let spec = *schema.lookup(key)?;
                (spec.key.to_string(), spec)
            }
        };
        schema.check(&spec, value)?;
        if spec.key == DELAY.key && value != 0.0 && value != 1.0 {
            return Err(invalid(format!("delay_ticks = {value}: must be 0 or 1")));
        }
        if out.insert(canonical.clone(), value).is_some() {
            return Err(GaitError::DuplicateKey {
                gait: CPG.into(),
                key: canonical,
                alias: key.to_string(),
            });
        }
    }
    Ok(out)
}

fn invalid(reason: String) -> GaitError {
    GaitError::Invalid {
        gait: CPG.into(),
        reason,
    }
}

/// The oscillator constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Constants {
    /// ν, Hz.
    pub frequency_hz: f64,
    /// w.
    pub coupling: f64,
    /// a_r, 1/s.
    pub amplitude_gain: f64,
    /// a_x, 1/s.
    pub offset_gain: f64,
}

impl Default for Constants {
    /// The seed's: ν = 0.65 Hz, w = 7, a_r = 50, a_x = 30.
    fn default() -> Self {
        Constants {
            frequency_hz: 0.65,
            coupling: 7.0,
            amplitude_gain: 50.0,
            offset_gain: 30.0,
        }
    }
}

/// What one module's oscillator is driven toward.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModuleTargets {
    /// R (1 = ±90°).
    pub amplitude: f64,
    /// X (1 = 90°).
    pub offset: f64,
    /// φ0, toward the predecessor, rad.
    pub lag_prev_rad: f64,
    /// φ1, toward the successor, rad.
    pub lag_next_rad: f64,
}

/// Whether a module sees its neighbours' phases of the same tick or of the one before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseDelay {
    /// Same tick (one process integrates the whole chain synchronously): locks at ν.
    SameTick,
    /// One tick late (per-module processes exchanging messages).
    OneTick,
}

/// One oscillator's state.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct OscillatorState {
    /// θ, rad (unwrapped).
    pub theta: f64,
    /// r.
    pub r: f64,
    /// ṙ.
    pub dr: f64,
    /// x.
    pub x: f64,
    /// ẋ.
    pub dx: f64,
}

/// A chain of coupled oscillators, module 0 first.
#[derive(Debug, Clone, PartialEq)]
pub struct CpgChain {
    constants: Constants,
    targets: Vec<ModuleTargets>,
    delay: PhaseDelay,
    dt: f64,
    state: Vec<OscillatorState>,
    /// The phases of the tick before (what a one-tick-late neighbour sees).
    previous: Vec<f64>,
    ticks: u64,
}

impl CpgChain {
    /// A chain at rest (θ = r = ṙ = x = ẋ = 0) with one oscillator per entry of `targets`.
    pub fn new(constants: Constants, targets: Vec<ModuleTargets>, delay: PhaseDelay, dt: f64) -> Result<CpgChain> {
        if targets.is_empty() {
            return Err(invalid("a CPG needs at least one module".into()));
        }
        if !(dt.is_finite() && dt > 0.0) {
            return Err(invalid(format!("step_s = {dt}: expected a time step > 0")));
        }
        let n = targets.len();
        Ok(CpgChain {
            constants,
            targets,
            delay,
            dt,
            state: vec![OscillatorState::default(); n],
            previous: vec![0.0; n],
            ticks: 0,
        })
    }

    /// Number of modules.
    pub fn len(&self) -> usize {
        self.state.len()
    }

    /// Always false: a chain has at least one module.
    pub fn is_empty(&self) -> bool {
        self.state.is_empty()
    }

    /// The Euler time step, s.
    pub fn dt(&self) -> f64 {
        self.dt
    }

    /// Euler steps taken.
    pub fn ticks(&self) -> u64 {
        self.ticks
    }

    /// The oscillators' states.
    pub fn states(&self) -> &[OscillatorState] {
        &self.state
    }

    /// dθ_i/dt from module `i`'s phase and the phases it sees of its neighbours (seed §3.2,
    /// boundary modules with their one neighbour).
    fn phase_rate(&self, i: usize, seen: &[f64]) -> f64 {
        let c = &self.constants;
        let t = &self.targets[i];
        let theta = self.state[i].theta;
        let mut rate = TAU * c.frequency_hz;
        if i > 0 {
            rate += c.coupling * (seen[i - 1] - theta - t.lag_prev_rad).sin();
        }
        if i + 1 < self.len() {
            rate += c.coupling * (seen[i + 1] - theta + t.lag_next_rad).sin();
        }
        rate
    }

    /// One explicit-Euler step of every oscillator, every update from the old values
    /// (seed §3.3).
    pub fn step(&mut self) {
        let dt = self.dt;
        let current: Vec<f64> = self.state.iter().map(|s| s.theta).collect();
        let rates: Vec<f64> = {
            let seen = match self.delay {
                PhaseDelay::SameTick => &current,
                PhaseDelay::OneTick => &self.previous,
            };
            (0..self.len()).map(|i| self.phase_rate(i, seen)).collect()
        };
        let (ar, ax) = (self.constants.amplitude_gain, self.constants.offset_gain);
        for ((s, t), rate) in self.state.iter_mut().zip(&self.targets).zip(rates) {
            let old = *s;
            s.theta = old.theta + rate * dt;
            s.r = old.r + old.dr * dt;
            s.dr = old.dr + ar * (ar / 4.0 * (t.amplitude - old.r) - old.dr) * dt;
            s.x = old.x + old.dx * dt;
            s.dx = old.dx + ax * (ax / 4.0 * (t.offset - old.x) - old.dx) * dt;
        }
        self.previous = current;
        self.ticks += 1;
    }

    /// Module `i`'s joint target, rad: (π/2)(x + r cos θ).
    pub fn output(&self, i: usize) -> f64 {
        let s = &self.state[i];
        FRAC_PI_2 * (s.x + s.r * s.theta.cos())
    }
}

/// The CPG's resolved settings (from a gait file's defaults, a preset and the user's
/// values), ready to build for a chain of any length.
#[derive(Debug, Clone, PartialEq)]
pub struct CpgSettings {
    /// Constants.
    pub constants: Constants,
    /// Euler step, s.
    pub dt: f64,
    /// Neighbour phase delay.
    pub delay: PhaseDelay,
    /// Shared targets (φ0, φ1 in rad).
    pub shared: ModuleTargets,
    /// Per-module overrides: (canonical key, joint index) → value as given.
    pub per_module: BTreeMap<(String, usize), f64>,
    /// Every value, canonical keys (for summaries and gait files).
    pub values: BTreeMap<String, f64>,
}

impl CpgSettings {
    /// Resolves `layers` (each already [`normalise`]d; later layers win) over the seed's
    /// defaults.
    pub fn resolve(layers: &[&BTreeMap<String, f64>]) -> Result<CpgSettings> {
        let mut values: BTreeMap<String, f64> = DEFAULTS.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        for layer in layers {
            values.extend(layer.iter().map(|(k, v)| (k.clone(), *v)));
        }
        let get = |spec: &ParamSpec| values.get(spec.key).copied();
        let need = |spec: &ParamSpec| get(spec).ok_or_else(|| invalid(format!("{} has no value", spec.key)));
        let phi = need(&PHASE_LAG)?;
        let shared = ModuleTargets {
            amplitude: need(&AMPLITUDE)?,
            offset: need(&OFFSET)?,
            lag_prev_rad: get(&PHASE_LAG_PREV).unwrap_or(phi).to_radians(),
            lag_next_rad: get(&PHASE_LAG_NEXT).unwrap_or(phi).to_radians(),
        };
        let mut per_module = BTreeMap::new();
        for (k, v) in &values {
            if let Some((base, i)) = k.split_once('.') {
                let i: usize = i.parse().map_err(|_| invalid(format!("`{k}`: bad joint index")))?;
                per_module.insert((base.to_string(), i), *v);
            }
        }
        Ok(CpgSettings {
            constants: Constants {
                frequency_hz: need(&FREQUENCY)?,
                coupling: need(&COUPLING)?,
                amplitude_gain: need(&AMPLITUDE_GAIN)?,
                offset_gain: need(&OFFSET_GAIN)?,
            },
            dt: need(&STEP)?,
            delay: if need(&DELAY)? == 1.0 {
                PhaseDelay::OneTick
            } else {
                PhaseDelay::SameTick
            },
            shared,
            per_module,
            values,
        })
    }

    /// Each module's targets on a chain of `n` modules; a per-module key naming a joint
    /// beyond the chain is refused.
    pub fn targets(&self, n: usize) -> Result<Vec<ModuleTargets>> {
        let mut out = vec![self.shared; n];
        // φ (shared) per module first, then φ0/φ1 per module over it.
        let order = [
            "amplitude",
            "offset",
            "phase_lag_deg",
            "phase_lag_prev_deg",
            "phase_lag_next_deg",
        ];
        for key in order {
            for ((base, i), v) in &self.per_module {
                if base != key {
                    continue;
                }
                let t = out.get_mut(*i).ok_or_else(|| {
                    invalid(format!(
                        "`{base}.{i}`: the robot has joints 0 … {}",
                        n.saturating_sub(1)
                    ))
                })?;
                match key {
                    "amplitude" => t.amplitude = *v,
                    "offset" => t.offset = *v,
                    "phase_lag_deg" => {
                        t.lag_prev_rad = v.to_radians();
                        t.lag_next_rad = v.to_radians();
                    }
                    "phase_lag_prev_deg" => t.lag_prev_rad = v.to_radians(),
                    _ => t.lag_next_rad = v.to_radians(),
                }
            }
        }
        Ok(out)
    }

    /// The chain for `n` modules.
    pub fn chain(&self, n: usize) -> Result<CpgChain> {
        CpgChain::new(self.constants, self.targets(n)?, self.delay, self.dt)
    }
}

/// The CPG as a controller: one oscillator per joint in command order (module 0 first),
/// integrated every `dt` of control time (the joint targets are held between Euler
/// steps, as the seed's per-step script sets them), clamped to the joints' limits. Its
/// cycles are turns of module 0's phase, so they follow the frequency the chain
/// actually locks at.
#[derive(Debug, Clone)]
pub struct CpgController {
    chain: CpgChain,
    limits: Vec<(f64, f64)>,
    clock: f64,
    start_phase: f64,
}

impl CpgController {
    /// A controller for joints with `limits` (rad, command order).
    pub fn new(settings: &CpgSettings, limits: Vec<(f64, f64)>) -> Result<CpgController> {
        let chain = settings.chain(limits.len())?;
        Ok(CpgController {
            start_phase: chain.states()[0].theta,
            chain,
            limits,
            clock: 0.0,
        })
    }

    /// The oscillators.
    pub fn chain(&self) -> &CpgChain {
        &self.chain
    }
}

impl Controller for CpgController {
    fn name(&self) -> &str {
        CPG
    }

    fn joint_count(&self) -> usize {
        self.limits.len()
    }

    fn step(&mut self, dt: f64, _obs: &Observation<'_>, out: &mut [JointTarget]) {
        self.clock += dt;
        // Euler steps due by now (a small tolerance keeps 0.05 s from slipping a tick
        // at a 100 Hz control rate by rounding).
        let h = self.chain.dt();
        while (self.chain.ticks() + 1) as f64 * h <= self.clock + 1e-9 * h {
            self.chain.step();
        }
        for (i, (o, (lo, hi))) in out.iter_mut().zip(&self.limits).enumerate() {
            *o = JointTarget::Position(self.chain.output(i).clamp(*lo, *hi));
        }
    }

    fn period(&self) -> Option<f64> {
        None
    }

    fn completed_cycles(&self) -> usize {
        let turns = (self.chain.states()[0].theta - self.start_phase) / TAU;
        if turns > 0.0 { turns.floor() as usize } else { 0 }
    }
}

/// The phase lag θ_{i−1} − θ_i between modules i−1 and i, wrapped to (−π, π].
pub fn lag(chain: &CpgChain, i: usize) -> f64 {
    let d = chain.states()[i - 1].theta - chain.states()[i].theta;
    let w = d.rem_euclid(TAU);
    if w > PI { w - TAU } else { w }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(n: usize, r: f64, x: f64, phi: f64, delay: PhaseDelay) -> CpgChain {
        let t = ModuleTargets {
            amplitude: r,
            offset: x,
            lag_prev_rad: phi,
            lag_next_rad: phi,
        };
        CpgChain::new(Constants::default(), vec![t; n], delay, 0.05).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Seed 002 §3.5: r from rest toward R = 0.5 and x toward X = 0.2 at dt = 0.05 s,
    /// the state before the first step included (so r, x start 0, 0: the first step moves
    /// only the derivatives).
    #[test]
    fn amplitude_and_offset_reproduce_the_seed_vectors() {
        let mut c = chain(1, 0.5, 0.2, 0.0, PhaseDelay::SameTick);
        let want_r = [0.0, 0.0, 0.78125, 0.390625, 0.537109, 0.488281, 0.503540, 0.498962];
        let want_x = [0.0, 0.0, 0.1125, 0.16875, 0.18984, 0.19688, 0.19907, 0.19973];
        // The seed prints x to 5 decimals; these are the recurrence's exact values, which
        // round to the seed's.
        let exact_x = [
            0.0,
            0.0,
            0.1125,
            0.16875,
            0.18984375,
            0.196875,
            0.199072265625,
            0.1997314453125,
        ];
        for (k, ((wr, wx), ex)) in want_r.iter().zip(&want_x).zip(&exact_x).enumerate() {
            let s = c.states()[0];
            assert!((s.r - wr).abs() < 1e-6, "r[{k}] = {} (seed {wr})", s.r);
            assert!((s.x - ex).abs() < 1e-9, "x[{k}] = {} (exact {ex})", s.x);
            assert!(
                (ex - wx).abs() <= 5e-6 + 1e-12,
                "x[{k}]: {ex} does not round to the seed's {wx}"
            );
            c.step();
        }
    }

    /// N = 8, φ = 0.3π, same-tick phases: after 20 s every lag is 0.3π = 0.9425 rad and the
    /// chain turns at ν = 0.650 Hz.
    #[test]
    fn same_tick_phases_lock_at_the_lag_and_the_intrinsic_frequency() {
        let mut c = chain(8, 0.5, 0.0, 0.3 * PI, PhaseDelay::SameTick);
        for _ in 0..400 {
            c.step();
        }
        for i in 1..8 {
            assert!((lag(&c, i) - 0.9425).abs() < 1e-3, "lag {i} = {}", lag(&c, i));
        }
        let before = c.states()[0].theta;
        for _ in 0..200 {
            c.step();
        }
        let f = (c.states()[0].theta - before) / TAU / 10.0;
        assert!((f - 0.650).abs() < 0.0065, "frequency {f} Hz");
    }

    /// The same chain with phases one tick late locks near 0.40 Hz with uneven lags.
    #[test]
    fn one_tick_late_phases_lock_near_0_4_hz() {
        let mut c = chain(8, 0.5, 0.0, 0.3 * PI, PhaseDelay::OneTick);
        for _ in 0..400 {
            c.step();
        }
        let before = c.states()[0].theta;
        for _ in 0..200 {
            c.step();
        }
        let f = (c.states()[0].theta - before) / TAU / 10.0;
        assert!((f - 0.404).abs() < 0.02, "frequency {f} Hz");
        let lags: Vec<f64> = (1..8).map(|i| lag(&c, i)).collect();
        let spread = lags.iter().cloned().fold(f64::MIN, f64::max) - lags.iter().cloned().fold(f64::MAX, f64::min);
        assert!(spread > 0.05, "lags {lags:?} are uneven with a delay");
    }

    /// Boundary coupling: a lone module runs free at ν; in a pair each module has only its
    /// one neighbour, and the pair locks at the lag; in three the middle has both.
    #[test]
    fn chains_of_one_two_and_three_couple_at_their_ends() {
        let mut one = chain(1, 0.5, 0.0, 0.3 * PI, PhaseDelay::SameTick);
        one.step();
        assert!((one.states()[0].theta - TAU * 0.65 * 0.05).abs() < 1e-12);
        assert!((TAU * 0.65 * 0.05 - 0.20420).abs() < 1e-5);
        for n in [2, 3] {
            let mut c = chain(n, 0.5, 0.0, 0.3 * PI, PhaseDelay::SameTick);
            // First step from θ = 0: the first module feels sin(0 − 0 + φ1) from its successor
            // only, the last sin(0 − 0 − φ0) from its predecessor only.
            c.step();
            let s = c.states();
            let free = TAU * 0.65;
            assert!((s[0].theta - (free + 7.0 * (0.3 * PI).sin()) * 0.05).abs() < 1e-12);
            assert!((s[n - 1].theta - (free - 7.0 * (0.3 * PI).sin()) * 0.05).abs() < 1e-12);
            if n == 3 {
                assert!(
                    (s[1].theta - free * 0.05).abs() < 1e-12,
                    "the middle feels both, which cancel"
                );
            }
            for _ in 0..400 {
                c.step();
            }
            for i in 1..n {
                assert!((lag(&c, i) - 0.3 * PI).abs() < 1e-3);
            }
        }
    }

    #[test]
    fn the_output_is_the_seed_mapping_and_is_held_between_euler_steps() {
        let settings = CpgSettings::resolve(&[&normalise([("R", 0.5), ("X", 0.2)]).unwrap_or_else(|e| panic!("{e}"))])
            .unwrap_or_else(|e| panic!("{e}"));
        let mut c = CpgController::new(&settings, vec![(-PI, PI); 2]).unwrap_or_else(|e| panic!("{e}"));
        let sensors = BTreeMap::new();
        let obs = Observation {
            time: 0.0,
            positions: &[0.0, 0.0],
            velocities: &[0.0, 0.0],
            base: nalgebra::Isometry3::identity(),
            sensors: &sensors,
        };
        let mut out = [JointTarget::Position(9.0); 2];
        let mut ticks = Vec::new();
        for _ in 0..20 {
            c.step(0.01, &obs, &mut out);
            ticks.push(c.chain().ticks());
            let s = c.chain().states()[0];
            assert_eq!(out[0], JointTarget::Position(FRAC_PI_2 * (s.x + s.r * s.theta.cos())));
        }
        // 100 Hz control, 20 Hz Euler: one step every fifth tick, exactly.
        assert_eq!(ticks, [0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 4]);
    }

    #[test]
    fn bad_keys_and_values_are_refused_naming_them() {
        let err = |pairs: &[(&str, f64)]| normalise(pairs.iter().copied()).unwrap_err().to_string();
        assert!(err(&[("amplitude", 1.5)]).contains("amplitude"));
        assert!(err(&[("bogus", 1.0)]).contains("bogus"));
        assert!(err(&[("amplitude.x", 0.3)]).contains("amplitude.x"));
        assert!(err(&[("frequency_hz.2", 0.3)]).contains("per module"));
        assert!(err(&[("delay_ticks", 0.5)]).contains("delay_ticks"));
        assert!(err(&[("offset", f64::NAN)]).contains("offset"));
        assert!(err(&[("R", 0.2), ("amplitude", 0.3)]).contains("twice"));
        let s = CpgSettings::resolve(&[&normalise([("amplitude.5", 0.3)]).unwrap_or_else(|e| panic!("{e}"))])
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(s.targets(4).unwrap_err().to_string().contains("amplitude.5"));
        let t = s.targets(8).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((t[5].amplitude, t[4].amplitude), (0.3, 0.5));
    }
}
