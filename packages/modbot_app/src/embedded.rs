//! The wheel-foot modules on the embedded binding of the robot interface (decision record
//! 0058): each lone module of a world is one [`modbot_behaviours::Module`] with its IMU on
//! the foot plate, its mast camera (record 0047's geometry and noise) reporting the other
//! modules' DetPoints and the world's tagged objects, its five ports' connectors and docking
//! sensors, and its wheel force sensor. `modbot_sim::embedded` models the devices; this file
//! says which devices a wheel-foot module has.

use modbot_core::scenario::Tag;
use modbot_core::{ModuleCatalog, Scenario, Topology};
use modbot_sim::embedded::{ModuleSetup, SensorModels, both_modes};
use modbot_sim::{
    CameraNoise, CameraSpec, Detectable, Drive, EmbeddedModules, Mark, Port, SimRobot, SimSettings, Simulator,
    StartPose,
};
use nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion};

/// The wheel-foot module's foot plate, its base: where its IMU sits and what the truth follows.
pub use modbot_behaviours::scan::FOOT_LINK;
use modbot_behaviours::scan::{CAMERA_LINK, DETPOINT_IN_MAST_M, LENS_M, MAST_LINK, module_id};

/// The lone module's prefix in the simulator's joint and link names.
pub const PREFIX: &str = "m1";

/// The camera's horizontal field of view, deg: two neighbouring 30° stops overlap by half.
pub const HFOV_DEG: f64 = 60.0;
/// Its vertical field of view, deg: level, it sees the centre of a lath's bar 0.13 m up from
/// 0.17 m on, and the ground from 0.17 m on.
pub const VFOV_DEG: f64 = 45.0;
/// Its range, m.
pub const RANGE_M: f64 = 2.0;
/// Its noise (record 0047): σ 1 cm in range, 0.25° in azimuth and in elevation.
pub const NOISE: CameraNoise = CameraNoise {
    range_sigma_m: 0.01,
    bearing_sigma_deg: 0.25,
};
/// The mast camera of robot `robot`, a lone wheel-foot module.
pub fn wheelfoot_camera(robot: usize, noise: CameraNoise) -> CameraSpec {
    CameraSpec {
        name: module_id(robot),
        robot,
        link: CAMERA_LINK.into(),
        pose: Isometry3::from_parts(
            Translation3::new(LENS_M[0], LENS_M[1], LENS_M[2]),
            UnitQuaternion::identity(),
        ),
        hfov_deg: HFOV_DEG,
        vfov_deg: VFOV_DEG,
        range_m: RANGE_M,
        see_through: vec![MAST_LINK.into()],
        noise,
    }
}

/// A tagged object of a world: name, tag, the point a camera sees, its published yaw (rad)
/// and the indices of its own boxes in [`Scenario::boxes`].
#[derive(Debug, Clone, PartialEq)]
pub struct TaggedObject {
    /// Its name.
    pub name: String,
    /// Its tag.
    pub tag: Tag,
    /// The point a camera sees, world frame, m.
    pub point: [f64; 3],
    /// Its yaw, rad.
    pub yaw: f64,
    /// Its boxes.
    pub boxes: Vec<usize>,
}

/// The world's tagged obstacles and markers.
pub fn tagged_objects(world: &Scenario) -> Vec<TaggedObject> {
    let mut out = Vec::new();
    let mut first_box = 0;
    for o in &world.obstacles {
        // Scenario::boxes: a lath is a bar and two posts, anything else one box.
        let n = if o.kind == modbot_core::scenario::ObstacleKind::Lath {
            3
        } else {
            1
        };
        if let Some(tag) = o.tag {
            out.push(TaggedObject {
                name: o.name.clone(),
                tag,
                point: o.tagged_point(),
                yaw: o.yaw_deg.to_radians(),
                boxes: (first_box..first_box + n).collect(),
            });
        }
        first_box += n;
    }
    for m in &world.markers {
        out.push(TaggedObject {
            name: m.name.clone(),
            tag: m.tag,
            point: [m.position_m[0], m.position_m[1], m.height_m],
            yaw: m.yaw_deg.to_radians(),
            boxes: Vec::new(),
        });
    }
    out
}

/// What module `me` of `modules` may detect: every other module's DetPoint and the world's
/// tagged objects.
pub fn detectables(me: usize, modules: usize, objects: &[TaggedObject]) -> Vec<Detectable> {
    let mut out: Vec<Detectable> = (0..modules)
        .filter(|&j| j != me)
        .map(|j| Detectable {
            id: module_id(j),
            mark: Mark::Link {
                robot: j,
                link: MAST_LINK.into(),
                point: Point3::new(DETPOINT_IN_MAST_M[0], DETPOINT_IN_MAST_M[1], DETPOINT_IN_MAST_M[2]),
                see_through: vec![CAMERA_LINK.into()],
            },
        })
        .collect();
    out.extend(objects.iter().map(|o| Detectable {
        id: o.name.clone(),
        mark: Mark::World {
            point: Point3::new(o.point[0], o.point[1], o.point[2]),
            see_through_boxes: o.boxes.clone(),
        },
    }));
    out
}

