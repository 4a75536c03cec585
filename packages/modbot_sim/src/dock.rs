//! Joining and splitting robots at run time (decision record 0030): two ports of two robots
//! made to coincide are joined rigidly ([`Simulator::attach`]) and split again
//! ([`Simulator::detach`]); a robot's own fixed joint (a module-to-module connection) can be
//! cut ([`Simulator::cut`]). Each change regroups the links into rigid bodies and the bodies
//! into trees, builds the engine's world again at the current poses and starts it with the old
//! motion: a split keeps every link's velocity, a join keeps the joined trees' linear and
//! angular momentum (an inelastic impact). On the native engine only: the rapier cross-check
//! builds its multibodies from zero joint angles and has no way here to start them mid-run.

use nalgebra::{Isometry3, UnitQuaternion, Vector3, Vector6};

use crate::error::{Result, SimError};
use crate::layout::Weld;
use crate::world::{Simulator, World, body_tables, layout_loop_error};

/// A port of a robot: a frame on one of its links with x pointing out of the module, the
/// catalog's convention. Two joined ports face each other: frame_b = frame_a · R_x(roll) ·
/// R_z(π).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Port {
    /// The robot (index in the simulator's robots).
    pub robot: usize,
    /// The URDF link that carries it.
    pub link: String,
    /// Its pose in that link's frame.
    pub frame: Isometry3<f64>,
}

/// How far apart two ports may be and still dock.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DockTolerance {
    /// Distance between the port origins, m.
    pub position_m: f64,
    /// Angle between one port's axis and the reverse of the other's, deg (on flat ground,
    /// the modules' difference of yaw).
    pub axis_deg: f64,
    /// Rotation about the port axis away from the connection's roll, deg.
    pub roll_deg: f64,
}

impl Default for DockTolerance {
    /// 1 cm, 5°, 5°: what a latch with guide cones catches (record 0030).
    fn default() -> DockTolerance {
        DockTolerance {
            position_m: 0.01,
            axis_deg: 5.0,
            roll_deg: 5.0,
        }
    }
}

/// How well two ports met when they were docked.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DockFit {
    /// Distance between the port origins, m.
    pub distance_m: f64,
    /// Axis misalignment, deg.
    pub axis_deg: f64,
    /// Roll error about the axis, deg.
    pub roll_deg: f64,
    /// The same, signed: the rotation of port b about the ideal port axis away from the
    /// mating roll, deg in (−180, 180].
    pub twist_deg: f64,
}

/// A dock in force.
#[derive(Debug, Clone)]
pub(crate) struct DockRecord {
    pub name: String,
    pub weld: Weld,
    pub fit: DockFit,
}

impl Simulator {
    fn dock_error(name: &str, what: impl Into<String>) -> SimError {
        SimError::Dock {
            dock: name.to_string(),
            what: what.into(),
        }
    }

    /// The simulator's index of a robot's link.
    fn port_link(&self, name: &str, port: &Port) -> Result<usize> {
        if port.robot >= self.robot_count() {
            return Err(Simulator::dock_error(
                name,
                format!("robot {} does not exist (there are {})", port.robot, self.robot_count()),
            ));
        }
        let links = self.links_of(port.robot);
        links.clone().find(|&l| self.link_names[l] == port.link).ok_or_else(|| {
            Simulator::dock_error(
                name,
                format!(
                    "robot {} (`{}`) has no link `{}`",
                    port.robot, self.layout.robots[port.robot].name, port.link
                ),
            )
        })
    }

