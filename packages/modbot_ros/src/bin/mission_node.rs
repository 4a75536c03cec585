//! mission_node: the strategic mission's six module controllers on the ROS graph (see
//! `modbot_ros::nodes::mission`).
//!
//! `mission_node --ros-args -p world:=worlds/strategic_mission.yaml` (with
//! `sim_node --ros-args -p modules:=true -p world:=worlds/strategic_mission.yaml`; with
//! `-p use_sim_time:=true` on mission_node)

fn main() -> std::process::ExitCode {
    modbot_ros::run_node("mission_node", std::env::args().skip(1).collect())
}
