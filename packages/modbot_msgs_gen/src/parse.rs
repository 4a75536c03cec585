//! The `.msg`/`.srv` parser: text in, a checked [`Msg`] or an [`InterfaceError`] naming the
//! line out. Every literal (constant value, field default) is checked against its type here,
//! so the emitter cannot write a literal that does not compile.

use crate::{InterfaceError, MAX_FIXED_ARRAY};

/// A field's element type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Base {
    /// A primitive, by its ROS name (`float64`, `uint8`, ...).
    Prim(&'static str),
    /// `string`, with its bound for `string<=N`.
    Str(Option<u64>),
    /// A message: (package, name).
    Nested(String, String),
}

/// Whether and how a field is an array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arr {
    /// A single value.
    None,
    /// `T[]`.
    Unbounded,
    /// `T[<=N]`.
    Bounded(u64),
    /// `T[N]`.
    Fixed(u64),
}

/// A field's type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ty {
    /// The element type.
    pub base: Base,
    /// The array kind.
    pub arr: Arr,
}

/// A field.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Its name (lower snake case).
    pub name: String,
    /// Its type.
    pub ty: Ty,
    /// Its default, as a Rust literal of its type (checked).
    pub default: Option<String>,
    /// Comment lines above it and after it on its line.
    pub doc: Vec<String>,
    /// Its 1-based line.
    pub line: usize,
}

/// A constant.
#[derive(Debug, Clone, PartialEq)]
pub struct Constant {
    /// Its name (upper case).
    pub name: String,
    /// Its type (never an array or a message).
    pub ty: Ty,
    /// Its value, as a Rust literal of its type (checked).
    pub value: String,
    /// Comment lines above it.
    pub doc: Vec<String>,
}

/// A message (or one half of a service).
#[derive(Debug, Clone, PartialEq)]
pub struct Msg {
    /// `msg`, or `srv` for a service's request or response.
    pub kind: &'static str,
    /// Its package.
    pub package: String,
    /// Its name (`Name`, or `Name_Request`/`Name_Response`).
    pub name: String,
    /// The file's leading comment block.
    pub doc: Vec<String>,
    /// Its fields, in order.
    pub fields: Vec<Field>,
    /// Its constants, in order.
    pub constants: Vec<Constant>,
}

impl Msg {
    /// `pkg/kind/Name`, the interface's name in errors.
    pub fn path(&self) -> String {
        format!("{}/{}/{}", self.package, self.kind, self.name)
    }
}

/// (ROS name, Rust type, IDL name as rosidl prints it)
pub(crate) const PRIMS: &[(&str, &str, &str)] = &[
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

/// The range of an integer primitive.
fn int_range(p: &str) -> (i128, i128) {
    match p {
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" => (i64::MIN.into(), i64::MAX.into()),
        "uint16" => (0, u16::MAX.into()),
        "uint32" => (0, u32::MAX.into()),
        "uint64" => (0, u64::MAX.into()),
        _ => (0, u8::MAX.into()),
    }
}

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
                let n: u64 = inner.parse().map_err(|_| format!("bad array size in `{s}`"))?;
                if n == 0 || n > MAX_FIXED_ARRAY {
                    return Err(format!(
                        "fixed array size {n} in `{s}` is outside 1 … {MAX_FIXED_ARRAY}"
                    ));
                }
                Arr::Fixed(n)
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
    let ok = s.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && s.chars().all(|c| c.is_ascii_alphanumeric())
        && s != "Self";
    if ok {
        Ok(())
    } else {
        Err(format!("`{s}` is not a valid type name"))
    }
}

