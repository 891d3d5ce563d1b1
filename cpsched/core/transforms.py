"""Graph-to-graph transforms: ``convert_sync_collectives`` splits sync collectives into
start/done pairs (what XLA's ``AsyncCollectiveCreator`` does before the latency hiding
scheduler runs), and ``pair_names`` finds the pair made of an op."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from cpsched.core.graph import Collective, Graph, GraphBuilder, OpKind

SPLIT_OPCODES = ("all-reduce", "all-gather", "collective-permute", "all-to-all", "reduce-scatter")
# XLA has dedicated start/done opcodes for these; the others become async-start/done.
_DEDICATED = ("all-reduce", "all-gather", "collective-permute")


def op_costs(graph: Graph, i: int) -> dict[str, Any]:
    """Op ``i``'s cost figures as ``GraphBuilder.add_op`` takes them, for a copy of it."""
    return {
        "flops": graph.flops[i],
        "bytes_accessed": graph.bytes_accessed[i],
        "transient": graph.transient[i],
    }


def _is_splittable(graph: Graph, i: int) -> bool:
    return int(graph.kinds[i]) == OpKind.COMPUTE and graph.opcodes[i] in SPLIT_OPCODES


def _add_pair(
    b: GraphBuilder,
    graph: Graph,
    i: int,
    operands: list[int],
    ctrl: list[int],
    attrs: dict,
    fresh: Callable[[str], str],
    names: set[str],
) -> None:
    """Op ``i`` of ``graph`` as its start and done in ``b``; the start carries the
    collective, now async."""
    opc = graph.opcodes[i]
    name = graph.op_names[i]
    sname, dname = fresh(f"{name}-start"), fresh(f"{name}-done")
    names.discard(name)
    if opc in _DEDICATED:
        s_op, d_op, extra = f"{opc}-start", f"{opc}-done", {}
    else:
        s_op, d_op, extra = "async-start", "async-done", {"async_wrapped_opcode": opc}
    a2 = {**attrs, **extra, "converted_from": name}
    a2.pop("is_sync", None)
    s = b.add_op(
        sname,
        s_op,
        OpKind.ASYNC_START,
        operands=operands,
        control_preds=ctrl,
        **op_costs(graph, i),
        attrs=a2,
    )
    d = b.add_op(dname, d_op, OpKind.ASYNC_DONE, operands=[s], attrs=a2)
    b.pair_async(s, d)
    c = graph.collectives.get(i)
    if c is None:
        c = Collective(
            kind=opc,
            bytes=graph.buffer_sizes[graph.defines(i)[0]]
            if graph.defines(i).size
            else graph.bytes_accessed[i],
        )
    b.set_collective(
        s, Collective(c.kind, c.bytes, c.group_size, c.replica_groups, c.channel_id, False)
    )


def _add_buffers(
    b: GraphBuilder,
    graph: Graph,
    is_split: np.ndarray,
    new_of: np.ndarray,
    start_of: np.ndarray,
    keep_inputs_live: bool,
) -> None:
    """``graph``'s buffers in ``b``: defined by the start for split ops; users of split ops
    become their starts (and dones, with ``keep_inputs_live``)."""
    for j in range(graph.n_buffers):
        d = int(graph.buffer_def[j])
        dnew = int(start_of[d]) if is_split[d] else int(new_of[d])
        users = []
        for u in graph.buffer_users(j):
            u = int(u)
            if is_split[u]:
                users.append(int(start_of[u]))  # the start reads the input...
                if keep_inputs_live:
                    users.append(int(new_of[u]))  # ...and it stays until the done
            else:
                users.append(int(new_of[u]))
        if is_split[d]:
            users.append(int(new_of[d]))  # the done uses the in-flight buffer
        b.add_buffer(
            dnew,
            graph.buffer_sizes[j],
            users=users,
            name=graph.buffer_names[j],
            live_in=bool(graph.buffer_live_in[j]),
            live_out=bool(graph.buffer_live_out[j]),
            space=int(graph.buffer_space[j]),
        )


def _async_state_bytes(opcode: str, n_operands: int) -> int:
    """What XLA's async form of a collective allocates besides its result, in flight from
    start to done: the start's tuple table (8 bytes a pointer), collective-permute's two
    u32 contexts, and an async-start's operand tuple."""
    if opcode == "all-reduce":
        return 0
    if opcode == "all-gather":
        return 8 * 2
    if opcode == "collective-permute":
        return 8 * 4 + 4 + 4
    return 8 * 2 + 8 * max(n_operands, 1)


