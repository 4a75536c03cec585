//! `modbot organism`: the digital-hormone organisms of seed-003. `map` runs the modules'
//! handshakes on the in-process hormone bus and prints each module's type and role as the
//! mapping found them; `file` prints an organism's robot file. Decision record 0029.

use std::fmt::Write as _;

use anyhow::Result;
use clap::Subcommand;
use modbot_app::organism::{Fault, OrganismSpec, bus_of, load_organism};
use modbot_core::Topology;
use modbot_gaits::hormone::HormoneSettings;
use serde_json::json;

use crate::common::{BadInput, ConfigArgs, emit};

#[derive(Debug, clap::Args)]
pub struct OrganismArgs {
    #[command(subcommand)]
    pub what: OrganismWhat,
}

#[derive(Debug, clap::Args)]
pub struct Which {
    /// caterpillar:N, v:N (N odd: two equal arms and the centre), scorpion, or a robot file
    /// of `cube` modules (also given as `--organism`).
    #[arg(required_unless_present = "organism_flag")]
    pub organism: Option<String>,
    /// The organism, as a flag (the same as the argument).
    #[arg(
        long = "organism",
        id = "organism_flag",
        value_name = "ORGANISM",
        conflicts_with = "organism"
    )]
    pub organism_flag: Option<String>,
    /// A caterpillar with its module ⌈N/2⌉ rolled 90° (the turning module).
    #[arg(long)]
    pub pitched: bool,
    /// The scorpion without its two tail modules.
    #[arg(long)]
    pub no_tail: bool,
    #[command(flatten)]
    pub config: ConfigArgs,
}

impl Which {
    /// The organism named by the argument or by `--organism` (clap requires one of them).
    pub fn name(&self) -> &str {
        self.organism
            .as_deref()
            .or(self.organism_flag.as_deref())
            .unwrap_or_default()
    }
}

