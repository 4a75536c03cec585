//! ROS 2 YAML launch files, resolved without ROS: `arg`, `let`, `node`, `group` with
//! `push-ros-namespace`, `include`, the `if`/`unless` attributes, and the substitutions
//! `$(var)`, `$(env)`, `$(find-pkg-share)`, `$(find-pkg-prefix)`, `$(dirname)`,
//! `$(equals)`/`$(not)`/`$(and)`/`$(or)`, and `$(command …)` as the whole value of a node
//! parameter (kept as its command line, never run here). Substitution arguments are split
//! as ROS's grammar does (single or double quotes group, `''` is an empty argument). The
//! same files run under `ros2 launch`; `modbot launch` resolves them here into processes of
//! modbot's own nodes. A node or include of a package that modbot does not provide is an
//! error naming it, unless its `if`/`unless` switches it off; a dry run
//! ([`Options::dry_run`], `modbot launch --print`) expands them instead, foreign packages'
//! share folders shown as `<find-pkg-share PKG>` (decision record 0044).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_yaml_ng::{Mapping, Value};

use crate::error::{Result, RosError};

/// Packages `modbot launch` provides, with the folder each one's share directory maps to.
pub fn modbot_packages(root: &Path) -> BTreeMap<String, PathBuf> {
    let mut m = BTreeMap::new();
    // modbot_bringup installs launch/, urdf/, worlds/ and config/ from the repository root.
    m.insert("modbot_bringup".to_string(), root.to_path_buf());
    for p in [
        "modbot_ros",
        "modbot_msgs",
        "modbot_description",
        "modbot_sim",
        "modbot_gaits",
        "modbot_core",
        "modbot_planner",
    ] {
        m.insert(p.to_string(), root.join("packages").join(p));
    }
    m
}

/// One declared launch argument.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchArg {
    /// Name.
    pub name: String,
    /// Default value (None: required).
    pub default: Option<String>,
    /// Description.
    pub description: String,
}

/// A node to start, fully resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeLaunch {
    /// Package.
    pub pkg: String,
    /// Executable.
    pub exec: String,
    /// Node name (`__node:=`), if given.
    pub name: Option<String>,
    /// Namespace (`__ns:=`), absolute, if any.
    pub namespace: Option<String>,
    /// `-p name:=value`, in order.
    pub params: Vec<(String, String)>,
    /// `--params-file`, in order.
    pub params_files: Vec<PathBuf>,
    /// `-r from:=to`.
    pub remaps: Vec<(String, String)>,
    /// Extra command-line arguments before `--ros-args`.
    pub args: Vec<String>,
    /// Parameters whose value is the output of a command (`$(command …)`): name and the
    /// resolved command line (split with [`split_command`]). Never run by the resolver.
    pub command_params: Vec<(String, String)>,
    /// `on_exit: shutdown`: when this node exits, the whole launch stops.
    pub on_exit_shutdown: bool,
}

impl NodeLaunch {
    /// The command-line arguments after the executable.
    pub fn argv(&self) -> Vec<String> {
        let mut v = self.args.clone();
        v.push("--ros-args".into());
        if let Some(n) = &self.name {
            v.extend(["-r".into(), format!("__node:={n}")]);
        }
        if let Some(ns) = &self.namespace {
            v.extend(["-r".into(), format!("__ns:={ns}")]);
        }
        for f in &self.params_files {
            v.extend(["--params-file".into(), f.display().to_string()]);
        }
        for (k, val) in &self.params {
            // rcl parses `-p` values as YAML and refuses an empty one: spell it ''.
            let val = if val.is_empty() { "''" } else { val.as_str() };
            v.extend(["-p".into(), format!("{k}:={val}")]);
        }
        for (a, b) in &self.remaps {
            v.extend(["-r".into(), format!("{a}:={b}")]);
        }
        v
    }
}

impl NodeLaunch {
    /// Every resolved string of the node with the name of its field, for checks.
    pub fn fields(&self) -> Vec<(String, String)> {
        let mut v = vec![
            ("pkg".to_string(), self.pkg.clone()),
            ("exec".into(), self.exec.clone()),
        ];
        v.extend(self.name.iter().map(|n| ("name".to_string(), n.clone())));
        v.extend(self.namespace.iter().map(|n| ("namespace".to_string(), n.clone())));
        v.extend(self.params.iter().map(|(k, val)| (format!("param `{k}`"), val.clone())));
        v.extend(
            self.params_files
                .iter()
                .map(|f| ("param file".to_string(), f.display().to_string())),
        );
        v.extend(self.remaps.iter().map(|(a, b)| (format!("remap `{a}`"), b.clone())));
        v.extend(self.args.iter().map(|a| ("args".to_string(), a.clone())));
        v.extend(
            self.command_params
                .iter()
                .map(|(k, c)| (format!("param `{k}` (command)"), c.clone())),
        );
        v
    }

    /// How the node is named in messages: `NS/NAME` (or the executable), no leading slash.
    pub fn label(&self) -> String {
        format!(
            "{}{}",
            self.namespace
                .as_deref()
                .map(|s| format!("{s}/"))
                .unwrap_or_default()
                .trim_start_matches('/'),
            self.name.clone().unwrap_or_else(|| self.exec.clone())
        )
    }
}

