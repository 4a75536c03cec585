//! The robot interface's ROS 2 binding as the stage a behaviour of modbot_app runs on
//! (record 0064): the modules seen only through their topics and services
//! ([`RosModules`]), the clock the node's own (`/clock` under `use_sim_time`, else the
//! wall), nothing stepped — the world (sim_node free-running, Gazebo, real modules) runs by
//! itself, and [`RosStage::advance_to`] only waits for the clock. Where a simulator offers
//! the world's truth on [`GROUND_TRUTH`] the report reads it; a behaviour never does.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use modbot_app::embedded::GroundTruth;
use modbot_msgs::tf2_msgs::msg::TFMessage;
use nalgebra::{Isometry3, Quaternion, Translation3, UnitQuaternion};

use crate::nodes::modules::{GROUND_TRUTH, WORLD_FRAME, foot_frame};
use crate::robot::{ModuleDescription, RosModules};
use crate::transport::{Level, Qos, Sub, Throttle, Transport};

/// The newest truth: every module's foot plate.
struct Feet(Vec<Isometry3<f64>>);

impl GroundTruth for Feet {
    fn feet(&self) -> Result<Vec<Isometry3<f64>>, String> {
        Ok(self.0.clone())
    }
}

/// The modules of a ROS graph as a stage.
pub struct RosStage<T: Transport> {
    remote: RosModules<T>,
    truth_sub: T::S<TFMessage>,
    truth: Option<Feet>,
    frames: Vec<String>,
    stop: Arc<AtomicBool>,
    /// Wall seconds the clock may stand still before [`RosStage::advance_to`] gives up.
    stall_s: f64,
    log: Throttle,
}

impl<T: Transport> RosStage<T> {
    /// The modules `descriptions` on `t`; `stall_s` wall seconds without the clock moving end
    /// a wait (a simulator gone), as does `stop`.
    pub fn new(
        mut t: T,
        descriptions: Vec<ModuleDescription>,
        stall_s: f64,
        stop: Arc<AtomicBool>,
    ) -> Result<RosStage<T>, String> {
        let truth_sub = t
            .subscription(GROUND_TRUTH, Qos::SensorData)
            .map_err(|e| e.to_string())?;
        let frames = descriptions.iter().map(|d| foot_frame(&d.name)).collect();
        Ok(RosStage {
            remote: RosModules::new(t, descriptions)?,
            truth_sub,
            truth: None,
            frames,
            stop,
            stall_s,
            log: Throttle::new(5.0),
        })
    }

    /// The node's connection.
    pub fn transport(&self) -> &T {
        self.remote.transport()
    }

    /// Waits until every module's joint states and IMU have come (the first readings a
    /// behaviour needs), at most `within_s` wall seconds.
    pub fn wait_for_readings(&mut self, within_s: f64) -> Result<(), String> {
        let began = Instant::now();
        loop {
            self.poll();
            let missing = self.remote.awaiting_readings();
            if missing.is_empty() {
                return Ok(());
            }
            if self.stop.load(Ordering::Relaxed) {
                return Err("stopped".into());
            }
            if began.elapsed().as_secs_f64() > within_s {
                return Err(format!(
                    "no joint_states or imu from {} within {within_s} s: are the modules (sim_node modules:=true, Gazebo, the robots) up, in this namespace?",
                    missing.join(", ")
                ));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn poll(&mut self) {
        self.remote.poll();
        while let Some(m) = self.truth_sub.take() {
            match m.map_err(|e| format!("undecodable: {e}")).and_then(|m| self.feet(&m)) {
                Ok(feet) => self.truth = Some(Feet(feet)),
                Err(e) => {
                    let msg = format!("{GROUND_TRUTH} dropped: {e}");
                    self.log.log(self.remote.transport(), "truth", Level::Warn, &msg);
                }
            }
        }
    }

    /// Every module's foot plate from a truth message, refused naming what is missing or
    /// not finite.
    fn feet(&self, m: &TFMessage) -> Result<Vec<Isometry3<f64>>, String> {
        self.frames
            .iter()
            .map(|frame| {
                let tf = m
                    .transforms
                    .iter()
                    .find(|t| &t.child_frame_id == frame)
                    .ok_or_else(|| format!("no transform of `{frame}`"))?;
                if tf.header.frame_id != WORLD_FRAME {
                    return Err(format!(
                        "`{frame}` in frame `{}`, not `{WORLD_FRAME}`",
                        tf.header.frame_id
                    ));
                }
                let (p, q) = (&tf.transform.translation, &tf.transform.rotation);
                let v = [p.x, p.y, p.z, q.x, q.y, q.z, q.w];
                if v.iter().any(|x| !x.is_finite()) {
                    return Err(format!("`{frame}` is not finite"));
                }
                let q = Quaternion::new(q.w, q.x, q.y, q.z);
                if (q.norm() - 1.0).abs() > 1e-3 {
                    return Err(format!(
                        "`{frame}`'s rotation is not a unit quaternion (norm {})",
                        q.norm()
                    ));
                }
                Ok(Isometry3::from_parts(
                    Translation3::new(p.x, p.y, p.z),
                    UnitQuaternion::from_quaternion(q),
                ))
            })
            .collect()
    }
}

impl<T: Transport> modbot_app::embedded::Stage for RosStage<T> {
    fn modules(&mut self) -> &mut dyn modbot_interface::Modules {
        &mut self.remote
    }

    fn modules_ref(&self) -> &dyn modbot_interface::Modules {
        &self.remote
    }

    fn time(&self) -> f64 {
        self.remote.transport().now()
    }

    fn truth(&self) -> Option<&dyn GroundTruth> {
        self.truth.as_ref().map(|f| f as &dyn GroundTruth)
    }

    /// Waits until the clock reaches `t`, taking what arrives meanwhile; a clock standing
    /// still for `stall_s` wall seconds, or `stop`, ends the wait with the reason.
    fn advance_to(&mut self, t: f64) -> Result<(), String> {
        let mut last = self.time();
        let mut moved = Instant::now();
        loop {
            self.poll();
            let now = self.time();
            if now >= t {
                return Ok(());
            }
            if now != last {
                last = now;
                moved = Instant::now();
            }
            if self.stop.load(Ordering::Relaxed) {
                return Err("stopped".into());
            }
            if moved.elapsed().as_secs_f64() > self.stall_s {
                return Err(format!(
                    "the clock stood at {now:.3} s for {} s (waiting for {t:.3} s): is the simulator running?",
                    self.stall_s
                ));
            }
            std::thread::sleep(Duration::from_micros(500));
        }
    }
}
