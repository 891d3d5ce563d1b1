"""The remat problem's data: integer scaling of sizes and times, the proven memory minimum,
the model spec (``Spec``), and the clone and eviction candidates a fixed order offers."""

from __future__ import annotations

import math
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import reduce

import numpy as np

from cpsched.analysis.memory import live_ranges, simulate
from cpsched.core.errors import InfeasibleError
from cpsched.core.graph import Graph
from cpsched.core.scenarios import Scenarios, static
from cpsched.core.units import format_bytes_exact
from cpsched.remat.policy import (
    evictable_buffers,
    eviction_windows,
    inplace_writers,
    recomputable_ops,
)
from cpsched.remat.result import RematResult
from cpsched.remat.skeleton import Regen, Skeleton, materialize_tagged

# -- scaling --------------------------------------------------------------------------------


def gcd_scale(sizes: np.ndarray, trans: np.ndarray) -> np.ndarray:
    """Per scenario, the GCD of every nonzero size and transient (1 if none)."""
    out = np.ones(sizes.shape[0], dtype=np.int64)
    for s in range(sizes.shape[0]):
        vals = np.concatenate([sizes[s][sizes[s] > 0], trans[s][trans[s] > 0]])
        if vals.size:
            out[s] = max(1, int(reduce(math.gcd, (int(v) for v in np.unique(vals)))))
    return out


def time_scale(dur: np.ndarray) -> float:
    """Factor that turns op times into integers with ~1e-7 relative resolution."""
    tot = float(dur.sum(axis=1).max()) if dur.size else 0.0
    if tot <= 0:
        return 1.0
    if np.allclose(dur, np.round(dur)) and tot <= 2e9:
        return 1.0 if tot >= 1e5 else 1e5 / tot
    return 1e7 / tot


# -- proven minimum ---------------------------------------------------------------------------


def min_memory_bound(
    graph: Graph, scenarios: Scenarios | None = None, order: Sequence[int] | None = None
) -> tuple[np.ndarray, list[str]]:
    """Bytes no plan can go below, per scenario, with the reason: every op needs its inputs,
    outputs and transient bytes at once; program inputs are all resident before the first
    op and program outputs after the last; buffers that can be neither recomputed nor
    evicted (pinned) stay from their definition to their last reader — with a fixed
    ``order`` exactly, else only across ops that must come between (ancestors/descendants)."""
    sc = scenarios or static()
    sizes = graph.sizes(sc) if graph.n_buffers else np.zeros((len(sc), 0), dtype=np.int64)
    trans = graph.transient_bytes(sc)
    n_s = len(sc)
    clon = recomputable_ops(graph)
    evic = evictable_buffers(graph)
    pinned = ~(clon[graph.buffer_def] | evic)
    best = np.zeros(n_s, dtype=np.int64)
    why = [""] * n_s
    li = sizes[:, graph.buffer_live_in].sum(axis=1)
    lo = sizes[:, graph.buffer_live_out].sum(axis=1)
    for s in range(n_s):
        if li[s] > best[s]:
            best[s], why[s] = li[s], "program inputs resident at the start"
        if lo[s] > best[s]:
            best[s], why[s] = lo[s], "program outputs resident at the end"
    if graph.n_ops == 0:
        return best, why
    if order is not None:
        start, end = live_ranges(graph, order)
        pos = np.empty(graph.n_ops, dtype=np.int64)
        pos[np.asarray(order)] = np.arange(len(order))
    for v in range(graph.n_ops):
        touch = set(int(b) for b in graph.uses(v)) | set(int(b) for b in graph.defines(v))
        if order is not None:
            t = pos[v]
            extra = [
                b for b in np.flatnonzero(pinned & (start <= t) & (end >= t)) if int(b) not in touch
            ]
        else:
            extra = []
        idx = np.fromiter(touch | set(int(b) for b in extra), dtype=np.int64)
        tot = sizes[:, idx].sum(axis=1) + trans[:, v] if idx.size else trans[:, v].copy()
        for s in range(n_s):
            if tot[s] > best[s]:
                best[s] = tot[s]
                why[s] = (
                    f"op {graph.op_names[v]!r} needs {format_bytes_exact(tot[s])} at once (its inputs, "
                    "outputs and transient"
                    + (", plus pinned buffers live across it" if extra else "")
                    + ")"
                )
    return best, why


