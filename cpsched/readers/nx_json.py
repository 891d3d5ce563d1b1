"""networkx node-link JSON, as used by Checkmate and Moccasin, read through
``networkx.readwrite.json_graph`` and converted by ``cpsched.core.nx_graph.from_networkx``.

Each node computes one output tensor (``cost_ram`` or ``out_cost`` bytes, or ``size``) in
``cost_cpu`` or ``duration`` time units; edges are data dependences. Memory follows those
projects' rule: while a node runs, its output and every output still needed later are
resident, so a node's output lives from the node to its last consumer. The given order is
the graph attribute ``order`` if present, else the node ids (already topological for
Checkmate). A node-link dump of ``Graph.to_networkx()`` reads back losslessly.
"""

from __future__ import annotations

import json

from cpsched.core.errors import InputError
from cpsched.core.graph import Graph
from cpsched.core.nx_graph import from_networkx
from cpsched.readers.files import display_name, load_json


def _normalized(data: dict, path: str | None) -> dict:
    """The node-link dict with string ids, ``links`` as source/target pairs, every link
    naming a known node (networkx would silently add unknown ones)."""
    if not isinstance(data, dict) or "nodes" not in data:
        raise InputError("not a node-link graph: no 'nodes' list", path=path)
    links = data.get("links", data.get("edges"))
    if links is None:
        raise InputError("not a node-link graph: no 'links' list", path=path)
    if not isinstance(data["nodes"], list):
        raise InputError(f"'nodes' must be a list, not {type(data['nodes']).__name__}", path=path)
    if not isinstance(links, list):
        raise InputError(f"'links' must be a list, not {type(links).__name__}", path=path)
    if not data["nodes"]:
        raise InputError("the graph has no nodes", path=path)
    if data.get("directed", True) is not True:
        # an undirected link says nothing about which op runs first
        raise InputError(
            f'"directed": {json.dumps(data.get("directed"))}: links must be directed '
            "(source runs before target)",
            path=path,
        )
    if data.get("graph") is not None and not isinstance(data["graph"], dict):
        raise InputError("'graph' must be an object of graph attributes", path=path)
    nodes = []
    for k, node in enumerate(data["nodes"]):
        if not isinstance(node, dict):
            raise InputError(f"node #{k} must be an object, not {type(node).__name__}", path=path)
        key = node.get("id", node.get("name"))
        if key is None or isinstance(key, (dict, list)):
            raise InputError(
                f"node #{k} has neither 'id' nor 'name' (a number or string)", path=path
            )
        nodes.append(dict(node, id=str(key)))
    ids = {n["id"] for n in nodes}
    if len(ids) != len(nodes):
        raise InputError("duplicate node id", path=path)
    out_links = []
    for k, e in enumerate(links):
        if not isinstance(e, dict):
            raise InputError(f"link #{k} must be an object, not {type(e).__name__}", path=path)
        if "source" in e or "target" in e:
            if "source" not in e or "target" not in e:
                raise InputError(f"link #{k} needs both 'source' and 'target'", path=path)
            s, t = str(e["source"]), str(e["target"])
        elif "0" in e and "1" in e:
            s, t = str(e["0"]), str(e["1"])
        else:
            raise InputError(f"link #{k} has neither source/target nor 0/1", path=path)
        if s not in ids or t not in ids:
            raise InputError(f"link #{k} names an unknown node ({s} -> {t})", path=path)
        rest = {a: v for a, v in e.items() if a not in ("source", "target", "0", "1", "key")}
        out_links.append(dict(rest, source=s, target=t))
    return {
        "directed": True,
        "multigraph": False,
        "graph": dict(data.get("graph") or {}),
        "nodes": nodes,
        "links": out_links,
    }


def read_nx_json(path: str) -> Graph:
    return graph_from_node_link(load_json(path), path, display_name(path))


def graph_from_node_link(data, path: str | None = None, name: str | None = None) -> Graph:
    """A ``Graph`` from a parsed node-link dict; every problem is an ``InputError``."""
    # networkx takes 0.1-0.4 s to import: only when a node-link file is read
    from networkx.readwrite import json_graph

    data = _normalized(data, path)
    try:
        G = json_graph.node_link_graph(data, directed=True, multigraph=False, edges="links")
    except Exception as e:  # networkx on attributes it cannot take (unhashable values)
        raise InputError(f"not a node-link graph: {e}", path=path) from None
    if not G.graph.get("name") and name:
        G.graph["name"] = name
    try:
        return from_networkx(G, source_format="nx-json")
    except InputError as e:
        raise (e.with_path(path) if path else e) from None
    except Exception as e:  # ScheduleError from an invalid given order, bad attribute types
        raise InputError(str(e), path=path) from None
