"""The remat CP model alone (no baselines, hints, replay fallback or LNS around it) against
brute force over its own candidate space on tiny fixed-order graphs: every clone placement
(at most ``copies - 1`` per op, in the allowed steps, every order of the clones of one
step) and every eviction window (free / prefetch steps of the candidate, prefetch ranks)
is materialized, replayed under the budget and timed on the copy streams by the
independent checkers (``replay``, ``plan_time``). The model's optimum must be the least
such added time (``objective='time'``) or the least replayed peak under the added-time
cap (``objective='peak'``), and the plan it decodes must replay to its own objective.

Sizes and times are used unscaled (integers), so every comparison is exact."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers import train_chain
from ortools.sat.python import cp_model
from test_remat_cp import weighted_dag

from cpsched.analysis.memory import simulate
from cpsched.core.graph import GraphBuilder
from cpsched.core.scenarios import Scenarios, static
from cpsched.cp.remat.problem import Spec, clone_candidates, min_memory_bound
from cpsched.cp.remat.solve import build_model
from cpsched.remat.plan import (
    Evict,
    PlanError,
    Regen,
    Skeleton,
    inplace_writers,
    materialize,
    plan_time,
    recomputable_ops,
    replay,
)


def make_spec(
    g,
    order,
    budget,
    *,
    sc=None,
    copies=2,
    G=3,
    regen=None,
    dom=None,
    ev=None,
    transfer=None,
    objective="time",
    overhead_cap=None,
    weights=None,
):
    """A fixed-order spec with unscaled sizes, times and transfer times (integers)."""
    sc = sc or static()
    n_s = len(sc)
    dur = np.array([[g.attrs(i)["duration"] for i in range(g.n_ops)]] * n_s)
    sizes = g.sizes(sc).astype(np.int64)
    trans = g.transient_bytes(sc).astype(np.int64)
    tau = None
    if transfer is not None:
        tt = transfer.times(sizes)
        assert np.allclose(tt, np.round(tt))
        tau = np.round(tt).astype(np.int64)
    cap = None if budget is None else np.broadcast_to(np.asarray(budget), (n_s,)).astype(np.int64)
    return Spec(
        g,
        n_s,
        sizes,
        trans,
        cap,
        dur.astype(np.int64),
        np.ones(n_s, dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.int64),
        G,
        list(order),
        set(regen or ()),
        copies,
        {v: list(s) for v, s in (dom or {}).items()},
        dict(ev or {}),
        tau,
        transfer.streams if transfer is not None else 2,
        objective=objective,
        overhead_cap=None if overhead_cap is None else np.asarray(overhead_cap, dtype=np.int64),
        writers=inplace_writers(g),
    )


def solve_model(spec):
    """Build and solve the model alone: (status, objective, skeleton, active, model)."""
    mdl = build_model(spec)
    sv = cp_model.CpSolver()
    sv.parameters.max_time_in_seconds = 20
    sv.parameters.num_workers = 1
    sv.parameters.random_seed = 0
    st = sv.solve(mdl.m)
    if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return sv.status_name(st), None, None, None, mdl
    assert st == cp_model.OPTIMAL
    sk, active = mdl.extract(sv)
    return "OPTIMAL", round(sv.objective_value), sk, active, mdl


def clone_choices(spec, pos):
    """Per regen op: every set of at most ``copies - 1`` distinct allowed steps."""
    out = []
    for v in sorted(spec.regen_ops):
        steps = spec.stage_domain.get(v, [])
        opts = [()]
        for k in range(1, spec.copies):
            opts += list(itertools.combinations(steps, k))
        out.append((v, opts))
    return out


def evict_choices(spec):
    out = []
    for b in sorted(spec.evict_cands):
        a, c, rdom, gdom = spec.evict_cands[b]
        opts = [None] + [(a + 1, r, gg) for r in rdom for gg in gdom if gg >= r]
        out.append((b, opts))
    return out


def every_plan(spec):
    """Every skeleton (with its active list) of the spec's candidate space."""
    order = spec.order
    pos = {v: t for t, v in enumerate(order)}
    cc = clone_choices(spec, pos)
    ec = evict_choices(spec)
    for pick in itertools.product(*[o for _, o in cc]):
        regs = [(v, t) for (v, _), steps in zip(cc, pick) for t in steps]
        # clones of one step in every order (at most G - 1 of them)
        by_step: dict[int, list[int]] = {}
        for v, t in regs:
            by_step.setdefault(t, []).append(v)
        if any(len(vs) > spec.G - 1 for vs in by_step.values()):
            continue
        steps = sorted(by_step)
        for perms in itertools.product(*[itertools.permutations(by_step[t]) for t in steps]):
            cands = [Regen(v, t, i) for t, p in zip(steps, perms) for i, v in enumerate(p)]
            for epick in itertools.product(*[o for _, o in ec]):
                evs = [(b, e) for (b, _), e in zip(ec, epick) if e is not None]
                for ranks in itertools.permutations(range(len(evs))):
                    ecs = [Evict(b, o, r, gg, rk) for (b, (o, r, gg)), rk in zip(evs, ranks)]
                    yield Skeleton(tuple(order), tuple(cands + ecs))


