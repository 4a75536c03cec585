//! `modbot export`: write descriptions (URDF, controllers, bridge, worlds).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use modbot_core::Scenario;
use modbot_description::{DescriptionConfig, artifacts, sdf, urdf};

use crate::cli::{ExportArgs, ExportWhat, emit};

fn write(out: Option<&Path>, content: &str) -> Result<()> {
    match out {
        Some(path) => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            }
            std::fs::write(path, content).with_context(|| format!("writing {}", path.display()))?;
            eprintln!("wrote {}", path.display());
            Ok(())
        }
        None => emit(content),
    }
}

pub fn run(args: &ExportArgs) -> Result<()> {
    let catalog = args.config.catalog()?;
    let config = match &args.description {
        Some(p) => DescriptionConfig::load(p).with_context(|| format!("loading {}", p.display()))?,
        None => DescriptionConfig::builtin(),
    };
    let out = args.out.as_deref();
    match &args.what {
        ExportWhat::Urdf { robot } => write(
            out,
            &urdf::urdf(&artifacts::robot(robot, &catalog)?, &catalog, &config)?,
        ),
        ExportWhat::Controllers { robot } => write(
            out,
            &urdf::controllers_yaml(&artifacts::robot(robot, &catalog)?, &config),
        ),
        ExportWhat::Bridge { robot } => write(out, &urdf::bridge_yaml(&artifacts::robot(robot, &catalog)?)),
        ExportWhat::World { scenario } => {
            let s = Scenario::load(scenario).with_context(|| format!("loading scenario {}", scenario.display()))?;
            write(out, &sdf::world(&s)?)
        }
        ExportWhat::All { root } => {
            let root = root.clone().unwrap_or_else(|| PathBuf::from("."));
            for a in artifacts::standard(&root, &catalog, &config)? {
                write(Some(&root.join(&a.path)), &a.content)?;
            }
            Ok(())
        }
    }
}
