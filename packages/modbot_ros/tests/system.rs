//! System tests: gait_node and sim_node as separate processes on a private loopback network,
//! observed by a probe node in the test process. Each test re-runs itself inside its own
//! network namespace, so DDS discovery never leaves the machine.

mod common;

use std::time::Duration;

use common::*;
use modbot_msgs::modbot_msgs::msg::{GaitCommand, GaitState};
use modbot_msgs::nav_msgs::msg::Odometry;
use modbot_msgs::sensor_msgs::msg::JointState;
use modbot_msgs::std_msgs::msg::{Float64MultiArray, MultiArrayLayout, String as StringMsg};
use modbot_msgs::tf2_msgs::msg::TFMessage;
use modbot_ros::params::NodeConfig;
use modbot_ros::{Pub, Qos, Sub, Transport};

/// (sim time, x, y) of every odometry sample received within `wall`.
fn collect_odom(sub: &impl Sub<Odometry>, until_sim_s: f64, wall: Duration) -> Vec<(f64, f64, f64)> {
    let mut out = Vec::new();
    wait_for(wall, || {
        while let Some(Ok(o)) = sub.take() {
            let p = &o.pose.pose.position;
            out.push((o.header.stamp.as_secs_f64(), p.x, p.y));
        }
        out.last().filter(|l| l.0 >= until_sim_s).map(|_| ())
    });
    out
}

fn at(samples: &[(f64, f64, f64)], t: f64) -> (f64, f64, f64) {
    *samples
        .iter()
        .min_by(|a, b| (a.0 - t).abs().total_cmp(&(b.0 - t).abs()))
        .expect("odometry samples")
}

#[test]
fn the_robot_walks_and_odom_matches_the_embedded_measurement() {
    if reexec_in_netns("the_robot_walks_and_odom_matches_the_embedded_measurement") {
        return;
    }
    for b in backends() {
        println!("== the_robot_walks_and_odom_matches_the_embedded_measurement on {b}");
        the_robot_walks_and_odom_matches_the_embedded_measurement_on(b, b);
    }
}

