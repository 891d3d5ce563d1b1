"""The one graph IR that every reader produces and every scheduler, simulator and writer reads.

A ``Graph`` is one schedulable computation: ops to be put in a sequence, and the buffers
(allocations) they define and use. It is immutable; arrays are integer-indexed (op ``i``,
buffer ``j``) for speed, with adjacency in CSR form (``indptr``/``indices``).

Memory semantics (shared by the simulator, the heuristics and the CP models):
- a buffer is allocated when its defining op runs and freed after its last user has run;
  so an op's inputs and outputs coexist while it runs;
- forwarding ops (get-tuple-element, bitcast, tuple elements) define no buffer: readers
  record their consumers as users of the forwarded buffer, so its lifetime stretches;
- in-place ops (dynamic-update-slice, aliased outputs) define no new buffer either: they
  use the operand's buffer, and their consumers are users of it too;
- ``live_in`` buffers (entry parameters) are allocated before the first op; ``live_out``
  buffers (program outputs, parameters that are not donated) stay until after the last op;
- ``transient[i]`` bytes exist only while op ``i`` runs (a called computation's own peak,
  a custom call's workspace);
- buffers in a non-default memory space (host memory, ``S(5)``) take no device memory.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import IntEnum
from types import MappingProxyType
from typing import Any

import numpy as np

from cpsched.core.errors import InputError, ScheduleError
from cpsched.core.plain import to_plain
from cpsched.core.scenarios import Scenarios
from cpsched.core.symbolic import SIZE_LIMIT, ZERO, SymExpr, evaluate_many

NX_IR_VERSION = 1  # version of the networkx form (``Graph.to_networkx``)


class OpKind(IntEnum):
    COMPUTE = 0
    PARAMETER = 1
    CONSTANT = 2
    ALIAS = 3  # get-tuple-element, bitcast, tuple, ...: forwards, allocates at most a table
    ASYNC_START = 4
    ASYNC_UPDATE = 5
    ASYNC_DONE = 6
    CONTROL_FLOW = 7  # while, conditional, call: runs other computations


_KIND_NAME = {k: k.name.lower().replace("_", "-") for k in OpKind}


# an op's cost fields, and a buffer's flags with their defaults, as the JSON and networkx
# layouts name them
COST_KEYS = ("flops", "bytes_accessed", "transient")
BUFFER_FLAGS = {"live_in": False, "live_out": False, "space": 0}


def op_costs(record: Mapping[str, Any]) -> dict[str, Any]:
    """``add_op``'s cost keywords from an op record of the JSON or networkx layout."""
    return {key: record.get(key, 0) for key in COST_KEYS}


def buffer_flags(record: Mapping[str, Any]) -> dict[str, Any]:
    """``add_buffer``'s flag keywords from a buffer record of the JSON or networkx layout."""
    return {key: record.get(key, default) for key, default in BUFFER_FLAGS.items()}


@dataclass(frozen=True)
class Collective:
    """Communication attributes of a collective op (sync, or the start of an async pair)."""

    kind: str  # all-reduce, all-gather, reduce-scatter, all-to-all,
    # collective-permute, send, recv, ...
    bytes: SymExpr  # payload bytes one rank sends/receives
    group_size: int = 1  # ranks in one replica group
    replica_groups: tuple[tuple[int, ...], ...] = ()
    channel_id: int | None = None
    is_sync: bool = False  # XLA's collective_backend_config.is_sync

    @classmethod
    def from_record(cls, c: Mapping[str, Any]) -> Collective:
        """From the ``collective`` record of a JSON or networkx graph (``bytes`` an int or an
        expression string, the rest optional); missing or null replica groups are none."""
        return cls(
            kind=str(c["kind"]),
            bytes=SymExpr.parse(c.get("bytes", 0)),
            group_size=int(c.get("group_size", 1)),
            replica_groups=tuple(tuple(int(x) for x in r) for r in c.get("replica_groups") or ()),
            channel_id=c.get("channel_id"),
            is_sync=bool(c.get("is_sync", False)),
        )


