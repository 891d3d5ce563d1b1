"""Chrome-trace / Perfetto JSON of a simulated timeline (open in ui.perfetto.dev or
chrome://tracing).

One process per scenario, one thread (track) per stream: ``compute`` first, then the
communication, copy and async-compute streams. Every op with a non-zero duration is a
complete event (``"ph": "X"``); async starts and dones are kept even at zero duration so
that each pair is joined by a flow arrow start -> transfer -> done (``"ph": "s"/"t"/"f"``,
all in category ``async`` and at the timestamps of the slices they bind to, as both
viewers require). A done that had to wait is preceded by a ``wait`` slice on the compute
track, so exposed communication is visible at a glance. Timestamps are microseconds:
seconds-based timelines are scaled by 1e6; XLA abstract units and node-link file units are
written as they are (one unit shows as one microsecond).

Each process is named after the graph, the scenario and whose order it is (``label``: the
method), and its id is derived from those names, so that traces of two orders (or two
graphs) can be merged into one file and shown one above the other; flow ids are derived
from it too. ``otherData`` names the device model the times come from.

Every slice begins and ends on a whole nanosecond, computed once per boundary, so slices
that touch in the timeline touch exactly in the viewer (no 1 ps overlaps that would nest one
op inside the next). A counter track per scenario (``memory``, ``"ph": "C"``) gives the
device bytes live at each op's start (the largest value when several ops start together).
"""

from __future__ import annotations

import json
import zlib
from typing import Any

import numpy as np

from cpsched.analysis.memory import simulate
from cpsched.core.graph import Graph, OpKind
from cpsched.core.scenarios import static
from cpsched.cost.model import UNIT_SECONDS
from cpsched.cost.timeline import Timeline, Timelines
from cpsched.writers import write_text

_ASYNC_KINDS = (int(OpKind.ASYNC_START), int(OpKind.ASYNC_UPDATE), int(OpKind.ASYNC_DONE))


def _scale(unit: str) -> float:
    return 1e6 if unit == UNIT_SECONDS else 1.0


def _r(x: float) -> float:
    # picosecond resolution: drops float noise such as 2.0000000000000004 us
    return round(float(x), 6)


def _ns(x: float) -> int:
    """A time already scaled to microseconds, on the whole-nanosecond grid."""
    return int(round(float(x) * 1000.0))


def _us(ns: int) -> float:
    return ns / 1000.0


# process ids below this, flow ids below FLOW_IDS_PER_PROCESS * PROCESS_IDS (under 2^53)
PROCESS_IDS = 1_000_003
FLOW_IDS_PER_PROCESS = 1 << 24


def trace_pid(graph: str, scenario: str, label: str) -> int:
    """A process id for one order's trace of one scenario, the same for the same names and
    (almost surely) different for different ones, so that traces can be merged.

    >>> trace_pid("g", "static", "cp") == trace_pid("g", "static", "cp") != trace_pid("g", "static", "given")
    True
    """
    return 1 + zlib.crc32(f"{graph}\0{scenario}\0{label}".encode()) % (PROCESS_IDS - 1)


