"""A sweep killed halfway resumes, and keeps every core busy: `cpsched sweep` under kill -9.

    python benchmarks/bench_sweep.py --repeat 3 --out benchmarks/results_sweep.md --section local
    .venv-ray/bin/python benchmarks/bench_sweep.py --out benchmarks/results_sweep.md --section ray
    python benchmarks/bench_sweep.py --quick        # 200 solves, printed

Runs ``cpsched sweep benchmarks/sweeps/many_small.toml`` (2,000 solves: 250 random layered
graphs of 30 ops x 8 methods) in a new session, kills all its processes with SIGKILL
once half the rows are in the table, then runs the same command again to the end. It
checks that the table then has every key exactly once, and reports for each phase the wall
time, the CPU seconds and run-queue wait of the sweep's processes (driver, pool or Ray,
read from /proc while they run) over wall time and cores, and the machine-wide busy share
from /proc/stat (which counts other jobs on the machine too). With ray installed in the
Python that runs it (``make ray-env``), the sweep runs on a local Ray.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "benchmarks" / "sweeps" / "many_small.toml"
ENV = dict(os.environ, PYTHONPATH=str(REPO))


def session_pids(sid: int) -> list[int]:
    """Every process of session ``sid``: the driver, its pool, and Ray's processes (Ray
    puts its workers in process groups of their own, in the driver's session)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:  # fields after the name: state ppid pgrp session ...
            out.append(int(d))
    return out


def kill_session(sid: int) -> None:
    for pid in session_pids(sid):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def session_sample(sid: int, seen: dict[int, tuple[float, float]]) -> None:
    """For every live process of session ``sid``: (seconds on a CPU, seconds runnable but
    waiting for one) from /proc/PID/schedstat, kept in ``seen`` by pid (the last sample of
    a process that has exited stays)."""
    for pid in session_pids(sid):
        try:
            with open(f"/proc/{pid}/schedstat") as f:
                on_cpu, waiting = (int(v) / 1e9 for v in f.read().split()[:2])
        except (OSError, ValueError):
            continue
        seen[pid] = (on_cpu, waiting)


def machine_ticks() -> tuple[int, int]:
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v) - v[3] - v[4], sum(v)


