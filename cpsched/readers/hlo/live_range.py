"""XLA-style live ranges (``HloLiveRange``), to calibrate the reader against XLA's own dumps.

This follows XLA's rules rather than cpsched's IR (reference notes, section 2.4):
- the schedule is flattened from the entry: before a call or conditional its called
  computations, before a while its condition then its body, before the first instruction
  of an async chain its wrapped computation; callee instructions get earlier times;
- one HLO value per (defining instruction, shape index) under XLA's dataflow rules (SSA,
  bitcasts do not define values, constants do); a value starts at its definition
  (parameters: the start of their computation) and ends at its last position (a root
  position counts as the end of the computation) or last use, whichever is later; read-only
  entry parameters live to the end of the schedule;
- values that share an HloBuffer (input/output aliasing, in-place ops, while and conditional
  merges) are normalised into touching, non-overlapping intervals.

``parse_xla_live_range`` reads the ``*-live-range.txt`` file XLA writes next to a module
(``HloLiveRange::ToString``), so tests can compare the two value for value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from cpsched.core.errors import InputError
from cpsched.readers.hlo.convert import inplace_pairs
from cpsched.readers.hlo.parser import HloComputation, HloInstruction, HloModule, Shape


@dataclass
class XlaValue:
    id: int
    computation: str
    instruction: str
    index: tuple[int, ...]
    shape: Shape | None  # the value's own subshape
    def_shape: Shape | None  # the defining instruction's shape
    is_phi: bool = False
    positions: list[tuple[str, str, tuple[int, ...]]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.instruction}{{{','.join(map(str, self.index))}}}"

    def byte_size(self) -> int:
        return self.shape.byte_size() if self.shape is not None else 0


@dataclass
class XlaLiveRanges:
    schedule_end_time: int
    sequence: list[str]  # flattened instruction names
    values: list[XlaValue]
    start: dict[int, int]  # value id -> first step
    end: dict[int, int]  # value id -> last step (inclusive)
    buffer_of: dict[int, int]  # value id -> buffer (alias set) id
    computations: list[str] = field(default_factory=list)  # computation of each step

    @property
    def ranges(self) -> dict[str, tuple[int, int]]:
        return {
            v.name: (self.start[v.id], self.end[v.id]) for v in self.values if v.id in self.start
        }

    def peak_moment(self) -> int:
        """XLA's ``ComputePeakMemoryMoment``: it sizes each value by its *defining
        instruction's* shape and adds the values starting at a step before removing those
        that ended the step before."""
        starts: dict[int, int] = {}
        ends: dict[int, int] = {}
        for v in self.values:
            if v.id not in self.start:
                continue
            size = v.def_shape.byte_size() if v.def_shape is not None else 0
            starts[self.start[v.id]] = starts.get(self.start[v.id], 0) + size
            ends[self.end[v.id] + 1] = ends.get(self.end[v.id] + 1, 0) + size
        usage = peak = 0
        peak_time = None
        for t in sorted(set(starts) | set(ends)):
            usage += starts.get(t, 0)
            if usage > peak:
                peak, peak_time = usage, t
            usage -= ends.get(t, 0)
        return peak_time or 0

    def usage(self, module: HloModule) -> np.ndarray:
        """Bytes in use at each step of the flattened schedule, each HloBuffer counted once
        (the largest of its values live at that step) and constants left out: the
        accounting cpsched's simulator uses (XLA's own peak listing counts both values of
        an in-place hand-over and the constants too)."""
        n = self.schedule_end_time
        per: dict[int, np.ndarray] = {}
        for v in self.values:
            if module.by_name[v.computation].index[v.instruction].opcode == "constant":
                continue
            s, e = self.start[v.id], min(self.end[v.id], n - 1)
            row = per.setdefault(self.buffer_of[v.id], np.zeros(n, dtype=np.int64))
            row[s : e + 1] = np.maximum(row[s : e + 1], v.byte_size())
        # per is not empty: the sum is an array, not sum()'s start value 0
        return sum(per.values()) if per else np.zeros(n, dtype=np.int64)  # type: ignore[return-value]

    def usage_per_entry_step(self, module: HloModule) -> list[tuple[str, int]]:
        """``(entry instruction, bytes)`` per entry step: at a while / conditional / call
        the most bytes over its called computations' steps and its own, which is what
        the caller's simulation charges for that one step."""
        u = self.usage(module)
        out = []
        prev = -1
        for t, (comp, name) in enumerate(zip(self.computations, self.sequence)):
            if comp == module.entry.name:
                out.append((name, int(u[prev + 1 : t + 1].max())))
                prev = t
        return out

    def live_at(self, t: int) -> list[tuple[str, int]]:
        """Values live at step ``t`` with their bytes, in XLA's listing order."""
        out = [
            (v.byte_size(), v.instruction, v.index, v.name)
            for v in self.values
            if v.id in self.start and self.start[v.id] <= t <= self.end[v.id]
        ]
        out.sort(key=lambda x: (-x[0], x[1], x[2]))
        return [(name, size) for size, _, _, name in out]

    def to_text(self) -> str:
        lines = [f"HloLiveRange (max {self.schedule_end_time}):", "  InstructionSequence:"]
        lines += [f"    {k}:{n}" for k, n in enumerate(self.sequence)]
        lines.append("  BufferLiveRange:")
        lines += [
            f"    {v.name}:{self.start[v.id]}-{self.end[v.id]}"
            for v in self.values
            if v.id in self.start
        ]
        t = self.peak_moment()
        lines.append(f"  Live ranges at {t} (peak):")
        total = 0
        for name, size in self.live_at(t):
            total += size
            lines.append(f"    {name}: {size} bytes (cumulative: {total} bytes)")
        return "\n".join(lines) + "\n"


