//! Docking (seed-000 §5.2, the assembly's stage 2; decision records 0048, 0050, 0058) as a
//! state machine on the robot interface: a lone wheel-foot module at its staging point walks
//! to its pre-connection point guided by its port's **docking sensor** (the partner's port
//! face in its own port's frame), rests its foot, and closes its **connector**, which latches
//! if the physics has brought the faces within its capture range.
//!
//! - **Frame.** Each tick the partner's face is carried from the port frame into world axes
//!   at the module's own foot (the port's pose in the foot from the module's kinematic model
//!   at its joints' present angles, the IMU's attitude for the foot's); the pre-connection pose, 1 cm
//!   short of the face, is computed there ([`pre_connection`]) and the position controller
//!   (`SingleGoto`, Table 3.15) walks to it with the module at the origin of that frame. No
//!   position is read from anywhere: the goal is always relative.
//! - **The catch.** Between two steps (both foot joints within 1° of rest) with the face
//!   within 2 cm and 8°, or once the controller is done, the module rests and engages.
//! - **The latch.** `Latched`: done. `Failed`: it holds and engages again until
//!   [`LATCH_RETRY_S`] has passed, then ends with the connector's reason.
//! - **Lost.** While the sensor sees no face the module walks on to the last goal it gave
//!   (relative to the foot, which a pivot turn keeps in place); after [`LOST_S`] it stands;
//!   after [`GIVE_UP_S`] the docking ends, naming the sensor.

use std::collections::BTreeMap;
use std::fmt;

use modbot_core::catalog::PortDef;
use modbot_core::{LinkTree, ModuleCatalog};
use modbot_gaits::modular::single::{Direction, GotoPhase, HeadingBands, SingleGoto, StepTable};
use modbot_gaits::modular::{Goal, ModuleJoints, wrap_rad};
use modbot_gaits::{Controller, Observation};
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

use crate::interface::{ConnectorState, JointTarget, Module, Monotonic, fresh};
use crate::mast::WheelfootModel;

/// The pre-connection point stops this far short of the partner's face, m (record 0048).
pub const STANDOFF_M: f64 = 0.01;
/// The latch is tried between two steps once the faces are this close, m (record 0048).
pub const CATCH_M: f64 = 0.02;
/// ... and this well aligned, deg (the latch's capture angle).
pub const CATCH_DEG: f64 = 8.0;
/// A pre-connection point this far off the module's line, or less, is walked to straight
/// ([`straight_in`]), m: within the latch's 3 cm capture with 5 mm to spare.
pub const STRAIGHT_IN_M: f64 = 0.025;
/// ... and its heading within this of the point's, deg: a turn about the foot swings the
/// port (0.17 m out on the wheel) by 3 mm a degree.
pub const STRAIGHT_IN_DEG: f64 = 3.0;
/// A face lost nearer than this is latched at where it was, m (the latch's capture
/// range and a centimetre: the latch decides).
pub const LATCH_TRY_M: f64 = 0.04;
/// A module near its point but across the line backs out to this far out along it, m
/// ([`approach_goal`]).
pub const BACK_OFF_M: f64 = 0.14;
/// Stopped farther than [`CATCH_M`] from the face at the end of the last stretch, the module
/// takes it again at most this many times before it latches where it is.
pub const NUDGES: usize = 2;
/// The last stretch stops this far short of the face, m ([`approach_goal`]).
pub const FINAL_STANDOFF_M: f64 = 0.005;
/// A module near its point counts as near until this much farther out, m ([`approach_goal`]).
pub const NEAR_HYSTERESIS_M: f64 = 0.04;
/// The approach aims this far ahead along the approach line, m ([`approach_goal`]).
pub const LOOKAHEAD_M: f64 = 0.08;
/// The foot is at rest when both its joints are within this of 0, deg.
pub const SETTLED_DEG: f64 = 1.0;
/// A refused latch is engaged again for this long, s (record 0049).
pub const LATCH_RETRY_S: f64 = 2.0;
/// Without a face for this long the module stands, s; until then it walks on to the last
/// goal the sensor gave (the turn at the pre-connection point pivots the port out of the
/// sensor's cone, about the foot, which the goal is relative to).
pub const LOST_S: f64 = 2.0;
/// Without a face for this long the docking ends, s.
pub const GIVE_UP_S: f64 = 5.0;
/// The walk may take this long, s (the assembly's stage timeout).
pub const TIMEOUT_S: f64 = 180.0;
/// The foot may take this long to come to rest before the latch, s.
pub const SETTLE_TIMEOUT_S: f64 = 5.0;
/// A connector that neither latches nor fails in this long has failed, s.
pub const LATCH_TIMEOUT_S: f64 = 5.0;

