//! The `modbot` command as a user runs it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use std::path::PathBuf;
use std::process::{Command, Output};

fn modbot(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_modbot"))
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("run modbot")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Each command is refused as bad input: exit code 2, a message containing its needle, no
/// panic.
fn assert_refused<'a, A: AsRef<[&'a str]> + std::fmt::Debug>(cases: &[(A, &str)]) {
    for (args, needle) in cases {
        let o = modbot(args.as_ref());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{args:?}: {}", stderr(&o));
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn gaits_lists_every_gait_and_preset() {
    let o = modbot(&["gaits"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for g in modbot_gaits::GAITS {
        assert!(text.contains(g.name), "{} missing", g.name);
    }
    assert!(text.contains("hypercube_sidewinding") && text.contains("amplitude_deg") && text.contains("default -110"));
    let o = modbot(&["gaits", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // The sine gaits, then the CPG.
    let gaits = doc["gaits"].as_array().unwrap();
    assert_eq!(gaits.len(), modbot_gaits::GAITS.len() + 1);
    assert_eq!(doc["gaits"][0]["params"][0]["default"], 40.0);
    let cpg = gaits.last().unwrap();
    assert_eq!(cpg["name"], "cpg");
    assert!(
        cpg["params"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["key"] == "frequency_hz" && p["default"] == 0.65)
    );
    assert!(text.contains("cpg  [any chain of servos]") && text.contains("delay_ticks"));
}

#[test]
fn gait_writes_a_csv_trajectory() {
    let o = modbot(&[
        "gait",
        "sidewinding",
        "--robot",
        "py:16",
        "--set",
        "A_h=30",
        "--duration",
        "10",
        "--rate",
        "100",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + 1001);
    let header: Vec<&str> = lines[0].split(',').collect();
    assert_eq!(header[0], "time_s");
    assert_eq!(
        header[1..],
        (1..=16).map(|i| format!("joint_{i}")).collect::<Vec<_>>()[..]
    );
    // Starts at rest, ends at full amplitude: yaw joints reach 30° (0.5236 rad) at most.
    let row = |i: usize| -> Vec<f64> { lines[i].split(',').map(|x| x.parse().unwrap()).collect() };
    assert!(row(1)[1..].iter().all(|v| *v == 0.0));
    let max_yaw = (500..=1001)
        .flat_map(|i| row(i)[1..].to_vec())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(max_yaw > 0.5 && max_yaw <= 30f64.to_radians() + 1e-3, "{max_yaw}");
    assert!((row(1001)[0] - 10.0).abs() < 1e-12);
}

#[test]
fn gait_writes_json_and_files() {
    let path = scratch("roll.json");
    let o = modbot(&[
        "gait",
        "hypercube_rolling",
        "--duration",
        "2",
        "--rate",
        "50",
        "--out",
        path.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(doc["robot"], "py:8");
    assert_eq!(doc["joint_names"].as_array().unwrap().len(), 8);
    assert_eq!(doc["joint_kinds"][1], "yaw");
    assert_eq!(doc["positions_rad"].as_array().unwrap().len(), 101);
    assert_eq!(doc["params"]["amplitude_deg"], 30.0);
    // --no-ramp gives the steady generator from t = 0: joint 2 = A sin(0 + 90°) = 30°.
    let csv = scratch("roll.csv");
    let o = modbot(&[
        "gait",
        "hypercube_rolling",
        "--no-ramp",
        "--duration",
        "1",
        "--out",
        csv.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&csv).unwrap();
    let first: Vec<f64> = text
        .lines()
        .nth(1)
        .unwrap()
        .split(',')
        .map(|x| x.parse().unwrap())
        .collect();
    assert!((first[2] - 30f64.to_radians()).abs() < 1e-12);
}

#[test]
fn bad_arguments_exit_2_with_a_clear_message() {
    let cases: &[(&[&str], &str)] = &[
        (&["gait", "slither", "--robot", "py:8"], "unknown gait `slither`"),
        (&["gait", "caterpillar"], "needs a robot"),
        (&["gait", "caterpillar", "--robot", "pp:1"], "pp:1"),
        (&["gait", "caterpillar", "--robot", "py:8"], "pitch-pitch"),
        (&["gait", "caterpillar", "--robot", "pp:8", "--set", "A"], "KEY=VALUE"),
        (
            &["gait", "caterpillar", "--robot", "pp:8", "--set", "A=x"],
            "not a number",
        ),
        (
            &["gait", "caterpillar", "--robot", "pp:8", "--set", "A=120"],
            "amplitude_deg",
        ),
        (
            &["gait", "caterpillar", "--robot", "pp:8", "--set", "speed=1"],
            "unknown parameter `speed`",
        ),
        (
            &["gait", "caterpillar", "--robot", "pp:8", "--set", "T=0.5"],
            "period_s",
        ),
        (&["gait", "caterpillar", "--robot", "pp:8", "--rate", "0"], "--rate"),
        (
            &[
                "gait",
                "caterpillar",
                "--robot",
                "pp:8",
                "--modules",
                "/nonexistent.yaml",
            ],
            "nonexistent.yaml",
        ),
        (
            &["gait", "caterpillar", "--robot", "pp:8", "--gaits", "/nonexistent.yaml"],
            "nonexistent.yaml",
        ),
        (&["frobnicate"], "frobnicate"),
    ];
    assert_refused(cases);
}

/// Issue 18: every floating-point argument is parsed as a finite number, and a time, rate,
/// size or speed as one > 0 (`bench sim --seconds nan` printed zeros, `launch --duration
/// nan` panicked, `run --rate 1e9` never finished).
#[test]
fn floating_point_arguments_refuse_nan_infinity_and_out_of_range() {
    let cases: &[(&[&str], &str)] = &[
        (&["run", "--rate", "1e9"], "--rate"),
        (&["run", "--rate", "nan"], "--rate"),
        (&["run", "--max-time", "inf"], "--max-time"),
        (&["run", "--step-ms", "0"], "--step-ms"),
        (&["run", "--step-ms", "1e-9"], "--step-ms"),
        (
            &["gait", "caterpillar", "--robot", "pp:8", "--duration", "nan"],
            "--duration",
        ),
        (&["gait", "caterpillar", "--robot", "pp:8", "--rate", "20000"], "--rate"),
        (&["bench", "sim", "--seconds", "nan"], "--seconds"),
        // Under one control tick it would time nothing and print a NaN rate.
        (&["bench", "sim", "--seconds", "0.001"], "--seconds"),
        (
            &["launch", "launch/organism_v_9.launch.yaml", "--duration", "nan"],
            "--duration",
        ),
        (&["organism", "run", "v:9", "--seconds", "inf"], "--seconds"),
        (&["plan", "--resolution=-1"], "--resolution"),
        (&["calibrate", "skid-steer", "--seconds", "0"], "--seconds"),
        (&["calibrate", "skid-steer", "--speed-deg-s", "nan"], "--speed-deg-s"),
        (&["maze", "--rate", "nan"], "--rate"),
        (&["search", "--target", "nan"], "--target"),
    ];
    assert_refused(cases);
}

#[test]
fn user_config_files_are_used_and_checked() {
    let gaits = scratch("gaits.yaml");
    std::fs::write(&gaits, "gaits:\n  caterpillar: {A: 20}\n").unwrap();
    let o = modbot(&[
        "gait",
        "caterpillar",
        "-r",
        "pp:4",
        "--no-ramp",
        "--duration",
        "0.5",
        "--format",
        "json",
        "--gaits",
        gaits.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["params"]["amplitude_deg"], 20.0);

    std::fs::write(&gaits, "gaits:\n  caterpillar: {A: 20, colour: 3}\n").unwrap();
    let o = modbot(&["gait", "caterpillar", "-r", "pp:4", "--gaits", gaits.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("colour") && stderr(&o).contains("gaits.yaml"),
        "{}",
        stderr(&o)
    );

    let modules = scratch("modules.yaml");
    let text = modbot_core::catalog::BUILTIN_MODULES_YAML.replacen("mass_kg: 0.025", "mass_kg: zero", 1);
    std::fs::write(&modules, text).unwrap();
    let o = modbot(&[
        "gait",
        "caterpillar",
        "-r",
        "pp:4",
        "--modules",
        modules.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("mass_kg"), "{}", stderr(&o));
}

#[test]
fn export_writes_descriptions() {
    let o = modbot(&["export", "urdf", "py:6"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let m = modbot_description::UrdfModel::parse(&stdout(&o), "stdout").unwrap();
    assert_eq!(m.movable_joints().count(), 6);
    let o = modbot(&["export", "controllers", "pp:3"]);
    assert!(stdout(&o).contains("      - joint_3\n"), "{}", stdout(&o));
    let o = modbot(&["export", "bridge", "pyp"]);
    assert!(stdout(&o).contains("/model/pyp_3/odometry"));

    let root = scratch("export_root");
    std::fs::create_dir_all(root.join("worlds")).unwrap();
    std::fs::write(root.join("worlds/tiny.yaml"), "name: tiny\nmaze: {sequence: \"s r\"}\n").unwrap();
    let o = modbot(&["export", "all", "--root", root.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in [
        "urdf/py_16.urdf",
        "config/controllers/pp_8.yaml",
        "config/bridge/pp_2.yaml",
        "worlds/tiny.sdf",
    ] {
        assert!(root.join(f).exists(), "{f}");
    }
    let sdf = std::fs::read_to_string(root.join("worlds/tiny.sdf")).unwrap();
    assert!(sdf.contains("<world name=\"tiny\">") && sdf.contains("maze_wall_left_0"));

    let bad = scratch("bad_world.yaml");
    std::fs::write(
        &bad,
        "name: w\nobstacles:\n  - {name: b, kind: wall, position_m: [0, 0], size_m: [1, 0, 1]}\n",
    )
    .unwrap();
    let o = modbot(&["export", "world", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("obstacles[0].size_m[1]"), "{}", stderr(&o));
    let o = modbot(&["export", "urdf", "qq:3"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn run_writes_the_run_folder() {
    let dir = scratch("run_pp8");
    let _ = std::fs::remove_dir_all(&dir);
    let o = modbot(&[
        "run",
        "--robot",
        "pp:8",
        "--gait",
        "caterpillar",
        "--set",
        "A=40",
        "--set",
        "dphi=110",
        "--cycles",
        "2",
        "--quiet",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    for row in ["step along body axis", "heading change", "roll", "real-time factor"] {
        assert!(table.contains(row), "{table}");
    }
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    let step = summary["report"]["step_x_m"].as_f64().unwrap();
    assert!(step < -0.04 && step > -0.09, "{step}");
    assert_eq!(summary["report"]["cycles"], 2);
    assert_eq!(summary["engine"], "native");
    let csv = std::fs::read_to_string(dir.join("trajectory.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(
        header.starts_with("time_s,com_x_m,com_y_m,com_z_m,heading_rad,roll_rad,joint_1_target"),
        "{header}"
    );
    assert!(header.ends_with("joint_8_angle_rad"));
    assert_eq!(csv.lines().count(), 1 + 1 + 800);
    let png = std::fs::read(dir.join("plot.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");

    // Without --out the folder is runs/<robot>_<controller> under the working directory;
    // the trajectory streams beside it and is moved in, leaving nothing behind.
    let cwd = scratch("run_default_folder");
    let _ = std::fs::remove_dir_all(&cwd);
    std::fs::create_dir_all(&cwd).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_modbot"))
        .args(["run", "--cycles", "1", "--warmup", "0", "--quiet"])
        .current_dir(&cwd)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(cwd.join("runs/pp_8_caterpillar/trajectory.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 1 + 200);
    let left: Vec<_> = std::fs::read_dir(cwd.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["pp_8_caterpillar"], "{left:?}");
    // A second run never overwrites the first: it takes the next numbered folder.
    let o = Command::new(env!("CARGO_BIN_EXE_modbot"))
        .args(["run", "--cycles", "1", "--warmup", "0", "--quiet"])
        .current_dir(&cwd)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("run folder: runs/pp_8_caterpillar-2 "),
        "{}",
        stdout(&o)
    );
    assert!(cwd.join("runs/pp_8_caterpillar-2/summary.json").exists());
}

/// Issue 20: the caterpillar on the obstacle course moves for its first cycles and is stuck
/// at the obstacle from cycle 8 on; the summary says so (status and a note) instead of reporting only
/// the mean step, and a named folder holding that run is not overwritten without --force.
/// Issue 20: every command that runs longer than a second shows progress; off a terminal
/// (a log, CI) as whole lines, and none with --quiet.
#[test]
fn long_commands_print_progress_lines_off_a_terminal() {
    let dir = scratch("run_progress");
    let o = modbot(&["run", "--cycles", "2", "--force", "--out", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<String> = stderr(&o)
        .lines()
        .filter(|l| l.starts_with("sim ") && l.contains(" s, real-time factor "))
        .map(str::to_string)
        .collect();
    assert!((9..=11).contains(&lines.len()), "{}", stderr(&o));
    // A line per tenth, none twice (t / total = 0.8 computes as 0.7999…).
    let times: Vec<&str> = lines.iter().filter_map(|l| l.split('/').next()).collect();
    assert!(times.windows(2).all(|w| w[0] != w[1]), "{lines:?}");
    assert!(
        lines.last().is_some_and(|l| l.starts_with("sim 8.0/8.0 s")),
        "{lines:?}"
    );
    let o = modbot(&["run", "--cycles", "2", "--force", "-q", "--out", dir.to_str().unwrap()]);
    assert!(o.status.success() && !stderr(&o).contains("sim "), "{}", stderr(&o));

    let o = modbot(&["molemod", "bench", "--max-size", "5", "--time-limit-ms", "100"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = stdout(&o).lines().count() - 1;
    let err = stderr(&o);
    let progress: Vec<&str> = err.lines().filter(|l| l.contains(" tasks: ")).collect();
    assert_eq!(progress.len(), rows, "{}", stderr(&o));
    assert!(progress[0].starts_with(&format!("1 of {rows} tasks: ")), "{progress:?}");
    let o = modbot(&["molemod", "bench", "--max-size", "5", "--time-limit-ms", "100", "-q"]);
    assert!(o.status.success() && !stderr(&o).contains(" tasks: "), "{}", stderr(&o));
}

#[test]
fn run_reports_a_caterpillar_stuck_at_the_obstacle_and_keeps_earlier_runs() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let world = root.join("worlds/obstacle_course.yaml");
    let dir = scratch("run_stuck");
    let _ = std::fs::remove_dir_all(&dir);
    let args = [
        "run",
        "--world",
        world.to_str().unwrap(),
        "--quiet",
        "--out",
        dir.to_str().unwrap(),
    ];
    let o = modbot(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    assert!(table.contains("status                 stalled"), "{table}");
    assert!(table.contains("! stalled: no progress from cycle 8 on"), "{table}");
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["status"], "stalled");
    assert_eq!(summary["report"]["status"], "stalled");
    let notes = summary["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n.as_str().unwrap().starts_with("stalled: ")),
        "{notes:?}"
    );
    // On flat ground the same gait is ok.
    let flat = scratch("run_flat_ok");
    let _ = std::fs::remove_dir_all(&flat);
    let o = modbot(&["run", "--quiet", "--cycles", "4", "--out", flat.to_str().unwrap()]);
    assert!(stdout(&o).contains("status                 ok"), "{}", stdout(&o));
    // The named folder now holds a run: refused, then overwritten on request.
    let again = modbot(&args);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("already holds files"), "{}", stderr(&again));
    let mut forced = args.to_vec();
    forced.push("--force");
    assert!(modbot(&forced).status.success());
}

/// Issue 20: the cells of a sweep where the caterpillar flips over end over end (A = 50 and
/// 60 at Δφ = 30 on pp:8: its modules stand on end and turn upside down) say so in the table's status and notes and in the count on stdout;
/// off a terminal the progress comes a line per point on stderr.
#[test]
fn sweep_reports_the_cells_where_the_robot_overturns() {
    let dir = scratch("sweep_flips");
    let _ = std::fs::remove_dir_all(&dir);
    let o = modbot(&[
        "sweep",
        "--x",
        "A=50:60:10",
        "--y",
        "dphi=30:60:30",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Progress off a terminal: a line per point, saying which.
    assert!(
        stderr(&o).contains("1 of 4 points: A=50 dphi=30\n2 of 4 points: A=60 dphi=30\n"),
        "{}",
        stderr(&o)
    );
    assert!(
        stdout(&o).starts_with("4 points: 2 ok, 2 overturned\n"),
        "{}",
        stdout(&o)
    );
    let table = std::fs::read_to_string(dir.join("table.csv")).unwrap();
    let status: Vec<(String, String)> = table
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (format!("{},{}", f[0], f[1]), f[6].to_string())
        })
        .collect();
    assert_eq!(
        status,
        [
            ("50,30".to_string(), "overturned".to_string()),
            ("60,30".into(), "overturned".into()),
            ("50,60".into(), "ok".into()),
            ("60,60".into(), "ok".into())
        ],
        "{table}"
    );
    assert!(table.contains("\"overturned: the body had turned"), "{table}");
}

/// The rapier engine is one flag away and measures the same gait alike; the benchmark
/// prints one CSV row per robot and step.
#[test]
fn rapier_engine_and_bench() {
    let dir = scratch("run_rapier");
    let _ = std::fs::remove_dir_all(&dir);
    let o = modbot(&[
        "run",
        "--engine",
        "rapier",
        "--cycles",
        "1",
        "--quiet",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("rapier engine"), "{}", stdout(&o));
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["engine"], "rapier");
    let step = summary["report"]["step_x_m"].as_f64().unwrap();
    assert!(step > 0.04 && step < 0.09, "{step}");
    let o = modbot(&["run", "--engine", "ode", "--cycles", "1", "-q"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("ode"), "{}", stderr(&o));

    let o = modbot(&["bench", "sim", "--seconds", "0.2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A progress line per case on stderr, the table alone on stdout.
    let err = stderr(&o);
    let progress: Vec<&str> = err.lines().filter(|l| l.contains(" of 8 cases: ")).collect();
    assert_eq!(progress.len(), 8, "{}", stderr(&o));
    assert!(progress[0].starts_with("1 of 8 cases: pp:8 caterpillar, 1 ms steps: real-time factor "));
    let csv = stdout(&o);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("engine,robot,gait,step_ms,simulated_s,wall_s,real_time_factor,steps_per_s")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 8, "{csv}");
    for r in &rows {
        assert_eq!(r[0], "native");
        let steps_per_s: f64 = r[7].parse().unwrap();
        assert!(steps_per_s > 0.0, "{csv}");
    }
}

#[test]
fn run_takes_worlds_and_refuses_bad_ones() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = scratch("run_maze");
    let _ = std::fs::remove_dir_all(&dir);
    let sdf = root.join("worlds/maze_sls.sdf");
    let o = modbot(&[
        "run",
        "-r",
        "pyp",
        "-g",
        "pyp_straight",
        "--cycles",
        "1",
        "--warmup",
        "1",
        "-q",
        "--world",
        sdf.to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["world"], "maze_sls");

    let bad = scratch("inside.yaml");
    std::fs::write(
        &bad,
        "name: inside\nobstacles:\n  - {name: rock, kind: wall, position_m: [0.1, 0], size_m: [0.05, 0.05, 0.05]}\n",
    )
    .unwrap();
    let o = modbot(&[
        "run",
        "--cycles",
        "1",
        "-q",
        "--world",
        bad.to_str().unwrap(),
        "-o",
        scratch("run_inside_rock").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("rock"), "{}", stderr(&o));
    let o = modbot(&["run", "--cycles", "1", "-q", "--world", "/nowhere/w.sdf"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = modbot(&["run", "--cycles", "0"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn sweep_writes_table_and_heatmap() {
    let dir = scratch("sweep");
    let _ = std::fs::remove_dir_all(&dir);
    let o = modbot(&[
        "sweep",
        "-r",
        "pp:4",
        "--x",
        "A=20:40:20",
        "--y",
        "dphi=90:180:90",
        "--cycles",
        "1",
        "--warmup",
        "1",
        "-q",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = std::fs::read_to_string(dir.join("table.csv")).unwrap();
    assert_eq!(table.lines().count(), 1 + 4, "{table}");
    assert!(table.starts_with("A,dphi,step_x_m"));
    assert!(std::fs::read(dir.join("heatmap.png")).unwrap().starts_with(b"\x89PNG"));
    let o = modbot(&["sweep", "--x", "A=1:0:1", "--y", "dphi=1:2:1"]);
    assert_eq!(o.status.code(), Some(2));
    // Issue 18: refused before running, not an all-NaN table with exit 0.
    let base = ["sweep", "-r", "pp:4", "--cycles", "1", "--warmup", "1", "-q"];
    let with = |extra: &[&'static str]| -> Vec<&str> { base.iter().chain(extra).copied().collect() };
    assert_refused(&[
        (
            with(&["--x", "speed=1:2:1", "--y", "dphi=90:180:90"]),
            "unknown parameter `speed`",
        ),
        (with(&["--x", "A=20:40:20", "--y", "A=20:40:20"]), "both sweep `A`"),
        (
            with(&["--x", "A=20:40:20", "--y", "dphi=90:180:90", "--set", "A=30"]),
            "`A` is swept and also fixed",
        ),
    ]);
}

#[test]
fn molemod_plans_the_worked_example() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let task = root.join("config/molemod/row_to_l.yaml");
    let svg = scratch("storyboard.svg");
    let o = modbot(&[
        "molemod",
        "plan",
        task.to_str().unwrap(),
        "--json",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["cost"], 11);
    assert_eq!(doc["actions"].as_array().unwrap().len(), 8);
    assert!(doc["expansions"].as_u64().unwrap() > 0 && doc["micros"].is_u64());
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.starts_with("<svg") && text.matches("<circle").count() == 9,
        "one robot in each of 9 frames"
    );
    let o = modbot(&["molemod", "plan", task.to_str().unwrap()]);
    assert!(stdout(&o).starts_with("cost 11, 8 joint steps"), "{}", stdout(&o));

    let bad = scratch("bad_task.yaml");
    std::fs::write(&bad, "initial: \"2 1 1\"\ngoal: \"1 1 0\"\n").unwrap();
    let o = modbot(&["molemod", "plan", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("3 modules, goal has 2"), "{}", stderr(&o));
    let limited = scratch("limited_task.yaml");
    let text = std::fs::read_to_string(&task)
        .unwrap()
        .replace("heuristic: manhattan", "heuristic: zero\n  max_expansions: 2");
    std::fs::write(&limited, text).unwrap();
    let o = modbot(&["molemod", "plan", limited.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("timeout"), "{}", stderr(&o));
}

#[test]
fn plan_solves_moving_ai_scenarios() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../modbot_planner/tests/data");
    let map = dir.join("random-32-32-20.map");
    let scen = dir.join("random-32-32-20.map.scen");
    let o = modbot(&["plan", "--map", map.to_str().unwrap(), "--scen", scen.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let published: Vec<f64> = std::fs::read_to_string(&scen)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split('\t').nth(8).unwrap().parse().unwrap())
        .collect();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "index,cost,expansions,micros");
    assert_eq!(lines.len(), 1 + published.len());
    for (l, want) in lines[1..].iter().zip(&published) {
        let cost: f64 = l.split(',').nth(1).unwrap().parse().unwrap();
        assert!((cost - want).abs() < 1e-6, "{l} vs {want}");
    }
    let bad = scratch("bad.map");
    std::fs::write(&bad, "type octile\nheight 1\nwidth 2\nmap\n.\n").unwrap();
    let o = modbot(&["plan", "--map", bad.to_str().unwrap(), "--scen", scen.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("bad.map:5"), "{}", stderr(&o));
}

#[test]
fn plan_gives_the_strategic_plan_of_a_scenario() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let scen = root.join("worlds/obstacle_course.yaml");
    let png = scratch("plan.png");
    let o = modbot(&["plan", scen.to_str().unwrap(), "--png", png.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    let text = stdout(&o);
    assert!(text.contains("single_module → quadruped → wheeled"), "{text}");
    let codes: Vec<&str> = text.lines().skip(2).map(|l| l.split(',').nth(1).unwrap()).collect();
    assert_eq!(codes, ["1", "1", "1", "2", "2", "2"]);
    let o = modbot(&["plan", scen.to_str().unwrap(), "--source-mode"]);
    assert!(
        stdout(&o).contains("4,2,wheeled,lath,0.000,-0.300,0,0,Drive"),
        "{}",
        stdout(&o)
    );
    let flat = root.join("worlds/flat.yaml");
    let o = modbot(&["plan", flat.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no goal"));
    let o = modbot(&[
        "plan",
        flat.to_str().unwrap(),
        "--goal",
        "1,0",
        "--available",
        "single_module,warp",
        "--start",
        "single_module",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("warp"), "{}", stderr(&o));
}

fn run_summary(robot: &str, gait_or_poses: &[&str], out: &str) -> serde_json::Value {
    let dir = scratch(out);
    let _ = std::fs::remove_dir_all(&dir);
    let mut args = vec![
        "run", "--robot", robot, "--cycles", "1", "--warmup", "1", "--quiet", "--out",
    ];
    args.push(dir.to_str().unwrap());
    args.extend_from_slice(gait_or_poses);
    let o = modbot(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap()
}

/// `--robot config/robots/py_16.yaml` runs the same robot as `--robot py:16`: the same step
/// to the last digit.
#[test]
fn a_robot_file_runs_like_its_preset() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let file = root.join("config/robots/py_16.yaml");
    let a = run_summary(file.to_str().unwrap(), &["--gait", "sidewinding"], "file_py16");
    let b = run_summary("py:16", &["--gait", "sidewinding"], "preset_py16");
    for key in ["step_x_m", "step_y_m", "heading_change_deg"] {
        assert_eq!(a["report"][key].as_f64(), b["report"][key].as_f64(), "{key}");
    }
    assert!(a["report"]["step_y_m"].as_f64().unwrap().abs() > 0.05, "{a}");
}

/// A pose sequence runs closed loop from the command line and reports its measured cycle.
#[test]
fn a_pose_sequence_runs_from_the_command_line() {
    let poses = scratch("swing.yaml");
    std::fs::write(
        &poses,
        "name: swing\nposes:\n  - {name: up, targets: {joint_1: {position_deg: 40}}}\n  - {name: down, targets: {joint_1: {position_deg: -40}}}\n",
    )
    .unwrap();
    let s = run_summary("pp:2", &["--poses", poses.to_str().unwrap()], "swing_pp2");
    assert_eq!(s["controller"], "swing");
    let t = s["report"]["period_s"].as_f64().unwrap();
    assert!(t > 0.7 && t < 0.85, "measured cycle {t} s");
    // A bad pose file is refused naming the joint, exit code 2.
    std::fs::write(
        &poses,
        "name: swing\nposes:\n  - {name: up, targets: {joint_1: {position_deg: 40}}}\n  - {name: down, targets: {joint_9: {position_deg: 40}}}\n",
    )
    .unwrap();
    let o = modbot(&["run", "--robot", "pp:2", "--poses", poses.to_str().unwrap(), "--quiet"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("joint_9"), "{}", stderr(&o));
}

/// Robot files with a loop, a port used twice, an unknown port or kind are refused by name.
#[test]
fn bad_robot_files_are_refused_by_name() {
    let head = "name: bad\nmodules:\n  - {name: a, kind: y1}\n  - {name: b, kind: y1}\n";
    for (body, named) in [
        (
            "connections:\n  - {from: a.head, to: b.tail}\n  - {from: b.head, to: a.tail}\n",
            "closes a loop",
        ),
        (
            "connections:\n  - {from: a.head, to: b.tail}\n  - {from: a.head, to: b.head}\n",
            "already in use",
        ),
        ("connections:\n  - {from: a.nose, to: b.tail}\n", "port `nose`"),
        ("connections:\n  - {from: a.head, to: b.tail}\n", ""),
    ] {
        let path = scratch("bad_robot.yaml");
        std::fs::write(&path, format!("{head}{body}")).unwrap();
        let o = modbot(&[
            "run",
            "--robot",
            path.to_str().unwrap(),
            "--cycles",
            "1",
            "--quiet",
            "--force",
            "--out",
            scratch("bad_robot_run").to_str().unwrap(),
        ]);
        if named.is_empty() {
            assert!(o.status.success(), "{}", stderr(&o));
        } else {
            assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
            assert!(
                stderr(&o).contains(named) && stderr(&o).contains("bad_robot.yaml"),
                "{named}: {}",
                stderr(&o)
            );
        }
    }
    // The catalog option is taken after the export subcommand too.
    let modules = scratch("modules_copy.yaml");
    std::fs::write(&modules, modbot_core::catalog::BUILTIN_MODULES_YAML).unwrap();
    let o = modbot(&["export", "urdf", "pp:3", "--modules", modules.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let path = scratch("bad_kind.yaml");
    std::fs::write(&path, "name: bad\nmodules:\n  - {name: a, kind: tetrahedron}\n").unwrap();
    let o = modbot(&["export", "urdf", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("tetrahedron"), "{}", stderr(&o));
}

/// The wheel-foot robots run by name with their gaits and the same report; their bad input
/// is refused naming it: a robot file joining ports the module does not have, a pose file
/// naming a joint the robot does not have, a wheel speed above the joint's limit, a gait of
/// another robot.
#[test]
fn wheelfoot_robots_run_by_name_and_refuse_bad_input() {
    let s = run_summary("quadruped", &["--gait", "trot"], "quadruped_trot");
    assert_eq!(s["controller"], "trot");
    assert!(s["report"]["step_x_m"].as_f64().unwrap() > 0.05, "{s}");
    let s = run_summary("wheeled", &["--gait", "spin"], "wheeled_spin");
    assert!(s["report"]["heading_change_deg"].as_f64().unwrap().abs() > 20.0, "{s}");
    let s = run_summary("wheelfoot", &["--gait", "inchworm_bwd_low"], "wheelfoot_bwd");
    assert!(s["report"]["step_x_m"].as_f64().unwrap() < -0.005, "{s}");

    let path = scratch("bad_quadruped.yaml");
    std::fs::write(
        &path,
        "name: bad\nmodules:\n  - {name: role1, kind: wheelfoot}\n  - {name: role2, kind: wheelfoot}\nconnections:\n  - {from: role1.BF, to: role2.BX}\n",
    )
    .unwrap();
    let o = modbot(&["run", "--robot", path.to_str().unwrap(), "--gait", "trot", "--quiet"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("BX") && stderr(&o).contains("bad_quadruped.yaml"),
        "{}",
        stderr(&o)
    );

    let poses = scratch("wheelfoot_poses.yaml");
    std::fs::write(
        &poses,
        "name: p\nposes:\n  - {name: a, targets: {m1_back_joint1: {position_deg: 10}}}\n  - {name: b, targets: {m1_back_joint3: {position_deg: 0}}}\n",
    )
    .unwrap();
    let o = modbot(&[
        "run",
        "--robot",
        "wheelfoot",
        "--poses",
        poses.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("m1_back_joint3"), "{}", stderr(&o));

    let o = modbot(&[
        "run",
        "--robot",
        "wheeled",
        "--gait",
        "drive",
        "--set",
        "speed_deg_s=400",
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("speed_deg_s") && stderr(&o).contains("360"),
        "{}",
        stderr(&o)
    );

    let o = modbot(&["run", "--robot", "wheelfoot", "--gait", "trot", "--quiet"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("inchworm_fwd_high"), "{}", stderr(&o));

    // The pose-search tables and the skid-steer calibration print.
    let o = modbot(&["pose-search", "3.5"]);
    assert!(o.status.success() && stdout(&o).contains("-0.0978"), "{}", stdout(&o));
    let o = modbot(&["calibrate", "skid-steer", "--seconds", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("alpha") && stdout(&o).contains("x_ICR"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn maze_scores_a_cpg_and_draws_its_path() {
    let out = scratch("maze_run");
    let _ = std::fs::remove_dir_all(&out);
    let o = modbot(&[
        "maze",
        "-q",
        "--robot",
        "pp:8",
        "--gait",
        "cpg",
        "--maze",
        "maze_sls,maze_b",
        "--max-time",
        "15",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("maze_sls") && text.contains("timed out") && text.contains("staged fitness"),
        "{text}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    // The first stage is not solved, so the second does not run and the staged fitness is f0.
    assert_eq!(doc["stages"].as_array().unwrap().len(), 1);
    assert_eq!(doc["staged_fitness"], doc["stages"][0]["fitness"]);
    assert!(out.join("maze_maze_sls.png").exists() && out.join("path_maze_sls.csv").exists());
    assert!(doc["params"]["phase_lag_deg"].as_f64() == Some(54.0));
    // The named folder holds that run: a second is refused before it runs, nothing lost.
    let again = modbot(&[
        "maze",
        "-q",
        "--robot",
        "pp:8",
        "--gait",
        "cpg",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(stderr(&again).contains("--force"), "{}", stderr(&again));
    assert!(out.join("maze_maze_sls.png").exists());
    // Bad input: unknown maze, a world without a maze, a bad parameter, a bad time.
    let flat = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../worlds/flat.yaml");
    assert_refused(&[
        (vec!["maze", "--maze", "maze_x"], "maze_x"),
        (vec!["maze", "--maze", flat.to_str().unwrap()], "no maze"),
        (vec!["maze", "--set", "R=3"], "amplitude"),
        (vec!["maze", "--max-time", "nan"], "--max-time"),
    ]);
}

/// `modbot search`: the same seed writes the same evaluations on 1 and 2 threads; the best
/// is a gait file that `modbot run` replays to the same number; a folder holding a search
/// is refused without --resume, and --resume extends it to the uninterrupted result.
#[test]
fn search_is_seeded_resumable_and_its_best_runs() {
    let base = [
        "search",
        "-q",
        "--robot",
        "pyp",
        "--objective",
        "abs(heading)",
        "--set",
        "O_h=0",
    ];
    let small = ["--population", "10", "--seed", "5"];
    let run = |name: &str, gens: &str, threads: &str, extra: &[&str]| {
        let out = scratch(name);
        let mut args: Vec<&str> = base.to_vec();
        args.extend(small);
        args.extend(["--generations", gens, "--threads", threads, "-o", out.to_str().unwrap()]);
        args.extend(extra);
        (modbot(&args), out)
    };
    for d in ["search_t1", "search_t2", "search_resume"] {
        let _ = std::fs::remove_dir_all(scratch(d));
    }
    let (o1, d1) = run("search_t1", "3", "1", &[]);
    assert!(o1.status.success(), "{}", stderr(&o1));
    assert!(stdout(&o1).contains("best "), "{}", stdout(&o1));
    let (o2, d2) = run("search_t2", "3", "2", &[]);
    assert!(o2.status.success(), "{}", stderr(&o2));
    let csv = |d: &PathBuf| std::fs::read_to_string(d.join("evaluations.csv")).unwrap();
    assert_eq!(csv(&d1), csv(&d2));
    assert!(csv(&d1).lines().count() > 10);
    assert!(d1.join("convergence.png").exists() && d1.join("checkpoint.json").exists());
    // The folder holds a search: refused without --resume.
    let (again, _) = run("search_t1", "3", "1", &[]);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("--resume"), "{}", stderr(&again));
    // Two generations, then resumed to three: the same evaluations.
    let (a, dr) = run("search_resume", "2", "2", &[]);
    assert!(a.status.success(), "{}", stderr(&a));
    assert_ne!(csv(&dr), csv(&d1));
    let (b, _) = run("search_resume", "3", "2", &["--resume"]);
    assert!(b.status.success(), "{}", stderr(&b));
    assert_eq!(csv(&dr), csv(&d1));
    // The best as a gait file: `modbot run` measures the same heading change.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d1.join("summary.json")).unwrap()).unwrap();
    let best = summary["best"]["fitness"].as_f64().unwrap();
    let gaits = d1.join("best.yaml");
    let rd = scratch("search_best_run");
    let _ = std::fs::remove_dir_all(&rd);
    let o = modbot(&[
        "run",
        "--gaits",
        gaits.to_str().unwrap(),
        "--robot",
        "pyp",
        "--gait",
        "search_best",
        "--warmup",
        "2",
        "--cycles",
        "3",
        "-o",
        rd.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(rd.join("summary.json")).unwrap()).unwrap();
    let heading = run["report"]["heading_change_deg"].as_f64().unwrap();
    assert_eq!(heading.abs(), best, "replayed {heading} vs searched {best}");
    // A wheel-foot controller's parameters are searched too; its best is a command line.
    let qd = scratch("search_trot");
    let _ = std::fs::remove_dir_all(&qd);
    let o = modbot(&[
        "search",
        "-q",
        "--robot",
        "quadruped",
        "--gait",
        "trot",
        "--objective",
        "heading",
        "--population",
        "4",
        "--generations",
        "1",
        "--warmup",
        "1",
        "--cycles",
        "1",
        "-o",
        qd.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let cmd = std::fs::read_to_string(qd.join("best.txt")).unwrap();
    assert!(
        cmd.starts_with("modbot run --robot quadruped --gait trot --set l="),
        "{cmd}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(qd.join("summary.json")).unwrap()).unwrap();
    let genes: Vec<&str> = summary["genes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["key"].as_str().unwrap())
        .collect();
    assert_eq!(genes, ["r", "l", "swing_deg"]);
    let rq = scratch("search_trot_run");
    let _ = std::fs::remove_dir_all(&rq);
    let mut args: Vec<&str> = cmd.split_whitespace().skip(1).collect();
    args.extend(["-o", rq.to_str().unwrap()]);
    let o = modbot(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(rq.join("summary.json")).unwrap()).unwrap();
    assert_eq!(run["report"]["heading_change_deg"], summary["best"]["fitness"]);
    // Bad input names itself.
    assert_refused(&[
        (vec!["search", "--objective", "speed"], "speed"),
        (vec!["search", "--gene", "A_x"], "A_x"),
        (vec!["search", "--gene", "A_v=0:200"], "amplitude_v_deg"),
        (vec!["search", "--population", "1"], "population"),
        (vec!["search", "--minimal", "py"], "--target"),
        (
            vec!["search", "--resume", "-o", "/nonexistent/modbot_search"],
            "holds no search",
        ),
        (vec!["search", "--minimal", "qq", "--target", "1"], "qq"),
    ]);
}

/// The minimal-configuration search tries chains from 2 modules up (py:3 is the PYP) and
/// stops at the first whose best reaches the target; a target none reaches tries them all.
#[test]
fn minimal_configuration_search_tries_chains_upwards() {
    let out = scratch("search_minimal");
    let _ = std::fs::remove_dir_all(&out);
    let o = modbot(&[
        "search",
        "-q",
        "--minimal",
        "py",
        "--target",
        "1000",
        "--max-modules",
        "3",
        "--objective",
        "abs(heading)",
        "--set",
        "O_h=0",
        "--population",
        "6",
        "--generations",
        "1",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("no chain of 2 to 3 modules performs abs(heading)>=1000"),
        "{}",
        stdout(&o)
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("minimal.json")).unwrap()).unwrap();
    let tried: Vec<&str> = doc["tried"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["robot"].as_str().unwrap())
        .collect();
    assert_eq!(tried, ["py:2", "pyp"]);
    assert!(doc["minimal"].is_null());
    assert!(out.join("pyp").join("abs_heading").join("best.yaml").exists());
    // --require without --minimal, a malformed requirement and the maze as a gait are refused.
    assert_refused(&[
        (vec!["search", "--require", "abs(roll)>=180"], "--minimal"),
        (
            vec!["search", "--minimal", "py", "--require", "abs(roll)=180"],
            "OBJECTIVE>=VALUE",
        ),
        (
            vec!["search", "--minimal", "py", "--require", "roll>=x"],
            "not a number",
        ),
        (vec!["search", "--minimal", "py", "--require", "maze>=0"], "not a gait"),
    ]);
}

/// `modbot organism map`: the scorpion's modules find the seed's types and their roles by
/// handshakes alone; a V's centre is 1026; too many modules or a robot of other modules
/// are refused naming why.
#[test]
fn organism_map_prints_types_and_roles() {
    let o = modbot(&["organism", "map", "scorpion", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let types: Vec<u64> = doc["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["type"].as_u64().unwrap())
        .collect();
    assert_eq!(types, [2, 10, 73, 9, 2, 11, 2]);
    assert_eq!(doc["modules"][6]["role"], "scorpion outer tail");
    let o = modbot(&["organism", "map", "v:5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("1026") && stdout(&o).contains("V centre"),
        "{}",
        stdout(&o)
    );
    // The issue's spelling, `--organism X`, is the same organism; none at all is refused.
    let o = modbot(&["organism", "map", "--organism", "v:5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("V centre"), "{}", stdout(&o));
    assert_refused(&[(&["organism", "map"][..], "ORGANISM")]);
    // A robot file of 17 cube modules is refused naming the limit, like `caterpillar:17`.
    let mut text = String::from("name: long\nmodules:\n");
    for i in 1..=17 {
        text += &format!("  - {{name: m{i}, kind: cube}}\n");
    }
    text += "connections:\n";
    for i in 1..17 {
        text += &format!("  - {{from: m{i}.B, to: m{}.F}}\n", i + 1);
    }
    let file = scratch("long_organism.yaml");
    std::fs::write(&file, text).unwrap();
    let o = modbot(&["organism", "map", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("16"), "{}", stderr(&o));
    let o = modbot(&["organism", "file", "caterpillar:6", "--pitched"]);
    assert!(
        stdout(&o).contains("kind: cube") && stdout(&o).contains("roll_deg: 90"),
        "{}",
        stdout(&o)
    );
    let pp = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../config/robots/pp_8.yaml");
    assert_refused(&[
        (vec!["organism", "map", "caterpillar:17"], "at most 16"),
        (vec!["organism", "map", pp.to_str().unwrap()], "cube"),
        (vec!["organism", "map", "scorpion", "--level", "0"], "--level"),
        (
            vec!["organism", "run", "caterpillar:4", "--ir-threshold", "1,2,3"],
            "four numbers B,F,R,L",
        ),
        (
            vec!["organism", "run", "caterpillar:4", "--ir-threshold", "1,2,3,200"],
            "side L: 200",
        ),
        (
            vec!["organism", "run", "caterpillar:4", "--ir-threshold", "nan,2,3,4"],
            "side B: NaN",
        ),
    ]);
}

/// `modbot organism run` for each of the issue's organisms and in a world: v:5, the scorpion
/// with and without its tail, a caterpillar with a pitched module, a caterpillar in
/// worlds/hormone_wall.yaml. Each prints its speed and writes a summary naming the organism,
/// its world and each module's role; the scorpion is faster without its tail (seed §9.1).
#[test]
fn organism_run_runs_every_organism() {
    let wall = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../worlds/hormone_wall.yaml");
    let wall = wall.to_str().unwrap();
    let runs: [(&[&str], &str, usize, &str, &str); 5] = [
        (&["v:5"], "v_5", 5, "V centre", "flat"),
        (&["scorpion"], "scorpion", 7, "scorpion outer tail", "flat"),
        (
            &["--organism", "scorpion", "--no-tail"],
            "scorpion_no_tail",
            5,
            "scorpion head",
            "flat",
        ),
        (
            &["caterpillar:6", "--pitched"],
            "caterpillar_6_pitched",
            6,
            "pitched",
            "flat",
        ),
        (
            &["caterpillar:6", "--world", wall],
            "caterpillar_6",
            6,
            "caterpillar middle",
            "hormone_wall",
        ),
    ];
    let mut speeds = Vec::new();
    for (k, (args, name, modules, role, world)) in runs.into_iter().enumerate() {
        let out = scratch(&format!("organism_run_{k}"));
        let mut all = vec!["organism", "run"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--seconds", "8", "--force", "--out", out.to_str().unwrap()]);
        let o = modbot(&all);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).contains(&format!("{name}: ")), "{args:?}: {}", stdout(&o));
        assert!(stdout(&o).contains("cm/s"), "{args:?}: {}", stdout(&o));
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        assert_eq!(doc["organism"], name, "{args:?}");
        assert_eq!(doc["world"], world, "{args:?}");
        let m = doc["modules"].as_array().unwrap();
        assert_eq!(m.len(), modules, "{args:?}: {m:?}");
        assert!(m.iter().any(|m| m["role"] == role), "{args:?}: no {role}: {m:?}");
        speeds.push(doc["speed_cm_s"].as_f64().unwrap());
        assert!(out.join("plot.png").is_file(), "{args:?}");
        if world != "flat" {
            let c = doc["closest_approach_cm"].as_f64().unwrap_or(f64::NAN);
            assert!(c > 10.0, "the closest approach to the wall: {c} cm");
        }
    }
    assert!(speeds.iter().all(|v| v.is_finite()), "{speeds:?}");
    assert!(
        speeds[2] > speeds[1],
        "scorpion without its tail {} vs with {}",
        speeds[2],
        speeds[1]
    );
}

/// `modbot organism run --cut`: the run folder's summary lists the parts after the cut, each
/// mapped as a caterpillar, with their speeds, and the run's status; the replay page holds
/// every tick of the whole run once (the segments before and after the cut joined); a bad
/// fault is refused with exit code 2.
#[test]
fn organism_run_with_a_cut_reports_the_parts() {
    let out = scratch("organism_cut");
    let o = modbot(&[
        "organism",
        "run",
        "caterpillar:6",
        "--seconds",
        "12",
        "--cut",
        "6:m3-m4",
        "--quiet",
        "--force",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("part 2:"), "{}", stdout(&o));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let parts = doc["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 2);
    for p in parts {
        assert_eq!(p["modules"].as_array().unwrap().len(), 3);
        assert!(p["speed_cm_s"].as_f64().unwrap().is_finite());
    }
    assert_eq!(doc["faults"][0]["cut"][1], "m4");
    assert!(doc["status"].is_string() && doc["notes"].is_array(), "{doc}");
    assert!(stdout(&o).contains("status: "), "{}", stdout(&o));
    let page = std::fs::read_to_string(out.join("replay.html")).unwrap();
    let start = page.find("id=\"replay-data\">").unwrap();
    let data = &page[start..];
    let json = &data[data.find('{').unwrap()..data.find("</script>").unwrap()];
    let data: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    let t: Vec<f64> = data["t"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert!(t.windows(2).all(|w| w[0] < w[1]), "frame times increase");
    // 12 s at the 100 Hz control rate: every tick, the first sample included.
    assert_eq!(t.len(), 1201);
    assert_eq!(
        data["links"].as_array().unwrap().len() * 7,
        data["frames"][0].as_array().unwrap().len()
    );
    // Off a terminal, without --quiet: a progress line at every tenth of the run, once each.
    let o = modbot(&[
        "organism",
        "run",
        "caterpillar:6",
        "--seconds",
        "12",
        "--force",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<String> = stderr(&o)
        .lines()
        .filter(|l| l.starts_with("sim "))
        .map(String::from)
        .collect();
    assert_eq!(lines.len(), 10, "{}", stderr(&o));
    assert!(lines.last().unwrap().starts_with("sim 12.0/12.0 s"), "{lines:?}");
    let o = modbot(&[
        "organism",
        "run",
        "caterpillar:6",
        "--seconds",
        "12",
        "--remove",
        "7:m3",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("whole number"), "{}", stderr(&o));
}

/// `modbot export launch`: the V's launch file starts sim_node and one module_node per module,
/// each connector's `in` wired to the `out` of the module joined there (the centre's L to
/// left1's F, its B to right1's F); open connectors are not wired. Bad organisms are refused.
#[test]
fn export_launch_wires_each_connector_to_its_neighbour() {
    let o = modbot(&["export", "launch", "v:5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap();
    let items = doc["launch"].as_sequence().unwrap();
    let nodes: Vec<&serde_yaml_ng::Value> = items
        .iter()
        .filter_map(|i| i.get("group"))
        .flat_map(|g| g.as_sequence().unwrap())
        .filter_map(|i| i.get("node"))
        .collect();
    assert_eq!(nodes.len(), 6, "sim_node and 5 module_nodes");
    assert_eq!(nodes[0]["exec"], "sim_node");
    let remaps = |ns: &str| -> Vec<(String, String)> {
        let n = nodes.iter().find(|n| n["namespace"] == ns).unwrap();
        n.get("remap")
            .and_then(|r| r.as_sequence())
            .map(|r| {
                r.iter()
                    .map(|m| (m["from"].as_str().unwrap().into(), m["to"].as_str().unwrap().into()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let centre = remaps("centre");
    assert_eq!(centre.len(), 2, "{centre:?}");
    assert!(
        centre.contains(&("in/L".into(), "/$(var namespace)/left1/out/F".into())),
        "{centre:?}"
    );
    assert!(
        centre.contains(&("in/B".into(), "/$(var namespace)/right1/out/F".into())),
        "{centre:?}"
    );
    assert_eq!(
        remaps("left2"),
        vec![("in/F".to_string(), "/$(var namespace)/left1/out/B".to_string())]
    );
    assert_refused(&[
        (vec!["export", "launch", "v:4"], "odd number"),
        (vec!["export", "launch", "caterpillar:20"], "at most 16"),
        (vec!["export", "launch", "scorpion", "--pitched"], "--pitched"),
    ]);
}

/// Issue 20: completions for bash, zsh and fish from the same parser; bash's script parses.
#[test]
fn completions_are_printed_for_bash_zsh_and_fish() {
    let o = modbot(&["completions", "bash"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bash = stdout(&o);
    for word in ["_modbot", "complete", "run", "sweep", "--robot", "--gait"] {
        assert!(bash.contains(word), "bash completion lacks {word}");
    }
    let script = scratch("modbot.bash");
    std::fs::write(&script, &bash).unwrap();
    let check = Command::new("bash").arg("-n").arg(&script).output().expect("bash");
    assert!(check.status.success(), "{}", stderr(&check));
    let zsh = stdout(&modbot(&["completions", "zsh"]));
    assert!(zsh.starts_with("#compdef modbot"), "{zsh}");
    let fish = stdout(&modbot(&["completions", "fish"]));
    assert!(fish.contains("complete -c modbot"), "{fish}");
    let o = modbot(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("tcsh"), "{}", stderr(&o));
}

/// Issue 20: an installed command (`cargo install --path packages/modbot`) needs nothing of
/// the repository: the catalog, the gait file and the shipped mazes are compiled in, and the
/// run folder is made where it runs.
#[test]
fn the_command_runs_outside_the_repository() {
    let dir = std::env::temp_dir().join(format!("modbot-outside-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_modbot"))
            .args(args)
            .current_dir(&dir)
            .output()
            .expect("run modbot")
    };
    let o = run(&["run", "--cycles", "1", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.join("runs/pp_8_caterpillar/summary.json").exists());
    let o = run(&["gaits"]);
    assert!(
        o.status.success() && stdout(&o).contains("caterpillar"),
        "{}",
        stderr(&o)
    );
    let o = run(&[
        "maze",
        "--robot",
        "py:8",
        "--gait",
        "sidewinding",
        "--maze",
        "maze_sls",
        "--max-time",
        "2",
        "--enter-within",
        "1",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 19: `modbot node --help` lists every node, and `modbot node EXEC --help` (or `-h`,
/// before `--ros-args`) prints the node's name, a line on what it does and every parameter
/// its config declares (name, type, description), exits 0 and opens no DDS participant.
/// After `--ros-args`, `--help` is a ROS argument like any other and is refused.
#[cfg(feature = "ros")]
#[test]
fn every_node_prints_its_help_and_exits_0() {
    let list = modbot(&["node", "--help"]);
    assert!(list.status.success(), "{}", stderr(&list));
    for exec in modbot_ros::NODES {
        assert!(stdout(&list).contains(exec), "{exec} not listed:\n{}", stdout(&list));
    }
    for exec in modbot_ros::NODES {
        let decls = modbot_ros::node_declarations(exec).expect("declarations");
        assert!(!decls.is_empty(), "{exec} declares no parameters");
        for args in [
            vec!["node", exec, "--help"],
            vec!["node", exec, "-h"],
            vec!["node", exec, "--help", "--ros-args", "-p", "no_such:=1"],
        ] {
            let o = modbot(&args);
            assert!(o.status.success(), "{args:?}: {}", stderr(&o));
            let text = stdout(&o);
            assert!(text.starts_with(&format!("{exec}: ")), "{args:?}:\n{text}");
            for d in &decls {
                let row = text
                    .lines()
                    .find(|l| l.split_whitespace().next() == Some(d.name))
                    .unwrap_or_else(|| panic!("{exec}: no row for `{}`:\n{text}", d.name));
                assert!(row.contains(d.default.type_name()), "{row}");
                assert!(row.contains(d.description), "{row}");
            }
            assert!(text.contains("use_sim_time"), "{text}");
        }
    }
    let o = modbot(&["node", "gait_node", "--ros-args", "--help"]);
    assert!(!o.status.success(), "--help after --ros-args: {}", stdout(&o));
    assert!(stderr(&o).contains("--help"), "{}", stderr(&o));
    let o = modbot(&["node", "no_such_node", "--help"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("no node `no_such_node`"), "{}", stderr(&o));
}

/// `modbot mission` runs the strategic mission of the shipped world to the target and
/// writes its run folder: summary.json with every phase in the source's order, each module's
/// trajectory, the storyboard; a world without module starts and a layout seed on it are
/// refused.
#[test]
fn mission_reaches_the_target_and_writes_its_run_folder() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-mission");
    let _ = std::fs::remove_dir_all(&dir);
    let world = repo().join("worlds/strategic_mission.yaml");
    let o = modbot(&["mission", world.to_str().unwrap(), "--out", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("reached the target"), "{}", stdout(&o));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["reached"], true);
    assert!(summary["final_distance_m"].as_f64().unwrap() <= 0.1);
    let phases: Vec<&str> = summary["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["phase"].as_str().unwrap())
        .collect();
    assert_eq!(phases.first(), Some(&"friction"));
    assert_eq!(phases.last(), Some(&"row 6: wheeled drive to target"));
    assert_eq!(summary["plan"].as_array().unwrap().len(), 6);
    let csv = std::fs::read_to_string(dir.join("trajectories.csv")).unwrap();
    for m in 1..=6 {
        assert!(csv.lines().any(|l| l.starts_with(&format!("{m},"))), "module {m}");
    }
    assert!(std::fs::metadata(dir.join("storyboard.png")).unwrap().len() > 10_000);
    // The docks as Gazebo is to make them (record 0051): every attach a `gz service` call
    // adding a DetachableJoint to the partner's model, every detach a bridged ROS topic.
    let gz: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("gazebo_docks.json")).unwrap()).unwrap();
    let docks = gz["docks"].as_array().unwrap();
    assert_eq!(docks.len(), summary["docks"].as_array().unwrap().len());
    let count = |a: &str| docks.iter().filter(|d| d["action"] == a).count();
    assert_eq!((count("attach"), count("detach")), (9, 4), "{docks:?}");
    for d in docks {
        assert!(d.get("error").is_none(), "{d}");
        if d["action"] == "attach" {
            let argv = d["gz_service_command"].as_array().unwrap();
            assert_eq!(argv[3], "/world/strategic_mission/entity/system/add");
            assert!(d["plugin"].as_str().unwrap().contains("<child_model>module_"), "{d}");
        } else {
            assert!(d["ros_topic"].as_str().unwrap().starts_with("dock/role"), "{d}");
        }
    }
    // `modbot export gz-dock` gives one dock; a port the module has not is refused by name.
    let gz_dock = |parent_port: &str| {
        modbot(&[
            "export",
            "gz-dock",
            "--parent-model",
            "module_1",
            "--parent-port",
            parent_port,
            "--child-model",
            "module_4",
            "--child-port",
            "F",
        ])
    };
    let o = gz_dock("L");
    assert!(o.status.success(), "{}", stderr(&o));
    let d: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        (d["parent_link"].as_str(), d["child_link"].as_str()),
        (Some("m1_body"), Some("m1_wheel"))
    );
    let o = gz_dock("Q");
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--parent-port") && stderr(&o).contains("`Q`"),
        "{}",
        stderr(&o)
    );
    // A world of one robot start has no fleet.
    let flat = repo().join("worlds/flat.yaml");
    let o = modbot(&[
        "mission",
        flat.to_str().unwrap(),
        "--out",
        dir.join("flat").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("robot_starts"), "{}", stderr(&o));
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `modbot control` over pipes as an outside simulator drives it: the header, one answer per
/// state line; a bad line is refused naming the field (exit 2) after the good ones were
/// answered, and a refused gait or robot never prints the header.
#[test]
fn control_answers_state_lines_and_refuses_bad_ones() {
    use std::io::Write;
    let spawn = |args: &[&str], input: String| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_modbot"))
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run modbot control");
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    };
    // pp:2 (two position joints): a line is t, pose (7), 2 positions, 2 velocities.
    let good = "0 0 0 0 1 0 0 0 0 0 0 0\n0.01 0 0 0 1 0 0 0 0 0 0 0\n";
    let o = spawn(&["control", "caterpillar", "--robot", "pp:2"], good.to_string());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0], "modbot-control 1 2 joint_1:position joint_2:position",
        "{out}"
    );
    assert_eq!(lines.len(), 3, "{out}");
    for l in &lines[1..] {
        let words: Vec<f64> = l.split(' ').map(|w| w.parse().unwrap()).collect();
        assert_eq!(words.len(), 3, "{l}");
        assert!(words.iter().all(|w| w.is_finite()), "{l}");
    }
    let o = spawn(
        &["control", "caterpillar", "--robot", "pp:2"],
        format!("{good}0.02 0 0 0 1 0 0 0 0 inf 0 0\n"),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("line 3: the position of `joint_2` is inf"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stdout(&o).lines().count(), 3, "the good lines were answered");
    assert_refused(&[
        (vec!["control", "gallop", "--robot", "quadruped"], "no gait `gallop`"),
        (vec!["control", "trot", "--robot", "quadruped", "--rate", "0"], "--rate"),
        (vec!["control", "trot", "--robot", "hexapod"], "hexapod"),
    ]);
}
