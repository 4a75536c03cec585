//! What controllers act on: the embedded simulator, or a simulator in another process
//! (modbot_ros's remote plant, the ROS mission: decision record 0052). The mission, the
//! assembly, the scan and the cameras' lock-on are written against this trait; the
//! [`Simulator`] implements it directly.

use std::ops::Range;

use nalgebra::Isometry3;

use crate::camera::{CameraSpec, Detectable, Detection};
use crate::dock::{DockFit, DockTolerance, Port};
use crate::robot::Drive;
use crate::world::Simulator;

/// A world of robots that time advances in: joints commanded and read, links' poses,
/// docks made and broken, the cameras' views. Errors are messages naming what failed.
pub trait Plant {
    /// Simulated time, s.
    fn time(&self) -> f64;
    /// Steps until `t`, s, the targets in force.
    fn advance_to(&mut self, t: f64) -> Result<(), String>;
    /// Names of the driven joints, in command order.
    fn joint_names(&self) -> &[String];
    /// Names of the links, in [`Plant::link_poses`] order.
    fn link_names(&self) -> &[String];
    /// Number of robots.
    fn robot_count(&self) -> usize;
    /// A robot's joints in command order.
    fn joints_of(&self, robot: usize) -> Range<usize>;
    /// A robot's links.
    fn links_of(&self, robot: usize) -> Range<usize>;
    /// Joint angles (or positions), command order.
    fn joint_positions(&self) -> Vec<f64>;
    /// Joint speeds, command order.
    fn joint_velocities(&self) -> Vec<f64>;
    /// Every link's world pose.
    fn link_poses(&self) -> Vec<Isometry3<f64>>;
    /// The targets in force, command order.
    fn targets(&self) -> &[f64];
    /// Sets every joint's target, command order.
    fn set_targets(&mut self, targets: &[f64]) -> Result<(), String>;
    /// Changes how a joint is driven.
    fn set_drive(&mut self, joint: usize, drive: Drive) -> Result<(), String>;
    /// How far two ports are from mating with the given roll.
    fn port_fit(&self, a: &Port, b: &Port, roll_deg: f64) -> Result<DockFit, String>;
    /// Joins port `b` to port `a` within `tolerance`, or says why not.
    fn attach(
        &mut self,
        name: &str,
        a: &Port,
        b: &Port,
        roll_deg: f64,
        tolerance: &DockTolerance,
    ) -> Result<DockFit, String>;
    /// Splits the dock `name`.
    fn detach(&mut self, name: &str) -> Result<(), String>;
    /// What a camera sees now, noise-free, in the order of `marks`.
    fn camera_view(&self, spec: &CameraSpec, marks: &[Detectable]) -> Result<Vec<Detection>, String>;
}

impl Plant for Simulator {
    fn time(&self) -> f64 {
        Simulator::time(self)
    }

    fn advance_to(&mut self, t: f64) -> Result<(), String> {
        Simulator::advance_to(self, t).map_err(|e| e.to_string())
    }

    fn joint_names(&self) -> &[String] {
        Simulator::joint_names(self)
    }

    fn link_names(&self) -> &[String] {
        Simulator::link_names(self)
    }

    fn robot_count(&self) -> usize {
        Simulator::robot_count(self)
    }

    fn joints_of(&self, robot: usize) -> Range<usize> {
        Simulator::joints_of(self, robot)
    }

    fn links_of(&self, robot: usize) -> Range<usize> {
        Simulator::links_of(self, robot)
    }

    fn joint_positions(&self) -> Vec<f64> {
        Simulator::joint_positions(self)
    }

    fn joint_velocities(&self) -> Vec<f64> {
        Simulator::joint_velocities(self)
    }

    fn link_poses(&self) -> Vec<Isometry3<f64>> {
        Simulator::link_poses(self)
    }

    fn targets(&self) -> &[f64] {
        Simulator::targets(self)
    }

    fn set_targets(&mut self, targets: &[f64]) -> Result<(), String> {
        Simulator::set_targets(self, targets).map_err(|e| e.to_string())
    }

    fn set_drive(&mut self, joint: usize, drive: Drive) -> Result<(), String> {
        Simulator::set_drive(self, joint, drive).map_err(|e| e.to_string())
    }

    fn port_fit(&self, a: &Port, b: &Port, roll_deg: f64) -> Result<DockFit, String> {
        Simulator::port_fit(self, a, b, roll_deg).map_err(|e| e.to_string())
    }

    fn attach(
        &mut self,
        name: &str,
        a: &Port,
        b: &Port,
        roll_deg: f64,
        tolerance: &DockTolerance,
    ) -> Result<DockFit, String> {
        Simulator::attach(self, name, a, b, roll_deg, tolerance).map_err(|e| e.to_string())
    }

    fn detach(&mut self, name: &str) -> Result<(), String> {
        Simulator::detach(self, name).map_err(|e| e.to_string())
    }

    fn camera_view(&self, spec: &CameraSpec, marks: &[Detectable]) -> Result<Vec<Detection>, String> {
        Simulator::camera_view(self, spec, marks).map_err(|e| e.to_string())
    }
}
