//! Command-line interface: argument definitions, shared configuration loading and exit codes.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use modbot_core::{CoreError, ModuleCatalog};
use modbot_description::DescriptionError;
use modbot_gaits::{GaitError, GaitLibrary};

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
fn parse_set(s: &str) -> Result<(String, f64), String> {
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

/// An error in what the user asked for (exit code 2), as opposed to a failure to do it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Gaits { config, json } => crate::list_cmd::run(&config, json),
        Command::Gait(args) => crate::gait_cmd::run(&args),
        Command::Export(args) => crate::export_cmd::run(&args),
    }
}

/// 2 for bad input (arguments, files, parameters), 1 for anything else.
pub fn exit_code(e: &anyhow::Error) -> u8 {
    let bad = e
        .chain()
        .any(|c| c.is::<BadInput>() || c.is::<GaitError>() || c.is::<CoreError>() || c.is::<DescriptionError>());
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
