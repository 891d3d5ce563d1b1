"""Budget-aware hints for the overlap solver.

``budget_hoist`` is XLA's post-processor idea (async starts as early as possible, dones as
late as possible) with the memory budget as a hard limit: starting from an order within
the budget, each start moves up towards its last producer and each done down towards its
first consumer, as far as the re-simulated peak stays within the budget in every scenario,
and a move is kept only if the timeline's objective does not get worse. It turns the
memory schedulers' orders into hints that already hide much of the communication.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from cpsched.analysis.memory import peak, simulate
from cpsched.cp.runtime import interrupted


def _no_time(deadline: float | None, slowest: float) -> bool:
    """Stop before a step that would end past ``deadline``, judged by the slowest step so
    far (a step re-simulates the order several times: a second or more at 100k ops)."""
    return interrupted() or (deadline is not None and time.perf_counter() + slowest > deadline)


def _move(order: list[int], i: int, j: int) -> list[int]:
    out = list(order)
    x = out.pop(i)
    out.insert(j, x)
    return out


def budget_hoist(
    graph,
    scenarios,
    order: Sequence[int],
    budget: np.ndarray,
    starts: np.ndarray,
    dones: np.ndarray,
    objective: Callable[[list[int]], float],
    ok: Callable[[list[int]], bool] | None = None,
    passes: int = 2,
    deadline: float | None = None,
    max_steps: int | None = None,
) -> list[int]:
    """Hoist ``starts`` / sink ``dones`` of ``order`` within ``budget`` (see module doc).

    ``objective(order)`` (lower is better) judges each move; ``ok(order)`` is an extra
    feasibility check (in-flight limits). ``max_steps`` caps the moves tried (a budget
    that does not depend on the machine's speed, unlike ``deadline``)."""
    cur = [int(i) for i in order]
    n = len(cur)
    if n == 0 or not len(starts) or _no_time(deadline, 0.0):
        return cur  # (its set-up alone re-simulates the order: a second at 100k ops)

    def feasible(o: list[int]) -> bool:
        if not np.all(peak(graph, o, scenarios) <= budget):
            return False
        return ok(o) if ok is not None else True

    if not feasible(cur):
        return cur
    best = objective(cur)
    pred = [graph.preds(i) for i in range(graph.n_ops)]
    succ = [graph.succs(i) for i in range(graph.n_ops)]
    slowest = 0.0  # the longest step so far
    steps = 0

    def step(x: int, up: bool) -> bool:
        """Move op ``x`` (a start up, a done down) if that keeps the budget and does not
        worsen the objective; True if the objective improved."""
        nonlocal cur, best
        pos = {v: k for k, v in enumerate(cur)}
        i = pos[x]
        if up:
            lo = max((pos[int(p)] for p in pred[x]), default=-1) + 1
            j = _earliest(cur, i, lo, feasible) if lo < i else i
        else:
            hi = min((pos[int(s)] for s in succ[x]), default=n) - 1
            j = _latest(cur, i, hi, feasible) if hi > i else i
        if j == i:
            return False
        cand = _move(cur, i, j)
        v = objective(cand)
        if v > best:
            return False
        gained = v < best
        cur, best = cand, v
        return gained

    for _ in range(passes):
        improved = False
        # starts earliest first (moved up), then dones latest first (moved down); positions
        # as at the start of each sweep (a list.index per key was O(n^2) at 100k ops)
        for up in (True, False):
            pos0 = {v: k for k, v in enumerate(cur)}
            ops = [int(x) for x in (starts if up else dones) if x >= 0]
            for x in sorted(ops, key=lambda x: pos0[x] if up else -pos0[x]):
                if _no_time(deadline, slowest) or (max_steps is not None and steps >= max_steps):
                    return cur
                t_step = time.perf_counter()
                steps += 1
                improved |= step(x, up)
                slowest = max(slowest, time.perf_counter() - t_step)
        if not improved:
            break
    return cur


def _earliest(order: list[int], i: int, lo: int, feasible) -> int:
    """Smallest j in [lo, i] such that moving order[i] to j is feasible (binary search,
    memory grows roughly as the start moves up); i if none."""
    if feasible(_move(order, i, lo)):
        return lo
    a, b = lo, i  # a infeasible, b feasible (no move)
    while b - a > 1:
        m = (a + b) // 2
        if feasible(_move(order, i, m)):
            b = m
        else:
            a = m
    return b


def _latest(order: list[int], i: int, hi: int, feasible) -> int:
    if feasible(_move(order, i, hi)):
        return hi
    a, b = i, hi  # a feasible (no move), b infeasible
    while b - a > 1:
        m = (a + b) // 2
        if feasible(_move(order, i, m)):
            a = m
        else:
            b = m
    return a


def budget_repair(
    graph,
    scenarios,
    order: Sequence[int],
    budget: np.ndarray,
    starts: np.ndarray,
    dones: np.ndarray,
    objective: Callable[[list[int]], float],
    max_steps: int = 200,
    deadline: float | None = None,
) -> list[int] | None:
    """Bring an order over the budget back within it by shortening in-flight spans.

    At the first step where usage exceeds the budget (in the scenario most over it), each
    async pair in flight there can move its start to just after that step or its done to
    just before it; the move that lowers that step's usage, with the smallest excess left
    and then the best ``objective``, is applied. ``None`` if no move helps."""
    if _no_time(deadline, 0.0):
        return None
    cur = [int(i) for i in order]
    pairs = [(int(a), int(d)) for a, d in zip(starts, dones) if d >= 0]
    pred = [graph.preds(i) for i in range(graph.n_ops)]
    succ = [graph.succs(i) for i in range(graph.n_ops)]
    budget = np.asarray(budget, dtype=np.float64)

    def excess(o: list[int]) -> tuple[float, np.ndarray]:
        u = simulate(graph, o, scenarios).usage
        over = u / np.maximum(budget, 1)[:, None]
        return float(over.max()), u

    slowest = 0.0  # the longest step so far
    for _ in range(max_steps):
        if _no_time(deadline, slowest):
            return None
        t_step = time.perf_counter()
        ex, usage = excess(cur)
        if ex <= 1.0:
            return cur
        s = int(np.argmax((usage / np.maximum(budget, 1)[:, None]).max(axis=1)))
        t = int(np.flatnonzero(usage[s] > budget[s])[0])
        pos = {v: k for k, v in enumerate(cur)}
        options = []
        for a, d in pairs:
            if not (pos[a] <= t < pos[d]):
                continue
            # start to just after step t (before its done and other users)
            hi = min(pos[int(x)] for x in succ[a]) - 1
            if t + 1 <= hi and pos[a] <= t:
                options.append(_move(cur, pos[a], t))  # lands right after the op at t
            lo = max((pos[int(x)] for x in pred[d]), default=-1) + 1
            if lo <= t and pos[d] > t:
                options.append(_move(cur, pos[d], max(lo, t)))
        best = None
        for o in options:
            e2, u2 = excess(o)
            p2 = {v: k for k, v in enumerate(o)}
            if u2[s][min(t, len(o) - 1)] >= usage[s][t] and e2 >= ex:
                continue
            key = (round(e2, 9), objective(o))
            if best is None or key < best[0]:
                best = (key, o)
            del p2
        if best is None:
            return None
        cur = best[1]
        slowest = max(slowest, time.perf_counter() - t_step)
    return None


__all__ = ["budget_hoist", "budget_repair"]
