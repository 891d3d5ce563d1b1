"""The runner's parts that need no jax: the module rewriting for XLA:CPU, the output and order
checks, the inputs, the refusal without jax, and that the GPU-side code imports no cpsched.

The runs themselves (jax) are in tests/xla/test_run_module.py."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from cpsched.cli import main
from cpsched.measure import xla_run as xr
from cpsched.readers import read_graph

REPO = Path(__file__).resolve().parents[1]

FUSED = """HloModule m, is_scheduled=true, entry_computation_layout={(f32[4,8]{1,0})->f32[8,4]{1,0}}

%fused_add (p0: f32[4,8], p1: f32[4,8]) -> f32[4,8] {
  %p0 = f32[4,8]{1,0} parameter(0)
  %p1 = f32[4,8]{1,0} parameter(1)
  ROOT %add.1 = f32[4,8]{1,0} add(%p0, %p1)
}

ENTRY %main (x: f32[4,8]) -> f32[8,4] {
  %x = f32[4,8]{1,0} parameter(0)
  %f = f32[4,8]{1,0} fusion(%x, %x), kind=kLoop, calls=%fused_add, backend_config={"a":{"b":1}}
  %t = f32[4,8]{0,1} copy(%f)
  ROOT %b = f32[8,4]{1,0} bitcast(%t)
}
"""

ASYNC = """HloModule a, is_scheduled=true, num_partitions=4

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = f32[] add(%a, %b)
}

