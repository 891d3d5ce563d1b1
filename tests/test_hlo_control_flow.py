"""The HLO reader's control flow and aliasing on tiny modules, against hand-computed figures
(costs of while loops, conditionals and calls; which values share a buffer; transients of
called computations; the module lower bound)."""

from __future__ import annotations

import pytest

from cpsched.readers.hlo.convert import read_hlo_text

# the scalar reducer the collectives and reduces below call
ADD = """
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
"""

WHILE = """HloModule w

cond {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  y = f32[8] exponential(x)
  y2 = f32[8] negate(y)
  ROOT t = (s32[], f32[8]) tuple(i2, y2)
}

ENTRY e {
  a = f32[8] parameter(0)
  z = s32[] constant(0)
  t0 = (s32[], f32[8]) tuple(z, a)
  w = (s32[], f32[8]) while(t0), condition=cond, body=body, backend_config=TRIP
  ROOT r = f32[8] get-tuple-element(w), index=1
}
"""


@pytest.mark.parametrize(
    "trip,times",
    [('{"known_trip_count":{"n":"4"}}', 4), ('{"known_trip_count":{"n":"x"}}', 1), ("{}", 1)],
)
def test_while_cost_is_the_trip_count_times_condition_and_body(trip, times):
    """One iteration: the condition's compare (1 element; 4 + 4 B in, 1 B out) and the
    body's add (1; 12 B), exponential and negate (8 each; 64 B each): 18 flops, 149 B. A
    known trip count multiplies them; an unreadable or missing one counts once."""
    g = read_hlo_text(WHILE.replace("TRIP", trip))
    w = g.op_index("w")
    assert g.flops[w].constant_value == 18 * times
    assert g.bytes_accessed[w].constant_value == 149 * times


INPLACE = (
    """HloModule inplace
"""
    + ADD
    + """
ENTRY e {
  p = f32[8] parameter(0)
  idx = s32[2,1] parameter(1)
  u = f32[2] parameter(2)
  q = f32[8] negate(p)
  s = f32[8] scatter(q, idx, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  q2 = f32[8] negate(s)
  q3 = f32[4] negate(u)
  ars = f32[8] all-reduce-start(q2), replica_groups={}, to_apply=add
  ard = f32[8] all-reduce-done(ars)
  ars2 = (f32[8], f32[4]) all-reduce-start(q2, q3), replica_groups={}, to_apply=add
  ard2 = (f32[8], f32[4]) all-reduce-done(ars2)
  ROOT r = (f32[8], (f32[8], f32[4])) tuple(ard, ard2)
}
"""
)


def users(g, name):
    return sorted(g.op_names[u] for u in g.buffer_users(g.buffer_names.index(name)))


def test_scatter_and_all_reduce_start_write_over_their_operands():
    """A scatter writes over its operand (``q``); an all-reduce-start over its one operand
    (``q2``), or over each of two operands at the same tuple index (``q3``; ``q2``, already
    written over by the first, keeps a copy ``ars2{0}``, and its other reader is ordered
    before the writer)."""
    g = read_hlo_text(INPLACE)
    assert sorted(g.buffer_names) == sorted(
        ["p", "idx", "u", "q", "q2", "q3", "ars2{}", "ars2{0}", "r{}"]
    )
    assert users(g, "q") == ["q2", "s"]
    assert users(g, "q2") == ["ard", "ars", "ars2", "r"]
    assert users(g, "q3") == ["ard2", "ars2", "r"]
    assert g.meta["alias_order_edges"] == [("ars2", "ars")]


COLLECTIVES = (
    """HloModule coll
"""
    + ADD
    + """
ENTRY e {
  p = f32[8] parameter(0)
  idx = s32[2,1] parameter(1)
  u = f32[2] parameter(2)
  q = f32[8] negate(p)
  q1 = f32[8] abs(p)
  v = f32[2] negate(u)
  sc = (f32[8], f32[8]) scatter(q, q1, idx, u, v), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  a = f32[8] get-tuple-element(sc), index=0
  b = f32[8] get-tuple-element(sc), index=1
  o = f32[8] exponential(a)
  i0 = s32[] constant(0)
  cp = f32[8] collective-permute(a, o, i0, i0), source_target_pairs={{0,1}}
  o2 = f32[8] exponential(b)
  cps = (f32[8], f32[8], u32[], u32[]) collective-permute-start(b, o2, i0, i0), source_target_pairs={{0,1}}
  cpd = f32[8] collective-permute-done(cps)
  o3 = f32[8] sine(cp)
  ra = f32[8] ragged-all-to-all(cp, o3, i0, i0, i0, i0), replica_groups={{0,1}}
  o4 = f32[8] cosine(ra)
  n = s32[] parameter(3)
  sds = f32[8] set-dimension-size(o4, n), dimensions={0}
  ROOT r = (f32[8], f32[8]) tuple(sds, cpd)
}
"""
)