class _UnionFind:
    def __init__(self):
        self.parent: dict[int, int] = {}

    def find(self, x: int) -> int:
        p = self.parent.setdefault(x, x)
        while p != self.parent[p]:
            self.parent[p] = self.parent[self.parent[p]]
            p = self.parent[p]
        self.parent[x] = p
        return p

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


VS = dict  # shape index -> tuple of value ids


def _may_use(idx: tuple[int, ...], user: HloInstruction) -> bool:
    op = user.opcode
    if op in ("get-tuple-element", "copy"):
        return idx == ()
    if op == "async-done":
        return idx == () or idx[0] == 1
    if op in ("tuple", "domain"):
        return False
    return True


class _Analysis:
    def __init__(self, module: HloModule, orders: Mapping[str, Sequence[str]]):
        self.m = module
        self.orders = orders
        self.values: list[XlaValue] = []
        self.vs: dict[tuple[str, str], VS] = {}
        self.caller_params: dict[str, list[VS]] = {}  # sequential callee -> param value sets
        self.done_comps: set[str] = set()
        self.uf = _UnionFind()
        self.async_context: dict[str, tuple[str, str]] = {}  # wrapped comp -> (caller comp, start)
        self.phi_inputs: dict[int, list[int]] = {}  # phi value -> its input values
        self.whiles: list[tuple[str, str, str, str]] = []  # (comp, while, body, condition)

    # -- dataflow --------------------------------------------------------------------------
    def new_value(self, comp: HloComputation, ins: HloInstruction, idx, is_phi=False) -> int:
        shape = ins.shape.subshape(idx) if ins.shape is not None else None
        v = XlaValue(len(self.values), comp.name, ins.name, idx, shape, ins.shape, is_phi)
        self.values.append(v)
        return v.id

    def define_all(self, comp, ins, keep: VS | None = None) -> VS:
        keep = keep or {}
        out: VS = {}
        shapes = ins.shape.subshapes() if ins.shape is not None else [((), None)]
        for idx, _ in shapes:
            out[idx] = keep[idx] if idx in keep else (self.new_value(comp, ins, idx),)
        return out

    def analyse(self, comp: HloComputation, params: list[VS] | None) -> None:
        """Value sets of a computation's instructions (``params``: the caller's operands
        for a sequential callee; None when its parameters define values)."""
        for ins in _topo(comp):
            self.vs[(comp.name, ins.name)] = self.instruction(comp, ins, params)
        self.done_comps.add(comp.name)

    def operand_vs(self, comp, ins, k) -> VS:
        return self.vs.get((comp.name, ins.operands[k]), {(): ()})

    def instruction(self, comp: HloComputation, ins: HloInstruction, params) -> VS:
        op = ins.opcode
        ops = [self.operand_vs(comp, ins, k) for k in range(len(ins.operands))]
        if op == "parameter":
            pnum = ins.parameter_number
            assert pnum is not None  # the parser rejects a parameter without its number
            if params is not None and pnum < len(params):
                return dict(params[pnum])
            return self.define_all(comp, ins)
        if op == "get-tuple-element" and ops:
            k = ins.tuple_index
            return {idx[1:]: v for idx, v in ops[0].items() if idx[:1] == (k,)} or {(): ()}
        if (
            op in ("bitcast", "add-dependency", "opt-barrier", "optimization-barrier", "domain")
            and ops
        ):
            return dict(ops[0])
        if op == "tuple":
            out: VS = {(): (self.new_value(comp, ins, ()),)}
            for k, t in enumerate(ops):
                for idx, v in t.items():
                    out[(k,) + idx] = v
            return out
        if op == "copy" and ins.shape is not None and ins.shape.is_tuple and ops:
            return self.define_all(comp, ins, {i: v for i, v in ops[0].items() if i != ()})
        if op == "call":
            callee = self.m.by_name[ins.attrs["to_apply"].strip().lstrip("%")]
            self.analyse(callee, ops)
            return dict(self.vs[(callee.name, callee.root.name)])
        if op == "conditional":
            branches = [self.m.by_name[c] for _, c in ins.called()]
            roots = []
            for k, br in enumerate(branches):
                self.analyse(br, [ops[k + 1]] if k + 1 < len(ops) else [])
                roots.append(self.vs[(br.name, br.root.name)])
            out = {}
            for idx, _ in _indices(ins):
                inputs = [x for r in roots for x in r.get(idx, ())]
                out[idx] = self.phi(comp, ins, idx, inputs)
            return out
        if op == "while":
            return self.while_vs(comp, ins, ops)
        if op in (
            "async-start",
            "all-gather-start",
            "collective-permute-start",
            "copy-start",
            "send",
        ):
            keep: VS = {}
            if op == "async-start":
                for k, t in enumerate(ops):
                    for idx, v in t.items():
                        keep[(0, k) + idx] = v
                calls = ins.attrs.get("calls")
                if ins.wrapped_opcode is None and calls:
                    wrapped = self.m.by_name[calls.strip().lstrip("%")]
                    self.async_context[wrapped.name] = (comp.name, ins.name)
                    self.analyse(wrapped, ops)
                    for idx, v in self.vs[(wrapped.name, wrapped.root.name)].items():
                        keep[(1,) + idx] = v
            elif op == "copy-start":
                keep = {(1,) + i: v for i, v in ops[0].items()} if ops else {}
            elif op == "all-gather-start" and len(ops) > 1:
                keep = {(0, k) + i: v for k, t in enumerate(ops) for i, v in t.items()}
            elif ops:
                keep = {(0,) + i: v for i, v in ops[0].items()}
            return self.define_all(comp, ins, keep)
        if (
            op
            in (
                "async-update",
                "async-done",
                "all-gather-done",
                "collective-permute-done",
                "all-reduce-done",
                "copy-done",
                "recv-done",
            )
            and ops
        ):
            if op == "async-update" or op == "all-reduce-done":
                fwd = dict(ops[0])
            elif op == "copy-done":
                fwd = {i[1:]: v for i, v in ops[0].items() if i[:1] == (0,)}
            elif op == "recv-done":
                fwd = {i: v for i, v in ops[0].items() if i[:1] == (0,)}
            else:
                fwd = {i[1:]: v for i, v in ops[0].items() if i[:1] == (1,)}
            out = {}
            shapes = ins.shape.subshapes() if ins.shape is not None else [((), None)]
            for idx, sub in shapes:
                tuple_shaped = sub is not None and sub.is_tuple
                if idx in fwd and not (tuple_shaped and op != "all-reduce-done"):
                    out[idx] = fwd[idx]
                else:
                    out[idx] = (self.new_value(comp, ins, idx),)
            return out
        return self.define_all(comp, ins)

    def phi(self, comp, ins, idx, inputs: list[int]) -> tuple[int, ...]:
        """XLA's ``Phi``: one input passes through; several (duplicates included) get a
        phi value, registered in the phi graph and simplified at the end."""
        if len(inputs) <= 1:
            return tuple(inputs)
        p = self.new_value(comp, ins, idx, True)
        self.phi_inputs[p] = list(inputs)
        return (p,)

    def while_vs(self, comp, ins, ops) -> VS:
        """SSA form as XLA's dataflow builds it: the body parameter, the condition
        parameter and the while each get a phi of (init, body root) at every index; the
        phi graph optimisation later folds those that only ever see one value (state
        passed through unchanged)."""
        cond = self.m.by_name[ins.attrs["condition"].strip().lstrip("%")]
        body = self.m.by_name[ins.attrs["body"].strip().lstrip("%")]
        init: VS = dict(ops[0]) if ops else {(): ()}
        idxs = [idx for idx, _ in _indices(ins)]
        body_param = body.parameters().get(0)
        cond_param = cond.parameters().get(0)
        identity = body_param is not None and body.root is body_param
        # a while body has a parameter 0 (XLA's verifier requires it; not checked here)
        pb: VS = (
            dict(init)
            if identity
            else {
                i: (self.new_value(body, body_param, i, True),)  # type: ignore[arg-type]
                for i in idxs
            }
        )
        pc: VS = (
            {i: (self.new_value(cond, cond_param, i, True),) for i in idxs}
            if cond_param is not None
            else {}
        )
        self.analyse(body, [pb])
        self.analyse(cond, [pc])
        root = self.vs[(body.name, body.root.name)]
        out: VS = {}
        for i in idxs:
            a, r = list(init.get(i, ())), list(root.get(i, ()))
            if not identity:
                self.phi_inputs[pb[i][0]] = a + r
            if i in pc:
                self.phi_inputs[pc[i][0]] = a + r
            out[i] = self.phi(comp, ins, i, r + a)
        self.whiles.append((comp.name, ins.name, body.name, cond.name))
        return out

    def optimize_phis(self) -> dict[int, int]:
        """XLA's ``PhiGraph::Optimize``: a phi whose inputs (itself aside) are all one value
        becomes that value; a closure of phis reaching exactly one non-phi value becomes
        that value. Returns phi id -> the value it stands for."""
        repl: dict[int, int] = {}

        def res(x: int) -> int:
            while x in repl:
                x = repl[x]
            return x

        phis = list(self.phi_inputs)
        changed = True
        while changed:
            changed = False
            checked: set[int] = set()
            for p in phis:
                if p in repl:
                    continue
                ops = [res(x) for x in self.phi_inputs[p]]
                ops = [x for x in ops if x != p]
                self.phi_inputs[p] = ops
                if ops and all(x == ops[0] for x in ops):
                    repl[p] = ops[0]
                    changed = True
                    continue
                if p in checked:
                    continue
                work, seen, non_phi = [p], set(), None
                k = 0
                while k < len(work):
                    t = res(work[k])
                    k += 1
                    if t in seen:
                        continue
                    checked.add(t)
                    seen.add(t)
                    if t in self.phi_inputs and t not in repl:
                        work.extend(self.phi_inputs[t])
                    else:
                        if non_phi is not None and non_phi != t:
                            non_phi = None
                            break
                        non_phi = t
                if non_phi is not None:
                    for t in seen:
                        if t != non_phi and t in self.phi_inputs and t not in repl:
                            repl[t] = non_phi
                            changed = True
        return {p: res(p) for p in repl}


