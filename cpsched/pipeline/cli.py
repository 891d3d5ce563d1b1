"""``cpsched pipeline``: pipeline-parallel schedules (baselines and CP-SAT) side by side.

Registered from ``cpsched.cli`` with ``add_parser(subparsers)``.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time

from cpsched.core import signals
from cpsched.core.errors import InputError
from cpsched.core.process import short_time_text
from cpsched.core.scenarios import from_dim_specs
from cpsched.core.units import format_bytes, format_seconds, parse_bytes
from cpsched.cost.model import load_device
from cpsched.cost.timeline import model_label
from cpsched.pipeline import baselines
from cpsched.pipeline.export import write_torch_csv, write_trace
from cpsched.pipeline.from_hlo import PipelineHloReport, place_permutes
from cpsched.pipeline.problem import CAP_1F1B, PipelineProblem
from cpsched.pipeline.solve import solve
from cpsched.writers import check_target, write_text

METHODS = ("gpipe", "1f1b", "interleaved", "circular", "zb-h1", "zb-h2", "cp", "all")


def add_parser(subparsers) -> argparse.ArgumentParser:
    q = subparsers.add_parser(
        "pipeline",
        help="pipeline-parallel schedules: GPipe, 1F1B, interleaved, circular, "
        "zero-bubble and CP-SAT",
        description="Schedule p stages x m microbatches (x v virtual stages per device); "
        "every schedule is checked by an independent replay. With --from-hlo FILE: place "
        "the collective-permutes of a ppermute pipeline program's loop bodies (cp-overlap) "
        "against XLA's order.",
    )
    _add_shape_options(q)
    _add_from_hlo_options(q)
    _add_cost_options(q)
    _add_run_options(q)
    q.set_defaults(fn=run)
    return q


def _add_shape_options(q: argparse.ArgumentParser) -> None:
    """Devices and microbatches."""
    q.add_argument(
        "--stages",
        "-p",
        type=int,
        default=None,
        metavar="P",
        help="devices (required, unless --from-hlo)",
    )
    q.add_argument(
        "--microbatches",
        "-m",
        type=int,
        default=None,
        metavar="M",
        help="microbatches per step (required, unless --from-hlo)",
    )


def _add_from_hlo_options(q: argparse.ArgumentParser) -> None:
    """The --from-hlo mode: a pipeline program read from HLO."""
    q.add_argument(
        "--from-hlo",
        metavar="FILE",
        default=None,
        help="HLO of a pipeline program (ppermute in a scan): report each loop body's "
        "collective-permute placement by cp-overlap against XLA's order (default none)",
    )
    q.add_argument(
        "--output",
        "-o",
        metavar="OUT",
        default=None,
        help="with --from-hlo: write the module with cpsched's placement, the "
        "collective-permutes as start/done pairs, read back and checked (default none)",
    )
    q.add_argument(
        "--budget",
        metavar="BYTES",
        default=None,
        help="with --from-hlo: peak bytes a loop body may reach, e.g. 2MiB (default: the "
        "peak of XLA's order of that body)",
    )
    q.add_argument(
        "--device",
        default="h100",
        metavar="DEVICE",
        help="with --from-hlo: cost-model preset (h100, a100, xla-approx) or a TOML/JSON "
        "file (default h100)",
    )


def _add_cost_options(q: argparse.ArgumentParser) -> None:
    """Stage times, memory and communication of the generated problem."""
    q.add_argument(
        "--virtual",
        "-v",
        type=int,
        default=1,
        metavar="V",
        help="model chunks per device (interleaved / circular repeat; default 1)",
    )
    g = q.add_mutually_exclusive_group()
    g.add_argument(
        "--costs",
        metavar="F,B,W",
        help="times of every stage's forward, input "
        "gradient and weight gradient (default 1,1,1; with --virtual V these are "
        "per chunk)",
    )
    g.add_argument(
        "--costs-file",
        metavar="FILE",
        help='JSON: {"f": [...], "b": [...], "w": [...], "act": [...], '
        '"act_w": [...]} per stage (p*v entries, or one for all); optional '
        '"comm", "comm_overlap", "fused", "memory_cap" (default: --costs)',
    )
    q.add_argument(
        "--fused",
        action="store_true",
        help="backward is one action of time B+W (default: separate B and W)",
    )
    q.add_argument(
        "--act",
        default=None,
        metavar="BYTES",
        help="activation bytes per microbatch per stage: bytes such as 2GiB or 512MB, or a "
        "size polynomial such as 4*b*2048 (default: 1, peaks count activations)",
    )
    q.add_argument(
        "--act-w",
        default=None,
        metavar="BYTES",
        help="part of --act still held from B until W (zero-bubble M_W; default 0)",
    )
    q.add_argument(
        "--dim",
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="values of a dim in --act (one schedule per value; default none)",
    )
    q.add_argument(
        "--memory-cap",
        default=None,
        metavar="X|1f1b",
        help="activation bytes per device (such as 8GiB; one per device, comma separated), "
        "or 1f1b: the 1F1B schedule's peak (default: no cap)",
    )
    q.add_argument(
        "--comm",
        type=float,
        default=None,
        metavar="T",
        help="p2p transfer time between devices (default 0)",
    )
    q.add_argument(
        "--comm-blocking",
        action="store_true",
        help="the sender is busy during a transfer (default: overlapped)",
    )


def _add_run_options(q: argparse.ArgumentParser) -> None:
    """Method, solver and outputs."""
    q.add_argument(
        "--method",
        default="all",
        choices=METHODS,
        help="one schedule, or all side by side (default all)",
    )
    q.add_argument(
        "--time-limit",
        type=float,
        default=None,
        help="seconds for the whole command, counted from its start, shared by its "
        f"CP-SAT solves (default: {SOLVE_SECONDS:g} s per solve)",
    )
    q.add_argument("--workers", type=int, default=2, help="CP-SAT threads (default 2)")
    q.add_argument("--seed", type=int, default=0, help="CP-SAT random seed (default 0)")
    q.add_argument(
        "--csv",
        metavar="OUT",
        help="PyTorch pipelining action CSV of the schedule "
        "(with --method all: the fastest one within the cap; default none)",
    )
    q.add_argument(
        "--csv-format",
        default="compute_only",
        choices=("compute_only", "compute_comms"),
        help="compute_only (the runtime adds send/recv) or compute_comms (with "
        "SEND_F/RECV_F/SEND_B/RECV_B actions; default compute_only)",
    )
    q.add_argument("--trace", metavar="OUT", help="Chrome/Perfetto trace JSON (default none)")
    q.add_argument("--json", action="store_true", help="machine-readable output (default: a table)")


def _floats(text: str, what: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",")]
    except ValueError:
        raise InputError(f"{what}: expected comma-separated numbers, got {text!r}") from None


def _load_file(path: str) -> dict:
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", path=path) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(e.msg, path=path, line=e.lineno, column=e.colno) from None
    if not isinstance(data, dict):
        raise InputError("expected a JSON object", path=path, line=1, column=1)
    unknown = set(data) - {
        "f",
        "b",
        "w",
        "act",
        "act_w",
        "comm",
        "comm_overlap",
        "fused",
        "memory_cap",
    }
    if unknown:
        raise InputError(f"unknown key {sorted(unknown)[0]!r}", path=path)
    return data


def make_problem(args) -> PipelineProblem:
    kw: dict = {}
    # activations are bytes where given (--act, the file's "act"); else each counts one
    args.act_in_bytes = args.act is not None
    if args.costs_file:
        data = _load_file(args.costs_file)
        args.act_in_bytes = args.act_in_bytes or "act" in data
        try:
            kw = {k: data[k] for k in ("f", "b", "w", "act", "act_w") if k in data}
            if "comm" in data:
                kw["comm"] = float(data["comm"])
            if "comm_overlap" in data:
                kw["comm_overlap"] = bool(data["comm_overlap"])
            if data.get("fused"):
                kw["split_backward"] = False
            if "memory_cap" in data:
                kw["memory_cap"] = data["memory_cap"]
            return _finish(args, kw)
        except InputError as e:
            raise e.with_path(args.costs_file) from None
        except (TypeError, ValueError) as e:
            raise InputError(str(e), path=args.costs_file) from None
    if args.costs:
        c = _floats(args.costs, "--costs")
        if len(c) != 3 and not (len(c) == 2 and args.fused):
            raise InputError(f"--costs {args.costs}: give three times F,B,W (or F,B with --fused)")
        kw["f"], kw["b"] = (c[0],), (c[1],)
        kw["w"] = (c[2] if len(c) == 3 else 0.0,)
    return _finish(args, kw)


def _finish(args, kw: dict) -> PipelineProblem:
    if args.fused:
        kw["split_backward"] = False
    if args.act is not None:
        kw["act"] = (_num_or_expr(args.act),)
    if args.act_w is not None:
        kw["act_w"] = (_num_or_expr(args.act_w),)
    if args.comm is not None:
        kw["comm"] = args.comm
    if args.comm_blocking:
        kw["comm_overlap"] = False
    if args.memory_cap is not None:
        mc = args.memory_cap.strip()
        kw["memory_cap"] = CAP_1F1B if mc.lower() == CAP_1F1B else _cap(mc)
    return PipelineProblem(p=args.stages, m=args.microbatches, v=args.virtual, **kw)


def _num_or_expr(text: str):
    """Bytes (``4096``, ``2GiB``, ``512MB``) or a size polynomial (``4*b*2048``)."""
    try:
        x = float(text)
    except ValueError:
        return text  # a size with its unit, or a polynomial: PipelineProblem reads both
    if x < 0 or x != int(x):
        raise InputError(f"activation bytes must be a non-negative integer, got {text!r}")
    return int(x)


def _cap(text: str):
    vals = [parse_bytes(x, "--memory-cap") for x in text.split(",")]
    return vals[0] if len(vals) == 1 else tuple(vals)


def _scenarios(args, problem: PipelineProblem) -> list[dict]:
    if not problem.dims:
        if args.dim:
            raise InputError("--dim given but --act has no symbolic dims")
        return [{}]
    if not args.dim:
        raise InputError(f"--act uses dim(s) {', '.join(problem.dims)}: give --dim NAME=V1,V2")
    return from_dim_specs(args.dim).as_dicts()


def run(args) -> int:
    if args.from_hlo:
        return run_from_hlo(args)
    for opt, val in (("--output", args.output), ("--budget", args.budget)):
        if val is not None:
            raise InputError(f"{opt} applies to --from-hlo only")
    if args.stages is None or args.microbatches is None:
        raise InputError("--stages and --microbatches are required (or --from-hlo FILE)")
    if args.stages < 1 or args.microbatches < 1 or args.virtual < 1:
        raise InputError("--stages, --microbatches and --virtual must be >= 1")
    problem = make_problem(args)
    for path in (args.csv, args.trace):
        if path and args.costs_file and path == args.costs_file:
            raise InputError(f"refusing to overwrite the input file {path}", path=path)
    scen = _scenarios(args, problem)
    reports = []
    chosen = None
    args.solves_left = len(scen) if args.method in ("all", "cp") else 0
    for values in scen:
        pr = problem.at(values)
        rows, best = _run_methods(pr, args)
        reports.append({"scenario": values, "results": rows})
        chosen = best
    if (args.csv or args.trace) and chosen is None:
        raise InputError(
            "no schedule within the memory cap"
            + ("" if args.method == "all" else f" from {args.method}")
            + "; nothing written"
        )
    if chosen is not None and (args.csv or args.trace):
        assert chosen.replay is not None
        if not chosen.replay.memory_ok:
            # a file written with exit 0 keeps its cap
            raise InputError(
                f"{args.method}: its schedule is over the memory cap (peak per device "
                f"{' '.join(_act_text(x, args) for x in chosen.replay.peak)}); nothing written"
            )
        inputs = (args.costs_file,) if args.costs_file else ()
        if args.csv:
            write_torch_csv(args.csv, chosen, inputs, args.csv_format)
        if args.trace:
            write_trace(args.trace, chosen, inputs)
    if args.json:
        if len(reports) == 1 and not reports[0]["scenario"]:
            res = reports[0]["results"]
            out = res[0] if len(res) == 1 else res
        else:
            out = reports
        print(json.dumps(out, indent=1))
    else:
        _print_table(problem, reports, sys.stdout, args)
        if getattr(args, "time_note", ""):
            print(args.time_note)
    return 0


def run_from_hlo(args) -> int:
    """``--from-hlo FILE``: the loop bodies' collective-permute placement (``from_hlo``)."""
    given = [
        opt
        for opt, val in (
            ("--stages", args.stages),
            ("--microbatches", args.microbatches),
            ("--costs", args.costs),
            ("--costs-file", args.costs_file),
            ("--memory-cap", args.memory_cap),
            ("--csv", args.csv),
            ("--trace", args.trace),
        )
        if val is not None
    ]
    if given:
        raise InputError(
            f"{given[0]} does not apply to --from-hlo (the program fixes the pipeline)"
        )
    if args.output:
        check_target(args.output, (args.from_hlo,), "--output")
    budget = parse_bytes(args.budget, "--budget") if args.budget is not None else None
    report = place_permutes(
        args.from_hlo,
        device=args.device,
        budget=budget,
        time_limit=args.time_limit if args.time_limit is not None else SOLVE_SECONDS,
        deadline=_deadline(args),
        workers=args.workers,
        seed=args.seed,
    )
    if args.output:
        write_text(args.output, report.text, inputs=(args.from_hlo,))
    if args.json:
        out = report.to_dict()
        if args.output:
            out["written"] = args.output
        print(json.dumps(out, indent=1))
    else:
        print(format_hlo_report(report, device=args.device))
        if args.output:
            print(f"wrote {args.output}: {report.read_back}")
    return 0


