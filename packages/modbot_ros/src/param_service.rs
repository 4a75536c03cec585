//! The six rcl_interfaces parameter services (`get_parameters`, `get_parameter_types`,
//! `set_parameters`, `set_parameters_atomically`, `list_parameters`, `describe_parameters`)
//! and the `/parameter_events` a change publishes, over modbot_msgs' generated types and the
//! [`Transport`] trait: what `ros2 param list/get/set/describe/dump` and rclpy's parameter
//! client call. The DDS backend serves them from a thread of their own; ros2-client's spinner,
//! which served them before, also subscribed `/clock` with the type builtin_interfaces/Time and
//! so gave `/clock` a second type in the graph (decision record 0045).
//!
//! Every assignment is validated by the node's [`NodeConfig`] (through
//! [`with_assignment`]), so a set call the node would refuse returns the reason and changes
//! nothing; accepted changes reach the node's loop through [`Transport::param_changes`].

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use modbot_msgs::builtin_interfaces::msg::Time;
use modbot_msgs::rcl_interfaces::msg::{
    ListParametersResult, Parameter, ParameterDescriptor, ParameterEvent, ParameterType, ParameterValue,
    SetParametersResult,
};
use modbot_msgs::rcl_interfaces::srv::{
    DescribeParameters_Request, DescribeParameters_Response, GetParameterTypes_Request, GetParameterTypes_Response,
    GetParameters_Request, GetParameters_Response, ListParameters_Request, ListParameters_Response,
    SetParameters_Request, SetParameters_Response, SetParametersAtomically_Request, SetParametersAtomically_Response,
};

use crate::error::{Result, RosError};
use crate::params::{NodeConfig, ParamMap, ParamValue, with_assignment};
use crate::transport::{Pub, Qos, Server, Transport, wall_now};

