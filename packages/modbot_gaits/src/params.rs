//! Gait parameters: their names, aliases, units and ranges, and the resolution of
//! defaults plus user values into one checked set.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::{GaitError, Result};

/// One parameter a gait takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParamSpec {
    /// Canonical key (units in the name when not SI), e.g. `amplitude_v_deg`.
    pub key: &'static str,
    /// The source's symbol, accepted as an alias, e.g. `A_v`.
    pub alias: &'static str,
    /// Unit, for listings.
    pub unit: &'static str,
    /// Lowest allowed value.
    pub min: f64,
    /// Highest allowed value.
    pub max: f64,
    /// One-line description.
    pub doc: &'static str,
    /// Shape parameters are alternatives to control parameters and need no default.
    pub shape: bool,
}

pub(crate) const fn control(
    key: &'static str,
    alias: &'static str,
    unit: &'static str,
    min: f64,
    max: f64,
    doc: &'static str,
) -> ParamSpec {
    ParamSpec {
        key,
        alias,
        unit,
        min,
        max,
        doc,
        shape: false,
    }
}

const fn shape(
    key: &'static str,
    alias: &'static str,
    unit: &'static str,
    min: f64,
    max: f64,
    doc: &'static str,
) -> ParamSpec {
    ParamSpec {
        key,
        alias,
        unit,
        min,
        max,
        doc,
        shape: true,
    }
}

/// A: amplitude of every joint (PP) or of both groups.
pub const A: ParamSpec = control("amplitude_deg", "A", "deg", 0.0, 90.0, "amplitude A of the joints");
/// Δφ: phase difference between consecutive joints.
pub const DPHI: ParamSpec = control(
    "phase_diff_deg",
    "dphi",
    "deg",
    -180.0,
    180.0,
    "phase difference Δφ between consecutive joints of a group",
);
/// A_v.
pub const A_V: ParamSpec = control(
    "amplitude_v_deg",
    "A_v",
    "deg",
    0.0,
    90.0,
    "amplitude A_v of the pitch (vertical) joints",
);
/// A_h.
pub const A_H: ParamSpec = control(
    "amplitude_h_deg",
    "A_h",
    "deg",
    0.0,
    90.0,
    "amplitude A_h of the yaw (horizontal) joints",
);
/// Δφ_v.
pub const DPHI_V: ParamSpec = control(
    "phase_diff_v_deg",
    "dphi_v",
    "deg",
    -180.0,
    180.0,
    "phase difference Δφ_v between consecutive pitch joints",
);
/// Δφ_h.
pub const DPHI_H: ParamSpec = control(
    "phase_diff_h_deg",
    "dphi_h",
    "deg",
    -180.0,
    180.0,
    "phase difference Δφ_h between consecutive yaw joints",
);
/// Δφ_vh, control convention (§3.5.3, the source's simulator commands).
pub const DPHI_VH: ParamSpec = control(
    "phase_diff_vh_deg",
    "dphi_vh",
    "deg",
    -180.0,
    180.0,
    "phase of yaw joint 1 relative to pitch joint 1, control convention (App. D)",
);
/// Δφ_vh in the serpenoid (shape) convention: control = shape + Δφ_h/2 (3.44).
pub const DPHI_VH_SHAPE: ParamSpec = shape(
    "phase_diff_vh_shape_deg",
    "dphi_vh_shape",
    "deg",
    -180.0,
    180.0,
    "Δφ_vh as the shape tables give it; control Δφ_vh = this + Δφ_h/2, eq. (3.44) (decision 0004)",
);
/// O_h.
pub const O_H: ParamSpec = control(
    "offset_h_deg",
    "O_h",
    "deg",
    -90.0,
    90.0,
    "constant offset O_h of the yaw joints; its sign sets the turn side",
);
/// α of a serpenoid.
pub const ALPHA: ParamSpec = shape("winding_deg", "alpha", "deg", 0.0, 120.0, "serpenoid winding angle α");
/// k of a serpenoid.
pub const K: ParamSpec = shape("undulations", "k", "", 0.0, 512.0, "number of undulations k");
/// α_v.
pub const ALPHA_V: ParamSpec = shape(
    "winding_v_deg",
    "alpha_v",
    "deg",
    0.0,
    120.0,
    "winding angle α_v of the vertical wave",
);
/// α_h of a serpenoid.
pub const ALPHA_H: ParamSpec = shape(
    "winding_h_deg",
    "alpha_h",
    "deg",
    0.0,
    120.0,
    "winding angle α_h of the horizontal wave",
);
/// k_v.
pub const K_V: ParamSpec = shape(
    "undulations_v",
    "k_v",
    "",
    0.0,
    512.0,
    "undulations k_v of the vertical wave",
);
/// α of a circular arc (rolling, flapping).
pub const ARC: ParamSpec = shape(
    "arc_deg",
    "alpha",
    "deg",
    0.0,
    360.0,
    "arc angle α of the circular wave",
);
/// α_h of the horizontal circular arc (turning, rotation U).
pub const ARC_H: ParamSpec = shape(
    "arc_h_deg",
    "alpha_h",
    "deg",
    -360.0,
    360.0,
    "arc angle α_h of the horizontal circular curve or wave",
);
/// β, inclination of the inclined sidewinding wave.
pub const BETA: ParamSpec = shape(
    "inclination_deg",
    "beta",
    "deg",
    0.0,
    45.0,
    "inclination β = atan(α_v/α_h)",
);
/// Period T.
pub const PERIOD: ParamSpec = control("period_s", "T", "s", 0.01, 600.0, "period T of the gait");
/// Direction: +1, or −1 to run the phase backwards.
pub const DIRECTION: ParamSpec = control(
    "direction",
    "dir",
    "",
    -1.0,
    1.0,
    "+1, or -1 to run the phase backwards (reverses the motion)",
);

