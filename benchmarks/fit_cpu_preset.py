"""Fit the ``cpu`` device preset to this machine: XLA:CPU's per-op times of the corpus programs.

    CPSCHED_JAX_PYTHON=PY python benchmarks/fit_cpu_preset.py   # writes cpsched/cost/devices/cpu.json

Every corpus program (``cpu_programs.sources()``: the bundled dumps and models/hlo/corpus,
XLA:CPU's default-scheduler variant) is compiled by XLA:CPU, timed (``--repeat`` steps,
median) and profiled (``--profile-runs`` steps; an op's time is its median over them). The
fit (``cpsched.measure.fit.fit_sum``): an op's time is the sum of a launch cost, its bytes
moved over a bandwidth, its matmul flops over a matmul rate and its other flops over a vector
rate (``op_time = "sum"``), plus the bytes of the large buffers it defines (1 MiB and up)
over a fresh-memory rate, and the bytes of the buffers of 32 MiB and up it defines (which
glibc maps afresh on every allocation) over a mapped-memory rate; those six and a step overhead are fitted together on the profiled
ops (weighing little: XLA:CPU runs independent ops at once, which inflates their events) and
the median steps of the single-device programs, then a factor for the modules of N devices
(XLA:CPU runs them as N devices in one process on the same cores) on the multi-device
programs' steps: eight fitted figures in all.

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

from cpsched.measure.fit import OP_WEIGHT, preset  # noqa: E402

DEFAULT_OUT = cpu_programs.REPO / "cpsched" / "cost" / "devices" / "cpu.json"


FIGURES = (
    "op_time",
    "launch_overhead_us",
    "hbm_gbps",
    "fp32_tflops",
    "bf16_tflops",
    "vector_tflops",
    "fresh_memory_gbps",
    "fresh_buffer_mib",
    "mapped_memory_gbps",
    "mapped_buffer_mib",
    "step_overhead_us",
    "colocated_devices_factor",
)
MEANING = {
    "op_time": "an op's time is the sum of its terms (a launch, the bytes it moves, its "
    "matmul flops, its other flops), so that a loop's time is its body's whatever the mix",
    "launch_overhead_us": "the fixed cost of one op (a loop's body ops count every iteration)",
    "hbm_gbps": "the bytes an op moves (reads and writes; an in-place update or a slice "
    "counts the part it touches)",
    "fp32_tflops": "a flop of a dot, convolution or matmul custom-call (XNNPACK fusions)",
    "bf16_tflops": "as fp32_tflops (one matmul rate: XLA:CPU's bf16 dots are not faster here)",
    "vector_tflops": "a flop outside matmuls (elementwise, reductions)",
    "fresh_memory_gbps": "a byte of a buffer of at least fresh_buffer_mib that an op defines, "
    "on top of its other terms: XLA:CPU allocates such buffers afresh every execution and "
    "the first write into each page faults",
    "fresh_buffer_mib": "not fitted: the threshold of fresh_memory_gbps (glibc's malloc "
    "hands out blocks from 128 KiB on by mmap and raises that threshold up to 32 MiB as "
    "blocks are freed; 0.5, 1 and 2 MiB fit the measured programs alike)",
    "mapped_memory_gbps": "a byte of a buffer of at least mapped_buffer_mib that an op "
    "defines, on top of fresh_memory_gbps: glibc's malloc maps such blocks afresh on every "
    "allocation, so every page faults every execution",
    "mapped_buffer_mib": "not fitted: glibc's adaptive mmap threshold stops at "
    "DEFAULT_MMAP_THRESHOLD_MAX, 32 MiB on 64-bit hosts (mallopt(3)); larger blocks are "
    "always mapped",
    "step_overhead_us": "once per execution of the module",
    "colocated_devices_factor": "a module for N devices runs N XLA:CPU devices in one "
    "process on the same cores: its step is N times this factor times one device's work",
}


def preset_from_rows(rows: list[dict], env: dict, command: str) -> dict:
    dev, sf = cpu_programs.fit_device(rows)
    ok = [r for r in rows if "error" not in r]
    load = env.get("load_1min")
    where = f"`{command}` on {env['machine']}, jax {env['jax']} (XLA:CPU), {env['date']}, " + (
        f"1-minute load {load:.1f} at the start" if load is not None else "load unknown"
    )
    single = sum(1 for r in ok if r.get("devices", 1) == 1)
    fitted = (
        f"fitted: {where}; with the other terms, on the {sf.samples} profiled ops (together "
        f"{OP_WEIGHT} of a step's weight per program) and the "
        f"median steps of {single} single-device programs (median |log(model/measured)| "
        f"per op {sf.op_median_abs_log_ratio:.2f}, per step "
        f"{sf.step_median_abs_log_ratio:.2f}; cpsched.measure.fit.fit_sum)"
    )
    sources = {k: f"{MEANING[k]}; {fitted}" for k in FIGURES if k != "colocated_devices_factor"}
    sources["op_time"] = MEANING["op_time"]
    sources["fresh_buffer_mib"] = MEANING["fresh_buffer_mib"]
    sources["mapped_buffer_mib"] = MEANING["mapped_buffer_mib"]
    mapped = cpu_programs.mapped_programs(ok)
    sources["mapped_memory_gbps"] = (
        f"{MEANING['mapped_memory_gbps']}; {fitted}; the programs with such buffers, the "
        f"only ones that fit it: {', '.join(mapped) or 'none (not charged)'}"
    )
    sources["colocated_devices_factor"] = (
        f"{MEANING['colocated_devices_factor']}; not fitted, 1: no multi-device programs "
        "were measured"
        if not sf.multi_programs
        else None
    ) or (
        f"{MEANING['colocated_devices_factor']}; fitted: {where}; the median over "
        f"{sf.multi_programs} multi-device programs of measured step / (N * one device's "
        "work), with the other figures held"
    )
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
    print(f"wrote {a.out}: " + ", ".join(f"{k} {data[k]}" for k in FIGURES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
