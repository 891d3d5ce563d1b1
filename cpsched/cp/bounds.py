"""Lower bounds beyond the per-op "forced live" bound.

``projection_bound`` solves relaxations on windows of a good order exactly
(``cpsched.cp.problem.project``: ops outside the window are dropped, buffers that cross the
window are kept, defined at the first window op that must follow their producer). Every
order of the full problem induces an order of the relaxation that is no larger at any
step, so the relaxation's optimum -- or, when the search is stopped, the smallest
bottleneck left in its queue -- is a lower bound for the whole problem. Windows are taken
around the peak step of the reference order and grown while the search keeps finishing;
the best bound over all windows is returned.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from cpsched.cp.problem import Problem, project
from cpsched.cp.search import best_first


@dataclass
class BoundStats:
    tried: list = field(default_factory=list)    # (a, b, bound, reason, seconds)
    seconds: float = 0.0


def scalar_lower_bound(p: Problem, coef: np.ndarray | None) -> float:
    lb = p.lower_bound
    if coef is None:
        return float(lb[0])
    return float(max(c * x for c, x in zip(coef, lb)))


def window_plan(n: int, centre: int, sizes: Sequence[int] = (40, 64, 100, 160, 256, 400)
                ) -> list[tuple[int, int]]:
    """Windows ``[a, b)`` to try, smallest first: for each size, the peak step at 60 %, then
    at 40 % of the window (clipped to the order)."""
    out: list[tuple[int, int]] = []
    for w in list(sizes) + [n]:
        w = min(n, w)
        for frac in (0.6, 0.4):
            a = int(min(max(0, centre - int(frac * w)), n - w))
            if (a, a + w) not in out:
                out.append((a, a + w))
        if w == n:
            break
    return out


def projection_bound(p: Problem, ref_order: Sequence[int], *, upper: float, deadline: float,
                     coef: np.ndarray | None = None, caps: Sequence[int] | None = None,
                     per_try: float = 20.0, max_expansions: int | None = None,
                     max_tries: int | None = None, max_states: int = 1_000_000,
                     on_bound: Callable[[float], None] | None = None,
                     known: float = 0.0) -> tuple[float, BoundStats]:
    """Best lower bound on ``p``'s bottleneck found before ``deadline``.

    Windows of the reference order around its peak step, growing in size
    (``window_plan``); each relaxation is searched with the upper bound as a cut-off, and a
    search stopped early still yields its queue minimum. The whole problem itself (the last
    window) is skipped: it is not a relaxation worth solving again.
    """
    t0 = time.perf_counter()
    st = BoundStats()
    n = p.n
    best = max(known, scalar_lower_bound(p, coef))
    if n < 2:
        return best, st
    ref = list(ref_order)
    use = p.usage(ref).astype(float)
    if coef is not None:
        use = use * np.asarray(coef, dtype=float)[:, None]
    use = use.max(axis=0)
    centre = int(np.argmax(use))
    plan = [w for w in window_plan(n, centre) if w[1] - w[0] < n]
    tries = 0
    for a, b in plan:
        if time.perf_counter() >= deadline or best >= upper:
            break
        if max_tries is not None and tries >= max_tries:
            break
        remaining = deadline - time.perf_counter()
        q = project(p, ref[a:b], ref)
        r = best_first(q, upper=upper, time_limit=min(per_try, remaining), coef=coef,
                       caps=caps, max_expansions=max_expansions, max_states=max_states)
        tries += 1
        bound = r.cost if r.order is not None else r.bound
        st.tried.append((a, b, float(bound), r.reason, round(r.seconds, 2)))
        if bound > best:
            best = float(bound)
            if on_bound is not None:
                on_bound(best)
    st.seconds = time.perf_counter() - t0
    return min(best, upper), st
