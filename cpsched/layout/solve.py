"""Solve a layout problem: the least capacity (or a layout within a given one) and a
proof where one is found in time.

First a greedy layout (each buffer, largest first, in the lowest gap free over its
lifetime) gives an upper bound; the most bytes live at one time is the lower bound. When
they differ, two solvers run side by side until one settles the question or time runs
out: the exact search (``search``: a layout at the lower bound, or a proof that none
exists, then a bisection) in this thread, and the CP-SAT model (``cp``) in another
(CP-SAT releases the interpreter while it searches).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from cpsched.layout import search as exact
from cpsched.layout.cp import CpLayout
from cpsched.layout.problem import LayoutProblem, layout_top

OPTIMAL, FEASIBLE, INFEASIBLE, UNKNOWN = "OPTIMAL", "FEASIBLE", "INFEASIBLE", "UNKNOWN"


@dataclass
class LayoutResult:
    status: str  # OPTIMAL, FEASIBLE, INFEASIBLE (nothing fits the capacity) or UNKNOWN
    offsets: list[int] | None
    capacity_bytes: int | None  # the top of the layout found
    lower_bound_bytes: int  # proven: no layout fits in less
    requested_bytes: int | None = None  # the capacity asked for (None: least capacity)
    seconds: float = 0.0
    found_by: str = ""  # greedy, search or cp-sat
    stats: dict = field(default_factory=dict)

    def as_json(self) -> dict:
        return {
            "status": self.status,
            "capacity_bytes": self.capacity_bytes,
            "lower_bound_bytes": self.lower_bound_bytes,
            "requested_capacity_bytes": self.requested_bytes,
            "seconds": round(self.seconds, 3),
            "found_by": self.found_by or None,
        }


def greedy(problem: LayoutProblem, order: str = "size") -> list[int]:
    """A layout: buffers one by one (largest first, or earliest first with ``order``
    "time"), each at the lowest offset where it meets no placed buffer live with it."""
    bufs = problem.buffers
    n = len(bufs)
    lower = np.array([b.lower for b in bufs], dtype=np.int64)
    upper = np.array([b.upper for b in bufs], dtype=np.int64)
    size = np.array([b.size for b in bufs], dtype=np.int64)
    if order == "size":
        seq = np.lexsort((lower, lower - upper, -size))
    else:
        seq = np.lexsort((-size, lower - upper, lower))
    p_lo = np.empty(n, dtype=np.int64)
    p_up = np.empty(n, dtype=np.int64)
    p_off = np.empty(n, dtype=np.int64)
    p_top = np.empty(n, dtype=np.int64)
    offsets = [0] * n
    c = 0
    for i in seq.tolist():
        z = int(size[i])
        if z == 0:
            continue
        hit = np.flatnonzero((p_lo[:c] < upper[i]) & (p_up[:c] > lower[i]))
        x = 0
        if hit.size:
            o = p_off[hit]
            k = np.argsort(o, kind="stable")
            o = o[k]
            t = p_top[hit][k]
            reach = np.concatenate(([0], np.maximum.accumulate(t)))
            fits = np.flatnonzero(reach[:-1] + z <= o)
            x = int(reach[fits[0]]) if fits.size else int(reach[-1])
        offsets[i] = x
        p_lo[c], p_up[c], p_off[c], p_top[c] = lower[i], upper[i], x, x + z
        c += 1
    return offsets


class _Best:
    """The best layout and the proven bound, shared by the two solvers."""

    def __init__(self, problem: LayoutProblem, lower: int):
        self.problem = problem
        self.lock = threading.Lock()
        self.offsets: list[int] | None = None
        self.top: int | None = None
        self.lower = lower
        self.by = ""
        self.infeasible = False  # the requested capacity was proven too small

    def offer(self, offsets: Sequence[int] | None, by: str) -> None:
        if offsets is None:
            return
        top = layout_top(self.problem, offsets)
        with self.lock:
            if self.top is None or top < self.top:
                self.offsets, self.top, self.by = list(offsets), top, by

    def raise_lower(self, bound: int) -> None:
        with self.lock:
            self.lower = max(self.lower, bound)

    def settled(self, capacity: int | None) -> bool:
        with self.lock:
            if self.infeasible:
                return True
            if self.top is None:
                return False
            return self.top <= self.lower or (capacity is not None and self.top <= capacity)


def solve_layout(
    problem: LayoutProblem,
    capacity: int | None = None,
    time_limit: float = 60.0,
    workers: int = 2,
    deadline: float | None = None,
    stop: Callable[[], bool] | None = None,
) -> LayoutResult:
    """A layout of ``problem`` within ``capacity`` bytes, or of the least capacity with
    ``capacity`` None; ``workers`` threads (the search, and CP-SAT with the others);
    ``deadline`` (``time.perf_counter``) or ``time_limit`` seconds from now."""
    t0 = time.perf_counter()
    if deadline is None:
        deadline = t0 + time_limit
    lb = problem.max_live()
    best = _Best(problem, lb)
    for order in ("size", "time"):
        best.offer(greedy(problem, order), "greedy")
    if capacity is not None and lb > capacity:
        best.infeasible = True
    inst = exact.Instance(
        [b.lower for b in problem.buffers],
        [b.upper for b in problem.buffers],
        [b.size for b in problem.buffers],
    )
    nodes = 0
    cp_model_: CpLayout | None = None
    thread: threading.Thread | None = None
    cp_out: list = []

    def halt() -> bool:
        return (
            time.perf_counter() > deadline
            or best.settled(capacity)
            or (stop is not None and stop())
        )

    if not halt():
        if workers >= 2:
            cp_model_ = CpLayout(problem)
            hint = best.offsets
            upper = best.top or 0
            model = cp_model_

            def run_cp() -> None:
                try:
                    r = model.solve(
                        capacity, upper, deadline - time.perf_counter(), workers - 1, hint
                    )
                except Exception as e:  # noqa: BLE001 - reported, the search goes on
                    cp_out.append(e)
                    return
                cp_out.append(r)
                best.offer(r.offsets, "cp-sat")
                best.raise_lower(r.lower_bound_bytes)
                if r.status == INFEASIBLE and capacity is not None:
                    with best.lock:
                        best.infeasible = True

            thread = threading.Thread(target=run_cp, name="layout-cp-sat", daemon=True)
            thread.start()
        try:
            nodes = _search(inst, best, capacity, deadline, halt)
        finally:
            if cp_model_ is not None:
                cp_model_.stop()
            if thread is not None:
                thread.join()
    for r in cp_out:
        if isinstance(r, Exception):
            raise r
    return _result(best, capacity, t0, nodes)


def _search(
    inst: exact.Instance,
    best: _Best,
    capacity: int | None,
    deadline: float,
    halt: Callable[[], bool],
) -> int:
    """The exact search's part: probe the lower bound (or the capacity), then bisect
    between the proven bound and the best layout. Returns the nodes searched."""
    nodes = 0
    unit = 0
    for z in inst.size:
        unit = int(np.gcd(unit, z))
    unit = unit or 1
    while not halt():
        with best.lock:
            lo, hi = best.lower, best.top
        assert hi is not None
        if capacity is not None:
            target = capacity
        elif nodes == 0:
            target = lo
        else:
            target = (lo + hi - unit) // 2
        target = target // unit * unit
        if target < lo:
            if capacity is not None:
                with best.lock:
                    best.infeasible = True
            break
        # a probe below the best gets half the time left unless it is the first
        now = time.perf_counter()
        until = deadline if capacity is not None or nodes == 0 else now + (deadline - now) / 2
        r = exact.portfolio_search(inst, target, until, stop=halt)
        nodes += r.nodes + 1
        if r.status == exact.FOUND:
            best.offer(r.offsets, "search")
        elif r.status == exact.EXHAUSTED:
            if capacity is not None:
                with best.lock:
                    best.infeasible = True
                break
            best.raise_lower(target + unit)
        elif time.perf_counter() > deadline:
            break
    return nodes


def _result(best: _Best, capacity: int | None, t0: float, nodes: int) -> LayoutResult:
    seconds = time.perf_counter() - t0
    stats = {"search_nodes": nodes}
    if capacity is not None and best.infeasible:
        return LayoutResult(
            INFEASIBLE,
            None,
            None,
            max(best.lower, capacity + 1),
            capacity,
            seconds,
            stats=stats,
        )
    top = best.top
    fits = top is not None and (capacity is None or top <= capacity)
    if not fits:
        return LayoutResult(UNKNOWN, None, None, best.lower, capacity, seconds, stats=stats)
    assert top is not None
    status = OPTIMAL if top <= best.lower else FEASIBLE
    return LayoutResult(
        status,
        best.offsets,
        top,
        min(best.lower, top),
        capacity,
        seconds,
        found_by=best.by,
        stats=stats,
    )
