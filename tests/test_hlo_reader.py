"""HLO text reader: parser coverage, XLA byte sizes, dataflow/aliasing, async pairs, costs,
collectives, and a line/column error for each kind of malformed input."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from cpsched.core.errors import InputError
from cpsched.core.graph import OpKind
from cpsched.analysis.memory import lower_bound, simulate
from cpsched.readers import read_graph
from cpsched.readers.hlo.convert import (call_contexts, module_graphs, read_hlo_graph, read_hlo_text,
                                 scheduled_computations)
from cpsched.readers.hlo.live_range import xla_live_ranges
from cpsched.readers.hlo.parser import (ELEMENT_BYTES, parse_hlo_text, parse_replica_groups,
                                        read_hlo_module)
from cpsched.core.scenarios import static

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
XLA = SHARED / "peer-cases" / "xla"
MODELS = SHARED / "peer-cases" / "xla-models"
DATA = Path(__file__).resolve().parent / "data" / "hlo"

needs_shared = pytest.mark.skipif(not XLA.is_dir(), reason="shared peer cases not present")


def peer_files():
    if not XLA.is_dir():
        return []
    return sorted(XLA.glob("*.hlo")) + sorted(MODELS.glob("*.hlo"))


def by_name(g, name):
    return g.op_index(name)


def buffer(g, name):
    return g.buffer_names.index(name)


def users(g, bname):
    return sorted(g.op_names[u] for u in g.buffer_users(buffer(g, bname)))


def order_of(g, names):
    return [g.op_index(n) for n in names]


# -- every peer case parses ------------------------------------------------------------------

@needs_shared
@pytest.mark.parametrize("path", peer_files(), ids=lambda p: p.stem[:60])
def test_every_peer_case_parses_and_converts(path):
    m = read_hlo_module(str(path))
    graphs = module_graphs(m)
    assert m.entry.name in graphs
    for name, g in graphs.items():
        assert g.n_ops == len(m.by_name[name].instructions)
        # the order the module gives (text order when scheduled) is valid, and simulates
        prof = simulate(g, g.default_order())
        assert lower_bound(g)[0] <= prof.peak[0] == prof.usage[0].max()
        if m.is_scheduled:
            assert g.original_order == tuple(range(g.n_ops))
        else:
            assert g.original_order is None


# counts from peer-cases/xla-models/README.md: computations, ENTRY instrs, total instrs
MODEL_COUNTS = {
    "graphsage_tf": (5, 126, 138),
    "ssd_mobilenet_tf": (1, 508, 508),
    "hlo_llama3_8b_cp_bf16_1x4": (137, 734, 2325),
}


@needs_shared
@pytest.mark.parametrize("stem", sorted(MODEL_COUNTS))
def test_model_instruction_counts_match_readme(stem):
    m = read_hlo_module(str(MODELS / f"{stem}.hlo"))
    comps, entry, total = MODEL_COUNTS[stem]
    assert len(m.computations) == comps
    assert len(m.entry.instructions) == entry
    assert sum(len(c.instructions) for c in m.computations) == total
    assert not m.is_scheduled


@needs_shared
def test_llama_opcodes_match_readme():
    # (its parse + convert time is measured in benchmarks/, not asserted here)
    m = read_hlo_module(str(MODELS / "hlo_llama3_8b_cp_bf16_1x4.hlo"))
    graphs = module_graphs(m)
    ops = Counter(i.opcode for c in m.computations for i in c.instructions)
    entry_ops = Counter(i.opcode for i in m.entry.instructions)
    assert ops["all-reduce"] == 50 and entry_ops["all-reduce"] == 41
    assert ops["all-gather"] == 18 and entry_ops["all-gather"] == 4
    assert ops["collective-permute"] == 11
    assert ops["while"] == 2 and entry_ops["while"] == 2
    assert ops["conditional"] == 9 and ops["custom-call"] == 12
    assert ops["parameter"] == 293 and ops["get-tuple-element"] == 214
    assert len(set(ops)) == 43
    assert m.entry.name == "main.66_spmd" and m.num_partitions == 4
    # /*index=N*/ comments inside operand lists are skipped
    fwd = next(c for c in m.computations if "te_fused_attn_forward_ffi.10" in c.index)
    assert len(fwd.index["te_fused_attn_forward_ffi.10"].operands) == 13
    # the two while bodies and the conditional branches are scheduled computations;
    # reducers (to_apply of reduce/all-reduce) are not
    ctx = call_contexts(m)
    assert ctx["region_1.4_spmd"] == "sequential" and ctx["region_10.15_spmd"] == "sequential"
    reducer = next(i.attrs["to_apply"].lstrip("%") for i in m.entry.instructions
                   if i.opcode == "all-reduce")
    assert ctx[reducer] == "embedded"
    assert ctx["region_53.54"] == "uncalled"    # dead reducers stay in the module
    assert set(graphs) == {n for n, k in ctx.items() if k in ("entry", "sequential", "uncalled")}
    g = graphs[m.entry.name]
    # input_output_alias donates parameters 0..38; 39..42 are read-only, live to the end
    for k, p in enumerate(i for i in m.entry.instructions if i.opcode == "parameter"):
        j = buffer(g, p.name)
        assert g.buffer_live_in[j]
        if p.parameter_number >= 39:
            assert g.buffer_live_out[j]
    params = m.entry.parameters()
    # output {2} = add.435 reads donated parameter 2 and is written over it: one buffer
    assert "add.435" not in g.buffer_names and "add.435" in users(g, params[2].name)
    assert g.buffer_live_out[buffer(g, params[2].name)]
    # output {14} = add.424 does not read parameter 14 itself: separate buffers, and the
    # donated parameter is free after its last use
    assert "add.424" in g.buffer_names
    assert not g.buffer_live_out[buffer(g, params[14].name)]
    # readers of an overwritten value are ordered before its writer (no copy needed)
    for r, w in g.meta.get("alias_order_edges", []):
        assert g.op_index(r) in g.control_preds(g.op_index(w))
    # collectives: all-gather over iota groups [1,4]<=[4]
    ag = g.op_index("all-gather.11") if "all-gather.11" in g.op_names else None
    cols = [c for c in g.collectives.values() if c.kind == "all-gather"]
    assert cols and all(c.group_size == 4 for c in cols)
    assert all(g.collectives[i].kind in ("all-reduce", "all-gather", "collective-permute")
               for i in g.collectives)
    # the while loops carry their bodies' temporaries
    whiles = [i for i in range(g.n_ops) if g.opcodes[i] == "while"]
    assert len(whiles) == 2 and all(g.transient[i].constant_value > 0 for i in whiles)
    assert all(g.attrs(i)["while_body"] in graphs for i in whiles)
    del ag


# -- sizes ----------------------------------------------------------------------------------

XLA_BYTES = {
    "pred": 1, "s1": 1, "u1": 1, "s2": 1, "u2": 1, "s4": 1, "u4": 1, "s8": 1, "u8": 1,
    "f4e2m1fn": 1, "f8e5m2": 1, "f8e4m3": 1, "f8e4m3fn": 1, "f8e4m3b11fnuz": 1, "f8e3m4": 1,
    "f8e5m2fnuz": 1, "f8e4m3fnuz": 1, "f8e8m0fnu": 1,
    "s16": 2, "u16": 2, "f16": 2, "bf16": 2, "s32": 4, "u32": 4, "f32": 4,
    "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16,
}


def test_element_type_byte_sizes():
    assert {k: v for k, v in ELEMENT_BYTES.items() if k != "token"} == XLA_BYTES
    params = "\n".join(f"  p{k} = {t}[3,5] parameter({k})" for k, t in enumerate(XLA_BYTES))
    names = ", ".join(f"p{k}" for k in range(len(XLA_BYTES)))
    g = read_hlo_text(f"HloModule types\nENTRY e {{\n{params}\n  ROOT t = tuple({names})\n}}\n")
    for k, t in enumerate(XLA_BYTES):
        assert g.buffer_sizes[buffer(g, f"p{k}")].constant_value == 15 * XLA_BYTES[t], t
    # the root tuple's table: 8 bytes per element
    assert g.buffer_sizes[buffer(g, "t{}")].constant_value == 8 * len(XLA_BYTES)


def test_packed_bounded_tuple_token_opaque_sizes():
    text = """HloModule sizes
