"""Rematerialization / eviction plans: the event list, its independent replay checker, its
timing, the rewritten graph, and the run-time side of per-bucket plans.

A **remat plan** is an event list in program order. Each event is ``(kind, name)``:

- ``("compute", op)``: run ``op`` (the first time: the op itself; again: a clone that
  recreates its output buffers). Every buffer the op uses must be on the device;
- ``("free", buf)``: release the device copy of buffer ``buf``. After an ``evict`` this is
  also the point where the device->host copy must have finished;
- ``("evict", buf)``: start an asynchronous device->host copy of ``buf`` (on a copy
  stream); the device copy stays until the matching ``free``;
- ``("prefetch", buf)``: allocate ``buf`` on the device again and start the host->device
  copy; its next user waits for the copy to finish.

Buffers are named like the graph's buffers; for an op that defines one buffer (every
Checkmate/Moccasin node) that is the op's own name. Memory: bytes of device-resident
buffers, measured after each allocation (compute, prefetch), plus the running op's
transient bytes. With frees placed right after each buffer's last use (every plan cpsched
makes), this is exactly the simulator's rule for the rewritten graph (``plan_to_graph``).

**Compile-time / run-time split.** A ``Skeleton`` is one main op order plus a list of
candidate points shared by every shape bucket: ``Regen`` (clone op ``v`` just before main
step ``t``) and ``Evict`` (copy buffer ``b`` out before step ``out_step``, free its device
copy before ``free_step``, copy it back before ``in_step``). A plan table says which
candidates are active in which bucket; ``materialize`` turns a skeleton plus an active set
into the event list (what the compiled program does once its run-time guards have been
evaluated). ``pick_plan`` is that run-time choice for concrete dim values, verified by the
replay; ``plan_limits`` / ``breakpoints`` give the exact dim values at which a plan stops
fitting the budget (integer arithmetic on the size polynomials, no sampling).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from cpsched.analysis.validate import validate_schedule
from cpsched.core.errors import InputError, ScheduleError
from cpsched.core.graph import Graph, GraphBuilder, OpKind
from cpsched.core.plain import to_plain
from cpsched.core.scenarios import Scenarios, pick_bucket, static
from cpsched.core.symbolic import SymExpr
from cpsched.cost.model import UNIT_FILE, _unit, load_device, op_times

COMPUTE, FREE, EVICT, PREFETCH = 0, 1, 2, 3
KIND_NAMES = ("compute", "free", "evict", "prefetch")
_KIND_CODE = {k: i for i, k in enumerate(KIND_NAMES)}

Event = tuple[int, int]   # (kind code, op index for compute / buffer index otherwise)

# Ops that must run exactly once (side effects, communication, host interaction).
_NEVER_CLONE = frozenset({
    "rng", "rng-bit-generator", "rng-get-and-update-state", "custom-call", "infeed",
    "outfeed", "send", "send-done", "recv", "recv-done", "all-reduce", "all-gather",
    "reduce-scatter", "all-to-all", "collective-permute", "collective-broadcast",
    "all-reduce-start", "all-reduce-done", "all-gather-start", "all-gather-done",
    "collective-permute-start", "collective-permute-done", "copy-start", "copy-done",
    "parameter", "constant", "while", "conditional", "call", "after-all", "partition-id",
    "replica-id", "optimization-barrier", "opt-barrier", "async-start", "async-update",
    "async-done",
})


# -- policy: what may be cloned or evicted ---------------------------------------------------

def inplace_writers(graph: Graph) -> list[list[int]]:
    """Per buffer, the ops that overwrite it in place (use it and define no buffer)."""
    out: list[list[int]] = [[] for _ in range(graph.n_buffers)]
    n_defs = np.diff(graph.defs_ptr)
    for i in range(graph.n_ops):
        k = int(graph.kinds[i])
        if k in (OpKind.COMPUTE, OpKind.CONTROL_FLOW) and n_defs[i] == 0:
            for b in graph.uses(i):
                out[int(b)].append(i)
    return out


def recomputable_ops(graph: Graph) -> np.ndarray:
    """``[n_ops]`` bool: ops that may be cloned. Never collectives or any part of an async
    pair, parameters, constants, control flow, side-effecting ops, ops without a device
    output, ops whose outputs are program inputs/outputs or are overwritten in place."""
    n = graph.n_ops
    ok = np.zeros(n, dtype=bool)
    writers = inplace_writers(graph)
    for i in range(n):
        if int(graph.kinds[i]) != OpKind.COMPUTE or i in graph.collectives:
            continue
        if graph.async_start[i] >= 0 or graph.async_done[i] >= 0:
            continue
        if graph.opcodes[i] in _NEVER_CLONE or graph.opcodes[i].endswith(("-start", "-done")):
            continue
        defs = graph.defines(i)
        if defs.size == 0:
            continue
        if any(graph.buffer_live_in[b] or graph.buffer_live_out[b] or graph.buffer_space[b]
               or writers[b] for b in defs):
            continue
        ok[i] = True
    return ok


def evictable_buffers(graph: Graph) -> np.ndarray:
    """``[n_buffers]`` bool: device buffers that may be copied to the host and back: not
    program inputs/outputs, not collective or async results, never overwritten in place."""
    ok = (graph.buffer_space == 0) & ~graph.buffer_live_in & ~graph.buffer_live_out
    writers = inplace_writers(graph)
    for b in np.flatnonzero(ok):
        d = int(graph.buffer_def[b])
        if writers[b] or d in graph.collectives or graph.async_start[d] >= 0 \
                or graph.async_done[d] >= 0 or int(graph.kinds[d]) != OpKind.COMPUTE:
            ok[b] = False
    return ok


# -- names -----------------------------------------------------------------------------------

def events_to_names(graph: Graph, events: Sequence[Event]) -> list[list[str]]:
    return [[KIND_NAMES[k], graph.op_names[x] if k == COMPUTE else graph.buffer_names[x]]
            for k, x in events]


def events_from_names(graph: Graph, steps: Iterable[Sequence[str]]) -> list[Event]:
    bindex = {name: j for j, name in enumerate(graph.buffer_names)}
    out: list[Event] = []
    for k, step in enumerate(steps):
        if len(step) != 2 or step[0] not in _KIND_CODE:
            raise InputError(f"remat step #{k + 1}: expected [compute|free|evict|prefetch, name]")
        code = _KIND_CODE[step[0]]
        name = str(step[1])
        if code == COMPUTE:
            try:
                out.append((code, graph.op_index(name)))
            except KeyError:
                raise InputError(f"remat step #{k + 1} names unknown op {name!r}") from None
        else:
            if name not in bindex:
                # an op that defines exactly one buffer may stand for it
                i = graph._index.get(name)
                defs = graph.defines(i) if i is not None else ()
                if len(defs) != 1:
                    raise InputError(f"remat step #{k + 1} names unknown buffer {name!r}")
                out.append((code, int(defs[0])))
            else:
                out.append((code, bindex[name]))
    return out


# -- replay: the independent checker ---------------------------------------------------------

@dataclass(frozen=True)
class Replay:
    peak: np.ndarray               # [S] bytes
    peak_event: np.ndarray         # [S] index of the event where the peak is first reached
    errors: tuple[str, ...]
    n_computes: int
    n_recomputes: int
    n_evictions: int
    eager_frees: bool              # every free comes right after the buffer's last use

    @property
    def ok(self) -> bool:
        return not self.errors


def replay(graph: Graph, events: Sequence[Event], scenarios: Scenarios | None = None,
           budget: Sequence[int] | int | None = None, max_errors: int = 20) -> Replay:
    """Re-execute ``events`` from scratch and check them: every input resident at each
    compute, no buffer computed while already resident, frees/evictions/prefetches of the
    right residency, clones only of clonable ops (and never from an input already
    overwritten in place), every op computed at least once, program outputs resident at the
    end, and resident bytes (+ transient) <= budget per scenario. Sizes come from the graph.
    Shares no code with the planners."""
    sc = scenarios or static()
    n_s = len(sc)
    sizes = graph.sizes(sc) if graph.n_buffers else np.zeros((n_s, 0), dtype=np.int64)
    trans = graph.transient_bytes(sc)
    bud = None if budget is None else _budget_array(budget, n_s)
    clonable = recomputable_ops(graph)
    n_defs = np.diff(graph.defs_ptr)
    nb = graph.n_buffers
    resident = graph.buffer_live_in.copy()
    host = np.zeros(nb, dtype=bool)
    in_flight_out = np.zeros(nb, dtype=bool)   # evicted, device copy not yet freed
    overwritten = np.zeros(nb, dtype=bool)
    computed = np.zeros(graph.n_ops, dtype=np.int64)
    usage = sizes[:, resident].sum(axis=1).astype(np.int64)
    peak = usage.copy()
    peak_event = np.full(n_s, -1, dtype=np.int64)
    errors: list[str] = []
    last_touch_ok = True
    # eager-free check: for each resident copy remember the index of its last touch
    last_touch = np.full(nb, -1, dtype=np.int64)
    n_re = n_ev = 0

    def err(msg: str) -> None:
        if len(errors) < max_errors:
            errors.append(msg)

    def measure(k: int, extra: np.ndarray | int = 0) -> None:
        nonlocal peak
        cur = usage + extra
        higher = cur > peak
        peak_event[higher] = k
        peak = np.maximum(peak, cur)

    for k, ev in enumerate(events):
        code, x = int(ev[0]), int(ev[1])
        if code == COMPUTE:
            if not 0 <= x < graph.n_ops:
                err(f"event {k}: op index {x} out of range")
                continue
            name = graph.op_names[x]
            computed[x] += 1
            again = computed[x] > 1
            if again:
                n_re += 1
                if not clonable[x]:
                    err(f"event {k}: {name!r} is computed again but may not be cloned")
            for b in graph.uses(x):
                b = int(b)
                if not resident[b]:
                    err(f"event {k}: {name!r} needs {graph.buffer_names[b]!r}, "
                        "which is not on the device")
                if again and overwritten[b]:
                    err(f"event {k}: clone of {name!r} reads {graph.buffer_names[b]!r} after "
                        "it was overwritten in place")
                last_touch[b] = k
            for b in graph.defines(x):
                b = int(b)
                if graph.buffer_live_in[b] and not again:
                    last_touch[b] = k
                    continue
                if resident[b]:
                    err(f"event {k}: {name!r} defines {graph.buffer_names[b]!r}, which is "
                        "already on the device")
                    continue
                resident[b] = True
                usage += sizes[:, b]
                last_touch[b] = k
            measure(k, trans[:, x])
            if n_defs[x] == 0 and int(graph.kinds[x]) in (OpKind.COMPUTE, OpKind.CONTROL_FLOW):
                overwritten[graph.uses(x)] = True
        elif code in (FREE, EVICT, PREFETCH):
            if not 0 <= x < nb:
                err(f"event {k}: buffer index {x} out of range")
                continue
            bname = graph.buffer_names[x]
            if code == FREE:
                if not resident[x]:
                    err(f"event {k}: frees {bname!r}, which is not on the device")
                    continue
                if not in_flight_out[x] and last_touch[x] != k - 1 and \
                        not _only_frees_between(events, last_touch[x], k):
                    last_touch_ok = False
                resident[x] = False
                in_flight_out[x] = False
                usage -= sizes[:, x]
            elif code == EVICT:
                n_ev += 1
                if not resident[x]:
                    err(f"event {k}: evicts {bname!r}, which is not on the device")
                    continue
                if host[x]:
                    err(f"event {k}: evicts {bname!r}, which already has a host copy")
                if graph.buffer_live_in[x] or graph.buffer_live_out[x]:
                    err(f"event {k}: evicts program input/output {bname!r}")
                host[x] = True
                in_flight_out[x] = True
            else:
                if not host[x]:
                    err(f"event {k}: prefetches {bname!r}, which has no host copy")
                    continue
                if resident[x]:
                    err(f"event {k}: prefetches {bname!r}, which is already on the device")
                    continue
                resident[x] = True
                usage += sizes[:, x]
                last_touch[x] = k
                measure(k)
        else:
            err(f"event {k}: unknown kind {code}")
    missing = np.flatnonzero(computed == 0)
    if missing.size:
        err(f"op {graph.op_names[int(missing[0])]!r} is never computed"
            + (f" (and {missing.size - 1} more)" if missing.size > 1 else ""))
    lost = np.flatnonzero(graph.buffer_live_out & ~resident)
    if lost.size:
        err(f"program output {graph.buffer_names[int(lost[0])]!r} is not on the device at the end")
    if bud is not None:
        for s in range(n_s):
            if peak[s] > bud[s]:
                err(f"scenario {sc.names[s]}: peak {int(peak[s])} B exceeds the budget "
                    f"{int(bud[s])} B at event {int(peak_event[s])}")
    return Replay(peak, peak_event, tuple(errors), int((computed > 0).sum()) + n_re, n_re,
                  n_ev, last_touch_ok)


def _only_frees_between(events: Sequence[Event], a: int, b: int) -> bool:
    return all(int(events[j][0]) == FREE for j in range(a + 1, b))


def check_plan(graph: Graph, events: Sequence[Event], scenarios: Scenarios | None = None,
               budget: Sequence[int] | int | None = None, what: str = "remat plan") -> Replay:
    """``replay`` and raise ``ScheduleError`` on the first problem."""
    r = replay(graph, events, scenarios, budget)
    if r.errors:
        raise ScheduleError(f"{what} of {graph.name}: {r.errors[0]}"
                            + (f" (+{len(r.errors) - 1} more)" if len(r.errors) > 1 else ""))
    return r


def _budget_array(budget, n_s: int) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(budget, dtype=np.int64))
    if arr.size == 1:
        return np.full(n_s, int(arr[0]), dtype=np.int64)
    if arr.size != n_s:
        raise InputError(f"{arr.size} budgets for {n_s} scenarios")
    return arr


# -- time ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TransferModel:
    """Host<->device copies: ``latency + bytes / bandwidth`` time units each. ``bandwidth``
    is bytes per time unit of the op durations; ``streams`` 2 = separate device->host and
    host->device copy engines (PCIe is full duplex), 1 = one shared copy stream."""

    bandwidth: float
    latency: float = 0.0
    streams: int = 2

    def times(self, nbytes: np.ndarray) -> np.ndarray:
        return self.latency + np.asarray(nbytes, dtype=np.float64) / float(self.bandwidth)


def transfer_from_device(device: Any = "h100", unit_seconds: float = 1.0,
                         streams: int = 2) -> TransferModel:
    """PCIe copies of a cost-model device, in time units of ``unit_seconds`` seconds."""
    d = load_device(device)
    return TransferModel(d.pcie_bandwidth * unit_seconds, d.pcie_latency / unit_seconds, streams)


def host_link(graph: Graph, device: Any = "h100", bandwidth: float | None = None,
              latency: float = 0.0) -> TransferModel:
    """The host link an eviction plan is timed with: ``bandwidth`` bytes per time unit of the
    op times when given, else the PCIe figures of the cost-model ``device`` (which needs op
    times in seconds-based units, not the file's own)."""
    if bandwidth is not None:
        if not float(bandwidth) > 0:
            raise InputError(f"--bandwidth {bandwidth}: expected a positive number of bytes per "
                             "time unit")
        return TransferModel(float(bandwidth), float(latency))
    d = load_device(device)
    if _unit(graph, d) == UNIT_FILE:
        raise InputError("eviction on a graph with op times in the file's own units needs "
                         "--bandwidth (bytes per time unit)")
    return transfer_from_device(d, d.seconds_per_unit)


def op_durations(graph: Graph, scenarios: Scenarios | None = None, device: Any = "h100"
                 ) -> np.ndarray:
    """``[S, n_ops]`` compute times: ``cpsched.cost.model.op_times`` (file ``duration``s as
    they are, else the device roofline)."""
    return np.asarray(op_times(graph, device, scenarios or static()), dtype=np.float64)


@dataclass(frozen=True)
class PlanTime:
    makespan: np.ndarray          # [S]
    base: np.ndarray              # [S] every op once, back to back
    recompute: np.ndarray         # [S] time of the clones
    exposed_transfer: np.ndarray  # [S] compute-stream waits for copies

    @property
    def added(self) -> np.ndarray:
        d = self.makespan - self.base
        return np.where(np.abs(d) <= 1e-9 * np.maximum(self.base, 1e-300), 0.0, d)

    @property
    def added_pct(self) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.base > 0, 100.0 * self.added / np.maximum(self.base, 1e-300), 0.0)