fn the_robot_walks_and_odom_matches_the_embedded_measurement_on(backend: &str, sim_backend: &str) {
    // What the embedded simulator measures for the default gait, in this process.
    let cfg = modbot_ros::nodes::sim::SimNodeConfig::from_params(&modbot_ros::params::defaults::<
        modbot_ros::nodes::sim::SimNodeConfig,
    >())
    .expect("defaults");
    let mut core = modbot_ros::nodes::sim::SimCore::new(&cfg).expect("sim");
    let gait = modbot_gaits::GaitLibrary::builtin();
    let spec: modbot_core::RobotSpec = "pp:8".parse().expect("spec");
    let catalog = modbot_core::ModuleCatalog::builtin();
    let topo = modbot_core::Topology::from_spec(&spec, &catalog).expect("topology");
    let built = gait.build("caterpillar", &topo, &[]).expect("gait");
    let period = built.generator.period_s;
    let out = modbot_sim::run_gait(
        &mut core.session.sim,
        Box::new(built.generator.clone()),
        gait.transition,
        topo.max_speeds_rad_s(),
        modbot_sim::RunPlan {
            warmup_cycles: 3,
            cycles: 4,
            control_rate_hz: 100.0,
            ..Default::default()
        },
        0.0,
        &mut |_, _| {},
    )
    .expect("embedded run");
    let embedded = out.report.speed_m_s;
    assert!(embedded > 0.01, "the embedded caterpillar should walk, {embedded} m/s");

    let ns = ["--ros-args", "-r", "__ns:=/walker", "-p", "robot:=pp:8"];
    let _sim = NodeProc::spawn_on(sim_backend, sim_node(), &ns);
    let _gait = NodeProc::spawn_on(backend, gait_node(), &[&ns[..], &["-p", "gait:=caterpillar"]].concat());
    let mut probe = probe("walk_probe");
    let odom = probe
        .subscription::<Odometry>("/walker/odom", Qos::SensorData)
        .expect("odom");
    let js = probe
        .subscription::<JointState>("/walker/joint_states", Qos::SensorData)
        .expect("js");
    let cmds = probe
        .subscription::<Float64MultiArray>("/walker/position_controller/commands", Qos::Reliable)
        .expect("cmds");
    let state = probe
        .subscription::<GaitState>("/walker/gait/state", Qos::Reliable)
        .expect("state");
    let tf = probe
        .subscription::<TFMessage>("/walker/tf", Qos::Reliable)
        .expect("tf");
    let desc = probe
        .subscription::<StringMsg>("/walker/robot_description", Qos::Latched)
        .expect("desc");

    // Ramp (2 s) and three cycles of warm-up, then four measured cycles, in sim time.
    let t0 = 2.0 + 3.0 * period;
    let t1 = t0 + 4.0 * period;
    let samples = collect_odom(&odom, t1, Duration::from_secs_f64(t1 * 3.0 + 20.0));
    assert!(
        samples.last().is_some_and(|l| l.0 >= t1),
        "odometry stopped at {:?}",
        samples.last()
    );
    let (ta, xa, ya) = at(&samples, t0);
    let (tb, xb, yb) = at(&samples, t1);
    let speed = (xb - xa) / (tb - ta);
    println!(
        "odom: {:.2} cm/s along x ({:.2} cm/s across) vs embedded {:.2} cm/s",
        speed * 100.0,
        (yb - ya) / (tb - ta) * 100.0,
        embedded * 100.0
    );
    // The two runs differ in the gait's phase against the physics clock (separate
    // processes) and in base_link vs CoM; over whole cycles they agree within 25 %.
    assert!(
        (speed - embedded).abs() <= 0.25 * embedded,
        "odom speed {speed} m/s vs embedded {embedded} m/s"
    );

    let j = js
        .take()
        .and_then(Result::ok)
        .or_else(|| wait_for(Duration::from_secs(5), || js.take().and_then(Result::ok)))
        .expect("joint_states");
    assert_eq!(j.name, (1..=8).map(|i| format!("joint_{i}")).collect::<Vec<_>>());
    assert_eq!(j.position.len(), 8);
    let c = wait_for(Duration::from_secs(5), || cmds.take().and_then(Result::ok)).expect("commands");
    assert_eq!(c.data.len(), 8);
    assert!(c.data.iter().all(|x| x.is_finite() && x.abs() < 1.6));
    let s = wait_for(Duration::from_secs(5), || state.take().and_then(Result::ok)).expect("gait/state");
    assert_eq!(s.gait, "caterpillar");
    assert!(!s.holding);
    assert!((s.period - period).abs() < 1e-9);
    let t = wait_for(Duration::from_secs(5), || tf.take().and_then(Result::ok)).expect("tf");
    assert_eq!(t.transforms[0].header.frame_id, "odom");
    assert!(t.transforms.iter().any(|x| x.child_frame_id == "module_8_front"));
    let d = wait_for(Duration::from_secs(5), || desc.take().and_then(Result::ok)).expect("latched robot_description");
    assert!(d.data.contains("<robot") && d.data.contains("joint_8"));
}

/// Wire compatibility between the backends: gait_node on one, sim_node on the other.
#[cfg(feature = "r2r")]
#[test]
fn mixed_graph_r2r_and_ros2_client_drive_each_other() {
    if reexec_in_netns("mixed_graph_r2r_and_ros2_client_drive_each_other") {
        return;
    }
    println!("== gait_node on r2r, sim_node on dds");
    the_robot_walks_and_odom_matches_the_embedded_measurement_on("r2r", "dds");
    println!("== gait_node on dds, sim_node on r2r");
    the_robot_walks_and_odom_matches_the_embedded_measurement_on("dds", "r2r");
}

#[test]
fn two_namespaced_robots_do_not_cross_talk() {
    if reexec_in_netns("two_namespaced_robots_do_not_cross_talk") {
        return;
    }
    for b in backends() {
        println!("== two_namespaced_robots_do_not_cross_talk on {b}");
        two_namespaced_robots_do_not_cross_talk_on(b, b);
    }
}