/// An include modbot launch cannot read (a Python or XML launch file, or a file of a package
/// it does not provide), listed by a dry run with its resolved arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct IncludeLaunch {
    /// The file, resolved.
    pub file: String,
    /// `arg` entries, resolved, in order.
    pub args: Vec<(String, String)>,
}

/// A resolved launch description.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Launch {
    /// Arguments declared by the top file (and includes), in order.
    pub args: Vec<LaunchArg>,
    /// Nodes to start, in order.
    pub nodes: Vec<NodeLaunch>,
    /// Includes left unread (dry runs only), in order.
    pub includes: Vec<IncludeLaunch>,
}

/// How [`resolve_with`] treats what `modbot launch` cannot run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Expand without running: a package modbot does not provide resolves to
    /// `<find-pkg-share PKG>` (or `<find-pkg-prefix PKG>`), and includes of Python or XML
    /// launch files, or of such packages' files, are listed with their arguments.
    pub dry_run: bool,
}

/// Splits a resolved command line as `shlex.split` does for the plain cases launch files
/// use: whitespace separates, single and double quotes group, a backslash escapes outside
/// single quotes.
pub fn split_command(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut has = false;
    let mut chars = s.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, c) if c.is_whitespace() => {
                if has {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            (None, '\'') | (None, '"') => {
                quote = Some(c);
                has = true;
            }
            (Some(q), c) if c == q => quote = None,
            (Some('\''), c) => cur.push(c),
            (_, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
                has = true;
            }
            (_, c) => {
                cur.push(c);
                has = true;
            }
        }
    }
    if has {
        out.push(cur);
    }
    out
}

struct Ctx<'a> {
    vars: BTreeMap<String, String>,
    ns: Vec<String>,
    file: PathBuf,
    packages: &'a BTreeMap<String, PathBuf>,
    /// Bytes substitutions have produced so far in the whole launch, includes and all
    /// ([`MAX_LAUNCH_SUBSTITUTED_BYTES`]).
    expanded: &'a std::cell::Cell<usize>,
    options: Options,
}

fn err(file: &Path, why: impl std::fmt::Display) -> RosError {
    RosError::Node(format!("{}: {why}", file.display()))
}

/// Resolves a launch file with `overrides` (`name:=value` given on the command line).
pub fn resolve(file: &Path, overrides: &[(String, String)], packages: &BTreeMap<String, PathBuf>) -> Result<Launch> {
    resolve_with(file, overrides, packages, Options::default())
}

/// [`resolve`] with [`Options`]. Whatever the mode, a field still holding `$(` after
/// resolution is an error naming the node and the field.
pub fn resolve_with(
    file: &Path,
    overrides: &[(String, String)],
    packages: &BTreeMap<String, PathBuf>,
    options: Options,
) -> Result<Launch> {
    let mut out = Launch::default();
    let vars: BTreeMap<String, String> = overrides.iter().cloned().collect();
    let expanded = std::cell::Cell::new(0);
    let mut ctx = Ctx {
        vars,
        ns: Vec::new(),
        file: file.to_path_buf(),
        packages,
        expanded: &expanded,
        options,
    };
    resolve_file(file, &mut ctx, &mut out, 0)?;
    for n in &out.nodes {
        if let Some((field, v)) = n.fields().into_iter().find(|(_, v)| v.contains("$(")) {
            return Err(err(
                file,
                format!("node {} ({}): {field} is left unresolved: `{v}`", n.label(), n.pkg),
            ));
        }
    }
    for i in &out.includes {
        let all = std::iter::once(("file".to_string(), i.file.clone()))
            .chain(i.args.iter().map(|(k, v)| (format!("arg `{k}`"), v.clone())));
        for (field, v) in all {
            if v.contains("$(") {
                return Err(err(
                    file,
                    format!("include of {}: {field} is left unresolved: `{v}`", i.file),
                ));
            }
        }
    }
    let declared: Vec<&str> = out.args.iter().map(|a| a.name.as_str()).collect();
    for (k, _) in overrides {
        if !declared.contains(&k.as_str()) {
            return Err(err(
                file,
                format!("argument `{k}` is not declared (declared: {})", declared.join(", ")),
            ));
        }
    }
    Ok(out)
}

fn resolve_file(file: &Path, ctx: &mut Ctx, out: &mut Launch, depth: usize) -> Result<()> {
    if depth > 16 {
        return Err(err(file, "includes nest deeper than 16 (a cycle?)"));
    }
    let text = modbot_core::error::read_capped(file).map_err(|e| err(file, e))?;
    let doc: Value = modbot_core::error::yaml_from_str(&text).map_err(|e| err(file, e))?;
    if let Some(other) = doc
        .as_mapping()
        .and_then(|m| m.keys().find(|k| k.as_str() != Some("launch")))
    {
        return Err(err(
            file,
            format!("unknown top-level key {other:?}: a launch file holds `launch:` only"),
        ));
    }
    let entries = doc
        .get("launch")
        .and_then(Value::as_sequence)
        .ok_or_else(|| err(file, "the top level must be `launch:` with a list of actions"))?;
    let saved = std::mem::replace(&mut ctx.file, file.to_path_buf());
    let r = actions(entries, ctx, out, depth);
    ctx.file = saved;
    r
}

