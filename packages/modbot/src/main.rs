//! The `modbot` command.

mod bench_cmd;
mod cli;
mod export_cmd;
mod gait_cmd;
mod list_cmd;
mod molemod_cmd;
mod plan_cmd;
mod plot;
mod run_cmd;
mod sim_setup;
mod sweep_cmd;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()))
        .with_writer(std::io::stderr)
        .init();
    let cli = cli::Cli::parse();
    match cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(cli::exit_code(&e))
        }
    }
}
