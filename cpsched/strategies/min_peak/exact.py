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
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from cpsched.cp.memory.problem import Problem
from cpsched.cp.runtime import interrupted


@dataclass
class SearchResult:
    order: list[int] | None  # best order found (local), None if none
    cost: float  # its bottleneck (inf if none)
    bound: float  # proven lower bound on the bottleneck
    proven: bool  # cost == bound (or infeasible proven when order is None)
    expanded: int
    states: int
    seconds: float
    reason: str  # 'optimal' | 'ub-proven' | 'infeasible' | 'time' | 'states'


class _Tables:
    """Per-op data as Python ints/tuples for the inner loop."""

    def __init__(
        self,
        p: Problem,
        coef: Sequence[float] | np.ndarray | None,
        caps: Sequence[int] | np.ndarray | None,
    ):
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

    def setup_lookahead(self, p: Problem) -> None:
        """Data for ``h(D)``: a lower bound on every step still to come after ``D``.

        For each op v not in D: the bytes forced live at v in every order
        (``op_lower_bounds``), plus the buffers already live after D that are not counted
        there but are still needed at or after v (defined in D by an op unordered with v).
        """
        n = self.n
        eye = np.eye(n, dtype=bool)
        selfanc = p.anc | eye
        selfdesc = p.desc | eye
        nb = p.nb
        after = np.zeros((n, nb), dtype=bool)
        U = np.zeros((nb, n), dtype=bool)
        for b, us in enumerate(p.buf_users):
            if us:
                after[:, b] = selfdesc[:, us].any(axis=1)
                U[b, us] = True
        after[:, p.buf_out] = True
        d = p.buf_def
        M = after.copy()
        M[:, d >= 0] &= ~selfanc[:, d[d >= 0]]
        M[:, d < 0] = False
        self.h_static = p.op_lower_bounds.astype(np.int64)  # [S, n]
        self.h_M = M.astype(np.int64)  # [n, nb]
        self.h_U = U
        self.h_out = np.asarray(p.buf_out, dtype=bool)
        self.h_def = d
        self.h_sizes = p.sizes.astype(np.int64)  # [S, nb]
        self.h_nbytes = (n + 7) // 8
        self.h_coef = None if self.coef is None else np.asarray(self.coef, dtype=float)
        self.h_caps = None if self.caps is None else np.asarray(self.caps, dtype=float)

    def h(self, D: int) -> float:
        n = self.n
        Db = np.unpackbits(
            np.frombuffer(D.to_bytes(self.h_nbytes, "little"), dtype=np.uint8), bitorder="little"
        )[:n].astype(bool)
        notD = ~Db
        if not notD.any():
            return 0.0
        def_in = np.where(self.h_def >= 0, Db[np.maximum(self.h_def, 0)], True)
        alive = (self.h_U & notD[None, :]).any(axis=1) | self.h_out
        L = def_in & alive
        H = self.h_static[:, notD]
        if L.any():
            H = H + self.h_sizes[:, L] @ self.h_M[np.ix_(notD, L)].T
        if self.h_caps is not None and (H > self.h_caps[:, None]).any():
            return float("inf")
        if self.h_coef is None:
            return float(H.max()) if self.S == 1 else float(H.max())
        return float((H * self.h_coef[:, None]).max())

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


