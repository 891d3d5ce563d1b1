"""A lower bound on the added time of every clone plan for a frozen order, from an LP.

``cpsched.remat.bound`` covers each over-budget step with the cheapest buffers to drop and
ignores what a clone needs: its inputs resident when it runs. Where those inputs are gone in
the over-budget region (RLG n1000 at 486,895) that bound stays far below every plan (0.281 %
against 1.77 %). This one counts memory at one over-budget step ``t`` only: whatever is not
resident at ``t`` but read later must be re-made after ``t``, and its inputs then are either
resident at ``t`` too (so they count) or re-made as well, chains of any depth. That is the
segment model (``cpsched.cp.remat.segments``) with ``rows`` set to the step and the clone
positions of ``every_position``; its LP, solved by GLOP (part of OR-Tools), is a lower bound.
More steps counted together are valid too (``step_set_bound``) but leave more clone
positions: their LP was weaker on RLG n1000 and stronger on small graphs, so ``lp_bound``
returns the largest of the one-step LPs at the highest steps and of those steps together.

Example::

    >>> from cpsched.generators import random_layered
    >>> from cpsched.analysis.memory import simulate
    >>> from cpsched.remat.bound import added_time_lower_bound
    >>> from cpsched.remat.timing import op_durations
    >>> g = random_layered(60, seed=0)
    >>> order = g.default_order()
    >>> budget = int(0.8 * simulate(g, order).peak[0])
    >>> round(float(lp_bound(g, order, budget)[0]))  # op time units (sum of all: 28,467)
    1608
    >>> round(float(added_time_lower_bound(g, order, budget, op_durations(g))[0]))
    594
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from ortools.linear_solver import pywraplp

from cpsched.analysis.memory import simulate
from cpsched.core.graph import Graph
from cpsched.core.scenarios import Scenarios
from cpsched.cp.remat.segments import SegmentModel, build_segment_model, every_position
from cpsched.remat.setup import setup

DEFAULT_STEPS = 8  # one-step LPs; RLG n1000: about 1 s each
DEFAULT_ROWS = 40  # then the steps together; RLG n1000: about 90 s (bounded by time_limit)


def as_linear_program(
    sm: SegmentModel, solver: str = "GLOP", integer: bool = False
) -> tuple[pywraplp.Solver, list[Any]]:
    """The segment model (clauses, implications, linear rows) as a linear program
    (``integer=False``) or a MIP for ``pywraplp`` (``solver`` 'GLOP', 'SCIP', ...), with
    its variables in the CP-SAT model's order."""
    proto = sm.model.proto
    mp = pywraplp.Solver.CreateSolver(solver)
    if mp is None:
        raise ValueError(f"OR-Tools has no solver {solver!r} here")
    xs = [mp.IntVar(0, 1, "") if integer else mp.NumVar(0, 1, "") for _ in proto.variables]

    def lit(ref: int) -> Any:
        return xs[ref] if ref >= 0 else 1 - xs[-ref - 1]

    for c in proto.constraints:
        enforce = list(c.enforcement_literal)
        if c.has_bool_or():
            lits = [lit(r) for r in c.bool_or.literals] + [1 - lit(r) for r in enforce]
            mp.Add(sum(lits) >= 1)
        elif c.has_bool_and():
            for r in c.bool_and.literals:
                mp.Add(lit(r) >= (lit(enforce[0]) if enforce else 1))
        elif c.has_linear() and not enforce:
            expr = sum(k * lit(r) for r, k in zip(c.linear.vars, c.linear.coeffs))
            dom = list(c.linear.domain)
            if dom[0] > -(2**62):
                mp.Add(expr >= dom[0])
            if dom[-1] < 2**62:
                mp.Add(expr <= dom[-1])
        else:
            raise ValueError("the segment model holds a constraint this conversion lacks")
    obj = sm.model.proto.objective
    mp.Minimize(sum(k * xs[r] for r, k in zip(obj.vars, obj.coeffs)))
    return mp, xs


