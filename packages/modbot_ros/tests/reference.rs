//! The generated node reference stays in step with the code (issue 19): the page
//! `docs/reference/nodes.md` and every `config/params/<node>.yaml` equal what
//! `modbot node --write-docs` generates now, and every shipped parameter file is one the
//! node loads (through `--params-file` parsing and the node's own validation).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::PathBuf;

use modbot_ros::NODES;
use modbot_ros::reference::{PAGE, PARAMS_DIR, REGENERATE, page, params_file};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn same(path: &str, generated: &str) {
    let shipped = std::fs::read_to_string(root().join(path))
        .unwrap_or_else(|e| panic!("{path}: {e}; generate it with `{REGENERATE}` at the repository root"));
    if shipped != generated {
        let line = shipped
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .map_or_else(|| "the end".to_string(), |i| format!("line {}", i + 1));
        panic!(
            "{path} is stale (first difference at {line}): regenerate it with `{REGENERATE}` at the repository root"
        );
    }
}

#[test]
fn the_reference_page_is_what_the_code_generates() {
    same(PAGE, &page().unwrap());
}

#[test]
fn every_parameter_file_is_what_the_code_generates_and_loads() {
    for exec in NODES {
        let path = format!("{PARAMS_DIR}/{exec}.yaml");
        same(&path, &params_file(exec).unwrap());
        // The node's start-up path: the file's section for it, then its validation.
        let files = [modbot_ros::params::load_params_file(&root().join(&path), exec, "/snake1").unwrap()];
        assert!(!files[0].is_empty(), "{path} sets nothing for {exec} in /snake1");
        let argv: Vec<String> = [
            "--ros-args",
            "-r",
            "__ns:=/snake1",
            "--params-file",
            &root().join(&path).display().to_string(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        modbot_ros::check_node_params(exec, &argv)
            .unwrap_or_else(|e| panic!("{path}: {exec} refuses its own defaults: {e}"));
    }
}

#[test]
fn no_parameter_file_is_left_for_a_node_that_is_gone() {
    for e in std::fs::read_dir(root().join(PARAMS_DIR)).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        let exec = name.strip_suffix(".yaml").unwrap_or(&name);
        assert!(NODES.contains(&exec), "{PARAMS_DIR}/{name} belongs to no node");
    }
}

/// Every node's parameter file is loaded by a shipped launch file that starts that node
/// (issue 19: "a parameter file per node that the nodes load"), as the first entry of its
/// parameters so that the launch's own values override it.
#[test]
fn every_parameter_file_is_loaded_where_its_node_is_launched() {
    let mut launches = Vec::new();
    for e in std::fs::read_dir(root().join("launch")).unwrap() {
        let path = e.unwrap().path();
        if path.to_string_lossy().ends_with(".launch.yaml") {
            launches.push((path.clone(), std::fs::read_to_string(&path).unwrap()));
        }
    }
    for exec in NODES {
        let from = format!("{{from: $(find-pkg-share modbot_bringup)/{PARAMS_DIR}/{exec}.yaml}}");
        let mut loaded = 0;
        for (path, text) in &launches {
            // Each `exec: <node>` block of the file must load the node's file first.
            let blocks: Vec<&str> = text
                .split("  - node:")
                .filter(|b| b.contains(&format!("exec: {exec}\n")))
                .collect();
            for b in &blocks {
                let first_param = b.split("param:\n").nth(1).and_then(|p| p.lines().next()).unwrap_or("");
                assert!(
                    first_param.trim_start().trim_start_matches("- ") == from,
                    "{}: {exec} does not load {from} first (its first parameter is `{first_param}`)",
                    path.display()
                );
                loaded += 1;
            }
        }
        assert!(loaded > 0, "no launch file starts {exec} with {from}");
    }
}
