"""The gait search from Python, and fanned out on Ray.

``run(**options)`` is ``modbot search`` with the same options (the same optimisers; the same
seed gives the same search). The optimiser, its random draws and the checkpoint stay in the
Rust core in this process; only the evaluations move: to the Rust worker threads (the
default), or to any ``evaluate_batch`` callable, such as ``RayEvaluator``'s Ray tasks.

    python -m modbot.search --robot pyp --gait pitch_yaw --objective 'abs(heading)' \\
        --generations 20 --seed 1                    # a local Ray cluster on this machine
    python -m modbot.search --address HEAD:6379 ...  # an existing Ray cluster

The options are ``modbot search``'s (``--minimal`` aside), plus ``--address``, ``--num-cpus``
and ``--in-process``. Every node of a cluster needs the ``modbot`` package installed and
the input files (robot, world, gait and module files) at the same paths; presets need none.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from . import _modbot, request_json

__all__ = ["RayEvaluator", "SearchResult", "main", "run"]


@dataclass(frozen=True)
class SearchResult:
    """A finished search: the best candidate (gene values by key), its fitness and
    measurements, and the whole checkpoint (every evaluation, the history)."""

    best: Optional[dict]
    fitness: Optional[float]
    measured: Optional[dict]
    evaluations: int
    checkpoint: dict


def _floats(measured: dict) -> dict:
    # The checkpoint writes an unmeasured value as the string "nan".
    return {k: float(v) if isinstance(v, str) else v for k, v in measured.items()}


def _result(cp_json: str, best_index: Optional[int]) -> SearchResult:
    cp = json.loads(cp_json)
    keys = [g["key"] for g in cp["problem"]["genes"]]
    # The best as the Rust search ranks it (the earliest of equals).
    best = None if best_index is None else cp["evaluations"][best_index]
    return SearchResult(
        best=None if best is None else dict(zip(keys, best["values"])),
        fitness=None if best is None else best["fitness"],
        measured=None if best is None else _floats(best["measured"]),
        evaluations=len(cp["evaluations"]),
        checkpoint=cp,
    )


def run(
    *,
    out: Optional[str] = None,
    resume: bool = False,
    evaluate_batch: Optional[Callable[[list], list]] = None,
    progress: Optional[Callable[[dict], None]] = None,
    **options: Any,
) -> SearchResult:
    """Runs the search ``modbot search`` runs with these options (``modbot.request_json``'s
    names). With ``out``, the folder gets checkpoint.json and evaluations.csv after every
    generation, best.yaml (or best.txt) and summary.json at the end, as the command writes
    them (not convergence.png); ``resume`` continues the search there. ``evaluate_batch``
    gets a generation's new candidates (lists of gene values) and returns their outcomes
    (``SearchProblem.evaluate_json``), in order; without it the Rust worker threads evaluate
    (``threads``). ``progress`` gets a dict after every generation."""
    cp, best_index = _modbot.search(
        request_json(**options),
        out=None if out is None else os.fspath(out),
        resume=resume,
        evaluate_batch=evaluate_batch,
        progress=progress,
    )
    return _result(cp, best_index)


# A worker process keeps the problems it has built (a problem loads its robot, world and
# gait file once), a few at most.
_PROBLEMS: dict = {}


def _evaluate_on_worker(request: str, values: list) -> str:
    problem = _PROBLEMS.get(request)
    if problem is None:
        if len(_PROBLEMS) >= 8:
            _PROBLEMS.clear()
        problem = _PROBLEMS[request] = _modbot.SearchProblem(request)
    return problem.evaluate_json(values)


class RayEvaluator:
    """Evaluates a search's candidates as Ray tasks, one task per candidate.

    ``address`` names a running cluster (``HEAD:6379``, ``ray://HEAD:10001``, ``auto``);
    without it a local cluster of ``num_cpus`` CPUs is started on this machine, bound to
    127.0.0.1, without the dashboard and with usage statistics off. Use as a context manager
    (the cluster is left on shutdown when it was started here)."""

    def __init__(self, request: str, address: Optional[str] = None, num_cpus: Optional[int] = None):
        if num_cpus is not None and (isinstance(num_cpus, bool) or not isinstance(num_cpus, int) or num_cpus < 1):
            raise ValueError(f"num_cpus {num_cpus!r}: expected a whole number >= 1")
        if address is not None and num_cpus is not None:
            raise ValueError("num_cpus: the cluster at address has its own")
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        if address is None:
            # Ray replaces a loopback node address by the machine's routable one unless its
            # "cluster" mode is off (ray_constants.ENABLE_RAY_CLUSTER, read at import): off,
            # every process of the local cluster binds 127.0.0.1 (record 0039).
            os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
        import ray  # noqa: PLC0415 - Ray is needed only here

        self._ray = ray
        if address is None:
            if ray._private.ray_constants.ENABLE_RAY_CLUSTER:
                raise RuntimeError(
                    "Ray was imported before a local cluster was asked for: import modbot.search's "
                    "RayEvaluator first, or set RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0, so it binds 127.0.0.1 only"
                )
            # Ray's head always runs its usage-statistics module, which probes cloud metadata
            # servers (169.254.169.254, metadata.google.internal) over HTTP even with the
            # statistics off. The cluster's processes get a proxy on a closed loopback port,
            # so those probes fail at once on 127.0.0.1 instead of leaving the machine;
            # loopback itself is exempt (record 0039).
            proxy = {k: "http://127.0.0.1:9" for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY")}
            proxy.update({k: "127.0.0.1,localhost,::1" for k in ("no_proxy", "NO_PROXY")})
            saved = {k: os.environ.get(k) for k in proxy}
            os.environ.update(proxy)
            try:
                # "local": a new cluster here, never one RAY_ADDRESS or a `ray start` names.
                ray.init(
                    address="local",
                    num_cpus=num_cpus,
                    include_dashboard=False,
                    _node_ip_address="127.0.0.1",
                    logging_level="warning",
                    log_to_driver=False,
                )
            finally:
                for k, v in saved.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
        else:
            ray.init(address=address, logging_level="warning", log_to_driver=False)
        self._task = ray.remote(num_cpus=1, max_retries=2)(_evaluate_on_worker)
        self._request = ray.put(request)
        self.tasks = 0

    def __call__(self, candidates: list) -> list:
        refs = [self._task.remote(self._request, c) for c in candidates]
        self.tasks += len(refs)
        return self._ray.get(refs)

    def close(self) -> None:
        self._ray.shutdown()

    def __enter__(self) -> "RayEvaluator":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _key_value(text: str) -> tuple:
    key, sep, value = text.partition("=")
    try:
        v = float(value)
    except ValueError:
        v = math.nan
    if not sep or not key.strip() or not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"`{text}`: expected KEY=VALUE with a finite number")
    return key.strip(), v


def parser() -> argparse.ArgumentParser:
    """The command line: ``modbot search``'s options for one search, and where to evaluate."""
    p = argparse.ArgumentParser(
        prog="python -m modbot.search",
        description="modbot search with its evaluations as Ray tasks (same optimisers, same seed, same result).",
    )
    p.add_argument("-r", "--robot", default="pyp", help="a preset (pp:M, py:M, pyp) or a robot file")
    p.add_argument("-g", "--gait", default="pitch_yaw", help="gait, preset or `cpg` whose parameters are searched")
    p.add_argument("--objective", default="step_x", help="what is maximised (as modbot search)")
    p.add_argument("--method", default="ga", choices=["ga", "cmaes"], help="optimiser")
    p.add_argument("--population", type=int, help="population (GA: 100; CMA-ES: 4 + 3 ln n)")
    p.add_argument("--generations", type=int, default=100, help="generations after the initial population")
    p.add_argument("--seed", type=int, default=1, help="seed of every random draw")
    p.add_argument("--threads", type=int, default=0, help="worker threads with --in-process (0: one per core)")
    p.add_argument("--gene", action="append", default=[], metavar="KEY[=MIN:MAX[:STEP]]", help="a searched parameter")
    p.add_argument(
        "-s", "--set", action="append", default=[], type=_key_value, metavar="KEY=VALUE", help="a fixed parameter"
    )
    p.add_argument("--cycles", type=int, default=3, help="cycles measured per evaluation")
    p.add_argument("--warmup", type=int, default=2, help="warm-up cycles per evaluation")
    p.add_argument("--world", metavar="FILE", help="world of the step metrics")
    p.add_argument("--maze", default="maze_sls", help="mazes of the maze objective, comma separated")
    p.add_argument("--max-time", type=float, default=40.0, help="maxTime of the maze rules, s")
    p.add_argument("--enter-within", type=float, default=10.0, help="a robot not in the maze by then is stopped, s")
    p.add_argument("--engine", default="native", help="physics engine: native or rapier")
    p.add_argument("--step-ms", type=float, help="physics step, ms, 0.01 to 20 (default: the world's)")
    p.add_argument("--solver-iterations", type=int, help="solver iterations per physics step (default: the engine's)")
    p.add_argument("--pgs-iterations", type=int, help="Gauss-Seidel sweeps per solver iteration (default: the engine's)")
    p.add_argument("--resume", action="store_true", help="continue the search whose checkpoint is in the output folder")
    p.add_argument("-o", "--out", metavar="DIR", help="output folder (default runs/search_<robot>_<gait>)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    p.add_argument("--modules", metavar="FILE", help="module catalog")
    p.add_argument("--gaits", metavar="FILE", help="gait file merged over the shipped one")
    p.add_argument("--address", help="a running Ray cluster (HEAD:6379, ray://HEAD:10001, auto)")
    p.add_argument("--num-cpus", type=int, help="CPUs of the local Ray cluster started without --address")
    p.add_argument("--in-process", action="store_true", help="no Ray: evaluate on this process's Rust threads")
    return p


def _options(a: argparse.Namespace) -> dict:
    return {
        "robot": a.robot,
        "gait": a.gait,
        "objective": a.objective,
        "method": a.method,
        "population": a.population,
        "generations": a.generations,
        "seed": a.seed,
        "threads": a.threads,
        "genes": a.gene,
        "set": dict(a.set) if len({k for k, _ in a.set}) == len(a.set) else None,
        "cycles": a.cycles,
        "warmup": a.warmup,
        "world": a.world,
        "maze": [m.strip() for m in a.maze.split(",")],
        "max_time": a.max_time,
        "enter_within": a.enter_within,
        "engine": a.engine,
        "step_ms": a.step_ms,
        "solver_iterations": a.solver_iterations,
        "pgs_iterations": a.pgs_iterations,
        "modules": a.modules,
        "gaits": a.gaits,
    }


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # An objective may start with a minus (`--objective -step_x`), as the command allows.
    for i, arg in enumerate(argv[:-1]):
        if arg == "--objective":
            argv[i : i + 2] = [f"--objective={argv[i + 1]}"]
            break
    a = parser().parse_args(argv)
    for name in ("population", "generations", "seed", "threads", "cycles", "warmup", "num_cpus"):
        v = getattr(a, name)
        if v is not None and v < 0:
            print(f"error: --{name.replace('_', '-')} {v}: expected a number >= 0", file=sys.stderr)
            return 2
    if a.num_cpus == 0:
        print("error: --num-cpus 0: a cluster needs at least one CPU", file=sys.stderr)
        return 2
    if len({k for k, _ in a.set}) != len(a.set):
        print("error: --set: a parameter is given twice", file=sys.stderr)
        return 2
    if a.in_process and (a.address is not None or a.num_cpus is not None):
        print("error: --in-process runs no Ray: leave out --address and --num-cpus", file=sys.stderr)
        return 2
    options = _options(a)
    out = a.out
    try:
        request = request_json(**options)
        out = out or _modbot.default_search_folder(request)
        # The problem, the settings and the folder are checked here, before a cluster is
        # started for them.
        _modbot.SearchProblem(request)
        _modbot.check_search_folder(out, a.resume)
        started = time.monotonic()

        def progress(p: dict) -> None:
            if not a.quiet:
                best = "-" if p["best"] is None else f"{p['best']:.3f}"
                print(
                    f"gen {p['generation']}/{p['total'] - 1}  best {best}  {p['evals_per_s']:.1f} evals/s",
                    file=sys.stderr,
                    flush=True,
                )

        if a.in_process:
            result = run(out=out, resume=a.resume, progress=progress, **options)
        else:
            with RayEvaluator(request, address=a.address, num_cpus=a.num_cpus) as ray_eval:
                result = run(out=out, resume=a.resume, evaluate_batch=ray_eval, progress=progress, **options)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except (RuntimeError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"interrupted: the last generation's checkpoint is in {out} (--resume continues it)", file=sys.stderr)
        return 130
    except Exception as e:  # a cluster's failure (a worker lost beyond its retries, ...)
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    wall = time.monotonic() - started
    if result.best is None:
        print(f"no candidate ran ({result.evaluations} evaluations)")
    else:
        vals = " ".join(f"{k}={v}" for k, v in result.best.items())
        print(f"best {result.fitness:.4f} ({vals}) of {result.evaluations} evaluations in {wall:.1f} s")
    name = "best.txt" if os.path.exists(os.path.join(out, "best.txt")) else "best.yaml"
    print(f"output: {out} (evaluations.csv, {name}, summary.json, checkpoint.json)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
