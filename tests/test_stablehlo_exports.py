"""Symbolic convolutional programs from other people's libraries: a ResNet training step in
flax and a U-Net diffusion training step in equinox, exported by ``jax.export`` with symbolic
batch and spatial dims (models/stablehlo/*.sym.mlir.gz, ``models/jax/symbolic_cnn.py``) and
with concrete shapes at three sizes.

The stored exports need no jax: the symbolic graph, evaluated at each size, must give the
concrete export's graph (same ops, same buffer sizes) and the same peak in every order
tried. The last tests export again through ``cpsched.from_jax`` and need jax, flax and
equinox (``make test-xla`` runs them in .venv-jax; skipped elsewhere).
"""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import numpy as np
import pytest

from cpsched.analysis.memory import simulate
from cpsched.core.scenarios import Scenarios
from cpsched.readers import read_graph

REPO = Path(__file__).resolve().parents[1]
MODELS = REPO / "models" / "stablehlo"
PROGRAMS = ("resnet_train", "unet_diffusion_train")
CONCRETE = ((2, 16, 16), (4, 32, 24), (8, 48, 64))   # (b, h, w) as symbolic_cnn.py exports


def _norm(opcode: str) -> str:
    # a symbolic module writes dynamic_* where a concrete one has the static op
    return opcode.replace("real_dynamic_slice", "slice").replace("dynamic_", "")


def _at(g, **dims) -> Scenarios:
    return Scenarios(("x",), g.dims, np.array([[dims[d] for d in g.dims]]), np.ones(1))


def _random_topological(g, seed: int) -> list[int]:
    rng = random.Random(seed)
    indeg = np.diff(g.pred_ptr).astype(int)
    ready = [i for i in range(g.n_ops) if indeg[i] == 0]
    out = []
    while ready:
        i = ready.pop(rng.randrange(len(ready)))
        out.append(i)
        for s in g.succs(i):
            indeg[s] -= 1
            if indeg[s] == 0:
                ready.append(int(s))
    return out


@pytest.fixture(scope="module")
def symbolic():
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = read_graph(str(MODELS / f"{name}.sym.mlir.gz"))
        return cache[name]
    return get


@pytest.mark.parametrize("name", PROGRAMS)
def test_symbolic_cnn_reads_with_exact_sizes(name, symbolic):
    g = symbolic(name)
    assert g.dims == ("b", "hk", "wk")         # batch and both spatial dims (h = 8*hk)
    assert g.meta["approximations"] == []      # every size a polynomial: no bound stated
    ops = {o.split(".")[-1] for o in g.opcodes}
    assert {"convolution", "reduce_window"} <= ops
    if name == "resnet_train":                 # max pool and its gradient
        assert "select_and_scatter" in ops
    else:                                      # skip connections joined on the way up
        assert "concatenate" in ops
    # an activation of the stem: b x h x w x 16 floats, 4*16*64 = 4096 bytes per b*hk*wk
    assert any(str(s) == "4096*b*hk*wk" for s in g.buffer_sizes)


@pytest.mark.parametrize("name", PROGRAMS)
@pytest.mark.parametrize("b,h,w", CONCRETE)
def test_symbolic_cnn_peak_equals_concrete_export(name, b, h, w, symbolic):
    """At each size the symbolic graph is the concrete export's graph, and its peak in the
    program order and two random topological orders equals the concrete one's."""
    g = symbolic(name)
    c = read_graph(str(MODELS / f"{name}.b{b}_h{h}_w{w}.mlir.gz"))
    assert c.dims == ()
    assert [_norm(o) for o in g.opcodes] == [_norm(o) for o in c.opcodes]
    sc = _at(g, b=b, hk=h // 8, wk=w // 8)
    np.testing.assert_array_equal(g.sizes(sc)[0], c.sizes(_at(c))[0])
    for order in (list(range(g.n_ops)), _random_topological(g, 0), _random_topological(g, 1)):
        assert int(simulate(g, order, sc).peak[0]) == int(simulate(c, order).peak[0])


def test_symbolic_cnn_schedules_for_every_size(symbolic):
    """One order for all sizes: a heuristic on the symbolic ResNet at three sizes; each
    scenario's peak is the concrete export's peak in that order."""
    import cpsched

    g = symbolic("resnet_train")
    sc = Scenarios(tuple(f"b{b}_h{h}_w{w}" for b, h, w in CONCRETE), ("b", "hk", "wk"),
                   np.array([[b, h // 8, w // 8] for b, h, w in CONCRETE]), np.ones(3) / 3)
    r = cpsched.schedule(g, "xla-list", scenarios=sc)
    for k, (b, h, w) in enumerate(CONCRETE):
        c = read_graph(str(MODELS / f"resnet_train.b{b}_h{h}_w{w}.mlir.gz"))
        assert int(simulate(c, r.order).peak[0]) == int(r.peak[sc.names[k]])


# -- export again through from_jax (jax, flax and equinox needed) --------------------------

_LIBS = [m for m in ("jax", "flax", "equinox", "optax") if importlib.util.find_spec(m) is None]
needs_libs = pytest.mark.skipif(bool(_LIBS), reason=f"{', '.join(_LIBS)} not installed: the "
                                "flax / equinox programs run in the jax environment "
                                "(`make jax-env`, `make test-xla`)")


@needs_libs
@pytest.mark.parametrize("name", PROGRAMS)
def test_from_jax_symbolic_cnn_equals_concrete(name):
    """``from_jax(..., stage="stablehlo")`` with the batch and spatial dims named symbolic:
    its peak at a size equals ``from_jax`` with that size's concrete shapes."""
    import jax

    import cpsched
    from models.jax.symbolic_cnn import PROGRAMS as BUILD

    step, state, inputs = BUILD[name]()
    b, hk, wk = jax.export.symbolic_shape("b, hk, wk")
    g = cpsched.from_jax(step, state, *inputs(b, 8 * hk, 8 * wk), stage="stablehlo")
    assert g.dims == ("b", "hk", "wk") and g.meta["approximations"] == []
    bv, hv, wv = CONCRETE[1]
    c = cpsched.from_jax(step, state, *inputs(bv, hv, wv), stage="stablehlo")
    assert g.n_ops == c.n_ops
    order = list(range(g.n_ops))
    assert int(simulate(g, order, _at(g, b=bv, hk=hv // 8, wk=wv // 8)).peak[0]) == \
        int(simulate(c, order).peak[0])
