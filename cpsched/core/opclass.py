"""Op classification shared by the post-processors, the latency-hiding scheduler and the
transforms: which collective an op performs, sync or async halves, no-op ops."""

from __future__ import annotations

from typing import Any

from cpsched.core import opcodes
from cpsched.core.graph import Graph, OpKind

COLLECTIVE_KINDS = opcodes.COLLECTIVES


_NOP_OPCODES = frozenset({*opcodes.FORWARDING, "constant", "parameter"} - {"optimization-barrier"})


def attr(graph: Graph, i: int, key: str, default: Any = None) -> Any:
    a = graph.op_attrs.get(i)
    return default if a is None else a.get(key, default)


def is_effective_scalar(graph: Graph, i: int) -> bool:
    """XLA's ``ShapeUtil::IsEffectiveScalar`` of the op's shape, when the reader recorded it."""
    return bool(attr(graph, i, "is_effective_scalar", False))


def collective_kind(graph: Graph, i: int) -> str | None:
    """The collective an op (sync, start or done) performs, or None."""
    s = int(graph.async_start[i])
    for j in (i, s) if s >= 0 else (i,):
        c = graph.collectives.get(j)
        if c is not None:
            return c.kind
        wrapped = attr(graph, j, "async_wrapped_opcode")
        if wrapped in COLLECTIVE_KINDS:
            return wrapped
        op = graph.opcodes[j]
        for suffix in ("-start", "-done", "-update"):
            if op.endswith(suffix) and op[: -len(suffix)] in COLLECTIVE_KINDS:
                return op[: -len(suffix)]
        if op in COLLECTIVE_KINDS:
            return op
        if op in ("send", "recv", "send-done", "recv-done"):
            return "send-recv"
    return None


def is_sync_collective(graph: Graph, i: int) -> bool:
    """``collective_backend_config.is_sync`` of a collective (or its start)."""
    s = int(graph.async_start[i])
    j = s if s >= 0 else i
    c = graph.collectives.get(j)
    if c is not None and c.is_sync:
        return True
    return bool(attr(graph, j, "is_sync", False))


def is_async_start(graph: Graph, i: int) -> bool:
    return int(graph.kinds[i]) == OpKind.ASYNC_START


def is_async_done(graph: Graph, i: int) -> bool:
    return int(graph.kinds[i]) == OpKind.ASYNC_DONE


def is_async_collective_start(graph: Graph, i: int) -> bool:
    """XLA's ``IsAsyncCollectiveStartOp(include_send_recv=true)``."""
    return is_async_start(graph, i) and collective_kind(graph, i) is not None


def is_async_collective_done(graph: Graph, i: int) -> bool:
    return is_async_done(graph, i) and collective_kind(graph, i) is not None


def custom_call_schedule(graph: Graph, i: int) -> str:
    v = attr(graph, i, "custom_call_schedule", "") or ""
    return str(v).upper()


def is_nop(graph: Graph, i: int) -> bool:
    """Ops that cost nothing and allocate (almost) nothing: forwarding, params, constants."""
    k = int(graph.kinds[i])
    return (
        k in (OpKind.ALIAS, OpKind.PARAMETER, OpKind.CONSTANT) or graph.opcodes[i] in _NOP_OPCODES
    )