fn two_namespaced_robots_do_not_cross_talk_on(backend: &str, sim_backend: &str) {
    let s1 = NodeProc::spawn_on(
        sim_backend,
        sim_node(),
        &["--ros-args", "-r", "__ns:=/snake1", "-p", "robot:=pp:8"],
    );
    let _g1 = NodeProc::spawn_on(
        backend,
        gait_node(),
        &["--ros-args", "-r", "__ns:=/snake1", "-p", "robot:=pp:8"],
    );
    let s2 = NodeProc::spawn_on(
        sim_backend,
        sim_node(),
        &["--ros-args", "-r", "__ns:=/snake2", "-p", "robot:=py:16"],
    );
    let _g2 = NodeProc::spawn_on(
        backend,
        gait_node(),
        &[
            "--ros-args",
            "-r",
            "__ns:=/snake2",
            "-p",
            "robot:=py:16",
            "-p",
            "gait:=sidewinding",
        ],
    );
    let mut probe = probe("ns_probe");
    let js1 = probe
        .subscription::<JointState>("/snake1/joint_states", Qos::SensorData)
        .expect("js1");
    let js2 = probe
        .subscription::<JointState>("/snake2/joint_states", Qos::SensorData)
        .expect("js2");
    let c1 = probe
        .subscription::<Float64MultiArray>("/snake1/position_controller/commands", Qos::Reliable)
        .expect("c1");
    let c2 = probe
        .subscription::<Float64MultiArray>("/snake2/position_controller/commands", Qos::Reliable)
        .expect("c2");
    let mut seen = [0usize; 4];
    wait_for(Duration::from_secs(20), || {
        while let Some(m) = js1.take() {
            assert_eq!(m.expect("decodes").name.len(), 8);
            seen[0] += 1;
        }
        while let Some(m) = js2.take() {
            assert_eq!(m.expect("decodes").name.len(), 16);
            seen[1] += 1;
        }
        while let Some(m) = c1.take() {
            assert_eq!(m.expect("decodes").data.len(), 8);
            seen[2] += 1;
        }
        while let Some(m) = c2.take() {
            assert_eq!(m.expect("decodes").data.len(), 16);
            seen[3] += 1;
        }
        seen.iter().all(|&n| n >= 50).then_some(())
    })
    .unwrap_or_else(|| panic!("messages per topic: {seen:?}"));
    // A cross-wired command would have the other robot's joint count: each sim drops it.
    for s in [&s1, &s2] {
        assert!(!s.log().contains("command dropped"), "{}", s.log());
    }
}

// Garbage on the wire for any reader of the real types.
impostor!(Garbage, "std_msgs", "Float64MultiArray");
impostor!(GarbageCommand, "modbot_msgs", "GaitCommand");

#[test]
fn garbage_is_logged_and_refused_and_the_nodes_stay_alive() {
    if reexec_in_netns("garbage_is_logged_and_refused_and_the_nodes_stay_alive") {
        return;
    }
    for b in backends() {
        println!("== garbage_is_logged_and_refused_and_the_nodes_stay_alive on {b}");
        garbage_is_logged_and_refused_and_the_nodes_stay_alive_on(b, b);
    }
}

