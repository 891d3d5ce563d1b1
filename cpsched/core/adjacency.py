"""Per-op neighbour lists in the order XLA walks them (data operands in operand order, then
control predecessors, then any other dependence the IR records; users in creation order,
then control successors, then the rest), cached per graph. Plain Python lists: numpy
scalars are slow to index one at a time in the hot loops."""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cpsched.core.gc_pause import without_gc
from cpsched.core.graph import Graph


@dataclass(frozen=True)
class Adjacency:
    """Python lists (fast to index) of each op's neighbours; see the module docstring."""

    users: list[list[int]]  # data users (ops that list i as an operand), by index
    succs: list[list[int]]  # users, then control successors, then other successors
    preds: list[list[int]]  # operands (operand order), control preds, other preds
    xla_preds: list[list[int]]  # operands then control preds only (what XLA walks)
    n_xla_preds: list[int]  # len(xla_preds[i]) is what XLA counts; we count preds


_ADJ_CACHE: weakref.WeakKeyDictionary[Graph, Adjacency] = weakref.WeakKeyDictionary()


def _ordered_rows(
    n: int, groups: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray | None]]
) -> list[list[int]]:
    """Merge (row, col, rank-within-row) edge groups into per-row lists: group order first,
    then rank, first occurrence of a (row, col) pair kept."""
    rows, cols, keys = [], [], []
    for g, (r, c, rank) in enumerate(groups):
        if r.size == 0:
            continue
        rows.append(r.astype(np.int64))
        cols.append(c.astype(np.int64))
        rank = c if rank is None else rank
        keys.append(g * (n + 1) * 4 + np.asarray(rank, dtype=np.int64))
    out: list[list[int]] = [[] for _ in range(n)]
    if not rows:
        return out
    r = np.concatenate(rows)
    c = np.concatenate(cols)
    k = np.concatenate(keys)
    order = np.lexsort((k, r))
    r, c = r[order], c[order]
    pair = r * max(n, 1) + c
    _, first = np.unique(pair, return_index=True)
    keep = np.zeros(r.size, dtype=bool)
    keep[first] = True
    keep &= r != c
    r, c = r[keep], c[keep]
    bounds = np.searchsorted(r, np.arange(n + 1))
    cl = c.tolist()
    for i in range(n):
        a, b = bounds[i], bounds[i + 1]
        if a != b:
            out[i] = cl[a:b]
    return out


@without_gc
def adjacency(graph: Graph) -> Adjacency:
    hit = _ADJ_CACHE.get(graph)
    if hit is not None:
        return hit
    n = graph.n_ops
    op_rows = np.repeat(np.arange(n), np.diff(graph.operands_ptr))
    op_rank = np.arange(graph.operands_idx.size) - np.repeat(
        graph.operands_ptr[:-1], np.diff(graph.operands_ptr)
    )
    ct_rows = np.repeat(np.arange(n), np.diff(graph.control_ptr))
    pr_rows = np.repeat(np.arange(n), np.diff(graph.pred_ptr))
    empty = np.zeros(0, dtype=np.int64)
    preds = _ordered_rows(
        n,
        [
            (op_rows, graph.operands_idx, op_rank),
            (ct_rows, graph.control_idx, None),
            (pr_rows, graph.pred_idx, None),
        ],
    )
    xla_preds = _ordered_rows(
        n,
        [
            (op_rows, graph.operands_idx, op_rank),
            (ct_rows, graph.control_idx, None),
            (empty, empty, None),
        ],
    )
    users = _ordered_rows(n, [(graph.operands_idx, op_rows, None)])
    sc_rows = np.repeat(np.arange(n), np.diff(graph.succ_ptr))
    succs = _ordered_rows(
        n,
        [
            (graph.operands_idx, op_rows, None),
            (graph.control_idx, ct_rows, None),
            (sc_rows, graph.succ_idx, None),
        ],
    )
    adj = Adjacency(users, succs, preds, xla_preds, [len(p) for p in xla_preds])
    _ADJ_CACHE[graph] = adj
    return adj


@without_gc
def csr_lists(ptr: np.ndarray, idx: np.ndarray) -> list[list[int]]:
    """A CSR structure as a list of Python lists."""
    il = idx.tolist()
    pl = ptr.tolist()
    return [il[pl[i] : pl[i + 1]] for i in range(len(pl) - 1)]
