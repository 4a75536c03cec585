//! `modbot bench ros`: ROS 2 transport figures over loopback, in a private network namespace.
//!
//! - latency: one-way time from `publish` of a `position_controller/commands` message
//!   (std_msgs/Float64MultiArray, 8 and 64 joints) to its `take` in another DDS participant
//!   of the same process (same clock), at 100 Hz and 1 kHz; p50, p99, max;
//! - command reaction: a GaitCommand to a running gait_node process (100 Hz) until its
//!   gait/state shows it acted (includes the wait for the next control tick, ≤ 10 ms);
//! - rate: the highest publish rate (from a list) a subscriber receives without loss over
//!   two seconds, 8 joints.
//!
//! The receiver polls every 50 µs, so figures below that resolution are not meaningful.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use modbot_msgs::modbot_msgs::msg::{GaitCommand, GaitState};
use modbot_msgs::std_msgs::msg::{Float64MultiArray, MultiArrayLayout};
use modbot_ros::dds::DdsTransport;
use modbot_ros::transport::wall_now;
use modbot_ros::{Pub, Qos, Sub, Transport};

fn node(name: &str) -> Result<DdsTransport> {
    DdsTransport::plain(name).map_err(|e| anyhow!("{e}"))
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// Sends `count` messages at `rate_hz`; returns one-way latencies (s) and the number received.
fn stream(
    tx: &impl Pub<Float64MultiArray>,
    rx: &impl Sub<Float64MultiArray>,
    joints: usize,
    rate_hz: f64,
    count: usize,
) -> (Vec<f64>, usize) {
    let period = Duration::from_secs_f64(1.0 / rate_hz);
    let mut lat = Vec::with_capacity(count);
    let mut received = 0;
    let mut next = Instant::now();
    let mut sent = 0;
    let mut done_at = None;
    loop {
        if sent < count && Instant::now() >= next {
            let mut data = vec![0.0; joints];
            data[0] = wall_now();
            data[1] = sent as f64;
            let _ = tx.publish(Float64MultiArray {
                layout: MultiArrayLayout::default(),
                data,
            });
            sent += 1;
            next += period;
            if sent == count {
                done_at = Some(Instant::now());
            }
        }
        while let Some(Ok(m)) = rx.take() {
            lat.push(wall_now() - m.data[0]);
            received += 1;
        }
        if done_at.is_some_and(|d: Instant| d.elapsed() > Duration::from_millis(500)) || received >= count {
            break;
        }
        std::thread::sleep(Duration::from_micros(50));
    }
    (lat, received)
}

pub fn run() -> Result<()> {
    if !modbot_ros::netns::in_netns() {
        // DDS discovery multicasts: measure inside a private loopback-only namespace.
        let me = std::env::current_exe().context("locating modbot")?;
        let status = modbot_ros::netns::netns_command(&me.display().to_string(), &["bench", "ros"])
            .status()
            .context("unshare (util-linux) is needed to isolate DDS traffic")?;
        return if status.success() {
            Ok(())
        } else {
            Err(anyhow!("bench ros failed: {status}"))
        };
    }
    let mut a = node("bench_tx")?;
    let mut b = node("bench_rx")?;
    let mut out = String::new();
    let _ = writeln!(out, "case,joints,rate_hz,sent,received,p50_us,p99_us,max_us");
    for joints in [8usize, 64] {
        let topic = format!("bench/commands_{joints}");
        let tx = a
            .publisher::<Float64MultiArray>(&topic, Qos::Reliable)
            .map_err(|e| anyhow!("{e}"))?;
        let rx = b
            .subscription::<Float64MultiArray>(&topic, Qos::Reliable)
            .map_err(|e| anyhow!("{e}"))?;
        // Wait for discovery: send until the first sample arrives.
        let t0 = Instant::now();
        loop {
            let _ = tx.publish(Float64MultiArray {
                layout: MultiArrayLayout::default(),
                data: vec![0.0; joints],
            });
            std::thread::sleep(Duration::from_millis(20));
            if rx.take().is_some() {
                break;
            }
            if t0.elapsed() > Duration::from_secs(20) {
                return Err(anyhow!("no discovery between two participants on loopback in 20 s"));
            }
        }
        while rx.take().is_some() {}
        for (rate, count) in [(100.0, 500usize), (1000.0, 3000)] {
            let (mut lat, received) = stream(&tx, &rx, joints, rate, count);
            let us = |x: f64| x * 1e6;
            let (p50, p99) = (percentile(&mut lat, 0.5), percentile(&mut lat, 0.99));
            let max = lat.iter().copied().fold(f64::NAN, f64::max);
            let _ = writeln!(
                out,
                "latency,{joints},{rate},{count},{received},{:.0},{:.0},{:.0}",
                us(p50),
                us(p99),
                us(max)
            );
        }
    }
    // Highest lossless rate, 8 joints.
    let tx = a
        .publisher::<Float64MultiArray>("bench/rate", Qos::Reliable)
        .map_err(|e| anyhow!("{e}"))?;
    let rx = b
        .subscription::<Float64MultiArray>("bench/rate", Qos::Reliable)
        .map_err(|e| anyhow!("{e}"))?;
    std::thread::sleep(Duration::from_secs(1));
    let mut best = 0.0;
    for rate in [500.0, 1000.0, 2000.0, 5000.0, 10000.0] {
        let count = (rate * 2.0) as usize;
        let (mut lat, received) = stream(&tx, &rx, 8, rate, count);
        let p99 = percentile(&mut lat, 0.99);
        let _ = writeln!(
            out,
            "rate,8,{rate},{count},{received},{:.0},{:.0},",
            percentile(&mut lat, 0.5) * 1e6,
            p99 * 1e6
        );
        if received == count {
            best = rate;
        } else {
            break;
        }
    }
    // Command reaction through a gait_node process.
    let me = std::env::current_exe().context("locating modbot")?;
    let mut gait = std::process::Command::new(me)
        .args([
            "node",
            "gait_node",
            "--ros-args",
            "-r",
            "__ns:=/bench",
            "-p",
            "robot:=pp:8",
            "-p",
            "gait:=''",
            "-p",
            "state_rate_hz:=1000",
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .context("starting gait_node")?;
    let cmd = a
        .publisher::<GaitCommand>("/bench/gait/command", Qos::Reliable)
        .map_err(|e| anyhow!("{e}"))?;
    let out_sub = b
        .subscription::<Float64MultiArray>("/bench/position_controller/commands", Qos::Reliable)
        .map_err(|e| anyhow!("{e}"))?;
    let state_sub = b
        .subscription::<GaitState>("/bench/gait/state", Qos::Reliable)
        .map_err(|e| anyhow!("{e}"))?;
    let t0 = Instant::now();
    while out_sub.take().is_none() {
        if t0.elapsed() > Duration::from_secs(20) {
            let _ = gait.kill();
            return Err(anyhow!("gait_node did not come up"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(500));
    let mut reactions = Vec::new();
    for i in 0..40 {
        while state_sub.take().is_some() {}
        // Alternate between starting a gait and stopping it; gait/state (published every
        // tick here) says when gait_node has acted on the command.
        let start = i % 2 == 0;
        let c = if start {
            GaitCommand {
                gait: "caterpillar".into(),
                transition_time: 0.0,
                ..Default::default()
            }
        } else {
            GaitCommand {
                stop: true,
                ..Default::default()
            }
        };
        let sent = Instant::now();
        let _ = cmd.publish(c);
        loop {
            if let Some(Ok(s)) = state_sub.take()
                && s.holding != start
            {
                reactions.push(sent.elapsed().as_secs_f64());
                break;
            }
            if sent.elapsed() > Duration::from_secs(2) {
                break;
            }
            std::thread::sleep(Duration::from_micros(50));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = gait.kill();
    let _ = gait.wait();
    let n = reactions.len();
    let _ = writeln!(
        out,
        "gait_command_reaction,8,100,40,{n},{:.0},{:.0},",
        percentile(&mut reactions, 0.5) * 1e6,
        percentile(&mut reactions, 0.99) * 1e6
    );
    let _ = writeln!(out, "# highest lossless rate (8 joints, reliable, 2 s): {best} Hz");
    crate::common::emit(out)
}