fn garbage_is_logged_and_refused_and_the_nodes_stay_alive_on(backend: &str, sim_backend: &str) {
    // The sim listens on its own topic; the gait_node's commands go elsewhere (remap), so
    // the probe is the only writer of the sim's commands.
    let mut sim = NodeProc::spawn_on(
        sim_backend,
        sim_node(),
        &["--ros-args", "-r", "__ns:=/g", "-p", "robot:=pp:8"],
    );
    let mut gait = NodeProc::spawn_on(
        backend,
        gait_node(),
        &[
            "--ros-args",
            "-r",
            "__ns:=/g",
            "-r",
            "position_controller/commands:=/elsewhere/commands",
            "-p",
            "robot:=pp:8",
        ],
    );
    let mut probe = probe("garbage_probe");
    let cmd = probe
        .publisher::<Float64MultiArray>("/g/position_controller/commands", Qos::Reliable)
        .expect("pub");
    let raw = probe
        .publisher::<Garbage>("/g/position_controller/commands", Qos::Reliable)
        .expect("pub");
    let gcmd = probe
        .publisher::<GaitCommand>("/g/gait/command", Qos::Reliable)
        .expect("pub");
    let graw = probe
        .publisher::<GarbageCommand>("/g/gait/command", Qos::Reliable)
        .expect("pub");
    let js = probe
        .subscription::<JointState>("/g/joint_states", Qos::SensorData)
        .expect("js");
    let state = probe
        .subscription::<GaitState>("/g/gait/state", Qos::Reliable)
        .expect("state");
    let moved = probe
        .subscription::<Float64MultiArray>("/elsewhere/commands", Qos::Reliable)
        .expect("remapped");
    wait_for(Duration::from_secs(15), || js.take().and_then(Result::ok)).expect("sim_node up");
    wait_for(Duration::from_secs(15), || moved.take().and_then(Result::ok)).expect("gait_node's remapped output");
    std::thread::sleep(Duration::from_millis(500)); // let the writers match

    let layout = MultiArrayLayout::default();
    for _ in 0..3 {
        cmd.publish(Float64MultiArray {
            layout: layout.clone(),
            data: vec![0.2; 5],
        })
        .expect("send");
        cmd.publish(Float64MultiArray {
            layout: layout.clone(),
            data: vec![f64::NAN; 8],
        })
        .expect("send");
        raw.publish(Garbage { word: 0xdead_beef }).expect("send");
        gcmd.publish(GaitCommand {
            gait: "moonwalk".into(),
            ..Default::default()
        })
        .expect("send");
        gcmd.publish(GaitCommand {
            gait: "caterpillar".into(),
            param_names: vec!["A".into()],
            param_values: vec![f64::NAN],
            ..Default::default()
        })
        .expect("send");
        graw.publish(GarbageCommand { word: 7 }).expect("send");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Then good input still works: the sim follows a valid pose, the gait changes.
    let pose = vec![0.4; 8];
    let reached = wait_for(Duration::from_secs(15), || {
        cmd.publish(Float64MultiArray {
            layout: layout.clone(),
            data: pose.clone(),
        })
        .ok()?;
        let mut last = None;
        while let Some(Ok(j)) = js.take() {
            last = Some(j);
        }
        last.filter(|j| j.position.iter().all(|q| (q - 0.4).abs() < 0.15))
    });
    assert!(
        reached.is_some(),
        "sim_node did not follow a valid command after garbage"
    );
    gcmd.publish(GaitCommand {
        gait: "caterpillar".into(),
        param_names: vec!["A".into()],
        param_values: vec![20.0],
        ..Default::default()
    })
    .expect("send");
    let s = wait_for(Duration::from_secs(10), || {
        state.take().and_then(Result::ok).filter(|s| {
            s.param_values
                .iter()
                .zip(&s.param_names)
                .any(|(v, n)| n == "amplitude_deg" && (*v - 20.0).abs() < 1e-9)
        })
    });
    assert!(s.is_some(), "gait_node did not take a valid command after garbage");
    assert!(sim.alive(), "sim_node died:\n{}", sim.log());
    assert!(gait.alive(), "gait_node died:\n{}", gait.log());
    let (sl, gl) = (sim.log(), gait.log());
    println!("sim_node:\n{sl}\ngait_node:\n{gl}");
    assert!(sl.contains("command dropped") && sl.contains("expected 8"), "{sl}");
    assert!(sl.contains("is not finite") || sl.contains("NaN"), "{sl}");
    assert!(gl.contains("moonwalk"), "{gl}");
    assert!(gl.contains("refused"), "{gl}");
}

#[test]
fn the_watchdog_holds_the_pose_when_commands_stop() {
    if reexec_in_netns("the_watchdog_holds_the_pose_when_commands_stop") {
        return;
    }
    for b in backends() {
        println!("== the_watchdog_holds_the_pose_when_commands_stop on {b}");
        the_watchdog_holds_the_pose_when_commands_stop_on(b, b);
    }
}

fn the_watchdog_holds_the_pose_when_commands_stop_on(backend: &str, _sim_backend: &str) {
    let gait = NodeProc::spawn_on(
        backend,
        gait_node(),
        &[
            "--ros-args",
            "-r",
            "__ns:=/wd",
            "-p",
            "watchdog_s:=0.5",
            "-p",
            "state_rate_hz:=50",
        ],
    );
    let mut probe = probe("watchdog_probe");
    let state = probe
        .subscription::<GaitState>("/wd/gait/state", Qos::Reliable)
        .expect("state");
    let cmd = probe
        .publisher::<GaitCommand>("/wd/gait/command", Qos::Reliable)
        .expect("cmd");
    let holding = |want: bool, secs: u64| {
        wait_for(Duration::from_secs(secs), || {
            state.take().and_then(Result::ok).filter(|s| s.holding == want)
        })
    };
    // No command since start: after 0.5 s the node holds.
    assert!(holding(true, 15).is_some(), "watchdog never fired:\n{}", gait.log());
    // A command restarts the gait...
    let restarted = wait_for(Duration::from_secs(10), || {
        cmd.publish(GaitCommand {
            gait: "caterpillar".into(),
            ..Default::default()
        })
        .ok()?;
        std::thread::sleep(Duration::from_millis(100));
        let mut last = None;
        while let Some(Ok(s)) = state.take() {
            last = Some(s);
        }
        last.filter(|s| !s.holding)
    });
    assert!(
        restarted.is_some(),
        "a command did not restart the gait:\n{}",
        gait.log()
    );
    // ...and silence stops it again.
    let t = std::time::Instant::now();
    assert!(holding(true, 10).is_some(), "watchdog did not fire again");
    assert!(
        t.elapsed() >= Duration::from_millis(300),
        "held too early: {:?}",
        t.elapsed()
    );
    assert!(gait.log().contains("holding the pose"), "{}", gait.log());
}

#[test]
fn bad_parameters_at_start_are_named_and_the_node_exits() {
    // No DDS traffic: the node refuses before joining the graph.
    let out = std::process::Command::new(gait_node())
        .args(["--ros-args", "-p", "gait:=moonwalk"])
        .output()
        .expect("run gait_node");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("moonwalk"), "{err}");
    let dir = std::env::temp_dir().join(format!("modbot-params-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp");
    let f = dir.join("bad.yaml");
    std::fs::write(&f, "sim_node:\n  ros__parameters:\n    step_ms: fast\n").expect("write");
    let out = std::process::Command::new(sim_node())
        .args(["--ros-args", "--params-file", f.to_str().expect("utf-8")])
        .output()
        .expect("run sim_node");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("step_ms"), "{err}");
    let out = std::process::Command::new(sim_node())
        .args(["--ros-args", "-r", "oops"])
        .output()
        .expect("run");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("oops"));
}

