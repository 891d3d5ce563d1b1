"""Edge cases of the simulator that random graphs miss (found by mutation testing)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from cpsched.analysis.memory import peak, positions, simulate
from cpsched.core.graph import GraphBuilder
from cpsched.core.scenarios import Scenarios


def test_one_op_one_buffer():
    b = GraphBuilder("one")
    b.add_op("a", "op", transient=3)
    b.add_buffer("a", 5, live_out=True)
    g = b.build()
    prof = simulate(g, [0])
    assert prof.usage.tolist() == [[8]]
    assert (prof.start.tolist(), prof.end.tolist()) == ([0], [0])


def test_empty_graph():
    g = GraphBuilder("empty").build()
    assert peak(g, []).tolist() == [0]
    assert simulate(g, []).peak_step.tolist() == [0]


def test_peak_op_and_step_per_scenario():
    # a (10*s) then b (100): the peak is at a when s is large, at b when s is small
    b = GraphBuilder("two")
    b.add_op("a", "op")
    b.add_op("b", "op")
    b.add_buffer("a", "10*s")
    b.add_buffer("b", 100)
    g = b.build()
    sc = Scenarios(("s=1", "s=50"), ("s",), np.array([[1], [50]]), np.array([0.5, 0.5]))
    prof = simulate(g, [0, 1], sc)
    assert prof.usage.tolist() == [[10, 100], [500, 100]]
    assert prof.peak_step.tolist() == [1, 0]
    assert prof.peak_op() == 1 and prof.peak_op(0) == 1 and prof.peak_op(1) == 0
    assert prof.peak_by_name() == {"s=1": 100, "s=50": 500}


def test_profiles_are_immutable_and_positions_invert_orders():
    b = GraphBuilder("c")
    b.add_op("a", "op")
    b.add_buffer("a", 1)
    prof = simulate(b.build(), [0])
    with pytest.raises(dataclasses.FrozenInstanceError):
        prof.usage = None
    assert positions([2, 0, 1], 3).tolist() == [1, 2, 0]


# -- the lower bounds, exactly ------------------------------------------------------------------

from oracle import rich_spec, scenarios  # noqa: E402

from cpsched.analysis.memory import lower_bound, op_lower_bounds, reachability  # noqa: E402

S_VALUES = (1, 5)


def _forced_reference(spec, orders):
    """``[S, n]``: bytes of the buffers live at op v in EVERY order (the reference
    simulator's live sets intersected), plus v's transient."""
    n = spec.n
    sizes = spec.device_bytes(S_VALUES)                      # [S, B]
    always = np.ones((n, len(spec.bufs)), dtype=bool)
    for order in orders:
        pos = {v: t for t, v in enumerate(order)}
        for k, b in enumerate(spec.bufs):
            first = 0 if b.live_in else pos[b.op]
            last = n - 1 if b.live_out else max([pos[b.op]] + [pos[u] for u in b.users])
            for v in range(n):
                always[v, k] &= first <= pos[v] <= last
    return (always.astype(np.int64) @ sizes.T).T + spec.transient_bytes(S_VALUES)


@pytest.mark.parametrize("seed", range(12))
def test_forced_live_bound_is_exactly_what_every_order_keeps(seed):
    spec = rich_spec(900 + seed, 5)
    g = spec.build()
    orders = spec.orders(limit=3000)
    assert len(orders) < 3000
    sc = scenarios(S_VALUES)
    assert np.array_equal(op_lower_bounds(g, sc), _forced_reference(spec, orders))
    assert np.array_equal(op_lower_bounds(g, sc, crossing=True), op_lower_bounds(g, sc))


@pytest.mark.parametrize("seed", range(12))
def test_cheap_bound_is_what_each_op_touches(seed):
    """Without reachability: the buffers v defines or uses, plus those live throughout."""
    spec = rich_spec(950 + seed, 5)
    g = spec.build()
    sizes = spec.device_bytes(S_VALUES)
    want = spec.transient_bytes(S_VALUES).copy()
    for k, b in enumerate(spec.bufs):
        if b.live_in and b.live_out:
            want += sizes[:, k:k + 1]
            continue
        for v in {b.op, *b.users}:
            want[:, v] += sizes[:, k]
    assert np.array_equal(op_lower_bounds(g, scenarios(S_VALUES), crossing=False), want)
    # the whole-program bound: the largest op bound, everything live-in, everything live-out
    first = sizes[:, [k for k, b in enumerate(spec.bufs) if b.live_in]].sum(axis=1)
    last = sizes[:, [k for k, b in enumerate(spec.bufs) if b.live_out]].sum(axis=1)
    for crossing in (True, False):
        per_op = op_lower_bounds(g, scenarios(S_VALUES), crossing=crossing).max(axis=1)
        assert np.array_equal(lower_bound(g, scenarios(S_VALUES), crossing=crossing),
                              np.maximum(per_op, np.maximum(first, last)))


@pytest.mark.parametrize("seed", range(8))
def test_reachability_is_the_transitive_closure(seed):
    spec = rich_spec(980 + seed, 6)
    g = spec.build()
    preds = spec.preds()
    want = np.zeros((spec.n, spec.n), dtype=bool)
    for v in g.topological_order():
        for u in preds[v]:
            want[v, u] = True
            want[v] |= want[u]
    anc, desc = reachability(g)
    assert np.array_equal(anc, want) and np.array_equal(desc, want.T)


def test_bounds_of_an_empty_graph():
    g = GraphBuilder("empty").build()
    sc = scenarios(S_VALUES)
    assert op_lower_bounds(g, sc).shape == (2, 0)
    assert lower_bound(g, sc).tolist() == [0, 0]


def test_bounds_of_tiny_graphs_exactly():
    """One buffer a -> b (one chunk of one buffer), and a single op."""
    b = GraphBuilder("ab")
    b.add_op("a", "op")
    b.add_op("b", "op", operands=["a"], transient=2)
    b.add_buffer("a", 7, users=["b"])
    g = b.build()
    assert op_lower_bounds(g).tolist() == [[7, 9]]
    assert op_lower_bounds(g, crossing=False).tolist() == [[7, 9]]
    assert lower_bound(g).tolist() == [9]
    one = GraphBuilder("one")
    one.add_op("a", "op", transient=1)
    one.add_buffer("a", 5, live_out=True)
    g1 = one.build()
    sc = scenarios(S_VALUES)
    assert op_lower_bounds(g1, sc).tolist() == [[6], [6]]
    assert lower_bound(g1).tolist() == [6]


def test_positions_of_a_partial_order():
    # ops missing from the order have no position (-1)
    assert positions([2, 0], 4).tolist() == [1, -1, 0, -1]
