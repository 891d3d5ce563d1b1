"""Calibration against XLA's own liveness dumps (models/hlo/*.live-range.txt).

1. ``xla_live_ranges`` re-implements XLA's HloLiveRange: it must reproduce XLA's file value
   for value (every range, the flattened sequence, the peak moment and its listing).
2. The reader's Graph must give, at every step of XLA's schedule, the bytes XLA's values
   occupy, with two documented differences: constants are not allocated (XLA's heap
   simulator skips them too), and values sharing one HloBuffer (in-place ops, outputs
   written over donated parameters) count once, where XLA's listing counts both sides of
   the hand-over step.
3. The same on the corpus of real programs (models/hlo/corpus, gzipped), which has while
   loops (scan over layers, data-dependent while), conditionals (cond / switch, a switch
   inside a scan) and collectives in loops: XLA's flattened time line puts the called
   computations' steps before the calling instruction, so at a while / conditional / call
   the Graph's one step must cost the most bytes XLA's values occupy over those steps.

XLA's printed peak (the listing under "Live ranges at N (peak)") is a different notion: it
picks the moment by the defining instructions' sizes and counts every value, so both values
of an in-place hand-over, a loop state's phis at the step they meet and the constants are
all counted; the per-step figure here counts each buffer once, as memory is used.
"""

from __future__ import annotations

from pathlib import Path

import gzip

import numpy as np
import pytest

from cpsched.core.errors import InputError
from cpsched.analysis.memory import simulate
from cpsched.readers.hlo.convert import module_graphs
from cpsched.readers.hlo.live_range import (parse_xla_live_range, read_xla_live_range,
                                            xla_live_ranges)
from cpsched.readers.hlo.parser import parse_hlo_text, read_hlo_module

REPO = Path(__file__).resolve().parents[1]
DUMPS = REPO / "models" / "hlo"
CORPUS = DUMPS / "corpus"
SHARED = REPO.parent / "shared" / "peer-cases" / "xla"


def dump_names():
    if not DUMPS.is_dir():
        return []
    return sorted(p.name[:-len(".live-range.txt")] for p in DUMPS.glob("*.live-range.txt")
                  if (DUMPS / (p.name[:-len(".live-range.txt")] + ".hlo")).exists())


needs_dumps = pytest.mark.skipif(not dump_names(), reason="no XLA dumps in models/hlo")


@pytest.fixture(scope="module")
def loaded():
    cache = {}

    def get(name):
        if name not in cache:
            m = read_hlo_module(str(DUMPS / f"{name}.hlo"))
            cache[name] = (m, read_xla_live_range(str(DUMPS / f"{name}.live-range.txt")),
                           xla_live_ranges(m))
        return cache[name]
    return get


@needs_dumps
@pytest.mark.parametrize("name", dump_names())
def test_live_ranges_match_xla_value_for_value(name, loaded):
    m, dump, ours = loaded(name)
    assert m.is_scheduled
    assert ours.schedule_end_time == dump.schedule_end_time
    assert ours.sequence == dump.sequence == [i.name for i in m.entry.instructions]
    assert ours.ranges == dump.ranges
    assert ours.peak_moment() == dump.peak_step
    assert ours.live_at(dump.peak_step) == dump.peak_values
    # our printout reads back as the same dump
    again = parse_xla_live_range(ours.to_text())
    assert again.ranges == dump.ranges and again.peak_values == dump.peak_values


@needs_dumps
@pytest.mark.parametrize("name", dump_names())
def test_graph_usage_equals_xla_values_per_step(name, loaded):
    m, dump, xl = loaded(name)
    g = module_graphs(m)[m.entry.name]
    n = g.n_ops
    assert g.original_order == tuple(range(n))
    # XLA's bytes per step from its own ranges: constants left out, each HloBuffer once
    per_buffer: dict[int, np.ndarray] = {}
    for v in xl.values:
        if m.entry.index[v.instruction].opcode == "constant":
            continue
        s, e = dump.ranges[v.name]
        row = per_buffer.setdefault(xl.buffer_of[v.id], np.zeros(n, dtype=np.int64))
        row[s:min(e, n - 1) + 1] = np.maximum(row[s:min(e, n - 1) + 1], v.byte_size())
    xla_usage = sum(per_buffer.values())
    ours = simulate(g, g.original_order).usage[0]
    np.testing.assert_array_equal(ours, xla_usage)


