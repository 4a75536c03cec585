//! ROS parameters: values, parameter files (`node: ros__parameters:`), and the typed
//! configuration each node validates them into. The same struct checks the start-up values
//! and every later `set_parameters` call, so a value the node refuses at start is refused
//! over the parameter service too, with the same message.

use std::collections::BTreeMap;
use std::path::Path;

use serde_yaml_ng::Value;

use crate::error::{Result, RosError};

/// A parameter value (the ROS parameter types).
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    /// bool
    Bool(bool),
    /// integer
    Int(i64),
    /// double
    Double(f64),
    /// string
    Str(String),
    /// bool[]
    BoolArray(Vec<bool>),
    /// integer[]
    IntArray(Vec<i64>),
    /// double[]
    DoubleArray(Vec<f64>),
    /// string[]
    StrArray(Vec<String>),
}

impl ParamValue {
    /// Parses a value as ROS does for `-p name:=value` (YAML).
    pub fn parse_yaml(text: &str) -> std::result::Result<ParamValue, String> {
        if text.is_empty() {
            return Ok(ParamValue::Str(String::new()));
        }
        let v: Value = modbot_core::error::yaml_from_str(text).map_err(|e| e.message)?;
        ParamValue::from_yaml(&v)
    }

    /// Converts a YAML value; nulls, maps, mixed lists and non-finite numbers are refused.
    pub fn from_yaml(v: &Value) -> std::result::Result<ParamValue, String> {
        Ok(match v {
            Value::Bool(b) => ParamValue::Bool(*b),
            Value::Number(n) => match n.as_i64() {
                Some(i) => ParamValue::Int(i),
                // No modbot node has a use for NaN or infinity, and each would slip past a
                // range check written as two comparisons.
                None => match n.as_f64() {
                    Some(x) if x.is_finite() => ParamValue::Double(x),
                    _ => return Err(format!("{n} is not a finite number")),
                },
            },
            Value::String(s) => ParamValue::Str(s.clone()),
            Value::Sequence(items) => {
                if items.is_empty() {
                    return Ok(ParamValue::StrArray(Vec::new()));
                }
                let vals: Vec<ParamValue> = items
                    .iter()
                    .map(ParamValue::from_yaml)
                    .collect::<std::result::Result<_, _>>()?;
                if vals.iter().all(|x| matches!(x, ParamValue::Bool(_))) {
                    ParamValue::BoolArray(
                        vals.iter()
                            .filter_map(|x| if let ParamValue::Bool(b) = x { Some(*b) } else { None })
                            .collect(),
                    )
                } else if vals.iter().all(|x| matches!(x, ParamValue::Int(_))) {
                    ParamValue::IntArray(
                        vals.iter()
                            .filter_map(|x| if let ParamValue::Int(i) = x { Some(*i) } else { None })
                            .collect(),
                    )
                } else if vals
                    .iter()
                    .all(|x| matches!(x, ParamValue::Int(_) | ParamValue::Double(_)))
                {
                    ParamValue::DoubleArray(vals.iter().filter_map(ParamValue::as_f64).collect())
                } else if vals.iter().all(|x| matches!(x, ParamValue::Str(_))) {
                    ParamValue::StrArray(vals.iter().filter_map(|x| x.as_str().map(String::from)).collect())
                } else {
                    return Err("a list must hold values of one type".into());
                }
            }
            Value::Null => return Err("null is not a parameter value".into()),
            Value::Mapping(_) => return Err("a mapping is not a parameter value".into()),
            Value::Tagged(t) => ParamValue::from_yaml(&t.value)?,
        })
    }

    /// As a double (integers widen).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            ParamValue::Double(x) => Some(*x),
            ParamValue::Int(i) => Some(*i as f64),
            _ => None,
        }
    }

    /// As a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            ParamValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// ROS type name, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            ParamValue::Bool(_) => "bool",
            ParamValue::Int(_) => "integer",
            ParamValue::Double(_) => "double",
            ParamValue::Str(_) => "string",
            ParamValue::BoolArray(_) => "bool array",
            ParamValue::IntArray(_) => "integer array",
            ParamValue::DoubleArray(_) => "double array",
            ParamValue::StrArray(_) => "string array",
        }
    }
}

