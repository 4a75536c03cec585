//! A kinematic fake plant for the tests: position-driven joints move toward their targets at
//! a limited speed, velocity-driven joints integrate their speed, and the base pose is
//! whatever the test sets.

use std::collections::BTreeMap;

use nalgebra::{Isometry3, Vector3};

use super::MODULE_JOINTS;
use crate::controller::{Controller, JointTarget, Observation};

/// The fake robot.
pub(crate) struct FakePlant {
    /// Joint positions, rad.
    pub q: Vec<f64>,
    /// Joint speeds, rad/s (last tick).
    pub qd: Vec<f64>,
    /// Speed limit of position-driven joints, rad/s.
    pub max_speed: f64,
    /// World pose of the base.
    pub base: Isometry3<f64>,
    /// Time, s.
    pub time: f64,
    /// The targets of the last tick.
    pub last: Vec<JointTarget>,
    sensors: BTreeMap<String, Vec<f64>>,
}

impl FakePlant {
    /// `n` joints at 0, base at the origin facing +x, joints at 200°/s.
    pub fn new(n: usize) -> FakePlant {
        FakePlant {
            q: vec![0.0; n],
            qd: vec![0.0; n],
            max_speed: 200f64.to_radians(),
            base: Isometry3::identity(),
            time: 0.0,
            last: vec![JointTarget::Position(0.0); n],
            sensors: BTreeMap::new(),
        }
    }

    /// One control tick: the controller sees the plant, then the plant moves for `dt`.
    pub fn tick(&mut self, c: &mut dyn Controller, dt: f64) -> &[JointTarget] {
        let mut out = vec![JointTarget::Position(f64::NAN); self.q.len()];
        let obs = Observation {
            time: self.time,
            positions: &self.q,
            velocities: &self.qd,
            base: self.base,
            sensors: &self.sensors,
        };
        c.step(dt, &obs, &mut out);
        for (k, t) in out.iter().enumerate() {
            assert!(t.value().is_finite(), "joint {k} got {t:?}");
            let step = match *t {
                JointTarget::Position(p) => (p - self.q[k]).clamp(-self.max_speed * dt, self.max_speed * dt),
                JointTarget::Velocity(v) => v * dt,
            };
            self.q[k] += step;
            self.qd[k] = step / dt;
        }
        self.time += dt;
        self.last = out;
        &self.last
    }

    /// Puts the base at (x, y) with heading `yaw_deg`.
    pub fn set_base(&mut self, x: f64, y: f64, yaw_deg: f64) {
        self.base = Isometry3::new(Vector3::new(x, y, 0.0), Vector3::z() * yaw_deg.to_radians());
    }

    /// The base's (x, y, yaw in deg).
    pub fn base_xy_yaw(&self) -> (f64, f64, f64) {
        (
            self.base.translation.x,
            self.base.translation.y,
            super::yaw_of(&self.base).to_degrees(),
        )
    }

    /// Joint position in degrees.
    pub fn deg(&self, k: usize) -> f64 {
        self.q[k].to_degrees()
    }
}

/// The joint names of the `wheelfoot` robot (module `m1`).
pub(crate) fn wheelfoot_names() -> Vec<String> {
    MODULE_JOINTS.iter().map(|j| format!("m1_{j}")).collect()
}

/// The joint names of the six-module robots (`role1` … `role6`).
pub(crate) fn six_names() -> Vec<String> {
    (1..=6)
        .flat_map(|r| MODULE_JOINTS.iter().map(move |j| format!("role{r}_{j}")))
        .collect()
}

/// A target in degrees (positions) or deg/s (speeds), rounded to 1e-9.
pub(crate) fn deg(t: JointTarget) -> f64 {
    (t.value().to_degrees() * 1e9).round() / 1e9
}
