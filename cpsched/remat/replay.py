"""The independent replay checker of an event list: every read on the device, memory
within the budget, copies timed on their streams."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cpsched.core.errors import ScheduleError
from cpsched.core.graph import Graph, OpKind
from cpsched.core.scenarios import Scenarios, parse_budget, static
from cpsched.core.units import format_bytes_exact
from cpsched.remat.events import COMPUTE, EVICT, FREE, PREFETCH, Event
from cpsched.remat.policy import recomputable_ops


@dataclass(frozen=True)
class Replay:
    peak: np.ndarray  # [S] bytes
    peak_event: np.ndarray  # [S] index of the event where the peak is first reached
    errors: tuple[str, ...]
    n_computes: int
    n_recomputes: int
    n_evictions: int
    eager_frees: bool  # every free comes right after the buffer's last use

    @property
    def ok(self) -> bool:
        return not self.errors


def replay(
    graph: Graph,
    events: Sequence[Event],
    scenarios: Scenarios | None = None,
    budget: Sequence[int] | int | None = None,
    max_errors: int = 20,
) -> Replay:
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
    in_flight_out = np.zeros(nb, dtype=bool)  # evicted, device copy not yet freed
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
                    err(
                        f"event {k}: {name!r} needs {graph.buffer_names[b]!r}, "
                        "which is not on the device"
                    )
                if again and overwritten[b]:
                    err(
                        f"event {k}: clone of {name!r} reads {graph.buffer_names[b]!r} after "
                        "it was overwritten in place"
                    )
                last_touch[b] = k
            for b in graph.defines(x):
                b = int(b)
                if graph.buffer_live_in[b] and not again:
                    last_touch[b] = k
                    continue
                if resident[b]:
                    err(
                        f"event {k}: {name!r} defines {graph.buffer_names[b]!r}, which is "
                        "already on the device"
                    )
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
                if (
                    not in_flight_out[x]
                    and last_touch[x] != k - 1
                    and not _only_frees_between(events, last_touch[x], k)
                ):
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
        err(
            f"op {graph.op_names[int(missing[0])]!r} is never computed"
            + (f" (and {missing.size - 1} more)" if missing.size > 1 else "")
        )
    lost = np.flatnonzero(graph.buffer_live_out & ~resident)
    if lost.size:
        err(f"program output {graph.buffer_names[int(lost[0])]!r} is not on the device at the end")
    if bud is not None:
        for s in range(n_s):
            if peak[s] > bud[s]:
                err(
                    f"scenario {sc.names[s]}: peak {format_bytes_exact(peak[s])} exceeds the budget "
                    f"{format_bytes_exact(bud[s])} at event {int(peak_event[s])}"
                )
    return Replay(
        peak, peak_event, tuple(errors), int((computed > 0).sum()) + n_re, n_re, n_ev, last_touch_ok
    )


def _only_frees_between(events: Sequence[Event], a: int, b: int) -> bool:
    return all(int(events[j][0]) == FREE for j in range(a + 1, b))


def check_plan(
    graph: Graph,
    events: Sequence[Event],
    scenarios: Scenarios | None = None,
    budget: Sequence[int] | int | None = None,
    what: str = "remat plan",
) -> Replay:
    """``replay`` and raise ``ScheduleError`` on the first problem."""
    r = replay(graph, events, scenarios, budget)
    if r.errors:
        raise ScheduleError(
            f"{what} of {graph.name}: {r.errors[0]}"
            + (f" (+{len(r.errors) - 1} more)" if len(r.errors) > 1 else "")
        )
    return r


def _budget_array(budget, n_s: int) -> np.ndarray:
    """Bytes per scenario: one value for all or one each (``cpsched.core.scenarios``'s
    budget forms, ``8GiB`` included; a percentage needs the caller's least peak)."""
    if isinstance(budget, np.ndarray):
        budget = budget.tolist()
    return parse_budget(budget).resolve(n_s)