fn actions(entries: &[Value], ctx: &mut Ctx, out: &mut Launch, depth: usize) -> Result<()> {
    for (i, e) in entries.iter().enumerate() {
        let Value::Mapping(m) = e else {
            return Err(err(&ctx.file, format!("action {} is not a mapping", i + 1)));
        };
        if m.len() != 1 {
            return Err(err(
                &ctx.file,
                format!(
                    "action {} must have exactly one key (arg, let, node, group, include)",
                    i + 1
                ),
            ));
        }
        let (k, v) = m.iter().next().ok_or_else(|| err(&ctx.file, "empty action"))?;
        let kind = k.as_str().unwrap_or("");
        let body = match v {
            Value::Mapping(b) => b.clone(),
            Value::Sequence(_) if kind == "group" => {
                let mut b = Mapping::new();
                b.insert("actions".into(), v.clone());
                b
            }
            _ => {
                return Err(err(
                    &ctx.file,
                    format!("`{kind}` (action {}) must hold a mapping", i + 1),
                ));
            }
        };
        known_keys(&body, kind, ctx)?;
        if !condition(&body, ctx)? {
            continue;
        }
        match kind {
            "arg" => {
                let name = string_field(&body, "name", ctx)?.ok_or_else(|| err(&ctx.file, "`arg` without `name`"))?;
                let default = string_field(&body, "default", ctx)?;
                let description = string_field(&body, "description", ctx)?.unwrap_or_default();
                if !ctx.vars.contains_key(&name) {
                    match &default {
                        Some(d) => {
                            ctx.vars.insert(name.clone(), d.clone());
                        }
                        None => {
                            return Err(err(
                                &ctx.file,
                                format!("argument `{name}` is required: give `{name}:=VALUE`"),
                            ));
                        }
                    }
                }
                out.args.push(LaunchArg {
                    name,
                    default,
                    description,
                });
            }
            "let" => {
                let name = string_field(&body, "name", ctx)?.ok_or_else(|| err(&ctx.file, "`let` without `name`"))?;
                let value = string_field(&body, "value", ctx)?.unwrap_or_default();
                ctx.vars.insert(name, value);
            }
            "push-ros-namespace" | "push_ros_namespace" => {
                let ns = string_field(&body, "namespace", ctx)?.unwrap_or_default();
                ctx.ns.push(ns);
            }
            "group" => {
                let scoped = body.get("scoped").map(|s| s.as_bool().unwrap_or(true)).unwrap_or(true);
                let saved_vars = ctx.vars.clone();
                let saved_ns = ctx.ns.len();
                if let Some(ns) = string_field(&body, "namespace", ctx)? {
                    ctx.ns.push(ns);
                }
                let inner = if body.contains_key("actions") {
                    list(&body, "actions", "`group`", ctx)?
                } else {
                    list(&body, "children", "`group`", ctx)?
                };
                actions(inner, ctx, out, depth)?;
                ctx.ns.truncate(saved_ns);
                if scoped {
                    ctx.vars = saved_vars;
                }
            }
            "include" => {
                let f = string_field(&body, "file", ctx)?.ok_or_else(|| err(&ctx.file, "`include` without `file`"))?;
                let path = PathBuf::from(&f);
                let foreign = path.extension().is_some_and(|e| e == "py" || e == "xml") || f.starts_with('<');
                if foreign && ctx.options.dry_run {
                    let mut args = Vec::new();
                    for a in list(&body, "arg", "`include`", ctx)? {
                        let Value::Mapping(a) = a else {
                            return Err(err(&ctx.file, "an include `arg` entry must be a mapping"));
                        };
                        only_keys(a, "include `arg`", &["name", "value"], false, ctx)?;
                        let n = string_field(a, "name", ctx)?
                            .ok_or_else(|| err(&ctx.file, "include `arg` without `name`"))?;
                        args.push((n, string_field(a, "value", ctx)?.unwrap_or_default()));
                    }
                    out.includes.push(IncludeLaunch { file: f, args });
                    continue;
                }
                if foreign {
                    return Err(err(
                        &ctx.file,
                        format!("include of `{f}`: modbot launch reads YAML launch files only"),
                    ));
                }
                let mut inner = Ctx {
                    vars: ctx.vars.clone(),
                    ns: ctx.ns.clone(),
                    file: path.clone(),
                    packages: ctx.packages,
                    expanded: ctx.expanded,
                    options: ctx.options,
                };
                for a in list(&body, "arg", "`include`", ctx)? {
                    let Value::Mapping(a) = a else {
                        return Err(err(&ctx.file, "an include `arg` entry must be a mapping"));
                    };
                    only_keys(a, "include `arg`", &["name", "value"], false, ctx)?;
                    let n =
                        string_field(a, "name", ctx)?.ok_or_else(|| err(&ctx.file, "include `arg` without `name`"))?;
                    let v = string_field(a, "value", ctx)?.unwrap_or_default();
                    inner.vars.insert(n, v);
                }
                resolve_file(&path, &mut inner, out, depth + 1)?;
            }
            "node" => out.nodes.push(node(&body, ctx)?),
            "executable" => {
                let cmd = string_field(&body, "cmd", ctx)?.unwrap_or_default();
                return Err(err(
                    &ctx.file,
                    format!("`executable` ({cmd}) is not run by modbot launch"),
                ));
            }
            other => return Err(err(&ctx.file, format!("unknown action `{other}`"))),
        }
    }
    Ok(())
}

