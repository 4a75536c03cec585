//! The small interface node logic is written against. A backend (ros2-client over DDS here;
//! r2r later) adapts it; the nodes never name a middleware type.

use modbot_msgs::RosMessage;
use modbot_msgs::rosgraph_msgs::msg::Clock;

use crate::args::NodeIdentity;
use crate::error::Result;
use crate::params::ParamValue;

/// Quality of service, by purpose (the ROS 2 presets the nodes use). Every topic's choice is
/// in the table of decision record 0043.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Qos {
    /// Best effort, volatile, keep last 5 (`rclcpp::SensorDataQoS`): high-rate sensor-like
    /// topics (a module's `sensors`) and the subscriptions to joint states, odometry,
    /// `cmd_vel` and `joy` (a best-effort reader matches a reliable or best-effort writer).
    SensorData,
    /// Reliable, volatile, keep last 10: commands, states, tf, and the published joint states
    /// and odometry (the ROS default, what a default-QoS subscriber asks for).
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

/// Calls one service: a request goes out at once, its response is claimed later by its id,
/// so a node's tick never waits on a server.
pub trait Client<Req, Resp>: Send {
    /// Identifies a request's response.
    type Id: Send + Clone + PartialEq + std::fmt::Debug;
    /// Sends a request; a middleware failure is returned, not panicked on.
    fn call(&self, request: &Req) -> Result<Self::Id>;
    /// The response to request `id` once it has come (then it is gone): `None` while none
    /// has, `Some(Err)` when it did not decode. A response nobody claims is dropped after
    /// [`UNCLAIMED_RESPONSES`] newer ones, so a client cannot grow without bound.
    fn response(&self, id: &Self::Id) -> Option<std::result::Result<Resp, String>>;
}

/// Responses a client keeps for requests not yet claimed, at most.
pub const UNCLAIMED_RESPONSES: usize = 64;

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
    /// Service client type.
    type Cli<Req: RosMessage, Resp: RosMessage>: Client<Req, Resp>;
    /// A client of the service `package/srv/service` under a name relative to the node.
    fn client<Req: RosMessage, Resp: RosMessage>(
        &mut self,
        name: &str,
        package: &str,
        service: &str,
    ) -> Result<Self::Cli<Req, Resp>>;
    /// Parameter changes accepted over the parameter services since the last call.
    fn param_changes(&mut self) -> Vec<(String, ParamValue)>;
    /// The current value of a parameter.
    fn param(&self, name: &str) -> Option<ParamValue>;
    /// Current ROS time, s (the `/clock` time when `use_sim_time` is on).
    fn now(&self) -> f64;
    /// Logs to stderr and `/rosout`.
    fn log(&self, level: Level, msg: &str);
    /// The node's name, namespace and remaps.
    fn identity(&self) -> &NodeIdentity;
    /// Fully qualified node name.
    fn fq_name(&self) -> String {
        self.identity().fq_name()
    }
    /// The resolved (absolute) name of a topic given relative to the node.
    fn resolve(&self, topic: &str) -> String {
        self.identity().resolve(topic)
    }
}

/// A node's connection lent to a part that keeps it for a while (the robot interface's
/// binding, a fault wrapper), the node having it back afterwards.
impl<T: Transport> Transport for &mut T {
    type P<M: RosMessage> = T::P<M>;
    type S<M: RosMessage> = T::S<M>;
    type Srv<Req: RosMessage, Resp: RosMessage> = T::Srv<Req, Resp>;
    type Cli<Req: RosMessage, Resp: RosMessage> = T::Cli<Req, Resp>;
    fn publisher<M: RosMessage>(&mut self, topic: &str, qos: Qos) -> Result<Self::P<M>> {
        (**self).publisher(topic, qos)
    }
    fn subscription<M: RosMessage>(&mut self, topic: &str, qos: Qos) -> Result<Self::S<M>> {
        (**self).subscription(topic, qos)
    }
    fn server<Req: RosMessage, Resp: RosMessage>(
        &mut self,
        name: &str,
        package: &str,
        service: &str,
    ) -> Result<Self::Srv<Req, Resp>> {
        (**self).server(name, package, service)
    }
    fn client<Req: RosMessage, Resp: RosMessage>(
        &mut self,
        name: &str,
        package: &str,
        service: &str,
    ) -> Result<Self::Cli<Req, Resp>> {
        (**self).client(name, package, service)
    }
    fn param_changes(&mut self) -> Vec<(String, ParamValue)> {
        (**self).param_changes()
    }
    fn param(&self, name: &str) -> Option<ParamValue> {
        (**self).param(name)
    }
    fn now(&self) -> f64 {
        (**self).now()
    }
    fn log(&self, level: Level, msg: &str) {
        (**self).log(level, msg);
    }
    fn identity(&self) -> &NodeIdentity {
        (**self).identity()
    }
}

/// One node's connection shared by parts that each hold it at once (mission_node's robot
/// interface binding, its planner client and its progress log, all alive while the mission
/// runs): every call takes the connection for its own duration only.
pub struct Shared<T: Transport> {
    inner: std::sync::Arc<std::sync::Mutex<T>>,
    identity: NodeIdentity,
}

impl<T: Transport> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared {
            inner: std::sync::Arc::clone(&self.inner),
            identity: self.identity.clone(),
        }
    }
}

impl<T: Transport> Shared<T> {
    /// Shares `t`.
    pub fn new(t: T) -> Shared<T> {
        let identity = t.identity().clone();
        Shared {
            inner: std::sync::Arc::new(std::sync::Mutex::new(t)),
            identity,
        }
    }

