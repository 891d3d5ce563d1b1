"""Every sequential computation of an HLO module scheduled, callees first (XLA's
``HloModuleScheduler`` / ``ScheduleModule``).

``schedule_module(module, scheduler)`` walks the computations that get a sequence of their
own (``scheduled_computations``: while bodies and conditions, conditional branches, called
and async-wrapped computations, the entry last) in XLA's post order over the call graph. Each
one is converted with the orders already chosen for its callees, so a callee's peak under its
chosen order is what its calling op carries (``transient``) in the caller, exactly as XLA's
flattened live ranges count it (``cpsched.readers.hlo.convert``). The per-computation
scheduler has one signature for heuristics and solvers::

    scheduler(graph, scenarios, seconds) -> order (op indices) or a Schedule

``seconds`` is that computation's share of the time limit (None without one): shares are in
proportion to the computations' sizes, each called computation weighted up by the part of the
module's peak it holds at its own peak in the input's order (a scan's loop body, which holds
most of the program's memory, gets most of the time); time a computation does not use passes
on to the ones after it (the entry comes last and gets what is left).

With ``never_worse`` (solvers), for each computation the order kept is the better of the
scheduler's and the input's by XLA's accounting of that computation (``HloConverter.usage``);
finally the module's peak (the entry simulated with its callees' transients) is compared
with the input's orders and the better set is returned, so the result is never worse than
the module it was given. Heuristics run without it: they do what the compiler's would.
"""

from __future__ import annotations

import json
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from cpsched.analysis.memory import lower_bound, peak
from cpsched.analysis.schedule import Schedule, make_schedule, place_inline_ops
from cpsched.analysis.validate import validate_order
from cpsched.core.graph import Graph
from cpsched.core.scenarios import Scenarios, static
from cpsched.core.units import format_bytes
from cpsched.cp.memory.cuts import CUT_MAX_OPS
from cpsched.cp.memory.problem import from_graph
from cpsched.readers.hlo.convert import (
    HloConverter,
    call_contexts,
    computation_orders,
    scheduled_computations,
)
from cpsched.readers.hlo.parser import HloModule

ComputationScheduler = Callable[[Graph, Scenarios, "float | None"], "Sequence[int] | Schedule"]

# a called computation holding the whole module peak gets 1 + this many times its size
MEMORY_WEIGHT = 4.0


@dataclass
class ComputationResult:
    name: str
    context: str  # entry | sequential | uncalled
    n_ops: int
    kept: str  # "scheduler" or "input"
    status: str
    seconds: float
    peak: int  # this computation's own peak (XLA accounting, first scenario)
    input_peak: int


@dataclass
class ModuleSchedule:
    """Orders for every scheduled computation; ``schedule`` is the entry's ``Schedule``
    (its graph built with the callees' chosen orders) with ``computation_orders`` set."""

    module: HloModule
    schedule: Schedule
    orders: dict[str, tuple[str, ...]]  # every scheduled computation, entry too
    input_peak: np.ndarray  # [S] the module's peak in its input orders
    computations: list[ComputationResult] = field(default_factory=list)
    kept_input: bool = False  # the input orders won at module level

    @property
    def peak(self) -> np.ndarray:
        return self.schedule.peak_bytes


def input_orders(module: HloModule) -> dict[str, list[str]]:
    """The input's order of every scheduled computation (text order if valid, else a
    topological one), as instruction names."""
    return computation_orders(module)


def _weight(n_ops: int, share: float) -> float:
    """Time-split weight: size, times 1 + MEMORY_WEIGHT x the share of the module peak."""
    if n_ops <= 2:
        return 0.0
    return float(n_ops) * (1.0 + MEMORY_WEIGHT * min(1.0, max(0.0, share)))


def _score(peaks: np.ndarray) -> tuple:
    return (int(np.max(peaks)), int(np.sum(peaks)))


