"""The run-time side of per-bucket plans: exact dim values where a plan stops fitting the
budget (integer arithmetic on the size polynomials) and the plan picker."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cpsched.analysis.validate import validate_schedule
from cpsched.core.errors import InputError, ScheduleError
from cpsched.core.graph import Graph
from cpsched.core.scenarios import Scenarios, pick_bucket
from cpsched.core.symbolic import SymExpr
from cpsched.core.units import format_bytes_exact
from cpsched.remat.events import COMPUTE, FREE, PREFETCH, Event
from cpsched.remat.replay import check_plan, replay
from cpsched.remat.result import RematResult
from cpsched.remat.rewrite import plan_to_graph
from cpsched.remat.timing import op_durations, plan_time


def _univariate(expr: SymExpr, dim: str, fixed: Mapping[str, int]) -> tuple[int, ...]:
    """Coefficients (constant first) of ``expr`` in ``dim`` with the other dims fixed."""
    coefs: dict[int, int] = {}
    for mono, coef in expr.terms:
        deg = 0
        c = int(coef)
        for d, p in mono:
            if d == dim:
                deg = p
            else:
                if d not in fixed:
                    raise InputError(f"size {expr} needs a value for dim {d!r}")
                c *= int(fixed[d]) ** p
        coefs[deg] = coefs.get(deg, 0) + c
    top = max(coefs, default=0)
    return tuple(coefs.get(k, 0) for k in range(top + 1))


def _padd(a: tuple[int, ...], b: tuple[int, ...], sign: int = 1) -> tuple[int, ...]:
    n = max(len(a), len(b))
    out = [(a[k] if k < len(a) else 0) + sign * (b[k] if k < len(b) else 0) for k in range(n)]
    while len(out) > 1 and out[-1] == 0:
        out.pop()
    return tuple(out)


def _peval(p: tuple[int, ...], x: int) -> int:
    v = 0
    for c in reversed(p):
        v = v * x + c
    return v


def usage_polynomials(
    graph: Graph, events: Sequence[Event], dim: str, fixed: Mapping[str, int] | None = None
) -> dict[tuple[int, ...], int]:
    """Device bytes at every measured event of a plan as exact polynomials in ``dim`` (other
    dims fixed): ``{coefficients: first event index}``, one entry per distinct polynomial.
    Non-negative coefficients, so each is non-decreasing in ``dim``."""
    fixed = dict(fixed or {})
    bsize = [
        _univariate(e, dim, fixed) if graph.buffer_space[j] == 0 else (0,)
        for j, e in enumerate(graph.buffer_sizes)
    ]
    tsize = [_univariate(e, dim, fixed) for e in graph.transient]
    resident = graph.buffer_live_in.copy()
    cur: tuple[int, ...] = (0,)
    for j in np.flatnonzero(resident):
        cur = _padd(cur, bsize[j])
    out: dict[tuple[int, ...], int] = {}
    computed = np.zeros(graph.n_ops, dtype=bool)
    for k, (code, x) in enumerate(events):
        code, x = int(code), int(x)
        if code == COMPUTE:
            for b in graph.defines(x):
                b = int(b)
                if graph.buffer_live_in[b] and not computed[x]:
                    continue
                if not resident[b]:
                    resident[b] = True
                    cur = _padd(cur, bsize[b])
            computed[x] = True
            out.setdefault(_padd(cur, tsize[x]), k)
        elif code == FREE:
            if resident[x]:
                resident[x] = False
                cur = _padd(cur, bsize[x], -1)
        elif code == PREFETCH:
            resident[x] = True
            cur = _padd(cur, bsize[x])
            out.setdefault(cur, k)
    if not out:
        out[cur] = -1
    return out


def _max_x(p: tuple[int, ...], budget: int, lo: int, hi: int) -> int:
    """Largest integer ``x`` in ``[lo, hi]`` with ``p(x) <= budget`` (``lo - 1`` if none)."""
    if _peval(p, lo) > budget:
        return lo - 1
    if _peval(p, hi) <= budget:
        return hi
    a, b = lo, hi  # p(a) <= budget < p(b)
    while b - a > 1:
        mid = (a + b) // 2
        if _peval(p, mid) <= budget:
            a = mid
        else:
            b = mid
    return a


@dataclass(frozen=True)
class PlanLimit:
    """The largest value of ``dim`` (in ``[lo, hi]``) at which a plan fits ``budget``, the
    event that binds just above it and its usage polynomial (a SymExpr in ``dim``)."""

    dim: str
    limit: int
    event: int
    usage: str


def plan_limit(
    graph: Graph,
    events: Sequence[Event],
    budget: int,
    dim: str,
    fixed: Mapping[str, int] | None = None,
    lo: int = 1,
    hi: int = 1 << 40,
) -> PlanLimit:
    """Exact integer limit of one plan in one dim: memory is monotone in every dim, so the
    plan fits every ``dim <= limit`` and no ``dim > limit`` (up to ``hi``)."""
    polys = usage_polynomials(graph, events, dim, fixed)
    p: tuple[int, ...]
    x, k, p = int(hi), -1, ()
    for q, j in polys.items():
        if _peval(q, x) <= budget:
            continue
        x, k, p = _max_x(q, int(budget), lo, x), j, q
    expr = (
        " + ".join(
            f"{c}*{dim}^{d}" if d > 1 else (f"{c}*{dim}" if d == 1 else str(c))
            for d, c in reversed(list(enumerate(p)))
            if c
        )
        or "0"
    )
    return PlanLimit(dim, int(x), int(k), expr)


def single_dim(scenarios: Scenarios) -> tuple[str, dict[str, int]] | None:
    """The one dim whose value differs between buckets, with the others' common values."""
    if not scenarios.dims:
        return None
    varying = [
        d for i, d in enumerate(scenarios.dims) if len(set(scenarios.values[:, i].tolist())) > 1
    ]
    if len(varying) > 1:
        return None
    dim = varying[0] if varying else scenarios.dims[0]
    fixed = {d: int(scenarios.values[0, i]) for i, d in enumerate(scenarios.dims) if d != dim}
    if scenarios.lower is not None:
        for i, d in enumerate(scenarios.dims):
            if d != dim and (scenarios.lower[:, i] != scenarios.values[:, i]).any():
                return None
    return dim, fixed


