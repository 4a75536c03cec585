//! Reassembly (seed-000 §5.2; decision records 0048, 0059) as a state machine on the robot
//! interface: a configuration puts every FrontJoint back to a wheel and every foot to rest,
//! its legs (Roles #3…#6) open their connectors and take [`BACK_OUT_STEPS`] high steps out
//! of it (backward leaving the quadruped, forward leaving the wheeled vehicle), and the
//! modules assemble the new configuration with Roles #1 and #2 still joined
//! ([`Assembly`] with Role#2 connected).

use std::collections::BTreeMap;
use std::fmt;

use modbot_gaits::modular::ModuleJoints;
use modbot_gaits::modular::single::{HeadingBands, Inchworm, InchwormGait};
use modbot_gaits::{Controller, Observation};
use modbot_planner::assembly::role_target;
use nalgebra::{Isometry3, Translation3};

use crate::assembly::{Assembly, AssemblyOrder, AssemblyState};
use crate::interface::{ControlMode, Modules, Monotonic};

/// Steps the leaving modules take out of the configuration (§5.2).
pub const BACK_OUT_STEPS: usize = 3;
/// The feet are down when both foot joints of every module are within this of 0, deg (§5.2).
pub const FEET_DOWN_DEG: f64 = 0.1;
/// After this long the feet are down within [`crate::docking::SETTLED_DEG`] instead, s: a
/// loaded servo stands off its target by its steady-state error (seed 3's held 0.11° for
/// 20 s), and a real one resolves 0.088° at best (decision record 0060).
pub const FEET_DOWN_GRACE_S: f64 = 2.0;
/// Putting the feet down, and backing out, may each take this long, s.
pub const REASSEMBLY_STEP_TIMEOUT_S: f64 = 20.0;

/// Where the reassembly is.
#[derive(Debug, Clone, PartialEq)]
pub enum ReassemblyState {
    /// Not ticked yet.
    Idle,
    /// Every FrontJoint a wheel again, every foot going to rest.
    FeetDown,
    /// The legs stepping out: steps each of Roles #3…#6 has taken.
    BackingOut {
        /// Steps of Roles #3…#6.
        steps: [usize; 4],
    },
    /// The new configuration assembling.
    Assembling(AssemblyState),
    /// Done.
    Assembled,
    /// Ended: the role concerned (0 for none) and why.
    Failed {
        /// The role, 0 for none.
        role: usize,
        /// Why.
        reason: String,
    },
}

impl fmt::Display for ReassemblyState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReassemblyState::Idle => write!(f, "idle"),
            ReassemblyState::FeetDown => write!(f, "feet down"),
            ReassemblyState::BackingOut { steps } => write!(f, "backing out ({steps:?} steps)"),
            ReassemblyState::Assembling(a) => write!(f, "assembling: {a}"),
            ReassemblyState::Assembled => write!(f, "assembled"),
            ReassemblyState::Failed { role: 0, reason } => write!(f, "failed: {reason}"),
            ReassemblyState::Failed { role, reason } => write!(f, "failed, Role#{role}: {reason}"),
        }
    }
}

/// A reassembly.
pub struct Reassembly {
    from: String,
    order: AssemblyOrder,
    walkers: Vec<(usize, Inchworm)>,
    assembly: Option<Assembly>,
    since: f64,
    last_s: Option<f64>,
    clock: Monotonic,
    detached_s: Option<f64>,
    state: ReassemblyState,
}

type Failure = (usize, String);

impl Reassembly {
    /// The modules of configuration `from` (with roles `order.roles`) reassembling into
    /// `order.configuration`; Role#2 stays joined to Role#1 (added to `order.connected`).
    pub fn new(from: &str, mut order: AssemblyOrder) -> Result<Reassembly, String> {
        if from == order.configuration {
            return Err(format!("the modules are already the {from}"));
        }
        role_target(from, 3).map_err(|e| e.to_string())?;
        if !order.connected.contains(&2) {
            order.connected.push(2);
        }
        Ok(Reassembly {
            from: from.to_string(),
            order,
            walkers: Vec::new(),
            assembly: None,
            since: f64::NAN,
            last_s: None,
            clock: Monotonic::default(),
            detached_s: None,
            state: ReassemblyState::Idle,
        })
    }

