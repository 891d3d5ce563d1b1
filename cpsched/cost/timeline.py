"""Timeline simulator: when every op runs under an order, and how much communication hides.

Model (one device, as XLA's GPU runtime issues work):

- one **compute stream** runs the ops of the order back to back; an op starts when the
  previous one ends and its inputs are complete. Inputs are produced on the compute stream
  itself or arrive through an async done, so the only waits are at dones;
- every async **start** launches its transfer when it is issued (its own compute-stream
  slot has ended, so its operands are ready) on its stream, FIFO per stream; its **done**
  waits on the compute stream until the transfer has ended;
- streams: collectives share one ``comm`` stream (``comm_streams="shared"``, XLA GPU's
  default of one collective in flight) or get one stream per kind (``"per-kind"``:
  ``comm:all-reduce``, ``comm:all-gather``, ...); host copies use a ``copy`` stream and
  other async ops (``fusion-start``) an ``async-compute`` stream;
- a **sync collective** (a plain collective op, or an async pair marked ``is_sync``) runs
  on the compute stream and blocks it for its transfer time.

With ``D`` the prefix sums of the compute-stream durations and ``F`` the total wait so
far, op ``k`` of the order ends at ``D[k] + F[k]``; only async events are visited one by
one, each vectorised over scenarios, so a 100k-op graph takes a fraction of a second.

Reported per scenario (``Timeline``): makespan; exposed communication (time the compute
stream waits on collective dones, plus sync collective time); total compute, comm, copy
and async-compute time; per-op start/end; and for every async pair the start and done
index in the order, their distance in instructions, the transfer's begin/end/time, the
wait at the done, and the overlapped time (the part of the transfer during which the
compute stream was running ops, not waiting nor running a sync collective).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cpsched.analysis.validate import validate_order
from cpsched.core.errors import InputError
from cpsched.core.graph import Graph, OpKind
from cpsched.core.scenarios import Scenarios, static
from cpsched.cost.model import (
    STREAM_ASYNC_COMPUTE,
    STREAM_COPY,
    UNIT_FILE,
    UNIT_SECONDS,
    Costs,
    async_class,
    default_device,
    estimate,
    is_sync_collective,
)

COMPUTE_STREAM = "compute"
_K_START = int(OpKind.ASYNC_START)


def default_stream(cls: str, comm_streams: str = "shared") -> str:
    """Stream name for a transfer class (``collective:<kind>``, ``copy``, ``async-compute``)."""
    if cls.startswith("collective:"):
        if comm_streams == "shared":
            return "comm"
        if comm_streams == "per-kind":
            return "comm:" + cls.split(":", 1)[1]
        raise InputError(f"comm_streams is 'shared' or 'per-kind', not {comm_streams!r}")
    return cls


# How a ``Timelines`` field becomes its ``Timeline`` field: the totals (one figure per
# scenario, in the order ``Timeline.summary`` lists them), the arrays with a row per scenario,
# and what all scenarios share.
_TOTALS = tuple(
    "makespan compute_time comm_time copy_time async_compute_time exposed_comm exposed_copy "
    "exposed_async_compute idle".split()
)
_PER_SCENARIO = tuple("start end transfer_begin transfer_end transfer_time wait overlapped".split())
_SHARED = tuple(
    "graph unit order streams pair_start pair_done pair_start_index pair_done_index pair_class "
    "pair_stream pair_sync device".split()
)


@dataclass(frozen=True)
class Timeline:
    """One scenario's timeline. Times are in ``unit`` (see ``cpsched.cost.model``)."""

    graph: Graph
    scenario: str
    unit: str
    order: np.ndarray  # [n] op at each step
    start: np.ndarray  # [n_ops] compute-stream start (after any wait)
    end: np.ndarray  # [n_ops]
    streams: tuple[str, ...]  # stream names; 0 is the compute stream
    makespan: float
    compute_time: float  # sum of compute-stream op times (no sync collectives)
    comm_time: float  # sum of collective transfer times (async and sync)
    copy_time: float
    async_compute_time: float
    exposed_comm: float  # waits on collective dones + sync collective time
    exposed_copy: float
    exposed_async_compute: float
    idle: float  # time the compute stream waits on dones
    # async pairs and sync collectives, one row each, in order of their start
    pair_start: np.ndarray  # op index of the start (or of the sync collective)
    pair_done: np.ndarray  # op index of the done (-1: sync, or no done)
    pair_start_index: np.ndarray  # step of the start in the order
    pair_done_index: np.ndarray  # step of the done (-1 if none)
    pair_class: tuple[str, ...]  # collective:<kind> | copy | async-compute
    pair_stream: np.ndarray  # index into ``streams`` (0 for sync collectives)
    pair_sync: np.ndarray  # bool
    transfer_begin: np.ndarray
    transfer_end: np.ndarray
    transfer_time: np.ndarray
    wait: np.ndarray  # compute-stream wait at the done (sync: transfer time)
    overlapped: np.ndarray  # transfer time hidden behind compute
    device: str = ""  # the cost model's device preset (``Costs.device``): names the times

    @property
    def model(self) -> str:
        """What the times come from, for a heading: ``h100 model``, ``the input's op times``."""
        return model_label(self.device, self.unit)

    @property
    def distance(self) -> np.ndarray:
        """Done index minus start index, in instructions (0 for sync collectives)."""
        return np.where(self.pair_done_index >= 0, self.pair_done_index - self.pair_start_index, 0)

    @property
    def n_pairs(self) -> int:
        return int(self.pair_start.size)

    def stream_of_op(self, i: int) -> str:
        """Every op of the order runs on the compute stream (async starts and dones only
        issue and wait); transfers run on ``streams[pair_stream[k]]``."""
        return COMPUTE_STREAM

    def summary(self) -> dict:
        return {
            "scenario": self.scenario,
            "unit": self.unit,
            **{key: getattr(self, key) for key in _TOTALS},
            "overlapped_comm": float(self.overlapped[self._is_comm()].sum()),
            "async_pairs": int((~self.pair_sync).sum()),
            "sync_collectives": int(self.pair_sync.sum()),
        }

    def _is_comm(self) -> np.ndarray:
        return np.array([c.startswith("collective:") for c in self.pair_class], dtype=bool)

    def pair_rows(self) -> list[dict]:
        """The seed's table (start, done, distance) plus transfer, overlap and wait."""
        names = self.graph.op_names
        dist = self.distance
        rows = []
        for k in range(self.n_pairs):
            d = int(self.pair_done[k])
            rows.append(
                {
                    "start": names[int(self.pair_start[k])],
                    "done": names[d] if d >= 0 else None,
                    "class": self.pair_class[k],
                    "stream": self.streams[int(self.pair_stream[k])],
                    "sync": bool(self.pair_sync[k]),
                    "start_index": int(self.pair_start_index[k]),
                    "done_index": int(self.pair_done_index[k]),
                    "distance": int(dist[k]),
                    "transfer_begin": float(self.transfer_begin[k]),
                    "transfer_end": float(self.transfer_end[k]),
                    "transfer_time": float(self.transfer_time[k]),
                    "overlapped": float(self.overlapped[k]),
                    "exposed": float(self.wait[k]),
                }
            )
        return rows

    def format_pairs(self, scale: float | None = None) -> str:
        """A plain-text table like the seed's (one row per async pair / sync collective).

        Times are printed in microseconds for seconds-based timelines, else as is."""
        if scale is None:
            scale = 1e6 if self.unit == UNIT_SECONDS else 1.0
        tu = "us" if self.unit == UNIT_SECONDS else self.unit
        head = [
            "start",
            "done",
            "start#",
            "done#",
            "distance",
            f"transfer[{tu}]",
            f"overlap[{tu}]",
            f"exposed[{tu}]",
        ]
        rows = [head]
        for r in self.pair_rows():
            rows.append(
                [
                    r["start"],
                    r["done"] or "(sync)",
                    str(r["start_index"]),
                    str(r["done_index"]) if r["done_index"] >= 0 else "-",
                    str(r["distance"]),
                    f"{r['transfer_time'] * scale:.3f}",
                    f"{r['overlapped'] * scale:.3f}",
                    f"{r['exposed'] * scale:.3f}",
                ]
            )
        widths = [max(len(row[c]) for row in rows) for c in range(len(head))]
        return "\n".join(
            "  ".join(
                v.ljust(w) if c < 2 else v.rjust(w) for c, (v, w) in enumerate(zip(row, widths))
            )
            for row in rows
        )


