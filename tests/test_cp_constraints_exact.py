"""Constraint-level checks of the CP models, written against survivors of mutation testing:
the precedence reductions against networkx, a two-op memory model, and the remat model on
a graph with a live-in buffer against brute force over every plan."""

from __future__ import annotations

import random

import networkx as nx
import numpy as np
import pytest
from helpers import random_dag, train_chain
from test_brute_force_remat import TIME_TOL
from test_cp_memory import brute_force as memory_brute_force
from test_cp_memory import random_graph, topo_orders
from test_cp_overlap import random_async
from test_remat_cp import FULL, brute_force

from cpsched.analysis.memory import peak, simulate
from cpsched.core.errors import InfeasibleError
from cpsched.core.graph import GraphBuilder
from cpsched.core.scenarios import Scenarios, static
from cpsched.cost.model import Costs
from cpsched.cp.memory import constraints as C
from cpsched.cp.memory import objectives as O
from cpsched.cp.memory.solve import ModelOptions, ObjectiveSpec, build, run
from cpsched.cp.memory.problem import from_graph
from cpsched.strategies.overlap.method import solve_overlap
from cpsched.strategies.remat.method import min_memory_bound, solve_remat
from cpsched.cp.runtime import SolverConfig
from cpsched.remat.plan import Evict, TransferModel, replay


def _dag(g):
    d = nx.DiGraph()
    d.add_nodes_from(range(g.n_ops))
    d.add_edges_from((int(u), v) for v in range(g.n_ops) for u in g.preds(v))
    return d


@pytest.mark.parametrize("seed", range(6))
def test_memory_precedence_reduction_is_the_transitive_reduction(seed):
    g = random_graph(500 + seed, 9)
    p = from_graph(g, static())
    want = set(nx.transitive_reduction(_dag(g)).edges())
    assert set(C.transitive_reduction(p)) == want
    # every mode's pair count is what the model reports
    direct = sum(len(g.preds(v)) for v in range(g.n_ops))
    for mode, n_pairs in (
        ("direct", direct),
        ("reduction", len(want)),
        ("distance", len(want)),
        ("closure", sum(len(nx.ancestors(_dag(g), v)) for v in range(g.n_ops))),
    ):
        built = build(
            p,
            ObjectiveSpec("weighted", weights=np.ones(1)),
            ModelOptions(precedence=mode),
            hint=g.default_order(),
        )
        assert built.info["precedences"] == n_pairs


@pytest.mark.parametrize("seed", range(3))
def test_min_distance_is_the_least_gap_over_every_order(seed):
    g = random_graph(600 + seed, 7)
    p = from_graph(g, static())
    orders = topo_orders(g)
    pos = np.argsort(np.array(orders), axis=1)  # [order, op] -> step
    for v in range(g.n_ops):
        for u in np.flatnonzero(p.anc[v]):
            assert C.min_distance(p, int(u), v) == int((pos[:, v] - pos[:, u]).min())


def test_overlap_model_reports_the_reduced_precedences():
    g, op, tr = random_async(6, 2, 1)
    costs = Costs(op, {k: np.array([v]) for k, v in tr.items()})
    s = solve_overlap(
        g,
        costs=costs,
        budget=10**9,
        heuristics=(),
        budget_methods=(),
        hoist=False,
        lns=False,
        time_limit=10,
        workers=1,
    )
    assert s.info["model"]["precedences"] == nx.transitive_reduction(_dag(g)).number_of_edges()


def with_live_in(n, seed):
    """``weighted_dag(n, seed)`` with a live-in parameter buffer read by the last op; the
    parameter op runs just before it, but its buffer is live from step 0 (where the remat
    model must start it, not at the parameter's step)."""
    g0 = random_dag(n, seed, p=0.45)
    rng = np.random.default_rng(seed + 1000)
    b = GraphBuilder(g0.name + "-livein")
    for i in range(n):
        b.add_op(
            g0.op_names[i],
            "op",
            operands=[int(x) for x in g0.operands(i)],
            attrs={"duration": float(rng.integers(1, 10))},
        )
    prm = b.add_op("param", "parameter", attrs={"duration": 0.0})
    b.add_operand(n - 1, prm)
    b.add_buffer(prm, int(rng.integers(20, 60)), users=[n - 1], live_in=True)
    for j in range(g0.n_buffers):
        b.add_buffer(
            int(g0.buffer_def[j]),
            g0.buffer_sizes[j],
            users=[int(u) for u in g0.buffer_users(j)],
            live_out=bool(g0.buffer_live_out[j]),
        )
    b.original_order = [*range(n - 1), prm, n - 1]
    return b.build()


