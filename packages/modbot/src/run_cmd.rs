//! `modbot run`: a gait on the embedded simulator, measured with the source's protocol.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use modbot_app::recording::{GaitRun, Recording};
use modbot_app::replay::{Frames, LinkPoseCsv, ReplayInfo, ReplayLink, replay_links};
use modbot_app::{ControllerSpec, EvalOptions, evaluate_streaming, load_robot, load_world_for};
use modbot_description::DescriptionConfig;
use modbot_sim::{Engine, Report, RunPlan, Sample, Simulator};
use serde_json::json;

use crate::common::{BadInput, ConfigArgs, fresh_dir, parse_set};

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Robot: a preset (pp:M, py:M, pyp) or a robot file (config/robots/*.yaml).
    #[arg(long, short, default_value = "pp:8")]
    pub robot: String,
    /// Gait or preset name (see `modbot gaits`).
    #[arg(long, short, default_value = "caterpillar", conflicts_with = "poses")]
    pub gait: String,
    /// A pose sequence file to run instead of a gait; its cycles are passes through its
    /// poses and their length is measured.
    #[arg(long, value_name = "FILE")]
    pub poses: Option<PathBuf>,
    /// Start-pose perturbation seed (0: the world's start as written; others move it by up
    /// to ±5 mm and ±2°).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Simulated time after which a pose sequence that does not complete its cycles is
    /// given up, s.
    #[arg(long, default_value_t = 600.0, value_parser = crate::common::positive)]
    pub max_time: f64,
    /// Parameter value, KEY=VALUE (e.g. A=40, dphi=110).
    #[arg(long = "set", short = 's', value_name = "KEY=VALUE", value_parser = parse_set)]
    pub set: Vec<(String, f64)>,
    /// Cycles measured after the warm-up.
    #[arg(long, default_value_t = 10)]
    pub cycles: usize,
    /// Cycles discarded before measuring (the source discards 2).
    #[arg(long, default_value_t = 2)]
    pub warmup: usize,
    /// World: a scenario .yaml (or the generated .sdf beside it); default flat ground, μ = 0.2
    /// (the wheel-foot robots: worlds/wheelfoot_mu1.yaml, terrain μ = 1.0 multiplied).
    #[arg(long, value_name = "FILE")]
    pub world: Option<PathBuf>,
    /// Run folder (default runs/<robot>_<gait>, or runs/<robot>_<gait>-2, -3, … when that
    /// holds an earlier run). A named folder that holds files is refused without --force.
    #[arg(long, short, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Overwrite the run folder's files instead of refusing (--out) or numbering (default).
    #[arg(long)]
    pub force: bool,
    /// Control rate, Hz.
    #[arg(long, default_value_t = modbot_sim::DEFAULT_CONTROL_RATE_HZ, value_parser = crate::common::control_rate)]
    pub rate: f64,
    #[command(flatten)]
    pub sim: crate::common::SimArgs,
    /// Also record the run as ROS 2 messages in `run.mcap` (tf, joint_states, odom,
    /// robot_description, the commands and the gait; Foxglove and rosbag2 open it).
    #[arg(long)]
    pub mcap: bool,
    /// No `replay.html` (the link poses, `links.csv`, are still written).
    #[arg(long)]
    pub no_replay: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub config: ConfigArgs,
}

/// The files a run writes as it goes, in its working folder.
const STREAMED: [&str; 3] = ["trajectory.csv", "links.csv", "run.mcap"];

/// What the run records beside its trajectory, opened at its first sample (when the
/// simulator exists): link poses (links.csv and the replay's frames) and the MCAP recording.
struct Extras {
    links_csv: LinkPoseCsv,
    frames: Frames,
    replay_links: Vec<ReplayLink>,
    mcap: Option<Recording>,
}

pub fn run(args: &RunArgs) -> Result<()> {
    if args.cycles == 0 {
        return Err(BadInput("--cycles must be at least 1".into()).into());
    }
    let catalog = args.config.catalog()?;
    let library = args.config.library()?;
    let robot = load_robot(&args.robot, &catalog)?;
    let world = load_world_for(args.world.as_deref(), &robot)?;
    let controller = controller_spec(args)?;
    let mut options = EvalOptions {
        library,
        plan: RunPlan {
            warmup_cycles: args.warmup,
            cycles: args.cycles,
            control_rate_hz: args.rate,
            max_time_s: args.max_time,
        },
        ..EvalOptions::default()
    };
    args.sim.apply(&mut options);
    let mut tenths = crate::common::Tenths::new(args.quiet);
    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(1000)
    };
    bar.set_style(ProgressStyle::with_template("{bar:40} sim {msg}").unwrap_or_else(|_| ProgressStyle::default_bar()));
    // The trajectory (and the link poses, and the recording) stream to their files as the
    // samples are recorded, so a run of any length holds only what the measurement needs.
    // Without --out the folder is named after the controller the run builds: the files are
    // written in a working folder beside it and moved in at the end.
    let (dir, work) = match &args.out {
        Some(dir) => {
            let dir = fresh_dir(dir, true, args.force)?;
            (Some(dir.clone()), dir)
        }
        None => (None, PathBuf::from(format!("runs/.run-{}", std::process::id()))),
    };
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    // A failed run leaves nothing behind, so the same command can be given again.
    let clean_up = |work: &std::path::Path| {
        if dir.is_some() {
            for f in STREAMED {
                let _ = std::fs::remove_file(work.join(f));
            }
        } else {
            let _ = std::fs::remove_dir_all(work);
        }
    };
    let csv_path = work.join("trajectory.csv");
    let joint_names = robot.joint_names();
    let mut csv = open_trajectory(&csv_path, &joint_names)?;
    let urdf = if args.mcap {
        Some(modbot_description::urdf::urdf(&robot, &DescriptionConfig::builtin())?)
    } else {
        None
    };
    let gait_run = match &controller {
        ControllerSpec::Gait { name, params } => Some(GaitRun {
            gait: name.clone(),
            params: params.clone(),
        }),
        _ => None,
    };
    let mut extras: Option<Extras> = None;
    let mut row = String::new();
    let mut sink = |smp: &Sample, sim: &Simulator| -> std::result::Result<(), String> {
        row.clear();
        let _ = write!(
            row,
            "{},{},{},{},{},{}",
            smp.t, smp.com[0], smp.com[1], smp.com[2], smp.heading, smp.roll
        );
        for v in smp.targets.iter().chain(&smp.angles) {
            let _ = write!(row, ",{v}");
        }
        row.push('\n');
        csv.write_all(row.as_bytes())
            .map_err(|e| format!("{}: {e}", csv_path.display()))?;
        if extras.is_none() {
            let mcap = match &urdf {
                Some(urdf) => Some(
                    Recording::create(&work.join("run.mcap"), sim, urdf, gait_run.as_ref(), &world)
                        .map_err(|e| e.to_string())?,
                ),
                None => None,
            };
            extras = Some(Extras {
                links_csv: LinkPoseCsv::create(&work.join("links.csv"), sim.link_names()).map_err(|e| e.to_string())?,
                frames: Frames::default(),
                replay_links: replay_links(sim, &[&robot]),
                mcap,
            });
        }
        if let Some(x) = extras.as_mut() {
            let poses = sim.link_poses();
            x.links_csv.write(smp.t, &poses)?;
            x.frames.push(smp.t, &poses, smp.com);
            if let Some(m) = x.mcap.as_mut() {
                m.record(sim, &smp.targets).map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    };
    let started = Instant::now();
    let mut last_draw = 0.0;
    let eval = evaluate_streaming(
        &robot,
        &controller,
        &world,
        args.seed,
        &options,
        &mut |t, total| {
            if t - last_draw >= 0.1 || t >= total {
                last_draw = t;
                let rtf = t / started.elapsed().as_secs_f64().max(1e-9);
                bar.set_length((total * 1000.0).round() as u64);
                bar.set_position((t * 1000.0).round() as u64);
                bar.set_message(format!("{t:.1}/{total:.1} s, real-time factor {rtf:.1}"));
            }
            // Off a terminal the bar is not drawn: a line at every tenth of the run instead.
            tenths.at(t, total);
        },
        &mut sink,
    );
    let wall = started.elapsed().as_secs_f64();
    let finished = eval.map_err(anyhow::Error::from).and_then(|eval| {
        csv.flush().with_context(|| format!("writing {}", csv_path.display()))?;
        let x = extras.take().context("the run recorded no sample")?;
        x.links_csv.finish()?;
        let messages = match x.mcap {
            Some(m) => Some(m.finish()?),
            None => None,
        };
        Ok((eval, x.frames, x.replay_links, messages))
    });
    drop(csv);
    let (eval, frames, links, mcap_messages) = finished.inspect_err(|_| clean_up(&work))?;
    let dir = match dir {
        Some(d) => d,
        None => move_in(&work, &format!("runs/{}_{}", robot.name, eval.controller), args.force)?,
    };
    bar.finish_and_clear();
    for note in &eval.notes {
        eprintln!("note: {note}");
    }
    let rtf = eval.simulated_s / wall.max(1e-9);

    let mut summary = eval.summary(&args.robot, &robot.name, &world.name, args.seed, args.rate);
    summary["wall_s"] = json!(wall);
    summary["real_time_factor"] = json!(rtf);
    let json_path = dir.join("summary.json");
    std::fs::write(&json_path, serde_json::to_string_pretty(&summary)? + "\n")
        .with_context(|| format!("writing {}", json_path.display()))?;
    let png = dir.join("plot.png");
    crate::plot::run_plot(
        &png,
        &format!("{} {}", args.robot, eval.controller),
        &world,
        &eval.samples,
        &joint_names,
    )?;

    let mut written = vec!["trajectory.csv", "links.csv", "summary.json", "plot.png"];
    if !args.no_replay {
        let info = ReplayInfo {
            robot: args.robot.clone(),
            controller: eval.controller.clone(),
            world: world.name.clone(),
            rate_hz: args.rate,
        };
        crate::common::write_replay(&dir, &info, &links, &world, &frames, &mut written)?;
    }
    if let Some(n) = mcap_messages {
        written.push("run.mcap");
        tracing::debug!("run.mcap: {n} messages");
    }

    let table = summary_table(&eval.report, rtf, eval.engine, args.poses.is_some());
    let mut stdout = std::io::stdout().lock();
    let _ = write!(stdout, "{table}");
    let _ = writeln!(stdout, "run folder: {} ({})", dir.display(), written.join(", "));
    Ok(())
}

/// The controller `run` builds: a pose sequence (which takes no `--set`) or a gait.
fn controller_spec(args: &RunArgs) -> Result<ControllerSpec> {
    match &args.poses {
        Some(path) => {
            if !args.set.is_empty() {
                return Err(BadInput("--set gives gait parameters; a pose sequence (--poses) has none".into()).into());
            }
            Ok(ControllerSpec::PoseSequence(path.clone()))
        }
        None => Ok(ControllerSpec::Gait {
            name: args.gait.clone(),
            params: args.set.clone(),
        }),
    }
}

/// trajectory.csv opened with its header: time, centre of mass, heading, roll, then every
/// joint's target and every joint's angle.
fn open_trajectory(csv_path: &std::path::Path, joint_names: &[String]) -> Result<std::io::BufWriter<std::fs::File>> {
    let file = std::fs::File::create(csv_path).with_context(|| format!("creating {}", csv_path.display()))?;
    let mut csv = std::io::BufWriter::new(file);
    let mut header = String::from("time_s,com_x_m,com_y_m,com_z_m,heading_rad,roll_rad");
    for j in joint_names {
        let _ = write!(header, ",{j}_target");
    }
    for j in joint_names {
        let _ = write!(header, ",{j}_angle_rad");
    }
    writeln!(csv, "{header}").with_context(|| format!("writing {}", csv_path.display()))?;
    Ok(csv)
}

/// Moves the streamed files from the working folder `work` into a fresh folder `name` (the
/// run's, named after its controller once it is built) and removes `work`.
fn move_in(work: &std::path::Path, name: &str, force: bool) -> Result<PathBuf> {
    let d = fresh_dir(&PathBuf::from(name), false, force)?;
    std::fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
    for f in STREAMED {
        let from = work.join(f);
        if from.exists() {
            let to = d.join(f);
            std::fs::rename(&from, &to).with_context(|| format!("moving {} to {}", from.display(), to.display()))?;
        }
    }
    let _ = std::fs::remove_dir(work);
    Ok(d)
}

/// A number with at most 4 decimals and no trailing zeros (a period of 0.94 s computed as
/// 0.9400000000000001 prints as 0.94).
fn short(x: f64) -> String {
    let s = format!("{x:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn summary_table(r: &Report, rtf: f64, engine: Engine, measured_cycles: bool) -> String {
    let mut t = String::new();
    if measured_cycles {
        let _ = writeln!(
            t,
            "measured over {} after {} (cycle time measured: {:.3} s)",
            plural(r.cycles, "cycle"),
            plural(r.warmup_cycles, "warm-up cycle"),
            r.period_s
        );
    } else {
        let _ = writeln!(
            t,
            "measured over {} after {} (T = {} s)",
            plural(r.cycles, "cycle"),
            plural(r.warmup_cycles, "warm-up cycle"),
            short(r.period_s)
        );
    }
    let rows = [
        ("step along body axis", format!("{:+.2} cm/cycle", r.step_x_m * 100.0)),
        ("step across (left +)", format!("{:+.2} cm/cycle", r.step_y_m * 100.0)),
        (
            "step length",
            format!(
                "{:.2} cm/cycle = {:.3} body lengths/cycle",
                r.step_m * 100.0,
                r.speed_body_lengths_per_cycle
            ),
        ),
        ("speed", format!("{:.2} cm/s", r.speed_m_s * 100.0)),
        ("heading change", format!("{:+.2} deg/cycle", r.heading_change_deg)),
        (
            "roll",
            format!(
                "{:+.1} deg/cycle (range {:.1} deg)",
                r.roll_per_cycle_deg, r.roll_range_deg
            ),
        ),
        (
            "CoM height",
            format!(
                "{:.1} cm mean, {:.1} to {:.1} cm",
                r.com_height_mean_m * 100.0,
                r.com_height_min_m * 100.0,
                r.com_height_max_m * 100.0
            ),
        ),
        ("real-time factor", format!("{rtf:.1} ({engine} engine)")),
    ];
    for (k, v) in rows {
        let _ = writeln!(t, "  {k:<22} {v}");
    }
    let _ = writeln!(t, "  {:<22} {}", "status", r.status);
    for f in &r.findings {
        let _ = writeln!(t, "  ! {f}");
    }
    t
}