/// A port of a module as the simulator docks it, from the module catalog (Table 3.1's frames).
pub fn port(catalog: &ModuleCatalog, robot: usize, name: &str) -> Result<Port, String> {
    let kind = catalog
        .modules
        .get("wheelfoot")
        .ok_or("the module catalog has no `wheelfoot` kind")?;
    let p = kind
        .ports
        .get(name)
        .ok_or_else(|| format!("the wheel-foot module has no port `{name}`"))?;
    Ok(Port {
        robot,
        link: format!("{PREFIX}_{}", p.link),
        frame: modbot_core::catalog::pose_deg(p.xyz, p.rpy_deg),
    })
}

pub use modbot_behaviours::docking::port_in_foot;

/// A simulator holding one lone wheel-foot module at each of `world`'s `robot_starts`
/// (entry i is Module#(i+1)).
pub fn fleet_simulator(world: &Scenario) -> Result<Simulator, String> {
    if world.robot_starts.is_empty() {
        return Err(format!(
            "world `{}` has no robot_starts: the mission needs the modules' start poses",
            world.name
        ));
    }
    lone_modules(world)
}

/// A simulator holding one lone wheel-foot module at each of `world`'s `robot_starts`, or at
/// its `robot_start` when it has none.
fn lone_modules(world: &Scenario) -> Result<Simulator, String> {
    let catalog = ModuleCatalog::builtin();
    let topology = Topology::resolve("wheelfoot", &catalog).map_err(|e| e.to_string())?;
    let robot = SimRobot::from_topology(&topology).map_err(|e| e.to_string())?;
    let starts: Vec<StartPose> = if world.robot_starts.is_empty() {
        vec![StartPose::of_scenario(world)]
    } else {
        world
            .robot_starts
            .iter()
            .map(|s| StartPose {
                xyz: s.xyz,
                yaw: s.yaw_deg.to_radians(),
            })
            .collect()
    };
    let robots: Vec<(SimRobot, StartPose)> = starts.into_iter().map(|s| (robot.clone(), s)).collect();
    Simulator::with_robots(&robots, world, SimSettings::for_scenario(world)).map_err(|e| e.to_string())
}

/// The wheel force sensor's name in the simulator.
pub const FORCE_SENSOR: &str = "m1_wheel_sensor";

/// The module's FrontJoint as a servo: the catalog's hip servo, as the quadruped runs it.
fn front_joint_servo(catalog: &ModuleCatalog) -> Result<Drive, String> {
    let topology = Topology::resolve("quadruped", catalog).map_err(|e| e.to_string())?;
    let robot = SimRobot::from_topology(&topology).map_err(|e| e.to_string())?;
    let k = robot
        .joint_names
        .iter()
        .position(|n| n == "role1_front_joint")
        .ok_or("the quadruped has no joint `role1_front_joint`")?;
    Ok(robot.drives[k])
}

/// The devices of lone module `robot` of `modules`, its camera reporting the other modules
/// and `world`'s tagged objects with `noise`.
pub fn wheelfoot_setup(
    catalog: &ModuleCatalog,
    robot: usize,
    modules: usize,
    world: &Scenario,
    noise: CameraNoise,
) -> Result<ModuleSetup, String> {
    let topology = Topology::resolve("wheelfoot", catalog).map_err(|e| e.to_string())?;
    let lone = SimRobot::from_topology(&topology).map_err(|e| e.to_string())?;
    let kind = catalog
        .modules
        .get("wheelfoot")
        .ok_or("the module catalog has no `wheelfoot` kind")?;
    let mut ports = Vec::new();
    for name in kind.ports.keys() {
        let p = port(catalog, robot, name)?;
        let keyless = p.link == format!("{PREFIX}_wheel_front");
        ports.push((name.clone(), p, keyless));
    }
    Ok(ModuleSetup {
        name: format!("m{}", robot + 1),
        robot,
        imu_link: FOOT_LINK.into(),
        camera: Some((
            wheelfoot_camera(robot, noise),
            detectables(robot, modules, &tagged_objects(world)),
        )),
        ports,
        force_sensor: Some(FORCE_SENSOR.into()),
        drives: both_modes(&lone.drives, Some(front_joint_servo(catalog)?)),
    })
}

/// One lone wheel-foot module at each of `world`'s `robot_starts` (its `robot_start` when it
/// has none), on the embedded binding with `models`, the devices' errors seeded with `seed`.
pub fn wheelfoot_modules(
    world: &Scenario,
    models: SensorModels,
    noise: CameraNoise,
    seed: u64,
) -> Result<EmbeddedModules, String> {
    let catalog = ModuleCatalog::builtin();
    let sim = lone_modules(world)?;
    let n = sim.robot_count();
    let setups = (0..n)
        .map(|r| wheelfoot_setup(&catalog, r, n, world, noise))
        .collect::<Result<Vec<_>, _>>()?;
    EmbeddedModules::new(sim, world.gravity, setups, models, seed).map_err(|e| e.to_string())
}