def test_variadic_scatter_and_in_place_collectives():
    """A scatter of two operands writes over both (``q`` at index 0, ``q1`` at 1); an
    in-place collective-permute (four operands) writes over its output operand ``o``, its
    start form over ``o2`` at tuple index 1; a ragged all-to-all over ``o3``; a
    set-dimension-size over its operand ``o4``."""
    g = read_hlo_text(COLLECTIVES)
    own = {x for x in g.buffer_names if not x.startswith(("p", "idx", "u", "r{", "n"))}
    assert own == {"q", "q1", "v", "sc{}", "o", "o2", "cps{}", "cps{2}", "cps{3}", "o3", "o4"}
    assert users(g, "q") == ["a", "cp", "o", "sc"]
    assert users(g, "q1") == ["b", "cpd", "cps", "o2", "sc"]
    assert users(g, "o") == ["cp", "o3", "ra"]
    assert users(g, "o2") == ["cpd", "cps", "r"]
    assert users(g, "o3") == ["o4", "ra"]
    assert users(g, "o4") == ["r", "sds"]


COSTS = """HloModule costs

sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

fused {
  fa = f32[4,8] parameter(0)
  ROOT fn = f32[4,8] negate(fa)
}

callee {
  ca = f32[4,8] parameter(0)
  ROOT ce = f32[4,8] exponential(ca)
}

br0 {
  b0 = f32[4,8] parameter(0)
  ROOT b0n = f32[4,8] negate(b0)
}

br1 {
  b1 = f32[4,8] parameter(0)
  b1n = f32[4,8] negate(b1)
  ROOT b1m = f32[4,8] multiply(b1n, b1)
}

ENTRY e {
  p = f32[4,8] parameter(0)
  w = f32[8,2] parameter(1)
  k = s32[] parameter(2)
  d = f32[4,2] dot(p, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  f = f32[4,8] fusion(p), kind=kLoop, calls=fused
  c = f32[4,8] call(f), to_apply=callee
  cd = f32[4,8] conditional(k, c, c), branch_computations={br0, br1}
  z = f32[] constant(0)
  r = f32[4] reduce(cd, z), dimensions={1}, to_apply=sum
  rw = f32[4,4] reduce-window(cd, z), window={size=1x2 stride=1x2}, to_apply=sum
  ROOT t = (f32[4,2], f32[4], f32[4,4]) tuple(d, r, rw)
}
"""


def test_costs_of_calls_conditionals_fusions_and_reductions():
    """(flops, bytes accessed) by hand, f32 (4 B): the dot 2 * 8 outputs * 8 contracted,
    reading 128 + 64 B and writing 32; the fusion its body's 32 negations, 128 B in and
    out; the call its callee's (32 exponentials, 128 B in and out); the conditional the
    larger branch (negate then multiply: 64 flops; 128 + 128 + 256 + 128 B); the reduce
    one flop per input element (32 + the 1 init) and 128 + 4 + 16 B; the reduce-window
    16 outputs * a 2-wide window and 128 + 4 + 64 B."""
    g = read_hlo_text(COSTS)
    got = {
        x: (g.flops[g.op_index(x)].constant_value, g.bytes_accessed[g.op_index(x)].constant_value)
        for x in ("d", "f", "c", "cd", "r", "rw", "p", "z", "t")
    }
    assert got == {
        "d": (128, 224),
        "f": (32, 256),
        "c": (32, 256),
        "cd": (64, 640),
        "r": (33, 148),
        "rw": (32, 196),
        "p": (0, 0),
        "z": (0, 0),
        "t": (0, 0),
    }


CALL_BOUND = """HloModule cb

callee {
  a = f32[8] parameter(0)
  x1 = f32[8] negate(a)
  x2 = f32[8] exponential(a)
  s1 = f32[2] slice(x1), slice={[0:2]}
  s2 = f32[2] slice(x2), slice={[0:2]}
  ROOT t = f32[2] add(s1, s2)
}

ENTRY e {
  p = f32[8] parameter(0)
  c = f32[2] call(p), to_apply=callee
  ROOT o = f32[2] negate(c)
}
"""


def test_module_lower_bound_lets_the_callee_take_its_least_peak():
    """The callee in its text order holds ``a``, ``x1``, ``x2`` and ``s1`` at once (104 B),
    64 B beyond what the caller counts at the call (``a`` and the 8 B result): the call's
    transient. Any order needs ``a`` with ``x1`` and ``s1`` (or ``x2`` and ``s2``): 72 B,
    32 B beyond, so no schedule of the module goes below ``p + c + 32`` = 72 B, where the
    given orders peak at 104 B."""
    from cpsched.analysis.memory import simulate
    from cpsched.strategies.module import module_lower_bound
    from cpsched.readers.hlo.parser import parse_hlo_text

    m = parse_hlo_text(CALL_BOUND)
    g = read_hlo_text(CALL_BOUND)
    assert g.transient[g.op_index("c")].constant_value == 64
    assert int(simulate(g, range(g.n_ops)).peak[0]) == 104
    assert int(module_lower_bound(m)[0]) == 72


DONATION = """HloModule don, input_output_alias={ {0}: (0, {1}, may-alias), {1}: (2, {}, may-alias) }, buffer_donor={ (1, {}) }

ENTRY e {
  p = (f32[8], f32[8]) parameter(0)
  q = f32[8] parameter(1)
  r = f32[8] parameter(2)
  s = f32[8] parameter(3)
  a = f32[8] get-tuple-element(p), index=0
  b = f32[8] get-tuple-element(p), index=1
  u = f32[8] add(a, b)
  v = f32[8] add(q, s)
  w = f32[8] multiply(r, v)
  ROOT t = (f32[8], f32[8], f32[8]) tuple(u, w, v)
}
"""


