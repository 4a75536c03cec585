"""An rclpy node that checks modbot's nodes from real ROS 2 (used by modbot_ros/tests/interop.rs).

    rclpy_peer.py --ns /snake1 --node gait_node --set-gait sidewinding --timeout 40

Subscribes {ns}/position_controller/commands, {ns}/joint_states and {ns}/odom, all three with
rclpy's default QoS (reliable, volatile, keep last 10: what robot_state_publisher, ros2_control
and Nav2 ask for); once each has delivered 5 messages it records the graph's view of those
topics and of /clock (types, publishers' QoS), sets the `gait` parameter of {ns}/{node} through the parameter
service (rcl_interfaces/SetParameters), reads it back, tries a gait that does not exist,
counts what arrives on every --listen topic (with the QoS profile a ROS user picks for that
kind of topic) while publishing every --publish message at 5 Hz, dumps the parameters of every --dump node as `ros2 param dump` does (list_parameters, then
get_parameters, and describe_parameters), keeps listening (at least 3 s) until every --listen topic has delivered, optionally publishes a modbot_msgs/GaitCommand (--command-gait; modbot_msgs built for rclpy
by build_modbot_msgs.sh) and drives a second sim_node (--drive-sim),
and prints one JSON object. Exit 0 when everything arrived and the valid set succeeded.
"""
import argparse
import json
import sys
import time

import rclpy
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import ReliabilityPolicy
from rcl_interfaces.srv import DescribeParameters, GetParameters, ListParameters, SetParameters
from rclpy.parameter import parameter_value_to_python
from std_msgs.msg import Float64MultiArray
from sensor_msgs.msg import JointState
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import Log


class Peer(Node):
    def __init__(self, ns):
        super().__init__("modbot_interop_peer")
        self.counts = {"commands": 0, "joint_states": 0, "odom": 0}
        self.last_commands = None
        self.last_js = None
        self.odom_first = None
        self.odom_last = None
        self.create_subscription(Float64MultiArray, f"{ns}/position_controller/commands", self.on_cmd, 10)
        # Default QoS (a depth alone): reliable readers, which match only reliable writers.
        self.create_subscription(JointState, f"{ns}/joint_states", self.on_js, 10)
        self.create_subscription(Odometry, f"{ns}/odom", self.on_odom, 10)
        self.rosout = []
        self.create_subscription(Log, "/rosout", lambda m: self.rosout.append([m.name, m.level, m.msg]), 100)

    def on_cmd(self, m):
        self.counts["commands"] += 1
        self.last_commands = list(m.data)

    def on_js(self, m):
        self.counts["joint_states"] += 1
        self.last_js = {"name": list(m.name), "position": list(m.position)}

    def on_odom(self, m):
        self.counts["odom"] += 1
        p = m.pose.pose.position
        xyz = [p.x, p.y, p.z, m.header.stamp.sec + m.header.stamp.nanosec * 1e-9]
        if self.odom_first is None:
            self.odom_first = xyz
        self.odom_last = xyz


def listen(node, specs):
    """Subscribes every `TOPIC=pkg/msg/Type=QOS` in `specs` with the profile a ROS user picks
    for that kind of topic: `default` (a depth alone: reliable, volatile), `sensor`
    (qos_profile_sensor_data) or `latched` (transient local, as RViz reads robot_description).
    Returns the dict of counts the callbacks fill."""
    import importlib
    from rclpy.qos import QoSProfile, DurabilityPolicy, qos_profile_sensor_data
    counts = {}
    for spec in specs:
        topic, ty, kind = spec.split("=")
        pkg, _, name = ty.split("/")
        cls = getattr(importlib.import_module(f"{pkg}.msg"), name)
        qos = {"default": 10, "sensor": qos_profile_sensor_data,
               "latched": QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)}[kind]
        counts[topic] = 0
        node.create_subscription(cls, topic, lambda m, t=topic: counts.__setitem__(t, counts[t] + 1), qos)
    return counts


