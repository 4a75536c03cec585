//! modbot's ROS 2 interface generator: `modbot_msgs`'s build script hands it the package
//! folder, and it writes the Rust types of every `.msg` and `.srv` file there.
//!
//! The grammar is the ROS 2 one (design.ros2.org, *interface definition*): primitive types,
//! `string` and `string<=N`, nested `pkg/Type` or same-package `Type`, unbounded `[]`,
//! bounded `[<=N]` and fixed `[N]` arrays, field defaults and constants, services split at
//! `---`. What the generator does not support (wstring, array defaults) and what would not
//! compile (a value out of its type's range, an undefined or self-containing type, a name
//! that is not an identifier) is refused with the file, line and field — never a panic, so
//! a bad interface file fails the build with a message and the parser can be fed anything
//! (`tests/hostile.rs`). Why the parser is ours and not a library's: record 0035.

mod emit;
mod parse;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

pub use emit::generate;
pub use parse::{Arr, Base, Constant, Field, Msg, Ty, parse_msg, parse_srv};

/// Largest fixed array (`T[N]`) accepted: the array is inline in every message and in its
/// default, on the stack. rosidl sets no limit; the largest in the standard interfaces is
/// 36 (covariances).
pub const MAX_FIXED_ARRAY: u64 = 1 << 16;

/// A refused interface: where (file, line when known) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterfaceError {
    /// The interface, `pkg/msg/Name` (or the file's path when read from disk).
    pub file: String,
    /// 1-based line, when the fault is on one.
    pub line: Option<usize>,
    /// What is wrong, naming the field, constant or type.
    pub message: String,
}

impl fmt::Display for InterfaceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for InterfaceError {}

/// Every interface of a build: messages (and the two halves of each service) by
/// (package, name), and the services as (package, name).
#[derive(Debug, Default)]
pub struct Interfaces {
    /// Messages by (package, name); a service's halves are `Name_Request`/`Name_Response`.
    pub msgs: BTreeMap<(String, String), Msg>,
    /// Services, as (package, name).
    pub services: Vec<(String, String)>,
}

impl Interfaces {
    /// Adds a message; a second one of the same package and name is refused.
    pub fn add(&mut self, m: Msg) -> Result<(), InterfaceError> {
        let key = (m.package.clone(), m.name.clone());
        if self.msgs.contains_key(&key) {
            return Err(InterfaceError {
                file: m.path(),
                line: None,
                message: format!("`{}/{}` is defined twice", m.package, m.name),
            });
        }
        self.msgs.insert(key, m);
        Ok(())
    }

    /// Adds a service (its request and response).
    pub fn add_service(&mut self, package: &str, name: &str, halves: [Msg; 2]) -> Result<(), InterfaceError> {
        for m in halves {
            self.add(m)?;
        }
        self.services.push((package.to_string(), name.to_string()));
        Ok(())
    }

    /// Checks what only the whole set can tell: every nested type is defined, and no
    /// message contains itself inline (through non-sequence fields), which has no size.
    pub fn resolve(&self) -> Result<(), InterfaceError> {
        for m in self.msgs.values() {
            for f in &m.fields {
                if let Base::Nested(p, n) = &f.ty.base
                    && !self.msgs.contains_key(&(p.clone(), n.clone()))
                {
                    return Err(InterfaceError {
                        file: m.path(),
                        line: Some(f.line),
                        message: format!("field `{}` has type {p}/{n}, which no .msg file defines", f.name),
                    });
                }
            }
        }
        for (key, m) in &self.msgs {
            if let Some(chain) = self.inline_cycle(key, key, &mut Vec::new()) {
                return Err(InterfaceError {
                    file: m.path(),
                    line: None,
                    message: format!(
                        "`{}/{}` contains itself inline ({}): a message of infinite size; make one of them a sequence `[]`",
                        m.package,
                        m.name,
                        chain.join(" → ")
                    ),
                });
            }
        }
        Ok(())
    }

