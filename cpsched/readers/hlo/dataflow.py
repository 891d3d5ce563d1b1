"""XLA's dataflow, alias and live-range analyses of a parsed module, value for value.

These are the analyses XLA's buffer assigner runs before it places anything, reproduced with
XLA's own numbering so that ties break the same way:

- ``call_graph``: which computations run in a control-flow context (while, conditional, call,
  async) and which are embedded (fusion bodies, reducers, comparators);
- ``Dataflow`` (``HloDataflowAnalysis`` in SSA form, bitcasts defining no value): one value
  per defining position; value ids are handed out over the computations in XLA's post
  order and each computation's instructions in XLA's post order (callees first, fused
  computations included), then to the phis that propagation creates at while loops and
  conditionals; phis that only ever see one value are dropped, leaving gaps in the ids;
- ``Aliases`` (``HloAliasAnalysis``): values that must share one buffer (loop state,
  conditional results, entry input/output aliasing, in-place operations), with XLA's
  buffer ids;
- ``LiveRanges`` (``HloLiveRange``, module scoped): the flattened schedule (callees before
  their caller) and each value's first and last step, aliased values chained.

Facts come from XLA's sources (``hlo_dataflow_analysis``, ``hlo_alias_analysis``,
``hlo_live_range``, ``alias_info``, ``call_graph``); the code is written anew and is checked
against the buffer-assignment and live-range reports XLA writes next to each module of the
corpus.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from cpsched.core import opcodes
from cpsched.core.errors import InputError
from cpsched.readers.hlo.parser import (
    HloComputation,
    HloInstruction,
    HloModule,
    Shape,
    names_in,
    parse_output_operand_aliasing,
)

Index = tuple[int, ...]
ValueSet = tuple[int, ...]  # value ids, sorted

CONTROL_FLOW_CALLERS = frozenset(
    ("call", "conditional", "while", "async-start", "async-update", "async-done")
)
EMBEDDED_CALLERS = frozenset(
    (
        "all-reduce",
        "reduce-scatter",
        "all-reduce-start",
        "map",
        "reduce",
        "reduce-window",
        "scatter",
        "select-and-scatter",
        "sort",
        "topk",
        "fusion",
        "custom-call",
    )
)
ASYNC_OPS = frozenset(("async-start", "async-update", "async-done"))

# ``HloInstruction::IsOpElementwise``
ELEMENTWISE_OPS = (opcodes.ELEMENTWISE_MATH - {"clz"}) | {
    "count-leading-zeros",
    "bitcast-convert",
    "copy",
}


def shape_of(ins: HloInstruction) -> Shape:
    """The instruction's shape (``Program`` refuses instructions without one)."""
    shape = ins.shape
    if shape is None:
        raise InputError(f"{ins.name}: no shape (the text omits it and it cannot be inferred)")
    return shape


def _comp_ref(raw: str | None) -> str | None:
    if raw is None:
        return None
    names = names_in(raw)
    return names[0] if names else None


