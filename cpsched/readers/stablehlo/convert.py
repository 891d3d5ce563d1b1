"""StableHLO / MHLO op tree -> ``Graph``, with ``?`` dims sized by named dims.

Memory semantics follow the HLO reader (``cpsched.readers.hlo.convert``):
- entry arguments are parameters: live-in, and live-out unless donated
  (``tf.aliasing_output`` / ``jax.buffer_donor``); returned values are live-out;
- constants and everything computed only from constants and dims (shape computations,
  ``get_dimension_size``, ``shape_assertion``) are folded: no op, no buffer, as XLA folds
  them once the shapes are known;
- forwarding ops define no buffer: ``reshape``/``dynamic_reshape`` (a row-major reshape is
  a bitcast in XLA), same-width ``bitcast_convert``, ``optimization_barrier``,
  ``get_tuple_element``/``tuple`` and ``@Sharding`` annotations;
- in-place ops (``dynamic_update_slice``, ``scatter``, a ``while``'s loop state,
  ``output_operand_aliases`` of custom calls) write over their operand's buffer when no other
  use of it follows; earlier readers of the old value get an ordering edge to the writer;
  otherwise the result has its own buffer (the copy XLA would insert);
- ``call`` is inlined (XLA inlines calls before scheduling); the regions of ``while``,
  ``case`` and ``if`` are the op's transient: their own peak in program order beyond what the
  caller holds (the loop state, the branch results, values from outside the region);
- bodies of ``reduce``, ``sort``, ``scatter``, ``all_reduce``, ... are scalar functions and
  allocate nothing.

Symbolic dims: the ``?`` dims of the entry arguments become placeholders, tied to JAX's
dim names where the module says so: a value passed to a function argument marked
``jax.global_constant = "b"`` is dim ``b``; a ``shape_assertion`` on ``x == y`` unifies its
two sides; elementwise operands and dot dimensions unify. Every other ``?`` is computed
from its operands (``dynamic_broadcast_in_dim``/``dynamic_iota``/``dynamic_reshape`` from
their shape operand, ``real_dynamic_slice``, ``dynamic_pad``, ``dynamic_gather``,
``concatenate``, ``dot_general``, ``transpose``, ``reduce``, collectives, ...). Sizes that
are not polynomials with non-negative coefficients (``s - 1``, ``floordiv(b, 2)``,
``max(s, 128)``) become a stated upper bound, listed in ``graph.meta["approximations"]``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, NoReturn

from cpsched.core import opcodes
from cpsched.core.errors import InputError
from cpsched.core.graph import Collective, Graph, GraphBuilder, OpKind
from cpsched.core.symbolic import SymExpr
from cpsched.readers.stablehlo import dimexpr as dx
from cpsched.readers.stablehlo.dimexpr import DimPoly
from cpsched.readers.stablehlo.parser import (
    Block,
    Func,
    Module,
    Op,
    parse_mlir_text,
    read_mlir_module,
)

# -- types -------------------------------------------------------------------------------

ELEMENT_BYTES = {
    "f64": 8,
    "f32": 4,
    "f16": 2,
    "bf16": 2,
    "tf32": 4,
    "i64": 8,
    "i32": 4,
    "i16": 2,
    "i8": 1,
    "i4": 1,
    "i2": 1,
    "i1": 1,
    "ui64": 8,
    "ui32": 4,
    "ui16": 2,
    "ui8": 1,
    "ui4": 1,
    "ui2": 1,
    "si64": 8,
    "si32": 4,
    "si16": 2,
    "si8": 1,
    "index": 8,
}
_TENSOR_RE = re.compile(r"tensor<(.*)>$", re.S)


@dataclass(frozen=True)
class TType:
    dims: tuple[int | None, ...] | None  # None: not a tensor (token, tuple)
    etype: str

    @property
    def elem_bytes(self) -> int:
        e = self.etype
        if e in ELEMENT_BYTES:
            return ELEMENT_BYTES[e]
        if e.startswith("f8") or e.startswith("f4") or e.startswith("f6"):
            return 1
        m = re.match(r"complex<(\w+)>", e)
        if m:
            return 2 * ELEMENT_BYTES.get(m.group(1), 4)
        m = re.match(r"[a-z]+(\d+)", e)
        if m:
            return max(1, (int(m.group(1)) + 7) // 8)
        return 4


def parse_type(text: str) -> TType:
    m = _TENSOR_RE.match(text.strip())
    if not m:
        return TType(None, text.strip())
    body = m.group(1)
    depth = 0
    for k, ch in enumerate(body):  # cut an encoding: tensor<?x4xf32, #stablehlo.bounds<..>>
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == "," and depth == 0:
            body = body[:k]
            break
    parts = []
    depth = 0
    cur = ""
    for ch in body:  # split on 'x' outside complex<...>
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        if ch == "x" and depth == 0 and (cur == "?" or (cur.isascii() and cur.isdigit())):
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    dims = tuple(None if p == "?" else int(p) for p in parts)
    return TType(dims, cur.strip())


# -- values --------------------------------------------------------------------------------


@dataclass
class Val:
    shape: tuple[DimPoly, ...] | None
    etype: str
    build: Any = None  # the _Build that owns ``bufs``/``op``; None: held outside
    bufs: tuple[int, ...] = ()
    op: int | None = None
    folded: bool = False  # known at compile time: no op, no buffer
    known: list | None = None  # flattened contents (DimPoly / bool / None) if folded
    eq: tuple[DimPoly, DimPoly] | None = None  # for a folded ``compare EQ``
    readonly: bool = False  # a non-donated entry parameter

    def elements(self) -> DimPoly:
        out = DimPoly.const(1)
        for d in self.shape or ():
            out = out * d
        return out

    def nbytes(self) -> DimPoly:
        if self.shape is None:
            return DimPoly.const(0)
        return self.elements() * TType(None, self.etype).elem_bytes


def _window_dim(size, window, stride, base_dilation, window_dilation, pad_lo, pad_hi):
    """One output dim of a windowed op (reduce_window, convolution): the dilated, padded
    input against the dilated window, stepped by ``stride``."""
    full = (size - 1) * base_dilation + 1 + pad_lo + pad_hi
    eff = (window - 1) * window_dilation + 1
    return dx.floordiv(full - eff, stride) + 1


def _parameter_of(b: _Build, v: Val) -> bool:
    """Whether ``v`` is the value of a parameter op of ``b`` (not folded, not from outside)."""
    return v.build is b and v.op is not None and b.ops[v.op].kind == OpKind.PARAMETER


def _static_count(shape) -> int | None:
    if shape is None:
        return None
    n = 1
    for d in shape:
        if not d.is_const:
            return None
        n *= d.value
    return n


# -- flat graph under construction -----------------------------------------------------------


@dataclass
class _OpRec:
    name: str
    opcode: str
    kind: OpKind
    operands: list[int] = field(default_factory=list)
    control: list[int] = field(default_factory=list)
    transient: list[DimPoly] = field(default_factory=list)  # candidates: the max counts
    flops: DimPoly = field(default_factory=lambda: DimPoly.const(0))
    bytes: DimPoly = field(default_factory=lambda: DimPoly.const(0))
    attrs: dict = field(default_factory=dict)
    collective: tuple | None = None


@dataclass
class _BufRec:
    name: str
    d: int
    size: DimPoly
    users: list[int] = field(default_factory=list)
    live_in: bool = False
    live_out: bool = False
    held: bool = False  # region: the caller holds it (not part of the region's peak)


class _Build:
    def __init__(self, parent: _Build | None = None):
        self.parent = parent
        self.ops: list[_OpRec] = []
        self.bufs: list[_BufRec] = []
        self.pending: Counter = Counter()
        self.captured: list[Val] = []
        self.returned_ops: set[int] = set()
        self.names: set[str] = set() if parent is None else parent.names

    def add_op(self, name: str, opcode: str, kind: OpKind) -> int:
        base, k = name, 1
        while name in self.names:
            k += 1
            name = f"{base}.{k}"
        self.names.add(name)
        self.ops.append(_OpRec(name, opcode, kind))
        return len(self.ops) - 1

    def add_buf(self, d: int, size: DimPoly, name: str) -> int:
        self.bufs.append(_BufRec(name, d, size))
        return len(self.bufs) - 1

    def use(self, op: int, v: Val) -> None:
        if v.build is self:
            if v.op is not None and v.op != op and v.op not in self.ops[op].operands:
                self.ops[op].operands.append(v.op)
            for b in v.bufs:
                if op not in self.bufs[b].users and self.bufs[b].d != op:
                    self.bufs[b].users.append(op)
        elif v.build is not None and not v.folded:
            self.captured.append(v)

    def is_ancestor_of(self, other: _Build | None) -> bool:
        while other is not None:
            if other is self:
                return True
            other = other.parent
        return False


# -- op classes ----------------------------------------------------------------------------

ELEMENTWISE = opcodes.stablehlo_names(opcodes.ELEMENTWISE_MATH - {"clz", "stochastic-convert"}) | {
    "count_leading_zeros",
    "map",
    "uniform_quantize",
    "uniform_dequantize",
    # chlo
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "bessel_i1e",
    "conj",
    "cosh",
    "digamma",
    "erf",
    "erf_inv",
    "erfc",
    "is_inf",
    "is_neg_inf",
    "is_pos_inf",
    "lgamma",
    "next_after",
    "polygamma",
    "sinh",
    "zeta",
    "square",
    "broadcast_add",
    "broadcast_subtract",
    "broadcast_multiply",
    "broadcast_divide",
    "broadcast_maximum",
    "broadcast_minimum",
    "broadcast_compare",
    "broadcast_and",
    "broadcast_or",
    "broadcast_select",
    "broadcast_power",
    "broadcast_remainder",
    "broadcast_atan2",
    "broadcast_xor",
    "broadcast_shift_left",
    "broadcast_complex",
}
FORWARDING = {
    "reshape",
    "dynamic_reshape",
    "optimization_barrier",
    "get_tuple_element",
    "tuple",
    "sharding_constraint",
    "reshard",
}
SAME_AS_OPERAND0 = {
    "reverse",
    "sort",
    "scatter",
    "dynamic_update_slice",
    "all_reduce",
    "collective_permute",
    "collective_broadcast",
    "cross_replica_sum",
    "select_and_scatter",
    "cholesky",
    "triangular_solve",
    "copy",
    "rng_bit_generator",
    "batch_norm_training",
    "batch_norm_inference",
    "batch_norm_grad",
    "fft",
    "top_k",
    "cumsum",
    "cumprod",
    "cummax",
}
COLLECTIVES = {
    "all_reduce": "all-reduce",
    "all_gather": "all-gather",
    "reduce_scatter": "reduce-scatter",
    "all_to_all": "all-to-all",
    "collective_permute": "collective-permute",
    "collective_broadcast": "collective-broadcast",
    "cross_replica_sum": "all-reduce",
}
OTHER_KNOWN = {
    "constant",
    "iota",
    "dynamic_iota",
    "broadcast_in_dim",
    "dynamic_broadcast_in_dim",
    "broadcast",
    "transpose",
    "dot",
    "dot_general",
    "einsum",
    "unary_einsum",
    "concatenate",
    "slice",
    "dynamic_slice",
    "real_dynamic_slice",
    "pad",
    "dynamic_pad",
    "gather",
    "dynamic_gather",
    "reduce",
    "reduce_window",
    "convolution",
    "dynamic_conv",
    "get_dimension_size",
    "set_dimension_size",
    "custom_call",
    "while",
    "case",
    "if",
    "call",
    "return",
    "bitcast_convert",
    "partition_id",
    "replica_id",
    "after_all",
    "create_token",
    "infeed",
    "outfeed",
    "send",
    "recv",
    "rng",
    "torch_index_select",
    "composite",
    "all_gather",
    "reduce_scatter",
    "all_to_all",
    "constant_like",
    "rank_specialization_cluster",
    "minimum_broadcast_shapes",
    "dynamic_reduce_window",
    "manual_computation",
}
KNOWN = ELEMENTWISE | FORWARDING | SAME_AS_OPERAND0 | set(COLLECTIVES) | OTHER_KNOWN
DIALECTS = ("stablehlo", "mhlo", "chlo", "func", "sdy", "shardy")
FOLD_MAX_ELEMENTS = 16  # results of constant-only computations up to this size are folded


def _opcode(op: Op) -> str:
    name = op.name
    for d in DIALECTS:
        if name.startswith(d + "."):
            return name[len(d) + 1 :]
    return name


def _ints(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"-?\d+", text)]


def _attr_list(attrs: str, key: str) -> list[int] | None:
    m = re.search(rf"\b{key}\s*=\s*(?:\[([^\]]*)\]|array\s*<\s*i64\s*(?::([^>]*))?>)", attrs)
    if not m:
        return None
    return _ints(m.group(1) if m.group(1) is not None else (m.group(2) or ""))


def _attr_int(attrs: str, key: str) -> int | None:
    m = re.search(rf"\b{key}\s*=\s*(-?\d+)", attrs)
    return int(m.group(1)) if m else None


def _conv_dim_numbers(attrs: str):
    """``[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`` (pretty ``dim_numbers =`` or generic
    ``#stablehlo.conv<...>``): the three layouts, spatial dims as ints, others as letters."""
    m = re.search(r"\[([^\]]*)\]\s*x\s*\[([^\]]*)\]\s*->\s*\[([^\]]*)\]", attrs)
    if not m:
        return None
    return tuple(
        [int(x) if x.strip().isdigit() else x.strip() for x in g.split(",")] for g in m.groups()
    )


def _conv_window(attrs: str, n: int):
    """(strides, pads [lo0, hi0, lo1, ...], lhs dilations, rhs dilations) of a convolution
    with ``n`` spatial dims: pretty ``window = {stride = [..], pad = [[..]], lhs_dilate =
    [..], rhs_dilate = [..]}`` or generic ``window_strides``, ``padding = dense<..>``,
    ``lhs_dilation``, ``rhs_dilation``; defaults 1 and 0."""
    win = re.search(r"window\s*=\s*\{([^{}]*)\}", attrs)
    w = win.group(1) if win else attrs
    strides = _attr_list(w, "stride") or _attr_list(attrs, "window_strides") or [1] * n
    lhs_dil = _attr_list(w, "lhs_dilate") or _attr_list(attrs, "lhs_dilation") or [1] * n
    rhs_dil = _attr_list(w, "rhs_dilate") or _attr_list(attrs, "rhs_dilation") or [1] * n
    m = re.search(r"\bpad\s*=\s*\[((?:\s*\[[^\]]*\]\s*,?)*)\]", w) or re.search(
        r"\bpadding\s*=\s*dense<(.*?)>", attrs
    )
    pads = _ints(m.group(1)) if m else []
    if len(pads) == 1:
        pads = pads * (2 * n)
    return strides, pads or [0] * (2 * n), lhs_dil, rhs_dil


def _pair_lists(attrs: str, key: str) -> tuple[list[int], list[int]]:
    """``contracting_dims = [2] x [1]`` (pretty) or ``lhs_contracting_dimensions = [2]``."""
    m = re.search(rf"\b{key}\s*=\s*\[([^\]]*)\]\s*x\s*\[([^\]]*)\]", attrs)
    if m:
        return _ints(m.group(1)), _ints(m.group(2))
    long = {"contracting_dims": "contracting_dimensions", "batching_dims": "batching_dimensions"}
    lhs = _attr_list(attrs, "lhs_" + long.get(key, key)) or []
    rhs = _attr_list(attrs, "rhs_" + long.get(key, key)) or []
    return lhs, rhs


def _dense_values(attrs: str, count: int | None) -> list | None:
    """Integer / boolean contents of ``dense<...>`` (a splat fills ``count``)."""
    m = re.search(r"dense<(.*?)>\s*$|dense<(.*?)>", attrs, re.S)
    if not m:
        return None
    body = (m.group(1) if m.group(1) is not None else m.group(2)).strip()
    if body.startswith('"'):
        return None
    flat = body.replace("[", " ").replace("]", " ").replace(",", " ").split()
    vals: list = []
    for x in flat:
        if x == "true":
            vals.append(True)
        elif x == "false":
            vals.append(False)
        elif re.fullmatch(r"-?\d+", x):
            vals.append(DimPoly.const(int(x)))
        else:
            return None
    if len(vals) == 1 and count is not None and count != 1:
        vals = vals * count
    return vals


# -- the converter -------------------------------------------------------------------------


class StableHloConverter:
    def __init__(self, module: Module, max_inline_depth: int = 64):
        self.m = module
        self.path = module.path
        self.subst: dict[str, DimPoly] = {}
        self.constraints: list[str] = []
        self.depth = 0
        self.max_depth = max_inline_depth
        self.call_count: Counter = Counter()
        self.approx: list[str] = []
        self.dim_names: set[str] = set()

    # -- errors and dims
    def err(self, op: Op, msg: str) -> NoReturn:
        raise InputError(msg, path=self.path, line=op.line, column=op.col)

    def res(self, p: DimPoly) -> DimPoly:
        for _ in range(8):
            if not (p.atoms() & set(self.subst)) and not any(
                not isinstance(a, str) for a in p.atoms()
            ):
                return p
            q = p.subst(self.subst)
            if q == p:
                return q
            p = q
        return p

    def unify(self, a: DimPoly, b: DimPoly) -> None:
        a, b = self.res(a), self.res(b)
        if a == b:
            return
        for x, y in ((a, b), (b, a)):
            at = x.single_atom()
            if isinstance(at, str) and at.startswith("?") and at not in y.atoms():
                self.subst[at] = y
                return
        for x, y in ((a, b), (b, a)):
            at = x.single_atom()
            if isinstance(at, tuple) and at[0] == "floordiv":
                inner = at[1].single_atom()
                if isinstance(inner, str) and inner.startswith("?") and at[2].is_const:
                    # JAX divides a size by k to get a dim only after asserting divisibility
                    self.subst[inner] = y * at[2].value
                    return

    # -- entry
    def graph(self, name: str | None = None) -> Graph:
        func = self.m.main if name is None else self.m.funcs.get(name)
        if func is None:
            raise InputError(f"no function @{name} in the module", path=self.path)
        b = _Build()
        env: dict[str, Val] = {}
        params: list[tuple[int, Val]] = []
        for k, a in enumerate(func.args):
            t = parse_type(a.type)
            shape = None
            if t.dims is not None:
                shape = tuple(
                    DimPoly.const(d) if d is not None else DimPoly.atom(f"?{a.name[1:]}.{i}")
                    for i, d in enumerate(t.dims)
                )
            gc = re.search(r'jax\.global_constant\s*=\s*"(\w+)"', a.attrs)
            if gc:  # a dim passed as an argument (jit(...).lower with symbolic shapes)
                self.dim_names.add(gc.group(1))
                env[a.name] = Val(shape, t.etype, folded=True, known=[DimPoly.atom(gc.group(1))])
                continue
            donated = bool(re.search(r"tf\.aliasing_output|jax\.buffer_donor\s*=\s*true", a.attrs))
            name_ = a.loc_name or a.name
            i = b.add_op(name_, "parameter", OpKind.PARAMETER)
            v = Val(shape, t.etype, build=b, op=i, readonly=not donated)
            size = v.nbytes()
            if not (size.is_const and size.value == 0):
                j = b.add_buf(i, size, name_)
                b.bufs[j].live_in = True
                b.bufs[j].live_out = not donated
                v.bufs = (j,)
            b.ops[i].attrs["parameter_number"] = k
            env[a.name] = v
            params.append((i, v))
        rets = self.walk(func.body, env, b, "")
        for v in rets:
            if v.build is b:
                for j in v.bufs:
                    b.bufs[j].live_out = True
                if v.op is not None:
                    b.returned_ops.add(v.op)
        return self.finish(b, func)

    # -- walking
    def walk(
        self,
        block: Block,
        env: dict[str, Val],
        b: _Build,
        prefix: str,
        outer: dict[str, Val] | None = None,
    ) -> list[Val]:
        uses = _free_uses(block)
        for name, v in list(env.items()):
            if v.build is b:
                for j in v.bufs:
                    b.pending[j] += uses.get(name, 0)
        rets: list[Val] = []
        for op in block.ops:
            r = self.op(op, env, b, prefix, uses, outer)
            if r is not None:
                rets = r
        return rets

    def lookup(self, op: Op, name: str, env: dict[str, Val], outer) -> Val:
        v = env.get(name)
        if v is None and outer is not None:
            v = outer.get(name)
        if v is None:
            self.err(op, f"use of undefined value {name}")
        return v

    def consume(self, b: _Build, v: Val) -> None:
        if v.build is b:
            for j in v.bufs:
                b.pending[j] -= 1

    def define(self, b: _Build, name: str, v: Val, env: dict[str, Val], uses: Counter) -> None:
        env[name] = v
        if v.build is b:
            for j in v.bufs:
                b.pending[j] += uses.get(name, 0)

    def op(self, op: Op, env, b: _Build, prefix: str, uses: Counter, outer) -> list[Val] | None:
        code = _opcode(op)
        ins = [self.lookup(op, n, env, outer) for n in op.operands]
        if code == "return" or code == "yield":
            for v in ins:
                self.consume(b, v)
            return ins
        if code not in KNOWN:
            self.err(op, f"unknown op '{op.name}'")
        types = [parse_type(t) for t in op.result_types]
        if len(types) < len(op.results):
            if code in ("call",):
                f = self.m.funcs.get(op.callee or "")
                if f is not None:
                    types = [parse_type(t) for t in f.result_types]
            if len(types) < len(op.results):
                self.err(op, f"cannot read the result types of '{op.name}'")
        if code == "call":
            return self.inline(op, ins, env, b, prefix, uses, outer)
        if code == "manual_computation":
            return self.manual(op, ins, env, b, prefix, uses)
        if code == "custom_call" and op.callee == "shape_assertion":
            self.shape_assertion(ins)
            m = re.search(r"symbolic shape constraint (.+?)\. Expected", op.attrs)
            if m and m.group(1) not in self.constraints:
                self.constraints.append(m.group(1))  # e.g. "s <= 2048", JAX checks it
            for v in ins:
                self.consume(b, v)
            return None
        shapes = self.result_shapes(op, code, ins, types)
        # fold compile-time computations
        if (
            (all(v.folded for v in ins) or code == "get_dimension_size")
            and code
            not in (
                "while",
                "case",
                "if",
                "custom_call",
                "rng",
                "rng_bit_generator",
                "infeed",
                "recv",
                "partition_id",
                "replica_id",
                "after_all",
                "create_token",
            )
            and code not in COLLECTIVES
        ):
            # of any size: XLA folds it into a constant, or fuses it into its users where it
            # is a broadcast or an iota; either way it holds no buffer of the program's. So
            # a symbolic export (a scalar broadcast to ``?`` dims) and a concrete one (a
            # splat constant) of one program give the same graph. Contents are kept for
            # small results only (shape computations).
            counts = [_static_count(s) for s in shapes]
            if code == "constant" or all(c is not None and c <= FOLD_MAX_ELEMENTS for c in counts):
                known = self.fold(op, code, ins, shapes, types)
            else:
                known = None
            for k, (rname, t) in enumerate(zip(op.results, types)):
                v = Val(
                    shapes[k],
                    t.etype,
                    folded=True,
                    known=known[k] if known else None,
                    eq=self._eq_of(op, code, ins) if k == 0 else None,
                )
                self.define(b, rname, v, env, uses)
            return None
        self.unify_operands(op, code, ins)
        name = prefix + (op.results[0].split("#")[0] if op.results else f"{code}@{op.line}")
        for v in ins:
            self.consume(b, v)
        if code in ("while", "case", "if"):
            return self.control_flow(op, code, ins, shapes, types, env, b, name, uses, outer)
        kind = OpKind.COMPUTE
        forwarding = (
            code in FORWARDING
            or (code == "custom_call" and op.callee in ("Sharding", "sharding_constraint"))
            or (
                code == "bitcast_convert"
                and ins
                and TType(None, ins[0].etype).elem_bytes == TType(None, types[0].etype).elem_bytes
            )
        )
        if (
            code == "broadcast_in_dim"
            and ins
            and ins[0].shape is not None
            and shapes[0] == ins[0].shape
        ):
            forwarding = True  # an identity broadcast: XLA removes it
        if forwarding:
            kind = OpKind.ALIAS
        i = b.add_op(name, op.name, kind)
        rec = b.ops[i]
        rec.attrs["line"] = op.line
        for v in ins:
            b.use(i, v)
        out: list[Val] = []
        if forwarding:
            for k, t in enumerate(types):
                src = (
                    ins[k]
                    if code == "optimization_barrier" and k < len(ins)
                    else (ins[0] if ins else None)
                )
                if code == "tuple":
                    bufs = tuple(j for v in ins if v.build is b for j in v.bufs)
                else:
                    bufs = src.bufs if src is not None and src.build is b else ()
                out.append(
                    Val(
                        shapes[k],
                        t.etype,
                        build=b,
                        bufs=bufs,
                        op=i,
                        readonly=bool(src and src.readonly),
                    )
                )
        else:
            inplace = self.inplace_operands(op, code, ins)
            for k, t in enumerate(types):
                v = Val(shapes[k], t.etype, build=b, op=i)
                src_k = inplace.get(k)
                if src_k is not None and self.shareable(b, ins[src_k], i):
                    v.bufs = ins[src_k].bufs
                    self.order_before(b, ins[src_k], i)
                else:
                    size = v.nbytes()
                    if not (size.is_const and size.value == 0):
                        v.bufs = (b.add_buf(i, size, name if len(types) == 1 else f"{name}#{k}"),)
                out.append(v)
            self.costs(rec, code, op, ins, out)
            if code in COLLECTIVES:
                rec.collective = self.collective(op, code, ins, out)
        for rname, v in zip(op.results, out):
            self.define(b, rname, v, env, uses)
        return None

    # -- pieces of ``op``
    def _eq_of(self, op: Op, code: str, ins: list[Val]):
        if (
            code == "compare"
            and re.search(r"\bEQ\b", op.attrs)
            and len(ins) == 2
            and ins[0].known
            and ins[1].known
            and len(ins[0].known) == 1
            and isinstance(ins[0].known[0], DimPoly)
            and isinstance(ins[1].known[0], DimPoly)
        ):
            return ins[0].known[0], ins[1].known[0]
        return None

    def shape_assertion(self, ins: list[Val]) -> None:
        if ins and ins[0].eq is not None:
            self.unify(*ins[0].eq)
        elif ins and ins[0].known and ins[0].known[0] is False:
            pass  # a constraint the dims violate cannot be checked here; JAX checks it

    def inline(self, op: Op, ins, env, b: _Build, prefix: str, uses: Counter, outer):
        f = self.m.funcs.get(op.callee or "")
        if f is None:
            self.err(op, f"call to unknown function @{op.callee}")
        if self.depth >= self.max_depth:
            self.err(op, f"calls nest deeper than {self.max_depth} (recursive @{op.callee}?)")
        if len(f.args) != len(ins):
            self.err(op, f"@{f.name} takes {len(f.args)} arguments, the call passes {len(ins)}")
        self.call_count[f.name] += 1
        n = self.call_count[f.name]
        sub_prefix = prefix + f"{f.name}" + (f".{n}" if n > 1 else "") + "/"
        if f.name == "_wrapped_jax_export_main" and not prefix:
            sub_prefix = ""  # jax.export's wrapper around the user's function: no prefix
        cenv: dict[str, Val] = {}
        for a, v in zip(f.args, ins):
            gc = re.search(r'jax\.global_constant\s*=\s*"(\w+)"', a.attrs)
            if gc:
                dim = DimPoly.atom(gc.group(1))
                self.dim_names.add(gc.group(1))
                if v.known and isinstance(v.known[0], DimPoly):
                    self.unify(v.known[0], dim)
                v = Val(v.shape, v.etype, folded=True, known=[dim])
            elif a.loc_name and _parameter_of(b, v) and b.ops[v.op].name.startswith("%arg"):
                self.rename(b, v.op, a.loc_name)
            cenv[a.name] = v
        for v in ins:  # the call's reads are the callee's reads: counted inside
            self.consume(b, v)
        self.depth += 1
        try:
            rets = self.walk(f.body, cenv, b, sub_prefix)
        finally:
            self.depth -= 1
        self.define_results(
            op,
            rets,
            env,
            b,
            uses,
            lambda n: f"@{f.name} returns {len(rets)} values, the call expects {n}",
        )
        return None

    def manual(self, op: Op, ins, env, b: _Build, prefix: str, uses: Counter):
        """``sdy.manual_computation`` (shard_map): its body is the per-device program, so it
        is inlined with the body's (per-device) shapes; a sharded entry parameter takes its
        per-device size."""
        if not op.regions or not op.regions[0]:
            self.err(op, "manual_computation without a body")
        blk = op.regions[0][0]
        if len(blk.args) != len(ins):
            self.err(
                op, f"manual_computation has {len(ins)} operands and {len(blk.args)} body arguments"
            )
        cenv: dict[str, Val] = {}
        for (an, ty), v in zip(blk.args, ins):
            t = parse_type(ty)
            shape = v.shape
            if t.dims is not None and all(d is not None for d in t.dims):
                shape = tuple(DimPoly.const(d) for d in t.dims if d is not None)
            etype = t.etype if t.dims is not None else v.etype
            nv = replace(v, shape=shape, etype=etype, eq=None)
            if _parameter_of(b, v) and len(v.bufs) == 1:
                b.bufs[v.bufs[0]].size = nv.nbytes()
            cenv[an] = nv
        for v in ins:
            self.consume(b, v)
        rets = self.walk(blk, cenv, b, prefix)
        self.define_results(
            op,
            rets,
            env,
            b,
            uses,
            lambda n: f"manual_computation returns {len(rets)} values for {n} results",
        )
        return None

    def define_results(
        self, op: Op, rets, env, b: _Build, uses: Counter, mismatch: Callable[[int], str]
    ):
        """Bind a body's returned values to ``op``'s results; ``mismatch(number of results)``
        is the error when the counts differ."""
        if len(rets) != len(op.results):
            self.err(op, mismatch(len(op.results)))
        for rname, v in zip(op.results, rets):
            self.define(b, rname, v, env, uses)

    def rename(self, b: _Build, i: int, new: str) -> None:
        if new in b.names:
            return
        b.names.discard(b.ops[i].name)
        b.names.add(new)
        for buf in b.bufs:
            if buf.d == i:
                buf.name = new
        b.ops[i].name = new

    def unify_operands(self, op: Op, code: str, ins: list[Val]) -> None:
        if code in ELEMENTWISE or code in ("dynamic_update_slice",):
            ranked = [v.shape for v in ins if v.shape]
            if code == "dynamic_update_slice":
                ranked = []
            if len(ranked) > 1:
                r0 = ranked[0]
                for s in ranked[1:]:
                    if len(s) == len(r0):
                        for x, y in zip(r0, s):
                            self.unify(x, y)
        elif code == "dynamic_broadcast_in_dim" and len(ins) > 1 and ins[0].shape:
            # an operand dim that is not 1 is the result dim it maps to
            out = self.known_vec(ins[1])
            dims = (
                _attr_list(op.attrs, "dims") or _attr_list(op.attrs, "broadcast_dimensions") or []
            )
            if out:
                for i, d in enumerate(dims):
                    od = ins[0].shape[i] if i < len(ins[0].shape) else None
                    if od is not None and not od.is_const and d < len(out):
                        self.unify(od, out[d])
        elif code == "dot_general" and len(ins) == 2 and ins[0].shape and ins[1].shape:
            for key in ("contracting_dims", "batching_dims"):
                lc, rc = _pair_lists(op.attrs, key)
                for li, ri in zip(lc, rc):
                    if li < len(ins[0].shape) and ri < len(ins[1].shape):
                        self.unify(ins[0].shape[li], ins[1].shape[ri])

    def shareable(self, b: _Build, v: Val, i: int) -> bool:
        if v.build is not b or not v.bufs or v.readonly or v.folded:
            return False
        return all(b.pending[j] <= 0 and not b.bufs[j].live_out for j in v.bufs)

    def order_before(self, b: _Build, v: Val, i: int) -> None:
        for j in v.bufs:
            for u in b.bufs[j].users:
                if u != i and u not in b.ops[i].control and u not in b.ops[i].operands:
                    b.ops[i].control.append(u)

    def inplace_operands(self, op: Op, code: str, ins: list[Val]) -> dict[int, int]:
        if code == "dynamic_update_slice":
            return {0: 0}
        if code == "scatter":
            n = len(op.results)
            return {k: k for k in range(n)}
        if code == "custom_call":
            out = {}
            for m in re.finditer(
                r"output_tuple_indices\s*=\s*\[([^\]]*)\]\s*,\s*"
                r"operand_index\s*=\s*(\d+)",
                op.attrs,
            ):
                idx = _ints(m.group(1))
                out[idx[0] if idx else 0] = int(m.group(2))
            return out
        return {}

    def control_flow(
        self, op: Op, code: str, ins, shapes, types, env, b: _Build, name, uses, outer
    ):
        i = b.add_op(name, op.name, OpKind.CONTROL_FLOW)
        b.ops[i].attrs["line"] = op.line
        for v in ins:
            b.use(i, v)
        scope = dict(outer or {})
        scope.update(env)
        temps: list[DimPoly] = []
        branch_rets: list[list[Val]] = []
        for region in op.regions:
            if not region:
                continue
            blk = region[0]
            sub = _Build(b)
            renv: dict[str, Val] = {}
            arg_names = [a for a, _ in blk.args] or (op.binders if code == "while" else [])
            for k, an in enumerate(arg_names):
                src = ins[k] if code == "while" and k < len(ins) else None
                shape = src.shape if src is not None else None
                et = src.etype if src is not None else ""
                renv[an] = Val(
                    shape,
                    et,
                    build=None,
                    folded=bool(src is not None and src.folded and code != "while"),
                    known=None,
                )
            rets = self.walk(blk, renv, sub, name + "/", scope)
            for v in rets:
                if v.build is sub:
                    for j in v.bufs:
                        sub.bufs[j].held = True
            branch_rets.append(rets)
            temps.append(self.region_peak(sub))
            for v in sub.captured:
                if v.build is b:
                    b.use(i, v)
                else:
                    b.captured.append(v)
            # the region's reads of outer values were counted as uses of this op
            defined = (
                {a for a, _ in blk.args} | set(op.binders) | {r for o in blk.ops for r in o.results}
            )
            for fname, cnt in _free_uses(blk).items():
                if fname not in defined:
                    v = env.get(fname) or (outer or {}).get(fname)
                    if v is not None and v.build is b:
                        for j in v.bufs:
                            b.pending[j] -= cnt
        b.ops[i].transient = temps
        if code in ("case", "if") and branch_rets:
            first = branch_rets[0]
            shapes = [
                self.pick_shape(shapes[k], [r[k].shape for r in branch_rets if k < len(r)])
                for k in range(len(shapes))
            ]
            del first
        out: list[Val] = []
        taken: set[int] = set()
        for k, t in enumerate(types):
            v = Val(shapes[k], t.etype, build=b, op=i)
            src = ins[k] if code == "while" and k < len(ins) else None
            if src is not None and self.shareable(b, src, i) and not (set(src.bufs) & taken):
                v.bufs = src.bufs
                taken.update(src.bufs)
                self.order_before(b, src, i)
            else:
                size = v.nbytes()
                if not (size.is_const and size.value == 0):
                    v.bufs = (b.add_buf(i, size, name if len(types) == 1 else f"{name}#{k}"),)
            out.append(v)
        for rname, v in zip(op.results, out):
            self.define(b, rname, v, env, uses)
        return None

    def pick_shape(self, declared, candidates):
        if declared is None:
            return None
        out = []
        for d, ds in zip(
            declared,
            zip(*[c for c in candidates if c is not None])
            if candidates and all(c is not None for c in candidates)
            else [()] * len(declared),
        ):
            if not _is_placeholder_free(d) and ds:
                vals = [self.res(x) for x in ds]
                m = vals[0]
                for x in vals[1:]:
                    m = dx.dmax(m, x)
                out.append(m)
            else:
                out.append(d)
        return tuple(out)

    def region_peak(self, sub: _Build) -> DimPoly:
        """Peak of a region's own buffers in program order (a polynomial max: the
        dominating step if there is one, else a coefficient-wise bound, noted)."""
        n = len(sub.ops)
        if n == 0:
            return DimPoly.const(0)
        start: dict[int, list[int]] = {}
        end: dict[int, list[int]] = {}
        for j, buf in enumerate(sub.bufs):
            if buf.held:
                continue
            last = max([buf.d] + buf.users)
            start.setdefault(buf.d, []).append(j)
            end.setdefault(last, []).append(j)
        live = DimPoly.const(0)
        steps: list[DimPoly] = []
        for t in range(n):
            for j in start.get(t, ()):
                live = live + self.res(sub.bufs[j].size)
            tr = self.max_of(sub.ops[t].transient, sub.ops[t].name)
            steps.append(live + tr)
            for j in end.get(t, ()):
                live = live - self.res(sub.bufs[j].size)
        return self.max_of(steps, "a region")

    def max_of(self, vals: list[DimPoly], where: str) -> DimPoly:
        vals = [self.res(v) for v in vals]
        if not vals:
            return DimPoly.const(0)
        best: list[DimPoly] = []
        for v in vals:
            if any(dx.dominates(w, v) for w in best):
                continue
            best = [w for w in best if not dx.dominates(v, w)] + [v]
        if len(best) == 1:
            return best[0]
        if all(v.is_const for v in best):
            return max(best, key=lambda v: v.value)
        # coefficient-wise maximum of the upper bounds: >= each candidate for dims >= 0
        ubs = [dx.upper_bound(v) for v in best]
        terms: dict = {}
        for u in ubs:
            for m, c in u.terms.items():
                terms[m] = max(terms.get(m, 0), c)
        bound = DimPoly(terms)
        self.approx.append(f"{where}: max({', '.join(str(v) for v in best)}) <= {bound}")
        return bound

    # -- shapes
    def result_shapes(
        self, op: Op, code: str, ins: list[Val], types: list[TType]
    ) -> list[tuple[DimPoly, ...] | None]:
        out: list[tuple[DimPoly, ...] | None] = []
        for k, t in enumerate(types):
            if t.dims is None:
                out.append(None)
                continue
            if all(d is not None for d in t.dims):
                out.append(tuple(DimPoly.const(d) for d in t.dims if d is not None))
                continue
            inferred = self.infer(op, code, ins, t, k)
            if inferred is None or len(inferred) != len(t.dims):
                self.err(op, f"cannot size the '?' dims of the result of '{op.name}'")
            shape = []
            for d, e in zip(t.dims, inferred):
                if d is not None:
                    shape.append(DimPoly.const(d))
                elif e is None:
                    self.err(op, f"cannot size the '?' dims of the result of '{op.name}'")
                else:
                    shape.append(self.res(e))
            out.append(tuple(shape))
        return out

    def known_vec(self, v: Val) -> list[DimPoly] | None:
        if v.known is None:
            return None
        if not all(isinstance(x, DimPoly) for x in v.known):
            return None
        return [self.res(x) for x in v.known]

    def shape_of(self, op: Op, v: Val | None) -> tuple[DimPoly, ...]:
        """The shape of an operand that must be a tensor (not a token or tuple)."""
        if v is None or v.shape is None:
            self.err(op, f"'{op.name}' needs a tensor operand where it has a token or tuple")
        return v.shape

    def infer(self, op: Op, code: str, ins: list[Val], t: TType, k: int):
        assert t.dims is not None  # result_shapes infers tensor results only
        rank = len(t.dims)
        a0 = ins[0] if ins else None
        s0 = a0.shape if a0 is not None else None
        if (
            code in ELEMENTWISE
            or code in SAME_AS_OPERAND0
            or code in ("bitcast_convert", "optimization_barrier", "sharding_constraint", "reshard")
        ):
            if (
                code
                in ("optimization_barrier", "sort", "scatter", "all_reduce", "collective_permute")
                and k < len(ins)
                and ins[k].shape
                and len(ins[k].shape or ()) == rank
            ):
                return ins[k].shape
            for v in ins:
                if v.shape is not None and len(v.shape) == rank:
                    return v.shape
            return None
        if code in ("dynamic_broadcast_in_dim", "dynamic_reshape"):
            return self.known_vec(ins[1]) if len(ins) > 1 else None
        if code == "dynamic_iota":
            return self.known_vec(ins[0])
        if code == "broadcast_in_dim":
            dims = (
                _attr_list(op.attrs, "dims") or _attr_list(op.attrs, "broadcast_dimensions") or []
            )
            out: list = [None] * rank
            for i, d in enumerate(dims):
                if (
                    s0
                    and i < len(s0)
                    and d < rank
                    and not (s0[i].is_const and s0[i].value == 1 and t.dims[d] is None)
                ):
                    out[d] = s0[i]
            return out
        if code == "transpose":
            perm = _attr_list(op.attrs, "dims") or _attr_list(op.attrs, "permutation")
            return [s0[p] for p in perm] if perm and s0 else None
        if code == "dot_general":
            s0, s1 = self.shape_of(op, a0), self.shape_of(op, ins[1])
            lb, rb = _pair_lists(op.attrs, "batching_dims")
            lc, rc = _pair_lists(op.attrs, "contracting_dims")
            out = [s0[i] for i in lb]
            out += [d for i, d in enumerate(s0) if i not in lb and i not in lc]
            out += [d for i, d in enumerate(s1) if i not in rb and i not in rc]
            return out
        if code == "dot":
            s0, s1 = self.shape_of(op, a0), self.shape_of(op, ins[1])
            return list(s0[:-1]) + (list(s1[1:]) if len(s1) > 1 else [])
        if code == "concatenate":
            dim = _attr_int(op.attrs, "dim")
            if dim is None:
                dim = _attr_int(op.attrs, "dimension") or 0
            out = list(self.shape_of(op, a0))
            total = DimPoly.const(0)
            for v in ins:
                total = total + self.shape_of(op, v)[dim]
            out[dim] = total
            return out
        if code == "reduce":
            dims = _attr_list(op.attrs, "dimensions") or []
            src = ins[k] if k < len(ins) // 2 else a0
            return [d for i, d in enumerate(self.shape_of(op, src)) if i not in dims]
        if code == "real_dynamic_slice":
            st, lim = self.known_vec(ins[1]), self.known_vec(ins[2])
            strides = self.known_vec(ins[3]) if len(ins) > 3 else None
            if st is None or lim is None:
                return None
            out = []
            for i in range(rank):
                n = lim[i] - st[i]
                if strides and not (strides[i].is_const and strides[i].value == 1):
                    n = dx.floordiv(n + strides[i] - 1, strides[i])
                out.append(n)
            return out
        if code == "dynamic_slice":
            sizes = _attr_list(op.attrs, "sizes") or _attr_list(op.attrs, "slice_sizes")
            return [DimPoly.const(x) for x in sizes] if sizes else None
        if code == "slice":
            return self.slice_shape(op, s0)
        if code in ("pad", "dynamic_pad"):
            if code == "pad":
                lo_i = _attr_list(op.attrs, "low") or _attr_list(op.attrs, "edge_padding_low")
                hi_i = _attr_list(op.attrs, "high") or _attr_list(op.attrs, "edge_padding_high")
                it_i = _attr_list(op.attrs, "interior") or _attr_list(op.attrs, "interior_padding")
                lo, hi, it = (
                    [DimPoly.const(x) for x in y] if y else None for y in (lo_i, hi_i, it_i)
                )
            else:
                lo, hi, it = (self.known_vec(ins[j]) for j in (2, 3, 4))
            if lo is None or hi is None or it is None:
                return None
            return [
                d + lo[i] + hi[i] + it[i] * (d - 1) for i, d in enumerate(self.shape_of(op, a0))
            ]
        if code in ("gather", "dynamic_gather"):
            return self.gather_shape(op, code, ins, rank)
        if code == "all_gather":
            dim = _attr_int(op.attrs, "all_gather_dim") or 0
            g = self.group_size(op)
            out = list(self.shape_of(op, ins[k] if k < len(ins) else a0))
            out[dim] = out[dim] * g
            return out
        if code == "reduce_scatter":
            dim = _attr_int(op.attrs, "scatter_dimension") or 0
            g = self.group_size(op)
            out = list(self.shape_of(op, a0))
            out[dim] = dx.floordiv(out[dim], g)
            return out
        if code == "all_to_all":
            sd = _attr_int(op.attrs, "split_dimension")
            cd = _attr_int(op.attrs, "concat_dimension")
            sc = _attr_int(op.attrs, "split_count") or self.group_size(op)
            src_shape = ins[k].shape if k < len(ins) else s0
            if sd is None or cd is None:
                return src_shape
            out = list(self.shape_of(op, ins[k] if k < len(ins) else a0))
            out[sd] = dx.floordiv(out[sd], sc)
            out[cd] = out[cd] * sc
            return out
        if code == "custom_call":
            if op.callee == "stablehlo.dynamic_reduce_window":
                return self.dyn_reduce_window(ins)
            if op.callee in ("Sharding", "sharding_constraint", "MoveToHost", "MoveToDevice"):
                return s0
            return None
        if code == "reduce_window":
            return self.reduce_window_shape(op, ins, k)
        if code == "convolution":
            return self.convolution_shape(op, ins, rank)
        if code in ("while",):
            return ins[k].shape if k < len(ins) else None
        if code in ("case", "if"):
            return [DimPoly.atom(f"?{op.results[k]}.{i}") for i in range(rank)]
        if code == "set_dimension_size":
            dim = _attr_int(op.attrs, "dimension") or 0
            kv = self.known_vec(ins[1]) if len(ins) > 1 else None
            out = list(self.shape_of(op, a0))
            if kv:
                out[dim] = kv[0]
            return out
        return None

    def slice_shape(self, op: Op, s0):
        m = re.search(
            r"\[\s*(-?\d+\s*:\s*-?\d+(?:\s*:\s*-?\d+)?(?:\s*,\s*-?\d+\s*:\s*-?\d+"
            r"(?:\s*:\s*-?\d+)?)*)\s*\]",
            op.attrs,
        )
        if m:
            out = []
            for part in m.group(1).split(","):
                xs = _ints(part)
                start, limit, stride = xs[0], xs[1], xs[2] if len(xs) > 2 else 1
                out.append(DimPoly.const(-(-(limit - start) // stride)))
            return out
        st = _attr_list(op.attrs, "start_indices")
        lim = _attr_list(op.attrs, "limit_indices")
        strides = _attr_list(op.attrs, "strides") or [1] * len(st or [])
        if st and lim:
            return [DimPoly.const(-(-(b_ - a_) // s_)) for a_, b_, s_ in zip(st, lim, strides)]
        return None

    def gather_shape(self, op: Op, code: str, ins: list[Val], rank: int):
        m = re.search(r"#stablehlo\.gather<([^>]*)>", op.attrs)
        gd = m.group(1) if m else op.attrs
        offset_dims = _attr_list(gd, "offset_dims") or []
        collapsed = _attr_list(gd, "collapsed_slice_dims") or []
        obatch = _attr_list(gd, "operand_batching_dims") or []
        ivd = _attr_int(gd, "index_vector_dim") or 0  # printed only when not 0
        if code == "gather":
            sizes_i = _attr_list(op.attrs, "slice_sizes")
            sizes = [DimPoly.const(x) for x in sizes_i] if sizes_i is not None else None
        else:
            sizes = self.known_vec(ins[2])
        if sizes is None:
            return None
        batch = [d for i, d in enumerate(self.shape_of(op, ins[1])) if i != ivd]
        offs = [d for i, d in enumerate(sizes) if i not in collapsed and i not in obatch]
        out: list = [None] * rank
        bi = oi = 0
        for i in range(rank):
            if i in offset_dims:
                out[i] = offs[oi] if oi < len(offs) else None
                oi += 1
            else:
                out[i] = batch[bi] if bi < len(batch) else None
                bi += 1
        return out

    def reduce_window_shape(self, op: Op, ins: list[Val], k: int):
        src = ins[k].shape if k < len(ins) // 2 else ins[0].shape
        wd = _attr_list(op.attrs, "window_dimensions")
        if src is None or wd is None:
            return None
        n = len(src)
        ws = _attr_list(op.attrs, "window_strides") or [1] * n
        bd = _attr_list(op.attrs, "base_dilations") or [1] * n
        wdl = _attr_list(op.attrs, "window_dilations") or [1] * n
        m = re.search(r"padding\s*=\s*dense<(.*?)>", op.attrs)
        pads = _ints(m.group(1)) if m else []
        if len(pads) == 1:
            pads = pads * (2 * n)
        pads = pads or [0] * (2 * n)
        return [
            _window_dim(d, wd[i], ws[i], bd[i], wdl[i], pads[2 * i], pads[2 * i + 1])
            for i, d in enumerate(src)
        ]

    def convolution_shape(self, op: Op, ins: list[Val], rank: int):
        """Result dims of a convolution (forward, and the input- and weight-gradient forms
        with dilations, negative padding and group counts that jax's transposes give)."""
        spec = _conv_dim_numbers(op.attrs)
        if spec is None or len(ins) < 2:
            return None
        lhs_l, rhs_l, out_l = spec
        lhs, rhs = self.shape_of(op, ins[0]), self.shape_of(op, ins[1])
        if len(lhs_l) != len(lhs) or len(rhs_l) != len(rhs) or len(out_l) != rank:
            return None
        n = sum(1 for x in lhs_l if isinstance(x, int))
        strides, pads, lhs_dil, rhs_dil = _conv_window(op.attrs, n)
        bgc = _attr_int(op.attrs, "batch_group_count") or 1
        out: list = [None] * rank
        for pos, d in enumerate(out_l):
            if d == "b":
                out[pos] = dx.floordiv(lhs[lhs_l.index("b")], bgc)
            elif d == "f":
                out[pos] = rhs[rhs_l.index("o")]
            else:
                size, kern = lhs[lhs_l.index(d)], rhs[rhs_l.index(d)]
                lo, hi = pads[2 * d], pads[2 * d + 1]
                out[pos] = _window_dim(size, kern, strides[d], lhs_dil[d], rhs_dil[d], lo, hi)
        return out

    def dyn_reduce_window(self, ins: list[Val]):
        if len(ins) < 7:
            return None
        src = ins[0].shape
        wd, ws, bd, wdl = (self.known_vec(ins[j]) for j in (2, 3, 4, 5))
        pad = self.known_vec(ins[6])
        if None in (wd, ws, bd, wdl, pad) or src is None:
            return None
        assert (
            wd is not None
            and ws is not None
            and bd is not None
            and wdl is not None
            and pad is not None
        )
        return [
            _window_dim(d, wd[i], ws[i], bd[i], wdl[i], pad[2 * i], pad[2 * i + 1])
            for i, d in enumerate(src)
        ]

    def group_size(self, op: Op) -> int:
        m = re.search(r"replica_groups\s*=\s*dense<(.*?)>\s*:\s*tensor<(\d+)x(\d+)x", op.attrs)
        if m:
            return int(m.group(3))
        m = re.search(r"replica_groups\s*=\s*dense<(.*?)>", op.attrs)
        if m and m.group(1).startswith("[["):
            first = m.group(1)[2:].split("]")[0]
            return len(_ints(first)) or 1
        return 1

    def replica_groups(self, op: Op) -> tuple[tuple[int, ...], ...]:
        m = re.search(r"replica_groups\s*=\s*dense<(.*?)>\s*:\s*tensor<(\d+)x(\d+)x", op.attrs)
        if m:
            vals = _ints(m.group(1))
            g, n = int(m.group(2)), int(m.group(3))
            if len(vals) == g * n:
                return tuple(tuple(vals[i * n : (i + 1) * n]) for i in range(g))
        m = re.search(r"source_target_pairs\s*=\s*dense<(.*?)>", op.attrs)
        if m:
            vals = _ints(m.group(1))
            return tuple(tuple(vals[i : i + 2]) for i in range(0, len(vals), 2))
        return ()

    # -- folding
    def fold(self, op: Op, code: str, ins: list[Val], shapes, types) -> list | None:
        """Contents of a constant-only computation's results (None where unknown)."""
        n = [_static_count(s) for s in shapes]
        try:
            return [
                self._fold_one(op, code, ins, shapes, types, k, n[k]) for k in range(len(types))
            ]
        except (IndexError, TypeError, ValueError, ZeroDivisionError):
            return None

    def _fold_one(self, op, code, ins, shapes, types, k, count):
        kv = [v.known for v in ins]
        if code == "constant":
            if count is None or count > 4096:
                return None
            return _dense_values(op.attrs, count)
        if code == "get_dimension_size":
            dim = _attr_int(op.attrs, "dim")
            if dim is None:
                dim = _attr_int(op.attrs, "dimension") or 0
            return [self.res(ins[0].shape[dim])]
        if code == "iota":
            dim = _attr_int(op.attrs, "dim") or _attr_int(op.attrs, "iota_dimension") or 0
            shp = [s.value for s in shapes[k]]
            if len(shp) == 1:
                return [DimPoly.const(x) for x in range(shp[0])]
            return None
        if any(x is None for x in kv):
            return None
        if code in (
            "convert",
            "reshape",
            "bitcast_convert",
            "dynamic_reshape",
            "optimization_barrier",
        ):
            src = kv[k] if code == "optimization_barrier" else kv[0]
            if code == "convert" and types[0].etype == "i1":
                return [(_truth(x)) for x in src]
            if code == "convert" and ins[0].etype == "i1":
                return [DimPoly.const(1 if x else 0) if isinstance(x, bool) else None for x in src]
            return list(src)
        if code in ("broadcast_in_dim", "dynamic_broadcast_in_dim", "broadcast"):
            if len(kv[0]) == 1 and count is not None:
                return kv[0] * count
            if len(kv[0]) == count:
                return list(kv[0])
            return None
        if code == "concatenate":
            return [x for v in kv for x in v]
        if code == "slice":
            m = re.search(r"\[\s*(-?\d+)\s*:\s*(-?\d+)(?:\s*:\s*(-?\d+))?\s*\]", op.attrs)
            if m and len(shapes[k]) == 1:
                a_, b_ = int(m.group(1)), int(m.group(2))
                s_ = int(m.group(3) or 1)
                return kv[0][a_:b_:s_]
            st = _attr_list(op.attrs, "start_indices")
            lim = _attr_list(op.attrs, "limit_indices")
            if st and lim and len(st) == 1:
                strides = _attr_list(op.attrs, "strides") or [1]
                return kv[0][st[0] : lim[0] : strides[0]]
            return None
        if code in ELEMENTWISE:
            width = max(len(x) for x in kv)
            args = [x * width if len(x) == 1 else x for x in kv]
            return [self._elem(op, code, [a[i] for a in args]) for i in range(width)]
        return None

    def _elem(self, op: Op, code: str, xs: list):
        if any(x is None for x in xs):
            if code == "and" and any(x is False for x in xs):
                return False
            if code == "or" and any(x is True for x in xs):
                return True
            if code == "select" and isinstance(xs[0], bool):
                return xs[1] if xs[0] else xs[2]
            return None
        if code in ("and", "or", "xor", "not") and all(isinstance(x, bool) for x in xs):
            if code == "and":
                return xs[0] and xs[1]
            if code == "or":
                return xs[0] or xs[1]
            if code == "xor":
                return xs[0] != xs[1]
            return not xs[0]
        if code == "select":
            p = xs[0]
            if isinstance(p, bool):
                return xs[1] if p else xs[2]
            a, b_ = xs[1], xs[2]
            if isinstance(a, DimPoly) and isinstance(b_, DimPoly):
                return dx.select(None, self.res(a), self.res(b_))
            return None
        if not all(isinstance(x, DimPoly) for x in xs):
            return None
        xs = [self.res(x) for x in xs]
        a = xs[0]
        if code == "compare":
            d = re.search(r"\b(EQ|NE|LT|LE|GT|GE)\b", op.attrs)
            return dx.compare(d.group(1), xs[0], xs[1]) if d else None
        if code == "add":
            return a + xs[1]
        if code == "subtract":
            return a - xs[1]
        if code == "multiply":
            return a * xs[1]
        if code == "negate":
            return -a
        if code == "maximum":
            return dx.dmax(a, xs[1])
        if code == "minimum":
            return dx.dmin(a, xs[1])
        if code == "clamp":
            return dx.dmin(dx.dmax(xs[1], xs[0]), xs[2])
        if code == "sign":
            if a.is_const:
                return DimPoly.const((a.value > 0) - (a.value < 0))
            if a.positive():
                return DimPoly.const(1)
            if (-a).positive():
                return DimPoly.const(-1)
            return None
        if code == "abs":
            if a.nonneg():
                return a
            if (-a).nonneg():
                return -a
            return None
        if code in ("divide", "remainder"):
            b_ = xs[1]
            if a.is_const and b_.is_const:
                q = abs(a.value) // abs(b_.value) * (1 if (a.value >= 0) == (b_.value > 0) else -1)
                return DimPoly.const(q if code == "divide" else a.value - q * b_.value)
            if a.nonneg() and b_.is_const and b_.value > 0:
                return dx.floordiv(a, b_) if code == "divide" else dx.mod(a, b_)
            return None
        return None

    # -- costs and collectives
    def costs(self, rec: _OpRec, code: str, op: Op, ins: list[Val], out: list[Val]) -> None:
        by = DimPoly.const(0)
        for v in list(ins) + out:
            if not v.folded:
                by = by + v.nbytes()
        rec.bytes = by
        if code == "dot_general" and len(ins) == 2 and out and out[0].shape is not None:
            lc, _ = _pair_lists(op.attrs, "contracting_dims")
            f = out[0].elements() * 2
            for c in lc:
                f = f * self.shape_of(op, ins[0])[c]
            rec.flops = f
        elif code in ELEMENTWISE and out and out[0].shape is not None:
            rec.flops = out[0].elements()
        elif code in ("reduce", "reduce_window") and ins and ins[0].shape is not None:
            rec.flops = ins[0].elements()

    def collective(self, op: Op, code: str, ins: list[Val], out: list[Val]) -> tuple:
        payload = DimPoly.const(0)
        for v in out if code == "all_gather" else ins:
            if v.shape is not None and not v.folded:
                payload = payload + v.nbytes()
        ch = re.search(
            r"channel_handle\s*=\s*#stablehlo\.channel_handle<\s*handle\s*=\s*(\d+)", op.attrs
        )
        return (
            COLLECTIVES[code],
            payload,
            self.group_size(op),
            self.replica_groups(op),
            int(ch.group(1)) if ch else None,
        )

    # -- to Graph
    def sym(self, p: DimPoly, what: str, note: bool = True) -> SymExpr:
        p = self.res(p)
        bad = [a for a in p.atoms() if isinstance(a, str) and a.startswith("?")] + [
            a for a in _deep_atoms(p) if isinstance(a, str) and a.startswith("?")
        ]
        if bad:
            raise InputError(
                f"{what}: a '?' dim ({bad[0][1:]}) is not tied to a named dim; "
                "export the function with jax.export and "
                "jax.export.symbolic_shape so that every '?' has a name",
                path=self.path,
            )
        e, exact = dx.to_symexpr(p)
        if not exact and note:
            self.approx.append(f"{what}: {p} <= {e}")
        return e

    def dead_code(self, b: _Build) -> list[int]:
        """Ops to keep: XLA removes ops whose results nobody reads (not parameters, not
        collectives or custom calls, which may have effects, not program outputs)."""
        n = len(b.ops)
        readers = [0] * n
        for rec in b.ops:
            for o in set(rec.operands) | set(rec.control):
                readers[o] += 1
        out_op = [False] * n
        for buf in b.bufs:
            if buf.live_out:
                out_op[buf.d] = True
        alive = [True] * n
        changed = True
        while changed:
            changed = False
            for i in range(n - 1, -1, -1):
                rec = b.ops[i]
                if (
                    not alive[i]
                    or readers[i]
                    or out_op[i]
                    or rec.kind in (OpKind.PARAMETER, OpKind.CONTROL_FLOW)
                    or rec.collective is not None
                    or "custom_call" in rec.opcode
                    or i in b.returned_ops
                ):
                    continue
                alive[i] = False
                changed = True
                for o in set(rec.operands) | set(rec.control):
                    readers[o] -= 1
        return [i for i in range(n) if alive[i]]

    def finish(self, b: _Build, func: Func) -> Graph:
        name = self.m.name if self.m.name != "module" else func.name
        gb = GraphBuilder(name)
        keep = self.dead_code(b)
        new = {old: k for k, old in enumerate(keep)}
        for rec in b.ops:
            rec.operands = [new[o] for o in rec.operands if o in new]
            rec.control = [new[o] for o in rec.control if o in new]
        b.ops = [b.ops[i] for i in keep]
        live_bufs = []
        for buf in b.bufs:
            if buf.d in new:
                buf.d = new[buf.d]
                buf.users = [new[u] for u in buf.users if u in new]
                live_bufs.append(buf)
        b.bufs = live_bufs
        for rec in b.ops:
            tr = self.max_of(rec.transient, rec.name) if rec.transient else DimPoly.const(0)
            gb.add_op(
                rec.name,
                rec.opcode,
                rec.kind,
                operands=rec.operands,
                control_preds=rec.control,
                flops=self.sym(rec.flops, rec.name, note=False),
                bytes_accessed=self.sym(rec.bytes, rec.name, note=False),
                transient=self.sym(tr, f"{rec.name} (transient)"),
                attrs=rec.attrs,
            )
        for i, rec in enumerate(b.ops):
            if rec.collective is not None:
                kind, payload, g, groups, ch = rec.collective
                gb.set_collective(i, Collective(kind, self.sym(payload, rec.name), g, groups, ch))
        for buf in b.bufs:
            size = self.sym(buf.size, buf.name)
            if not size.terms:
                continue
            gb.add_buffer(
                buf.d,
                size,
                users=buf.users,
                name=buf.name,
                live_in=buf.live_in,
                live_out=buf.live_out,
            )
        gb.meta["source"] = "stablehlo"
        gb.meta["approximations"] = list(dict.fromkeys(self.approx))
        gb.meta["dim_names"] = sorted(self.dim_names)
        gb.meta["dim_constraints"] = list(self.constraints)
        return gb.build()


def _truth(x):
    if isinstance(x, bool):
        return x
    if isinstance(x, DimPoly):
        if x.is_const:
            return x.value != 0
        if x.positive():
            return True
    return None


def _is_placeholder_free(p: DimPoly) -> bool:
    return not any(isinstance(a, str) and a.startswith("?") for a in p.atoms())


def _deep_atoms(p: DimPoly) -> set:
    out = set()
    for a in p.atoms():
        out.add(a)
        if isinstance(a, tuple):
            for x in a[1:]:
                if isinstance(x, DimPoly):
                    out |= _deep_atoms(x)
    return out


def _free_uses(block: Block) -> Counter:
    """Uses of each value name in ``block``: operands of its ops, and names that nested
    regions read from outside (the region op reads them)."""
    c: Counter = Counter()
    for op in block.ops:
        c.update(op.operands)
        for region in op.regions:
            for blk in region:
                inner = _free_uses(blk)
                defined = (
                    {a for a, _ in blk.args}
                    | set(op.binders)
                    | {r for o in blk.ops for r in o.results}
                )
                for name, n in inner.items():
                    if name not in defined:
                        c[name] += n
    return c


# -- entry points ----------------------------------------------------------------------------


def read_stablehlo_graph(path: str, function: str | None = None) -> Graph:
    """Read MLIR text (StableHLO/MHLO) into the ``Graph`` of its main function."""
    return StableHloConverter(read_mlir_module(path)).graph(function)


def read_stablehlo_text(text: str, function: str | None = None, path: str | None = None) -> Graph:
    return StableHloConverter(parse_mlir_text(text, path)).graph(function)


__all__ = ["read_stablehlo_graph", "read_stablehlo_text", "StableHloConverter", "parse_type"]
