"""Orders judged by the bytes XLA allocates for them, at no cost in peak.

Two orders with the same peak (max-live bytes, cpsched's accounting of XLA's live ranges)
can differ in what XLA's buffer assignment reserves (``readers.hlo.buffer_assignment``): its
heap places values with a best-fit heuristic that leaves gaps, and a loop's state, colocated
with its initial value and the body's buffers, holds one slot over the union of their
ranges. ``refine_orders`` walks from a set of orders (one per scheduled computation) to
orders that allocate fewer bytes with the module's peak no higher: a local search that
moves one instruction at a time within its dependences, keeps a move that does not raise
the allocated bytes (sideways moves let it cross plateaus) and stops after a run of moves
without a gain, or at its deadline. A move in a called computation must not raise that
computation's own peak (the bytes its caller counts for it), so the module's peak never
rises; the result is checked against the module's peak at the end.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from cpsched.analysis.memory import peak
from cpsched.analysis.schedule import make_schedule, place_inline_ops
from cpsched.core.graph import Graph
from cpsched.core.scenarios import static
from cpsched.readers.hlo.buffer_assignment import BufferAssigner
from cpsched.readers.hlo.convert import HloConverter, scheduled_computations
from cpsched.readers.hlo.parser import HloModule
from cpsched.strategies.module import ModuleSchedule, input_orders, module_peak

# buffer assignments without a gain before the search stops: this many per instruction of
# the computations it reorders, at least MIN_STALE (gains come after long plateaus)
STALE_PER_OP = 10
MIN_STALE = 300
# moves tried in a row that need no assignment (no room, or over the peak) before it stops
IDLE_PER_OP = 50


@dataclass
class Refinement:
    orders: dict[str, tuple[str, ...]]  # every scheduled computation
    allocated_bytes: int
    temp_bytes: int
    start_allocated_bytes: int
    peak_bytes: int  # the module's peak under ``orders`` (never above the start's)
    evaluations: int  # buffer assignments computed
    seconds: float


@dataclass
class _Computation:
    name: str
    graph: Graph
    order: list[int]
    limit: int  # the most bytes the computation may hold (its peak as the caller counts it)
    is_entry: bool
    movable: list[int]  # ops with a line of their own (inline ones follow their user)


def refine_orders(
    module: HloModule,
    orders: Mapping[str, Sequence[str]],
    *,
    deadline: float | None = None,
    max_evaluations: int | None = None,
    seed: int = 0,
    assigner: BufferAssigner | None = None,
) -> Refinement:
    """Orders for ``module`` that XLA allocates no more bytes for than ``orders`` (every
    scheduled computation; missing ones keep the module's text order), with a module peak
    no higher. Stops at ``deadline`` (``time.perf_counter``), after ``max_evaluations``
    buffer assignments, or after a run of moves without a gain."""
    t0 = time.perf_counter()
    ba = assigner or BufferAssigner(module)
    sc = static()
    conv = HloConverter(module, orders)
    names = scheduled_computations(module)
    entry = module.entry.name
    comps: list[_Computation] = []
    for name in names:
        g = conv.graph(name)
        order = conv._order_for(g, name)
        if name == entry:
            limit = int(np.max(peak(g, order, sc))) if g.n_ops else 0
        else:
            limit = int(conv.usage(name, order).max()) if g.n_ops else 0
        inline = set((g.meta or {}).get("inline_ops") or ())
        ops = [k for k in range(g.n_ops) if g.op_names[k] not in inline]
        comps.append(_Computation(name, g, list(order), limit, name == entry, ops))
    current = {c.name: tuple(c.graph.op_names[i] for i in c.order) for c in comps}
    start = ba.assign(current)
    best_alloc, best_temp = start.allocated_bytes, start.temp_bytes
    start_peak = int(np.max(module_peak(module, current, sc)))
    movable = [c for c in comps if len(c.movable) > 2]
    total_ops = sum(len(c.movable) for c in movable)
    rng = random.Random(seed)
    evaluations = 1
    stale = idle = 0
    stale_limit = max(MIN_STALE, STALE_PER_OP * total_ops)
    idle_limit = max(MIN_STALE, IDLE_PER_OP * total_ops)
    weights = [len(c.movable) for c in movable]
    while movable:
        if deadline is not None and time.perf_counter() > deadline:
            break
        if max_evaluations is not None and evaluations >= max_evaluations:
            break
        if stale >= stale_limit or idle >= idle_limit:
            break
        c = rng.choices(movable, weights)[0]
        g, order = c.graph, c.order
        pos = np.empty(g.n_ops, dtype=np.int64)
        pos[np.asarray(order, dtype=np.int64)] = np.arange(g.n_ops)
        i = rng.choice(c.movable)
        p = int(pos[i])
        lo = max((int(pos[x]) for x in g.preds(i)), default=-1) + 1
        hi = min((int(pos[x]) for x in g.succs(i)), default=g.n_ops) - 1
        j = rng.randint(lo, hi) if hi > lo else p
        if j == p:
            idle += 1
            continue
        new = order[:p] + order[p + 1 :]
        new.insert(j, i)
        new = place_inline_ops(g, new)
        if c.is_entry:
            held = int(np.max(peak(g, new, sc)))
        else:
            held = int(conv.usage(c.name, new).max())
        if held > c.limit:
            idle += 1
            continue
        idle = 0
        trial = dict(current)
        trial[c.name] = tuple(g.op_names[k] for k in new)
        r = ba.assign(trial)
        evaluations += 1
        if r.allocated_bytes < best_alloc:
            stale = 0
        else:
            stale += 1
        if r.allocated_bytes <= best_alloc:
            best_alloc, best_temp = r.allocated_bytes, r.temp_bytes
            c.order = new
            current = trial
    final_peak = int(np.max(module_peak(module, current, sc)))
    if final_peak > start_peak:  # not expected: each move kept its computation's bytes
        current = {c: tuple(v) for c, v in orders.items()}
        best_alloc, best_temp, final_peak = start.allocated_bytes, start.temp_bytes, start_peak
    return Refinement(
        current,
        best_alloc,
        best_temp,
        start.allocated_bytes,
        final_peak,
        evaluations,
        time.perf_counter() - t0,
    )


def refine_module_schedule(
    ms: ModuleSchedule,
    *,
    deadline: float | None = None,
    max_evaluations: int | None = None,
    seed: int = 0,
) -> ModuleSchedule:
    """``ms`` with orders that XLA allocates fewer bytes for (``refine_orders``), or ``ms``
    itself where none were found; the entry's status and bound are kept (its peak is no
    higher). Single static scenario only (XLA's sizes are numbers)."""
    module = ms.module
    s = ms.schedule
    if len(s.scenarios) != 1 or ms.kept_input:
        return ms
    assigner = BufferAssigner(module)
    r = refine_orders(
        module,
        ms.orders,
        deadline=deadline,
        max_evaluations=max_evaluations,
        seed=seed,
        assigner=assigner,
    )
    info = dict(s.info)
    info["allocation_search"] = {
        "start_allocated_bytes": r.start_allocated_bytes,
        "allocated_bytes": r.allocated_bytes,
        "evaluations": r.evaluations,
        "seconds": round(r.seconds, 3),
    }
    entry = module.entry.name
    # the module's own orders (XLA's) where their peak is as low and XLA allocates less for
    # them: cp's answer is then never above the compiler's order in either figure
    given = {n: tuple(v) for n, v in input_orders(module).items()}
    given_alloc = assigner.assign(given).allocated_bytes
    if (
        given_alloc < min(r.allocated_bytes, r.start_allocated_bytes)
        and np.all(ms.input_peak <= s.peak_bytes)
        and dict(ms.orders) != given
    ):
        info["allocation_search"]["kept_input_orders"] = True
        info["allocation_search"]["allocated_bytes"] = given_alloc
        orders = dict(given)
        g = HloConverter(module, orders).graph(entry)
        order = [g.op_index(n) for n in orders[entry]]
    elif r.allocated_bytes >= r.start_allocated_bytes:
        orders = dict(ms.orders)
        g = s.graph
        order = list(s.order)
    else:
        orders = r.orders
        g = HloConverter(module, orders).graph(entry)
        order = [g.op_index(n) for n in orders[entry]]
    final = make_schedule(
        g,
        order,
        s.method,
        s.scenarios,
        status=s.status,
        seconds=s.seconds + r.seconds,
        lower_bound=s.lower_bound_bytes,
        info=info,
        computation_orders={n: v for n, v in orders.items() if n != entry},
    )
    if np.any(final.peak_bytes > s.peak_bytes):  # not expected (see refine_orders)
        return ms
    return ModuleSchedule(
        module,
        final,
        {n: tuple(v) for n, v in orders.items()},
        ms.input_peak,
        ms.computations,
        ms.kept_input,
    )


__all__ = ["refine_orders", "refine_module_schedule", "Refinement"]
