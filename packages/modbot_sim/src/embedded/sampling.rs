//! The devices sampled as the simulation runs: the IMU, the mast camera, the docking
//! sensors and the wheel force sensor at their rates, and the connectors' latches at every
//! physics step.

use modbot_interface::{ConnectorState, ConnectorStatus, DockingReading, ImuReading, TagFrame, Wrench};
use nalgebra::{Isometry3, UnitQuaternion, Vector3};

use super::models::{disturbed, normal, tag_detection};
use super::{EmbeddedModules, SensorFault};
use crate::dock::{DockTolerance, Port};
use crate::error::Result;

/// A due time reached this close counts as reached, s (the physics clock is steps × dt).
const DUE_SLACK_S: f64 = 1e-9;

/// The next due time of a device due at `due`, sampled at `now`, every `period`: its times
/// k × period kept, unless it fell a whole period behind (the first sample), when its
/// schedule restarts from now.
fn next_due(due: f64, now: f64, period: f64) -> f64 {
    if now - due >= period {
        now + period
    } else {
        due + period
    }
}

impl EmbeddedModules {
    /// Samples every device that is due (all of them when `first`).
    pub(super) fn sample(&mut self, first: bool) -> Result<()> {
        let now = self.sim.time();
        let poses = self.sim.link_poses();
        let mut twists = None;
        for i in 0..self.modules.len() {
            self.sample_force(i, now);
            if first || now >= self.devices[i].next_imu - DUE_SLACK_S {
                let tw = twists.get_or_insert_with(|| self.sim.link_twists());
                self.sample_imu(i, now, &poses, tw);
            }
            if first || now >= self.devices[i].next_frame - DUE_SLACK_S {
                self.capture(i, now)?;
            }
            self.deliver_frames(i, now);
            if first || now >= self.devices[i].next_docking - DUE_SLACK_S {
                self.sample_docking(i, now, &poses);
            }
            self.deliver_docking(i, now);
        }
        Ok(())
    }

    fn sample_force(&mut self, i: usize, now: f64) {
        let d = &mut self.devices[i];
        let Some(name) = &d.force_sensor else {
            return;
        };
        let f = self
            .sim
            .force_sensors_of(self.modules[i].robot)
            .remove(name)
            .unwrap_or_else(Vector3::zeros);
        if d.forces.len() == self.window {
            d.forces.pop_front();
        }
        d.forces.push_back(f);
        let m = &mut self.modules[i];
        let mut mean = d.forces.iter().sum::<Vector3<f64>>() / d.forces.len() as f64;
        match m.fault("wheel_ft") {
            Some(SensorFault::Silent) => return,
            Some(SensorFault::NotANumber) => mean.x = f64::NAN,
            None => {}
        }
        let w = Wrench {
            stamp: now,
            force: mean,
            torque: None,
        };
        m.wrench = w.check("wheel_ft").map(|_| w);
    }

