#![doc = include_str!("../README.md")]

pub mod args;
pub mod check;
pub mod convert;
pub mod dds;
pub mod error;
pub mod faults;
pub mod interface_msgs;
pub mod launch;
pub mod loopback;
pub mod module_server;
pub mod netns;
pub mod param_service;
pub mod params;
#[cfg(feature = "r2r")]
pub mod r2r_backend;
pub mod reference;
pub mod robot;
pub mod ros_stage;
pub mod transport;

/// The nodes' logic, written once against [`transport::Transport`].
pub mod nodes {
    pub mod executive;
    pub mod gait;
    pub mod gait_io;
    pub mod mission;
    pub mod module;
    pub mod modules;
    pub mod planner;
    pub mod sim;
    pub mod teleop;

    use crate::params::{ParamDecl, ParamValue};

    /// The `robot` parameter the nodes that build a robot share.
    pub(crate) fn robot_decl() -> ParamDecl {
        ParamDecl {
            name: "robot",
            default: ParamValue::Str("pp:8".into()),
            description: "robot: a preset (pp:N, py:N, pyp) or a robot file (config/robots/*.yaml)",
        }
    }

    /// After the parameter service accepted changes, the node's whole configuration re-read
    /// from the transport and re-validated; `None` when nothing changed.
    pub fn reread<C: crate::params::NodeConfig, T: crate::transport::Transport>(
        t: &mut T,
    ) -> Option<Result<C, String>> {
        if t.param_changes().is_empty() {
            return None;
        }
        let map: crate::params::ParamMap = C::declarations()
            .into_iter()
            .filter_map(|d| t.param(d.name).map(|v| (d.name.to_string(), v)))
            .collect();
        Some(C::from_params(&map))
    }