ENTRY e {
  a = s4[5]{0:E(4)} parameter(0)
  b = f32[<=128,64]{1,0} parameter(1)
  c = (f32[2]{0}, s8[3]{0}, (), (pred[], bf16[4])) parameter(2)
  d = u4[7]{0:T(1024)E(4)} parameter(3)
  e = opaque[] parameter(4)
  tok = token[] after-all()
  ROOT r = f32[<=128,64]{1,0} negate(b)
}
"""
    m = parse_hlo_text(text)
    shp = {i.name: i.shape for i in m.entry.instructions}
    assert shp["a"].byte_size() == 3            # ceil(5 * 4 bits / 8)
    assert shp["b"].byte_size() == 128 * 64 * 4  # sized at the bound
    assert shp["b"].dynamic == (True, False)
    assert shp["c"].byte_size() == 4 * 8         # a tuple is its index table
    assert shp["c"].leaf_bytes() == 8 + 3 + 1 + 8
    assert shp["d"].byte_size() == 4 and shp["d"].layout == "{0:T(1024)E(4)}"
    assert shp["e"].byte_size() == 8 and shp["tok"].byte_size() == 0
    g = read_hlo_text(text)
    sizes = {g.buffer_names[j]: g.buffer_sizes[j].constant_value for j in range(g.n_buffers)}
    assert sizes == {"a": 3, "b": 32768, "c{}": 32, "c{0}": 8, "c{1}": 3, "c{3}": 16,
                     "c{3,0}": 1, "c{3,1}": 8, "d": 4, "e": 8, "r": 32768}
    # an empty tuple has no table, a token has no bytes: neither gets a buffer
    assert "c{2}" not in sizes and "tok" not in sizes


def test_unbounded_dim_is_symbolic():
    g = read_hlo_text("HloModule u\nENTRY e {\n  p = f32[?,64] parameter(0)\n"
                      "  ROOT n = f32[?,64] negate(p)\n}\n")
    assert str(g.buffer_sizes[buffer(g, "n")]) in ("256*dyn", "dyn*256")


@needs_shared
def test_host_memory_buffers_count_zero_on_device():
    g = read_hlo_graph(str(XLA / "gpu_hlo_schedule_test__CopyStartDoneScheduled.hlo"))
    host = buffer(g, "copy-start.1{0}")
    assert g.buffer_space[host] == 5
    assert g.buffer_sizes[host].constant_value == 512 * 1024 * 4
    assert g.sizes(static())[0, host] == 0
    # copy-start.1 forwards its source into {1}; copy-done.1 forwards the host copy {0};
    # copy-start.3 reads it, so the host buffer lives until copy-done.3
    assert users(g, "copy-start.1{0}") == ["copy-done.1", "copy-done.3", "copy-start.3"]
    assert users(g, "add.31") == ["copy-done.1", "copy-start.1", "tanh.14"]
    prof = simulate(g, g.default_order())
    mb2 = 2 * 1024 * 1024
    # text order: the peak is at add.0: both parameters, reduce-precision.2, the device copy
    # back (copy-start.3{0}) and add.0 itself; the host copy costs nothing
    assert int(prof.peak[0]) == 5 * mb2
    assert int(prof.usage[0, 4]) == 4 * mb2 + 24 + 4   # at copy-start.1: + table + context


# -- hand-derived peaks -----------------------------------------------------------------------

@needs_shared
def test_list_scheduler_handles_aliasing_peak_by_hand():
    g = read_hlo_graph(str(XLA / "hlo_memory_scheduler_test__ListSchedulerHandlesAliasing.hlo"))
    # a and b forward t's elements (p0, p1); the tuples allocate 16- and 24-byte tables
    assert sorted(g.buffer_names) == sorted(["param", "p0", "p1", "t{}", "c", "d", "e", "f",
                                             "result{}"])
    assert users(g, "p1") == ["b", "c", "d", "t"]
    order = order_of(g, ["param", "p1", "p0", "t", "b", "a", "c", "d", "e", "f", "result"])
    prof = simulate(g, order)
    # By hand (4000 B per s32[1000]): live ranges param [0,10], p1 [1,7], p0 [2,6],
    # t{} [3,5], c [6,8], d [7,10], e [8,10], f [9,10], result{} [10,10], giving usage
    #   4000, 8000, 12000, 12016, 12016, 12016, 16000, 16000, 16000, 16000, 16024.
    # Our IR has no operand-buffer reuse, so at step 8 (e) c is still counted next to e:
    # 16,000 where XLA's heap simulator, which puts e in c's dying buffer, has 12,000.
    # The peak is at the last step (param, d, e, f and the 24-byte result table) where the
    # reuse plays no part, so both give 16,024 for this order.
    assert prof.usage[0].tolist() == [4000, 8000, 12000, 12016, 12016, 12016,
                                      16000, 16000, 16000, 16000, 16024]
    assert int(prof.peak[0]) == 16024


@needs_shared
def test_while_shares_loop_state_and_carries_body_temporaries():
    m = read_hlo_module(str(XLA / "latency_hiding_scheduler_test__WhileLoopAliasingBug.hlo"))
    graphs = module_graphs(m)
    assert list(graphs) == ["while_cond", "while_body", "entry"]
    body = graphs["while_body"]
    # body: parameter leaves and root values belong to the caller
    assert body.buffer_live_in[buffer(body, "param{0}")]
    g = graphs["entry"]
    w = g.op_index("while")
    assert g.kind(w) == OpKind.CONTROL_FLOW
    # the body never holds more than the loop state it is handed (param{1} is never read,
    # so its bytes are free from the start): nothing on top of what the caller counts
    assert g.transient[w].constant_value == 0
    # the read-only entry parameters cannot hold the loop state: the while gets fresh
    # buffers (XLA's copies) for the two leaves the body writes, passes p2 through (the
    # body returns its parameter there) and reuses the init tuple's table
    assert sorted(n for n in g.buffer_names if n.startswith("while")) == \
        ["while{0}", "while{1}"]
    assert "while" in users(g, "tuple{}") and "gte1" not in users(g, "p2")
    prof = simulate(g, g.default_order())
    # at the while: p0+p1+p2 (33) + init table (24) + loop state (32)
    assert int(prof.usage[0, w]) == 89 and int(prof.peak[0]) == 89
    assert g.attrs(w)["while_body"] == "while_body"
    cp = body.op_index("collective-permute.1")
    assert body.attrs(cp)["source_target_pairs"] == [(0, 1), (1, 2), (2, 3)]
    assert body.collectives[cp].group_size == 4


@needs_shared
def test_while_in_body_of_send_recv_test_shares_init_buffer():
    m = read_hlo_module(str(XLA / "gpu_hlo_schedule_test__LHSSendRecv.hlo"))
    g = module_graphs(m)["test_computation"]
    # init (4 MiB) is shared by the loop; the constant c0 gets a fresh 4-byte buffer
    assert "while_result" in users(g, "init")
    assert g.buffer_sizes[buffer(g, "while_result{0}")].constant_value == 4
    assert "while_result{1}" not in g.buffer_names
    # omitted result shape of count = get-tuple-element(%param) is inferred as u32[]
    body = m.by_name["while_body"]
    assert str(body.index["count"].shape) == "u32[]" and body.index["count"].shape_inferred


def test_in_place_ops_share_the_operand_buffer():
    text = """HloModule inplace, input_output_alias={ {0}: (0, {}, must-alias) }