def check_budget(
    graph: Graph,
    scenarios: Scenarios,
    budget: np.ndarray,
    order: Sequence[int] | None = None,
) -> np.ndarray:
    """The proven minimum per scenario (``min_memory_bound``); raises ``InfeasibleError``
    naming the scenario and the reason when ``budget`` is below it."""
    lb, why = min_memory_bound(graph, scenarios, order)
    bad = np.flatnonzero(np.asarray(budget) < lb)
    if bad.size:
        s = int(bad[0])
        raise InfeasibleError(
            f"budget {format_bytes_exact(budget[s])} is below the proven minimum {format_bytes_exact(lb[s])} "
            f"in scenario {scenarios.names[s]}: {why[s]}"
        )
    return lb


@dataclass
class Spec:
    graph: Graph
    n_s: int
    sizes: np.ndarray  # [S, B] scaled device sizes
    trans: np.ndarray  # [S, n] scaled transient
    cap: np.ndarray | None  # [S] scaled budget (None: peak objective)
    dur: np.ndarray  # [S, n] integer times
    weights: np.ndarray  # [S] integer objective weights
    G: int
    order: list[int] | None  # fixed main order, or None (joint)
    regen_ops: set[int]
    copies: int
    stage_domain: dict[int, list[int]]  # fixed order: allowed clone steps per op
    # buffer -> (a, c, free steps, prefetch steps): last read before its gap, next read after
    # it, and the main steps before which its device copy may be freed / brought back
    evict_cands: dict[int, tuple[int, int, list[int], list[int]]]
    tau: np.ndarray | None  # [S, B] integer transfer times
    streams: int = 2
    objective: str = "time"
    overhead_cap: np.ndarray | None = None  # [S] integer added-time cap (peak objective)
    writers: list[list[int]] = field(default_factory=list)


# -- candidates ------------------------------------------------------------------------------


def profile_hot(
    graph: Graph, order: Sequence[int], sc: Scenarios, bud: np.ndarray, margin: float
) -> np.ndarray:
    """Steps whose usage exceeds ``margin * budget`` in some scenario."""
    prof = simulate(graph, order, sc)
    return np.asarray((prof.usage > (margin * bud)[:, None]).any(axis=0))


class ModelTooLarge(Exception):
    """A model would not fit the time (or memory) it may take: it is skipped."""