/// Parameters every gait takes.
pub const COMMON: [ParamSpec; 2] = [PERIOD, DIRECTION];

/// Maps keys and aliases to specs for one gait and checks values against them.
#[derive(Debug, Clone)]
pub struct Schema {
    gait: String,
    specs: Vec<ParamSpec>,
}

impl Schema {
    /// The schema of a gait: its own parameters plus [`COMMON`].
    pub fn new(gait: &str, own: &[ParamSpec]) -> Schema {
        let mut specs = own.to_vec();
        specs.extend_from_slice(&COMMON);
        Schema {
            gait: gait.to_string(),
            specs,
        }
    }

    /// The schema of a controller that has no period or direction: `own` only.
    pub fn bare(gait: &str, own: &[ParamSpec]) -> Schema {
        Schema {
            gait: gait.to_string(),
            specs: own.to_vec(),
        }
    }

    /// All parameters.
    pub fn specs(&self) -> &[ParamSpec] {
        &self.specs
    }

    /// The spec for a key or alias.
    pub fn lookup(&self, key: &str) -> Result<&ParamSpec> {
        self.specs
            .iter()
            .find(|s| s.key == key || s.alias == key)
            .ok_or_else(|| GaitError::UnknownKey {
                gait: self.gait.clone(),
                key: key.to_string(),
                known: self
                    .specs
                    .iter()
                    .map(|s| format!("{} ({})", s.key, s.alias))
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// Checks one value against its spec (finite, in range, ±1 for `direction`).
    pub fn check(&self, spec: &ParamSpec, value: f64) -> Result<()> {
        let bad = GaitError::OutOfRange {
            gait: self.gait.clone(),
            key: spec.key.to_string(),
            value,
            min: spec.min,
            max: spec.max,
        };
        if !value.is_finite() || value < spec.min || value > spec.max {
            return Err(bad);
        }
        if spec.key == DIRECTION.key && value != 1.0 && value != -1.0 {
            return Err(GaitError::Invalid {
                gait: self.gait.clone(),
                reason: format!("direction = {value}: must be 1 or -1"),
            });
        }
        Ok(())
    }

    /// Normalises a set of (key or alias, value) pairs to canonical keys, refusing unknown
    /// keys, a key given twice and values out of range.
    pub fn normalise<'a>(
        &self,
        pairs: impl IntoIterator<Item = (&'a str, f64)>,
    ) -> Result<BTreeMap<&'static str, f64>> {
        let mut out = BTreeMap::new();
        let mut spelled: BTreeMap<&'static str, &'a str> = BTreeMap::new();
        for (key, value) in pairs {
            let spec = self.lookup(key)?;
            self.check(spec, value)?;
            if let Some(prev) = spelled.insert(spec.key, key) {
                return Err(GaitError::DuplicateKey {
                    gait: self.gait.clone(),
                    key: prev.to_string(),
                    alias: key.to_string(),
                });
            }
            out.insert(spec.key, value);
        }
        Ok(out)
    }
}

/// Defaults merged with user values, with a record of which keys the user gave.
#[derive(Debug, Clone)]
pub struct Values {
    gait: String,
    values: BTreeMap<&'static str, f64>,
    given: BTreeSet<&'static str>,
}

impl Values {
    /// Defaults overlaid with the user's values (both already normalised).
    pub fn new(gait: &str, defaults: &BTreeMap<&'static str, f64>, user: &BTreeMap<&'static str, f64>) -> Values {
        let mut values = defaults.clone();
        values.extend(user.iter().map(|(k, v)| (*k, *v)));
        Values {
            gait: gait.to_string(),
            values,
            given: user.keys().copied().collect(),
        }
    }

    /// The value of a parameter (the user's, else the default); an error names a key
    /// that has neither.
    pub fn get(&self, spec: &ParamSpec) -> Result<f64> {
        self.values.get(spec.key).copied().ok_or_else(|| GaitError::Invalid {
            gait: self.gait.clone(),
            reason: format!(
                "{} ({}) has no value and no default in the gait file",
                spec.key, spec.alias
            ),
        })
    }

    /// True when the user gave this parameter.
    pub fn given(&self, spec: &ParamSpec) -> bool {
        self.given.contains(spec.key)
    }

    /// Shape mode: true when the user gave any of `shape_keys`. Then none of
    /// `control_keys` may be given too, since the shape keys determine them.
    pub fn shape_mode(&self, shape_keys: &[ParamSpec], control_keys: &[ParamSpec]) -> Result<bool> {
        let shape: Vec<_> = shape_keys.iter().filter(|s| self.given(s)).collect();
        if shape.is_empty() {
            return Ok(false);
        }
        if let Some(c) = control_keys.iter().find(|c| self.given(c)) {
            return Err(GaitError::Invalid {
                gait: self.gait.clone(),
                reason: format!(
                    "{} is given together with the shape parameter {}; give one or the other",
                    c.key, shape[0].key
                ),
            });
        }
        Ok(true)
    }

    /// Every resolved value, canonical keys.
    pub fn all(&self) -> &BTreeMap<&'static str, f64> {
        &self.values
    }
}

/// One `KEY=VALUE` parameter assignment with a finite number: the one parser of the command
/// line's `--set`, the gait node's `gait_params` and everything else that takes one. The key
/// is trimmed and must not be empty; refused with the text and what was expected.
pub fn parse_assignment(text: &str) -> std::result::Result<(String, f64), String> {
    let (k, v) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}`: expected KEY=VALUE, e.g. A=40"))?;
    let k = k.trim();
    if k.is_empty() {
        return Err(format!("`{text}`: empty key"));
    }
    let x: f64 = v
        .trim()
        .parse()
        .map_err(|_| format!("`{text}`: `{}` is not a number", v.trim()))?;
    if !x.is_finite() {
        return Err(format!("`{text}`: {x} is not a finite number"));
    }
    Ok((k.to_string(), x))
}

#[cfg(test)]
mod tests {
    use super::parse_assignment;

    #[test]
    fn assignments_are_parsed_once_and_refused_by_name() {
        assert_eq!(parse_assignment(" A = 40 "), Ok(("A".to_string(), 40.0)));
        assert!(parse_assignment("A").unwrap_err().contains("expected KEY=VALUE"));
        assert!(parse_assignment("=3").unwrap_err().contains("empty key"));
        assert!(parse_assignment("A=x").unwrap_err().contains("`x` is not a number"));
        assert!(parse_assignment("A=inf").unwrap_err().contains("not a finite number"));
        assert!(parse_assignment("A=NaN").unwrap_err().contains("not a finite number"));
    }
}