fused_dus {
  fp0 = f32[16]{0} parameter(0)
  fp1 = f32[4]{0} parameter(1)
  fp2 = s32[] parameter(2)
  bc = f32[16]{0} bitcast(fp0)
  ROOT d = f32[16]{0} dynamic-update-slice(bc, fp1, fp2)
}

ENTRY e {
  p0 = f32[16]{0} parameter(0)
  p1 = f32[16]{0} parameter(1)
  upd = f32[4]{0} parameter(2)
  i = s32[] parameter(3)
  dus0 = f32[16]{0} dynamic-update-slice(p0, upd, i)
  dus1 = f32[16]{0} dynamic-update-slice(p1, upd, i)
  f = f32[16]{0} fusion(dus1, upd, i), kind=kLoop, calls=fused_dus
  cc = f32[16]{0} custom-call(f, upd), custom_call_target="foo", output_to_operand_aliasing={{}: (0, {})}
  ROOT t = (f32[16]{0}, f32[16]{0}) tuple(dus0, cc)
}
"""
    g = read_hlo_text(text)
    # p0 is donated: dus0 updates it in place, and it reaches the root (live-out)
    assert "dus0" not in g.buffer_names
    assert users(g, "p0") == ["dus0", "t"] and g.buffer_live_out[buffer(g, "p0")]
    # p1 is read-only: dus1 gets its own buffer (XLA's copy), then the fusion (root DUS on
    # its parameter 0 behind a bitcast) and the aliased custom call update that in place
    assert g.buffer_live_out[buffer(g, "p1")]
    assert "f" not in g.buffer_names and "cc" not in g.buffer_names
    assert users(g, "dus1") == ["cc", "f", "t"] and g.buffer_live_out[buffer(g, "dus1")]
    assert g.flops[g.op_index("f")].constant_value == 0


def test_overwriting_a_value_orders_its_readers_or_keeps_a_copy():
    text = """HloModule order, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, may-alias) }

