"""Thin model builder: variables + constraint families + objective, chosen by options; and
``run``, which solves a built model with the CP-SAT runtime and decodes the order."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from ortools.sat.python import cp_model

from cpsched.cp import runtime
from cpsched.cp.memory import constraints as C
from cpsched.cp.memory import objectives as O
from cpsched.cp.memory.problem import Problem
from cpsched.cp.memory.scaling import Scale, make_scale
from cpsched.cp.memory.variables import Vars, make_vars
from cpsched.cp.runtime import SolverConfig


@dataclass(frozen=True)
class ModelOptions:
    memory: str = "cumulative"  # cumulative | per-op | both
    precedence: str = "distance"  # direct | reduction | distance | closure
    exact_liveness: bool = True  # end = max(users) (else end >= each user)
    symmetry: bool = True  # order identical independent ops
    domains: bool = True  # pos[v] in [#ancestors, n - 1 - #descendants]
    peak_bound: bool = True  # peak[s] >= the forced-live lower bound
    per_op_max_literals: int = 60_000  # 'both'/'per-op' fall back to cumulative above this

    def with_(self, **kw) -> ModelOptions:
        return replace(self, **kw)


@dataclass
class ObjectiveSpec:
    kind: str  # weighted | minimax | stage | budget
    weights: np.ndarray | None = None  # [S]
    minimax_lbs: np.ndarray | None = None  # [S] bytes
    stage: int = 0
    stage_caps: dict | None = None  # {s: cap in model units}
    budgets: np.ndarray | None = None  # [S] bytes


@dataclass
class Built:
    vars: Vars
    objective: O.Objective
    info: dict


def count_per_op_literals(p: Problem) -> int:
    return int(C.maybe_live(p).sum())


def build(
    p: Problem,
    spec: ObjectiveSpec,
    opts: ModelOptions = ModelOptions(),
    scale: Scale | None = None,
    hint: list[int] | None = None,
    peak_lower_bytes: np.ndarray | None = None,
) -> Built:
    scale = scale or make_scale(p)
    model = cp_model.CpModel()
    V = make_vars(p, scale, model, domains=opts.domains, peak_bound=opts.peak_bound)
    info: dict = {"n": p.n, "buffers": p.nb}
    if peak_lower_bytes is not None and opts.peak_bound:
        for s, lb in enumerate(peak_lower_bytes):
            model.add(V.peak[s] >= scale.units(s, int(lb)))
    C.permutation(V)
    info["precedences"] = C.precedences(V, opts.precedence)
    C.liveness(V, opts.exact_liveness)
    memory = opts.memory
    if memory in ("per-op", "both"):
        lits = count_per_op_literals(p)
        info["per_op_literals"] = lits
        if lits > opts.per_op_max_literals:
            memory = "cumulative"
    if memory in ("cumulative", "both"):
        C.memory_cumulative(V)
    if memory in ("per-op", "both"):
        C.memory_per_op(V)
    info["memory"] = memory
    if opts.symmetry:
        info["symmetry_constraints"] = C.symmetry(V)
    if spec.kind == "weighted":
        assert spec.weights is not None  # each kind comes with its fields
        obj = O.weighted(V, spec.weights)
    elif spec.kind == "minimax":
        assert spec.minimax_lbs is not None
        obj = O.minimax(V, spec.minimax_lbs)
    elif spec.kind == "stage":
        obj = O.stage(V, spec.stage, dict(spec.stage_caps or {}))
    elif spec.kind == "budget":
        assert spec.budgets is not None and spec.weights is not None
        obj = O.budget(V, spec.budgets, spec.weights)
    else:
        raise ValueError(f"unknown objective {spec.kind!r}")
    if hint is not None:
        C.hint(V, hint)
    return Built(V, obj, info)


@dataclass
class CpRun:
    status: str  # a cpsched.cp.runtime status
    order: list[int] | None  # best local order found
    objective: float | None  # model objective of that order
    bound: float | None  # proven bound of the model objective
    peaks_units: np.ndarray | None  # [S] model-unit peaks of the solution
    seconds: float
    stats: dict
    interrupted: bool = False


def run(
    built: Built,
    cfg: SolverConfig,
    time_limit: float | None = None,
    on_solution: Callable[[float, float], None] | None = None,
    on_bound: Callable[[float], None] | None = None,
    stop_at: float | None = None,
) -> CpRun:
    """Solve ``built`` (``cpsched.cp.runtime.solve``) and read back the order and peaks."""
    t0 = time.perf_counter()
    r = runtime.solve(
        built.vars.model,
        cfg,
        time_limit,
        on_solution=on_solution,
        on_bound=on_bound,
        stop_at=stop_at,
    )
    V = built.vars
    order = peaks = None
    if r.solved:
        pos = np.array([r.value(x) for x in V.pos], dtype=np.int64)
        order = [int(v) for v in np.argsort(pos, kind="stable")]
        peaks = np.array([r.value(x) for x in V.peak], dtype=np.int64)
    return CpRun(
        r.status,
        order,
        r.objective,
        r.bound,
        peaks,
        time.perf_counter() - t0,
        r.stats,
        r.interrupted,
    )