/// The keys each action takes (ROS 2's YAML launch format, the part modbot launch runs);
/// `if` and `unless` on every one. A misspelt key is refused as in every other file
/// (issue 18: `parm:` dropped every parameter and the launch went on).
fn action_keys(kind: &str) -> &'static [&'static str] {
    match kind {
        "arg" => &["name", "default", "description"],
        "let" => &["name", "value"],
        "push-ros-namespace" | "push_ros_namespace" => &["namespace"],
        "group" => &["actions", "children", "namespace", "scoped"],
        "include" => &["file", "arg"],
        // `output` (screen or log) is accepted: modbot launch prefixes and prints every
        // node's output either way.
        // `on_exit: shutdown` (launch's only on_exit action in YAML/XML): the launch stops
        // when the node exits.
        "node" => &[
            "pkg",
            "exec",
            "name",
            "namespace",
            "param",
            "remap",
            "args",
            "output",
            "on_exit",
        ],
        "executable" => &["cmd", "name", "args", "output", "on_exit"],
        _ => &[],
    }
}

/// Refuses keys of `m` not in `allowed` (nor `if`/`unless` when `conditions`), naming `what`.
fn only_keys(m: &Mapping, what: &str, allowed: &[&str], conditions: bool, ctx: &Ctx) -> Result<()> {
    for k in m.keys() {
        let key = k.as_str().unwrap_or("");
        if !(allowed.contains(&key) || conditions && (key == "if" || key == "unless")) {
            let mut known: Vec<&str> = allowed.to_vec();
            if conditions {
                known.extend(["if", "unless"]);
            }
            return Err(err(
                &ctx.file,
                format!("{what}: unknown key `{}` (known: {})", serde_key(k), known.join(", ")),
            ));
        }
    }
    Ok(())
}

fn known_keys(body: &Mapping, kind: &str, ctx: &Ctx) -> Result<()> {
    let allowed = action_keys(kind);
    if allowed.is_empty() {
        return Ok(()); // an unknown action is refused by name below
    }
    only_keys(body, &format!("`{kind}`"), allowed, true, ctx)
}

/// A mapping key as written (a string, or YAML for anything else).
fn serde_key(k: &Value) -> String {
    match k {
        Value::String(s) => s.clone(),
        other => serde_yaml_ng::to_string(other).unwrap_or_default().trim().to_string(),
    }
}

/// The list under `key` of `m`: none when absent; refused when it is not a list.
fn list<'m>(m: &'m Mapping, key: &str, what: &str, ctx: &Ctx) -> Result<&'m [Value]> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Sequence(items)) => Ok(items),
        Some(_) => Err(err(&ctx.file, format!("{what}: `{key}` must be a list"))),
    }
}

fn condition(body: &Mapping, ctx: &Ctx) -> Result<bool> {
    if let Some(v) = string_field(body, "if", ctx)? {
        return truthy(&v, &ctx.file);
    }
    if let Some(v) = string_field(body, "unless", ctx)? {
        return truthy(&v, &ctx.file).map(|b| !b);
    }
    Ok(true)
}

fn truthy(v: &str, file: &Path) -> Result<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" | "1" => Ok(true),
        "false" | "0" | "" => Ok(false),
        other => Err(err(file, format!("condition `{other}` is not true/false"))),
    }
}

fn string_field(m: &Mapping, key: &str, ctx: &Ctx) -> Result<Option<String>> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => subst(s, ctx).map(Some),
        Some(Value::Bool(b)) => Ok(Some(b.to_string())),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(Value::Sequence(items)) => {
            // A YAML list value (e.g. a string-array parameter) keeps its flow form.
            let parts: Vec<String> = items
                .iter()
                .map(|i| match i {
                    Value::String(s) => subst(s, ctx),
                    other => Ok(serde_yaml_ng::to_string(other).unwrap_or_default().trim().to_string()),
                })
                .collect::<Result<_>>()?;
            Ok(Some(format!("[{}]", parts.join(", "))))
        }
        Some(other) => Err(err(&ctx.file, format!("`{key}` must be a string, got {other:?}"))),
    }
}

/// Joins pushed namespaces as ROS does: a relative one nests, an absolute one restarts.
fn join_ns(parts: &[String]) -> Option<String> {
    let mut s = String::new();
    for p in parts {
        if p.starts_with('/') {
            s.clear();
        }
        for seg in p.split('/').filter(|x| !x.is_empty()) {
            s.push('/');
            s.push_str(seg);
        }
    }
    (!s.is_empty()).then_some(s)
}

