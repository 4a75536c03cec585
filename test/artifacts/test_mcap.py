"""`modbot run --mcap` writes a ROS 2 recording that the MCAP readers Foxglove's own
libraries provide (`mcap`, `mcap-ros2-support`) open and decode message by message; every
message is compared with the run's own files (trajectory.csv, links.csv), so the recording
shows the run and nothing else.

Run by packages/modbot/tests/python.rs (`MODBOT_BIN` is the command under test).
"""

import csv
import math
import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

MODBOT = os.environ.get("MODBOT_BIN", "modbot")

TOPICS = {
    "/robot_description": "std_msgs/msg/String",
    "/gait/command": "modbot_msgs/msg/GaitCommand",
    "/world_markers": "visualization_msgs/msg/MarkerArray",
    "/tf": "tf2_msgs/msg/TFMessage",
    "/joint_states": "sensor_msgs/msg/JointState",
    "/odom": "nav_msgs/msg/Odometry",
    "/position_controller/commands": "std_msgs/msg/Float64MultiArray",
}


def run(out: Path, *args: str) -> Path:
    """One short `modbot run --mcap` into `out`."""
    cmd = [MODBOT, "run", "-q", "--mcap", "--out", str(out), "--force", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{cmd}\n{done.stdout}\n{done.stderr}"
    assert "run.mcap" in done.stdout, done.stdout
    return out


def read_csv(path: Path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], [[float(x) for x in r] for r in rows[1:]]


def stamp(h) -> float:
    return h.stamp.sec + h.stamp.nanosec * 1e-9


def decoded(path: Path):
    """Every message as (channel, schema, message, decoded), in log-time order."""
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        header = reader.get_header()
        summary = reader.get_summary()
        msgs = list(reader.iter_decoded_messages(log_time_order=True))
    return header, summary, msgs


def quat_mul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    )


def rotate(q, v):
    x, y, z, w = quat_mul(quat_mul(q, (v[0], v[1], v[2], 0.0)), (-q[0], -q[1], -q[2], q[3]))
    return (x, y, z)


def compose(a, b):
    """Pose a ∘ b, poses as (translation, quaternion xyzw)."""
    t = rotate(a[1], b[0])
    return (tuple(a[0][i] + t[i] for i in range(3)), quat_mul(a[1], b[1]))


