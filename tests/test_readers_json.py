import json

import numpy as np
import pytest

from cpsched.core.errors import InputError
from cpsched.analysis.memory import lower_bound, peak
from cpsched.readers import read_graph
from cpsched.readers.json_graph import graph_from_dict
from cpsched.readers.nx_json import read_nx_json
from cpsched.core.graph import Collective, GraphBuilder, OpKind
from cpsched.core.symbolic import SymExpr
from cpsched.writers.json_graph import graph_to_dict

PUBLISHED_GIVEN_ORDER_PEAKS = {
    "random_layered_n100_w0.27_nlv0.75_ed0.2_scd0.14.json": 46_319,
    "random_layered_n250_w0.43_nlv0.75_ed0.2_scd0.14.json": 146_840,
    "random_layered_n500_w0.36_nlv0.75_ed0.2_scd0.14.json": 284_439,
    "random_layered_n1000_w0.31_nlv0.75_ed0.2_scd0.14.json": 608_619,
}


@pytest.mark.parametrize("fname,expected", sorted(PUBLISHED_GIVEN_ORDER_PEAKS.items()))
def test_moccasin_given_order_peaks_match_published(shared_dir, fname, expected):
    g = read_nx_json(str(shared_dir / "peer-cases" / "moccasin" / fname))
    assert int(peak(g, g.default_order())[0]) == expected
    assert int(lower_bound(g)[0]) <= expected


def test_resnet50_train_given_peak(shared_dir):
    g = read_graph(str(shared_dir / "peer-cases" / "moccasin" / "ResNet50_256_224_224_3_train_nx.json"))
    assert g.n_ops == 353
    gib = peak(g, g.default_order())[0] / 2**30
    assert round(gib, 2) == 35.45


def test_all_checkmate_graphs_read(shared_dir):
    files = sorted((shared_dir / "peer-cases" / "moccasin").glob("*.json"))
    assert len(files) == 18
    for f in files:
        g = read_graph(str(f))
        assert g.n_ops > 0 and g.original_order is not None


def _sample_graph():
    b = GraphBuilder("sample")
    p = b.add_op("p", "parameter", OpKind.PARAMETER)
    s = b.add_op("ar-start", "all-reduce-start", OpKind.ASYNC_START, operands=["p"])
    c = b.add_op("c", "dot", operands=["p"], flops="2*b*s*64", bytes_accessed="4*b*s",
                 attrs={"op_name": "x/y", "nested": {"k": [1, 2]}})
    d = b.add_op("ar-done", "all-reduce-done", OpKind.ASYNC_DONE, control_preds=["c"])
    b.pair_async(s, d)
    b.set_collective(s, Collective("all-reduce", SymExpr.parse("4*b*s"),
                                   group_size=4, replica_groups=((0, 1, 2, 3),), channel_id=3))
    b.add_buffer(p, "4*b*s", users=["ar-start", "c"], live_in=True, live_out=True)
    b.add_buffer(s, "4*b*s", users=["ar-done"])
    b.add_buffer(c, "4*b", live_out=True, space=5)
    b.original_order = [0, 1, 2, 3]
    b.meta["source_format"] = "test"
    return b.build()


def test_json_roundtrip_is_lossless(tmp_path):
    g = _sample_graph()
    d = graph_to_dict(g)
    text = json.dumps(d)
    g2 = graph_from_dict(json.loads(text))
    assert graph_to_dict(g2) == d
    assert g2.collectives[1].replica_groups == ((0, 1, 2, 3),)
    assert str(g2.buffer_sizes[0]) == "4*b*s"
    p = tmp_path / "g.json"
    p.write_text(text)
    assert graph_to_dict(read_graph(str(p))) == d


@pytest.mark.parametrize("mutate,msg", [
    (lambda d: d["ops"][2].update(operands=["nope"]), "unknown op"),
    (lambda d: d["ops"][2].update(kind="weird"), "unknown kind"),
    (lambda d: d.update(version=99), "newer"),
    (lambda d: d["buffers"][0].update(size="b-1"), "bad size"),
    (lambda d: d["ops"][0].update(operands=["ar-done"]), "cycle"),
])
def test_json_errors(mutate, msg):
    d = graph_to_dict(_sample_graph())
    mutate(d)
    with pytest.raises(InputError, match=msg):
        graph_from_dict(d, "x.json")


def test_bad_json_reports_line(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text('{"format": "cpsched-graph",\n "ops": [,]}')
    with pytest.raises(InputError) as e:
        read_graph(str(p))
    assert e.value.line == 2 and "bad.json" in str(e.value)
