"""Constraints of the CP-SAT ordering model, one function per family.

Every function takes the ``Vars`` of ``cpsched.cp.memory.variables`` and adds to its model:

- ``permutation``: ``AllDifferent(pos)`` (each step runs one op);
- ``precedences``: ``pos[u] + d(u, v) <= pos[v]``; ``mode`` picks the edge set: ``direct``
  (the problem's own edges, d = 1), ``reduction`` (transitive reduction, d = 1), ``distance``
  (reduction edges with d = 1 + #ops that must lie between u and v) or ``closure`` (every
  ancestor pair, with that distance);
- ``liveness``: ``end_b = max(pos of b's latest users)`` (``exact=True``) or only ``>=`` (a
  relaxation that is exact at the optimum: a later end only adds memory);
- ``memory_cumulative``: one ``AddCumulative`` per scenario over the buffer intervals with
  capacity ``peak[s] - base[s]`` (the position + cumulative model);
- ``memory_per_op``: for each op ``v``: ``peak[s] >= base + forced(v) + transient(v) +
  sum_b size_b * live(b, v)`` over the buffers that may or may not be live at ``v``, with
  ``live(b, v)`` implied by order literals (the per-op model; ``forced(v)`` are the bytes
  live across ``v`` in every order, as in ``memory.op_lower_bounds``);
- ``symmetry``: identical independent ops (same predecessors, successors, buffer sizes and
  users) are run in index order;
- ``hint``: ``AddHint`` of an order (positions, ends, peaks).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from cpsched.cp.memory.problem import Problem
from cpsched.cp.memory.variables import Vars


def permutation(V: Vars) -> None:
    if V.problem.n > 1:
        V.model.add_all_different(V.pos)


def transitive_reduction(p: Problem) -> list[tuple[int, int]]:
    """Edges ``(u, v)`` of the transitive reduction of the precedence order."""
    anc = p.anc
    edges: list[tuple[int, int]] = []
    for v in range(p.n):
        a = np.flatnonzero(anc[v])
        if a.size == 0:
            continue
        # u is redundant if it is an ancestor of another ancestor of v
        red = anc[np.ix_(a, a)].any(axis=0)
        edges.extend((int(u), v) for u in a[~red])
    return edges


def min_distance(p: Problem, u: int, v: int) -> int:
    """Least ``pos[v] - pos[u]`` for an ancestor ``u`` of ``v``: 1 + #ops between them."""
    return 1 + int((p.desc[u] & p.anc[v]).sum())


def precedences(V: Vars, mode: str = "distance") -> int:
    p, m, pos = V.problem, V.model, V.pos
    if mode == "direct":
        pairs = [(u, v) for v in range(p.n) for u in p.preds[v]]
        dist = None
    elif mode in ("reduction", "distance"):
        pairs = transitive_reduction(p)
        dist = mode == "distance"
    elif mode == "closure":
        pairs = [(int(u), v) for v in range(p.n) for u in np.flatnonzero(p.anc[v])]
        dist = True
    else:
        raise ValueError(f"unknown precedence mode {mode!r}")
    for u, v in pairs:
        d = 1
        if dist:
            # ops that are descendants of u and ancestors of v
            d = 1 + (int((p.desc[u] & p.anc[v]).sum()))
        m.add(pos[u] + d <= pos[v])
    return len(pairs)


def liveness(V: Vars, exact: bool = True) -> None:
    m = V.model
    for b in range(V.problem.nb):
        end = V.end[b]
        if isinstance(end, int) or len(V.last_users[b]) <= 1:
            continue
        terms = [V.pos[u] for u in V.last_users[b]]
        if exact:
            m.add_max_equality(end, terms)
        else:
            for t in terms:
                m.add(end >= t)


def memory_cumulative(V: Vars) -> None:
    p, sc, m = V.problem, V.scale, V.model
    for s in range(p.n_scenarios):
        ivs, dem = [], []
        for b in range(p.nb):
            if sc.sizes[s, b] > 0:
                ivs.append(V.intervals[b])
                dem.append(int(sc.sizes[s, b]))
        for v in range(p.n):
            if V.op_intervals[v] is not None and sc.transient[s, v] > 0:
                ivs.append(V.op_intervals[v])
                dem.append(int(sc.transient[s, v]))
        if ivs:
            m.add_cumulative(ivs, dem, V.peak[s] - int(sc.base[s]))
        else:
            m.add(V.peak[s] >= int(sc.base[s]))


def maybe_live(p: Problem) -> np.ndarray:
    """``[n, nb]`` bool: buffer b may be live at op v in some order, but is not forced."""
    n, nb = p.n, p.nb
    can_before = np.ones((n, nb), dtype=bool)  # def can come at or before v
    d = p.buf_def >= 0
    can_before[:, d] = ~p.anc[p.buf_def[d]].T  # def is not a descendant of v
    can_after = np.zeros((n, nb), dtype=bool)  # some user can come at or after v
    for b, us in enumerate(p.buf_users):
        if us:
            # u at or after v possible unless u is a strict ancestor of v
            can_after[:, b] = (~p.anc[:, us]).any(axis=1)
        if d[b]:
            can_after[p.buf_def[b], b] = True
    can_after[:, p.buf_out] = True
    return can_before & can_after & ~p.forced_live


