"""XLA's buffer assignment reproduced (cpsched.readers.hlo.buffer_assignment).

Every module of the corpus keeps the report XLA wrote when it compiled it (XLA:CPU for
models/hlo and models/hlo/corpus, XLA:GPU on an H100 for models/hlo/gpu): the assignment
cpsched computes for the module's own order must equal it allocation for allocation (the
values each holds, its size and kind, every value's offset and size), and the two figures
must equal the ones the capture recorded from XLA (manifest.json). For other orders there
is no XLA report here, so the assignment must at least be sound: no two values of one
allocation share bytes while both are live.
"""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest
from helpers import random_topological_order

from cpsched.cli import main
from cpsched.core.errors import InputError
from cpsched.layout.heap import EventHeap, best_heap, place
from cpsched.readers.hlo.buffer_assignment import (
    as_report,
    assign_buffers,
    compare,
    conflicts,
    detect_target,
    parse_buffer_assignment,
    read_buffer_assignment,
    read_memory_usage_totals,
)
from cpsched.readers.hlo.dataflow import Dataflow, Program
from cpsched.readers.hlo.parser import parse_hlo_text, read_hlo_module

HLO = Path(__file__).resolve().parents[1] / "models" / "hlo"


def _modules() -> list[tuple[str, Path, Path]]:
    out = []
    for p in sorted(HLO.glob("*.hlo")):
        ba = p.with_suffix(".buffer-assignment.txt")
        if ba.exists():
            out.append((p.name, p, ba))
    for sub in ("corpus", "corpus-jax0.10", "corpus-jax0.10/bundled", "gpu"):
        for p in sorted((HLO / sub).glob("*.hlo.gz")):
            ba = p.parent / p.name.replace(".hlo.gz", ".buffer-assignment.txt.gz")
            if ba.exists():
                out.append((f"{sub}/{p.name}", p, ba))
    return out


MODULES = _modules()
needs_corpus = pytest.mark.skipif(not MODULES, reason="no XLA reports under models/hlo")


def _manifest_figures(name: str) -> tuple[int | None, int] | None:
    """(preallocated temp, total of allocations) the capture recorded, where it did; the
    temp is None where only the total was kept."""
    sub, _, file = name.rpartition("/")
    stem = file.replace(".hlo.gz", "").replace(".hlo", "")
    path = HLO / sub / "manifest.json" if sub else None
    if path is None or not path.exists():
        return None
    data = json.loads(path.read_text())
    program, _, variant = stem.partition(".")
    if "programs" in data:
        entry = data["programs"].get(program)
        if entry is not None and "variants" in entry:
            entry = entry["variants"]["memopt" if variant == "memopt" else "default"]
    else:  # the bundled captures: one entry per dump, keyed by its stem
        entry = data.get(stem)
    if entry is None:
        return None
    mem = entry.get("xla_memory", {})
    total = mem.get("allocations_total_bytes", mem.get("buffer_assignment_total_bytes"))
    if total is None:
        return None
    return mem.get("preallocated_temp_bytes"), total


@needs_corpus
@pytest.mark.parametrize("name,hlo,report", MODULES, ids=[m[0] for m in MODULES])
def test_assignment_equals_xla_report(name, hlo, report):
    module = read_hlo_module(str(hlo))
    ours = assign_buffers(module)
    theirs = read_buffer_assignment(str(report))
    assert compare(ours, theirs) == []
    # in XLA's order too, but for the allocations of reducers and comparators (thread-local
    # scalars, their constants): their order follows the order XLA created its computations
    # in, which the text does not keep, and jax 0.12 sorts them differently from 0.10
    an = ours.analysis
    embedded = {
        v.short().split()[1]
        for v in ours.values.values()
        if an.flow.graph.context.get(an.prog.parent[v.instruction].name) == "embedded"
    }

    def global_allocations(allocs):
        return [(a.kind, a.size, set(a.values)) for a in allocs if not set(a.values) <= embedded]

    assert global_allocations(as_report(ours).allocations) == global_allocations(
        theirs.allocations
    )
    assert ours.temp_bytes == theirs.temp_bytes
    assert ours.allocated_bytes == theirs.allocated_bytes
    figures = _manifest_figures(name)
    if figures is not None:
        # the capture summed allocations of every memory space, host (S(5)) included
        temp, total = figures
        assert ours.allocated_bytes + ours.host_allocated_bytes == total
        if temp is not None:
            assert ours.temp_bytes + ours.host_temp_bytes == temp
    usage = Path(str(report).replace("buffer-assignment", "memory-usage-report"))
    if usage.exists():
        assert ours.allocated_bytes == sum(read_memory_usage_totals(str(usage)).values())
    assert conflicts(ours) == []


def test_target_is_told_apart():
    assert detect_target(read_hlo_module(str(HLO / "mlp_train.hlo"))) == "cpu"
    gpu = HLO / "gpu" / "mlp_train.hlo.gz"
    if gpu.exists():
        assert detect_target(read_hlo_module(str(gpu))) == "gpu"