def _csr(lists: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    indptr = np.zeros(len(lists) + 1, dtype=np.int64)
    if lists:
        indptr[1:] = np.cumsum([len(x) for x in lists])
    indices = np.fromiter((v for x in lists for v in x), dtype=np.int64, count=int(indptr[-1]))
    return indptr, indices


def _csr_transpose(
    indptr: np.ndarray, indices: np.ndarray, n_rows_out: int
) -> tuple[np.ndarray, np.ndarray]:
    rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    order = np.argsort(indices, kind="stable")
    counts = np.bincount(indices, minlength=n_rows_out)
    out_ptr = np.zeros(n_rows_out + 1, dtype=np.int64)
    out_ptr[1:] = np.cumsum(counts)
    return out_ptr, rows[order].astype(np.int64)


@dataclass(frozen=True, eq=False)
class Graph:
    name: str
    # ops
    op_names: tuple[str, ...]
    opcodes: tuple[str, ...]
    kinds: np.ndarray  # [n_ops] int8 OpKind
    operands_ptr: np.ndarray  # data operands (unique op indices, in operand order)
    operands_idx: np.ndarray
    control_ptr: np.ndarray  # control predecessors
    control_idx: np.ndarray
    async_start: np.ndarray  # [n_ops] for update/done: index of its start, else -1
    async_done: np.ndarray  # [n_ops] for start: index of its done, else -1
    flops: tuple[SymExpr, ...]
    bytes_accessed: tuple[SymExpr, ...]
    transient: tuple[SymExpr, ...]
    # buffers
    buffer_names: tuple[str, ...]
    buffer_sizes: tuple[SymExpr, ...]
    buffer_def: np.ndarray  # [n_buffers] defining op
    buffer_users_ptr: np.ndarray
    buffer_users_idx: np.ndarray
    buffer_live_in: np.ndarray  # [n_buffers] bool
    buffer_live_out: np.ndarray  # [n_buffers] bool
    buffer_space: np.ndarray  # [n_buffers] int8 memory space (0 = device)
    # sparse extras
    collectives: Mapping[int, Collective] = field(default_factory=dict)
    op_attrs: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)
    original_order: tuple[int, ...] | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    # The program this graph is the entry computation of (an HLO module, so that its
    # while bodies, branches and called computations are scheduled too); None for a graph
    # built any other way. Set only by the code that read the graph (``attach_program``);
    # a derived graph (``with_``, a transform) does not keep it: it is no longer that
    # program's entry.
    program: Any = field(default=None, repr=False)
    # The file this graph was read from (``cpsched.read`` of a path), so that writing a
    # schedule never writes over the input; None for a graph read from text or built. Like
    # ``program``, set only by the reader (``attach_source_file``) and not kept by ``with_``.
    source_file: str | None = field(default=None, repr=False)
    # -- derived structure (computed once in __post_init__) -------------------------------
    pred_ptr: np.ndarray = field(init=False, repr=False)  # all dependences, CSR by successor
    pred_idx: np.ndarray = field(init=False, repr=False)
    succ_ptr: np.ndarray = field(init=False, repr=False)
    succ_idx: np.ndarray = field(init=False, repr=False)
    defs_ptr: np.ndarray = field(init=False, repr=False)  # buffers each op defines
    defs_idx: np.ndarray = field(init=False, repr=False)
    uses_ptr: np.ndarray = field(init=False, repr=False)  # buffers each op uses
    uses_idx: np.ndarray = field(init=False, repr=False)
    _index: dict[str, int] = field(init=False, repr=False)
    _size_cache: dict[Any, Any] = field(init=False, repr=False)

    def __post_init__(self):
        n = len(self.op_names)
        set_ = object.__setattr__
        set_(self, "collectives", MappingProxyType(dict(self.collectives)))
        set_(
            self,
            "op_attrs",
            MappingProxyType({k: MappingProxyType(dict(v)) for k, v in self.op_attrs.items()}),
        )
        set_(self, "meta", MappingProxyType(dict(self.meta)))
        for arr in (
            "kinds",
            "operands_ptr",
            "operands_idx",
            "control_ptr",
            "control_idx",
            "async_start",
            "async_done",
            "buffer_def",
            "buffer_users_ptr",
            "buffer_users_idx",
            "buffer_live_in",
            "buffer_live_out",
            "buffer_space",
        ):
            getattr(self, arr).setflags(write=False)
        # all dependences: data operands, control predecessors, def->user of used buffers,
        # async start->update/done.
        users_rows = np.repeat(self.buffer_def, np.diff(self.buffer_users_ptr))
        extra_src = [users_rows]
        extra_dst = [self.buffer_users_idx]
        a = np.flatnonzero(self.async_start >= 0)
        extra_src.append(self.async_start[a])
        extra_dst.append(a)
        src = np.concatenate(
            [
                np.repeat(np.arange(n), np.diff(self.operands_ptr)),
                np.repeat(np.arange(n), np.diff(self.control_ptr)),
            ]
            + extra_dst
        )
        dst_pred = np.concatenate([self.operands_idx, self.control_idx] + extra_src)
        # edge pred -> succ, deduplicated, self-loops dropped
        keep = src != dst_pred
        # one int64 key per edge makes deduplication a 1-D unique (much faster than axis=0)
        key = np.unique(dst_pred[keep].astype(np.int64) * max(n, 1) + src[keep])
        preds_src, succs = key // max(n, 1), key % max(n, 1)
        order = np.argsort(succs, kind="stable")
        pred_ptr = np.zeros(n + 1, dtype=np.int64)
        pred_ptr[1:] = np.cumsum(np.bincount(succs, minlength=n))
        set_(self, "pred_ptr", pred_ptr)
        set_(self, "pred_idx", preds_src[order].astype(np.int64))
        succ_ptr = np.zeros(n + 1, dtype=np.int64)
        succ_ptr[1:] = np.cumsum(np.bincount(preds_src, minlength=n))
        order = np.argsort(preds_src, kind="stable")
        set_(self, "succ_ptr", succ_ptr)
        set_(self, "succ_idx", succs[order].astype(np.int64))
        defs_ptr = np.zeros(n + 1, dtype=np.int64)
        defs_ptr[1:] = np.cumsum(np.bincount(self.buffer_def, minlength=n))
        set_(self, "defs_ptr", defs_ptr)
        set_(self, "defs_idx", np.argsort(self.buffer_def, kind="stable").astype(np.int64))
        uptr, uidx = _csr_transpose(self.buffer_users_ptr, self.buffer_users_idx, n)
        set_(self, "uses_ptr", uptr)
        set_(self, "uses_idx", uidx)
        set_(self, "_index", {name: i for i, name in enumerate(self.op_names)})
        set_(self, "_size_cache", {})
        for arr in (
            "pred_ptr",
            "pred_idx",
            "succ_ptr",
            "succ_idx",
            "defs_ptr",
            "defs_idx",
            "uses_ptr",
            "uses_idx",
        ):
            getattr(self, arr).setflags(write=False)

    # -- sizes and lookups ---------------------------------------------------------------
    @property
    def n_ops(self) -> int:
        return len(self.op_names)

    @property
    def n_buffers(self) -> int:
        return len(self.buffer_names)

    @property
    def dims(self) -> tuple[str, ...]:
        out: set[str] = set()
        for group in (self.buffer_sizes, self.transient, self.flops, self.bytes_accessed):
            for e in set(group):
                out.update(e.dims)
        for c in self.collectives.values():
            out.update(c.bytes.dims)
        return tuple(sorted(out))

    def op_index(self, name: str) -> int:
        try:
            return self._index[name]
        except KeyError:
            raise KeyError(f"no op named {name!r} in {self.name}") from None

    def operands(self, i: int) -> np.ndarray:
        return self.operands_idx[self.operands_ptr[i] : self.operands_ptr[i + 1]]

    def control_preds(self, i: int) -> np.ndarray:
        return self.control_idx[self.control_ptr[i] : self.control_ptr[i + 1]]

    def preds(self, i: int) -> np.ndarray:
        """Every op that must come before ``i`` directly (data, control, buffer, async)."""
        return self.pred_idx[self.pred_ptr[i] : self.pred_ptr[i + 1]]

    def succs(self, i: int) -> np.ndarray:
        return self.succ_idx[self.succ_ptr[i] : self.succ_ptr[i + 1]]

    def defines(self, i: int) -> np.ndarray:
        """Buffers op ``i`` defines."""
        return self.defs_idx[self.defs_ptr[i] : self.defs_ptr[i + 1]]

    def uses(self, i: int) -> np.ndarray:
        """Buffers op ``i`` uses (reads or aliases), forwarding already resolved."""
        return self.uses_idx[self.uses_ptr[i] : self.uses_ptr[i + 1]]

    def buffer_users(self, j: int) -> np.ndarray:
        return self.buffer_users_idx[self.buffer_users_ptr[j] : self.buffer_users_ptr[j + 1]]

    def kind(self, i: int) -> OpKind:
        return OpKind(int(self.kinds[i]))

    def cost_strings(self, i: int) -> dict[str, str]:
        """Op ``i``'s non-zero ``flops``, ``bytes_accessed`` and ``transient`` as expression
        strings, in that order: how the JSON and networkx layouts write them."""
        out = {}
        for key in COST_KEYS:
            e = getattr(self, key)[i]
            if e.terms:
                out[key] = str(e)
        return out

    def attrs(self, i: int) -> Mapping[str, Any]:
        return self.op_attrs.get(i, MappingProxyType({}))

    def sizes(self, scenarios: Scenarios) -> np.ndarray:
        """Device bytes of every buffer per scenario, ``[n_scenarios, n_buffers]`` int64.
        Raises ``InputError`` naming the buffer when the sizes of a scenario sum past
        2^62 bytes (so that no sum of them wraps around int64)."""
        return self._eval(self.buffer_sizes, scenarios, device_only=True)

    def transient_bytes(self, scenarios: Scenarios) -> np.ndarray:
        """Scratch bytes of every op per scenario; with every buffer's bytes they stay
        within 2^62 (``InputError`` naming the op otherwise)."""
        return self._eval(self.transient, scenarios)

    def _eval(self, exprs, scenarios: Scenarios, device_only: bool = False) -> np.ndarray:
        # the shape too: with no dims every table's bytes are empty, whatever its rows
        key = (id(exprs), scenarios.dims, scenarios.values.shape, scenarios.values.tobytes())
        hit = self._size_cache.get(key)
        if hit is None:
            # floating point first: it does not wrap, so it finds what int64 cannot hold
            with np.errstate(over="ignore", invalid="ignore"):
                approx = evaluate_many(exprs, scenarios.dims, scenarios.values, dtype=float)
            if device_only:
                approx = np.where(self.buffer_space[None, :] == 0, approx, 0.0)
                self._check_total(approx, 0.0, scenarios, self.buffer_names, "buffers")
            elif len(exprs):
                base = self.sizes(scenarios).sum(axis=1, dtype=float)
                self._check_total(approx, base, scenarios, self.op_names, "ops")
            hit = evaluate_many(exprs, scenarios.dims, scenarios.values)
            if device_only:
                hit = np.where(self.buffer_space[None, :] == 0, hit, 0)
            hit.setflags(write=False)
            self._size_cache[key] = hit
        return hit

    def _check_total(
        self, approx: np.ndarray, base, scenarios: Scenarios, names: Sequence[str], what: str
    ) -> None:
        """Buffers: their running sum stays within 2^62 bytes; ops: each op's scratch
        bytes plus every buffer (``base``) does."""
        if not approx.size:
            return
        run = (
            np.cumsum(approx, axis=1)
            if what == "buffers"
            else approx + np.asarray(base, dtype=float)[:, None]
        )
        over = ~(run <= SIZE_LIMIT)  # NaN (inf - inf) counts as over
        if not over.any():
            return
        s, j = (int(x[0]) for x in np.nonzero(over))
        where = f" in scenario {scenarios.names[s]}" if scenarios.dims else ""
        if what == "buffers" and not approx[s, j] <= SIZE_LIMIT:
            reason = f"buffer {names[j]} has {approx[s, j]:.4g} bytes{where}"
        elif what == "buffers":
            reason = f"the buffers up to {names[j]} hold {run[s, j]:.4g} bytes{where}"
        else:
            reason = (
                f"op {names[j]}: its scratch bytes ({approx[s, j]:.4g}) and all "
                f"buffers hold {run[s, j]:.4g} bytes{where}"
            )
        raise InputError(f"{self.name}: {reason}, past the 2^62-byte limit")

    def topological_order(self) -> list[int]:
        """A topological order (Kahn, smallest index first among ready ops)."""
        n = self.n_ops
        indeg = np.diff(self.pred_ptr).astype(np.int64)
        ready = [i for i in range(n) if indeg[i] == 0]
        heapq.heapify(ready)
        out = []
        succ_ptr, succ_idx = self.succ_ptr, self.succ_idx
        while ready:
            i = heapq.heappop(ready)
            out.append(i)
            for s in succ_idx[succ_ptr[i] : succ_ptr[i + 1]]:
                indeg[s] -= 1
                if indeg[s] == 0:
                    heapq.heappush(ready, int(s))
        if len(out) != n:
            stuck = [self.op_names[i] for i in range(n) if indeg[i] > 0]
            raise InputError(
                f"graph {self.name} has a cycle through {', '.join(stuck[:5])}"
                + (" ..." if len(stuck) > 5 else "")
            )
        return out

    def default_order(self) -> list[int]:
        """The graph's own order if it has one, else a topological order."""
        return (
            list(self.original_order)
            if self.original_order is not None
            else self.topological_order()
        )

    def to_networkx(self):
        """This graph as a ``networkx.DiGraph``: op names as nodes, sizes, costs and symbolic
        sizes as attributes (``cpsched.core.nx_graph``; ``cpsched.from_networkx`` reads it
        back)."""
        # networkx costs 0.1 s to import and nothing else in the core needs it
        import networkx as nx

        names = self.op_names
        G = nx.DiGraph(name=self.name, cpsched_ir=NX_IR_VERSION)
        if self.original_order is not None:
            G.graph["order"] = [names[i] for i in self.original_order]
        meta = to_plain(dict(self.meta))
        if "scenarios" in meta:
            G.graph["scenarios"] = meta.pop("scenarios")
        if meta:
            G.graph["meta"] = meta
        for i in range(self.n_ops):
            attrs: dict[str, Any] = {"opcode": self.opcodes[i], "kind": _KIND_NAME[self.kind(i)]}
            defined = [int(j) for j in self.defines(i)]
            size = ZERO
            for j in defined:
                if self.buffer_space[j] == 0:
                    size = size + self.buffer_sizes[j]
            attrs["size"] = str(size)
            attrs["buffers"] = [
                {
                    "name": self.buffer_names[j],
                    "size": str(self.buffer_sizes[j]),
                    "users": [names[u] for u in self.buffer_users(j)],
                    "live_in": bool(self.buffer_live_in[j]),
                    "live_out": bool(self.buffer_live_out[j]),
                    "space": int(self.buffer_space[j]),
                }
                for j in defined
            ]
            attrs.update(self.cost_strings(i))
            extra = to_plain(dict(self.attrs(i)))
            if "duration" in extra:
                attrs["duration"] = extra["duration"]
            if extra:
                attrs["attrs"] = extra
            c = self.collectives.get(i)
            if c is not None:
                attrs["collective"] = {
                    "kind": c.kind,
                    "bytes": str(c.bytes),
                    "group_size": c.group_size,
                    "replica_groups": [list(r) for r in c.replica_groups],
                    "channel_id": c.channel_id,
                    "is_sync": c.is_sync,
                }
            if self.async_start[i] >= 0:
                attrs["async_start"] = names[self.async_start[i]]
            G.add_node(names[i], **attrs)
        for i in range(self.n_ops):
            for k, o in enumerate(self.operands(i)):
                G.add_edge(names[o], names[i], operand=k)
            for c in self.control_preds(i):
                G.add_edge(names[c], names[i])
                G.edges[names[c], names[i]]["control"] = True
            if self.async_start[i] >= 0:
                G.add_edge(names[self.async_start[i]], names[i])
                G.edges[names[self.async_start[i]], names[i]]["async"] = True
        for j in range(self.n_buffers):
            d = names[self.buffer_def[j]]
            for u in self.buffer_users(j):
                G.add_edge(d, names[u])
                G.edges[d, names[u]].setdefault("buffers", []).append(self.buffer_names[j])
        return G

    def with_(self, **changes) -> Graph:
        """A copy with some fields replaced (the IR is immutable); without ``program`` and
        ``source_file`` unless given."""
        return replace(self, **{"program": None, "source_file": None, **changes})


