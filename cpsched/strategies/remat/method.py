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

Parts: ``problem`` (scaling, proven minimum, candidates, the ``Spec``), ``variables``,
``constraints``, ``objectives``, and this module (the pipeline). The first phase looks for
an order that fits with nothing added using the min-peak model (``cpsched.cp.memory``).

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
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cpsched.analysis.memory import simulate
from cpsched.core.errors import BudgetError, InputError
from cpsched.core.graph import Graph
from cpsched.core.scenarios import Scenarios, static
from cpsched.core.units import format_bytes_exact
from cpsched.cp import runtime
from cpsched.cp.remat import objectives as O
from cpsched.cp.remat.constraints import build
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
from cpsched.cp.remat.segments import hot_steps, lns_segments
from cpsched.cp.remat.variables import Vars
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

JOINT_ALL_OPS = 300  # up to this many ops the joint model may clone any clonable op
# From this many ops on, the best baseline plan is improved by a large-neighbourhood search
# over its clones (``lns_remat``) before the CP models: on RLG n1000 CP-SAT's fixed-order
# model found nothing better than its hint in 150 s, the search 2.14 % -> 1.96 % in 90 s
LNS_MIN_OPS = 600
# (the greedy search stalls: on RLG n1000 at 486,895 one improvement in its last 749 rounds)
LNS_SHARE = 0.4
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
BOUND_MAX_OPS = 20_000  # the fixed-order added-time bound scans buffers per hot step
LP_BOUND_SHARE = 0.1  # of the time limit, for the LP bound on a kept order
LP_BOUND_MAX_S = 30.0

__all__ = [
    "solve_remat",
    "remat_result_to_dict",
    "RematResult",
    "min_memory_bound",
    "min_peak_order",
    "build_model",
    "fixed_order_remat",
]


def build_model(spec: Spec) -> Vars:
    """The remat model of ``spec``: variables, constraints and objective."""
    mdl = build(spec)
    O.apply(mdl)
    return mdl