@dataclass(frozen=True)
class Timelines:
    """Timelines of one order for every scenario; ``timelines[s]`` is a ``Timeline``."""

    graph: Graph
    scenarios: Scenarios
    unit: str
    order: np.ndarray
    start: np.ndarray  # [S, n_ops]
    end: np.ndarray  # [S, n_ops]
    streams: tuple[str, ...]
    makespan: np.ndarray  # [S]
    compute_time: np.ndarray
    comm_time: np.ndarray
    copy_time: np.ndarray
    async_compute_time: np.ndarray
    exposed_comm: np.ndarray
    exposed_copy: np.ndarray
    exposed_async_compute: np.ndarray
    idle: np.ndarray
    pair_start: np.ndarray  # [P]
    pair_done: np.ndarray
    pair_start_index: np.ndarray
    pair_done_index: np.ndarray
    pair_class: tuple[str, ...]
    pair_stream: np.ndarray
    pair_sync: np.ndarray
    transfer_begin: np.ndarray  # [S, P]
    transfer_end: np.ndarray
    transfer_time: np.ndarray
    wait: np.ndarray
    overlapped: np.ndarray
    device: str = ""
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def model(self) -> str:
        """What the times come from, for a heading (``Timeline.model``)."""
        return model_label(self.device, self.unit)

    def __len__(self) -> int:
        return len(self.scenarios)

    def __iter__(self):
        return (self[s] for s in range(len(self)))

    def __getitem__(self, s: int | str) -> Timeline:
        if isinstance(s, str):
            s = self.scenarios.names.index(s)
        s = int(s)
        hit = self._cache.get(s)
        if hit is None:
            fields: dict[str, Any] = {key: getattr(self, key) for key in _SHARED}
            fields.update((key, getattr(self, key)[s]) for key in _PER_SCENARIO)
            fields.update((key, float(getattr(self, key)[s])) for key in _TOTALS)
            hit = Timeline(scenario=self.scenarios.names[s], **fields)
            self._cache[s] = hit
        return hit

    @property
    def expected_makespan(self) -> float:
        """Makespan averaged with the scenario weights."""
        return float(self.scenarios.weights @ self.makespan)

    @property
    def expected_exposed_comm(self) -> float:
        return float(self.scenarios.weights @ self.exposed_comm)

    def summaries(self) -> list[dict]:
        return [t.summary() for t in self]