    fn sample_imu(&mut self, i: usize, now: f64, poses: &[Isometry3<f64>], twists: &[crate::Twist]) {
        let model = self.models.imu;
        let d = &mut self.devices[i];
        let period = 1.0 / model.rate_hz;
        d.next_imu = next_due(d.next_imu, now, period);
        let pose = poses[d.imu_link];
        let twist = twists[d.imu_link];
        let rng = &mut d.imu_rng;
        // The walk over the time since the last sample: physics steps longer than the IMU's
        // period space the samples wider than it.
        let since = d.last_velocity.map_or(period, |(t0, _)| (now - t0).max(0.0));
        d.yaw_walk += model.yaw_walk_deg_per_sqrt_s.to_radians() * since.sqrt() * normal(rng);
        let yaw_err = d.yaw_walk + model.yaw_sigma_deg.to_radians() * normal(rng);
        let tilt = model.tilt_sigma_deg.to_radians();
        let tilt_err = UnitQuaternion::from_euler_angles(tilt * normal(rng), tilt * normal(rng), 0.0);
        let orientation = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), yaw_err) * pose.rotation * tilt_err;
        let body = pose.rotation.inverse();
        let gyro_noise = Vector3::new(normal(rng), normal(rng), normal(rng)) * model.gyro_sigma_deg_s.to_radians();
        let angular_velocity = body * twist.angular + d.gyro_bias + gyro_noise;
        let accel = match d.last_velocity {
            Some((t0, v0)) if now > t0 => (twist.linear - v0) / (now - t0),
            _ => Vector3::zeros(),
        };
        d.last_velocity = Some((now, twist.linear));
        let accel_noise = Vector3::new(normal(rng), normal(rng), normal(rng)) * model.accel_sigma_m_s2;
        let linear_acceleration = body * (accel - self.gravity) + accel_noise;
        let m = &mut self.modules[i];
        let mut r = ImuReading {
            stamp: now,
            orientation,
            angular_velocity,
            linear_acceleration,
        };
        match m.fault("imu") {
            Some(SensorFault::Silent) => return,
            Some(SensorFault::NotANumber) => r.angular_velocity.x = f64::NAN,
            None => {}
        }
        m.imu = r.check("imu").map(|_| r);
    }

    /// Takes a camera frame now; it is delivered a latency later.
    fn capture(&mut self, i: usize, now: f64) -> Result<()> {
        let timing = self.models.camera;
        let d = &mut self.devices[i];
        d.next_frame = next_due(d.next_frame, now, 1.0 / timing.rate_hz);
        let Some((camera, tags)) = &mut d.camera else {
            return Ok(());
        };
        let noise = camera.spec().noise;
        let seen = camera.capture(&self.sim, tags)?;
        let mut frame = TagFrame {
            stamp: now,
            detections: seen.into_iter().map(|s| tag_detection(s, noise)).collect(),
        };
        match self.modules[i].fault("camera") {
            Some(SensorFault::Silent) => return Ok(()),
            Some(SensorFault::NotANumber) => frame.stamp = f64::NAN,
            None => {}
        }
        let checked = frame.check("camera").map(|_| frame);
        d.frames.push_back((now + timing.latency_s, checked));
        Ok(())
    }

    fn deliver_frames(&mut self, i: usize, now: f64) {
        let d = &mut self.devices[i];
        while d.frames.front().is_some_and(|(at, _)| *at <= now + DUE_SLACK_S) {
            if let Some((_, f)) = d.frames.pop_front() {
                self.modules[i].tags = f.map(Some);
            }
        }
    }

    /// Each port's docking sensor reads the nearest partner face it can see.
    fn sample_docking(&mut self, i: usize, now: f64, poses: &[Isometry3<f64>]) {
        let model = self.models.docking;
        self.devices[i].next_docking = next_due(self.devices[i].next_docking, now, 1.0 / model.rate_hz);
        let faces = self.faces(poses);
        for p in 0..self.modules[i].ports.len() {
            let own = self.port_pose(&self.modules[i].ports[p].port, poses);
            let mut seen: Vec<(f64, String, Isometry3<f64>)> = Vec::new();
            for (module, name, port, pose) in &faces {
                if *module == i {
                    continue;
                }
                let rel = own.inverse() * pose;
                let v = rel.translation.vector;
                let r = v.norm();
                if r > model.range_m {
                    continue;
                }
                // In the cone (a face at the port's own origin is in it), turned towards us.
                let in_cone = r < 1e-6 || v.x / r >= model.half_fov_deg.to_radians().cos();
                let facing = -(rel.rotation * Vector3::x()).x >= model.max_incidence_deg.to_radians().cos();
                if !(in_cone && facing) || self.blocked(&self.modules[i].ports[p].port, port, &own, pose) {
                    continue;
                }
                seen.push((r, format!("{}/{name}", self.modules[*module].name), rel));
            }
            seen.sort_by(|a, b| a.0.total_cmp(&b.0));
            let rng = &mut self.devices[i].dock_rng;
            let mut readings: Vec<DockingReading> = seen
                .into_iter()
                .map(|(_, partner, rel)| DockingReading {
                    stamp: now,
                    partner,
                    pose: disturbed(&rel, rng, model.sigma_m, model.sigma_deg.to_radians()),
                })
                .collect();
            let sensor = format!("dock/{}", self.modules[i].ports[p].name);
            match self.modules[i].fault(&sensor) {
                Some(SensorFault::Silent) => continue,
                Some(SensorFault::NotANumber) => match readings.first_mut() {
                    Some(r) => r.stamp = f64::NAN,
                    None => readings.push(DockingReading {
                        stamp: f64::NAN,
                        partner: "?".into(),
                        pose: Isometry3::identity(),
                    }),
                },
                None => {}
            }
            let at = now + model.latency_s;
            self.modules[i].ports[p].docking_queue.push_back((at, readings));
        }
    }

    fn deliver_docking(&mut self, i: usize, now: f64) {
        for p in &mut self.modules[i].ports {
            while p.docking_queue.front().is_some_and(|(at, _)| *at <= now + DUE_SLACK_S) {
                if let Some((_, readings)) = p.docking_queue.pop_front() {
                    let sensor = format!("dock/{}", p.name);
                    p.docking = readings.iter().try_for_each(|r| r.check(&sensor)).map(|_| readings);
                }
            }
        }
    }

    /// Every module's distinct port faces: (module, port name, port, world pose). Two names
    /// for one face (the wheel-foot's foot port, BF and BS) give the face once, by its first
    /// name.
    fn faces(&self, poses: &[Isometry3<f64>]) -> Vec<(usize, String, Port, Isometry3<f64>)> {
        let mut out: Vec<(usize, String, Port, Isometry3<f64>)> = Vec::new();
        for (m, module) in self.modules.iter().enumerate() {
            for p in &module.ports {
                if out.iter().any(|(om, _, op, _)| *om == m && *op == p.port) {
                    continue;
                }
                out.push((m, p.name.clone(), p.port.clone(), self.port_pose(&p.port, poses)));
            }
        }
        out
    }

    fn port_link(&self, port: &Port) -> usize {
        self.sim
            .links_of(port.robot)
            .find(|&l| self.sim.link_names()[l] == port.link)
            .unwrap_or(0)
    }

    fn port_pose(&self, port: &Port, poses: &[Isometry3<f64>]) -> Isometry3<f64> {
        poses[self.port_link(port)] * port.frame
    }

    /// Whether anything but the two ports' own links stands between the two faces.
    fn blocked(&self, a: &Port, b: &Port, pa: &Isometry3<f64>, pb: &Isometry3<f64>) -> bool {
        let skip = [
            self.sim.link_body[self.port_link(a)].0,
            self.sim.link_body[self.port_link(b)].0,
        ];
        let from = nalgebra::Point3::from(pa.translation.vector);
        let to = nalgebra::Point3::from(pb.translation.vector);
        self.sim.segment_blocked(from, to, &skip, &[])
    }

    /// Every engaging connector: latched to a partner face within capture range, or failed
    /// once its time is up.
    pub(super) fn latch(&mut self) -> Result<()> {
        let now = self.sim.time();
        let latch = self.models.latch;
        for i in 0..self.modules.len() {
            for p in 0..self.modules[i].ports.len() {
                let Some(since) = self.modules[i].ports[p].engage_at else {
                    continue;
                };
                match self.capture_partner(i, p)? {
                    Ok((j, q, dock)) => self.latched(i, p, j, q, dock, now),
                    Err(nearest) if now - since >= latch.engage_s - DUE_SLACK_S => {
                        let port = &mut self.modules[i].ports[p];
                        port.engage_at = None;
                        port.status = ConnectorStatus {
                            stamp: now,
                            state: ConnectorState::Failed,
                            partner: None,
                            reason: Some(format!(
                                "no partner face within {} m and {}° in {} s{nearest}",
                                latch.capture_m, latch.capture_deg, latch.engage_s
                            )),
                        };
                    }
                    Err(_) => {}
                }
            }
        }
        Ok(())
    }

    fn latched(&mut self, i: usize, p: usize, j: usize, q: usize, dock: String, now: f64) {
        let (a, b) = (
            format!("{}/{}", self.modules[i].name, self.modules[i].ports[p].name),
            format!("{}/{}", self.modules[j].name, self.modules[j].ports[q].name),
        );
        for (m, k, partner) in [(i, p, b), (j, q, a)] {
            let port = &mut self.modules[m].ports[k];
            port.engage_at = None;
            port.dock = Some(dock.clone());
            port.status = ConnectorStatus {
                stamp: now,
                state: ConnectorState::Latched,
                partner: Some(partner),
                reason: None,
            };
        }
    }

    /// The partner face module i's port p catches now, welded: Ok((module, port, dock name));
    /// or Err with a note on the nearest face.
    fn capture_partner(&mut self, i: usize, p: usize) -> Result<std::result::Result<(usize, usize, String), String>> {
        let latch = self.models.latch;
        let own = self.modules[i].ports[p].port.clone();
        let own_keyless = self.modules[i].ports[p].keyless;
        if self.face_taken(i, &own) {
            return Ok(Err("; its face is latched under another name".into()));
        }
        let mut nearest: Option<(f64, String)> = None;
        for j in 0..self.modules.len() {
            if j == i {
                continue;
            }
            for q in 0..self.modules[j].ports.len() {
                let theirs = &self.modules[j].ports[q];
                if theirs.dock.is_some() || self.face_taken(j, &theirs.port) {
                    continue;
                }
                let (theirs, keyless) = (theirs.port.clone(), theirs.keyless || own_keyless);
                let fit = self.sim.port_fit(&theirs, &own, 0.0)?;
                let label = format!("{}/{}", self.modules[j].name, self.modules[j].ports[q].name);
                if nearest.as_ref().is_none_or(|n| fit.distance_m < n.0) {
                    nearest = Some((
                        fit.distance_m,
                        format!("; nearest {label} at {:.3} m, {:.1}°", fit.distance_m, fit.axis_deg),
                    ));
                }
                if fit.distance_m > latch.capture_m || fit.axis_deg > latch.capture_deg {
                    continue;
                }
                // A keyed face mates at a quarter turn; a keyless one at the roll it meets
                // (the twist's sign is the swing-twist's: the one that leaves no residual).
                let roll = if keyless {
                    let residual = |r: f64| {
                        self.sim
                            .port_fit(&theirs, &own, r)
                            .map_or(f64::INFINITY, |f| f.roll_deg)
                    };
                    if residual(fit.twist_deg) <= residual(-fit.twist_deg) {
                        fit.twist_deg
                    } else {
                        -fit.twist_deg
                    }
                } else {
                    (fit.twist_deg / 90.0).round() * 90.0
                };
                let tolerance = DockTolerance {
                    position_m: latch.capture_m,
                    axis_deg: latch.capture_deg,
                    roll_deg: latch.capture_deg,
                };
                let name = format!("{}/{}+{label}", self.modules[i].name, self.modules[i].ports[p].name);
                match self.sim.attach_keyed(&name, &theirs, &own, roll, &tolerance) {
                    Ok(_) => return Ok(Ok((j, q, name))),
                    Err(e) => {
                        nearest = Some((0.0, format!("; {label} refused: {e}")));
                    }
                }
            }
        }
        Ok(Err(nearest.map(|n| n.1).unwrap_or_default()))
    }

    /// Whether another name of the same face of module j is latched.
    fn face_taken(&self, j: usize, port: &Port) -> bool {
        self.modules[j]
            .ports
            .iter()
            .any(|o| o.port == *port && o.dock.is_some())
    }
}
