"""CP-SAT pipeline schedules: minimum makespan under per-device activation caps, with a
proven bound.

``solve(problem, time_limit=10, workers=2)``:

1. every applicable baseline (``cpsched.pipeline.baselines``), cpsched's memory-aware
   greedy list schedule and the same greedy ranked by critical path (each action's tail
   raised by the load it leaves to other devices, ``bounds.load_tails``; ``critical_path_greedy``, with seeded randomised restarts while no schedule meets the
   bound: at most 64, in up to 40 % of the time limit, or all of it past 2000 actions) are built and replayed; the fastest one within the caps,
   microbatch-relabelled (``fifo_relabel``), is the hint and the floor of the result (the
   returned schedule is never slower); when it meets the lower bound the solver is skipped;
2. the larger of ``cpsched.pipeline.schedule.lower_bound`` and the per-device bound with
   fill and drain over the same tails (``bounds.device_bound``) bounds the makespan variable from below; the horizon is the hint's makespan (or the one-microbatch-at-a-time
   schedule's, which fits any cap that one microbatch fits);
3. the model (``variables``, ``constraints``, ``objectives``) is solved by CP-SAT directly
   (a small local runner: fixed seed, ``workers`` threads); ``time_limit`` is the wall time
   of the whole call, so the solver gets what the steps before it left;
4. the solver's order is replayed by the independent validator (times claimed by the solver
   are checked, the replay's makespan is reported).

Statuses: ``OPTIMAL`` (makespan equals the proven bound), ``FEASIBLE`` (gap in ``info``),
``HEURISTIC_FALLBACK`` (the solver found nothing better than the best baseline, which is
returned).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any

from cpsched.core.errors import InputError, ScheduleError
from cpsched.cp import runtime
from cpsched.pipeline import baselines
from cpsched.pipeline.model.bounds import device_bound, heads_and_tails, load_tails
from cpsched.pipeline.model.problem import CpData, make_data
from cpsched.pipeline.model.solve import ModelRun, solve_model
from cpsched.pipeline.problem import PipelineProblem
from cpsched.pipeline.schedule import Action, PipelineSchedule, fifo_relabel, lower_bound, replay


def serial_makespan(problem: PipelineProblem) -> float:
    """One microbatch at a time through the whole pipeline: fits any cap one microbatch fits."""
    s = replay(problem, serial_actions(problem), check_memory=False)
    return s.makespan


def serial_actions(problem: PipelineProblem) -> list[list[Action]]:
    out: list[list[Action]] = [[] for _ in range(problem.p)]
    S = problem.n_stages
    for j in range(problem.m):
        for s in range(S):
            out[problem.device(s)].append(Action("F", s, j))
        for s in reversed(range(S)):
            out[problem.device(s)].append(Action("B", s, j))
            if problem.split_backward:
                out[problem.device(s)].append(Action("W", s, j))
    return out


def best_baseline(
    problem: PipelineProblem, deadline: float | None = None
) -> tuple[PipelineSchedule | None, dict]:
    """The fastest baseline within the caps, and every baseline's summary (or why not).
    With ``deadline`` (``time.perf_counter()``), once one fits no baseline starts that
    would end past it by the longest build so far (each replays every action: seconds at
    100k actions)."""
    results: dict[str, dict] = {}
    best: PipelineSchedule | None = None
    slowest = 0.0
    for name in baselines.BASELINES + ("greedy",):
        started = time.perf_counter()
        if best is not None and deadline is not None and started + slowest > deadline:
            results[name] = {"method": name, "status": "SKIPPED", "message": "no time left"}
            continue
        try:  # built once: applicable() would build it a second time
            sch = baselines.build(problem, name)
        except InputError as e:
            results[name] = {"method": name, "status": "NOT_APPLICABLE", "message": str(e)}
            continue
        except ScheduleError as e:  # the greedy may deadlock with transfer delays
            results[name] = {"method": name, "status": "FAILED", "message": str(e)}
            continue
        results[name] = sch.summary()
        slowest = max(slowest, time.perf_counter() - started)
        assert sch.replay is not None  # summary() replays it
        if sch.replay.memory_ok and (best is None or sch.makespan < best.makespan):
            best = sch
    return best, results


# randomised restarts of the critical-path greedy: at most this many, and they stop at this
# share of the time limit (the solver gets the rest); ranks are scaled by 1 + eps * U(0, 1).
# Past LARGE actions CP-SAT did not improve a hint within 10 s in any grid cell (it often
# found no solution at all), so there the restarts may take the whole limit, and the
# solver runs only on the time they leave.
RESTARTS = 64
RESTART_SHARE = 0.4
LARGE = 2000
RESTART_NOISE = (0.05, 0.1, 0.2)
# model building time per action (measured: ~1e-4 s on a loaded 2-core machine; doubled),
# and the least solver time worth building the model for
BUILD_SECONDS_PER_ACTION = 2e-4
MIN_SOLVE = 0.5


def critical_path_greedy(
    problem: PipelineProblem,
    data: CpData,
    tail: dict[Action, int],
    *,
    target: float = 0.0,
    deadline: float | None = None,
    seed: int = 0,
) -> PipelineSchedule | None:
    """cpsched's greedy ranked by each action's tail (``baselines.greedy(rank=...)``), both
    admission rules; then, until ``deadline`` (``time.perf_counter()``) or ``RESTARTS``
    runs, with ranks perturbed at random (seeded: the same runs give the same result), which
    breaks the ties that the plain rank settles badly. The fastest schedule within the caps,
    or None when none fits; stops early at ``target`` (a lower bound)."""
    base_rank = {a: tail[a] + data.busy[a] for a in data.actions}
    rng = random.Random(seed)
    best: PipelineSchedule | None = None
    runs = 0
    slowest = 0.0  # the longest run so far: no run starts that would end past the deadline
    while True:
        started = time.perf_counter()
        if runs < 2:
            rank, admission = base_rank, ("safe", "chunk")[runs]
        else:
            eps = RESTART_NOISE[runs % len(RESTART_NOISE)]
            rank = {a: r * (1.0 + eps * rng.random()) for a, r in base_rank.items()}
            admission = rng.choice(("safe", "chunk"))
        runs += 1
        try:
            acts = baselines.greedy(problem, admission=admission, rank=rank)
            sch = PipelineSchedule(problem, "greedy-critical-path", acts)
            rep = sch.validate(check_memory=False)
        except ScheduleError:  # "chunk" admission may deadlock
            rep = None
        if rep is not None and rep.memory_ok:
            if best is None or rep.makespan < best.makespan - 1e-9:
                best = sch
                best.info["restarts"] = runs
        slowest = max(slowest, time.perf_counter() - started)
        if best is not None and best.makespan <= target + 1e-9 * max(1.0, target):
            break
        if runs >= 2 and (
            deadline is None or runs >= RESTARTS or time.perf_counter() + slowest >= deadline
        ):
            break
    return best


@dataclass
class _Start:
    """What the solve starts from: the bounds (real and model units), the best schedule
    within the caps so far (microbatch-relabelled, replayed) and every baseline's summary."""

    lb_real: float
    lb: int
    base: PipelineSchedule | None
    base_actions: list[list[Action]] | None
    base_rep: Any
    base_results: dict

    def met(self, makespan: float) -> bool:
        return makespan <= self.lb_real + 1e-9 * max(1.0, self.lb_real)