ENTRY %main (x: f32[16], y: f32[2]) -> (f32[16], f32[16], f32[2], f32[16]) {
  %x = f32[16]{0} parameter(0)
  %y = f32[2]{0} parameter(1)
  %ars = f32[16]{0} all-reduce-start(%x), channel_id=1, replica_groups={{0,1,2,3}}, to_apply=%sum
  %cps = (f32[16]{0:S(5)}, f32[16]{0}, u32[]) copy-start(%x)
  %ard = f32[16]{0} all-reduce-done(%ars)
  %cpd = f32[16]{0:S(5)} copy-done(%cps)
  %two = (f32[16]{0}, f32[2]{0}) all-reduce(%x, %y), channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, to_apply=%sum
  %g0 = f32[16]{0} get-tuple-element(%two), index=0
  %g1 = f32[2]{0} get-tuple-element(%two), index=1
  %pid = u32[] partition-id()
  ROOT %out = (f32[16]{0}, f32[16]{0}, f32[2]{0}, f32[16]{0}) tuple(%ard, %cpd, %g1, %g0)
}
"""


def _instrs(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        m = re.match(r"^\s*(?:ROOT\s+)?%([\w.\-]+) = (.*)$", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def test_header_reads_devices_and_donation():
    h = xr.header(
        "HloModule m, is_scheduled=true, input_output_alias={ {0}: (2, {}, may-alias), "
        "{1}: (0, {}, must-alias) }, replica_count=2, num_partitions=4\n"
    )
    assert (h["replicas"], h["partitions"], h["devices"]) == (2, 4, 8)
    assert h["donated"] == [0, 2] and h["scheduled"]
    with pytest.raises(xr.MeasureError):
        xr.header("not a module")


def test_logical_text_inlines_fusions_and_spells_out_bitcasts():
    plain = xr.logical_text(FUSED)
    ins = _instrs(plain)
    assert "fusion(" not in plain and "fused_add" not in plain  # body inlined, computation gone
    assert ins["f"].startswith("f32[4,8]{1,0} add(%x, %x)")  # the root took the fusion's name
    assert "backend_config" not in plain and "is_scheduled" not in plain
    assert "entry_computation_layout" not in plain
    # %t is f32[4,8] stored column-major: the bitcast to f32[8,4]{1,0} is a transpose of its
    # logical value: physical order (transpose {1,0}), then a reshape to [8,4]
    assert ins["b.lg0"].startswith("f32[8,4]{1,0} transpose(%t), dimensions={1,0}")
    assert ins["b"].startswith("f32[8,4]{1,0} reshape(%b.lg0)")
    assert "{0,1}" not in plain  # every layout the default one
    # and cpsched's own reader takes the result
    g = read_graph(_write(plain))
    assert "b" in g.op_names and "f" in g.op_names


def _write(text: str) -> str:
    import tempfile

    f = tempfile.NamedTemporaryFile("w", suffix=".hlo", delete=False)
    f.write(text)
    f.close()
    return f.name


def test_logical_text_writes_async_pairs_as_sync_ops_and_partitions_as_replicas():
    plain = xr.logical_text(ASYNC)
    ins = _instrs(plain)
    assert "replica_count=4" in plain.splitlines()[0] and "num_partitions" not in plain
    assert "ars" not in ins and "cps" not in ins
    # the done becomes the collective; a channel without global ids meant partitions, so
    # it is dropped and the groups are replica groups
    assert " all-reduce(%x)" in ins["ard"] and "channel_id" not in ins["ard"]
    assert ins["cpd"].startswith("f32[16]{0} copy(%x)")  # the host copy is a plain copy
    # the two-operand all-reduce: one per operand, each its own channel, then their tuple
    assert " all-reduce(%x)" in ins["two.ar0"] and " all-reduce(%y)" in ins["two.ar1"]
    channels = {re.search(r"channel_id=(\d+)", ins[k]).group(1) for k in ("two.ar0", "two.ar1")}
    assert len(channels) == 2
    assert "tuple(%two.ar0, %two.ar1)" in ins["two"]
    assert "replica-id()" in ins["pid"]
    assert "S(5)" not in plain


def test_sequences_and_order_check():
    seqs = xr.sequences(FUSED)
    assert seqs == {"main": ["x", "f", "t", "b"]}  # the fused computation is no schedule
    before = {"main": ["a", "b", "c", "d"]}
    kept = xr.compare_orders(before, {"main": ["a", "b", "x", "c", "d"]})
    assert kept["kept"] and kept["added_by_xla"] == 1 and kept["matched"] == 4
    moved = xr.compare_orders(before, {"main": ["a", "c", "b", "d"]})
    assert not moved["kept"] and "out of order" in moved["out_of_order"][0]
    # most instructions gone (XLA rebuilt the module): not kept, even with no swap
    rebuilt = xr.compare_orders(before, {"main": ["a", "zz"]})
    assert not rebuilt["kept"] and rebuilt["dropped_by_xla"] == 3


def test_compare_outputs_is_exact_for_integers_and_tolerant_for_floats():
    ref = [np.arange(6, dtype=np.int32), np.linspace(-1, 1, 50, dtype=np.float32)]
    assert xr.compare_outputs([r.copy() for r in ref], ref)["equal"]
    ints = [ref[0] + (np.arange(6) == 3), ref[1]]
    assert not xr.compare_outputs(ints, ref)["equal"]
    # f32 within rtol 1e-4 of |ref| + max|ref|: equal; ten times that: not
    near = [ref[0], ref[1] + np.float32(5e-5)]
    assert xr.compare_outputs(near, ref)["equal"]
    far = [ref[0], ref[1] + np.float32(5e-3)]
    check = xr.compare_outputs(far, ref)
    assert not check["equal"] and "rtol 0.0001" in check["reason"]
    nan = ref[1].copy()
    nan[3] = np.nan
    assert xr.compare_outputs([ref[0], nan], [ref[0], nan])["equal"]
    assert not xr.compare_outputs([ref[0], ref[1]], [ref[0], nan])["equal"]
    assert not xr.compare_outputs([ref[0]], ref)["equal"]
    assert not xr.compare_outputs([ref[0], ref[1][:10]], ref)["equal"]


def test_inputs_are_seeded_per_parameter_and_device():
    shapes = [(np.dtype(np.float32), (3, 4)), (np.dtype(np.int32), (5,)), (np.dtype(bool), (2,))]
    a = xr.make_inputs(shapes, seed=1, devices=2)
    b = xr.make_inputs(shapes, seed=1, devices=2)
    c = xr.make_inputs(shapes, seed=2, devices=2)
    assert all(np.array_equal(x, y) for pa, pb in zip(a, b) for x, y in zip(pa, pb))
    assert not np.array_equal(a[0][0], c[0][0])
    assert not np.array_equal(a[0][0], a[0][1])  # each device its own values
    assert a[0][0].dtype == np.float32 and -1 <= a[0][0].min() and a[0][0].max() < 1
    assert a[1][0].dtype == np.int32 and set(a[1][0].tolist()) <= set(range(*xr.INT_RANGE))
    assert a[2][0].dtype == np.bool_


def _run_cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(args)
    return rc, out.getvalue(), err.getvalue()


def test_run_without_jax_says_so_in_one_line(monkeypatch):
    import importlib.util

    if importlib.util.find_spec("jax"):
        pytest.skip("jax is importable here: the refusal is for environments without it")
    monkeypatch.delenv("CPSCHED_JAX_PYTHON", raising=False)
    rc, out, err = _run_cli(["run", str(REPO / "models" / "hlo" / "mlp_train.hlo")])
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "jax" in err


def test_run_refuses_missing_files_and_bad_options(monkeypatch, tmp_path):
    monkeypatch.setenv("CPSCHED_JAX_PYTHON", sys.executable)  # never reached
    rc, out, err = _run_cli(["run", str(tmp_path / "nope.hlo")])
    assert rc == 2 and "nope.hlo: no such file" in err and out == ""
    mod = REPO / "models" / "hlo" / "mlp_train.hlo"
    rc, _, err = _run_cli(["run", str(mod), "--reference", str(tmp_path / "ref.hlo")])
    assert rc == 2 and "ref.hlo: no such file" in err
    rc, _, err = _run_cli(["run", str(mod), "--repeat", "0"])
    assert rc == 2 and "--repeat" in err
    rc, _, err = _run_cli(["run", str(mod), "--device", "no-such-preset"])
    assert rc == 2 and len(err.strip().splitlines()) == 1


def _module_imports(path: Path) -> tuple[set[str], set[str]]:
    """(module-level imports, imports inside functions) of a file, top names."""
    tree = ast.parse(path.read_text())
    top, inner = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""]
            (top if node in tree.body else inner).update(n.split(".")[0] for n in names)
    return top, inner


def test_the_engine_imports_only_the_standard_library_at_module_level():
    top, inner = _module_imports(Path(xr.__file__))
    assert top <= set(sys.stdlib_module_names) | {"__future__"}, top
    assert "cpsched" not in top | inner  # it runs where cpsched cannot be imported
    assert inner - set(sys.stdlib_module_names) <= {"numpy", "jax", "jaxlib"}


def test_the_gpu_script_runs_without_cpsched():
    """``measure_gpu.py run`` must start on a machine with jax and numpy only: cpsched is
    imported only by the ``prepare`` side."""
    path = REPO / "benchmarks" / "measure_gpu.py"
    tree = ast.parse(path.read_text())
    top = {a.name.split(".")[0] for n in tree.body if isinstance(n, ast.Import) for a in n.names}
    top |= {(n.module or "").split(".")[0] for n in tree.body if isinstance(n, ast.ImportFrom)}
    assert top <= set(sys.stdlib_module_names) | {"__future__"}, top
    users = {f.name for f in tree.body if isinstance(f, ast.FunctionDef)
             and any(isinstance(n, ast.ImportFrom) and (n.module or "").startswith("cpsched")
                     for n in ast.walk(f))}
    assert users <= {"_predicted", "prepare"}, users


def test_the_gpu_plan_names_files_that_exist_and_stays_small():
    plan_dir = REPO / "benchmarks" / "measure_gpu"
    plan = json.loads((plan_dir / "plan.json").read_text())
    gpu = REPO / "models" / "hlo" / "gpu"
    assert {m["name"] for m in plan["modules"]} == {p.name[:-7] for p in gpu.glob("*.hlo.gz")}
    for m in plan["modules"]:
        assert m["orders"]["xla"]["path"] == f"models/hlo/gpu/{m['name']}.hlo.gz"
        for label, order in m["orders"].items():
            assert (REPO / order["path"]).is_file(), (m["name"], label)
            assert order["predicted"]["peak_bytes"] > 0
        assert ("cp-overlap" in m["orders"]) == bool(m["async_starts"])
    total = sum(p.stat().st_size for p in plan_dir.iterdir())
    assert total < 5 * 2**20


def test_named_mesh_groups_are_written_out():
    line = ("%a = f32[2]{0} all-to-all(%x), channel_id=1, "
            "replica_groups=mesh['data'=2,'fsdp'=2,'tensor'=2] {'data','tensor'}\n")
    plain = xr.logical_text("HloModule m\n\nENTRY %main (x: f32[2]) -> f32[2] {\n"
                            "  %x = f32[2]{0} parameter(0)\n  ROOT " + line.strip() + "\n}\n")
    # device = 4 data + 2 fsdp + tensor: fsdp fixed per group, data then tensor inside
    assert "replica_groups={{0,1,4,5},{2,3,6,7}}" in plain


def test_the_gpu_results_table_sets_measured_beside_predicted(tmp_path):
    import subprocess

    def order(step, pred, peak, equal=True):
        return {"order_kept": True, "outputs_equal": equal, "step_seconds": step,
                "spread": {"q1": step, "q3": step}, "memory": {"temp_bytes": 2**20},
                "peak_bytes_in_use": 3 * 2**20,
                "predicted": {"makespan_seconds": {"h200": pred}, "peak_bytes": peak}}

    lines = [{"kind": "run", "jax": "0.11.2", "repeat": 20, "nvidia_smi": "NVIDIA H200"},
             {"kind": "module", "name": "a", "devices": 1,
              "orders": {"xla": order(1e-3, 1.1e-3, 2**21),
                         "cp-overlap": order(0.9e-3, 0.8e-3, 2**21, equal=False)}},
             {"kind": "module", "name": "b", "devices": 1,
              "orders": {"xla": order(2e-3, 1e-3, 2**21)}},
             {"kind": "module", "name": "c", "skipped": "the time budget ran out first"}]
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    p = subprocess.run([sys.executable, str(REPO / "benchmarks" / "measure_gpu.py"), "table",
                        str(path)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    rows = {tuple(c.strip() for c in ln.split("|")[1:4]): ln for ln in p.stdout.splitlines()
            if ln.startswith("| ") and not ln.startswith("| program")}
    assert "| 1.000 (1.000-1.000) | 1.100 | 1.10 | 1.00 | 3.00 | 2.00 |" in rows[("a", "1", "xla")]
    assert "DIFFER" in rows[("a", "1", "cp-overlap")]
    assert "the time budget ran out first" in p.stdout
    # within 15 %: a (1.10) yes, b (0.50) no
    assert "within 15 % of the measured median on 1 of 2 programs" in p.stdout
    assert "a: cp-overlap predicted 27.3 % faster; measured +10.0 %" in p.stdout
