"""StableHLO / MHLO text reader: parsing, memory semantics, symbolic dims."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cpsched.analysis.memory import simulate
from cpsched.core.errors import InputError
from cpsched.core.graph import OpKind
from cpsched.core.scenarios import Scenarios
from cpsched.core.symbolic import SymExpr
from cpsched.readers import read_graph, sniff_format
from cpsched.readers.stablehlo import read_stablehlo_text
from cpsched.readers.stablehlo import dimexpr as dx
from cpsched.readers.stablehlo.dimexpr import DimPoly

REPO = Path(__file__).resolve().parents[1]
MODELS = REPO / "models" / "stablehlo"


def at(g, **values) -> Scenarios:
    dims = tuple(sorted(values))
    return Scenarios(("x",), dims, np.array([[values[d] for d in dims]]), np.ones(1))


def size_of(g, buffer_name: str) -> SymExpr:
    return g.buffer_sizes[g.buffer_names.index(buffer_name)]


# -- a jax.export-style module written by hand -----------------------------------------------

EXPORTED = """\
#loc = loc(unknown)
module @jit_f attributes {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32} {
  func.func public @main(%arg0: tensor<?x?xf32> loc(unknown), %arg1: tensor<?x64xf32> loc(unknown)) -> (tensor<?x64xf32> {jax.result_info = "result[0]"}, tensor<?x?xf32>) {
    %c = stablehlo.constant dense<1> : tensor<i32> loc(#loc)
    %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x?xf32>) -> tensor<i32> loc(#loc1)
    %1 = stablehlo.get_dimension_size %arg0, dim = 1 : (tensor<?x?xf32>) -> tensor<i32> loc(#loc1)
    %2 = stablehlo.get_dimension_size %arg1, dim = 0 : (tensor<?x64xf32>) -> tensor<i32> loc(#loc1)
    %3 = stablehlo.compare  GE, %0, %c,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%3, %0) {api_version = 2 : i32, error_message = "b >= 1", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
    %4 = stablehlo.compare  EQ, %2, %1,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%4, %2, %1) {api_version = 2 : i32, error_message = "args[1].shape[0] == s", has_side_effect = true} : (tensor<i1>, tensor<i32>, tensor<i32>) -> ()
    %5:2 = call @_wrapped_jax_export_main(%0, %1, %arg0, %arg1) : (tensor<i32>, tensor<i32>, tensor<?x?xf32>, tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x?xf32>)
    return %5#0, %5#1 : tensor<?x64xf32>, tensor<?x?xf32>
  }
  func.func private @_wrapped_jax_export_main(%arg0: tensor<i32> {jax.global_constant = "b"} loc(unknown), %arg1: tensor<i32> {jax.global_constant = "s"}, %arg2: tensor<?x?xf32> loc("x"), %arg3: tensor<?x64xf32> loc("w")) -> (tensor<?x64xf32>, tensor<?x?xf32>) {
    %c = stablehlo.constant dense<64> : tensor<1xi32>
    %c_0 = stablehlo.constant dense<0> : tensor<2xi32>
    %c_1 = stablehlo.constant dense<1> : tensor<2xi32>
    %0 = stablehlo.dot_general %arg2, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<?x?xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    %1 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %2 = stablehlo.concatenate %1, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %3 = stablehlo.dynamic_iota %2, dim = 0 : (tensor<2xi32>) -> tensor<?x64xf32>
    %4 = stablehlo.add %0, %3 : tensor<?x64xf32>
    %5 = stablehlo.tanh %4 : tensor<?x64xf32>
    %6 = stablehlo.multiply %arg1, %arg1 : tensor<i32>
    %7 = stablehlo.reshape %6 : (tensor<i32>) -> tensor<1xi32>
    %8 = stablehlo.concatenate %1, %7, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %9 = stablehlo.dynamic_broadcast_in_dim %5, %2, dims = [0, 1] : (tensor<?x64xf32>, tensor<2xi32>) -> tensor<?x64xf32>
    %10 = stablehlo.dynamic_iota %8, dim = 1 : (tensor<2xi32>) -> tensor<?x?xf32>
    %11 = stablehlo.real_dynamic_slice %10, %c_0, %8, %c_1 : (tensor<?x?xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?x?xf32>
    %cz = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %t = stablehlo.reduce(%arg3 init: %cz) applies stablehlo.add across dimensions = [0, 1] : (tensor<?x64xf32>, tensor<f32>) -> tensor<f32>
    %12 = stablehlo.dynamic_broadcast_in_dim %t, %8, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x?xf32>
    %13 = stablehlo.add %12, %11 : tensor<?x?xf32>
    return %9, %13 : tensor<?x64xf32>, tensor<?x?xf32>
  }
}
#loc1 = loc("dimension_size")
"""


def test_exported_module_ties_question_marks_to_named_dims():
    g = read_stablehlo_text(EXPORTED)
    assert g.dims == ("b", "s")
    # parameters: named by their locations in the wrapped function, live-in and live-out
    assert g.op_names[:2] == ("x", "w")
    assert str(size_of(g, "x")) == "4*b*s"
    assert str(size_of(g, "w")) == "256*s"        # ? tied to s by the shape assertion
    for name in ("x", "w"):
        j = g.buffer_names.index(name)
        assert g.buffer_live_in[j] and g.buffer_live_out[j]
    # dot_general -> b x 64; dynamic_iota from a shape computed out of b; s*s from s * s
    assert str(size_of(g, "%0")) == "256*b"
    assert str(size_of(g, "%4")) == "256*b"
    assert str(size_of(g, "%12")) == "4*b*s^2"    # a data scalar broadcast to b x s*s
    assert str(size_of(g, "%13")) == "4*b*s^2"    # and added to the slice of an iota
    # iotas and what is computed from them alone hold no buffer (XLA folds or fuses
    # them), their shapes are still known: real_dynamic_slice is limit - start
    assert not {"%3", "%10", "%11"} & set(g.buffer_names)
    # shape computations and assertions are folded away: no op for them
    assert not any(o in g.opcodes for o in ("stablehlo.get_dimension_size",
                                            "stablehlo.custom_call", "stablehlo.concatenate",
                                            "stablehlo.constant"))
    # dynamic_broadcast_in_dim of a same-shape value is an op with its own buffer;
    # the returned values are live-out
    for name in ("%9", "%13"):
        assert g.buffer_live_out[g.buffer_names.index(name)]
    assert g.meta["approximations"] == []


# -- memory semantics -------------------------------------------------------------------------

STATIC = """\
module @m {
  func.func public @main(%arg0: tensor<16xf32>, %arg1: tensor<16xf32> {tf.aliasing_output = 0 : i32}) -> (tensor<16xf32>, tensor<4x4xf32>) {
    %c = stablehlo.constant dense<2> : tensor<i32>
    %0 = stablehlo.add %arg0, %arg1 : tensor<16xf32>
    %1 = stablehlo.reshape %0 : (tensor<16xf32>) -> tensor<4x4xf32>
    %2 = stablehlo.multiply %0, %0 : tensor<16xf32>
    %3 = stablehlo.dynamic_update_slice %2, %arg0, %c : (tensor<16xf32>, tensor<16xf32>, tensor<i32>) -> tensor<16xf32>
    %unused = stablehlo.sine %0 : tensor<16xf32>
    return %3, %1 : tensor<16xf32>, tensor<4x4xf32>
  }
}
"""


def test_static_module_memory_semantics():
    g = read_stablehlo_text(STATIC)
    names = list(g.op_names)
    assert "%unused" not in names                       # dead code is removed, as XLA does
    assert g.kind(names.index("%1")) == OpKind.ALIAS   # reshape forwards its operand
    assert "%1" not in g.buffer_names
    j0 = g.buffer_names.index("%0")
    assert g.buffer_live_out[j0]                        # reached the output through reshape
    # dynamic_update_slice writes over %2 (no later reader): no buffer of its own
    assert "%3" not in g.buffer_names
    j2 = g.buffer_names.index("%2")
    assert g.buffer_live_out[j2]
    assert names.index("%3") in set(map(int, g.buffer_users(j2)))
    # parameters: the donated one is freed after its last use, the other lives to the end
    assert g.buffer_live_out[g.buffer_names.index("%arg0")]
    assert not g.buffer_live_out[g.buffer_names.index("%arg1")]
    assert "stablehlo.constant" not in g.opcodes


def test_inplace_needs_no_later_reader():
    text = STATIC.replace("return %3, %1", "%4 = stablehlo.add %2, %3 : tensor<16xf32>\n"
                                           "    return %4, %1")
    g = read_stablehlo_text(text)
    assert "%3" in g.buffer_names          # %2 is read after the update: it gets a copy


WHILE_CASE = """\
module @loops {
  func.func public @main(%arg0: tensor<8x8xf32>, %arg1: tensor<i32>) -> tensor<8x8xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %e = stablehlo.exponential %arg0 : tensor<8x8xf32>
    %0:2 = stablehlo.while(%iterArg = %c, %iterArg_1 = %e) : tensor<i32>, tensor<8x8xf32>
    cond {
      %1 = stablehlo.compare  LT, %iterArg, %arg1,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    } do {
      %1 = stablehlo.add %iterArg, %c_0 : tensor<i32>
      %2 = stablehlo.sine %iterArg_1 : tensor<8x8xf32>
      %3 = stablehlo.cosine %2 : tensor<8x8xf32>
      %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<2x8x8xf32>
      %5 = stablehlo.reduce(%4 init: %c_0) applies stablehlo.add across dimensions = [0] : (tensor<2x8x8xf32>, tensor<i32>) -> tensor<8x8xf32>
      stablehlo.return %1, %5 : tensor<i32>, tensor<8x8xf32>
    }
    %6 = stablehlo.compare  GT, %arg1, %c,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %7 = stablehlo.convert %6 : (tensor<i1>) -> tensor<i32>
    %8 = "stablehlo.case"(%7) ({
      %9 = stablehlo.tanh %0#1 : tensor<8x8xf32>
      stablehlo.return %9 : tensor<8x8xf32>
    }, {
      %9 = stablehlo.tanh %0#1 : tensor<8x8xf32>
      %10 = stablehlo.concatenate %9, %9, dim = 0 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<16x8xf32>
      %11 = stablehlo.slice %10 [0:8, 0:8] : (tensor<16x8xf32>) -> tensor<8x8xf32>
      stablehlo.return %11 : tensor<8x8xf32>
    }) : (tensor<i32>) -> tensor<8x8xf32>
    return %8 : tensor<8x8xf32>
  }
}
"""


def test_while_and_case_regions_are_transients():
    g = read_stablehlo_text(WHILE_CASE)
    w = g.op_index("%0")
    assert g.kind(w) == OpKind.CONTROL_FLOW
    # body: sine (256 B) and cosine (256) live together, then the broadcast (512) with
    # cosine, then reduce's result (returned: held by the loop state): max = 768
    assert g.transient[w].constant_value == 256 + 512
    # the loop state is written in place: %e's buffer carries the result
    assert "%0#1" not in g.buffer_names
    # case: the larger branch (tanh 256 + concatenate 512 live together) counts
    c = g.op_index("%8")
    assert g.transient[c].constant_value == 256 + 512
    assert set(g.op_names) >= {"%e", "%0", "%6", "%7", "%8"}


COLLECTIVES = """\
module @spmd attributes {mhlo.num_partitions = 4 : i32} {
  func.func public @main(%arg0: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<32x16xf32>, tensor<2x16xf32>) {
    %0 = "stablehlo.all_reduce"(%arg0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %1 = "stablehlo.all_gather"(%0) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}> : (tensor<8x16xf32>) -> tensor<32x16xf32>
    %2 = "stablehlo.reduce_scatter"(%0) <{channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, scatter_dimension = 0 : i64}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<8x16xf32>) -> tensor<2x16xf32>
    %3 = "stablehlo.collective_permute"(%0) <{channel_handle = #stablehlo.channel_handle<handle = 4, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0]]> : tensor<4x2xi64>}> : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %4 = stablehlo.custom_call @Sharding(%3) {mhlo.sharding = "{replicated}"} : (tensor<8x16xf32>) -> tensor<8x16xf32>
    return %4, %1, %2 : tensor<8x16xf32>, tensor<32x16xf32>, tensor<2x16xf32>
  }
}
"""


def test_collectives_and_custom_calls():
    g = read_stablehlo_text(COLLECTIVES)
    kinds = {g.op_names[i]: c for i, c in g.collectives.items()}
    assert kinds["%0"].kind == "all-reduce" and kinds["%0"].group_size == 4
    assert kinds["%0"].replica_groups == ((0, 1, 2, 3),)
    assert kinds["%0"].channel_id == 1
    assert kinds["%0"].bytes.constant_value == 8 * 16 * 4
    assert kinds["%1"].kind == "all-gather" and kinds["%1"].bytes.constant_value == 32 * 16 * 4
    assert kinds["%2"].kind == "reduce-scatter"
    assert kinds["%3"].kind == "collective-permute"
    assert kinds["%3"].replica_groups == ((0, 1), (1, 2), (2, 3), (3, 0))
    assert g.kind(g.op_index("%4")) == OpKind.ALIAS    # @Sharding annotates, no copy


SYMBOLIC_COLLECTIVE = """\
module @m {
  func.func public @main(%arg0: tensor<i32> {jax.global_constant = "b"}, %arg1: tensor<?x16xf32>) -> tensor<?x16xf32> {
    %0 = stablehlo.get_dimension_size %arg1, dim = 0 : (tensor<?x16xf32>) -> tensor<i32>
    %1 = stablehlo.compare  EQ, %0, %arg0,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%1, %0, %arg0) {api_version = 2 : i32, error_message = "dim", has_side_effect = true} : (tensor<i1>, tensor<i32>, tensor<i32>) -> ()
    %2 = "stablehlo.all_gather"(%arg1) <{all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<?x16xf32>) -> tensor<?x16xf32>
    return %2 : tensor<?x16xf32>
  }
}
"""


def test_lowered_module_with_dim_arguments():
    # jit(...).lower(...) with symbolic shapes: dims arrive as jax.global_constant arguments
    g = read_stablehlo_text(SYMBOLIC_COLLECTIVE)
    assert g.dims == ("b",)
    assert str(size_of(g, "%arg1")) == "64*b"
    c = g.collectives[g.op_index("%2")]
    assert str(c.bytes) == "128*b"


def test_floordiv_and_max_are_stated_upper_bounds():
    text = """\
module @m {
  func.func public @main(%arg0: tensor<i32> {jax.global_constant = "s"}, %arg1: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
    %c = stablehlo.constant dense<2> : tensor<i32>
    %c1 = stablehlo.constant dense<128> : tensor<i32>
    %0 = stablehlo.get_dimension_size %arg1, dim = 0 : (tensor<?xf32>) -> tensor<i32>
    %e = stablehlo.compare  EQ, %0, %arg0,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%e, %0) {error_message = "s"} : (tensor<i1>, tensor<i32>) -> ()
    %z = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %r = stablehlo.reduce(%arg1 init: %z) applies stablehlo.add across dimensions = [0] : (tensor<?xf32>, tensor<f32>) -> tensor<f32>
    %1 = stablehlo.divide %arg0, %c : tensor<i32>
    %2 = stablehlo.reshape %1 : (tensor<i32>) -> tensor<1xi32>
    %3 = stablehlo.dynamic_broadcast_in_dim %r, %2, dims = [] : (tensor<f32>, tensor<1xi32>) -> tensor<?xf32>
    %4 = stablehlo.maximum %arg0, %c1 : tensor<i32>
    %5 = stablehlo.reshape %4 : (tensor<i32>) -> tensor<1xi32>
    %6 = stablehlo.dynamic_broadcast_in_dim %r, %5, dims = [] : (tensor<f32>, tensor<1xi32>) -> tensor<?xf32>
    return %3, %6 : tensor<?xf32>, tensor<?xf32>
  }
}
"""
    g = read_stablehlo_text(text)
    notes = g.meta["approximations"]
    assert len(notes) == 2 and any("floordiv(s, 2)" in n for n in notes) and \
        any("max(" in n for n in notes)
    for s in (1, 7, 100, 128, 129, 4096):
        assert size_of(g, "%3").evaluate({"s": s}) >= 4 * (s // 2)
        assert size_of(g, "%6").evaluate({"s": s}) >= 4 * max(s, 128)


def test_unknown_op_is_one_located_line(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text(STATIC.replace("stablehlo.multiply", "stablehlo.frobnicate"))
    with pytest.raises(InputError) as e:
        read_graph(str(bad))
    assert str(e.value) == f"{bad}:6:5: unknown op 'stablehlo.frobnicate'"
    proc = subprocess.run([sys.executable, "-c", "from cpsched.cli import main; "
                           "import sys; sys.exit(main())", "info", str(bad)],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"cpsched: error: {bad}:6:5: unknown op 'stablehlo.frobnicate'"]


def test_untied_question_mark_is_an_error_not_a_guess():
    text = """\
