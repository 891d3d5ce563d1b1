"""The whole memory model against an independent reference (``tests/oracle.py``).

Random graphs with parameters (donated or kept), results, host buffers, transients, forwarded
uses, control edges and async pairs, under several shape scenarios:

- the simulator (``cpsched.analysis.memory`` and ``cpsched.simulate``) reproduces the
  reference usage at every step of every order;
- the validator accepts exactly the orders the reference accepts, and checks a claimed peak
  in every scenario;
- the lower bounds never exceed any order's usage;
- the min-peak CP-SAT model alone (each memory formulation) proves the brute-force optimum on
  graphs where that is not trivial (orders differ and XLA's default scheduler misses the
  optimum), and its own peak variables equal the simulated peak of its order;
- the whole ``cp`` method reaches the brute-force optimum with an exact claimed peak.
"""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest

import cpsched
from cpsched.analysis.memory import live_ranges, lower_bound, op_lower_bounds, simulate
from cpsched.analysis.schedule import OPTIMAL, Schedule
from cpsched.analysis.validate import validate_order, validate_schedule
from cpsched.core.errors import ScheduleError
from cpsched.core.graph import GraphBuilder, OpKind
from cpsched.methods import get as get_method

from oracle import fanout_spec, rich_spec, scenarios

S_VALUES = (1, 4, 16)


# -- simulator --------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(40))
def test_simulator_matches_reference_at_every_step(seed):
    spec = rich_spec(seed, 5)
    g = spec.build()
    sc = scenarios(S_VALUES)
    orders = spec.orders(limit=60)
    ref = spec.usage(orders, S_VALUES)
    for k, order in enumerate(orders):
        prof = simulate(g, order, sc)
        assert np.array_equal(prof.usage, ref[k]), (order, prof.usage, ref[k])
        assert np.array_equal(prof.peak, ref[k].max(axis=1))
    # the public entry point agrees (names and indices)
    r = cpsched.simulate(g, [g.op_names[v] for v in orders[-1]], scenarios=sc)
    assert [r.peak[n] for n in sc.names] == [int(x) for x in ref[-1].max(axis=1)]


def test_the_generator_covers_every_feature():
    """The seeds above exercise what the reference is there to check (else it is vacuous)."""
    specs = [rich_spec(seed, 5) for seed in range(40)]
    bufs = [b for sp in specs for b in sp.bufs]
    ops = [o for sp in specs for o in sp.ops]
    assert sum(b.live_in and not b.live_out for b in bufs) >= 10     # donated parameters
    assert sum(b.live_in and b.live_out for b in bufs) >= 10         # kept parameters
    assert sum(b.space != 0 for b in bufs) >= 10                     # host buffers
    assert sum(b.live_out and not b.live_in for b in bufs) >= 40     # results
    assert sum(o.transient != (0, 0) for o in ops) >= 20
    assert sum(o.async_start is not None for o in ops) >= 10
    assert sum(bool(o.control) for o in ops) >= 10
    assert sum(b.a > 0 for b in bufs) >= 40                          # symbolic sizes
    # parameters are not always first: a late parameter must still count from step 0
    late = 0
    for sp in specs:
        for o in sp.orders(limit=60):
            late += any(sp.ops[v].kind == OpKind.PARAMETER for v in o[2:])
    assert late >= 100


@pytest.mark.parametrize("seed", range(12))
def test_live_ranges_match_reference(seed):
    spec = rich_spec(100 + seed, 5)
    g = spec.build()
    for order in spec.orders(limit=20):
        start, end = live_ranges(g, order)
        pos = {v: t for t, v in enumerate(order)}
        for k, b in enumerate(spec.bufs):
            want_start = 0 if b.live_in else pos[b.op]
            want_end = len(order) - 1 if b.live_out else max([pos[b.op]] + [pos[u] for u in b.users])
            assert (int(start[k]), int(end[k])) == (want_start, want_end), (k, b)


