//! Range sensors: a ray from a point of a link along its x axis, against the ground plane,
//! the obstacles and every body but the sensor's own (parry's ray casts). The digital-hormone
//! modules' IR sensors (seed-003 §2: 0 touching … 128 nothing in range). Decision record 0029.
//! Tilt sensors: how far a link's y axis (a cube module's hinge axis) is rolled out of the
//! horizontal, from the link's simulated pose.

use std::collections::BTreeMap;

use nalgebra::{Isometry3, Point3, Vector3};
use rapier3d::parry::query::Ray;

use crate::convert::{to_pose, to_vec};
use crate::error::{Result, SimError};
use crate::world::Simulator;

/// The reading of nothing in range.
pub const IR_FULL_SCALE: f64 = 128.0;

/// One range sensor.
#[derive(Debug, Clone, PartialEq)]
pub struct IrSensor {
    /// Name of its reading.
    pub name: String,
    /// URDF link it sits on.
    pub link: String,
    /// Its pose in the link frame; the beam runs along its x axis.
    pub pose: Isometry3<f64>,
    /// Range, m: a reading of 128 at and beyond it.
    pub range_m: f64,
    /// Whether the floor returns an echo (false: only walls, obstacles and bodies do).
    pub floor: bool,
    /// Links the beam passes through besides its own (the rest of its module: a cube's
    /// other half swings across the side sensors' origins).
    pub ignore: Vec<String>,
}

/// One tilt sensor: its reading is [`tilt_deg`] of its link's pose.
#[derive(Debug, Clone, PartialEq)]
pub struct TiltSensor {
    /// Name of its reading.
    pub name: String,
    /// URDF link it sits on.
    pub link: String,
}

/// The tilt of a frame's y axis out of the horizontal, deg: 0 with the axis level (upright or
/// upside down), ±90 with it vertical (a module rolled onto its side), whatever the frame's
/// yaw and its pitch about that axis.
pub fn tilt_deg(pose: &Isometry3<f64>) -> f64 {
    (pose.rotation * Vector3::y()).z.clamp(-1.0, 1.0).asin().to_degrees()
}

impl Simulator {
    /// The index of a URDF link (the first robot's of that name).
    pub fn link_index(&self, name: &str) -> Option<usize> {
        self.link_names.iter().position(|n| n == name)
    }

    /// A sensor's link, refused under `key` unless the robot has it.
    fn require_link(&self, key: &str, link: &str) -> Result<()> {
        match self.link_index(link) {
            Some(_) => Ok(()),
            None => Err(SimError::Settings {
                key: key.to_string(),
                value: link.to_string(),
                expected: "a link of the robot".into(),
            }),
        }
    }

    /// Fits range sensors; each names a link of the robot and a positive finite range.
    pub fn set_ir_sensors(&mut self, sensors: Vec<IrSensor>) -> Result<()> {
        for s in &sensors {
            self.require_link(&format!("ir_sensors.{}.link", s.name), &s.link)?;
            if !(s.range_m.is_finite() && s.range_m > 0.0) {
                return Err(SimError::Settings {
                    key: format!("ir_sensors.{}.range_m", s.name),
                    value: s.range_m.to_string(),
                    expected: "a positive finite range".into(),
                });
            }
        }
        self.ir = sensors;
        Ok(())
    }

    /// Fits tilt sensors; each names a link of the robot.
    pub fn set_tilt_sensors(&mut self, sensors: Vec<TiltSensor>) -> Result<()> {
        for s in &sensors {
            self.require_link(&format!("tilt_sensors.{}.link", s.name), &s.link)?;
        }
        self.tilt = sensors;
        Ok(())
    }

    /// Every tilt sensor's reading, deg ([`tilt_deg`]), by name.
    pub fn tilt_readings(&self) -> BTreeMap<String, Vec<f64>> {
        self.tilt
            .iter()
            .filter_map(|s| {
                Some((
                    s.name.clone(),
                    vec![tilt_deg(&self.link_pose(self.link_index(&s.link)?))],
                ))
            })
            .collect()
    }

    /// The distance along a ray from `origin` in the unit direction `dir` to the first
    /// thing it meets within `max` (the ground z = 0, an obstacle, a body other than
    /// `skip_body`), m.
    pub fn ray_distance(
        &self,
        origin: Point3<f64>,
        dir: Vector3<f64>,
        max: f64,
        skip_body: Option<usize>,
    ) -> Option<f64> {
        self.ray(origin, dir, max, skip_body.as_slice(), true)
    }

