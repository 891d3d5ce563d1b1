"""The overlap CP model alone (``cpsched.cp.overlap.constraints.build`` plus the objectives
of ``cpsched.cp.overlap.objectives``, no heuristics, no LNS) against brute force over every
topological order on tiny graphs with integer tick durations.

The graphs have async collectives of several kinds with unequal transfer times, so with one
stream per kind the FIFO order of a stream matters, and several buffer groups (one with two
last users, a live-out one, a live-in and live-out one). Every optimum is checked against the
least tick makespan of an order (from the timeline simulator), the solver's own schedule is
checked constraint by constraint (compute stream, dependences, transfers, FIFO streams, one
order for every time copy), and the order read back is re-simulated."""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
from pathlib import Path

import numpy as np
import pytest
from helpers import all_topological_orders
from test_cp_overlap import _pair

from cpsched.analysis.memory import peak
from cpsched.core.graph import GraphBuilder, OpKind
from cpsched.core.scenarios import static
from cpsched.cost.model import Costs
from cpsched.cp.overlap import objectives as O
from cpsched.cp.overlap.constraints import build
from cpsched.cp.overlap.problem import (
    Infeasible,
    build_problem,
    floor1,
    inflight_ok,
    max_inflight,
    total_distance,
)
from cpsched.cp.runtime import SolverConfig, solve

KINDS = ("all-reduce", "all-gather", "reduce-scatter")


