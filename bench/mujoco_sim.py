#!/usr/bin/env python3
"""Peer benchmark for `modbot bench sim`: the same robots in MuJoCo (PyPI `mujoco`).

Loads the URDF modbot ships (urdf/pp_8.urdf, urdf/py_16.urdf), adds a free joint, a ground
plane with μ = 0.2 and a velocity-limited position servo per joint (MuJoCo position
actuators with kp and force limits from the URDF), drives the same sinusoidal gait at
100 Hz and reports real-time factor and steps per second, single thread, at 1 ms and
5 ms. Usage: python3 bench/mujoco_sim.py [seconds]. Prints CSV like `modbot bench sim`.
"""
import math
import re
import sys
import tempfile
import time
from pathlib import Path

import mujoco

ROOT = Path(__file__).resolve().parent.parent
GAITS = {  # control parameters of config/gaits.yaml defaults (deg), T = 2 s
    "pp_8": ("caterpillar", lambda i, kind: (40.0, i * 110.0)),
    "py_16": ("sidewinding", None),
}


def phases(robot, n):
    out = []
    nv = nh = 0
    for i in range(n):
        if robot == "pp_8":
            out.append((40.0, i * 110.0))
        elif i % 2 == 0:
            out.append((10.0, nv * 90.0))
            nv += 1
        else:
            out.append((40.0, nh * 90.0 + 135.0))
            nh += 1
    return out


def model_for(robot, step):
    urdf = (ROOT / "urdf" / f"{robot}.urdf").read_text()
    # MuJoCo reads URDF; drop the ROS/Gazebo extension blocks it does not know.
    urdf = re.sub(r"<ros2_control.*?</ros2_control>", "", urdf, flags=re.S)
    urdf = re.sub(r"<gazebo.*?</gazebo>", "", urdf, flags=re.S)
    urdf = urdf.replace("<robot name", '<robot name', 1)
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "r.urdf"
        p.write_text(urdf.replace(">", ">", 1))
        m = mujoco.MjModel.from_xml_path(str(p))
        xml_path = Path(d) / "r.xml"
        mujoco.mj_saveLastXML(str(xml_path), m)
        xml = xml_path.read_text()
    joints = re.findall(r'<joint name="(joint_\d+)"', xml)
    # MuJoCo makes the URDF root the world body; wrap it in a free-floating base body with
    # the root link's inertial (module_1_back: 25 g box half), and add the floor.
    wb0 = xml.index("<worldbody>") + len("<worldbody>")
    wb1 = xml.index("</worldbody>")
    inner = xml[wb0:wb1]
    base = (
        '<geom name="floor" type="plane" size="10 10 0.1" friction="0.2 0.005 0.0001"/>\n'
        '<body name="base" pos="0 0 0.0265"><freejoint name="root"/>'
        '<inertial pos="0.018 0 0" mass="0.025" diaginertia="1.1267e-05 8.3333e-06 8.3333e-06"/>'
        f"{inner}</body>\n"
    )
    xml = xml[:wb0] + base + xml[wb1:]
    acts = "\n".join(
        f'<position joint="{j}" kp="0.5" forcerange="-0.314 0.314" ctrlrange="-1.5708 1.5708"/>' for j in joints
    )
    xml = xml.replace("</mujoco>", f"<actuator>\n{acts}\n</actuator>\n</mujoco>")
    xml = re.sub(r"<option[^>]*/>", "", xml)
    xml = xml.replace("<compiler", f'<option timestep="{step}" integrator="implicitfast"/>\n<compiler', 1)
    m = mujoco.MjModel.from_xml_string(xml)
    return m, joints


def run(robot, step, seconds):
    m, joints = model_for(robot, step)
    d = mujoco.MjData(m)
    n = len(joints)
    ph = phases(robot, n)
    control_dt = 0.01
    sub = int(round(control_dt / step))
    ticks = int(round(seconds / control_dt))
    t0 = time.perf_counter()
    steps = 0
    for k in range(ticks):
        t = k * control_dt
        for i, (a, p) in enumerate(ph):
            d.ctrl[i] = math.radians(a * math.sin(2 * math.pi * t / 2.0 + math.radians(p)))
        for _ in range(sub):
            mujoco.mj_step(m, d)
            steps += 1
    wall = time.perf_counter() - t0
    return seconds / wall, steps / wall


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    print("robot,step_ms,real_time_factor,steps_per_s")
    for robot in ["pp_8", "py_16"]:
        for step in [0.001, 0.005]:
            rtf, sps = run(robot, step, seconds)
            print(f"{robot},{step*1000:g},{rtf:.2f},{sps:.0f}")


if __name__ == "__main__":
    main()
