"""How the HLO converter classifies called computations (``call_contexts``): which get a
schedule of their own (entry, while/conditional/call and generic async bodies, uncalled
ones) and which are folded into their caller (fusions, reducers and comparators). Written
against survivors of mutation testing of the converter's control-flow code."""

from __future__ import annotations

from cpsched.readers.hlo.convert import call_contexts, scheduled_computations
from cpsched.readers.hlo.parser import parse_hlo_text

MODULE = """HloModule m

fused (a: f32[4]) -> f32[4] {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}

add (x: f32[], y: f32[]) -> f32[] {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

wrapped (w: f32[4]) -> f32[4] {
  w = f32[4] parameter(0)
  ROOT e = f32[4] exponential(w)
}

wrapped_fusion (v: f32[4]) -> f32[4] {
  v = f32[4] parameter(0)
  ROOT f = f32[4] fusion(v), kind=kLoop, calls=fused2
}

fused2 (a: f32[4]) -> f32[4] {
  a = f32[4] parameter(0)
  ROOT n = f32[4] abs(a)
}

cond (c: (f32[4], s32[])) -> pred[] {
  c = (f32[4], s32[]) parameter(0)
  i = s32[] get-tuple-element(c), index=1
  k = s32[] constant(3)
  ROOT lt = pred[] compare(i, k), direction=LT
}

body (b: (f32[4], s32[])) -> (f32[4], s32[]) {
  b = (f32[4], s32[]) parameter(0)
  v = f32[4] get-tuple-element(b), index=0
  i = s32[] get-tuple-element(b), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (f32[4], s32[]) tuple(v, j)
}

callee (q: f32[4]) -> f32[4] {
  q = f32[4] parameter(0)
  ROOT r = f32[4] sqrt(q)
}

fused3 (a: f32[4]) -> f32[4] {
  a = f32[4] parameter(0)
  ROOT n = f32[4] floor(a)
}

wrapped_sort (a: f32[4]) -> f32[4] {
  a = f32[4] parameter(0)
  ROOT n = f32[4] sort(a), dimensions={0}, to_apply=lt
}

lt (x: f32[], y: f32[]) -> pred[] {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = pred[] compare(x, y), direction=LT
}

dead (d: f32[]) -> f32[] {
  ROOT d = f32[] parameter(0)
}

ENTRY main (p: f32[4]) -> f32[4] {
  p = f32[4] parameter(0)
  f = f32[4] fusion(p), kind=kLoop, calls=fused
  z = f32[] constant(0)
  red = f32[] reduce(f, z), dimensions={0}, to_apply=add
  red2 = f32[] reduce(f, z), dimensions={0}, to_apply=fused2
  f3 = f32[4] fusion(p), kind=kLoop, calls=callee
  s1 = ((f32[4]), f32[4], s32[]) async-start(f), calls=wrapped
  d1 = f32[4] async-done(s1), calls=wrapped
  s2 = ((f32[4]), f32[4], s32[]) async-start(d1), calls=wrapped_fusion
  d2 = f32[4] async-done(s2), calls=wrapped_fusion
  fs = ((f32[4]), f32[4]) fusion-start(d2), kind=kLoop, calls=fused3
  fd = f32[4] fusion-done(fs)
  zero = s32[] constant(0)
  t = (f32[4], s32[]) tuple(fd, zero)
  w = (f32[4], s32[]) while(t), condition=cond, body=body
  g = f32[4] get-tuple-element(w), index=0
  ROOT c = f32[4] call(g), to_apply=callee
}
"""


def test_every_kind_of_call_gets_its_context():
    ctx = call_contexts(parse_hlo_text(MODULE))
    assert ctx == {
        "main": "entry",
        "fused": "fusion",  # fusion(..., calls=)
        "fused2": "fusion",  # a fusion and a reducer: fusion wins over embedded
        "fused3": "fusion",  # fusion-start sugar wraps a fusion
        "add": "embedded",  # reduce's to_apply
        "lt": "embedded",  # sort's comparator, inside an uncalled computation
        "wrapped": "sequential",  # generic async-start/done calls=
        "wrapped_fusion": "sequential",  # the same, whatever the body holds
        "cond": "sequential",
        "body": "sequential",
        "callee": "sequential",  # call's to_apply, also fused: sequential wins
        "wrapped_sort": "uncalled",
        "dead": "uncalled",
    }


def test_scheduled_computations_put_callees_first():
    order = scheduled_computations(parse_hlo_text(MODULE))
    assert order == [
        "wrapped",
        "wrapped_fusion",
        "cond",
        "body",
        "callee",
        "wrapped_sort",
        "dead",
        "main",
    ]
