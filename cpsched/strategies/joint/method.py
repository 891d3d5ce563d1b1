"""CP-SAT joint scheduling: instruction order, async collective placement, recomputation
and host offload decided in one model, for the least makespan within a memory budget.

``solve_joint(graph, scenarios, budget)`` returns a ``RematResult`` (the plan per
scenario, replayed and timed) whose ``info`` carries per scenario ``makespan``,
``exposed_comm``, ``exposed_copy``, ``recompute``, ``peak_bytes`` and ``makespan_bound``.
Registered as method ``cp-joint`` (``--objective time``).

Execution model: the timeline simulator's (``cpsched.cost.timeline``) on the plan written
into the graph (``cpsched.remat.rewrite.plan_to_graph``): one compute stream runs ops and
clones back to back; async collectives run on their comm stream between their start and
done; host copies (copy-out after the definition, copy back before the first late reader)
run on one copy stream; a done or a reader of a copied-back buffer waits for its transfer.

Model (time-indexed, one time copy per scenario sharing one order; the overlap model's
variables and constraints for ops and collectives, ``cpsched.strategies.overlap.method``):

- each gap buffer ``b`` (defined by ``a``) has per scenario at most one gap kind: a clone
  of ``a`` (an optional interval on the compute stream) or a host round trip (two optional
  intervals on the copy stream); its first device copy lives from ``a``'s start to the drop
  time ``F_b``, the second from the clone's start / the copy back's start to ``L_b``;
- a literal per reader and scenario says whether the second copy serves it (late): early
  readers end by ``F_b`` (by the copy-out's start when offloaded), late ones start after
  the clone / the copy back and end by ``L_b``; the clone starts after ``F_b``, the copy
  back after ``F_b``, ``F_b`` after the copy-out; a clone reads its op's inputs, so they
  stay on the device until it ends (an offloaded input cannot serve it);
- memory: one ``Cumulative`` per scenario over its own time copy (buffers, both copies of
  gap buffers, op and clone transients) with the budget as capacity;
- objective: the makespan (weighted over scenarios or minimax), with the overlap model's
  analytic lower bound on the tick durations as a cut.

The solution is read back as a ``Skeleton`` (the order, clones and evictions at steps of
it), materialized per scenario, replayed against the budget and timed by the simulator.

Hints and fallback: the separate methods in sequence (``cp-overlap`` at the budget, which
needs no added op when an order fits; ``cp-remat`` for the plan, then timed with
communication). The best of them is the hint and the fallback: the result is never worse.
Graphs above ``MAX_JOINT_OPS`` ops (``MAX_JOINT_OPS_SCENARIOS`` with several scenarios)
get the sequential result only.

Bound: ``makespan_bound`` is the largest of the solver's bound over the model's plans
(one gap per buffer and scenario; times rounded to ticks, the rounding slack taken off;
one scenario only), the cut bound at the budget (``memory_cut_bound``: the clones that
memory forces after one op, with the time that op cannot start before and the work after
it) and the budget-free bounds of ``cpsched.strategies.joint.bounds``, all of which hold
for every plan (``budget_free_bound``: the analytic overlap bound, and the overlap model
without a memory limit when no order fits the budget, ``NO_MEMORY_SHARE`` of the time);
never above the result. With several scenarios ``weighted_bound`` bounds the weighted
makespan. A result that meets its bound is ``OPTIMAL`` whichever method found it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from ortools.sat.python.cp_model_helper import FlatIntExpr

from cpsched.analysis.memory import simulate
from cpsched.analysis.schedule import FALLBACK, FEASIBLE, OPTIMAL
from cpsched.core.errors import BudgetError, InfeasibleError, InputError, ScheduleError
from cpsched.core.graph import Graph
from cpsched.core.scenarios import Scenarios, static
from cpsched.core.transforms import convert_sync_collectives
from cpsched.core.units import format_bytes_exact
from cpsched.cost.model import Costs
from cpsched.cost.timeline import simulate_timeline
from cpsched.cp import runtime
from cpsched.cp.joint import objectives as O
from cpsched.cp.joint.constraints import build, readers
from cpsched.cp.joint.problem import (
    MAX_JOINT_OPS,
    JointProblem,
    PlanTiming,
    build_joint_problem,
    copy_out_before_back,
    plan_costs,
    skeleton_from_plan_order,
    time_order,
    time_plan,
)
from cpsched.cp.joint.variables import JointVars
from cpsched.cp.overlap.bounds import overlap_lower_bound
from cpsched.cp.overlap.problem import (
    Infeasible,
    build_problem,
    copy_durations,
    floor1,
    ticks,
)
from cpsched.cp.remat.problem import check_budget
from cpsched.cp.runtime import Clock, SolverConfig, stoppable
from cpsched.methods import register
from cpsched.remat.replay import _budget_array, check_plan
from cpsched.remat.result import RematResult, finish_result
from cpsched.remat.rewrite import plan_to_graph
from cpsched.remat.skeleton import Evict, Regen, Skeleton, materialize
from cpsched.remat.timing import TransferModel, host_link
from cpsched.strategies.joint.bounds import analytic_bound, memory_cut_bound, no_memory_bound
from cpsched.strategies.overlap.method import solve_overlap
from cpsched.strategies.remat.method import solve_remat

METHOD = "cp-joint"
DEFAULT_TIME_LIMIT = 30.0
MAX_JOINT_OPS_SCENARIOS = 120  # several scenarios: order literals between every pair
SEQUENTIAL_SHARE = 0.4  # of the time limit, for the separate methods (hints, fallback)
# of the time limit, for the overlap model without a memory limit when no order fits the
# budget: its proven bound holds for every plan (``bounds``)
NO_MEMORY_SHARE = 0.1
# ticks for the whole work: coarser than the overlap model's (100,000 and 200 per op), as
# the gap decisions make fine time domains slow to propagate (a 5-op case proves its budget
# infeasible in 0.1 s at 5,000 ticks and 8 s at 100,000); the rounding slack is reported
# and taken off the bound
RESOLUTION = 5_000
TICKS_PER_OP = 50
# after the whole model (this share of its time), windows of the best order re-solved
LNS_MIN_OPS = 40
LNS_MAIN_SHARE = 0.7
LNS_WINDOW = 40
LNS_WINDOW_SECONDS = 3.0


@dataclass
class Plan:
    """A plan of one of the methods: skeleton, active candidates per scenario, timings."""

    name: str
    skeleton: Skeleton
    active: list[list[int]]
    timing: list[PlanTiming]

    def makespan(self) -> np.ndarray:
        return np.array([t.makespan for t in self.timing])

    def peak(self) -> np.ndarray:
        return np.array([t.peak for t in self.timing], dtype=np.int64)


def _plan(prob: JointProblem, name: str, skeleton: Skeleton, active) -> Plan:
    timing = []
    for s in range(len(prob.scenarios)):
        if not len(active[s]) and len(skeleton.order) == prob.graph.n_ops:
            timing.append(time_order(prob, skeleton.order, s))  # an order: no graph to write
            continue
        ev = materialize(prob.graph, skeleton, active[s])
        timing.append(time_plan(prob, ev, s))
    return Plan(name, skeleton, [list(a) for a in active], timing)


@stoppable
def solve_joint(
    graph: Graph,
    scenarios: Scenarios | None = None,
    budget: Any = None,
    *,
    evict: bool = False,
    remat: bool = True,
    transfer: TransferModel | None = None,
    bandwidth: float | None = None,
    latency: float = 0.0,
    device: Any = "h100",
    profile: Any = None,
    costs: Any = None,
    comm_streams: str = "shared",
    scenario_objective: str = "weighted",
    convert_sync: bool = False,
    sequential: bool = True,
    resolution: int = RESOLUTION,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    workers: int | None = 2,
    seed: int | None = 0,
    log: bool | None = False,
    deterministic: bool | None = None,
    progress: Callable | None = None,
    known: Mapping[str, tuple[Skeleton, Sequence[Sequence[int]]]] | None = None,
    deadline: float | None = None,
    **_ignored: Any,
) -> RematResult:
    """The least makespan within ``budget`` bytes per scenario, deciding order, collective
    placement, clones and (``evict``) host offload together. ``deadline`` (a
    ``time.perf_counter()`` instant, wall-clock mode) ends every phase.

    ``known``: plans found elsewhere, by name: (skeleton, active candidates per scenario),
    e.g. a heuristic's order (no candidates) or a plan of a tighter budget. Those within the
    budget join the hints and the fallback, so the result is never worse than any of them;
    on equal makespans the lower weighted peak is kept.

    ``budget``: one number or one per scenario (required). ``evict`` adds host round trips
    timed with ``transfer`` (or ``bandwidth`` bytes per time unit, else the device's PCIe).
    ``scenario_objective``: ``'weighted'`` or ``'minimax'``. ``sequential``: also run the
    separate methods in sequence for hints and fallback (on by default).

    Raises ``InfeasibleError`` when the budget is below the proven minimum or nothing fits.
    """
    t0 = time.perf_counter()
    sc = scenarios if scenarios is not None and len(scenarios) else static()
    time_limit = DEFAULT_TIME_LIMIT if time_limit is None else float(time_limit)
    cfg = SolverConfig(
        time_limit,
        2 if workers is None else int(workers),
        int(seed or 0),
        bool(deterministic),
        bool(log),
        deadline=None if deterministic else deadline,
    )
    clock = Clock.of(cfg, t0=t0)
    if budget is None:
        raise InputError("cp-joint needs a memory budget (--budget BYTES, 8GiB or 90%)")
    if scenario_objective not in ("weighted", "minimax"):
        raise InputError(
            f"scenario objective is 'weighted' or 'minimax', not {scenario_objective!r}"
        )
    if convert_sync:
        graph = convert_sync_collectives(graph)
    n_s = len(sc)
    bud = _budget_array(budget, n_s)
    lb_mem = check_budget(graph, sc, bud)
    small = graph.n_ops <= (MAX_JOINT_OPS if n_s == 1 else MAX_JOINT_OPS_SCENARIOS)
    base = build_problem(
        graph,
        sc,
        device=device,
        profile=profile,
        costs=costs,
        comm_streams=comm_streams,
        reach=small,
    )
    if evict and transfer is None:
        transfer = host_link(graph, device, bandwidth, latency)
    prob = build_joint_problem(base, bud, transfer if evict else None, remat=remat, evict=evict)
    info: dict[str, Any] = {
        "objective": "time",
        "scenario_objective": scenario_objective,
        "unit": base.costs.unit,
        "proven_min_bytes": {k: int(v) for k, v in zip(sc.names, lb_mem)},
    }
    errors: dict[str, str] = {}

    # the cut bound at this budget (``bounds.memory_cut_bound``): every plan, not only the
    # model's; also a cut on the model's makespan
    lb_cut = np.zeros(n_s)
    if small:
        lb_cut, cut_info = memory_cut_bound(prob, deadline=cfg.deadline)
        info["memory_cut_bound"] = {k: float(v) for k, v in zip(sc.names, lb_cut)}
        info["memory_cut"] = cut_info["cuts"]
        if not np.isfinite(lb_cut).all():
            k = int(np.flatnonzero(~np.isfinite(lb_cut))[0])
            raise InfeasibleError(
                f"no plan fits the budget in {sc.names[k]}: at {cut_info['cuts'][k][0]} the "
                "bytes that no clone or host copy can take off the device exceed it "
                "(memory_cut_bound)"
            )

    # 1. the separate methods in sequence: hints and fallback -----------------------------------
    plans: list[Plan] = []
    if sequential or not small:
        t_seq = SEQUENTIAL_SHARE * time_limit if small else clock.left()
        relax_s = NO_MEMORY_SHARE * time_limit if small else 0.0
        if not cfg.deterministic:  # never past the deadline
            t_seq = min(t_seq, max(0.0, clock.left()))
            relax_s = min(relax_s, max(0.0, clock.left() - t_seq))
        seq_plans, relax = _sequential(
            prob, graph, sc, bud, evict, transfer, t_seq, cfg, errors, device, profile, relax_s
        )
        t_seq += relax_s if relax is not None else 0.0
        plans += seq_plans
        clock.spend(t_seq)
    else:
        relax = None
    # bounds for every plan at every budget (``cpsched.strategies.joint.bounds``)
    lb_free = analytic_bound(base) if small else np.zeros(n_s)
    if relax is not None:
        lb_free = np.maximum(lb_free, relax[0])
        info["no_memory"] = relax[1]
    info["budget_free_bound"] = {k: float(v) for k, v in zip(sc.names, lb_free)}
    w = sc.weights

    def score(p: Plan) -> float:
        ms = p.makespan()
        return float(w @ ms) if scenario_objective == "weighted" else float(np.max(ms))

    for name, (skeleton, active) in (known or {}).items():
        try:
            plans.append(_plan(prob, name, skeleton, active))
        except (InputError, ScheduleError) as e:  # one the replay refuses: reported, not used
            errors[name] = str(e)

    def rank(p: Plan) -> tuple[float, float]:
        return score(p), float(w @ p.peak())

    fits = [p for p in plans if (p.peak() <= bud).all()]
    best_seq = min(fits, key=rank) if fits else None
    info["sequential"] = [_row(p, sc, bud) for p in plans]

    # 2. the joint model ----------------------------------------------------------------------------
    sol: Plan | None = None
    proven = False
    bound: np.ndarray | None = None
    weighted_bound: float | None = None
    solver_status = "NOT_RUN"
    if not small:
        info["note"] = (
            f"{graph.n_ops} ops: above the joint model's size; the separate methods in sequence"
        )
    else:
        try:
            out = _solve_model(
                prob,
                best_seq,
                scenario_objective,
                resolution,
                clock.left(),
                cfg,
                progress,
                info,
                np.maximum(lb_free, np.where(np.isfinite(lb_cut), lb_cut, 0.0)),
            )
            sol, proven, bound, weighted_bound, solver_status = out
        except Infeasible as e:
            solver_status = "INFEASIBLE"
            info["note"] = str(e)
        except ScheduleError as e:  # a read-back plan the replay rejects: keep the others
            errors[METHOD] = str(e)
    info["solver_status"] = solver_status
    pool = ([sol] if sol is not None else []) + fits
    pool = [p for p in pool if (p.peak() <= bud).all()]
    if not pool:
        # what can be had instead: the least peak of the plans tried, the proven minimum
        tried = [p.peak() for p in plans + ([sol] if sol is not None else [])]
        reached = np.min(tried, axis=0) if tried else None
        what = "; ".join(
            f"{n}: budget {format_bytes_exact(bud[s])}, "
            + (
                f"least peak reached {format_bytes_exact(reached[s])}, "
                if reached is not None
                else ""
            )
            + f"proven minimum {format_bytes_exact(lb_mem[s])}"
            for s, n in enumerate(sc.names)
        )
        figures = dict(
            reached=None if reached is None else {n: int(v) for n, v in zip(sc.names, reached)},
            proven={n: int(v) for n, v in zip(sc.names, lb_mem)},
        )
        if solver_status == "INFEASIBLE":
            raise BudgetError(
                "no plan with one recompute or host round trip per buffer fits the budget "
                f"(proven by the joint model): {what}",
                **figures,
            )
        raise BudgetError(
            "no plan within the budget was found"
            + (f" (joint model: {solver_status})" if solver_status != "NOT_RUN" else "")
            + f": {what}; a longer --time-limit may help",
            **figures,
        )
    final = min(pool, key=rank)
    if sol is not None and rank(sol) <= rank(final):
        final = sol
    if final is sol and proven:
        status = OPTIMAL
    elif final is sol:
        status = FEASIBLE
    else:
        status = FALLBACK
    ms = final.makespan()
    if small:
        # per scenario: the solver's (one scenario) and the budget-free bounds
        bound = lb_free if bound is None else np.maximum(bound, lb_free)
        bound = np.maximum(bound, lb_cut)
        if n_s > 1 and scenario_objective == "weighted":
            weighted_bound = max(weighted_bound or 0.0, float(w @ lb_free), float(w @ lb_cut))
    if bound is not None:
        bound = np.minimum(bound, ms)
        if (ms <= bound * (1 + 1e-9)).all():
            status = OPTIMAL  # the plan meets a proven bound
    info.update(
        {
            "chosen": final.name,
            "budget": {k: int(v) for k, v in zip(sc.names, bud)},
            "makespan": {k: t.makespan for k, t in zip(sc.names, final.timing)},
            "exposed_comm": {k: t.exposed_comm for k, t in zip(sc.names, final.timing)},
            "exposed_copy": {k: t.exposed_copy for k, t in zip(sc.names, final.timing)},
            "recompute": {k: t.recompute for k, t in zip(sc.names, final.timing)},
            "peak_bytes": {k: t.peak for k, t in zip(sc.names, final.timing)},
            "makespan_bound": (
                {k: float(v) for k, v in zip(sc.names, bound)} if bound is not None else None
            ),
            "weighted_bound": weighted_bound,
            "bound_scope": "plans with one gap (a clone or a host round trip) per buffer and "
            "scenario, times in ticks (rounding slack taken off)",
            "errors": errors,
        }
    )
    if runtime.interrupted():
        info["interrupted"] = True
    res = finish_result(
        graph,
        sc,
        bud,
        final.skeleton,
        final.active,
        METHOD,
        status,
        time.perf_counter() - t0,
        base.dur,
        transfer,
        info,
    )
    return res


def _row(p: Plan, sc: Scenarios, bud: np.ndarray) -> dict[str, Any]:
    return {
        "method": p.name,
        "makespan": {k: t.makespan for k, t in zip(sc.names, p.timing)},
        "exposed_comm": {k: t.exposed_comm for k, t in zip(sc.names, p.timing)},
        "recompute": {k: t.recompute for k, t in zip(sc.names, p.timing)},
        "peak_bytes": {k: t.peak for k, t in zip(sc.names, p.timing)},
        "fits": bool((p.peak() <= bud).all()),
    }


def _sequential(
    prob, graph, sc, bud, evict, transfer, seconds, cfg, errors, device, profile, relax_s=0.0
):
    """The separate methods, a third of ``seconds`` each: ``cp-overlap`` at the budget (no
    added op), ``cp-remat``'s plan timed with communication, and that plan reordered by
    ``cp-overlap`` within the budget (order, then remat, then overlap). When no order fits
    the budget, ``relax`` seconds go to the overlap model without a memory limit, whose
    bound holds for every plan (``bounds.no_memory_bound``). Returns (plans, (bound [S],
    info) or None)."""
    out: list[Plan] = []
    relax = None
    n_s = len(sc)
    share = max(0.5, seconds / 3) if cfg.deterministic else seconds / 3
    common = dict(
        workers=cfg.workers,
        seed=cfg.seed,
        deterministic=cfg.deterministic,
        deadline=cfg.deadline,
    )
    try:
        s = solve_overlap(
            graph,
            sc,
            budget=bud,
            costs=prob.base.costs,
            comm_streams=prob.base.comm_streams,
            time_limit=share,
            **common,
        )
        # listed over the budget too: the table shows what memory alone could not do
        out.append(_plan(prob, "cp-overlap", Skeleton(tuple(s.order)), [[]] * n_s))
    except (InputError, ScheduleError, InfeasibleError) as e:
        errors["cp-overlap"] = str(e)
    if relax_s >= 1.0 and (not out or not (out[-1].peak() <= bud).all()):
        lb, _, rinfo = no_memory_bound(prob.base, relax_s, common)
        relax = (lb, {**rinfo, "seconds": relax_s})
    if cfg.seconds_left() <= 0:  # each step's own work takes seconds at 10k ops
        errors["cp-remat"] = "skipped: no time left"
        return out, relax
    try:
        r = solve_remat(
            graph,
            sc,
            bud,
            evict=evict,
            transfer=transfer,
            durations=prob.base.dur,
            time_limit=share,
            device=device,
            **common,
        )
        remat_plan = _plan(prob, "cp-remat", r.skeleton, [list(a) for a in r.active])
        out.append(remat_plan)
    except (InputError, ScheduleError, InfeasibleError) as e:
        errors["cp-remat"] = str(e)
        return out, relax
    if n_s == 1 and any(remat_plan.active) and cfg.seconds_left() > 0:
        try:
            out.append(_reordered(prob, remat_plan, bud, share, common))
        except (InputError, ScheduleError, InfeasibleError) as e:
            errors["cp-remat, then cp-overlap"] = str(e)
    return out, relax


def _reordered(prob: JointProblem, plan: Plan, bud, seconds: float, common) -> Plan:
    """``plan`` written into the graph, reordered by cp-overlap within the budget, and read
    back as a skeleton (clones, copy-outs, frees and copy-backs at the steps where the new
    order puts them)."""
    g = prob.graph
    ev = materialize(g, plan.skeleton, plan.active[0])
    pg, porder = plan_to_graph(g, ev)
    costs = plan_costs(prob, pg, 0)
    s = solve_overlap(
        pg,
        prob.scenarios,
        budget=bud,
        costs=costs,
        comm_streams=prob.base.comm_streams,
        hint=porder,
        time_limit=seconds,
        **common,
    )
    order = copy_out_before_back(pg, s.order)
    skeleton, active = skeleton_from_plan_order(g, pg, order)
    return _plan(prob, "cp-remat, then cp-overlap", skeleton, [active])


def _solve_model(
    prob, hint_plan, scenario_objective, resolution, seconds, cfg, progress, info, lb_free=None
):
    base = prob.base
    C = len(prob.scenarios)
    ref = np.maximum(base.dur.sum(axis=1), 1e-30)
    d, t, tick, over = copy_durations(
        base, "exact", scenario_objective, ref, resolution, per_op=TICKS_PER_OP
    )
    d1 = floor1(d)
    over = over + (d1 - d).sum(axis=1) * tick
    host = np.stack([ticks(prob.host_time[c], tick[c], False) for c in range(C)])
    host = host.reshape(C, -1)
    gap = prob.gap_buffers
    a_of = prob.graph.buffer_def
    # a clone or a host copy rounds its time too: the slack covers every one that may run
    for b in gap:
        if prob.remat_buffers[b]:
            a = int(a_of[b])
            over = over + np.maximum(d1[:, a] * tick - base.dur[:, a], 0)
        if prob.evict_buffers[b]:
            over = over + 2 * np.maximum(host[:, b] * tick - prob.host_time[:, b], 0)
    # and the other way: how much faster than the true times the tick model can be (times
    # rounded down), for the budget-free bound as a cut on the tick makespan: a tick plan's
    # true makespan is at most its tick makespan plus every rounding-down of what may run
    under = np.maximum(base.dur - d1 * tick[:, None], 0).sum(axis=1)
    if base.P:
        under = under + np.maximum(base.ttime - t * tick[:, None], 0).sum(axis=1)
    for b in gap:
        if prob.remat_buffers[b]:
            a = int(a_of[b])
            under = under + np.maximum(base.dur[:, a] - d1[:, a] * tick, 0)
        if prob.evict_buffers[b]:
            under = under + 2 * np.maximum(prob.host_time[:, b] - host[:, b] * tick, 0)
    serial = d1.sum(axis=1) + t.sum(axis=1)
    for b in gap:
        serial = serial + d1[:, a_of[b]] * int(prob.remat_buffers[b]) + 2 * host[:, b]
    horizon = serial.astype(np.int64) + 1
    is_coll = np.array([c.startswith("collective:") for c in base.classes], dtype=bool)
    lb_t = overlap_lower_bound(
        prob.graph,
        d1.astype(np.float64),
        base.starts,
        base.dones,
        t.astype(np.float64),
        base.stream,
        np.zeros(C),
        is_coll,
        base.anc,
    ).makespan
    w = prob.scenarios.weights

    def model(window, hint: Plan | None):
        J = build(prob, d1, t, host, horizon, window=window)
        for c in range(C):
            J.m.add(J.V.M[c] >= int(math.ceil(lb_t[c] - 1e-6)))
            if lb_free is not None:  # one tick of margin for float rounding
                cut = int(math.floor((float(lb_free[c]) - under[c]) / tick[c])) - 1
                if cut > 0:
                    J.m.add(J.V.M[c] >= cut)
        _, coef = O.makespan(J, scenario_objective, tick, ref)
        if hint is not None:
            _hint(J, hint, d1, t, host)
        return J, coef

    def read(J, solver) -> Plan:
        skeleton, active = _read_back(J, solver)
        for c in range(C):  # the replay checks the read-back plan (raises ScheduleError)
            ev = materialize(prob.graph, skeleton, active[c])
            check_plan(prob.graph, ev, prob.scenarios.only(c), int(prob.budget[c]), what=METHOD)
        return _plan(prob, METHOD, skeleton, active)

    clock = Clock.of(cfg, seconds)
    J, coef = model(None, hint_plan)
    info["model"] = {
        **{k: v for k, v in J.stats.items() if not k.startswith("memory_intervals_")},
        "tick": [float(x) for x in tick],
        "rounding_slack": [float(x) for x in over],
        "hint": hint_plan.name if hint_plan is not None else None,
    }
    n = prob.graph.n_ops
    use_lns = hint_plan is not None and n > LNS_MIN_OPS
    t_main = max(0.0, clock.left()) * (LNS_MAIN_SHARE if use_lns else 1.0)
    run = runtime.solve(J.m, cfg, max(0.1, t_main), progress=progress)
    clock.spend(t_main)
    info["model"]["status"] = run.status
    if not run.solved and not use_lns:
        if run.status == runtime.INFEASIBLE:
            raise Infeasible("the joint model is infeasible under the budget")
        return None, False, None, None, run.status
    if run.status == runtime.INFEASIBLE:
        raise Infeasible("the joint model is infeasible under the budget")
    solver = run.solver
    plan = read(J, solver) if run.solved else None
    bound = None
    wbound = None
    if run.solved and C == 1:
        bound = np.array([max(0.0, solver.best_objective_bound * tick[0] - over[0])])
    elif run.solved and scenario_objective == "weighted":
        # the objective is sum(coef_k * M_k) with coef proportional to w_k * tick_k
        scale = float((w * tick)[0] / coef[0]) if coef[0] else 0.0
        wbound = max(0.0, solver.best_objective_bound * scale - float(w @ over))
    if run.solved:
        info["model"]["claimed_makespan"] = [
            float(solver.value(J.V.M[c]) * tick[c]) for c in range(C)
        ]
    if use_lns and not run.optimal:
        best = plan if plan is not None and _score(plan, w) < _score(hint_plan, w) else hint_plan
        best, lns_info = _lns(prob, model, read, best, w, clock, cfg)
        info["model"]["lns"] = lns_info
        if best is not hint_plan:
            plan = best
    return plan, bool(run.optimal), bound, wbound, run.status


def _score(p: Plan, w: np.ndarray) -> float:
    return float(w @ p.makespan())


def _hot_positions(prob: JointProblem, plan: Plan) -> tuple[np.ndarray, np.ndarray, int]:
    """Where a window of ``plan``'s main order is most worth re-solving, per main position:
    the compute stream's wait before it (an exposed collective or copy: a done that stalls,
    in the first scenario's timeline) and the memory at it (the plan graph's usage at the
    step, the peak of which is where the budget binds). Returns (wait [n], usage [n], the
    position of the peak)."""
    g = prob.graph
    n = g.n_ops
    wait = np.zeros(n)
    usage = np.zeros(n)
    t = plan.timing[0].timeline[0]
    pg = t.graph
    index = {name: i for i, name in enumerate(g.op_names)}
    mem = simulate(pg, t.order, prob.scenarios.only(0)).usage[0]
    pos = 0
    prev_end = 0.0
    for step, i in enumerate(t.order):
        i = int(i)
        k = index.get(pg.op_names[i])
        main = k is not None and "remat_of" not in pg.attrs(i) and pg.opcodes[i] == g.opcodes[k]
        p = min(pos, n - 1)
        wait[p] += max(0.0, float(t.start[i]) - prev_end)
        usage[p] = max(usage[p], float(mem[step]))
        prev_end = max(prev_end, float(t.end[i]))
        pos += int(main)
    return wait, usage, int(np.argmax(usage)) if n else 0


def _lns(prob, model, read, best: Plan, w, clock, cfg):
    """Windows of the best plan's order re-solved by the joint model (the order outside
    fixed; clones, copies and collective times free); a plan is kept when the simulator
    says it is faster. Monotone: never worse than ``best``. The windows' centres take
    turns: a position where the compute stream waits (drawn in proportion to the wait: the
    exposed collectives), the memory peak (shifted at random within half a window: where
    the budget forces clones), and a position drawn uniformly."""
    rng = np.random.default_rng(cfg.seed)
    n = prob.graph.n_ops
    k = min(n, LNS_WINDOW)
    tried = improved = 0
    start = _score(best, w)
    kinds = {"wait": 0, "peak": 0, "random": 0}
    hot = _hot_positions(prob, best)
    while clock.left() > 1.0 and not runtime.interrupted():
        order = list(best.skeleton.order)
        wait, _, peak_at = hot
        kind = ("wait", "peak", "random")[tried % 3]
        if kind == "wait" and wait.sum() > 0:
            centre = int(rng.choice(n, p=wait / wait.sum()))
        elif kind == "peak":
            centre = peak_at + int(rng.integers(-(k // 2), k // 2 + 1))
        else:
            kind = "random"
            centre = int(rng.integers(0, n))
        a = int(np.clip(centre - k // 2, 0, max(0, n - k)))
        J, _ = model((order, a, a + k), best)
        t_win = min(clock.left(), max(1.0, LNS_WINDOW_SECONDS))
        run = runtime.solve(J.m, cfg, t_win)
        clock.spend(t_win)
        tried += 1
        if not run.solved:
            continue
        try:
            cand = read(J, run.solver)
        except ScheduleError:
            continue
        if (cand.peak() <= prob.budget).all() and _score(cand, w) < _score(best, w) - 1e-15:
            best = cand
            improved += 1
            kinds[kind] += 1
            hot = _hot_positions(prob, best)
    return best, {
        "windows": tried,
        "improved": improved,
        "improved_by_kind": kinds,
        "window_ops": k,
        "makespan_before": start,
        "makespan_after": _score(best, w),
    }


def _read_back(J: JointVars, solver) -> tuple[Skeleton, list[list[int]]]:
    """The solution as a skeleton: the main order by start time, every clone and host round
    trip at the step of the first main op that starts at or after it."""
    V, prob = J.V, J.prob
    g = prob.graph
    order = V.order_from(solver)
    n = len(order)
    cands: list[Regen | Evict] = []
    index: dict[Regen | Evict, int] = {}
    active: list[list[int]] = []

    def add(cand) -> int:
        if cand not in index:
            index[cand] = len(cands)
            cands.append(cand)
        return index[cand]

    for c in range(J.C):
        st = np.array([solver.value(V.s[c][i]) for i in order], dtype=np.int64)
        st = np.maximum.accumulate(st) if n else st

        def step(x: int, st=st) -> int:
            return int(np.searchsorted(st, x, side="left"))

        act: list[int] = []
        clones = []
        backs = []
        for b in prob.gap_buffers:
            if b in J.remat and solver.boolean_value(J.remat[b][c]):
                clones.append((solver.value(J.clone_start[b][c]), b))
            if b in J.evict and solver.boolean_value(J.evict[b][c]):
                backs.append((solver.value(J.back_start[b][c]), b))
        sub: dict[int, int] = {}
        for r, b in sorted(clones):
            k = step(r)
            sub[k] = sub.get(k, 0) + 1
            act.append(add(Regen(int(g.buffer_def[b]), k, sub[k] - 1)))
        rank: dict[int, int] = {}
        for p, b in sorted(backs):
            k = step(p)
            rank[k] = rank.get(k, 0) + 1
            o = solver.value(J.out_start[b][c])
            f = solver.value(J.drop[b][c])
            act.append(add(Evict(int(b), step(o), step(f), k, rank[k] - 1)))
        active.append(act)
    return Skeleton(tuple(order), tuple(cands)), active


def _hint(J: JointVars, plan: Plan, d: np.ndarray, t: np.ndarray, host: np.ndarray) -> None:
    """Every main variable from the tick timeline of ``plan`` (the plan graph simulated with
    the model's tick durations)."""
    prob, V, m = J.prob, J.V, J.m
    g = prob.graph
    base = prob.base
    op_index = {name: i for i, name in enumerate(g.op_names)}
    buf_index = {name: b for b, name in enumerate(g.buffer_names)}
    p_of = {int(a): p for p, a in enumerate(base.starts)}
    pairs: list[tuple[Any, Any]] = []
    main_pos = None
    rd = readers(prob)
    a_of = g.buffer_def
    size_of: dict[tuple[int, int, str], int] = {}
    for c in range(J.C):
        ev = materialize(g, plan.skeleton, plan.active[c])
        pg, porder = plan_to_graph(g, ev)
        n2 = pg.n_ops
        op = np.zeros((1, n2))
        tr: dict[int, np.ndarray] = {}
        orig = np.full(n2, -1, dtype=np.int64)
        clone = np.zeros(n2, dtype=bool)
        copy_buf: dict[int, tuple[str, int]] = {}
        for i in range(n2):
            name = pg.op_names[i]
            k = op_index.get(pg.attrs(i).get("remat_of", name), -1)
            if k >= 0 and pg.opcodes[i] == g.opcodes[k]:
                orig[i] = k
                clone[i] = "remat_of" in pg.attrs(i)
                op[0, i] = d[c, k]
                if k in p_of:
                    tr[i] = np.array([float(t[c, p_of[k]])])
                continue
            for tag in (".evict", ".prefetch"):
                if tag in name:
                    bname = name[: name.rindex(tag)]
                    if bname in buf_index:
                        b = buf_index[bname]
                        copy_buf[i] = (tag, b)
                        if name.endswith(".start"):
                            tr[i] = np.array([float(host[c, b])])
        tl = simulate_timeline(
            pg,
            porder,
            Costs(op, tr),
            prob.scenarios.only(c),
            comm_streams=base.comm_streams,
            validate=False,
        )[0]
        start = np.rint(tl.start).astype(np.int64)
        end = np.rint(tl.end).astype(np.int64)
        begin = {int(a): int(round(x)) for a, x in zip(tl.pair_start, tl.transfer_begin)}
        s_main = np.zeros(g.n_ops, dtype=np.int64)
        e_main = np.zeros(g.n_ops, dtype=np.int64)
        for i in range(n2):
            if orig[i] >= 0 and not clone[i]:
                s_main[orig[i]] = start[i]
                e_main[orig[i]] = end[i]
        for i in range(g.n_ops):
            pairs.append((V.s[c][i], int(s_main[i])))
        pairs.append((V.M[c], int(math.ceil(tl.makespan))))
        if c == 0:
            main_pos = np.argsort(np.argsort(s_main, kind="stable"), kind="stable")
        second: dict[int, int] = {}
        clone_start: dict[int, int] = {}
        for i in range(n2):
            if clone[i]:
                outs = [b for b in g.defines(int(orig[i])) if int(b) in J.remat]
                for b in outs:
                    clone_start[int(b)] = int(start[i])
        drops: dict[int, int] = {}
        outs_t: dict[int, int] = {}
        for i, (tag, b) in copy_buf.items():
            if tag == ".evict" and pg.op_names[i].endswith(".start"):
                outs_t[b] = begin.get(i, int(start[i]))
            elif tag == ".evict":
                drops[b] = int(start[i])
            elif pg.op_names[i].endswith(".start"):
                second[b] = begin.get(i, int(start[i]))
        for b in prob.gap_buffers:
            on_r = b in clone_start and b in J.remat
            on_e = b in second and b in J.evict and b in outs_t
            if b in J.remat:
                pairs.append((J.remat[b][c], on_r))
                pairs.append((J.clone_start[b][c], clone_start.get(b, 0)))
            if b in J.evict:
                pairs.append((J.evict[b][c], on_e))
                pairs.append((J.out_start[b][c], outs_t.get(b, 0)))
                pairs.append((J.back_start[b][c], second.get(b, 0)))
            a = int(g.buffer_def[b])
            cut = clone_start[b] if on_r else (outs_t[b] if on_e else None)
            # every reader that runs (main ops, and the clones in the plan) with its span
            spans = [(int(s_main[r[1]]), int(e_main[r[1]]), r) for r in rd[b] if r[0] == "op"]
            spans += [
                (clone_start[r[1]], clone_start[r[1]] + int(d[c, a_of[r[1]]]), r)
                for r in rd[b]
                if r[0] == "clone" and r[1] in clone_start
            ]
            early_end = max([int(e_main[a])] + [e for st, e, _ in spans if cut is None or st < cut])
            drop = drops.get(b, early_end) if on_e else early_end
            pairs.append((J.drop[b][c], drop))
            second_end = max((e for st, e, _ in spans if cut is not None and st >= cut), default=0)
            pairs.append((J.second_end[b][c], second_end))
            for r in rd[b]:
                if (b, r) not in J.late:
                    continue
                st = s_main[r[1]] if r[0] == "op" else clone_start.get(r[1])
                late = cut is not None and st is not None and st >= cut
                pairs.append((J.late[b, r][c], bool(late)))
            for kind, on, first in (
                ("remat", on_r, clone_start.get(b)),
                ("evict", on_e, second.get(b)),
            ):
                size_of[(c, b, kind)] = (
                    max(0, second_end - first) if on and first is not None else 0
                )
        for cc, end, users in J.group_ends:
            if cc == c:
                pairs.append((end, int(max(e_main[u] for u in users))))
        for b, ends in J.ends.items():
            readers_end = [int(e_main[r[1]]) for r in rd[b] if r[0] == "op"]
            readers_end += [
                clone_start[r[1]] + int(d[c, a_of[r[1]]])
                for r in rd[b]
                if r[0] == "clone" and r[1] in clone_start
            ]
            pairs.append((ends[c], max(readers_end, default=0)))
        for cc, b, size, kind in J.second_sizes:
            if cc == c:
                pairs.append((size, size_of.get((c, b, kind), 0)))
        # spans (start, end) of the overlap variables: their lengths from the values above
        known = {
            v.index: val for v, val in pairs if hasattr(v, "index") and not isinstance(val, bool)
        }
        for size, st_e, en_e in V.sizes:
            try:
                pairs.append((size, max(0, _value(en_e, known) - _value(st_e, known))))
            except KeyError:
                continue
    if main_pos is not None:
        for (i, j), lit in V.lit.items():
            pairs.append((lit, bool(main_pos[i] < main_pos[j])))
    runtime.set_hints(m, pairs)


def _value(e, known: dict[int, int]) -> int:
    """Value of a constant or linear expression from known variable values (KeyError if a
    variable is unknown)."""
    if isinstance(e, (int, np.integer)):
        return int(e)
    f = FlatIntExpr(e)
    return sum(int(c) * known[v.index] for v, c in zip(f.vars, f.coeffs)) + int(f.offset)


def applies(graph: Graph) -> bool:
    return graph.n_ops > 0


@register(
    METHOD,
    "CP-SAT: order, collective overlap and remat/offload in one model, least makespan "
    "under --budget",
    "remat",
)
def cp_joint(graph: Graph, scenarios: Scenarios | None = None, **options: Any) -> RematResult:
    budget = options.pop("budget", None)
    if options.get("objective") not in (None, "time"):
        options.pop("objective")
    return solve_joint(graph, scenarios, budget, **options)


__all__ = ["solve_joint", "cp_joint", "METHOD", "Plan"]
