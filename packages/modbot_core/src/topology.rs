//! Robots as graphs of modules: module instances (a kind from the catalog, a name, optional
//! names for its joints) joined port to port, each connection with a roll about the axis of
//! the two ports. The graph must be a tree; module 0 is the root and its first link carries
//! the robot's base frame.
//!
//! Robots are written in robot files (`config/robots/*.yaml`, decision record 0019); the
//! chains of the limbless-robot thesis are presets, `pp:M`, `py:M` and `pyp`, that build the
//! same graph as their shipped files.
//!
//! Joining: the child's port frame is the parent's port frame turned by `roll_deg` about its
//! x axis (the outward normal) and then half a turn about z, so the two faces meet with
//! opposite normals. A chain of Y1 modules joined head to tail with roll 0 lies straight
//! along +x; a module joined with roll 90° has its hinge axis vertical (a yaw joint).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;
use std::str::FromStr;

use nalgebra::{Isometry3, UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

use crate::catalog::{Actuator, JointDef, ModuleCatalog, ModuleKind, VelocityDrive, check_name};
use crate::error::{CoreError, Result, parse_yaml, read_text};

/// One module of a robot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModuleInstance {
    /// Name, unique in the robot (link names are `<module>_<link>`).
    pub name: String,
    /// Module kind, a key of the catalog.
    pub kind: String,
    /// Names of the kind's joints in this robot (kind joint → robot joint); a joint not
    /// named here is `<module>_<joint>`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub joints: BTreeMap<String, String>,
    /// Kind joints driven by speed in this robot: a position servo in its speed mode, with
    /// the same speed and torque limits (a wheel-foot module's wheel is a hip in one shape
    /// and a wheel in another). Their commands are velocities.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub velocity_joints: Vec<String>,
    /// Initial angles, deg, by kind joint (others start at 0): the pose both simulators
    /// spawn the robot in — the embedded one, and Gazebo through gz_ros2_control's
    /// `initial_value` — e.g. the quadruped's stance (decision record 0056).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub initial_deg: BTreeMap<String, f64>,
}

/// A rigid connection between two ports, written `module.port`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Connection {
    /// The port nearer the root, `module.port`.
    pub from: String,
    /// The other port, `module.port`.
    pub to: String,
    /// Rotation of the second module about the port axis, deg.
    #[serde(default)]
    pub roll_deg: f64,
}

/// A robot file as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RobotFile {
    /// Robot name (files, topics, URDF).
    pub name: String,
    /// Modules; the first is the root.
    pub modules: Vec<ModuleInstance>,
    /// Port-to-port connections.
    #[serde(default)]
    pub connections: Vec<Connection>,
}

/// A connection resolved to module indices.
#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    /// Module of `from`.
    pub a: usize,
    /// Its port.
    pub a_port: String,
    /// Module of `to`.
    pub b: usize,
    /// Its port.
    pub b_port: String,
    /// Roll, rad.
    pub roll: f64,
}

/// A joint of the robot: one joint of one module.
#[derive(Debug, Clone, PartialEq)]
pub struct RobotJoint {
    /// Name in the robot (URDF, joint states, commands).
    pub name: String,
    /// Index of the module.
    pub module: usize,
    /// Index of the joint in its kind.
    pub index: usize,
    /// The kind's definition.
    pub def: JointDef,
}

/// The chain families of the limbless-robot thesis, as presets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChainKind {
    /// Every module at roll 0: all joints pitch (caterpillar).
    PitchPitch,
    /// Module 1 pitch, then alternating yaw/pitch.
    PitchYaw,
    /// The three-module minimal robot: pitch, yaw, pitch.
    PitchYawPitch,
}

/// A preset robot named by chain family and module count, as written on the command line
/// (`pp:8`, `py:16`, `pyp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RobotSpec {
    /// Chain family.
    pub kind: ChainKind,
    /// Number of modules M.
    pub modules: usize,
}

impl RobotSpec {
    /// Short name used for files and topics: `pp_8`, `py_16`, `pyp_3`.
    pub fn name(&self) -> String {
        let prefix = match self.kind {
            ChainKind::PitchPitch => "pp",
            ChainKind::PitchYaw => "py",
            ChainKind::PitchYawPitch => "pyp",
        };
        format!("{prefix}_{}", self.modules)
    }

