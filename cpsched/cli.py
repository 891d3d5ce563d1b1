"""Command line: ``cpsched info | simulate | convert | methods | schedule | compare | frontier |
capture | pipeline | sweep | run | layout``.

Argument parsing and presentation only: the work is done by ``cpsched.api``. Every error the
user can cause is one line on stderr (file:line:col: reason) and exit code 2; options are
checked before any work; nothing the user gave is overwritten. Tables print bytes in
KiB/MiB/GiB and times with their unit; ``--json`` prints exact integers (bytes) and seconds.

Each subcommand is registered by one function ``add_NAME(subparsers)`` listed in
``SUBCOMMANDS``; a module adding a subcommand appends its own function there.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import errno
import io
import json
import math
import os
import pathlib
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from cpsched import api
from cpsched.analysis.memory import simulate
from cpsched.analysis.records import JointRecord, OverlapRecord, RematRecord
from cpsched.analysis.validate import validate_order
from cpsched.capture import add_parser as add_capture
from cpsched.capture import info_buckets
from cpsched.core import arguments, signals
from cpsched.core.errors import BudgetError, CpschedError, InputError, LimitError
from cpsched.core.graph import Graph, OpKind
from cpsched.core.inputs import check_input_file
from cpsched.core.process import process_start, short_time_text
from cpsched.core.scenarios import Scenarios, parse_budget
from cpsched.core.units import format_bytes, format_seconds, format_time
from cpsched.cost.model import _unit, default_device, load_device
from cpsched.cost.timeline import model_label
from cpsched.cp.runtime import SolverConfig
from cpsched.layout import cli as layout_cli
from cpsched.measure import cli as measure_cli
from cpsched.methods import get as get_method
from cpsched.pipeline import cli as pipeline_cli
from cpsched.plot import plot_memory, require_matplotlib
from cpsched.readers import sniff_format
from cpsched.strategies.frontier import (
    DEFAULT_POINT_TIME_LIMIT,
    DEFAULT_POINTS,
    MAX_FRONTIER_POINTS,
)
from cpsched.sweep import cli as sweep_cli
from cpsched.version import version_line
from cpsched.writers import all_or_nothing, check_target, write_json
from cpsched.writers.json_graph import graph_to_dict
from cpsched.writers.remat_hlo import remat_hlo_paths
from cpsched.writers.schedule import read_module_orders, read_order, schedule_method
from cpsched.writers.trace import write_trace

EXIT_USAGE = 2


# -- shared option handling ---------------------------------------------------------------


def _add_input(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "input",
        help="XLA HLO text (.hlo, .hlo.gz), StableHLO/MHLO text (.mlir), cpsched graph JSON, "
        "a captured torch graph (.torch.json), or networkx node-link JSON",
    )
    p.add_argument(
        "--dim",
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="values of a symbolic dim; several --dim give their product "
        "(default: the graph's own scenarios, else none)",
    )
    p.add_argument("--weights", help="scenario weights, comma separated (default: uniform)")
    p.add_argument(
        "--scenarios", metavar="FILE", help="scenarios JSON instead of --dim (default: none)"
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="machine-readable output: exact bytes, seconds (default: a table)",
    )


def _scenarios(args, graph: Graph) -> Scenarios:
    if args.scenarios:
        return api.scenarios_for(graph, args.scenarios)
    return api.scenarios_for(graph, args.dim or None, args.weights)


def _read(args) -> Graph:
    # ``args.graph``: a graph already built from the inputs (``info`` over several buckets)
    # a path from the command line is a path, whatever its characters (a newline included)
    source = getattr(args, "graph", None) or pathlib.Path(args.input)
    g = api.read(
        source,
        async_collectives=getattr(args, "async_collectives", False),
    )
    if getattr(args, "async_collectives", False):
        note = api.async_collectives_note(g)
        if note:
            print(f"note: {note}", file=sys.stderr)
    if hasattr(args, "device") and args.device is None:
        args.device = default_device(g)
    return g


def _by_name(sc: Scenarios, arr) -> dict[str, int]:
    return {n: int(v) for n, v in zip(sc.names, arr)}


def _emit(args, data: dict | list, text: str) -> None:
    print(json.dumps(data, indent=1) if args.json else text)
    sys.stdout.flush()  # a closed pipe shows up here, inside main's handler


def _bytes(v) -> str:
    return format_bytes(int(v))


# -- checks before any work ---------------------------------------------------------------


def _xla_note(alloc: dict, scenario: str) -> str:
    """What XLA's buffer assignment reserves for the order (HLO inputs), for a text line."""
    if not alloc:
        return ""
    return (
        f"; XLA temp {_bytes(alloc['temp_bytes'][scenario])}, "
        f"allocated {_bytes(alloc['allocated_bytes'][scenario])}"
    )


def check_outputs(outputs: Sequence[tuple[str, str]], inputs: Sequence[str]) -> None:
    """Refuse, before any work, an output that is (or links to) one of the inputs, two
    outputs at one path, a path that is not a regular file (FIFO, device, symlink), or one
    that cannot be written. ``outputs``: (option, path) pairs."""
    seen: dict[str, str] = {}
    for option, path in outputs:
        check_target(path, inputs, option)
        key = os.path.realpath(path)
        if key in seen:
            raise InputError(f"{option} and {seen[key]} name the same file", path=path)
        seen[key] = option


def _inputs(args) -> list[str]:
    out = [args.input] if getattr(args, "input", None) else []
    for k in ("schedule", "scenarios", "profile", "device", "costs_file", "from_hlo", "spec"):
        v = getattr(args, k, None)
        if isinstance(v, str) and v:
            out.append(v)
    return out


def _outputs(args) -> list[tuple[str, str]]:
    out = []
    if getattr(args, "output", None):
        out.append(("-o", args.output))
        if getattr(args, "objective", None) in ("remat", "time") or (
            getattr(args, "method", None) or ""
        ).startswith(("remat", "cp-remat", "cp-joint")):
            out.append(("-o (plan JSON)", args.output + ".plan.json"))
    if getattr(args, "trace", None):
        out.append(("--trace", args.trace))
    if isinstance(getattr(args, "csv", None), str):  # pipeline's file (compare's is a flag)
        out.append(("--csv", args.csv))
    if getattr(args, "plot", None):
        out.append(("--plot", args.plot))
    return out


