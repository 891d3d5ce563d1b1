"""The greedy warm start (the width-1 beam of ``cpsched.strategies.min_peak.exact``) in time about
linear in the graph, for problems of any size.

``exact.beam(p, 1)`` keeps its downsets as Python-integer bitsets, so every step costs time
proportional to ``n`` and the whole greedy is quadratic (9 s at 20k ops, 220 s at 100k).
This version keeps the same state as arrays instead: for each buffer how many of its users
have still to run, for each op how many bytes it would free if it ran now (it is the last
user of those buffers), and the ready ops. Each step scans the ready ops only (vectorised),
so a run costs ``O(n * ready + edges)``, and picks the same op as the width-1 beam:

1. a "free move" if there is one: the lowest-numbered ready op that runs within the
   bottleneck so far and frees at least as much as it keeps, in every scenario;
2. otherwise the ready op with the smallest ``(new bottleneck, live bytes after, index)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from cpsched.cp.memory.problem import Problem

# How often (in steps) the greedy asks ``should_stop``.
CHECK_EVERY = 2048


def greedy(
    p: Problem,
    coef: Sequence[float] | np.ndarray | None = None,
    caps: Sequence[int] | np.ndarray | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> tuple[list[int] | None, float]:
    """Greedy order of ``p`` (local), as ``exact.beam(p, 1)`` would build it, and its
    bottleneck. ``(None, inf)`` if the caps leave no op to run, or if ``should_stop()``
    said so before the order was complete."""
    n, S = p.n, p.n_scenarios
    if n == 0:
        return [], _cost_scalar(p.floor, coef)
    sizes = np.asarray(p.sizes, dtype=np.int64)
    step = p.transient.astype(np.int64) + p.base[:, None]  # [S, n] bytes while v runs
    kept = np.zeros((S, n), dtype=np.int64)  # bytes v defines that outlive its step
    mass = np.zeros(S, dtype=np.int64)  # live bytes between steps
    defined = p.buf_def >= 0
    n_users = np.fromiter((len(u) for u in p.buf_users), dtype=np.int64, count=p.nb)
    alive = (n_users > 0) | p.buf_out
    for s in range(S):
        np.add.at(step[s], p.buf_def[defined], sizes[s, defined])
        np.add.at(kept[s], p.buf_def[defined & alive], sizes[s, defined & alive])
    mass += sizes[:, ~defined & alive].sum(axis=1)
    # buffers freed by their last user: remaining users per buffer, and per op the bytes
    # it frees if it runs now
    tracked = (n_users > 0) & ~p.buf_out
    remaining = np.where(tracked, n_users, 0)
    frees = np.zeros((S, n), dtype=np.int64)
    uses: list[list[int]] = [[] for _ in range(n)]
    for b in np.flatnonzero(tracked).tolist():
        us = p.buf_users[b]
        for u in us:
            uses[u].append(b)
        if len(us) == 1:
            frees[:, us[0]] += sizes[:, b]
    done = np.zeros(n, dtype=bool)
    coef_a = None if coef is None else np.asarray(coef, dtype=float)[:, None]
    caps_a = None if caps is None else np.asarray(caps, dtype=float)[:, None]
    single = S == 1 and coef is None
    g: float = _cost_scalar(p.floor, coef)
    # free moves need delta = kept - frees <= 0 in every scenario; delta only falls
    indeg = np.fromiter((len(ps) for ps in p.preds), dtype=np.int64, count=n)
    succs = p.succs
    ready = np.empty(n, dtype=np.int64)
    k = 0
    for v in np.flatnonzero(indeg == 0).tolist():
        ready[k] = v
        k += 1
    if single and caps is None:
        return _greedy_one(
            p,
            sizes[0],
            step[0],
            kept[0],
            frees[0],
            int(mass[0]),
            g,
            uses,
            remaining,
            indeg,
            succs,
            ready,
            k,
            should_stop,
        )
    order: list[int] = []
    for t in range(n):
        if should_stop is not None and t % CHECK_EVERY == CHECK_EVERY - 1 and should_stop():
            return None, float("inf")
        r = ready[:k]
        run_bytes = mass[:, None] + step[:, r]  # [S, k]
        if single:
            cost = run_bytes[0].astype(float)
        else:
            scaled = run_bytes * coef_a if coef_a is not None else run_bytes.astype(float)
            cost = scaled.max(axis=0)
        if caps_a is not None:
            cost = np.where((run_bytes > caps_a).any(axis=0), np.inf, cost)
        delta = kept[:, r] - frees[:, r]  # [S, k]
        free = (cost <= g) & (delta <= 0).all(axis=0)
        if free.any():
            o = int(r[free].min())
            new_g = g
        else:
            finite = np.isfinite(cost)
            if not finite.any():
                return None, float("inf")
            key1 = np.maximum(g, cost)
            best = key1[finite].min()
            sel = finite & (key1 == best)
            key2 = delta.sum(axis=0)
            sel &= key2 == key2[sel].min()
            o = int(r[sel].min())
            new_g = float(best)
        i = int(np.flatnonzero(r == o)[0])
        k -= 1
        ready[i] = ready[k]
        g = new_g if not single else int(new_g)
        order.append(o)
        done[o] = True
        mass += kept[:, o]
        for b in uses[o]:
            remaining[b] -= 1
            left = remaining[b]
            if left == 0:
                mass -= sizes[:, b]
            elif left == 1:
                for u in p.buf_users[b]:
                    if not done[u]:
                        frees[:, u] += sizes[:, b]
                        break
        for v in succs[o]:
            indeg[v] -= 1
            if indeg[v] == 0:
                ready[k] = v
                k += 1
    return order, g


def _greedy_one(
    p, sizes, step, kept, frees, mass, g, uses, remaining, indeg, succs, ready, k, should_stop
):
    """The loop of ``greedy`` for one scenario without caps: Python ints for the scalars,
    one-dimensional arrays (about 3x faster than the general loop)."""
    n = p.n
    size = sizes.tolist()
    users = p.buf_users
    done = bytearray(n)
    remaining = remaining.tolist()
    indeg = indeg.tolist()
    where = np.full(n, -1, dtype=np.int64)  # index of each ready op in ``ready``
    where[ready[:k]] = np.arange(k)
    order: list[int] = []
    for t in range(n):
        if should_stop is not None and t % CHECK_EVERY == CHECK_EVERY - 1 and should_stop():
            return None, float("inf")
        r = ready[:k]
        c = step[r]
        ok = c <= g - mass
        if ok.any():
            rk = r[ok]
            d = kept[rk] - frees[rk]
            free = d <= 0
            if free.any():
                o = int(rk[free].min())
            else:
                o = int(rk[d == d.min()].min())
        else:
            m = int(c.min())
            rk = r[c == m]
            if len(rk) > 1:
                d = kept[rk] - frees[rk]
                rk = rk[d == d.min()]
            o = int(rk.min())
            g = mass + m
        i = int(where[o])
        k -= 1
        last = int(ready[k])
        ready[i] = last
        where[last] = i
        order.append(o)
        done[o] = 1
        mass += int(kept[o])
        for b in uses[o]:
            remaining[b] -= 1
            left = remaining[b]
            if left == 0:
                mass -= size[b]
            elif left == 1:
                for u in users[b]:
                    if not done[u]:
                        frees[u] += size[b]
                        break
        for v in succs[o]:
            indeg[v] -= 1
            if indeg[v] == 0:
                ready[k] = v
                where[v] = k
                k += 1
    return order, g


def _cost_scalar(x: np.ndarray, coef) -> float:
    if coef is None and len(x) == 1:
        return int(x[0])
    c = np.ones(len(x)) if coef is None else np.asarray(coef, dtype=float)
    return float(max(ci * int(xi) for ci, xi in zip(c, x)))