def test_live_in_parameter_counts_from_step_zero():
    """A parameter placed last is still resident from the first step (and to the end when
    not donated); a donated one is freed after its last user."""
    for donated, want in ((False, [1000 + 1, 1000 + 1 + 2, 1000 + 2 + 4]),
                          (True, [1000 + 1, 1000 + 1 + 2, 1000 + 2 + 4])):
        b = GraphBuilder("late-param")
        b.add_op("a", "op")
        b.add_op("b", "op", operands=["a"])
        b.add_op("p", "parameter", kind=OpKind.PARAMETER)
        b.add_op("c", "op", operands=["b", "p"])
        b.add_buffer("a", 1, users=["b"])
        b.add_buffer("b", 2, users=["c"])
        b.add_buffer("p", 1000, users=["c"], live_in=True, live_out=not donated)
        b.add_buffer("c", 4, live_out=True)
        g = b.build()
        order = [0, 1, 2, 3]
        usage = simulate(g, order).usage[0]
        assert usage.tolist() == [want[0], want[1], 1000 + 2, want[2]]
        assert int(cpsched.simulate(g, order).peak["static"]) == max(want)


def test_buffer_is_freed_after_its_last_use_not_at_it():
    """Chain a(10) -> b(20) -> c(30): b reads a while writing its own output, so both are
    live at b's step; a is gone at c's step."""
    b = GraphBuilder("chain")
    b.add_op("a", "op")
    b.add_op("b", "op", operands=["a"])
    b.add_op("c", "op", operands=["b"])
    b.add_buffer("a", 10, users=["b"])
    b.add_buffer("b", 20, users=["c"])
    b.add_buffer("c", 30, live_out=True)
    g = b.build()
    assert simulate(g, [0, 1, 2]).usage[0].tolist() == [10, 30, 50]
    assert cpsched.simulate(g).peak == {"static": 50}


def test_host_buffers_and_transients_by_hand():
    b = GraphBuilder("host")
    b.add_op("a", "op", transient=7)
    b.add_op("b", "op", operands=["a"], transient="2*s")
    b.add_buffer("a", "3*s", users=["b"], space=5)       # on the host: no device bytes
    b.add_buffer("a", 5, users=["b"])
    b.add_buffer("b", 1, live_out=True)
    g = b.build()
    sc = scenarios([1, 10])
    assert simulate(g, [0, 1], sc).usage.tolist() == [[5 + 7, 5 + 1 + 2], [5 + 7, 5 + 1 + 20]]


# -- lower bounds ---------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(15))
def test_lower_bounds_hold_for_every_order(seed):
    spec = rich_spec(200 + seed, 5)
    g = spec.build()
    sc = scenarios(S_VALUES)
    orders = spec.orders(limit=500)
    use = spec.usage(orders, S_VALUES)                       # [K, S, n]
    per_op = op_lower_bounds(g, sc)                          # [S, n_ops]
    for k, order in enumerate(orders):
        # the bytes forced live at op v are there whenever v runs
        assert (per_op[:, order] <= use[k]).all()
    assert (lower_bound(g, sc) <= use.max(axis=2).min(axis=0)).all()


# -- validator ------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(20))
def test_validator_accepts_exactly_the_reference_orders(seed):
    spec = rich_spec(300 + seed, 5)
    g = spec.build()
    rng = random.Random(seed)
    accepted = rejected = 0
    for _ in range(150):
        order = list(range(spec.n))
        rng.shuffle(order)
        try:
            validate_order(g, order)
            ok = True
        except ScheduleError:
            ok = False
        assert ok == spec.respects(order), order
        accepted += ok
        rejected += not ok
    for order in spec.orders(limit=30):
        validate_order(g, order)
        accepted += 1
    assert rejected > 0 and accepted > 0


def _edge_graph(kind: str):
    """Two ops whose only ordering reason is one edge of ``kind``."""
    b = GraphBuilder(f"only-{kind}")
    if kind == "control":
        b.add_op("x", "op")
        b.add_op("y", "op", control_preds=["x"])
        b.add_buffer("x", 1)
        b.add_buffer("y", 1)
    elif kind == "buffer":
        # y reads x's buffer through a forwarding op that is not its data operand
        b.add_op("x", "op")
        b.add_op("y", "op")
        b.add_buffer("x", 1, users=["y"])
    elif kind == "async":
        b.add_op("x", "all-gather-start", kind=OpKind.ASYNC_START)
        b.add_op("y", "all-gather-done", kind=OpKind.ASYNC_DONE)
        b.pair_async("x", "y")
    elif kind == "data":
        b.add_op("x", "op")
        b.add_op("y", "op", operands=["x"])
    return b.build()


