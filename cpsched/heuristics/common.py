"""Shared plumbing for the heuristic baselines.

- ``scenario_index`` / ``scenario_bytes``: heuristics compare byte counts in ONE scenario.
  The ``scenario`` option picks it (a scenario name or an index); the default is the
  scenario with the largest weight (the first one on ties), i.e. the shape bucket that
  occurs most often. Symbolic comparisons over all scenarios are the BladeDISC method's
  business, not these helpers'.
- ``adjacency``: per-op neighbour lists in the order XLA walks them (data operands in
  operand order, then control predecessors, then any other dependence the IR records;
  users in creation order, then control successors, then the rest), cached per graph.
- async/collective classification shared by the post-processors and the LHS.
- ``convert_sync_collectives``: split sync collectives into start/done pairs (what XLA's
  ``AsyncCollectiveCreator`` does before the latency hiding scheduler runs).

Everything here is linear in the graph size and uses plain Python lists for the hot loops
(numpy scalars are slow to index one at a time).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cpsched.core import opcodes
from cpsched.core.errors import InputError
from cpsched.core.graph import Collective, Graph, GraphBuilder, OpKind
from cpsched.core.scenarios import Scenarios, from_json, static

# -- speed ---------------------------------------------------------------------------------


@contextlib.contextmanager
def no_gc():
    """Pause the cyclic garbage collector: the schedulers allocate millions of small lists
    and tuples and hold no cycles, and the collector's repeated full scans of the growing
    heap otherwise cost as much as the scheduling itself on 100k-op graphs."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def without_gc(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with no_gc():
            return fn(*args, **kwargs)

    return wrapper


# -- scenarios -----------------------------------------------------------------------------


def scenario_index(scenarios: Scenarios | None, which: Any = None) -> int:
    """Index of the scenario a heuristic uses: ``which`` (name or index) or the heaviest."""
    if scenarios is None or len(scenarios) == 0:
        return 0
    if which is None:
        return int(np.argmax(scenarios.weights))  # first maximum on ties
    if isinstance(which, (int, np.integer)) and not isinstance(which, bool):
        k = int(which)
        if not -len(scenarios) <= k < len(scenarios):
            raise InputError(f"scenario index {k} is out of range 0..{len(scenarios) - 1}")
        return k % len(scenarios)
    name = str(which)
    if name in scenarios.names:
        return scenarios.names.index(name)
    if name.lstrip("-").isdigit():
        return scenario_index(scenarios, int(name))
    raise InputError(f"unknown scenario {name!r}; known: {', '.join(scenarios.names)}")


def scenario_bytes(graph: Graph, scenarios: Scenarios | None, which: Any = None) -> np.ndarray:
    """Device bytes of every buffer in the chosen scenario, ``[n_buffers]`` int64."""
    if not graph.n_buffers:
        return np.zeros(0, dtype=np.int64)
    scenarios = graph_scenarios(graph, scenarios, check=False)
    try:
        return graph.sizes(scenarios)[scenario_index(scenarios, which)]
    except InputError:
        graph_scenarios(graph, None)  # the clear message for a symbolic graph
        raise


def graph_scenarios(graph: Graph, scenarios: Scenarios | None, check: bool = True) -> Scenarios:
    """``scenarios`` if given, else the ones stored with the graph, else the static one
    (an error for a graph with symbolic sizes, unless ``check`` is off)."""
    if scenarios is not None and len(scenarios):
        return scenarios
    stored = graph.meta.get("scenarios")
    if stored:
        return from_json(dict(stored))
    if check and graph.dims:
        raise InputError(
            f"graph {graph.name} has symbolic sizes ({', '.join(graph.dims)}): "
            "give scenarios (dim values) to size its buffers"
        )
    return static()


# -- adjacency in XLA's walking order ----------------------------------------------------------


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


# -- op classification -------------------------------------------------------------------------

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


# -- sync collectives -> async pairs -------------------------------------------------------------

