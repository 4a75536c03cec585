#![doc = include_str!("../README.md")]

pub mod args;
pub mod dds;
pub mod error;
pub mod launch;
pub mod netns;
pub mod params;
pub mod transport;

/// The nodes' logic, written once against [`transport::Transport`].
pub mod nodes {
    pub mod executive;
    pub mod gait;
    pub mod planner;
    pub mod sim;

    use crate::params::{ParamDecl, ParamValue};

    /// The `robot` parameter the nodes that build a robot share.
    pub(crate) fn robot_decl() -> ParamDecl {
        ParamDecl {
            name: "robot",
            default: ParamValue::Str("pp:8".into()),
            description: "robot: pp:N, py:N or pyp:3",
        }
    }

    /// The `modules_file` parameter (see [`module_catalog`]).
    pub(crate) fn modules_file_decl() -> ParamDecl {
        ParamDecl {
            name: "modules_file",
            default: ParamValue::Str(String::new()),
            description: "module catalog YAML (empty: built-in)",
        }
    }

    /// The module catalog a `modules_file` parameter names ("" = the built-in one).
    pub fn module_catalog(path: &str) -> Result<modbot_core::ModuleCatalog, String> {
        if path.is_empty() {
            Ok(modbot_core::ModuleCatalog::builtin())
        } else {
            modbot_core::ModuleCatalog::load(std::path::Path::new(path)).map_err(|e| format!("modules_file: {e}"))
        }
    }
}

pub use args::RosArgs;
pub use error::{Result, RosError};
pub use transport::{Level, Pub, Qos, Server, Sub, Transport};

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use params::{NodeConfig, ParamMap, load_params_file, resolve};

/// Everything a node binary does before its loop: parse `--ros-args`, set up logging, read
/// parameter files and `-p` overrides into the typed configuration, and join the graph.
pub fn start_node<C: NodeConfig>(default_name: &str, argv: Vec<String>) -> Result<(dds::DdsTransport, C)> {
    let args = RosArgs::parse(argv)?;
    init_logging(args.log_level.as_deref());
    if let Some(extra) = args.rest.first() {
        return Err(RosError::Args(format!(
            "unexpected argument `{extra}` (node options go after --ros-args, e.g. -p name:=value)"
        )));
    }
    let name = args.node_name.clone().unwrap_or_else(|| default_name.to_string());
    let ns = args.namespace.clone().unwrap_or_else(|| "/".into());
    let files: Vec<ParamMap> = args
        .params_files
        .iter()
        .map(|f| load_params_file(std::path::Path::new(f), &name, &ns))
        .collect::<Result<_>>()?;
    let (map, cfg) = resolve::<C>(&files, &args.params)?;
    let t = dds::DdsTransport::start::<C>(default_name, &args, &map)?;
    Ok((t, cfg))
}

/// stderr logging through tracing (ros2-client's own `log` lines included) at `level`
/// (`RUST_LOG` wins when set).
pub fn init_logging(level: Option<&str>) {
    let lvl = match level {
        Some("fatal") => "error",
        Some(l) => l,
        None => "info",
    };
    // ros2-client and RustDDS are chatty below error. The discovery database's complaint
    // about ros2-client's own `/clock` reader type is known (decision record 0015): off.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(format!(
            "{lvl},rustdds=error,rustdds::discovery::discovery_db=off,ros2_client=error"
        ))
    });
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// Environment variable a launcher sets to its pid: the node exits when that process is
/// gone (killed launchers must not leave nodes behind).
pub const PARENT_ENV: &str = "MODBOT_LAUNCH_PARENT";

/// With [`PARENT_ENV`] set, exits this process as soon as its parent is no longer that pid.
pub fn watch_parent() {
    let Some(pid) = std::env::var(PARENT_ENV).ok().and_then(|s| s.parse::<u32>().ok()) else {
        return;
    };
    let _ = std::thread::Builder::new().name("parent-watch".into()).spawn(move || {
        loop {
            if std::os::unix::process::parent_id() != pid {
                // stderr may be a pipe nobody reads any more: no eprintln! (it panics).
                use std::io::Write as _;
                let _ = writeln!(std::io::stderr(), "launcher {pid} is gone: stopping");
                std::process::exit(0);
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    });
}

/// The nodes this crate provides, by executable name.
pub const NODES: &[&str] = &["gait_node", "sim_node", "planner_node", "executive_node"];

/// Runs a node's loop until the process is told to stop; errors print and exit 1.
pub fn main_of<C: NodeConfig>(
    default_name: &str,
    argv: Vec<String>,
    body: fn(&mut dds::DdsTransport, C, Arc<AtomicBool>) -> Result<()>,
) -> std::process::ExitCode {
    let stop = Arc::new(AtomicBool::new(false));
    watch_parent();
    let r = start_node::<C>(default_name, argv).and_then(|(mut t, cfg)| body(&mut t, cfg, stop));
    match r {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{default_name}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Runs the node `exec` (one of [`NODES`]) with its command line (after the executable).
pub fn run_node(exec: &str, argv: Vec<String>) -> std::process::ExitCode {
    match exec {
        "gait_node" => main_of::<nodes::gait::GaitNodeConfig>("gait_node", argv, nodes::gait::run),
        "sim_node" => main_of::<nodes::sim::SimNodeConfig>("sim_node", argv, nodes::sim::run),
        "planner_node" => main_of::<nodes::planner::PlannerNodeConfig>("planner_node", argv, nodes::planner::run),
        "executive_node" => {
            main_of::<nodes::executive::ExecutiveNodeConfig>("executive_node", argv, nodes::executive::run)
        }
        other => {
            eprintln!("no node `{other}` (modbot_ros provides {})", NODES.join(", "));
            std::process::ExitCode::from(2)
        }
    }
}