    /// [`Simulator::ray_distance`], the floor counted or not.
    fn ray(&self, origin: Point3<f64>, dir: Vector3<f64>, max: f64, skip: &[usize], floor: bool) -> Option<f64> {
        let mut best = if floor && dir.z < -1e-12 && origin.z >= 0.0 {
            Some(-origin.z / dir.z).filter(|t| *t <= max)
        } else {
            None
        };
        let ray = Ray::new(to_vec(&origin.coords), to_vec(&dir));
        let mut consider = |t: Option<f32>| {
            if let Some(t) = t {
                let t = f64::from(t);
                if best.is_none_or(|b| t < b) {
                    best = Some(t);
                }
            }
        };
        for (shape, pose) in &self.ray_obstacles {
            consider(shape.cast_ray(&to_pose(pose), &ray, max as f32, true));
        }
        for (body, _, shape, local) in &self.ray_colliders {
            if skip.contains(body) {
                continue;
            }
            let pose = self.body_pose(*body) * local;
            consider(shape.cast_ray(&to_pose(&pose), &ray, max as f32, true));
        }
        best
    }

    /// The smallest distance between the robots' collision shapes and the world's boxes, m
    /// (0 when touching); None in a world without boxes.
    pub fn obstacle_clearance(&self) -> Option<f64> {
        let mut best: Option<f64> = None;
        for (shape, pose) in &self.ray_obstacles {
            let at = to_pose(pose);
            for (body, _, s, local) in &self.ray_colliders {
                let p = to_pose(&(self.body_pose(*body) * local));
                if let Ok(d) = rapier3d::parry::query::distance(&at, shape.as_ref(), &p, s.as_ref()) {
                    let d = f64::from(d.distance);
                    best = Some(best.map_or(d, |b| b.min(d)));
                }
            }
        }
        best
    }

    /// Starts following the robots' closest approach to the world's boxes, once per control
    /// tick of the runs that follow ([`Simulator::closest_approach`]).
    pub fn watch_clearance(&mut self) {
        self.clearance = Some(f64::INFINITY);
    }

    /// The closest approach to a box since [`Simulator::watch_clearance`], m; None if not
    /// watching or the world has no boxes.
    pub fn closest_approach(&self) -> Option<f64> {
        self.clearance.filter(|c| c.is_finite())
    }

    /// Takes the clearance now into the closest approach, if watching.
    pub(crate) fn observe_clearance(&mut self) {
        if let Some(c) = self.clearance
            && let Some(now) = self.obstacle_clearance()
        {
            self.clearance = Some(c.min(now));
        }
    }

    /// Every sensor's reading by name: the force, range and tilt sensors' (what a
    /// controller's observation carries).
    pub fn sensor_readings(&self) -> BTreeMap<String, Vec<f64>> {
        let mut all = self.force_sensors();
        all.extend(self.ir_readings());
        all.extend(self.tilt_readings());
        all
    }

