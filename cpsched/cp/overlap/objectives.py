"""Objectives of the overlap model: the makespan over the time copies (weighted, or the
largest relative to its lower bound), the peak or in-flight tie-breakers, and the seed's
distance surrogate."""

from __future__ import annotations

import numpy as np

from cpsched.cp.overlap.problem import OverlapProblem, collective_pairs
from cpsched.cp.overlap.variables import Vars


def makespan(model: Vars, prob: OverlapProblem, scenario_objective: str, tick, ref, horizon):
    """The makespan objective over the time copies, and its integer coefficients."""
    m, C = model.m, model.C
    if C == 1:
        return model.M[0], np.ones(1, dtype=np.int64), None
    if scenario_objective == "weighted":
        c = prob.scenarios.weights * tick
        coef = np.maximum(np.rint(1000 * c / c.max()), 1).astype(np.int64)
        return sum(int(coef[k]) * model.M[k] for k in range(C)), coef, None
    r = tick / ref  # makespan ratio per tick
    coef = np.maximum(np.rint(1e6 * r / r.max()), 1).astype(np.int64)
    z = m.new_int_var(0, int(max(int(coef[k]) * int(horizon[k]) for k in range(C))), "z")
    for k in range(C):
        m.add(z >= int(coef[k]) * model.M[k])
    return z, coef, z


def tick_objective(ms_ticks: np.ndarray, coef: np.ndarray, minimax: bool) -> int:
    v = coef * np.asarray(ms_ticks, dtype=np.int64)
    return int(v.max() if minimax else v.sum())


def distance(V: Vars) -> None:
    """Maximise the sum over async collective pairs of done minus start position (unit
    durations: the times are instruction positions)."""
    prob = V.prob
    s = V.s[0]
    V.m.maximize(
        sum(s[int(prob.dones[p])] - s[int(prob.starts[p])] for p in collective_pairs(prob))
    )


def secondary(V: Vars, kind: str) -> None:
    """Tie-breaker after the makespan: least total peak or least in-flight collectives."""
    if kind == "peak":
        V.m.minimize(sum(v for v, _, _ in V.peak_vars))
    else:
        V.m.minimize(V.inflight)
