//! Generates the Rust message types from the `.msg` files: this package's own `msg/` and the
//! standard interfaces the nodes use, under `interfaces/<package>/msg/`. No hand-written
//! struct can drift from its `.msg`: the structs exist only as this script's output.
//!
//! The `.msg` grammar handled is the ROS 2 one (design/articles/interface_definition):
//! primitive types, `string<=N`, nested `pkg/Type` or same-package `Type`, unbounded `[]`,
//! bounded `[<=N]` and fixed `[N]` arrays, field defaults and constants. A construct outside
//! it (wstring, a type that resolves nowhere, a malformed line) stops the build with the
//! file and line.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    collect(&root.join("msg"), "modbot_msgs", &mut files);
    let mut srv_files: Vec<PathBuf> = std::fs::read_dir(root.join("srv"))
        .map(|rd| {
            rd.map(|e| e.expect("readable srv/").path())
                .filter(|p| p.extension().is_some_and(|e| e == "srv"))
                .collect()
        })
        .unwrap_or_default();
    srv_files.sort();
    let interfaces = root.join("interfaces");
    let mut pkgs: Vec<PathBuf> = std::fs::read_dir(&interfaces)
        .expect("interfaces/ exists")
        .map(|e| e.expect("readable interfaces/").path())
        .collect();
    pkgs.sort();
    for p in pkgs {
        let name = p
            .file_name()
            .and_then(|n| n.to_str())
            .expect("utf-8 package name")
            .to_string();
        collect(&p.join("msg"), &name, &mut files);
    }
    println!("cargo::rerun-if-changed=msg");
    println!("cargo::rerun-if-changed=interfaces");
    println!("cargo::rerun-if-changed=srv");

    let mut msgs: BTreeMap<(String, String), Msg> = BTreeMap::new();
    for (pkg, path) in &files {
        let (text, name) = read(path);
        match parse(pkg, &name, &text) {
            Ok(m) => {
                msgs.insert((pkg.clone(), name), m);
            }
            Err((line, why)) => panic!("{}:{line}: {why}", path.display()),
        }
    }
    // A service is two messages, `Name_Request` and `Name_Response`, split at `---`.
    let mut services: Vec<(String, String)> = Vec::new();
    for path in &srv_files {
        let (text, name) = read(path);
        let lines: Vec<&str> = text.lines().collect();
        let sep = lines.iter().position(|l| l.trim() == "---").unwrap_or_else(|| {
            panic!(
                "{}: a service needs a `---` line between request and response",
                path.display()
            )
        });
        for (part, body, offset) in [
            ("Request", lines[..sep].join("\n"), 0),
            ("Response", lines[sep + 1..].join("\n"), sep + 1),
        ] {
            let n = format!("{name}_{part}");
            match parse("modbot_msgs", &n, &body) {
                Ok(mut m) => {
                    m.kind = "srv";
                    msgs.insert(("modbot_msgs".to_string(), n), m);
                }
                Err((line, why)) => panic!("{}:{}: {why}", path.display(), line + offset),
            }
        }
        services.push(("modbot_msgs".to_string(), name));
    }
    // Resolve every nested type now, so a typo fails the build naming the file and line.
    for m in msgs.values() {
        for f in &m.fields {
            if let Base::Nested(p, n) = &f.ty.base {
                if !msgs.contains_key(&(p.clone(), n.clone())) {
                    panic!(
                        "{}/msg/{}.msg:{}: field `{}` has type {p}/{n}, which no .msg file defines",
                        m.package, m.name, f.line, f.name
                    );
                }
            }
        }
    }

    let mut out = String::new();
    let mut by_pkg: BTreeMap<&str, Vec<&Msg>> = BTreeMap::new();
    for m in msgs.values() {
        by_pkg.entry(m.package.as_str()).or_default().push(m);
    }
    let _ = writeln!(out, "/// Every generated service, as (package, name).");
    let _ = writeln!(out, "pub const ALL_SERVICES: &[(&str, &str)] = &[");
    for (p, n) in &services {
        let _ = writeln!(out, "    ({p:?}, {n:?}),");
    }
    let _ = writeln!(out, "];\n");
    let _ = writeln!(out, "/// Every generated message, as (package, name).");
    let _ = writeln!(out, "pub const ALL_MESSAGES: &[(&str, &str)] = &[");
    for m in msgs.values().filter(|m| m.kind == "msg") {
        let _ = writeln!(out, "    ({:?}, {:?}),", m.package, m.name);
    }
    let _ = writeln!(out, "];\n");
    type_switch(
        &mut out,
        "/// The field list of a message by its ROS type (`pkg/msg/Name`).",
        "fields_of(ros_type: &str) -> Option<&'static [(&'static str, &'static str)]>",
        "    use crate::RosMessage as _;\n",
        msgs.values(),
        |ty| format!("{ty}::FIELDS"),
    );
    type_switch(
        &mut out,
        "/// Decodes CDR `bytes` as the message of a ROS type (`pkg/msg/Name`) and encodes it again;\n\
         /// `None` for a type that is not generated (what a decoder fed from the wire must survive).",
        "decode_as(ros_type: &str, bytes: &[u8]) -> Option<Result<Vec<u8>, crate::cdr::CdrError>>",
        "",
        msgs.values().filter(|m| m.kind == "msg"),
        |ty| format!("crate::cdr::from_bytes::<{ty}>(bytes).and_then(|m| crate::cdr::to_bytes(&m))"),
    );
    type_switch(
        &mut out,
        "/// The CDR encoding of the default message of a ROS type (`pkg/msg/Name`); `None` for a\n\
         /// type that is not generated.",
        "encoded_default(ros_type: &str) -> Option<Result<Vec<u8>, crate::cdr::CdrError>>",
        "",
        msgs.values().filter(|m| m.kind == "msg"),
        |ty| format!("crate::cdr::to_bytes(&{ty}::default())"),
    );
    for (pkg, list) in by_pkg {
        let _ = writeln!(out, "/// Messages of the ROS package `{pkg}`.");
        let _ = writeln!(out, "pub mod {pkg} {{");
        for kind in ["msg", "srv"] {
            let of_kind: Vec<&&Msg> = list.iter().filter(|m| m.kind == kind).collect();
            if of_kind.is_empty() {
                continue;
            }
            let _ = writeln!(out, "    /// The package's `{kind}/` interfaces.");
            let _ = writeln!(out, "    pub mod {kind} {{");
            for m in of_kind {
                emit(&mut out, m);
            }
            let _ = writeln!(out, "    }}");
        }
        let _ = writeln!(out, "}}\n");
    }
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("generated.rs");
    std::fs::write(&dest, out).unwrap_or_else(|e| panic!("{}: {e}", dest.display()));
}

