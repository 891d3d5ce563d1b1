import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from cpsched.core.errors import InputError
from cpsched.core.symbolic import (ALWAYS_GE, ALWAYS_LE, DEPENDS, SymExpr, compare,
                              evaluate_many)


def test_parse_print_roundtrip():
    e = SymExpr.parse("4*b*s*512 + 1024")
    assert str(e) == "2048*b*s + 1024"
    assert SymExpr.parse(str(e)) == e
    assert SymExpr.parse("b^2*8 + b**2") == SymExpr.parse("9*b^2")
    assert SymExpr.parse(12).constant_value == 12
    assert SymExpr.parse("0") == SymExpr()
    assert e.dims == ("b", "s")


@pytest.mark.parametrize("bad", ["", "b-1", "3*", "b*%", "1.5*b"])
def test_parse_rejects(bad):
    with pytest.raises(InputError):
        SymExpr.parse(bad)


def test_arithmetic():
    a, b = SymExpr.parse("b*s + 2"), SymExpr.parse("s + 1")
    assert a + b == SymExpr.parse("b*s + s + 3")
    assert a * b == SymExpr.parse("b*s^2 + b*s + 2*s + 2")
    assert (a * 3).evaluate({"b": 2, "s": 5}) == 36


def test_evaluate_many_matches_scalar():
    exprs = [SymExpr.parse(t) for t in ["4*b*s*512 + 1024", "7", "b^2*s", "7"]]
    vals = np.array([[1, 128], [8, 512], [32, 2048]])
    out = evaluate_many(exprs, ("b", "s"), vals)
    for r, (bv, sv) in enumerate(vals):
        for c, e in enumerate(exprs):
            assert out[r, c] == e.evaluate({"b": int(bv), "s": int(sv)})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 2), st.integers(0, 2)),
                min_size=1, max_size=4),
       st.integers(1, 64), st.integers(1, 4096))
def test_evaluate_matches_reparse(terms, b, s):
    text = " + ".join(f"{c}*b^{pb}*s^{ps}" if pb and ps else f"{c}" for c, pb, ps in terms)
    e = SymExpr.parse(text)
    # Re-parse of the printed form evaluates the same, and the concrete value agrees
    assert SymExpr.parse(str(e)).evaluate({"b": b, "s": s}) == e.evaluate({"b": b, "s": s})
    assert evaluate_many([e], ("b", "s"), np.array([[b, s]]))[0, 0] == e.evaluate({"b": b, "s": s})


def test_compare_decides_and_never_guesses():
    box = {"s": (1, 4096), "b": (1, 64)}
    assert compare(SymExpr.parse("b*s"), SymExpr.parse("2*b*s"), box) == ALWAYS_LE
    assert compare(SymExpr.parse("b*s + 10"), SymExpr.parse("b*s"), box) == ALWAYS_GE
    # s^2 vs 1000*s crosses at s = 1000: depends inside the box, decided outside it
    assert compare(SymExpr.parse("s^2"), SymExpr.parse("1000*s"), box) == DEPENDS
    assert compare(SymExpr.parse("s^2"), SymExpr.parse("1000*s"), {"s": (1, 999)}) == ALWAYS_LE
    assert compare(SymExpr.parse("s^2"), SymExpr.parse("1000*s"), {"s": (1000, 4096)}) == ALWAYS_GE
    # a non-monotone difference that is still one-signed: (s-3)^2 >= 0 <=> s^2 + 9 >= 6s
    assert compare(SymExpr.parse("s^2 + 9"), SymExpr.parse("6*s"), {"s": (1, 100)}) == ALWAYS_GE


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 30), st.integers(0, 30), st.integers(0, 3000), st.integers(0, 3000),
       st.integers(1, 50), st.integers(1, 50))
def test_compare_is_sound(a2, b1, c0, d0, lo, width):
    a = SymExpr.parse(f"{a2}*s^2 + {c0}")
    b = SymExpr.parse(f"{b1}*s + {d0}")
    hi = lo + width
    verdict = compare(a, b, {"s": (lo, hi)})
    vals = [(a.evaluate({"s": s}), b.evaluate({"s": s})) for s in range(lo, hi + 1)]
    le = all(x <= y for x, y in vals)
    ge = all(x >= y for x, y in vals)
    if verdict == ALWAYS_LE:
        assert le
    elif verdict == ALWAYS_GE:
        assert ge
    else:
        assert not le and not ge