def _config(
    workers: int,
    seed: int,
    log: bool,
    deterministic: bool = False,
    presolve: bool = False,
    deadline: float | None = None,
) -> SolverConfig:
    # CP-SAT's presolve of these interval-heavy models takes longer than the search itself
    # (ResNet50 at 0.9: optimal in ~1 s without it, ~35 s with it; RLG n1000: the whole
    # minute goes to presolve), so it is off
    return SolverConfig(
        workers=workers,
        seed=seed,
        log=log,
        deterministic=deterministic,
        presolve=presolve,
        deadline=deadline,
    )


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
    time_limit: float = 30.0,
    workers: int = 2,
    seed: int = 0,
    log: bool = False,
    deterministic: bool = False,
    deadline: float | None = None,
) -> tuple[list[int], np.ndarray, str]:
    """An order of least peak by the min-peak model (``cpsched.strategies.min_peak.method``; with
    ``target`` bytes per scenario, its budget objective, stopped as soon as every scenario
    is at or under it). Returns the order, its peaks and the solver's status; never worse
    than ``hint`` (then the status is ``HINT``)."""
    sc = scenarios or static()
    hint = list(graph.default_order() if hint is None else hint)
    hint_peak = simulate(graph, hint, sc).peak
    opts = dict(
        time_limit=time_limit,
        workers=workers,
        seed=seed,
        log=log,
        deterministic=deterministic,
        hint=hint,
        deadline=deadline,
    )
    if target is not None:
        t0 = time.perf_counter()
        s = solve_min_peak(
            graph, sc, budget=_budget_array(target, len(sc)), stop_when_fits=True, **opts
        )
        left = time_limit - (time.perf_counter() - t0)
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
    cfg = _config(workers, seed, log, deterministic, deadline=deadline)
    sc = scenarios if scenarios is not None and len(scenarios) else static()
    n_s = len(sc)
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
    if objective == "peak":
        return _solve_peak(
            graph,
            sc,
            dur,
            transfer,
            base_order,
            budget,
            overhead_cap,
            evict,
            reorder,
            clock,
            cfg,
            copies,
            sub_slots,
            method_name,
            t_start,
            progress,
        )
    bud = _budget_array(budget, n_s)
    # proven minimum
    lb = check_budget(graph, sc, bud, None if reorder else base_order)
    info: dict[str, Any] = {"proven_min_bytes": {n: int(v) for n, v in zip(sc.names, lb)}}
    timings: dict[str, float] = {}
    if not reorder and graph.n_ops <= BOUND_MAX_OPS and clock.left() > 0:
        # what no plan on this order can beat: tells a weak search from a hopeless target
        tb = added_time_lower_bound(graph, base_order, bud, dur, sc, transfer if evict else None)
        if not evict and (tb > 0).any() and np.isfinite(tb).all():
            # the covering bound ignores the clones' inputs; the LP does not (RLG n1000 at
            # 486,895: 0.281 % -> 1.565 %). Clones only: copies to the host are not in it.
            t0 = time.perf_counter()
            t_lp = min(LP_BOUND_SHARE * time_limit, LP_BOUND_MAX_S, clock.left())
            if deterministic or t_lp >= 1.0:  # its LPs run for a second at least
                tb = np.maximum(tb, lp_bound(graph, base_order, bud, dur, sc, time_limit=t_lp))
                timings["lp_bound"] = time.perf_counter() - t0
        info["added_time_lower_bound"] = [float(x) for x in tb]

    def remaining() -> float:
        return clock.left()

    def share(frac: float) -> float:
        """``frac`` of the time left: at least a second in deterministic mode (budgets of
        work, as they always were), else never past the deadline."""
        left = max(0.0, remaining())
        return max(1.0, frac * left) if deterministic else frac * left

    # 1. orders: the given one, XLA's best memory order, and (reorder) a min-peak search
    orders = {"given": base_order}
    if reorder:
        try:
            orders["xla-default"] = list(xla_default(graph, sc))
        except Exception:  # noqa: BLE001 - an optional helper; the given order always exists
            pass
    peaks = {k: simulate(graph, o, sc).peak for k, o in orders.items()}
    best_key = min(peaks, key=lambda k: float(np.dot(sc.weights, peaks[k] / bud)))
    base_results: dict[str, RematResult] = {}
    order_key_of: dict[str, str] = {}
    # 1a. a heuristic plan before any search, so that a short limit still returns at least
    # what the heuristics give (at 2 s on 1k ops the reorder search and the baselines' time
    # shares left none to finish): XLA's greedy on the lowest-peak order known, with three
    # quarters of the time left (cut short, a greedy leaves nothing; it ends in 0.2 s on
    # 1k ops, and the searches after it get what it leaves)
    early = None  # (order key, plan) of that run
    if baselines and reorder and not (peaks[best_key] <= bud).all():
        t0 = time.perf_counter()
        fixed_s = BASELINE_SECONDS_PER_OP * graph.n_ops
        run_limit = 30.0 if deterministic else 0.75 * remaining() - fixed_s
        if run_limit > 0:
            try:
                r = xla_remat(
                    graph,
                    sc,
                    bud,
                    order=orders[best_key],
                    durations=dur,
                    transfer=transfer,
                    time_limit=run_limit,
                )
            except Exception as e:  # noqa: BLE001 - the baselines below report it again
                info.setdefault("baseline_errors", {})["remat-xla"] = str(e)
            else:
                early = (best_key, r)
                timings["remat-xla (before the reorder search)"] = time.perf_counter() - t0
    if reorder and not (peaks[best_key] <= bud).all():
        t0 = time.perf_counter()
        t_reorder = share(0.3)
        o, pk, st = min_peak_order(
            graph,
            sc,
            target=bud,
            hint=orders[best_key],
            time_limit=max(0.01, t_reorder),
            workers=workers,
            seed=seed,
            log=log,
            deterministic=deterministic,
            deadline=deadline,
        )
        clock.spend(t_reorder)
        timings["reorder"] = time.perf_counter() - t0
        orders["min-peak"] = o
        peaks["min-peak"] = pk
        info["min_peak_status"] = st
        best_key = min(peaks, key=lambda k: float(np.dot(sc.weights, peaks[k] / bud)))
    info["order_peaks"] = {k: [int(x) for x in v] for k, v in peaks.items()}
    for key, o in orders.items():
        if (peaks[key] <= bud).all():
            res = finish_result(
                graph,
                sc,
                bud,
                Skeleton(tuple(o)),
                [[]] * n_s,
                method_name,
                OPTIMAL,
                time.perf_counter() - t_start,
                dur,
                transfer,
                {"message": "an order meets the budget: no added time"},
            )
            return _wrap_up(res, dict(info, order_from=key), timings, method_name, t_start)
    # 2. baselines on every order tried (the lowest-peak order is not always the one where
    # recomputing is cheapest: on RLG n1000 at its 80 % budget XLA's greedy adds 7.8 % on
    # the given order, more on the min-peak one); the result is never worse than any of them
    info["order_from"] = best_key
    if early is not None:
        label = "remat-xla" if early[0] == best_key else f"remat-xla@{early[0]}"
        base_results[label] = early[1]
        order_key_of[label] = early[0]
    if baselines:
        todo = dict(BASELINES)
        if evict:
            todo["remat-offload"] = offload_remat
        if graph.n_ops > 600:
            todo.pop("remat-dtr", None)
        keys = [best_key] + [k for k in orders if k != best_key]
        n_runs = max(1, len(keys) * len(todo))
        cap = share(0.25 / n_runs)
        # wall clock: half of what is left, and until a plan fits, each run may take half of
        # the time left (a greedy cut short leaves nothing); then the rest share the half
        t_all = cap * n_runs if deterministic else 0.5 * max(0.0, remaining())
        clock.spend(t_all)
        t_base = time.perf_counter()
        done_runs = 0
        for okey in keys:
            for name, fn in todo.items():
                label = name if okey == best_key else f"{name}@{okey}"
                t0 = time.perf_counter()
                done_runs += 1
                if label in base_results:  # run before the reorder search
                    continue
                if not deterministic:
                    found = any((r.peak <= r.budget).all() for r in base_results.values())
                    spare = max(0.0, t_all - (t0 - t_base)) / (n_runs - done_runs + 1)
                    run_limit = min(spare if found else max(spare, 0.5 * remaining()), remaining())
                    fixed_s = BASELINE_SECONDS_PER_OP * graph.n_ops
                    if run_limit <= fixed_s:
                        info.setdefault("skipped", []).append(label)
                        continue
                    run_limit -= fixed_s
                try:
                    r = fn(
                        graph,
                        sc,
                        bud,
                        order=orders[okey],
                        durations=dur,
                        transfer=transfer,
                        time_limit=cap if deterministic else run_limit,
                    )
                except Exception as e:  # noqa: BLE001 - a failing baseline is reported
                    info.setdefault("baseline_errors", {})[label] = str(e)
                    continue
                timings[label] = time.perf_counter() - t0
                base_results[label] = r
                order_key_of[label] = okey
    feasible = {k: r for k, r in base_results.items() if (r.peak <= r.budget).all()}
    info["baselines"] = {
        k: {
            "status": r.status,
            "added_time_pct": [round(float(x), 4) for x in r.added_time_pct],
            "peak_bytes": [int(p) for p in r.peak],
        }
        for k, r in base_results.items()
    }
    best: RematResult | None = None
    if feasible:
        best_label = min(feasible, key=lambda k: feasible[k].weighted_added)
        best = feasible[best_label]
        info["order_from"] = order_key_of[best_label]
    # 2b. large graphs: neighbourhood search over the clones of the best plan, on its order
    if (
        best is not None
        and graph.n_ops >= LNS_MIN_OPS
        and best.weighted_added > 0
        and not evict
        and all(isinstance(c, Regen) for c in best.skeleton.candidates)
        and all(len(a) == len(best.skeleton.candidates) for a in best.active)
        and (deterministic or share(LNS_SHARE) > 2 * BASELINE_SECONDS_PER_OP * graph.n_ops)
    ):
        t0 = time.perf_counter()
        # its start and its end each replay the plan
        t_lns = share(LNS_SHARE) - (0 if deterministic else BASELINE_SECONDS_PER_OP * graph.n_ops)
        okey = info["order_from"]
        try:
            r = lns_remat(
                graph,
                sc,
                bud,
                order=list(best.skeleton.order),
                start=[c for c in best.skeleton.candidates if isinstance(c, Regen)],
                durations=dur,
                time_limit=t_lns,
                seed=seed,
            )
        except Exception as e:  # noqa: BLE001 - the plan it started from stays the result
            info.setdefault("baseline_errors", {})["remat-lns"] = str(e)
        else:
            label = "remat-lns" if okey == best_key else f"remat-lns@{okey}"
            base_results[label] = r
            order_key_of[label] = okey
            info["baselines"][label] = {
                "status": r.status,
                "added_time_pct": [round(float(x), 4) for x in r.added_time_pct],
                "peak_bytes": [int(p) for p in r.peak],
            }
            if (r.peak <= r.budget).all():
                feasible[label] = r
                if r.weighted_added < best.weighted_added - 1e-12:
                    best = r
        clock.spend(t_lns)
        timings["remat-lns"] = time.perf_counter() - t0
        best = _segment_search(graph, sc, bud, dur, best, info, timings, remaining, clock, cfg)
    # 3. fixed-order CP model on the lowest-peak order: the joint model below works best
    # from it (RLG n1000 at 547,757: 0.44 % from there, 1.27 % from the given order), and a
    # baseline on another order that beats it stays the floor
    fixed = list(orders[best_key])
    mine = {k: r for k, r in feasible.items() if order_key_of[k] == best_key}
    on_fixed = min(mine.values(), key=lambda r: r.weighted_added) if mine else None
    t0 = time.perf_counter()
    frac = 0.4 if reorder else 1.0
    t_fixed = share(frac)
    cp_res, cp_status = _solve_fixed(
        graph,
        sc,
        bud,
        dur,
        transfer,
        fixed,
        skeleton_from(on_fixed) if on_fixed else None,
        evict,
        copies,
        sub_slots,
        margin,
        depth,
        max_candidates,
        t_fixed,
        cfg,
        method_name,
        t_start,
        progress,
    )
    clock.spend(t_fixed)
    timings["cp-fixed"] = time.perf_counter() - t0
    info["cp_fixed_status"] = cp_status
    if cp_res is not None and (
        on_fixed is None or cp_res.weighted_added <= on_fixed.weighted_added + 1e-9
    ):
        on_fixed = cp_res
    if cp_res is not None and (best is None or cp_res.weighted_added <= best.weighted_added + 1e-9):
        best = cp_res
        info["order_from"] = best_key
    # 4. joint order + clones, from the best plan on that order
    if reorder and remaining() > 0.5 and (best is None or best.weighted_added > 0):
        t0 = time.perf_counter()
        # start from the best plan on that order, else from any plan found (a baseline on
        # another order: the joint model may move ops), else from the bare order
        start = on_fixed if on_fixed is not None else best
        hint = (
            skeleton_from(start)
            if start is not None
            else (Skeleton(tuple(fixed)), [[] for _ in range(n_s)])
        )
        j_res, j_status = _solve_joint(
            graph,
            sc,
            bud,
            dur,
            fixed,
            hint,
            copies,
            sub_slots,
            remaining(),
            cfg,
            method_name,
            t_start,
            progress,
        )
        timings["cp-joint"] = time.perf_counter() - t0
        info["cp_joint_status"] = j_status
        if j_res is not None and (
            best is None or j_res.weighted_added < best.weighted_added - 1e-9
        ):
            best = j_res
            info["order_from"] = best_key  # the joint model's start
    if best is None and baselines:
        # last resort: XLA's greedy remat on every order tried, with what time is left (the
        # time caps above can cut it short on large graphs)
        for key, o in orders.items():
            t0 = time.perf_counter()
            fixed_s = BASELINE_SECONDS_PER_OP * graph.n_ops
            if not deterministic and remaining() <= fixed_s:
                break
            try:
                r = xla_remat(
                    graph,
                    sc,
                    bud,
                    order=o,
                    durations=dur,
                    transfer=transfer,
                    time_limit=remaining() - fixed_s if not deterministic else 30.0,
                )
            except Exception:  # noqa: BLE001 - nothing better to report than the error below
                continue
            timings[f"remat-xla-{key}"] = time.perf_counter() - t0
            if (r.peak <= r.budget).all():
                info["order_from"] = key
                best = r
                break
    if best is None:
        # the least peak any order or plan tried reached: the budget that can be had now
        reached = np.min(
            [peaks[k] for k in peaks] + [r.peak for r in base_results.values()], axis=0
        )
        stopped = "stopped by a signal" if runtime.interrupted() else f"in {time_limit:g} s"
        raise BudgetError(
            f"no plan found under the budget {stopped} (not proven infeasible): "
            + "; ".join(
                f"{n}: budget {format_bytes_exact(b)}, least peak reached {format_bytes_exact(p)}, proven minimum {format_bytes_exact(x)}"
                for n, b, p, x in zip(sc.names, bud, reached, lb)
            )
            + "; a longer --time-limit may meet it",
            reached={n: int(p) for n, p in zip(sc.names, reached)},
            proven={n: int(x) for n, x in zip(sc.names, lb)},
        )
    return _wrap_up(best, info, timings, method_name, t_start)


