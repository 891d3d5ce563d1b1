"""Pipeline schedules out: PyTorch's per-rank action CSV, a Chrome/Perfetto trace, JSON.

PyTorch CSV: the "compute_only" format that ``torch.distributed.pipelining``'s
``PipelineScheduleMulti._load_csv`` / ``_PipelineScheduleRuntime._load_csv`` read (checked
against ``torch/distributed/pipelining/schedules.py`` on PyTorch's main branch, the version
that also has ``ScheduleDualPipeV``, whose ``_ComputationType`` names the input-gradient
action ``I`` and the full backward ``B``; the exact first release with these names was not
pinned down here, and 2024 releases still used ``B`` for the input gradient):
one row per rank, one cell per action in run order, each cell ``{stage}{type}{microbatch}``
with ``stage`` the global (virtual) stage index and ``type`` one of ``F`` (forward), ``I``
(input gradient, our split B), ``W`` (weight gradient) or ``B`` (full backward, our fused B).
The runtime infers the stage-to-rank map from the rows (here the looped map: stage s on
rank s % p) and inserts the send/recv actions itself when it lowers the compute-only
schedule; the ``compute_comms`` format carries them explicitly (``torch_rows``).

Trace: one process, one track per device with every action as a complete event at its
replayed time (one time unit shows as one microsecond, as in ``cpsched.writers.trace`` for
abstract units), transfers on a per-device link track when they overlap compute, and an
activation-memory counter per device.
"""

from __future__ import annotations

import csv
import io
import json

from cpsched.pipeline.schedule import Action, PipelineSchedule
from cpsched.writers import write_text
from cpsched.writers.trace import trace_pid


def torch_action(a: Action, split_backward: bool) -> str:
    kind = {"F": "F", "W": "W", "B": "I" if split_backward else "B"}[a.kind]
    return f"{a.stage}{kind}{a.mb}"


CSV_FORMATS = ("compute_only", "compute_comms")


def torch_rows(schedule: PipelineSchedule, format: str = "compute_only") -> list[list[str]]:
    """Per-rank action strings. ``compute_comms`` (what ``_load_csv(..., format=
    "compute_comms")`` reads) adds ``{s}SEND_F{j}`` right after a forward whose output
    crosses to another rank and ``{s+1}RECV_F{j}`` right before the forward that reads it
    (``SEND_B`` / ``RECV_B`` likewise for input gradients, the receiving stage being s-1).
    Sends sit right after their producer and receives right before their consumer, so the
    lists cannot deadlock when the compute order does not (the replay checked that)."""
    if format not in CSV_FORMATS:
        raise ValueError(f"csv format {format!r}: one of {', '.join(CSV_FORMATS)}")
    pr = schedule.problem
    rows = []
    for lst in schedule.actions:
        row = []
        for a in lst:
            if format == "compute_comms":
                if a.kind == "F" and a.stage > 0 and pr.sends("F", a.stage - 1):
                    row.append(f"{a.stage}RECV_F{a.mb}")
                if a.kind == "B" and a.stage < pr.n_stages - 1 and pr.sends("B", a.stage + 1):
                    row.append(f"{a.stage}RECV_B{a.mb}")
            row.append(torch_action(a, pr.split_backward))
            if format == "compute_comms" and a.kind in "FB" and pr.sends(a.kind, a.stage):
                row.append(f"{a.stage}SEND_{a.kind}{a.mb}")
        rows.append(row)
    return rows


def to_torch_csv(schedule: PipelineSchedule, format: str = "compute_only") -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for row in torch_rows(schedule, format):
        w.writerow(row)
    return buf.getvalue()


def from_torch_csv(text: str, split_backward: bool = True) -> list[list[Action]]:
    """Read the compute-only CSV back (used by the tests; accepts I/B/W/F)."""
    import re

    rx = re.compile(r"^(\d+)(F|I|B|W)(\d+)$")
    out = []
    for row in csv.reader(io.StringIO(text)):
        lst = []
        for cell in row:
            cell = cell.strip()
            if not cell:
                continue
            m = rx.match(cell)
            if not m:
                raise ValueError(f"not a compute action: {cell!r}")
            k = {"F": "F", "I": "B", "B": "B", "W": "W"}[m.group(2)]
            lst.append(Action(k, int(m.group(1)), int(m.group(3))))
        out.append(lst)
    return out