def solve(
    problem: PipelineProblem,
    time_limit: float = 10.0,
    workers: int = 2,
    seed: int = 0,
    log: bool = False,
    hint: bool = True,
    deadline: float | None = None,
) -> PipelineSchedule:
    """The fastest schedule of ``problem`` within its memory caps, in ``time_limit`` seconds
    of wall time for the whole call and never past ``deadline`` (``time.perf_counter()``)."""
    if not problem.concrete:
        raise InputError("the CP model needs concrete sizes: evaluate the problem per scenario")
    problem.check_memory_feasible()
    t0 = time.perf_counter()
    deadline = t0 + float(time_limit) if deadline is None else min(deadline, t0 + time_limit)
    time_limit = max(0.0, deadline - t0)
    base, base_results = best_baseline(problem, deadline)
    data: CpData = make_data(problem)
    # the limit is the wall time of the whole call: keep back what checking the answer takes
    # (a replay: ~0.1 s per 4000 actions), CP-SAT's own overrun of its limit (up to ~5 % on
    # a loaded machine) and the model's building
    reserve = 0.05 + 0.05 * float(time_limit) + len(data.actions) / 20000
    build_s = BUILD_SECONDS_PER_ACTION * len(data.actions)
    st = _start(problem, data, base, base_results, t0, deadline, time_limit, reserve, seed)
    if st.base_rep is not None and st.met(st.base_rep.makespan):
        return _meets_the_bound(problem, data, st, t0)
    horizon = (
        int(round(st.base_rep.makespan * data.scale))
        if st.base_rep is not None
        else int(round(serial_makespan(problem) * data.scale))
    )
    if not data.exact:
        horizon += len(data.actions)  # rounding slack
    model = ModelRun("NOT_RUN", None, st.lb)  # no time left to build and run the model
    if st.base is None or deadline - time.perf_counter() - reserve >= build_s + MIN_SOLVE:
        hint_starts = st.base_rep.start if hint and st.base_rep is not None else None
        cfg = runtime.SolverConfig(workers=max(1, int(workers)), seed=int(seed), log=bool(log))
        model = solve_model(problem, data, horizon, st.lb, hint_starts, deadline - reserve, cfg)
    info = {
        "seconds": round(time.perf_counter() - t0, 3),
        "scale": data.scale,
        "baselines": st.base_results,
        "hint": st.base.method if st.base is not None else None,
        "solver_status": model.status,
    }
    if model.status == "INFEASIBLE":
        raise InputError("no schedule fits the memory cap (proven by CP-SAT)")
    return _finish(problem, data, st, model, time_limit, info)


