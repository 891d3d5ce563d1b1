"""Clone chains in the span greedy: a clone may re-compute the inputs it would otherwise
keep alive. Plans stay valid, are never worse than the walk without chains, never below
the brute-force optimum, and reach budgets that single clones cannot."""

import time

import numpy as np
import pytest
from test_remat_cp import brute_force, fixed_order_cases, weighted_dag

from cpsched.analysis.memory import simulate
from cpsched.core.graph import GraphBuilder
from cpsched.strategies.remat.method import min_memory_bound
from cpsched.heuristics.remat import (
    regens_fit,
    _greedy_regens,
    _setup,
    _slots_before,
    lns_remat,
    span_remat,
)
from cpsched.remat.plan import Regen, Skeleton, materialize, replay
from cpsched.remat.skeleton import materialize_tagged


def chain_graph(dur_x=9.0, dur_q=2.0, dur_p=3.0):
    """x -> q -> p, then a wide middle (h1 -> h2), then out reads p's buffer, h2 and x.

    Sizes: x 1, q's buffer 10, p's buffer 10, h1 and h2 50 each; the peak (111) is at h2,
    where p's buffer waits for out. Cloning p alone before out keeps q's buffer alive
    instead (no gain); cloning q then p frees 10 bytes there."""
    b = GraphBuilder("chain")
    x = b.add_op("x", "op", attrs={"duration": dur_x})
    q = b.add_op("q", "op", operands=[x], attrs={"duration": dur_q})
    p = b.add_op("p", "op", operands=[q], attrs={"duration": dur_p})
    h1 = b.add_op("h1", "op", operands=[x], attrs={"duration": 1.0})
    h2 = b.add_op("h2", "op", operands=[h1], attrs={"duration": 1.0})
    out = b.add_op("out", "op", operands=[p, h2, x], attrs={"duration": 1.0})
    b.add_buffer(x, 1, users=[q, h1, out])
    b.add_buffer(q, 10, users=[p])
    b.add_buffer(p, 10, users=[out])
    b.add_buffer(h1, 50, users=[h2])
    b.add_buffer(h2, 50, users=[out])
    b.add_buffer(out, 1, live_out=True)
    b.original_order = [x, q, p, h1, h2, out]
    return b.build()


def _durations(g):
    return np.array([[g.attrs(i)["duration"] for i in range(g.n_ops)]])


def test_a_clone_chain_reaches_a_budget_single_clones_miss():
    g = chain_graph()
    order = g.default_order()
    dur = _durations(g)
    assert int(simulate(g, order).peak[0]) == 111
    budget = 101
    single = span_remat(g, None, budget, order=order, durations=dur, chain_depth=0)
    assert single.status == "OVER_BUDGET"
    res = span_remat(g, None, budget, order=order, durations=dur, chain_depth=1)
    assert res.status == "HEURISTIC" and res.info["chain_depth"] == 1
    assert replay(g, res.events[0], budget=budget).ok
    assert int(res.peak[0]) <= budget
    # the chain is the optimum here: q then p, right before out
    want = brute_force(g, [order], budget, dur)
    assert want == pytest.approx(5.0)
    assert res.added_time[0] == pytest.approx(want)
    clones = [res.skeleton.candidates[c] for c in res.active[0]]
    assert sorted((c.op, c.step) for c in clones) == [(1, 5), (2, 5)]
    q_clone = next(c for c in clones if c.op == 1)
    p_clone = next(c for c in clones if c.op == 2)
    assert q_clone.sub < p_clone.sub


def test_deeper_chains_follow_inputs_gone_at_the_peak():
    """With x's clone costing nothing extra to keep, a chain two deep is scored too: the
    greedy still returns a valid plan within the budget at depth 2."""
    g = chain_graph(dur_x=0.5)
    order = g.default_order()
    dur = _durations(g)
    res = span_remat(g, None, 101, order=order, durations=dur, chain_depth=2)
    assert res.status == "HEURISTIC"
    assert replay(g, res.events[0], budget=101).ok
    assert res.added_time[0] >= brute_force(g, [order], 101, dur) - 1e-9


def test_slots_keep_the_chain_before_its_reader_and_after_earlier_clones():
    g = chain_graph()
    order = tuple(g.default_order())
    pos = {op: t for t, op in enumerate(order)}
    for existing in ((), (Regen(0, 5, 0.0),), (Regen(0, 5, 0.0), Regen(3, 5, 1.0))):
        sk = Skeleton(order, existing)
        events, tags, _ = materialize_tagged(g, sk)
        k2 = next(k for k, (code, x) in enumerate(events) if x == 5 and tags[k] == -1)
        step, subs = _slots_before(events, tags, k2, sk, pos, 3)
        assert step == 5 and subs == sorted(subs) and len(set(subs)) == 3
        assert all(s > max((c.sub for c in existing), default=-1) for s in subs)
        # placing them there keeps a valid program
        more = existing + tuple(Regen(v, step, s) for v, s in zip((1, 2, 4), subs))
        materialize(g, Skeleton(order, more))


@pytest.mark.parametrize("seed", [0, 2, 3, 4, 6])
def test_chains_never_below_brute_force_and_never_worse_than_without(seed):
    for g, dur, order, budget, want in fixed_order_cases(seed):
        old = span_remat(g, None, budget, order=order, durations=dur, chain_depth=0)
        new = span_remat(g, None, budget, order=order, durations=dur, chain_depth=2)
        assert replay(g, new.events[0]).ok
        if new.status == "HEURISTIC":
            assert new.peak[0] <= budget
            assert want is not None and new.added_time[0] >= want - 1e-9
        if old.status == "HEURISTIC":
            assert new.status == "HEURISTIC"
            assert new.added_time[0] <= old.added_time[0] + 1e-9


@pytest.mark.parametrize("seed", range(6))
def test_chain_greedy_plans_are_valid_on_larger_graphs(seed):
    g = weighted_dag(20, seed, p=0.2)
    order = g.default_order()
    peak = int(simulate(g, order).peak[0])
    budget = max(int(min_memory_bound(g, None, order)[0][0]), int(0.75 * peak))
    _, bud, order, dur, sizes, trans = _setup(g, None, budget, order, None)
    regens, _ = _greedy_regens(
        g,
        bud,
        order,
        dur,
        sizes,
        trans,
        "span",
        time_limit=30.0,
        t0=time.perf_counter(),
        chain_depth=2,
    )
    sk = Skeleton(tuple(order), tuple(Regen(v, t, s) for v, t, s in regens))
    assert replay(g, materialize(g, sk)).ok
    old = span_remat(g, None, budget, order=order, chain_depth=0)
    new = span_remat(g, None, budget, order=order, chain_depth=2)
    assert replay(g, new.events[0]).ok
    if old.status == "HEURISTIC":
        assert regens_fit(
            g, bud, order, [(c.op, c.step, c.sub) for c in new.skeleton.candidates], sizes, trans
        )
        assert new.added_time[0] <= old.added_time[0] + 1e-9
    lns = lns_remat(g, None, budget, order=order, time_limit=0.5, seed=seed, chain_depth=1)
    assert replay(g, lns.events[0]).ok
    if lns.status == "HEURISTIC":
        assert lns.peak[0] <= budget
