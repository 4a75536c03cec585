//! `config/gaits.yaml`: the default parameters of every gait, the named presets of the
//! source, and the transition times; and [`GaitLibrary`], which builds gaits from them.

use std::collections::BTreeMap;
use std::path::Path;

use modbot_core::{RobotSpec, Topology};
use serde::{Deserialize, Serialize};

use crate::cpg::{self, CpgSettings};
use crate::error::{GaitError, Result};
use crate::library::{BuiltGait, GAITS, GaitDef, RobotInfo, build, gait_def};

/// The shipped gait file, compiled in.
pub const BUILTIN_GAITS_YAML: &str = include_str!("../../../config/gaits.yaml");

/// Transition times used by [`crate::GaitPlayer`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transition {
    /// Time over which amplitudes ramp up from rest, s.
    pub ramp_s: f64,
    /// Time over which a gait switch blends the old targets into the new, s.
    pub blend_s: f64,
}

impl Default for Transition {
    fn default() -> Self {
        Transition {
            ramp_s: 2.0,
            blend_s: 1.5,
        }
    }
}

/// A named parameter set, e.g. one of the source's simulator commands (Table D.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Preset {
    /// The gait it runs.
    pub gait: String,
    /// The robot it was written for (`pp:8`, `py:16`, `pyp`); used when none is given.
    #[serde(default)]
    pub robot: Option<String>,
    /// Where it comes from.
    #[serde(default)]
    pub description: String,
    /// Parameter values (canonical keys or aliases).
    #[serde(default)]
    pub params: BTreeMap<String, f64>,
}

/// The schema of a gait file. Every section is optional in a user file, which is merged
/// over the shipped one.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GaitsFile {
    /// Transition times.
    #[serde(default)]
    pub transition: Option<Transition>,
    /// Default parameters per gait.
    #[serde(default)]
    pub gaits: BTreeMap<String, BTreeMap<String, f64>>,
    /// Named presets.
    #[serde(default)]
    pub presets: BTreeMap<String, Preset>,
}

/// A gait or preset chosen by name.
#[derive(Debug, Clone)]
pub struct Selection {
    /// The gait.
    pub def: &'static GaitDef,
    /// The preset's parameters (empty for a plain gait).
    pub params: Vec<(String, f64)>,
    /// The preset's robot, if it names one.
    pub robot: Option<String>,
}

/// Gaits with their defaults and presets, ready to build for a robot.
#[derive(Debug, Clone, PartialEq)]
pub struct GaitLibrary {
    /// Transition times.
    pub transition: Transition,
    defaults: BTreeMap<&'static str, BTreeMap<&'static str, f64>>,
    /// The CPG's defaults from the gait files (canonical keys; over the seed's).
    cpg_defaults: BTreeMap<String, f64>,
    /// Named presets.
    pub presets: BTreeMap<String, Preset>,
}

fn config_err(origin: &str, message: String) -> GaitError {
    GaitError::Config {
        origin: origin.to_string(),
        message,
    }
}

impl GaitLibrary {
    /// The shipped library (`config/gaits.yaml`, compiled in).
    pub fn builtin() -> GaitLibrary {
        // A test loads the shipped file; failing here is a build defect, not user input.
        #[allow(clippy::expect_used)]
        GaitLibrary::empty()
            .merged(BUILTIN_GAITS_YAML, "config/gaits.yaml")
            .expect("shipped config/gaits.yaml is valid")
    }

    fn empty() -> GaitLibrary {
        GaitLibrary {
            transition: Transition::default(),
            defaults: BTreeMap::new(),
            cpg_defaults: BTreeMap::new(),
            presets: BTreeMap::new(),
        }
    }

    /// The shipped library with a user gait file merged over it.
    pub fn load(path: &Path) -> Result<GaitLibrary> {
        let text = modbot_core::error::read_text(path)?;
        Self::builtin().merged(&text, &path.display().to_string())
    }

    /// Merges a gait file (YAML text) over this library; `origin` names it in errors.
    pub fn merged(mut self, text: &str, origin: &str) -> Result<GaitLibrary> {
        let file: GaitsFile = modbot_core::error::yaml_from_str(text).map_err(|e| config_err(origin, e.message))?;
        if let Some(t) = file.transition {
            for (key, v) in [("transition.ramp_s", t.ramp_s), ("transition.blend_s", t.blend_s)] {
                if !(v.is_finite() && (0.0..=600.0).contains(&v)) {
                    return Err(config_err(
                        origin,
                        format!("{key} = {v}: expected a time in [0, 600] s"),
                    ));
                }
            }
            self.transition = t;
        }
        for (name, params) in &file.gaits {
            if name == cpg::CPG {
                let normalised = cpg::normalise(params.iter().map(|(k, v)| (k.as_str(), *v)))
                    .map_err(|e| config_err(origin, format!("gaits.{name}: {e}")))?;
                self.cpg_defaults.extend(normalised);
                continue;
            }
            let def = gait_def(name).ok_or_else(|| {
                config_err(
                    origin,
                    format!("gaits.{name}: unknown gait (known: {})", known_gaits().join(", ")),
                )
            })?;
            let normalised = def
                .schema()
                .normalise(params.iter().map(|(k, v)| (k.as_str(), *v)))
                .map_err(|e| config_err(origin, format!("gaits.{name}: {e}")))?;
            self.defaults.entry(def.name).or_default().extend(normalised);
        }
        for (name, preset) in file.presets {
            if gait_def(&name).is_some() || name == cpg::CPG {
                return Err(config_err(
                    origin,
                    format!("presets.{name}: a preset cannot take a gait's name"),
                ));
            }
            if let Some(r) = &preset.robot {
                r.parse::<RobotSpec>()
                    .map_err(|e| config_err(origin, format!("presets.{name}.robot: {e}")))?;
            }
            if preset.gait == cpg::CPG {
                cpg::normalise(preset.params.iter().map(|(k, v)| (k.as_str(), *v)))
                    .map_err(|e| config_err(origin, format!("presets.{name}.params: {e}")))?;
                self.presets.insert(name, preset);
                continue;
            }
            let def = gait_def(&preset.gait)
                .ok_or_else(|| config_err(origin, format!("presets.{name}.gait: unknown gait `{}`", preset.gait)))?;
            def.schema()
                .normalise(preset.params.iter().map(|(k, v)| (k.as_str(), *v)))
                .map_err(|e| config_err(origin, format!("presets.{name}.params: {e}")))?;
            self.presets.insert(name, preset);
        }
        Ok(self)
    }

