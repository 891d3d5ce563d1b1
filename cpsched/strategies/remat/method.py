"""CP-SAT rematerialization and eviction, jointly with the op order, with per-bucket plans.

**Time grid.** Main step ``t`` (the ``t``-th op of the main order) owns slots
``G*t .. G*t+G-1``: the main op runs in the last one, clones (regenerations) in the
``G-1`` slots before it. Every compute occupies one slot; a buffer copy is resident over
an interval of slots.

**Variables.** Op ``v`` has copy 0 (its main compute, at slot ``G*pos_v+G-1``; ``pos_v`` is
fixed in the fixed-order model and a variable, all-different, in the joint model) and,
when it may be cloned, copies ``1..C-1`` at slot variables shared by every scenario, each
with a presence literal per scenario (which candidate is active in which bucket). Every
buffer copy has a retention end per scenario. A read (op ``w``'s copy reading buffer
``b``) must fall inside a present copy of ``b``: ``start < read <= end`` (Boolean choice of
the copy when ``b``'s producer has clones). Copies of one op are disjoint and ordered.
Eviction (fixed main order only): buffer ``b``'s copy 0 may be copied out after its last
read before its longest gap, its device copy freed before main step ``r`` and brought
back before main step ``g`` (``r <= g``, shared points, active per scenario), leaving a hole
in its retention; the copies run on copy streams (NoOverlap in time, from the main ops'
times) and the part of a prefetch that does not finish before the next read is
exposed time.

**Memory.** One cumulative per scenario over all retention intervals (plus transient
bytes at compute slots), capacity = that scenario's budget (sizes divided by their GCD).

**Objective.** Least weighted added time: clone durations + exposed prefetch time, with the
scenario weights; or (``objective='peak'``) least weighted peak under an added-time cap.

The model is in ``cpsched.cp.remat``: ``problem`` (scaling, proven minimum, candidates, the
``Spec``), ``variables``, ``constraints``, ``objectives`` and ``solve`` (build, run, decode);
this module is the strategy (the phases). The first phase looks for an order that fits with
nothing added using the min-peak model (``cpsched.cp.memory``).

On graphs of ``LNS_MIN_OPS`` ops or more, the best baseline plan is first improved by two
neighbourhood searches over its clones on its order: the greedy one (``lns_remat``:
windows re-walked by the span greedy) and the exact one (``lns_segments``: the clones of
a random set of ops re-solved to optimality in the segment model of
``cpsched.cp.remat.segments``).

Registered as ``cp-remat`` and, with the order frozen (the Checkmate / Moccasin setting),
``remat-fixed-order``.

Plans are re-checked by the independent replay (``cpsched.remat.replay``) before they
are returned, and ``solve_remat`` never returns a plan worse than the best baseline that
meets the budget (the baselines also hint the model).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cpsched.analysis.memory import simulate
from cpsched.core.errors import BudgetError, InputError
from cpsched.core.graph import Graph
from cpsched.core.scenarios import Scenarios, static
from cpsched.core.units import format_bytes_exact
from cpsched.cp import runtime
from cpsched.cp.remat.lp_bound import lp_bound
from cpsched.cp.remat.problem import (
    ModelTooLarge,
    Spec,
    check_budget,
    clone_candidates,
    min_memory_bound,
    regens_per_op,
    skeleton_from,
    spec_common,
    sub_needed,
    transfer_ticks,
)
from cpsched.cp.remat.segments import hot_steps
from cpsched.cp.remat.solve import build_model, remat_config, run_model, solve_spec
from cpsched.cp.runtime import FALLBACK, FEASIBLE, INFEASIBLE, OPTIMAL, SolverConfig
from cpsched.heuristics.remat import (
    BASELINES,
    lns_remat,
    offload_remat,
    xla_remat,
)
from cpsched.heuristics.xla_memory import xla_default
from cpsched.methods import register
from cpsched.remat.bound import added_time_lower_bound
from cpsched.remat.breakpoints import breakpoints
from cpsched.remat.policy import inplace_writers, recomputable_ops
from cpsched.remat.replay import _budget_array
from cpsched.remat.result import RematResult, finish_result, remat_result_to_dict
from cpsched.remat.setup import regens_fit, with_budget, with_regens
from cpsched.remat.skeleton import Regen, Skeleton
from cpsched.remat.timing import TransferModel, host_link, op_durations
from cpsched.strategies.min_peak.method import solve as solve_min_peak
from cpsched.strategies.options import solver_options
from cpsched.strategies.remat.search import lns_segments

JOINT_ALL_OPS = 300  # up to this many ops the joint model may clone any clonable op
# From this many ops on, the best baseline plan is improved by a large-neighbourhood search
# over its clones (``lns_remat``) before the CP models: on RLG n1000 CP-SAT's fixed-order
# model found nothing better than its hint in 150 s, the search 2.14 % -> 1.96 % in 90 s
LNS_MIN_OPS = 600
# (the greedy search stalls: on RLG n1000 at 486,895 one improvement in its last 749 rounds)
LNS_SHARE = 0.4
# in deterministic mode its rounds, not its time, are limited: this many ops per round and
# second of its budget (a round re-walks a window and prunes: RLG n1000 at 95 % of its given
# order's peak, 23 rounds in 9 s on a loaded 2-core machine)
LNS_OPS_PER_SECOND = 2_500
# then the exact-repair search over the same clones (``lns_segments``) gets this share of
# what is left; the interval models after it found little on RLG n1000 (the joint model
# 1.877 -> 1.869 % in ~100 s, the fixed-order one nothing), the exact repairs
# 1.806 -> 1.781 % in 120 s
SEGMENT_SHARE = 0.7
# Building a remat model takes about this long per clone position (a candidate's allowed
# step; a 1,000-op layered graph at 90 %: 401k positions in 16.5 s on a loaded 2-core
# machine), and the positions grow with the square of the graph: a model is skipped when
# its positions would take more than BUILD_SHARE of its phase's time to build, and above
# MAX_POSITIONS whatever the time (memory: 46 million took 3.4 GB before any model)
BUILD_SECONDS_PER_POSITION = 4e-5
BUILD_SHARE = 0.5
MAX_POSITIONS = 2_000_000
# A baseline's work beyond its search, per op: setting up, and the replay and timing of its
# plan (10,000 ops: about 0.5 s on a loaded 2-core machine); a run that cannot do that in
# the time left is skipped, and its search stops that much earlier
BASELINE_SECONDS_PER_OP = 1e-4
# deterministic mode: a baseline's wall-clock cap, a guard only (the greedies end long before
# it on graphs the CP models take), so that the load cannot cut one short and change its plan
DET_BASELINE_SECONDS = 30.0
BOUND_MAX_OPS = 20_000  # the fixed-order added-time bound scans buffers per hot step
LP_BOUND_SHARE = 0.1  # of the time limit, for the LP bound on a kept order
LP_BOUND_MAX_S = 30.0

__all__ = [
    "solve_remat",
    "remat_result_to_dict",
    "RematResult",
    "min_memory_bound",
    "min_peak_order",
    "fixed_order_remat",
]


def _time_left(time_limit: float, since: float, cfg: SolverConfig) -> float:
    """What is left of a phase's ``time_limit`` started at ``since`` (all of it in
    deterministic mode, where limits are work)."""
    return time_limit if cfg.deterministic else time_limit - (time.perf_counter() - since)


def _max_positions(seconds: float, cfg: SolverConfig) -> int:
    """The most clone positions a model may have to be built in ``BUILD_SHARE`` of
    ``seconds`` (``MAX_POSITIONS`` whatever the time in deterministic mode)."""
    if cfg.deterministic:
        return MAX_POSITIONS
    return int(min(MAX_POSITIONS, BUILD_SHARE * max(0.0, seconds) / BUILD_SECONDS_PER_POSITION))


def min_peak_order(
    graph: Graph,
    scenarios: Scenarios | None = None,
    *,
    target: Sequence[int] | np.ndarray | int | None = None,
    hint: Sequence[int] | None = None,
    cfg: SolverConfig | None = None,
) -> tuple[list[int], np.ndarray, str]:
    """An order of least peak by the min-peak model (``cpsched.strategies.min_peak.method``; with
    ``target`` bytes per scenario, its budget objective, stopped as soon as every scenario
    is at or under it), in ``cfg.time_limit`` seconds with ``cfg``'s solver options.
    Returns the order, its peaks and the solver's status; never worse than ``hint`` (then
    the status is ``HINT``)."""
    cfg = SolverConfig(time_limit=30.0) if cfg is None else cfg
    sc = scenarios or static()
    hint = list(graph.default_order() if hint is None else hint)
    hint_peak = simulate(graph, hint, sc).peak
    opts = dict(solver_options(cfg), time_limit=cfg.time_limit, log=cfg.log, hint=hint)
    if target is not None:
        t0 = time.perf_counter()
        s = solve_min_peak(
            graph, sc, budget=_budget_array(target, len(sc)), stop_when_fits=True, **opts
        )
        left = cfg.time_limit - (time.perf_counter() - t0)
        if s.status == INFEASIBLE and left > 1.0:
            # proven that no order fits: the remat that follows needs the least peak, not
            # the first order the proof left (RLG n1000 at 486,895: the cut bound proves it
            # in 13 s, with XLA's order at 566,430 and span greedy 2.21 %; the least-peak
            # order, 562,740, gives 1.87 %)
            s = solve_min_peak(graph, sc, **dict(opts, time_limit=left, hint=list(s.order)))
    else:
        s = solve_min_peak(graph, sc, **opts)
    pk = np.asarray(s.peak_bytes, dtype=np.int64)
    if np.dot(sc.weights, pk / np.maximum(hint_peak, 1)) <= 1.0 + 1e-12:
        return list(s.order), pk, s.status
    return hint, hint_peak, "HINT"


@dataclass
class _Setting:
    """What every phase of one cp-remat run reads: the problem, the models' options and
    the run's clock."""

    graph: Graph
    sc: Scenarios
    dur: np.ndarray
    transfer: TransferModel | None
    evict: bool
    reorder: bool
    copies: int
    sub_slots: int
    margin: float
    depth: int
    max_candidates: int | None
    clock: runtime.Clock
    cfg: SolverConfig
    method_name: str
    t_start: float
    progress: Any

    def remaining(self) -> float:
        return self.clock.left()

    def share(self, frac: float) -> float:
        """``frac`` of the time left: at least a second in deterministic mode (budgets of
        work, as they always were), else never past the deadline."""
        left = max(0.0, self.remaining())
        return max(1.0, frac * left) if self.cfg.deterministic else frac * left

    def min_peak_order(self, order: Sequence[int], time_limit: float, target=None):
        """``min_peak_order`` from ``order`` with this run's solver options."""
        cfg = self.cfg.with_(time_limit=max(0.01, time_limit))
        return min_peak_order(self.graph, self.sc, target=target, hint=order, cfg=cfg)


