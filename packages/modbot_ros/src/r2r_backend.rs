//! The r2r backend (cargo feature `r2r`): the same nodes over rcl, for sites with a sourced
//! ROS 2 (any RMW, `ros2 launch`). Record 0017.
//!
//! Messages cross the edge as CDR: our generated types are encoded with `modbot_msgs::cdr`
//! and sent with r2r's untyped raw publishers, received with raw subscriptions and decoded
//! the same way, so no node code changes and the bytes are the ones the golden tests check.
//! rcl still needs each type's typesupport: the standard ones come with ROS, modbot_msgs's
//! from its rosidl build (`test/interop/build_modbot_msgs.sh`, or colcon). Services are
//! typed in rcl, so each one the nodes offer is listed in [`R2rTransport::server`].
//! Parameter services are our own (r2r's handler accepts any value; ours validates with the
//! node's `NodeConfig`, as the DDS backend does).

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{FutureExt, Stream, StreamExt};
use modbot_msgs::RosMessage;
use modbot_msgs::cdr;
use modbot_msgs::rcl_interfaces::msg::Log;
use modbot_msgs::rosgraph_msgs::msg::Clock;
use r2r::WrappedTypesupport;
use r2r::rcl_interfaces::msg as rcl_msg;
use r2r::rcl_interfaces::srv as rcl_srv;

use crate::args::{NodeIdentity, RosArgs};
use crate::error::{Result, RosError};
use crate::params::{NodeConfig, ParamMap, ParamValue, with_assignment};
use crate::transport::{Level, Pub, Qos, Server, SimClock, Sub, Transport, trace, wall_now};

fn profile(q: Qos) -> r2r::QosProfile {
    match q {
        Qos::SensorData => r2r::QosProfile::default().best_effort().volatile().keep_last(5),
        Qos::Reliable => r2r::QosProfile::default().reliable().volatile().keep_last(10),
        Qos::Latched => r2r::QosProfile::default().reliable().transient_local().keep_last(1),
        Qos::Clock => r2r::QosProfile::default().best_effort().volatile().keep_last(1),
    }
}

fn mw(what: &str, e: impl std::fmt::Display) -> RosError {
    RosError::Middleware(format!("{what}: {e}"))
}

type ByteStream = Pin<Box<dyn Stream<Item = Vec<u8>> + Send>>;

/// A raw publisher carrying one generated type.
pub struct R2rPub<M> {
    inner: r2r::PublisherUntyped,
    topic: String,
    _m: std::marker::PhantomData<fn(M)>,
}

impl<M: RosMessage> Pub<M> for R2rPub<M> {
    fn publish(&self, m: M) -> Result<()> {
        let bytes = cdr::to_bytes(&m).map_err(|e| mw(&self.topic, e))?;
        self.inner
            .publish_raw(&bytes)
            .map_err(|e| mw(&format!("publish on `{}`", self.topic), e))
    }
}

/// A raw subscription decoding one generated type.
pub struct R2rSub<M> {
    stream: Mutex<ByteStream>,
    _m: std::marker::PhantomData<fn() -> M>,
}

impl<M: RosMessage> Sub<M> for R2rSub<M> {
    fn take(&self) -> Option<std::result::Result<M, String>> {
        let mut s = self.stream.lock().ok()?;
        match s.next().now_or_never() {
            Some(Some(bytes)) => Some(cdr::from_bytes::<M>(&bytes).map_err(|e| e.to_string())),
            _ => None,
        }
    }
}

type Responder = Box<dyn FnOnce(Vec<u8>) -> std::result::Result<(), String> + Send>;
type RequestStream = Pin<Box<dyn Stream<Item = (Vec<u8>, Responder)> + Send>>;

/// A typed rcl service seen as bytes in and bytes out.
pub struct R2rServer<Req, Resp> {
    stream: Mutex<RequestStream>,
    name: String,
    _m: std::marker::PhantomData<fn(Req) -> Resp>,
}

/// Answers one request of an [`R2rServer`].
pub struct R2rToken(Responder);