class Program:
    """A parsed module with the relations XLA keeps on its instructions: parent
    computation, operands and users as objects, called computations in XLA's order."""

    def __init__(self, module: HloModule):
        self.module = module
        self.parent: dict[HloInstruction, HloComputation] = {}
        self.operands: dict[HloInstruction, list[HloInstruction]] = {}
        self.users: dict[HloInstruction, list[HloInstruction]] = {}
        for comp in module.computations:
            for ins in comp.instructions:
                shape_of(ins)
                self.parent[ins] = comp
                self.users.setdefault(ins, [])
        for comp in module.computations:
            for ins in comp.instructions:
                ops = []
                for name in ins.operands:
                    op = comp.index.get(name)
                    if op is None:
                        raise InputError(f"{ins.name}: unknown operand {name!r}")
                    ops.append(op)
                    us = self.users[op]
                    if ins not in us:
                        us.append(ins)
                self.operands[ins] = ops
        self._async_comp: dict[HloInstruction, str | None] = {}
        self._callees: dict[HloInstruction, list[str]] = {}

    def comp(self, name: str) -> HloComputation:
        return self.module.by_name[name]

    def is_root(self, ins: HloInstruction) -> bool:
        return self.parent[ins].root is ins

    # -- called computations --------------------------------------------------------------
    def callees(self, ins: HloInstruction) -> list[str]:
        """``called_computations()`` in XLA's order (a while: body, then condition)."""
        got = self._callees.get(ins)
        if got is not None:
            return got
        op = ins.opcode
        a = ins.attrs
        out: list[str]
        if op == "while":
            out = [c for c in (_comp_ref(a.get("body")), _comp_ref(a.get("condition"))) if c]
        elif op == "conditional":
            if "branch_computations" in a:
                out = names_in(a["branch_computations"])
            else:
                out = [
                    c
                    for c in (
                        _comp_ref(a.get("true_computation")),
                        _comp_ref(a.get("false_computation")),
                    )
                    if c
                ]
        elif op in ASYNC_OPS:
            wrapped = self.async_computation(ins)
            out = [wrapped] if wrapped else []
        elif op == "select-and-scatter":
            out = [c for c in (_comp_ref(a.get("select")), _comp_ref(a.get("scatter"))) if c]
        else:
            out = []
            for key in ("calls", "to_apply", "comparator", "called_computations"):
                if key in a:
                    out += names_in(a[key])
        out = [c for c in out if c in self.module.by_name]
        self._callees[ins] = out
        return out

    def async_computation(self, ins: HloInstruction) -> str | None:
        """The computation an async chain wraps (named on its start)."""
        if ins in self._async_comp:
            return self._async_comp[ins]
        start = self.async_start(ins)
        name = _comp_ref(start.attrs.get("calls")) if start is not None else None
        self._async_comp[ins] = name
        return name

    def async_start(self, ins: HloInstruction) -> HloInstruction | None:
        cur = ins
        for _ in range(4096):
            if cur.opcode == "async-start":
                return cur
            ops = self.operands.get(cur) or []
            if cur.opcode not in ASYNC_OPS or not ops:
                return None
            cur = ops[0]
        return None

    def async_done(self, start: HloInstruction) -> HloInstruction | None:
        """The done ending the chain that ``start`` begins."""
        cur = start
        for _ in range(4096):
            nxt = [u for u in self.users[cur] if u.opcode in ("async-update", "async-done")]
            nxt = [u for u in nxt if self.operands[u][:1] == [cur]]
            if not nxt:
                return None
            if nxt[0].opcode == "async-done":
                return nxt[0]
            cur = nxt[0]
        return None

    # -- orders -----------------------------------------------------------------------------
    def post_order(self, comp: HloComputation) -> list[HloInstruction]:
        """``MakeInstructionPostOrder``: a depth-first walk from every instruction without
        users, in list order; operands first to last, then control predecessors."""
        state: dict[HloInstruction, int] = {}  # 1 visiting, 2 done
        out: list[HloInstruction] = []
        for root in comp.instructions:
            if self.users[root] or state.get(root) == 2:
                continue
            stack = [root]
            while stack:
                cur = stack[-1]
                s = state.get(cur, 0)
                if s == 0:
                    state[cur] = 1
                else:
                    stack.pop()
                    if s != 2:
                        state[cur] = 2
                        out.append(cur)
                    continue
                for op in reversed(self.operands[cur]):
                    if state.get(op, 0) != 2:
                        stack.append(op)
                for name in cur.control_predecessors:
                    p = comp.index.get(name)
                    if p is not None and state.get(p, 0) != 2:
                        stack.append(p)
        return out

    def computation_post_order(self) -> list[HloComputation]:
        """``MakeComputationPostOrder``: for each uncalled computation in list order, the
        computations it calls depth first (in instruction order), then itself."""
        called: set[str] = set()
        for comp in self.module.computations:
            for ins in comp.instructions:
                called.update(self.callees(ins))
        added: set[str] = set()
        out: list[HloComputation] = []
        for comp in self.module.computations:
            if comp.name in called:
                continue
            for name in self._embedded(comp):
                if name not in added:
                    added.add(name)
                    out.append(self.comp(name))
            if comp.name not in added:
                added.add(comp.name)
                out.append(comp)
        return out

    def _embedded(self, comp: HloComputation) -> list[str]:
        visited: set[str] = set()
        out: list[str] = []
        for ins in comp.instructions:
            stack: list[tuple[str, int]] = []
            for name in reversed(self.callees(ins)):
                if name not in visited:
                    visited.add(name)
                    stack.append((name, 0))
            while stack:
                name, k = stack[-1]
                body = self.comp(name).instructions
                if k == len(body):
                    stack.pop()
                    out.append(name)
                    continue
                stack[-1] = (name, k + 1)
                for sub in reversed(self.callees(body[k])):
                    if sub not in visited:
                        visited.add(sub)
                        stack.append((sub, 0))
        return out


# -- call graph --------------------------------------------------------------------------------

CONTROL, EMBEDDED, BOTH = "control", "embedded", "both"


@dataclass
class CallGraph:
    """Callers of each computation and its context (``CallGraph::SetCallContexts``)."""

    callers: dict[str, list[HloInstruction]]
    context: dict[str, str]


def call_graph(prog: Program) -> CallGraph:
    callers: dict[str, list[HloInstruction]] = {c.name: [] for c in prog.module.computations}
    calls: dict[str, list[tuple[str, str]]] = {c.name: [] for c in prog.module.computations}
    for comp in prog.module.computations:
        for ins in comp.instructions:
            ctx = (
                CONTROL
                if ins.opcode in CONTROL_FLOW_CALLERS
                else EMBEDDED
                if ins.opcode in EMBEDDED_CALLERS
                else None
            )
            for name in prog.callees(ins):
                callers[name].append(ins)
                if ctx is not None:
                    calls[comp.name].append((name, ctx))
    context: dict[str, str] = {}
    work: deque[str] = deque()
    for comp in prog.module.computations:
        if not callers[comp.name]:
            context[comp.name] = CONTROL
            work.append(comp.name)
    while work:
        name = work.popleft()
        for callee, ctx in calls[name]:
            add = EMBEDDED if ctx == EMBEDDED else context[name]
            old = context.get(callee)
            new = add if old is None or old == add else BOTH
            if new != old:
                context[callee] = new
                work.append(callee)
    return CallGraph(callers, context)


# -- dataflow -------------------------------------------------------------------------------------


@dataclass
class HloValue:
    id: int
    instruction: HloInstruction
    index: Index
    is_phi: bool
    shape: Shape
    positions: list[tuple[HloInstruction, Index]] = field(default_factory=list)
    uses: list[tuple[HloInstruction, int, Index]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.instruction.name}{{{','.join(map(str, self.index))}}}"

    def short(self) -> str:
        """XLA's ``HloValue::ToShortString``."""
        idx = f"{{{','.join(map(str, self.index))}}}" if shape_of(self.instruction).is_tuple else ""
        phi = " (phi)" if self.is_phi else ""
        return f"<{self.id} {self.instruction.name}{idx}{phi} @0>"