def best_first(
    p: Problem,
    upper: float = float("inf"),
    time_limit: float = 10.0,
    max_states: int = 2_000_000,
    coef: Sequence[float] | np.ndarray | None = None,
    caps: Sequence[int] | np.ndarray | None = None,
    lower: float = 0.0,
    should_stop: Callable[[], bool] | None = None,
    on_bound: Callable[[float], None] | None = None,
    max_expansions: int | None = None,
    lookahead: bool = False,
    free_moves: bool = True,
) -> SearchResult:
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
    if T.S == 1 and not lookahead:
        c = 1.0 if coef is None else float(coef[0])
        if c > 0:
            r = _best_first_1(
                p,
                T,
                upper / c,
                time_limit,
                max_states,
                lower / c,
                should_stop,
                (lambda b: on_bound(b * c)) if on_bound else None,
                max_expansions,
                t0,
                free_moves,
            )
            if coef is not None:
                r.cost, r.bound = r.cost * c, r.bound * c
            return r
    if lookahead:
        T.setup_lookahead(p)
    start_ready = T.initial_ready()
    # state: D -> (g, parent D, op); queue entries: (f, -|D|, tie, D, g, mass, ready) with
    # f = max(g, h(D)) (f = g without lookahead)
    best: dict[int, tuple[float, int, int]] = {0: (g0, -1, -1)}
    dead: set[int] = set()
    tie = 0
    f0 = max(g0, T.h(0)) if lookahead else g0
    pq = [(f0, 0, tie, 0, g0, T.mass0, start_ready)]
    expanded = 0
    reason = "exhausted"
    found: int | None = None
    found_g = float("inf")
    last_bound = -1.0
    stop_entry = None
    while pq:
        entry = heapq.heappop(pq)
        f, negk, _, D, g, mass, ready = entry
        if best[D][0] < g:
            continue
        if f >= upper:
            reason = "ub-proven"
            stop_entry = entry
            break
        if D == T.full:
            found, found_g, reason = D, g, "optimal"
            break
        expanded += 1
        if max_expansions is not None and expanded > max_expansions:
            reason, stop_entry = "work", entry
            break
        if expanded & 1023 == 0:
            stopped = _poll(t0, time_limit, len(best), max_states, should_stop)
            if stopped is not None:
                reason, stop_entry = stopped, entry
                break
            if on_bound is not None and f > last_bound:
                last_bound = f
                on_bound(max(f, lower))
        m2: tuple[int, ...] | None
        for o, c, m2 in _successors(T, D, g, mass, ready, upper, free_moves):
            D2 = D | (1 << o)
            prev = best.get(D2)
            if prev is not None and prev[0] <= c:
                continue
            if lookahead:
                if D2 in dead:
                    continue
                h2 = T.h(D2)
                if h2 >= upper:
                    dead.add(D2)
                    continue
                f2 = max(c, h2)
            else:
                f2 = c
            if m2 is None:
                m2 = T.after(D, mass, o)
            best[D2] = (c, D, o)
            tie += 1
            heapq.heappush(pq, (f2, negk - 1, tie, D2, c, m2, T.ready_after(D2, ready, o)))
    live = [e[0] for e in pq if best.get(e[3], (float("inf"),))[0] >= e[4]]
    if stop_entry is not None:
        live.append(stop_entry[0])
    return _result(best, found, found_g, reason, upper, lower, live, expanded, t0)


def _best_first_1(
    p: Problem,
    T: _Tables,
    upper: float,
    time_limit: float,
    max_states: int,
    lower: float,
    should_stop,
    on_bound,
    max_expansions,
    t0,
    free_moves: bool = True,
) -> SearchResult:
    """``best_first`` for one scenario: plain ints in the inner loop (about 2x faster)."""
    n = T.n
    step = [s[0] for s in T.step]
    kept = [k[0] for k in T.kept]
    uses = [[(m, sz[0]) for m, sz in T.uses[o]] for o in range(n)]
    pred, succ, full = T.pred, T.succ, T.full
    cap = T.caps[0] if T.caps is not None else float("inf")
    g0 = T.g0
    mass0 = T.mass0[0]
    ready0 = T.initial_ready()
    best: dict[int, tuple] = {0: (g0, -1, -1)}
    pq = [(g0, 0, 0, 0, mass0, ready0)]
    tie = 0
    expanded = 0
    reason = "exhausted"
    found = None
    found_g = float("inf")
    last_bound = -1.0
    stop_entry = None
    heappop, heappush = heapq.heappop, heapq.heappush
    while pq:
        entry = heappop(pq)
        g, negk, _, D, mass, ready = entry
        if best[D][0] < g:
            continue
        if g >= upper:
            reason, stop_entry = "ub-proven", entry
            break
        if D == full:
            found, found_g, reason = D, g, "optimal"
            break
        expanded += 1
        if max_expansions is not None and expanded > max_expansions:
            reason, stop_entry = "work", entry
            break
        if expanded & 1023 == 0:
            stopped = _poll(t0, time_limit, len(best), max_states, should_stop)
            if stopped is not None:
                reason, stop_entry = stopped, entry
                break
            if on_bound is not None and g > last_bound:
                last_bound = g
                on_bound(max(g, lower))
        cand = []
        free: tuple[int, float, int] | None = None
        c: float
        x = ready
        while x:
            lo = x & -x
            x ^= lo
            o = lo.bit_length() - 1
            c = mass + step[o]
            if c > cap:
                continue
            if c <= g and free_moves:
                D2 = D | lo
                fr = 0
                for m, sz in uses[o]:
                    if m & ~D2 == 0:
                        fr += sz
                if kept[o] <= fr:
                    free = (o, g, mass + kept[o] - fr)
                    break
            if c < upper:
                cand.append((o, c if c > g else g))
        succs: Sequence[tuple[int, float, int | None]]
        if free is not None:
            succs = (free,)
        else:
            succs = [(o, c, None) for o, c in cand]
        for o, c, m2 in succs:
            bit = 1 << o
            D2 = D | bit
            prev = best.get(D2)
            if prev is not None and prev[0] <= c:
                continue
            if m2 is None:
                fr = 0
                for m, sz in uses[o]:
                    if m & ~D2 == 0:
                        fr += sz
                m2 = mass + kept[o] - fr
            best[D2] = (c, D, o)
            r2 = ready & ~bit
            for s_ in succ[o]:
                if pred[s_] & ~D2 == 0:
                    r2 |= 1 << s_
            tie += 1
            heappush(pq, (c, negk - 1, tie, D2, m2, r2))
    live = [e[0] for e in pq if best.get(e[3], (float("inf"),))[0] >= e[0]]
    if stop_entry is not None:
        live.append(stop_entry[0])
    return _result(best, found, found_g, reason, upper, lower, live, expanded, t0)


