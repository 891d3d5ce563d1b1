"""Remat / offload plans written into HLO: clones, host (S(5)) copy-start/copy-done pairs,
the read-back check, and ``cpsched schedule --objective remat`` on HLO input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cpsched.cli import main
from cpsched.core.errors import InputError, ScheduleError
from cpsched.analysis.memory import simulate
from cpsched.methods import get
from cpsched.readers import read_graph
from cpsched.readers.hlo.convert import module_graphs
from cpsched.readers.hlo.parser import Shape, parse_hlo_text
from cpsched.remat.plan import Regen, Skeleton, check_plan, materialize
from cpsched.core.scenarios import from_dim_specs, static
from cpsched.analysis.validate import validate_schedule
from cpsched.writers.hlo import host_shape_text, remat_module_text, verify_remat_module

REPO = Path(__file__).resolve().parents[1]

# a is read by b and again by e, the chain in between is as big as a: keeping a costs 16 KiB
# at c, recomputing it just before e needs 12 KiB + 4 B.
CHAIN = """HloModule chain

ENTRY main {
  p0 = f32[1024]{0} parameter(0)
  a = f32[1024]{0} exponential(p0)
  b = f32[1024]{0} tanh(a)
  c = f32[1024]{0} tanh(b)
  d = f32[1024]{0} tanh(c)
  ROOT e = f32[] dot(a, d), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}
"""

# a is a custom-call (never recomputed): keeping it through the 8 KiB phase costs 24 KiB, a
# trip to the host and back 20 KiB.
OFFLOAD = """HloModule offload

ENTRY main {
  p0 = f32[1024]{0} parameter(0)
  a = f32[1024]{0} custom-call(p0), custom_call_target="opaque"
  b = f32[256]{0} slice(a), slice={[0:256]}
  c1 = f32[256]{0} tanh(b)
  c2 = f32[256]{0} tanh(c1)
  c3 = f32[256]{0} tanh(c2)
  c4 = f32[8,256]{1,0} broadcast(c3), dimensions={1}
  c5 = f32[8,256]{1,0} tanh(c4)
  c6 = f32[1,256]{1,0} slice(c5), slice={[0:1], [0:256]}
  c7 = f32[256]{0} reshape(c6)
  c8 = f32[4,256]{1,0} broadcast(c7), dimensions={1}
  c9 = f32[1024]{0} reshape(c8)
  ROOT e = f32[] dot(a, c9), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}
"""

# a two-output fusion whose outputs are read early and late (through get-tuple-element, and
# through a bitcast of one): cloning the fusion needs a clone of its fused computation and
# get-tuple-elements of the clone.
TUPLE = """HloModule tuple_out

%fc (p.0: f32[256], p.1: f32[256]) -> (f32[256], f32[256]) {
  %p.0 = f32[256]{0} parameter(0)
  %p.1 = f32[256]{0} parameter(1)
  %n = f32[256]{0} negate(%p.0)
  %x2 = f32[256]{0} exponential(%p.1)
  ROOT %t = (f32[256]{0}, f32[256]{0}) tuple(%n, %x2)
}

ENTRY %main (x: f32[256]) -> f32[] {
  %x = f32[256]{0} parameter(0)
  %f = (f32[256]{0}, f32[256]{0}) fusion(%x, %x), kind=kLoop, calls=%fc
  %g0 = f32[256]{0} get-tuple-element(%f), index=0
  %g1 = f32[256]{0} get-tuple-element(%f), index=1
  %r = f32[16,16]{1,0} bitcast(%g1)
  %b = f32[256]{0} tanh(%g0)
  %c = f32[256]{0} tanh(%b)
  %d = f32[16,16]{1,0} tanh(%r)
  %dd = f32[256]{0} bitcast(%d)
  %w = f32[256]{0} add(%c, %dd)
  ROOT %out = f32[] dot(%g0, %w), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}