class Dataflow:
    """``HloDataflowAnalysis`` in SSA form: ``values`` by id, ``sets`` per instruction."""

    def __init__(self, prog: Program, graph: CallGraph | None = None):
        self.prog = prog
        self.graph = graph or call_graph(prog)
        self.values: dict[int, HloValue] = {}
        self.sets: dict[HloInstruction, dict[Index, ValueSet]] = {}
        self._next = 0
        self._phi_inputs: dict[int, list[int]] = {}
        self._doomed: set[int] = set()
        self._initialize()
        self._propagate()
        self._optimize_phis()
        for vid in self._doomed:
            self.values.pop(vid, None)
        self._positions_and_uses()

    # values
    def _new(self, ins: HloInstruction, idx: Index, is_phi: bool = False) -> int:
        vid = self._next
        self._next += 1
        self.values[vid] = HloValue(vid, ins, idx, is_phi, shape_of(ins).subshape(idx))
        return vid

    def value_set(self, ins: HloInstruction, idx: Index = ()) -> ValueSet:
        return self.sets[ins].get(idx, ())

    def unique_value(self, ins: HloInstruction, idx: Index = ()) -> HloValue:
        vs = self.value_set(ins, idx)
        if len(vs) != 1:
            raise InputError(f"{ins.name}{{{idx}}} holds {len(vs)} values, not one")
        return self.values[vs[0]]

    def defines(self, ins: HloInstruction, idx: Index = ()) -> bool:
        vs = self.value_set(ins, idx)
        return len(vs) == 1 and self.values[vs[0]].instruction is ins

    def flat_values(self, ins: HloInstruction) -> ValueSet:
        out: set[int] = set()
        for vs in self.sets[ins].values():
            out.update(vs)
        return tuple(sorted(out))

    # initialisation (``InitializeInstructionValueSets``)
    def _initialize(self) -> None:
        for comp in self.prog.computation_post_order():
            # parameters define values where no caller hands them over
            own_params = (
                not self.graph.callers[comp.name]
                or self.graph.context.get(comp.name, CONTROL) == EMBEDDED
            )
            for ins in self.prog.post_order(comp):
                tree: dict[Index, ValueSet] = {}
                for idx, sub in shape_of(ins).subshapes():
                    defined = _defines(ins, idx, sub, own_params)
                    tree[idx] = (self._new(ins, idx),) if defined else ()
                self.sets[ins] = tree

    # propagation (``Propagate``)
    def _ordinals(self) -> dict[HloInstruction, int]:
        prog = self.prog
        out: dict[HloInstruction, int] = {}
        counter = [0]

        def visit(comp: HloComputation) -> None:
            for ins in prog.post_order(comp):
                if ins.opcode in ("call", "async-start", "conditional"):
                    for c in prog.callees(ins):
                        visit(prog.comp(c))
                if ins.opcode == "while":
                    body, cond = (prog.callees(ins) + [None, None])[:2]
                    if cond:
                        visit(prog.comp(cond))
                    if body:
                        visit(prog.comp(body))
                out.setdefault(ins, counter[0])
                counter[0] += 1

        visit(prog.module.entry)
        return out

    def _propagate(self) -> None:
        prog = self.prog
        prio = self._ordinals()
        seq: dict[HloInstruction, int] = {}
        heap: list[tuple[int, int, HloInstruction]] = []
        queued: set[HloInstruction] = set()

        def add(ins: HloInstruction) -> None:
            if ins in queued:
                return
            queued.add(ins)
            # ties (fused instructions, all at 0) go in first-come order
            seq.setdefault(ins, len(seq))
            heapq.heappush(heap, (prio.get(ins, 0), seq[ins], ins))

        for comp in prog.computation_post_order():
            for ins in prog.post_order(comp):
                add(ins)
        while heap:
            _, _, ins = heapq.heappop(heap)
            queued.discard(ins)
            if not self._update(ins):
                continue
            for user in prog.users[ins]:
                add(user)
                if user.opcode == "conditional":
                    branches = prog.callees(user)
                    ops = prog.operands[user]
                    for j, br in enumerate(branches):
                        if j + 1 < len(ops) and ops[j + 1] is ins:
                            p = prog.comp(br).parameters().get(0)
                            if p is not None:
                                add(p)
                elif user.opcode in ("async-update", "async-done"):
                    wrapped = prog.async_computation(user)
                    if wrapped:
                        for p in prog.comp(wrapped).parameters().values():
                            add(p)
                else:
                    for c in prog.callees(user):
                        if self.graph.context.get(c) == CONTROL:
                            params = prog.comp(c).parameters()
                            for k, op in enumerate(prog.operands[user]):
                                if op is ins and k in params:
                                    add(params[k])
            comp = prog.parent[ins]
            if comp.root is ins:
                ctx = self.graph.context.get(comp.name)
                for caller in self.graph.callers[comp.name]:
                    if caller.opcode == "while":
                        add(caller)
                        for c in prog.callees(caller):
                            p = prog.comp(c).parameters().get(0)
                            if p is not None:
                                add(p)
                    elif ctx == CONTROL or caller.opcode == "conditional":
                        add(caller)

    def _assign(self, ins: HloInstruction, idx: Index, vs: ValueSet) -> bool:
        tree = self.sets[ins]
        if tree.get(idx, ()) != vs:
            tree[idx] = vs
            return True
        return False

    def _array_sets(self, ins: HloInstruction) -> list[tuple[Index, ValueSet]]:
        """``ins``'s value sets at its array leaves (a copy: the caller may assign)."""
        shape = shape_of(ins)
        return [
            (idx, vs) for idx, vs in list(self.sets[ins].items()) if shape.subshape(idx).is_array
        ]

    def _async_root(self, ins: HloInstruction) -> HloInstruction | None:
        """The root of the computation an async op wraps (None if it wraps none)."""
        wrapped = self.prog.async_computation(ins)
        return self.prog.comp(wrapped).root if wrapped else None

    def _assign_with(
        self, ins: HloInstruction, idx: Index, vs: ValueSet, inner, inner_idx: Index
    ) -> bool:
        """``_assign`` of ``vs`` joined with what the async computation's root ``inner`` (if
        any) holds at ``inner_idx``."""
        if inner is None:
            return self._assign(ins, idx, vs)
        got = set(vs) | set(self.sets[inner].get(inner_idx, ()))
        return self._assign(ins, idx, tuple(sorted(got)))

    def _forward(
        self,
        ins: HloInstruction,
        src: HloInstruction,
        src_prefix: Index,
        dst_prefix: Index,
        only_arrays: bool = False,
    ) -> bool:
        changed = False
        n = len(src_prefix)
        for idx, vs in list(self.sets[src].items()):
            if idx[:n] != src_prefix:
                continue
            out = dst_prefix + idx[n:]
            if out not in self.sets[ins]:
                continue
            if only_arrays and shape_of(ins).subshape(out).is_tuple:
                continue
            changed |= self._assign(ins, out, vs)
        return changed

    def _union(self, ins: HloInstruction, inputs: Sequence[Mapping[Index, ValueSet]]) -> bool:
        changed = False
        for idx in list(self.sets[ins]):
            got: set[int] = set()
            for t in inputs:
                got.update(t.get(idx, ()))
            changed |= self._assign(ins, idx, tuple(sorted(got)))
        return changed

    def _update(self, ins: HloInstruction) -> bool:
        prog = self.prog
        op = ins.opcode
        ops = prog.operands[ins]
        if op in ("bitcast", "add-dependency") and ops:
            return self._copy_tree(ins, ops[0])
        if op in ("domain", "opt-barrier", "optimization-barrier") and ops:
            return self._forward(ins, ops[0], (), ())
        if op == "copy" and ops:
            changed = False
            for idx in list(self.sets[ins]):
                if idx:
                    changed |= self._assign(ins, idx, self.sets[ops[0]].get(idx, ()))
            return changed
        if op == "get-tuple-element" and ops:
            k = ins.tuple_index or 0
            return self._forward(ins, ops[0], (k,), ())
        if op == "tuple":
            changed = False
            for k, o in enumerate(ops):
                changed |= self._forward(ins, o, (), (k,))
            return changed
        if op == "parameter":
            return self._update_parameter(ins)
        if op == "call":
            callee = prog.callees(ins)
            if not callee:
                return False
            return self._copy_tree(ins, prog.comp(callee[0]).root)
        if op == "while":
            body = prog.callees(ins)[0]
            return self._phi(ins, [self.sets[prog.comp(body).root], self.sets[ops[0]]])
        if op == "conditional":
            return self._phi(ins, [self.sets[prog.comp(c).root] for c in prog.callees(ins)])
        if op == "send" and ops:
            return self._forward(ins, ops[0], (), (0,))
        if op == "recv-done" and ops:
            return self._forward(ins, ops[0], (0,), (0,))
        if op == "copy-start" and ops:
            return self._assign(ins, (1,), self.sets[ops[0]].get((), ()))
        if op == "copy-done" and ops:
            return self._assign(ins, (), self.sets[ops[0]].get((0,), ()))
        if op == "async-start":
            changed = False
            for k, o in enumerate(ops):
                for idx, vs in self._array_sets(o):
                    changed |= self._assign(ins, (0, k) + idx, vs)
            inner = self._async_root(ins)
            if inner is not None:
                for idx, vs in self._array_sets(inner):
                    changed |= self._assign(ins, (1,) + idx, vs)
            return changed
        if op == "async-update" and ops:
            inner = self._async_root(ins)
            changed = False
            for idx, vs in self._array_sets(ops[0]):
                held = inner if idx[:1] == (1,) else None
                changed |= self._assign_with(ins, idx, vs, held, idx[1:])
            return changed
        if op == "async-done" and ops:
            inner = self._async_root(ins)
            changed = False
            for idx, vs in self._array_sets(ops[0]):
                if idx[:1] == (1,) and idx[1:] in self.sets[ins]:
                    changed |= self._assign_with(ins, idx[1:], vs, inner, idx[1:])
            return changed
        if op == "all-gather-start":
            changed = False
            for k, o in enumerate(ops):
                dst = (0, k) if len(ops) > 1 else (0,)
                changed |= self._assign(ins, dst, self.sets[o].get((), ()))
            return changed
        if op == "all-gather-done" and ops:
            return self._forward(ins, ops[0], (1,), (), only_arrays=True)
        if op == "all-reduce-done" and ops:
            return self._forward(ins, ops[0], (), ())
        if op == "collective-permute-start" and ops:
            changed = False
            if len(ops) > 1 and len(ops) != 4:
                for k, o in enumerate(ops):
                    changed |= self._assign(ins, (0, k), self.sets[o].get((), ()))
            elif shape_of(ops[0]).is_tuple:
                for k in range(len(shape_of(ops[0]).elements)):
                    changed |= self._assign(ins, (0, k), self.sets[ops[0]].get((k,), ()))
            else:
                changed |= self._assign(ins, (0,), self.sets[ops[0]].get((), ()))
            return changed
        if op == "collective-permute-done" and ops:
            if shape_of(ins).is_tuple:
                changed = False
                for k in range(len(shape_of(ins).elements)):
                    changed |= self._assign(ins, (k,), self.sets[ops[0]].get((1, k), ()))
                return changed
            return self._assign(ins, (), self.sets[ops[0]].get((1,), ()))
        return False

    def _copy_tree(self, ins: HloInstruction, src: HloInstruction) -> bool:
        new = dict(self.sets[src])
        if new != self.sets[ins]:
            self.sets[ins] = new
            return True
        return False

    def _update_parameter(self, ins: HloInstruction) -> bool:
        prog = self.prog
        comp = prog.parent[ins]
        if self.graph.context.get(comp.name) == EMBEDDED or not self.graph.callers[comp.name]:
            return False
        pnum = ins.parameter_number or 0
        inputs: list[Mapping[Index, ValueSet]] = []
        need_phi = False
        for caller in self.graph.callers[comp.name]:
            op = caller.opcode
            cops = prog.operands[caller]
            if op == "call":
                inputs.append(self.sets[cops[pnum]])
            elif op == "while":
                inputs.append(self.sets[cops[0]])
                body = prog.comp(prog.callees(caller)[0])
                if ins is not body.root:
                    inputs.append(self.sets[body.root])
                need_phi = True
            elif op == "conditional":
                branches = prog.callees(caller)
                if comp.name in branches:
                    j = branches.index(comp.name)
                    inputs.append(self.sets[cops[j + 1]])
                need_phi = True
            elif op == "async-start":
                if pnum < len(cops):
                    inputs.append(self.sets[cops[pnum]])
            elif op in ("async-update", "async-done"):
                sub = {
                    idx[2:]: vs for idx, vs in self.sets[cops[0]].items() if idx[:2] == (0, pnum)
                }
                return self._union(ins, [sub])
        if need_phi:
            return self._phi(ins, inputs)
        return self._union(ins, inputs)

    def _phi(self, ins: HloInstruction, inputs: Sequence[Mapping[Index, ValueSet]]) -> bool:
        changed = False
        tree = self.sets[ins]
        for idx in list(tree):
            cur = tree[idx]
            current = self.values.get(cur[0]) if cur else None
            ids = [x for t in inputs for x in t.get(idx, ())]
            here = current is not None and current.instruction is ins and current.index == idx
            if not ids:
                continue
            if len(ids) == 1:
                if current is None or current.id != ids[0]:
                    if current is not None and here:
                        self._doomed.add(current.id)
                    tree[idx] = (ids[0],)
                    changed = True
            elif current is None or not (here and current.is_phi):
                p = self._new(ins, idx, True)
                tree[idx] = (p,)
                self._phi_inputs[p] = list(ids)
                changed = True
            elif self._phi_inputs.get(current.id) != ids:
                self._phi_inputs[current.id] = list(ids)
                changed = True
        return changed

    # phi graph optimisation (``PhiGraph::Optimize``)
    def _optimize_phis(self) -> None:
        live = {p: ins for p, ins in self._phi_inputs.items() if p not in self._doomed}
        repl: dict[int, int] = {}

        def res(x: int) -> int:
            while x in repl:
                x = repl[x]
            return x

        changed = True
        while changed:
            changed = False
            checked: set[int] = set()
            for p in live:
                if p in repl:
                    continue
                ops = [res(x) for x in live[p]]
                ops = [x for x in ops if x != p]
                live[p] = ops
                if ops and all(x == ops[0] for x in ops):
                    repl[p] = ops[0]
                    changed = True
                    continue
                if p in checked:
                    continue
                work: deque[int] = deque([p])
                seen: set[int] = set()
                non_phi: int | None = None
                ok = True
                while work:
                    t = res(work.popleft())
                    if t in seen:
                        continue
                    checked.add(t)
                    seen.add(t)
                    if t in live and t not in repl:
                        work.extend(live[t])
                    elif non_phi is not None and non_phi != t:
                        ok = False
                        break
                    else:
                        non_phi = t
                if ok and non_phi is not None:
                    for t in seen:
                        if t != non_phi and t in live and t not in repl:
                            repl[t] = non_phi
                            changed = True
        if not repl:
            return
        for tree in self.sets.values():
            for idx, vs in tree.items():
                if len(vs) == 1 and vs[0] in repl:
                    tree[idx] = (res(vs[0]),)
        self._doomed.update(repl)

    # positions and uses (``HloValue::SetPositions``, ``ComputeUses``)
    def _positions_and_uses(self) -> None:
        prog = self.prog
        for v in self.values.values():
            v.positions = [(v.instruction, v.index)]
        for comp in prog.module.computations:
            for ins in comp.instructions:
                for idx, vs in self.sets[ins].items():
                    for vid in vs:
                        v = self.values[vid]
                        if v.instruction is not ins:
                            v.positions.append((ins, idx))
        for v in self.values.values():
            roots = {p for p, _ in v.positions if prog.is_root(p)}
            uses = []
            for p, idx in v.positions:
                for user in prog.users[p]:
                    for k, o in enumerate(prog.operands[user]):
                        if o is p and (_may_use(k, idx, user) or user in roots):
                            uses.append((user, k, idx))
            v.uses = uses