def brute_force(spec, transfer=None, sc=None):
    """``(added time, replayed peak)`` per scenario of every valid plan (peak checked
    without a budget); the added time is clone time plus exposed copy time."""
    g = spec.graph
    dur = spec.dur.astype(np.float64)
    rows = []
    for sk in every_plan(spec):
        try:
            events = materialize(g, sk)
        except PlanError:
            continue
        r = replay(g, events, sc)
        if r.errors:
            continue
        pt = plan_time(g, events, dur, transfer, sc)
        rows.append((pt.added, r.peak))
    return rows


def check_decoded(spec, sk, active, transfer=None, sc=None):
    """The decoded plan's replayed peaks and added times per scenario."""
    g = spec.graph
    dur = spec.dur.astype(np.float64)
    peaks, added = [], []
    for s, act in enumerate(active):
        events = materialize(g, sk, act)
        one = (
            sc
            if sc is None
            else Scenarios((sc.names[s],), sc.dims, sc.values[s : s + 1], np.ones(1))
        )
        r = replay(g, events, one)
        assert not r.errors, r.errors
        pt = plan_time(g, events, dur[s : s + 1], transfer, one)
        peaks.append(int(r.peak[0]))
        added.append(float(pt.added[0]))
    return peaks, added


def least(rows, budget, s=0):
    """Least added time of the plans under ``budget`` in scenario ``s`` (None: none)."""
    ok = [float(a[s]) for a, p in rows if p[s] <= budget]
    return min(ok) if ok else None


def candidates(g, budget, transfer=None, depth=20):
    """The fixed-order candidates ``solve_remat`` would give the model (every hot gap)."""
    order = g.default_order()
    dur = np.array([[g.attrs(i)["duration"] for i in range(g.n_ops)]])
    tau = None if transfer is None else transfer.times(g.sizes(static())).max(axis=0)
    return clone_candidates(
        g,
        order,
        static(),
        np.array([budget]),
        evict=transfer is not None,
        dur=dur,
        tau_max=tau,
        margin=0.0,
        depth=depth,
        max_regen=None,
    )


def assert_model_is_the_brute_force(spec, budget, transfer=None):
    """Time objective: the model's optimum is the least added time of every plan of its
    candidate space, and its decoded plan replays under the budget to that time."""
    want = least(brute_force(spec, transfer), budget)
    st, obj, sk, active, _ = solve_model(spec)
    if want is None:
        assert st == "INFEASIBLE"
        return None
    assert st == "OPTIMAL"
    assert obj == want
    peaks, added = check_decoded(spec, sk, active, transfer)
    assert peaks[0] <= budget
    assert added[0] == obj
    return want


@pytest.mark.parametrize("seed", [0, 2, 3, 4, 6, 7])
@pytest.mark.parametrize("frac", [0.0, 0.5])
def test_clone_model_alone_matches_brute_force(seed, frac):
    """Clones only (one per op, two sub-slots per step): exact optimum and plan."""
    g = weighted_dag(6, seed)
    order = g.default_order()
    pk = int(simulate(g, order).peak[0])
    lb = int(min_memory_bound(g, None, order)[0][0])
    budget = lb + int(frac * (pk - lb))
    regen, dom, _ = candidates(g, budget)
    spec = make_spec(g, order, budget, regen=regen, dom=dom)
    assert_model_is_the_brute_force(spec, budget)