def check_args(args) -> None:
    """Everything that can be checked before reading or solving."""
    check_outputs(_outputs(args), _inputs(args))
    check_input_files(args)
    if getattr(args, "plot", None):
        require_matplotlib()
    budget = getattr(args, "budget", None)
    if budget is not None:
        parse_budget(budget)
    check_numbers(args)


def check_input_files(args) -> None:
    """Every file option names a regular file that can be read (``/dev/zero`` as
    ``--profile`` is refused even where the method would not read it)."""
    for k in ("schedule", "scenarios", "profile", "costs_file", "spec", "from_hlo"):
        v = getattr(args, k, None)
        if isinstance(v, str):
            check_input_file(v)
    device = getattr(args, "device", None)
    if isinstance(device, str) and (
        os.path.sep in device or device.endswith((".json", ".toml")) or os.path.exists(device)
    ):
        check_input_file(device)
    if isinstance(device, str):
        # an unknown preset or a bad file is refused where the method would not read it too
        load_device(device)


def check_numbers(args) -> None:
    """Numeric options in range: finite, positive where a zero makes no sense."""
    for k, low, strict in (
        ("time_limit", 0.0, True),
        ("bandwidth", 0.0, True),
        ("slack", 0.0, False),
    ):
        v = getattr(args, k, None)
        if v is not None and not (math.isfinite(v) and (v > low if strict else v >= low)):
            raise InputError(
                f"--{k.replace('_', '-')} must be a finite number "
                f"{'above' if strict else 'at least'} {low:g} (got {v})"
            )
    if getattr(args, "explain", None) is not None and args.explain < 0:
        raise InputError(f"--explain must be a number of buffers, 0 or more (got {args.explain})")
    if getattr(args, "workers", None) is not None:
        arguments.workers(args.workers, "--workers")
    if getattr(args, "seed", None) is not None:
        arguments.seed(args.seed, "--seed")
    points = getattr(args, "points", None)
    if points is not None and not 2 <= points <= MAX_FRONTIER_POINTS:
        raise LimitError(f"--points must be from 2 to {MAX_FRONTIER_POINTS} (got {points})")
    if getattr(args, "scenarios", None) and getattr(args, "dim", None):
        raise InputError("--scenarios and --dim both give the scenarios; use one of them")
    if getattr(args, "method", None) is not None and not args.method.strip():
        raise InputError("--method is empty; see `cpsched methods`")
    if getattr(args, "weights", None) is not None and not getattr(args, "dim", None):
        raise InputError("--weights needs --dim (a scenarios file has its own weights)")


@contextlib.contextmanager
def stdout_to_stderr(active: bool):
    """Send file descriptor 1 to stderr while ``active`` (CP-SAT writes its log to stdout
    from C++, where ``sys.stdout`` does not reach), so that ``--log`` never mixes with
    ``--json``."""
    if not active:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


# -- signals ------------------------------------------------------------------------------

EXIT_SIGINT, EXIT_SIGTERM = 130, 143


def interrupted_exit(args) -> int:
    """130 after SIGINT, 143 after SIGTERM (``cpsched.core.signals``)."""
    return signals.exit_code()


def was_interrupted(args, r: api.Result) -> bool:
    """The solve was stopped by a signal (its result is the best found so far)."""
    return bool(r.record.interrupted) or signals.received() is not None


# -- info ----------------------------------------------------------------------------------


def cmd_info(args) -> int:
    if getattr(args, "more", None):
        return info_buckets(args, cmd_info)
    g = _read(args)
    sc = _scenarios(args, g)
    order = g.default_order()
    prof = simulate(g, order, sc)
    lb, note = api.known_lower_bound(g, sc)
    alloc = api.xla_allocation(api.simulate(g, order, sc))
    kinds = {k.name.lower(): int((g.kinds == k).sum()) for k in OpKind if (g.kinds == k).any()}
    coll: dict[str, int] = {}
    for c in g.collectives.values():
        coll[c.kind] = coll.get(c.kind, 0) + 1
    data = {
        "input": args.input,
        "graph": g.name,
        "ops": g.n_ops,
        "buffers": g.n_buffers,
        "op_kinds": kinds,
        "collectives": coll,
        "async_pairs": int((g.async_done >= 0).sum()),
        "dims": list(g.dims),
        "scenarios": list(sc.names),
        "has_schedule": g.original_order is not None,
        "peak_bytes": _by_name(sc, prof.peak),
        "lower_bound_bytes": _by_name(sc, lb),
        "lower_bound_note": note,
        **alloc,
        "peak_op": {n: g.op_names[prof.peak_op(s)] for s, n in enumerate(sc.names)},
    }
    lines = [
        f"{g.name}: {g.n_ops} ops, {g.n_buffers} buffers",
        "op kinds: " + ", ".join(f"{k} {v}" for k, v in kinds.items()),
    ]
    if coll:
        lines.append("collectives: " + ", ".join(f"{k} {v}" for k, v in sorted(coll.items())))
    if g.dims:
        lines.append("symbolic dims: " + ", ".join(g.dims))
    approx = list(g.meta.get("approximations", ()))
    if approx:  # symbolic sizes the reader could only bound (StableHLO floordiv, max, ...)
        data["approximations"] = approx
        lines.append(
            f"note: {len(approx)} symbolic size(s) are upper bounds, not exact: "
            + "; ".join(approx[:3])
            + (" ..." if len(approx) > 3 else "")
        )
    src = "its own schedule" if g.original_order is not None else "a topological order"
    lines.append(
        f"peak of {src} vs lower bound (no search; `schedule` may prove more), per scenario"
        + (f" ({note})" if note else "")
        + ":"
    )
    for s, n in enumerate(sc.names):
        lines.append(
            f"  {n:>16}: peak {_bytes(prof.peak[s]):>12} at "
            f"{g.op_names[prof.peak_op(s)]}; lower bound {_bytes(lb[s])}" + _xla_note(alloc, n)
        )
    _explain(args, api.simulate(g, order, sc), data, lines)
    _emit(args, data, "\n".join(lines))
    return 0


