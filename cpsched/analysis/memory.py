"""Liveness, peak memory and lower bounds for a graph under an order, per scenario.

Time step ``t`` is the ``t``-th op of the order. A buffer is live from its defining op's
step to its last user's step, inclusive (inputs and outputs of an op coexist); ``live_in``
buffers from step 0, ``live_out`` buffers to the last step. Usage at ``t`` is the sum of
live buffer bytes plus the transient bytes of the op at ``t``. Everything is vectorised over
buffers and scenarios.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cpsched.core.graph import Graph
from cpsched.core.scenarios import Scenarios, static


@dataclass(frozen=True)
class MemoryProfile:
    """Memory over time of one order: ``usage[s, t]`` bytes at step ``t`` in scenario ``s``."""

    scenarios: Scenarios
    order: np.ndarray  # [n_ops] op index at each step
    usage: np.ndarray  # [n_scenarios, n_ops] int64
    start: np.ndarray  # [n_buffers] first live step
    end: np.ndarray  # [n_buffers] last live step

    @property
    def peak(self) -> np.ndarray:
        """Bytes per scenario at the busiest step (0 for an empty order)."""
        return self._per_scenario(np.max)

    @property
    def peak_step(self) -> np.ndarray:
        """The first step at the peak, per scenario (0 for an empty order)."""
        return self._per_scenario(np.argmax)

    def _per_scenario(self, over_steps) -> np.ndarray:
        if not self.usage.shape[1]:
            return np.zeros(len(self.scenarios), np.int64)
        return over_steps(self.usage, axis=1)

    def peak_op(self, s: int = 0) -> int:
        """Op index that runs at the (first) peak step of scenario ``s``."""
        return int(self.order[self.peak_step[s]])

    def peak_by_name(self) -> dict[str, int]:
        return {n: int(p) for n, p in zip(self.scenarios.names, self.peak)}


def positions(order: Sequence[int] | np.ndarray, n: int) -> np.ndarray:
    pos = np.full(n, -1, dtype=np.int64)
    pos[np.asarray(order, dtype=np.int64)] = np.arange(len(order), dtype=np.int64)
    return pos


def live_ranges(graph: Graph, order: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Inclusive ``(start, end)`` step of every buffer under ``order``."""
    n = graph.n_ops
    pos = positions(order, n)
    start = pos[graph.buffer_def]
    counts = np.diff(graph.buffer_users_ptr)
    end = start.copy()
    if graph.buffer_users_idx.size:
        upos = pos[graph.buffer_users_idx]
        has = counts > 0
        # maximum user position per buffer (segments are contiguous in CSR order)
        seg_max = np.maximum.reduceat(upos, graph.buffer_users_ptr[:-1][has])
        end[has] = np.maximum(end[has], seg_max)
    start = np.where(graph.buffer_live_in, 0, start)
    end = np.where(graph.buffer_live_out, max(n - 1, 0), end)
    return start, end


def simulate(
    graph: Graph, order: Sequence[int] | np.ndarray, scenarios: Scenarios | None = None
) -> MemoryProfile:
    """Memory over time for ``order`` (assumed valid: see ``cpsched.analysis.validate``)."""
    scenarios = scenarios or static()
    n = graph.n_ops
    order_arr = np.asarray(order, dtype=np.int64)
    start, end = live_ranges(graph, order_arr)
    sizes = graph.sizes(scenarios)  # [S, B]
    n_s = len(scenarios)
    delta = np.zeros((n_s, n + 1), dtype=np.int64)
    if graph.n_buffers:
        # Sort-and-reduce instead of np.add.at: exact int64 sums, fast for 1e5 buffers.
        for s in range(n_s):
            delta[s] += _bincount_int(start, sizes[s], n + 1)
            delta[s] -= _bincount_int(end + 1, sizes[s], n + 1)
    usage = np.cumsum(delta[:, :n], axis=1)
    usage += graph.transient_bytes(scenarios)[:, order_arr]
    return MemoryProfile(scenarios, order_arr, usage, start, end)


def _bincount_int(idx: np.ndarray, weights: np.ndarray, length: int) -> np.ndarray:
    out = np.zeros(length, dtype=np.int64)
    if idx.size == 0:
        return out
    order = np.argsort(idx, kind="stable")
    sidx = idx[order]
    w = weights[order]
    cuts = np.flatnonzero(np.r_[True, sidx[1:] != sidx[:-1]])
    out[sidx[cuts]] = np.add.reduceat(w, cuts)
    return out


def peak(
    graph: Graph, order: Sequence[int] | np.ndarray, scenarios: Scenarios | None = None
) -> np.ndarray:
    """Peak bytes per scenario."""
    return simulate(graph, order, scenarios).peak


# -- lower bounds ------------------------------------------------------------------------

