"""cpsched's orders of XLA:GPU's own modules, checked by XLA:GPU: results_gpu.md.

Three steps, the first and last on a machine with an NVIDIA GPU and jax's CUDA plugin:

    python models/jax/capture_gpu.py                          # GPU: models/hlo/gpu/
    python benchmarks/bench_gpu.py schedule --out DIR         # any machine: cpsched's orders
    python tests/xla/xla_gpu_keeps.py models/hlo/gpu/*.hlo.gz DIR/*.hlo > DIR/keeps.jsonl  # GPU
    python benchmarks/bench_gpu.py table DIR                  # any machine: the table

``schedule`` runs ``cpsched schedule`` with its defaults (method cp, 10 s) on every module,
and, for modules with async pairs, ``--objective overlap --budget B`` too, B being XLA's own
order's peak (equal memory), writing ``NAME.cp.hlo`` / ``NAME.overlap.hlo`` and their JSON reports; it also
records XLA's order's figures (``cpsched compare --no-solver``). ``table`` joins those with
what XLA:GPU said when it compiled each module (``kept``: the order survived, and its buffer
assignment's temp bytes) and prints the markdown table.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPU = os.path.join(REPO, "models", "hlo", "gpu")


def _cpsched(*args: str) -> tuple[int, str]:
    p = subprocess.run([sys.executable, "-m", "cpsched", *args], capture_output=True, text=True)
    return p.returncode, p.stdout


def schedule(out: str, time_limit: float, only: list[str]) -> None:
    os.makedirs(out, exist_ok=True)
    manifest = json.load(open(os.path.join(GPU, "manifest.json")))
    for name, info in sorted(manifest["programs"].items()):
        if only and name not in only:
            continue
        src = os.path.join(GPU, f"{name}.hlo.gz")
        rc, text = _cpsched("compare", src, "--no-solver", "--json")
        given = next(r for r in json.loads(text)["rows"] if r["method"] == "given") if rc == 0 \
            else {}
        runs = [("cp", [])]
        if info.get("async_starts") and given:
            # at XLA's own memory: the comparison is at equal peak
            runs.append(("overlap", ["--objective", "overlap", "--budget",
                                     str(given["peak_bytes"]["static"])]))
        report = {"given": given, "devices": info["devices"]}
        for label, extra in runs:
            dst = os.path.join(out, f"{name}.{label}.hlo")
            rc, text = _cpsched("schedule", src, "-o", dst, "--time-limit", str(time_limit),
                                "--json", *extra)
            report[label] = json.loads(text) if rc == 0 else {"error": f"exit {rc}"}
            print(f"{name} {label}: exit {rc}", file=sys.stderr)
        with open(os.path.join(out, f"{name}.json"), "w") as f:
            json.dump(report, f)


def _mib(b) -> str:
    return f"{b / 2**20:.2f}" if b is not None else "-"


def table(out: str) -> str:
    keeps: dict[str, dict] = {}
    for path in sorted(glob.glob(os.path.join(out, "*.jsonl"))):  # later runs win
        for line in open(path):
            row = json.loads(line)
            if "file" in row:
                keeps[row["file"]] = row
    lines = [
        "| program | devices | XLA:GPU order: peak (cpsched) MiB | XLA temp MiB | cp order: peak "
        "MiB | XLA temp MiB | temp change | kept | exposed comm us: XLA order / cp-overlap | "
        "kept |",
        "|---|---|---|---|---|---|---|---|---|---|"]
    for rep_path in sorted(glob.glob(os.path.join(out, "*.json"))):
        name = os.path.basename(rep_path)[:-5]
        rep = json.load(open(rep_path))
        xla = keeps.get(f"{name}.hlo.gz", {})
        cp_k = keeps.get(f"{name}.cp.hlo", {})
        cp = rep.get("cp", {})
        peak_x = rep["given"].get("peak_bytes", {}).get("static")
        peak_c = cp.get("peak_bytes", {}).get("static")
        tx, tc = xla.get("temp_bytes"), cp_k.get("temp_bytes")
        change = f"{(tc - tx) / tx * 100:+.1f} %" if tx and tc is not None else "-"
        ov = rep.get("overlap")
        ov_k = keeps.get(f"{name}.overlap.hlo", {})
        if ov and "exposed_comm" in ov:
            ex = (f"{rep['given']['exposed_comm']['static'] * 1e6:.1f} / "
                  f"{ov['exposed_comm']['static'] * 1e6:.1f}")
            ov_kept = "yes" if ov_k.get("kept") else ("no" if ov_k else "-")
        else:
            ex, ov_kept = "-", "-"
        kept = "yes" if cp_k.get("kept") else ("no" if cp_k else "-")
        if xla and not xla.get("kept"):
            kept += " (XLA's own: no)"
        lines.append(f"| {name} | {rep['devices']} | {_mib(peak_x)} | {_mib(tx)} | "
                     f"{_mib(peak_c)} | {_mib(tc)} | {change} | {kept} | {ex} | {ov_kept} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("schedule")
    s.add_argument("--out", required=True)
    s.add_argument("--time-limit", type=float, default=10.0)
    s.add_argument("--only", default="", help="comma-separated program names")
    t = sub.add_parser("table")
    t.add_argument("out")
    a = ap.parse_args(argv)
    if a.cmd == "schedule":
        schedule(a.out, a.time_limit, [n for n in a.only.split(",") if n])
    else:
        print(table(a.out))


if __name__ == "__main__":
    main()
