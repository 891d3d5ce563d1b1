"""Several compiled buckets of one program -> one symbolic graph, where their structure agrees.

XLA compiles every shape bucket on its own (and may fuse differently per bucket). Given the
optimized modules of one program at several values of one dim (``a.s128.hlo``,
``a.s512.hlo``, ...), ``fit_buckets`` matches their instructions by name and checks that the
structure agrees (opcodes, operands, buffers, users, live-in/out). Where it does, every size
becomes a polynomial in the dim, fitted exactly with rational arithmetic:

- a buffer of an array-shaped instruction: each shape dimension is fitted as ``a*x + c``
  (checked on every given module from three on), the size is the element size times their
  product;
- anything else (tuple pieces, transients, collective payloads): the polynomial of least
  degree through the points, checked on the points it was not fitted to where there are any.

A size fit whose coefficients are not non-negative integers, or that misses a module, is
reported as a difference, never used (costs -- flops, bytes accessed, collective payloads --
that do not fit take the largest module's value). Where the structure does not agree the report lists the
instructions that differ and no graph is built.

Constants may differ in value between buckets (the ``1/b`` of a mean loss) and XLA may then
number them differently (``constant.7`` here, ``constant.9`` there, as constant folding and
deduplication go): an entry constant found in one module only is matched to the one
constant of the first module with the same shape and the same users, and renamed to it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from cpsched.core.errors import InputError
from cpsched.core.graph import Collective, Graph, OpKind
from cpsched.core.symbolic import SymExpr
from cpsched.readers import read_graph

Poly = list  # coefficients, constant first (Fractions)


@dataclass
class BucketFit:
    dim: str
    values: list[int]
    paths: list[str]
    graph: Graph | None
    differences: list[str] = field(default_factory=list)
    # per difference: (what differs, the instruction's opcode), for the summary
    kinds: list[tuple[str, str]] = field(default_factory=list)
    renamed: list[str] = field(default_factory=list)  # "a.b32.hlo: constant.9 as constant.7"
    fitted: int = 0  # sizes that vary with the dim
    checked: int = 0  # ... of which checked on a module not used to fit them
    constant: int = 0  # sizes equal in every module
    orders_agree: bool = True

    @property
    def ok(self) -> bool:
        return self.graph is not None

    def differ(self, what: str, opcode: str, text: str) -> None:
        self.differences.append(text)
        self.kinds.append((what, opcode))

    def summary(self, first: int = 5, width: int = 160) -> list[str]:
        """The differences in a few lines: counts by what differs and by opcode, then the
        first ``first`` of them, each cut to ``width`` characters."""
        from collections import Counter

        lines = []
        by_what: dict[str, Counter] = {}
        for what, op in self.kinds:
            by_what.setdefault(what, Counter())[op] += 1
        for what, ops in by_what.items():
            top = ", ".join(f"{op} {n}" for op, n in ops.most_common(6))
            more = len(ops) - 6
            lines.append(
                f"{sum(ops.values())} {what} ({top}{f', {more} more opcodes' if more > 0 else ''})"
            )
        shown = self.differences[:first]
        lines.append(f"first {len(shown)}:" if len(self.differences) > first else "all:")
        lines += ["  " + (d if len(d) <= width else d[: width - 3] + "...") for d in shown]
        return lines


# -- polynomial fitting ------------------------------------------------------------------------


def _interpolate(xs: Sequence[int], ys: Sequence[int]) -> Poly:
    """Coefficients of the polynomial of degree < len(xs) through the points (Newton)."""
    n = len(xs)
    coef = [Fraction(y) for y in ys]
    for j in range(1, n):
        for i in range(n - 1, j - 1, -1):
            coef[i] = (coef[i] - coef[i - 1]) / (xs[i] - xs[i - j])
    poly: Poly = [Fraction(0)] * n
    for i in range(n - 1, -1, -1):  # expand Newton form to monomial form
        # poly = poly * (x - xs[i]) + coef[i]
        new = [Fraction(0)] * n
        for k in range(n - 1):
            new[k + 1] += poly[k]
            new[k] -= poly[k] * xs[i]
        new[0] += coef[i]
        poly = new
    return poly


def _eval(p: Poly, x: int) -> Fraction:
    return sum((c * x**k for k, c in enumerate(p)), Fraction(0))


def fit_polynomial(
    xs: Sequence[int], ys: Sequence[int], max_degree: int | None = None
) -> tuple[Poly, bool] | None:
    """Least-degree polynomial through all points: ``(coefficients, checked)``; checked
    means at least one point was not needed to fit it. None if none fits."""
    pts = sorted(zip(xs, ys))
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    top = len(xs) - 1 if max_degree is None else min(max_degree, len(xs) - 1)
    for d in range(top + 1):
        p = _interpolate(xs[: d + 1], ys[: d + 1])
        if all(_eval(p, x) == y for x, y in zip(xs, ys)):
            return p, d + 1 < len(xs)
    return None


def _mul(a: Poly, b: Poly) -> Poly:
    out = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


def to_symexpr(p: Poly, dim: str) -> SymExpr | None:
    """The polynomial as a ``SymExpr`` if its coefficients are non-negative integers."""
    out = SymExpr.const(0)
    for k, c in enumerate(p):
        if c.denominator != 1 or c < 0:
            return None
        term = SymExpr.const(int(c))
        for _ in range(k):
            term = term * SymExpr.dim(dim)
        out = out + term
    return out


_SHAPE_RE = re.compile(r"^([a-z]+\d*)\[([0-9,]*)\]")


def _dims_of(shape_text: str | None) -> list[int] | None:
    if not shape_text:
        return None
    m = _SHAPE_RE.match(shape_text)
    if not m:
        return None
    return [int(x) for x in m.group(2).split(",") if x] if m.group(2) else []


# -- dim values from file names ----------------------------------------------------------------


def dim_from_names(paths: Sequence[str]) -> tuple[str, list[int]]:
    """``a.s128.hlo, a.s512.hlo`` -> ``("s", [128, 512])``: the one name+number token that
    differs between the file names."""
    tokens = []
    for p in paths:
        stem = os.path.basename(p)
        found: dict[str, int] = {}
        for part in re.split(r"[._\-]", stem):
            m = re.fullmatch(r"([A-Za-z]+)(\d+)", part)
            if m:
                found[m.group(1)] = int(m.group(2))
        tokens.append(found)
    common = set(tokens[0]).intersection(*tokens[1:]) if tokens else set()
    varying = [k for k in sorted(common) if len({t[k] for t in tokens}) > 1]
    if len(varying) != 1:
        raise InputError(
            "cannot tell the dim values from the file names (expected one token "
            "such as s128 that differs between them): give --dim NAME=V1,V2,... "
            "in the order of the files"
        )
    return varying[0], [t[varying[0]] for t in tokens]


# -- matching and fitting ----------------------------------------------------------------------


def _signature(g: Graph, i: int) -> tuple:
    return (
        g.opcodes[i],
        int(g.kinds[i]),
        tuple(g.op_names[o] for o in g.operands(i)),
        tuple(sorted(g.op_names[o] for o in g.control_preds(i))),
    )


def _constant_key(g: Graph, i: int) -> tuple:
    return (g.attrs(i).get("shape"), tuple(sorted(g.op_names[int(u)] for u in g.succs(i))))


def _match_renamed_constants(graphs: list[Graph], short: list[str]) -> list[str]:
    """Rename, in ``graphs[1:]``, each constant not in ``graphs[0]`` to the one constant of
    ``graphs[0]`` (missing from that module) with the same shape and users. Returns what
    was renamed."""
    g0 = graphs[0]
    names0 = set(g0.op_names)
    done = []
    for k in range(1, len(graphs)):
        g = graphs[k]
        names = set(g.op_names)
        free: dict[tuple, list[int]] = {}
        for i in range(g0.n_ops):
            if int(g0.kinds[i]) == OpKind.CONSTANT and g0.op_names[i] not in names:
                free.setdefault(_constant_key(g0, i), []).append(i)
        new = list(g.op_names)
        for i in range(g.n_ops):
            if int(g.kinds[i]) != OpKind.CONSTANT or g.op_names[i] in names0:
                continue
            cands = free.get(_constant_key(g, i), [])
            if len(cands) == 1:
                new[i] = g0.op_names[cands.pop()]
                done.append(f"{short[k]}: {g.op_names[i]} as {new[i]}")
        if new != list(g.op_names):
            graphs[k] = g.with_(op_names=tuple(new))
    return done


def _buffers_by_key(g: Graph) -> dict[tuple[str, int], int]:
    out: dict[tuple[str, int], int] = {}
    seen: dict[int, int] = {}
    for j in range(g.n_buffers):
        d = int(g.buffer_def[j])
        k = seen.get(d, 0)
        seen[d] = k + 1
        out[(g.op_names[d], k)] = j
    return out


def _match_instructions(res: BucketFit, graphs: list[Graph], short: list[str]) -> None:
    """Step 1 of the fit: the same instruction names, with the same opcodes and operands,
    in every module; each difference goes into ``res``."""
    names = [set(g.op_names) for g in graphs]
    union = set().union(*names)
    for n in sorted(union - names[0].intersection(*names[1:])):
        have = [s for s, ns in zip(short, names) if n in ns]
        g = graphs[[n in ns for ns in names].index(True)]
        res.differ(
            "instructions in some modules only",
            g.opcodes[g.op_index(n)],
            f"{n} ({g.opcodes[g.op_index(n)]}): only in {', '.join(have)}",
        )
    for n in sorted(set.intersection(*names)):
        sigs = [_signature(g, g.op_index(n)) for g in graphs]
        if any(s != sigs[0] for s in sigs[1:]):
            what = "opcode" if len({s[0] for s in sigs}) > 1 else "operands"
            res.differ(
                f"instructions whose {what} differ",
                sigs[0][0],
                f"{n}: {what} differ ("
                + "; ".join(f"{s}: {sg[0]}({', '.join(sg[2])})" for s, sg in zip(short, sigs))
                + ")",
            )


def _fit_buffer_sizes(
    res: BucketFit,
    graphs: list[Graph],
    idx: list[list[int]],
    bkeys: list[dict],
    dim: str,
) -> list[SymExpr | None]:
    """Step 2 of the fit: every buffer's size as a polynomial in ``dim`` (None where it is
    none, or where its users or live range differ between modules: noted in ``res``)."""
    g0 = graphs[0]
    sizes: list[SymExpr | None] = []  # None where the fit failed (then res.differences)
    order0 = {v: k for k, v in bkeys[0].items()}
    for j0 in range(g0.n_buffers):
        key = order0[j0]
        js = [b[key] for b in bkeys]
        users = [sorted(g.op_names[u] for u in g.buffer_users(j)) for g, j in zip(graphs, js)]
        flags = [
            (bool(g.buffer_live_in[j]), bool(g.buffer_live_out[j]), int(g.buffer_space[j]))
            for g, j in zip(graphs, js)
        ]
        if any(u != users[0] for u in users[1:]) or any(f != flags[0] for f in flags[1:]):
            res.differ(
                "buffers whose users or live range differ",
                g0.opcodes[g0.op_index(key[0])],
                f"{key[0]}: users or live range of buffer {key[1]} differ",
            )
            continue
        ys = [g.buffer_sizes[j].constant_value for g, j in zip(graphs, js)]
        e = _fit_size(
            res,
            graphs,
            idx,
            key[0],
            ys,
            d0=g0.op_index(key[0]),
            single=int((g0.buffer_def == g0.op_index(key[0])).sum()) == 1,
        )
        if e is None:
            res.differ(
                "sizes that are no polynomial",
                g0.opcodes[g0.op_index(key[0])],
                f"{key[0]}: size {', '.join(map(str, ys))} bytes is not a "
                f"polynomial in {dim} with non-negative integer coefficients",
            )
        sizes.append(e)
    return sizes


def fit_buckets(
    paths: Sequence[str],
    dim: str | None = None,
    values: Sequence[int] | None = None,
    graphs: Sequence[Graph] | None = None,
) -> BucketFit:
    """Read the modules (or take ``graphs``), match them and fit one symbolic graph."""
    if len(paths) < 2:
        raise InputError("give at least two modules of the same program at different sizes")
    if dim is None or values is None:
        dim, values = dim_from_names(paths)
    values = [int(v) for v in values]
    if len(values) != len(paths):
        raise InputError(f"{len(values)} values of {dim} for {len(paths)} modules")
    if len(set(values)) != len(values):
        raise InputError(f"two modules have the same {dim}: {values}")
    if graphs is None:
        graphs = [read_graph(p) for p in paths]
    for p, g in zip(paths, graphs):
        if g.dims:
            raise InputError(
                f"already symbolic (dims {', '.join(g.dims)}): expected one "
                "compiled module per bucket",
                path=p,
            )
    res = BucketFit(dim, values, list(paths), None)
    short = [os.path.basename(p) for p in paths]
    graphs = list(graphs)
    res.renamed = _match_renamed_constants(graphs, short)
    g0 = graphs[0]
    _match_instructions(res, graphs, short)
    if res.differences:
        return res
    idx = [[g.op_index(n) for n in g0.op_names] for g in graphs]  # op i of g0 -> op in g
    # 2. buffers: same keys, users, live flags
    bkeys = [_buffers_by_key(g) for g in graphs]
    if any(set(b) != set(bkeys[0]) for b in bkeys[1:]):
        for key in sorted(set().union(*bkeys) - set(bkeys[0]).intersection(*bkeys[1:])):
            g = next(g for g, b in zip(graphs, bkeys) if key in b)
            res.differ(
                "buffers in some modules only",
                g.opcodes[g.op_index(key[0])],
                f"{key[0]}: buffer {key[1]} only in some modules",
            )
        return res
    sizes = _fit_buffer_sizes(res, graphs, idx, bkeys, dim)
    transient = []
    for i in range(g0.n_ops):
        ys = [g.transient[idx[k][i]].constant_value for k, g in enumerate(graphs)]
        e = _fit_plain(res, ys)
        if e is None:
            res.differ(
                "transients that are no polynomial",
                g0.opcodes[i],
                f"{g0.op_names[i]}: transient {ys} is not a polynomial in {dim}",
            )
        transient.append(e)
    if res.differences:
        return res
    flops = tuple(_fit_cost(graphs, idx, i, "flops", res) for i in range(g0.n_ops))
    nbytes = tuple(_fit_cost(graphs, idx, i, "bytes_accessed", res) for i in range(g0.n_ops))
    colls = {}
    for i, c in g0.collectives.items():
        ys = [g.collectives[idx[k][i]].bytes.constant_value for k, g in enumerate(graphs)]
        e = _fit_plain(res, ys, count=False)
        colls[i] = Collective(
            c.kind,
            e if e is not None else SymExpr.const(max(ys)),
            c.group_size,
            c.replica_groups,
            c.channel_id,
            c.is_sync,
        )
    orders = [g.original_order for g in graphs]
    given = [o for o in orders if o is not None]
    if len(given) == len(orders):
        mapped = [tuple(g0.op_names[i] for i in given[0])] + [
            tuple(g.op_names[i] for i in o) for g, o in zip(graphs[1:], given[1:])
        ]
        res.orders_agree = all(m == mapped[0] for m in mapped[1:])
    meta = dict(g0.meta)
    meta["buckets"] = {
        "dim": dim,
        "values": values,
        "files": short,
        "orders_agree": res.orders_agree,
    }
    res.graph = g0.with_(
        buffer_sizes=tuple(sizes),
        transient=tuple(transient),
        flops=flops,
        bytes_accessed=nbytes,
        collectives=colls,
        meta=meta,
    )
    return res


def _fit_plain(res: BucketFit, ys: Sequence[int], count: bool = True) -> SymExpr | None:
    if all(y == ys[0] for y in ys):
        if count:
            res.constant += 1
        return SymExpr.const(ys[0])
    fit = fit_polynomial(res.values, ys)
    if fit is None:
        return None
    e = to_symexpr(fit[0], res.dim)
    if e is not None and count:
        res.fitted += 1
        res.checked += int(fit[1])
    return e


def _fit_size(
    res: BucketFit, graphs, idx, name: str, ys: Sequence[int], d0: int, single: bool
) -> SymExpr | None:
    if all(y == ys[0] for y in ys):
        res.constant += 1
        return SymExpr.const(ys[0])
    if single:  # fit every shape dimension (degree <= 1), checked on every module
        shapes = [_dims_of(g.attrs(idx[k][d0]).get("shape")) for k, g in enumerate(graphs)]
        dims = [s for s in shapes if s is not None]
        if len(dims) == len(shapes) and all(len(s) == len(dims[0]) for s in dims) and dims[0]:
            poly: Poly = [Fraction(1)]
            ok = True
            checked = len(res.values) > 2
            for pos in range(len(dims[0])):
                f = fit_polynomial(res.values, [s[pos] for s in dims], max_degree=1)
                if f is None:
                    ok = False
                    break
                poly = _mul(poly, f[0])
            if ok:
                per = {
                    Fraction(y) / _eval(poly, x) if _eval(poly, x) else None
                    for x, y in zip(res.values, ys)
                }
                if len(per) == 1 and None not in per:
                    e = to_symexpr([c * next(iter(per)) for c in poly], res.dim)
                    if e is not None:
                        res.fitted += 1
                        res.checked += int(checked)
                        return e
    return _fit_plain(res, ys)


def _fit_cost(graphs, idx, i: int, attr: str, res: BucketFit) -> SymExpr:
    ys = [getattr(g, attr)[idx[k][i]] for k, g in enumerate(graphs)]
    if not all(y.is_constant for y in ys):
        return ys[-1]
    vals = [y.constant_value for y in ys]
    if all(v == vals[0] for v in vals):
        return SymExpr.const(vals[0])
    fit = fit_polynomial(res.values, vals)
    e = to_symexpr(fit[0], res.dim) if fit else None
    return e if e is not None else SymExpr.const(max(vals))  # a cost, not a size: bound


__all__ = ["BucketFit", "fit_buckets", "fit_polynomial", "dim_from_names", "to_symexpr"]
