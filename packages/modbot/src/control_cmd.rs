//! `modbot control`: a gait's controller on a line protocol over standard input and output,
//! for a simulator outside modbot. It is the gait node's logic (`modbot_app::GaitDriver`,
//! closed loop for the wheel-foot robots) with text lines where the node has ROS messages;
//! test/gazebo's harness drives Gazebo's DART physics with it (decision record 0056).
//!
//! The protocol, one line each way per control tick, numbers separated by spaces:
//! - modbot first writes `modbot-control 1 N name:position|velocity …` (the robot's joints in
//!   joint order with their command interface);
//! - the simulator writes `t x y z qw qx qy qz q1 … qN w1 … wN`: its time (s, increasing),
//!   the root link's pose in the world (m, unit quaternion), joint positions (rad) and
//!   velocities (rad/s) in that order;
//! - modbot answers `cycles c1 … cN`: the cycles the controller has completed, then one
//!   target per joint (rad for a position joint, rad/s for a velocity joint).
//!
//! The end of the input ends the run. A line that is not what the protocol says (a count,
//! a number that does not parse or is not finite, time that does not increase, a quaternion
//! that is not unit length) is refused naming the field, and the command exits with 2.

use std::io::{BufRead, Write};

use anyhow::{Context, Result};
use modbot_app::GaitDriver;
use modbot_core::Topology;
use nalgebra::{Isometry3, Quaternion, Translation3, UnitQuaternion};

use crate::common::{BadInput, ConfigArgs, parse_set};

#[derive(Debug, clap::Args)]
pub struct ControlArgs {
    /// Gait (a wheel-foot robot's: trot, sidle, goto, drive, …; a chain's: see `modbot gaits`).
    pub gait: String,
    /// Robot: pp:M, py:M, pyp, quadruped, wheeled, wheelfoot or a robot file.
    #[arg(long, short)]
    pub robot: String,
    /// Parameter value, KEY=VALUE.
    #[arg(long = "set", short = 's', value_name = "KEY=VALUE", value_parser = parse_set)]
    pub set: Vec<(String, f64)>,
    /// The control rate the simulator ticks at, Hz: the first tick's time step (later ones
    /// are the differences of the times it sends).
    #[arg(long, default_value_t = modbot_sim::DEFAULT_CONTROL_RATE_HZ, value_parser = crate::common::control_rate)]
    pub rate: f64,
    #[command(flatten)]
    pub config: ConfigArgs,
}

/// The protocol's version, the header's second word.
pub const PROTOCOL_VERSION: u32 = 1;

/// Longest time step between two ticks the controller accepts, s.
const MAX_TICK_S: f64 = 1.0;

pub fn run(args: &ControlArgs) -> Result<()> {
    let catalog = args.config.catalog()?;
    let library = args.config.library()?;
    let topology = Topology::resolve(&args.robot, &catalog)?;
    let mut control = Control::new(topology, library, &args.gait, &args.set, args.rate)?;
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", control.header()).context("writing the header")?;
    out.flush()?;
    for (k, line) in stdin.lock().lines().enumerate() {
        let line = line.context("reading standard input")?;
        if line.trim().is_empty() {
            continue;
        }
        let reply = control
            .tick(&line)
            .map_err(|e| BadInput(format!("line {}: {e}", k + 1)))?;
        if writeln!(out, "{reply}").and_then(|_| out.flush()).is_err() {
            // The simulator has gone: nothing more to answer.
            return Ok(());
        }
    }
    Ok(())
}

/// The protocol's state: the driver, the joints, the last time.
pub struct Control {
    driver: GaitDriver,
    names: Vec<String>,
    velocity: Vec<bool>,
    nominal_dt: f64,
    last_t: Option<f64>,
}