def model_label(device: str, unit: str) -> str:
    """What a time figure comes from, for a column heading or an axis: ``h100 model`` (the
    device preset the cost model used), ``the input's op times`` (a node-link file's own
    durations), or ``cost model`` where the preset is not known.

    >>> model_label("h100", "s"), model_label("xla-approx", "xla"), model_label("h100", "file")
    ('h100 model', 'xla-approx model', "the input's op times")
    """
    if unit == UNIT_FILE:
        return "the input's op times"
    return f"{device} model" if device else "cost model"


def _positions(order: np.ndarray, n: int) -> np.ndarray:
    pos = np.full(n, -1, dtype=np.int64)
    pos[order] = np.arange(order.size, dtype=np.int64)
    return pos


def _op_times(
    graph: Graph,
    costs: Costs | np.ndarray | None,
    scenarios: Scenarios,
    transfer: Mapping[int, np.ndarray] | None,
    device,
    profile,
) -> tuple[Costs, np.ndarray]:
    """``costs`` as a ``Costs`` and its compute-stream times as an ``[S, n_ops]`` array, one
    row per scenario (a single row repeated for every scenario)."""
    n = graph.n_ops
    if costs is None:
        costs = estimate(graph, device or default_device(graph), scenarios, profile)
    elif not isinstance(costs, Costs):
        costs = Costs(np.asarray(costs, dtype=np.float64), dict(transfer or {}), UNIT_SECONDS)
    op = np.asarray(costs.op, dtype=np.float64)
    if op.ndim == 1:
        op = op[None, :]
    n_s = op.shape[0]
    if op.shape[1] != n:
        raise InputError(f"costs cover {op.shape[1]} ops, the graph has {n}")
    if n_s != len(scenarios):
        if len(scenarios) == 1 and n_s > 1:
            raise InputError(f"costs have {n_s} scenarios; pass the scenarios they were made for")
        if n_s == 1:
            op = np.repeat(op, len(scenarios), axis=0)
        else:
            raise InputError(f"costs have {n_s} scenarios, {len(scenarios)} given")
    return costs, op