    /// The connection, for one call. A part that panicked while holding it left nothing half
    /// done that the next call could trip on (each call is whole), so a poisoned lock is
    /// taken as it is.
    fn node(&self) -> std::sync::MutexGuard<'_, T> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl<T: Transport> Transport for Shared<T> {
    type P<M: RosMessage> = T::P<M>;
    type S<M: RosMessage> = T::S<M>;
    type Srv<Req: RosMessage, Resp: RosMessage> = T::Srv<Req, Resp>;
    type Cli<Req: RosMessage, Resp: RosMessage> = T::Cli<Req, Resp>;
    fn publisher<M: RosMessage>(&mut self, topic: &str, qos: Qos) -> Result<Self::P<M>> {
        self.node().publisher(topic, qos)
    }
    fn subscription<M: RosMessage>(&mut self, topic: &str, qos: Qos) -> Result<Self::S<M>> {
        self.node().subscription(topic, qos)
    }
    fn server<Req: RosMessage, Resp: RosMessage>(
        &mut self,
        name: &str,
        package: &str,
        service: &str,
    ) -> Result<Self::Srv<Req, Resp>> {
        self.node().server(name, package, service)
    }
    fn client<Req: RosMessage, Resp: RosMessage>(
        &mut self,
        name: &str,
        package: &str,
        service: &str,
    ) -> Result<Self::Cli<Req, Resp>> {
        self.node().client(name, package, service)
    }
    fn param_changes(&mut self) -> Vec<(String, ParamValue)> {
        self.node().param_changes()
    }
    fn param(&self, name: &str) -> Option<ParamValue> {
        self.node().param(name)
    }
    fn now(&self) -> f64 {
        self.node().now()
    }
    fn log(&self, level: Level, msg: &str) {
        self.node().log(level, msg);
    }
    fn identity(&self) -> &NodeIdentity {
        &self.identity
    }
}

/// Wall-clock time, s since the Unix epoch (ROS time without `use_sim_time`).
pub fn wall_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Simulated time from a `/clock` subscription (rosgraph_msgs/Clock): the latest stamp.
pub struct SimClock<S> {
    sub: S,
    last: std::cell::Cell<f64>,
}

impl<S: Sub<Clock>> SimClock<S> {
    /// Time 0 until the first `/clock` sample.
    pub fn new(sub: S) -> SimClock<S> {
        SimClock {
            sub,
            last: std::cell::Cell::new(0.0),
        }
    }

    /// The latest `/clock` time, s (undecodable samples are skipped).
    pub fn now(&self) -> f64 {
        while let Some(r) = self.sub.take() {
            if let Ok(c) = r {
                self.last.set(c.clock.as_secs_f64());
            }
        }
        self.last.get()
    }
}

/// Longest log line a node writes, bytes: refusals quote what they refuse, and a 1 MB gait
/// name must not become a 1 MB line on stderr and /rosout (issue 18).
pub const MAX_LOG_BYTES: usize = 1024;

/// `msg` cut to [`MAX_LOG_BYTES`] at a character boundary, saying how long it was. Every
/// backend's [`Transport::log`] passes its line through it.
pub fn capped(msg: &str) -> std::borrow::Cow<'_, str> {
    capped_at(msg, MAX_LOG_BYTES)
}

/// `msg` cut to at most `max` bytes at a character boundary, saying how long it was.
pub fn capped_at(msg: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if msg.len() <= max {
        return std::borrow::Cow::Borrowed(msg);
    }
    let mut end = max;
    while !msg.is_char_boundary(end) {
        end -= 1;
    }
    std::borrow::Cow::Owned(format!("{}… ({} bytes in all)", &msg[..end], msg.len()))
}

/// The stderr side of [`Transport::log`], the same on every backend: `[fq] msg` at `level`.
pub fn trace(level: Level, fq: &str, msg: &str) {
    match level {
        Level::Debug => tracing::debug!("[{fq}] {msg}"),
        Level::Info => tracing::info!("[{fq}] {msg}"),
        Level::Warn => tracing::warn!("[{fq}] {msg}"),
        Level::Error => tracing::error!("[{fq}] {msg}"),
    }
}

/// Rate-limited logging for input a node drops (undecodable or invalid samples): one line
/// per key and period of node time ([`Transport::now`]), the next one saying how many were
/// suppressed in between, so a flood of garbage cannot flood the log.
#[derive(Debug, Clone)]
pub struct Throttle {
    period_s: f64,
    last: std::collections::BTreeMap<&'static str, (f64, u64)>,
}

impl Throttle {
    /// At most one line per key every `period_s` seconds.
    pub fn new(period_s: f64) -> Throttle {
        Throttle {
            period_s,
            last: Default::default(),
        }
    }

    /// Logs `msg` under `key` unless that key logged less than a period ago (a clock going
    /// back logs). Returns whether it logged.
    pub fn log<T: Transport>(&mut self, t: &T, key: &'static str, level: Level, msg: &str) -> bool {
        let now = t.now();
        let entry = self.last.entry(key).or_insert((f64::NEG_INFINITY, 0));
        if now >= entry.0 && now - entry.0 < self.period_s {
            entry.1 += 1;
            return false;
        }
        let suppressed = std::mem::replace(entry, (now, 0)).1;
        if suppressed > 0 {
            // Capped before the count is added, so the count survives the cap.
            t.log(
                level,
                &format!("{} ({suppressed} more like it suppressed)", capped(msg)),
            );
        } else {
            t.log(level, msg);
        }
        true
    }
}