@runtime.stoppable
def solve_remat(
    graph: Graph,
    scenarios: Scenarios | None = None,
    budget=None,
    *,
    evict: bool = False,
    time_limit: float = 60.0,
    workers: int = 2,
    seed: int = 0,
    reorder: bool | None = None,
    order: Sequence[int] | None = None,
    copies: int = 2,
    objective: str = "time",
    overhead_cap: float | None = None,
    transfer: TransferModel | None = None,
    bandwidth: float | None = None,
    latency: float = 0.0,
    device: Any = "h100",
    durations: np.ndarray | None = None,
    margin: float = 1.0,
    depth: int = 1,
    max_candidates: int | None = None,
    sub_slots: int = 2,
    baselines: bool = True,
    log: bool = False,
    deterministic: bool = False,
    method_name: str = "cp-remat",
    progress=None,
    deadline: float | None = None,
    **_: Any,
) -> RematResult:
    """Least added time (clones + exposed copies) under ``budget`` bytes per scenario.

    ``reorder`` (default: on unless ``order`` is given) first looks for an order
    under the budget (no added time at all), then solves order and clones jointly; otherwise
    the order (``order``, else the graph's own, or the better baseline order) is frozen.
    ``evict`` adds host offload candidates, timed with ``transfer`` (or ``bandwidth`` bytes
    per time unit of the op times, or the PCIe figures of ``device`` when the op times are in
    seconds). ``objective='peak'`` minimises the weighted peak with the added time capped at
    ``overhead_cap`` (a fraction of the op time sum, per scenario) instead.

    ``deterministic`` follows ``cpsched.cp.runtime`` (the phases' time shares are counted on
    its ``Clock``; the baselines' own time caps still run on the wall clock). ``deadline``
    (a ``time.perf_counter()`` instant, wall-clock mode) ends every phase whatever
    ``time_limit`` says; a phase with no time left is skipped, and a model too large to
    be built in its share of the time is left out (``info['skipped']``).

    Raises ``InfeasibleError`` when the budget is below the proven minimum (the message gives
    it), or when no plan was found. The returned plans passed the replay checker.
    """
    t_start = time.perf_counter()
    if deterministic:
        deadline = None
    clock = runtime.Clock(time_limit, deterministic, t_start, deadline)
    cfg = remat_config(
        SolverConfig(
            workers=workers, seed=seed, log=log, deterministic=deterministic, deadline=deadline
        )
    )
    sc = scenarios if scenarios is not None and len(scenarios) else static()
    if objective not in ("time", "peak"):
        raise InputError(f"remat objective {objective!r}: expected 'time' or 'peak'")
    if objective == "time" and budget is None:
        raise InputError("remat needs a memory budget (--budget BYTES)")
    dur = (
        op_durations(graph, sc, device)
        if durations is None
        else np.atleast_2d(np.asarray(durations, dtype=np.float64))
    )
    if evict and transfer is None:
        transfer = host_link(graph, device, bandwidth, latency)
    if reorder is None:
        # with eviction too: an order that fits needs no copies at all, and the evict model
        # then works on the best order found
        reorder = order is None
    base_order = list(graph.default_order() if order is None else order)
    s = _Setting(
        graph, sc, dur, transfer, evict, reorder, copies, sub_slots, margin, depth,
        max_candidates, clock, cfg, method_name, t_start, progress,
    )  # fmt: skip
    if objective == "peak":
        return _solve_peak(s, base_order, overhead_cap)
    return _TimeSearch(s, _budget_array(budget, len(sc)), baselines).run(base_order, time_limit)