/// The pre-connection pose (x, y, yaw) of a module whose port is at `own_in_foot` in its
/// foot frame, for the partner's face at `partner` (same frame as the result), `STANDOFF_M`
/// short of it along the face's axis.
pub fn pre_connection(partner: &Isometry3<f64>, own_in_foot: &Isometry3<f64>) -> [f64; 3] {
    let axis = partner.rotation * Vector3::x();
    let psi = axis.y.atan2(axis.x);
    let own_axis = own_in_foot.rotation * Vector3::x();
    let yaw = psi + std::f64::consts::PI - own_axis.y.atan2(own_axis.x);
    let port = partner.translation.vector + axis * STANDOFF_M;
    let (c, s) = (yaw.cos(), yaw.sin());
    let o = own_in_foot.translation.vector;
    [
        port.x - (c * o.x - s * o.y),
        port.y - (s * o.x + c * o.y),
        wrap_rad(yaw),
    ]
}

/// A port of a lone wheel-foot module, placed by the module's kinematic model.
#[derive(Debug, Clone)]
pub struct PortModel {
    tree: LinkTree,
    /// Model joint → the module's joint index (set once the module's names are known).
    joint_map: Vec<usize>,
    model_joints: Vec<String>,
    foot: usize,
    link: usize,
    frame: Isometry3<f64>,
}

/// The catalog's wheel-foot module's ports, and port `port` among them.
fn wheelfoot_port(port: &str) -> Result<(BTreeMap<String, PortDef>, PortDef), String> {
    let catalog = ModuleCatalog::builtin();
    let kind = catalog.modules.get("wheelfoot").ok_or("no `wheelfoot` module kind")?;
    let p = kind
        .ports
        .get(port)
        .ok_or_else(|| format!("the wheel-foot module has no port `{port}`"))?;
    Ok((kind.ports.clone(), p.clone()))
}

impl PortModel {
    /// Port `port` of the catalog's wheel-foot module.
    pub fn new(port: &str) -> Result<PortModel, String> {
        let (_, p) = wheelfoot_port(port)?;
        let model = WheelfootModel::new()?;
        let (foot, link) = (model.link("m1_foot")?, model.link(&format!("m1_{}", p.link))?);
        Ok(PortModel {
            joint_map: (0..model.joints.len()).collect(),
            model_joints: model.joints.clone(),
            tree: model.tree,
            foot,
            link,
            frame: modbot_core::catalog::pose_deg(p.xyz, p.rpy_deg),
        })
    }

    /// Reads the module's joints by name from now on (`joint_names`, command order).
    pub fn map_joints(&mut self, joint_names: &[String]) -> Result<(), String> {
        self.joint_map = WheelfootModel::new()?.joint_map(joint_names)?;
        Ok(())
    }

    /// The port's pose in the foot frame with the module's joints at `q` (command order; the
    /// rest pose when `None`).
    pub fn in_foot(&self, q: Option<&[f64]>) -> Result<Isometry3<f64>, String> {
        let qm: Vec<f64> = match q {
            Some(q) => self.joint_map.iter().map(|&k| q[k]).collect(),
            None => vec![0.0; self.model_joints.len()],
        };
        let frames = self.tree.link_frames(
            &self
                .tree
                .forward(&qm, &Isometry3::identity())
                .map_err(|e| e.to_string())?,
        );
        Ok(frames[self.foot].inverse() * frames[self.link] * self.frame)
    }
}

/// Every name of the face `module/port` is known by: the catalog names some faces twice
/// (the wheel-foot's foot port, BF and BS, one face for two configurations), and a binding
/// reports a face by one of them.
pub fn face_names(face: &str) -> Result<Vec<String>, String> {
    let (module, port) = face
        .split_once('/')
        .ok_or_else(|| format!("`{face}`: expected MODULE/PORT"))?;
    let (ports, p) = wheelfoot_port(port).map_err(|e| format!("`{face}`: {e}"))?;
    Ok(ports
        .iter()
        .filter(|(_, q)| q.link == p.link && q.xyz == p.xyz && q.rpy_deg == p.rpy_deg)
        .map(|(name, _)| format!("{module}/{name}"))
        .collect())
}

/// A port's pose in a lone wheel-foot module's foot frame with every joint at 0.
pub fn port_in_foot(port: &str) -> Result<Isometry3<f64>, String> {
    PortModel::new(port)?.in_foot(None)
}

