"""One solve of a sweep, as it runs in a worker process (local pool or Ray task).

``solve_task(payload)`` reads or generates the graph, runs ``api.schedule`` (which checks
the order with the validator and the simulator before it returns) and gives back one table
row. It never raises: a failing solve is a row with status ``ERROR`` and its message, one
refused for its budget a row with status ``OVER_BUDGET`` and the least peak it reached. A
solve stopped by a signal gives ``None`` (no row: the next run repeats it).
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from typing import Any, cast

from cpsched import api, generators
from cpsched.analysis.records import TimedRecord
from cpsched.core.errors import BudgetError, CpschedError
from cpsched.core.graph import Graph
from cpsched.sweep.table import ERROR

# Seconds the worker spent on the task (graph, solve, checks): not a column, it tells the
# driver how much of the time its workers were solving.
TASK_SECONDS = "_task_seconds"
# Messages are one line in the table; past this they are cut.
MAX_ERROR_CHARS = 400
OVER_BUDGET = "OVER_BUDGET"  # status of a solve refused for its budget (``BudgetError``)


@functools.lru_cache(maxsize=4)
def _generated(family: str, params: tuple[tuple[str, Any], ...]) -> Graph:
    fn = cast(Callable[..., Graph], generators.FAMILIES[family])
    return fn(**dict(params))


@functools.lru_cache(maxsize=4)
def _from_file(path: str, size: int, mtime_ns: int) -> Graph:
    return api.read(path)


def _from_bytes(name: str, data: bytes) -> Graph:
    """A graph shipped as bytes (to a machine that may not have the file): read from a
    temporary copy under the same name, so that format detection sees the same suffix."""
    folder = tempfile.mkdtemp(prefix="cpsched-sweep-")
    try:
        path = os.path.join(folder, os.path.basename(name) or "graph")
        with open(path, "wb") as f:
            f.write(data)
        return api.read(path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def load_graph(source: Mapping[str, Any], data: bytes | None = None) -> Graph:
    if source.get("family"):
        return _generated(source["family"], tuple(sorted(dict(source["params"]).items())))
    if data is not None:
        return _from_bytes(source["path"], data)
    st = os.stat(source["path"])
    return _from_file(source["path"], st.st_size, st.st_mtime_ns)


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    if not isinstance(e, CpschedError):
        text = f"internal error: {type(e).__name__}: {text}"
    return text[:MAX_ERROR_CHARS]


def solve_task(payload: Mapping[str, Any], data: bytes | None = None) -> dict[str, Any] | None:
    """The table row of one solve (see ``cpsched.sweep.table.COLUMNS``)."""
    row: dict[str, Any] = {
        "key": payload["key"],
        "graph": payload["graph"]["label"],
        "method": payload["label"],
        "options": payload["options_text"],
        "seed": payload["seed"],
        "time_limit": payload["time_limit"],
    }
    t0 = time.perf_counter()
    try:
        g = load_graph(payload["graph"], data)
        row["n_ops"] = g.n_ops
        r = api.schedule(
            g,
            payload["method"],
            objective=payload["objective"],
            scenarios=payload["scenarios"],
            time_limit=payload["time_limit"],
            workers=payload["workers"],
            seed=payload["seed"] if payload["seed"] is not None else api.DEFAULT_SEED,
            deterministic=bool(payload["deterministic"]),
            budget=payload["budget"],
            **payload["method_options"],
        )
    except KeyboardInterrupt:
        return None
    except BudgetError as e:  # over its budget: a row with the least peak it reached
        peak = max(e.reached.values()) if e.reached else None
        row.update(status=OVER_BUDGET, peak_bytes=peak, error=_one_line(e))
        row.update(wall_s=round(time.perf_counter() - t0, 6))
        row[TASK_SECONDS] = time.perf_counter() - t0
        return row
    except Exception as e:  # a failing solve is a row, never the end of the sweep
        row.update(status=ERROR, error=_one_line(e), wall_s=round(time.perf_counter() - t0, 6))
        row[TASK_SECONDS] = time.perf_counter() - t0
        return row
    if r.record.interrupted:
        return None
    # one number per row: the scenario with the highest peak (the one a device must hold)
    scenario = max(r.peak, key=lambda n: r.peak[n]) if r.peak else ""
    makespan = r.record.makespan if isinstance(r.record, TimedRecord) else None
    row.update(
        scenario=scenario,
        status=r.status,
        peak_bytes=int(r.peak[scenario]) if scenario else None,
        bound=int(r.bound[scenario]) if scenario in r.bound else None,
        gap=round(float(r.gap[scenario]), 6) if scenario in r.gap else None,
        makespan=float(makespan[scenario])
        if isinstance(makespan, Mapping) and scenario in makespan
        else None,
        wall_s=round(r.seconds, 6),
    )
    row[TASK_SECONDS] = time.perf_counter() - t0
    return row
