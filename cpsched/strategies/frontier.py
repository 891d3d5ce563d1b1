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
from cpsched.cp.runtime import SolverConfig
from cpsched.methods import load_all
from cpsched.remat.skeleton import Skeleton
from cpsched.strategies.joint.method import solve_joint
from cpsched.strategies.options import solver_options
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


class _SolveTimes:
    """Each solve's time: ``time_limit``, and (with a deadline: wall-clock mode; never in
    deterministic mode, where each solve gets ``time_limit`` of work) its share of what is
    left once each solve still to come has had its fixed work, the most seen so far."""

    def __init__(self, solves: int, time_limit: float, deadline: float | None, n_ops: int):
        self.left = solves
        self.time_limit = float(time_limit)
        self.deadline = deadline
        # a solve's work besides its search (problem, heuristics, replays): the most seen so
        # far (the first solve has the estimate), when the last began and its seconds
        self.fixed = SOLVE_FIXED_SECONDS_PER_OP * n_ops
        self.began = time.perf_counter()
        self.given = 0.0

    def next(self) -> float:
        now = time.perf_counter()
        if self.given:
            self.fixed = max(self.fixed, now - self.began - self.given)
        self.left -= 1
        if self.deadline is None:
            give = self.time_limit
        else:
            give = min(self.time_limit, (self.deadline - now) / (self.left + 1) - self.fixed)
        self.began, self.given = now, max(give, 1e-9)
        return give


@dataclass
class _Setting:
    """What every solve of one frontier reads."""

    graph: Graph
    sc: Scenarios
    evict: bool
    bandwidth: float | None
    device: Any
    profile: Any
    cfg: SolverConfig

    @property
    def names(self) -> list[str]:
        return list(self.sc.names)


