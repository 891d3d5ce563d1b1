"""The pipeline model's one solve-and-decode: build the model (``variables``,
``constraints``, ``objectives``) over a horizon and a lower bound, hint it, run CP-SAT and
read the solution back as a schedule (``cpsched.pipeline.solve`` runs the phases around it).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ortools.sat.python import cp_model

from cpsched.cp import runtime
from cpsched.pipeline.model.constraints import add_all
from cpsched.pipeline.model.objectives import add_hint, minimise_makespan
from cpsched.pipeline.model.problem import CpData
from cpsched.pipeline.model.variables import make_vars
from cpsched.pipeline.problem import PipelineProblem
from cpsched.pipeline.schedule import Action, PipelineSchedule

__all__ = ["ModelRun", "solve_model"]


@dataclass
class ModelRun:
    """One run of the model: CP-SAT's status name, its schedule (None when it found
    none; validated, memory included) and its proven bound in model units (at least the
    given one)."""

    status: str
    schedule: PipelineSchedule | None
    bound_units: int


def solve_model(
    problem: PipelineProblem,
    data: CpData,
    horizon: int,
    lb: int,
    hint: dict[Action, float] | None,
    until: float,
    cfg: runtime.SolverConfig,
) -> ModelRun:
    """The least makespan within ``horizon`` (model units), at least ``lb``, hinted with
    the start times ``hint`` (exact data only); the search runs until ``until`` (a
    ``time.perf_counter()`` instant, counted once the model is built; at least 0.1 s)."""
    sc = data.scale
    v = make_vars(data, horizon, lb)
    add_all(v)
    minimise_makespan(v)
    if hint is not None and data.exact:
        add_hint(v, {a: int(round(t * sc)) for a, t in hint.items()})
    # through the runtime: a signal stops the search with its best solution kept
    run = runtime.solve(v.model, cfg, max(0.1, until - time.perf_counter()))
    codes = {
        runtime.OPTIMAL: cp_model.OPTIMAL,
        runtime.FEASIBLE: cp_model.FEASIBLE,
        runtime.INFEASIBLE: cp_model.INFEASIBLE,
        runtime.MODEL_INVALID: cp_model.MODEL_INVALID,
    }
    status = codes.get(run.status, cp_model.UNKNOWN)
    solver = run.solver
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return ModelRun(solver.StatusName(status), None, lb)
    claimed = {a: solver.Value(v.start[a]) / sc for a in data.actions}
    order: list[list[Action]] = [[] for _ in range(problem.p)]
    for a in sorted(data.actions, key=lambda a: (claimed[a], a.stage, a.mb, a.kind)):
        order[problem.device(a.stage)].append(a)
    cand = PipelineSchedule(problem, "cp", order, claimed=claimed if data.exact else None)
    cand.validate(check_memory=True)
    return ModelRun(solver.StatusName(status), cand, max(lb, int(solver.BestObjectiveBound())))
