"""Set-up and wrap-up shared by every remat algorithm (the heuristics, the CP strategies and
the models' bounds): the budget, order, durations and sizes of a run; integer sub-positions
for clones; the replay-checked result of a set of clones; whether clones fit a budget; the
pruning of clones that later ones made unnecessary; and the registration wrapper that
takes the budget as an option."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from cpsched.analysis.schedule import HEURISTIC
from cpsched.core.errors import InputError
from cpsched.core.graph import Graph
from cpsched.core.scenarios import Scenarios, static
from cpsched.remat.events import COMPUTE, FREE, PREFETCH
from cpsched.remat.replay import _budget_array
from cpsched.remat.result import RematResult, finish_result
from cpsched.remat.skeleton import PlanError, Regen, Skeleton, materialize_tagged
from cpsched.remat.timing import op_durations

# status of a plan whose replay goes over the budget (never a success)
OVER_BUDGET = "OVER_BUDGET"


def setup(graph: Graph, scenarios: Scenarios | None, budget, order, durations):
    sc = scenarios if scenarios is not None and len(scenarios) else static()
    if budget is None:
        raise InputError("remat needs a memory budget (--budget BYTES)")
    bud = _budget_array(budget, len(sc))
    order = list(graph.default_order() if order is None else order)
    dur = op_durations(graph, sc) if durations is None else np.atleast_2d(durations)
    sizes = graph.sizes(sc) if graph.n_buffers else np.zeros((len(sc), 0), dtype=np.int64)
    trans = graph.transient_bytes(sc)
    return sc, bud, order, dur, sizes, trans


def normalize_regens(regens: Sequence[tuple[int, int, float]]) -> tuple[Regen, ...]:
    """Integer sub-positions (rank within the step) for regens given with float ones."""
    by_step: dict[int, list[tuple[float, int]]] = {}
    for v, t, sub in regens:
        by_step.setdefault(int(t), []).append((float(sub), int(v)))
    out = []
    for t in sorted(by_step):
        for k, (_, v) in enumerate(sorted(by_step[t])):
            out.append(Regen(v, t, k))
    return tuple(out)


def finish_plan(graph, sc, bud, order, regens, dur, method, t0, info, transfer=None, base=()):
    sk = Skeleton(tuple(order), tuple(base) + normalize_regens(regens))
    n_s = len(sc)
    all_ids = tuple(range(len(sk.candidates)))
    res = finish_result(
        graph,
        sc,
        bud,
        sk,
        [all_ids] * n_s,
        method,
        HEURISTIC,
        time.perf_counter() - t0,
        dur,
        transfer,
        info,
        check_budget=False,
    )
    if (res.peak > res.budget).any():
        res.status = OVER_BUDGET
    return res


def with_regens(
    graph: Graph,
    sc: Scenarios,
    bud: np.ndarray,
    order: Sequence[int],
    regens: Sequence[tuple[int, int, float]],
    dur: np.ndarray,
    method: str,
    t0: float,
    info: dict[str, Any],
) -> RematResult:
    """The replay-checked result of the clones ``regens`` (op, step, sub) on ``order``
    (status ``OVER_BUDGET`` where the replay goes over ``bud``)."""
    return finish_plan(graph, sc, bud, order, list(regens), dur, method, t0, info)


def usage_trace(graph: Graph, events, sizes: np.ndarray, trans: np.ndarray) -> np.ndarray:
    """``[S, E]`` usage at each event (after allocations, with the op's transient)."""
    n_s = sizes.shape[0]
    out = np.zeros((n_s, len(events)), dtype=np.int64)
    usage = sizes[:, graph.buffer_live_in].sum(axis=1).astype(np.int64)
    resident = graph.buffer_live_in.copy()
    computed = np.zeros(graph.n_ops, dtype=bool)
    for k, (code, x) in enumerate(events):
        if code == COMPUTE:
            for b in graph.defines(x):
                if graph.buffer_live_in[b] and not computed[x]:
                    continue
                if not resident[b]:
                    resident[b] = True
                    usage = usage + sizes[:, b]
            computed[x] = True
            out[:, k] = usage + trans[:, x]
        elif code == FREE:
            resident[x] = False
            usage = usage - sizes[:, x]
            out[:, k] = usage
        elif code == PREFETCH:
            resident[x] = True
            usage = usage + sizes[:, x]
            out[:, k] = usage
        else:
            out[:, k] = usage
    return out


def regens_fit(graph, bud, order, regens, sizes, trans, base: tuple = ()) -> bool:
    """Whether the clones ``regens`` on ``order`` (plus ``base`` candidates) replay under
    ``bud`` in every scenario."""
    sk = Skeleton(tuple(order), tuple(base) + normalize_regens(regens))
    try:
        events, _, _ = materialize_tagged(graph, sk)
    except PlanError:
        return False
    return not (usage_trace(graph, events, sizes, trans) > bud[:, None]).any()


def prune_clones(
    graph: Graph,
    bud: np.ndarray,
    order: Sequence[int],
    regens: list[tuple[int, int, float]],
    dur: np.ndarray,
    sizes: np.ndarray,
    trans: np.ndarray,
    time_limit: float = 30.0,
) -> list[tuple[int, int, float]]:
    """Drop clones, the most expensive first, while the plan still meets the budget.

    A greedy adds clones one over-budget step at a time; later clones often make earlier
    ones unnecessary (on RLG n1000 at 486,895 this removes 60-90 % of XLA's greedy clones)."""
    t0 = time.perf_counter()
    if not regens_fit(graph, bud, order, regens, sizes, trans):
        return list(regens)
    cost = dur.max(axis=0)
    keep = [True] * len(regens)
    step = 0.0  # each try replays the plan: none starts that would end past the limit
    for i in sorted(range(len(regens)), key=lambda i: (-float(cost[regens[i][0]]), i)):
        t_try = time.perf_counter()
        if t_try - t0 + step > time_limit:
            break
        keep[i] = False
        if not regens_fit(graph, bud, order, [c for c, k in zip(regens, keep) if k], sizes, trans):
            keep[i] = True
        step = max(step, time.perf_counter() - t_try)
    return [c for c, k in zip(regens, keep) if k]


def with_budget(fn):
    """``fn(graph, scenarios, budget, **options)`` as a registered method, which takes the
    budget as an option."""

    def run(graph: Graph, scenarios: Scenarios | None = None, **options: Any):
        budget = options.pop("budget", None)
        if budget is None:
            raise InputError("remat methods need a memory budget (--budget BYTES)")
        return fn(graph, scenarios, budget, **options)

    run.__name__ = fn.__name__
    run.__doc__ = fn.__doc__
    return run