def _segment_search(
    graph: Graph,
    sc: Scenarios,
    bud: np.ndarray,
    dur: np.ndarray,
    best: RematResult,
    info: dict[str, Any],
    timings: dict[str, float],
    remaining: Callable[[], float],
    clock: runtime.Clock,
    cfg: SolverConfig,
) -> RematResult:
    """Exact-repair neighbourhood search over the clones of ``best`` on its order
    (``cpsched.cp.remat.segments.lns_segments``), ``SEGMENT_SHARE`` of the time left;
    the better plan of the two is returned (reported as ``remat-segments``)."""
    det = cfg.deterministic
    fixed_s = 2 * BASELINE_SECONDS_PER_OP * graph.n_ops  # its start and end replay the plan
    if best.weighted_added <= 0 or (not det and remaining() <= 1.0 + fixed_s):  # rounds: 1 s
        return best
    t0 = time.perf_counter()
    t_seg = max(1.0, SEGMENT_SHARE * remaining()) if det else SEGMENT_SHARE * remaining() - fixed_s
    order = list(best.skeleton.order)
    sizes = graph.sizes(sc)
    trans = graph.transient_bytes(sc)
    weights = np.asarray(sc.weights, dtype=np.float64)
    cost = weights @ dur
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
            time_limit=t_seg,
            workers=cfg.workers,
            seed=cfg.seed,
            fits=lambda r: regens_fit(graph, bud, order, r, sizes, trans),
        )
        res = with_regens(graph, sc, bud, order, regens, dur, "remat-segments", t0, stats)
    except Exception as e:  # noqa: BLE001 - the plan it started from stays the result
        info.setdefault("baseline_errors", {})["remat-segments"] = str(e)
        return best
    finally:
        clock.spend(t_seg)
        timings["remat-segments"] = time.perf_counter() - t0
    info["baselines"]["remat-segments"] = {
        "status": res.status,
        "added_time_pct": [round(float(x), 4) for x in res.added_time_pct],
        "peak_bytes": [int(p) for p in res.peak],
    }
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