def plan_time(graph: Graph, events: Sequence[Event], durations: np.ndarray,
              transfer: TransferModel | None = None, scenarios: Scenarios | None = None
              ) -> PlanTime:
    """Run the events on one compute stream and the copy stream(s): computes back to back;
    an ``evict`` starts its copy when the compute stream reaches it (and the copy stream is
    free); a ``free`` after an ``evict`` waits for that copy; a ``prefetch`` starts when
    reached (after the buffer's copy-out), and the next op that reads the buffer waits for it.
    """
    sc = scenarios or static()
    dur = np.atleast_2d(np.asarray(durations, dtype=np.float64))
    n_s = dur.shape[0]
    if any(int(k) in (EVICT, PREFETCH) for k, _ in events):
        if transfer is None:
            raise InputError("a plan with evictions needs a transfer model (bandwidth)")
        tt = transfer.times(graph.sizes(sc)) if graph.n_buffers else np.zeros((n_s, 0))
    else:
        tt = None
    base = dur.sum(axis=1)
    makespan = np.zeros(n_s)
    recompute = np.zeros(n_s)
    busy = np.zeros(n_s)
    for s in range(n_s):
        t = 0.0
        d2h_free = h2d_free = 0.0
        out_done: dict[int, float] = {}
        in_done: dict[int, float] = {}
        seen = np.zeros(graph.n_ops, dtype=bool)
        rec = 0.0
        for code, x in events:
            code, x = int(code), int(x)
            if code == COMPUTE:
                for b in graph.uses(x):
                    r = in_done.pop(int(b), None)
                    if r is not None and r > t:
                        t = r
                t += dur[s, x]
                if seen[x]:
                    rec += dur[s, x]
                seen[x] = True
            elif code == EVICT:
                start = max(t, d2h_free)
                done = start + tt[s, x]
                if transfer.streams == 1:
                    h2d_free = d2h_free = done
                else:
                    d2h_free = done
                out_done[x] = done
            elif code == FREE:
                r = out_done.pop(x, None)
                if r is not None and r > t:
                    t = r
                in_done.pop(x, None)
            elif code == PREFETCH:
                start = max(t, h2d_free, out_done.get(x, 0.0))
                done = start + tt[s, x]
                if transfer.streams == 1:
                    h2d_free = d2h_free = done
                else:
                    h2d_free = done
                in_done[x] = done
        makespan[s] = t
        recompute[s] = rec
        busy[s] = base[s] + rec
    exposed = np.maximum(makespan - busy, 0.0)
    return PlanTime(makespan, base, recompute, exposed)


