"""Golden CDR bytes from rclpy for modbot_msgs' generated types (run in the interop venv).

    test/interop/build_modbot_msgs.sh target/interop-venv target/interop-msgs
    PYTHONPATH=target/interop-msgs/lib/python3.11/site-packages LD_LIBRARY_PATH=target/interop-msgs/lib \
      target/interop-venv/bin/python test/interop/golden.py > packages/modbot_msgs/tests/golden.json

Prints {"name": {"type": "pkg/msg/Name", "hex": "...", "fields": [[name, type], ...]}}: the
bytes of rclpy.serialization.serialize_message (with the 4-byte encapsulation header) for
fixed values, and the field list rosidl reports for every type involved.
"""
import json
import sys

from rclpy.serialization import serialize_message
from builtin_interfaces.msg import Time, Duration
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, Header, ColorRGBA, String
from sensor_msgs.msg import JointState, Joy
from nav_msgs.msg import Odometry, Path, OccupancyGrid
from geometry_msgs.msg import PoseStamped, TransformStamped, Point
from rosgraph_msgs.msg import Clock
from visualization_msgs.msg import Marker, MarkerArray
from sensor_msgs.msg import Imu
from geometry_msgs.msg import WrenchStamped
from std_srvs.srv import SetBool


def header(sec, nsec, frame):
    return Header(stamp=Time(sec=sec, nanosec=nsec), frame_id=frame)