_DEFINE_NOTHING = frozenset(
    (
        "bitcast",
        "add-dependency",
        "while",
        "call",
        "conditional",
        "get-tuple-element",
        "domain",
        "opt-barrier",
        "optimization-barrier",
        "copy-done",
        "all-reduce-done",
    )
)


def _defines(ins: HloInstruction, idx: Index, sub: Shape, own_params: bool) -> bool:
    """Whether ``ins`` defines a value at ``idx`` (``InitializeInstructionValueSets``)."""
    op = ins.opcode
    if op in _DEFINE_NOTHING:
        return False
    if op == "parameter":
        return own_params
    if op in ("copy", "tuple"):
        return idx == ()
    if op == "async-start":
        return sub.is_tuple or (len(idx) > 0 and idx[0] > 1)
    if op in ("async-update", "async-done"):
        return sub.is_tuple
    if op == "copy-start":
        return idx in ((), (0,), (2,))
    if op == "all-gather-start":
        return sub.is_tuple or (len(idx) > 0 and idx[0] == 1)
    if op in ("all-gather-done", "collective-permute-done"):
        return idx == () and shape_of(ins).is_tuple
    if op == "collective-permute-start":
        if idx == () or idx == (1,) or (len(idx) == 1 and idx[0] >= 2):
            return True
        # combined or in-place forms also define each destination element
        return len(idx) == 2 and idx[0] == 1 and len(ins.operands) > 1
    if op == "recv-done":
        return idx in ((), (1,))
    if op == "send":
        return idx in ((), (1,), (2,))
    return True