# Memory spaces are stored as int8; 0 is the device, XLA's host space is 5.
MAX_SPACE = 127


def check_duration(value: Any, what: str) -> float:
    """``value`` as an op time: a finite number >= 0 (a string such as ``"abc"``, NaN or a
    negative time is an input error, not a negative makespan later)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputError(f"{what} must be a number, not {type(value).__name__} {value!r}")
    try:
        v = float(value)
    except OverflowError:
        v = float("inf")
    if not (np.isfinite(v) and v >= 0):
        raise InputError(f"{what} must be a finite number >= 0 (got {value!r})")
    return v


def _flag(value: Any, what: str) -> bool:
    # a string such as "no" is true to bool(): only true/false (and 0/1) are flags
    if isinstance(value, (bool, np.bool_)) or (
        isinstance(value, (int, np.integer)) and value in (0, 1)
    ):
        return bool(value)
    raise InputError(f"{what} must be true or false, not {value!r}")


class GraphBuilder:
    """Mutable helper that readers and generators use to assemble a ``Graph``."""

    def __init__(self, name: str):
        self.name = name
        self._names: list[str] = []
        self._index: dict[str, int] = {}
        self._opcodes: list[str] = []
        self._kinds: list[int] = []
        self._operands: list[list[int]] = []
        self._control: list[list[int]] = []
        self._flops: list[SymExpr] = []
        self._bytes: list[SymExpr] = []
        self._transient: list[SymExpr] = []
        self._bnames: list[str] = []
        self._bsizes: list[SymExpr] = []
        self._bdef: list[int] = []
        self._busers: list[list[int]] = []
        self._buser_sets: list[set[int]] = []  # duplicate checks in O(1)
        self._blive_in: list[bool] = []
        self._blive_out: list[bool] = []
        self._bspace: list[int] = []
        self._async: list[tuple[int, int]] = []  # (start, update-or-done)
        self.collectives: dict[int, Collective] = {}
        self.op_attrs: dict[int, dict[str, Any]] = {}
        self.original_order: list[int] | None = None
        self.meta: dict[str, Any] = {}

    @property
    def n_ops(self) -> int:
        return len(self._names)

    def index(self, name_or_index: str | int) -> int:
        if isinstance(name_or_index, (int, np.integer)):
            return int(name_or_index)
        try:
            return self._index[name_or_index]
        except KeyError:
            raise InputError(f"unknown op {name_or_index!r}") from None

    def has_op(self, name: str) -> bool:
        return name in self._index

    def add_op(
        self,
        name: str,
        opcode: str,
        kind: OpKind = OpKind.COMPUTE,
        operands: Iterable[str | int] = (),
        control_preds: Iterable[str | int] = (),
        flops: SymExpr | int | str = 0,
        bytes_accessed: SymExpr | int | str = 0,
        transient: SymExpr | int | str = 0,
        attrs: Mapping[str, Any] | None = None,
    ) -> int:
        if name in self._index:
            raise InputError(f"op name {name!r} is defined twice")
        i = len(self._names)
        self._names.append(name)
        self._index[name] = i
        self._opcodes.append(opcode)
        try:
            kind = OpKind(kind)
        except ValueError:
            raise InputError(f"op {name}: unknown kind {kind!r}") from None
        self._kinds.append(int(kind))
        ops: list[int] = []
        for o in operands:
            o = self.index(o)
            if o not in ops:
                ops.append(o)
        self._operands.append(ops)
        self._control.append(sorted({self.index(c) for c in control_preds}))
        self._flops.append(SymExpr.parse(flops))
        self._bytes.append(SymExpr.parse(bytes_accessed))
        self._transient.append(SymExpr.parse(transient))
        if attrs:
            self.op_attrs[i] = dict(attrs)
        return i

    def add_operand(self, op: str | int, operand: str | int) -> None:
        op, operand = self.index(op), self.index(operand)
        if operand not in self._operands[op]:
            self._operands[op].append(operand)

    def add_control_pred(self, op: str | int, pred: str | int) -> None:
        op, pred = self.index(op), self.index(pred)
        if pred not in self._control[op]:
            self._control[op].append(pred)

    def set_transient(self, op: str | int, size: SymExpr | int | str) -> None:
        self._transient[self.index(op)] = SymExpr.parse(size)

    def add_buffer(
        self,
        defining_op: str | int,
        size: SymExpr | int | str,
        users: Iterable[str | int] = (),
        name: str | None = None,
        live_in: bool = False,
        live_out: bool = False,
        space: int = 0,
    ) -> int:
        d = self.index(defining_op)
        j = len(self._bnames)
        self._bnames.append(
            name
            if name is not None
            else (self._names[d] if j == 0 or self._bdef[-1] != d else f"{self._names[d]}#{j}")
        )
        self._bsizes.append(SymExpr.parse(size))
        self._bdef.append(d)
        us: list[int] = []
        seen: set[int] = {d}
        for u in users:
            u = self.index(u)
            if u not in seen:
                seen.add(u)
                us.append(u)
        self._busers.append(us)
        self._buser_sets.append(seen)
        where = f"buffer {self._bnames[j]}"
        self._blive_in.append(_flag(live_in, f"{where}: live_in"))
        self._blive_out.append(_flag(live_out, f"{where}: live_out"))
        if isinstance(space, bool) or not isinstance(space, (int, np.integer)):
            raise InputError(f"{where}: space must be an integer, not {space!r}")
        self._bspace.append(int(space))
        return j

    def add_buffer_user(self, buffer: int, user: str | int) -> None:
        u = self.index(user)
        seen = self._buser_sets[buffer]
        if u not in seen:
            seen.add(u)
            self._busers[buffer].append(u)

    def set_live_out(self, buffer: int, value: bool = True) -> None:
        self._blive_out[buffer] = value

    def pair_async(self, start: str | int, done: str | int) -> None:
        """Declare ``done`` (or an async-update) as belonging to the async op ``start``."""
        self._async.append((self.index(start), self.index(done)))

    def set_collective(self, op: str | int, collective: Collective) -> None:
        self.collectives[self.index(op)] = collective

    def _check(self) -> None:
        """What no reader may pass on: an op that depends on itself, a memory space outside
        0..127, a duration that is not a finite non-negative number."""
        names = self._names
        for i, (ops, ctl) in enumerate(zip(self._operands, self._control)):
            if i in ops or i in ctl:
                what = "operands" if i in ops else "control predecessors"
                raise InputError(f"op {names[i]}: is one of its own {what} (a self-loop)")
        for s, d in self._async:
            if s == d:
                raise InputError(f"op {names[d]}: names itself as its async start")
        for j, space in enumerate(self._bspace):
            if not 0 <= space <= MAX_SPACE:
                raise InputError(
                    f"buffer {self._bnames[j]}: memory space {space} is outside 0..{MAX_SPACE}"
                )
        for i, a in self.op_attrs.items():
            if "duration" in a:
                check_duration(a["duration"], f"op {names[i]}: duration")

    def build(self) -> Graph:
        self._check()
        n = len(self._names)
        async_start = np.full(n, -1, dtype=np.int64)
        async_done = np.full(n, -1, dtype=np.int64)
        for s, d in self._async:
            if async_start[d] >= 0 and async_start[d] != s:
                raise InputError(f"{self._names[d]} is paired with two async starts")
            async_start[d] = s
            if self._kinds[d] == OpKind.ASYNC_DONE:
                if async_done[s] >= 0 and async_done[s] != d:
                    raise InputError(f"{self._names[s]} has two async dones")
                async_done[s] = d
        op_ptr, op_idx = _csr(self._operands)
        c_ptr, c_idx = _csr(self._control)
        u_ptr, u_idx = _csr(self._busers)
        order = None
        if self.original_order is not None:
            order = tuple(int(i) for i in self.original_order)
        g = Graph(
            name=self.name,
            op_names=tuple(self._names),
            opcodes=tuple(self._opcodes),
            kinds=np.asarray(self._kinds, dtype=np.int8),
            operands_ptr=op_ptr,
            operands_idx=op_idx,
            control_ptr=c_ptr,
            control_idx=c_idx,
            async_start=async_start,
            async_done=async_done,
            flops=tuple(self._flops),
            bytes_accessed=tuple(self._bytes),
            transient=tuple(self._transient),
            buffer_names=tuple(self._bnames),
            buffer_sizes=tuple(self._bsizes),
            buffer_def=np.asarray(self._bdef, dtype=np.int64),
            buffer_users_ptr=u_ptr,
            buffer_users_idx=u_idx,
            buffer_live_in=np.asarray(self._blive_in, dtype=bool),
            buffer_live_out=np.asarray(self._blive_out, dtype=bool),
            buffer_space=np.asarray(self._bspace, dtype=np.int8),
            collectives=self.collectives,
            op_attrs=self.op_attrs,
            original_order=order,
            meta=self.meta,
        )
        g.topological_order()  # raises InputError on a cycle
        if order is not None:
            validate_order(g, order, what="the input's own schedule")
        return g


__all__ = ["Graph", "GraphBuilder", "OpKind", "Collective", "ZERO"]


def attach_program(graph: Graph, program: Any) -> Graph:
    """Record that ``graph``, just read from ``program`` (a parsed HLO module), is its entry
    computation, and return it. Only the reader that built ``graph`` calls this, before it
    hands the graph out: a graph is immutable once shared."""
    object.__setattr__(graph, "program", program)
    return graph


def attach_source_file(graph: Graph, path: str) -> Graph:
    """Record that ``graph`` was just read from the file ``path``, and return it. Only the
    reader that built ``graph`` calls this, before it hands the graph out."""
    object.__setattr__(graph, "source_file", path)
    return graph


def validate_order(graph: Graph, order: Sequence[int] | np.ndarray, what: str = "schedule") -> None:
    """Raise ``ScheduleError`` unless ``order`` is a permutation of the ops that respects
    data and control dependences and puts every async start before its update/done."""
    n = graph.n_ops
    arr = np.asarray(list(order), dtype=np.int64)
    if arr.size != n:
        raise ScheduleError(f"{what} of {graph.name} has {arr.size} ops, the graph has {n}")
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        raise ScheduleError(f"{what} of {graph.name} names op index outside 0..{n - 1}")
    pos = np.full(n, -1, dtype=np.int64)
    pos[arr] = np.arange(n)
    if (pos < 0).any():
        missing = graph.op_names[int(np.flatnonzero(pos < 0)[0])]
        raise ScheduleError(f"{what} of {graph.name} repeats an op and misses {missing!r}")
    succ_rows = np.repeat(np.arange(n), np.diff(graph.pred_ptr))
    bad = pos[graph.pred_idx] >= pos[succ_rows]
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        u, v = int(graph.pred_idx[k]), int(succ_rows[k])
        why = "an async start after its done" if graph.async_start[v] == u else "a dependence"
        raise ScheduleError(
            f"{what} of {graph.name} breaks {why}: {graph.op_names[v]!r} "
            f"(step {pos[v]}) comes before {graph.op_names[u]!r} (step {pos[u]})"
        )
