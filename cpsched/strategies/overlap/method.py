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
from cpsched.cp.overlap.bounds import overlap_lower_bound
from cpsched.cp.overlap.problem import (
    K_START,
    RESOLUTION,
    Candidate,
    Infeasible,
    OverlapProblem,
    build_problem,
    collective_pairs,
    evaluate,
    inflight_ok,
    overlap_limits,
    resolve_budget,
    total_distance,
)
from cpsched.cp.overlap.solve import (
    MakespanModel,
    bound_objective,
    distance_model,
    makespan_model,
    solve,
    window_model,
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
# A hint step (a repair or a hoisting move) re-simulates the order a few times: about this
# long per op (a second at 100k ops). In deterministic mode the repair and hoisting phases
# get as many steps as their shares of the time limit buy at that rate, whatever the load.
HINT_STEP_SECONDS_PER_OP = 1e-5
# Building the whole model takes about this long per op (a 10,000-op transformer step: 1.8 s
# on a loaded 2-core machine); with less than twice that left it is not built
BUILD_SECONDS_PER_OP = 2e-4


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
    cfg = SolverConfig(
        DEFAULT_TIME_LIMIT if time_limit is None else float(time_limit),
        2 if workers is None else int(workers),
        0 if seed is None else int(seed),
        bool(deterministic),
        bool(log),
        deadline=None if deterministic else deadline,
    )
    objective, scenario_objective = _check_options(objective, scenario_objective, secondary, slack)
    if convert_sync:
        graph = convert_sync_collectives(graph)
    prob = build_problem(
        graph, scenarios, device=device, profile=profile, costs=costs, comm_streams=comm_streams
    )
    run = _OverlapRun(graph, scenarios, prob, cfg, t0, objective, scenario_objective)
    run.limits = overlap_limits(prob, overlap_limit)
    hopts = {"device": device, "seed": cfg.seed, "comm_streams": comm_streams}
    if profile is not None:
        hopts["profile"] = profile
    run.budget_phase(budget, slack, budget_methods, hopts)
    run.candidate_phase(heuristics, hint, hopts)
    if objective == "makespan" and prob.P and hoist:
        run.hoist_phase()
    run.model_phase(scenario_mode, resolution, secondary, hoist, lns, progress)
    return run.result(comm_streams)


def _check_options(
    objective: str | None, scenario_objective: str, secondary: str | None, slack: float
) -> tuple[str, str]:
    """The objective and the scenario objective, checked (``'overlap'`` is ``'makespan'``;
    ``'weighted'`` or ``'minimax'`` as the objective is the scenario objective)."""
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
    return objective, scenario_objective


class _OverlapRun:
    """One cp-overlap call: the phases (budget, candidates, hoisting, model, choice) and
    what they hand each other. Each phase's share of the time is of ``span``, the time
    this call has: its limit, or less where the command's deadline is nearer (reading 100k
    ops can take half of a 10 s limit)."""

    def __init__(self, graph, scenarios, prob, cfg, t0, objective, scenario_objective):
        self.graph, self.scenarios, self.prob, self.cfg, self.t0 = (
            graph,
            scenarios,
            prob,
            cfg,
            t0,
        )
        self.objective, self.scenario_objective = objective, scenario_objective
        self.names = scenarios.names
        self.w = scenarios.weights
        self.limits: dict = {}
        self.errors: dict[str, str] = {}
        self.cands: list[Candidate] = []
        self.seen: set[tuple] = set()
        self.judged: dict[tuple, Candidate] = {}  # each order evaluated once, in its phase
        # set by the model phase
        self.model_info: dict[str, Any] = {"objective": objective}
        self.solver_status = "NOT_RUN"
        self.sol_cand: Candidate | None = None
        self.solver_bound_ms: np.ndarray | None = None
        self.proven = False
        self.nothing_to_do = False

    def _deadline(self, share: float) -> float | None:
        """The wall-clock instant ending a phase that may run to ``share`` of the span;
        ``None`` in deterministic mode (a phase's length must not depend on the load)."""
        if self.cfg.deterministic:
            return None
        return min(self.t0 + share * self.span, self.cfg.deadline or math.inf)

    def _steps(self, share: float, calls: int) -> int | None:
        """Deterministic mode: the hint steps each of ``calls`` calls may take in a phase
        of ``share`` of the time limit (``None``: no cap, the wall clock ends the phase)."""
        if not self.cfg.deterministic:
            return None
        per_step = HINT_STEP_SECONDS_PER_OP * max(1, self.prob.n)
        return max(1, int(share * self.cfg.time_limit / per_step) // max(1, calls))

    def judge(self, label: str, order: list[int]) -> Candidate:
        key = tuple(order)
        if key not in self.judged:
            self.judged[key] = evaluate(self.prob, label, order, self.budget, self.limits)
        return self.judged[key]

    def score(self, c: Candidate) -> tuple:
        if self.objective == "distance":
            main = -float(c.distance)
        elif self.scenario_objective == "weighted":
            main = float(self.w @ c.makespan)
        else:
            main = float(np.max(c.makespan / self.ref))
        return (main, float(np.max(c.peak / np.maximum(self.budget, 1))))

    def budget_phase(self, budget: Any, slack: float, methods: Sequence[str], hopts: dict):
        """The memory schedulers' orders and the budget (given, or the best one's peak
        times ``1 + slack``)."""
        cfg, graph, scenarios = self.cfg, self.graph, self.scenarios
        self.span = max(0.0, min(cfg.time_limit, cfg.seconds_left()))
        t_mem = max(0.01, min(0.15 * self.span, 10.0))
        mem_opts = dict(
            hopts,
            time_limit=t_mem,
            workers=cfg.workers,
            deadline=cfg.deadline,
            deterministic=cfg.deterministic,
        )
        self.mem_orders = memory_candidates(graph, scenarios, list(methods), mem_opts, self.errors)
        lbm = np.maximum(mem_lb(graph, scenarios), 1)
        peaks = {k: mem_peak(graph, o, scenarios) for k, o in self.mem_orders.items()}
        self.best_mem = min(
            peaks, key=lambda k: (float(np.max(peaks[k] / lbm)), float(np.sum(peaks[k])))
        )
        budget_arr = resolve_budget(budget, scenarios)
        self.budget_source = "given"
        if budget_arr is None:
            budget_arr = np.floor(peaks[self.best_mem] * (1.0 + float(slack))).astype(np.int64)
            budget_arr = np.maximum(budget_arr, peaks[self.best_mem])
            self.budget_source = f"{self.best_mem} peak x (1 + {slack:g})"
        self.budget = budget_arr

    def candidate_phase(self, heuristics: Sequence[str], hint: Any, hopts: dict) -> None:
        """Every overlap heuristic's orders (a quarter of the span), the hint, the memory
        orders; the analytic lower bounds."""
        cand_orders: dict[str, list[int]] = dict(self.mem_orders)
        cand_orders.update(
            overlap_candidates(
                self.graph,
                self.scenarios,
                [h for h in heuristics if h != METHOD],
                {self.best_mem: self.mem_orders[self.best_mem]},
                self.budget,
                dict(hopts),
                self.errors,
                deadline=self._deadline(0.25),
                on_order=self.judge,
            )
        )
        if hint is not None:
            hint_order = check_order_option(self.graph, hint)
            assert hint_order is not None  # given an order, it returns one
            cand_orders["hint"] = hint_order
        prob = self.prob
        self.is_coll = np.array([c.startswith("collective:") for c in prob.classes], dtype=bool)
        self.lb = overlap_lower_bound(
            self.graph,
            prob.dur,
            prob.starts,
            prob.dones,
            prob.ttime,
            prob.stream,
            prob.sync,
            self.is_coll,
            prob.anc,
        )
        self.ref = np.maximum(self.lb.makespan, 1e-30)
        for k, o in cand_orders.items():
            if self._new(o):
                c = self.judge(k, o)  # the memory orders and the hint: evaluated now
                self.cands.append(c if c.name == k else replace(c, name=k))

    def _new(self, order: list[int]) -> bool:
        key = tuple(order)
        if key in self.seen:
            return False
        self.seen.add(key)
        return True

    def makespan_of(self, o: list[int]) -> float:
        ms = np.asarray(self.prob.timeline(o).makespan, dtype=np.float64)
        if self.scenario_objective == "weighted":
            return float(self.w @ ms)
        return float(np.max(ms / self.ref))

    def hoist_phase(self) -> None:
        """Budget-aware repair of the best few orders over the budget, then hoisting of
        the best few within it (and of the memory order)."""
        prob, budget, limits = self.prob, self.budget, self.limits
        infeasible = (c for c in self.cands if not c.feasible and c.inflight_ok)
        to_repair = sorted(infeasible, key=self.score)[:4]
        repair_steps = self._steps(0.05, len(to_repair))
        for c in to_repair:
            repaired = budget_repair(
                self.graph,
                self.scenarios,
                c.order,
                budget,
                prob.starts,
                prob.dones,
                self.makespan_of,
                max_steps=200 if repair_steps is None else min(200, repair_steps),
                deadline=self._deadline(0.3),
            )
            if repaired is not None and self._new(repaired):
                self.cands.append(evaluate(prob, f"repair({c.name})", repaired, budget, limits))
        pool = sorted((c for c in self.cands if c.feasible), key=self.score)[:3]
        mem_c = next((c for c in self.cands if c.name == self.best_mem and c.feasible), None)
        if mem_c is not None and mem_c not in pool:
            pool.append(mem_c)
        hoist_steps = self._steps(0.1, len(pool))
        for c in pool:
            o = budget_hoist(
                self.graph,
                self.scenarios,
                c.order,
                budget,
                prob.starts,
                prob.dones,
                self.makespan_of,
                (lambda o: inflight_ok(prob, o, limits)) if limits else None,
                deadline=self._deadline(0.4),
                max_steps=hoist_steps,
            )
            if self._new(o):
                self.cands.append(evaluate(prob, f"hoist({c.name})", o, budget, limits))

    def lns_score(self, o: list[int]) -> float:
        c = evaluate(self.prob, "lns", o, self.budget, self.limits)
        return self.score(c)[0] if c.feasible else math.inf

    def model_phase(self, scenario_mode, resolution, secondary, hoist, lns, progress) -> None:
        """The CP-SAT model on the rest of the time, hinted with the best candidate."""
        prob, cfg = self.prob, self.cfg
        feasible = [c for c in self.cands if c.feasible]
        self.best_heur = min(feasible, key=self.score) if feasible else None
        hint_cand = self.best_heur or min(
            self.cands, key=lambda c: float(np.max(c.peak / self.budget))
        )
        clock = Clock.of(cfg, cfg.time_limit, self.t0)
        if cfg.deterministic and self.objective == "makespan" and prob.P and hoist:
            clock.spend(0.4 * cfg.time_limit)  # the hoisting phase's nominal share
        remaining = max(0.1, clock.left())
        self.nothing_to_do = prob.P == 0 or (
            self.objective == "distance" and collective_pairs(prob).size == 0
        )
        if self.nothing_to_do:
            self.model_info["note"] = (
                "no async transfer: every order has the same makespan"
                if prob.P == 0
                else "no async collective pair: distance is 0"
            )
            self.proven = self.best_heur is not None
            return
        hint_ok = self.best_heur is not None
        try:
            if self.objective == "makespan":
                out = _solve_makespan(
                    self, hint_cand, hint_ok, scenario_mode, resolution, secondary, remaining,
                    progress, lns,
                )  # fmt: skip
            else:
                out = _solve_distance(self, hint_cand, remaining, progress)
            order, self.solver_status, info, self.solver_bound_ms, self.proven = out
            self.model_info.update(info)
            if order is not None:
                self.sol_cand = evaluate(prob, METHOD, order, self.budget, self.limits)
        except Infeasible as e:
            self.solver_status = INFEASIBLE
            self.model_info["note"] = str(e)

    def choose(self) -> tuple[Candidate, str]:
        """The best order within the budget (the solver's at a tie), and its status."""
        sol, score, best_heur = self.sol_cand, self.score, self.best_heur
        pool = [c for c in ([sol] if sol is not None else []) + self.cands if c.feasible]
        if pool:
            final = min(pool, key=score)
            if sol is not None and sol.feasible and score(sol) <= score(final):
                final = sol
        else:
            final = min(self.cands, key=lambda c: float(np.max(c.peak / self.budget)))
        if not final.feasible:
            status = INFEASIBLE if self.solver_status == INFEASIBLE else FALLBACK
        elif self.proven and (final is sol or sol is None or score(final) <= score(sol)):
            status = OPTIMAL
        elif final is sol and best_heur is not None and score(sol) < score(best_heur):
            status = FEASIBLE
        elif final is sol and best_heur is None:
            status = FEASIBLE
        else:
            status = FALLBACK if not self.nothing_to_do else HEURISTIC
        return final, status

    def result(self, comm_streams: str) -> Schedule:
        final, status = self.choose()
        prob, lb = self.prob, self.lb
        ms_lb = lb.makespan.copy()
        if self.solver_bound_ms is not None:
            ms_lb = np.maximum(ms_lb, self.solver_bound_ms)
        ex_lb = lb.exposed_comm.copy()
        if prob.P == 0 or (np.all(self.is_coll) and np.all(prob.dones >= 0)):
            ex_lb = np.maximum(ex_lb, ms_lb - lb.compute)
        ms_lb = np.minimum(ms_lb, final.makespan)
        ex_lb = np.clip(ex_lb, 0.0, final.exposed)
        if (
            self.objective == "makespan"
            and final.feasible
            and np.all(final.makespan <= ms_lb * (1 + 1e-9))
        ):
            status = OPTIMAL
        info = self._info(final, ms_lb, ex_lb, comm_streams)
        return make_schedule(
            self.graph,
            final.order,
            METHOD,
            self.scenarios,
            status=status,
            seconds=time.perf_counter() - self.t0,
            claimed_peak=final.peak,
            info=info,
        )

    def _info(self, final: Candidate, ms_lb, ex_lb, comm_streams: str) -> dict[str, Any]:
        names, lb, best_heur = self.names, self.lb, self.best_heur

        def per(values, kind=float) -> dict:
            return {k: kind(v) for k, v in zip(names, values)}

        tl_hint = best_heur.timeline if best_heur is not None else None
        info: dict[str, Any] = {
            "objective": self.objective,
            "scenario_objective": self.scenario_objective,
            "unit": self.prob.costs.unit,
            "comm_streams": comm_streams,
            "budget": per(self.budget, int),
            "budget_source": self.budget_source,
            "makespan": per(final.makespan),
            "exposed_comm": per(final.exposed),
            "compute_time": per(lb.compute),
            "makespan_lower_bound": per(ms_lb),
            "exposed_comm_lower_bound": per(ex_lb),
            "exposed_gap": {
                k: (float((e - b) / e) if e > 0 else 0.0)
                for k, e, b in zip(names, final.exposed, ex_lb)
            },
            "lower_bound_kind": dict(zip(names, lb.which)),
            "distance": int(final.distance),
            "chosen": final.name,
            "hint": ({"method": best_heur.name, **best_heur.row(names)} if best_heur else None),
            "candidates": [c.row(names) for c in self.cands],
            "solver_status": self.solver_status,
            "model": self.model_info,
            "overlap_limit": dict(self.limits),
            "errors": self.errors,
            "pairs": _pair_table(final.timeline, tl_hint, names),
        }
        if runtime.interrupted():
            info["interrupted"] = True
        if not final.feasible:
            info["message"] = "no order within the budget was found; returned the lowest-peak one"
        elif final is not self.sol_cand and self.sol_cand is not None:
            info["message"] = f"the solver did not beat {final.name}; returned it"
        return info


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
    run: _OverlapRun,
    hint_cand: Candidate,
    hint_ok: bool,
    scenario_mode: str,
    resolution: int,
    secondary: str | None,
    time_limit: float,
    progress: Callable | None,
    lns: bool = True,
):
    """The whole model for about a third of ``time_limit`` (all of it without LNS), then
    the window LNS, then the ``secondary`` objective at the makespan found. Returns
    ``(order, status, info, makespan bound, proven)``."""
    prob, cfg = run.prob, run.cfg
    clock = Clock(time_limit, cfg.deterministic)
    if not cfg.deterministic and clock.left() < 2 * BUILD_SECONDS_PER_OP * prob.n:
        # no time to build the model and search it: the heuristics' order stands
        return None, "SKIPPED: no time to build the model", {}, None, False
    mm = makespan_model(
        prob,
        hint_cand.order,
        hint_ok,
        run.budget,
        run.limits,
        run.scenario_objective,
        scenario_mode,
        resolution,
        secondary,
        run.ref,
    )
    info = mm.info
    use_lns = lns and hint_ok
    t_main = time_limit * (0.35 if use_lns else 1.0) * (0.8 if secondary else 1.0)
    t1 = time.perf_counter()
    result, order = solve(mm.vars, cfg, t_main, progress)
    clock.spend(t_main)
    info["solve_seconds"] = round(time.perf_counter() - t1, 3)
    if order is None:
        if result.status == runtime.INFEASIBLE:
            raise Infeasible("the model is infeasible under the budget")
        if not use_lns:
            return None, result.status, info, None, False
        order = list(hint_cand.order)
    else:
        info.update(mm.answer(result))
    # optimal in the tick model: optimal for the timeline up to info.model.rounding_slack
    proven = result.optimal and mm.mode in ("single", "exact") and mm.fifo
    bound_ms = mm.makespan_bound(result)
    if use_lns and not proven:
        if run.lns_score(order) > run.lns_score(hint_cand.order):
            order = list(hint_cand.order)
        remaining = clock.left() - (0.2 * time_limit if secondary else 0.0)
        order, info["lns"] = _lns(run, mm, order, remaining)
    if secondary:
        bound_objective(mm, order, secondary)
        clock.spend(remaining if use_lns and not proven else 0.0)
        second, better = solve(mm.vars, cfg, max(0.1, clock.left()))
        info["secondary_status"] = second.status
        if better is not None:
            order = better
    return order, result.status, info, bound_ms, proven


def _lns_window(run: _OverlapRun, cur: list[int], k: int, rng) -> tuple[int, int]:
    """The window ``[a, b)`` of ``k`` positions for the next LNS step: around a done that
    stalls the compute stream (chosen by its wait), or at random."""
    n = run.prob.n
    w = run.prob.scenarios.weights
    pos = np.empty(n, dtype=np.int64)
    pos[np.asarray(cur)] = np.arange(n)
    tl = run.prob.timeline(cur)
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
    return a, min(n, a + k)


def _lns(run: _OverlapRun, mm: MakespanModel, order: list[int], time_limit: float):
    """Window LNS: re-optimise ``k`` consecutive positions with the rest of the order fixed;
    windows sit around the dones that stall the compute stream (or at random)."""
    cfg, prob = run.cfg, run.prob
    t0 = time.perf_counter()
    clock = Clock(time_limit, cfg.deterministic, t0)
    rng = np.random.default_rng(cfg.seed)
    n = prob.n
    cur = list(order)
    cur_score = run.lns_score(cur)
    k = min(n, 40)
    steps = improved = 0
    overhead = 0.0  # a step's work besides its search (timelines, building: O(n) each)
    while True:
        left = clock.left() - (0.0 if cfg.deterministic else overhead)
        if left < 0.3 or n < 3:
            break
        t_step = time.perf_counter()
        a, b = _lns_window(run, cur, k, rng)
        step_limit = min(left, max(0.5, min(3.0, time_limit / 8)))
        mdl = window_model(
            prob,
            cur,
            a,
            b,
            mm.d_lns,
            mm.t,
            run.budget,
            run.limits,
            mm.fifo,
            run.scenario_objective,
            mm.tick,
            run.ref,
        )
        if mdl is None:
            steps += 1
            clock.spend(step_limit)
            continue
        ts = time.perf_counter()
        result, cand = solve(mdl, cfg.with_(seed=cfg.seed + steps), step_limit)
        clock.spend(step_limit)
        took = time.perf_counter() - ts
        overhead = max(overhead, time.perf_counter() - t_step - took)
        if cfg.deterministic:
            took = result.stats["deterministic_time"] / runtime.DET_PER_SECOND
        steps += 1
        if cand is not None:
            sc = run.lns_score(cand)
            if sc < cur_score - 1e-15:
                cur, cur_score = cand, sc
                improved += 1
        # adapt the window: grow while windows are solved to optimality quickly
        if result.optimal and took < 0.3 * step_limit:
            k = min(n, int(k * 1.25) + 1)
        elif not result.optimal:
            k = max(10, int(k * 0.8))
    return cur, {
        "steps": steps,
        "improved": improved,
        "window": k,
        "seconds": round(time.perf_counter() - t0, 2),
    }


def _solve_distance(
    run: _OverlapRun, hint_cand: Candidate, time_limit: float, progress: Callable | None
):
    model = distance_model(run.prob, hint_cand.order, run.budget, run.limits)
    result, order = solve(model, run.cfg, time_limit, progress)
    info = {"mode": "positions", **model.stats}
    if order is None:
        if result.status == runtime.INFEASIBLE:
            raise Infeasible("the model is infeasible under the budget")
        return None, result.status, info, None, False
    assert result.objective is not None and result.bound is not None  # solved
    info["objective_value"] = float(result.objective)
    info["objective_bound"] = float(result.bound)
    return order, result.status, info, None, result.optimal


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
