"""Time limits hold from the first second: one deadline (``SolverConfig.deadline``) reaches
every run and phase, the remat pipeline skips what cannot fit the time left (its models
above a size, whatever the time: memory stays bounded), the command line counts from the
process's start, stops at its limit while reading, and says when the solver got less than
half of the limit. Mechanisms only: the timings themselves are in
``benchmarks/bench_deadlines.py``."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
from ortools.sat.python import cp_model

from cpsched import api
from cpsched.analysis.memory import simulate
from cpsched.cli import main
from cpsched.core.errors import InfeasibleError
from cpsched.core.scenarios import static
from cpsched.cp import runtime
from cpsched.cp.remat.problem import ModelTooLarge, clone_candidates
from cpsched.cp.remat.solve import solve_remat
from cpsched.generators import layered, random_layered, transformer_parallel
from cpsched.heuristics.remat import _greedy_regens, _setup
from cpsched.remat.timing import op_durations
from cpsched.writers.json_graph import graph_to_dict

REPO = Path(__file__).resolve().parents[1]


def hard_model(n: int = 40) -> cp_model.CpModel:
    """A model CP-SAT does not close in seconds: a long search to cut short."""
    rng = np.random.default_rng(0)
    m = cp_model.CpModel()
    xs = [m.new_int_var(0, 1000, f"x{i}") for i in range(n)]
    for _ in range(3 * n):
        a, b, c = rng.choice(n, 3, replace=False)
        m.add(int(rng.integers(1, 9)) * xs[a] + int(rng.integers(1, 9)) * xs[b]
              - int(rng.integers(1, 9)) * xs[c] != int(rng.integers(0, 50)))
    m.add_all_different(xs)
    m.maximize(sum(int(rng.integers(1, 20)) * x for x in xs))
    return m


def test_the_deadline_cuts_a_run_whatever_its_own_limit():
    t0 = time.perf_counter()
    cfg = runtime.SolverConfig(time_limit=120, deadline=t0 + 0.3)
    r = runtime.solve(hard_model(), cfg)
    assert r.status in (runtime.FEASIBLE, runtime.UNKNOWN)
    assert time.perf_counter() - t0 < 30  # 0.3 s asked; far from the 120 s of its limit


def test_clone_positions_past_the_limit_are_refused_before_any_model():
    g = layered(600, seed=0)
    sc = static()
    order = g.default_order()
    bud = (0.85 * simulate(g, order, sc).peak).astype(np.int64)
    kw = dict(evict=False, dur=op_durations(g, sc), tau_max=None, margin=1.0, depth=1,
              max_regen=None)
    regen, dom, _ = clone_candidates(g, order, sc, bud, **kw)
    positions = sum(len(v) for v in dom.values())
    assert positions > 1000
    with pytest.raises(ModelTooLarge):
        clone_candidates(g, order, sc, bud, max_positions=positions // 2, **kw)


def test_remat_past_its_deadline_runs_nothing_and_says_so():
    g = layered(400, seed=1)
    budget = int(0.9 * simulate(g, g.default_order(), static()).peak[0])
    t0 = time.perf_counter()
    with pytest.raises(InfeasibleError, match="no plan found"):
        solve_remat(g, None, budget, time_limit=60, deadline=t0 - 1.0)
    assert time.perf_counter() - t0 < 20


def test_remat_never_builds_a_model_too_large_for_its_time(monkeypatch):
    import cpsched.cp.remat.solve as remat_solve

    def refuse(spec):
        raise AssertionError(f"built: {sum(map(len, spec.stage_domain.values()))} positions")

    monkeypatch.setattr(remat_solve, "build_model", refuse)
    g = layered(1200, seed=0)  # about 400k clone positions at 90 %: 16 s to build
    budget = int(0.9 * simulate(g, g.default_order(), static()).peak[0])
    try:
        r = solve_remat(g, None, budget, time_limit=3, reorder=False)
    except InfeasibleError:  # no baseline plan in 3 s on a loaded machine: no model either
        return
    assert str(r.info.get("cp_fixed_status", "")).startswith("SKIPPED")
    assert (r.peak <= r.budget).all()  # a baseline's plan, replayed


def test_the_greedy_starts_no_round_past_its_limit():
    g = random_layered(n=200, seed=4)
    sc, bud, order, dur, sizes, trans = _setup(
        g, None, int(0.8 * simulate(g, g.default_order(), static()).peak[0]), None, None)
    _, done = _greedy_regens(g, bud, order, dur, sizes, trans, "gain", time_limit=0.0,
                             t0=time.perf_counter())
    assert done <= 1
    _, more = _greedy_regens(g, bud, order, dur, sizes, trans, "gain", time_limit=60.0,
                             t0=time.perf_counter())
    assert more > 1


def test_api_schedule_counts_its_budget_reference_in_its_limit():
    """The percentage budget's reference solve and the solve after it share one deadline."""
    g = random_layered(n=120, seed=5)
    t0 = time.perf_counter()
    r = api.schedule(g, budget="90%", time_limit=3)
    assert r.solver["seconds_available"] < 3  # the reference took its share first
    assert time.perf_counter() - t0 < 30


