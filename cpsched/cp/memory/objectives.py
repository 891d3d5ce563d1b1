"""Objectives over the per-scenario peak variables (model units, see ``cpsched.cp.memory.scaling``).

- ``weighted``: minimise ``sum_s w_s * peak_s`` in bytes; the integer coefficients are
  ``round(RES * w_s * unit_s / max_s(w_s * unit_s))`` (at least 1 for a positive weight), so
  weights are honoured to 1 part in ``RES``;
- ``minimax``: minimise ``z`` with ``RES * peak_s <= z * lb_s`` for every scenario: the largest
  peak relative to that scenario's proven lower bound (``z / RES`` is that ratio);
- ``lexicographic`` stage: minimise one scenario's peak (the orchestrator runs stages from
  the largest scenario down and caps the earlier ones at their optimum);
- ``budget``: hard caps ``peak_s <= floor(budget_s / unit_s)`` (safe: model units over-count
  bytes), with the weighted objective as a tie-break among orders that fit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cpsched.cp.memory.variables import Vars

RES = 10_000


@dataclass
class Objective:
    kind: str
    expr: object  # what CP-SAT minimises
    coefs: np.ndarray | None  # [S] for weighted
    z: object | None = None  # minimax variable
    lbs: np.ndarray | None = None  # [S] minimax denominators (units)


def weight_coefs(V: Vars, weights: np.ndarray) -> np.ndarray:
    w = np.asarray(weights, dtype=float) * V.scale.unit.astype(float)
    if w.max() <= 0:
        w = V.scale.unit.astype(float)
    c = np.rint(RES * w / w.max()).astype(np.int64)
    c[(w > 0) & (c == 0)] = 1
    g = int(np.gcd.reduce(c[c > 0])) if (c > 0).any() else 1
    return c // max(g, 1)


def weighted(V: Vars, weights: np.ndarray) -> Objective:
    c = weight_coefs(V, weights)
    expr = sum(int(ci) * pk for ci, pk in zip(c, V.peak))
    V.model.minimize(expr)
    return Objective("weighted", expr, c)


def minimax(V: Vars, lower_bounds_bytes: np.ndarray) -> Objective:
    """``lower_bounds_bytes``: per-scenario proven lower bounds (the denominators)."""
    sc = V.scale
    lbs = np.array(
        [max(1, sc.units(s, int(b))) for s, b in enumerate(lower_bounds_bytes)], dtype=np.int64
    )
    # the peak's upper bound: list() first, the proto's repeated field reads [-1] as 0
    ub = max(-(-RES * int(list(pk.proto.domain)[-1]) // int(l)) for pk, l in zip(V.peak, lbs))
    z = V.model.new_int_var(0, max(RES, ub), "z")
    for pk, l in zip(V.peak, lbs):
        V.model.add(RES * pk <= z * int(l))
    V.model.minimize(z)
    return Objective("minimax", z, None, z, lbs)


def stage(V: Vars, s: int, caps_units: dict[int, int]) -> Objective:
    for t, cap in caps_units.items():
        V.model.add(V.peak[t] <= int(cap))
    V.model.minimize(V.peak[s])
    return Objective(f"stage{s}", V.peak[s], None)


def budget(V: Vars, budgets_bytes: np.ndarray, weights: np.ndarray) -> Objective:
    sc = V.scale
    for s, bgt in enumerate(budgets_bytes):
        V.model.add(V.peak[s] <= sc.units_floor(s, int(bgt)))
    obj = weighted(V, weights)
    obj.kind = "budget"
    return obj