def _plan_row(r: RematResult) -> dict[str, Any]:
    """A plan's figures as ``info['baselines']`` reports them."""
    return {
        "status": r.status,
        "added_time_pct": [round(float(x), 4) for x in r.added_time_pct],
        "peak_bytes": [int(p) for p in r.peak],
    }


class _TimeSearch:
    """The phases of cp-remat under the time objective, in order: orders (the given one,
    XLA's best memory order and a min-peak search), baselines on each, the neighbourhood
    searches on large graphs, the fixed-order model, the joint model. The result is never
    worse than the best baseline that meets the budget."""

    def __init__(self, s: _Setting, bud: np.ndarray, use_baselines: bool):
        self.s = s
        self.bud = bud
        self.use_baselines = use_baselines
        self.info: dict[str, Any] = {}
        self.timings: dict[str, float] = {}
        self.orders: dict[str, list[int]] = {}
        self.peaks: dict[str, np.ndarray] = {}
        self.best_key = ""
        self.base_results: dict[str, RematResult] = {}
        self.order_key_of: dict[str, str] = {}
        self.feasible: dict[str, RematResult] = {}

    def run(self, base_order: list[int], time_limit: float) -> RematResult:
        s = self.s
        lb = check_budget(s.graph, s.sc, self.bud, None if s.reorder else base_order)
        self.info["proven_min_bytes"] = {n: int(v) for n, v in zip(s.sc.names, lb)}
        if not s.reorder and s.graph.n_ops <= BOUND_MAX_OPS and s.clock.left() > 0:
            self._lower_bound(base_order, time_limit)
        self._orders(base_order)
        early = self._early_plan()
        self._reorder()
        self.info["order_peaks"] = {k: [int(x) for x in v] for k, v in self.peaks.items()}
        fits = self._order_that_fits()
        if fits is not None:
            return fits
        self.info["order_from"] = self.best_key
        self._baselines(early)
        best = self._best_baseline()
        if best is not None and self._clone_search_applies(best):
            best = self._clone_search(best)
        best, on_fixed = self._fixed_model(best)
        if s.reorder and s.remaining() > 0.5 and (best is None or best.weighted_added > 0):
            best = self._joint_model(best, on_fixed)
        if best is None and self.use_baselines:
            best = self._last_resort()
        if best is None:
            raise self._no_plan(lb, time_limit)
        return _wrap_up(best, self.info, self.timings, s.method_name, s.t_start)

    def _lower_bound(self, order: list[int], time_limit: float) -> None:
        """What no plan on this order can beat: tells a weak search from a hopeless target."""
        s = self.s
        tb = added_time_lower_bound(
            s.graph, order, self.bud, s.dur, s.sc, s.transfer if s.evict else None
        )
        if not s.evict and (tb > 0).any() and np.isfinite(tb).all():
            # the covering bound ignores the clones' inputs; the LP does not (RLG n1000 at
            # 486,895: 0.281 % -> 1.565 %). Clones only: copies to the host are not in it.
            t0 = time.perf_counter()
            t_lp = min(LP_BOUND_SHARE * time_limit, LP_BOUND_MAX_S, s.clock.left())
            if s.cfg.deterministic or t_lp >= 1.0:  # its LPs run for a second at least
                tb = np.maximum(
                    tb, lp_bound(s.graph, order, self.bud, s.dur, s.sc, time_limit=t_lp)
                )
                self.timings["lp_bound"] = time.perf_counter() - t0
        self.info["added_time_lower_bound"] = [float(x) for x in tb]

    def _pick_order(self) -> None:
        w = self.s.sc.weights
        self.best_key = min(self.peaks, key=lambda k: float(np.dot(w, self.peaks[k] / self.bud)))

    def _best_fits(self) -> bool:
        return bool((self.peaks[self.best_key] <= self.bud).all())

    def _orders(self, base_order: list[int]) -> None:
        """1. orders: the given one and XLA's best memory order (reorder)."""
        s = self.s
        self.orders = {"given": base_order}
        if s.reorder:
            try:
                self.orders["xla-default"] = list(xla_default(s.graph, s.sc))
            except Exception:  # noqa: BLE001 - an optional helper; the given order always exists
                pass
        self.peaks = {k: simulate(s.graph, o, s.sc).peak for k, o in self.orders.items()}
        self._pick_order()

    def _early_plan(self) -> tuple[str, RematResult] | None:
        """1a. a heuristic plan before any search, so that a short limit still returns at
        least what the heuristics give (at 2 s on 1k ops the reorder search and the
        baselines' time shares left none to finish): XLA's greedy on the lowest-peak order
        known, with three quarters of the time left (cut short, a greedy leaves nothing; it
        ends in 0.2 s on 1k ops, and the searches after it get what it leaves)."""
        s = self.s
        if not (self.use_baselines and s.reorder and not self._best_fits()):
            return None
        t0 = time.perf_counter()
        fixed_s = BASELINE_SECONDS_PER_OP * s.graph.n_ops
        run_limit = DET_BASELINE_SECONDS if s.cfg.deterministic else 0.75 * s.remaining() - fixed_s
        if run_limit <= 0:
            return None
        try:
            r = xla_remat(
                s.graph,
                s.sc,
                self.bud,
                order=self.orders[self.best_key],
                durations=s.dur,
                transfer=s.transfer,
                time_limit=run_limit,
            )
        except Exception as e:  # noqa: BLE001 - the baselines below report it again
            self.info.setdefault("baseline_errors", {})["remat-xla"] = str(e)
            return None
        self.timings["remat-xla (before the reorder search)"] = time.perf_counter() - t0
        return self.best_key, r

    def _reorder(self) -> None:
        """1b. (reorder) a min-peak search for an order under the budget."""
        s = self.s
        if not (s.reorder and not self._best_fits()):
            return
        t0 = time.perf_counter()
        t_reorder = s.share(0.3)
        o, pk, st = s.min_peak_order(self.orders[self.best_key], t_reorder, target=self.bud)
        s.clock.spend(t_reorder)
        self.timings["reorder"] = time.perf_counter() - t0
        self.orders["min-peak"] = o
        self.peaks["min-peak"] = pk
        self.info["min_peak_status"] = st
        self._pick_order()

    def _order_that_fits(self) -> RematResult | None:
        """The plan of the first order under the budget (nothing added), if any."""
        s = self.s
        for key, o in self.orders.items():
            if (self.peaks[key] <= self.bud).all():
                res = finish_result(
                    s.graph,
                    s.sc,
                    self.bud,
                    Skeleton(tuple(o)),
                    [[]] * len(s.sc),
                    s.method_name,
                    OPTIMAL,
                    time.perf_counter() - s.t_start,
                    s.dur,
                    s.transfer,
                    {"message": "an order meets the budget: no added time"},
                )
                info = dict(self.info, order_from=key)
                return _wrap_up(res, info, self.timings, s.method_name, s.t_start)
        return None

    def _baselines(self, early: tuple[str, RematResult] | None) -> None:
        """2. baselines on every order tried (the lowest-peak order is not always the one
        where recomputing is cheapest: on RLG n1000 at its 80 % budget XLA's greedy adds
        7.8 % on the given order, more on the min-peak one)."""
        s = self.s
        det = s.cfg.deterministic
        if early is not None:
            label = "remat-xla" if early[0] == self.best_key else f"remat-xla@{early[0]}"
            self.base_results[label] = early[1]
            self.order_key_of[label] = early[0]
        if not self.use_baselines:
            return
        todo = dict(BASELINES)
        if s.evict:
            todo["remat-offload"] = offload_remat
        if s.graph.n_ops > 600:
            todo.pop("remat-dtr", None)
        keys = [self.best_key] + [k for k in self.orders if k != self.best_key]
        n_runs = max(1, len(keys) * len(todo))
        cap = s.share(0.25 / n_runs)
        # wall clock: half of what is left, and until a plan fits, each run may take half of
        # the time left (a greedy cut short leaves nothing); then the rest share the half
        t_all = cap * n_runs if det else 0.5 * max(0.0, s.remaining())
        s.clock.spend(t_all)
        t_base = time.perf_counter()
        done_runs = 0
        for okey in keys:
            for name, fn in todo.items():
                label = name if okey == self.best_key else f"{name}@{okey}"
                t0 = time.perf_counter()
                done_runs += 1
                if label in self.base_results:  # run before the reorder search
                    continue
                if not det:
                    found = any((r.peak <= r.budget).all() for r in self.base_results.values())
                    spare = max(0.0, t_all - (t0 - t_base)) / (n_runs - done_runs + 1)
                    run_limit = min(
                        spare if found else max(spare, 0.5 * s.remaining()), s.remaining()
                    )
                    fixed_s = BASELINE_SECONDS_PER_OP * s.graph.n_ops
                    if run_limit <= fixed_s:
                        self.info.setdefault("skipped", []).append(label)
                        continue
                    run_limit -= fixed_s
                try:
                    r = fn(
                        s.graph,
                        s.sc,
                        self.bud,
                        order=self.orders[okey],
                        durations=s.dur,
                        transfer=s.transfer,
                        # deterministic mode: the wall cap only guards (a greedy cut short
                        # by the load would change the plan)
                        time_limit=DET_BASELINE_SECONDS if det else run_limit,
                    )
                except Exception as e:  # noqa: BLE001 - a failing baseline is reported
                    self.info.setdefault("baseline_errors", {})[label] = str(e)
                    continue
                self.timings[label] = time.perf_counter() - t0
                self.base_results[label] = r
                self.order_key_of[label] = okey

    def _best_baseline(self) -> RematResult | None:
        """The baseline plan of least added time that meets the budget (the floor)."""
        self.feasible = {k: r for k, r in self.base_results.items() if (r.peak <= r.budget).all()}
        self.info["baselines"] = {k: _plan_row(r) for k, r in self.base_results.items()}
        if not self.feasible:
            return None
        best_label = min(self.feasible, key=lambda k: self.feasible[k].weighted_added)
        self.info["order_from"] = self.order_key_of[best_label]
        return self.feasible[best_label]

    def _clone_search_applies(self, best: RematResult) -> bool:
        s = self.s
        return (
            s.graph.n_ops >= LNS_MIN_OPS
            and best.weighted_added > 0
            and not s.evict
            and all(isinstance(c, Regen) for c in best.skeleton.candidates)
            and all(len(a) == len(best.skeleton.candidates) for a in best.active)
            and (
                s.cfg.deterministic
                or s.share(LNS_SHARE) > 2 * BASELINE_SECONDS_PER_OP * s.graph.n_ops
            )
        )

    def _clone_search(self, best: RematResult) -> RematResult:
        """2b. large graphs: neighbourhood search over the clones of the best plan, on its
        order (the span greedy's, then the exact repairs')."""
        s = self.s
        t0 = time.perf_counter()
        # its start and its end each replay the plan
        t_lns = s.share(LNS_SHARE) - (
            0 if s.cfg.deterministic else BASELINE_SECONDS_PER_OP * s.graph.n_ops
        )
        okey = self.info["order_from"]
        try:
            r = lns_remat(
                s.graph,
                s.sc,
                self.bud,
                order=list(best.skeleton.order),
                start=[c for c in best.skeleton.candidates if isinstance(c, Regen)],
                durations=s.dur,
                time_limit=t_lns,
                seed=s.cfg.seed,
                rounds_limit=(
                    max(1, int(t_lns * LNS_OPS_PER_SECOND / s.graph.n_ops))
                    if s.cfg.deterministic
                    else None
                ),
            )
        except Exception as e:  # noqa: BLE001 - the plan it started from stays the result
            self.info.setdefault("baseline_errors", {})["remat-lns"] = str(e)
        else:
            label = "remat-lns" if okey == self.best_key else f"remat-lns@{okey}"
            self.base_results[label] = r
            self.order_key_of[label] = okey
            self.info["baselines"][label] = _plan_row(r)
            if (r.peak <= r.budget).all():
                self.feasible[label] = r
                if r.weighted_added < best.weighted_added - 1e-12:
                    best = r
        s.clock.spend(t_lns)
        self.timings["remat-lns"] = time.perf_counter() - t0
        return _segment_search(s, self.bud, best, self.info, self.timings)

    def _fixed_model(
        self, best: RematResult | None
    ) -> tuple[RematResult | None, RematResult | None]:
        """3. fixed-order CP model on the lowest-peak order: the joint model works best from
        it (RLG n1000 at 547,757: 0.44 % from there, 1.27 % from the given order), and a
        baseline on another order that beats it stays the floor. Returns the best plan and
        the best plan on that order."""
        s = self.s
        fixed = list(self.orders[self.best_key])
        mine = {k: r for k, r in self.feasible.items() if self.order_key_of[k] == self.best_key}
        on_fixed = min(mine.values(), key=lambda r: r.weighted_added) if mine else None
        t0 = time.perf_counter()
        t_fixed = s.share(0.4 if s.reorder else 1.0)
        hint = skeleton_from(on_fixed) if on_fixed else None
        cp_res, cp_status = _solve_fixed(s, self.bud, fixed, hint, t_fixed)
        s.clock.spend(t_fixed)
        self.timings["cp-fixed"] = time.perf_counter() - t0
        self.info["cp_fixed_status"] = cp_status
        if cp_res is not None and (
            on_fixed is None or cp_res.weighted_added <= on_fixed.weighted_added + 1e-9
        ):
            on_fixed = cp_res
        if cp_res is not None and (
            best is None or cp_res.weighted_added <= best.weighted_added + 1e-9
        ):
            best = cp_res
            self.info["order_from"] = self.best_key
        return best, on_fixed

    def _joint_model(
        self, best: RematResult | None, on_fixed: RematResult | None
    ) -> RematResult | None:
        """4. joint order + clones, from the best plan on the lowest-peak order, else from
        any plan found (a baseline on another order: the joint model may move ops), else
        from the bare order."""
        s = self.s
        t0 = time.perf_counter()
        fixed = list(self.orders[self.best_key])
        start = on_fixed if on_fixed is not None else best
        hint = (
            skeleton_from(start)
            if start is not None
            else (Skeleton(tuple(fixed)), [[] for _ in range(len(s.sc))])
        )
        j_res, j_status = _solve_joint(s, self.bud, fixed, hint, s.remaining())
        self.timings["cp-joint"] = time.perf_counter() - t0
        self.info["cp_joint_status"] = j_status
        if j_res is not None and (
            best is None or j_res.weighted_added < best.weighted_added - 1e-9
        ):
            best = j_res
            self.info["order_from"] = self.best_key  # the joint model's start
        return best

    def _last_resort(self) -> RematResult | None:
        """XLA's greedy remat on every order tried, with what time is left (the time caps
        above can cut it short on large graphs)."""
        s = self.s
        det = s.cfg.deterministic
        for key, o in self.orders.items():
            t0 = time.perf_counter()
            fixed_s = BASELINE_SECONDS_PER_OP * s.graph.n_ops
            if not det and s.remaining() <= fixed_s:
                break
            try:
                r = xla_remat(
                    s.graph,
                    s.sc,
                    self.bud,
                    order=o,
                    durations=s.dur,
                    transfer=s.transfer,
                    time_limit=s.remaining() - fixed_s if not det else DET_BASELINE_SECONDS,
                )
            except Exception:  # noqa: BLE001 - nothing better to report than the error below
                continue
            self.timings[f"remat-xla-{key}"] = time.perf_counter() - t0
            if (r.peak <= r.budget).all():
                self.info["order_from"] = key
                return r
        return None

    def _no_plan(self, lb: np.ndarray, time_limit: float) -> BudgetError:
        """The error when nothing fits: the least peak any order or plan tried reached is
        the budget that can be had now."""
        sc = self.s.sc
        reached = np.min(
            [self.peaks[k] for k in self.peaks] + [r.peak for r in self.base_results.values()],
            axis=0,
        )
        stopped = "stopped by a signal" if runtime.interrupted() else f"in {time_limit:g} s"
        return BudgetError(
            f"no plan found under the budget {stopped} (not proven infeasible): "
            + "; ".join(
                f"{n}: budget {format_bytes_exact(b)}, least peak reached {format_bytes_exact(p)}, proven minimum {format_bytes_exact(x)}"
                for n, b, p, x in zip(sc.names, self.bud, reached, lb)
            )
            + "; a longer --time-limit may meet it",
            reached={n: int(p) for n, p in zip(sc.names, reached)},
            proven={n: int(x) for n, x in zip(sc.names, lb)},
        )