impl<Req: RosMessage, Resp: RosMessage> Server<Req, Resp> for R2rServer<Req, Resp> {
    type Token = R2rToken;

    fn take(&self) -> Option<std::result::Result<(R2rToken, Req), String>> {
        let mut s = self.stream.lock().ok()?;
        match s.next().now_or_never() {
            Some(Some((bytes, respond))) => Some(
                cdr::from_bytes::<Req>(&bytes)
                    .map(|r| (R2rToken(respond), r))
                    .map_err(|e| e.to_string()),
            ),
            _ => None,
        }
    }

    fn respond(&self, token: R2rToken, response: Resp) -> Result<()> {
        let bytes = cdr::to_bytes(&response).map_err(|e| mw(&self.name, e))?;
        (token.0)(bytes).map_err(|e| mw(&format!("response on `{}`", self.name), e))
    }
}

/// A typed r2r service as a stream of (request bytes, responder taking response bytes).
fn typed_service<S>(node: &mut r2r::Node, name: &str) -> Result<RequestStream>
where
    S: r2r::WrappedServiceTypeSupport + 'static,
{
    let s = node
        .create_service::<S>(name, r2r::QosProfile::services_default())
        .map_err(|e| mw(&format!("service `{name}`"), e))?;
    let mapped = s.filter_map(|req: r2r::ServiceRequest<S>| async move {
        let bytes = req.message.to_serialized_bytes().ok()?;
        let respond: Responder = Box::new(move |resp: Vec<u8>| {
            let r = S::Response::from_serialized_bytes(&resp).map_err(|e| e.to_string())?;
            req.respond(r).map_err(|e| e.to_string())
        });
        Some((bytes, respond))
    });
    Ok(Box::pin(mapped))
}

/// Parameters as the node's parameter services see them.
struct ParamState {
    values: ParamMap,
    descriptions: BTreeMap<String, String>,
}

fn to_rcl(v: &ParamValue) -> rcl_msg::ParameterValue {
    let mut p = rcl_msg::ParameterValue::default();
    match v.clone() {
        ParamValue::Bool(b) => (p.type_, p.bool_value) = (1, b),
        ParamValue::Int(i) => (p.type_, p.integer_value) = (2, i),
        ParamValue::Double(x) => (p.type_, p.double_value) = (3, x),
        ParamValue::Str(s) => (p.type_, p.string_value) = (4, s),
        ParamValue::BoolArray(b) => (p.type_, p.bool_array_value) = (6, b),
        ParamValue::IntArray(i) => (p.type_, p.integer_array_value) = (7, i),
        ParamValue::DoubleArray(x) => (p.type_, p.double_array_value) = (8, x),
        ParamValue::StrArray(s) => (p.type_, p.string_array_value) = (9, s),
    }
    p
}

fn from_rcl(p: &rcl_msg::ParameterValue) -> Option<ParamValue> {
    Some(match p.type_ {
        1 => ParamValue::Bool(p.bool_value),
        2 => ParamValue::Int(p.integer_value),
        3 => ParamValue::Double(p.double_value),
        4 => ParamValue::Str(p.string_value.clone()),
        6 => ParamValue::BoolArray(p.bool_array_value.clone()),
        7 => ParamValue::IntArray(p.integer_array_value.clone()),
        8 => ParamValue::DoubleArray(p.double_array_value.clone()),
        9 => ParamValue::StrArray(p.string_array_value.clone()),
        _ => return None,
    })
}

/// Validates and applies one assignment; the error is the reason the service returns.
fn set_one<C: NodeConfig>(
    state: &Mutex<ParamState>,
    changes: &Sender<(String, ParamValue)>,
    name: &str,
    v: &rcl_msg::ParameterValue,
) -> std::result::Result<(), String> {
    let pv = from_rcl(v).ok_or_else(|| format!("parameter `{name}`: unsupported value type {}", v.type_))?;
    let mut st = state.lock().map_err(|_| "parameter store poisoned".to_string())?;
    let next = with_assignment::<C>(&st.values, name, &pv)?;
    let pv = next[name].clone();
    // Declared parameters are coerced to their type above; this catches use_sim_time.
    if let Some(old) = st.values.get(name)
        && std::mem::discriminant(old) != std::mem::discriminant(&pv)
    {
        return Err(format!(
            "parameter `{name}` is a {}, got a {}",
            old.type_name(),
            pv.type_name()
        ));
    }
    st.values = next;
    let _ = changes.send((name.to_string(), pv));
    Ok(())
}

