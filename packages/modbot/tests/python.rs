//! The Python package (`packages/modbot_py`, decision record 0039): built into a virtualenv
//! with maturin and tested with pytest (`packages/modbot_py/tests`), against this `modbot`
//! command: a run from Python equals `modbot run` to the last digit, bad input raises with
//! the message, simulations release the GIL, and the search on a local 2-CPU Ray cluster
//! gives the in-process search's best.
//!
//! The virtualenv is `target/py-venv` (or `$MODBOT_PY_VENV`); when it lacks maturin, pytest,
//! NumPy or Ray the test creates it from `test/python/requirements.txt` (PyPI), and fails, not
//! skips, when that is impossible. pytest runs inside a private loopback-only network
//! namespace (`unshare`), so the Ray cluster it starts cannot reach beyond this machine.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn venv() -> PathBuf {
    std::env::var_os("MODBOT_PY_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/py-venv"))
}

/// The venv's python, creating the venv when it lacks the test's packages.
fn python() -> PathBuf {
    let v = venv();
    let py = v.join("bin/python");
    let ok = |py: &PathBuf| {
        Command::new(py)
            .args(["-c", "import maturin, pytest, numpy, ray"])
            .status()
            .is_ok_and(|s| s.success())
    };
    if ok(&py) {
        return py;
    }
    let status = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&v)
        .status()
        .expect("python3 -m venv (python3 is needed for the Python package's tests)");
    assert!(status.success(), "creating {}", v.display());
    let req = repo_root().join("test/python/requirements.txt");
    let status = Command::new(v.join("bin/pip"))
        .args(["install", "-q", "-r"])
        .arg(&req)
        .status()
        .expect("pip");
    assert!(status.success(), "pip install -r {} failed", req.display());
    assert!(
        ok(&py),
        "maturin, pytest, numpy and ray do not import from {}",
        v.display()
    );
    py
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

#[test]
fn the_python_package_builds_and_passes_its_tests() {
    let py = python();
    let v = venv();
    let root = repo_root();
    // Into the venv, as an editable install of the current sources (the dev profile, whose
    // crates `cargo test` has built already).
    let status = Command::new(v.join("bin/maturin"))
        .args(["develop", "--quiet", "--manifest-path"])
        .arg(root.join("packages/modbot_py/Cargo.toml"))
        .env("VIRTUAL_ENV", &v)
        .env(
            "PATH",
            format!(
                "{}:{}",
                v.join("bin").display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .status()
        .expect("maturin");
    assert!(status.success(), "maturin develop failed");
    let status = Command::new("unshare")
        .args([if is_root() { "-n" } else { "-rn" }, "--", "sh", "-c"])
        // A decoy: a routable-looking address (TEST-NET-1) on a veth pair whose both ends are
        // in the namespace, the default route through it, so Ray has an address to bind
        // other than loopback (and the test sees it if it does). Without veth, loopback only.
        .arg(
            "ip link set lo up && \
             if ip link add v0 type veth peer name v1 2>/dev/null && ip addr add 192.0.2.2/24 dev v0 && \
                ip link set v0 up && ip link set v1 up && ip route add default dev v0; then \
               export MODBOT_NETNS_DECOY=192.0.2.2; \
             else echo 'no veth: the Ray test runs on loopback alone' >&2; fi && exec \"$0\" \"$@\"",
        )
        .arg(&py)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(root.join("packages/modbot_py/tests"))
        .current_dir(&root)
        .env("MODBOT_BIN", env!("CARGO_BIN_EXE_modbot"))
        .env("RAY_USAGE_STATS_ENABLED", "0")
        .env("MODBOT_IN_NETNS", "1")
        .status()
        .expect("unshare (util-linux) runs pytest in a private network namespace");
    assert!(status.success(), "pytest packages/modbot_py/tests failed");
}
