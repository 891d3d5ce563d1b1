"""XLA's buffer assignment of a scheduled module, for any order of its instructions.

``assign_buffers(module, orders)`` gives the allocations XLA's ``BufferAssigner`` makes
for that schedule: entry parameters, constants and thread-local scalars in their own
allocations, in-place users and donated parameters sharing them, live-out buffers placed
exactly, and every other buffer placed by XLA's heap simulator (best fit, spatial and
temporal orders, the smaller kept) into one preallocated temp allocation, with the
tuple-index tables that live nowhere else laid end to end after it. Two figures come out:

- ``temp_bytes``: the preallocated temp allocation in device memory, what
  ``compiled.memory_analysis().temp_size_in_bytes`` reports;
- ``allocated_bytes``: the sum of the allocations in device memory, the memory-usage
  report's total (its device memory space).

Buffers in host memory (``S(5)``: offloaded activations) get allocations of their own
colour: ``host_temp_bytes`` and ``host_allocated_bytes``.

``read_buffer_assignment`` reads the report XLA writes (``*-buffer-assignment.txt``) and
``compare`` lists where two assignments differ, allocation for allocation.

Targets: ``cpu`` (64-byte alignment) and ``gpu`` (256-byte alignment, cuBLAS workspace and
fusion sharing rules); ``target="auto"`` tells them apart by XLA:GPU's backend configs.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from cpsched.core.errors import InputError
from cpsched.layout.heap import EventHeap, align_up, best_heap
from cpsched.readers.hlo.dataflow import (
    ELEMENTWISE_OPS,
    Aliases,
    Dataflow,
    HloValue,
    LiveRanges,
    ModuleAnalysis,
    Program,
    analyse,
    in_place_pairs,
    shape_of,
)
from cpsched.readers.hlo.parser import ELEMENT_BYTES, HloInstruction, HloModule, Shape

Index = tuple[int, ...]

ALIGNMENT = {"cpu": 64, "gpu": 256}
# XLA's host memory space (``S(5)`` in a layout): allocations of that colour live on the host
HOST_COLOR = 5


@dataclass
class Allocation:
    index: int
    size: int
    color: int = 0
    parameter: int | None = None
    param_index: Index = ()
    param_aliased: bool = False
    constant: bool = False
    thread_local: bool = False
    is_tuple: bool = False
    live_out: bool = False
    assigned: dict[int, tuple[int, int]] = field(default_factory=dict)  # value -> (off, size)

    @property
    def is_temp(self) -> bool:
        """XLA's ``IsPreallocatedTempBuffer``."""
        return not (
            self.parameter is not None or self.live_out or self.thread_local or self.constant
        )

    @property
    def readonly(self) -> bool:
        return (self.parameter is not None and not self.param_aliased) or self.constant

    @property
    def reusable(self) -> bool:
        return not self.thread_local and not self.is_tuple


@dataclass
class BufferAssignment:
    """Allocations in XLA's order; ``values`` names each value by id."""

    allocations: list[Allocation]
    values: dict[int, HloValue]
    target: str
    analysis: ModuleAnalysis | None = None

    @property
    def temp_bytes(self) -> int:
        return sum(a.size for a in self.allocations if a.is_temp and a.color != HOST_COLOR)

    @property
    def allocated_bytes(self) -> int:
        return sum(a.size for a in self.allocations if a.color != HOST_COLOR)

    @property
    def host_temp_bytes(self) -> int:
        return sum(a.size for a in self.allocations if a.is_temp and a.color == HOST_COLOR)

    @property
    def host_allocated_bytes(self) -> int:
        return sum(a.size for a in self.allocations if a.color == HOST_COLOR)

    @property
    def argument_bytes(self) -> int:
        return sum(a.size for a in self.allocations if a.parameter is not None)

    @property
    def output_bytes(self) -> int:
        return sum(a.size for a in self.allocations if a.live_out)

    def to_text(self) -> str:
        """The report in XLA's format (``BufferAssignment::ToString``, allocations only), as
        current XLA prints it (``page 0``: one page per allocation)."""
        out = ["BufferAssignment:"]
        entry = self.analysis.prog.module.entry if self.analysis else None
        for a in self.allocations:
            head = f"allocation {a.index}: size {a.size}, page 0"
            if a.color:
                head += f", color {a.color}"
            if a.parameter is not None:
                shape = None
                if entry is not None:
                    p = entry.parameters().get(a.parameter)
                    if p is not None:
                        shape = shape_of(p).subshape(a.param_index)
                idx = ",".join(map(str, a.param_index))
                head += (
                    f", parameter {a.parameter}, shape |{_plain(shape)}| at ShapeIndex {{{idx}}}"
                )
            root = entry.root if entry is not None else None
            if root is not None and any((root, ()) in self.values[v].positions for v in a.assigned):
                head += f", output shape is |{_plain(shape_of(root))}|"
            if a.constant:
                head += ", constant"
            if a.thread_local:
                head += ", thread-local"
            if a.live_out:
                head += ", maybe-live-out"
            if a.is_temp:
                head += ", preallocated-temp"
            out.append(head + ":")
            for vid in sorted(a.assigned):
                off, size = a.assigned[vid]
                v = self.values[vid]
                out.append(
                    f" value: {v.short()} (size={size},offset={off}): {_shape_text(v.shape)}"
                )
        return "\n".join(out) + "\n"