@pytest.mark.parametrize("seed", [0, 2, 3])
def test_remat_with_a_live_in_buffer_matches_brute_force(seed):
    g = with_live_in(6, seed)
    dur = np.array([[g.attrs(i)["duration"] for i in range(g.n_ops)]])
    order = g.default_order()
    pk = int(simulate(g, order).peak[0])
    lb = int(min_memory_bound(g, None, order)[0][0])
    budget = (lb + pk) // 2
    assert budget < pk
    want = brute_force(g, [order], budget, dur)
    assert want is not None and want > 0
    res = solve_remat(g, None, budget, reorder=False, time_limit=20, **FULL)
    assert res.info["cp"]["status"] == "OPTIMAL"
    assert res.time.recompute[0] == pytest.approx(want)
    assert res.peak[0] <= budget
    assert res.info["cp"]["objective"] == pytest.approx(want, abs=TIME_TOL)


@pytest.mark.parametrize("mode", ["direct", "reduction", "distance", "closure"])
@pytest.mark.parametrize("seed", range(3))
def test_every_precedence_mode_is_exact(seed, mode):
    """Each precedence encoding alone gives the brute-force optimum (a gap forced between
    two ops that may run back to back would lose it on some graphs)."""
    g = random_graph(700 + seed, 7)
    _, peaks = memory_brute_force(g, static())
    p = from_graph(g, static())
    built = build(
        p,
        ObjectiveSpec("weighted", weights=np.ones(1)),
        ModelOptions(precedence=mode),
        hint=g.default_order(),
    )
    r = run(built, SolverConfig(time_limit=10, workers=1, seed=0))
    assert r.status == "OPTIMAL"
    assert int(peak(g, r.order)[0]) == int(peaks.min())


def test_unknown_precedence_mode_is_refused():
    p = from_graph(random_graph(700, 5), static())
    with pytest.raises(ValueError, match=r"^unknown precedence mode 'nearest'$"):
        build(p, ObjectiveSpec("weighted", weights=np.ones(1)), ModelOptions(precedence="nearest"))


def _precedence_gaps(p, mode):
    """``{(u, v): d}`` of the precedence constraints ``pos[u] + d <= pos[v]`` one mode adds
    to an empty model (read back from the model's proto), and the default mode's."""
    from cpsched.cp.memory.scaling import make_scale
    from cpsched.cp.memory.variables import make_vars

    out = []
    for args in ((mode,), ()):
        V = make_vars(p, make_scale(p), domains=False)
        idx = {v.index: k for k, v in enumerate(V.pos)}
        cts = V.model.proto.constraints
        before = len(cts)
        C.precedences(V, *args)
        gaps = {}
        for k in range(before, len(cts)):
            lin = cts[k].linear
            assert len(lin.vars) == 2 and sorted(lin.coeffs) == [-1, 1]
            co = [int(c) for c in lin.coeffs]
            u = idx[lin.vars[co.index(1)]]
            v = idx[lin.vars[co.index(-1)]]
            # pos[u] - pos[v] in [lo, hi] with hi = -d
            gaps[u, v] = -int(lin.domain[len(lin.domain) - 1])
        out.append(gaps)
    return out