def _one(
    tl: Timeline,
    graph: Graph,
    pid: int,
    scale: float,
    include_zero: bool,
    flow_base: int,
    usage: np.ndarray | None = None,
    label: str = "",
    sort_index: int = 0,
) -> list[dict[str, Any]]:
    ev: list[dict[str, Any]] = []
    names = graph.op_names
    ev.append(
        {
            "ph": "M",
            "name": "process_name",
            "pid": pid,
            "tid": 0,
            "args": {"name": f"{graph.name} [{tl.scenario}]" + (f" {label}" if label else "")},
        }
    )
    ev.append(
        {
            "ph": "M",
            "name": "process_sort_index",
            "pid": pid,
            "tid": 0,
            "args": {"sort_index": sort_index},
        }
    )
    for q, sname in enumerate(tl.streams):
        ev.append(
            {"ph": "M", "name": "thread_name", "pid": pid, "tid": q + 1, "args": {"name": sname}}
        )
        ev.append(
            {
                "ph": "M",
                "name": "thread_sort_index",
                "pid": pid,
                "tid": q + 1,
                "args": {"sort_index": q},
            }
        )
    sync_ops = set(int(x) for x in tl.pair_start[tl.pair_sync])
    # rows by op, to annotate starts and dones
    row_of_start = {int(tl.pair_start[k]): k for k in range(tl.n_pairs)}
    row_of_done = {int(tl.pair_done[k]): k for k in range(tl.n_pairs) if tl.pair_done[k] >= 0}
    dist = tl.distance
    kinds = graph.kinds
    if usage is not None:
        live: dict[int, int] = {}
        for step, i in enumerate(tl.order.tolist()):
            t = _ns(float(tl.start[i]) * scale)
            live[t] = max(live.get(t, 0), int(usage[step]))
        for t in sorted(live):
            ev.append(
                {"ph": "C", "name": "memory", "pid": pid, "ts": _us(t), "args": {"bytes": live[t]}}
            )
    for step, i in enumerate(tl.order.tolist()):
        b = _ns(float(tl.start[i]) * scale)
        e = _ns(float(tl.end[i]) * scale)
        is_async = int(kinds[i]) in _ASYNC_KINDS
        if e <= b and not include_zero and not is_async:
            continue
        k = row_of_done.get(i)
        if k is not None and tl.wait[k] > 0:
            wb = min(b, _ns((float(tl.start[i]) - float(tl.wait[k])) * scale))
            ev.append(
                {
                    "ph": "X",
                    "name": f"wait {names[i]}",
                    "cat": "wait",
                    "pid": pid,
                    "tid": 1,
                    "ts": _us(wb),
                    "dur": _us(b - wb),
                    "args": {"waits_for": names[int(tl.pair_start[k])], "class": tl.pair_class[k]},
                }
            )
        args: dict[str, Any] = {"step": step, "opcode": graph.opcodes[i]}
        cat = "compute"
        ks: int | None
        if i in sync_ops:
            cat = "sync-collective"
            ks = row_of_start[i]
            args.update({"class": tl.pair_class[ks], "transfer": _r(tl.transfer_time[ks] * scale)})
        elif is_async:
            cat = "async"
            ks = row_of_start.get(i, k)
            if ks is not None:
                d = int(tl.pair_done[ks])
                args.update(
                    {
                        "start": names[int(tl.pair_start[ks])],
                        "done": names[d] if d >= 0 else None,
                        "distance": int(dist[ks]),
                    }
                )
        ev.append(
            {
                "ph": "X",
                "name": names[i],
                "cat": cat,
                "pid": pid,
                "tid": 1,
                "ts": _us(b),
                "dur": _us(max(e - b, 0)),
                "args": args,
            }
        )
    for k in range(tl.n_pairs):
        if tl.pair_sync[k]:
            continue
        s_op, d_op = int(tl.pair_start[k]), int(tl.pair_done[k])
        tid = int(tl.pair_stream[k]) + 1
        tb = _ns(float(tl.transfer_begin[k]) * scale)
        te = _ns(float(tl.transfer_end[k]) * scale)
        ev.append(
            {
                "ph": "X",
                "name": names[s_op],
                "cat": "async",
                "pid": pid,
                "tid": tid,
                "ts": _us(tb),
                "dur": _us(max(te - tb, 0)),
                "args": {
                    "class": tl.pair_class[k],
                    "start": names[s_op],
                    "done": names[d_op] if d_op >= 0 else None,
                    "start_index": int(tl.pair_start_index[k]),
                    "done_index": int(tl.pair_done_index[k]),
                    "distance": int(dist[k]),
                    "transfer": _r(tl.transfer_time[k] * scale),
                    "overlapped": _r(tl.overlapped[k] * scale),
                    "exposed": _r(tl.wait[k] * scale),
                },
            }
        )
        fid = flow_base + k
        common = {"cat": "async", "name": "async", "id": fid, "pid": pid}
        ev.append({**common, "ph": "s", "tid": 1, "ts": _us(_ns(tl.start[s_op] * scale))})
        ev.append({**common, "ph": "t", "tid": tid, "ts": _us(tb)})
        if d_op >= 0:
            ev.append(
                {**common, "ph": "f", "bp": "e", "tid": 1, "ts": _us(_ns(tl.start[d_op] * scale))}
            )
    return ev


