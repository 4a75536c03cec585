//! Shared setup of simulation runs for `run`, `sweep` and `bench`.

use std::path::Path;

use anyhow::{Context, Result};
use modbot_core::{ModuleCatalog, RobotSpec, Scenario, Topology};
use modbot_gaits::{BuiltGait, GaitLibrary};
use modbot_sim::{Engine, SimRobot, SimSettings, Simulator};

use crate::cli::BadInput;

/// Loads a scenario from a `.yaml`, or from the `.yaml` beside a generated `.sdf`; the
/// default is flat ground with μ = 0.2.
pub fn scenario(world: Option<&Path>) -> Result<Scenario> {
    let Some(path) = world else {
        return Ok(Scenario::from_yaml("name: flat\n", "built-in flat world")?);
    };
    let yaml = match path.extension().and_then(|e| e.to_str()) {
        Some("yaml") | Some("yml") => path.to_path_buf(),
        Some("sdf") => {
            let y = path.with_extension("yaml");
            if !y.exists() {
                return Err(BadInput(format!(
                    "{}: the embedded simulator reads worlds through their scenario file, and {} does not exist",
                    path.display(),
                    y.display()
                ))
                .into());
            }
            y
        }
        _ => {
            return Err(BadInput(format!(
                "{}: expected a scenario .yaml or a generated .sdf",
                path.display()
            ))
            .into());
        }
    };
    Scenario::load(&yaml).with_context(|| format!("loading scenario {}", yaml.display()))
}

/// Everything a run needs.
pub struct Setup {
    pub spec: RobotSpec,
    pub topology: Topology,
    pub built: BuiltGait,
    pub sim: Simulator,
    pub max_speeds: Vec<f64>,
    pub body_length: f64,
}

/// Builds the robot, the gait and the simulator; `tune` adjusts the simulator settings.
#[allow(clippy::too_many_arguments)]
pub fn setup(
    robot: &str,
    gait: &str,
    set: &[(String, f64)],
    scenario: &Scenario,
    catalog: &ModuleCatalog,
    library: &GaitLibrary,
    engine: Engine,
    step_s: Option<f64>,
    tune: &dyn Fn(&mut SimSettings),
) -> Result<Setup> {
    let spec: RobotSpec = robot.parse()?;
    let topology = Topology::from_spec(&spec, catalog)?;
    let built = library.build(gait, &topology, catalog, set)?;
    let robot = SimRobot::from_topology(&topology, catalog)?;
    let mut settings = SimSettings::for_engine(engine, scenario);
    if let Some(s) = step_s {
        settings.step_s = s;
    }
    tune(&mut settings);
    let sim = Simulator::new(&robot, scenario, settings)?;
    let max_speeds = robot.max_speeds();
    let body_length = topology
        .modules
        .iter()
        .map(|m| catalog.kind(&m.kind).map(|k| k.length_m))
        .sum::<Result<f64, _>>()?;
    Ok(Setup {
        spec,
        topology,
        built,
        sim,
        max_speeds,
        body_length,
    })
}
