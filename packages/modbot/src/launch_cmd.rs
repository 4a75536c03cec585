//! `modbot launch FILE [name:=value ...]`: runs a ROS 2 YAML launch file without ROS.
//! modbot's own nodes start as `modbot node EXEC ...` children of this process; their output
//! is prefixed with the node name. A node of a package modbot does not provide is refused
//! before anything starts.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use modbot_ros::launch::{Launch, modbot_packages, resolve};

use crate::common::BadInput;

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
    #[arg(long, value_name = "SECONDS", value_parser = crate::common::positive)]
    pub duration: Option<f64>,
}

/// The folder `$(find-pkg-share modbot_bringup)` maps to: `MODBOT_SHARE`, else the nearest
/// ancestor of the launch file holding `launch/` and `config/`, else the current directory.
fn share_root(file: &Path) -> PathBuf {
    if let Ok(s) = std::env::var("MODBOT_SHARE") {
        return PathBuf::from(s);
    }
    let abs = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
    abs.ancestors()
        .find(|d| d.join("launch").is_dir() && d.join("config").is_dir())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

pub fn resolve_launch(args: &LaunchArgs) -> Result<Launch> {
    let mut overrides = Vec::new();
    for a in &args.args {
        let (k, v) = a
            .split_once(":=")
            .ok_or_else(|| BadInput(format!("launch argument `{a}` is not NAME:=VALUE")))?;
        overrides.push((k.to_string(), v.to_string()));
    }
    let packages = modbot_packages(&share_root(&args.file));
    let launch = resolve(&args.file, &overrides, &packages).map_err(|e| BadInput(e.to_string()))?;
    for n in &launch.nodes {
        if n.pkg != "modbot_ros" {
            return Err(BadInput(format!(
                "node `{}` of package `{}` is not installed: modbot launch runs modbot_ros nodes ({}); \
                 run this file with `ros2 launch` in a ROS 2 installation, or switch the node off with its `if` argument",
                n.exec,
                n.pkg,
                modbot_ros::NODES.join(", ")
            ))
            .into());
        }
        if !modbot_ros::NODES.contains(&n.exec.as_str()) {
            return Err(BadInput(format!(
                "modbot_ros has no executable `{}` (it has {})",
                n.exec,
                modbot_ros::NODES.join(", ")
            ))
            .into());
        }
    }
    Ok(launch)
}

pub fn run(args: &LaunchArgs) -> Result<()> {
    let launch = resolve_launch(args)?;
    if args.show_args {
        for a in &launch.args {
            println!(
                "{}: {} (default: {})",
                a.name,
                a.description,
                a.default
                    .as_deref()
                    .map(|d| format!("'{d}'"))
                    .unwrap_or_else(|| "required".into())
            );
        }
        return Ok(());
    }
    let me = std::env::current_exe().context("locating the modbot executable")?;
    if args.print {
        for n in &launch.nodes {
            println!("{} node {} {}", me.display(), n.exec, shell_words(&n.argv()));
        }
        return Ok(());
    }
    let mut children: Vec<(String, Child)> = Vec::new();
    for n in &launch.nodes {
        let label = format!(
            "{}{}",
            n.namespace
                .as_deref()
                .map(|s| format!("{s}/"))
                .unwrap_or_default()
                .trim_start_matches('/'),
            n.name.clone().unwrap_or_else(|| n.exec.clone())
        );
        let mut child = Command::new(&me)
            .arg("node")
            .arg(&n.exec)
            .args(n.argv())
            .env(modbot_ros::PARENT_ENV, std::process::id().to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {label}"))?;
        for stream in [
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
        ]
        .into_iter()
        .flatten()
        {
            let l = label.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    eprintln!("[{l}] {line}");
                }
            });
        }
        eprintln!("[launch] started {label} (pid {})", child.id());
        children.push((label, child));
    }
    let started = Instant::now();
    let mut failure = None;
    'wait: loop {
        for (label, c) in &mut children {
            if let Some(status) = c.try_wait().context("waiting for a node")? {
                eprintln!("[launch] {label} exited: {status}");
                if !status.success() {
                    failure = Some(format!("{label} exited with {status}"));
                }
                break 'wait;
            }
        }
        if args
            .duration
            .is_some_and(|d| started.elapsed() >= Duration::from_secs_f64(d))
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for (label, c) in &mut children {
        if matches!(c.try_wait(), Ok(None)) {
            let _ = c.kill();
            let _ = c.wait();
            eprintln!("[launch] stopped {label}");
        }
    }
    match failure {
        Some(f) => Err(anyhow::anyhow!(f)),
        None => Ok(()),
    }
}

fn shell_words(v: &[String]) -> String {
    v.iter()
        .map(|s| {
            if s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=,".contains(c)) {
                s.clone()
            } else {
                format!("'{}'", s.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
