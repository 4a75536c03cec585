//! Properties of the generated code that need no ROS peer.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use modbot_msgs::cdr::{from_bytes, to_bytes};
use modbot_msgs::modbot_msgs::msg::{GaitCommand, GaitState, StrategicPlan, SubGoal};
use modbot_msgs::{ALL_MESSAGES, RosMessage, fields_of};
use proptest::prelude::*;

#[test]
fn defaults_and_constants_come_from_the_msg_files() {
    let c = GaitCommand::default();
    assert_eq!(c.speed_scale, 1.0);
    assert_eq!(c.transition_time, -1.0);
    assert!(!c.stop);
    assert_eq!(GaitCommand::DIRECTION_REVERSE, -1);
    assert_eq!(SubGoal::ACTION_PASS_UNDER, 2);
    assert_eq!(modbot_msgs::geometry_msgs::msg::Quaternion::default().w, 1.0);
    assert_eq!(modbot_msgs::visualization_msgs::msg::Marker::DELETEALL, 3);
}

#[test]
fn every_message_has_a_field_list_and_round_trips_its_default() {
    assert!(ALL_MESSAGES.len() >= 30);
    for (pkg, name) in ALL_MESSAGES {
        let f = fields_of(&format!("{pkg}/msg/{name}")).unwrap();
        // rcl_interfaces/ParameterType holds constants only; rosidl lists no field for it.
        assert!(
            !f.is_empty() || (*pkg, *name) == ("rcl_interfaces", "ParameterType"),
            "{pkg}/{name}"
        );
    }
    let plan = StrategicPlan::default();
    assert_eq!(from_bytes::<StrategicPlan>(&to_bytes(&plan).unwrap()).unwrap(), plan);
    assert_eq!(GaitState::FIELDS[0], ("header", "std_msgs/Header"));
    assert_eq!(
        SubGoal::FIELDS.last().unwrap(),
        &("path", "sequence<geometry_msgs/Point>")
    );
}

proptest! {
    #[test]
    fn gait_commands_round_trip(
        gait in "[a-z_]{0,20}",
        names in proptest::collection::vec("[A-Za-z_]{1,8}", 0..6),
        values in proptest::collection::vec(-1e6f64..1e6, 0..6),
        speed in 0.0f64..4.0,
        dir in -1i8..=1,
        stop in any::<bool>(),
    ) {
        let c = GaitCommand {
            gait,
            param_names: names,
            param_values: values,
            speed_scale: speed,
            direction: dir,
            transition_time: 0.5,
            stop,
        };
        let b = to_bytes(&c).unwrap();
        prop_assert_eq!(&b[..4], &[0u8, 1, 0, 0][..]);
        prop_assert_eq!(from_bytes::<GaitCommand>(&b).unwrap(), c);
    }

    #[test]
    fn truncated_payloads_never_panic(cut in 4usize..60) {
        let c = GaitCommand {
            gait: "sidewinding".into(),
            param_names: vec!["A".into()],
            param_values: vec![40.0],
            ..Default::default()
        };
        let b = to_bytes(&c).unwrap();
        let cut = cut.min(b.len() - 1);
        prop_assert!(from_bytes::<GaitCommand>(&b[..cut]).is_err());
    }
}
