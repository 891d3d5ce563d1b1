"""Integer dim expressions as StableHLO shape computations produce them.

JAX's shape-polymorphic modules compute sizes at run time from named dims (``b``, ``s``):
``get_dimension_size``, integer arithmetic, ``floordiv``/``mod`` (as calls to small
functions), ``max``/``min``. ``DimPoly`` keeps such a value exactly: a polynomial with
integer (possibly negative) coefficients over *atoms*. An atom is a dim name, a placeholder
(``?...``, a ``?`` dim not yet tied to a name) or an opaque term ``(op, args...)`` for
``floordiv``, ``mod``, ``max``, ``min`` and ``select`` that does not simplify.

Every dim is >= 1 (JAX asserts it), so every atom is >= 0; signs of many expressions are
decidable from their coefficients alone, which is all the three-valued comparisons need.

``to_symexpr`` turns a size into the project's ``SymExpr`` (non-negative coefficients over
dims): exactly where the value is such a polynomial, otherwise a documented upper bound
(negative terms dropped, ``floordiv(e, k)`` -> coefficients of ``e`` divided by ``k``
rounded up, ``mod(e, k)`` -> ``k - 1``, ``max``/``select`` -> the sum of both sides unless
one side dominates, ``min`` -> the dominated side), and a note saying so.
"""

from __future__ import annotations

from collections.abc import Mapping

from cpsched.core.symbolic import SymExpr

Atom = object  # str (dim or ``?`` placeholder) or tuple (op, DimPoly, ...)
Mono = tuple  # sorted tuple of (atom_key, atom, power)


def _akey(a) -> str:
    return a if isinstance(a, str) else repr(a)


class DimPoly:
    """Immutable integer polynomial over atoms (hashable, exact arithmetic)."""

    __slots__ = ("terms", "_hash")

    def __init__(self, terms: Mapping[Mono, int] | None = None):
        t = {m: c for m, c in (terms or {}).items() if c}
        self.terms: dict = t
        self._hash: int | None = None

    # -- construction -------------------------------------------------------------------
    @staticmethod
    def const(v: int) -> DimPoly:
        return DimPoly({(): int(v)})

    @staticmethod
    def atom(a) -> DimPoly:
        return DimPoly({((_akey(a), a, 1),): 1})

    @staticmethod
    def lift(x) -> DimPoly:
        return x if isinstance(x, DimPoly) else DimPoly.const(int(x))

    # -- queries ------------------------------------------------------------------------
    @property
    def is_const(self) -> bool:
        return all(not m for m in self.terms)

    @property
    def value(self) -> int:
        return self.terms.get((), 0)

    def atoms(self) -> set:
        return {a for m in self.terms for _, a, _ in m}

    def single_atom(self):
        """The atom if this is exactly one atom (coefficient 1, power 1), else None."""
        if len(self.terms) == 1:
            ((m, c),) = self.terms.items()
            if c == 1 and len(m) == 1 and m[0][2] == 1:
                return m[0][1]
        return None

    def nonneg(self) -> bool:
        """Provably >= 0: all coefficients are >= 0 (every atom is >= 0), or, over plain
        dims (each >= 1), all coefficients are >= 0 after writing each dim as 1 + y."""
        if all(c > 0 for c in self.terms.values()):
            return True
        atoms = self.atoms()
        if not atoms or not all(isinstance(a, str) and not a.startswith("?") for a in atoms):
            return False
        shifted = self.subst({a: DimPoly.atom(a) + 1 for a in atoms})
        return all(c > 0 for c in shifted.terms.values())

    def positive(self) -> bool:
        """Provably >= 1: non-negative with a positive constant or a monomial of dims
        (dims are >= 1)."""
        if not self.nonneg():
            return False
        if (self - 1).nonneg() and not all(c > 0 for c in self.terms.values()):
            return True
        for m, _c in self.terms.items():
            if all(
                isinstance(a, str) and not a.startswith("?") or _atom_positive(a) for _, a, _ in m
            ):
                return True
        return False

    # -- arithmetic ---------------------------------------------------------------------
    def __add__(self, o) -> DimPoly:
        o = DimPoly.lift(o)
        t = dict(self.terms)
        for m, c in o.terms.items():
            t[m] = t.get(m, 0) + c
        return DimPoly(t)

    __radd__ = __add__

    def __neg__(self) -> DimPoly:
        return DimPoly({m: -c for m, c in self.terms.items()})

    def __sub__(self, o) -> DimPoly:
        return self + (-DimPoly.lift(o))

    def __rsub__(self, o) -> DimPoly:
        return DimPoly.lift(o) - self

    def __mul__(self, o) -> DimPoly:
        o = DimPoly.lift(o)
        t: dict = {}
        for ma, ca in self.terms.items():
            for mb, cb in o.terms.items():
                m = _mono_mul(ma, mb)
                t[m] = t.get(m, 0) + ca * cb
        return DimPoly(t)

    __rmul__ = __mul__

    def __eq__(self, o) -> bool:
        if not isinstance(o, DimPoly):
            o = DimPoly.lift(o) if isinstance(o, int) else None
            if o is None:
                return NotImplemented
        return self.terms == o.terms

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self.terms.items()))
        return self._hash

    def subst(self, mapping: Mapping[str, DimPoly]) -> DimPoly:
        """Replace placeholder/dim atoms by polynomials (opaque atoms recursively)."""
        if not mapping:
            return self
        out = DimPoly.const(0)
        for m, c in self.terms.items():
            term = DimPoly.const(c)
            for _, a, p in m:
                if isinstance(a, str):
                    r = mapping.get(a)
                    base = r if r is not None else DimPoly.atom(a)
                else:
                    base = _rebuild(a, mapping)
                for _ in range(p):
                    term = term * base
            out = out + term
        return out

    def __str__(self) -> str:
        if not self.terms:
            return "0"
        parts = []
        for m, c in sorted(self.terms.items(), key=lambda t: (-len(t[0]), str(t[0]))):
            fs = [(_atom_str(a) + (f"^{p}" if p > 1 else "")) for _, a, p in m]
            if c == -1 and fs:
                s = "-" + "*".join(fs)
            elif c != 1 or not fs:
                s = "*".join([str(c)] + fs)
            else:
                s = "*".join(fs)
            parts.append(s)
        return " + ".join(parts).replace("+ -", "- ")

    __repr__ = __str__


