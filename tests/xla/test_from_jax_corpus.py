"""``from_jax`` on every corpus program gives the same graph as reading its stored dump.

For each program of ``models/jax/corpus_programs.py`` (default order and the ``.memopt``
twin), ``tests/xla/from_jax_corpus.py`` runs in a jax environment's Python, one child
process per program, two at a time: it compiles the program with the capture's
``XLA_FLAGS``, calls ``from_jax(fn, *args, stage="optimized")`` and compares with
``cpsched.read`` of the stored dump of the same jax release: op names (parameters named by
their pytree path), opcodes, dependences, buffers and sizes, order and simulated peak.

The jax environment is the newest one (``CPSCHED_JAX_PYTHON``, which ``make test-xla``
sets, or this Python if it has jax); its dumps are the corpus captured with the same jax
release: ``models/hlo/corpus/`` (the newest) or ``models/hlo/corpus-jax0.10/``. Where no
corpus was captured with that release the tests are skipped with both versions (``make
corpus`` recaptures).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("from_jax_corpus.py")
sys.path.insert(0, str(CHILD.parent))
from from_jax_corpus import compare, expected_op_names  # noqa: E402

CORPORA = (REPO / "models" / "hlo" / "corpus", REPO / "models" / "hlo" / "corpus-jax0.10")


def _manifest(corpus: Path) -> dict:
    path = corpus / "manifest.json"
    return json.loads(path.read_text()) if path.exists() else {"programs": {}}


def _env_python(var: str) -> str | None:
    py = os.environ.get(var)
    if py and Path(py).exists():
        return py
    if var == "CPSCHED_JAX_PYTHON" and importlib.util.find_spec("jax") is not None:
        return sys.executable
    return None


ENVS = {"newest": _env_python("CPSCHED_JAX_PYTHON")}


@cache
def _jax_version(py: str) -> str | None:
    proc = subprocess.run([py, "-c", "import jax; print(jax.__version__)"],
                          capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else None


def _corpus_for(env: str) -> tuple[Path | None, str]:
    """The corpus captured with the env's jax release, or None and why not."""
    py = ENVS[env]
    if py is None:
        return None, ("from_jax on the corpus needs jax: run `make test-xla` (or "
                      "CPSCHED_JAX_PYTHON=a Python with jax)")
    version = _jax_version(py)
    for corpus in CORPORA:
        if _manifest(corpus).get("jax") == version:
            return corpus, ""
    return None, (f"no corpus was captured with jax {version} (models/hlo/corpus: "
                  f"{_manifest(CORPORA[0]).get('jax')}); `make corpus` recaptures it")


VARIANTS = [("newest", name, m) for name in sorted(set().union(
    *(_manifest(c)["programs"] for c in CORPORA))) for m in (False, True)]


def _run(variant) -> dict:
    env, name, memopt = variant
    corpus, why = _corpus_for(env)
    if corpus is None:
        return {"name": name, "skip": why}
    if name not in _manifest(corpus)["programs"]:
        return {"name": name, "skip": f"{name} is not in {corpus.name} (captured with jax "
                                      f"{_manifest(corpus).get('jax')})"}
    pypath = os.pathsep.join([str(REPO)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    proc = subprocess.run([ENVS[env], str(CHILD), name, "--corpus", str(corpus)]
                          + (["--memopt"] if memopt else []),
                          cwd=REPO, env=dict(os.environ, PYTHONPATH=pypath),
                          capture_output=True, text=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode or not lines:
        return {"name": name, "equal": False, "differences": [f"child failed: "
                                                              f"{proc.stderr[-1500:]}"]}
    return json.loads(lines[-1])


@pytest.fixture(scope="module")
def results() -> dict:
    with ThreadPoolExecutor(max_workers=2) as pool:   # XLA compiles are CPU-bound
        return {v: r for v, r in zip(VARIANTS, pool.map(_run, VARIANTS))}


@pytest.mark.parametrize("variant", VARIANTS,
                         ids=[f"{e}-{n}" + (".memopt" if m else "") for e, n, m in VARIANTS])
def test_from_jax_equals_the_dump(results, variant):
    corpus, why = _corpus_for(variant[0])
    if corpus is None:
        pytest.skip(why)
    r = results[variant]
    if "skip" in r:
        pytest.skip(r["skip"])
    assert r["equal"], f"{r['name']}: {r['differences']}"
    assert r["n_ops"] > 0 and r["peak"] > 0


def test_parameters_carry_their_pytree_paths(results):
    ran = [r for r in results.values() if "skip" not in r]
    if not ran:
        pytest.skip(_corpus_for("newest")[1])
    # the pytree paths are kept (as op_name) where XLA's parameter names lose them
    assert sum(r.get("pytree_parameters", 0) for r in ran) > 0


def test_comparison_sees_differences():
    """The comparison is not vacuous: each kind of change to a graph is reported."""
    import numpy as np

    import cpsched
    path = REPO / "models" / "hlo" / "corpus" / "adam_donated.hlo.gz"
    if not path.exists():
        pytest.skip("models/hlo/corpus/adam_donated.hlo.gz is missing")
    d = cpsched.read(str(path))
    renamed = expected_op_names(d)        # what from_jax names the ops: the dump's names
    assert renamed == d.op_names
    g = d.with_(op_names=renamed)
    assert compare(g, d) == [] and compare(d, d) == []
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


def test_comparison_modulo_get_tuple_elements_sees_differences():
    """For the newest corpus (get-tuple-elements as %t#1 operands) the comparison leaves
    the get-tuple-elements aside, and still sees every other kind of change."""
    from from_jax_corpus import compare_modulo_gte

    from cpsched.readers.hlo.convert import module_graphs
    from cpsched.readers.hlo.parser import read_hlo_module

    path = REPO / "models" / "hlo" / "corpus" / "while_cg.hlo.gz"
    if not path.exists():
        pytest.skip("models/hlo/corpus/while_cg.hlo.gz is missing")
    m = read_hlo_module(str(path))
    assert any(i.synthetic and "#" in i.name for i in m.entry.instructions)
    d = module_graphs(m)[m.entry.name]
    assert compare_modulo_gte(d, m, d, m) == []
    sizes = list(d.buffer_sizes)
    j = max(range(d.n_buffers), key=lambda k: int(sizes[k].constant_value))
    sizes[j] = sizes[j] * 2
    assert any(x.startswith("buffers") for x in
               compare_modulo_gte(d.with_(buffer_sizes=tuple(sizes)), m, d, m))
    order = list(d.original_order)
    a = next(k for k in range(len(order) - 1) if d.opcodes[order[k]] != "get-tuple-element"
             and d.opcodes[order[k + 1]] != "get-tuple-element"
             and order[k] not in d.preds(order[k + 1]))
    order[a], order[a + 1] = order[a + 1], order[a]
    assert any(x.startswith("order") for x in
               compare_modulo_gte(d.with_(original_order=tuple(order)), m, d, m))
