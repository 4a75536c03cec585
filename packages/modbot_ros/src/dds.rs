//! The default backend: ros2-client (RustDDS), pure Rust, no ROS install.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;

use modbot_msgs::RosMessage;
use modbot_msgs::rosgraph_msgs::msg::Clock;
use ros2_client::qos::{Durability, History, Reliability, WhenFull};
use ros2_client::rosout::RosoutRaw;
use ros2_client::{Context, MessageTypeName, Name, Node, NodeName, NodeOptions, QosProfile};

use crate::args::{NodeIdentity, RosArgs};
use crate::error::{Result, RosError};
use crate::param_service::{self, ParamReader, ParamServers, ParamStore};
use crate::params::{NodeConfig, ParamMap, ParamValue};
use crate::transport::{
    Client, Level, Pub, Qos, Server, SimClock, Sub, Transport, UNCLAIMED_RESPONSES, trace, wall_now,
};
use ros2_client::service::request_id::RmwRequestId;

fn profile(q: Qos) -> QosProfile {
    let base = QosProfile::publisher_default();
    match q {
        Qos::SensorData => base
            .reliability(Reliability::BestEffort)
            .durability(Durability::Volatile)
            .history(History::KeepLast { depth: 5 }),
        Qos::Reliable => base
            .reliability(Reliability::Reliable {
                when_full: WhenFull::DEFAULT,
            })
            .durability(Durability::Volatile)
            .history(History::KeepLast { depth: 10 }),
        Qos::Latched => base
            .reliability(Reliability::Reliable {
                when_full: WhenFull::DEFAULT,
            })
            .durability(Durability::TransientLocal)
            .history(History::KeepLast { depth: 1 }),
        Qos::Clock => base
            .reliability(Reliability::BestEffort)
            .durability(Durability::Volatile)
            .history(History::KeepLast { depth: 1 }),
    }
}

/// A node on ros2-client.
pub struct DdsTransport {
    node: Node,
    id: NodeIdentity,
    changes: Receiver<(String, ParamValue)>,
    /// The node's parameters as its services hold them.
    params: ParamReader,
    /// `/clock` (rosgraph_msgs/Clock) when `use_sim_time` was on at start.
    clock: Option<SimClock<DdsSub<Clock>>>,
    /// Stops the parameter service thread when the node goes.
    stop: Arc<AtomicBool>,
}

impl Drop for DdsTransport {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Splits an absolute topic name into the namespace and base ros2-client wants.
fn to_name(resolved: &str) -> Result<Name> {
    let (ns, base) = resolved.rsplit_once('/').unwrap_or(("", resolved));
    let ns = if ns.is_empty() { "/" } else { ns };
    Name::new(ns, base).map_err(|e| RosError::Middleware(format!("topic `{resolved}`: {e:?}")))
}

impl DdsTransport {
    /// Starts a node: name and namespace from `--ros-args` (or the defaults given), the
    /// parameters `C` declares with their start-up values, the rcl_interfaces parameter
    /// services (set calls validated by `C`; [`crate::param_service`]), rosout, and `/clock`
    /// when `use_sim_time` is set.
    ///
    /// ros2-client's spinner is not run: it would serve the parameter services too, but it
    /// also subscribes `/clock` with the type builtin_interfaces/Time, which gave `/clock` a
    /// second type in the ROS graph (decision record 0045). Nothing else of ours needs it:
    /// DDS discovery runs in RustDDS's own thread and the node's entities are announced on
    /// `ros_discovery_info` as they are created.
    pub fn start<C: NodeConfig>(default_name: &str, args: &RosArgs, start: &ParamMap) -> Result<DdsTransport> {
        let id = NodeIdentity::new(default_name, args)?;
        let domain: u16 = match std::env::var("ROS_DOMAIN_ID") {
            Ok(s) if !s.trim().is_empty() => s
                .trim()
                .parse()
                .ok()
                .filter(|d| *d <= 232)
                .ok_or_else(|| RosError::Args(format!("ROS_DOMAIN_ID `{s}` is not a domain id (0..232)")))?,
            _ => 0,
        };
        let ctx = Context::with_options(ros2_client::context::ContextOptions::new().domain_id(domain))
            .map_err(|e| RosError::Middleware(format!("DDS participant: {e:?}")))?;
        let options = NodeOptions::new().enable_rosout(true).start_parameter_services(false);
        let node_name =
            NodeName::new(&id.namespace, &id.name).map_err(|e| RosError::Args(format!("node name: {e:?}")))?;
        let node = ctx
            .new_node(node_name, options)
            .map_err(|e| RosError::Middleware(format!("node {}: {e:?}", id.fq_name())))?;
        let (store, changes) = ParamStore::<C>::new(start);
        let store = Arc::new(store);
        let stop = Arc::new(AtomicBool::new(false));
        let mut t = DdsTransport {
            node,
            id,
            changes,
            params: store.reader(),
            clock: None,
            stop: Arc::clone(&stop),
        };
        let servers = ParamServers::create(&mut t)?;
        param_service::spawn(servers, store, stop)?;
        if matches!(start.get("use_sim_time"), Some(ParamValue::Bool(true))) {
            t.clock = Some(SimClock::new(t.subscription::<Clock>("/clock", Qos::Clock)?));
        }
        Ok(t)
    }

