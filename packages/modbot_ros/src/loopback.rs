//! An in-memory [`Transport`]: a bus in the test's process that several nodes join, so node
//! run loops are tested end to end without DDS (no participant, no network namespace).
//!
//! ```
//! use modbot_msgs::std_msgs::msg::String as StringMsg;
//! use modbot_ros::loopback::{LoopbackBus, identity};
//! use modbot_ros::{Pub, Qos, Sub, Transport};
//!
//! let bus = LoopbackBus::new();
//! let mut a = bus.node(identity("talker", "/robot"));
//! let mut b = bus.node(identity("listener", "/robot"));
//! let sub = b.subscription::<StringMsg>("chatter", Qos::Reliable)?;
//! a.publisher::<StringMsg>("chatter", Qos::Reliable)?.publish(StringMsg { data: "hi".into() })?;
//! assert_eq!(sub.take().map(|m| m.map(|m| m.data)), Some(Ok("hi".into())));
//! # Ok::<(), modbot_ros::RosError>(())
//! ```
//!
//! What it keeps of DDS, so tests catch what a real graph would:
//! - Topics by resolved name (namespaces and remaps apply, [`NodeIdentity::resolve`]).
//! - Every sample goes through the same CDR encoding and decoding as on the wire
//!   (`modbot_msgs::cdr`, bounds checked), so a type whose layout does not match the
//!   reader's decodes as an error at `take`, as DDS delivers it; endpoints of two different
//!   ROS type names on one topic are refused at creation (DDS would never match them).
//! - QoS matching by request/offer: a reliable reader gets nothing from a best-effort
//!   writer, a transient-local reader nothing from a volatile writer; transient-local
//!   writers keep their last sample for late transient-local readers (latching).
//! - Each reader's queue is keep-last with its QoS depth (sensor data 5, reliable 10,
//!   latched and clock 1); older samples are dropped and counted, so nothing grows without
//!   bound. Service requests keep the last 10, unclaimed responses the last 64, logs the
//!   last 10 000 lines.
//!
//! What the test controls: the clock ([`LoopbackBus::set_now`], [`LoopbackBus::advance`];
//! it starts at 0 and only moves when told), parameters ([`LoopbackBus::set_param`],
//! validated like the parameter service does), service calls ([`LoopbackClient`]), the
//! captured log ([`LoopbackBus::logs`]) and the graph: every topic with its type, publishers
//! and subscribers ([`LoopbackBus::topics`]).

use std::collections::{BTreeMap, VecDeque};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use modbot_msgs::RosMessage;
use modbot_msgs::cdr;

use crate::args::NodeIdentity;
use crate::error::{Result, RosError};
use crate::params::{NodeConfig, ParamMap, ParamValue, with_assignment};
use crate::transport::{Client, Level, Pub, Qos, Server, Sub, Transport, UNCLAIMED_RESPONSES, trace};

const LOG_LINES: usize = 10_000;
const SERVICE_DEPTH: usize = 10;