@pytest.mark.parametrize("kind", ["data", "control", "buffer", "async"])
def test_validator_enforces_each_kind_of_edge(kind):
    g = _edge_graph(kind)
    validate_order(g, [0, 1])
    with pytest.raises(ScheduleError):
        validate_order(g, [1, 0])
    with pytest.raises(ScheduleError):
        cpsched.simulate(g, ["y", "x"])


@pytest.mark.parametrize("kind", ["control", "buffer", "async"])
def test_every_method_respects_each_kind_of_edge(kind):
    """Heuristics built from the same graph must not put y before x; the validator is the
    net that catches it if one did (``cpsched.schedule`` validates every order)."""
    g = _edge_graph(kind)
    for name in ("xla-default", "xla-list", "xla-dfs", "cp"):
        r = cpsched.schedule(g, name, time_limit=2)
        assert r.order == (0, 1)


def _two_scenario_graph():
    spec = rich_spec(7, 6, p_edge=0.25)
    return spec, spec.build(), scenarios((2, 8))


@pytest.mark.parametrize("wrong", [0, 1, 2])
def test_claimed_peak_is_checked_in_every_scenario(wrong):
    spec, g, _ = _two_scenario_graph()
    sc = scenarios((2, 8, 32))
    order = spec.orders(limit=1)[0]
    true = [int(x) for x in spec.peaks([order], (2, 8, 32))[0]]
    assert validate_schedule(g, order, sc, true).tolist() == true
    assert validate_schedule(g, order, sc, dict(zip(sc.names, true))).tolist() == true
    lie = list(true)
    lie[wrong] -= 1
    with pytest.raises(ScheduleError, match=sc.names[wrong].replace("=", "=")):
        validate_schedule(g, order, sc, lie)
    with pytest.raises(ScheduleError):
        validate_schedule(g, order, sc, dict(zip(sc.names, lie)))


def test_a_solver_lying_about_a_later_scenario_is_caught_end_to_end(monkeypatch):
    """``cpsched.schedule`` re-simulates what a solver claims, in every scenario."""
    import importlib
    registry = importlib.import_module("cpsched.methods")
    spec, g, sc = _two_scenario_graph()
    order = spec.orders(limit=1)[0]
    true = spec.peaks([order], (2, 8))[0]

    def liar(graph, scen, **_):
        pk = np.array(true, dtype=np.int64)
        pk[-1] -= 1
        return Schedule(graph, tuple(order), "liar", scen, pk, pk, status=OPTIMAL)

    def honest(graph, scen, **_):
        pk = np.array(true, dtype=np.int64)
        return Schedule(graph, tuple(order), "honest", scen, pk, pk, status=OPTIMAL)

    registry.load_all()
    monkeypatch.setitem(registry._REGISTRY, "test-liar",
                        registry.Method("test-liar", liar, "lies", "solver"))
    monkeypatch.setitem(registry._REGISTRY, "test-honest",
                        registry.Method("test-honest", honest, "honest", "solver"))
    r = cpsched.schedule(g, "test-honest", scenarios=sc)
    assert [r.peak[n] for n in sc.names] == [int(x) for x in true]
    with pytest.raises(ScheduleError, match="s=8"):
        cpsched.schedule(g, "test-liar", scenarios=sc)


# -- min-peak CP against brute force ------------------------------------------------------------

BF_S = (2, 8)
MIN_NONTRIVIAL = 12


@functools.lru_cache(maxsize=None)
def nontrivial_cases(n_seeds: int = 80, max_orders: int = 3000):
    """Seeds whose orders do not all tie and where XLA's default scheduler is not optimal
    (weighted over ``BF_S``), with every order's peaks."""
    sc = scenarios(BF_S)
    xla = get_method("xla-default").fn
    out = []
    for seed in range(n_seeds):
        spec = rich_spec(seed, 6, p_edge=0.25)
        orders = spec.orders(limit=max_orders + 1)
        if len(orders) > max_orders:
            continue
        peaks = spec.peaks(orders, BF_S)                   # [K, S]
        w = peaks.mean(axis=1)
        if w.min() == w.max():
            continue
        g = spec.build()
        if spec.peaks([xla(g, sc)], BF_S)[0].mean() == w.min():
            continue
        out.append((seed, spec, peaks))
    return out


