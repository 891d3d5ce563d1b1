"""The fixed-order segment model of clones (``cpsched.cp.remat.segments``) against brute
force over its own candidate space: every subset of candidate clones the model accepts
replays under the budget (soundness), its optimum is the least-cost subset that replays
under the budget or above it only where the model counts a step more conservatively
than the replay, and the exact-repair search never returns a worse or unfitting plan."""

import itertools

import numpy as np
import pytest
from ortools.sat.python import cp_model

from cpsched.analysis.memory import simulate
from cpsched.core.graph import GraphBuilder
from cpsched.core.scenarios import static
from cpsched.cp.remat.segments import (
    build_segment_model,
    candidate_steps,
    hot_steps,
    solve_segments,
)
from cpsched.cp.runtime import SolverConfig
from cpsched.heuristics.remat import regens_fit, span_remat
from cpsched.strategies.remat.search import lns_segments
from cpsched.remat.policy import recomputable_ops

from test_remat_cp import weighted_dag


def setup(g, frac):
    order = g.default_order()
    sizes = g.sizes(static())
    trans = g.transient_bytes(static())
    cost = np.array([g.attrs(i)["duration"] for i in range(g.n_ops)])
    bud = np.array([int(frac * int(simulate(g, order).peak[0]))])
    return order, sizes, trans, cost, bud


def as_regens(order, keys):
    pos = {v: t for t, v in enumerate(order)}
    return sorted(((v, q, float(pos[v])) for v, q in keys), key=lambda c: (c[1], c[2]))


def model_accepts(sm, keys):
    """Whether the model is feasible with exactly the clones ``keys`` made."""
    m = sm.model.Clone()
    for k, var in sm.clones.items():
        m.Add(m.GetBoolVarFromProtoIndex(var.Index()) == int(k in keys))
    s = cp_model.CpSolver()
    s.parameters.max_time_in_seconds = 10
    s.parameters.num_workers = 1
    return s.Solve(m) in (cp_model.OPTIMAL, cp_model.FEASIBLE)


CASES = [(6, 8, 0.7), (7, 0, 0.75), (7, 10, 0.8), (7, 12, 0.7), (8, 0, 0.75), (8, 4, 0.85),
         (8, 9, 0.7), (8, 14, 0.8)]


@pytest.mark.parametrize("n,seed,frac", CASES)
def test_every_plan_the_model_accepts_replays_under_the_budget(n, seed, frac):
    g = weighted_dag(n, seed)
    order, sizes, trans, cost, bud = setup(g, frac)
    sm = build_segment_model(g, order, bud, sizes, trans, cost, chain_depth=1)
    keys = sorted(sm.clones)
    assert 0 < len(keys) <= 10
    accepted = fitting = 0
    for r in range(len(keys) + 1):
        for pick in itertools.combinations(keys, r):
            fits = regens_fit(g, bud, order, as_regens(order, pick), sizes, trans)
            fitting += fits
            if model_accepts(sm, set(pick)):
                accepted += 1
                assert fits, f"model accepts {pick}, the replay goes over {bud[0]}"
    assert fitting >= accepted


@pytest.mark.parametrize("n,seed,frac", CASES)
def test_model_optimum_against_brute_force(n, seed, frac):
    """The model's optimum is a plan that fits and costs no less than the cheapest subset
    that fits; where the cheapest subset does not read a buffer only inside the step that
    frees it, the two are equal."""
    g = weighted_dag(n, seed)
    order, sizes, trans, cost, bud = setup(g, frac)
    sm = build_segment_model(g, order, bud, sizes, trans, cost, chain_depth=1)
    keys = sorted(sm.clones)
    best = None
    for r in range(len(keys) + 1):
        for pick in itertools.combinations(keys, r):
            c = float(sum(cost[v] for v, _ in pick))
            if (best is None or c < best[0]) and regens_fit(
                g, bud, order, as_regens(order, pick), sizes, trans
            ):
                best = (c, pick)
    res = solve_segments(g, order, bud, sizes, trans, cost, cfg=SolverConfig(10, workers=1))
    if best is None:
        assert res is None
        return
    assert res is not None and res.status == "OPTIMAL"
    assert regens_fit(g, bud, order, res.regens, sizes, trans)
    got = float(sum(cost[v] for v, _, _ in res.regens))
    assert got >= best[0] - 1e-9
    assert got == pytest.approx(res.objective, rel=1e-3)
    if model_accepts(sm, set(best[1])):
        assert got == pytest.approx(best[0])