/// A node on r2r.
pub struct R2rTransport {
    node: Arc<Mutex<r2r::Node>>,
    id: NodeIdentity,
    changes: Receiver<(String, ParamValue)>,
    params: Arc<Mutex<ParamState>>,
    clock: Option<SimClock<R2rSub<Clock>>>,
    /// `/rosout`: r2r's log macros reach the console, not rosout, so we publish there.
    rosout: Option<R2rPub<Log>>,
    _spinner: std::thread::JoinHandle<()>,
}

impl R2rTransport {
    /// Starts a node like [`crate::dds::DdsTransport::start`].
    pub fn start<C: NodeConfig>(default_name: &str, args: &RosArgs, start: &ParamMap) -> Result<R2rTransport> {
        let id = NodeIdentity::new(default_name, args)?;
        let ctx = r2r::Context::create().map_err(|e| mw("rcl context", e))?;
        let mut node = r2r::Node::create(ctx, &id.name, &id.namespace).map_err(|e| mw("rcl node", e))?;
        let fq = id.fq_name();
        let mut values = start.clone();
        values.entry("use_sim_time".into()).or_insert(ParamValue::Bool(false));
        let descriptions = C::declarations()
            .into_iter()
            .map(|d| (d.name.to_string(), d.description.to_string()))
            .collect();
        let params = Arc::new(Mutex::new(ParamState { values, descriptions }));
        let (tx, rx) = channel();

        // The six rcl_interfaces parameter services, served by the spinner thread.
        let mut get = node
            .create_service::<rcl_srv::GetParameters::Service>(
                &format!("{fq}/get_parameters"),
                r2r::QosProfile::parameters(),
            )
            .map_err(|e| mw("get_parameters", e))?;
        let mut set = node
            .create_service::<rcl_srv::SetParameters::Service>(
                &format!("{fq}/set_parameters"),
                r2r::QosProfile::parameters(),
            )
            .map_err(|e| mw("set_parameters", e))?;
        let mut set_atomic = node
            .create_service::<rcl_srv::SetParametersAtomically::Service>(
                &format!("{fq}/set_parameters_atomically"),
                r2r::QosProfile::parameters(),
            )
            .map_err(|e| mw("set_parameters_atomically", e))?;
        let mut list = node
            .create_service::<rcl_srv::ListParameters::Service>(
                &format!("{fq}/list_parameters"),
                r2r::QosProfile::parameters(),
            )
            .map_err(|e| mw("list_parameters", e))?;
        let mut describe = node
            .create_service::<rcl_srv::DescribeParameters::Service>(
                &format!("{fq}/describe_parameters"),
                r2r::QosProfile::parameters(),
            )
            .map_err(|e| mw("describe_parameters", e))?;
        let mut types = node
            .create_service::<rcl_srv::GetParameterTypes::Service>(
                &format!("{fq}/get_parameter_types"),
                r2r::QosProfile::parameters(),
            )
            .map_err(|e| mw("get_parameter_types", e))?;

        let node = Arc::new(Mutex::new(node));
        let spin_node = Arc::clone(&node);
        let st = Arc::clone(&params);
        let handle = std::thread::Builder::new()
            .name("r2r-spinner".into())
            .spawn(move || {
                loop {
                    if let Ok(mut n) = spin_node.lock() {
                        n.spin_once(Duration::from_millis(2));
                    }
                    while let Some(Some(req)) = get.next().now_or_never() {
                        let vals = st.lock().map(|s| s.values.clone()).unwrap_or_default();
                        let values = req
                            .message
                            .names
                            .iter()
                            .map(|n| vals.get(n).map(to_rcl).unwrap_or_default())
                            .collect();
                        let _ = req.respond(rcl_srv::GetParameters::Response { values });
                    }
                    while let Some(Some(req)) = set.next().now_or_never() {
                        let results = req
                            .message
                            .parameters
                            .iter()
                            .map(|p| match set_one::<C>(&st, &tx, &p.name, &p.value) {
                                Ok(()) => rcl_msg::SetParametersResult {
                                    successful: true,
                                    reason: String::new(),
                                },
                                Err(reason) => rcl_msg::SetParametersResult {
                                    successful: false,
                                    reason,
                                },
                            })
                            .collect();
                        let _ = req.respond(rcl_srv::SetParameters::Response { results });
                    }
                    while let Some(Some(req)) = set_atomic.next().now_or_never() {
                        // All or nothing: validate on a copy first.
                        let snapshot = st.lock().map(|s| s.values.clone()).unwrap_or_default();
                        let (dry_tx, _dry_rx) = channel();
                        let trial = Mutex::new(ParamState {
                            values: snapshot,
                            descriptions: BTreeMap::new(),
                        });
                        let check = req
                            .message
                            .parameters
                            .iter()
                            .try_for_each(|p| set_one::<C>(&trial, &dry_tx, &p.name, &p.value));
                        let result = match check {
                            Ok(()) => {
                                for p in &req.message.parameters {
                                    let _ = set_one::<C>(&st, &tx, &p.name, &p.value);
                                }
                                rcl_msg::SetParametersResult {
                                    successful: true,
                                    reason: String::new(),
                                }
                            }
                            Err(reason) => rcl_msg::SetParametersResult {
                                successful: false,
                                reason,
                            },
                        };
                        let _ = req.respond(rcl_srv::SetParametersAtomically::Response { result });
                    }
                    while let Some(Some(req)) = list.next().now_or_never() {
                        let names = st
                            .lock()
                            .map(|s| s.values.keys().cloned().collect())
                            .unwrap_or_default();
                        let _ = req.respond(rcl_srv::ListParameters::Response {
                            result: rcl_msg::ListParametersResult {
                                names,
                                prefixes: Vec::new(),
                            },
                        });
                    }
                    while let Some(Some(req)) = describe.next().now_or_never() {
                        let s = st
                            .lock()
                            .map(|s| (s.values.clone(), s.descriptions.clone()))
                            .unwrap_or_default();
                        let descriptors = req
                            .message
                            .names
                            .iter()
                            .map(|n| rcl_msg::ParameterDescriptor {
                                name: n.clone(),
                                type_: s.0.get(n).map(|v| to_rcl(v).type_).unwrap_or(0),
                                description: s.1.get(n).cloned().unwrap_or_default(),
                                ..Default::default()
                            })
                            .collect();
                        let _ = req.respond(rcl_srv::DescribeParameters::Response { descriptors });
                    }
                    while let Some(Some(req)) = types.next().now_or_never() {
                        let vals = st.lock().map(|s| s.values.clone()).unwrap_or_default();
                        let types = req
                            .message
                            .names
                            .iter()
                            .map(|n| vals.get(n).map(|v| to_rcl(v).type_).unwrap_or(0))
                            .collect();
                        let _ = req.respond(rcl_srv::GetParameterTypes::Response { types });
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
            })
            .map_err(|e| RosError::Node(format!("spinner thread: {e}")))?;
        let mut t = R2rTransport {
            node,
            id,
            changes: rx,
            params,
            clock: None,
            rosout: None,
            _spinner: handle,
        };
        t.rosout = Some(t.publisher::<Log>("/rosout", Qos::Reliable)?);
        if matches!(start.get("use_sim_time"), Some(ParamValue::Bool(true))) {
            t.clock = Some(SimClock::new(t.subscription::<Clock>("/clock", Qos::Clock)?));
        }
        Ok(t)
    }

    fn node(&self) -> Result<std::sync::MutexGuard<'_, r2r::Node>> {
        self.node
            .lock()
            .map_err(|_| RosError::Node("r2r node lock poisoned".into()))
    }
}

impl Transport for R2rTransport {
    type P<M: RosMessage> = R2rPub<M>;
    type S<M: RosMessage> = R2rSub<M>;
    type Srv<Req: RosMessage, Resp: RosMessage> = R2rServer<Req, Resp>;