    /// Where it is.
    pub fn state(&self) -> &ReassemblyState {
        &self.state
    }

    /// The assembly of the new configuration, once it has begun.
    pub fn assembly(&self) -> Option<&Assembly> {
        self.assembly.as_ref()
    }

    /// The assembly of the new configuration, taken out (once reassembled).
    pub fn into_assembly(self) -> Option<Assembly> {
        self.assembly
    }

    /// When Roles #3…#6 let go, s.
    pub fn detached_s(&self) -> Option<f64> {
        self.detached_s
    }

    /// One tick on `fleet`.
    pub fn tick(&mut self, fleet: &mut dyn Modules) -> &ReassemblyState {
        if matches!(self.state, ReassemblyState::Assembled | ReassemblyState::Failed { .. }) {
            return &self.state;
        }
        if let Err((role, reason)) = self.advance(fleet) {
            self.state = ReassemblyState::Failed { role, reason };
        }
        &self.state
    }

    fn advance(&mut self, fleet: &mut dyn Modules) -> Result<(), Failure> {
        let roles = self.order.roles;
        let now = fleet
            .module_ref(roles[0])
            .map_err(|e| (1, e.to_string()))
            .and_then(|io| self.clock.check(io.now()).map_err(|e| (1, e.to_string())))?;
        let dt = self.last_s.map_or(0.01, |l| (now - l).max(1e-6));
        self.last_s = Some(now);
        if let Some(a) = self.assembly.as_mut() {
            self.state = match a.tick(fleet).clone() {
                AssemblyState::Assembled => ReassemblyState::Assembled,
                AssemblyState::Failed { role, reason } => return Err((role, reason)),
                other => ReassemblyState::Assembling(other),
            };
            return Ok(());
        }
        match self.state {
            ReassemblyState::Idle => {
                // Every FrontJoint a wheel again.
                for (r, &m) in roles.iter().enumerate() {
                    let io = fleet.module(m).map_err(|e| (r + 1, e.to_string()))?;
                    let j = joints_of(io.joint_names()).map_err(|e| (r + 1, e))?;
                    io.switch_mode(j.fj, ControlMode::Velocity)
                        .map_err(|e| (r + 1, e.to_string()))?;
                }
                self.since = now;
                self.state = ReassemblyState::FeetDown;
                self.hold_all(fleet, &[0, 1, 2, 3, 4, 5])
            }
            ReassemblyState::FeetDown => self.feet_down(fleet, now),
            ReassemblyState::BackingOut { .. } => self.back_out(fleet, now, dt),
            _ => Ok(()),
        }
    }

    /// Holds the modules of roles `which` (0-based) at rest.
    fn hold_all(&self, fleet: &mut dyn Modules, which: &[usize]) -> Result<(), Failure> {
        for &r in which {
            let io = fleet.module(self.order.roles[r]).map_err(|e| (r + 1, e.to_string()))?;
            io.command(&crate::hold(io.control_modes(), None))
                .map_err(|e| (r + 1, e.to_string()))?;
        }
        Ok(())
    }

