"""What XLA allocates, and memory layout: the targets of issue "the bytes the allocator
reserves", one table. Regenerate all of it with

    python benchmarks/bench_layout.py

(about an hour on 2 cores: 32 cp solves of 20 s, 32 layouts of up to 20 s, 44 MiniMalloc
runs of up to 60 s). ``--only SECTION`` measures some sections again and keeps the others
from ``results_layout.json``; the MiniMalloc timings alone, e.g. on a quiet machine:

    python benchmarks/bench_layout.py --only minimalloc [--instances A,B] [--time-limit 60]

Sections:

- ``assignment``: cpsched's buffer assignment (``readers/hlo/buffer_assignment.py``) of every
  corpus module against XLA's own report next to it: allocation for allocation (size,
  kind, the values it holds and each one's offset), and its total against the
  memory-usage report's "Total bytes" where kept. XLA:CPU jax 0.12 (``models/hlo/*.hlo``,
  ``models/hlo/corpus/``), XLA:CPU jax 0.10 (``models/hlo/corpus-jax0.10/``, ``bundled/``),
  XLA:GPU jax 0.11.2 (``models/hlo/gpu/``).
- ``compiled``: orders other than XLA's own, compiled by XLA:GPU: the temp bytes cpsched's
  assignment gives each order of ``benchmarks/measure_gpu/`` (XLA:GPU's, cp's and
  cp-overlap's) against ``compiled.memory_analysis()`` of that order on an H200
  (``benchmarks/measured/``, kept from a run there; nothing runs on a GPU here).
- ``allocated``: for every jax 0.12 program with a ``.memopt`` twin (XLA:CPU), the peak
  (cpsched's accounting of XLA's live ranges) and the allocated bytes (XLA's buffer
  assignment) of XLA's two orders, each dump's own, and of ``cpsched schedule
  --time-limit T --deterministic`` (cp on the default dump; its figures do not depend on
  the machine's load, ``--wall-clock`` runs cp as the command's default does).
- ``layout``: ``cpsched layout`` on each module cp wrote in ``allocated`` (its own order):
  does a layout reach the order's peak, the most bytes live at once (no layout of that
  order can use less), and is that peak cp's proven floor?
- ``minimalloc``: MiniMalloc's 11 challenging instances (``$CPSCHED_SHARED_DIR`` or
  ``../shared``, ``peer-cases/minimalloc/``): ``cpsched layout X.csv --capacity 1048576
  --time-limit 60`` run ``--runs`` times as a separate process (median wall time), and
  once without ``--capacity`` (the least capacity found in 60 s and its proof).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

SHARED = Path(os.environ.get("CPSCHED_SHARED_DIR", REPO.parent / "shared"))
HLO = REPO / "models" / "hlo"
MINIMALLOC = SHARED / "peer-cases" / "minimalloc"
CAPACITY = 1_048_576
SECTIONS = ("assignment", "compiled", "allocated", "layout", "minimalloc")
DEFAULT_OUT = REPO / "benchmarks" / "results_layout.md"
MEASURED = REPO / "benchmarks" / "measured" / "h200.no-command-buffers.jsonl.gz"

# the module sets of the assignment section: (label, folder, pattern)
ASSIGNMENT_SETS = [
    ("XLA:CPU, jax 0.12", HLO, "*.hlo"),
    ("XLA:CPU, jax 0.12", HLO / "corpus", "*.hlo.gz"),
    ("XLA:CPU, jax 0.10", HLO / "corpus-jax0.10", "*.hlo.gz"),
    ("XLA:CPU, jax 0.10", HLO / "corpus-jax0.10" / "bundled", "*.hlo.gz"),
    ("XLA:GPU, jax 0.11.2", HLO / "gpu", "*.hlo.gz"),
]
# the program sets of the allocated section: (capture, folder, pattern)
PROGRAM_SETS = [
    ("jax 0.12", HLO, "*.hlo"),
    ("jax 0.12", HLO / "corpus", "*.hlo.gz"),
]


def _stem(p: Path) -> str:
    return p.name[: -len(".hlo.gz")] if p.name.endswith(".hlo.gz") else p.name[: -len(".hlo")]


def _companion(p: Path, stem: str, kind: str) -> Path | None:
    for name in (f"{stem}.{kind}.txt", f"{stem}.{kind}.txt.gz"):
        if (p.parent / name).exists():
            return p.parent / name
    return None


def cli_json(args: list[str]) -> tuple[int, dict, str]:
    """The command line in-process with ``--json``: exit code, its JSON, its error line."""
    from cpsched.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([*args, "--json"])
    text = out.getvalue().strip()
    data = json.loads(text) if text.startswith("{") else {}
    lines = err.getvalue().strip().splitlines()
    return rc, data, lines[-1] if lines else ""


def one(v) -> int | None:
    """The single scenario's value of a per-scenario mapping."""
    if v is None:
        return None
    return int(next(iter(v.values()))) if isinstance(v, dict) else int(v)


