#!/usr/bin/env python3
"""The shipped robots in Gazebo's physics (ign-physics 5 + DART, sdformat 12) against the
embedded simulator (decision record 0042).

For each gait case: `modbot run` measures the gait on the embedded simulator (its
summary.json), `modbot gait` exports the same gait's joint trajectory, and
modbot_gz_physics replays it in Gazebo's physics with gz_ros2_control's position law and
the same measurement protocol. Then every shipped world and every shipped URDF is loaded
and settled once. Then a dock (decision record 0051): `modbot export gz-dock` gives the
DetachableJoint system joining two wheel-foot modules plate to plate, `ign sdf -k` checks the
module's model with that plugin in it, and modbot_gz_dock makes and breaks the dock as
gz-sim does, under the embedded docking test's 5 N pull. The closed-loop cases (record 0056)
run the wheel-foot robots' controllers against the physics through `modbot control`.
Prints a table; exits 1 naming every failed check.

Standard library only. Usage:
  test/gazebo/run.py --harness BUILD/modbot_gz_physics --modbot target/debug/modbot
"""

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The gait cases: (name, robot preset, shipped URDF, gait, check).
#   step:     the step along the body axis within TOLERANCE of the embedded simulator's
#   sideways: the step mainly across the body axis (|y| > 2 |x|), on the embedded side too
#   rolling:  the body rolls (|roll| > 180 deg per cycle) the same way as embedded
CASES = [
    ("caterpillar", "pp:8", "pp_8", "caterpillar", "step"),
    ("straight", "py:8", "py_8", "straight", "step"),
    ("sidewinding", "py:8", "py_8", "sidewinding", "sideways"),
    ("rolling", "py:8", "py_8", "rolling", "rolling"),
    ("sidewinding", "py:16", "py_16", "sidewinding", "sideways"),
]
TOLERANCE = 0.25

# The closed-loop cases (record 0056): `modbot control` drives the physics through its line
# protocol, as gait_node drives gz-sim, measured at the wheel-foot robots' reference point
# (the root link's origin) over the cycles the controller reports: (name, robot, world,
# gait, warm-up cycles, measured cycles). The trot runs on both terrains of Table 3.27
# (μ = 0.2 is the figure issue 14 missed until decision record 0057). All start in the pose of their
# robot files' initial_deg (the URDF's initial_value): the quadruped spawned flat on μ = 1
# ground would jam its legs in DART while standing up.
# They run gz_ros2_control's law with the gain the robot's xacro gives gz_ros2_control
# (`position_gain`: the module's 16.6/s over 100 Hz, record 0042); with the plugin's default
# gain (kp = 10/s) the quadruped's cycle was 1.20 s against 0.94 s (record 0056).
# Checks: the mean step per cycle (chord) and the cycle time within
# TOLERANCE of the embedded simulator's.
CLOSED_LOOP = [
    ("trot", "quadruped", "wheelfoot_mu1", "trot", 2, 6),
    ("trot", "quadruped", "wheelfoot_mu02", "trot", 2, 6),
    ("drive", "wheeled", "wheelfoot_mu1", "drive", 1, 3),
]

# The settle cases' robots and the world each settles in (a wheel-foot robot on its own
# terrain); every world is loaded with pp_8.
SETTLE_WORLD = {"wheelfoot": "wheelfoot_mu1", "quadruped": "wheelfoot_mu1", "wheeled": "wheelfoot_mu1"}


