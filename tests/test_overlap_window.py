"""The overlap model's LNS window (``build(window=(order, a, b))``) against brute force: its
optimum is the least tick makespan over the topological orders that keep ``order``'s ops
at positions ``< a`` and ``>= b`` in place and permute only the window, under the budget.
Checked with the times before the window fixed from the order's timeline (as the LNS
builds it) and free, on every window of a few random graphs with two async all-reduces."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import all_topological_orders
from test_brute_force_overlap import case
from test_cp_overlap import _pair

from cpsched.analysis.memory import peak
from cpsched.analysis.validate import validate_order
from cpsched.core.graph import Collective, GraphBuilder, OpKind
from cpsched.core.symbolic import SymExpr
from cpsched.cost.model import Costs
from cpsched.cp.overlap.constraints import build
from cpsched.cp.overlap.problem import build_problem, floor1
from cpsched.cp.runtime import SolverConfig, solve

CASES = [(5, 4), (6, 1), (6, 3)]


def _setup(n, seed):
    g, costs, orders, pk, _, budget = case(n, seed)
    prob = build_problem(g, costs=costs)
    # integer costs: ticks are the costs themselves, every op at least one tick
    d = floor1(np.rint(prob.dur).astype(np.int64))
    t = np.rint(prob.ttime).astype(np.int64)
    assert np.allclose(prob.ttime, t) and (t > 0).all()
    tms = np.array([prob.tick_timeline(o, d, t).makespan[0] for o in orders])
    return g, prob, orders, pk, budget, d, t, tms


def _window_opt(orders, pk, tms, cur, a, b, budget):
    """Least makespan (and the orders reaching it) among the budget-feasible orders equal
    to ``cur`` outside positions ``a..b-1``."""
    keep = [
        k
        for k, o in enumerate(orders)
        if o[:a] == cur[:a] and o[b:] == cur[b:] and (budget is None or pk[k] <= budget)
    ]
    best = min(tms[k] for k in keep)
    return best, [orders[k] for k in keep if tms[k] == best]


def _solve_window(prob, d, t, cur, a, b, budget, fixed_prefix):
    tl = prob.tick_timeline(cur, d, t)
    horizon = np.atleast_1d(np.rint(tl.makespan)).astype(np.int64)
    V = build(
        prob,
        d,
        t,
        horizon,
        budget=None if budget is None else np.array([budget]),
        limits={},
        transfers_on=True,
        fifo_order=True,
        window=(cur, a, b),
        prefix_times=tl if fixed_prefix else None,
    )
    V.m.minimize(V.M[0])
    V.hint(cur, tl)
    run = solve(V.m, SolverConfig(time_limit=10, workers=1, seed=0))
    assert run.optimal
    return int(round(run.solver.objective_value)), V.order_from(run.solver)


def _pick(orders, pk, tms, budget):
    """The worst order by makespan under the median-peak budget (the LNS has something to
    improve), and its own peak as the budget (tight: it binds in many windows)."""
    feas = [k for k in range(len(orders)) if pk[k] <= budget]
    k = max(feas, key=lambda k: (tms[k], k))
    return list(orders[k]), int(pk[k])


@pytest.mark.parametrize("fixed_prefix", [True, False])
@pytest.mark.parametrize("n,seed", CASES)
def test_window_model_is_the_best_order_of_the_window(n, seed, fixed_prefix):
    g, prob, orders, pk, budget, d, t, tms = _setup(n, seed)
    cur, budget = _pick(orders, pk, tms, budget)
    N = g.n_ops
    strict = binds = 0  # windows above the unrestricted optimum / where the budget binds
    for a in range(N - 1):
        for b in range(a + 2, N + 1):
            want, best = _window_opt(orders, pk, tms, cur, a, b, budget)
            got, order = _solve_window(prob, d, t, cur, a, b, budget, fixed_prefix)
            assert got == want, (a, b)
            validate_order(g, order)
            assert order[:a] == cur[:a] and order[b:] == cur[b:], (a, b)
            assert int(peak(g, order)[0]) <= budget
            assert prob.tick_timeline(order, d, t).makespan[0] == want
            strict += want > tms[pk <= budget].min()
            binds += want > _window_opt(orders, pk, tms, cur, a, b, None)[0]
    assert strict > 0 and binds > 0


@pytest.mark.parametrize("n,seed", CASES[:2])
def test_window_without_a_budget(n, seed):
    """No budget (no memory constraints): the window optimum over every permutation."""
    g, prob, orders, pk, budget, d, t, tms = _setup(n, seed)
    cur = list(orders[int(np.argmax(tms))])
    N = g.n_ops
    for a, b in [(0, N // 2), (1, N - 1), (N // 3, N), (2, 6)]:
        want, _ = _window_opt(orders, pk, tms, cur, a, b, None)
        got, order = _solve_window(prob, d, t, cur, a, b, None, True)
        assert got == want
        assert order[:a] == cur[:a] and order[b:] == cur[b:]


def _two_roots(x_first: bool):
    """An all-reduce chain ``p -> ar -> u`` and an independent 5-tick op ``x``: ``x`` reads
    nothing and is read by ``u`` (``x_first``), or reads ``p`` and is read by nobody."""
    b = GraphBuilder("two-roots" if x_first else "two-sinks")
    p = b.add_op("p", "parameter", OpKind.PARAMETER)
    bp = b.add_buffer(p, 8, live_in=True)
    s, d, bs = _pair(b, "ar", p, bp, 8)
    x = b.add_op("x", "fusion", operands=[] if x_first else [p])
    if not x_first:
        b.add_buffer_user(bp, x)
    bx = b.add_buffer(x, 8, live_out=not x_first)
    u = b.add_op("u", "add", operands=[d, x] if x_first else [d])
    b.add_buffer_user(bs, u)
    if x_first:
        b.add_buffer_user(bx, u)
    b.add_buffer(u, 8, live_out=True)
    g = b.build()
    op = np.zeros((1, g.n_ops))
    op[0, x] = 5.0
    order = [x, p, s, d, u] if x_first else [p, s, d, u, x]
    return g, Costs(op, {s: np.array([4.0])}), order


@pytest.mark.parametrize("fixed_prefix", [True, False])
@pytest.mark.parametrize("x_first", [True, False])
def test_window_keeps_its_neighbours_on_their_side(x_first, fixed_prefix):
    """By hand (1 tick per op, ``x`` 5, the transfer 4): with ``x`` outside the window (first,
    or last) the transfer cannot hide under it, 1 + 1 + 4 + 1 + 1 + 5 = 13 ticks; the whole
    order as the window hides it: 1 + 1 + 5 + 1 + 1 = 9."""
    g, costs, cur = _two_roots(x_first)
    prob = build_problem(g, costs=costs)
    d = floor1(np.rint(prob.dur).astype(np.int64))
    t = np.rint(prob.ttime).astype(np.int64)
    n = g.n_ops
    a, b = (1, n) if x_first else (0, n - 1)
    got, order = _solve_window(prob, d, t, cur, a, b, None, fixed_prefix)
    assert got == 13 and order == cur
    got, order = _solve_window(prob, d, t, cur, 0, n, None, fixed_prefix)
    assert got == 9 and g.op_names[order[2]] == "x"


@pytest.mark.parametrize("fixed_prefix", [True, False])
def test_window_with_two_time_copies(fixed_prefix):
    """Two time copies (other op and transfer times in the second) share one order: the
    window's optimum of the summed makespans is the best single permutation for both."""
    g, prob, orders, pk, budget, d, t, _ = _setup(5, 5)
    N = g.n_ops
    d2 = np.vstack([d, np.roll(d[0], 3)])
    t2 = np.vstack([t, 2 * t[0, ::-1]])
    tms = np.array([prob.tick_timeline(o, d2, t2).makespan.sum() for o in orders])
    cur = list(orders[int(np.argmax(tms))])
    apart = 0  # windows where no single copy's own best order is best for the sum
    for a, b in [(0, N), (1, N - 1), (2, N), (0, N - 3), (3, N)]:
        want, _ = _window_opt(orders, pk, tms, cur, a, b, None)
        tl = prob.tick_timeline(cur, d2, t2)
        V = build(
            prob,
            d2,
            t2,
            np.rint(tl.makespan).astype(np.int64),
            budget=None,
            limits={},
            transfers_on=True,
            fifo_order=True,
            window=(cur, a, b),
            prefix_times=tl if fixed_prefix else None,
        )
        V.m.minimize(V.M[0] + V.M[1])
        run = solve(V.m, SolverConfig(time_limit=10, workers=1, seed=0))
        assert run.optimal
        assert int(round(run.solver.objective_value)) == want, (a, b)
        order = V.order_from(run.solver)
        assert order[:a] == cur[:a] and order[b:] == cur[b:]
        assert prob.tick_timeline(order, d2, t2).makespan.sum() == want
        keep = [k for k, o in enumerate(orders) if o[:a] == cur[:a] and o[b:] == cur[b:]]
        each = [
            min(prob.tick_timeline(orders[k], d2, t2).makespan[c] for k in keep) for c in (0, 1)
        ]
        apart += want > sum(each)
    assert apart > 0


