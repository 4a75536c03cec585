//! The crate's boundary (decision record 0058): the behaviours see the robot interface only,
//! so nothing of the simulator or the middleware may be among their dependencies.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use std::process::Command;

#[test]
fn the_behaviours_do_not_depend_on_the_simulator_or_ros() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["tree", "-e", "normal", "-p", "modbot_behaviours", "--prefix", "none"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let tree = String::from_utf8_lossy(&out.stdout);
    // The tree is read, not assumed: it names the crate and its model dependency.
    assert!(tree.lines().any(|l| l.starts_with("modbot_behaviours ")), "{tree}");
    assert!(tree.lines().any(|l| l.starts_with("modbot_gaits ")), "{tree}");
    for banned in ["modbot_sim ", "rapier3d ", "modbot_ros ", "ros2-client ", "modbot_app "] {
        assert!(
            !tree.lines().any(|l| l.starts_with(banned)),
            "modbot_behaviours depends on {banned}:\n{tree}"
        );
    }
}
