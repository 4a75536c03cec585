//! `modbot mission WORLD`: the strategic-planning mission of seed-000 §6 on the embedded
//! simulator (issue 15; decision record 0049), with a line per phase as it ends and a run
//! folder: `summary.json`, `trajectories.csv`, the top-view storyboard `storyboard.png` and
//! `gazebo_docks.json` (the run's docks as Gazebo's DetachableJoint systems, record 0051).

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result, anyhow};
use modbot_app::load_world;
use modbot_app::mission::{MissionReport, MissionSettings, run_mission, seeded_layout};
use modbot_app::scan::ScanSettings;

use crate::common::{emit, fresh_dir};

#[derive(Debug, clap::Args)]
pub struct MissionArgs {
    /// World file: six module starts (`robot_starts`), a ground obstacle, a lath and a target.
    #[arg(default_value = "worlds/strategic_mission.yaml")]
    pub world: PathBuf,
    /// Draw the six start poses from this seed instead of the world's (reproducible).
    #[arg(long)]
    pub layout_seed: Option<u64>,
    /// Seed of the cameras' noise.
    #[arg(long, default_value_t = 0)]
    pub camera_seed: u64,
    /// Run folder (default: runs/<world>_mission, or the next free runs/<world>_mission-N).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write into --out even if it holds files.
    #[arg(long)]
    pub force: bool,
}

pub fn run(args: &MissionArgs) -> Result<()> {
    let mut world = load_world(Some(&args.world))?;
    if let Some(seed) = args.layout_seed {
        world =
            seeded_layout(&world, seed).map_err(|e| crate::common::BadInput(format!("--layout-seed {seed}: {e}")))?;
    }
    let dir = match &args.out {
        Some(d) => fresh_dir(d, true, args.force)?,
        None => fresh_dir(
            &PathBuf::from(format!("runs/{}_mission", world.name)),
            false,
            args.force,
        )?,
    };
    let settings = MissionSettings {
        scan: ScanSettings {
            seed: args.camera_seed,
            ..ScanSettings::default()
        },
        ..MissionSettings::default()
    };
    eprintln!("mission in `{}`: six modules, writing {}", world.name, dir.display());
    let wall = std::time::Instant::now();
    let report = run_mission(&world, &settings, &mut |p| {
        eprintln!(
            "[{:7.1} – {:7.1} s] {:<44} {:<6} {}",
            p.start_s, p.end_s, p.phase, p.outcome, p.detail
        )
    })
    .map_err(|e| anyhow!("{e}"))?;
    let wall_s = wall.elapsed().as_secs_f64();
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    write_folder(&dir, &world, &report, wall_s)?;
    let mut out = String::new();
    writeln!(
        out,
        "mission `{}`: {} — {:.3} m from the target after {:.1} s simulated ({:.1} s wall, real-time factor {:.1})",
        report.world,
        if report.reached {
            "reached the target"
        } else {
            "did not reach the target"
        },
        report.final_distance_m,
        report.sim_s,
        wall_s,
        report.sim_s / wall_s.max(1e-9)
    )?;
    writeln!(out, "run folder: {}", dir.display())?;
    emit(out)?;
    match &report.failure {
        Some(f) => Err(anyhow!("the mission ended in {f}")),
        None if !report.reached => Err(anyhow!(
            "the mission ended {:.3} m from the target",
            report.final_distance_m
        )),
        None => Ok(()),
    }
}

/// The run's docks as Gazebo is to make and break them (record 0051): each attach the
/// `gz service` call that adds the DetachableJoint system to the partner's model, each
/// detach the ROS topic (bridged) and the Gazebo topic of its system; the modules spawned
/// as `module_1` … `module_6` from urdf/wheelfoot.urdf.
fn gazebo_docks(world: &modbot_core::Scenario, report: &MissionReport) -> Result<String> {
    let catalog = modbot_core::ModuleCatalog::builtin();
    let topology = modbot_description::artifacts::robot("wheelfoot", &catalog)?;
    let urdf = modbot_description::urdf::urdf(&topology, &modbot_description::DescriptionConfig::builtin())?;
    let model = modbot_description::UrdfModel::parse(&urdf, "wheelfoot")?;
    let mut events = Vec::new();
    for e in &report.docks {
        let link = |p: &str| modbot_description::dock::port_link(&topology, p);
        let dock = link(e.partner_port).and_then(|parent| {
            modbot_description::dock::GzDock::new(
                &e.dock,
                &world.name,
                &model,
                (&format!("module_{}", e.partner_module + 1), &parent),
                (&format!("module_{}", e.module + 1), &link(e.port)?),
            )
        });
        let mut j = serde_json::json!({"time_s": e.time_s, "action": e.action, "dock": e.dock});
        match dock {
            Ok(d) if e.action == "attach" => {
                j["gz_service_command"] = serde_json::json!(d.gz_service_command());
                j["plugin"] = serde_json::json!(d.plugin_xml());
                j["bridge_yaml"] = serde_json::json!(d.bridge_yaml());
            }
            Ok(d) => {
                j["ros_topic"] = serde_json::json!(d.ros_topic("detach"));
                j["gz_topic"] = serde_json::json!(d.gz_topic("detach"));
            }
            // A world whose name Gazebo cannot take: said here, the run's other files stand.
            Err(err) => j["error"] = serde_json::json!(err.to_string()),
        }
        events.push(j);
    }
    Ok(serde_json::to_string_pretty(&serde_json::json!({
        "world": world.name,
        "models": (1..=world.robot_starts.len()).map(|m| format!("module_{m}")).collect::<Vec<_>>(),
        "robot": "urdf/wheelfoot.urdf",
        "docks": events,
    }))?)
}

