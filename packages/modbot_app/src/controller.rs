//! Which controller drives a run, and building it for a robot.

use std::collections::BTreeMap;
use std::path::PathBuf;

use modbot_core::Actuator;
use modbot_core::Topology;
use modbot_gaits::cpg::{CpgController, CpgSettings};
use modbot_gaits::modular::{self, ModularRobot};
use modbot_gaits::{Controller, GaitLibrary, GaitPlayer, PoseSequence};

use crate::error::Result;

/// A controller as the user names it.
#[derive(Debug, Clone, PartialEq)]
pub enum ControllerSpec {
    /// A gait or preset of the library with parameter overrides (keys or aliases), played
    /// from rest through the gait player (ramp, blend, slew limit).
    Gait {
        /// Gait or preset name.
        name: String,
        /// Overrides, in order.
        params: Vec<(String, f64)>,
    },
    /// A pose sequence file.
    PoseSequence(PathBuf),
}

/// A controller ready to run, with what the report should say about it.
pub struct BuiltController {
    /// The controller.
    pub controller: Box<dyn Controller>,
    /// Its name (gait, preset or sequence).
    pub name: String,
    /// Resolved parameters (sine gaits), for the run's summary.
    pub params: BTreeMap<String, f64>,
    /// Notes from the gait library (the source's stability and limit remarks).
    pub notes: Vec<String>,
}

impl std::fmt::Debug for BuiltController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltController")
            .field("name", &self.name)
            .field("params", &self.params)
            .field("notes", &self.notes)
            .finish()
    }
}

/// Builds `spec` for `robot`, starting from the joint positions `start` (rad).
pub fn build_controller(
    spec: &ControllerSpec,
    robot: &Topology,
    library: &GaitLibrary,
    start: &[f64],
) -> Result<BuiltController> {
    match (spec, modular_robot(robot)) {
        (ControllerSpec::Gait { name, params }, Some(kind)) => {
            // `quadruped/goto` names the robot too; it must be this one.
            let gait = match name.split_once('/') {
                Some((r, g)) if r == kind.name() => g,
                _ => name.as_str(),
            };
            let params: BTreeMap<String, f64> = params.iter().cloned().collect();
            let controller = modular::build_for(kind, gait, &robot.joint_names(), &params)?;
            Ok(BuiltController {
                controller,
                name: gait.to_string(),
                params,
                notes: Vec::new(),
            })
        }
        (ControllerSpec::Gait { name, params }, None) => {
            if let Some(settings) = library.cpg(name, params) {
                return cpg_controller(name, &settings?, robot);
            }
            let built = library.build(name, robot, params)?;
            let speeds = robot.max_speeds_rad_s();
            let mut player = GaitPlayer::new(start.to_vec(), speeds, library.transition);
            let name = built.generator.name.clone();
            player.start(Box::new(built.generator));
            Ok(BuiltController {
                controller: Box::new(player),
                name,
                params: built.params,
                notes: built.notes,
            })
        }
        (ControllerSpec::PoseSequence(path), _) => {
            let text = modbot_core::error::read_text(path)?;
            let seq = PoseSequence::from_yaml(&text, &path.display().to_string(), robot)?;
            Ok(BuiltController {
                name: Controller::name(&seq).to_string(),
                controller: Box::new(seq),
                params: BTreeMap::new(),
                notes: Vec::new(),
            })
        }
    }
}

/// The CPG on a chain of position servos, one oscillator per joint in command order.
fn cpg_controller(name: &str, settings: &CpgSettings, robot: &Topology) -> Result<BuiltController> {
    let joints = robot.joints();
    if let Some(j) = joints.iter().find(|j| !matches!(j.def.actuator, Actuator::Position(_))) {
        return Err(crate::AppError::BadInput(format!(
            "the CPG drives position servos; joint `{}` of {} is not one",
            j.name, robot.name
        )));
    }
    let limits = joints.iter().map(|j| j.def.limits_rad()).collect();
    Ok(BuiltController {
        controller: Box::new(CpgController::new(settings, limits)?),
        name: name.to_string(),
        params: settings.values.clone(),
        notes: Vec::new(),
    })
}

/// Which of the wheel-foot robots `robot` is, if it is one: every module a `wheelfoot`, one
/// module (the lone module) or six (the quadruped, or the wheeled vehicle when its wheels
/// are speed driven). Their controllers are the event-driven ones of `modbot_gaits::modular`.
pub fn modular_robot(robot: &Topology) -> Option<ModularRobot> {
    if robot.modules.is_empty() || !robot.modules.iter().all(|m| m.kind == "wheelfoot") {
        return None;
    }
    match robot.len() {
        1 => Some(ModularRobot::Wheelfoot),
        6 if robot
            .joints()
            .iter()
            .any(|j| j.module >= 2 && matches!(j.def.actuator, Actuator::Velocity(_))) =>
        {
            Some(ModularRobot::Wheeled)
        }
        6 => Some(ModularRobot::Quadruped),
        _ => None,
    }
}