/// An interface file's text and its type name (the file stem); cargo reruns when it changes.
fn read(path: &Path) -> (String, String) {
    println!("cargo::rerun-if-changed={}", path.display());
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = path
        .file_stem()
        .and_then(|n| n.to_str())
        .expect("utf-8 file name")
        .to_string();
    (text, name)
}

fn collect(dir: &Path, pkg: &str, files: &mut Vec<(String, PathBuf)>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut v: Vec<PathBuf> = rd
        .map(|e| e.expect("readable msg dir").path())
        .filter(|p| p.extension().is_some_and(|e| e == "msg"))
        .collect();
    v.sort();
    files.extend(v.into_iter().map(|p| (pkg.to_string(), p)));
}

#[derive(Debug, Clone)]
enum Base {
    Prim(&'static str),
    Str(Option<u64>),
    Nested(String, String),
}

#[derive(Debug, Clone)]
enum Arr {
    None,
    Unbounded,
    Bounded(u64),
    Fixed(u64),
}

#[derive(Debug, Clone)]
struct Ty {
    base: Base,
    arr: Arr,
}

#[derive(Debug)]
struct Field {
    name: String,
    ty: Ty,
    default: Option<String>,
    doc: Vec<String>,
    line: usize,
}

#[derive(Debug)]
struct Constant {
    name: String,
    ty: Ty,
    value: String,
    doc: Vec<String>,
}

#[derive(Debug)]
struct Msg {
    kind: &'static str,
    package: String,
    name: String,
    doc: Vec<String>,
    fields: Vec<Field>,
    constants: Vec<Constant>,
}

/// (ROS name, Rust type, IDL name as rosidl prints it)
const PRIMS: &[(&str, &str, &str)] = &[
    ("bool", "bool", "boolean"),
    ("byte", "u8", "octet"),
    ("char", "u8", "uint8"),
    ("int8", "i8", "int8"),
    ("uint8", "u8", "uint8"),
    ("int16", "i16", "int16"),
    ("uint16", "u16", "uint16"),
    ("int32", "i32", "int32"),
    ("uint32", "u32", "uint32"),
    ("int64", "i64", "int64"),
    ("uint64", "u64", "uint64"),
    ("float32", "f32", "float"),
    ("float64", "f64", "double"),
];

fn parse_type(pkg: &str, s: &str) -> Result<Ty, String> {
    let (base_s, arr) = match s.find('[') {
        Some(i) => {
            let inner = s[i + 1..]
                .strip_suffix(']')
                .ok_or_else(|| format!("array type `{s}` lacks `]`"))?;
            let arr = if inner.is_empty() {
                Arr::Unbounded
            } else if let Some(b) = inner.strip_prefix("<=") {
                Arr::Bounded(b.parse().map_err(|_| format!("bad array bound in `{s}`"))?)
            } else {
                Arr::Fixed(inner.parse().map_err(|_| format!("bad array size in `{s}`"))?)
            };
            (&s[..i], arr)
        }
        None => (s, Arr::None),
    };
    let base = if let Some(&(ros, _, _)) = PRIMS.iter().find(|p| p.0 == base_s) {
        Base::Prim(ros)
    } else if base_s == "string" {
        Base::Str(None)
    } else if let Some(b) = base_s.strip_prefix("string<=") {
        Base::Str(Some(b.parse().map_err(|_| format!("bad string bound in `{s}`"))?))
    } else if base_s.starts_with("wstring") {
        return Err("wstring is not supported by modbot's generator".into());
    } else if let Some((p, n)) = base_s.split_once('/') {
        check_ident(p)?;
        check_type_name(n)?;
        Base::Nested(p.to_string(), n.to_string())
    } else if base_s == "Header" {
        Base::Nested("std_msgs".into(), "Header".into())
    } else {
        check_type_name(base_s)?;
        Base::Nested(pkg.to_string(), base_s.to_string())
    };
    Ok(Ty { base, arr })
}

fn check_ident(s: &str) -> Result<(), String> {
    let ok = s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!("`{s}` is not a valid name"))
    }
}