module @m {
  func.func public @main(%arg0: tensor<?x4xf32>) -> tensor<?x4xf32> {
    %0 = stablehlo.sine %arg0 : tensor<?x4xf32>
    return %0 : tensor<?x4xf32>
  }
}
"""
    with pytest.raises(InputError, match="not tied to a named dim"):
        read_stablehlo_text(text)


def test_format_detection(tmp_path):
    p = tmp_path / "module.txt"
    p.write_text(STATIC)
    assert sniff_format(str(p)) == "mlir"
    p2 = tmp_path / "x.mlir"
    p2.write_text("#loc = loc(unknown)\n" + STATIC)
    assert read_graph(str(p2)).n_ops == read_graph(str(p)).n_ops


# -- dim expressions --------------------------------------------------------------------------

def test_dim_expressions():
    b, s = DimPoly.atom("b"), DimPoly.atom("s")
    assert dx.floordiv(b * 4 + 2, 2) == b * 2 + 1
    assert dx.floordiv(b * 4 + 3, 2) == b * 2 + 1          # exact: 4b is divisible by 2
    assert dx.floordiv(b, 2).single_atom() is not None      # stays opaque
    assert dx.mod(b * 6, 3) == DimPoly.const(0)
    assert dx.compare("GE", s, DimPoly.const(1)) is True    # dims are >= 1
    assert dx.compare("GT", s * 64, DimPoly.const(4)) is True
    assert dx.compare("LT", b, s) is None
    assert dx.dmax(s * 64, DimPoly.const(4)) == s * 64
    e, exact = dx.to_symexpr(b * s * 8 + 4)
    assert exact and str(e) == "8*b*s + 4"
    e, exact = dx.to_symexpr(b * s * 8 - b)
    assert not exact and str(e) == "8*b*s"


# -- the exported transformer training step ---------------------------------------------------

CONCRETE = ((2, 128), (4, 256), (8, 512))


def _norm(opcode: str) -> str:
    return opcode.replace("real_dynamic_slice", "slice").replace("dynamic_", "")


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
def transformer_sym():
    return read_graph(str(MODELS / "transformer_train.sym.mlir"))


def test_transformer_symbolic_graph(transformer_sym):
    g = transformer_sym
    assert g.dims == ("b", "s")
    assert g.meta["approximations"] == []
    assert g.meta["dim_constraints"] == ["s <= 2048"]
    assert "p['blocks'][0]['wqkv']" in g.op_names and "tokens" in g.op_names
    # attention scores: b x heads x s x s floats
    assert any(str(e) == "16*b*s^2" for e in g.buffer_sizes)


@pytest.mark.parametrize("b,s", CONCRETE)
def test_transformer_symbolic_peak_equals_concrete_export(transformer_sym, b, s):
    """At each (b, s), the symbolic graph's peak in a given order equals the peak of the
    same program exported with concrete shapes, read by the same reader, same order."""
    g = transformer_sym
    c = read_graph(str(MODELS / f"transformer_train.b{b}_s{s}.mlir"))
    assert c.dims == ()
    # same op sequence (dynamic_* ops of the symbolic module are their static forms here)
    assert [_norm(o) for o in g.opcodes] == [_norm(o) for o in c.opcodes]
    sc = at(g, b=b, s=s)
    np.testing.assert_array_equal(g.sizes(sc)[0], c.sizes(at(c))[0])
    for order in (list(range(g.n_ops)), _random_topological(g, 0), _random_topological(g, 1)):
        assert int(simulate(g, order, sc).peak[0]) == int(simulate(c, order).peak[0])


SHARD_MAP = """\
module @jit_step attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["tp"=4]>
  func.func public @main(%arg0: tensor<16x64xf32> {jax.buffer_donor = true, sdy.sharding = #sdy.sharding<@mesh, [{"tp"}, {}]>}) -> (tensor<16x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"tp"}, {}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"tp"}, {}]>] out_shardings=[<@mesh, [{"tp"}, {}]>] manual_axes={"tp"} (%arg1: tensor<4x64xf32>) {
      %1 = stablehlo.sine %arg1 : tensor<4x64xf32>
      %2 = "stablehlo.all_reduce"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
      }) : (tensor<4x64xf32>) -> tensor<4x64xf32>
      sdy.return %2 : tensor<4x64xf32>
    } : (tensor<16x64xf32>) -> tensor<16x64xf32>
    return %0 : tensor<16x64xf32>
  }
}
"""


def test_shard_map_body_is_the_per_device_program():
    g = read_stablehlo_text(SHARD_MAP)
    # the donated, sharded parameter takes its per-device size; the body is inlined
    j = g.buffer_names.index("%arg0")
    assert g.buffer_sizes[j].constant_value == 4 * 64 * 4
    assert not g.buffer_live_out[j]
    c = g.collectives[g.op_index("%2")]
    assert c.kind == "all-reduce" and c.bytes.constant_value == 4 * 64 * 4
    assert g.buffer_live_out[g.buffer_names.index("%2")]


def test_exported_control_flow_module():
    """jax.export output with while, cond (case), sort, cumsum (dynamic_reduce_window
    custom call), pad, dynamic_reshape and a b // 2 + 1 sized gather."""
    g = read_graph(str(MODELS / "control_flow.sym.mlir"))
    assert g.dims == ("b",)
    by_op = {g.opcodes[i].split(".")[-1]: i for i in range(g.n_ops)}
    # sine and multiply in the body; the broadcast constant it multiplies by is folded
    assert str(g.transient[by_op["while"]]) == "32*b"
    assert str(g.transient[by_op["case"]]) == "64*b"       # the concatenate branch
    assert [str(g.buffer_sizes[j]) for j in g.defines(by_op["pad"])] == ["32*b + 96"]
    assert [str(g.buffer_sizes[j]) for j in g.defines(by_op["custom_call"])] == ["32*b"]
    assert g.kind(by_op["dynamic_reshape"]) == OpKind.ALIAS
    # the gather's b // 2 + 1 rows are bounded, and said so
    (note,) = g.meta["approximations"]
    assert "floordiv(b, 2)" in note
    (j,) = g.defines(by_op["dynamic_gather"])
    for b in (1, 2, 3, 10, 1001):
        assert g.buffer_sizes[j].evaluate({"b": b}) >= 32 * (b // 2 + 1)


def test_inplace_update_inside_an_inlined_call():
    text = """\
module @m {
  func.func public @main(%arg0: tensor<16xf32> {jax.buffer_donor = true}) -> tensor<16xf32> {
    %0 = stablehlo.sine %arg0 : tensor<16xf32>
    %1 = call @upd(%0) : (tensor<16xf32>) -> tensor<16xf32>
    return %1 : tensor<16xf32>
  }
  func.func private @upd(%arg0: tensor<16xf32>) -> tensor<16xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<4xf32>
    %0 = stablehlo.dynamic_update_slice %arg0, %cst, %c : (tensor<16xf32>, tensor<4xf32>, tensor<i32>) -> tensor<16xf32>
    return %0 : tensor<16xf32>
  }
}
"""
    g = read_stablehlo_text(text)
    assert "upd/%0" in g.op_names and "upd/%0" not in g.buffer_names
    assert g.buffer_live_out[g.buffer_names.index("%0")]   # the update wrote over sine's buffer
    g2 = read_stablehlo_text(text.replace("return %1 : tensor<16xf32>\n  }\n  func.func private",
                                          "%2 = stablehlo.add %0, %1 : tensor<16xf32>\n"
                                          "    return %2 : tensor<16xf32>\n  }\n"
                                          "  func.func private"))
    assert "upd/%0" in g2.buffer_names                     # sine's value is read later: copy


def test_token_operand_where_a_tensor_is_needed_is_an_input_error():
    # sizing a '?' result reads each operand's shape: a token has none (was a TypeError)
    text = (
        "module @m {\n"
        "  func.func public @main(%arg0: tensor<?x4xf32>, %arg1: !stablehlo.token)"
        " -> tensor<?x4xf32> {\n"
        "    %0 = stablehlo.concatenate %arg0, %arg1, dim = 0 : (tensor<?x4xf32>,"
        " !stablehlo.token) -> tensor<?x4xf32>\n"
        "    return %0 : tensor<?x4xf32>\n"
        "  }\n"
        "}\n"
    )
    with pytest.raises(InputError) as e:
        read_stablehlo_text(text, path="t.mlir")
    assert e.value.line == 3
    assert "needs a tensor operand where it has a token or tuple" in str(e.value)


CONV = """\
module @m {
  func.func public @main(%arg0: tensor<i32> {jax.global_constant = "b"}, %arg1: tensor<i32> {jax.global_constant = "h"}, %x: tensor<?x?x?x3xf32>, %w: tensor<3x3x3x8xf32>) -> (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>) {
    %0 = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x?x?x3xf32>) -> tensor<i32>
    %1 = stablehlo.get_dimension_size %x, dim = 1 : (tensor<?x?x?x3xf32>) -> tensor<i32>
    %2 = stablehlo.get_dimension_size %x, dim = 2 : (tensor<?x?x?x3xf32>) -> tensor<i32>
    %e0 = stablehlo.compare  EQ, %0, %arg0,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%e0, %0) {error_message = "b"} : (tensor<i1>, tensor<i32>) -> ()
    %e1 = stablehlo.compare  EQ, %1, %arg1,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%e1, %1) {error_message = "h"} : (tensor<i1>, tensor<i32>) -> ()
    %e2 = stablehlo.compare  EQ, %2, %arg1,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%e2, %2) {error_message = "w"} : (tensor<i1>, tensor<i32>) -> ()
    %same = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x?x?x3xf32>, tensor<3x3x3x8xf32>) -> tensor<?x?x?x8xf32>
    %strided = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x?x?x3xf32>, tensor<3x3x3x8xf32>) -> tensor<?x?x?x8xf32>
    %dilated = "stablehlo.convolution"(%x, %w) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 2, 2>, padding = dense<[[2, 1], [2, 1]]> : tensor<2x2xi64>, rhs_dilation = array<i64: 1, 1>, window_strides = array<i64: 1, 1>}> : (tensor<?x?x?x3xf32>, tensor<3x3x3x8xf32>) -> tensor<?x?x?x8xf32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %pool = "stablehlo.reduce_window"(%same, %cst) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%a: tensor<f32>, %c: tensor<f32>):
      %m = stablehlo.maximum %a, %c : tensor<f32>
      stablehlo.return %m : tensor<f32>
    }) : (tensor<?x?x?x8xf32>, tensor<f32>) -> tensor<?x?x?x8xf32>
    return %same, %strided, %dilated, %pool : tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>
  }
}
"""


def test_convolution_and_pooling_take_symbolic_dims():
    """Result dims of convolutions (pretty and generic syntax, padding, stride, input
    dilation as in a transposed convolution) and of a pooling reduce_window, from '?' dims."""
    g = read_stablehlo_text(CONV)
    assert g.dims == ("b", "h")
    assert str(size_of(g, "%same")) == "32*b*h^2"                 # 'same' padding
    assert str(size_of(g, "%dilated")) == "128*b*h^2"             # (2h-1)+3-3+1 = 2h
    # stride 2 and a 2x2 pool halve h: floor(h / 2) is no polynomial, so a stated bound
    notes = g.meta["approximations"]
    assert notes and all("floordiv" in n for n in notes)
    for h in (2, 4, 10, 11):
        exact = 32 * (h // 2) ** 2
        assert size_of(g, "%strided").evaluate({"b": 1, "h": h}) >= exact
        assert size_of(g, "%pool").evaluate({"b": 1, "h": h}) >= exact
