//! executive_node: executes strategic plans through gait commands (see
//! `modbot_ros::nodes::executive`).
//!
//! `executive_node --ros-args -r __ns:=/snake1 -p configuration:=snake`

fn main() -> std::process::ExitCode {
    modbot_ros::run_node("executive_node", std::env::args().skip(1).collect())
}
