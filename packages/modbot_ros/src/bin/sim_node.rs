//! sim_node: the embedded simulator on the ROS graph (see `modbot_ros::nodes::sim`).
//!
//! `sim_node --ros-args -r __ns:=/snake1 -p robot:=py:16 -p world:=worlds/flat.yaml`

fn main() -> std::process::ExitCode {
    modbot_ros::main_of::<modbot_ros::nodes::sim::SimNodeConfig>("sim_node", modbot_ros::nodes::sim::run)
}
