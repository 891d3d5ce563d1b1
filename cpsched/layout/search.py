"""Exact layout search: does every buffer fit under a capacity?

A depth-first search over canonical layouts (the ideas of MiniMalloc, Moffitt,
ASPLOS 2023, written anew here): each step places one unplaced buffer at its lowest
possible offset (the top of the placed buffers it meets in time), in non-decreasing order
of offset and, at one offset, of a fixed preorder; every layout can be shifted down into
one such layout, so an exhausted search proves that none fits. Pruned by:

- dominance: a buffer whose lowest offset is at or above the lowest top any unplaced
  buffer can reach is not placed next (the latter fits below it, so a layout exists
  where it comes first);
- section inference: in each stretch of time, the unplaced bytes live there sit above
  the stretch's floor (the top of its placed buffers, the lowest offset its unplaced
  buffers can take, and the offset of the last placement, as offsets never go down), and
  must fit under the capacity;
- decomposition: where no unplaced buffer is live across a point in time, the two sides
  are independent problems, solved one after the other.

Preorders (by the largest total of a stretch the buffer is live in, by area, by
lifetime...) are tried in turn with a node limit that doubles, so that one poor order
does not hold the search.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

FOUND, EXHAUSTED, ABORTED = "found", "exhausted", "aborted"
_INF = 1 << 62

# preorder keys: T the largest remaining total of a stretch the buffer is live in,
# A area, L lifetime, Z size (all descending)
PREORDERS = ("TA", "AT", "TLA")
# the arrays engine from this many stretches of time per buffer (measured on MiniMalloc's
# instances, 6.6 to 40 per buffer, and on graphs' buffers, 50 to 110)
ARRAYS_FROM = 16


@dataclass
class SearchResult:
    status: str  # FOUND, EXHAUSTED (proof that nothing fits) or ABORTED
    offsets: list[int] | None
    nodes: int


class Instance:
    """The buffers of a problem in compressed time: buffer ``i`` is live in the stretches
    ``lo[i]..hi[i]`` (inclusive); zero-size buffers are left out (offset 0)."""

    def __init__(self, lower: Sequence[int], upper: Sequence[int], size: Sequence[int]):
        self.n_all = len(size)
        keep = [i for i in range(len(size)) if size[i] > 0 and upper[i] > lower[i]]
        self.index = keep
        points = sorted({lower[i] for i in keep} | {upper[i] for i in keep})
        at = {t: k for k, t in enumerate(points)}
        self.lo = [at[lower[i]] for i in keep]
        self.hi = [at[upper[i]] - 1 for i in keep]
        self.size = [int(size[i]) for i in keep]
        self.length = [upper[i] - lower[i] for i in keep]
        n = len(keep)
        self.n = n
        self.n_sections = max(len(points) - 1, 0)
        self.sec: list[list[int]] = [[] for _ in range(self.n_sections)]
        for i in range(n):
            for k in range(self.lo[i], self.hi[i] + 1):
                self.sec[k].append(i)
        self.total = [sum(self.size[i] for i in s) for s in self.sec]
        self.coverage = sum(len(s) for s in self.sec)
        lo = np.array(self.lo, dtype=np.int64)
        hi = np.array(self.hi, dtype=np.int64)
        self.neighbours: list[list[int]] = []
        for i in range(n):
            m = (lo <= hi[i]) & (hi >= lo[i])
            m[i] = False
            self.neighbours.append(np.flatnonzero(m).tolist())

    def max_live(self) -> int:
        return max(self.total, default=0)

    def offsets_of(self, placed: list[int]) -> list[int]:
        out = [0] * self.n_all
        for j, i in enumerate(self.index):
            out[i] = placed[j]
        return out


def search(
    inst: Instance,
    capacity: int,
    preorder: str = "TA",
    node_limit: int | None = None,
    stop: Callable[[], bool] | None = None,
    engine: str = "auto",
) -> SearchResult:
    """One depth-first search for a layout within ``capacity`` bytes, the unplaced
    buffers tried in ``preorder``; ABORTED after ``node_limit`` nodes or when ``stop()``
    (asked every few nodes) says so. ``engine``: ``lists`` (plain Python, for buffers
    that live over few stretches of time), ``arrays`` (numpy, for long lifetimes), or
    ``auto``: by the stretches per buffer. Both visit the same nodes."""
    if engine == "auto":
        engine = "arrays" if inst.coverage >= ARRAYS_FROM * max(inst.n, 1) else "lists"
    if engine not in ("arrays", "lists"):
        raise ValueError(f"unknown search engine {engine!r}")
    if inst.max_live() > capacity:
        return SearchResult(EXHAUSTED, None, 0)
    if inst.n == 0:
        return SearchResult(FOUND, inst.offsets_of([]), 0)
    if engine == "arrays":
        return _search_arrays(inst, capacity, preorder, node_limit, stop)
    return _search_lists(inst, capacity, preorder, node_limit, stop)


def _key(preorder: str, tot, area, length, size) -> Callable[[int], tuple]:
    """The preorder's sort key: descending by each letter's figure, then by index."""
    figures = {"T": tot, "A": area, "L": length, "Z": size}
    if not preorder or any(c not in figures for c in preorder):
        raise ValueError(f"unknown preorder {preorder!r}")
    cols = [figures[c] for c in preorder]
    return lambda i: tuple(-col[i] for col in cols) + (i,)


def _search_lists(  # with at least one buffer, and the largest stretch within capacity
    inst: Instance,
    capacity: int,
    preorder: str,
    node_limit: int | None,
    stop: Callable[[], bool] | None,
) -> SearchResult:
    state = _ListSearch(inst, capacity, preorder, node_limit, stop)
    return _run_parts(inst, state.cuts, state.solve_part, state.sol, lambda: state.nodes)


class _ListSearch:
    """The state of one ``_search_lists`` run, in plain lists (each node reads them into
    locals: the inner loops are Python)."""

    def __init__(self, inst: Instance, capacity: int, preorder: str, node_limit, stop):
        n, S = inst.n, inst.n_sections
        self.inst, self.C, self.preorder, self.stop = inst, capacity, preorder, stop
        self.lo, self.hi, self.size, self.sec = inst.lo, inst.hi, inst.size, inst.sec
        self.nb = inst.neighbours
        self.limit = node_limit if node_limit is not None else _INF
        self.off = [-1] * n  # offset of a placed buffer, -1 while unplaced
        self.mo = [0] * n  # lowest offset an unplaced buffer can take
        self.sol = [0] * n
        self.top = [0] * S  # top of the placed buffers in each stretch
        sec = inst.sec
        # lowest ``mo`` of a stretch's unplaced, and how many unplaced take it
        self.sm = [0 if sec[k] else _INF for k in range(S)]
        self.cnt = [len(sec[k]) for k in range(S)]
        self.total = list(inst.total)  # unplaced bytes in each stretch
        self.cuts = [0] * S  # unplaced buffers live in both stretch k and k + 1
        for i in range(n):
            for k in range(inst.lo[i], inst.hi[i]):
                self.cuts[k] += 1
        self.area = [inst.size[i] * inst.length[i] for i in range(n)]
        self.nodes = 0

    def preordered(self, members: list[int]) -> tuple[list[int], dict[int, int]]:
        total, lo, hi = self.total, self.lo, self.hi
        tot = {i: max(total[lo[i] : hi[i] + 1]) for i in members}
        key = _key(self.preorder, tot, self.area, self.inst.length, self.size)
        order = sorted(members, key=key)
        return order, {i: k for k, i in enumerate(order)}

    def solve_part(self, members: list[int], s0: int, s1: int) -> str:
        order, pre = self.preordered(members)
        return self.step(order, pre, s0, s1, 0, -1)

    def step(
        self, order: list[int], pre: dict[int, int], s0: int, s1: int, xl: int, pl: int
    ) -> str:
        """Place one more buffer of ``order`` (stretches ``s0..s1-1``), at ``xl`` or above
        (at ``xl``, after preorder position ``pl``), and search on."""
        self.nodes += 1
        nodes = self.nodes
        if nodes > self.limit:
            return ABORTED
        if not nodes & 15 and self.stop is not None and self.stop():
            return ABORTED
        off, mo, sol, top, sm, cnt = self.off, self.mo, self.sol, self.top, self.sm, self.cnt
        total, cuts, C = self.total, self.cuts, self.C
        lo, hi, size, sec, nb = self.lo, self.hi, self.size, self.sec, self.nb
        un = [i for i in order if off[i] < 0]
        if not un:
            return FOUND
        # dominance: nothing is placed at or above the lowest top an unplaced one reaches
        minh = min([mo[i] + size[i] for i in un])
        cands = [i for i in un if mo[i] < minh and (mo[i] > xl or (mo[i] == xl and pre[i] > pl))]
        cands.sort(key=lambda i: (mo[i], pre[i]))
        tight = None
        for b in cands:
            x = mo[b]
            sb = size[b]
            h = x + sb
            a, z = lo[b], hi[b]
            if x > xl:
                # every later placement is at x or above: a stretch outside b's lifetime
                # whose unplaced bytes do not fit above x rules b out
                if tight is None:
                    tight = sorted((k for k in range(s0, s1) if total[k]), key=lambda k: -total[k])
                bad = False
                for k in tight:
                    if x + total[k] <= C:
                        break
                    if k < a or k > z:
                        bad = True
                        break
                if bad:
                    continue
            off[b] = x
            sol[b] = x
            saved: list[tuple[int, int, int]] = []  # (stretch, sm, cnt) to restore
            redo: list[int] = []
            if max(sm[a : z + 1]) == x:
                for k in range(a, z + 1):
                    if sm[k] == x:
                        saved.append((k, x, cnt[k]))
                        c = cnt[k] - 1
                        cnt[k] = c
                        if c == 0:
                            redo.append(k)
            raised: list[tuple[int, int]] = []
            for j in nb[b]:
                if off[j] < 0:
                    old = mo[j]
                    if old < h:
                        raised.append((j, old))
                        mo[j] = h
                        lj, hj = lo[j], hi[j] + 1
                        if max(sm[lj:hj]) != old:
                            continue
                        for k in range(lj, hj):
                            if sm[k] == old:
                                saved.append((k, old, cnt[k]))
                                c = cnt[k] - 1
                                cnt[k] = c
                                if c == 0:
                                    redo.append(k)
            for k in redo:
                m = _INF
                c = 0
                for j in sec[k]:
                    if off[j] < 0:
                        v = mo[j]
                        if v < m:
                            m = v
                            c = 1
                        elif v == m:
                            c += 1
                saved.append((k, sm[k], cnt[k]))
                sm[k] = m
                cnt[k] = c
            old_top = top[a : z + 1]
            for k in range(a, z + 1):
                top[k] = h
                total[k] -= sb
            ok = True
            check: Sequence[int] = range(s0, s1) if x > xl else list(range(a, z + 1)) + redo
            for k in check:
                t = total[k]
                if t:
                    f = top[k]
                    if sm[k] > f:
                        f = sm[k]
                    if x > f:
                        f = x
                    if f + t > C:
                        ok = False
                        break
            status = EXHAUSTED
            if ok:
                parts = [s0]
                for k in range(a, z):
                    cuts[k] -= 1
                    if cuts[k] == 0:
                        parts.append(k + 1)
                if len(parts) == 1:
                    status = self.step(order, pre, s0, s1, x, pre[b])
                else:
                    parts.append(s1)
                    status = FOUND
                    for p, q in zip(parts, parts[1:]):
                        members = [i for i in order if off[i] < 0 and lo[i] < q and hi[i] >= p]
                        if members:
                            status = self.solve_part(members, p, q)
                            if status != FOUND:
                                break
                for k in range(a, z):
                    cuts[k] += 1
            top[a : z + 1] = old_top
            for k in range(a, z + 1):
                total[k] += sb
            for k, v, c in reversed(saved):
                sm[k] = v
                cnt[k] = c
            for j, v in reversed(raised):
                mo[j] = v
            off[b] = -1
            if status != EXHAUSTED:
                return status
        return EXHAUSTED


def _search_arrays(
    inst: Instance,
    capacity: int,
    preorder: str,
    node_limit: int | None,
    stop: Callable[[], bool] | None,
) -> SearchResult:
    """``_search_lists`` with numpy arrays: each node's section floors in a few array
    operations over (stretch, buffer) pairs, whatever the lifetimes' lengths."""
    n, S = inst.n, inst.n_sections
    C = capacity
    lo_l, hi_l, size_l = inst.lo, inst.hi, inst.size
    size = np.array(size_l, dtype=np.int64)
    nb = [np.array(x, dtype=np.int64) for x in inst.neighbours]
    # the non-empty stretches and their buffers, concatenated
    ne = np.array([k for k in range(S) if inst.sec[k]], dtype=np.int64)
    ptr = np.zeros(len(ne) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(inst.sec[k]) for k in ne.tolist()])
    members_of = np.array([i for k in ne.tolist() for i in inst.sec[k]], dtype=np.int64)
    limit = node_limit if node_limit is not None else _INF
    un = np.ones(n, dtype=bool)
    mo = np.zeros(n, dtype=np.int64)
    sol = [0] * n
    top = np.zeros(S, dtype=np.int64)
    total = np.array(inst.total, dtype=np.int64)
    cuts = np.zeros(S, dtype=np.int64)
    for i in range(n):
        cuts[lo_l[i] : hi_l[i]] += 1
    length = inst.length
    area = [size_l[i] * length[i] for i in range(n)]
    nodes = 0

    def solve_part(members: list[int], s0: int, s1: int) -> str:
        tot = {i: int(total[lo_l[i] : hi_l[i] + 1].max()) for i in members}
        order = np.array(sorted(members, key=_key(preorder, tot, area, length, size_l)))
        pre = np.empty(n, dtype=np.int64)
        pre[order] = np.arange(len(order))
        a = int(np.searchsorted(ne, s0))
        z = int(np.searchsorted(ne, s1))
        secs = ne[a:z]
        part_members = members_of[ptr[a] : ptr[z]]
        starts = ptr[a:z] - ptr[a]
        return step(order, pre, s0, s1, secs, part_members, starts, 0, -1)

    def step(P, pre, s0, s1, secs, sm_of, starts, xl: int, pl: int) -> str:
        nonlocal nodes
        nodes += 1
        if nodes > limit:
            return ABORTED
        if not nodes & 15 and stop is not None and stop():
            return ABORTED
        U = P[un[P]]
        if not U.size:
            return FOUND
        moU = mo[U]
        minh = int((moU + size[U]).min())
        preU = pre[U]
        ci = np.flatnonzero((moU < minh) & ((moU > xl) | ((moU == xl) & (preU > pl))))
        ci = ci[np.lexsort((preU[ci], moU[ci]))]
        for b in U[ci].tolist():
            x = int(mo[b])
            sb = size_l[b]
            h = x + sb
            a, z = lo_l[b], hi_l[b]
            if x > xl:
                over = x + total[s0:s1] > C
                if over[: a - s0].any() or over[z + 1 - s0 :].any():
                    continue
            un[b] = False
            sol[b] = x
            js = nb[b]
            js = js[un[js] & (mo[js] < h)]
            old_mo = mo[js]
            mo[js] = h
            old_top = top[a : z + 1].copy()
            top[a : z + 1] = h
            total[a : z + 1] -= sb
            floor = np.minimum.reduceat(np.where(un[sm_of], mo[sm_of], _INF), starts)
            t = total[secs]
            floor = np.maximum(np.maximum(floor, top[secs]), x)
            status = EXHAUSTED
            if not ((floor + t > C) & (t > 0)).any():
                cuts[a:z] -= 1
                zero = np.flatnonzero(cuts[a:z] == 0)
                if not zero.size:
                    status = step(P, pre, s0, s1, secs, sm_of, starts, x, int(pre[b]))
                else:
                    bounds = [s0] + [a + int(k) + 1 for k in zero] + [s1]
                    status = FOUND
                    left = P[un[P]].tolist()
                    for p, q in zip(bounds, bounds[1:]):
                        members = [i for i in left if lo_l[i] < q and hi_l[i] >= p]
                        if members:
                            status = solve_part(members, p, q)
                            if status != FOUND:
                                break
                cuts[a:z] += 1
            top[a : z + 1] = old_top
            total[a : z + 1] += sb
            mo[js] = old_mo
            un[b] = True
            if status != EXHAUSTED:
                return status
        return EXHAUSTED

    return _run_parts(inst, cuts.tolist(), solve_part, sol, lambda: nodes)