def publish(node, specs):
    """Publishes every `TOPIC=pkg/msg/Type=field.path:value,...[=PERIOD_S]` in `specs` every
    PERIOD_S (default 0.2 s; default QoS) for as long as the peer spins: the inputs that make
    event-driven nodes speak (a goal for the planner, a twist for teleop). A value that
    parses as a number is one."""
    import importlib
    for spec in specs:
        parts = spec.split("=")
        topic, ty, fields = parts[:3]
        period = float(parts[3]) if len(parts) > 3 else 0.2
        pkg, _, name = ty.split("/")
        msg = getattr(importlib.import_module(f"{pkg}.msg"), name)()
        for f in filter(None, fields.split(",")):
            path, value = f.split(":", 1)
            *parents, leaf = path.split(".")
            obj = msg
            for part in parents:
                obj = getattr(obj, part)
            try:
                current = getattr(obj, leaf)
                setattr(obj, leaf, type(current)(float(value)) if not isinstance(current, str) else value)
            except ValueError:
                setattr(obj, leaf, value)
        pub = node.create_publisher(type(msg), topic, 10)
        node.create_timer(period, lambda p=pub, m=msg: p.publish(m))


def call(node, client, request, timeout):
    if not client.wait_for_service(timeout_sec=timeout):
        return None
    fut = client.call_async(request)
    rclpy.spin_until_future_complete(node, fut, timeout_sec=timeout)
    return fut.result()


def set_gait(node, target, value, timeout):
    cli = node.create_client(SetParameters, f"{target}/set_parameters")
    req = SetParameters.Request()
    req.parameters = [Parameter("gait", Parameter.Type.STRING, value).to_parameter_msg()]
    res = call(node, cli, req, timeout)
    if res is None:
        return {"successful": False, "reason": "no response from set_parameters"}
    r = res.results[0]
    return {"successful": bool(r.successful), "reason": r.reason}


def get_gait(node, target, timeout):
    cli = node.create_client(GetParameters, f"{target}/get_parameters")
    req = GetParameters.Request()
    req.names = ["gait"]
    res = call(node, cli, req, timeout)
    if res is None or not res.values:
        return None
    return res.values[0].string_value


def dump(node, target, timeout):
    """What `ros2 param dump` does for one node: list_parameters (every name, any depth),
    then get_parameters for them; plus describe_parameters, as `ros2 param describe`."""
    res = call(node, node.create_client(ListParameters, f"{target}/list_parameters"),
               ListParameters.Request(depth=ListParameters.Request.DEPTH_RECURSIVE), timeout)
    if res is None:
        return {"error": "no response from list_parameters"}
    names = list(res.result.names)
    got = call(node, node.create_client(GetParameters, f"{target}/get_parameters"),
               GetParameters.Request(names=names), timeout)
    if got is None or len(got.values) != len(names):
        return {"error": "no or short response from get_parameters", "names": names}
    desc = call(node, node.create_client(DescribeParameters, f"{target}/describe_parameters"),
                DescribeParameters.Request(names=names), timeout)
    values = {}
    for n, v in zip(names, got.values):
        x = parameter_value_to_python(v)
        values[n] = list(x) if isinstance(x, (list, tuple)) or type(x).__name__ == "array" else x
    return {
        "params": values,
        "described": {d.name: d.description for d in desc.descriptors} if desc is not None else {},
    }


def command(node, ns, gait, timeout):
    """Publish a GaitCommand (modbot_msgs built for rclpy) until gait/state shows the gait."""
    from modbot_msgs.msg import GaitCommand, GaitState
    pub = node.create_publisher(GaitCommand, f"{ns}/gait/command", 10)
    seen = {}
    node.create_subscription(GaitState, f"{ns}/gait/state",
                             lambda m: seen.update(gait=m.gait, params=dict(zip(m.param_names, m.param_values)),
                                                   holding=m.holding), 10)
    cmd = GaitCommand(gait=gait, param_names=["A"], param_values=[30.0], transition_time=0.5)
    end = time.time() + timeout
    while time.time() < end and seen.get("gait") != gait:
        pub.publish(cmd)
        for _ in range(10):
            rclpy.spin_once(node, timeout_sec=0.02)
    return seen


