"""Shared fixtures: the `modbot` command built by cargo (MODBOT_BIN, set by
packages/modbot/tests/python.rs) and the repository root."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def modbot_bin() -> str:
    path = os.environ.get("MODBOT_BIN") or next(
        (str(p) for p in (ROOT / "target/debug/modbot", ROOT / "target/release/modbot") if p.exists()), None
    )
    if not path or not os.path.exists(path):
        pytest.fail("MODBOT_BIN must name the modbot command (packages/modbot/tests/python.rs sets it)")
    return path


@pytest.fixture(scope="session")
def cli(modbot_bin):
    """Runs `modbot ARGS` from the repository root; returns the completed process."""

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
        p = subprocess.run([modbot_bin, *args], cwd=ROOT, capture_output=True, text=True)
        if check:
            assert p.returncode == 0, f"modbot {' '.join(args)}: {p.stderr}"
        return p

    return run