def counted_rows(usage: np.ndarray, budget: float, rows: int) -> np.ndarray:
    """``[n]`` bool: up to ``rows`` of the steps over ``budget``: the highest half, then
    the rest spread evenly over them."""
    usage = np.asarray(usage)
    over = np.flatnonzero(usage > budget)
    mask = np.zeros(usage.shape[0], dtype=bool)
    if over.size <= rows:
        mask[over] = True
        return mask
    mask[highest_steps(usage, budget, max(1, rows // 2))] = True
    for t in over[np.linspace(0, over.size - 1, rows).round().astype(int)]:
        if mask.sum() >= rows:
            break
        mask[t] = True
    return mask


def highest_steps(usage: np.ndarray, budget: float, k: int) -> np.ndarray:
    """The ``k`` steps furthest over ``budget`` (highest usage first)."""
    usage = np.asarray(usage)
    over = np.flatnonzero(usage > budget)
    return over[np.argsort(-usage[over], kind="stable")[:k]]


def step_set_bound(
    graph: Graph,
    order: Sequence[int],
    budget: float,
    sizes: np.ndarray,
    trans: np.ndarray,
    cost: np.ndarray,
    steps: Sequence[int],
    time_limit: float = 60.0,
    candidates: dict[int, set[int]] | None = None,
) -> float:
    """LP bound on the clone time (units of ``cost``, ``[n_ops]``) with memory counted at
    ``steps`` only (one scenario: ``sizes`` ``[1, n_buffers]``, ``trans`` ``[1, n_ops]``);
    0 when GLOP does not finish in ``time_limit`` s, ``inf`` when no plan fits."""
    mask = np.zeros(len(order), dtype=bool)
    mask[np.asarray(steps, dtype=int)] = True
    sm = build_segment_model(
        graph,
        order,
        np.array([budget]),
        sizes,
        trans,
        cost,
        candidates=every_position(graph, order, mask) if candidates is None else candidates,
        rows=mask,
    )
    lp, xs = as_linear_program(sm)
    # the model's objective is rounded to integer units; the bound takes the true times
    obj = lp.Objective()
    obj.Clear()
    for (v, _), var in sm.clones.items():
        obj.SetCoefficient(xs[var.index], float(cost[v]))
    obj.SetMinimization()
    lp.SetTimeLimit(int(max(1.0, time_limit) * 1000))
    status = lp.Solve()
    if status == lp.INFEASIBLE:
        return np.inf
    if status != lp.OPTIMAL:
        return 0.0
    # a hair below GLOP's optimum: its tolerances must not make the bound too high
    return max(0.0, lp.Objective().Value() * (1 - 1e-6))


def lp_bound(
    graph: Graph,
    order: Sequence[int],
    budget,
    durations: np.ndarray | None = None,
    scenarios: Scenarios | None = None,
    *,
    steps: int = DEFAULT_STEPS,
    rows: int = DEFAULT_ROWS,
    time_limit: float = 60.0,
) -> np.ndarray:
    """``[S]`` lower bound on the clone time (units of ``durations``) of every plan that
    keeps ``order`` as its main order within ``budget`` bytes per scenario: the largest of
    the one-step LPs at the ``steps`` highest over-budget steps (fewer counted steps leave
    fewer clone positions, so one step alone is often the strongest: RLG n1000 at 486,895,
    1.565 % at its peak step against 0.696 % with 40 steps together), and of the LP with
    ``rows`` of them counted together (stronger on small graphs: RLG n60 at 80 %, 1,608
    against 841). ``inf`` where no plan exists; the LPs stop at ``time_limit`` seconds in
    all (those not run count 0)."""
    t0 = time.perf_counter()
    sc, bud, order, dur, sizes, trans = setup(graph, scenarios, budget, order, durations)
    usage = np.atleast_2d(simulate(graph, order, sc).usage)
    out = np.zeros(len(sc))
    for s in range(len(sc)):
        data = (graph, order, float(bud[s]), sizes[s : s + 1], trans[s : s + 1], dur[s])
        seconds_per_position, done = 0.0, 0
        for t in highest_steps(usage[s], float(bud[s]), steps):
            left = time_limit - (time.perf_counter() - t0)
            if left <= 0 or out[s] == np.inf:
                break
            t1 = time.perf_counter()
            cand = every_position(graph, order, np.arange(len(order)) == t)
            out[s] = max(out[s], step_set_bound(*data, [int(t)], left, cand))
            n_pos = max(1, sum(map(len, cand.values())))
            seconds_per_position += (time.perf_counter() - t1) / n_pos
            done += 1
        mask = counted_rows(usage[s], float(bud[s]), rows)
        if not done or out[s] == np.inf or mask.sum() <= 1:
            continue
        cand = every_position(graph, order, mask)
        left = time_limit - (time.perf_counter() - t0)
        # building the model is not bounded by the LP's limit: skip it when, at the pace of
        # the one-step LPs, it would not finish in the time left (RLG n1000, 40 steps: 90 s)
        if 2 * seconds_per_position / done * sum(map(len, cand.values())) < left:
            rows_idx = np.flatnonzero(mask).tolist()
            out[s] = max(out[s], step_set_bound(*data, rows_idx, left, cand))
    return out
