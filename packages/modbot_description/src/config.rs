//! `config/description.yaml`: generation settings.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{DescriptionError, Result};

/// The shipped settings, compiled in.
pub const BUILTIN_DESCRIPTION_YAML: &str = include_str!("../../../config/description.yaml");

/// Settings for description generation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DescriptionConfig {
    /// ros2_control update rate, Hz.
    pub controller_update_rate_hz: f64,
    /// Odometry publishing rate in Gazebo, Hz.
    pub odometry_rate_hz: f64,
    /// Path of the controllers file given to gz_ros2_control; `{robot}` is replaced by the
    /// robot name.
    pub controllers_path: String,
    /// Module colours.
    pub colors: Colors,
}

/// RGBA colours by joint kind.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Colors {
    /// Pitch modules.
    pub pitch: [f64; 4],
    /// Yaw modules.
    pub yaw: [f64; 4],
}

impl DescriptionConfig {
    /// Parses and validates settings.
    pub fn from_yaml(text: &str, origin: &str) -> Result<Self> {
        let err = |message: String| DescriptionError::Config {
            origin: origin.to_string(),
            message,
        };
        let c: DescriptionConfig = modbot_core::error::yaml_from_str(text).map_err(|e| err(e.message))?;
        for (key, v) in [
            ("controller_update_rate_hz", c.controller_update_rate_hz),
            ("odometry_rate_hz", c.odometry_rate_hz),
        ] {
            if !(v.is_finite() && v > 0.0 && v <= 10_000.0) {
                return Err(err(format!("{key} = {v}: expected a rate in (0, 10000] Hz")));
            }
        }
        for (key, rgba) in [("colors.pitch", c.colors.pitch), ("colors.yaw", c.colors.yaw)] {
            if rgba.iter().any(|v| !(0.0..=1.0).contains(v)) {
                return Err(err(format!("{key} = {rgba:?}: expected RGBA components in [0, 1]")));
            }
        }
        if c.controllers_path.trim().is_empty() {
            return Err(err("controllers_path: empty".into()));
        }
        Ok(c)
    }

    /// Loads settings from a file.
    pub fn load(path: &Path) -> Result<Self> {
        let text = modbot_core::error::read_text(path)?;
        Self::from_yaml(&text, &path.display().to_string())
    }

    /// The shipped settings.
    pub fn builtin() -> Self {
        // A test loads the shipped file; failing here is a build defect, not user input.
        #[allow(clippy::expect_used)]
        Self::from_yaml(BUILTIN_DESCRIPTION_YAML, "config/description.yaml")
            .expect("shipped config/description.yaml is valid")
    }
}
