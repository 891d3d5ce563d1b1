"""Peak lower bounds from case splits over the minimum-cut bounds (``cuts.py``): on the
relative order of two unordered ops (``pair_bound``) and on the relative order of the ops
with the largest cut bounds (``order_split_bound``)."""

from __future__ import annotations

import heapq
import time

import numpy as np

from cpsched.cp.memory.cuts import CutBounds
from cpsched.cp.memory.problem import Problem

# Ops (largest single cut bounds first) among which ``pair_bound`` splits on pairs.
PAIR_TOP_OPS = 40
INF = 1 << 62
# Ops (largest single cut bounds first) whose relative orders ``order_split_bound`` splits
# on (RLG n1000: 12 ops, 445 cuts, 1 s: 555,009 -> 559,019; 16-24 ops: no further gain).
SPLIT_TOP_OPS = 12


def pair_bound(
    p: Problem,
    *,
    s: int = 0,
    upper: float = float("inf"),
    deadline: float = float("inf"),
    top: int = PAIR_TOP_OPS,
    max_pairs: int | None = None,
) -> tuple[int, int]:
    """A peak bound from case splits on the order of two unordered ops ``u``, ``v``.

    If ``u`` runs before ``v``, the downset at ``v``'s step holds ``u`` and the one at
    ``u``'s step lacks ``v``; else the reverse. So every order's peak is at least
    ``min(max(C_v[u in], C_u[v out]), max(C_v[u out], C_u[v in]))``, which is never below
    ``max(C_u, C_v)`` and often above. Pairs are taken among the ``top`` ops with the
    largest single cut bounds, most promising first, until ``deadline`` (wall clock) or
    ``max_pairs``. Returns ``(bound, pairs tried)``; ``floor`` is not included.
    """
    base = p.cut_lower_bounds[s]
    best = int(base.max()) if p.n else 0
    if p.n < 2:
        return best, 0
    cb = CutBounds(p)
    cand = [int(v) for v in np.argsort(-base, kind="stable")[:top]]
    comp = p.comparable
    pairs = [
        (int(base[u]) + int(base[v]), u, v)
        for i, v in enumerate(cand)
        for u in cand[i + 1 :]
        if not comp[u, v]
    ]
    pairs.sort(key=lambda x: -x[0])
    tried = 0
    for _, u, v in pairs:
        if best >= upper or (max_pairs is not None and tried >= max_pairs):
            break
        if time.perf_counter() > deadline:
            break
        tried += 1
        # case u before v, then v before u; a case that cannot beat ``best`` ends the pair
        # (None: the case is impossible)
        a, b = cb.value(v, s, into=[u]), cb.value(u, s, out_of=[v])
        first = INF if a is None or b is None else max(a, b)
        if first <= best:
            continue
        c, d = cb.value(v, s, out_of=[u]), cb.value(u, s, into=[v])
        second = INF if c is None or d is None else max(c, d)
        val = min(first, second)
        if val < INF:
            best = max(best, val)
    return best, tried


def order_split_bound(
    p: Problem,
    *,
    s: int = 0,
    top: int = SPLIT_TOP_OPS,
    upper: float = float("inf"),
    deadline: float = float("inf"),
    max_cuts: int | None = None,
) -> tuple[int, int]:
    """A peak bound from the relative order of the ``top`` ops with the largest cut bounds.

    Any order runs these ops T in some order that respects their precedences; at the step of
    ``t`` in T, the downset holds the T ops run before ``t`` and none of those after it, so
    the usage there is at least the cut bound of ``t`` under those constraints. The least,
    over the orders of T, of the largest such bound is found by a bottleneck Dijkstra over
    the subsets of T run so far (one minimum cut per transition). With T = every op this is
    the exact optimum. Stopped early (``deadline``, ``max_cuts``, or once it reaches
    ``upper``), the smallest bottleneck still queued is the bound. Returns ``(bound, cuts)``;
    ``floor`` is not included.
    """
    base = p.cut_lower_bounds[s]
    static = int(base.max()) if p.n else 0
    k = min(top, p.n)
    if k < 2:
        return static, 0
    T = [int(v) for v in np.argsort(-base, kind="stable")[:k]]
    cb = CutBounds(p)
    anc = p.anc
    # T-ancestors of each T op, as a bit mask over T
    need = [sum(1 << j for j in range(k) if anc[T[i], T[j]]) for i in range(k)]
    full = (1 << k) - 1
    dist = {0: 0}
    heap = [(0, 0)]
    cuts = 0
    while heap:
        d, X = heapq.heappop(heap)
        if d > dist.get(X, INF):
            continue
        if X == full or d >= upper:
            return max(static, d), cuts
        if time.perf_counter() > deadline or (max_cuts is not None and cuts >= max_cuts):
            return max(static, d), cuts
        into = [T[j] for j in range(k) if X >> j & 1]
        for i in range(k):
            if X >> i & 1 or need[i] & ~X:
                continue
            rest = [T[j] for j in range(k) if j != i and not X >> j & 1]
            c = cb.value(T[i], s, into=into, out_of=rest)
            cuts += 1
            if c is None:
                continue
            nd, Y = max(d, c), X | 1 << i
            if nd < dist.get(Y, INF):
                dist[Y] = nd
                heapq.heappush(heap, (nd, Y))
    return static, cuts  # not reached: the full set is always reachable