#[derive(Debug, Subcommand)]
pub enum OrganismWhat {
    /// Each module's type and role as its handshakes mapped them (seed-003 §4).
    Map {
        #[command(flatten)]
        which: Which,
        /// Mapping level (hops relayed; the seed's organisms use 2).
        #[arg(long, default_value_t = 2)]
        level: u8,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Run an organism in the embedded simulator: its modules' hormone controllers, IR
    /// sensors by ray casts; speed and heading over the run, a run folder.
    Run {
        #[command(flatten)]
        which: Which,
        /// World (scenario .yaml): walls and obstacles; default flat ground.
        #[arg(long, value_name = "FILE")]
        world: Option<std::path::PathBuf>,
        /// Simulated time, s (the first 4 s warm up).
        #[arg(long, default_value_t = 60.0, value_parser = crate::common::positive)]
        seconds: f64,
        /// Cut the connection between two modules at a time: TIME:A-B (s; a whole number of
        /// 2 s wave periods), e.g. 20:m5-m6. Repeatable.
        #[arg(long, value_name = "TIME:A-B")]
        cut: Vec<String>,
        /// Remove a module at a time (it dies and lets go of its neighbours): TIME:MODULE,
        /// e.g. 20:centre. Repeatable.
        #[arg(long, value_name = "TIME:MODULE")]
        remove: Vec<String>,
        /// IR thresholds B,F,R,L (readings 0 … 128; a side whose mean of ten readings is
        /// below sees an obstacle). Default: the caterpillar 110,110,40,40, the V
        /// 20,100,100,20, the scorpion and robot files 20 on every side.
        #[arg(long, value_name = "B,F,R,L")]
        ir_threshold: Option<String>,
        /// Run folder (default runs/organism_<name>, or the next free runs/organism_<name>-2,
        /// …; a named folder holding files is refused unless --force).
        #[arg(long, short, value_name = "DIR")]
        out: Option<std::path::PathBuf>,
        /// Overwrite the files of an earlier run in the folder.
        #[arg(long)]
        force: bool,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// The organism's robot file (YAML), for `--robot` and for editing.
    File {
        #[command(flatten)]
        which: Which,
    },
}

/// The organism's robot and its hormone settings (a named organism's IR thresholds, the
/// defaults for a robot file).
fn load(which: &Which) -> Result<(Topology, HormoneSettings)> {
    let catalog = which.config.catalog()?;
    Ok(load_organism(which.name(), which.pitched, which.no_tail, &catalog)?)
}

struct RunArgs<'a> {
    world: Option<&'a std::path::Path>,
    seconds: f64,
    faults: Vec<Fault>,
    ir_threshold: Option<&'a str>,
    out: Option<&'a std::path::Path>,
    force: bool,
    quiet: bool,
}

fn run_one(which: &Which, args: RunArgs<'_>) -> Result<()> {
    use anyhow::Context;
    let RunArgs {
        world,
        seconds,
        faults,
        ir_threshold,
        out,
        force,
        quiet,
    } = args;
    let (robot, mut settings) = load(which)?;
    // Decided before the run, so a refused folder costs nothing.
    let dir = match out {
        Some(d) => crate::common::fresh_dir(d, true, force)?,
        None => crate::common::fresh_dir(
            &std::path::PathBuf::from(format!("runs/organism_{}", robot.name)),
            false,
            force,
        )?,
    };
    if let Some(text) = ir_threshold {
        settings.ir_threshold = modbot_app::organism::parse_thresholds(text)?;
    }
    let world = modbot_app::load_world(world)?;
    let options = modbot_app::EvalOptions {
        library: which.config.library()?,
        ..modbot_app::EvalOptions::default()
    };
    let bar = if quiet {
        indicatif::ProgressBar::hidden()
    } else {
        indicatif::ProgressBar::new((seconds * 1000.0) as u64)
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} sim {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let started = std::time::Instant::now();
    let mut tenths = crate::common::Tenths::new(quiet);
    let run = modbot_app::organism::run_organism(&robot, &world, seconds, &faults, settings, &options, &mut |t, _| {
        bar.set_position((t * 1000.0) as u64);
        bar.set_message(format!("{t:.1} s"));
        // Off a terminal, where the bar is not drawn.
        tenths.at(t, seconds);
    })?;
    bar.finish_and_clear();
    let r = &run.report;
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let rows = |modules: &[(String, u16, String)]| -> Vec<serde_json::Value> {
        modules
            .iter()
            .map(|(n, t, role)| json!({"name": n, "type": t, "role": role}))
            .collect()
    };
    let summary = json!({
        "organism": robot.name,
        "world": world.name,
        "status": r.status.to_string(),
        "notes": r.findings,
        "seconds": seconds,
        "wall_s": started.elapsed().as_secs_f64(),
        "speed_cm_s": r.speed_m_s * 100.0,
        "step_cm_per_period": r.step_m * 100.0,
        "heading_change_deg_per_period": r.heading_change_deg,
        "period_s": r.period_s,
        "closest_ir": run.closest_ir,
        "closest_approach_cm": run.closest_approach_m.map(|d| d * 100.0),
        "modules": rows(&run.modules),
        "faults": faults.iter().map(|f| match f {
            Fault::Cut { at_s, a, b } => json!({"at_s": at_s, "cut": [a, b]}),
            Fault::Remove { at_s, module } => json!({"at_s": at_s, "remove": module}),
        }).collect::<Vec<_>>(),
        "parts": run.parts.iter().map(|p| json!({
            "modules": rows(&p.modules),
            "distance_cm": p.distance_m * 100.0,
            "speed_cm_s": p.speed_m_s * 100.0,
            "measured_s": p.measured_s,
        })).collect::<Vec<_>>(),
    });
    std::fs::write(dir.join("summary.json"), serde_json::to_string_pretty(&summary)? + "\n")
        .context("writing summary.json")?;
    let names: Vec<String> = robot.joint_names();
    crate::plot::run_plot(&dir.join("plot.png"), &robot.name, &world, &run.samples, &names)?;
    let mut text = format!(
        "{}: {:.2} cm/s ({:.2} cm per {:.1} s wave period), heading {:+.1}°/period, closest IR {:.0}/128{}\n",
        robot.name,
        r.speed_m_s * 100.0,
        r.step_m * 100.0,
        r.period_s,
        r.heading_change_deg,
        run.closest_ir,
        if faults.is_empty() {
            ""
        } else {
            " (before the first fault)"
        }
    );
    for (k, p) in run.parts.iter().enumerate() {
        let names: Vec<String> = p.modules.iter().map(|(n, _, role)| format!("{n} ({role})")).collect();
        let _ = writeln!(
            text,
            "part {}: {:.1} cm in {:.0} s ({:.2} cm/s): {}",
            k + 1,
            p.distance_m * 100.0,
            p.measured_s,
            p.speed_m_s * 100.0,
            names.join(", ")
        );
    }
    if let Some(d) = run.closest_approach_m {
        let _ = writeln!(text, "closest approach to a wall or block: {:.1} cm", d * 100.0);
    }
    let _ = writeln!(text, "status: {}", r.status);
    for f in &r.findings {
        let _ = writeln!(text, "  ! {f}");
    }
    let mut written = vec!["summary.json", "plot.png"];
    let info = modbot_app::replay::ReplayInfo {
        robot: robot.name.clone(),
        controller: "digital hormones".into(),
        world: world.name.clone(),
        rate_hz: options.plan.control_rate_hz,
    };
    crate::common::write_replay(&dir, &info, &run.links, &world, &run.frames, &mut written)?;
    let _ = writeln!(text, "run folder: {} ({})", dir.display(), written.join(", "));
    emit(text)
}

pub fn run(args: &OrganismArgs) -> Result<()> {
    match &args.what {
        OrganismWhat::Run {
            which,
            world,
            seconds,
            cut,
            remove,
            ir_threshold,
            out,
            force,
            quiet,
        } => {
            let faults = cut
                .iter()
                .map(|c| Fault::parse_cut(c))
                .chain(remove.iter().map(|r| Fault::parse_remove(r)))
                .collect::<modbot_app::Result<Vec<_>>>()?;
            run_one(
                which,
                RunArgs {
                    world: world.as_deref(),
                    seconds: *seconds,
                    faults,
                    ir_threshold: ir_threshold.as_deref(),
                    out: out.as_deref(),
                    force: *force,
                    quiet: *quiet,
                },
            )
        }
        OrganismWhat::File { which } => {
            if modbot_app::organism::is_robot_file(which.name()) {
                return Err(BadInput("`organism file` prints a named organism's file".into()).into());
            }
            let spec = OrganismSpec::parse(which.name(), which.pitched, which.no_tail)?;
            emit(spec.robot_file())
        }
        OrganismWhat::Map { which, level, json } => {
            if !(1..=8).contains(level) {
                return Err(BadInput(format!("--level {level}: expected 1 to 8")).into());
            }
            let (robot, settings) = load(which)?;
            let settings = HormoneSettings {
                max_level: *level,
                ..settings
            };
            let mut bus = bus_of(&robot, settings)?;
            // Every handshake relayed to the level, several times over.
            let ticks = (usize::from(*level) + 3) * settings.handshake_every as usize * 2;
            bus.run(ticks);
            let rows: Vec<_> = robot
                .modules
                .iter()
                .enumerate()
                .filter_map(|(i, m)| bus.module(i).map(|h| (m.name.clone(), h)))
                .collect();
            if *json {
                let doc = json!({
                    "organism": robot.name,
                    "level": level,
                    "ticks": ticks,
                    "modules": rows.iter().map(|(name, h)| json!({
                        "name": name,
                        "type": h.module_type(),
                        "role": h.role().name(),
                        "map_nodes": h.map().nodes(),
                    })).collect::<Vec<_>>(),
                });
                emit(serde_json::to_string_pretty(&doc)? + "\n")
            } else {
                let mut s = format!("{} mapped at level {level} after {ticks} ticks\n", robot.name);
                let _ = writeln!(s, "{:<18} {:>5}  {:>9}  role", "module", "type", "map nodes");
                for (name, h) in &rows {
                    let _ = writeln!(
                        s,
                        "{name:<18} {:>5}  {:>9}  {}",
                        h.module_type(),
                        h.map().nodes(),
                        h.role().name()
                    );
                }
                emit(s)
            }
        }
    }
}
