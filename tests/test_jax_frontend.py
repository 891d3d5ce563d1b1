"""from_jax and `cpsched capture` (optional extra: skipped without jax)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="jax is not installed (optional extra: "
                                        "pip install 'cpsched[jax]', or make jax-env)")
import jax.numpy as jnp  # noqa: E402

from cpsched import from_jax  # noqa: E402
from cpsched.analysis.memory import simulate  # noqa: E402
from cpsched.core.scenarios import Scenarios  # noqa: E402
from cpsched.readers import read_graph  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def _transformer_args(b: int, s: int):
    from models.jax.symbolic import build
    step, params = build()
    tok = jax.ShapeDtypeStruct((b, s), jnp.int32)
    return step, (params, tok, tok)


DUMP_SCRIPT = """
import sys
sys.path.insert(0, {repo!r})
import jax, jax.numpy as jnp
from models.jax.symbolic import build
step, params = build()
tok = jax.ShapeDtypeStruct((2, 128), jnp.int32)
jax.jit(step).lower(params, tok, tok).compile()
"""


def test_optimized_stage_equals_reading_the_dump(tmp_path):
    dump = tmp_path / "dump"
    env = dict(os.environ, XLA_FLAGS=f"--xla_dump_to={dump} --xla_dump_hlo_as_text",
               JAX_PLATFORMS="cpu")
    subprocess.run([sys.executable, "-c", DUMP_SCRIPT.format(repo=str(REPO))], env=env,
                   check=True, capture_output=True)
    files = sorted(p for p in dump.iterdir()
                   if p.name.endswith("jit_transformer_train_step.cpu_after_optimizations.txt"))
    assert files, sorted(p.name for p in dump.iterdir())[:10]
    d = read_graph(str(files[-1]))
    step, args = _transformer_args(2, 128)
    g = from_jax(step, *args)
    assert g.opcodes == d.opcodes
    for arr in ("kinds", "operands_ptr", "operands_idx", "control_idx", "buffer_def",
                "buffer_users_ptr", "buffer_users_idx", "buffer_live_in", "buffer_live_out"):
        np.testing.assert_array_equal(getattr(g, arr), getattr(d, arr), err_msg=arr)
    assert g.buffer_sizes == d.buffer_sizes and g.transient == d.transient
    assert g.original_order == d.original_order
    order = list(g.default_order())
    assert int(simulate(g, order).peak[0]) == int(simulate(d, order).peak[0])
    # the same names; a parameter's pytree path is its op_name
    assert g.op_names == d.op_names
    params = [i for i in range(g.n_ops) if g.opcodes[i] == "parameter"]
    assert "p['blocks'][0]['wqkv']" in {g.attrs(i).get("op_name") for i in params}


def test_from_jax_schedule_write_round_trip(tmp_path):
    """from_jax's graph keeps its module: schedule orders every computation of it, the
    written module is scheduled, and XLA's allocation figures are there."""
    import cpsched
    from cpsched.readers.hlo.convert import read_hlo_module

    step, args = _transformer_args(2, 64)
    g = from_jax(step, *args)
    r = cpsched.schedule(g, "xla-dfs")
    assert cpsched.api.hlo_module_of(r.graph) is not None
    assert cpsched.api.xla_allocation(r)["temp_bytes"]["static"] > 0
    out = tmp_path / "step.hlo"
    assert r.write(out) == [str(out)]
    module = read_hlo_module(str(out))
    assert module.is_scheduled
    assert [i.name for i in module.entry.instructions] == list(r.orders[module.entry.name])
    assert cpsched.simulate(cpsched.read(str(out))).peak == r.peak


def test_stablehlo_stage_with_dims_matches_concrete_shapes():
    step, args = _transformer_args(2, 128)
    g = from_jax(step, *args, stage="stablehlo", dims={"tokens": "b, s", "targets": "b, s"},
                 constraints=["s <= 2048"])
    assert g.dims == ("b", "s")
    c = from_jax(step, *_transformer_args(4, 256)[1], stage="stablehlo")
    assert c.dims == ()
    order = list(range(g.n_ops))
    sc = Scenarios(("x",), ("b", "s"), np.array([[4, 256]]), np.ones(1))
    assert g.n_ops == c.n_ops
    assert int(simulate(g, order, sc).peak[0]) == int(simulate(c, order).peak[0])


