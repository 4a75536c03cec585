//! A run as a ROS 2 recording: an MCAP file (the format of rosbag2's default storage and of
//! Foxglove) with the messages `sim_node` would publish — `/tf`, `/joint_states`, `/odom`,
//! `/robot_description` — the commands the controller sent (`/position_controller/commands`,
//! `/velocity_controller/commands` for wheels), the gait it ran (`/gait/command`, as gait_node takes it) and the
//! world's obstacles as markers (`/world_markers`). Messages are CDR with their `ros2msg`
//! schemas, as rosbag2 writes them, stamped with the simulated time (log time = stamp).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use mcap::records::MessageHeader;
use modbot_core::Scenario;
use modbot_core::scenario::ObstacleKind;
use modbot_msgs::RosMessage;
use modbot_msgs::modbot_msgs::msg::GaitCommand;
use modbot_msgs::std_msgs::msg::{ColorRGBA, Float64MultiArray, Header, String as StringMsg};
use modbot_msgs::visualization_msgs::msg::{Marker, MarkerArray};
use modbot_sim::{Drive, Simulator};
use nalgebra::{Isometry3, Translation3, UnitQuaternion};

use crate::error::{AppError, Result};
use crate::ros_frames::{ODOM_FRAME, SimFrames, pose3};

/// The topics a recording holds, with their types (`pkg/msg/Name`).
pub const TOPICS: [(&str, &str); 8] = [
    ("/robot_description", "std_msgs/msg/String"),
    ("/gait/command", "modbot_msgs/msg/GaitCommand"),
    ("/world_markers", "visualization_msgs/msg/MarkerArray"),
    ("/tf", "tf2_msgs/msg/TFMessage"),
    ("/joint_states", "sensor_msgs/msg/JointState"),
    ("/odom", "nav_msgs/msg/Odometry"),
    ("/position_controller/commands", "std_msgs/msg/Float64MultiArray"),
    ("/velocity_controller/commands", "std_msgs/msg/Float64MultiArray"),
];

/// What was run, for `/gait/command`: the gait or preset and its parameters as given.
#[derive(Debug, Clone, PartialEq)]
pub struct GaitRun {
    /// Gait or preset name.
    pub gait: String,
    /// Parameters by the names `modbot gaits` lists, in its units.
    pub params: Vec<(String, f64)>,
}

/// An MCAP recording being written.
pub struct Recording {
    writer: mcap::Writer<BufWriter<File>>,
    path: PathBuf,
    frames: SimFrames,
    /// Channel ids by topic.
    channels: BTreeMap<&'static str, u16>,
    sequence: u32,
    /// Per joint (command order): a velocity drive (its target goes to the velocity
    /// controller) or not.
    velocity: Vec<bool>,
    messages: u64,
}