    /// Takes the parameter changes the parameter service accepted since the last call and
    /// says (rate limited: a flood of `set_parameters` calls is one line per 5 s) that a node
    /// reading its parameters only at start applies them at the next.
    pub(crate) fn warn_next_start<T: crate::transport::Transport>(
        t: &mut T,
        throttle: &mut crate::transport::Throttle,
    ) {
        for (k, v) in t.param_changes() {
            let msg = format!("parameter `{k}` = {v:?} takes effect at the next start");
            throttle.log(t, "next_start", crate::transport::Level::Warn, &msg);
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

    /// The capability table a `capabilities` parameter names ("" = the shipped one), through
    /// modbot_planner's one loader (errors name the file, line and key).
    pub fn capabilities(path: &str) -> Result<modbot_planner::capabilities::Capabilities, String> {
        modbot_planner::capabilities::load_or_builtin(Some(path).filter(|p| !p.is_empty()))
            .map_err(|e| format!("capabilities: {e}"))
    }

    /// `world` with its module starts drawn from `layout_seed` (the strategic mission's seeded
    /// layouts, `modbot_app::mission::seeded_layout`), or as it is for −1: the
    /// `layout_seed` parameter sim_node and mission_node share, so both hold one world.
    pub(crate) fn laid_out(world: modbot_core::Scenario, layout_seed: i64) -> Result<modbot_core::Scenario, String> {
        match u64::try_from(layout_seed) {
            Ok(seed) => modbot_app::mission::seeded_layout(&world, seed)
                .map_err(|e| format!("parameter `layout_seed` = {layout_seed}: {e}")),
            Err(_) => Ok(world),
        }
    }

    /// The module catalog a `modules_file` parameter names ("" = the built-in one).
    pub fn module_catalog(path: &str) -> Result<modbot_core::ModuleCatalog, String> {
        let path = (!path.is_empty()).then(|| std::path::Path::new(path));
        modbot_app::load_catalog(path).map_err(|e| format!("modules_file: {e}"))
    }
}

pub use args::RosArgs;
pub use check::check_node_params;
pub use error::{Result, RosError};
pub use transport::{Client, Level, Pub, Qos, Server, Sub, Transport};

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use params::{NodeConfig, ParamMap, ParamValue, load_params_file, resolve};

/// Everything a node binary does before its loop: parse `--ros-args`, set up logging, read
/// parameter files and `-p` overrides into the typed configuration; `join` then joins the
/// graph with the chosen backend.
pub fn start_node<C: NodeConfig, T>(
    default_name: &str,
    argv: Vec<String>,
    join: fn(&str, &RosArgs, &ParamMap) -> Result<T>,
) -> Result<(T, C)> {
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
    let t = join(default_name, &args, &map)?;
    Ok((t, cfg))
}

/// The middleware a node runs on: `MODBOT_ROS_BACKEND` = `dds` (ros2-client, the default)
/// or `r2r` (rcl; needs the `r2r` cargo feature and a ROS 2 environment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// ros2-client over RustDDS.
    Dds,
    /// r2r over rcl.
    R2r,
}

/// Environment variable that selects the [`Backend`].
pub const BACKEND_ENV: &str = "MODBOT_ROS_BACKEND";

impl Backend {
    /// From `MODBOT_ROS_BACKEND`.
    pub fn from_env() -> Result<Backend> {
        match std::env::var(BACKEND_ENV).as_deref() {
            Err(_) | Ok("") | Ok("dds") => Ok(Backend::Dds),
            Ok("r2r") if cfg!(feature = "r2r") => Ok(Backend::R2r),
            Ok("r2r") => Err(RosError::Args(format!(
                "{BACKEND_ENV}=r2r, but this build has no r2r backend (build with --features r2r in a ROS 2 environment)"
            ))),
            Ok(other) => Err(RosError::Args(format!("{BACKEND_ENV}=`{other}`: expected dds or r2r"))),
        }
    }
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
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .finish()
        .with(ForeignThrottle::new(FOREIGN_LOG_PERIOD, std::io::stderr))
        .try_init();
}

/// The period of [`ForeignThrottle`]: one line per call site of another crate this often.
pub const FOREIGN_LOG_PERIOD: std::time::Duration = std::time::Duration::from_secs(5);

/// Rate limit for the log lines of other crates (the middleware): one line per call site
/// every `period`, then a note of how many that call site had suppressed. The nodes' own
/// lines (targets `modbot…`) pass: they are throttled by kind of refusal through
/// [`transport::Throttle`], which counts what it suppressed. RustDDS complains once per
/// missing fragment of a huge sample at ERROR, thousands of lines a second under a flood of
/// 10⁶-element arrays (issue 18, decision record 0036). The table holds one entry per call
/// site, a fixed set, so it cannot grow without bound.
pub struct ForeignThrottle<W> {
    period: std::time::Duration,
    seen: std::sync::Mutex<std::collections::HashMap<tracing::callsite::Identifier, (std::time::Instant, u64)>>,
    notes: W,
}

impl<W> ForeignThrottle<W> {
    /// One line per foreign call site every `period`; suppression notes go to `notes`.
    pub fn new(period: std::time::Duration, notes: W) -> ForeignThrottle<W> {
        ForeignThrottle {
            period,
            seen: Default::default(),
            notes,
        }
    }
}

impl<S, W> tracing_subscriber::Layer<S> for ForeignThrottle<W>
where
    S: tracing::Subscriber,
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + 'static,
{
    fn event_enabled(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) -> bool {
        use std::collections::hash_map::Entry;
        let meta = event.metadata();
        if meta.target().starts_with("modbot") {
            return true;
        }
        let Ok(mut seen) = self.seen.lock() else {
            return true;
        };
        let now = std::time::Instant::now();
        match seen.entry(meta.callsite()) {
            Entry::Vacant(v) => {
                v.insert((now, 0));
                true
            }
            Entry::Occupied(mut o) => {
                let (last, suppressed) = o.get_mut();
                if now.duration_since(*last) < self.period {
                    *suppressed += 1;
                    return false;
                }
                if *suppressed > 0 {
                    use std::io::Write as _;
                    let _ = writeln!(
                        self.notes.make_writer(),
                        "({suppressed} more lines from {} suppressed)",
                        meta.target()
                    );
                }
                *last = now;
                *suppressed = 0;
                true
            }
        }
    }
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

/// Longest start-up error a node prints, bytes: a message quoting what it refused (a
/// parameter, a file's content) is cut there.
pub const MAX_ERROR_BYTES: usize = 4096;

/// Prints a node's fatal error on stderr, capped at [`MAX_ERROR_BYTES`]; a closed stderr
/// is ignored (`eprintln!` would panic on it).
pub fn report_error(node: &str, error: &dyn std::fmt::Display) {
    use std::io::Write as _;
    let text = format!("{node}: {error}");
    let _ = writeln!(std::io::stderr(), "{}", transport::capped_at(&text, MAX_ERROR_BYTES));
}

/// The nodes this crate provides, by executable name.
pub const NODES: &[&str] = &[
    "gait_node",
    "sim_node",
    "planner_node",
    "executive_node",
    "module_node",
    "teleop_node",
    "mission_node",
];

/// Runs a node's loop on transport `T` until the process is told to stop; errors print and
/// exit 1.
pub fn main_of<C: NodeConfig, T: Transport>(
    default_name: &str,
    argv: Vec<String>,
    join: fn(&str, &RosArgs, &ParamMap) -> Result<T>,
    body: fn(&mut T, C, Arc<AtomicBool>) -> Result<()>,
) -> std::process::ExitCode {
    let stop = Arc::new(AtomicBool::new(false));
    // Ctrl-C or a `kill` ends the loop, so the node leaves the graph and closes what it holds
    // (a recording, record 0040); a second signal, with the flag already set, exits at once.
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let registered = signal_hook::flag::register_conditional_shutdown(signal, 130, Arc::clone(&stop))
            .and_then(|_| signal_hook::flag::register(signal, Arc::clone(&stop)));
        if let Err(e) = registered {
            eprintln!("{default_name}: cannot handle signal {signal}: {e}");
        }
    }
    watch_parent();
    let r = start_node::<C, T>(default_name, argv, join).and_then(|(mut t, cfg)| body(&mut t, cfg, stop));
    match r {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            report_error(default_name, &e);
            std::process::ExitCode::FAILURE
        }
    }
}