/// A node with this name and namespace, no remaps.
pub fn identity(name: &str, namespace: &str) -> NodeIdentity {
    NodeIdentity {
        name: name.into(),
        namespace: namespace.into(),
        remaps: Vec::new(),
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One captured log line.
#[derive(Debug, Clone, PartialEq)]
pub struct LogLine {
    /// Fully qualified node name.
    pub node: String,
    /// Severity.
    pub level: Level,
    /// Text.
    pub msg: String,
}

#[derive(Debug)]
struct Queue {
    depth: usize,
    items: VecDeque<Vec<u8>>,
    dropped: u64,
}

impl Queue {
    fn push(&mut self, bytes: Vec<u8>) {
        if self.items.len() == self.depth {
            self.items.pop_front();
            self.dropped += 1;
        }
        self.items.push_back(bytes);
    }
}

#[derive(Debug, Default)]
struct Topic {
    ty: String,
    /// The QoS of every publisher created on the topic (publishers are never removed).
    writers: Vec<Qos>,
    /// The QoS of every subscription created on the topic (dropped ones included).
    subscribed: Vec<Qos>,
    readers: Vec<(Qos, Weak<Mutex<Queue>>)>,
    latched: Option<Vec<u8>>,
}

#[derive(Debug, Default)]
struct Service {
    types: (String, String),
    next_id: u64,
    requests: VecDeque<(u64, Vec<u8>)>,
    responses: BTreeMap<u64, Vec<u8>>,
}

type Validator = fn(&ParamMap, &str, &ParamValue) -> std::result::Result<ParamMap, String>;

#[derive(Debug)]
struct Params {
    values: ParamMap,
    changes: Vec<(String, ParamValue)>,
    validate: Option<Validator>,
}

#[derive(Debug, Default)]
struct Bus {
    now: f64,
    topics: BTreeMap<String, Topic>,
    services: BTreeMap<String, Service>,
    params: BTreeMap<String, Arc<Mutex<Params>>>,
    logs: VecDeque<LogLine>,
}

fn reliable(q: Qos) -> bool {
    matches!(q, Qos::Reliable | Qos::Latched)
}

/// Whether a writer offering `w` matches a reader requesting `r` (DDS request/offer).
pub fn compatible(w: Qos, r: Qos) -> bool {
    (reliable(w) || !reliable(r)) && (w == Qos::Latched || r != Qos::Latched)
}

fn depth(q: Qos) -> usize {
    match q {
        Qos::SensorData => 5,
        Qos::Reliable => 10,
        Qos::Latched | Qos::Clock => 1,
    }
}

impl Bus {
    fn topic<M: RosMessage>(&mut self, name: &str) -> Result<&mut Topic> {
        let t = self.topics.entry(name.to_string()).or_default();
        if t.ty.is_empty() {
            t.ty = M::ros_type();
        } else if t.ty != M::ros_type() {
            return Err(RosError::Middleware(format!(
                "topic `{name}` carries {}, not {}",
                t.ty,
                M::ros_type()
            )));
        }
        Ok(t)
    }

    fn service<Req: RosMessage, Resp: RosMessage>(&mut self, name: &str) -> Result<&mut Service> {
        let types = (Req::ros_type(), Resp::ros_type());
        let s = self.services.entry(name.to_string()).or_insert_with(|| Service {
            types: types.clone(),
            ..Default::default()
        });
        if s.types != types {
            return Err(RosError::Middleware(format!(
                "service `{name}` is {:?}, not {types:?}",
                s.types
            )));
        }
        Ok(s)
    }
}

/// The in-process bus: topics, services, parameters, the clock and the log of every node
/// that joined it. Cloning shares the bus.
#[derive(Debug, Clone, Default)]
pub struct LoopbackBus {
    bus: Arc<Mutex<Bus>>,
}

impl LoopbackBus {
    /// An empty bus at time 0.
    pub fn new() -> LoopbackBus {
        LoopbackBus::default()
    }

    /// A node on the bus with no parameters of its own.
    pub fn node(&self, identity: NodeIdentity) -> LoopbackNode {
        self.join(identity, ParamMap::new(), None)
    }

    /// A node on the bus with the parameters `params` (e.g. from
    /// [`crate::params::resolve`]); later [`LoopbackBus::set_param`] calls are validated
    /// by `C` as the parameter service validates them.
    pub fn node_with_params<C: NodeConfig>(&self, identity: NodeIdentity, params: ParamMap) -> LoopbackNode {
        self.join(identity, params, Some(with_assignment::<C>))
    }

    fn join(&self, id: NodeIdentity, values: ParamMap, validate: Option<Validator>) -> LoopbackNode {
        let params = Arc::new(Mutex::new(Params {
            values,
            changes: Vec::new(),
            validate,
        }));
        lock(&self.bus).params.insert(id.fq_name(), Arc::clone(&params));
        LoopbackNode {
            bus: self.clone(),
            id,
            params,
        }
    }

    /// Current time, s.
    pub fn now(&self) -> f64 {
        lock(&self.bus).now
    }

    /// Sets the time every node on the bus reads, s.
    pub fn set_now(&self, t: f64) {
        lock(&self.bus).now = t;
    }

    /// Moves the clock on by `dt` seconds.
    pub fn advance(&self, dt: f64) {
        lock(&self.bus).now += dt;
    }

    /// Sets a parameter of the node `fq_node` (`/ns/name`) as `ros2 param set` would: the
    /// node's configuration validates it, and the node sees it in `param_changes`.
    pub fn set_param(&self, fq_node: &str, name: &str, value: ParamValue) -> std::result::Result<(), String> {
        let p = lock(&self.bus)
            .params
            .get(fq_node)
            .cloned()
            .ok_or_else(|| format!("no node `{fq_node}` on the bus"))?;
        let mut p = lock(&p);
        let next = match p.validate {
            Some(v) => v(&p.values, name, &value)?,
            None => return Err(format!("node `{fq_node}` declares no parameter `{name}`")),
        };
        let applied = next.get(name).cloned().unwrap_or(value);
        p.values = next;
        p.changes.push((name.to_string(), applied));
        Ok(())
    }

    /// Every captured log line (the last 10 000), oldest first.
    pub fn logs(&self) -> Vec<LogLine> {
        lock(&self.bus).logs.iter().cloned().collect()
    }

    /// Samples dropped so far from full reader queues of a topic (resolved name).
    pub fn dropped(&self, topic: &str) -> u64 {
        let b = lock(&self.bus);
        b.topics.get(topic).map_or(0, |t| {
            t.readers
                .iter()
                .filter_map(|(_, q)| q.upgrade())
                .map(|q| lock(&q).dropped)
                .sum()
        })
    }
}

/// A topic of the bus as a graph query (`ros2 topic info -v`) sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct TopicInfo {
    /// Resolved name.
    pub name: String,
    /// ROS type name, e.g. `nav_msgs/msg/Odometry`.
    pub ty: String,
    /// The QoS each publisher offers (every publisher created, dropped or not).
    pub publishers: Vec<Qos>,
    /// The QoS each subscription requests (every subscription created, dropped or not).
    pub subscribers: Vec<Qos>,
}

impl LoopbackBus {
    /// Every topic a node (or a test) has created a publisher or a subscription on, by name:
    /// the graph's topics, types and endpoints.
    pub fn topics(&self) -> Vec<TopicInfo> {
        lock(&self.bus)
            .topics
            .iter()
            .map(|(name, t)| TopicInfo {
                name: name.clone(),
                ty: t.ty.clone(),
                publishers: t.writers.clone(),
                subscribers: t.subscribed.clone(),
            })
            .collect()
    }

    /// Every service a node has created, by name, with its type (`pkg/srv/Name`).
    pub fn services(&self) -> Vec<(String, String)> {
        lock(&self.bus)
            .services
            .iter()
            .map(|(name, s)| {
                let ty = s.types.0.strip_suffix("_Request").unwrap_or(&s.types.0).to_string();
                (name.clone(), ty)
            })
            .collect()
    }
}

/// One node's view of a [`LoopbackBus`].
#[derive(Debug)]
pub struct LoopbackNode {
    bus: LoopbackBus,
    id: NodeIdentity,
    params: Arc<Mutex<Params>>,
}

/// A publisher on the loopback bus.
pub struct LoopbackPub<M> {
    bus: LoopbackBus,
    topic: String,
    qos: Qos,
    _m: PhantomData<fn(M)>,
}

/// A subscription on the loopback bus: its own keep-last queue of CDR samples.
pub struct LoopbackSub<M> {
    queue: Arc<Mutex<Queue>>,
    _m: PhantomData<fn() -> M>,
}

/// A service server on the loopback bus.
pub struct LoopbackServer<Req, Resp> {
    bus: LoopbackBus,
    name: String,
    _m: PhantomData<fn(Resp) -> Req>,
}

/// A service client on the loopback bus.
pub struct LoopbackClient<Req, Resp> {
    bus: LoopbackBus,
    name: String,
    _m: PhantomData<fn(Req) -> Resp>,
}

impl<M: RosMessage> Pub<M> for LoopbackPub<M> {
    fn publish(&self, m: M) -> Result<()> {
        let bytes = cdr::to_bytes(&m).map_err(|e| RosError::Middleware(format!("publish on `{}`: {e}", self.topic)))?;
        let mut b = lock(&self.bus.bus);
        let t = b.topic::<M>(&self.topic)?;
        t.readers.retain(|(_, q)| q.strong_count() > 0);
        for (qos, q) in &t.readers {
            if let Some(q) = q.upgrade().filter(|_| compatible(self.qos, *qos)) {
                lock(&q).push(bytes.clone());
            }
        }
        if self.qos == Qos::Latched {
            t.latched = Some(bytes);
        }
        Ok(())
    }
}

impl<M: RosMessage> Sub<M> for LoopbackSub<M> {
    fn take(&self) -> Option<std::result::Result<M, String>> {
        let bytes = lock(&self.queue).items.pop_front()?;
        Some(cdr::from_bytes::<M>(&bytes).map_err(|e| e.to_string()))
    }
}

impl<Req: RosMessage, Resp: RosMessage> Server<Req, Resp> for LoopbackServer<Req, Resp> {
    type Token = u64;

    fn take(&self) -> Option<std::result::Result<(u64, Req), String>> {
        let mut b = lock(&self.bus.bus);
        let (id, bytes) = b.services.get_mut(&self.name)?.requests.pop_front()?;
        Some(
            cdr::from_bytes::<Req>(&bytes)
                .map(|r| (id, r))
                .map_err(|e| e.to_string()),
        )
    }

    fn respond(&self, token: u64, response: Resp) -> Result<()> {
        let bytes = cdr::to_bytes(&response).map_err(|e| RosError::Middleware(format!("service response: {e}")))?;
        let mut b = lock(&self.bus.bus);
        let s = b.service::<Req, Resp>(&self.name)?;
        s.responses.insert(token, bytes);
        while s.responses.len() > UNCLAIMED_RESPONSES {
            s.responses.pop_first();
        }
        Ok(())
    }
}

impl<Req: RosMessage, Resp: RosMessage> Client<Req, Resp> for LoopbackClient<Req, Resp> {
    type Id = u64;

    fn call(&self, request: &Req) -> Result<u64> {
        let bytes = cdr::to_bytes(request).map_err(|e| RosError::Middleware(format!("service request: {e}")))?;
        let mut b = lock(&self.bus.bus);
        let s = b.service::<Req, Resp>(&self.name)?;
        s.next_id += 1;
        let id = s.next_id;
        s.requests.push_back((id, bytes));
        while s.requests.len() > SERVICE_DEPTH {
            s.requests.pop_front();
        }
        Ok(id)
    }

    fn response(&self, id: &u64) -> Option<std::result::Result<Resp, String>> {
        let bytes = lock(&self.bus.bus).services.get_mut(&self.name)?.responses.remove(id)?;
        Some(cdr::from_bytes::<Resp>(&bytes).map_err(|e| e.to_string()))
    }
}

impl LoopbackNode {
    /// The bus this node is on.
    pub fn bus(&self) -> &LoopbackBus {
        &self.bus
    }
}

impl Transport for LoopbackNode {
    type P<M: RosMessage> = LoopbackPub<M>;
    type S<M: RosMessage> = LoopbackSub<M>;
    type Srv<Req: RosMessage, Resp: RosMessage> = LoopbackServer<Req, Resp>;
    type Cli<Req: RosMessage, Resp: RosMessage> = LoopbackClient<Req, Resp>;

    fn client<Req: RosMessage, Resp: RosMessage>(
        &mut self,
        name: &str,
        _package: &str,
        _service: &str,
    ) -> Result<LoopbackClient<Req, Resp>> {
        let name = self.resolve(name);
        lock(&self.bus.bus).service::<Req, Resp>(&name)?;
        Ok(LoopbackClient {
            bus: self.bus.clone(),
            name,
            _m: PhantomData,
        })
    }

    fn publisher<M: RosMessage>(&mut self, topic: &str, qos: Qos) -> Result<LoopbackPub<M>> {
        let topic = self.resolve(topic);
        lock(&self.bus.bus).topic::<M>(&topic)?.writers.push(qos);
        Ok(LoopbackPub {
            bus: self.bus.clone(),
            topic,
            qos,
            _m: PhantomData,
        })
    }

    fn subscription<M: RosMessage>(&mut self, topic: &str, qos: Qos) -> Result<LoopbackSub<M>> {
        let topic = self.resolve(topic);
        let mut b = lock(&self.bus.bus);
        let t = b.topic::<M>(&topic)?;
        let mut q = Queue {
            depth: depth(qos),
            items: VecDeque::new(),
            dropped: 0,
        };
        if let Some(l) = t.latched.as_ref().filter(|_| qos == Qos::Latched) {
            q.push(l.clone());
        }
        let queue = Arc::new(Mutex::new(q));
        t.readers.push((qos, Arc::downgrade(&queue)));
        t.subscribed.push(qos);
        Ok(LoopbackSub { queue, _m: PhantomData })
    }

    fn server<Req: RosMessage, Resp: RosMessage>(
        &mut self,
        name: &str,
        _package: &str,
        _service: &str,
    ) -> Result<LoopbackServer<Req, Resp>> {
        let name = self.resolve(name);
        lock(&self.bus.bus).service::<Req, Resp>(&name)?;
        Ok(LoopbackServer {
            bus: self.bus.clone(),
            name,
            _m: PhantomData,
        })
    }

    fn param_changes(&mut self) -> Vec<(String, ParamValue)> {
        std::mem::take(&mut lock(&self.params).changes)
    }

    fn param(&self, name: &str) -> Option<ParamValue> {
        lock(&self.params).values.get(name).cloned()
    }

    fn now(&self) -> f64 {
        self.bus.now()
    }

    fn log(&self, level: Level, msg: &str) {
        let msg = &*crate::transport::capped(msg);
        let node = self.id.fq_name();
        trace(level, &node, msg);
        let mut b = lock(&self.bus.bus);
        if b.logs.len() == LOG_LINES {
            b.logs.pop_front();
        }
        b.logs.push_back(LogLine {
            node,
            level,
            msg: msg.to_string(),
        });
    }

    fn identity(&self) -> &NodeIdentity {
        &self.id
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use modbot_msgs::modbot_msgs::srv::{Plan_Request, Plan_Response};
    use modbot_msgs::std_msgs::msg::{Float64MultiArray, String as StringMsg};

    fn s(x: &str) -> StringMsg {
        StringMsg { data: x.into() }
    }

    fn drain<M: RosMessage>(sub: &impl Sub<M>) -> Vec<std::result::Result<M, String>> {
        std::iter::from_fn(|| sub.take()).collect()
    }

    /// Issue 18: a node refusing a flood of 1 MB garbage logs one capped line per period,
    /// not every refusal in full (gait_node went to 1.5 GB of log in 30 s).
    #[test]
    fn refusal_logs_are_capped_and_rate_limited() {
        let bus = LoopbackBus::new();
        let node = bus.node(identity("gait_node", "/r1"));
        let mut throttle = crate::transport::Throttle::new(5.0);
        // A two-byte character across byte 1024: the cut falls on a character boundary.
        let huge = format!(
            "gait command refused: unknown gait `{}{}`",
            "x".repeat(1001),
            "é".repeat(1 << 19)
        );
        let logged = (0..1000)
            .filter(|_| throttle.log(&node, "refused", Level::Warn, &huge))
            .count();
        assert_eq!(logged, 1, "one line in the period");
        let logs = bus.logs();
        assert_eq!(logs.len(), 1);
        let line = &logs[0].msg;
        assert!(
            line.len() <= crate::transport::MAX_LOG_BYTES + 40,
            "{} bytes",
            line.len()
        );
        assert!(
            line.ends_with(&format!("({} bytes in all)", huge.len())),
            "{}",
            &line[line.len() - 40..]
        );
    }

    /// Names resolve per node (namespace, remap); each reader keeps the last `depth`.
    #[test]
    fn topics_resolve_and_queues_keep_the_last_depth() {
        let bus = LoopbackBus::new();
        let mut a = bus.node(identity("a", "/r1"));
        let mut remapped = identity("b", "/r2");
        remapped.remaps.push(("in".into(), "/r1/out".into()));
        let mut b = bus.node(remapped);
        let fast = b.subscription::<StringMsg>("in", Qos::SensorData).expect("sub");
        let slow = b.subscription::<StringMsg>("/r1/out", Qos::Reliable).expect("sub");
        let other = b.subscription::<StringMsg>("out", Qos::Reliable).expect("sub");
        let p = a.publisher::<StringMsg>("out", Qos::SensorData).expect("pub");
        for i in 0..12 {
            p.publish(s(&i.to_string())).expect("publish");
        }
        let got: Vec<String> = drain(&fast).into_iter().map(|m| m.expect("decodes").data).collect();
        assert_eq!(got, ["7", "8", "9", "10", "11"], "keep last 5");
        assert!(
            drain(&slow).is_empty(),
            "a reliable reader does not match a best-effort writer"
        );
        assert!(drain(&other).is_empty(), "/r2/out is another topic");
        assert_eq!(bus.dropped("/r1/out"), 7);
        let p = a.publisher::<StringMsg>("out", Qos::Reliable).expect("pub");
        for i in 0..12 {
            p.publish(s(&i.to_string())).expect("publish");
        }
        assert_eq!(drain(&slow).len(), 10, "keep last 10");
        drop(fast);
        p.publish(s("x")).expect("publish to a dropped reader is fine");
    }

    /// A latched writer's last sample reaches late latched readers only.
    #[test]
    fn latched_samples_reach_late_joiners() {
        let bus = LoopbackBus::new();
        let mut n = bus.node(identity("n", "/"));
        let p = n.publisher::<StringMsg>("desc", Qos::Latched).expect("pub");
        p.publish(s("one")).expect("publish");
        p.publish(s("two")).expect("publish");
        let late = n.subscription::<StringMsg>("desc", Qos::Latched).expect("sub");
        let volatile = n.subscription::<StringMsg>("desc", Qos::Reliable).expect("sub");
        assert_eq!(late.take().map(|m| m.map(|m| m.data)), Some(Ok("two".into())));
        assert!(late.take().is_none() && volatile.take().is_none());
        let v = n.publisher::<StringMsg>("desc", Qos::Reliable).expect("pub");
        v.publish(s("three")).expect("publish");
        assert!(
            late.take().is_none(),
            "a transient-local reader ignores a volatile writer"
        );
        assert!(volatile.take().is_some());
    }

    /// A different ROS type on a topic is refused; a type that claims the same name but has
    /// another layout decodes as an error, as it would from DDS.
    #[test]
    fn type_mismatches_are_caught() {
        #[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
        struct Fake {
            word: u8,
        }
        impl RosMessage for Fake {
            const PACKAGE: &'static str = "std_msgs";
            const NAME: &'static str = "Float64MultiArray";
            const FIELDS: &'static [(&'static str, &'static str)] = &[("word", "uint8")];
            const DEFINITION: &'static str = "uint8 word\n";
        }
        let bus = LoopbackBus::new();
        let mut n = bus.node(identity("n", "/"));
        let sub = n.subscription::<Float64MultiArray>("cmd", Qos::Reliable).expect("sub");
        let e = n.publisher::<StringMsg>("cmd", Qos::Reliable).err().expect("refused");
        assert!(e.to_string().contains("std_msgs/msg/Float64MultiArray"), "{e}");
        n.publisher::<Fake>("cmd", Qos::Reliable)
            .expect("same type name")
            .publish(Fake { word: 7 })
            .expect("publish");
        let got = sub.take().expect("a sample");
        assert!(got.is_err(), "{got:?}");
    }

    /// Requests and responses go by id through CDR; parameters are validated and reported.
    #[test]
    fn services_parameters_clock_and_logs() {
        let bus = LoopbackBus::new();
        let mut srv_node = bus.node(identity("planner", "/m"));
        let mut cli_node = bus.node(identity("probe", "/"));
        let srv = srv_node
            .server::<Plan_Request, Plan_Response>("plan", "modbot_msgs", "Plan")
            .expect("server");
        let cli = cli_node
            .client::<Plan_Request, Plan_Response>("/m/plan", "modbot_msgs", "Plan")
            .expect("client");
        let mut req = Plan_Request::default();
        req.goal.pose.position.x = 2.5;
        let id = cli.call(&req).expect("call");
        assert!(cli.response(&id).is_none());
        let (token, r) = srv.take().expect("request").expect("decodes");
        assert_eq!(r.goal.pose.position.x, 2.5);
        srv.respond(
            token,
            Plan_Response {
                success: true,
                ..Default::default()
            },
        )
        .expect("respond");
        assert!(cli.response(&id).expect("answered").expect("decodes").success);
        assert!(
            cli_node
                .client::<Plan_Response, Plan_Request>("/m/plan", "modbot_msgs", "Plan")
                .is_err()
        );

        let e = bus
            .set_param("/m/planner", "mode", ParamValue::Str("x".into()))
            .expect_err("no decls");
        assert!(e.contains("mode"), "{e}");
        assert!(bus.set_param("/nobody", "x", ParamValue::Bool(true)).is_err());
        assert_eq!(srv_node.now(), 0.0);
        bus.advance(1.5);
        bus.set_now(bus.now() + 1.0);
        assert_eq!(cli_node.now(), 2.5);
        srv_node.log(Level::Warn, "careful");
        assert_eq!(
            bus.logs(),
            vec![LogLine {
                node: "/m/planner".into(),
                level: Level::Warn,
                msg: "careful".into()
            }]
        );
    }
}
