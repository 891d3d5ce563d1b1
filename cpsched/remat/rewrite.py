"""A plan written into the graph: clones, host copies and frees as ops and buffers."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from cpsched.core.graph import Graph, GraphBuilder, OpKind
from cpsched.core.transforms import op_costs
from cpsched.remat.events import COMPUTE, EVICT, FREE, PREFETCH, Event


def plan_to_graph(
    graph: Graph, events: Sequence[Event], name: str | None = None
) -> tuple[Graph, list[int]]:
    """The plan as a new graph and its order: clones become ops ``op.remat1``, ``.remat2``
    ...; an eviction becomes ``buf.evict1.start`` (copy-start, defines a host buffer in
    memory space 5) and ``buf.evict1.done`` (copy-done, the last device reader of the
    buffer) at its ``free``; a prefetch becomes ``buf.prefetch1.start`` (copy-start, defines
    the new device copy) and ``buf.prefetch1.done`` right before the first op that reads
    it. With eager frees the simulator's peak of the returned order equals the replay's."""
    gb = GraphBuilder(name or f"{graph.name}.remat")
    gb.meta.update(dict(graph.meta))
    gb.meta["remat_of"] = graph.name
    n_clone: dict[int, int] = defaultdict(int)
    n_ev: dict[int, int] = defaultdict(int)
    n_pf: dict[int, int] = defaultdict(int)
    first_inst: dict[int, int] = {}  # original op -> new op of its first compute
    cur: dict[int, int] = {}  # original buffer -> new buffer of its device copy
    bdef: dict[int, int] = {}  # new buffer -> new defining op
    host_buf: dict[int, int] = {}  # original buffer -> new host buffer
    evict_start: dict[int, tuple[int, str]] = {}
    pending_in: dict[int, tuple[int, int, str]] = {}
    order: list[int] = []

    def add(name_, opcode, kind, **kw) -> int:
        i = gb.add_op(name_, opcode, kind, **kw)
        order.append(i)
        return i

    def new_buf(op, size, name_, **kw) -> int:
        j = gb.add_buffer(op, size, name=name_, **kw)
        bdef[j] = op
        return j

    for code, x in events:
        code, x = int(code), int(x)
        if code == COMPUTE:
            for b in graph.uses(x):
                b = int(b)
                if b in pending_in:
                    s_op, nbuf, dname = pending_in.pop(b)
                    d = add(dname, "copy-done", OpKind.ASYNC_DONE, operands=[s_op])
                    gb.pair_async(s_op, d)
                    gb.add_buffer_user(nbuf, d)
            again = x in first_inst
            operand_ops = [bdef[cur[int(b)]] for b in graph.uses(x) if int(b) in cur]
            attrs = dict(graph.attrs(x))
            if again:
                n_clone[x] += 1
                nm = f"{graph.op_names[x]}.remat{n_clone[x]}"
                ctrl: list[int] = []
                attrs["remat_of"] = graph.op_names[x]
            else:
                nm = graph.op_names[x]
                ctrl = [first_inst[int(c)] for c in graph.control_preds(x) if int(c) in first_inst]
                operand_ops += [
                    first_inst[int(o)] for o in graph.operands(x) if int(o) in first_inst
                ]
            i = add(
                nm,
                graph.opcodes[x],
                OpKind(int(graph.kinds[x])),
                operands=operand_ops,
                control_preds=ctrl,
                **op_costs(graph, x),
                attrs=attrs,
            )
            if not again and x in graph.collectives:
                gb.set_collective(i, graph.collectives[x])
            if not again and int(graph.async_start[x]) in first_inst:
                # an async pair of the graph stays a pair (its done waits for the transfer)
                gb.pair_async(first_inst[int(graph.async_start[x])], i)
            for b in graph.uses(x):
                if int(b) in cur:
                    gb.add_buffer_user(cur[int(b)], i)
            if not again:
                first_inst[x] = i
            for b in graph.defines(x):
                b = int(b)
                live_in = bool(graph.buffer_live_in[b]) and not again
                suffix = f".remat{n_clone[x]}" if again else ""
                cur[b] = new_buf(
                    i,
                    graph.buffer_sizes[b],
                    graph.buffer_names[b] + suffix,
                    live_in=live_in,
                    space=int(graph.buffer_space[b]),
                )
        elif code == EVICT:
            n_ev[x] += 1
            base = f"{graph.buffer_names[x]}.evict{n_ev[x]}"
            s_op = add(base + ".start", "copy-start", OpKind.ASYNC_START, operands=[bdef[cur[x]]])
            gb.add_buffer_user(cur[x], s_op)
            host_buf[x] = new_buf(s_op, graph.buffer_sizes[x], base + ".host", space=5)
            evict_start[x] = (s_op, base)
        elif code == FREE:
            if x in evict_start:
                s_op, base = evict_start.pop(x)
                d = add(base + ".done", "copy-done", OpKind.ASYNC_DONE, operands=[s_op])
                gb.pair_async(s_op, d)
                gb.add_buffer_user(cur[x], d)
                gb.add_buffer_user(host_buf[x], d)
            if x in pending_in:  # prefetched and dropped unread: finish the copy first
                s_op, nbuf, dname = pending_in.pop(x)
                d = add(dname, "copy-done", OpKind.ASYNC_DONE, operands=[s_op])
                gb.pair_async(s_op, d)
                gb.add_buffer_user(nbuf, d)
            cur.pop(x, None)
        elif code == PREFETCH:
            n_pf[x] += 1
            base = f"{graph.buffer_names[x]}.prefetch{n_pf[x]}"
            h = host_buf[x]
            s_op = add(base + ".start", "copy-start", OpKind.ASYNC_START, operands=[bdef[h]])
            gb.add_buffer_user(h, s_op)
            cur[x] = new_buf(s_op, graph.buffer_sizes[x], base)
            pending_in[x] = (s_op, cur[x], base + ".done")
    for s_op, nbuf, dname in list(pending_in.values()):
        d = add(dname, "copy-done", OpKind.ASYNC_DONE, operands=[s_op])
        gb.pair_async(s_op, d)
        gb.add_buffer_user(nbuf, d)
    for b in np.flatnonzero(graph.buffer_live_out):
        if int(b) in cur:
            gb.set_live_out(cur[int(b)])
    gb.original_order = order
    return gb.build(), order
