"""networkx: Graph.to_networkx / from_networkx round trip, plain graphs, node-link files."""

import json

import networkx as nx
import pytest
from networkx.readwrite import json_graph

import cpsched
from cpsched.analysis.memory import peak
from cpsched.core.errors import InputError
from cpsched.core.graph import Collective, GraphBuilder, OpKind
from cpsched.core.symbolic import SymExpr
from cpsched.readers import read_graph
from cpsched.writers.json_graph import graph_to_dict


def _sample_graph():
    b = GraphBuilder("sample")
    p = b.add_op("p", "parameter", OpKind.PARAMETER)
    s = b.add_op("ar-start", "all-reduce-start", OpKind.ASYNC_START, operands=["p"])
    c = b.add_op("c", "dot", operands=["p"], flops="2*b*s*64", bytes_accessed="4*b*s",
                 attrs={"op_name": "x/y", "duration": 3.5})
    m = b.add_op("m", "multiply", operands=["c", "p"])
    d = b.add_op("ar-done", "all-reduce-done", OpKind.ASYNC_DONE, control_preds=["c"])
    b.pair_async(s, d)
    b.set_collective(s, Collective("all-reduce", SymExpr.parse("4*b*s"),
                                   group_size=4, replica_groups=((0, 1, 2, 3),), channel_id=3))
    b.add_buffer(p, "4*b*s", users=["c", "ar-start", "m"], live_in=True, live_out=True)
    b.add_buffer(s, "4*b*s", users=["ar-done"])
    b.add_buffer(c, "4*b", users=["m"], space=5)
    b.add_buffer(c, 16, users=["m"], name="c.aux")
    b.add_buffer(m, "8*s", live_out=True)
    b.original_order = [0, 1, 2, 3, 4]
    b.meta["scenarios"] = {"dims": ["b", "s"], "scenarios": [{"name": "x", "values": {"b": 2, "s": 8}}]}
    return b.build()


def test_to_networkx_attributes():
    G = _sample_graph().to_networkx()
    assert isinstance(G, nx.DiGraph) and G.graph["name"] == "sample"
    assert G.nodes["c"]["size"] == "16"                # device bytes only: 4*b is on the host
    assert SymExpr.parse(G.nodes["c"]["flops"]).evaluate({"b": 1, "s": 1}) == 128
    assert G.nodes["c"]["duration"] == 3.5
    assert G.nodes["p"]["buffers"][0]["size"] == "4*b*s" and G.nodes["p"]["kind"] == "parameter"
    assert G.nodes["ar-start"]["collective"]["group_size"] == 4
    assert G.edges["p", "c"]["operand"] == 0 and G.edges["p", "m"]["operand"] == 1
    assert G.edges["c", "ar-done"]["control"] is True
    assert G.edges["ar-start", "ar-done"]["async"] is True
    assert set(G.edges["c", "m"]["buffers"]) == {"c", "c.aux"}
    assert list(nx.topological_sort(G))[0] == "p"


def test_round_trip_is_lossless(tmp_path):
    g = _sample_graph()
    d = graph_to_dict(g)
    back = cpsched.from_networkx(g.to_networkx())
    assert graph_to_dict(back) == d
    # and through a node-link file, read by the ordinary reader
    data = json_graph.node_link_data(g.to_networkx(), edges="links")
    p = tmp_path / "g.nx.json"
    p.write_text(json.dumps(data))
    assert graph_to_dict(read_graph(str(p))) == d


def test_plain_networkx_graph_with_symbolic_sizes():
    G = nx.DiGraph(name="plain")
    # names not in a topological order: the reader finds one and keeps no given order
    G.add_node("z_in", size=1000, duration=2)
    G.add_node("m_mid", size="4*s", cost=5)
    G.add_node("a_out", size=8)
    G.add_edge("z_in", "m_mid")
    G.add_edge("m_mid", "a_out")
    g = cpsched.from_networkx(G)
    assert g.op_names == ("z_in", "m_mid", "a_out") and g.original_order is None
    assert g.dims == ("s",) and g.attrs(1)["duration"] == 5.0
    r = cpsched.simulate(g, scenarios={"s": [10]})
    assert r.peak == {"s=10": 1040}
    G.add_edge("a_out", "z_in")
    with pytest.raises(InputError, match="cycle"):
        cpsched.from_networkx(G)
    with pytest.raises(InputError, match="no size"):
        cpsched.from_networkx(nx.DiGraph([(1, 2)]))
    with pytest.raises(InputError, match="directed"):
        cpsched.from_networkx(nx.Graph())


def test_checkmate_style_file_through_networkx(tmp_path):
    data = {"directed": True, "multigraph": False, "graph": {"name": "toy"},
            "nodes": [{"id": 0, "name": "x", "cost_ram": 100, "cost_cpu": 1},
                      {"id": 1, "name": "y", "cost_ram": 10, "cost_cpu": 2},
                      {"id": 2, "name": "z", "cost_ram": 1, "cost_cpu": 3}],
            "links": [{"source": 0, "target": 1}, {"source": 1, "target": 2},
                      {"source": 0, "target": 2}]}
    p = tmp_path / "toy.json"
    p.write_text(json.dumps(data))
    g = read_graph(str(p))
    assert g.op_names == ("0:x", "1:y", "2:z") and g.meta["source_format"] == "nx-json"
    assert g.original_order == (0, 1, 2)
    assert int(peak(g, g.default_order())[0]) == 111
    assert g.attrs(2)["duration"] == 3.0