def _tuple_text(parts: list[str]) -> str:
    """XLA prints ``/*index=N*/`` before every fifth element of a tuple."""
    return (
        "("
        + ", ".join((f"/*index={k}*/" if k and k % 5 == 0 else "") + p for k, p in enumerate(parts))
        + ")"
    )


def _shape_text(shape: Shape) -> str:
    if shape.is_tuple:
        return _tuple_text([_shape_text(e) for e in shape.elements])
    return str(shape)


def _plain(shape: Shape | None) -> str:
    if shape is None:
        return "<unknown shape>"
    if shape.is_tuple:
        return _tuple_text([_plain(e) for e in shape.elements])
    return str(shape).split("{", 1)[0]


def detect_target(module: HloModule) -> str:
    """``gpu`` when the module carries XLA:GPU backend configs, else ``cpu``."""
    for comp in module.computations:
        for ins in comp.instructions:
            raw = ins.attrs.get("backend_config", "")
            if "operation_queue_id" in raw or "fusion_backend_config" in raw:
                return "gpu"
            if ins.opcode == "custom-call" and ins.attrs.get("custom_call_target", "").strip(
                '"'
            ).startswith(("__cublas", "__cudnn")):
                return "gpu"
    return "cpu"


# -- sharing rules (``HloDataflowAnalysis::CanShareOperandBufferWithUser``) -------------------