/// Parameters by name.
pub type ParamMap = BTreeMap<String, ParamValue>;

/// One declared parameter.
#[derive(Debug, Clone)]
pub struct ParamDecl {
    /// Name.
    pub name: &'static str,
    /// Default value; its type is the parameter's type.
    pub default: ParamValue,
    /// What it means, for `ros2 param describe` readers and error messages.
    pub description: &'static str,
}

impl ParamDecl {
    /// A declaration: name, default (its type is the parameter's), description.
    pub fn new(name: &'static str, default: ParamValue, description: &'static str) -> ParamDecl {
        ParamDecl {
            name,
            default,
            description,
        }
    }
}

/// A node's typed configuration: its declared parameters and their validation.
pub trait NodeConfig: Sized + Clone + Send + Sync + 'static {
    /// Every parameter the node declares, with defaults.
    fn declarations() -> Vec<ParamDecl>;
    /// Builds the configuration from a complete parameter map; the error names the key.
    fn from_params(p: &ParamMap) -> std::result::Result<Self, String>;
}

/// A node with no parameters of its own (probes, benchmarks, tools).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoParams;

impl NodeConfig for NoParams {
    fn declarations() -> Vec<ParamDecl> {
        Vec::new()
    }
    fn from_params(_: &ParamMap) -> std::result::Result<Self, String> {
        Ok(NoParams)
    }
}

/// Parameters every node accepts besides its own.
pub const STANDARD_PARAMS: &[&str] = &["use_sim_time"];

/// The defaults of `C`.
pub fn defaults<C: NodeConfig>() -> ParamMap {
    C::declarations()
        .into_iter()
        .map(|d| (d.name.to_string(), d.default))
        .collect()
}

/// Checks that a value may be assigned to a declared parameter (integers may set doubles).
pub fn coerce<C: NodeConfig>(name: &str, value: &ParamValue) -> std::result::Result<ParamValue, String> {
    if STANDARD_PARAMS.contains(&name) {
        return Ok(value.clone());
    }
    let decls = C::declarations();
    let d = decls.iter().find(|d| d.name == name).ok_or_else(|| {
        let known: Vec<&str> = decls.iter().map(|d| d.name).collect();
        format!("unknown parameter `{name}` (known: {})", known.join(", "))
    })?;
    match (&d.default, value) {
        (ParamValue::Double(_), ParamValue::Int(i)) => Ok(ParamValue::Double(*i as f64)),
        (ParamValue::DoubleArray(_), ParamValue::IntArray(v)) => {
            Ok(ParamValue::DoubleArray(v.iter().map(|&i| i as f64).collect()))
        }
        (ParamValue::StrArray(_), ParamValue::StrArray(_)) => Ok(value.clone()),
        (a, b) if std::mem::discriminant(a) == std::mem::discriminant(b) => Ok(value.clone()),
        // An empty YAML list has no element type: accept it for any array.
        (ParamValue::DoubleArray(_), ParamValue::StrArray(v)) if v.is_empty() => {
            Ok(ParamValue::DoubleArray(Vec::new()))
        }
        (ParamValue::IntArray(_), ParamValue::StrArray(v)) if v.is_empty() => Ok(ParamValue::IntArray(Vec::new())),
        (ParamValue::BoolArray(_), ParamValue::StrArray(v)) if v.is_empty() => Ok(ParamValue::BoolArray(Vec::new())),
        _ => Err(format!(
            "parameter `{name}` is a {}, got a {} ({value:?})",
            d.default.type_name(),
            value.type_name()
        )),
    }
}

/// The parameters a `set_parameters` call would leave: `value` coerced to `name`'s
/// declaration and the whole set validated by `C`. The error is the reason the service
/// returns; both backends' parameter services validate through this.
pub fn with_assignment<C: NodeConfig>(
    current: &ParamMap,
    name: &str,
    value: &ParamValue,
) -> std::result::Result<ParamMap, String> {
    let v = coerce::<C>(name, value)?;
    let mut next = current.clone();
    next.insert(name.to_string(), v);
    C::from_params(&next)?;
    Ok(next)
}

