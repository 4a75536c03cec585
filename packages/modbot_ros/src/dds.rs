//! The default backend: ros2-client (RustDDS), pure Rust, no ROS install.

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

use modbot_msgs::RosMessage;
use modbot_msgs::rosgraph_msgs::msg::Clock;
use ros2_client::parameters::ParameterValue;
use ros2_client::qos::{Durability, History, Reliability, WhenFull};
use ros2_client::rosout::RosoutRaw;
use ros2_client::{Context, MessageTypeName, Name, Node, NodeName, NodeOptions, QosProfile};

use crate::args::{NodeIdentity, RosArgs};
use crate::error::{Result, RosError};
use crate::params::{NodeConfig, ParamMap, ParamValue, coerce, with_assignment};
use crate::transport::{Level, Pub, Qos, Server, SimClock, Sub, Transport, trace, wall_now};

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
    changes: Receiver<(String, ParameterValue)>,
    /// `/clock` (rosgraph_msgs/Clock) when `use_sim_time` was on at start: ros2-client's
    /// own clock reader uses the type builtin_interfaces/Time, which a ROS `/clock`
    /// publisher does not match (decision record 0015).
    clock: Option<SimClock<DdsSub<Clock>>>,
    _spinner: std::thread::JoinHandle<()>,
}

/// Splits an absolute topic name into the namespace and base ros2-client wants.
fn to_name(resolved: &str) -> Result<Name> {
    let (ns, base) = resolved.rsplit_once('/').unwrap_or(("", resolved));
    let ns = if ns.is_empty() { "/" } else { ns };
    Name::new(ns, base).map_err(|e| RosError::Middleware(format!("topic `{resolved}`: {e:?}")))
}

impl DdsTransport {
    /// Starts a node: name and namespace from `--ros-args` (or the defaults given), the
    /// parameters `C` declares with their start-up values, the parameter services (set
    /// calls validated by `C`), rosout, and `/clock` when `use_sim_time` is set.
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

        let current: Arc<Mutex<ParamMap>> = Arc::new(Mutex::new(start.clone()));
        let (tx, rx): (Sender<(String, ParameterValue)>, Receiver<_>) = channel();
        let tx = Mutex::new(tx);
        let validating = Arc::clone(&current);
        let applying = Arc::clone(&current);
        let mut options = NodeOptions::new()
            .enable_rosout(true)
            .start_parameter_services(true)
            .parameter_validator(Box::new(move |k: &str, v: &ParameterValue| {
                let pv = ParamValue::from_ros(v).ok_or_else(|| format!("parameter `{k}`: unsupported value type"))?;
                let current = validating.lock().map_err(|_| "parameter store poisoned".to_string())?;
                with_assignment::<C>(&current, k, &pv).map(|_| ())
            }))
            .parameter_set_action(Box::new(move |k: &str, v: &ParameterValue| {
                if let Some(pv) = ParamValue::from_ros(v).and_then(|pv| coerce::<C>(k, &pv).ok()) {
                    if let Ok(mut m) = applying.lock() {
                        m.insert(k.to_string(), pv);
                    }
                }
                if let Ok(t) = tx.lock() {
                    let _ = t.send((k.to_string(), v.clone()));
                }
                Ok(())
            }));
        for (k, v) in start {
            if k == "use_sim_time" {
                continue;
            }
            options = options.declare_parameter(k, ParameterValue::from(v));
        }
        let node_name =
            NodeName::new(&id.namespace, &id.name).map_err(|e| RosError::Args(format!("node name: {e:?}")))?;
        let mut node = ctx
            .new_node(node_name, options)
            .map_err(|e| RosError::Middleware(format!("node {}: {e:?}", id.fq_name())))?;
        if let Some(ParamValue::Bool(true)) = start.get("use_sim_time") {
            node.set_parameter("use_sim_time", ParameterValue::Boolean(true))
                .map_err(RosError::Params)?;
        }
        let spinner = node
            .spinner()
            .map_err(|e| RosError::Middleware(format!("spinner: {e:?}")))?;
        let handle = std::thread::Builder::new()
            .name("ros-spinner".into())
            .spawn(move || {
                if let Err(e) = futures::executor::block_on(spinner.spin()) {
                    tracing::error!("spinner stopped: {e:?}");
                }
            })
            .map_err(|e| RosError::Node(format!("spinner thread: {e}")))?;
        // The start-up changes made above are not news to the node.
        while rx.try_recv().is_ok() {}
        let mut t = DdsTransport {
            node,
            id,
            changes: rx,
            clock: None,
            _spinner: handle,
        };
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
    type Token = ros2_client::service::request_id::RmwRequestId;

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

    fn param_changes(&mut self) -> Vec<(String, ParamValue)> {
        let mut out = Vec::new();
        while let Ok((k, v)) = self.changes.try_recv() {
            if let Some(pv) = ParamValue::from_ros(&v) {
                out.push((k, pv));
            }
        }
        out
    }

    fn param(&self, name: &str) -> Option<ParamValue> {
        self.node.get_parameter(name).as_ref().and_then(ParamValue::from_ros)
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