    /// The field path by which `at` holds `target` inline, if it does.
    fn inline_cycle(
        &self,
        target: &(String, String),
        at: &(String, String),
        seen: &mut Vec<(String, String)>,
    ) -> Option<Vec<String>> {
        let m = self.msgs.get(at)?;
        for f in &m.fields {
            let Base::Nested(p, n) = &f.ty.base else { continue };
            if matches!(f.ty.arr, Arr::Unbounded | Arr::Bounded(_)) {
                continue;
            }
            let next = (p.clone(), n.clone());
            if &next == target {
                return Some(vec![f.name.clone()]);
            }
            if seen.contains(&next) {
                continue;
            }
            seen.push(next.clone());
            if let Some(mut rest) = self.inline_cycle(target, &next, seen) {
                rest.insert(0, f.name.clone());
                return Some(rest);
            }
        }
        None
    }
}

/// The generated code and every file it was made from (for `cargo::rerun-if-changed`).
#[derive(Debug)]
pub struct Generated {
    /// The Rust module text (`include!`d by modbot_msgs).
    pub code: String,
    /// The interface files read.
    pub inputs: Vec<PathBuf>,
}

/// Largest interface file read, bytes (the biggest standard one is a few kB).
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// Reads a package folder laid out as modbot_msgs is: its own `msg/*.msg` and `srv/*.srv`
/// (package `own`) and the standard interfaces under `interfaces/<package>/{msg,srv}/`; parses,
/// resolves and generates. Files are taken in name order, so the output is reproducible.
pub fn generate_package(root: &Path, own: &str) -> Result<Generated, InterfaceError> {
    let mut set = Interfaces::default();
    let mut inputs = Vec::new();
    // The messages of package `pkg` in `dir`.
    let mut add_msgs = |dir: &Path, pkg: &str| -> Result<(), InterfaceError> {
        for path in files(dir, "msg")? {
            let (text, name) = read(&path)?;
            let m = parse_msg(pkg, &name, &text).map_err(|e| at_file(e, &path))?;
            set.add(m).map_err(|e| at_file(e, &path))?;
            inputs.push(path);
        }
        Ok(())
    };
    add_msgs(&root.join("msg"), own)?;
    let interfaces = root.join("interfaces");
    let mut pkgs: Vec<PathBuf> = match std::fs::read_dir(&interfaces) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect(),
        Err(_) => Vec::new(),
    };
    pkgs.sort();
    let mut srv_dirs = vec![(root.join("srv"), own.to_string())];
    for p in pkgs {
        let pkg = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        add_msgs(&p.join("msg"), pkg)?;
        srv_dirs.push((p.join("srv"), pkg.to_string()));
    }
    for (dir, pkg) in srv_dirs {
        for path in files(&dir, "srv")? {
            let (text, name) = read(&path)?;
            let halves = parse_srv(&pkg, &name, &text).map_err(|e| at_file(e, &path))?;
            set.add_service(&pkg, &name, halves).map_err(|e| at_file(e, &path))?;
            inputs.push(path);
        }
    }
    set.resolve()?;
    Ok(Generated {
        code: generate(&set),
        inputs,
    })
}

/// The error placed in its file on disk.
fn at_file(mut e: InterfaceError, path: &Path) -> InterfaceError {
    e.file = path.display().to_string();
    e
}

/// The files of `dir` with extension `ext`, sorted; none when the folder is absent.
fn files(dir: &Path, ext: &str) -> Result<Vec<PathBuf>, InterfaceError> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut v = Vec::new();
    for e in rd {
        let e = e.map_err(|e| InterfaceError {
            file: dir.display().to_string(),
            line: None,
            message: e.to_string(),
        })?;
        let p = e.path();
        if p.extension().is_some_and(|x| x == ext) {
            v.push(p);
        }
    }
    v.sort();
    Ok(v)
}

/// A file's text and its type name (the file stem), refusing one too large to be an
/// interface.
fn read(path: &Path) -> Result<(String, String), InterfaceError> {
    let err = |message: String| InterfaceError {
        file: path.display().to_string(),
        line: None,
        message,
    };
    let len = std::fs::metadata(path).map_err(|e| err(e.to_string()))?.len();
    if len > MAX_FILE_BYTES {
        return Err(err(format!(
            "{len} bytes; an interface file has at most {MAX_FILE_BYTES}"
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
    let name = path
        .file_stem()
        .and_then(|n| n.to_str())
        .ok_or_else(|| err("the file name is not UTF-8".into()))?
        .to_string();
    Ok((text, name))
}