@needs_corpus
@pytest.mark.parametrize(
    "name",
    [
        "mlp_train.hlo",
        "gpt2l_train.memopt.hlo",
        "corpus-jax0.10/resnet_bn.hlo.gz",
        "corpus-jax0.10/adam_donated.memopt.hlo.gz",
    ],
)
def test_report_text_is_xla_s(name):
    """Without loops or conditionals XLA numbers values in its computation post order and
    each computation's instruction post order: the report printed is XLA's, line for line
    (jax 0.10's XLA printed no ``page``), but for the reducers' scalars (thread-local), whose
    numbering follows the order XLA created its computations in."""
    path = HLO / name
    if not path.exists():
        pytest.skip(f"{name} not present")
    ours = assign_buffers(read_hlo_module(str(path))).to_text().splitlines()
    report = str(path).replace(".hlo", ".buffer-assignment.txt")
    opener = gzip.open if report.endswith(".gz") else open
    with opener(report, "rt") as f:
        theirs = f.read().splitlines()
    theirs = theirs[: theirs.index("") if "" in theirs else len(theirs)]
    assert len(ours) == len(theirs)
    differ = [
        (a, b) for a, b in zip(ours, theirs) if a.replace(", page 0", "") != b.replace(", page 0", "")
    ]
    assert all("thread-local" in b or a.startswith(" value") for a, b in differ)
    assert all(x.rsplit(">", 1)[1] == y.rsplit(">", 1)[1] for x, y in differ)
    flow = Dataflow(Program(read_hlo_module(str(HLO / "mlp_train.hlo"))))
    names = {v.instruction.name for v in flow.values.values()}
    assert {"params_1__0_.1", "tuple.4"} <= names


@needs_corpus
@pytest.mark.parametrize(
    "name",
    ["mlp_train.hlo", "cnn_train.hlo", "corpus/decode_loop.hlo.gz", "gpu/fsdp_scan.hlo.gz"],
)
def test_other_orders_give_sound_assignments(name):
    path = HLO / name
    if not path.exists():
        pytest.skip(f"{name} not present")
    module = read_hlo_module(str(path))
    rng = random.Random(7)
    orders = {module.entry.name: random_topological_order(module.entry, rng)}
    ba = assign_buffers(module, orders)
    assert conflicts(ba) == []
    assert ba.temp_bytes > 0 and ba.allocated_bytes >= ba.temp_bytes


@needs_corpus
def test_conflicts_catches_an_overlap():
    module = read_hlo_module(str(HLO / "mlp_train.hlo"))
    ba = assign_buffers(module)
    temp = next(a for a in ba.allocations if a.is_temp)
    ranges = ba.analysis.live.ranges
    vids = sorted(v for v in temp.assigned if temp.assigned[v][1] > 0)
    # two temps live at once, the second moved onto the first
    v, w = next(
        (v, w)
        for v in vids
        for w in vids
        if v < w
        and ranges[v].start < ranges[w].start < ranges[v].end
        and temp.assigned[v][1] <= temp.size - temp.assigned[w][1]
    )
    temp.assigned[w] = (temp.assigned[v][0], temp.assigned[w][1])
    assert conflicts(ba)


def test_order_must_list_each_instruction_once():
    module = read_hlo_module(str(HLO / "mlp_train.hlo"))
    names = [i.name for i in module.entry.instructions]
    with pytest.raises(InputError, match="each instruction once"):
        assign_buffers(module, {module.entry.name: names[:-1]})
    with pytest.raises(InputError, match="unknown"):
        assign_buffers(module, {module.entry.name: names[:-1] + ["nope"]})


def test_small_module_by_hand():
    """A donated parameter is reused by an in-place user; the temps go on the heap with
    64-byte alignment; the output tuple table gets its own allocation."""
    text = """HloModule m, is_scheduled=true, input_output_alias={ {0}: (0, {}, may-alias) }

ENTRY %main (p0: f32[16], p1: f32[16]) -> (f32[16], f32[4]) {
  %p0 = f32[16]{0} parameter(0)
  %p1 = f32[16]{0} parameter(1)
  %a = f32[16]{0} add(%p0, %p1)
  %b = f32[16]{0} multiply(%a, %p1)
  %c = f32[4]{0} slice(%b), slice={[0:4]}
  %d = f32[16]{0} negate(%b)
  ROOT %t = (f32[16]{0}, f32[4]{0}) tuple(%d, %c)
}
"""
    ba = assign_buffers(parse_hlo_text(text), target="cpu")
    kinds = {
        (a.parameter, a.live_out, a.is_temp): sorted(ba.values[v].name for v in a.assigned)
        for a in ba.allocations
    }
    # p0 is donated: a (an elementwise user of p0), b and d reuse its allocation
    assert kinds[(0, True, False)] == ["a{}", "b{}", "d{}", "p0{}"]
    assert kinds[(1, False, False)] == ["p1{}"]
    assert ba.temp_bytes == 0  # nothing left for the heap: c is live out
    assert conflicts(ba) == []