# -- assignment -------------------------------------------------------------------------------


def measure_assignment() -> list[dict]:
    from cpsched.readers.hlo.buffer_assignment import (
        assign_buffers,
        compare,
        conflicts,
        read_buffer_assignment,
        read_memory_usage_totals,
    )
    from cpsched.readers.hlo.parser import read_hlo_module

    rows = []
    for label, folder, pattern in ASSIGNMENT_SETS:
        for p in sorted(folder.glob(pattern)):
            stem = _stem(p)
            report = _companion(p, stem, "buffer-assignment")
            if report is None:
                continue
            row: dict = {"set": label, "module": str(p.relative_to(HLO))}
            try:
                t0 = time.perf_counter()
                ours = assign_buffers(read_hlo_module(str(p)))
                row["seconds"] = round(time.perf_counter() - t0, 3)
                theirs = read_buffer_assignment(str(report))
                diffs = compare(ours, theirs)
                row.update(
                    allocations=len(theirs.allocations),
                    equal=not diffs,
                    first_difference=diffs[0] if diffs else None,
                    allocated_bytes=ours.allocated_bytes,
                    xla_allocated_bytes=theirs.allocated_bytes,
                    sound=not conflicts(ours),
                )
                usage = _companion(p, stem, "memory-usage-report")
                if usage is not None:
                    total = sum(read_memory_usage_totals(str(usage)).values())
                    row["usage_report_total"] = total
            except Exception as e:  # a failing module is a row, never the end of the run
                row["error"] = f"{type(e).__name__}: {e}"[:300]
            rows.append(row)
    return rows


# -- compiled ---------------------------------------------------------------------------------


def measure_compiled() -> list[dict]:
    """Every order the H200 run compiled: cpsched's temp bytes against XLA's."""
    import gzip

    from cpsched.readers.hlo.buffer_assignment import assign_buffers
    from cpsched.readers.hlo.parser import read_hlo_module

    if not MEASURED.exists():
        return []
    rows = []
    with gzip.open(MEASURED, "rt") as f:
        records = [json.loads(line) for line in f if line.strip()]
    for rec in records:
        if rec.get("kind") != "module" or "orders" not in rec:
            continue
        own = rec["orders"].get("xla", {}).get("order_check") or {}
        for label, o in rec["orders"].items():
            mem = o.get("memory")
            row: dict = {"module": rec["name"], "order": label, "devices": rec.get("devices")}
            if not mem:
                row["error"] = o.get("error") or "not compiled"
                rows.append(row)
                continue
            # the file as the plan named it, relative to the repository
            f = o["file"]
            rel = next(f[f.index(k) :] for k in ("benchmarks/", "models/") if k in f)
            module = read_hlo_module(str(REPO / rel))
            ba = assign_buffers(module, target="gpu")
            final = set(o.get("xla_order") or ())
            # copies of the entry that XLA's final module no longer has
            dropped_copies = (
                [
                    i.name
                    for i in module.entry.instructions
                    if i.opcode == "copy" and i.name not in final
                ]
                if final
                else []
            )
            check = o.get("order_check") or {}
            row.update(
                temp_bytes=ba.temp_bytes,
                xla_temp_bytes=mem["temp_bytes"],
                host_temp_bytes=ba.host_temp_bytes,
                xla_host_temp_bytes=mem.get("host_temp_bytes", 0),
                order_kept=o.get("order_kept"),
                added_by_xla=check.get("added_by_xla"),
                dropped_by_xla=check.get("dropped_by_xla"),
                added_by_xla_own_order=own.get("added_by_xla"),
                dropped_by_xla_own_order=own.get("dropped_by_xla"),
                dropped_copies=dropped_copies,
            )
            rows.append(row)
    return rows