    fn feet_down(&mut self, fleet: &mut dyn Modules, now: f64) -> Result<(), Failure> {
        self.hold_all(fleet, &[0, 1, 2, 3, 4, 5])?;
        // The first foot joint (role, name, angle) not yet within the tolerance of 0.
        let tolerance = if now - self.since > FEET_DOWN_GRACE_S {
            crate::docking::SETTLED_DEG
        } else {
            FEET_DOWN_DEG
        };
        let mut up: Option<(usize, String, f64)> = None;
        for (r, &m) in self.order.roles.iter().enumerate() {
            let io = fleet.module_ref(m).map_err(|e| (r + 1, e.to_string()))?;
            let j = joints_of(io.joint_names()).map_err(|e| (r + 1, e))?;
            let q = io.joint_states().map_err(|e| (r + 1, e.to_string()))?.position;
            if up.is_none()
                && let Some(&k) = [j.bj1, j.bj2].iter().find(|&&k| q[k].abs() >= tolerance.to_radians())
            {
                up = Some((r + 1, io.joint_names()[k].clone(), q[k].to_degrees()));
            }
        }
        if let Some((role, joint, deg)) = up {
            if now - self.since > REASSEMBLY_STEP_TIMEOUT_S {
                return Err((
                    role,
                    format!(
                        "the feet did not come to rest within {tolerance}° in {REASSEMBLY_STEP_TIMEOUT_S} s ({joint} at {deg:.2}°)"
                    ),
                ));
            }
            return Ok(());
        }
        // Roles #3–#6 let go.
        for role in 3..=6 {
            let t = role_target(&self.from, role).map_err(|e| (role, e.to_string()))?;
            let io = fleet
                .module(self.order.roles[role - 1])
                .map_err(|e| (role, e.to_string()))?;
            io.release(t.port).map_err(|e| (role, e.to_string()))?;
        }
        self.detached_s = Some(now);
        // Three high steps out, each module holding its own heading.
        let gait = if self.from == "quadruped" {
            InchwormGait::BwdHigh
        } else {
            InchwormGait::FwdHigh
        };
        self.walkers.clear();
        for role in 3..=6 {
            let io = fleet
                .module_ref(self.order.roles[role - 1])
                .map_err(|e| (role, e.to_string()))?;
            let j = joints_of(io.joint_names()).map_err(|e| (role, e))?;
            let n = io.joint_names().len();
            self.walkers
                .push((role, Inchworm::new(j, n, gait, 0.0, HeadingBands::default())));
        }
        self.since = now;
        self.state = ReassemblyState::BackingOut { steps: [0; 4] };
        Ok(())
    }

    fn back_out(&mut self, fleet: &mut dyn Modules, now: f64, dt: f64) -> Result<(), Failure> {
        self.hold_all(fleet, &[0, 1])?;
        let sensors = BTreeMap::new();
        let mut steps = [0; 4];
        for (k, (role, w)) in self.walkers.iter_mut().enumerate() {
            let io = fleet
                .module(self.order.roles[*role - 1])
                .map_err(|e| (*role, e.to_string()))?;
            steps[k] = w.completed_cycles();
            if steps[k] >= BACK_OUT_STEPS {
                io.command(&crate::hold(io.control_modes(), None))
                    .map_err(|e| (*role, e.to_string()))?;
                continue;
            }
            let js = io.joint_states().map_err(|e| (*role, e.to_string()))?;
            let imu = io.imu().map_err(|e| (*role, e.to_string()))?;
            let obs = Observation {
                time: now - self.since,
                positions: &js.position,
                velocities: &js.velocity,
                base: Isometry3::from_parts(Translation3::identity(), imu.orientation),
                sensors: &sensors,
            };
            let mut out = crate::hold(io.control_modes(), None);
            w.step(dt, &obs, &mut out);
            io.command(&out).map_err(|e| (*role, e.to_string()))?;
        }
        self.state = ReassemblyState::BackingOut { steps };
        if steps.iter().all(|&s| s >= BACK_OUT_STEPS) {
            self.assembly = Some(Assembly::new(&*fleet, self.order.clone()).map_err(|e| (0, e))?);
            self.state = ReassemblyState::Assembling(AssemblyState::Idle);
        } else if now - self.since > REASSEMBLY_STEP_TIMEOUT_S {
            return Err((
                0,
                format!(
                    "the leaving modules did not take {BACK_OUT_STEPS} steps in {REASSEMBLY_STEP_TIMEOUT_S} s: {steps:?}"
                ),
            ));
        }
        Ok(())
    }
}

fn joints_of(names: &[String]) -> Result<ModuleJoints, String> {
    ModuleJoints::find("m1", names).ok_or_else(|| "no wheel-foot joints (m1_front_joint …)".to_string())
}