def _may_use(k: int, idx: Index, user: HloInstruction) -> bool:
    op = user.opcode
    if op in ("get-tuple-element", "copy"):
        return idx == ()
    if op in ("tuple", "domain"):
        return False
    return True


# -- in-place pairs (``AliasInfo::GetInPlaceInputOutputPairs``) --------------------------------


def _follow(prog: Program, ins: HloInstruction, idx: Index) -> tuple[HloInstruction, Index]:
    while ins.opcode == "tuple" and idx:
        ins = prog.operands[ins][idx[0]]
        idx = idx[1:]
    while ins.opcode == "get-tuple-element":
        idx = (ins.tuple_index or 0,) + idx
        ins = prog.operands[ins][0]
    while not idx and ins.opcode == "bitcast":
        ins = prog.operands[ins][0]
    return ins, idx


def in_place_pairs(prog: Program, ins: HloInstruction) -> list[tuple[int, Index, Index]]:
    """``(operand number, operand index, output index)`` that must share a buffer."""
    op = ins.opcode
    n = len(ins.operands)
    if op in ("dynamic-update-slice", "scatter", "all-reduce-start"):
        if op == "all-reduce-start" and "nvshmem" in ins.attrs.get("backend_config", "").lower():
            return []
        k = 1 if op == "dynamic-update-slice" else (n - 1) // 2 if op == "scatter" else n
        if k == 1:
            return [(0, (), ())]
        return [(i, (), (i,)) for i in range(k)]
    if op == "collective-permute" and n == 4:
        sh = shape_of(prog.operands[ins][1])
        if sh.is_tuple:
            return [(1, (), ())] + [(1, (i,), (i,)) for i in range(len(sh.elements))]
        return [(1, (), ())]
    if op == "collective-permute-start" and n == 4:
        sh = shape_of(prog.operands[ins][1])
        if sh.is_tuple:
            return [(1, (), (1,))] + [(1, (i,), (1, i)) for i in range(len(sh.elements))]
        return [(1, (), (1,))]
    if op in ("custom-call", "async-start"):
        return [
            (o, oi, out)
            for out, o, oi in parse_output_operand_aliasing(
                ins.attrs.get("output_to_operand_aliasing")
            )
        ]
    if op == "fusion":
        pairs = _fusion_pairs(prog, ins)
        pairs += [
            (o, oi, out)
            for out, o, oi in parse_output_operand_aliasing(
                ins.attrs.get("output_to_operand_aliasing")
            )
        ]
        return pairs
    if op == "set-dimension-size":
        return [(0, (), ())]
    if op == "ragged-all-to-all":
        return [(1, (), ())]
    return []