ENTRY e {
  p0 = f32[16]{0} parameter(0)
  p1 = f32[16]{0} parameter(1)
  upd = f32[4]{0} parameter(2)
  i = s32[] parameter(3)
  n = f32[16]{0} negate(p0)
  dus0 = f32[16]{0} dynamic-update-slice(p0, upd, i)
  dus1 = f32[16]{0} dynamic-update-slice(p1, upd, i)
  late = f32[16]{0} add(dus1, p1)
  ROOT t = (f32[16]{0}, f32[16]{0}, f32[16]{0}, f32[16]{0}) tuple(dus0, dus1, n, late)
}
"""
    g = read_hlo_text(text)
    # n reads p0 before dus0 overwrites it: dus0 shares p0's buffer and n is ordered first
    assert "dus0" not in g.buffer_names
    assert g.op_index("n") in g.control_preds(g.op_index("dus0"))
    assert g.meta["alias_order_edges"] == [("n", "dus0")]
    # late reads p1 and dus1's result, so it must run after dus1: XLA keeps a copy
    assert "dus1" in g.buffer_names and g.buffer_live_out[buffer(g, "dus1")]
    assert not g.buffer_live_out[buffer(g, "p1")]    # donated, free after late
    assert users(g, "p1") == ["dus1", "late"]


def test_call_and_conditional():
    text = """HloModule cf

