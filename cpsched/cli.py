"""Command line: ``cpsched info | simulate | convert | methods | schedule | compare``.

Every error the user can cause is one line on stderr (file:line:col: reason) and exit
code 2; nothing the user gave is overwritten.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import sys
import time
from typing import Any, Sequence

from cpsched.core.errors import CpschedError, InputError
from cpsched.core.graph import Graph, OpKind
from cpsched.core.scenarios import Scenarios, from_dim_specs, from_json, static

EXIT_USAGE = 2


# -- shared option handling ---------------------------------------------------------------

def _add_input(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", help="HLO text, cpsched graph JSON, or networkx node-link JSON")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=V1,V2",
                   help="values of a symbolic dim; several --dim give their product")
    p.add_argument("--weights", help="scenario weights, comma separated (default uniform)")
    p.add_argument("--scenarios", metavar="FILE", help="scenarios JSON instead of --dim")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _scenarios(args, graph: Graph) -> Scenarios:
    if args.scenarios:
        sc = from_json(args.scenarios)
    elif args.dim:
        sc = from_dim_specs(args.dim, args.weights)
    elif graph.meta.get("scenarios"):
        sc = from_json(dict(graph.meta["scenarios"]))
    else:
        sc = static()
    missing = sorted(set(graph.dims) - set(sc.dims))
    if missing:
        raise InputError(f"{graph.name} has symbolic dims {', '.join(missing)}: give their "
                         "values with --dim NAME=V1,V2,... or --scenarios FILE")
    return sc


def _read(path: str, args=None) -> Graph:
    from cpsched.readers import read_graph
    g = getattr(args, "graph", None) or read_graph(path)
    if getattr(args, "async_collectives", False):
        from cpsched.heuristics.common import convert_sync_collectives
        g = convert_sync_collectives(g)
    return g


def _by_name(sc: Scenarios, arr) -> dict[str, int]:
    return {n: int(v) for n, v in zip(sc.names, arr)}


def _fmt_bytes(v: float) -> str:
    v = float(v)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(v) < 1024 or unit == "TiB":
            return f"{v:.0f} {unit}" if unit == "B" else f"{v:.2f} {unit}"
        v /= 1024
    return str(v)


def _emit(args, data: dict, text: str) -> None:
    if args.json:
        print(json.dumps(data, indent=1))
    else:
        print(text)


# -- info ----------------------------------------------------------------------------------

def cmd_info(args) -> int:
    from cpsched.analysis.memory import lower_bound, simulate
    if getattr(args, "more", None):
        from cpsched.capture import info_buckets
        return info_buckets(args, cmd_info)
    g = _read(args.input, args)
    sc = _scenarios(args, g)
    order = g.default_order()
    prof = simulate(g, order, sc)
    lb = lower_bound(g, sc)
    kinds = {k.name.lower(): int((g.kinds == k).sum()) for k in OpKind if (g.kinds == k).any()}
    coll: dict[str, int] = {}
    for c in g.collectives.values():
        coll[c.kind] = coll.get(c.kind, 0) + 1
    data = {
        "input": args.input, "graph": g.name, "ops": g.n_ops, "buffers": g.n_buffers,
        "op_kinds": kinds, "collectives": coll,
        "async_pairs": int((g.async_done >= 0).sum()),
        "dims": list(g.dims), "scenarios": list(sc.names),
        "has_schedule": g.original_order is not None,
        "peak_bytes": _by_name(sc, prof.peak),
        "lower_bound_bytes": _by_name(sc, lb),
        "peak_op": {n: g.op_names[prof.peak_op(s)] for s, n in enumerate(sc.names)},
    }
    lines = [f"{g.name}: {g.n_ops} ops, {g.n_buffers} buffers",
             "op kinds: " + ", ".join(f"{k} {v}" for k, v in kinds.items())]
    if coll:
        lines.append("collectives: " + ", ".join(f"{k} {v}" for k, v in sorted(coll.items())))
    if g.dims:
        lines.append("symbolic dims: " + ", ".join(g.dims))
    approx = list(g.meta.get("approximations", ()))
    if approx:  # symbolic sizes the reader could only bound (StableHLO floordiv, max, ...)
        data["approximations"] = approx
        lines.append(f"note: {len(approx)} symbolic size(s) are upper bounds, not exact: "
                     + "; ".join(approx[:3]) + (" ..." if len(approx) > 3 else ""))
    src = "its own schedule" if g.original_order is not None else "a topological order"
    lines.append(f"peak of {src} vs lower bound, per scenario:")
    for s, n in enumerate(sc.names):
        lines.append(f"  {n:>16}: peak {_fmt_bytes(prof.peak[s]):>12} ({int(prof.peak[s])} B) at "
                     f"{g.op_names[prof.peak_op(s)]}; lower bound {_fmt_bytes(lb[s])} ({int(lb[s])} B)")
    _emit(args, data, "\n".join(lines))
    return 0


# -- simulate -------------------------------------------------------------------------------

def cmd_simulate(args) -> int:
    from cpsched.analysis.memory import lower_bound, simulate
    from cpsched.analysis.validate import validate_order
    from cpsched.writers.schedule import read_order
    g = _read(args.input, args)
    sc = _scenarios(args, g)
    order = read_order(g, args.schedule) if args.schedule else g.default_order()
    validate_order(g, order, what=f"schedule {args.schedule}" if args.schedule else "schedule")
    prof = simulate(g, order, sc)
    lb = lower_bound(g, sc)
    data = {"input": args.input, "ops": g.n_ops,
            "peak_bytes": _by_name(sc, prof.peak),
            "lower_bound_bytes": _by_name(sc, lb),
            "peak_step": {n: int(prof.peak_step[s]) for s, n in enumerate(sc.names)},
            "peak_op": {n: g.op_names[prof.peak_op(s)] for s, n in enumerate(sc.names)}}
    lines = []
    for s, n in enumerate(sc.names):
        lines.append(f"{n}: peak {_fmt_bytes(prof.peak[s])} ({int(prof.peak[s])} B) at step "
                     f"{int(prof.peak_step[s])} ({g.op_names[prof.peak_op(s)]}); "
                     f"lower bound {int(lb[s])} B")
    if args.plot:
        from cpsched.plot import plot_memory
        plot_memory({"schedule": prof}, args.plot, title=g.name, inputs=(args.input,))
        lines.append(f"wrote {args.plot}")
    _emit(args, data, "\n".join(lines))
    return 0


# -- convert --------------------------------------------------------------------------------

def cmd_convert(args) -> int:
    from cpsched.writers import write_json
    from cpsched.writers.json_graph import graph_to_dict
    g = _read(args.input, args)
    sc = _scenarios(args, g) if (args.dim or args.scenarios) else None
    write_json(args.output, graph_to_dict(g, sc), inputs=(args.input,))
    if args.json:
        print(json.dumps({"input": args.input, "output": args.output, "ops": g.n_ops}))
    else:
        print(f"wrote {args.output} ({g.n_ops} ops, {g.n_buffers} buffers)")
    return 0


# -- methods --------------------------------------------------------------------------------

def cmd_methods(args) -> int:
    from cpsched.methods import load_all
    methods = load_all()
    if args.json:
        print(json.dumps([{"name": m.name, "family": m.family, "summary": m.summary}
                          for m in methods.values()], indent=1))
    else:
        for m in sorted(methods.values(), key=lambda m: (m.family, m.name)):
            print(f"{m.name:<16} {m.family:<8} {m.summary}")
    return 0


# -- running one method ---------------------------------------------------------------------

def _method_options(args) -> dict[str, Any]:
    opts: dict[str, Any] = {}
    for k in ("time_limit", "workers", "seed", "objective", "deterministic", "log"):
        v = getattr(args, k, None)
        if v is not None:
            opts[k] = v
    if getattr(args, "budget", None):
        opts["budget"] = _parse_budget(args.budget)
    return opts


def _parse_budget(text: str):
    parts = [p.strip() for p in text.split(",") if p.strip()]
    try:
        vals = [int(float(p)) for p in parts]
    except ValueError:
        raise InputError(f"--budget {text!r}: expected bytes, one number or one per scenario") from None
    return vals[0] if len(vals) == 1 else vals


def run_method(name: str, g: Graph, sc: Scenarios, options: dict[str, Any]):
    """Run a registered method and return a validated ``Schedule``."""
    from cpsched.methods import get
    from cpsched.analysis.schedule import Schedule, make_schedule
    m = get(name)
    t0 = time.perf_counter()
    out = m.fn(g, sc, **options)
    dt = time.perf_counter() - t0
    if isinstance(out, Schedule):
        # re-validate: a solver's claim is checked against the simulator, byte for byte
        return make_schedule(g, out.order, out.method, sc, status=out.status, seconds=out.seconds or dt,
                             lower_bound=out.lower_bound_bytes, claimed_peak=out.peak_bytes,
                             info=out.info)
    return make_schedule(g, out, name, sc, seconds=dt)


def _progress_printer():
    tty = sys.stderr.isatty()
    last = [0.0]

    def show(obj: float, bound: float, gap: float, elapsed: float) -> None:
        now = time.perf_counter()
        if not tty and now - last[0] < 5:
            return
        last[0] = now
        msg = f"  objective {obj:,.0f}  bound {bound:,.0f}  gap {100 * gap:5.2f}%  {elapsed:6.1f}s"
        sys.stderr.write(("\r" + msg) if tty else (msg + "\n"))
        sys.stderr.flush()
    return show


# Objective -> (method, objective passed to it).
OBJECTIVES = {
    "weighted": ("cp", "weighted"), "minimax": ("cp", "minimax"),
    "lexicographic": ("cp", "lexicographic"), "budget": ("cp", "budget"),
    "overlap": ("cp-overlap", "makespan"), "distance": ("cp-overlap", "distance"),
    "remat": ("cp-remat", "time"),
}


def cmd_schedule(args) -> int:
    from cpsched.writers import write_json, write_text
    from cpsched.writers.schedule import schedule_to_dict
    g = _read(args.input, args)
    sc = _scenarios(args, g)
    if args.objective:
        method, objective = OBJECTIVES[args.objective]
        if args.method and args.method != method and not (method == "cp-remat" and
                                                           args.method.startswith("remat")):
            raise InputError(f"--objective {args.objective} is solved by {method}, not {args.method}")
        method = args.method or method
    else:
        method, objective = args.method or "xla-default", None
    method = {"cp-memory": "cp"}.get(method, method)
    opts = _method_options(args)
    if objective is not None:
        opts["objective"] = objective
    if objective == "budget" and "budget" not in opts:
        raise InputError("--objective budget needs --budget BYTES")
    for k in ("slack", "evict", "device", "profile", "bandwidth"):
        v = getattr(args, k, None)
        if v is not None:
            opts[k] = v
    if getattr(args, "keep_order", False):
        opts["reorder"] = False
    from cpsched.methods import get
    if get(method).family == "remat":
        return _schedule_remat(args, g, sc, method, opts)
    for flag in ("keep_order", "bandwidth", "evict"):
        if getattr(args, flag, None):
            raise InputError(f"--{flag.replace('_', '-')} applies to --objective remat only")
    if is_solver(method) and not args.json:
        opts["progress"] = _progress_printer()
    s = run_method(method, g, sc, opts)
    if "progress" in opts and sys.stderr.isatty():
        sys.stderr.write("\n")
    if s.status == "INFEASIBLE":
        # An impossible budget is the user's input error: one line, exit 2, nothing written.
        from cpsched.core.errors import InfeasibleError
        raise InfeasibleError(s.info.get("message") or "the budget cannot be met")
    from cpsched.readers import sniff_format
    if sniff_format(args.input) == "hlo":
        from cpsched.readers.hlo.convert import read_hlo_module
        from cpsched.writers.hlo import write_hlo
        if args.async_collectives:
            raise InputError("--async-collectives changes the module; write a JSON schedule "
                             "(convert the input with `cpsched convert --async-collectives`) ")
        module = read_hlo_module(args.input)
        text = write_hlo(module, {g.name: s.order_names()})
        write_text(args.output, text, inputs=(args.input,))
    else:
        write_json(args.output, schedule_to_dict(s), inputs=(args.input,))
    tl = None
    if args.trace or s.info.get("pairs") is not None:
        tl = _timing_model(args)(g, s.order, sc)
    if args.trace:
        from cpsched.writers.trace import write_trace
        write_trace(args.trace, tl, g)
    data = schedule_to_dict(s)
    data.pop("order")
    data["output"] = args.output
    lines = [f"{method}: {s.status}, wrote {args.output}"]
    for n in sc.names:
        lines.append(f"  {n}: peak {data['peak_bytes'][n]} B, lower bound "
                     f"{data['lower_bound_bytes'][n]} B, gap {100 * data['gap'][n]:.2f}%")
    info = s.info
    if info.get("makespan"):
        unit = info.get("unit", "s")
        for n in sc.names:
            lines.append(f"  {n}: makespan {_fmt_time(info['makespan'][n], unit)}, exposed comm "
                         f"{_fmt_time(info['exposed_comm'][n], unit)} (lower bound "
                         f"{_fmt_time(info['exposed_comm_lower_bound'][n], unit)}), budget "
                         f"{info['budget'][n]} B")
        lines.append(_pair_lines(info.get("pairs") or [], sc.names[0], unit))
    lines.append(f"  time {s.seconds:.2f}s")
    if info.get("message"):
        lines.append(f"  {info['message']}")
    if args.trace:
        lines.append(f"  wrote {args.trace}")
    _emit(args, data, "\n".join(lines))
    return 0


def _pair_lines(pairs: list[dict], scenario: str, unit: str) -> str:
    """The seed's table: each async pair's start, done and distance before and after."""
    if not pairs:
        return "  (no async pairs)"
    out = [f"  async pairs ({scenario}): start done distance overlapped, before -> after"]
    for r in pairs:
        before = (f"{r.get('start_index_before', '-')} {r.get('done_index_before', '-')} "
                  f"{r.get('distance_before', '-')} "
                  f"{_fmt_time(r['overlapped_before'][scenario], unit) if 'overlapped_before' in r else '-'}")
        after = (f"{r['start_index']} {r['done_index']} {r['distance']} "
                 f"{_fmt_time(r['overlapped_after'][scenario], unit)}")
        out.append(f"    {r['start']:<28} {before:>26}  ->  {after}")
    return "\n".join(out)


def _schedule_remat(args, g: Graph, sc: Scenarios, method: str, opts: dict) -> int:
    """Remat / offload plans. JSON input: the plan JSON to ``-o``. HLO input: the module with
    plan written in (clones, host copy-start/copy-done pairs) to ``-o`` (and, with several
    buckets, one module per bucket beside it), read back and checked before anything is
    written, and the plan JSON to OUT.plan.json."""
    from cpsched.methods import get
    from cpsched.readers import sniff_format
    from cpsched.remat.plan import remat_result_to_dict
    from cpsched.writers import write_json
    if "budget" not in opts:
        raise InputError("--objective remat needs --budget BYTES (one number or one per scenario)")
    hlo = sniff_format(args.input) == "hlo"
    if hlo and getattr(args, "async_collectives", False):
        raise InputError("--async-collectives changes the module; write a JSON plan (convert "
                         "the input with `cpsched convert --async-collectives`)")
    opts.pop("slack", None)
    if opts.get("profile") is None:
        opts.pop("profile", None)
    res = get(method).fn(g, sc, **opts)
    data = remat_result_to_dict(res)
    written = [args.output]
    hlo_lines: list[str] = []
    if hlo:
        written, hlo_lines = _write_remat_hlo(args, g, sc, method, res, data)
    else:
        write_json(args.output, data, inputs=(args.input,))
    lines = [f"{method}: {res.status}, wrote {', '.join(written)}"] + hlo_lines
    for s, n in enumerate(sc.names):
        # float noise of timeline differences (1e-20 of a step) prints as 0
        tiny = 1e-9 * max(1.0, abs(float(res.time.base[s])))
        rec, exp = (float(x[s]) if abs(float(x[s])) > tiny else 0.0
                    for x in (res.time.recompute, res.time.exposed_transfer))
        lines.append(f"  {n}: peak {int(res.peak[s])} B <= budget {int(res.budget[s])} B, added time "
                     f"{float(res.added_time_pct[s]):.2f}% (recompute "
                     f"{rec:.4g}, exposed transfer "
                     f"{exp:.4g}), active candidates "
                     f"{len(res.active[s])}")
    if data.get("breakpoints"):
        lines.append(f"  breakpoints: {data['breakpoints']}")
    bound = res.info.get("added_time_lower_bound_pct")
    if bound is not None:
        lines.append("  no plan on this order adds less than: " + ", ".join(
            f"{n} {b:.2f}%" for n, b in zip(sc.names, bound)))
    lines.append(f"  time {res.seconds:.2f}s")
    if res.info.get("message"):
        lines.append(f"  {res.info['message']}")
    out = dict(data)
    out.pop("steps", None)
    out["output"] = args.output
    if hlo:
        out["plan"] = written[-1]
        if len(written) > 2:
            out["bucket_modules"] = written[1:-1]
    _emit(args, out, "\n".join(lines))
    return 0


def _bucket_path(output: str, name: str) -> str:
    """``out.hlo`` + bucket ``s<=512`` -> ``out.s_512.hlo`` (the name made file-safe)."""
    stem, ext = os.path.splitext(output)
    return f"{stem}.{re.sub(r'[^A-Za-z0-9_.-]+', '_', name).strip('_') or 'bucket'}{ext}"


def _write_remat_hlo(args, g: Graph, sc: Scenarios, method: str, res, data: dict
                     ) -> tuple[list[str], list[str]]:
    """The HLO side of ``_schedule_remat``. One order serves every scenario but the active
    clones / copies may differ per bucket, and an HLO module has one instruction list: so
    OUT carries the plan of the last (largest) bucket, which is also checked in every other
    bucket (memory grows with the dims, so it is the safe module when the shape is not
    known), and with several buckets each bucket's own module goes to OUT.<bucket>.hlo.
    Every module is read back, validated and re-simulated before anything is written."""
    from cpsched.analysis.memory import simulate
    from cpsched.readers.hlo.convert import read_hlo_module
    from cpsched.writers import write_json, write_text
    from cpsched.writers.hlo import remat_module_text, verify_remat_module
    module = read_hlo_module(args.input)
    plan_path = args.output + ".plan.json"
    last = len(sc) - 1
    paths = {s: (args.output if s == last else _bucket_path(args.output, sc.names[s]))
             for s in range(len(sc))}
    if len(set(paths.values()) | {plan_path}) != len(sc) + 1:
        raise InputError("two buckets map to one file name; rename the scenarios", path=args.output)
    for path in list(paths.values()) + [plan_path]:
        if os.path.exists(path) and os.path.exists(args.input) and \
                os.path.samefile(path, args.input):
            raise InputError(f"refusing to overwrite the input file {args.input}", path=path)
    texts, info = {}, {}
    for s in sorted(paths, key=lambda k: k != last):
        name, budget = sc.names[s], int(res.budget[s])
        comment = (f"cpsched {method}: remat plan of bucket {name} ({s + 1} of {len(sc)}), "
                   f"budget {budget} B; every bucket's plan: {os.path.basename(plan_path)}"
                   ) if len(sc) > 1 else None
        w = remat_module_text(module, g, res.events[s], comment=comment)
        starts = [start for _, start, _ in w.evictions]
        # the house rule: what leaves the program is read back, validated and re-simulated
        back, peak = verify_remat_module(w.text, w.computation, sc.only(s), budget, starts,
                                         plan_peak=int(res.peak[s]))
        texts[s] = w.text
        info[sc.names[s]] = {"output": paths[s], "computation": w.computation,
                             "scenario": name, "peak_bytes": peak, "budget_bytes": budget,
                             "clones": dict(w.clones),
                             "evictions": [list(e) for e in w.evictions],
                             "prefetches": [list(p) for p in w.prefetches]}
        if s == last and len(sc) > 1:
            # the module read back, simulated in every bucket
            peaks = simulate(back, back.original_order, sc).peak
            info[name]["fits_buckets"] = [name] + [sc.names[o] for o in range(last)
                                                   if peaks[o] <= res.budget[o]]
    top = info[sc.names[last]]
    data["hlo_module"] = dict(top, **({"per_bucket": info} if len(sc) > 1 else {}))
    for s in sorted(paths):
        write_text(paths[s], texts[s], inputs=(args.input,))
    write_json(plan_path, data, inputs=(args.input,))
    lines = []
    for s in sorted(paths, key=lambda k: k != last):
        d = info[sc.names[s]]
        lines.append(f"  HLO {d['output']}: plan of {d['scenario']} in {d['computation']}: "
                     f"{len(d['clones'])} clone(s), {len(d['evictions'])} eviction(s), "
                     f"{len(d['prefetches'])} prefetch(es); read back: peak {d['peak_bytes']} B "
                     f"<= budget {d['budget_bytes']} B")
    if len(sc) > 1:
        lines.insert(1, f"    (also within budget in: {', '.join(top['fits_buckets'])})")
    return [paths[last]] + [paths[s] for s in range(last)] + [plan_path], lines


# -- compare --------------------------------------------------------------------------------

def cmd_compare(args) -> int:
    from cpsched.analysis.memory import lower_bound
    from cpsched.methods import load_all
    g = _read(args.input, args)
    sc = _scenarios(args, g)
    lb = lower_bound(g, sc)
    methods = load_all()
    rows: list[dict[str, Any]] = []
    schedules = {}
    timelines = {}
    names = []
    if g.original_order is not None:
        names.append("given")
    # Order methods only: remat plans need a budget and answer a different question.
    order_methods = [m for m in methods.values() if m.family in ("memory", "overlap", "solver")
                     and m.applies(g)]
    names += [m.name for m in order_methods if not is_solver(m.name)]
    if not args.no_solver:
        names += [m.name for m in order_methods if is_solver(m.name)]
    timing = _timing_model(args)
    for name in names:
        if name == "given":
            from cpsched.analysis.schedule import make_schedule
            s = make_schedule(g, g.original_order, "given", sc, lower_bound=lb)
        else:
            opts = {"time_limit": args.time_limit, "workers": args.workers, "seed": args.seed,
                    "device": args.device, "profile": args.profile}
            try:
                s = run_method(name, g, sc, {k: v for k, v in opts.items() if v is not None})
            except CpschedError as e:
                rows.append({"method": name, "error": str(e)})
                continue
        name = ROW_NAMES.get(name, name)
        schedules[name] = s
        row: dict[str, Any] = {"method": name, "status": s.status,
                               "peak_bytes": s.peak_by_name(), "seconds": round(s.seconds, 3)}
        tl = timing(g, s.order, sc)
        row["makespan"] = {n: float(v) for n, v in zip(sc.names, tl.makespan)}
        row["exposed_comm"] = {n: float(v) for n, v in zip(sc.names, tl.exposed_comm)}
        timelines[name] = tl
        rows.append(row)
    unit = next(iter(timelines.values())).unit if timelines else "s"
    data = {"input": args.input, "ops": g.n_ops, "scenarios": list(sc.names), "time_unit": unit,
            "lower_bound_bytes": _by_name(sc, lb), "rows": rows}
    if args.csv:
        print(_compare_csv(data, sc), end="")
    elif args.json:
        print(json.dumps(data, indent=1))
    else:
        print(_compare_table(g, data, sc))
    if args.plot:
        from cpsched.analysis.memory import simulate
        from cpsched.plot import plot_memory
        best = min(timelines, key=lambda n: timelines[n].expected_makespan) if timelines else None
        plot_memory({n: simulate(g, s.order, sc) for n, s in schedules.items()}, args.plot,
                    title=g.name, inputs=(args.input,),
                    timelines={best: timelines[best]} if best else None)
        if not (args.json or args.csv):
            print(f"wrote {args.plot}")
    return 0


# The min-peak solver is registered as ``cp``; in tables it sits beside ``cp-overlap``.
ROW_NAMES = {"cp": "cp-memory"}


def is_solver(name: str) -> bool:
    return name == "cp" or name.startswith("cp-")


def _timing_model(args):
    """Makespan / exposed communication of an order from the cost model and timeline."""
    from cpsched.cost.model import estimate, load_device, load_profile
    from cpsched.cost.timeline import simulate_timeline
    device = load_device(args.device)
    profile = load_profile(args.profile) if getattr(args, "profile", None) else None
    cache = {}

    def timing(g, order, sc):
        if g not in cache:
            cache[g] = estimate(g, device, sc, profile)
        return simulate_timeline(g, order, cache[g], sc)
    return timing


def _compare_table(g: Graph, data: dict, sc: Scenarios) -> str:
    out = io.StringIO()
    lbs = data["lower_bound_bytes"]
    out.write(f"{g.name}: {g.n_ops} ops; lower bound " +
              ", ".join(f"{n} {_fmt_bytes(v)}" for n, v in lbs.items()) + "\n")
    header = ["method", "status"] + [f"peak {n}" if len(sc) > 1 else "peak" for n in sc.names] \
        + ["vs bound", "makespan", "exposed comm", "seconds"]
    table = []
    for r in data["rows"]:
        if "error" in r:
            table.append([r["method"], "ERROR", r["error"]])
            continue
        worst = max((r["peak_bytes"][n] - lbs[n]) / lbs[n] if lbs[n] else 0.0 for n in sc.names)
        cells = [r["method"], r["status"]] + [_fmt_bytes(r["peak_bytes"][n]) for n in sc.names]
        cells.append(f"+{100 * worst:.1f}%")
        if "makespan" in r:
            unit = data.get("time_unit", "s")
            cells.append(_fmt_time(max(r["makespan"].values()), unit))
            cells.append(_fmt_time(max(r["exposed_comm"].values()), unit))
        else:
            cells += ["-", "-"]
        cells.append(f"{r['seconds']:.2f}")
        table.append(cells)
    widths = [max(len(str(row[i])) for row in [header] + [t for t in table if len(t) > i])
              for i in range(len(header))]
    out.write("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip() + "\n")
    for row in table:
        out.write("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() + "\n")
    return out.getvalue().rstrip()


def _fmt_time(seconds: float, unit: str = "s") -> str:
    if unit != "s":
        return f"{seconds:,.0f} {'units' if unit == 'file' else unit}"
    if seconds >= 1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.1f} us"


def _compare_csv(data: dict, sc: Scenarios) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["method", "status", "scenario", "peak_bytes", "lower_bound_bytes", "makespan",
                "exposed_comm", "seconds"])
    for r in data["rows"]:
        if "error" in r:
            continue
        for n in sc.names:
            w.writerow([r["method"], r["status"], n, r["peak_bytes"][n], data["lower_bound_bytes"][n],
                        r.get("makespan", {}).get(n, ""), r.get("exposed_comm", {}).get(n, ""),
                        r["seconds"]])
    return buf.getvalue()


# -- entry point ----------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="cpsched", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)

    q = sub.add_parser("info", help="ops, buffers, collectives, dims, peak and lower bound")
    _add_input(q)
    q.add_argument("more", nargs="*", metavar="INPUT",
                   help="more compiled modules of the same program at other sizes: fit one "
                        "symbolic graph to all (sizes from names such as a.s128.hlo, or --dim)")
    q.set_defaults(fn=cmd_info)

    q = sub.add_parser("simulate", help="peak memory of an order and where it happens")
    _add_input(q)
    q.add_argument("--schedule", metavar="FILE", help="schedule JSON, scheduled HLO, or op names")
    q.add_argument("--plot", metavar="PNG", help="draw memory over time (needs matplotlib)")
    q.set_defaults(fn=cmd_simulate)

    q = sub.add_parser("convert", help="write any input as cpsched graph JSON")
    _add_input(q)
    q.add_argument("-o", "--output", required=True)
    q.set_defaults(fn=cmd_convert)

    from cpsched.capture import add_parser as add_capture_parser
    add_capture_parser(sub)

    q = sub.add_parser("methods", help="list scheduling methods")
    q.add_argument("--json", action="store_true")
    q.set_defaults(fn=cmd_methods)

    for name, fn, helptext in (("schedule", cmd_schedule, "run one method, validate, write"),
                               ("compare", cmd_compare, "run every method side by side")):
        q = sub.add_parser(name, help=helptext)
        _add_input(q)
        q.add_argument("--time-limit", type=float, default=None, help="solver seconds")
        q.add_argument("--workers", type=int, default=None, help="solver threads")
        q.add_argument("--seed", type=int, default=None)
        q.add_argument("--async-collectives", action="store_true",
                       help="split synchronous collectives into start/done pairs first")
        q.add_argument("--device", default="h100",
                       help="cost-model preset (h100, a100, xla-approx) or a TOML/JSON file")
        q.add_argument("--profile", metavar="FILE",
                       help="measured op times: JSON {name: us} or XLA's PGLE text proto")
        q.set_defaults(fn=fn)
        if name == "schedule":
            q.add_argument("-o", "--output", required=True,
                           help="the schedule: HLO in -> HLO out, JSON in -> JSON. With "
                                "--objective remat on HLO: the module with the plan's clones "
                                "and host (S(5)) copy-start/copy-done pairs (the last "
                                "bucket's plan; with several buckets each bucket's module as "
                                "OUT.<bucket>.hlo too), and the plan JSON as OUT.plan.json")
            q.add_argument("--method", help="method name (see `cpsched methods`)")
            q.add_argument("--objective", choices=list(OBJECTIVES),
                           help="weighted/minimax/lexicographic/budget: min-peak order (cp); "
                                "overlap/distance: collective overlap (cp-overlap); remat: "
                                "recompute/evict to fit --budget (cp-remat)")
            q.add_argument("--slack", type=float, default=None,
                           help="overlap: memory budget = best memory-only peak x (1 + SLACK)")
            q.add_argument("--evict", action="store_true", default=None,
                           help="remat: also offload buffers to host memory")
            q.add_argument("--bandwidth", type=float, default=None, metavar="BYTES",
                           help="remat --evict: host link in bytes per op-time unit (default: "
                                "the --device's PCIe; needed when op times are the file's own)")
            q.add_argument("--keep-order", action="store_true", default=None,
                           help="remat: keep the input's order as the main order and only "
                                "add clones/copies (the Checkmate/Moccasin setting); the plan "
                                "is then reported with a lower bound on its added time")
            q.add_argument("--trace", metavar="JSON", help="Chrome/Perfetto trace of the timeline")
            q.add_argument("--budget", help="bytes, one number or one per scenario")
            q.add_argument("--deterministic", action="store_true", default=None)
            q.add_argument("--log", action="store_true", default=None, help="show CP-SAT's log")
        else:
            q.add_argument("--csv", action="store_true")
            q.add_argument("--plot", metavar="PNG")
            q.add_argument("--no-solver", action="store_true", help="heuristics only")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "command", None) == "compare" and args.time_limit is None:
        args.time_limit = 10.0
    try:
        return args.fn(args)
    except CpschedError as e:
        print(f"cpsched: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("cpsched: interrupted", file=sys.stderr)
        return 130
    except RecursionError:
        print(f"cpsched: error: {getattr(args, 'input', '')}: input nests too deeply", file=sys.stderr)
        return EXIT_USAGE
    except Exception as e:  # a bug in cpsched: one line, details with CPSCHED_DEBUG=1
        if os.environ.get("CPSCHED_DEBUG"):
            raise
        print(f"cpsched: internal error: {type(e).__name__}: {e} (set CPSCHED_DEBUG=1 for details)",
              file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