def format_hlo_report(report: PipelineHloReport, device: str = "h100") -> str:
    """Per loop body: the three orders' peak, time and exposed communication (times of the
    ``device`` preset's model), then one row per collective-permute (distance in
    instructions, 1 = back to back)."""
    lines = []
    for b in report.bodies:
        t = functools.partial(_time_text, unit=b.unit)
        trips = f"{b.trip_count} iterations" if b.trip_count is not None else "trip count unknown"
        lines.append(
            f"loop body {b.body} ({b.loop}, {trips}): {b.n_ops} ops, budget "
            f"{format_bytes(b.budget)}; times: {model_label(load_device(device).name, b.unit)}"
        )
        lines.append(
            f"  {'order':<12} {'peak':>11} {'time/iter':>11} {'exposed/iter':>13} "
            f"{'exposed total':>14}"
        )
        for who, label in (("xla", "xla"), ("lhs", "lhs"), ("cp", "cp-overlap")):
            exp = getattr(b, f"{who}_exposed")
            lines.append(
                f"  {label:<12} {format_bytes(getattr(b, f'{who}_peak')):>11} "
                f"{t(getattr(b, f'{who}_makespan')):>11} {t(exp):>13} {t(b.total(exp)):>14}"
                + (f"  {b.status}" if who == "cp" else "")
            )
        lines.append(
            f"  {'collective-permute':<20} {'transfer':>9}  {'xla dist':>8} {'hidden':>9}  "
            f"{'lhs dist':>8} {'hidden':>9}  {'cp dist':>7} {'hidden':>9}"
        )
        for r in b.pairs:
            lines.append(
                f"  {r.collective:<20} {t(r.transfer):>9}  {r.xla_distance:>8} "
                f"{t(r.xla_hidden):>9}  {r.lhs_distance:>8} {t(r.lhs_hidden):>9}  "
                f"{r.cp_distance:>7} {t(r.cp_hidden):>9}"
            )
    lines.append(
        "xla: the module's order (a synchronous collective-permute as a start/done pair "
        "back to back); lhs: cpsched's model of XLA's latency-hiding scheduler; dist: "
        "instructions from start to done"
    )
    return "\n".join(lines)


