"""Remat plans: the replay checker, materialization, timing, the rewritten graph, exact
breakpoints and the run-time picker."""

import json

import numpy as np
import pytest

from cpsched.core.errors import ScheduleError
from cpsched.core.graph import Collective, GraphBuilder, OpKind
from cpsched.analysis.memory import simulate
from cpsched.remat.plan import (Evict, PlanError, Regen, Skeleton, TransferModel,
                                breakpoints, check_plan, evictable_buffers, events_from_names, events_to_names, finish_result, materialize,
                                pick_plan, plan_limit, plan_time, plan_to_graph,
                                recomputable_ops, remat_result_to_dict, replay,
                                usage_polynomials)
from cpsched.core.scenarios import Scenarios, static
from cpsched.core.symbolic import SymExpr
from cpsched.analysis.validate import validate_schedule

from helpers import random_dag, train_chain


def ev(graph, *steps):
    return events_from_names(graph, [list(s) for s in steps])


# -- replay -------------------------------------------------------------------------------

def test_replay_plain_order_matches_simulator():
    g = train_chain()
    events = materialize(g, Skeleton(tuple(g.default_order())))
    r = replay(g, events)
    assert r.ok and r.eager_frees and r.n_recomputes == 0
    assert int(r.peak[0]) == int(simulate(g, g.default_order()).peak[0]) == 50


def test_replay_catches_every_kind_of_mistake():
    g = train_chain(L=2)   # f0 f1 b1 b0
    ok = ev(g, ("compute", "f0"), ("compute", "f1"), ("compute", "b1"), ("free", "f1"),
            ("compute", "b0"), ("free", "f0"), ("free", "b1"), ("free", "b0"))
    assert replay(g, ok).ok
    # input gone
    bad = ev(g, ("compute", "f0"), ("free", "f0"), ("compute", "f1"))
    assert any("not on the device" in e for e in replay(g, bad).errors)
    # computed while resident
    assert any("already on the device" in e
               for e in replay(g, ev(g, ("compute", "f0"), ("compute", "f0"))).errors)
    # prefetch without a host copy, free of something absent
    assert any("no host copy" in e for e in replay(g, ev(g, ("prefetch", "f0"))).errors)
    assert any("frees" in e for e in replay(g, ev(g, ("free", "f0"))).errors)
    # never computed
    assert any("never computed" in e for e in replay(g, ok[:2]).errors)
    # over budget
    r = replay(g, ok, budget=20)
    assert not r.ok and "exceeds the budget" in r.errors[-1]
    with pytest.raises(ScheduleError):
        check_plan(g, ok, budget=20)


def test_replay_forbids_cloning_collectives_and_outputs():
    b = GraphBuilder("coll")
    x = b.add_op("x", "op")
    ar = b.add_op("ar", "all-reduce", operands=["x"])
    y = b.add_op("y", "op", operands=["ar"])
    b.add_buffer(x, 4, users=["ar"])
    b.add_buffer(ar, 4, users=["y"])
    b.add_buffer(y, 4, live_out=True)
    b.set_collective(ar, Collective("all-reduce", SymExpr.const(4), 2))
    g = b.build()
    assert not recomputable_ops(g)[ar] and not recomputable_ops(g)[y] and recomputable_ops(g)[x]
    events = ev(g, ("compute", "x"), ("compute", "ar"), ("free", "ar"), ("compute", "ar"),
                ("compute", "y"))
    assert any("may not be cloned" in e for e in replay(g, events).errors)


def test_replay_checks_reads_after_in_place_update():
    b = GraphBuilder("inplace")
    w = b.add_op("w", "parameter", OpKind.PARAMETER)
    x = b.add_op("x", "dot", operands=["w"])
    b.add_op("upd", "adam-update", operands=["w", "x"])
    y = b.add_op("y", "op", operands=["x"])
    b.add_buffer(w, 8, users=["x", "upd"], live_in=True, live_out=True)
    b.add_buffer(x, 8, users=["upd", "y"])
    b.add_buffer(y, 8, live_out=True)
    g = b.build()
    events = ev(g, ("compute", "w"), ("compute", "x"), ("compute", "upd"), ("free", "x"),
                ("compute", "x"), ("compute", "y"), ("free", "x"))
    assert any("overwritten in place" in e for e in replay(g, events).errors)


# -- materialize, timing, rewritten graph ------------------------------------------------------

