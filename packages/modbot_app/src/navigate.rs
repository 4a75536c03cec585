//! The reactive loop without middleware: modbot_planner's [`Executive`] steering a robot
//! through the [`GaitDriver`] on the embedded simulator, stepped together in one process.
//! It is what executive_node, gait_node and sim_node do over ROS (odometry of base_link in,
//! gait requests out, joint targets at the control rate), so the steering can be tested and
//! tuned on the physics without a network; `tests/mission.rs` of modbot_ros runs the same
//! loop over DDS.

use modbot_core::{LinkTree, Topology};
use modbot_gaits::GaitLibrary;
use modbot_planner::capabilities::Capabilities;
use modbot_planner::executive::{Direction, Drive, Executive, ExecutiveSettings, TargetRow, TurnModel};
use modbot_planner::sequencer::Pose2;
use modbot_planner::strategic::Action;
use nalgebra::Isometry3;

use crate::gait_driver::{GaitDriver, GaitRequest};
use crate::session::{Interface, SimSession};

/// The gait request for an executive's drive: what executive_node sends as a
/// `modbot_msgs/GaitCommand` (modbot_ros's `convert::gait_command` is this request on the
/// wire), so the loop here and the nodes' ask for the same. The fields a drive does not set
/// keep a GaitCommand's defaults: speed scale 1, the library's transition.
pub fn gait_request(d: &Drive) -> GaitRequest {
    let defaults = GaitRequest {
        speed_scale: 1.0,
        transition_s: -1.0,
        ..GaitRequest::default()
    };
    match d {
        Drive::Stop => GaitRequest { stop: true, ..defaults },
        Drive::Gait {
            gait,
            params,
            direction,
        } => GaitRequest {
            gait: gait.clone(),
            params: params.clone(),
            direction: match direction {
                Direction::AsGiven => 0,
                Direction::Forward => 1,
                Direction::Reverse => -1,
            },
            ..defaults
        },
    }
}

/// The pose of a robot's body on the ground from its base pose and joint angles (what
/// odometry and joint_states report): the mean of its links' origins and the circular mean
/// of their headings. The tail module of a snake (its base_link) wags with the gait and,
/// under `turning`, points off the direction of travel by half the body's arc; the body's
/// mean heading is the tangent of the arc at its middle, the direction the body travels
/// (decision record 0033).
#[derive(Debug, Clone, PartialEq)]
pub struct BodyFrame {
    tree: LinkTree,
    names: Vec<String>,
}

impl BodyFrame {
    /// The body of `topology`.
    pub fn new(topology: &Topology) -> BodyFrame {
        BodyFrame {
            tree: LinkTree::new(topology),
            names: topology.joint_names(),
        }
    }

    /// The robot's joints, in the order [`BodyFrame::pose`] takes their angles.
    pub fn joint_names(&self) -> &[String] {
        &self.names
    }

    /// The body's pose with base_link at `base` (world) and joint angles `q` (joint order);
    /// an error names a wrong count or a non-finite angle.
    pub fn pose(&self, base: &Isometry3<f64>, q: &[f64]) -> Result<Pose2, String> {
        let poses = self.tree.forward(q, base).map_err(|e| e.to_string())?;
        let links = self.tree.link_frames(&poses).into_iter().map(|f| Pose2 {
            x: f.translation.x,
            y: f.translation.y,
            yaw: modbot_sim::heading_of(&f),
        });
        Pose2::mean(links, 0.0).ok_or_else(|| "the robot has no links".to_string())
    }
}

/// The turning model of a pitch-yaw chain under `library`'s `turning` gait: the radius of
/// formula (5.1) (`predict::turning_radius`) for its length with the joints at zero, its
/// module count and the gait's A_v and Δφ_v. An error when the robot has no `turning` gait.
pub fn turn_model(topology: &Topology, library: &GaitLibrary) -> Result<TurnModel, String> {
    let built = library
        .build("turning", topology, &[])
        .map_err(|e| format!("no turning model for `{}`: {e}", topology.name))?;
    let get = |k: &str| {
        built
            .params
            .iter()
            .find(|(n, _)| n.as_str() == k)
            .map(|(_, v)| *v)
            .ok_or_else(|| format!("the turning gait has no `{k}`"))
    };
    let (lo, hi) = LinkTree::new(topology).bounds_at_zero(topology);
    let modules = topology.len();
    let radius = modbot_gaits::predict::turning_radius(
        get("amplitude_v_deg")?,
        get("phase_diff_v_deg")?,
        1.0,
        modules,
        (hi.x - lo.x) / modules as f64,
    );
    Ok(TurnModel::through(1.0, radius))
}

/// The loop's rates (the shipped nodes' defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoopRates {
    /// Joint targets per second (gait_node's `rate_hz`).
    pub control_hz: f64,
    /// Executive updates per second (executive_node's `rate_hz`); odometry arrives at each.
    pub executive_hz: f64,
}

impl Default for LoopRates {
    fn default() -> Self {
        LoopRates {
            control_hz: 100.0,
            executive_hz: 10.0,
        }
    }
}