fn check_type_name(s: &str) -> Result<(), String> {
    let ok = s.chars().next().is_some_and(|c| c.is_ascii_uppercase()) && s.chars().all(|c| c.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err(format!("`{s}` is not a valid type name"))
    }
}

fn parse(pkg: &str, name: &str, text: &str) -> Result<Msg, (usize, String)> {
    let mut msg = Msg {
        kind: "msg",
        package: pkg.into(),
        name: name.into(),
        doc: Vec::new(),
        fields: Vec::new(),
        constants: Vec::new(),
    };
    let mut pending: Vec<String> = Vec::new();
    let mut header_done = false;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            if !header_done && !pending.is_empty() {
                msg.doc.append(&mut pending);
            }
            header_done = header_done || !msg.doc.is_empty();
            pending.clear();
            continue;
        }
        if let Some(c) = trimmed.strip_prefix('#') {
            pending.push(c.strip_prefix(' ').unwrap_or(c).to_string());
            continue;
        }
        header_done = true;
        let (ty_s, rest) = trimmed
            .split_once(char::is_whitespace)
            .ok_or((line_no, format!("`{trimmed}`: expected `TYPE NAME`")))?;
        let ty = parse_type(pkg, ty_s).map_err(|e| (line_no, e))?;
        let rest = rest.trim();
        let is_string = matches!(ty.base, Base::Str(_));
        let doc = std::mem::take(&mut pending);
        // A constant: NAME=VALUE (a string constant's value runs to the end of the line).
        let name_end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let (fname, after) = rest.split_at(name_end);
        let after_t = after.trim_start();
        if let Some(v) = after_t.strip_prefix('=') {
            if !fname
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            {
                return Err((line_no, format!("constant `{fname}` must be upper case")));
            }
            let value = if is_string {
                v.trim().to_string()
            } else {
                strip_comment(v).trim().to_string()
            };
            msg.constants.push(Constant {
                name: fname.into(),
                ty,
                value,
                doc,
            });
            continue;
        }
        check_ident(fname).map_err(|e| (line_no, e))?;
        if fname.contains("__") || fname.ends_with('_') || fname.chars().any(|c| c.is_ascii_uppercase()) {
            return Err((line_no, format!("field name `{fname}` must be lower snake case")));
        }
        let mut trailing = None;
        let def_s = strip_comment_keep(after, &mut trailing);
        let mut doc = doc;
        if let Some(t) = trailing {
            doc.push(t);
        }
        let default = if def_s.trim().is_empty() {
            None
        } else {
            Some(def_s.trim().to_string())
        };
        if msg.fields.iter().any(|f| f.name == fname) {
            return Err((line_no, format!("field `{fname}` is defined twice")));
        }
        msg.fields.push(Field {
            name: fname.into(),
            ty,
            default,
            doc,
            line: line_no,
        });
    }
    if msg.doc.is_empty() && msg.fields.is_empty() {
        msg.doc.append(&mut pending);
    }
    Ok(msg)
}