def schedule_module(
    module: HloModule,
    scheduler: ComputationScheduler,
    *,
    scenarios: Scenarios | None = None,
    time_limit: float | None = None,
    deterministic: bool = False,
    method: str = "module",
    never_worse: bool = True,
    alternatives: Sequence[ComputationScheduler] = (),
    peak_objective: bool = True,
) -> ModuleSchedule:
    """Schedule every sequential computation of ``module`` with ``scheduler``, callees
    first; see the module docstring. ``never_worse=False`` keeps the scheduler's orders even
    where the input's are better (a heuristic reproducing a compiler's scheduler).
    ``alternatives`` (with ``never_worse``): more schedulers tried on every computation, the
    best order by XLA's accounting kept (a solver's objective counts a loop body's state
    through the free gap XLA's ranges leave, so a heuristic's order can come out ahead).
    ``peak_objective``: the scheduler minimizes the peak, so reaching the module's lower bound
    proves its result optimal (not so for a timing objective). ``deterministic``: the time a
    computation did not use passes on as the share it was handed, not as the wall time it
    took, so that every computation's share is the same whatever the machine's load."""
    sc = scenarios or static()
    names = scheduled_computations(module)
    entry = module.entry.name
    given = input_orders(module)
    # the module as given: its peak (for the never-worse guarantee) and each callee's
    conv_in = HloConverter(module, given)
    g0 = conv_in.graph(entry)
    input_peak = _peaks(g0, [g0.op_index(n) for n in given[entry]], sc)
    weights = _time_weights(conv_in, names, entry, given, sc, input_peak)
    conv = HloConverter(module)
    conv.orders = {}
    left_w = sum(weights.values())
    left_t = time_limit
    results: list[ComputationResult] = []
    entry_schedule: Schedule | None = None
    one = _OneComputation(conv, scheduler, sc, entry, given, never_worse, alternatives)
    contexts = call_contexts(module)
    for name in names:
        time_share: float | None = None
        if left_t is not None:
            time_share = max(0.0, left_t) * (weights[name] / left_w if left_w > 0 else 0.0)
            if name == entry:
                time_share = max(0.0, left_t)
        g, result, order, out = one(name, contexts.get(name, "entry"), time_share)
        if left_t is not None:
            left_t -= time_share if deterministic and time_share is not None else result.seconds
        left_w -= weights[name]
        results.append(result)
        conv.orders[name] = [g.op_names[i] for i in order]
        if name == entry:
            by_scheduler = isinstance(out, Schedule) and result.kept == "scheduler"
            entry_schedule = make_schedule(
                g,
                order,
                method,
                sc,
                status=result.status if result.kept == "scheduler" else "HEURISTIC",
                seconds=result.seconds,
                lower_bound=out.lower_bound_bytes if by_scheduler else None,
                info=dict(out.info) if by_scheduler else {},
            )
    assert entry_schedule is not None
    chosen = {n: tuple(v) for n, v in conv.orders.items()}
    kept_input = never_worse and _score(input_peak) < _score(entry_schedule.peak_bytes)
    if kept_input:
        chosen = {n: tuple(v) for n, v in given.items()}
        entry_schedule = make_schedule(
            g0,
            [g0.op_index(n) for n in given[entry]],
            method,
            sc,
            seconds=sum(r.seconds for r in results),
            info={"message": "the input's orders have the lower module peak; kept"},
        )
    final = _module_schedule(
        module, entry_schedule, names, given, chosen, input_peak, results, method, sc,
        peak_objective,
    )  # fmt: skip
    return ModuleSchedule(module, final, chosen, input_peak, results, kept_input)


def _time_weights(conv_in, names, entry, given, sc, input_peak) -> dict[str, float]:
    """Each computation's weight in the split of the time (``_weight``): its size, and for
    a callee the share of the module's peak it holds in the input's order."""
    top = max(1, int(np.max(input_peak)))
    weights = {}
    for n in names:
        g_in = conv_in.graph(n)
        share = 0.0
        if n != entry and g_in.n_ops:
            share = (
                float(np.max(_exact(conv_in, g_in, n, [g_in.op_index(x) for x in given[n]], sc)))
                / top
            )
        weights[n] = _weight(g_in.n_ops, share)
    return weights


