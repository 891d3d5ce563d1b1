"""The ``Graph`` IR as a networkx ``DiGraph`` and back, for users of networkx.

Schedulers never run on networkx: they read the IR's CSR arrays. This module only converts.

``to_networkx(graph)`` gives one node per op (keyed by op name) with the attributes

- ``opcode``, ``kind`` (``compute``, ``parameter``, ``async-start``, ...);
- ``size``: device bytes the op defines, a symbolic expression as a string (``"4*b*s"``);
  ``buffers``: the buffers it defines, each ``{name, size, users, live_in, live_out, space}``;
- ``flops``, ``bytes_accessed``, ``transient`` (strings, when not zero), ``duration`` (op time
  in the input's units, when known), ``attrs`` (the reader's extra attributes),
  ``collective`` and ``async_start`` for communication;

and one edge per direct dependence, with ``operand`` (position among the op's operands),
``control`` (a control predecessor), ``buffers`` (names of the source's buffers the target
uses) and ``async`` (start -> its update/done). Graph attributes: ``name``, ``order`` (the
given schedule, when there is one), ``scenarios``, ``meta`` and ``cpsched_ir`` (the version of
this layout; ``from_networkx`` reads it back losslessly).

``from_networkx(G)`` also reads plain graphs: each node then defines one buffer of ``size``
(or Checkmate's ``cost_ram`` / Moccasin's ``out_cost``) bytes, an int or an expression over
named dims, that lives until its last successor ran; ``duration`` (or ``cost_cpu`` /
``cost``) is the op time, every edge a data dependence. The node order is the graph attribute
``order`` when given, else the nodes sorted by id (numbers numerically) when that is a
topological order, else a topological order with no given schedule.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from cpsched.core.errors import InputError
from cpsched.core.graph import (
    _KIND_NAME,
    Collective,
    Graph,
    GraphBuilder,
    OpKind,
    buffer_flags,
    op_costs,
)
from cpsched.core.graph import NX_IR_VERSION as IR_VERSION  # noqa: F401
from cpsched.core.symbolic import SymExpr

if TYPE_CHECKING:  # networkx is imported where a graph is converted (0.1-0.4 s)
    import networkx as nx

_KIND_OF = {v: k for k, v in _KIND_NAME.items()}
SIZE_KEYS = ("size", "cost_ram", "out_cost")
DURATION_KEYS = ("cost_cpu", "duration", "cost")


def to_networkx(graph: Graph) -> nx.DiGraph:
    """A ``networkx.DiGraph`` of ``graph`` (``Graph.to_networkx``; see the module docstring
    for the attributes)."""
    return graph.to_networkx()


def from_networkx(
    G: nx.DiGraph, name: str | None = None, *, source_format: str = "networkx"
) -> Graph:
    """A ``Graph`` from a networkx directed graph: lossless for ``to_networkx``'s layout,
    else one buffer per node (see the module docstring)."""
    if not G.is_directed():
        raise InputError("from_networkx needs a directed graph (networkx.DiGraph)")
    if G.is_multigraph():
        if G.graph.get("cpsched_ir") is not None:
            raise InputError(
                "from_networkx: a MultiDiGraph in cpsched's layout; to_networkx writes a DiGraph"
            )
        import networkx

        # parallel edges of a plain graph are one dependence
        G = networkx.DiGraph(G)
    if G.graph.get("cpsched_ir") is not None:
        if int(G.graph["cpsched_ir"]) > IR_VERSION:
            raise InputError(
                f"networkx graph layout {G.graph['cpsched_ir']} is newer than this "
                f"cpsched reads ({IR_VERSION})"
            )
        return _from_ir(G, name)
    return _from_plain(G, name, source_format)


def _from_ir(G: nx.DiGraph, name: str | None) -> Graph:
    b = GraphBuilder(str(name or G.graph.get("name") or "graph"))
    nodes = list(G.nodes)
    try:
        for n in nodes:
            a = G.nodes[n]
            kind = _KIND_OF.get(str(a.get("kind", "compute")))
            if kind is None:
                raise InputError(f"node {n}: unknown kind {a.get('kind')!r}")
            b.add_op(
                str(n),
                str(a.get("opcode", "node")),
                kind,
                **op_costs(a),
                attrs=a.get("attrs"),
            )
        for k, n in enumerate(nodes):
            ins = G.pred[n]
            operands = sorted((d["operand"], str(p)) for p, d in ins.items() if "operand" in d)
            for _, p in operands:
                b.add_operand(k, p)
            for p, d in ins.items():
                if d.get("control"):
                    b.add_control_pred(k, str(p))
            a = G.nodes[n]
            if a.get("async_start") is not None:
                b.pair_async(str(a["async_start"]), k)
            c = a.get("collective")
            if c:
                b.set_collective(k, Collective.from_record(c))
        for k, n in enumerate(nodes):
            for buf in G.nodes[n].get("buffers", ()):
                users = buf.get("users")
                if users is None:  # edited graph: the edges say who reads it
                    users = [t for t, d in G.succ[n].items() if buf["name"] in d.get("buffers", ())]
                b.add_buffer(
                    k,
                    buf.get("size", 0),
                    users=[str(u) for u in users],
                    name=buf.get("name"),
                    **buffer_flags(buf),
                )
        if G.graph.get("order") is not None:
            b.original_order = [b.index(str(x)) for x in G.graph["order"]]
        b.meta.update(G.graph.get("meta") or {})
        if G.graph.get("scenarios"):
            b.meta["scenarios"] = G.graph["scenarios"]
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(f"bad cpsched networkx graph: {type(e).__name__} {e}") from None
    return b.build()


def _id_key(x: str):
    return (int(x) if x.lstrip("-").isdigit() else 0, x)


def _from_plain(G: nx.DiGraph, name: str | None, source_format: str) -> Graph:
    import networkx as nx  # 0.1-0.4 s: imported where a graph is converted, not by the CLI

    ids = {str(n): n for n in G.nodes}
    ids_order = "order" in G.graph
    if len(ids) != G.number_of_nodes():
        raise InputError("two nodes have the same id once written as text")
    if "order" in G.graph:
        given: list[str] = [str(x) for x in G.graph["order"]]
        if sorted(given) != sorted(ids):
            raise InputError("graph attribute 'order' is not a permutation of the nodes")
    else:
        given = sorted(ids, key=_id_key)
        pos = {x: k for k, x in enumerate(given)}
        if any(pos[str(s)] > pos[str(t)] for s, t in G.edges):
            # node ids are not a schedule: build in a topological order, keep none as given
            try:
                given = [str(x) for x in nx.lexicographical_topological_sort(G, key=str)]
            except nx.NetworkXUnfeasible:
                raise InputError("the graph has a cycle") from None
        else:
            ids_order = True
    b = GraphBuilder(str(name or G.graph.get("name") or "graph"))
    b.meta["source_format"] = source_format
    # Ops are created in the given order so op indices follow it (readable output); operands
    # are added once all ops exist so that a bad 'order' is reported by the validator.
    for nid in given:
        node = G.nodes[ids[nid]]
        size = next((node[k] for k in SIZE_KEYS if node.get(k) is not None), None)
        if size is None:
            raise InputError(f"node {nid} has no size ({'/'.join(SIZE_KEYS)})")
        dur = next((node[k] for k in DURATION_KEYS if node.get(k) is not None), 0)
        label = str(node.get("name", nid))
        opname = nid if label == nid else f"{nid}:{label}"
        try:
            duration = float(dur)
        except (TypeError, ValueError):
            raise InputError(f"node {nid}: duration {dur!r} is not a number") from None
        if not (math.isfinite(duration) and duration >= 0):
            raise InputError(f"node {nid}: duration {dur!r} must be finite and >= 0")
        attrs: dict[str, Any] = {"duration": duration}
        if "backward" in node:
            attrs["backward"] = bool(node["backward"])
        if node.get("param_cost"):
            attrs["param_cost"] = node["param_cost"]
        b.add_op(opname, str(node.get("opcode", "node")), OpKind.COMPUTE, attrs=attrs)
    names = {nid: b._names[k] for k, nid in enumerate(given)}
    for k, nid in enumerate(given):
        node_key = ids[nid]
        for p in G.pred[node_key]:
            b.add_operand(k, names[str(p)])
        size = next(G.nodes[node_key][s] for s in SIZE_KEYS if G.nodes[node_key].get(s) is not None)
        if isinstance(size, bool) or not isinstance(size, (int, float, str)):
            raise InputError(f"node {nid}: size must be a number or a size expression")
        if isinstance(size, float) and not (math.isfinite(size) and size.is_integer()):
            raise InputError(f"node {nid}: size {size} is not a whole number of bytes")
        if isinstance(size, (int, float)) and size < 0:
            raise InputError(f"node {nid} has a negative size")
        expr = SymExpr.parse(int(size) if isinstance(size, (int, float)) else str(size))
        b.add_buffer(k, expr, users=[names[str(t)] for t in G.succ[node_key]], name=names[nid])
    if ids_order:
        b.original_order = list(range(len(given)))
    return b.build()


__all__ = ["IR_VERSION", "to_networkx", "from_networkx"]
