"""XLA HLO text -> ``Graph``: one graph per scheduled computation, XLA's dataflow rules.

Buffers follow XLA's dataflow and alias analyses (see the reference notes, section 2):
- constants are ops but allocate nothing; entry parameters are live-in and, unless donated
  through ``input_output_alias``/``buffer_donor``, live-out; values reaching the root are
  live-out;
- get-tuple-element, bitcast, tuple elements, add-dependency, opt-barrier and domain forward
  the operand's buffers (a tuple allocates only its 8-byte-per-element index table);
- in-place ops (dynamic-update-slice, scatter, all-reduce-start, the 4-operand
  collective-permute, ``output_to_operand_aliasing``, fusions whose root is an in-place op on
  a fusion parameter), a while's loop state and an output aliased to a donated parameter that
  its defining op reads are written over the operand: one buffer for both values. That holds
  only if every other reader of the old value runs before the writer: such readers get an
  ordering edge to the writer (``meta["alias_order_edges"]``); where a reader can only run
  after the writer (or, in a scheduled module, is written after it), or the operand may not
  be overwritten (a constant, a non-donated entry parameter, a value twice in a loop state),
  the new value keeps its own buffer: the copy XLA inserts;
- call forwards what the callee passes through from its parameters and defines the rest;
  conditional defines its outputs; the called computations' own temporaries, at their peak
  under their own order, go into ``transient`` of the calling op;
- async pairs (``*-start``/``*-done``, send/recv, copy-start/done, async-start/update/done
  and the ``<op>-start`` sugar): the start defines the in-flight buffers (result, contexts,
  tuple tables) and forwards the operands it carries; the done uses all of them, so they
  stay live until it runs, and forwards the result. Temporaries of an async-called
  computation become a buffer from start to done.
Buffers of size 0 (tokens, empty arrays) are not created. Host buffers (``S(5)``) get
``space=5`` and count 0 on the device.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cpsched.analysis.memory import lower_bound, simulate
from cpsched.analysis.validate import validate_order
from cpsched.core import opcodes
from cpsched.core.errors import InputError, ScheduleError
from cpsched.core.graph import Collective, Graph, GraphBuilder, OpKind
from cpsched.core.symbolic import SymExpr
from cpsched.readers.files import short_path
from cpsched.readers.hlo.parser import (
    CALL_KEYS,
    ELEMENT_BYTES,
    HloComputation,
    HloInstruction,
    HloModule,
    Shape,
    gc_paused,
    in_text_order,
    parse_groups,
    parse_hlo_text,
    parse_int_list,
    parse_kv_strings,
    parse_output_operand_aliasing,
    parse_replica_groups,
    parse_window,
    read_hlo_module,
)

# -- opcode classes ------------------------------------------------------------------------

FORWARDING = set(opcodes.FORWARDING)
CONTROL_FLOW = set(opcodes.CONTROL_FLOW)
ASYNC_STARTS = {*opcodes.ASYNC_STARTS, "send", "recv"}
ASYNC_DONES = {*opcodes.ASYNC_DONES, "send-done", "recv-done"}
COLLECTIVES = set(opcodes.COLLECTIVES)
# map applies its computation per element; rng draws one value per element.
ELEMENTWISE = opcodes.ELEMENTWISE_MATH | {"map", "rng"}
REDUCING = {
    "reduce",
    "all-reduce",
    "all-reduce-start",
    "reduce-scatter",
    "sort",
    "select-and-scatter",
    "cholesky",
    "triangular-solve",
    "fft",
}


def op_kind(ins: HloInstruction) -> OpKind:
    op = ins.opcode
    if op == "parameter":
        return OpKind.PARAMETER
    if op == "constant":
        return OpKind.CONSTANT
    if op in FORWARDING:
        return OpKind.ALIAS
    if op in CONTROL_FLOW:
        return OpKind.CONTROL_FLOW
    if op in ASYNC_STARTS:
        return OpKind.ASYNC_START
    if op == "async-update":
        return OpKind.ASYNC_UPDATE
    if op in ASYNC_DONES:
        return OpKind.ASYNC_DONE
    return OpKind.COMPUTE


# -- sizes ---------------------------------------------------------------------------------

UNBOUNDED_DIM = "dyn"  # symbol for ``?`` dims (XLA cannot size them either)


def shape_bytes(shape: Shape | None) -> SymExpr | int:
    """XLA ByteSizeOf (pointer size 8) of the top level of ``shape``; symbolic for ``?``."""
    if shape is None:
        return 0
    if not shape.is_array or not any(shape.unbounded):
        return shape.byte_size()
    known = 1
    for d, u in zip(shape.dims, shape.unbounded):
        if not u:
            known *= d
    per = (
        ELEMENT_BYTES[shape.etype] if shape.element_bits is None else (shape.element_bits + 7) // 8
    )
    expr = SymExpr.const(known * per)
    for u in shape.unbounded:
        if u:
            expr = expr * SymExpr.dim(UNBOUNDED_DIM)
    return expr


def leaf_bytes(shape: Shape | None) -> int:
    return 0 if shape is None else shape.leaf_bytes()


def _is_zero(size) -> bool:
    return (size == 0) if isinstance(size, int) else (not size.terms)


# -- call graph ----------------------------------------------------------------------------


def call_contexts(module: HloModule) -> dict[str, str]:
    """Computation name -> ``entry``, ``sequential`` (while/conditional/call/async bodies:
    scheduled on their own), ``fusion``, ``embedded`` (to_apply of reduce, sort, ... and
    custom-call computations) or ``uncalled``."""
    ctx: dict[str, set[str]] = {c.name: set() for c in module.computations}
    for comp in module.computations:
        for ins in comp.instructions:
            for role, callee in ins.called():
                op = ins.opcode
                if op == "fusion":
                    kind = "fusion"
                elif op in ("async-start", "async-update", "async-done") and role == "calls":
                    if ins.wrapped_opcode is None:
                        kind = "sequential"
                    else:
                        kind = "fusion" if ins.wrapped_opcode == "fusion" else "embedded"
                elif op in CONTROL_FLOW:
                    kind = "sequential"
                else:
                    kind = "embedded"
                ctx[callee].add(kind)
    out = {}
    for name, kinds in ctx.items():
        if name == module.entry.name:
            out[name] = "entry"
        elif "sequential" in kinds:
            out[name] = "sequential"
        elif "fusion" in kinds:
            out[name] = "fusion"
        elif kinds:
            out[name] = "embedded"
        else:
            out[name] = "uncalled"
    return out


def scheduled_computations(module: HloModule) -> list[str]:
    """Computations that get a sequence of their own (non-fusion, non-embedded), callees
    first as in XLA's post order over the call graph."""
    ctx = call_contexts(module)
    keep = {n for n, k in ctx.items() if k in ("entry", "sequential", "uncalled")}
    order: list[str] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        for ins in module.by_name[name].instructions:
            for _, callee in ins.called():
                visit(callee)
        if name in keep:
            order.append(name)

    for c in module.computations:
        visit(c.name)
    return order


def computation_orders(module: HloModule) -> dict[str, list[str]]:
    """The order of every computation that gets a sequence (``scheduled_computations``), as
    instruction names: the module's own sequence where it is scheduled, else the text order
    when it is valid, else a topological one."""
    conv = HloConverter(module)
    out = {}
    for name in scheduled_computations(module):
        g = conv.graph(name)
        out[name] = [g.op_names[i] for i in conv._order_for(g, name)]
    return out


# -- in-place pairs (XLA's GetInPlaceInputOutputPairs) --------------------------------------


def _follow(comp: HloComputation, ins: HloInstruction, idx: tuple[int, ...]):
    """Walk back through tuple / get-tuple-element / bitcast indirections."""
    while True:
        if ins.opcode == "tuple" and idx:
            ins = comp.index[ins.operands[idx[0]]]
            idx = idx[1:]
        elif ins.opcode == "get-tuple-element" and ins.tuple_index is not None:
            idx = (ins.tuple_index,) + idx
            ins = comp.index[ins.operands[0]]
        elif ins.opcode == "bitcast" and not idx and ins.operands:
            ins = comp.index[ins.operands[0]]
        else:
            return ins, idx


def inplace_pairs(
    module: HloModule, ins: HloInstruction, _depth: int = 0
) -> list[tuple[int, tuple[int, ...], tuple[int, ...]]]:
    """``(operand number, operand index, output index)`` that must share one buffer."""
    op = ins.opcode
    n = len(ins.operands)
    if op in ("dynamic-update-slice", "scatter", "all-reduce-start"):
        k = 1 if op == "dynamic-update-slice" else (n - 1) // 2 if op == "scatter" else n
        if k <= 1:
            return [(0, (), ())] if n else []
        return [(i, (), (i,)) for i in range(k)]
    if op == "collective-permute" and n == 4:
        return [(1, (), ())]
    if op == "collective-permute-start" and n == 4:
        return [(1, (), (1,))]
    if op == "ragged-all-to-all" and n > 1:
        return [(1, (), ())]
    if op == "set-dimension-size" and n:
        return [(0, (), ())]
    pairs = [
        (o, oi, out)
        for out, o, oi in parse_output_operand_aliasing(ins.attrs.get("output_to_operand_aliasing"))
    ]
    if op == "fusion" and _depth < 16:
        calls = ins.attrs.get("calls")
        body = module.by_name.get(calls.lstrip("%")) if calls else None
        if body is not None and ins.shape is not None:
            for out_idx, sub in ins.shape.subshapes():
                if sub.is_tuple:
                    continue
                src, sidx = _follow(body, body.root, out_idx)
                for o, oi, out in inplace_pairs(module, src, _depth + 1):
                    if out != sidx or o >= len(src.operands):
                        continue
                    s2, i2 = _follow(body, body.index[src.operands[o]], oi)
                    if s2.opcode == "fusion":
                        for o3, oi3, out3 in inplace_pairs(module, s2, _depth + 1):
                            if out3 == i2:
                                s2, i2 = _follow(body, body.index[s2.operands[o3]], oi3)
                                break
                    if s2.opcode == "parameter":
                        pairs.append((s2.parameter_number, i2, out_idx))
    return pairs


