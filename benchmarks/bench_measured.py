"""The time model held to measured steps: predicted against measured, on XLA:CPU here and on an H200.

    CPSCHED_JAX_PYTHON=PY python benchmarks/bench_measured.py     # writes results_measured.md

**XLA:CPU (this machine).** Every corpus program (``cpu_programs.sources()``: the bundled
dumps and models/hlo/corpus, XLA:CPU's default-scheduler variant) is compiled by XLA:CPU, run
``--repeat`` timed steps (median) and ``--profile-runs`` profiled ones, one program after the
other in one run. The predicted step time is cpsched's timeline model of XLA's final module
in the order XLA ran it, with three ``cpu`` devices: the shipped preset
(``cpsched/cost/devices/cpu.json``, fitted by ``fit_cpu_preset.py`` on an earlier run), the
same fit made from this run's own measurements of every program (in-sample), and, per
program, that fit made without the program (held out: its ops and its step time are not in
the fit). A program counts as within 20 % when |predicted / measured - 1| <= 0.2.

**H200.** From the runs in ``benchmarks/measured/`` (no GPU is needed here): per module and
order (XLA:GPU's, cp's min-peak order, cp-overlap's), the measured median step time beside
the ``h200`` datasheet preset's prediction, the refitted ``h200-fitted`` preset's
(``fit_gpu_preset.py``) and the refit without the module (held out); XLA's compiled temp
size and the allocator's peak beside cpsched's ``temp_bytes`` and ``allocated_bytes``
(``cpsched simulate``); and, where cp-overlap's predicted gain over XLA's order exceeds 5 %,
whether the measured step moves the same way.

``--gpu-only`` rewrites the table from the CPU rows of the last run (``results_measured.json``).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cpu_programs  # noqa: E402
import fit_cpu_preset  # noqa: E402
import fit_gpu_preset  # noqa: E402

from cpsched import api  # noqa: E402
from cpsched.cost.model import load_device  # noqa: E402

REPO = cpu_programs.REPO
OUT = REPO / "benchmarks" / "results_measured.md"
DATA = REPO / "benchmarks" / "results_measured.json"
CPU_TARGET = 0.20
# the cpu preset's fitted figures (bf16 shares fp32's rate; op_time names the model)
FIT_KEYS = tuple(k for k in fit_cpu_preset.FIGURES if k not in ("op_time", "bf16_tflops"))
# a 1-minute load above this at the start, on 2 cores, is more than the run's own (one
# program at a time: about 1)
BUSY_LOAD = 1.5
GPU_TARGET = 0.15
MEM_TARGET = 0.02


def _err(pred, meas) -> float | None:
    return pred / meas - 1 if pred and meas else None


def _pct(x, digits: int = 0) -> str:
    return f"{100 * x:+.{digits}f} %" if x is not None else "-"


def _ms(s) -> str:
    if s is None:
        return "-"
    return f"{s * 1e3:.3f}" if s < 0.1 else f"{s * 1e3:.1f}"


def _mib(b) -> str:
    return f"{b / 2**20:.2f}" if isinstance(b, (int, float)) else "-"


# -- XLA:CPU ---------------------------------------------------------------------------------


def cpu_rows(
    only: set[str],
    repeat: int,
    profile_runs: int,
    raw: str | None = None,
    reuse: bool = False,
    command: str = "",
) -> tuple[list[dict], dict]:
    if reuse and raw:
        rows, env = cpu_programs.load_raw(raw)
    else:
        rows, env = cpu_programs.measure_all(
            only, repeat, profile_runs, log=lambda m: print(m, flush=True)
        )
        env.update(repeat=repeat, profile_runs=profile_runs, command=command)
        if raw:
            cpu_programs.save_raw(raw, rows, env)
    ok = [r for r in rows if "error" not in r]
    try:
        shipped = load_device("cpu")
    except Exception:  # no preset yet: the column says so
        shipped = None
    env["shipped"] = shipped.sources.get("fp32_tflops", "") if shipped else "no cpu preset"
    all_dev, sf = cpu_programs.fit_device(ok)
    env["fit_here"] = {k: all_dev[k] for k in FIT_KEYS}
    env["fit_errors"] = {
        "ops": sf.samples,
        "op_median_abs_log_ratio": round(sf.op_median_abs_log_ratio, 3),
        "step_median_abs_log_ratio": round(sf.step_median_abs_log_ratio, 3),
    }
    t0 = time.perf_counter()
    for r in ok:
        r["predicted_shipped"] = cpu_programs.predict_step(r, shipped) if shipped else None
        r["predicted_fit"] = cpu_programs.predict_step(r, all_dev)
        if len(ok) > 2:
            # held out: the roofline without this program's ops, the overheads without its
            # step (refitting the roofline once per program is the slow part: seconds each)
            dev, _ = cpu_programs.fit_device(ok, exclude=r["program"])
            r["predicted_held_out"] = cpu_programs.predict_step(r, dev)
    env["held_out_seconds"] = round(time.perf_counter() - t0, 1)
    env["mapped_programs"] = cpu_programs.mapped_programs(ok)
    for r in ok:
        g = r["_graph"]
        r["loops_without_trip_count"] = sum(
            1
            for i, op in enumerate(g.opcodes)
            if op == "while" and (g.op_attrs.get(i) or {}).get("trip_count") is None
        )
    for r in rows:
        for k in ("_graph", "_sum", "final_text", "samples", "step_seconds_runs"):
            r.pop(k, None)
    return rows, env


def cpu_section(rows: list[dict], env: dict, command: str) -> list[str]:
    ok = [r for r in rows if "error" not in r]
    cols = (
        (
            "predicted_shipped",
            "`cpu` preset (shipped; fitted to this same run, so in-sample)"
            if env.get("date") and env["date"] in str(env.get("shipped", ""))
            else "`cpu` preset (shipped; fitted to an earlier run)",
        ),
        ("predicted_fit", "fitted in this run, all programs (in-sample)"),
        ("predicted_held_out", "fitted in this run without the program (held out)"),
    )
    counts = []
    for key, label in cols:
        errs = [_err(r.get(key), r["step_seconds"]) for r in ok]
        errs = [e for e in errs if e is not None]
        single = [_err(r.get(key), r["step_seconds"]) for r in ok if r.get("devices", 1) == 1]
        single = [e for e in single if e is not None]
        multi = [_err(r.get(key), r["step_seconds"]) for r in ok if r.get("devices", 1) > 1]
        multi = [e for e in multi if e is not None]

        def within(es):
            return sum(abs(e) <= CPU_TARGET for e in es)

        def med(es):
            return f"{100 * statistics.median(abs(e) for e in es):.0f} %" if es else "-"

        if errs:
            counts.append(
                f"- {label}: **{within(errs)} of {len(errs)}** programs within 20 %, median "
                f"|error| {med(errs)} (single-device: {within(single)} of {len(single)}, "
                f"median {med(single)}; multi-device: {within(multi)} of {len(multi)}, "
                f"median {med(multi)})"
            )
    load = env.get("load_1min")
    load_end = env.get("load_1min_end")
    fit = env.get("fit_here", {})
    mapped = env.get("mapped_programs") or []
    fe = env.get("fit_errors", {})
    loads = (
        f"1-minute load average {load:.1f} at the start and "
        + (f"{load_end:.1f} at the end" if load_end is not None else "? at the end")
        if load is not None
        else "load average unknown"
    )
    if load is not None and load > BUSY_LOAD:
        loads += (
            f" (**above {BUSY_LOAD} at the start, more than this run's own: the machine's "
            "2 cores were shared with other work, so every step and op time here is slowed "
            "down by it, unevenly; rerun the command on a quiet machine**)"
        )
    else:
        loads += " (the run's own: one program at a time, nothing else running)"
    out = [
        "## XLA:CPU: XLA's order of every corpus program, predicted against measured",
        "",
        f"Command: `{command}`",
        "",
        f"jax {env['jax']} (XLA:CPU) on {env['machine']}, {env['date']}; {loads}. "
        f"Per program: {env['repeat']} timed steps (median; q1-q3 beside it) and "
        f"{env['profile_runs']} profiled steps, programs one after the other.",
        "",
        "Predicted: cpsched's timeline model of XLA's final module (XLA:CPU fuses and "
        "schedules the program again; its module is read back) in the order it ran, with a "
        '`cpu` device whose op time is a sum (`op_time = "sum"`): a launch cost per op (a '
        "loop's body ops count every iteration of its known trip count), the bytes the op "
        "moves over a bandwidth (an in-place update or a slice counts the part it "
        "touches), its matmul flops (dots, convolutions, XNNPACK fusions) over a matmul "
        "rate, its other flops over a vector rate, and the bytes of the buffers of 1 MiB or "
        "more it defines over a fresh-memory rate (XLA:CPU allocates them afresh every "
        "execution: first writes fault), and those of 32 MiB or more again over a "
        "mapped-memory rate (glibc maps them afresh on every allocation: every page faults "
        f"every execution; programs with such buffers: {', '.join(mapped) or 'none'}; a "
        "program held out with the only ones gets this term 0); a step overhead once per "
        "execution; and "
        "for a module of N devices (XLA:CPU runs them as N devices in one process on these "
        "cores) N times a fitted factor times one device's work. Eight fitted figures (and "
        "the 1 and 32 MiB thresholds, not fitted): the first seven on the single-device "
        "programs' profiled ops (0.2 of a step's weight per program: XLA:CPU runs independent ops at once, "
        "which inflates their events) and median steps together, "
        "the factor on the multi-device programs' steps (`benchmarks/fit_cpu_preset.py`, "
        "`cpsched.measure.fit.fit_sum`). "
        f"Figures fitted in this run: {', '.join(f'{k} {v}' for k, v in fit.items())}; "
        f"per-op error of that fit: median |log(model/measured)| "
        f"{fe.get('op_median_abs_log_ratio', '-')} over {fe.get('ops', '-')} profiled ops "
        f"of the single-device programs (a factor of "
        f"{math.exp(fe['op_median_abs_log_ratio']) if fe else float('nan'):.2f}), "
        f"{fe.get('step_median_abs_log_ratio', '-')} per single-device step. "
        f"The shipped preset's source: {env.get('shipped', '-')}.",
        "",
        "Within 20 % of the measured median:",
        "",
        *counts,
        "",
        "| program | devices | measured ms (q1-q3) | profiled ops ms | `cpu` preset ms | "
        "error | fitted here ms | error | held out ms | error |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['program']} | - | {r['error'][:80]} | | | | | | | |")
            continue
        sp = r.get("spread") or {}
        m = r["step_seconds"]
        cells = [
            f"{_ms(m)} ({_ms(sp.get('q1'))}-{_ms(sp.get('q3'))})",
            _ms(r.get("profiled_seconds")),
        ]
        for key, _ in cols:
            cells += [_ms(r.get(key)), _pct(_err(r.get(key), m))]
        out.append(f"| {r['program']} | {r.get('devices', 1)} | " + " | ".join(cells) + " |")
    out += [
        "",
        "Programs with a loop whose trip count XLA does not know (a data-dependent while: "
        "the model counts one iteration; a condition that also bounds a counter gives only "
        "an upper bound, not the count): "
        + (
            ", ".join(
                f"{r['program']} ({_pct(_err(r.get('predicted_held_out'), r['step_seconds']))} "
                "held out)"
                for r in ok
                if r.get("loops_without_trip_count")
            )
            or "none"
        )
        + ".",
        "",
        "A module for N devices runs as N XLA:CPU devices in one process on the same "
        "cores: its measured step holds all N devices' work, so its prediction is N times "
        "the colocated factor times one device's timeline (less the step overhead, counted "
        "once); their profiled ops (N devices' ops contend for the cores) are not in the "
        "fit. "
        "`profiled ops`: the sum of the profiler's per-op events of one step, all "
        "devices (a loop's own event holds its body's, so loops count twice there).",
    ]
    return out


# -- H200 ------------------------------------------------------------------------------------


def _compiled_total(mem: dict) -> int | None:
    """XLA's compiled memory stats as one figure: what the executable allocates on the
    device (arguments, outputs not aliased to them, temp)."""
    if mem.get("temp_bytes") is None:
        return None
    return (
        mem.get("argument_bytes", 0)
        + mem.get("output_bytes", 0)
        - mem.get("alias_bytes", 0)
        + mem["temp_bytes"]
    )


def _cpsched_memory(path: Path) -> dict:
    r = api.simulate(str(path))
    alloc = api.xla_allocation(r)
    out = {"max_live_bytes": int(next(iter(r.peak.values())))}
    for k in ("temp_bytes", "allocated_bytes"):
        if k in alloc:
            out[k] = int(next(iter(alloc[k].values())))
    return out


def gpu_section() -> list[str]:
    progs = fit_gpu_preset.Programs()
    head = progs.head
    shipped = load_device("h200-fitted")
    datasheet = load_device("h200")
    all_dev, rf, sf = fit_gpu_preset.fit_device(progs)
    ran = progs.ran()
    held: dict[str, dict] = {}
    for n in ran:
        held[n] = fit_gpu_preset.fit_device(progs, exclude=n)[0]
    rows = []
    for name in sorted(progs.modules):
        m = progs.modules[name]
        for label, rec in (m.get("orders") or {}).items():
            path = progs.paths.get(name, {}).get(label)
            if path is None:
                continue
            g = progs.graph(path)
            row = {
                "name": name,
                "label": label,
                "devices": m.get("devices", 1),
                "rec": rec,
                "datasheet": cpu_programs.predict(g, datasheet),
                "refit": cpu_programs.predict(g, shipped),
            }
            if name in held:
                row["held_out"] = cpu_programs.predict(g, held[name])
            row["memory"] = _cpsched_memory(path)
            rows.append(row)
    out = [
        "## H200: XLA:GPU's, cp's and cp-overlap's orders, predicted against measured",
        "",
        "Command: the same (this section reads `benchmarks/measured/` and needs no GPU). "
        f"Measured: `benchmarks/measured/h200.no-command-buffers.jsonl.gz` (jax "
        f"{head.get('jax')}, {head.get('nvidia_smi') or 'NVIDIA H200'}; XLA:GPU keeps "
        "each module's order; command buffers off, so that a step is its kernels; "
        f"{head.get('repeat')} timed steps per order, interleaved across a program's "
        "orders, median). Modules for 4 or 8 devices were compiled only (one GPU).",
        "",
        "Predicted: cpsched's timeline of each order as written, with the `h200` "
        "datasheet preset, with `h200-fitted` (the same preset refitted: roofline on "
        "the profiler's per-kernel times of XLA's order, launch and step overheads on "
        "its step times; `benchmarks/fit_gpu_preset.py`; figures "
        + ", ".join(
            f"{k} {all_dev[k]}"
            for k in ("bf16_tflops", "hbm_gbps", "launch_overhead_us", "step_overhead_us")
        )
        + "), and with that refit made without the module (held out).",
        "",
    ]
    xla_rows = [r for r in rows if r["label"] == "xla" and r["rec"].get("step_seconds")]
    for key, label in (
        ("datasheet", "`h200` datasheet preset"),
        ("refit", "`h200-fitted` (in-sample)"),
        ("held_out", "refit without the module (held out)"),
    ):
        errs = [_err(r.get(key), r["rec"]["step_seconds"]) for r in xla_rows]
        errs = [e for e in errs if e is not None]
        out.append(
            f"- XLA's order, {label}: **{sum(abs(e) <= GPU_TARGET for e in errs)} of "
            f"{len(errs)}** modules within 15 % of the measured median; median "
            f"|error| {100 * statistics.median(abs(e) for e in errs):.0f} %"
        )

    def within(pairs):
        pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
        return sum(1 for a, b in pairs if a == b or (a and abs(b / a - 1) <= MEM_TARGET)), len(
            pairs
        )

    for r in rows:
        r["compiled_total"] = _compiled_total(r["rec"].get("memory") or {})
    w_peak = within(
        (r["rec"].get("peak_bytes_in_use"), r["memory"].get("allocated_bytes"))
        for r in rows
        if r["rec"].get("peak_bytes_in_use")
    )
    w_total = within((r["compiled_total"], r["memory"].get("allocated_bytes")) for r in rows)
    w_temp = within(
        ((r["rec"].get("memory") or {}).get("temp_bytes"), r["memory"].get("temp_bytes"))
        for r in rows
    )
    out += [
        f"- Memory against the allocator, every order run: cpsched's `allocated_bytes` "
        f"within 2 % of the allocator's peak bytes in use on **{w_peak[0]} of "
        f"{w_peak[1]}** (what that peak holds: below the table).",
        f"- Memory against XLA's compiled stats, every order compiled (multi-device ones "
        f"too): cpsched's `allocated_bytes` within 2 % of XLA's argument + output - "
        f"alias + temp bytes on **{w_total[0]} of {w_total[1]}**, its `temp_bytes` within "
        f"2 % of XLA's temp bytes on **{w_temp[0]} of {w_temp[1]}**.",
        "",
        "| module | devices | order | kept | outputs | measured ms (q1-q3) | `h200` ms | "
        "`h200-fitted` ms | error | held out ms | error | XLA temp MiB | cpsched temp "
        "MiB | XLA compiled total MiB | cpsched allocated MiB | error | peak in use MiB "
        "| error |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        rec = r["rec"]
        step = rec.get("step_seconds")
        sp = rec.get("spread") or {}
        if step:
            meas = f"{_ms(step)} ({_ms(sp.get('q1'))}-{_ms(sp.get('q3'))})"
        else:
            meas = "compiled only" if rec.get("not_run") else (rec.get("error") or "-")[:40]
        outputs = (
            "equal"
            if rec.get("outputs_equal")
            else "DIFFER"
            if rec.get("outputs_equal") is False
            else "-"
        )
        peak = rec.get("peak_bytes_in_use")
        alloc = r["memory"].get("allocated_bytes")
        out.append(
            f"| {r['name']} | {r['devices']} | {r['label']} | "
            f"{'yes' if rec.get('order_kept') else 'no'} | {outputs} | {meas} | "
            f"{_ms(r['datasheet'])} | {_ms(r['refit'])} | {_pct(_err(r['refit'], step))} | "
            f"{_ms(r.get('held_out'))} | {_pct(_err(r.get('held_out'), step))} | "
            f"{_mib((rec.get('memory') or {}).get('temp_bytes'))} | "
            f"{_mib(r['memory'].get('temp_bytes'))} | {_mib(r['compiled_total'])} | "
            f"{_mib(alloc)} | {_pct(_err(alloc, r['compiled_total']), 1)} | {_mib(peak)} | "
            f"{_pct(_err(alloc, peak), 1) if peak else '-'} |"
        )
    moves = []
    by = {(r["name"], r["label"]): r for r in rows}
    for name in sorted({r["name"] for r in rows}):
        x, o = by.get((name, "xla")), by.get((name, "cp-overlap"))
        if not x or not o:
            continue
        for key, label in (("datasheet", "h200"), ("refit", "h200-fitted")):
            px, po = x[key], o[key]
            if px and po and (px - po) / px > 0.05:
                sx, so = x["rec"].get("step_seconds"), o["rec"].get("step_seconds")
                moves.append(
                    f"- {name} (`{label}`): cp-overlap predicted {100 * (px - po) / px:.1f} % "
                    "faster than XLA's order; "
                    + (
                        f"measured {100 * (sx - so) / sx:+.1f} % "
                        f"({'the same way' if so < sx else 'the other way'})"
                        if sx and so
                        else "not run (multi-device: compiled only)"
                    )
                )
    out += [
        "",
        "Where cp-overlap's predicted gain over XLA's order exceeds 5 % "
        "(positive measured: cp-overlap's step was faster):",
        "",
    ]
    out += moves or [
        "- none: with either preset, no module's cp-overlap order is predicted "
        "more than 5 % faster than XLA's"
    ]
    small = []
    for name in sorted({r["name"] for r in rows}):
        x, o = by.get((name, "xla")), by.get((name, "cp-overlap"))
        if x and o and x["rec"].get("step_seconds") and o["rec"].get("step_seconds"):
            sx, so = x["rec"]["step_seconds"], o["rec"]["step_seconds"]
            small.append(
                f"{name} {100 * (x['refit'] - o['refit']) / x['refit']:+.1f} % predicted, "
                f"{100 * (sx - so) / sx:+.1f} % measured"
            )
    if small:
        out += [
            "",
            "Every module run that has a cp-overlap order (its gain over XLA's order with "
            "`h200-fitted`; positive: cp-overlap faster): " + "; ".join(small) + ".",
        ]
    out += [
        "",
        "cpsched's `allocated_bytes` and `temp_bytes` (`cpsched simulate`): its "
        "emulation of XLA:GPU's buffer assignment for the order as written (every "
        "allocation, parameters and outputs included; the temp buffer). XLA's: "
        "`PJRT_Executable_GetCompiledMemoryStats` of the compiled order. Peak in use: "
        "the device allocator's `peak_bytes_in_use`, read after a program's orders "
        "ran. It is not a per-order figure: the orders of one program show the same "
        "peak although their compiled sizes differ (e.g. scan_noremat's XLA and cp "
        "orders, 35.5 and 33.3 MiB compiled, both 43.13 MiB peak in use); every order of "
        "a program is loaded, given its inputs and warmed up before the interleaved "
        "timed rounds, and the figure covers all of that (and the allocator's rounding "
        "of each allocation). The measured data has no per-order peak in use, so the "
        "per-order comparison is the one against the compiled stats.",
    ]
    return out


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated CPU program names (default: all)")
    ap.add_argument("--repeat", type=int, default=20, help="timed steps per program (default: 20)")
    ap.add_argument(
        "--profile-runs", type=int, default=5, help="profiled steps per program (default: 5)"
    )
    ap.add_argument(
        "--raw",
        help="also keep the measurements (steps, per-op times, XLA's final modules) in this "
        "gzip JSON file (default: none)",
    )
    ap.add_argument(
        "--from-raw",
        action="store_true",
        help="measure nothing: fit and predict from --raw's file of an earlier run",
    )
    ap.add_argument(
        "--gpu-only",
        action="store_true",
        help="measure nothing: the CPU rows of the last run (results_measured.json)",
    )
    ap.add_argument("--out", default=str(OUT), help="results table (default: %(default)s)")
    ap.add_argument(
        "--data", default=str(DATA), help="the CPU rows as JSON (written; read with --gpu-only)"
    )
    a = ap.parse_args(argv)
    shown = [
        x
        for x in cpu_programs.shown_args(argv, ("--out", "--data", "--raw"))
        if x not in ("--gpu-only", "--from-raw")
    ]
    if a.gpu_only:
        saved = json.loads(Path(a.data).read_text())
        rows, env, command = saved["rows"], saved["env"], saved["command"]
    else:
        command = " ".join(["CPSCHED_JAX_PYTHON=PY python benchmarks/bench_measured.py", *shown])
        rows, env = cpu_rows(
            {n for n in a.only.split(",") if n},
            a.repeat,
            a.profile_runs,
            a.raw,
            a.from_raw,
            command,
        )
        command = env.get("command") or command
        Path(a.data).write_text(
            json.dumps({"command": command, "env": env, "rows": rows}, indent=1) + "\n"
        )
    lines = [
        "# The time model against measured steps",
        "",
        "Each time below is a step of one program: measured (median of timed steps) or "
        "predicted by cpsched's timeline model with the device preset its column names.",
        "",
    ]
    lines += cpu_section(rows, env, command)
    lines += [""] + gpu_section()
    Path(a.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {a.out}")
    if a.raw and not a.from_raw and not a.gpu_only:
        print(
            "the cpu preset is not refitted by this command; to fit it to this run: "
            f"python benchmarks/fit_cpu_preset.py --from-raw --raw {a.raw}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