callee {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  t1 = f32[8] negate(a)
  t2 = f32[8] exponential(t1)
  s = f32[8] add(t2, a)
  ROOT r = (f32[8], f32[8]) tuple(b, s)
}

br0 {
  x = f32[8] parameter(0)
  y = f32[8] negate(x)
  z = f32[8] negate(y)
  ROOT w = f32[8] negate(z)
}

br1 {
  x1 = f32[8] parameter(0)
  ROOT w1 = f32[8] abs(x1)
}

ENTRY e {
  p = f32[8] parameter(0)
  q = f32[8] parameter(1)
  k = s32[] parameter(2)
  c = (f32[8], f32[8]) call(p, q), to_apply=callee
  g0 = f32[8] get-tuple-element(c), index=0
  g1 = f32[8] get-tuple-element(c), index=1
  cond = f32[8] conditional(k, g0, g1), branch_computations={br0, br1}
  ROOT o = f32[8] add(cond, g1)
}
"""
    m = parse_hlo_text(text)
    assert scheduled_computations(m) == ["callee", "br0", "br1", "e"]
    g = module_graphs(m)["e"]
    c = g.op_index("c")
    # the call passes q through (element 0) and returns a new value (element 1)
    assert "c{0}" not in g.buffer_names and "g0" in users(g, "q")
    assert g.buffer_sizes[buffer(g, "c{1}")].constant_value == 32
    # the callee's peak (a, b, t1, t2: 128 B at t2) beyond what the caller counts at the
    # call (a, b, the result s and its 16 B tuple table: 112 B): 16 B
    assert g.transient[c].constant_value == 16
    # conditional: new output buffer; br0 peaks at x, y, z (96 B) where the caller counts
    # the operand x and the result (64 B): 32 B; br1 needs nothing beyond
    cond = g.op_index("cond")
    assert g.buffer_sizes[buffer(g, "cond")].constant_value == 32
    assert g.transient[cond].constant_value == 32
    # and so every step costs what XLA's live ranges give (callees flattened in)
    usage = simulate(g, range(g.n_ops)).usage[0]
    assert [int(x) for x in usage] == [b for _, b in xla_live_ranges(m).usage_per_entry_step(m)]
    assert g.flops[cond].constant_value == 24   # max over branches of elementwise elements


# -- async pairs, collectives, attributes -----------------------------------------------------

@needs_shared
def test_all_gather_async_pair():
    g = read_hlo_graph(str(XLA / "latency_hiding_scheduler_test__AllGatherAsyncSimple.hlo"))
    s, d = g.op_index("ag-start"), g.op_index("ag-done")
    assert g.kind(s) == OpKind.ASYNC_START and g.kind(d) == OpKind.ASYNC_DONE
    assert g.async_done[s] == d and g.async_start[d] == s
    # the start forwards its operand in {0} (kept live until the done) and defines {1}
    assert users(g, "color_operand.1") == ["ag-done", "ag-start"]
    assert users(g, "ag-start{1}") == ["a2", "ag-done"]
    col = g.collectives[s]
    assert col.kind == "all-gather" and col.group_size == 2
    assert col.bytes.constant_value == 16 * 256 * 256 * 4 and col.replica_groups == ((0, 1),)
    assert g.attrs(s)["op_name"] == "ag0"
    # scalars are flagged for the list scheduler; the module is scheduled
    assert g.attrs(g.op_index("convert"))["is_effective_scalar"]
    assert g.original_order == tuple(range(g.n_ops))
    # convolution flops: 2 * output(16*256*256) * window 16 * input features 64
    assert g.flops[g.op_index("c0")].constant_value == 2 * 16 * 256 * 256 * 16 * 64


@needs_shared
def test_async_start_with_calls_and_sugar():
    g = read_hlo_graph(str(XLA / "latency_hiding_scheduler_test__AllToAllAsyncBalance.hlo"))
    s = g.op_index("ata-start")
    assert g.async_done[s] == g.op_index("ata-done")
    assert g.attrs(s)["wrapped_opcode"] == "all-to-all"
    assert g.collectives[s].kind == "all-to-all" and g.collectives[s].group_size == 2
    g2 = read_hlo_graph(str(XLA / "gpu_hlo_schedule_test__AsyncOps.hlo"))
    s1 = g2.op_index("acc1_start")
    assert g2.opcodes[s1] == "async-start" and g2.attrs(s1)["raw_opcode"] == "fusion-start"
    assert g2.attrs(s1)["wrapped_opcode"] == "fusion"
    assert g2.opcodes[g2.async_done[s1]] == "async-done"
    assert g2.flops[s1].constant_value == 4           # the fused add on f32[2,2]


@needs_shared
def test_sync_flag_send_recv_and_all_reduce_start():
    g = read_hlo_graph(str(XLA / "gpu_hlo_schedule_test__PostProcessAsyncCollectives.hlo"))
    ag, ar = g.op_index("ag-start"), g.op_index("ar-start")
    assert g.attrs(ag)["is_sync"] is True and g.collectives[ag].is_sync
    assert not g.collectives[ar].is_sync and g.collectives[ar].kind == "all-reduce"
    # all-reduce-start works in place, but p0 is a read-only parameter: fresh buffer
    assert "ar-start" in g.buffer_names and users(g, "ar-start") == ["add3", "ar-done"]
    m = read_hlo_module(str(XLA / "gpu_hlo_schedule_test__LHSSendRecv.hlo"))
    body = module_graphs(m)["while_body"]
    for start, done in (("recv", "recv-done"), ("send", "send-done")):
        s = body.op_index(start)
        assert body.async_done[s] == body.op_index(done)
        assert body.attrs(s)["channel_id"] == 1
        assert body.collectives[s].kind == start
    # recv-done forwards the received data; the dot reads it via recv-data
    assert "recv-done" in users(body, "recv{0}") and "b" in users(body, "recv{0}")


@needs_shared
def test_host_send_done_module_without_root():
    m = read_hlo_module(str(XLA / "hlo_memory_scheduler_test__HostSendDoneSchedule.hlo"))
    assert not m.entry.root_explicit and m.entry.root.name == "send-done"
    g = read_hlo_graph(str(XLA / "hlo_memory_scheduler_test__HostSendDoneSchedule.hlo"))
    s = g.op_index("send")
    assert g.async_done[s] == g.op_index("send-done")
    assert g.attrs(s)["is_host_transfer"] is True
    # p is forwarded into the send's {0} and stays until send-done
    assert users(g, "p") == ["n1", "send", "send-done"]


def test_control_predecessors_attributes_and_iota_groups():
    text = """HloModule attrs, replica_count=8

sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  p = f32[64,32]{1,0} parameter(0)
  w = f32[32,16]{1,0} parameter(1)
  d = f32[64,16]{1,0} dot(p, w), lhs_contracting_dims={1}, rhs_contracting_dims={0},
    metadata={op_type="Dot" op_name="layer/dot"}, frontend_attributes={_scheduling_group_id="3",
    other="v"}
  cc = f32[64,16]{1,0} custom-call(d), custom_call_target="x", schedule=SCHEDULE_EARLIEST,
    backend_config="{\\"force_earliest_schedule\\":true}"
  ar = f32[64,16]{1,0} all-reduce(cc), replica_groups=[2,4]<=[8], to_apply=sum, channel_id=7
  ar2 = f32[64,16]{1,0} all-reduce(ar), replica_groups=[2,4]<=[4,2]T(1,0), to_apply=sum
  ar3 = f32[64,16]{1,0} all-reduce(ar2), replica_groups={}, to_apply=sum
  n = f32[64,16]{1,0} negate(p), control-predecessors={ar3, %d}
  ROOT r = (f32[64,16]{1,0}, f32[64,16]{1,0}) tuple(ar3, n)
}
"""
    g = read_hlo_text(text)
    n = g.op_index("n")
    assert sorted(g.op_names[c] for c in g.control_preds(n)) == ["ar3", "d"]
    assert g.op_index("ar3") in g.preds(n)
    d = g.op_index("d")
    assert g.flops[d].constant_value == 2 * 64 * 16 * 32
    assert g.bytes_accessed[d].constant_value == 4 * (64 * 32 + 32 * 16 + 64 * 16)
    a = g.attrs(d)
    assert a["op_name"] == "layer/dot" and a["scheduling_group_id"] == "3"
    assert a["frontend_attributes"] == {"_scheduling_group_id": "3", "other": "v"}
    cc = g.attrs(g.op_index("cc"))
    assert cc["custom_call_schedule"] == "SCHEDULE_EARLIEST" and cc["force_earliest_schedule"]
    ar, ar2, ar3 = (g.collectives[g.op_index(x)] for x in ("ar", "ar2", "ar3"))
    assert ar.group_size == 4 and ar.replica_groups == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert ar.channel_id == 7 and ar.bytes.constant_value == 64 * 16 * 4
    assert ar2.replica_groups == ((0, 2, 4, 6), (1, 3, 5, 7))
    assert ar3.group_size == 8                 # empty groups: all replicas
    assert parse_replica_groups("{{0,1},{2,3}}") == [[0, 1], [2, 3]]
    assert g.original_order is None


def test_headerless_no_entry_comments_and_trailing_sections():
    text = """// RUN: some-tool %s