SPLIT_OPCODES = ("all-reduce", "all-gather", "collective-permute", "all-to-all", "reduce-scatter")
# XLA has dedicated start/done opcodes for these; the others become async-start/done.
_DEDICATED = ("all-reduce", "all-gather", "collective-permute")


def _is_splittable(graph: Graph, i: int) -> bool:
    return int(graph.kinds[i]) == OpKind.COMPUTE and graph.opcodes[i] in SPLIT_OPCODES


def convert_sync_collectives(graph: Graph, keep_inputs_live: bool = True) -> Graph:
    """Split every sync collective op into an ``ASYNC_START`` + ``ASYNC_DONE`` pair.

    For op ``x`` (opcode all-reduce / all-gather / collective-permute / all-to-all /
    reduce-scatter, kind COMPUTE):
    - ``x-start`` (opcode ``<op>-start``; all-to-all and reduce-scatter become
      ``async-start`` with attr ``async_wrapped_opcode``) takes x's operands and control
      predecessors, its flops/bytes/transient and its ``Collective``, and *defines* x's
      result buffers (the in-flight buffers);
    - ``x-done`` (``<op>-done`` / ``async-done``) has the start as its only operand, *uses*
      the in-flight buffers, and takes over x's control successors and data users; with
      ``keep_inputs_live`` it also uses x's input buffers, since the send buffer cannot be
      freed while the transfer is in flight.
    Both keep x's attrs (so ``op_name`` metadata survives) plus ``converted_from: x``.
    The input order (if any) gets ``x-start, x-done`` at x's position. Other ops, buffers
    and the graph's meta are copied unchanged. Returns the graph itself if nothing splits.
    """
    n = graph.n_ops
    split = [i for i in range(n) if _is_splittable(graph, i)]
    if not split:
        return graph
    is_split = np.zeros(n, dtype=bool)
    is_split[split] = True
    # new index of each old op (the done for a split op); the start sits right before it
    shift = np.cumsum(is_split)  # starts inserted at or before i
    new_of = np.arange(n) + shift  # old i -> new index (done for split ops)
    start_of = new_of - 1  # valid for split ops only
    names = set(graph.op_names)

    def fresh(base: str) -> str:
        name, k = base, 1
        while name in names:
            name = f"{base}.{k}"
            k += 1
        names.add(name)
        return name

    b = GraphBuilder(graph.name)
    for i in range(n):
        opc = graph.opcodes[i]
        attrs = dict(graph.op_attrs.get(i, {}))
        operands = [int(new_of[o]) for o in graph.operands(i)]
        ctrl = []
        for c in graph.control_preds(i):
            c = int(c)
            ctrl.append(int(new_of[c]))  # a split control pred finishes at its done
        if not is_split[i]:
            b.add_op(
                graph.op_names[i],
                opc,
                graph.kind(i),
                operands=operands,
                control_preds=ctrl,
                flops=graph.flops[i],
                bytes_accessed=graph.bytes_accessed[i],
                transient=graph.transient[i],
                attrs=attrs or None,
            )
            continue
        name = graph.op_names[i]
        sname, dname = fresh(f"{name}-start"), fresh(f"{name}-done")
        names.discard(name)
        if opc in _DEDICATED:
            s_op, d_op, extra = f"{opc}-start", f"{opc}-done", {}
        else:
            s_op, d_op, extra = "async-start", "async-done", {"async_wrapped_opcode": opc}
        a2 = {**attrs, **extra, "converted_from": name}
        a2.pop("is_sync", None)
        s = b.add_op(
            sname,
            s_op,
            OpKind.ASYNC_START,
            operands=operands,
            control_preds=ctrl,
            flops=graph.flops[i],
            bytes_accessed=graph.bytes_accessed[i],
            transient=graph.transient[i],
            attrs=a2,
        )
        d = b.add_op(dname, d_op, OpKind.ASYNC_DONE, operands=[s], attrs=a2)
        b.pair_async(s, d)
        c = graph.collectives.get(i)
        if c is None:
            c = Collective(
                kind=opc,
                bytes=graph.buffer_sizes[graph.defines(i)[0]]
                if graph.defines(i).size
                else graph.bytes_accessed[i],
            )
        b.set_collective(
            s, Collective(c.kind, c.bytes, c.group_size, c.replica_groups, c.channel_id, False)
        )
    # buffers: defined by the start for split ops; users of split ops become their dones
    for j in range(graph.n_buffers):
        d = int(graph.buffer_def[j])
        dnew = int(start_of[d]) if is_split[d] else int(new_of[d])
        users = []
        for u in graph.buffer_users(j):
            u = int(u)
            if is_split[u]:
                users.append(int(start_of[u]))  # the start reads the input...
                if keep_inputs_live:
                    users.append(int(new_of[u]))  # ...and it stays until the done
            else:
                users.append(int(new_of[u]))
        if is_split[d]:
            users.append(int(new_of[d]))  # the done uses the in-flight buffer
        b.add_buffer(
            dnew,
            graph.buffer_sizes[j],
            users=users,
            name=graph.buffer_names[j],
            live_in=bool(graph.buffer_live_in[j]),
            live_out=bool(graph.buffer_live_out[j]),
            space=int(graph.buffer_space[j]),
        )
    # what XLA's async form allocates besides the result, in flight from start to done:
    # the start's tuple table (8 bytes a pointer), collective-permute's two u32 contexts,
    # and an async-start's operand tuple
    for i in split:
        n_ops = len(graph.operands(i))
        opc = graph.opcodes[i]
        if opc == "all-reduce":
            state = 0
        elif opc == "all-gather":
            state = 8 * 2
        elif opc == "collective-permute":
            state = 8 * 4 + 4 + 4
        else:
            state = 8 * 2 + 8 * max(n_ops, 1)
        if state:
            b.add_buffer(
                int(start_of[i]),
                state,
                users=[int(new_of[i])],
                name=fresh(f"{graph.op_names[i]}.async_state"),
            )
    # existing async pairs
    for k in map(int, np.flatnonzero(graph.async_start >= 0)):
        b.pair_async(int(new_of[graph.async_start[k]]), int(new_of[k]))
    for k, c in graph.collectives.items():
        if not is_split[k]:
            b.set_collective(int(new_of[k]), c)
    if graph.original_order is not None:
        order = []
        for i in graph.original_order:
            if is_split[i]:
                order.extend([int(start_of[i]), int(new_of[i])])
            else:
                order.append(int(new_of[i]))
        b.original_order = order
    b.meta.update(dict(graph.meta))
    b.meta["async_collectives"] = True
    return b.build()