def _usage(timeline: Timeline | Timelines, graph: Graph) -> np.ndarray | None:
    """Bytes live per step and scenario, where the scenarios are known."""
    if isinstance(timeline, Timelines):
        sc = timeline.scenarios
    elif not graph.dims:
        sc = static()
    else:  # one scenario of a symbolic graph: its dim values are not in a Timeline
        return None
    return simulate(graph, timeline.order, sc).usage


def timeline_to_trace(
    timeline: Timeline | Timelines,
    graph: Graph | None = None,
    *,
    include_zero: bool = False,
    memory: bool = True,
    label: str = "",
) -> dict:
    """The trace-event JSON object (``{"traceEvents": [...], ...}``) of one scenario's
    ``Timeline``, or of every scenario of a ``Timelines`` (one process each).

    ``include_zero`` keeps zero-duration ops (parameters, aliases); async starts and dones
    are always kept so that flow arrows have slices to bind to. ``memory`` adds the counter
    track of live device bytes. ``label`` says whose order it is (a method's name): it is
    part of each process's name and id (``trace_pid``)."""
    graph = graph if graph is not None else timeline.graph
    tls = list(timeline) if isinstance(timeline, Timelines) else [timeline]
    usage = _usage(timeline, graph) if memory else None
    events: list[dict[str, Any]] = []
    pids = []
    for s, tl in enumerate(tls):
        pid = trace_pid(graph.name, tl.scenario, label)
        while pid in pids:  # two scenarios whose names hash alike
            pid = pid % (PROCESS_IDS - 1) + 1
        pids.append(pid)
        events += _one(
            tl,
            graph,
            pid,
            _scale(tl.unit),
            include_zero,
            pid * FLOW_IDS_PER_PROCESS,
            None if usage is None else usage[s],
            label,
            s,
        )
    unit = tls[0].unit if tls else UNIT_SECONDS
    return {
        "traceEvents": events,
        "otherData": {
            "graph": graph.name,
            "order": label,
            "pids": pids,
            "times": tls[0].model if tls else "",
            "unit": unit,
            "scenarios": [t.scenario for t in tls],
            "makespan": [t.makespan for t in tls],
            "exposed_comm": [t.exposed_comm for t in tls],
        },
    }


def merge_traces(traces: list[dict]) -> dict:
    """One trace-event object holding several (``timeline_to_trace``'s, whose process and
    flow ids differ when their graph, scenario or label do): shown one above the other.
    ``otherData.traces`` keeps each one's summary."""
    return {
        "traceEvents": [e for t in traces for e in t["traceEvents"]],
        "otherData": {"traces": [t.get("otherData", {}) for t in traces]},
    }


def write_trace(
    path: str,
    timeline: Timeline | Timelines | list[tuple[Timeline | Timelines, Graph | None, str]],
    graph: Graph | None = None,
    inputs: tuple[str, ...] = (),
    **options,
) -> None:
    """Write the trace JSON to ``path`` (never over one of ``inputs``); a list of
    ``(timeline, graph, label)`` gives one file with all of them (``merge_traces``)."""
    if isinstance(timeline, list):
        data = merge_traces(
            [timeline_to_trace(t, g, label=lab, **options) for t, g, lab in timeline]
        )
    else:
        data = timeline_to_trace(timeline, graph, **options)
    write_text(path, json.dumps(data, separators=(",", ":"), default=_json_default) + "\n", inputs)


def _json_default(x):
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


__all__ = ["timeline_to_trace", "write_trace", "merge_traces", "trace_pid"]
