//! `modbot launch FILE [name:=value ...]`: runs a ROS 2 YAML launch file without ROS.
//! modbot's own nodes start as `modbot node EXEC ...` children of this process; their output
//! is prefixed with the node name. A node of a package modbot does not provide is refused
//! before anything starts, and so is a modbot node whose parameters it would refuse. As
//! under `ros2 launch`, a node's exit stops the others only when it says `on_exit:
//! shutdown`. `--print` expands any launch file without running anything (decision record
//! 0044).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use modbot_ros::launch::{Launch, Options, modbot_packages, resolve, resolve_with};

use crate::common::BadInput;

#[derive(Debug, clap::Args)]
pub struct LaunchArgs {
    /// The launch file.
    pub file: PathBuf,
    /// Launch arguments, NAME:=VALUE.
    pub args: Vec<String>,
    /// Print what the launch would start, resolved, instead of starting it (any package's
    /// nodes; includes modbot cannot read; `$(command …)` as its command line).
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

fn overrides(args: &LaunchArgs) -> Result<Vec<(String, String)>> {
    let mut overrides = Vec::new();
    for a in &args.args {
        let (k, v) = a
            .split_once(":=")
            .ok_or_else(|| BadInput(format!("launch argument `{a}` is not NAME:=VALUE")))?;
        overrides.push((k.to_string(), v.to_string()));
    }
    Ok(overrides)
}

/// The launch expanded without running anything: every node (modbot's and other
/// packages'), every include modbot cannot read, `$(command …)` kept as its command line.
pub fn expand_launch(args: &LaunchArgs) -> Result<Launch> {
    let packages = modbot_packages(&share_root(&args.file));
    resolve_with(&args.file, &overrides(args)?, &packages, Options { dry_run: true })
        .map_err(|e| BadInput(e.to_string()).into())
}

/// The launch resolved for running: only modbot_ros nodes, no command substitutions.
pub fn resolve_launch(args: &LaunchArgs) -> Result<Launch> {
    let packages = modbot_packages(&share_root(&args.file));
    let launch = resolve(&args.file, &overrides(args)?, &packages).map_err(|e| BadInput(e.to_string()))?;
    for n in &launch.nodes {
        if n.pkg != "modbot_ros" {
            return Err(BadInput(format!(
                "node `{}` of package `{}` is not installed: modbot launch runs modbot_ros nodes ({}); \
                 run this file with `ros2 launch` in a ROS 2 installation, or switch the node off with its `if` argument \
                 (`modbot launch FILE --print` shows everything it would start)",
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
        if let Some((k, c)) = n.command_params.first() {
            return Err(BadInput(format!(
                "{}: parameter `{k}` is the output of `{c}`: modbot launch does not run command substitutions \
                 (`--print` shows the command line)",
                n.label()
            ))
            .into());
        }
    }
    Ok(launch)
}

/// Checks every modbot_ros node's start-up parameters as the node will build them; the
/// first bad one is the error, naming the node and the reason.
fn check_params(launch: &Launch) -> Result<()> {
    for n in launch.nodes.iter().filter(|n| n.pkg == "modbot_ros") {
        modbot_ros::check_node_params(&n.exec, &n.argv())
            .map_err(|e| BadInput(format!("{}: bad parameters, nothing started: {e}", n.label())))?;
    }
    Ok(())
}

fn show_args(launch: &Launch) {
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
}

/// `--print`: includes, then nodes, one line each. modbot_ros nodes as the `modbot node`
/// command the launcher would run; other packages' as `ros2 run`; a `$(command …)`
/// parameter as `NAME:=<output of: COMMAND>`.
fn print(launch: &Launch, me: &Path) {
    for i in &launch.includes {
        let args: Vec<String> = i.args.iter().map(|(k, v)| format!("{k}:={v}")).collect();
        println!(
            "include {} {}",
            shell_words(std::slice::from_ref(&i.file)),
            shell_words(&args)
        );
    }
    for n in &launch.nodes {
        let mut argv = n.argv();
        for (k, c) in &n.command_params {
            argv.extend(["-p".into(), format!("{k}:=<output of: {c}>")]);
        }
        let shutdown = if n.on_exit_shutdown {
            "  # on_exit: shutdown"
        } else {
            ""
        };
        if n.pkg == "modbot_ros" {
            println!("{} node {} {}{shutdown}", me.display(), n.exec, shell_words(&argv));
        } else {
            println!("ros2 run {} {} {}{shutdown}", n.pkg, n.exec, shell_words(&argv));
        }
    }
}

pub fn run(args: &LaunchArgs) -> Result<()> {
    let me = std::env::current_exe().context("locating the modbot executable")?;
    if args.show_args || args.print {
        let launch = expand_launch(args)?;
        if args.show_args {
            show_args(&launch);
            return Ok(());
        }
        check_params(&launch)?;
        print(&launch, &me);
        return Ok(());
    }
    let launch = resolve_launch(args)?;
    check_params(&launch)?;
    let mut children: Vec<(String, bool, Child)> = Vec::new();
    for n in &launch.nodes {
        let label = n.label();
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
        children.push((label, n.on_exit_shutdown, child));
    }
    // As ros2 launch: a node's exit is reported and the others go on, unless the node says
    // `on_exit: shutdown`; the launch ends when every node has exited (or at --duration).
    let started = Instant::now();
    let mut failures = Vec::new();
    let mut running = vec![true; children.len()];
    'wait: while running.iter().any(|r| *r) {
        for (k, (label, shutdown, c)) in children.iter_mut().enumerate() {
            if !running[k] {
                continue;
            }
            if let Some(status) = c.try_wait().context("waiting for a node")? {
                running[k] = false;
                if status.success() {
                    eprintln!("[launch] {label} exited: {status}");
                } else {
                    eprintln!("[launch] {label} failed: {status}");
                    failures.push(format!("{label} exited with {status}"));
                }
                if *shutdown {
                    eprintln!("[launch] {label} has on_exit: shutdown; stopping the launch");
                    break 'wait;
                }
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
    for (label, _, c) in &mut children {
        if matches!(c.try_wait(), Ok(None)) {
            let _ = c.kill();
            let _ = c.wait();
            eprintln!("[launch] stopped {label}");
        }
    }
    match failures.is_empty() {
        true => Ok(()),
        false => Err(anyhow::anyhow!(failures.join("; "))),
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
