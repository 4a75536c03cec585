//! sim_node: the embedded simulator on the ROS graph (see `modbot_ros::nodes::sim`).
//!
//! `sim_node --ros-args -r __ns:=/snake1 -p robot:=py:16 -p world:=worlds/flat.yaml`

fn main() -> std::process::ExitCode {
    modbot_ros::run_node("sim_node", std::env::args().skip(1).collect())
}