fn strip_comment(s: &str) -> &str {
    s.split('#').next().unwrap_or("")
}

fn strip_comment_keep<'a>(s: &'a str, comment: &mut Option<String>) -> &'a str {
    match s.split_once('#') {
        Some((a, b)) => {
            *comment = Some(b.trim().to_string());
            a
        }
        None => s,
    }
}

fn rust_base(b: &Base) -> String {
    match b {
        Base::Prim(p) => PRIMS
            .iter()
            .find(|x| x.0 == *p)
            .map(|x| x.1)
            .unwrap_or("u8")
            .to_string(),
        Base::Str(_) => "::std::string::String".into(),
        Base::Nested(p, n) => format!("crate::{p}::msg::{n}"),
    }
}

fn rust_type(t: &Ty) -> String {
    let b = rust_base(&t.base);
    match t.arr {
        Arr::None => b,
        Arr::Unbounded | Arr::Bounded(_) => format!("::std::vec::Vec<{b}>"),
        Arr::Fixed(n) => format!("[{b}; {n}]"),
    }
}

fn idl_type(t: &Ty) -> String {
    let b = match &t.base {
        Base::Prim(p) => PRIMS
            .iter()
            .find(|x| x.0 == *p)
            .map(|x| x.2)
            .unwrap_or("uint8")
            .to_string(),
        Base::Str(None) => "string".into(),
        Base::Str(Some(n)) => format!("string<{n}>"),
        Base::Nested(p, n) => format!("{p}/{n}"),
    };
    match t.arr {
        Arr::None => b,
        Arr::Unbounded => format!("sequence<{b}>"),
        Arr::Bounded(n) => format!("sequence<{b}, {n}>"),
        Arr::Fixed(n) => format!("{b}[{n}]"),
    }
}