def _start(problem, data, base, base_results, t0, deadline, time_limit, reserve, seed) -> _Start:
    """The lower bounds, and the best of the baselines and the critical-path greedy (its
    restarts in ``RESTART_SHARE`` of the time, all of it past ``LARGE`` actions)."""
    sc = data.scale
    head, tail = heads_and_tails(data)
    # tails raised by the work each action leaves to other devices (the drain): a stronger
    # bound, and a better rank for the critical-path greedy
    tail = load_tails(data, tail)
    lb_real = lower_bound(problem)
    lb = int(-(-round(lb_real * sc, 6) // 1)) if data.exact else int(lb_real * sc)
    if data.exact:
        # the per-device bound with fill and drain (``bounds``) is in model units
        lb = max(lb, device_bound(data, head, tail))
        lb_real = max(lb_real, lb / sc)
    met = base is not None and base.makespan <= lb_real + 1e-9 * max(1.0, lb_real)
    build_s = BUILD_SECONDS_PER_ACTION * len(data.actions)
    if len(data.actions) > LARGE:
        restart_deadline = deadline - reserve  # the solver runs only if restarts end early
    else:
        restart_deadline = min(
            t0 + RESTART_SHARE * float(time_limit), deadline - reserve - build_s - MIN_SOLVE
        )
    ranked = critical_path_greedy(
        problem,
        data,
        tail,
        target=lb_real,
        deadline=None if met else restart_deadline,
        seed=seed,
    )
    if ranked is not None:
        base_results[ranked.method] = ranked.summary()
        if base is None or ranked.makespan < base.makespan - 1e-9:
            base = ranked
    if base is None:
        return _Start(lb_real, lb, None, None, None, base_results)
    base_actions = fifo_relabel(problem, base.actions)
    return _Start(lb_real, lb, base, base_actions, replay(problem, base_actions), base_results)


def _meets_the_bound(problem, data, st: _Start, t0: float) -> PipelineSchedule:
    """The best baseline already meets the lower bound: nothing to solve."""
    assert st.base is not None and st.base_actions is not None  # base_rep is base's replay
    result = PipelineSchedule(
        problem,
        "cp",
        st.base_actions,
        status="OPTIMAL",
        bound=st.lb_real,
        info={
            "message": f"{st.base.method}'s order (microbatch-relabelled) meets the lower bound",
            "seconds": round(time.perf_counter() - t0, 3),
            "scale": data.scale,
            "baselines": st.base_results,
            "hint": st.base.method,
            "solver_status": "NOT_RUN",
            "gap": 0.0,
        },
    )
    result.validate(check_memory=True)
    return result


def _finish(problem, data, st: _Start, model: ModelRun, time_limit, info) -> PipelineSchedule:
    """The model's schedule if faster than the best baseline, else that baseline; its
    status against the proven bound."""
    base = st.base
    bound = model.bound_units / data.scale if data.exact else st.lb_real
    result = None
    if model.schedule is not None and (
        st.base_rep is None or model.schedule.makespan < st.base_rep.makespan - 1e-9
    ):
        result = model.schedule
    if result is None:
        if base is None:
            raise InputError(
                f"CP-SAT found no schedule in {time_limit:g} s and no baseline fits "
                f"the memory cap; raise --time-limit or the cap"
            )
        assert st.base_actions is not None  # set with base
        result = PipelineSchedule(
            problem,
            "cp",
            st.base_actions,
            info={"message": f"no better schedule than {base.method} found in {time_limit:g} s"},
        )
        result.validate(check_memory=True)
        status_name = "HEURISTIC_FALLBACK"
    else:
        status_name = "FEASIBLE"
    mk = result.makespan
    bound = min(bound, mk)
    if mk - bound <= 1e-9 * max(1.0, mk):
        status_name = "OPTIMAL"
        if "message" in result.info:
            assert base is not None  # only the fallback to the baseline has a message
            result.info["message"] = f"{base.method}'s order (microbatch-relabelled) is optimal"
    result.status = status_name
    result.bound = bound
    result.info.update(info)
    result.info["gap"] = (mk - bound) / mk if mk > 0 else 0.0
    return result


__all__ = ["solve", "best_baseline", "serial_actions", "serial_makespan"]
