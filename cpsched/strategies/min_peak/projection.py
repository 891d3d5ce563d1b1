"""Lower bounds beyond the per-op "forced live" bound.

``projection_bound`` solves relaxations on windows of a good order exactly
(``cpsched.cp.memory.problem.project``: ops outside the window are dropped, buffers that cross the
window are kept, defined at the first window op that must follow their producer). Every
order of the full problem induces an order of the relaxation that is no larger at any
step, so the relaxation's optimum -- or, when the search is stopped, the smallest
bottleneck left in its queue -- is a lower bound for the whole problem. Windows are taken
around the peak step of the reference order and grown while the search keeps finishing;
the best bound over all windows is returned.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from cpsched.cp.memory.problem import Problem, project
from cpsched.cp.runtime import interrupted
from cpsched.strategies.min_peak.exact import best_first

# Share of the bound phase spent on a first quick pass over every window.
PASS1_SHARE = 0.35


@dataclass
class BoundStats:
    tried: list = field(default_factory=list)  # (a, b, bound, reason, seconds)
    seconds: float = 0.0


def scalar_lower_bound(p: Problem, coef: np.ndarray | None) -> float:
    lb = p.lower_bound
    if coef is None:
        return float(lb[0])
    return float(max(c * x for c, x in zip(coef, lb)))


def window_plan(n: int, centre: int, sizes: Sequence[int] | None = None) -> list[tuple[int, int]]:
    """Windows ``[a, b)`` to try, smallest first: for each size, the peak step at 65 %, then
    at 45 % of the window (clipped to the order). Default sizes: 40, 70 and 100 ops, and
    30 %, 50 % and 70 % of the problem -- on the random layered graphs the strongest
    relaxations were 74-124 ops (n250), about 150-260 (n500) and 100 (n1000), holding the
    peak in their second half."""
    if sizes is None:
        sizes = sorted(
            {min(n, w) for w in (40, 70, 100)}
            | {max(min(n, 40), int(f * n)) for f in (0.3, 0.5, 0.7)}
        )
    out: list[tuple[int, int]] = []
    for w in list(sizes) + [n]:
        w = min(n, w)
        for frac in (0.65, 0.45):
            a = int(min(max(0, centre - int(frac * w)), n - w))
            if (a, a + w) not in out:
                out.append((a, a + w))
        if w == n:
            break
    return out


def projection_bound(
    p: Problem,
    ref_order: Sequence[int],
    *,
    upper: float,
    deadline: float,
    coef: np.ndarray | None = None,
    caps: Sequence[int] | np.ndarray | None = None,
    per_try: float = 20.0,
    max_expansions: int | None = None,
    max_tries: int | None = None,
    max_states: int = 1_000_000,
    on_bound: Callable[[float], None] | None = None,
    known: float = 0.0,
) -> tuple[float, BoundStats]:
    """Best lower bound on ``p``'s bottleneck found before ``deadline``.

    Windows of the reference order around its peak step (``window_plan``); each
    relaxation is searched with the upper bound as a cut-off, and a search stopped early
    still yields its queue minimum (or the relaxation's static bound). A first pass gives
    every window a short slice; the two most promising unfinished ones then share the rest.
    The whole problem itself is not among the windows.
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
    if max_tries is not None:
        plan = plan[:max_tries]

    def attempt(a, b, tl):
        nonlocal best
        q = project(p, ref[a:b], ref)
        r = best_first(
            q,
            upper=upper,
            time_limit=tl,
            coef=coef,
            caps=caps,
            max_expansions=max_expansions,
            max_states=max_states,
            lower=scalar_lower_bound(q, coef),
        )
        bound = r.cost if r.order is not None else r.bound
        st.tried.append((a, b, float(bound), r.reason, round(r.seconds, 2)))
        if bound > best:
            best = float(bound)
            if on_bound is not None:
                on_bound(best)
        return bound, r.proven

    # pass 1: every window with a short slice (small windows often finish in it)
    total = deadline - time.perf_counter()
    slice1 = min(per_try, max(0.5, PASS1_SHARE * total / max(1, len(plan))))
    unfinished = []
    for a, b in plan:
        remaining = deadline - time.perf_counter()
        if remaining <= 0 or best >= upper or interrupted():
            break
        bound, done = attempt(a, b, min(slice1, remaining))
        if not done:
            unfinished.append((bound, b - a, a, b))
    # pass 2: the most promising unfinished windows (highest bound, then largest) again,
    # with what is left
    unfinished.sort(reverse=True)
    for k, (_, _, a, b) in enumerate(unfinished[:2]):
        remaining = deadline - time.perf_counter()
        if remaining <= 0.5 or best >= upper or interrupted():
            break
        share = 0.6 if k == 0 and len(unfinished) > 1 else 1.0
        attempt(a, b, min(per_try * 4, share * remaining))
    st.seconds = time.perf_counter() - t0
    return min(best, upper), st