fn literal(t: &Base, v: &str) -> Result<String, String> {
    match t {
        Base::Prim("bool") => match v {
            "true" | "True" | "1" => Ok("true".into()),
            "false" | "False" | "0" => Ok("false".into()),
            _ => Err(format!("`{v}` is not a bool")),
        },
        Base::Prim(p @ ("float32" | "float64")) => {
            let x: f64 = v.parse().map_err(|_| format!("`{v}` is not a {p}"))?;
            Ok(format!("{x:?}_{}", if *p == "float32" { "f32" } else { "f64" }))
        }
        Base::Prim(p) => {
            let x: i128 = v.parse().map_err(|_| format!("`{v}` is not an integer ({p})"))?;
            Ok(format!("{x}_{}", rust_base(t)))
        }
        Base::Str(_) => {
            let inner = v
                .strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .or_else(|| v.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
                .unwrap_or(v);
            Ok(format!("{inner:?}"))
        }
        Base::Nested(..) => Err("a nested type cannot have a default".into()),
    }
}

const KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for", "if", "impl", "in",
    "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self", "static", "struct", "super", "trait",
    "true", "type", "unsafe", "use", "where", "while", "async", "await", "dyn", "abstract", "become", "box", "do",
    "final", "macro", "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
];

fn ident(n: &str) -> String {
    if KEYWORDS.contains(&n) {
        format!("r#{n}")
    } else {
        n.to_string()
    }
}

fn doc_lines(out: &mut String, indent: &str, doc: &[String], fallback: &str) {
    if doc.iter().all(|d| d.trim().is_empty()) {
        let _ = writeln!(out, "{indent}/// {fallback}");
    } else {
        for d in doc {
            let _ = writeln!(out, "{indent}/// {}", d.trim_end());
        }
    }
}