/// Loads the parameters of one node from a ROS parameter file. Sections apply in file
/// order: `/**` (every node), `/**/NAME`, `NAME`, and `/NS/NAME` (this node only).
pub fn load_params_file(path: &Path, node: &str, namespace: &str) -> Result<ParamMap> {
    let text =
        modbot_core::error::read_capped(path).map_err(|e| RosError::Params(format!("{}: {e}", path.display())))?;
    params_from_yaml(&text, &path.display().to_string(), node, namespace)
}

/// [`load_params_file`] on text; `origin` names it in errors.
pub fn params_from_yaml(text: &str, origin: &str, node: &str, namespace: &str) -> Result<ParamMap> {
    let bad = |why: String| RosError::Params(format!("{origin}: {why}"));
    let doc: Value = modbot_core::error::yaml_from_str(text).map_err(|e| bad(e.message))?;
    let Value::Mapping(top) = doc else {
        return Err(bad("the top level must map node names to `ros__parameters`".into()));
    };
    let fq = format!("{}/{node}", namespace.trim_end_matches('/'));
    let mut out = ParamMap::new();
    for (k, v) in top {
        let key = k
            .as_str()
            .ok_or_else(|| bad("a node key is not a string".into()))?
            .to_string();
        let Value::Mapping(section) = v else {
            return Err(bad(format!("`{key}` must hold `ros__parameters:`")));
        };
        let params = section
            .get("ros__parameters")
            .ok_or_else(|| bad(format!("`{key}` has no `ros__parameters:`")))?;
        if let Some(other) = section.keys().find(|k| k.as_str() != Some("ros__parameters")) {
            return Err(bad(format!(
                "`{key}`: unexpected key {other:?} beside `ros__parameters`"
            )));
        }
        let applies = key == "/**"
            || key == node
            || key == fq
            || key.strip_prefix("/**/").is_some_and(|n| n == node)
            || key.trim_start_matches('/') == node && namespace == "/";
        let mut flat = Vec::new();
        flatten("", params, &mut flat).map_err(|e| bad(format!("`{key}`: {e}")))?;
        if applies {
            out.extend(flat);
        }
    }
    Ok(out)
}

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, ParamValue)>) -> std::result::Result<(), String> {
    match v {
        Value::Mapping(m) => {
            for (k, v) in m {
                let k = match k {
                    Value::String(s) => s.clone(),
                    other => return Err(format!("parameter name {other:?} is not a string")),
                };
                let name = if prefix.is_empty() { k } else { format!("{prefix}.{k}") };
                flatten(&name, v, out)?;
            }
            Ok(())
        }
        other => {
            let pv = ParamValue::from_yaml(other).map_err(|e| format!("`{prefix}`: {e}"))?;
            out.push((prefix.to_string(), pv));
            Ok(())
        }
    }
}

/// The start-up parameters of a node: defaults, then parameter files, then `-p`; each value
/// checked against its declaration and the whole set validated by `C`.
pub fn resolve<C: NodeConfig>(files: &[ParamMap], overrides: &[(String, ParamValue)]) -> Result<(ParamMap, C)> {
    let mut map = defaults::<C>();
    for (k, v) in files
        .iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.clone()))
        .chain(overrides.iter().cloned())
    {
        let v = coerce::<C>(&k, &v).map_err(RosError::Params)?;
        map.insert(k, v);
    }
    let cfg = C::from_params(&map).map_err(RosError::Params)?;
    Ok((map, cfg))
}

/// Typed getters for `NodeConfig::from_params`.
pub struct Get<'a>(pub &'a ParamMap);