/// The index of a periodic tick's next firing: the one after `k`, or, when the clock has run
/// past it (a world that runs by itself, faster than the behaviour's tick), the first one
/// after `now` — as a ROS timer that fell behind fires once and keeps its phase.
pub fn next_tick(t0: f64, k: u64, dt: f64, now: f64) -> u64 {
    let due = ((now - t0) / dt).floor();
    if due.is_finite() && due >= 0.0 && due < u64::MAX as f64 {
        (k + 1).max(due as u64 + 1)
    } else {
        k + 1
    }
}

/// The world's truth behind a stage, for reports only (where the modules ended, how far the
/// mission's estimates were off): the simulator itself, or the ground truth a simulator
/// publishes as Gazebo's pose publisher does. A behaviour never reads it.
pub trait GroundTruth {
    /// Each module's foot plate in the world, in module order.
    fn feet(&self) -> Result<Vec<Isometry3<f64>>, String>;
}

/// The simulator of lone wheel-foot modules: each robot's foot link.
impl GroundTruth for Simulator {
    fn feet(&self) -> Result<Vec<Isometry3<f64>>, String> {
        let poses = self.link_poses();
        (0..self.robot_count())
            .map(|r| {
                self.links_of(r)
                    .find(|&l| self.link_names()[l] == FOOT_LINK)
                    .map(|l| poses[l])
                    .ok_or_else(|| format!("module {} has no link `{FOOT_LINK}`", r + 1))
            })
            .collect()
    }
}

/// Where a behaviour runs: the modules it sees, its clock, and the world's truth that only a
/// report reads, where the stage has it. The embedded binding is one stage; the robot
/// interface's ROS binding (`modbot_ros`: over an in-process bus with the simulator served on
/// the far side, or over ROS 2 with sim_node, Gazebo or real modules there) is another — the
/// same mission runs on each.
pub trait Stage {
    /// The modules as the behaviours see them.
    fn modules(&mut self) -> &mut dyn modbot_behaviours::Modules;
    /// The same, to read.
    fn modules_ref(&self) -> &dyn modbot_behaviours::Modules;
    /// The stage's clock, s: the simulator's, or the ROS clock (`/clock` under
    /// `use_sim_time`).
    fn time(&self) -> f64;
    /// The world's truth, for reports only; `None` where nothing offers it (real modules).
    fn truth(&self) -> Option<&dyn GroundTruth>;
    /// Runs (or waits for) the world to time `t` (s) and brings what the modules read up to
    /// it.
    fn advance_to(&mut self, t: f64) -> Result<(), String>;
}

impl Stage for EmbeddedModules {
    fn modules(&mut self) -> &mut dyn modbot_behaviours::Modules {
        self
    }
    fn modules_ref(&self) -> &dyn modbot_behaviours::Modules {
        self
    }
    fn time(&self) -> f64 {
        EmbeddedModules::simulator(self).time()
    }
    fn truth(&self) -> Option<&dyn GroundTruth> {
        Some(EmbeddedModules::simulator(self))
    }
    fn advance_to(&mut self, t: f64) -> Result<(), String> {
        EmbeddedModules::advance_to(self, t).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod catalog_tests {
    use super::*;

    /// The module catalog's `sensors` of the wheel-foot kind (what its robot description
    /// declares to Gazebo) are the devices the embedded binding models: the IMU on the foot
    /// with the standard model's rate and gyro and accelerometer errors, the camera on the
    /// tilt link at the lens with this file's fields of view and range and the standard
    /// camera rate.
    #[test]
    fn the_catalog_declares_the_devices_the_embedded_binding_models() {
        let catalog = ModuleCatalog::builtin();
        let kind = &catalog.modules["wheelfoot"];
        let models = SensorModels::standard();
        let imu = kind.sensors.imu.as_ref().unwrap();
        assert_eq!(format!("{PREFIX}_{}", imu.link), FOOT_LINK);
        assert_eq!(imu.rate_hz, models.imu.rate_hz);
        assert_eq!(imu.gyro_sigma_deg_s, models.imu.gyro_sigma_deg_s);
        assert_eq!(imu.gyro_bias_sigma_deg_s, models.imu.gyro_bias_sigma_deg_s);
        assert_eq!(imu.accel_sigma_m_s2, models.imu.accel_sigma_m_s2);
        let cam = kind.sensors.camera.as_ref().unwrap();
        let spec = wheelfoot_camera(0, NOISE);
        assert_eq!(format!("{PREFIX}_{}", cam.link), spec.link);
        let lens = spec.pose.translation.vector;
        assert_eq!(cam.xyz, [lens.x, lens.y, lens.z]);
        assert_eq!(
            (cam.hfov_deg, cam.vfov_deg, cam.range_m),
            (spec.hfov_deg, spec.vfov_deg, spec.range_m)
        );
        assert_eq!(cam.rate_hz, models.camera.rate_hz);
    }
}
