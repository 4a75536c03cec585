"""A run from Python is `modbot run`: the same loading, checks, controller, simulator and
report, to the last digit; bad input raises with the command's message; the GIL is
released while simulating."""

import csv
import json
import math
import threading
import time

import numpy as np
import pytest

import modbot

from conftest import ROOT

# What `modbot run` measures in wall time, and so cannot repeat.
WALL = ("wall_s", "real_time_factor")


def cli_run(cli, tmp_path, *args):
    out = tmp_path / "run"
    cli("run", "--quiet", "--force", "--out", str(out), *args)
    summary = json.loads((out / "summary.json").read_text())
    with open(out / "trajectory.csv") as f:
        rows = list(csv.reader(f))
    return summary, rows


@pytest.mark.parametrize(
    "args, python",
    [
        (
            ["--robot", "pp:8", "--gait", "caterpillar", "--set", "A=40", "--set", "dphi=-110",
             "--world", "worlds/obstacle_course.yaml", "--seed", "3", "--cycles", "4"],
            dict(robot="pp:8", controller="caterpillar", params={"A": 40, "dphi": -110},
                 world=ROOT / "worlds/obstacle_course.yaml", seed=3, cycles=4),
        ),
        (
            ["--robot", "py:8", "--gait", "sidewinding", "--cycles", "3", "--warmup", "1", "--rate", "50"],
            dict(robot="py:8", controller="sidewinding", cycles=3, warmup=1, rate=50.0),
        ),
        (
            ["--robot", "quadruped", "--gait", "trot", "--cycles", "2"],
            dict(robot="quadruped", controller="trot", cycles=2),
        ),
    ],
    ids=["caterpillar_obstacles_seed3", "sidewinder_50hz", "quadruped_trot"],
)
def test_a_run_from_python_equals_modbot_run_to_the_last_digit(cli, tmp_path, args, python):
    summary, rows = cli_run(cli, tmp_path, *args)
    r = modbot.run(**python)
    for k in WALL:
        summary.pop(k)
    # The robot as named: a file path may be spelled differently.
    assert r.summary == summary
    assert r.report == modbot.Report.from_dict(summary["report"])
    # The trajectory, every sample (the command writes shortest round-trip decimals).
    header, body = rows[0], rows[1:]
    table = np.array([[float(x) for x in row] for row in body])
    j = len(r.trajectory.joint_names)
    assert header[:6] == ["time_s", "com_x_m", "com_y_m", "com_z_m", "heading_rad", "roll_rad"]
    assert table.shape == (len(r.trajectory.t), 6 + 2 * j)
    assert np.array_equal(table[:, 0], r.trajectory.t)
    assert np.array_equal(table[:, 1:4], r.trajectory.com)
    assert np.array_equal(table[:, 4], r.trajectory.heading)
    assert np.array_equal(table[:, 5], r.trajectory.roll)
    assert np.array_equal(table[:, 6 : 6 + j], r.trajectory.targets)
    assert np.array_equal(table[:, 6 + j :], r.trajectory.angles)


def test_the_trajectory_is_numpy_arrays_in_the_robot_s_joint_order():
    robot = modbot.Robot("pp:4")
    assert robot.modules == 4 and robot.name
    from_file = modbot.Robot(ROOT / "config/robots/py_16.yaml")  # a path object, as a file
    assert from_file.modules == 16 and len(from_file.joint_names) == 16
    r = modbot.run(robot, modbot.Controller("caterpillar"), cycles=2, warmup=1)
    t = r.trajectory
    assert t.joint_names == robot.joint_names
    n = len(t.t)
    assert n > 100 and t.t.dtype == np.float64
    assert t.com.shape == (n, 3) and t.angles.shape == (n, 4) and t.targets.shape == (n, 4)
    assert np.all(np.diff(t.t) > 0)
    assert r.status == "ok" and r.report.step_x_m > 0.0
    assert r.controller == "caterpillar" and r.params["amplitude_deg"] > 0


