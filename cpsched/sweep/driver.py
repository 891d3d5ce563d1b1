"""One sweep from spec to summary: the solve entry of ``cpsched sweep``.

Reads the spec, drops the tasks whose key is already in the results table, runs the rest
(Ray or a local pool), appends each row as it finishes, then writes the summary, the
picture and (for a .parquet output) the Parquet file. Killed at any point, the next run
of the same command picks up where this one stopped.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cpsched.api import ortools_version
from cpsched.core.errors import InputError
from cpsched.sweep.report import plot_sweep, summary_markdown
from cpsched.sweep.run import CpuMeter, Progress, cores, local_rows, ray_installed, ray_rows
from cpsched.sweep.solve import TASK_SECONDS
from cpsched.sweep.spec import Spec, load_spec
from cpsched.sweep.table import ERROR, ResultsTable, is_parquet, require_pyarrow
from cpsched.version import __version__
from cpsched.writers import check_target, write_text

BACKENDS = ("auto", "ray", "local")


@dataclass
class SweepReport:
    spec: Spec
    table: str
    backend: str
    tasks: int
    already: int  # tasks whose row was in the table before this run
    ran: int = 0  # rows written by this run
    failed: int = 0
    trimmed: int = 0  # bytes of a torn last line removed
    interrupted: bool = False
    cpu: dict[str, Any] = field(default_factory=dict)
    written: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _with_suffix(path: str, suffix: str) -> str:
    root, ext = os.path.splitext(path)
    if ext.lower() in (".csv", ".parquet", ".pq", ".toml", ".yaml", ".yml"):
        path = root
    return path + suffix


def output_paths(
    spec: Spec, table: str | None, summary: str | None, plot: str | None
) -> tuple[str, str, str | None, str | None]:
    """(table, summary, picture or None, why no picture). Defaults: the spec's ``output``,
    else the spec's name with .csv; the summary and picture beside the table."""
    table = table or spec.output or _with_suffix(spec.path, ".csv")
    summary = summary or _with_suffix(table, ".md")
    note = None
    if plot is None:
        if importlib.util.find_spec("matplotlib") is not None:
            plot = _with_suffix(table, ".png")
        else:
            note = "matplotlib is not installed: no plot (pip install 'cpsched[plot]')"
    outs = [("-o", table), ("--summary", summary)] + ([("--plot", plot)] if plot else [])
    seen: dict[str, str] = {}
    for option, p in outs:
        check_target(p, spec.inputs, option)
        real = os.path.realpath(p)
        if real in seen:
            raise InputError(f"{option} and {seen[real]} name the same file", path=p)
        seen[real] = option
    require_pyarrow(table)
    return table, summary, plot, note


def choose_backend(backend: str, address: str | None) -> str:
    if backend not in BACKENDS:
        raise InputError(f"--backend must be one of {', '.join(BACKENDS)} (got {backend!r})")
    if backend == "local" and address:
        raise InputError("--address needs --backend ray (or auto): the local pool has no cluster")
    if backend in ("ray", "auto") and not ray_installed():
        if backend == "ray" or address:
            raise InputError(
                f"{'--address' if address else '--backend ray'} needs ray: "
                "pip install 'cpsched[ray]'"
            )
        return "local"
    return "ray" if backend == "auto" else backend