/// The goal (relative to the foot, world axes) the module walks to: `goal` itself, or — when
/// the module already faces the goal's heading within [`CATCH_DEG`] and the goal is off its
/// line by no more than [`STRAIGHT_IN_M`] — the point of its own line abreast of the goal,
/// at its own heading. A module a few centimetres short of its pre-connection point and 2 cm
/// to the side of it would otherwise turn to face the point (a goal 40° off its heading),
/// swing its port out of the sensor's cone and lose the face (session 32's mission, Role#4);
/// straight in, its port stops within the latch's capture range (record 0059).
pub fn straight_in(goal: Goal, heading: f64) -> Goal {
    let (c, s) = (heading.cos(), heading.sin());
    let along = goal.x * c + goal.y * s;
    let lateral = -goal.x * s + goal.y * c;
    if lateral.abs() <= STRAIGHT_IN_M && wrap_rad(goal.yaw - heading).abs() <= STRAIGHT_IN_DEG.to_radians() {
        // At the goal's heading: the last turn, about the foot, swings the port by under
        // a centimetre.
        Goal {
            x: along * c,
            y: along * s,
            yaw: goal.yaw,
        }
    } else {
        goal
    }
}

/// A leg of the approach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leg {
    /// Walking along the approach line towards the point.
    Pursue,
    /// Near the point but too far across the line: backing out along it.
    BackOff,
    /// Near the point, turning on the spot to its heading first.
    Align,
    /// Near the point and at its heading: straight in.
    Final,
}

/// The goal the module walks to now, and the leg, for its pre-connection point `goal`
/// (relative to the foot, world axes) on the approach line through it along the partner
/// face's outward `axis`:
/// - farther than [`LOOKAHEAD_M`] along the line: a point on the line [`LOOKAHEAD_M`] nearer
///   the face than the module's own place along it, at the point's heading (aimed straight at
///   the point, a module a few centimetres short of it and a few to the side turned up to
///   40°, swinging its port out of the sensor's cone; on the line ahead it turns by the
///   lateral error over the lookahead);
/// - nearer, more than [`STRAIGHT_IN_M`] across the line: a point on the line
///   [`BACK_OFF_M`] out from the point (from there the pursuit closes the gap);
/// - nearer, with its heading more than [`STRAIGHT_IN_DEG`] off the point's: a turn on the
///   spot to it (walking first and turning at the end swung the port, 0.17 m out, by 3 mm a
///   degree, out of the latch's reach);
/// - then the point, [`FINAL_STANDOFF_M`] from the face, straight in ([`straight_in`]).
pub fn approach_goal(goal: Goal, axis: [f64; 2], heading: f64, leg: Leg) -> (Goal, Leg) {
    // The module (at the origin) relative to the point, along the line.
    let out = -(goal.x * axis[0] + goal.y * axis[1]);
    let carrot = out - LOOKAHEAD_M;
    // Near once, it stays near until [`NEAR_HYSTERESIS_M`] farther out (a step sways the
    // reading by a centimetre or two, and each change of leg starts the controller afresh).
    let near = if leg == Leg::Pursue { 0.0 } else { NEAR_HYSTERESIS_M };
    if carrot > near {
        let pursue = Goal {
            x: goal.x + axis[0] * carrot,
            y: goal.y + axis[1] * carrot,
            yaw: goal.yaw,
        };
        return (pursue, Leg::Pursue);
    }
    // The module across the line: too far aside to go straight in, it backs out along the
    // line to where the pursuit can close the gap.
    let lateral = goal.x * axis[1] - goal.y * axis[0];
    if lateral.abs() > STRAIGHT_IN_M {
        let back = Goal {
            x: goal.x + axis[0] * BACK_OFF_M,
            y: goal.y + axis[1] * BACK_OFF_M,
            yaw: goal.yaw,
        };
        return (back, Leg::BackOff);
    }
    if wrap_rad(goal.yaw - heading).abs() > STRAIGHT_IN_DEG.to_radians() {
        let turn = Goal {
            x: 0.0,
            y: 0.0,
            yaw: goal.yaw,
        };
        return (turn, Leg::Align);
    }
    // The controller stops up to one low step (1.8 cm forward) short of its goal: 1 cm from
    // the face that left the port up to 2.8 cm from it, beyond the latch's 3 cm with a little
    // to the side; the last stretch aims [`FINAL_STANDOFF_M`] from the face.
    let closer = STANDOFF_M - FINAL_STANDOFF_M;
    let last = Goal {
        x: goal.x - axis[0] * closer,
        y: goal.y - axis[1] * closer,
        yaw: goal.yaw,
    };
    (straight_in(last, heading), Leg::Final)
}