def _explain(args, r: api.Result, data: dict, lines: list[str]) -> None:
    """``--explain N``: the N largest buffers live at the peak, with the program's op names
    and source lines (``peak_buffers`` in the JSON)."""
    top = getattr(args, "explain", None)
    if not top:
        return
    explained = api.explain_peak(r, top=top)
    data["peak_buffers"] = explained
    lines.append(api.format_peak_buffers(explained))


def _add_explain(q: argparse.ArgumentParser, default: int) -> None:
    q.add_argument(
        "--explain",
        type=int,
        nargs="?",
        const=10,
        default=default,
        metavar="N",
        help="list the N largest buffers live at the peak, with the op that defines each "
        "and the program's op names and source lines where it carries them "
        f"(N defaults to 10; default: {default or 'off'})",
    )


def add_info(sub) -> None:
    q = sub.add_parser("info", help="ops, buffers, collectives, dims, peak and lower bound")
    _add_input(q)
    q.add_argument(
        "more",
        nargs="*",
        metavar="INPUT",
        help="more compiled modules of the same program at other sizes: fit one "
        "symbolic graph to all (sizes from names such as a.s128.hlo, or --dim; "
        "default: none)",
    )
    _add_explain(q, 5)
    q.set_defaults(fn=cmd_info)


# -- simulate -------------------------------------------------------------------------------


def cmd_simulate(args) -> int:
    g = _read(args)
    sc = _scenarios(args, g)
    order: Any = g.default_order()
    if args.schedule:
        # a scheduled module gives every computation's order (reordered loop bodies count)
        orders = read_module_orders(args.schedule) if g.program is not None else None
        if orders is not None:
            order = orders
        else:
            order = read_order(g, args.schedule)
            validate_order(g, order, what=f"schedule {args.schedule}")
    r = api.simulate(g, order, sc)
    g = r.graph  # with the schedule's orders of the called computations
    prof = simulate(g, r.order, sc)
    note = r.record.lower_bound_note or ""
    alloc = api.xla_allocation(r)
    data = {
        "input": args.input,
        "ops": g.n_ops,
        "peak_bytes": dict(r.peak),
        "lower_bound_bytes": dict(r.bound),
        "lower_bound_note": note,
        **alloc,
        "peak_step": {n: int(prof.peak_step[s]) for s, n in enumerate(sc.names)},
        "peak_op": {n: g.op_names[prof.peak_op(s)] for s, n in enumerate(sc.names)},
    }
    lines = []
    for s, n in enumerate(sc.names):
        lines.append(
            f"{n}: peak {_bytes(prof.peak[s])} at step {int(prof.peak_step[s])} "
            f"({g.op_names[prof.peak_op(s)]}); lower bound {_bytes(r.bound[n])}"
            + (f" ({note})" if note else "")
            + _xla_note(alloc, n)
        )
    _explain(args, r, data, lines)
    _simulate_outputs(args, g, r, lines)
    _emit(args, data, "\n".join(lines))
    return 0


def _simulate_outputs(args, g: Graph, r: api.Result, lines: list[str]) -> None:
    """``--plot`` and ``--trace`` of the order simulated, named after whose order it is."""
    label, whose = "given", ""
    if args.schedule:
        method = schedule_method(args.schedule)
        base = os.path.basename(args.schedule)
        label = method or base
        whose = f"{method}'s order ({base})" if method else f"the order in {base}"
    if args.trace:  # everything that can fail before the first file
        tl = api.timeline(r, args.device, args.profile)
    if args.plot:
        plot_memory(
            {label: api.memory_profile(r)},
            args.plot,
            title=f"{g.name}: live memory of {whose or api.whose_order(r)}",
            inputs=tuple(_inputs(args)),
            bound=dict(r.bound),
        )
        lines.append(f"wrote {args.plot}")
    if args.trace:
        write_trace(args.trace, tl, g, inputs=tuple(_inputs(args)), label=label)
        lines.append(
            f"wrote {args.trace} (makespan {format_time(tl.makespan[0], tl.unit)}, {tl.model})"
        )


def add_simulate(sub) -> None:
    q = sub.add_parser("simulate", help="peak memory of an order and where it happens")
    _add_input(q)
    q.add_argument(
        "--schedule",
        metavar="FILE",
        help="schedule JSON, scheduled HLO (every computation's sequence, loop bodies "
        "included), or op names one per line (default: the input's own order, else a "
        "topological order)",
    )
    q.add_argument(
        "--plot",
        metavar="PNG",
        help="draw live memory at every step with the lower bound (needs matplotlib; "
        "default: no plot)",
    )
    q.add_argument(
        "--trace",
        metavar="JSON",
        help="Chrome/Perfetto trace of the order's timeline with a memory counter track "
        "(default: none)",
    )
    _add_explain(q, 0)
    _add_cost_options(q)
    q.set_defaults(fn=cmd_simulate)


# -- convert --------------------------------------------------------------------------------


def cmd_convert(args) -> int:
    g = _read(args)
    sc = _scenarios(args, g) if (args.dim or args.scenarios) else None
    write_json(args.output, graph_to_dict(g, sc), inputs=tuple(_inputs(args)))
    _emit(
        args,
        {"input": args.input, "output": args.output, "ops": g.n_ops},
        f"wrote {args.output} ({g.n_ops} ops, {g.n_buffers} buffers)",
    )
    return 0


def add_convert(sub) -> None:
    q = sub.add_parser("convert", help="write any input as cpsched graph JSON")
    _add_input(q)
    q.add_argument("-o", "--output", required=True, help="the graph JSON to write (required)")
    q.add_argument(
        "--async-collectives",
        action="store_true",
        help="split synchronous collectives into start/done pairs first (default: off)",
    )
    q.set_defaults(fn=cmd_convert)


# -- methods --------------------------------------------------------------------------------


def cmd_methods(args) -> int:
    rows = api.methods()
    _emit(args, rows, "\n".join(f"{m['name']:<18} {m['family']:<8} {m['summary']}" for m in rows))
    return 0


def add_methods(sub) -> None:
    q = sub.add_parser("methods", help="list scheduling methods")
    q.add_argument("--json", action="store_true", help="machine-readable output (default: a table)")
    q.set_defaults(fn=cmd_methods)


# -- schedule -------------------------------------------------------------------------------