impl Get<'_> {
    /// A double; missing or mistyped names the key.
    pub fn f64(&self, k: &str) -> std::result::Result<f64, String> {
        self.0
            .get(k)
            .and_then(ParamValue::as_f64)
            .ok_or_else(|| format!("parameter `{k}` must be a number"))
    }
    /// A double in `[lo, hi]`.
    pub fn f64_in(&self, k: &str, lo: f64, hi: f64) -> std::result::Result<f64, String> {
        let x = self.f64(k)?;
        if x.is_finite() && x >= lo && x <= hi {
            Ok(x)
        } else {
            Err(format!("parameter `{k}` = {x} is outside [{lo}, {hi}]"))
        }
    }
    /// An integer in `[lo, hi]`; missing, mistyped or out of range names the key.
    pub fn i64_in(&self, k: &str, lo: i64, hi: i64) -> std::result::Result<i64, String> {
        match self.0.get(k) {
            Some(ParamValue::Int(v)) if (lo..=hi).contains(v) => Ok(*v),
            Some(ParamValue::Int(v)) => Err(format!("parameter `{k}` = {v} is outside [{lo}, {hi}]")),
            _ => Err(format!("parameter `{k}` must be an integer")),
        }
    }
    /// A string.
    pub fn str(&self, k: &str) -> std::result::Result<String, String> {
        self.0
            .get(k)
            .and_then(|v| v.as_str().map(String::from))
            .ok_or_else(|| format!("parameter `{k}` must be a string"))
    }
    /// A bool.
    pub fn bool(&self, k: &str) -> std::result::Result<bool, String> {
        match self.0.get(k) {
            Some(ParamValue::Bool(b)) => Ok(*b),
            _ => Err(format!("parameter `{k}` must be a bool")),
        }
    }
    /// A string array.
    pub fn strs(&self, k: &str) -> std::result::Result<Vec<String>, String> {
        match self.0.get(k) {
            Some(ParamValue::StrArray(v)) => Ok(v.clone()),
            _ => Err(format!("parameter `{k}` must be a string array")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_file_sections_apply_by_node() {
        let y = "/**:\n  ros__parameters:\n    use_sim_time: true\n\
                 gait_node:\n  ros__parameters:\n    gait: sidewinding\n    rates: {control: 50}\n\
                 /snake2/gait_node:\n  ros__parameters:\n    gait: rolling\n\
                 sim_node:\n  ros__parameters:\n    robot: py:16\n";
        let p = params_from_yaml(y, "t.yaml", "gait_node", "/snake1").unwrap();
        assert_eq!(p["use_sim_time"], ParamValue::Bool(true));
        assert_eq!(p["gait"], ParamValue::Str("sidewinding".into()));
        assert_eq!(p["rates.control"], ParamValue::Int(50));
        assert!(!p.contains_key("robot"));
        let p2 = params_from_yaml(y, "t.yaml", "gait_node", "/snake2").unwrap();
        assert_eq!(p2["gait"], ParamValue::Str("rolling".into()));
    }

    #[test]
    fn malformed_params_files_are_named() {
        for (y, want) in [
            ("- a\n- b\n", "top level"),
            ("gait_node: 3\n", "gait_node"),
            ("gait_node:\n  params: {}\n", "ros__parameters"),
            ("gait_node:\n  ros__parameters:\n    x: [1, a]\n", "`x`"),
            ("gait_node:\n  ros__parameters:\n    x: ~\n", "null"),
            ("gait_node: [\n", "t.yaml"),
        ] {
            let e = params_from_yaml(y, "t.yaml", "gait_node", "/").unwrap_err().to_string();
            assert!(e.contains(want), "{y:?}: {e}");
        }
    }

    #[test]
    fn yaml_values() {
        assert_eq!(ParamValue::parse_yaml("1.5").unwrap(), ParamValue::Double(1.5));
        assert_eq!(ParamValue::parse_yaml("true").unwrap(), ParamValue::Bool(true));
        assert_eq!(
            ParamValue::parse_yaml("[1, 2.5]").unwrap(),
            ParamValue::DoubleArray(vec![1.0, 2.5])
        );
        assert_eq!(
            ParamValue::parse_yaml("[A=40, dphi=110]").unwrap(),
            ParamValue::StrArray(vec!["A=40".into(), "dphi=110".into()])
        );
        assert_eq!(
            ParamValue::parse_yaml("py:16").unwrap(),
            ParamValue::Str("py:16".into())
        );
    }
}
