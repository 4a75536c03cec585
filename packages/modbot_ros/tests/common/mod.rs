//! Support for the system tests: a private network namespace per test, node processes
//! that die with the test, and a probe node in the test process.
#![allow(dead_code, missing_docs)]

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use modbot_ros::dds::DdsTransport;

pub use modbot_ros::netns::reexec_in_netns;

/// A node process, killed when dropped; its stderr is collected.
pub struct NodeProc {
    pub name: String,
    child: Child,
    log: Arc<Mutex<String>>,
}

impl NodeProc {
    pub fn spawn(bin: &str, args: &[&str]) -> NodeProc {
        NodeProc::spawn_on("dds", bin, args)
    }

    /// A node on a backend (`dds`, or `r2r` in an r2r build).
    pub fn spawn_on(backend: &str, bin: &str, args: &[&str]) -> NodeProc {
        let mut child = Command::new(bin)
            .args(args)
            .env(modbot_ros::BACKEND_ENV, backend)
            .env(
                "RUST_LOG",
                "info,rustdds=error,rustdds::discovery::discovery_db=off,ros2_client=error",
            )
            .env("NO_COLOR", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {bin}: {e}"));
        let log = Arc::new(Mutex::new(String::new()));
        let mut err = child.stderr.take().expect("piped stderr");
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                if let Ok(mut l) = sink.lock() {
                    l.push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            }
        });
        NodeProc {
            name: bin.rsplit('/').next().unwrap_or(bin).to_string(),
            child,
            log,
        }
    }

    pub fn log(&self) -> String {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Resident memory, kB (VmRSS of /proc/<pid>/status); `None` once the process is gone.
    pub fn rss_kb(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }

    /// Sends SIGINT (what Ctrl-C sends) and waits up to `within` for the process to end; its
    /// exit status, or `None` if it is still running.
    pub fn interrupt(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let sent = Command::new("kill")
            .args(["-INT", &self.pid().to_string()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(sent, "kill -INT {}", self.pid());
        let end = Instant::now() + within;
        while Instant::now() < end {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// Waits up to `within` for the process to end by itself; its exit status, or `None`.
    pub fn wait(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let end = Instant::now() + within;
        while Instant::now() < end {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }

    /// Still running?
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for NodeProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("---- {} stderr ----\n{}", self.name, self.log());
        }
    }
}

/// The test's probe node.
pub fn probe(name: &str) -> DdsTransport {
    DdsTransport::plain(name).expect("probe node")
}

/// Polls `f` every 10 ms until it returns Some or `timeout` passes.
pub fn wait_for<T>(timeout: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let until = Instant::now() + timeout;
    while Instant::now() < until {
        if let Some(v) = f() {
            return Some(v);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

/// The backends this build can run nodes on: `dds`, and `r2r` with the `r2r` feature.
/// The backends a system test runs its graph on: both when built with r2r, else the
/// ros2-client one. `MODBOT_TEST_BACKENDS=r2r` keeps only r2r: CI's r2r step sets it, since
/// `cargo test --workspace` has just run the same graphs on ros2-client (mixed graphs
/// name their backends themselves and are not affected).
pub fn backends() -> Vec<&'static str> {
    let built: Vec<&'static str> = if cfg!(feature = "r2r") {
        vec!["dds", "r2r"]
    } else {
        vec!["dds"]
    };
    match std::env::var("MODBOT_TEST_BACKENDS") {
        Ok(only) if !only.trim().is_empty() => {
            let wanted: Vec<&str> = only.split(',').map(str::trim).collect();
            for w in &wanted {
                assert!(
                    built.contains(w),
                    "MODBOT_TEST_BACKENDS names `{w}`, which this build does not have (it has {built:?})"
                );
            }
            built.into_iter().filter(|b| wanted.contains(b)).collect()
        }
        _ => built,
    }
}

pub fn gait_node() -> &'static str {
    env!("CARGO_BIN_EXE_gait_node")
}

pub fn sim_node() -> &'static str {
    env!("CARGO_BIN_EXE_sim_node")
}

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A type that claims to be `package/Name` but carries four bytes: undecodable for any
/// reader of the real type (garbage on the wire).
#[macro_export]
macro_rules! impostor {
    ($ty:ident, $pkg:literal, $name:literal) => {
        #[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
        struct $ty {
            word: u32,
        }
        impl modbot_msgs::RosMessage for $ty {
            const PACKAGE: &'static str = $pkg;
            const NAME: &'static str = $name;
            const FIELDS: &'static [(&'static str, &'static str)] = &[("word", "uint32")];
            const DEFINITION: &'static str = "uint32 word\n";
        }
    };
}
