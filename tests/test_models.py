"""Generators (cpsched/generators.py), bundled graphs (models/graphs) and XLA dumps
(models/hlo)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from cpsched.core.errors import ScheduleError
from cpsched.core.graph import OpKind
from cpsched.analysis.memory import lower_bound, peak
from cpsched.readers.json_graph import graph_from_dict, read_json_graph
from cpsched.readers.nx_json import read_nx_json
from cpsched.core.scenarios import from_dim_specs, from_json
from cpsched.analysis.validate import validate_order
from cpsched.writers.json_graph import graph_to_dict
from cpsched import generators as gen
from models import make_graphs

REPO = Path(__file__).resolve().parents[1]
GRAPHS = REPO / "models" / "graphs"
HLO = REPO / "models" / "hlo"

SMALL = {
    "transformer_train": dict(layers=2, d_model=64, heads=4, d_ff=256, vocab=512),
    "mlp_train": dict(layers=3, width=128, d_in=32),
    "unet": dict(levels=2, channels=8, hw=32),
    "unet_train": dict(levels=2, channels=8, hw=32, backward=True),
    "unet_spatial": dict(levels=2, channels=8, spatial="h", backward=True),
    "random_layered": dict(n=60, seed=3),
    "layered": dict(n=300, preds=5, seed=1),
    "transformer_parallel": dict(layers=2, dp=2, tp=2, d_model=64, heads=4, d_ff=256,
                                 vocab=512),
    "transformer_parallel_sp": dict(layers=2, dp=2, tp=2, sp=True, d_model=64, heads=4,
                                    d_ff=256, vocab=512),
    "transformer_parallel_sp_pp": dict(layers=1, dp=2, tp=4, sp=True, pp=2, d_model=64,
                                       heads=4, d_ff=256, vocab=512),
}


def make(key):
    family = next(f for f in sorted(gen.FAMILIES, key=len, reverse=True) if key.startswith(f))
    return gen.FAMILIES[family](**SMALL[key])


# -- every family ------------------------------------------------------------------------

@pytest.mark.parametrize("key", sorted(SMALL))
def test_builds_and_natural_order_validates(key):
    g = make(key)
    assert g.n_ops > 10 and g.n_buffers > 5
    assert g.original_order == tuple(range(g.n_ops))
    validate_order(g, g.original_order)
    # no op is dead weight: every op but sinks feeds something, every buffer has users or
    # is an output
    users = np.diff(g.buffer_users_ptr)
    assert ((users > 0) | g.buffer_live_out).all(), \
        [g.buffer_names[j] for j in np.flatnonzero((users == 0) & ~g.buffer_live_out)]
    assert g.meta["generator"] in gen.FAMILIES


@pytest.mark.parametrize("key", ["transformer_train", "transformer_parallel",
                                 "transformer_parallel_sp", "transformer_parallel_sp_pp"])
def test_transformer_peaks_grow_with_s_and_b(key):
    g = make(key)
    assert set(g.dims) == {"b", "s"}
    sc = from_dim_specs(["b=2", "s=64,256,1024"])
    p = peak(g, g.original_order, sc)
    assert (np.diff(p) > 0).all(), p
    # attention scores are quadratic in s: going 256 -> 1024 costs more than 4x the
    # 64 -> 256 step
    assert p[2] - p[1] > 4 * (p[1] - p[0])
    pb = peak(g, g.original_order, from_dim_specs(["b=1,2,4", "s=128"]))
    assert (np.diff(pb) > 0).all()


def test_attention_scores_sized_b_heads_s_s():
    g = gen.transformer_train(layers=1, d_model=64, heads=4, d_ff=256, vocab=512,
                              dtype_bytes=2)
    j = g.buffer_names.index("L0/attn/softmax")
    assert str(g.buffer_sizes[j]) == "8*b*s^2"          # 2 bytes * 4 heads
    # the saved probabilities are read in backward (kept for the gradient)
    phases = {g.attrs(int(u)).get("phase") for u in g.buffer_users(j)}
    assert phases == {"forward", "backward"}


def test_mlp_and_unet_peaks_grow_with_batch_and_side():
    for g in (make("mlp_train"), make("unet"), make("unet_train")):
        assert g.dims == ("b",)
        p = peak(g, g.original_order, from_dim_specs(["b=1,8,64"]))
        assert (np.diff(p) > 0).all()
    g = make("unet_spatial")
    assert g.dims == ("b", "h")
    p = peak(g, g.original_order, from_dim_specs(["b=2", "h=2,4,8"]))
    assert (np.diff(p) > 0).all()


def test_backward_flops_are_twice_forward_for_dots():
    g = gen.transformer_train(layers=2, d_model=64, heads=4, d_ff=256, vocab=512)
    sc = from_dim_specs(["b=3", "s=40"])
    fl = g._eval(g.flops, sc)[0]
    fwd = sum(fl[i] for i in range(g.n_ops)
              if g.opcodes[i] == "dot" and g.attrs(i)["phase"] == "forward")
    bwd = sum(fl[i] for i in range(g.n_ops)
              if g.opcodes[i] == "dot" and g.attrs(i)["phase"] == "backward")
    assert bwd == 2 * fwd
    # forward matmuls of one layer: 24*b*s*d^2 (QKV, out, MLP with d_ff = 4d) plus
    # 4*b*s^2*d (scores and context)
    b, s, d, v = 3, 40, 64, 512
    layer = 24 * b * s * d * d + 4 * b * s * s * d
    assert fwd == 2 * layer + 2 * b * s * d * v


def test_weights_live_whole_step_and_updates_follow_every_reader():
    g = make("transformer_train")
    w = g.buffer_names.index("L0/w_wqkv")
    assert g.buffer_live_in[w] and g.buffer_live_out[w]
    upd = g.op_index("L0/w_wqkv/adam")
    readers = [int(u) for u in g.buffer_users(w) if int(u) != upd]
    assert len(readers) >= 2                 # forward matmul and its input-gradient matmul
    order = list(g.original_order)
    # moving the update before its weight's last other reader must be rejected
    last = max(order.index(r) for r in readers)
    bad = order[:]
    bad.remove(upd)
    bad.insert(last, upd)
    with pytest.raises(ScheduleError):
        validate_order(g, bad)
    # the update defines no buffer (in place) and reads the finished gradient
    assert g.defines(upd).size == 0


# -- random_layered ----------------------------------------------------------------------

def test_random_layered_deterministic_per_seed_and_differs_across_seeds():
    a = graph_to_dict(gen.random_layered(80, seed=5))
    b = graph_to_dict(gen.random_layered(80, seed=5))
    c = graph_to_dict(gen.random_layered(80, seed=6))
    assert a == b
    assert a["ops"] != c["ops"] or a["buffers"] != c["buffers"]


def test_random_layered_shape_and_node_link_semantics(tmp_path):
    g = gen.random_layered(120, seed=2)
    n = g.n_ops
    indeg, outdeg = np.diff(g.pred_ptr), np.diff(g.succ_ptr)
    assert list(np.flatnonzero(indeg == 0)) == [g.op_index("source")]
    assert list(np.flatnonzero(outdeg == 0)) == [g.op_index("sink")]
    assert 1.8 < len(g.pred_idx) / n < 3.5        # about as sparse as the published graphs
    assert g.attrs(g.op_index("source"))["duration"] == 0
    # the same graph as networkx node-link JSON, read by the node-link reader: same peak
    names = g.op_names
    nl = {"directed": True, "multigraph": False,
          "graph": {"order": [names[i] for i in g.original_order]},
          "nodes": [{"id": names[i], "out_cost": int(g.buffer_sizes[i].constant_value),
                     "duration": g.attrs(i)["duration"]} for i in range(n)],
          "links": [{"source": names[int(u)], "target": names[v]}
                    for v in range(n) for u in g.preds(v)]}
    path = tmp_path / "random_layered_nl.json"
    path.write_text(json.dumps(nl))
    h = read_nx_json(str(path))
    # the generator marks the sink's output live-out; the sink runs last, so that
    # changes nothing
    assert int(peak(h, h.original_order)[0]) == int(peak(g, g.original_order)[0])


def test_random_layered_symbolic_dim_scales_sizes():
    g0 = gen.random_layered(40, seed=1)
    g1 = gen.random_layered(40, seed=1, dim="b")
    p0 = int(peak(g0, g0.original_order)[0])
    p1 = peak(g1, g1.original_order, from_dim_specs(["b=1,3"]))
    assert list(p1) == [p0, 3 * p0]


# -- collectives ---------------------------------------------------------------------------

@pytest.mark.parametrize("key,kinds", [
    ("transformer_parallel", {"all-reduce"}),
    ("transformer_parallel_sp", {"all-reduce", "all-gather", "reduce-scatter"}),
    ("transformer_parallel_sp_pp", {"all-reduce", "all-gather", "reduce-scatter",
                                    "collective-permute"}),
])
def test_collectives_are_async_pairs_with_in_flight_buffers(key, kinds):
    g = make(key)
    starts = np.flatnonzero(g.kinds == OpKind.ASYNC_START)
    dones = np.flatnonzero(g.kinds == OpKind.ASYNC_DONE)
    assert len(starts) == len(dones) > 0
    assert {g.collectives[int(s)].kind for s in starts} == kinds
    order = list(g.original_order)
    sc = from_dim_specs(["b=2", "s=64"])
    sizes = g.sizes(sc)[0]
    for s in map(int, starts):
        d = int(g.async_done[s])
        assert d >= 0 and g.async_start[d] == s and g.kinds[d] == OpKind.ASYNC_DONE
        assert g.opcodes[s].endswith("-start") and g.opcodes[d].endswith("-done")
        assert order.index(d) == order.index(s) + 1        # back to back: no overlap yet
        (buf,) = g.defines(s)                               # the in-flight buffer
        assert d in g.buffer_users(buf)
        assert g.defines(d).size == 0                       # done forwards it
        (src,) = [int(o) for o in g.operands(s)]
        assert any(d in g.buffer_users(j) for j in g.defines(src)) or \
            any(d in g.buffer_users(j) for j in g.uses(src))  # operand kept until done
        c = g.collectives[s]
        assert c.replica_groups and c.group_size == len(c.replica_groups[0]) or \
            c.kind == "collective-permute"
        nbytes = c.bytes.evaluate({"b": 2, "s": 64})
        if c.kind == "all-gather":
            assert nbytes == sizes[buf]                     # the gathered output
        elif c.kind == "reduce-scatter":
            assert nbytes == sizes[buf] * c.group_size      # the unscattered input
        else:
            assert nbytes == sizes[buf]


def test_parallel_groups_and_dp_gradient_allreduces():
    dp, tp = 2, 4
    g = gen.transformer_parallel(layers=1, dp=dp, tp=tp, d_model=64, heads=4, d_ff=256,
                                 vocab=512)
    tp_groups = ((0, 1, 2, 3), (4, 5, 6, 7))
    dp_groups = ((0, 4), (1, 5), (2, 6), (3, 7))
    grad_ars = [i for i in g.collectives if g.op_names[i].endswith("grad_dp_allreduce.start")]
    # one per weight: wte shard, lnf, and 6 per layer
    assert len(grad_ars) == 8
    for i in grad_ars:
        assert g.collectives[i].replica_groups == dp_groups
        assert g.attrs(i)["phase"] == "backward"
    fwd = [i for i in g.collectives if g.attrs(i)["phase"] == "forward"]
    assert fwd and all(g.collectives[i].replica_groups == tp_groups for i in fwd)


def test_sequence_parallel_saves_activation_memory():
    kw = dict(layers=2, dp=2, tp=4, d_model=128, heads=8, d_ff=512, vocab=512)
    sc = from_dim_specs(["b=2", "s=2048"])
    plain = gen.transformer_parallel(**kw)
    seq = gen.transformer_parallel(sp=True, **kw)
    assert peak(seq, seq.original_order, sc)[0] < peak(plain, plain.original_order, sc)[0]
    assert lower_bound(seq, sc)[0] < lower_bound(plain, sc)[0]


def test_generator_arguments_are_checked():
    with pytest.raises(ValueError):
        gen.transformer_parallel(tp=3, d_model=64, heads=4, d_ff=256, vocab=512)
    with pytest.raises(ValueError):
        gen.unet(levels=3, hw=20)
    with pytest.raises(ValueError):
        gen.mlp_train(optimizer="lion")


# -- bundled graphs ------------------------------------------------------------------------

@pytest.mark.parametrize("fname", sorted(make_graphs.BUNDLE))
def test_bundled_json_reads_back_with_identical_peaks(fname):
    path = GRAPHS / fname
    assert path.is_file(), f"run models/make_graphs.py ({fname} missing)"
    text = path.read_text()
    fresh = make_graphs.build(fname)
    assert text == make_graphs.text_of(fresh), f"{fname} is stale: run models/make_graphs.py"
    g = read_json_graph(str(path))
    fn, kwargs, dims = make_graphs.BUNDLE[fname]
    orig = fn(**kwargs)
    sc = from_json(g.meta["scenarios"]) if dims else None
    if dims:
        assert list(sc.dims) == [d.split("=")[0] for d in dims]
    assert g.n_ops == orig.n_ops and g.n_buffers == orig.n_buffers
    assert list(peak(g, g.original_order, sc)) == list(peak(orig, orig.original_order, sc))
    assert list(lower_bound(g, sc)) == list(lower_bound(orig, sc))
    assert dict(g.collectives) == dict(orig.collectives)
    again = graph_from_dict(graph_to_dict(g))
    assert again.op_names == g.op_names


# -- XLA dumps -------------------------------------------------------------------------------

def _entry_names(hlo: str) -> list[str]:
    entry = hlo[hlo.index("\nENTRY"):]
    entry = entry[:entry.index("\n}")]
    return re.findall(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=", entry, re.M)


def test_xla_dumps_are_present_small_scheduled_and_clean():
    manifest = json.loads((HLO / "manifest.json").read_text())
    assert {"gpt2l_train", "gpt2l_train.memopt", "mlp_train", "sharded_dp_tp"} <= set(manifest)
    for name, entry in manifest.items():
        for f in entry["files"]:
            p = HLO / f
            assert p.is_file() and p.stat().st_size < 2_000_000, f
            text = p.read_text()
            assert not re.search(r"/(tmp|root|home|work|Users)/", text), f
        hlo = (HLO / f"{name}.hlo").read_text()
        assert "is_scheduled=true" in hlo.splitlines()[0]
        names = _entry_names(hlo)
        assert len(names) == entry["entry_instructions"]
        lr = (HLO / f"{name}.live-range.txt").read_text()
        seq = re.findall(r"^\s+\d+:(\S+)$", lr.split("BufferLiveRange:")[0], re.M)
        # XLA's sequence is the entry's text order, and the get-tuple-elements that newer
        # XLA prints as %t#1 operands (a name of XLA's in no line of the text)
        assert [n for n in seq if n in names] == names
        assert all(n.startswith("get-tuple-element") for n in seq if n not in names)
    coll = manifest["sharded_dp_tp"]["collectives"]
    assert set(coll) == {"all-reduce", "all-gather", "reduce-scatter", "collective-permute"}
    assert (HLO / "demo.hlo").read_text() == (HLO / "sharded_dp_tp.hlo").read_text()
    # the memory-optimized compile is the same program in another order
    a = _entry_names((HLO / "gpt2l_train.hlo").read_text())
    b = _entry_names((HLO / "gpt2l_train.memopt.hlo").read_text())
    assert sorted(a) == sorted(b) and a != b
