//! The standard ROS 2 command line: `--ros-args` with `-r`/`--remap` (`__ns:=`, `__node:=`,
//! `from:=to`), `-p`/`--param name:=value`, `--params-file FILE` and `--log-level LEVEL`,
//! closed by `--` or the end of the line. Arguments outside `--ros-args` are the node's own.

use crate::error::{Result, RosError};
use crate::params::ParamValue;

/// What `--ros-args` said.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RosArgs {
    /// `-r __node:=NAME` (or `__name:=`).
    pub node_name: Option<String>,
    /// `-r __ns:=/NS`.
    pub namespace: Option<String>,
    /// `-r from:=to` topic and service remaps, in the order given.
    pub remaps: Vec<(String, String)>,
    /// `-p name:=value`, in the order given (later ones win).
    pub params: Vec<(String, ParamValue)>,
    /// `--params-file FILE`, in the order given.
    pub params_files: Vec<String>,
    /// `--log-level LEVEL`.
    pub log_level: Option<String>,
    /// Arguments that are not ROS arguments.
    pub rest: Vec<String>,
}

impl RosArgs {
    /// Parses a command line (without the program name).
    pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<RosArgs> {
        let mut out = RosArgs::default();
        let mut it = args.into_iter().peekable();
        let mut in_ros = false;
        while let Some(a) = it.next() {
            if !in_ros {
                if a == "--ros-args" {
                    in_ros = true;
                } else {
                    out.rest.push(a);
                }
                continue;
            }
            let mut value = |flag: &str| {
                it.next()
                    .ok_or_else(|| RosError::Args(format!("`{flag}` needs a value")))
            };
            match a.as_str() {
                "--" => in_ros = false,
                "--ros-args" => {}
                "-r" | "--remap" => {
                    let v = value(&a)?;
                    out.remap(&v)?;
                }
                "-p" | "--param" => {
                    let v = value(&a)?;
                    let (k, val) = split_assign(&v)?;
                    let pv = ParamValue::parse_yaml(val).map_err(|e| RosError::Args(format!("`-p {v}`: {e}")))?;
                    out.params.push((k.to_string(), pv));
                }
                "--params-file" => out.params_files.push(value(&a)?),
                "--log-level" => {
                    let v = value(&a)?;
                    let lvl = v.rsplit(':').next().unwrap_or(&v).to_ascii_lowercase();
                    if !["debug", "info", "warn", "error", "fatal"].contains(&lvl.as_str()) {
                        return Err(RosError::Args(format!("`--log-level {v}`: unknown level")));
                    }
                    out.log_level = Some(lvl);
                }
                "-e" | "--enclave" => {
                    value(&a)?;
                }
                "--disable-rosout-logs"
                | "--enable-rosout-logs"
                | "--disable-stdout-logs"
                | "--enable-stdout-logs"
                | "--disable-external-lib-logs" => {}
                other => return Err(RosError::Args(format!("unknown ROS argument `{other}`"))),
            }
        }
        Ok(out)
    }

    fn remap(&mut self, rule: &str) -> Result<()> {
        let (from, to) = split_assign(rule)?;
        // A `node:` prefix targets one node; modbot's processes hold one node each.
        let from = from.rsplit_once(':').map(|(_, f)| f).unwrap_or(from);
        match from {
            "__ns" => {
                if !to.starts_with('/') {
                    return Err(RosError::Args(format!("`-r {rule}`: the namespace must be absolute")));
                }
                self.namespace = Some(to.trim_end_matches('/').to_string());
            }
            "__node" | "__name" => self.node_name = Some(to.to_string()),
            _ => self.remaps.push((from.to_string(), to.to_string())),
        }
        Ok(())
    }
}

fn split_assign(s: &str) -> Result<(&str, &str)> {
    match s.split_once(":=") {
        Some((k, v)) if !k.is_empty() => Ok((k, v)),
        _ => Err(RosError::Args(format!("`{s}`: expected NAME:=VALUE"))),
    }
}

/// Who a node is: its name, namespace and topic remaps, from `--ros-args` or defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeIdentity {
    /// Node name.
    pub name: String,
    /// Absolute namespace (`/` for the root).
    pub namespace: String,
    /// `from:=to` remaps.
    pub remaps: Vec<(String, String)>,
}