@pytest.mark.parametrize("seed", range(3))
def test_distance_precedences_are_the_least_gap_of_every_order(seed):
    """``distance`` (the default) and ``closure`` put on each edge the least
    ``pos[v] - pos[u]`` over every topological order (valid and tight); ``direct`` and
    ``reduction`` put 1. On the reduction's edges no op must lie between the two ends, so
    ``distance`` puts 1 as well (only ``direct`` and ``closure`` have pairs further apart)."""
    g = random_graph(800 + seed, 8)
    p = from_graph(g, static())
    pos = np.argsort(np.array(topo_orders(g)), axis=1)
    least = {
        (int(u), v): int((pos[:, v] - pos[:, u]).min())
        for v in range(g.n_ops)
        for u in np.flatnonzero(p.anc[v])
    }
    reduction = set(nx.transitive_reduction(_dag(g)).edges())
    for mode, edges, tight in (
        ("direct", set(_dag(g).edges()), False),
        ("reduction", reduction, False),
        ("distance", reduction, True),
        ("closure", set(least), True),
    ):
        gaps, default = _precedence_gaps(p, mode)
        assert set(gaps) == edges, mode
        assert gaps == {e: least[e] if tight else 1 for e in edges}, mode
        assert any(least[e] > 1 for e in edges) == (mode in ("direct", "closure")), mode
    assert default == _precedence_gaps(p, "distance")[0]


@pytest.mark.parametrize(
    "opts",
    [
        ModelOptions(exact_liveness=False),
        ModelOptions(symmetry=False, domains=False, peak_bound=False),
        ModelOptions(memory="per-op"),
        ModelOptions(memory="both", exact_liveness=False),
    ],
    ids=["relaxed-liveness", "bare", "per-op", "both-relaxed"],
)
@pytest.mark.parametrize("seed", range(3))
def test_every_model_option_is_exact(seed, opts):
    """The relaxed liveness (``end >= each last user``), the model without its redundant
    parts, and the per-op memory model each give the brute-force least peak, and claim
    it."""
    g = random_graph(900 + seed, 8)
    _, peaks = memory_brute_force(g, static())
    p = from_graph(g, static())
    built = build(p, ObjectiveSpec("weighted", weights=np.ones(1)), opts, hint=g.default_order())
    r = run(built, SolverConfig(time_limit=10, workers=1, seed=0))
    assert r.status == "OPTIMAL"
    assert int(peak(g, r.order)[0]) == int(peaks.min())
    # the model's own peak is its order's (exact units here)
    scale = built.vars.scale
    assert scale.exact[0]
    assert int(r.peaks_units[0]) == scale.units(0, int(peaks.min()))


def test_remat_eviction_alone_without_clones():
    """``copies=1`` leaves eviction as the only way under the budget: the CP model (no
    baselines) frees one forward activation across the backward pass, fast copies hide
    it, and the plan replays under the budget."""
    g = train_chain(6, 100, 10.0)
    peak0 = int(simulate(g, g.default_order()).peak[0])
    budget = peak0 - 100
    kw = dict(reorder=False, baselines=False, margin=0.0, time_limit=10, workers=1, seed=0)
    with pytest.raises(InfeasibleError):
        solve_remat(g, None, budget, copies=1, **kw)
    res = solve_remat(g, None, budget, copies=1, evict=True, transfer=TransferModel(1000.0), **kw)
    assert res.info["cp"]["status"] == "OPTIMAL"
    assert res.added_time[0] == 0 and res.peak[0] <= budget
    assert replay(g, res.events[0], budget=budget).ok
    cands = [res.skeleton.candidates[c] for c in res.active[0]]
    assert cands and all(isinstance(c, Evict) for c in cands)


@pytest.mark.parametrize("seed", [0, 3])
def test_remat_with_two_scenarios_matches_brute_force_in_each(seed):
    """Two scenarios of the same sizes (the model keeps per-scenario copies of every retention end,
    program outputs included): each gets the single-scenario brute-force optimum."""
    g = with_live_in(6, seed)
    assert g.buffer_live_out.any()
    dur = np.array([[g.attrs(i)["duration"] for i in range(g.n_ops)]])
    order = g.default_order()
    pk = int(simulate(g, order).peak[0])
    lb = int(min_memory_bound(g, None, order)[0][0])
    budget = (lb + pk) // 2
    want = brute_force(g, [order], budget, dur)
    assert want is not None and want > 0
    two = Scenarios(("a", "b"), ("s",), np.array([[1], [2]]), np.array([0.5, 0.5]))
    res = solve_remat(g, two, budget, reorder=False, time_limit=20, **FULL)
    assert res.info["cp"]["status"] == "OPTIMAL"
    assert res.time.recompute == pytest.approx([want, want])
    assert (res.peak <= budget).all()