# -- costs ---------------------------------------------------------------------------------


def _elements(shape: Shape | None) -> int:
    if shape is None:
        return 0
    if shape.is_tuple:
        return sum(_elements(e) for e in shape.elements)
    return shape.element_count() if shape.is_array else 0


def _dim_labels(raw: str | None):
    m = re.fullmatch(r"\s*([0-9a-z?]+)_([0-9a-z?]+)->([0-9a-z?]+)\s*", raw or "")
    return m.groups() if m else None


@dataclass
class _CompResult:
    graph: Graph
    held: np.ndarray  # [n_buffers] bool: parameters + root values
    # root index -> (parameter number, index in it, updated in place) or None
    root_sources: dict[tuple[int, ...], tuple[int, tuple[int, ...], bool] | None]
    # while bodies: (buffer, bytes, ops that read the incoming loop-state value, the op that
    # writes the new value into the same buffer or None) for each state leaf the body
    # does not pass through; XLA's live ranges leave the bytes free in between
    state_gaps: tuple = ()
    flops: int = 0
    bytes_accessed: int = 0
    notes: list[str] = field(default_factory=list)


class HloConverter:
    """Builds ``Graph``s for the computations of one module (results cached)."""

    def __init__(
        self,
        module: HloModule,
        orders: Mapping[str, Sequence[str]] | None = None,
        pointer_size: int = 8,
    ):
        if pointer_size != 8:
            raise InputError("the HLO reader sizes tuple tables with 8-byte pointers only")
        self.m = module
        self.orders = dict(orders or {})
        self.ctx = call_contexts(module)
        # a while body's output is written over its parameter (the loop state is one buffer)
        self.while_bodies = {
            callee
            for comp in module.computations
            for ins in comp.instructions
            if ins.opcode == "while"
            for role, callee in ins.called()
            if role == "body"
        }
        self._results: dict[str, _CompResult] = {}
        self._sources: dict[int, str | None] = {}
        self._transient: dict[str, SymExpr] = {}
        self._excess: dict[str, SymExpr] = {}
        self._body_cost: dict[str, tuple[int, int]] = {}
        self._body_launches: dict[str, int] = {}
        self._body_work: dict[str, tuple[int, int]] = {}
        self._backend: str | None | bool = False  # not looked at yet
        self._active: set[str] = set()
        # derived facts per shape object, keyed by id(); each entry holds the shape itself so
        # the id cannot be reused while it is cached
        self._leaf: dict[int, tuple[Shape, int]] = {}
        self._size: dict[int, tuple[Shape, SymExpr | int]] = {}
        self._text: dict[int, tuple[Shape, str, bool]] = {}
        self._consts: dict[int, SymExpr] = {}

    # -- memoized shape facts -----------------------------------------------------------------

    def source_of(self, metadata: Mapping[str, str]) -> str | None:
        """``file.py:LINE`` of an instruction's metadata: ``source_file`` / ``source_line``
        (older XLA), or its ``stack_frame_id`` in the module's ``StackFrames`` (newer)."""
        if "source_file" in metadata and "source_line" in metadata:
            return f"{short_path(metadata['source_file'])}:{metadata['source_line']}"
        frame = metadata.get("stack_frame_id")
        if frame is None or not frame.isdigit():
            return None
        key = int(frame)
        if key not in self._sources:
            loc = self.m.source_of_frame(key)
            self._sources[key] = f"{short_path(loc[0])}:{loc[1]}" if loc else None
        return self._sources[key]

    def leaf_bytes(self, shape: Shape | None) -> int:
        if shape is None:
            return 0
        e = self._leaf.get(id(shape))
        if e is None:
            e = self._leaf[id(shape)] = (shape, shape.leaf_bytes())
        return e[1]

    def shape_bytes(self, shape: Shape | None) -> SymExpr | int:
        if shape is None:
            return 0
        e = self._size.get(id(shape))
        if e is None:
            e = self._size[id(shape)] = (shape, shape_bytes(shape))
        return e[1]

    def shape_text(self, shape: Shape) -> tuple[str, bool]:
        """``(str(shape), shape.is_effective_scalar())``."""
        e = self._text.get(id(shape))
        if e is None:
            e = self._text[id(shape)] = (shape, str(shape), shape.is_effective_scalar())
        return e[1], e[2]

    def const(self, value) -> SymExpr:
        """``SymExpr.parse(value)``, one shared object per integer."""
        if type(value) is not int:
            return SymExpr.parse(value)
        e = self._consts.get(value)
        if e is None:
            e = self._consts[value] = SymExpr.const(value)
        return e

    # -- public -------------------------------------------------------------------------------
    def graph(self, name: str | None = None) -> Graph:
        name = name or self.m.entry.name
        if name not in self.m.by_name:
            raise InputError(
                f"no computation named {name!r} in the module "
                f"(have: {', '.join(c.name for c in self.m.computations[:8])}"
                + (" ..." if len(self.m.computations) > 8 else "")
                + ")",
                path=self.m.path,
            )
        with gc_paused():
            return self._result(name).graph

    # -- costs --------------------------------------------------------------------------------
    def _shape_of(self, comp: HloComputation, ins: HloInstruction, k: int) -> Shape | None:
        o = comp.index[ins.operands[k]]
        return o.shape if o.shape is not None else ins.operand_shapes[k]

    def op_cost(self, comp: HloComputation, ins: HloInstruction) -> tuple[int, int]:
        """(flops, bytes accessed) of one instruction."""
        op = ins.opcode
        out = ins.shape
        if op in ("parameter", "constant") or op in FORWARDING:
            return 0, 0
        if op in _CALLERS:
            return self._through_calls(ins, self._comp_cost)
        leaf = self.leaf_bytes
        memo = self._leaf
        index = comp.index
        in_bytes = 0
        for k, o in enumerate(ins.operands):
            s = index[o].shape
            if s is None:
                s = ins.operand_shapes[k]
            e = memo.get(id(s))
            in_bytes += e[1] if e is not None else leaf(s)
        if op in ASYNC_DONES or op == "async-update":
            return 0, 0
        if op == "async-start":
            calls = ins.attrs.get("calls")
            res = (
                out.elements[1]
                if out is not None and out.is_tuple and len(out.elements) > 1
                else None
            )
            f = 0
            if calls:
                f = self._comp_cost(calls.lstrip("%"))[0]
            return f, in_bytes + leaf(res)
        if op in ASYNC_STARTS:  # what moves: the operands in, the result out
            res = out
            if out is not None and out.is_tuple and out.elements:
                k = {"all-gather-start": 1, "collective-permute-start": 1}.get(op, 0)
                res = out.elements[k] if k < len(out.elements) else None
            if op == "send":
                res = None
            return 0, in_bytes + leaf(res)
        if op == "fusion":
            calls = ins.attrs.get("calls")
            f = self._comp_cost(calls.lstrip("%"))[0] if calls else 0
            return f, in_bytes + leaf(out)
        total = in_bytes + leaf(out)
        if op == "dot":
            lhs = self._shape_of(comp, ins, 0) if ins.operands else None
            k = 1
            if lhs is not None and lhs.is_array:
                for d in parse_int_list(ins.attrs.get("lhs_contracting_dims")):
                    if 0 <= d < lhs.rank:
                        k *= lhs.dims[d]
            return 2 * _elements(out) * k, total
        if op == "convolution":
            return self._conv_flops(comp, ins), total
        if op == "custom-call":
            return self._custom_call_flops(comp, ins), total
        if op in ELEMENTWISE:
            return _elements(out), total
        if op in REDUCING:
            return sum(
                _elements(self._shape_of(comp, ins, k)) for k in range(len(ins.operands))
            ), total
        if op == "reduce-window":
            w = 1
            for extent in _window(ins).get("size", []):
                w *= extent
            return _elements(out) * w, total
        return 0, total

    def _conv_flops(self, comp, ins) -> int:
        out = ins.shape
        if len(ins.operands) < 2:
            return 0
        lhs, rhs = self._shape_of(comp, ins, 0), self._shape_of(comp, ins, 1)
        labels = _dim_labels(ins.attrs.get("dim_labels"))
        fgc = int(ins.attrs.get("feature_group_count", "1"))
        window = 1
        in_feat = 1
        if labels and rhs is not None and rhs.is_array and len(labels[1]) == rhs.rank:
            for ch, d in zip(labels[1], rhs.dims):
                if ch.isdigit():
                    window *= d
            if lhs is not None and lhs.is_array and len(labels[0]) == lhs.rank and "f" in labels[0]:
                in_feat = lhs.dims[labels[0].index("f")] // max(fgc, 1)
            elif "i" in labels[1]:
                in_feat = rhs.dims[labels[1].index("i")]
        else:
            for s in _window(ins).get("size", []):
                window *= s
        return 2 * _elements(out) * window * in_feat

    def _custom_call_flops(self, comp, ins) -> int:
        target = (ins.attrs.get("custom_call_target") or "").strip('"')
        if "gemm" not in target and "matmul" not in target:
            return 0
        out = ins.shape
        if out is not None and out.is_tuple:
            out = out.elements[0] if out.elements else None
        lhs = self._shape_of(comp, ins, 0) if ins.operands else None
        if lhs is None or not lhs.is_array or not lhs.dims:
            return 2 * _elements(out)
        cfg = ins.backend_config()
        dims = None
        if isinstance(cfg, dict):
            gemm = cfg.get("gemm_backend_config", cfg)
            ddn = gemm.get("dot_dimension_numbers") if isinstance(gemm, dict) else None
            if isinstance(ddn, dict):
                dims = [int(x) for x in ddn.get("lhs_contracting_dimensions", [])]
        if dims is None:
            dims = [lhs.rank - 1]  # the usual row-major gemm
        k = 1
        for d in dims:
            if 0 <= d < lhs.rank:
                k *= lhs.dims[d]
        return 2 * _elements(out) * k

    @staticmethod
    def _through_calls(
        ins: HloInstruction, per_computation: Callable[[str], tuple[int, int]]
    ) -> tuple[int, int]:
        """A loop's, conditional's or call's pair from its computations' (``per_computation``):
        a loop's condition and body times its trip count (``known_trip_count``, else once), a
        conditional's largest branch (each figure on its own), a call's callee."""
        if ins.opcode == "while":
            trip = _trip_count(ins) or 1
            a = b = 0
            for role in ("condition", "body"):
                x, y = per_computation(ins.attrs.get(role, "").lstrip("%"))
                a += x
                b += y
            return a * trip, b * trip
        parts = [per_computation(c) for _, c in ins.called()]
        if not parts:
            return 0, 0
        return max(p[0] for p in parts), max(p[1] for p in parts)

    def _comp_cost(self, name: str) -> tuple[int, int]:
        """Summed (flops, bytes) of a called computation's instructions."""
        return self._summed(name, self._body_cost, self.op_cost)

    def _summed(
        self,
        name: str,
        cache: dict[str, tuple[int, int]],
        per_instruction: Callable[[HloComputation, HloInstruction], tuple[int, int]],
    ) -> tuple[int, int]:
        """``per_instruction``'s pairs summed over computation ``name``'s instructions, kept
        in ``cache``; (0, 0) for an unknown computation or one already being summed (a
        recursive call)."""
        if name in cache:
            return cache[name]
        comp = self.m.by_name.get(name)
        if comp is None or name in self._active:
            return 0, 0
        self._active.add(name)
        a = b = 0
        try:
            for ins in comp.instructions:
                x, y = per_instruction(comp, ins)
                a += x
                b += y
        finally:
            self._active.discard(name)
        cache[name] = (a, b)
        return a, b

    # -- work by class (an additive per-class time model reads it: ``cost.model``) ------------
    def work(
        self, comp: HloComputation, ins: HloInstruction, cost: tuple[int, int] | None = None
    ) -> tuple[int, int]:
        """(matmul flops, bytes moved) of one run of ``ins``: the flops of its dots,
        convolutions and matmul custom-calls (inside fusions and called computations too),
        and the bytes it reads and writes where an in-place update or a slice touches only
        part of a buffer: a dynamic-update-slice reads and writes its update, a
        dynamic-slice, slice or gather reads what it returns. A loop's figures are its
        body's and condition's times its trip count, a conditional's its largest branch's,
        a call's its callee's. ``op_cost``'s bytes count every operand and result whole."""
        op = ins.opcode
        if op in ("parameter", "constant") or op in FORWARDING or op in ASYNC_DONES:
            return 0, 0
        if op in _CALLERS:
            return self._through_calls(ins, self._comp_work)
        f, total = cost if cost is not None else self.op_cost(comp, ins)
        if op in ("dot", "convolution"):
            return f, total
        if op == "custom-call":
            return self._custom_call_flops(comp, ins), total
        if op == "fusion":
            calls = (ins.attrs.get("calls") or "").lstrip("%")
            inner = self.m.by_name.get(calls)
            if inner is None:
                return 0, total
            return self._comp_work(calls)[0], self._fusion_bytes(comp, ins, inner)
        if op == "dynamic-update-slice" and len(ins.operands) > 1:
            return 0, 2 * self.leaf_bytes(self._shape_of(comp, ins, 1))
        if op in ("dynamic-slice", "slice", "gather"):
            return 0, 2 * self.leaf_bytes(ins.shape)
        return 0, total

    def _fusion_bytes(self, comp: HloComputation, ins: HloInstruction, inner) -> int:
        """Bytes a fusion moves: each parameter whole, unless it is only sliced (then what
        the slices read) or only the buffer a dynamic-update-slice writes in place (then
        nothing); the result whole, unless it is such an update (then the update)."""
        users: dict[str, list[tuple[HloInstruction, int]]] = {}
        for i in inner.instructions:
            for k, o in enumerate(i.operands):
                users.setdefault(o, []).append((i, k))
        root = inner.root
        while root.opcode == "bitcast" and root.operands:
            root = inner.index[root.operands[0]]
        in_place = None
        if root.opcode == "dynamic-update-slice" and root.operands:
            in_place = root.operands[0]
            while inner.index[in_place].opcode == "bitcast" and inner.index[in_place].operands:
                in_place = inner.index[in_place].operands[0]
        by = 0
        for i in inner.instructions:
            if i.opcode != "parameter":
                continue
            k = i.parameter_number
            whole = (
                self.leaf_bytes(self._shape_of(comp, ins, k))
                if k is not None and k < len(ins.operands)
                else self.leaf_bytes(i.shape)
            )
            if i.name == in_place:
                continue
            us = users.get(i.name, [])
            if us and all(
                u.opcode in ("dynamic-slice", "slice", "gather") and pos == 0 for u, pos in us
            ):
                by += min(whole, sum(self.leaf_bytes(u.shape) for u, _ in us))
            else:
                by += whole
        if in_place is not None and len(root.operands) > 1:
            by += self.leaf_bytes(inner.index[root.operands[1]].shape)
        else:
            by += self.leaf_bytes(ins.shape)
        return by

    def _comp_work(self, name: str) -> tuple[int, int]:
        """Summed ``work`` of a called computation's instructions."""
        return self._summed(name, self._body_work, self.work)

    @property
    def backend(self) -> str | None:
        """``module_backend`` of the module, looked at once."""
        if self._backend is False:
            self._backend = module_backend(self.m)
        return self._backend  # type: ignore[return-value]

    def launches(self, ins: HloInstruction) -> int:
        """How many ops one run of ``ins`` launches: 1 for a plain op, 0 for one that moves
        nothing (parameters, constants, tuples, bitcasts, async dones); a loop launches its
        condition's and body's ops every iteration (``known_trip_count``, else once), a
        conditional its largest branch's, a call its callee's."""
        op = ins.opcode
        if op in ("parameter", "constant") or op in FORWARDING or op in ASYNC_DONES:
            return 0
        if op == "while":
            trip = _trip_count(ins) or 1
            return trip * sum(
                self._comp_launches(ins.attrs.get(role, "").lstrip("%"))
                for role in ("condition", "body")
            )
        if op in ("conditional", "call"):
            return max((self._comp_launches(c) for _, c in ins.called()), default=0)
        return 1

    def _comp_launches(self, name: str) -> int:
        if name in self._body_launches:
            return self._body_launches[name]
        comp = self.m.by_name.get(name)
        if comp is None or name in self._active:
            return 0
        self._active.add(name)
        try:
            n = sum(self.launches(ins) for ins in comp.instructions)
        finally:
            self._active.discard(name)
        self._body_launches[name] = n
        return n

    # -- transient of called computations -----------------------------------------------------
    def temporaries(self, name: str) -> SymExpr:
        """Peak bytes a called computation needs beyond what its caller holds (its
        parameters and the values it returns), under its own order."""
        if name in self._transient:
            return self._transient[name]
        res = self._result(name)
        g = res.graph
        sizes = tuple(SymExpr.const(0) if h else s for s, h in zip(g.buffer_sizes, res.held))
        if all(s.is_constant for s in sizes) and all(t.is_constant for t in g.transient):
            g2 = g.with_(
                buffer_sizes=sizes,
                buffer_live_in=np.zeros(g.n_buffers, dtype=bool),
                buffer_live_out=np.zeros(g.n_buffers, dtype=bool),
            )
            prof = simulate(g2, self._order_for(g, name))
            val = SymExpr.const(int(prof.peak[0]) if g.n_ops else 0)
        else:  # symbolic sizes: no max of polynomials, take the sum as a safe bound
            val = SymExpr.const(0)
            for s in sizes:
                val = val + s
            for t in set(g.transient):
                val = val + t
        self._transient[name] = val
        return val

    def usage(self, name: str, order: Sequence[int]) -> np.ndarray:
        """Bytes per step of a computation under ``order`` as XLA's live ranges count them
        (first scenario): the Graph's simulation, less a while body's loop-state bytes
        between the last read of the old value and the write of the new one."""
        res = self._result(name)
        g = res.graph
        usage = simulate(g, order).usage[0].copy()
        if res.state_gaps:
            pos = np.empty(g.n_ops, dtype=np.int64)
            pos[np.asarray(order, dtype=np.int64)] = np.arange(g.n_ops)
            for _b, size, readers, writer in res.state_gaps:
                last = max(int(pos[r]) for r in readers)
                upto = int(pos[writer]) if writer is not None else g.n_ops
                usage[last + 1 : upto] -= size
        return usage

    def callee_transients(self, g: Graph, excess_of: Mapping[str, int]) -> tuple:
        """``g.transient`` with every while / conditional / call op's entry replaced by the
        largest of ``excess_of`` over its called computations (at least 0)."""
        out = list(g.transient)
        for i, op in enumerate(g.opcodes):
            if op in CONTROL_FLOW:
                called = g.attrs(i).get("called_computations") or ()
                vals = [excess_of[c] for c in called if c in excess_of]
                if vals:
                    out[i] = SymExpr.const(max(0, max(vals)))
        return tuple(out)

    def excess_lower_bound(self, name: str, excess_of: Mapping[str, int]) -> int | None:
        """A lower bound, over every order of ``name`` (and, through ``excess_of``, bounds
        for its callees), of what ``excess`` can be; None for symbolic sizes. The loop-state
        bytes a while body may leave free are not counted."""
        res = self._result(name)
        g = res.graph
        if not all(s.is_constant for s in g.buffer_sizes):
            return None
        sizes = list(g.buffer_sizes)
        for b, _size, _r, _w in res.state_gaps:
            sizes[b] = SymExpr.const(0)
        g2 = g.with_(buffer_sizes=tuple(sizes), transient=self.callee_transients(g, excess_of))
        if not all(t.is_constant for t in g2.transient):
            return None
        held = sum(int(g.buffer_sizes[b].constant_value) for b in np.flatnonzero(res.held))
        return int(lower_bound(g2)[0]) - held

    def excess(self, name: str) -> SymExpr:
        """Bytes a called computation needs, at its peak under its own order, beyond what
        its caller counts at the calling op (its parameters and results). The callee's
        parameters and root values are simulated with XLA's live ranges: a while body's
        loop state is live until its last read and again from the write of the new value
        (the gap in between is free), a branch's result from its definition on. Zero
        when the caller already counts more than the callee ever has live."""
        if name in self._excess:
            return self._excess[name]
        res = self._result(name)
        g = res.graph
        if not (
            all(s.is_constant for s in g.buffer_sizes) and all(t.is_constant for t in g.transient)
        ):
            val = self.temporaries(name)  # symbolic: the safe bound
        elif g.n_ops == 0:
            val = SymExpr.const(0)
        else:
            usage = self.usage(name, self._order_for(g, name))
            held = sum(int(g.buffer_sizes[b].constant_value) for b in np.flatnonzero(res.held))
            # the caller may count more than the callee ever has live (its parameters stay
            # live across the call): no excess then
            val = SymExpr.const(max(0, int(usage.max()) - held))
        self._excess[name] = val
        return val

    def _order_for(self, g: Graph, name: str) -> list[int]:
        if name in self.orders:
            try:
                order = [
                    g.op_index(str(x).lstrip("%")) if not isinstance(x, int) else x
                    for x in self.orders[name]
                ]
            except KeyError as e:
                raise InputError(f"order for {name!r}: {e.args[0]}", path=self.m.path) from None
            try:
                validate_order(g, order, what="the given order")
            except ScheduleError as e:
                raise InputError(str(e), path=self.m.path) from None
            return order
        if g.original_order is not None:
            return list(g.original_order)
        text = list(range(g.n_ops))
        try:
            validate_order(g, text)
            return text
        except ScheduleError:
            return g.topological_order()

    # -- graph construction -------------------------------------------------------------------
    def _result(self, name: str) -> _CompResult:
        if name in self._results:
            return self._results[name]
        if name in self._active:
            raise InputError(f"computation {name!r} calls itself", path=self.m.path)
        self._active.add(name)
        try:
            res = _GraphBuild(self, self.m.by_name[name]).run()
        finally:
            self._active.discard(name)
        self._results[name] = res
        return res


