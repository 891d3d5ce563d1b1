"""Compile-time skeletons (one order plus candidate clones and evictions shared by every
bucket) and their materialization into event lists for an active set."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from cpsched.core.errors import ScheduleError
from cpsched.core.graph import Graph
from cpsched.remat.events import COMPUTE, EVICT, FREE, PREFETCH, Event


@dataclass(frozen=True)
class Regen:
    """Candidate: clone ``op`` just before main step ``step`` (``sub`` orders clones that
    share a step); from there on the clone's buffers serve the op's later readers."""

    op: int
    step: int
    sub: float = 0  # only orders clones of one step: a float leaves room between two

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
    rank: int = 0  # order of prefetches issued before the same step (copy-stream FIFO)

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
            return {
                "id": cid,
                "kind": "regenerate",
                "op": graph.op_names[c.op],
                "before": step_name(c.step),
                "step": c.step,
                "sub": c.sub,
            }
        return {
            "id": cid,
            "kind": "evict",
            "buffer": graph.buffer_names[c.buffer],
            "evict_before": step_name(c.out_step),
            "free_before": step_name(c.free_step),
            "prefetch_before": step_name(c.in_step),
            "steps": [c.out_step, c.free_step, c.in_step],
        }


class PlanError(ScheduleError):
    """An active candidate set that does not give a valid program."""


def materialize(
    graph: Graph, skeleton: Skeleton, active: Iterable[int] | None = None, prune: bool = True
) -> list[Event]:
    """The event list of ``skeleton`` with the candidates ``active`` (default: all).

    Every reader is served by the most recent copy of the buffer (the original, a clone, or
    the prefetched copy); each copy is freed right after its last reader. Active candidates
    that serve nobody (a clone no one reads, an eviction of a buffer not read again) are
    dropped when ``prune``. Raises ``PlanError`` if some reader finds its buffer gone.
    """
    return materialize_tagged(graph, skeleton, active, prune)[0]


def materialize_tagged(
    graph: Graph, skeleton: Skeleton, active: Iterable[int] | None = None, prune: bool = True
) -> tuple[list[Event], list[int], set[int]]:
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
    regens: dict[int, list[tuple[float, int, int]]] = defaultdict(list)
    outs: dict[int, list[tuple[int, int]]] = defaultdict(list)
    frees: dict[int, list[tuple[int, int]]] = defaultdict(list)
    ins: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
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
    inst_last: list[int] = []  # position of last touch
    inst_uses: list[int] = []  # number of served readers
    inst_free_at: list[int] = []  # forced free position (eviction) or -1
    cur: dict[int, int] = {}

    def new_inst(b: int, pos: int, cid: int) -> int:
        inst_buf.append(b)
        inst_cid.append(cid)
        inst_last.append(pos)
        inst_uses.append(0)
        inst_free_at.append(-1)
        cur[b] = len(inst_buf) - 1
        return cur[b]

    for b in map(int, np.flatnonzero(graph.buffer_live_in)):
        new_inst(b, -1, -1)
    computed = np.zeros(graph.n_ops, dtype=bool)
    evicted_inst: dict[int, int] = {}
    host_copy: set[int] = set()
    prefetch_inst: dict[int, int] = {}  # cid -> instance
    for pos, (code, x, cid) in enumerate(seq):
        if code == COMPUTE:
            for b in graph.uses(x):
                b = int(b)
                i = cur.get(b)
                if i is None:
                    raise PlanError(
                        f"{graph.op_names[x]!r} at item {pos} needs "
                        f"{graph.buffer_names[b]!r}, which is not on the device"
                    )
                inst_last[i] = pos
                inst_uses[i] += 1
            first = not computed[x]
            computed[x] = True
            for b in graph.defines(x):
                b = int(b)
                if b in evicted_inst:
                    raise PlanError(
                        f"clone of {graph.op_names[x]!r} at item {pos} while the "
                        f"evicted copy of {graph.buffer_names[b]!r} is still on the device"
                    )
                if first and graph.buffer_live_in[b]:
                    inst_last[cur[b]] = max(inst_last[cur[b]], pos)
                    continue
                new_inst(b, pos, cid)
        elif code == EVICT:
            i = cur.pop(x, None)
            if i is None:
                raise PlanError(
                    f"eviction of {graph.buffer_names[x]!r} at item {pos}: not on the device"
                )
            evicted_inst[x] = i
            host_copy.add(x)
        elif code == FREE:
            i = evicted_inst.pop(x, None)
            if i is None:
                raise PlanError(f"free of {graph.buffer_names[x]!r} at item {pos} without eviction")
            inst_free_at[i] = pos
        else:
            if x in evicted_inst or x not in host_copy:
                raise PlanError(
                    f"prefetch of {graph.buffer_names[x]!r} at item {pos} before its "
                    "copy-out is done"
                )
            prefetch_inst[cid] = new_inst(x, pos, cid)
    useless: set[int] = set()
    for i, cid in enumerate(inst_cid):
        if (
            cid >= 0
            and inst_uses[i] == 0
            and not (graph.buffer_live_out[inst_buf[i]] and cur.get(inst_buf[i]) == i)
        ):
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