def _successors(
    T: _Tables, D: int, g: float, mass, ready: int, upper: float, free_moves: bool
) -> list[tuple[int, float, tuple[int, ...] | None]]:
    """The moves out of state ``D`` (bottleneck ``g``, memory ``mass``): one free move if
    there is one (it runs within the bottleneck so far and does not grow the live set),
    else every ready op below ``upper``; as (op, cost, memory after it or None: computed
    when expanded)."""
    cands = list(_bits(ready))
    for o in cands if free_moves else ():
        st = T.step[o]
        mem = tuple(mass[s] + st[s] for s in range(T.S))
        c = T.cost(mem)
        if c <= g:
            m2 = T.after(D, mass, o)
            if all(m2[s] <= mass[s] for s in range(T.S)):
                return [(o, g, m2)]
    succ: list[tuple[int, float, tuple[int, ...] | None]] = []
    for o in cands:
        st = T.step[o]
        c = T.cost(tuple(mass[s] + st[s] for s in range(T.S)))
        if c >= upper:
            continue
        succ.append((o, max(g, c), None))
    return succ


def _poll(t0: float, time_limit: float, states: int, max_states: int, should_stop) -> str | None:
    """Why a search stops at this checkpoint (every 1,024 expansions), or None."""
    if time.perf_counter() - t0 > time_limit or interrupted():
        return "time"
    if states > max_states:
        return "states"
    if should_stop is not None and should_stop():
        return "stopped"
    return None


def _result(best, found, found_g, reason, upper, lower, live, expanded, t0) -> SearchResult:
    """A search's answer: the order found, or that none better than ``upper`` exists
    (proven when the queue ran out or reached ``upper``), or, stopped early, the bound the
    smallest ``live`` queue entry gives every unexplored completion."""
    seconds = time.perf_counter() - t0
    if found is not None:
        order = _path(best, found)
        return SearchResult(order, found_g, found_g, True, expanded, len(best), seconds, reason)
    if reason in ("ub-proven", "exhausted"):
        return SearchResult(
            None,
            float("inf"),
            upper,
            True,
            expanded,
            len(best),
            seconds,
            "ub-proven" if upper < float("inf") else "infeasible",
        )
    bound = max(min(live, default=upper), lower)
    return SearchResult(
        None, float("inf"), min(bound, upper), False, expanded, len(best), seconds, reason
    )


def _path(best: dict[int, tuple[float, int, int]], D: int) -> list[int]:
    out = []
    while D != 0:
        _, parent, o = best[D]
        out.append(o)
        D = parent
    out.reverse()
    return out


def beam(
    p: Problem,
    width: int = 64,
    coef: Sequence[float] | None = None,
    caps: Sequence[int] | None = None,
    time_limit: float = 10.0,
) -> tuple[list[int] | None, float]:
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
            succ: list[tuple[int, float, tuple[int, ...] | None]] | None = None
            m2: tuple[int, ...] | None
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
        if (time.perf_counter() - t0 > time_limit or interrupted()) and width > 1:
            width = max(1, width // 4)
    ((D, (g, mass, ready, path)),) = [min(level.items(), key=lambda kv: kv[1][0])]
    order: list[int] = []
    while path:
        path, o = path
        order.append(o)
    order.reverse()
    return order, g
