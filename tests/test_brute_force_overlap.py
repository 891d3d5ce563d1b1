"""cp-overlap against brute force over every topological order, on non-trivial seeds only.

A seed qualifies when the orders do not all tie and every heuristic candidate the solver
itself evaluates (gpu-postprocess, eager-cluster, lhs, the memory orders, their hoisted
variants) misses the optimum under the budget, so the CP model has to find it. On those the
model alone (no heuristics, no hoisting, no LNS: the hint is the graph's own order) and the
whole method must be OPTIMAL at the brute-force optimum, and the model's own claimed
makespan must equal the timeline's value of its order up to the reported tick rounding."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from helpers import all_topological_orders
from test_cp_overlap import random_async

from cpsched.analysis.memory import peak
from cpsched.analysis.schedule import OPTIMAL
from cpsched.analysis.validate import validate_order
from cpsched.core.scenarios import static
from cpsched.cost.model import Costs
from cpsched.cost.timeline import simulate_timeline
from cpsched.strategies.overlap.method import solve_overlap

ALONE = dict(heuristics=(), budget_methods=(), hoist=False, lns=False, time_limit=10, workers=1)
# (compute ops, seed): graphs with two async all-reduces where, at the median-peak budget,
# every heuristic candidate misses the optimum (found by scanning seeds 0..39)
NONTRIVIAL = [
    (5, 4),
    (5, 5),
    (5, 13),
    (5, 27),
    (5, 31),
    (5, 33),
    (6, 1),
    (6, 2),
    (6, 3),
    (6, 4),
    (6, 6),
    (6, 9),
    (6, 13),
    (6, 19),
    (6, 29),
    (6, 34),
]


def _inflight_ok(g, order, cap):
    """At most ``cap`` async pairs between their start and done step (both inclusive)."""
    pos = {int(v): t for t, v in enumerate(order)}
    dones = [d for d in range(g.n_ops) if g.async_start[d] >= 0]
    spans = [(pos[int(g.async_start[d])], pos[d]) for d in dones]
    return all(sum(a <= t <= b for a, b in spans) <= cap for t in range(len(order)))


@functools.cache
def case(n, seed, colls=2):
    g, op, tr = random_async(n, colls, seed)
    costs = Costs(op, {k: np.array([v]) for k, v in tr.items()})
    orders = list(all_topological_orders(g))
    pk = np.array([int(peak(g, o)[0]) for o in orders])
    ms = np.array([simulate_timeline(g, o, costs, static()).makespan[0] for o in orders])
    budget = int(np.percentile(pk, 50))
    return g, costs, orders, pk, ms, budget


def _check_claim(s, g, costs):
    """The model's claimed makespan (its objective in ticks times the tick) is the
    timeline's makespan of its order, within the rounding slack it reports."""
    model = s.info["model"]
    assert "claimed_makespan" in model, model
    claimed = model["claimed_makespan"][0]
    assert claimed == pytest.approx(model["objective_value"] * model["tick"][0])
    true = simulate_timeline(g, s.order, costs, static()).makespan[0]
    assert true == pytest.approx(s.info["makespan"]["static"])
    assert true - 1e-9 <= claimed <= true + model["rounding_slack"][0] + 1e-9


def test_enough_nontrivial_overlap_cases():
    """Each listed seed is non-trivial: not all orders tie, the budget binds or the given
    order is not optimal, and the best heuristic candidate is worse than the optimum."""
    for n, seed in NONTRIVIAL:
        g, costs, orders, pk, ms, budget = case(n, seed)
        feas = pk <= budget
        opt = ms[feas].min()
        assert ms.min() < ms.max()
        s = solve_overlap(g, costs=costs, budget=budget, time_limit=10, workers=1, lns=False)
        heur = [c["makespan"]["static"] for c in s.info["candidates"] if c["feasible"]]
        assert min(heur) > opt + 1e-9, (n, seed)
        # and the whole method finds the optimum anyway, proven
        assert s.status == OPTIMAL and s.info["chosen"] == "cp-overlap"
        assert s.info["makespan"]["static"] == pytest.approx(opt)
        assert int(s.peak_bytes[0]) == int(peak(g, s.order)[0]) <= budget
        _check_claim(s, g, costs)


@pytest.mark.parametrize("n,seed", NONTRIVIAL)
def test_model_alone_is_optimal_under_the_budget(n, seed):
    g, costs, orders, pk, ms, budget = case(n, seed)
    opt = ms[pk <= budget].min()
    s = solve_overlap(g, costs=costs, budget=budget, **ALONE)
    validate_order(g, s.order)
    assert s.status == OPTIMAL
    assert s.info["makespan"]["static"] == pytest.approx(opt)
    assert int(peak(g, s.order)[0]) <= budget
    _check_claim(s, g, costs)
    # the proven bound is a bound: never above the optimum
    assert s.info["makespan_lower_bound"]["static"] <= opt + 1e-9


@pytest.mark.parametrize("n,seed", NONTRIVIAL[::2])
def test_model_alone_without_a_budget(n, seed):
    """No memory budget: the best of all orders."""
    g, costs, orders, pk, ms, budget = case(n, seed)
    s = solve_overlap(g, costs=costs, budget=int(pk.max()), **ALONE)
    assert s.status == OPTIMAL
    assert s.info["makespan"]["static"] == pytest.approx(ms.min())
    _check_claim(s, g, costs)


@pytest.mark.parametrize("n,seed,colls", [(5, 1, 3)] + [(n, s, 2) for n, s in NONTRIVIAL[1::4]])
def test_model_alone_with_one_transfer_in_flight(n, seed, colls):
    """``overlap_limit=1``: the orders where no two all-reduces' start..done spans meet
    (checked here on positions, independently of the model). On one shared stream the
    limit seldom costs time; in the first case (three all-reduces) it does: every
    unlimited optimum has two in flight."""
    g, costs, orders, pk, ms, budget = case(n, seed, colls)
    ok = np.array([_inflight_ok(g, o, 1) for o in orders])
    want = ms[ok & (pk <= budget)].min()
    if colls == 3:
        assert want > ms[pk <= budget].min()
    s = solve_overlap(g, costs=costs, budget=budget, overlap_limit=1, **ALONE)
    assert _inflight_ok(g, s.order, 1)
    assert s.status == OPTIMAL
    assert s.info["makespan"]["static"] == pytest.approx(want)
    _check_claim(s, g, costs)
