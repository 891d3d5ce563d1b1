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


def projection_bound(p: Problem, ref_order: Sequence[int], *, upper: float, deadline: float,
                     coef: np.ndarray | None = None, caps: Sequence[int] | None = None,
                     start_width: int = 40, per_try: float = 20.0,
                     max_expansions: int | None = None, max_tries: int | None = None,
                     on_bound: Callable[[float], None] | None = None,
                     known: float = 0.0) -> tuple[float, BoundStats]:
    """Best lower bound on ``p``'s bottleneck found before ``deadline``."""
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
    width = min(n, max(8, start_width))
    seen: set[tuple[int, int]] = set()
    tries = 0
    grow = True
    while time.perf_counter() < deadline and best < upper:
        if max_tries is not None and tries >= max_tries:
            break
        # windows of this width: centred on the peak, then shifted left and right
        cands = []
        for shift in (0.5, 0.75, 0.25, 1.0, 0.0):
            a = int(min(max(0, centre - int(width * shift)), n - width))
            if (a, a + width) not in seen:
                cands.append((a, a + width))
        if not cands:
            if width >= n:
                break
            width = min(n, int(width * 1.25) + 1)
            continue
        a, b = cands[0]
        seen.add((a, b))
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            break
        q = project(p, ref[a:b], ref)
        r = best_first(q, upper=upper, time_limit=min(per_try, remaining), coef=coef,
                       caps=caps, max_expansions=max_expansions, max_states=1_000_000)
        tries += 1
        bound = r.cost if r.order is not None else r.bound
        st.tried.append((a, b, float(bound), r.reason, r.seconds))
        if bound > best:
            best = float(bound)
            if on_bound is not None:
                on_bound(best)
        if r.reason in ("optimal", "ub-proven", "exhausted", "infeasible"):
            # finished: a wider window can only be as strong or stronger
            if grow and width < n:
                width = min(n, int(width * 1.25) + 1)
        elif r.reason in ("time", "states", "work"):
            # too hard at this width: try the other positions at this width, then narrower
            if len(cands) <= 1:
                width = max(8, int(width * 0.8))
                grow = False
    st.seconds = time.perf_counter() - t0
    return min(best, upper), st
