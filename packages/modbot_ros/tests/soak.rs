//! Soak (issue 18): each node, a separate process on a private loopback network, is flooded
//! at 1 kHz with a mix of garbage — wrong lengths, NaN, wrong types on its topics, huge
//! arrays once a second, malformed parameter calls — while a well-formed stream goes on.
//! Measured against the bounds of [`Bounds`]: the node keeps its output rate, follows the
//! good stream (its output switches with the good input's phase), its memory neither grows
//! past a bound nor creeps between the halves of the flood, and its log stays rate-limited.
//!
//! `MODBOT_SOAK_SECONDS` sets the flood's length per node (default 20: CI's short version;
//! the note reports a 600 s run).

mod common;

use std::time::{Duration, Instant};

use common::*;
use modbot_msgs::builtin_interfaces::msg::Time;
use modbot_msgs::geometry_msgs::msg::{Point, Pose, PoseStamped, Quaternion};
use modbot_msgs::modbot_msgs::msg::{
    GaitCommand, GaitState, HormoneFrame, ModuleSensors, ModuleState, StrategicPlan, SubGoal,
};
use modbot_msgs::nav_msgs::msg::{MapMetaData, OccupancyGrid, Odometry, Path};
use modbot_msgs::sensor_msgs::msg::JointState;
use modbot_msgs::std_msgs::msg::{Float64, Float64MultiArray, Header};
use modbot_ros::{Pub, Qos, Sub, Transport};
use ros2_client::parameters::raw::{Parameter, ParameterType, ParameterValue as Raw};
use ros2_client::rcl_interfaces::{SetParametersRequest, SetParametersResponse};

/// One node at a time: a 1 kHz flood is most of a core on a 2-core machine.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The flood's length per node, s (`MODBOT_SOAK_SECONDS`, 5…3600; default 20).
fn soak_seconds() -> f64 {
    match std::env::var("MODBOT_SOAK_SECONDS") {
        Err(_) => 20.0,
        Ok(s) => s
            .parse::<f64>()
            .ok()
            .filter(|v| (5.0..=3600.0).contains(v))
            .unwrap_or_else(|| panic!("MODBOT_SOAK_SECONDS = `{s}`: expected seconds in 5…3600")),
    }
}

/// The bounds a soaked node is held to.
struct Bounds;

impl Bounds {
    /// Garbage per second the probe must actually send (the flood is what it claims).
    const FLOOD_HZ: f64 = 1000.0;
    /// Every 2 s window of the flood carries at least this share of the node's nominal
    /// output rate.
    const RATE_SHARE: f64 = 0.75;
    /// Resident memory may rise at most this much over its level before the flood, MB.
    const RSS_RISE_MB: f64 = 96.0;
    /// Nor may it creep from the first half of the flood to the second by more than this, MB,
    /// while still rising at the end (by more than [`Bounds::RSS_STILL_RISING_MB`] over the
    /// last two windows): a leak keeps growing; the middleware's one-time step when a huge
    /// sample first arrives (record 0036: about 20–30 MB, then flat) does not, and the rise
    /// bound above caps it.
    const RSS_CREEP_MB: f64 = 16.0;
    const RSS_STILL_RISING_MB: f64 = 1.0;
    /// Log lines per second of flood, on average, at most (each kind of refusal logs once
    /// per 5 s, saying how many it suppressed); plus [`Bounds::LOG_SLACK`].
    const LOG_LINES_PER_S: f64 = 2.0;
    const LOG_SLACK: f64 = 20.0;
}

/// A `set_parameters` client of the node under test (rcl_interfaces/srv/SetParameters over
/// ros2-client): counts the answers.
struct ParamClient {
    _node: ros2_client::Node,
    client: ros2_client::Client<SetParametersRequest, SetParametersResponse>,
    accepted: u64,
    refused: u64,
    /// A refusal's reason that did not name its parameter (at most one kept).
    unnamed: Option<String>,
}

impl ParamClient {
    fn new(node_fq: &str) -> ParamClient {
        let ctx = ros2_client::Context::new().expect("DDS context");
        let mut node = ctx
            .new_node(
                ros2_client::NodeName::new("/", "soak_params").expect("name"),
                ros2_client::NodeOptions::new().enable_rosout(false),
            )
            .expect("parameter client node");
        let q = ros2_client::QosProfile::publisher_default();
        let client = node
            .create_client::<SetParametersRequest, SetParametersResponse>(
                ros2_client::ServiceMapping::Enhanced,
                &ros2_client::Name::new(node_fq, "set_parameters").expect("service name"),
                &ros2_client::ServiceTypeName::new("rcl_interfaces", "SetParameters"),
                q.clone(),
                q,
            )
            .expect("set_parameters client");
        ParamClient {
            _node: node,
            client,
            accepted: 0,
            refused: 0,
            unnamed: None,
        }
    }

    fn send(&mut self, name: &str, value: Raw) {
        let _ = self.client.send_request(SetParametersRequest {
            parameter: vec![Parameter {
                name: name.into(),
                value,
            }],
        });
    }

