"""The result of every remat method (the CP models and the baselines), checked by the
replay when it is made, and its JSON form."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cpsched.core.graph import Graph
from cpsched.core.plain import to_plain
from cpsched.core.scenarios import Scenarios
from cpsched.remat.events import Event, events_to_names
from cpsched.remat.replay import _budget_array, check_plan
from cpsched.remat.skeleton import Skeleton, materialize
from cpsched.remat.timing import PlanTime, TransferModel, plan_time


@dataclass
class RematResult:
    """A remat/eviction plan per scenario, checked by ``replay`` before it is returned."""

    graph: Graph
    scenarios: Scenarios
    budget: np.ndarray  # [S] bytes (the cap the plan was made for)
    skeleton: Skeleton
    active: tuple[tuple[int, ...], ...]  # per scenario: active candidate ids
    events: tuple[tuple[Event, ...], ...]  # per scenario
    peak: np.ndarray  # [S] replayed bytes
    time: PlanTime
    method: str
    status: str
    seconds: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)
    transfer: TransferModel | None = None

    @property
    def added_time(self) -> np.ndarray:
        return self.time.added

    @property
    def added_time_pct(self) -> np.ndarray:
        return self.time.added_pct

    @property
    def weighted_added(self) -> float:
        return float(np.dot(self.scenarios.weights, self.time.added))

    def steps(self, s: int = 0) -> list[list[str]]:
        return events_to_names(self.graph, self.events[s])

    def plan_table(self) -> dict[str, list[int]]:
        return {n: list(a) for n, a in zip(self.scenarios.names, self.active)}


def finish_result(
    graph: Graph,
    scenarios: Scenarios,
    budget,
    skeleton: Skeleton,
    active: Sequence[Iterable[int]],
    method: str,
    status: str,
    seconds: float,
    durations: np.ndarray,
    transfer: TransferModel | None,
    info: Mapping[str, Any] | None = None,
    check_budget: bool = True,
) -> RematResult:
    """Materialize each scenario's plan, replay it (raises on any error), time it."""
    n_s = len(scenarios)
    bud = _budget_array(budget, n_s) if budget is not None else None
    evs, acts, peaks, times = [], [], [], []
    for s in range(n_s):
        a = tuple(sorted(int(c) for c in active[s]))
        ev = materialize(graph, skeleton, a)
        one = scenarios.only(s)
        r = check_plan(
            graph,
            ev,
            one,
            bud[s] if (bud is not None and check_budget) else None,
            what=f"{method} plan for {scenarios.names[s]}",
        )
        evs.append(tuple(ev))
        acts.append(a)
        peaks.append(int(r.peak[0]))
        times.append(plan_time(graph, ev, durations[s : s + 1], transfer, one))
    t = PlanTime(
        *(
            np.concatenate([getattr(x, f) for x in times])
            for f in ("makespan", "base", "recompute", "exposed_transfer")
        )
    )
    return RematResult(
        graph,
        scenarios,
        bud if bud is not None else np.asarray(peaks),
        skeleton,
        tuple(acts),
        tuple(evs),
        np.asarray(peaks, dtype=np.int64),
        t,
        method,
        status,
        seconds,
        dict(info or {}),
        transfer,
    )


def remat_result_to_dict(result: RematResult) -> dict[str, Any]:
    """The schedule JSON of a remat plan (``"format": "cpsched-remat"``): ``steps`` (the event
    list; a dict by scenario when there are several), ``peak_bytes`` and ``added_time_pct``
    (TDI: added time / sum of op times x 100) by scenario, ``status``, and the compile-time
    part (``order``, ``candidates``, ``plan_table``, ``breakpoints`` when known)."""
    g, sc = result.graph, result.scenarios
    steps_all = {n: result.steps(s) for s, n in enumerate(sc.names)}
    out: dict[str, Any] = {
        "format": "cpsched-remat",
        "version": 1,
        "graph": g.name,
        "method": result.method,
        "status": result.status,
        "steps": steps_all[sc.names[0]] if len(sc) == 1 else steps_all,
        "peak_bytes": {n: int(p) for n, p in zip(sc.names, result.peak)},
        "budget_bytes": {n: int(b) for n, b in zip(sc.names, result.budget)},
        "added_time_pct": {n: round(float(v), 6) for n, v in zip(sc.names, result.added_time_pct)},
        "added_time": {n: float(v) for n, v in zip(sc.names, result.added_time)},
        "recompute_time": {n: float(v) for n, v in zip(sc.names, result.time.recompute)},
        "exposed_transfer_time": {
            n: float(v) for n, v in zip(sc.names, result.time.exposed_transfer)
        },
        "solve_seconds": round(float(result.seconds), 3),
        "order": [g.op_names[i] for i in result.skeleton.order],
        "candidates": [
            result.skeleton.describe(g, c) for c in range(len(result.skeleton.candidates))
        ],
        "plan_table": {n: list(a) for n, a in zip(sc.names, result.active)},
    }
    if sc.dims:
        out["scenarios"] = sc.to_json()
    for k, v in result.info.items():
        if k not in out:
            out[k] = to_plain(v)
    return out
