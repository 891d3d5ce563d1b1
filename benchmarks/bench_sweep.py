"""A sweep killed halfway resumes, and keeps every core busy: `cpsched sweep` under kill -9.

    python benchmarks/bench_sweep.py --out benchmarks/results_sweep.md
    python benchmarks/bench_sweep.py --quick        # 200 solves, writes quick_sweep.md

Runs ``cpsched sweep benchmarks/sweeps/many_small.toml`` (2,000 solves: 250 random layered
graphs of 30 ops x 8 methods) in a new process group, kills the whole group with SIGKILL
once half the rows are in the table, then runs the same command again to the end. It
checks that the table then has every key exactly once, and reports for each phase the wall
time, the CPU seconds of the sweep's processes (driver and pool, read from /proc while
they run) over wall time and cores, and the machine-wide busy share from /proc/stat
(which counts other jobs on the machine too).
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "benchmarks" / "sweeps" / "many_small.toml"
ENV = dict(os.environ, PYTHONPATH=str(REPO))


def group_sample(pgid: int, seen: dict[int, tuple[float, float]]) -> None:
    """For every live process of group ``pgid``: (seconds on a CPU, seconds runnable but
    waiting for one) from /proc/PID/schedstat, kept in ``seen`` by pid (the last sample of
    a process that has exited stays)."""
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[2]) != pgid:  # fields after the name: state ppid pgrp ...
                continue
            with open(f"/proc/{d}/schedstat") as f:
                on_cpu, waiting = (int(v) / 1e9 for v in f.read().split()[:2])
        except (OSError, ValueError):
            continue
        seen[int(d)] = (on_cpu, waiting)


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
    """Run ``cmd``; with ``stop_at``, kill its process group once the table has that many
    rows. CPU time is sampled from /proc every 0.1 s (a killed group cannot be asked after)."""
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
    while proc.poll() is None:
        group_sample(proc.pid, seen)
        if (
            stop_at is not None
            and table.exists()
            and table.read_bytes().count(b"\n") - 1 >= stop_at
        ):
            os.killpg(proc.pid, signal.SIGKILL)
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
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default=str(SPEC), help="the sweep spec (default: many_small)")
    ap.add_argument("--quick", action="store_true", help="the first 25 graphs only (200 solves)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default=None, help="markdown results (default: print only)")
    args = ap.parse_args()
    cores = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        spec = work / "sweep.toml"
        text = Path(args.spec).read_text()
        if args.quick:
            text = text.replace("seed=0..249", "seed=0..24")
        spec.write_text(text)
        table = work / "sweep.csv"
        cmd = [sys.executable, "-m", "cpsched", "sweep", "sweep.toml", "--jobs", str(args.jobs)]
        total = int(
            subprocess.run(
                cmd + ["--dry-run"], cwd=work, env=ENV, capture_output=True, text=True, check=True
            ).stdout.split()[2]
        )
        load = os.getloadavg()
        first = phase(cmd, work, table, stop_at=total // 2)
        second = phase(cmd, work, table, stop_at=None)
        keys = [r["key"] for r in rows(table)]
        errors = sum(r["status"] == "ERROR" for r in rows(table))
        for p in (first, second):  # no temporary paths in the results
            p["stdout"] = p["stdout"].replace(str(work) + os.sep, "")
    ok = second["rc"] == 0 and len(keys) == total and len(set(keys)) == total
    shown = "cpsched sweep " + os.path.relpath(args.spec, REPO) + f" --jobs {args.jobs}"
    lines = [
        "# `cpsched sweep`: kill -9 halfway, resume, cores busy",
        "",
        "Made by `python benchmarks/bench_sweep.py"
        + (" --quick" if args.quick else "")
        + (f" --out {shlex.quote(os.path.relpath(args.out, REPO))}" if args.out else "")
        + "`, "
        f"which runs `{shown}` ({total} solves) in a new process group, kills the whole group "
        "with SIGKILL once half the rows are in the table, and runs the same command again.",
        "",
        f"Machine: {cores} cores ({platform.machine()}), **shared with other jobs** (load "
        f"average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} when it started), so the "
        "machine-wide share counts their work too; Python "
        f"{platform.python_version()}, "
        + (
            "Ray (local)."
            if "on Ray" in second["stdout"]
            else "local process pool (ray not installed)."
        ),
        "",
        "| phase | rows in the table after | wall | CPU time of the sweep's processes | "
        "their wait for a CPU | cores used | cores wanted (used + waiting) | machine-wide busy |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, p in (
        ("first run, killed halfway (kill -9)", first),
        ("second run, resumed", second),
    ):
        lines.append(
            f"| {name} | {p['rows']} | {p['wall']:.1f} s | {p['cpu']:.1f} s | "
            f"{p['waiting']:.1f} s | {p['cpu'] / p['wall']:.2f} of {cores} | "
            f"{(p['cpu'] + p['waiting']) / p['wall']:.2f} of {cores} | {100 * p['machine']:.0f} % |"
        )
    resumed = [ln.strip() for ln in second["stdout"].splitlines() if ln.strip()]
    lines += [
        "",
        f"After the resume: {len(keys)} rows, {len(set(keys))} distinct keys, {total} solves "
        f"in the spec: **{'complete, no duplicates' if ok else 'NOT complete'}**; "
        f"{errors} error rows.",
        "",
        "What the resumed run printed:",
        "",
        "```",
        *resumed,
        "```",
        "",
        "CPU time and wait: the driver's and its pool processes' time on a CPU and time "
        "runnable but queued behind other processes (`/proc/PID/schedstat`, sampled every "
        "0.1 s while they run; the killed run cannot report its own). Cores used = CPU time "
        "over wall; cores wanted = (CPU time + wait) over wall: what the sweep would use "
        "on an idle machine, so a value at or above the core count means the sweep kept "
        "every core supplied with work and other jobs took the rest. The resumed run's own "
        "`cpu:` line is the driver's resource usage of its finished workers; `solving:` is "
        "the share of the wall time the pool's CPU slots spent inside a solve (the rest: "
        "start-up, dispatch and writing rows).",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    if not ok:
        print(first["stderr"][-2000:], second["stderr"][-2000:], file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
