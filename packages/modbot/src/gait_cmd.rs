//! `modbot gait`: sample a gait into a joint trajectory.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use modbot_core::Topology;
use modbot_gaits::{Gait, GaitPlayer};
use serde::Serialize;

use clap::ValueEnum;

use crate::common::{BadInput, ConfigArgs, emit, parse_set};

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
    #[arg(long, default_value_t = 10.0, value_parser = crate::common::positive)]
    pub duration: f64,
    /// Samples per second.
    #[arg(long, default_value_t = 100.0, value_parser = crate::common::control_rate)]
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

/// Most samples one call writes (10⁸ rows is far past any replay file).
const MAX_SAMPLES: f64 = 1e8;

#[derive(Serialize)]
struct Trajectory<'a> {
    robot: String,
    gait: &'a str,
    params: &'a std::collections::BTreeMap<String, f64>,
    period_s: f64,
    rate_hz: f64,
    ramp: bool,
    joint_names: Vec<String>,
    joint_kinds: Vec<String>,
    time_s: Vec<f64>,
    positions_rad: Vec<Vec<f64>>,
}

pub fn run(args: &GaitArgs) -> Result<()> {
    if !(args.rate.is_finite() && args.rate > 0.0 && args.rate <= 1e5) {
        return Err(BadInput(format!("--rate {}: expected a rate in (0, 100000] Hz", args.rate)).into());
    }
    if !(args.duration.is_finite() && args.duration >= 0.0) {
        return Err(BadInput(format!("--duration {}: expected a time ≥ 0 s", args.duration)).into());
    }
    let samples = (args.duration * args.rate).floor() + 1.0;
    if samples > MAX_SAMPLES {
        return Err(BadInput(format!(
            "--duration × --rate = {samples} samples: at most {MAX_SAMPLES}"
        ))
        .into());
    }
    let catalog = args.config.catalog()?;
    let library = args.config.library()?;
    let preset_robot = library.lookup(&args.name)?.robot;
    let robot_text = args.robot.clone().or(preset_robot).ok_or_else(|| {
        BadInput(format!(
            "gait `{}` needs a robot: --robot pp:M, py:M, pyp or a robot file",
            args.name
        ))
    })?;
    let topology = Topology::resolve(&robot_text, &catalog)?;
    let spec = robot_text.clone();
    let built = library.build(&args.name, &topology, &args.set)?;
    let kinds = modbot_gaits::chain::joint_kinds(&topology)?;
    for note in &built.notes {
        eprintln!("note: {note}");
    }

    let n = topology.len();
    let dt = 1.0 / args.rate;
    let count = samples as usize;
    let mut time_s = Vec::with_capacity(count);
    let mut rows = Vec::with_capacity(count);
    if args.no_ramp {
        let mut out = vec![0.0; n];
        for k in 0..count {
            let t = k as f64 * dt;
            built.generator.targets_at(t, &mut out);
            time_s.push(t);
            rows.push(out.clone());
        }
    } else {
        let speeds = topology.max_speeds_rad_s();
        let mut player = GaitPlayer::new(vec![0.0; n], speeds, library.transition);
        player.start(Box::new(built.generator.clone()));
        time_s.push(0.0);
        rows.push(player.output().to_vec());
        for k in 1..count {
            time_s.push(k as f64 * dt);
            rows.push(player.step(dt).to_vec());
        }
    }

    let format = args.format.unwrap_or_else(|| match &args.out {
        Some(p) if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("json")) => Format::Json,
        _ => Format::Csv,
    });
    let joints = topology.joints();
    let mut buf = Vec::new();
    match format {
        Format::Csv => {
            let names: Vec<_> = joints.iter().map(|j| j.name.as_str()).collect();
            writeln!(buf, "time_s,{}", names.join(","))?;
            for (t, row) in time_s.iter().zip(&rows) {
                let cols: Vec<String> = row.iter().map(|v| v.to_string()).collect();
                writeln!(buf, "{t},{}", cols.join(","))?;
            }
        }
        Format::Json => {
            let doc = Trajectory {
                robot: spec.clone(),
                gait: built.generator.name(),
                params: &built.params,
                period_s: built.generator.period(),
                rate_hz: args.rate,
                ramp: !args.no_ramp,
                joint_names: joints.iter().map(|j| j.name.clone()).collect(),
                joint_kinds: kinds.iter().map(|k| k.to_string()).collect(),
                time_s,
                positions_rad: rows,
            };
            serde_json::to_writer(&mut buf, &doc)?;
            buf.push(b'\n');
        }
    }
    match &args.out {
        Some(path) => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            }
            std::fs::write(path, &buf).with_context(|| format!("writing {}", path.display()))?;
            eprintln!(
                "wrote {count} samples of {n} joints ({} on {spec}, T = {} s) to {}",
                built.generator.name(),
                built.generator.period(),
                path.display()
            );
        }
        None => emit(&buf)?,
    }
    Ok(())
}