def to_trace(schedule: PipelineSchedule) -> dict:
    pr = schedule.problem
    rep = schedule.replay or schedule.validate(check_memory=False)
    # its own process id, so that traces of two schedules can be merged into one file
    pid = trace_pid(f"pipeline p={pr.p} m={pr.m} v={pr.v}", "", schedule.method)
    ev: list[dict] = [
        {
            "ph": "M",
            "name": "process_name",
            "pid": pid,
            "tid": 0,
            "args": {"name": f"pipeline {schedule.method} (p={pr.p}, m={pr.m}, v={pr.v})"},
        }
    ]
    for d in range(pr.p):
        ev.append(
            {
                "ph": "M",
                "name": "thread_name",
                "pid": pid,
                "tid": d + 1,
                "args": {"name": f"device {d}"},
            }
        )
        ev.append(
            {
                "ph": "M",
                "name": "thread_sort_index",
                "pid": pid,
                "tid": d + 1,
                "args": {"sort_index": d},
            }
        )
        if pr.comm > 0 and pr.comm_overlap:
            ev.append(
                {
                    "ph": "M",
                    "name": "thread_name",
                    "pid": pid,
                    "tid": pr.p + d + 1,
                    "args": {"name": f"device {d} send"},
                }
            )
            ev.append(
                {
                    "ph": "M",
                    "name": "thread_sort_index",
                    "pid": pid,
                    "tid": pr.p + d + 1,
                    "args": {"sort_index": pr.p + d},
                }
            )
    for d, lst in enumerate(schedule.actions):
        cur = 0
        for a in lst:
            t0, t1 = rep.start[a], rep.end[a]
            ev.append(
                {
                    "ph": "X",
                    "name": torch_action(a, pr.split_backward),
                    "cat": a.kind,
                    "pid": pid,
                    "tid": d + 1,
                    "ts": _r(t0),
                    "dur": _r(t1 - t0),
                    "args": {
                        "stage": a.stage,
                        "chunk": pr.chunk(a.stage),
                        "microbatch": a.mb,
                        "kind": a.kind,
                    },
                }
            )
            if a.kind == "F":
                cur += int(pr.act[a.stage])
                ev.append(
                    {
                        "ph": "C",
                        "name": f"activation d{d}",
                        "pid": pid,
                        "ts": _r(t0),
                        "args": {"bytes": cur},
                    }
                )
            else:
                cur -= pr.act_b(a.stage) if a.kind == "B" else int(pr.act_w[a.stage])
                ev.append(
                    {
                        "ph": "C",
                        "name": f"activation d{d}",
                        "pid": pid,
                        "ts": _r(t1),
                        "args": {"bytes": cur},
                    }
                )
            dl = pr.delay(a.kind, a.stage)
            if dl > 0:
                ev.append(
                    {
                        "ph": "X",
                        "name": f"send {torch_action(a, pr.split_backward)}",
                        "cat": "transfer",
                        "pid": pid,
                        "tid": pr.p + d + 1,
                        "ts": _r(t1),
                        "dur": _r(dl),
                        "args": {"to_stage": a.stage + (1 if a.kind == "F" else -1)},
                    }
                )
    summary = schedule.summary()
    return {
        "traceEvents": ev,
        "otherData": {
            "method": schedule.method,
            "unit": "problem time unit (shown as us)",
            "makespan": summary["makespan"],
            "bubble_fraction": summary["bubble_fraction"],
            "peak_activation": summary["peak_activation"],
        },
    }


def to_json(schedule: PipelineSchedule) -> dict:
    out = schedule.summary()
    out["actions"] = [[str(a) for a in lst] for lst in schedule.actions]
    out["torch_actions"] = [
        [torch_action(a, schedule.problem.split_backward) for a in lst] for lst in schedule.actions
    ]
    return out


def _r(x: float) -> float:
    return round(float(x), 6)


def write_torch_csv(
    path: str,
    schedule: PipelineSchedule,
    inputs: tuple[str, ...] = (),
    format: str = "compute_only",
) -> None:
    write_text(path, to_torch_csv(schedule, format), inputs)


def write_trace(path: str, schedule: PipelineSchedule, inputs: tuple[str, ...] = ()) -> None:
    write_text(path, json.dumps(to_trace(schedule), separators=(",", ":")) + "\n", inputs)


__all__ = [
    "CSV_FORMATS",
    "torch_rows",
    "to_torch_csv",
    "from_torch_csv",
    "to_trace",
    "to_json",
    "torch_action",
    "write_torch_csv",
    "write_trace",
]