# opcodes whose ``work`` can differ from (no matmul flops, ``op_cost``'s bytes)
_WORK_OPCODES = frozenset(
    {
        "fusion",
        "while",
        "conditional",
        "call",
        "dot",
        "convolution",
        "custom-call",
        "dynamic-update-slice",
        "dynamic-slice",
        "slice",
        "gather",
    }
)


# ops that run called computations: a loop, a conditional, a call
_CALLERS = frozenset(("while", "conditional", "call"))


def _trip_count(ins: HloInstruction) -> int | None:
    cfg = ins.backend_config()
    if isinstance(cfg, dict):
        ktc = cfg.get("known_trip_count")
        if isinstance(ktc, dict) and "n" in ktc:
            try:
                return int(ktc["n"])
            except (TypeError, ValueError):
                return None
    return None


def _window(ins: HloInstruction) -> dict[str, list[int]]:
    return parse_window(ins.attrs.get("window"))


Tree = dict[tuple[int, ...], Any]  # shape index -> value id (int) or None (nothing allocated)


# attributes and opcodes ``_GraphBuild.attrs_of`` has more to say about
_MORE_ATTRS = frozenset(
    (
        "frontend_attributes",
        "backend_config",
        "schedule",
        "custom_call_schedule",
        "channel_id",
        "source_target_pairs",
        "is_host_transfer",
        "custom_call_target",
        "kind",
        "infeed_config",
        "outfeed_config",
        *CALL_KEYS,
    )
)
_MORE_OPCODES = frozenset(("while", "async-start", "async-update", "async-done", "parameter"))
# opcodes with their own case in ``_GraphBuild.values`` (the others define their outputs)
_SPECIAL_VALUES = (
    {
        "parameter",
        "constant",
        "get-tuple-element",
        "tuple",
        "while",
        "call",
        "conditional",
        "copy",
        "async-update",
    }
    | FORWARDING
    | ASYNC_STARTS
    | ASYNC_DONES
)
# opcodes ``inplace_pairs`` can give pairs for without ``output_to_operand_aliasing``
_MAYBE_IN_PLACE = {
    "dynamic-update-slice",
    "scatter",
    "all-reduce-start",
    "collective-permute",
    "collective-permute-start",
    "ragged-all-to-all",
    "set-dimension-size",
    "fusion",
}
# opcodes ``_GraphBuild.collective`` does something for
_MAYBE_COLLECTIVE = (
    COLLECTIVES | {c + "-start" for c in COLLECTIVES} | {"send", "recv", "async-start"}
)