def streams_graph(seed: int, n_compute: int = 4, kinds=("all-reduce", "all-gather", "all-reduce")):
    """Random DAG of compute ops, one async pair of each of ``kinds`` on random compute
    outputs (unequal transfer times). Memory: buffers read by two independent ops, a
    live-out buffer, two live-in-and-out ones (7 constant bytes), a second output of ``c1``
    with the same readers as its first (one group of two buffers), transient bytes on
    ``c2`` and ``c3``."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder(f"st{seed}")
    prm = b.add_op("param", "parameter", OpKind.PARAMETER)
    bp = b.add_buffer(prm, 16, live_in=True)
    b.add_buffer(prm, 4, live_in=True, live_out=True)
    b.add_buffer(prm, 3, live_in=True, live_out=True)
    b.add_buffer(prm, 0)  # no bytes: the memory model skips it, and goes on
    avail = [(prm, bp)]
    twin: dict[int, int] = {}
    times, tr = {}, {}
    hosts = rng.choice(np.arange(n_compute), size=len(kinds), replace=False).tolist()
    for k in range(n_compute):
        idx = sorted(set(rng.integers(0, len(avail), size=1 + int(rng.integers(0, 2))).tolist()))
        preds = [avail[i] for i in idx]
        i = b.add_op(f"c{k}", "fusion", operands=[o for o, _ in preds])
        for _, buf in preds:
            b.add_buffer_user(buf, i)
            if buf in twin:
                b.add_buffer_user(twin[buf], i)
        size = int(rng.integers(1, 40))
        bi = b.add_buffer(i, size, live_out=k == 0)
        if k == 1:
            twin[bi] = b.add_buffer(i, 6)
        if k >= 2:
            b.set_transient(i, int(rng.integers(1, 20)))
        times[i] = int(rng.integers(1, 8))
        avail.append((i, bi))
        for j, h in enumerate(hosts):
            if h == k:
                s, d, bs = _pair(b, f"x{k}{j}", i, bi, str(int(rng.integers(1, 40))), kinds[j])
                if bi in twin:
                    b.add_buffer_user(twin[bi], s)
                tr[s] = float(rng.integers(2, 16))
                avail.append((d, bs))
    last = b.add_op("out", "tuple", operands=[o for o, _ in avail[-3:]])
    for _, buf in avail[-3:]:
        b.add_buffer_user(buf, last)
        if buf in twin:
            b.add_buffer_user(twin[buf], last)
    g = b.build()
    op = np.zeros((1, g.n_ops))
    for i, t in times.items():
        op[0, i] = t
    return g, Costs(op, {k: np.array([v]) for k, v in tr.items()})


# The brute force runs the timeline simulator and the peak over every order, which the CP
# model's code does not touch: a mutation run (one process per mutant) may keep its results
# in this folder, keyed by the graph, the orders' ticks and the question.
BRUTE_CACHE = os.environ.get("CPSCHED_BRUTE_CACHE")


def _cached(key, compute):
    if not BRUTE_CACHE:
        return compute()
    path = Path(BRUTE_CACHE) / (hashlib.sha256(pickle.dumps(key)).hexdigest() + ".pkl")
    if path.exists():
        return pickle.loads(path.read_bytes())
    value = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(value))
    return value


def _gkey(g) -> tuple:
    """What the brute force reads of a graph: ops, dependences, buffers and their bytes."""
    users = tuple(tuple(int(u) for u in g.buffer_users(j)) for j in range(g.n_buffers))
    preds = tuple(tuple(int(u) for u in g.preds(i)) for i in range(g.n_ops))
    sc = static()
    return (
        tuple(g.op_names),
        tuple(g.opcodes),
        g.kinds.tolist(),
        preds,
        g.buffer_def.tolist(),
        users,
        g.buffer_live_in.tolist(),
        g.buffer_live_out.tolist(),
        g.sizes(sc).tolist(),
        g.transient_bytes(sc).tolist(),
        g.async_start.tolist(),
    )


def makespans(prob, orders, d, t) -> np.ndarray:
    """[orders, copies] tick makespans of the timeline."""
    key = (
        "ms",
        _gkey(prob.graph),
        prob.stream.tolist(),
        prob.starts.tolist(),
        d.tobytes(),
        t.tobytes(),
        d.shape,
    )
    return _cached(key, lambda: np.array([prob.tick_timeline(o, d, t).makespan for o in orders]))


@functools.cache
def case(seed: int, n_compute: int = 4, streams: str = "per-kind", kinds=KINDS[:2] + KINDS[:1]):
    """Problem, integer ticks (every op at least one), and per order: the tick makespan,
    the peak and the order itself."""
    g, costs = streams_graph(seed, n_compute, kinds)
    prob = build_problem(g, costs=costs, comm_streams=streams)
    d = floor1(np.rint(prob.dur).astype(np.int64))
    t = np.rint(prob.ttime).astype(np.int64)
    orders = _cached(("orders", _gkey(g)), lambda: [list(o) for o in all_topological_orders(g)])
    ms = makespans(prob, orders, d, t)[:, 0]
    pk = _cached(("peak", _gkey(g)), lambda: np.array([int(peak(g, o)[0]) for o in orders]))
    return g, prob, d, t, orders, ms, pk


def run_model(prob, d, t, objective=None, horizon=None, budget=None, limits=None, **kw):
    """Build the model alone, minimise the summed makespans (or ``objective(V)``), solve."""
    if horizon is None:
        horizon = d.sum(axis=1) + t.sum(axis=1)
    V = build(
        prob,
        d,
        t,
        np.asarray(horizon, dtype=np.int64),
        budget=None if budget is None else np.full(len(prob.scenarios), budget, np.int64),
        limits=limits or {},
        transfers_on=True,
        fifo_order=kw.pop("fifo_order", True),
        **kw,
    )
    if objective is None:
        V.m.minimize(sum(V.M))
    else:
        objective(V)
    run = solve(V.m, SolverConfig(time_limit=20, workers=1, seed=0))
    return V, run


def check_schedule(V, run, fifo: bool = True) -> list[int]:
    """The solver's own schedule obeys every rule of the tick timeline in each time copy,
    with one order shared by the copies; returns that order."""
    prob, g, sol = V.prob, V.prob.graph, run.solver
    order = V.order_from(sol)
    for c in range(V.C):
        s = np.array([sol.value(v) for v in V.s[c]])
        e = s + V.d[c]
        M = sol.value(V.M[c])
        assert (e <= M).all()
        busy = sorted((int(s[i]), int(e[i])) for i in range(prob.n) if V.d[c, i] > 0)
        assert all(a[1] <= b[0] for a, b in zip(busy, busy[1:])), "compute stream overlaps"
        for v in range(prob.n):
            for u in g.preds(v):
                assert s[v] >= e[u], (u, v)
        # the copies share the order: every pair of ops is ordered alike
        pos = np.empty(prob.n, dtype=np.int64)
        pos[np.asarray(order)] = np.arange(prob.n)
        for i in range(prob.n):
            for j in range(prob.n):
                if V.d[c, i] > 0 and V.d[c, j] > 0 and pos[i] < pos[j]:
                    assert s[i] < s[j], (c, i, j)
        x = np.array([sol.value(v) for v in V.x[c]])
        for p in range(prob.P):
            a, b = int(prob.starts[p]), int(prob.dones[p])
            assert x[p] >= e[a]
            assert (s[b] if b >= 0 else M) >= x[p] + V.t[c, p]
        for p in range(prob.P):
            for q in range(prob.P):
                if p == q or prob.stream[p] != prob.stream[q]:
                    continue
                a, b = int(prob.starts[p]), int(prob.starts[q])
                if fifo and pos[a] < pos[b]:
                    assert x[q] >= x[p] + V.t[c, p], (c, p, q)
                elif V.t[c, p] > 0 and V.t[c, q] > 0:
                    assert x[q] >= x[p] + V.t[c, p] or x[p] >= x[q] + V.t[c, q]
    return order


def brute_min(ms, pk=None, budget=None, ok=None):
    keep = np.ones(len(ms), dtype=bool)
    if budget is not None:
        keep &= pk <= budget
    if ok is not None:
        keep &= ok
    return ms[keep].min()


SEEDS = [0, 1, 12, 7, 3, 4]  # at most ~1000 orders each


def fifo_graph(reverse: bool, unused_input: int = 0):
    """Two all-reduces on one stream whose starts are ordered by a control edge, A (12
    ticks) before B (1 tick); B's done gates a 10-tick op, A's done only the output.
    ``reverse``: B's pair is built first (the lower index), so the pair's order is the
    other way round in the model's FIFO loop."""
    b = GraphBuilder("fifo")
    p = b.add_op("p", "parameter", OpKind.PARAMETER)
    bp = b.add_buffer(p, 8, live_in=True)
    if unused_input:
        b.add_buffer(p, unused_input, live_in=True)  # an input nobody reads: freed after p
    c0 = b.add_op("c0", "fusion", operands=[p])
    c1 = b.add_op("c1", "fusion", operands=[p])
    for c in (c0, c1):
        b.add_buffer_user(bp, c)
    b0, b1 = b.add_buffer(c0, 8), b.add_buffer(c1, 8)
    if reverse:
        sb, db, bb = _pair(b, "B", c1, b1, 8)
        sa, da, ba = _pair(b, "A", c0, b0, 8)
    else:
        sa, da, ba = _pair(b, "A", c0, b0, 8)
        sb, db, bb = _pair(b, "B", c1, b1, 8)
    b.add_control_pred(sb, sa)
    k = b.add_op("k", "fusion", operands=[db])
    b.add_buffer_user(bb, k)
    bk = b.add_buffer(k, 8)
    out = b.add_op("out", "tuple", operands=[k, da])
    b.add_buffer_user(bk, out)
    b.add_buffer_user(ba, out)
    b.add_buffer(out, 8, live_out=True)
    g = b.build()
    op = np.zeros((1, g.n_ops))
    op[0, [c0, c1, k]] = [1.0, 1.0, 10.0]
    return g, Costs(op, {sa: np.array([12.0]), sb: np.array([1.0])})