    fn publisher<M: RosMessage>(&mut self, topic: &str, qos: Qos) -> Result<R2rPub<M>> {
        let resolved = self.resolve(topic);
        let inner = self
            .node()?
            .create_publisher_untyped(&resolved, &M::ros_type(), profile(qos))
            .map_err(|e| mw(&format!("publisher `{resolved}` ({})", M::ros_type()), e))?;
        Ok(R2rPub {
            inner,
            topic: resolved,
            _m: std::marker::PhantomData,
        })
    }

    fn subscription<M: RosMessage>(&mut self, topic: &str, qos: Qos) -> Result<R2rSub<M>> {
        let resolved = self.resolve(topic);
        let s = self
            .node()?
            .subscribe_raw(&resolved, &M::ros_type(), profile(qos))
            .map_err(|e| mw(&format!("subscription `{resolved}` ({})", M::ros_type()), e))?;
        Ok(R2rSub {
            stream: Mutex::new(Box::pin(s)),
            _m: std::marker::PhantomData,
        })
    }

    fn server<Req: RosMessage, Resp: RosMessage>(
        &mut self,
        name: &str,
        package: &str,
        service: &str,
    ) -> Result<R2rServer<Req, Resp>> {
        let resolved = self.resolve(name);
        let mut node = self.node()?;
        // rcl services are typed: one line per service the nodes offer.
        let stream = match (package, service) {
            ("modbot_msgs", "Plan") => typed_service::<r2r::modbot_msgs::srv::Plan::Service>(&mut node, &resolved)?,
            _ => {
                return Err(RosError::Middleware(format!(
                    "service type {package}/srv/{service} is not wired into the r2r backend"
                )));
            }
        };
        Ok(R2rServer {
            stream: Mutex::new(stream),
            name: resolved,
            _m: std::marker::PhantomData,
        })
    }

