"""Build, solve and decode the time-indexed overlap model (``cpsched.cp.overlap``).

Three builders give the model its three uses: ``makespan_model`` (the whole order, tick
durations, the analytic bound as a constraint, the hint's order as a hint), ``window_model``
(``k`` consecutive positions of an order free, the rest fixed: one LNS step) and
``distance_model`` (unit durations, the seed's distance objective). ``solve`` runs any of
them and reads the order back. Which phases run, for how long and on which windows is the
strategy's business (``cpsched.strategies.overlap.method``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cpsched.cp import runtime
from cpsched.cp.overlap import objectives as O
from cpsched.cp.overlap.bounds import overlap_lower_bound
from cpsched.cp.overlap.constraints import build
from cpsched.cp.overlap.problem import (
    Infeasible,
    OverlapProblem,
    copy_durations,
    fifo_pairs,
    floor1,
    free_pairs,
    pick_mode,
)
from cpsched.cp.overlap.variables import Vars
from cpsched.cp.runtime import SolverConfig

ORDER_LITERAL_PAIRS = 5_000  # single scenario: explicit order literals up to this many
MAX_FIFO_PAIRS = 20_000  # FIFO literals per model at most (else transfers may reorder)


@dataclass
class MakespanModel:
    """The whole-order makespan model and what reading its answer needs."""

    vars: Vars
    objective: Any  # the objective expression (to bound it before a secondary solve)
    coef: np.ndarray
    minimax: bool
    d: np.ndarray  # tick durations of the model (at least one tick where it counts)
    d_lns: np.ndarray  # tick durations before that floor (the LNS windows floor their own)
    t: np.ndarray  # transfer ticks
    tick: np.ndarray  # seconds per tick, per copy
    over: np.ndarray  # rounding slack per copy, seconds
    mode: str
    fifo: bool
    info: dict

    def answer(self, run: runtime.Run) -> dict:
        """The model's claimed makespans and objective figures of a solved ``run``."""
        C = self.d.shape[0]
        M = self.vars.M
        return {
            "claimed_makespan": [float(run.solver.value(M[c]) * self.tick[c]) for c in range(C)],
            "objective_value": float(run.solver.objective_value),
            "objective_bound": float(run.solver.best_objective_bound),
        }

    def makespan_bound(self, run: runtime.Run) -> np.ndarray | None:
        """A lower bound on the makespan (seconds) from a solved single-copy model."""
        if self.mode == "single" and self.fifo and run.solved:
            bound = run.solver.best_objective_bound * self.tick[0] - self.over[0]
            return np.array([max(0.0, bound)])
        return None


def makespan_model(
    prob: OverlapProblem,
    hint_order: Sequence[int],
    hint_ok: bool,
    budget: np.ndarray,
    limits: Mapping[str, int],
    scenario_objective: str,
    scenario_mode: str,
    resolution: int,
    secondary: str | None,
    ref: np.ndarray,
) -> MakespanModel:
    """The whole-order model, hinted with ``hint_order`` (its makespan is the horizon when
    ``hint_ok``: it is within the budget). Raises ``Infeasible`` when the analytic bound
    exceeds the horizon."""
    mode = pick_mode(prob, scenario_mode)
    d, t, tick, over = copy_durations(prob, mode, scenario_objective, ref, resolution)
    C = d.shape[0]
    d_lns = d
    lit_mode = C > 1 or free_pairs(prob) <= ORDER_LITERAL_PAIRS
    if lit_mode:
        d = floor1(d)
        over = over + (d - d_lns).sum(axis=1) * tick
    tl_h = prob.tick_timeline(hint_order, d, t)
    hint_ms = np.atleast_1d(np.rint(tl_h.makespan)).astype(np.int64)
    serial = d.sum(axis=1) + t.sum(axis=1)
    horizon = hint_ms if hint_ok else serial
    fifo = fifo_pairs(prob) <= MAX_FIFO_PAIRS
    model = build(
        prob,
        d,
        t,
        horizon,
        budget=budget,
        limits=limits,
        transfers_on=True,
        fifo_order=fifo,
        peak_vars=secondary == "peak",
        inflight_var=secondary == "inflight",
        order_literals_all=lit_mode and C == 1,
    )
    # the analytic bound on the tick durations is valid in the model: give it to the solver
    lb_t = tick_makespan_bound(prob, d, t)
    info_lb = [int(math.ceil(x - 1e-6)) for x in lb_t]
    for c in range(C):
        if info_lb[c] > int(horizon[c]):
            raise Infeasible("horizon below the lower bound")
        model.m.add(model.M[c] >= info_lb[c])
    obj, coef, z = O.makespan(model, prob, scenario_objective, tick, ref, horizon)
    model.m.minimize(obj)
    model.hint(hint_order, tl_h)
    info = {
        "mode": mode,
        "tick": [float(x) for x in tick],
        "fifo": fifo,
        "rounding_slack": [float(x) for x in over],
        **model.stats,
        "hint_makespan_ticks": [int(x) for x in hint_ms],
        "bound_ticks": info_lb,
    }
    return MakespanModel(model, obj, coef, z is not None, d, d_lns, t, tick, over, mode, fifo, info)