    /// The robot file of the preset, with modules of `kind`: modules `module_1` … joined
    /// head to tail, the hinge of module i named `joint_i`, PY chains rolled 90° at every
    /// other connection.
    pub fn robot_file(&self, kind: &str) -> RobotFile {
        let m = self.modules;
        let modules = (1..=m)
            .map(|i| ModuleInstance {
                name: format!("module_{i}"),
                kind: kind.to_string(),
                joints: BTreeMap::from([("hinge".to_string(), format!("joint_{i}"))]),
                velocity_joints: Vec::new(),
                initial_deg: BTreeMap::new(),
            })
            .collect();
        let connections = (1..m)
            .map(|i| {
                // Absolute rolls 0, 90, 0, 90, …: each connection turns by ±90° in a PY chain.
                let roll_deg = match self.kind {
                    ChainKind::PitchPitch => 0.0,
                    _ if i % 2 == 1 => 90.0,
                    _ => -90.0,
                };
                Connection {
                    from: format!("module_{i}.head"),
                    to: format!("module_{}.tail", i + 1),
                    roll_deg,
                }
            })
            .collect();
        RobotFile {
            name: self.name(),
            modules,
            connections,
        }
    }
}

impl fmt::Display for RobotSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ChainKind::PitchPitch => write!(f, "pp:{}", self.modules),
            ChainKind::PitchYaw => write!(f, "py:{}", self.modules),
            ChainKind::PitchYawPitch => write!(f, "pyp"),
        }
    }
}

/// Largest robot accepted; far beyond any robot in the sources (32 modules).
pub const MAX_CHAIN_MODULES: usize = 1024;

impl FromStr for RobotSpec {
    type Err = CoreError;

    fn from_str(s: &str) -> Result<Self> {
        let bad = |reason: &str| CoreError::BadRobotSpec {
            spec: s.to_string(),
            reason: reason.to_string(),
        };
        let normalized = s.trim().to_ascii_lowercase().replace('_', ":");
        let (family, count) = match normalized.split_once(':') {
            Some((f, c)) => (f.to_string(), Some(c.to_string())),
            None => (normalized.clone(), None),
        };
        let kind = match family.as_str() {
            "pp" => ChainKind::PitchPitch,
            "py" => ChainKind::PitchYaw,
            "pyp" => ChainKind::PitchYawPitch,
            _ => return Err(bad("unknown chain family")),
        };
        let modules = match (kind, count) {
            (ChainKind::PitchYawPitch, None) => 3,
            (ChainKind::PitchYawPitch, Some(c)) if c == "3" => 3,
            (ChainKind::PitchYawPitch, Some(_)) => return Err(bad("the pitch-yaw-pitch robot has exactly 3 modules")),
            (_, None) => return Err(bad("missing module count")),
            (_, Some(c)) => c
                .parse::<usize>()
                .map_err(|_| bad("module count is not a whole number"))?,
        };
        if modules < 2 {
            return Err(bad("a chain needs at least 2 modules"));
        }
        if modules > MAX_CHAIN_MODULES {
            return Err(bad(&format!("at most {MAX_CHAIN_MODULES} modules")));
        }
        Ok(RobotSpec { kind, modules })
    }
}

/// A checked robot: its modules, their kinds (resolved from the catalog) and the tree of
/// connections.
#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    /// Name (used for files and messages), e.g. `py_16`.
    pub name: String,
    /// Modules; module 0 is the root.
    pub modules: Vec<ModuleInstance>,
    /// Connections as written.
    pub connections: Vec<Connection>,
    /// Connections resolved to module indices (same order).
    pub edges: Vec<Edge>,
    /// The module kinds the robot uses, by name.
    pub kinds: BTreeMap<String, ModuleKind>,
}

/// The largest initial angle of a continuous joint, deg (one turn either way).
pub const MAX_INITIAL_TURN_DEG: f64 = 360.0;

/// The shipped robots that are not presets, by name (`--robot quadruped`): the wheel-foot
/// module alone and its two six-module shapes (spec seed-000 §2–§3). Compiled in from
/// `config/robots/`, so the names work from any directory.
pub const NAMED_ROBOTS: [(&str, &str); 3] = [
    ("wheelfoot", include_str!("../../../config/robots/wheelfoot.yaml")),
    ("quadruped", include_str!("../../../config/robots/quadruped.yaml")),
    ("wheeled", include_str!("../../../config/robots/wheeled.yaml")),
];

