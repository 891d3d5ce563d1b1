"""Fit the ``cpu`` device preset to this machine: XLA:CPU's per-op times of the corpus programs.

    CPSCHED_JAX_PYTHON=PY python benchmarks/fit_cpu_preset.py   # writes cpsched/cost/devices/cpu.json

Every corpus program (``cpu_programs.sources()``: the bundled dumps and models/hlo/corpus,
XLA:CPU's default-scheduler variant) is compiled by XLA:CPU, timed (``--repeat`` steps,
median) and profiled (``--profile-runs`` steps; an op's time is its median over them). Two
fits (``cpsched.measure.fit``):

1. the roofline: fp32 and bf16 peak FLOP/s, memory bandwidth and a per-op floor, on every
   profiled op of XLA's final modules (cpsched's flops and bytes of each op beside its
   measured time, weighted by its share of the time);
2. the steps: a factor on the roofline's op times, a launch overhead per op (a loop's body
   ops count every iteration) and a step overhead, on the single-device programs' median
   step times (what the runtime spends around and between the ops, which the per-op events
   do not hold, and what other work on the cores takes in proportion to the ops').

The preset file names its source (the command, the date, jax, the machine, the programs and
ops it came from, and its fit errors) for each fitted figure. ``cpsched`` uses it by default
for modules XLA:CPU optimized. Fit on a quiet machine: other work on the cores slows every
op down, and the preset with it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cpu_programs  # noqa: E402

from cpsched.measure.fit import preset  # noqa: E402

DEFAULT_OUT = cpu_programs.REPO / "cpsched" / "cost" / "devices" / "cpu.json"


def preset_from_rows(rows: list[dict], env: dict, command: str) -> dict:
    dev, rf, sf = cpu_programs.fit_device(rows)
    ok = [r for r in rows if "error" not in r]
    where = (
        f"`{command}` on {env['machine']}, jax {env['jax']} (XLA:CPU), {env['date']}, "
        f"1-minute load {env.get('load_1min', '?'):.1f} at the start"
    )
    roof = (
        f"fitted: {where}; roofline on {rf.samples} profiled ops of {rf.programs} "
        f"programs' final modules (median |log(model/measured)| per op "
        f"{rf.median_abs_log_ratio:.2f}; per-op floor {rf.launch_overhead * 1e6:.2g} us)"
    )
    if hasattr(sf, "scale"):  # a factor on the roofline, launch and step overheads
        scaled = (
            f"; then times {sf.scale:.3g}, the factor on the roofline's op times that, with "
            f"a launch and a step overhead, fits the median step times of {sf.programs} "
            f"single-device programs best (median |log(model/measured)| per step "
            f"{sf.median_abs_log_ratio:.2f})"
        )
        sources = {k: roof + scaled for k in ("fp32_tflops", "bf16_tflops", "hbm_gbps")}
        steps = (
            f"fitted: {where}; with the factor on the roofline, on the median step times "
            f"of {sf.programs} single-device programs (median |log(model/measured)| per "
            f"step {sf.median_abs_log_ratio:.2f})"
        )
        sources.update({"launch_overhead_us": steps, "step_overhead_us": steps})
    else:
        steps = (
            f"fitted: {where}; on the median step times of {sf.programs} single-device "
            f"programs with the roofline held (median |log(model/measured)| per step "
            f"{sf.median_abs_log_ratio:.2f})"
        )
        sources = {k: roof for k in ("fp32_tflops", "bf16_tflops", "hbm_gbps")}
        sources.update({"launch_overhead_us": steps, "step_overhead_us": steps})
    sources.update(cpu_programs.BASE_SOURCES)
    figures = {k: v for k, v in dev.items() if k not in ("name", "default_dtype")}
    out = preset(
        {},
        figures,
        "cpu",
        f"XLA:CPU on {env['machine']}, fitted to measured per-op and step times "
        f"({len(ok)} programs; refit with benchmarks/fit_cpu_preset.py)",
        sources,
    )
    out["default_dtype"] = "fp32"
    out["sources"]["default_dtype"] = "XLA:CPU computes in f32 unless the program says bf16"
    return out


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated program names (default: all)")
    ap.add_argument("--repeat", type=int, default=10, help="timed steps per program (default: 10)")
    ap.add_argument(
        "--profile-runs", type=int, default=5, help="profiled steps per program (default: 5)"
    )
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="preset file (default: %(default)s)")
    ap.add_argument(
        "--raw",
        help="keep the measurements in this gzip JSON file (with --from-raw: read them)",
    )
    ap.add_argument(
        "--from-raw",
        action="store_true",
        help="measure nothing: fit to --raw's file (bench_measured.py --raw writes one too)",
    )
    a = ap.parse_args(argv)
    only = {n for n in a.only.split(",") if n}
    if a.from_raw and a.raw:
        rows, env = cpu_programs.load_raw(a.raw)
        command = env.get("command") or "python benchmarks/bench_measured.py"
        command = f"{command}, refitted by python benchmarks/fit_cpu_preset.py --from-raw"
    else:
        rows, env = cpu_programs.measure_all(
            only, a.repeat, a.profile_runs, log=lambda m: print(m, flush=True)
        )
        if a.raw:
            cpu_programs.save_raw(a.raw, rows, env)
        command = " ".join(
            [
                "python benchmarks/fit_cpu_preset.py",
                *cpu_programs.shown_args(argv, ("--out", "--raw")),
            ]
        )
    data = preset_from_rows(rows, env, command)
    Path(a.out).write_text(json.dumps(data, indent=2) + "\n")
    print(
        f"wrote {a.out}: "
        + ", ".join(
            f"{k} {data[k]}"
            for k in (
                "fp32_tflops",
                "bf16_tflops",
                "hbm_gbps",
                "launch_overhead_us",
                "step_overhead_us",
            )
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