def tick_makespan_bound(prob: OverlapProblem, d: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``overlap_lower_bound``'s makespan per time copy for tick durations ``d`` (ops) and
    ``t`` (transfers), every collective async (a valid bound for the time-indexed models)."""
    is_coll = np.array([c.startswith("collective:") for c in prob.classes], dtype=bool)
    return overlap_lower_bound(
        prob.graph,
        d.astype(np.float64),
        prob.starts,
        prob.dones,
        t.astype(np.float64),
        prob.stream,
        np.zeros(d.shape[0]),
        is_coll,
        prob.anc,
    ).makespan


def bound_objective(mm: MakespanModel, order: Sequence[int], secondary: str) -> None:
    """Keep ``mm``'s makespan objective at ``order``'s and minimise ``secondary``
    (``'peak'`` or ``'inflight'``) instead, hinted with ``order``."""
    tl = mm.vars.prob.tick_timeline(order, mm.d, mm.t)
    ms = np.atleast_1d(np.rint(tl.makespan)).astype(np.int64)
    mm.vars.m.add(mm.objective <= O.tick_objective(ms, mm.coef, mm.minimax))
    O.secondary(mm.vars, secondary)
    mm.vars.hint(order, tl)


def window_model(
    prob: OverlapProblem,
    order: Sequence[int],
    a: int,
    b: int,
    d: np.ndarray,
    t: np.ndarray,
    budget: np.ndarray,
    limits: Mapping[str, int],
    fifo: bool,
    scenario_objective: str,
    tick: np.ndarray,
    ref: np.ndarray,
) -> Vars | None:
    """The model with only positions ``a..b-1`` of ``order`` free (times before the
    window fixed), hinted with ``order``; ``None`` when no order of the window fits."""
    dw = floor1(d, order[a:b])
    tl_t = prob.tick_timeline(order, dw, t)
    hms = np.atleast_1d(np.rint(tl_t.makespan)).astype(np.int64)
    try:
        mdl = build(
            prob,
            dw,
            t,
            hms,
            budget=budget,
            limits=limits,
            transfers_on=True,
            fifo_order=fifo,
            window=(order, a, b),
            prefix_times=tl_t,
        )
    except Infeasible:
        return None
    obj, _, _ = O.makespan(mdl, prob, scenario_objective, tick, ref, hms)
    mdl.m.minimize(obj)
    mdl.hint(order, tl_t)
    return mdl


def distance_model(
    prob: OverlapProblem, hint_order: Sequence[int], budget: np.ndarray, limits: Mapping[str, int]
) -> Vars:
    """Unit durations (times are positions): maximise the async collectives' distances."""
    n = prob.n
    d = np.ones((1, n), dtype=np.int64)
    t = np.zeros((1, prob.P), dtype=np.int64)
    model = build(
        prob,
        d,
        t,
        np.array([n]),
        budget=budget,
        limits=limits,
        transfers_on=False,
        fifo_order=False,
    )
    O.distance(model)
    model.hint(hint_order, prob.tick_timeline(hint_order, d, t))
    return model


def solve(
    model: Vars, cfg: SolverConfig, time_limit: float, progress: Callable | None = None
) -> tuple[runtime.Run, list[int] | None]:
    """Run ``model`` for ``time_limit`` seconds (at least 0.05) and read its order back
    (``None`` without a solution)."""
    run = runtime.solve(model.m, cfg, max(0.05, float(time_limit)), progress=progress)
    return run, (model.order_from(run.solver) if run.solved else None)


__all__ = [
    "MakespanModel",
    "makespan_model",
    "bound_objective",
    "tick_makespan_bound",
    "window_model",
    "distance_model",
    "solve",
    "ORDER_LITERAL_PAIRS",
    "MAX_FIFO_PAIRS",
]
