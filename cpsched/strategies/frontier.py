"""The memory-time frontier: the joint model solved at budgets from the least memory any
plan needs to the peak of the fastest schedule, with every heuristic on the same axes.

Budgets run from the least peak a plan is found for (``cp-remat`` minimising the peak; never
below the proven minimum, ``cpsched.cp.remat.problem.min_memory_bound``) up to the least
peak among the fastest orders known (``cp-overlap`` without a memory limit, or a heuristic
as fast), evenly spaced, each distinct budget once. The points are solved from the tightest
budget up, each ``solve_joint`` handed every plan known so far (the low end's plan, the
heuristics' orders, ``cp-overlap``'s, the tighter points' plans): a point keeps the
fastest of them that fits its budget, on equal makespans the lower peak, so no point is
missing where a plan is known, none is beaten by a heuristic the table shows, and the
frontier never rises as the budget grows. Each point's plan was replayed against the memory
simulator and timed by the timeline simulator (``solve_joint``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cpsched.analysis.memory import peak as order_peak
from cpsched.core.errors import CpschedError, InfeasibleError
from cpsched.core.graph import Graph
from cpsched.core.scenarios import Scenarios, static
from cpsched.core.units import format_bytes
from cpsched.cost.timeline import model_label, simulate_timeline
from cpsched.cp import runtime
from cpsched.cp.overlap.problem import build_problem
from cpsched.cp.remat.problem import min_memory_bound
from cpsched.methods import load_all
from cpsched.remat.skeleton import Skeleton
from cpsched.strategies.joint.method import solve_joint
from cpsched.strategies.overlap.method import solve_overlap
from cpsched.strategies.remat.method import solve_remat

DEFAULT_POINTS = 10
# More budgets than this take hours at the default point limit; refused, not started.
MAX_FRONTIER_POINTS = 200
DEFAULT_POINT_TIME_LIMIT = 20.0
# A solve's work besides its search (problem, heuristics, replays), per op, before one has
# been measured: the least-peak and the unconstrained solves took about 3 s each at 100k
# ops, so that a 10 s limit, 5 s of it spent reading, ran 17 s
SOLVE_FIXED_SECONDS_PER_OP = 3e-5


@dataclass
class Frontier:
    """Points (one per budget) and baselines (one per heuristic order), in bytes and the
    cost model's time unit; ``weights`` combine scenarios into one figure per point."""

    graph: str
    ops: int
    scenarios: list[str]
    unit: str
    points: list[dict[str, Any]]
    baselines: list[dict[str, Any]]
    settings: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "graph": self.graph,
            "ops": self.ops,
            "scenarios": self.scenarios,
            "unit": self.unit,
            "points": self.points,
            "baselines": self.baselines,
            "settings": self.settings,
        }


def _scalar(values: np.ndarray, names: Sequence[str]) -> Any:
    """One number for one scenario, else ``{scenario: value}``."""
    vals = [v.item() if hasattr(v, "item") else v for v in values]
    return vals[0] if len(names) == 1 else dict(zip(names, vals))