    /// Gait definitions, in master-table order.
    pub fn gaits(&self) -> &'static [GaitDef] {
        GAITS
    }

    /// The default value of a gait's parameter, if the gait file sets one.
    pub fn default_of(&self, gait: &str, key: &str) -> Option<f64> {
        self.defaults.get(gait)?.get(key).copied()
    }

    /// The CPG's settings when `name` is `cpg` or a preset of it (`None` otherwise): the
    /// seed's defaults, the gait files' `gaits.cpg`, the preset's parameters, then
    /// `overrides` (keys, aliases or per-module `key.i`).
    pub fn cpg(&self, name: &str, overrides: &[(String, f64)]) -> Option<Result<CpgSettings>> {
        let preset = match self.presets.get(name) {
            Some(p) if p.gait == cpg::CPG => Some(p),
            _ if name == cpg::CPG => None,
            _ => return None,
        };
        let resolve = || {
            let preset = match preset {
                Some(p) => cpg::normalise(p.params.iter().map(|(k, v)| (k.as_str(), *v)))?,
                None => BTreeMap::new(),
            };
            let given = cpg::normalise(overrides.iter().map(|(k, v)| (k.as_str(), *v)))?;
            CpgSettings::resolve(&[&self.cpg_defaults, &preset, &given])
        };
        Some(resolve())
    }

    /// The CPG's default for `key` (canonical): the gait files', else the seed's.
    pub fn cpg_default_of(&self, key: &str) -> Option<f64> {
        self.cpg_defaults
            .get(key)
            .copied()
            .or_else(|| cpg::DEFAULTS.iter().find(|(k, _)| *k == key).map(|(_, v)| *v))
    }

    /// Resolves a gait or preset name.
    pub fn lookup(&self, name: &str) -> Result<Selection> {
        if let Some(def) = gait_def(name) {
            return Ok(Selection {
                def,
                params: Vec::new(),
                robot: None,
            });
        }
        if name == cpg::CPG || self.presets.get(name).is_some_and(|p| p.gait == cpg::CPG) {
            return Err(GaitError::Invalid {
                gait: name.to_string(),
                reason: "the CPG is a closed-loop controller, not a sine gait (GaitLibrary::cpg builds it)".into(),
            });
        }
        if let Some(p) = self.presets.get(name) {
            let def = gait_def(&p.gait).ok_or_else(|| GaitError::UnknownGait {
                name: p.gait.clone(),
                known: known_gaits().join(", "),
            })?;
            let params = p.params.iter().map(|(k, v)| (k.clone(), *v)).collect();
            return Ok(Selection {
                def,
                params,
                robot: p.robot.clone(),
            });
        }
        let mut known = known_gaits();
        known.extend(self.presets.keys().cloned());
        Err(GaitError::UnknownGait {
            name: name.to_string(),
            known: known.join(", "),
        })
    }

    /// Builds a gait (or preset) for a robot: defaults from the gait file, then the
    /// preset's parameters, then `overrides` (keys or aliases).
    pub fn build(&self, name: &str, topology: &Topology, overrides: &[(String, f64)]) -> Result<BuiltGait> {
        let Selection {
            def, params: preset, ..
        } = self.lookup(name)?;
        let schema = def.schema();
        // Later values win: the preset's over the defaults, the user's over the preset's.
        let mut user = schema.normalise(preset.iter().map(|(k, v)| (k.as_str(), *v)))?;
        let given = schema.normalise(overrides.iter().map(|(k, v)| (k.as_str(), *v)))?;
        // A shape key given by the user replaces the preset's control keys it determines.
        let gives_shape = given.keys().any(|k| schema.lookup(k).map(|s| s.shape).unwrap_or(false));
        if gives_shape {
            user.retain(|k, _| {
                schema
                    .lookup(k)
                    .map(|s| s.shape || *k == "period_s" || *k == "direction")
                    .unwrap_or(false)
            });
        }
        user.extend(given);
        let empty = BTreeMap::new();
        let defaults = self.defaults.get(def.name).unwrap_or(&empty);
        let robot = RobotInfo::new(topology)?;
        let mut built = build(def, &robot, defaults, &user)?;
        if def.name != name {
            built.generator.name = name.to_string();
        }
        Ok(built)
    }
}

/// Names of all gaits.
pub fn known_gaits() -> Vec<String> {
    let mut names: Vec<String> = GAITS.iter().map(|g| g.name.to_string()).collect();
    names.push(cpg::CPG.to_string());
    names
}
