//! gait_node: gait commands in, joint position targets out (see `modbot_ros::nodes::gait`).
//!
//! `gait_node --ros-args -r __ns:=/snake1 -p robot:=py:16 -p gait:=sidewinding`

fn main() -> std::process::ExitCode {
    modbot_ros::run_node("gait_node", std::env::args().skip(1).collect())
}