def _compiled_table(sec: dict) -> list[str]:
    rows = [r for r in sec["rows"] if "error" not in r]
    L = [
        "## Orders other than XLA's, compiled by XLA:GPU",
        "",
        "Each order of `benchmarks/measure_gpu/` (XLA:GPU's own, cp's, cp-overlap's) was "
        "compiled on an H200 (jax 0.11.2, `benchmarks/measured/`); XLA kept every order. "
        "*equal*: the temp bytes of cpsched's assignment for the order (`--json` "
        "`temp_bytes`) equal `compiled.memory_analysis()`'s, and so do the host temp bytes. "
        "XLA:GPU adds and drops instructions after scheduling (copies it finds it can "
        "remove, async wrappers of collectives); where it dropped copies of the entry, or "
        "added or dropped others in an order than in its own order of the same module, the "
        "module it assigned is not the one cpsched assigned (*XLA changed it*).",
        "",
        "| order | compiled | equal | XLA changed it | differ otherwise |",
        "|---|---:|---:|---:|---:|",
    ]
    for label in sorted({r["order"] for r in rows}, key=["xla", "cp", "cp-overlap"].index):
        rs = [r for r in rows if r["order"] == label]
        eq = [r for r in rs if _compiled_equal(r)]
        changed = [r for r in rs if not _compiled_equal(r) and _changed(r)]
        L.append(
            f"| {label} | {len(rs)} | {len(eq)} | {len(changed)} "
            f"| {len(rs) - len(eq) - len(changed)} |"
        )
    bad = [r for r in rows if not _compiled_equal(r)]
    over = [r["temp_bytes"] - r["xla_temp_bytes"] for r in bad if _changed(r)]
    if bad:
        L += ["", "Orders that differ (temp bytes, cpsched / XLA):", ""]
        L += [
            f"- {r['module']} ({r['devices']} device{'s' if r['devices'] != 1 else ''}), "
            f"{r['order']}: {r['temp_bytes']:,} / {r['xla_temp_bytes']:,} "
            f"({r['temp_bytes'] - r['xla_temp_bytes']:+,}); XLA added / dropped "
            f"{r['added_by_xla']} / {r['dropped_by_xla']} instructions, in its own order "
            f"{r['added_by_xla_own_order']} / {r['dropped_by_xla_own_order']}"
            + (
                f"; copies dropped: {', '.join(r['dropped_copies'])}"
                if r.get("dropped_copies")
                else ""
            )
            for r in bad
        ]
    L += [
        "",
        "XLA's own orders are the corpus dumps of `models/hlo/gpu/`, whose H100 reports "
        "cpsched's assignment equals allocation for allocation (first section); the H200 "
        "compiled each again from that optimized module, so a difference in an `xla` row "
        "is XLA's second compile against its first. Where XLA dropped copies from an "
        "order, the device allocates less than cpsched's figure says: XLA:GPU runs its copy "
        "elision again after scheduling (`RemoveUnnecessaryCopies` under the module's "
        "order, in `RunPostSchedulingCopyInsertion`), and an order that ends a copy's "
        "source before its destination is written frees that copy; cpsched assigns the "
        "module as written and does not reproduce that pass, so for such orders its figure "
        f"is above XLA's (by at most {max(over, default=0):,} B here).",
    ]
    errors = [r for r in sec["rows"] if "error" in r]
    if errors:
        L += [
            "",
            f"Not compiled there: {', '.join(r['module'] + ' ' + r['order'] for r in errors)}.",
        ]
    L.append("")
    return L


def _compiled_equal(r: dict) -> bool:
    return (r["temp_bytes"], r["host_temp_bytes"]) == (
        r["xla_temp_bytes"],
        r["xla_host_temp_bytes"],
    )


def _changed(r: dict) -> bool:
    """XLA dropped copies of the entry, or added or dropped other instructions in this
    order than in its own."""
    return bool(r.get("dropped_copies")) or (r.get("added_by_xla"), r.get("dropped_by_xla")) != (
        r.get("added_by_xla_own_order"),
        r.get("dropped_by_xla_own_order"),
    )


# -- allocated --------------------------------------------------------------------------------


def programs() -> list[tuple[str, str, Path, Path]]:
    """(capture, name, default dump, memopt dump) for every program with a twin."""
    out = []
    for capture, folder, pattern in PROGRAM_SETS:
        for p in sorted(folder.glob(pattern)):
            stem = _stem(p)
            if stem.endswith(".memopt"):
                continue
            twin = p.parent / p.name.replace(stem, stem + ".memopt", 1)
            if twin.exists():
                out.append((capture, str(p.relative_to(HLO)), p, twin))
    return out


def plain(path: Path, tmp: Path) -> Path:
    if path.suffix != ".gz":
        return path
    import gzip

    dest = tmp / path.name[:-3]
    with gzip.open(path, "rb") as f, open(dest, "wb") as g:
        shutil.copyfileobj(f, g)
    return dest