# What XLA's backends leave in the modules they optimize: XLA:GPU's backend configs and
# library calls, XLA:CPU's ``CpuBackendConfig`` and its YNNPACK / oneDNN fusions and calls.
_GPU_MARKS = (
    "operation_queue_id",
    "fusion_backend_config",
    "gemm_backend_config",
    "cudnn_conv_backend_config",
)
_GPU_TARGETS = ("__cublas", "__cudnn", "__triton", "__gpu")
_CPU_MARKS = ("outer_dimension_partitions", "__ynn_fusion", "__onednn")
_CPU_TARGETS = ("__onednn", "__xnn", "__ynn")


def module_backend(module) -> str | None:
    """``gpu`` for a module XLA:GPU optimized, ``cpu`` for one XLA:CPU optimized (their
    backend configs and library calls say which), else ``None``: a module no backend has
    optimized yet (jax's lowered HLO) carries neither."""
    cpu = False
    for comp in module.computations:
        for ins in comp.instructions:
            raw = ins.attrs.get("backend_config", "")
            if raw:
                if any(m in raw for m in _GPU_MARKS):
                    return "gpu"
                cpu = cpu or any(m in raw for m in _CPU_MARKS)
            if ins.opcode == "custom-call":
                target = ins.attrs.get("custom_call_target", "").strip('"')
                if target.startswith(_GPU_TARGETS):
                    return "gpu"
                cpu = cpu or target.startswith(_CPU_TARGETS)
    return "cpu" if cpu else None


def _subtree(tree: Tree, prefix: tuple[int, ...]) -> Tree:
    n = len(prefix)
    return {idx[n:]: v for idx, v in tree.items() if idx[:n] == prefix}


def _flat(tree: Tree) -> list[int]:
    return [v for v in tree.values() if v is not None]


@dataclass
class _Value:
    op: str
    name: str
    size: SymExpr | int
    space: int
    live_in: bool = False
    live_out: bool = False
    users: dict = field(default_factory=dict)  # op name -> None (ordered set)