def test_from_jax_rejects_symbolic_optimized():
    from cpsched.core.errors import InputError
    b = jax.export.symbolic_shape("b")[0]
    with pytest.raises(InputError, match="concrete shapes"):
        from_jax(lambda x: x * 2, jax.ShapeDtypeStruct((b, 4), jnp.float32))


def test_capture_cli(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import jax.numpy as jnp
        def step(w, x):
            return jnp.tanh(x @ w).sum()
        def make(s=16):
            return step, (jnp.ones((8, 8)), jnp.ones((s, 8)))
        def make_sym():
            return step, (jnp.ones((8, 8)), jnp.ones((4, 8))), {"dims": {"x": "s, 8"}}
    """))
    run = lambda *a: subprocess.run(
        [sys.executable, "-c", "from cpsched.cli import main; import sys; sys.exit(main())",
         "capture", *a, "-o", str(tmp_path / "out")], capture_output=True, text=True,
        cwd=REPO, env=dict(os.environ, JAX_PLATFORMS="cpu"))
    p = run(f"{script}:make")
    assert p.returncode == 0, p.stderr
    assert sorted(x.name for x in (tmp_path / "out").iterdir()) == [".cpsched-capture.json",
                                                                  "make.hlo", "make.mlir"]
    assert read_graph(str(tmp_path / "out" / "make.hlo")).n_ops > 0
    p = run(f"{script}:make_sym")
    assert p.returncode == 0, p.stderr
    assert read_graph(str(tmp_path / "out" / "make_sym.mlir")).dims == ("s",)
    p = run(f"{script}:make", "--dim", "s=32,64")
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "out" / "make.s32.hlo").exists()
    p = run(f"{script}:missing")
    assert p.returncode == 2 and p.stderr.count("\n") == 1


def _capture(*a, cwd):
    return subprocess.run(
        [sys.executable, "-c", "from cpsched.cli import main; import sys; sys.exit(main())",
         "capture", *a], capture_output=True, text=True, cwd=cwd,
        env=dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=str(REPO)))


def test_capture_into_an_existing_folder_and_again(tmp_path):
    """`-o DIR` (default: the current folder) may exist and hold the user's files; a second
    run replaces what the first wrote; a file capture did not write is never overwritten."""
    script = tmp_path / "prog.py"
    script.write_text("import jax.numpy as jnp\n"
                      "def make():\n"
                      "    return (lambda w, x: jnp.tanh(x @ w).sum()), "
                      "(jnp.ones((8, 8)), jnp.ones((4, 8)))\n")
    (tmp_path / "notes.txt").write_text("mine")
    p = _capture(f"{script.name}:make", cwd=tmp_path)          # default -o: the cwd
    assert p.returncode == 0, p.stderr
    assert {"make.hlo", "make.mlir", "notes.txt", "prog.py"} <= {x.name for x in
                                                                  tmp_path.iterdir()}
    first = (tmp_path / "make.hlo").read_text()
    p = _capture(f"{script.name}:make", cwd=tmp_path)          # re-run: replaces its own
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "make.hlo").read_text() == first
    assert (tmp_path / "notes.txt").read_text() == "mine"
    # a file it wrote but the user changed since, and one it never wrote: refused, nothing
    # written (make.mlir keeps its time stamp)
    (tmp_path / "make.hlo").write_text(first + "\n")
    before = (tmp_path / "make.mlir").stat().st_mtime_ns
    p = _capture(f"{script.name}:make", "-o", ".", cwd=tmp_path)
    assert p.returncode == 2 and "not written by cpsched capture" in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1
    assert (tmp_path / "make.mlir").stat().st_mtime_ns == before
    other = tmp_path / "other"
    other.mkdir()
    (other / "make.mlir").write_text("the user's own")
    p = _capture(f"{script}:make", "-o", str(other), cwd=tmp_path)
    assert p.returncode == 2 and "make.mlir" in p.stderr
    assert (other / "make.mlir").read_text() == "the user's own"
    assert not (other / "make.hlo").exists()
    p = _capture(f"{script}:make", "-o", str(tmp_path / "notes.txt"), cwd=tmp_path)
    assert p.returncode == 2 and "not a directory" in p.stderr