def test_the_stuck_caterpillar_is_reported_as_stalled_from_python_too():
    r = modbot.run("pp:8", "caterpillar", ROOT / "worlds/obstacle_course.yaml", params={"A": 40, "dphi": -110})
    assert r.status == "stalled", r.report.findings
    assert any("stalled" in f or "no progress" in f for f in r.report.findings), r.report.findings


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: modbot.Robot("nope:3"), ValueError, "bad robot `nope:3`"),
        (lambda: modbot.Robot("pp:0"), ValueError, "pp:0"),
        (lambda: modbot.Robot("config/robots/missing.yaml"), ValueError, "missing.yaml"),
        (lambda: modbot.run("pp:8", "flying"), ValueError, "flying"),
        (lambda: modbot.run("pp:8", "caterpillar", params={"A": 500}), ValueError, "amplitude_deg = 500 is out of range"),
        (lambda: modbot.run("pp:8", "caterpillar", params={"A": math.nan}), ValueError, 'params["A"] = NaN: expected a finite number'),
        (lambda: modbot.run("pp:8", "caterpillar", params={"speed": 1}), ValueError, "speed"),
        (lambda: modbot.run("pp:8", "caterpillar", params={"A": "big"}), ValueError, 'params["A"] = big'),
        (lambda: modbot.run("pp:8", cycles=0), ValueError, "cycles 0: expected a whole number >= 1"),
        (lambda: modbot.run("pp:8", seed=-1), ValueError, "seed -1: expected a whole number >= 0"),
        (lambda: modbot.run("pp:8", solver_iterations=0), ValueError, "solver_iterations 0"),
        (lambda: modbot.run("pp:8", params="A"), ValueError, "params: expected a dict"),
        (lambda: modbot.problem(robot="pyp", cycles=0), ValueError, "cycles must be at least 1"),
        (lambda: modbot.problem(robot="pyp", method="pso"), ValueError, "method `pso`"),
        (lambda: modbot.problem(robot="pyp", generations=1.5), ValueError, "generations 1.5"),
        (lambda: modbot.problem(robot=3), ValueError, "robot 3: expected a string"),
        (lambda: modbot.run("pp:8", rate=1e9), ValueError, "rate 1000000000"),
        (lambda: modbot.run("pp:8", max_time=-1), ValueError, "max_time -1"),
        (lambda: modbot.run("pp:8", step_ms=500), ValueError, "step_ms 500"),
        (lambda: modbot.run("pp:8", engine="ode"), ValueError, "engine"),
        (lambda: modbot.run("pp:8", world="worlds/nowhere.yaml"), ValueError, "nowhere.yaml"),
        (lambda: modbot.run(3, "caterpillar"), TypeError, "robot"),
        (lambda: modbot.Controller("caterpillar", poses="x.yaml"), ValueError, "give one, not both"),
        (lambda: modbot.Controller(), ValueError, "needs a gait or poses"),
        (lambda: modbot.problem(robot="pyp", generatons=3), ValueError, "generatons"),
        (lambda: modbot.problem(robot="pyp", genes=["amplitude_v_deg=0:x"]), ValueError, "gene `amplitude_v_deg=0:x`"),
        (lambda: modbot.problem(robot="pyp", objective="speed"), ValueError, "speed"),
        (lambda: modbot.problem(robot="pyp", set={"offset_h_deg": math.inf}), ValueError, "set offset_h_deg=inf"),
        (lambda: modbot.problem(robot="pyp").evaluate([1, 2]), ValueError, "2 given, the problem has 6 genes"),
        (lambda: modbot.problem(robot="pyp").evaluate([math.nan] * 6), ValueError, "amplitude_v_deg = NaN"),
        (lambda: modbot.gait_table("config/missing_gaits.yaml"), ValueError, "missing_gaits.yaml"),
    ],
)
def test_bad_input_raises_with_the_message(call, error, message):
    with pytest.raises(error) as e:
        call()
    assert message in str(e.value), str(e.value)


def test_a_candidate_the_gait_refuses_is_a_result_of_the_search_not_an_exception():
    p = modbot.problem(robot="pyp", gait="pitch_yaw", set={"offset_h_deg": 80})
    fitness, measured, status = p.evaluate([40, 40, 120, 0, 90])
    assert fitness is None, (fitness, status)
    assert "offset_h_deg" in status or "O_h" in status, status
    assert math.isnan(measured["step_x_cm"])


def test_the_gait_table_is_modbot_gaits_json(cli):
    table = modbot.gait_table()
    assert table == json.loads(cli("gaits", "--json").stdout)
    cat = next(g for g in table["gaits"] if g["name"] == "caterpillar")
    amp = next(p for p in cat["params"] if p["key"] == "amplitude_deg")
    assert amp["unit"] == "deg" and amp["min"] == 0 and amp["max"] == 90 and amp["alias"] == "A"
    assert any(c["robot"] == "quadruped" and c["name"] == "trot" for c in table["controllers"])


def test_simulations_release_the_gil_so_python_threads_run_in_parallel():
    p = modbot.problem(robot="py:8", gait="sidewinding", cycles=6)
    values = [float((lo + hi) / 2) for _, lo, hi, _ in p.genes]
    alone = p.evaluate_json(values)
    # While a thread simulates, this thread keeps running Python.
    spins = 0
    worker = threading.Thread(target=p.evaluate, args=(values,))
    started = time.monotonic()
    worker.start()
    while worker.is_alive():
        spins += 1
    took = time.monotonic() - started
    assert took > 0.02, f"the evaluation took {took} s: too short to tell"
    assert spins > 1000, f"{spins} loops in {took:.3f} s: the GIL was held"
    # Two threads give what one gives.
    results = [None, None]

    def job(i):
        results[i] = p.evaluate_json(values)

    threads = [threading.Thread(target=job, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results[0] == alone and results[1] == alone