class CeilTransfer:
    """Copies of ``ceil(bytes / bandwidth)`` time units (integers, as the model's ticks)."""

    def __init__(self, bandwidth: float, streams: int = 2):
        self.bandwidth, self.streams = bandwidth, streams

    def times(self, nbytes):
        return np.ceil(np.asarray(nbytes, dtype=np.float64) / self.bandwidth)


def rebuild(g0, *, transient=None, size=None, live_out_read=False):
    """``g0`` again with ``transient(i)`` bytes on op ``i`` and ``size(j, bytes)`` as
    buffer ``j``'s size expression; ``live_out_read``: the last op's output is also read
    by a new last op (a program output read again)."""
    b = GraphBuilder(g0.name + "-x")
    n = g0.n_ops
    for i in range(n):
        b.add_op(
            g0.op_names[i],
            "op",
            operands=[int(x) for x in g0.operands(i)],
            attrs={"duration": g0.attrs(i)["duration"]},
            transient=0 if transient is None else transient(i),
        )
    for j in range(g0.n_buffers):
        sz = g0.buffer_sizes[j]
        b.add_buffer(
            int(g0.buffer_def[j]),
            sz if size is None else size(j, sz),
            users=[int(u) for u in g0.buffer_users(j)],
            live_out=bool(g0.buffer_live_out[j]),
        )
    if live_out_read:
        b.add_op("z", "op", attrs={"duration": 1.0})
        # ... and every buffer no op reads, so that it comes last
        for j in range(g0.n_buffers):
            if g0.buffer_live_out[j] or not len(g0.buffer_users(j)):
                b.add_buffer_user(j, n)
        b.add_buffer(n, 1, live_out=True)
    b.original_order = list(range(n + int(live_out_read)))
    return b.build()


def with_transients(n, seed, live_out_read=False):
    """``weighted_dag(n, seed)`` with transient bytes on every other op (clonable ones
    included), of the order of a buffer, and 1 byte on op 1."""
    g0 = weighted_dag(n, seed)
    rng = np.random.default_rng(seed + 7)
    sizes = [int(x) for x in g0.sizes(static())[0]]
    return rebuild(
        g0,
        transient=lambda i: (
            1 if i == 1 else (int(rng.integers(1, max(sizes) + 1)) if i % 2 == 0 else 0)
        ),
        live_out_read=live_out_read,
    )


@pytest.mark.parametrize("seed,unit", [(0, False), (2, False), (3, False), (5, False), (0, True)])
def test_clone_model_with_transients_matches_brute_force(seed, unit):
    """Transient bytes at the main op's slot and at each present clone's slot (``unit``:
    1 byte on every op)."""
    g = rebuild(weighted_dag(6, seed), transient=lambda i: 1) if unit else with_transients(6, seed)
    order = g.default_order()
    pk = int(simulate(g, order).peak[0])
    lb = int(min_memory_bound(g, None, order)[0][0])
    budget = lb + (pk - lb) // 3
    regen, dom, _ = candidates(g, budget)
    spec = make_spec(g, order, budget, regen=regen, dom=dom, G=2)
    assert_model_is_the_brute_force(spec, budget)


def assert_peak_model_is_the_brute_force(spec, transfer=None):
    """Peak objective: under each cap on the added time (0, every distinct added time of
    a plan), the model's optimum is the least replayed peak of the plans within it, and
    its decoded plan replays to that peak within the cap."""
    rows = brute_force(spec, transfer)
    times = sorted({float(a[0]) for a, _ in rows})
    for cap in [0.0, *times[1:3]]:
        want = min(int(p[0]) for a, p in rows if a[0] <= cap)
        spec.overhead_cap = np.array([int(cap)])
        st, obj, sk, active, _ = solve_model(spec)
        assert st == "OPTIMAL" and obj == want
        peaks, added = check_decoded(spec, sk, active, transfer)
        assert peaks[0] == want and added[0] <= cap


@pytest.mark.parametrize("seed", [0, 3])
def test_peak_model_alone_matches_brute_force(seed):
    g = with_transients(6, seed)
    order = g.default_order()
    regen, dom, _ = candidates(g, int(simulate(g, order).peak[0]) - 1)
    spec = make_spec(g, order, None, regen=regen, dom=dom, objective="peak", overhead_cap=[0])
    assert_peak_model_is_the_brute_force(spec)


