//! Topologies: which modules a robot has, how they are joined and how each is rolled.
//!
//! A topology is a module graph: modules (a kind from the catalog and a roll of 0° or
//! 90° about the chain axis) and connections between connector faces. A hinge module
//! has two connectors, `tail` (−x face) and `head` (+x face). Builders give the chains
//! of the limbless-robot thesis: pitch-pitch PP(M), pitch-yaw PY(M) and the minimal
//! pitch-yaw-pitch robot.
//!
//! Joint `i` (1-based) is the hinge of module `i`, named `joint_i`; modules are numbered
//! from the tail. A module with roll 0° bends in the vertical plane (pitch), one rolled
//! 90° bends in the ground plane (yaw).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::catalog::ModuleCatalog;
use crate::error::{CoreError, Result};

/// Roll of a module about the chain axis, relative to the chain's base frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Roll {
    /// Hinge axis horizontal, perpendicular to the body: a pitch joint.
    #[serde(rename = "0")]
    Deg0,
    /// Hinge axis vertical: a yaw joint.
    #[serde(rename = "90")]
    Deg90,
}

impl Roll {
    /// The roll angle in degrees.
    pub fn degrees(self) -> f64 {
        match self {
            Roll::Deg0 => 0.0,
            Roll::Deg90 => 90.0,
        }
    }
}

/// Whether a joint bends in the vertical plane (pitch) or the ground plane (yaw)
/// when the chain lies flat in its base pose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JointKind {
    /// Bends in the vertical plane; the source's "vertical" module.
    Pitch,
    /// Bends in the ground plane; the source's "horizontal" module.
    Yaw,
}

impl fmt::Display for JointKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            JointKind::Pitch => "pitch",
            JointKind::Yaw => "yaw",
        })
    }
}

/// A connector face of a hinge module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Connector {
    /// The −x face (towards the chain's tail).
    Tail,
    /// The +x face (towards the chain's head).
    Head,
}

/// One module of a topology.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModuleInstance {
    /// Module kind, a key of the catalog.
    pub kind: String,
    /// Roll about the chain axis.
    pub roll: Roll,
}

/// A rigid connection between two connector faces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Connection {
    /// Index (0-based) of the module nearer the tail.
    pub parent: usize,
    /// Its connector.
    pub parent_connector: Connector,
    /// Index (0-based) of the other module.
    pub child: usize,
    /// Its connector.
    pub child_connector: Connector,
}

/// A joint of the robot: the hinge of one module.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Joint {
    /// Stable name, `joint_1` … `joint_M`.
    pub name: String,
    /// Index (0-based) of the module the hinge belongs to.
    pub module: usize,
    /// Pitch or yaw.
    pub kind: JointKind,
}

/// The families of chains the builders know.
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

/// A robot named by chain family and module count, as written on the command line
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

/// Largest chain the builders accept; far beyond any robot in the sources (32 modules).
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

/// A module graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Topology {
    /// Name (used for files and messages), e.g. `py_16`.
    pub name: String,
    /// Modules, tail first for chains.
    pub modules: Vec<ModuleInstance>,
    /// Connections between connector faces.
    pub connections: Vec<Connection>,
}

impl Topology {
    /// A serial chain of `rolls.len()` modules of one kind, joined head to tail.
    pub fn chain(name: impl Into<String>, kind: &str, rolls: &[Roll]) -> Topology {
        let modules = rolls
            .iter()
            .map(|&roll| ModuleInstance {
                kind: kind.to_string(),
                roll,
            })
            .collect();
        let connections = (1..rolls.len())
            .map(|i| Connection {
                parent: i - 1,
                parent_connector: Connector::Head,
                child: i,
                child_connector: Connector::Tail,
            })
            .collect();
        Topology {
            name: name.into(),
            modules,
            connections,
        }
    }

    /// PP(M): every module at roll 0, all joints pitch.
    pub fn pitch_pitch(m: usize, kind: &str) -> Topology {
        Self::chain(format!("pp_{m}"), kind, &vec![Roll::Deg0; m])
    }