class _Sharing:
    def __init__(self, an: ModuleAnalysis, target: str):
        self.an = an
        self.prog = an.prog
        self.flow = an.flow
        self.target = target
        self._elementwise: dict[tuple[HloInstruction, int], bool] = {}
        self._pairs: dict[HloInstruction, list[tuple[int, Index, Index]]] = {}

    def pairs(self, ins: HloInstruction) -> list[tuple[int, Index, Index]]:
        got = self._pairs.get(ins)
        if got is None:
            got = self._pairs[ins] = in_place_pairs(self.prog, ins)
        return got

    def fused_body(self, fusion: HloInstruction):
        callee = self.prog.callees(fusion)
        return self.prog.comp(callee[0]) if callee else None

    def fused_parameter(self, fusion: HloInstruction, k: int) -> HloInstruction | None:
        body = self.fused_body(fusion)
        return body.parameters().get(k) if body is not None else None

    def elementwise(self, ins: HloInstruction) -> bool:
        """``IsElementwise`` (on every operand)."""
        op = ins.opcode
        if op == "fusion":
            body = self.fused_body(ins)
            if body is None:
                return False
            return all(i.opcode == "parameter" or self.elementwise(i) for i in body.instructions)
        return self._op_elementwise(ins, None)

    def _op_elementwise(self, ins: HloInstruction, k: int | None) -> bool:
        op = ins.opcode
        if op == "dynamic-update-slice":
            return k == 0
        if op == "bitcast-convert":
            ops = self.prog.operands[ins]
            if ops and _bits(shape_of(ins)) != _bits(shape_of(ops[0])):
                return False
        return op in ELEMENTWISE_OPS

    def elementwise_on(self, ins: HloInstruction, k: int) -> bool:
        """``IsElementwiseOnOperand``."""
        key = (ins, k)
        got = self._elementwise.get(key)
        if got is not None:
            return got
        if ins.opcode == "fusion":
            got = self._fusion_elementwise_on(ins, k)
        else:
            got = self._op_elementwise(ins, k)
        self._elementwise[key] = got
        return got

    def _fusion_elementwise_on(self, fusion: HloInstruction, k: int) -> bool:
        param = self.fused_parameter(fusion, k)
        if param is None:
            return False
        users = self.prog.users
        seen = {param}
        work = [param]
        while work:
            cur = work.pop(0)
            for user in users[cur]:
                if user in seen:
                    continue
                idxs = [j for j, o in enumerate(self.prog.operands[user]) if o is cur]
                if self.elementwise(user) or all(self.elementwise_on(user, j) for j in idxs):
                    work.append(user)
                    seen.add(user)
                else:
                    return False
        return True

    def transitive_elementwise_or_tuple(self, ins: HloInstruction) -> bool:
        seen: set[HloInstruction] = set()
        stack = [ins]
        while stack:
            cur = stack.pop()
            seen.add(cur)
            for user in self.prog.users[cur]:
                for j, o in enumerate(self.prog.operands[user]):
                    if o is cur and not self.elementwise_on(user, j) and user.opcode != "tuple":
                        return False
                if user not in seen:
                    stack.append(user)
        return True

    def can_share(
        self, operand: HloInstruction, oidx: Index, user: HloInstruction, uidx: Index
    ) -> bool:
        prog = self.prog
        uops = prog.operands[user]
        if operand not in uops:
            return False
        if user.opcode == "custom-call":
            target = user.attrs.get("custom_call_target", "").strip('"')
            if target in ("__cublas$lt$matmul", "__cublas$lt$matmul$f8") and uidx == (1,):
                return False
        if operand.opcode == "constant":
            return False
        osub = shape_of(operand).subshape(oidx)
        usub = shape_of(user).subshape(uidx)
        equal = osub == usub
        if equal:
            vs = self.flow.value_set(operand, oidx)
            used: set[tuple[HloInstruction, int, Index]] = set()
            if len(vs) == 1:
                used = set(self.flow.values[vs[0]].uses)
            for o, oi, out in self.pairs(user):
                if out == uidx and (user, o, oi) in used:
                    return True
        if self.target == "gpu":
            hint = self._gpu_hint(user, operand, uidx)
            if hint is not None:
                return hint
        if not equal:
            return False
        op = user.opcode
        k = uops.index(operand)
        if op == "fusion":
            kind = user.attrs.get("kind", "").strip()
            param = self.fused_parameter(user, k)
            if param is None:
                return False
            if kind in ("kLoop", "kInput"):
                return self.transitive_elementwise_or_tuple(param)
            body = self.fused_body(user)
            if kind == "kOutput" and body is not None and body.root.opcode == "add":
                add_ops = prog.operands[body.root]
                hit = [j for j, o in enumerate(add_ops) if o.opcode in ("convolution", "dot")]
                if not hit:
                    return False
                other = 1 if hit[0] == 0 else 0
                vs = self.flow.value_set(param, oidx)
                uses = self.flow.values[vs[0]].uses if len(vs) == 1 else []
                if len(uses) == 1:
                    u, j, _ = uses[0]
                    return u is body.root and j == other
                return False
        if op in ("while", "conditional"):
            return True
        if op in ("dynamic-update-slice", "scatter", "triangular-solve", "set-dimension-size"):
            idxs = [j for j, o in enumerate(uops) if o is operand]
            want = 1 if op == "triangular-solve" else 0
            return len(idxs) == 1 and idxs[0] == want
        if op == "sort":
            if len(prog.users[operand]) != 1:
                return False
            if len(uops) == 1:
                return True
            idxs = [j for j, o in enumerate(uops) if o is operand]
            return len(idxs) == 1 and bool(uidx) and uidx[0] == idxs[0]
        if op == "call":
            vs = self.flow.value_set(operand, oidx)
            if len(vs) != 1:
                return False
            uses = self.flow.values[vs[0]].uses
            callee = prog.callees(user)
            root = prog.comp(callee[0]).root if callee else None
            caller_use = any(u is user for u, _, _ in uses)
            callee_use = any(u is root and self.elementwise_on(root, j) for u, j, _ in uses)
            return len(uses) == 2 and caller_use and callee_use
        return self.elementwise_on(user, k)

    # XLA:GPU's may-alias hints (``CanShareBufferHint``)
    def _gpu_hint(self, user: HloInstruction, operand: HloInstruction, uidx: Index):
        op = user.opcode
        uops = self.prog.operands[user]
        if op == "all-reduce":
            return len(uops) == 1 or (len(uidx) == 1 and uops[uidx[0]] is operand)
        if op == "custom-call":
            target = user.attrs.get("custom_call_target", "").strip('"')
            if target == "__cublas$lt$matmul":
                beta = _gemm_beta(user)
                return beta != 0.0 and len(uops) > 2 and uops[2] is operand
            if target == "__cusolver$cholesky":
                return len(uidx) == 1 and uidx[0] == 0
            return False
        if op == "fusion":
            return self._gpu_fusion_hint(user, operand, uidx)
        return None

    def _gpu_fusion_hint(self, user: HloInstruction, operand: HloInstruction, uidx: Index):
        prog = self.prog
        usub = shape_of(user).subshape(uidx)
        osh = shape_of(operand)
        if osh != usub:
            if not osh.is_array or not usub.is_array:
                return False
            if osh.element_count() != usub.element_count():
                return False
            if _bits(osh) != _bits(usub):
                return False
        body = self.fused_body(user)
        if body is None:
            return None
        uops = prog.operands[user]
        param = body.parameters().get(uops.index(operand))
        if param is None:
            return False
        output = body.root
        if output.opcode == "tuple":
            output = prog.operands[output][uidx[0]]
        non_bitcast = prog.operands[output][0] if output.opcode == "bitcast" else output
        hero = _reduction_hero(prog, body)
        queue = [param]
        visited = {param}
        found = False
        while queue:
            cur = queue.pop(0)
            if cur is output:
                found = True
            if cur is hero:
                continue
            for hlo in prog.users[cur]:
                if hlo not in visited:
                    visited.add(hlo)
                    queue.append(hlo)
                hops = prog.operands[hlo]
                if hlo is non_bitcast and hlo.opcode == "scatter":
                    n_in = len(shape_of(hlo).elements) if shape_of(hlo).is_tuple else 1
                    if hops.index(cur) < n_in and hops.count(cur) == 1:
                        continue
                nb_ops = prog.operands[non_bitcast]
                if (
                    non_bitcast.opcode == "dynamic-update-slice"
                    and hlo.opcode == "dynamic-slice"
                    and nb_ops[0] is hops[0]
                    and shape_of(hlo) == shape_of(nb_ops[1])
                ):
                    if not (
                        shape_of(hlo).is_effective_scalar()
                        and shape_of(nb_ops[1]).is_effective_scalar()
                    ):
                        for i in range(1, len(hops)):
                            if i + 1 >= len(nb_ops) or hops[i] is not nb_ops[i + 1]:
                                return False
                elif (
                    (not self.elementwise_on(hlo, hops.index(cur)) or hlo.opcode == "copy")
                    and hlo.opcode not in ("bitcast", "tuple")
                    and hlo is not hero
                ):
                    if (
                        hlo is not non_bitcast
                        or hlo.opcode != "dynamic-update-slice"
                        or hops.index(cur) != 1
                    ):
                        return False
        if body.root.opcode == "tuple" and not self.elementwise(non_bitcast):
            for o in prog.operands[body.root]:
                if o is not output and o in visited:
                    return False
        return found


