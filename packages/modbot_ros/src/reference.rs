//! The nodes' reference, generated from their code so it cannot drift: the page
//! `docs/reference/nodes.md` (every node's parameters, topics, services and QoS) and one
//! parameter file per node, `config/params/<node>.yaml`. `modbot node --write-docs` writes
//! both; a test fails when the shipped ones differ from what the code generates.
//!
//! Parameters come from each node's [`NodeConfig`] declarations. Topics and services come
//! from running each node's loop on its own [`LoopbackBus`] with its stop flag already
//! raised: the loop creates its publishers, subscriptions and services exactly as it always
//! does, then returns, and the bus lists them with their types and QoS. A node whose
//! endpoints depend on its parameters runs once per variant; an endpoint only some variants
//! create says which.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::loopback::{LoopbackBus, LoopbackNode, identity};
use crate::nodes;
use crate::params::{NodeConfig, ParamValue, resolve};
use crate::transport::Qos;
use crate::{NODES, node_declarations, node_summary, param_text};

/// Where the page is, relative to the repository root.
pub const PAGE: &str = "docs/reference/nodes.md";
/// The folder of the parameter files, relative to the repository root.
pub const PARAMS_DIR: &str = "config/params";
/// The command that regenerates both.
pub const REGENERATE: &str = "modbot node --write-docs";

/// The namespace the nodes run in while their endpoints are listed: a name under it is
/// relative to the node's namespace, any other is absolute.
const NS: &str = "/NS";

/// The six rcl_interfaces parameter services every node serves (record 0045).
const PARAM_SERVICES: [(&str, &str); 6] = [
    ("describe_parameters", "rcl_interfaces/srv/DescribeParameters"),
    ("get_parameter_types", "rcl_interfaces/srv/GetParameterTypes"),
    ("get_parameters", "rcl_interfaces/srv/GetParameters"),
    ("list_parameters", "rcl_interfaces/srv/ListParameters"),
    ("set_parameters", "rcl_interfaces/srv/SetParameters"),
    (
        "set_parameters_atomically",
        "rcl_interfaces/srv/SetParametersAtomically",
    ),
];

type RunFn<C> = fn(&mut LoopbackNode, C, Arc<AtomicBool>) -> crate::Result<()>;

/// One endpoint of a node: topic or service, relative or absolute name, type, QoS.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Endpoint {
    name: String,
    ty: String,
    /// `publishes`, `subscribes` or `serves`.
    role: &'static str,
    qos: String,
}

fn qos_text(q: Qos) -> &'static str {
    match q {
        Qos::SensorData => "best effort, volatile, keep last 5 (sensor data)",
        Qos::Reliable => "reliable, volatile, keep last 10 (default)",
        Qos::Latched => "reliable, transient local, keep last 1 (latched)",
        Qos::Clock => "best effort, volatile, keep last 1 (clock)",
    }
}

fn relative(name: &str) -> String {
    match name.strip_prefix(NS).and_then(|r| r.strip_prefix('/')) {
        Some(r) => r.to_string(),
        None => name.to_string(),
    }
}

/// The bus node loop `run` leaves after creating its endpoints with `params` (over the
/// defaults).
fn bus_of<C: NodeConfig>(exec: &str, params: &[(&str, ParamValue)], run: RunFn<C>) -> Result<LoopbackBus, String> {
    let overrides: Vec<(String, ParamValue)> = params.iter().map(|(k, v)| ((*k).to_string(), v.clone())).collect();
    let (map, cfg) = resolve::<C>(&[], &overrides).map_err(|e| format!("{exec}: {e}"))?;
    let bus = LoopbackBus::new();
    let mut node = bus.node_with_params::<C>(identity(exec, NS), map);
    run(&mut node, cfg, Arc::new(AtomicBool::new(true))).map_err(|e| format!("{exec}: {e}"))?;
    Ok(bus)
}

/// Node `exec`'s bus with `params`.
fn bus_of_node(exec: &str, params: &[(&str, ParamValue)]) -> Result<LoopbackBus, String> {
    match exec {
        "gait_node" => bus_of::<nodes::gait::GaitNodeConfig>(exec, params, nodes::gait::run),
        "sim_node" => bus_of::<nodes::sim::SimNodeConfig>(exec, params, nodes::sim::run),
        "planner_node" => bus_of::<nodes::planner::PlannerNodeConfig>(exec, params, nodes::planner::run),
        "executive_node" => bus_of::<nodes::executive::ExecutiveNodeConfig>(exec, params, nodes::executive::run),
        "module_node" => bus_of::<nodes::module::ModuleNodeConfig>(exec, params, nodes::module::run),
        "teleop_node" => bus_of::<nodes::teleop::TeleopNodeConfig>(exec, params, nodes::teleop::run),
        "mission_node" => bus_of::<nodes::mission::MissionNodeConfig>(exec, params, nodes::mission::run),
        other => Err(format!("no node `{other}`")),
    }
}