# -- the rewritten graph ---------------------------------------------------------------------

def plan_to_graph(graph: Graph, events: Sequence[Event], name: str | None = None
                  ) -> tuple[Graph, list[int]]:
    """The plan as a new graph and its order: clones become ops ``op.remat1``, ``.remat2``
    ...; an eviction becomes ``buf.evict1.start`` (copy-start, defines a host buffer in
    memory space 5) and ``buf.evict1.done`` (copy-done, the last device reader of the
    buffer) at its ``free``; a prefetch becomes ``buf.prefetch1.start`` (copy-start, defines
    the new device copy) and ``buf.prefetch1.done`` right before the first op that reads
    it. With eager frees the simulator's peak of the returned order equals the replay's."""
    gb = GraphBuilder(name or f"{graph.name}.remat")
    gb.meta.update(dict(graph.meta))
    gb.meta["remat_of"] = graph.name
    n_clone: dict[int, int] = defaultdict(int)
    n_ev: dict[int, int] = defaultdict(int)
    n_pf: dict[int, int] = defaultdict(int)
    first_inst: dict[int, int] = {}      # original op -> new op of its first compute
    cur: dict[int, int] = {}             # original buffer -> new buffer of its device copy
    bdef: dict[int, int] = {}            # new buffer -> new defining op
    host_buf: dict[int, int] = {}        # original buffer -> new host buffer
    evict_start: dict[int, tuple[int, str]] = {}
    pending_in: dict[int, tuple[int, int, str]] = {}
    order: list[int] = []

    def add(name_, opcode, kind, **kw) -> int:
        i = gb.add_op(name_, opcode, kind, **kw)
        order.append(i)
        return i

    def new_buf(op, size, name_, **kw) -> int:
        j = gb.add_buffer(op, size, name=name_, **kw)
        bdef[j] = op
        return j

    for code, x in events:
        code, x = int(code), int(x)
        if code == COMPUTE:
            for b in graph.uses(x):
                b = int(b)
                if b in pending_in:
                    s_op, nbuf, dname = pending_in.pop(b)
                    d = add(dname, "copy-done", OpKind.ASYNC_DONE, operands=[s_op])
                    gb.pair_async(s_op, d)
                    gb.add_buffer_user(nbuf, d)
            again = x in first_inst
            operand_ops = [bdef[cur[int(b)]] for b in graph.uses(x) if int(b) in cur]
            attrs = dict(graph.attrs(x))
            if again:
                n_clone[x] += 1
                nm = f"{graph.op_names[x]}.remat{n_clone[x]}"
                ctrl: list[int] = []
                attrs["remat_of"] = graph.op_names[x]
            else:
                nm = graph.op_names[x]
                ctrl = [first_inst[int(c)] for c in graph.control_preds(x) if int(c) in first_inst]
                operand_ops += [first_inst[int(o)] for o in graph.operands(x)
                                if int(o) in first_inst]
            i = add(nm, graph.opcodes[x], OpKind(int(graph.kinds[x])), operands=operand_ops,
                    control_preds=ctrl, flops=graph.flops[x],
                    bytes_accessed=graph.bytes_accessed[x], transient=graph.transient[x],
                    attrs=attrs)
            if not again and x in graph.collectives:
                gb.set_collective(i, graph.collectives[x])
            for b in graph.uses(x):
                if int(b) in cur:
                    gb.add_buffer_user(cur[int(b)], i)
            if not again:
                first_inst[x] = i
            for b in graph.defines(x):
                b = int(b)
                live_in = bool(graph.buffer_live_in[b]) and not again
                suffix = f".remat{n_clone[x]}" if again else ""
                cur[b] = new_buf(i, graph.buffer_sizes[b], graph.buffer_names[b] + suffix,
                                 live_in=live_in, space=int(graph.buffer_space[b]))
        elif code == EVICT:
            n_ev[x] += 1
            base = f"{graph.buffer_names[x]}.evict{n_ev[x]}"
            s_op = add(base + ".start", "copy-start", OpKind.ASYNC_START,
                       operands=[bdef[cur[x]]])
            gb.add_buffer_user(cur[x], s_op)
            host_buf[x] = new_buf(s_op, graph.buffer_sizes[x], base + ".host", space=5)
            evict_start[x] = (s_op, base)
        elif code == FREE:
            if x in evict_start:
                s_op, base = evict_start.pop(x)
                d = add(base + ".done", "copy-done", OpKind.ASYNC_DONE, operands=[s_op])
                gb.pair_async(s_op, d)
                gb.add_buffer_user(cur[x], d)
                gb.add_buffer_user(host_buf[x], d)
            if x in pending_in:      # prefetched and dropped unread: finish the copy first
                s_op, nbuf, dname = pending_in.pop(x)
                d = add(dname, "copy-done", OpKind.ASYNC_DONE, operands=[s_op])
                gb.pair_async(s_op, d)
                gb.add_buffer_user(nbuf, d)
            cur.pop(x, None)
        elif code == PREFETCH:
            n_pf[x] += 1
            base = f"{graph.buffer_names[x]}.prefetch{n_pf[x]}"
            h = host_buf[x]
            s_op = add(base + ".start", "copy-start", OpKind.ASYNC_START, operands=[bdef[h]])
            gb.add_buffer_user(h, s_op)
            cur[x] = new_buf(s_op, graph.buffer_sizes[x], base)
            pending_in[x] = (s_op, cur[x], base + ".done")
    for b, (s_op, nbuf, dname) in list(pending_in.items()):
        d = add(dname, "copy-done", OpKind.ASYNC_DONE, operands=[s_op])
        gb.pair_async(s_op, d)
        gb.add_buffer_user(nbuf, d)
    for b in np.flatnonzero(graph.buffer_live_out):
        if int(b) in cur:
            gb.set_live_out(cur[int(b)])
    gb.original_order = order
    return gb.build(), order


