"""CP-SAT collective overlap: hide communication behind compute under a memory budget.

``solve_overlap(graph, scenarios, ...)`` returns a ``Schedule`` whose order minimises the
makespan (equivalently the exposed communication) of ``cpsched.cost.timeline``'s execution
model, keeping peak memory within a budget in every scenario. Registered as method
``cp-overlap`` (family ``overlap``; it applies to graphs with collectives or async ops).

Execution model (the timeline's): one compute stream runs the ops back to back in the
order; an async start issues its transfer when its own slot ends, on its stream (one
shared ``comm`` stream for collectives, or one per kind), FIFO; the done waits on the
compute stream until the transfer has ended; a sync collective occupies the compute stream
for its transfer time. Times come from ``cpsched.cost.model.estimate`` (device, profile).

Time-indexed CP-SAT model (``objective='makespan'``):

- every op ``i`` is a fixed-size interval ``[s_i, s_i + d_i)`` on the compute stream
  (``NoOverlap``), ``d_i`` in integer ticks. Ops that take time, allocate a buffer, have
  transient bytes or start a transfer take at least one tick; the others may take zero
  (a zero-size interval cannot sit inside another one, and the memory at such a step is
  never above the previous timed step's). The instruction order is the order of the
  starts, zero-tick ops first at a tie, then the base order;
- every data/control/buffer/async dependence ``u -> v`` is ``s_v >= s_u + d_u``;
- every async transfer ``p`` (start ``a``, done ``b``) is an interval ``[x_p, x_p + t_p)``
  with ``x_p >= s_a + d_a`` and ``s_b >= x_p + t_p``; transfers of one stream do not
  overlap and are FIFO in the order of their starts: a literal per pair of unordered starts
  decides both the compute order of the starts and the order of the transfers;
- memory: every buffer is an interval from its defining op's start (0 if live-in) to the
  end of its last user (the horizon if live-out) with its bytes as demand, every op's
  transient bytes an interval over the op, and one ``Cumulative`` per scenario with the
  budget as capacity. The compute stream runs one op at a time, so the usage inside op
  ``v`` equals the simulator's usage at ``v``'s step: the memory model is exact. Small
  graphs also get a redundant step model over pairwise order literals ("buffer live at
  op v" Booleans, one linear constraint per op and scenario), whose propagation proves the
  XLA test modules optimal in well under a second;
- optional in-flight limits (XLA LHS ``*_overlap_limit``): a ``Cumulative`` of capacity
  ``N`` per collective kind over the ``[start, done]`` spans;
- the analytic lower bound (``overlap_bounds``) on the tick durations bounds the makespan;
- objective: the makespan. With several scenarios the durations differ per scenario but
  the order is shared: ``scenario_mode='exact'`` keeps one time copy per scenario, tied
  by one order literal per pair of independent ops, and minimises the weighted makespan
  (``scenario_objective='weighted'``, weights of the scenarios, seconds) or the largest
  makespan relative to its lower bound (``'minimax'``); ``'aggregate'`` (automatic for
  larger graphs) solves one copy on weighted durations and evaluates every scenario
  exactly.

Search: the whole model runs for about a third of the time, then a window LNS re-solves
``k`` consecutive positions of the best order with the rest fixed (times before the
window fixed too, memory exact in steps inside it), on windows placed at the dones that
stall the compute stream; ``k`` grows while windows are solved to optimality quickly.
Hints: every heuristic, plus ``overlap_hints.budget_repair`` (orders over the budget made
feasible by shortening in-flight spans) and ``budget_hoist`` (starts up / dones down as far
as the budget allows).

Status: ``OPTIMAL`` when the whole model was solved to optimality (optimal for the
timeline up to ``info['model']['rounding_slack']``, the tick rounding) or the makespan meets
the lower bound; ``FEASIBLE`` when the solver beat every heuristic; ``HEURISTIC_FALLBACK``
when a heuristic order (possibly hoisted or repaired) was at least as good.

``objective='distance'`` is the seed's surrogate: unit durations (the times are
instruction positions), maximise the sum over async collectives of done index minus start
index, same memory model. Both results are evaluated with the real timeline.

Every order the solver returns is re-simulated: memory by ``cpsched.analysis.memory`` (must be
within the budget), time by ``cpsched.cost.timeline``. The heuristics (``gpu-postprocess``,
``eager-cluster``, ``lhs`` when registered, the memory schedulers, the graph's own order)
are evaluated the same way; the best one within budget is the solver's hint and its
fallback, so the result is never worse than it.

``info`` of the returned schedule: per scenario ``makespan``, ``exposed_comm``,
``makespan_lower_bound``, ``exposed_comm_lower_bound``, ``exposed_gap``; ``budget``;
``hint`` (method, makespan, exposed comm); ``candidates``; ``pairs`` (one row per async
pair or sync collective: start, done, start/done index, distance, transfer time, overlapped
time under the hint and under the result); ``model`` (size, mode, tick, claimed makespan).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from cpsched.analysis.memory import lower_bound as mem_lb
from cpsched.analysis.memory import peak as mem_peak
from cpsched.analysis.schedule import (
    FALLBACK,
    FEASIBLE,
    HEURISTIC,
    INFEASIBLE,
    OPTIMAL,
    Schedule,
    make_schedule,
)
from cpsched.core.errors import InputError
from cpsched.core.graph import Graph
from cpsched.core.order import check_order_option
from cpsched.core.scenarios import Scenarios, static
from cpsched.core.transforms import convert_sync_collectives
from cpsched.cp import runtime
from cpsched.cp.overlap import objectives as O
from cpsched.cp.overlap.bounds import overlap_lower_bound
from cpsched.cp.overlap.constraints import build
from cpsched.cp.overlap.problem import (
    K_START,
    RESOLUTION,
    Candidate,
    Infeasible,
    OverlapProblem,
    build_problem,
    collective_pairs,
    copy_durations,
    evaluate,
    fifo_pairs,
    floor1,
    free_pairs,
    inflight_ok,
    overlap_limits,
    pick_mode,
    resolve_budget,
    total_distance,
)
from cpsched.cp.runtime import Clock, SolverConfig, stoppable
from cpsched.methods import register
from cpsched.strategies.overlap.candidates import (
    MEMORY_METHODS,
    OVERLAP_HEURISTICS,
    memory_candidates,
    overlap_candidates,
)
from cpsched.strategies.overlap.hints import budget_hoist, budget_repair

METHOD = "cp-overlap"
DEFAULT_TIME_LIMIT = 10.0
ORDER_LITERAL_PAIRS = 5_000  # single scenario: explicit order literals up to this many
MAX_FIFO_PAIRS = 20_000  # FIFO literals per model at most (else transfers may reorder)
# Building the whole model takes about this long per op (a 10,000-op transformer step: 1.8 s
# on a loaded 2-core machine); with less than twice that left it is not built
BUILD_SECONDS_PER_OP = 2e-4


def _solve(
    model: Any, cfg: SolverConfig, time_limit: float, progress: Callable | None = None
) -> runtime.Run:
    return runtime.solve(model, cfg, max(0.05, float(time_limit)), progress=progress)


@stoppable
def solve_overlap(
    graph: Graph,
    scenarios: Scenarios | None = None,
    *,
    budget: Any = None,
    slack: float = 0.0,
    objective: str = "makespan",
    scenario_objective: str = "weighted",
    device: Any = "h100",
    profile: Any = None,
    costs: Any = None,
    comm_streams: str = "shared",
    overlap_limit: Any = None,
    secondary: str | None = None,
    convert_sync: bool = False,
    hint: Sequence[int | str] | None = None,
    heuristics: Sequence[str] = OVERLAP_HEURISTICS,
    budget_methods: Sequence[str] = MEMORY_METHODS,
    scenario_mode: str = "auto",
    resolution: int = RESOLUTION,
    hoist: bool = True,
    lns: bool = True,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    workers: int | None = 2,
    seed: int | None = 0,
    log: bool | None = False,
    deterministic: bool | None = None,
    progress: Callable | None = None,
    deadline: float | None = None,
    **_ignored: Any,
) -> Schedule:
    """Order ``graph`` to hide communication behind compute within a memory budget.

    ``budget``: bytes (one number, one per scenario, or ``{scenario: bytes}``); default
    the peak of the best memory-only order (``budget_methods``, the graph's own order, a
    topological order) times ``1 + slack``. ``objective``: ``'makespan'`` (also accepted:
    ``'overlap'``) or ``'distance'``. ``comm_streams``: ``'shared'`` or ``'per-kind'``.
    ``overlap_limit``: at most N in-flight async collectives per kind (int, or
    ``{kind: N}``). ``secondary``: ``'peak'`` or ``'inflight'`` as a tie-breaker after the
    makespan. ``convert_sync``: split sync collectives into start/done pairs first (the
    schedule is then of the converted graph). ``hint``: an extra candidate order.
    """
    t0 = time.perf_counter()
    scenarios = scenarios or static()
    time_limit = DEFAULT_TIME_LIMIT if time_limit is None else float(time_limit)
    workers = 2 if workers is None else int(workers)
    seed = 0 if seed is None else int(seed)
    cfg = SolverConfig(
        time_limit,
        workers,
        seed,
        bool(deterministic),
        bool(log),
        deadline=None if deterministic else deadline,
    )
    objective = {"overlap": "makespan", None: "makespan"}.get(objective, objective)
    if objective in ("weighted", "minimax"):
        scenario_objective, objective = objective, "makespan"
    if objective not in ("makespan", "distance"):
        raise InputError(f"cp-overlap objective is 'makespan' or 'distance', not {objective!r}")
    if scenario_objective not in ("weighted", "minimax"):
        raise InputError(
            f"scenario objective is 'weighted' or 'minimax', not {scenario_objective!r}"
        )
    if secondary not in (None, "peak", "inflight"):
        raise InputError(f"secondary is 'peak' or 'inflight', not {secondary!r}")
    if slack < 0:
        raise InputError("slack must be >= 0")
    if convert_sync:
        graph = convert_sync_collectives(graph)

    prob = build_problem(
        graph, scenarios, device=device, profile=profile, costs=costs, comm_streams=comm_streams
    )
    names = scenarios.names
    limits = overlap_limits(prob, overlap_limit)
    errors: dict[str, str] = {}
    hopts = {"device": device, "seed": seed, "comm_streams": comm_streams}
    if profile is not None:
        hopts["profile"] = profile

    # -- budget -------------------------------------------------------------------------------
    mem_methods = list(budget_methods)
    # the phases' shares are of the time this call has: its limit, or less where the
    # command's deadline is nearer (reading 100k ops can take half of a 10 s limit)
    span = max(0.0, min(time_limit, cfg.seconds_left()))
    t_mem = max(0.01, min(0.15 * span, 10.0))
    mem_opts = dict(
        hopts,
        time_limit=t_mem,
        workers=workers,
        deadline=cfg.deadline,
        deterministic=cfg.deterministic,
    )
    mem_orders = memory_candidates(graph, scenarios, mem_methods, mem_opts, errors)
    lbm = np.maximum(mem_lb(graph, scenarios), 1)
    mem_peaks = {k: mem_peak(graph, o, scenarios) for k, o in mem_orders.items()}
    best_mem = min(
        mem_peaks, key=lambda k: (float(np.max(mem_peaks[k] / lbm)), float(np.sum(mem_peaks[k])))
    )
    budget_arr = resolve_budget(budget, scenarios)
    budget_source = "given"
    if budget_arr is None:
        budget_arr = np.floor(mem_peaks[best_mem] * (1.0 + float(slack))).astype(np.int64)
        budget_arr = np.maximum(budget_arr, mem_peaks[best_mem])
        budget_source = f"{best_mem} peak x (1 + {slack:g})"

    # -- candidates ----------------------------------------------------------------------------
    cand_orders: dict[str, list[int]] = dict(mem_orders)
    heur = [h for h in heuristics if h != METHOD]
    judged: dict[tuple, Candidate] = {}  # each order evaluated once, inside its phase's time

    def judge(label: str, order: list[int]) -> Candidate:
        key = tuple(order)
        if key not in judged:
            judged[key] = evaluate(prob, label, order, budget_arr, limits)
        return judged[key]

    cand_orders.update(
        overlap_candidates(
            graph,
            scenarios,
            heur,
            {best_mem: mem_orders[best_mem]},
            budget_arr,
            dict(hopts),
            errors,
            # a quarter of the time, or none past the deadline (100k ops: seconds each)
            deadline=None if cfg.deterministic else min(t0 + 0.25 * span, cfg.deadline or math.inf),
            on_order=judge,
        )
    )
    if hint is not None:
        hint_order = check_order_option(graph, hint)
        assert hint_order is not None  # given an order, it returns one
        cand_orders["hint"] = hint_order
    # -- bounds ---------------------------------------------------------------------------------
    is_coll = np.array([c.startswith("collective:") for c in prob.classes], dtype=bool)
    lb = overlap_lower_bound(
        graph,
        prob.dur,
        prob.starts,
        prob.dones,
        prob.ttime,
        prob.stream,
        prob.sync,
        is_coll,
        prob.anc,
    )
    ref = np.maximum(lb.makespan, 1e-30)
    w = scenarios.weights

    cands: list[Candidate] = []
    seen: set[tuple] = set()
    for k, o in cand_orders.items():
        key = tuple(o)
        if key in seen:
            continue
        seen.add(key)
        c = judge(k, o)  # the memory orders and the hint: evaluated now, whatever the time
        cands.append(c if c.name == k else replace(c, name=k))

    def score(c: Candidate) -> tuple:
        if objective == "distance":
            main = -float(c.distance)
        elif scenario_objective == "weighted":
            main = float(w @ c.makespan)
        else:
            main = float(np.max(c.makespan / ref))
        return (main, float(np.max(c.peak / np.maximum(budget_arr, 1))))

    # budget-aware hoisting of the best few feasible orders (and the memory order)
    if objective == "makespan" and prob.P and hoist:

        def ms_obj(o: list[int]) -> float:
            tl = prob.timeline(o)
            ms = np.asarray(tl.makespan, dtype=np.float64)
            return float(w @ ms) if scenario_objective == "weighted" else float(np.max(ms / ref))

        deadline_at = min(t0 + 0.3 * span, cfg.deadline or math.inf)
        for c in sorted((c for c in cands if not c.feasible and c.inflight_ok), key=score)[:4]:
            repaired = budget_repair(
                graph,
                scenarios,
                c.order,
                budget_arr,
                prob.starts,
                prob.dones,
                ms_obj,
                deadline=deadline_at,
            )
            if repaired is not None and tuple(repaired) not in seen:
                seen.add(tuple(repaired))
                cands.append(evaluate(prob, f"repair({c.name})", repaired, budget_arr, limits))
        pool0 = sorted((c for c in cands if c.feasible), key=score)[:3]
        mem_c = next((c for c in cands if c.name == best_mem and c.feasible), None)
        if mem_c is not None and mem_c not in pool0:
            pool0.append(mem_c)
        deadline_at = min(t0 + 0.4 * span, cfg.deadline or math.inf)
        for c in pool0:
            o = budget_hoist(
                graph,
                scenarios,
                c.order,
                budget_arr,
                prob.starts,
                prob.dones,
                ms_obj,
                (lambda o: inflight_ok(prob, o, limits)) if limits else None,
                deadline=deadline_at,
            )
            if tuple(o) not in seen:
                seen.add(tuple(o))
                cands.append(evaluate(prob, f"hoist({c.name})", o, budget_arr, limits))

    feasible = [c for c in cands if c.feasible]
    best_heur = min(feasible, key=score) if feasible else None
    hint_cand = best_heur or min(cands, key=lambda c: float(np.max(c.peak / budget_arr)))

    # -- solve -----------------------------------------------------------------------------------
    model_info: dict[str, Any] = {"objective": objective}
    solver_status = "NOT_RUN"
    sol_cand: Candidate | None = None
    solver_bound_ms: np.ndarray | None = None
    proven = False
    clock = Clock.of(cfg, time_limit, t0)
    if cfg.deterministic and objective == "makespan" and prob.P and hoist:
        clock.spend(0.4 * time_limit)  # the hoisting phase's nominal share
    remaining = clock.left()
    nothing_to_do = prob.P == 0 or (objective == "distance" and collective_pairs(prob).size == 0)
    if nothing_to_do:
        model_info["note"] = (
            "no async transfer: every order has the same makespan"
            if prob.P == 0
            else "no async collective pair: distance is 0"
        )
        proven = best_heur is not None
    else:
        try:
            if objective == "makespan":

                def score_fn(o: list[int]) -> float:
                    c = evaluate(prob, "lns", o, budget_arr, limits)
                    return score(c)[0] if c.feasible else math.inf

                out = _solve_makespan(
                    prob,
                    hint_cand,
                    best_heur is not None,
                    budget_arr,
                    limits,
                    scenario_objective,
                    scenario_mode,
                    resolution,
                    secondary,
                    max(0.1, remaining),
                    cfg,
                    progress,
                    ref,
                    score_fn,
                    lns,
                )
            else:
                out = _solve_distance(
                    prob,
                    hint_cand,
                    best_heur is not None,
                    budget_arr,
                    limits,
                    max(0.1, remaining),
                    cfg,
                    progress,
                )
            order, solver_status, model_info2, solver_bound_ms, proven = out
            model_info.update(model_info2)
            if order is not None:
                sol_cand = evaluate(prob, METHOD, order, budget_arr, limits)
        except Infeasible as e:
            solver_status = INFEASIBLE
            model_info["note"] = str(e)

    # -- choose -------------------------------------------------------------------------------
    pool = [c for c in ([sol_cand] if sol_cand is not None else []) + cands if c.feasible]
    if pool:
        final = min(pool, key=score)
        if sol_cand is not None and sol_cand.feasible and score(sol_cand) <= score(final):
            final = sol_cand
    else:
        final = min(cands, key=lambda c: float(np.max(c.peak / budget_arr)))
    if not final.feasible:
        status = INFEASIBLE if solver_status == INFEASIBLE else FALLBACK
    elif proven and (final is sol_cand or sol_cand is None or score(final) <= score(sol_cand)):
        status = OPTIMAL
    elif final is sol_cand and best_heur is not None and score(sol_cand) < score(best_heur):
        status = FEASIBLE
    elif final is sol_cand and best_heur is None:
        status = FEASIBLE
    else:
        status = FALLBACK if not nothing_to_do else HEURISTIC

    # -- bounds and report ----------------------------------------------------------------------
    ms_lb = lb.makespan.copy()
    if solver_bound_ms is not None:
        ms_lb = np.maximum(ms_lb, solver_bound_ms)
    ex_lb = lb.exposed_comm.copy()
    pure = bool(prob.P == 0 or (np.all(is_coll) and np.all(prob.dones >= 0)))
    if pure:
        ex_lb = np.maximum(ex_lb, ms_lb - lb.compute)
    ms_lb = np.minimum(ms_lb, final.makespan)
    ex_lb = np.clip(ex_lb, 0.0, final.exposed)
    if objective == "makespan" and final.feasible and np.all(final.makespan <= ms_lb * (1 + 1e-9)):
        status = OPTIMAL
    tl_hint = best_heur.timeline if best_heur is not None else None
    info: dict[str, Any] = {
        "objective": objective,
        "scenario_objective": scenario_objective,
        "unit": prob.costs.unit,
        "comm_streams": comm_streams,
        "budget": {k: int(v) for k, v in zip(names, budget_arr)},
        "budget_source": budget_source,
        "makespan": {k: float(v) for k, v in zip(names, final.makespan)},
        "exposed_comm": {k: float(v) for k, v in zip(names, final.exposed)},
        "compute_time": {k: float(v) for k, v in zip(names, lb.compute)},
        "makespan_lower_bound": {k: float(v) for k, v in zip(names, ms_lb)},
        "exposed_comm_lower_bound": {k: float(v) for k, v in zip(names, ex_lb)},
        "exposed_gap": {
            k: (float((e - b) / e) if e > 0 else 0.0)
            for k, e, b in zip(names, final.exposed, ex_lb)
        },
        "lower_bound_kind": dict(zip(names, lb.which)),
        "distance": int(final.distance),
        "chosen": final.name,
        "hint": ({"method": best_heur.name, **best_heur.row(names)} if best_heur else None),
        "candidates": [c.row(names) for c in cands],
        "solver_status": solver_status,
        "model": model_info,
        "overlap_limit": dict(limits),
        "errors": errors,
        "pairs": _pair_table(final.timeline, tl_hint, names),
    }
    if runtime.interrupted():
        info["interrupted"] = True
    if not final.feasible:
        info["message"] = "no order within the budget was found; returned the lowest-peak one"
    elif final is not sol_cand and sol_cand is not None:
        info["message"] = f"the solver did not beat {final.name}; returned it"
    return make_schedule(
        graph,
        final.order,
        METHOD,
        scenarios,
        status=status,
        seconds=time.perf_counter() - t0,
        claimed_peak=final.peak,
        info=info,
    )


def _pair_table(tl_after, tl_before, names: Sequence[str]) -> list[dict]:
    rows = []
    before = {}
    if tl_before is not None:
        for k in range(tl_before.pair_start.size):
            before[int(tl_before.pair_start[k])] = k
    g = tl_after.graph

    def dist(tl, k):
        di = int(tl.pair_done_index[k])
        return di - int(tl.pair_start_index[k]) if di >= 0 else 0

    for k in range(tl_after.pair_start.size):
        a = int(tl_after.pair_start[k])
        d = int(tl_after.pair_done[k])
        row = {
            "start": g.op_names[a],
            "done": g.op_names[d] if d >= 0 else None,
            "class": tl_after.pair_class[k],
            "sync": bool(tl_after.pair_sync[k]),
            "start_index": int(tl_after.pair_start_index[k]),
            "done_index": int(tl_after.pair_done_index[k]),
            "distance": dist(tl_after, k),
            "transfer_time": {n: float(v) for n, v in zip(names, tl_after.transfer_time[:, k])},
            "overlapped_after": {n: float(v) for n, v in zip(names, tl_after.overlapped[:, k])},
            "exposed_after": {n: float(v) for n, v in zip(names, tl_after.wait[:, k])},
        }
        kb = before.get(a)
        if kb is not None:
            row["start_index_before"] = int(tl_before.pair_start_index[kb])
            row["done_index_before"] = int(tl_before.pair_done_index[kb])
            row["distance_before"] = dist(tl_before, kb)
            row["overlapped_before"] = {
                n: float(v) for n, v in zip(names, tl_before.overlapped[:, kb])
            }
        rows.append(row)
    return rows


def _solve_makespan(
    prob,
    hint_cand,
    hint_ok,
    budget,
    limits,
    scenario_objective,
    scenario_mode,
    resolution,
    secondary,
    time_limit,
    cfg,
    progress,
    ref,
    score_fn=None,
    lns=True,
):
    clock = Clock(time_limit, cfg.deterministic)
    if not cfg.deterministic and clock.left() < 2 * BUILD_SECONDS_PER_OP * prob.n:
        # no time to build the model and search it: the heuristics' order stands
        return None, "SKIPPED: no time to build the model", {}, None, False
    mode = pick_mode(prob, scenario_mode)
    d, t, tick, over = copy_durations(prob, mode, scenario_objective, ref, resolution)
    C = d.shape[0]
    d_lns = d
    lit_mode = C > 1 or free_pairs(prob) <= ORDER_LITERAL_PAIRS
    if lit_mode:
        d = floor1(d)
        over = over + (d - d_lns).sum(axis=1) * tick
    tl_h = prob.tick_timeline(hint_cand.order, d, t)
    hint_ms = np.atleast_1d(np.rint(tl_h.makespan)).astype(np.int64)
    serial = d.sum(axis=1) + t.sum(axis=1)
    horizon = hint_ms if hint_ok else serial
    fifo = fifo_pairs(prob) <= MAX_FIFO_PAIRS
    model = build(
        prob,
        d,
        t,
        horizon,
        budget=budget,
        limits=limits,
        transfers_on=True,
        fifo_order=fifo,
        peak_vars=secondary == "peak",
        inflight_var=secondary == "inflight",
        order_literals_all=lit_mode and C == 1,
    )
    m = model.m
    # the analytic bound on the tick durations is valid in the model: give it to the solver
    is_coll = np.array([c.startswith("collective:") for c in prob.classes], dtype=bool)
    lb_t = overlap_lower_bound(
        prob.graph,
        d.astype(np.float64),
        prob.starts,
        prob.dones,
        t.astype(np.float64),
        prob.stream,
        np.zeros(C),
        is_coll,
        prob.anc,
    ).makespan
    info_lb = [int(math.ceil(x - 1e-6)) for x in lb_t]
    for c in range(C):
        if info_lb[c] > int(horizon[c]):
            raise Infeasible("horizon below the lower bound")
        m.add(model.M[c] >= info_lb[c])
    obj, coef, z = O.makespan(model, prob, scenario_objective, tick, ref, horizon)
    m.minimize(obj)
    model.hint(hint_cand.order, tl_h)
    info = {
        "mode": mode,
        "tick": [float(x) for x in tick],
        "fifo": fifo,
        "rounding_slack": [float(x) for x in over],
        **model.stats,
        "hint_makespan_ticks": [int(x) for x in hint_ms],
        "bound_ticks": info_lb,
    }
    use_lns = lns and hint_ok and score_fn is not None
    share = 0.35 if use_lns else 1.0
    t_main = time_limit * share * (0.8 if secondary else 1.0)
    t1 = time.perf_counter()
    run = _solve(m, cfg, t_main, progress)
    clock.spend(t_main)
    solver = run.solver
    info["solve_seconds"] = round(time.perf_counter() - t1, 3)
    name = run.status
    if not run.solved:
        if run.status == runtime.INFEASIBLE:
            raise Infeasible("the model is infeasible under the budget")
        if not use_lns:
            return None, name, info, None, False
        order = list(hint_cand.order)
    else:
        order = model.order_from(solver)
        info["claimed_makespan"] = [float(solver.value(model.M[c]) * tick[c]) for c in range(C)]
        info["objective_value"] = float(solver.objective_value)
        info["objective_bound"] = float(solver.best_objective_bound)
    # optimal in the tick model: optimal for the timeline up to info.model.rounding_slack
    proven = run.optimal and mode in ("single", "exact") and fifo
    bound_ms = None
    if mode == "single" and fifo and run.solved:
        bound_ms = np.array([max(0.0, solver.best_objective_bound * tick[0] - over[0])])
    if use_lns and not proven:
        if score_fn(order) > score_fn(hint_cand.order):
            order = list(hint_cand.order)
        remaining = clock.left() - (0.2 * time_limit if secondary else 0.0)
        order, lns_info = _lns(
            prob,
            order,
            d_lns,
            t,
            budget,
            limits,
            fifo,
            scenario_objective,
            tick,
            ref,
            score_fn,
            remaining,
            cfg,
        )
        info["lns"] = lns_info
    if secondary:
        tl_s = prob.tick_timeline(order, d, t)
        ms_s = np.atleast_1d(np.rint(tl_s.makespan)).astype(np.int64)
        m.add(obj <= O.tick_objective(ms_s, coef, z is not None))
        O.secondary(model, secondary)
        model.hint(order, tl_s)
        clock.spend(remaining if use_lns and not proven else 0.0)
        rest = clock.left()
        run2 = _solve(m, cfg, max(0.1, rest))
        info["secondary_status"] = run2.status
        if run2.solved:
            order = model.order_from(run2.solver)
    return order, name, info, bound_ms, proven


def _lns(
    prob,
    order,
    d,
    t,
    budget,
    limits,
    fifo,
    scenario_objective,
    tick,
    ref,
    score_fn,
    time_limit,
    cfg,
):
    """Window LNS: re-optimise ``k`` consecutive positions with the rest of the order fixed;
    windows sit around the dones that stall the compute stream (or at random)."""
    t0 = time.perf_counter()
    clock = Clock(time_limit, cfg.deterministic, t0)
    rng = np.random.default_rng(cfg.seed)
    n = prob.n
    cur = list(order)
    cur_score = score_fn(cur)
    k = min(n, 40)
    steps = improved = 0
    w = prob.scenarios.weights
    overhead = 0.0  # a step's work besides its search (timelines, building: O(n) each)
    while True:
        left = clock.left() - (0.0 if cfg.deterministic else overhead)
        if left < 0.3 or n < 3:
            break
        t_step = time.perf_counter()
        pos = np.empty(n, dtype=np.int64)
        pos[np.asarray(cur)] = np.arange(n)
        tl = prob.timeline(cur)
        waits = (
            w @ np.asarray(tl.wait)
            if len(w) == np.asarray(tl.wait).shape[0]
            else np.asarray(tl.wait).mean(axis=0)
        )
        rows = np.flatnonzero((waits > 0) & (np.asarray(tl.pair_done) >= 0))
        if rows.size and rng.random() < 0.8:
            r = int(rng.choice(rows, p=waits[rows] / waits[rows].sum()))
            i_d = int(pos[int(tl.pair_done[r])])
            i_s = int(pos[int(tl.pair_start[r])])
            if rng.random() < 0.6:
                a = i_d - int(0.7 * k)
            else:
                a = i_s - k // 3
        else:
            a = int(rng.integers(0, max(1, n - k + 1)))
        a = int(min(max(a, 0), max(0, n - k)))
        b = min(n, a + k)
        dw = floor1(d, cur[a:b])
        tl_t = prob.tick_timeline(cur, dw, t)
        hms = np.atleast_1d(np.rint(tl_t.makespan)).astype(np.int64)
        step_limit = min(left, max(0.5, min(3.0, time_limit / 8)))
        try:
            mdl = build(
                prob,
                dw,
                t,
                hms,
                budget=budget,
                limits=limits,
                transfers_on=True,
                fifo_order=fifo,
                window=(cur, a, b),
                prefix_times=tl_t,
            )
        except Infeasible:
            steps += 1
            clock.spend(step_limit)
            continue
        obj, _, _ = O.makespan(mdl, prob, scenario_objective, tick, ref, hms)
        mdl.m.minimize(obj)
        mdl.hint(cur, tl_t)
        ts = time.perf_counter()
        run = _solve(mdl.m, cfg.with_(seed=cfg.seed + steps), step_limit)
        clock.spend(step_limit)
        took = time.perf_counter() - ts
        overhead = max(overhead, time.perf_counter() - t_step - took)
        if cfg.deterministic:
            took = run.stats["deterministic_time"] / runtime.DET_PER_SECOND
        steps += 1
        if run.solved:
            cand = mdl.order_from(run.solver)
            sc = score_fn(cand)
            if sc < cur_score - 1e-15:
                cur, cur_score = cand, sc
                improved += 1
        # adapt the window: grow while windows are solved to optimality quickly
        if run.optimal and took < 0.3 * step_limit:
            k = min(n, int(k * 1.25) + 1)
        elif not run.optimal:
            k = max(10, int(k * 0.8))
    return cur, {
        "steps": steps,
        "improved": improved,
        "window": k,
        "seconds": round(time.perf_counter() - t0, 2),
    }


def _solve_distance(prob, hint_cand, hint_ok, budget, limits, time_limit, cfg, progress):
    n = prob.n
    d = np.ones((1, n), dtype=np.int64)
    t = np.zeros((1, prob.P), dtype=np.int64)
    model = build(
        prob,
        d,
        t,
        np.array([n]),
        budget=budget,
        limits=limits,
        transfers_on=False,
        fifo_order=False,
    )
    O.distance(model)
    model.hint(hint_cand.order, prob.tick_timeline(hint_cand.order, d, t))
    run = _solve(model.m, cfg, time_limit, progress)
    info = {"mode": "positions", **model.stats}
    if not run.solved:
        if run.status == runtime.INFEASIBLE:
            raise Infeasible("the model is infeasible under the budget")
        return None, run.status, info, None, False
    info["objective_value"] = float(run.objective)
    info["objective_bound"] = float(run.bound)
    return model.order_from(run.solver), run.status, info, None, run.optimal


# -------------------------------------------------------------------------------------------
# Registration
# -------------------------------------------------------------------------------------------


def applies(graph: Graph) -> bool:
    return bool(graph.collectives) or bool((graph.kinds == K_START).any())


@register(
    METHOD,
    "CP-SAT: hide communication behind compute (min makespan) under a memory budget",
    "overlap",
    applies=applies,
)
def cp_overlap(graph: Graph, scenarios: Scenarios | None = None, **options: Any) -> Schedule:
    if "order" in options and options.get("hint") is None:
        options["hint"] = options.pop("order")
    return solve_overlap(graph, scenarios, **options)


__all__ = [
    "solve_overlap",
    "build_problem",
    "evaluate",
    "total_distance",
    "OverlapProblem",
    "Candidate",
    "cp_overlap",
    "applies",
    "METHOD",
]