def _segment_search(
    s: _Setting,
    bud: np.ndarray,
    best: RematResult,
    info: dict[str, Any],
    timings: dict[str, float],
) -> RematResult:
    """Exact-repair neighbourhood search over the clones of ``best`` on its order
    (``cpsched.strategies.remat.search.lns_segments``), ``SEGMENT_SHARE`` of the time left;
    the better plan of the two is returned (reported as ``remat-segments``)."""
    graph, sc, det = s.graph, s.sc, s.cfg.deterministic
    fixed_s = 2 * BASELINE_SECONDS_PER_OP * graph.n_ops  # its start and end replay the plan
    if best.weighted_added <= 0 or (not det and s.remaining() <= 1.0 + fixed_s):  # rounds: 1 s
        return best
    t0 = time.perf_counter()
    t_seg = (
        max(1.0, SEGMENT_SHARE * s.remaining()) if det else SEGMENT_SHARE * s.remaining() - fixed_s
    )
    order = list(best.skeleton.order)
    sizes = graph.sizes(sc)
    trans = graph.transient_bytes(sc)
    weights = np.asarray(sc.weights, dtype=np.float64)
    cost = weights @ s.dur
    hot = hot_steps(simulate(graph, order, sc).usage, bud)
    start = [(c.op, c.step, c.sub) for c in best.skeleton.candidates if isinstance(c, Regen)]
    try:
        regens, stats = lns_segments(
            graph,
            order,
            bud,
            sizes,
            trans,
            cost,
            start,
            hot=hot,
            cfg=SolverConfig(
                time_limit=t_seg,
                workers=s.cfg.workers,
                seed=s.cfg.seed,
                deterministic=det,
                deadline=s.cfg.deadline,
            ),
            fits=lambda r: regens_fit(graph, bud, order, r, sizes, trans),
        )
        res = with_regens(graph, sc, bud, order, regens, s.dur, "remat-segments", t0, stats)
    except Exception as e:  # noqa: BLE001 - the plan it started from stays the result
        info.setdefault("baseline_errors", {})["remat-segments"] = str(e)
        return best
    finally:
        s.clock.spend(t_seg)
        timings["remat-segments"] = time.perf_counter() - t0
    info["baselines"]["remat-segments"] = _plan_row(res)
    if (res.peak <= res.budget).all() and res.weighted_added < best.weighted_added - 1e-12:
        return res
    return best


