//! A node's start-up parameters checked without starting it: what `modbot launch` does for
//! every modbot_ros node of a launch before it starts any (decision record 0044), so a bad
//! combination (a gait the robot cannot run, a world file that is not there) fails at launch
//! with the reason instead of one node exiting while the others run.

use crate::nodes;
use crate::params::{NodeConfig, ParamMap};
use crate::{RosArgs, start_node};

/// Checks the parameters node `exec` (one of [`crate::NODES`]) would start with, given its
/// command line after the executable (`--ros-args` with `-r __node:=`, `-r __ns:=`,
/// `--params-file` and `-p`, as `modbot launch` passes it). The parameter map is built by
/// the node's own start-up path ([`start_node`]: declared defaults, then the parameter files'
/// sections for this node's name and namespace, then `-p`), and validated by the node's
/// `NodeConfig::from_params`; only joining the graph is left out. The error is the node's own
/// message.
pub fn check_node_params(exec: &str, argv: &[String]) -> Result<(), String> {
    fn no_graph(_: &str, _: &RosArgs, _: &ParamMap) -> crate::Result<()> {
        Ok(())
    }
    fn check<C: NodeConfig>(name: &str, argv: &[String]) -> Result<(), String> {
        start_node::<C, ()>(name, argv.to_vec(), no_graph)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
    match exec {
        "gait_node" => check::<nodes::gait::GaitNodeConfig>(exec, argv),
        "sim_node" => check::<nodes::sim::SimNodeConfig>(exec, argv),
        "planner_node" => check::<nodes::planner::PlannerNodeConfig>(exec, argv),
        "executive_node" => check::<nodes::executive::ExecutiveNodeConfig>(exec, argv),
        "module_node" => check::<nodes::module::ModuleNodeConfig>(exec, argv),
        "teleop_node" => check::<nodes::teleop::TeleopNodeConfig>(exec, argv),
        "mission_node" => check::<nodes::mission::MissionNodeConfig>(exec, argv),
        other => Err(format!(
            "modbot_ros has no executable `{other}` (it has {})",
            crate::NODES.join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_gait_the_robot_cannot_run_is_refused_with_the_gait_librarys_reason() {
        let bad = check_node_params(
            "gait_node",
            &argv(&["--ros-args", "-p", "robot:=py_16", "-p", "gait:=caterpillar"]),
        )
        .expect_err("caterpillar is a pitch-pitch gait");
        assert!(bad.contains("caterpillar"), "{bad}");
        check_node_params(
            "gait_node",
            &argv(&["--ros-args", "-p", "robot:=py_16", "-p", "gait:=sidewinding"]),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let e = check_node_params("gait_node", &argv(&["--ros-args", "-p", "colour:=red"])).expect_err("unknown");
        assert!(e.contains("unknown parameter `colour`"), "{e}");
        let e = check_node_params("mapper_node", &[]).expect_err("no such node");
        assert!(e.contains("mapper_node"), "{e}");
    }

    /// A parameter file's section applies by the node's name and namespace, as in the node.
    #[test]
    fn parameter_files_apply_by_name_and_namespace() {
        let dir = std::env::temp_dir().join(format!("modbot-check-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("tmp");
        let f = dir.join("p.yaml");
        std::fs::write(&f, "/snake1/gait_node:\n  ros__parameters:\n    gait: moonwalk\n").expect("write");
        let file = f.display().to_string();
        // Another namespace: the section does not apply.
        check_node_params(
            "gait_node",
            &argv(&["--ros-args", "-r", "__ns:=/other", "--params-file", &file]),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let e = check_node_params(
            "gait_node",
            &argv(&["--ros-args", "-r", "__ns:=/snake1", "--params-file", &file]),
        )
        .expect_err("moonwalk");
        assert!(e.contains("moonwalk"), "{e}");
    }
}
