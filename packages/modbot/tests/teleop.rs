//! `modbot teleop` in a real terminal: tmux runs it (inside this test's private network
//! namespace), the test types with `tmux send-keys`, reads the gait commands it publishes
//! with a DDS subscriber of its own and the screen with `tmux capture-pane`, and after Esc
//! checks that the terminal is back in cooked mode (`stty -a`). tmux is installed by
//! `.ci/run`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use modbot_app::teleop::ROLLING_LEFT_DIRECTION;
use modbot_msgs::modbot_msgs::msg::GaitCommand;
use modbot_ros::{Qos, Sub, Transport};

/// The dead-man of the run under test, s: above the gaps between the test's key presses.
const TIMEOUT_S: f64 = 1.2;

/// A tmux server of the test's own (its socket in a folder of its own, so no other tmux
/// server, outside the namespace, is used; no configuration file), killed with everything
/// in it on drop.
struct Tmux {
    dir: PathBuf,
    socket: PathBuf,
}

impl Tmux {
    /// A detached 200 × 40 session `teleop` running `command` in the shell.
    fn start(command: &str) -> Tmux {
        let dir = std::env::temp_dir().join(format!("modbot-teleop-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let t = Tmux {
            socket: dir.join("tmux.sock"),
            dir,
        };
        let o = t.tmux(&["new-session", "-d", "-s", "teleop", "-x", "200", "-y", "40", command]);
        assert!(
            o.status.success(),
            "tmux new-session: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        t
    }

    fn tmux(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .args(["-f", "/dev/null", "-S"])
            .arg(&self.socket)
            .args(args)
            .env("TERM", "xterm-256color")
            .env_remove("TMUX")
            .output()
            .expect("tmux runs modbot teleop in a terminal (.ci/run installs it)")
    }

    /// Types keys (tmux key names, or `-l` then literal text).
    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "teleop"];
        args.extend_from_slice(keys);
        let o = self.tmux(&args);
        assert!(
            o.status.success(),
            "send-keys {keys:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-t", "teleop"]).stdout).into_owned()
    }

    /// The screen once it shows `needle` (at most 20 s).
    fn wait_screen(&self, needle: &str) -> String {
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            let s = self.screen();
            if s.contains(needle) {
                return s;
            }
            assert!(Instant::now() < until, "the screen never showed `{needle}`:\n{s}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn drain(sub: &impl Sub<GaitCommand>) -> Vec<GaitCommand> {
    std::iter::from_fn(|| sub.take()).filter_map(Result::ok).collect()
}

/// Presses `key` every 100 ms, as a held key repeats, until a command `pred` accepts
/// arrives (the first press also waits out DDS discovery; the heartbeat re-sends).
fn hold(t: &Tmux, key: &str, sub: &impl Sub<GaitCommand>, pred: impl Fn(&GaitCommand) -> bool) -> GaitCommand {
    let until = Instant::now() + Duration::from_secs(30);
    while Instant::now() < until {
        t.keys(&[key]);
        std::thread::sleep(Duration::from_millis(100));
        if let Some(c) = drain(sub).into_iter().find(&pred) {
            return c;
        }
    }
    panic!("holding `{key}` sent no such command; the screen:\n{}", t.screen());
}

/// The first stop within `within`, and when it came.
fn stop_within(sub: &impl Sub<GaitCommand>, within: Duration) -> Option<Instant> {
    let until = Instant::now() + within;
    while Instant::now() < until {
        if drain(sub).iter().any(|c| c.stop) {
            return Some(Instant::now());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

fn param(c: &GaitCommand, key: &str) -> f64 {
    c.param_names
        .iter()
        .position(|n| n == key)
        .map(|i| c.param_values[i])
        .unwrap_or_else(|| panic!("{key} not in {c:?}"))
}

/// Keys drive a py:8 snake: W ahead, A turning left, Q rolling to the left, each published
/// as a GaitCommand; releasing the keys stops it after the dead-man's timeout and then
/// nothing is sent; space stops at once; + raises the speed on the status line; Esc stops
/// the robot, quits with status 0 and leaves the terminal in cooked mode.
#[test]
fn keys_drive_a_snake_under_tmux() {
    if modbot_ros::netns::reexec_in_netns("keys_drive_a_snake_under_tmux") {
        return;
    }
    let exe = env!("CARGO_BIN_EXE_modbot");
    let command = format!(
        "'{exe}' teleop --robot py:8 --timeout {TIMEOUT_S} --heartbeat 0.3; echo \"exit=$?\"; stty -a; echo stty-printed; sleep 60"
    );
    let t = Tmux::start(&command);
    t.wait_screen("modbot teleop: py:8 as a snake (straight, turning, rolling) -> /gait/command");
    let s = t.wait_screen("speed 50 %");
    assert!(s.contains("command: none yet"), "{s}");
    let mut probe = modbot_ros::dds::DdsTransport::plain("teleop_probe").expect("probe");
    let cmds = probe
        .subscription::<GaitCommand>("/gait/command", Qos::Reliable)
        .expect("gait/command");

    // W held: straight ahead at half the top speed scale (2).
    let c = hold(&t, "w", &cmds, |c| c.gait == "straight" && !c.stop);
    assert_eq!((c.direction, c.speed_scale), (1, 1.0), "{c:?}");
    t.wait_screen("command: straight dir +1");
    // Released: the dead-man's stop after the timeout, then silence.
    let released = Instant::now();
    let stopped = stop_within(&cmds, Duration::from_secs(10)).expect("the dead-man's stop");
    let after = stopped.duration_since(released).as_secs_f64();
    assert!(after > TIMEOUT_S - 0.5, "stopped {after} s after the last key");
    t.wait_screen(&format!("command: stop (no key for {TIMEOUT_S} s)"));
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(drain(&cmds), Vec::new(), "nothing after the dead-man's stop");

    // + raises the speed; A held turns left: O_h > 0 at 60 % of the 30° turn.
    t.keys(&["-l", "+"]);
    t.wait_screen("speed 60 %");
    let c = hold(&t, "a", &cmds, |c| c.gait == "turning");
    assert_eq!((c.direction, param(&c, "offset_h_deg")), (1, 17.5), "{c:?}");
    // Space stops at once, well before the dead-man would.
    t.keys(&["Space"]);
    let pressed = Instant::now();
    let stopped = stop_within(&cmds, Duration::from_secs(5)).expect("space stops");
    assert!(
        stopped.duration_since(pressed).as_secs_f64() < TIMEOUT_S - 0.3,
        "space stopped only after {:?}",
        stopped.duration_since(pressed)
    );

    // Q held: rolling to the left.
    let c = hold(&t, "q", &cmds, |c| c.gait == "rolling");
    assert_eq!(c.direction, ROLLING_LEFT_DIRECTION, "{c:?}");
    // Esc: the robot is stopped, the program ends well and the terminal is cooked again.
    t.keys(&["Escape"]);
    assert!(
        stop_within(&cmds, Duration::from_secs(5)).is_some(),
        "quitting stops the robot"
    );
    // Wait for the line after `stty -a`: "exit=0" alone can be on the screen before it.
    let s = t.wait_screen("stty-printed");
    assert!(s.contains("exit=0"), "{s}");
    assert!(s.contains("gait commands sent on /gait/command"), "{s}");
    let tokens: Vec<&str> = s.split_whitespace().collect();
    for flag in ["icanon", "echo", "isig"] {
        assert!(
            tokens.contains(&flag) && !tokens.contains(&format!("-{flag}").as_str()),
            "the terminal is left without `{flag}`:\n{s}"
        );
    }
}

/// Off a terminal (stdin not a tty) it refuses before anything else, saying why, exit 2.
#[test]
fn teleop_refuses_to_run_off_a_terminal() {
    let o = Command::new(env!("CARGO_BIN_EXE_modbot"))
        .args(["teleop", "--robot", "py:8"])
        .output()
        .expect("modbot");
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("reads the keyboard of a terminal") && e.contains("teleop_node"),
        "{e}"
    );
}
