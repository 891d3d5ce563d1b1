"""Timing of a plan: the host link for copies, op durations, and the added time (clones
and exposed prefetches) of an event list."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cpsched.core.errors import InputError
from cpsched.core.graph import Graph
from cpsched.core.scenarios import Scenarios, static
from cpsched.cost.model import UNIT_FILE, _unit, load_device, op_times
from cpsched.remat.events import COMPUTE, EVICT, FREE, PREFETCH, Event


@dataclass(frozen=True)
class TransferModel:
    """Host<->device copies: ``latency + bytes / bandwidth`` time units each. ``bandwidth``
    is bytes per time unit of the op durations; ``streams`` 2 = separate device->host and
    host->device copy engines (PCIe is full duplex), 1 = one shared copy stream."""

    bandwidth: float
    latency: float = 0.0
    streams: int = 2

    def times(self, nbytes: np.ndarray) -> np.ndarray:
        return self.latency + np.asarray(nbytes, dtype=np.float64) / float(self.bandwidth)


def transfer_from_device(
    device: Any = "h100", unit_seconds: float = 1.0, streams: int = 2
) -> TransferModel:
    """PCIe copies of a cost-model device, in time units of ``unit_seconds`` seconds."""
    d = load_device(device)
    return TransferModel(d.pcie_bandwidth * unit_seconds, d.pcie_latency / unit_seconds, streams)


def host_link(
    graph: Graph, device: Any = "h100", bandwidth: float | None = None, latency: float = 0.0
) -> TransferModel:
    """The host link an eviction plan is timed with: ``bandwidth`` bytes per time unit of the
    op times when given, else the PCIe figures of the cost-model ``device`` (which needs op
    times in seconds-based units, not the file's own)."""
    if bandwidth is not None:
        if not float(bandwidth) > 0:
            raise InputError(
                f"--bandwidth {bandwidth}: expected a positive number of bytes per time unit"
            )
        return TransferModel(float(bandwidth), float(latency))
    d = load_device(device)
    if _unit(graph, d) == UNIT_FILE:
        raise InputError(
            "eviction on a graph with op times in the file's own units needs "
            "--bandwidth (bytes per time unit)"
        )
    return transfer_from_device(d, d.seconds_per_unit)


def op_durations(
    graph: Graph, scenarios: Scenarios | None = None, device: Any = "h100"
) -> np.ndarray:
    """``[S, n_ops]`` compute times: ``cpsched.cost.model.op_times`` (file ``duration``s as
    they are, else the device roofline)."""
    return np.asarray(op_times(graph, device, scenarios or static()), dtype=np.float64)


@dataclass(frozen=True)
class PlanTime:
    makespan: np.ndarray  # [S]
    base: np.ndarray  # [S] every op once, back to back
    recompute: np.ndarray  # [S] time of the clones
    exposed_transfer: np.ndarray  # [S] compute-stream waits for copies

    @property
    def added(self) -> np.ndarray:
        d = self.makespan - self.base
        return np.where(np.abs(d) <= 1e-9 * np.maximum(self.base, 1e-300), 0.0, d)

    @property
    def added_pct(self) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.base > 0, 100.0 * self.added / np.maximum(self.base, 1e-300), 0.0)


def plan_time(
    graph: Graph,
    events: Sequence[Event],
    durations: np.ndarray,
    transfer: TransferModel | None = None,
    scenarios: Scenarios | None = None,
) -> PlanTime:
    """Run the events on one compute stream and the copy stream(s): computes back to back;
    an ``evict`` starts its copy when the compute stream reaches it (and the copy stream is
    free); a ``free`` after an ``evict`` waits for that copy; a ``prefetch`` starts when
    reached (after the buffer's copy-out), and the next op that reads the buffer waits for it.
    """
    sc = scenarios or static()
    dur = np.atleast_2d(np.asarray(durations, dtype=np.float64))
    n_s = dur.shape[0]
    if any(int(k) in (EVICT, PREFETCH) for k, _ in events):
        if transfer is None:
            raise InputError("a plan with evictions needs a transfer model (bandwidth)")
        tt = transfer.times(graph.sizes(sc)) if graph.n_buffers else np.zeros((n_s, 0))
    else:
        tt = None
    base = dur.sum(axis=1)
    makespan = np.zeros(n_s)
    recompute = np.zeros(n_s)
    busy = np.zeros(n_s)
    for s in range(n_s):
        t = 0.0
        d2h_free = h2d_free = 0.0
        out_done: dict[int, float] = {}
        in_done: dict[int, float] = {}
        seen = np.zeros(graph.n_ops, dtype=bool)
        rec = 0.0
        for code, x in events:
            code, x = int(code), int(x)
            if code == COMPUTE:
                for b in graph.uses(x):
                    r = in_done.pop(int(b), None)
                    if r is not None and r > t:
                        t = r
                t += dur[s, x]
                if seen[x]:
                    rec += dur[s, x]
                seen[x] = True
            elif code == FREE:
                r = out_done.pop(x, None)
                if r is not None and r > t:
                    t = r
                in_done.pop(x, None)
            elif code in (EVICT, PREFETCH):
                assert transfer is not None and tt is not None  # checked above for copies
                # a copy out waits for its stream; a copy back also for its copy out
                out = code == EVICT
                start = max(t, d2h_free) if out else max(t, h2d_free, out_done.get(x, 0.0))
                done = start + tt[s, x]
                if out or transfer.streams == 1:  # one stream: both directions share it
                    d2h_free = done
                if not out or transfer.streams == 1:
                    h2d_free = done
                (out_done if out else in_done)[x] = done
        makespan[s] = t
        recompute[s] = rec
        busy[s] = base[s] + rec
    exposed = np.maximum(makespan - busy, 0.0)
    return PlanTime(makespan, base, recompute, exposed)
