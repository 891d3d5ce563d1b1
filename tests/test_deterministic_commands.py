"""``--deterministic`` gives the same output run to run for the strategy commands whose
phases split a time limit: cp-remat, cp-joint and ``cpsched frontier``. Each command runs
twice (small graphs, short limits) and the outputs must be equal once the wall-clock
figures (seconds, timings) are dropped; and the option must reach every solver."""

from __future__ import annotations

import json

import pytest

from cpsched.analysis.memory import simulate
from cpsched.cli import main
from cpsched.core.scenarios import Scenarios, from_dim_specs, static
from cpsched.generators import random_layered, transformer_parallel
from cpsched.writers.json_graph import graph_to_dict

# wall-clock figures: they differ run to run whatever the mode
WALL_KEYS = {"seconds", "wall", "wall_s", "timings", "elapsed", "clock_limit", "command"}
COMMON = ["--deterministic", "--workers", "1", "--seed", "0"]


def _without_wall(x):
    if isinstance(x, dict):
        return {
            k: _without_wall(v)
            for k, v in x.items()
            if k not in WALL_KEYS and not k.endswith("_seconds")
        }
    if isinstance(x, list):
        return [_without_wall(v) for v in x]
    return x


def _graph_file(tmp_path, g, name):
    p = tmp_path / f"{name}.json"
    p.write_text(json.dumps(graph_to_dict(g)))
    return p


DIMS = ["--dim", "b=2", "--dim", "s=64"]  # the symbolic sizes of ``parallel``


def _budget(g, sc: Scenarios | None = None) -> str:
    return str(int(0.85 * simulate(g, g.default_order(), sc or static()).peak[0]))


def _twice(capsys, tmp_path, argv: list[str], written: bool) -> list[str]:
    """The command's output (the file it wrote with -o, else its JSON on stdout), twice,
    without the wall-clock figures."""
    outs = []
    for k in range(2):
        extra = ["-o", str(tmp_path / f"out{k}.json")] if written else []
        rc = main([*argv, *extra, "--json", *COMMON])
        text = capsys.readouterr().out
        assert rc == 0, text
        data = json.loads((tmp_path / f"out{k}.json").read_text() if written else text)
        outs.append(json.dumps(_without_wall(data), sort_keys=True))
    return outs


@pytest.fixture
def layered(tmp_path):
    return _graph_file(tmp_path, random_layered(n=30, seed=5), "rl")


@pytest.fixture
def parallel(tmp_path):
    g = transformer_parallel(layers=1, dp=2, tp=2, d_model=64, heads=2, d_ff=128, vocab=256)
    return g, _graph_file(tmp_path, g, "tp")


def test_cp_remat_repeats_exactly(capsys, tmp_path, layered):
    g = random_layered(n=30, seed=5)
    argv = ["schedule", str(layered), "--method", "cp-remat", "--budget", _budget(g)]
    a, b = _twice(capsys, tmp_path, [*argv, "--time-limit", "2"], written=True)
    assert a == b


def test_cp_joint_repeats_exactly(capsys, tmp_path, parallel):
    g, path = parallel
    budget = _budget(g, from_dim_specs(["b=2", "s=64"]))
    argv = ["schedule", str(path), *DIMS, "--method", "cp-joint", "--budget", budget]
    a, b = _twice(capsys, tmp_path, [*argv, "--time-limit", "2"], written=True)
    assert a == b


def test_frontier_repeats_exactly(capsys, tmp_path, parallel):
    _, path = parallel
    argv = ["frontier", str(path), *DIMS, "--points", "3", "--time-limit", "1"]
    a, b = _twice(capsys, tmp_path, argv, written=False)
    assert a == b


def test_frontier_hands_deterministic_to_every_solver(capsys, monkeypatch, parallel):
    """``cpsched frontier --deterministic`` used to stop at the command line: its solves
    ran on the wall clock, so their results depended on the machine's load."""
    import cpsched.strategies.frontier as fr

    seen: list[tuple[str, object, object]] = []

    def spy(name, real):
        def call(*a, **k):
            seen.append((name, k.get("deterministic"), k.get("deadline")))
            return real(*a, **k)

        return call

    for name in ("solve_remat", "solve_overlap", "solve_joint"):
        monkeypatch.setattr(fr, name, spy(name, getattr(fr, name)))
    _, path = parallel
    argv = ["frontier", str(path), *DIMS, "--points", "2", "--time-limit", "1"]
    rc = main([*argv, "--json", *COMMON])
    capsys.readouterr()
    assert rc == 0
    assert {n for n, _, _ in seen} >= {"solve_overlap", "solve_joint"}
    assert all(det is True and deadline is None for _, det, deadline in seen), seen


def test_cp_joint_gives_the_same_plan_under_a_fast_wall_clock(loaded_clock):
    """A loaded machine simulated (every ``time.perf_counter()`` call a second later than
    the last): cp-joint's phases, its hints (cp-overlap, cp-remat) and its model count
    budgets and deterministic time, so the plan is the one an idle clock gives."""
    from cpsched.strategies.joint.method import solve_joint

    g = transformer_parallel(layers=1, dp=2, tp=2, d_model=64, heads=2, d_ff=128, vocab=256)
    sc = from_dim_specs(["b=2", "s=64"])
    budget = int(_budget(g, sc))

    def run():
        r = solve_joint(g, sc, budget, time_limit=2, deterministic=True, workers=1)
        return list(r.skeleton.order), _without_wall(r.info)

    idle = run()
    loaded_clock()
    assert run() == idle