    fn param_changes(&mut self) -> Vec<(String, ParamValue)> {
        self.changes.try_iter().collect()
    }

    fn param(&self, name: &str) -> Option<ParamValue> {
        self.params.lock().ok()?.values.get(name).cloned()
    }

    fn now(&self) -> f64 {
        match &self.clock {
            Some(c) if matches!(self.param("use_sim_time"), Some(ParamValue::Bool(true))) => c.now(),
            _ => wall_now(),
        }
    }

    fn log(&self, level: Level, msg: &str) {
        let msg = &*crate::transport::capped(msg);
        let logger = self.id.logger();
        trace(level, &self.id.fq_name(), msg);
        if let Some(p) = &self.rosout {
            let _ = p.publish(Log {
                stamp: modbot_msgs::builtin_interfaces::msg::Time::from_secs_f64(wall_now()),
                level: match level {
                    Level::Debug => Log::DEBUG,
                    Level::Info => Log::INFO,
                    Level::Warn => Log::WARN,
                    Level::Error => Log::ERROR,
                },
                name: logger.clone(),
                msg: msg.to_string(),
                file: file!().to_string(),
                function: "modbot_ros".to_string(),
                line: line!(),
            });
        }
        // r2r's macros reach rcl's console output (not /rosout, published above).
        match level {
            Level::Debug => r2r::log_debug!(&logger, "{msg}"),
            Level::Info => r2r::log_info!(&logger, "{msg}"),
            Level::Warn => r2r::log_warn!(&logger, "{msg}"),
            Level::Error => r2r::log_error!(&logger, "{msg}"),
        }
    }

    fn identity(&self) -> &NodeIdentity {
        &self.id
    }
}