    /// How far the two ports are from mating with the given roll.
    pub fn port_fit(&self, a: &Port, b: &Port, roll_deg: f64) -> Result<DockFit> {
        let la = self.port_link("fit", a)?;
        let lb = self.port_link("fit", b)?;
        let pa = self.link_pose(la) * a.frame;
        let pb = self.link_pose(lb) * b.frame;
        let ideal = pa.rotation
            * UnitQuaternion::from_axis_angle(&Vector3::x_axis(), roll_deg.to_radians())
            * UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f64::consts::PI);
        // Swing–twist about the ideal port axis.
        let err = ideal.inverse() * pb.rotation;
        let q = err.quaternion();
        let twist = 2.0 * q.i.atan2(q.w);
        let twist = (twist + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI;
        let axis_b = pb.rotation * Vector3::x();
        let axis_a = pa.rotation * Vector3::x();
        let axis = (-axis_a.dot(&axis_b)).clamp(-1.0, 1.0).acos();
        Ok(DockFit {
            distance_m: (pa.translation.vector - pb.translation.vector).norm(),
            axis_deg: axis.to_degrees(),
            roll_deg: twist.to_degrees().abs(),
            twist_deg: twist.to_degrees(),
        })
    }

    /// Joins port `b` to port `a` rigidly, as they are now, if they are within `tolerance`
    /// of mating with `roll_deg` about the port axis; refused with the reason otherwise, on
    /// the rapier engine, for a name in use, or if the join would close a loop.
    pub fn attach(
        &mut self,
        name: &str,
        a: &Port,
        b: &Port,
        roll_deg: f64,
        tolerance: &DockTolerance,
    ) -> Result<DockFit> {
        self.join(name, a, b, roll_deg, tolerance, false)
    }

    /// As [`Simulator::attach`], but the faces are joined at `roll_deg` exactly: the lighter
    /// of the two trees turns about its port's axis by the residual roll first, as a keyed
    /// connector's pins turn the faces onto the key when the latch closes (decision record
    /// 0060). The residual tilt of the axes and the offset of the faces stay as they are
    /// (pulling those in would swing a lying module's far end through the ground).
    pub fn attach_keyed(
        &mut self,
        name: &str,
        a: &Port,
        b: &Port,
        roll_deg: f64,
        tolerance: &DockTolerance,
    ) -> Result<DockFit> {
        self.join(name, a, b, roll_deg, tolerance, true)
    }

    fn join(
        &mut self,
        name: &str,
        a: &Port,
        b: &Port,
        roll_deg: f64,
        tolerance: &DockTolerance,
        keyed: bool,
    ) -> Result<DockFit> {
        let tol = [
            ("position_m", tolerance.position_m),
            ("axis_deg", tolerance.axis_deg),
            ("roll_deg", tolerance.roll_deg),
        ];
        if let Some((key, v)) = tol.iter().find(|(_, v)| !(v.is_finite() && *v >= 0.0)) {
            return Err(Simulator::dock_error(
                name,
                format!("tolerance {key} = {v}: a finite number ≥ 0"),
            ));
        }
        if !roll_deg.is_finite() {
            return Err(Simulator::dock_error(name, format!("roll {roll_deg}° is not finite")));
        }
        if self.docks.iter().any(|d| d.name == name) {
            return Err(Simulator::dock_error(name, "a dock of that name is in force"));
        }
        let la = self.port_link(name, a)?;
        let lb = self.port_link(name, b)?;
        let fit = self.port_fit(a, b, roll_deg)?;
        let checks = [
            ("apart", fit.distance_m, tolerance.position_m, "m"),
            ("out of line", fit.axis_deg, tolerance.axis_deg, "°"),
            ("rolled", fit.roll_deg, tolerance.roll_deg, "°"),
        ];
        if let Some((what, v, t, unit)) = checks.iter().find(|(_, v, t, _)| v > t) {
            return Err(Simulator::dock_error(
                name,
                format!(
                    "ports `{}` and `{}` are {v:.4} {unit} {what} (tolerance {t} {unit})",
                    a.link, b.link
                ),
            ));
        }
        let mut poses = self.link_poses();
        if keyed {
            // b turned about its own port axis by minus the twist (the swing-twist split of
            // `port_fit`: b's rotation is ideal · swing · twist, the twist about b's x).
            let pb = poses[lb] * b.frame;
            let turned = pb * UnitQuaternion::from_axis_angle(&Vector3::x_axis(), -fit.twist_deg.to_radians());
            let t = turned * pb.inverse();
            let groups = self.link_groups();
            let group_of = |l: usize| groups.iter().position(|g| g.contains(&l));
            let (ga, gb) = (group_of(la), group_of(lb));
            let masses = self.link_masses();
            let mass = |g: Option<usize>| g.map_or(0.0, |g| groups[g].iter().map(|&l| masses[l]).sum::<f64>());
            // The lighter tree turns: b's by t, or a's by t⁻¹ (the same relative pose).
            let (group, by) = if mass(gb) <= mass(ga) {
                (gb, t)
            } else {
                (ga, t.inverse())
            };
            if let Some(g) = group {
                for &l in &groups[g] {
                    poses[l] = by * poses[l];
                }
            }
        }
        let weld = Weld {
            a: la,
            b: lb,
            rel: poses[la].inverse() * poses[lb],
        };
        let mut docks = self.docks.clone();
        docks.push(DockRecord {
            name: name.to_string(),
            weld,
            fit,
        });
        self.regroup_at(name, self.cut.clone(), docks, poses)?;
        Ok(fit)
    }

