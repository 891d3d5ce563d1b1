"""``from_jax`` on every corpus program gives the same graph as reading its stored dump.

For each program of ``models/jax/corpus_programs.py`` (default order and the ``.memopt``
twin), ``tests/xla/from_jax_corpus.py`` runs in the jax environment's Python (named by
``CPSCHED_JAX_PYTHON``, which ``make test-xla`` sets; or this Python if it has jax), one
child process per program, two at a time: it compiles the program with the capture's
``XLA_FLAGS``, calls ``from_jax(fn, *args, stage="optimized")`` and compares with
``cpsched.read`` of ``models/hlo/corpus/NAME.hlo.gz``: op names (parameters named by their
pytree path), opcodes, dependences, buffers and sizes, order and simulated peak.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("from_jax_corpus.py")
sys.path.insert(0, str(CHILD.parent))
from from_jax_corpus import compare, expected_op_names  # noqa: E402

sys.path.insert(0, str(REPO / "models" / "jax"))
from corpus_programs import CORPUS  # noqa: E402  (standard library only)

VARIANTS = [(n, m) for n in CORPUS for m in (False, True)]


def _jax_python() -> str | None:
    py = os.environ.get("CPSCHED_JAX_PYTHON")
    if py and Path(py).exists():
        return py
    return sys.executable if importlib.util.find_spec("jax") is not None else None


PY = _jax_python()
needs_jax = pytest.mark.skipif(PY is None, reason="from_jax on the corpus needs jax: run with "
                               "`make test-xla` (or CPSCHED_JAX_PYTHON=a Python with jax)")


def _run(variant) -> dict:
    name, memopt = variant
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    proc = subprocess.run([PY, str(CHILD), name] + (["--memopt"] if memopt else []),
                          cwd=REPO, env=env, capture_output=True, text=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode or not lines:
        return {"name": name, "equal": False, "differences": [f"child failed: "
                                                              f"{proc.stderr[-1500:]}"]}
    return json.loads(lines[-1])


@pytest.fixture(scope="module")
def results() -> dict:
    with ThreadPoolExecutor(max_workers=2) as pool:   # XLA compiles are CPU-bound
        return {v: r for v, r in zip(VARIANTS, pool.map(_run, VARIANTS))}


@needs_jax
@pytest.mark.parametrize("variant", VARIANTS,
                         ids=[n + (".memopt" if m else "") for n, m in VARIANTS])
def test_from_jax_equals_the_dump(results, variant):
    r = results[variant]
    assert r["equal"], f"{r['name']}: {r['differences']}"
    assert r["n_ops"] > 0 and r["peak"] > 0


@needs_jax
def test_parameters_are_renamed_somewhere(results):
    # the name mapping is exercised: pytree paths differ from XLA's parameter names
    assert sum(r.get("renamed_parameters", 0) for r in results.values()) > 0


def test_comparison_sees_differences():
    """The comparison is not vacuous: each kind of change to a graph is reported."""
    import numpy as np

    import cpsched
    path = REPO / "models" / "hlo" / "corpus" / "adam_donated.hlo.gz"
    if not path.exists():
        pytest.skip("models/hlo/corpus/adam_donated.hlo.gz is missing")
    d = cpsched.read(str(path))
    renamed = expected_op_names(d)        # what from_jax names the ops
    assert renamed != d.op_names          # parameters carry pytree paths in this module
    g = d.with_(op_names=renamed)
    assert compare(g, d) == []
    assert any(x.startswith("op names") for x in compare(d, d))
    names = list(renamed)
    names[-1] += "_x"
    assert any(x.startswith("op names") for x in compare(g.with_(op_names=tuple(names)), d))
    sizes = list(g.buffer_sizes)
    sizes[0] = sizes[0] * 2
    assert any(x.startswith("buffer sizes") for x in
               compare(g.with_(buffer_sizes=tuple(sizes)), d))
    order = list(g.original_order)
    order[0], order[1] = order[1], order[0]
    assert any(x.startswith("original order") for x in
               compare(g.with_(original_order=tuple(order)), d))
    live = np.array(g.buffer_live_out)
    live[0] = not live[0]
    assert "buffer_live_out differ" in compare(g.with_(buffer_live_out=live), d)
