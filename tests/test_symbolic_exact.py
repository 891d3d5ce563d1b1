"""Size polynomials, value by value (written against survivors of mutation testing)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from cpsched.core.errors import InputError
from cpsched.core.symbolic import (ALWAYS_GE, ALWAYS_LE, DEPENDS, ZERO, SymExpr, compare,
                                   evaluate_many, sym_sum)


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


@pytest.mark.parametrize("text,terms", [
    ("0", ()),
    ("12", (((), 12),)),
    ("s", (((("s", 1),), 1),)),
    ("2*3*s", (((("s", 1),), 6),)),
    ("s*s", (((("s", 2),), 1),)),
    ("b^2*8 + b**2", (((("b", 2),), 9),)),
    ("4*b*s + 1 + s*b", (((), 1), ((("b", 1), ("s", 1)), 5))),
    (" s ^ 3 ", (((("s", 3),), 1),)),
])
def test_parse_terms(text, terms):
    assert SymExpr.parse(text).terms == terms


NEGATIVE = "sizes are sums of products with non-negative coefficients"


@pytest.mark.parametrize("text,msg", [
    ("", "empty size expression"),
    ("   ", "empty size expression"),
    ("s - 1", f"bad size expression 's - 1': {NEGATIVE}"),
    ("s + ", f"bad size expression 's +': {NEGATIVE}"),
    ("s*1.5", "bad size expression 's*1.5': cannot read '1.5'"),
    ("2s", "bad size expression '2s': cannot read '2s'"),
])
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
    assert str(SymExpr.parse("2*s + 3*b")) == "3*b + 2*s"        # same degree: by name
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
    assert compare(p("s*s"), p("10*s"), box) == DEPENDS          # equal at s = 10
    assert compare(p("s*s"), p("10*s"), {"s": (10, 100)}) == ALWAYS_GE
    assert compare(p("s*s"), p("10*s"), {"s": (1, 10)}) == ALWAYS_LE
    assert compare(p("s*s + 25"), p("10*s"), box) == ALWAYS_GE    # (s-5)^2 >= 0
    assert compare(p("s*s + 24"), p("10*s"), box) == DEPENDS      # -1 at s = 5
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
    assert compare(p("b*s"), p("5"), box) == DEPENDS             # 1 .. 9
    assert compare(p("b*s"), p("9"), box) == ALWAYS_LE
    assert compare(p("b*s + 1"), p("b + s"), box) == ALWAYS_GE   # (b-1)(s-1) >= 0
    assert compare(p("2*s"), p("s + 10"), {"s": (5, 20)}) == DEPENDS
    assert compare(p("2*s"), p("s + 10"), {"s": (10, 20)}) == ALWAYS_GE
    assert compare(p("2*s"), p("s + 10"), {"s": (1, 10)}) == ALWAYS_LE
    with pytest.raises(InputError) as e:
        compare(p("s"), p("1"), {})
    assert str(e.value) == "comparison needs a range for dim 's'"