    /// Counts the answers waiting; a refusal must name one of `names`.
    fn drain(&mut self, names: &[&str]) {
        while let Ok(Some((_, r))) = self.client.receive_response() {
            for res in r.results {
                if res.successful {
                    self.accepted += 1;
                } else {
                    self.refused += 1;
                    if !names.iter().any(|n| res.reason.contains(n)) && self.unnamed.is_none() {
                        self.unnamed = Some(res.reason);
                    }
                }
            }
        }
    }
}

fn raw(ptype: u8) -> Raw {
    Raw {
        ptype,
        boolean_value: false,
        int_value: 0,
        double_value: 0.0,
        string_value: String::new(),
        byte_array: vec![],
        bool_array: vec![],
        int_array: vec![],
        double_array: vec![],
        string_array: vec![],
    }
}

fn double(v: f64) -> Raw {
    Raw {
        double_value: v,
        ..raw(ParameterType::DOUBLE)
    }
}

fn string(v: &str) -> Raw {
    Raw {
        string_value: v.into(),
        ..raw(ParameterType::STRING)
    }
}

fn integer(v: i64) -> Raw {
    Raw {
        int_value: v,
        ..raw(ParameterType::INTEGER)
    }
}

/// One node's soak: what to flood it with and how to read its output.
struct Soak<'a> {
    node: NodeProc,
    /// Fully qualified node name (its parameter services hang under it).
    fq: &'static str,
    /// Light garbage, one per millisecond in turn.
    garbage: Vec<Box<dyn FnMut(u64) + 'a>>,
    /// Heavy garbage (megabytes), one per second in turn.
    heavy: Vec<Box<dyn FnMut() + 'a>>,
    /// Refused parameter assignments (name, value), one in ten of the garbage in turn.
    bad_params: Vec<(&'static str, Raw)>,
    /// An assignment the node accepts (its current value), one in ten parameter calls: an
    /// accepted change must not log a line each either.
    good_param: (&'static str, Raw),
    /// The well-formed stream, called at 50 Hz with the phase (0 or 1, switching every 2 s).
    good: Box<dyn FnMut(usize) + 'a>,
    /// Drains the node's output: how many heartbeat messages arrived since the last call.
    observe: Box<dyn FnMut() -> usize + 'a>,
    /// What the node's output says now (compared at the end of each phase).
    signature: Box<dyn FnMut() -> Option<String> + 'a>,
    /// The heartbeat's nominal rate, Hz.
    nominal_hz: f64,
}

/// Phase length of the good stream, s.
const PHASE_S: f64 = 2.0;

struct Measured {
    windows: Vec<usize>,
    sent: u64,
    rss_before_kb: u64,
    rss_peak_kb: u64,
    /// Highest resident memory in each 2 s window, kB.
    rss_windows: Vec<u64>,
    log_lines: usize,
    signatures: Vec<(usize, Option<String>)>,
}

impl Soak<'_> {
    /// Runs the good stream alone for `s` seconds, draining the output.
    fn good_only(&mut self, s: f64, phase0: usize) -> usize {
        let t0 = Instant::now();
        let mut beats = 0;
        let mut next_good = Instant::now();
        while t0.elapsed().as_secs_f64() < s {
            if Instant::now() >= next_good {
                let phase = (phase0 + (t0.elapsed().as_secs_f64() / PHASE_S) as usize) % 2;
                (self.good)(phase);
                next_good += Duration::from_millis(20);
            }
            beats += (self.observe)();
            std::thread::sleep(Duration::from_millis(1));
        }
        beats
    }

    fn run(mut self, seconds: f64) {
        let name = self.node.name.clone();
        let mut params = ParamClient::new(self.fq);
        let names: Vec<&str> = self.bad_params.iter().map(|(n, _)| *n).collect();
        // Up: the heartbeat flows under the good stream alone.
        let t = Instant::now();
        let mut up = 0;
        while up < 10 && t.elapsed() < Duration::from_secs(30) {
            up += self.good_only(0.2, 0);
        }
        assert!(up >= 10, "{name} never produced its output:\n{}", self.node.log());
        let settle = self.good_only(2.0, 0);
        let rss_before_kb = self.node.rss_kb().expect("rss");
        let log_before = self.node.log().lines().count();
        println!(
            "{name}: up, {:.0} Hz before the flood, {:.1} MB resident",
            settle as f64 / 2.0,
            rss_before_kb as f64 / 1024.0
        );

        // The flood.
        let t0 = Instant::now();
        let mut m = Measured {
            windows: vec![0; (seconds / 2.0).ceil() as usize],
            sent: 0,
            rss_before_kb,
            rss_peak_kb: rss_before_kb,
            rss_windows: vec![0; (seconds / 2.0).ceil() as usize],
            log_lines: 0,
            signatures: Vec::new(),
        };
        let (mut next_good, mut next_heavy, mut next_rss) = (0u64, 0u64, 0u64);
        let mut phase_seen = 0usize;
        let mut light = 0usize;
        let (mut bad_param, mut heavy) = (0usize, 0usize);
        loop {
            let el = t0.elapsed().as_secs_f64();
            if el >= seconds {
                break;
            }
            let ms = (el * 1000.0) as u64;
            let phase = (el / PHASE_S) as usize;
            if phase != phase_seen {
                // The end of a phase: what the node's output says.
                m.signatures.push((phase_seen % 2, (self.signature)()));
                phase_seen = phase;
            }
            // Garbage due up to now, at most 50 at once (the probe fell behind).
            let due = (ms + 1).min(m.sent + 50);
            while m.sent < due {
                if m.sent % 10 == 9 {
                    // Nine malformed parameter calls to one the node accepts (10 a second).
                    let (k, v) = match bad_param % 10 {
                        9 => &self.good_param,
                        i => &self.bad_params[i % self.bad_params.len()],
                    };
                    params.send(k, v.clone());
                    bad_param += 1;
                } else {
                    let n = self.garbage.len();
                    (self.garbage[light % n])(m.sent);
                    light += 1;
                }
                m.sent += 1;
            }
            if ms >= next_heavy {
                let n = self.heavy.len();
                (self.heavy[heavy % n])();
                heavy += 1;
                next_heavy += 1000;
            }
            if ms >= next_good {
                (self.good)(phase % 2);
                next_good += 20;
            }
            let w = ((el / 2.0) as usize).min(m.windows.len() - 1);
            m.windows[w] += (self.observe)();
            params.drain(&names);
            if ms >= next_rss {
                let kb = self.node.rss_kb().unwrap_or(0);
                m.rss_peak_kb = m.rss_peak_kb.max(kb);
                m.rss_windows[w] = m.rss_windows[w].max(kb);
                next_rss += 250;
            }
            std::thread::sleep(Duration::from_micros(500));
        }
        m.log_lines = self.node.log().lines().count() - log_before;
        // After the flood the good stream alone: still served.
        let after = self.good_only(3.0, phase_seen + 1);
        params.drain(&names);
        m.rss_peak_kb = m.rss_peak_kb.max(self.node.rss_kb().unwrap_or(0));
        self.check(&name, seconds, &m, after, &params);
    }

    fn check(&mut self, name: &str, seconds: f64, m: &Measured, after: usize, params: &ParamClient) {
        let log = self.node.log();
        let mb = |kb: u64| kb as f64 / 1024.0;
        let min_window = m.windows[..m.windows.len() - 1].iter().min().copied().unwrap_or(0);
        // Creep: the highest memory of the last quarter of the flood against the second's.
        let quarter = |a: f64, b: f64| {
            let n = m.rss_windows.len() as f64;
            m.rss_windows[(a * n) as usize..((b * n) as usize).max((a * n) as usize + 1)]
                .iter()
                .max()
                .copied()
                .unwrap_or(0)
        };
        let (rss_half_kb, rss_end_kb) = (quarter(0.25, 0.5), quarter(0.75, 1.0));
        println!(
            "{name}: {} garbage sent in {seconds} s ({:.0}/s); heartbeat per 2 s window min {min_window} \
             (nominal {:.0}), after the flood {:.0} Hz; resident {:.1} MB before, peak {:.1}, \
             second quarter {:.1}, last quarter {:.1} (highest); {} log lines; parameters refused {} accepted {}",
            m.sent,
            m.sent as f64 / seconds,
            self.nominal_hz * 2.0,
            after as f64 / 3.0,
            mb(m.rss_before_kb),
            mb(m.rss_peak_kb),
            mb(rss_half_kb),
            mb(rss_end_kb),
            m.log_lines,
            params.refused,
            params.accepted,
        );
        println!(
            "{name}: resident MB per 2 s window of the flood: {:?}",
            m.rss_windows.iter().map(|k| k / 1024).collect::<Vec<_>>()
        );
        assert!(self.node.alive(), "{name} died:\n{log}");
        assert!(
            m.sent as f64 >= 0.95 * Bounds::FLOOD_HZ * seconds,
            "the probe sent only {} garbage messages in {seconds} s",
            m.sent
        );
        // The last window may be short.
        let want = Bounds::RATE_SHARE * self.nominal_hz * 2.0;
        assert!(
            min_window as f64 >= want,
            "{name}'s output fell to {min_window} in a 2 s window (want ≥ {want:.0}): {:?}",
            m.windows
        );
        assert!(
            after as f64 >= Bounds::RATE_SHARE * self.nominal_hz * 3.0,
            "{name}'s output after the flood: {after} in 3 s"
        );
        assert!(
            mb(m.rss_peak_kb) <= mb(m.rss_before_kb) + Bounds::RSS_RISE_MB,
            "{name}'s memory rose from {:.1} MB to {:.1} MB",
            mb(m.rss_before_kb),
            mb(m.rss_peak_kb)
        );
        let w = &m.rss_windows;
        let still_rising = w.len() >= 3 && mb(w[w.len() - 1]) > mb(w[w.len() - 3]) + Bounds::RSS_STILL_RISING_MB;
        assert!(
            mb(rss_end_kb) <= mb(rss_half_kb) + Bounds::RSS_CREEP_MB || !still_rising,
            "{name}'s memory crept from {:.1} MB to {:.1} MB during the flood: {:?} MB",
            mb(rss_half_kb),
            mb(rss_end_kb),
            m.rss_windows.iter().map(|k| k / 1024).collect::<Vec<_>>()
        );
        let max_lines = Bounds::LOG_LINES_PER_S * seconds + Bounds::LOG_SLACK;
        assert!(
            m.log_lines as f64 <= max_lines,
            "{name} logged {} lines in {seconds} s (at most {max_lines:.0}):\n{}",
            m.log_lines,
            capped_tail(&log)
        );
        assert!(
            log.contains("suppressed"),
            "{name}'s log never says it suppressed refusals:\n{}",
            capped_tail(&log)
        );
        // Every malformed parameter refused, naming it; the accepted one accepted.
        assert!(
            params.refused as f64 >= 0.5 * m.sent as f64 / 10.0,
            "{name} answered only {} of {} malformed parameter calls",
            params.refused,
            m.sent / 10
        );
        assert!(params.unnamed.is_none(), "{name}: {:?}", params.unnamed);
        assert!(
            params.accepted >= 1 && params.accepted <= params.refused / 8,
            "{name} accepted {} parameter calls and refused {} (one in ten is acceptable)",
            params.accepted,
            params.refused
        );
        // The good stream was served: the output at the end of each phase is the one of that
        // phase, and the two phases differ.
        let of = |p: usize| -> Vec<&Option<String>> {
            m.signatures.iter().filter(|(q, _)| *q == p).map(|(_, s)| s).collect()
        };
        let (even, odd) = (of(0), of(1));
        println!("{name}: output at the end of the phases: {even:?} / {odd:?}");
        assert!(
            !even.is_empty() && !odd.is_empty(),
            "{name}: too short a soak to see both phases"
        );
        assert!(
            even.iter().chain(&odd).all(|s| s.is_some()),
            "{name} produced no output in a phase: {even:?} / {odd:?}"
        );
        assert!(
            even.iter().all(|s| *s == even[0]) && odd.iter().all(|s| *s == odd[0]) && even[0] != odd[0],
            "{name} did not follow the good stream: {even:?} / {odd:?}"
        );
    }
}

