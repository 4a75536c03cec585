//! Driving a robot's joints from gait requests: the gait node's logic without middleware.
//! A request names a gait (or keeps the running one), its parameters, a speed scale, a
//! direction and a transition time; the driver checks it, builds the gait and plays it
//! through the gait player (ramp, blend, slew limit). A request the library refuses changes
//! nothing. The same gait again is a heartbeat, not a restart.

use modbot_core::Topology;
use modbot_gaits::{BuiltGait, GaitError, GaitLibrary, GaitPlayer, Transition};

/// A gait request in plain terms (what a `modbot_msgs/GaitCommand` says).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GaitRequest {
    /// Stop: hold the current targets (everything else is ignored).
    pub stop: bool,
    /// Gait or preset; empty keeps the running gait.
    pub gait: String,
    /// Parameter overrides (keys or aliases).
    pub params: Vec<(String, f64)>,
    /// Period divisor in [0, 4]; 0 keeps 1.
    pub speed_scale: f64,
    /// −1 reverses, 0 or 1 as given.
    pub direction: i8,
    /// Blend/ramp time, s (negative: the library's).
    pub transition_s: f64,
}

/// Where the driver is, for a status message.
#[derive(Debug, Clone, PartialEq)]
pub struct GaitStatus {
    /// Running gait ("" while holding from the start).
    pub gait: String,
    /// Its period, s (0 if none).
    pub period_s: f64,
    /// Its resolved parameters.
    pub params: Vec<(String, f64)>,
    /// Phase in the current cycle, [0, 1).
    pub phase: f64,
    /// Completed cycles.
    pub cycles: u32,
    /// Holding a pose.
    pub holding: bool,
    /// Blending from the previous gait.
    pub transitioning: bool,
}

/// The driver.
pub struct GaitDriver {
    topology: Topology,
    library: GaitLibrary,
    player: GaitPlayer,
    default_transition: Transition,
    running: Option<BuiltGait>,
    started_at: f64,
    holding: bool,
}

impl std::fmt::Debug for GaitDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GaitDriver")
            .field("robot", &self.topology.name)
            .field("holding", &self.holding)
            .finish()
    }
}

impl GaitDriver {
    /// A robot holding its zero pose.
    pub fn new(topology: Topology, library: GaitLibrary) -> GaitDriver {
        let speeds = topology.max_speeds_rad_s();
        let n = speeds.len();
        GaitDriver {
            player: GaitPlayer::new(vec![0.0; n], speeds, library.transition),
            default_transition: library.transition,
            library,
            topology,
            running: None,
            started_at: 0.0,
            holding: true,
        }
    }

    /// The robot.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// Builds a gait for this robot (no side effect).
    pub fn build(&self, gait: &str, params: &[(String, f64)]) -> Result<BuiltGait, GaitError> {
        self.library.build(gait, &self.topology, params)
    }

    fn start(&mut self, built: BuiltGait, transition_s: Option<f64>) {
        let mut tr = self.default_transition;
        if let Some(t) = transition_s {
            tr.blend_s = t;
            tr.ramp_s = t;
        }
        self.player.set_transition(tr);
        self.player.start(Box::new(built.generator.clone()));
        self.started_at = self.player.time();
        self.running = Some(built);
        self.holding = false;
    }

    /// Runs a gait by name (empty: hold).
    pub fn select(&mut self, gait: &str, params: &[(String, f64)]) -> Result<(), GaitError> {
        if gait.is_empty() {
            self.stop();
            return Ok(());
        }
        let built = self.build(gait, params)?;
        self.start(built, None);
        Ok(())
    }

    /// Applies a request; the error says why it was refused (nothing changes then).
    pub fn request(&mut self, r: &GaitRequest) -> Result<(), String> {
        if r.stop {
            self.stop();
            return Ok(());
        }
        if let Some((k, v)) = r.params.iter().find(|(_, v)| !v.is_finite()) {
            return Err(format!("parameter `{k}` is {v}"));
        }
        if !(r.speed_scale.is_finite() && (0.0..=4.0).contains(&r.speed_scale)) {
            return Err(format!("speed_scale {} is outside [0, 4] (0 keeps 1)", r.speed_scale));
        }
        if !r.transition_s.is_finite() || r.transition_s > 60.0 {
            return Err(format!("transition_time {} is not a time up to 60 s", r.transition_s));
        }
        let direction = match r.direction {
            0 | 1 => 1.0,
            -1 => -1.0,
            d => return Err(format!("direction {d} is not -1, 0 or 1")),
        };
        let name = if r.gait.is_empty() {
            match &self.running {
                Some(b) => b.generator.name.clone(),
                None => return Err("no gait named and none running".into()),
            }
        } else {
            r.gait.clone()
        };
        let mut built = self.build(&name, &r.params).map_err(|e| e.to_string())?;
        let scale = if r.speed_scale == 0.0 { 1.0 } else { r.speed_scale };
        built.generator.period_s /= scale;
        built.generator.direction *= direction;
        // The same gait again is a heartbeat (a watchdog refresh), not a restart: restarting
        // would reset the phase and, sent every second, keep the robot from ever finishing a
        // cycle.
        if !self.holding && self.running.as_ref().is_some_and(|b| b.generator == built.generator) {
            return Ok(());
        }
        self.start(built, (r.transition_s >= 0.0).then_some(r.transition_s));
        Ok(())
    }