def robot_start(world_yaml):
    """robot_start of a scenario file: (x, y, z, yaw_deg); the file is a flow mapping line."""
    with open(world_yaml, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^robot_start:\s*\{\s*xyz:\s*\[([^\]]*)\]\s*,\s*yaw_deg:\s*([-0-9.eE+]+)", text, re.M)
    if not m:
        return (0.0, 0.0, 0.0, 0.0)
    x, y, z = (float(v) for v in m.group(1).split(","))
    return (x, y, z, float(m.group(2)))


def position_gain(robot):
    """gz_ros2_control's position_proportional_gain in urdf/<robot>.urdf.xacro (the plugin's
    default 0.1 when the file gives none): what gz-sim would run."""
    with open(os.path.join(ROOT, "urdf", robot + ".urdf.xacro"), encoding="utf-8") as f:
        m = re.search(r"<position_proportional_gain>\s*([-0-9.eE+]+)\s*</position_proportional_gain>", f.read())
    return float(m.group(1)) if m else 0.1


def law_args(law, robot):
    """The harness's law options for `robot`: gz_ros2_control's with the xacro's gain, or
    modbot's servo with the same P gain (gain x update rate)."""
    gain, rate = position_gain(robot), update_rate(robot)
    if law == "servo":
        return ["--law", "servo", "--kp", repr(gain * rate), "--update-rate", repr(rate)]
    return ["--law", law, "--gain", repr(gain), "--update-rate", repr(rate)]


def update_rate(robot):
    """controller_manager update_rate of config/controllers/<robot>.yaml (Hz)."""
    path = os.path.join(ROOT, "config", "controllers", robot + ".yaml")
    with open(path, encoding="utf-8") as f:
        m = re.search(r"update_rate:\s*([0-9.]+)", f.read())
    return float(m.group(1)) if m else 100.0


def local_steps(trajectory_csv, period, warmup, cycles):
    """Mean step per cycle in the body frame of each cycle's start (x along the tail->head
    heading at that instant, y to its left), from a run folder's trajectory.csv: free of the
    heading drift that the protocol's initial-frame step mixes in."""
    with open(trajectory_csv, encoding="utf-8") as f:
        head = f.readline().strip().split(",")
        it, ix, iy, ih = (head.index(c) for c in ("time_s", "com_x_m", "com_y_m", "heading_rad"))
        rows = [[float(v) for v in line.split(",")] for line in f if line.strip()]

    def at(t):
        for r in rows:
            if r[it] >= t - 1e-9:
                return r
        return rows[-1]

    sx = sy = 0.0
    for k in range(warmup, warmup + cycles):
        a, b = at(k * period), at((k + 1) * period)
        dx, dy, h = b[ix] - a[ix], b[iy] - a[iy], a[ih]
        sx += (math.cos(h) * dx + math.sin(h) * dy) / cycles
        sy += (-math.sin(h) * dx + math.cos(h) * dy) / cycles
    return sx, sy


def sh(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode not in (0, 1) or (p.returncode == 1 and "modbot_gz_physics" not in cmd[0]):
        sys.stderr.write(p.stdout + p.stderr)
        raise SystemExit(f"failed ({p.returncode}): {' '.join(cmd)}")
    return p


def initial_values(urdf):
    """The joints' initial positions as gz_ros2_control reads them: the `initial_value`
    parameter of each joint's position state interface in the URDF's <ros2_control>
    (record 0056); the zeros are left out (the model's own)."""
    out = []
    for joint in ET.parse(urdf).getroot().iter("joint"):
        for state in joint.findall("state_interface"):
            for param in state.findall("param"):
                if state.get("name") == "position" and param.get("name") == "initial_value":
                    value = float(param.text)
                    if value != 0.0:
                        out.append((joint.get("name"), value))
    return out


SPAWN_HEIGHTS = {}


def spawn_height(args, robot):
    """The -z that launch/gazebo.launch.yaml gives `ros_gz_sim create` for `robot`, m (5 cm,
    or the root's height in the robot's initial pose + 5 mm), read from `modbot launch
    --print`."""
    if robot not in SPAWN_HEIGHTS:
        p = sh([args.modbot, "launch", os.path.join(ROOT, "launch", "gazebo.launch.yaml"), f"robot:={robot}",
                "gait:=", "--print"])
        m = re.search(r"ros_gz_sim create .* -z ([-0-9.eE+]+)", p.stdout)
        if not m:
            raise SystemExit(f"`modbot launch launch/gazebo.launch.yaml robot:={robot} --print` names no spawn height")
        SPAWN_HEIGHTS[robot] = float(m.group(1))
    return SPAWN_HEIGHTS[robot]


def harness(args, world_sdf, urdf, extra):
    x, y, z, yaw = robot_start(world_sdf[:-4] + ".yaml")
    initial = [a for name, q in initial_values(urdf) for a in ("--initial", f"{name}={q!r}")]
    dz = args.spawn_z if args.spawn_z is not None else spawn_height(args, os.path.basename(urdf)[:-5])
    cmd = [args.harness, "--world", world_sdf, "--robot", urdf,
           "--x", str(x), "--y", str(y), "--z", str(z + dz), "--yaw-deg", str(yaw)] + initial + extra
    p = sh(cmd)
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        sys.stderr.write(p.stdout + p.stderr)
        raise SystemExit(f"no JSON from {' '.join(cmd)}")


# The dock case: two wheel-foot modules plate behind plate, 8 mm apart, the second facing
# back (as packages/modbot_app/tests/assemble.rs docks them), docked BF to BS, the second
# pulled 5 N away from the first along x for 2 s docked, then 2 s undocked.
DOCK = {"parent_pose": "0,0,0,0", "child_pose": "-0.008,0,0,180", "pull": "-5,0", "pull_link": "m1_body",
        "settle_s": 0.3, "hold_s": 2.0, "free_s": 2.0}
# Docked: the child's pose relative to the parent's link moves less than this (m, deg);
# undocked: more than this (m), as the embedded test's 0.05 m.
DOCK_HELD_M, DOCK_HELD_DEG, DOCK_FREE_M = 0.001, 0.5, 0.05


def dock_case(args, work, failures, results):
    urdf = os.path.join(ROOT, "urdf", "wheelfoot.urdf")
    p = sh([args.modbot, "export", "gz-dock", "--world", "strategic_mission", "--name", "spine",
            "--parent-model", "module_1", "--parent-port", "BF", "--child-model", "module_2", "--child-port", "BS"])
    dock = json.loads(p.stdout)
    # The plugin inside the module's model as sdformat converts the URDF: valid SDF.
    model = sh(["ign", "sdf", "-p", urdf]).stdout
    cut = model.rfind("</model>")
    if cut < 0:
        raise SystemExit("`ign sdf -p` printed no model for " + urdf)
    with_plugin = os.path.join(work, "module_with_dock.sdf")
    with open(with_plugin, "w", encoding="utf-8") as f:
        f.write(model[:cut] + dock["plugin"] + "\n" + model[cut:])
    check = subprocess.run(["ign", "sdf", "-k", with_plugin], capture_output=True, text=True)
    valid = check.returncode == 0 and check.stdout.startswith("Valid")
    cmd = [args.dock_harness, "--world", os.path.join(ROOT, "worlds", "strategic_mission.sdf"), "--robot", urdf,
           "--parent-model", dock["parent_model"], "--parent-link", dock["parent_link"],
           "--parent-pose", DOCK["parent_pose"], "--child-model", dock["child_model"],
           "--child-link", dock["child_link"], "--child-pose", DOCK["child_pose"],
           "--pull", DOCK["pull"], "--pull-link", DOCK["pull_link"], "--settle", str(DOCK["settle_s"]),
           "--hold", str(DOCK["hold_s"]), "--free", str(DOCK["free_s"])]
    t0 = time.time()
    run = subprocess.run(cmd, capture_output=True, text=True)
    # DART writes its own messages on stdout: the result is the last JSON line.
    lines = [line for line in run.stdout.splitlines() if line.startswith("{")]
    if run.returncode != 0 or not lines:
        sys.stderr.write(run.stdout + run.stderr)
        raise SystemExit(f"failed ({run.returncode}): {' '.join(cmd)}")
    r = json.loads(lines[-1])
    held = r["held_apart_m"] < DOCK_HELD_M and r["held_turned_deg"] < DOCK_HELD_DEG
    freed = r["free_apart_m"] > DOCK_FREE_M
    ok = valid and held and freed
    print(f"\ndock (DetachableJoint, {dock['parent_model']}::{dock['parent_link']} holds "
          f"{dock['child_model']}::{dock['child_link']}; ports BF, BS):")
    print(f"  {'ok  ' if valid else 'FAIL'} ign sdf -k of the module with the plugin")
    print(f"  {'ok  ' if held else 'FAIL'} docked, 5 N for {DOCK['hold_s']:g} s: the child moved "
          f"{1000 * r['held_apart_m']:.3f} mm and {r['held_turned_deg']:.3f}° relative to the parent's link "
          f"(bound {1000 * DOCK_HELD_M:g} mm, {DOCK_HELD_DEG:g}°); the pair moved {100 * r['held_moved_m']:.2f} cm")
    print(f"  {'ok  ' if freed else 'FAIL'} undocked, 5 N for {DOCK['free_s']:g} s: the child {r['free_apart_m']:.3f} m "
          f"away (bound > {100 * DOCK_FREE_M:g} cm), the parent moved {100 * r['parent_moved_m']:.2f} cm in all "
          f"({time.time() - t0:.1f} s)")
    if not valid:
        failures.append("dock: ign sdf -k refused the module with the DetachableJoint plugin: "
                        + (check.stdout + check.stderr).strip())
    if not (held and freed):
        failures.append(f"dock: {r}")
    results["dock"] = {"ok": ok, "export": dock, "gazebo": r}


def closed_loop_cases(args, work, failures, results):
    results["closed_loop"] = []
    print(f"\nclosed loop (`modbot control` driving the physics; {args.law} law, the xacro's gain), "
          "the reference point's step:")
    for name, robot, world, gait, warmup, cycles in CLOSED_LOOP:
        t0 = time.time()
        emb_dir = os.path.join(work, f"embedded_{robot}_{gait}_{world}")
        sh([args.modbot, "run", "--robot", robot, "--gait", gait, "--world",
            os.path.join(ROOT, "worlds", world + ".yaml"), "--warmup", str(warmup), "--cycles", str(cycles),
            "--out", emb_dir, "--force", "--quiet", "--no-replay"], cwd=work)
        with open(os.path.join(emb_dir, "summary.json"), encoding="utf-8") as f:
            er = json.load(f)["report"]
        e_chord = sum(math.hypot(c["dx_m"], c["dy_m"]) for c in er["per_cycle"]) / len(er["per_cycle"])
        gz = harness(args, os.path.join(ROOT, "worlds", world + ".sdf"), os.path.join(ROOT, "urdf", robot + ".urdf"),
                     ["--reference", "base", "--warmup", str(warmup), "--cycles", str(cycles)]
                     + law_args(args.law, robot) + ["--controller", args.modbot, "control", gait, "--robot", robot])
        gr = gz.get("report")
        if not gz["finite"] or not gr:
            ok, why = False, (f"the Gazebo run completed {gz.get('cycles_completed')} of {warmup + cycles} cycles "
                              f"in {gz['simulated_s']:.1f} s (finite: {gz['finite']})")
        else:
            step_ratio, period_ratio = gr["mean_chord_m"] / e_chord, gr["period_s"] / er["period_s"]
            ok = abs(step_ratio - 1) <= TOLERANCE and abs(period_ratio - 1) <= TOLERANCE
            why = (f"Gazebo {100 * gr['mean_chord_m']:.2f} cm in {gr['period_s']:.2f} s, turning "
                   f"{gr['heading_change_deg']:+.2f}°/cycle; embedded {100 * e_chord:.2f} cm in {er['period_s']:.2f} s, "
                   f"{er['heading_change_deg']:+.2f}°/cycle; step ratio {step_ratio:.2f}, cycle time ratio "
                   f"{period_ratio:.2f}" + ("" if ok else f": outside 1 ± {TOLERANCE}"))
        print(f"  {'ok  ' if ok else 'FAIL'} {robot} {gait} on {world}: {why} "
              f"({gz['simulated_s']:.1f} s simulated, {time.time() - t0:.1f} s)")
        if not ok:
            failures.append(f"closed loop {robot} {gait} on {world}: {why}")
        results["closed_loop"].append({"case": name, "robot": robot, "world": world, "ok": ok, "why": why,
                                       "gazebo": gz, "embedded": er})


def fmt(v, unit=""):
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:+.2f}{unit}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--harness", required=True, help="the built modbot_gz_physics")
    ap.add_argument("--modbot", default=shutil.which("modbot") or os.path.join(ROOT, "target", "debug", "modbot"))
    ap.add_argument("--warmup", type=int, default=2, help="cycles discarded (both simulators)")
    ap.add_argument("--cycles", type=int, default=10, help="cycles measured (both simulators)")
    ap.add_argument("--settle-s", type=float, default=1.0, help="settle time of the load checks, s")
    ap.add_argument("--spawn-z", type=float, default=None,
                    help="spawn height over the world's robot_start, m (default: launch/gazebo.launch.yaml's -z for the robot)")
    ap.add_argument("--law", default="gz_ros2_control", help="gz_ros2_control or servo")
    ap.add_argument("--only", default="", help="comma-separated gait cases to run, NAME or NAME:ROBOT (default all; 'none' skips them)")
    ap.add_argument("--no-settle", action="store_true", help="skip the load-and-settle checks")
    ap.add_argument("--keep", default="", help="keep the work files in this folder")
    ap.add_argument("--json", default="", help="write every result to this file")
    ap.add_argument("--dock-harness", default="", help="the built modbot_gz_dock (default: beside --harness)")
    ap.add_argument("--no-dock", action="store_true", help="skip the dock case")
    ap.add_argument("--no-closed-loop", action="store_true", help="skip the closed-loop cases")
    args = ap.parse_args()
    # The commands run in a work folder: relative paths would no longer name them.
    args.harness = os.path.abspath(args.harness)
    args.modbot = os.path.abspath(args.modbot)
    args.dock_harness = os.path.abspath(args.dock_harness or os.path.join(os.path.dirname(args.harness), "modbot_gz_dock"))
    for exe in (args.harness, args.modbot) + (() if args.no_dock else (args.dock_harness,)):
        if not os.access(exe, os.X_OK):
            raise SystemExit(f"not an executable: {exe}")

    work = args.keep or tempfile.mkdtemp(prefix="modbot-gz-")
    os.makedirs(work, exist_ok=True)
    failures, results, rows = [], {"gaits": [], "settle": []}, []
    flat = os.path.join(ROOT, "worlds", "flat.sdf")
    only = set(filter(None, args.only.split(",")))
    t_all = time.time()

    for name, preset, robot, gait, check in CASES:
        if only and name not in only and f"{name}:{robot}" not in only:
            continue
        t0 = time.time()
        tag = f"{robot}_{gait}"
        emb_dir = os.path.join(work, "embedded_" + tag)
        sh([args.modbot, "run", "--robot", preset, "--gait", gait, "--warmup", str(args.warmup),
            "--cycles", str(args.cycles), "--out", emb_dir, "--force", "--quiet", "--no-replay"], cwd=work)
        with open(os.path.join(emb_dir, "summary.json"), encoding="utf-8") as f:
            emb = json.load(f)
        er = emb["report"]
        period = er["period_s"]
        er["local_step_x_m"], er["local_step_y_m"] = local_steps(
            os.path.join(emb_dir, "trajectory.csv"), period, args.warmup, args.cycles)
        csv = os.path.join(work, tag + ".csv")
        sh([args.modbot, "gait", gait, "--robot", preset, "--duration",
            str((args.warmup + args.cycles) * period), "--rate", str(update_rate(robot)), "--out", csv])
        gz = harness(args, flat, os.path.join(ROOT, "urdf", robot + ".urdf"),
                     ["--trajectory", csv, "--period", str(period), "--warmup", str(args.warmup),
                      "--cycles", str(args.cycles)] + law_args(args.law, robot) + [
                      "--samples", os.path.join(work, "gazebo_" + tag + ".csv")])
        gr = gz.get("report") or {}
        verdict, why = "ok", ""
        if not gz["finite"] or not gr:
            verdict, why = "FAIL", "the Gazebo run did not finish with finite positions"
        elif check == "step":
            ratio = gr["step_x_m"] / er["step_x_m"] if er["step_x_m"] else float("nan")
            why = f"step ratio {ratio:.2f}"
            if not (abs(ratio - 1) <= TOLERANCE):
                verdict = "FAIL"
                why += f" outside 1 ± {TOLERANCE}"
        elif check == "sideways":
            gx, gy, ey = gr["local_step_x_m"], gr["local_step_y_m"], er["local_step_y_m"]
            side = abs(gy) > 2 * abs(gx) and abs(gy) > 0.02
            same = math.copysign(1, gy) == math.copysign(1, ey)
            why = f"body frame |y|/|x| = {abs(gy) / max(abs(gx), 1e-9):.1f}, y ratio {gy / ey:.2f}"
            if not (side and same):
                verdict = "FAIL"
                why += " (not mainly sideways, or the other side)"
        elif check == "rolling":
            rolls = abs(gr["roll_per_cycle_deg"]) > 180
            same = math.copysign(1, gr["roll_per_cycle_deg"]) == math.copysign(1, er["roll_per_cycle_deg"])
            why = (f"roll {gr['roll_per_cycle_deg']:+.0f} deg/cycle, "
                   f"body frame y ratio {gr['local_step_y_m'] / er['local_step_y_m']:.2f}")
            if not (rolls and same):
                verdict = "FAIL"
                why += " (does not roll, or rolls the other way)"
        if verdict != "ok":
            failures.append(f"{name} ({robot}): {why}")
        rows.append((name, robot, gr, er, verdict, why, time.time() - t0, gz.get("wall_s", 0)))
        results["gaits"].append({"case": name, "robot": robot, "gait": gait, "check": check, "verdict": verdict,
                                 "why": why, "gazebo": gz, "embedded": er})

    if rows:
        print(f"Gazebo's physics (ign-physics 5, DART; {args.law} law) vs the embedded simulator, "
              f"flat world, {args.warmup} warm-up + {args.cycles} measured cycles")
        print("step x, y: the protocol's (initial body frame); body x, y: each cycle's own body frame")
        hdr = (f"{'case':<12} {'robot':<6} {'sim':<9} {'step x cm':>10} {'step y cm':>10} "
               f"{'body x cm':>10} {'body y cm':>10} {'turn °/cyc':>11} "
               f"{'roll °/cyc':>11} {'CoM z cm':>9}  verdict")
        print(hdr)
        print("-" * len(hdr))
        for name, robot, gr, er, verdict, why, took, gwall in rows:
            for label, r in (("gazebo", gr), ("embedded", er)):
                if not r:
                    print(f"{name:<12} {robot:<6} {label:<9} (no report)")
                    continue
                print(f"{name:<12} {robot:<6} {label:<9} {fmt(100 * r['step_x_m']):>10} {fmt(100 * r['step_y_m']):>10} "
                      f"{fmt(100 * r['local_step_x_m']):>10} {fmt(100 * r['local_step_y_m']):>10} "
                      f"{fmt(r['heading_change_deg']):>11} {fmt(r['roll_per_cycle_deg']):>11} "
                      f"{100 * r['com_height_mean_m']:>9.2f}  " + (f"{verdict}: {why}" if label == "gazebo" else ""))
            print(f"{'':<12} {'':<6} (case {took:.1f} s, Gazebo physics {gwall:.1f} s wall)")

    if not args.no_closed_loop:
        closed_loop_cases(args, work, failures, results)

    if not args.no_settle:
        pp8 = os.path.join(ROOT, "urdf", "pp_8.urdf")
        loads = [(os.path.join(ROOT, "worlds", w), pp8) for w in sorted(os.listdir(os.path.join(ROOT, "worlds")))
                 if w.endswith(".sdf")]
        for u in sorted(os.listdir(os.path.join(ROOT, "urdf"))):
            if u.endswith(".urdf"):
                w = SETTLE_WORLD.get(u[:-5], "flat")
                loads.append((os.path.join(ROOT, "worlds", w + ".sdf"), os.path.join(ROOT, "urdf", u)))
        print(f"\nload and settle ({args.settle_s:g} s, joints held):")
        for world, urdf in loads:
            gz = harness(args, world, urdf, ["--duration", str(args.settle_s)])
            z = gz["end"]["com"][2]
            x0, y0, _, _ = robot_start(world[:-4] + ".yaml")
            drift = math.hypot(gz["end"]["com"][0] - gz["start"]["com"][0], gz["end"]["com"][1] - gz["start"]["com"][1])
            ok = gz["finite"] and 0.0 < z < 0.25 and gz["max_link_height_m"] < 0.5 and drift < 0.05
            label = f"{os.path.basename(world)} + {os.path.basename(urdf)}"
            print(f"  {'ok  ' if ok else 'FAIL'} {label:<48} links {gz['links']:>2}, joints {len(gz['joints']):>2}, "
                  f"CoM z {100 * z:5.2f} cm, drift {100 * drift:4.2f} cm, tilt {gz['max_tilt_deg']:5.1f}°, "
                  f"{gz['wall_s']:.2f} s")
            if not ok:
                failures.append(f"settle {label}: finite={gz['finite']}, CoM z={z:.3f} m, drift={drift:.3f} m, "
                                f"highest link {gz['max_link_height_m']:.3f} m")
            results["settle"].append({"world": world, "robot": urdf, "ok": ok, "gazebo": gz})

    if not args.no_dock:
        dock_case(args, work, failures, results)

    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\ntotal {time.time() - t_all:.1f} s")
    if failures:
        print("\nGazebo-physics checks failed:")
        for f in failures:
            print("  " + f)
        return 1
    print("Gazebo-physics checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
