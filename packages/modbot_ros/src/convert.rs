//! Conversions between ROS messages and modbot_planner's plain types, at the nodes' edge:
//! poses, odometry, occupancy grids, strategic plans, routes (Path, StrategicPlan,
//! MarkerArray) and drives (GaitCommand).

use modbot_msgs::builtin_interfaces::msg::Duration as RosDuration;
use modbot_msgs::geometry_msgs::msg::{Point, Pose, PoseStamped, Quaternion, Vector3};
use modbot_msgs::modbot_msgs::msg::{GaitCommand, StrategicPlan, SubGoal};
use modbot_msgs::nav_msgs::msg::{OccupancyGrid, Odometry, Path};
use modbot_msgs::std_msgs::msg::{ColorRGBA, Header};
use modbot_msgs::visualization_msgs::msg::{Marker, MarkerArray};
// The simulator's messages are built in modbot_app (shared with `modbot run --mcap`).
pub use modbot_app::ros_frames::{odometry, pose3, transform};
use modbot_planner::executive::{Drive, TargetRow};
use modbot_planner::goal::{PlannedRow, Route};
use modbot_planner::grid::GridMap;
use modbot_planner::sequencer::Pose2;
use modbot_planner::strategic::Action;

/// Heading (yaw about z) of a pose's orientation, rad.
pub fn yaw_of(p: &Pose) -> f64 {
    let q = &p.orientation;
    (2.0 * (q.w * q.z + q.x * q.y)).atan2(1.0 - 2.0 * (q.y * q.y + q.z * q.z))
}

/// The planar pose of a geometry_msgs/Pose (x, y, yaw).
pub fn pose2(p: &Pose) -> Pose2 {
    Pose2 {
        x: p.position.x,
        y: p.position.y,
        yaw: yaw_of(p),
    }
}

/// The planar pose an odometry message reports.
pub fn odom_pose(o: &Odometry) -> Pose2 {
    pose2(&o.pose.pose)
}

/// A geometry_msgs/Pose at (x, y, 0) with heading `yaw`.
pub fn pose_msg(p: Pose2) -> Pose {
    Pose {
        position: Point { x: p.x, y: p.y, z: 0.0 },
        orientation: Quaternion {
            x: 0.0,
            y: 0.0,
            z: (p.yaw / 2.0).sin(),
            w: (p.yaw / 2.0).cos(),
        },
    }
}

/// (x, y) of a stamped pose.
pub fn xy(p: &PoseStamped) -> [f64; 2] {
    [p.pose.position.x, p.pose.position.y]
}

/// A nav_msgs/OccupancyGrid as a grid map (cells at or above `occupied_threshold`
/// occupied); malformed grids and rotated origins are refused.
pub fn grid_map(m: &OccupancyGrid, occupied_threshold: i8) -> Result<GridMap, String> {
    let (info, o) = (&m.info, &m.info.origin);
    let q = &o.orientation;
    if q.x.abs() > 1e-6 || q.y.abs() > 1e-6 || q.z.abs() > 1e-6 {
        return Err("rotated map origins are not supported (yaw must be 0)".into());
    }
    GridMap::from_occupancy(
        info.width as usize,
        info.height as usize,
        f64::from(info.resolution),
        [o.position.x, o.position.y],
        &m.data,
        occupied_threshold,
    )
    .map_err(|e| e.to_string())
}

fn action_code(a: Action) -> u8 {
    match a {
        Action::Drive => SubGoal::ACTION_DRIVE,
        Action::PassOver => SubGoal::ACTION_PASS_OVER,
        Action::PassUnder => SubGoal::ACTION_PASS_UNDER,
    }
}

/// The rows of a modbot_msgs/StrategicPlan as the executive takes them; an unknown action
/// code refuses the plan, naming the row (1-based).
pub fn target_rows(m: &StrategicPlan) -> Result<Vec<TargetRow>, String> {
    m.rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let action = match r.action {
                SubGoal::ACTION_DRIVE => Action::Drive,
                SubGoal::ACTION_PASS_OVER => Action::PassOver,
                SubGoal::ACTION_PASS_UNDER => Action::PassUnder,
                a => return Err(format!("row {}: unknown action {a}", i + 1)),
            };
            Ok(TargetRow {
                configuration: r.configuration.clone(),
                ability: r.ability,
                action,
                gait: r.gait.clone(),
                target: pose2(&r.target),
                path: r.path.iter().map(|p| [p.x, p.y]).collect(),
            })
        })
        .collect()
}

