"""Several compiled buckets of one program -> one symbolic graph (cpsched.readers.hlo.buckets)."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from cpsched.analysis.memory import simulate
from cpsched.core.errors import InputError
from cpsched.core.scenarios import Scenarios
from cpsched.readers import read_graph
from cpsched.readers.hlo.buckets import dim_from_names, fit_buckets, fit_polynomial

REPO = Path(__file__).resolve().parents[1]
MODELS = REPO / "models" / "stablehlo"
BUCKETS = [MODELS / f"mlp_train.b{b}.hlo" for b in (64, 256, 1024)]


def test_fit_polynomial_least_degree_and_checked():
    p, checked = fit_polynomial([1, 2, 3, 4], [5, 7, 9, 11])
    assert p[:2] == [Fraction(3), Fraction(2)] and all(c == 0 for c in p[2:]) and checked
    p, checked = fit_polynomial([128, 512, 2048], [x * x * 16 + 8 for x in (128, 512, 2048)])
    assert p == [8, 0, 16] and not checked          # three points, degree two: not checked
    assert fit_polynomial([1, 2], [1, 5], max_degree=0) is None


def test_dim_from_names():
    assert dim_from_names(["a.s128.hlo", "a.s512.hlo"]) == ("s", [128, 512])
    assert dim_from_names(["x_b8_s128.hlo", "x_b8_s2048.hlo"]) == ("s", [128, 2048])
    with pytest.raises(InputError, match="--dim"):
        dim_from_names(["a.hlo", "b.hlo"])


def test_buckets_fit_one_graph_exact_at_every_module():
    res = fit_buckets([str(p) for p in BUCKETS])
    assert res.ok and res.dim == "b" and res.values == [64, 256, 1024]
    g = res.graph
    assert g.dims == ("b",)
    assert res.fitted > 0 and res.checked == res.fitted     # three modules: all checked
    for p, b in zip(BUCKETS, res.values):
        c = read_graph(str(p))
        sc = Scenarios(("x",), ("b",), np.array([[b]]), np.ones(1))
        np.testing.assert_array_equal(g.sizes(sc)[0], c.sizes(Scenarios(("x",), (), np.zeros(
            (1, 0), dtype=np.int64), np.ones(1)))[0])
        order = [g.op_index(c.op_names[i]) for i in c.default_order()]
        assert int(simulate(g, order, sc).peak[0]) == int(simulate(c, c.default_order()).peak[0])
    # the activations grow with b, the weights do not
    x = g.buffer_names.index(next(n for n in g.buffer_names if n.startswith("x")))
    assert str(g.buffer_sizes[x]) == "1024*b"


def test_buckets_report_instructions_that_differ(tmp_path):
    texts = [p.read_text() for p in BUCKETS]
    texts[2] = texts[2].replace("dot.1", "dot.99")
    paths = []
    for p, t in zip(BUCKETS, texts):
        q = tmp_path / p.name
        q.write_text(t)
        paths.append(str(q))
    res = fit_buckets(paths)
    assert not res.ok
    assert any(d.startswith("dot.1 (dot): only in mlp_train.b64.hlo, mlp_train.b256.hlo")
               for d in res.differences)
    assert any(d.startswith("dot.99 (dot): only in mlp_train.b1024.hlo") for d in res.differences)
    cli = [sys.executable, "-c", "from cpsched.cli import main; import sys; sys.exit(main())",
           "info"]
    proc = subprocess.run(cli + paths, capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 2 and "differ" in proc.stdout and "dot.99" in proc.stdout
    proc = subprocess.run(cli + [str(p) for p in BUCKETS], capture_output=True, text=True,
                          cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert "one symbolic graph" in proc.stdout and "b=1024" in proc.stdout


def _mean_module(b: int, k: int) -> str:
    """A step that scales by 1/b: XLA may number that constant differently per bucket."""
    return f"""HloModule m, is_scheduled=true

ENTRY %main (x: f32[{b},8]) -> f32[{b},8] {{
  %x = f32[{b},8]{{1,0}} parameter(0)
  %constant.3 = f32[] constant(2)
  %constant.{k} = f32[] constant({1 / b})
  %two = f32[{b},8]{{1,0}} broadcast(%constant.3), dimensions={{}}
  %inv = f32[{b},8]{{1,0}} broadcast(%constant.{k}), dimensions={{}}
  %m = f32[{b},8]{{1,0}} multiply(%x, %inv)
  ROOT %r = f32[{b},8]{{1,0}} add(%m, %two)
}}
"""


def test_buckets_match_constants_that_differ_in_value_and_name(tmp_path):
    paths = []
    for b, k in ((8, 7), (16, 9), (32, 7)):
        p = tmp_path / f"mean.b{b}.hlo"
        p.write_text(_mean_module(b, k))
        paths.append(str(p))
    res = fit_buckets(paths)
    assert res.ok, res.differences
    assert res.renamed == ["mean.b16.hlo: constant.9 as constant.7"]
    assert str(res.graph.buffer_sizes[res.graph.buffer_names.index("inv")]) == "32*b"
    # a constant whose shape or users differ is not taken for another: then they differ
    texts = [_mean_module(8, 7), _mean_module(16, 9).replace(
        "%inv = f32[16,8]{1,0} broadcast(%constant.9)", "%inv = f32[16,8]{1,0} broadcast("
        "%constant.3)").replace("%two = f32[16,8]{1,0} broadcast(%constant.3)",
                                "%two = f32[16,8]{1,0} broadcast(%constant.9)")]
    for p, t in zip(paths[:2], texts):
        Path(p).write_text(t)
    res = fit_buckets(paths[:2])
    assert not res.ok and not res.renamed
    assert any(d.startswith("constant.9 (constant): only in mean.b16.hlo")
               for d in res.differences)


def test_bucket_differences_are_summarised(tmp_path):
    """Many differences print as counts by what differs and by opcode, then the first
    five, each on one short line (``--json`` keeps them all)."""
    texts = [p.read_text() for p in BUCKETS]
    texts[0] = texts[0].replace("_fusion", "_fused")     # every fusion renamed in one bucket
    paths = []
    for p, t in zip(BUCKETS, texts):
        q = tmp_path / p.name
        q.write_text(t)
        paths.append(str(q))
    res = fit_buckets(paths)
    assert len(res.differences) >= 10
    lines = res.summary()
    assert len(lines) <= 4 + 5 and all(len(ln) <= 170 for ln in lines)
    assert any("instructions in some modules only (fusion" in ln for ln in lines)
    cli = [sys.executable, "-c", "from cpsched.cli import main; import sys; sys.exit(main())",
           "info"]
    proc = subprocess.run(cli + paths, capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 2
    out = proc.stdout.splitlines()
    assert len(out) <= 12 and "first 5:" in proc.stdout and "--json lists them all" in proc.stdout
    assert max(len(ln) for ln in out) <= 180
    proc = subprocess.run(cli + paths + ["--json"], capture_output=True, text=True, cwd=REPO)
    import json
    assert len(json.loads(proc.stdout)["differences"]) == len(res.differences)
