"""Large-neighbourhood search for graphs of any size: windows of the current order re-solved
with everything outside them fixed, at a cost that does not grow with the graph.

``windows.refine`` builds each window with ``problem.window``, which recomputes the usage
and the live range of every buffer of the whole order: time linear in the graph per
window, so at 100k ops a window costs more to build than to solve. Here the order's state
is kept between windows (positions, live ranges, usage per step), a window is built from
the buffers its own ops touch, and an accepted window updates only its own steps. The
window lemma of ``problem.window`` holds: reordering steps ``[a, b)`` changes the usage of
those steps only, so the whole order's peak never rises (the search is monotone).

Each round picks the highest step whose window has not been tried in its current content,
centred on it (then shifted), and solves the window exactly by the best-first search of
``cpsched.strategies.min_peak.exact`` (live-ins and live-outs of the window fixed by its ``base`` and
``buf_out``) within a small limit, or by the CP-SAT model when ``engine='cpsat'``. A new
window order is spliced in when the window's own peak drops. When every window around the
top steps was tried, the width grows.

Memory is linear in the graph: the state is a few arrays of ``n`` and ``nb`` entries.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from cpsched.analysis.memory import positions
from cpsched.cp.memory.problem import Problem
from cpsched.cp.runtime import SolverConfig, interrupted
from cpsched.strategies.min_peak.windows import solve_window

# Steps around which windows are tried per round (the highest ones).
TOP_STEPS = 64
# Largest window width the search grows to.
MAX_WIDTH = 160
# Search states per window.
MAX_STATES = 200_000


@dataclass
class LnsStats:
    windows: int = 0
    improved: int = 0
    seconds: float = 0.0
    widths: list = field(default_factory=list)  # width when each growth happened
    history: list = field(default_factory=list)  # (elapsed seconds, scalar peak)
    stopped: str = ""  # deadline | interrupted | exhausted | max_windows | stop


class OrderState:
    """A valid order of ``p`` with its positions, live ranges and usage, updated window by
    window in time proportional to the window."""

    def __init__(self, p: Problem, order: Sequence[int], coef: np.ndarray | None = None):
        self.p = p
        n = p.n
        self.order = np.asarray(order, dtype=np.int64).copy()
        self.pos = positions(self.order, n)
        self.start, self.end = p.live_ranges(self.order)
        self.usage = p.usage(self.order)  # [S, n], base and transient included
        self.coef = None if coef is None else np.asarray(coef, dtype=float)
        self.scalar = self._scalar(self.usage)
        # buffers each op touches (defines or uses), CSR
        nb = p.nb
        d = p.buf_def >= 0
        owner = [p.buf_def[d]]
        bufs = [np.flatnonzero(d)]
        n_users = np.fromiter((len(u) for u in p.buf_users), dtype=np.int64, count=nb)
        flat = np.fromiter((u for us in p.buf_users for u in us), dtype=np.int64)
        owner.append(flat)
        bufs.append(np.repeat(np.arange(nb, dtype=np.int64), n_users))
        own = np.concatenate(owner)
        buf = np.concatenate(bufs)
        srt = np.argsort(own, kind="stable")
        self.touch_idx = buf[srt]
        self.touch_ptr = np.zeros(n + 1, dtype=np.int64)
        self.touch_ptr[1:] = np.cumsum(np.bincount(own, minlength=n))
        self._local = np.full(n, -1, dtype=np.int64)

    def _scalar(self, use: np.ndarray) -> np.ndarray:
        if self.coef is None:
            return use.max(axis=0).astype(float)
        return (use * self.coef[:, None]).max(axis=0)

    def peak(self) -> float:
        return float(self.scalar.max()) if len(self.scalar) else 0.0

    def window(self, a: int, b: int) -> Problem:
        """Steps ``[a, b)`` as a problem (floor 0), like ``problem.window``."""
        p = self.p
        ops = self.order[a:b]
        loc = self._local
        loc[ops] = np.arange(len(ops))
        try:
            touched = np.unique(
                np.concatenate(
                    [self.touch_idx[self.touch_ptr[v] : self.touch_ptr[v + 1]] for v in ops]
                )
            )
            st, en = self.start[touched], self.end[touched]
            across = (st < a) & (en >= b)
            # bytes live at step a that no window op touches, plus those it touches but
            # that stay live across the whole window: the window's base
            live_a = (st <= a) & (en >= a) & ~across
            base = (
                self.usage[:, a]
                - p.transient[:, self.order[a]]
                - p.sizes[:, touched[live_a]].sum(axis=1)
            )
            keep = touched[~across]
            pos = self.pos
            defs, users, outs = [], [], []
            for j in keep.tolist():
                dj = int(p.buf_def[j])
                us = p.buf_users[j]
                defs.append(int(loc[dj]) if dj >= 0 else -1)
                users.append([int(loc[u]) for u in us if loc[u] >= 0])
                outs.append(bool(p.buf_out[j]) or any(pos[u] >= b for u in us))
            preds = [[int(loc[u]) for u in p.preds[v] if loc[u] >= 0] for v in ops.tolist()]
        finally:
            loc[ops] = -1
        S = p.n_scenarios
        return Problem(
            ops=ops.copy(),
            preds=preds,
            buf_def=np.asarray(defs, dtype=np.int64),
            buf_users=users,
            buf_out=np.asarray(outs, dtype=bool),
            sizes=p.sizes[:, keep].reshape(S, -1),
            transient=p.transient[:, ops],
            base=base.astype(np.int64),
            floor=np.zeros(S, dtype=np.int64),
            name=f"{p.name}[{a}:{b}]",
            buf_ids=keep,
        )

    def splice(self, a: int, w: Problem, local_order: Sequence[int]) -> None:
        """Put ``w``'s ops (a window built at step ``a``) in ``local_order``."""
        p = self.p
        new = w.ops[np.asarray(local_order, dtype=np.int64)]
        b = a + len(new)
        self.order[a:b] = new
        self.pos[new] = np.arange(a, b)
        pos = self.pos
        last = p.n - 1
        for j in np.asarray(w.buf_ids).tolist():
            dj = int(p.buf_def[j])
            s = int(pos[dj]) if dj >= 0 else 0
            us = p.buf_users[j]
            e = max(s, int(pos[us].max())) if us else s
            self.start[j] = s
            self.end[j] = last if p.buf_out[j] else e
        self.usage[:, a:b] = w.usage(local_order)
        self.scalar[a:b] = self._scalar(self.usage[:, a:b])


