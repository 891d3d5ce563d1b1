"""Lower bounds on the joint problem's makespan that hold for every plan, in the costs'
time unit, per scenario.

Why a plan without memory limit bounds every plan within a budget: take any plan (an
order of the main ops with clones and host round trips among them) and delete its clones
and host copies, letting each late reader read the first copy of its buffer instead (its
defining op ended before the clone or the copy-out could start). The timeline simulator
runs the compute stream in the plan's order, each op at the later of the previous op's
end and its inputs' readiness, and each transfer, FIFO on its stream, at the later of its
start op's end and the previous transfer's end. Deleting work from the compute stream and
from the copy stream, and deleting the waits on copies, moves no event later (induction
over the order): the plain order that is left is no slower, and it is an order of the
graph. So the least makespan over all orders, whatever the memory, bounds the makespan of
every plan at every budget:

- ``analytic``: ``cpsched.cp.overlap.bounds.overlap_lower_bound`` on the true durations
  (compute-stream load, head + transfer + tail per collective, chains of collectives, the
  one-machine bound per stream), which holds for every order;
- ``no_memory``: the overlap model (``cp-overlap``) without a memory limit, solved for a
  while: its proven bound over all orders (the tick rounding slack taken off).

Neither depends on the budget: on programs whose communication sets the makespan they
show how much any plan, joint or sequential, can gain over the order alone (the issue's
10 % target is out of reach wherever ``bound > 0.9 * best sequential``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cpsched.core.errors import CpschedError
from cpsched.cp.overlap.bounds import overlap_lower_bound
from cpsched.cp.overlap.problem import OverlapProblem
from cpsched.cp.overlap.solve import solve_overlap


def analytic_bound(base: OverlapProblem) -> np.ndarray:
    """``overlap_lower_bound`` on the true op and transfer times: [S]."""
    is_coll = np.array([c.startswith("collective:") for c in base.classes], dtype=bool)
    return overlap_lower_bound(
        base.graph,
        base.dur,
        base.starts,
        base.dones,
        base.ttime,
        base.stream,
        base.sync,
        is_coll,
        base.anc,
    ).makespan


def no_memory_bound(
    base: OverlapProblem, seconds: float, common: dict[str, Any]
) -> tuple[np.ndarray, np.ndarray | None, dict[str, Any]]:
    """The overlap model without a memory limit, ``seconds`` for its whole model (no LNS:
    only the whole model proves a bound): (bound [S], best makespan [S] or None, info).
    The bound is the model's ``makespan_lower_bound`` (at least ``analytic_bound``)."""
    g, sc = base.graph, base.scenarios
    # more than every buffer and transient at once: the budget never binds
    sizes = g.sizes(sc) if g.n_buffers else np.zeros((len(sc), 0), dtype=np.int64)
    unlimited = sizes.sum(axis=1) + g.transient_bytes(sc).sum(axis=1) + 1
    try:
        s = solve_overlap(
            g,
            sc,
            budget=unlimited,
            costs=base.costs,
            comm_streams=base.comm_streams,
            lns=False,
            time_limit=max(0.5, seconds),
            **common,
        )
    except CpschedError as e:
        return analytic_bound(base), None, {"error": str(e)}
    lb = np.array([s.info["makespan_lower_bound"][k] for k in sc.names], dtype=np.float64)
    ms = np.array([s.info["makespan"][k] for k in sc.names], dtype=np.float64)
    return lb, ms, {"status": s.status, "makespan": [float(x) for x in ms]}


__all__ = ["analytic_bound", "no_memory_bound"]
