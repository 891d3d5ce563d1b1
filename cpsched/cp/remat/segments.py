"""Fixed-order clone model over liveness segments (Boolean, linear).

The interval model of ``cpsched.cp.remat.constraints`` gives every copy a retention
interval and puts them all in one cumulative; on 1,000-op graphs CP-SAT finds nothing
better than its hint with it. With the order fixed, a copy's residency only changes at
a few points (its producer's step, the steps of its readers and of the candidate clones),
so each buffer's lifetime splits into **segments** between consecutive points, and one
Boolean per segment says whether a copy is resident there. Memory at a step is then a
plain linear sum, which gives CP-SAT a useful LP relaxation (the model proves bounds
and its LNS workers improve plans on RLG n1000, where the interval model did neither).

**Data.** Main order ``order`` (step ``t`` runs ``order[t]``). Op ``v`` may be cloned
right before main step ``q`` for ``q`` in ``Q_v``: the steps of its outputs' readers
(a clone serves the reader after a gap) and, one producer deep, the candidate steps of
its consumers (a clone chain: the inputs of a clone re-computed just before it).

**Variables.** ``x[v, q]``: the clone of ``v`` before step ``q``. Per buffer ``b`` with
points ``p_0 < p_1 < ... < p_m`` (``p_0`` its producer's step, ``-1`` for a program
input; the others the steps where ``b`` may be read or re-made): ``L[b, j]`` (a copy
is resident strictly between ``p_{j-1}`` and ``p_j``) and ``P[b, j]`` (resident at
step ``p_j``).

**Constraints.** A read of ``b`` at ``p_j`` (a main reader: always; a clone's: when that
clone is made) needs ``L[b, j]`` or a clone of ``b``'s producer at ``p_j``; a resident
segment after ``p_j`` needs ``L[b, j]`` or that clone (``L[b, j+1] <= L[b, j] + x``);
``P[b, j]`` is at least every read there, the segment after it and the clone itself. A
program output needs a copy through the last step. Memory at step ``t`` (every
scenario): sizes times the variables covering ``t``, plus the transients of the main op
and of the clones there, at most the budget.

**Why it is safe.** The model counts a buffer at every step from the copy that serves a
read to that read, the whole step included; the replay (``materialize``) frees each copy
right after its last reader and allocates in order within a step, so its usage at any
event is at most the model's at that event's step. Plans are re-checked by the replay
all the same.

**Objective.** Least weighted recompute time (sum of the clones' op times, scenario
weights), in integer units of ``resolution`` of the mean op time.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from cpsched.analysis.memory import positions
from cpsched.core.graph import Graph
from cpsched.cp import runtime
from cpsched.remat.policy import recomputable_ops

# a Boolean variable, its negation (CP-SAT types) or a constant True / False
Lit = Any


@dataclass
class _Buffer:
    """One buffer's points and variables (for hints and decoding)."""

    points: list[int]  # p_1 < ... < p_m (``n`` for a program output's virtual read)
    seg: list[cp_model.IntVar]  # L[b, j], j = 1..m
    at: list[cp_model.IntVar | None]  # P[b, j] (None at the virtual read)
    main: list[bool]  # a main reader (or the program end) at p_j
    reads: list[list[tuple[int, int]]]  # clones (op, step) reading b at p_j
    remade: list[tuple[int, int] | None]  # the clone of b's producer at p_j

    def residency(self, clones: Set[tuple[int, int]]) -> tuple[list[bool], list[bool]]:
        """Least residency (L, P per point) with the clones ``clones`` made: backwards,
        a segment is resident when a read after it comes before the next re-make."""
        m = len(self.points)
        seg, at = [False] * m, [False] * m
        nxt = False
        for j in range(m - 1, -1, -1):
            need = self.main[j] or any(k in clones for k in self.reads[j])
            made = self.remade[j] is not None and self.remade[j] in clones
            seg[j] = (need or nxt) and not made
            at[j] = need or made or nxt
            nxt = seg[j]
        return seg, at


@dataclass
class SegmentModel:
    """The built model and what hints and decoding need."""

    model: cp_model.CpModel
    clones: dict[tuple[int, int], cp_model.IntVar]  # (op, step) -> x
    cost: dict[tuple[int, int], int]  # (op, step) -> integer objective coefficient
    unit: float  # weighted op time per objective unit
    buffers: list[_Buffer]
    stats: dict[str, int] = field(default_factory=dict)

    def hint(self, clones: Set[tuple[int, int]]) -> None:
        """A complete hint: the clones ``clones`` and the least residency they allow."""
        self.model.clear_hints()
        for key, var in self.clones.items():
            self.model.add_hint(var, key in clones)
        for buf in self.buffers:
            seg_on, at_on = buf.residency(clones)
            for j, var in enumerate(buf.seg):
                self.model.add_hint(var, seg_on[j])
                at = buf.at[j]
                if at is not None:
                    self.model.add_hint(at, at_on[j])

    def chosen(self, solver: cp_model.CpSolver) -> set[tuple[int, int]]:
        return {k for k, lit in self.clones.items() if solver.boolean_value(lit)}