def _indices(ins: HloInstruction):
    return ins.shape.subshapes() if ins.shape is not None else [((), None)]


def _topo(comp: HloComputation) -> list[HloInstruction]:
    """Definition order for the dataflow pass (text order when it is topological)."""
    pos = {i.name: k for k, i in enumerate(comp.instructions)}
    if all(pos[o] < k for k, i in enumerate(comp.instructions) for o in i.operands):
        return comp.instructions
    out: list[HloInstruction] = []
    seen: set[str] = set()

    def visit(i: HloInstruction):
        stack = [(i, 0)]
        while stack:
            node, k = stack.pop()
            if node.name in seen:
                continue
            if k < len(node.operands):
                stack.append((node, k + 1))
                o = comp.index[node.operands[k]]
                if o.name not in seen:
                    stack.append((o, 0))
            else:
                seen.add(node.name)
                out.append(node)

    for i in comp.instructions:
        visit(i)
    return out


def xla_live_ranges(
    module: HloModule, computation_orders: Mapping[str, Sequence[str]] | None = None
) -> XlaLiveRanges:
    """HloLiveRange of the module's entry under the given orders (default: text order)."""
    orders = dict(computation_orders or {})
    a = _Analysis(module, orders)
    entry = module.entry
    a.analyse(entry, None)
    # phis that only ever see one value disappear; every value set names the survivor
    repl = a.optimize_phis()
    if repl:
        for key, vs in a.vs.items():
            a.vs[key] = {
                idx: tuple(dict.fromkeys(repl.get(x, x) for x in vals)) for idx, vals in vs.items()
            }
    dead = set(repl)
    for comp_name, wname, body_name, cond_name in a.whiles:
        wvs = a.vs.get((comp_name, wname), {})
        winst = module.by_name[comp_name].index[wname]
        init = a.vs.get((comp_name, winst.operands[0]), {}) if winst.operands else {}
        body = module.by_name[body_name]
        groups = [init, a.vs.get((body_name, body.root.name), {})]
        for c in (body, module.by_name[cond_name]):
            p0 = c.parameters().get(0)
            if p0 is not None:  # only values the parameter itself defines (its phis)
                groups.append(
                    {
                        i: tuple(
                            x
                            for x in v
                            if a.values[x].instruction == p0.name
                            and a.values[x].computation == c.name
                        )
                        for i, v in a.vs.get((c.name, p0.name), {}).items()
                    }
                )
        for idx, wv in wvs.items():
            for g in groups:
                for x in g.get(idx, ()):
                    for y in wv:
                        a.uf.union(x, y)

    # -- flatten the schedule ------------------------------------------------------------------
    sequence: list[tuple[str, str]] = []
    times: dict[tuple[str, str], int] = {}
    spans: dict[str, tuple[int, int]] = {}

    def comp_order(comp: HloComputation) -> list[HloInstruction]:
        names = orders.get(comp.name)
        if names is None:
            return comp.instructions
        got = [comp.index[n.lstrip("%")] for n in names]
        if len(got) != len(comp.instructions) or len(set(map(id, got))) != len(got):
            raise InputError(f"order for {comp.name!r} must list each instruction once")
        return got

    def flatten(comp: HloComputation) -> None:
        if comp.name in spans:
            return
        start = len(sequence)
        for ins in comp_order(comp):
            op = ins.opcode
            if op in ("call", "conditional"):
                for _, c in ins.called():
                    flatten(module.by_name[c])
            elif op == "async-start" and ins.wrapped_opcode is None and "calls" in ins.attrs:
                flatten(module.by_name[ins.attrs["calls"].strip().lstrip("%")])
            elif op == "while":
                flatten(module.by_name[ins.attrs["condition"].strip().lstrip("%")])
                flatten(module.by_name[ins.attrs["body"].strip().lstrip("%")])
            times[(comp.name, ins.name)] = len(sequence)
            sequence.append((comp.name, ins.name))
        spans[comp.name] = (start, len(sequence))

    flatten(entry)
    end_time = len(sequence)

    # -- positions and uses ----------------------------------------------------------------
    users: dict[tuple[str, str], list[tuple[HloInstruction, int]]] = {}
    for cname in spans:
        comp = module.by_name[cname]
        for ins in comp.instructions:
            for k, o in enumerate(ins.operands):
                users.setdefault((cname, o), []).append((ins, k))
    for (cname, iname), vs in a.vs.items():
        if cname not in spans:
            continue
        for idx, vals in vs.items():
            for v in vals:
                a.values[v].positions.append((cname, iname, idx))
    roots = {(c, module.by_name[c].root.name) for c in spans}

    def last_use(v: XlaValue) -> int:
        t = -1
        root_pos = {(c, i) for c, i, _ in v.positions if (c, i) in roots}
        for c, i, idx in v.positions:
            for user, _k in users.get((c, i), ()):
                if not (_may_use(idx, user) or (c, user.name) in root_pos):
                    continue
                key = (c, user.name)
                if (
                    user.opcode == "call"
                    and user.attrs.get("to_apply", "").strip().lstrip("%") in spans
                ):
                    continue
                if user.opcode == "while":
                    body = user.attrs.get("body", "").strip().lstrip("%")
                    if body in spans:
                        p0 = module.by_name[body].parameters().get(0)
                        if p0 is not None:
                            key = (body, p0.name)
                if key in times:
                    t = max(t, times[key])
        return t

    aliased = {(p, pi) for _, p, pi, _ in module.input_output_alias()}
    start: dict[int, int] = {}
    end: dict[int, int] = {}
    for v in a.values:
        key = (v.computation, v.instruction)
        if v.id in dead or key not in times or not v.positions:
            continue
        comp = module.by_name[v.computation]
        ins = comp.index[v.instruction]
        s = spans[comp.name][0] if ins.opcode == "parameter" else times[key]
        def_end = spans[comp.name][1] if ins is comp.root else times[key]
        ctx = a.async_context.get(comp.name)
        if ctx is not None:
            caller, start_name = ctx
            done = _async_done(module.by_name[caller], start_name)
            def_end = max(
                def_end,
                times.get((caller, done), spans[comp.name][1]) if done else spans[comp.name][1],
            )
            s = min(s, spans[caller][0])
        e = def_end
        for pos_comp, i, _ in v.positions:
            if (pos_comp, i) == key:
                continue
            pt = spans[pos_comp][1] if (pos_comp, i) in roots else times.get((pos_comp, i))
            if pt is not None and pt > e:
                e = pt
        if (
            ins.opcode == "parameter"
            and comp is module.entry
            and (ins.parameter_number, v.index) not in aliased
        ):
            e = end_time
        else:
            e = max(e, last_use(v))
        start[v.id], end[v.id] = s, e

    # -- buffers: aliased values share one; normalise their ranges --------------------------
    uf = a.uf
    root_vs = a.vs[(entry.name, entry.root.name)]
    params = entry.parameters()
    for out_idx, p, pi, _ in module.input_output_alias():
        if p in params:
            pv = a.vs[(entry.name, params[p].name)].get(pi, ())
            for x in pv:
                for y in root_vs.get(out_idx, ()):
                    uf.union(x, y)
    for cname in spans:
        comp = module.by_name[cname]
        for ins in comp.instructions:
            mine = a.vs.get((cname, ins.name), {})
            if ins.opcode == "conditional":
                for _, br in ins.called():
                    broot = a.vs.get((br, module.by_name[br].root.name), {})
                    for idx, vals in mine.items():
                        for x in broot.get(idx, ()):
                            for y in vals:
                                uf.union(x, y)
            for k, oi, out in inplace_pairs(module, ins):
                if k >= len(ins.operands):
                    continue
                for x in a.vs.get((cname, ins.operands[k]), {}).get(oi, ()):
                    for y in mine.get(out, ()):
                        uf.union(x, y)
            for vals in mine.values():
                for x in vals[1:]:
                    uf.union(vals[0], x)
    buffer_members: dict[int, list[int]] = {}
    for vid in start:
        buffer_members.setdefault(uf.find(vid), []).append(vid)
    for members in buffer_members.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda x: (start[x], end[x], x))
        for x, y in zip(members, members[1:]):
            end[y] = max(end[x], end[y])
            end[x] = min(end[x], start[y])
    names = [i for _, i in sequence]
    return XlaLiveRanges(
        end_time,
        names,
        [v for v in a.values if v.id in start],
        start,
        end,
        {vid: uf.find(vid) for vid in start},
        [c for c, _ in sequence],
    )