def _progress_printer(peak_bytes: bool = True):
    """One updating line on a terminal (else one every 5 s): the best objective so far, its
    proven bound and the gap. ``peak_bytes``: the objective is a peak (the min-peak
    solver), shown in KiB/MiB/GiB; else the model's own objective units."""
    tty = sys.stderr.isatty()
    last = [0.0]

    def show(obj: float, bound: float, gap: float, elapsed: float) -> None:
        now = time.perf_counter()
        if not tty and now - last[0] < 5:
            return
        last[0] = now
        if peak_bytes:
            head = f"  peak {_bytes(obj)}  bound {_bytes(bound)}"
        else:
            head = f"  objective {obj:,.0f}  bound {bound:,.0f} (model units)"
        msg = f"{head}  gap {100 * gap:5.2f} %  {elapsed:6.1f} s"
        if tty:
            msg = msg.ljust(72)  # over a longer line shown before
        sys.stderr.write(("\r" + msg) if tty else (msg + "\n"))
        sys.stderr.flush()

    return show


OBJECTIVES = api.PROBLEMS  # the --objective names (the problems)


def check_bucket_outputs(args, sc: Scenarios) -> None:
    """Remat on HLO writes one module per bucket beside ``-o``: their names are known once
    the scenarios are, and are checked then, before the solve."""
    name = api.resolve_method(args.method, args.objective)
    if get_method(name).family == "remat" and sniff_format(args.input) == "hlo":
        paths, plan = remat_hlo_paths(args.output, sc)
        check_outputs(
            [("-o (bucket module)", p) for p in paths.values()]
            + [("-o (plan JSON)", plan)]
            + [o for o in _outputs(args) if not o[0].startswith("-o")],
            _inputs(args),
        )


def cmd_schedule(args) -> int:
    g = _read(args)
    sc = _scenarios(args, g)
    check_bucket_outputs(args, sc)
    options: dict[str, Any] = {
        k: getattr(args, k)
        for k in ("slack", "evict", "device", "profile", "bandwidth")
        if getattr(args, k, None) is not None
    }
    if args.keep_order:
        options["reorder"] = False
    method = args.method
    name = api.resolve_method(method, args.objective)
    progress = None
    if (
        api.is_solver(name)
        and get_method(name).family != "remat"
        and not args.json
        and not args.log
    ):
        progress = _progress_printer(peak_bytes=get_method(name).family == "solver")
    # a solver returns its best result on a signal, and it is written marked interrupted;
    # anything else (reading, a heuristic) is stopped outright, with nothing written
    with signals.keep_work() if api.is_solver(name) else contextlib.nullcontext():
        with stdout_to_stderr(bool(args.log)), refused_or_interrupted():
            r = api.schedule(
                g,
                method,
                objective=args.objective,
                scenarios=sc,
                budget=args.budget,
                progress=progress,
                config=_solver_config(
                    args, _time_limit(args, name), _solve_deadline(args, name, g)
                ),
                **options,
            )
        if progress is not None and sys.stderr.isatty():
            sys.stderr.write("\n")
        return _write_schedule(args, g, sc, r)


@contextlib.contextmanager
def refused_or_interrupted() -> Iterator[None]:
    """A result over its budget is refused (``BudgetError``: exit 2, nothing written),
    unless a signal cut its search short: then the signal decides the exit (130 / 143)."""
    try:
        yield
    except BudgetError:
        stopped_by = signals.received()
        if stopped_by is not None:
            raise signals.Interrupted(stopped_by) from None
        raise


def _write_schedule(args, g: Graph, sc: Scenarios, r: api.Result) -> int:
    # everything that can fail is computed before the first file is written
    tl = None
    ov = r.record if isinstance(r.record, OverlapRecord) else None
    if r.plan is None and (args.trace or (ov is not None and ov.pairs is not None)):
        tl = api.timeline(r, args.device, args.profile)
    plan_traces: list = []
    if r.plan is not None and args.trace:  # the plan's clones and host copies, per bucket
        plan_traces = [
            (t, t.graph, r.method)
            for t in api.plan_timelines(r, args.device, args.profile).values()
        ]
    stopped = was_interrupted(args, r)
    out = api.write(
        r,
        args.output,
        args.input,
        async_collectives=args.async_collectives,
        inputs=_inputs(args),
        annotate={"interrupted": True} if stopped else None,
    )
    if r.plan is not None:
        if args.trace:
            write_trace(args.trace, plan_traces, inputs=tuple(_inputs(args)))
        code = _present_remat(args, r, out, stopped)
        return interrupted_exit(args) if stopped else code
    if args.trace and tl is not None:
        write_trace(args.trace, tl, g, inputs=tuple(_inputs(args)), label=r.method)
    data = dict(out["data"])
    data.pop("order")
    alloc = api.xla_allocation(r)
    data.update(alloc)
    data["output"] = args.output
    data["orders"] = {k: list(v) for k, v in r.orders.items()}
    data["solver"] = dict(r.solver)
    data["seconds"] = round(r.seconds, 6)
    lines = [f"{r.method}: {r.status}, wrote {args.output}"]
    for n in sc.names:
        line = (
            f"  {n}: peak {_bytes(r.peak[n])}, lower bound {_bytes(r.bound[n])}, "
            f"gap {100 * r.gap[n]:.2f} %" + _xla_note(alloc, n).replace(";", ",")
        )
        if r.record.lower_bound_note and r.gap[n] > 0:
            line += f" ({r.record.lower_bound_note})"
        if r.budget is not None:
            line += f", budget {_bytes(r.budget[n])}" + _reference_text(r, n)
        lines.append(line)
    if ov is not None and ov.makespan:
        unit = ov.unit or "s"
        data["device"] = str(args.device)  # the preset of the time figures
        model = tl.model if tl is not None else _time_model(args.device, unit)
        for n in sc.names:
            lines.append(
                f"  {n}: makespan {format_time(ov.makespan[n], unit)}, exposed "
                f"comm {format_time(_at(ov.exposed_comm, n), unit)} (lower bound "
                f"{format_time(_at(ov.exposed_comm_lower_bound, n), unit)}; {model}), "
                f"budget {_bytes(_at(ov.budget, n))}"
            )
        lines.append(_pair_lines(ov.pairs or [], sc.names[0], unit))
    if out.get("async"):
        lines.append(f"  {out['async']}")
    lines.append(f"  time {format_seconds(r.seconds)}" + _solver_note(r))
    lines += _short_time_note(r, data)
    if r.record.message:
        lines.append(f"  {r.record.message}")
    if args.trace:
        lines.append(f"  wrote {args.trace}")
    if stopped:
        data["interrupted"] = True
        lines.append("  interrupted: wrote the best schedule found so far")
    _emit(args, data, "\n".join(lines))
    return interrupted_exit(args) if stopped else 0