@pytest.mark.parametrize(
    "L,bw,streams,drop,clones",
    [
        (3, 100, 1, 1, True),
        (3, 25, 1, 1, True),
        (3, 25, 1, 1, False),
        (4, 100, 1, 2, True),
        (4, 50, 2, 1, True),
        (4, 20, 2, 2, True),
    ],
)
def test_eviction_model_alone_matches_brute_force(L, bw, streams, drop, clones):
    """Evictions (and clones) on a training chain: every eviction window and clone
    placement, timed on one shared or two copy streams."""
    g = train_chain(L, 100, 1.0, fw_dur=lambda i: 2.0 + i)
    tr = CeilTransfer(bw, streams)
    order = g.default_order()
    pk = int(simulate(g, order).peak[0])
    budget = max(int(min_memory_bound(g, None, order)[0][0]), pk - 100 * drop)
    regen, dom, ev = candidates(g, budget, tr)
    assert ev
    if not clones:
        regen, dom = set(), {}
    spec = make_spec(g, order, budget, regen=regen, dom=dom, ev=ev, transfer=tr)
    assert_model_is_the_brute_force(spec, budget, tr)


def two_gaps(d3):
    """``a`` and ``b`` (100 B each) are read by ``u``, then not until ``v`` / ``w``, after
    ``h1`` -> ``h2`` (200 B each): under 410 B both must be off the device at ``h2`` (step
    4), so both copy-outs (issued after ``u``, step 2) must be done by then; ``h1`` takes
    ``d3``."""
    b = GraphBuilder("two-gaps")
    for name, ins, d in [
        ("a", [], 1),
        ("b", [], 1),
        ("u", ["a", "b"], 1),
        ("h1", ["u"], d3),
        ("h2", ["h1"], 2),
        ("h3", ["h2"], 2),
        ("v", ["a", "h3"], 1),
        ("w", ["b", "v"], 1),
    ]:
        b.add_op(name, "op", operands=ins, attrs={"duration": float(d)})
    for name, size, users in [
        ("a", 100, ["u", "v"]),
        ("b", 100, ["u", "w"]),
        ("u", 10, ["h1"]),
        ("h1", 200, ["h2"]),
        ("h2", 200, ["h3"]),
        ("h3", 10, ["v"]),
        ("v", 10, ["w"]),
    ]:
        b.add_buffer(name, size, users=users)
    b.add_buffer("w", 10, live_out=True)
    b.original_order = list(range(8))
    return b.build()


def two_gaps_spec(d3, bw, streams):
    from cpsched.heuristics.remat import eviction_windows

    g = two_gaps(d3)
    order = g.default_order()
    tr = CeilTransfer(bw, streams)
    dur = np.array([[g.attrs(i)["duration"] for i in range(g.n_ops)]])
    tau = tr.times(g.sizes(static())).max(axis=0)
    ev = eviction_windows(g, order, np.ones(g.n_ops, dtype=bool), dur, tau, 6)
    assert sorted(ev) == [0, 1] and ev[0][0] == ev[1][0] == 2
    return make_spec(g, order, 410, ev=ev, transfer=tr), tr


@pytest.mark.parametrize("streams", [1, 2])
def test_copy_outs_run_first_in_first_out_and_frees_never_wait(streams):
    """Copies of 2 time units: ``a``'s copy-out runs over [3, 5), ``b``'s queues behind it
    over [5, 7). With ``h1`` taking 4 (step 4 starts at 7) both are done in time: the model
    frees both before step 4 and brings ``b`` back before step 5 (done at 11, read at step 7
    at 12) and ``a`` after it before step 6 (done at 13, read at step 6 at 11): 2 exposed
    (its own timeline; the replay, where the stall delays the rest, says no more). With
    ``h1`` taking 3, ``b``'s copy cannot be done by step 4 and the model, where no free waits
    for its copy, has no plan."""
    spec, tr = two_gaps_spec(4, 50, streams)
    st, obj, sk, active, _ = solve_model(spec)
    assert st == "OPTIMAL" and obj == 2
    peaks, added = check_decoded(spec, sk, active, tr)
    assert peaks[0] <= 410 and added[0] <= obj
    assert {c.buffer for c in sk.candidates} == {0, 1}
    spec, tr = two_gaps_spec(3, 50, streams)
    assert solve_model(spec)[0] == "INFEASIBLE"


