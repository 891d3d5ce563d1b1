"""Symbolic sizes: polynomials over named dims with non-negative integer coefficients.

A size such as ``4*b*s*512 + 1024`` is kept as a map from monomials to coefficients.
Dims are positive integers (batch, sequence length, ...), so every monomial is
non-decreasing in every dim; the comparison helper relies on that to prove order
relations over a box of dim values without sampling at made-up points.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache, reduce

import numpy as np

from cpsched.core.errors import InputError, InputTypeError

# A monomial is a sorted tuple of (dim, power) pairs; () is the constant term.
Monomial = tuple[tuple[str, int], ...]

_DIM_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")

# Sizes past 2^62 bytes are input errors: peaks and sums of such sizes would wrap around
# int64 (and no device holds 4.6 EB). ``Graph.sizes`` checks evaluated sizes and their sum.
SIZE_LIMIT = 1 << 62


def _check_coefficient(value: int) -> int:
    if value > SIZE_LIMIT:
        raise InputError(f"size {value} is past the 2^62-byte limit")
    return value


def _mono_mul(a: Monomial, b: Monomial) -> Monomial:
    powers: dict[str, int] = dict(a)
    for dim, p in b:
        powers[dim] = powers.get(dim, 0) + p
    return tuple(sorted(powers.items()))


@dataclass(frozen=True)
class SymExpr:
    """An immutable polynomial ``sum(coef * prod(dim**power))`` with coef >= 0."""

    terms: tuple[tuple[Monomial, int], ...] = ()

    # -- construction -------------------------------------------------------------------
    @staticmethod
    def const(value: int) -> SymExpr:
        value = int(value)
        if value < 0:
            raise InputError(f"sizes are non-negative, got {value}")
        return SymExpr((((), _check_coefficient(value)),) if value else ())

    @staticmethod
    def dim(name: str) -> SymExpr:
        if not _DIM_RE.match(name):
            raise ValueError(f"bad dim name {name!r}")
        return SymExpr(((((name, 1),), 1),))

    @staticmethod
    def _from_map(m: Mapping[Monomial, int]) -> SymExpr:
        return SymExpr(tuple(sorted((k, _check_coefficient(v)) for k, v in m.items() if v != 0)))

    @staticmethod
    def parse(text: str | int | SymExpr) -> SymExpr:
        """Parse ``'4*b*s*512 + 1024'``, ``'b^2*8'``, ``'b**2'``, or a plain integer."""
        if isinstance(text, SymExpr):
            return text
        if isinstance(text, (int, np.integer)) and not isinstance(text, bool):
            return SymExpr.const(int(text))
        if not isinstance(text, str):
            raise InputTypeError(
                f"a size is an integer or an expression string, not {type(text).__name__} {text!r}"
            )
        return _parse_text(text)

    @staticmethod
    def _parse_uncached(src: str) -> SymExpr:
        src = src.strip()
        if not src:
            raise InputError("empty size expression")
        total: dict[Monomial, int] = {}
        for term in src.replace("-", " - ").split("+"):
            term = term.strip()
            if not term or "-" in term:
                raise InputError(
                    f"bad size expression {src!r}: sizes are sums of "
                    "products with non-negative coefficients"
                )
            coef = 1
            mono: Monomial = ()
            for factor in re.split(r"(?<!\*)\*(?!\*)", term):
                factor = factor.strip()
                m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:(?:\^|\*\*)\s*(\d+))?", factor)
                if m:
                    mono = _mono_mul(mono, ((m.group(1), int(m.group(2) or 1)),))
                elif re.fullmatch(r"\d+", factor):
                    coef *= int(factor)
                else:
                    raise InputError(f"bad size expression {src!r}: cannot read {factor!r}")
            total[mono] = total.get(mono, 0) + coef
        return SymExpr._from_map(total)

    # -- arithmetic ---------------------------------------------------------------------
    def __add__(self, other: SymExpr | int) -> SymExpr:
        other = SymExpr.parse(other)
        m = dict(self.terms)
        for k, v in other.terms:
            m[k] = m.get(k, 0) + v
        return SymExpr._from_map(m)

    __radd__ = __add__

    def __mul__(self, other: SymExpr | int) -> SymExpr:
        other = SymExpr.parse(other)
        m: dict[Monomial, int] = {}
        for ka, va in self.terms:
            for kb, vb in other.terms:
                k = _mono_mul(ka, kb)
                m[k] = m.get(k, 0) + va * vb
        return SymExpr._from_map(m)

    __rmul__ = __mul__

    # -- queries ------------------------------------------------------------------------
    @property
    def is_constant(self) -> bool:
        return all(not mono for mono, _ in self.terms)

    @property
    def constant_value(self) -> int:
        if not self.is_constant:
            raise ValueError(f"{self} is symbolic")
        return sum(v for _, v in self.terms)

    @property
    def dims(self) -> tuple[str, ...]:
        return tuple(sorted({d for mono, _ in self.terms for d, _ in mono}))

    def evaluate(self, values: Mapping[str, int]) -> int:
        total = 0
        for mono, coef in self.terms:
            term = coef
            for d, p in mono:
                if d not in values:
                    raise InputError(f"size {self} needs a value for dim {d!r}")
                term *= int(values[d]) ** p
            total += term
        return total

    def __str__(self) -> str:
        if not self.terms:
            return "0"
        parts = []
        # Highest degree first reads naturally: 2048*b*s + 64.
        for mono, coef in sorted(self.terms, key=lambda t: (-sum(p for _, p in t[0]), t[0])):
            factors = [f"{d}^{p}" if p > 1 else d for d, p in mono]
            if coef != 1 or not factors:
                factors.insert(0, str(coef))
            parts.append("*".join(factors))
        return " + ".join(parts)

    def __repr__(self) -> str:
        return f"SymExpr({str(self)!r})"


ZERO = SymExpr()


@lru_cache(maxsize=1 << 16)
def _parse_text(src: str) -> SymExpr:
    # Readers see the same few shapes many times; parsing dominates graph building.
    return SymExpr._parse_uncached(src)


def sym_sum(exprs: Iterable[SymExpr]) -> SymExpr:
    return reduce(lambda a, b: a + b, exprs, ZERO)


def evaluate_many(
    exprs: Sequence[SymExpr], dim_names: Sequence[str], values: np.ndarray, dtype=np.int64
) -> np.ndarray:
    """Evaluate expressions for many scenarios at once.

    ``values`` is ``[n_scenarios, n_dims]`` (columns in ``dim_names`` order). Returns an
    int64 array ``[n_scenarios, len(exprs)]``. Each distinct expression and each distinct
    monomial is evaluated once, so a 100,000-buffer graph with a handful of distinct
    shapes costs almost nothing. ``dtype=float`` gives the same sums in floating point,
    which do not wrap around: callers compare them with a limit to catch int64 overflow.
    """
    values = np.asarray(values, dtype=np.int64).astype(dtype)
    values = values.reshape(values.shape[0] if values.ndim == 2 else -1, len(dim_names))
    n_s = values.shape[0]
    col = {d: i for i, d in enumerate(dim_names)}
    uniq: dict[SymExpr, int] = {}
    index = np.empty(len(exprs), dtype=np.int64)
    for i, e in enumerate(exprs):
        index[i] = uniq.setdefault(e, len(uniq))
    # Flatten every distinct expression into (expression, monomial, coefficient) triples,
    # evaluate each distinct monomial once, and sum with one bincount per scenario.
    mono_ids: dict[Monomial, int] = {}
    rows, monos, coefs = [], [], []
    for e, j in uniq.items():
        for mono, coef in e.terms:
            rows.append(j)
            monos.append(mono_ids.setdefault(mono, len(mono_ids)))
            coefs.append(coef)
    mono_vals = np.ones((n_s, max(len(mono_ids), 1)), dtype=dtype)
    for mono, k in mono_ids.items():
        for d, p in mono:
            if d not in col:
                raise InputError(f"size expression needs a value for dim {d!r}")
            mono_vals[:, k] *= values[:, col[d]] ** p
    table = np.zeros((n_s, max(len(uniq), 1)), dtype=dtype)
    if rows:
        rows_a = np.asarray(rows, dtype=np.int64)
        coef_a = (
            np.asarray(coefs, dtype=dtype)
            if dtype is not np.int64
            else np.asarray(coefs, dtype=np.int64)
        )
        contrib = mono_vals[:, np.asarray(monos, dtype=np.int64)] * coef_a
        # numpy's stubs reject a (slice, array) index for ufunc.at, which numpy accepts
        np.add.at(table, (slice(None), rows_a), contrib)  # type: ignore[arg-type]
    return table[:, index]


# -- comparison over a box of dim values -------------------------------------------------

ALWAYS_LE = "always <="
ALWAYS_GE = "always >="
DEPENDS = "depends"


def _diff_terms(a: SymExpr, b: SymExpr) -> list[tuple[Monomial, int]]:
    m = dict(a.terms)
    for k, v in b.terms:
        m[k] = m.get(k, 0) - v
    return [(k, v) for k, v in m.items() if v != 0]


def _mono_at(mono: Monomial, point: Mapping[str, int]) -> int:
    out = 1
    for d, p in mono:
        out *= point[d] ** p
    return out


def _range_of(terms, lo: Mapping[str, int], hi: Mapping[str, int]) -> tuple[int, int]:
    """Sound [min, max] of sum(coef*mono) over the integer box: monomials are monotone."""
    mn = mx = 0
    for mono, coef in terms:
        a, b = _mono_at(mono, lo), _mono_at(mono, hi)
        if coef > 0:
            mn += coef * a
            mx += coef * b
        else:
            mn += coef * b
            mx += coef * a
    return mn, mx


def compare(
    a: SymExpr, b: SymExpr, box: Mapping[str, tuple[int, int]], max_boxes: int = 20000
) -> str:
    """Decide ``a <= b`` / ``a >= b`` at every integer point of ``box``, or ``depends``.

    ``box`` maps each dim to its inclusive ``(low, high)`` range. ``always`` answers are
    proofs: a branch-and-bound search over sub-boxes, pruned with monotone interval bounds,
    finds no point where the order fails. ``depends`` comes with a witness point of each
    sign, except when a search runs out of ``max_boxes`` sub-boxes, where it is the
    conservative answer. Nothing is decided by plugging in a made-up size.
    """
    terms = _diff_terms(a, b)  # f = a - b
    if not terms:
        return ALWAYS_LE  # equal: both hold; report <= for determinism
    dims = sorted({d for mono, _ in terms for d, _ in mono})
    for d in dims:
        if d not in box:
            raise InputError(f"comparison needs a range for dim {d!r}")
    lo0 = {d: int(box[d][0]) for d in dims}
    hi0 = {d: int(box[d][1]) for d in dims}
    pos = _find_point(terms, dims, lo0, hi0, +1, max_boxes)
    if pos is False:
        return ALWAYS_LE
    neg = _find_point(terms, dims, lo0, hi0, -1, max_boxes)
    if neg is False:
        return ALWAYS_GE
    return DEPENDS


def _find_point(terms, dims, lo0, hi0, sign: int, max_boxes: int):
    """Search for a point with sign*f > 0: True (found), False (none exists), None (gave up)."""
    stack = [(lo0, hi0)]
    visited = 0
    while stack:
        lo, hi = stack.pop()
        visited += 1
        if visited > max_boxes:
            return None
        mn, mx = _range_of(terms, lo, hi)
        if (mx if sign > 0 else -mn) <= 0:
            continue  # no such point in this sub-box
        if sign * _eval_terms(terms, lo) > 0 or sign * _eval_terms(terms, hi) > 0:
            return True
        widest = max(dims, key=lambda d: hi[d] - lo[d])
        if hi[widest] == lo[widest]:
            continue  # a single point, evaluated exactly above
        mid = (lo[widest] + hi[widest]) // 2
        stack.append((lo, {**hi, widest: mid}))
        stack.append(({**lo, widest: mid + 1}, hi))
    return False


def _eval_terms(terms, point: Mapping[str, int]) -> int:
    return sum(coef * _mono_at(mono, point) for mono, coef in terms)