def test_donated_parameters_are_written_over_and_freed():
    """``p{1}`` and ``r`` are aliased to outputs ``u`` and ``w``, which read them: the
    outputs are written over them (no buffers of their own; the parameters' buffers reach
    the root). ``q`` is a buffer donor: freed after its last reader. ``p{0}``, ``p{}`` and
    ``s`` are not donated: the caller keeps them (live to the end)."""
    g = read_hlo_text(DONATION)
    assert sorted(g.buffer_names) == ["p{0}", "p{1}", "p{}", "q", "r", "s", "t{}", "v"]
    out = {x: bool(g.buffer_live_out[g.buffer_names.index(x)]) for x in g.buffer_names}
    assert out == {x: x != "q" for x in g.buffer_names}
    assert users(g, "p{1}") == ["b", "t", "u"]
    assert users(g, "r") == ["t", "w"]
    assert users(g, "q") == ["v"]


LOOP = """HloModule wl

cond {
  p = (s32[], f32[8], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[8], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8] get-tuple-element(p), index=1
  y = f32[8] get-tuple-element(p), index=2
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  x2 = f32[8] add(x, y)
  ROOT t = (s32[], f32[8], f32[8]) tuple(i2, x2, y)
}

ENTRY e {
  a = f32[8] parameter(0)
  z = s32[] parameter(1)
  b = f32[8] negate(a)
  c = f32[8] exponential(a)
  t0 = (s32[], f32[8], f32[8]) tuple(z, b, SECOND)
  w = (s32[], f32[8], f32[8]) while(t0), condition=cond, body=body
  r1 = f32[8] get-tuple-element(w), index=1
  r2 = f32[8] get-tuple-element(w), index=2
  ROOT o = f32[8] add(r1, r2)
}
"""


def test_while_state_shares_the_init_buffers_except_copies():
    """The loop state lives in its init buffers: ``w{1}`` in ``b``, the tuple table in
    ``t0``'s, and ``w{2}``, which the body passes through unchanged, is ``c`` itself. The
    read-only parameter ``z`` is copied (``w{0}``). In the body the new counter and the
    new ``x`` are written over the parameter's (no buffers of their own). With ``b`` in
    the state twice, the pass-through keeps ``b`` and index 1 gets a copy."""
    from cpsched.readers.hlo.convert import module_graphs
    from cpsched.readers.hlo.parser import parse_hlo_text

    gs = module_graphs(parse_hlo_text(LOOP.replace("SECOND", "c")))
    e, body = gs["e"], gs["body"]
    assert sorted(e.buffer_names) == ["a", "b", "c", "o", "t0{}", "w{0}", "z"]
    assert users(e, "b") == ["o", "r1", "t0", "w"]
    assert users(e, "c") == ["o", "r2", "t0", "w"]
    assert users(e, "t0{}") == ["r1", "r2", "w"]
    assert sorted(body.buffer_names) == ["p{0}", "p{1}", "p{2}", "p{}"]
    assert users(body, "p{1}") == ["t", "x", "x2"]
    assert users(body, "p{0}") == ["i", "i2", "t"]
    twice = module_graphs(parse_hlo_text(LOOP.replace("SECOND", "b")))["e"]
    assert sorted(twice.buffer_names) == ["a", "b", "c", "o", "t0{}", "w{0}", "w{1}", "z"]
    assert users(twice, "b") == ["o", "r2", "t0", "w"]
    assert users(twice, "w{1}") == ["o", "r1"]
    named = module_graphs(parse_hlo_text(_x_names(LOOP.replace("SECOND", "b"), ["cond", "body"])))
    assert sorted(named["e"].buffer_names) == sorted(twice.buffer_names)


BRANCH_CALL = """HloModule bc

br0 {
  x = f32[8] parameter(0)
  ROOT y = f32[8] negate(x)
}

br1 {
  ROOT x1 = f32[8] parameter(0)
}

callee {
  ca = f32[8] parameter(0)
  cb = f32[8] parameter(1)
  cu = f32[2] parameter(2)
  ci = s32[] parameter(3)
  d = f32[8] dynamic-update-slice(cb, cu, ci)
  n = f32[8] negate(ca)
  ROOT ct = (f32[8], f32[8], f32[8]) tuple(ca, n, d)
}

ENTRY e {
  a = f32[8] parameter(0)
  k = s32[] parameter(1)
  u = f32[2] parameter(2)
  i = s32[] parameter(3)
  b = f32[8] negate(a)
  c = f32[8] exponential(a)
  cd = f32[8] conditional(k, b, c), branch_computations={br0, br1}
  q = f32[8] sine(a)
  r = f32[8] cosine(a)
  cl = (f32[8], f32[8], f32[8]) call(q, r, u, i), to_apply=callee
  g0 = f32[8] get-tuple-element(cl), index=0
  g2 = f32[8] get-tuple-element(cl), index=2
  ROOT o = (f32[8], f32[8], f32[8], f32[8]) tuple(cd, b, g0, g2)
}
"""