def _bits(shape: Shape) -> int:
    if shape.element_bits is not None:
        return shape.element_bits
    return ELEMENT_BYTES.get(shape.etype, 0) * 8


def _gemm_beta(ins: HloInstruction) -> float:
    raw = ins.attrs.get("backend_config", "")
    m = re.search(r'"beta"\s*:\s*([-+0-9.eE]+)', raw)
    return float(m.group(1)) if m else 0.0


def _reduction_hero(prog, body) -> HloInstruction | None:
    """The reduction XLA:GPU's reduction emitter processes first (a reduce reaching the
    fusion root through elementwise ops only), or None."""
    root = body.root
    outs = prog.operands[root] if root.opcode == "tuple" else [root]
    for o in outs:
        cur = o
        while cur.opcode in ("bitcast", "convert", "copy") and prog.operands[cur]:
            cur = prog.operands[cur][0]
        if cur.opcode == "reduce":
            return cur
    return None


# -- the assigner ------------------------------------------------------------------------------


class _Assigner:
    def __init__(self, an: ModuleAnalysis, target: str):
        self.an = an
        self.target = target
        self.alignment = ALIGNMENT[target]
        self.flow = an.flow
        self.prog = an.prog
        self.aliases = an.aliases
        self.live = an.live
        self.share = _Sharing(an, target)
        self.allocs: list[Allocation] = []
        self.alloc_of: dict[int, int] = {}  # value -> allocation index
        self.live_out = an.aliases.live_out_buffers()
        self.module = an.prog.module
        self.io_params = {(p, pi) for _, p, pi, _ in self.module.input_output_alias()}
        self._size: dict[int, int] = {}

    # sizes and colours
    def value_size(self, vid: int) -> int:
        return self.flow.values[vid].shape.byte_size()

    def buffer_size(self, bid: int) -> int:
        got = self._size.get(bid)
        if got is None:
            got = max(self.value_size(v) for v in self.aliases.buffers[bid].values)
            self._size[bid] = got
        return got

    def color(self, vid: int) -> int:
        return self.flow.values[vid].shape.memory_space

    # allocations
    def new_allocation(self, bid: int, size: int) -> Allocation:
        a = Allocation(len(self.allocs), size, self.color(self.aliases.buffers[bid].values[0]))
        self.allocs.append(a)
        self.add(a, bid, 0, size)
        return a

    def add(self, a: Allocation, bid: int, offset: int, size: int) -> None:
        for vid in self.aliases.buffers[bid].values:
            a.assigned[vid] = (offset, size)
            self.alloc_of[vid] = a.index
        if bid in self.live_out:
            a.live_out = True

    # ``LiveRangeInterferes``
    def interferes(self, v1: int, v2: int) -> bool:
        r1 = self.live.ranges[v1]
        r2 = self.live.ranges[v2]
        if r1.start > r2.end or r2.start > r1.end:
            return False
        if r1.end == r2.start:
            return not self._share_as_operand(v2, r1)
        if r2.end == r1.start:
            return not self._share_as_operand(v1, r2)
        return True

    def _share_as_operand(self, user_vid: int, operand_range) -> bool:
        user = self.flow.values[user_vid]
        ins = user.instruction
        end_ins, end_idx = operand_range.end_position
        return (
            ins.opcode != "copy"
            and end_ins in self.prog.operands[ins]
            and self.share.can_share(end_ins, end_idx, ins, user.index)
        )

    def handed_over(self, v1: int, v2: int) -> bool:
        """The heap simulator's in-place reuse: one value starts where the other ends and
        its instruction may write over the other's defining instruction's output."""
        r1, r2 = self.live.ranges[v1], self.live.ranges[v2]
        if r1.end == r2.start:
            operand, user = v1, v2
        elif r2.end == r1.start:
            operand, user = v2, v1
        else:
            return False
        o, u = self.flow.values[operand], self.flow.values[user]
        return (
            u.instruction.opcode != "copy"
            and o.instruction in self.prog.operands[u.instruction]
            and self.share.can_share(o.instruction, o.index, u.instruction, u.index)
        )

    # ``MaybeAssignBuffer``
    def maybe_assign(self, a: Allocation, bid: int) -> bool:
        buf = self.aliases.buffers[bid]
        size = self.buffer_size(bid)
        if self.color(buf.values[0]) != a.color:
            return False
        if size > a.size or a.readonly or not a.reusable:
            return False
        for assigned in a.assigned:
            for new in buf.values:
                if self.interferes(new, assigned):
                    return False
                nv = self.flow.values[new]
                if nv.instruction.opcode == "copy":
                    ops = self.prog.operands[nv.instruction]
                    if any(p in ops for p, _ in self.flow.values[assigned].positions):
                        return False
        if bid in self.live_out and a.size != size:
            return False
        self.add(a, bid, 0, size)
        return True

    def run(self) -> list[Allocation]:
        graph = self.flow.graph
        comps = self.prog.computation_post_order()
        thread_local: set[str] = set()
        global_: set[str] = set()
        work = [(self.module.entry.name, False)]
        while work:
            name, tl = work.pop(0)
            if (tl and name in thread_local) or (not tl and name in global_):
                continue
            (thread_local if tl else global_).add(name)
            for ins in self.prog.comp(name).instructions:
                sub_tl = tl if ins.opcode in graph_control_ops else True
                for c in self.prog.callees(ins):
                    work.append((c, sub_tl))
        global_order = [c for c in comps if c.name in global_]
        sequential: dict[str, list[int]] = {c.name: [] for c in global_order}
        self.assign_computations(global_order, thread_local_=False, sequential=sequential)
        self.heap_simulate(sequential)
        tl_order = [
            c
            for c in comps
            if c.name in thread_local and not _is_fusion_computation(self.prog, graph, c.name)
        ]
        self.assign_computations(tl_order, thread_local_=True, sequential=None)
        for bid in self.live_out:
            vid = self.aliases.buffers[bid].values[0]
            if vid in self.alloc_of:
                self.allocs[self.alloc_of[vid]].live_out = True
        self.combine_temps()
        return self.allocs

    def _positions(self, names: set[str]) -> dict[HloInstruction, int]:
        """Post-order position of every instruction: computations in reverse call-graph
        post order (callers first), each in its instruction post order."""
        prog = self.prog
        visited: set[str] = set()
        post: list[str] = []

        def visit(name: str) -> None:
            stack = [(name, iter(self._callees_of(name)))]
            visited.add(name)
            while stack:
                cur, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    stack.pop()
                    if cur in names:
                        post.append(cur)
                    continue
                if nxt not in visited:
                    visited.add(nxt)
                    stack.append((nxt, iter(self._callees_of(nxt))))

        for comp in self.module.computations:
            if not self.flow.graph.callers[comp.name] and comp.name not in visited:
                visit(comp.name)
        pos: dict[HloInstruction, int] = {}
        for name in reversed(post):
            for ins in prog.post_order(prog.comp(name)):
                pos.setdefault(ins, len(pos))
        return pos

    def _callees_of(self, name: str) -> list[str]:
        out: list[str] = []
        for ins in self.prog.comp(name).instructions:
            for c in self.prog.callees(ins):
                if c not in out:
                    out.append(c)
        return out

    def assign_computations(self, comps, thread_local_: bool, sequential) -> None:
        if not comps:
            return
        names = {c.name for c in comps}
        flow = self.flow
        prog = self.prog
        bufs = [
            b
            for b in self.aliases.buffers
            if prog.parent[flow.values[b.values[0]].instruction].name in names
        ]
        pos = self._positions(names)

        def first_pos(b) -> int:
            return min(pos.get(flow.values[v].instruction, 1 << 60) for v in b.values)

        bufs.sort(
            key=lambda b: (-self.buffer_size(b.id), b.id not in self.live_out, first_pos(b), b.id)
        )
        reusable: list[int] = []
        for b in bufs:
            self.assign_one(b.id, thread_local_, sequential, reusable)

    def assign_one(self, bid: int, thread_local_: bool, sequential, reusable: list[int]) -> None:
        flow = self.flow
        prog = self.prog
        entry = self.module.entry
        buf = self.aliases.buffers[bid]
        size = self.buffer_size(bid)
        for vid in buf.values:
            v = flow.values[vid]
            if v.instruction.opcode == "constant":
                a = self.new_allocation(bid, size)
                a.constant = True
                return
            if v.instruction.opcode == "parameter" and prog.parent[v.instruction] is entry:
                a = self.new_allocation(bid, size)
                a.parameter = v.instruction.parameter_number
                a.param_index = v.index
                a.param_aliased = (a.parameter, v.index) in self.io_params
                if a.param_aliased:
                    reusable.append(a.index)
                return
        if thread_local_:
            a = self.new_allocation(bid, size)
            a.thread_local = True
            return
        for vid in buf.values:
            v = flow.values[vid]
            if v.shape.is_tuple:
                a = self.new_allocation(bid, size)
                a.is_tuple = True
                return
            if not v.index and not shape_of(v.instruction).is_tuple:
                for operand in prog.operands[v.instruction]:
                    slices = sorted(
                        {
                            (self.alloc_of[o], *self.allocs[self.alloc_of[o]].assigned[o])
                            for o in flow.value_set(operand, ())
                            if o in self.alloc_of
                        }
                    )
                    for ai, _, _ in slices:
                        if self.maybe_assign(self.allocs[ai], bid):
                            return
        for ai in reversed(reusable):
            if self.maybe_assign(self.allocs[ai], bid):
                return
        if bid not in self.live_out and sequential is not None:
            for vid in buf.values:
                comp = prog.parent[flow.values[vid].instruction].name
                sequential.setdefault(comp, []).append(vid)
            return
        self.new_allocation(bid, size)
        reusable.append(len(self.allocs) - 1)

    # ``AssignBuffersWithSequentialOrdering`` (whole module) and the heap simulator
    def heap_simulate(self, sequential: Mapping[str, list[int]]) -> None:
        todo = {v for vs in sequential.values() for v in vs}
        for color in sorted({self.color(v) for v in todo}):
            chosen = {v for v in todo if self.color(v) == color}
            heap = self._events(chosen)
            heap_size, placed = best_heap(heap, self.alignment)
            a = Allocation(len(self.allocs), heap_size, color)
            self.allocs.append(a)
            for key, (off, sz) in placed.items():
                vid = int(key)  # type: ignore[call-overload]
                a.assigned[vid] = (off, sz)
                self.alloc_of[vid] = a.index

    def _events(self, chosen: set[int]) -> EventHeap:
        """``HeapSimulator::RunComputation``: allocs, in-place hand-overs and frees."""
        flow = self.flow
        prog = self.prog
        aliases = self.aliases
        ranges = {v: (r.start, r.end) for v, r in self.live.ranges.items()}
        order = sorted(
            (v for v in chosen if v in ranges), key=lambda v: (ranges[v][0], ranges[v][1], v)
        )
        n = self.live.end_time + 1
        defined: list[list[int]] = [[] for _ in range(n)]
        freed: list[list[int]] = [[] for _ in range(n)]
        for v in order:
            defined[ranges[v][0]].append(v)
            freed[ranges[v][1]].append(v)
        group: dict[int, int] = {}  # value -> group root
        gsize: dict[int, int] = {}

        def find(x: int) -> int:
            while group[x] != x:
                group[x] = group[group[x]]
                x = group[x]
            return x

        for b in aliases.buffers:
            s = self.buffer_size(b.id)
            first = b.values[0]
            for v in b.values:
                group[v] = first
            gsize[first] = s

        def size_of(v: int) -> int:
            return gsize[find(v)]

        heap = EventHeap()
        first_alloc: dict[int, int] = {}
        for t in range(n):
            for v in defined[t]:
                bid = aliases.buffer_of[v]
                if bid in first_alloc:
                    self._share(heap, group, gsize, find, v, first_alloc[bid])
                    continue
                shared = False
                if len(aliases.buffers[bid].values) == 1:
                    ins = flow.values[v].instruction
                    for operand in prog.operands[ins]:
                        for ov in flow.value_set(operand, ()):
                            if len(aliases.buffer(ov).values) > 1 or ov not in ranges:
                                continue
                            if ranges[ov][1] != t or ov not in chosen or ov not in freed[t]:
                                continue
                            oins = flow.values[ov].instruction
                            if (
                                oins in prog.operands[ins]
                                and ins.opcode != "copy"
                                and self.share.can_share(
                                    oins, flow.values[ov].index, ins, flow.values[v].index
                                )
                            ):
                                heap.free(ov, size_of(ov))
                                freed[t].remove(ov)
                                self._share(heap, group, gsize, find, v, ov)
                                ranges[ov] = (ranges[ov][0], ranges[v][1])
                                shared = True
                                break
                        if shared:
                            break
                if not shared:
                    heap.alloc(v, size_of(v))
                    first_alloc[bid] = v
            for v in freed[t]:
                heap.free(v, size_of(v))
        return heap

    @staticmethod
    def _share(heap: EventHeap, group, gsize, find, v: int, other: int) -> None:
        rv, ro = find(v), find(other)
        new = max(gsize[rv], gsize[ro])
        if rv != ro:
            group[rv] = ro
        gsize[ro] = new
        heap.share_with(v, other, new)

    # ``CombineTempAllocations``
    def combine_temps(self) -> None:
        allocs = self.allocs
        lo, hi = 0, len(allocs)
        # std::partition: non-temp allocations first (not a stable partition)
        while True:
            while lo != hi and not allocs[lo].is_temp:
                lo += 1
            if lo == hi:
                break
            hi -= 1
            while lo != hi and allocs[hi].is_temp:
                hi -= 1
            if lo == hi:
                break
            allocs[lo], allocs[hi] = allocs[hi], allocs[lo]
            lo += 1
        first_temp = lo
        combined: dict[int, Allocation] = {}
        out = allocs[:first_temp]
        extra: list[Allocation] = []
        for t in allocs[first_temp:]:
            c = combined.get(t.color)
            if c is None:
                combined[t.color] = t
                extra.append(t)
                continue
            base = align_up(c.size, self.alignment)
            c.size = base + t.size
            for vid, (off, sz) in t.assigned.items():
                c.assigned[vid] = (base + off, sz)
        out += extra
        for k, a in enumerate(out):
            a.index = k
            for vid in a.assigned:
                self.alloc_of[vid] = k
        self.allocs = out