# Time kept back from a solver's limit for what follows the solve (the final check, the
# result, writing the schedule, the interpreter's exit), per op of the graph: 100k ops took
# about 3 s and 1M ops about 50 s on a loaded 2-core machine.
FINISH_SECONDS = 0.2
FINISH_SECONDS_PER_OP = 5e-5


def hard_stop(args) -> float | None:
    """When a solving command stops whatever it is doing (``perf_counter`` seconds) if no
    solver has started by then (reading a large input): its start plus ``--time-limit``
    and half the tolerance of the limit, max(1 s, 5 %) (in that margin, a solve that finds
    no time left still returns its best heuristic). None for heuristics, in deterministic mode, and
    where the default limit depends on the input."""
    if getattr(args, "deterministic", False) or args.command not in (
        "schedule",
        "compare",
        "frontier",
        "pipeline",
    ):
        return None
    limit = getattr(args, "time_limit", None)
    if args.command == "schedule":
        name = api.resolve_method(args.method, args.objective)
        if not api.is_solver(name):
            return None
        if limit is None:
            limit = api.DEFAULT_TIME_LIMITS.get(name, api.DEFAULT_TIME_LIMIT)
    if limit is None or (args.command == "compare" and args.no_solver):
        return None
    args.command_time_limit = float(limit)
    return args.started + signals.stop_after(limit)


def _time_limit(args, name: str) -> float:
    """``--time-limit``, else method ``name``'s default."""
    if args.time_limit is not None:
        return float(args.time_limit)
    return api.DEFAULT_TIME_LIMITS.get(name, api.DEFAULT_TIME_LIMIT)


def _solver_config(args, time_limit: float, deadline: float | None) -> SolverConfig:
    """The command's solver settings as the one object the API takes (``config=``)."""
    return SolverConfig(
        time_limit=float(time_limit),
        workers=args.workers if args.workers is not None else api.DEFAULT_WORKERS,
        seed=args.seed if args.seed is not None else api.DEFAULT_SEED,
        deterministic=bool(args.deterministic),
        log=bool(getattr(args, "log", False)),
        deadline=deadline,
    )


def _solve_deadline(args, name: str, g: Graph) -> float | None:
    """When a solver must stop (perf_counter seconds) for the command to end within
    ``--time-limit`` of its start, reading and writing included; None for heuristics and
    in deterministic mode (where limits are work units)."""
    if not api.is_solver(name) or args.deterministic:
        return None
    started = getattr(args, "started", None) or time.perf_counter()
    return _finish_by(started + _time_limit(args, name), g)


# Seconds a figure takes to draw once matplotlib is loaded (``check_args`` loads it): under
# one for compare's twenty rows on a loaded 2-core machine. A solving command with --plot
# keeps them back from its time limit.
FIGURE_SECONDS = 1.0


def _figure_seconds(args) -> float:
    return FIGURE_SECONDS if getattr(args, "plot", None) else 0.0


def drawing():
    """Drawing the figure of a finished result: the time limit's hard stop does not throw
    the result away there (its time was kept back from the solve), and a signal is taken
    once the figure is written."""
    return signals.keep_work()


def _finish_by(end: float, g: Graph) -> float:
    """When the solving must stop for the command to end by ``end``."""
    return end - FINISH_SECONDS - FINISH_SECONDS_PER_OP * g.n_ops


def _solver_note(r: api.Result) -> str:
    s = r.solver
    if not s:
        return ""
    return (
        f" (limit {format_seconds(s['time_limit'])}, {s['workers']} workers, seed "
        f"{s['seed']}{', deterministic' if s.get('deterministic') else ''})"
    )


def _short_time_note(r: api.Result, data: dict | None = None) -> list[str]:
    """``short_time_text`` of a schedule as a line of its report, and in ``data`` (its
    JSON) as ``time_note``."""
    text = short_time_text(r.solver.get("seconds_available"), r.solver.get("time_limit"))
    if text and data is not None:
        data["time_note"] = text
    return [f"  {text}"] if text else []


def _command_time_note(args, deadline: float | None, data: dict) -> str:
    """``short_time_text`` for a command whose solves share ``deadline``: the time they had
    from when they began (``args.solve_began``); also in ``data`` as ``time_note``."""
    began = getattr(args, "solve_began", None)
    if deadline is None or began is None or args.time_limit is None:
        return ""
    text = short_time_text(deadline - began, float(args.time_limit), "the solves")
    if text:
        data["time_note"] = text
    return text


def _at(per_scenario: Mapping[str, Any] | None, n: str) -> Any:
    """A record's figure for scenario ``n`` (a record the method filled has it)."""
    if per_scenario is None:
        raise KeyError(n)
    return per_scenario[n]


def _pair_lines(pairs: Sequence[Mapping[str, Any]], scenario: str, unit: str) -> str:
    """Each async pair's start, done and distance before and after."""
    if not pairs:
        return "  (no async pairs)"
    out = [f"  async pairs ({scenario}): start done distance overlapped, before -> after"]
    for r in pairs:
        before = (
            f"{r.get('start_index_before', '-')} {r.get('done_index_before', '-')} "
            f"{r.get('distance_before', '-')} "
            f"{format_time(r['overlapped_before'][scenario], unit) if 'overlapped_before' in r else '-'}"
        )
        after = (
            f"{r['start_index']} {r['done_index']} {r['distance']} "
            f"{format_time(r['overlapped_after'][scenario], unit)}"
        )
        out.append(f"    {r['start']:<28} {before:>26}  ->  {after}")
    return "\n".join(out)