    /// Holds the current targets.
    pub fn stop(&mut self) {
        self.player.hold();
        self.holding = true;
    }

    /// Whether the robot holds a pose.
    pub fn holding(&self) -> bool {
        self.holding
    }

    /// Advances by `dt` and returns the targets, rad.
    pub fn tick(&mut self, dt: f64) -> &[f64] {
        self.player.step(dt)
    }

    /// The last targets, rad.
    pub fn output(&self) -> &[f64] {
        self.player.output()
    }

    /// Where the driver is.
    pub fn status(&self) -> GaitStatus {
        let (gait, period_s, params) = match &self.running {
            Some(b) => (
                b.generator.name.clone(),
                b.generator.period_s,
                b.params.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            ),
            None => (String::new(), 0.0, Vec::new()),
        };
        let elapsed = (self.player.time() - self.started_at).max(0.0);
        let (phase, cycles) = if period_s > 0.0 && !self.holding {
            let c = elapsed / period_s;
            (c.fract(), c.floor() as u32)
        } else {
            (0.0, 0)
        };
        GaitStatus {
            gait,
            period_s,
            params,
            phase,
            cycles,
            holding: self.holding,
            transitioning: !self.holding && elapsed < self.player.transition().blend_s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use modbot_core::ModuleCatalog;

    fn driver(robot: &str) -> GaitDriver {
        let t = Topology::resolve(robot, &ModuleCatalog::builtin()).unwrap_or_else(|e| panic!("{e}"));
        GaitDriver::new(t, GaitLibrary::builtin())
    }

    fn req(gait: &str) -> GaitRequest {
        GaitRequest {
            gait: gait.into(),
            transition_s: -1.0,
            ..Default::default()
        }
    }

    #[test]
    fn requests_are_validated_and_nothing_changes_on_refusal() {
        let mut d = driver("pp:8");
        d.select("caterpillar", &[]).unwrap_or_else(|e| panic!("{e}"));
        for _ in 0..100 {
            d.tick(0.01);
        }
        let before = d.status();
        let bad = [
            req("moonwalk"),
            GaitRequest {
                params: vec![("A".into(), f64::NAN)],
                ..req("caterpillar")
            },
            GaitRequest {
                params: vec![("A".into(), 500.0)],
                ..req("caterpillar")
            },
            GaitRequest {
                direction: 5,
                ..req("caterpillar")
            },
            GaitRequest {
                speed_scale: -1.0,
                ..req("caterpillar")
            },
            GaitRequest {
                transition_s: f64::INFINITY,
                ..req("caterpillar")
            },
        ];
        for r in &bad {
            assert!(d.request(r).is_err(), "{r:?} accepted");
        }
        let after = d.status();
        assert_eq!((before.gait, before.params), (after.gait, after.params));
        assert!(!after.holding);
    }

    #[test]
    fn a_request_changes_gait_speed_and_direction_and_a_repeat_is_a_heartbeat() {
        let mut d = driver("py:16");
        let r = GaitRequest {
            speed_scale: 2.0,
            direction: -1,
            transition_s: 0.5,
            ..req("sidewinding")
        };
        d.request(&r).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.status().gait, "sidewinding");
        for _ in 0..50 {
            d.tick(0.01);
        }
        let phase = d.status().phase;
        d.request(&r).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.status().phase, phase);
        let base = d.build("sidewinding", &[]).unwrap_or_else(|e| panic!("{e}"));
        assert!((d.status().period_s - base.generator.period_s / 2.0).abs() < 1e-12);
        for _ in 0..300 {
            d.tick(0.01);
        }
        assert!(d.output().iter().any(|x| x.abs() > 0.1));
        d.request(&GaitRequest {
            stop: true,
            ..Default::default()
        })
        .unwrap_or_else(|e| panic!("{e}"));
        let held = d.tick(0.01).to_vec();
        assert_eq!(d.tick(0.01), held.as_slice());
        assert!(d.status().holding);
    }
}