/// The rcl_interfaces value of a parameter.
pub fn to_rcl(v: &ParamValue) -> ParameterValue {
    let mut p = ParameterValue::default();
    match v.clone() {
        ParamValue::Bool(b) => (p.r#type, p.bool_value) = (ParameterType::PARAMETER_BOOL, b),
        ParamValue::Int(i) => (p.r#type, p.integer_value) = (ParameterType::PARAMETER_INTEGER, i),
        ParamValue::Double(x) => (p.r#type, p.double_value) = (ParameterType::PARAMETER_DOUBLE, x),
        ParamValue::Str(s) => (p.r#type, p.string_value) = (ParameterType::PARAMETER_STRING, s),
        ParamValue::BoolArray(b) => (p.r#type, p.bool_array_value) = (ParameterType::PARAMETER_BOOL_ARRAY, b),
        ParamValue::IntArray(i) => (p.r#type, p.integer_array_value) = (ParameterType::PARAMETER_INTEGER_ARRAY, i),
        ParamValue::DoubleArray(x) => (p.r#type, p.double_array_value) = (ParameterType::PARAMETER_DOUBLE_ARRAY, x),
        ParamValue::StrArray(s) => (p.r#type, p.string_array_value) = (ParameterType::PARAMETER_STRING_ARRAY, s),
    }
    p
}

/// A parameter value from rcl_interfaces; the error names the type modbot does not take
/// (byte arrays, "not set": no node declares either).
pub fn from_rcl(p: &ParameterValue) -> std::result::Result<ParamValue, String> {
    Ok(match p.r#type {
        ParameterType::PARAMETER_BOOL => ParamValue::Bool(p.bool_value),
        ParameterType::PARAMETER_INTEGER => ParamValue::Int(p.integer_value),
        ParameterType::PARAMETER_DOUBLE => ParamValue::Double(p.double_value),
        ParameterType::PARAMETER_STRING => ParamValue::Str(p.string_value.clone()),
        ParameterType::PARAMETER_BOOL_ARRAY => ParamValue::BoolArray(p.bool_array_value.clone()),
        ParameterType::PARAMETER_INTEGER_ARRAY => ParamValue::IntArray(p.integer_array_value.clone()),
        ParameterType::PARAMETER_DOUBLE_ARRAY => ParamValue::DoubleArray(p.double_array_value.clone()),
        ParameterType::PARAMETER_STRING_ARRAY => ParamValue::StrArray(p.string_array_value.clone()),
        ParameterType::PARAMETER_NOT_SET => return Err("deleting a parameter is not supported".into()),
        t => return Err(format!("unsupported parameter type {t}")),
    })
}

/// Reads a node's current parameter by name (what `Transport::param` returns).
pub type ParamReader = Arc<dyn Fn(&str) -> Option<ParamValue> + Send + Sync>;

/// A node's parameters as its services see them, and the requests' handling.
pub struct ParamStore<C: NodeConfig> {
    values: Mutex<ParamMap>,
    descriptions: BTreeMap<String, String>,
    changes: Mutex<Sender<(String, ParamValue)>>,
    _config: std::marker::PhantomData<fn() -> C>,
}

impl<C: NodeConfig> ParamStore<C> {
    /// The store holding the start-up values (`use_sim_time` false when not given) and the
    /// receiving end of the accepted changes.
    pub fn new(start: &ParamMap) -> (ParamStore<C>, Receiver<(String, ParamValue)>) {
        let mut values = start.clone();
        values.entry("use_sim_time".into()).or_insert(ParamValue::Bool(false));
        let mut descriptions: BTreeMap<String, String> = C::declarations()
            .into_iter()
            .map(|d| (d.name.to_string(), d.description.to_string()))
            .collect();
        descriptions.insert("use_sim_time".into(), "take time from /clock".into());
        let (tx, rx) = channel();
        let store = ParamStore {
            values: Mutex::new(values),
            descriptions,
            changes: Mutex::new(tx),
            _config: std::marker::PhantomData,
        };
        (store, rx)
    }

    /// The current value of `name`.
    pub fn value(&self, name: &str) -> Option<ParamValue> {
        self.values.lock().ok()?.get(name).cloned()
    }

    /// A reader of the current values that can outlive the borrow.
    pub fn reader(self: &Arc<Self>) -> ParamReader {
        let me = Arc::clone(self);
        Arc::new(move |name: &str| me.value(name))
    }

    fn snapshot(&self) -> ParamMap {
        self.values.lock().map(|v| v.clone()).unwrap_or_default()
    }

    /// The parameters `current` would become with `p` assigned, or the reason it is refused.
    fn assigned(current: &ParamMap, p: &Parameter) -> std::result::Result<ParamMap, String> {
        let pv = from_rcl(&p.value).map_err(|e| format!("parameter `{}`: {e}", p.name))?;
        let next = with_assignment::<C>(current, &p.name, &pv)?;
        // Declared parameters are coerced to their type by with_assignment; this holds the
        // standard ones (use_sim_time) to theirs, as rcl does without dynamic typing.
        if let (Some(old), Some(new)) = (current.get(&p.name), next.get(&p.name))
            && std::mem::discriminant(old) != std::mem::discriminant(new)
        {
            return Err(format!(
                "parameter `{}` is a {}, got a {}",
                p.name,
                old.type_name(),
                new.type_name()
            ));
        }
        Ok(next)
    }

    /// Stores `next` and reports the parameters that changed to the node and in the event.
    fn commit(&self, next: ParamMap, names: &[&str]) -> Vec<Parameter> {
        let mut changed = Vec::new();
        if let Ok(mut v) = self.values.lock() {
            *v = next;
            for n in names {
                if let Some(pv) = v.get(*n) {
                    if let Ok(tx) = self.changes.lock() {
                        let _ = tx.send((n.to_string(), pv.clone()));
                    }
                    changed.push(Parameter {
                        name: n.to_string(),
                        value: to_rcl(pv),
                    });
                }
            }
        }
        changed
    }

    /// `get_parameters`: one value per name, "not set" for an unknown name.
    pub fn get(&self, req: &GetParameters_Request) -> GetParameters_Response {
        let v = self.snapshot();
        GetParameters_Response {
            values: req
                .names
                .iter()
                .map(|n| v.get(n).map(to_rcl).unwrap_or_default())
                .collect(),
        }
    }

    /// `get_parameter_types`.
    pub fn types(&self, req: &GetParameterTypes_Request) -> GetParameterTypes_Response {
        let v = self.snapshot();
        GetParameterTypes_Response {
            types: req
                .names
                .iter()
                .map(|n| v.get(n).map_or(ParameterType::PARAMETER_NOT_SET, |p| to_rcl(p).r#type))
                .collect(),
        }
    }

    /// `set_parameters`: each assignment on its own, in order; returns the changes made.
    pub fn set(&self, req: &SetParameters_Request) -> (SetParameters_Response, Vec<Parameter>) {
        let mut results = Vec::new();
        let mut changed = Vec::new();
        for p in &req.parameters {
            match Self::assigned(&self.snapshot(), p) {
                Ok(next) => {
                    changed.extend(self.commit(next, &[&p.name]));
                    results.push(SetParametersResult {
                        successful: true,
                        reason: String::new(),
                    });
                }
                Err(reason) => results.push(SetParametersResult {
                    successful: false,
                    reason,
                }),
            }
        }
        (SetParameters_Response { results }, changed)
    }

    /// `set_parameters_atomically`: all or nothing.
    pub fn set_atomically(
        &self,
        req: &SetParametersAtomically_Request,
    ) -> (SetParametersAtomically_Response, Vec<Parameter>) {
        let mut next = self.snapshot();
        for p in &req.parameters {
            match Self::assigned(&next, p) {
                Ok(n) => next = n,
                Err(reason) => {
                    let result = SetParametersResult {
                        successful: false,
                        reason,
                    };
                    return (SetParametersAtomically_Response { result }, Vec::new());
                }
            }
        }
        let names: Vec<&str> = req.parameters.iter().map(|p| p.name.as_str()).collect();
        let changed = self.commit(next, &names);
        let result = SetParametersResult {
            successful: true,
            reason: String::new(),
        };
        (SetParametersAtomically_Response { result }, changed)
    }

    /// `list_parameters`: the names under the prefixes (all when none), no deeper than
    /// `depth` separators below them (0: any depth), and the prefixes of the names listed.
    pub fn list(&self, req: &ListParameters_Request) -> ListParameters_Response {
        let v = self.snapshot();
        let mut names = Vec::new();
        let mut prefixes = std::collections::BTreeSet::new();
        for n in v.keys() {
            let relative = if req.prefixes.is_empty() {
                Some(n.as_str())
            } else {
                req.prefixes.iter().find_map(|p| {
                    if n == p {
                        Some("")
                    } else {
                        n.strip_prefix(p.as_str()).and_then(|r| r.strip_prefix('.'))
                    }
                })
            };
            let Some(rel) = relative else { continue };
            let depth = rel.matches('.').count() as u64 + u64::from(!req.prefixes.is_empty() && !rel.is_empty());
            if req.depth != ListParameters_Request::DEPTH_RECURSIVE && depth > req.depth {
                continue;
            }
            names.push(n.clone());
            if let Some((prefix, _)) = n.rsplit_once('.') {
                prefixes.insert(prefix.to_string());
            }
        }
        ListParameters_Response {
            result: ListParametersResult {
                names,
                prefixes: prefixes.into_iter().collect(),
            },
        }
    }

    /// `describe_parameters`: type and description of each name (type "not set" for an
    /// unknown one).
    pub fn describe(&self, req: &DescribeParameters_Request) -> DescribeParameters_Response {
        let v = self.snapshot();
        DescribeParameters_Response {
            descriptors: req
                .names
                .iter()
                .map(|n| ParameterDescriptor {
                    name: n.clone(),
                    r#type: v.get(n).map_or(ParameterType::PARAMETER_NOT_SET, |p| to_rcl(p).r#type),
                    description: self.descriptions.get(n).cloned().unwrap_or_default(),
                    ..Default::default()
                })
                .collect(),
        }
    }
}

/// The six services of one node and its `/parameter_events` publisher, created on `t`.
pub struct ParamServers<T: Transport> {
    get: T::Srv<GetParameters_Request, GetParameters_Response>,
    types: T::Srv<GetParameterTypes_Request, GetParameterTypes_Response>,
    set: T::Srv<SetParameters_Request, SetParameters_Response>,
    set_atomically: T::Srv<SetParametersAtomically_Request, SetParametersAtomically_Response>,
    list: T::Srv<ListParameters_Request, ListParameters_Response>,
    describe: T::Srv<DescribeParameters_Request, DescribeParameters_Response>,
    events: T::P<ParameterEvent>,
    node: String,
}

impl<T: Transport> ParamServers<T> {
    /// Creates the services under the node's fully qualified name (`/ns/node/get_parameters`,
    /// ...) and the `/parameter_events` publisher.
    pub fn create(t: &mut T) -> Result<ParamServers<T>> {
        let node = t.identity().fq_name();
        let name = |s: &str| format!("{node}/{s}");
        Ok(ParamServers {
            get: t.server(&name("get_parameters"), "rcl_interfaces", "GetParameters")?,
            types: t.server(&name("get_parameter_types"), "rcl_interfaces", "GetParameterTypes")?,
            set: t.server(&name("set_parameters"), "rcl_interfaces", "SetParameters")?,
            set_atomically: t.server(
                &name("set_parameters_atomically"),
                "rcl_interfaces",
                "SetParametersAtomically",
            )?,
            list: t.server(&name("list_parameters"), "rcl_interfaces", "ListParameters")?,
            describe: t.server(&name("describe_parameters"), "rcl_interfaces", "DescribeParameters")?,
            events: t.publisher("/parameter_events", Qos::Reliable)?,
            node,
        })
    }

    /// Answers every request waiting; returns how many were answered. A request that does
    /// not decode is logged (at most once a second per kind, through `tracing`) and dropped.
    pub fn serve<C: NodeConfig>(&self, store: &ParamStore<C>) -> usize {
        let mut n = 0;
        n += answer(&self.get, |r| (store.get(r), Vec::new()), &self.events, &self.node);
        n += answer(&self.types, |r| (store.types(r), Vec::new()), &self.events, &self.node);
        n += answer(&self.set, |r| store.set(r), &self.events, &self.node);
        n += answer(
            &self.set_atomically,
            |r| store.set_atomically(r),
            &self.events,
            &self.node,
        );
        n += answer(&self.list, |r| (store.list(r), Vec::new()), &self.events, &self.node);
        n += answer(
            &self.describe,
            |r| (store.describe(r), Vec::new()),
            &self.events,
            &self.node,
        );
        n
    }
}

fn answer<Req, Resp, S, P>(server: &S, handle: impl Fn(&Req) -> (Resp, Vec<Parameter>), events: &P, node: &str) -> usize
where
    S: Server<Req, Resp>,
    P: Pub<ParameterEvent>,
{
    let mut n = 0;
    // A bounded batch per call, so a flood of requests cannot starve the other services.
    while n < 64 {
        let Some(taken) = server.take() else { break };
        n += 1;
        match taken {
            Ok((token, req)) => {
                let (resp, changed) = handle(&req);
                if let Err(e) = server.respond(token, resp) {
                    tracing::warn!("{node}: parameter service response: {e}");
                }
                if !changed.is_empty() {
                    let now = wall_now();
                    let stamp = Time {
                        sec: now.floor() as i32,
                        nanosec: ((now - now.floor()) * 1e9) as u32,
                    };
                    let _ = events.publish(ParameterEvent {
                        stamp,
                        node: node.to_string(),
                        changed_parameters: changed,
                        ..Default::default()
                    });
                }
            }
            Err(e) => tracing::warn!("{node}: parameter request dropped: {e}"),
        }
    }
    n
}

/// Serves `servers` from a thread of its own until `stop` is set.
pub fn spawn<T, C>(
    servers: ParamServers<T>,
    store: Arc<ParamStore<C>>,
    stop: Arc<AtomicBool>,
) -> Result<std::thread::JoinHandle<()>>
where
    T: Transport,
    ParamServers<T>: Send + 'static,
    C: NodeConfig,
{
    std::thread::Builder::new()
        .name("ros-params".into())
        .spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if servers.serve(&store) == 0 {
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
        })
        .map_err(|e| RosError::Node(format!("parameter service thread: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::ParamDecl;

    #[derive(Clone)]
    struct Cfg;
    impl NodeConfig for Cfg {
        fn declarations() -> Vec<ParamDecl> {
            vec![
                ParamDecl::new("rate", ParamValue::Double(10.0), "rate, Hz"),
                ParamDecl::new("gait", ParamValue::Str("caterpillar".into()), "gait"),
            ]
        }
        fn from_params(p: &ParamMap) -> std::result::Result<Self, String> {
            match p.get("rate") {
                Some(ParamValue::Double(r)) if *r > 0.0 => Ok(Cfg),
                _ => Err("rate must be positive".into()),
            }
        }
    }

    fn store() -> (ParamStore<Cfg>, Receiver<(String, ParamValue)>) {
        ParamStore::<Cfg>::new(&crate::params::defaults::<Cfg>())
    }

    fn param(name: &str, v: ParamValue) -> Parameter {
        Parameter {
            name: name.into(),
            value: to_rcl(&v),
        }
    }

    #[test]
    fn values_round_trip_through_rcl() {
        for v in [
            ParamValue::Bool(true),
            ParamValue::Int(-3),
            ParamValue::Double(0.25),
            ParamValue::Str("x".into()),
            ParamValue::BoolArray(vec![true, false]),
            ParamValue::IntArray(vec![1, 2]),
            ParamValue::DoubleArray(vec![0.5]),
            ParamValue::StrArray(vec!["a".into()]),
        ] {
            assert_eq!(from_rcl(&to_rcl(&v)).unwrap(), v);
        }
        assert!(from_rcl(&ParameterValue::default()).is_err());
    }

    #[test]
    fn get_list_describe_and_types_cover_every_parameter() {
        let (s, _rx) = store();
        let list = s.list(&ListParameters_Request::default()).result.names;
        assert_eq!(list, vec!["gait", "rate", "use_sim_time"]);
        let got = s.get(&GetParameters_Request {
            names: vec!["rate".into(), "nope".into()],
        });
        assert_eq!(got.values[0].double_value, 10.0);
        assert_eq!(got.values[1].r#type, ParameterType::PARAMETER_NOT_SET);
        let d = s.describe(&DescribeParameters_Request {
            names: vec!["rate".into()],
        });
        assert_eq!(d.descriptors[0].description, "rate, Hz");
        let t = s.types(&GetParameterTypes_Request {
            names: vec!["gait".into(), "use_sim_time".into()],
        });
        assert_eq!(
            t.types,
            vec![ParameterType::PARAMETER_STRING, ParameterType::PARAMETER_BOOL]
        );
        // A prefix that is a whole name lists it; an unrelated prefix lists nothing.
        let only = s.list(&ListParameters_Request {
            prefixes: vec!["rate".into()],
            depth: 0,
        });
        assert_eq!(only.result.names, vec!["rate"]);
        let none = s.list(&ListParameters_Request {
            prefixes: vec!["ra".into()],
            depth: 0,
        });
        assert!(none.result.names.is_empty());
    }

    #[test]
    fn sets_are_validated_and_reported() {
        let (s, rx) = store();
        // An integer sets a double, as on the command line; a bad value is refused by the
        // config with its reason and leaves the value.
        let (r, changed) = s.set(&SetParameters_Request {
            parameters: vec![
                param("rate", ParamValue::Int(20)),
                param("rate", ParamValue::Double(-1.0)),
            ],
        });
        assert!(r.results[0].successful, "{:?}", r.results[0]);
        assert!(!r.results[1].successful);
        assert!(r.results[1].reason.contains("positive"), "{}", r.results[1].reason);
        assert_eq!(s.value("rate"), Some(ParamValue::Double(20.0)));
        assert_eq!(changed.len(), 1);
        assert_eq!(rx.try_recv().unwrap(), ("rate".into(), ParamValue::Double(20.0)));
        assert!(rx.try_recv().is_err());
        // Unknown names and wrong types are refused by name.
        let (r, _) = s.set(&SetParameters_Request {
            parameters: vec![
                param("nope", ParamValue::Int(1)),
                param("use_sim_time", ParamValue::Int(1)),
            ],
        });
        assert!(r.results[0].reason.contains("nope"), "{}", r.results[0].reason);
        assert!(r.results[1].reason.contains("use_sim_time"), "{}", r.results[1].reason);
        // Atomically: one bad assignment leaves all.
        let (r, changed) = s.set_atomically(&SetParametersAtomically_Request {
            parameters: vec![
                param("gait", ParamValue::Str("rolling".into())),
                param("rate", ParamValue::Double(0.0)),
            ],
        });
        assert!(!r.result.successful);
        assert!(changed.is_empty());
        assert_eq!(s.value("gait"), Some(ParamValue::Str("caterpillar".into())));
        let (r, changed) = s.set_atomically(&SetParametersAtomically_Request {
            parameters: vec![
                param("gait", ParamValue::Str("rolling".into())),
                param("rate", ParamValue::Double(5.0)),
            ],
        });
        assert!(r.result.successful);
        assert_eq!(changed.len(), 2);
        assert_eq!(s.value("gait"), Some(ParamValue::Str("rolling".into())));
    }
}