def test_one_copy_stream_holds_each_copy_at_least_one_tick():
    """Copies of 1 time unit, ``h1`` taking 2: on one shared stream the two copy-outs run
    back to back over [3, 4) and [4, 5), done as step 4 starts."""
    spec, tr = two_gaps_spec(2, 100, 1)
    st, obj, sk, active, _ = solve_model(spec)
    assert st == "OPTIMAL"
    peaks, added = check_decoded(spec, sk, active, tr)
    assert peaks[0] <= 410 and added[0] <= obj


def two_scenarios(g, budget, *, regen, dom, ev=None, transfer=None):
    """Scenario ``a`` (every size times 0: nothing to do) then ``b`` (times 1), weights 1 and
    3: the model's optimum is 3 x ``b``'s alone, ``a`` adds nothing (a free eviction there may
    be on or off)."""
    sc = Scenarios(("a", "b"), ("s",), np.array([[0], [1]]), np.array([0.25, 0.75]))
    one = Scenarios(("b",), ("s",), np.array([[1]]), np.ones(1))
    kw = dict(regen=regen, dom=dom, ev=ev, transfer=transfer)
    want = least(
        brute_force(make_spec(g, g.default_order(), budget, sc=one, **kw), transfer, one), budget
    )
    assert want is not None and want > 0
    spec = make_spec(g, g.default_order(), [1, budget], sc=sc, weights=[1, 3], **kw)
    st, obj, sk, active, _ = solve_model(spec)
    assert st == "OPTIMAL" and obj == 3 * want
    peaks, added = check_decoded(spec, sk, active, transfer, sc)
    assert peaks[1] <= budget and added == [0.0, want]


@pytest.mark.parametrize("seed", [0, 3, 6])
def test_two_scenarios_clone_model_alone(seed):
    g0 = weighted_dag(6, seed)
    sizes = g0.sizes(static())[0]
    g = rebuild(g0, size=lambda j, sz: f"{int(sizes[j])}*s")
    order = g.default_order()
    pk = int(simulate(g0, order).peak[0])
    lb = int(min_memory_bound(g0, None, order)[0][0])
    budget = lb + (pk - lb) // 2
    regen, dom, _ = candidates(g0, budget)
    two_scenarios(g, budget, regen=regen, dom=dom)


def test_two_scenarios_eviction_model_alone():
    g0 = train_chain(3, 100, 1.0, fw_dur=lambda i: 2.0 + i)
    g = train_chain(3, sym="100*s", fw_dur=lambda i: 2.0 + i)
    tr = CeilTransfer(25, 1)
    budget = int(simulate(g0, g0.default_order()).peak[0]) - 100
    regen, dom, ev = candidates(g0, budget, tr)
    two_scenarios(g, budget, regen=regen, dom=dom, ev=ev, transfer=tr)


def joint_brute_force(g, orders, budget, dur, clon):
    """Least clone time over every order and every placement of at most one clone of each
    op of ``clon`` (clones of one step in the order of their ops' positions), or None."""
    n, best = g.n_ops, None
    for order in orders:
        pos = {v: t for t, v in enumerate(order)}
        for pick in itertools.product(*[[None, *range(pos[v] + 1, n)] for v in clon]):
            cands = tuple(Regen(v, t, pos[v]) for v, t in zip(clon, pick) if t is not None)
            try:
                events = materialize(g, Skeleton(tuple(order), cands))
            except PlanError:
                continue
            if replay(g, events, budget=budget).errors:
                continue
            cost = float(plan_time(g, events, dur).recompute[0])
            best = cost if best is None else min(best, cost)
    return best


@pytest.mark.parametrize("n,seed,skip_first", [(5, 10, False), (6, 2, False), (6, 2, True)])
def test_joint_model_alone_matches_brute_force(n, seed, skip_first):
    """Order and clones together (no order fixed), with transients and a program output
    that the last op reads again: the least clone time over every order and clone
    placement, and the decoded plan replays to it. ``skip_first``: op 0 is not a clone
    candidate, so clones read a buffer that has one copy and a variable retention end."""
    from helpers import all_topological_orders

    g = with_transients(n, seed, live_out_read=True)
    orders = list(all_topological_orders(g))
    assert all(o[-1] == n for o in orders)  # the reader of the program output is last
    best_peak = min(int(simulate(g, o).peak[0]) for o in orders)
    budget = max(int(min_memory_bound(g)[0][0]), best_peak - 1)
    dur = np.array([[g.attrs(i)["duration"] for i in range(g.n_ops)]])
    clon = [int(v) for v in np.flatnonzero(recomputable_ops(g)) if not (skip_first and v == 0)]
    want = joint_brute_force(g, orders, budget, dur, clon)
    assert want is not None and want > 0
    spec = make_spec(g, g.default_order(), budget, regen=clon)
    spec.order = None
    st, obj, sk, active, _ = solve_model(spec)
    assert st == "OPTIMAL" and obj == want
    peaks, added = check_decoded(spec, sk, active)
    assert peaks[0] <= budget and added[0] == want


