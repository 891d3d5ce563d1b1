"""XLA:GPU's own modules (models/hlo/gpu/, captured on an H100 by models/jax/capture_gpu.py)
read, scheduled, written back and read again.

These modules were not written for cpsched: fused, with cuBLAS/cuDNN custom calls, async
collectives placed by XLA:GPU's latency-hiding scheduler, and get-tuple-elements printed as
``t#i`` operands (no line of their own), which the writer must let follow their user.
Whether XLA:GPU then keeps the order cpsched wrote is checked on a GPU by
tests/xla/xla_gpu_keeps.py (benchmarks/results_gpu.md); here, without one, every module
goes through the command line and the validator, and the text written is read back.
"""

from __future__ import annotations

import gzip
import json
import random
import re
from pathlib import Path

import pytest

from cpsched.analysis.memory import simulate
from cpsched.analysis.schedule import make_schedule, place_inline_ops
from cpsched.cli import main
from cpsched.strategies.module import input_orders, module_peak
from cpsched.readers.hlo.convert import HloConverter, read_hlo_text
from cpsched.readers.hlo.parser import parse_hlo_text, read_hlo_module

GPU = Path(__file__).resolve().parents[1] / "models" / "hlo" / "gpu"
MANIFEST = GPU / "manifest.json"


def _programs() -> list[str]:
    if not MANIFEST.exists():
        return []
    return sorted(json.loads(MANIFEST.read_text())["programs"])


pytestmark = pytest.mark.skipif(not _programs(), reason="models/hlo/gpu not present")


def _text(name: str) -> str:
    with gzip.open(GPU / f"{name}.hlo.gz", "rt", encoding="utf-8") as f:
        return f.read()


def test_manifest_matches_the_files():
    m = json.loads(MANIFEST.read_text())
    assert "H100" in m["device_kind"]
    listed = {f for p in m["programs"].values() for f in p["files"]}
    assert listed == {p.name for p in GPU.iterdir() if p.name != "manifest.json"}
    for name, p in m["programs"].items():
        text = _text(name)
        assert re.search(r"^HloModule \S+, is_scheduled=true", text), name
        starts = len(re.findall(r"\s[a-z\-]*-start\(", text))
        assert starts == p["async_starts"], name
        head = text.split("\n", 1)[0]
        parts = int((re.search(r"num_partitions=(\d+)", head) or [0, 1])[1])
        assert parts == p["devices"], name
    # the collectives programs carry XLA:GPU's async pairs
    assert all(m["programs"][n]["async_starts"] > 0
               for n in ("sharded_dp_tp", "fsdp_scan", "mesh3_named", "ring_attention"))