    /// A node named `name` in the root namespace with no parameters of its own: for
    /// probes, benchmarks and tools.
    pub fn plain(name: &str) -> Result<DdsTransport> {
        let args = RosArgs {
            node_name: Some(name.into()),
            ..Default::default()
        };
        DdsTransport::start::<crate::params::NoParams>(name, &args, &ParamMap::new())
    }

    fn topic<M: RosMessage>(
        &mut self,
        topic: &str,
        qos: Qos,
    ) -> Result<(ros2_client::dds::rustdds::Topic, QosProfile)> {
        let resolved = self.resolve(topic);
        let q = profile(qos);
        let t = self
            .node
            .create_topic(&to_name(&resolved)?, MessageTypeName::new(M::PACKAGE, M::NAME), &q)
            .map_err(|e| RosError::Middleware(format!("topic `{resolved}`: {e:?}")))?;
        Ok((t, q))
    }
}

/// ros2-client wants its own `Message` marker on service types; this transparent wrapper
/// carries it for any generated type (the CDR is the wrapped type's).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Wire<T>(pub T);

impl<T: RosMessage> ros2_client::Message for Wire<T> {}

/// ros2-client service server.
pub struct DdsServer<Req: RosMessage, Resp: RosMessage>(ros2_client::service::Server<Wire<Req>, Wire<Resp>>);

impl<Req: RosMessage, Resp: RosMessage> Server<Req, Resp> for DdsServer<Req, Resp> {
    type Token = RmwRequestId;

    fn take(&self) -> Option<std::result::Result<(Self::Token, Req), String>> {
        match self.0.receive_request() {
            Ok(Some((id, Wire(r)))) => Some(r.check_bounds().map(|()| (id, r))),
            Ok(None) => None,
            Err(e) => Some(Err(format!("{e:?}"))),
        }
    }

    fn respond(&self, token: Self::Token, response: Resp) -> Result<()> {
        self.0
            .send_response(token, Wire(response))
            .map_err(|e| RosError::Middleware(format!("service response: {e:?}")))
    }
}

/// ros2-client service client: responses that come for requests not yet claimed wait here
/// (at most [`UNCLAIMED_RESPONSES`], the oldest going first).
pub struct DdsClient<Req: RosMessage, Resp: RosMessage> {
    inner: ros2_client::service::Client<Wire<Req>, Wire<Resp>>,
    name: String,
    received: std::sync::Mutex<std::collections::VecDeque<(RmwRequestId, std::result::Result<Resp, String>)>>,
}

impl<Req: RosMessage, Resp: RosMessage> Client<Req, Resp> for DdsClient<Req, Resp> {
    type Id = RmwRequestId;

    fn call(&self, request: &Req) -> Result<RmwRequestId> {
        self.inner
            .send_request(Wire(request.clone()))
            .map_err(|e| RosError::Middleware(format!("request on `{}`: {e:?}", self.name)))
    }

    fn response(&self, id: &RmwRequestId) -> Option<std::result::Result<Resp, String>> {
        let mut received = self.received.lock().ok()?;
        loop {
            match self.inner.receive_response() {
                Ok(Some((rid, Wire(r)))) => received.push_back((rid, r.check_bounds().map(|()| r))),
                Ok(None) => break,
                // Undecodable: no id to give it to; the caller sees no answer and asks again.
                Err(_) => break,
            }
            while received.len() > UNCLAIMED_RESPONSES {
                received.pop_front();
            }
        }
        let at = received.iter().position(|(rid, _)| rid == id)?;
        received.remove(at).map(|(_, r)| r)
    }
}

/// ros2-client publisher.
pub struct DdsPub<M: RosMessage>(ros2_client::Publisher<M>, String);
/// ros2-client subscription.
pub struct DdsSub<M: RosMessage>(ros2_client::Subscription<M>);

impl<M: RosMessage> Pub<M> for DdsPub<M> {
    fn publish(&self, m: M) -> Result<()> {
        self.0
            .publish(m)
            .map_err(|e| RosError::Middleware(format!("publish on `{}`: {e:?}", self.1)))
    }
}

impl<M: RosMessage> Sub<M> for DdsSub<M> {
    fn take(&self) -> Option<std::result::Result<M, String>> {
        match self.0.take() {
            Ok(Some((m, _info))) => Some(m.check_bounds().map(|()| m)),
            Ok(None) => None,
            Err(e) => Some(Err(format!("{e:?}"))),
        }
    }
}

impl Transport for DdsTransport {
    type P<M: RosMessage> = DdsPub<M>;
    type S<M: RosMessage> = DdsSub<M>;