    /// PY(M): module 1 pitch, then yaw, pitch, … alternating.
    pub fn pitch_yaw(m: usize, kind: &str) -> Topology {
        let rolls: Vec<Roll> = (0..m)
            .map(|i| if i % 2 == 0 { Roll::Deg0 } else { Roll::Deg90 })
            .collect();
        Self::chain(format!("py_{m}"), kind, &rolls)
    }

    /// The minimal pitch-yaw-pitch robot (3 modules).
    pub fn pitch_yaw_pitch(kind: &str) -> Topology {
        Self::chain("pyp_3", kind, &[Roll::Deg0, Roll::Deg90, Roll::Deg0])
    }

    /// Builds the topology a [`RobotSpec`] names, with the catalog's default module kind,
    /// and validates it against the catalog.
    pub fn from_spec(spec: &RobotSpec, catalog: &ModuleCatalog) -> Result<Topology> {
        let kind = catalog.default_kind.as_str();
        let t = match spec.kind {
            ChainKind::PitchPitch => Self::pitch_pitch(spec.modules, kind),
            ChainKind::PitchYaw => Self::pitch_yaw(spec.modules, kind),
            ChainKind::PitchYawPitch => Self::pitch_yaw_pitch(kind),
        };
        t.validate(catalog)?;
        Ok(t)
    }

    /// Number of modules M.
    pub fn len(&self) -> usize {
        self.modules.len()
    }

    /// True when the topology has no modules.
    pub fn is_empty(&self) -> bool {
        self.modules.is_empty()
    }

    /// The joints, `joint_1` … `joint_M`, one per module, with their pitch/yaw label.
    pub fn joints(&self) -> Vec<Joint> {
        self.modules
            .iter()
            .enumerate()
            .map(|(i, m)| Joint {
                name: joint_name(i),
                module: i,
                kind: match m.roll {
                    Roll::Deg0 => JointKind::Pitch,
                    Roll::Deg90 => JointKind::Yaw,
                },
            })
            .collect()
    }

    /// The joint names in order, the order of every joint vector in modbot.
    pub fn joint_names(&self) -> Vec<String> {
        (0..self.len()).map(joint_name).collect()
    }

    /// Checks the module graph: known module kinds, connections that refer to existing
    /// modules, each connector used once, and a connected tree (no cycles).
    pub fn validate(&self, catalog: &ModuleCatalog) -> Result<()> {
        let topo = || self.name.clone();
        if self.modules.is_empty() {
            return Err(CoreError::Topology {
                topology: topo(),
                reason: "no modules".into(),
            });
        }
        for m in &self.modules {
            catalog.kind(&m.kind)?;
        }
        let n = self.modules.len();
        let mut used = std::collections::HashSet::new();
        // Union-find over modules to detect cycles and disconnected parts.
        let mut parent: Vec<usize> = (0..n).collect();
        fn root(p: &mut [usize], mut i: usize) -> usize {
            while p[i] != i {
                p[i] = p[p[i]];
                i = p[i];
            }
            i
        }
        for (index, c) in self.connections.iter().enumerate() {
            for (module, connector) in [(c.parent, c.parent_connector), (c.child, c.child_connector)] {
                if module >= n {
                    return Err(CoreError::DanglingConnector {
                        topology: topo(),
                        index,
                        what: format!("module {module} (the topology has {n})"),
                    });
                }
                if !used.insert((module, connector)) {
                    return Err(CoreError::Topology {
                        topology: topo(),
                        reason: format!(
                            "connection {index}: connector {connector:?} of module {module} is already in use"
                        ),
                    });
                }
            }
            if c.parent == c.child {
                return Err(CoreError::Topology {
                    topology: topo(),
                    reason: format!("connection {index} joins module {} to itself", c.parent),
                });
            }
            let (a, b) = (root(&mut parent, c.parent), root(&mut parent, c.child));
            if a == b {
                return Err(CoreError::Topology {
                    topology: topo(),
                    reason: format!("connection {index} closes a loop"),
                });
            }
            parent[a] = b;
        }
        let r0 = root(&mut parent, 0);
        if let Some(lonely) = (0..n).find(|&i| root(&mut parent, i) != r0) {
            return Err(CoreError::Topology {
                topology: topo(),
                reason: format!("module {lonely} is not connected to module 0"),
            });
        }
        Ok(())
    }