def measure_allocated(
    time_limit: float, keep: Path, only: list[str] | None = None, deterministic: bool = False
) -> list[dict]:
    rows = []
    for capture, name, default, memopt in programs():
        if only is not None and _stem(default) not in only:
            continue
        print(f"allocated: {name} ...", file=sys.stderr, flush=True)
        row: dict = {"capture": capture, "program": name}
        with tempfile.TemporaryDirectory() as tmp:
            try:
                for key, src in (("xla_default", default), ("xla_memopt", memopt)):
                    rc, d, err = cli_json(["info", str(plain(src, Path(tmp)))])
                    if rc:
                        raise RuntimeError(err)
                    row[f"{key}_peak"] = one(d["peak_bytes"])
                    row[f"{key}_allocated"] = one(d.get("allocated_bytes"))
                out = keep / (
                    name.replace("/", "__").replace(".hlo.gz", "").replace(".hlo", "") + ".cp.hlo"
                )
                t0 = time.perf_counter()
                rc, d, err = cli_json(
                    [
                        "schedule",
                        str(plain(default, Path(tmp))),
                        "--time-limit",
                        f"{time_limit:g}",
                        "-o",
                        str(out),
                        *(["--deterministic"] if deterministic else []),
                    ]
                )
                if rc:
                    raise RuntimeError(err)
                row.update(
                    cp_seconds=round(time.perf_counter() - t0, 1),
                    cp_status=d.get("status"),
                    cp_peak=one(d["peak_bytes"]),
                    cp_bound=one(d["lower_bound_bytes"]),
                    cp_allocated=one(d.get("allocated_bytes")),
                    cp_module=str(out),
                )
                search = _find(d, "allocation_search")
                if search:
                    row["cp_allocated_before_search"] = search["start_allocated_bytes"]
            except Exception as e:
                row["error"] = f"{type(e).__name__}: {e}"[:300]
        rows.append(row)
    return rows


def _find(data, key):
    if isinstance(data, dict):
        if key in data:
            return data[key]
        for v in data.values():
            r = _find(v, key)
            if r is not None:
                return r
    elif isinstance(data, list):
        for v in data:
            r = _find(v, key)
            if r is not None:
                return r
    return None


# -- minimalloc -------------------------------------------------------------------------------


def run_layout(args: list[str], timeout: float) -> tuple[int, dict, float, str]:
    """``cpsched layout`` as its own process: exit code, JSON, wall seconds, error line."""
    cmd = [sys.executable, "-m", "cpsched", "layout", *args, "--json"]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO)
    except subprocess.TimeoutExpired:
        return 124, {}, time.perf_counter() - t0, "timed out"
    dt = time.perf_counter() - t0
    text = p.stdout.strip()
    data = json.loads(text) if text.startswith("{") else {}
    err = p.stderr.strip().splitlines()
    return p.returncode, data, dt, err[-1] if err else ""


def measure_minimalloc(runs: int, time_limit: float, instances: list[str] | None) -> list[dict]:
    rows = []
    for p in sorted(MINIMALLOC.glob("*.csv")):
        if instances is not None and p.name.split(".")[0] not in instances:
            continue
        print(f"minimalloc: {p.name} ...", file=sys.stderr, flush=True)
        row: dict = {
            "instance": p.name.split(".")[0],
            "buffers": _count_rows(p),
            "load_at_start": _load(),
            "command": " ".join(sys.argv),
        }
        fits = []
        for _ in range(runs):
            with tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp) / "out.csv"
                rc, d, dt, err = run_layout(
                    [
                        str(p),
                        "--capacity",
                        str(CAPACITY),
                        "--time-limit",
                        f"{time_limit:g}",
                        "-o",
                        str(out),
                    ],
                    timeout=time_limit + 60,
                )
                valid = None
                if rc == 0:
                    rc2, chk, _, _ = run_layout(
                        [str(out), "--check", "--capacity", str(CAPACITY)], timeout=120
                    )
                    valid = rc2 == 0 and chk.get("valid")
            fits.append(
                {
                    "rc": rc,
                    "seconds": round(dt, 2),
                    "status": d.get("status"),
                    "capacity_bytes": d.get("capacity_bytes"),
                    "valid": valid,
                    "found_by": d.get("found_by"),
                    "error": err if rc else None,
                }
            )
        row["fit_runs"] = fits
        rc, d, dt, err = run_layout(
            [str(p), "--time-limit", f"{time_limit:g}"], timeout=time_limit + 60
        )
        row["least"] = {
            "rc": rc,
            "seconds": round(dt, 2),
            "status": d.get("status"),
            "capacity_bytes": d.get("capacity_bytes"),
            "lower_bound_bytes": d.get("lower_bound_bytes"),
            "found_by": d.get("found_by"),
            "error": err if rc else None,
        }
        rows.append(row)
    return rows


def _fit_summary(row: dict) -> dict:
    fits = row["fit_runs"]
    ok = [f for f in fits if f["rc"] == 0 and (f["capacity_bytes"] or 0) <= CAPACITY]
    return {
        "command": row.get("command"),
        "load_at_start": row.get("load_at_start"),
        "runs": len(fits),
        "fitting": len(ok),
        "seconds": [f["seconds"] for f in fits],
        "errors": [f["error"] for f in fits if f["rc"] and f.get("error")],
    }


def _count_rows(p: Path) -> int:
    return max(0, len([ln for ln in p.read_text().splitlines() if ln.strip()]) - 1)


# -- layout -----------------------------------------------------------------------------------