def test_materialize_clone_and_eviction():
    g = train_chain()       # steps: f0 f1 f2 f3 b3 b2 b1 b0
    sk = Skeleton(tuple(g.default_order()), (Regen(1, 5), Evict(0, 2, 4, 6)))
    names = events_to_names(g, materialize(g, sk, [0]))
    assert names.count(["compute", "f1"]) == 2
    assert replay(g, materialize(g, sk, [0])).peak[0] == 40
    ev1 = materialize(g, sk, [1])
    assert ["evict", "f0"] in events_to_names(g, ev1) and replay(g, ev1).peak[0] == 40
    # the clone of f1 reads f0 inside its eviction hole
    with pytest.raises(PlanError):
        materialize(g, sk, [0, 1])
    # a clone nobody reads is dropped
    assert materialize(g, Skeleton(sk.order, (Regen(1, 7),))) == materialize(g, Skeleton(sk.order))


def test_plan_time_hand_computed():
    g = train_chain()
    sk = Skeleton(tuple(g.default_order()), (Evict(0, 2, 4, 6),))
    events = materialize(g, sk)
    dur = np.ones((1, g.n_ops))
    # copy of 10 B at 10 B/unit: 1 unit. Out at t=2 (done 3, freed before step 4 at t=4);
    # in issued at t=6 (after b2), done at 7: b1 waits 1 unit
    t = plan_time(g, events, dur, TransferModel(10.0))
    assert t.makespan[0] == 9 and t.exposed_transfer[0] == 1 and t.recompute[0] == 0
    assert t.added_pct[0] == pytest.approx(100 / 8)
    # issued earlier (before step 5) the copy is hidden
    events = materialize(g, Skeleton(sk.order, (Evict(0, 2, 4, 5),)))
    assert plan_time(g, events, dur, TransferModel(10.0)).added[0] == 0
    # the free waits for a slow copy-out: 5 units from t=2, free before step 4 (t=4): 3 late
    events = materialize(g, Skeleton(sk.order, (Evict(0, 2, 4, 5),)))
    assert plan_time(g, events, dur, TransferModel(2.0)).exposed_transfer[0] == pytest.approx(3 + 4)


def _random_skeleton(rng, g):
    """A random candidate set on the default order: clones after their op, evictions that
    start after the buffer exists (some plans are still invalid, e.g. a clone reading an
    evicted buffer)."""
    n = g.n_ops
    order = g.default_order()
    pos = {v: t for t, v in enumerate(order)}
    cands, cloned = [], set()
    for v in np.flatnonzero(recomputable_ops(g)):
        if rng.random() < 0.5 and pos[int(v)] + 1 < n:
            cands.append(Regen(int(v), rng.randint(pos[int(v)] + 1, n - 1), rng.randint(0, 3)))
            cloned.add(int(v))
    for bidx in np.flatnonzero(evictable_buffers(g)):
        bidx = int(bidx)
        d = int(g.buffer_def[bidx])
        if rng.random() < 0.35 and d not in cloned:
            a = rng.randint(pos[d] + 1, n)
            r = rng.randint(a, n)
            # back on the device by its next reader at or after the free
            nxt = min([pos[int(u)] for u in g.buffer_users(bidx) if pos[int(u)] >= r] + [n])
            cands.append(Evict(bidx, a, r, rng.randint(r, nxt)))
    return Skeleton(tuple(order), tuple(cands))


# At most this share of random plans may be rejected by ``materialize`` (the test is about the
# ones it accepts); measured 13 of 60 here (before: 65 % of hypothesis examples returned).
MAX_REJECTED_SHARE = 0.4


def test_rewritten_graph_simulates_to_the_replay_peak():
    import random
    rng = random.Random(18)
    checked = rejected = with_evict = with_regen = 0
    for k in range(60):
        g = random_dag(rng.randint(4, 9), rng.randint(0, 10_000), p=0.4)
        sk = _random_skeleton(rng, g)
        try:
            events = materialize(g, sk)
        except PlanError:
            rejected += 1
            continue
        r = replay(g, events)
        assert r.ok, r.errors
        g2, o2 = plan_to_graph(g, events)
        sim = validate_schedule(g2, o2, static())
        assert int(sim[0]) == int(r.peak[0])
        checked += 1
        with_evict += any(isinstance(c, Evict) for c in sk.candidates)
        with_regen += any(isinstance(c, Regen) for c in sk.candidates)
    assert rejected <= MAX_REJECTED_SHARE * 60, rejected
    assert with_evict >= 15 and with_regen >= 30, (with_evict, with_regen)