def _time_text(x: float | None, unit: str) -> str:
    if x is None:
        return "n/a"
    return format_seconds(x) if unit == "s" else f"{x:.4g} {unit}"


# a solve's time when --time-limit is not given
SOLVE_SECONDS = 10.0
# what the command keeps back from a given --time-limit for printing and writing
FINISH_SECONDS = 0.2


def _deadline(args) -> float | None:
    """When the solving must end: the command's start plus ``--time-limit`` (if given)."""
    started = getattr(args, "started", None)
    if args.time_limit is None or started is None:
        return None
    return started + float(args.time_limit) - FINISH_SECONDS


def _solve_seconds(args) -> float:
    """One CP-SAT solve's time: ``SOLVE_SECONDS``, or its share of what is left of a given
    ``--time-limit`` (the solves still to run share it)."""
    deadline = _deadline(args)
    left = max(1, getattr(args, "solves_left", 1))
    args.solves_left = left - 1
    if deadline is None:
        return SOLVE_SECONDS
    return max(0.01, (deadline - time.perf_counter()) / left)


def _run_methods(pr: PipelineProblem, args):
    methods = list(baselines.BASELINES) + ["cp"] if args.method == "all" else [args.method]
    rows = []
    best = None
    for name in methods:
        if name == "cp":
            deadline = _deadline(args)
            if deadline is not None and getattr(args, "solves_began", None) is None:
                args.solves_began = time.perf_counter()  # the solves' share: said if short
                args.time_note = short_time_text(
                    deadline - args.solves_began, args.time_limit, "the solves"
                )
            sch = solve(
                pr,
                time_limit=_solve_seconds(args),
                workers=args.workers,
                seed=args.seed,
                deadline=_deadline(args),
            )
            signals.check()  # a signal cut the search: stop, with nothing written
            row = sch.summary()
            row["gap"] = round(sch.info.get("gap", 0.0), 6)
            if getattr(args, "time_note", ""):
                row["time_note"] = args.time_note
        else:
            why = baselines.applicable(pr, name)
            if why is not None:
                if args.method != "all":
                    raise InputError(why)
                rows.append({"method": name, "status": "NOT_APPLICABLE", "message": why})
                continue
            sch = baselines.build(pr, name)
            row = sch.summary()
            row["status"] = "OK" if row["memory_ok"] else "OVER_CAP"
        rows.append(row)
        assert sch.replay is not None  # summary() replays it
        if (args.method != "all" or sch.replay.memory_ok) and (
            best is None or sch.makespan < best.makespan - 1e-9
        ):
            best = sch
    return rows, best