impl Topology {
    /// Checks a robot file against the catalog: known kinds, unique names, connections
    /// between existing ports, each port used once, no loop, every module connected.
    pub fn new(file: RobotFile, catalog: &ModuleCatalog) -> Result<Topology> {
        let name = file.name.clone();
        let bad = |reason: String| CoreError::Topology {
            topology: name.clone(),
            reason,
        };
        check_name("name", &file.name)?;
        if file.modules.is_empty() {
            return Err(bad("no modules".into()));
        }
        if file.modules.len() > MAX_CHAIN_MODULES {
            return Err(CoreError::invalid(
                "modules",
                file.modules.len(),
                format!("at most {MAX_CHAIN_MODULES} modules"),
            ));
        }
        let mut kinds = BTreeMap::new();
        let mut index = BTreeMap::new();
        let mut joint_names = BTreeSet::new();
        for (i, m) in file.modules.iter().enumerate() {
            check_name(&format!("modules[{i}].name"), &m.name)?;
            if index.insert(m.name.clone(), i).is_some() {
                return Err(CoreError::invalid(
                    format!("modules[{i}].name"),
                    &m.name,
                    "a name no other entry uses",
                ));
            }
            let kind = catalog
                .kind(&m.kind)
                .map_err(|e| bad(format!("module `{}`: {e}", m.name)))?;
            // A key naming a joint the kind has not: refused listing the kind's joints.
            let unknown_joint = |key: String, value: &str| {
                let known: Vec<_> = kind.joints.iter().map(|j| j.name.as_str()).collect();
                CoreError::invalid(
                    key,
                    value,
                    format!("a joint of kind `{}` ({})", m.kind, known.join(", ")),
                )
            };
            for (from, to) in &m.joints {
                if !kind.joints.iter().any(|j| &j.name == from) {
                    return Err(unknown_joint(format!("modules[{i}].joints.{from}"), to));
                }
                check_name(&format!("modules[{i}].joints.{from}"), to)?;
            }
            for (k, v) in m.velocity_joints.iter().enumerate() {
                let key = format!("modules[{i}].velocity_joints[{k}]");
                match kind.joints.iter().find(|j| &j.name == v) {
                    None => return Err(unknown_joint(key, v)),
                    Some(j) if !matches!(j.actuator, Actuator::Position(_)) => {
                        return Err(CoreError::invalid(
                            key,
                            v,
                            "a joint with a position servo (others have one mode)",
                        ));
                    }
                    Some(j) if j.kind != crate::catalog::JointType::Continuous => {
                        return Err(CoreError::invalid(
                            key,
                            v,
                            "a continuous joint (a limited joint cannot turn at a speed)",
                        ));
                    }
                    Some(_) => {}
                }
                if m.velocity_joints[..k].contains(v) {
                    return Err(CoreError::invalid(key, v, "a joint listed once"));
                }
            }
            for (joint, &deg) in &m.initial_deg {
                let key = format!("modules[{i}].initial_deg.{joint}");
                let Some(j) = kind.joints.iter().find(|j| &j.name == joint) else {
                    return Err(unknown_joint(key, joint));
                };
                let (lo, hi) = j.limits_rad();
                let (lo, hi) = (
                    lo.to_degrees().max(-MAX_INITIAL_TURN_DEG),
                    hi.to_degrees().min(MAX_INITIAL_TURN_DEG),
                );
                if !(deg.is_finite() && (lo..=hi).contains(&deg)) {
                    return Err(CoreError::invalid(
                        key,
                        deg,
                        format!("an angle within the joint's limits, {lo} to {hi} deg"),
                    ));
                }
            }
            for j in &kind.joints {
                let n = m
                    .joints
                    .get(&j.name)
                    .cloned()
                    .unwrap_or_else(|| format!("{}_{}", m.name, j.name));
                if !joint_names.insert(n.clone()) {
                    return Err(bad(format!("joint name `{n}` is used twice (module `{}`)", m.name)));
                }
            }
            kinds.entry(m.kind.clone()).or_insert_with(|| kind.clone());
        }
        let n = file.modules.len();
        let mut used = BTreeSet::new();
        // Union-find over modules to detect loops and disconnected parts.
        let mut parent: Vec<usize> = (0..n).collect();
        fn root(p: &mut [usize], mut i: usize) -> usize {
            while p[i] != i {
                p[i] = p[p[i]];
                i = p[i];
            }
            i
        }
        let mut edges = Vec::with_capacity(file.connections.len());
        for (ci, c) in file.connections.iter().enumerate() {
            let mut ends = Vec::with_capacity(2);
            for (field, text) in [("from", &c.from), ("to", &c.to)] {
                let key = format!("connections[{ci}].{field}");
                let (module, port) = text
                    .split_once('.')
                    .ok_or_else(|| CoreError::invalid(&key, text, "module.port, e.g. module_1.head"))?;
                let mi = *index.get(module).ok_or_else(|| CoreError::DanglingConnector {
                    topology: name.clone(),
                    index: ci,
                    what: format!("module `{module}`"),
                })?;
                let kind = &kinds[&file.modules[mi].kind];
                if !kind.ports.contains_key(port) {
                    let known: Vec<_> = kind.ports.keys().map(String::as_str).collect();
                    return Err(CoreError::DanglingConnector {
                        topology: name.clone(),
                        index: ci,
                        what: format!(
                            "port `{port}` of module `{module}` (kind `{}` has ports: {})",
                            file.modules[mi].kind,
                            known.join(", ")
                        ),
                    });
                }
                if !used.insert((mi, port.to_string())) {
                    return Err(bad(format!("connection {ci}: port `{text}` is already in use")));
                }
                ends.push((mi, port.to_string()));
            }
            let (b, b_port) = ends.pop().unwrap_or_default();
            let (a, a_port) = ends.pop().unwrap_or_default();
            if a == b {
                return Err(bad(format!(
                    "connection {ci} joins module `{}` to itself",
                    file.modules[a].name
                )));
            }
            if !c.roll_deg.is_finite() {
                return Err(CoreError::invalid(
                    format!("connections[{ci}].roll_deg"),
                    c.roll_deg,
                    "a finite angle",
                ));
            }
            let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
            if ra == rb {
                return Err(bad(format!("connection {ci} ({} → {}) closes a loop", c.from, c.to)));
            }
            parent[ra] = rb;
            edges.push(Edge {
                a,
                a_port,
                b,
                b_port,
                roll: c.roll_deg.to_radians(),
            });
        }
        let r0 = root(&mut parent, 0);
        if let Some(lonely) = (0..n).find(|&i| root(&mut parent, i) != r0) {
            return Err(bad(format!(
                "module `{}` is not connected to module `{}`",
                file.modules[lonely].name, file.modules[0].name
            )));
        }
        let t = Topology {
            name: file.name,
            modules: file.modules,
            connections: file.connections,
            edges,
            kinds,
        };
        // Link names must be unique too (module `a` link `b_c` vs module `a_b` link `c`).
        let mut seen = BTreeSet::new();
        for m in 0..t.len() {
            for l in 0..t.kind_of(m).links.len() {
                let name = t.link_name(m, l);
                if !seen.insert(name.clone()) {
                    return Err(bad(format!("link name `{name}` is produced twice")));
                }
            }
        }
        Ok(t)
    }