def measure_layout(allocated: list[dict], time_limit: float) -> list[dict]:
    rows = []
    for a in allocated:
        module = a.get("cp_module")
        if not module or not Path(module).exists():
            continue
        print(f"layout: {a['program']} ...", file=sys.stderr, flush=True)
        row: dict = {
            "capture": a["capture"],
            "program": a["program"],
            "cp_peak": a.get("cp_peak"),
            "cp_bound": a.get("cp_bound"),
        }
        rc, d, err = cli_json(["layout", module, "--time-limit", f"{time_limit:g}"])
        row.update(
            rc=rc,
            error=err if rc else None,
            status=d.get("status"),
            buffers=d.get("buffers"),
            peak=d.get("peak_bytes"),
            capacity=d.get("capacity_bytes"),
            lower_bound=d.get("lower_bound_bytes"),
            seconds=d.get("seconds"),
            found_by=d.get("found_by"),
        )
        rows.append(row)
    return rows


# -- the table --------------------------------------------------------------------------------


def fmt(v) -> str:
    if v is None:
        return "-"
    return f"{v:,}" if isinstance(v, int) else str(v).replace("|", "/")


def _load() -> list[float] | None:
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None


def machine() -> dict:
    from cpsched.version import ortools_version

    return {
        "cores": os.cpu_count(),
        "load_average": _load(),
        "python": platform.python_version(),
        "ortools": ortools_version(),
        "platform": platform.platform(),
    }


TABLES = {}  # section -> its table's function, filled below


def table(res: dict) -> str:
    L = [
        "# What XLA allocates, and memory layout",
        "",
        "Command: `python benchmarks/bench_layout.py` (all sections; `--only SECTION` "
        "measures one again and keeps the others; `--only minimalloc --time-limit 60` the "
        "MiniMalloc timings alone). Each section names the command and the machine load "
        "that made it: the machine has 2 cores shared with other jobs, so where the load "
        "average is above 2 the times are upper bounds of a quiet machine's.",
        "",
    ]
    for name in SECTIONS:
        sec = res["sections"].get(name)
        if sec is None:
            continue
        L += TABLES[name](sec)
        if name == "allocated" and "allocated_other_mode" in res["sections"]:
            L += _other_mode(res["sections"]["allocated_other_mode"])
        m = sec.get("machine", {})
        L += [
            f"Made by `{sec.get('command')}`: {m.get('cores')} cores, load average "
            f"{m.get('load_average')} at the start and {sec.get('load_at_end')} at the end "
            f"(1, 5, 15 min), Python {m.get('python')}, OR-Tools {m.get('ortools')}.",
            "",
        ]
    return "\n".join(L) + "\n"