def _near_twins():
    """``r`` feeds six ops that all read ``r``'s first buffer and feed ``z``: ``c`` and
    ``d`` are identical; ``a`` defines more bytes, ``e`` has a transient, ``o``'s output is
    a program output, ``h`` also reads ``r``'s second buffer; ``q`` runs after ``z``."""
    b = GraphBuilder("near-twins")
    b.add_op("r", "op")
    mids = ["a", "c", "d", "e", "o", "h"]
    for x in mids:
        b.add_op(x, "op", operands=["r"], transient=3 if x == "e" else 0)
    b.add_op("z", "op", operands=mids)
    b.add_op("q", "op", operands=["z"])
    b.add_buffer("r", 10, users=mids)
    b.add_buffer("r", 20, users=["h"])
    for x in mids:
        b.add_buffer(x, 7 if x == "a" else 5, users=["z"], live_out=x == "o")
    b.add_buffer("z", 1, users=["q"])
    b.add_buffer("q", 1, live_out=True)
    return b.build()


def test_identical_groups_hold_only_interchangeable_ops():
    """Only ``c`` and ``d`` form a group. Swapping them keeps every step's bytes in every
    order tried; swapping ``c`` with ``a``, ``e`` or ``h`` (same predecessors and
    successors) changes some step's bytes in some order, so none of them may join the
    group (``o`` differs only after the last use, where it happens not to matter)."""
    g = _near_twins()
    p = from_graph(g, static())
    name = g.op_names
    assert [sorted(name[v] for v in grp) for grp in C.identical_groups(p)] == [["c", "d"]]
    orders = topo_orders(g, limit=400)

    def swapped(o, u, v):
        return [v if x == u else u if x == v else x for x in o]

    def changes(u, v):
        return any(
            (simulate(g, o).usage != simulate(g, swapped(o, u, v)).usage).any() for o in orders
        )

    ids = {name[v]: v for v in range(g.n_ops)}
    assert not changes(ids["c"], ids["d"])
    for x in ("a", "e", "h"):
        assert changes(ids["c"], ids[x]), x


@pytest.mark.parametrize("seed", range(12))
def test_per_op_memory_alone_is_exact_and_claims_its_peak(seed):
    """The per-op memory rows with nothing redundant beside them (no cumulative, symmetry,
    position domains or forced-live bound) on sparser graphs, where fewer buffers are
    forced live and more rows decide: the brute-force least peak, claimed exactly."""
    g = random_graph(950 + seed, 7, p_edge=0.25)
    _, peaks = memory_brute_force(g, static())
    p = from_graph(g, static())
    opts = ModelOptions(memory="per-op", symmetry=False, domains=False, peak_bound=False)
    built = build(p, ObjectiveSpec("weighted", weights=np.ones(1)), opts, hint=g.default_order())
    r = run(built, SolverConfig(time_limit=10, workers=1, seed=0))
    assert r.status == "OPTIMAL"
    assert int(peak(g, r.order)[0]) == int(peaks.min())
    assert built.vars.scale.exact[0]
    assert int(r.peaks_units[0]) == built.vars.scale.units(0, int(peaks.min()))


def _unit_graph(seed, n=7, odd=False):
    """A random DAG whose buffers take ``64 c`` bytes at ``s = 1`` and ``64 c + 9 a`` at
    ``s = 10``: model units of 64 and 1 bytes, and scenarios that prefer other orders
    (``odd``: ``1..63`` bytes more, so that both units are 1)."""
    rng = random.Random(seed)
    b = GraphBuilder(f"units{seed}")
    names = [f"v{i}" for i in range(n)]
    preds = {i: [j for j in range(i) if rng.random() < 0.35] for i in range(n)}
    for i in range(n):
        b.add_op(names[i], "op", operands=[names[j] for j in preds[i]])
    for i in range(n):
        users = [names[k] for k in range(n) if i in preds[k]]
        a, c = rng.randint(0, 200), rng.randint(4, 8)
        extra = rng.randint(1, 63) if odd else 0
        b.add_buffer(names[i], f"{a}*s + {64 * c - a + extra}", users=users, live_out=not users)
    return b.build()