def candidate_steps(
    graph: Graph,
    order: Sequence[int],
    clonable: np.ndarray,
    chain_depth: int = 1,
    hot: np.ndarray | None = None,
) -> dict[int, set[int]]:
    """``Q_v`` per clonable op ``v``: the steps of its outputs' readers after the first
    step past ``v``, plus (``chain_depth`` producers deep) the candidate steps of the
    clonable ops that read them. With ``hot`` (``[n]`` bool, the steps that may be over
    the budget) a reader step is kept only if the gap it ends (from the read or the
    compute before it) covers a hot step: elsewhere a clone frees nothing that counts."""
    pos = positions(order, graph.n_ops)
    hot_before = None if hot is None else np.concatenate([[0], np.cumsum(hot)])
    cand: dict[int, set[int]] = {}
    for v in map(int, np.flatnonzero(clonable)):
        steps = sorted(
            {int(pos[int(w)]) for b in graph.defines(v) for w in graph.buffer_users(int(b))}
        )
        keep = set()
        prev = int(pos[v])
        for q in steps:
            if q > pos[v] + 1 and (hot_before is None or hot_before[q] > hot_before[prev + 1]):
                keep.add(q)
            prev = q
        cand[v] = keep
    for _ in range(max(0, chain_depth)):
        grown = {v: set(s) for v, s in cand.items()}
        for v in cand:
            for b in graph.defines(v):
                for w in map(int, graph.buffer_users(int(b))):
                    if w in cand:
                        grown[v] |= {q for q in cand[w] if q > pos[v] + 1}
        cand = grown
    return cand


def every_position(graph: Graph, order: Sequence[int], rows: np.ndarray) -> dict[int, set[int]]:
    """``Q_v`` for the relaxation that counts memory only at the steps ``rows``: every clone
    position a plan may need there, up to equivalence.

    Between two counted steps every position of a clone is as good as any other (its output
    and its inputs are only counted at ``rows``), so each gap of ``v``'s output (between two
    reads) gets the counted steps inside it and one step for the stretch that ends at the
    gap's reader; a clone whose gap covers no counted step before it frees nothing counted.
    Closed under chains: an input of a clone at ``q`` that is gone by ``q`` may be re-made
    there too (unless keeping it from its last read costs nothing counted). Returned sets can
    be large (RLG n1000 with 40 counted steps: 41k positions)."""
    pos = positions(order, graph.n_ops)
    n = len(order)
    rows = np.asarray(rows, dtype=bool)
    counted_before = np.concatenate([[0], np.cumsum(rows)])
    kept = np.flatnonzero(rows)

    def covers(lo: int, hi: int) -> bool:  # a counted step in [lo, hi)
        return bool(counted_before[hi] > counted_before[max(lo, 0)])

    def first_of_stretch(q: int, lo: int) -> int:
        """The first step of the stretch of uncounted steps that holds ``q`` (not before
        ``lo``); ``q`` itself when it is counted."""
        if rows[q]:
            return q
        i = int(np.searchsorted(kept, q, side="right")) - 1
        return max(int(kept[i]) + 1 if i >= 0 else 0, lo)

    cand: dict[int, set[int]] = {}
    for v in map(int, np.flatnonzero(recomputable_ops(graph))):
        reads = sorted(
            {int(pos[int(w)]) for b in graph.defines(v) for w in graph.buffer_users(int(b))}
        )
        if any(graph.buffer_live_out[int(b)] for b in graph.defines(v)):
            reads.append(n)  # a program output is read at the end: re-made by the last step
        keep: set[int] = set()
        prev = int(pos[v])
        for r in reads:
            lo, hi = max(prev + 1, int(pos[v]) + 2), min(r, n - 1)
            if hi >= lo:
                inside = kept[(kept >= lo) & (kept <= hi)].tolist()
                keep |= {int(q) for q in inside + [first_of_stretch(hi, lo)] if covers(prev + 1, q)}
            prev = r
        cand[v] = keep
    last_reads = {
        b: np.array(
            sorted(
                {int(pos[int(w)]) for w in graph.buffer_users(b)}
                | {-1 if graph.buffer_live_in[b] else int(pos[int(graph.buffer_def[b])])}
            )
        )
        for b in range(graph.n_buffers)
    }
    todo = [(v, q) for v, qs in cand.items() for q in qs]
    while todo:
        v, q = todo.pop()
        for a in map(int, graph.uses(v)):
            u = int(graph.buffer_def[a])
            if graph.buffer_live_in[a] or u not in cand:
                continue
            reads_a = last_reads[a]
            last = int(reads_a[int(np.searchsorted(reads_a, q, side="right")) - 1])
            if last == q or not covers(last + 1, q):
                continue  # resident at q anyway, or kept up to it at no counted cost
            c = first_of_stretch(q, max(last + 1, int(pos[u]) + 2))
            if c <= q and c not in cand[u]:
                cand[u].add(c)
                todo.append((u, c))
    return cand