def drive(node, ns, joints, angle, seconds):
    """Publish a constant pose to a sim_node (rclpy as the controller) and report its joints."""
    pub = node.create_publisher(Float64MultiArray, f"{ns}/position_controller/commands", 10)
    seen = {}
    node.create_subscription(JointState, f"{ns}/joint_states", lambda m: seen.update(p=list(m.position)), 10)
    end = time.time() + seconds
    while time.time() < end:
        pub.publish(Float64MultiArray(data=[angle] * joints))
        rclpy.spin_once(node, timeout_sec=0.02)
    return {"target": angle, "positions": seen.get("p")}


def graph(node, ns):
    """Types of /clock and of the node's feedback topics (`ros2 topic list -t`), and the
    reliability its publishers offer on those (`ros2 topic info -v`)."""
    types = dict(node.get_topic_names_and_types())
    out = {"types": {t: types.get(t, []) for t in ["/clock", f"{ns}/odom", f"{ns}/joint_states"]}, "publishers": {}}
    for t in [f"{ns}/odom", f"{ns}/joint_states", "/clock"]:
        out["publishers"][t] = [
            {"node": f"{i.node_namespace.rstrip('/')}/{i.node_name}",
             "reliable": i.qos_profile.reliability == ReliabilityPolicy.RELIABLE}
            for i in node.get_publishers_info_by_topic(t)
        ]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ns", default="")
    ap.add_argument("--node", default="gait_node")
    ap.add_argument("--set-gait", required=True)
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--drive-sim", default="", help="namespace of a sim_node to drive to a pose directly")
    ap.add_argument("--joints", type=int, default=8)
    ap.add_argument("--command-gait", default="", help="then publish a modbot_msgs/GaitCommand for this gait")
    ap.add_argument("--listen", action="append", default=[],
                    help="TOPIC=pkg/msg/Type=default|sensor|latched: count what arrives (repeatable)")
    ap.add_argument("--publish", action="append", default=[],
                    help="TOPIC=pkg/msg/Type=field.path:value,...[=PERIOD_S]: publish every PERIOD_S (0.2) s (repeatable)")
    ap.add_argument("--dump", action="append", default=[],
                    help="fully qualified node whose parameters to dump as `ros2 param dump` does (repeatable)")
    a = ap.parse_args()
    rclpy.init()
    peer = Peer(a.ns)
    listened = listen(peer, a.listen)
    publish(peer, a.publish)
    target = f"{a.ns}/{a.node}"
    deadline = time.time() + a.timeout
    while time.time() < deadline and min(peer.counts.values()) < 5:
        rclpy.spin_once(peer, timeout_sec=0.1)
    out = {"counts_before_set": dict(peer.counts), "graph": graph(peer, a.ns)}
    out["dump"] = {t: dump(peer, t, 10.0) for t in a.dump}
    if min(peer.counts.values()) < 5:
        out["error"] = "timed out waiting for topics"
        print(json.dumps(out))
        return 1
    out["set"] = set_gait(peer, target, a.set_gait, 10.0)
    out["read_back"] = get_gait(peer, target, 10.0)
    out["set_unknown"] = set_gait(peer, target, "no_such_gait", 10.0)
    out["read_back_after_unknown"] = get_gait(peer, target, 10.0)
    # At least 3 s more, and until every listened topic has delivered (event-driven ones,
    # such as a replan, may come late), up to --timeout.
    end, cap = time.time() + 3.0, time.time() + a.timeout
    while time.time() < cap and (time.time() < end or min(listened.values(), default=1) < 1):
        rclpy.spin_once(peer, timeout_sec=0.05)
    if a.command_gait:
        out["commanded"] = command(peer, a.ns, a.command_gait, 10.0)
    if a.drive_sim:
        out["driven"] = drive(peer, a.drive_sim, a.joints, 0.3, 6.0)
    out.update(
        counts=peer.counts,
        last_commands=peer.last_commands,
        last_joint_states=peer.last_js,
        odom_first=peer.odom_first,
        odom_last=peer.odom_last,
        rosout=peer.rosout[-50:],
        listened=listened,
    )
    print(json.dumps(out))
    peer.destroy_node()
    rclpy.shutdown()
    return 0 if out["set"]["successful"] else 1


if __name__ == "__main__":
    sys.exit(main())
