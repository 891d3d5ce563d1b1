"""HLO writer: new orders, is_scheduled=true, verbatim text otherwise, added instructions,
and the round trip reader -> writer -> reader."""

from __future__ import annotations

import heapq
from pathlib import Path

import numpy as np
import pytest

from cpsched.core.errors import InputError
from cpsched.core.graph import OpKind
from cpsched.analysis.memory import simulate
from cpsched.readers.hlo.convert import module_graphs
from cpsched.readers.hlo.parser import parse_hlo_text, read_hlo_module
from cpsched.writers.hlo import write_hlo, write_hlo_file

REPO = Path(__file__).resolve().parents[1]
XLA = REPO.parent / "shared" / "peer-cases" / "xla"
MODELS = REPO.parent / "shared" / "peer-cases" / "xla-models"

ROUND_TRIP = [
    XLA / "hlo_memory_scheduler_test__ListSchedulerHandlesAliasing.hlo",
    XLA / "hlo_memory_scheduler_test__HostSendDoneSchedule.hlo",
    XLA / "gpu_hlo_schedule_test__LHSSendRecv.hlo",
    XLA / "gpu_hlo_schedule_test__AsyncOps.hlo",
    XLA / "gpu_hlo_schedule_test__CopyStartDoneScheduled.hlo",
    XLA / "latency_hiding_scheduler_test__AllGatherAsyncBalance.hlo",
    XLA / "latency_hiding_scheduler_test__WhileOverlapLimit.hlo",
    XLA / "latency_hiding_scheduler_test__AllToAllAsyncBalance.hlo",
    MODELS / "graphsage_tf.hlo",
    REPO / "models" / "hlo" / "mlp_train.hlo",
]


def latest_first_order(g):
    """A valid order other than the text order: Kahn's algorithm, largest index first."""
    indeg = np.diff(g.pred_ptr).astype(int)
    ready = [-i for i in range(g.n_ops) if indeg[i] == 0]
    heapq.heapify(ready)
    out = []
    while ready:
        i = -heapq.heappop(ready)
        out.append(i)
        for s in g.succs(i):
            indeg[s] -= 1
            if indeg[s] == 0:
                heapq.heappush(ready, -int(s))
    return out


def signature(g):
    """Everything about a graph except the numbering of its ops and buffers."""
    ops = {g.op_names[i]: (g.opcodes[i], int(g.kinds[i]),
                           tuple(g.op_names[o] for o in g.operands(i)),
                           tuple(sorted(g.op_names[c] for c in g.control_preds(i))),
                           str(g.flops[i]), str(g.bytes_accessed[i]), str(g.transient[i]),
                           g.op_names[g.async_start[i]] if g.async_start[i] >= 0 else None,
                           g.collectives.get(i))
           for i in range(g.n_ops)}
    bufs = sorted((g.buffer_names[j], str(g.buffer_sizes[j]), g.op_names[g.buffer_def[j]],
                   tuple(sorted(g.op_names[u] for u in g.buffer_users(j))),
                   bool(g.buffer_live_in[j]), bool(g.buffer_live_out[j]),
                   int(g.buffer_space[j])) for j in range(g.n_buffers))
    return ops, bufs


@pytest.mark.parametrize("path", ROUND_TRIP, ids=lambda p: p.stem[:50])
def test_round_trip_with_new_orders(path):
    if not path.exists():
        pytest.skip(f"{path.name} not present")
    m = read_hlo_module(str(path))
    graphs = module_graphs(m)
    orders = {name: [g.op_names[i] for i in latest_first_order(g)] for name, g in graphs.items()}
    assert any(orders[n] != list(g.op_names) for n, g in graphs.items())
    text = write_hlo(m, orders)
    m2 = parse_hlo_text(text)
    assert m2.is_scheduled
    graphs2 = module_graphs(m2)
    # the callees' peaks (transients of their callers) depend on the callees' orders
    reference = module_graphs(m, orders)
    assert list(graphs2) == list(graphs)
    for name, g2 in graphs2.items():
        assert [g2.op_names[i] for i in g2.original_order] == orders[name]
        assert signature(g2) == signature(reference[name])
    # the same orders written again give the same text
    assert write_hlo(m2, orders) == text


@pytest.mark.parametrize("path", [p for p in ROUND_TRIP if p.parent == XLA][:6],
                         ids=lambda p: p.stem[:50])
def test_text_order_rewrites_verbatim(path):
    if not path.exists():
        pytest.skip(f"{path.name} not present")
    m = read_hlo_module(str(path))
    orders = {c.name: [i.name for i in c.instructions] for c in m.computations}
    out = write_hlo(m, orders)
    if m.is_scheduled:
        assert out == m.text
    else:
        # only the header gains the flag (and a missing ROOT is made explicit)
        assert out.replace(", is_scheduled=true", "", 1).replace("ROOT ", "") == \
            m.text.replace("ROOT ", "")


