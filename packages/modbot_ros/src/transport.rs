//! The small interface node logic is written against. A backend (ros2-client over DDS here;
//! r2r later) adapts it; the nodes never name a middleware type.

use modbot_msgs::RosMessage;

use crate::error::Result;
use crate::params::ParamValue;

/// Quality of service, by purpose (the ROS 2 presets the nodes use).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Qos {
    /// Best effort, volatile, keep last 5: joint states, odometry, tf (sensor data).
    SensorData,
    /// Reliable, volatile, keep last 10: commands and states (the ROS default).
    Reliable,
    /// Reliable, transient local, keep last 1: `robot_description` (latched).
    Latched,
    /// Best effort, keep last 1: `/clock`.
    Clock,
}

/// Severity of a log line (rosout levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// DEBUG
    Debug,
    /// INFO
    Info,
    /// WARN
    Warn,
    /// ERROR
    Error,
}

/// Publishes one message type on one topic.
pub trait Pub<M>: Send {
    /// Sends a message; a middleware failure is returned, not panicked on.
    fn publish(&self, m: M) -> Result<()>;
}

/// Receives one message type from one topic.
pub trait Sub<M>: Send {
    /// The next received sample: `None` when nothing is waiting, `Some(Err)` for a sample
    /// that could not be decoded (the caller logs it and goes on).
    fn take(&self) -> Option<std::result::Result<M, String>>;
}

/// Serves one service.
pub trait Server<Req, Resp>: Send {
    /// Identifies a request for its response.
    type Token: Send;
    /// The next request: `None` when none is waiting, `Some(Err)` when one did not decode.
    fn take(&self) -> Option<std::result::Result<(Self::Token, Req), String>>;
    /// Answers a request.
    fn respond(&self, token: Self::Token, response: Resp) -> Result<()>;
}

/// A node's connection to the ROS graph.
pub trait Transport: Send {
    /// Publisher type.
    type P<M: RosMessage>: Pub<M>;
    /// Subscription type.
    type S<M: RosMessage>: Sub<M>;
    /// Creates a publisher on a topic name relative to the node (namespace and remaps apply).
    fn publisher<M: RosMessage>(&mut self, topic: &str, qos: Qos) -> Result<Self::P<M>>;
    /// Creates a subscription.
    fn subscription<M: RosMessage>(&mut self, topic: &str, qos: Qos) -> Result<Self::S<M>>;
    /// Service server type.
    type Srv<Req: RosMessage, Resp: RosMessage>: Server<Req, Resp>;
    /// Offers the service `package/srv/service` under a name relative to the node.
    fn server<Req: RosMessage, Resp: RosMessage>(
        &mut self,
        name: &str,
        package: &str,
        service: &str,
    ) -> Result<Self::Srv<Req, Resp>>;
    /// Parameter changes accepted over the parameter services since the last call.
    fn param_changes(&mut self) -> Vec<(String, ParamValue)>;
    /// The current value of a parameter.
    fn param(&self, name: &str) -> Option<ParamValue>;
    /// Current ROS time, s (the `/clock` time when `use_sim_time` is on).
    fn now(&self) -> f64;
    /// Logs to stderr and `/rosout`.
    fn log(&self, level: Level, msg: &str);
    /// Fully qualified node name.
    fn fq_name(&self) -> String;
    /// The resolved (absolute) name of a topic given relative to the node.
    fn resolve(&self, topic: &str) -> String;
}
