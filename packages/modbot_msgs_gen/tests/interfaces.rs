//! The generator on the shipped interfaces, and each refusal naming its line and field.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use modbot_msgs_gen::{Arr, Base, Interfaces, generate_package, parse_msg, parse_srv};
use std::path::PathBuf;

fn msgs_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../modbot_msgs")
}

/// The shipped interfaces generate valid Rust with every message and service in it, and the
/// same bytes twice (reproducible builds).
#[test]
fn the_shipped_interfaces_generate_valid_rust() {
    let g = generate_package(&msgs_root(), "modbot_msgs").unwrap();
    syn::parse_file(&g.code).unwrap_or_else(|e| panic!("generated code does not parse: {e}"));
    assert!(g.inputs.len() >= 35, "{} files", g.inputs.len());
    for needle in [
        "pub struct GaitCommand {",
        "pub struct Plan_Request {",
        "pub struct Plan_Response {",
        "pub const DIRECTION_REVERSE: i8 = -1_i8;",
        "\"geometry_msgs/msg/Quaternion\" => Some(",
        "pub covariance: [f64; 36],",
    ] {
        assert!(g.code.contains(needle), "missing `{needle}`");
    }
    assert_eq!(g.code, generate_package(&msgs_root(), "modbot_msgs").unwrap().code);
}

/// A message's parts: the header comment, field docs, defaults as typed literals, constants,
/// array kinds, `Header` as std_msgs/Header.
#[test]
fn a_message_parses_into_its_parts() {
    let text = "# The header.\n# Two lines.\n\nHeader header\n# Above.\nfloat64 x 1.5 # after\n\
                uint8[<=4] small\nfloat64[36] cov\nstring<=8 name \"ab\"\nint8 REVERSE=-1\n\
                string GREETING=hello # world\n";
    let m = parse_msg("pkg", "Thing", text).unwrap();
    assert_eq!(m.doc, ["The header.", "Two lines."]);
    assert_eq!(m.fields[0].ty.base, Base::Nested("std_msgs".into(), "Header".into()));
    assert_eq!(m.fields[1].doc, ["Above.", "after"]);
    assert_eq!(m.fields[1].default.as_deref(), Some("1.5_f64"));
    assert_eq!(m.fields[1].line, 6);
    assert_eq!(m.fields[2].ty.arr, Arr::Bounded(4));
    assert_eq!(m.fields[3].ty.arr, Arr::Fixed(36));
    assert_eq!(m.fields[4].default.as_deref(), Some("\"ab\""));
    assert_eq!(m.constants[0].value, "-1_i8");
    // A string constant runs to the end of its line, `#` included.
    assert_eq!(m.constants[1].value, "\"hello # world\"");
}

/// What the emitter writes for what needs more than the literal: a string default becomes a
/// `String`, and a bare CR in a comment (not allowed in a Rust doc comment) a space.
#[test]
fn string_defaults_and_stray_carriage_returns_make_code_that_compiles() {
    let mut set = Interfaces::default();
    set.add(parse_msg("pkg", "Named", "# old\rmac\nstring<=8 name \"ab\" # x\ry\n").unwrap())
        .unwrap();
    set.resolve().unwrap();
    let code = modbot_msgs_gen::generate(&set);
    assert!(code.contains("name: ::std::string::String::from(\"ab\"),"), "{code}");
    assert!(!code.contains('\r'));
    assert!(code.contains("/// old mac"), "{code}");
}