def _wrap_up(best: RematResult, info, timings, method_name, t_start) -> RematResult:
    from_cp = best.method == method_name
    if best.info.get("cp", {}).get("status") == OPTIMAL:
        info["model_optimal"] = True
    tb = info.get("added_time_lower_bound")
    if tb is not None:
        base = np.maximum(best.time.base, 1e-30)
        info["added_time_lower_bound_pct"] = [float(x) for x in 100 * np.asarray(tb) / base]
        info["meets_lower_bound"] = bool((best.added_time <= np.asarray(tb) + 1e-9 * base).all())
    best.info = dict(info, **best.info, timings={k: round(v, 3) for k, v in timings.items()})
    if not from_cp:
        best.info["from_baseline"] = best.method
    best.method = method_name
    if (best.added_time <= 0).all() or info.get("meets_lower_bound"):
        best.status = OPTIMAL
    elif from_cp:
        best.status = FEASIBLE
    else:
        best.status = FALLBACK
    if len(best.scenarios) > 1:
        try:
            bp = breakpoints(best)
        except InputError:
            bp = None
        if bp is not None:
            best.info["breakpoints"] = bp
    if runtime.interrupted():
        best.info["interrupted"] = True
    best.seconds = time.perf_counter() - t_start
    return best


def _tau_max(s: _Setting) -> np.ndarray | None:
    """The longest transfer time of each buffer over the scenarios (no transfer: None)."""
    if s.transfer is None:
        return None
    return s.transfer.times(s.graph.sizes(s.sc)).max(axis=0)


