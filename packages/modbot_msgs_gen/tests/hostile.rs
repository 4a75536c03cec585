//! Generated hostile inputs for the parser (issue 18, record 0032): text built from the
//! grammar's own pieces and the shipped files mutated. Whatever comes in, the parser returns
//! (no panic) with a line inside the text for what it refuses, and whatever it accepts
//! generates Rust that parses (`syn`), so an accepted interface cannot break the build.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use modbot_msgs_gen::{Interfaces, generate, parse_msg, parse_srv};
use proptest::prelude::*;
use std::path::PathBuf;

/// The shipped `.msg` and `.srv` files (package, name, text).
fn shipped() -> Vec<(String, String, String)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../modbot_msgs");
    let mut out = Vec::new();
    let mut dirs = vec![
        ("modbot_msgs".to_string(), root.join("msg")),
        ("modbot_msgs".to_string(), root.join("srv")),
    ];
    for e in std::fs::read_dir(root.join("interfaces")).unwrap() {
        let p = e.unwrap().path();
        let pkg = p.file_name().unwrap().to_string_lossy().to_string();
        // A standard package may ship messages, services or both (std_srvs,
        // controller_manager_msgs: services only).
        for kind in ["msg", "srv"] {
            if p.join(kind).is_dir() {
                dirs.push((pkg.clone(), p.join(kind)));
            }
        }
    }
    for (pkg, dir) in dirs {
        for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let p = e.unwrap().path();
            let name = p.file_stem().unwrap().to_string_lossy().to_string();
            out.push((pkg.clone(), name, std::fs::read_to_string(&p).unwrap()));
        }
    }
    out.sort();
    out
}

/// One line from the grammar's pieces: types (good, bounded, arrays, bad), names (good,
/// upper, keywords, empty), and a tail (nothing, a default, a constant value, a comment,
/// junk).
fn line() -> impl Strategy<Value = String> {
    let ty = prop_oneof![
        Just("float64".to_string()),
        Just("uint8".to_string()),
        Just("int8".to_string()),
        Just("bool".to_string()),
        Just("string".to_string()),
        Just("string<=3".to_string()),
        Just("Header".to_string()),
        Just("geometry_msgs/Point".to_string()),
        Just("Self".to_string()),
        Just("Thing".to_string()),
        Just("wstring".to_string()),
        "[a-zA-Z_/<=0-9]{0,12}",
    ];
    let arr = prop_oneof![
        Just(String::new()),
        Just("[]".to_string()),
        Just("[<=2]".to_string()),
        Just("[3]".to_string()),
        Just("[0]".to_string()),
        Just("[18446744073709551616]".to_string()),
        "\\[[<=0-9a-z]{0,6}\\]?",
    ];
    let name = prop_oneof![
        Just("x".to_string()),
        Just("X".to_string()),
        Just("self".to_string()),
        Just("type".to_string()),
        Just("a__b".to_string()),
        "[a-zA-Z_0-9]{0,8}",
    ];
    let tail = prop_oneof![
        Just(String::new()),
        Just("=1".to_string()),
        Just("=300".to_string()),
        Just("=-1e400".to_string()),
        Just("=nan".to_string()),
        Just(" 1.5".to_string()),
        Just(" \"quoted # not a comment\"".to_string()),
        Just(" [1, 2]".to_string()),
        Just(" # a comment".to_string()),
        "[ =#\"'a-z0-9.\\-]{0,12}",
    ];
    prop_oneof![
        (ty, arr, name, tail).prop_map(|(t, a, n, tail)| format!("{t}{a} {n}{tail}")),
        Just("---".to_string()),
        Just(String::new()),
        "#[ -~\r]{0,20}",
        "[ -~\t\u{80}-\u{10ffff}]{0,30}",
    ]
}

/// Parses `text` as message and service, and when the message is accepted alone (its
/// nested types are all of the standard set, or none), generates it and parses the code.
fn check(text: &str) -> Result<(), TestCaseError> {
    let lines = text.lines().count().max(1);
    for r in [
        parse_msg("pkg", "Thing", text).map(|m| vec![m]),
        parse_srv("pkg", "Ask", text).map(Vec::from),
    ] {
        match r {
            Err(e) => {
                prop_assert!(
                    e.line.is_none_or(|l| l >= 1 && l <= lines),
                    "{e} (text has {lines} lines)"
                );
                prop_assert!(!e.message.is_empty());
            }
            Ok(msgs) => {
                let mut set = standard();
                let mut fresh = true;
                for m in msgs {
                    fresh &= set.add(m).is_ok();
                }
                if fresh && set.resolve().is_ok() {
                    let code = generate(&set);
                    if let Err(e) = syn::parse_file(&code) {
                        return Err(TestCaseError::fail(format!(
                            "accepted `{text}` gives code that does not parse: {e}"
                        )));
                    }
                }
            }
        }
    }
    Ok(())
}

/// The standard messages a hostile file may refer to.
fn standard() -> Interfaces {
    let mut set = Interfaces::default();
    for (pkg, name, text) in shipped()
        .into_iter()
        .filter(|(p, _, t)| p != "modbot_msgs" && !t.lines().any(|l| l.trim() == "---"))
    {
        set.add(parse_msg(&pkg, &name, &text).unwrap()).unwrap();
    }
    set
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Files built from the grammar's pieces.
    #[test]
    fn grammar_built_files_are_answered(lines in proptest::collection::vec(line(), 0..12)) {
        check(&lines.join("\n"))?;
    }

    /// The shipped files with lines dropped, doubled or replaced and bytes inserted.
    #[test]
    fn mutated_shipped_files_are_answered(
        file in any::<prop::sample::Index>(),
        edits in proptest::collection::vec((0u8..4, any::<prop::sample::Index>(), line()), 1..4),
    ) {
        let files = shipped();
        let (_, _, text) = &files[file.index(files.len())];
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        for (kind, at, new) in edits {
            let i = at.index(lines.len().max(1));
            match kind {
                0 if !lines.is_empty() => { lines.remove(i); }
                1 if !lines.is_empty() => { let l = lines[i].clone(); lines.insert(i, l); }
                2 if !lines.is_empty() => lines[i] = new,
                _ => {
                    let l = lines.get(i).cloned().unwrap_or_default();
                    let cut = l.char_indices().map(|(k, _)| k).nth(new.len() % (l.chars().count() + 1)).unwrap_or(l.len());
                    let mixed = format!("{}{}{}", &l[..cut], new, &l[cut..]);
                    if lines.is_empty() { lines.push(mixed) } else { lines[i] = mixed }
                }
            }
        }
        check(&lines.join("\n"))?;
    }
}

/// Every shipped file as it is parses (the property above starts from them).
#[test]
fn every_shipped_file_parses_alone() {
    for (pkg, name, text) in shipped() {
        let r = if text.lines().any(|l| l.trim() == "---") {
            parse_srv(&pkg, &name, &text).map(|_| ())
        } else {
            parse_msg(&pkg, &name, &text).map(|_| ())
        };
        r.unwrap_or_else(|e| panic!("{pkg}/{name}: {e}"));
    }
}