def _fusion_pairs(prog: Program, fusion: HloInstruction) -> list[tuple[int, Index, Index]]:
    callee = prog.callees(fusion)
    if not callee:
        return []
    body = prog.comp(callee[0])
    out = []
    for idx, sub in shape_of(fusion).subshapes():
        if sub.is_tuple:
            continue
        src, sidx = _follow(prog, body.root, idx)
        found: tuple[HloInstruction, Index] | None = None
        for o, oi, o_out in in_place_pairs(prog, src):
            if o_out != sidx:
                continue
            s2, i2 = _follow(prog, prog.operands[src][o], oi)
            if s2.opcode == "fusion":
                for o3, oi3, out3 in in_place_pairs(prog, s2):
                    if out3 == i2:
                        s2, i2 = _follow(prog, prog.operands[s2][o3], oi3)
            found = (s2, i2)
        if found is not None and found[0].opcode == "parameter":
            out.append((found[0].parameter_number or 0, found[1], idx))
    return out


# -- aliases (``HloAliasAnalysis``) -------------------------------------------------------------


@dataclass
class HloBuffer:
    id: int
    values: list[int]  # value ids, sorted


class Aliases:
    """Buffers of values that must share memory, numbered as XLA numbers them."""

    def __init__(self, flow: Dataflow):
        self.flow = flow
        prog = flow.prog
        module = prog.module
        entry = module.entry
        ids = sorted(flow.values)
        slot = {vid: k for k, vid in enumerate(ids)}
        sets: list[set[int] | None] = [{vid} for vid in ids]
        where: dict[int, int] = dict(slot)  # value -> slot holding its set
        params = entry.parameters()
        io_alias = {out: (p, pi) for out, p, pi, _ in module.input_output_alias()}
        pairs_cache: dict[HloInstruction, list[tuple[int, Index, Index]]] = {}

        def pairs(ins: HloInstruction) -> list[tuple[int, Index, Index]]:
            got = pairs_cache.get(ins)
            if got is None:
                got = pairs_cache[ins] = in_place_pairs(prog, ins)
            return got

        graph = flow.graph
        for vid in ids:
            v = flow.values[vid]
            aliased = {vid}
            for pos, idx in v.positions:
                if pos is entry.root and idx in io_alias:
                    p, pi = io_alias[idx]
                    if p in params:
                        aliased.update(flow.value_set(params[p], pi))
            for user, _, uidx in v.uses:
                if user.opcode == "while":
                    aliased.update(flow.value_set(user, uidx))
            if v.instruction.opcode == "parameter":
                comp = prog.parent[v.instruction]
                for caller in graph.callers[comp.name]:
                    if caller.opcode == "while":
                        aliased.update(flow.value_set(caller, v.index))
            for pos, idx in v.positions:
                if not prog.is_root(pos):
                    continue
                comp = prog.parent[pos]
                for caller in graph.callers[comp.name]:
                    if caller.opcode == "while" and prog.callees(caller)[0] == comp.name:
                        aliased.update(flow.value_set(caller, idx))
                    elif caller.opcode == "conditional":
                        aliased.update(flow.value_set(caller, idx))
            for pos, idx in v.positions:
                for o, oi, out in pairs(pos):
                    if out == idx:
                        aliased.update(flow.value_set(prog.operands[pos][o], oi))
            for user, k, uidx in v.uses:
                for o, oi, out in pairs(user):
                    if k == o and uidx == oi:
                        aliased.update(flow.value_set(user, out))
            if len(aliased) < 2:
                continue
            slots = {where[a] for a in aliased}
            # the largest set collects the others; ties go to the smallest value id
            union = max(slots, key=lambda s: (len(sets[s]), -ids[s]))  # type: ignore[arg-type]
            target = sets[union]
            assert target is not None
            for s in slots:
                if s == union:
                    continue
                src = sets[s]
                if not src:
                    continue
                for a in src:
                    target.add(a)
                    where[a] = union
                sets[s] = set()
        self.buffers: list[HloBuffer] = []
        self.buffer_of: dict[int, int] = {}
        for members in sets:
            if members:
                b = HloBuffer(len(self.buffers), sorted(members))
                self.buffers.append(b)
                for vid in b.values:
                    self.buffer_of[vid] = b.id
        self._live_out: set[int] | None = None

    def buffer(self, vid: int) -> HloBuffer:
        return self.buffers[self.buffer_of[vid]]

    def live_out_values(self) -> set[int]:
        """Values reaching the entry root (``ValueLivesOut``)."""
        flow = self.flow
        root = flow.prog.module.entry.root
        out: set[int] = set()
        for vs in flow.sets[root].values():
            out.update(vs)
        return out

    def live_out_buffers(self) -> set[int]:
        if self._live_out is None:
            self._live_out = {self.buffer_of[v] for v in self.live_out_values()}
        return self._live_out