graph_control_ops = frozenset(
    ("call", "conditional", "while", "async-start", "async-update", "async-done")
)


def _is_fusion_computation(prog, graph, name: str) -> bool:
    return any(ins.opcode == "fusion" for ins in graph.callers[name])


def assign_buffers(
    module: HloModule,
    orders: Mapping[str, Sequence[str]] | None = None,
    target: str = "auto",
) -> BufferAssignment:
    """XLA's buffer assignment of ``module`` under ``orders`` (computation name -> the
    instruction names in order; missing computations keep their text order)."""
    if target == "auto":
        target = detect_target(module)
    if target not in ALIGNMENT:
        raise InputError(f"unknown target {target!r} (cpu, gpu or auto)")
    an = analyse(module, orders)
    allocs = _Assigner(an, target).run()
    return BufferAssignment(allocs, an.flow.values, target, an)


class BufferAssigner:
    """``assign_buffers`` for many orders of one module: the order-independent analyses
    (dataflow, aliasing) are done once; ``assign(orders)`` redoes the live ranges and the
    assignment."""

    def __init__(self, module: HloModule, target: str = "auto"):
        if target == "auto":
            target = detect_target(module)
        if target not in ALIGNMENT:
            raise InputError(f"unknown target {target!r} (cpu, gpu or auto)")
        self.module = module
        self.target = target
        self.prog = Program(module)
        self.flow = Dataflow(self.prog)
        self.aliases = Aliases(self.flow)

    def assign(self, orders: Mapping[str, Sequence[str]] | None = None) -> BufferAssignment:
        an = ModuleAnalysis(self.prog, self.flow, self.aliases, LiveRanges(self.aliases, orders))
        allocs = _Assigner(an, self.target).run()
        return BufferAssignment(allocs, an.flow.values, self.target, an)


