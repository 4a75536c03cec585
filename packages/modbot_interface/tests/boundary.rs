//! The interface's boundary (decision record 0058): it is what a module offers, so it may not
//! lean on anything that answers for a module — no simulator, no middleware, no behaviour,
//! not even the gaits.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use std::process::Command;

#[test]
fn the_interface_depends_on_no_other_modbot_crate() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["tree", "-e", "normal", "-p", "modbot_interface", "--prefix", "none"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(tree.lines().any(|l| l.starts_with("modbot_interface ")), "{tree}");
    assert!(tree.lines().any(|l| l.starts_with("nalgebra ")), "{tree}");
    let others: Vec<&str> = tree
        .lines()
        .filter(|l| l.starts_with("modbot_") && !l.starts_with("modbot_interface "))
        .collect();
    assert!(others.is_empty(), "modbot_interface depends on {others:?}");
    for banned in ["rapier3d ", "ros2-client ", "r2r "] {
        assert!(!tree.lines().any(|l| l.starts_with(banned)), "{banned}:\n{tree}");
    }
}