@pytest.mark.parametrize("name", _programs())
def test_every_module_schedules_and_reads_back(name, tmp_path, capsys):
    src = tmp_path / f"{name}.hlo"
    src.write_text(_text(name))
    out = tmp_path / "out.hlo"
    assert main(["schedule", str(src), "--method", "xla-list", "-o", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    back = read_hlo_module(str(out))
    assert back.is_scheduled
    # the module read back from the text, in its own orders, has the peak the command printed
    assert int(module_peak(back, input_orders(back))[0]) == data["peak_bytes"]["static"]


@pytest.mark.parametrize("name", ["mlp_train", "scan_switch_layers", "sharded_dp_tp"])
def test_default_schedule_never_worse_than_xla_gpu(name, tmp_path, capsys):
    src = tmp_path / f"{name}.hlo"
    src.write_text(_text(name))
    out = tmp_path / "out.hlo"
    assert main(["schedule", str(src), "-o", str(out), "--time-limit", "2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["method"] == "cp"
    given = module_peak(parse_hlo_text(src.read_text()), input_orders(parse_hlo_text(
        src.read_text())))
    assert data["peak_bytes"]["static"] <= int(given[0])
    back = read_hlo_module(str(out))
    assert int(module_peak(back, input_orders(back))[0]) == data["peak_bytes"]["static"]


# A tuple read through ``t#1`` by two users: the reader makes one get-tuple-element, ``t#1``,
# and puts it just before its first user in the text.
TUPLE = """HloModule m
ENTRY e {
  p = f32[64] parameter(0)
  t = (f32[64], f32[64]) tuple(p, p)
  a = f32[64] negate(p)
  b = f32[64] exponential(a)
  c = f32[64] add(t#1, b)
  ROOT r = f32[64] add(c, t#1)
}"""


def test_inline_ops_go_right_before_their_first_user():
    g = read_hlo_text(TUPLE)
    assert g.meta["inline_ops"] == ["t#1"]
    gte, c = g.op_index("t#1"), g.op_index("c")
    rng = random.Random(0)
    seen = set()
    for _ in range(40):  # random topological orders
        order, placed_ops, ready = [], set(), None
        while len(order) < g.n_ops:
            ready = [i for i in range(g.n_ops) if i not in placed_ops
                     and all(int(q) in placed_ops for q in g.preds(i))]
            i = rng.choice(ready)
            order.append(i)
            placed_ops.add(i)
        seen.add(order.index(gte) + 1 == order.index(c))
        placed = place_inline_ops(g, order)
        assert sorted(placed) == sorted(order)
        assert placed.index(gte) + 1 == placed.index(c)
        others = [i for i in order if i != gte]
        assert [i for i in placed if i != gte] == others
        s = make_schedule(g, order, "test")
        assert list(s.order) == placed
        assert int(s.peak_bytes[0]) == int(simulate(g, placed).peak[0])
    assert seen == {True, False}  # some orders needed the move


def test_inline_ops_in_a_real_module_written_where_the_reader_puts_them(tmp_path):
    # XLA:GPU's mlp_train prints its multi-output fusions' elements as t#i operands
    text = _text("mlp_train")
    m = parse_hlo_text(text)
    g = HloConverter(m).graph()
    inline = set(g.meta.get("inline_ops", ()))
    assert inline
    # a valid order that puts every inline op right after its operand, as early as it can be
    order = []
    for i in range(g.n_ops):
        if g.op_names[i] in inline:
            continue
        order.append(i)
        order.extend(int(u) for u in g.succs(i) if g.op_names[int(u)] in inline
                     and all(int(q) in order for q in g.preds(int(u))))
    rest = [i for i in range(g.n_ops) if i not in order]
    order += rest
    s = make_schedule(g, order, "test")
    src = tmp_path / "m.hlo"
    src.write_text(text)
    from cpsched.writers.hlo import write_hlo

    back = parse_hlo_text(write_hlo(m, {m.entry.name: s.order_names()}))
    g2 = HloConverter(back).graph()
    assert list(g2.original_order or ()) and [g2.op_names[i] for i in g2.original_order] == \
        s.order_names()


def test_compare_solves_again_at_a_baselines_memory_when_it_hides_more():
    # A baseline a byte above cp-overlap's budget that hides more communication gets its own
    # cp-overlap row at its memory (on XLA:GPU's mesh3_named, XLA's order used 64 bytes more
    # than the least peak and exposed 54 us against cp-overlap's 69-76 us); one a byte above
    # that hides less, or 1 % above, keeps the old rule. The rows' figures are set here, so
    # the rule is tested whatever the solver finds in its time.
    from types import SimpleNamespace

    import numpy as np

    from cpsched.analysis.records import OverlapRecord
    from cpsched.api import _overlap_at_baselines

    src = parse_hlo_text(_text("mesh3_named"))
    g = HloConverter(src).graph()
    from cpsched.core.scenarios import static

    sc = static()
    own = 2_526_468

    def row(peak, exposed):
        return (SimpleNamespace(peak={"static": peak}, budget=None, record=OverlapRecord()),
                SimpleNamespace(exposed_comm=np.array([exposed])))

    made = {"cp-overlap": row(own, 70e-6), "hides_more": row(own + 64, 54e-6),
            "hides_less": row(own + 64, 80e-6), "far_above": row(int(own * 1.05), 90e-6)}
    results = {k: v[0] for k, v in made.items()}
    results["cp-overlap"].budget = {"static": own}
    timelines = {k: v[1] for k, v in made.items()}
    rows, errors = list(made), {}
    from cpsched.cp.runtime import SolverConfig

    _overlap_at_baselines(g, sc, results, timelines, errors, rows, None, None,
                          SolverConfig(time_limit=1.0, workers=1), {})
    assert "cp-overlap@hides_more" in rows and "cp-overlap@far_above" in rows
    assert "cp-overlap@hides_less" not in rows
    r = results["cp-overlap@hides_more"]
    assert dict(r.budget) == {"static": own + 64}
    assert int(r.peak["static"]) <= own + 64


def _equal_memory_case(**factors):
    """Inputs of compare's equal-memory rows: mesh3_named's graph, cp-overlap's row held to
    its least peak, and a row per keyword at that many times the peak (70 us exposed each)."""
    from types import SimpleNamespace

    import numpy as np

    from cpsched.analysis.records import OverlapRecord

    g = HloConverter(parse_hlo_text(_text("mesh3_named"))).graph()
    own = 2_526_468

    def row(peak, budget=None):
        return SimpleNamespace(peak={"static": peak}, budget=budget, record=OverlapRecord(),
                               order=())

    results = {"cp-overlap": row(own, {"static": own})}
    results.update({name: row(int(own * f)) for name, f in factors.items()})
    timelines = {k: SimpleNamespace(exposed_comm=np.array([70e-6])) for k in results}
    return g, results, timelines


def test_an_equal_memory_row_with_no_time_left_says_the_time_ran_out():
    # the comparison's deadline passed just before the row: it is not run, and says so (it
    # once printed "-0.0 s left for it, less than its setup", a rounded negative remainder)
    import time

    from cpsched.api import _overlap_at_baselines
    from cpsched.core.scenarios import static
    from cpsched.cp.runtime import SolverConfig

    g, results, timelines = _equal_memory_case(far_above=1.05)
    rows, errors = list(results), {}
    cfg = SolverConfig(time_limit=1.0, workers=1, deadline=time.perf_counter() - 0.01)
    _overlap_at_baselines(g, static(), results, timelines, errors, rows, None, None, cfg, {})
    assert errors == {"cp-overlap@far_above": "not run: the time limit ran out"}
    assert "cp-overlap@far_above" not in results


def _keeps():
    import importlib.util

    path = Path(__file__).resolve().parent / "xla" / "xla_gpu_keeps.py"
    spec = importlib.util.spec_from_file_location("xla_gpu_keeps", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_keep_check_reads_the_optimized_program_and_compares_orders():
    # the parts of the GPU check that need no GPU: the HloModuleProtoWithConfig wrapper XLA
    # returns, and the order comparison
    k = _keeps()
    inner = b"\x0a\x03abc\x10\x05"  # a message: field 1 "abc", field 2 = 5
    outer = b"\x08\x01" + b"\x0a" + bytes([len(inner)]) + inner + b"\x12\x02\x08\x01"
    assert k._field(outer, 1) == inner
    assert k._field(inner, 1) == b"abc"
    with pytest.raises(ValueError):
        k._field(inner, 7)
    before = {"main": ["p", "a", "b", "r"], "body": ["x", "y"]}
    same = {"main": ["p", "a", "cb", "b", "r"], "body": ["x", "y"]}  # XLA added one
    assert k.compare(before, same) == {"kept": True, "out_of_order": [], "dropped_by_xla": 0,
                                       "added_by_xla": 1}
    swapped = {"main": ["p", "b", "a", "r"], "body": ["x"]}
    res = k.compare(before, swapped)
    assert not res["kept"] and res["dropped_by_xla"] == 1
    assert res["out_of_order"] == ["main: 1 out of order, first b"]  # b now before a


def test_an_equal_memory_row_with_too_little_time_names_both_times(monkeypatch):
    # a few milliseconds left, less than the row's setup: both times in a unit that shows
    # them (make demo printed "0.0 s left for it, less than its setup (about 0.0 s ...)")
    import time

    from cpsched import api
    from cpsched.core.scenarios import static
    from cpsched.cp.runtime import SolverConfig

    g, results, timelines = _equal_memory_case(far_above=1.05)
    rows, errors = list(results), {}
    monkeypatch.setattr(api, "_row_time_limit", lambda *a: 0.0042)
    cfg = SolverConfig(time_limit=1.0, workers=1, deadline=time.perf_counter() + 60)
    api._overlap_at_baselines(g, static(), results, timelines, errors, rows, None, None, cfg, {})
    need = api.format_seconds(api.SOLVER_START_SECONDS_PER_OP * g.n_ops)
    assert "ms" in need
    assert errors == {
        "cp-overlap@far_above": "not run: 4.20 ms left for it, less than its setup (about "
        f"{need} at {g.n_ops} ops)"
    }


def test_equal_memory_rows_share_the_time_left(monkeypatch):
    # the first cp-overlap@ROW row was given all the time left, so `make demo`'s last such
    # row was "not run"; each now gets its share of what is left
    import time

    from cpsched import api
    from cpsched.core.scenarios import static
    from cpsched.cp.runtime import SolverConfig

    g, results, timelines = _equal_memory_case(a=1.05, b=1.10, c=1.20)
    limits = []

    def fake_schedule(graph, method, *, config, **kw):
        limits.append(config.time_limit)
        return results["cp-overlap"]  # a stand-in result: only the time limits matter here

    monkeypatch.setattr(api, "schedule", fake_schedule)
    monkeypatch.setattr(api, "simulate_timeline", lambda *a: None)
    rows, errors = list(results), {}
    cfg = SolverConfig(time_limit=100.0, workers=1, deadline=time.perf_counter() + 30)
    api._overlap_at_baselines(g, static(), results, timelines, errors, rows, None, None, cfg, {})
    assert errors == {} and len(limits) == 3
    assert 9 < limits[0] <= 10.01  # a third of the 30 s left, not all of it