@pytest.mark.parametrize("seed,odd", [(0, False), (8, False), (12, False), (0, True), (8, True)])
def test_weighted_objective_counts_bytes_across_unequal_units(seed, odd):
    """The weighted objective is over bytes with the scenario weights, whatever each
    scenario's model unit: the model's order has the brute-force least weighted peak. On
    these graphs an objective over units (units 64 and 1), or one with equal weights
    (units 1 and 1), would pick a worse order."""
    g = _unit_graph(seed, odd=odd)
    sc = Scenarios(("s=1", "s=10"), ("s",), np.array([[1], [10]]), np.array([0.9, 0.1]))
    p = from_graph(g, sc)
    _, peaks = memory_brute_force(g, sc)
    w = sc.weights
    best = float((peaks @ w).min())
    built = build(p, ObjectiveSpec("weighted", weights=w), hint=g.default_order())
    unit = built.vars.scale.unit
    assert unit.tolist() == ([1, 1] if odd else [64, 1])
    r = run(built, SolverConfig(time_limit=10, workers=1, seed=0))
    assert r.status == "OPTIMAL"
    assert float(peak(g, r.order, sc) @ w) == pytest.approx(best)
    wrong = np.ones(2) if odd else w / unit
    assert float(peaks[np.argmin(peaks @ wrong)] @ w) > best + 1


@pytest.mark.parametrize("seed,odd", [(0, False), (8, False), (0, True), (8, True)])
def test_minimax_stage_and_budget_objectives_match_brute_force(seed, odd):
    """The CP model alone (no exact search, no fallback) under each other objective, two
    scenarios with model units of 64 and 1 (or 1 and 1) bytes, against every order:
    minimax (the least largest peak over its scenario's lower bound, to 1 part in RES),
    a lexicographic stage (one scenario's least peak with the other capped at its own
    optimum) and budgets (the least weighted peak among the orders within them)."""
    g = _unit_graph(seed, odd=odd)
    sc = Scenarios(("s=1", "s=10"), ("s",), np.array([[1], [10]]), np.array([0.9, 0.1]))
    p = from_graph(g, sc)
    _, peaks = memory_brute_force(g, sc)
    cfg = SolverConfig(time_limit=10, workers=1, seed=0)

    def solved(spec):
        built = build(p, spec, hint=g.default_order())
        r = run(built, cfg)
        assert r.status == "OPTIMAL", spec.kind
        return built, r, peak(g, r.order, sc)

    # minimax over lower bounds of 60 % / 40 % of each scenario's least peak
    lb = np.array([int(0.6 * peaks[:, 0].min()), int(0.4 * peaks[:, 1].min())])
    built, r, got = solved(ObjectiveSpec("minimax", minimax_lbs=lb))
    unit = built.vars.scale.unit
    lbu = -(-lb // unit)
    ratio = lambda pk: max(-(-O.RES * int(-(-x // u)) // int(d)) for x, u, d in zip(pk, unit, lbu))
    want = min(ratio(pk) for pk in peaks)
    assert ratio(got) == want and int(r.objective) == want
    assert want > O.RES
    # stage 1 with scenario 0 capped at its optimum (units)
    cap0 = -(-int(peaks[:, 0].min()) // int(unit[0]))
    _, r, got = solved(ObjectiveSpec("stage", stage=1, stage_caps={0: cap0}))
    fit = peaks[:, 0] <= cap0 * unit[0]
    assert int(got[0]) <= cap0 * unit[0] and int(got[1]) == int(peaks[fit, 1].min())
    # budgets: the peaks of the best order by weighted peak that the weighted optimum
    # does not fit under; then budgets no order meets
    wp = peaks @ sc.weights
    best = peaks[np.argmin(wp)]
    bud = next(peaks[k] for k in np.argsort(wp, kind="stable") if (best > peaks[k]).any())
    _, r, got = solved(ObjectiveSpec("budget", budgets=bud, weights=sc.weights))
    ok = (peaks <= bud).all(axis=1)
    assert (got <= bud).all() and not ok[np.argmin(wp)]
    assert float(got @ sc.weights) == pytest.approx(float(wp[ok].min()))
    low = np.array([peaks[:, 0].min(), peaks[(peaks[:, 0] == peaks[:, 0].min()), 1].min() - 1])
    built = build(p, ObjectiveSpec("budget", budgets=low, weights=sc.weights))
    assert run(built, cfg).status == "INFEASIBLE"
