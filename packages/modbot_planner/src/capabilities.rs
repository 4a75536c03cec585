//! The capability table of the configurations (`config/capabilities.yaml`).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::grid::PlanError;

/// The one loader every user of a capability table goes through (the nodes' `capabilities`
/// parameter, the CLI's `--capabilities`): the table at `path`, or the shipped one when
/// there is no path. Errors name the file, the line when known, and the key
/// (`configurations.NAME.speed_m_s = -1: ...`).
pub fn load_or_builtin<P: AsRef<Path>>(path: Option<P>) -> Result<Capabilities, PlanError> {
    match path {
        Some(p) => Capabilities::load(p.as_ref()),
        None => Ok(Capabilities::builtin()),
    }
}

/// The shipped table, compiled in.
pub const BUILTIN_CAPABILITIES_YAML: &str = include_str!("../../../config/capabilities.yaml");

/// Crossing a ground obstacle with the configuration's ability.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PassOver {
    /// Highest obstacle, m.
    pub max_height_m: f64,
    /// Speed while doing it, m/s.
    pub speed_m_s: f64,
}

/// Passing under a lath in a low pose.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PassUnder {
    /// Height in the low pose, m.
    pub height_m: f64,
    /// Speed in the low pose, m/s.
    pub speed_m_s: f64,
}

fn default_rough() -> f64 {
    0.5
}

/// What one configuration can do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capability {
    /// Speed on flat ground, m/s.
    pub speed_m_s: f64,
    /// Width: the narrowest passage it fits, m.
    pub width_m: f64,
    /// Height: the lowest clearance it passes under normally, m.
    pub height_m: f64,
    /// Highest step it crosses without an ability, m.
    pub max_step_m: f64,
    /// Speed on rough ground as a fraction of `speed_m_s`.
    #[serde(default = "default_rough")]
    pub rough_speed_factor: f64,
    /// The gait it drives with (a gait name, or the configuration's own motion).
    pub gait: String,
    /// Pass-over ability.
    #[serde(default)]
    pub pass_over: Option<PassOver>,
    /// Pass-under ability.
    #[serde(default)]
    pub pass_under: Option<PassUnder>,
}

/// All configurations and the reconfiguration time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capabilities {
    /// Time to reconfigure, s.
    pub reconfigure_s: f64,
    /// By name.
    pub configurations: BTreeMap<String, Capability>,
}

impl Capabilities {
    /// Parses and checks a table.
    pub fn from_yaml(text: &str, origin: &str) -> Result<Capabilities, PlanError> {
        let bad = |message: String| PlanError::Malformed {
            origin: origin.to_string(),
            line: 0,
            message,
        };
        let c: Capabilities = modbot_core::error::yaml_from_str(text).map_err(|e| PlanError::Malformed {
            origin: origin.to_string(),
            line: e.line.unwrap_or(0),
            message: e.message,
        })?;
        let pos = |key: String, v: f64| -> Result<(), PlanError> {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(bad(format!("{key} = {v}: expected a finite number > 0")))
            }
        };
        pos("reconfigure_s".into(), c.reconfigure_s)?;
        for (name, k) in &c.configurations {
            pos(format!("configurations.{name}.speed_m_s"), k.speed_m_s)?;
            pos(format!("configurations.{name}.width_m"), k.width_m)?;
            pos(format!("configurations.{name}.height_m"), k.height_m)?;
            if !(k.rough_speed_factor.is_finite() && k.rough_speed_factor > 0.0 && k.rough_speed_factor <= 1.0) {
                return Err(bad(format!(
                    "configurations.{name}.rough_speed_factor = {}: expected (0, 1]",
                    k.rough_speed_factor
                )));
            }
            if !(k.max_step_m.is_finite() && k.max_step_m >= 0.0) {
                return Err(bad(format!(
                    "configurations.{name}.max_step_m = {}: expected ≥ 0",
                    k.max_step_m
                )));
            }
            if let Some(p) = k.pass_over {
                pos(format!("configurations.{name}.pass_over.max_height_m"), p.max_height_m)?;
                pos(format!("configurations.{name}.pass_over.speed_m_s"), p.speed_m_s)?;
            }
            if let Some(p) = k.pass_under {
                pos(format!("configurations.{name}.pass_under.height_m"), p.height_m)?;
                pos(format!("configurations.{name}.pass_under.speed_m_s"), p.speed_m_s)?;
            }
        }
        if c.configurations.is_empty() {
            return Err(bad("configurations: none".into()));
        }
        Ok(c)
    }

    /// Loads a table.
    pub fn load(path: &Path) -> Result<Capabilities, PlanError> {
        let text = modbot_core::error::read_capped(path).map_err(|e| PlanError::Malformed {
            origin: path.display().to_string(),
            line: 0,
            message: e.to_string(),
        })?;
        Self::from_yaml(&text, &path.display().to_string())
    }

    /// The capability of a configuration; an unknown name is an `InvalidRequest` naming it.
    pub fn get(&self, configuration: &str) -> Result<&Capability, PlanError> {
        self.configurations.get(configuration).ok_or_else(|| {
            PlanError::InvalidRequest(format!(
                "configuration `{configuration}` is not in the capability table"
            ))
        })
    }

    /// The shipped table.
    pub fn builtin() -> Capabilities {
        // A test loads the shipped file; failing here is a build defect, not user input.
        #[allow(clippy::expect_used)]
        Self::from_yaml(BUILTIN_CAPABILITIES_YAML, "config/capabilities.yaml")
            .expect("shipped config/capabilities.yaml is valid")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_loader_names_the_file_and_the_key() {
        assert_eq!(load_or_builtin(None::<&Path>), Ok(Capabilities::builtin()));
        let dir = std::env::temp_dir().join(format!("modbot-caps-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("tmp");
        let f = dir.join("caps.yaml");
        let bad = BUILTIN_CAPABILITIES_YAML.replacen("speed_m_s:", "speed_m_s: -1 #", 1);
        std::fs::write(&f, bad).expect("write");
        let e = load_or_builtin(Some(&f)).expect_err("negative speed").to_string();
        assert!(e.contains("caps.yaml") && e.contains("speed_m_s = -1"), "{e}");
        std::fs::write(&f, "reconfigure_s: 1\nconfigurations: {a: {speed: 1}}\n").expect("write");
        let e = load_or_builtin(Some(&f)).expect_err("unknown key").to_string();
        assert!(e.contains("caps.yaml:2") && e.contains("speed"), "{e}");
        let e = load_or_builtin(Some(dir.join("missing.yaml")))
            .expect_err("missing")
            .to_string();
        assert!(e.contains("missing.yaml"), "{e}");
        assert!(
            Capabilities::builtin()
                .get("hovercraft")
                .expect_err("unknown")
                .to_string()
                .contains("hovercraft")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