"""


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def _read_back(text, computation="main"):
    g = module_graphs(parse_hlo_text(text))[computation]
    assert g.original_order is not None          # is_scheduled=true, the text order is valid
    peak = int(validate_schedule(g, g.original_order, static())[0])
    return g, peak


def test_host_shape_text():
    def sh(text):
        return parse_hlo_text(f"HloModule m\nENTRY e {{\n  p = {text} parameter(0)\n}}\n"
                              ).entry.instructions[0].shape
    assert host_shape_text(sh("f32[4,8]{1,0}")) == "f32[4,8]{1,0:S(5)}"
    assert host_shape_text(sh("f32[4,8]")) == "f32[4,8]{1,0:S(5)}"
    assert host_shape_text(sh("f32[]")) == "f32[]{:S(5)}"
    assert host_shape_text(sh("bf16[8,128]{1,0:T(8,128)(2,1)}")) == \
        "bf16[8,128]{1,0:T(8,128)(2,1)S(5)}"
    assert host_shape_text(sh("f32[8]{0:S(1)}")) == "f32[8]{0:S(5)}"
    for t in ("f32[4,8]{1,0:S(5)}", "f32[]{:S(5)}"):
        assert sh(t).memory_space == 5
    with pytest.raises(InputError):
        host_shape_text(Shape("token"))


def test_recompute_clone_reads_back_within_budget(tmp_path):
    path = _write(tmp_path, "chain.hlo", CHAIN)
    g = read_graph(path)
    res = get("cp-remat").fn(g, static(), budget=13000, time_limit=5)
    assert int(res.peak[0]) <= 13000
    w = remat_module_text(parse_hlo_text(CHAIN), g, res.events[0])
    assert w.clones == {"a.remat": "a"}
    assert "\n  a.remat = f32[1024]{0} exponential(p0)\n" in w.text
    assert "ROOT e = f32[] dot(a.remat, d)" in w.text
    assert w.text.startswith("HloModule chain, is_scheduled=true\n")
    g2, peak = _read_back(w.text)
    assert peak <= 13000 and peak == int(res.peak[0])
    assert g2.op_names[g2.original_order[-2]] == "a.remat"
    assert verify_remat_module(w.text, "main", static(), 13000)[1] == peak
    with pytest.raises(ScheduleError, match="exceeds the budget"):
        verify_remat_module(w.text, "main", static(), peak - 1)


def test_offload_copies_to_host_and_back(tmp_path):
    path = _write(tmp_path, "off.hlo", OFFLOAD)
    g = read_graph(path)
    res = get("cp-remat").fn(g, static(), budget=21000, evict=True, device="h100",
                             time_limit=5)
    assert any(k == "evict" for k, _ in res.steps(0))
    w = remat_module_text(parse_hlo_text(OFFLOAD), g, res.events[0])
    assert [e[0] for e in w.evictions] == ["a"] and [p[0] for p in w.prefetches] == ["a"]
    text = w.text
    assert "a.evict.start = (f32[1024]{0:S(5)}, f32[1024]{0}, u32[]) copy-start(a)" in text
    assert "a.evict.done = f32[1024]{0:S(5)} copy-done(a.evict.start)" in text
    assert ("a.prefetch.start = (f32[1024]{0}, f32[1024]{0:S(5)}, u32[]) "
            "copy-start(a.evict.done)") in text
    assert "a.prefetch.done = f32[1024]{0} copy-done(a.prefetch.start)" in text
    assert "ROOT e = f32[] dot(a.prefetch.done, c9)" in text
    g2, peak = _read_back(text)
    assert peak <= 21000
    # the host copy is in memory space 5 and counts 0 device bytes
    host = g2.buffer_names.index("a.evict.start{0}")
    assert g2.buffer_space[host] == 5
    names = [g2.op_names[i] for i in g2.original_order]
    assert names.index("a.evict.start") < names.index("a.evict.done") \
        < names.index("a.prefetch.start") < names.index("a.prefetch.done") < names.index("e")
    s = g2.op_index("a.evict.start")
    assert g2.async_done[s] == g2.op_index("a.evict.done")
    # while a is on the host only, the device holds p0 and the 8 KiB phase
    c5 = names.index("c5")
    from cpsched.analysis.memory import simulate
    assert int(simulate(g2, g2.original_order).usage[0][c5]) == 4096 + 8192 + 8192
    verify_remat_module(text, "main", static(), 21000, ["a.evict.start"])


def test_tuple_clone_gets_fused_computation_and_get_tuple_elements():
    m = parse_hlo_text(TUPLE)
    g = module_graphs(m)["main"]
    order = [g.op_index(n) for n in ("x", "f", "g0", "g1", "r", "b", "c", "d", "dd", "w",
                                     "out")]
    ev = materialize(g, Skeleton(tuple(order), (Regen(g.op_index("f"), order.index(
        g.op_index("d"))),)), [0])
    check_plan(g, ev)
    w = remat_module_text(m, g, ev, comment="hand-made plan")
    text = w.text
    assert text.startswith("// hand-made plan\nHloModule tuple_out, is_scheduled=true")
    assert w.clones == {"f.remat": "f"}
    assert "%f.remat = (f32[256]{0}, f32[256]{0}) fusion(%x, %x), kind=kLoop, calls=%fc.remat" \
        in text
    assert re.search(r"%fc\.remat \(p\.0\.remat: f32\[256\], p\.1\.remat: f32\[256\]\)", text)
    assert "%f.remat.gte0 = f32[256]{0} get-tuple-element(%f.remat), index=0" in text
    assert "%f.remat.gte1.bitcast = f32[16,16]{1,0} bitcast(%f.remat.gte1)" in text
    assert "%d = f32[16,16]{1,0} tanh(%f.remat.gte1.bitcast)" in text
    assert "ROOT %out = f32[] dot(%f.remat.gte0, %w)" in text
    # the original fused computation and the rest are untouched
    assert "ROOT %t = (f32[256]{0}, f32[256]{0}) tuple(%n, %x2)" in text
    assert "%b = f32[256]{0} tanh(%g0)" in text
    g2, peak = _read_back(text)
    names = [g2.op_names[i] for i in g2.original_order]
    k = names.index("f.remat")      # the get-tuple-elements right after the clone
    assert set(names[k + 1:k + 3]) == {"f.remat.gte0", "f.remat.gte1"}
    assert peak == int(check_plan(g, ev).peak[0])


def test_writer_refuses_a_foreign_graph():
    g = module_graphs(parse_hlo_text(CHAIN))["main"]
    with pytest.raises(InputError, match="was not read from"):
        remat_module_text(parse_hlo_text(TUPLE), g, [])


def _files(tmp_path):
    return sorted(p.name for p in tmp_path.iterdir())


def test_cli_remat_hlo_end_to_end(tmp_path, capsys):
    src = _write(tmp_path, "chain.hlo", CHAIN)
    out = str(tmp_path / "chain.remat.hlo")
    assert main(["schedule", src, "--objective", "remat", "--budget", "13000",
                 "--time-limit", "5", "-o", out]) == 0
    msg = capsys.readouterr().out
    assert "wrote " + out + ", " + out + ".plan.json" in msg and "1 clone(s)" in msg
    text = Path(out).read_text()
    assert "a.remat = f32[1024]{0} exponential(p0)" in text
    assert _read_back(text)[1] <= 13000
    plan = json.loads(Path(out + ".plan.json").read_text())
    assert plan["format"] == "cpsched-remat" and plan["plan_table"] == {"static": [0]}
    assert ["compute", "a"] in plan["steps"] and plan["added_time_pct"]["static"] > 0
    assert plan["peak_bytes"]["static"] <= 13000
    assert plan["hlo_module"]["clones"] == {"a.remat": "a"}

    # an impossible budget: one line, exit 2, nothing written
    bad = str(tmp_path / "bad.hlo")
    before = _files(tmp_path)
    assert main(["schedule", src, "--objective", "remat", "--budget", "4000",
                 "--time-limit", "5", "-o", bad]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cpsched: error:") and err.count("\n") == 1
    assert _files(tmp_path) == before

    # a baseline whose plan misses the budget: refused before anything is written
    assert main(["schedule", src, "--objective", "remat", "--method", "remat-sqrt",
                 "--budget", "12300", "-o", bad]) == 2
    assert "least peak reached 16.00 KiB (16,384 B)" in capsys.readouterr().err
    assert _files(tmp_path) == before


def test_cli_remat_hlo_offload(tmp_path, capsys):
    src = _write(tmp_path, "off.hlo", OFFLOAD)
    out = str(tmp_path / "off.out.hlo")
    assert main(["schedule", src, "--objective", "remat", "--evict", "--device", "h100",
                 "--budget", "21000", "--time-limit", "5", "-o", out, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["output"] == out and data["plan"] == out + ".plan.json"
    text = Path(out).read_text()
    assert text.count("copy-start(") == 2 and text.count("copy-done(") == 2
    assert "{0:S(5)}" in text
    g2, peak = _read_back(text)
    assert peak <= 21000
    plan = json.loads(Path(out + ".plan.json").read_text())
    assert plan["hlo_module"]["evictions"] == [["a", "a.evict.start", "a.evict.done"]]


def test_cli_remat_json_input_unchanged(tmp_path, capsys):
    src = _write(tmp_path, "chain.hlo", CHAIN)
    js = str(tmp_path / "chain.json")
    assert main(["convert", src, "-o", js]) == 0
    out = str(tmp_path / "plan.json")
    assert main(["schedule", js, "--objective", "remat", "--budget", "13000",
                 "--time-limit", "5", "-o", out]) == 0
    assert f"wrote {out}\n" in capsys.readouterr().out
    data = json.loads(Path(out).read_text())
    assert data["format"] == "cpsched-remat" and "hlo_module" not in data
    assert not Path(out + ".plan.json").exists()


@pytest.mark.parametrize("objective", ["remat", "time"])
def test_cli_plan_with_async_collectives_is_written_as_async_pairs(tmp_path, capsys, objective):
    src = Path(__file__).parent / "data" / "hlo" / "collectives_sync.hlo"
    out = tmp_path / "o.hlo"
    assert main(["schedule", str(src), "--objective", objective, "--budget", "100%",
                 "--async-collectives", "--time-limit", "5", "-o", str(out)]) == 0, \
        capsys.readouterr().err
    text = out.read_text()
    assert "all-reduce-start" in text and "all-gather-start" in text
    plan = json.loads(Path(str(out) + ".plan.json").read_text())
    mod = plan["hlo_module"]
    assert mod["async_pairs"] and mod["peak_bytes"] <= mod["budget_bytes"]
    g, peak = _read_back(text)
    assert peak <= mod["budget_bytes"]


def test_cli_remat_hlo_names_the_scenario_it_writes(tmp_path, capsys):
    src = _write(tmp_path, "chain.hlo", CHAIN)
    out = str(tmp_path / "two.hlo")
    assert main(["schedule", src, "--objective", "remat", "--budget", "13000", "--dim",
                 "s=1,2", "--time-limit", "5", "-o", out]) == 0
    assert "plan of s=2" in capsys.readouterr().out
    text = Path(out).read_text()
    assert text.startswith("// cpsched cp-remat: remat plan of bucket s=2 (2 of 2)")
    assert _read_back(text)[1] <= 13000
    plan = json.loads(Path(out + ".plan.json").read_text())
    assert set(plan["steps"]) == {"s=1", "s=2"} and plan["hlo_module"]["scenario"] == "s=2"


def test_cli_remat_hlo_one_module_per_bucket(tmp_path, capsys):
    """With a dynamic dim the buckets' plans differ: the small bucket fits as it is, the
    large one needs the clone. Each bucket gets its own module; OUT is the large bucket's,
    which also fits the small one."""
    src = _write(tmp_path, "dyn.hlo", CHAIN.replace("f32[1024]", "f32[?]"))
    out = str(tmp_path / "dyn.out.hlo")
    assert main(["schedule", src, "--objective", "remat", "--budget", "13000", "--dim",
                 "dyn=512,1024", "--time-limit", "5", "-o", out, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    small = str(tmp_path / "dyn.out.dyn_512.hlo")
    assert data["bucket_modules"] == [small]
    plan = json.loads(Path(out + ".plan.json").read_text())
    per = plan["hlo_module"]["per_bucket"]
    assert per["dyn=512"]["clones"] == {} and per["dyn=1024"]["clones"] == {"a.remat": "a"}
    assert plan["hlo_module"]["fits_buckets"] == ["dyn=1024", "dyn=512"]
    assert "a.remat" in Path(out).read_text()
    assert "a.remat" not in Path(small).read_text()
    for path, dims in ((out, {"dyn": 1024}), (small, {"dyn": 512})):
        g = module_graphs(parse_hlo_text(Path(path).read_text()))["main"]
        sc = from_dim_specs([f"dyn={dims['dyn']}"])
        assert int(validate_schedule(g, g.original_order, sc)[0]) <= 13000


def test_cli_remat_real_xla_module(tmp_path, capsys):
    """A real XLA:CPU training step at ~90% of its own schedule's peak."""
    src = REPO / "models" / "hlo" / "mlp_train.hlo"
    g0 = read_graph(str(src))
    peak = int(simulate(g0, g0.default_order()).peak[0])     # XLA's own schedule
    budget = peak * 9 // 10
    out = str(tmp_path / "mlp.remat.hlo")
    # the min-peak order search takes part of the limit; 2 s was flaky on a loaded machine
    assert main(["schedule", str(src), "--objective", "remat", "--budget", str(budget),
                 "--time-limit", "8", "-o", out]) == 0
    text = Path(out).read_text()
    plan = json.loads(Path(out + ".plan.json").read_text())
    clones = plan["hlo_module"]["clones"]
    assert clones and all(f"%{c} = " in text for c in clones)
    g = module_graphs(parse_hlo_text(text))[plan["hlo_module"]["computation"]]
    got = int(validate_schedule(g, g.original_order, static())[0])
    assert got <= budget and got == plan["hlo_module"]["peak_bytes"]