def _time_spec(s: _Setting, common, hint, order, regen, dom, ev, ticks, streams) -> Spec:
    """The ``Spec`` of a time-objective model (``order`` None: the joint model) from
    ``spec_common``'s figures, with room for ``hint``'s clones (copies per op, sub-slots)."""
    sizes, trans, cap, idur, weights, _, _ = common
    per_op = regens_per_op(hint)
    return Spec(
        s.graph,
        len(s.sc),
        sizes,
        trans,
        cap,
        idur,
        weights,
        1 + sub_needed(hint, s.sub_slots),
        order,
        regen,
        max([s.copies] + [k + 1 for k in per_op.values()]),
        dom,
        ev,
        ticks,
        streams,
        writers=inplace_writers(s.graph),
    )


def _solve_fixed(
    s: _Setting,
    bud: np.ndarray,
    order: list[int],
    hint: tuple[Skeleton, list[list[int]]] | None,
    time_limit: float,
) -> tuple[RematResult | None, str]:
    """The fixed-order model on ``order`` (clones and, with ``evict``, copies to the host)
    from ``hint``, within ``time_limit``."""
    graph, sc, cfg = s.graph, s.sc, s.cfg
    t_phase = time.perf_counter()
    if not cfg.deterministic and time_limit <= 2 * BASELINE_SECONDS_PER_OP * graph.n_ops:
        return None, "SKIPPED: no time left"  # finding the candidates alone takes that
    common = spec_common(graph, sc, bud, s.dur)
    scale = common[5]
    extra = set(regens_per_op(hint))
    try:
        regen, dom, ev = clone_candidates(
            graph,
            order,
            sc,
            bud,
            evict=s.evict,
            dur=s.dur,
            tau_max=_tau_max(s),
            margin=s.margin,
            depth=s.depth,
            max_regen=s.max_candidates,
            extra_ops=extra,
            max_positions=_max_positions(time_limit, cfg),
        )
    except ModelTooLarge as e:
        return None, f"SKIPPED: model too large for {time_limit:.1f} s ({e})"
    if hint is not None:
        # make sure the hint's clones fit the domains
        for c in hint[0].candidates:
            if isinstance(c, Regen):
                dom.setdefault(c.op, [])
                if c.step not in dom[c.op]:
                    dom[c.op] = sorted(set(dom[c.op]) | {c.step})
                regen.add(c.op)
    ticks = transfer_ticks(graph, sc, s.transfer, scale)
    streams = s.transfer.streams if s.transfer else 2
    spec = _time_spec(s, common, hint, list(order), regen, dom, ev, ticks, streams)
    about = {"model": "fixed-order", "candidates": len(regen), "evict_candidates": len(ev)}
    left = _time_left(time_limit, t_phase, cfg)
    return solve_spec(
        spec, sc, hint, bud, s.dur, s.transfer, left, cfg, s.method_name, s.t_start,
        s.progress, scale, about,
    )  # fmt: skip


