"""Cost model: presets, roofline, ring collectives, copies, device files, PGLE profiles,
XLA's approximate estimators. Expected values are computed by hand from the formulas."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cpsched.cost.model import (Device, collective_times, estimate, load_device,
                          load_profile, op_times, parse_profile_text, preset_names)
from cpsched.core.errors import InputError
from cpsched.core.graph import Collective, GraphBuilder, OpKind
from cpsched.core.scenarios import from_dim_specs
from cpsched.core.symbolic import SymExpr

# A round-number device so that hand computations are exact.
PLAIN = Device("plain", peak_flops_bf16=100e12, peak_flops_fp32=10e12, hbm_bandwidth=1e12,
               nvlink_bandwidth=100e9, nvlink_latency=0.0, network_bandwidth=10e9,
               network_latency=0.0, pcie_bandwidth=20e9, pcie_latency=0.0,
               launch_overhead=0.0, collective_launch=0.0, gpus_per_node=8)


def approx(x):
    return pytest.approx(x, rel=1e-12, abs=1e-18)


# -- presets -----------------------------------------------------------------------------

def test_presets_have_datasheet_figures_and_sources():
    h = load_device("h100")
    assert h.peak_flops_bf16 == approx(989.4e12)
    assert h.hbm_bandwidth == approx(3.35e12)
    assert h.nvlink_bandwidth == approx(450e9)
    assert h.pcie_bandwidth == approx(64e9)
    a = load_device("A100")
    assert a.peak_flops_bf16 == approx(312e12)
    assert a.hbm_bandwidth == approx(2.039e12)
    assert a.nvlink_bandwidth == approx(300e9)
    assert a.pcie_bandwidth == approx(32e9)
    for dev in (h, a):
        for key in ("bf16_tflops", "fp32_tflops", "hbm_gbps", "nvlink_gbps", "pcie_gbps",
                    "network_gbps", "launch_overhead_us"):
            assert dev.sources.get(key), f"{dev.name}: no source for {key}"
    assert {"h100", "a100", "xla-approx", "xla-gpu-approx"} <= set(preset_names())


def test_unknown_preset_is_an_input_error():
    with pytest.raises(InputError, match="unknown device"):
        load_device("tpu-v9")


def test_to_dict_round_trips():
    h = load_device("h100")
    assert load_device(h.to_dict()) == h


# -- device files ------------------------------------------------------------------------

def test_json_device_file_extends_a_preset(tmp_path):
    p = tmp_path / "mine.json"
    p.write_text(json.dumps({"extends": "h100", "name": "h100-slow-nvlink", "nvlink_gbps": 100,
                             "launch_overhead_us": 0}))
    d = load_device(str(p))
    assert d.name == "h100-slow-nvlink"
    assert d.nvlink_bandwidth == approx(100e9)
    assert d.launch_overhead == 0.0
    assert d.hbm_bandwidth == load_device("h100").hbm_bandwidth


def test_toml_device_file(tmp_path):
    pytest.importorskip("tomllib")
    p = tmp_path / "box.toml"
    p.write_text('extends = "a100"\nhbm_gbps = 1555  # the 40 GB part\n'
                 '[sources]\nhbm_gbps = "A100 datasheet, 40 GB column"\n')
    d = load_device(str(p))
    assert d.hbm_bandwidth == approx(1.555e12)
    assert d.peak_flops_bf16 == approx(312e12)
    assert d.sources["hbm_gbps"].endswith("40 GB column")


def test_standalone_device_file_and_overrides(tmp_path):
    p = tmp_path / "dev.json"
    p.write_text(json.dumps({"bf16_tflops": 1, "fp32_tflops": 1, "hbm_gbps": 1,
                             "nvlink_gbps": 1, "network_gbps": 1, "pcie_gbps": 1}))
    d = load_device(str(p), overrides={"pcie_gbps": 2})
    assert d.name == "dev"
    assert d.pcie_bandwidth == approx(2e9)


@pytest.mark.parametrize("content, match", [
    ({"extends": "h100", "nvlink_gbs": 1}, "unknown device key"),
    ({"extends": "h100", "hbm_gbps": "fast"}, "expected a number"),
    ({"extends": "h100", "hbm_gbps": 0}, "must be positive"),
])
def test_bad_device_files(tmp_path, content, match):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(content))
    with pytest.raises(InputError, match=match):
        load_device(str(p))


def test_unreadable_device_file(tmp_path):
    p = tmp_path / "broken.json"
    p.write_text("{ not json")
    with pytest.raises(InputError, match="bad JSON"):
        load_device(str(p))
    with pytest.raises(InputError, match="cannot read"):
        load_device(str(tmp_path / "missing.json"))


# -- op times ----------------------------------------------------------------------------

def _compute_graph():
    b = GraphBuilder("ops")
    b.add_op("p", "parameter", OpKind.PARAMETER)
    b.add_op("c", "constant", OpKind.CONSTANT)
    b.add_op("dot", "dot", operands=["p"], flops=2 * 10**12, bytes_accessed=10**9)
    b.add_op("add", "add", operands=["dot"], flops=10**6, bytes_accessed=10**10)
    b.add_op("dot32", "dot", operands=["p"], flops=10**12, attrs={"dtype": "f32"})
    b.add_op("gte", "get-tuple-element", OpKind.ALIAS, operands=["dot"])
    return b.build()


def test_roofline_op_times():
    g = _compute_graph()
    dev = load_device(PLAIN, overrides={"launch_overhead_us": 2})
    t = op_times(g, dev)
    assert t.shape == (1, g.n_ops)
    assert t[0, g.op_index("p")] == 0 and t[0, g.op_index("c")] == 0
    assert t[0, g.op_index("gte")] == 0
    # compute bound: 2e12 / 100e12 = 20 ms (bytes would take 1 ms)
    assert t[0, g.op_index("dot")] == approx(0.02 + 2e-6)
    # memory bound: 1e10 / 1e12 = 10 ms
    assert t[0, g.op_index("add")] == approx(0.01 + 2e-6)
    # f32 uses the fp32 peak: 1e12 / 10e12 = 100 ms
    assert t[0, g.op_index("dot32")] == approx(0.1 + 2e-6)


def test_symbolic_op_times_per_scenario():
    b = GraphBuilder("sym")
    b.add_op("mm", "dot", flops="2*b*s*1000000000", bytes_accessed="4*s")
    g = b.build()
    sc = from_dim_specs(["b=1,2", "s=100"])
    t = op_times(g, PLAIN, sc)
    assert t[:, 0] == approx(np.array([2e11, 4e11]) / 100e12)


def test_node_link_duration_is_used_as_is():
    b = GraphBuilder("nl")
    b.add_op("0", "node", attrs={"duration": 7.5})
    b.add_op("1", "node", operands=["0"], flops=10**15, attrs={"duration": 3})
    g = b.build()
    c = estimate(g, "h100")
    assert c.op[0].tolist() == [7.5, 3.0]
    assert c.unit == "file"


def test_node_link_peer_graph_durations(shared_dir):
    from cpsched.readers.nx_json import read_nx_json
    path = shared_dir / "peer-cases" / "moccasin" / "random_layered_n100_w0.27_nlv0.75_ed0.2_scd0.14.json"
    raw = json.loads(path.read_text())
    g = read_nx_json(str(path))
    t = op_times(g, "a100")
    assert t.sum() == pytest.approx(sum(float(n["duration"]) for n in raw["nodes"]))


# -- collectives -------------------------------------------------------------------------

GB = 10**9


def _collective_graph(specs, device_groups=None):
    """One async pair per spec (kind, group_size[, replica_groups]) plus sync variants."""
    b = GraphBuilder("coll")
    b.add_op("x", "parameter", OpKind.PARAMETER)
    for k, spec in enumerate(specs):
        kind, p = spec[0], spec[1]
        groups = spec[2] if len(spec) > 2 else ()
        s = b.add_op(f"s{k}", f"{kind}-start", OpKind.ASYNC_START, operands=["x"])
        d = b.add_op(f"d{k}", f"{kind}-done", OpKind.ASYNC_DONE, operands=[s])
        b.pair_async(s, d)
        b.set_collective(s, Collective(kind, SymExpr.const(GB), p, groups))
    return b.build()


@pytest.mark.parametrize("kind, p, factor, steps", [
    ("all-reduce", 8, 2 * 7 / 8, 14),
    ("all-gather", 8, 7 / 8, 7),
    ("reduce-scatter", 4, 3 / 4, 3),
    ("all-to-all", 8, 7 / 8, 7),
    ("collective-permute", 2, 1.0, 1),
    ("send", 2, 1.0, 1),
    ("recv", 2, 1.0, 1),
    ("all-reduce", 1, 0.0, 0),
])
def test_ring_factors(kind, p, factor, steps):
    g = _collective_graph([(kind, p)])
    s = g.op_index("s0")
    t = collective_times(g, PLAIN)[s]
    assert t[0] == approx(factor * GB / 100e9)
    # alpha per step and the collective launch are added
    dev = load_device(PLAIN, overrides={"nvlink_latency_us": 3, "collective_launch_us": 5})
    t2 = collective_times(g, dev)[s]
    assert t2[0] == approx(factor * GB / 100e9 + steps * 3e-6 + 5e-6)
    # starts and dones themselves cost nothing on the compute stream
    assert op_times(g, dev)[0, s] == 0 and op_times(g, dev)[0, g.op_index("d0")] == 0


def test_link_class_from_group_placement():
    g = _collective_graph([
        ("all-gather", 16),                                   # more ranks than a node: network
        ("all-gather", 2, ((0, 1), (2, 3))),                  # inside nodes: NVLink
        ("all-gather", 2, ((0, 8), (1, 9))),                  # across nodes: network
    ])
    t = collective_times(g, PLAIN)
    assert t[g.op_index("s0")][0] == approx(15 / 16 * GB / 10e9)
    assert t[g.op_index("s1")][0] == approx(1 / 2 * GB / 100e9)
    assert t[g.op_index("s2")][0] == approx(1 / 2 * GB / 10e9)


def test_sync_collective_is_timed_and_symbolic_bytes():
    b = GraphBuilder("sync")
    b.add_op("x", "parameter", OpKind.PARAMETER)
    b.add_op("ar", "all-reduce", operands=["x"], flops="1000*s", bytes_accessed="1000*s")
    b.set_collective("ar", Collective("all-reduce", SymExpr.parse("1000000*s"), 4))
    g = b.build()
    sc = from_dim_specs(["s=1,4"])
    t = collective_times(g, PLAIN, sc)[g.op_index("ar")]
    assert t == approx(np.array([1.5e6, 6e6]) / 100e9)
    # the collective's cost lives in the transfer, not in op_times
    assert op_times(g, PLAIN, sc)[:, g.op_index("ar")].tolist() == [0, 0]


def _copy_graph(space: int):
    b = GraphBuilder("copy")
    b.add_op("x", "parameter", OpKind.PARAMETER)
    b.add_buffer("x", 4 * GB, live_in=True)
    s = b.add_op("cs", "copy-start", OpKind.ASYNC_START, operands=["x"])
    d = b.add_op("cd", "copy-done", OpKind.ASYNC_DONE, operands=[s])
    b.pair_async(s, d)
    b.add_buffer(d, 4 * GB, space=space)
    b.add_buffer(s, 4)                                     # the u32 context
    return b.build()


def test_host_copy_uses_pcie_and_device_copy_uses_hbm():
    dev = load_device(PLAIN, overrides={"pcie_latency_us": 10})
    host = _copy_graph(space=5)
    t = collective_times(host, dev)[host.op_index("cs")]
    assert t[0] == approx(10e-6 + 4 * GB / 20e9)
    local = _copy_graph(space=0)
    t = collective_times(local, dev)[local.op_index("cs")]
    assert t[0] == approx(2 * 4 * GB / 1e12)


def test_async_compute_is_roofline_of_the_wrapped_work():
    b = GraphBuilder("ac")
    b.add_op("x", "parameter", OpKind.PARAMETER)
    s = b.add_op("fs", "fusion-start", OpKind.ASYNC_START, operands=["x"], flops=10**12)
    d = b.add_op("fd", "fusion-done", OpKind.ASYNC_DONE, operands=[s], bytes_accessed=10**9)
    b.pair_async(s, d)
    g = b.build()
    assert collective_times(g, PLAIN)[s][0] == approx(10**12 / 100e12)


# -- profiles ----------------------------------------------------------------------------

def test_json_profile_overrides_ops_and_transfers(tmp_path):
    g = _collective_graph([("all-reduce", 8)])
    g2 = _compute_graph()
    p = tmp_path / "prof.json"
    p.write_text(json.dumps({"dot": 12.5, "s0": 40, "not-in-graph": 1}))
    t = op_times(g2, PLAIN, profile=str(p))
    assert t[0, g2.op_index("dot")] == approx(12.5e-6)
    assert t[0, g2.op_index("add")] == approx(0.01)          # untouched
    ct = collective_times(g, PLAIN, profile=str(p))
    assert ct[g.op_index("s0")][0] == approx(40e-6)
    # the start's profiled cost is its latency, not a compute-stream time
    assert op_times(g, PLAIN, profile=str(p))[0, g.op_index("s0")] == 0


def test_text_proto_profile(tmp_path):
    text = """
    costs { name: "fp123::dot" cost_us: 10.0 }
    costs {
      name: "add.remat"
      cost_us: 2
    }
    costs { name: "add" cost_us: 4 }
    costs { name: "add.remat2" cost_us: 6 }
    costs { name: "s0" cost_us: 1000.0 }
    """
    p = tmp_path / "prof.pbtxt"
    p.write_text(text)
    prof = load_profile(str(p))
    assert prof.costs == {"dot": 10.0, "add": 4.0, "s0": 1000.0}   # remat copies averaged
    g2 = _compute_graph()
    t = op_times(g2, PLAIN, profile=prof)
    assert t[0, g2.op_index("dot")] == approx(10e-6)
    assert t[0, g2.op_index("add")] == approx(4e-6)
    g = _collective_graph([("all-gather", 8)])
    assert collective_times(g, PLAIN, profile=prof)[g.op_index("s0")][0] == approx(1e-3)


def test_text_proto_latencies_and_errors():
    prof = parse_profile_text('latencies { source: "s0" target: "d0" latency_us: 7 }')
    g = _collective_graph([("all-gather", 8)])
    assert collective_times(g, PLAIN, profile=prof)[g.op_index("s0")][0] == approx(7e-6)
    with pytest.raises(InputError, match="no 'costs"):
        parse_profile_text("something else")
    with pytest.raises(InputError, match="without name or cost_us"):
        parse_profile_text('costs { name: "x" }')
    with pytest.raises(InputError, match="finite"):
        load_profile({"x": -1})


# -- XLA's approximate estimators --------------------------------------------------------

def _xla_graph():
    b = GraphBuilder("lhs")
    b.add_op("p", "parameter", OpKind.PARAMETER)
    b.add_op("loop", "fusion", operands=["p"], attrs={"kind": "kLoop"})
    b.add_op("out", "fusion", operands=["p"], attrs={"fusion_kind": "kOutput"})
    b.add_op("conv", "convolution", operands=["p"])
    b.add_op("add", "add", operands=["p"])
    b.add_op("cc", "custom-call", operands=["p"])
    s = b.add_op("cp-start", "collective-permute-start", OpKind.ASYNC_START, operands=["p"])
    d = b.add_op("cp-done", "collective-permute-done", OpKind.ASYNC_DONE, operands=[s])
    b.pair_async(s, d)
    b.set_collective(s, Collective("collective-permute", SymExpr.const(10**6), 2))
    return b.build()


def test_xla_approx_units():
    g = _xla_graph()
    c = estimate(g, "xla-approx")
    assert c.unit == "xla"
    cost = dict(zip(g.op_names, c.op[0].tolist()))
    assert cost == {"p": 1, "loop": 1000, "out": 5000, "conv": 5000, "add": 1, "cc": 1,
                    "cp-start": 1, "cp-done": 1}
    assert c.transfer[g.op_index("cp-start")].tolist() == [5000]


def test_xla_gpu_approx_and_profile_units():
    g = _xla_graph()
    c = estimate(g, "xla-gpu-approx", profile={"add": 3.0, "cp-start": 250})
    cost = dict(zip(g.op_names, c.op[0].tolist()))
    assert cost["p"] == 0 and cost["cc"] == 1000 and cost["loop"] == 1000
    assert cost["add"] == 3.0                                   # profile us = XLA units
    assert c.transfer[g.op_index("cp-start")].tolist() == [250]


def test_host_send_is_a_pcie_copy():
    b = GraphBuilder("host")
    b.add_op("x", "parameter", OpKind.PARAMETER)
    s = b.add_op("send", "send", OpKind.ASYNC_START, operands=["x"],
                 attrs={"is_host_transfer": True})
    d = b.add_op("send-done", "send-done", OpKind.ASYNC_DONE, operands=[s])
    b.pair_async(s, d)
    b.set_collective(s, Collective("send", SymExpr.const(GB), 1))
    g = b.build()
    from cpsched.cost.model import async_class
    assert async_class(g, s) == "copy"
    assert collective_times(g, PLAIN)[s][0] == approx(GB / 20e9)


def test_toml_without_tomllib_is_a_clear_error(tmp_path, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "tomllib", None)       # as on Python 3.10
    p = tmp_path / "d.toml"
    p.write_text('extends = "h100"\n')
    with pytest.raises(InputError, match="Python 3.11"):
        load_device(str(p))
