"""Whether an order is a schedule of a graph: a permutation of its ops that respects every
data and control dependence and puts each async start before its done. Part of the IR (the
graph builder checks an input's own order with it); ``cpsched.analysis.validate`` adds the
re-simulated peak."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from cpsched.core.errors import ScheduleError

if TYPE_CHECKING:
    from cpsched.core.graph import Graph


def validate_order(graph: Graph, order: Sequence[int] | np.ndarray, what: str = "schedule") -> None:
    """Raise ``ScheduleError`` unless ``order`` is a permutation of the ops that respects
    data and control dependences and puts every async start before its update/done."""
    n = graph.n_ops
    arr = np.asarray(list(order), dtype=np.int64)
    if arr.size != n:
        raise ScheduleError(f"{what} of {graph.name} has {arr.size} ops, the graph has {n}")
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        raise ScheduleError(f"{what} of {graph.name} names op index outside 0..{n - 1}")
    pos = np.full(n, -1, dtype=np.int64)
    pos[arr] = np.arange(n)
    if (pos < 0).any():
        missing = graph.op_names[int(np.flatnonzero(pos < 0)[0])]
        raise ScheduleError(f"{what} of {graph.name} repeats an op and misses {missing!r}")
    succ_rows = np.repeat(np.arange(n), np.diff(graph.pred_ptr))
    bad = pos[graph.pred_idx] >= pos[succ_rows]
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        u, v = int(graph.pred_idx[k]), int(succ_rows[k])
        why = "an async start after its done" if graph.async_start[v] == u else "a dependence"
        raise ScheduleError(
            f"{what} of {graph.name} breaks {why}: {graph.op_names[v]!r} "
            f"(step {pos[v]}) comes before {graph.op_names[u]!r} (step {pos[u]})"
        )