/// The last 6 kB of a log.
fn capped_tail(log: &str) -> &str {
    let mut start = log.len().saturating_sub(6000);
    while !log.is_char_boundary(start) {
        start += 1;
    }
    &log[start..]
}

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn spawn(backend: &str, bin: &str, ns: &str, extra: &[&str]) -> NodeProc {
    let ns = format!("__ns:=/{ns}");
    let args = [&["--ros-args", "-r", ns.as_str()][..], extra].concat();
    NodeProc::spawn_on(backend, bin, &args)
}

fn layout() -> modbot_msgs::std_msgs::msg::MultiArrayLayout {
    Default::default()
}

fn stamp() -> Time {
    Time::from_secs_f64(modbot_ros::transport::wall_now())
}

fn header(frame: &str) -> Header {
    Header {
        stamp: stamp(),
        frame_id: frame.into(),
    }
}

fn odom_at(x: f64, y: f64, yaw: f64) -> Odometry {
    let mut o = Odometry {
        header: header("odom"),
        child_frame_id: "base_link".into(),
        ..Default::default()
    };
    o.pose.pose.position = Point { x, y, z: 0.0 };
    o.pose.pose.orientation = Quaternion {
        x: 0.0,
        y: 0.0,
        z: (yaw / 2.0).sin(),
        w: (yaw / 2.0).cos(),
    };
    o
}