/// Whether port `port` of the wheel-foot module is on its wheel: a keyless face, that
/// latches at whatever roll it meets its partner with (record 0048).
pub fn on_wheel(port: &str) -> Result<bool, String> {
    Ok(wheelfoot_port(port)?.1.link == "wheel_front")
}

/// The roll a keyless face latches at, deg, from the partner's face in the own port's frame
/// (`face`, the docking sensor's reading): the twist about the port axis between the face and
/// its mate with no roll, of the sign that leaves no residual twist (the simulator's
/// `port_fit` convention, swing–twist about the ideal axis; record 0048).
pub fn wheel_roll(face: &Isometry3<f64>) -> f64 {
    // The own port's rotation in the partner's frame; the mate with roll r is
    // Rx(r)·Rz(π) there, and the error is its inverse times the own port's.
    let own_in_partner = face.rotation.inverse();
    let twist = |roll_deg: f64| {
        let ideal = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), roll_deg.to_radians())
            * UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f64::consts::PI);
        let q = (ideal.inverse() * own_in_partner).into_inner();
        wrap_rad(2.0 * q.i.atan2(q.w)).to_degrees()
    };
    let t = twist(0.0);
    if twist(t).abs() <= twist(-t).abs() { t } else { -t }
}

/// Where the docking is.
#[derive(Debug, Clone, PartialEq)]
pub enum DockingState {
    /// Not ticked yet.
    Idle,
    /// Walking to the pre-connection point: the face's distance, m.
    Approaching {
        /// Distance between the two faces, m.
        gap_m: f64,
    },
    /// Standing: the docking sensor has lost the face.
    Searching,
    /// Resting the foot before the latch.
    Settling,
    /// The connector is closing.
    Latching,
    /// Latched to the partner.
    Docked {
        /// The partner's face (`m1/L`).
        partner: String,
    },
    /// Ended, with the reason.
    Failed(String),
}

impl fmt::Display for DockingState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DockingState::Idle => write!(f, "idle"),
            DockingState::Approaching { gap_m } => write!(f, "approaching ({gap_m:.3} m to the face)"),
            DockingState::Searching => write!(f, "searching for the partner's face"),
            DockingState::Settling => write!(f, "settling"),
            DockingState::Latching => write!(f, "latching"),
            DockingState::Docked { partner } => write!(f, "docked to {partner}"),
            DockingState::Failed(r) => write!(f, "failed: {r}"),
        }
    }
}

/// What a docking is asked to do.
#[derive(Debug, Clone)]
pub struct DockingOrder {
    /// The module's own port.
    pub port: String,
    /// The partner's face it is to meet (`m1/L`): other faces the sensor may see are ignored.
    pub partner: String,
    /// A forced walking direction (the assembly's backward approaches), or the least time.
    pub forced: Option<Direction>,
    /// The module's inchworm steps and cycle times on this ground.
    pub table: StepTable,
}

/// One module docking.
pub struct Docking {
    order: DockingOrder,
    /// The partner face's names (an alias is the same face).
    partner_names: Vec<String>,
    /// When the current state began, s.
    state_since: f64,
    port: PortModel,
    /// The port in the foot at rest, where it is at the pre-connection point.
    own_in_foot: Isometry3<f64>,
    joints: Option<ModuleJoints>,
    goto: Option<SingleGoto>,
    clock: Monotonic,
    start_s: Option<f64>,
    last_s: f64,
    last_face_s: Option<f64>,
    /// The last goal the sensor gave, world axes at the foot.
    last_goal: Option<Goal>,
    /// The partner face's outward axis then (world axes, horizontal, unit).
    last_axis: [f64; 2],
    /// The faces' distance then, m.
    last_gap_m: f64,
    /// The approach's leg.
    leg: Leg,
    /// Steps taken after the last stretch stopped short.
    nudges: usize,
    latch_since: Option<f64>,
    /// The partner's face as the sensor last saw it (own port frame).
    last_face: Option<Isometry3<f64>>,
    /// The sensor's readings of the face (stamp, pose) from the foot's rest to the latch.
    at_rest: Vec<(f64, Isometry3<f64>)>,
    state: DockingState,
}