    fn publisher<M: RosMessage>(&mut self, topic: &str, qos: Qos) -> Result<DdsPub<M>> {
        let (t, q) = self.topic::<M>(topic, qos)?;
        let p = self
            .node
            .create_publisher::<M>(&t, Some(q))
            .map_err(|e| RosError::Middleware(format!("publisher `{topic}`: {e:?}")))?;
        Ok(DdsPub(p, self.resolve(topic)))
    }

    fn subscription<M: RosMessage>(&mut self, topic: &str, qos: Qos) -> Result<DdsSub<M>> {
        let (t, q) = self.topic::<M>(topic, qos)?;
        let s = self
            .node
            .create_subscription::<M>(&t, Some(q))
            .map_err(|e| RosError::Middleware(format!("subscription `{topic}`: {e:?}")))?;
        Ok(DdsSub(s))
    }

    type Srv<Req: RosMessage, Resp: RosMessage> = DdsServer<Req, Resp>;

    fn server<Req: RosMessage, Resp: RosMessage>(
        &mut self,
        name: &str,
        package: &str,
        service: &str,
    ) -> Result<DdsServer<Req, Resp>> {
        let resolved = self.resolve(name);
        let q = profile(Qos::Reliable);
        let s = self
            .node
            .create_server::<Wire<Req>, Wire<Resp>>(
                ros2_client::ServiceMapping::Enhanced,
                &to_name(&resolved)?,
                &ros2_client::ServiceTypeName::new(package, service),
                q.clone(),
                q,
            )
            .map_err(|e| RosError::Middleware(format!("service `{resolved}`: {e:?}")))?;
        Ok(DdsServer(s))
    }

    type Cli<Req: RosMessage, Resp: RosMessage> = DdsClient<Req, Resp>;

    fn client<Req: RosMessage, Resp: RosMessage>(
        &mut self,
        name: &str,
        package: &str,
        service: &str,
    ) -> Result<DdsClient<Req, Resp>> {
        let resolved = self.resolve(name);
        let q = profile(Qos::Reliable);
        let inner = self
            .node
            .create_client::<Wire<Req>, Wire<Resp>>(
                ros2_client::ServiceMapping::Enhanced,
                &to_name(&resolved)?,
                &ros2_client::ServiceTypeName::new(package, service),
                q.clone(),
                q,
            )
            .map_err(|e| RosError::Middleware(format!("client of `{resolved}`: {e:?}")))?;
        Ok(DdsClient {
            inner,
            name: resolved,
            received: Default::default(),
        })
    }

    fn param_changes(&mut self) -> Vec<(String, ParamValue)> {
        self.changes.try_iter().collect()
    }

    fn param(&self, name: &str) -> Option<ParamValue> {
        (self.params)(name)
    }

    fn now(&self) -> f64 {
        self.clock.as_ref().map_or_else(wall_now, SimClock::now)
    }

    fn log(&self, level: Level, msg: &str) {
        let msg = &*crate::transport::capped(msg);
        use ros2_client::log::Log;
        trace(level, &self.id.fq_name(), msg);
        let code = match level {
            Level::Debug => Log::DEBUG,
            Level::Info => Log::INFO,
            Level::Warn => Log::WARN,
            Level::Error => Log::ERROR,
        };
        if let Some(w) = self.node.rosout_writer().as_ref() {
            let _ = w.publish(Log {
                stamp: ros2_client::builtin_interfaces::Time::now(),
                level: code,
                name: self.id.logger(),
                msg: msg.to_string(),
                file: file!().to_string(),
                function: "modbot_ros".to_string(),
                line: line!(),
            });
        }
    }

    fn identity(&self) -> &NodeIdentity {
        &self.id
    }
}