impl NodeIdentity {
    /// The identity `args` give a node whose own name is `default_name`; invalid names are
    /// refused by name.
    pub fn new(default_name: &str, args: &RosArgs) -> Result<NodeIdentity> {
        let name = args.node_name.clone().unwrap_or_else(|| default_name.to_string());
        let namespace = args.namespace.clone().unwrap_or_else(|| "/".to_string());
        if !valid_name(&name) || name.contains('/') {
            return Err(RosError::Args(format!("invalid node name `{name}`")));
        }
        if namespace != "/" && !valid_name(&namespace) {
            return Err(RosError::Args(format!("invalid namespace `{namespace}`")));
        }
        Ok(NodeIdentity {
            name,
            namespace,
            remaps: args.remaps.clone(),
        })
    }

    /// Fully qualified name, `/ns/name`.
    pub fn fq_name(&self) -> String {
        format!("{}/{}", self.namespace.trim_end_matches('/'), self.name)
    }

    /// The rosout logger name, `ns.name`.
    pub fn logger(&self) -> String {
        self.fq_name().trim_start_matches('/').replace('/', ".")
    }

    /// The absolute name of a topic given relative to the node.
    pub fn resolve(&self, topic: &str) -> String {
        resolve_topic(topic, &self.namespace, &self.name, &self.remaps)
    }
}

/// Checks a node or topic base name the way rcl does: letters, digits, `_`, `/`; not
/// starting with a digit; no `//` or `__`.
pub fn valid_name(name: &str) -> bool {
    let body = name.trim_start_matches(['/', '~']);
    !body.is_empty()
        && !body.starts_with(|c: char| c.is_ascii_digit())
        && body.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '/')
        && !body.contains("//")
        && !body.contains("__")
        && !body.ends_with('/')
}

/// Resolves a topic name against a namespace, the node name (for `~`) and the remaps, as
/// rcl does: remap rules match the name as written or fully qualified.
pub fn resolve_topic(name: &str, namespace: &str, node: &str, remaps: &[(String, String)]) -> String {
    let qualify = |n: &str| -> String {
        if let Some(rest) = n.strip_prefix("~/") {
            format!("{}/{node}/{rest}", namespace.trim_end_matches('/'))
        } else if n.starts_with('/') {
            n.to_string()
        } else {
            format!("{}/{n}", namespace.trim_end_matches('/'))
        }
    };
    let full = qualify(name);
    for (from, to) in remaps {
        if from == name || qualify(from) == full {
            return qualify(to);
        }
    }
    full
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<RosArgs> {
        RosArgs::parse(s.split_whitespace().map(String::from))
    }

    #[test]
    fn ros_args_are_parsed() {
        let a = parse(
            "--foo --ros-args -r __ns:=/snake1 -r __node:=walker -r cmd:=/other/cmd -p control_rate_hz:=50 \
             -p gait:=sidewinding --params-file a.yaml --log-level debug -- tail",
        )
        .unwrap();
        assert_eq!(a.namespace.as_deref(), Some("/snake1"));
        assert_eq!(a.node_name.as_deref(), Some("walker"));
        assert_eq!(a.remaps, vec![("cmd".to_string(), "/other/cmd".to_string())]);
        assert_eq!(a.params[0], ("control_rate_hz".to_string(), ParamValue::Int(50)));
        assert_eq!(a.params[1], ("gait".to_string(), ParamValue::Str("sidewinding".into())));
        assert_eq!(a.params_files, vec!["a.yaml"]);
        assert_eq!(a.log_level.as_deref(), Some("debug"));
        assert_eq!(a.rest, vec!["--foo", "tail"]);
    }

    #[test]
    fn bad_ros_args_are_named() {
        assert!(
            parse("--ros-args -r nothing")
                .unwrap_err()
                .to_string()
                .contains("nothing")
        );
        assert!(parse("--ros-args -p").unwrap_err().to_string().contains("-p"));
        assert!(parse("--ros-args --bogus").unwrap_err().to_string().contains("--bogus"));
        assert!(
            parse("--ros-args -r __ns:=relative")
                .unwrap_err()
                .to_string()
                .contains("absolute")
        );
    }

    #[test]
    fn topics_resolve_with_namespace_and_remaps() {
        let r = vec![("joint_states".to_string(), "states".to_string())];
        assert_eq!(resolve_topic("odom", "/snake1", "sim_node", &r), "/snake1/odom");
        assert_eq!(resolve_topic("/clock", "/snake1", "sim_node", &r), "/clock");
        assert_eq!(
            resolve_topic("joint_states", "/snake1", "sim_node", &r),
            "/snake1/states"
        );
        assert_eq!(resolve_topic("~/debug", "/", "sim_node", &r), "/sim_node/debug");
        assert_eq!(resolve_topic("odom", "/", "n", &[]), "/odom");
        assert!(valid_name("position_controller/commands"));
        assert!(!valid_name("9lives"));
        assert!(!valid_name("a__b"));
    }
}
