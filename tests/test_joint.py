"""The joint model (cp-joint), the frontier and the fair compare: plans within budget,
claimed figures equal to the simulators', never worse than the separate methods, exact on
a case computed by hand; every frontier option has an effect."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from cpsched.analysis.memory import peak, simulate
from cpsched.analysis.validate import validate_order
from cpsched.core.errors import InfeasibleError, ScheduleError
from cpsched.core.graph import GraphBuilder, OpKind
from cpsched.core.scenarios import static
from cpsched.cost.model import Costs
from cpsched.cost.timeline import simulate_timeline
from cpsched.strategies.joint.bounds import analytic_bound, memory_cut_bound, no_memory_bound
from cpsched.cp.joint.problem import (
    build_joint_problem,
    copy_out_before_back,
    skeleton_from_plan_order,
    time_plan,
)
from cpsched.strategies.joint.method import solve_joint
from cpsched.cp.overlap.problem import build_problem
from cpsched.cp.runtime import SolverConfig
from cpsched.cp.remat.problem import min_memory_bound
from cpsched.generators import random_layered
from cpsched.remat.policy import evictable_buffers, recomputable_ops
from cpsched.remat.replay import replay
from cpsched.remat.rewrite import plan_to_graph
from cpsched.remat.skeleton import Evict, PlanError, Regen, Skeleton, materialize
from cpsched.remat.timing import TransferModel
from tests.helpers import all_topological_orders
from tests.test_cli_options import GRAPH, SYNC, ok_json, run
from tests.test_cp_overlap import _pair, random_async
from tests.test_remat_cp import brute_force, weighted_dag


def chain_with_far_use():
    """x (big, cheap) -> y -> z -> w, and w also reads x: holding x over y and z costs
    100 bytes; recomputing x before w costs x's time (1 unit). Sizes: x 100, y 60, z 60,
    w 1. The budget 130 cannot hold x with y and z; with a clone of x it can."""
    gb = GraphBuilder("far-use")
    p = gb.add_op("p", "parameter", OpKind.PARAMETER)
    x = gb.add_op("x", "add", OpKind.COMPUTE, operands=[p], attrs={"duration": 1.0})
    y = gb.add_op("y", "add", OpKind.COMPUTE, operands=[x], attrs={"duration": 10.0})
    z = gb.add_op("z", "add", OpKind.COMPUTE, operands=[y], attrs={"duration": 10.0})
    w = gb.add_op("w", "add", OpKind.COMPUTE, operands=[z, x], attrs={"duration": 10.0})
    bp = gb.add_buffer(p, 4, name="p", live_in=True, live_out=True)
    gb.add_buffer_user(bp, x)
    bx = gb.add_buffer(x, 100, name="x")
    gb.add_buffer_user(bx, y)
    gb.add_buffer_user(bx, w)
    by = gb.add_buffer(y, 60, name="y")
    gb.add_buffer_user(by, z)
    bz = gb.add_buffer(z, 60, name="z")
    gb.add_buffer_user(bz, w)
    gb.set_live_out(gb.add_buffer(w, 1, name="w"))
    return gb.build()


def test_hand_computed_case_is_optimal_with_one_clone():
    g = chain_with_far_use()
    costs = (np.array([[0, 1, 10, 10, 10]]), {})
    # no clone: at z, p + x + y + z = 224 bytes, makespan 1 + 10 + 10 + 10 = 31
    free = solve_joint(g, static(), 224, time_limit=10, costs=costs)
    assert free.status == "OPTIMAL" and free.info["makespan"]["static"] == pytest.approx(31.0)
    # below 224 x must go after y and come back as a clone before w: the peak is then at w
    # (p + z + x' + w = 165) and the makespan one unit longer
    res = solve_joint(g, static(), 200, time_limit=10, costs=costs)
    assert res.status == "OPTIMAL"
    assert res.info["makespan"]["static"] == pytest.approx(32.0)
    assert res.info["recompute"]["static"] == pytest.approx(1.0)
    assert res.peak[0] == 165
    # the bound: the solver's optimum in ticks less the tick rounding slack
    slack = res.info["model"]["rounding_slack"][0]
    assert 0 <= slack < 0.01
    assert 32.0 - slack <= res.info["makespan_bound"]["static"] <= 32.0
    # at w, p + z + x + w = 165 is needed whatever the plan: 164 is proven impossible (by
    # the cut bound at w, before any model runs)
    with pytest.raises(InfeasibleError, match="at w the bytes that no clone"):
        solve_joint(g, static(), 164, time_limit=10, costs=costs)


def _transformer():
    from cpsched.core.scenarios import from_dim_specs
    from cpsched.generators import transformer_parallel
    from cpsched.core.transforms import convert_sync_collectives

    g = convert_sync_collectives(
        transformer_parallel(layers=1, d_model=256, heads=4, d_ff=1024, vocab=1024)
    )
    return g, from_dim_specs(["b=2", "s=128"])


def test_joint_result_is_validated_and_never_worse_than_the_separate_methods():
    g, sc = _transformer()
    from cpsched import schedule

    least = schedule(g, scenarios=sc, time_limit=5).peak[sc.names[0]]
    bud = int(0.9 * least)
    res = solve_joint(g, sc, bud, time_limit=20)
    info = res.info
    assert res.peak[0] <= bud
    # the reported figures are the simulators' on the plan
    ev = materialize(g, res.skeleton, res.active[0])
    from cpsched.cp.joint.problem import build_joint_problem
    from cpsched.cp.overlap.problem import build_problem

    prob = build_joint_problem(build_problem(g, sc, reach=False), np.array([bud]), None)
    t = time_plan(prob, ev, 0)
    n = sc.names[0]
    assert info["makespan"][n] == pytest.approx(t.makespan)
    assert info["exposed_comm"][n] == pytest.approx(t.exposed_comm)
    assert info["peak_bytes"][n] == t.peak == int(res.peak[0])
    fits = [r for r in info["sequential"] if r["fits"]]
    assert fits, info["sequential"]
    assert info["makespan"][n] <= min(r["makespan"][n] for r in fits) * (1 + 1e-9)
    bound = info["makespan_bound"]
    if bound is not None:
        assert bound[n] <= info["makespan"][n] * (1 + 1e-9)


@pytest.mark.parametrize("seed", [3, 8])  # seeds where 90 % of the least peak is reachable
def test_random_graphs_plans_fit_and_bounds_hold(seed):
    g = random_layered(n=12, seed=seed)
    from cpsched import schedule

    least = schedule(g, time_limit=3).peak["static"]
    floor = int(min_memory_bound(g)[0][0])
    bud = max(floor, int(0.9 * least))
    res = solve_joint(g, static(), bud, time_limit=6)
    assert res.peak[0] <= bud
    b = res.info["makespan_bound"]
    if b is not None:
        assert b["static"] <= res.info["makespan"]["static"] * (1 + 1e-9)


def test_budget_below_the_proven_minimum_is_an_input_error(capsys, tmp_path):
    p = tmp_path / "g.json"
    p.write_text(json.dumps(GRAPH))
    rc, out, err = run(
        capsys,
        "schedule",
        p,
        "--dim",
        "s=2",
        "--objective",
        "time",
        "--budget",
        "10",
        "-o",
        tmp_path / "o.json",
    )
    assert rc == 2 and "proven minimum" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o.json").exists()


def test_objective_time_json_reports_timing_per_scenario(capsys, tmp_path):
    p = tmp_path / "g.json"
    p.write_text(json.dumps(GRAPH))
    d = ok_json(
        capsys,
        "schedule",
        p,
        "--dim",
        "s=2,8",
        "--objective",
        "time",
        "--budget",
        "100%",
        "--time-limit",
        "4",
        "-o",
        tmp_path / "o.json",
    )
    for key in ("makespan", "exposed_comm", "peak_bytes"):
        assert set(d[key]) == {"s=2", "s=8"}
    assert all(d["peak_bytes"][n] <= d["budget_bytes"][n] for n in ("s=2", "s=8"))
    assert d["method"] == "cp-joint"


def test_frontier_options_have_effects(capsys, tmp_path):
    p = tmp_path / "g.json"
    p.write_text(json.dumps(GRAPH))
    d = ok_json(
        capsys,
        "frontier",
        p,
        "--dim",
        "s=2,8",
        "--weights",
        "1,3",
        "--points",
        "3",
        "--time-limit",
        "1",
        "--workers",
        "1",
        "--seed",
        "3",
        "--deterministic",
        "--device",
        "a100",
    )
    assert d["scenarios"] == ["s=2", "s=8"] and len(d["points"]) == 3
    st = d["settings"]
    assert (st["workers"], st["seed"], st["device"], st["time_limit_per_point"]) == (
        1,
        3,
        "a100",
        1.0,
    )
    budgets = [p["budget_bytes"]["s=8"] for p in d["points"]]
    assert budgets == sorted(budgets)
    ms = [p["makespan"]["s=8"] for p in d["points"] if p.get("makespan")]
    assert all(a >= b - 1e-15 for a, b in zip(ms, ms[1:]))  # never rises with the budget
    assert {r["method"] for r in d["baselines"]} >= {"given", "lhs"}
    # --scenarios and --profile
    sc = tmp_path / "sc.json"
    sc.write_text(json.dumps({"dims": ["s"], "scenarios": [{"name": "one", "values": {"s": 4}}]}))
    prof = tmp_path / "prof.json"
    prof.write_text(json.dumps({"c": 1000.0, "d": 1000.0}))
    e = ok_json(
        capsys,
        "frontier",
        p,
        "--scenarios",
        sc,
        "--profile",
        prof,
        "--points",
        "2",
        "--time-limit",
        "1",
    )
    assert e["scenarios"] == ["one"]
    assert min(r["makespan"] for r in e["baselines"]) >= 2000e-6
    # --async-collectives splits the sync all-reduce into a pair (one more op)
    s = tmp_path / "sync.json"
    s.write_text(json.dumps(SYNC))
    plain = ok_json(capsys, "frontier", s, "--points", "2", "--time-limit", "1")
    split = ok_json(
        capsys, "frontier", s, "--points", "2", "--time-limit", "1", "--async-collectives"
    )
    assert split["ops"] == plain["ops"] + 1


def test_frontier_evict_bandwidth_and_bad_points(capsys, tmp_path):
    p = tmp_path / "g.json"
    p.write_text(json.dumps(GRAPH))
    d = ok_json(
        capsys,
        "frontier",
        p,
        "--dim",
        "s=2",
        "--points",
        "2",
        "--time-limit",
        "1",
        "--evict",
        "--bandwidth",
        "1e9",
    )
    assert d["settings"]["evict"] is True and d["settings"]["bandwidth"] == 1e9
    rc, _, err = run(capsys, "frontier", p, "--dim", "s=2", "--points", "1")
    assert rc == 2 and "--points" in err


def test_frontier_plot(capsys, tmp_path):
    p = tmp_path / "g.json"
    p.write_text(json.dumps(GRAPH))
    png = tmp_path / "f.png"
    rc, out, err = run(
        capsys, "frontier", p, "--dim", "s=2", "--points", "2", "--time-limit", "1", "--plot", png
    )
    if importlib.util.find_spec("matplotlib") is None:
        assert rc == 2 and "matplotlib" in err and not png.exists()
    else:
        assert rc == 0 and png.read_bytes()[:4] == b"\x89PNG"
    # the plot may not name an input
    rc, _, err = run(capsys, "frontier", p, "--dim", "s=2", "--points", "2", "--plot", p)
    assert rc == 2 and json.loads(p.read_text()) == GRAPH


def test_compare_solves_overlap_at_each_baselines_memory(capsys, tmp_path):
    p = tmp_path / "g.json"
    p.write_text(json.dumps(GRAPH))
    rows = ok_json(capsys, "compare", p, "--dim", "s=2", "--time-limit", "2")["rows"]
    by = {r["method"]: r for r in rows if "error" not in r}
    assert any(name.startswith("cp-overlap@") for name in by), sorted(by)
    assert by["cp-overlap"]["budget"]["bytes"]["s=2"] >= by["cp-overlap"]["peak_bytes"]["s=2"]
    for name, r in by.items():
        if name.startswith("cp-overlap@"):
            base = by[name.split("@", 1)[1]]
            assert r["budget"]["bytes"]["s=2"] == base["peak_bytes"]["s=2"]
            assert r["peak_bytes"]["s=2"] <= base["peak_bytes"]["s=2"]
            assert r["makespan"]["s=2"] <= base["makespan"]["s=2"] * (1 + 1e-9)
        elif not name.startswith("cp"):
            assert r["budget"] is None


@pytest.mark.parametrize("n,seed", [(5, 6), (5, 10), (5, 30), (6, 2), (6, 11)])
def test_joint_model_matches_brute_force(n, seed):
    """Graphs where no order fits the budget without a clone: the brute force over every
    order and every placement of one clone per op (``test_remat_cp.brute_force``, checked
    by the replay) gives the least clone time; the joint model alone (no sequential hints)
    must prove the makespan ops + that clone time optimal, and the method must return it."""
    g = weighted_dag(n, seed, p=0.5)
    dur = np.array([[g.attrs(i)["duration"] for i in range(g.n_ops)]])
    orders = list(all_topological_orders(g))
    best_peak = min(int(simulate(g, o).peak[0]) for o in orders)
    budget = max(int(min_memory_bound(g)[0][0]), best_peak - 1)
    want = brute_force(g, orders, budget, dur)
    assert want and want > 0
    costs = (dur, {})
    alone = solve_joint(g, static(), budget, costs=costs, sequential=False, time_limit=20)
    assert alone.status == "OPTIMAL" and alone.info["chosen"] == "cp-joint"
    ms = alone.info["makespan"]["static"]
    assert ms == pytest.approx(dur.sum() + want)
    # proven: the bound (ticks, less the rounding slack) is sound and within 0.1 % of it
    assert ms * (1 - 1e-3) <= alone.info["makespan_bound"]["static"] <= ms + 1e-9
    assert alone.peak[0] <= budget
    full = solve_joint(g, static(), budget, costs=costs, time_limit=20)
    assert full.info["makespan"]["static"] == pytest.approx(dur.sum() + want)


# -- lower bounds on the makespan (cpsched.strategies.joint.bounds) against brute force -------------


def _async_case(n, colls, seed):
    g, op, tr = random_async(n, colls, seed)
    costs = Costs(op, {k: np.array([v]) for k, v in tr.items()})
    return g, costs, list(all_topological_orders(g))


@pytest.mark.parametrize("n,colls,seed", [(5, 2, 1), (5, 2, 3), (5, 2, 7)])
def test_budget_free_bounds_against_every_order(n, colls, seed):
    """Graphs with two async all-reduces where the analytic bound is below the best order:
    the overlap model without a memory limit proves the best of all orders (brute force),
    so its bound is tight there, and neither bound is above it."""
    g, costs, orders = _async_case(n, colls, seed)
    best = min(simulate_timeline(g, o, costs, static()).makespan[0] for o in orders)
    base = build_problem(g, static(), costs=costs)
    lb_a = float(analytic_bound(base)[0])
    assert lb_a < best - 1e-9  # the solver has something to add
    lb, ms, info = no_memory_bound(base, 10, SolverConfig(workers=1))
    assert lb_a - 1e-9 <= lb[0] <= best + 1e-9
    assert lb[0] >= best * (1 - 1e-3) and ms[0] == pytest.approx(best)


@pytest.mark.parametrize("n,colls,seed", [(5, 1, 2), (5, 1, 7)])
def test_joint_bound_under_a_budget_against_brute_force(n, colls, seed):
    """No order fits the budget: brute force over every order and every clone of a
    recomputable op at every later step (replayed against the budget, timed with the
    collective) gives the optimum; the method reaches it, its bound is never above it and
    is at least the best order without memory limit (which bounds every plan)."""
    g, costs, orders = _async_case(n, colls, seed)
    budget = min(int(peak(g, o)[0]) for o in orders) - 1
    prob = build_joint_problem(build_problem(g, static(), costs=costs), np.array([budget]), None)
    free = min(simulate_timeline(g, o, costs, static()).makespan[0] for o in orders)
    want = None
    for order in orders:
        pos = {v: t for t, v in enumerate(order)}
        for v in np.flatnonzero(recomputable_ops(g)):
            for t in range(pos[int(v)] + 1, g.n_ops):
                try:
                    ev = materialize(g, Skeleton(tuple(order), (Regen(int(v), t, pos[int(v)]),)))
                except PlanError:
                    continue
                if replay(g, ev, budget=budget).errors:
                    continue
                m = time_plan(prob, ev, 0).makespan
                want = m if want is None else min(want, m)
    assert want is not None and want > free  # the budget costs time
    res = solve_joint(g, static(), budget, costs=costs, time_limit=10)
    ms, lb = res.info["makespan"]["static"], res.info["makespan_bound"]["static"]
    assert res.peak[0] <= budget and ms == pytest.approx(want)
    assert free * (1 - 1e-3) <= lb <= want + 1e-9
    assert res.info["budget_free_bound"]["static"] <= free + 1e-9


# -- the budget-dependent cut bound (cpsched.strategies.joint.bounds.memory_cut_bound) -------------


def far_use_across_a_collective():
    """p -> x -> y -> all-reduce(y) -> z -> w, and w also reads x (the far use). Sizes p 4
    (live in and out), x 100, y 60, the all-reduce's buffer 60, z 60, w 1; x takes 1 unit,
    y, z and w 10, the transfer 20. Below 224 bytes x cannot stay over z: its clone must
    come after z, where nothing hides it."""
    gb = GraphBuilder("far-collective")
    p = gb.add_op("p", "parameter", OpKind.PARAMETER)
    x = gb.add_op("x", "add", OpKind.COMPUTE, operands=[p])
    y = gb.add_op("y", "add", OpKind.COMPUTE, operands=[x])
    bp = gb.add_buffer(p, 4, name="p", live_in=True, live_out=True)
    gb.add_buffer_user(bp, x)
    bx = gb.add_buffer(x, 100, name="x")
    gb.add_buffer_user(bx, y)
    by = gb.add_buffer(y, 60, name="y")
    s, d, bs = _pair(gb, "ar", y, by, 60)
    z = gb.add_op("z", "add", OpKind.COMPUTE, operands=[d])
    gb.add_buffer_user(bs, z)
    bz = gb.add_buffer(z, 60, name="z")
    w = gb.add_op("w", "add", OpKind.COMPUTE, operands=[z, x])
    gb.add_buffer_user(bz, w)
    gb.add_buffer_user(bx, w)
    gb.set_live_out(gb.add_buffer(w, 1, name="w"))
    g = gb.build()
    op = np.zeros((1, g.n_ops))
    for name, t in (("x", 1.0), ("y", 10.0), ("z", 10.0), ("w", 10.0)):
        op[0, g.op_index(name)] = t
    return g, Costs(op, {s: np.array([20.0])})


def _least_makespan_one_clone(g, costs, budget, transfer=None):
    """Brute force: every order, with no clone or one clone of a recomputable op at any
    later step (or, with ``transfer``, one host round trip of an evictable buffer: every
    copy-out, free and copy-back step), replayed against the budget and timed with its
    transfers (None: none fits)."""
    prob = build_joint_problem(
        build_problem(g, static(), costs=costs), np.array([budget]), transfer
    )
    best = None
    n = g.n_ops
    for order in all_topological_orders(g):
        pos = {v: t for t, v in enumerate(order)}
        plans = [Skeleton(tuple(order))]
        for v in np.flatnonzero(recomputable_ops(g)):
            plans += [
                Skeleton(tuple(order), (Regen(int(v), t, pos[int(v)]),))
                for t in range(pos[int(v)] + 1, g.n_ops)
            ]
        for x in np.flatnonzero(evictable_buffers(g)) if transfer is not None else ():
            d = pos[int(g.buffer_def[x])]
            plans += [
                Skeleton(tuple(order), (Evict(int(x), o, f, i),))
                for o in range(d + 1, n + 1)
                for f in range(o, n + 1)
                for i in range(f, n + 1)
            ]
        for sk in plans:
            try:
                ev = materialize(g, sk)
            except PlanError:
                continue
            if replay(g, ev, budget=budget).errors:
                continue
            m = time_plan(prob, ev, 0).makespan
            best = m if best is None else min(best, m)
    return best


def test_cut_bound_is_exact_where_a_clone_cannot_hide():
    """The hand case: 51 units with memory to spare (the chain through the transfer); at
    200 bytes the clone of x costs its unit after z (brute force 52) and the cut bound
    proves 52, above every budget-free bound; at 164 bytes w's own step needs 165: no plan,
    and the cut bound says so."""
    g, costs = far_use_across_a_collective()
    base = build_problem(g, static(), costs=costs)
    free, _, _ = no_memory_bound(base, 5, SolverConfig(workers=1))
    assert free[0] == pytest.approx(51.0, rel=1e-3)
    for budget, want in ((224, 51.0), (200, 52.0), (165, 52.0)):
        assert _least_makespan_one_clone(g, costs, budget) == pytest.approx(want)
        lb, info = memory_cut_bound(build_joint_problem(base, np.array([budget]), None))
        assert lb[0] == pytest.approx(want)
    assert _least_makespan_one_clone(g, costs, 164) is None
    lb, info = memory_cut_bound(build_joint_problem(base, np.array([164]), None))
    assert lb[0] == np.inf and info["cuts"][0][0] == "w"
    # offload takes x off the device at no compute cost, but its copy back (100 units on
    # this link) comes after z: the clone stays the best plan and the bound stays exact
    slow = TransferModel(1.0, 0.0)
    host = build_joint_problem(base, np.array([200]), slow)
    assert host.evict_buffers[g.buffer_names.index("x")]
    assert _least_makespan_one_clone(g, costs, 200, slow) == pytest.approx(52.0)
    assert memory_cut_bound(host)[0][0] == pytest.approx(52.0)


def clone_on_the_chain():
    """p -> x -> u -> v -> q -> all-reduce(q) -> z, and q also reads x. Sizes p 4 (live in
    and out), x 100, u 50, v 50, q 1, the all-reduce's buffer 1, z 1 (out); x takes 1
    unit, u, v, q and z 10, the transfer 30: 71 units with memory to spare. At v's step
    p + u + v + x = 204 bytes: below that, x's clone comes after v and before q, on the
    chain to the transfer, where nothing can hide it."""
    gb = GraphBuilder("clone-on-chain")
    p = gb.add_op("p", "parameter", OpKind.PARAMETER)
    bp = gb.add_buffer(p, 4, name="p", live_in=True, live_out=True)
    ops, bufs = {}, {}
    for name, src, nbytes in (("x", "p", 100), ("u", "x", 50), ("v", "u", 50), ("q", "v", 1)):
        ops[name] = gb.add_op(name, "add", OpKind.COMPUTE, operands=[ops.get(src, p)])
        gb.add_buffer_user(bufs.get(src, bp), ops[name])
        bufs[name] = gb.add_buffer(ops[name], nbytes, name=name)
    gb.add_operand(ops["q"], ops["x"])
    gb.add_buffer_user(bufs["x"], ops["q"])
    s, d, bs = _pair(gb, "ar", ops["q"], bufs["q"], 1)
    z = gb.add_op("z", "add", OpKind.COMPUTE, operands=[d])
    gb.add_buffer_user(bs, z)
    gb.set_live_out(gb.add_buffer(z, 1, name="z"))
    g = gb.build()
    op = np.zeros((1, g.n_ops))
    for name, t in (("x", 1.0), ("u", 10.0), ("v", 10.0), ("q", 10.0), ("z", 10.0)):
        op[0, g.op_index(name)] = t
    return g, Costs(op, {s: np.array([30.0])})


def test_cut_bound_counts_clones_forced_before_a_transfer():
    """The clone of x must come before q, hence before the transfer: the cut at v adds it
    to the chain v, q, transfer, z (brute force and bound 72), where the plain tail after
    v (v, q, z and the clone: 31 after 11) says much less."""
    g, costs = clone_on_the_chain()
    base = build_problem(g, static(), costs=costs)
    assert float(analytic_bound(base)[0]) == pytest.approx(71.0)
    for budget, want in ((204, 71.0), (203, 72.0)):
        assert _least_makespan_one_clone(g, costs, budget) == pytest.approx(want)
        lb, info = memory_cut_bound(build_joint_problem(base, np.array([budget]), None))
        assert lb[0] == pytest.approx(want)
    assert info["cuts"][0][0] == "v"


@pytest.mark.parametrize("n,colls,seed", [(5, 1, 0), (5, 1, 2), (5, 2, 7), (5, 1, 9)])
def test_cut_bound_against_brute_force_with_collectives(n, colls, seed):
    """Random graphs with async all-reduces, at a budget below every order's peak: the cut
    bound is never above the least makespan of the plans with at most one clone (brute
    force), and says no plan fits only where none of those fits."""
    g, costs, orders = _async_case(n, colls, seed)
    budget = min(int(peak(g, o)[0]) for o in orders) - 1
    want = _least_makespan_one_clone(g, costs, budget)
    base = build_problem(g, static(), costs=costs)
    lb, _ = memory_cut_bound(build_joint_problem(base, np.array([budget]), None))
    assert lb[0] >= float(analytic_bound(base)[0]) - 1e-9
    if want is None:
        return
    assert lb[0] <= want + 1e-9


@pytest.mark.parametrize("n,seed", [(5, 6), (5, 10), (6, 4)])
def test_cut_bound_against_brute_force_with_several_clones(n, seed):
    """Weighted DAGs (one stream, no transfer: the makespan is the ops' time plus the
    clones'): brute force over every order and at most one clone per op gives the least
    clone time; the cut bound never exceeds ops + that time."""
    g = weighted_dag(n, seed, p=0.5)
    dur = np.array([[g.attrs(i)["duration"] for i in range(g.n_ops)]])
    orders = list(all_topological_orders(g))
    best_peak = min(int(simulate(g, o).peak[0]) for o in orders)
    budget = max(int(min_memory_bound(g)[0][0]), best_peak - 1)
    want = brute_force(g, orders, budget, dur)
    assert want is not None and want > 0
    base = build_problem(g, static(), costs=(dur, {}))
    lb, _ = memory_cut_bound(build_joint_problem(base, np.array([budget]), None))
    assert dur.sum() - 1e-9 <= lb[0] <= dur.sum() + want + 1e-9


# -- the cut bound with host offload ------------------------------------------------------


def test_cut_bound_with_host_copies_on_hand_cases():
    """x now takes 5 units, so its clone costs more than a host round trip on a link of 50
    bytes per unit (2 units each way for x's 100 bytes). Far use across the collective: x
    is on the host at z's step, its copy back after z delays w: 35 + z 10 + 2 + w 10 = 57,
    and the copy-out, which starts after y (the device copy's last reader) and whose done
    must come before the all-reduce starts, holds the compute stream 2 more: 59 (the
    clone: 60). Clone on the chain: 15 + v 10 + 2 + q 10 + 30 + z 10 = 77, + 2 for the
    copy-out: 79 (the clone: 80). The bound sees the copy back but not a copy-out's done
    holding the stream: 57 and 77, within one copy of the best plan. With 4 units of
    latency per copy the clone is the better plan again (60 and 80) and the bound is exact.
    Brute force: every order, one clone or one round trip."""
    cases = (
        (far_use_across_a_collective, 200, "z", (59.0, 60.0)),
        (clone_on_the_chain, 203, "v", (79.0, 80.0)),
    )
    for make, budget, at, wants in cases:
        g, costs = make()
        costs.op[0, g.op_index("x")] = 5.0
        base = build_problem(g, static(), costs=costs)
        for link, want in zip((TransferModel(50.0, 0.0), TransferModel(50.0, 4.0)), wants):
            assert _least_makespan_one_clone(g, costs, budget, link) == pytest.approx(want)
            lb, info = memory_cut_bound(build_joint_problem(base, np.array([budget]), link))
            copy = float(link.times(np.array([100]))[0])
            exact = link.latency > 0  # the clone is the best plan
            assert lb[0] <= want + 1e-9 and info["cuts"][0][0] == at
            assert lb[0] == pytest.approx(want if exact else want - copy)


def far_uses(seed, n=6):
    """A chain of ``n`` ops (1-9 units, 10-99 bytes each) with random far uses and one
    async all-reduce (1-7 units) after a random op of the chain."""
    rng = np.random.default_rng(seed)
    gb = GraphBuilder(f"far{seed}")
    p = gb.add_op("p", "parameter", OpKind.PARAMETER)
    ops, bufs = [p], [gb.add_buffer(p, 4, name="p", live_in=True, live_out=True)]
    times, tr = {}, {}
    coll = int(rng.integers(1, n - 1))
    for k in range(n):
        far = {int(i) for i in rng.integers(0, len(ops), size=2) if rng.random() < 0.5}
        srcs = sorted({len(ops) - 1} | far)
        o = gb.add_op(f"c{k}", "fusion", operands=[ops[i] for i in srcs])
        for i in srcs:
            gb.add_buffer_user(bufs[i], o)
        times[o] = float(rng.integers(1, 10))
        ops.append(o)
        bufs.append(gb.add_buffer(o, int(rng.integers(10, 100)), name=f"c{k}"))
        if k == coll:
            s, d, bs = _pair(gb, "ar", o, bufs[-1], int(rng.integers(10, 60)))
            tr[s] = float(rng.integers(1, 8))
            ops.append(d)
            bufs.append(bs)
    gb.set_live_out(bufs[-1])
    g = gb.build()
    op = np.zeros((1, g.n_ops))
    for i, t in times.items():
        op[0, i] = t
    return g, Costs(op, {s: np.array([t]) for s, t in tr.items()})


@pytest.mark.parametrize("seed", [4, 10, 21, 22, 27, 28])
def test_cut_bound_with_host_copies_against_brute_force(seed):
    """Chains with far uses and a collective, below the peak, with a slow and a fast host
    link: the cut bound is never above the least makespan of the plans with one clone or
    one host round trip (brute force), nor below the bound that takes copies as free; on
    these seeds the copies raise it at least once."""
    g, costs = far_uses(seed)
    base = build_problem(g, static(), costs=costs)
    pk = min(int(peak(g, o)[0]) for o in all_topological_orders(g))
    floor = int(min_memory_bound(g)[0][0])
    gained = False
    for budget in sorted({pk - 1, max(floor, pk - 20), max(floor, pk - 40)}):
        for link in (TransferModel(5.0, 1.0), TransferModel(20.0, 1.0)):
            want = _least_makespan_one_clone(g, costs, budget, link)
            lb, _ = memory_cut_bound(build_joint_problem(base, np.array([budget]), link))
            free_copy = TransferModel(1e12, 0.0)
            lb0, _ = memory_cut_bound(build_joint_problem(base, np.array([budget]), free_copy))
            assert lb[0] >= lb0[0] - 1e-9
            if want is None:
                continue
            assert lb[0] <= want + 1e-9
            gained |= bool(lb[0] > lb0[0] + 1e-6)
    assert gained


def test_reordered_copies_read_back_as_the_plan():
    """A plan with x copied to the host after y (its early reader) and back before w,
    written as a graph: the plan graph lets an order issue the copy back before the
    copy-out's done, or start the copy-out before y. Read back as they are, both are
    refused (ScheduleError, not a crash); after ``copy_out_before_back`` both read back as
    the plan itself."""
    g = chain_with_far_use()
    bx = g.buffer_names.index("x")
    plan = Skeleton(tuple(range(g.n_ops)), (Evict(bx, 3, 3, 4),))
    pg, porder = plan_to_graph(g, materialize(g, plan))
    idx = {pg.op_names[i]: i for i in porder}
    assert [pg.op_names[i] for i in porder] == ["p", "x", "y", "x.evict1.start",
        "x.evict1.done", "z", "x.prefetch1.start", "x.prefetch1.done", "w"]  # fmt: skip
    early_back = ["p", "x", "y", "x.evict1.start", "x.prefetch1.start", "z",
                  "x.evict1.done", "x.prefetch1.done", "w"]  # fmt: skip
    early_out = ["p", "x", "x.evict1.start", "y", "x.evict1.done", "z",
                 "x.prefetch1.start", "x.prefetch1.done", "w"]  # fmt: skip
    cases = (
        # the copy-out's done moves up to the copy back: x comes back before z
        (early_back, "copy to the host is done", Evict(bx, 3, 3, 3)),
        # the copy-out's start moves down past y: the plan itself
        (early_out, "y reads", plan.candidates[0]),
    )
    for order, why, want in cases:
        o = [idx[n] for n in order]
        validate_order(pg, o)
        with pytest.raises(ScheduleError, match=why):
            skeleton_from_plan_order(g, pg, o)
        fixed = copy_out_before_back(pg, o)
        validate_order(pg, fixed)
        sk, active = skeleton_from_plan_order(g, pg, fixed)
        assert sk == Skeleton(plan.order, (want,)) and active == [0]
        # the plan read back has the repaired order's peak
        assert replay(g, materialize(g, sk)).peak[0] == peak(pg, fixed)[0]