def _run(model: Vars, time_limit, cfg: SolverConfig, progress) -> runtime.Run:
    return runtime.solve(
        model.m,
        cfg,
        max(0.05, float(time_limit)),
        progress=progress,
        stop_at=0 if model.sp.objective == "time" else None,
    )


def _solve_fixed(
    graph,
    sc,
    bud,
    dur,
    transfer,
    order,
    hint,
    evict,
    copies,
    sub_slots,
    margin,
    depth,
    max_candidates,
    time_limit,
    cfg,
    method_name,
    t_start,
    progress,
):
    t_phase = time.perf_counter()
    if not cfg.deterministic and time_limit <= 2 * BASELINE_SECONDS_PER_OP * graph.n_ops:
        return None, "SKIPPED: no time left"  # finding the candidates alone takes that
    sizes, trans, cap, idur, weights, scale, gs = spec_common(graph, sc, bud, dur)
    extra = set(regens_per_op(hint))
    tau_max = transfer.times(graph.sizes(sc)).max(axis=0) if transfer is not None else None
    try:
        regen, dom, ev = clone_candidates(
            graph,
            order,
            sc,
            bud,
            evict=evict,
            dur=dur,
            tau_max=tau_max,
            margin=margin,
            depth=depth,
            max_regen=max_candidates,
            extra_ops=extra,
            max_positions=_max_positions(time_limit, cfg),
        )
    except ModelTooLarge as e:
        return None, f"SKIPPED: model too large for {time_limit:.1f} s ({e})"
    if hint is not None:
        # make sure the hint's clones fit the domains
        pos = np.empty(graph.n_ops, dtype=np.int64)
        pos[np.asarray(order)] = np.arange(graph.n_ops)
        for c in hint[0].candidates:
            if isinstance(c, Regen):
                dom.setdefault(c.op, [])
                if c.step not in dom[c.op]:
                    dom[c.op] = sorted(set(dom[c.op]) | {c.step})
                regen.add(c.op)
    per_op = regens_per_op(hint)
    C = max([copies] + [k + 1 for k in per_op.values()])
    G = 1 + sub_needed(hint, sub_slots)
    spec = Spec(
        graph,
        len(sc),
        sizes,
        trans,
        cap,
        idur,
        weights,
        G,
        list(order),
        regen,
        C,
        dom,
        ev,
        transfer_ticks(graph, sc, transfer, scale),
        transfer.streams if transfer else 2,
        writers=inplace_writers(graph),
    )
    return _solve_spec(
        spec,
        sc,
        hint,
        bud,
        dur,
        transfer,
        _time_left(time_limit, t_phase, cfg),
        cfg,
        method_name,
        t_start,
        progress,
        scale,
        {"model": "fixed-order", "candidates": len(regen), "evict_candidates": len(ev)},
    )