def pair_names(graph: Graph, original: str) -> tuple[str, str]:
    """Names of the start and done that ``convert_sync_collectives`` made from ``original``."""
    s = d = None
    for i, a in graph.op_attrs.items():
        if a.get("converted_from") == original:
            if int(graph.kinds[i]) == OpKind.ASYNC_START:
                s = graph.op_names[i]
            elif int(graph.kinds[i]) == OpKind.ASYNC_DONE:
                d = graph.op_names[i]
    if s is None or d is None:
        raise KeyError(f"{original!r} was not split into a start/done pair")
    return s, d


def positions_of(order: Sequence[int], n: int) -> list[int]:
    pos = [0] * n
    for k, i in enumerate(order):
        pos[i] = k
    return pos


__all__ = [
    "scenario_index",
    "scenario_bytes",
    "graph_scenarios",
    "adjacency",
    "Adjacency",
    "csr_lists",
    "collective_kind",
    "is_sync_collective",
    "is_async_start",
    "is_async_done",
    "is_async_collective_start",
    "is_async_collective_done",
    "custom_call_schedule",
    "is_effective_scalar",
    "is_nop",
    "convert_sync_collectives",
    "pair_names",
    "attr",
    "check_order_option",
    "positions_of",
    "COLLECTIVE_KINDS",
    "no_gc",
    "without_gc",
]