def test_conditional_and_call_results_written_over_their_operands():
    """Branch ``br1`` returns its parameter: the conditional's result goes in operand 2's
    buffer (``c``, read by nobody else); operand 1 (``b``, which ``br0`` does not return
    and ``o`` reads after the conditional) keeps its own. The call passes ``q`` through
    (``cl{0}`` is ``q``), updates ``r`` in place (``cl{2}``) and defines ``cl{1}``."""
    g = read_hlo_text(BRANCH_CALL)
    assert sorted(g.buffer_names) == sorted(
        ["a", "k", "u", "i", "b", "c", "q", "r", "cl{}", "cl{1}", "o{}"]
    )
    assert users(g, "c") == ["cd", "o"] and users(g, "b") == ["cd", "o"]
    assert users(g, "q") == ["cl", "g0", "o"]
    assert users(g, "r") == ["cl", "g2", "o"]
    out = {x: bool(g.buffer_live_out[g.buffer_names.index(x)]) for x in ("b", "c", "q", "r")}
    assert out == {"b": True, "c": True, "q": True, "r": True}
    named = read_hlo_text(_x_names(BRANCH_CALL, ["br0", "br1", "callee"]))
    assert sorted(named.buffer_names) == sorted(g.buffer_names)


ASYNC_COSTS = (
    """HloModule ac
"""
    + ADD
    + """
wrapped {
  wa = f32[4] parameter(0)
  ROOT wn = f32[4] negate(wa)
}

ENTRY e {
  p = f32[4] parameter(0)
  s = ((f32[4]), f32[4], s32[]) async-start(p), calls=wrapped
  d = f32[4] async-done(s)
  ags = (f32[4], f32[8]) all-gather-start(d), replica_groups={{0,1}}, dimensions={0}
  agd = f32[8] all-gather-done(ags)
  cps = (f32[8], f32[8], u32[], u32[]) collective-permute-start(agd), source_target_pairs={{0,1}}
  cpd = f32[8] collective-permute-done(cps)
  ars = f32[8] all-reduce-start(cpd), replica_groups={}, to_apply=add
  ard = f32[8] all-reduce-done(ars)
  c = f32[8] custom-call(ard), custom_call_target="foo"
  e2 = f32[8] exponential(c)
  ROOT r = f32[8] negate(e2)
}
"""
)


def test_costs_of_async_pairs_and_collectives():
    """An async start costs its wrapped computation's flops (4 negations) and moves its
    operand in and its result out (16 + 16 B); its done costs nothing. A collective start
    moves its operand and its result (the all-gather's and collective-permute's tuple
    element 1: 16 + 32 B, 32 + 32 B; the all-reduce's array: 32 + 32 B)."""
    g = read_hlo_text(ASYNC_COSTS)
    got = {
        g.op_names[i]: (g.flops[i].constant_value, g.bytes_accessed[i].constant_value)
        for i in range(g.n_ops)
    }
    assert got == {
        "p": (0, 0),
        "s": (4, 32),
        "d": (0, 0),
        "ags": (0, 48),
        "agd": (0, 0),
        "cps": (0, 64),
        "cpd": (0, 0),
        "ars": (0, 64),
        "ard": (0, 0),
        "c": (0, 64),
        "e2": (8, 64),
        "r": (8, 64),
    }


SYMBOLIC = """HloModule sym

callee {
  a = f32[?] parameter(0)
  t1 = f32[?] negate(a)
  t2 = f32[?] exponential(t1)
  ROOT s = f32[?] add(t2, a)
}

br0 {
  x = f32[?] parameter(0)
  y = f32[?] negate(x)
  ROOT z = f32[?] negate(y)
}

br1 {
  x1 = f32[?] parameter(0)
  y1 = f32[?] abs(x1)
  y2 = f32[?] abs(y1)
  ROOT z1 = f32[?] abs(y2)
}

ENTRY e {
  p = f32[?] parameter(0)
  k = s32[] parameter(1)
  c = f32[?] call(p), to_apply=callee
  cd = f32[?] conditional(k, c, c), branch_computations={br0, br1}
  ROOT o = f32[?] negate(cd)
}
"""


def test_symbolic_callees_take_the_sum_of_their_temporaries():
    """With symbolic sizes (``dyn`` elements) there is no max of polynomials: a call's
    transient is the sum of its callee's values that the caller does not hold (``t1``,
    ``t2``: 8 dyn B), a conditional's the sum over its branches (``y``; ``y1``, ``y2``:
    12 dyn B). The module bound then gives the callees nothing: at ``dyn = 10`` it is
    ``p``, ``k``, ``c`` and ``cd`` at the conditional (40 + 4 + 40 + 40 = 124 B)."""
    import numpy as np

    from cpsched.core.scenarios import Scenarios
    from cpsched.strategies.module import module_lower_bound
    from cpsched.readers.hlo.parser import parse_hlo_text

    g = read_hlo_text(SYMBOLIC)
    got = {g.op_names[i]: str(g.transient[i]) for i in range(g.n_ops)}
    assert got == {"p": "0", "k": "0", "c": "8*dyn", "cd": "12*dyn", "o": "0"}
    sc = Scenarios(("dyn=10",), ("dyn",), np.array([[10]]), np.array([1.0]))
    assert int(module_lower_bound(parse_hlo_text(SYMBOLIC), sc)[0]) == 124


