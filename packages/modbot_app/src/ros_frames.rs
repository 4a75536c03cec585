//! The simulator's state as the ROS messages a robot publishes: `joint_states`, `odom` and
//! `tf` (odom → base_link, then the URDF's link tree). One set of builders for `sim_node` (over DDS) and
//! for `modbot run --mcap` (into a recording), so a recording shows what the node would have
//! published.

use modbot_msgs::builtin_interfaces::msg::Time;
use modbot_msgs::geometry_msgs::msg::{
    Point, Pose, PoseWithCovariance, Quaternion, Transform, TransformStamped, Twist, TwistWithCovariance, Vector3,
};
use modbot_msgs::nav_msgs::msg::Odometry;
use modbot_msgs::sensor_msgs::msg::JointState;
use modbot_msgs::std_msgs::msg::Header;
use modbot_msgs::tf2_msgs::msg::TFMessage;
use modbot_sim::Simulator;
use nalgebra::Isometry3;

/// The fixed frame odometry and tf start from (REP 105).
pub const ODOM_FRAME: &str = "odom";
/// The robot's base frame (REP 105; the root link of a modbot URDF).
pub const BASE_FRAME: &str = "base_link";

/// A geometry_msgs/Pose of an isometry.
pub fn pose3(p: &Isometry3<f64>) -> Pose {
    let q = &p.rotation;
    Pose {
        position: Point {
            x: p.translation.x,
            y: p.translation.y,
            z: p.translation.z,
        },
        orientation: Quaternion {
            x: q.i,
            y: q.j,
            z: q.k,
            w: q.w,
        },
    }
}

/// A geometry_msgs/Vector3.
pub fn vector3(v: &nalgebra::Vector3<f64>) -> Vector3 {
    Vector3 { x: v.x, y: v.y, z: v.z }
}

/// A TransformStamped of `child` in `parent`.
pub fn transform(stamp: Time, parent: &str, child: &str, p: &Isometry3<f64>) -> TransformStamped {
    TransformStamped {
        header: Header {
            stamp,
            frame_id: parent.into(),
        },
        child_frame_id: child.into(),
        transform: Transform {
            translation: vector3(&p.translation.vector),
            rotation: pose3(p).orientation,
        },
    }
}

/// odom → base_link odometry: the pose in odom, the twist (linear, angular) in base_link.
pub fn odometry(
    stamp: Time,
    pose: &Isometry3<f64>,
    linear: &nalgebra::Vector3<f64>,
    angular: &nalgebra::Vector3<f64>,
) -> Odometry {
    Odometry {
        header: Header {
            stamp,
            frame_id: ODOM_FRAME.into(),
        },
        child_frame_id: BASE_FRAME.into(),
        pose: PoseWithCovariance {
            pose: pose3(pose),
            covariance: [0.0; 36],
        },
        twist: TwistWithCovariance {
            twist: Twist {
                linear: vector3(linear),
                angular: vector3(angular),
            },
            covariance: [0.0; 36],
        },
    }
}

/// The messages of a simulated robot (the first of a simulator's robots), stamped with the
/// simulator's clock.
#[derive(Debug, Clone)]
pub struct SimFrames {
    /// The link odometry reports ([`Simulator::base_link`]).
    base: usize,
    /// The first robot's links (indices of [`Simulator::link_poses`]) with their names and
    /// their URDF parents (indices).
    links: Vec<(usize, String, Option<usize>)>,
}

impl SimFrames {
    /// The frames of `sim`'s first robot.
    pub fn of(sim: &Simulator) -> SimFrames {
        let names = sim.link_names();
        let parents = sim.link_parents();
        SimFrames {
            base: sim.base_link(),
            links: sim.links_of(0).map(|l| (l, names[l].clone(), parents[l])).collect(),
        }
    }

    /// The simulator's clock as a ROS time.
    pub fn stamp(sim: &Simulator) -> Time {
        Time::from_secs_f64(sim.time())
    }

    /// The index of base_link among the simulator's links.
    pub fn base(&self) -> usize {
        self.base
    }

    /// joint_states: positions and the engine's own joint rates, every robot's joints.
    pub fn joint_state(&self, sim: &Simulator) -> JointState {
        JointState {
            header: Header {
                stamp: Self::stamp(sim),
                frame_id: String::new(),
            },
            name: sim.joint_names().to_vec(),
            position: sim.joint_positions(),
            velocity: sim.joint_velocities(),
            effort: Vec::new(),
        }
    }

    /// base_link's pose in odom (the world).
    pub fn base_pose(&self, sim: &Simulator) -> Isometry3<f64> {
        sim.link_poses()[self.base]
    }

    /// odom: base_link's pose and its twist from the engine, in base_link's frame.
    pub fn odometry(&self, sim: &Simulator) -> Odometry {
        let p = self.base_pose(sim);
        let t = sim.link_twists()[self.base];
        let inv = p.rotation.inverse();
        odometry(Self::stamp(sim), &p, &(inv * t.linear), &(inv * t.angular))
    }

    /// tf: odom → base_link, then, when `links`, every other link of the robot in its URDF
    /// parent's frame, the tree robot_state_publisher (and a viewer reading the URDF's fixed
    /// joints) builds, so no frame has two parents; a root other than base_link hangs from
    /// base_link.
    pub fn tf(&self, sim: &Simulator, links: bool) -> TFMessage {
        let poses = sim.link_poses();
        let base = poses[self.base];
        let stamp = Self::stamp(sim);
        let mut transforms = vec![transform(stamp.clone(), ODOM_FRAME, BASE_FRAME, &base)];
        if links {
            let names = sim.link_names();
            for (i, name, parent) in &self.links {
                if *i == self.base {
                    continue;
                }
                let (frame, pose) = match parent {
                    Some(p) => (names[*p].as_str(), poses[*p]),
                    None => (BASE_FRAME, base),
                };
                transforms.push(transform(stamp.clone(), frame, name, &(pose.inverse() * poses[*i])));
            }
        }
        TFMessage { transforms }
    }
}