def allocation_figures(
    module: HloModule, orders: Mapping[str, Sequence[str]] | None = None, target: str = "auto"
) -> dict[str, int] | None:
    """``temp_bytes`` and ``allocated_bytes`` (device memory) XLA's buffer assignment gives
    ``module`` under ``orders``, and ``host_temp_bytes`` / ``host_allocated_bytes`` where
    values live in host memory; None when the orders are not orders of the module's own instructions (a
    schedule that adds clones or copies)."""
    names = {c.name: {i.name for i in c.instructions} for c in module.computations}
    for comp, order in (orders or {}).items():
        if comp not in names or set(order) != names[comp] or len(order) != len(names[comp]):
            return None
    ba = assign_buffers(module, orders, target)
    out = {"temp_bytes": ba.temp_bytes, "allocated_bytes": ba.allocated_bytes}
    if ba.host_allocated_bytes:  # offloaded values: host memory, a figure of its own
        out.update(host_temp_bytes=ba.host_temp_bytes, host_allocated_bytes=ba.host_allocated_bytes)
    return out


def conflicts(ba: BufferAssignment) -> list[str]:
    """Pairs of values of one allocation that share bytes while both are live, other than
    XLA's own sharing (one buffer, or an operand handed over to its in-place user): empty
    for a sound assignment."""
    if ba.analysis is None:
        return []
    judge = _Assigner(ba.analysis, ba.target)
    buffer_of = ba.analysis.aliases.buffer_of
    out = []
    for a in ba.allocations:
        items = sorted(
            (off, off + size, vid)
            for vid, (off, size) in a.assigned.items()
            if size and vid in ba.analysis.live.ranges
        )
        for k, (_, hi, v) in enumerate(items):
            for lo2, _, w in items[k + 1 :]:
                if lo2 >= hi:
                    break
                if (
                    buffer_of[v] != buffer_of[w]
                    and judge.interferes(v, w)
                    and not judge.handed_over(v, w)
                ):
                    out.append(
                        f"allocation {a.index}: {ba.values[v].name} and "
                        f"{ba.values[w].name} overlap in bytes and in time"
                    )
    return out