# -- live ranges (``HloLiveRange``, module scoped) ---------------------------------------------


@dataclass
class LiveRange:
    start: int
    end: int
    end_position: tuple[HloInstruction, Index]


class LiveRanges:
    """Flattened schedule and each value's live range under given computation orders.

    Values of an async-wrapped computation live until the chain's done; their end position
    (which in-place reuse is judged by) is the last position they reach on their own.
    ``async_from_caller_start`` also starts them at the start of the calling computation,
    as XLA's newest ``HloLiveRange`` does; XLA:GPU of jax 0.11 (the corpus's GPU reports)
    does not.
    """

    def __init__(
        self,
        aliases: Aliases,
        orders: Mapping[str, Sequence[str]] | None = None,
        async_from_caller_start: bool = False,
    ):
        flow = aliases.flow
        prog = flow.prog
        module = prog.module
        self.aliases = aliases
        self.sequence: list[HloInstruction] = []
        self.time: dict[HloInstruction, int] = {}
        self.span: dict[str, tuple[int, int]] = {}
        self.async_context: dict[str, str] = {}
        orders = dict(orders or {})
        self.orders: dict[str, list[HloInstruction]] = {}

        def order_of(comp: HloComputation) -> list[HloInstruction]:
            got = self.orders.get(comp.name)
            if got is not None:
                return got
            names = orders.get(comp.name)
            if names is None:
                seq = list(comp.instructions)
            else:
                seq = []
                for n in names:
                    ins = comp.index.get(n.lstrip("%"))
                    if ins is None:
                        raise InputError(f"order for {comp.name!r} names unknown {n!r}")
                    seq.append(ins)
                if len(seq) != len(comp.instructions) or len(set(seq)) != len(seq):
                    raise InputError(f"order for {comp.name!r} must list each instruction once")
            self.orders[comp.name] = seq
            return seq

        def flatten(comp: HloComputation, ctx: str | None) -> None:
            if comp.name in self.span:
                return
            if ctx is not None:
                self.async_context[comp.name] = ctx
            start = len(self.sequence)
            for ins in order_of(comp):
                op = ins.opcode
                if op in ("call", "conditional"):
                    for c in prog.callees(ins):
                        flatten(prog.comp(c), ctx)
                elif op == "async-start":
                    wrapped = prog.async_computation(ins)
                    if wrapped:
                        flatten(prog.comp(wrapped), wrapped)
                elif op == "while":
                    body, cond = prog.callees(ins)[:2]
                    flatten(prog.comp(cond), ctx)
                    flatten(prog.comp(body), ctx)
                self.time[ins] = len(self.sequence)
                self.sequence.append(ins)
            self.span[comp.name] = (start, len(self.sequence))

        flatten(module.entry, None)
        self.end_time = len(self.sequence)
        aliased_params = {(p, pi) for _, p, pi, _ in module.input_output_alias()}
        graph = flow.graph
        self.ranges: dict[int, LiveRange] = {}
        for ins, t in self.time.items():
            comp = prog.parent[ins]
            span = self.span[comp.name]
            start = span[0] if ins.opcode == "parameter" else t
            def_end = span[1] if comp.root is ins else t
            own_end = def_end
            ctx = self.async_context.get(comp.name)
            if ctx is not None:
                for caller in graph.callers[ctx]:
                    if caller.opcode not in ASYNC_OPS:
                        continue
                    done = (
                        caller
                        if caller.opcode == "async-done"
                        else prog.async_done(prog.async_start(caller) or caller)
                    )
                    if done is not None and done in self.time:
                        def_end = max(def_end, self.time[done])
                    else:
                        def_end = max(def_end, span[1])
                    outer = self.span.get(prog.parent[caller].name)
                    if outer is not None and async_from_caller_start:
                        start = min(start, outer[0])
            for vs in flow.sets[ins].values():
                for vid in vs:
                    v = flow.values[vid]
                    if v.instruction is not ins:
                        continue
                    end, end_pos = own_end, v.positions[0]
                    for pos in v.positions[1:]:
                        p = pos[0]
                        if prog.is_root(p):
                            sp = self.span.get(prog.parent[p].name)
                            if sp is None:
                                continue
                            pt = sp[1]
                        else:
                            if p not in self.time:
                                continue
                            pt = self.time[p]
                        if pt > end:
                            end, end_pos = pt, pos
                    end = max(end, def_end)
                    if (
                        ins.opcode == "parameter"
                        and comp is module.entry
                        and (ins.parameter_number, v.index) not in aliased_params
                    ):
                        end = self.end_time
                    else:
                        end = max(end, self._last_use(v))
                    self.ranges[vid] = LiveRange(start, end, end_pos)
        # values of one buffer get touching, non-overlapping ranges
        by_buffer: dict[int, list[int]] = {}
        for vid in self.ranges:
            by_buffer.setdefault(aliases.buffer_of[vid], []).append(vid)
        for members in by_buffer.values():
            if len(members) < 2:
                continue
            members.sort(key=lambda x: (self.ranges[x].start, self.ranges[x].end, x))
            for a, b in zip(members, members[1:]):
                ra, rb = self.ranges[a], self.ranges[b]
                rb.end = max(ra.end, rb.end)
                ra.end = min(ra.end, rb.start)

    def _last_use(self, v: HloValue) -> int:
        prog = self.aliases.flow.prog
        end = -1
        for user, _, _ in v.uses:
            used = user
            if user.opcode == "call":
                callee = prog.callees(user)
                if callee and callee[0] in self.span:
                    continue
            if user.opcode == "while":
                body = prog.callees(user)[0]
                if body in self.span:
                    p0 = prog.comp(body).parameters().get(0)
                    if p0 is not None:
                        used = p0
            t = self.time.get(used)
            if t is not None and t > end:
                end = t
        return end


@dataclass
class ModuleAnalysis:
    """Everything buffer assignment needs to know about a module under one schedule."""

    prog: Program
    flow: Dataflow
    aliases: Aliases
    live: LiveRanges


def analyse(module: HloModule, orders: Mapping[str, Sequence[str]] | None = None) -> ModuleAnalysis:
    prog = Program(module)
    flow = Dataflow(prog)
    aliases = Aliases(flow)
    return ModuleAnalysis(prog, flow, aliases, LiveRanges(aliases, orders))


__all__ = [
    "Program",
    "CallGraph",
    "call_graph",
    "HloValue",
    "Dataflow",
    "HloBuffer",
    "Aliases",
    "LiveRange",
    "LiveRanges",
    "ModuleAnalysis",
    "analyse",
    "in_place_pairs",
    "ELEMENTWISE_OPS",
]