def clone_candidates(
    graph: Graph,
    order: Sequence[int],
    sc: Scenarios,
    bud: np.ndarray,
    *,
    evict: bool,
    dur: np.ndarray,
    tau_max: np.ndarray | None,
    margin: float,
    depth: int,
    max_regen: int | None,
    extra_ops: AbstractSet[int] = frozenset(),
    window: int = 6,
    max_positions: int | None = None,
):
    """Clone candidates (producers of buffers resident across over-budget steps without
    being read there, and their producers up to ``depth``), the steps where each clone may
    go, and eviction candidates (one gap per buffer).

    Raises ``ModelTooLarge`` once the clone positions (steps summed over candidates) pass
    ``max_positions``: they grow with the square of the graph (46 million, 3.4 GB, on a
    10,000-op layered graph) and the model built on them takes about 40 us each."""
    n = graph.n_ops
    pos = np.empty(n, dtype=np.int64)
    pos[np.asarray(order)] = np.arange(n)
    clon = recomputable_ops(graph)
    hot = profile_hot(graph, order, sc, bud, margin)
    cum_hot = np.concatenate([[0], np.cumsum(hot)])
    reads_pos = [sorted(int(pos[u]) for u in graph.buffer_users(b)) for b in range(graph.n_buffers)]
    score: dict[int, float] = {}
    for b in range(graph.n_buffers):
        v = int(graph.buffer_def[b])
        rp = reads_pos[b]
        if not rp:
            continue
        seq = [int(pos[v])] + rp
        # hot steps strictly inside gaps between consecutive touches
        gain = 0
        for a, c in zip(seq, seq[1:]):
            if c - a > 1:
                gain += int(cum_hot[c] - cum_hot[a + 1])
        if gain and clon[v]:
            score[v] = score.get(v, 0.0) + gain * float(graph.sizes(sc)[:, b].max())
    regen = set(score)
    if max_regen is not None and len(regen) > max_regen:
        regen = set(sorted(regen, key=lambda v: -score[v])[:max_regen])
    frontier = set(regen)
    for _ in range(depth):
        nxt = set()
        for v in frontier:
            for b in graph.uses(v):
                p = int(graph.buffer_def[int(b)])
                if clon[p] and p not in regen:
                    nxt.add(p)
        regen |= nxt
        frontier = nxt
    regen |= {v for v in extra_ops if clon[v]}
    writers = inplace_writers(graph)
    # allowed clone steps: main read steps of the op's buffers, and (transitively) the steps
    # of clone candidates that read them; never at/after an in-place writer of an input
    dom: dict[int, set[int]] = {}
    positions_so_far = 0
    for v in sorted(regen, key=lambda v: -int(pos[v])):
        steps: set[int] = set()
        for b in graph.defines(v):
            steps.update(reads_pos[int(b)])
            for u in graph.buffer_users(int(b)):
                if int(u) in dom:
                    steps |= dom[int(u)]
        limit = n
        for c in graph.uses(v):
            for w in writers[int(c)]:
                limit = min(limit, int(pos[w]))
        dom[v] = {t for t in steps if pos[v] < t <= limit and t < n}
        positions_so_far += len(dom[v])
        if max_positions is not None and positions_so_far > max_positions:
            raise ModelTooLarge(
                f"over {max_positions:,} clone positions at {len(dom)} of {len(regen)} candidates"
            )
    stage_domain = {v: sorted(s) for v, s in dom.items() if s}
    regen = {v for v in regen if v in stage_domain}
    ev: dict[int, tuple[int, int, list[int], list[int]]] = {}
    if evict:
        ev = eviction_windows(graph, order, hot, dur, tau_max, window)
    return regen, stage_domain, ev


def skeleton_from(result: RematResult) -> tuple[Skeleton, list[list[int]]]:
    """A plan as a model hint: only the candidates its event lists keep (a baseline may
    leave clones that serve no reader; in the model they would hold memory)."""
    kept = [sorted(materialize_tagged(result.graph, result.skeleton, a)[2]) for a in result.active]
    return result.skeleton, kept


def transfer_ticks(graph, sc, transfer, scale):
    if transfer is None:
        return None
    return np.ceil(transfer.times(graph.sizes(sc)) * scale).astype(np.int64)


def spec_common(graph, sc, bud, dur):
    sizes = graph.sizes(sc) if graph.n_buffers else np.zeros((len(sc), 0), dtype=np.int64)
    trans = graph.transient_bytes(sc)
    gs = gcd_scale(sizes, trans)
    scale = time_scale(dur)
    idur = np.round(dur * scale).astype(np.int64)
    w = sc.weights
    weights = (
        np.maximum(1, np.round(w / w.max() * 1000)).astype(np.int64)
        if len(sc) > 1
        else np.ones(1, dtype=np.int64)
    )
    cap = None if bud is None else bud // gs
    return sizes // gs[:, None], trans // gs[:, None], cap, idur, weights, scale, gs


def sub_needed(hint: tuple[Skeleton, list[list[int]]] | None, sub_slots: int) -> int:
    if hint is None:
        return sub_slots
    per: dict[int, int] = {}
    for c in hint[0].candidates:
        if isinstance(c, Regen):
            per[c.step] = per.get(c.step, 0) + 1
    return max([sub_slots] + list(per.values()))


def regens_per_op(hint) -> dict[int, int]:
    out: dict[int, int] = {}
    if hint is None:
        return out
    for c in hint[0].candidates:
        if isinstance(c, Regen):
            out[c.op] = out.get(c.op, 0) + 1
    return out