# -- compile-time skeleton and run-time materialization ----------------------------------------

@dataclass(frozen=True)
class Regen:
    """Candidate: clone ``op`` just before main step ``step`` (``sub`` orders clones that
    share a step); from there on the clone's buffers serve the op's later readers."""

    op: int
    step: int
    sub: int = 0

    kind = "regenerate"


@dataclass(frozen=True)
class Evict:
    """Candidate: copy buffer ``buffer`` to the host before main step ``out_step``, drop its
    device copy before ``free_step`` (the copy must be done), and copy it back before
    ``in_step``, ahead of its next reader."""

    buffer: int
    out_step: int
    free_step: int
    in_step: int
    rank: int = 0          # order of prefetches issued before the same step (copy-stream FIFO)

    kind = "evict"


Candidate = Regen | Evict


@dataclass(frozen=True)
class Skeleton:
    """One main op order and the candidate points shared by every bucket."""

    order: tuple[int, ...]
    candidates: tuple[Candidate, ...] = ()

    def describe(self, graph: Graph, cid: int) -> dict[str, Any]:
        c = self.candidates[cid]
        step_name = lambda t: graph.op_names[self.order[t]] if t < len(self.order) else "<end>"
        if isinstance(c, Regen):
            return {"id": cid, "kind": "regenerate", "op": graph.op_names[c.op],
                    "before": step_name(c.step), "step": c.step, "sub": c.sub}
        return {"id": cid, "kind": "evict", "buffer": graph.buffer_names[c.buffer],
                "evict_before": step_name(c.out_step), "free_before": step_name(c.free_step),
                "prefetch_before": step_name(c.in_step),
                "steps": [c.out_step, c.free_step, c.in_step]}


