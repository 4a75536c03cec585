//! teleop_node: cmd_vel (Twist) and joy (Joy) in, gait commands out, with a dead-man (see
//! `modbot_ros::nodes::teleop`).
//!
//! `teleop_node --ros-args -r __ns:=/snake1 -p robot:=py:8 -p timeout_s:=0.5`

fn main() -> std::process::ExitCode {
    modbot_ros::run_node("teleop_node", std::env::args().skip(1).collect())
}
