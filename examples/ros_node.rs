//! gait_node driven from code on modbot_ros's in-memory loopback bus: no DDS, no network.
//!
//! `cargo run -p modbot --example ros_node [ROBOT]` (feature `ros`, on by default)
//!
//! The node's real run loop (`modbot_ros::nodes::gait::run`, what `modbot node gait_node`
//! runs on DDS) runs in a thread for a py:8 robot, holding its pose. A probe node on the same
//! bus sends it a `GaitCommand` for `sidewinding` on `gait/command` and reads the joint
//! targets it publishes on `position_controller/commands` while the amplitudes ramp in.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow};
use modbot_msgs::modbot_msgs::msg::{GaitCommand, GaitState};
use modbot_msgs::std_msgs::msg::Float64MultiArray;
use modbot_ros::loopback::{LoopbackBus, identity};
use modbot_ros::nodes::gait::{self, GaitNodeConfig};
use modbot_ros::params::{ParamValue, resolve};
use modbot_ros::{Pub, Qos, Sub, Transport};

/// Polls `f` every 2 ms until it gives a value, for at most `limit` of wall time.
fn wait_for<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if let Some(v) = f() {
            return Some(v);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    None
}

fn main() -> Result<()> {
    let robot = std::env::args().nth(1).unwrap_or_else(|| "py:8".to_string());
    let bus = LoopbackBus::new();
    // `-p robot:=py:8 -p gait:=` as parameters: validated as the node validates them.
    let overrides = [
        ("robot".to_string(), ParamValue::Str(robot)),
        ("gait".to_string(), ParamValue::Str(String::new())),
    ];
    let (params, cfg) = resolve::<GaitNodeConfig>(&[], &overrides)?;
    let mut node = bus.node_with_params::<GaitNodeConfig>(identity("gait_node", "/snake"), params);
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let handle = std::thread::spawn(move || gait::run(&mut node, cfg, flag));

    let mut probe = bus.node(identity("probe", "/snake"));
    let targets = probe.subscription::<Float64MultiArray>("position_controller/commands", Qos::Reliable)?;
    let states = probe.subscription::<GaitState>("gait/state", Qos::Reliable)?;
    let command = probe.publisher::<GaitCommand>("gait/command", Qos::Reliable)?;
    let started = wait_for(Duration::from_secs(10), || {
        let logs = bus.logs();
        logs.into_iter()
            .find(|l| l.node == "/snake/gait_node" && l.msg.starts_with("driving"))
    });
    let Some(line) = started else {
        stop.store(true, Ordering::Relaxed);
        handle.join().map_err(|_| anyhow!("gait_node panicked"))??;
        return Err(anyhow!("gait_node did not start: {:#?}", bus.logs()));
    };
    println!("gait_node: {}", line.msg);

    while targets.take().is_some() {} // the held pose so far
    command.publish(GaitCommand {
        gait: "sidewinding".into(),
        ..Default::default()
    })?;
    println!("sent GaitCommand `sidewinding` on /snake/gait/command");

    let t0 = Instant::now();
    let (mut received, mut peak, mut next_print) = (0usize, 0.0f64, Duration::ZERO);
    while t0.elapsed() < Duration::from_millis(1500) {
        while let Some(m) = targets.take() {
            let m = m.map_err(|e| anyhow!("undecodable joint targets: {e}"))?;
            received += 1;
            peak = m.data.iter().fold(peak, |p, v| p.max(v.abs()));
            let t = t0.elapsed();
            if t >= next_print {
                next_print += Duration::from_millis(300);
                let values: Vec<String> = m.data.iter().map(|v| format!("{v:+.3}")).collect();
                println!("t = {:.2} s: [{}] rad", t.as_secs_f64(), values.join(", "));
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    println!("received {received} position_controller/commands messages");
    println!("peak |target|: {peak:.3} rad");
    let mut last_state = None;
    while let Some(s) = states.take() {
        last_state = s.ok().or(last_state);
    }
    if let Some(s) = last_state {
        println!(
            "gait/state: gait `{}` on {}, period {} s, holding {}",
            s.gait, s.robot, s.period, s.holding
        );
    }

    stop.store(true, Ordering::Relaxed);
    handle.join().map_err(|_| anyhow!("gait_node panicked"))??;
    Ok(())
}
