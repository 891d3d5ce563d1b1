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
from cpsched.strategies.remat.method import solve_remat
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
    import cpsched.cp.remat.solve as remat_model

    def refuse(spec):
        raise AssertionError(f"built: {sum(map(len, spec.stage_domain.values()))} positions")

    monkeypatch.setattr(remat_model, "build_model", refuse)
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
    # no solve ran; a point shows a known order only where one fits its budget
    assert f.points and all(p["status"] in ("NOT_RUN", "HEURISTIC") for p in f.points)
    assert all("peak_bytes" not in p for p in f.points if p["status"] == "NOT_RUN")


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
    assert d["time_note"].startswith("note: the solver had")  # in the JSON too
    rc = main(["schedule", str(src), "-o", str(out), "--time-limit", "4"],
              started=time.perf_counter() - 3.0)
    assert rc == 0 and "note: the solver had" in capsys.readouterr().out
    # started just now: no note
    rc = main(["schedule", str(src), "-o", str(out), "--time-limit", "4", "--json"])
    assert rc == 0 and "time_note" not in json.loads(capsys.readouterr().out)


def test_compare_and_frontier_that_start_late_say_the_solves_had_under_half(tmp_path, capsys):
    src = tmp_path / "g.json"
    src.write_text(json.dumps(graph_to_dict(random_layered(n=30, seed=1))))
    for argv in (["compare", str(src)], ["frontier", str(src), "--points", "2"]):
        rc = main([*argv, "--time-limit", "8", "--json"], started=time.perf_counter() - 6.0)
        assert rc == 0
        assert json.loads(capsys.readouterr().out)["time_note"].startswith(
            "note: the solves had")
        rc = main([*argv, "--time-limit", "8"], started=time.perf_counter() - 6.0)
        assert rc == 0 and "note: the solves had" in capsys.readouterr().out
    pipe = ["pipeline", "--stages", "2", "--microbatches", "3", "--time-limit", "8"]
    assert main([*pipe, "--json"], started=time.perf_counter() - 6.0) == 0
    rows = json.loads(capsys.readouterr().out)
    cp_row = next(r for r in rows if r["method"] == "cp")
    assert cp_row["time_note"].startswith("note: the solves had")
    assert main(pipe, started=time.perf_counter() - 6.0) == 0
    assert "note: the solves had" in capsys.readouterr().out
    assert main([*pipe, "--json"]) == 0  # started now: no note
    assert all("time_note" not in r for r in json.loads(capsys.readouterr().out))


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


