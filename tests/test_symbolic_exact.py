"""Size polynomials, value by value (written against survivors of mutation testing)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from cpsched.core.errors import InputError
from cpsched.core.symbolic import (
    ALWAYS_GE,
    ALWAYS_LE,
    DEPENDS,
    ZERO,
    SymExpr,
    compare,
    evaluate_many,
    sym_sum,
)


def test_constants():
    assert SymExpr.const(0).terms == () and SymExpr.const(0) == ZERO
    assert SymExpr.const(5).terms == (((), 5),)
    assert SymExpr.const(np.int64(3)).constant_value == 3
    with pytest.raises(ValueError) as e:
        SymExpr.const(-1)
    assert str(e.value) == "sizes are non-negative, got -1"
    # the constructors are static: callable on an instance too
    assert ZERO.const(2) == SymExpr.const(2) and ZERO.dim("s") == SymExpr.dim("s")
    assert ZERO.parse("s") == SymExpr.dim("s")
    assert ZERO._from_map({(): 3}) == SymExpr.const(3)
    assert ZERO._parse_uncached("s + 1") == SymExpr.parse("s + 1")
    assert SymExpr.parse(7) == SymExpr.const(7) and SymExpr.parse(np.int32(0)) == ZERO
    e = SymExpr.parse("2*s")
    assert SymExpr.parse(e) is e
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.terms = ()


def test_dims_and_names():
    assert SymExpr.dim("s").terms == (((("s", 1),), 1),)
    for bad in ("2s", "", "a-b"):
        with pytest.raises(ValueError) as e:
            SymExpr.dim(bad)
        assert str(e.value) == f"bad dim name {bad!r}"


@pytest.mark.parametrize(
    "text,terms",
    [
        ("0", ()),
        ("12", (((), 12),)),
        ("s", (((("s", 1),), 1),)),
        ("2*3*s", (((("s", 1),), 6),)),
        ("s*s", (((("s", 2),), 1),)),
        ("b^2*8 + b**2", (((("b", 2),), 9),)),
        ("4*b*s + 1 + s*b", (((), 1), ((("b", 1), ("s", 1)), 5))),
        (" s ^ 3 ", (((("s", 3),), 1),)),
    ],
)
def test_parse_terms(text, terms):
    assert SymExpr.parse(text).terms == terms


NEGATIVE = "sizes are sums of products with non-negative coefficients"


@pytest.mark.parametrize(
    "text,msg",
    [
        ("", "empty size expression"),
        ("   ", "empty size expression"),
        ("s - 1", f"bad size expression 's - 1': {NEGATIVE}"),
        ("s + ", f"bad size expression 's +': {NEGATIVE}"),
        ("s*1.5", "bad size expression 's*1.5': cannot read '1.5'"),
        ("2s", "bad size expression '2s': cannot read '2s'"),
    ],
)
def test_parse_errors(text, msg):
    with pytest.raises(InputError) as e:
        SymExpr.parse(text)
    assert str(e.value) == msg


def test_arithmetic_and_queries():
    s, b = SymExpr.dim("s"), SymExpr.dim("b")
    e = 2 * s * b + 3 + s
    assert e == SymExpr.parse("2*b*s + s + 3")
    assert (e + 0) == e and (0 + e) == e and (e * 1) == e and (e * 0) == ZERO
    assert (s * s).terms == (((("s", 2),), 1),)
    assert e.dims == ("b", "s") and not e.is_constant and SymExpr.const(4).is_constant
    assert ZERO.is_constant and ZERO.constant_value == 0 and ZERO.dims == ()
    with pytest.raises(ValueError) as err:
        _ = s.constant_value
    assert str(err.value) == "s is symbolic"
    assert e.evaluate({"s": 5, "b": 7}) == 2 * 35 + 3 + 5
    assert SymExpr.parse("s^2*3").evaluate({"s": 4}) == 48
    with pytest.raises(InputError) as err:
        e.evaluate({"s": 1})
    assert str(err.value) == "size 2*b*s + s + 3 needs a value for dim 'b'"
    assert sym_sum([s, s, SymExpr.const(2)]) == SymExpr.parse("2*s + 2")
    assert sym_sum([]) == ZERO


def test_printing():
    assert str(ZERO) == "0"
    assert str(SymExpr.parse("64 + 2048*s*b")) == "2048*b*s + 64"
    assert str(SymExpr.parse("s + b^2 + 1")) == "b^2 + s + 1"
    assert str(SymExpr.parse("s")) == "s" and str(SymExpr.parse("7")) == "7"
    assert str(SymExpr.parse("2*s + 3*b")) == "3*b + 2*s"  # same degree: by name
    assert str(SymExpr.parse("s*b^2 + 5*b*c*d")) == "5*b*c*d + b^2*s"
    assert repr(SymExpr.parse("2*s")) == "SymExpr('2*s')"


def test_evaluate_many_exact():
    exprs = [SymExpr.parse(t) for t in ("s", "2*b*s + 1", "s", "0", "b^2")]
    out = evaluate_many(exprs, ("b", "s"), np.array([[2, 3], [10, 1]]))
    assert out.dtype == np.int64
    assert out.tolist() == [[3, 13, 3, 0, 4], [1, 21, 1, 0, 100]]
    assert evaluate_many([], ("s",), np.array([[1]])).shape == (1, 0)
    assert evaluate_many([SymExpr.const(9)], (), np.zeros((2, 0))).tolist() == [[9], [9]]
    assert evaluate_many(exprs[:1], ("s",), np.array([4, 5])).tolist() == [[4], [5]]
    big = evaluate_many([SymExpr.parse("s^3")], ("s",), np.array([[1 << 20]]))
    assert int(big[0, 0]) == 1 << 60
    with pytest.raises(InputError) as e:
        evaluate_many(exprs[1:2], ("s",), np.array([[1]]))
    assert str(e.value) == "size expression needs a value for dim 'b'"


def test_compare_answers():
    p = SymExpr.parse
    box = {"s": (1, 100)}
    assert compare(p("s"), p("s"), box) == ALWAYS_LE
    assert compare(p("s"), p("s + 1"), box) == ALWAYS_LE
    assert compare(p("s + 1"), p("s"), box) == ALWAYS_GE
    assert compare(p("s*s"), p("10*s"), box) == DEPENDS  # equal at s = 10
    assert compare(p("s*s"), p("10*s"), {"s": (10, 100)}) == ALWAYS_GE
    assert compare(p("s*s"), p("10*s"), {"s": (1, 10)}) == ALWAYS_LE
    assert compare(p("s*s + 25"), p("10*s"), box) == ALWAYS_GE  # (s-5)^2 >= 0
    assert compare(p("s*s + 24"), p("10*s"), box) == DEPENDS  # -1 at s = 5
    assert compare(p("5"), p("7"), {}) == ALWAYS_LE
    assert compare(p("s"), p("7"), {"s": (7, 7)}) == ALWAYS_LE
    with pytest.raises(InputError, match="needs a range for dim 's'"):
        compare(p("s"), p("1"), {})
    # out of search budget: the conservative answer
    assert compare(p("s*s + 24"), p("10*s"), {"s": (1, 1 << 30)}, max_boxes=1) == DEPENDS


def test_compare_answer_strings_and_products():
    # the answers are part of the API (the heuristics and the CLI print them)
    assert (ALWAYS_LE, ALWAYS_GE, DEPENDS) == ("always <=", "always >=", "depends")
    p = SymExpr.parse
    box = {"b": (1, 3), "s": (1, 3)}
    assert compare(p("b*s"), p("5"), box) == DEPENDS  # 1 .. 9
    assert compare(p("b*s"), p("9"), box) == ALWAYS_LE
    assert compare(p("b*s + 1"), p("b + s"), box) == ALWAYS_GE  # (b-1)(s-1) >= 0
    assert compare(p("2*s"), p("s + 10"), {"s": (5, 20)}) == DEPENDS
    assert compare(p("2*s"), p("s + 10"), {"s": (10, 20)}) == ALWAYS_GE
    assert compare(p("2*s"), p("s + 10"), {"s": (1, 10)}) == ALWAYS_LE
    with pytest.raises(InputError) as e:
        compare(p("s"), p("1"), {})
    assert str(e.value) == "comparison needs a range for dim 's'"


# -- compare against every point of small boxes -------------------------------------------


def _truth(a, b, box):
    """The answer from every integer point of ``box``."""
    dims = sorted(box)
    grids = np.meshgrid(*[np.arange(lo, hi + 1) for lo, hi in (box[d] for d in dims)])
    vals = [
        a.evaluate(dict(zip(dims, pt))) - b.evaluate(dict(zip(dims, pt)))
        for pt in zip(*(g.ravel().tolist() for g in grids))
    ]
    if max(vals) <= 0:
        return ALWAYS_LE
    return ALWAYS_GE if min(vals) >= 0 else DEPENDS


def _random_pair(rng):
    """Two random polynomials in x and y whose difference sits near zero on a small box, so
    that wrong interval bounds prune real witnesses (values -1, 0, 1 are common)."""
    monos = ["x", "y", "x*y", "x^2", "y^2", "x^2*y"]
    a = " + ".join(f"{int(rng.integers(1, 4))}*{m}" for m in rng.choice(monos, 2, replace=False))
    b = " + ".join(f"{int(rng.integers(1, 4))}*{m}" for m in rng.choice(monos, 2, replace=False))
    box = {d: (int(lo), int(lo + rng.integers(0, 4))) for d, lo in zip("xy", rng.integers(1, 4, 2))}
    pa, pb = SymExpr.parse(a), SymExpr.parse(b)
    # shift by a constant so the difference's extreme over the box is -1, 0 or 1
    dims = sorted(box)
    pts = [
        dict(zip(dims, (x, y)))
        for x in range(box["x"][0], box["x"][1] + 1)
        for y in range(box["y"][0], box["y"][1] + 1)
    ]
    diff = [pa.evaluate(pt) - pb.evaluate(pt) for pt in pts]
    target = min(diff) if rng.random() < 0.5 else max(diff)
    shift = int(rng.integers(-1, 2)) - target
    return (pa + shift, pb) if shift >= 0 else (pa, pb + (-shift)), box


def test_compare_equals_the_answer_from_every_point():
    rng = np.random.default_rng(18)
    seen = {ALWAYS_LE: 0, ALWAYS_GE: 0, DEPENDS: 0}
    for _ in range(400):
        (a, b), box = _random_pair(rng)
        want = _truth(a, b, box)
        assert compare(a, b, box) == want, (a, b, box)
        seen[want] += 1
    assert min(seen.values()) >= 40, seen  # every answer is exercised


def test_compare_finds_a_witness_at_a_tight_interval_bound():
    # x - 2 on [1, 5]: the box's lower bound -1 is reached at x = 1 (the only negative point)
    x = SymExpr.dim("x")
    assert compare(x, SymExpr.const(2), {"x": (1, 5)}) == DEPENDS
    assert compare(SymExpr.const(2), x, {"x": (1, 5)}) == DEPENDS
    assert compare(x, SymExpr.const(1), {"x": (1, 5)}) == ALWAYS_GE
    assert compare(x + 4, SymExpr.const(5), {"x": (1, 5)}) == ALWAYS_GE
    # several terms of each sign: each adds to both ends of the range
    p = SymExpr.parse
    box = {"x": (1, 3), "y": (1, 3)}
    assert compare(p("x*y + 2"), p("x + y + 1"), box) == ALWAYS_GE  # (x-1)(y-1) >= 0
    assert compare(p("x*y + 1"), p("x + y + 1"), box) == DEPENDS  # -1 at (1, 1)
    assert compare(p("x + y"), p("x*y + 1"), box) == ALWAYS_LE


def test_compare_splits_the_widest_dim():
    # x is a single value and the largest; y must be split: -(y-2)^2 + 1 >= 0 on y in 1..3,
    # positive only at y = 2 (inside the box, not at a corner)
    p = SymExpr.parse
    box = {"x": (5, 5), "y": (1, 3)}
    assert compare(p("4*y + x"), p("y^2 + 8"), box) == ALWAYS_GE
    assert compare(p("y^2 + 8"), p("4*y + x"), box) == ALWAYS_LE
    assert compare(p("4*y + x"), p("y^2 + 9"), box) == ALWAYS_LE


def test_compare_box_budget():
    """``max_boxes`` counts the sub-boxes visited: a full bisection of three points takes
    five; past the budget the answer is the conservative ``depends``."""
    p = SymExpr.parse
    box = {"x": (1, 3)}
    # -(x-2)^2 <= 0: the root's interval does not decide, every point must be reached
    a, b = p("4*x"), p("x^2 + 4")
    assert compare(a, b, box, max_boxes=5) == ALWAYS_LE
    assert compare(a, b, box, max_boxes=1) == DEPENDS
    # the root's interval decides at once: one box is enough
    assert compare(p("x"), p("3"), box, max_boxes=1) == ALWAYS_LE
    assert compare(p("x + 1"), p("2"), box, max_boxes=1) == ALWAYS_GE
    # ... also when a term's bound is taken away from the box's low corner above 1: each
    # term counts at full weight (2x - 3 >= 1 on 2..5; 3 - 2x <= -1; x^2 - x >= 2 on 2..4)
    wide = {"x": (2, 5)}
    assert compare(p("2*x"), p("3"), wide, max_boxes=1) == ALWAYS_GE
    assert compare(p("3"), p("2*x"), wide, max_boxes=1) == ALWAYS_LE
    assert compare(p("x^2"), p("x"), {"x": (2, 4)}, max_boxes=1) == ALWAYS_GE


def test_size_limit_is_two_to_the_62():
    assert SymExpr.const(1 << 62).constant_value == 1 << 62
    with pytest.raises(
        InputError, match=r"^size 4611686018427387905 is past the 2\^62-byte limit$"
    ):
        SymExpr.const((1 << 62) + 1)
    with pytest.raises(InputError):
        SymExpr.parse("4611686018427387905")