class _GraphBuild:
    """Dataflow of one computation: values first (one per defining op and shape index), then
    buffers: a value written in place of another (in-place ops, while loop state, outputs
    aliased to donated parameters) joins its buffer, when that is safe under every order."""

    def __init__(self, conv: HloConverter, comp: HloComputation):
        self.conv = conv
        self.m = conv.m
        self.comp = comp
        self.is_entry = comp is self.m.entry
        self.is_while_body = comp.name in conv.while_bodies
        self.b = GraphBuilder(comp.name)
        inline = [i.name for i in comp.instructions if i.synthetic]
        if inline:  # no line of their own in the text: a writer places them (schedule.py)
            self.b.meta["inline_ops"] = inline
        self.trees: dict[str, Tree] = {}
        self.vals: list[_Value] = []
        self.readonly: set[int] = set()  # entry parameters that are not donated
        self.param_origin: dict[int, tuple[int, tuple[int, ...]]] = {}
        self.param_vid: dict[tuple[int, tuple[int, ...]], int] = {}
        self.extra_held: dict[str, list[int]] = {}  # async start -> scratch values
        self.shares: list[tuple[int, int, str]] = []  # (new value, old value, writer op)
        self.no_edge_shares: set[tuple[int, int]] = set()  # shares that may not add edges
        self.merged: dict[int, str] = {}  # overwritten value -> the op writing over it
        self.notes: list[str] = []
        self.donated: list[tuple[int, tuple[int, ...]]] = []
        self.io_alias_def: dict[tuple[str, tuple[int, ...]], tuple[int, tuple[int, ...]]] = {}
        if self.is_entry:
            self.donated = [(p, pi) for _, p, pi, _ in self.m.input_output_alias()]
            self.donated += self.m.buffer_donors()
            for out_idx, p, pi, _ in self.m.input_output_alias():
                try:
                    src, sidx = _follow(comp, comp.root, out_idx)
                except (IndexError, KeyError):
                    continue
                if src.opcode not in ("parameter", "constant"):
                    self.io_alias_def.setdefault((src.name, sidx), (p, pi))
        self.donated_of: dict[int, list[tuple[int, ...]]] = {}  # parameter -> donated indices
        for p, pi in self.donated:
            self.donated_of.setdefault(p, []).append(pi)

    # -- values -------------------------------------------------------------------------------
    def define(
        self,
        ins: HloInstruction,
        idx: tuple[int, ...],
        shape: Shape | None,
        live_in: bool = False,
        live_out: bool = False,
    ) -> int | None:
        size = self.conv.shape_bytes(shape)
        if _is_zero(size):
            return None
        if idx or ins.shape is not None and ins.shape.is_tuple:
            vname = ins.name + "{" + ",".join(map(str, idx)) + "}"
        else:
            vname = ins.name
        self.vals.append(
            _Value(
                ins.name,
                vname,
                size,
                shape.memory_space if shape is not None else 0,
                live_in,
                live_out,
            )
        )
        return len(self.vals) - 1

    def define_all(self, ins: HloInstruction, keep: Tree | None = None) -> Tree:
        """A tree with every index of ``ins``'s shape defined here, except those in ``keep``."""
        keep = keep or {}
        shape = ins.shape
        if shape is None:
            return {(): keep[()] if () in keep else None}
        if not shape.elements:  # one index only
            return {(): keep[()] if () in keep else self.define(ins, (), shape)}
        tree: Tree = {}
        for idx, sub in shape.subshapes():
            tree[idx] = keep[idx] if idx in keep else self.define(ins, idx, sub)
        return tree

    def shareable(self, vid: int | None) -> bool:
        return vid is not None and vid not in self.readonly

    def write_in_place(
        self,
        ins: HloInstruction,
        tree: Tree,
        pairs: Iterable[tuple[int, tuple[int, ...], tuple[int, ...]]],
        ops: list[Tree],
    ) -> None:
        """Ask for ``ins``'s output at each pair to share the operand's buffer."""
        for o, oi, out in pairs:
            if o < len(ops) and self.shareable(ops[o].get(oi)) and tree.get(out) is not None:
                self.shares.append((tree[out], ops[o][oi], ins.name))

    # -- main ---------------------------------------------------------------------------------
    def run(self) -> _CompResult:
        comp, b, conv = self.comp, self.b, self.conv
        instrs = comp.instructions
        kind_of: dict[str, OpKind] = {}  # op_kind depends on the opcode only
        kinds = []
        for i in instrs:
            k = kind_of.get(i.opcode)
            if k is None:
                k = kind_of[i.opcode] = op_kind(i)
            kinds.append(k)
        total_f = total_b = 0
        user_counts: dict[str, int] = {}
        for ins in instrs:
            for o in dict.fromkeys(ins.operands):
                user_counts[o] = user_counts.get(o, 0) + 1
        const = conv.const
        zero = const(0)
        added: set[str] = set()
        late: list[HloInstruction] = []  # operands written after the instruction
        for ins, kind in zip(instrs, kinds):
            f, by = conv.op_cost(comp, ins)
            total_f += f
            total_b += by
            # operands known by now go in with the op (same lists as adding them one by one)
            early = added.issuperset(ins.operands)
            b.add_op(
                ins.name,
                ins.opcode,
                kind,
                operands=ins.operands if early else (),
                flops=const(f),
                bytes_accessed=const(by),
                transient=zero,
                attrs=self._with_work(
                    self._with_launches(
                        self.attrs_of(ins, user_counts.get(ins.name, 0)), conv, ins
                    ),
                    conv,
                    comp,
                    ins,
                    (f, by),
                ),
            )
            added.add(ins.name)
            if not early:
                late.append(ins)
        for ins in late:
            for o in ins.operands:
                b.add_operand(ins.name, o)
        for ins in instrs:
            if "control-predecessors" in ins.attrs:
                for c in ins.control_predecessors:
                    b.add_control_pred(ins.name, c)
        vals = self.vals
        trees = self.trees
        io_alias_def = self.io_alias_def
        self.order = self.topological(instrs)
        for ins in self.order:
            tree, uses = self.values(ins)
            name = ins.name
            trees[name] = tree
            for v in uses:
                vals[v].users[name] = None
            for v in tree.values():
                if v is not None:
                    vals[v].users[name] = None
            if not io_alias_def:
                continue
            # an output aliased to a donated parameter it reads is written over it
            for idx, v in tree.items():
                target = io_alias_def.get((name, idx))
                pv = self.param_vid.get(target) if target is not None else None
                if (
                    v is not None
                    and pv is not None
                    and vals[v].op == name
                    and pv in uses
                    and _same_size(vals[v].size, vals[pv].size)
                ):
                    self.shares.append((v, pv, name))
        root_tree = self.trees[comp.root.name]
        for v in _flat(root_tree):
            self.vals[v].live_out = True
        if comp.name in conv.while_bodies:
            self.share_loop_state(root_tree)
        group = self.resolve_shares()
        bid_of = self.make_buffers(group)
        param_groups: dict[int, tuple[int, tuple[int, ...]]] = {}
        for v, origin in self.param_origin.items():
            param_groups.setdefault(group[v], origin)
        root_sources: dict[tuple[int, ...], tuple[int, tuple[int, ...], bool] | None] = {}
        for idx, v in root_tree.items():
            if v is None:
                root_sources[idx] = None
            elif v in self.param_origin:
                root_sources[idx] = self.param_origin[v] + (False,)  # passed through
            elif group[v] in param_groups:
                root_sources[idx] = param_groups[group[v]] + (True,)  # updated in place
            else:
                root_sources[idx] = None
        if self.m.is_scheduled:
            b.original_order = list(range(len(instrs)))
        b.meta.update(
            {
                "format": "hlo",
                "module": self.m.name,
                "computation": comp.name,
                "entry": self.is_entry,
                "is_scheduled": self.m.is_scheduled,
                "context": conv.ctx.get(comp.name),
                "root": comp.root.name,
                "replica_count": self.m.replica_count,
                "num_partitions": self.m.num_partitions,
                "notes": list(self.m.notes) + self.notes,
                "backend": conv.backend,
            }
        )
        try:
            g = b.build()
        except ScheduleError as e:
            raise InputError(
                f"is_scheduled=true but the text order of {comp.name!r} is not "
                f"a valid schedule: {e}",
                path=self.m.path,
                line=comp.line,
            ) from None
        except InputError as e:
            raise (e.with_path(self.m.path) if self.m.path else e) from None
        held = np.zeros(g.n_buffers, dtype=bool)
        for v in self.param_origin:
            held[bid_of[v]] = True
        for v in _flat(root_tree):
            held[bid_of[v]] = True
        gaps = self.loop_state_gaps(g, bid_of, root_tree) if self.is_while_body else ()
        return _CompResult(g, held, root_sources, gaps, total_f, total_b, self.notes)

    def loop_state_gaps(self, g: Graph, bid_of, root_tree: Tree) -> tuple:
        """A while body's loop-state parameters that its root does not pass through, each
        (buffer, constant size, its readers, the op written over it or None); sizes that
        are not constant are left out."""
        gaps = []
        passed = set(_flat(root_tree))
        const = self.conv.const
        vals = self.vals
        for (pnum, _idx), pv in self.param_vid.items():
            if pnum != 0 or pv in passed:
                continue
            size = const(vals[pv].size)
            if not size.is_constant:
                continue
            readers = [g.op_index(r) for r in vals[pv].users]
            writer = self.merged.get(pv)
            gaps.append(
                (
                    bid_of[pv],
                    int(size.constant_value),
                    readers,
                    g.op_index(writer) if writer is not None else None,
                )
            )
        return tuple(gaps)

    def share_loop_state(self, root_tree: Tree) -> None:
        """A while body writes its result over its parameter: each root value the body
        defines shares the buffer of the parameter value at the same index, so every other
        reader of that parameter value must run before the writer. For an async done (or a
        sync collective, which becomes one) XLA's latency-hiding scheduler adds those
        edges (ending at the start); for any other writer the buffer is shared only where
        the readers already precede it, else it keeps its own (the copy XLA's copy
        insertion leaves). Values passed through or placed twice in the state keep their
        own buffer too."""
        seen: dict[int, int] = {}
        for v in root_tree.values():
            if v is not None:
                seen[v] = seen.get(v, 0) + 1
        for idx, v in root_tree.items():
            pv = self.param_vid.get((0, idx))
            if v is None or pv is None or v == pv or seen[v] > 1 or v in self.param_origin:
                continue
            if _same_size(self.vals[v].size, self.vals[pv].size):
                writer = self.vals[v].op
                opcode = self.comp.index[writer].opcode
                if opcode not in ASYNC_DONES and opcode not in COLLECTIVES:
                    self.no_edge_shares.add((v, pv))
                self.shares.append((v, pv, writer))

    def resolve_shares(self) -> list[int]:
        """Union the share requests that hold under every order; returns value -> group.

        Writing ``new`` over ``old`` is only right if everything else that reads ``old``
        runs before the writer: such readers get an ordering edge to the writer (the copy
        XLA would otherwise insert is not needed then); a reader that can only run after
        the writer, a second writer of the same value, or (for a scheduled module) a reader
        placed after the writer in the text means XLA keeps a copy: the new value keeps its
        own buffer.
        """
        parent = list(range(len(self.vals)))

        def find(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        if not self.shares:
            return parent
        comp = self.comp
        pos = {i.name: k for k, i in enumerate(comp.instructions)}
        succ: dict[str, set[str]] = {i.name: set() for i in comp.instructions}
        pred: dict[str, set[str]] = {i.name: set() for i in comp.instructions}
        for i in comp.instructions:
            for o in list(i.operands) + i.control_predecessors:
                succ[o].add(i.name)
                pred[i.name].add(o)
        # positions in a topological order of succ while the added edges keep it one (they
        # do in a scheduled module), else None; it bounds the reachability searches
        topo: dict[str, int] | None = {i.name: k for k, i in enumerate(self.order)}
        overwritten: set[int] = set()
        added: list[tuple[str, str]] = []
        for new, old, writer in self.shares:
            if old in overwritten or find(new) == find(old):
                continue
            readers = [r for r in self.vals[old].users if r != writer]
            if readers:
                if self.m.is_scheduled and any(pos[r] > pos[writer] for r in readers):
                    continue
                if _reached(succ, writer, readers, topo, forward=True, first=True):
                    continue
                anc = _reached(pred, writer, readers, topo, forward=False)
                if (new, old) in self.no_edge_shares and not anc.issuperset(readers):
                    continue
                for r in readers:
                    if r not in anc:
                        if topo is not None and topo[r] > topo[writer]:
                            topo = None
                        succ[r].add(writer)
                        pred[writer].add(r)
                        self.b.add_control_pred(writer, r)
                        added.append((r, writer))
            parent[find(new)] = find(old)
            overwritten.add(old)
            self.merged[old] = writer
        if added:
            self.b.meta["alias_order_edges"] = added
        return [find(v) for v in range(len(self.vals))]

    def make_buffers(self, group: list[int]) -> list[int]:
        members: dict[int, list[int]] = {}
        for v in range(len(self.vals)):
            members.setdefault(group[v], []).append(v)
        bid_of = [0] * len(self.vals)
        vals = self.vals
        const = self.conv.const
        add_buffer = self.b.add_buffer
        for root in sorted(members):
            vs = members[root]
            first = vals[vs[0]]  # the oldest value: defined before the others
            if len(vs) == 1:
                bid_of[vs[0]] = add_buffer(
                    first.op,
                    const(first.size),
                    users=list(first.users),
                    name=first.name,
                    live_in=first.live_in,
                    live_out=first.live_out,
                    space=first.space,
                )
                continue
            users: dict = {}
            for v in vs:
                val = vals[v]
                if val.op != first.op:
                    users[val.op] = None
                users.update(val.users)
            sizes = [vals[v].size for v in vs]
            size = max(
                sizes,
                key=lambda x: (
                    x if isinstance(x, int) else (x.constant_value if x.is_constant else -1)
                ),
            )
            bid = add_buffer(
                first.op,
                const(size),
                users=list(users),
                name=first.name,
                live_in=any(vals[v].live_in for v in vs),
                live_out=any(vals[v].live_out for v in vs),
                space=first.space,
            )
            for v in vs:
                bid_of[v] = bid
        return bid_of

    def topological(self, instrs: list[HloInstruction]) -> list[HloInstruction]:
        if in_text_order(instrs):
            return instrs
        pos = {i.name: k for k, i in enumerate(instrs)}
        import heapq

        preds = [
            set(pos[o] for o in i.operands) | set(pos[c] for c in i.control_predecessors)
            for i in instrs
        ]
        succs: list[list[int]] = [[] for _ in instrs]
        for k, ps in enumerate(preds):
            for p in ps:
                succs[p].append(k)
        indeg = [len(p) for p in preds]
        ready = [k for k, d in enumerate(indeg) if d == 0]
        heapq.heapify(ready)
        out = []
        while ready:
            k = heapq.heappop(ready)
            out.append(instrs[k])
            for s in succs[k]:
                indeg[s] -= 1
                if indeg[s] == 0:
                    heapq.heappush(ready, s)
        return out

    # -- attributes ---------------------------------------------------------------------------
    @staticmethod
    def _with_work(
        a: dict[str, Any],
        conv: HloConverter,
        comp: HloComputation,
        ins: HloInstruction,
        cost: tuple[int, int],
    ) -> dict:
        # the additive per-class time model (``cost.model``, presets with ``op_time =
        # "sum"``) reads an op's matmul flops and the bytes it moves where they differ from
        # its flops' class and ``bytes_accessed``; only the opcodes where they can differ
        if ins.opcode in _WORK_OPCODES:
            mm, moved = conv.work(comp, ins, cost)
            if mm:
                a["matmul_flops"] = mm
            if moved != cost[1]:
                a["bytes_moved"] = moved
        return a

    @staticmethod
    def _with_launches(a: dict[str, Any], conv: HloConverter, ins: HloInstruction) -> dict:
        # a loop, conditional or call launches its bodies' ops: the cost model charges
        # the launch overhead that many times (``attrs['launches']``)
        if ins.opcode in CONTROL_FLOW:
            a["launches"] = conv.launches(ins)
        return a

    def attrs_of(self, ins: HloInstruction, user_count: int) -> dict[str, Any]:
        a: dict[str, Any] = {"user_count": user_count}
        attrs = ins.attrs
        if ins.shape is not None:
            a["shape"], a["is_effective_scalar"] = self.conv.shape_text(ins.shape)
        else:
            a["is_effective_scalar"] = False
        if ins.raw_opcode != ins.opcode:
            a["raw_opcode"] = ins.raw_opcode
        if ins.root_marked or ins is self.comp.root:
            a["is_root"] = ins is self.comp.root
        raw = attrs.get("metadata")
        if raw:
            md = parse_kv_strings(raw)
            for key in ("op_name", "op_type", "scheduling_name"):
                if key in md:
                    a[key] = md[key]
            source = self.conv.source_of(md)
            if source:
                a["source"] = source
        if not _MORE_ATTRS.isdisjoint(attrs):
            self._more_attrs(ins, a)
        if ins.opcode in _MORE_OPCODES:
            if ins.opcode == "while":
                a["while_body"] = attrs.get("body", "").lstrip("%")
                a["while_condition"] = attrs.get("condition", "").lstrip("%")
                a["trip_count"] = _trip_count(ins)
            if ins.opcode in ("async-start", "async-update", "async-done"):
                a["wrapped_opcode"] = self.wrapped_opcode(ins)
            if ins.opcode == "parameter":
                a["parameter_number"] = ins.parameter_number
        return a

    def _more_attrs(self, ins: HloInstruction, a: dict[str, Any]) -> None:
        """The part of ``attrs_of`` that reads the less common attributes."""
        fa = ins.frontend_attributes()
        if fa:
            a["frontend_attributes"] = fa
            if "_scheduling_group_id" in fa:
                a["scheduling_group_id"] = fa["_scheduling_group_id"]
            if "scheduler_hint" in fa:
                a["scheduler_hint"] = fa["scheduler_hint"]
        cfg = ins.backend_config()
        if cfg is not None:
            if isinstance(cfg, dict):
                a["backend_config"] = cfg
                cbc = cfg.get("collective_backend_config")
                if isinstance(cbc, dict) and "is_sync" in cbc:
                    a["is_sync"] = bool(cbc["is_sync"])
                if "force_earliest_schedule" in cfg:
                    a["force_earliest_schedule"] = bool(cfg["force_earliest_schedule"])
            else:
                a["backend_config_raw"] = cfg
        sched = ins.attrs.get("schedule") or ins.attrs.get("custom_call_schedule")
        if sched:
            a["custom_call_schedule"] = sched.strip()
        for key, attr in (("channel_id", "channel_id"),):
            if attr in ins.attrs and ins.attrs[attr].strip().isdigit():
                a[key] = int(ins.attrs[attr])
        if "source_target_pairs" in ins.attrs:
            a["source_target_pairs"] = [
                tuple(p) for p in parse_groups(ins.attrs["source_target_pairs"])
            ]
        if ins.attrs.get("is_host_transfer", "").strip() == "true":
            a["is_host_transfer"] = True
        if "custom_call_target" in ins.attrs:
            a["custom_call_target"] = ins.attrs["custom_call_target"].strip().strip('"')
        if ins.opcode == "fusion" and "kind" in ins.attrs:
            a["fusion_kind"] = ins.attrs["kind"].strip()
        for key in ("infeed_config", "outfeed_config"):
            if key in ins.attrs:
                a[key] = ins.attrs[key].strip().strip('"')
        called = ins.called()
        if called:
            a["called_computations"] = [c for _, c in called]

    def wrapped_opcode(self, ins: HloInstruction) -> str | None:
        if ins.wrapped_opcode is not None:
            return ins.wrapped_opcode
        calls = ins.attrs.get("calls")
        callee = self.m.by_name.get(calls.strip().lstrip("%")) if calls else None
        return callee.root.opcode if callee is not None else None

    # -- dataflow per instruction -------------------------------------------------------------
    def operand_tree(self, ins: HloInstruction, k: int) -> Tree:
        return self.trees.get(ins.operands[k], {(): None})

    def values(self, ins: HloInstruction) -> tuple[Tree, list[int]]:
        """(value tree of ``ins``, buffers it uses besides its own tree)."""
        op = ins.opcode
        trees = self.trees
        ops: list[Tree] = []
        for o in ins.operands:
            t = trees.get(o)
            ops.append({(): None} if t is None else t)
        all_used = [v for t in ops for v in t.values() if v is not None]
        if op not in _SPECIAL_VALUES:  # defines its outputs (the last case below)
            tree = self.define_all(ins)
            if op in _MAYBE_IN_PLACE or "output_to_operand_aliasing" in ins.attrs:
                self.write_in_place(ins, tree, inplace_pairs(self.m, ins), ops)
            if op in _MAYBE_COLLECTIVE:
                self.collective(ins, ops)
            return tree, all_used
        if op == "parameter":
            return self.parameter(ins), []
        if op == "constant":
            return (
                {idx: None for idx, _ in ins.shape.subshapes()} if ins.shape else {(): None}
            ), []
        if op == "get-tuple-element" and ops:
            k = ins.tuple_index
            sub = _subtree(ops[0], (k,)) if k is not None else {}
            if not sub:
                self.notes.append(f"{ins.name}: tuple index {k} not in its operand")
                sub = {(): None}
            table = ops[0].get(())
            return sub, [table] if table is not None else []
        if op == "tuple":
            tree = {
                (): self.define(ins, (), ins.shape)
                if ins.shape is not None
                else self.define(ins, (), _tuple_of(len(ops)))
            }
            for k, t in enumerate(ops):
                for idx, v in t.items():
                    tree[(k,) + idx] = v
            return tree, []
        if op in FORWARDING and ops:  # bitcast, add-dependency, domain, opt-barrier
            return dict(ops[0]), []
        if op == "while":
            return self.while_values(ins, ops), all_used
        if op == "call":
            return self.call_values(ins, ops), all_used
        if op == "conditional":
            return self.conditional_values(ins, ops), all_used
        if op == "copy" and ins.shape is not None and ins.shape.is_tuple and ops:
            keep = {idx: v for idx, v in ops[0].items() if idx != ()}
            return self.define_all(ins, keep), all_used
        if op in ASYNC_STARTS:
            return self.async_start(ins, ops), all_used
        if op == "async-update" and ops:
            tree = {}
            for idx, subshape in ins.shape.subshapes() if ins.shape else [((), None)]:
                if subshape is not None and subshape.is_tuple:
                    tree[idx] = self.define(ins, idx, subshape)
                else:
                    tree[idx] = ops[0].get(idx)
            self.pair(ins)
            return tree, all_used
        if op in ASYNC_DONES and ops:
            return self.async_done(ins, ops), all_used + self.start_extras(ins)
        # everything else defines its outputs; in-place ones ask to share the operand's
        tree = self.define_all(ins)
        self.write_in_place(ins, tree, inplace_pairs(self.m, ins), ops)
        self.collective(ins, ops)
        return tree, all_used

    def parameter(self, ins: HloInstruction) -> Tree:
        pnum = ins.parameter_number
        assert pnum is not None  # the parser rejects a parameter without its number
        tree: Tree = {}
        shapes = ins.shape.subshapes() if ins.shape is not None else [((), None)]
        for idx, sub in shapes:
            if self.is_entry:
                donated = any(idx[: len(pi)] == pi for pi in self.donated_of.get(pnum, ()))
                v = self.define(ins, idx, sub, live_in=True, live_out=not donated)
                if v is not None and not donated:
                    self.readonly.add(v)
            else:  # the caller's value: present throughout, held by the caller
                v = self.define(ins, idx, sub, live_in=True, live_out=True)
            if v is not None:
                self.param_origin[v] = (pnum, idx)
                self.param_vid[(pnum, idx)] = v
            tree[idx] = v
        return tree

    def set_transient(self, ins: HloInstruction, callees: Iterable[str]) -> None:
        vals = [self.conv.excess(c) for c in callees if c in self.m.by_name]
        if not vals:
            return
        if all(v.is_constant for v in vals):
            best = SymExpr.const(max(0, max(int(v.constant_value) for v in vals)))
        else:
            best = vals[0]
            for v in vals[1:]:
                best = best + v  # no max of polynomials: the sum bounds it
        self.b.set_transient(ins.name, best)

    def while_values(self, ins: HloInstruction, ops: list[Tree]) -> Tree:
        self.set_transient(
            ins,
            [
                ins.attrs.get("condition", "").strip().lstrip("%"),
                ins.attrs.get("body", "").strip().lstrip("%"),
            ],
        )
        init: Tree = ops[0] if ops else {(): None}
        # where the body passes its parameter through unchanged, the result is the init
        # value itself (XLA's phi folds away; no buffer of its own)
        body = ins.attrs.get("body", "").strip().lstrip("%")
        keep: Tree = {}
        if body in self.m.by_name:
            for idx, src in self.conv._result(body).root_sources.items():
                if (
                    src is not None
                    and src[:2] == (0, idx)
                    and not src[2]
                    and init.get(idx) is not None
                ):
                    keep[idx] = init[idx]
        tree = self.define_all(ins, keep)
        # the loop state lives in the init buffers, except where XLA copies: constants,
        # read-only entry parameters, a buffer that appears twice in the state
        seen: set[int] = set(keep.values())
        for idx, v in init.items():
            if idx in keep:
                continue
            if self.shareable(v) and v not in seen and tree.get(idx) is not None:
                self.shares.append((tree[idx], v, ins.name))
                seen.add(v)
        return tree

    def conditional_values(self, ins: HloInstruction, ops: list[Tree]) -> Tree:
        """Outputs are new buffers, except where a branch returns (part of) its parameter:
        XLA's alias analysis puts the conditional's result and every branch's root value
        in one buffer, so the result is written over that operand."""
        branches = [c for _, c in ins.called()]
        self.set_transient(ins, branches)
        tree = self.define_all(ins)
        pairs = []
        for k, br in enumerate(branches):
            if br not in self.m.by_name or k + 1 >= len(ops):
                continue
            for idx, src in self.conv._result(br).root_sources.items():
                if src is not None and src[0] == 0 and not src[2]:
                    pairs.append((k + 1, src[1], idx))
        self.write_in_place(ins, tree, pairs, ops)
        return tree

    def call_values(self, ins: HloInstruction, ops: list[Tree]) -> Tree:
        callee = ins.attrs.get("to_apply", "").strip().lstrip("%")
        if callee not in self.m.by_name:
            return self.define_all(ins)
        self.set_transient(ins, [callee])
        res = self.conv._result(callee)
        keep: Tree = {}
        in_place = []
        for idx, src in res.root_sources.items():
            if src is not None and src[0] < len(ops):
                if src[2]:
                    in_place.append((src[0], src[1], idx))
                elif ops[src[0]].get(src[1]) is not None:
                    keep[idx] = ops[src[0]][src[1]]  # passed through unchanged
        tree = self.define_all(ins, keep)
        self.write_in_place(ins, tree, in_place, ops)
        return tree

    def async_start(self, ins: HloInstruction, ops: list[Tree]) -> Tree:
        op = ins.opcode
        keep: Tree = {}
        shape = ins.shape
        if op == "async-start":
            if (
                shape is not None
                and shape.is_tuple
                and shape.elements
                and shape.elements[0].is_tuple
            ):
                for k, t in enumerate(ops):
                    for idx, v in t.items():
                        keep[(0, k) + idx] = v
        elif op in ("all-gather-start", "collective-permute-start", "send"):
            if len(ops) == 1 or op != "all-gather-start":
                for idx, v in ops[0].items() if ops else ():
                    keep[(0,) + idx] = v
            else:
                for k, t in enumerate(ops):
                    for idx, v in t.items():
                        keep[(0, k) + idx] = v
        elif op == "copy-start":
            for idx, v in ops[0].items() if ops else ():
                keep[(1,) + idx] = v
        tree = self.define_all(ins, keep)
        self.write_in_place(ins, tree, inplace_pairs(self.m, ins), ops)
        # temporaries of an async-called computation live from start to done
        calls = ins.attrs.get("calls")
        if op == "async-start" and ins.wrapped_opcode is None and calls:
            temp = self.conv.temporaries(calls.strip().lstrip("%"))
            if temp.terms:
                self.vals.append(_Value(ins.name, ins.name + "{scratch}", temp, 0))
                self.extra_held[ins.name] = [len(self.vals) - 1]
        self.collective(ins, ops)
        return tree

    def start_of(self, ins: HloInstruction) -> HloInstruction | None:
        seen = 0
        cur = ins
        while cur.operands and seen < 64:
            prev = self.comp.index[cur.operands[0]]
            if prev.opcode in ASYNC_STARTS:
                return prev
            if prev.opcode != "async-update":
                return None
            cur = prev
            seen += 1
        return None

    def pair(self, ins: HloInstruction) -> None:
        start = self.start_of(ins)
        if start is not None:
            self.b.pair_async(start.name, ins.name)

    def start_extras(self, ins: HloInstruction) -> list[int]:
        start = self.start_of(ins)
        return self.extra_held.get(start.name, []) if start is not None else []

    def async_done(self, ins: HloInstruction, ops: list[Tree]) -> Tree:
        op = ins.opcode
        self.pair(ins)
        src = ops[0]
        if op in ("all-reduce-done",):
            fwd = dict(src)
        elif op == "copy-done":
            fwd = _subtree(src, (0,))
        elif op == "send-done":
            fwd = {}
        elif op == "recv-done":
            fwd = {(0,) + idx: v for idx, v in _subtree(src, (0,)).items()}
        else:  # async-done, all-gather-done, collective-permute-done: the result at {1}
            fwd = _subtree(src, (1,))
        tree: Tree = {}
        shapes = ins.shape.subshapes() if ins.shape is not None else [((), None)]
        for idx, sub in shapes:
            if idx in fwd and not (sub is not None and sub.is_tuple and op != "all-reduce-done"):
                tree[idx] = fwd[idx]
            else:
                tree[idx] = self.define(ins, idx, sub)
        return tree

    # -- collectives --------------------------------------------------------------------------
    def collective(self, ins: HloInstruction, ops: list[Tree]) -> None:
        op = ins.opcode
        kind = None
        if op in COLLECTIVES:
            kind = op
        elif op.endswith("-start") and op[:-6] in COLLECTIVES:
            kind = op[:-6]
        elif op in ("send", "recv"):
            kind = op
        elif op == "async-start":
            w = self.wrapped_opcode(ins)
            if w in COLLECTIVES:
                kind = w
        if kind is None:
            return
        comp = self.comp
        in_bytes = sum(
            leaf_bytes(self.conv._shape_of(comp, ins, k)) for k in range(len(ins.operands))
        )
        out = ins.shape
        if op == "async-start" and out is not None and out.is_tuple and len(out.elements) > 1:
            out = out.elements[1]
        elif (
            op in ("all-gather-start",)
            and out is not None
            and out.is_tuple
            and len(out.elements) > 1
        ):
            out = out.elements[1]
        if kind == "all-gather":
            payload = leaf_bytes(out)
        elif kind == "recv":
            payload = (
                leaf_bytes(out.elements[0])
                if out is not None and out.is_tuple and out.elements
                else 0
            )
        elif kind in ("collective-permute", "send"):
            payload = leaf_bytes(self.conv._shape_of(comp, ins, 0)) if ins.operands else 0
        else:
            payload = in_bytes
        raw_groups = ins.attrs.get("replica_groups")
        attr_ins = ins
        if op == "async-start" and raw_groups is None:
            calls = ins.attrs.get("calls")
            callee = self.m.by_name.get(calls.strip().lstrip("%")) if calls else None
            if callee is not None:
                attr_ins = callee.root
                raw_groups = attr_ins.attrs.get("replica_groups")
        groups = parse_replica_groups(raw_groups)
        if groups and groups[0]:
            size = len(groups[0])
        elif kind == "collective-permute" or kind in ("send", "recv"):
            pairs = parse_groups(attr_ins.attrs.get("source_target_pairs"))
            if not pairs:
                fa = attr_ins.frontend_attributes().get("_xla_send_recv_source_target_pairs")
                pairs = parse_groups(fa) if fa else []
            size = len({d for p in pairs for d in p}) or 2
        else:
            has_channel = "channel_id" in attr_ins.attrs
            glob = attr_ins.attrs.get("use_global_device_ids", "").strip() == "true"
            if glob:
                size = self.m.replica_count * self.m.num_partitions
            elif has_channel and self.m.num_partitions > 1:
                size = self.m.num_partitions
            else:
                size = self.m.replica_count
        cfg = ins.backend_config()
        is_sync = False
        if isinstance(cfg, dict):
            cbc = cfg.get("collective_backend_config")
            if isinstance(cbc, dict):
                is_sync = bool(cbc.get("is_sync", False))
        chan = attr_ins.attrs.get("channel_id")
        self.b.set_collective(
            ins.name,
            Collective(
                kind=kind,
                bytes=SymExpr.const(payload),
                group_size=max(size, 1),
                replica_groups=tuple(tuple(g) for g in groups)
                if len(groups) * max((len(g) for g in groups), default=0) <= 65536
                else (),
                channel_id=int(chan) if chan and chan.strip().isdigit() else None,
                is_sync=is_sync,
            ),
        )


def _same_size(a, b) -> bool:
    return SymExpr.parse(a) == SymExpr.parse(b)


def _reach(succ: Mapping[str, set[str]], start: str) -> set[str]:
    """Everything reachable from ``start`` (itself excluded)."""
    seen: set[str] = set()
    stack = list(succ.get(start, ()))
    while stack:
        x = stack.pop()
        if x not in seen:
            seen.add(x)
            stack.extend(succ.get(x, ()))
    return seen


def _reached(
    adj: Mapping[str, set[str]],
    start: str,
    targets: Sequence[str],
    topo: Mapping[str, int] | None,
    forward: bool,
    first: bool = False,
) -> set[str]:
    """The members of ``targets`` reachable from ``start`` over ``adj`` (``start`` itself
    excluded); with ``first``, stop at the first one found.

    ``topo``: positions in a topological order of the edges (``adj`` is the successor map
    when ``forward``, the predecessor map otherwise), or None. With it, only nodes between
    ``start`` and the farthest target in that order are searched: every path from ``start``
    to a target stays between the two.
    """
    if topo is None:
        seen = _reach(adj, start)
        return {t for t in targets if t in seen}
    here = topo[start]
    if forward:
        want = {t for t in targets if topo[t] > here}
        if not want:
            return set()
        bound = max(topo[t] for t in want)
    else:
        want = {t for t in targets if topo[t] < here}
        if not want:
            return set()
        bound = min(topo[t] for t in want)
    found: set[str] = set()
    seen = set()
    stack = [start]
    while stack:
        x = stack.pop()
        for y in adj.get(x, ()):
            if y in seen or (topo[y] > bound if forward else topo[y] < bound):
                continue
            seen.add(y)
            if y in want:
                found.add(y)
                if first or len(found) == len(want):
                    return found
            stack.append(y)
    return found


def _tuple_of(n: int) -> Shape:
    return Shape("tuple", elements=tuple(Shape("token") for _ in range(n)))


# -- entry points --------------------------------------------------------------------------

_OPTIONS = {"orders", "pointer_size"}


def module_graphs(
    module: HloModule, orders: Mapping[str, Sequence[str]] | None = None
) -> dict[str, Graph]:
    """A ``Graph`` for every scheduled (non-fusion, non-embedded) computation, callees first."""
    conv = HloConverter(module, orders)
    with gc_paused():
        return {name: conv.graph(name) for name in scheduled_computations(module)}


def computation_graph(
    module: HloModule,
    computation: str | None = None,
    orders: Mapping[str, Sequence[str]] | None = None,
) -> Graph:
    return HloConverter(module, orders).graph(computation)


def read_hlo_graph(path: str, computation: str | None = None, **options) -> Graph:
    """Read an HLO text file into the ``Graph`` of its entry (or the named) computation.

    Options: ``orders`` (computation name -> instruction names) fixes the order used for the
    peaks of called computations (their ``transient`` in the caller).
    """
    unknown = set(options) - _OPTIONS
    if unknown:
        raise InputError(
            f"unknown option(s) for the HLO reader: {', '.join(sorted(unknown))}", path=path
        )
    with gc_paused():
        module = read_hlo_module(path)
        return HloConverter(module, options.get("orders"), options.get("pointer_size", 8)).graph(
            computation
        )


def read_hlo_text(text: str, computation: str | None = None, **options) -> Graph:
    with gc_paused():
        module = parse_hlo_text(text)
        return HloConverter(module, options.get("orders")).graph(computation)


__all__ = [
    "read_hlo_graph",
    "read_hlo_text",
    "read_hlo_module",
    "module_graphs",
    "computation_graph",
    "scheduled_computations",
    "computation_orders",
    "call_contexts",
    "inplace_pairs",
    "HloConverter",
    "op_kind",
    "shape_bytes",
]