    /// Parses and checks a robot file's text; `origin` names it in errors.
    pub fn from_yaml(text: &str, origin: &str, catalog: &ModuleCatalog) -> Result<Topology> {
        let file: RobotFile = parse_yaml(text, origin)?;
        Topology::new(file, catalog).map_err(|e| match e {
            CoreError::Invalid { .. } => e.in_file(origin),
            CoreError::Topology { topology, reason } => CoreError::Topology {
                topology: format!("{topology} ({origin})"),
                reason,
            },
            CoreError::DanglingConnector { topology, index, what } => CoreError::DanglingConnector {
                topology: format!("{topology} ({origin})"),
                index,
                what,
            },
            other => other,
        })
    }

    /// Loads and checks a robot file.
    pub fn load(path: &Path, catalog: &ModuleCatalog) -> Result<Topology> {
        Self::from_yaml(&read_text(path)?, &path.display().to_string(), catalog)
    }

    /// A robot named on the command line: a robot file (`*.yaml`, `*.yml`) or a preset
    /// (`pp:8`, `py:16`, `pyp`).
    pub fn resolve(robot: &str, catalog: &ModuleCatalog) -> Result<Topology> {
        let lower = robot.to_ascii_lowercase();
        if lower.ends_with(".yaml") || lower.ends_with(".yml") {
            Self::load(Path::new(robot), catalog)
        } else if robot.contains('/') || Path::new(robot).exists() {
            Err(CoreError::BadRobotSpec {
                spec: robot.to_string(),
                reason: "a robot file's name ends in .yaml or .yml".into(),
            })
        } else if let Some((name, text)) = NAMED_ROBOTS.iter().find(|(n, _)| *n == robot) {
            Self::from_yaml(text, &format!("config/robots/{name}.yaml"), catalog)
        } else {
            Self::from_spec(&robot.parse()?, catalog)
        }
    }

