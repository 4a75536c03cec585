//! The command line: the top-level parser and the dispatch to each command, which owns its
//! arguments (`*_cmd.rs`). Commands import `common`, never this file.

use anyhow::Result;
use clap::{Parser, Subcommand};

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
        config: crate::common::ConfigArgs,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Write the joint trajectory of a gait (CSV or JSON) for a robot or another simulator to replay.
    Gait(crate::gait_cmd::GaitArgs),
    /// Drive a simulator outside modbot with a gait's controller: one line per control tick
    /// over standard input and output (the Gazebo physics harness, test/gazebo, uses it).
    ///
    /// modbot first writes `modbot-control 1 N name:position|velocity ...` (the joints in
    /// order); then for each line `t x y z qw qx qy qz q1 .. qN w1 .. wN` (time, s; the root
    /// link's pose in the world; joint positions, rad; velocities, rad/s) it answers
    /// `cycles c1 .. cN` (completed cycles, then one target per joint: rad, or rad/s for a
    /// velocity joint). The end of the input ends it; a malformed line exits with 2.
    Control(crate::control_cmd::ControlArgs),
    /// Generate descriptions: URDF, ros2_control controllers, ros_gz bridge, SDF worlds.
    Export(crate::export_cmd::ExportArgs),
    /// Run a gait on the embedded simulator and measure it (the main job).
    Run(crate::run_cmd::RunArgs),
    /// Run a grid of two gait parameters and write a table and a heat map.
    Sweep(crate::sweep_cmd::SweepArgs),
    /// Score a controller in a maze (seed 002): progress, time, fitness, the path drawn.
    Maze(crate::maze_cmd::MazeArgs),
    /// Search a gait's or the CPG's parameters (the thesis's GA, or CMA-ES): parallel,
    /// seeded, resumable; `--minimal py --target T` finds the smallest chain that reaches T.
    Search(crate::search_cmd::SearchArgs),
    /// Benchmarks; `modbot bench sim` measures the embedded simulator's speed.
    Bench(crate::bench_cmd::BenchArgs),
    /// Regenerate the wheel-foot module's pose-search tables (seed-000 Tables 3.5, 3.6,
    /// 3.8–3.11) from their conditions: `modbot pose-search all` or `modbot pose-search 3.8`.
    PoseSearch {
        /// A table (3.5, 3.6, 3.8, 3.9, 3.10, 3.11, or its name) or `all`.
        #[arg(default_value = "all")]
        table: String,
    },
    /// Calibrate a model on the embedded simulator: `modbot calibrate skid-steer` measures the
    /// wheeled vehicle's slip factor α and ICR offset x_ICR (seed-000 §3.3).
    Calibrate(crate::calibrate_cmd::CalibrateArgs),
    /// The strategic-planning mission (seed-000 §6): six lone wheel-foot modules sense, take
    /// roles, dock into a quadruped, pass over an obstacle, re-dock into a wheeled vehicle,
    /// pass under a lath and reach the target; a run folder with summary.json, trajectories
    /// and a storyboard.
    Mission(crate::mission_cmd::MissionArgs),
    /// Digital-hormone organisms (seed-003): `modbot organism map scorpion` prints each
    /// module's type and role as its handshakes mapped them; `file` prints the robot file.
    Organism(crate::organism_cmd::OrganismArgs),
    /// MoleMOD reconfiguration planning.
    Molemod(crate::molemod_cmd::MolemodArgs),
    /// Print a shell completion script: `modbot completions bash > ~/.local/share/bash-completion/completions/modbot`
    /// (zsh: into a folder of `$fpath` as `_modbot`; fish: `~/.config/fish/completions/modbot.fish`).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Plan: a strategic plan for a scenario (`modbot plan scenario.yaml --goal x,y`), or
    /// every scenario of a Moving AI file as CSV (`--map FILE.map --scen FILE.scen`).
    Plan(crate::plan_cmd::PlanArgs),
    #[cfg(feature = "ros")]
    /// Run a ROS 2 YAML launch file (launch/sim.launch.yaml) without ROS: modbot's nodes as
    /// child processes, with the file's arguments, namespaces, parameters and remaps.
    Launch(crate::launch_cmd::LaunchArgs),
    #[cfg(feature = "ros")]
    /// Drive a robot from the keyboard: gait commands to its gait_node over ROS 2 (arrows or
    /// WASD, Q/E sideways, space stops, +/- speed, Esc quits; no key for --timeout stops it).
    Teleop(crate::teleop_cmd::TeleopArgs),
    #[cfg(feature = "ros")]
    /// Run one ROS 2 node of modbot_ros (gait_node, sim_node, teleop_node, ...) with its --ros-args.
    #[command(disable_help_flag = true)]
    Node {
        /// gait_node, sim_node, planner_node, executive_node, module_node or teleop_node.
        exec: String,
        /// The node's command line, e.g. --ros-args -r __ns:=/snake1 -p gait:=sidewinding.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Gaits { config, json } => crate::list_cmd::run(&config, json),
        Command::Gait(args) => crate::gait_cmd::run(&args),
        Command::Completions { shell } => {
            use clap::CommandFactory as _;
            let mut text = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "modbot", &mut text);
            crate::common::emit(text)
        }
        Command::Control(args) => crate::control_cmd::run(&args),
        Command::Export(args) => crate::export_cmd::run(&args),
        Command::Run(args) => crate::run_cmd::run(&args),
        Command::Sweep(args) => crate::sweep_cmd::run(&args),
        Command::Maze(args) => crate::maze_cmd::run(&args),
        Command::Search(args) => crate::search_cmd::run(&args),
        Command::Bench(args) if args.what == "astar" => crate::plan_cmd::bench(args.queries, &[256, 1024, 2048]),
        #[cfg(feature = "ros")]
        Command::Bench(args) if args.what == "ros" => crate::bench_ros::run(),
        #[cfg(not(feature = "ros"))]
        Command::Bench(args) if args.what == "ros" => Err(crate::common::BadInput(
            "`bench ros` needs the DDS stack: this modbot was built without its `ros` feature".into(),
        )
        .into()),
        Command::Bench(args) => crate::bench_cmd::run(&args),
        Command::PoseSearch { table } => pose_search(&table),
        Command::Calibrate(args) => crate::calibrate_cmd::run(&args),
        Command::Mission(args) => crate::mission_cmd::run(&args),
        Command::Molemod(args) => crate::molemod_cmd::run(&args),
        Command::Organism(args) => crate::organism_cmd::run(&args),
        Command::Plan(args) => crate::plan_cmd::run(&args),
        #[cfg(feature = "ros")]
        Command::Launch(args) => crate::launch_cmd::run(&args),
        #[cfg(feature = "ros")]
        Command::Teleop(args) => crate::teleop_cmd::run(&args),
        #[cfg(feature = "ros")]
        Command::Node { exec, args } => match modbot_ros::run_node(&exec, args) {
            c if c == std::process::ExitCode::SUCCESS => Ok(()),
            _ => Err(anyhow::anyhow!("{exec} stopped with an error")),
        },
    }
}

/// Prints the pose-search tables the thesis printed, regenerated.
fn pose_search(table: &str) -> Result<()> {
    use modbot_gaits::wheelfoot_kinematics::{PoseSearch, format_table};
    let searches: Vec<PoseSearch> = if table == "all" {
        PoseSearch::ALL.to_vec()
    } else {
        vec![table.parse().map_err(|e| crate::common::BadInput(format!("{e}")))?]
    };
    for (i, s) in searches.into_iter().enumerate() {
        if i > 0 {
            println!();
        }
        print!("{}", format_table(s));
    }
    Ok(())
}