def _solve_spec(
    spec: Spec,
    sc,
    hint,
    bud,
    dur,
    transfer,
    time_limit,
    cfg,
    method_name,
    t_start,
    progress,
    scale: float,
    about: dict,
):
    """Build, hint and run the model of ``spec`` for what is left of ``time_limit`` once
    it is built; its plan as a checked ``RematResult``."""
    t0 = time.perf_counter()
    model = build_model(spec)
    if hint is not None:
        model.hint(*hint)
    # deterministic mode: the limit is work, whatever the building took
    left = time_limit if cfg.deterministic else time_limit - (time.perf_counter() - t0)
    if not cfg.deterministic and (left <= 0 or cfg.seconds_left() <= 0):
        return None, "SKIPPED: no time left once built"
    run = _run(model, left, cfg, progress)
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


def _solve_joint(
    graph,
    sc,
    bud,
    dur,
    order,
    hint,
    copies,
    sub_slots,
    time_limit,
    cfg,
    method_name,
    t_start,
    progress,
):
    t_phase = time.perf_counter()
    sizes, trans, cap, idur, weights, scale, gs = spec_common(graph, sc, bud, dur)
    clon = recomputable_ops(graph)
    per_op = regens_per_op(hint)
    C = max([copies] + [k + 1 for k in per_op.values()])
    G = 1 + sub_needed(hint, sub_slots)
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
                dur=dur,
                tau_max=None,
                margin=1.0,
                depth=1,
                max_regen=None,
                extra_ops=set(per_op),
                max_positions=_max_positions(time_limit, cfg),
            )
        except ModelTooLarge as e:
            return None, f"SKIPPED: model too large for {time_limit:.1f} s ({e})"
    spec = Spec(
        graph,
        len(sc),
        sizes,
        trans,
        cap,
        idur,
        weights,
        G,
        None,
        regen,
        C,
        {},
        {},
        None,
        writers=inplace_writers(graph),
    )
    return _solve_spec(
        spec,
        sc,
        hint,
        bud,
        dur,
        None,
        _time_left(time_limit, t_phase, cfg),
        cfg,
        method_name,
        t_start,
        progress,
        scale,
        {"model": "joint", "candidates": len(regen)},
    )