# -- XLA's report ---------------------------------------------------------------------------------

_ALLOC_RE = re.compile(r"^allocation (\d+): size (\d+)(.*):$")
_VALUE_RE = re.compile(
    r"^ value: <(\d+) (\S+?)(\{[\d,]*\})?( \(phi\))? @\d+> \(size=(\d+),offset=(\d+)\)"
)


@dataclass
class ReportAllocation:
    index: int
    size: int
    flags: str
    values: dict[str, tuple[int, int, int]]  # value name -> (id, offset, size)

    @property
    def color(self) -> int:
        m = re.search(r", color (\d+)", self.flags)
        return int(m.group(1)) if m else 0

    @property
    def kind(self) -> str:
        f = self.flags
        if ", parameter " in f:
            return "parameter"
        if "thread-local" in f:
            return "thread-local"
        if ", constant" in f:
            return "constant"
        if "maybe-live-out" in f:
            return "live-out"
        return "temp"


@dataclass
class Report:
    allocations: list[ReportAllocation]

    @property
    def temp_bytes(self) -> int:
        return sum(a.size for a in self.allocations if a.kind == "temp" and a.color != HOST_COLOR)

    @property
    def allocated_bytes(self) -> int:
        return sum(a.size for a in self.allocations if a.color != HOST_COLOR)


