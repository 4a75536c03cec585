//! Command-line interface: argument definitions, shared configuration loading and exit codes.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use modbot_core::{CoreError, ModuleCatalog};
use modbot_description::DescriptionError;
use modbot_gaits::{GaitError, GaitLibrary};
use modbot_sim::Engine;

/// modbot: gaits, planning and simulation for modular robots.
#[derive(Debug, Parser)]
#[command(name = "modbot", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the gaits with their parameters, defaults and ranges, and the named presets.
    Gaits {
        #[command(flatten)]
        config: ConfigArgs,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Write the joint trajectory of a gait (CSV or JSON) for a robot or another simulator to replay.
    Gait(GaitArgs),
    /// Generate descriptions: URDF, ros2_control controllers, ros_gz bridge, SDF worlds.
    Export(ExportArgs),
    /// Run a gait on the embedded simulator and measure it (the main job).
    Run(RunArgs),
    /// Run a grid of two gait parameters and write a table and a heat map.
    Sweep(SweepArgs),
    /// Benchmarks; `modbot bench sim` measures the embedded simulator's speed.
    Bench(BenchArgs),
    /// MoleMOD reconfiguration planning.
    Molemod(MolemodArgs),
    /// Plan: a strategic plan for a scenario (`modbot plan scenario.yaml --goal x,y`), or
    /// every scenario of a Moving AI file as CSV (`--map FILE.map --scen FILE.scen`).
    Plan(PlanArgs),
    /// Run a ROS 2 YAML launch file (launch/sim.launch.yaml) without ROS: modbot's nodes as
    /// child processes, with the file's arguments, namespaces, parameters and remaps.
    Launch(LaunchArgs),
    /// Run one ROS 2 node of modbot_ros (gait_node, sim_node) with its --ros-args.
    #[command(disable_help_flag = true)]
    Node {
        /// gait_node or sim_node.
        exec: String,
        /// The node's command line, e.g. --ros-args -r __ns:=/snake1 -p gait:=sidewinding.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

#[derive(Debug, clap::Args)]
pub struct LaunchArgs {
    /// The launch file.
    pub file: PathBuf,
    /// Launch arguments, NAME:=VALUE.
    pub args: Vec<String>,
    /// Print the node command lines instead of starting them.
    #[arg(long)]
    pub print: bool,
    /// List the file's arguments with their descriptions and defaults.
    #[arg(long)]
    pub show_args: bool,
    /// Stop every node after this many seconds.
    #[arg(long, value_name = "SECONDS")]
    pub duration: Option<f64>,
}

#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// Scenario YAML for a strategic plan.
    pub scenario: Option<PathBuf>,
    /// Goal x,y in m (default: the scenario's).
    #[arg(long, value_parser = parse_xy)]
    pub goal: Option<[f64; 2]>,
    /// Configurations available, comma separated.
    #[arg(long, default_value = "single_module,quadruped,wheeled")]
    pub available: String,
    /// Configuration at the start.
    #[arg(long, default_value = "single_module")]
    pub start: String,
    /// Capability table (default: the shipped config/capabilities.yaml).
    #[arg(long)]
    pub capabilities: Option<PathBuf>,
    /// Use the source's template decomposition instead of the search.
    #[arg(long)]
    pub source_mode: bool,
    /// Grid cell size for the search, m.
    #[arg(long, default_value_t = 0.05)]
    pub resolution: f64,
    /// Write a PNG of the terrain, path and sub-goals (search mode).
    #[arg(long, value_name = "FILE")]
    pub png: Option<PathBuf>,
    /// Moving AI map (.map).
    #[arg(long, requires = "scen")]
    pub map: Option<PathBuf>,
    /// Moving AI scenarios (.scen).
    #[arg(long, requires = "map")]
    pub scen: Option<PathBuf>,
    /// 4-connected moves (default: 8-connected, octile, no corner cutting).
    #[arg(long)]
    pub four: bool,
}

#[derive(Debug, clap::Args)]
pub struct MolemodArgs {
    #[command(subcommand)]
    pub what: MolemodWhat,
}

#[derive(Debug, Subcommand)]
pub enum MolemodWhat {
    /// Plan a task file (initial and goal grids, options) and print the frames.
    Plan {
        /// Task YAML.
        task: PathBuf,
        /// Print one JSON object (cost, actions, states, expansions, micros).
        #[arg(long)]
        json: bool,
        /// Write an SVG storyboard.
        #[arg(long, value_name = "FILE")]
        svg: Option<PathBuf>,
        /// Time limit, ms (Timeout beyond).
        #[arg(long, default_value_t = 60_000)]
        time_limit_ms: u64,
        /// Heuristic: manhattan, source, strong or zero (default: the task's).
        #[arg(long)]
        heuristic: Option<String>,
        /// Weight of h (≥ 1; > 1 is bounded-suboptimal).
        #[arg(long)]
        weight: Option<f64>,
    },
    /// Benchmark task families (row → L, column, stairs) on 5 × 5 up to 8 × 8, 1 to 6 robots.
    Bench {
        /// Time limit per task, ms.
        #[arg(long, default_value_t = 10_000)]
        time_limit_ms: u64,
        /// Largest grid side (5 to 8).
        #[arg(long, default_value_t = 6)]
        max_size: usize,
    },
}

#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// What to measure: `sim` (physics speed), `astar` (grid A* against `pathfinding`) or
    /// `ros` (DDS latency and rate over loopback, in a private network namespace).
    #[arg(value_parser = ["sim", "astar", "ros"])]
    pub what: String,
    /// Physics engine: `native` (modbot's reduced-coordinate engine, the default) or
    /// `rapier` (a rapier3d multibody, the cross-check).
    #[arg(long, default_value = "native")]
    pub engine: Engine,
    /// A* queries per map.
    #[arg(long, default_value_t = 100)]
    pub queries: usize,
    /// Simulated seconds per case.
    #[arg(long, default_value_t = 10.0)]
    pub seconds: f64,
    #[command(flatten)]
    pub config: ConfigArgs,
}

