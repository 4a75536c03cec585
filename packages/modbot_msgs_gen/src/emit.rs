//! The emitter: checked [`Interfaces`] in, the Rust module text out. It cannot fail: every
//! literal was checked by the parser and every type resolved.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::Interfaces;
use crate::parse::{Arr, Base, Msg, PRIMS, Ty};

/// The Rust module of every message and service of `set` (which [`Interfaces::resolve`]
/// accepted): per package `pub mod pkg { pub mod msg { ... } pub mod srv { ... } }`, and at
/// the root `ALL_SERVICES`, `ALL_MESSAGES`, `fields_of`, `decode_as` and `encoded_default`.
pub fn generate(set: &Interfaces) -> String {
    let msgs = &set.msgs;
    let services = &set.services;
    let mut out = String::new();
    let mut by_pkg: BTreeMap<&str, Vec<&Msg>> = BTreeMap::new();
    for m in msgs.values() {
        by_pkg.entry(m.package.as_str()).or_default().push(m);
    }
    let _ = writeln!(out, "/// Every generated service, as (package, name).");
    let _ = writeln!(out, "pub const ALL_SERVICES: &[(&str, &str)] = &[");
    for (p, n) in services {
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
                emit(&mut out, m, &definition(msgs, m));
            }
            let _ = writeln!(out, "    }}");
        }
        let _ = writeln!(out, "}}\n");
    }
    out
}

/// The (ROS, Rust, IDL) names of primitive `p`; the parser only makes `Base::Prim` of a
/// name in [`PRIMS`], and anything else reads as `uint8` as before.
fn prim(p: &str) -> (&'static str, &'static str, &'static str) {
    PRIMS
        .iter()
        .find(|x| x.0 == p)
        .copied()
        .unwrap_or(("uint8", "u8", "uint8"))
}

pub(crate) fn rust_base(b: &Base) -> String {
    match b {
        Base::Prim(p) => prim(p).1.to_string(),
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
        Base::Prim(p) => prim(p).2.to_string(),
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

pub(crate) const KEYWORDS: &[&str] = &[
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

fn emit(out: &mut String, m: &Msg, definition: &str) {
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
            let lit = &c.value;
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
        // The parser checked the default against the type and refused array defaults.
        let one = match &f.default {
            Some(d) if matches!(f.ty.base, Base::Str(_)) => format!("::std::string::String::from({d})"),
            Some(d) => d.clone(),
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
    let _ = writeln!(out, "{ind}    const DEFINITION: &'static str = {definition:?};");
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

/// A field or constant type as a `.msg` file spells it, nested types as `pkg/Name`.
fn msg_type(t: &Ty) -> String {
    let b = match &t.base {
        Base::Prim(p) => (*p).to_string(),
        Base::Str(None) => "string".into(),
        Base::Str(Some(n)) => format!("string<={n}"),
        Base::Nested(p, n) => format!("{p}/{n}"),
    };
    match t.arr {
        Arr::None => b,
        Arr::Unbounded => format!("{b}[]"),
        Arr::Bounded(n) => format!("{b}[<={n}]"),
        Arr::Fixed(n) => format!("{b}[{n}]"),
    }
}

/// A constant's value as a `.msg` file spells it: the checked Rust literal without its type
/// suffix (`-1_i8` → `-1`, `1.0_f64` → `1.0`), strings unquoted.
fn msg_value(c: &crate::parse::Constant) -> String {
    match c.ty.base {
        Base::Str(_) => c.value.trim_matches('"').to_string(),
        Base::Prim("bool") => c.value.clone(),
        _ => c.value.rsplit_once('_').map_or(c.value.clone(), |(v, _)| v.to_string()),
    }
}

/// The body of one message: its constants then its fields, one per line, without comments
/// or defaults (what a reader needs to decode it).
fn definition_body(m: &Msg) -> String {
    let mut out = String::new();
    for c in &m.constants {
        let _ = writeln!(out, "{} {}={}", msg_type(&c.ty), c.name, msg_value(c));
    }
    for f in &m.fields {
        let _ = writeln!(out, "{} {}", msg_type(&f.ty), f.name);
    }
    out
}

/// The message definition of `m` as ROS 2 tools record it beside the messages (rosbag2's
/// MCAP `ros2msg` schema): its own body, then each message type it uses, directly or not,
/// once, in first-use order, after a line of 80 `=` and `MSG: pkg/Name`.
fn definition(msgs: &BTreeMap<(String, String), Msg>, m: &Msg) -> String {
    let mut out = definition_body(m);
    let mut seen: Vec<(String, String)> = Vec::new();
    // Depth first: a type's dependencies follow it, as rosidl's generators order them.
    let mut order: Vec<&Msg> = Vec::new();
    fn visit<'a>(
        msgs: &'a BTreeMap<(String, String), Msg>,
        m: &'a Msg,
        seen: &mut Vec<(String, String)>,
        order: &mut Vec<&'a Msg>,
    ) {
        for f in &m.fields {
            if let Base::Nested(p, n) = &f.ty.base {
                let key = (p.clone(), n.clone());
                if seen.contains(&key) {
                    continue;
                }
                seen.push(key.clone());
                // Interfaces::resolve checked that every nested type exists.
                if let Some(dep) = msgs.get(&key) {
                    order.push(dep);
                    visit(msgs, dep, seen, order);
                }
            }
        }
    }
    visit(msgs, m, &mut seen, &mut order);
    for dep in order {
        let _ = write!(
            out,
            "{}\nMSG: {}/{}\n{}",
            "=".repeat(80),
            dep.package,
            dep.name,
            definition_body(dep)
        );
    }
    out
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
