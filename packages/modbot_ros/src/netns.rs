//! Private network namespaces for anything that opens a DDS participant in tests: DDS
//! discovery multicasts, and test traffic must never leave the machine.

use std::process::Command;

/// Runs the calling test again inside a fresh network namespace whose only interface is
/// loopback (with multicast), unless already inside one (`MODBOT_IN_NETNS=1`). Returns true
/// in the outer process, which must then return: the inner run's verdict has been asserted.
///
/// Uses `unshare -n` as root and `unshare -rn` (a user namespace) otherwise, like
/// `../shared/tools/netns-run`.
pub fn reexec_in_netns(test: &str) -> bool {
    if in_netns() {
        return false;
    }
    let exe = std::env::current_exe().expect("test binary path");
    let status = netns_command(
        &exe.display().to_string(),
        &[test, "--exact", "--nocapture", "--test-threads=1"],
    )
    .status()
    .expect("unshare (util-linux) must be available to isolate DDS traffic");
    assert!(
        status.success(),
        "{test} failed inside its network namespace ({status})"
    );
    true
}

/// Whether this process runs in a namespace made by [`netns_command`].
pub fn in_netns() -> bool {
    std::env::var("MODBOT_IN_NETNS").as_deref() == Ok("1")
}

/// A command that runs `program args…` inside a fresh loopback-only network namespace.
pub fn netns_command(program: &str, args: &[&str]) -> Command {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    let mut c = Command::new("unshare");
    c.args([if root { "-n" } else { "-rn" }, "--", "sh", "-c"])
        .arg(
            "ip link set lo up && ip link set lo multicast on && \
             (ip route add 224.0.0.0/4 dev lo 2>/dev/null || true) && exec \"$0\" \"$@\"",
        )
        .arg(program)
        .args(args)
        .env("MODBOT_IN_NETNS", "1");
    c
}