def rows(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def phase(cmd: list[str], cwd: Path, table: Path, stop_at: int | None) -> dict:
    """Run ``cmd`` in a new session; with ``stop_at``, kill every process of it once the
    table has that many rows. CPU time is sampled from /proc every 0.1 s (killed processes
    cannot be asked after)."""
    m0, t0 = machine_ticks(), time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=ENV,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen: dict[int, tuple[float, float]] = {}
    killed = False
    start_rows = table.read_bytes().count(b"\n") if table.exists() else 0
    first = last = None  # (time, CPU + wait) at the first new row, and at the last sample
    while proc.poll() is None:
        session_sample(proc.pid, seen)
        now = (time.perf_counter(), sum(c + w for c, w in seen.values()))
        n = table.read_bytes().count(b"\n") if table.exists() else 0
        if n > start_rows:
            first = first or now
            last = now
        if stop_at is not None and n - 1 >= stop_at:
            kill_session(proc.pid)  # the driver, its pool or Ray, all at once
            killed = True
            break
        time.sleep(0.1)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    m1 = machine_ticks()
    return {
        "wall": wall,
        "cpu": sum(c for c, _ in seen.values()),
        "waiting": sum(w for _, w in seen.values()),
        "machine": (m1[0] - m0[0]) / max(1, m1[1] - m0[1]),
        "killed": killed,
        "rc": proc.returncode,
        "stdout": out,
        "stderr": err,
        "rows": len(rows(table)),
        # cores wanted from the first row written to the last sample: solving, not starting
        "steady": (last[1] - first[1]) / (last[0] - first[0])
        if first and last and last[0] > first[0]
        else float("nan"),
    }


def one_run(args, cmd_tail: list[str]) -> dict:
    """The spec in a fresh folder: run, kill -9 halfway, resume; the table checked."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        text = Path(args.spec).read_text()
        if args.quick:
            text = text.replace("seed=0..249", "seed=0..24")
        (work / "sweep.toml").write_text(text)
        table = work / "sweep.csv"
        cmd = [sys.executable, "-m", "cpsched", "sweep", "sweep.toml"] + cmd_tail
        dry = subprocess.run(
            cmd + ["--dry-run"], cwd=work, env=ENV, capture_output=True, text=True, check=True
        )
        total = int(dry.stdout.split()[2])
        load = os.getloadavg()
        first = phase(cmd, work, table, stop_at=total // 2)
        second = phase(cmd, work, table, stop_at=None)
        keys = [r["key"] for r in rows(table)]
        errors = sum(r["status"] == "ERROR" for r in rows(table))
        for p in (first, second):  # no temporary paths in the results
            p["stdout"] = p["stdout"].replace(str(work) + os.sep, "")
    ok = second["rc"] == 0 and len(keys) == total and len(set(keys)) == total
    return {
        "first": first,
        "second": second,
        "keys": keys,
        "errors": errors,
        "ok": ok,
        "total": total,
        "load": load,
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default=str(SPEC), help="the sweep spec (default: many_small)")
    ap.add_argument("--quick", action="store_true", help="the first 25 graphs only (200 solves)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=1, help="whole runs (kill + resume) to make")
    ap.add_argument("--out", default=None, help="markdown results (default: print only)")
    ap.add_argument(
        "--section",
        default=None,
        help="replace only this section of --out (between <!-- auto:NAME --> markers), "
        "keeping the rest of the file",
    )
    args = ap.parse_args()
    cores = len(os.sched_getaffinity(0))
    runs = [one_run(args, ["--jobs", str(args.jobs)]) for _ in range(args.repeat)]
    total = runs[0]["total"]
    shown = "cpsched sweep " + os.path.relpath(args.spec, REPO) + f" --jobs {args.jobs}"
    loads = ", ".join(f"{r['load'][0]:.1f}" for r in runs)
    backend = "Ray (local)" if "on Ray" in runs[0]["second"]["stdout"] else "a local process pool"
    python = "python" if backend.startswith("a local") else ".venv-ray/bin/python"
    lines = [
        f"## {backend[0].upper() + backend[1:]}"
        if args.section
        else "# `cpsched sweep`: kill -9 halfway, resume, cores busy",
        "",
        f"Made by `{python} benchmarks/bench_sweep.py"
        + (" --quick" if args.quick else "")
        + (f" --repeat {args.repeat}" if args.repeat != 1 else "")
        + (f" --out {shlex.quote(os.path.relpath(args.out, REPO))}" if args.out else "")
        + (f" --section {args.section}" if args.section else "")
        + "`, "
        f"which runs `{shown}` ({total} solves: cp at a 1 s limit with one CP-SAT worker and "
        "seven heuristics on 250 random layered graphs of 30 ops) in a new session, "
        "kills all its processes (driver, pool or Ray) with SIGKILL once half the rows are in "
        "the table, and runs the "
        f"same command again to the end; {args.repeat} such run(s), in a fresh folder each.",
        "",
        f"Machine: {cores} cores ({platform.machine()}), **shared with other jobs** (1-minute "
        f"load average {loads} at the start of each run: several other processes wanted the "
        "same 2 cores), so the machine-wide share counts their work too; Python "
        f"{platform.python_version()}, {backend}.",
        "",
        "| run | phase | rows in the table after | wall | CPU time of the sweep's processes | "
        "their wait for a CPU | cores used | cores wanted (used + waiting) | cores wanted "
        "from the first row on | machine-wide busy |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for k, r in enumerate(runs, start=1):
        for name, p in (("killed halfway (kill -9)", r["first"]), ("resumed", r["second"])):
            lines.append(
                f"| {k} | {name} | {p['rows']} | {p['wall']:.1f} s | {p['cpu']:.1f} s | "
                f"{p['waiting']:.1f} s | {p['cpu'] / p['wall']:.2f} of {cores} | "
                f"{(p['cpu'] + p['waiting']) / p['wall']:.2f} of {cores} | "
                f"{p['steady']:.2f} of {cores} | {100 * p['machine']:.0f} % |"
            )
    wanted = [
        (p["cpu"] + p["waiting"]) / p["wall"] for r in runs for p in (r["first"], r["second"])
    ]
    steady = [p["steady"] for r in runs for p in (r["first"], r["second"])]
    ok = all(r["ok"] for r in runs)
    resumed = [ln.strip() for ln in runs[-1]["second"]["stdout"].splitlines() if ln.strip()]
    lines += [
        "",
        "After each resume: "
        + "; ".join(
            f"{len(r['keys'])} rows, {len(set(r['keys']))} distinct keys, {r['errors']} errors"
            for r in runs
        )
        + f" for {total} solves in the spec: **"
        + ("complete, no duplicates" if ok else "NOT complete")
        + f"**. Median cores wanted over all phases: {statistics.median(wanted):.2f} of "
        f"{cores} over the whole wall time, {statistics.median(steady):.2f} of {cores} from "
        "the first row on (the rest of the wall time is starting Python and the pool).",
        "",
        "What the last resumed run printed:",
        "",
        "```",
        *resumed,
        "```",
        "",
        "CPU time and wait: the time on a CPU and the time runnable but queued of every "
        "process of the sweep's session (driver, pool processes, Ray's processes) "
        "(`/proc/PID/schedstat`, sampled every "
        "0.1 s while they run; the killed run cannot report its own). Cores used = CPU time "
        "over wall; cores wanted = (CPU time + wait) over wall: what the sweep would use "
        "on an idle machine, so a value at or above the core count means the sweep kept "
        "every core supplied with work and other jobs took the rest (the driver is a process "
        "too: with 2 pool processes it can pass 2). From the first row on: the same between "
        "the first row this phase wrote and the last sample. The resumed run's own "
        "`cpu:` line is the driver's resource usage of its finished workers; `solving:` is "
        "the share of the wall time the pool's CPU slots spent inside a solve (the rest: "
        "start-up, dispatch and writing rows).",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out and args.section:
        begin, end = f"<!-- auto:{args.section} -->", f"<!-- /auto:{args.section} -->"
        old = Path(args.out).read_text() if Path(args.out).exists() else ""
        block = f"{begin}\n{text}{end}\n"
        if begin in old and end in old:
            head, rest = old.split(begin, 1)
            text = head + block + rest.split(end, 1)[1].lstrip("\n")
        else:
            text = old + ("\n" if old else "") + block
        Path(args.out).write_text(text)
    elif args.out:
        Path(args.out).write_text(text)
    if not ok:
        for r in runs:
            print(r["first"]["stderr"][-2000:], r["second"]["stderr"][-2000:], file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
