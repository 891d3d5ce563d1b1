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

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cpsched.analysis.memory import simulate
from cpsched.analysis.schedule import FALLBACK, FEASIBLE, OPTIMAL
from cpsched.core.errors import BudgetError, InfeasibleError, InputError, ScheduleError
from cpsched.core.graph import Graph
from cpsched.core.scenarios import Scenarios, static
from cpsched.core.transforms import convert_sync_collectives
from cpsched.core.units import format_bytes_exact
from cpsched.cp import runtime
from cpsched.cp.joint.problem import (
    MAX_JOINT_OPS,
    JointProblem,
    build_joint_problem,
    copy_out_before_back,
    plan_costs,
    skeleton_from_plan_order,
)
from cpsched.cp.joint.solve import METHOD, RESOLUTION, Plan, TickModel
from cpsched.cp.joint.solve import plan_of as _plan
from cpsched.cp.overlap.problem import Infeasible, build_problem
from cpsched.cp.remat.problem import check_budget
from cpsched.cp.runtime import Clock, SolverConfig, stoppable
from cpsched.methods import register
from cpsched.remat.replay import _budget_array
from cpsched.remat.result import RematResult, finish_result
from cpsched.remat.rewrite import plan_to_graph
from cpsched.remat.skeleton import Skeleton, materialize
from cpsched.remat.timing import TransferModel, host_link
from cpsched.strategies.joint.bounds import analytic_bound, memory_cut_bound, no_memory_bound
from cpsched.strategies.options import solver_options
from cpsched.strategies.overlap.method import solve_overlap
from cpsched.strategies.remat.method import solve_remat

DEFAULT_TIME_LIMIT = 30.0
MAX_JOINT_OPS_SCENARIOS = 120  # several scenarios: order literals between every pair
SEQUENTIAL_SHARE = 0.4  # of the time limit, for the separate methods (hints, fallback)
# of the time limit, for the overlap model without a memory limit when no order fits the
# budget: its proven bound holds for every plan (``bounds``)
NO_MEMORY_SHARE = 0.1
# after the whole model (this share of its time), windows of the best order re-solved
LNS_MIN_OPS = 40
LNS_MAIN_SHARE = 0.7
LNS_WINDOW = 40
LNS_WINDOW_SECONDS = 3.0