def run_sweep(
    spec_path: str,
    *,
    table: str | None = None,
    summary: str | None = None,
    plot: str | None = None,
    backend: str = "auto",
    jobs: int | None = None,
    address: str | None = None,
    max_solves: int | None = None,
    dry_run: bool = False,
    command: str = "",
    echo: Callable[[str], None] = lambda s: print(s, file=sys.stderr, flush=True),
    signals: dict | None = None,
) -> SweepReport:
    """Run (or resume) the sweep of ``spec_path``; see the module doc."""
    if jobs is not None and jobs < 1:
        raise InputError(f"--jobs must be at least 1 (got {jobs})")
    if max_solves is not None and max_solves < 1:
        raise InputError(f"--max-solves must be at least 1 (got {max_solves})")
    spec = load_spec(spec_path)
    chosen = choose_backend(backend, address)
    table, summary, plot, plot_note = output_paths(spec, table, summary, plot)
    tasks = spec.tasks()
    results = ResultsTable(table, spec.inputs, write=not dry_run)
    todo = [t for t in tasks if t.key not in results.rows]
    report = SweepReport(spec, table, chosen, len(tasks), len(tasks) - len(todo))
    report.trimmed = results.trimmed
    if results.trimmed:
        echo(f"{results.journal}: trimmed a torn last line ({results.trimmed} bytes)")
    if max_solves is not None:
        todo = todo[:max_solves]
    if dry_run:
        report.notes.append(f"dry run: {len(todo)} solves to run")
        return report
    n_jobs = jobs or cores()
    if chosen == "local" and backend == "auto":
        echo(
            f"ray is not installed: running on a local pool of {n_jobs} processes "
            "(pip install 'cpsched[ray]' for Ray and clusters)"
        )
    meter = CpuMeter()
    solving = 0.0  # CPU-slot seconds the workers spent inside solves
    progress = Progress(len(todo), echo)
    rows = ray_rows(todo, jobs, address) if chosen == "ray" else local_rows(todo, n_jobs)
    try:
        for batch in rows:
            for _task, row in batch:
                if row is None:  # stopped by a signal: no row, the next run repeats it
                    continue
                results.append(row, sync=False)
                solving += float(row.get(TASK_SECONDS) or 0.0) * _task.workers
                report.ran += 1
                report.failed += row.get("status") == ERROR
                progress.step(row.get("status") == ERROR)
            results.sync()  # one fsync for the rows that finished together
    except KeyboardInterrupt:
        report.interrupted = True
    finally:
        close = getattr(rows, "close", None)
        if close is not None:
            close()
        # the rows this run added to the table, whichever statement a signal cut short
        report.ran = results.lines() - results.lines_at_open
        results.close()
    # the pool's processes have been waited for: their CPU time is in os.times() now
    report.cpu = meter.read(n_jobs, children=(chosen == "local"))
    wall = report.cpu["wall_s"] or 0.0
    report.cpu["occupied"] = solving / (wall * n_jobs) if wall > 0 else None
    if signals is not None and signals.get("signal") == signal.SIGTERM:
        report.interrupted = True
    if report.interrupted:
        return report
    keys = {t.key for t in tasks}
    mine = [r for k, r in results.rows.items() if k in keys]
    header = [
        f"Spec `{os.path.basename(spec.path)}`"
        + (f": {spec.description}" if spec.description else ""),
        "",
        f"- {len(mine)} of {len(tasks)} solves in `{os.path.basename(table)}`; this run: "
        f"{report.ran} solves ({report.failed} failed) on {_backend_text(report, n_jobs)}",
        f"- {_cpu_text(report.cpu)}" if report.cpu and report.ran else "",
        f"- cpsched {__version__}, OR-Tools {ortools_version()}",
    ]
    if command:
        header.append(f"- command: `{command}`")
    results.write_parquet(spec.inputs)
    if is_parquet(table):
        report.written.append(table)
    write_text(summary, summary_markdown(mine, spec.name, [h for h in header if h]), spec.inputs)
    report.written.append(summary)
    if plot:
        plot_sweep(mine, plot, spec.name, spec.inputs)
        report.written.append(plot)
    elif plot_note:
        report.notes.append(plot_note)
    return report


def _backend_text(report: SweepReport, jobs: int) -> str:
    if report.backend == "ray":
        return "Ray"
    return f"a local pool of {jobs} processes"


def _cpu_text(cpu: dict[str, Any]) -> str:
    parts = []
    if cpu.get("cores_busy") is not None:
        parts.append(
            f"CPU: {cpu['cores_busy']:.2f} of {cpu['cores']:.0f} cores busy on average "
            f"(user+sys {cpu['cpu_s']:.1f} s of this process and its workers over "
            f"{cpu['wall_s']:.1f} s wall)"
        )
    if cpu.get("machine_busy") is not None:
        parts.append(f"machine-wide {100 * cpu['machine_busy']:.0f} % busy (other jobs included)")
    return "; ".join(parts) or f"wall {cpu.get('wall_s', 0):.1f} s"
