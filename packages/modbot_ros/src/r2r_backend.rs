//! The r2r backend (cargo feature `r2r`): the same nodes over rcl, for sites with a sourced
//! ROS 2 (any RMW, `ros2 launch`). Record 0017.
//!
//! Messages cross the edge as CDR: our generated types are encoded with `modbot_msgs::cdr`
//! and sent with r2r's untyped raw publishers, received with raw subscriptions and decoded
//! the same way, so no node code changes and the bytes are the ones the golden tests check.
//! rcl still needs each type's typesupport: the standard ones come with ROS, modbot_msgs's
//! from its rosidl build (`test/interop/build_modbot_msgs.sh`, or colcon). Services are
//! typed in rcl, so each one the nodes offer is listed in [`R2rTransport::server`].
//! Parameter services are our own, the same as the DDS backend's (`crate::param_service`,
//! record 0045): r2r's handler accepts any value; ours validates with the node's `NodeConfig`.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{FutureExt, Stream, StreamExt};
use modbot_msgs::RosMessage;
use modbot_msgs::cdr;
use modbot_msgs::rcl_interfaces::msg::Log;
use modbot_msgs::rosgraph_msgs::msg::Clock;
use r2r::WrappedTypesupport;
use r2r::rcl_interfaces::srv as rcl_srv;

use crate::args::{NodeIdentity, RosArgs};
use crate::error::{Result, RosError};
use crate::param_service::{self, ParamReader, ParamServers, ParamStore};
use crate::params::{NodeConfig, ParamMap, ParamValue};
use crate::transport::{
    Client, Level, Pub, Qos, Server, SimClock, Sub, Transport, UNCLAIMED_RESPONSES, trace, wall_now,
};

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

type Responding = Pin<Box<dyn Future<Output = std::result::Result<Vec<u8>, String>> + Send>>;
type Requester = Box<dyn Fn(&[u8]) -> std::result::Result<Responding, String> + Send>;

/// A typed rcl client seen as bytes out and bytes back: each request's response is a future
/// polled (never awaited) when the caller asks for it; at most [`UNCLAIMED_RESPONSES`] wait.
pub struct R2rClient<Req, Resp> {
    send: Requester,
    pending: Mutex<(u64, std::collections::BTreeMap<u64, Responding>)>,
    name: String,
    _m: std::marker::PhantomData<fn(Req) -> Resp>,
}

impl<Req: RosMessage, Resp: RosMessage> Client<Req, Resp> for R2rClient<Req, Resp> {
    type Id = u64;

    fn call(&self, request: &Req) -> Result<u64> {
        let bytes = cdr::to_bytes(request).map_err(|e| mw(&self.name, e))?;
        let responding = (self.send)(&bytes).map_err(|e| mw(&format!("request on `{}`", self.name), e))?;
        let mut p = self
            .pending
            .lock()
            .map_err(|_| RosError::Node("r2r client lock poisoned".into()))?;
        p.0 += 1;
        let id = p.0;
        p.1.insert(id, responding);
        while p.1.len() > UNCLAIMED_RESPONSES {
            p.1.pop_first();
        }
        Ok(id)
    }

    fn response(&self, id: &u64) -> Option<std::result::Result<Resp, String>> {
        let mut p = self.pending.lock().ok()?;
        let done = p.1.get_mut(id)?.as_mut().now_or_never()?;
        p.1.remove(id);
        Some(done.and_then(|bytes| cdr::from_bytes::<Resp>(&bytes).map_err(|e| e.to_string())))
    }
}

/// A typed r2r client as a function from request bytes to a future of response bytes.
fn typed_client<S>(node: &mut r2r::Node, name: &str) -> Result<Requester>
where
    S: r2r::WrappedServiceTypeSupport + 'static,
    S::Response: Send,
{
    let c = node
        .create_client::<S>(name, r2r::QosProfile::services_default())
        .map_err(|e| mw(&format!("client of `{name}`"), e))?;
    Ok(Box::new(move |bytes: &[u8]| {
        let request = S::Request::from_serialized_bytes(bytes).map_err(|e| e.to_string())?;
        let answer = c.request(&request).map_err(|e| e.to_string())?;
        let responding: Responding = Box::pin(answer.map(|r| {
            r.map_err(|e| e.to_string())
                .and_then(|resp| resp.to_serialized_bytes().map_err(|e| e.to_string()))
        }));
        Ok(responding)
    }))
}