def test_cli_remat_keep_order_and_bandwidth(tmp_path, capsys):
    src = _write(tmp_path, "chain.hlo", CHAIN)
    out = str(tmp_path / "kept.hlo")
    assert main(["schedule", src, "--objective", "remat", "--budget", "13000", "--keep-order",
                 "--time-limit", "5", "-o", out]) == 0
    msg = capsys.readouterr().out
    assert "no plan on this order adds less than: static" in msg
    plan = json.loads(Path(out + ".plan.json").read_text())
    g0 = read_graph(src)
    assert plan["order"] == [g0.op_names[i] for i in g0.default_order()]
    bound = plan["added_time_lower_bound"]["static"] if isinstance(
        plan["added_time_lower_bound"], dict) else plan["added_time_lower_bound"][0]
    assert 0 < bound <= plan["added_time"]["static"] + 1e-12
    # a link given in bytes per op-time unit (here bytes/s: the op times are seconds); `a`
    # cannot be recomputed, so the plan must offload it
    src2 = _write(tmp_path, "off.hlo", OFFLOAD)
    path = str(tmp_path / "fast.hlo")
    assert main(["schedule", src2, "--objective", "remat", "--evict", "--bandwidth", "1e15",
                 "--budget", "21000", "--time-limit", "5", "-o", path]) == 0
    capsys.readouterr()
    assert "copy-start(" in Path(path).read_text()
    # too slow to hide the copy-out before a's next read: refused in one line, nothing written
    slow = str(tmp_path / "slow.hlo")
    assert main(["schedule", src2, "--objective", "remat", "--evict", "--bandwidth", "1e8",
                 "--budget", "21000", "--time-limit", "5", "-o", slow]) == 2
    assert capsys.readouterr().err.count("\n") == 1 and not Path(slow).exists()
    for flag in (["--keep-order"], ["--bandwidth", "1e9"]):
        assert main(["schedule", src, "--method", "xla-dfs", "-o", str(tmp_path / "x.hlo")]
                    + flag) == 2
        assert "applies to --objective remat only" in capsys.readouterr().err