def _present_remat(args, r: api.Result, out: dict, stopped: bool = False) -> int:
    res, sc = r.plan, r.scenarios
    assert res is not None
    data, written = out["data"], out["written"]
    lines = [f"{r.method}: {r.status}, wrote {', '.join(written)}"]
    buckets = out.get("buckets") or {}
    for d in buckets.values():
        lines.append(
            f"  HLO {d['output']}: plan of {d['scenario']} in {d['computation']}: "
            f"{len(d['clones'])} clone(s), {len(d['evictions'])} eviction(s), "
            f"{len(d['prefetches'])} prefetch(es); read back: peak "
            f"{_bytes(d['peak_bytes'])} <= budget {_bytes(d['budget_bytes'])}"
        )
    if len(buckets) > 1:
        top = next(iter(buckets.values()))
        lines.insert(2, f"    (also within budget in: {', '.join(top['fits_buckets'])})")
    unit = _time_unit(r, args.device)
    model = _time_model(args.device, unit)
    for s, n in enumerate(sc.names):
        # float noise of timeline differences (1e-20 of a step) prints as 0
        tiny = 1e-9 * max(1.0, abs(float(res.time.base[s])))
        rec, exp = (
            float(x[s]) if abs(float(x[s])) > tiny else 0.0
            for x in (res.time.recompute, res.time.exposed_transfer)
        )
        line = f"  {n}: peak {_bytes(res.peak[s])} <= budget {_bytes(res.budget[s])}"
        line += _reference_text(r, n)
        lines.append(
            line + f", added time {float(res.added_time_pct[s]):.2f} % (recompute "
            f"{format_time(rec, unit)}, exposed transfer {format_time(exp, unit)}; {model}), "
            f"active candidates {len(res.active[s])}"
        )
    if data.get("breakpoints"):
        lines.append(f"  breakpoints: {data['breakpoints']}")
    record = r.record
    if isinstance(record, JointRecord) and record.objective == "time" and record.makespan:
        mb = record.makespan_bound or {}
        for n in sc.names:
            line = (
                f"  {n}: makespan {format_time(record.makespan[n], unit)}, exposed comm "
                f"{format_time(_at(record.exposed_comm, n), unit)}, exposed copies "
                f"{format_time(_at(record.exposed_copy, n), unit)}"
            )
            if n in mb:
                line += f", makespan lower bound {format_time(mb[n], unit)}"
            lines.append(line + f" ({model})")
        for row in record.sequential or []:
            lines.append(
                f"  separate methods: {row['method']}: makespan "
                + ", ".join(format_time(v, unit) for v in row["makespan"].values())
                + ("" if row["fits"] else " (over the budget)")
            )
    bound = record.added_time_lower_bound_pct if isinstance(record, RematRecord) else None
    if bound is not None:
        lines.append(
            "  no plan on this order adds less than: "
            + ", ".join(f"{n} {b:.2f} %" for n, b in zip(sc.names, bound))
        )
    lines.append(f"  time {format_seconds(r.seconds)}" + _solver_note(r))
    lines += _short_time_note(r, data)
    if record.message:
        lines.append(f"  {record.message}")
    if args.trace:
        lines.append(f"  wrote {args.trace} (the plan's clones and host copies; {model})")
    summary = dict(data)
    summary.pop("steps", None)
    summary["output"] = args.output
    summary["solver"] = dict(r.solver)
    if stopped:
        summary["interrupted"] = True
        lines.append("  interrupted: wrote the best plan found so far")
    if len(written) > 1:
        summary["plan"] = written[-1]
        if len(written) > 2:
            summary["bucket_modules"] = written[1:-1]
    _emit(args, summary, "\n".join(lines))
    return 0


def _reference_text(r: api.Result, scenario: str) -> str:
    """`` (90% of the peak of the input's own order, 29.02 KiB)`` for a percentage budget."""
    ref = r.record.budget_reference
    if not ref:
        return ""
    return f" ({ref['budget']} of {ref['reference']}, {_bytes(ref['reference_bytes'][scenario])})"


def _time_unit(r: api.Result, device: str) -> str:
    """The unit of the op times a remat plan was timed with (the cost model's)."""
    return _unit(r.graph, load_device(device))


def _time_model(device: str, unit: str) -> str:
    """What times in ``unit`` from the ``--device`` preset come from (``h100 model``)."""
    return model_label(load_device(device).name, unit)


def _add_solver_options(q: argparse.ArgumentParser, default_limit: str) -> None:
    q.add_argument(
        "--time-limit",
        type=float,
        default=None,
        metavar="S",
        help=f"seconds for the whole command, counted from its start (default: {default_limit})",
    )
    q.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help=f"CP-SAT threads (default: {api.DEFAULT_WORKERS})",
    )
    q.add_argument(
        "--seed",
        type=int,
        default=None,
        metavar="K",
        help=f"CP-SAT random seed (default: {api.DEFAULT_SEED})",
    )
    q.add_argument(
        "--deterministic",
        action="store_true",
        default=None,
        help="count solver limits in work units, not seconds: the same input and "
        "seed give the same order (default: off)",
    )
    q.add_argument(
        "--async-collectives",
        action="store_true",
        help="split synchronous collectives into start/done pairs first (default: off)",
    )
    _add_cost_options(q)


def _add_cost_options(q: argparse.ArgumentParser) -> None:
    q.add_argument(
        "--device",
        help="cost-model preset (h100, h200, a100, cpu, xla-approx) or a TOML/JSON file "
        "(default: cpu for a module XLA:CPU optimized, else h100)",
    )
    q.add_argument(
        "--profile",
        metavar="FILE",
        help="measured op times: JSON {name: us} or XLA's PGLE text proto "
        "(default: none, the cost model's estimates)",
    )