/// Runs a node on the backend `MODBOT_ROS_BACKEND` selects; the node logic is the same.
macro_rules! on_backend {
    ($cfg:ty, $name:expr, $argv:expr, $run:path) => {{
        match Backend::from_env() {
            Ok(Backend::Dds) => {
                main_of::<$cfg, dds::DdsTransport>($name, $argv, dds::DdsTransport::start::<$cfg>, $run)
            }
            #[cfg(feature = "r2r")]
            Ok(Backend::R2r) => {
                main_of::<$cfg, r2r_backend::R2rTransport>($name, $argv, r2r_backend::R2rTransport::start::<$cfg>, $run)
            }
            #[cfg(not(feature = "r2r"))]
            Ok(Backend::R2r) => unreachable!("Backend::from_env refuses r2r without the feature"),
            Err(e) => {
                report_error($name, &e);
                std::process::ExitCode::from(2)
            }
        }
    }};
}

/// One line on what each node does, by executable name (`--help`, `modbot node --help`).
pub fn node_summary(exec: &str) -> Option<&'static str> {
    Some(match exec {
        "gait_node" => "gait commands in (gait/command), joint position targets out (position_controller/commands)",
        "sim_node" => {
            "the embedded simulator, free-running: commands in; joint_states, odom, tf, robot_description, /clock out (modules:=true: each module's robot interface topics)"
        }
        "planner_node" => "goal_pose in; the strategic plan, its path and markers out, and a `plan` service",
        "executive_node" => "executes strategic_plan through gait commands, steering by the body's pose (odom)",
        "module_node" => "one module of a digital-hormone organism: hormone frames in and out, its hinge command",
        "teleop_node" => "cmd_vel and joy to gait commands, with a dead-man",
        "mission_node" => {
            "the strategic mission: the six modules' controllers on the robot interface's topics (m1/ … m6/)"
        }
        _ => return None,
    })
}

/// A parameter's default as it would be written after `-p name:=`.
pub(crate) fn param_text(v: &ParamValue) -> String {
    fn list<T>(v: &[T], f: impl Fn(&T) -> String) -> String {
        format!("[{}]", v.iter().map(f).collect::<Vec<_>>().join(", "))
    }
    let double = |x: &f64| {
        let t = format!("{x}");
        if t.contains(['.', 'e', 'i', 'N']) {
            t
        } else {
            format!("{t}.0")
        }
    };
    match v {
        ParamValue::Bool(b) => b.to_string(),
        ParamValue::Int(i) => i.to_string(),
        ParamValue::Double(x) => double(x),
        ParamValue::Str(s) => format!("{s:?}"),
        ParamValue::BoolArray(v) => list(v, bool::to_string),
        ParamValue::IntArray(v) => list(v, i64::to_string),
        ParamValue::DoubleArray(v) => list(v, double),
        ParamValue::StrArray(v) => list(v, |s| format!("{s:?}")),
    }
}