/// Every refusal: the line (counted in the file, the header comment and a service's
/// request included) and what is wrong, naming the field or constant.
#[test]
fn refusals_name_the_line_and_the_field() {
    let header = "# A comment\n# block\n\n";
    for (body, line, says) in [
        ("float64 x\nflot64 y", 5, "`flot64` is not a valid type name"),
        ("wstring w", 4, "wstring"),
        ("uint8 X=300", 4, "constant `X`: `300` is outside the range of uint8"),
        ("int8 X=-129", 4, "outside the range of int8"),
        ("float32 F=1e39", 4, "constant `F`: `1e39` is not a finite float32"),
        ("float64 x nan", 4, "default of `x`: `nan` is not a finite float64"),
        ("bool b maybe", 4, "default of `b`: `maybe` is not a bool"),
        ("int32[] xs [1, 2]", 4, "field `xs`: array defaults are not supported"),
        ("float64 x\nfloat64 x", 5, "field `x` is defined twice"),
        ("int32 X=1\nint32 X=2", 5, "constant `X` is defined twice"),
        ("float64 BigX", 4, "field name `BigX` must be lower snake case"),
        ("float64 bad__name", 4, "must be lower snake case"),
        ("int32 lower=1", 4, "constant `lower` must be upper case"),
        ("int32[] XS=1", 4, "constant `XS` must be of a primitive type"),
        (
            "string<=2 s \"abc\"",
            4,
            "default of `s`: 3 bytes, longer than the bound 2",
        ),
        ("float64[0] z", 4, "fixed array size 0"),
        ("float64[99999999] z", 4, "fixed array size 99999999"),
        ("float64[ z", 4, "lacks `]`"),
        ("float64[<=x] z", 4, "bad array bound"),
        ("uint8 self", 4, "field name `self`"),
        ("justonetoken", 4, "expected `TYPE NAME`"),
        ("geometry_msgs/point p", 4, "`point` is not a valid type name"),
        ("int32 FIELDS=1", 4, "would shadow the generated RosMessage::FIELDS"),
        ("int32 _=1", 4, "constant `_` must be upper case"),
    ] {
        let e = parse_msg("pkg", "Thing", &format!("{header}{body}\n")).expect_err(body);
        assert_eq!(e.line, Some(line), "{body}: {e}");
        assert!(e.message.contains(says), "{body}: {e}");
        assert!(e.to_string().starts_with(&format!("pkg/msg/Thing:{line}: ")), "{e}");
    }
    let e = parse_srv("pkg", "Ask", "int32 a\n---\nint32 b\nint32 b\n").unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("pkg/srv/Ask_Response", Some(4)), "{e}");
    let e = parse_srv("pkg", "Ask", "int32 a\n").unwrap_err();
    assert!(e.message.contains("`---`"), "{e}");
    assert!(parse_msg("crate", "Thing", "").unwrap_err().message.contains("keyword"));
    assert!(parse_msg("pkg", "Self", "").unwrap_err().message.contains("type name"));
}

/// What only the whole set tells: an undefined nested type (its line), a message holding
/// itself inline (directly or through another), and one defined twice; a sequence of
/// itself is fine.
#[test]
fn the_set_refuses_undefined_and_infinite_types() {
    let set = |msgs: &[(&str, &str)]| {
        let mut s = Interfaces::default();
        for (name, text) in msgs {
            s.add(parse_msg("pkg", name, text).unwrap())?;
        }
        s.resolve()
    };
    let e = set(&[("A", "int32 x\nB b\n")]).unwrap_err();
    assert_eq!(e.line, Some(2));
    assert!(
        e.message
            .contains("field `b` has type pkg/B, which no .msg file defines"),
        "{e}"
    );
    let e = set(&[("A", "B b\n"), ("B", "A[2] a\n")]).unwrap_err();
    assert!(e.message.contains("contains itself inline (b → a)"), "{e}");
    let e = set(&[("A", "A a\n")]).unwrap_err();
    assert!(e.message.contains("(a)"), "{e}");
    set(&[("A", "A[] children\nA[<=3] few\n")]).unwrap();
    let e = set(&[("A", "int32 x\n"), ("A", "int32 y\n")]).unwrap_err();
    assert!(e.message.contains("defined twice"), "{e}");
}

/// A refused file on disk stops the generation naming the file's path and line.
#[test]
fn a_bad_file_on_disk_is_named() {
    let dir = std::env::temp_dir().join(format!("modbot_msgs_gen_test_{}", std::process::id()));
    std::fs::create_dir_all(dir.join("msg")).unwrap();
    std::fs::write(dir.join("msg/Good.msg"), "int32 x\n").unwrap();
    std::fs::write(dir.join("msg/Bad.msg"), "int32 x\nuint8 Y=256\n").unwrap();
    let e = generate_package(&dir, "pkg").unwrap_err();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(e.file.ends_with("msg/Bad.msg"), "{e}");
    assert_eq!(e.line, Some(2));
}