@dataclass
class _Joint:
    """One cp-joint run: the problem at its budget, the solver options and the clock, and
    what the phases record (``info``, ``errors``)."""

    graph: Graph
    sc: Scenarios
    bud: np.ndarray
    prob: JointProblem
    transfer: TransferModel | None
    small: bool  # the joint model is built (else the separate methods only)
    scenario_objective: str
    time_limit: float
    cfg: SolverConfig
    clock: Clock
    info: dict[str, Any]
    errors: dict[str, str]

    def rank(self, p: Plan) -> tuple[float, float]:
        """Plans compare by makespan (weighted or minimax), then by weighted peak."""
        w = self.sc.weights
        ms = p.makespan()
        score = float(w @ ms) if self.scenario_objective == "weighted" else float(np.max(ms))
        return score, float(w @ p.peak())

    def fits(self, p: Plan) -> bool:
        return bool((p.peak() <= self.bud).all())

    def by_scenario(self, values) -> dict[str, Any]:
        return dict(zip(self.sc.names, values))


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
    if budget is None:
        raise InputError("cp-joint needs a memory budget (--budget BYTES, 8GiB or 90%)")
    if scenario_objective not in ("weighted", "minimax"):
        raise InputError(
            f"scenario objective is 'weighted' or 'minimax', not {scenario_objective!r}"
        )
    if convert_sync:
        graph = convert_sync_collectives(graph)
    bud = _budget_array(budget, len(sc))
    lb_mem = check_budget(graph, sc, bud)
    small = graph.n_ops <= (MAX_JOINT_OPS if len(sc) == 1 else MAX_JOINT_OPS_SCENARIOS)
    base = build_problem(
        graph, sc, device=device, profile=profile, costs=costs, comm_streams=comm_streams,
        reach=small,
    )  # fmt: skip
    if evict and transfer is None:
        transfer = host_link(graph, device, bandwidth, latency)
    prob = build_joint_problem(base, bud, transfer if evict else None, remat=remat, evict=evict)
    info: dict[str, Any] = {
        "objective": "time",
        "scenario_objective": scenario_objective,
        "unit": base.costs.unit,
        "proven_min_bytes": {k: int(v) for k, v in zip(sc.names, lb_mem)},
    }
    j = _Joint(
        graph, sc, bud, prob, transfer, small, scenario_objective, time_limit, cfg,
        Clock.of(cfg, t0=t0), info, {},
    )  # fmt: skip
    lb_cut = _cut_bound(j)
    plans, relax = (
        _sequential_phase(j, evict, device, profile) if sequential or not small else ([], None)
    )
    lb_free = _budget_free_bound(j, relax)
    for name, (skeleton, active) in (known or {}).items():
        try:
            plans.append(_plan(prob, name, skeleton, active))
        except (InputError, ScheduleError) as e:  # one the replay refuses: reported, not used
            j.errors[name] = str(e)
    fits = [p for p in plans if j.fits(p)]
    best_seq = min(fits, key=j.rank) if fits else None
    info["sequential"] = [_row(p, sc, bud) for p in plans]
    model = _model_phase(j, best_seq, resolution, progress, lb_free, lb_cut)
    pool = [p for p in ([model.plan] if model.plan is not None else []) + fits if j.fits(p)]
    if not pool:
        raise _no_plan(j, plans, model, lb_mem)
    final, status, bound, weighted_bound = _choose(j, pool, model, lb_free, lb_cut)
    _record(j, final, bound, weighted_bound)
    return finish_result(
        graph, sc, bud, final.skeleton, final.active, METHOD, status, time.perf_counter() - t0,
        base.dur, transfer, info,
    )  # fmt: skip


def _cut_bound(j: _Joint) -> np.ndarray:
    """The cut bound at this budget (``bounds.memory_cut_bound``): every plan, not only the
    model's; also a cut on the model's makespan. Raises ``InfeasibleError`` when it shows
    that nothing fits."""
    if not j.small:
        return np.zeros(len(j.sc))
    cut_cfg = SolverConfig(
        workers=1, deterministic=j.cfg.deterministic, deadline=j.cfg.deadline
    )  # the cut models are small: one worker each
    lb_cut, cut_info = memory_cut_bound(j.prob, cfg=cut_cfg)
    j.info["memory_cut_bound"] = {k: float(v) for k, v in zip(j.sc.names, lb_cut)}
    j.info["memory_cut"] = cut_info["cuts"]
    if not np.isfinite(lb_cut).all():
        k = int(np.flatnonzero(~np.isfinite(lb_cut))[0])
        raise InfeasibleError(
            f"no plan fits the budget in {j.sc.names[k]}: at {cut_info['cuts'][k][0]} the "
            "bytes that no clone or host copy can take off the device exceed it "
            "(memory_cut_bound)"
        )
    return lb_cut


def _sequential_phase(j: _Joint, evict: bool, device: Any, profile: Any):
    """1. the separate methods in sequence: hints and fallback (``SEQUENTIAL_SHARE`` of the
    time, all of it above the model's size), and the overlap model without a memory limit
    (``NO_MEMORY_SHARE``). Returns (plans, relaxation or None)."""
    clock = j.clock
    t_seq = SEQUENTIAL_SHARE * j.time_limit if j.small else clock.left()
    relax_s = NO_MEMORY_SHARE * j.time_limit if j.small else 0.0
    if not j.cfg.deterministic:  # never past the deadline
        t_seq = min(t_seq, max(0.0, clock.left()))
        relax_s = min(relax_s, max(0.0, clock.left() - t_seq))
    plans, relax = _sequential(
        j.prob, j.graph, j.sc, j.bud, evict, j.transfer, t_seq, j.cfg, j.errors, device,
        profile, relax_s,
    )  # fmt: skip
    t_seq += relax_s if relax is not None else 0.0
    clock.spend(t_seq)
    return plans, relax