impostor!(FakeArray, "std_msgs", "Float64MultiArray");
impostor!(FakeCommand, "modbot_msgs", "GaitCommand");
impostor!(FakeGoal, "geometry_msgs", "PoseStamped");
impostor!(FakeOdom, "nav_msgs", "Odometry");
impostor!(FakePlan, "modbot_msgs", "StrategicPlan");
impostor!(FakeFrame, "modbot_msgs", "HormoneFrame");
impostor!(FakeSensors, "modbot_msgs", "ModuleSensors");

/// Runs `f` once per backend in this build, inside this test's network namespace.
fn on_backends(test: &str, f: fn(&str, f64)) {
    if reexec_in_netns(test) {
        return;
    }
    let _one = serial();
    let s = soak_seconds();
    for b in backends() {
        println!("== {test} on {b}, {s} s");
        f(b, s);
    }
}

#[test]
fn sim_node_holds_under_a_flood() {
    on_backends("sim_node_holds_under_a_flood", |backend, seconds| {
        let node = spawn(backend, sim_node(), "soak_sim", &["-p", "robot:=pp:8"]);
        let mut probe = probe("soak_sim_probe");
        let topic = "/soak_sim/position_controller/commands";
        let cmd = probe.publisher::<Float64MultiArray>(topic, Qos::Reliable).expect("pub");
        let fake = probe.publisher::<FakeArray>(topic, Qos::Reliable).expect("pub");
        let js = probe
            .subscription::<JointState>("/soak_sim/joint_states", Qos::SensorData)
            .expect("sub");
        let last = std::cell::RefCell::new(None::<JointState>);
        let array = |data: Vec<f64>| Float64MultiArray { layout: layout(), data };
        Soak {
            node,
            fq: "/soak_sim/sim_node",
            garbage: vec![
                Box::new(|_| drop(cmd.publish(array(vec![0.2; 5])))),
                Box::new(|_| drop(cmd.publish(array(vec![f64::NAN; 8])))),
                Box::new(|_| drop(cmd.publish(array(vec![f64::INFINITY; 8])))),
                Box::new(|_| drop(cmd.publish(array(vec![0.2; 9])))),
                Box::new(|_| drop(cmd.publish(array(vec![])))),
                Box::new(|_| drop(fake.publish(FakeArray { word: 0xdead_beef }))),
                Box::new(|_| drop(cmd.publish(array(vec![0.1; 4096])))),
            ],
            heavy: vec![Box::new(|| drop(cmd.publish(array(vec![0.1; 1_000_000]))))],
            bad_params: vec![
                ("publish_rate_hz", double(f64::NAN)),
                ("publish_rate_hz", string("fast")),
                ("publish_rate_hz", double(-1.0)),
                ("step_ms", double(1e9)),
                ("warp_drive", integer(9)),
                ("robot", string("hexapod")),
            ],
            good_param: ("publish_rate_hz", double(50.0)),
            good: Box::new(|phase| {
                let q = if phase == 0 { 0.3 } else { -0.3 };
                let _ = cmd.publish(array(vec![q; 8]));
            }),
            observe: Box::new(|| {
                let mut n = 0;
                while let Some(m) = js.take() {
                    if let Ok(m) = m {
                        *last.borrow_mut() = Some(m);
                    }
                    n += 1;
                }
                n
            }),
            // The joints' mean angle to 0.1 rad: near +0.3 in phase 0, −0.3 in phase 1.
            signature: Box::new(|| {
                last.borrow().as_ref().map(|j| {
                    let mean = j.position.iter().sum::<f64>() / j.position.len().max(1) as f64;
                    format!("{:.1}", mean)
                })
            }),
            nominal_hz: 50.0,
        }
        .run(seconds);
    });
}