    /// The module order from tail to head if the topology is a serial chain joined
    /// head-to-tail (as every builder here makes), else an error.
    pub fn chain_order(&self) -> Result<Vec<usize>> {
        let n = self.modules.len();
        let not_chain = |reason: String| CoreError::Topology {
            topology: self.name.clone(),
            reason: format!("not a serial head-to-tail chain: {reason}"),
        };
        let mut next = vec![None; n];
        let mut has_prev = vec![false; n];
        for c in &self.connections {
            if c.parent_connector != Connector::Head || c.child_connector != Connector::Tail {
                return Err(not_chain(format!(
                    "modules {} and {} are not joined head to tail",
                    c.parent, c.child
                )));
            }
            if c.parent >= n || c.child >= n {
                return Err(not_chain("a connection refers to a missing module".into()));
            }
            next[c.parent] = Some(c.child);
            has_prev[c.child] = true;
        }
        let tail = (0..n)
            .find(|&i| !has_prev[i])
            .ok_or_else(|| not_chain("no tail".into()))?;
        let mut order = vec![tail];
        let mut cur = tail;
        while let Some(nx) = next[cur] {
            if order.len() > n {
                return Err(not_chain("loop".into()));
            }
            order.push(nx);
            cur = nx;
        }
        if order.len() != n {
            return Err(not_chain(format!(
                "{} of {n} modules reachable from the tail",
                order.len()
            )));
        }
        Ok(order)
    }
}

/// The name of joint `index` (0-based): `joint_{index+1}`.
pub fn joint_name(index: usize) -> String {
    format!("joint_{}", index + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> ModuleCatalog {
        ModuleCatalog::builtin()
    }

    #[test]
    fn builders_label_joints() {
        let c = catalog();
        let pp = Topology::from_spec(&"pp:8".parse().unwrap(), &c).unwrap();
        assert!(pp.joints().iter().all(|j| j.kind == JointKind::Pitch));
        assert_eq!(pp.joint_names()[7], "joint_8");
        let py = Topology::from_spec(&"py:16".parse().unwrap(), &c).unwrap();
        let kinds: Vec<_> = py.joints().iter().map(|j| j.kind).collect();
        assert_eq!(kinds[0], JointKind::Pitch);
        assert_eq!(kinds[1], JointKind::Yaw);
        assert!(kinds.windows(2).all(|w| w[0] != w[1]));
        let pyp = Topology::from_spec(&"pyp".parse().unwrap(), &c).unwrap();
        assert_eq!(pyp.name, "pyp_3");
        let kinds: Vec<_> = pyp.joints().iter().map(|j| j.kind).collect();
        assert_eq!(kinds, vec![JointKind::Pitch, JointKind::Yaw, JointKind::Pitch]);
        assert_eq!(pyp.chain_order().unwrap(), vec![0, 1, 2]);
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

    #[test]
    fn bad_graphs_are_refused() {
        let c = catalog();
        let mut t = Topology::pitch_pitch(3, "y1");
        t.connections[1].child = 7;
        let e = t.validate(&c).unwrap_err().to_string();
        assert!(e.contains("module 7"), "{e}");

        let mut t = Topology::pitch_pitch(3, "y1");
        t.connections.push(Connection {
            parent: 2,
            parent_connector: Connector::Head,
            child: 0,
            child_connector: Connector::Tail,
        });
        assert!(t.validate(&c).is_err());

        let mut t = Topology::pitch_pitch(3, "y1");
        t.connections.pop();
        let e = t.validate(&c).unwrap_err().to_string();
        assert!(e.contains("not connected"), "{e}");

        let t = Topology::pitch_pitch(3, "cube");
        let e = t.validate(&c).unwrap_err().to_string();
        assert!(e.contains("cube"), "{e}");
    }
}