def _solve_joint(
    s: _Setting,
    bud: np.ndarray,
    order: list[int],
    hint: tuple[Skeleton, list[list[int]]],
    time_limit: float,
) -> tuple[RematResult | None, str]:
    """The joint model (order and clones) from ``hint``, within ``time_limit``."""
    graph, sc, cfg = s.graph, s.sc, s.cfg
    t_phase = time.perf_counter()
    common = spec_common(graph, sc, bud, s.dur)
    scale = common[5]
    clon = recomputable_ops(graph)
    per_op = regens_per_op(hint)
    regen = set(int(v) for v in np.flatnonzero(clon))
    if graph.n_ops > JOINT_ALL_OPS:
        # large graphs: the clone candidates of the hint's order (and the hint's own clones)
        try:
            regen, _, _ = clone_candidates(
                graph,
                order,
                sc,
                bud,
                evict=False,
                dur=s.dur,
                tau_max=None,
                margin=1.0,
                depth=1,
                max_regen=None,
                extra_ops=set(per_op),
                max_positions=_max_positions(time_limit, cfg),
            )
        except ModelTooLarge as e:
            return None, f"SKIPPED: model too large for {time_limit:.1f} s ({e})"
    spec = _time_spec(s, common, hint, None, regen, {}, {}, None, 2)
    about = {"model": "joint", "candidates": len(regen)}
    left = _time_left(time_limit, t_phase, cfg)
    return solve_spec(
        spec, sc, hint, bud, s.dur, None, left, cfg, s.method_name, s.t_start, s.progress,
        scale, about,
    )  # fmt: skip