def parse_buffer_assignment(text: str, path: str | None = None) -> Report:
    """Read XLA's ``*-buffer-assignment.txt`` (the allocations section)."""
    allocs: list[ReportAllocation] = []
    for no, line in enumerate(text.splitlines(), start=1):
        if line.startswith("allocation "):
            m = _ALLOC_RE.match(line)
            if m is None:
                raise InputError(f"bad allocation line {line[:60]!r}", path=path, line=no)
            allocs.append(ReportAllocation(int(m.group(1)), int(m.group(2)), m.group(3), {}))
        elif line.startswith(" value: "):
            m = _VALUE_RE.match(line)
            if m is None or not allocs:
                raise InputError(f"bad value line {line[:60]!r}", path=path, line=no)
            name = m.group(2) + (m.group(3) or "")
            allocs[-1].values[name] = (int(m.group(1)), int(m.group(6)), int(m.group(5)))
        elif line.startswith("Total bytes used") or line.startswith("Used values"):
            break
    if not allocs:
        raise InputError("not an XLA buffer-assignment report (no allocation lines)", path=path)
    return Report(allocs)


def read_buffer_assignment(path: str) -> Report:
    try:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8", errors="replace") as f:  # type: ignore[operator]
            return parse_buffer_assignment(f.read(), path)
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", path=path) from None


_TOTAL_RE = re.compile(r"^Memory Space: .*\(color=(\d+)\)\s*$|^Total bytes: (\d+)")


def read_memory_usage_totals(path: str) -> dict[int, int]:
    """``Total bytes`` per memory space (colour) of XLA's ``*-memory-usage-report.txt``."""
    try:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8", errors="replace") as f:  # type: ignore[operator]
            text = f.read()
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", path=path) from None
    out: dict[int, int] = {}
    color = 0
    for line in text.splitlines():
        m = _TOTAL_RE.match(line)
        if m and m.group(1) is not None:
            color = int(m.group(1))
        elif m:
            out[color] = int(m.group(2))
    if not out:
        raise InputError("not an XLA memory-usage report (no 'Total bytes:' line)", path=path)
    return out


def as_report(ba: BufferAssignment) -> Report:
    return parse_buffer_assignment(ba.to_text())


def compare(ours: BufferAssignment | Report, theirs: Report) -> list[str]:
    """Differences, allocation for allocation: each allocation is matched by the values
    it holds; sizes, kinds and every value's offset and size must agree."""
    mine = ours if isinstance(ours, Report) else as_report(ours)
    out: list[str] = []

    def key(a: ReportAllocation) -> frozenset:
        return frozenset(a.values)

    theirs_by = {key(a): a for a in theirs.allocations}
    mine_by = {key(a): a for a in mine.allocations}
    for k, a in theirs_by.items():
        b = mine_by.get(k)
        if b is None:
            names = sorted(a.values)[:3]
            out.append(f"allocation {a.index} ({a.kind}, {a.size} B, {names}...) not reproduced")
            continue
        if a.size != b.size:
            out.append(f"allocation {a.index}: size {b.size}, XLA {a.size}")
        if a.kind != b.kind:
            out.append(f"allocation {a.index}: {b.kind}, XLA {a.kind}")
        for name, (_, off, size) in a.values.items():
            _, off2, size2 = b.values[name]
            if (off, size) != (off2, size2):
                out.append(
                    f"allocation {a.index}: {name} at {off2} ({size2} B), XLA {off} ({size} B)"
                )
    for k, b in mine_by.items():
        if k not in theirs_by:
            out.append(f"extra allocation ({b.kind}, {b.size} B, {sorted(b.values)[:3]}...)")
    return out


__all__ = [
    "Allocation",
    "BufferAssignment",
    "BufferAssigner",
    "assign_buffers",
    "allocation_figures",
    "detect_target",
    "Report",
    "ReportAllocation",
    "parse_buffer_assignment",
    "read_buffer_assignment",
    "read_memory_usage_totals",
    "as_report",
    "compare",
    "conflicts",
]
