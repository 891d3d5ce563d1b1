"""Decision variables of the CP-SAT ordering model (a thin layer: no constraints here
beyond the ones that define a variable).

- ``pos[v]``: step of op ``v``, domain ``[#ancestors, n - 1 - #descendants]``;
- buffer ``b``: ``start_b`` (the step of its defining op, or 0) and ``end_b`` (its last
  user's step, ``n - 1`` when needed after the problem); a buffer whose users are ordered
  (one is an ancestor of another) only needs its latest users, and a single latest user
  makes ``end_b`` that user's ``pos`` with no new variable;
- one interval per buffer ``[start_b, end_b + 1)`` and per op with transient bytes;
- ``peak[s]``: model units per scenario (see ``cpsched.cp.memory.scaling``);
- ``before(u, v)``: a literal for ``pos[u] < pos[v]``, created on demand and shared.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from ortools.sat.python import cp_model

from cpsched.cp.memory.problem import Problem
from cpsched.cp.memory.scaling import Scale


@dataclass
class Vars:
    problem: Problem
    scale: Scale
    model: cp_model.CpModel
    pos: list  # [n] IntVar
    start: list  # [nb] IntVar | int
    end: list  # [nb] IntVar | int
    last_users: list[list[int]]  # [nb] maximal users
    intervals: list  # [nb] IntervalVar | None
    op_intervals: list  # [n] IntervalVar (length 1) | None
    peak: list  # [S] IntVar (units)
    lengths: list = field(default_factory=list)  # [nb] IntVar | None: interval lengths
    _before: dict = field(default_factory=dict)
    live_lits: list = field(default_factory=list)  # (buffer, op, literal) of the per-op model

    def before(self, u: int, v: int):
        """Literal ``pos[u] < pos[v]`` (constant True/False for ordered pairs)."""
        p = self.problem
        if u == v:
            return False
        if p.anc[v, u]:
            return True
        if p.anc[u, v]:
            return False
        key = (u, v) if u < v else (v, u)
        lit = self._before.get(key)
        if lit is None:
            a, b = key
            lit = self.model.new_bool_var(f"b_{a}_{b}")
            self.model.add(self.pos[a] < self.pos[b]).only_enforce_if(lit)
            self.model.add(self.pos[a] > self.pos[b]).only_enforce_if(~lit)
            self._before[key] = lit
        return lit if key == (u, v) else ~lit


def maximal_users(p: Problem, users: list[int]) -> list[int]:
    """Users that are not ancestors of another user (only they can be the last one)."""
    if len(users) <= 1:
        return list(users)
    us = np.asarray(users, dtype=np.int64)
    dominated = p.anc[np.ix_(us, us)].any(axis=0)  # u is an ancestor of some other user
    return [int(u) for u in us[~dominated]]


def make_vars(
    p: Problem,
    scale: Scale,
    model: cp_model.CpModel | None = None,
    intervals: bool = True,
    peak_upper: np.ndarray | None = None,
    domains: bool = True,
    peak_bound: bool = True,
) -> Vars:
    model = model or cp_model.CpModel()
    n = p.n
    n_anc = p.anc.sum(axis=1) if domains else np.zeros(n, dtype=np.int64)
    n_desc = p.anc.sum(axis=0) if domains else np.zeros(n, dtype=np.int64)
    pos = [model.new_int_var(int(n_anc[v]), int(n - 1 - n_desc[v]), f"p{v}") for v in range(n)]
    starts: list[cp_model.IntVar | int] = []
    ends: list[cp_model.IntVar | int] = []
    lasts: list[list[int]] = []
    ivs: list[cp_model.IntervalVar | None] = []
    lens: list[cp_model.IntVar | None] = []
    end: cp_model.IntVar | int
    size: cp_model.IntVar | int
    for b in range(p.nb):
        d = int(p.buf_def[b])
        start = pos[d] if d >= 0 else 0
        last = maximal_users(p, p.buf_users[b])
        if d >= 0 and any(not p.anc[u, d] for u in last):
            last = maximal_users(p, last + [d])  # end = max(start, users)
        if p.buf_out[b]:
            end = n - 1
        elif not last:
            end = start
        elif len(last) == 1:
            end = pos[last[0]]
        else:
            lo = max(int(n_anc[u]) for u in last)
            hi = max(int(n - 1 - n_desc[u]) for u in last)
            if d >= 0:
                lo = max(lo, int(n_anc[d]))
                hi = max(hi, int(n - 1 - n_desc[d]))
            end = model.new_int_var(lo, hi, f"e{b}")
        starts.append(start)
        ends.append(end)
        lasts.append(last)
        if intervals:
            if isinstance(start, int) and isinstance(end, int):
                size = end - start + 1
                ivs.append(model.new_fixed_size_interval_var(start, size, f"i{b}"))
                lens.append(None)
            else:
                size = model.new_int_var(1, n, f"len{b}")
                ivs.append(model.new_interval_var(start, size, end + 1, f"i{b}"))
                lens.append(size)
        else:
            ivs.append(None)
            lens.append(None)
    op_ivs: list[cp_model.IntervalVar | None] = []
    for v in range(n):
        if intervals and scale.transient[:, v].any():
            op_ivs.append(model.new_fixed_size_interval_var(pos[v], 1, f"t{v}"))
        else:
            op_ivs.append(None)
    S = p.n_scenarios
    # model units over-count bytes, so ceil(bytes bound / unit) bounds the model peak
    lb_units = [
        max(int(scale.floor[s]), scale.units(s, int(p.lower_bound[s])))
        if peak_bound
        else int(scale.floor[s])
        for s in range(S)
    ]
    ub = scale.base + scale.sizes.sum(axis=1) + (scale.transient.max(axis=1) if n else 0)
    ub = np.maximum(ub, scale.floor)
    if peak_upper is not None:
        ub = np.minimum(ub, peak_upper)
    peak = [
        model.new_int_var(min(lb_units[s], int(ub[s])), int(ub[s]), f"peak{s}") for s in range(S)
    ]
    return Vars(p, scale, model, pos, starts, ends, lasts, ivs, op_ivs, peak, lengths=lens)