    /// The preset a [`RobotSpec`] names, with the catalog's default module kind.
    pub fn from_spec(spec: &RobotSpec, catalog: &ModuleCatalog) -> Result<Topology> {
        Topology::new(spec.robot_file(&catalog.default_kind), catalog)
    }

    /// The robot file of this robot (what `config/robots/*.yaml` hold).
    pub fn robot_file(&self) -> RobotFile {
        RobotFile {
            name: self.name.clone(),
            modules: self.modules.clone(),
            connections: self.connections.clone(),
        }
    }

    /// The robot file's text: one line per module and per connection (names are
    /// identifiers, so nothing needs quoting); reads back to the same robot.
    pub fn to_yaml(&self, header: &str) -> String {
        let mut s = String::new();
        for line in header.lines() {
            s.push_str(&format!("# {line}\n"));
        }
        s.push_str(&format!("name: {}\nmodules:\n", self.name));
        for m in &self.modules {
            let joints = if m.joints.is_empty() {
                String::new()
            } else {
                let pairs: Vec<String> = m.joints.iter().map(|(k, v)| format!("{k}: {v}")).collect();
                format!(", joints: {{{}}}", pairs.join(", "))
            };
            s.push_str(&format!("  - {{name: {}, kind: {}{joints}}}\n", m.name, m.kind));
        }
        if !self.connections.is_empty() {
            s.push_str("connections:\n");
            for c in &self.connections {
                s.push_str(&format!(
                    "  - {{from: {}, to: {}, roll_deg: {}}}\n",
                    c.from, c.to, c.roll_deg
                ));
            }
        }
        s
    }

    /// Number of modules.
    pub fn len(&self) -> usize {
        self.modules.len()
    }

    /// True when the robot has no modules (never built by [`Topology::new`]).
    pub fn is_empty(&self) -> bool {
        self.modules.is_empty()
    }

    /// The kind of module `i`.
    pub fn kind_of(&self, i: usize) -> &ModuleKind {
        &self.kinds[&self.modules[i].kind]
    }

    /// Each joint's initial angle (the robot file's `initial_deg`, else 0), rad, in joint
    /// order.
    pub fn initial_positions(&self) -> Vec<f64> {
        self.joints()
            .iter()
            .map(|j| {
                self.modules[j.module]
                    .initial_deg
                    .get(&j.def.name)
                    .map_or(0.0, |d| d.to_radians())
            })
            .collect()
    }

    /// The robot's joints in command order: modules in file order, each kind's joints in
    /// its order. Every joint vector in modbot has this order.
    pub fn joints(&self) -> Vec<RobotJoint> {
        let mut out = Vec::new();
        for (mi, m) in self.modules.iter().enumerate() {
            for (ji, j) in self.kind_of(mi).joints.iter().enumerate() {
                out.push(RobotJoint {
                    name: m
                        .joints
                        .get(&j.name)
                        .cloned()
                        .unwrap_or_else(|| format!("{}_{}", m.name, j.name)),
                    module: mi,
                    index: ji,
                    def: match j.actuator {
                        Actuator::Position(s) if m.velocity_joints.contains(&j.name) => JointDef {
                            actuator: Actuator::Velocity(VelocityDrive {
                                max_torque_nm: s.max_torque_nm,
                                max_speed_deg_s: s.max_speed_deg_s,
                            }),
                            ..j.clone()
                        },
                        _ => j.clone(),
                    },
                });
            }
        }
        out
    }

    /// Each joint's speed limit, rad/s, in command order (what a gait player slews at).
    pub fn max_speeds_rad_s(&self) -> Vec<f64> {
        self.joints().iter().map(|j| j.def.actuator.max_speed_rad_s()).collect()
    }

    /// The joint names in command order.
    pub fn joint_names(&self) -> Vec<String> {
        self.joints().into_iter().map(|j| j.name).collect()
    }

