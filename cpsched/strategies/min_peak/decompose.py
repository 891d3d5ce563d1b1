"""Decomposition at cut points: ops whose place in the order is forced.

An op ``c`` that is comparable with every other op (each one is its ancestor or its
descendant) runs at step ``#ancestors(c)`` in every order, with all its ancestors before and
all its descendants after. Cutting the order before every such op splits the problem into
segments that are windows of *any* valid order: each segment's ops occupy the same steps
whatever the others do, and a buffer's live steps inside a segment depend only on that
segment's order (a buffer defined in an earlier segment and used in a later one is live
through every segment in between). So

    peak(order) = max over segments of peak(segment order)

per scenario, and the segments can be solved independently and concatenated: exact by
construction for every objective that is a function of ``max over segments`` per scenario
(one scenario, minimax, budget). Each segment is given as ``floor`` the best lower bound of
the other segments, so that it does not work to go below what the whole cannot reach.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cpsched.cp.memory.problem import Problem, window


def cut_points(p: Problem) -> list[int]:
    """Ops comparable with every other op, in step order."""
    if p.n == 0:
        return []
    n_rel = p.anc.sum(axis=1) + p.anc.sum(axis=0)
    cuts = np.flatnonzero(n_rel == p.n - 1)
    return [int(c) for c in cuts[np.argsort(p.anc.sum(axis=1)[cuts])]]


def segments(p: Problem, min_size: int = 2) -> list[tuple[int, int]]:
    """Step ranges ``[a, b)`` between cut points; tiny segments are merged into neighbours
    (a segment of fewer than ``min_size`` ops has nothing to decide)."""
    n = p.n
    if n == 0:
        return []
    steps = sorted({int(p.anc[c].sum()) for c in cut_points(p)} | {0})
    bounds = steps + [n]
    raw = [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]
    # merge runs of trivial segments (size 1) into one: they are fixed anyway
    out: list[tuple[int, int]] = []
    for a, b in raw:
        if out and (b - a < min_size) and (out[-1][1] - out[-1][0] < min_size):
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def split(p: Problem, order: Sequence[int]) -> list[Problem]:
    """The segments of ``p`` as window problems over ``order`` (any valid order), with
    ``floor`` reset to ``p.floor``; ``ops`` of each are indices of ``p``'s ops."""
    parts = []
    for a, b in segments(p):
        w = window(p, order, a, b)
        w.floor = p.floor.copy()
        w.meta["steps"] = (a, b)
        parts.append(w)
    return parts