// a headerless file, as in XLA's emitter tests
helper {
  hp = f32[4] parameter(0)
  ROOT hn = f32[4] negate(hp)
}, execution_thread="main"

main (a: f32[4], b: (s32[], f32[4])) -> f32[4] {
  a = f32[4]{0} parameter(0)  // trailing comment
  b = (s32[], f32[4]{0}) parameter(1)
  /* block
     comment */
  gb = f32[4]{0} get-tuple-element(b), index=1
  m = f32[4]{0} multiply(f32[4]{0} a,
      /*index=1*/f32[4]{0} gb)
  c = f32[4]{0} call(m), to_apply=helper
}

FileNames
1 "model.py"
StackFrames
1 {file_location_id=1 parent_frame_id=0}
"""
    m = parse_hlo_text(text)
    assert m.name is None and m.entry.name == "main" and not m.entry.is_entry
    assert m.by_name["helper"].execution_thread == "main"
    assert m.entry.root.name == "c"
    g = module_graphs(m)["main"]
    assert g.meta["root"] == "c"
    assert g.buffer_live_out[buffer(g, "c")]
    assert users(g, "b{1}") == ["gb", "m"]
    assert g.transient[g.op_index("c")].constant_value == 0


def test_read_graph_dispatches_to_hlo(tmp_path):
    p = tmp_path / "tiny.hlo"
    p.write_text("HloModule tiny, is_scheduled=true\nENTRY e {\n  p = f32[2] parameter(0)\n"
                 "  ROOT n = f32[2] negate(p)\n}\n")
    g = read_graph(str(p))
    assert g.op_names == ("p", "n") and g.original_order == (0, 1)
    with pytest.raises(InputError, match="unknown option"):
        read_hlo_graph(str(p), bogus=1)
    with pytest.raises(InputError, match="no computation named"):
        read_hlo_graph(str(p), computation="nope")


def test_scheduled_text_order_must_be_valid():
    text = ("HloModule bad, is_scheduled=true\nENTRY e {\n  n = f32[2] negate(p)\n"
            "  p = f32[2] parameter(0)\n  ROOT a = f32[2] abs(n)\n}\n")
    assert parse_hlo_text(text).entry.instructions[0].name == "n"   # parsing is fine
    with pytest.raises(InputError, match="not a valid schedule") as e:
        read_hlo_text(text)
    assert e.value.line == 2


# -- malformed input ------------------------------------------------------------------------

MALFORMED = {
    "truncated.hlo": (5, 21, "end of file"),
    "unknown_type.hlo": (5, 7, "unknown element type 'f33'"),
    "dangling_operand.hlo": (5, 26, "unknown operand 'q'"),
    "duplicate_name.hlo": (6, 3, "'a' is defined twice"),
    "cycle.hlo": (5, 3, "cycle"),
    "control_cycle.hlo": (5, 3, "cycle"),
    "unclosed_brace.hlo": (8, 1, "not closed"),
    "extra_brace.hlo": (7, 1, "'}' outside any computation"),
    "mismatched_brackets.hlo": (5, 65, "does not close '{'"),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_input_reports_where_and_why(name):
    line, col, reason = MALFORMED[name]
    path = str(DATA / name)
    with pytest.raises(InputError) as e:
        read_hlo_graph(path)
    err = e.value
    assert (err.path, err.line, err.column) == (path, line, col)
    assert reason in err.reason
    assert str(err).startswith(f"{path}:{line}:{col}: ")


@pytest.mark.parametrize("text, where, reason", [
    ('HloModule m\nENTRY e {\n  p = f32[2] parameter(0), metadata={op_name="x}\n}\n',
     (3, 46), "unterminated string"),
    ("HloModule m\nENTRY e {\n  p = f32[2] parameter(0) /* open\n}\n", (3, 27),
     "unterminated /* comment"),
    ("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT a = f32[2] abs(p)\n"
     "  ROOT b = f32[2] abs(p)\n}\n", (5, 3), "two ROOT"),
    ("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
     "  ROOT a = f32[2] call(p), to_apply=missing\n}\n", (4, 37), "unknown computation"),
    ("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT a = f32[2] abs(p) junk\n}\n",
     (4, 26), "found 'junk'"),
    ("HloModule m\nENTRY e {\n  p = f32[2 parameter(0)\n}\n", (3, 13), "expected ','"),
    ("HloModule m\nENTRY e {\n  p = f32[2] parameter(x)\n}\n", (3, 24), "integer"),
    ("HloModule m\n", (2, 1), "no computation"),
    ("HloModule m\nENTRY e {\n}\n", (2, 9), "no instructions"),
    ("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT a = f32[2] abs(p) @\n}\n",
     (4, 26), "unexpected character '@'"),
])
def test_malformed_text_errors(text, where, reason):
    with pytest.raises(InputError) as e:
        read_hlo_text(text)
    assert (e.value.line, e.value.column) == where, str(e.value)
    assert reason in e.value.reason


def test_unknown_opcode_is_accepted_generically():
    g = read_hlo_text("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
                      "  ROOT a = f32[2] frobnicate(p), mystery={1,2}\n}\n")
    a = g.op_index("a")
    assert g.kind(a) == OpKind.COMPUTE and g.buffer_live_out[buffer(g, "a")]
    m = parse_hlo_text("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
                       "  ROOT a = f32[2] frobnicate(p), mystery={1,2}\n}\n")
    assert m.entry.root.attrs["mystery"] == "{1,2}"