/// The GaitCommand for a drive: the request the in-process loop sends
/// (`modbot_app::navigate::gait_request`), on the wire.
pub fn gait_command(d: &Drive) -> GaitCommand {
    request_command(&modbot_app::navigate::gait_request(d))
}

/// The GaitCommand of a gait request (the gait driver's plain terms on the wire); the inverse
/// of [`gait_request`].
pub fn request_command(r: &modbot_app::GaitRequest) -> GaitCommand {
    GaitCommand {
        gait: r.gait.clone(),
        param_names: r.params.iter().map(|p| p.0.clone()).collect(),
        param_values: r.params.iter().map(|p| p.1).collect(),
        speed_scale: r.speed_scale,
        direction: r.direction,
        transition_time: r.transition_s,
        stop: r.stop,
    }
}

/// A route in messages: the path, the sub-goal rows and their markers.
#[derive(Debug, Clone, Default)]
pub struct RouteMsgs {
    /// Through every sub-goal (or the grid path).
    pub path: Path,
    /// Sub-goal rows (empty for a grid route).
    pub strategic: StrategicPlan,
    /// DELETEALL, then a sphere and a label per sub-goal.
    pub markers: MarkerArray,
}

/// A route as messages stamped with `header`.
pub fn route_msgs(r: &Route, header: &Header) -> RouteMsgs {
    let stamped = |p: Pose2| PoseStamped {
        header: header.clone(),
        pose: pose_msg(p),
    };
    let rows = r.rows.iter().map(subgoal_msg).collect();
    let mut markers = vec![Marker {
        header: header.clone(),
        action: Marker::DELETEALL,
        ..Default::default()
    }];
    for (i, row) in r.rows.iter().enumerate() {
        markers.extend(row_markers(i, row, header));
    }
    RouteMsgs {
        path: Path {
            header: header.clone(),
            poses: r.path.iter().map(|p| stamped(*p)).collect(),
        },
        strategic: StrategicPlan {
            header: header.clone(),
            rows,
            estimated_time: r.estimated_time_s,
        },
        markers: MarkerArray { markers },
    }
}

fn subgoal_msg(row: &PlannedRow) -> SubGoal {
    let r = &row.subgoal;
    SubGoal {
        configuration: r.configuration.clone(),
        reference: r.reference.clone(),
        lateral_offset: r.lateral_m,
        longitudinal_offset: r.longitudinal_m,
        yaw_offset: r.yaw_deg.to_radians(),
        ability: r.ability,
        action: action_code(r.action),
        gait: r.gait.clone(),
        target: pose_msg(row.target),
        path: r
            .path
            .iter()
            .map(|p| Point {
                x: p[0],
                y: p[1],
                z: 0.0,
            })
            .collect(),
    }
}

fn row_markers(i: usize, row: &PlannedRow, header: &Header) -> [Marker; 2] {
    const PALETTE: [(f32, f32, f32); 5] = [
        (0.12, 0.47, 0.71),
        (1.0, 0.5, 0.05),
        (0.17, 0.63, 0.17),
        (0.84, 0.15, 0.16),
        (0.58, 0.4, 0.74),
    ];
    let r = &row.subgoal;
    let k = r.configuration.bytes().map(usize::from).sum::<usize>() % PALETTE.len();
    let (cr, cg, cb) = PALETTE[k];
    let base = Marker {
        header: header.clone(),
        ns: "subgoals".into(),
        id: (2 * i) as i32,
        r#type: Marker::SPHERE,
        action: Marker::ADD,
        pose: pose_msg(row.target),
        scale: Vector3 {
            x: 0.08,
            y: 0.08,
            z: 0.08,
        },
        color: ColorRGBA {
            r: cr,
            g: cg,
            b: cb,
            a: 0.9,
        },
        lifetime: RosDuration { sec: 0, nanosec: 0 },
        ..Default::default()
    };
    let mut label = base.clone();
    label.id += 1;
    label.r#type = Marker::TEXT_VIEW_FACING;
    label.pose.position.z = 0.15;
    label.scale.z = 0.06;
    label.color = ColorRGBA {
        r: 1.0,
        g: 1.0,
        b: 1.0,
        a: 1.0,
    };
    let action = match r.action {
        Action::Drive => String::new(),
        a => format!(" {a:?}"),
    };
    label.text = format!("{} {}{action}", i + 1, r.configuration);
    [base, label]
}