def _budget_free_bound(j: _Joint, relax) -> np.ndarray:
    """Bounds for every plan at every budget (``cpsched.strategies.joint.bounds``)."""
    lb_free = analytic_bound(j.prob.base) if j.small else np.zeros(len(j.sc))
    if relax is not None:
        lb_free = np.maximum(lb_free, relax[0])
        j.info["no_memory"] = relax[1]
    j.info["budget_free_bound"] = {k: float(v) for k, v in zip(j.sc.names, lb_free)}
    return lb_free


@dataclass
class _ModelOutcome:
    plan: Plan | None = None
    proven: bool = False
    bound: np.ndarray | None = None
    weighted_bound: float | None = None
    status: str = "NOT_RUN"


def _model_phase(j: _Joint, best_seq, resolution, progress, lb_free, lb_cut) -> _ModelOutcome:
    """2. the joint model, from the best plan so far, for the time left."""
    out = _ModelOutcome()
    if not j.small:
        j.info["note"] = (
            f"{j.graph.n_ops} ops: above the joint model's size; the separate methods in sequence"
        )
    else:
        try:
            plan, proven, bound, wbound, status = _solve_model(
                j.prob,
                best_seq,
                j.scenario_objective,
                resolution,
                j.clock.left(),
                j.cfg,
                progress,
                j.info,
                np.maximum(lb_free, np.where(np.isfinite(lb_cut), lb_cut, 0.0)),
            )
            out = _ModelOutcome(plan, proven, bound, wbound, status)
        except Infeasible as e:
            out.status = "INFEASIBLE"
            j.info["note"] = str(e)
        except ScheduleError as e:  # a read-back plan the replay rejects: keep the others
            j.errors[METHOD] = str(e)
    j.info["solver_status"] = out.status
    return out


def _no_plan(j: _Joint, plans: list[Plan], model: _ModelOutcome, lb_mem) -> BudgetError:
    """What can be had instead: the least peak of the plans tried, the proven minimum."""
    sc, bud = j.sc, j.bud
    tried = [p.peak() for p in plans + ([model.plan] if model.plan is not None else [])]
    reached = np.min(tried, axis=0) if tried else None
    what = "; ".join(
        f"{n}: budget {format_bytes_exact(bud[s])}, "
        + (f"least peak reached {format_bytes_exact(reached[s])}, " if reached is not None else "")
        + f"proven minimum {format_bytes_exact(lb_mem[s])}"
        for s, n in enumerate(sc.names)
    )
    figures = dict(
        reached=None if reached is None else {n: int(v) for n, v in zip(sc.names, reached)},
        proven={n: int(v) for n, v in zip(sc.names, lb_mem)},
    )
    if model.status == "INFEASIBLE":
        return BudgetError(
            "no plan with one recompute or host round trip per buffer fits the budget "
            f"(proven by the joint model): {what}",
            **figures,
        )
    return BudgetError(
        "no plan within the budget was found"
        + (f" (joint model: {model.status})" if model.status != "NOT_RUN" else "")
        + f": {what}; a longer --time-limit may help",
        **figures,
    )


def _choose(j: _Joint, pool: list[Plan], model: _ModelOutcome, lb_free, lb_cut):
    """The best plan of ``pool`` (the model's on a tie), its status and the bounds: the
    solver's (one scenario), the budget-free and the cut bounds, never above the result. A
    result that meets its bound is ``OPTIMAL`` whichever method found it."""
    sol = model.plan
    final = min(pool, key=j.rank)
    if sol is not None and j.rank(sol) <= j.rank(final):
        final = sol
    if final is sol and model.proven:
        status = OPTIMAL
    elif final is sol:
        status = FEASIBLE
    else:
        status = FALLBACK
    ms = final.makespan()
    bound, weighted_bound = model.bound, model.weighted_bound
    if j.small:
        # per scenario: the solver's (one scenario) and the budget-free bounds
        bound = lb_free if bound is None else np.maximum(bound, lb_free)
        bound = np.maximum(bound, lb_cut)
        if len(j.sc) > 1 and j.scenario_objective == "weighted":
            w = j.sc.weights
            weighted_bound = max(weighted_bound or 0.0, float(w @ lb_free), float(w @ lb_cut))
    if bound is not None:
        bound = np.minimum(bound, ms)
        if (ms <= bound * (1 + 1e-9)).all():
            status = OPTIMAL  # the plan meets a proven bound
    return final, status, bound, weighted_bound