class PlanError(ScheduleError):
    """An active candidate set that does not give a valid program."""


def materialize(graph: Graph, skeleton: Skeleton, active: Iterable[int] | None = None,
                prune: bool = True) -> list[Event]:
    """The event list of ``skeleton`` with the candidates ``active`` (default: all).

    Every reader is served by the most recent copy of the buffer (the original, a clone, or
    the prefetched copy); each copy is freed right after its last reader. Active candidates
    that serve nobody (a clone no one reads, an eviction of a buffer not read again) are
    dropped when ``prune``. Raises ``PlanError`` if some reader finds its buffer gone.
    """
    return materialize_tagged(graph, skeleton, active, prune)[0]


def materialize_tagged(graph: Graph, skeleton: Skeleton, active: Iterable[int] | None = None,
                       prune: bool = True) -> tuple[list[Event], list[int], set[int]]:
    """``materialize`` plus, per event, its origin: a candidate id, ``-1`` for a main-order
    compute, ``-2`` for an eager free; and the set of active candidates that were kept."""
    act = set(range(len(skeleton.candidates))) if active is None else set(int(a) for a in active)
    while True:
        events, tags, useless = _materialize_once(graph, skeleton, act)
        if not prune or not useless:
            return events, tags, act
        act -= useless


def _materialize_once(graph: Graph, sk: Skeleton, act: set[int]):
    order = sk.order
    n = len(order)
    regens: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    outs: dict[int, list[tuple[int, int]]] = defaultdict(list)
    frees: dict[int, list[tuple[int, int]]] = defaultdict(list)
    ins: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for cid in sorted(act):
        c = sk.candidates[cid]
        if isinstance(c, Regen):
            regens[c.step].append((c.sub, c.op, cid))
        else:
            outs[c.out_step].append((c.buffer, cid))
            frees[c.free_step].append((c.buffer, cid))
            ins[c.in_step].append((c.rank, c.buffer, cid))
    # sequence items: (code, x, cid) with code COMPUTE / EVICT / FREE(after evict) / PREFETCH
    seq: list[tuple[int, int, int]] = []
    for t in range(n + 1):
        for b, cid in outs.get(t, ()):
            seq.append((EVICT, b, cid))
        for b, cid in frees.get(t, ()):
            seq.append((FREE, b, cid))
        for _, b, cid in sorted(ins.get(t, ())):
            seq.append((PREFETCH, b, cid))
        if t == n:
            break
        for _, v, cid in sorted(regens.get(t, ())):
            seq.append((COMPUTE, v, cid))
        seq.append((COMPUTE, order[t], -1))
    # copy instances
    inst_buf: list[int] = []
    inst_cid: list[int] = []
    inst_last: list[int] = []        # position of last touch
    inst_uses: list[int] = []        # number of served readers
    inst_free_at: list[int] = []     # forced free position (eviction) or -1
    cur: dict[int, int] = {}

    def new_inst(b: int, pos: int, cid: int) -> int:
        inst_buf.append(b)
        inst_cid.append(cid)
        inst_last.append(pos)
        inst_uses.append(0)
        inst_free_at.append(-1)
        cur[b] = len(inst_buf) - 1
        return cur[b]

    for b in np.flatnonzero(graph.buffer_live_in):
        new_inst(int(b), -1, -1)
    computed = np.zeros(graph.n_ops, dtype=bool)
    evicted_inst: dict[int, int] = {}
    host_copy: set[int] = set()
    prefetch_inst: dict[int, int] = {}     # cid -> instance
    for pos, (code, x, cid) in enumerate(seq):
        if code == COMPUTE:
            for b in graph.uses(x):
                b = int(b)
                i = cur.get(b)
                if i is None:
                    raise PlanError(f"{graph.op_names[x]!r} at item {pos} needs "
                                    f"{graph.buffer_names[b]!r}, which is not on the device")
                inst_last[i] = pos
                inst_uses[i] += 1
            first = not computed[x]
            computed[x] = True
            for b in graph.defines(x):
                b = int(b)
                if b in evicted_inst:
                    raise PlanError(f"clone of {graph.op_names[x]!r} at item {pos} while the "
                                    f"evicted copy of {graph.buffer_names[b]!r} is still on the device")
                if first and graph.buffer_live_in[b]:
                    inst_last[cur[b]] = max(inst_last[cur[b]], pos)
                    continue
                new_inst(b, pos, cid)
        elif code == EVICT:
            i = cur.pop(x, None)
            if i is None:
                raise PlanError(f"eviction of {graph.buffer_names[x]!r} at item {pos}: "
                                "not on the device")
            evicted_inst[x] = i
            host_copy.add(x)
        elif code == FREE:
            i = evicted_inst.pop(x, None)
            if i is None:
                raise PlanError(f"free of {graph.buffer_names[x]!r} at item {pos} without eviction")
            inst_free_at[i] = pos
        else:
            if x in evicted_inst or x not in host_copy:
                raise PlanError(f"prefetch of {graph.buffer_names[x]!r} at item {pos} before its "
                                "copy-out is done")
            prefetch_inst[cid] = new_inst(x, pos, cid)
    useless: set[int] = set()
    for i, cid in enumerate(inst_cid):
        if cid >= 0 and inst_uses[i] == 0 and not (graph.buffer_live_out[inst_buf[i]]
                                                   and cur.get(inst_buf[i]) == i):
            c = sk.candidates[cid]
            if isinstance(c, Regen):
                # a clone none of whose buffers is read
                if all(inst_uses[j] == 0 for j in range(len(inst_cid)) if inst_cid[j] == cid):
                    useless.add(cid)
            else:
                useless.add(cid)
    # free positions
    free_after: dict[int, list[int]] = defaultdict(list)
    for i, b in enumerate(inst_buf):
        if inst_free_at[i] >= 0:
            continue
        if graph.buffer_live_out[b] and cur.get(b) == i:
            continue
        free_after[inst_last[i]].append(b)
    events: list[Event] = []
    tags: list[int] = []
    for b in sorted(free_after.get(-1, ())):
        events.append((FREE, b))
        tags.append(-2)
    for pos, (code, x, cid) in enumerate(seq):
        events.append((code, x))
        tags.append(cid)
        for b in sorted(free_after.get(pos, ())):
            events.append((FREE, b))
            tags.append(-2)
    return events, tags, useless


