"""Objective: the makespan of one training step (equivalently the bubble, since the work per
device is fixed: bubble fraction = 1 - sum(work) / (p * makespan)), and hints."""

from __future__ import annotations

from collections.abc import Mapping

from cpsched.pipeline.model.variables import Vars
from cpsched.pipeline.schedule import Action


def minimise_makespan(v: Vars) -> None:
    v.model.minimize(v.makespan)


def add_hint(v: Vars, starts: Mapping[Action, int]) -> None:
    """Start times of a feasible schedule (scaled to model units)."""
    mk = 0
    for a, t in starts.items():
        v.model.add_hint(v.start[a], int(t))
        mk = max(mk, int(t) + v.data.busy[a])
    v.model.add_hint(v.makespan, mk)


__all__ = ["minimise_makespan", "add_hint"]