#[derive(Debug, clap::Args)]
pub struct SweepArgs {
    /// Robot: pp:M, py:M or pyp.
    #[arg(long, short, default_value = "pp:8")]
    pub robot: String,
    /// Physics engine: `native` (modbot's reduced-coordinate engine, the default) or
    /// `rapier` (a rapier3d multibody, the cross-check).
    #[arg(long, default_value = "native")]
    pub engine: Engine,
    /// Gait or preset name.
    #[arg(long, short, default_value = "caterpillar")]
    pub gait: String,
    /// First axis, KEY=START:STOP:STEP (e.g. A=10:60:10).
    #[arg(long, value_parser = crate::sweep_cmd::parse_axis)]
    pub x: (String, Vec<f64>),
    /// Second axis, KEY=START:STOP:STEP (e.g. dphi=30:180:30).
    #[arg(long, value_parser = crate::sweep_cmd::parse_axis)]
    pub y: (String, Vec<f64>),
    /// Fixed parameters, KEY=VALUE.
    #[arg(long = "set", short = 's', value_name = "KEY=VALUE", value_parser = parse_set)]
    pub set: Vec<(String, f64)>,
    /// Cycles measured per point.
    #[arg(long, default_value_t = 3)]
    pub cycles: usize,
    /// Warm-up cycles per point.
    #[arg(long, default_value_t = 2)]
    pub warmup: usize,
    /// Quantity in the heat map: step_x, step_y, step or heading.
    #[arg(long, default_value = "step_x", value_parser = ["step_x", "step_y", "step", "heading"])]
    pub metric: String,
    /// World (scenario .yaml or generated .sdf).
    #[arg(long, value_name = "FILE")]
    pub world: Option<PathBuf>,
    /// Output folder (default runs/sweep_<robot>_<gait>).
    #[arg(long, short, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub config: ConfigArgs,
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Robot: pp:M, py:M or pyp.
    #[arg(long, short, default_value = "pp:8")]
    pub robot: String,
    /// Gait or preset name (see `modbot gaits`).
    #[arg(long, short, default_value = "caterpillar")]
    pub gait: String,
    /// Parameter value, KEY=VALUE (e.g. A=40, dphi=110).
    #[arg(long = "set", short = 's', value_name = "KEY=VALUE", value_parser = parse_set)]
    pub set: Vec<(String, f64)>,
    /// Cycles measured after the warm-up.
    #[arg(long, default_value_t = 10)]
    pub cycles: usize,
    /// Cycles discarded before measuring (the source discards 2).
    #[arg(long, default_value_t = 2)]
    pub warmup: usize,
    /// World: a scenario .yaml (or the generated .sdf beside it); default flat ground, μ = 0.2.
    #[arg(long, value_name = "FILE")]
    pub world: Option<PathBuf>,
    /// Run folder (default runs/<robot>_<gait>).
    #[arg(long, short, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Control rate, Hz.
    #[arg(long, default_value_t = 100.0)]
    pub rate: f64,
    /// Physics engine: `native` (modbot's reduced-coordinate engine, the default) or
    /// `rapier` (a rapier3d multibody, the cross-check).
    #[arg(long, default_value = "native")]
    pub engine: Engine,
    /// Physics step in ms (default: the world's).
    #[arg(long)]
    pub step_ms: Option<f64>,
    /// Solver iterations per physics step (native: Gauss–Seidel sweeps, default 10;
    /// rapier: substeps, default 8).
    #[arg(long)]
    pub solver_iterations: Option<usize>,
    /// Gauss-Seidel sweeps per solver iteration (native default 1, rapier 4).
    #[arg(long)]
    pub pgs_iterations: Option<usize>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub config: ConfigArgs,
}

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
    /// URDF of a robot (pp:M, py:M, pyp) with ros2_control and Gazebo plugins.
    Urdf {
        /// Robot.
        robot: String,
    },
    /// ros2_control controllers YAML of a robot.
    Controllers {
        /// Robot.
        robot: String,
    },
    /// ros_gz_bridge YAML of a robot.
    Bridge {
        /// Robot.
        robot: String,
    },
    /// SDF world of a scenario file.
    World {
        /// Scenario YAML.
        scenario: PathBuf,
    },
    /// Every shipped file: urdf/, config/controllers/, config/bridge/, worlds/*.sdf.
    All {
        /// Repository root (default: the current directory).
        #[arg(long)]
        root: Option<PathBuf>,
    },
}