    /// Every range sensor's reading, 0 (touching) … 128 (nothing within range), by name.
    pub fn ir_readings(&self) -> BTreeMap<String, Vec<f64>> {
        self.ir
            .iter()
            .filter_map(|s| {
                let l = self.link_index(&s.link)?;
                let (body, off) = self.link_body[l];
                let frame = self.body_pose(body) * off * s.pose;
                let origin = frame * Point3::origin();
                let dir = frame.rotation * Vector3::x();
                let mut skip = vec![body];
                skip.extend(
                    s.ignore
                        .iter()
                        .filter_map(|n| self.link_index(n))
                        .map(|k| self.link_body[k].0),
                );
                let d = self.ray(origin, dir, s.range_m, &skip, s.floor).unwrap_or(s.range_m);
                Some((s.name.clone(), vec![IR_FULL_SCALE * (d / s.range_m).clamp(0.0, 1.0)]))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::robot::SimRobot;
    use crate::world::SimSettings;
    use modbot_core::{ModuleCatalog, Scenario, Topology};

    fn sim() -> Simulator {
        let t = Topology::resolve("pp:2", &ModuleCatalog::builtin()).unwrap_or_else(|e| panic!("{e}"));
        let world = Scenario::from_yaml(
            "name: w\nobstacles:\n  - {name: wall, kind: wall, position_m: [2.0, 0.0], size_m: [0.2, 1.0, 0.3]}\n",
            "w",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let robot = SimRobot::from_topology(&t).unwrap_or_else(|e| panic!("{e}"));
        Simulator::new(&robot, &world, SimSettings::for_scenario(&world)).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Rays stop at the ground, at an obstacle's near face and at the robot's bodies.
    #[test]
    fn rays_meet_the_ground_obstacles_and_bodies() {
        let s = sim();
        let down = s.ray_distance(Point3::new(5.0, 5.0, 1.0), -Vector3::z(), 10.0, None);
        assert!((down.unwrap_or(f64::NAN) - 1.0).abs() < 1e-9, "{down:?}");
        let wall = s.ray_distance(Point3::new(0.5, 0.0, 0.1), Vector3::x(), 10.0, None);
        assert!((wall.unwrap_or(f64::NAN) - 1.4).abs() < 1e-5, "{wall:?}");
        assert_eq!(
            s.ray_distance(Point3::new(0.5, 0.0, 0.1), -Vector3::y(), 3.0, None),
            None
        );
        let com = s.com();
        let at_robot = s.ray_distance(Point3::new(com.x, com.y, 1.0), -Vector3::z(), 10.0, None);
        assert!(
            at_robot.is_some_and(|d| d < 0.99),
            "{at_robot:?} hits the robot before the ground"
        );
    }

    /// A sensor on the head half looking along the chain reads 128 · distance / range; one
    /// naming no link or with a bad range is refused by name.
    #[test]
    fn ir_sensors_read_scaled_distance_and_bad_ones_are_refused() {
        let mut s = sim();
        let link = "module_2_front".to_string();
        assert!(s.link_index(&link).is_some(), "{:?}", s.link_names);
        s.set_ir_sensors(vec![IrSensor {
            name: "ahead".into(),
            link: link.clone(),
            pose: Isometry3::translation(0.036, 0.0, 0.0),
            range_m: 4.0,
            floor: true,
            ignore: Vec::new(),
        }])
        .unwrap_or_else(|e| panic!("{e}"));
        let r = s.ir_readings()["ahead"][0];
        // The head face is a little short of the wall's near face at x = 1.9.
        let (_, head) = s.ends();
        let want = 128.0 * (1.9 - head.x) / 4.0;
        assert!((r - want).abs() < 0.5, "{r} vs {want}");
        // Tilted 30° down, it sees the floor, unless the floor returns no echo.
        let down = Isometry3::from_parts(
            nalgebra::Translation3::new(0.036, 0.0, 0.0),
            nalgebra::UnitQuaternion::from_axis_angle(&Vector3::y_axis(), 30f64.to_radians()),
        );
        let mut tilted = s.ir[0].clone();
        tilted.pose = down;
        s.set_ir_sensors(vec![tilted.clone()]).unwrap_or_else(|e| panic!("{e}"));
        let floor = s.ir_readings()["ahead"][0];
        assert!(floor < 128.0 * 0.2 / 4.0, "{floor}");
        tilted.floor = false;
        s.set_ir_sensors(vec![tilted]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.ir_readings()["ahead"][0], 128.0);
        for (sensor, says) in [
            (
                IrSensor {
                    link: "nose".into(),
                    ..s.ir[0].clone()
                },
                "link",
            ),
            (
                IrSensor {
                    range_m: 0.0,
                    ..s.ir[0].clone()
                },
                "range_m",
            ),
        ] {
            let e = s
                .set_ir_sensors(vec![sensor])
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.contains(says), "{e}");
        }
    }

    /// The tilt of a frame: its pitch about y and its yaw leave it level, a roll about x
    /// tilts it by the roll; on the simulated robot a pitch-yaw chain's second module, rolled
    /// 90° by its connection, reads ±90 and the first 0. A sensor on no link is refused.
    #[test]
    fn tilt_sensors_read_the_roll_of_the_hinge_axis_from_the_pose() {
        use nalgebra::UnitQuaternion;
        // Yawed by y, rolled by r about its x, pitched by p about its own (hinge) axis.
        let at = |r: f64, p: f64, y: f64| {
            let q = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), y.to_radians())
                * UnitQuaternion::from_axis_angle(&Vector3::x_axis(), r.to_radians())
                * UnitQuaternion::from_axis_angle(&Vector3::y_axis(), p.to_radians());
            tilt_deg(&Isometry3::from_parts(nalgebra::Translation3::new(1.0, 2.0, 3.0), q))
        };
        assert!(at(0.0, 35.0, 120.0).abs() < 1e-9);
        assert!((at(30.0, 0.0, -70.0) - 30.0).abs() < 1e-9);
        assert!((at(-90.0, 20.0, 10.0) + 90.0).abs() < 1e-4, "{}", at(-90.0, 20.0, 10.0));
        assert!((at(-60.0, 20.0, 10.0) + 60.0).abs() < 1e-9);
        assert!(at(180.0, 0.0, 0.0).abs() < 1e-9, "upside down is level");
        let t = Topology::resolve("py:2", &ModuleCatalog::builtin()).unwrap_or_else(|e| panic!("{e}"));
        let robot = SimRobot::from_topology(&t).unwrap_or_else(|e| panic!("{e}"));
        let world = Scenario::from_yaml("name: flat\n", "flat").unwrap_or_else(|e| panic!("{e}"));
        let mut s = Simulator::new(&robot, &world, SimSettings::for_scenario(&world)).unwrap_or_else(|e| panic!("{e}"));
        let sensors: Vec<TiltSensor> = (0..2)
            .map(|i| TiltSensor {
                name: format!("tilt/{i}"),
                link: t.link_name(i, 0),
            })
            .collect();
        s.set_tilt_sensors(sensors).unwrap_or_else(|e| panic!("{e}"));
        let r = s.sensor_readings();
        assert!(r["tilt/0"][0].abs() < 1.0, "{r:?}");
        assert!((r["tilt/1"][0].abs() - 90.0).abs() < 1.0, "{r:?}");
        let e = s
            .set_tilt_sensors(vec![TiltSensor {
                name: "t".into(),
                link: "nose".into(),
            }])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("tilt_sensors.t.link"), "{e}");
    }
}
