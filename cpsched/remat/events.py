"""Plan events: ``(kind, index)`` pairs in program order, their kinds, and their names
(``cpsched.remat.plan`` documents the event list)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from cpsched.core.errors import InputError
from cpsched.core.graph import Graph

COMPUTE, FREE, EVICT, PREFETCH = 0, 1, 2, 3
KIND_NAMES = ("compute", "free", "evict", "prefetch")
_KIND_CODE = {k: i for i, k in enumerate(KIND_NAMES)}

Event = tuple[int, int]  # (kind code, op index for compute / buffer index otherwise)


def events_to_names(graph: Graph, events: Sequence[Event]) -> list[list[str]]:
    return [
        [KIND_NAMES[k], graph.op_names[x] if k == COMPUTE else graph.buffer_names[x]]
        for k, x in events
    ]


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
                defs: np.ndarray | tuple[int, ...] = graph.defines(i) if i is not None else ()
                if len(defs) != 1:
                    raise InputError(f"remat step #{k + 1} names unknown buffer {name!r}")
                out.append((code, int(defs[0])))
            else:
                out.append((code, bindex[name]))
    return out
