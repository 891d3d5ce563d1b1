"""Layout as a CP-SAT model: one offset variable per buffer, its memory interval of fixed
size; buffers live at one time must not overlap. The times where the live set is
maximal (it is not contained in a neighbouring stretch's) give one ``NoOverlap`` each,
the cliques of the interval graph; where those constraints would be too many terms a
single ``NoOverlap2D`` over (time, memory) rectangles replaces them. Sizes and the
capacity are divided by their greatest common divisor.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ortools.sat.python import cp_model

from cpsched.layout.problem import LayoutProblem

# above this many (buffer, clique) terms, the model uses one NoOverlap2D
MAX_CLIQUE_TERMS = 200_000


@dataclass
class CpResult:
    status: str  # OPTIMAL, FEASIBLE, INFEASIBLE or UNKNOWN (CP-SAT's names)
    offsets: list[int] | None
    capacity_bytes: int | None  # top of the layout found
    lower_bound_bytes: int  # proven: no layout fits in less
    seconds: float


class CpLayout:
    """The model of one problem; ``solve`` runs it once. ``stop()`` (any thread) ends a
    running solve early."""

    def __init__(self, problem: LayoutProblem):
        self.problem = problem
        bufs = problem.buffers
        g = 0
        for b in bufs:
            g = math.gcd(g, b.size)
        self.unit = g or 1
        self._lock = threading.Lock()
        self._solver: cp_model.CpSolver | None = None
        self._stopped = False
        points, live = problem.sections()
        cliques = []
        for k, s in enumerate(live):
            if not s:
                continue
            here = set(s)
            if (k > 0 and here <= set(live[k - 1])) or (
                k + 1 < len(live) and here <= set(live[k + 1])
            ):
                continue
            cliques.append(s)
        self.cliques = cliques
        self.terms = sum(len(c) for c in cliques)
        self.max_live_units = (
            max((sum(bufs[i].size for i in c) for c in cliques), default=0) // self.unit
        )

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            if self._solver is not None:
                self._solver.stop_search()

    def solve(
        self,
        capacity: int | None,
        upper: int,
        time_limit: float,
        workers: int = 1,
        hint: Sequence[int] | None = None,
        seed: int = 0,
    ) -> CpResult:
        """A layout within ``capacity`` bytes (feasibility), or, with ``capacity`` None,
        the least top at most ``upper`` (a layout of that top is known)."""
        t0 = time.perf_counter()
        bufs = self.problem.buffers
        u = self.unit
        cap = (capacity if capacity is not None else upper) // u
        lb = self.max_live_units
        if lb > cap:
            return CpResult("INFEASIBLE", None, None, lb * u, 0.0)
        m = cp_model.CpModel()
        ys = []
        ivs = []
        top = m.new_int_var(lb, cap, "top") if capacity is None else None
        for i, b in enumerate(bufs):
            sz = b.size // u
            y = m.new_int_var(0, max(cap - sz, 0), f"y{i}")
            ys.append(y)
            ivs.append(m.new_fixed_size_interval_var(y, sz, f"m{i}"))
            if top is not None and sz:
                m.add(y + sz <= top)
            if hint is not None:
                m.add_hint(y, min(hint[i] // u, max(cap - sz, 0)))
        if self.terms <= MAX_CLIQUE_TERMS:
            for c in self.cliques:
                m.add_no_overlap([ivs[i] for i in c])
        else:
            keep = [i for i, b in enumerate(bufs) if b.size]
            times = [
                m.new_fixed_size_interval_var(bufs[i].lower, bufs[i].upper - bufs[i].lower, f"t{i}")
                for i in keep
            ]
            m.add_no_overlap_2d(times, [ivs[i] for i in keep])
        if top is not None:
            m.minimize(top)
        solver = cp_model.CpSolver()
        prm = solver.parameters
        prm.num_workers = max(1, int(workers))
        prm.random_seed = int(seed)
        prm.max_time_in_seconds = max(0.01, float(time_limit))
        prm.catch_sigint_signal = False
        with self._lock:
            if self._stopped:
                return CpResult("UNKNOWN", None, None, lb * u, 0.0)
            self._solver = solver
        code = solver.solve(m)
        with self._lock:
            self._solver = None
        status = solver.status_name(code)
        offsets = None
        found = None
        bound = lb
        if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            offsets = [int(solver.value(y)) * u for y in ys]
            found = max((o + b.size for o, b in zip(offsets, bufs) if b.size), default=0)
        if top is not None and code in (cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.UNKNOWN):
            bound = max(bound, math.ceil(solver.best_objective_bound - 1e-9))
        if code == cp_model.INFEASIBLE:
            # nothing fits in ``cap`` units: the least top is above it
            bound = max(bound, cap + 1)
        return CpResult(status, offsets, found, bound * u, time.perf_counter() - t0)