/// How a [`Navigator::execute`] ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The executive reported the plan done.
    pub done: bool,
    /// The body's pose at the end ([`BodyFrame`]).
    pub pose: Pose2,
    /// Simulated time spent, s.
    pub time_s: f64,
    /// Every status the executive reported, in order.
    pub statuses: Vec<String>,
    /// The body's pose at each executive update (t, pose).
    pub track: Vec<(f64, Pose2)>,
}

/// A robot on the simulator under an executive.
pub struct Navigator {
    /// The robot and its simulator.
    pub session: SimSession,
    driver: GaitDriver,
    executive: Executive,
    base: usize,
    body: BodyFrame,
    rates: LoopRates,
    tick: u64,
}

impl std::fmt::Debug for Navigator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Navigator")
            .field("session", &self.session)
            .field("executive", &self.executive.status())
            .finish()
    }
}

impl Navigator {
    /// The executive of `settings` (its configuration a key of `caps`) over `session`'s
    /// robot, with the gaits of `library`.
    pub fn new(
        session: SimSession,
        library: GaitLibrary,
        settings: &ExecutiveSettings,
        caps: &Capabilities,
        rates: LoopRates,
    ) -> Result<Navigator, String> {
        for (name, v) in [("control_hz", rates.control_hz), ("executive_hz", rates.executive_hz)] {
            if !modbot_sim::is_control_rate(v) {
                return Err(format!(
                    "{name} = {v}: expected a rate in (0, {}] Hz",
                    modbot_sim::MAX_CONTROL_RATE_HZ
                ));
            }
        }
        let executive = Executive::new(settings, caps).map_err(|e| e.to_string())?;
        let base = session.base_link();
        let driver = GaitDriver::new(session.topology.clone(), library);
        let body = BodyFrame::new(&session.topology);
        if body.joint_names() != session.sim.joint_names() {
            return Err("the simulator's joints are not the robot's".into());
        }
        Ok(Navigator {
            session,
            driver,
            executive,
            base,
            body,
            rates,
            tick: 0,
        })
    }

    /// The body's pose ([`BodyFrame`]) from base_link's pose and the joint angles, as
    /// executive_node computes it from odometry and joint_states: what the executive steers.
    pub fn body_pose(&self) -> Result<Pose2, String> {
        let base = self.session.sim.link_poses()[self.base];
        self.body.pose(&base, &self.session.sim.joint_positions())
    }

    /// Simulated time, s.
    pub fn time(&self) -> f64 {
        self.session.sim.time()
    }

    /// A one-row plan that drives this robot's configuration to `goal` (x, y).
    pub fn row_to(&self, configuration: &str, goal: [f64; 2]) -> TargetRow {
        TargetRow {
            configuration: configuration.into(),
            ability: false,
            action: Action::Drive,
            gait: String::new(),
            target: Pose2 {
                x: goal[0],
                y: goal[1],
                yaw: 0.0,
            },
            path: Vec::new(),
        }
    }

    /// Runs `plan` until the executive reports it done, asks for a replan, or `timeout_s`
    /// of simulated time passes; the robot holds its pose at the end.
    pub fn execute(&mut self, plan: &[TargetRow], timeout_s: f64) -> Result<Outcome, String> {
        if !(timeout_s.is_finite() && timeout_s > 0.0) {
            return Err(format!("timeout {timeout_s} s: expected a positive time"));
        }
        self.executive.set_plan(plan).map_err(|e| e.to_string())?;
        let dt = 1.0 / self.rates.control_hz;
        let every = (self.rates.control_hz / self.rates.executive_hz).round().max(1.0) as u64;
        let start = self.time();
        let mut out = Outcome {
            done: false,
            pose: self.body_pose()?,
            time_s: 0.0,
            statuses: Vec::new(),
            track: Vec::new(),
        };
        while self.time() - start < timeout_s {
            if self.tick % every == 0 {
                let (now, body) = (self.time(), self.body_pose()?);
                out.track.push((now, body));
                self.executive.odometry(now, body);
                let u = self.executive.update(now);
                if let Some(d) = &u.send {
                    self.driver.request(&gait_request(d))?;
                }
                if let Some(s) = u.status {
                    let finished = s.starts_with("done");
                    out.statuses.push(s);
                    if finished {
                        out.done = true;
                        break;
                    }
                }
                if u.replan_to.is_some() {
                    break;
                }
            }
            self.tick += 1;
            if let Some(c) = self.driver.step(dt) {
                let c = c?;
                self.session
                    .command(Interface::Position, &c.position)
                    .map_err(|e| e.to_string())?;
                if !c.velocity.is_empty() {
                    self.session
                        .command(Interface::Velocity, &c.velocity)
                        .map_err(|e| e.to_string())?;
                }
            }
            // The loop keeps its own clock (ticks × dt), as the nodes do.
            let t = self.tick as f64 * dt;
            self.session.sim.advance_to(t).map_err(|e| e.to_string())?;
        }
        self.driver.stop();
        out.pose = self.body_pose()?;
        out.time_s = self.time() - start;
        Ok(out)
    }
}
