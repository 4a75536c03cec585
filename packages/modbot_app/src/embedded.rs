//! The wheel-foot modules on the embedded binding of the robot interface (decision record
//! 0058): each lone module of a world is one [`modbot_behaviours::Module`] with its IMU on
//! the foot plate, its mast camera (record 0047's geometry and noise) reporting the other
//! modules' DetPoints and the world's tagged objects, its five ports' connectors and docking
//! sensors, and its wheel force sensor. `modbot_sim::embedded` models the devices; this file
//! says which devices a wheel-foot module has.

use modbot_core::{ModuleCatalog, Scenario, Topology};
use modbot_sim::embedded::{ModuleSetup, SensorModels, both_modes};
use modbot_sim::{CameraNoise, Drive, EmbeddedModules, SimRobot, SimSettings, Simulator, StartPose};

use crate::assemble::{PREFIX, port};
use crate::scan::{FOOT_LINK, detectables, tagged_objects, wheelfoot_camera};

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
    let robots: Vec<(SimRobot, StartPose)> = starts.iter().map(|s| (robot.clone(), *s)).collect();
    let sim = Simulator::with_robots(&robots, world, SimSettings::for_scenario(world)).map_err(|e| e.to_string())?;
    let setups = (0..robots.len())
        .map(|r| wheelfoot_setup(&catalog, r, robots.len(), world, noise))
        .collect::<Result<Vec<_>, _>>()?;
    EmbeddedModules::new(sim, world.gravity, setups, models, seed).map_err(|e| e.to_string())
}