LOOP_STATE = (
    """HloModule ls
"""
    + ADD
    + """
cond {
  cp = (f32[8], f32[8], f32[8], f32[8], f32[8]) parameter(0)
  ROOT cc = pred[] constant(false)
}

body {
  p = (f32[8], f32[8], f32[8], f32[8], f32[8]) parameter(0)
  a = f32[8] get-tuple-element(p), index=0
  b = f32[8] get-tuple-element(p), index=1
  c = f32[8] get-tuple-element(p), index=2
  a2 = f32[8] negate(a)
  m = f32[8] abs(a)
  b2 = f32[8] all-reduce(b), replica_groups={}, to_apply=add
  n = f32[8] sine(b)
  tw = f32[8] add(m, n)
  ROOT t = (f32[8], f32[8], f32[8], f32[8], f32[8]) tuple(a2, b2, tw, tw, c)
}

ENTRY e {
  x = f32[8] parameter(0)
  x0 = f32[8] negate(x)
  x1 = f32[8] abs(x)
  x2 = f32[8] sine(x)
  x3 = f32[8] cosine(x)
  x4 = f32[8] exponential(x)
  t0 = (f32[8], f32[8], f32[8], f32[8], f32[8]) tuple(x0, x1, x2, x3, x4)
  w = (f32[8], f32[8], f32[8], f32[8], f32[8]) while(t0), condition=cond, body=body
  ROOT r = f32[8] get-tuple-element(w), index=0
}
"""
)


def test_loop_state_written_over_the_parameter_only_where_safe():
    """The body's root over its parameter: ``b2`` (a sync all-reduce, which becomes an
    async pair) is written over ``p{1}`` and the other reader ``n`` is ordered before it;
    ``a2`` (a negate) would need the same of ``m``, which is not already before it, so it
    keeps its own buffer (XLA's copy); ``tw``, placed twice, and ``c``, the parameter's
    own value moved to index 4, keep theirs; the tuple table is written over ``p{}``."""
    from cpsched.readers.hlo.convert import module_graphs
    from cpsched.readers.hlo.parser import parse_hlo_text

    g = module_graphs(parse_hlo_text(LOOP_STATE))["body"]
    assert sorted(g.buffer_names) == sorted(
        ["p{}", "p{0}", "p{1}", "p{2}", "p{3}", "p{4}", "a2", "m", "n", "tw"]
    )
    assert users(g, "p{1}") == ["b", "b2", "n", "t"]
    assert users(g, "p{0}") == ["a", "a2", "m"]
    assert g.meta["alias_order_edges"] == [("n", "b2")]
    assert g.op_index("n") in g.control_preds(g.op_index("b2"))


SCHEDULED = """HloModule s, HEADER

ENTRY e {
  p = f32[8] parameter(0)
  u = f32[2] parameter(1)
  i = s32[] parameter(2)
  q = f32[8] negate(p)
  d = f32[8] dynamic-update-slice(q, u, i)
  m = f32[8] abs(q)
  o1 = f32[8] add(d, m)
  q5 = f32[8] sine(p)
  d5 = f32[8] dynamic-update-slice(q5, u, i)
  ROOT o = f32[8] add(o1, d5)
}
"""


@pytest.mark.parametrize("scheduled", [False, True])
def test_a_reader_after_the_writer_in_a_schedule_keeps_a_copy(scheduled):
    """``d`` updates ``q`` in place while ``m`` also reads ``q``. Unscheduled, ``m`` is
    ordered before ``d`` and ``d`` writes over ``q``; in a scheduled module ``m`` comes
    after ``d``, so XLA keeps a copy: ``d`` has its own buffer and no edge is added.
    ``d5`` writes over ``q5`` either way."""
    g = read_hlo_text(SCHEDULED.replace("HEADER", f"is_scheduled={str(scheduled).lower()}"))
    assert ("d" in g.buffer_names) == scheduled
    assert "d5" not in g.buffer_names and users(g, "q5") == ["d5", "o"]
    assert g.meta.get("alias_order_edges") == (None if scheduled else [("m", "d")])


XFUSION = """HloModule xf

Xdus {
  fp0 = f32[16] parameter(0)
  fp1 = f32[4] parameter(1)
  fp2 = s32[] parameter(2)
  ROOT d = f32[16] dynamic-update-slice(fp0, fp1, fp2)
}

ENTRY e {
  p = f32[16] parameter(0)
  u = f32[4] parameter(1)
  i = s32[] parameter(2)
  q = f32[16] negate(p)
  f = f32[16] fusion(q, u, i), kind=kLoop, calls=%Xdus
  ROOT o = f32[16] negate(f)
}
"""


def _x_names(text, names):
    """Callee names that start with ``X`` and are referred to with a ``%``."""
    for n in names:
        text = text.replace(f"\n{n} {{", f"\nX{n} {{")
        for attr in ("condition", "body", "calls", "to_apply"):
            text = text.replace(f"{attr}={n}", f"{attr}=%X{n}")
        text = text.replace(f"{{{n},", f"{{%X{n},").replace(f" {n}}}", f" %X{n}}}")
    return text