class _OneComputation:
    """One computation scheduled (with its callees' chosen orders already in ``conv``),
    and with ``never_worse`` the best of the scheduler's, the alternatives' and the
    input's orders kept."""

    def __init__(self, conv, scheduler, sc, entry, given, never_worse, alternatives):
        self.conv, self.scheduler, self.sc, self.entry = conv, scheduler, sc, entry
        self.given, self.never_worse, self.alternatives = given, never_worse, alternatives

    def cost(self, g: Graph, name: str, order: Sequence[int]) -> np.ndarray:
        if name == self.entry:
            return _peaks(g, order, self.sc)
        return _exact(self.conv, g, name, order, self.sc)

    def __call__(self, name: str, context: str, seconds: float | None):
        g = self.conv.graph(name)
        t0 = time.perf_counter()
        out = self.scheduler(g, self.sc, seconds)
        dt = time.perf_counter() - t0
        status = out.status if isinstance(out, Schedule) else "HEURISTIC"
        order = _placed(g, out, name)
        base = [g.op_index(n) for n in self.given[name]]
        mine, theirs = self.cost(g, name, order), self.cost(g, name, base)
        kept = "scheduler"
        if self.never_worse:
            for k, alt in enumerate(self.alternatives):
                o = _placed(g, alt(g, self.sc, None), name)
                c = self.cost(g, name, o)
                if _score(c) < _score(mine):
                    order, kept, mine = o, f"alternative {k}", c
            if _score(theirs) < _score(mine):
                order, kept, mine = base, "input", theirs
        result = ComputationResult(
            name, context, g.n_ops, kept, status, dt, int(mine[0]), int(theirs[0])
        )
        return g, result, order, out


def _placed(g: Graph, out, name: str) -> list[int]:
    """A scheduler's answer (an order or a Schedule) as it will be written (inline ops
    before their first user), checked."""
    order = place_inline_ops(g, out.order if isinstance(out, Schedule) else out)
    validate_order(g, order, what=f"the schedule of {name}")
    return order


def _module_schedule(
    module, entry_schedule, names, given, chosen, input_peak, results, method, sc, peak_objective
) -> Schedule:
    """The entry's schedule with the module's figures: the callees' orders, the module's
    lower bound and the status and message that follow from them."""
    entry = module.entry.name
    callees = {n: v for n, v in chosen.items() if n != entry}
    total = sum(r.seconds for r in results)
    info = dict(entry_schedule.info)
    info["computations"] = [r.__dict__ for r in results]
    info["input_peak_bytes"] = {n: int(v) for n, v in zip(sc.names, input_peak)}
    # the entry's own bound holds for its callees' chosen orders only; the module's bound
    # takes each callee at the least it could need in any order
    lb = module_lower_bound(module, sc)
    if len(names) == 1:
        # no called computation: the entry's bound (a solver's proof) holds for the module
        lb = np.maximum(lb, entry_schedule.lower_bound_bytes)
    status = entry_schedule.status
    if peak_objective and np.all(entry_schedule.peak_bytes <= lb):
        status = "OPTIMAL"  # the least peak any orders can have: proven, whatever the entry said
    elif status == "OPTIMAL" or (
        status == "HEURISTIC_FALLBACK" and _score(entry_schedule.peak_bytes) < _score(input_peak)
    ):
        status = "FEASIBLE"  # optimal entry for these callees; or better bodies
    if len(names) > 1:
        changed = sum(1 for n in names if list(chosen[n]) != list(given[n]))
        if info.get("message"):
            info["entry_message"] = info["message"]
        info["message"] = (
            f"{changed} of {len(names)} computations reordered; the input's "
            f"orders peak at {', '.join(format_bytes(int(v)) for v in input_peak)}; "
            "the bound lets every called computation take its least peak"
        )
    return make_schedule(
        entry_schedule.graph,
        entry_schedule.order,
        method,
        sc,
        status=status,
        seconds=total,
        lower_bound=lb,
        claimed_peak=entry_schedule.peak_bytes,
        info=info,
        computation_orders=callees,
    )