fn node(b: &Mapping, ctx: &Ctx) -> Result<NodeLaunch> {
    let pkg = string_field(b, "pkg", ctx)?.ok_or_else(|| err(&ctx.file, "`node` without `pkg`"))?;
    let exec =
        string_field(b, "exec", ctx)?.ok_or_else(|| err(&ctx.file, format!("node of `{pkg}` without `exec`")))?;
    let name = string_field(b, "name", ctx)?;
    let mut ns_parts = ctx.ns.clone();
    if let Some(ns) = string_field(b, "namespace", ctx)? {
        ns_parts.push(ns);
    }
    let mut n = NodeLaunch {
        pkg,
        exec,
        name,
        namespace: join_ns(&ns_parts),
        params: Vec::new(),
        params_files: Vec::new(),
        remaps: Vec::new(),
        args: Vec::new(),
        command_params: Vec::new(),
        on_exit_shutdown: false,
    };
    // Read as written: launch compares the attribute with `shutdown` without substituting.
    match b.get("on_exit").map(|v| v.as_str().unwrap_or("(not a string)")) {
        None => {}
        Some("shutdown") => n.on_exit_shutdown = true,
        Some(other) => {
            return Err(err(
                &ctx.file,
                format!(
                    "node `{}`: on_exit must be `shutdown` (launch's only on_exit action), got `{other}`",
                    n.exec
                ),
            ));
        }
    }
    if let Some(a) = string_field(b, "args", ctx)? {
        n.args = a.split_whitespace().map(String::from).collect();
    }
    for p in list(b, "param", "`node`", ctx)? {
        let Value::Mapping(p) = p else {
            return Err(err(&ctx.file, "a `param` entry must be a mapping"));
        };
        if p.contains_key("from") {
            only_keys(p, "`param` entry", &["from"], false, ctx)?;
        } else {
            only_keys(p, "`param` entry", &["name", "value"], false, ctx)?;
        }
        if let Some(f) = string_field(p, "from", ctx)? {
            n.params_files.push(PathBuf::from(f));
        } else {
            let k = string_field(p, "name", ctx)?.ok_or_else(|| err(&ctx.file, "`param` without `name` or `from`"))?;
            if let Some(Value::String(raw)) = p.get("value")
                && let Some(inner) = whole_command(raw)
            {
                let args: Vec<String> = split_args(inner, ctx)?.into_iter().skip(1).collect();
                let Some(cmd) = args.first() else {
                    return Err(err(&ctx.file, format!("param `{k}`: `$(command)` needs a command")));
                };
                if args.len() > 2 {
                    return Err(err(
                        &ctx.file,
                        format!("param `{k}`: `$(command)` takes a command and an optional on_stderr"),
                    ));
                }
                let line = subst(cmd, ctx)?;
                if split_command(&line).is_empty() {
                    return Err(err(&ctx.file, format!("param `{k}`: `$(command)` needs a command")));
                }
                n.command_params.push((k, line));
                continue;
            }
            let v = string_field(p, "value", ctx)?.unwrap_or_default();
            n.params.push((k, v));
        }
    }
    for r in list(b, "remap", "`node`", ctx)? {
        let Value::Mapping(r) = r else {
            return Err(err(&ctx.file, "a `remap` entry must be a mapping"));
        };
        only_keys(r, "`remap` entry", &["from", "to"], false, ctx)?;
        let from = string_field(r, "from", ctx)?.ok_or_else(|| err(&ctx.file, "`remap` without `from`"))?;
        let to = string_field(r, "to", ctx)?.ok_or_else(|| err(&ctx.file, "`remap` without `to`"))?;
        n.remaps.push((from, to));
    }
    Ok(n)
}

/// Longest value a substitution may expand to, bytes. `let`s that repeat each other
/// (`b: $(var a)$(var a)`, `c: $(var b)$(var b)`, …) double at every step: without a
/// bound, 30 of them asked for gigabytes (issue 18).
pub const MAX_SUBSTITUTED_BYTES: usize = 64 * 1024;

/// Most bytes the substitutions of one launch (its file and every include) may produce
/// together. Each string is held to [`MAX_SUBSTITUTED_BYTES`], but a file of many strings
/// that each expand a large `let` (9 bytes of `$(var v)` giving 64 KiB) would otherwise
/// multiply a 16 MiB file by 7000 (issue 18).
pub const MAX_LAUNCH_SUBSTITUTED_BYTES: usize = 16 * 1024 * 1024;

/// The inside of `raw` when the whole (trimmed) string is one `$(command …)`.
fn whole_command(raw: &str) -> Option<&str> {
    let t = raw.trim();
    let rest = t.strip_prefix("$(command")?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let end = matching_paren(&t[2..])?;
    (2 + end == t.len() - 1).then(|| &t[2..2 + end])
}

/// Index (in `after`) of the `)` closing a `$(` whose inside starts `after`.
fn matching_paren(after: &str) -> Option<usize> {
    let mut depth = 1;
    for (j, c) in after.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => {}
        }
    }
    None
}