def _order_only(s: _Setting, order: list[int], status: str, why: str) -> RematResult:
    """The plan of ``order`` with nothing added (the peak objective found nothing better)."""
    return finish_result(
        s.graph,
        s.sc,
        None,
        Skeleton(tuple(order)),
        [[]] * len(s.sc),
        s.method_name,
        FALLBACK,
        time.perf_counter() - s.t_start,
        s.dur,
        s.transfer,
        {"cp": {"status": status}, "message": why} if why else {"cp": {"status": status}},
    )


def _solve_peak(s: _Setting, given: Sequence[int], overhead_cap: float | None) -> RematResult:
    """Least weighted peak with the added time capped at ``overhead_cap`` x the op time sum
    (per scenario), on one order (the min-peak order when ``reorder``), within the clock."""
    graph, sc, cfg, clock = s.graph, s.sc, s.cfg, s.clock
    n_s = len(sc)
    cap_frac = 0.0 if overhead_cap is None else float(overhead_cap)
    order = list(given)
    if s.reorder:
        left = max(0.0, clock.left())
        t_reorder = max(1.0, 0.4 * left) if cfg.deterministic else 0.4 * left
        order, _, _ = s.min_peak_order(order, t_reorder)
        clock.spend(t_reorder)
    prof = simulate(graph, order, sc)
    sizes, trans, _, idur, weights, scale, gs = spec_common(graph, sc, None, s.dur)
    try:
        regen, dom, ev = clone_candidates(
            graph,
            order,
            sc,
            prof.peak,
            evict=s.evict,
            dur=s.dur,
            tau_max=_tau_max(s) if s.evict else None,
            margin=0.5,
            depth=1,
            max_regen=None,
            max_positions=_max_positions(clock.left(), cfg),
        )
    except ModelTooLarge as e:
        return _order_only(s, order, "SKIPPED", f"the model is too large for the time left ({e})")
    spec = Spec(
        graph,
        n_s,
        sizes,
        trans,
        None,
        idur,
        weights,
        1 + s.sub_slots,
        order,
        regen,
        s.copies,
        dom,
        ev,
        transfer_ticks(graph, sc, s.transfer, scale) if s.evict else None,
        s.transfer.streams if s.transfer else 2,
        objective="peak",
        overhead_cap=np.floor(cap_frac * idur.sum(axis=1)).astype(np.int64),
        writers=inplace_writers(graph),
    )
    if n_s > 1:
        spec.weights = np.maximum(
            1, np.round(1e6 * sc.weights * gs / np.maximum(prof.peak, 1))
        ).astype(np.int64)
    model = build_model(spec)
    model.hint(Skeleton(tuple(order)), [[] for _ in range(n_s)])
    run = run_model(
        model, max(1.0, clock.left()) if cfg.deterministic else clock.left(), cfg, s.progress
    )
    if not run.solved:
        return _order_only(s, order, run.status, "")
    sk, active = model.extract(run.solver)
    res = finish_result(
        graph,
        sc,
        None,
        sk,
        active,
        s.method_name,
        FEASIBLE,
        time.perf_counter() - s.t_start,
        s.dur,
        s.transfer,
        {
            "cp": {"model": "fixed-order", "objective": "peak", "status": run.status},
            "overhead_cap": cap_frac,
        },
    )
    if run.optimal:
        res.info["model_optimal"] = True
    return res


@register(
    "cp-remat",
    "CP-SAT order + rematerialization (+ eviction with --evict) under a "
    "memory budget, per-bucket plans",
    "remat",
)
def cp_remat(graph: Graph, scenarios: Scenarios | None = None, **options: Any) -> RematResult:
    budget = options.pop("budget", None)
    if options.get("objective") not in (None, "time", "peak"):
        options.pop("objective")
    return solve_remat(graph, scenarios, budget, **options)


# the Checkmate / Moccasin setting: the given order frozen
def fixed_order_remat(
    graph: Graph, scenarios: Scenarios | None = None, budget=None, **options: Any
) -> RematResult:
    """``solve_remat`` with the order frozen (the graph's own, or ``order``)."""
    options = dict(options)
    options.pop("reorder", None)
    return solve_remat(
        graph, scenarios, budget, reorder=False, method_name="remat-fixed-order", **options
    )


register(
    "remat-fixed-order",
    "CP-SAT optimal remat with the order frozen (Checkmate/Moccasin setting)",
    "remat",
)(with_budget(fixed_order_remat))
