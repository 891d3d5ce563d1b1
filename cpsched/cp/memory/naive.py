"""The naive position + cumulative model (the baseline measured in the project's reference
notes): one position per op in ``[0, n)``, AllDifferent, the graph's own precedence edges,
each buffer live from its producer's position to its last consumer's (``AddMaxEquality``),
one ``AddCumulative`` whose capacity is minimised, hinted with the given order. No domain
reduction, no distances, no lower bound on the capacity, no scaling: kept only to compare
with ``cpsched.strategies.min_peak.method`` on the same graphs (single scenario).
"""

from __future__ import annotations

import numpy as np
from ortools.sat.python import cp_model

from cpsched.core.graph import Graph
from cpsched.core.scenarios import Scenarios, static
from cpsched.cp import runtime
from cpsched.cp.runtime import SolverConfig


def solve_naive(
    graph: Graph,
    scenarios: Scenarios | None = None,
    cfg: SolverConfig | None = None,
    hint: list[int] | None = None,
) -> dict:
    """The naive model of ``graph`` solved under ``cfg`` (default a 60 s limit)."""
    scenarios = scenarios or static()
    sizes = graph.sizes(scenarios)[0]
    n = graph.n_ops
    m = cp_model.CpModel()
    pos = [m.new_int_var(0, n - 1, f"p{v}") for v in range(n)]
    m.add_all_different(pos)
    for v in range(n):
        for u in graph.preds(v):
            m.add(pos[int(u)] < pos[v])
    ivs, dem = [], []
    for b in range(graph.n_buffers):
        if sizes[b] <= 0:
            continue
        d = int(graph.buffer_def[b])
        users = [int(u) for u in graph.buffer_users(b)]
        start = 0 if graph.buffer_live_in[b] else pos[d]
        end: cp_model.IntVar | int
        if graph.buffer_live_out[b]:
            end = n - 1
        elif users:
            end = m.new_int_var(0, n - 1, f"e{b}")
            m.add_max_equality(
                end, [pos[u] for u in users] + ([pos[d]] if graph.buffer_live_in[b] else [])
            )
        else:
            end = pos[d]
        size = m.new_int_var(1, n, f"l{b}")
        ivs.append(m.new_interval_var(start, size, end + 1, f"i{b}"))
        dem.append(int(sizes[b]))
    cap = m.new_int_var(0, int(sizes.sum()), "cap")
    m.add_cumulative(ivs, dem, cap)
    m.minimize(cap)
    hint = graph.default_order() if hint is None else hint
    for k, v in enumerate(hint):
        m.add_hint(pos[v], k)
    r = runtime.solve(m, cfg or SolverConfig(time_limit=60.0))
    out = {
        "status": r.status,
        "seconds": r.seconds,
        "objective": r.objective,
        "bound": r.bound,
        "order": None,
    }
    if r.solved:
        p = np.array([r.value(x) for x in pos])
        out["order"] = [int(v) for v in np.argsort(p, kind="stable")]
    return out