/// An isometry from a geometry_msgs/Pose: refused when a number is not finite or the
/// quaternion is far from unit length (|q| outside 1 ± 1 %); a nearly unit one is normalised.
pub fn isometry(p: &Pose) -> Result<nalgebra::Isometry3<f64>, String> {
    let (t, q) = (&p.position, &p.orientation);
    let all = [t.x, t.y, t.z, q.x, q.y, q.z, q.w];
    if !all.iter().all(|v| v.is_finite()) {
        return Err(format!("pose is not finite: {all:?}"));
    }
    let quat = nalgebra::Quaternion::new(q.w, q.x, q.y, q.z);
    if (quat.norm() - 1.0).abs() > 0.01 {
        return Err(format!("orientation is not a unit quaternion (|q| = {})", quat.norm()));
    }
    Ok(nalgebra::Isometry3::from_parts(
        nalgebra::Translation3::new(t.x, t.y, t.z),
        nalgebra::UnitQuaternion::from_quaternion(quat),
    ))
}

/// A GaitCommand in the gait driver's plain terms (the driver checks the values).
pub fn gait_request(c: &GaitCommand) -> Result<modbot_app::GaitRequest, String> {
    if c.param_names.len() != c.param_values.len() {
        return Err(format!(
            "{} parameter names but {} values",
            c.param_names.len(),
            c.param_values.len()
        ));
    }
    Ok(modbot_app::GaitRequest {
        stop: c.stop,
        gait: c.gait.clone(),
        params: c
            .param_names
            .iter()
            .cloned()
            .zip(c.param_values.iter().copied())
            .collect(),
        speed_scale: c.speed_scale,
        direction: c.direction,
        transition_s: c.transition_time,
    })
}

/// The gait driver's status as a GaitState.
pub fn gait_state(s: &modbot_app::GaitStatus, robot: &str, header: Header) -> modbot_msgs::modbot_msgs::msg::GaitState {
    modbot_msgs::modbot_msgs::msg::GaitState {
        header,
        gait: s.gait.clone(),
        robot: robot.to_string(),
        phase: s.phase,
        cycle_count: s.cycles,
        period: s.period_s,
        param_names: s.params.iter().map(|(k, _)| k.clone()).collect(),
        param_values: s.params.iter().map(|(_, v)| *v).collect(),
        holding: s.holding,
        transitioning: s.transitioning,
    }
}

