"""Decision variables: one fixed-size interval per action (its device time), and, for the
memory model, one variable-length interval per (stage, microbatch) from the start of F to
the end of B (bytes freed by B) and one to the end of W (bytes freed by W)."""

from __future__ import annotations

from dataclasses import dataclass

from ortools.sat.python import cp_model

from cpsched.pipeline.model.problem import CpData
from cpsched.pipeline.schedule import Action


@dataclass
class Vars:
    data: CpData
    model: cp_model.CpModel
    horizon: int
    start: dict  # Action -> IntVar
    end: dict  # Action -> IntVar (start + busy)
    interval: dict  # Action -> IntervalVar
    makespan: cp_model.IntVar


def make_vars(data: CpData, horizon: int, lower_bound: int = 0) -> Vars:
    model = cp_model.CpModel()
    start, end, itv = {}, {}, {}
    for a in data.actions:
        d = data.busy[a]
        s = model.new_int_var(0, max(0, horizon - d), f"s_{a}")
        start[a] = s
        end[a] = s + d
        itv[a] = model.new_fixed_size_interval_var(s, d, f"i_{a}")
    mk = model.new_int_var(min(lower_bound, horizon), horizon, "makespan")
    return Vars(data, model, horizon, start, end, itv, mk)


def memory_interval(v: Vars, first: Action, last: Action, name: str):
    """Interval from the start of ``first`` to the end of ``last`` (same device)."""
    size = v.model.new_int_var(0, v.horizon, f"len_{name}")
    v.model.add(size == v.end[last] - v.start[first])
    return v.model.new_interval_var(v.start[first], size, v.end[last], f"mem_{name}")


__all__ = ["Vars", "make_vars", "memory_interval"]