# -- the result object shared by the CP model and the baselines ------------------------------

@dataclass
class RematResult:
    """A remat/eviction plan per scenario, checked by ``replay`` before it is returned."""

    graph: Graph
    scenarios: Scenarios
    budget: np.ndarray                      # [S] bytes (the cap the plan was made for)
    skeleton: Skeleton
    active: tuple[tuple[int, ...], ...]     # per scenario: active candidate ids
    events: tuple[tuple[Event, ...], ...]   # per scenario
    peak: np.ndarray                        # [S] replayed bytes
    time: PlanTime
    method: str
    status: str
    seconds: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)
    transfer: TransferModel | None = None

    @property
    def added_time(self) -> np.ndarray:
        return self.time.added

    @property
    def added_time_pct(self) -> np.ndarray:
        return self.time.added_pct

    @property
    def weighted_added(self) -> float:
        return float(np.dot(self.scenarios.weights, self.time.added))

    def steps(self, s: int = 0) -> list[list[str]]:
        return events_to_names(self.graph, self.events[s])

    def plan_table(self) -> dict[str, list[int]]:
        return {n: list(a) for n, a in zip(self.scenarios.names, self.active)}


def finish_result(graph: Graph, scenarios: Scenarios, budget, skeleton: Skeleton,
                  active: Sequence[Iterable[int]], method: str, status: str, seconds: float,
                  durations: np.ndarray, transfer: TransferModel | None,
                  info: Mapping[str, Any] | None = None, check_budget: bool = True) -> RematResult:
    """Materialize each scenario's plan, replay it (raises on any error), time it."""
    n_s = len(scenarios)
    bud = _budget_array(budget, n_s) if budget is not None else None
    evs, acts, peaks, times = [], [], [], []
    for s in range(n_s):
        a = tuple(sorted(int(c) for c in active[s]))
        ev = materialize(graph, skeleton, a)
        one = scenarios.only(s)
        r = check_plan(graph, ev, one, bud[s] if (bud is not None and check_budget) else None,
                       what=f"{method} plan for {scenarios.names[s]}")
        evs.append(tuple(ev))
        acts.append(a)
        peaks.append(int(r.peak[0]))
        times.append(plan_time(graph, ev, durations[s:s + 1], transfer, one))
    t = PlanTime(*(np.concatenate([getattr(x, f) for x in times])
                   for f in ("makespan", "base", "recompute", "exposed_transfer")))
    return RematResult(graph, scenarios, bud if bud is not None else np.asarray(peaks),
                       skeleton, tuple(acts), tuple(evs), np.asarray(peaks, dtype=np.int64), t,
                       method, status, seconds, dict(info or {}), transfer)