def cases():
    m = Float64MultiArray()
    m.layout.dim = [MultiArrayDimension(label="joints", size=3, stride=3)]
    m.layout.data_offset = 0
    m.data = [0.1, -0.2, 0.3]
    yield "float64_multi_array", m

    j = JointState(header=header(12, 345, "base_link"), name=["j1", "j2"], position=[0.5, -0.25],
                   velocity=[1.0, 2.0], effort=[])
    yield "joint_state", j

    yield "joy", Joy(header=header(7, 8, "joy"), axes=[0.5, -1.0], buttons=[1, 0])

    o = Odometry(header=header(1, 2, "odom"), child_frame_id="base_link")
    o.pose.pose.position.x, o.pose.pose.position.y, o.pose.pose.position.z = 1.0, 2.0, 3.0
    o.pose.covariance = [i * 0.5 for i in range(36)]
    o.twist.twist.linear.x, o.twist.twist.linear.y, o.twist.twist.linear.z = 0.1, 0.2, 0.3
    o.twist.twist.angular.z = 0.5
    yield "odometry", o

    yield "clock", Clock(clock=Time(sec=5, nanosec=6))

    t = TransformStamped(header=header(3, 4, "odom"), child_frame_id="base_link")
    t.transform.translation.x, t.transform.translation.z = 0.5, 0.1
    t.transform.rotation.z, t.transform.rotation.w = 0.7071067811865476, 0.7071067811865476
    yield "transform_stamped", t

    p = PoseStamped(header=header(0, 0, "map"))
    p.pose.position.x, p.pose.position.y = 1.5, -2.0
    yield "pose_stamped", p

    path = Path(header=header(0, 0, "map"))
    for x in (0.0, 1.0):
        q = PoseStamped(header=header(0, 0, "map"))
        q.pose.position.x = x
        path.poses.append(q)
    yield "path", path

    mk = Marker(header=header(0, 0, "map"), ns="subgoals", id=7, type=Marker.SPHERE, action=Marker.ADD)
    mk.pose.position.x, mk.pose.position.y = 1.0, 2.0
    mk.scale.x = mk.scale.y = mk.scale.z = 0.1
    mk.color = ColorRGBA(r=1.0, g=0.0, b=0.0, a=1.0)
    mk.lifetime = Duration(sec=0, nanosec=0)
    mk.points = [Point(x=0.0, y=0.0, z=0.0)]
    mk.text = "row 1"
    yield "marker_array", MarkerArray(markers=[mk])

    g = OccupancyGrid(header=header(0, 0, "map"))
    g.info.resolution = 0.05
    g.info.width, g.info.height = 3, 2
    g.info.origin.position.x, g.info.origin.position.y = -1.0, -1.0
    g.data = [0, 100, -1, 0, 0, 100]
    yield "occupancy_grid", g

    yield "string", String(data="<robot name=\"x\"/>")

    # The robot interface's standard messages (issue 50).
    imu = Imu(header=header(4, 250000000, "m1/imu_link"))
    imu.orientation.z, imu.orientation.w = 0.7071067811865476, 0.7071067811865476
    imu.orientation_covariance = [1e-4, 0.0, 0.0, 0.0, 1e-4, 0.0, 0.0, 0.0, 1e-4]
    imu.angular_velocity.z = 0.3
    imu.linear_acceleration.z = 9.81
    yield "imu", imu
    w = WrenchStamped(header=header(1, 0, "m1/wheel_ft"))
    w.wrench.force.x, w.wrench.force.y, w.wrench.force.z = 1.0, -2.0, 30.0
    yield "wrench_stamped", w
    yield "set_bool_request", SetBool.Request(data=True)
    yield "set_bool_response", SetBool.Response(success=False, message="no port `Q`")

    # TFMessage: tf2_msgs has no wheel; build_modbot_msgs.sh builds it next to modbot_msgs.
    try:
        from tf2_msgs.msg import TFMessage
        yield "tf_message", TFMessage(transforms=[t])
    except ImportError:
        pass

    # The controller switch (record 0063): controller_manager_msgs has no wheel either;
    # build_modbot_msgs.sh builds it from modbot's copy of the Jazzy definition.
    try:
        from controller_manager_msgs.srv import SwitchController
        yield "switch_controller_request", SwitchController.Request(
            activate_controllers=["wheel_position_controller"], deactivate_controllers=["velocity_controller"],
            strictness=SwitchController.Request.STRICT, activate_asap=True, timeout=Duration(sec=1, nanosec=5))
        yield "switch_controller_response", SwitchController.Response(ok=False, message="not loaded")
    except ImportError:
        pass

    # modbot's own interfaces, when modbot_msgs is built for rclpy (build_modbot_msgs.sh).
    try:
        from modbot_msgs.msg import GaitCommand, GaitState, StrategicPlan, SubGoal
    except ImportError:
        return
    yield "gait_command", GaitCommand(gait="sidewinding", param_names=["A", "dphi"], param_values=[40.0, -110.0],
                                      speed_scale=1.5, direction=-1, transition_time=0.5, stop=False)
    st = GaitState(header=header(7, 8, ""), gait="caterpillar", robot="pp:8", phase=0.25, cycle_count=3,
                   period=2.0, param_names=["amplitude_deg"], param_values=[40.0], holding=False, transitioning=True)
    yield "gait_state", st
    row = SubGoal(configuration="quadruped", reference="ground_obstacle", lateral_offset=0.0,
                  longitudinal_offset=-0.1, yaw_offset=0.0, ability=True, action=SubGoal.ACTION_PASS_OVER,
                  gait="trot", path=[Point(x=1.0, y=0.5, z=0.0)])
    row.target.position.x = 1.0
    row.target.position.y = 0.5
    yield "strategic_plan", StrategicPlan(header=header(0, 0, "map"), rows=[row], estimated_time=12.5)

    # The robot interface's own messages (issue 50).
    from modbot_msgs.msg import (TagDetection, TagDetectionArray, ConnectorState, DockingReading,
                                 DockingReadingArray)
    d = TagDetection(id="target", position=Point(x=2.0, y=0.5, z=0.1),
                     covariance=[0.01, 0.002, 0.0, 0.002, 0.02, 0.0, 0.0, 0.0, 0.03])
    yield "tag_detection_array", TagDetectionArray(header=header(12, 345000000, "m1/camera_optical"),
                                                   detections=[d])
    yield "connector_state", ConnectorState(header=header(7, 0, "m1/port_F"), port="F",
                                            state=ConnectorState.LATCHED, partner="m2/L", reason="")
    r = DockingReading(partner="m4/BF")
    r.pose.position.x, r.pose.position.y = 0.05, 0.01
    r.pose.orientation.z, r.pose.orientation.w = 1.0, 0.0
    yield "docking_reading_array", DockingReadingArray(header=header(2, 500000000, "m1/port_F"), readings=[r])


def type_name(cls):
    mod = cls.__module__.split(".")[0]
    kind = "srv" if ".srv" in cls.__module__ else "msg"
    return f"{mod}/{kind}/{cls.__name__}"


def fields_of(cls, out):
    name = type_name(cls)
    if name in out:
        return
    fields = list(cls.get_fields_and_field_types().items())
    out[name] = fields
    import importlib
    for _, t in fields:
        base = t
        for prefix in ("sequence<",):
            if base.startswith(prefix):
                base = base[len(prefix):].split(",")[0].rstrip(">")
        base = base.split("[")[0]
        if "/" in base:
            pkg, n = base.split("/")
            fields_of(getattr(importlib.import_module(f"{pkg}.msg"), n), out)


def main():
    golden, fields = {}, {}
    for name, msg in cases():
        golden[name] = {"type": type_name(type(msg)), "hex": serialize_message(msg).hex()}
        fields_of(type(msg), fields)
    try:
        from modbot_msgs.srv import Plan
        fields_of(Plan.Request, fields)
        fields_of(Plan.Response, fields)
    except ImportError:
        pass
    json.dump({"messages": golden, "fields": fields}, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