/// A node on r2r.
pub struct R2rTransport {
    node: Arc<Mutex<r2r::Node>>,
    id: NodeIdentity,
    changes: Receiver<(String, ParamValue)>,
    /// The node's parameters as its services hold them.
    params: ParamReader,
    clock: Option<SimClock<R2rSub<Clock>>>,
    /// `/rosout`: r2r's log macros reach the console, not rosout, so we publish there.
    rosout: Option<R2rPub<Log>>,
    /// Stops the spinner and the parameter service threads when the node goes.
    stop: Arc<AtomicBool>,
    /// Those threads, joined when the node goes: rcl's entities must not be spun or served
    /// while the process tears them down (a node that ends by itself, mission_node, died of
    /// heap corruption at exit before: record 0052).
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Drop for R2rTransport {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl R2rTransport {
    /// Starts a node like [`crate::dds::DdsTransport::start`].
    pub fn start<C: NodeConfig>(default_name: &str, args: &RosArgs, start: &ParamMap) -> Result<R2rTransport> {
        let id = NodeIdentity::new(default_name, args)?;
        let ctx = r2r::Context::create().map_err(|e| mw("rcl context", e))?;
        let node = r2r::Node::create(ctx, &id.name, &id.namespace).map_err(|e| mw("rcl node", e))?;
        let (store, changes) = ParamStore::<C>::new(start);
        let store = Arc::new(store);
        let stop = Arc::new(AtomicBool::new(false));
        let node = Arc::new(Mutex::new(node));
        let spin_node = Arc::clone(&node);
        let spinning = Arc::clone(&stop);
        let spinner = std::thread::Builder::new()
            .name("r2r-spinner".into())
            .spawn(move || {
                while !spinning.load(Ordering::Relaxed) {
                    if let Ok(mut n) = spin_node.lock() {
                        n.spin_once(Duration::from_millis(2));
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
            })
            .map_err(|e| RosError::Node(format!("spinner thread: {e}")))?;
        let mut t = R2rTransport {
            node,
            id,
            changes,
            params: store.reader(),
            clock: None,
            rosout: None,
            stop: Arc::clone(&stop),
            threads: vec![spinner],
        };
        // The six rcl_interfaces parameter services (record 0045), served by a thread of
        // their own as on the DDS backend.
        let servers = ParamServers::create(&mut t)?;
        t.threads.push(param_service::spawn(servers, store, stop)?);
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
            ("std_srvs", "SetBool") => typed_service::<r2r::std_srvs::srv::SetBool::Service>(&mut node, &resolved)?,
            ("rcl_interfaces", "GetParameters") => {
                typed_service::<rcl_srv::GetParameters::Service>(&mut node, &resolved)?
            }
            ("rcl_interfaces", "GetParameterTypes") => {
                typed_service::<rcl_srv::GetParameterTypes::Service>(&mut node, &resolved)?
            }
            ("rcl_interfaces", "SetParameters") => {
                typed_service::<rcl_srv::SetParameters::Service>(&mut node, &resolved)?
            }
            ("rcl_interfaces", "SetParametersAtomically") => {
                typed_service::<rcl_srv::SetParametersAtomically::Service>(&mut node, &resolved)?
            }
            ("rcl_interfaces", "ListParameters") => {
                typed_service::<rcl_srv::ListParameters::Service>(&mut node, &resolved)?
            }
            ("rcl_interfaces", "DescribeParameters") => {
                typed_service::<rcl_srv::DescribeParameters::Service>(&mut node, &resolved)?
            }
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

    type Cli<Req: RosMessage, Resp: RosMessage> = R2rClient<Req, Resp>;

    fn client<Req: RosMessage, Resp: RosMessage>(
        &mut self,
        name: &str,
        package: &str,
        service: &str,
    ) -> Result<R2rClient<Req, Resp>> {
        let resolved = self.resolve(name);
        let mut node = self.node()?;
        // Typed in rcl like the servers: one line per service the nodes call.
        let send = match (package, service) {
            ("std_srvs", "SetBool") => typed_client::<r2r::std_srvs::srv::SetBool::Service>(&mut node, &resolved)?,
            ("modbot_msgs", "Plan") => typed_client::<r2r::modbot_msgs::srv::Plan::Service>(&mut node, &resolved)?,
            _ => {
                return Err(RosError::Middleware(format!(
                    "service type {package}/srv/{service} has no client in the r2r backend"
                )));
            }
        };
        Ok(R2rClient {
            send,
            pending: Mutex::new((0, Default::default())),
            name: resolved,
            _m: std::marker::PhantomData,
        })
    }

    fn param_changes(&mut self) -> Vec<(String, ParamValue)> {
        self.changes.try_iter().collect()
    }

    fn param(&self, name: &str) -> Option<ParamValue> {
        (self.params)(name)
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
