"""``cpsched run`` and ``benchmarks/measure_gpu.py`` on XLA:CPU, with jax.

jax lives in its own environment: these tests run the measuring child with the Python named by
``CPSCHED_JAX_PYTHON`` (``make test-xla`` sets it) and skip, saying so, without one.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cpsched.cli import main

REPO = Path(__file__).resolve().parents[2]
HLO = REPO / "models" / "hlo"
ENGINE = REPO / "cpsched" / "measure" / "xla_run.py"


def _jax_python() -> str | None:
    py = os.environ.get("CPSCHED_JAX_PYTHON")
    if not py or not Path(py).exists():
        return None
    probe = subprocess.run([py, "-c", "import jax, jaxlib._hlo"], capture_output=True)
    return py if probe.returncode == 0 else None


JAX_PYTHON = _jax_python()
needs_jax = pytest.mark.skipif(
    JAX_PYTHON is None,
    reason="running modules needs jax: `make test-xla`, or CPSCHED_JAX_PYTHON=a Python with jax",
)
pytestmark = needs_jax


def _cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(args)
    return rc, out.getvalue(), err.getvalue()


def test_run_checks_outputs_times_and_reads_back_the_order():
    rc, out, err = _cli(["run", str(HLO / "mlp_train.hlo"), "--reference",
                         str(HLO / "mlp_train.memopt.hlo"), "--repeat", "3", "--platform",
                         "cpu", "--json"])
    assert rc == 0, err
    rec = json.loads(out)
    assert rec["outputs_equal"] is True and rec["output_check"]["rtols"] == [1e-4]
    assert len(rec["step_seconds_runs"]) == 3 and rec["step_seconds"] > 0
    assert rec["spread"]["min"] <= rec["step_seconds"] <= rec["spread"]["max"]
    # XLA:CPU's final module: the cpu preset, fitted to XLA:CPU, is the default
    assert rec["device"] == "cpu" and rec["predicted_seconds"] > 0
    assert rec["xla_order"] and rec["order_check"]["input_instructions"] > 0
    assert any("XLA:CPU compiles the program again" in n for n in rec["notes"])
    assert rec["platform"] == "cpu" and rec["memory"]["temp_bytes"] > 0
    assert rec["reference_run"]["step_seconds"] > 0
    rc, out, _ = _cli(["run", str(HLO / "mlp_train.hlo"), "--platform", "cpu", "--repeat", "2"])
    assert rc == 0 and "outputs: not checked" in out and "device preset cpu" in out
    rc, out, _ = _cli(["run", str(HLO / "mlp_train.hlo"), "--platform", "cpu", "--repeat", "1",
                       "--device", "h100"])
    assert rc == 0 and "device preset h100" in out


def _entry_order(text: str) -> list[str]:
    body = text[text.index("\nENTRY"):].split("\n}")[0]
    return re.findall(r"^\s*(?:ROOT\s+)?%([\w.\-]+) =", body, re.M)


def test_an_order_xla_cpu_did_not_keep_is_reported(tmp_path):
    """XLA:CPU schedules the program again: a cp order unlike its own is not what it ran."""
    src = HLO / "cnn_train.hlo"
    written = tmp_path / "cnn.cp.hlo"
    rc, _, err = _cli(["schedule", str(src), "--time-limit", "5", "-o", str(written)])
    assert rc == 0, err
    if _entry_order(written.read_text()) == _entry_order(src.read_text()):
        pytest.skip("cp kept XLA's own order here: nothing for XLA:CPU to drop")
    rc, out, err = _cli(["run", str(written), "--reference", str(src), "--platform", "cpu",
                         "--repeat", "1", "--json"])
    assert rc == 0, err
    rec = json.loads(out)
    assert rec["outputs_equal"] is True
    assert rec["order_kept"] is False and rec["xla_order"] != _entry_order(written.read_text())
    rc, out, _ = _cli(["run", str(written), "--platform", "cpu", "--repeat", "1"])
    assert rc == 0 and "order: NOT kept" in out


def test_a_written_overlap_schedule_computes_what_xla_order_computes(tmp_path):
    """8 partitions, collectives split into async pairs placed by cp-overlap."""
    written = tmp_path / "dp_tp.overlap.hlo"
    rc, _, err = _cli(["schedule", str(HLO / "sharded_dp_tp.hlo"), "--objective", "overlap",
                       "--async-collectives", "--time-limit", "3", "-o", str(written)])
    assert rc == 0, err
    assert "all-reduce-start" in written.read_text() or "-start(" in written.read_text()
    rc, out, err = _cli(["run", str(written), "--reference", str(HLO / "sharded_dp_tp.hlo"),
                         "--platform", "cpu", "--repeat", "2", "--json"])
    assert rc == 0, err
    assert json.loads(out)["outputs_equal"] is True


def test_a_different_program_is_caught(tmp_path):
    text = (HLO / "mlp_train.hlo").read_text()
    # the SGD update's subtraction, made an addition: the new parameters differ
    changed, n = re.subn(r"(ROOT %[\w.\-]+ = f32\[[0-9,]+\]\{[0-9,]+\}) subtract\(",
                         r"\1 add(", text, count=1)
    assert n == 1
    bad = tmp_path / "changed.hlo"
    bad.write_text(changed)
    rc, out, _ = _cli(["run", str(bad), "--reference", str(HLO / "mlp_train.hlo"),
                       "--platform", "cpu", "--repeat", "1"])
    assert rc == 1 and "DIFFER" in out


def test_what_cannot_be_run_is_refused_in_one_line(tmp_path):
    token = tmp_path / "token.hlo"
    token.write_text(textwrap.dedent("""\
        HloModule t

        ENTRY %main (p: token[], x: f32[4]) -> f32[4] {
          %p = token[] parameter(0)
          %x = f32[4]{0} parameter(1)
          ROOT %y = f32[4]{0} negate(%x)
        }
        """))
    rc, out, err = _cli(["run", str(token), "--platform", "cpu"])
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "parameter 0 is a token" in err
    garbage = tmp_path / "bad.hlo"
    garbage.write_text("HloModule b\n\nENTRY %main () -> f32[] {\n  ROOT %c = f32[] frob()\n}\n")
    rc, out, err = _cli(["run", str(garbage), "--platform", "cpu"])
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "bad.hlo" in err and "XLA" in err


def test_the_rewritten_module_computes_what_jax_computes(tmp_path):
    """Ground truth for the XLA:CPU path: a jax program's own outputs against the runner's
    outputs for XLA's optimized module of that program (fusions inlined, bitcasts and
    layouts spelled out, a scan's while loop, a convolution, transposes)."""
    script = textwrap.dedent(f"""\
        import importlib.util, json, sys
        import numpy as np, jax, jax.numpy as jnp
        spec = importlib.util.spec_from_file_location("xr", {str(ENGINE)!r})
        xr = importlib.util.module_from_spec(spec); spec.loader.exec_module(xr)

        def f(w, x, k):
            y = jax.lax.conv_general_dilated(x, k, (1, 1), "SAME",
                                             dimension_numbers=("NHWC", "HWIO", "NHWC"))
            y = jnp.tanh(y).reshape(x.shape[0], -1) @ w
            def body(c, row):
                return c * 0.5 + jnp.sum(row), c.T @ row
            c, ys = jax.lax.scan(body, jnp.ones((8, 8)), y)
            return c.T, ys.sum(0), jnp.argmax(y, axis=1)

        shapes = [((288, 8), np.float32), ((2, 6, 6, 3), np.float32), ((3, 3, 3, 8), np.float32)]
        hlo = jax.jit(f).lower(*[jax.ShapeDtypeStruct(s, d) for s, d in shapes]).compile().as_text()
        path = sys.argv[1]
        open(path, "w").write(hlo)
        host = xr.make_inputs([(np.dtype(d), s) for s, d in shapes], seed=0, devices=1)
        want = [np.asarray(a) for a in jax.tree.leaves(jax.jit(f)(*[h[0] for h in host]))]
        rec = xr.measure([path], reference=None, repeat=1, platform="cpu")[0]
        assert "error" not in rec, rec
        be = xr.backend("cpu")
        compiled = be.compile(xr.read_text(path))
        _, outs = be.run(compiled, be.put(compiled, host))
        got = [np.asarray(a) for per in outs for a in per]
        print(json.dumps(xr.compare_outputs(got, want)))
        """)
    p = subprocess.run([JAX_PYTHON, "-c", script, str(tmp_path / "prog.hlo")],
                       capture_output=True, text=True, env=dict(os.environ, JAX_PLATFORMS="cpu"))
    assert p.returncode == 0, p.stderr[-2000:]
    check = json.loads(p.stdout.strip().splitlines()[-1])
    assert check["equal"], check
    assert "fusion(" in (tmp_path / "prog.hlo").read_text()  # a real optimized module