@dataclass
class _Rows:
    """The transfers of a timeline (sync collectives and async pairs), in order of their
    start: start op, done op (-1: none), class, sync flag, stream index, time ``[rows, S]``."""

    start: np.ndarray
    done: np.ndarray
    cls: tuple[str, ...]
    sync: np.ndarray
    stream: np.ndarray
    streams: list[str]
    time: np.ndarray


def _transfer_rows(
    graph: Graph,
    costs: Costs,
    pos: np.ndarray,
    n_s: int,
    comm_streams: str,
    stream_of: Callable[[int, str], str] | None,
) -> _Rows:
    def tr(i: int) -> np.ndarray:
        t = costs.transfer.get(i)
        if t is None:
            return np.zeros(n_s)
        t = np.asarray(t, dtype=np.float64).reshape(-1)
        return np.broadcast_to(t, (n_s,)) if t.size in (1, n_s) else t

    rows: list[tuple[int, int, str, bool]] = []  # (start op, done op, class, sync)
    kinds = graph.kinds
    for i in sorted(
        set(np.flatnonzero(kinds == _K_START).tolist()) | set(int(x) for x in costs.transfer)
    ):
        cls = async_class(graph, i)
        if cls is None:
            continue
        sync = is_sync_collective(graph, i)
        done = int(graph.async_done[i]) if kinds[i] == _K_START else -1
        rows.append((i, done, cls, sync))
    rows.sort(key=lambda r: pos[r[0]])
    n_p = len(rows)
    streams: list[str] = [COMPUTE_STREAM]
    p_stream = np.zeros(n_p, dtype=np.int64)
    for k, (i, _, cls, sync) in enumerate(rows):
        if sync:
            continue
        name = stream_of(i, cls) if stream_of else default_stream(cls, comm_streams)
        if name == COMPUTE_STREAM:
            raise InputError(f"async {graph.op_names[i]} cannot use the compute stream")
        if name not in streams:
            streams.append(name)
        p_stream[k] = streams.index(name)
    L = np.zeros((n_p, n_s))
    for k, r in enumerate(rows):
        L[k] = tr(r[0])
    return _Rows(
        start=np.array([r[0] for r in rows], dtype=np.int64),
        done=np.array([r[1] for r in rows], dtype=np.int64),
        cls=tuple(r[2] for r in rows),
        sync=np.array([r[3] for r in rows], dtype=bool),
        stream=p_stream,
        streams=streams,
        time=L,
    )