def test_transfer_without_a_done_ends_within_the_makespan():
    """An all-reduce start with no done: its transfer still ends within the makespan. By
    hand (1 tick for ``p`` and the start, ``x`` 5, the transfer 7): start first, the
    transfer runs under ``x``: 1 + 1 + 7 = 9; ``x`` first: 1 + 5 + 1 + 7 = 14. The model's
    optimum is the least over every order (and is not ``x``'s end alone), also in windows
    whose prefix holds the start."""
    b = GraphBuilder("no-done")
    p = b.add_op("p", "parameter", OpKind.PARAMETER)
    bp = b.add_buffer(p, 8, live_in=True)
    s = b.add_op("ar-start", "all-reduce-start", OpKind.ASYNC_START, operands=[p])
    b.add_buffer_user(bp, s)
    b.add_buffer(s, 8, live_out=True)
    b.set_collective(s, Collective("all-reduce", SymExpr.parse("8"), 8))
    x = b.add_op("x", "fusion", operands=[p])
    b.add_buffer_user(bp, x)
    b.add_buffer(x, 8, live_out=True)
    g = b.build()
    op = np.zeros((1, g.n_ops))
    op[0, x] = 5.0
    prob = build_problem(g, costs=Costs(op, {s: np.array([7.0])}))
    assert prob.dones.tolist() == [-1]
    d = floor1(np.rint(prob.dur).astype(np.int64))
    t = np.rint(prob.ttime).astype(np.int64)
    ms = {tuple(o): prob.tick_timeline(o, d, t).makespan[0] for o in all_topological_orders(g)}
    assert sorted(ms.values()) == [9, 14]
    for fifo in (True, False):
        V = build(
            prob, d, t, np.array([20]), budget=None, limits={}, transfers_on=True, fifo_order=fifo
        )
        V.m.minimize(V.M[0])
        run = solve(V.m, SolverConfig(time_limit=10, workers=1, seed=0))
        assert run.optimal and int(round(run.solver.objective_value)) == 9
        assert V.order_from(run.solver) == [p, s, x]
    # windows after the start (its transfer time fixed from the timeline) or around it
    for cur, a, want in (
        ([p, s, x], 2, 9),
        ([p, s, x], 1, 9),
        ([p, x, s], 1, 9),
        ([p, x, s], 2, 14),
    ):
        got, order = _solve_window(prob, d, t, cur, a, 3, None, True)
        assert got == want and ms[tuple(order)] == want, (cur, a)
