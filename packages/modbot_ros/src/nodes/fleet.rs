//! sim_node with `fleet:=true`: the simulator of a world's module starts (the strategic
//! mission's six wheel-foot modules) served to mission_node over the fleet protocol
//! ([`crate::fleet`], record 0052): requests on `fleet/request`, replies on `fleet/reply`;
//! `/clock` and `joint_states` (every module's joints as `module_k/<joint>`) as the world's
//! time advances.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use modbot_msgs::builtin_interfaces::msg::Time;
use modbot_msgs::rosgraph_msgs::msg::Clock;
use modbot_msgs::sensor_msgs::msg::JointState;
use modbot_msgs::std_msgs::msg::{Header, String as StringMsg};

use super::sim::SimNodeConfig;
use crate::error::{Result, RosError};
use crate::fleet::FleetServer;
use crate::transport::{Level, Pub, Qos, Sub, Throttle, Transport};

/// Runs the fleet's simulator until `stop` is set.
pub fn run<T: Transport>(t: &mut T, cfg: &SimNodeConfig, stop: Arc<AtomicBool>) -> Result<()> {
    let world = cfg.scenario().map_err(RosError::Params)?;
    let sim = modbot_app::assemble::fleet_simulator(&world).map_err(RosError::Params)?;
    let requests = t.subscription::<StringMsg>("fleet/request", Qos::Reliable)?;
    let replies = t.publisher::<StringMsg>("fleet/reply", Qos::Reliable)?;
    let js_pub = t.publisher::<JointState>("joint_states", Qos::Reliable)?;
    let clock_pub = if cfg.publish_clock {
        Some(t.publisher::<Clock>("/clock", Qos::Reliable)?)
    } else {
        None
    };
    t.log(
        Level::Info,
        &format!(
            "fleet of {} modules ({} joints) in `{}`, physics step {} ms, serving fleet/request",
            sim.robot_count(),
            sim.joint_names().len(),
            world.name,
            sim.step_size() * 1000.0
        ),
    );
    // Every module's joints have the one module's names: prefixed `module_k/` here, so
    // that each module's joints are told apart.
    let names: Vec<String> = (0..sim.robot_count())
        .flat_map(|r| {
            let s = &sim;
            s.joints_of(r)
                .map(move |j| format!("module_{}/{}", r + 1, s.joint_names()[j]))
        })
        .collect();
    let mut server = FleetServer::new(sim);
    let mut last_request = std::time::Instant::now();
    let mut throttle = Throttle::new(5.0);
    let frame = 1.0 / cfg.publish_rate_hz;
    let mut next_frame = 0.0;
    while !stop.load(Ordering::Relaxed) {
        let mut busy = false;
        while let Some(m) = requests.take() {
            busy = true;
            match m.and_then(|m| server.handle(&m.data)) {
                Ok(Some(reply)) => {
                    if let Err(e) = replies.publish(StringMsg { data: reply }) {
                        throttle.log(t, "publish", Level::Warn, &format!("fleet reply not sent: {e}"));
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    throttle.log(t, "request", Level::Warn, &format!("fleet request dropped: {e}"));
                }
            }
        }
        let sim = server.sim();
        if sim.time() >= next_frame - 1e-9 {
            next_frame = sim.time() + frame;
            let stamp = Time::from_secs_f64(sim.time());
            let mut sent = vec![js_pub.publish(JointState {
                header: Header {
                    stamp: stamp.clone(),
                    frame_id: String::new(),
                },
                name: names.clone(),
                position: sim.joint_positions(),
                velocity: sim.joint_velocities(),
                effort: Vec::new(),
            })];
            if let Some(c) = &clock_pub {
                sent.push(c.publish(Clock { clock: stamp }));
            }
            for e in sent.into_iter().filter_map(std::result::Result::err) {
                throttle.log(t, "publish", Level::Warn, &e.to_string());
            }
        }
        // Lock-step: the next request follows the reply at once while a mission runs;
        // idle, the node wakes every 2 ms.
        if busy {
            last_request = std::time::Instant::now();
        } else if last_request.elapsed() < Duration::from_millis(5) {
            std::thread::yield_now();
        } else if last_request.elapsed() < Duration::from_millis(50) {
            std::thread::sleep(Duration::from_micros(100));
        } else {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    Ok(())
}
