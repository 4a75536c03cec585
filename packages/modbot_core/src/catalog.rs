//! The module catalog: geometry, mass, hinge range and servo data of every module kind.
//!
//! Loaded from YAML (`config/modules.yaml`); the shipped file is also compiled in as
//! [`ModuleCatalog::builtin`] so tools work from any directory.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result, parse_yaml, read_text};

/// The shipped catalog, `config/modules.yaml`.
pub const BUILTIN_MODULES_YAML: &str = include_str!("../../../config/modules.yaml");

/// All module kinds, by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModuleCatalog {
    /// Kind used by the chain builders when none is named.
    pub default_kind: String,
    /// Module kinds by name.
    pub modules: BTreeMap<String, ModuleKind>,
}

/// One kind of hinge module: two equal halves of length L/2 joined by one revolute joint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModuleKind {
    /// Free text: where the numbers come from.
    #[serde(default)]
    pub description: String,
    /// Length L along the chain axis, m.
    pub length_m: f64,
    /// Width W along the hinge axis of a pitch module, m.
    pub width_m: f64,
    /// Height H, m.
    pub height_m: f64,
    /// Total mass m, kg (m/2 per half).
    pub mass_kg: f64,
    /// Bending range of the hinge.
    pub hinge: Hinge,
    /// Servo that drives the hinge.
    pub servo: Servo,
    /// Contact properties.
    pub contact: Contact,
}

/// Bending range of a hinge, degrees; 0 is straight.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hinge {
    /// Lower limit, deg.
    pub min_deg: f64,
    /// Upper limit, deg.
    pub max_deg: f64,
}

/// Position servo: w = kp (target − angle), clipped to the speed and torque limits.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Servo {
    /// Maximum torque, N·m.
    pub max_torque_nm: f64,
    /// Maximum angular speed, deg/s.
    pub max_speed_deg_s: f64,
    /// Proportional gain from angle error (rad) to commanded speed (rad/s), 1/s.
    pub kp: f64,
    /// Position tolerance for "target reached", deg.
    pub tolerance_deg: f64,
}

/// Contact (friction) properties of the module's surface.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contact {
    /// Coulomb friction coefficient against the ground.
    pub friction: f64,
}

impl ModuleKind {
    /// Maximum servo speed in rad/s.
    pub fn max_speed_rad_s(&self) -> f64 {
        self.servo.max_speed_deg_s.to_radians()
    }

    /// Checks every field; `key` is the dotted prefix used in error messages.
    pub fn validate(&self, key: &str) -> Result<()> {
        let positive = |name: &str, v: f64| -> Result<()> {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(CoreError::invalid(format!("{key}.{name}"), v, "a finite number > 0"))
            }
        };
        positive("length_m", self.length_m)?;
        positive("width_m", self.width_m)?;
        positive("height_m", self.height_m)?;
        positive("mass_kg", self.mass_kg)?;
        positive("servo.max_torque_nm", self.servo.max_torque_nm)?;
        positive("servo.max_speed_deg_s", self.servo.max_speed_deg_s)?;
        positive("servo.kp", self.servo.kp)?;
        positive("servo.tolerance_deg", self.servo.tolerance_deg)?;
        let h = self.hinge;
        if !(h.min_deg.is_finite() && (-180.0..=0.0).contains(&h.min_deg)) {
            return Err(CoreError::invalid(
                format!("{key}.hinge.min_deg"),
                h.min_deg,
                "a value in [-180, 0]",
            ));
        }
        if !(h.max_deg.is_finite() && (0.0..=180.0).contains(&h.max_deg) && h.max_deg > h.min_deg) {
            return Err(CoreError::invalid(
                format!("{key}.hinge.max_deg"),
                h.max_deg,
                "a value in [0, 180] above hinge.min_deg",
            ));
        }
        let mu = self.contact.friction;
        if !(mu.is_finite() && mu >= 0.0) {
            return Err(CoreError::invalid(
                format!("{key}.contact.friction"),
                mu,
                "a finite number >= 0",
            ));
        }
        Ok(())
    }
}