def memory_per_op(V: Vars, ops: list[int] | None = None) -> int:
    """Per-op memory rows with order literals; returns the number of live literals."""
    p, sc, m = V.problem, V.scale, V.model
    maybe = maybe_live(p)
    forced_units = (p.forced_live.astype(np.int64) @ sc.sizes.T).T  # [S, n]
    count = 0
    for v in range(p.n) if ops is None else ops:
        bs = np.flatnonzero(maybe[v])
        lits = []
        for b in map(int, bs):
            lit = m.new_bool_var(f"L{b}_{v}")
            d = int(p.buf_def[b])
            # live(b, v) <= def at or before v, and some latest user at or after v
            bef = True if d < 0 else (True if d == v else V.before(d, v))
            cand_users: list[int] | None = [u for u in V.last_users[b] if not p.anc[v, u]]
            if p.buf_out[b]:
                cand_users = None
            if cand_users is None:
                clause_sets: list[list[int]] = [[]]
            else:
                clause_sets = [[u] for u in cand_users]
            for cs in clause_sets:
                lits_needed = []
                if bef is not True:
                    lits_needed.append(bef)
                for u in cs:
                    if u == v:
                        continue
                    aft = V.before(v, u)
                    if aft is True:
                        continue
                    lits_needed.append(aft)
                # conjunction of lits_needed implies lit
                m.add_bool_or([~x for x in lits_needed] + [lit])
            lits.append((b, lit))
            V.live_lits.append((b, v, lit))
            count += 1
        for s in range(p.n_scenarios):
            const = int(sc.base[s] + forced_units[s, v] + sc.transient[s, v])
            terms = [(int(sc.sizes[s, b]), lit) for b, lit in lits if sc.sizes[s, b] > 0]
            if terms:
                m.add(V.peak[s] >= const + sum(c * l for c, l in terms))
            else:
                m.add(V.peak[s] >= const)
    return count


def identical_groups(p: Problem) -> list[list[int]]:
    """Groups of interchangeable ops: swapping two of them maps every order to one of
    equal usage at every step."""
    groups: dict[tuple, list[int]] = defaultdict(list)
    uses: dict[int, list[int]] = defaultdict(list)
    for b, us in enumerate(p.buf_users):
        for u in us:
            uses[u].append(b)
    for v in range(p.n):
        defs = tuple(
            sorted(
                (
                    tuple(int(x) for x in p.sizes[:, b]),
                    tuple(sorted(p.buf_users[b])),
                    bool(p.buf_out[b]),
                )
                for b in np.flatnonzero(p.buf_def == v)
            )
        )
        key = (
            tuple(sorted(p.preds[v])),
            tuple(sorted(p.succs[v])),
            defs,
            tuple(sorted(uses[v])),
            tuple(int(x) for x in p.transient[:, v]),
        )
        groups[key].append(v)
    return [g for g in groups.values() if len(g) > 1]


def symmetry(V: Vars) -> int:
    """Order identical ops by index. Returns the number of constraints added."""
    k = 0
    for g in identical_groups(V.problem):
        for a, b in zip(g, g[1:]):
            V.model.add(V.pos[a] < V.pos[b])
            k += 1
    return k


def hint(V: Vars, order: list[int]) -> None:
    p, m = V.problem, V.model
    pos = np.empty(p.n, dtype=np.int64)
    pos[np.asarray(order, dtype=np.int64)] = np.arange(p.n)
    for v in range(p.n):
        m.add_hint(V.pos[v], int(pos[v]))
    for b in range(p.nb):
        e = V.end[b]
        if not isinstance(e, int) and len(V.last_users[b]) > 1:
            m.add_hint(e, int(max(pos[u] for u in V.last_users[b])))
    start, end = p.live_ranges(order)
    for b, ln in enumerate(V.lengths):
        if ln is not None:
            m.add_hint(ln, int(end[b] - start[b] + 1))
    peaks = usage_units(V, order)
    for s in range(p.n_scenarios):
        m.add_hint(V.peak[s], int(max(peaks[s], V.scale.floor[s])))
    for (a, b), lit in V._before.items():
        m.add_hint(lit, bool(pos[a] < pos[b]))
    if V.live_lits:
        start, end = p.live_ranges(order)
        for b, v, lit in V.live_lits:
            m.add_hint(lit, bool(start[b] <= pos[v] <= end[b]))


def usage_units(V: Vars, order: Sequence[int] | np.ndarray) -> np.ndarray:
    """Model-unit peak of an order (without floor), per scenario."""
    p, sc = V.problem, V.scale
    n = p.n
    order = np.asarray(order, dtype=np.int64)
    start, end = p.live_ranges(order)
    out = np.zeros(p.n_scenarios, dtype=np.int64)
    for s in range(p.n_scenarios):
        delta = np.zeros(n + 1, dtype=np.int64)
        np.add.at(delta, start, sc.sizes[s])
        np.add.at(delta, end + 1, -sc.sizes[s])
        use = np.cumsum(delta[:n]) + sc.base[s] + sc.transient[s, order]
        out[s] = use.max() if n else sc.base[s]
    return out
