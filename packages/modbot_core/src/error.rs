//! The one error type of modbot_core.

use std::path::PathBuf;

/// Everything that can go wrong while loading or using the robot model.
///
/// Every variant names what is wrong (the file, the key, the module, the joint) so a
/// user can fix the input without reading code.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CoreError {
    /// A file could not be read.
    #[error("cannot read {path}: {message}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        message: String,
    },
    /// A YAML document did not parse into the expected schema.
    #[error("{origin}: {message}")]
    Yaml {
        /// The file or source the document came from.
        origin: String,
        /// The parser's message (it names the key and the line).
        message: String,
    },
    /// A value is outside its allowed range or otherwise invalid.
    #[error("{key} = {value}: {expected}")]
    Invalid {
        /// Dotted path of the offending key, e.g. `modules.y1.mass_kg`.
        key: String,
        /// The offending value, as text.
        value: String,
        /// What was expected instead.
        expected: String,
    },
    /// A topology refers to a module kind that is not in the catalog.
    #[error(
        "unknown module kind `{kind}` (the catalog has: {known}; another catalog is given with `--modules FILE`, or `modules_file` on the nodes)"
    )]
    UnknownModuleKind {
        /// The kind that was asked for.
        kind: String,
        /// The kinds the catalog knows, comma separated.
        known: String,
    },
    /// A robot description string such as `py:16` is malformed.
    #[error(
        "bad robot `{spec}`: {reason} (expected a preset, pp:M, py:M or pyp, e.g. pp:8, py:16, a named robot: wheelfoot, quadruped, wheeled, or a robot file, e.g. config/robots/py_16.yaml)"
    )]
    BadRobotSpec {
        /// The string that was given.
        spec: String,
        /// Why it was refused.
        reason: String,
    },
    /// A topology is not well formed.
    #[error("topology `{topology}`: {reason}")]
    Topology {
        /// Name of the topology.
        topology: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A connection refers to a module or connector that does not exist.
    #[error("topology `{topology}`: connection {index} refers to {what}, which does not exist")]
    DanglingConnector {
        /// Name of the topology.
        topology: String,
        /// Index of the connection in the topology's list.
        index: usize,
        /// The missing module or connector.
        what: String,
    },
    /// A joint vector has the wrong length.
    #[error("expected {expected} joint values, got {got}")]
    JointCount {
        /// Number of joints of the robot.
        expected: usize,
        /// Number of values given.
        got: usize,
    },
    /// A joint value is not a finite number.
    #[error("joint {joint} = {value}: not a finite number")]
    NotFinite {
        /// Name of the joint.
        joint: String,
        /// The value.
        value: f64,
    },
}

/// Result with [`CoreError`].
pub type Result<T, E = CoreError> = std::result::Result<T, E>;

impl CoreError {
    /// Shorthand for [`CoreError::Invalid`].
    pub fn invalid(key: impl Into<String>, value: impl ToString, expected: impl Into<String>) -> Self {
        CoreError::Invalid {
            key: key.into(),
            value: value.to_string(),
            expected: expected.into(),
        }
    }
}

impl CoreError {
    /// Names the file an [`CoreError::Invalid`] came from (`origin: key`); other errors pass.
    pub fn in_file(self, origin: &str) -> Self {
        match self {
            CoreError::Invalid { key, value, expected } => CoreError::Invalid {
                key: format!("{origin}: {key}"),
                value,
                expected,
            },
            other => other,
        }
    }
}

/// Largest configuration or description file read, bytes (the biggest shipped file is a few
/// hundred kB; a larger one is a mistake, not a robot).
pub const MAX_TEXT_FILE_BYTES: u64 = 16 << 20;

/// Deepest nesting of YAML flow collections (`[`, `{`) accepted. The YAML parser's time grows
/// with the square of that depth (200 000 `[` took 76 s to refuse, issue 18); real files
/// nest a few levels.
pub const MAX_YAML_FLOW_DEPTH: usize = 64;

/// Reads a whole text file of at most [`MAX_TEXT_FILE_BYTES`], mapping the I/O error to
/// [`CoreError::Io`].
pub fn read_text(path: &std::path::Path) -> Result<String> {
    read_capped(path).map_err(|message| CoreError::Io {
        path: path.to_path_buf(),
        message,
    })
}

/// [`read_text`] for readers with their own error types: the reason, without the path.
pub fn read_capped(path: &std::path::Path) -> std::result::Result<String, String> {
    use std::io::Read;
    // Read through a limit, not by the length the file reports: a FIFO, /dev/zero or a
    // /proc file reports 0.
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut text = String::new();
    file.take(MAX_TEXT_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    if text.len() as u64 > MAX_TEXT_FILE_BYTES {
        return Err(format!(
            "more than {MAX_TEXT_FILE_BYTES} bytes; files of at most that are read"
        ));
    }
    Ok(text)
}

/// Checks YAML text before it is parsed: at most [`MAX_TEXT_FILE_BYTES`] and flow
/// collections nested at most [`MAX_YAML_FLOW_DEPTH`] deep. Brackets are counted wherever
/// they are (in quoted strings too): an honest file never holds 64 unclosed ones, and a scan
/// that skipped quotes could be fooled by a stray apostrophe. [`yaml_from_str`] runs it
/// before the parser.
fn check_yaml_text(text: &str) -> std::result::Result<(), String> {
    if text.len() as u64 > MAX_TEXT_FILE_BYTES {
        return Err(format!(
            "{} bytes of YAML; at most {MAX_TEXT_FILE_BYTES} are read",
            text.len()
        ));
    }
    let mut depth = 0usize;
    for (line, l) in text.lines().enumerate() {
        for c in l.bytes() {
            match c {
                b'[' | b'{' => {
                    depth += 1;
                    if depth > MAX_YAML_FLOW_DEPTH {
                        return Err(format!(
                            "line {}: `[`/`{{` nested deeper than {MAX_YAML_FLOW_DEPTH}",
                            line + 1
                        ));
                    }
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
    }
    Ok(())
}

/// Why YAML text was refused: the reason, and the line when the parser knows it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct YamlError {
    /// What is wrong.
    pub message: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
}

/// The one door from YAML text to a value for every reader of the workspace: the text is
/// checked first ([`MAX_TEXT_FILE_BYTES`], [`MAX_YAML_FLOW_DEPTH`]), then parsed.
pub fn yaml_from_str<T: serde::de::DeserializeOwned>(text: &str) -> std::result::Result<T, YamlError> {
    check_yaml_text(text).map_err(|message| YamlError { message, line: None })?;
    serde_yaml_ng::from_str(text).map_err(|e| YamlError {
        line: e.location().map(|l| l.line()),
        message: e.to_string(),
    })
}

/// Parses a YAML document with `deny_unknown_fields`-style schemas, naming the origin on error.
pub fn parse_yaml<T: serde::de::DeserializeOwned>(text: &str, origin: &str) -> Result<T> {
    yaml_from_str(text).map_err(|e| CoreError::Yaml {
        origin: origin.to_string(),
        message: e.message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 18: a file that reports no length (here /dev/zero) is read through the limit
    /// and refused, not read until memory runs out.
    #[test]
    fn reads_stop_at_the_limit_whatever_the_file_reports() {
        let e = read_capped(std::path::Path::new("/dev/zero")).expect_err("endless");
        assert!(e.contains(&format!("more than {MAX_TEXT_FILE_BYTES} bytes")), "{e}");
        assert!(check_yaml_text(&"[".repeat(65)).is_err());
        assert!(check_yaml_text(&"[".repeat(64)).is_ok());
    }
}