fn emit(out: &mut String, m: &Msg) {
    let ind = "        ";
    doc_lines(out, ind, &m.doc, &format!("`{}/msg/{}`.", m.package, m.name));
    let _ = writeln!(
        out,
        "{ind}///\n{ind}/// Generated from `{}/msg/{}.msg`.",
        m.package, m.name
    );
    let _ = writeln!(
        out,
        "{ind}#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]"
    );
    let _ = writeln!(out, "{ind}pub struct {} {{", m.name);
    let empty = m.fields.is_empty();
    if empty {
        let _ = writeln!(
            out,
            "{ind}    /// The member rosidl adds to an empty message (one byte on the wire)."
        );
        let _ = writeln!(out, "{ind}    pub structure_needs_at_least_one_member: u8,");
    }
    for f in &m.fields {
        doc_lines(
            out,
            &format!("{ind}    "),
            &f.doc,
            &format!("`{}` ({}).", f.name, idl_type(&f.ty)),
        );
        if let Arr::Fixed(_) = f.ty.arr {
            let _ = writeln!(out, "{ind}    #[serde(with = \"crate::fixed_array\")]");
        }
        let _ = writeln!(out, "{ind}    pub {}: {},", ident(&f.name), rust_type(&f.ty));
    }
    let _ = writeln!(out, "{ind}}}\n");

    if !m.constants.is_empty() {
        let _ = writeln!(out, "{ind}impl {} {{", m.name);
        for c in &m.constants {
            let ty = match c.ty.base {
                Base::Str(_) => "&'static str".to_string(),
                _ => rust_base(&c.ty.base),
            };
            let lit = literal(&c.ty.base, &c.value)
                .unwrap_or_else(|e| panic!("{}/msg/{}.msg: constant {}: {e}", m.package, m.name, c.name));
            doc_lines(out, &format!("{ind}    "), &c.doc, &format!("Constant `{}`.", c.name));
            let _ = writeln!(out, "{ind}    pub const {}: {ty} = {lit};", c.name);
        }
        let _ = writeln!(out, "{ind}}}\n");
    }

    let _ = writeln!(out, "{ind}impl ::core::default::Default for {} {{", m.name);
    let _ = writeln!(out, "{ind}    fn default() -> Self {{");
    let _ = writeln!(out, "{ind}        Self {{");
    if empty {
        let _ = writeln!(out, "{ind}            structure_needs_at_least_one_member: 0,");
    }
    for f in &m.fields {
        let one = match &f.default {
            Some(d) if matches!(f.ty.arr, Arr::None) => literal(&f.ty.base, d).unwrap_or_else(|e| {
                panic!(
                    "{}/msg/{}.msg:{}: default of `{}`: {e}",
                    m.package, m.name, f.line, f.name
                )
            }),
            Some(_) => panic!(
                "{}/msg/{}.msg:{}: array defaults are not supported by modbot's generator",
                m.package, m.name, f.line
            ),
            None => "::core::default::Default::default()".to_string(),
        };
        let v = match f.ty.arr {
            Arr::Fixed(_) => format!("std::array::from_fn(|_| {one})"),
            _ => one,
        };
        let _ = writeln!(out, "{ind}            {}: {v},", ident(&f.name));
    }
    let _ = writeln!(out, "{ind}        }}\n{ind}    }}\n{ind}}}\n");

    let _ = writeln!(out, "{ind}impl crate::RosMessage for {} {{", m.name);
    let _ = writeln!(out, "{ind}    const PACKAGE: &'static str = {:?};", m.package);
    let _ = writeln!(out, "{ind}    const NAME: &'static str = {:?};", m.name);
    let _ = writeln!(out, "{ind}    const KIND: &'static str = {:?};", m.kind);
    let _ = writeln!(
        out,
        "{ind}    const FIELDS: &'static [(&'static str, &'static str)] = &["
    );
    for f in &m.fields {
        let _ = writeln!(out, "{ind}        ({:?}, {:?}),", f.name, idl_type(&f.ty));
    }
    let _ = writeln!(out, "{ind}    ];");
    let bounds: Vec<String> = m
        .fields
        .iter()
        .filter_map(|f| {
            let n = ident(&f.name);
            let mut checks = Vec::new();
            if let Arr::Bounded(b) = f.ty.arr {
                checks.push(format!(
                    "if self.{n}.len() > {b} {{ return Err(format!(\"{}: {{}} elements, at most {b} allowed\", self.{n}.len())); }}",
                    f.name
                ));
            }
            if let Base::Str(Some(b)) = f.ty.base {
                match f.ty.arr {
                    Arr::None => checks.push(format!(
                        "if self.{n}.len() > {b} {{ return Err(format!(\"{}: {{}} bytes, at most {b} allowed\", self.{n}.len())); }}",
                        f.name
                    )),
                    _ => checks.push(format!(
                        "if self.{n}.iter().any(|s| s.len() > {b}) {{ return Err(\"{}: a string longer than {b} bytes\".to_string()); }}",
                        f.name
                    )),
                }
            }
            if checks.is_empty() { None } else { Some(checks.join(" ")) }
        })
        .collect();
    if !bounds.is_empty() {
        let _ = writeln!(
            out,
            "{ind}    fn check_bounds(&self) -> ::core::result::Result<(), ::std::string::String> {{"
        );
        for b in bounds {
            let _ = writeln!(out, "{ind}        {b}");
        }
        let _ = writeln!(out, "{ind}        Ok(())\n{ind}    }}");
    }
    let _ = writeln!(out, "{ind}}}\n");
}

/// Writes `pub fn SIGNATURE` (documented by `doc`, its body starting with `prelude`): a match
/// on `ros_type` with one arm per message of `msgs`, `"pkg/kind/Name" => Some(arm(PATH))` where
/// PATH is the message's Rust path, and `None` for any other type.
fn type_switch<'a>(
    out: &mut String,
    doc: &str,
    signature: &str,
    prelude: &str,
    msgs: impl Iterator<Item = &'a Msg>,
    arm: impl Fn(&str) -> String,
) {
    let _ = writeln!(out, "{doc}\npub fn {signature} {{\n{prelude}    match ros_type {{");
    for m in msgs {
        let path = format!("crate::{}::{}::{}", m.package, m.kind, m.name);
        let _ = writeln!(
            out,
            "        \"{}/{}/{}\" => Some({}),",
            m.package,
            m.kind,
            m.name,
            arm(&path)
        );
    }
    let _ = writeln!(out, "        _ => None,\n    }}\n}}\n");
}
