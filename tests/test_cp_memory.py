"""CP-SAT / exact-search minimum-peak ordering: exactness, objectives, budgets, determinism."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from cpsched.cp.memory import constraints as C
from cpsched.cp.memory.solve import ModelOptions, ObjectiveSpec, build
from cpsched.cp.memory.solve import run
from cpsched.cp.runtime import SolverConfig
from cpsched.strategies.min_peak.decompose import cut_points, segments
from cpsched.cp.memory.naive import solve_naive
from cpsched.cp.memory.problem import from_graph, induced, project, window
from cpsched.strategies.min_peak.exact import beam, best_first
from cpsched.strategies.min_peak.method import solve
from cpsched.core.graph import GraphBuilder
from helpers import orders_from_preds
from cpsched.analysis.memory import lower_bound, op_lower_bounds, peak
from cpsched.core.scenarios import Scenarios, static
from cpsched.analysis.schedule import FALLBACK, FEASIBLE, INFEASIBLE, OPTIMAL

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
MOCCASIN = SHARED / "peer-cases" / "moccasin"


# -- helpers --------------------------------------------------------------------------------

def random_graph(seed: int, n: int, p_edge: float = 0.35, symbolic: bool = False,
                 transient: bool = True):
    rng = random.Random(seed)
    b = GraphBuilder(f"rand{seed}")
    names = [f"v{i}" for i in range(n)]
    preds = {i: [j for j in range(i) if rng.random() < p_edge] for i in range(n)}
    for i in range(n):
        t = rng.choice([0, 0, 0, 1, 2]) if transient else 0
        b.add_op(names[i], "op", operands=[names[j] for j in preds[i]],
                 transient=(f"{t}*s" if symbolic and t else t))
    for i in range(n):
        users = [names[k] for k in range(n) if i in preds[k]]
        if symbolic:
            size = f"{rng.randint(0, 3)}*s + {rng.randint(1, 6)}"
        else:
            size = rng.randint(1, 8)
        live_out = not users and rng.random() < 0.5
        live_in = i == 0 and rng.random() < 0.3
        b.add_buffer(names[i], size, users=users, live_out=live_out, live_in=live_in)
        if rng.random() < 0.25 and i + 2 < n:
            # a second, longer-lived buffer with a far user
            far = rng.randint(i + 1, n - 1)
            if i not in preds[far]:
                b.add_operand(far, names[i])
            b.add_buffer(names[i], rng.randint(1, 5), users=[names[far]])
    return b.build()


def topo_orders(graph, limit: int = 50_000):
    return list(orders_from_preds([graph.preds(v) for v in range(graph.n_ops)], limit))


def brute_force(graph, scenarios):
    orders = topo_orders(graph)
    peaks = np.array([peak(graph, o, scenarios) for o in orders])   # [K, S]
    return orders, peaks


def xla_counterexample():
    """XLA hlo_memory_scheduler.h: A->B, B=>C, C->G, A->D, A->E, D->F, E->F, F=>G (thin
    edges 1 byte, thick 2). List scheduling reaches 6; A B C D E F G reaches 5."""
    b = GraphBuilder("xla-counterexample")
    for name, ops in [("A", []), ("B", ["A"]), ("C", ["B"]), ("D", ["A"]), ("E", ["A"]),
                      ("F", ["D", "E"]), ("G", ["C", "F"])]:
        b.add_op(name, "op", operands=ops)
    for name, size, users in [("A", 1, "BDE"), ("B", 2, "C"), ("C", 1, "G"), ("D", 1, "F"),
                              ("E", 1, "F"), ("F", 2, "G"), ("G", 1, "")]:
        b.add_buffer(name, size, users=list(users), live_out=(name == "G"))
    return b.build()


def two_scenarios(weights=(0.5, 0.5)):
    return Scenarios(("s=1", "s=6"), ("s",), np.array([[1], [6]]), np.asarray(weights))


# -- the problem layer reproduces the simulator ---------------------------------------------

@pytest.mark.parametrize("seed", range(6))
def test_problem_matches_simulator(seed):
    g = random_graph(seed, 9, symbolic=True)
    sc = two_scenarios()
    p = from_graph(g, sc)
    for o in topo_orders(g, limit=20):
        assert np.array_equal(p.peak(o), peak(g, o, sc))
    # forced-live bound equals the core one
    assert np.array_equal(p.op_lower_bounds, op_lower_bounds(g, sc))
    assert (p.lower_bound >= lower_bound(g, sc)).all()


@pytest.mark.parametrize("seed", range(10))
def test_relaxations_are_lower_bounds(seed):
    g = random_graph(100 + seed, 9)
    p = from_graph(g, static())
    orders, peaks = brute_force(g, static())
    opt = int(peaks.min())
    ref = orders[int(peaks.argmin())]
    for subset in (ref[2:7], ref[:5], ref[4:]):
        for rel in (induced(p, subset), project(p, subset, ref)):
            r = best_first(rel, time_limit=5)
            assert r.proven and r.cost <= opt
    # a window of an order, re-optimised, keeps the rest and never beats the optimum
    w = window(p, ref, 2, 7)
    r = best_first(w, time_limit=5)
    assert r.cost <= p.peak(ref)[0]


@pytest.mark.parametrize("seed", range(10))
def test_projection_with_early_buffers_is_pointwise_below_every_order(seed):
    """``project(..., early=True)`` (a buffer whose producer precedes the whole subset is live
    from the relaxation's first step): for every full order, the order it induces on the
    subset holds no more bytes at any step than the same op's step in the full order; so its
    optimum never exceeds the brute-force optimum, and it is never below the relaxation
    without early buffers."""
    g = random_graph(200 + seed, 9, p_edge=0.5)
    p = from_graph(g, static())
    orders, peaks = brute_force(g, static())
    opt = int(peaks.min())
    rng = random.Random(seed)
    fired = 0
    for ref in (orders[int(peaks.argmin())], orders[int(peaks.argmax())]):
        subsets = [ref[3:8], ref[4:], ref[5:9]] + [
            sorted(rng.sample(range(g.n_ops), 4)) for _ in range(3)
        ]
        for subset in subsets:
            rel = project(p, subset, ref, early=True)
            plain = project(p, subset, ref, early=False)
            fired += int((rel.buf_def < 0).sum() > (plain.buf_def < 0).sum())
            ops = [int(v) for v in rel.ops]
            local = {v: i for i, v in enumerate(ops)}
            for o in orders:
                full_use = p.usage(o)[0]
                sub_order = [local[v] for v in o if v in local]
                rel_use = rel.usage(sub_order)[0]
                step_of = {v: t for t, v in enumerate(o)}
                for t, lv in enumerate(sub_order):
                    assert rel_use[t] <= full_use[step_of[ops[lv]]]
            r, r0 = best_first(rel, time_limit=5), best_first(plain, time_limit=5)
            assert r.proven and r0.proven
            assert r0.cost <= r.cost <= opt
    assert fired  # the early rule changed some relaxation


# -- exactness against brute force ------------------------------------------------------------

@pytest.mark.parametrize("seed", range(12))
def test_single_scenario_optimum_equals_brute_force(seed):
    g = random_graph(seed, 5 + seed % 5)
    _, peaks = brute_force(g, static())
    s = solve(g, time_limit=5, heuristics=False)
    assert s.status == OPTIMAL
    assert int(s.peak_bytes[0]) == int(peaks.min())
    assert int(s.lower_bound_bytes[0]) == int(peaks.min())


@pytest.mark.parametrize("memory", ["cumulative", "per-op", "both"])
@pytest.mark.parametrize("seed", range(6))
def test_cp_models_alone_are_exact(seed, memory):
    """The CP-SAT model by itself (no search, no decomposition) proves the optimum."""
    g = random_graph(200 + seed, 6 + seed % 4, symbolic=False)
    _, peaks = brute_force(g, static())
    p = from_graph(g, static())
    built = build(p, ObjectiveSpec("weighted", weights=np.ones(1)),
                  ModelOptions(memory=memory, precedence="closure" if seed % 2 else "distance"),
                  hint=g.default_order())
    r = run(built, SolverConfig(time_limit=10, workers=2, seed=0))
    assert r.status == "OPTIMAL"
    assert int(peak(g, r.order)[0]) == int(peaks.min())


@pytest.mark.parametrize("seed", range(4))
def test_naive_model_is_exact_on_tiny_graphs(seed):
    g = random_graph(300 + seed, 7, transient=False)
    _, peaks = brute_force(g, static())
    r = solve_naive(g, cfg=SolverConfig(time_limit=10))
    assert r["status"] == "OPTIMAL" and int(peak(g, r["order"])[0]) == int(peaks.min())


@pytest.mark.parametrize("seed", range(6))
def test_weighted_multi_scenario_equals_brute_force(seed):
    g = random_graph(400 + seed, 5 + seed % 4, symbolic=True)
    sc = two_scenarios((0.3, 0.7))
    _, peaks = brute_force(g, sc)
    best = float((peaks @ sc.weights).min())
    s = solve(g, sc, objective="weighted", time_limit=10, heuristics=False)
    assert s.status == OPTIMAL
    assert float(s.peak_bytes @ sc.weights) == pytest.approx(best)


@pytest.mark.parametrize("seed", range(6))
def test_minimax_equals_brute_force(seed):
    g = random_graph(500 + seed, 5 + seed % 4, symbolic=True)
    sc = two_scenarios()
    _, peaks = brute_force(g, sc)
    lb = np.maximum(lower_bound(g, sc), 1)
    best = float((peaks / lb).max(axis=1).min())
    s = solve(g, sc, objective="minimax", time_limit=10, heuristics=False)
    assert s.status == OPTIMAL
    assert float((s.peak_bytes / lb).max()) == pytest.approx(best, rel=2e-4)


@pytest.mark.parametrize("seed", range(6))
def test_lexicographic_equals_brute_force(seed):
    g = random_graph(600 + seed, 5 + seed % 4, symbolic=True)
    sc = two_scenarios()
    _, peaks = brute_force(g, sc)
    lex = np.argsort(-lower_bound(g, sc), kind="stable")
    best = min(tuple(int(x) for x in row[lex]) for row in peaks)
    s = solve(g, sc, objective="lexicographic", time_limit=10, heuristics=False)
    assert s.status == OPTIMAL
    assert tuple(int(x) for x in s.peak_bytes[lex]) == best


# -- the XLA counterexample -----------------------------------------------------------------

def test_xla_counterexample():
    g = xla_counterexample()
    idx = {n: i for i, n in enumerate(g.op_names)}
    assert int(peak(g, [idx[c] for c in "ADEBFCG"])[0]) == 6
    assert int(peak(g, [idx[c] for c in "ABCDEFG"])[0]) == 5
    s = solve(g, time_limit=5)
    assert s.status == OPTIMAL
    assert int(s.peak_bytes[0]) == 5
    # and with the CP-SAT model alone
    s2 = solve(g, time_limit=5, heuristics=False, search=False, decompose=False,
               hint=[idx[c] for c in "ADEBFCG"])
    assert s2.status == OPTIMAL and int(s2.peak_bytes[0]) == 5


# -- budget mode ------------------------------------------------------------------------------

def test_budget_infeasible_reports_proven_minimum():
    g = xla_counterexample()
    s = solve(g, budget=4, time_limit=5)
    assert s.status == INFEASIBLE
    assert int(s.peak_bytes[0]) == 5 and int(s.lower_bound_bytes[0]) == 5
    assert "cannot be met" in s.info["message"]


def test_budget_feasible():
    g = xla_counterexample()
    s = solve(g, budget=5, time_limit=5)
    assert s.status == OPTIMAL and int(s.peak_bytes[0]) <= 5


def test_budget_multi_scenario():
    g = random_graph(700, 8, symbolic=True)
    sc = two_scenarios()
    _, peaks = brute_force(g, sc)
    lo = peaks.min(axis=0)
    tight = {"s=1": int(lo[0]) - 1, "s=6": int(lo[1]) + 100}
    s = solve(g, sc, budget=tight, time_limit=5, heuristics=False)
    assert s.status == INFEASIBLE
    # a budget some order meets
    ok = peaks[int((peaks / np.maximum(peaks.min(axis=0), 1)).max(axis=1).argmin())]
    s2 = solve(g, sc, budget=[int(ok[0]), int(ok[1])], time_limit=5, heuristics=False)
    assert s2.status in (OPTIMAL, FEASIBLE)
    assert (s2.peak_bytes <= ok).all()


# -- warm start, fallback, determinism, decomposition ------------------------------------------

def layered_graph(seed: int, layers: int = 8, width: int = 6):
    rng = random.Random(seed)
    b = GraphBuilder(f"layered{seed}")
    prev: list[str] = []
    k = 0
    allnodes = []
    for L in range(layers):
        cur = []
        for _ in range(rng.randint(2, width)):
            name = f"n{k}"
            k += 1
            ops = rng.sample(prev, min(len(prev), rng.randint(1, 3))) if prev else []
            if allnodes and rng.random() < 0.2:
                far = rng.choice(allnodes)
                if far not in ops:
                    ops.append(far)
            b.add_op(name, "op", operands=ops)
            cur.append(name)
        allnodes.extend(prev)
        prev = cur
    names = b._names
    users = {n: [] for n in names}
    for i, n in enumerate(names):
        for o in b._operands[i]:
            users[names[o]].append(n)
    for n in names:
        b.add_buffer(n, rng.randint(1, 50) * 10, users=users[n], live_out=not users[n])
    return b.build()


def test_never_worse_than_hint_and_fallback_message():
    g = layered_graph(1, layers=14, width=9)
    hint_order = g.default_order()
    s = solve(g, time_limit=0.5, hint=hint_order, search=False, cpsat=False, windows=False,
              bounds=False, heuristics=False)
    assert s.peak_bytes[0] <= peak(g, hint_order)[0]
    for name, pk in s.info["baselines"].items():
        assert s.peak_bytes[0] <= pk[0]
    if s.status == FALLBACK:
        assert "nothing better" in s.info["message"]
    s2 = solve(g, time_limit=3)
    assert all(s2.peak_bytes[0] <= pk[0] for pk in s2.info["baselines"].values())


def test_cpsat_window_engine():
    g = layered_graph(6, layers=10, width=7)
    s = solve(g, time_limit=3, search=False, cpsat=False, bounds=False,
              window_engine="cpsat")
    assert all(s.peak_bytes[0] <= pk[0] for pk in s.info["baselines"].values())
    assert any(p["phase"] == "window" for p in s.info["phases"])


def test_deterministic_mode_is_byte_identical():
    g = layered_graph(5, layers=16, width=8)
    # search off so that windows, CP-SAT and the bounds all run
    runs = [solve(g, time_limit=1.0, deterministic=True, seed=3, search=False)
            for _ in range(2)]
    assert [p["phase"] for p in runs[0].info["phases"]][:3] == ["heuristics", "window", "cp-sat"]
    assert runs[0].order == runs[1].order
    assert np.array_equal(runs[0].peak_bytes, runs[1].peak_bytes)
    full = [solve(g, time_limit=0.5, deterministic=True, seed=3) for _ in range(2)]
    assert full[0].order == full[1].order


@pytest.mark.parametrize("seed", range(4))
def test_rounded_scaling_stays_sound(seed):
    """Sizes too large for exact units: the model rounds up; claims must stay true."""
    rng = random.Random(seed)
    g0 = random_graph(900 + seed, 8, transient=False)
    b = GraphBuilder("huge")
    for v in range(g0.n_ops):
        b.add_op(g0.op_names[v], "op", operands=[g0.op_names[u] for u in g0.operands(v)])
    for j in range(g0.n_buffers):
        b.add_buffer(int(g0.buffer_def[j]), rng.randint(10**12, 10**13) | 1,
                     users=[int(u) for u in g0.buffer_users(j)],
                     live_out=bool(g0.buffer_live_out[j]))
    g = b.build()
    from cpsched.cp.memory.scaling import make_scale
    assert not make_scale(from_graph(g, static())).exact.all()
    _, peaks = brute_force(g, static())
    opt = int(peaks.min())
    s = solve(g, time_limit=5, heuristics=False, search=False, decompose=False)
    assert int(s.lower_bound_bytes[0]) <= opt
    if s.status == OPTIMAL:
        assert int(s.peak_bytes[0]) == opt
    s2 = solve(g, time_limit=5)
    assert s2.status == OPTIMAL and int(s2.peak_bytes[0]) == opt


def test_progress_callback_and_fields():
    g = layered_graph(3, layers=8, width=5)
    events = []
    s = solve(g, time_limit=3, progress=lambda *a: events.append(a))
    assert events and all(len(e) == 4 for e in events)
    obj, bound, gap, elapsed = events[-1]
    assert bound <= obj and 0.0 <= gap <= 1.0 and elapsed >= 0
    for k in ("objective", "objective_value", "objective_bound", "gap", "baselines", "phases"):
        assert k in s.info
    assert s.status in (OPTIMAL, FEASIBLE, FALLBACK)


def test_decomposition_segments_are_exact():
    # two diamonds joined by a cut op
    b = GraphBuilder("chain")
    b.add_op("a", "op")
    b.add_op("b1", "op", operands=["a"])
    b.add_op("b2", "op", operands=["a"])
    b.add_op("c", "op", operands=["b1", "b2"])
    b.add_op("d1", "op", operands=["c"])
    b.add_op("d2", "op", operands=["c"])
    b.add_op("e", "op", operands=["d1", "d2", "a"])
    for n, sz, us in [("a", 3, ["b1", "b2", "e"]), ("b1", 4, ["c"]), ("b2", 1, ["c"]),
                      ("c", 2, ["d1", "d2"]), ("d1", 5, ["e"]), ("d2", 2, ["e"]), ("e", 1, [])]:
        b.add_buffer(n, sz, users=us, live_out=(n == "e"))
    g = b.build()
    p = from_graph(g, static())
    assert [g.op_names[c] for c in cut_points(p)] == ["a", "c", "e"]
    assert len(segments(p)) >= 2
    _, peaks = brute_force(g, static())
    s = solve(g, time_limit=5, heuristics=False)
    assert s.status == OPTIMAL and int(s.peak_bytes[0]) == int(peaks.min())


def test_symmetry_groups():
    b = GraphBuilder("sym")
    b.add_op("a", "op")
    for k in range(3):
        b.add_op(f"x{k}", "op", operands=["a"])
    b.add_op("z", "op", operands=[f"x{k}" for k in range(3)])
    b.add_buffer("a", 2, users=["x0", "x1", "x2"])
    for k in range(3):
        b.add_buffer(f"x{k}", 3, users=["z"])
    b.add_buffer("z", 1, live_out=True)
    g = b.build()
    p = from_graph(g, static())
    assert [sorted(x) for x in C.identical_groups(p)] == [[1, 2, 3]]
    built = build(p, ObjectiveSpec("weighted", weights=np.ones(1)), ModelOptions(symmetry=True))
    r = run(built, SolverConfig(time_limit=5))
    assert r.status == "OPTIMAL" and int(peak(g, r.order)[0]) == 2 + 3 * 3


def test_beam_and_search_agree_on_small_graphs():
    for seed in range(5):
        g = random_graph(800 + seed, 8)
        p = from_graph(g, static())
        _, peaks = brute_force(g, static())
        o, c = beam(p, 8)
        assert p.is_valid(o) and c >= peaks.min()
        r = best_first(p)
        assert r.proven and r.cost == peaks.min()


# -- real graphs --------------------------------------------------------------------------------

@pytest.mark.skipif(not MOCCASIN.exists(), reason="shared peer cases not present")
def test_checkmate_vgg16_train_optimal():
    from cpsched.readers.nx_json import read_nx_json
    g = read_nx_json(str(MOCCASIN / "VGG16_256_224_224_3_train_nx.json"))
    s = solve(g, time_limit=10)
    assert s.status == OPTIMAL
    assert int(s.peak_bytes[0]) == int(s.lower_bound_bytes[0])
    # the CP-SAT model alone proves it too
    s2 = solve(g, time_limit=10, search=False, heuristics=False, decompose=False)
    assert s2.status == OPTIMAL


@pytest.mark.skipif(not MOCCASIN.exists(), reason="shared peer cases not present")
def test_random_layered_n100_proven_optimal():
    from cpsched.readers.nx_json import read_nx_json
    g = read_nx_json(str(MOCCASIN / "random_layered_n100_w0.27_nlv0.75_ed0.2_scd0.14.json"))
    s = solve(g, time_limit=20)
    assert s.status == OPTIMAL
    assert int(s.peak_bytes[0]) == 36790


def test_weighted_buckets_proven_by_each_bucket_alone():
    # Weights and optimizer state are the same in every bucket, activations scale with b:
    # the joint weighted bound from static bounds alone is not tight, but each bucket's own
    # proven optimum is, and the shared order reaches all of them.
    from cpsched.generators import mlp_train
    g = mlp_train()
    sc = Scenarios(("b=16", "b=256", "b=4096"), ("b",), np.array([[16], [256], [4096]]),
                   np.ones(3) / 3)
    s = solve(g, sc, time_limit=10)
    assert s.status == OPTIMAL
    np.testing.assert_array_equal(s.peak_bytes, s.lower_bound_bytes)
    for k in range(3):
        one = sc.only(k)
        alone = solve(g, one, time_limit=5)
        assert alone.status == OPTIMAL
        assert int(alone.peak_bytes[0]) == int(s.peak_bytes[k])