    /// The URDF name of link `link` of module `module`: `<module>_<link>`.
    pub fn link_name(&self, module: usize, link: usize) -> String {
        format!(
            "{}_{}",
            self.modules[module].name,
            self.kind_of(module).links[link].name
        )
    }

    /// The joining of edge `e` as a transform between the two port links' frames: with
    /// link L_a carrying `from`'s port P_a and L_b carrying `to`'s port P_b,
    /// frame(L_b) = frame(L_a) · P_a · R_x(roll) · R_z(π) · P_b⁻¹.
    pub fn edge_transform(&self, e: &Edge) -> Isometry3<f64> {
        let pa = &self.kind_of(e.a).ports[&e.a_port];
        let pb = &self.kind_of(e.b).ports[&e.b_port];
        let half_turn = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f64::consts::PI);
        let roll = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), e.roll);
        pa.pose() * Isometry3::from_parts(Default::default(), roll * half_turn) * pb.pose().inverse()
    }

    /// The module order from the root if the modules form a path that starts at module 0
    /// (a serial chain), else an error naming the first module with more than two
    /// neighbours or the root's second neighbour.
    pub fn chain_order(&self) -> Result<Vec<usize>> {
        let n = self.modules.len();
        let mut adj = vec![Vec::new(); n];
        for e in &self.edges {
            adj[e.a].push(e.b);
            adj[e.b].push(e.a);
        }
        let not_chain = |reason: String| CoreError::Topology {
            topology: self.name.clone(),
            reason: format!("not a serial chain starting at its first module: {reason}"),
        };
        if adj[0].len() > 1 {
            return Err(not_chain(format!(
                "module `{}` has {} neighbours",
                self.modules[0].name,
                adj[0].len()
            )));
        }
        let mut order = vec![0];
        let mut prev = usize::MAX;
        let mut cur = 0;
        loop {
            let next: Vec<usize> = adj[cur].iter().copied().filter(|&m| m != prev).collect();
            match next.as_slice() {
                [] => break,
                [m] => {
                    order.push(*m);
                    prev = cur;
                    cur = *m;
                }
                _ => {
                    return Err(not_chain(format!(
                        "module `{}` has {} neighbours",
                        self.modules[cur].name,
                        adj[cur].len()
                    )));
                }
            }
        }
        Ok(order)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::LinkTree;

    fn catalog() -> ModuleCatalog {
        ModuleCatalog::builtin()
    }

    fn joint_axes(t: &Topology) -> Vec<Vector3<f64>> {
        let tree = LinkTree::new(t);
        let poses = tree
            .forward(&vec![0.0; t.joint_names().len()], &Isometry3::identity())
            .unwrap();
        tree.joint_axes(&poses)
    }

    #[test]
    fn presets_build_the_chains_of_the_thesis() {
        let c = catalog();
        let pp = Topology::from_spec(&"pp:8".parse().unwrap(), &c).unwrap();
        assert_eq!(pp.joint_names()[7], "joint_8");
        assert!(joint_axes(&pp).iter().all(|a| (a - Vector3::y()).norm() < 1e-12));
        let py = Topology::from_spec(&"py:16".parse().unwrap(), &c).unwrap();
        for (i, a) in joint_axes(&py).iter().enumerate() {
            let want = if i % 2 == 0 { Vector3::y() } else { Vector3::z() };
            assert!((a - want).norm() < 1e-12, "joint {i}: {a}");
        }
        let pyp = Topology::from_spec(&"pyp".parse().unwrap(), &c).unwrap();
        assert_eq!(pyp.name, "pyp_3");
        assert_eq!(pyp.chain_order().unwrap(), vec![0, 1, 2]);
        let (lo, hi) = LinkTree::new(&pp).bounds_at_zero(&pp);
        assert!((hi - lo - Vector3::new(8.0 * 0.072, 0.052, 0.052)).norm() < 1e-12);
        let poses = LinkTree::new(&pp).forward(&[0.0; 8], &Isometry3::identity()).unwrap();
        let head = LinkTree::new(&pp)
            .links
            .iter()
            .position(|l| l.name == "module_8_front")
            .unwrap();
        assert!((poses[head].translation.vector - Vector3::new(7.0 * 0.072 + 0.036, 0.0, 0.0)).norm() < 1e-12);
    }

    #[test]
    fn robot_spec_parsing() {
        assert_eq!(
            "py:16".parse::<RobotSpec>().unwrap(),
            RobotSpec {
                kind: ChainKind::PitchYaw,
                modules: 16
            }
        );
        assert_eq!("PP_8".parse::<RobotSpec>().unwrap().to_string(), "pp:8");
        assert_eq!("pyp:3".parse::<RobotSpec>().unwrap().modules, 3);
        for bad in ["pp", "pp:1", "pp:x", "qq:4", "pyp:4", "py:-2", "pp:100000"] {
            let e = bad.parse::<RobotSpec>().unwrap_err().to_string();
            assert!(e.contains(bad), "{bad}: {e}");
        }
    }

    fn file(text: &str) -> Result<Topology> {
        Topology::from_yaml(text, "test.yaml", &catalog())
    }

    const THREE: &str =
        "name: t\nmodules:\n  - {name: a, kind: y1}\n  - {name: b, kind: y1}\n  - {name: c, kind: y1}\n";

    #[test]
    fn bad_graphs_are_refused_naming_what() {
        let ok = format!("{THREE}connections:\n  - {{from: a.head, to: b.tail}}\n  - {{from: b.head, to: c.tail}}\n");
        let t = file(&ok).unwrap();
        assert_eq!(t.joint_names(), ["a_hinge", "b_hinge", "c_hinge"]);

        let e = file(&format!(
            "{THREE}connections:\n  - {{from: a.head, to: b.tail}}\n  - {{from: b.head, to: x.tail}}\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("module `x`"), "{e}");
        let e = file(&format!(
            "{THREE}connections:\n  - {{from: a.head, to: b.tail}}\n  - {{from: b.nose, to: c.tail}}\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("port `nose`") && e.contains("head, tail"), "{e}");
        let e = file(&format!(
            "{THREE}connections:\n  - {{from: a.head, to: b.tail}}\n  - {{from: a.head, to: c.tail}}\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("a.head") && e.contains("already in use"), "{e}");
        let e = file(&format!(
            "{THREE}connections:\n  - {{from: a.head, to: b.tail}}\n  - {{from: b.head, to: c.tail}}\n  - {{from: c.head, to: a.tail}}\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("closes a loop"), "{e}");
        let e = file(&format!("{THREE}connections:\n  - {{from: a.head, to: b.tail}}\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`c` is not connected"), "{e}");
        let e = file("name: t\nmodules:\n  - {name: a, kind: tetrahedron}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("tetrahedron") && e.contains("y1"), "{e}");
        let e = file(&format!(
            "{THREE}connections:\n  - {{from: a.head, to: b.tail, twist: 3}}\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("twist") && e.contains("test.yaml"), "{e}");
        let e = file("name: t\nmodules:\n  - {name: a, kind: y1, joints: {elbow: j1}}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("modules[0].joints.elbow"), "{e}");
        let e = Topology::resolve("/tmp/no_such_robot", &catalog())
            .unwrap_err()
            .to_string();
        assert!(e.contains("ends in .yaml"), "{e}");
        let e = file("name: t\nmodules:\n  - {name: a, kind: y1}\n  - {name: a, kind: y1}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("modules[1].name"), "{e}");
    }

    #[test]
    fn a_tree_that_is_not_a_chain_has_no_chain_order() {
        // A 'T': b hangs from a's head, c from b's tail side by its head.
        let t = file(&format!(
            "{THREE}connections:\n  - {{from: a.head, to: b.tail}}\n  - {{from: a.tail, to: c.head, roll_deg: 90}}\n"
        ))
        .unwrap();
        assert!(
            t.chain_order()
                .unwrap_err()
                .to_string()
                .contains("module `a` has 2 neighbours")
        );
    }

    #[test]
    fn presets_round_trip_through_their_files() {
        let c = catalog();
        for spec in ["pp:8", "py:16", "pyp"] {
            let t = Topology::from_spec(&spec.parse().unwrap(), &c).unwrap();
            let text = serde_yaml_ng::to_string(&t.robot_file()).unwrap();
            assert_eq!(Topology::from_yaml(&text, spec, &c).unwrap(), t);
            let text = t.to_yaml("a header\nof two lines");
            assert_eq!(Topology::from_yaml(&text, spec, &c).unwrap(), t, "{text}");
        }
    }
}