def lns(
    p: Problem,
    order: Sequence[int],
    *,
    deadline: float,
    coef: np.ndarray | None = None,
    width: int = 40,
    per_window: float = 0.5,
    max_windows: int | None = None,
    max_expansions: int | None = None,
    engine: str = "search",
    cfg: SolverConfig | None = None,
    on_improve: Callable[[float, float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[list[int], LnsStats]:
    """Improve ``order`` (local to ``p``, valid) by windows until ``deadline`` (on
    ``clock``), ``max_windows`` windows, or until no window around the top steps improves
    at the widest width. Returns the order (never worse than ``order``) and statistics.

    ``on_improve(peak, elapsed)`` is called with the scalar peak after each improvement.
    ``cfg``: how the ``cpsat`` engine's windows run (default one worker, seed 0).
    """
    t0 = time.perf_counter()
    st = LnsStats()
    n = p.n
    state = OrderState(p, order, coef)
    st.history.append((0.0, state.peak()))
    if n <= 2:
        st.stopped = "exhausted"
        return state.order.tolist(), st
    width = max(4, min(width, n))
    tried: set[tuple[int, int, int]] = set()
    while True:
        if interrupted():
            st.stopped = "interrupted"
            break
        if should_stop is not None and should_stop():
            st.stopped = "stop"
            break
        if max_windows is not None and st.windows >= max_windows:
            st.stopped = "max_windows"
            break
        left = deadline - clock()
        if left <= 0:
            st.stopped = "deadline"
            break
        picked = _pick(state, width, tried)
        if picked is None:
            if width >= min(n, MAX_WIDTH):
                st.stopped = "exhausted"
                break
            width = min(n, MAX_WIDTH, int(width * 1.5))
            st.widths.append(width)
            continue
        a, b, key = picked
        tried.add(key)
        w = state.window(a, b)
        before = float(state.scalar[a:b].max())
        tl = min(per_window, left)
        window_cfg = cfg or SolverConfig(workers=1)
        new_local = solve_window(
            w, coef, before, tl, engine, MAX_STATES, max_expansions, window_cfg
        )
        st.windows += 1
        if new_local is not None:
            state.splice(a, w, new_local)
            st.improved += 1
            pk = state.peak()
            el = time.perf_counter() - t0
            if pk < st.history[-1][1]:
                st.history.append((el, pk))
                if on_improve is not None:
                    on_improve(pk, el)
    st.seconds = time.perf_counter() - t0
    return state.order.tolist(), st


def _pick(state: OrderState, width: int, tried: set) -> tuple[int, int, tuple] | None:
    """The window around the highest step not yet tried with its current content."""
    n = len(state.scalar)
    k = min(n, TOP_STEPS)
    top = np.argpartition(-state.scalar, k - 1)[:k] if k < n else np.arange(n)
    top = top[np.argsort(-state.scalar[top], kind="stable")]
    for c in top.tolist():
        for off in (width // 2, width // 4, (3 * width) // 4, 0, width - 1):
            a = int(min(max(0, c - off), n - width))
            b = a + width
            key = (a, b, hash(state.order[a:b].tobytes()))
            if key not in tried:
                return a, b, key
    return None
