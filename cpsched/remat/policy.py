"""What a plan may clone or evict: ops with side effects, communication or host interaction
run exactly once; in-place writers fence their inputs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cpsched.core import opcodes
from cpsched.core.graph import Graph, OpKind

# Ops that must run exactly once (side effects, communication, host interaction).
_NEVER_CLONE = frozenset(
    {
        *opcodes.COLLECTIVES,
        *opcodes.ASYNC_STARTS,
        *opcodes.ASYNC_DONES,
        *opcodes.SEND_RECV,
        *opcodes.CONTROL_FLOW,
        "async-update",
        "rng",
        "rng-bit-generator",
        "rng-get-and-update-state",
        "custom-call",
        "infeed",
        "outfeed",
        "parameter",
        "constant",
        "after-all",
        "partition-id",
        "replica-id",
        "optimization-barrier",
        "opt-barrier",
    }
) - {"ragged-all-to-all"}


def inplace_writers(graph: Graph) -> list[list[int]]:
    """Per buffer, the ops that overwrite it in place (use it and define no buffer)."""
    out: list[list[int]] = [[] for _ in range(graph.n_buffers)]
    n_defs = np.diff(graph.defs_ptr)
    for i in range(graph.n_ops):
        k = int(graph.kinds[i])
        if k in (OpKind.COMPUTE, OpKind.CONTROL_FLOW) and n_defs[i] == 0:
            for b in graph.uses(i):
                out[int(b)].append(i)
    return out


def recomputable_ops(graph: Graph) -> np.ndarray:
    """``[n_ops]`` bool: ops that may be cloned. Never collectives or any part of an async
    pair, parameters, constants, control flow, side-effecting ops, ops without a device
    output, ops whose outputs are program inputs/outputs or are overwritten in place."""
    n = graph.n_ops
    ok = np.zeros(n, dtype=bool)
    writers = inplace_writers(graph)
    for i in range(n):
        if int(graph.kinds[i]) != OpKind.COMPUTE or i in graph.collectives:
            continue
        if graph.async_start[i] >= 0 or graph.async_done[i] >= 0:
            continue
        if graph.opcodes[i] in _NEVER_CLONE or graph.opcodes[i].endswith(("-start", "-done")):
            continue
        defs = graph.defines(i)
        if defs.size == 0:
            continue
        if any(
            graph.buffer_live_in[b]
            or graph.buffer_live_out[b]
            or graph.buffer_space[b]
            or writers[b]
            for b in defs
        ):
            continue
        ok[i] = True
    return ok


def evictable_buffers(graph: Graph) -> np.ndarray:
    """``[n_buffers]`` bool: device buffers that may be copied to the host and back: not
    program inputs/outputs, not collective or async results, never overwritten in place."""
    ok = (graph.buffer_space == 0) & ~graph.buffer_live_in & ~graph.buffer_live_out
    writers = inplace_writers(graph)
    for b in np.flatnonzero(ok):
        d = int(graph.buffer_def[b])
        if (
            writers[b]
            or d in graph.collectives
            or graph.async_start[d] >= 0
            or graph.async_done[d] >= 0
            or int(graph.kinds[d]) != OpKind.COMPUTE
        ):
            ok[b] = False
    return ok


def eviction_windows(
    graph: Graph,
    order: Sequence[int],
    hot: np.ndarray,
    dur: np.ndarray,
    tau: np.ndarray | None,
    window: int = 6,
) -> dict[int, tuple[int, int, list[int], list[int]]]:
    """Per evictable buffer, its longest gap between touches that spans a ``hot`` step:
    ``(a, c, free_steps, prefetch_steps)``: last touch ``a`` before the gap, next read ``c``,
    the main steps before which the device copy can be freed (its copy-out, issued before
    step ``a+1``, is done by then at the main ops' pace) and those before which the copy-in
    can be issued (up to ``window`` steps around the latest one that still hides it, plus
    ``c`` itself). Times are the main ops' (slowest scenario), clones and stalls left out."""
    n = graph.n_ops
    pos = np.empty(n, dtype=np.int64)
    pos[np.asarray(order)] = np.arange(n)
    cum_hot = np.concatenate([[0], np.cumsum(hot)])
    T = np.concatenate([[0.0], np.cumsum(dur[:, order].max(axis=0))])
    out: dict[int, tuple[int, int, list[int], list[int]]] = {}
    for b in map(int, np.flatnonzero(evictable_buffers(graph))):
        v = int(graph.buffer_def[b])
        seq = [int(pos[v])] + sorted(int(pos[u]) for u in graph.buffer_users(b))
        best = None
        for a, c in zip(seq, seq[1:]):
            if c - a >= 2 and cum_hot[c] - cum_hot[a + 1] > 0:
                span = T[c] - T[a + 1]
                if best is None or span > best[0]:
                    best = (span, a, c)
        if best is None:
            continue
        _, a, c = best
        t = float(tau[b]) if tau is not None else 0.0
        r_min = int(np.searchsorted(T, T[a + 1] + t, side="left"))
        if r_min >= c:
            continue
        rdom = list(range(r_min, min(c, r_min + window) + 1))
        g_h = int(np.searchsorted(T, T[c] - t, side="right")) - 1
        lo = max(r_min, g_h - window)
        gdom = sorted(set(range(lo, min(c, max(g_h, lo)) + 1)) | {c})
        out[b] = (a, c, rdom, gdom)
    return out