impl Control {
    /// A driver for `topology` running `gait` with `params`; the gait is checked now.
    pub fn new(
        topology: Topology,
        library: modbot_gaits::GaitLibrary,
        gait: &str,
        params: &[(String, f64)],
        rate: f64,
    ) -> Result<Control> {
        let names = topology.joint_names();
        let mut driver = GaitDriver::new(topology, library);
        let velocity = (0..names.len())
            .map(|k| driver.layout().velocity.contains(&k))
            .collect();
        driver.select(gait, params).map_err(BadInput)?;
        Ok(Control {
            driver,
            names,
            velocity,
            nominal_dt: 1.0 / rate,
            last_t: None,
        })
    }

    /// The first line: version, joint count, `name:interface` per joint.
    pub fn header(&self) -> String {
        let joints: Vec<String> = self
            .names
            .iter()
            .zip(&self.velocity)
            .map(|(n, &v)| format!("{n}:{}", if v { "velocity" } else { "position" }))
            .collect();
        format!(
            "modbot-control {PROTOCOL_VERSION} {} {}",
            self.names.len(),
            joints.join(" ")
        )
    }

    /// One tick: the simulator's line in, the answer out.
    pub fn tick(&mut self, line: &str) -> Result<String, String> {
        let n = self.names.len();
        let fields: Vec<&str> = line.split_whitespace().collect();
        let want = 8 + 2 * n;
        if fields.len() != want {
            return Err(format!(
                "{} numbers; expected {want}: t, x y z, qw qx qy qz, {n} positions, {n} velocities",
                fields.len()
            ));
        }
        let mut values = Vec::with_capacity(want);
        for (i, f) in fields.iter().enumerate() {
            let v: f64 = f
                .parse()
                .map_err(|_| format!("{} `{f}` is not a number", self.field(i)))?;
            if !v.is_finite() {
                return Err(format!("{} is {f}: expected a finite number", self.field(i)));
            }
            values.push(v);
        }
        let t = values[0];
        let dt = match self.last_t {
            None => self.nominal_dt,
            Some(last) if t > last && t - last <= MAX_TICK_S => t - last,
            Some(last) => {
                return Err(format!(
                    "time {t} s after {last} s: expected it to increase by at most {MAX_TICK_S} s"
                ));
            }
        };
        let q = Quaternion::new(values[4], values[5], values[6], values[7]);
        if (q.norm() - 1.0).abs() > 1e-3 {
            return Err(format!("the base quaternion's norm is {}: expected 1", q.norm()));
        }
        let base = Isometry3::from_parts(
            Translation3::new(values[1], values[2], values[3]),
            UnitQuaternion::from_quaternion(q),
        );
        self.driver.observe_base(base)?;
        self.driver
            .observe_joints(&self.names, &values[8..8 + n], &values[8 + n..])?;
        self.last_t = Some(t);
        match self.driver.step(dt) {
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(e),
            None => return Err("the controller has not observed the robot".into()),
        }
        let targets: Vec<String> = self.driver.output().iter().map(|v| format!("{v:.9}")).collect();
        Ok(format!("{} {}", self.driver.status().cycles, targets.join(" ")))
    }

