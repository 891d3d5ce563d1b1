"""The remat model's one solve-and-decode: build the model of a ``Spec``, hint it, run CP-SAT
and return its plan as a replay-checked ``RematResult``.

The phases that choose the order, the candidates and the time of each run (cp-remat) are in
``cpsched.strategies.remat.method``.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from cpsched.core.scenarios import Scenarios
from cpsched.cp import runtime
from cpsched.cp.remat import objectives as O
from cpsched.cp.remat.constraints import build
from cpsched.cp.remat.problem import Spec
from cpsched.cp.remat.variables import Vars
from cpsched.cp.runtime import SolverConfig
from cpsched.remat.result import RematResult, finish_result
from cpsched.remat.skeleton import Skeleton
from cpsched.remat.timing import TransferModel

__all__ = ["build_model", "remat_config", "run_model", "solve_spec"]


def build_model(spec: Spec) -> Vars:
    """The remat model of ``spec``: variables, constraints and objective."""
    mdl = build(spec)
    O.apply(mdl)
    return mdl


def remat_config(cfg: SolverConfig) -> SolverConfig:
    """``cfg`` for the remat models: CP-SAT's presolve off and the default parameters
    otherwise. Presolve of these interval-heavy models takes longer than the search itself
    (ResNet50 at 0.9: optimal in ~1 s without it, ~35 s with it; RLG n1000: the whole
    minute goes to presolve)."""
    return cfg.with_(presolve=False)


def run_model(model: Vars, time_limit: float, cfg: SolverConfig, progress) -> runtime.Run:
    """One CP-SAT run of a built model (stopped at 0 added time under the time objective)."""
    return runtime.solve(
        model.m,
        cfg,
        max(0.05, float(time_limit)),
        progress=progress,
        stop_at=0 if model.sp.objective == "time" else None,
    )


def solve_spec(
    spec: Spec,
    sc: Scenarios,
    hint: tuple[Skeleton, list[list[int]]] | None,
    bud: np.ndarray,
    dur: np.ndarray,
    transfer: TransferModel | None,
    time_limit: float,
    cfg: SolverConfig,
    method_name: str,
    t_start: float,
    progress,
    scale: float,
    about: dict[str, Any],
) -> tuple[RematResult | None, str]:
    """Build, hint and run the model of ``spec`` for what is left of ``time_limit`` once
    it is built; its plan as a checked ``RematResult`` (or None) and the run's status."""
    t0 = time.perf_counter()
    model = build_model(spec)
    if hint is not None:
        model.hint(*hint)
    # deterministic mode: the limit is work, whatever the building took
    left = time_limit if cfg.deterministic else time_limit - (time.perf_counter() - t0)
    if not cfg.deterministic and (left <= 0 or cfg.seconds_left() <= 0):
        return None, "SKIPPED: no time left once built"
    run = run_model(model, left, cfg, progress)
    if not run.solved:
        return None, run.status
    sk, active = model.extract(run.solver)
    assert run.objective is not None and run.bound is not None  # solved
    info = {
        "cp": {
            "model": about["model"],
            "status": run.status,
            "objective": run.objective / scale,
            "bound": run.bound / scale,
            **{k: v for k, v in about.items() if k != "model"},
            "copies": spec.copies,
            "sub_slots": spec.G - 1,
            "time_scale": scale,
        }
    }
    res = finish_result(
        spec.graph,
        sc,
        bud,
        sk,
        active,
        method_name,
        run.status,
        time.perf_counter() - t_start,
        dur,
        transfer,
        info,
    )
    return res, run.status