def _solve_peak(
    graph,
    sc,
    dur,
    transfer,
    order,
    budget,
    overhead_cap,
    evict,
    reorder,
    clock,
    cfg,
    copies,
    sub_slots,
    method_name,
    t_start,
    progress,
):
    """Least weighted peak with the added time capped at ``overhead_cap`` x the op time sum
    (per scenario), on one order (the min-peak order when ``reorder``), within ``clock``."""
    n_s = len(sc)
    cap_frac = 0.0 if overhead_cap is None else float(overhead_cap)
    order = list(order)
    if reorder:
        left = max(0.0, clock.left())
        t_reorder = max(1.0, 0.4 * left) if cfg.deterministic else 0.4 * left
        o, pk, _ = min_peak_order(
            graph,
            sc,
            hint=order,
            time_limit=max(0.01, t_reorder),
            workers=cfg.workers,
            seed=cfg.seed,
            log=cfg.log,
            deterministic=cfg.deterministic,
            deadline=cfg.deadline,
        )
        clock.spend(t_reorder)
        order = o
    prof = simulate(graph, order, sc)

    def order_only(status: str, why: str) -> RematResult:
        return finish_result(
            graph,
            sc,
            None,
            Skeleton(tuple(order)),
            [[]] * n_s,
            method_name,
            FALLBACK,
            time.perf_counter() - t_start,
            dur,
            transfer,
            {"cp": {"status": status}, "message": why} if why else {"cp": {"status": status}},
        )

    sizes, trans, _, idur, weights, scale, gs = spec_common(graph, sc, None, dur)
    try:
        regen, dom, ev = clone_candidates(
            graph,
            order,
            sc,
            prof.peak,
            evict=evict,
            dur=dur,
            tau_max=(
                transfer.times(graph.sizes(sc)).max(axis=0)
                if transfer is not None and evict
                else None
            ),
            margin=0.5,
            depth=1,
            max_regen=None,
            max_positions=_max_positions(clock.left(), cfg),
        )
    except ModelTooLarge as e:
        return order_only("SKIPPED", f"the model is too large for the time left ({e})")
    G = 1 + sub_slots
    spec = Spec(
        graph,
        n_s,
        sizes,
        trans,
        None,
        idur,
        weights,
        G,
        order,
        regen,
        copies,
        dom,
        ev,
        transfer_ticks(graph, sc, transfer, scale) if evict else None,
        transfer.streams if transfer else 2,
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
    run = _run(model, max(1.0, clock.left()) if cfg.deterministic else clock.left(), cfg, progress)
    if not run.solved:
        return order_only(run.status, "")
    sk, active = model.extract(run.solver)
    res = finish_result(
        graph,
        sc,
        None,
        sk,
        active,
        method_name,
        FEASIBLE,
        time.perf_counter() - t_start,
        dur,
        transfer,
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
