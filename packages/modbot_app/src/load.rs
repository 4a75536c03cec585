//! Loading what a run needs: the module catalog, the gait library, the robot and the world.
//! One place, so the command line, the nodes and the search accept the same files.

use std::path::Path;

use modbot_core::{ModuleCatalog, Scenario, Topology};
use modbot_gaits::GaitLibrary;

use crate::error::{AppError, Result};

/// The module catalog: a file, or the shipped `config/modules.yaml`.
pub fn load_catalog(path: Option<&Path>) -> Result<ModuleCatalog> {
    Ok(match path {
        Some(p) => ModuleCatalog::load(p)?,
        None => ModuleCatalog::builtin(),
    })
}

/// The gait library: the shipped `config/gaits.yaml`, with a user file merged over it.
pub fn load_gaits(path: Option<&Path>) -> Result<GaitLibrary> {
    Ok(match path {
        Some(p) => GaitLibrary::load(p)?,
        None => GaitLibrary::builtin(),
    })
}

/// A robot: a robot file (`*.yaml`, `*.yml`) or a preset (`pp:8`, `py:16`, `pyp`).
pub fn load_robot(robot: &str, catalog: &ModuleCatalog) -> Result<Topology> {
    Ok(Topology::resolve(robot, catalog)?)
}

/// The wheel-foot thesis's terrain (`worlds/wheelfoot_mu1.yaml`): flat, μ = 1.0, multiplied.
pub const WHEELFOOT_WORLD_YAML: &str = include_str!("../../../worlds/wheelfoot_mu1.yaml");

/// The shipped mazes (the repository's staged evaluation, seed 002 §8), compiled in.
pub const SHIPPED_MAZES: [(&str, &str); 3] = [
    ("maze_sls", include_str!("../../../worlds/maze_sls.yaml")),
    ("maze_b", include_str!("../../../worlds/maze_b.yaml")),
    ("maze_srs", include_str!("../../../worlds/maze_srs.yaml")),
];

/// A maze world: a shipped maze by name (`maze_sls`, `maze_b`, `maze_srs`) or a scenario
/// file with a `maze:` section.
pub fn load_maze(name_or_path: &str) -> Result<Scenario> {
    let world = match SHIPPED_MAZES.iter().find(|(n, _)| *n == name_or_path) {
        Some((n, text)) => Scenario::from_yaml(text, &format!("worlds/{n}.yaml"))?,
        None => {
            let path = Path::new(name_or_path);
            if path.extension().is_none() && !path.exists() {
                return Err(AppError::BadInput(format!(
                    "maze `{name_or_path}`: not a shipped maze ({}) nor a scenario file",
                    SHIPPED_MAZES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
                )));
            }
            load_world(Some(path))?
        }
    };
    if world.maze.is_none() {
        return Err(AppError::BadInput(format!(
            "world `{}` has no maze (a `maze:` section)",
            world.name
        )));
    }
    Ok(world)
}

/// A world for `robot`: the file at `path`, or without one the default world of the robot's
/// kind: the wheel-foot thesis's terrain for the wheel-foot robots (their plate and wheel
/// frictions mean something only where the terrain's multiplies them), else flat ground
/// with μ = 0.2 (the limbless thesis's).
pub fn load_world_for(path: Option<&Path>, robot: &Topology) -> Result<Scenario> {
    match path {
        None if crate::controller::modular_robot(robot).is_some() => {
            Ok(Scenario::from_yaml(WHEELFOOT_WORLD_YAML, "worlds/wheelfoot_mu1.yaml")?)
        }
        _ => load_world(path),
    }
}

/// A world: a scenario `.yaml`/`.yml`, or the scenario beside a generated `.sdf`; without
/// one, flat ground with μ = 0.2.
pub fn load_world(path: Option<&Path>) -> Result<Scenario> {
    let Some(path) = path else {
        return Ok(Scenario::from_yaml("name: flat\n", "built-in flat world")?);
    };
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    let yaml = match ext.as_deref() {
        Some("yaml" | "yml") => path.to_path_buf(),
        Some("sdf") => {
            let y = path.with_extension("yaml");
            if !y.exists() {
                return Err(AppError::BadInput(format!(
                    "{}: the embedded simulator reads worlds through their scenario file, and {} does not exist",
                    path.display(),
                    y.display()
                )));
            }
            y
        }
        _ => {
            return Err(AppError::BadInput(format!(
                "{}: expected a scenario .yaml (or .yml) or a generated .sdf",
                path.display()
            )));
        }
    };
    Ok(Scenario::load(&yaml)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> std::path::PathBuf {
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    #[test]
    fn worlds_by_yaml_yml_and_sdf() {
        let dir = std::env::temp_dir().join(format!("modbot_app_worlds_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let yml = dir.join("w.yml");
        std::fs::write(&yml, "name: w\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(load_world(Some(&yml)).unwrap_or_else(|e| panic!("{e}")).name, "w");
        let sdf = root().join("worlds/obstacle_course.sdf");
        assert_eq!(
            load_world(Some(&sdf)).unwrap_or_else(|e| panic!("{e}")).name,
            load_world(Some(&sdf.with_extension("yaml")))
                .unwrap_or_else(|e| panic!("{e}"))
                .name
        );
        let e = load_world(Some(&dir.join("w.txt")))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("w.txt") && e.contains(".yml"), "{e}");
        let e = load_world(Some(&dir.join("lonely.sdf")))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("lonely.yaml"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn robots_by_file_and_preset_are_the_same() {
        let c = ModuleCatalog::builtin();
        for (file, preset) in [("pp_8", "pp:8"), ("py_16", "py:16"), ("pyp", "pyp")] {
            let path = root().join(format!("config/robots/{file}.yaml"));
            let a = load_robot(&path.display().to_string(), &c).unwrap_or_else(|e| panic!("{e}"));
            let b = load_robot(preset, &c).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(a, b, "{file}");
        }
        let e = load_robot("config/robots/none.yaml", &c)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("none.yaml"), "{e}");
    }
}
