"""Minimum-cut per-op lower bounds (``cpsched.cp.memory.cuts``): sound against brute force."""

from __future__ import annotations

import random

import numpy as np
import pytest

from cpsched.analysis.schedule import OPTIMAL
from cpsched.core.graph import GraphBuilder
from cpsched.core.scenarios import Scenarios, static
from cpsched.cp.memory.problem import from_graph, project, window
from cpsched.strategies.min_peak.method import solve
from cpsched.cp.memory.bounds import order_split_bound, pair_bound
from cpsched.cp.memory.cuts import cut_op_bounds
from helpers import orders_from_preds


def _graph(seed: int, n: int, symbolic: bool = False):
    """Random DAG with transients, live-in / live-out buffers (also with users), unused
    buffers, zero-size buffers and second buffers with a far user."""
    rng = random.Random(seed)
    b = GraphBuilder(f"cut{seed}")
    names = [f"v{i}" for i in range(n)]
    preds = {i: [j for j in range(i) if rng.random() < 0.35] for i in range(n)}
    for i in range(n):
        t = rng.choice([0, 0, 1, 3])
        b.add_op(names[i], "op", operands=[names[j] for j in preds[i]],
                 transient=(f"{t}*s" if symbolic and t else t))
    for i in range(n):
        users = [names[k] for k in range(n) if i in preds[k]]
        size = f"{rng.randint(0, 3)}*s + {rng.randint(0, 6)}" if symbolic else rng.randint(0, 8)
        b.add_buffer(names[i], size, users=users, live_out=rng.random() < 0.3,
                     live_in=rng.random() < 0.15)
        if rng.random() < 0.3 and i + 2 < n:
            far = rng.randint(i + 1, n - 1)
            if i not in preds[far]:
                b.add_operand(far, names[i])
            b.add_buffer(names[i], rng.randint(1, 5), users=[names[far]],
                         live_out=rng.random() < 0.2)
    return b.build()


def _orders(preds: list[list[int]], limit: int = 20_000) -> list[list[int]]:
    return list(orders_from_preds(preds, limit))


def _assert_pointwise(p) -> None:
    """At every step of every order, the usage is at least the cut bound of the op there."""
    cut = cut_op_bounds(p)
    assert (cut >= p.op_lower_bounds).all()
    for o in _orders(p.preds):
        use = p.usage(o)
        assert (use >= cut[:, o]).all(), (o, use, cut[:, o])


TWO = Scenarios(("s=1", "s=5"), ("s",), np.array([[1], [5]]), np.asarray([0.5, 0.5]))


@pytest.mark.parametrize("seed", range(25))
def test_cut_bound_is_below_every_order_pointwise(seed):
    g = _graph(seed, 7 + seed % 3, symbolic=seed % 2 == 1)
    sc = TWO if seed % 2 else static()
    p = from_graph(g, sc)
    _assert_pointwise(p)
    # and on the relaxations the bound phase builds (a window, a projection), under their
    # own rules (floor, buffers live from step 0 or to the last step)
    ref = p.topo
    _assert_pointwise(window(p, ref, 2, 7))
    _assert_pointwise(project(p, ref[3:], ref))
    _assert_pointwise(project(p, ref[1:6], ref, early=False))


def test_cut_bound_is_stronger_than_forced_live_somewhere():
    """On these random graphs the cut bound raises some op's bound (else it adds nothing)."""
    raised = 0
    for seed in range(25):
        p = from_graph(_graph(seed, 8), static())
        raised += int((cut_op_bounds(p) > p.op_lower_bounds).any())
    assert raised >= 5


def test_cut_bound_proves_an_update_pile_up():
    """k parameters (live from the start, 10 bytes each) are each read by one update whose
    result (10 bytes) is a program output: at any update's step every other parameter is
    held either old or new, so 10 (k + 1) + 1 bytes are live. The forced-live bound and the
    first / last step bounds see 10 k + 1 (at x, which all parameters wait for); the cut bound sees the optimum and the
    solver proves it."""
    k = 4
    b = GraphBuilder("updates")
    b.add_op("x", "op")
    for i in range(k):
        b.add_op(f"u{i}", "op", operands=["x"])
    b.add_buffer("x", 1, users=[f"u{i}" for i in range(k)])
    for i in range(k):
        b.add_buffer("x", 10, users=[f"u{i}"], live_in=True)
        b.add_buffer(f"u{i}", 10, live_out=True)
    g = b.build()
    p = from_graph(g, static())
    cut = cut_op_bounds(p)
    assert int(p.op_lower_bounds.max()) == 10 * k + 1
    assert int(cut.max()) == 10 * (k + 1) + 1
    _assert_pointwise(p)
    s = solve(g, time_limit=5, workers=1)
    assert s.status == OPTIMAL
    assert int(s.lower_bound_bytes[0]) == int(s.peak_bytes[0]) == 10 * (k + 1) + 1


@pytest.mark.parametrize("seed", range(12))
def test_pair_bound_is_below_the_brute_force_optimum(seed):
    """The pair case split never exceeds the best order's peak, and never falls below the
    single cut bound."""
    g = _graph(300 + seed, 8)
    p = from_graph(g, static())
    opt = min(int(p.peak(o)[0]) for o in _orders(p.preds))
    b, tried = pair_bound(p, top=8)
    assert int(p.cut_lower_bounds.max()) <= b <= opt


def test_pair_bound_is_stronger_than_the_cut_bound_somewhere():
    raised = 0
    for seed in range(40):
        p = from_graph(_graph(300 + seed, 8), static())
        raised += int(pair_bound(p, top=8)[0] > int(p.cut_lower_bounds.max()))
    assert raised >= 2


def test_module_bound_uses_the_cuts():
    """The module bound (what ``cpsched schedule`` reports for HLO) takes the entry's cut
    bound: on our CNN training step it rises above the forced-live bound, and stays at or
    below the peak of the module's own orders."""
    from pathlib import Path

    from cpsched.analysis.memory import lower_bound
    from cpsched.strategies.module import input_orders, module_lower_bound, module_peak
    from cpsched.readers.hlo.convert import HloConverter, read_hlo_module

    path = Path(__file__).resolve().parents[1] / "models" / "hlo" / "cnn_train.hlo"
    m = read_hlo_module(str(path))
    lb = int(module_lower_bound(m)[0])
    g = HloConverter(m).graph(m.entry.name)
    assert lb > int(lower_bound(g)[0])
    assert lb <= int(module_peak(m, input_orders(m))[0])


@pytest.mark.parametrize("seed", range(10))
def test_order_split_over_every_op_is_the_optimum(seed):
    """Split on the relative order of *all* ops: every downset is then fixed, so the bound
    is the brute-force optimum exactly; over fewer ops it stays between the cut bound and
    the optimum."""
    g = _graph(400 + seed, 7 + seed % 2, symbolic=seed % 2 == 1)
    sc = TWO if seed % 2 else static()
    p = from_graph(g, sc)
    for s in range(p.n_scenarios):
        opt = min(int(p.usage(o)[s].max()) for o in _orders(p.preds))
        assert order_split_bound(p, s=s, top=p.n)[0] == opt
        b = order_split_bound(p, s=s, top=4)[0]
        assert int(p.cut_lower_bounds[s].max()) <= b <= opt