def _async_done(comp: HloComputation, start: str) -> str | None:
    """The done that ends the async chain beginning at ``start``."""
    cur = start
    for _ in range(64):
        nxt = [
            i
            for i in comp.instructions
            if i.operands[:1] == [cur] and i.opcode in ("async-update", "async-done")
        ]
        if not nxt:
            return None
        if nxt[0].opcode == "async-done":
            return nxt[0].name
        cur = nxt[0].name
    return None


def orders_from_sequence(module: HloModule, sequence: Sequence[str]) -> dict[str, list[str]]:
    """Each computation's order from XLA's flattened ``InstructionSequence`` of ``module``
    (a live-range dump's), for ``xla_live_ranges``.

    Newer XLA prints a get-tuple-element as an operand suffix (``%t#1``) instead of a line of
    its own, so the text does not say where XLA's schedule put it; the dump lists it under
    XLA's own name (``get-tuple-element.8``). The reader's get-tuple-element for ``t#1``
    takes such an unknown slot: the first one, in text order, whose tuple is already placed,
    from the computation of the slot's neighbours."""
    comp_of: dict[str, str] = {}
    pending: dict[str, list[HloInstruction]] = {}
    for comp in module.computations:
        for ins in comp.instructions:
            if ins.synthetic and ins.opcode == "get-tuple-element" and "#" in ins.name:
                pending.setdefault(comp.name, []).append(ins)
            else:
                comp_of[ins.name] = comp.name
    orders: dict[str, list[str]] = {c.name: [] for c in module.computations}
    placed: set[str] = set()
    known = [comp_of.get(n) for n in sequence]
    for k, name in enumerate(sequence):
        where = known[k]
        if where is not None:
            orders[where].append(name)
            placed.add(name)
            continue
        near: list[str] = [c for c in known[k - 1 :: -1] if c][:1] if k else []
        near += [c for c in known[k + 1 :] if c][:1]
        for c in dict.fromkeys(near + list(pending)):
            ready = [i for i in pending.get(c, ()) if i.operands[0] in placed]
            if ready:
                pending[c].remove(ready[0])
                orders[c].append(ready[0].name)
                placed.add(ready[0].name)
                break
        else:
            raise InputError(f"{name!r} of the sequence is not an instruction of the module")
    return {c: o for c, o in orders.items() if o}


