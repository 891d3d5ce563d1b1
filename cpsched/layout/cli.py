"""``cpsched layout INPUT``: offsets for buffers with fixed lifetimes, within a capacity or
the least one, with a proof where one is found in time.

INPUT is a layout CSV (``id,lower,upper,size``; the MiniMalloc format) or a graph (HLO,
graph JSON) with its order (``--schedule``), whose buffers and transient bytes make the
problem. ``--check`` validates a solution CSV instead. Registered from ``cpsched.cli``
with ``add_parser(subparsers)``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

from cpsched import api
from cpsched.analysis.memory import simulate
from cpsched.analysis.validate import validate_order
from cpsched.core import signals
from cpsched.core.errors import InfeasibleError, InputError
from cpsched.core.units import format_bytes, parse_bytes
from cpsched.layout.problem import (
    LayoutProblem,
    as_records,
    csv_text,
    layout_top,
    overlaps,
    problem_from_graph,
    read_csv,
    read_solution,
)
from cpsched.layout.solve import INFEASIBLE, UNKNOWN, solve_layout
from cpsched.writers import write_json, write_text
from cpsched.writers.schedule import read_order

DEFAULT_TIME_LIMIT = 60.0
# with --method, the share of the time limit that goes to the order
ORDER_SHARE = 0.5
EXIT_NOT_FOUND = 1


def _bytes(v: int) -> str:
    """``12.84 MiB (13,466,152 B)``; ``12 B`` alone where the two would say the same."""
    short = format_bytes(v)
    exact = f"{v:,} B"
    return exact if short.replace(",", "") == exact.replace(",", "") else f"{short} ({exact})"


def _emit(args, data: dict, text: str) -> None:
    print(json.dumps(data, indent=1) if args.json else text)
    sys.stdout.flush()


def _inputs(args) -> tuple[str, ...]:
    return tuple(p for p in (args.input, args.schedule, args.scenarios) if p)


def add_parser(subparsers) -> argparse.ArgumentParser:
    q = subparsers.add_parser(
        "layout",
        help="offsets for buffers with fixed lifetimes: the least capacity, or a layout "
        "within --capacity",
        description="Place every buffer of INPUT (a layout CSV id,lower,upper,size, or a "
        "graph and its order) at an offset so that buffers live at one time never share "
        "bytes: within --capacity, or at the least capacity found. Writes "
        "id,lower,upper,size,offset CSV (-o).",
    )
    q.add_argument(
        "input",
        help="a layout CSV (id,lower,upper,size), or a graph: HLO text, cpsched graph JSON, "
        "or networkx node-link JSON",
    )
    q.add_argument(
        "--dim",
        action="append",
        default=[],
        metavar="NAME=V",
        help="a graph's symbolic dim, one value: a layout is for one scenario (default: "
        "the graph's own scenario)",
    )
    q.add_argument(
        "--scenarios", metavar="FILE", help="scenarios JSON instead of --dim (default: none)"
    )
    q.add_argument(
        "--json",
        action="store_true",
        help="machine-readable output: exact bytes, seconds (default: text)",
    )
    q.add_argument(
        "--schedule",
        metavar="FILE",
        help="a graph input's order: schedule JSON, scheduled HLO, or op names one per "
        "line (default: the input's own order)",
    )
    q.add_argument(
        "--method",
        metavar="NAME",
        help="order a graph input with this method first (e.g. cp: the least peak), then "
        "lay it out; half the time limit goes to the order (default: the input's own "
        "order, or --schedule)",
    )
    q.add_argument(
        "--capacity",
        metavar="BYTES",
        help="find a layout within this many bytes (e.g. 1048576 or 1MiB) and stop; "
        "exit 2 where none exists (default: the least capacity)",
    )
    q.add_argument(
        "--time-limit",
        type=float,
        metavar="S",
        help=f"seconds for the whole command (default: {DEFAULT_TIME_LIMIT:g})",
    )
    q.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="threads: the exact search and, from 2, CP-SAT with N-1 workers beside it "
        "(default: 2)",
    )
    q.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="the layout: CSV id,lower,upper,size,offset, or JSON where OUT ends in .json "
        "(status, capacity_bytes, lower_bound_bytes, buffers with their offsets) (default: "
        "none written)",
    )
    q.add_argument(
        "--check",
        action="store_true",
        help="INPUT is a solution (CSV with an offset column, or the JSON -o writes): "
        "report overlaps and the "
        "capacity it needs; exit 1 where it is not valid (default: solve)",
    )
    q.set_defaults(fn=cmd_layout)
    return q


def _problem(args, deadline: float) -> tuple[LayoutProblem, dict]:
    """The problem of INPUT and what the report says about where it came from."""
    if args.input.lower().endswith(".csv"):
        for opt in ("schedule", "method"):
            if getattr(args, opt):
                raise InputError(f"--{opt} is for a graph input; a layout CSV has its lifetimes")
        return read_csv(args.input), {}
    if args.schedule and args.method:
        raise InputError("give --schedule or --method, not both")
    g = api.read(pathlib.Path(args.input))
    sc = api.scenarios_for(g, args.scenarios or args.dim or None)
    if len(sc) != 1:
        raise InputError(
            f"a layout is for one scenario; the input has {len(sc)} ({', '.join(sc.names)}): "
            "pick one with --dim NAME=V"
        )
    source: dict = {"ops": g.n_ops}
    if args.method:
        now = time.perf_counter()
        r = api.schedule(
            g,
            args.method,
            scenarios=sc,
            time_limit=max(0.1, (deadline - now) * ORDER_SHARE),
            deadline=now + (deadline - now) * ORDER_SHARE,
        )
        g, order = r.graph, list(r.order)
        source.update(
            method=r.method,
            order_status=r.status,
            order_lower_bound_bytes=int(r.bound[sc.names[0]]) if r.bound else None,
        )
    else:
        order = read_order(g, args.schedule) if args.schedule else g.default_order()
        validate_order(g, order, what=f"schedule {args.schedule}" if args.schedule else "schedule")
    source["peak_bytes"] = int(simulate(g, order, sc).peak[0])
    return problem_from_graph(g, order, 0, sc), source


def cmd_layout(args) -> int:
    if args.check:
        return _check(args)
    capacity = parse_bytes(args.capacity, "--capacity") if args.capacity is not None else None
    limit = DEFAULT_TIME_LIMIT if args.time_limit is None else args.time_limit
    workers = 2 if args.workers is None else args.workers
    started = getattr(args, "started", None) or time.perf_counter()
    problem, source = _problem(args, started + limit)
    r = solve_layout(
        problem,
        capacity,
        workers=workers,
        deadline=started + limit,
        stop=lambda: signals.received() is not None,
    )
    data = {
        "input": args.input,
        "buffers": len(problem),
        **source,
        **r.as_json(),
        "output": None,
    }
    if r.status in (INFEASIBLE, UNKNOWN):
        if args.json:
            _emit(args, data, "")
        if r.status == INFEASIBLE:
            raise InfeasibleError(
                f"{args.input}: no layout fits in {capacity:,} bytes: at least "
                f"{r.lower_bound_bytes:,} are needed"
                + (
                    " (the most bytes live at one time)"
                    if r.lower_bound_bytes == problem.max_live()
                    else ""
                )
                + "; nothing written"
            )
        print(
            f"cpsched: no layout within {capacity:,} bytes found in {limit:g} s (none "
            f"fits in less than {r.lower_bound_bytes:,}); nothing written; a longer "
            "--time-limit gives the search time",
            file=sys.stderr,
        )
        return EXIT_NOT_FOUND
    assert r.offsets is not None and r.capacity_bytes is not None
    problems = overlaps(problem, r.offsets, r.capacity_bytes)
    if problems:  # a bug: never write a layout that is not one
        raise RuntimeError(f"layout not valid: {problems[0]}")
    if args.output:
        inputs = _inputs(args)
        if args.output.lower().endswith(".json"):
            write_json(
                args.output, {**r.as_json(), "buffers": as_records(problem, r.offsets)}, inputs
            )
        else:
            write_text(args.output, csv_text(problem, r.offsets), inputs)
        data["output"] = args.output
    proof = (
        "optimal: no layout fits in less"
        if r.status == "OPTIMAL"
        else f"none fits in less than {_bytes(r.lower_bound_bytes)}"
    )
    lines = [
        f"{args.input}: {len(problem)} buffers; capacity {_bytes(r.capacity_bytes)}, {proof}"
        + (f"; asked for {_bytes(capacity)}" if capacity is not None else "")
        + f" ({r.seconds:.1f} s, found by {r.found_by})"
    ]
    if "peak_bytes" in source:
        line = f"  the order's peak: {_bytes(source['peak_bytes'])}"
        if "method" in source:
            line += f" ({source['method']}, {source['order_status']}"
            if source.get("order_lower_bound_bytes") is not None:
                line += f"; no order peaks below {_bytes(source['order_lower_bound_bytes'])}"
            line += ")"
        lines.append(line)
    if args.output:
        lines.append(f"wrote {args.output}")
    _emit(args, data, "\n".join(lines))
    return 0


def _check(args) -> int:
    problem, offsets = read_solution(args.input)
    capacity = parse_bytes(args.capacity, "--capacity") if args.capacity is not None else None
    errors = overlaps(problem, offsets, capacity)
    top = layout_top(problem, offsets)
    data = {
        "input": args.input,
        "buffers": len(problem),
        "valid": not errors,
        "capacity_bytes": top,
        "lower_bound_bytes": problem.max_live(),
        "errors": errors,
    }
    text_out = [
        f"{args.input}: {len(problem)} buffers, capacity {top:,} B (the most live at one "
        f"time: {problem.max_live():,} B); "
        + ("valid" if not errors else f"{len(errors)} error{'s' if len(errors) > 1 else ''}")
    ]
    text_out += [f"  {e}" for e in errors[:20]]
    if len(errors) > 20:
        text_out.append(f"  ... {len(errors) - 20} more")
    _emit(args, data, "\n".join(text_out))
    return 0 if not errors else 1