def _mono_mul(a: Mono, b: Mono) -> Mono:
    d: dict = {}
    for k, at, p in a + b:
        if k in d:
            d[k] = (at, d[k][1] + p)
        else:
            d[k] = (at, p)
    return tuple(sorted((k, at, p) for k, (at, p) in d.items()))


def _atom_str(a) -> str:
    if isinstance(a, str):
        return a
    op, *args = a
    return f"{op}({', '.join(str(x) for x in args)})"


def _atom_positive(a) -> bool:
    if isinstance(a, str):
        return not a.startswith("?")
    op = a[0]
    if op in ("max", "select"):
        return a[1].positive() or a[2].positive()
    if op == "min":
        return a[1].positive() and a[2].positive()
    return False


def _rebuild(a, mapping) -> DimPoly:
    op, *args = a
    args = [x.subst(mapping) if isinstance(x, DimPoly) else x for x in args]
    if op == "floordiv":
        return floordiv(args[0], args[1])
    if op == "mod":
        return mod(args[0], args[1])
    if op == "max":
        return dmax(args[0], args[1])
    if op == "min":
        return dmin(args[0], args[1])
    return DimPoly.atom((op, *args))


# -- operations that may stay opaque -----------------------------------------------------


def floordiv(a: DimPoly, k) -> DimPoly:
    k = DimPoly.lift(k)
    if not k.is_const or k.value <= 0:
        return DimPoly.atom(("floordiv", a, k))
    kv = k.value
    if kv == 1:
        return a
    if a.is_const:
        return DimPoly.const(a.value // kv)
    if all(c % kv == 0 for c in a.terms.values()):
        return DimPoly({m: c // kv for m, c in a.terms.items()})
    # exact split: the part divisible by k comes out, the rest stays under floordiv when
    # it is provably in [0, k) -- only for a constant remainder
    div = {m: c // kv for m, c in a.terms.items() if m}
    rest = {m: c % kv for m, c in a.terms.items() if m}
    if not any(rest.values()):
        return DimPoly(div) + DimPoly.const(a.value // kv)
    return DimPoly.atom(("floordiv", a, k))


def mod(a: DimPoly, k) -> DimPoly:
    k = DimPoly.lift(k)
    if k.is_const and k.value > 0:
        kv = k.value
        if a.is_const:
            return DimPoly.const(a.value % kv)
        if all(c % kv == 0 for c in a.terms.values()):
            return DimPoly.const(0)
    return DimPoly.atom(("mod", a, k))


def dominates(a: DimPoly, b: DimPoly) -> bool:
    """``a >= b`` for every value of the atoms (a - b has non-negative coefficients)."""
    return (a - b).nonneg() or a == b


def _extreme(kind: str, a: DimPoly, b: DimPoly) -> DimPoly:
    """``max(a, b)`` or ``min(a, b)``: the one that dominates (is dominated) where one does,
    else an opaque ``(kind, a, b)`` atom with its arguments in a fixed order."""
    for hi, lo in ((a, b), (b, a)):
        if dominates(hi, lo):
            return hi if kind == "max" else lo
    return DimPoly.atom((kind,) + tuple(sorted((a, b), key=str)))


def dmax(a: DimPoly, b: DimPoly) -> DimPoly:
    return _extreme("max", a, b)


def dmin(a: DimPoly, b: DimPoly) -> DimPoly:
    return _extreme("min", a, b)


def select(pred, a: DimPoly, b: DimPoly) -> DimPoly:
    """``pred ? a : b`` with ``pred`` True/False/None (unknown)."""
    if pred is True or a == b:
        return a
    if pred is False:
        return b
    return DimPoly.atom(("select", a, b))


def compare(direction: str, a: DimPoly, b: DimPoly):
    """Three-valued comparison: True, False or None (cannot tell from the atoms alone)."""
    d = a - b
    if d.is_const:
        v = d.value
        return {"EQ": v == 0, "NE": v != 0, "LT": v < 0, "LE": v <= 0, "GT": v > 0, "GE": v >= 0}[
            direction
        ]
    ge0, le0 = d.nonneg(), (-d).nonneg()
    gt0, lt0 = d.positive(), (-d).positive()
    table = {
        "GE": True if ge0 else (False if lt0 else None),
        "GT": True if gt0 else (False if le0 else None),
        "LE": True if le0 else (False if gt0 else None),
        "LT": True if lt0 else (False if ge0 else None),
        "EQ": False if (gt0 or lt0) else None,
        "NE": True if (gt0 or lt0) else None,
    }
    return table[direction]


# -- to the project's SymExpr ------------------------------------------------------------


def upper_bound(p: DimPoly) -> DimPoly:
    """A polynomial over plain dims with non-negative coefficients, >= ``p`` everywhere
    (equal to ``p`` when ``p`` already is one)."""
    out = DimPoly.const(0)
    for m, c in p.terms.items():
        if c < 0:
            continue  # every monomial is >= 0: dropping a negative term only raises the value
        term = DimPoly.const(c)
        for _, a, pw in m:
            base = DimPoly.atom(a) if isinstance(a, str) else _atom_bound(a)
            for _ in range(pw):
                term = term * base
        out = out + term
    return out


def _atom_bound(a) -> DimPoly:
    op, *args = a
    if op == "floordiv":
        e, k = upper_bound(args[0]), args[1]
        if k.is_const and k.value > 0:
            kv = k.value
            return DimPoly({m: -(-c // kv) for m, c in e.terms.items()})
        return e  # a divisor >= 1 never increases a non-negative value
    if op == "mod":
        k = args[1]
        if k.is_const and k.value > 0:
            return DimPoly.const(k.value - 1)
        return upper_bound(args[0])
    if op == "min":
        return (
            upper_bound(args[0])
            if dominates(upper_bound(args[1]), upper_bound(args[0]))
            else upper_bound(args[1])
        )
    # max, select and anything else: the sum bounds the larger of two non-negative values
    out = DimPoly.const(0)
    for x in args:
        if isinstance(x, DimPoly):
            out = out + upper_bound(x)
    return out


def is_exact(p: DimPoly) -> bool:
    return all(c > 0 for c in p.terms.values()) and all(isinstance(a, str) for a in p.atoms())


def to_symexpr(p: DimPoly) -> tuple[SymExpr, bool]:
    """``(SymExpr, exact)``: the value itself when it is a non-negative polynomial over
    dims, else the upper bound described in the module docstring."""
    exact = is_exact(p) or p.is_const and p.value >= 0
    q = p if exact else upper_bound(p)
    expr = SymExpr.const(0)
    for m, c in q.terms.items():
        term = SymExpr.const(c)
        for _, a, pw in m:
            for _ in range(pw):
                term = term * SymExpr.dim(a)
        expr = expr + term
    return expr, exact