@needs_dumps
def test_mlp_peak_listing_explained(loaded):
    if "mlp_train" not in dump_names():
        pytest.skip("mlp_train dump not present")
    m, dump, _ = loaded("mlp_train")
    g = module_graphs(m)[m.entry.name]
    usage = simulate(g, g.original_order).usage[0]
    t = dump.peak_step
    assert (t, dump.peak_bytes) == (64, 10_217_816)
    listed = dict(dump.peak_values)
    # XLA lists both sides of the hand-over at step 64: multiply_add_fusion.2 is written
    # over the donated mom_3__0_.1 (1 MiB, one buffer), and the 4-byte constant.49
    assert listed["mom_3__0_.1{}"] == listed["multiply_add_fusion.2{}"] == 1 << 20
    assert "multiply_add_fusion.2" not in g.buffer_names
    assert int(usage[t]) == 10_217_816 - (1 << 20) - listed["constant.49{}"]


def test_flattening_puts_callees_before_the_caller():
    if not SHARED.is_dir():
        pytest.skip("shared peer cases not present")
    m = read_hlo_module(str(SHARED / "latency_hiding_scheduler_test__WhileLoopAliasingBug.hlo"))
    x = xla_live_ranges(m)
    cond = [i.name for i in m.by_name["while_cond"].instructions]
    body = [i.name for i in m.by_name["while_body"].instructions]
    assert x.sequence == ["p0", "p1", "p2", "tuple"] + cond + body + \
        ["while", "gte0", "gte1", "add"]
    assert x.schedule_end_time == 19
    r = x.ranges
    assert r["add{}"] == (18, 19)                    # the entry root lives to the end
    assert r["p2{}"] == (0, 19)                      # read-only parameter: whole program
    assert r["collective-permute.1{}"] == (10, 13)   # body value: def to last use


def test_call_uses_are_moved_into_the_callee_and_orders_are_honoured():
    text = """HloModule c, is_scheduled=true
callee {
  a = f32[4] parameter(0)
  n = f32[4] negate(a)
  ROOT e = f32[4] exponential(n)
}
ENTRY e0 {
  p = f32[4] parameter(0)
  q = f32[4] abs(p)
  c = f32[4] call(q), to_apply=callee
  r = f32[4] add(q, q)
  ROOT s = f32[4] add(c, r)
}
"""
    m = parse_hlo_text(text)
    x = xla_live_ranges(m)
    assert x.sequence == ["p", "q", "a", "n", "e", "c", "r", "s"]
    assert x.ranges["n{}"] == (3, 4)
    # the callee root value reaches the caller through the call: live until s reads it
    assert x.ranges["e{}"] == (4, 7)
    assert x.ranges["q{}"] == (1, 6)
    y = xla_live_ranges(m, {"e0": ["p", "q", "r", "c", "s"]})
    assert y.sequence == ["p", "q", "r", "a", "n", "e", "c", "s"]
    # the call's own use does not count; n reads q through the callee parameter at 4
    assert y.ranges["q{}"] == (1, 4)
    with pytest.raises(InputError):
        xla_live_ranges(m, {"e0": ["p", "q", "c", "s"]})


def test_bad_live_range_file():
    with pytest.raises(InputError, match="not an XLA live-range dump"):
        parse_xla_live_range("hello\n", "x.txt")
    with pytest.raises(InputError, match="has no number"):
        parse_xla_live_range("HloLiveRange (max ?):\n", "x.txt")
    with pytest.raises(InputError, match="bad live range line") as e:
        parse_xla_live_range("HloLiveRange (max 2):\n  InstructionSequence:\n    0:a\n"
                             "  BufferLiveRange:\n    a{}:0-\n", "x.txt")
    assert e.value.line == 5