def test_compare_past_its_deadline_runs_no_solver_row():
    g = transformer_parallel(layers=1, dp=2, tp=2)
    c = api.compare(g, scenarios=["b=2", "s=256"], time_limit=10,
                    deadline=time.perf_counter() - 1.0)
    assert c.errors.get("cp-memory") == "not run: the time limit ran out"
    assert "cp-memory" not in c.results


def test_frontier_past_its_deadline_solves_no_point():
    g = random_layered(n=12, seed=1)
    f = api.frontier(g, points=2, time_limit=10, deadline=time.perf_counter() - 1.0)
    # (the range may be one budget: no collectives, so the least-peak order is the fastest)
    assert f.points and all(p["status"] == "NOT_RUN" for p in f.points)


def test_a_command_that_starts_late_says_the_solver_had_under_half(tmp_path, capsys):
    src = tmp_path / "g.json"
    src.write_text(json.dumps(graph_to_dict(random_layered(n=60, seed=1))))
    out = tmp_path / "o.json"
    # the process "started" 3 of its 4 seconds ago: the solver has under half of them
    rc = main(["schedule", str(src), "-o", str(out), "--time-limit", "4", "--json"],
              started=time.perf_counter() - 3.0)
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    assert d["solver"]["time_limit"] == 4 and d["solver"]["seconds_available"] < 1.0
    rc = main(["schedule", str(src), "-o", str(out), "--time-limit", "4"],
              started=time.perf_counter() - 3.0)
    assert rc == 0 and "note: the solver had" in capsys.readouterr().out


def test_the_limit_holds_while_reading_a_large_input(tmp_path, capsys):
    src = tmp_path / "g.json"
    src.write_text(json.dumps(graph_to_dict(layered(5000, seed=0))))
    out = tmp_path / "o.json"
    # started long ago: the limit and its tolerance are over while the input is read
    rc = main(["schedule", str(src), "-o", str(out), "--time-limit", "1"],
              started=time.perf_counter() - 10.0)
    err = capsys.readouterr().err
    assert rc == 2 and "time limit of 1 s ran out" in err and len(err.splitlines()) == 1
    assert not out.exists()
    # heuristics have no time limit: nothing stops them
    assert main(["schedule", str(src), "-o", str(out), "--method", "xla-dfs", "--time-limit",
                 "1"], started=time.perf_counter() - 10.0) == 0


def test_the_console_arms_the_hard_stop_from_the_arguments_as_typed():
    from cpsched.console import _early_stop

    assert _early_stop(["schedule", "g.json", "--time-limit", "2"], 100.0) == 102.5
    assert _early_stop(["compare", "g.json", "--time-limit=40"], 0.0) == 41.0  # 5 %: 2 s
    assert _early_stop(["pipeline", "-p", "4", "-m", "8", "--time-limit", "3"], 0.0) == 3.5
    for argv in (["schedule", "g.json", "--method", "xla-dfs", "--time-limit", "2"],
                 ["schedule", "g.json", "--deterministic", "--time-limit", "2"],
                 ["schedule", "g.json", "--time-limit", "x"],
                 ["schedule", "g.json"], ["info", "g.json", "--time-limit", "2"]):
        assert _early_stop(argv, 0.0) is None, argv