/// The parameters node `exec` (one of [`NODES`]) declares, from its [`NodeConfig`]
/// (`use_sim_time`, which every node accepts, is not among them).
pub fn node_declarations(exec: &str) -> Option<Vec<params::ParamDecl>> {
    Some(match exec {
        "gait_node" => nodes::gait::GaitNodeConfig::declarations(),
        "sim_node" => nodes::sim::SimNodeConfig::declarations(),
        "planner_node" => nodes::planner::PlannerNodeConfig::declarations(),
        "executive_node" => nodes::executive::ExecutiveNodeConfig::declarations(),
        "module_node" => nodes::module::ModuleNodeConfig::declarations(),
        "teleop_node" => nodes::teleop::TeleopNodeConfig::declarations(),
        "mission_node" => nodes::mission::MissionNodeConfig::declarations(),
        _ => return None,
    })
}

/// The `--help` text of node `exec` (one of [`NODES`]): its name, what it does and every
/// parameter it declares (name, type, default, description), from its [`NodeConfig`]
/// declarations, so the text cannot drift from the code.
pub fn node_help(exec: &str) -> Option<String> {
    let summary = node_summary(exec)?;
    let mut rows: Vec<[String; 4]> = node_declarations(exec)?
        .into_iter()
        .map(|d| {
            [
                d.name.to_string(),
                d.default.type_name().to_string(),
                param_text(&d.default),
                d.description.to_string(),
            ]
        })
        .collect();
    rows.push([
        "use_sim_time".into(),
        "bool".into(),
        "false".into(),
        "take time from /clock (every node)".into(),
    ]);
    let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0);
    let (w0, w1, w2) = (width(0), width(1), width(2));
    let mut out = format!(
        "{exec}: {summary}\n\n\
         Usage: {exec} [-h | --help] [--ros-args [-r __ns:=/NS] [-r __node:=NAME] [-r FROM:=TO]\n\
         \x20         [-p NAME:=VALUE]... [--params-file FILE] [--log-level LEVEL]]\n\n\
         Parameters (name, type, default, description):\n"
    );
    for r in &rows {
        out.push_str(&format!("  {:w0$}  {:w1$}  {:w2$}  {}\n", r[0], r[1], r[2], r[3]));
    }
    out.push_str(
        "\nTopics (names relative to the node's namespace), services and their QoS:\n\
         \x20 docs/reference/nodes.md (generated from the code; `modbot node --write-docs`)\n",
    );
    Some(out)
}

/// The list of nodes with a line on each (`modbot node --help`).
pub fn nodes_help() -> String {
    let w = NODES.iter().map(|n| n.len()).max().unwrap_or(0);
    let mut out = String::from(
        "Run one ROS 2 node of modbot_ros.\n\n\
         Usage: modbot node EXEC [-h | --help] [--ros-args ...]\n\
         \x20      modbot node --write-docs [ROOT]  (regenerates docs/reference/nodes.md and\n\
         \x20      config/params/*.yaml from the nodes' code)\n\n\
         Nodes (`modbot node EXEC --help` lists a node's parameters):\n",
    );
    for n in NODES {
        out.push_str(&format!("  {n:w$}  {}\n", node_summary(n).unwrap_or("")));
    }
    out
}

/// Whether a node's command line asks for help: `-h` or `--help` before `--ros-args`.
pub fn wants_help(argv: &[String]) -> bool {
    argv.iter()
        .take_while(|a| a.as_str() != "--ros-args")
        .any(|a| a == "-h" || a == "--help")
}

