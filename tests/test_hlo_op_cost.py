"""Flops and bytes the HLO reader gives single instructions, computed by hand (f32: 4 bytes
an element). Each module is the smallest one that shows one rule of ``op_cost``."""

from __future__ import annotations

import pytest

from cpsched.readers.hlo.convert import read_hlo_text

ADD = """
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
"""


def cost(text: str, name: str) -> tuple[int, int]:
    g = read_hlo_text(text)
    i = g.op_index(name)
    return g.flops[i].constant_value, g.bytes_accessed[i].constant_value


@pytest.mark.parametrize(
    "lhs, rhs, dims, out, k",
    [
        ("f32[4,6]", "f32[6,5]", "{1}", "f32[4,5]", 6),  # the usual matmul
        ("f32[6,4]", "f32[6,5]", "{0}", "f32[4,5]", 6),  # contracting dimension 0
        ("f32[2,3,4]", "f32[3,4,5]", "{1,2}", "f32[2,5]", 12),  # two contracting dimensions
    ],
)
def test_dot_flops_are_twice_the_output_times_the_contracted_size(lhs, rhs, dims, out, k):
    rc = "{0}" if dims != "{1,2}" else "{0,1}"
    text = f"""HloModule dot

ENTRY e {{
  a = {lhs} parameter(0)
  b = {rhs} parameter(1)
  ROOT d = {out} dot(a, b), lhs_contracting_dims={dims}, rhs_contracting_dims={rc}
}}
"""
    elems = {"f32[4,5]": 20, "f32[2,5]": 10}[out]
    sizes = {"f32[4,6]": 24, "f32[6,4]": 24, "f32[6,5]": 30, "f32[2,3,4]": 24, "f32[3,4,5]": 60}
    assert cost(text, "d") == (2 * elems * k, 4 * (sizes[lhs] + sizes[rhs] + elems))


def test_gemm_custom_call_counts_like_a_dot():
    """A cuBLAS gemm without a backend config contracts the lhs's last dimension."""
    text = """HloModule gemm

ENTRY e {
  a = f32[4,6] parameter(0)
  b = f32[6,5] parameter(1)
  ROOT c = f32[4,5] custom-call(a, b), custom_call_target="__cublas$gemm"
}
"""
    assert cost(text, "c") == (2 * 20 * 6, 4 * (24 + 30 + 20))


def test_reduce_window_flops_multiply_every_window_extent():
    text = (
        "HloModule rw\n"
        + ADD
        + """
ENTRY e {
  p = f32[4,6] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2,2] reduce-window(p, z), window={size=2x3 stride=2x3}, to_apply=add
}
"""
    )
    assert cost(text, "r") == (4 * 6, 4 * (24 + 1 + 4))


def test_async_collective_moves_its_operands_in_and_its_result_out():
    """An all-reduce-start of two operands of unequal size has the tuple (a, b) as its
    result: its first element is what comes back (all-gather and collective-permute
    starts put the result second). A send moves its operand only."""
    text = (
        "HloModule ar\n"
        + ADD
        + """
ENTRY e {
  p = f32[8] parameter(0)
  q = f32[4] parameter(1)
  a = f32[8] negate(p)
  b = f32[4] negate(q)
  ars = (f32[8], f32[4]) all-reduce-start(a, b), replica_groups={}, to_apply=add
  ard = (f32[8], f32[4]) all-reduce-done(ars)
  g0 = f32[8] get-tuple-element(ard), index=0
  g1 = f32[4] get-tuple-element(ard), index=1
  tok = token[] after-all()
  s = (f32[8], u32[], token[]) send(g0, tok), channel_id=1
  sd = token[] send-done(s), channel_id=1
  ROOT o = f32[4] negate(g1)
}
"""
    )
    assert cost(text, "ars") == (0, 4 * (8 + 4) + 4 * 8)
    assert cost(text, "ard") == (0, 0)
    assert cost(text, "s") == (0, 4 * 8)


WRAPPED = (
    "HloModule wrapped\n"
    + """
wrapped {
  x = f32[8] parameter(0)
  ROOT m = f32[8] multiply(x, x)
}

ENTRY e {
  p = f32[8] parameter(0)
  st = ((f32[8]), f32[8]) async-start(p), calls=wrapped
  up = ((f32[8]), f32[8]) async-update(st)
  dn = f32[8] async-done(up)
  ROOT o = f32[8] negate(dn)
}
"""
)


@pytest.mark.parametrize("callee", ["wrapped", "Xwrapped"])
def test_async_start_takes_its_callees_flops_and_the_update_nothing(callee):
    """A two-element async-start ((operands), result): the callee's flops (8 multiplies),
    the operand in and the result out; the update and the done cost nothing. With the
    callee named ``%X...`` too (only the ``%`` is stripped)."""
    text = WRAPPED.replace("wrapped", callee).replace(f"calls={callee}", f"calls=%{callee}")
    assert cost(text, "st") == (8, 4 * 8 + 4 * 8)
    assert cost(text, "up") == (0, 0)
    assert cost(text, "dn") == (0, 0)