def build_segment_model(
    graph: Graph,
    order: Sequence[int],
    budgets: np.ndarray,
    sizes: np.ndarray,
    trans: np.ndarray,
    cost: np.ndarray,
    *,
    chain_depth: int = 1,
    extra: Iterable[tuple[int, int]] = (),
    ops: Set[int] | None = None,
    fixed: Set[tuple[int, int]] = frozenset(),
    hot: np.ndarray | None = None,
    resolution: float = 1e-3,
    candidates: Mapping[int, Set[int]] | None = None,
    rows: np.ndarray | None = None,
) -> SegmentModel:
    """The segment model of clones on the fixed ``order``.

    ``budgets`` ``[S]``, ``sizes`` ``[S, n_buffers]`` and ``trans`` ``[S, n_ops]`` in bytes;
    ``cost`` ``[n_ops]`` the weighted time of one clone of each op; ``extra`` more
    candidate clones (op, step), e.g. those of a plan used as the hint. With ``ops`` only
    the clones of those ops are decided; the others are those of ``fixed`` (constants, so
    buffers they alone touch become constant bytes). ``candidates`` gives ``Q_v`` instead
    of ``candidate_steps``.

    ``rows`` (``[n]`` bool) builds the **relaxation** the bounds use instead: memory is
    counted only at those steps, and there only what is resident while the main op runs (a
    copy at one of its points counts when the main op reads it or it stays resident after
    that step; the clones' transients do not count). With the candidates of
    ``every_position``, every plan the replay accepts satisfies it once each clone is moved
    to its position's representative (same cost, nothing counted changes), so its optimum
    (or LP) is a lower bound (``lp_bound``)."""
    n = len(order)
    pos = positions(order, graph.n_ops)
    clonable = recomputable_ops(graph)
    if candidates is not None:
        cand = {int(v): set(map(int, qs)) for v, qs in candidates.items()}
    else:
        cand = candidate_steps(graph, order, clonable, chain_depth, hot)
    for v, q in list(extra) + list(fixed):
        if clonable[v] and pos[v] < q < n:
            cand.setdefault(int(v), set()).add(int(q))
    lits = _Lits(cp_model.CpModel(), fixed)
    pos_cost = cost[cost > 0]
    unit = max(float(pos_cost.mean()) if pos_cost.size else 1.0, 1e-12) * resolution
    coef: dict[tuple[int, int], int] = {}
    for v, qs in cand.items():
        for q in sorted(qs):
            if ops is None or v in ops:
                lits.x[v, q] = lits.m.new_bool_var(f"x{v}_{q}")
                coef[v, q] = int(round(float(cost[v]) / unit))
    terms: list[list[tuple[int, Any]]] = [[] for _ in range(n)]
    const = np.zeros((sizes.shape[0], n), dtype=np.int64)
    buffers: list[_Buffer] = []
    for b in range(graph.n_buffers):
        start, buf = _points(graph, b, pos, cand, n)
        if start >= 0:
            const[:, start] += sizes[:, b]
        keys = [k for ks in buf.reads for k in ks] + [k for k in buf.remade if k is not None]
        if not any(k in lits.x for k in keys):
            # nothing decided here touches this buffer: its residency is fixed
            _fixed_residency(buf, start, fixed, sizes[:, b : b + 1], const, n, rows)
            continue
        buffers.append(buf)
        _residency_vars(lits, buf, b, start, terms, n, rows)
    n_rows = _memory_rows(lits, order, budgets, sizes, trans, fixed, terms, const, rows)
    m, x = lits.m, lits.x
    m.minimize(sum(coef[k] * var for k, var in x.items()))
    stats = {
        "clone_candidates": len(x),
        "segments": sum(len(bf.seg) for bf in buffers),
        "memory_rows": n_rows,
    }
    return SegmentModel(m, x, coef, unit, buffers, stats)