    /// Each link's mass, in the order of [`Simulator::link_poses`].
    fn link_masses(&self) -> Vec<f64> {
        self.sim_robots
            .iter()
            .flat_map(|r| r.model.links.iter().map(|l| l.mass))
            .collect()
    }

    /// Splits the dock `name`.
    pub fn detach(&mut self, name: &str) -> Result<()> {
        let Some(i) = self.docks.iter().position(|d| d.name == name) else {
            let known: Vec<&str> = self.docks.iter().map(|d| d.name.as_str()).collect();
            return Err(Simulator::dock_error(
                name,
                format!(
                    "no such dock (in force: {})",
                    if known.is_empty() {
                        "none".into()
                    } else {
                        known.join(", ")
                    }
                ),
            ));
        };
        let mut docks = self.docks.clone();
        docks.remove(i);
        self.regroup(name, self.cut.clone(), docks)
    }

    /// Cuts a robot's fixed joint (a module-to-module connection `<a>_to_<b>`), splitting the
    /// robot in two.
    pub fn cut(&mut self, robot: usize, joint: &str) -> Result<()> {
        let Some(r) = self.sim_robots.get(robot) else {
            return Err(Simulator::dock_error(
                joint,
                format!("robot {robot} does not exist (there are {})", self.robot_count()),
            ));
        };
        let fixed: Vec<(usize, &str)> = r
            .model
            .joints
            .iter()
            .enumerate()
            .filter(|(_, j)| j.kind == modbot_description::model::JointKind::Fixed)
            .map(|(i, j)| (i, j.name.as_str()))
            .collect();
        let Some(&(ji, _)) = fixed.iter().find(|(_, n)| *n == joint) else {
            let names: Vec<&str> = fixed.iter().map(|(_, n)| *n).collect();
            return Err(Simulator::dock_error(
                joint,
                format!(
                    "robot `{}` has no fixed joint of that name (it has: {})",
                    r.model.name,
                    names.join(", ")
                ),
            ));
        };
        if self.cut.contains(&(robot, ji)) {
            return Err(Simulator::dock_error(joint, "already cut"));
        }
        let mut cut = self.cut.clone();
        cut.insert((robot, ji));
        self.regroup(joint, cut, self.docks.clone())
    }

    /// The docks in force: name and fit.
    pub fn docks(&self) -> Vec<(String, DockFit)> {
        self.docks.iter().map(|d| (d.name.clone(), d.fit)).collect()
    }