/// Ctrl-C ends a node's loop, not its process: sim_node closes its recording whole (the MCAP
/// summary written) and exits 0, so `modbot node sim_node -p record:=…` stopped by hand
/// leaves a file every reader opens.
#[test]
fn sim_node_closes_its_recording_on_ctrl_c() {
    if reexec_in_netns("sim_node_closes_its_recording_on_ctrl_c") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("modbot-sigint-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("sim.mcap");
    let record = format!("record:={}", path.display());
    let mut sim = NodeProc::spawn(
        sim_node(),
        &["--ros-args", "-p", "real_time_factor:=4.0", "-p", &record],
    );
    // Two seconds of simulated time.
    let mut t = probe("probe_sigint");
    let js = t
        .subscription::<JointState>("joint_states", Qos::SensorData)
        .expect("joint_states");
    wait_for(Duration::from_secs(60), || {
        let mut last = None;
        while let Some(Ok(j)) = js.take() {
            last = Some(j.header.stamp.sec);
        }
        last.filter(|s| *s >= 2)
    })
    .unwrap_or_else(|| panic!("sim_node runs\n{}", sim.log()));
    let status = sim
        .interrupt(Duration::from_secs(20))
        .unwrap_or_else(|| panic!("sim_node did not stop on SIGINT\n{}", sim.log()));
    assert!(status.success(), "{status}\n{}", sim.log());
    assert!(sim.log().contains("recorded"), "{}", sim.log());
    let bytes = std::fs::read(&path).expect("the recording");
    let summary = mcap::Summary::read(&bytes)
        .expect("a readable summary")
        .expect("the summary section: the file was closed");
    let tf = summary
        .channels
        .values()
        .find(|c| c.topic == "/tf")
        .expect("a /tf channel");
    let stats = summary.stats.expect("statistics");
    let count = stats.channel_message_counts.get(&tf.id).copied().unwrap_or(0);
    assert!(count >= 50, "{count} tf messages");
    let _ = std::fs::remove_dir_all(&dir);
}