fn mcap_error(path: &Path, e: impl std::fmt::Display) -> AppError {
    AppError::Write {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Nanoseconds of a simulated time (s ≥ 0).
fn nanos(t: f64) -> u64 {
    (t.max(0.0) * 1e9).round() as u64
}

impl Recording {
    /// Creates `path` and writes what a run starts with, at the simulator's time: the robot's
    /// URDF, the gait (when one runs) and the world's obstacles.
    pub fn create(
        path: &Path,
        sim: &Simulator,
        urdf: &str,
        gait: Option<&GaitRun>,
        world: &Scenario,
    ) -> Result<Recording> {
        let file = File::create(path).map_err(|e| mcap_error(path, e))?;
        let mut writer = mcap::WriteOptions::new()
            .profile("ros2")
            // One thread: a run's recording is small and a run may share the machine.
            .compression_threads(0)
            .create(BufWriter::new(file))
            .map_err(|e| mcap_error(path, e))?;
        let velocity: Vec<bool> = sim
            .drives()
            .iter()
            .map(|d| matches!(d, Drive::Velocity { .. }))
            .collect();
        let mut channels = BTreeMap::new();
        for (topic, ty) in TOPICS {
            if topic == "/velocity_controller/commands" && !velocity.iter().any(|v| *v) {
                continue;
            }
            if topic == "/position_controller/commands" && velocity.iter().all(|v| *v) {
                continue;
            }
            if topic == "/gait/command" && gait.is_none() {
                continue;
            }
            let definition = definition_of(ty).ok_or_else(|| mcap_error(path, format!("no definition of {ty}")))?;
            let schema = writer
                .add_schema(ty, "ros2msg", definition.as_bytes())
                .map_err(|e| mcap_error(path, e))?;
            let channel = writer
                .add_channel(schema, topic, "cdr", &BTreeMap::new())
                .map_err(|e| mcap_error(path, e))?;
            channels.insert(topic, channel);
        }
        let mut rec = Recording {
            writer,
            path: path.to_path_buf(),
            frames: SimFrames::of(sim),
            channels,
            sequence: 0,
            velocity,
            messages: 0,
        };
        let t = sim.time();
        rec.write("/robot_description", t, &StringMsg { data: urdf.to_string() })?;
        if let Some(g) = gait {
            let cmd = GaitCommand {
                gait: g.gait.clone(),
                param_names: g.params.iter().map(|(k, _)| k.clone()).collect(),
                param_values: g.params.iter().map(|(_, v)| *v).collect(),
                ..GaitCommand::default()
            };
            rec.write("/gait/command", t, &cmd)?;
        }
        let markers = world_markers(world, SimFrames::stamp(sim))?;
        rec.write("/world_markers", t, &markers)?;
        Ok(rec)
    }

    fn write<M: RosMessage>(&mut self, topic: &str, t: f64, m: &M) -> Result<()> {
        let Some(&channel_id) = self.channels.get(topic) else {
            return Ok(());
        };
        let data = modbot_msgs::cdr::to_bytes(m).map_err(|e| mcap_error(&self.path, format!("{topic}: {e}")))?;
        let header = MessageHeader {
            channel_id,
            sequence: self.sequence,
            log_time: nanos(t),
            publish_time: nanos(t),
        };
        self.sequence = self.sequence.wrapping_add(1);
        self.writer
            .write_to_known_channel(&header, &data)
            .map_err(|e| mcap_error(&self.path, e))?;
        self.messages += 1;
        Ok(())
    }

    /// Records one control tick: tf, joint_states and odom of the simulator now, and the
    /// joint targets the controller sent (command order), split by controller.
    pub fn record(&mut self, sim: &Simulator, targets: &[f64]) -> Result<()> {
        let t = sim.time();
        let tf = self.frames.tf(sim, true);
        self.write("/tf", t, &tf)?;
        let js = self.frames.joint_state(sim);
        self.write("/joint_states", t, &js)?;
        let odom = self.frames.odometry(sim);
        self.write("/odom", t, &odom)?;
        if targets.len() != self.velocity.len() {
            return Err(mcap_error(
                &self.path,
                format!("{} joint targets for {} joints", targets.len(), self.velocity.len()),
            ));
        }
        for (topic, velocity) in [
            ("/position_controller/commands", false),
            ("/velocity_controller/commands", true),
        ] {
            let data: Vec<f64> = targets
                .iter()
                .zip(&self.velocity)
                .filter(|(_, v)| **v == velocity)
                .map(|(x, _)| *x)
                .collect();
            if !data.is_empty() {
                self.write(
                    topic,
                    t,
                    &Float64MultiArray {
                        data,
                        ..Float64MultiArray::default()
                    },
                )?;
            }
        }
        Ok(())
    }

    /// Writes the summary and closes the file; the number of messages written.
    pub fn finish(mut self) -> Result<u64> {
        self.writer.finish().map_err(|e| mcap_error(&self.path, e))?;
        Ok(self.messages)
    }
}

/// The `ros2msg` definition of a generated message type (`pkg/msg/Name`).
fn definition_of(ty: &str) -> Option<&'static str> {
    use modbot_msgs::RosMessage as R;
    Some(match ty {
        "std_msgs/msg/String" => <StringMsg as R>::DEFINITION,
        "modbot_msgs/msg/GaitCommand" => <GaitCommand as R>::DEFINITION,
        "visualization_msgs/msg/MarkerArray" => <MarkerArray as R>::DEFINITION,
        "tf2_msgs/msg/TFMessage" => <modbot_msgs::tf2_msgs::msg::TFMessage as R>::DEFINITION,
        "sensor_msgs/msg/JointState" => <modbot_msgs::sensor_msgs::msg::JointState as R>::DEFINITION,
        "nav_msgs/msg/Odometry" => <modbot_msgs::nav_msgs::msg::Odometry as R>::DEFINITION,
        "std_msgs/msg/Float64MultiArray" => <Float64MultiArray as R>::DEFINITION,
        _ => return None,
    })
}

/// The world's obstacles and walls as cube markers in odom (the ground left out: it is the
/// grid every viewer draws), coloured by kind.
pub fn world_markers(world: &Scenario, stamp: modbot_msgs::builtin_interfaces::msg::Time) -> Result<MarkerArray> {
    let mut markers = Vec::new();
    for (i, b) in world.boxes()?.iter().enumerate() {
        let pose = Isometry3::from_parts(
            Translation3::new(b.center[0], b.center[1], b.center[2]),
            UnitQuaternion::from_euler_angles(0.0, 0.0, b.yaw),
        );
        let (r, g, bl) = match b.kind {
            ObstacleKind::Wall => (0.55, 0.55, 0.58),
            ObstacleKind::GroundObstacle => (0.80, 0.55, 0.30),
            ObstacleKind::Lath => (0.35, 0.55, 0.80),
            ObstacleKind::Bump => (0.75, 0.70, 0.35),
            ObstacleKind::Rough => (0.45, 0.60, 0.40),
        };
        markers.push(Marker {
            header: Header {
                stamp: stamp.clone(),
                frame_id: ODOM_FRAME.into(),
            },
            ns: "world".into(),
            id: i32::try_from(i).unwrap_or(i32::MAX),
            r#type: Marker::CUBE,
            action: Marker::ADD,
            pose: pose3(&pose),
            scale: modbot_msgs::geometry_msgs::msg::Vector3 {
                x: b.size[0],
                y: b.size[1],
                z: b.size[2],
            },
            color: ColorRGBA { r, g, b: bl, a: 1.0 },
            text: b.name.clone(),
            ..Marker::default()
        });
    }
    Ok(MarkerArray { markers })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_topic_has_a_definition_naming_its_dependencies() {
        for (topic, ty) in TOPICS {
            let d = definition_of(ty).unwrap_or_else(|| panic!("{topic}: {ty}"));
            assert!(!d.is_empty());
        }
        let tf = definition_of("tf2_msgs/msg/TFMessage").expect("tf");
        assert!(tf.starts_with("geometry_msgs/TransformStamped[] transforms\n"), "{tf}");
        for dep in [
            "MSG: geometry_msgs/TransformStamped\n",
            "MSG: std_msgs/Header\n",
            "MSG: builtin_interfaces/Time\n",
            "MSG: geometry_msgs/Transform\n",
            "MSG: geometry_msgs/Vector3\n",
            "MSG: geometry_msgs/Quaternion\n",
        ] {
            assert_eq!(tf.matches(dep).count(), 1, "{dep} in {tf}");
        }
        let gait = definition_of("modbot_msgs/msg/GaitCommand").expect("gait");
        assert!(
            gait.starts_with("int8 DIRECTION_AS_GIVEN=0\nint8 DIRECTION_FORWARD=1\nint8 DIRECTION_REVERSE=-1\n"),
            "{gait}"
        );
        assert!(gait.contains("\nfloat64 speed_scale\n"), "{gait}");
    }
}
