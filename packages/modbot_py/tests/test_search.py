"""The search from Python is `modbot search`: the same evaluations, checkpoint and best for
the same seed, in process or with every evaluation a Ray task on a local cluster (2 CPUs,
bound to 127.0.0.1, no dashboard, no usage statistics)."""

import json
import math
import os
import re
import subprocess
import sys

import pytest

import modbot
import modbot.search

from conftest import ROOT

# The PYP rotation search of the thesis (GA_PYn 2 1 YAW), small: 16 strings, 3 generations.
OPTIONS = dict(
    robot="pyp",
    gait="pitch_yaw",
    objective="abs(heading)",
    set={"offset_h_deg": 0},
    population=16,
    generations=3,
    seed=5,
)
CLI_ARGS = [
    "--robot", "pyp", "--gait", "pitch_yaw", "--objective", "abs(heading)", "--set", "offset_h_deg=0",
    "--population", "16", "--generations", "3", "--seed", "5",
]


def namespace_sockets():
    """Every TCP and UDP socket of this namespace, in any state (listening, connecting,
    connected): (protocol, local address, port, remote address)."""
    out = []
    for name in ("tcp", "tcp6", "udp", "udp6"):
        with open(f"/proc/net/{name}") as f:
            for line in f.readlines()[1:]:
                cols = line.split()
                addr, port = cols[1].split(":")
                out.append((name, addr, int(port, 16), cols[2].split(":")[0]))
    return out


def wildcard(addr):
    return set(addr) == {"0"}


def loopback(proto, addr):
    if proto.endswith("6"):
        # ::1, or ::ffff:127.x.x.x
        return addr == "00000000000000000000000001000000" or (
            addr.startswith("0000000000000000FFFF0000") and addr.endswith("7F")
        )
    return addr.endswith("7F")  # 127.x.x.x, little-endian


@pytest.fixture()
def netns():
    """Ray runs only inside the private network namespace packages/modbot/tests/python.rs
    makes; when it could give the namespace a routable-looking decoy address (192.0.2.2 on a
    veth pair, the default route through it, nothing beyond), Ray is tempted to bind it."""
    if os.environ.get("MODBOT_IN_NETNS") != "1":
        pytest.fail("the Ray tests run only inside the private network namespace (cargo test -p modbot --test python)")
    decoy = os.environ.get("MODBOT_NETNS_DECOY")
    if decoy:
        import socket

        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 53))  # a route lookup; a UDP connect sends nothing
            assert s.getsockname()[0] == decoy
    return decoy


@pytest.fixture(scope="module")
def in_process(cli, tmp_path_factory):
    """The search by `modbot search` (Rust, 2 threads) and by modbot.search.run in process."""
    out = tmp_path_factory.mktemp("cli") / "s"
    cli("search", *CLI_ARGS, "--threads", "2", "--quiet", "--out", str(out))
    py_out = tmp_path_factory.mktemp("py") / "s"
    result = modbot.search.run(out=str(py_out), threads=2, **OPTIONS)
    return out, py_out, result


def test_the_in_process_search_from_python_is_modbot_search(in_process):
    out, py_out, result = in_process
    for name in ("checkpoint.json", "evaluations.csv", "best.yaml"):
        assert (py_out / name).read_text() == (out / name).read_text().replace(str(out), str(py_out)), name
    summary = json.loads((out / "summary.json").read_text())
    assert result.best == summary["best"]["values"]
    assert result.fitness == summary["best"]["fitness"]
    assert result.evaluations == summary["evaluations"] > 16
    assert math.isnan(result.measured["maze_score"]) and result.measured["heading_deg"] != 0


def test_the_ray_search_gives_the_in_process_search_s_best(in_process, netns):
    _, _, expected = in_process
    request = modbot.request_json(**OPTIONS)
    with modbot.search.RayEvaluator(request, num_cpus=2) as ray_eval:
        import ray

        assert ray.cluster_resources().get("CPU") == 2
        assert ray.get_runtime_context().gcs_address.startswith("127.0.0.1:")
        got = modbot.search.run(evaluate_batch=ray_eval, **OPTIONS)
        assert ray_eval.tasks == got.evaluations
        # Bound to loopback, and talking to nothing else: no socket on the decoy address or
        # on every address (a wildcard bind), none connected beyond loopback (Ray's cloud
        # metadata probes, a DNS lookup).
        sockets = namespace_sockets()
        assert any(s[0].startswith("tcp") for s in sockets), "no socket of the cluster seen"
        beyond = [
            s for s in sockets
            if not loopback(s[0], s[1]) or not (wildcard(s[3]) or loopback(s[0], s[3]))
        ]
        assert not beyond, f"sockets beyond loopback: {beyond}"
    assert got.best == expected.best
    assert got.fitness == expected.fitness
    assert got.checkpoint == expected.checkpoint