/// Configuration files shared by the subcommands.
#[derive(Debug, Clone, clap::Args)]
pub struct ConfigArgs {
    /// Module catalog (default: the shipped config/modules.yaml).
    #[arg(long, value_name = "FILE")]
    pub modules: Option<PathBuf>,
    /// Gait file merged over the shipped config/gaits.yaml.
    #[arg(long, value_name = "FILE")]
    pub gaits: Option<PathBuf>,
}

impl ConfigArgs {
    pub fn catalog(&self) -> Result<ModuleCatalog> {
        match &self.modules {
            Some(p) => ModuleCatalog::load(p).with_context(|| format!("loading module catalog {}", p.display())),
            None => Ok(ModuleCatalog::builtin()),
        }
    }

    pub fn library(&self) -> Result<GaitLibrary> {
        match &self.gaits {
            Some(p) => GaitLibrary::load(p).with_context(|| format!("loading gait file {}", p.display())),
            None => Ok(GaitLibrary::builtin()),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// time_s, then one column per joint (radians).
    Csv,
    /// One object with the joint names, parameters and samples.
    Json,
}

#[derive(Debug, clap::Args)]
pub struct GaitArgs {
    /// Gait or preset name (see `modbot gaits`).
    pub name: String,
    /// Robot: pp:M, py:M or pyp (default: the preset's robot).
    #[arg(long, short)]
    pub robot: Option<String>,
    /// Parameter value, KEY=VALUE (canonical key or the source's symbol, e.g. A=40, dphi=110).
    #[arg(long = "set", short = 's', value_name = "KEY=VALUE", value_parser = parse_set)]
    pub set: Vec<(String, f64)>,
    /// Length of the trajectory, s.
    #[arg(long, default_value_t = 10.0)]
    pub duration: f64,
    /// Samples per second.
    #[arg(long, default_value_t = 100.0)]
    pub rate: f64,
    /// Output format (default: from the file extension of --out, else csv).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Output file (default: standard output).
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Emit the steady generator from t = 0, without the ramp from rest.
    #[arg(long)]
    pub no_ramp: bool,
    #[command(flatten)]
    pub config: ConfigArgs,
}

/// Parses KEY=VALUE with a numeric value.
pub fn parse_set(s: &str) -> Result<(String, f64), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}`: expected KEY=VALUE, e.g. A=40"))?;
    let k = k.trim();
    if k.is_empty() {
        return Err(format!("`{s}`: empty key"));
    }
    let v: f64 = v
        .trim()
        .parse()
        .map_err(|_| format!("`{s}`: `{}` is not a number", v.trim()))?;
    if !v.is_finite() {
        return Err(format!("`{s}`: the value must be finite"));
    }
    Ok((k.to_string(), v))
}

fn parse_xy(s: &str) -> Result<[f64; 2], String> {
    let (x, y) = s.split_once(',').ok_or_else(|| format!("`{s}`: expected x,y"))?;
    let p = |v: &str| {
        v.trim()
            .parse::<f64>()
            .map_err(|_| format!("`{s}`: `{v}` is not a number"))
    };
    Ok([p(x)?, p(y)?])
}

/// An error in what the user asked for (exit code 2), as opposed to a failure to do it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Gaits { config, json } => crate::list_cmd::run(&config, json),
        Command::Gait(args) => crate::gait_cmd::run(&args),
        Command::Export(args) => crate::export_cmd::run(&args),
        Command::Run(args) => crate::run_cmd::run(&args),
        Command::Sweep(args) => crate::sweep_cmd::run(&args),
        Command::Bench(args) if args.what == "astar" => crate::plan_cmd::bench(args.queries, &[256, 1024, 2048]),
        Command::Bench(args) if args.what == "ros" => crate::bench_ros::run(),
        Command::Bench(args) => crate::bench_cmd::run(&args),
        Command::Molemod(args) => crate::molemod_cmd::run(&args),
        Command::Plan(args) => crate::plan_cmd::run(&args),
        Command::Launch(args) => crate::launch_cmd::run(&args),
        Command::Node { exec, args } => match modbot_ros::run_node(&exec, args) {
            c if c == std::process::ExitCode::SUCCESS => Ok(()),
            _ => Err(anyhow::anyhow!("{exec} stopped with an error")),
        },
    }
}

/// 2 for bad input (arguments, files, parameters), 1 for anything else.
pub fn exit_code(e: &anyhow::Error) -> u8 {
    let bad = e.chain().any(|c| {
        c.is::<BadInput>()
            || c.is::<GaitError>()
            || c.is::<CoreError>()
            || c.is::<DescriptionError>()
            || is_bad_sim_input(c)
    });
    if bad { 2 } else { 1 }
}

/// Writes to standard output; a closed pipe (`modbot gaits | head`) is not an error.
pub fn emit(data: impl AsRef<[u8]>) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(data.as_ref()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r.context("writing to standard output"),
    }
}

/// Simulation errors caused by what the user gave (robot, world, parameters), not by physics.
fn is_bad_sim_input(c: &(dyn std::error::Error + 'static)) -> bool {
    use modbot_sim::SimError;
    matches!(
        c.downcast_ref::<SimError>(),
        Some(
            SimError::Robot { .. }
                | SimError::UnknownJoint { .. }
                | SimError::JointCount { .. }
                | SimError::NotFinite { .. }
                | SimError::ObstacleOverlap { .. }
                | SimError::Settings { .. }
                | SimError::Description(_)
                | SimError::Core(_)
                | SimError::Gait(_)
        )
    )
}