def breakpoints(
    result: RematResult, budget: int | None = None, hi: int | None = None
) -> dict[str, Any] | None:
    """Exact run-time thresholds of a plan table over the one dim that separates buckets.

    ``plans``: for each bucket's plan, the largest dim value at which it still fits the
    budget (``limit``) and the usage expression that exceeds the budget just above it.
    ``candidates``: for each candidate, the smallest dim value from which every table plan
    without it exceeds the budget (``must_be_on_from``; ``None`` when every plan has it or
    a plan without it fits up to the top of the range)."""
    sc = result.scenarios
    sd = single_dim(sc)
    if sd is None:
        return None
    dim, fixed = sd
    di = sc.dims.index(dim)
    bud = int(budget if budget is not None else int(np.max(result.budget)))
    top = int(hi if hi is not None else 4 * int(sc.values[:, di].max()))
    plans = {}
    limits = []
    for s, name in enumerate(sc.names):
        pl = plan_limit(result.graph, result.events[s], bud, dim, fixed, 1, top)
        limits.append(pl.limit)
        plans[name] = {
            "limit": pl.limit,
            "binding_usage": pl.usage,
            "active": list(result.active[s]),
        }
    cands = {}
    for cid in range(len(result.skeleton.candidates)):
        without = [limits[s] for s in range(len(sc)) if cid not in result.active[s]]
        if len(without) == len(sc) or not without:
            on_from = None
        else:
            on_from = max(without) + 1
            if on_from > top:
                on_from = None
        cands[str(cid)] = on_from
    return {
        "dim": dim,
        "fixed": fixed,
        "budget": bud,
        "range": [1, top],
        "plans": plans,
        "must_be_on_from": cands,
    }


@dataclass(frozen=True)
class Pick:
    bucket: str
    index: int
    events: tuple[Event, ...]
    peak: int
    budget: int


def pick_plan(
    result: RematResult,
    values: Mapping[str, int],
    budget: int | None = None,
    cheapest: bool = False,
    simulate_graph: bool = True,
) -> Pick:
    """The run-time choice for concrete dim values: the bucket whose bounds hold them (sized
    at its upper bound, so its plan is safe), verified by the replay at the actual values.
    ``cheapest``: among all table plans that fit at these values, the one with the least
    added time (the exact-breakpoint choice). ``simulate_graph``: also rewrite the plan as a
    graph (``plan_to_graph``) and check it with ``cpsched.analysis.validate`` and the memory
    simulator. Raises ``ScheduleError`` if a verification fails (it cannot when sizes are
    monotone in the dims)."""
    sc = result.scenarios
    point = Scenarios(
        ("runtime",),
        sc.dims,
        np.array([[int(values[d]) for d in sc.dims]], dtype=np.int64),
        np.ones(1),
    )
    k = pick_bucket(sc, values)
    bud = int(budget if budget is not None else result.budget[k])
    if cheapest:
        dur = op_durations(result.graph, point)
        best = None
        for s in range(len(sc)):
            r = replay(result.graph, result.events[s], point, bud)
            if r.errors:
                continue
            t = float(
                plan_time(result.graph, result.events[s], dur, result.transfer, point).added[0]
            )
            if best is None or t < best[0] - 1e-12:
                best = (t, s, r)
        if best is not None:
            k = best[1]
    r = check_plan(
        result.graph,
        result.events[k],
        point,
        bud,
        what=f"plan of bucket {sc.names[k]} at {dict(values)}",
    )
    if simulate_graph:
        g2, order = plan_to_graph(result.graph, result.events[k])
        sim = int(validate_schedule(g2, order, point, what="rewritten plan")[0])
        if sim != int(r.peak[0]) or sim > bud:
            raise ScheduleError(
                f"plan of bucket {sc.names[k]} at {dict(values)}: the simulator "
                f"finds {format_bytes_exact(sim)}, the replay {format_bytes_exact(r.peak[0])}, budget {format_bytes_exact(bud)}"
            )
    return Pick(sc.names[k], k, tuple(result.events[k]), int(r.peak[0]), bud)