def remat_result_to_dict(result: RematResult) -> dict[str, Any]:
    """The schedule JSON of a remat plan (``"format": "cpsched-remat"``): ``steps`` (the event
    list; a dict by scenario when there are several), ``peak_bytes`` and ``added_time_pct``
    (TDI: added time / sum of op times x 100) by scenario, ``status``, and the compile-time
    part (``order``, ``candidates``, ``plan_table``, ``breakpoints`` when known)."""
    g, sc = result.graph, result.scenarios
    steps_all = {n: result.steps(s) for s, n in enumerate(sc.names)}
    out: dict[str, Any] = {
        "format": "cpsched-remat", "version": 1,
        "graph": g.name, "method": result.method, "status": result.status,
        "steps": steps_all[sc.names[0]] if len(sc) == 1 else steps_all,
        "peak_bytes": {n: int(p) for n, p in zip(sc.names, result.peak)},
        "budget_bytes": {n: int(b) for n, b in zip(sc.names, result.budget)},
        "added_time_pct": {n: round(float(v), 6) for n, v in zip(sc.names, result.added_time_pct)},
        "added_time": {n: float(v) for n, v in zip(sc.names, result.added_time)},
        "recompute_time": {n: float(v) for n, v in zip(sc.names, result.time.recompute)},
        "exposed_transfer_time": {n: float(v) for n, v in
                                  zip(sc.names, result.time.exposed_transfer)},
        "solve_seconds": round(float(result.seconds), 3),
        "order": [g.op_names[i] for i in result.skeleton.order],
        "candidates": [result.skeleton.describe(g, c)
                       for c in range(len(result.skeleton.candidates))],
        "plan_table": {n: list(a) for n, a in zip(sc.names, result.active)},
    }
    if sc.dims:
        out["scenarios"] = sc.to_json()
    for k, v in result.info.items():
        if k not in out:
            out[k] = to_plain(v)
    return out


# -- run time: exact plan limits, breakpoints, the picker ------------------------------------

def _univariate(expr: SymExpr, dim: str, fixed: Mapping[str, int]) -> tuple[int, ...]:
    """Coefficients (constant first) of ``expr`` in ``dim`` with the other dims fixed."""
    coefs: dict[int, int] = {}
    for mono, coef in expr.terms:
        deg = 0
        c = int(coef)
        for d, p in mono:
            if d == dim:
                deg = p
            else:
                if d not in fixed:
                    raise InputError(f"size {expr} needs a value for dim {d!r}")
                c *= int(fixed[d]) ** p
        coefs[deg] = coefs.get(deg, 0) + c
    top = max(coefs, default=0)
    return tuple(coefs.get(k, 0) for k in range(top + 1))


def _padd(a: tuple[int, ...], b: tuple[int, ...], sign: int = 1) -> tuple[int, ...]:
    n = max(len(a), len(b))
    out = [(a[k] if k < len(a) else 0) + sign * (b[k] if k < len(b) else 0) for k in range(n)]
    while len(out) > 1 and out[-1] == 0:
        out.pop()
    return tuple(out)


def _peval(p: tuple[int, ...], x: int) -> int:
    v = 0
    for c in reversed(p):
        v = v * x + c
    return v


def usage_polynomials(graph: Graph, events: Sequence[Event], dim: str,
                      fixed: Mapping[str, int] | None = None) -> dict[tuple[int, ...], int]:
    """Device bytes at every measured event of a plan as exact polynomials in ``dim`` (other
    dims fixed): ``{coefficients: first event index}``, one entry per distinct polynomial.
    Non-negative coefficients, so each is non-decreasing in ``dim``."""
    fixed = dict(fixed or {})
    bsize = [_univariate(e, dim, fixed) if graph.buffer_space[j] == 0 else (0,)
             for j, e in enumerate(graph.buffer_sizes)]
    tsize = [_univariate(e, dim, fixed) for e in graph.transient]
    resident = graph.buffer_live_in.copy()
    cur: tuple[int, ...] = (0,)
    for j in np.flatnonzero(resident):
        cur = _padd(cur, bsize[j])
    out: dict[tuple[int, ...], int] = {}
    computed = np.zeros(graph.n_ops, dtype=bool)
    for k, (code, x) in enumerate(events):
        code, x = int(code), int(x)
        if code == COMPUTE:
            for b in graph.defines(x):
                b = int(b)
                if graph.buffer_live_in[b] and not computed[x]:
                    continue
                if not resident[b]:
                    resident[b] = True
                    cur = _padd(cur, bsize[b])
            computed[x] = True
            out.setdefault(_padd(cur, tsize[x]), k)
        elif code == FREE:
            if resident[x]:
                resident[x] = False
                cur = _padd(cur, bsize[x], -1)
        elif code == PREFETCH:
            resident[x] = True
            cur = _padd(cur, bsize[x])
            out.setdefault(cur, k)
    if not out:
        out[cur] = -1
    return out


def _max_x(p: tuple[int, ...], budget: int, lo: int, hi: int) -> int:
    """Largest integer ``x`` in ``[lo, hi]`` with ``p(x) <= budget`` (``lo - 1`` if none)."""
    if _peval(p, lo) > budget:
        return lo - 1
    if _peval(p, hi) <= budget:
        return hi
    a, b = lo, hi            # p(a) <= budget < p(b)
    while b - a > 1:
        mid = (a + b) // 2
        if _peval(p, mid) <= budget:
            a = mid
        else:
            b = mid
    return a