@dataclass
class _Baselines:
    """The heuristics' orders on the frontier's axes: the table's rows, and per order its
    peak, makespan and exposed communication per scenario."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    peaks: dict[str, np.ndarray] = field(default_factory=dict)
    makespans: dict[str, np.ndarray] = field(default_factory=dict)
    exposed: dict[str, np.ndarray] = field(default_factory=dict)

    def fastest_fitting(self, bud: np.ndarray, w: np.ndarray) -> str | None:
        """The fastest order (then the least peak) whose peak fits ``bud``."""
        fits = [n for n in self.peaks if (self.peaks[n] <= bud).all()]
        if not fits:
            return None
        return min(fits, key=lambda n: (float(w @ self.makespans[n]), float(w @ self.peaks[n])))


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
    baselines: Sequence[str] | None = None,
    progress: Callable[[str], None] | None = None,
    cfg: SolverConfig | None = None,
) -> Frontier:
    """Solve ``cp-joint`` at ``points`` budgets; ``time_limit`` seconds per point (and for
    each of the two solves that find the range). ``cfg`` carries the solvers' workers, seed,
    determinism and deadline. With ``cfg.deadline`` (``time.perf_counter()``, wall-clock
    mode) every solve also gets no more than its share of the time left, and the points
    that find no time left are not solved. A signal stops at the point it cuts: the points
    solved so far are returned (``settings['interrupted']``).

    Examples
    --------
    >>> from cpsched.generators import random_layered
    >>> f = frontier(random_layered(n=12, seed=3), points=3, time_limit=2)
    >>> len(f.points), all(p["status"] != "ERROR" for p in f.points)
    (3, True)
    """
    t0 = time.perf_counter()
    cfg = SolverConfig() if cfg is None else cfg
    if cfg.deterministic:
        cfg = cfg.with_(deadline=None)
    times = _SolveTimes(int(points) + 2, time_limit, cfg.deadline, graph.n_ops)
    sc = scenarios if scenarios is not None and len(scenarios) else static()
    s = _Setting(graph, sc, evict, bandwidth, device, profile, cfg)
    base = build_problem(graph, sc, device=device, profile=profile, reach=False)
    costs = base.costs
    orders = _heuristic_orders(s, baselines, t0)
    known_orders = _baseline_rows(s, costs, orders)
    # every plan known before the points are solved: each point may keep the best of them
    # that fits its budget (no point is then beaten by a baseline the table shows)
    known: dict[str, tuple[Skeleton, list[list[int]]]] = {
        name: (Skeleton(tuple(order)), [[] for _ in s.names]) for name, order in orders.items()
    }
    # the range: the proven minimum up to the fastest unconstrained order's peak
    proven_min, _ = min_memory_bound(graph, sc)
    lo, low_source = _low_end(s, base.dur, proven_min, times.next(), known)
    hi, high_source = _high_end(s, costs, times.next(), known, known_orders, lo)
    budgets = _budgets(lo, hi, points)
    pts = _solve_points(s, costs, budgets, times, known, known_orders, progress)
    settings = {
        "points": len(budgets),
        "time_limit_per_point": float(time_limit),
        "workers": int(cfg.workers),
        "seed": int(cfg.seed),
        "deterministic": bool(cfg.deterministic),
        "evict": bool(evict),
        "bandwidth": bandwidth,
        "profile": profile if isinstance(profile, str) else None,
        "device": str(device),
        "model": model_label(costs.device, costs.unit),  # what the times come from
        "seconds": round(time.perf_counter() - t0, 3),
        "budget_range": {
            "low": _scalar(lo, s.names),
            "low_source": low_source,
            "high": _scalar(hi, s.names),
            "high_source": high_source,
        },
    }
    if runtime.interrupted():
        settings["interrupted"] = {"points_solved": len(pts), "points": len(budgets)}
    return Frontier(graph.name, graph.n_ops, s.names, costs.unit, pts, known_orders.rows, settings)


def _heuristic_orders(s: _Setting, baselines: Sequence[str] | None, t0: float):
    """The given order and every applicable heuristic's (``baselines``: these only); with a
    deadline, none starts that would end past a quarter of the time left."""
    graph = s.graph
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
    deadline = s.cfg.deadline
    until = None if deadline is None else t0 + 0.25 * (deadline - t0)
    for name in todo:
        started = time.perf_counter()
        if until is not None and started + slowest > until:
            continue
        try:
            out = registry[name].fn(graph, s.sc, device=s.device, seed=s.cfg.seed)
            orders[name] = list(getattr(out, "order", out))
        except CpschedError:
            continue
        finally:
            slowest = max(slowest, time.perf_counter() - started)
    return orders


def _baseline_rows(s: _Setting, costs, orders: dict[str, list[int]]) -> _Baselines:
    """Each order's peak, makespan and exposed communication (the table's baselines)."""
    out = _Baselines()
    for name, order in orders.items():
        tl = simulate_timeline(s.graph, order, costs, s.sc)
        pk = order_peak(s.graph, order, s.sc)
        out.peaks[name], out.makespans[name] = pk, np.asarray(tl.makespan)
        out.exposed[name] = np.asarray(tl.exposed_comm)
        out.rows.append(
            {
                "method": name,
                "peak_bytes": _scalar(pk, s.names),
                "makespan": _scalar(np.asarray(tl.makespan), s.names),
                "exposed_comm": _scalar(np.asarray(tl.exposed_comm), s.names),
            }
        )
    return out


def _low_end(
    s: _Setting, dur: np.ndarray, lo: np.ndarray, seconds: float, known
) -> tuple[np.ndarray, str]:
    """The bottom of the range: the proven minimum ``lo``, raised to the least peak a plan
    reaches (``cp-remat`` minimising the peak, recompute allowed to double the work: the
    proven minimum is often far below anything feasible), whose plan joins ``known``."""
    low_source = "proven minimum with recompute and offload"
    try:
        if seconds <= 0 or runtime.interrupted():
            raise InfeasibleError("no time left")
        least = solve_remat(
            s.graph,
            s.sc,
            None,
            objective="peak",
            overhead_cap=1.0,
            evict=s.evict,
            bandwidth=s.bandwidth,
            device=s.device,
            durations=dur,
            time_limit=seconds,
            **solver_options(s.cfg),
        )
        if (np.asarray(least.peak) > lo).any():
            lo = np.maximum(lo, np.asarray(least.peak, dtype=np.int64))
            low_source = "least peak of cp-remat (objective peak, up to 100 % added time)"
        # the plan that sets the low end fits it: the lowest point has at least that plan
        known["cp-remat (least peak)"] = (least.skeleton, [list(a) for a in least.active])
    except CpschedError:
        pass
    return lo, low_source


def _high_end(
    s: _Setting, costs, seconds: float, known, base: _Baselines, lo: np.ndarray
) -> tuple[np.ndarray, str]:
    """The top of the range: the least peak among the fastest orders known (cp-overlap's
    without a memory limit, or a heuristic's that is as fast with less memory, or faster);
    without time, the heuristics' orders set it."""
    graph, sc, w = s.graph, s.sc, s.sc.weights
    total = graph.sizes(sc).sum(axis=1) + graph.transient_bytes(sc).sum(axis=1) + 1
    tops = {n: (float(w @ base.makespans[n]), base.peaks[n]) for n in base.peaks}
    if seconds > 0 or not tops:
        fast = solve_overlap(
            graph,
            sc,
            budget=total,
            costs=costs,
            time_limit=max(0.01, seconds),
            **solver_options(s.cfg),
        )
        known["cp-overlap (no memory limit)"] = (Skeleton(tuple(fast.order)), [[] for _ in s.names])
        tops["cp-overlap without a memory limit"] = (
            float(w @ np.asarray(simulate_timeline(graph, fast.order, costs, sc).makespan)),
            np.asarray(fast.peak_bytes, dtype=np.int64),
        )
    high_from = min(tops, key=lambda n: (tops[n][0], float(w @ tops[n][1])))
    hi = np.maximum(np.asarray(tops[high_from][1], dtype=np.int64), lo)
    return hi, f"peak of {high_from}, the fastest order known"


def _budgets(lo: np.ndarray, hi: np.ndarray, points: int) -> list[np.ndarray]:
    """``points`` budgets evenly from ``lo`` to ``hi``, each distinct budget once (a range
    of one value is one point)."""
    k = max(2, int(points))
    budgets: list[np.ndarray] = []
    for i in range(k):
        bud = np.rint(lo + (hi - lo) * i / (k - 1)).astype(np.int64)
        if not any((bud == b).all() for b in budgets):
            budgets.append(bud)
    return budgets


def _solve_points(s, costs, budgets, times, known, base: _Baselines, progress):
    """The points, from the tightest budget up; each keeps the fastest known plan that fits
    (a tighter point's, carried up, if faster). A signal ends the list."""
    names, w = s.names, s.sc.weights
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
        res, mine, bound = _solve_point(s, costs, bud, times.next(), known, row)
        if mine is None:
            # not solved (no time, or no plan found): the fastest order the table shows that
            # fits this budget is still a plan for it, so the point is never left empty
            # while a known plan fits
            n = base.fastest_fitting(bud, w)
            if n is not None:
                mine = {
                    "status": "HEURISTIC",
                    "peak_bytes": _scalar(base.peaks[n], names),
                    "makespan": _scalar(base.makespans[n], names),
                    "exposed_comm": _scalar(base.exposed[n], names),
                    "score": float(w @ base.makespans[n]),
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
    return pts


def _solve_point(s: _Setting, costs, bud: np.ndarray, seconds: float, known, row):
    """``solve_joint`` at ``bud`` for ``seconds`` from every known plan: (the result or None,
    its figures or None, its makespan bound or None); a failure is written into ``row``."""
    names = s.names
    try:
        if seconds <= 0:
            raise InfeasibleError("not solved: the time limit ran out")
        res = solve_joint(
            s.graph,
            s.sc,
            bud,
            evict=s.evict,
            bandwidth=s.bandwidth,
            device=s.device,
            profile=s.profile,
            costs=costs,
            time_limit=seconds,
            known=known,
            **solver_options(s.cfg),
        )
    except InfeasibleError as e:
        row["message"] = str(e)
        proven = "proven minimum" in str(e) and "not proven" not in str(e)
        row["status"] = "INFEASIBLE" if proven else ("NOT_RUN" if seconds <= 0 else "NO_PLAN")
        return None, None, None
    info = res.info
    ms = np.array([info["makespan"][n] for n in names])
    mb = info.get("makespan_bound")
    bound = _scalar(np.array([mb[n] for n in names]), names) if mb else info["weighted_bound"]
    mine = {
        "status": res.status,
        "peak_bytes": _scalar(np.asarray(res.peak), names),
        "makespan": _scalar(ms, names),
        "exposed_comm": _scalar(np.array([info["exposed_comm"][n] for n in names]), names),
        "score": float(s.sc.weights @ ms),
        "plan_from": info.get("chosen"),
    }
    if info.get("interrupted"):
        mine["interrupted"] = True  # the point a signal cut: its best plan so far
    return res, mine, bound


__all__ = ["Frontier", "frontier", "DEFAULT_POINTS", "DEFAULT_POINT_TIME_LIMIT"]