def test_callee_names_with_a_percent_sign_and_a_leading_x():
    """``%`` before a callee's name is dropped, nothing else: computations named ``X...``
    cost and share as in the tests above (an in-place fusion ``%Xdus`` writes over ``q``)."""
    g = read_hlo_text(
        _x_names(WHILE.replace("TRIP", '{"known_trip_count":{"n":"4"}}'), ["cond", "body"])
    )
    w = g.op_index("w")
    assert (g.flops[w].constant_value, g.bytes_accessed[w].constant_value) == (72, 596)
    assert g.transient[w].constant_value == 16
    text = _x_names(COSTS, ["fused", "callee", "br0", "br1"])
    assert "calls=%Xfused" in text and "{%Xbr0, %Xbr1}" in text
    g = read_hlo_text(text)
    got = {x: g.flops[g.op_index(x)].constant_value for x in ("f", "c", "cd")}
    assert got == {"f": 32, "c": 32, "cd": 64}
    assert g.transient[g.op_index("c")].constant_value == 0
    g = read_hlo_text(XFUSION)
    assert "f" not in g.buffer_names and users(g, "q") == ["f", "o"]


NESTED_FUSIONS = """HloModule mf

inner {
  ip0 = f32[16] parameter(0)
  ip1 = f32[4] parameter(1)
  ip2 = s32[] parameter(2)
  ROOT id = f32[16] dynamic-update-slice(ip0, ip1, ip2)
}

multi {
  mp0 = f32[16] parameter(0)
  mp1 = f32[4] parameter(1)
  mp2 = s32[] parameter(2)
  mp3 = f32[16] parameter(3)
  n = f32[16] negate(mp3)
  d = f32[16] fusion(mp0, mp1, mp2), kind=kLoop, calls=inner
  ROOT t = (f32[16], f32[16]) tuple(n, d)
}

chain {
  a0 = f32[16] parameter(0)
  a1 = f32[4] parameter(1)
  a2 = s32[] parameter(2)
  io = f32[16] fusion(a0, a1, a2), kind=kLoop, calls=inner
  ROOT dd = f32[16] dynamic-update-slice(io, a1, a2)
}

ENTRY e {
  p = f32[16] parameter(0)
  u = f32[4] parameter(1)
  i = s32[] parameter(2)
  q = f32[16] negate(p)
  r = f32[16] abs(p)
  f = (f32[16], f32[16]) fusion(q, u, i, r), kind=kLoop, calls=multi
  f0 = f32[16] get-tuple-element(f), index=0
  f1 = f32[16] get-tuple-element(f), index=1
  s = f32[16] sine(p)
  h = f32[16] fusion(s, u, i), kind=kLoop, calls=chain
  ROOT o = (f32[16], f32[16], f32[16]) tuple(f0, f1, h)
}
"""


def test_in_place_through_multi_output_and_nested_fusions():
    """A two-output fusion whose element 1 is an inner in-place fusion on its parameter 0:
    that element is written over ``q``. A fusion whose root updates, in place, the output
    of an inner in-place fusion of its parameter 0: written over ``s``."""
    from cpsched.readers.hlo.convert import inplace_pairs
    from cpsched.readers.hlo.parser import parse_hlo_text

    m = parse_hlo_text(NESTED_FUSIONS)
    assert inplace_pairs(m, m.entry.index["f"]) == [(0, (), (1,))]
    assert inplace_pairs(m, m.entry.index["h"]) == [(0, (), ())]
    g = read_hlo_text(NESTED_FUSIONS)
    assert sorted(g.buffer_names) == sorted(["p", "u", "i", "q", "r", "s", "f{}", "f{0}", "o{}"])
    assert users(g, "q") == ["f", "f1", "o"] and users(g, "s") == ["h", "o"]


FUSED_SCATTER = (
    """HloModule fs
"""
    + ADD
    + """
fsc {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  idx = s32[2,1] parameter(2)
  u = f32[2] parameter(3)
  v = f32[2] parameter(4)
  ROOT sc = (f32[8], f32[8]) scatter(a, b, idx, u, v), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}

ENTRY e {
  p = f32[8] parameter(0)
  idx = s32[2,1] parameter(1)
  u = f32[2] parameter(2)
  q = f32[8] negate(p)
  q1 = f32[8] abs(p)
  f = (f32[8], f32[8]) fusion(q, q1, idx, u, u), kind=kLoop, calls=fsc
  f0 = f32[8] get-tuple-element(f), index=0
  f1 = f32[8] get-tuple-element(f), index=1
  ROOT o = f32[8] add(f0, f1)
}
"""
)


def test_a_fused_variadic_scatter_pairs_each_output_with_its_own_operand():
    """The fusion's root is a two-operand scatter: output 0 is written over parameter 0
    (``q``) and output 1 over parameter 1 (``q1``), each only at its own index."""
    from cpsched.readers.hlo.convert import inplace_pairs
    from cpsched.readers.hlo.parser import parse_hlo_text

    m = parse_hlo_text(FUSED_SCATTER)
    assert inplace_pairs(m, m.entry.index["f"]) == [(0, (), (0,)), (1, (), (1,))]
    g = read_hlo_text(FUSED_SCATTER)
    assert sorted(g.buffer_names) == sorted(["p", "idx", "u", "q", "q1", "f{}", "o"])
    assert users(g, "q") == ["f", "f0", "o"] and users(g, "q1") == ["f", "f1", "o"]