impl Docking {
    /// A docking of `order.port` onto `order.partner`.
    pub fn new(order: DockingOrder) -> Result<Docking, String> {
        let port = PortModel::new(&order.port)?;
        Ok(Docking {
            partner_names: face_names(&order.partner)?,
            state_since: 0.0,
            own_in_foot: port.in_foot(None)?,
            port,
            order,
            joints: None,
            goto: None,
            clock: Monotonic::default(),
            start_s: None,
            last_s: 0.0,
            last_face_s: None,
            last_goal: None,
            last_axis: [1.0, 0.0],
            last_gap_m: f64::INFINITY,
            leg: Leg::Pursue,
            nudges: 0,
            latch_since: None,
            last_face: None,
            at_rest: Vec::new(),
            state: DockingState::Idle,
        })
    }

    /// Where it is.
    pub fn state(&self) -> &DockingState {
        &self.state
    }

    /// The partner's face in the own port's frame as the docking sensor last saw it (before
    /// the latch, while settling): what a keyless face's roll is read from ([`wheel_roll`]).
    pub fn last_face(&self) -> Option<&Isometry3<f64>> {
        self.last_face.as_ref()
    }

    /// The partner's face in the own port's frame while the module stood for the latch: the
    /// mean position of the sensor's readings from the foot's rest to the latch (their noise
    /// averaged; the latch holds the faces as they are), the last reading's rotation; the last
    /// reading of the approach when none came at rest.
    pub fn face_at_latch(&self) -> Option<Isometry3<f64>> {
        // None read at rest (the face out of the sensor's view that near): the last reading.
        let Some((_, last)) = self.at_rest.last() else {
            return self.last_face;
        };
        let n = self.at_rest.len() as f64;
        let sum = self
            .at_rest
            .iter()
            .fold(Vector3::zeros(), |a, (_, p)| a + p.translation.vector);
        Some(Isometry3::from_parts(Translation3::from(sum / n), last.rotation))
    }

    /// Keeps a reading taken while the module stands for the latch (each stamp once).
    fn keep_at_rest(&mut self, r: Option<crate::interface::DockingReading>) {
        if let Some(r) = r {
            self.last_face = Some(r.pose);
            if self.at_rest.last().is_none_or(|(s, _)| r.stamp > *s) {
                self.at_rest.push((r.stamp, r.pose));
            }
        }
    }

    /// One tick on `io`. Once `Docked` or `Failed` it stays, commanding nothing; a docking
    /// that fails while its connector is closing or closed opens it.
    pub fn tick(&mut self, io: &mut dyn Module) -> &DockingState {
        if matches!(self.state, DockingState::Docked { .. } | DockingState::Failed(_)) {
            return &self.state;
        }
        let before = std::mem::discriminant(&self.state);
        if let Err(reason) = self.advance(io) {
            let reason = match io.release(&self.order.port) {
                Ok(()) => reason,
                Err(e) => format!("{reason}; opening the connector: {e}"),
            };
            self.state = DockingState::Failed(reason);
        }
        if std::mem::discriminant(&self.state) != before {
            self.state_since = self.last_s;
        }
        &self.state
    }