/// `v` as a Rust literal of `t`, or why it is not one: bools as rosidl spells them,
/// integers within their type's range, finite floats within theirs, strings quoted or not.
pub(crate) fn literal(t: &Base, v: &str) -> Result<String, String> {
    match t {
        Base::Prim("bool") => match v {
            "true" | "True" | "1" => Ok("true".into()),
            "false" | "False" | "0" => Ok("false".into()),
            _ => Err(format!("`{v}` is not a bool")),
        },
        Base::Prim(p @ ("float32" | "float64")) => {
            let x: f64 = v.parse().map_err(|_| format!("`{v}` is not a {p}"))?;
            let max = if *p == "float32" { f64::from(f32::MAX) } else { f64::MAX };
            if !x.is_finite() || x.abs() > max {
                return Err(format!("`{v}` is not a finite {p}"));
            }
            Ok(format!("{x:?}_{}", if *p == "float32" { "f32" } else { "f64" }))
        }
        Base::Prim(p) => {
            let x: i128 = v.parse().map_err(|_| format!("`{v}` is not an integer ({p})"))?;
            let (lo, hi) = int_range(p);
            if !(lo..=hi).contains(&x) {
                return Err(format!("`{v}` is outside the range of {p} ({lo} … {hi})"));
            }
            Ok(format!("{x}_{}", crate::emit::rust_base(t)))
        }
        Base::Str(bound) => {
            let inner = v
                .strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .or_else(|| v.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
                .unwrap_or(v);
            if let Some(b) = bound
                && inner.len() as u64 > *b
            {
                return Err(format!("{} bytes, longer than the bound {b}", inner.len()));
            }
            Ok(format!("{inner:?}"))
        }
        Base::Nested(..) => Err("a nested type cannot have a default".into()),
    }
}

/// Parses the text of `pkg/msg/name`.
pub fn parse_msg(pkg: &str, name: &str, text: &str) -> Result<Msg, InterfaceError> {
    parse(pkg, name, "msg", text, 0)
}

/// Parses the text of the service `pkg/srv/name`: its request and response, split at the
/// `---` line (`Name_Request`, `Name_Response`).
pub fn parse_srv(pkg: &str, name: &str, text: &str) -> Result<[Msg; 2], InterfaceError> {
    let lines: Vec<&str> = text.lines().collect();
    let Some(sep) = lines.iter().position(|l| l.trim() == "---") else {
        return Err(InterfaceError {
            file: format!("{pkg}/srv/{name}"),
            line: None,
            message: "a service needs a `---` line between request and response".into(),
        });
    };
    let request = parse(pkg, &format!("{name}_Request"), "srv", &lines[..sep].join("\n"), 0)?;
    let response = parse(
        pkg,
        &format!("{name}_Response"),
        "srv",
        &lines[sep + 1..].join("\n"),
        sep + 1,
    )?;
    Ok([request, response])
}

fn parse(pkg: &str, name: &str, kind: &'static str, text: &str, offset: usize) -> Result<Msg, InterfaceError> {
    let err = |line: Option<usize>, message: String| InterfaceError {
        file: format!("{pkg}/{kind}/{name}"),
        line,
        message,
    };
    check_ident(pkg).map_err(|e| err(None, format!("package {e}")))?;
    if crate::emit::KEYWORDS.contains(&pkg) {
        return Err(err(None, format!("package `{pkg}` is a Rust keyword")));
    }
    // A service half's name carries `_Request`/`_Response`; the stem is what is checked.
    let stem = name
        .strip_suffix("_Request")
        .or_else(|| name.strip_suffix("_Response"))
        .filter(|_| kind == "srv")
        .unwrap_or(name);
    check_type_name(stem).map_err(|e| err(None, format!("interface {e}")))?;
    let mut msg = Msg {
        kind,
        package: pkg.into(),
        name: name.into(),
        doc: Vec::new(),
        fields: Vec::new(),
        constants: Vec::new(),
    };
    let mut pending: Vec<String> = Vec::new();
    let mut header_done = false;
    for (i, raw) in text.lines().enumerate() {
        let line_no = offset + i + 1;
        let at = |e: String| err(Some(line_no), e);
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
            // A bare CR (old Mac line ends) is not allowed in a Rust doc comment.
            pending.push(c.strip_prefix(' ').unwrap_or(c).replace('\r', " "));
            continue;
        }
        header_done = true;
        let (ty_s, rest) = trimmed
            .split_once(char::is_whitespace)
            .ok_or_else(|| at(format!("`{trimmed}`: expected `TYPE NAME`")))?;
        let ty = parse_type(pkg, ty_s).map_err(at)?;
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
            if !fname.starts_with(|c: char| c.is_ascii_uppercase())
                || !fname
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            {
                return Err(at(format!("constant `{fname}` must be upper case")));
            }
            // The generated type's `RosMessage` constants; one of the same name would
            // shadow them.
            if ["PACKAGE", "NAME", "KIND", "FIELDS"].contains(&fname) {
                return Err(at(format!(
                    "constant `{fname}` would shadow the generated RosMessage::{fname}"
                )));
            }
            if ty.arr != Arr::None || matches!(ty.base, Base::Nested(..)) {
                return Err(at(format!(
                    "constant `{fname}` must be of a primitive type or a string"
                )));
            }
            if msg.constants.iter().any(|c| c.name == fname) {
                return Err(at(format!("constant `{fname}` is defined twice")));
            }
            let value = if is_string { v.trim() } else { strip_comment(v).trim() };
            let value = literal(&ty.base, value).map_err(|e| at(format!("constant `{fname}`: {e}")))?;
            msg.constants.push(Constant {
                name: fname.into(),
                ty,
                value,
                doc,
            });
            continue;
        }
        check_ident(fname).map_err(|e| at(format!("field {e}")))?;
        if ["self", "super", "crate"].contains(&fname) {
            return Err(at(format!(
                "field name `{fname}` cannot be a Rust identifier, even raw"
            )));
        }
        if fname.contains("__") || fname.ends_with('_') || fname.chars().any(|c| c.is_ascii_uppercase()) {
            return Err(at(format!("field name `{fname}` must be lower snake case")));
        }
        let mut trailing = None;
        let def_s = strip_comment_keep(after, &mut trailing);
        let mut doc = doc;
        if let Some(t) = trailing {
            doc.push(t);
        }
        let default = match def_s.trim() {
            "" => None,
            _ if ty.arr != Arr::None => {
                return Err(at(format!(
                    "field `{fname}`: array defaults are not supported by modbot's generator"
                )));
            }
            d => Some(literal(&ty.base, d).map_err(|e| at(format!("default of `{fname}`: {e}")))?),
        };
        if msg.fields.iter().any(|f| f.name == fname) {
            return Err(at(format!("field `{fname}` is defined twice")));
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
            *comment = Some(b.trim().replace('\r', " "));
            a
        }
        None => s,
    }
}