    /// The links that move as one tree, tree by tree (indices in [`Simulator::link_poses`]).
    pub fn link_groups(&self) -> Vec<Vec<usize>> {
        let groups = self.layout.components();
        let mut of_body = vec![0; self.layout.bodies.len()];
        for (g, bodies) in groups.iter().enumerate() {
            for &b in bodies {
                of_body[b] = g;
            }
        }
        let mut out = vec![Vec::new(); groups.len()];
        for (l, (b, _)) in self.link_body.iter().enumerate() {
            out[of_body[*b]].push(l);
        }
        out
    }

    /// Rebuilds the world with these cuts and docks at the current poses, carrying the motion
    /// over; nothing changes if it is refused.
    fn regroup(
        &mut self,
        name: &str,
        cut: std::collections::BTreeSet<(usize, usize)>,
        docks: Vec<DockRecord>,
    ) -> Result<()> {
        let poses = self.link_poses();
        self.regroup_at(name, cut, docks, poses)
    }

    /// [`Simulator::regroup`] with the links at `poses` (a keyed latch turns one tree).
    fn regroup_at(
        &mut self,
        name: &str,
        cut: std::collections::BTreeSet<(usize, usize)>,
        docks: Vec<DockRecord>,
        poses: Vec<Isometry3<f64>>,
    ) -> Result<()> {
        let World::Native(old) = &self.world else {
            return Err(Simulator::dock_error(
                name,
                "joining and splitting at run time needs the native engine (record 0030)",
            ));
        };
        let welds: Vec<Weld> = docks.iter().map(|d| d.weld.clone()).collect();
        let robots: Vec<&crate::SimRobot> = self.sim_robots.iter().collect();
        let layout = self
            .layout
            .regroup(&robots, &poses, &cut, &welds)
            .map_err(|e| Simulator::dock_error(name, e.to_string()))?;
        if layout.joint_order().len() != layout.joints.len() {
            return Err(Simulator::dock_error(name, layout_loop_error(&layout).to_string()));
        }
        // Each link's spatial momentum [L₀; P] in the old motion, summed per new body.
        let mut momentum = vec![Vector6::zeros(); layout.bodies.len()];
        let mut offset = 0;
        for r in &self.sim_robots {
            for link in &r.model.links {
                let l = offset;
                offset += 1;
                if link.mass <= 0.0 {
                    continue;
                }
                let v = old.spatial_velocity(self.link_body[l].0);
                let (w, v0) = (v.fixed_rows::<3>(0).into_owned(), v.fixed_rows::<3>(3).into_owned());
                let (c, ic) = link.mass_properties_at(&poses[l]);
                let p = link.mass * (v0 + w.cross(&c));
                let l0 = ic * w + c.cross(&p);
                momentum[layout.link_body[l].0] += Vector6::new(l0.x, l0.y, l0.z, p.x, p.y, p.z);
            }
        }
        let angles = self.joint_positions();
        let rates = self.joint_velocities();
        let Some(mut world) = World::of(&layout, &self.settings) else {
            return Err(Simulator::dock_error(name, layout_loop_error(&layout).to_string()));
        };
        if let World::Native(w) = &mut world
            && !w.carry_over(&momentum, &angles, &rates)
        {
            return Err(Simulator::dock_error(
                name,
                "a mass matrix of the regrouped trees is singular",
            ));
        }
        let (body_names, body_com, ray_colliders) = body_tables(&layout, self.robot_count() > 1);
        self.world = world;
        self.body_names = body_names;
        self.body_com = body_com;
        self.ray_colliders = ray_colliders;
        self.link_body = layout.link_body.clone();
        self.joints = layout.joints.clone();
        self.layout = layout;
        self.cut = cut;
        self.docks = docks;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use modbot_core::{ModuleCatalog, Scenario, Topology};
    use nalgebra::{Isometry3, Vector3};

    use super::{DockTolerance, Port};
    use crate::{SimError, SimRobot, SimSettings, Simulator, StartPose};

    fn flat() -> Scenario {
        Scenario::from_yaml("name: flat\n", "flat").unwrap()
    }

    fn robot(spec: &str) -> SimRobot {
        let t = Topology::from_spec(&spec.parse().unwrap(), &ModuleCatalog::builtin()).unwrap();
        SimRobot::from_topology(&t).unwrap()
    }

    /// A port at the origin of `link` of robot `robot`.
    fn port(robot: usize, link: &str) -> Port {
        Port {
            robot,
            link: link.into(),
            frame: Isometry3::identity(),
        }
    }

    /// A tolerance that admits any fit.
    fn loose() -> DockTolerance {
        DockTolerance {
            position_m: 1.0,
            axis_deg: 180.0,
            roll_deg: 180.0,
        }
    }

    /// Drives every hinge with a travelling sine for `seconds`.
    fn wiggle(sim: &mut Simulator, seconds: f64) {
        let steps = (seconds / sim.step_size()).round() as usize;
        for _ in 0..steps {
            let t = sim.time();
            let targets: Vec<f64> = (0..sim.joint_names().len())
                .map(|k| 0.6 * (std::f64::consts::TAU * t + k as f64).sin())
                .collect();
            sim.set_targets(&targets).unwrap();
            sim.step().unwrap();
        }
    }

    /// Linear momentum, angular momentum about the origin and kinetic energy of every link.
    fn momentum(sim: &Simulator) -> (Vector3<f64>, Vector3<f64>, f64) {
        let poses = sim.link_poses();
        let twists = sim.link_twists();
        let (mut p, mut l, mut e) = (Vector3::zeros(), Vector3::zeros(), 0.0);
        let links = sim.sim_robots.iter().flat_map(|r| r.model.links.iter());
        for ((link, pose), tw) in links.zip(&poses).zip(&twists) {
            let (c, ic) = link.mass_properties_at(pose);
            let v = tw.linear + tw.angular.cross(&(c - pose.translation.vector));
            p += link.mass * v;
            l += ic * tw.angular + c.cross(&(link.mass * v));
            e += 0.5 * link.mass * v.norm_squared() + 0.5 * tw.angular.dot(&(ic * tw.angular));
        }
        (p, l, e)
    }

    /// Cutting a moving chain's module connection splits it into two trees and changes no
    /// link's pose or velocity.
    #[test]
    fn a_cut_keeps_every_velocity() {
        let mut sim = Simulator::new(&robot("pp:6"), &flat(), SimSettings::for_scenario(&flat())).unwrap();
        wiggle(&mut sim, 0.7);
        assert_eq!(sim.link_groups().len(), 1);
        let (poses, twists, angles) = (sim.link_poses(), sim.link_twists(), sim.joint_positions());
        sim.cut(0, "module_3_to_module_4").unwrap();
        let groups = sim.link_groups();
        assert_eq!(groups.len(), 2, "{groups:?}");
        // base_link, then module_1..3's two links in one part; module_4..6's in the other.
        assert_eq!(groups[0], (0..7).collect::<Vec<_>>());
        for (a, b) in poses.iter().zip(sim.link_poses()) {
            assert!((a.translation.vector - b.translation.vector).norm() < 1e-12);
            assert!(a.rotation.angle_to(&b.rotation) < 1e-9);
        }
        for (a, b) in twists.iter().zip(sim.link_twists()) {
            assert!((a.linear - b.linear).norm() < 1e-9, "{:?} vs {:?}", a.linear, b.linear);
            assert!((a.angular - b.angular).norm() < 1e-9);
        }
        for (a, b) in angles.iter().zip(sim.joint_positions()) {
            assert!((a - b).abs() < 1e-12);
        }
        wiggle(&mut sim, 1.0);
        // The halves move on their own: the joint at the cut has no say any more.
        let (tail, _) = sim.ends();
        assert!(tail.coords.iter().all(|v| v.is_finite()));
        let err = sim.cut(0, "module_3_to_module_4").unwrap_err();
        assert!(err.to_string().contains("already cut"), "{err}");
    }

    /// Joining a falling robot to one on the ground keeps the linear and angular momentum of
    /// the two and loses kinetic energy (an inelastic impact); splitting the dock again keeps
    /// every velocity.
    #[test]
    fn a_join_keeps_momentum_and_a_detach_every_velocity() {
        let robots = vec![
            (robot("pp:2"), StartPose::default()),
            (
                robot("pp:2"),
                StartPose {
                    xyz: [0.4, 0.05, 0.12],
                    yaw: 0.3,
                },
            ),
        ];
        let mut sim = Simulator::with_robots(&robots, &flat(), SimSettings::for_scenario(&flat())).unwrap();
        wiggle(&mut sim, 0.12);
        let (p0, l0, e0) = momentum(&sim);
        assert!(p0.z < -0.05, "robot 1 falls: {p0:?}");
        let (a, b) = (port(0, "module_2_front"), port(1, "module_1_back"));
        sim.attach("d", &a, &b, 0.0, &loose()).unwrap();
        assert_eq!(sim.link_groups().len(), 1);
        let (p1, l1, e1) = momentum(&sim);
        assert!((p1 - p0).norm() < 1e-9 * (1.0 + p0.norm()), "{p0:?} → {p1:?}");
        assert!((l1 - l0).norm() < 1e-9 * (1.0 + l0.norm()), "{l0:?} → {l1:?}");
        assert!(e1 < e0, "{e0} → {e1}");
        assert_eq!(sim.docks().len(), 1);
        wiggle(&mut sim, 0.2);
        let twists = sim.link_twists();
        sim.detach("d").unwrap();
        assert_eq!(sim.link_groups().len(), 2);
        for (x, y) in twists.iter().zip(sim.link_twists()) {
            assert!((x.linear - y.linear).norm() < 1e-9);
        }
        assert!(sim.docks().is_empty());
    }

    /// A keyed join turns the lighter robot about the port axis by the residual roll, by the
    /// closed form (each of its links' poses premultiplied by the rotation about the port's
    /// axis line), and leaves the heavier one where it was; a plain join moves nothing.
    #[test]
    fn a_keyed_join_turns_the_lighter_tree_onto_the_key() {
        use nalgebra::{Translation3, UnitQuaternion};
        let robots = vec![
            (robot("pp:6"), StartPose::default()),
            (
                robot("pp:2"),
                StartPose {
                    xyz: [0.0, 0.5, 0.0],
                    yaw: 0.4,
                },
            ),
        ];
        let make = || Simulator::with_robots(&robots, &flat(), SimSettings::for_scenario(&flat())).unwrap();
        let sim = make();
        let la = sim.link_names().iter().position(|n| n == "module_6_front").unwrap();
        // Robot 1's (both robots have a `module_1_back`; robot 1's links come last).
        let lb = sim.link_names().iter().rposition(|n| n == "module_1_back").unwrap();
        let poses = sim.link_poses();
        let a = port(0, "module_6_front");
        // b's face where a's mate would be, rolled 5° past the key.
        let roll = 5f64.to_radians();
        let pb = poses[la]
            * Isometry3::from_parts(
                Translation3::new(0.01, 0.0, 0.0),
                UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f64::consts::PI)
                    * UnitQuaternion::from_axis_angle(&Vector3::x_axis(), roll),
            );
        let b = Port {
            robot: 1,
            link: "module_1_back".into(),
            frame: poses[lb].inverse() * pb,
        };
        let mut plain = make();
        let fit = plain.attach("d", &a, &b, 0.0, &loose()).unwrap();
        assert!((fit.twist_deg - 5.0).abs() < 1e-9, "{fit:?}");
        for (x, y) in poses.iter().zip(plain.link_poses()) {
            assert!((x.translation.vector - y.translation.vector).norm() < 1e-9);
        }
        let mut keyed = make();
        keyed.attach_keyed("d", &a, &b, 0.0, &loose()).unwrap();
        let turn = Isometry3::from_parts(
            Translation3::from(pb.translation.vector),
            UnitQuaternion::from_axis_angle(&(pb.rotation * Vector3::x_axis()), -roll),
        ) * Isometry3::from_parts(Translation3::from(-pb.translation.vector), UnitQuaternion::identity());
        assert_eq!(keyed.link_groups().len(), 1, "one tree");
        let light = &sim.link_groups()[1];
        for (l, (x, y)) in poses.iter().zip(keyed.link_poses()).enumerate() {
            let want = if light.contains(&l) { turn * x } else { *x };
            assert!(
                (want.translation.vector - y.translation.vector).norm() < 1e-9
                    && want.rotation.angle_to(&y.rotation) < 1e-9,
                "link {l}: {want:?} vs {y:?} (was {x:?})"
            );
        }
        let after = keyed.port_fit(&a, &b, 0.0).unwrap();
        assert!(after.roll_deg < 1e-6 && after.axis_deg < 1e-6, "{after:?}");
    }