#[test]
fn gait_node_holds_under_a_flood() {
    on_backends("gait_node_holds_under_a_flood", |backend, seconds| {
        let node = spawn(backend, gait_node(), "soak_gait", &["-p", "robot:=pp:8"]);
        let mut probe = probe("soak_gait_probe");
        let cmd = probe
            .publisher::<GaitCommand>("/soak_gait/gait/command", Qos::Reliable)
            .expect("pub");
        let fake = probe
            .publisher::<FakeCommand>("/soak_gait/gait/command", Qos::Reliable)
            .expect("pub");
        let out = probe
            .subscription::<Float64MultiArray>("/soak_gait/position_controller/commands", Qos::Reliable)
            .expect("sub");
        let state = probe
            .subscription::<GaitState>("/soak_gait/gait/state", Qos::Reliable)
            .expect("sub");
        let last = std::cell::RefCell::new(None::<GaitState>);
        let command = |gait: &str, names: Vec<String>, values: Vec<f64>| GaitCommand {
            gait: gait.into(),
            param_names: names,
            param_values: values,
            ..Default::default()
        };
        Soak {
            node,
            fq: "/soak_gait/gait_node",
            garbage: vec![
                Box::new(|i| drop(cmd.publish(command(&format!("moonwalk_{}", i % 7), vec![], vec![])))),
                Box::new(|_| drop(cmd.publish(command("caterpillar", vec!["A".into()], vec![f64::NAN])))),
                Box::new(|_| drop(cmd.publish(command("caterpillar", vec!["A".into()], vec![])))),
                Box::new(|_| drop(cmd.publish(command("caterpillar", vec!["warp".into()], vec![1.0])))),
                Box::new(|_| drop(cmd.publish(command("caterpillar", vec!["A".into()], vec![1e9])))),
                Box::new(|_| {
                    let mut c = command("caterpillar", vec![], vec![]);
                    c.speed_scale = f64::INFINITY;
                    let _ = cmd.publish(c);
                }),
                Box::new(|_| drop(fake.publish(FakeCommand { word: 7 }))),
            ],
            heavy: vec![
                Box::new(|| drop(cmd.publish(command(&"g".repeat(1 << 20), vec![], vec![])))),
                Box::new(|| {
                    let n = 200_000;
                    let _ = cmd.publish(command("caterpillar", vec!["A".into(); n], vec![20.0; n]));
                }),
            ],
            bad_params: vec![
                ("gait", string("moonwalk")),
                ("control_rate_hz", double(f64::NAN)),
                ("control_rate_hz", double(1e9)),
                ("state_rate_hz", string("often")),
                ("warp_drive", integer(9)),
                ("watchdog_s", double(-3.0)),
            ],
            good_param: ("state_rate_hz", double(10.0)),
            good: Box::new(|phase| {
                let a = if phase == 0 { 20.0 } else { 25.0 };
                let _ = cmd.publish(command("caterpillar", vec!["A".into()], vec![a]));
            }),
            observe: Box::new(|| {
                while let Some(Ok(s)) = state.take() {
                    *last.borrow_mut() = Some(s);
                }
                std::iter::from_fn(|| out.take()).count()
            }),
            signature: Box::new(|| {
                last.borrow().as_ref().map(|s| {
                    let a = s
                        .param_names
                        .iter()
                        .zip(&s.param_values)
                        .find(|(n, _)| *n == "amplitude_deg");
                    format!("{} {a:?}", s.gait)
                })
            }),
            nominal_hz: 100.0,
        }
        .run(seconds);
    });
}