def test_enough_nontrivial_brute_force_cases():
    cases = nontrivial_cases()
    assert len(cases) >= MIN_NONTRIVIAL
    # some optimum needs more than one scenario to be seen: its orders rank differently
    assert any(len({int(np.argmin(p[:, s])) for s in range(len(BF_S))}) > 1 or
               not np.array_equal(np.argsort(p[:, 0], kind="stable"),
                                  np.argsort(p[:, 1], kind="stable"))
               for _, _, p in cases)


@functools.lru_cache(maxsize=None)
def _model_alone(seed: int, memory: str):
    from cpsched.cp.memory.solve import ModelOptions, ObjectiveSpec, build
    from cpsched.cp.memory.solve import run
    from cpsched.cp.runtime import SolverConfig
    from cpsched.cp.memory.problem import from_graph
    from cpsched.cp.memory.scaling import make_scale
    spec = rich_spec(seed, 6, p_edge=0.25)
    g = spec.build()
    sc = scenarios(BF_S)
    p = from_graph(g, sc)
    scale = make_scale(p)
    built = build(p, ObjectiveSpec("weighted", weights=np.ones(len(BF_S))),
                  ModelOptions(memory=memory), scale=scale)
    r = run(built, SolverConfig(time_limit=5, workers=2, seed=0))
    claimed = None
    if r.peaks_units is not None:
        assert scale.exact.all()
        claimed = [int(u) * int(unit) for u, unit in zip(r.peaks_units, scale.unit)]
    return spec, r, claimed


def _case_ids():
    return [seed for seed, _, _ in nontrivial_cases()][:MIN_NONTRIVIAL]


@pytest.mark.parametrize("memory", ["cumulative", "per-op"])
def test_cp_model_alone_proves_the_brute_force_optimum(memory):
    misses = []
    for seed, spec, peaks in nontrivial_cases()[:MIN_NONTRIVIAL]:
        _, r, _ = _model_alone(seed, memory)
        assert r.status == "OPTIMAL", seed
        got = spec.peaks([r.order], BF_S)[0].sum()
        if got != peaks.sum(axis=1).min():
            misses.append((seed, int(got), int(peaks.sum(axis=1).min())))
    assert not misses


@pytest.mark.parametrize("memory", ["cumulative", "per-op"])
def test_cp_model_peak_variables_equal_the_simulated_peak(memory):
    """The model's own peak per scenario is the true peak of the order it returns: a model
    that under- or over-counts some buffer or transient shows up here even when the order
    happens to be optimal."""
    wrong = []
    for seed, spec, _ in nontrivial_cases()[:MIN_NONTRIVIAL]:
        _, r, claimed = _model_alone(seed, memory)
        true = [int(x) for x in spec.peaks([r.order], BF_S)[0]]
        if claimed != true:
            wrong.append((seed, claimed, true))
    assert not wrong


@pytest.mark.parametrize("k", range(MIN_NONTRIVIAL))
def test_cp_method_reaches_the_brute_force_optimum(k):
    seed, spec, peaks = nontrivial_cases()[k]
    g = spec.build()
    sc = scenarios(BF_S)
    r = cpsched.schedule(g, "cp", scenarios=sc, time_limit=3, deterministic=True)
    best = peaks.mean(axis=1).min()
    got = spec.peaks([list(r.order)], BF_S)[0]
    assert [r.peak[n] for n in sc.names] == [int(x) for x in got]
    assert got.mean() == best
    assert r.status == OPTIMAL
    xla = cpsched.schedule(g, "xla-default", scenarios=sc)
    assert np.mean([xla.peak[n] for n in sc.names]) > best      # the case is not trivial


@pytest.mark.parametrize("k", range(0, MIN_NONTRIVIAL, 2))
def test_cp_sat_alone_in_the_pipeline_is_optimal(k):
    """``solve`` with search, windows, bounds and heuristics off: only the CP-SAT model can
    prove the optimum, and an OPTIMAL claim must be true."""
    from cpsched.strategies.min_peak.method import solve
    seed, spec, peaks = nontrivial_cases()[k]
    g = spec.build()
    sc = scenarios(BF_S)
    s = solve(g, sc, time_limit=5, heuristics=False, search=False, windows=False,
              bounds=False, decompose=False)
    got = spec.peaks([list(s.order)], BF_S)[0]
    assert s.status == OPTIMAL
    assert got.mean() == peaks.mean(axis=1).min()
    assert [int(x) for x in s.peak_bytes] == [int(x) for x in got]