fn write_folder(
    dir: &std::path::Path,
    world: &modbot_core::Scenario,
    report: &MissionReport,
    wall_s: f64,
) -> Result<()> {
    let summary = serde_json::json!({
        "world": report.world,
        "reached": report.reached,
        "final_distance_m": report.final_distance_m,
        "final_heading_error_deg": report.final_heading_error_deg,
        "failure": report.failure,
        "friction_mu": report.friction_mu,
        "roles": report.roles.iter().enumerate().map(|(r, m)| serde_json::json!({"role": r + 1, "module": m + 1})).collect::<Vec<_>>(),
        "plan": report.plan,
        "searched_configurations": report.searched_configurations,
        "phases": report.phases,
        "target_m": report.target_m,
        "objects_m": report.objects,
        "localisation_error_m": report.localisation_error_m,
        "staging_localisation_error_m": report.staging_localisation_error_m,
        "docks": report.docks,
        "timeline": report.timeline.iter().map(|(t, s)| serde_json::json!({"t_s": t, "state": s})).collect::<Vec<_>>(),
        "simulated_s": report.sim_s,
        "wall_s": wall_s,
        "starts": world.robot_starts.iter().map(|s| serde_json::json!({"xyz": s.xyz, "yaw_deg": s.yaw_deg})).collect::<Vec<_>>(),
    });
    let path = dir.join("summary.json");
    std::fs::write(&path, serde_json::to_string_pretty(&summary)? + "\n")
        .with_context(|| format!("writing {}", path.display()))?;
    let path = dir.join("gazebo_docks.json");
    std::fs::write(&path, gazebo_docks(world, report)? + "\n")
        .with_context(|| format!("writing {}", path.display()))?;
    let mut csv = String::from("module,t_s,x_m,y_m,yaw_rad\n");
    for (i, t) in report.trajectories.iter().enumerate() {
        for p in t {
            writeln!(csv, "{},{:.3},{:.5},{:.5},{:.5}", i + 1, p[0], p[1], p[2], p[3])?;
        }
    }
    // The execution's states as they changed (the mission's state machine, record 0059).
    let mut timeline = String::from("t_s,state\n");
    for (t, state) in &report.timeline {
        writeln!(timeline, "{t:.3},\"{}\"", state.replace('"', "\"\""))?;
    }
    let path = dir.join("timeline.csv");
    std::fs::write(&path, timeline).with_context(|| format!("writing {}", path.display()))?;
    let path = dir.join("trajectories.csv");
    std::fs::write(&path, csv).with_context(|| format!("writing {}", path.display()))?;
    // Role#1's position as each phase ended.
    let marks: Vec<(String, [f64; 2])> = match report.roles.first() {
        Some(&r1) => report
            .phases
            .iter()
            .filter_map(|p| {
                let t = report.trajectories.get(r1)?;
                let s = t
                    .iter()
                    .min_by(|a, b| (a[0] - p.end_s).abs().total_cmp(&(b[0] - p.end_s).abs()))?;
                Some((format!("{} ({})", p.phase, p.outcome), [s[1], s[2]]))
            })
            .collect(),
        None => Vec::new(),
    };
    let title = format!(
        "{}: {}",
        report.world,
        if report.reached {
            "target reached"
        } else {
            "target not reached"
        }
    );
    crate::plot::mission_plot(
        &dir.join("storyboard.png"),
        &title,
        world,
        &report.trajectories,
        &marks,
        report.target_m,
    )?;
    Ok(())
}