/// Every topic node `exec` publishes with `params` (over its defaults): the name (relative
/// to the node's namespace unless absolute), the ROS type (`pkg/msg/Name`) and the QoS it
/// offers. From the node's own code, as the page.
pub fn publications(exec: &str, params: &[(&str, ParamValue)]) -> Result<Vec<(String, String, Qos)>, String> {
    let bus = bus_of_node(exec, params)?;
    Ok(bus
        .topics()
        .into_iter()
        .filter_map(|t| t.publishers.first().map(|q| (relative(&t.name), t.ty.clone(), *q)))
        .collect())
}

/// The endpoints of node `exec` with `params` (over the defaults).
fn endpoints(exec: &str, params: &[(&str, ParamValue)]) -> Result<Vec<Endpoint>, String> {
    let bus = bus_of_node(exec, params)?;
    let mut out = Vec::new();
    for t in bus.topics() {
        for (role, qos) in t
            .publishers
            .iter()
            .map(|q| ("publishes", *q))
            .chain(t.subscribers.iter().map(|q| ("subscribes", *q)))
        {
            out.push(Endpoint {
                name: relative(&t.name),
                ty: t.ty.clone(),
                role,
                qos: qos_text(qos).to_string(),
            });
        }
    }
    for (name, ty) in bus.services() {
        out.push(Endpoint {
            name: relative(&name),
            ty,
            role: "serves",
            qos: "reliable, volatile (services default)".into(),
        });
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// A node's variants: a label (empty for the defaults) and the parameters that make it.
type Variant = (&'static str, Vec<(&'static str, ParamValue)>);

fn s(v: &str) -> ParamValue {
    ParamValue::Str(v.into())
}

/// Every endpoint of `exec` over its variants, each with the labels of the variants that
/// create it (empty: every variant).
fn node_endpoints(exec: &str) -> Result<Vec<(Endpoint, Vec<&'static str>)>, String> {
    let variants: Vec<Variant> = match exec {
        "gait_node" => vec![
            ("", vec![]),
            (
                "a wheel-foot robot with wheels (robot:=wheeled gait:=drive)",
                vec![("robot", s("wheeled")), ("gait", s("drive"))],
            ),
        ],
        "sim_node" => vec![
            ("", vec![]),
            ("a wheel-foot robot (robot:=wheeled)", vec![("robot", s("wheeled"))]),
            (
                "an organism (organism:=caterpillar:4)",
                vec![("organism", s("caterpillar:4"))],
            ),
            (
                "the strategic mission's modules (modules:=true world:=worlds/strategic_mission.yaml)",
                vec![
                    ("modules", ParamValue::Bool(true)),
                    (
                        "world",
                        s(concat!(
                            env!("CARGO_MANIFEST_DIR"),
                            "/../../worlds/strategic_mission.yaml"
                        )),
                    ),
                ],
            ),
        ],
        "planner_node" => vec![("", vec![])],
        "executive_node" => vec![("", vec![])],
        "module_node" => vec![("", vec![])],
        "teleop_node" => vec![("", vec![])],
        "mission_node" => vec![
            ("", vec![]),
            (
                "with its world (world:=worlds/strategic_mission.yaml)",
                vec![(
                    "world",
                    s(concat!(
                        env!("CARGO_MANIFEST_DIR"),
                        "/../../worlds/strategic_mission.yaml"
                    )),
                )],
            ),
        ],
        other => return Err(format!("no node `{other}`")),
    };
    let mut seen: BTreeMap<Endpoint, Vec<&'static str>> = BTreeMap::new();
    for (label, params) in &variants {
        let eps = endpoints(exec, params)?;
        for e in eps {
            seen.entry(e).or_default().push(label);
        }
    }
    let all: Vec<&'static str> = variants.iter().map(|(l, _)| *l).collect();
    Ok(seen
        .into_iter()
        .map(|(e, labels)| {
            let only = if labels.len() == all.len() {
                Vec::new()
            } else {
                labels.into_iter().filter(|l| !l.is_empty()).collect()
            };
            (e, only)
        })
        .collect())
}

fn is_empty_array(v: &ParamValue) -> bool {
    match v {
        ParamValue::BoolArray(a) => a.is_empty(),
        ParamValue::IntArray(a) => a.is_empty(),
        ParamValue::DoubleArray(a) => a.is_empty(),
        ParamValue::StrArray(a) => a.is_empty(),
        _ => false,
    }
}

/// The parameter file of node `exec`: every parameter it declares at its default, each under
/// its description, for `--params-file` and a launch file's `param: [{from: ...}]`. The key
/// `/**/<exec>` applies it to the node in any namespace. A parameter whose default is an
/// empty list is written commented out: an empty YAML list has no element type, and rcl
/// refuses it.
pub fn params_file(exec: &str) -> Option<String> {
    let decls = node_declarations(exec)?;
    let mut out = format!(
        "# Parameters of {exec} at their defaults, generated from its declarations by\n\
         # `{REGENERATE}`; a test fails when this file differs from the code's. Copy it\n\
         # to change values. Load it with\n\
         #   modbot node {exec} --ros-args --params-file {PARAMS_DIR}/{exec}.yaml\n\
         # or in a launch file: param: [{{from: $(find-pkg-share modbot_bringup)/{PARAMS_DIR}/{exec}.yaml}}].\n\
         # Every node also takes use_sim_time (bool, default false). Reference: {PAGE}.\n\
         /**/{exec}:\n  ros__parameters:\n"
    );
    for d in decls {
        out.push_str(&format!("    # {} ({})\n", d.description, d.default.type_name()));
        if is_empty_array(&d.default) {
            out.push_str(&format!("    # {}: []\n", d.name));
        } else {
            out.push_str(&format!("    {}: {}\n", d.name, param_text(&d.default)));
        }
    }
    Some(out)
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The reference page: every node's parameters, topics, services and QoS.
pub fn page() -> Result<String, String> {
    let mut out = format!(
        "# modbot_ros nodes: parameters, topics, services, QoS\n\n\
         Generated from the nodes' code by `{REGENERATE}`; do not edit (a test fails when this\n\
         page is stale). Topic names without a leading `/` are relative to the node's namespace\n\
         (`-r __ns:=/snake1` puts `odom` on `/snake1/odom`). Why each topic has its QoS:\n\
         `docs/decisions/0043-qos-and-node-conventions.md`. Every node serves the six\n\
         rcl_interfaces parameter services under its own name (`ros2 param list/get/set/dump`),\n\
         publishes changes on `/parameter_events` and logs to `/rosout`.\n"
    );
    for exec in NODES {
        let decls = node_declarations(exec).ok_or_else(|| format!("no declarations for {exec}"))?;
        out.push_str(&format!(
            "\n## {exec}\n\n{}.\n\n`modbot node {exec} --help`; parameter file: `{PARAMS_DIR}/{exec}.yaml`.\n\n",
            node_summary(exec).unwrap_or("")
        ));
        out.push_str("### Parameters\n\n| name | type | default | description |\n|---|---|---|---|\n");
        for d in &decls {
            out.push_str(&format!(
                "| `{}` | {} | `{}` | {} |\n",
                d.name,
                d.default.type_name(),
                cell(&param_text(&d.default)),
                cell(d.description)
            ));
        }
        out.push_str("| `use_sim_time` | bool | `false` | take time from /clock (every node) |\n");
        let eps = node_endpoints(exec)?;
        out.push_str("\n### Topics and services\n\n| name | type | role | QoS | when |\n|---|---|---|---|---|\n");
        for (e, only) in &eps {
            out.push_str(&format!(
                "| `{}` | `{}` | {} | {} | {} |\n",
                e.name,
                e.ty,
                e.role,
                e.qos,
                if only.is_empty() {
                    "always".to_string()
                } else {
                    cell(&only.join("; "))
                }
            ));
        }
        for (name, ty) in PARAM_SERVICES {
            out.push_str(&format!(
                "| `~/{name}` | `{ty}` | serves | reliable, volatile (services default) | always |\n"
            ));
        }
    }
    Ok(out)
}

/// Writes the page and every parameter file under the repository root `root`; returns the
/// files written.
pub fn write(root: &std::path::Path) -> Result<Vec<std::path::PathBuf>, String> {
    if !root.join("config").is_dir() || !root.join("docs").is_dir() {
        return Err(format!(
            "{} is not the repository root (no config/ and docs/ there)",
            root.display()
        ));
    }
    let mut files = vec![(root.join(PAGE), page()?)];
    for exec in NODES {
        let text = params_file(exec).ok_or_else(|| format!("no declarations for {exec}"))?;
        files.push((root.join(PARAMS_DIR).join(format!("{exec}.yaml")), text));
    }
    let mut written = Vec::new();
    for (path, text) in files {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_parameter_file_loads_back_to_the_defaults() {
        for exec in NODES {
            let text = params_file(exec).unwrap();
            let loaded = crate::params::params_from_yaml(&text, exec, exec, "/any/ns").unwrap();
            for d in node_declarations(exec).unwrap() {
                if is_empty_array(&d.default) {
                    assert!(!loaded.contains_key(d.name), "{exec}: {}", d.name);
                    continue;
                }
                assert_eq!(loaded[d.name], d.default, "{exec}: {}", d.name);
            }
        }
    }
}
