"""A lower bound on the added time of any remat / eviction plan for a frozen main order.

At every main step ``t`` whose usage exceeds the budget by ``X`` bytes, some buffers that are
resident across ``t`` without being touched there must be away: recomputed later (which
costs at least one run of their producer, and one run regenerates all of that producer's
outputs) or on the host. Bytes on the host at ``t`` were all copied out on one serial
device->host stream before ``t`` and all come back on one host->device stream after it, so
at most ``bandwidth x min(time before t, time after t)`` of them; every unit of added time
(a clone or a stall) widens that window by at most ``bandwidth`` bytes. The cheapest way to
cover ``X`` under these rules is a fractional knapsack, and the largest such cost over the
over-budget steps bounds the plan's added time from below.

Everything the bound ignores (clone outputs' own memory, clone inputs that must be
resident, copy latency, one shared copy stream) only makes real plans dearer, so the bound
stays valid. It is what tells a weak solver from an impossible target: the eviction
benchmark uses it to show where a host link is simply too slow.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cpsched.analysis.memory import live_ranges, simulate
from cpsched.core.graph import Graph
from cpsched.core.scenarios import Scenarios, static
from cpsched.remat.policy import evictable_buffers, recomputable_ops
from cpsched.remat.timing import TransferModel


def _cover_cost(need: float, cost: np.ndarray, nbytes: np.ndarray) -> float:
    """Least cost to free ``need`` bytes from items (``cost``, ``nbytes``) taken
    fractionally; ``inf`` when all of them together free less."""
    if need <= 0:
        return 0.0
    rate = np.divide(cost, nbytes, out=np.full(cost.shape, np.inf), where=nbytes > 0)
    total = 0.0
    for i in np.argsort(rate, kind="stable"):
        take = min(float(nbytes[i]), need)
        total += rate[i] * take
        need -= take
        if need <= 0:
            return total
    return np.inf


def added_time_lower_bound(
    graph: Graph,
    order: Sequence[int] | np.ndarray,
    budget,
    durations: np.ndarray,
    scenarios: Scenarios | None = None,
    transfer: TransferModel | None = None,
) -> np.ndarray:
    """``[S]`` lower bound on the added time (clone time + exposed copy time, in the units of
    ``durations``) of every plan that keeps ``order`` as its main order and stays within
    ``budget`` bytes per scenario; ``transfer`` None means recomputation only.
    ``inf`` where even dropping every removable buffer cannot meet the budget."""
    sc = scenarios or static()
    n_s = len(sc)
    order = np.asarray(order, dtype=np.int64)
    bud = np.broadcast_to(np.asarray(budget, dtype=np.int64), (n_s,))
    dur = np.atleast_2d(np.asarray(durations, dtype=np.float64))
    prof = simulate(graph, order, sc)
    start, end = live_ranges(graph, order)
    sizes = graph.sizes(sc)
    producer = graph.buffer_def
    clon = recomputable_ops(graph)[producer]
    evb = evictable_buffers(graph)
    bw = float(transfer.bandwidth) if transfer is not None else 0.0
    out = np.zeros(n_s, dtype=np.float64)
    for s in range(n_s):
        d = dur[s if dur.shape[0] > 1 else 0]
        T = np.concatenate([[0.0], np.cumsum(d[order])])
        for t in np.flatnonzero(prof.usage[s] > bud[s]):
            need = float(prof.usage[s, t] - bud[s])
            away = (start < t) & (end > t) & (sizes[s] > 0)
            op = int(order[t])  # its inputs and outputs must be resident at t
            away[graph.uses(op)] = False
            away[graph.defines(op)] = False
            # recompute: one item per producer (a clone regenerates all its outputs); each
            # unit of its time also lets the copy streams move bw more bytes
            rb = np.flatnonzero(away & clon)
            nbytes: np.ndarray
            cost: np.ndarray
            if rb.size:
                ops, inv = np.unique(producer[rb], return_inverse=True)
                nbytes = np.bincount(inv, weights=sizes[s, rb].astype(np.float64))
                cost = d[ops]
            else:
                nbytes = cost = np.zeros(0)
            if bw > 0:
                window = bw * min(T[t], T[-1] - T[t + 1])
                movable = float(sizes[s, np.flatnonzero(away & evb)].sum())
                need -= min(window, movable)
                nbytes = nbytes + bw * cost
                if movable > window:
                    # a stall of one time unit lets bw more bytes through
                    cost = np.append(cost, (movable - window) / bw)
                    nbytes = np.append(nbytes, movable - window)
            out[s] = max(out[s], _cover_cost(need, cost, nbytes))
    return out