@pytest.mark.parametrize("seed", range(8))
def test_single_scenario_cp_with_live_in_and_host_buffers(seed):
    """One scenario, graphs with two parameters and host buffers: ``cp`` proves the
    brute-force optimum and its bound never exceeds it."""
    spec = rich_spec(500 + seed, 5, params=2, p_edge=0.3)
    orders = spec.orders(limit=4000)
    peaks = spec.peaks(orders, (3,))[:, 0]
    g = spec.build()
    r = cpsched.schedule(g, "cp", scenarios=scenarios((3,)), time_limit=3, deterministic=True)
    assert r.status == OPTIMAL
    assert r.peak["s=3"] == int(peaks.min()) == r.bound["s=3"]


@pytest.mark.parametrize("memory", ["cumulative", "per-op"])
def test_cp_model_with_the_order_fixed_evaluates_it_exactly(memory):
    """Pin the model's positions to one order at a time: its least peak must then be that
    order's simulated peak, in every scenario (a model that under- or over-counts a buffer
    live across some op, or an op's transient, fails on the order that exposes it, optimal
    or not)."""
    from cpsched.cp.memory.solve import ModelOptions, ObjectiveSpec, build
    from cpsched.cp.memory.solve import run
    from cpsched.cp.runtime import SolverConfig
    from cpsched.cp.memory.problem import from_graph
    from cpsched.cp.memory.scaling import make_scale
    checked, wrong = 0, []
    specs = [rich_spec(700 + seed, 5, p_edge=0.25) for seed in range(8)]
    specs += [fanout_spec(seed) for seed in range(6)]
    for seed, spec in enumerate(specs):
        g = spec.build()
        sc = scenarios(BF_S)
        p = from_graph(g, sc)
        orders = spec.orders(limit=400)
        for order in random.Random(seed).sample(orders, min(8, len(orders))):
            scale = make_scale(p)
            built = build(p, ObjectiveSpec("weighted", weights=np.ones(len(BF_S))),
                          ModelOptions(memory=memory, symmetry=False), scale=scale)
            for t, v in enumerate(order):
                built.vars.model.add(built.vars.pos[v] == t)
            r = run(built, SolverConfig(time_limit=2, workers=1, seed=0))
            assert r.status == "OPTIMAL", (seed, order)
            got = [int(u) * int(unit) for u, unit in zip(r.peaks_units, scale.unit)]
            true = [int(x) for x in spec.peaks([order], BF_S)[0]]
            checked += 1
            if got != true:
                wrong.append((seed, order, got, true))
    assert checked >= 90 and not wrong, wrong[:3]


@pytest.mark.parametrize("memory", ["cumulative", "per-op"])
@pytest.mark.parametrize("seed", range(4))
def test_cp_model_alone_on_fan_out_graphs(memory, seed):
    """Fan-out graphs (one big buffer, three unordered readers, side ops that can run between
    them): the model's optimum is the brute-force one and its peak variables are exact."""
    from cpsched.cp.memory.solve import ModelOptions, ObjectiveSpec, build
    from cpsched.cp.memory.solve import run
    from cpsched.cp.runtime import SolverConfig
    from cpsched.cp.memory.problem import from_graph
    from cpsched.cp.memory.scaling import make_scale
    spec = fanout_spec(100 + seed)
    peaks = spec.peaks(spec.orders(), BF_S)
    assert peaks.sum(axis=1).min() < peaks.sum(axis=1).max()
    g = spec.build()
    p = from_graph(g, scenarios(BF_S))
    scale = make_scale(p)
    built = build(p, ObjectiveSpec("weighted", weights=np.ones(len(BF_S))),
                  ModelOptions(memory=memory), scale=scale)
    r = run(built, SolverConfig(time_limit=5, workers=2, seed=0))
    assert r.status == "OPTIMAL"
    got = spec.peaks([r.order], BF_S)[0]
    assert got.sum() == peaks.sum(axis=1).min()
    assert [int(u) * int(unit) for u, unit in zip(r.peaks_units, scale.unit)] == \
        [int(x) for x in got]
