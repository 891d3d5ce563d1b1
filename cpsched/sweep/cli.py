"""``cpsched sweep SPEC``: many solves from one spec, resumable, on Ray or a local pool.

Registered from ``cpsched.cli`` with ``add_parser(subparsers)``.
"""

from __future__ import annotations

import argparse
import shlex
import signal

from cpsched.sweep.driver import BACKENDS, SweepReport, run_sweep

EXIT_SIGINT, EXIT_SIGTERM = 130, 143


def add_parser(subparsers) -> argparse.ArgumentParser:
    q = subparsers.add_parser(
        "sweep",
        help="run graphs x methods x settings from a TOML/YAML spec; resumable",
        description="Every solve of the spec's cross product, on Ray (where installed) or a "
        "local process pool; rows are appended to the table as solves finish and a rerun "
        "skips those already there.",
    )
    q.add_argument("spec", help="the sweep spec, .toml (or .yaml with PyYAML) (required)")
    q.add_argument(
        "-o",
        "--out",
        dest="table",
        metavar="TABLE",
        help="results table, .csv (or .parquet with pyarrow) (default: the spec's output "
        "key, else the spec's path with .csv)",
    )
    q.add_argument(
        "--summary",
        metavar="MD",
        help="Markdown summary (default: the table's path with .md)",
    )
    q.add_argument(
        "--plot",
        metavar="PNG",
        help="peak and time per method (needs matplotlib; default: the table's path with "
        ".png where matplotlib is installed, else none)",
    )
    q.add_argument(
        "--backend",
        choices=BACKENDS,
        default="auto",
        help="ray, local (a process pool), or auto: ray where it is installed (default: auto)",
    )
    q.add_argument(
        "--address",
        metavar="ADDR",
        help="a Ray cluster to run on, e.g. ray://head:10001 or auto (default: a local Ray)",
    )
    q.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="CPUs to use on this machine, shared by the solves' workers (default: all cores)",
    )
    q.add_argument(
        "--max-solves",
        type=int,
        metavar="K",
        help="stop after K new solves; run again to go on (default: all)",
    )
    q.add_argument(
        "--dry-run",
        action="store_true",
        help="count the solves and those already in the table; run nothing (default: off)",
    )
    q.set_defaults(fn=cmd_sweep)
    return q


def cmd_sweep(args) -> int:
    signals = getattr(args, "signals", None)
    r = run_sweep(
        args.spec,
        table=args.table,
        summary=args.summary,
        plot=args.plot,
        backend=args.backend,
        jobs=args.jobs,
        address=args.address,
        max_solves=args.max_solves,
        dry_run=args.dry_run,
        command=shlex.join(["cpsched"] + list(getattr(args, "argv", ["sweep", args.spec]))),
        signals=signals,
    )
    print(_text(r, args.dry_run))
    if r.interrupted:
        return EXIT_SIGTERM if (signals or {}).get("signal") == signal.SIGTERM else EXIT_SIGINT
    return 0


def _text(r: SweepReport, dry_run: bool) -> str:
    if dry_run:
        return (
            f"sweep {r.spec.name}: {r.tasks} solves, {r.already} already in {r.table}, "
            f"{r.notes[0].split(': ', 1)[1] if r.notes else ''}"
        ).rstrip(", ")
    lines = [
        f"sweep {r.spec.name}: {r.tasks} solves; {r.already} were in {r.table}, "
        f"{r.ran} ran now ({r.failed} failed) on "
        + ("Ray" if r.backend == "ray" else "a local process pool")
    ]
    if r.interrupted:
        lines.append(
            f"  interrupted: {r.already + r.ran} of {r.tasks} rows in {r.table}; "
            "run the same command again to go on"
        )
        return "\n".join(lines)
    cpu = r.cpu if r.ran else {}
    if cpu.get("cores_busy") is not None:
        lines.append(
            f"  cpu: {cpu['cores_busy']:.2f} of {cpu['cores']:.0f} cores busy "
            f"(user+sys {cpu['cpu_s']:.1f} s over {cpu['wall_s']:.1f} s wall)"
            + (
                f"; machine-wide {100 * cpu['machine_busy']:.0f} %"
                if cpu.get("machine_busy") is not None
                else ""
            )
        )
    elif cpu.get("machine_busy") is not None:
        lines.append(
            f"  cpu: machine-wide {100 * cpu['machine_busy']:.0f} % busy over "
            f"{cpu['wall_s']:.1f} s wall (other jobs included)"
        )
    if cpu.get("occupied") is not None:
        lines.append(
            f"  solving: the {cpu['cores']:.0f} CPU slots were inside a solve "
            f"{100 * cpu['occupied']:.0f} % of the wall time"
        )
    if r.written:
        lines.append(f"  wrote {', '.join(r.written)}")
    lines += [f"  {n}" for n in r.notes]
    return "\n".join(lines)
