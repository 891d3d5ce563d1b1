"""A lower bound on the added time of every clone plan for a frozen order, from an LP.

``cpsched.remat.bound`` covers each over-budget step with the cheapest buffers to drop and
ignores what a clone needs: its inputs resident when it runs. Where those inputs are gone in
the over-budget region (RLG n1000 at 486,895) that bound stays far below every plan (0.281 %
against 1.77 %). This one solves the linear relaxation of the segment model
(``cpsched.cp.remat.segments``) over every clone position that can matter, chains of any
depth included, with memory counted at ``rows`` of the over-budget steps only (fewer rows:
a smaller LP and a weaker but still valid bound; see ``build_segment_model(rows=...)`` and
``every_position``). The LP is solved by GLOP, which ships with OR-Tools.

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

from collections.abc import Sequence
from typing import Any

import numpy as np
from ortools.linear_solver import pywraplp

from cpsched.analysis.memory import simulate
from cpsched.core.graph import Graph
from cpsched.core.scenarios import Scenarios, static
from cpsched.cp.remat.segments import SegmentModel, build_segment_model, every_position
from cpsched.remat.replay import _budget_array
from cpsched.remat.timing import op_durations

DEFAULT_ROWS = 40  # RLG n1000: 41k positions, LP in about 70 s on one core (0.696 %)


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
    """``[n]`` bool: up to ``rows`` of the steps over ``budget`` (half spread evenly over
    them, the rest the highest), where the relaxation counts memory."""
    usage = np.asarray(usage)
    over = np.flatnonzero(usage > budget)
    mask = np.zeros(usage.shape[0], dtype=bool)
    if over.size <= rows:
        mask[over] = True
        return mask
    spread = over[np.linspace(0, over.size - 1, max(1, rows // 2)).round().astype(int)]
    mask[spread] = True
    for t in over[np.argsort(-usage[over], kind="stable")]:
        if mask.sum() >= rows:
            break
        mask[t] = True
    return mask


def lp_bound(
    graph: Graph,
    order: Sequence[int],
    budget,
    durations: np.ndarray | None = None,
    scenarios: Scenarios | None = None,
    *,
    rows: int = DEFAULT_ROWS,
    time_limit: float = 300.0,
) -> np.ndarray:
    """``[S]`` lower bound on the clone time (units of ``durations``) of every plan that
    keeps ``order`` as its main order within ``budget`` bytes per scenario; 0 where the LP
    is not solved in ``time_limit`` seconds, ``inf`` where no plan exists."""
    sc = scenarios if scenarios is not None and len(scenarios) else static()
    bud = _budget_array(budget, len(sc))
    dur = op_durations(graph, sc) if durations is None else np.atleast_2d(durations)
    sizes, trans = graph.sizes(sc), graph.transient_bytes(sc)
    usage = np.atleast_2d(simulate(graph, order, sc).usage)
    out = np.zeros(len(sc))
    for s in range(len(sc)):
        mask = counted_rows(usage[s], float(bud[s]), rows)
        if not mask.any():
            continue  # the order fits: nothing to add
        sm = build_segment_model(
            graph,
            order,
            bud[s : s + 1],
            sizes[s : s + 1],
            trans[s : s + 1],
            dur[s],
            candidates=every_position(graph, order, mask),
            rows=mask,
        )
        lp, xs = as_linear_program(sm)
        # the model's objective is rounded to integer units; the bound takes the true times
        obj = lp.Objective()
        obj.Clear()
        for (v, _), var in sm.clones.items():
            obj.SetCoefficient(xs[var.index], float(dur[s, v]))
        obj.SetMinimization()
        lp.SetTimeLimit(int(max(1.0, time_limit) * 1000))
        status = lp.Solve()
        if status == lp.INFEASIBLE:
            out[s] = np.inf
        elif status == lp.OPTIMAL:
            # a hair below GLOP's optimum: its tolerances must not make the bound too high
            out[s] = max(0.0, lp.Objective().Value() * (1 - 1e-6))
    return out