impl ModuleCatalog {
    /// Parses and validates a catalog from YAML text; `origin` names the source in errors.
    pub fn from_yaml(text: &str, origin: &str) -> Result<Self> {
        let catalog: ModuleCatalog = parse_yaml(text, origin)?;
        catalog.validate().map_err(|e| e.in_file(origin))?;
        Ok(catalog)
    }

    /// Loads and validates a catalog file.
    pub fn load(path: &Path) -> Result<Self> {
        Self::from_yaml(&read_text(path)?, &path.display().to_string())
    }

    /// The shipped catalog (`config/modules.yaml`, compiled in).
    pub fn builtin() -> Self {
        // The shipped file is checked by a test; failing here is a build defect, not user input.
        #[allow(clippy::expect_used)]
        Self::from_yaml(BUILTIN_MODULES_YAML, "config/modules.yaml").expect("shipped config/modules.yaml is valid")
    }

    /// Checks every module kind and the default kind.
    pub fn validate(&self) -> Result<()> {
        if self.modules.is_empty() {
            return Err(CoreError::invalid("modules", "{}", "at least one module kind"));
        }
        for (name, kind) in &self.modules {
            kind.validate(&format!("modules.{name}"))?;
        }
        self.kind(&self.default_kind)
            .map_err(|_| CoreError::invalid("default_kind", &self.default_kind, format!("one of: {}", self.known())))?;
        Ok(())
    }

    /// Looks up a module kind by name.
    pub fn kind(&self, name: &str) -> Result<&ModuleKind> {
        self.modules.get(name).ok_or_else(|| CoreError::UnknownModuleKind {
            kind: name.to_string(),
            known: self.known(),
        })
    }

    /// The default module kind.
    pub fn default_module(&self) -> Result<&ModuleKind> {
        self.kind(&self.default_kind)
    }

    fn known(&self) -> String {
        self.modules.keys().cloned().collect::<Vec<_>>().join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_is_the_y1_module() {
        let c = ModuleCatalog::builtin();
        let y1 = c.default_module().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.default_kind, "y1");
        assert_eq!(y1.length_m, 0.072);
        assert_eq!((y1.width_m, y1.height_m), (0.052, 0.052));
        assert_eq!(y1.mass_kg, 0.050);
        assert_eq!((y1.hinge.min_deg, y1.hinge.max_deg), (-90.0, 90.0));
        assert_eq!(y1.servo.max_torque_nm, 0.314);
        assert_eq!(y1.servo.max_speed_deg_s, 260.0);
        assert_eq!(y1.servo.kp, 8.6);
        // W_max = 13π/9 rad/s (Table D.2)
        assert!((y1.max_speed_rad_s() - 13.0 * std::f64::consts::PI / 9.0).abs() < 1e-12);
    }

    #[test]
    fn unknown_key_is_named() {
        let text = BUILTIN_MODULES_YAML.replace("kp: 8.6", "kp: 8.6\n      gain_typo: 1");
        let err = ModuleCatalog::from_yaml(&text, "test.yaml").unwrap_err().to_string();
        assert!(err.contains("gain_typo"), "{err}");
        assert!(err.contains("test.yaml"), "{err}");
    }

    #[test]
    fn bad_value_is_named() {
        let text = BUILTIN_MODULES_YAML.replace("mass_kg: 0.050", "mass_kg: -1");
        let err = ModuleCatalog::from_yaml(&text, "test.yaml").unwrap_err().to_string();
        assert!(err.contains("modules.y1.mass_kg"), "{err}");
        let text = BUILTIN_MODULES_YAML.replace("default_kind: y1", "default_kind: y9");
        let err = ModuleCatalog::from_yaml(&text, "test.yaml").unwrap_err().to_string();
        assert!(err.contains("default_kind") && err.contains("y9"), "{err}");
        let text = BUILTIN_MODULES_YAML.replace("max_deg: 90.0", "max_deg: -95.0");
        let err = ModuleCatalog::from_yaml(&text, "test.yaml").unwrap_err().to_string();
        assert!(err.contains("hinge.max_deg"), "{err}");
    }

    #[test]
    fn unknown_kind_lists_known() {
        let err = ModuleCatalog::builtin().kind("cube").unwrap_err().to_string();
        assert!(err.contains("cube") && err.contains("y1"), "{err}");
    }
}
