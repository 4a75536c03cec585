"""Type stubs of the native module (packages/modbot_py/src/lib.rs)."""

import os
from typing import Any, Callable, Optional, Union

_Path = Union[str, os.PathLike[str]]

__version__: str

class Robot:
    """A robot: a preset (pp:8, py:16, pyp, quadruped, wheeled, ...) or a robot file."""

    def __init__(self, robot: _Path, modules: Optional[_Path] = None) -> None: ...
    @property
    def name(self) -> str: ...
    @property
    def spec(self) -> str: ...
    @property
    def modules(self) -> int: ...
    @property
    def joint_names(self) -> list[str]: ...
    def to_yaml(self) -> str: ...

class World:
    """A scenario file (.yaml) or generated SDF world; none is flat ground."""

    def __init__(self, path: Optional[_Path] = None) -> None: ...
    @property
    def name(self) -> str: ...

class Controller:
    """A gait, preset, `cpg` or wheel-foot controller with parameters, or a pose sequence."""

    def __init__(
        self, gait: Optional[str] = None, params: Optional[dict[str, float]] = None, poses: Optional[_Path] = None
    ) -> None: ...

class SearchProblem:
    """The problem `modbot search` builds from a JSON request (modbot.request_json)."""

    def __init__(self, request: str) -> None: ...
    @property
    def genes(self) -> list[tuple[str, float, float, float]]: ...
    @property
    def request(self) -> str: ...
    def evaluate(self, values: list[float]) -> tuple[Optional[float], dict[str, Union[float, int]], str]: ...
    def evaluate_json(self, values: list[float]) -> str: ...

def run(
    robot: Robot,
    controller: Controller,
    world: Optional[World] = None,
    seed: int = 0,
    cycles: int = 10,
    warmup: int = 2,
    rate: float = 100.0,
    max_time: float = 600.0,
    engine: str = "native",
    step_ms: Optional[float] = None,
    solver_iterations: Optional[int] = None,
    pgs_iterations: Optional[int] = None,
    gaits: Optional[_Path] = None,
) -> tuple[dict[str, Any], dict[str, Any]]: ...
def gait_table(gaits: Optional[_Path] = None) -> dict[str, Any]: ...
def search(
    request: str,
    out: Optional[_Path] = None,
    resume: bool = False,
    evaluate_batch: Optional[Callable[[list[list[float]]], list[str]]] = None,
    progress: Optional[Callable[[dict[str, Any]], None]] = None,
) -> tuple[str, Optional[int]]: ...
def default_search_folder(request: str) -> str: ...
def check_search_folder(out: _Path, resume: bool) -> None: ...