INLINE = """HloModule inl

sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  p = f32[8] parameter(0)
  ROOT r = f32[] reduce(p, f32[] constant(0)), dimensions={0}, to_apply=sum
}
"""


def test_operands_written_inline_are_listed_for_the_writer():
    """A constant written inside an operand list has no line of its own: the graph names
    it under ``inline_ops`` (a writer places it before its user); with its own line it
    is not listed."""
    g = read_hlo_text(INLINE)
    assert g.meta["inline_ops"] == ["_nested.1.constant"]
    own = INLINE.replace("f32[] constant(0))", "z)").replace(
        "  ROOT r", "  z = f32[] constant(0)\n  ROOT r"
    )
    assert "inline_ops" not in read_hlo_text(own).meta


BAD_ALIASES = """HloModule bad, input_output_alias={ {5}: (0, {}, may-alias), {1}: (1, {}, may-alias) }

ENTRY e {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  a = f32[8] negate(p0)
  b = f32[8] abs(p1)
  c = f32[8] custom-call(a), custom_call_target="foo", output_to_operand_aliasing={{}: (1, {})}
  ROOT t = (f32[8], f32[8]) tuple(c, b)
}
"""


def test_aliases_that_point_nowhere_are_skipped_not_the_rest():
    """An input/output alias at an output index the root does not have is skipped (``p0``
    is still donated: freed after ``a``) and the next alias still writes ``b`` over
    ``p1``; an output-to-operand alias naming a missing operand leaves ``c`` its own
    buffer."""
    g = read_hlo_text(BAD_ALIASES)
    assert sorted(g.buffer_names) == ["a", "c", "p0", "p1", "t{}"]
    assert users(g, "p1") == ["b", "t"] and users(g, "p0") == ["a"]
    out = {x: bool(g.buffer_live_out[g.buffer_names.index(x)]) for x in g.buffer_names}
    assert out == {"p0": False, "p1": True, "a": False, "c": True, "t{}": True}


CONSTANT_STATE = """HloModule lc

cond {
  cp = (f32[8], f32[8]) parameter(0)
  ROOT cc = pred[] constant(false)
}

body {
  p = (f32[8], f32[8]) parameter(0)
  x = f32[8] get-tuple-element(p), index=1
  c0 = f32[8] constant({0, 0, 0, 0, 0, 0, 0, 0})
  y = f32[8] negate(x)
  ROOT t = (f32[8], f32[8]) tuple(c0, y)
}

ENTRY e {
  a = f32[8] parameter(0)
  b0 = f32[8] negate(a)
  b1 = f32[8] abs(a)
  t0 = (f32[8], f32[8]) tuple(b0, b1)
  w = (f32[8], f32[8]) while(t0), condition=cond, body=body
  ROOT r = f32[8] get-tuple-element(w), index=1
}
"""


def test_a_constant_in_the_loop_state_does_not_stop_the_sharing():
    """The body puts a constant (no buffer) at index 0 and a new value at index 1: index 0
    is skipped, ``y`` is still written over ``p{1}``."""
    from cpsched.readers.hlo.convert import module_graphs
    from cpsched.readers.hlo.parser import parse_hlo_text

    g = module_graphs(parse_hlo_text(CONSTANT_STATE))["body"]
    assert sorted(g.buffer_names) == ["p{0}", "p{1}", "p{}"]
    assert users(g, "p{1}") == ["t", "x", "y"]


SAME_OPERAND_TWICE = (
    """HloModule twice
"""
    + ADD
    + """
ENTRY e {
  p = f32[8] parameter(0)
  q = f32[8] negate(p)
  ars = (f32[8], f32[8]) all-reduce-start(q, q), replica_groups={}, to_apply=add
  ard = (f32[8], f32[8]) all-reduce-done(ars)
  a = f32[8] get-tuple-element(ard), index=0
  b = f32[8] get-tuple-element(ard), index=1
  ROOT o = f32[8] add(a, b)
}
"""
)


def test_one_value_is_written_over_once():
    """An all-reduce-start of ``q`` twice: output 0 is written over ``q``, output 1 gets
    its own buffer (two outputs cannot share one)."""
    g = read_hlo_text(SAME_OPERAND_TWICE)
    assert sorted(g.buffer_names) == ["ars{1}", "ars{}", "o", "p", "q"]
    assert users(g, "q") == ["a", "ard", "ars", "o"]
    assert users(g, "ars{1}") == ["ard", "b", "o"]