def _run_parts(
    inst: Instance,
    cuts: list[int],
    solve_part: Callable[[list[int], int, int], str],
    sol: list[int],
    nodes: Callable[[], int],
) -> SearchResult:
    """The independent parts of the whole problem, one after the other."""
    n, S = inst.n, inst.n_sections
    lo, hi, sec = inst.lo, inst.hi, inst.sec
    parts: list[tuple[int, int]] = []
    k = 0
    while k < S:
        if not sec[k]:
            k += 1
            continue
        a = k
        while k < S - 1 and cuts[k] > 0:
            k += 1
        parts.append((a, k + 1))
        k += 1
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 4 * n + 1000))
    try:
        for a, z in parts:
            members = [i for i in range(n) if lo[i] < z and hi[i] >= a]
            status = solve_part(members, a, z)
            if status != FOUND:
                return SearchResult(status, None, nodes())
    finally:
        sys.setrecursionlimit(old_limit)
    return SearchResult(FOUND, inst.offsets_of(sol), nodes())


def portfolio_search(
    inst: Instance,
    capacity: int,
    deadline: float,
    stop: Callable[[], bool] | None = None,
    preorders: Sequence[str] = PREORDERS,
) -> SearchResult:
    """Searches with each preorder in turn under a node limit that doubles each round
    (from twice the number of buffers), until one finds a layout or exhausts (a proof)
    or ``deadline`` (``time.perf_counter``) passes."""

    def halt() -> bool:
        return time.perf_counter() > deadline or (stop is not None and stop())

    limit = max(inst.n, 1)
    total_nodes = 0
    while not halt():
        limit *= 2
        for p in preorders:
            r = search(inst, capacity, p, limit, halt)
            total_nodes += r.nodes
            if r.status != ABORTED:
                return SearchResult(r.status, r.offsets, total_nodes)
            if halt():
                break
    return SearchResult(ABORTED, None, total_nodes)