# -- XLA's live-range dump ------------------------------------------------------------------


@dataclass
class XlaLiveRangeDump:
    schedule_end_time: int
    sequence: list[str]
    ranges: dict[str, tuple[int, int]]
    peak_step: int | None
    peak_values: list[tuple[str, int]]

    @property
    def peak_bytes(self) -> int:
        return sum(b for _, b in self.peak_values)


_RANGE_RE = re.compile(r"^\s+(\S+\{[\d,]*\}):(\d+)-(\d+)\s*$")
_SEQ_RE = re.compile(r"^\s+(\d+):(\S+)\s*$")
_PEAK_RE = re.compile(r"^\s+(\S+\{[\d,]*\}): (\d+) bytes \(cumulative: (\d+) bytes\)\s*$")


def parse_xla_live_range(text: str, path: str | None = None) -> XlaLiveRangeDump:
    """Read XLA's ``HloLiveRange::ToString`` text (``*-live-range.txt``)."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("HloLiveRange (max "):
        raise InputError(
            "not an XLA live-range dump (no 'HloLiveRange (max N):' line)",
            path=path,
            line=1,
            column=1,
        )
    max_time = re.search(r"\d+", lines[0])
    if max_time is None:
        raise InputError(
            "the 'HloLiveRange (max N):' line has no number", path=path, line=1, column=1
        )
    end_time = int(max_time.group())
    section = None
    seq: list[str] = []
    ranges: dict[str, tuple[int, int]] = {}
    peak_step = None
    peak: list[tuple[str, int]] = []
    for no, line in enumerate(lines[1:], start=2):
        s = line.strip()
        if s == "InstructionSequence:":
            section = "seq"
            continue
        if s == "BufferLiveRange:":
            section = "ranges"
            continue
        m = re.match(r"Live ranges at (\d+) \(peak\):", s)
        if m:
            section, peak_step = "peak", int(m.group(1))
            continue
        if s.startswith("Stack trace breakdown") or s.startswith("Peak memory could not"):
            section = None
            continue
        if section == "seq":
            m = _SEQ_RE.match(line)
            if not m or int(m.group(1)) != len(seq):
                raise InputError(f"bad instruction sequence line {s!r}", path=path, line=no)
            seq.append(m.group(2))
        elif section == "ranges":
            m = _RANGE_RE.match(line)
            if not m:
                raise InputError(f"bad live range line {s!r}", path=path, line=no)
            ranges[m.group(1)] = (int(m.group(2)), int(m.group(3)))
        elif section == "peak":
            m = _PEAK_RE.match(line)
            if m:
                peak.append((m.group(1), int(m.group(2))))
    return XlaLiveRangeDump(end_time, seq, ranges, peak_step, peak)


def read_xla_live_range(path: str) -> XlaLiveRangeDump:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return parse_xla_live_range(f.read(), path)
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", path=path) from None


__all__ = [
    "xla_live_ranges",
    "orders_from_sequence",
    "XlaLiveRanges",
    "XlaValue",
    "parse_xla_live_range",
    "read_xla_live_range",
    "XlaLiveRangeDump",
]