@pytest.mark.parametrize("lits", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_fifo_stream_when_the_starts_are_ordered(reverse, lits):
    """By hand (1 tick for every op without a cost): A's transfer runs 3..15, so B's (issued
    at 5) waits for it, 15..16; the dones end at 16 and 17, ``k`` at 27, the output at 28;
    the brute force agrees. Without the FIFO rule (``fifo_order=False``) the stream may run B first,
    5..6, and A after it, 6..18: 20, and 19 if B could even run beside A."""
    g, costs = fifo_graph(reverse)
    prob = build_problem(g, costs=costs)
    d = floor1(np.rint(prob.dur).astype(np.int64))
    t = np.rint(prob.ttime).astype(np.int64)
    ms = [prob.tick_timeline(o, d, t).makespan[0] for o in all_topological_orders(g)]
    assert min(ms) == 28
    V, run = run_model(prob, d, t, order_literals_all=lits)
    assert run.optimal and round(run.solver.objective_value) == 28
    order = check_schedule(V, run)
    assert prob.tick_timeline(order, d, t).makespan[0] == 28
    assert V.stats["fifo_literals"] == 0  # the control edge orders the two starts
    V, run = run_model(prob, d, t, fifo_order=False, order_literals_all=lits)
    assert run.optimal and round(run.solver.objective_value) == 20
    check_schedule(V, run, fifo=False)
    # B's transfer in no tick (too short for the tick): without FIFO it may sit inside A's,
    # at 5; the dones end at 6 and 17, k at 16, the output at 18
    t0 = np.where(t == 1, 0, t)
    V, run = run_model(prob, d, t0, fifo_order=False, order_literals_all=lits)
    assert run.optimal and round(run.solver.objective_value) == 18


@pytest.mark.parametrize("lits", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_model_alone_under_tight_budgets(seed, lits):
    """Budgets at the least peak and between: the least makespan among the orders within
    the budget; the order read back is within it."""
    g, prob, d, t, orders, ms, pk = case(seed)
    levels = sorted(set(pk.tolist()))
    binds = 0
    for budget in sorted({levels[0], levels[len(levels) // 3], levels[len(levels) // 2]}):
        want = brute_min(ms, pk, budget)
        V, run = run_model(prob, d, t, budget=budget, order_literals_all=lits)
        assert run.optimal and round(run.solver.objective_value) == want, budget
        order = check_schedule(V, run)
        assert int(peak(g, order)[0]) <= budget
        assert prob.tick_timeline(order, d, t).makespan[0] == want
        binds += want > ms.min()
        assert V.peak_vars == [] and V.inflight is None  # no tie-breaker by default
    assert binds > 0
    # one byte below the least peak: no schedule (the model refuses it, or finds none)
    try:
        V, run = run_model(prob, d, t, budget=levels[0] - 1, order_literals_all=lits)
    except Infeasible:
        return
    assert run.status == "INFEASIBLE"


def test_memory_of_the_first_op_and_of_zero_tick_ops():
    """An unread input of 100 bytes makes the first step (``p``, at tick 0) the peak (108): one
    byte less is infeasible with and without order literals. With zero ticks for the ops
    without a cost (no floor), steps of zero-tick ops hold memory too: the optimum under
    each budget is the brute force's over the orders within it."""
    g, costs = fifo_graph(False, unused_input=100)
    prob = build_problem(g, costs=costs)
    orders = [list(o) for o in all_topological_orders(g)]
    pk = np.array([int(peak(g, o)[0]) for o in orders])
    d = floor1(np.rint(prob.dur).astype(np.int64))
    t = np.rint(prob.ttime).astype(np.int64)
    assert pk.min() == pk.max() == 108  # 100 + 8 bytes at p, more than any later step
    for lits in (False, True):
        V, run = run_model(prob, d, t, budget=108, order_literals_all=lits)
        assert run.optimal and round(run.solver.objective_value) == 28
        try:
            V, run = run_model(prob, d, t, budget=107, order_literals_all=lits)
        except Infeasible:
            continue
        assert run.status == "INFEASIBLE", lits
    g, prob, d, t, orders, ms, pk = case(0, streams="shared")
    d0 = np.rint(prob.dur).astype(np.int64)
    assert (d0 == 0).any()
    m0 = makespans(prob, orders, d0, t)[:, 0]
    levels = sorted(set(pk.tolist()))
    for budget in levels[:3]:
        V, run = run_model(prob, d0, t, budget=budget)
        assert V.lit  # FIFO literals: the step memory model is on
        assert run.optimal and round(run.solver.objective_value) == brute_min(m0, pk, budget)


def _fifo_pairs(prob):
    """Pairs of transfers on one stream whose starts the graph leaves unordered."""
    n = 0
    for p in range(prob.P):
        for q in range(p + 1, prob.P):
            a, b = int(prob.starts[p]), int(prob.starts[q])
            n += prob.stream[p] == prob.stream[q] and not (prob.anc[a, b] or prob.anc[b, a])
    return n


@pytest.mark.parametrize("lits", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_model_alone_on_several_streams_matches_brute_force(seed, lits):
    """Per-kind streams, no budget, with and without order literals between every pair."""
    g, prob, d, t, orders, ms, pk = case(seed)
    V, run = run_model(prob, d, t, order_literals_all=lits)
    assert run.optimal
    want = ms.min()
    assert round(run.solver.objective_value) == want
    order = check_schedule(V, run)
    assert prob.tick_timeline(order, d, t).makespan[0] == want
    n = prob.n
    free = sum(not (prob.anc[i, j] or prob.anc[j, i]) for i in range(n) for j in range(i + 1, n))
    assert V.stats["fifo_literals"] == _fifo_pairs(prob)
    if lits:
        # one literal per independent pair of ops, shared by the FIFO rule
        assert V.stats["order_literals"] == len(V.lit) == free
    else:
        assert "order_literals" not in V.stats
    # the optimum as the horizon (as the solver sets it from a hint): still found; one
    # tick less: no schedule
    V, run = run_model(prob, d, t, horizon=[want], order_literals_all=lits)
    assert run.optimal and round(run.solver.objective_value) == want
    try:
        V, run = run_model(prob, d, t, horizon=[want - 1], order_literals_all=lits)
    except Infeasible:
        return
    assert run.status == "INFEASIBLE"


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_three_streams_and_a_shared_one(seed):
    """Three kinds on three streams, and the same graph on one shared stream."""
    for streams in ("per-kind", "shared"):
        g, prob, d, t, orders, ms, pk = case(seed, 4, streams, KINDS)
        assert len(prob.streams) == (3 if streams == "per-kind" else 1)
        assert (_fifo_pairs(prob) >= 2) == (streams == "shared")
        V, run = run_model(prob, d, t)
        assert run.optimal and round(run.solver.objective_value) == ms.min(), streams
        order = check_schedule(V, run)
        assert prob.tick_timeline(order, d, t).makespan[0] == ms.min()
        assert V.stats["fifo_literals"] == _fifo_pairs(prob)


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_least_peak_variable_is_the_least_peak(seed):
    """``peak_vars``: minimising the capacity variable gives the least peak over every
    order (its bytes: value times the gcd plus the constant bytes), also under a makespan
    cap, where it is the least peak among the orders that meet the cap."""
    g, prob, d, t, orders, ms, pk = case(seed)

    def least_peak(V):
        V.m.minimize(sum(v for v, _, _ in V.peak_vars))

    for cap in (None, int(np.median(ms))):
        horizon = d.sum(axis=1) + t.sum(axis=1) if cap is None else np.array([cap])
        V, run = run_model(prob, d, t, least_peak, horizon, budget=10**6, peak_vars=True)
        assert run.optimal and len(V.peak_vars) == 1
        v, gcd, const = V.peak_vars[0]
        assert const == 7
        want = pk[ms <= horizon[0]].min()
        got = run.solver.value(v) * gcd + const
        assert got == want, cap
        order = check_schedule(V, run)
        assert int(peak(g, order)[0]) == want
        # the secondary objective does the same
        V, run = run_model(
            prob,
            d,
            t,
            lambda V: O.secondary(V, "peak"),
            horizon,
            budget=10**6,
            peak_vars=True,
        )
        assert run.optimal and run.solver.objective_value * gcd + const == want


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_two_time_copies_share_one_order(seed):
    """Two copies with other op and transfer times: the least summed makespan of one order
    (a copy alone may prefer another order), and the weighted / minimax objectives with
    their integer coefficients, under no budget and a tight one."""
    g, prob, d, t, orders, ms, pk = case(seed)
    rng = np.random.default_rng(100 + seed)
    d2 = np.vstack([d, rng.integers(1, 9, size=d.shape[1])])
    t2 = np.vstack([t, rng.integers(2, 16, size=t.shape[1])])
    mc = makespans(prob, orders, d2, t2)  # [orders, 2]
    each = mc.min(axis=0)
    apart = 0
    for budget in (None, int(np.median(pk))):
        keep = np.ones(len(orders), bool) if budget is None else pk <= budget
        want = mc[keep].sum(axis=1).min()
        V, run = run_model(prob, d2, t2, budget=budget)
        assert run.optimal and round(run.solver.objective_value) == want, budget
        order = check_schedule(V, run)
        assert prob.tick_timeline(order, d2, t2).makespan.sum() == want
        if budget is None:
            apart += want > each.sum()
        if budget is not None:
            continue
        # the objectives module: weighted (weights from the problem's scenarios, which are
        # static here: one weight, coefficients 1000 each) and minimax over the ratios
        prob2 = _with_weights(prob, [0.25, 0.75])
        tick = np.array([1.0, 3.0])
        ref = np.array([2.0, 1.0])
        for kind in ("weighted", "minimax"):
            box: dict = {}

            def obj(V, kind=kind, box=box, prob2=prob2, tick=tick, ref=ref):
                o, coef, z = O.makespan(V, prob2, kind, tick, ref, V.H)
                box["coef"], box["z"] = coef, z
                V.m.minimize(o)

            # (no budget here: the two scenarios hold no byte sizes of their own)
            V, run = run_model(prob2, d2, t2, obj)
            coef = box["coef"]
            if kind == "weighted":
                c = np.array([0.25, 0.75]) * tick
                assert coef.tolist() == np.maximum(np.rint(1000 * c / c.max()), 1).tolist()
                assert box["z"] is None
            else:
                r = tick / ref
                assert coef.tolist() == np.rint(1e6 * r / r.max()).tolist()
                assert box["z"] is not None
            vals = (mc * coef).max(axis=1) if kind == "minimax" else mc @ coef
            assert run.optimal and round(run.solver.objective_value) == vals.min(), kind
            order = check_schedule(V, run)
            got = prob.tick_timeline(order, d2, t2).makespan
            assert O.tick_objective(got, coef, kind == "minimax") == vals.min()
    assert apart > 0 or seed > 0


def _with_weights(prob, weights):
    """The problem with two scenarios of these weights (the model reads only the weights
    and, for memory, the scenario's buffer sizes: two copies of the static sizes)."""
    import dataclasses

    from cpsched.core.scenarios import Scenarios

    sc = Scenarios(("a", "b"), (), np.zeros((2, 0), np.int64), np.asarray(weights))
    return dataclasses.replace(prob, scenarios=sc)


def test_objective_coefficients_are_at_least_one():
    """A scenario of tiny weight (or tiny makespan ratio) still counts once: its integer
    coefficient is 1, the others are scaled to 1000 (weighted) or 10^6 (minimax)."""
    g, prob, d, t, orders, ms, pk = case(0)
    prob2 = _with_weights(prob, [0.0004, 0.9996])
    V, _ = run_model(prob2, np.vstack([d, d]), np.vstack([t, t]), lambda V: None)
    tick = np.array([1.0, 1.0])
    _, coef, z = O.makespan(V, prob2, "weighted", tick, None, V.H)
    assert coef.tolist() == [1, 1000] and z is None
    _, coef, z = O.makespan(V, prob2, "minimax", tick, np.array([1e7, 1.0]), V.H)
    assert coef.tolist() == [1, 10**6] and z is not None


def test_one_copy_objective_is_the_makespan():
    g, prob, d, t, orders, ms, pk = case(0)
    V, run = run_model(
        prob, d, t, lambda V: V.m.minimize(O.makespan(V, prob, "minimax", 1, 1, V.H)[0])
    )
    assert run.optimal and round(run.solver.objective_value) == ms.min()
    obj, coef, z = O.makespan(V, prob, "weighted", 1, 1, V.H)
    assert coef.tolist() == [1] and z is None
    assert O.tick_objective(np.array([7, 5]), np.array([2, 3]), True) == 15
    assert O.tick_objective(np.array([7, 5]), np.array([2, 3]), False) == 29


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_inflight_limits_match_brute_force(seed):
    """Per-kind limits of one transfer in flight (start..done, both ends included) on one
    shared stream: the least makespan among the orders within the limits; and the
    in-flight variable (``inflight_var``) minimised under a makespan cap is the least
    count of collectives in flight among the orders meeting the cap."""
    g, prob, d, t, orders, ms, pk = case(seed, 4, "shared", ("all-reduce",) * 3)
    for limits in ({"all-reduce": 1}, {"all-reduce": 2}):
        ok = np.array([inflight_ok(prob, o, limits) for o in orders])
        want = brute_min(ms, ok=ok)
        V, run = run_model(prob, d, t, limits=limits)
        assert run.optimal and round(run.solver.objective_value) == want, limits
        order = check_schedule(V, run)
        assert inflight_ok(prob, order, limits)
    pos = [np.argsort(np.asarray(o)) for o in orders]
    fl = np.array([max_inflight(prob, p) for p in pos])
    for cap in (int(ms.min()), int(np.median(ms))):
        want = fl[ms <= cap].min()
        V, run = run_model(
            prob, d, t, lambda V: O.secondary(V, "inflight"), np.array([cap]), inflight_var=True
        )
        assert run.optimal and round(run.solver.objective_value) == want, cap
        order = check_schedule(V, run)
        assert max_inflight(prob, np.argsort(np.asarray(order))) == want


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_distance_objective_alone_matches_brute_force(seed):
    """Unit durations: the model's distance objective is the largest total start-to-done
    distance over the orders within the budget."""
    g, prob, d, t, orders, ms, pk = case(seed)
    dist = np.array([total_distance(prob, o) for o in orders])
    ones = np.ones_like(d)
    zero = np.zeros_like(t)
    for budget in (None, int(np.median(pk))):
        want = dist if budget is None else dist[pk <= budget]
        V, run = run_model(
            prob, ones, zero, O.distance, np.array([prob.n]), budget=budget, order_literals_all=True
        )
        assert run.optimal and round(run.solver.objective_value) == want.max(), budget
        order = V.order_from(run.solver)
        assert total_distance(prob, order) == want.max()


@pytest.mark.parametrize("seed,fixed_prefix", [(0, True), (1, False), (7, True)])
def test_window_with_two_copies_matches_brute_force(seed, fixed_prefix):
    """LNS windows (``build(window=(order, a, b))``) with two time copies: the least summed
    makespan over the orders that keep ``order`` outside positions ``a..b-1``, without
    and with a budget; the copies may not order the window's ops differently."""
    g, prob, d, t, orders, ms, pk = case(seed)
    rng = np.random.default_rng(200 + seed)
    d2 = np.vstack([d, rng.integers(1, 9, size=d.shape[1])])
    t2 = np.vstack([t, rng.integers(2, 16, size=t.shape[1])])
    mc = makespans(prob, orders, d2, t2)
    tot = mc.sum(axis=1)
    cur = orders[int(np.argmax(tot))]
    N = g.n_ops
    apart = 0
    for budget in (None, int(np.median(pk))):
        if budget is not None:
            feas = np.flatnonzero(pk <= budget)
            cur = orders[int(feas[np.argmax(tot[feas])])]
        tl = prob.tick_timeline(cur, d2, t2)
        for a, b in [(0, N), (1, N - 1), (3, N), (0, N - 4)]:
            keep = np.array([o[:a] == cur[:a] and o[b:] == cur[b:] for o in orders])
            if budget is not None:
                keep &= pk <= budget
            want = tot[keep].min()
            V = build(
                prob,
                d2,
                t2,
                np.rint(tl.makespan).astype(np.int64),
                budget=None if budget is None else np.array([budget]),
                limits={},
                transfers_on=True,
                fifo_order=True,
                window=(cur, a, b),
                prefix_times=tl if fixed_prefix else None,
            )
            w = cur[a:b]
            free = sum(
                not (prob.anc[i, j] or prob.anc[j, i]) for k, i in enumerate(w) for j in w[k + 1 :]
            )
            assert V.stats["order_literals"] == free  # one per independent pair of the window
            V.m.minimize(V.M[0] + V.M[1])
            run = solve(V.m, SolverConfig(time_limit=20, workers=1, seed=0))
            assert run.optimal and round(run.solver.objective_value) == want, (budget, a, b)
            order = check_schedule(V, run)
            assert order[:a] == cur[:a] and order[b:] == cur[b:]
            assert prob.tick_timeline(order, d2, t2).makespan.sum() == want
            apart += want > mc[keep].min(axis=0).sum()
    assert apart > 0


def test_inflight_variable_counts_only_collectives():
    """A host copy and an async fusion whose spans enclose an all-reduce's (control edges):
    with per-kind limits on the copy and the fusion, the in-flight variable still counts
    collectives only, so its least value is 1; the brute force over every order agrees."""
    b = GraphBuilder("kinds")
    p = b.add_op("p", "parameter", OpKind.PARAMETER)
    bp = b.add_buffer(p, 8, live_in=True)
    outer = []
    for name, opcode in (("cp", "copy"), ("fu", "fusion")):
        s = b.add_op(f"{name}-start", f"{opcode}-start", OpKind.ASYNC_START, operands=[p])
        b.add_buffer_user(bp, s)
        bs = b.add_buffer(s, 8)
        d = b.add_op(f"{name}-done", f"{opcode}-done", OpKind.ASYNC_DONE, operands=[s])
        b.add_buffer_user(bs, d)
        b.add_buffer(d, 8, live_out=True)
        b.pair_async(s, d)
        outer.append((s, d))
    sa, da, ba = _pair(b, "ar", p, bp, 8)
    b.add_buffer(da, 8, live_out=True)
    b.add_buffer_user(ba, da)
    for s, d in outer:
        b.add_control_pred(sa, s)
        b.add_control_pred(d, da)
    g = b.build()
    costs = Costs(
        np.zeros((1, g.n_ops)), {s: np.array([3.0]) for s in (sa, *[s for s, _ in outer])}
    )
    prob = build_problem(g, costs=costs)
    assert sorted(prob.kind_of(q) for q in range(prob.P)) == ["all-reduce", "async-compute", "copy"]
    d = floor1(np.rint(prob.dur).astype(np.int64))
    t = np.rint(prob.ttime).astype(np.int64)
    fl = [max_inflight(prob, np.argsort(np.asarray(o))) for o in all_topological_orders(g)]
    assert min(fl) == 1
    limits = {"copy": 1, "async-compute": 1}
    V, run = run_model(
        prob, d, t, lambda V: O.secondary(V, "inflight"), limits=limits, inflight_var=True
    )
    assert run.optimal and round(run.solver.objective_value) == 1