def _async_events(
    rows: _Rows, pos: np.ndarray, D: np.ndarray, Dprev: np.ndarray, n: int, n_s: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Play the async starts and dones in order: each transfer's begin and end, the compute
    stream's wait at each done, and the cumulative waits ``F`` by position ``[n, S]``."""
    n_p = len(rows.cls)
    p_start, p_done, p_sync, L = rows.start, rows.done, rows.sync, rows.time
    tb = np.zeros((n_p, n_s))
    te = np.zeros((n_p, n_s))
    wait = np.zeros((n_p, n_s))
    events: list[tuple[int, int, int]] = []  # (position, 0 start / 1 done, row)
    for k in range(n_p):
        if p_sync[k]:
            continue
        events.append((int(pos[p_start[k]]), 0, k))
        if p_done[k] >= 0:
            events.append((int(pos[p_done[k]]), 1, k))
    events.sort()
    f = np.zeros(n_s)
    free = [np.zeros(n_s) for _ in rows.streams]
    inc = np.zeros((n, n_s)) if n else np.zeros((0, n_s))
    for k_pos, typ, k in events:
        if typ == 0:
            q = rows.stream[k]
            b = np.maximum(D[k_pos] + f, free[q])
            e = b + L[k]
            free[q] = e
            tb[k], te[k] = b, e
        else:
            fn = np.maximum(f, te[k] - Dprev[k_pos])
            w = fn - f
            wait[k] = w
            inc[k_pos] += w
            f = fn
    return tb, te, wait, np.cumsum(inc, axis=0)


def _overlapped(
    rows: _Rows,
    pos: np.ndarray,
    Dprev: np.ndarray,
    F: np.ndarray,
    tb: np.ndarray,
    te: np.ndarray,
    wait: np.ndarray,
    n_s: int,
) -> np.ndarray:
    """Overlap: each transfer's time minus the compute stream's idle and sync time inside it."""
    p_done, p_sync, L = rows.done, rows.sync, rows.time
    overlapped = np.zeros((len(rows.cls), n_s))
    asyn = np.flatnonzero(~p_sync)
    if asyn.size:
        done_rows = asyn[p_done[asyn] >= 0]
        dpos = pos[p_done[done_rows]]
        sync_rows = np.flatnonzero(p_sync)
        # idle intervals of the compute stream: waits at dones, and sync collectives
        i_begin = np.concatenate([(Dprev[dpos] + F[dpos] - wait[done_rows]), tb[sync_rows]])
        i_len = np.concatenate([wait[done_rows], L[sync_rows]])  # [m, S]
        for s in range(n_s):
            b0 = tb[asyn, s]
            b1 = te[asyn, s]
            keep = i_len[:, s] > 0
            if keep.any():
                a, ln = i_begin[keep, s], i_len[keep, s]
                o = np.argsort(a, kind="stable")
                a, ln = a[o], ln[o]
                cum = np.concatenate([[0.0], np.cumsum(ln)])

                def idle_until(t, a=a, ln=ln, cum=cum):
                    j = np.searchsorted(a, t, side="right") - 1
                    jj = np.maximum(j, 0)
                    part = np.clip(t - a[jj], 0.0, ln[jj])
                    return np.where(j >= 0, cum[jj] + part, 0.0)

                hidden = (b1 - b0) - (idle_until(b1) - idle_until(b0))
            else:
                hidden = b1 - b0
            overlapped[asyn, s] = np.clip(hidden, 0.0, L[asyn, s])
    return overlapped


def simulate_timeline(
    graph: Graph,
    order: Sequence[int] | None = None,
    costs: Costs | np.ndarray | None = None,
    scenarios: Scenarios | None = None,
    *,
    transfer: Mapping[int, np.ndarray] | None = None,
    device=None,
    profile=None,
    comm_streams: str = "shared",
    stream_of: Callable[[int, str], str] | None = None,
    validate: bool = True,
) -> Timelines:
    """Simulate ``order`` (default: the graph's own) under ``costs``.

    ``costs`` is a ``cpsched.cost.model.Costs`` (``estimate(graph, device, scenarios)``), or an
    ``[S, n_ops]`` array of compute-stream times together with ``transfer={op: [S]}``;
    when left out, it is estimated for ``device`` (default ``default_device(graph)``) and ``profile``.
    ``stream_of(start_op, transfer_class) -> name`` overrides the stream assignment.
    """
    scenarios = scenarios or static()
    n = graph.n_ops
    order_arr = np.asarray(graph.default_order() if order is None else list(order), dtype=np.int64)
    if validate:
        validate_order(graph, order_arr, what="timeline order")
    costs, op = _op_times(graph, costs, scenarios, transfer, device, profile)
    n_s = op.shape[0]
    pos = _positions(order_arr, n)
    rows = _transfer_rows(graph, costs, pos, n_s, comm_streams, stream_of)
    p_start, p_done, p_sync, L = rows.start, rows.done, rows.sync, rows.time
    p_cls, p_stream, streams = rows.cls, rows.stream, rows.streams
    n_p = len(p_cls)

    # -- compute-stream durations in order, [n, S] ---------------------------------------
    d = op[:, order_arr].T.copy()
    for k in map(int, np.flatnonzero(p_sync)):
        d[pos[p_start[k]]] += L[k]
    D = np.cumsum(d, axis=0)
    Dprev = D - d

    tb, te, wait, F = _async_events(rows, pos, D, Dprev, n, n_s)
    start_pos = Dprev + F
    end_pos = D + F
    start = np.zeros((n_s, n))
    end = np.zeros((n_s, n))
    start[:, order_arr] = start_pos.T
    end[:, order_arr] = end_pos.T
    # sync rows: the transfer is the tail of the op's compute-stream slot
    for k in map(int, np.flatnonzero(p_sync)):
        kp = pos[p_start[k]]
        te[k] = end_pos[kp]
        tb[k] = end_pos[kp] - L[k]
        wait[k] = L[k]
    makespan = end_pos[-1].copy() if n else np.zeros(n_s)
    if n_p:
        makespan = np.maximum(makespan, te.max(axis=0))
    # the runtime's fixed cost of one execution (0 unless the preset was fitted to steps)
    makespan = makespan + float(costs.step_overhead)
    overlapped = _overlapped(rows, pos, Dprev, F, tb, te, wait, n_s)

    # -- totals ---------------------------------------------------------------------------
    is_comm = np.array([c.startswith("collective:") for c in p_cls], dtype=bool)
    is_copy = np.array([c == STREAM_COPY for c in p_cls], dtype=bool)
    is_ac = np.array([c == STREAM_ASYNC_COMPUTE for c in p_cls], dtype=bool)

    def total(x, mask):
        return x[mask].sum(axis=0) if n_p else np.zeros(n_s)

    pdi = np.where(p_done >= 0, pos[np.maximum(p_done, 0)], -1) if n_p else p_done
    return Timelines(
        graph=graph,
        scenarios=scenarios,
        unit=costs.unit,
        order=order_arr,
        start=start,
        end=end,
        streams=tuple(streams),
        makespan=makespan,
        compute_time=op[:, order_arr].sum(axis=1) if n else np.zeros(n_s),
        comm_time=total(L, is_comm),
        copy_time=total(L, is_copy),
        async_compute_time=total(L, is_ac),
        exposed_comm=total(wait, is_comm),
        exposed_copy=total(wait, is_copy),
        exposed_async_compute=total(wait, is_ac),
        idle=F[-1].copy() if n else np.zeros(n_s),
        pair_start=p_start,
        pair_done=p_done,
        pair_start_index=pos[p_start] if n_p else p_start,
        pair_done_index=np.asarray(pdi, dtype=np.int64),
        pair_class=p_cls,
        pair_stream=p_stream,
        pair_sync=p_sync,
        transfer_begin=tb.T.copy(),
        transfer_end=te.T.copy(),
        transfer_time=L.T.copy(),
        wait=wait.T.copy(),
        overlapped=overlapped.T.copy(),
        device=costs.device,
    )


def timeline(
    graph: Graph,
    order: Sequence[int] | None = None,
    device=None,
    scenarios: Scenarios | None = None,
    profile=None,
    **options,
) -> Timelines:
    """Estimate costs for ``device`` (and ``profile``) and simulate ``order``; ``device``
    defaults to ``default_device(graph)``: ``cpu`` for a module XLA:CPU optimized, else
    ``h100``."""
    scenarios = scenarios or static()
    device = device if device is not None else default_device(graph)
    return simulate_timeline(
        graph, order, estimate(graph, device, scenarios, profile), scenarios, **options
    )


__all__ = [
    "Timeline",
    "Timelines",
    "simulate_timeline",
    "timeline",
    "default_stream",
    "COMPUTE_STREAM",
    "model_label",
]