/// Splits the inside of a `$(…)` into its verb and arguments as ROS's launch grammar does:
/// spaces separate, a single- or double-quoted part groups (quotes removed; `''` is an empty
/// argument), a nested `$(…)` stays whole. Nothing is substituted yet.
fn split_args(expr: &str, ctx: &Ctx) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut has = false;
    let mut quote: Option<char> = None;
    let mut depth = 0usize;
    let mut prev = '\0';
    for c in expr.chars() {
        match c {
            '(' if prev == '$' || depth > 0 => {
                depth += 1;
                cur.push(c);
            }
            ')' if depth > 0 => {
                depth -= 1;
                cur.push(c);
            }
            '\'' | '"' if depth == 0 && quote.is_none() => {
                quote = Some(c);
                has = true;
            }
            c if depth == 0 && quote == Some(c) => quote = None,
            c if c.is_whitespace() && depth == 0 && quote.is_none() => {
                if has {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            c => {
                cur.push(c);
                has = true;
            }
        }
        prev = c;
    }
    if quote.is_some() {
        return Err(err(&ctx.file, format!("unclosed quote in `$({expr})`")));
    }
    if has {
        out.push(cur);
    }
    Ok(out)
}

/// Expands `$(...)` substitutions (arguments first); refuses a result longer than
/// [`MAX_SUBSTITUTED_BYTES`], and one that takes the launch's substitutions past
/// [`MAX_LAUNCH_SUBSTITUTED_BYTES`].
fn subst(s: &str, ctx: &Ctx) -> Result<String> {
    let mut out = String::new();
    let mut rest = s;
    let too_long = |n: usize| {
        err(
            &ctx.file,
            format!(
                "`{}…` expands to more than {MAX_SUBSTITUTED_BYTES} bytes ({n} so far)",
                s.chars().take(40).collect::<String>()
            ),
        )
    };
    while let Some(i) = rest.find("$(") {
        if out.len() + i > MAX_SUBSTITUTED_BYTES {
            return Err(too_long(out.len() + i));
        }
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let end = matching_paren(after).ok_or_else(|| err(&ctx.file, format!("unclosed `$(` in `{s}`")))?;
        let parts = split_args(&after[..end], ctx)?;
        let (verb, args) = parts.split_first().map(|(v, a)| (v.as_str(), a)).unwrap_or(("", &[]));
        let args: Vec<String> = args.iter().map(|a| subst(a, ctx)).collect::<Result<_>>()?;
        let value = evaluate(verb, &args, ctx)?;
        if out.len() + value.len() > MAX_SUBSTITUTED_BYTES {
            return Err(too_long(out.len() + value.len()));
        }
        let total = ctx.expanded.get().saturating_add(value.len());
        if total > MAX_LAUNCH_SUBSTITUTED_BYTES {
            return Err(err(
                &ctx.file,
                format!(
                    "the launch's substitutions expand to more than {MAX_LAUNCH_SUBSTITUTED_BYTES} bytes in all (at `{}…`)",
                    s.chars().take(40).collect::<String>()
                ),
            ));
        }
        ctx.expanded.set(total);
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn evaluate(verb: &str, args: &[String], ctx: &Ctx) -> Result<String> {
    let one = |what: &str| -> Result<&str> {
        args.first()
            .map(String::as_str)
            .ok_or_else(|| err(&ctx.file, format!("`$({verb})` needs {what}")))
    };
    match verb {
        "var" => {
            let n = one("a name")?;
            ctx.vars.get(n).cloned().ok_or_else(|| {
                err(
                    &ctx.file,
                    format!("`$(var {n})`: no argument or variable `{n}` is declared before it"),
                )
            })
        }
        "env" => {
            let n = one("a name")?;
            match (std::env::var(n), args.get(1)) {
                (Ok(v), _) => Ok(v),
                (Err(_), Some(d)) => Ok(d.clone()),
                (Err(_), None) => Err(err(
                    &ctx.file,
                    format!("`$(env {n})`: the environment variable is not set"),
                )),
            }
        }
        "find-pkg-share" | "find-pkg-prefix" => {
            let p = one("a package")?;
            if let Some(d) = ctx.packages.get(p) {
                return Ok(d.display().to_string());
            }
            if ctx.options.dry_run {
                return Ok(format!("<{verb} {p}>"));
            }
            Err(err(
                &ctx.file,
                format!(
                    "package `{p}` is not installed: modbot launch provides {}; run this file with `ros2 launch` in a ROS 2 installation that has `{p}`",
                    ctx.packages.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            ))
        }
        "dirname" => Ok(ctx
            .file
            .parent()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| ".".into())),
        "eq" | "equals" => {
            if args.len() != 2 {
                return Err(err(&ctx.file, format!("`$({verb})` needs two values")));
            }
            let (a, b) = (args[0].as_str(), args[1].as_str());
            // As launch's EqualsSubstitution: booleans and numbers compare by value.
            let as_bool = |v: &str| truthy(v, &ctx.file).ok().filter(|_| !v.trim().is_empty());
            let same = match (as_bool(a), as_bool(b), a.parse::<f64>(), b.parse::<f64>()) {
                (Some(x), Some(y), _, _) => x == y,
                (_, _, Ok(x), Ok(y)) => (x - y).abs() <= 1e-9 * x.abs().max(y.abs()),
                _ => a == b,
            };
            Ok(same.to_string())
        }
        "not" => Ok((!truthy(one("a value")?, &ctx.file)?).to_string()),
        "and" | "or" => {
            let vals: Vec<bool> = args.iter().map(|a| truthy(a, &ctx.file)).collect::<Result<_>>()?;
            Ok(if verb == "and" {
                vals.iter().all(|b| *b)
            } else {
                vals.iter().any(|b| *b)
            }
            .to_string())
        }
        "command" => Err(err(
            &ctx.file,
            "`$(command …)` is resolved only as the whole value of a node `param` (its command line is kept, never run by modbot launch)",
        )),
        other => Err(err(
            &ctx.file,
            format!("substitution `$({other} ...)` is not supported by modbot launch"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).expect("write");
        p
    }

    fn tmp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("modbot-launch-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("tmp dir");
        d
    }

    #[test]
    fn args_namespaces_params_remaps_conditions_and_includes() {
        let d = tmp("a");
        let pk: BTreeMap<String, PathBuf> = [("modbot_bringup".to_string(), d.clone())].into();
        write(
            &d,
            "inner.launch.yaml",
            "launch:\n- arg: {name: who, default: x}\n- node: {pkg: modbot_ros, exec: sim_node, name: sim_$(var who)}\n",
        );
        let f = write(
            &d,
            "top.launch.yaml",
            "launch:\n\
             - arg: {name: robot, default: 'pp:8', description: the robot}\n\
             - arg: {name: namespace, default: snake1}\n\
             - arg: {name: rviz, default: 'false'}\n\
             - group:\n\
             \x20   - push-ros-namespace: {namespace: $(var namespace)}\n\
             \x20   - node:\n\
             \x20       pkg: modbot_ros\n\
             \x20       exec: gait_node\n\
             \x20       param: [{name: robot, value: $(var robot)}, {name: gait_params, value: [A=40, dphi=-110]}, {from: $(find-pkg-share modbot_bringup)/p.yaml}]\n\
             \x20       remap: [{from: gait/command, to: /cmd}]\n\
             \x20   - include: {file: $(dirname)/inner.launch.yaml, arg: [{name: who, value: y}]}\n\
             - node: {pkg: rviz2, exec: rviz2, if: $(var rviz)}\n",
        );
        let l = resolve(&f, &[("robot".into(), "py:16".into())], &pk).expect("resolves");
        assert_eq!(l.args.len(), 4);
        assert_eq!(l.nodes.len(), 2);
        let g = &l.nodes[0];
        assert_eq!(g.namespace.as_deref(), Some("/snake1"));
        assert_eq!(g.params[0], ("robot".into(), "py:16".into()));
        assert_eq!(g.params[1], ("gait_params".into(), "[A=40, dphi=-110]".into()));
        assert_eq!(g.params_files[0], d.join("p.yaml"));
        assert_eq!(g.remaps[0], ("gait/command".into(), "/cmd".into()));
        assert!(g.argv().contains(&"__ns:=/snake1".to_string()));
        assert_eq!(l.nodes[1].name.as_deref(), Some("sim_y"));
        assert_eq!(l.nodes[1].namespace.as_deref(), Some("/snake1"));
        // rviz switched on: its package is not modbot's, so resolution says so.
        let e = resolve(&f, &[("rviz".into(), "true".into())], &pk);
        // The node itself resolves (the process start is what needs the package).
        assert!(e.is_ok());
    }

    #[test]
    fn errors_name_what_is_wrong() {
        let d = tmp("b");
        let pk: BTreeMap<String, PathBuf> = BTreeMap::new();
        for (text, want) in [
            ("nodes: []\n", "launch:"),
            ("launch:\n- node: {pkg: a}\n", "exec"),
            ("launch:\n- node: {pkg: a, exec: b, name: $(var nope)}\n", "nope"),
            (
                "launch:\n- include: {file: $(find-pkg-share ros_gz_sim)/launch/gz_sim.launch.yaml}\n",
                "ros_gz_sim",
            ),
            ("launch:\n- arg: {name: must}\n", "required"),
            ("launch:\n- bogus: {}\n", "bogus"),
            ("launch:\n- node: {pkg: a, exec: b, if: maybe}\n", "maybe"),
            ("launch: [\n", "bad.launch.yaml"),
            // Issue 18: misspelt keys are refused, not dropped with everything under them.
            (
                "launch:\n- node: {pkg: a, exec: b, parm: [{name: x, value: 1}]}\n",
                "`node`: unknown key `parm`",
            ),
            (
                "launch:\n- node: {pkg: a, exec: b, param: [{nme: x, value: 1}]}\n",
                "unknown key `nme`",
            ),
            (
                "launch:\n- node: {pkg: a, exec: b, param: x}\n",
                "`param` must be a list",
            ),
            (
                "launch:\n- node: {pkg: a, exec: b, remap: [{from: a, too: b}]}\n",
                "unknown key `too`",
            ),
            ("launch:\n- arg: {name: a, defualt: '1'}\n", "unknown key `defualt`"),
            ("launch:\n- group: {namespace: n, action: []}\n", "unknown key `action`"),
            ("launch:\n- include: {file: f.yaml, args: []}\n", "unknown key `args`"),
            (&format!("launch: {}\n", "[".repeat(10_000)), "nested deeper than 64"),
        ] {
            let f = write(&d, "bad.launch.yaml", text);
            let e = resolve(&f, &[], &pk).expect_err(text).to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
        let f = write(&d, "ok.launch.yaml", "launch:\n- arg: {name: a, default: '1'}\n");
        let e = resolve(&f, &[("b".into(), "2".into())], &pk)
            .expect_err("undeclared")
            .to_string();
        assert!(e.contains("`b` is not declared"), "{e}");
    }

    /// Issue 18: `let`s that double each other are stopped at the substitution bound, at
    /// once (they grew to 1.7 GB in 4 s).
    #[test]
    fn doubling_substitutions_are_bounded() {
        let d = tmp("c");
        let pk: BTreeMap<String, PathBuf> = BTreeMap::new();
        let mut text = String::from("launch:\n- let: {name: v0, value: xxxxxxxx}\n");
        for k in 1..40 {
            text += &format!("- let: {{name: v{k}, value: '$(var v{0})$(var v{0})'}}\n", k - 1);
        }
        let f = write(&d, "double.launch.yaml", &text);
        let e = resolve(&f, &[], &pk).expect_err("bounded").to_string();
        assert!(e.contains("more than 65536 bytes"), "{e}");
    }

    /// Issue 18: the bound covers the whole launch, not each string: 300 nodes each
    /// expanding a 60 000-byte `let` (18 MB in all, every string under its own bound) are
    /// refused; 200 of them (12 MB) resolve.
    #[test]
    fn the_substitution_bound_covers_the_whole_launch() {
        let d = tmp("w");
        let pk: BTreeMap<String, PathBuf> = BTreeMap::new();
        let launch = |nodes: usize| {
            let mut text = format!("launch:\n- let: {{name: big, value: {}}}\n", "x".repeat(60_000));
            for k in 0..nodes {
                text += &format!("- node: {{pkg: p, exec: e, name: n{k}, args: '$(var big)'}}\n");
            }
            text
        };
        let f = write(&d, "many.launch.yaml", &launch(300));
        let e = resolve(&f, &[], &pk).expect_err("bounded").to_string();
        assert!(e.contains("in all"), "{e}");
        let f = write(&d, "fewer.launch.yaml", &launch(200));
        let l = resolve(&f, &[], &pk).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(l.nodes.len(), 200);
    }

    /// Issue 19: the dry run expands other packages' nodes and includes, keeps `$(command)`
    /// as its command line (never run), splits substitution arguments as ROS does, and
    /// reads `on_exit: shutdown`.
    #[test]
    fn dry_runs_commands_quotes_and_on_exit() {
        let d = tmp("dry");
        let pk: BTreeMap<String, PathBuf> = [("modbot_bringup".to_string(), d.clone())].into();
        let f = write(
            &d,
            "g.launch.yaml",
            "launch:\n\
             - arg: {name: namespace, default: ''}\n\
             - let: {name: p, value: ''}\n\
             - let: {name: p, value: /$(var namespace), unless: $(equals $(var namespace) '')}\n\
             - include:\n\
             \x20   file: $(find-pkg-share ros_gz_sim)/launch/gz_sim.launch.py\n\
             \x20   arg: [{name: gz_args, value: -r $(find-pkg-share modbot_bringup)/w.sdf}]\n\
             - node:\n\
             \x20   pkg: robot_state_publisher\n\
             \x20   exec: robot_state_publisher\n\
             \x20   on_exit: shutdown\n\
             \x20   param: [{name: robot_description, value: \"$(command 'xacro $(find-pkg-share modbot_bringup)/r.urdf.xacro ns:=$(var namespace)')\"}]\n\
             - node: {pkg: controller_manager, exec: spawner, args: 'a -c $(var p)/controller_manager'}\n\
             - node: {pkg: x, exec: y, if: $(or $(equals $(var namespace) n1) $(equals \"a b\" 'a b'))}\n",
        );
        // Running resolution refuses the foreign include by name, as before.
        let e = resolve(&f, &[], &pk).expect_err("foreign").to_string();
        assert!(e.contains("package `ros_gz_sim` is not installed"), "{e}");
        let dry = Options { dry_run: true };
        for (ns, cm) in [("", "/controller_manager"), ("n1", "/n1/controller_manager")] {
            let l = resolve_with(&f, &[("namespace".into(), ns.into())], &pk, dry).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(l.includes.len(), 1);
            assert_eq!(
                l.includes[0].file,
                "<find-pkg-share ros_gz_sim>/launch/gz_sim.launch.py"
            );
            assert_eq!(
                l.includes[0].args,
                vec![("gz_args".to_string(), format!("-r {}/w.sdf", d.display()))]
            );
            let rsp = &l.nodes[0];
            assert!(rsp.on_exit_shutdown && rsp.params.is_empty());
            assert_eq!(rsp.command_params.len(), 1);
            assert_eq!(
                split_command(&rsp.command_params[0].1),
                vec![
                    "xacro".to_string(),
                    format!("{}/r.urdf.xacro", d.display()),
                    format!("ns:={ns}")
                ]
            );
            assert_eq!(l.nodes[1].args, vec!["a", "-c", cm]);
            assert!(!l.nodes[1].on_exit_shutdown);
            // `$(equals "a b" 'a b')`: quoted arguments keep their spaces.
            assert_eq!(l.nodes.len(), 3);
        }
        // `$(command)` elsewhere, a bad on_exit and a leftover `$(` are errors naming them.
        for (text, want) in [
            (
                "launch:\n- node: {pkg: a, exec: b, args: \"$(command 'ls')\"}\n",
                "whole value of a node `param`",
            ),
            (
                "launch:\n- node: {pkg: a, exec: b, on_exit: restart}\n",
                "on_exit must be `shutdown`",
            ),
            (
                "launch:\n- arg: {name: v, default: x}\n- node: {pkg: a, exec: b, name: $(var v)}\n",
                "name is left unresolved",
            ),
        ] {
            let f = write(&d, "bad.launch.yaml", text);
            let over: Vec<(String, String)> = if text.contains("name: v") {
                vec![("v".into(), "$(evil)".into())]
            } else {
                Vec::new()
            };
            let e = resolve_with(&f, &over, &pk, dry).expect_err(text).to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
        assert_eq!(
            split_command("a 'b c' \"d\\\" e\" f\\ g"),
            vec!["a", "b c", "d\" e", "f g"]
        );
    }
}