    fn advance(&mut self, io: &mut dyn Module) -> Result<(), String> {
        let now = self.clock.check(io.now()).map_err(|e| e.to_string())?;
        let dt = if self.start_s.is_some() {
            now - self.last_s
        } else {
            0.01
        };
        self.last_s = now;
        let start = *self.start_s.get_or_insert(now);
        let joints = match self.joints {
            Some(j) => j,
            None => {
                let j = ModuleJoints::find("m1", io.joint_names())
                    .ok_or("docking needs a lone wheel-foot module's joints (m1_front_joint …)")?;
                self.port.map_joints(io.joint_names())?;
                *self.joints.get_or_insert(j)
            }
        };
        let js = io.joint_states().map_err(|e| e.to_string())?;
        let imu = io.imu().map_err(|e| e.to_string())?;
        // A late IMU reading is used as it is (it only says whether the module stands level);
        // one older than SENSOR_LOST_S ends the docking.
        fresh("imu", Some(imu.stamp), now, crate::SENSOR_LOST_S).map_err(|e| e.to_string())?;
        let at_rest = [joints.bj1, joints.bj2]
            .iter()
            .all(|&k| js.position[k].abs() < SETTLED_DEG.to_radians());
        let mut out = crate::hold(io.control_modes(), None);
        if now - start > TIMEOUT_S {
            return Err(format!("did not dock in {TIMEOUT_S} s ({})", self.state));
        }
        match self.state {
            DockingState::Latching => return self.latch(io, now, &out),
            DockingState::Settling => {
                if now - self.state_since > SETTLE_TIMEOUT_S {
                    return Err(format!("the foot did not come to rest in {SETTLE_TIMEOUT_S} s"));
                }
                if at_rest {
                    // The face as it is at the latch (a keyless face latches at this roll).
                    let r = self.partner_reading(io)?;
                    self.keep_at_rest(r);
                    io.engage(&self.order.port).map_err(|e| e.to_string())?;
                    self.latch_since = Some(now);
                    self.state = DockingState::Latching;
                }
                return io.command(&out).map_err(|e| e.to_string());
            }
            _ => {}
        }
        if now - start > TIMEOUT_S {
            return Err(format!(
                "did not reach its pre-connection point in {TIMEOUT_S} s ({})",
                self.state
            ));
        }
        let sensor = format!("dock/{}", self.order.port);
        // The partner among the faces the sensor sees (another may be nearer), if newly seen.
        let face = self
            .partner_reading(io)?
            .filter(|r| r.stamp > self.last_face_s.unwrap_or(f64::NEG_INFINITY));
        // The face in world axes at the foot: the compass turns the level foot frame.
        let level = Isometry3::from_parts(
            Translation3::identity(),
            UnitQuaternion::from_axis_angle(&Vector3::z_axis(), imu.yaw()),
        );
        let gap = match face {
            Some(face) => {
                self.last_face_s = Some(face.stamp);
                self.last_face = Some(face.pose);
                let gap = face.pose.translation.vector.norm();
                let axis = (-(face.pose.rotation * Vector3::x()).x)
                    .clamp(-1.0, 1.0)
                    .acos()
                    .to_degrees();
                // The port where the joints have it now (the body rises and pitches in a step).
                // Through the IMU's whole attitude: the foot plate pitches in a step, and a
                // face read then, carried by the compass alone, lands centimetres off
                // (session 32's mission seeds; the same lesson as the mast's, record 0058).
                let attitude = Isometry3::from_parts(Translation3::identity(), imu.orientation);
                let partner = attitude * self.port.in_foot(Some(&js.position))? * face.pose;
                let [x, y, yaw] = pre_connection(&partner, &self.own_in_foot);
                self.last_goal = Some(Goal { x, y, yaw });
                let out = partner.rotation * Vector3::x();
                let n = out.x.hypot(out.y).max(1e-9);
                self.last_axis = [out.x / n, out.y / n];
                self.last_gap_m = gap;
                if std::env::var("DBG_DOCK").is_ok_and(|v| v == self.order.port) {
                    eprintln!(
                        "DBG t={now:.2} gap={gap:.3} axis={axis:.1} goal=({x:.3},{y:.3},{:.1}) yaw={:.1} leg={:?} phase={:?} bj={:.0},{:.0}",
                        yaw.to_degrees(),
                        imu.yaw().to_degrees(),
                        self.leg,
                        self.goto.as_ref().map(|g| g.phase()),
                        js.position[joints.bj1].to_degrees(),
                        js.position[joints.bj2].to_degrees()
                    );
                }
                Some((gap, axis))
            }
            None => None,
        };
        let since = self.last_face_s.unwrap_or(start);
        fresh(&sensor, Some(since), now, GIVE_UP_S).map_err(|e| format!("{e}: no face of {}", self.order.partner))?;
        let goal = match self.last_goal {
            Some(g) if now - since <= LOST_S => {
                let (goal, leg) = approach_goal(g, self.last_axis, imu.yaw(), self.leg);
                if leg != self.leg {
                    // A new leg: the controller starts it afresh.
                    self.goto = None;
                    self.leg = leg;
                }
                goal
            }
            // Lost within a few centimetres of the face (the sensor's incidence limit at
            // that range): the foot rests and the latch tries; it catches or it says why.
            Some(_) if self.last_gap_m < LATCH_TRY_M => {
                self.state = DockingState::Settling;
                return io.command(&out).map_err(|e| e.to_string());
            }
            _ => {
                self.state = DockingState::Searching;
                return io.command(&out).map_err(|e| e.to_string());
            }
        };
        let goto = self.goto.get_or_insert_with(|| {
            SingleGoto::new(
                joints,
                js.position.len(),
                goal,
                self.order.table,
                self.order.forced,
                HeadingBands::default(),
            )
        });
        goto.set_goal(goal);
        let sensors = BTreeMap::new();
        let obs = Observation {
            time: now - start,
            positions: &js.position,
            velocities: &js.velocity,
            base: level,
            sensors: &sensors,
        };
        goto.step(dt, &obs, &mut out);
        let caught = gap.is_some_and(|(g, a)| at_rest && g <= CATCH_M && a <= CATCH_DEG);
        let done = goto.phase() == GotoPhase::Done;
        // Stopped short: at rest, a fresh reading farther than the catch asks another step.
        let short = at_rest && self.last_gap_m > CATCH_M && self.nudges < NUDGES;
        if !caught && done && (self.leg != Leg::Final || short) {
            // The end of a leg, or a step short: on to the next (the controller afresh).
            if self.leg == Leg::Final {
                self.nudges += 1;
            }
            self.goto = None;
            self.state = DockingState::Approaching {
                gap_m: gap.map_or(f64::NAN, |g| g.0),
            };
        } else if caught || done {
            out = crate::hold(io.control_modes(), None);
            self.state = DockingState::Settling;
        } else {
            self.state = DockingState::Approaching {
                gap_m: gap.map_or(f64::NAN, |g| g.0),
            };
        }
        io.command(&out).map_err(|e| e.to_string())
    }

