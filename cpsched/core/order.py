"""Helpers about orders of a graph's ops: an ``order`` option (indices or op names) as
indices, and each op's position in an order. ``validate_order`` (whether an order is a
schedule of a graph) lives with the IR in ``cpsched.core.graph``, whose builder checks an
input's own order with it; it is re-exported here for the order helpers' users."""

from __future__ import annotations

from collections.abc import Sequence

from cpsched.core.graph import Graph, validate_order


def check_order_option(graph: Graph, order: Sequence[int | str] | None) -> list[int] | None:
    """Normalise an ``order`` option (indices or op names) to indices."""
    if order is None:
        return None
    out = []
    for x in order:
        if isinstance(x, str):
            out.append(graph.op_index(x))
        else:
            out.append(int(x))
    return out


def positions_of(order: Sequence[int], n: int) -> list[int]:
    pos = [0] * n
    for k, i in enumerate(order):
        pos[i] = k
    return pos


__all__ = ["check_order_option", "positions_of", "validate_order"]
