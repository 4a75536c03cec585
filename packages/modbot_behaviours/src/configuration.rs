//! A configuration on the move (seed-000 §6.3–§6.5; decision records 0049, 0059) on the
//! robot interface: the body modules' cameras locked on the landmarks give its position
//! ([`configuration_lock_on`]: Role#1's camera and Role#2's, whose foot is joined to Role#1's
//! foot to foot), the compass its heading, and a configuration controller (position control,
//! pass-over, pass-under, standing) runs on the modules through [`ConfigurationJoints`]
//! ([`ConfigurationDrive`]), standing still while the cameras have lost every landmark when
//! it needs a position.

use std::collections::BTreeMap;

use modbot_gaits::{Controller, Observation};
use modbot_planner::assembly::role_target;
use nalgebra::{Isometry3, UnitQuaternion, Vector3};

use crate::assembly::ConfigurationJoints;
use crate::docking::port_in_foot;
use crate::interface::{JointTarget, Modules};
use crate::lockon::LockOn;

/// Role#2's foot in Role#1's foot frame in `configuration`: Role#2's port mated to its
/// partner on Role#1 (faces opposed, no roll: both feet flat when they latch), from the
/// catalog's port frames.
pub fn role2_foot_in_role1(configuration: &str) -> Result<Isometry3<f64>, String> {
    let t = role_target(configuration, 2).map_err(|e| e.to_string())?;
    if t.partner_role != 1 {
        return Err(format!("Role#2 of `{configuration}` is not joined to Role#1"));
    }
    let partner = port_in_foot(t.partner_port)?;
    let own = port_in_foot(t.port)?;
    let flip = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f64::consts::PI);
    Ok(partner * Isometry3::from_parts(Default::default(), flip) * own.inverse())
}

/// The configuration's lock-on: Role#1's camera (the reference) and Role#2's, on
/// `landmarks`, for the modules `roles` (module of each role) of `fleet`, Role#2's foot at
/// `role2_foot` in Role#1's foot frame (as its docking sensor measured it at the latch:
/// [`crate::assembly::Assembly::role2_foot_in_role1`]; the catalog's
/// [`role2_foot_in_role1`] leaves out the gap the latch closed on, up to its 3 cm).
pub fn configuration_lock_on(
    fleet: &dyn Modules,
    roles: [usize; 6],
    role2_foot: &Isometry3<f64>,
    landmarks: BTreeMap<String, [f64; 2]>,
) -> Result<LockOn, String> {
    let names = |m: usize| {
        fleet
            .module_ref(m)
            .map(|io| io.joint_names().to_vec())
            .map_err(|e| e.to_string())
    };
    let (n1, n2) = (names(roles[0])?, names(roles[1])?);
    let offset = role2_foot.translation.vector;
    LockOn::with_eyes(&[(&n1, Vector3::zeros()), (&n2, offset)], landmarks)
}

/// Reads the configuration's two cameras into `lock`.
pub fn look(lock: &mut LockOn, fleet: &dyn Modules, roles: [usize; 6]) -> Result<(), String> {
    let a = fleet.module_ref(roles[0]).map_err(|e| e.to_string())?;
    let b = fleet.module_ref(roles[1]).map_err(|e| e.to_string())?;
    lock.update_eyes(&[a, b]).map_err(|e| e.to_string())
}

/// A configuration controller running on the modules.
pub struct ConfigurationDrive {
    joints: ConfigurationJoints,
    controller: Box<dyn Controller>,
    /// It needs a position: it stands while the cameras see no landmark.
    localise: bool,
    start_s: Option<f64>,
    last_s: Option<f64>,
    last_out: Option<Vec<JointTarget>>,
}

impl ConfigurationDrive {
    /// `controller` (written for `joints`' joint vector) on the modules; with `localise`
    /// it takes its base from the lock-on and stands while the lock-on is lost.
    pub fn new(joints: ConfigurationJoints, controller: Box<dyn Controller>, localise: bool) -> ConfigurationDrive {
        ConfigurationDrive {
            joints,
            controller,
            localise,
            start_s: None,
            last_s: None,
            last_out: None,
        }
    }

    /// The controller.
    pub fn controller(&self) -> &dyn Controller {
        self.controller.as_ref()
    }

    /// Holds the last targets (wheels stopped; the controller's first targets if it has not
    /// run yet), the cameras panning.
    pub fn hold(&mut self, fleet: &mut dyn Modules, lock: &LockOn, now: f64) -> Result<(), String> {
        if self.last_out.is_none() {
            let keep = self.localise;
            self.localise = false;
            let r = self.tick(fleet, lock, now);
            self.localise = keep;
            return r.map(|_| ());
        }
        let mut out: Vec<JointTarget> = self
            .last_out
            .clone()
            .unwrap_or_default()
            .iter()
            .map(|t| match t {
                JointTarget::Velocity(_) => JointTarget::Velocity(0.0),
                p => *p,
            })
            .collect();
        for (k, r) in self.joints.role_joints().iter().take(2).enumerate() {
            out[r.pan] = JointTarget::Position(lock.pan_target(k).unwrap_or(0.0));
            out[r.tilt] = JointTarget::Position(0.0);
        }
        self.joints.command(fleet, &out)
    }

    /// One tick at `now`: the lock-on (already updated this tick) gives the base; the
    /// controller's targets, with the two cameras' pans, go to the modules. Returns whether
    /// it stood for want of a position.
    pub fn tick(&mut self, fleet: &mut dyn Modules, lock: &LockOn, now: f64) -> Result<bool, String> {
        let start = *self.start_s.get_or_insert(now);
        let dt = self.last_s.map_or(0.01, |l| (now - l).max(1e-6));
        self.last_s = Some(now);
        let roles = self.joints.role_joints();
        let base = lock.base();
        let stand = self.localise && (!lock.locked(now) || base.is_none());
        let mut out = match (&self.last_out, stand) {
            // Standing: the last targets, wheels stopped.
            (Some(last), true) => last
                .iter()
                .map(|t| match t {
                    JointTarget::Velocity(_) => JointTarget::Velocity(0.0),
                    p => *p,
                })
                .collect(),
            _ => {
                let (q, v) = self.joints.read(&*fleet)?;
                let sensors = BTreeMap::new();
                let obs = Observation {
                    time: now - start,
                    positions: &q,
                    velocities: &v,
                    base: base.unwrap_or_else(Isometry3::identity),
                    sensors: &sensors,
                };
                let mut out = vec![JointTarget::Position(0.0); self.joints.count()];
                self.controller.step(dt, &obs, &mut out);
                self.last_out = Some(out.clone());
                out
            }
        };
        for (k, r) in roles.iter().take(2).enumerate() {
            out[r.pan] = JointTarget::Position(lock.pan_target(k).unwrap_or(0.0));
            out[r.tilt] = JointTarget::Position(0.0);
        }
        self.joints.command(fleet, &out)?;
        Ok(stand)
    }
}
