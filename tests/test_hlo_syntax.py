"""The HLO reader takes every syntax XLA prints (and its parser accepts): one small module per
syntax class, each checked for what the reader makes of it. Attributes cpsched does not
need are skipped; only text XLA would reject is an error, with its line and column."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from cpsched.core.errors import InputError
from cpsched.readers import display_name, read_graph, sniff_format
from cpsched.readers.hlo.convert import module_graphs
from cpsched.readers.hlo.parser import (parse_backend_config, parse_hlo_text,
                                        parse_replica_groups, read_hlo_module)
from helpers import CORPORA


def module(body: str, header: str = "HloModule t", extra: str = "") -> str:
    """A module whose ENTRY holds ``body`` (instruction lines), after ``extra`` computations."""
    return f"{header}\n\n{extra}\nENTRY main {{\n{body}\n}}\n"


SUM = """
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
"""


def read(text: str):
    """Parse and convert every computation: what `cpsched info` needs."""
    m = parse_hlo_text(text, "t.hlo")
    module_graphs(m)
    return m


def ins(m, name: str, comp: str | None = None):
    c = m.by_name[comp] if comp else m.entry
    return c.index[name]


# -- replica groups ----------------------------------------------------------------------------

def test_mesh_replica_groups_of_a_three_axis_mesh():
    m = read(module(
        "  p = f32[8,16]{1,0} parameter(0)\n"
        "  ROOT g = f32[8,32]{1,0} all-gather(p), channel_id=7, replica_groups=mesh['dp'=1,"
        "'fsdp'=2,'tp'=4] {'fsdp'}, dimensions={1}, use_global_device_ids=true",
        "HloModule t, num_partitions=8"))
    g = ins(m, "g")
    assert g.attrs["dimensions"] == "{1}"
    assert g.attrs["channel_id"] == "7"
    groups = parse_replica_groups(g.attrs["replica_groups"])
    # devices differing only along 'fsdp' (stride 4 in an 1x2x4 row-major mesh)
    assert groups == [[0, 4], [1, 5], [2, 6], [3, 7]]
    graph = read_graph_text(m)
    assert graph.collectives[graph.op_index("g")].group_size == 2


def read_graph_text(m):
    return module_graphs(m)[m.entry.name]


@pytest.mark.parametrize("raw, groups", [
    ("mesh['x'=2,'y'=4] {'y'}", [[0, 1, 2, 3], [4, 5, 6, 7]]),
    ("mesh['x'=2,'y'=4] {'y','x'}", [[0, 4, 1, 5, 2, 6, 3, 7]]),
    ("mesh['x'=2,'y'=4] {'y':(2)2}", [[0, 1], [2, 3], [4, 5], [6, 7]]),
    ("mesh['x'=2,'y'=2], device_ids=(3,2,1,0) {'x'}", [[3, 1], [2, 0]]),
    ("mesh['x'=2,'y'=2], device_ids=([2,2]T(1,0)) {'y'}", [[0, 2], [1, 3]]),
    ("[2,4]<=[8]", [[0, 1, 2, 3], [4, 5, 6, 7]]),
    ("[4,2]<=[2,4]T(1,0)", [[0, 4], [1, 5], [2, 6], [3, 7]]),
    ("{{0,2},{1,3}}", [[0, 2], [1, 3]]),
    ("{}", []),
])
def test_replica_group_forms(raw, groups):
    assert parse_replica_groups(raw) == groups
    m = read(module("  p = f32[4]{0} parameter(0)\n"
                    f"  ROOT r = f32[4]{{0}} all-reduce(p), replica_groups={raw}, to_apply=sum",
                    extra=SUM))
    assert ins(m, "r").attrs["replica_groups"] == raw


def test_maximal_mesh_replica_groups_read_as_text():
    # (XLA's parser refuses a collective whose groups hold one device; the reader keeps the text)
    m = read(module(
        "  p = f32[4]{0} parameter(0)\n"
        "  ROOT r = f32[4]{0} all-reduce(p), replica_groups=maximal_mesh[device_id=0] {}, "
        "to_apply=sum", extra=SUM))
    assert ins(m, "r").attrs["replica_groups"] == "maximal_mesh[device_id=0] {}"
    assert parse_replica_groups(ins(m, "r").attrs["replica_groups"]) == []


# -- shardings, frontend attributes, backend configs -------------------------------------------

@pytest.mark.parametrize("sharding", [
    "{replicated}", "{maximal device=1}", "{manual}", "{devices=[2,1]0,1}",
    "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}",
    "{devices=[2,2,2]<=[8] last_tile_dims={manual, replicated}}",
    "{devices=[2,2]<=[2,2]T(1,0)}", "{{replicated}, {maximal device=0}, {devices=[2]0,1}}",
    "{devices=[2,1]0,1 shard_as 3}", "{replicated shard_like 1}",
    "{devices=[1,2,2]<=[4] last_tile_dims={unreduced}}", "{unknown shard_as 2}",
])
def test_sharding_forms_are_kept_as_text(sharding):
    m = read(module(f"  p = (f32[4]{{0}}, f32[4]{{0}}, f32[2]{{0}}) parameter(0), "
                    f"sharding={sharding}\n"
                    "  ROOT g = f32[4]{0} get-tuple-element(p), index=0"))
    assert ins(m, "p").attrs["sharding"] == sharding
    assert ins(m, "g").tuple_index == 0


def test_frontend_attributes_json_dicts_take_any_character():
    m = read(module(
        "  p = f32[2]{0} parameter(0)\n"
        "  ROOT c = f32[2]{0} call(p), to_apply=ident, is_composite=true, frontend_attributes="
        "{composite.attributes={k = 3 : i64, v = dense<2.0> : tensor<f32>},"
        "composite.name=\"my.op\",composite.version=\"2\", note='its'}",
        "HloModule t, frontend_attributes={xla.sdy.meshes={m = #sdy.mesh<[\"x\"=2]>}, "
        "mode=\"fast\"}",
        "ident {\n  a = f32[2]{0} parameter(0)\n  ROOT b = f32[2]{0} copy(a)\n}\n"))
    fa = ins(m, "c").frontend_attributes()
    assert fa["composite.attributes"] == "{k = 3 : i64, v = dense<2.0> : tensor<f32>}"
    assert fa["composite.name"] == "my.op"
    assert m.attrs["frontend_attributes"].startswith("{xla.sdy.meshes={m = #sdy.mesh<")
    assert ins(m, "c").called() == [("to_apply", "ident")]


def test_backend_config_string_and_raw_dict():
    m = read(module(
        "  p = f32[2]{0} parameter(0)\n"
        "  a = f32[2]{0} negate(p), backend_config=\"{\\\"flag\\\":true,\\\"n\\\":[1,2]}\"\n"
        "  ROOT b = f32[2]{0} abs(a), backend_config={\"op_queue_id\":\"0\",\"wait\":[{\"x\":"
        "\"<{a}>\"}],\"p\":'>'}"))
    assert ins(m, "a").backend_config() == {"flag": True, "n": [1, 2]}
    raw = ins(m, "b").attrs["backend_config"]
    assert raw.startswith('{"op_queue_id"') and raw.endswith("'>'}")
    assert parse_backend_config('{"x": 1}') == {"x": 1}


def test_metadata_with_nested_quotes_and_braces():
    m = read(module(
        "  p = f32[2]{0} parameter(0)\n"
        "  ROOT n = f32[2]{0} negate(p), metadata={op_type=\"neg\" op_name=\"jit(f)/a\\\"b{c}\" "
        "source_file=\"/x/y.py\" source_line=12 stack_frame_id=3}"))
    md = ins(m, "n").metadata()
    assert md["op_name"] == 'jit(f)/a"b{c}'
    assert md["source_line"] == "12"


def test_origin_and_statistics_annotations():
    m = read(module(
        "  p = f32[2]{0} parameter(0), origin={{\"p\"}}\n"
        "  ROOT n = f32[2]{0} negate(p), origin={{\"n\" {1}}}, "
        "statistics={visualizing_index=1,stat-1=33.5,stat-2=0}"))
    assert ins(m, "n").attrs["statistics"] == "{visualizing_index=1,stat-1=33.5,stat-2=0}"
    assert ins(m, "n").attrs["origin"] == '{{"n" {1}}}'


# -- shapes and layouts --------------------------------------------------------------------------

@pytest.mark.parametrize("shape, nbytes, bits, space", [
    ("f32[8,128]{1,0:T(8,128)(2,1)S(5)}", 4096, None, 5),
    ("s4[64]{0:T(64)E(4)}", 32, 4, 0),
    ("u4[3]{0:E(4)}", 2, 4, 0),
    ("bf16[4,4]{0,1:T(2,2)L(2)#(u16)*(u32)S(1)}", 32, None, 1),
    ("f32[4]{0:D(D)SC(0:1)M(8)}", 16, None, 0),
    ("f8e4m3fn[10]{0}", 10, None, 0),
    ("f8e5m2[10]", 10, None, 0),
    ("c64[2]{0}", 16, None, 0),
    ("pred[3]{0}", 3, None, 0),
    ("f32[<=10,3]{1,0}", 120, None, 0),
    ("f32[?,3]", 12, None, 0),
    ("f32[4] {0}", 16, None, 0),
    ("f32[ 2, 3 ] { 1, 0 }", 24, None, 0),
])
def test_array_shapes_sizes_and_layouts(shape, nbytes, bits, space):
    m = read(module(f"  ROOT p = {shape} parameter(0)"))
    s = ins(m, "p").shape
    assert s.byte_size() == nbytes
    assert (s.element_bits, s.memory_space) == (bits, space)


def test_token_tuple_and_buffer_shapes():
    m = read(module(
        "  t = token[] after-all()\n"
        "  p = (f32[2]{0}, /*index=1*/s32[], (u4[2], c64[])) parameter(0)\n"
        "  b = b(f32[16]{0}) custom-call(t), custom_call_target=\"MakeBuffer\"\n"
        "  ROOT r = (b(f32[16]), token[]) tuple(b, t)"))
    p = ins(m, "p").shape
    assert [str(e) for e in p.elements[:2]] == ["f32[2]{0}", "s32[]"]
    assert ins(m, "b").shape.is_buffer and ins(m, "b").shape.byte_size() == 64
    assert str(ins(m, "r").shape.elements[0]) == "b(f32[16])"
    assert ins(m, "t").shape.byte_size() == 0


def test_signature_shape_then_body_brace():
    # '{' right after the result shape opens the body: a layout needs an integer or ':'
    m = read("HloModule t\n\nENTRY main (a: f32[2]) -> f32[2]{\n  a = f32[2] parameter(0)\n"
             "  ROOT n = f32[2] negate(a)\n}\n")
    assert m.entry.root.name == "n"


# -- module header ---------------------------------------------------------------------------------

def test_module_header_attributes():
    m = read(module(
        "  p0 = f32[2]{0} parameter(0)\n  p1 = f32[2]{0} parameter(1)\n"
        "  ROOT a = f32[2]{0} add(p0, p1)",
        "HloModule t, is_scheduled=true, entry_computation_layout={(f32[2]{0}, f32[2]{0})->"
        "f32[2]{0}}, input_output_alias={ {}: (0, {}, may-alias) }, buffer_donor={ (1, {}) }, "
        "num_partitions=4, replica_count=2, allow_spmd_sharding_propagation_to_output={true}, "
        "frontend_attributes={fingerprint_before_lhs=\"abc\"}"))
    assert m.is_scheduled and m.num_partitions == 4 and m.replica_count == 2
    assert m.input_output_alias() == [((), 0, (), "may-alias")]
    assert m.buffer_donors() == [(1, ())]
    assert m.attrs["allow_spmd_sharding_propagation_to_output"] == "{true}"


def test_old_module_name_with_colon_and_no_entry():
    m = read("HloModule old:\n\nfirst {\n  ROOT c = f32[] constant(1)\n}\n\nlast {\n"
             "  ROOT d = f32[] constant(2)\n}\n")
    assert m.name == "old" and m.entry.name == "last"


# -- instructions -----------------------------------------------------------------------------------

def test_comments_root_anywhere_and_control_predecessors():
    m = read(module(
        "  /*index=0*/ p = f32[2]{0} parameter(0) // a comment\n"
        "  ROOT a = f32[2]{0} add(p, /*index=1*/ p)\n"
        "  b = f32[2]{0} negate(p), control-predecessors={a}"))
    assert m.entry.root.name == "a" and m.entry.root_explicit
    assert ins(m, "b").control_predecessors == ["a"]


def test_constants_large_and_elided_literals():
    m = read(module(
        "  c0 = f32[2,3]{1,0} constant({ { 1, 2.5, -inf }, { nan, 1e-3, 0 } })\n"
        "  c1 = s32[4096]{0} constant({...})\n"
        "  c2 = (f32[], s32[]) constant((1, 2))\n"
        "  c3 = pred[] constant(true)\n"
        "  ROOT t = (f32[2,3]{1,0}, s32[4096]{0}) tuple(c0, c1)"))
    assert ins(m, "c1").literal == "{...}"
    assert ins(m, "c0").literal.startswith("{ { 1, 2.5")


def test_control_flow_computation_attributes():
    cond = "cond {\n  s = (s32[], f32[2]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n" \
           "  n = s32[] constant(4)\n  ROOT lt = pred[] compare(i, n), direction=LT, type=TOTALORDER\n}\n"
    body = "body {\n  s = (s32[], f32[2]) parameter(0)\n  ROOT t = (s32[], f32[2]) copy(s)\n}\n"
    br = "b0 {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] negate(x)\n}\n" \
         "b1 {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] abs(x)\n}\n"
    m = read(module(
        "  p = (s32[], f32[2]) parameter(0)\n  k = s32[] parameter(1)\n  b = pred[] parameter(2)\n"
        "  w = (s32[], f32[2]) while(p), condition=cond, body=body, backend_config="
        "{\"known_trip_count\":{\"n\":\"4\"}}\n"
        "  x = f32[2] get-tuple-element(w), index=1\n"
        "  c = f32[2] conditional(k, x, x), branch_computations={b0, b1}\n"
        "  d = f32[2] conditional(b, x, x), true_computation=b0, false_computation=b1\n"
        "  ROOT r = f32[] reduce(d, f32[] constant(0)), dimensions={0}, to_apply=sum",
        extra=cond + body + br + SUM))
    assert ins(m, "w").called() == [("condition", "cond"), ("body", "body")]
    assert ins(m, "c").called() == [("branch_computations", "b0"), ("branch_computations", "b1")]
    assert ins(m, "d").called() == [("true_computation", "b0"), ("false_computation", "b1")]


def test_async_wrapped_computations_and_context_shapes():
    wrapped = ("wrapped {\n  a = f32[4]{0} parameter(0)\n  ROOT g = f32[8]{0} all-gather(a), "
               "replica_groups={{0,1}}, dimensions={0}\n}, execution_thread=\"comm\"\n")
    fused = "fused {\n  a = f32[4]{0} parameter(0)\n  ROOT n = f32[4]{0} negate(a)\n}\n"
    m = read(module(
        "  p = f32[4]{0} parameter(0)\n"
        "  s = ((f32[4]{0}), f32[8]{0}, s32[]) async-start(p), calls=wrapped, "
        "async_execution_thread=\"comm\"\n"
        "  u = ((f32[4]{0}), f32[8]{0}, s32[]) async-update(s)\n"
        "  d = f32[8]{0} async-done(u)\n"
        "  fs = ((f32[4]{0}), f32[4]{0}, u32[]) fusion-start(p), kind=kLoop, calls=fused\n"
        "  fd = f32[4]{0} fusion-done(fs)\n"
        "  ROOT t = (f32[8]{0}, f32[4]{0}) tuple(d, fd)",
        extra=wrapped + fused))
    assert m.by_name["wrapped"].execution_thread == "comm"
    assert ins(m, "fs").opcode == "async-start" and ins(m, "fs").wrapped_opcode == "fusion"
    assert ins(m, "s").shape.elements[0].is_tuple


def test_custom_call_attributes():
    m = read(module(
        "  p = f32[2]{0} parameter(0)\n"
        "  ROOT c = f32[2]{0} custom-call(p), custom_call_target=\"my_kernel\", "
        "api_version=API_VERSION_TYPED_FFI, operand_layout_constraints={f32[2]{0}}, "
        "output_to_operand_aliasing={{}: (0, {})}, "
        "custom_call_has_side_effect=true, literal=s32[2]{0} {1, 2}, "
        "backend_config={\"k\":1}"))
    c = ins(m, "c")
    assert c.attrs["custom_call_target"] == '"my_kernel"'
    assert c.attrs["literal"] == "s32[2]{0} {1, 2}"
    assert c.attrs["output_to_operand_aliasing"] == "{{}: (0, {})}"


def test_convolution_dot_and_window_attributes():
    m = read(module(
        "  x = f32[1,8,8,3]{3,2,1,0} parameter(0)\n  k = f32[3,3,3,4]{3,2,1,0} parameter(1)\n"
        "  c = f32[1,4,4,4]{3,2,1,0} convolution(x, k), window={size=3x3 stride=2x2 "
        "pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f, "
        "feature_group_count=1, batch_group_count=1, operand_precision={HIGH,DEFAULT}\n"
        "  a = f32[4,8]{1,0} parameter(2)\n  b = f32[8,2]{1,0} parameter(3)\n"
        "  d = f32[4,2]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
        "lhs_batch_dims={}, rhs_batch_dims={}, operand_precision={DEFAULT,HIGHEST}\n"
        "  e = f32[4,2]{1,0} exponential(d), result_accuracy={tolerance={atol=0,rtol=0,ulps=1}}\n"
        "  s = f32[4,2]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
        "algorithm=dot_bf16_bf16_f32\n"
        "  ROOT t = (f32[1,4,4,4]{3,2,1,0}, f32[4,2]{1,0}, f32[4,2]{1,0}) tuple(c, e, s)"))
    c = ins(m, "c")
    assert c.attrs["dim_labels"] == "b01f_01io->b01f"
    assert c.attrs["window"].startswith("{size=3x3")
    assert ins(m, "s").attrs["algorithm"] == "dot_bf16_bf16_f32"


def test_dot_sparsity_config():
    # newer than jax 0.10.2's XLA (its parser rejects the attribute on dot)
    m = read(module(
        "  a = f32[4,8]{1,0} parameter(0)\n  b = f32[8,2]{1,0} parameter(1)\n"
        "  ROOT s = f32[4,2]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
        "sparsity_config={rhs={sparsity=2x4 dimension=0 stride=1}}"))
    assert ins(m, "s").attrs["sparsity_config"] == "{rhs={sparsity=2x4 dimension=0 stride=1}}"


def test_data_movement_and_misc_attributes():
    m = read(module(
        "  p = f32[16]{0} parameter(0)\n  i = s32[] parameter(1)\n"
        "  sl = f32[4]{0} slice(p), slice={[0:8:2]}\n"
        "  pd = f32[19]{0} pad(p, f32[] constant(0)), padding=1_2_0\n"
        "  r = f32[16]{0} rng(f32[] constant(0), f32[] constant(1)), distribution=rng_uniform\n"
        "  cmp = pred[16]{0} compare(p, r), direction=LT, type=TOTALORDER\n"
        "  so = f32[16]{0} sort(p), dimensions={0}, is_stable=true, to_apply=lt\n"
        "  tk = (f32[2]{0}, s32[2]{0}) topk(p), k=2, largest=true\n"
        "  cp = f32[16]{0} collective-permute(p), channel_id=3, source_target_pairs={{0,1},{1,0}}\n"
        "  a2a = f32[16]{0} all-to-all(p), dimensions={0}, replica_groups={{0,1}}, "
        "constrain_layout=false\n"
        "  g = f32[4,1]{1,0} gather(p, s32[4,1]{1,0} constant({...})), offset_dims={1}, "
        "collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}, "
        "indices_are_sorted=true\n"
        "  st = f32[16]{0} scatter(p, s32[2,1]{1,0} constant({ {1}, {3} }), f32[2]{0} constant({1, 2})), "
        "update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
        "index_vector_dim=1, indices_are_sorted=true, unique_indices=true, to_apply=sum\n"
        "  rp = f32[16]{0} reduce-precision(p), exponent_bits=5, mantissa_bits=10\n"
        "  ifd = ((f32[2]{0}), token[]) infeed(token[] after-all()), infeed_config=\"cfg\"\n"
        "  out = token[] outfeed(p, token[] after-all()), outfeed_shape=f32[16]{0}\n"
        "  snd = (f32[16]{0}, u32[], token[]) send(p, token[] after-all()), channel_id=5, "
        "is_host_transfer=true\n"
        "  bc = f32[16,2]{1,0} broadcast(p), dimensions={0}\n"
        "  sc = f32[] broadcast(f32[] constant(1)), dimensions={}\n"
        "  ROOT t = (f32[4]{0}, f32[19]{0}) tuple(sl, pd)",
        extra=SUM + "lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
              "  ROOT c = pred[] compare(a, b), direction=LT\n}\n"))
    assert ins(m, "sl").attrs["slice"] == "{[0:8:2]}"
    assert ins(m, "pd").attrs["padding"] == "1_2_0"
    assert ins(m, "tk").attrs["k"] == "2"
    assert ins(m, "sc").attrs["dimensions"] == "{}"


def test_unknown_attributes_with_balanced_values_are_skipped():
    m = read(module(
        "  p = f32[2]{0} parameter(0)\n"
        "  ROOT n = f32[2]{0} negate(p), future_attr={a=[1,(2)], b=\"}\"}, other=x->y, "
        "third=[3]<=[3], fourth=(1, {2}), fifth='q', custom_call_schedule=SCHEDULE_LATEST, "
        "split_dimension=0, precision_config={HIGH}"))
    attrs = ins(m, "n").attrs
    assert attrs["future_attr"] == '{a=[1,(2)], b="}"}'
    assert attrs["other"] == "x->y" and attrs["fifth"] == "'q'"
    assert attrs["precision_config"] == "{HIGH}"


def test_unknown_opcode_is_read_with_a_note():
    m = read(module("  p = f32[2]{0} parameter(0)\n  ROOT n = f32[2]{0} brand-new-op(p)"))
    assert ins(m, "n").opcode == "brand-new-op"
    assert any("brand-new-op" in n for n in m.notes)


# -- syntax XLA's parser takes though its printer never writes it ------------------------------------

def test_nested_instructions_as_operands():
    m = read(module(
        "  p = f32[2]{0} parameter(0)\n"
        "  ROOT a = f32[2]{0} add(p, f32[2]{0} negate(f32[2]{0} parameter(1)))"))
    names = [i.name for i in m.entry.instructions]
    assert len(names) == 4 and names[-1] == "a"
    neg = m.entry.index[names[2]]
    assert neg.opcode == "negate" and m.entry.index[neg.operands[0]].parameter_number == 1
    assert ins(m, "a").operands == ["p", neg.name]


def test_compact_tuple_element_operands():
    # ``t#1#0`` operands: today's XLA parser (newer than jax 0.10.2's) makes them GTEs
    m = read(module(
        "  p = (f32[2]{0}, (s32[], f32[2]{0})) parameter(0)\n"
        "  a = f32[2]{0} negate(p#0)\n"
        "  ROOT b = f32[2]{0} multiply(a, p#1#1)"))
    names = [i.name for i in m.entry.instructions]
    assert names.index("p#0") < names.index("a") and names.index("p#1#1") < names.index("b")
    assert ins(m, "p#1#1").operands == ["p#1"] and ins(m, "p#1").operands == ["p"]
    assert str(ins(m, "p#1#1").shape) == "f32[2]{0}"


def test_computation_written_in_place():
    m = read(module(
        "  p = f32[2]{0} parameter(0)\n"
        "  ROOT c = f32[2]{0} call(p), to_apply={\n"
        "    x = f32[2]{0} parameter(0)\n    ROOT y = f32[2]{0} negate(x)\n  }"))
    (role, callee), = ins(m, "c").called()
    assert role == "to_apply" and m.by_name[callee].inline
    assert [i.name for i in m.by_name[callee].instructions] == ["x", "y"]


# -- input files ------------------------------------------------------------------------------------

def test_gzip_compressed_input(tmp_path):
    text = module("  p = f32[4]{0} parameter(0)\n  ROOT n = f32[4]{0} negate(p)")
    path = tmp_path / "prog.hlo.gz"
    path.write_bytes(gzip.compress(text.encode()))
    assert sniff_format(str(path)) == "hlo"
    assert read_hlo_module(str(path)).entry.root.name == "n"
    assert read_graph(str(path)).n_ops == 2
    assert display_name(str(path)) == "prog"


def test_truncated_gzip_is_one_line_error(tmp_path):
    path = tmp_path / "cut.hlo.gz"
    path.write_bytes(gzip.compress(b"HloModule m\n" * 100)[:30])
    with pytest.raises(InputError) as e:
        read_hlo_module(str(path))
    assert str(e.value).startswith(f"{path}: cannot read:")


# -- text XLA rejects: one line, with line and column -----------------------------------------------

@pytest.mark.parametrize("body, where, reason", [
    ("  ROOT p = f32[2]{0} parameter(0), metadata={op_name=\"a\" @}", "11:58",
     "unexpected character '@'"),
    ("  ROOT p = f32[2]{0} parameter(0), metadata={op_name='open}", "11:54",
     "unterminated string"),
    ("  ROOT p = f32[2]{0} parameter(0), backend_config={\"a\": \"x}", "11:51",
     "unbalanced '{' or unterminated string in a JSON dict"),
    ("  p = f32[2]{0} parameter(0)\n  ROOT r = f32[2]{0} all-reduce(p), "
     "replica_groups=mesh['a'=2] 'a', to_apply=sum", "12:64",
     "expected the mesh axes '{...}' after the mesh, found \"'a'\""),
    ("  p = f32[2]{0} parameter(0)\n  ROOT c = f32[2]{0} custom-call(p), "
     "custom_call_target=\"x\", literal=f32[] }", "12:76", "expected a literal, found '}'"),
    ("  p = (f32[2]{0}) parameter(0)\n  ROOT g = f32[2]{0} copy(p#x)", "12:29",
     "expected a tuple index after '#', found 'x'"),
    ("  ROOT p = b(f32[2], s32[]) parameter(0)", "11:20",
     "expected ')' at the end of a buffer shape b(...), found ','"),
])
def test_rejected_text_reports_line_and_column(body, where, reason):
    with pytest.raises(InputError) as e:
        parse_hlo_text(module(body, extra=SUM), "t.hlo")
    assert str(e.value) == f"t.hlo:{where}: {reason}"


def test_bad_character_inside_a_json_dict_is_fine_but_not_after_it():
    ok = module("  ROOT p = f32[2]{0} parameter(0), frontend_attributes={k={@}}")
    assert parse_hlo_text(ok).entry.root.attrs["frontend_attributes"] == "{k={@}}"
    with pytest.raises(InputError) as e:
        parse_hlo_text(module("  ROOT p = f32[2]{0} parameter(0), frontend_attributes={k={@}} @"),
                       "t.hlo")
    assert str(e.value) == "t.hlo:5:64: unexpected character '@'"


def test_writing_back_in_place_computations_and_nested_instructions():
    from cpsched.writers.hlo import write_hlo
    m = read(module(
        "  p = f32[2]{0} parameter(0)\n  q = f32[2]{0} negate(p)\n"
        "  ROOT c = f32[2]{0} call(q), to_apply={\n"
        "    x = f32[2]{0} parameter(0)\n    ROOT y = f32[2]{0} negate(x)\n  }"))
    out = write_hlo(m, {"main": ["p", "q", "c"]})
    assert out.count("ROOT y = f32[2]{0} negate(x)") == 1     # the computation stays in place
    again = read(out)
    assert again.is_scheduled and [c.inline for c in again.computations] == [False, True]
    nested = read(module("  p = f32[2]{0} parameter(0)\n"
                         "  ROOT a = f32[2]{0} add(p, f32[2]{0} negate(p))"))
    # a nested instruction has no line of its own: it stays inside its user, wherever the
    # order puts it, and reads back just before that user
    names = [i.name for i in nested.entry.instructions]
    assert nested.entry.instructions[1].synthetic
    for order in (names, [names[1], names[0], names[2]]):
        out = write_hlo(nested, {"main": order})
        assert "add(p, f32[2]{0} negate(p))" in out
        assert [i.name for i in read(out).entry.instructions] == names


# -- the captured corpora (models/hlo/corpus: the newest jax; corpus-jax0.10) ---------------------

CORPUS_MODULES = [p for folder in CORPORA.values() for p in sorted(folder.glob("*.hlo.gz"))]


@pytest.mark.parametrize("path", CORPUS_MODULES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_corpus_module_reads_gzipped(path):
    m = read_hlo_module(str(path))
    graphs = module_graphs(m)
    assert m.entry.name in graphs and m.is_scheduled
    assert not [n for n in m.notes if "opcode" in n]     # XLA:CPU prints no opcode we lack


@pytest.mark.parametrize("groups, reason", [
    ("[24]<=[8]", "iota replica groups [24] must be 2-D and hold the 8 devices of [8]"),
    ("[3,2]<=[8]", "iota replica groups [3, 2] must be 2-D and hold the 8 devices of [8]"),
    ("[2,4]<=[2,4]T(0,0)", "T(0, 0) is not a permutation of the 2 iota dims"),
    ("mesh['x'=2,'y'=4] {'z'}", "axis 'z' is not an axis of the mesh"),
    ("mesh['x'=2,'y'=4] {'y':(3)2}", "sub-axis 'y':(3)2 does not divide its axis"),
    ("mesh['x'=2,'y'=4] {'x','x'}", "the axes of the groups overlap"),
    ("mesh['x'=2,'y'=2], device_ids=(0,1,2) {'x'}",
     "mesh device_ids list 3 devices, the mesh has 4"),
])
def test_replica_groups_xla_rejects(groups, reason):
    text = module("  p = f32[4]{0} parameter(0)\n"
                  f"  ROOT r = f32[4]{{0}} all-reduce(p), replica_groups={groups}, to_apply=sum",
                  extra=SUM)
    with pytest.raises(InputError) as e:
        parse_hlo_text(text, "t.hlo")
    assert str(e.value) == f"t.hlo:12:52: replica_groups of 'r': {reason}"


DAMAGE = ["'", '"', "{", "}", "(", ")", "[", "<", "#", "~", "@", "/*", "//", "->", "<=", "b(",
          "mesh[", "#1", "to_apply={", "backend_config={", "f32[2] negate(", "ROOT ", "\n"]


def test_damaged_text_is_an_input_error_never_a_crash():
    import random
    rng = random.Random(7)
    texts = [
        module("  p = (f32[2]{0}, s32[]) parameter(0), sharding={{replicated}, {maximal device=0}}\n"
               "  a = f32[2]{0:T(2)S(1)} get-tuple-element(p), index=0, metadata={op_name=\"x{\"}\n"
               "  r = f32[2]{0} all-reduce(a), replica_groups=mesh['x'=2,'y'=2] {'y'}, "
               "to_apply=sum, frontend_attributes={k={v = dense<1> : tensor<i32>}}\n"
               "  ROOT c = f32[2]{0} call(r), to_apply={\n    q = f32[2]{0} parameter(0)\n"
               "    ROOT n = f32[2]{0} negate(q)\n  }, backend_config=\"{\\\"a\\\":1}\"",
               "HloModule t, num_partitions=4", SUM),
    ]
    for _ in range(400):
        t = rng.choice(texts)
        k = rng.randrange(len(t))
        cut = rng.random()
        damaged = t[:k] if cut < 0.2 else t[:k] + rng.choice(DAMAGE) + t[k + (cut > 0.7):]
        try:
            read(damaged)
        except InputError:
            pass