/// A 2 m × 2 m free map at 0.1 m, origin at 0.
fn free_map() -> OccupancyGrid {
    OccupancyGrid {
        header: header("map"),
        info: MapMetaData {
            resolution: 0.1,
            width: 20,
            height: 20,
            ..Default::default()
        },
        data: vec![0; 400],
    }
}

fn goal_at(x: f64, y: f64) -> PoseStamped {
    PoseStamped {
        header: header("map"),
        pose: Pose {
            position: Point { x, y, z: 0.0 },
            ..Default::default()
        },
    }
}

#[test]
fn planner_node_holds_under_a_flood() {
    on_backends("planner_node_holds_under_a_flood", |backend, seconds| {
        let node = spawn(backend, env!("CARGO_BIN_EXE_planner_node"), "soak_plan", &[]);
        let mut probe = probe("soak_plan_probe");
        let map = probe
            .publisher::<OccupancyGrid>("/soak_plan/map", Qos::Latched)
            .expect("pub");
        let goal = probe
            .publisher::<PoseStamped>("/soak_plan/goal_pose", Qos::Reliable)
            .expect("pub");
        let fake_goal = probe
            .publisher::<FakeGoal>("/soak_plan/goal_pose", Qos::Reliable)
            .expect("pub");
        let odom = probe
            .publisher::<Odometry>("/soak_plan/odom", Qos::SensorData)
            .expect("pub");
        let fake_odom = probe
            .publisher::<FakeOdom>("/soak_plan/odom", Qos::SensorData)
            .expect("pub");
        let plans = probe
            .subscription::<Path>("/soak_plan/plan", Qos::Reliable)
            .expect("sub");
        let last = std::cell::RefCell::new(None::<Path>);
        let good_map = free_map();
        map.publish(good_map.clone()).expect("map");
        let ticks = std::cell::Cell::new(0u64);
        Soak {
            node,
            fq: "/soak_plan/planner_node",
            garbage: vec![
                Box::new(|_| drop(goal.publish(goal_at(f64::NAN, 1.0)))),
                Box::new(|_| drop(goal.publish(goal_at(1e300, -1e300)))),
                Box::new(|_| drop(goal.publish(goal_at(50.0, 50.0)))),
                Box::new(|_| drop(fake_goal.publish(FakeGoal { word: 1 }))),
                Box::new(|_| drop(odom.publish(odom_at(f64::NAN, 0.0, 0.0)))),
                Box::new(|_| drop(fake_odom.publish(FakeOdom { word: 2 }))),
            ],
            // Maps that disagree with their data, and a resolution that is no number, each
            // followed a second later by the good one again.
            heavy: vec![
                Box::new(|| {
                    let mut m = free_map();
                    m.info.width = 4_000_000;
                    m.info.height = 4_000_000;
                    let _ = map.publish(m);
                }),
                Box::new(|| drop(map.publish(good_map.clone()))),
                Box::new(|| {
                    let mut m = free_map();
                    m.data = vec![0; 1_000_000];
                    let _ = map.publish(m);
                }),
                Box::new(|| drop(map.publish(good_map.clone()))),
                Box::new(|| {
                    let mut m = free_map();
                    m.info.resolution = f32::NAN;
                    let _ = map.publish(m);
                }),
                Box::new(|| drop(map.publish(good_map.clone()))),
            ],
            bad_params: vec![
                ("occupied_threshold", integer(1000)),
                ("occupied_threshold", string("half")),
                ("mode", string("teleport")),
                ("warp_drive", double(1.0)),
            ],
            good_param: ("frame_id", string("map")),
            // Odometry at 50 Hz, and a goal every 0.5 s: one corner or the other by phase.
            good: Box::new(|phase| {
                let _ = odom.publish(odom_at(0.15, 0.15, 0.0));
                let k = ticks.get();
                ticks.set(k + 1);
                if k % 25 == 0 {
                    let (x, y) = if phase == 0 { (1.75, 0.25) } else { (0.25, 1.75) };
                    let _ = goal.publish(goal_at(x, y));
                }
            }),
            observe: Box::new(|| {
                let mut n = 0;
                while let Some(Ok(p)) = plans.take() {
                    *last.borrow_mut() = Some(p);
                    n += 1;
                }
                n
            }),
            signature: Box::new(|| {
                last.borrow().as_ref().and_then(|p| p.poses.last()).map(|e| {
                    let q = &e.pose.position;
                    format!("({:.1}, {:.1})", q.x, q.y)
                })
            }),
            // One plan per good goal: 2 Hz.
            nominal_hz: 2.0,
        }
        .run(seconds);
    });
}