def add_schedule(sub) -> None:
    q = sub.add_parser("schedule", help="run one method (default: cp), validate, write")
    _add_input(q)
    _add_solver_options(q, "10 s; 30 s for cp-joint; 60 s for cp-remat and remat-fixed-order")
    q.add_argument(
        "-o",
        "--output",
        required=True,
        help="the schedule (required): HLO in -> HLO out, JSON in -> JSON. With "
        "--objective remat on HLO: the module with the plan's clones and "
        "host (S(5)) copy-start/copy-done pairs (the last bucket's plan; with "
        "several buckets each bucket's module as OUT.<bucket>.hlo too), and "
        "the plan JSON as OUT.plan.json",
    )
    q.add_argument(
        "--method",
        help="method name, see `cpsched methods` (default: cp, the "
        "minimum-peak solver, or the solver of --objective)",
    )
    q.add_argument(
        "--objective",
        choices=list(OBJECTIVES),
        help="weighted/minimax/lexicographic/budget: min-peak order (cp); "
        "overlap/distance: collective overlap (cp-overlap); remat: "
        "recompute/evict to fit --budget (cp-remat); time: least makespan "
        "within --budget deciding order, collective overlap, recompute and "
        "(--evict) offload in one model (cp-joint) (default: weighted)",
    )
    q.add_argument(
        "--budget",
        metavar="BYTES",
        help="memory budget: bytes, 512MB, 8GiB, or 90%% (of the peak of the "
        "input's own order); one value, or one per scenario comma separated. A "
        "result over it is refused (exit 2) with the least peak reached and the "
        "proven minimum (default: none)",
    )
    q.add_argument(
        "--slack",
        type=float,
        default=None,
        help="overlap: memory budget = best memory-only peak x (1 + SLACK) (default: 0)",
    )
    q.add_argument(
        "--evict",
        action="store_true",
        default=None,
        help="remat: also offload buffers to host memory (default: off)",
    )
    q.add_argument(
        "--bandwidth",
        type=float,
        default=None,
        metavar="BYTES",
        help="remat --evict: host link in bytes per op-time unit (default: "
        "the --device's PCIe; needed when op times are the file's own)",
    )
    q.add_argument(
        "--keep-order",
        action="store_true",
        default=None,
        help="remat: keep the input's order as the main order and only "
        "add clones/copies (the Checkmate/Moccasin setting); the plan "
        "is then reported with a lower bound on its added time (default: off)",
    )
    q.add_argument(
        "--trace",
        metavar="JSON",
        help="Chrome/Perfetto trace of the timeline with a memory counter track (default: none)",
    )
    q.add_argument(
        "--log",
        action="store_true",
        default=None,
        help="CP-SAT's search log, on stderr (default: off)",
    )
    q.set_defaults(fn=cmd_schedule)


# -- compare --------------------------------------------------------------------------------


def cmd_compare(args) -> int:
    g = _read(args)
    sc = _scenarios(args, g)
    # --time-limit: the whole command, shared by the solver rows (each gets at most that
    # too); without it each solver row has the default
    deadline = None
    if args.time_limit is not None and not args.deterministic:
        deadline = _finish_by(args.started + args.time_limit - _figure_seconds(args), g)
    args.solve_began = time.perf_counter()
    limit = args.time_limit if args.time_limit is not None else api.DEFAULT_TIME_LIMIT
    c = api.compare(
        g,
        scenarios=sc,
        config=_solver_config(args, limit, deadline),
        solvers=not args.no_solver,
        device=args.device,
        profile=args.profile,
        async_collectives=args.async_collectives,
        methods=args.methods,
    )
    # the rows are found: the hard stop, on a loaded machine, must not throw them away while
    # they are written (their time was kept back from the solves)
    with signals.keep_work():
        data = c.to_dict()
        data["input"] = args.input
        data["reproduce"]["command"] = ["cpsched"] + list(args.argv)
        note = "" if args.no_solver else _command_time_note(args, deadline, data)
        if args.csv:
            print(_compare_csv(c), end="")
        elif args.json:
            print(json.dumps(data, indent=1))
        else:
            print(api.format_comparison(c))
        if note and not args.json:
            print(f"cpsched: {note}", file=sys.stderr if args.csv else sys.stdout)
        sys.stdout.flush()
    if args.plot:
        with drawing():
            c.plot(args.plot, inputs=_inputs(args))
        if not (args.json or args.csv):
            print(f"wrote {args.plot}")
    if signals.received() is not None:
        if args.csv or args.json:
            print("cpsched: interrupted: the finished rows were written", file=sys.stderr)
        return interrupted_exit(args)
    return 0


def _compare_csv(c: api.Comparison) -> str:
    buf = io.StringIO()
    cols = [
        "method",
        "status",
        "scenario",
        "peak_bytes",
        "lower_bound_bytes",
        "gap",
        "makespan",
        "exposed_comm",
        "seconds",
        "time_model",
    ]
    w = csv.writer(buf)
    w.writerow(cols)
    for rec in c.records():
        if "error" not in rec:
            rec["time_model"] = c.model if "makespan" in rec else ""
            w.writerow([rec.get(k, "") for k in cols])
    return buf.getvalue()


def add_compare(sub) -> None:
    q = sub.add_parser("compare", help="run every method side by side")
    _add_input(q)
    _add_solver_options(
        q,
        f"{api.DEFAULT_TIME_LIMIT:g} s per solver row; a given limit is shared by the rows",
    )
    q.add_argument(
        "--csv", action="store_true", help="one CSV row per method and scenario (default: a table)"
    )
    q.add_argument(
        "--plot",
        metavar="PNG",
        help="memory over time of every method (needs matplotlib; default: none)",
    )
    q.add_argument("--no-solver", action="store_true", help="heuristics only (default: off)")
    q.add_argument(
        "--methods",
        type=_method_list,
        metavar="A,B",
        help="only these methods, comma separated (see `cpsched methods`; cp-memory is cp); "
        "the input's own order is always the first row (default: every order method that "
        "applies)",
    )
    q.set_defaults(fn=cmd_compare)


def _method_list(text: str) -> list[str]:
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise argparse.ArgumentTypeError("give method names, comma separated")
    return names