def _act_text(x, args) -> str:
    """Activation memory for a table: bytes in KiB/MiB/GiB where --act gave bytes, else
    the count of microbatch activations (each stage's --act is 1 by default)."""
    if getattr(args, "act_in_bytes", True):
        return format_bytes(x)
    return f"{x:g} act"


def _print_table(problem, reports, out, args=None) -> None:
    head = ("method", "status", "makespan (--costs units)", "bubble", "bound", "peak per device")

    def cells(r) -> tuple[str, ...]:
        peaks = ", ".join(_act_text(x, args) for x in r["peak_activation"])
        if r.get("memory_cap"):
            peaks += f" (cap {_act_text(r['memory_cap'][0], args)})"
        return (
            r["method"],
            r["status"],
            f"{r['makespan']:g}",
            f"{100 * r['bubble_fraction']:.2f} %",
            f"{r['bound']:g}",
            peaks,
        )

    table = [
        [None if r["status"] == "NOT_APPLICABLE" else cells(r) for r in rep["results"]]
        for rep in reports
    ]
    shown = [head] + [c for rows in table for c in rows if c is not None]
    widths = [max(len(c[k]) for c in shown) for k in range(len(head))]

    def line(cs) -> str:
        return "  ".join(
            c.ljust(w) if k in (0, 1, 5) else c.rjust(w) for k, (c, w) in enumerate(zip(cs, widths))
        ).rstrip()

    for rep, rows in zip(reports, table):
        if rep["scenario"]:
            print("scenario " + ",".join(f"{k}={v}" for k, v in rep["scenario"].items()), file=out)
        print(line(head), file=out)
        for r, cs in zip(rep["results"], rows):
            if cs is None:
                print(f"{r['method']:<{widths[0]}}  {'n/a':<{widths[1]}}  {r['message']}", file=out)
            else:
                print(line(cs), file=out)
    if args is not None and not getattr(args, "act_in_bytes", True):
        print("peak: microbatch activations held at once (--act gives their bytes)", file=out)


__all__ = ["add_parser", "run", "make_problem", "run_from_hlo", "format_hlo_report"]
