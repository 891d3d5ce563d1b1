"""The CP-SAT runtime: determinism, stop-at-target, hints, log to stderr, SIGINT."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from ortools.sat.python import cp_model

from cpsched.cp import runtime
from cpsched.cp.runtime import SolverConfig

REPO = Path(__file__).resolve().parents[1]


def hard_model(n: int = 40, seed: int = 0):
    """A permutation with a weighted objective and forbidden differences: quick to find
    solutions for, slow to prove."""
    rng = random.Random(seed)
    m = cp_model.CpModel()
    x = [m.new_int_var(0, n - 1, f"x{i}") for i in range(n)]
    m.add_all_different(x)
    for _ in range(4 * n):
        i, j = rng.sample(range(n), 2)
        m.add(x[i] + rng.randint(0, 5) != x[j])
    m.minimize(sum(rng.randint(1, 50) * v for v in x[: n // 2]))
    return m, x


def test_deterministic_runs_repeat_exactly():
    m, x = hard_model()
    cfg = SolverConfig(time_limit=0.5, workers=2, seed=3, deterministic=True)
    a = runtime.solve(m, cfg)
    b = runtime.solve(m, cfg)
    assert a.solved and b.solved
    assert a.objective == b.objective
    assert [a.value(v) for v in x] == [b.value(v) for v in x]
    # deterministic means one worker, stopped on deterministic time
    s = cp_model.CpSolver()
    runtime.configure(s, cfg, 0.5)
    assert s.parameters.num_workers == 1
    assert s.parameters.max_deterministic_time == pytest.approx(0.5 * runtime.DET_PER_SECOND)


def test_stop_at_target_and_progress():
    m, x = hard_model()
    seen = []
    r = runtime.solve(m, SolverConfig(time_limit=5), progress=lambda *a: seen.append(a),
                      stop_at=float("inf"))
    assert r.solved and r.stopped_at_target
    assert len(seen) == r.stats["solutions"] >= 1
    obj, bound, gap, elapsed = seen[-1]
    assert gap == pytest.approx(runtime.gap(obj, bound)) and elapsed >= 0


def test_status_of_an_infeasible_model():
    m = cp_model.CpModel()
    v = m.new_int_var(0, 3, "v")
    m.add(v > 5)
    r = runtime.solve(m, SolverConfig(time_limit=1))
    assert r.status == runtime.INFEASIBLE and not r.solved and r.objective is None


def test_set_hints_keeps_one_value_per_variable():
    m = cp_model.CpModel()
    a, b = m.new_int_var(0, 9, "a"), m.new_int_var(0, 9, "b")
    assert runtime.set_hints(m, [(a, 1), (b, 2), (a, 5), (m.new_constant(3), 3)]) == 3
    assert len(m.proto.solution_hint.vars) == 3
    assert list(m.proto.solution_hint.values)[:2] == [1, 2]


def test_log_goes_to_stderr(capfd):
    m, _ = hard_model(12)
    runtime.solve(m, SolverConfig(time_limit=0.3, log=True))
    out, err = capfd.readouterr()
    assert out == ""
    assert "CpSolverResponse" in err


@pytest.mark.skipif(os.name != "posix", reason="needs POSIX signals")
def test_sigint_keeps_the_best_solution():
    code = textwrap.dedent("""
        import sys
        sys.path.insert(0, sys.argv[1])
        from tests.test_runtime import hard_model
        from cpsched.cp import runtime
        m, x = hard_model(60)
        def first(obj, bound, gap, t):
            print("solution", flush=True)
        r = runtime.solve(m, runtime.SolverConfig(time_limit=120), progress=first)
        print("result", r.status, r.interrupted, r.objective is not None, flush=True)
    """)
    last = interrupt_when_ready(code, "solution")
    assert last[0] == "result"
    assert last[1] in ("FEASIBLE", "OPTIMAL") and last[2] == "True" and last[3] == "True"


def interrupt_when_ready(code: str, ready: str) -> list[str]:
    """Run ``code`` in a fresh interpreter, send SIGINT once it prints ``ready``; the words
    of its last line (it must exit normally)."""
    p = subprocess.Popen([sys.executable, "-c", code, str(REPO)], stdout=subprocess.PIPE,
                         text=True, cwd=REPO,
                         # a background job may inherit SIGINT ignored: restore it
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert p.stdout.readline().strip() == ready
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=200)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0
    return out.strip().splitlines()[-1].split()


def test_deterministic_pipelines_repeat_exactly():
    """One meaning of ``deterministic`` for every model: the same orders twice."""
    from cpsched.core.scenarios import from_dim_specs
    from cpsched.strategies.min_peak.method import solve
    from cpsched.strategies.overlap.method import solve_overlap
    from cpsched.generators import random_layered, transformer_parallel

    g = random_layered(n=80, seed=4)
    a = solve(g, time_limit=1, deterministic=True)
    b = solve(g, time_limit=1, deterministic=True)
    assert a.order == b.order and a.info["deterministic"]
    t = transformer_parallel(layers=1, dp=2, tp=2)
    sc = from_dim_specs(["b=2", "s=256"])
    x = solve_overlap(t, sc, time_limit=2, deterministic=True)
    y = solve_overlap(t, sc, time_limit=2, deterministic=True)
    assert x.order == y.order and x.info["makespan"] == y.info["makespan"]


def test_deterministic_remat_repeats_exactly():
    from cpsched.strategies.remat.method import solve_remat
    from cpsched.strategies.min_peak.method import solve
    from cpsched.generators import random_layered

    g = random_layered(n=40, seed=2)
    budget = int(0.95 * solve(g, time_limit=2, deterministic=True).peak_bytes[0])
    a = solve_remat(g, None, budget, time_limit=3, deterministic=True)
    b = solve_remat(g, None, budget, time_limit=3, deterministic=True)
    assert a.events == b.events and list(a.added_time) == list(b.added_time)
    assert (a.peak <= budget).all() and a.added_time[0] > 0    # no order fits: clones


@pytest.mark.skipif(os.name != "posix", reason="needs POSIX signals")
def test_sigint_stops_a_pipeline_with_its_best_order():
    code = textwrap.dedent("""
        import sys
        sys.path.insert(0, sys.argv[1])
        from cpsched.strategies.min_peak.method import solve
        from cpsched.generators import random_layered
        g = random_layered(n=250, seed=1)
        def progress(obj, bound, gap, t):
            if not progress.said:
                progress.said = True
                print("running", flush=True)
        progress.said = False
        s = solve(g, time_limit=40, progress=progress, decompose=False)
        print("result", s.status, s.info.get("interrupted"), s.seconds < 30, flush=True)
    """)
    last = interrupt_when_ready(code, "running")
    assert last == ["result", last[1], "True", "True"]
    assert last[1] in ("FEASIBLE", "HEURISTIC_FALLBACK", "OPTIMAL")