    /// The name of field `i` of a state line.
    fn field(&self, i: usize) -> String {
        const POSE: [&str; 8] = ["t", "x", "y", "z", "qw", "qx", "qy", "qz"];
        let n = self.names.len();
        match i {
            0..8 => POSE[i].to_string(),
            _ if i < 8 + n => format!("the position of `{}`", self.names[i - 8]),
            _ => format!("the velocity of `{}`", self.names[i - 8 - n]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use modbot_core::ModuleCatalog;
    use modbot_gaits::GaitLibrary;

    fn control(robot: &str, gait: &str) -> Control {
        let topology = Topology::resolve(robot, &ModuleCatalog::builtin()).unwrap_or_else(|e| panic!("{e}"));
        Control::new(topology, GaitLibrary::builtin(), gait, &[], 100.0).unwrap_or_else(|e| panic!("{e}"))
    }

    fn state(t: f64, n: usize, positions: &[f64]) -> String {
        let mut v = vec![t, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0];
        v.extend_from_slice(positions);
        v.extend(std::iter::repeat_n(0.0, n));
        v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn the_header_names_each_joint_and_its_interface() {
        let c = control("wheeled", "drive");
        let h = c.header();
        assert!(h.starts_with("modbot-control 1 30 role1_front_joint:position "), "{h}");
        assert!(h.contains(" role3_front_joint:velocity "), "{h}");
        let q = control("quadruped", "trot").header();
        assert!(!q.contains(":velocity"), "the quadruped's hips take positions: {q}");
    }

    #[test]
    fn the_quadruped_trot_answers_its_timetable_and_counts_a_cycle_when_the_joints_follow() {
        let mut c = control("quadruped", "trot");
        let n = c.names.len();
        // Joints that follow their targets exactly: the pose sequence advances every tick.
        let mut q = vec![0.0; n];
        let mut cycles = 0;
        let mut seen = std::collections::BTreeSet::new();
        for k in 0..40 {
            let reply = c.tick(&state(k as f64 * 0.01, n, &q)).unwrap_or_else(|e| panic!("{e}"));
            let words: Vec<&str> = reply.split(' ').collect();
            assert_eq!(words.len(), n + 1, "{reply}");
            cycles = words[0].parse().unwrap();
            q = words[1..].iter().map(|w| w.parse().unwrap()).collect();
            let fr_hip = q[c.names.iter().position(|j| j == "role3_front_joint").unwrap()];
            seen.insert((fr_hip.to_degrees() * 10.0).round() as i64);
        }
        assert!(cycles >= 1, "no cycle completed in 40 ticks with joints on target");
        // FR's hip goes through 0, −30 (step 2) and +30 (step 4) degrees.
        assert!(
            seen.contains(&0) && seen.contains(&-300) && seen.contains(&300),
            "{seen:?}"
        );
    }

    #[test]
    fn bad_lines_are_refused_naming_the_field() {
        let mut c = control("quadruped", "trot");
        let n = c.names.len();
        let line = |v: &[f64]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" ");
        let good = |t: f64| {
            let mut v = vec![t, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0];
            v.extend(std::iter::repeat_n(0.0, 2 * n));
            v
        };
        let err = c.tick("0 0 0").unwrap_err();
        assert!(err.contains("3 numbers; expected 68"), "{err}");
        let mut v = good(0.0);
        v[8] = f64::NAN;
        let err = c.tick(&line(&v)).unwrap_err();
        assert!(err.contains("the position of `role1_front_joint` is NaN"), "{err}");
        let mut v = good(0.0);
        v[8 + 2 * n - 1] = f64::INFINITY;
        let err = c.tick(&line(&v)).unwrap_err();
        assert!(
            err.contains(&format!("the velocity of `{}` is inf", c.names[n - 1])),
            "{err}"
        );
        let mut v = good(0.0);
        v[4] = 2.0;
        let err = c.tick(&line(&v)).unwrap_err();
        assert!(err.contains("norm is 2"), "{err}");
        let text = line(&good(0.0));
        let err = c.tick(&format!("{} x", text.rsplit_once(' ').unwrap().0)).unwrap_err();
        assert!(
            err.contains("the velocity of") && err.contains("`x` is not a number"),
            "{err}"
        );
        c.tick(&line(&good(0.5))).unwrap();
        let err = c.tick(&line(&good(0.5))).unwrap_err();
        assert!(err.contains("time 0.5 s after 0.5 s"), "{err}");
        let err = c.tick(&line(&good(2.0))).unwrap_err();
        assert!(err.contains("at most 1 s"), "{err}");
        // Nothing refused moved the controller on: the next good tick is answered.
        c.tick(&line(&good(0.51))).unwrap();
    }

    #[test]
    fn an_unknown_gait_is_refused_before_the_header() {
        let topology = Topology::resolve("quadruped", &ModuleCatalog::builtin()).unwrap();
        let err = Control::new(topology, GaitLibrary::builtin(), "gallop", &[], 100.0)
            .err()
            .expect("gallop is not a quadruped gait");
        assert!(err.to_string().contains("gallop"), "{err}");
    }
}