def test_two_scenarios_peak_model_alone():
    """Peak objective, scenario ``a`` of zero sizes (weight 1) and ``b`` (weight 3): the
    optimum is 3 x ``b``'s least peak under the cap, ``a`` adds nothing."""
    g0 = with_transients(6, 0)
    sizes = g0.sizes(static())[0]
    trans = g0.transient_bytes(static())[0]
    g = rebuild(
        g0, size=lambda j, sz: f"{int(sizes[j])}*s", transient=lambda i: f"{int(trans[i])}*s"
    )
    sc = Scenarios(("a", "b"), ("s",), np.array([[0], [1]]), np.array([0.25, 0.75]))
    one = Scenarios(("b",), ("s",), np.array([[1]]), np.ones(1))
    regen, dom, _ = candidates(g0, int(simulate(g0, g0.default_order()).peak[0]) - 1)
    kw = dict(regen=regen, dom=dom, objective="peak")
    rows = brute_force(make_spec(g, g.default_order(), None, sc=one, **kw), None, one)
    cap = sorted({float(a[0]) for a, _ in rows})[1]
    want = min(int(p[0]) for a, p in rows if a[0] <= cap)
    spec = make_spec(
        g, g.default_order(), None, sc=sc, weights=[1, 3], overhead_cap=[0, int(cap)], **kw
    )
    st, obj, sk, active, _ = solve_model(spec)
    assert st == "OPTIMAL" and obj == 3 * want
    peaks, added = check_decoded(spec, sk, active, None, sc)
    assert peaks == [0, want] and added[1] <= cap


@pytest.mark.parametrize("bw", [100, 25])
def test_eviction_with_one_slot_per_step_prefetches_at_the_next_read(bw):
    """One slot per step (no clone slots): on this chain every plan under the budget brings
    the buffer back only before its next reader, whose slot is then the prefetched copy's
    only one."""
    g = train_chain(3, 100, 1.0, fw_dur=lambda i: 2.0 + i)
    tr = CeilTransfer(bw, 2)
    order = g.default_order()
    budget = int(simulate(g, order).peak[0]) - 100
    _, _, ev = candidates(g, budget, tr)
    spec = make_spec(g, order, budget, ev=ev, transfer=tr, G=1)
    assert_model_is_the_brute_force(spec, budget, tr)
    st, _, sk, _, _ = solve_model(spec)
    assert [c.in_step for c in sk.candidates] == [ev[0][1]]


def crossing():
    """``a`` (100 B) is off the device over ``h1`` (50 B transient) and back for ``v``; ``b``
    (100 B) is copied out after ``v`` and off over ``h3`` (320 B transient): under 410 B
    both must be. ``a``'s copy-in (before step 5, at 6) overlaps ``b``'s copy-out (issued
    at 7)."""
    b = GraphBuilder("crossing")
    for name, ins, d, tr in [
        ("a", [], 1, 0),
        ("b", [], 1, 0),
        ("u", ["a", "b"], 1, 0),
        ("f", ["u"], 2, 0),
        ("h1", ["f"], 1, 50),
        ("v", ["a", "h1", "b"], 1, 0),
        ("g", ["v"], 2, 0),
        ("h3", ["g"], 2, 320),
        ("w", ["b", "h3"], 1, 0),
    ]:
        b.add_op(name, "op", operands=ins, attrs={"duration": float(d)}, transient=tr)
    for name, size, users in [
        ("a", 100, ["u", "v"]),
        ("b", 100, ["u", "v", "w"]),
        ("u", 10, ["f"]),
        ("f", 10, ["h1"]),
        ("h1", 200, ["v"]),
        ("v", 10, ["g"]),
        ("g", 10, ["h3"]),
        ("h3", 10, ["w"]),
    ]:
        b.add_buffer(name, size, users=users)
    b.add_buffer("w", 10, live_out=True)
    b.original_order = list(range(9))
    return b.build()