# -- the corpus of real programs (control flow) -------------------------------------------------

def corpus_names():
    if not CORPUS.is_dir():
        return []
    return sorted(p.name[:-len(".hlo.gz")] for p in CORPUS.glob("*.hlo.gz")
                  if (CORPUS / (p.name[:-len(".hlo.gz")] + ".live-range.txt.gz")).exists())


needs_corpus = pytest.mark.skipif(not corpus_names(), reason="no corpus in models/hlo/corpus")


@pytest.fixture(scope="module")
def corpus():
    cache = {}

    def get(name):
        if name not in cache:
            text = gzip.open(CORPUS / f"{name}.hlo.gz", "rt", encoding="utf-8").read()
            try:
                m = parse_hlo_text(text)
            except InputError as e:   # syntax the reader does not take yet (its own tests)
                pytest.skip(f"{name}: the reader does not parse it yet: {e}")
            dump = parse_xla_live_range(gzip.open(CORPUS / f"{name}.live-range.txt.gz", "rt",
                                                  encoding="utf-8").read())
            cache[name] = (m, dump, xla_live_ranges(m))
        return cache[name]
    return get


@needs_corpus
@pytest.mark.parametrize("name", corpus_names())
def test_corpus_live_ranges_match_xla_value_for_value(name, corpus):
    m, dump, ours = corpus(name)
    assert ours.sequence == dump.sequence
    assert ours.ranges == dump.ranges
    assert ours.peak_moment() == dump.peak_step
    assert ours.live_at(dump.peak_step) == dump.peak_values


@needs_corpus
@pytest.mark.parametrize("name", corpus_names())
def test_corpus_graph_usage_equals_xla_per_step(name, corpus):
    m, dump, xl = corpus(name)
    g = module_graphs(m)[m.entry.name]
    prof = simulate(g, g.original_order)
    want = xl.usage_per_entry_step(m)
    assert [g.op_names[i] for i in prof.order] == [n for n, _ in want]
    np.testing.assert_array_equal(prof.usage[0], [b for _, b in want])


def test_loop_state_is_free_between_its_last_read_and_the_new_write():
    """The body reads the state, then computes a temporary, then writes the new state: XLA's
    ranges leave the state's bytes free in between, and so does the while's transient."""
    text = """HloModule w, is_scheduled=true
cond {
  cp = (s32[], f32[64]) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  lim = s32[] constant(4)
  ROOT lt = pred[] compare(ci, lim), direction=LT
}
body {
  bp = (s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  x = f32[64] get-tuple-element(bp), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  t = f32[64] exponential(x)
  u = f32[64] negate(t)
  y = f32[64] sine(u)
  ROOT r = (s32[], f32[64]) tuple(i1, y)
}
ENTRY e {
  p = f32[64] parameter(0)
  z = s32[] constant(0)
  c = f32[64] copy(p)
  z1 = s32[] copy(z)
  init = (s32[], f32[64]) tuple(z1, c)
  w = (s32[], f32[64]) while(init), condition=cond, body=body
  ROOT o = f32[64] get-tuple-element(w), index=1
}
"""
    m = parse_hlo_text(text)
    xl = xla_live_ranges(m)
    # x is last read at t; the new value y is written two steps later
    assert xl.ranges["bp{1}"][1] < xl.ranges["y{}"][0] - 1
    g = module_graphs(m)["e"]
    usage = simulate(g, range(g.n_ops)).usage[0]
    want = xl.usage_per_entry_step(m)
    assert [int(x) for x in usage] == [b for _, b in want]
    # the body's peak is at u: t, u and the counter (516 B), x and the parameter's tuple
    # table already free, y not yet written; the caller counts the state (counter, x,
    # table: 276 B) at the while, so the while adds 240 B
    w = g.op_index("w")
    assert int(g.transient[w].constant_value) == 516 - 276
