//! gait_node's robot edge: what it reads of the robot for a closed-loop controller
//! (`joint_states`, `odom`) and what it writes (`position_controller/commands` and
//! `velocity_controller/commands`, the ForwardCommandController convention, record 0025).
//! Conversion and wiring only; the logic is `modbot_app::GaitDriver`.

use modbot_app::{Commands, GaitDriver};
use modbot_msgs::nav_msgs::msg::Odometry;
use modbot_msgs::sensor_msgs::msg::JointState;
use modbot_msgs::std_msgs::msg::Float64MultiArray;

use crate::convert;
use crate::error::Result;
use crate::transport::{Level, Pub, Qos, Sub, Throttle, Transport};

/// The robot's joint states and odometry, fed to the driver (closed-loop robots only).
pub struct Feedback<T: Transport> {
    joints: T::S<JointState>,
    odom: T::S<Odometry>,
    /// Samples dropped so far (undecodable or refused).
    pub dropped: u64,
}

impl<T: Transport> Feedback<T> {
    /// Subscribes `joint_states` and `odom` best effort (sensor data QoS), which matches
    /// sim_node's reliable writers and best-effort ones (a Gazebo bridge's) alike.
    pub fn new(t: &mut T) -> Result<Feedback<T>> {
        Ok(Feedback {
            joints: t.subscription::<JointState>("joint_states", Qos::SensorData)?,
            odom: t.subscription::<Odometry>("odom", Qos::SensorData)?,
            dropped: 0,
        })
    }

    /// Feeds every waiting sample to the driver; garbage is dropped with one log line per
    /// kind every 5 s of node time.
    pub fn drain(&mut self, t: &T, core: &mut GaitDriver, throttle: &mut Throttle) {
        while let Some(m) = self.joints.take() {
            let r = m.and_then(|js| core.observe_joints(&js.name, &js.position, &js.velocity));
            if let Err(e) = r {
                self.dropped += 1;
                let msg = format!("joint_states dropped ({} so far): {e}", self.dropped);
                throttle.log(t, "joint_states", Level::Warn, &msg);
            }
        }
        while let Some(m) = self.odom.take() {
            let r = m.and_then(|o| convert::isometry(&o.pose.pose).and_then(|p| core.observe_base(p)));
            if let Err(e) = r {
                self.dropped += 1;
                let msg = format!("odom dropped ({} so far): {e}", self.dropped);
                throttle.log(t, "odom", Level::Warn, &msg);
            }
        }
    }
}

/// The command publishers: positions always, wheel speeds for a robot with wheels.
pub struct CommandPubs<T: Transport> {
    position: T::P<Float64MultiArray>,
    velocity: Option<T::P<Float64MultiArray>>,
    waiting_logged: bool,
}

impl<T: Transport> CommandPubs<T> {
    /// Advertises `position_controller/commands` and, when the robot has velocity-driven
    /// joints, `velocity_controller/commands`.
    pub fn new(t: &mut T, core: &GaitDriver) -> Result<CommandPubs<T>> {
        let velocity = if core.layout().velocity.is_empty() {
            None
        } else {
            Some(t.publisher::<Float64MultiArray>("velocity_controller/commands", Qos::Reliable)?)
        };
        Ok(CommandPubs {
            position: t.publisher::<Float64MultiArray>("position_controller/commands", Qos::Reliable)?,
            velocity,
            waiting_logged: false,
        })
    }

    /// Publishes one tick's commands (speeds only when the driver sent some). Before the
    /// robot has been observed nothing is sent and that is logged once; a controller error
    /// is logged (rate-limited) and nothing is sent.
    pub fn publish(&mut self, t: &T, step: Option<std::result::Result<Commands, String>>, throttle: &mut Throttle) {
        let c = match step {
            None => {
                if !self.waiting_logged {
                    self.waiting_logged = true;
                    t.log(
                        Level::Info,
                        "holding: no commands until the first joint_states and odom arrive",
                    );
                }
                return;
            }
            Some(Err(e)) => {
                throttle.log(t, "controller", Level::Error, &format!("no commands this tick: {e}"));
                return;
            }
            Some(Ok(c)) => c,
        };
        let mut sent = vec![self.position.publish(convert::joint_commands(&c.position))];
        if let (Some(p), false) = (&self.velocity, c.velocity.is_empty()) {
            sent.push(p.publish(convert::joint_commands(&c.velocity)));
        }
        for e in sent.into_iter().filter_map(std::result::Result::err) {
            t.log(Level::Warn, &e.to_string());
        }
    }
}