    /// Every refusal names its reason and leaves the world as it was.
    #[test]
    fn refusals_name_the_reason_and_change_nothing() {
        let robots = vec![
            (robot("pp:2"), StartPose::default()),
            (
                robot("pp:2"),
                StartPose {
                    xyz: [0.5, 0.0, 0.0],
                    yaw: 0.0,
                },
            ),
        ];
        let settings = SimSettings::for_scenario(&flat());
        let mut sim = Simulator::with_robots(&robots, &flat(), settings).unwrap();
        wiggle(&mut sim, 0.1);
        let before = sim.link_poses();
        let tol = DockTolerance::default();
        let expect = |r: crate::Result<_>, text: &str| {
            let e = r.expect_err(text);
            assert!(
                matches!(e, SimError::Dock { .. }) && e.to_string().contains(text),
                "{e}"
            );
            assert!(e.is_input_error());
        };
        expect(
            sim.attach("x", &port(0, "module_2_front"), &port(1, "module_1_back"), 0.0, &tol)
                .map(|_| ()),
            "apart",
        );
        expect(
            sim.attach("x", &port(0, "module_9_front"), &port(1, "module_1_back"), 0.0, &tol)
                .map(|_| ()),
            "has no link `module_9_front`",
        );
        expect(
            sim.attach("x", &port(0, "module_2_front"), &port(4, "module_1_back"), 0.0, &tol)
                .map(|_| ()),
            "robot 4 does not exist",
        );
        let nan = DockTolerance {
            position_m: f64::NAN,
            ..tol
        };
        expect(
            sim.attach("x", &port(0, "module_2_front"), &port(1, "module_1_back"), 0.0, &nan)
                .map(|_| ()),
            "tolerance position_m",
        );
        // Two ports of one robot: the dock would make a loop through its hinges.
        expect(
            sim.attach(
                "x",
                &port(0, "module_1_back"),
                &port(0, "module_2_front"),
                0.0,
                &loose(),
            )
            .map(|_| ()),
            "loop",
        );
        expect(sim.detach("nothing"), "no such dock (in force: none)");
        expect(sim.cut(0, "joint_1"), "no fixed joint of that name");
        expect(sim.cut(0, "joint_1"), "module_1_to_module_2");
        for (a, b) in before.iter().zip(sim.link_poses()) {
            assert_eq!(a, &b);
        }
        assert_eq!(sim.link_groups().len(), 2);
        // The rapier cross-check does not regroup at run time.
        let rapier = SimSettings::rapier(&flat());
        let mut r = Simulator::with_robots(&robots, &flat(), rapier).unwrap();
        expect(r.cut(0, "module_1_to_module_2"), "native engine");
    }
}
