"""Variables of the joint model: the overlap model's (op starts and intervals per time copy,
makespans, order literals, transfer starts) plus, per gap buffer and time copy, the gap's
kind, the drop time, the clone or the host copies, and which readers the second copy
serves."""

from __future__ import annotations

from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from cpsched.cp.joint.problem import JointProblem
from cpsched.cp.overlap import variables as overlap
from cpsched.cp.overlap.variables import Vars

Reader = tuple[str, int]  # ("op", main op) or ("clone", buffer whose clone reads)


class JointVars:
    """``V``: the overlap model's variables (one time copy per scenario). Per gap buffer
    ``b`` and copy ``c``: ``remat[b][c]`` / ``evict[b][c]`` (gap kinds, at most one),
    ``drop[b][c]`` (end of the first device copy), ``clone[b][c]`` (start, interval),
    ``out[b][c]`` / ``back[b][c]`` (host copy starts and intervals), ``second_end[b][c]``,
    ``late[b, reader][c]``. ``ends[b][c]``: end of plain buffers a clone may read."""

    def __init__(self, prob: JointProblem, V: Vars, host: np.ndarray):
        self.prob = prob
        self.V = V
        self.m: cp_model.CpModel = V.m
        self.C = V.C
        self.host = host  # [C, B] host copy ticks
        self.remat: dict[int, list[Any]] = {}
        self.evict: dict[int, list[Any]] = {}
        self.drop: dict[int, list[Any]] = {}
        self.clone_start: dict[int, list[Any]] = {}
        self.clone_iv: dict[int, list[Any]] = {}
        self.out_start: dict[int, list[Any]] = {}
        self.back_start: dict[int, list[Any]] = {}
        self.copy_ivs: list[list[Any]] = [[] for _ in range(self.C)]
        self.second_end: dict[int, list[Any]] = {}
        self.late: dict[tuple[int, Reader], list[Any]] = {}
        self.ends: dict[int, list[Any]] = {}
        # for hints: (copy, end var, users) of buffer groups, (copy, buffer, size var, kind)
        # of second copies
        self.group_ends: list[tuple[int, Any, tuple[int, ...]]] = []
        self.second_sizes: list[tuple[int, int, Any, str]] = []
        self.stats: dict[str, Any] = dict(V.stats)

    def lit_or_false(self, d: dict[int, list[Any]], b: int, c: int):
        return d[b][c] if b in d else False


def make_vars(
    prob: JointProblem, d: np.ndarray, t: np.ndarray, host: np.ndarray, horizon, window=None
):
    """The overlap model's variables (``window``: only those ops of the order move), then
    the gap variables of every gap buffer."""
    V = overlap.make_vars(prob.base, d, t, horizon, window=window)
    J = JointVars(prob, V, host)
    m, g = J.m, prob.graph
    for b in prob.gap_buffers:
        a = int(g.buffer_def[b])
        for key, on in ((J.remat, prob.remat_buffers[b]), (J.evict, prob.evict_buffers[b])):
            if on:
                key[b] = [
                    m.new_bool_var(f"{'r' if key is J.remat else 'e'}{b}_{c}") for c in range(J.C)
                ]
        J.drop[b] = []
        J.second_end[b] = []
        for c in range(J.C):
            H = int(horizon[c])
            J.drop[b].append(m.new_int_var(int(V.lo[c][a] + d[c, a]), H, f"F{b}_{c}"))
            J.second_end[b].append(m.new_int_var(0, H, f"L{b}_{c}"))
            if b in J.remat:
                s = m.new_int_var(0, max(0, H - int(d[c, a])), f"R{b}_{c}")
                J.clone_start.setdefault(b, []).append(s)
                J.clone_iv.setdefault(b, []).append(
                    m.new_optional_fixed_size_interval_var(
                        s, int(d[c, a]), J.remat[b][c], f"RI{b}_{c}"
                    )
                )
            if b in J.evict:
                tau = int(host[c, b])
                o = m.new_int_var(0, max(0, H - tau), f"O{b}_{c}")
                p = m.new_int_var(0, max(0, H - tau), f"P{b}_{c}")
                J.out_start.setdefault(b, []).append(o)
                J.back_start.setdefault(b, []).append(p)
                lit = J.evict[b][c]
                J.copy_ivs[c].append(
                    m.new_optional_fixed_size_interval_var(o, tau, lit, f"OI{b}_{c}")
                )
                J.copy_ivs[c].append(
                    m.new_optional_fixed_size_interval_var(p, tau, lit, f"PI{b}_{c}")
                )
    J.stats["gap_buffers"] = len(prob.gap_buffers)
    J.stats["remat_candidates"] = len(J.remat)
    J.stats["evict_candidates"] = len(J.evict)
    return J
