"""XLA's GPU schedule post-processor and the alternate "eager cluster" post-processor.

Registered methods (family ``overlap``), both applied to an input order: option ``order``
(op indices or names), else the graph's own order, else the XLA GPU memory-scheduler
pipeline (``xla-default`` with each candidate post-processed before scoring).

``gpu-postprocess`` = XLA's ``PostProcessSchedule``:
1. sync collectives: a start whose collective is ``is_sync`` is moved down to sit right
   before its done;
2. forward pass: walk the order; after emitting an op, emit each of its not-yet-emitted
   successors (data users in creation order, then control successors, then other
   dependents) that is EARLIEST and whose dependences are all emitted;
3. backward pass: walk the result backwards; after emitting an op (to the front), emit each
   predecessor (operands, control predecessors, other dependences) that is LATEST and
   whose dependents are all emitted.
EARLIEST: ``all-reduce-start`` / ``collective-permute-start`` that are not sync,
``async-start``, custom calls with ``custom_call_schedule = SCHEDULE_EARLIEST``.
LATEST: ``all-reduce-done`` / ``collective-permute-done`` whose start is EARLIEST,
``async-done``, custom calls with ``SCHEDULE_LATEST``. All-gather, all-to-all, send/recv
and copy pairs are not moved (as in XLA).

``eager-cluster`` = the post-processor proposed in TensorFlow PR #58756 (never merged;
re-implemented from the PR's description and the seed slides): a backward sweep in which
each EARLIEST op pulls the not-yet-placed cluster of its transitive predecessors up with
it, then a forward sweep in which each LATEST op pushes the cluster of its transitive
successors down with it. Ops in no cluster keep their relative order. Clusters sit at the
very front (EARLIEST) / back (LATEST), ordered by their root's position, so start→done
distances grow at the price of longer buffer lifetimes. The sync-collective step runs
first, as in ``gpu-postprocess``.

Both only reorder; a dependence is never broken (the passes only place an op after all its
predecessors), which the tests check on random graphs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cpsched.core.adjacency import adjacency
from cpsched.core.gc_pause import without_gc
from cpsched.core.graph import Graph
from cpsched.core.opclass import (
    custom_call_schedule,
    is_async_collective_done,
    is_async_collective_start,
    is_sync_collective,
)
from cpsched.core.order import check_order_option
from cpsched.core.scenarios import Scenarios
from cpsched.heuristics.xla_memory import xla_default
from cpsched.methods import register

_EARLY_OPS = ("all-reduce-start", "collective-permute-start")
_LATE_OPS = ("all-reduce-done", "collective-permute-done")


def is_earliest(graph: Graph, i: int) -> bool:
    op = graph.opcodes[i]
    if op in _EARLY_OPS:
        return not is_sync_collective(graph, i)
    if op == "async-start":
        return True
    if op == "custom-call":
        return custom_call_schedule(graph, i) == "SCHEDULE_EARLIEST"
    return False


def is_latest(graph: Graph, i: int) -> bool:
    op = graph.opcodes[i]
    if op in _LATE_OPS:
        s = int(graph.async_start[i])
        if s < 0:
            ops = graph.operands(i)
            s = int(ops[0]) if ops.size else -1
        return s >= 0 and is_earliest(graph, s)
    if op == "async-done":
        return True
    if op == "custom-call":
        return custom_call_schedule(graph, i) == "SCHEDULE_LATEST"
    return False


def sync_collectives_step(graph: Graph, order: Sequence[int]) -> list[int]:
    """Move each sync collective start to just before its done."""
    adj = adjacency(graph)
    held = set()
    pos = None
    for i in order:
        if is_async_collective_start(graph, i) and is_sync_collective(graph, i):
            d = int(graph.async_done[i])
            if d < 0:
                continue
            if pos is None:
                pos = {op: k for k, op in enumerate(order)}
            # only when nothing before the done depends on the start (XLA assumes so)
            if all(pos[s] >= pos[d] for s in adj.succs[i]):
                held.add(i)
    if not held:
        return list(order)
    out = []
    for i in order:
        if i in held:
            continue
        if is_async_collective_done(graph, i):
            s = int(graph.async_start[i])
            if s in held:
                out.append(s)
        out.append(i)
    return out


def early_late_step(graph: Graph, order: Sequence[int]) -> list[int]:
    """XLA's ``PostprocessorToScheduleAsEarlyOrLateAsPossible``."""
    n = graph.n_ops
    adj = adjacency(graph)
    early = [False] * n
    late = [False] * n
    for i in range(n):
        early[i] = is_earliest(graph, i)
        late[i] = is_latest(graph, i)
    preds, succs = adj.preds, adj.succs

    fwd = _pull(order, early, succs, preds) if any(early) else list(order)
    if not any(late):
        return fwd
    # the same pass on the reversed order and graph: each late op right before its last user
    rev = _pull(list(reversed(fwd)), late, preds, succs)
    rev.reverse()
    return rev