def convert_sync_collectives(graph: Graph, keep_inputs_live: bool = True) -> Graph:
    """Split every sync collective op into an ``ASYNC_START`` + ``ASYNC_DONE`` pair.

    For op ``x`` (opcode all-reduce / all-gather / collective-permute / all-to-all /
    reduce-scatter, kind COMPUTE):
    - ``x-start`` (opcode ``<op>-start``; all-to-all and reduce-scatter become
      ``async-start`` with attr ``async_wrapped_opcode``) takes x's operands and control
      predecessors, its flops/bytes/transient and its ``Collective``, and *defines* x's
      result buffers (the in-flight buffers);
    - ``x-done`` (``<op>-done`` / ``async-done``) has the start as its only operand, *uses*
      the in-flight buffers, and takes over x's control successors and data users; with
      ``keep_inputs_live`` it also uses x's input buffers, since the send buffer cannot be
      freed while the transfer is in flight.
    Both keep x's attrs (so ``op_name`` metadata survives) plus ``converted_from: x``.
    The input order (if any) gets ``x-start, x-done`` at x's position. Other ops, buffers
    and the graph's meta are copied unchanged. Returns the graph itself if nothing splits.
    """
    n = graph.n_ops
    split = [i for i in range(n) if _is_splittable(graph, i)]
    if not split:
        return graph
    is_split = np.zeros(n, dtype=bool)
    is_split[split] = True
    # new index of each old op (the done for a split op); the start sits right before it
    shift = np.cumsum(is_split)  # starts inserted at or before i
    new_of = np.arange(n) + shift  # old i -> new index (done for split ops)
    start_of = new_of - 1  # valid for split ops only
    names = set(graph.op_names)

    def fresh(base: str) -> str:
        name, k = base, 1
        while name in names:
            name = f"{base}.{k}"
            k += 1
        names.add(name)
        return name

    b = GraphBuilder(graph.name)
    for i in range(n):
        opc = graph.opcodes[i]
        attrs = dict(graph.op_attrs.get(i, {}))
        operands = [int(new_of[o]) for o in graph.operands(i)]
        ctrl = []
        for c in graph.control_preds(i):
            c = int(c)
            ctrl.append(int(new_of[c]))  # a split control pred finishes at its done
        if not is_split[i]:
            b.add_op(
                graph.op_names[i],
                opc,
                graph.kind(i),
                operands=operands,
                control_preds=ctrl,
                **op_costs(graph, i),
                attrs=attrs or None,
            )
            continue
        _add_pair(b, graph, i, operands, ctrl, attrs, fresh, names)
    _add_buffers(b, graph, is_split, new_of, start_of, keep_inputs_live)
    # what XLA's async form allocates besides the result, in flight from start to done:
    # the start's tuple table (8 bytes a pointer), collective-permute's two u32 contexts,
    # and an async-start's operand tuple
    for i in split:
        state = _async_state_bytes(graph.opcodes[i], len(graph.operands(i)))
        if state:
            b.add_buffer(
                int(start_of[i]),
                state,
                users=[int(new_of[i])],
                name=fresh(f"{graph.op_names[i]}.async_state"),
            )
    # existing async pairs
    for k in map(int, np.flatnonzero(graph.async_start >= 0)):
        b.pair_async(int(new_of[graph.async_start[k]]), int(new_of[k]))
    for k, c in graph.collectives.items():
        if not is_split[k]:
            b.set_collective(int(new_of[k]), c)
    if graph.original_order is not None:
        order = []
        for i in graph.original_order:
            if is_split[i]:
                order.extend([int(start_of[i]), int(new_of[i])])
            else:
                order.append(int(new_of[i]))
        b.original_order = order
    b.meta.update(dict(graph.meta))
    b.meta["async_collectives"] = True
    return b.build()


def pair_names(graph: Graph, original: str) -> tuple[str, str]:
    """Names of the start and done that ``convert_sync_collectives`` made from ``original``."""
    s = d = None
    for i, a in graph.op_attrs.items():
        if a.get("converted_from") == original:
            if int(graph.kinds[i]) == OpKind.ASYNC_START:
                s = graph.op_names[i]
            elif int(graph.kinds[i]) == OpKind.ASYNC_DONE:
                d = graph.op_names[i]
    if s is None or d is None:
        raise KeyError(f"{original!r} was not split into a start/done pair")
    return s, d
