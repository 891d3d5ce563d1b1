"""Variables of the time-indexed overlap model: one start and one fixed-size interval per op
and time copy, one makespan per copy, order literals between independent ops (shared by
every copy), transfer starts; hints from a tick timeline and the order read back."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from ortools.sat.python import cp_model
from ortools.sat.python.cp_model_helper import FlatIntExpr

from cpsched.analysis.memory import peak
from cpsched.cp import runtime
from cpsched.cp.overlap.bounds import heads_tails
from cpsched.cp.overlap.problem import Infeasible, OverlapProblem, max_inflight


class Vars:
    """The model and its variables over ``C`` time copies sharing one order.

    ``window = (order, a, b)``: only the ops at positions ``a..b-1`` of ``order`` may move;
    the others keep their order and side of the window (LNS). ``prefix_times``: the tick
    timeline of that order, whose times before the window do not depend on it and are
    fixed."""

    # set by constraints.memory: bytes per (start key, end key) group, and the constant bytes
    groups: dict[tuple, np.ndarray]
    const_bytes: np.ndarray

    def __init__(
        self,
        prob: OverlapProblem,
        d: np.ndarray,
        t: np.ndarray,
        horizon: np.ndarray,
        window: tuple[Sequence[int], int, int] | None = None,
        prefix_times: Any = None,
    ):
        self.prob = prob
        n = prob.n
        self.C = d.shape[0]
        self.d, self.t, self.H = d, t, horizon
        self.m = cp_model.CpModel()
        self.stats: dict[str, Any] = {"ops": n, "pairs": prob.P, "copies": self.C}
        self.sizes: list[tuple[Any, Any, Any]] = []  # (size var, start, end) to hint
        self.window = window
        self.prefix_times = prefix_times
        if window is not None:
            w_order, wa, wb = window
            self.wpos = np.empty(n, dtype=np.int64)
            self.wpos[np.asarray(w_order, dtype=np.int64)] = np.arange(n)
            self.wgrp = np.where(self.wpos < wa, 0, np.where(self.wpos < wb, 1, 2))
            self.wops = [int(v) for v in w_order[wa:wb]]
        self.s: list[list[Any]] = []  # op starts per copy
        self.iv: list[list[Any]] = []  # op intervals per copy
        self.M: list[Any] = []  # makespan per copy
        self.lo: list[np.ndarray] = []  # earliest start per copy (heads)
        self.lit: dict[tuple[int, int], Any] = {}  # (i, j), i < j: "i before j"
        self.x: list[list[Any]] = [[] for _ in range(self.C)]  # transfer starts
        self.fifo = False
        self.peak_vars: list[Any] = []
        self.mem_groups = 0
        self.inflight: Any = None
        self.buffer_ends: list[tuple[Any, tuple]] = []

    def order_lit(self, i: int, j: int):
        """Literal "i before j" for independent ops (created once, enforced in all copies)."""
        key = (i, j) if i < j else (j, i)
        lit = self.lit.get(key)
        if lit is None:
            a, b = key
            lit = self.m.new_bool_var(f"b{a}_{b}")
            for c in range(self.C):
                self.m.add(self.s[c][b] >= self.s[c][a] + int(self.d[c, a])).only_enforce_if(lit)
                self.m.add(self.s[c][a] >= self.s[c][b] + int(self.d[c, b])).only_enforce_if(~lit)
            self.lit[key] = lit
        return lit if i < j else ~lit

    def before(self, u: int, v: int) -> bool | None:
        """True/False when the graph (or the fixed part of a window) orders u and v."""
        if self.window is not None:
            gu, gv = self.wgrp[u], self.wgrp[v]
            if gu != gv:
                return bool(gu < gv)
            if gu != 1:
                return bool(self.wpos[u] < self.wpos[v])
        anc = self.prob.anc
        if anc is None:
            return None
        if anc[v, u]:
            return True
        if anc[u, v]:
            return False
        return None

    def span(self, start, end, H: int, name: str):
        """Interval from ``start`` to ``end`` (constants, variables or ``var + const``)."""
        m = self.m
        if isinstance(start, int) or isinstance(end, int):
            return m.new_interval_var(start, end - start, end, name)
        size = m.new_int_var(0, H, name + "_len")
        self.sizes.append((size, start, end))
        return m.new_interval_var(start, size, end, name)

    def end_expr(self, i: int):
        return self.s[0][i] + int(self.d[0, i])

    # hints and extraction -----------------------------------------------------------------
    def hint(self, order: Sequence[int], tl) -> None:
        """Hint every variable from the tick timeline ``tl`` of ``order``."""
        runtime.set_hints(self.m, self._hint_values(order, tl))

    def _hint_values(self, order: Sequence[int], tl):
        prob = self.prob
        pos = np.empty(prob.n, dtype=np.int64)
        pos[np.asarray(order, dtype=np.int64)] = np.arange(prob.n)
        start = np.rint(np.asarray(tl.start)).astype(np.int64)  # [C, n]
        for c in range(self.C):
            for i, v in enumerate(self.s[c]):
                yield v, int(start[c, i])
            ends = start[c] + self.d[c]
            mk = int(ends.max()) if prob.n else 0
            if self.x[c]:
                row_of = {int(a): k for k, a in enumerate(tl.pair_start)}
                tb = np.rint(np.asarray(tl.transfer_begin)).astype(np.int64)
                for p, x in enumerate(self.x[c]):
                    val = int(tb[c, row_of[int(prob.starts[p])]])
                    yield x, val
                    mk = max(mk, val + int(self.t[c, p]))
            yield self.M[c], mk
        for (i, j), lit in self.lit.items():
            yield lit, bool(pos[i] < pos[j])
        ends_h = {}
        for end, users in self.buffer_ends:
            val = int(max(start[0, u] + self.d[0, u] for u in users))
            ends_h[end.index] = val
            yield end, val
        known = {v.index: int(start[0, i]) for i, v in enumerate(self.s[0])}
        known.update(ends_h)

        def value(e) -> int:
            if isinstance(e, (int, np.integer)):
                return int(e)
            coeffs, const = _affine(e)
            return sum(c * known[i] for i, c in coeffs) + const

        for size, st, en in self.sizes:
            yield size, max(0, value(en) - value(st))
        if self.peak_vars:
            pk = peak(prob.graph, order, prob.scenarios)
            for k, (v, gcd, const) in enumerate(self.peak_vars):
                yield v, max(0, -(-(int(pk[k]) - const) // gcd))
        if self.inflight is not None:
            yield self.inflight, max_inflight(prob, pos)

    def order_from(self, solver: cp_model.CpSolver) -> list[int]:
        """Ops by start time; at a tie, zero-tick ops first, then the base order."""
        st = np.array([solver.value(v) for v in self.s[0]], dtype=np.int64)
        if self.window is not None:
            rank = self.wpos
        else:
            rank = np.empty(self.prob.n, dtype=np.int64)
            rank[np.asarray(self.prob.graph.topological_order())] = np.arange(self.prob.n)
        keys = np.lexsort((rank, self.d[0] > 0, st))
        return [int(i) for i in keys]


def make_vars(
    prob: OverlapProblem,
    d: np.ndarray,
    t: np.ndarray,
    horizon: np.ndarray,
    *,
    window: tuple[Sequence[int], int, int] | None = None,
    prefix_times: Any = None,
) -> Vars:
    """Op starts and intervals (fixed before an LNS window) and makespans, per time copy."""
    V = Vars(prob, d, t, horizon, window, prefix_times)
    m, n = V.m, prob.n
    for c in range(V.C):
        dc = d[c].astype(np.float64)
        head, tail = heads_tails(prob.anc, dc[None, :])
        lo = head[0].astype(np.int64)
        hi = int(horizon[c]) - tail[0].astype(np.int64)
        if (hi < lo).any():
            raise Infeasible("horizon below the compute work")
        V.lo.append(lo)
        sc, ic = [], []
        fixed_s = None
        if window is not None and prefix_times is not None:
            fixed_s = np.rint(np.asarray(prefix_times.start)[c]).astype(np.int64)
        for i in range(n):
            if fixed_s is not None and V.wgrp[i] == 0:
                v = m.new_constant(int(fixed_s[i]))
            else:
                v = m.new_int_var(int(lo[i]), int(hi[i]), f"s{c}_{i}")
            sc.append(v)
            ic.append(m.new_fixed_size_interval_var(v, int(d[c, i]), f"I{c}_{i}"))
        V.s.append(sc)
        V.iv.append(ic)
        V.M.append(m.new_int_var(0, int(horizon[c]), f"M{c}"))
    return V


def _affine(e) -> tuple[list[tuple[int, int]], int]:
    """``([(var index, coef)], constant)`` of a linear expression."""
    f = FlatIntExpr(e)
    return [(v.index, int(c)) for v, c in zip(f.vars, f.coeffs)], int(f.offset)