def _pull(order: Sequence[int], marked, nexts, prevs) -> list[int]:
    """``order`` with each marked op pulled to right after the op that makes it ready (the
    last of its ``prevs`` in the order), checked on each op's ``nexts``."""
    placed = [False] * len(marked)
    out: list[int] = []
    for i in order:
        if placed[i]:
            continue
        placed[i] = True
        out.append(i)
        for u in nexts[i]:
            if not placed[u] and marked[u] and all(placed[p] for p in prevs[u]):
                placed[u] = True
                out.append(u)
    return out


@without_gc
def postprocess_order(graph: Graph, order: Sequence[int]) -> list[int]:
    """XLA's ``PostProcessSchedule`` applied to ``order``."""
    out = early_late_step(graph, sync_collectives_step(graph, order))
    if len(out) != len(order):  # pragma: no cover - guarded by construction
        raise RuntimeError("post-processing changed the number of ops")
    return out


def _cluster_pass(graph: Graph, seq: Sequence[int], forward: bool) -> list[int]:
    """One sweep of the eager-cluster post-processor.

    ``forward=False``: walk ``seq`` backwards; EARLIEST roots claim their predecessors.
    ``forward=True``: walk ``seq`` backwards too (it is the reversed output of the first
    sweep); LATEST roots claim their successors. The result is reversed with respect to the
    program order after the first sweep and in program order after the second.
    """
    adj = adjacency(graph)
    deps = adj.succs if forward else adj.preds
    root_of: dict[int, int] = {}
    groups: list[list[int]] = []
    free: list[int] = []
    for i in reversed(seq):
        is_root = is_latest(graph, i) if forward else is_earliest(graph, i)
        if is_root:
            k = len(groups)
            groups.append([i])
        elif i in root_of:
            k = root_of[i]
            groups[k].append(i)
        else:
            free.append(i)
            continue
        for d in deps[i]:
            if root_of.get(d, -1) < k:
                root_of[d] = k
    out = free
    for g in groups:
        out.extend(g)
    return out


@without_gc
def eager_cluster_order(graph: Graph, order: Sequence[int]) -> list[int]:
    seq = sync_collectives_step(graph, order)
    bwd = _cluster_pass(graph, seq, forward=False)  # reversed program order
    return _cluster_pass(graph, bwd, forward=True)  # program order


def _input_order(
    graph: Graph, scenarios: Scenarios | None, options: dict
) -> tuple[list[int], bool]:
    """The order to post-process, and whether it is already post-processed."""
    order = check_order_option(graph, options.get("order"))
    if order is not None:
        return order, False
    if graph.original_order is not None:
        return list(graph.original_order), False
    opts = {k: v for k, v in options.items() if k != "postprocess"}
    return xla_default(graph, scenarios, postprocess=postprocess_order, **opts), True


@register(
    "gpu-postprocess",
    "XLA GPU PostProcessSchedule: sync pairs together, async starts earliest, dones latest",
    "overlap",
)
def gpu_postprocess(graph: Graph, scenarios: Scenarios | None = None, **options: Any) -> list[int]:
    order, done = _input_order(graph, scenarios, options)
    return order if done else postprocess_order(graph, order)


@register(
    "eager-cluster",
    "Alternate GPU post-processor (TF PR #58756): EARLIEST/LATEST ops "
    "pull their dependency clusters",
    "overlap",
)
def eager_cluster(graph: Graph, scenarios: Scenarios | None = None, **options: Any) -> list[int]:
    order = check_order_option(graph, options.get("order"))
    if order is None:
        order = list(graph.original_order) if graph.original_order is not None else None
    if order is None:
        opts = {k: v for k, v in options.items() if k != "postprocess"}
        order = xla_default(graph, scenarios, **opts)
    return eager_cluster_order(graph, order)


def start_done_distances(graph: Graph, order: Sequence[int]) -> dict[str, int]:
    """Steps between each async start and its done under ``order`` (start name -> distance)."""
    pos = {i: k for k, i in enumerate(order)}
    out = {}
    for s in range(graph.n_ops):
        d = int(graph.async_done[s])
        if d >= 0:
            out[graph.op_names[s]] = pos[d] - pos[s]
    return out


__all__ = [
    "postprocess_order",
    "eager_cluster_order",
    "sync_collectives_step",
    "early_late_step",
    "is_earliest",
    "is_latest",
    "gpu_postprocess",
    "eager_cluster",
    "start_done_distances",
]
