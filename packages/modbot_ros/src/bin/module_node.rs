//! module_node: one module of a digital-hormone organism (see `modbot_ros::nodes::module`),
//! the same binary in every module.
//!
//! `module_node --ros-args -r __ns:=/caterpillar_10/m3 -r in/F:=/caterpillar_10/m2/out/B -p use_sim_time:=true`

fn main() -> std::process::ExitCode {
    modbot_ros::run_node("module_node", std::env::args().skip(1).collect())
}