def _record(j: _Joint, final: Plan, bound, weighted_bound) -> None:
    """The chosen plan's figures into ``info``."""
    names = j.sc.names
    j.info.update(
        {
            "chosen": final.name,
            "budget": {k: int(v) for k, v in zip(names, j.bud)},
            "makespan": {k: t.makespan for k, t in zip(names, final.timing)},
            "exposed_comm": {k: t.exposed_comm for k, t in zip(names, final.timing)},
            "exposed_copy": {k: t.exposed_copy for k, t in zip(names, final.timing)},
            "recompute": {k: t.recompute for k, t in zip(names, final.timing)},
            "peak_bytes": {k: t.peak for k, t in zip(names, final.timing)},
            "makespan_bound": (
                {k: float(v) for k, v in zip(names, bound)} if bound is not None else None
            ),
            "weighted_bound": weighted_bound,
            "bound_scope": "plans with one gap (a clone or a host round trip) per buffer and "
            "scenario, times in ticks (rounding slack taken off)",
            "errors": j.errors,
        }
    )
    if runtime.interrupted():
        j.info["interrupted"] = True


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
    common = solver_options(cfg)
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
        lb, _, rinfo = no_memory_bound(prob.base, relax_s, cfg)
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
    """The whole joint model from ``hint_plan`` (``LNS_MAIN_SHARE`` of ``seconds`` when
    windows follow), then windows of the best order re-solved. Returns (plan or None,
    proven optimal, bound per scenario or None, weighted bound or None, solver status)."""
    tm = TickModel(prob, scenario_objective, resolution, lb_free)
    clock = Clock.of(cfg, seconds)
    J, coef = tm.build(None, hint_plan)
    info["model"] = tm.about(J, hint_plan)
    use_lns = hint_plan is not None and prob.graph.n_ops > LNS_MIN_OPS
    t_main = max(0.0, clock.left()) * (LNS_MAIN_SHARE if use_lns else 1.0)
    run = runtime.solve(J.m, cfg, max(0.1, t_main), progress=progress)
    clock.spend(t_main)
    info["model"]["status"] = run.status
    if run.status == runtime.INFEASIBLE:
        raise Infeasible("the joint model is infeasible under the budget")
    if not run.solved and not use_lns:
        return None, False, None, None, run.status
    plan = tm.read(J, run.solver) if run.solved else None
    bound, wbound = tm.bounds(run, coef)
    if run.solved:
        info["model"]["claimed_makespan"] = tm.claimed(J, run.solver)
    if use_lns and not run.optimal:
        w = prob.scenarios.weights
        best = plan if plan is not None and _score(plan, w) < _score(hint_plan, w) else hint_plan
        best, lns_info = _lns(tm, best, w, clock, cfg)
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


def _lns(tm: TickModel, best: Plan, w, clock, cfg):
    """Windows of the best plan's order re-solved by the joint model (the order outside
    fixed; clones, copies and collective times free); a plan is kept when the simulator
    says it is faster. Monotone: never worse than ``best``. The windows' centres take
    turns: a position where the compute stream waits (drawn in proportion to the wait: the
    exposed collectives), the memory peak (shifted at random within half a window: where
    the budget forces clones), and a position drawn uniformly."""
    prob = tm.prob
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
        J, _ = tm.build((order, a, a + k), best)
        t_win = min(clock.left(), max(1.0, LNS_WINDOW_SECONDS))
        run = runtime.solve(J.m, cfg, t_win)
        clock.spend(t_win)
        tried += 1
        if not run.solved:
            continue
        try:
            cand = tm.read(J, run.solver)
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