/// Joint targets as a ForwardCommandController command (one dimension, `joints`).
pub fn joint_commands(targets: &[f64]) -> modbot_msgs::std_msgs::msg::Float64MultiArray {
    use modbot_msgs::std_msgs::msg::{Float64MultiArray, MultiArrayDimension, MultiArrayLayout};
    let n = targets.len() as u32;
    Float64MultiArray {
        layout: MultiArrayLayout {
            dim: vec![MultiArrayDimension {
                label: "joints".into(),
                size: n,
                stride: n,
            }],
            data_offset: 0,
        },
        data: targets.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use modbot_planner::executive::Direction;

    /// Poses survive the round trip through messages; plans keep their rows and markers.
    #[test]
    fn poses_plans_and_drives_convert_both_ways() {
        for yaw in [-3.0, -1.0, 0.0, 0.5, 3.0] {
            let p = Pose2 { x: 1.5, y: -2.0, yaw };
            let back = pose2(&pose_msg(p));
            assert!(
                (back.x - p.x).abs() < 1e-12 && (back.yaw - yaw).abs() < 1e-12,
                "{back:?}"
            );
        }
        let row = PlannedRow {
            subgoal: modbot_planner::strategic::SubGoal {
                configuration: "snake".into(),
                reference: "target".into(),
                lateral_m: 0.0,
                longitudinal_m: 0.0,
                yaw_deg: 90.0,
                ability: true,
                action: Action::PassOver,
                gait: "turning".into(),
                path: vec![[0.5, 0.0]],
            },
            target: Pose2 {
                x: 1.0,
                y: 0.0,
                yaw: 0.3,
            },
        };
        let route = Route {
            path: vec![Pose2 {
                x: 0.0,
                y: 0.0,
                yaw: 0.0,
            }],
            rows: vec![row],
            estimated_time_s: 12.0,
        };
        let m = route_msgs(&route, &Header::default());
        assert_eq!(m.strategic.rows[0].action, SubGoal::ACTION_PASS_OVER);
        assert!((m.strategic.rows[0].yaw_offset - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
        assert_eq!(m.markers.markers[0].action, Marker::DELETEALL);
        assert_eq!(m.markers.markers.len(), 3);
        assert_eq!(m.markers.markers[2].text, "1 snake PassOver");
        let rows = target_rows(&m.strategic).expect("rows");
        assert_eq!(
            (rows[0].action, rows[0].path.clone()),
            (Action::PassOver, vec![[0.5, 0.0]])
        );
        assert!((rows[0].target.yaw - 0.3).abs() < 1e-12);
        let mut bad = m.strategic.clone();
        bad.rows[0].action = 9;
        assert!(
            target_rows(&bad)
                .expect_err("action 9")
                .contains("row 1: unknown action 9")
        );
        let c = gait_command(&Drive::Gait {
            gait: "caterpillar".into(),
            params: vec![("A".into(), 30.0)],
            direction: Direction::Reverse,
        });
        assert_eq!(
            (c.gait.as_str(), c.param_values, c.direction, c.stop),
            ("caterpillar", vec![30.0], GaitCommand::DIRECTION_REVERSE, false)
        );
        assert!(gait_command(&Drive::Stop).stop);
        // The fields a drive does not set are the message's defaults (speed scale 1, the
        // library's transition), and the command reads back as the in-process request.
        assert_eq!(
            gait_command(&Drive::Stop),
            GaitCommand {
                stop: true,
                ..GaitCommand::default()
            }
        );
        assert_eq!((c.speed_scale, c.transition_time), (1.0, -1.0));
        for d in [
            Drive::Stop,
            Drive::Gait {
                gait: "turning".into(),
                params: vec![("O_h".into(), 12.5)],
                direction: Direction::Forward,
            },
        ] {
            assert_eq!(
                gait_request(&gait_command(&d)),
                Ok(modbot_app::navigate::gait_request(&d))
            );
        }
        let mut g = OccupancyGrid::default();
        g.info.resolution = 0.1;
        g.info.width = 2;
        g.info.height = 2;
        g.data = vec![0, 100, -1, 64];
        let map = grid_map(&g, 65).expect("grid");
        assert_eq!(map.to_occupancy(), vec![0, 100, -1, 0]);
        g.data.pop();
        assert!(grid_map(&g, 65).expect_err("3 cells").contains("3 cells"));
        g.info.origin.orientation.z = 0.5;
        assert!(grid_map(&g, 65).expect_err("rotated").contains("rotated"));
    }

    #[test]
    fn poses_become_isometries_and_garbage_is_refused() {
        let p = nalgebra::Isometry3::new(
            nalgebra::Vector3::new(1.0, -2.0, 0.5),
            nalgebra::Vector3::new(0.1, 0.2, 0.3),
        );
        let back = isometry(&pose3(&p)).unwrap_or_else(|e| panic!("{e}"));
        assert!((back.to_homogeneous() - p.to_homogeneous()).norm() < 1e-12);
        let mut bad = pose3(&p);
        bad.position.y = f64::NAN;
        assert!(isometry(&bad).is_err());
        let mut zero = pose3(&p);
        zero.orientation = Quaternion {
            x: 0.0,
            y: 0.0,
            z: 0.0,
            w: 0.0,
        };
        assert!(isometry(&zero).unwrap_err().contains("unit quaternion"));
    }
}
