"""modbot for Python: modular robots' gaits on the embedded simulator, measured with the
sources' protocol, and the gait search, over the same Rust core as the ``modbot`` command.

    >>> import modbot
    >>> r = modbot.run("pp:8", "caterpillar", cycles=3)
    >>> r.report.step_x_m, r.report.status
    >>> r.trajectory.com.shape          # (samples, 3), a NumPy array

Runs release the GIL, so Python threads simulate in parallel. Bad input raises
``ValueError`` with the same message as the command; a run that fails (a diverging
simulation) raises ``RuntimeError``; an output that cannot be written, ``OSError``.
``modbot.search.run(...)`` is ``modbot search`` from Python, and ``python -m modbot.search``
runs it with its evaluations as Ray tasks on a cluster.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, Union

import numpy as np

from . import _modbot
from ._modbot import Controller, Robot, SearchProblem, World

__version__: str = _modbot.__version__

__all__ = [
    "Controller",
    "Report",
    "Robot",
    "Run",
    "SearchProblem",
    "Trajectory",
    "World",
    "evaluate",
    "gait_table",
    "problem",
    "request_json",
    "run",
]

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class Report:
    """What the measurement protocol measured (``modbot run``'s summary.json, ``report``)."""

    period_s: float
    warmup_cycles: int
    cycles: int
    body_length_m: float
    step_x_m: float
    step_y_m: float
    step_m: float
    heading_change_deg: float
    roll_per_cycle_deg: float
    roll_range_deg: float
    com_height_mean_m: float
    com_height_min_m: float
    com_height_max_m: float
    speed_body_lengths_per_cycle: float
    speed_m_s: float
    per_cycle: list
    boundaries: list
    status: str
    findings: list

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> "Report":
        return Report(**d)


@dataclass(frozen=True)
class Trajectory:
    """One sample per control tick (thinned on very long runs): time (s), centre of mass (m),
    heading and roll (rad, unwrapped), how far the body has turned over (deg), and the
    joints' targets and angles (rad, columns in ``joint_names`` order)."""

    t: np.ndarray
    com: np.ndarray
    heading: np.ndarray
    roll: np.ndarray
    body_tilt_deg: np.ndarray
    targets: np.ndarray
    angles: np.ndarray
    joint_names: list


@dataclass(frozen=True)
class Run:
    """A measured run: the report, the trajectory, and the whole summary as ``modbot run``
    writes it to summary.json (without its wall-clock fields)."""

    report: Report
    trajectory: Trajectory
    summary: dict

    @property
    def status(self) -> str:
        return self.report.status

    @property
    def controller(self) -> str:
        return self.summary["controller"]

    @property
    def params(self) -> dict:
        return self.summary["params"]

    @property
    def notes(self) -> list:
        return self.summary["notes"]


def _robot(robot: Union[Robot, str], modules: Optional[PathLike]) -> Robot:
    if isinstance(robot, Robot):
        return robot
    if isinstance(robot, (str, os.PathLike)):
        return Robot(os.fspath(robot), modules)
    raise TypeError(f"robot: expected a modbot.Robot or a preset name or robot file, got {type(robot).__name__}")


def run(
    robot: Union[Robot, str],
    controller: Union[Controller, str] = "caterpillar",
    world: Union[World, PathLike, None] = None,
    *,
    params: Optional[Mapping[str, float]] = None,
    seed: int = 0,
    cycles: int = 10,
    warmup: int = 2,
    rate: float = 100.0,
    max_time: float = 600.0,
    engine: str = "native",
    step_ms: Optional[float] = None,
    solver_iterations: Optional[int] = None,
    pgs_iterations: Optional[int] = None,
    modules: Optional[PathLike] = None,
    gaits: Optional[PathLike] = None,
) -> Run:
    """Runs a controller on a robot with the measurement protocol, as ``modbot run`` does with
    the same arguments (``controller`` a gait, preset or controller name with ``params``, or a
    ``modbot.Controller``; ``world`` a scenario or SDF file, or flat ground)."""
    for name, value, least in (("seed", seed, 0), ("cycles", cycles, 1), ("warmup", warmup, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"{name} {value!r}: expected a whole number >= {least}")
    for name, value in (("solver_iterations", solver_iterations), ("pgs_iterations", pgs_iterations)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 4096):
            raise ValueError(f"{name} {value!r}: expected a whole number from 1 to 4096")
    if params is not None and not isinstance(params, Mapping):
        raise ValueError(f"params: expected a dict of parameter -> value, got {type(params).__name__}")
    for key, value in (params or {}).items():
        if isinstance(value, bool):
            raise ValueError(f"params[{key!r}] = {value}: expected a number")
    rob = _robot(robot, modules)
    if isinstance(controller, Controller):
        if params:
            raise ValueError("params: give them to the modbot.Controller")
        ctl = controller
    elif isinstance(controller, str):
        ctl = Controller(controller, dict(params or {}))
    else:
        raise TypeError(f"controller: expected a name or a modbot.Controller, got {type(controller).__name__}")
    if world is None or isinstance(world, World):
        w = world
    else:
        w = World(os.fspath(world))
    summary, traj = _modbot.run(
        rob,
        ctl,
        w,
        seed=seed,
        cycles=cycles,
        warmup=warmup,
        rate=rate,
        max_time=max_time,
        engine=engine,
        step_ms=step_ms,
        solver_iterations=solver_iterations,
        pgs_iterations=pgs_iterations,
        gaits=None if gaits is None else os.fspath(gaits),
    )
    return Run(
        report=Report.from_dict(summary["report"]),
        trajectory=Trajectory(**traj),
        summary=summary,
    )


def gait_table(gaits: Optional[PathLike] = None) -> dict:
    """Every gait (with its parameters: key, alias, unit, min, max, default), the CPG, the
    presets and the wheel-foot robots' controllers, as ``modbot gaits --json`` prints them
    (``gaits``: a gait file merged over the shipped one)."""
    return _modbot.gait_table(None if gaits is None else os.fspath(gaits))


_REQUEST_KEYS = (
    "robot",
    "gait",
    "objective",
    "method",
    "population",
    "generations",
    "seed",
    "threads",
    "genes",
    "set",
    "cycles",
    "warmup",
    "world",
    "maze",
    "max_time",
    "enter_within",
    "engine",
    "step_ms",
    "solver_iterations",
    "pgs_iterations",
    "modules",
    "gaits",
)


_WHOLE = ("population", "generations", "seed", "threads", "cycles", "warmup", "solver_iterations", "pgs_iterations")


def request_json(**request: Any) -> str:
    """A search request (``modbot search``'s options, by their long names with ``_`` for
    ``-``; ``genes`` a list of ``KEY[=MIN:MAX[:STEP]]``, ``set`` a dict of fixed parameters,
    ``maze`` a list) as the JSON the Rust core reads. Unknown keys are refused by name."""
    unknown = sorted(set(request) - set(_REQUEST_KEYS))
    if unknown:
        raise ValueError(f"search request: unknown option(s) {', '.join(unknown)} (known: {', '.join(_REQUEST_KEYS)})")
    def number(v: Any) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)

    doc = {}
    for k, v in request.items():
        if v is None:
            continue
        if k == "set":
            if not isinstance(v, Mapping):
                raise ValueError("set: expected a dict of parameter -> value")
            for key, val in v.items():
                if not number(val):
                    raise ValueError(f"set {key}={val}: expected a finite number")
            v = [[str(key), float(val)] for key, val in v.items()]
        elif k in ("genes", "maze"):
            if isinstance(v, str):
                v = v.split(",") if k == "maze" else [v]
            v = [str(x).strip() for x in v]
        elif k in ("world", "modules", "gaits"):
            v = os.fspath(v)
        elif k in _WHOLE:
            # seed is a u64, the others usize; 2**53 keeps them exact through JSON.
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 2**53:
                raise ValueError(f"{k} {v!r}: expected a whole number >= 0")
        elif k in ("max_time", "enter_within", "step_ms"):
            if not number(v) or abs(v) > 1e300:
                raise ValueError(f"{k} {v!r}: expected a finite number")
            v = float(v)
        elif not isinstance(v, str):
            raise ValueError(f"{k} {v!r}: expected a string")
        doc[k] = v
    return json.dumps(doc, allow_nan=False)


def problem(**request: Any) -> SearchProblem:
    """The problem ``modbot search`` builds from these options; ``.evaluate(values)`` runs one
    candidate exactly as the search does and returns (fitness or None, measured, status)."""
    return SearchProblem(request_json(**request))


def evaluate(values: Sequence[float], **request: Any) -> tuple:
    """One candidate of the search the options describe: (fitness or None, measured dict,
    status). Build a ``problem(...)`` once to evaluate many."""
    return problem(**request).evaluate([float(v) for v in values])
