//! planner_node: grid A* and the deliberative planner on the ROS graph (see
//! `modbot_ros::nodes::planner`).
//!
//! `planner_node --ros-args -p scenario:=worlds/obstacle_course.yaml`

fn main() -> std::process::ExitCode {
    modbot_ros::run_node("planner_node", std::env::args().skip(1).collect())
}