def test_rewritten_graph_names_and_async_pairs():
    g = train_chain()
    sk = Skeleton(tuple(g.default_order()), (Regen(1, 5), Evict(0, 2, 4, 6)))
    g2, order = plan_to_graph(g, materialize(g, sk, [0]))
    assert "f1.remat1" in g2.op_names
    g3, order3 = plan_to_graph(g, materialize(g, sk, [1]))
    names = [g3.op_names[i] for i in order3]
    assert names.index("f0.evict1.start") < names.index("f0.evict1.done") \
        < names.index("f0.prefetch1.start") < names.index("f0.prefetch1.done") < names.index("b1")
    host = g3.buffer_names.index("f0.evict1.host")
    assert g3.buffer_space[host] == 5
    assert int(simulate(g3, order3).peak[0]) == 40


# -- symbolic limits, breakpoints and the picker ----------------------------------------------

def _sym_chain():
    return train_chain(L=4, sym="4*s^2 + 64*s + 256")


def _bucketed(values, lowers):
    return Scenarios(tuple(f"s<={v}" for v in values), ("s",),
                     np.array([[v] for v in values]), np.ones(len(values)) / len(values),
                     np.array([[lo] for lo in lowers]))


def test_usage_polynomials_are_exact():
    g = _sym_chain()
    events = materialize(g, Skeleton(tuple(g.default_order())))
    polys = usage_polynomials(g, events, "s")
    for s in (1, 7, 100, 513):
        direct = int(replay(g, events, Scenarios(("x",), ("s",), np.array([[s]]), np.ones(1))).peak[0])
        assert max(sum(c * s ** k for k, c in enumerate(p)) for p in polys) == direct


@pytest.mark.parametrize("budget", [5_000, 123_457, 10**7 + 3])
def test_plan_limit_is_the_exact_breakpoint(budget):
    g = _sym_chain()
    sk = Skeleton(tuple(g.default_order()), (Regen(1, 5),))
    for active in ([], [0]):
        events = materialize(g, sk, active)
        lim = plan_limit(g, events, budget, "s", lo=1, hi=10**6)

        def peak_at(s):
            sc = Scenarios(("x",), ("s",), np.array([[s]]), np.ones(1))
            return int(replay(g, events, sc).peak[0])
        assert peak_at(lim.limit) <= budget < peak_at(lim.limit + 1)


def _table_result(budget):
    g = _sym_chain()
    sc = _bucketed([64, 256, 1024], [1, 65, 257])
    sk = Skeleton(tuple(g.default_order()), (Regen(1, 5), Regen(0, 6)))
    active = [[], [0], [0, 1]]
    return finish_result(g, sc, budget, sk, active, "test", "FEASIBLE", 0.0,
                         np.ones((3, g.n_ops)), None, check_budget=False)


def test_breakpoints_and_picker():
    g = _sym_chain()
    # budget between the three plans' needs at s=1024
    res = _table_result(10**9)
    budget = int(replay(g, res.events[2], Scenarios(("x",), ("s",), np.array([[1024]]),
                                                   np.ones(1))).peak[0])
    res = _table_result(budget)
    bp = breakpoints(res, budget, hi=4096)
    lim = {k: v["limit"] for k, v in bp["plans"].items()}
    assert lim["s<=1024"] >= 1024
    # candidate 0 (in plans 2 and 3) must be on just above the no-clone plan's limit
    assert bp["must_be_on_from"]["0"] == lim["s<=64"] + 1
    assert bp["must_be_on_from"]["1"] == max(lim["s<=64"], lim["s<=256"]) + 1
    # the picker takes the bucket whose bounds hold the value and verifies it
    for s, name in ((10, "s<=64"), (64, "s<=64"), (65, "s<=256"), (1000, "s<=1024")):
        p = pick_plan(res, {"s": s})
        assert p.bucket == name and p.peak <= budget
    # with exact limits the cheapest plan that fits may come from a smaller bucket
    s = min(lim["s<=64"], 1000)
    assert pick_plan(res, {"s": s}, cheapest=True).bucket == "s<=64"


def test_result_to_dict():
    res = _table_result(10**12)
    d = json.loads(json.dumps(remat_result_to_dict(res)))
    assert d["format"] == "cpsched-remat" and set(d["steps"]) == {"s<=64", "s<=256", "s<=1024"}
    assert d["steps"]["s<=256"][0] == ["compute", "f0"]
    assert d["plan_table"]["s<=1024"] == [0, 1]
    assert d["candidates"][0]["kind"] == "regenerate" and d["candidates"][0]["op"] == "f1"
    assert set(d["peak_bytes"]) == set(d["added_time_pct"]) == {"s<=64", "s<=256", "s<=1024"}