# module_lower_bound's results by module (``id``, while it lives) and scenarios: every
# command and method result asks for it, and on a 400-op entry it takes about a second
_BOUNDS: dict[int, tuple[weakref.ref, dict[str, np.ndarray]]] = {}


def module_lower_bound(module: HloModule, scenarios: Scenarios | None = None) -> np.ndarray:
    """A peak no choice of orders (entry and every called computation) can beat: each
    calling op carries the least its callees could need beyond what the caller counts
    (0 where that cannot be bounded, e.g. symbolic sizes)."""
    sc = scenarios or static()
    key = json.dumps(sc.to_json(), sort_keys=True)
    ident = id(module)
    held = _BOUNDS.get(ident)
    if held is None or held[0]() is not module:
        held = (weakref.ref(module, lambda _ref: _BOUNDS.pop(ident, None)), {})
        _BOUNDS[ident] = held
    if key not in held[1]:
        held[1][key] = _module_lower_bound(module, sc)
    return held[1][key].copy()


def _module_lower_bound(module: HloModule, sc: Scenarios) -> np.ndarray:
    conv = HloConverter(module)
    entry = module.entry.name
    bounds: dict[str, int] = {}
    for name in scheduled_computations(module):
        if name != entry:
            b = conv.excess_lower_bound(name, bounds)
            bounds[name] = 0 if b is None else max(0, b)
    g = conv.graph(entry)
    g = g.with_(transient=conv.callee_transients(g, bounds))
    lb = lower_bound(g, sc)
    # the entry's minimum-cut bound (``cpsched.cp.memory.cuts``) with those transients: as
    # sound for the module as the forced-live one, and far stronger where parameters and
    # their updates must pile up (an optimizer step); skipped on large entries (its cost)
    if 0 < g.n_ops <= CUT_MAX_OPS:
        lb = np.maximum(lb, from_graph(g, sc).lower_bound)
    return lb


def _peaks(g: Graph, order: Sequence[int], sc: Scenarios) -> np.ndarray:
    return peak(g, order, sc)


def _exact(
    conv: HloConverter, g: Graph, name: str, order: Sequence[int], sc: Scenarios
) -> np.ndarray:
    """A callee's peak as its caller will count it: XLA's accounting where the sizes are
    numbers, the plain simulation per scenario otherwise."""
    if (
        len(sc) == 1
        and all(s.is_constant for s in g.buffer_sizes)
        and all(t.is_constant for t in g.transient)
    ):
        return np.array([int(conv.usage(name, order).max()) if g.n_ops else 0])
    return _peaks(g, order, sc)


def module_peak(
    module: HloModule, orders: Mapping[str, Sequence[str]], scenarios: Scenarios | None = None
) -> np.ndarray:
    """The module's peak per scenario under ``orders`` (every scheduled computation;
    missing ones keep the input order): the entry simulated with its callees' transients."""
    sc = scenarios or static()
    conv = HloConverter(module, orders)
    g = conv.graph(module.entry.name)
    order = orders.get(module.entry.name)
    idx = (
        [g.op_index(n) for n in order]
        if order is not None
        else conv._order_for(g, module.entry.name)
    )
    validate_order(g, idx, what="the entry order")
    return _peaks(g, idx, sc)


__all__ = [
    "schedule_module",
    "module_lower_bound",
    "ModuleSchedule",
    "ComputationResult",
    "ComputationScheduler",
    "input_orders",
    "module_peak",
]