fn plan_to(x: f64, y: f64) -> StrategicPlan {
    StrategicPlan {
        header: header("map"),
        rows: vec![SubGoal {
            configuration: "snake".into(),
            action: SubGoal::ACTION_DRIVE,
            target: Pose {
                position: Point { x, y, z: 0.0 },
                ..Default::default()
            },
            path: vec![Point::default(), Point { x, y, z: 0.0 }],
            ..Default::default()
        }],
        estimated_time: 10.0,
    }
}

#[test]
fn executive_node_holds_under_a_flood() {
    on_backends("executive_node_holds_under_a_flood", |backend, seconds| {
        let node = spawn(
            backend,
            env!("CARGO_BIN_EXE_executive_node"),
            "soak_exec",
            &[
                "-p",
                "pose_reference:=base_link",
                "-p",
                "pose_window_s:=0.0",
                "-p",
                "heartbeat_s:=0.1",
                "-p",
                "row_timeout_s:=86400.0",
            ],
        );
        let mut probe = probe("soak_exec_probe");
        let plan = probe
            .publisher::<StrategicPlan>("/soak_exec/strategic_plan", Qos::Latched)
            .expect("pub");
        let fake_plan = probe
            .publisher::<FakePlan>("/soak_exec/strategic_plan", Qos::Latched)
            .expect("pub");
        let odom = probe
            .publisher::<Odometry>("/soak_exec/odom", Qos::SensorData)
            .expect("pub");
        let fake_odom = probe
            .publisher::<FakeOdom>("/soak_exec/odom", Qos::SensorData)
            .expect("pub");
        let cmds = probe
            .subscription::<GaitCommand>("/soak_exec/gait/command", Qos::Reliable)
            .expect("sub");
        let last = std::cell::RefCell::new(None::<GaitCommand>);
        let good_plan = plan_to(3.0, 0.0);
        plan.publish(good_plan.clone()).expect("plan");
        Soak {
            node,
            fq: "/soak_exec/executive_node",
            garbage: vec![
                Box::new(|_| drop(odom.publish(odom_at(f64::NAN, 0.0, 0.0)))),
                Box::new(|_| drop(odom.publish(odom_at(0.0, f64::INFINITY, 0.0)))),
                Box::new(|_| {
                    let mut o = odom_at(0.0, 0.0, 0.0);
                    o.pose.pose.orientation = Quaternion::default();
                    o.pose.pose.orientation.w = f64::NAN;
                    let _ = odom.publish(o);
                }),
                Box::new(|_| drop(fake_odom.publish(FakeOdom { word: 3 }))),
            ],
            // Plans the executive must refuse, each followed a second later by the good one
            // again (superseded at once, a fragmented sample is abandoned mid-flight: record
            // 0036).
            heavy: vec![
                Box::new(|| {
                    let mut p = plan_to(3.0, 0.0);
                    p.rows = vec![p.rows[0].clone(); 10_000];
                    p.rows[9_999].action = 9;
                    let _ = plan.publish(p);
                }),
                Box::new(|| drop(plan.publish(good_plan.clone()))),
                Box::new(|| drop(plan.publish(plan_to(f64::NAN, 0.0)))),
                Box::new(|| drop(plan.publish(good_plan.clone()))),
                Box::new(|| {
                    let mut p = plan_to(3.0, 0.0);
                    p.rows[0].configuration = "hovercraft".into();
                    let _ = plan.publish(p);
                }),
                Box::new(|| drop(plan.publish(good_plan.clone()))),
                Box::new(|| drop(fake_plan.publish(FakePlan { word: 4 }))),
                Box::new(|| drop(plan.publish(good_plan.clone()))),
            ],
            bad_params: vec![
                ("rate_hz", double(f64::NAN)),
                ("controller", string("joystick")),
                ("max_turn_deg", double(400.0)),
                ("warp_drive", integer(1)),
            ],
            good_param: ("rate_hz", double(10.0)),
            // Odometry at 50 Hz at the start, facing the target (phase 0) or 60° off it.
            good: Box::new(|phase| {
                let yaw = if phase == 0 { 0.0 } else { 60f64.to_radians() };
                let _ = odom.publish(odom_at(0.0, 0.0, yaw));
            }),
            observe: Box::new(|| {
                let mut n = 0;
                while let Some(Ok(c)) = cmds.take() {
                    *last.borrow_mut() = Some(c);
                    n += 1;
                }
                n
            }),
            signature: Box::new(|| {
                last.borrow().as_ref().map(|c| {
                    let v: Vec<String> = c.param_values.iter().map(|v| format!("{v:.2}")).collect();
                    format!("{} {:?} {v:?} stop={}", c.gait, c.param_names, c.stop)
                })
            }),
            nominal_hz: 10.0,
        }
        .run(seconds);
    });
}