def test_python_m_modbot_search_on_a_local_ray_cluster_writes_the_command_s_folder(in_process, tmp_path, netns):
    out_cli, _, expected = in_process
    out = tmp_path / "ray"
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    args = [sys.executable, "-m", "modbot.search", *CLI_ARGS, "--num-cpus", "2", "--out", str(out)]
    p = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    # Progress a line per generation, the best on stdout.
    assert len(re.findall(r"^gen \d+/3 ", p.stderr, re.M)) == 4, p.stderr
    assert f"best {expected.fitness:.4f}" in p.stdout, p.stdout
    assert (out / "evaluations.csv").read_text() == (out_cli / "evaluations.csv").read_text()
    assert (out / "checkpoint.json").read_text() == (out_cli / "checkpoint.json").read_text()
    # The folder holds a search: refused without --resume, nothing lost.
    # Refused before Ray is imported: a `ray` that cannot be imported changes nothing.
    no_ray = tmp_path / "no_ray"
    (no_ray / "ray").mkdir(parents=True)
    (no_ray / "ray" / "__init__.py").write_text("raise ImportError('ray imported before the checks')\n")
    env_no_ray = dict(env, PYTHONPATH=f"{no_ray}{os.pathsep}{env.get('PYTHONPATH', '')}")
    again = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, env=env_no_ray)
    assert again.returncode == 2 and "--resume" in again.stderr, again.stderr
    assert (out / "checkpoint.json").read_text() == (out_cli / "checkpoint.json").read_text()


def test_a_search_resumed_from_its_checkpoint_is_the_search_run_at_once(in_process, tmp_path):
    _, _, expected = in_process
    out = tmp_path / "resumed"
    part = modbot.search.run(out=str(out), threads=1, **dict(OPTIONS, generations=1))
    assert part.evaluations < expected.evaluations
    whole = modbot.search.run(out=str(out), resume=True, threads=1, **OPTIONS)
    assert whole.checkpoint == expected.checkpoint
    with pytest.raises(ValueError, match="different search"):
        modbot.search.run(out=str(out), resume=True, **dict(OPTIONS, seed=6))


def test_an_evaluator_that_fails_stops_the_search_with_its_exception(tmp_path):
    def broken(candidates):
        raise KeyError("worker lost")

    with pytest.raises(KeyError, match="worker lost"):
        modbot.search.run(evaluate_batch=broken, out=str(tmp_path / "b"), **OPTIONS)

    def short(candidates):
        return []

    with pytest.raises(ValueError, match="returned 0 outcomes"):
        modbot.search.run(evaluate_batch=short, **OPTIONS)


def test_the_module_takes_modbot_search_s_options_and_refuses_bad_ones(cli):
    help_text = cli("search", "--help").stdout
    theirs = set(re.findall(r"^\s+(?:-\w, )?(--[a-z-]+)", help_text, re.M))
    # The minimal-configuration search stays the command's.
    theirs -= {"--minimal", "--target", "--require", "--max-modules", "--help"}
    ours = set()
    for action in modbot.search.parser()._actions:
        ours.update(o for o in action.option_strings if o.startswith("--"))
    assert theirs <= ours, theirs - ours
    # An objective may start with a minus, as the command allows.
    p = subprocess.run(
        [sys.executable, "-m", "modbot.search", "--in-process", "--objective", "-step_x", "--generations", "0",
         "--population", "4", "--out", str(ROOT / "target/tmp/py-minus")],
        cwd=ROOT, capture_output=True, text=True,
    )
    import shutil

    shutil.rmtree(ROOT / "target/tmp/py-minus", ignore_errors=True)
    assert p.returncode == 0, p.stderr
    for bad, says in (
        (["--set", "A"], "KEY=VALUE"),
        (["--set", "offset_h_deg=nan"], "finite"),
        (["--generations", "-1"], "--generations -1"),
        (["--objective", "speed"], "speed"),
        (["--in-process", "--num-cpus", "2"], "--in-process"),
        (["--num-cpus", "0"], "--num-cpus 0"),
        (["--population", "1"], "population"),
    ):
        p = subprocess.run(
            [sys.executable, "-m", "modbot.search", *bad]
            if bad[0] in ("--in-process", "--num-cpus", "--population")
            else [sys.executable, "-m", "modbot.search", "--in-process", *bad],
            cwd=ROOT, capture_output=True, text=True,
        )
        assert p.returncode == 2, (bad, p.returncode, p.stderr)
        assert says in p.stderr, (bad, p.stderr)