@dataclass(frozen=True)
class PlanLimit:
    """The largest value of ``dim`` (in ``[lo, hi]``) at which a plan fits ``budget``, the
    event that binds just above it and its usage polynomial (a SymExpr in ``dim``)."""

    dim: str
    limit: int
    event: int
    usage: str


def plan_limit(graph: Graph, events: Sequence[Event], budget: int, dim: str,
               fixed: Mapping[str, int] | None = None, lo: int = 1, hi: int = 1 << 40
               ) -> PlanLimit:
    """Exact integer limit of one plan in one dim: memory is monotone in every dim, so the
    plan fits every ``dim <= limit`` and no ``dim > limit`` (up to ``hi``)."""
    polys = usage_polynomials(graph, events, dim, fixed)
    x, k, p = int(hi), -1, ()
    for q, j in polys.items():
        if _peval(q, x) <= budget:
            continue
        x, k, p = _max_x(q, int(budget), lo, x), j, q
    expr = " + ".join(f"{c}*{dim}^{d}" if d > 1 else (f"{c}*{dim}" if d == 1 else str(c))
                      for d, c in reversed(list(enumerate(p))) if c) or "0"
    return PlanLimit(dim, int(x), int(k), expr)


def single_dim(scenarios: Scenarios) -> tuple[str, dict[str, int]] | None:
    """The one dim whose value differs between buckets, with the others' common values."""
    if not scenarios.dims:
        return None
    varying = [d for i, d in enumerate(scenarios.dims)
               if len(set(scenarios.values[:, i].tolist())) > 1]
    if len(varying) > 1:
        return None
    dim = varying[0] if varying else scenarios.dims[0]
    fixed = {d: int(scenarios.values[0, i]) for i, d in enumerate(scenarios.dims) if d != dim}
    if scenarios.lower is not None:
        for i, d in enumerate(scenarios.dims):
            if d != dim and (scenarios.lower[:, i] != scenarios.values[:, i]).any():
                return None
    return dim, fixed


def breakpoints(result: "RematResult", budget: int | None = None, hi: int | None = None
                ) -> dict[str, Any] | None:
    """Exact run-time thresholds of a plan table over the one dim that separates buckets.

    ``plans``: for each bucket's plan, the largest dim value at which it still fits the
    budget (``limit``) and the usage expression that exceeds the budget just above it.
    ``candidates``: for each candidate, the smallest dim value from which every table plan
    without it exceeds the budget (``must_be_on_from``; ``None`` when every plan has it or
    a plan without it fits up to the top of the range)."""
    sc = result.scenarios
    sd = single_dim(sc)
    if sd is None:
        return None
    dim, fixed = sd
    di = sc.dims.index(dim)
    bud = int(budget if budget is not None else int(np.max(result.budget)))
    top = int(hi if hi is not None else 4 * int(sc.values[:, di].max()))
    plans = {}
    limits = []
    for s, name in enumerate(sc.names):
        pl = plan_limit(result.graph, result.events[s], bud, dim, fixed, 1, top)
        limits.append(pl.limit)
        plans[name] = {"limit": pl.limit, "binding_usage": pl.usage,
                       "active": list(result.active[s])}
    cands = {}
    for cid in range(len(result.skeleton.candidates)):
        without = [limits[s] for s in range(len(sc)) if cid not in result.active[s]]
        if len(without) == len(sc) or not without:
            on_from = None
        else:
            on_from = max(without) + 1
            if on_from > top:
                on_from = None
        cands[str(cid)] = on_from
    return {"dim": dim, "fixed": fixed, "budget": bud, "range": [1, top], "plans": plans,
            "must_be_on_from": cands}


@dataclass(frozen=True)
class Pick:
    bucket: str
    index: int
    events: tuple[Event, ...]
    peak: int
    budget: int


def pick_plan(result: "RematResult", values: Mapping[str, int], budget: int | None = None,
              cheapest: bool = False, simulate_graph: bool = True) -> Pick:
    """The run-time choice for concrete dim values: the bucket whose bounds hold them (sized
    at its upper bound, so its plan is safe), verified by the replay at the actual values.
    ``cheapest``: among all table plans that fit at these values, the one with the least
    added time (the exact-breakpoint choice). ``simulate_graph``: also rewrite the plan as a
    graph (``plan_to_graph``) and check it with ``cpsched.analysis.validate`` and the memory
    simulator. Raises ``ScheduleError`` if a verification fails (it cannot when sizes are
    monotone in the dims)."""
    sc = result.scenarios
    point = Scenarios(("runtime",), sc.dims,
                      np.array([[int(values[d]) for d in sc.dims]], dtype=np.int64), np.ones(1))
    k = pick_bucket(sc, values)
    bud = int(budget if budget is not None else result.budget[k])
    if cheapest:
        dur = op_durations(result.graph, point)
        best = None
        for s in range(len(sc)):
            r = replay(result.graph, result.events[s], point, bud)
            if r.errors:
                continue
            t = float(plan_time(result.graph, result.events[s], dur, result.transfer,
                                point).added[0])
            if best is None or t < best[0] - 1e-12:
                best = (t, s, r)
        if best is not None:
            k = best[1]
    r = check_plan(result.graph, result.events[k], point, bud,
                   what=f"plan of bucket {sc.names[k]} at {dict(values)}")
    if simulate_graph:
        g2, order = plan_to_graph(result.graph, result.events[k])
        sim = int(validate_schedule(g2, order, point, what="rewritten plan")[0])
        if sim != int(r.peak[0]) or sim > bud:
            raise ScheduleError(f"plan of bucket {sc.names[k]} at {dict(values)}: the simulator "
                                f"finds {sim} B, the replay {int(r.peak[0])} B, budget {bud} B")
    return Pick(sc.names[k], k, tuple(result.events[k]), int(r.peak[0]), bud)