fn frame(kind: u8, connector: u8, path: Vec<u8>, data: Vec<f64>) -> HormoneFrame {
    HormoneFrame {
        header: header(""),
        kind,
        code: 0,
        hop: 1,
        connector,
        path,
        data,
    }
}

#[test]
fn module_node_holds_under_a_flood() {
    on_backends("module_node_holds_under_a_flood", |backend, seconds| {
        let node = spawn(backend, env!("CARGO_BIN_EXE_module_node"), "soak_mod", &[]);
        let mut probe = probe("soak_mod_probe");
        let sensors = probe
            .publisher::<ModuleSensors>("/soak_mod/sensors", Qos::SensorData)
            .expect("pub");
        let fake_sensors = probe
            .publisher::<FakeSensors>("/soak_mod/sensors", Qos::SensorData)
            .expect("pub");
        let frames: Vec<_> = ["B", "F", "R", "L"]
            .iter()
            .map(|s| {
                probe
                    .publisher::<HormoneFrame>(&format!("/soak_mod/in/{s}"), Qos::Reliable)
                    .expect("pub")
            })
            .collect();
        let fake_frame = probe
            .publisher::<FakeFrame>("/soak_mod/in/F", Qos::Reliable)
            .expect("pub");
        let hinge = probe
            .subscription::<Float64>("/soak_mod/hinge_cmd", Qos::Reliable)
            .expect("sub");
        let out_f = probe
            .subscription::<HormoneFrame>("/soak_mod/out/F", Qos::Reliable)
            .expect("sub");
        let state = probe
            .subscription::<ModuleState>("/soak_mod/state", Qos::Reliable)
            .expect("sub");
        let talked = std::cell::Cell::new(Instant::now() - Duration::from_secs(60));
        let reading = |docked_f: bool| ModuleSensors {
            header: header("module"),
            ir: [128.0; 4],
            roll_deg: 0.0,
            docked: [false, docked_f, false, false],
        };
        Soak {
            node,
            fq: "/soak_mod/module_node",
            garbage: vec![
                Box::new(|i| drop(frames[(i % 4) as usize].publish(frame(9, 2, vec![], vec![])))),
                Box::new(|i| drop(frames[(i % 4) as usize].publish(frame(2, 7, vec![1], vec![])))),
                Box::new(|_| drop(frames[1].publish(frame(3, 2, vec![1, 2, 3], vec![f64::NAN])))),
                Box::new(|_| {
                    let mut f = frame(0, 2, vec![], vec![]);
                    f.header.stamp = Time::from_secs_f64(1e9 * 3.0);
                    let _ = frames[1].publish(f);
                }),
                Box::new(|_| {
                    let mut r = reading(false);
                    r.ir[2] = f64::NAN;
                    let _ = sensors.publish(r);
                }),
                Box::new(|_| {
                    let mut r = reading(false);
                    r.roll_deg = 1e9;
                    let _ = sensors.publish(r);
                }),
                Box::new(|_| drop(fake_sensors.publish(FakeSensors { word: 5 }))),
                Box::new(|_| drop(fake_frame.publish(FakeFrame { word: 6 }))),
            ],
            heavy: vec![
                Box::new(|| drop(frames[0].publish(frame(3, 1, vec![1; 1_000_000], vec![])))),
                Box::new(|| drop(frames[2].publish(frame(3, 3, vec![], vec![0.5; 1_000_000])))),
            ],
            bad_params: vec![
                ("tick_s", double(f64::NAN)),
                ("handshake_every", integer(-4)),
                ("timeout_ticks", integer(1)),
                ("ir_threshold", string("high")),
                ("warp_drive", integer(1)),
            ],
            good_param: ("max_level", integer(2)),
            // Sensing at 50 Hz: connector F docked in phase 1 only, so the module talks
            // through it (handshakes on out/F) in phase 1 and is silent in phase 0.
            good: Box::new(|phase| drop(sensors.publish(reading(phase == 1)))),
            observe: Box::new(|| {
                if std::iter::from_fn(|| out_f.take()).count() > 0 {
                    talked.set(Instant::now());
                }
                while state.take().is_some() {}
                std::iter::from_fn(|| hinge.take()).count()
            }),
            signature: Box::new(|| {
                let quiet = talked.get().elapsed().as_secs_f64();
                Some(if quiet < 0.5 { "talking" } else { "silent" }.into())
            }),
            // One hinge command per execution cycle: 8 per 0.25 s tick.
            nominal_hz: 32.0,
        }
        .run(seconds);
    });
}