class _Lits:
    """The clone literals of a segment model: a decided clone's variable, or the constant
    its ``fixed`` membership gives."""

    def __init__(self, m: cp_model.CpModel, fixed: Set[tuple[int, int]]):
        self.m = m
        self.fixed = fixed
        self.x: dict[tuple[int, int], cp_model.IntVar] = {}

    def lit(self, key: tuple[int, int] | None, negate: bool = False) -> Lit:
        if key is None:
            return negate  # no clone there: "not made" is true
        var = self.x.get(key)
        if var is None:
            return (key in self.fixed) != negate
        return var.Not() if negate else var

    def clause(self, lits: list[Lit]) -> None:
        if any(a is True for a in lits):
            return
        self.m.add_bool_or([a for a in lits if a is not False])


def _points(graph: Graph, b: int, pos: np.ndarray, cand, n: int) -> tuple[int, _Buffer]:
    """Buffer ``b``'s first step (-1: a program input) and its points: where it is read
    (by a main op or a candidate clone), made again, or (``n``) kept as an output."""
    p = int(graph.buffer_def[b])
    start = -1 if graph.buffer_live_in[b] else int(pos[p])
    main_reads = {int(pos[int(w)]) for w in graph.buffer_users(b)}
    reads: dict[int, list[tuple[int, int]]] = {}
    for w in map(int, graph.buffer_users(b)):
        for q in cand.get(w, ()):
            reads.setdefault(q, []).append((w, q))
    remade = {q: (p, q) for q in cand.get(p, ())}
    pts = sorted(q for q in main_reads | set(reads) | set(remade) if q > start)
    if graph.buffer_live_out[b]:
        pts.append(n)
    buf = _Buffer(
        pts,
        [],
        [],
        [q in main_reads or q == n for q in pts],
        [list(reads.get(q, ())) for q in pts],
        [remade.get(q) for q in pts],
    )
    return start, buf


def _fixed_residency(buf: _Buffer, start, fixed, size, const, n, rows) -> None:
    """A buffer no decided clone touches: its bytes (``size`` ``[S, 1]``) as constants
    where the ``fixed`` clones leave it resident."""
    seg_on, at_on = buf.residency(fixed)
    prev = start
    for j, q in enumerate(buf.points):
        if seg_on[j]:
            const[:, max(prev + 1, 0) : min(q, n)] += size
        stays = buf.main[j] or (j + 1 < len(buf.points) and seg_on[j + 1])
        if q < n and at_on[j] and (rows is None or stays):
            const[:, q] += size[:, 0]
        prev = q


def _residency_vars(lits: _Lits, buf: _Buffer, b: int, start, terms, n, rows) -> None:
    """``L[b, j]`` and ``P[b, j]`` with the read and continuity clauses; each adds ``b``'s
    bytes to the memory terms of the steps it covers."""
    m, lit, clause = lits.m, lits.lit, lits.clause
    prev = start
    for j, q in enumerate(buf.points):
        seg = m.new_bool_var(f"L{b}_{j}")
        r = buf.remade[j]
        if j > 0:
            # a copy between p_{j-1} and p_j came through the segment before p_{j-1}
            # or is the clone made at p_{j-1}
            clause([seg.Not(), buf.seg[j - 1], lit(buf.remade[j - 1])])
        if buf.main[j]:
            clause([seg, lit(r)])
        for k in buf.reads[j]:
            clause([seg, lit(k, True), lit(r)])
        for t in range(max(prev + 1, 0), min(q, n)):
            terms[t].append((b, seg))
        at = None
        if q < n:
            at = m.new_bool_var(f"P{b}_{j}")
            if buf.main[j]:
                m.add(at == 1)
            for k in buf.reads[j]:
                clause([lit(k, True), at])
            clause([lit(r, True), at])
            if rows is None or buf.main[j]:
                terms[q].append((b, at))
        at_before = buf.at[j - 1] if j > 0 else None
        if at_before is not None:
            m.add_implication(seg, at_before)  # resident after p_{j-1}: also at it
        if rows is not None and j > 0 and not buf.main[j - 1]:
            # relaxation: at a point no main op reads, count the copy only if it stays
            terms[buf.points[j - 1]].append((b, seg))
        buf.seg.append(seg)
        buf.at.append(at)
        prev = q


