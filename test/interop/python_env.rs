//! The Python side of the tests that talk to real ROS 2 code (the rclpy interop test of
//! modbot_ros, the launch check of modbot): the interop virtualenv, `target/interop-venv` (or
//! `$MODBOT_INTEROP_VENV`), made from `test/interop/requirements.txt` (PyPI) when it lacks
//! what a test imports, and modbot's rclpy build of its messages (and tf2_msgs, which has no
//! wheel) under `target/interop-msgs`, rebuilt by `test/interop/build_modbot_msgs.sh` when
//! the `.msg`/`.srv` files changed. Included by `#[path]` from both packages' tests, so that
//! both make and find the environment the same way; a piece that cannot be made fails the
//! test, naming the command that makes it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

/// The interop virtualenv.
pub fn venv() -> PathBuf {
    std::env::var_os("MODBOT_INTEROP_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/interop-venv"))
}

/// Where modbot's messages are installed for rclpy.
pub fn msgs_prefix() -> PathBuf {
    repo_root().join("target/interop-msgs")
}

/// The venv's python, once `import {imports}` works in it (the venv made from the
/// requirements when it does not) and modbot's messages are built for it.
pub fn python(imports: &str) -> PathBuf {
    let v = venv();
    let py = v.join("bin/python");
    let ok = || {
        Command::new(&py)
            .args(["-c", &format!("import {imports}")])
            .env_remove("LD_PRELOAD")
            .status()
            .is_ok_and(|s| s.success())
    };
    if !ok() {
        let req = repo_root().join("test/interop/requirements.txt");
        let made = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&v)
            .status()
            .is_ok_and(|s| s.success())
            && Command::new(v.join("bin/pip"))
                .args(["install", "-q", "-r"])
                .arg(&req)
                .status()
                .is_ok_and(|s| s.success());
        assert!(
            made && ok(),
            "{} cannot `import {imports}`; make it with\n  \
             python3 -m venv target/interop-venv && target/interop-venv/bin/pip install -r test/interop/requirements.txt",
            v.display()
        );
    }
    ensure_modbot_msgs(&v);
    py
}

/// Builds modbot's messages for rclpy unless the installed build is of the current
/// `.msg`/`.srv` files and of the controller switch's copied definition (its
/// `interfaces.stamp` holds their text, in build_modbot_msgs.sh's order).
fn ensure_modbot_msgs(v: &Path) {
    let dir = repo_root().join("packages/modbot_msgs");
    let mut stamp = String::new();
    for sub in ["msg", "srv"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join(sub))
            .expect("interface folder")
            .map(|e| e.expect("entry").path())
            .collect();
        files.sort();
        for f in files {
            stamp.push_str(&std::fs::read_to_string(&f).expect("interface file"));
        }
    }
    stamp.push_str(
        &std::fs::read_to_string(dir.join("interfaces/controller_manager_msgs/srv/SwitchController.srv"))
            .expect("SwitchController.srv"),
    );
    let stamp_file = msgs_prefix().join("interfaces.stamp");
    if std::fs::read_to_string(&stamp_file).is_ok_and(|s| s == stamp) {
        return;
    }
    let built = Command::new(repo_root().join("test/interop/build_modbot_msgs.sh"))
        .arg(v)
        .arg(msgs_prefix())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        built && std::fs::read_to_string(&stamp_file).is_ok_and(|s| s == stamp),
        "building modbot's messages for rclpy into {} failed; make them with\n  \
         test/interop/build_modbot_msgs.sh target/interop-venv target/interop-msgs",
        msgs_prefix().display()
    );
}

/// `PREFIX/lib/python3.X/site-packages` of the rclpy build of modbot's messages (tf2_msgs
/// included); call after [`python`].
pub fn msgs_pythonpath() -> PathBuf {
    let lib = msgs_prefix().join("lib");
    let site = std::fs::read_dir(&lib)
        .ok()
        .and_then(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path())).find(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("python3"))
            })
        })
        .map(|p| p.join("site-packages"));
    // tf2_msgs has no wheel: the build script builds it into the prefix unless the venv
    // already has it.
    let tf2 = |p: &Path| {
        p.join("tf2_msgs").is_dir()
            || Command::new(venv().join("bin/python"))
                .args(["-c", "import tf2_msgs.msg"])
                .env_remove("LD_PRELOAD")
                .status()
                .is_ok_and(|s| s.success())
    };
    match site {
        Some(p) if p.join("modbot_msgs").is_dir() && tf2(&p) => p,
        _ => panic!(
            "no rclpy build of modbot's messages and tf2_msgs under {}; make it with\n  \
             test/interop/build_modbot_msgs.sh target/interop-venv target/interop-msgs",
            lib.display()
        ),
    }
}