def cmd_frontier(args) -> int:
    g = _read(args)
    sc = _scenarios(args, g)
    progress = None if args.json else (lambda line: print(line, file=sys.stderr))
    # --time-limit: the whole command, shared by the points (each gets at most that too);
    # without it each point has the default
    deadline = None
    if args.time_limit is not None and not args.deterministic:
        deadline = _finish_by(args.started + args.time_limit - _figure_seconds(args), g)
    args.solve_began = time.perf_counter()
    limit = args.time_limit if args.time_limit is not None else DEFAULT_POINT_TIME_LIMIT
    f = api.frontier(
        g,
        points=args.points,
        scenarios=sc,
        evict=bool(args.evict),
        bandwidth=args.bandwidth,
        device=args.device,
        profile=args.profile,
        progress=progress,
        config=_solver_config(args, limit, deadline),
    )
    data = f.to_dict()
    data["input"] = args.input
    data["settings"]["command"] = ["cpsched"] + list(args.argv)
    if args.plot:
        with drawing():
            f.plot(args.plot, inputs=_inputs(args))
    note = _command_time_note(args, deadline, data)
    _emit(
        args,
        data,
        f.table() + (f"\nwrote {args.plot}" if args.plot else "") + (f"\n{note}" if note else ""),
    )
    if signals.received() is not None:
        print("cpsched: interrupted: the points solved so far were written", file=sys.stderr)
        return interrupted_exit(args)
    return 0


def add_frontier(sub) -> None:
    q = sub.add_parser(
        "frontier", help="makespan against memory budget: cp-joint at K budgets, heuristics beside"
    )
    _add_input(q)
    _add_solver_options(
        q,
        f"{DEFAULT_POINT_TIME_LIMIT:g} s per point and per range solve; a given limit is "
        "shared by them",
    )
    q.add_argument(
        "--points",
        type=int,
        default=DEFAULT_POINTS,
        metavar="K",
        help=f"number of budgets (default: {DEFAULT_POINTS})",
    )
    q.add_argument(
        "--evict",
        action="store_true",
        help="allow host offload (copy out and back) as well as recompute (default: off)",
    )
    q.add_argument(
        "--bandwidth",
        type=float,
        metavar="B",
        help="host link bytes per time unit for --evict (default: the device's PCIe)",
    )
    q.add_argument(
        "--plot",
        metavar="PNG",
        help="makespan against budget with bounds and heuristics (needs matplotlib; default: none)",
    )
    q.set_defaults(fn=cmd_frontier)


# -- entry point ----------------------------------------------------------------------------

SUBCOMMANDS: list[Callable] = [
    add_info,
    add_simulate,
    add_convert,
    add_methods,
    add_schedule,
    add_compare,
    add_frontier,
    add_capture,
    pipeline_cli.add_parser,
    sweep_cli.add_parser,
    measure_cli.add_parser,
    layout_cli.add_parser,
]


def one_line(text: str) -> str:
    """``text`` with control characters escaped (a path may hold a newline)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class OneLineParser(argparse.ArgumentParser):
    """An option error is one line, like every other error (not the usage block): the
    command, the reason, and where the options are listed."""

    def error(self, message: str):  # type: ignore[override]
        print(f"cpsched: error: {one_line(message)} (see `{self.prog} --help`)", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog="cpsched",
        description="Constraint-solver schedules for ML compiler graphs (peak memory, "
        "collective overlap, remat), beside the compilers' heuristics. Inputs: XLA HLO, "
        "StableHLO/MHLO (.mlir), cpsched or node-link JSON, captured torch graphs.",
    )
    p.add_argument(
        "--version",
        action="version",
        version=version_line(),
    )
    sub = p.add_subparsers(dest="command", required=True)
    for add in SUBCOMMANDS:
        add(sub)
    return p


# write errors of the report on stdout (a full disk, a closed or broken descriptor)
REPORT_ERRNOS = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EIO, errno.EBADF)


def main(argv: Sequence[str] | None = None, *, started: float | None = None) -> int:
    # a time limit counts from ``started``: the process's start on the command line (the
    # console script passes it), the call when called in-process
    if started is None:
        started = process_start() if argv is None else time.perf_counter()
    with signals.command():
        return _main(argv, started)


def _main(argv: Sequence[str] | None, started: float) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = argparse.Namespace()
    try:
        parser = build_parser()
        try:
            args = parser.parse_args(argv)
        except SystemExit as e:  # --help, --version, or an option error (one line, exit 2)
            return e.code if isinstance(e.code, int) else EXIT_USAGE
        args.argv = argv
        args.started = started
        args.signals = signals.SignalState()
        check_args(args)
        # every file of the command appears when it returns, none when it fails
        with signals.time_limit(hard_stop(args)), all_or_nothing():
            try:
                code = args.fn(args)
                # the report is an output too: stdout on a full disk fails the command
                # before any of its files is committed
                sys.stdout.flush()
            except BrokenPipeError:
                pass  # the report's reader left: the files still count, committed here
            except OSError as e:
                if e.errno not in REPORT_ERRNOS or e.filename is not None:
                    raise
                raise InputError(
                    f"stdout: the report could not be written ({e.strerror}); nothing written"
                ) from None
            else:
                # a signal a solver's runtime took in a command that keeps no work: it ends
                # the command (its files are complete, the exit code says it was stopped)
                return interrupted_exit(args) if code == 0 and signals.received() else code
        raise BrokenPipeError
    except CpschedError as e:
        print(f"cpsched: error: {one_line(str(e))}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # the reader went away (`cpsched methods --json | head -1`): stop quietly, and keep
        # the interpreter's final flush from complaining
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return 0
    except signals.TimeUp:
        limit = getattr(args, "command_time_limit", None)  # None: stopped while parsing
        print(
            "cpsched: error: the time limit "
            + (
                f"of {limit:g} s ran out before any result was found"
                if limit is not None
                else "ran out while cpsched was starting"
            )
            + "; nothing written; a longer --time-limit gives the solver time",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except KeyboardInterrupt:
        code = interrupted_exit(args)
        print(
            f"cpsched: {'terminated' if code == EXIT_SIGTERM else 'interrupted'} "
            "before a result was returned; nothing written",
            file=sys.stderr,
        )
        return code
    except RecursionError:
        print(
            f"cpsched: error: {getattr(args, 'input', '')}: input nests too deeply", file=sys.stderr
        )
        return EXIT_USAGE
    except Exception as e:  # a bug in cpsched: one line, details with CPSCHED_DEBUG=1
        if os.environ.get("CPSCHED_DEBUG"):
            raise
        print(
            f"cpsched: internal error: {type(e).__name__}: {e} (set CPSCHED_DEBUG=1 for details)",
            file=sys.stderr,
        )
        return 3


if __name__ == "__main__":
    sys.exit(main())