@pytest.fixture(scope="module")
def caterpillar(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("mcap") / "pp8"
    return run(out, "--robot", "pp:8", "--gait", "caterpillar", "--set", "A=40", "--warmup", "0",
               "--cycles", "1", "--world", "worlds/obstacle_course.yaml")


def test_the_recording_decodes_and_holds_the_run(caterpillar: Path):
    header, summary, msgs = decoded(caterpillar / "run.mcap")
    assert header.profile == "ros2"
    names = {c.topic: summary.schemas[c.schema_id].name for c in summary.channels.values()}
    assert names == TOPICS
    for c in summary.channels.values():
        assert c.message_encoding == "cdr"
        assert summary.schemas[c.schema_id].encoding == "ros2msg"

    traj_head, traj = read_csv(caterpillar / "trajectory.csv")
    link_head, links = read_csv(caterpillar / "links.csv")
    assert len(traj) == len(links) > 100
    joints = [h[: -len("_target")] for h in traj_head if h.endswith("_target")]
    n = len(joints)
    link_names = [h[: -len("_x_m")] for h in link_head[1::7]]
    base = link_names.index("base_link")

    by_topic = {}
    for _, channel, message, m in msgs:
        by_topic.setdefault(channel.topic, []).append((message, m))
        # Log time is the message's stamp (the simulated time), ns.
        if hasattr(m, "header"):
            assert message.log_time == round(stamp(m.header) * 1e9) or abs(
                message.log_time - stamp(m.header) * 1e9) <= 1
    for topic in ["/tf", "/joint_states", "/odom", "/position_controller/commands"]:
        assert len(by_topic[topic]) == len(traj), topic

    (_, desc), = by_topic["/robot_description"]
    robot = ET.fromstring(desc.data)
    assert robot.tag == "robot" and robot.get("name") == "pp_8"
    urdf_joints = {j.get("name") for j in robot.iter("joint") if j.get("type") in ("revolute", "continuous")}
    assert set(joints) <= urdf_joints

    (_, gait), = by_topic["/gait/command"]
    assert gait.gait == "caterpillar"
    assert list(gait.param_names) == ["A"] and list(gait.param_values) == [40.0]

    (_, markers), = by_topic["/world_markers"]
    assert len(markers.markers) > 0
    assert all(mk.header.frame_id == "odom" and mk.type == 1 for mk in markers.markers)

    for k, row in enumerate(traj):
        t = row[0]
        targets, angles = row[6:6 + n], row[6 + n:6 + 2 * n]
        _, js = by_topic["/joint_states"][k]
        assert list(js.name) == joints
        # The same doubles: the CSV prints them shortest-round-trip, CDR carries them whole.
        assert list(js.position) == angles, f"joint_states at row {k}"
        assert abs(stamp(js.header) - t) <= 1e-9
        _, cmd = by_topic["/position_controller/commands"][k]
        assert list(cmd.data) == targets, f"commands at row {k}"

        lrow = links[k]
        assert lrow[0] == t
        pose = lambda i: (tuple(lrow[1 + 7 * i: 4 + 7 * i]), tuple(lrow[4 + 7 * i: 8 + 7 * i]))
        _, tf = by_topic["/tf"][k]
        frames = {(x.header.frame_id, x.child_frame_id): x.transform for x in tf.transforms}
        assert len(frames) == len(link_names)
        odom_base = frames[("odom", "base_link")]
        tr, q = odom_base.translation, odom_base.rotation
        assert (tr.x, tr.y, tr.z) == pose(base)[0]
        assert (q.x, q.y, q.z, q.w) == pose(base)[1]
        _, odom = by_topic["/odom"][k]
        p = odom.pose.pose.position
        assert (p.x, p.y, p.z) == pose(base)[0]
        assert odom.header.frame_id == "odom" and odom.child_frame_id == "base_link"
        if k % 50 == 0:
            # Every link through tf (odom → base_link → the URDF's tree) lands where links.csv
            # has it, and no frame has two parents.
            parents = {child: parent for parent, child in frames}
            assert len(parents) == len(frames)
            urdf_parent = {j.find("child").get("link"): j.find("parent").get("link") for j in robot.findall("joint")}
            for child, parent in parents.items():
                if parent != "odom":
                    assert urdf_parent[child] == parent, child

            def world_of(name):
                if name == "odom":
                    return ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))
                x = frames[(parents[name], name)]
                rel = ((x.translation.x, x.translation.y, x.translation.z),
                       (x.rotation.x, x.rotation.y, x.rotation.z, x.rotation.w))
                return compose(world_of(parents[name]), rel)

            for i, name in enumerate(link_names):
                world = world_of(name)
                want = pose(i)
                assert all(abs(world[0][j] - want[0][j]) < 1e-9 for j in range(3)), (name, k)
                # q and −q are one rotation.
                dot = sum(world[1][j] * want[1][j] for j in range(4))
                assert abs(abs(dot) - 1.0) < 1e-9, (name, k)


def test_wheels_go_to_the_velocity_controller(tmp_path: Path):
    out = run(tmp_path / "wheeled", "--robot", "wheeled", "--gait", "drive", "--warmup", "0", "--cycles", "1")
    _, summary, msgs = decoded(out / "run.mcap")
    topics = {c.topic for c in summary.channels.values()}
    assert "/velocity_controller/commands" in topics
    traj_head, traj = read_csv(out / "trajectory.csv")
    joints = [h[: -len("_target")] for h in traj_head if h.endswith("_target")]
    vel = [m for _, c, _, m in msgs if c.topic == "/velocity_controller/commands"]
    pos = [m for _, c, _, m in msgs if c.topic == "/position_controller/commands"]
    assert len(vel) == len(traj)
    # Every joint's target goes to exactly one of the two controllers.
    assert len(vel[0].data) + (len(pos[0].data) if pos else 0) == len(joints)
    assert all(math.isfinite(x) for m in vel for x in m.data)


def test_no_recording_unless_asked(tmp_path: Path):
    out = tmp_path / "plain"
    done = subprocess.run([MODBOT, "run", "-q", "--out", str(out), "--warmup", "0", "--cycles", "1"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert not (out / "run.mcap").exists()
    assert (out / "links.csv").exists()
