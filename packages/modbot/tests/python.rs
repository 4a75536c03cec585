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

/// The venv's python, creating the venv when it lacks the test's packages (once, whichever
/// test asks first; the others wait).
fn python() -> PathBuf {
    static PYTHON: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PYTHON.get_or_init(make_venv).clone()
}

fn make_venv() -> PathBuf {
    let v = venv();
    let py = v.join("bin/python");
    let ok = |py: &PathBuf| {
        Command::new(py)
            .args(["-c", "import maturin, pytest, numpy, ray, selenium, mcap, mcap_ros2"])
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
        "maturin, pytest, numpy, ray, selenium, mcap and mcap_ros2 do not import from {}",
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
    let status = pytest_in_netns(&py, &root.join("packages/modbot_py/tests"));
    assert!(status.success(), "pytest packages/modbot_py/tests failed");
}

/// The three.js that modbot_app's build script fetched for this build (the browser test's
/// synthetic pages embed the same file, with no network in the namespace to fetch it).
fn built_three_js() -> PathBuf {
    let profile = Path::new(env!("CARGO_BIN_EXE_modbot"))
        .parent()
        .expect("target/<profile>");
    let build = profile.join("build");
    std::fs::read_dir(&build)
        .unwrap_or_else(|e| panic!("{}: {e}", build.display()))
        .filter_map(|e| e.ok().map(|e| e.path().join("out/three.module.js")))
        .find(|p| {
            p.parent()
                .and_then(|d| d.parent())
                .is_some_and(|d| d.to_string_lossy().contains("modbot_app-"))
                && p.is_file()
        })
        .unwrap_or_else(|| {
            panic!(
                "no three.module.js from modbot_app's build script under {}",
                build.display()
            )
        })
}

/// pytest on `dir` in a private network namespace, as root or as a user namespace's root.
fn pytest_in_netns(py: &Path, dir: &Path) -> std::process::ExitStatus {
    Command::new("unshare")
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
        .arg(py)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(dir)
        .current_dir(repo_root())
        .env("MODBOT_BIN", env!("CARGO_BIN_EXE_modbot"))
        .env("MODBOT_THREE_JS", built_three_js())
        .env("RAY_USAGE_STATS_ENABLED", "0")
        .env("MODBOT_IN_NETNS", "1")
        .status()
        .expect("unshare (util-linux) runs pytest in a private network namespace")
}

/// What a run leaves for other tools, opened by real readers (test/artifacts): replay.html in
/// headless Chromium (Debian's `chromium` and `chromedriver`, driven by selenium; it loads
/// without console errors, draws the links at the first and last frames' poses, and its
/// slider moves them), and run.mcap by the `mcap` and `mcap-ros2-support` readers, every
/// message decoded and compared with the run's files. Chromium runs in the private network
/// namespace too: the page must need nothing from the network.
#[test]
fn runs_leave_a_replay_and_a_recording_that_real_readers_open() {
    let py = python();
    for tool in ["/usr/bin/chromium", "/usr/bin/chromedriver"] {
        assert!(
            Path::new(tool).exists(),
            "{tool} is missing: install Debian's chromium and chromium-driver (.ci/run does)"
        );
    }
    let status = pytest_in_netns(&py, &repo_root().join("test/artifacts"));
    assert!(status.success(), "pytest test/artifacts failed");
}

/// Each crate's features as `cargo tree` resolves them (`name vX.Y.Z` → features).
fn resolved_features(args: &[&str]) -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["tree", "--locked", "--prefix", "none", "-f", "{p} [{f}]"])
        .args(args)
        .current_dir(repo_root())
        .output()
        .expect("cargo tree");
    assert!(
        out.status.success(),
        "cargo tree {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut map = std::collections::BTreeMap::<String, std::collections::BTreeSet<String>>::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let line = line.trim_end_matches(" (*)");
        let Some((package, features)) = line.rsplit_once(" [") else {
            continue;
        };
        // `name vX.Y.Z` (a path or proc-macro note after it dropped).
        let package = package.split(' ').take(2).collect::<Vec<_>>().join(" ");
        let features = features.trim_end_matches(']').split(',').filter(|f| !f.is_empty());
        map.entry(package).or_default().extend(features.map(String::from));
    }
    map
}

/// maturin builds modbot_py on its own, so cargo resolves the features of the crates it
/// shares with the workspace for modbot_py alone; where they differ from what `cargo test
/// --workspace` resolved (dev-dependencies included), maturin compiles the whole stack a
/// second time (three minutes of CI). modbot_py names those crates with the workspace's
/// features (decision record 0053); this fails when a dependency change makes them drift,
/// naming the crate and the features to add.
#[test]
fn the_python_build_resolves_the_workspace_features() {
    let workspace = resolved_features(&["--workspace", "-e", "normal,build,dev"]);
    let python = resolved_features(&["-p", "modbot_py", "-e", "normal,build"]);
    let drift: Vec<String> = python
        .iter()
        .filter_map(|(package, features)| {
            let all = workspace.get(package)?;
            (all != features).then(|| {
                format!(
                    "{package}: the workspace has {:?}, modbot_py alone {:?}",
                    all.difference(features).collect::<Vec<_>>(),
                    features.difference(all).collect::<Vec<_>>()
                )
            })
        })
        .collect();
    assert!(
        drift.is_empty(),
        "add these features to packages/modbot_py/Cargo.toml's unifying dependencies:\n{}",
        drift.join("\n")
    );
    // The parse found the crates (pyo3 is modbot_py's own).
    assert!(python.keys().any(|k| k.starts_with("pyo3 ")), "{python:?}");
}