# Graphs up to this many ops get the ancestor/descendant ("must cross") bound; it needs
# n^2 bits of reachability.
CROSSING_BOUND_MAX_OPS = 6000


def reachability(graph: Graph, topo: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Boolean ``anc[v, u]`` (u is a strict ancestor of v) and ``desc = anc.T``."""
    n = graph.n_ops
    topo = graph.topological_order() if topo is None else topo
    anc = np.zeros((n, n), dtype=bool)
    for v in topo:
        p = graph.preds(v)
        if p.size:
            anc[v] = anc[p].any(axis=0)
            anc[v, p] = True
    return anc, anc.T


def op_lower_bounds(
    graph: Graph, scenarios: Scenarios | None = None, crossing: bool | None = None
) -> np.ndarray:
    """Bytes that must be live while each op runs, in every order: ``[S, n_ops]``.

    For op v: the buffers it uses and defines, its transient bytes, and every buffer that
    is forced live across it: defined by an ancestor of v (or live-in) and still needed by a
    descendant of v (or live-out). Any order's peak is at least the max over v.
    """
    scenarios = scenarios or static()
    n = graph.n_ops
    sizes = graph.sizes(scenarios)
    n_s = len(scenarios)
    if n == 0:
        return np.zeros((n_s, 0), dtype=np.int64)
    if crossing is None:
        crossing = n <= CROSSING_BOUND_MAX_OPS
    if crossing:
        anc, desc = reachability(graph)
        # live[v, b]: buffer b is live at v in every order
        before = anc[:, graph.buffer_def] | (graph.buffer_def[None, :] == np.arange(n)[:, None])
        before |= graph.buffer_live_in[None, :]
        after = np.zeros((n, graph.n_buffers), dtype=bool)
        rows = np.repeat(np.arange(graph.n_buffers), np.diff(graph.buffer_users_ptr))
        users = graph.buffer_users_idx
        # v is at or before some user u of b  <=>  v == u or v is an ancestor of u
        for b_chunk in np.array_split(np.arange(graph.n_buffers), max(1, graph.n_buffers // 512)):
            if b_chunk.size == 0:
                continue
            sel = np.isin(rows, b_chunk)
            ub, uu = rows[sel], users[sel]
            # desc[u] rows are the ancestors... anc[u] gives ancestors of u; v in anc[u] or v == u
            blk = np.zeros((n, b_chunk.size), dtype=bool)
            local = np.searchsorted(b_chunk, ub)
            for lb, u in zip(local, uu):
                blk[:, lb] |= anc[u]
                blk[u, lb] = True
            after[:, b_chunk] = blk
        after |= graph.buffer_live_out[None, :]
        # a buffer with no users is live only at its own op
        no_users = np.diff(graph.buffer_users_ptr) == 0
        after[:, no_users & ~graph.buffer_live_out] = False
        after[
            graph.buffer_def[no_users & ~graph.buffer_live_out],
            np.flatnonzero(no_users & ~graph.buffer_live_out),
        ] = True
        live = before & after
        lb = (live.astype(np.int64) @ sizes.T).T
    else:
        # Cheap bound: what v touches, plus buffers live for the whole program.
        always = graph.buffer_live_in & graph.buffer_live_out
        masked = np.where(always[None, :], 0, sizes)
        lb = _segment_sums(masked, graph.uses_idx, graph.uses_ptr)
        lb += _segment_sums(masked, graph.defs_idx, graph.defs_ptr)
        lb += sizes[:, always].sum(axis=1)[:, None]
    lb += graph.transient_bytes(scenarios)
    return lb


def _segment_sums(values: np.ndarray, idx: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """Per CSR row, the sum of ``values[:, idx[row]]``: ``[S, n_rows]``."""
    n_rows = len(ptr) - 1
    out = np.zeros((values.shape[0], n_rows), dtype=np.int64)
    nonempty = np.diff(ptr) > 0
    if idx.size:
        out[:, nonempty] = np.add.reduceat(values[:, idx], ptr[:-1][nonempty], axis=1)
    return out


def lower_bound(
    graph: Graph, scenarios: Scenarios | None = None, crossing: bool | None = None
) -> np.ndarray:
    """A peak that no order can beat, per scenario."""
    scenarios = scenarios or static()
    sizes = graph.sizes(scenarios)
    if graph.n_ops == 0:
        return np.zeros(len(scenarios), dtype=np.int64)
    per_op = op_lower_bounds(graph, scenarios, crossing).max(axis=1)
    # All live-in buffers are live at the first step, all live-out ones at the last step.
    first = sizes[:, graph.buffer_live_in].sum(axis=1)
    last = sizes[:, graph.buffer_live_out].sum(axis=1)
    return np.maximum(per_op, np.maximum(first, last))