def test_header_flag_comments_and_implicit_root():
    text = """HloModule m, is_scheduled=false, replica_count=2

ENTRY e {
  p = f32[8] parameter(0)
  // the first consumer
  a = f32[8] negate(p)  // trailing note
  b = f32[8] abs(p)
  s = f32[8] add(a, b)
}
"""
    m = parse_hlo_text(text)
    out = write_hlo(m, {"e": ["p", "b", "a", "s"]})
    assert out.startswith("HloModule m, is_scheduled=true, replica_count=2\n")
    assert "  b = f32[8] abs(p)\n  // the first consumer\n  a = f32[8] negate(p)" in out
    assert "ROOT s = f32[8] add(a, b)" in out
    # moving the implicit root away from the end keeps it the root
    out2 = write_hlo(m, {"e": ["p", "a", "b", "s"]})
    m3 = parse_hlo_text(write_hlo(m, {"e": ["p", "b", "a", "s"]}))
    assert m3.entry.root.name == "s" and m3.entry.root_explicit
    assert parse_hlo_text(out2).is_scheduled
    headerless = parse_hlo_text("main {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p)\n}\n")
    out3 = write_hlo(headerless, {"main": ["p", "n"]})
    assert out3.startswith("HloModule main, is_scheduled=true\n")
    assert parse_hlo_text(out3).entry.name == "main"


def test_added_instructions_offload_to_host():
    text = """HloModule offload, is_scheduled=true

ENTRY main {
  p0 = f32[1024]{0} parameter(0)
  a = f32[1024]{0} negate(p0)
  b = f32[1024]{0} tanh(a)
  c = f32[1024]{0} tanh(b)
  ROOT d = f32[1024]{0} add(a, c)
}
"""
    m = parse_hlo_text(text)
    g0 = module_graphs(m)["main"]
    extra = [
        "cs = (f32[1024]{0:S(5)}, f32[1024]{0}, u32[]) copy-start(a)",
        "cd = f32[1024]{0:S(5)} copy-done(cs)",
        "cs2 = (f32[1024]{0}, f32[1024]{0:S(5)}, u32[]) copy-start(cd)",
        "cd2 = f32[1024]{0} copy-done(cs2)",
    ]
    order = ["p0", "a", "cs", "cd", "b", "c", "cs2", "cd2", "d"]
    out = write_hlo(m, {"main": order}, extra={"main": extra},
                    replace={"main": {"d": "d = f32[1024]{0} add(cd2, c)"}})
    assert "\n  cs = (f32[1024]{0:S(5)}, f32[1024]{0}, u32[]) copy-start(a)\n" in out
    assert "ROOT d = f32[1024]{0} add(cd2, c)" in out
    g = module_graphs(parse_hlo_text(out))["main"]
    assert list(g.op_names) == order and g.original_order == tuple(range(9))
    for s, d in (("cs", "cd"), ("cs2", "cd2")):
        assert g.async_done[g.op_index(s)] == g.op_index(d)
        assert g.kind(g.op_index(s)) == OpKind.ASYNC_START
    host = g.buffer_names.index("cs{0}")
    assert g.buffer_space[host] == 5
    kib4 = 4096
    before = simulate(g0, g0.original_order).usage[0]
    after = simulate(g, g.original_order).usage[0]
    # at c: p0, a, b, c on the device before; a sits on the host after
    assert int(before[g0.op_index("c")]) == 4 * kib4
    assert int(after[g.op_index("c")]) == 3 * kib4


def test_writer_errors(tmp_path):
    text = ("HloModule m\nENTRY e {\n  p = f32[8] parameter(0)\n  a = f32[8] negate(p)\n"
            "  ROOT b = f32[8] abs(a)\n}\n")
    m = parse_hlo_text(text)
    with pytest.raises(InputError, match="leaves out 1 instruction"):
        write_hlo(m, {"e": ["p", "a"]})
    with pytest.raises(InputError, match="lists 'a' twice"):
        write_hlo(m, {"e": ["p", "a", "a", "b"]})
    with pytest.raises(InputError, match="names 'x'"):
        write_hlo(m, {"e": ["p", "x", "a", "b"]})
    with pytest.raises(InputError, match="no computation named"):
        write_hlo(m, {"nope": []})
    with pytest.raises(InputError, match="does not hold together.*dependence"):
        write_hlo(m, {"e": ["p", "b", "a"]})
    with pytest.raises(InputError, match="added instruction #0"):
        write_hlo(m, {"e": ["p", "a", "b"]}, extra={"e": ["c = f32[8] negate("]})
    with pytest.raises(InputError, match="need an order"):
        write_hlo(m, {}, extra={"e": ["c = f32[8] negate(a)"]})
    with pytest.raises(InputError, match="leaves out"):
        write_hlo(m, {"e": ["p", "a", "b"]}, extra={"e": ["c = f32[8] negate(a)"]})
    with pytest.raises(InputError, match="clashes"):
        write_hlo(m, {"e": ["p", "a", "b"]}, extra={"e": ["a = f32[8] negate(p)"]})
    with pytest.raises(InputError, match="names its instruction"):
        write_hlo(m, {"e": ["p", "a", "b"]}, replace={"e": {"a": "z = f32[8] negate(p)"}})
    # positions work as well as names
    out = write_hlo(m, {"e": [0, 1, 2]})
    assert parse_hlo_text(out).is_scheduled
    src = tmp_path / "in.hlo"
    src.write_text(text)
    mod = read_hlo_module(str(src))
    with pytest.raises(InputError, match="refusing to overwrite"):
        write_hlo_file(str(src), mod, {"e": ["p", "a", "b"]})
    dst = tmp_path / "out.hlo"
    write_hlo_file(str(dst), mod, {"e": ["p", "a", "b"]})
    assert read_hlo_module(str(dst)).is_scheduled