def test_a_hand_case_needs_exactly_the_cheap_clone():
    """Order a b x y c d: a (10 B) is read by b and c, b (10 B) by d, x (30 B) by y, y and c
    (1 B) by c and d. The peak, 51 B, is at y. At 41 B re-making a before c (1 time unit)
    is the only cheap plan; at 40 B b must go too (its clone before d re-reads a: 1 + 5);
    at 30 B nothing fits (x and y alone are 31 B)."""
    bld = GraphBuilder("hand")
    a = bld.add_op("a", "op", attrs={"duration": 1.0})
    b = bld.add_op("b", "op", operands=[a], attrs={"duration": 5.0})
    x = bld.add_op("x", "op", attrs={"duration": 1.0})
    y = bld.add_op("y", "op", operands=[x], attrs={"duration": 1.0})
    c = bld.add_op("c", "op", operands=[a, y], attrs={"duration": 1.0})
    d = bld.add_op("d", "op", operands=[b, c], attrs={"duration": 1.0})
    bld.add_buffer(a, 10, users=[b, c])
    bld.add_buffer(b, 10, users=[d])
    bld.add_buffer(x, 30, users=[y])
    bld.add_buffer(y, 1, users=[c])
    bld.add_buffer(c, 1, users=[d])
    bld.add_buffer(d, 1, live_out=True)
    bld.original_order = [a, b, x, y, c, d]
    g = bld.build()
    order, sizes, trans, cost, _ = setup(g, 1.0)
    assert int(simulate(g, order).peak[0]) == 51

    def run(budget):
        return solve_segments(g, order, np.array([budget]), sizes, trans, cost,
                              cfg=SolverConfig(10, workers=1))

    res = run(41)
    assert res is not None and res.status == "OPTIMAL"
    assert [(g.op_names[v], q) for v, q, _ in res.regens] == [("a", 4)]
    assert res.objective == pytest.approx(1.0, rel=1e-3)
    res = run(40)
    assert res is not None and res.status == "OPTIMAL"
    assert {g.op_names[v] for v, _, _ in res.regens} == {"a", "b"}
    assert res.objective == pytest.approx(6.0, rel=1e-3)
    assert regens_fit(g, np.array([40]), order, res.regens, sizes, trans)
    assert run(30) is None


def test_hot_steps_prune_only_useless_candidates():
    """With ``hot`` a candidate is kept iff the gap it ends covers a hot step."""
    g = weighted_dag(9, 5)
    order = g.default_order()
    clon = recomputable_ops(g)
    full = candidate_steps(g, order, clon, 0)
    usage = simulate(g, order).usage
    bud = np.array([int(0.8 * int(usage.max()))])
    hot = hot_steps(usage, bud)
    pruned = candidate_steps(g, order, clon, 0, hot)
    pos = {v: t for t, v in enumerate(order)}
    for v, qs in full.items():
        reads = sorted({pos[int(w)] for b in g.defines(v) for w in g.buffer_users(int(b))})
        for q in qs:
            prev = max([r for r in reads if r < q], default=pos[v])
            assert (q in pruned[v]) == bool(hot[prev + 1:q].any())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_repair_search_never_loses_and_keeps_the_budget(seed):
    g = weighted_dag(24, seed, p=0.2)
    order, sizes, trans, cost, bud = setup(g, 0.8)
    start = span_remat(g, None, int(bud[0]), order=order, durations=cost[None, :])
    if start.status != "HEURISTIC":
        pytest.skip("the span greedy found no plan to start from")
    regens = [(c.op, c.step, c.sub) for c in start.skeleton.candidates]
    hot = hot_steps(simulate(g, order).usage, bud)
    out, info = lns_segments(
        g, order, bud, sizes, trans, cost, regens, hot=hot, round_limit=1, extra_ops=5,
        cfg=SolverConfig(3, workers=1, seed=seed),
        fits=lambda r: regens_fit(g, bud, order, r, sizes, trans))
    assert info["rounds"] >= 1
    assert regens_fit(g, bud, order, out, sizes, trans)
    assert sum(cost[v] for v, _, _ in out) <= sum(cost[v] for v, _, _ in regens) + 1e-9


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_repair_search_reaches_the_whole_model_optimum_on_small_graphs(seed):
    """From the span greedy's plan (one time unit or more above the optimum here), the
    repairs reach the optimum of the whole segment model without chains."""
    g = weighted_dag(24, seed, p=0.2)
    order, sizes, trans, cost, bud = setup(g, 0.8)
    start = span_remat(g, None, int(bud[0]), order=order, durations=cost[None, :])
    regens = [(c.op, c.step, c.sub) for c in start.skeleton.candidates]
    full = solve_segments(g, order, bud, sizes, trans, cost, cfg=SolverConfig(10, workers=1),
                          chain_depth=0)
    assert full is not None and full.status == "OPTIMAL"
    assert sum(cost[v] for v, _, _ in regens) >= full.objective + 0.5
    hot = hot_steps(simulate(g, order).usage, bud)
    out, info = lns_segments(
        g, order, bud, sizes, trans, cost, regens, hot=hot, round_limit=1, extra_ops=5,
        cfg=SolverConfig(5, workers=1, seed=seed),
        fits=lambda r: regens_fit(g, bud, order, r, sizes, trans))
    assert info["improved"] >= 1
    assert sum(cost[v] for v, _, _ in out) == pytest.approx(full.objective, abs=0.01)
