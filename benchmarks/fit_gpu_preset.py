"""Refit the GPU preset to measured H200 runs: ``h200-fitted`` from ``benchmarks/measured/``.

    python benchmarks/fit_gpu_preset.py      # writes cpsched/cost/devices/h200-fitted.json

Input: the JSONL of ``benchmarks/measure_gpu.py run`` (default
``benchmarks/measured/h200.no-command-buffers.jsonl.gz``: XLA:GPU without command buffers,
so that a step is its kernels and the profiler sees each one). Two fits
(``cpsched.measure.fit``), on the single-device modules that ran, XLA:GPU's own order:

1. the roofline (bf16 and fp32 peak FLOP/s, HBM bandwidth, a per-kernel floor) on the
   profiler's per-kernel times (``per_op``) of the entry computation's ops of
   ``models/hlo/gpu/NAME.hlo.gz``, cpsched's flops and bytes beside each;
2. the launch overhead per op and the step overhead per execution on the median step
   times, the roofline held: XLA:GPU launches each kernel from the host, and for these
   small modules the host's launches, not the kernels, set the step time.

Everything the fit does not set (links, latencies) is the ``h200`` datasheet preset's. The
file names the measured run and this command as the source of each fitted figure.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from cpsched.measure.fit import (  # noqa: E402
    Sample,
    fit_roofline,
    fit_steps,
    op_samples,
    preset,
    step_terms,
)
from cpsched.readers import read_graph  # noqa: E402

MEASURED = REPO / "benchmarks" / "measured" / "h200.no-command-buffers.jsonl.gz"
PLAN = REPO / "benchmarks" / "measure_gpu" / "plan.json"
DEFAULT_OUT = REPO / "cpsched" / "cost" / "devices" / "h200-fitted.json"
LABELS = ("xla", "cp", "cp-overlap")


def load_run(path: Path) -> tuple[dict, dict]:
    """The run's header and its modules by name (a later line for a module wins)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    head, modules = {}, {}
    with opener(path, "rt") as f:
        for line in f:
            rec = json.loads(line)
            if rec.get("kind") == "run":
                head = rec
            elif rec.get("kind") == "module":
                modules[rec["name"]] = rec
    return head, modules


def order_paths() -> dict[str, dict[str, Path]]:
    """Each module's orders as files of this repository: XLA's in models/hlo/gpu, cpsched's
    from the plan."""
    plan = json.loads(PLAN.read_text())
    out = {}
    for m in plan["modules"]:
        out[m["name"]] = {lb: REPO / e["path"] for lb, e in m["orders"].items() if e.get("path")}
    return out


class Programs:
    """The run's single-device modules that ran, with their graphs read once."""

    def __init__(self, measured: Path = MEASURED):
        self.head, self.modules = load_run(measured)
        self.paths = order_paths()
        self._graphs: dict[Path, object] = {}

    def graph(self, path: Path):
        if path not in self._graphs:
            self._graphs[path] = read_graph(str(path))
        return self._graphs[path]

    def ran(self) -> list[str]:
        return sorted(
            n
            for n, m in self.modules.items()
            if m.get("devices", 1) == 1 and (m.get("orders", {}).get("xla") or {}).get("executed")
        )

    def samples(self, name: str) -> list[Sample]:
        rec = self.modules[name]["orders"]["xla"]
        return op_samples(self.graph(self.paths[name]["xla"]), rec.get("per_op") or {}, name)


def fit_device(progs: Programs, exclude: str | None = None) -> tuple[dict, object, object]:
    """``h200-fitted``'s keys fitted on every single-device module but ``exclude``."""
    names = [n for n in progs.ran() if n != exclude]
    base = json.loads((REPO / "cpsched" / "cost" / "devices" / "h200.json").read_text())
    base.pop("sources", None)
    rf = fit_roofline(
        [s for n in names for s in progs.samples(n)],
        default_fp32=False,
        peak_range=(1e10, 1e16),
        bandwidth_range=(1e10, 1e13),
    )
    dev = {**base, **rf.file_keys()}
    steps = [
        step_terms(
            progs.graph(progs.paths[n]["xla"]),
            dev,
            n,
            progs.modules[n]["orders"]["xla"]["step_seconds"],
        )
        for n in names
    ]
    sf = fit_steps(steps)
    dev.update(sf.file_keys())
    return dev, rf, sf


def preset_file(progs: Programs, command: str, measured: Path) -> dict:
    dev, rf, sf = fit_device(progs)
    head = progs.head
    where = (
        f"fitted by `{command}` to {measured.relative_to(REPO)} (jax {head.get('jax')}, "
        f"{head.get('nvidia_smi') or 'NVIDIA H200'}, no command buffers, "
        f"{head.get('repeat')} timed steps per order)"
    )
    roof = (
        f"{where}: roofline on {rf.samples} profiled kernels of {rf.programs} modules "
        f"(median |log(model/measured)| per kernel {rf.median_abs_log_ratio:.2f}; "
        f"per-kernel floor {rf.launch_overhead * 1e6:.2g} us)"
    )
    steps = (
        f"{where}: on the median step times of XLA:GPU's order of {sf.programs} "
        f"single-device modules, the roofline held (median |log(model/measured)| per "
        f"step {sf.median_abs_log_ratio:.2f})"
    )
    figures = {
        k: dev[k]
        for k in (
            "bf16_tflops",
            "fp32_tflops",
            "hbm_gbps",
            "launch_overhead_us",
            "step_overhead_us",
        )
    }
    base = json.loads((REPO / "cpsched" / "cost" / "devices" / "h200.json").read_text())
    return preset(
        base,
        figures,
        "h200-fitted",
        "NVIDIA H200 SXM, the h200 preset with its compute, memory and launch "
        "figures fitted to measured XLA:GPU runs (refit with "
        "benchmarks/fit_gpu_preset.py)",
        {
            **{k: roof for k in ("bf16_tflops", "fp32_tflops", "hbm_gbps")},
            "launch_overhead_us": steps,
            "step_overhead_us": steps,
        },
    )


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--measured",
        default=str(MEASURED),
        help="measure_gpu.py run's JSONL (default: %(default)s)",
    )
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="preset file (default: %(default)s)")
    a = ap.parse_args(argv)
    measured = Path(a.measured).resolve()
    progs = Programs(measured)
    shown = [x for x in argv if x != a.out and not x.startswith("--out")]
    data = preset_file(progs, " ".join(["python benchmarks/fit_gpu_preset.py", *shown]), measured)
    Path(a.out).write_text(json.dumps(data, indent=2) + "\n")
    print(
        f"wrote {a.out}: "
        + ", ".join(
            f"{k} {data[k]}"
            for k in (
                "bf16_tflops",
                "fp32_tflops",
                "hbm_gbps",
                "launch_overhead_us",
                "step_overhead_us",
            )
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
