"""Evaluations per second of the PYP rotation search (the thesis's GA_PYn 2 1 YAW: H2 without
O_h, |heading| maximised, 2 warm-up + 3 measured cycles) along each path the Python package
offers, with the overhead each adds per evaluation:

  rust     `modbot search --threads 2` (the command, in process)
  py-rust  modbot.search.run(threads=2): the same search driven from Python
  py-thr   2 Python threads calling SearchProblem.evaluate on the same candidates
  ray      modbot.search.run with every evaluation a Ray task, local 2-CPU cluster

The bare cost of an evaluation is measured first, one at a time on one thread; a path's
overhead per evaluation is its wall time x 2 workers / evaluations minus that cost.

    cargo build --release -p modbot
    (cd packages/modbot_py && maturin develop --release)    # in the venv with ray
    python bench/python_search.py --modbot target/release/modbot --generations 5
"""

import argparse
import concurrent.futures
import json
import os
import pathlib
import shutil
import subprocess
import tempfile
import time

import modbot
import modbot.search

OPTIONS = dict(robot="pyp", gait="pitch_yaw", objective="abs(heading)", set={"offset_h_deg": 0}, seed=1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--modbot", required=True, help="the modbot command (release build)")
    ap.add_argument("--generations", type=int, default=5)
    a = ap.parse_args()
    opts = dict(OPTIONS, generations=a.generations)
    tmp = pathlib.Path(tempfile.mkdtemp())
    rows = []

    # The candidates of the search, and the bare cost of one evaluation.
    ref = modbot.search.run(threads=2, **opts)
    cands = [e["values"] for e in ref.checkpoint["evaluations"]]
    n = len(cands)
    problem = modbot.problem(**opts)
    t = time.perf_counter()
    for c in cands[:60]:
        problem.evaluate(c)
    bare = (time.perf_counter() - t) / 60

    # The command.
    out = tmp / "rust"
    t = time.perf_counter()
    subprocess.run(
        [a.modbot, "search", "--robot", "pyp", "--gait", "pitch_yaw", "--objective", "abs(heading)",
         "--set", "offset_h_deg=0", "--seed", "1", "--generations", str(a.generations), "--threads", "2",
         "--quiet", "--out", str(out)],
        check=True, capture_output=True,
    )
    wall = time.perf_counter() - t
    got = json.loads((out / "summary.json").read_text())
    assert got["best"]["values"] == ref.best, "the command found another best"
    rows.append(("rust (modbot search, 2 threads)", n, wall))

    t = time.perf_counter()
    modbot.search.run(threads=2, **opts)
    rows.append(("py-rust (modbot.search.run, 2 threads)", n, time.perf_counter() - t))

    t = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        list(pool.map(problem.evaluate, cands))
    rows.append(("py-thr (2 Python threads, evaluate)", n, time.perf_counter() - t))

    request = modbot.request_json(**opts)
    t0 = time.perf_counter()
    with modbot.search.RayEvaluator(request, num_cpus=2) as ev:
        start = time.perf_counter() - t0
        t = time.perf_counter()
        got = modbot.search.run(evaluate_batch=ev, **opts)
        rows.append(("ray (local cluster, 2 CPUs)", n, time.perf_counter() - t))
    assert got.best == ref.best, "Ray found another best"

    print(f"PYP rotation search, {a.generations} generations after 100 strings: {n} evaluations")
    print(f"bare evaluation (1 thread, sequential): {bare * 1e3:.2f} ms")
    print(f"{'path':<42} {'evals/s':>8} {'overhead/eval':>14}")
    for name, k, wall in rows:
        over = wall * 2 / k - bare
        print(f"{name:<42} {k / wall:8.1f} {over * 1e3:11.2f} ms")
    print(f"(Ray cluster start: {start:.1f} s, not counted)")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    main()