@pytest.mark.parametrize("streams", [1, 2])
def test_one_shared_copy_stream_serializes_copy_in_and_copy_out(streams):
    """Copies of 2 time units. Two engines: ``a`` comes back over [6, 8) (2 exposed at
    step 5), ``b`` goes out over [7, 9), done as step 7 starts, and comes back before step 8
    (2 exposed): 4. One shared stream: ``b``'s copy-out waits for ``a``'s copy-in, is done
    at 10, after step 7 starts, so the model has no plan."""
    from cpsched.heuristics.remat import eviction_windows

    g = crossing()
    order = g.default_order()
    tr = CeilTransfer(50, streams)
    dur = np.array([[g.attrs(i)["duration"] for i in range(g.n_ops)]])
    tau = tr.times(g.sizes(static())).max(axis=0)
    ev = eviction_windows(g, order, np.ones(g.n_ops, dtype=bool), dur, tau, 6)
    assert ev[0][:2] == (2, 5) and ev[1][:2] == (5, 8)
    spec = make_spec(g, order, 410, ev=ev, transfer=tr)
    st, obj, sk, active, _ = solve_model(spec)
    if streams == 1:
        assert st == "INFEASIBLE"
        return
    assert st == "OPTIMAL" and obj == 4
    peaks, added = check_decoded(spec, sk, active, tr)
    assert peaks[0] <= 410 and added[0] <= obj


def test_joint_model_holds_an_unread_program_input_until_its_parameter_op():
    """A program input no op reads (as large as the budget) stays until its parameter op
    has run (so the plan says, and the replay checks): the joint model puts that op first,
    and its optimum is the brute force's (it used to free the input at once wherever the
    op ran, and its plan replayed over the budget)."""
    from helpers import all_topological_orders

    g0 = weighted_dag(5, 10)
    budget = min(int(simulate(g0, o).peak[0]) for o in all_topological_orders(g0)) - 1
    b = GraphBuilder("unread-input")
    for i in range(g0.n_ops):
        b.add_op(
            g0.op_names[i],
            "op",
            operands=[int(x) for x in g0.operands(i)],
            attrs={"duration": g0.attrs(i)["duration"]},
        )
    prm = b.add_op("p", "parameter", attrs={"duration": 0.0})
    b.add_buffer(prm, budget, live_in=True)
    for j in range(g0.n_buffers):
        b.add_buffer(
            int(g0.buffer_def[j]),
            g0.buffer_sizes[j],
            users=[int(u) for u in g0.buffer_users(j)],
            live_out=bool(g0.buffer_live_out[j]),
        )
    b.original_order = [prm, *range(g0.n_ops)]
    g = b.build()
    dur = np.array([[g.attrs(i)["duration"] for i in range(g.n_ops)]])
    clon = [int(v) for v in np.flatnonzero(recomputable_ops(g))]
    want = joint_brute_force(g, list(all_topological_orders(g)), budget, dur, clon)
    assert want is not None and want > 0
    spec = make_spec(g, g.default_order(), budget, regen=clon, G=2)
    spec.order = None
    st, obj, sk, active, _ = solve_model(spec)
    assert st == "OPTIMAL" and obj == want
    assert sk.order[0] == prm
    peaks, added = check_decoded(spec, sk, active)
    assert peaks[0] == budget and added[0] == want


@pytest.mark.parametrize("objective", ["time", "peak"])
def test_model_without_candidates_adds_nothing(objective):
    """No clone or eviction candidate and an order within the budget: the model's added time
    is 0 (time objective), and under a cap of 0 its least peak is the order's (peak)."""
    g = weighted_dag(6, 0)
    pk = int(simulate(g, g.default_order()).peak[0])
    if objective == "time":
        spec = make_spec(g, g.default_order(), pk)
    else:
        spec = make_spec(g, g.default_order(), None, objective="peak", overhead_cap=[0])
    st, obj, sk, active, _ = solve_model(spec)
    assert st == "OPTIMAL" and obj == (0 if objective == "time" else pk)
    assert sk.candidates == () and check_decoded(spec, sk, active) == ([pk], [0.0])