@runtime.stoppable
def frontier(
    graph: Graph,
    scenarios: Scenarios | None = None,
    *,
    points: int = DEFAULT_POINTS,
    time_limit: float = DEFAULT_POINT_TIME_LIMIT,
    evict: bool = False,
    bandwidth: float | None = None,
    device: Any = "h100",
    profile: Any = None,
    workers: int = 2,
    seed: int = 0,
    deterministic: bool = False,
    baselines: Sequence[str] | None = None,
    progress: Callable[[str], None] | None = None,
    deadline: float | None = None,
) -> Frontier:
    """Solve ``cp-joint`` at ``points`` budgets; ``time_limit`` seconds per point (and for
    each of the two solves that find the range). With ``deadline`` (``time.perf_counter()``)
    every solve also gets no more than its share of the time left, and the points that find
    no time left are not solved. A signal stops at the point it cuts: the points solved so
    far are returned (``settings['interrupted']``). ``deterministic`` reaches every solve
    (limits in work units; give no ``deadline`` for the same points on every run).

    Examples
    --------
    >>> from cpsched.generators import random_layered
    >>> f = frontier(random_layered(n=12, seed=3), points=3, time_limit=2)
    >>> len(f.points), all(p["status"] != "ERROR" for p in f.points)
    (3, True)
    """
    t0 = time.perf_counter()
    solves_left = int(points) + 2  # the range's two solves, then one per point
    # a solve's work besides its search (problem, heuristics, replays): the most seen so far
    overrun = [SOLVE_FIXED_SECONDS_PER_OP * graph.n_ops, time.perf_counter(), 0.0]
    # ([most, when the last began, its seconds]: the first solve has the estimate)

    def seconds() -> float:
        """This solve's time: ``time_limit``, and its share of what is left once each solve
        still to come has had its fixed work."""
        nonlocal solves_left
        now = time.perf_counter()
        if overrun[2]:
            overrun[0] = max(overrun[0], now - overrun[1] - overrun[2])
        solves_left -= 1
        if deadline is None:
            give = float(time_limit)
        else:
            give = min(float(time_limit), (deadline - now) / (solves_left + 1) - overrun[0])
        overrun[1], overrun[2] = now, max(give, 1e-9)
        return give

    sc = scenarios if scenarios is not None and len(scenarios) else static()
    names = list(sc.names)
    w = sc.weights
    base = build_problem(graph, sc, device=device, profile=profile, reach=False)
    costs = base.costs
    rows: list[dict[str, Any]] = []
    registry = load_all()
    todo = (
        list(baselines)
        if baselines is not None
        else [
            m.name
            for m in registry.values()
            if m.family in ("memory", "overlap")
            and m.applies(graph)
            and not m.name.startswith("cp")
        ]
    )
    orders: dict[str, list[int]] = {}
    if graph.original_order is not None:
        orders["given"] = list(graph.original_order)
    slowest = 0.0  # no heuristic starts that would end past a quarter of the time left
    until = None if deadline is None else t0 + 0.25 * (deadline - t0)
    for name in todo:
        started = time.perf_counter()
        if until is not None and started + slowest > until:
            continue
        try:
            out = registry[name].fn(graph, sc, device=device, seed=seed)
            orders[name] = list(getattr(out, "order", out))
        except CpschedError:
            continue
        finally:
            slowest = max(slowest, time.perf_counter() - started)
    base_peaks: dict[str, np.ndarray] = {}
    base_makespans: dict[str, np.ndarray] = {}
    base_exposed: dict[str, np.ndarray] = {}
    for name, order in orders.items():
        tl = simulate_timeline(graph, order, costs, sc)
        pk = order_peak(graph, order, sc)
        base_peaks[name], base_makespans[name] = pk, np.asarray(tl.makespan)
        base_exposed[name] = np.asarray(tl.exposed_comm)
        rows.append(
            {
                "method": name,
                "peak_bytes": _scalar(pk, names),
                "makespan": _scalar(np.asarray(tl.makespan), names),
                "exposed_comm": _scalar(np.asarray(tl.exposed_comm), names),
            }
        )
    # every plan known before the points are solved: each point may keep the best of them
    # that fits its budget (no point is then beaten by a baseline the table shows)
    known: dict[str, tuple[Skeleton, list[list[int]]]] = {
        name: (Skeleton(tuple(order)), [[] for _ in names]) for name, order in orders.items()
    }
    # the range: the proven minimum up to the fastest unconstrained order's peak
    lo, _ = min_memory_bound(graph, sc)
    low_source = "proven minimum with recompute and offload"
    t_least = seconds()
    try:
        if t_least <= 0 or runtime.interrupted():
            raise InfeasibleError("no time left")
        # the least peak a plan reaches (recompute allowed to double the work): the
        # proven minimum is often far below anything feasible
        least = solve_remat(
            graph,
            sc,
            None,
            objective="peak",
            overhead_cap=1.0,
            evict=evict,
            bandwidth=bandwidth,
            device=device,
            durations=base.dur,
            time_limit=t_least,
            workers=workers,
            seed=seed,
            deterministic=deterministic,
            deadline=deadline,
        )
        if (np.asarray(least.peak) > lo).any():
            lo = np.maximum(lo, np.asarray(least.peak, dtype=np.int64))
            low_source = "least peak of cp-remat (objective peak, up to 100 % added time)"
        # the plan that sets the low end fits it: the lowest point has at least that plan
        known["cp-remat (least peak)"] = (least.skeleton, [list(a) for a in least.active])
    except CpschedError:
        pass
    total = graph.sizes(sc).sum(axis=1) + graph.transient_bytes(sc).sum(axis=1) + 1
    # the top of the range: the least peak among the fastest orders known (cp-overlap's, or a
    # heuristic's that is as fast with less memory, or faster)
    tops = {n: (float(w @ base_makespans[n]), base_peaks[n]) for n in base_peaks}
    t_fast = seconds()
    if t_fast > 0 or not tops:  # without time, the heuristics' orders set the top
        fast = solve_overlap(
            graph,
            sc,
            budget=total,
            costs=costs,
            time_limit=max(0.01, t_fast),
            workers=workers,
            seed=seed,
            deterministic=deterministic,
            deadline=deadline,
        )
        known["cp-overlap (no memory limit)"] = (Skeleton(tuple(fast.order)), [[] for _ in names])
        tops["cp-overlap without a memory limit"] = (
            float(w @ np.asarray(simulate_timeline(graph, fast.order, costs, sc).makespan)),
            np.asarray(fast.peak_bytes, dtype=np.int64),
        )
    high_from = min(tops, key=lambda n: (tops[n][0], float(w @ tops[n][1])))
    hi = np.maximum(np.asarray(tops[high_from][1], dtype=np.int64), lo)
    high_source = f"peak of {high_from}, the fastest order known"
    k = max(2, int(points))
    budgets: list[np.ndarray] = []
    for i in range(k):  # each distinct budget once (a range of one value is one point)
        bud = np.rint(lo + (hi - lo) * i / (k - 1)).astype(np.int64)
        if not any((bud == b).all() for b in budgets):
            budgets.append(bud)
    pts: list[dict[str, Any]] = []
    prev: dict[str, Any] | None = None  # the best plan of the tighter budgets so far
    for i, bud in enumerate(budgets):
        if runtime.interrupted():
            break  # the points so far are the result
        if progress is not None:
            progress(
                f"point {i + 1}/{len(budgets)}: budget " + ", ".join(format_bytes(b) for b in bud)
            )
        row: dict[str, Any] = {"budget_bytes": _scalar(bud, names)}
        t_point = seconds()
        try:
            if t_point <= 0:
                raise InfeasibleError("not solved: the time limit ran out")
            res = solve_joint(
                graph,
                sc,
                bud,
                evict=evict,
                bandwidth=bandwidth,
                device=device,
                profile=profile,
                costs=costs,
                time_limit=t_point,
                workers=workers,
                seed=seed,
                deterministic=deterministic,
                known=known,
                deadline=deadline,
            )
        except InfeasibleError as e:
            res = None
            row["message"] = str(e)
            proven = "proven minimum" in str(e) and "not proven" not in str(e)
            row["status"] = "INFEASIBLE" if proven else ("NOT_RUN" if t_point <= 0 else "NO_PLAN")
        mine: dict[str, Any] | None = None
        bound = None
        if res is not None:
            info = res.info
            ms = np.array([info["makespan"][n] for n in names])
            mb = info.get("makespan_bound")
            bound = (
                _scalar(np.array([mb[n] for n in names]), names) if mb else info["weighted_bound"]
            )
            mine = {
                "status": res.status,
                "peak_bytes": _scalar(np.asarray(res.peak), names),
                "makespan": _scalar(ms, names),
                "exposed_comm": _scalar(np.array([info["exposed_comm"][n] for n in names]), names),
                "score": float(w @ ms),
                "plan_from": info.get("chosen"),
            }
            if info.get("interrupted"):
                mine["interrupted"] = True  # the point a signal cut: its best plan so far
        if mine is None:
            # not solved (no time, or no plan found): the fastest order the table shows that
            # fits this budget is still a plan for it, so the point is never left empty
            # while a known plan fits
            fits = [n for n in base_peaks if (base_peaks[n] <= bud).all()]
            if fits:
                n = min(
                    fits, key=lambda n: (float(w @ base_makespans[n]), float(w @ base_peaks[n]))
                )
                mine = {
                    "status": "HEURISTIC",
                    "peak_bytes": _scalar(base_peaks[n], names),
                    "makespan": _scalar(base_makespans[n], names),
                    "exposed_comm": _scalar(base_exposed[n], names),
                    "score": float(w @ base_makespans[n]),
                    "plan_from": n,
                }
        if prev is not None and (mine is None or prev["score"] < mine["score"]):
            # a plan of a tighter budget fits this one and is faster: keep it
            mine = dict(prev, carried_from=prev["budget_bytes"])
        if mine is None:
            pts.append(row)
            continue
        row.update({key: v for key, v in mine.items() if key not in ("score", "budget_bytes")})
        row["makespan_bound"] = bound
        pts.append(row)
        if res is not None:  # a hint and a fallback for the looser budgets
            known[f"plan at budget {i + 1}"] = (res.skeleton, [list(a) for a in res.active])
        prev = dict(mine, budget_bytes=mine.get("budget_bytes", row["budget_bytes"]))
    settings = {
        "points": len(budgets),
        "time_limit_per_point": float(time_limit),
        "workers": int(workers),
        "seed": int(seed),
        "deterministic": bool(deterministic),
        "evict": bool(evict),
        "bandwidth": bandwidth,
        "profile": profile if isinstance(profile, str) else None,
        "device": str(device),
        "model": model_label(costs.device, costs.unit),  # what the times come from
        "seconds": round(time.perf_counter() - t0, 3),
        "budget_range": {
            "low": _scalar(lo, names),
            "low_source": low_source,
            "high": _scalar(hi, names),
            "high_source": high_source,
        },
    }
    if runtime.interrupted():
        settings["interrupted"] = {"points_solved": len(pts), "points": len(budgets)}
    return Frontier(graph.name, graph.n_ops, names, costs.unit, pts, rows, settings)


__all__ = ["Frontier", "frontier", "DEFAULT_POINTS", "DEFAULT_POINT_TIME_LIMIT"]
