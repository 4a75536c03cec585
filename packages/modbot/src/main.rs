//! The `modbot` command.

mod bench_cmd;
#[cfg(feature = "ros")]
mod bench_ros;
mod calibrate_cmd;
mod cli;
mod common;
mod control_cmd;
mod export_cmd;
mod gait_cmd;
#[cfg(feature = "ros")]
mod launch_cmd;
mod list_cmd;
mod maze_cmd;
mod mission_cmd;
mod molemod_cmd;
mod organism_cmd;
mod plan_cmd;
mod plot;
mod run_cmd;
mod search_cmd;
mod sweep_cmd;
#[cfg(feature = "ros")]
mod teleop_cmd;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // `modbot node EXEC ...` is the node itself: its --ros-args and logging are its own.
    #[cfg(feature = "ros")]
    {
        let argv: Vec<String> = std::env::args().collect();
        if argv.get(1).map(String::as_str) == Some("node") && argv.len() > 2 && !argv[2].starts_with('-') {
            return modbot_ros::run_node(&argv[2], argv[3..].to_vec());
        }
        // `modbot node --help`: the nodes, a line on each (the subcommand's own help flag is
        // off, so `modbot node EXEC --help` reaches the node).
        if argv.get(1).map(String::as_str) == Some("node")
            && matches!(argv.get(2).map(String::as_str), Some("-h" | "--help"))
        {
            print!("{}", modbot_ros::nodes_help());
            return ExitCode::SUCCESS;
        }
        // `modbot node --write-docs [ROOT]`: the nodes' reference page and parameter files,
        // regenerated from the code.
        if argv.get(1).map(String::as_str) == Some("node") && argv.get(2).map(String::as_str) == Some("--write-docs") {
            let root = std::path::PathBuf::from(argv.get(3).map_or(".", String::as_str));
            return match modbot_ros::reference::write(&root) {
                Ok(files) => {
                    for f in files {
                        println!("wrote {}", f.display());
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            };
        }
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "warn,rustdds=error,rustdds::discovery::discovery_db=off,ros2_client=error".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = cli::Cli::parse();
    match cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(common::exit_code(&e))
        }
    }
}