def test_report_reader_rejects_garbage():
    with pytest.raises(InputError, match="not an XLA buffer-assignment report"):
        parse_buffer_assignment("hello\n")
    with pytest.raises(InputError, match="bad value line"):
        parse_buffer_assignment("allocation 0: size 4, thread-local:\n value: nonsense\n")
    rep = parse_buffer_assignment(
        "allocation 0: size 8, preallocated-temp:\n"
        " value: <3 a @0> (size=4,offset=0): f32[]\n"
        " value: <4 b @0> (size=4,offset=4): f32[]\n"
    )
    assert rep.temp_bytes == 8 and rep.allocations[0].values["b"] == (4, 4, 4)


# -- the heap ---------------------------------------------------------------------------------


def test_heap_best_fit_takes_the_smallest_gap():
    heap = EventHeap()
    # A and B live together; C lives while both are gone except B: it fits below B or
    # above; D (small) arrives when A is gone and must take A's place, the smaller gap
    heap.alloc("A", 100)
    heap.alloc("B", 50)
    heap.free("A", 100)
    heap.alloc("D", 60)
    heap.free("B", 50)
    heap.free("D", 60)
    size, placed = place(heap, "spatial")
    assert placed["A"] == (0, 100) and placed["B"] == (100, 50)
    assert placed["D"] == (0, 60)  # the 100-byte hole A left, not the top
    assert size == 150


def test_heap_shared_buffers_move_together_and_take_the_larger_size():
    heap = EventHeap()
    heap.alloc("x", 32)
    heap.alloc("y", 16)
    heap.free("x", 32)
    heap.share_with("z", "x", 32)  # z continues x in place
    heap.free("y", 16)
    heap.free("z", 32)
    _, placed = best_heap(heap, alignment=64)
    assert placed["x"] == placed["z"]
    assert placed["y"][0] % 64 == 0 and placed["y"][0] != placed["x"][0]


def test_heap_empty_buffers_cost_nothing():
    heap = EventHeap()
    heap.alloc("e", 0)
    heap.alloc("a", 8)
    heap.free("e", 0)
    heap.free("a", 8)
    size, placed = best_heap(heap)
    assert placed["e"] == (0, 0) and size == 8


# -- the figures on the command line ----------------------------------------------------------


def _cli(capsys, *argv) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


@needs_corpus
def test_commands_report_what_xla_reserves(capsys, tmp_path):
    """info / simulate of the module's own order give XLA's figures for it; schedule and
    compare give those of the order they found, next to its peak."""
    hlo = str(HLO / "mlp_train.hlo")
    report = read_buffer_assignment(str(HLO / "mlp_train.buffer-assignment.txt"))
    for cmd in ("info", "simulate"):
        data = _cli(capsys, cmd, hlo, "--json")
        assert data["temp_bytes"] == {"static": report.temp_bytes}
        assert data["allocated_bytes"] == {"static": report.allocated_bytes}
    out = tmp_path / "order.json"
    data = _cli(capsys, "schedule", hlo, "-o", str(out), "--time-limit", "5", "--json")
    module = read_hlo_module(hlo)
    ba = assign_buffers(module, data["orders"])
    assert data["temp_bytes"] == {"static": ba.temp_bytes}
    assert data["allocated_bytes"] == {"static": ba.allocated_bytes}
    data = _cli(capsys, "compare", hlo, "--no-solver", "--json")
    rows = {r["method"]: r for r in data["rows"] if "error" not in r}
    assert rows["given"]["temp_bytes"] == {"static": report.temp_bytes}
    assert all("allocated_bytes" in r for r in rows.values())
    assert main(["compare", hlo, "--no-solver"]) == 0
    assert "XLA temp" in capsys.readouterr().out


def test_host_memory_is_a_figure_of_its_own(capsys):
    """Offloaded values (``S(5)``) get host allocations: not in temp_bytes, which is what
    ``memory_analysis()`` reports for device memory, but beside it."""
    hlo = HLO / "gpu" / "scan_remat_offload.hlo.gz"
    if not hlo.exists():
        pytest.skip("scan_remat_offload (XLA:GPU) not present")
    ba = assign_buffers(read_hlo_module(str(hlo)))
    assert ba.host_temp_bytes > 0 and ba.host_allocated_bytes >= ba.host_temp_bytes
    assert ba.temp_bytes + ba.host_temp_bytes == sum(a.size for a in ba.allocations if a.is_temp)
    data = _cli(capsys, "info", str(hlo), "--json")
    assert data["temp_bytes"] == {"static": ba.temp_bytes}
    assert data["host_temp_bytes"] == {"static": ba.host_temp_bytes}
    data = _cli(capsys, "info", str(HLO / "mlp_train.hlo"), "--json")
    assert "host_temp_bytes" not in data and "host_allocated_bytes" not in data


def test_graphs_not_from_hlo_have_no_xla_figures(capsys, tmp_path):
    g = tmp_path / "g.json"
    g.write_text(
        '{"nodes": [{"id": 0, "size": 100}, {"id": 1, "size": 10}],'
        ' "links": [{"source": 0, "target": 1}]}'
    )
    data = _cli(capsys, "simulate", str(g), "--json")
    assert "temp_bytes" not in data and "allocated_bytes" not in data
