"""networkx node-link JSON, as used by Checkmate and Moccasin.

Each node computes one output tensor (``cost_ram`` or ``out_cost`` bytes) in ``cost_cpu`` or
``duration`` time units; edges are data dependences. Memory follows those projects' rule:
while a node runs, its output and every output still needed later are resident, so a
node's output lives from the node to its last consumer. The given order is the graph
attribute ``order`` if present, else the node ids (already topological for Checkmate).
"""

from __future__ import annotations

from cpsched.core.errors import InputError
from cpsched.core.graph import Graph, GraphBuilder, OpKind
from cpsched.readers.files import display_name, load_json


def read_nx_json(path: str) -> Graph:
    data = load_json(path)
    if not isinstance(data, dict) or "nodes" not in data:
        raise InputError("not a node-link graph: no 'nodes' list", path=path)
    links = data.get("links", data.get("edges"))
    if links is None:
        raise InputError("not a node-link graph: no 'links' list", path=path)
    gattrs = data.get("graph", {}) or {}
    name = str(gattrs.get("name") or display_name(path))
    nodes = data["nodes"]
    ids = []
    for k, node in enumerate(nodes):
        key = node.get("id", node.get("name"))
        if key is None:
            raise InputError(f"node #{k} has neither 'id' nor 'name'", path=path)
        ids.append(str(key))
    if len(set(ids)) != len(ids):
        raise InputError("duplicate node id", path=path)
    succs: dict[str, list[str]] = {i: [] for i in ids}
    preds: dict[str, list[str]] = {i: [] for i in ids}
    for k, e in enumerate(links):
        if "source" in e:
            s, t = str(e["source"]), str(e["target"])
        elif "0" in e and "1" in e:
            s, t = str(e["0"]), str(e["1"])
        else:
            raise InputError(f"link #{k} has neither source/target nor 0/1", path=path)
        if s not in succs or t not in succs:
            raise InputError(f"link #{k} names an unknown node ({s} -> {t})", path=path)
        if t not in succs[s]:
            succs[s].append(t)
            preds[t].append(s)
    if "order" in gattrs:
        given = [str(x) for x in gattrs["order"]]
        if sorted(given) != sorted(ids):
            raise InputError("graph attribute 'order' is not a permutation of the nodes",
                             path=path)
    else:
        given = sorted(ids, key=lambda x: (int(x) if x.lstrip("-").isdigit() else 0, x))
    b = GraphBuilder(name)
    b.meta["source_format"] = "nx-json"
    by_id = dict(zip(ids, nodes))
    # Create ops in the given order so op indices follow it (readable output, stable ids).
    # Predecessors of a node can come later in the given order only if it is invalid; add
    # operands after all ops exist so a bad order is reported by the validator, not here.
    for nid in given:
        node = by_id[nid]
        size = node.get("cost_ram", node.get("out_cost"))
        dur = node.get("cost_cpu", node.get("duration", 0))
        if size is None:
            raise InputError(f"node {nid} has no cost_ram/out_cost", path=path)
        label = str(node.get("name", nid))
        opname = nid if label == nid else f"{nid}:{label}"
        attrs = {"duration": float(dur)}
        if "backward" in node:
            attrs["backward"] = bool(node["backward"])
        if node.get("param_cost"):
            attrs["param_cost"] = node["param_cost"]
        b.add_op(opname, "node", OpKind.COMPUTE, attrs=attrs)
    names = {nid: b._names[k] for k, nid in enumerate(given)}
    for k, nid in enumerate(given):
        for p in preds[nid]:
            b.add_operand(k, names[p])
        size = by_id[nid].get("cost_ram", by_id[nid].get("out_cost"))
        if int(size) < 0:
            raise InputError(f"node {nid} has a negative size", path=path)
        b.add_buffer(k, int(size), users=[names[t] for t in succs[nid]], name=names[nid])
    b.original_order = list(range(len(given)))
    try:
        return b.build()
    except InputError as e:
        raise e.with_path(path)
    except Exception as e:  # ScheduleError from an invalid given order
        raise InputError(str(e), path=path) from None
