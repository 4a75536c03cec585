//! The generated files the repository ships: URDF, controllers and bridge files of the
//! standard robots, and an SDF world for every scenario in `worlds/`. `modbot export all`
//! writes them; a test fails when a checked-in file differs from what this produces.

use std::path::{Path, PathBuf};

use modbot_core::{ModuleCatalog, RobotSpec, Scenario, Topology};

use crate::config::DescriptionConfig;
use crate::error::Result;
use crate::{STANDARD_ROBOTS, sdf, urdf};

/// One generated file: its path relative to the repository root and its content.
#[derive(Debug, Clone, PartialEq)]
pub struct Artifact {
    /// Path relative to the root.
    pub path: PathBuf,
    /// Content.
    pub content: String,
}

/// The topology of a standard robot string.
pub fn robot(spec: &str, catalog: &ModuleCatalog) -> Result<Topology> {
    let spec: RobotSpec = spec.parse()?;
    Ok(Topology::from_spec(&spec, catalog)?)
}

/// Every generated file under `root` (which must hold `worlds/*.yaml`).
pub fn standard(root: &Path, catalog: &ModuleCatalog, config: &DescriptionConfig) -> Result<Vec<Artifact>> {
    let mut out = Vec::new();
    for spec in STANDARD_ROBOTS {
        let t = robot(spec, catalog)?;
        out.push(Artifact {
            path: PathBuf::from(format!("urdf/{}.urdf", t.name)),
            content: urdf::urdf(&t, catalog, config)?,
        });
        out.push(Artifact {
            path: PathBuf::from(format!("config/controllers/{}.yaml", t.name)),
            content: urdf::controllers_yaml(&t, config),
        });
        out.push(Artifact {
            path: PathBuf::from(format!("config/bridge/{}.yaml", t.name)),
            content: urdf::bridge_yaml(&t),
        });
    }
    for scenario in scenario_files(root)? {
        let s = Scenario::load(&scenario)?;
        let name = scenario
            .file_stem()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        out.push(Artifact {
            path: PathBuf::from(format!("worlds/{name}.sdf")),
            content: sdf::world(&s)?,
        });
    }
    Ok(out)
}

/// The scenario files `worlds/*.yaml` under `root`, sorted.
pub fn scenario_files(root: &Path) -> Result<Vec<PathBuf>> {
    let dir = root.join("worlds");
    let entries = std::fs::read_dir(&dir).map_err(|e| modbot_core::CoreError::Io {
        path: dir.clone(),
        message: e.to_string(),
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    Ok(files)
}
