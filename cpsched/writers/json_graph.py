"""Write a ``Graph`` in cpsched's JSON graph format (see ``cpsched.readers.json_graph``)."""

from __future__ import annotations

from cpsched.core.graph import Graph, OpKind
from cpsched.core.plain import to_plain
from cpsched.core.scenarios import Scenarios
from cpsched.readers.json_graph import FORMAT, VERSION


def _kind_name(k: int) -> str:
    return OpKind(k).name.lower().replace("_", "-")


def graph_to_dict(graph: Graph, scenarios: Scenarios | None = None) -> dict:
    names = graph.op_names
    ops = []
    for i in range(graph.n_ops):
        op: dict = {
            "name": names[i],
            "opcode": graph.opcodes[i],
            "kind": _kind_name(graph.kinds[i]),
        }
        if graph.operands(i).size:
            op["operands"] = [names[o] for o in graph.operands(i)]
        if graph.control_preds(i).size:
            op["control_preds"] = [names[o] for o in graph.control_preds(i)]
        op.update(graph.cost_strings(i))
        if graph.async_start[i] >= 0:
            op["async_start"] = names[graph.async_start[i]]
        c = graph.collectives.get(i)
        if c is not None:
            op["collective"] = {"kind": c.kind, "bytes": str(c.bytes), "group_size": c.group_size}
            if c.replica_groups:
                op["collective"]["replica_groups"] = [list(g) for g in c.replica_groups]
            if c.channel_id is not None:
                op["collective"]["channel_id"] = c.channel_id
            if c.is_sync:
                op["collective"]["is_sync"] = True
        if i in graph.op_attrs:
            op["attrs"] = to_plain(graph.op_attrs[i])
        ops.append(op)
    buffers = []
    for j in range(graph.n_buffers):
        buf: dict = {
            "name": graph.buffer_names[j],
            "op": names[graph.buffer_def[j]],
            "size": str(graph.buffer_sizes[j]),
        }
        users = graph.buffer_users(j)
        if users.size:
            buf["users"] = [names[u] for u in users]
        if graph.buffer_live_in[j]:
            buf["live_in"] = True
        if graph.buffer_live_out[j]:
            buf["live_out"] = True
        if graph.buffer_space[j]:
            buf["space"] = int(graph.buffer_space[j])
        buffers.append(buf)
    meta = to_plain(dict(graph.meta))
    out = {
        "format": FORMAT,
        "version": VERSION,
        "name": graph.name,
        "ops": ops,
        "buffers": buffers,
        "order": [names[i] for i in graph.original_order]
        if graph.original_order is not None
        else None,
    }
    scen = meta.pop("scenarios", None)
    if scenarios is not None and scenarios.dims:
        scen = scenarios.to_json()
    if scen:
        out["scenarios"] = scen
    if meta:
        out["meta"] = meta
    return out