    /// The partner's face among those the docking sensor sees now.
    fn partner_reading(&self, io: &dyn Module) -> Result<Option<crate::interface::DockingReading>, String> {
        Ok(io
            .docking(&self.order.port)
            .map_err(|e| e.to_string())?
            .into_iter()
            .find(|r| self.partner_names.contains(&r.partner)))
    }

    /// Waits for the connector: latched, done; failed, engaged again until the retry time.
    fn latch(&mut self, io: &mut dyn Module, now: f64, hold: &[JointTarget]) -> Result<(), String> {
        io.command(hold).map_err(|e| e.to_string())?;
        // The face as it is while the latch closes (it holds the faces as they are then).
        let r = self.partner_reading(io)?;
        self.keep_at_rest(r);
        let status = io.connector(&self.order.port).map_err(|e| e.to_string())?;
        match status.state {
            ConnectorState::Latched => {
                let partner = status.partner.unwrap_or_default();
                if !self.partner_names.contains(&partner) {
                    return Err(format!("latched to {partner}, not to {}", self.order.partner));
                }
                self.state = DockingState::Docked { partner };
            }
            ConnectorState::Failed => {
                let since = self.latch_since.unwrap_or(now);
                if now - since >= LATCH_RETRY_S {
                    return Err(format!(
                        "the latch of {} did not close in {LATCH_RETRY_S} s: {}",
                        self.order.port,
                        status.reason.unwrap_or_default()
                    ));
                }
                io.engage(&self.order.port).map_err(|e| e.to_string())?;
            }
            ConnectorState::Engaging | ConnectorState::Open => {
                if now - self.latch_since.unwrap_or(now) > LATCH_TIMEOUT_S {
                    return Err(format!(
                        "the connector of {} neither latched nor failed in {LATCH_TIMEOUT_S} s ({:?})",
                        self.order.port, status.state
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pre-connection pose puts the module's port 1 cm in front of the partner's face,
    /// facing it: a face at (1, 0) looking along +x met by a port on the module's own +x.
    #[test]
    fn the_foot_port_has_two_names() {
        let mut names = face_names("m1/BS").unwrap_or_default();
        names.sort();
        assert_eq!(names, ["m1/BF", "m1/BS"]);
        assert_eq!(face_names("m2/F").unwrap_or_default(), ["m2/F"]);
        assert!(face_names("m2").is_err() && face_names("m2/Q").is_err());
    }

    /// A face met with a known roll (and a small swing off the axis) gives that roll back,
    /// with its sign; a keyed quarter turn reads as 90°.
    #[test]
    fn a_keyless_face_reads_the_roll_it_meets_its_partner_with() {
        for roll in [-150.0f64, -30.0, 0.0, 12.5, 89.0, 170.0] {
            let own_in_partner = UnitQuaternion::from_axis_angle(&Vector3::y_axis(), 2f64.to_radians())
                * UnitQuaternion::from_axis_angle(&Vector3::x_axis(), roll.to_radians())
                * UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f64::consts::PI);
            let face = Isometry3::from_parts(Translation3::new(0.004, 0.0, 0.0), own_in_partner.inverse());
            let got = wheel_roll(&face);
            assert!((got - roll).abs() < 0.1, "{roll}: {got}");
        }
        assert!(on_wheel("F").unwrap_or(false) && !on_wheel("BS").unwrap_or(true));
    }

    /// A goal a little off the module's line and at its heading is walked to straight; one
    /// farther off, or at another heading, is kept.
    #[test]
    fn a_near_goal_beside_the_line_is_walked_to_straight() {
        let h = -std::f64::consts::FRAC_PI_2;
        // 2.5 cm ahead (−y) and 1.5 cm to the right (−x): straight ahead 2.5 cm.
        let g = straight_in(
            Goal {
                x: -0.015,
                y: -0.025,
                yaw: h + 0.05,
            },
            h,
        );
        assert!(
            g.x.abs() < 1e-12 && (g.y + 0.025).abs() < 1e-12 && g.yaw == h + 0.05,
            "{g:?}"
        );
        // 3 cm to the side, or 10° off: as given.
        let far = Goal {
            x: -0.03,
            y: -0.025,
            yaw: h,
        };
        assert_eq!(straight_in(far, h), far);
        let turned = Goal {
            x: -0.01,
            y: -0.025,
            yaw: h + 10f64.to_radians(),
        };
        assert_eq!(straight_in(turned, h), turned);
    }

    /// Far out, the goal is on the approach line a lookahead nearer than the module; near
    /// (with a hysteresis) and well across the line, a point out along it; near and across by little but turned,
    /// a turn on the spot to the point's heading; then straight in to the face.
    #[test]
    fn the_approach_pursues_the_line_turns_then_goes_straight_in() {
        use std::f64::consts::PI;
        // The point at (0.01, 0), the face looking along +x; the module at (0.21, 0.05).
        let g = Goal {
            x: -0.2,
            y: -0.05,
            yaw: PI,
        };
        let (a, leg) = approach_goal(g, [1.0, 0.0], PI, Leg::Pursue);
        assert_eq!(leg, Leg::Pursue);
        assert!((a.x + LOOKAHEAD_M).abs() < 1e-12 && (a.y + 0.05).abs() < 1e-12, "{a:?}");
        // 5 cm out, 4 cm aside: back out along the line.
        let (a, leg) = approach_goal(
            Goal {
                x: -0.05,
                y: -0.04,
                yaw: PI,
            },
            [1.0, 0.0],
            PI,
            Leg::Pursue,
        );
        assert_eq!(leg, Leg::BackOff);
        assert!(
            (a.x - (BACK_OFF_M - 0.05)).abs() < 1e-12 && (a.y + 0.04).abs() < 1e-12,
            "{a:?}"
        );
        // 5 cm out, 1 cm aside, 6° off: a turn on the spot.
        let near = Goal {
            x: -0.05,
            y: -0.01,
            yaw: PI,
        };
        let (a, leg) = approach_goal(near, [1.0, 0.0], PI - 6f64.to_radians(), Leg::Pursue);
        assert_eq!(leg, Leg::Align);
        assert!(a.x == 0.0 && a.y == 0.0 && a.yaw == PI, "{a:?}");
        // At the heading: straight in, to half a centimetre from the face.
        let (a, leg) = approach_goal(near, [1.0, 0.0], PI, Leg::Align);
        assert_eq!(leg, Leg::Final);
        let closer = STANDOFF_M - FINAL_STANDOFF_M;
        assert!((a.x + 0.05 + closer).abs() < 1e-9 && a.y.abs() < 1e-9, "{a:?}");
        // Near, 10 cm out (2 cm past the lookahead, inside the hysteresis): still near.
        let (_, leg) = approach_goal(Goal { x: -0.1, ..near }, [1.0, 0.0], PI, Leg::Final);
        assert_eq!(leg, Leg::Final);
        let (_, leg) = approach_goal(Goal { x: -0.1, ..near }, [1.0, 0.0], PI, Leg::Pursue);
        assert_eq!(leg, Leg::Pursue);
    }

    #[test]
    fn the_pre_connection_pose_faces_the_partner_one_standoff_out() {
        let partner = Isometry3::from_parts(Translation3::new(1.0, 0.0, 0.0), UnitQuaternion::identity());
        let own = Isometry3::from_parts(Translation3::new(0.2, 0.0, 0.0), UnitQuaternion::identity());
        let [x, y, yaw] = pre_connection(&partner, &own);
        // Facing −x (yaw π), its port (0.2 ahead) at 1.01: the module at 1.21.
        assert!((x - 1.21).abs() < 1e-12 && y.abs() < 1e-12, "{x} {y}");
        assert!((yaw.abs() - std::f64::consts::PI).abs() < 1e-12, "{yaw}");
    }
}