class FakeClock:
    """A ``time`` stand-in whose clock moves only when the code under test does work."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now


def overlap_case():
    from cpsched.core.scenarios import from_dim_specs
    from cpsched.cp.overlap.problem import build_problem

    g = transformer_parallel(layers=2)
    sc = from_dim_specs(["b=2", "s=512"])
    prob = build_problem(g, sc)
    order = g.topological_order()
    budget = np.asarray(simulate(g, order, sc).peak) * 4  # room to move every pair
    return g, sc, prob, order, budget


def test_the_hoist_starts_no_step_that_would_end_past_its_deadline(monkeypatch):
    from cpsched.strategies.overlap import hints

    g, sc, prob, order, budget = overlap_case()
    clock = FakeClock()
    monkeypatch.setattr(hints, "time", clock)
    calls = []

    def slow_objective(o):  # one time unit per judged move
        calls.append(clock.now)
        clock.now += 1.0
        return float(prob.timeline(o).makespan[0])

    hints.budget_hoist(g, sc, order, budget, prob.starts, prob.dones, slow_objective,
                       deadline=10.5)
    assert len(calls) > 5  # it worked until the deadline
    assert clock.now <= 10.5  # and no step ended past it (it used to end at 11)


def test_an_order_is_timed_on_the_graph_as_its_plan_graph_would_time_it():
    # the joint pipeline times a plan without clones or copies on the graph itself (writing
    # a 100k-op plan as a graph took seconds): the same figures as the plan graph's
    from cpsched.core.scenarios import from_dim_specs
    from cpsched.cp.joint.problem import build_joint_problem, time_order, time_plan
    from cpsched.cp.overlap.problem import build_problem
    from cpsched.remat.skeleton import Skeleton, materialize

    for g, sc in ((transformer_parallel(layers=2), from_dim_specs(["b=2,4", "s=512"])),
                  (layered(200, preds=5, seed=1), static())):
        prob = build_joint_problem(build_problem(g, sc), np.full(len(sc), 10**15), None)
        order = g.topological_order()
        for s in range(len(sc)):
            fast = time_order(prob, order, s)
            slow = time_plan(prob, materialize(g, Skeleton(tuple(order)), []), s)
            assert (fast.makespan, fast.exposed_comm, fast.exposed_copy, fast.peak) == (
                slow.makespan, slow.exposed_comm, slow.exposed_copy, slow.peak)
            assert fast.makespan > 0 and fast.peak > 0


def test_remat_keeps_a_heuristic_plan_when_the_reorder_search_takes_all_the_time(monkeypatch):
    # cp never returns less than the best heuristic, whatever the limit: XLA's greedy runs
    # on the lowest-peak order known before the reorder search, which here (a stand-in)
    # uses up every second left; it used to end with "no plan found"
    import cpsched.strategies.remat.method as remat_solve

    def slow_reorder(graph, sc, *, hint, cfg, **kw):
        deadline = cfg.deadline
        time.sleep(max(0.0, deadline - time.perf_counter()) if deadline else 0.0)
        return list(hint), simulate(graph, hint, sc).peak, "HINT"

    monkeypatch.setattr(remat_solve, "min_peak_order", slow_reorder)
    g = layered(200, preds=5, seed=0)
    sc = static()
    budget = int(0.9 * simulate(g, g.default_order(), sc).peak[0])
    best = min((g.default_order(), list(remat_solve.xla_default(g, sc))),
               key=lambda o: simulate(g, o, sc).peak[0])
    assert simulate(g, best, sc).peak[0] > budget  # the reorder search runs
    greedy = remat_solve.xla_remat(g, sc, budget, order=best)
    assert (greedy.peak <= greedy.budget).all()  # a heuristic plan exists
    r = solve_remat(g, sc, budget, time_limit=60, deadline=time.perf_counter() + 3.0)
    assert (r.peak <= r.budget).all()
    assert r.weighted_added <= greedy.weighted_added + 1e-12


def test_frontier_starts_no_solve_whose_fixed_work_would_not_fit(monkeypatch):
    # a solve's work besides its search is seconds on 100k ops: with less time than that
    # per solve, none starts, and the heuristics' orders set the range
    from cpsched.strategies import frontier as fr

    def refuse(*a, **k):
        raise AssertionError("a solve started without time for it")

    monkeypatch.setattr(fr, "SOLVE_FIXED_SECONDS_PER_OP", 1.0)  # 30 s of fixed work a solve
    for name in ("solve_remat", "solve_overlap", "solve_joint"):
        monkeypatch.setattr(fr, name, refuse)
    g = transformer_parallel(layers=1, dp=2, tp=2)
    f = api.frontier(g, points=2, scenarios=["b=2", "s=256"], time_limit=10,
                     deadline=time.perf_counter() + 20.0)
    # no solve started: the top point (the fastest order's own peak) keeps that order, and
    # every point below is either not run or carries a known order within its budget
    assert f.points and all(p["status"] in ("NOT_RUN", "HEURISTIC") for p in f.points)
    top = f.points[-1]
    assert top["status"] == "HEURISTIC" and top["peak_bytes"] == top["budget_bytes"]
    for p in f.points:
        if p["status"] == "HEURISTIC":
            b = p["budget_bytes"]
            pk = p["peak_bytes"]
            assert all(pk[k] <= b[k] for k in b) if isinstance(b, dict) else pk <= b
    assert "the fastest order known" in f.settings["budget_range"]["high_source"]


def test_overlap_phases_take_their_shares_of_the_time_left_not_of_the_limit(monkeypatch):
    # with 4 s left of a 100 s limit, the heuristics' and the hoist's phases end within
    # their shares of those 4 s (of the 100 s they ran to the deadline: no solver time)
    from cpsched.strategies.overlap import method as ov

    seen = {}
    real_cands, real_hoist = ov.overlap_candidates, ov.budget_hoist

    def cands(*a, deadline=None, **k):
        seen["candidates"] = deadline
        return real_cands(*a, deadline=deadline, **k)

    def hoist(*a, deadline=None, **k):
        seen["hoist"] = deadline
        return real_hoist(*a, deadline=deadline, **k)

    monkeypatch.setattr(ov, "overlap_candidates", cands)
    monkeypatch.setattr(ov, "budget_hoist", hoist)
    g = transformer_parallel(layers=1, dp=2, tp=2)
    t0 = time.perf_counter()
    from cpsched.core.scenarios import from_dim_specs

    ov.solve_overlap(g, from_dim_specs(["b=2", "s=256"]), time_limit=100, deadline=t0 + 4.0)
    assert seen["candidates"] <= t0 + 0.25 * 4.0 + 0.5
    assert seen["hoist"] <= t0 + 0.4 * 4.0 + 0.5


def test_the_heuristics_phase_counts_the_evaluation_of_each_order(monkeypatch):
    # evaluating a heuristic's order (a timeline: a second at 100k ops) is timed with its
    # run, so that no run starts whose evaluation would end past the phase's deadline; the
    # evaluations after the phase used to take 40 s of a 30 s limit at 100k ops
    from cpsched.strategies.overlap import candidates as cd
    from cpsched.strategies.overlap.method import OVERLAP_HEURISTICS

    g, sc, prob, order, budget = overlap_case()
    clock = FakeClock()
    monkeypatch.setattr(cd, "time", clock)
    judged = []

    def slow_evaluation(label, o):
        judged.append(label)
        clock.now += 1.0

    errors: dict = {}
    found = cd.overlap_candidates(g, sc, OVERLAP_HEURISTICS, {"given": order}, budget, {},
                                  errors, deadline=3.5, on_order=slow_evaluation)
    assert 1 <= len(judged) <= 3 and set(judged) <= set(found)
    assert clock.now <= 3.5
    assert any(v.startswith("skipped") for v in errors.values())


def test_the_hoist_and_the_repair_past_their_deadline_do_no_work(monkeypatch):
    from cpsched.strategies.overlap import hints

    g, sc, prob, order, budget = overlap_case()

    def refuse(*a, **k):
        raise AssertionError("re-simulated an order past the deadline")

    monkeypatch.setattr(hints, "peak", refuse)
    monkeypatch.setattr(hints, "simulate", refuse)
    past = time.perf_counter() - 1.0
    assert hints.budget_hoist(g, sc, order, budget, prob.starts, prob.dones, refuse,
                              deadline=past) == list(order)
    assert hints.budget_repair(g, sc, order, budget, prob.starts, prob.dones, refuse,
                               deadline=past) is None


def test_a_hard_stop_while_the_arguments_are_parsed_gives_one_line(monkeypatch, capsys):
    # the console arms the hard stop from the arguments as typed, before the command line
    # has parsed them: a stop there (a loaded machine) is one line and exit 2, no traceback
    import cpsched.cli as cli
    from cpsched.core import signals

    def stopped(*a, **k):
        raise signals.TimeUp()

    monkeypatch.setattr(cli, "build_parser", stopped)
    assert main(["schedule", "g.json", "--time-limit", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cpsched: error: the time limit ran out while cpsched was starting")
    assert len(err.splitlines()) == 1


def test_compare_keeps_its_rows_when_their_figures_take_it_past_the_hard_stop(monkeypatch, capsys):
    # XLA's allocation figures of every row (a buffer assignment each) took a loaded machine
    # past the command's hard stop after the rows were done: the whole comparison was
    # thrown away (exit 2, "ran out before any result"). The figures now count in each row's
    # time, and what was found is written.
    slow = api.xla_allocation

    def slow_allocation(result):
        time.sleep(0.5)
        return slow(result)

    monkeypatch.setattr(api, "xla_allocation", slow_allocation)
    src = REPO / "models" / "hlo" / "mlp_train.hlo"
    t0 = time.perf_counter()
    rc = main(["compare", str(src), "--methods", "xla-dfs,xla-postorder,cp", "--time-limit", "2",
               "--json"])
    wall = time.perf_counter() - t0
    assert rc == 0
    rows = {r["method"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert {"xla-dfs", "xla-postorder"} <= set(rows)
    assert rows["xla-dfs"]["allocated_bytes"]
    assert wall < 2 + 1.0 + 0.6  # the limit, its tolerance, one slow figure past the deadline


def test_a_comparison_with_no_result_refuses_to_draw_in_one_line(tmp_path, capsys):
    # every row "not run: the time limit ran out" (a loaded machine): --plot gave
    # "internal error: StopIteration", exit 3
    c = api.compare(REPO / "models" / "hlo" / "demo.hlo", methods=["xla-default", "lhs"],
                    deadline=time.perf_counter() - 1)
    assert not c.results
    out = tmp_path / "x.png"
    with pytest.raises(api.InputError, match="nothing to draw"):
        c.plot(out)
    assert not out.exists()
