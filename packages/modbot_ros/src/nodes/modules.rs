//! sim_node with `modules:=true`: a world's module starts (the strategic mission's six
//! wheel-foot modules) simulated free-running, each module on the robot interface's ROS
//! binding under its own name (`m1/…`, records 0062 and 0063) as a Gazebo world serves its
//! models through gz_ros2_control and ros_gz_bridge: commands and requests applied when they
//! arrive, every device published at its own rate with its capture stamp, the world's time
//! on `/clock`, in real time scaled by `real_time_factor` (0: as fast as it can). Nobody
//! steps it: whoever drives the modules only sees their topics (record 0064).
//!
//! For reports, not for behaviours, the world's truth goes out on `ground_truth/poses`
//! (tf2_msgs/TFMessage, every module's foot plate in `world`), as gz-sim's pose publisher
//! system offers it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use modbot_app::embedded::{FOOT_LINK, GroundTruth};
use modbot_msgs::builtin_interfaces::msg::Time;
use modbot_msgs::geometry_msgs::msg::{Quaternion, Transform, TransformStamped, Vector3};
use modbot_msgs::rosgraph_msgs::msg::Clock;
use modbot_msgs::std_msgs::msg::Header;
use modbot_msgs::tf2_msgs::msg::TFMessage;
use nalgebra::Isometry3;

use super::sim::SimNodeConfig;
use crate::error::{Result, RosError};
use crate::faults::FaultyTransport;
use crate::module_server::{serve_embedded, serve_turn};
use crate::transport::{Level, Pub, Qos, Transport};

/// The topic of the world's truth.
pub const GROUND_TRUTH: &str = "ground_truth/poses";
/// Its parent frame.
pub const WORLD_FRAME: &str = "world";

/// The child frame of module `name`'s foot plate in [`GROUND_TRUTH`]: the foot link under the
/// module's namespace, as robot_state_publisher's `frame_prefix` names it (`m3/m1_foot`).
pub fn foot_frame(name: &str) -> String {
    format!("{name}/{FOOT_LINK}")
}

/// The world's truth as it goes out: each module's foot plate in [`WORLD_FRAME`].
pub fn truth_message(names: &[String], feet: &[Isometry3<f64>], stamp: f64) -> TFMessage {
    let stamp = Time::from_secs_f64(stamp);
    TFMessage {
        transforms: names
            .iter()
            .zip(feet)
            .map(|(name, p)| {
                let (t, q) = (p.translation.vector, p.rotation.coords);
                TransformStamped {
                    header: Header {
                        stamp: stamp.clone(),
                        frame_id: WORLD_FRAME.into(),
                    },
                    child_frame_id: foot_frame(name),
                    transform: Transform {
                        translation: Vector3 { x: t.x, y: t.y, z: t.z },
                        rotation: Quaternion {
                            x: q.x,
                            y: q.y,
                            z: q.z,
                            w: q.w,
                        },
                    },
                }
            })
            .collect(),
    }
}

/// Runs the modules' simulator until `stop` is set.
pub fn run<T: Transport>(t: &mut T, cfg: &SimNodeConfig, stop: Arc<AtomicBool>) -> Result<()> {
    let world = cfg.modules_world().map_err(RosError::Params)?;
    let mut sim =
        modbot_app::embedded_mission::sensed_modules(&world, &cfg.scan_settings()).map_err(RosError::Params)?;
    // Commands and requests reach the modules through the faults a test injects (none by
    // default).
    let mut t = FaultyTransport::new(&mut *t, cfg.faults.clone()).map_err(RosError::Params)?;
    let mut servers = serve_embedded(&mut t, &sim).map_err(RosError::Node)?;
    let names: Vec<String> = servers.iter().map(|s| s.description().name.clone()).collect();
    let truth_pub = t.publisher::<TFMessage>(GROUND_TRUTH, Qos::Reliable)?;
    // `/clock` offered reliable, as ros_gz_bridge does (record 0045).
    let clock_pub = if cfg.publish_clock {
        Some(t.publisher::<Clock>("/clock", Qos::Reliable)?)
    } else {
        None
    };
    let period = 1.0 / cfg.publish_rate_hz;
    t.log(
        Level::Info,
        &format!(
            "{} wheel-foot modules ({}) in `{}`, free-running: commands applied and readings published every {} ms, real-time factor {}",
            names.len(),
            names.join(", "),
            world.name,
            period * 1000.0,
            cfg.real_time_factor
        ),
    );
    let t0 = sim.simulator().time();
    let started = Instant::now();
    let mut turns: u64 = 0;
    while !stop.load(Ordering::Relaxed) {
        turns += 1;
        let now = t0 + turns as f64 * period;
        // The faults' clock is the node's, read once a turn (record 0061).
        t.now();
        serve_turn(&t, &mut servers, &mut sim, now).map_err(|e| RosError::Node(format!("simulation stopped: {e}")))?;
        let time = sim.simulator().time();
        match sim.simulator().feet() {
            Ok(feet) => {
                if let Err(e) = truth_pub.publish(truth_message(&names, &feet, time)) {
                    t.log(Level::Warn, &format!("{GROUND_TRUTH} not sent: {e}"));
                }
            }
            Err(e) => return Err(RosError::Node(e)),
        }
        if let Some(c) = &clock_pub {
            let _ = c.publish(Clock {
                clock: Time::from_secs_f64(time),
            });
        }
        if cfg.real_time_factor > 0.0 {
            let due = Duration::from_secs_f64((time - t0) / cfg.real_time_factor);
            let el = started.elapsed();
            if due > el {
                std::thread::sleep(due - el);
            }
        }
    }
    Ok(())
}