def _memory_rows(lits: _Lits, order, budgets, sizes, trans, fixed, terms, const, rows) -> int:
    """Memory at each (counted) step and scenario within the budget: the buffers' terms,
    the transients of the main op and of the clones made there. Returns the rows added
    (a step that cannot bind gets none)."""
    m, x = lits.m, lits.x
    n, n_s = len(order), sizes.shape[0]
    clone_at: dict[int, list[tuple[int, Any]]] = {}
    for (v, q), var in x.items():
        clone_at.setdefault(q, []).append((v, var))
    if rows is not None:
        clone_at = {}  # the relaxation leaves the clones' transients out
    for v, q in fixed:
        if (v, q) not in x and 0 <= q < n and rows is None:
            const[:, q] += trans[:, v]
    n_rows = 0
    for t in range(n):
        const[:, t] += trans[:, int(order[t])]
        if rows is not None and not rows[t]:
            continue
        for s in range(n_s):
            expr = [(int(sizes[s, b]), var) for b, var in terms[t] if sizes[s, b]]
            expr += [(int(trans[s, v]), var) for v, var in clone_at.get(t, ()) if trans[s, v]]
            if const[s, t] + sum(c for c, _ in expr) <= budgets[s]:
                continue  # cannot bind
            m.add(sum(c * var for c, var in expr) <= int(budgets[s]) - int(const[s, t]))
            n_rows += 1
    return n_rows


@dataclass
class SegmentResult:
    """Clones (op, step, sub) of the best plan found, its status and the proven bound on
    the weighted recompute time (same units as ``cost``)."""

    regens: list[tuple[int, int, float]]
    status: str
    objective: float
    bound: float
    seconds: float
    stats: dict[str, int]


def as_regens(pos: np.ndarray, keys: Set[tuple[int, int]]) -> list[tuple[int, int, float]]:
    """Clones (op, step, sub), those of one step in main-order position: a chain's
    producer before its reader."""
    return sorted(((v, q, float(pos[v])) for v, q in keys), key=lambda c: (c[1], c[2]))


def solve_model(
    sm: SegmentModel, time_limit: float, cfg: runtime.SolverConfig, params: dict | None = None
) -> runtime.Run:
    """One run of a segment model: ``cfg``'s workers, seed, log, determinism and deadline,
    CP-SAT's presolve on, ``params`` as extra parameters."""
    # through the runtime, which stops on a signal and keeps the best solution
    run_cfg = runtime.SolverConfig(
        workers=cfg.workers,
        seed=cfg.seed,
        log=cfg.log,
        deterministic=cfg.deterministic,
        deadline=cfg.deadline,
        extra=dict(params or {}),
    )
    return runtime.solve(sm.model, run_cfg, max(0.1, time_limit))


def solve_segments(
    graph: Graph,
    order: Sequence[int],
    budgets: np.ndarray,
    sizes: np.ndarray,
    trans: np.ndarray,
    cost: np.ndarray,
    *,
    start: Sequence[tuple[int, int, float]] = (),
    cfg: runtime.SolverConfig | None = None,
    chain_depth: int = 1,
    hot: np.ndarray | None = None,
    params: dict[str, Any] | None = None,
) -> SegmentResult | None:
    """Least weighted recompute time of clones on ``order`` under ``budgets``, hinted with
    the clones ``start`` (op, step, sub), in ``cfg.time_limit`` seconds (all of it for the
    search in deterministic mode). None when no plan was found in time."""
    cfg = runtime.SolverConfig(time_limit=60.0) if cfg is None else cfg
    t0 = time.perf_counter()
    pos = positions(order, graph.n_ops)
    start_keys = {(int(v), int(q)) for v, q, _ in start}
    data = (graph, order, budgets, sizes, trans, cost)
    sm = build_segment_model(*data, chain_depth=chain_depth, extra=start_keys, hot=hot)
    if start_keys:
        sm.hint(start_keys)
    left = cfg.time_limit - (0 if cfg.deterministic else time.perf_counter() - t0)
    run = solve_model(sm, left, cfg, params)
    if not run.solved:
        return None
    solver = run.solver
    return SegmentResult(
        as_regens(pos, sm.chosen(solver)),
        run.status,
        float(solver.objective_value) * sm.unit,
        float(solver.best_objective_bound) * sm.unit,
        time.perf_counter() - t0,
        sm.stats,
    )


def hot_steps(usage: np.ndarray, budgets: np.ndarray) -> np.ndarray:
    """``[n]`` bool: steps where the order without clones is over some scenario's budget
    (``usage`` ``[S, n]``); clones whose gap covers none of them free nothing that counts."""
    over = np.atleast_2d(usage) > np.asarray(budgets)[:, None]
    return np.asarray(over.any(axis=0), dtype=bool)
