//! `modbot export`: write descriptions (URDF, controllers, bridge, worlds).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use modbot_app::organism::{load_organism, organism_launch};
use modbot_core::Scenario;
use modbot_description::dock::{GzDock, port_link};
use modbot_description::{DescriptionConfig, artifacts, sdf, urdf};

use clap::Subcommand;

use crate::common::{ConfigArgs, emit};

#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    #[command(subcommand)]
    pub what: ExportWhat,
    /// Output file (default: standard output; `all` writes under its --root).
    #[arg(long, short, value_name = "FILE", global = true)]
    pub out: Option<PathBuf>,
    /// Description settings (default: the shipped config/description.yaml).
    #[arg(long, value_name = "FILE", global = true)]
    pub description: Option<PathBuf>,
    #[command(flatten)]
    pub config: ConfigArgs,
}

#[derive(Debug, Subcommand)]
pub enum ExportWhat {
    /// URDF of a robot (a preset pp:M, py:M, pyp, or a robot file) with ros2_control and Gazebo plugins.
    Urdf {
        /// Robot: a preset (pp:M, py:M, pyp) or a robot file.
        robot: String,
    },
    /// The robot's xacro for Gazebo: the URDF plus the gz_ros2_control plugin (its controllers
    /// file by `$(find modbot_bringup)`, its namespace by the xacro argument `namespace`).
    Xacro {
        /// Robot: a preset (pp:M, py:M, pyp) or a robot file.
        robot: String,
    },
    /// ros2_control controllers YAML of a robot.
    Controllers {
        /// Robot: a preset (pp:M, py:M, pyp) or a robot file.
        robot: String,
    },
    /// ros_gz_bridge YAML of a robot.
    Bridge {
        /// Robot: a preset (pp:M, py:M, pyp) or a robot file.
        robot: String,
    },
    /// SDF world of a scenario file.
    World {
        /// Scenario YAML.
        scenario: PathBuf,
    },
    /// ROS 2 launch file of a digital-hormone organism: sim_node simulating it and one
    /// module_node per module, each connector's hormone topic wired to its neighbour's.
    Launch {
        /// caterpillar:N, v:N, scorpion, or a robot file of `cube` modules.
        organism: String,
        /// A caterpillar with its turning module rolled 90°.
        #[arg(long)]
        pitched: bool,
        /// The scorpion without its two tail modules.
        #[arg(long)]
        no_tail: bool,
    },
    /// A dock in Gazebo (decision record 0051): the DetachableJoint system that joins a port
    /// of one spawned module to a port of another, as JSON: the plugin, the `gz service`
    /// command that adds it to the parent model (and so docks), its detach/attach/state
    /// topics and their ros_gz_bridge entries. Ports are the module's (F, L, R, BF, BS).
    GzDock {
        /// The modules' robot (spawned from its URDF under each model name).
        #[arg(long, default_value = "wheelfoot")]
        robot: String,
        /// The world's name.
        #[arg(long, default_value = "strategic_mission")]
        world: String,
        /// The dock's name.
        #[arg(long, default_value = "dock")]
        name: String,
        /// The model the system is added to.
        #[arg(long)]
        parent_model: String,
        /// Its port.
        #[arg(long)]
        parent_port: String,
        /// The model it holds.
        #[arg(long)]
        child_model: String,
        /// Its port.
        #[arg(long)]
        child_port: String,
    },
    /// Every shipped file: urdf/ (URDF and xacro), config/robots/, config/controllers/, config/bridge/, worlds/*.sdf.
    All {
        /// Repository root, holding worlds/*.yaml (default: the current directory).
        #[arg(long)]
        root: Option<PathBuf>,
    },
}

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
        ExportWhat::Urdf { robot } => write(out, &urdf::urdf(&artifacts::robot(robot, &catalog)?, &config)?),
        ExportWhat::Xacro { robot } => write(out, &urdf::urdf_xacro(&artifacts::robot(robot, &catalog)?, &config)?),
        ExportWhat::Controllers { robot } => write(
            out,
            &urdf::controllers_yaml(&artifacts::robot(robot, &catalog)?, &config),
        ),
        ExportWhat::Bridge { robot } => write(out, &urdf::bridge_yaml(&artifacts::robot(robot, &catalog)?)),
        ExportWhat::World { scenario } => {
            let s = Scenario::load(scenario).with_context(|| format!("loading scenario {}", scenario.display()))?;
            write(out, &sdf::world(&s)?)
        }
        ExportWhat::Launch {
            organism,
            pitched,
            no_tail,
        } => {
            let (robot, settings) = load_organism(organism, *pitched, *no_tail, &catalog)?;
            write(out, &organism_launch(&robot, organism, *pitched, *no_tail, &settings)?)
        }
        ExportWhat::GzDock {
            robot,
            world,
            name,
            parent_model,
            parent_port,
            child_model,
            child_port,
        } => {
            let topology = artifacts::robot(robot, &catalog)?;
            let model = modbot_description::UrdfModel::parse(&urdf::urdf(&topology, &config)?, robot)?;
            let link = |key: &str, port: &str| -> Result<String> {
                port_link(&topology, port).with_context(|| format!("--{key}"))
            };
            let dock = GzDock::new(
                name,
                world,
                &model,
                (parent_model, &link("parent-port", parent_port)?),
                (child_model, &link("child-port", child_port)?),
            )?;
            let json = serde_json::json!({
                "name": dock.name,
                "world": dock.world,
                "parent_model": dock.parent_model,
                "parent_link": dock.parent_link,
                "child_model": dock.child_model,
                "child_link": dock.child_link,
                "plugin": dock.plugin_xml(),
                "service": dock.service(),
                "request": dock.request(),
                "gz_service_command": dock.gz_service_command(),
                "topics": {
                    "detach": {"gz": dock.gz_topic("detach"), "ros": dock.ros_topic("detach")},
                    "attach": {"gz": dock.gz_topic("attach"), "ros": dock.ros_topic("attach")},
                    "state": {"gz": dock.gz_topic("state"), "ros": dock.ros_topic("state")},
                },
                "bridge_yaml": dock.bridge_yaml(),
            });
            write(out, &format!("{}\n", serde_json::to_string_pretty(&json)?))
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