def test_the_gpu_script_runs_end_to_end_on_the_cpu_without_cpsched(tmp_path):
    """``prepare`` here, then ``run`` with jax's Python, as on the GPU machine: cpsched and
    OR-Tools are never imported by it (``-X importtime`` lists every import)."""
    script = REPO / "benchmarks" / "measure_gpu.py"
    plan = tmp_path / "plan"
    p = subprocess.run([sys.executable, str(script), "prepare", "--source",
                        str(REPO / "models" / "hlo" / "corpus"), "--dest", str(plan),
                        "--time-limit", "10", "--only", "mesh3_shard_map,while_cg"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    made = json.loads((plan / "plan.json").read_text())
    errors = {(m["name"], k): o["schedule"]["error"] for m in made["modules"]
              for k, o in m["orders"].items() if "error" in o.get("schedule", {})}
    assert not errors, errors
    out = tmp_path / "out"
    p = subprocess.run([JAX_PYTHON, "-X", "importtime", "-u", str(script), "run", "--out",
                        str(out), "--plan", str(plan / "plan.json"), "--platform", "cpu",
                        "--repeat", "2", "--profile-runs", "1", "--budget", "240"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    imported = [ln.rsplit("|", 1)[-1].strip() for ln in p.stderr.splitlines()
                if ln.startswith("import time:")]
    assert not [m for m in imported if m.split(".")[0] in ("cpsched", "ortools")]
    assert sorted(os.listdir(out)) == ["measure_gpu.jsonl", "measure_gpu.log"]
    lines = [json.loads(ln) for ln in (out / "measure_gpu.jsonl").read_text().splitlines()]
    assert lines[0]["kind"] == "run" and lines[-1]["kind"] == "end"
    modules = {m["name"]: m for m in lines if m["kind"] == "module"}
    assert set(modules) == {"mesh3_shard_map", "while_cg"}
    assert set(modules["mesh3_shard_map"]["orders"]) == {"xla", "cp", "cp-overlap"}
    for m in modules.values():
        for label, rec in m["orders"].items():
            assert "error" not in rec, (m["name"], label, rec)
            assert rec["outputs_equal"] is True and rec["step_seconds"] > 0
            assert rec["predicted"]["makespan_seconds"]["h200"] > 0
            assert (label == "xla") == bool(rec.get("per_op", {}).get("ops"))
    assert lines[-1]["modules_done"] == 2 and not lines[-1]["stopped_by_budget"]
    with gzip.open(plan / "while_cg.cp.hlo.gz", "rt") as f:
        assert f.read().startswith("HloModule")


def test_plugin_bytes_load_into_jax_behind_ifrt_metadata():
    """The GPU path loads the CUDA plugin's serialized executable into jax's client, which
    wants IFRT's metadata header first (outputs' number, types and shapes). Checked here
    with XLA:CPU's PJRT bytes: jax's own serialization with its header cut off, given the
    header ``ifrt_executable`` writes, loads and computes what the program computes."""
    script = textwrap.dedent(
        f"""
        import importlib.util, json, sys
        import numpy as np, jax, jax.numpy as jnp
        from jaxlib import _jax
        spec = importlib.util.spec_from_file_location("xla_run", {str(ENGINE)!r})
        xr = importlib.util.module_from_spec(spec); spec.loader.exec_module(xr)
        f = jax.jit(lambda x, y: (x @ y, (x + 1).astype(jnp.int32)[0], jnp.sum(y)))
        a = np.arange(12, dtype=np.float32).reshape(3, 4)
        b = np.ones((4, 4), np.float32)
        compiled = f.lower(a, b).compile()
        ex = compiled.runtime_executable()
        s = ex.serialize()
        n = shift = i = 0
        while True:
            c = s[i]; n |= (c & 127) << shift; shift += 7; i += 1
            if c < 128: break
        pjrt = s[i + n:]
        final = ex.hlo_modules()[0].to_string()
        client = jax.devices("cpu")[0].client
        devs = _jax.DeviceList(tuple(client.devices()[:1]))
        loaded = client.deserialize_executable(xr.ifrt_executable(pjrt, final), devs, None)
        args = [jax.device_put(a), jax.device_put(b)]
        outs = loaded.execute_sharded(args).disassemble_into_single_device_arrays()
        got = [np.asarray(o[0]) for o in outs]
        want = [np.asarray(w) for w in f(a, b)]
        print(json.dumps([[g.dtype.str, list(g.shape), bool(np.array_equal(g, w))]
                          for g, w in zip(got, want)]))
        """
    )
    p = subprocess.run([JAX_PYTHON, "-c", script], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    rows = json.loads(p.stdout.strip().splitlines()[-1])
    assert [r[1] for r in rows] == [[3, 4], [4], []]
    assert all(r[2] for r in rows), rows