/// Runs the node `exec` (one of [`NODES`]) with its command line (after the executable);
/// `-h` or `--help` before `--ros-args` prints [`node_help`] and exits 0.
pub fn run_node(exec: &str, argv: Vec<String>) -> std::process::ExitCode {
    if wants_help(&argv) {
        if let Some(text) = node_help(exec) {
            use std::io::Write as _;
            let _ = std::io::stdout().write_all(text.as_bytes());
            return std::process::ExitCode::SUCCESS;
        }
    }
    match exec {
        "gait_node" => on_backend!(nodes::gait::GaitNodeConfig, "gait_node", argv, nodes::gait::run),
        "sim_node" => on_backend!(nodes::sim::SimNodeConfig, "sim_node", argv, nodes::sim::run),
        "planner_node" => on_backend!(
            nodes::planner::PlannerNodeConfig,
            "planner_node",
            argv,
            nodes::planner::run
        ),
        "executive_node" => on_backend!(
            nodes::executive::ExecutiveNodeConfig,
            "executive_node",
            argv,
            nodes::executive::run
        ),
        "module_node" => on_backend!(nodes::module::ModuleNodeConfig, "module_node", argv, nodes::module::run),
        "teleop_node" => on_backend!(nodes::teleop::TeleopNodeConfig, "teleop_node", argv, nodes::teleop::run),
        "mission_node" => on_backend!(
            nodes::mission::MissionNodeConfig,
            "mission_node",
            argv,
            nodes::mission::run
        ),
        other => {
            let why = format!("no node `{other}` (modbot_ros provides {})", NODES.join(", "));
            report_error("modbot_ros", &why);
            std::process::ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 18: another crate's log call site repeating itself prints one line per period
    /// and then says how many it suppressed; the nodes' own lines (already throttled by kind)
    /// all pass.
    #[test]
    fn foreign_log_lines_are_rate_limited_per_call_site() {
        use std::sync::{Arc, Mutex};
        use tracing_subscriber::layer::SubscriberExt as _;
        #[derive(Clone, Default)]
        struct Sink(Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Sink {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0
                    .lock()
                    .map_err(|_| std::io::ErrorKind::Other)?
                    .extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let sink = Sink::default();
        let writer = {
            let s = sink.clone();
            move || s.clone()
        };
        let period = std::time::Duration::from_millis(300);
        let subscriber = tracing_subscriber::fmt()
            .with_writer(writer.clone())
            .with_ansi(false)
            .finish()
            .with(ForeignThrottle::new(period, writer));
        // One call site (a macro invocation is one).
        let fragment = |what: &str| tracing::error!(target: "rustdds::structure::sequence_number", "fragment {what}");
        tracing::subscriber::with_default(subscriber, || {
            for i in 0..1000 {
                fragment(&i.to_string());
                tracing::warn!(target: "modbot_ros::transport", "refusal {i}");
            }
            tracing::error!(target: "rustdds::other", "another call site");
            std::thread::sleep(period + std::time::Duration::from_millis(50));
            fragment("after");
        });
        let text = String::from_utf8(sink.0.lock().map(|v| v.clone()).unwrap_or_default()).unwrap_or_default();
        let count = |s: &str| text.lines().filter(|l| l.contains(s)).count();
        assert_eq!(count("fragment "), 2, "{}", &text[text.len().saturating_sub(800)..]);
        assert!(text.contains("fragment 0") && text.contains("fragment after"));
        assert_eq!(count("refusal "), 1000);
        assert_eq!(count("another call site"), 1);
        assert!(
            text.contains("(999 more lines from rustdds::structure::sequence_number suppressed)"),
            "{}",
            &text[text.len().saturating_sub(800)..]
        );
    }

    /// Issue 18: a start-up error quoting a huge value prints at most MAX_ERROR_BYTES (plus
    /// the note of its length), never splitting a character.
    #[test]
    fn start_up_errors_are_capped() {
        use crate::transport::capped_at;
        assert_eq!(capped_at("short", 10), "short");
        let long = format!("parameter `world` = {}", "é".repeat(100_000));
        let c = capped_at(&long, MAX_ERROR_BYTES);
        assert!(c.len() < MAX_ERROR_BYTES + 40, "{}", c.len());
        assert!(c.ends_with("bytes in all)"), "{}", &c[c.len() - 30..]);
        // 'é' is two bytes: an odd cut falls back to a boundary.
        let c = capped_at("aéé", 2);
        assert_eq!(c, "a… (5 bytes in all)");
    }
}