CROSSED = """HloModule crossed

ENTRY e {
  p = f32[8] parameter(0)
  u = f32[2] parameter(1)
  i = s32[] parameter(2)
  v1 = f32[8] negate(p)
  v2 = f32[8] abs(p)
  w1 = f32[8] dynamic-update-slice(v1, u, i)
  r2 = f32[8] add(w1, v2)
  w2 = f32[8] dynamic-update-slice(v2, u, i)
  r1 = f32[8] add(w2, v1)
  q = f32[8] negate(p)
  d = f32[8] dynamic-update-slice(q, u, i)
  late = f32[8] add(d, q)
  q5 = f32[8] sine(p)
  d5 = f32[8] dynamic-update-slice(q5, u, i)
  ROOT o = (f32[8], f32[8], f32[8], f32[8]) tuple(r1, r2, late, d5)
}
"""


def test_an_added_order_edge_is_seen_by_the_later_share_checks():
    """``w1`` writes over ``v1`` once ``r1`` (its other reader, later in the text) is
    ordered before it; then ``w2 -> r1 -> w1 -> r2``, so ``r2`` (the other reader of
    ``v2``) can only run after ``w2``: ``w2`` keeps its own buffer (writing over ``v2``
    would need ``r2`` first: a cycle). ``late`` reads ``q`` after ``d``: a copy, and the
    next request, ``d5`` over ``q5``, is still granted."""
    g = read_hlo_text(CROSSED)
    names = set(g.buffer_names)
    assert {"w2", "d", "late"} <= names and not {"w1", "d5"} & names
    assert g.meta["alias_order_edges"] == [("r1", "w1")]
    assert users(g, "v1") == ["r1", "r2", "w1"] and users(g, "q5") == ["d5", "o"]


DONOR_IN_PLACE = """HloModule dd, buffer_donor={ (0, {}) }

ENTRY e {
  p = f32[8] parameter(0)
  r = f32[8] parameter(1)
  u = f32[2] parameter(2)
  i = s32[] parameter(3)
  d = f32[8] dynamic-update-slice(p, u, i)
  e = f32[8] dynamic-update-slice(r, u, i)
  ROOT o = (f32[8], f32[8]) tuple(d, e)
}
"""


def test_an_in_place_op_writes_over_a_donated_parameter_only():
    """``p`` is a buffer donor: ``d`` updates it in place. ``r`` is not donated: ``e``
    gets its own buffer (XLA's copy) and ``r`` stays the caller's."""
    g = read_hlo_text(DONOR_IN_PLACE)
    assert sorted(g.buffer_names) == ["e", "i", "o{}", "p", "r", "u"]
    assert users(g, "p") == ["d", "o"] and users(g, "r") == ["e"]


COND_HEAVY = """HloModule cw

cond {
  p = (s32[], f32[8]) parameter(0)
  x = f32[8] get-tuple-element(p), index=1
  e = f32[8] exponential(x)
  e2 = f32[8] negate(e)
  sl = f32[1] slice(e2), slice={[0:1]}
  r = f32[] reshape(sl)
  z = f32[] constant(0)
  ROOT lt = pred[] compare(r, z), direction=LT
}

body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], f32[8]) tuple(i2, x)
}

ENTRY e {
  a = f32[8] parameter(0)
  z = s32[] constant(0)
  t0 = (s32[], f32[8]) tuple(z, a)
  w = (s32[], f32[8]) while(t0), condition=cond, body=body
  ROOT r = f32[8] get-tuple-element(w), index=1
}
"""


def test_a_while_carries_its_condition_temporaries():
    """The condition holds ``e`` and ``e2`` (64 B) beside the state it reads (52 B) and the
    1-byte predicate it returns: the while op's transient is 64 - 1 = 63 B (the body needs
    nothing beyond its state); with the callees named ``%X...`` too."""
    g = read_hlo_text(COND_HEAVY)
    assert g.transient[g.op_index("w")].constant_value == 63
    g = read_hlo_text(_x_names(COND_HEAVY, ["cond", "body"]))
    assert g.transient[g.op_index("w")].constant_value == 63


PASS_FIRST = """HloModule pt

cond {
  cp = (f32[8], f32[8]) parameter(0)
  ROOT cc = pred[] constant(false)
}

body {
  p = (f32[8], f32[8]) parameter(0)
  x0 = f32[8] get-tuple-element(p), index=0
  x1 = f32[8] get-tuple-element(p), index=1
  y = f32[8] negate(x1)
  ROOT t = (f32[8], f32[8]) tuple(x0, y)
}

ENTRY e {
  a = f32[8] parameter(0)
  b0 = f32[8] negate(a)
  b1 = f32[8] abs(a)
  t0 = (f32[8], f32[8]) tuple(b0, b1)
  w = (f32[8], f32[8]) while(t0), condition=cond, body=body
  r0 = f32[8] get-tuple-element(w), index=0
  r1 = f32[8] get-tuple-element(w), index=1
  ROOT o = f32[8] add(r0, r1)
}
"""


def test_a_pass_through_before_a_new_value_in_the_loop_state():
    """The body passes index 0 through and writes index 1: ``w{0}`` is ``b0`` and ``w{1}``
    still lives in ``b1`` (no buffers of the while's own)."""
    from cpsched.readers.hlo.convert import module_graphs
    from cpsched.readers.hlo.parser import parse_hlo_text

    g = module_graphs(parse_hlo_text(PASS_FIRST))["e"]
    assert sorted(g.buffer_names) == ["a", "b0", "b1", "o", "t0{}"]
    assert users(g, "b1") == ["o", "r1", "t0", "w"]