def _assignment_table(sec: dict) -> list[str]:
    rows = sec["rows"]
    L = [
        "## XLA's buffer assignment, reproduced",
        "",
        "Each corpus module's buffer assignment under its own order against XLA's report "
        "beside it: *equal* counts modules whose every allocation matches (size, kind, the "
        "values it holds, each value's offset and size); *total* compares the allocated "
        'bytes with the memory-usage report\'s "Total bytes" where the capture kept one; '
        "*sound*: no two values of an allocation share bytes while both live, but for XLA's "
        "own sharing (`conflicts`).",
        "",
        "| dumps | modules | equal | total = usage report | sound | seconds (median) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    by: dict[str, list[dict]] = {}
    for r in rows:
        by.setdefault(r["set"], []).append(r)
    for label, rs in by.items():
        ok = [r for r in rs if r.get("equal")]
        usage = [r for r in rs if "usage_report_total" in r]
        usage_ok = [r for r in usage if r["usage_report_total"] == r.get("allocated_bytes")]
        sound = [r for r in rs if r.get("sound")]
        secs = [r["seconds"] for r in rs if "seconds" in r]
        L.append(
            f"| {label} | {len(rs)} | {len(ok)} | "
            + (f"{len(usage_ok)} of {len(usage)}" if usage else "no reports kept")
            + f" | {len(sound)} | {statistics.median(secs):.2f} |"
        )
    bad = [r for r in rows if not r.get("equal")]
    if bad:
        L += ["", "Modules that differ:", ""]
        L += [f"- {r['module']}: {fmt(r.get('first_difference') or r.get('error'))}" for r in bad]
    L.append("")
    return L


def _allocated_table(sec: dict) -> list[str]:
    rows, time_limit = sec["rows"], sec.get("cp_time_limit")
    L = [
        "## Allocated bytes of cp's orders against XLA's",
        "",
        f"`cpsched schedule DUMP --time-limit {fmt(time_limit)}{_mode_flag(sec)}` (cp: the "
        "least peak; a fifth of the limit goes to a search among orders of no higher peak "
        "for the least allocated bytes, `strategies/allocation.py`"
        + (
            "; `--deterministic`: one CP-SAT worker, the limit counted in CP-SAT's "
            "deterministic time, 20 buffer assignments per second of limit, so the figures "
            "do not depend on the machine's load and its wall time does"
            if sec.get("deterministic")
            else "; wall-clock limits, so a loaded machine gives cp and the search less work"
        )
        + ") on each program's default dump, "
        "against XLA:CPU's two orders (each dump's own: the default scheduler and the "
        "memory-optimized one). *peak*: most bytes live at once by cpsched's accounting; "
        "*allocated*: the total of XLA's buffer assignment for the order (equal to XLA's "
        "own report for XLA's orders, see above). *vs XLA*: cp minus the lower of XLA's two, "
        "peak / allocated. *before search*: cp's allocated bytes before the search. "
        "*target*: where cp's peak is below both of XLA's, is its allocated below both?",
        "",
        "| capture | program | XLA default peak / allocated | XLA memopt peak / allocated "
        "| cp peak / allocated | before search | vs XLA (peak / allocated) | cp s | target |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        if "error" in r:
            L.append(f"| {r['capture']} | {r['program']} | error: {fmt(r['error'])} |||||||")
            continue
        dp, da = _against_xla(r)
        target = "-" if dp >= 0 else ("yes" if da < 0 else "**no**")
        L.append(
            f"| {r['capture']} | {r['program']} "
            f"| {fmt(r['xla_default_peak'])} / {fmt(r['xla_default_allocated'])} "
            f"| {fmt(r['xla_memopt_peak'])} / {fmt(r['xla_memopt_allocated'])} "
            f"| {fmt(r['cp_peak'])} / {fmt(r['cp_allocated'])} "
            f"| {fmt(r.get('cp_allocated_before_search'))} "
            f"| {dp:+,} / {da:+,} | {r['cp_seconds']} | {target} |"
        )
    L += ["", _allocated_summary(rows), ""]
    return L


def _mode_flag(sec: dict) -> str:
    return " --deterministic" if sec.get("deterministic") else ""


def _against_xla(r: dict) -> tuple[int, int]:
    """cp minus the lower of XLA's two orders: (peak, allocated)."""
    xp = min(r["xla_default_peak"], r["xla_memopt_peak"])
    xa = min(r["xla_default_allocated"], r["xla_memopt_allocated"])
    return r["cp_peak"] - xp, r["cp_allocated"] - xa


def _allocated_summary(rows: list[dict]) -> str:
    ok_rows = [r for r in rows if "error" not in r]
    diffs = [(r, *_against_xla(r)) for r in ok_rows]
    below = [(r, da) for r, dp, da in diffs if dp < 0]
    missed = [r["program"] for r, da in below if da >= 0]
    tie_above = [r["program"] for r, dp, da in diffs if dp == 0 and da > 0]
    text = (
        f"cp's peak is below both of XLA's orders on {len(below)} of {len(ok_rows)} programs; "
        f"its allocated bytes are below both of theirs on {len(below) - len(missed)} of them"
    )
    text += f" (not on {', '.join(missed)})." if missed else "."
    text += f" Where cp's peak ties XLA's, its allocated bytes are above on {len(tie_above)}"
    text += f" ({', '.join(tie_above)})." if tie_above else "."
    errors = len(rows) - len(ok_rows)
    if errors:
        text += f" {errors} programs failed (error rows)."
    return text


def _other_mode(sec: dict) -> list[str]:
    m = sec.get("machine", {})
    mode = (
        "`--deterministic`"
        if sec.get("deterministic")
        else "wall-clock limits (`cpsched schedule`'s default)"
    )
    return [
        f"The same section run with {mode}, `--time-limit {fmt(sec.get('cp_time_limit'))}`, "
        f"load average {m.get('load_average')} at the start and {sec.get('load_at_end')} at "
        f"the end (`{sec.get('command')}`): " + _allocated_summary(sec["rows"]),
        "",
    ]


def _minimalloc_table(sec: dict) -> list[str]:
    rows, time_limit = sec["rows"], sec.get("time_limit")
    L = [
        "## MiniMalloc's challenging instances",
        "",
        f"*fit*: `cpsched layout X.csv --capacity 1048576 --time-limit {fmt(time_limit)} -o "
        "OUT.csv`, each run a process of its own on 2 workers (the exact search, CP-SAT "
        "beside it); the median wall time of the runs, process start included, how many "
        "runs fit, and `--check` on the layout written. *least*: the same without "
        "`--capacity`: the least capacity found in the time limit, the proven lower bound, "
        "OPTIMAL where they meet. MiniMalloc's published times (C++, hardware not stated): "
        "A 4.91 s, B 3.66, C 0.64, D 2.67, E 3.72, F 5.36, G 1.18, H 1.81, I 3.91, J 0.88, "
        "K 0.63.",
        "",
        "| instance | buffers | fit: runs fitting | median s | max s | valid | found by "
        "| least: capacity | lower bound | status | s | load at start |",
        "|---|---:|---:|---:|---:|---|---|---:|---:|---|---:|---|",
    ]
    all_fit = in_time = optimal = 0
    for r in rows:
        fits = r["fit_runs"]
        ok = [f for f in fits if f["rc"] == 0 and (f["capacity_bytes"] or 0) <= CAPACITY]
        secs = [f["seconds"] for f in fits]
        least = r["least"]
        L.append(
            f"| {r['instance']} | {r['buffers']} | {len(ok)} of {len(fits)} "
            f"| {statistics.median(secs):.1f} | {max(secs):.1f} "
            f"| {'yes' if all(f['valid'] for f in ok) and ok else 'no'} "
            f"| {', '.join(sorted({str(f['found_by']) for f in ok})) or '-'} "
            f"| {fmt(least['capacity_bytes'])} | {fmt(least['lower_bound_bytes'])} "
            f"| {least['status'] or least['error']} | {least['seconds']:.1f} "
            f"| {fmt(r.get('load_at_start'))} |"
        )
        all_fit += len(ok) == len(fits)
        in_time += bool(ok) and len(ok) == len(fits) and max(secs) <= (time_limit or 60)
        optimal += least["status"] == "OPTIMAL"
    n = len(rows)
    made: dict[str, list[str]] = {}
    for r in rows:
        made.setdefault(str(r.get("command")), []).append(r["instance"])
    if len(made) > 1:  # rows kept from earlier runs (--instances)
        L += [
            "",
            "Rows made by "
            + "; ".join(f"`python {c}` ({', '.join(names)})" for c, names in made.items())
            + ".",
        ]
    earlier = [(r["instance"], e) for r in rows for e in r.get("earlier", [])]
    if earlier:
        L += ["", "Measured again with `--instances`; the earlier runs of those instances:", ""]
        L += [
            f"- {name}: {e['fitting']} of {e['runs']} runs fit, seconds "
            f"{', '.join(f'{x:.1f}' for x in e['seconds'])}, load at start "
            f"{e['load_at_start']}"
            + "".join(
                f"; {n} run{'s' if n > 1 else ''}: {msg}" for msg, n in Counter(e["errors"]).items()
            )
            for name, e in earlier
        ]
    L += [
        "",
        f"Every run fits in 1,048,576 bytes on {all_fit} of {n} instances, each within "
        f"{fmt(time_limit)} s on {in_time} of {n}; the least capacity is proven (OPTIMAL) on "
        f"{optimal} of {n}.",
        "",
    ]
    return L


def _layout_table(sec: dict) -> list[str]:
    rows, time_limit = sec["rows"], sec.get("layout_time_limit")
    L = [
        "## Layout plus order",
        "",
        f"`cpsched layout CP_MODULE --time-limit {fmt(time_limit)}` on each module cp wrote "
        "above, in its own order: buffers (and each step's transient bytes) at offsets. "
        "*reaches*: the layout's capacity equals the order's peak, the most bytes live at "
        "once, below which no layout of that order fits. *floor*: that peak is cp's proven "
        "lower bound for any order (so no order and layout can use less).",
        "",
        "| capture | program | buffers | peak | capacity | reaches | floor | s | found by |",
        "|---|---|---:|---:|---:|---|---|---:|---|",
    ]
    reach = floor = 0
    for r in rows:
        if r.get("rc"):
            L.append(f"| {r['capture']} | {r['program']} | error: {fmt(r.get('error'))} ||||||")
            continue
        ok = r["capacity"] == r["peak"]
        at_floor = ok and r.get("cp_bound") is not None and r["peak"] <= r["cp_bound"]
        reach += ok
        floor += at_floor
        L.append(
            f"| {r['capture']} | {r['program']} | {fmt(r['buffers'])} | {fmt(r['peak'])} "
            f"| {fmt(r['capacity'])} | {'yes' if ok else '**no**'} "
            f"| {'yes' if at_floor else '-'} | {r['seconds']} | {r['found_by']} |"
        )
    n = len(rows)
    L += [
        "",
        f"A layout at the order's peak on {reach} of {n} modules "
        f"({100 * reach / max(n, 1):.0f} %); at cp's proven floor as well on {floor}.",
        "",
    ]
    return L


TABLES.update(
    assignment=_assignment_table,
    compiled=_compiled_table,
    allocated=_allocated_table,
    layout=_layout_table,
    minimalloc=_minimalloc_table,
)


def _names(values: list[str]) -> list[str]:
    """``--only a,b --only c`` -> [a, b, c]."""
    return [v.strip() for x in values for v in x.split(",") if v.strip()]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="With --only, the sections not named are kept from OUT's JSON twin (OUT with "
        ".json), so that one section can be measured again and the table stays whole.",
    )
    ap.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="SECTION",
        help=f"measure only these sections ({', '.join(SECTIONS)}; comma-separated or "
        "repeated; default: all)",
    )
    ap.add_argument(
        "--instances",
        metavar="A,B,...",
        help="MiniMalloc instances to run (default: all eleven, A-K)",
    )
    ap.add_argument(
        "--time-limit",
        type=float,
        default=60.0,
        help="seconds per `cpsched layout` run on a MiniMalloc instance (default: 60)",
    )
    ap.add_argument("--runs", type=int, default=3, help="fit runs per MiniMalloc instance")
    ap.add_argument(
        "--programs",
        metavar="NAME,...",
        help="programs of the allocated and layout sections, by name (default: all; a "
        "partial run for checking the script, its table is not the whole one)",
    )
    ap.add_argument(
        "--cp-time-limit", type=float, default=20.0, help="cp seconds per program (default: 20)"
    )
    ap.add_argument(
        "--layout-time-limit",
        type=float,
        default=20.0,
        help="`cpsched layout` seconds per cp module (layout section; default: 20)",
    )
    ap.add_argument(
        "--wall-clock",
        action="store_true",
        help="cp with wall-clock limits in the allocated section, as `cpsched schedule` "
        "runs by default (default: --deterministic: one worker, the limit in CP-SAT's "
        "deterministic time and a fixed number of buffer assignments, so that the figures "
        "do not depend on the machine's load)",
    )
    ap.add_argument("--from-json", metavar="JSON", help="rewrite the table from these rows")
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results_layout.md"))
    args = ap.parse_args(argv)
    only = _names(args.only)
    unknown = [s for s in only if s not in SECTIONS]
    if unknown:
        ap.error(f"--only: unknown section {unknown[0]} (one of {', '.join(SECTIONS)})")
    sections = only or list(SECTIONS)
    out = Path(args.out)
    twin = out.with_suffix(".json")
    if args.from_json:
        res = json.loads(Path(args.from_json).read_text())
    else:
        res = {"sections": {}}
        if only and twin.exists():
            res = json.loads(twin.read_text())
        command = "python benchmarks/bench_layout.py" + (
            f" --out {args.out}" if out.resolve() != DEFAULT_OUT else ""
        )
        for name, flag, default in (
            ("time_limit", "--time-limit", 60.0),
            ("runs", "--runs", 3),
            ("cp_time_limit", "--cp-time-limit", 20.0),
            ("layout_time_limit", "--layout-time-limit", 20.0),
        ):
            if getattr(args, name) != default:
                command += f" {flag} {getattr(args, name):g}"
        if only:
            command += f" --only {','.join(only)}"
        if args.instances:
            command += f" --instances {args.instances}"
        if args.programs:
            command += f" --programs {args.programs}"
        args.deterministic = not args.wall_clock
        if args.wall_clock:
            command += " --wall-clock"
        instances = [x.upper() for x in _names([args.instances])] if args.instances else None
        chosen = _names([args.programs]) if args.programs else None
        keep = Path(tempfile.mkdtemp(prefix="bench_layout_"))
        try:
            for name in SECTIONS:
                if name not in sections and not (name == "allocated" and "layout" in sections):
                    continue
                print(f"== {name}", file=sys.stderr, flush=True)
                meta = {"command": command, "machine": machine()}
                if name == "assignment":
                    rows = measure_assignment()
                elif name == "compiled":
                    rows = measure_compiled()
                elif name == "allocated":
                    meta.update(cp_time_limit=args.cp_time_limit, deterministic=args.deterministic)
                    prev = res["sections"].get("allocated")
                    if prev is not None and bool(prev.get("deterministic")) != args.deterministic:
                        # the other mode's run stays, summed up beside this one
                        res["sections"]["allocated_other_mode"] = prev
                    rows = measure_allocated(args.cp_time_limit, keep, chosen, args.deterministic)
                elif name == "layout":
                    meta["layout_time_limit"] = args.layout_time_limit
                    rows = measure_layout(
                        res["sections"]["allocated"]["rows"], args.layout_time_limit
                    )
                else:
                    meta.update(time_limit=args.time_limit, runs=args.runs)
                    rows = measure_minimalloc(args.runs, args.time_limit, instances)
                    if instances is not None and name in res["sections"]:
                        # the other instances' rows stay, each with the command that made it
                        done = {r["instance"] for r in rows}
                        before = {r["instance"]: r for r in res["sections"][name]["rows"]}
                        for r in rows:  # what the run before said stays visible
                            if r["instance"] in before:
                                old = before[r["instance"]]
                                r["earlier"] = [*old.get("earlier", []), _fit_summary(old)]
                        rows = sorted(
                            [r for r in res["sections"][name]["rows"] if r["instance"] not in done]
                            + rows,
                            key=lambda r: r["instance"],
                        )
                meta["load_at_end"] = _load()
                res["sections"][name] = {**meta, "rows": rows}
        finally:
            shutil.rmtree(keep, ignore_errors=True)
        for r in res["sections"].get("allocated", {}).get("rows", []):
            r.pop("cp_module", None)
        twin.write_text(json.dumps(res, indent=1) + "\n")
    text = table(res)
    out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
