"""Exact best-first search over prefixes (downsets) of the precedence order, and a beam search.

An order is a path through the lattice of downsets ``D`` (sets of ops closed under
predecessors): ``{} -> D1 -> ... -> V``. The usage of the step that runs ``o`` after ``D``
depends on ``D`` and ``o`` only: ``base + transient(o) + live(D) + out(o)``, where ``live(D)``
holds the buffers defined in ``D`` (or before the problem) that some op outside ``D``
still uses (or that are needed after the problem), and ``out(o)`` what ``o`` defines.
So the minimum peak is a bottleneck shortest path, solved here by a best-first search in
order of the bottleneck so far (a Dijkstra on ``max``), as in Serenity (MLSys 2020):

- each downset is kept once, with the smallest bottleneck that reaches it;
- "free moves": if a ready op ``o`` runs at no more than the bottleneck so far and frees at
  least as much as it defines, in every scenario, some optimal completion runs ``o`` next
  (exchange argument: moving ``o`` earlier never raises a later step), so it is the only
  successor tried;
- states whose bottleneck reaches the upper bound (the best order known) are dropped.

When the queue's smallest bottleneck reaches the upper bound, the upper bound is proven
optimal; when the full set is popped, its path is optimal. Stopped early (time or state
limit), the smallest bottleneck in the queue is still a proven lower bound. With several
scenarios the bottleneck is ``max_s coef[s] * usage[s]`` and ``caps[s]`` (bytes) are hard
limits per scenario.

Downsets are Python integers used as bitsets, so this is for problems up to a few hundred
ops whose downset lattice is narrow enough (windows, segments, small graphs).
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from cpsched.cp.problem import Problem


@dataclass
class SearchResult:
    order: list[int] | None        # best order found (local), None if none
    cost: float                    # its bottleneck (inf if none)
    bound: float                   # proven lower bound on the bottleneck
    proven: bool                   # cost == bound (or infeasible proven when order is None)
    expanded: int
    states: int
    seconds: float
    reason: str                    # 'optimal' | 'ub-proven' | 'infeasible' | 'time' | 'states'


class _Tables:
    """Per-op data as Python ints/tuples for the inner loop."""

    def __init__(self, p: Problem, coef: Sequence[float] | None, caps: Sequence[int] | None):
        n, S = p.n, p.n_scenarios
        self.n, self.S = n, S
        self.full = (1 << n) - 1
        self.pred = [0] * n
        for v, ps in enumerate(p.preds):
            m = 0
            for u in ps:
                m |= 1 << u
            self.pred[v] = m
        self.succ = [list(s) for s in p.succs]
        sizes = p.sizes
        step = p.transient.copy() + p.base[:, None]
        kept = np.zeros((S, n), dtype=np.int64)
        mass0 = np.zeros(S, dtype=np.int64)
        self.uses: list[list[tuple[int, tuple[int, ...]]]] = [[] for _ in range(n)]
        for b in range(p.nb):
            d = int(p.buf_def[b])
            us = p.buf_users[b]
            alive = bool(us) or bool(p.buf_out[b])
            if d >= 0:
                step[:, d] += sizes[:, b]
                if alive:
                    kept[:, d] += sizes[:, b]
            elif alive:
                mass0 += sizes[:, b]
            if us and not p.buf_out[b]:
                m = 0
                for u in us:
                    m |= 1 << u
                sz = tuple(int(x) for x in sizes[:, b])
                for u in us:
                    self.uses[u].append((m, sz))
        self.step = [tuple(int(step[s, v]) for s in range(S)) for v in range(n)]
        self.kept = [tuple(int(kept[s, v]) for s in range(S)) for v in range(n)]
        self.mass0 = tuple(int(x) for x in mass0)
        self.coef = tuple(float(c) for c in coef) if coef is not None else None
        self.caps = tuple(float(c) for c in caps) if caps is not None else None
        floor = p.floor
        if S == 1 and coef is None:
            self.g0: float = int(floor[0])
        else:
            c = self.coef or (1.0,) * S
            self.g0 = max(c[s] * int(floor[s]) for s in range(S))

    def cost(self, mem: tuple[int, ...]) -> float:
        if self.caps is not None and any(m > c for m, c in zip(mem, self.caps)):
            return float("inf")
        if self.S == 1 and self.coef is None:
            return mem[0]
        c = self.coef or (1.0,) * self.S
        return max(ci * m for ci, m in zip(c, mem))

    def after(self, D: int, mass: tuple[int, ...], o: int) -> tuple[int, ...]:
        """Live mass after running ``o`` on top of ``D``."""
        D2 = D | (1 << o)
        freed = [0] * self.S
        for m, sz in self.uses[o]:
            if m & ~D2 == 0:
                for s in range(self.S):
                    freed[s] += sz[s]
        k = self.kept[o]
        return tuple(mass[s] + k[s] - freed[s] for s in range(self.S))

    def ready_after(self, D2: int, ready: int, o: int) -> int:
        r = ready & ~(1 << o)
        for s in self.succ[o]:
            if self.pred[s] & ~D2 == 0:
                r |= 1 << s
        return r

    def initial_ready(self) -> int:
        r = 0
        for v in range(self.n):
            if self.pred[v] == 0:
                r |= 1 << v
        return r


def _bits(x: int):
    while x:
        lo = x & -x
        yield lo.bit_length() - 1
        x ^= lo


def best_first(p: Problem, upper: float = float("inf"), time_limit: float = 10.0,
               max_states: int = 2_000_000, coef: Sequence[float] | None = None,
               caps: Sequence[int] | None = None, lower: float = 0.0,
               should_stop: Callable[[], bool] | None = None,
               on_bound: Callable[[float], None] | None = None,
               max_expansions: int | None = None) -> SearchResult:
    """Minimum bottleneck order of ``p`` (see the module docstring).

    ``upper``: the bottleneck of a known order; only strictly better orders are searched
    for, so a result with ``order=None`` and ``proven=True`` means ``upper`` is optimal
    (or, with ``upper=inf``, that the caps cannot be met). ``lower``: a known lower bound,
    used to stop as soon as an order reaches it.
    """
    t0 = time.perf_counter()
    T = _Tables(p, coef, caps)
    n = T.n
    if n == 0:
        return SearchResult([], T.g0, T.g0, True, 0, 0, 0.0, "optimal")
    g0 = T.g0
    start_ready = T.initial_ready()
    # state: D -> (g, parent D, op); queue entries: (g, -|D|, tie, D, mass, ready)
    best: dict[int, tuple[float, int, int]] = {0: (g0, -1, -1)}
    tie = 0
    pq = [(g0, 0, tie, 0, T.mass0, start_ready)]
    expanded = 0
    reason = "exhausted"
    found: int | None = None
    found_g = float("inf")
    last_bound = -1.0
    while pq:
        g, negk, _, D, mass, ready = heapq.heappop(pq)
        if best[D][0] < g:
            continue
        if g >= upper:
            reason = "ub-proven"
            pq.insert(0, (g, negk, 0, D, mass, ready))  # keep its bound for the report
            break
        if D == T.full:
            found, found_g, reason = D, g, "optimal"
            break
        expanded += 1
        if max_expansions is not None and expanded > max_expansions:
            reason = "work"
            pq.insert(0, (g, negk, 0, D, mass, ready))
            break
        if expanded & 1023 == 0:
            if time.perf_counter() - t0 > time_limit:
                reason = "time"
                pq.insert(0, (g, negk, 0, D, mass, ready))
                break
            if len(best) > max_states:
                reason = "states"
                pq.insert(0, (g, negk, 0, D, mass, ready))
                break
            if should_stop is not None and should_stop():
                reason = "stopped"
                pq.insert(0, (g, negk, 0, D, mass, ready))
                break
            if on_bound is not None and g > last_bound:
                last_bound = g
                on_bound(max(g, lower))
        cands = list(_bits(ready))
        # free move: runs within the bottleneck so far and does not grow the live set
        succ = None
        for o in cands:
            st = T.step[o]
            mem = tuple(mass[s] + st[s] for s in range(T.S))
            c = T.cost(mem)
            if c <= g:
                m2 = T.after(D, mass, o)
                if all(m2[s] <= mass[s] for s in range(T.S)):
                    succ = [(o, g, m2)]
                    break
        if succ is None:
            succ = []
            for o in cands:
                st = T.step[o]
                c = T.cost(tuple(mass[s] + st[s] for s in range(T.S)))
                if c >= upper:
                    continue
                succ.append((o, max(g, c), None))
        for o, c, m2 in succ:
            D2 = D | (1 << o)
            prev = best.get(D2)
            if prev is not None and prev[0] <= c:
                continue
            if m2 is None:
                m2 = T.after(D, mass, o)
            best[D2] = (c, D, o)
            tie += 1
            heapq.heappush(pq, (c, negk - 1, tie, D2, m2, T.ready_after(D2, ready, o)))
    seconds = time.perf_counter() - t0
    if found is not None:
        order = _path(best, found)
        return SearchResult(order, found_g, found_g, True, expanded, len(best), seconds, reason)
    # no order better than `upper` found
    if reason in ("ub-proven", "exhausted"):
        bound = upper
        return SearchResult(None, float("inf"), bound, True, expanded, len(best), seconds,
                            "ub-proven" if upper < float("inf") else "infeasible")
    # stopped early: the smallest live queue entry bounds every unexplored completion
    bound = min((e[0] for e in pq if best.get(e[3], (float("inf"),))[0] >= e[0]),
                default=upper)
    bound = max(bound, lower)
    return SearchResult(None, float("inf"), min(bound, upper), False, expanded, len(best),
                        seconds, reason)


def _path(best: dict[int, tuple[float, int, int]], D: int) -> list[int]:
    out = []
    while D != 0:
        _, parent, o = best[D]
        out.append(o)
        D = parent
    out.reverse()
    return out


def beam(p: Problem, width: int = 64, coef: Sequence[float] | None = None,
         caps: Sequence[int] | None = None, time_limit: float = 10.0) -> tuple[list[int] | None, float]:
    """Beam search over downsets, level by level, keeping the ``width`` best states
    (by bottleneck, then live bytes). Returns ``(order, bottleneck)``; a heuristic."""
    t0 = time.perf_counter()
    T = _Tables(p, coef, caps)
    n = T.n
    if n == 0:
        return [], T.g0
    level = {0: (T.g0, T.mass0, T.initial_ready(), ())}
    for _ in range(n):
        nxt: dict[int, tuple] = {}
        for D, (g, mass, ready, path) in level.items():
            cands = list(_bits(ready))
            succ = None
            for o in cands:
                st = T.step[o]
                c = T.cost(tuple(mass[s] + st[s] for s in range(T.S)))
                if c <= g:
                    m2 = T.after(D, mass, o)
                    if all(m2[s] <= mass[s] for s in range(T.S)):
                        succ = [(o, g, m2)]
                        break
            if succ is None:
                succ = []
                for o in cands:
                    st = T.step[o]
                    c = T.cost(tuple(mass[s] + st[s] for s in range(T.S)))
                    if c == float("inf"):
                        continue
                    succ.append((o, max(g, c), None))
            for o, c, m2 in succ:
                D2 = D | (1 << o)
                prev = nxt.get(D2)
                if prev is not None and prev[0] <= c:
                    continue
                if m2 is None:
                    m2 = T.after(D, mass, o)
                nxt[D2] = (c, m2, T.ready_after(D2, ready, o), (path, o))
        if not nxt:
            return None, float("inf")
        if len(nxt) > width:
            keep = sorted(nxt.items(), key=lambda kv: (kv[1][0], sum(kv[1][1]), kv[0]))[:width]
            nxt = dict(keep)
        level = nxt
        if time.perf_counter() - t0 > time_limit and width > 1:
            width = max(1, width // 4)
    (D, (g, mass, ready, path)), = [min(level.items(), key=lambda kv: kv[1][0])]
    order = []
    while path:
        path, o = path
        order.append(o)
    order.reverse()
    return order, g
