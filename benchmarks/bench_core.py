"""Reader and simulator throughput (ops/s) on the largest inputs at hand.

    python benchmarks/bench_core.py [--repeat 5] [--out benchmarks/results_core.md]

Reports medians over --repeat runs. Inputs: the largest real HLO module among the peer
cases and models/hlo (when the HLO reader is present), the largest Moccasin graph, and a
synthetic 100,000-op graph with 8 symbolic scenarios (the simulator's speed target).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
sys.path.insert(0, str(REPO))

from cpsched.core.graph import GraphBuilder  # noqa: E402
from cpsched.analysis.memory import lower_bound, simulate  # noqa: E402
from cpsched.readers import read_graph  # noqa: E402
from cpsched.core.scenarios import from_dim_specs, static  # noqa: E402


def synthetic(n: int, seed: int = 0):
    """A layered random DAG with symbolic sizes drawn from a few shape classes."""
    rng = np.random.default_rng(seed)
    shapes = [f"{k}*b*s*64 + {k * 128}" for k in range(1, 33)]
    b = GraphBuilder(f"synthetic{n}")
    bufs = []
    for k in range(n):
        preds = sorted({k - 1 - int(x) for x in rng.integers(0, min(k, 64), size=min(k, 2))}) if k else []
        i = b.add_op(f"v{k}", "op", operands=preds)
        for j in preds:
            b.add_buffer_user(bufs[j], i)
        bufs.append(b.add_buffer(i, shapes[int(rng.integers(0, len(shapes)))]))
    b.set_live_out(bufs[-1])
    return b.build()


def synthetic_hlo(n: int) -> str:
    """HLO text of ``n`` instructions: a residual chain of fusions over f32[256,1024]."""
    lines = ["HloModule synthetic, is_scheduled=true", "",
             "ENTRY main {", "  p0 = f32[256,1024]{1,0} parameter(0)"]
    prev, skip = "p0", "p0"
    for k in range(1, n - 1):
        name = f"add.{k}"
        lines.append(f"  {name} = f32[256,1024]{{1,0}} add(f32[256,1024]{{1,0}} {prev}, "
                     f"f32[256,1024]{{1,0}} {skip}), metadata={{op_name=\"step{k}\"}}")
        if k % 8 == 0:
            skip = name
        prev = name
    lines.append(f"  ROOT out = f32[256,1024]{{1,0}} negate({prev})")
    lines.append("}")
    return "\n".join(lines) + "\n"


def median_time(fn, repeat):
    times = []
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results_core.md"))
    args = ap.parse_args()
    rows = []
    inputs = []
    hlo = sorted(list((SHARED / "peer-cases" / "xla-models").glob("*.hlo")) +
                 list((REPO / "models" / "hlo").glob("*.hlo")), key=lambda p: p.stat().st_size)
    if hlo:
        inputs.append(hlo[-1])
    mocc = SHARED / "peer-cases" / "moccasin" / "random_layered_n1000_w0.31_nlv0.75_ed0.2_scd0.14.json"
    if mocc.exists():
        inputs.append(mocc)
    big = REPO / "benchmarks" / ".synthetic_50k.hlo"
    big.write_text(synthetic_hlo(50_000))
    inputs.append(big)
    for path in inputs:
        try:
            t_read, g = median_time(lambda: read_graph(str(path)), args.repeat)
        except Exception as e:  # reader missing for this format
            print(f"skip {path.name}: {e}")
            continue
        order = g.default_order()
        t_sim, _ = median_time(lambda: simulate(g, order, static()), args.repeat)
        n_instr = g.n_ops
        if path.suffix == ".hlo":
            from cpsched.readers.hlo.convert import read_hlo_module
            n_instr = sum(len(c.instructions) for c in read_hlo_module(str(path)).computations)
        name = "synthetic HLO, 50k instructions" if path == big else path.name
        rows.append((name, n_instr, 1, t_read, n_instr / t_read, t_sim, g.n_ops / t_sim))
    big.unlink()
    g = synthetic(100_000)
    sc = from_dim_specs(["b=1,8", "s=128,512,1024,2048"])
    order = g.topological_order()
    g_cold = synthetic(100_000)  # a fresh graph: size evaluation not cached yet
    t_cold = time.perf_counter()
    simulate(g_cold, order, sc)
    t_cold = time.perf_counter() - t_cold
    t_sim, _ = median_time(lambda: simulate(g, order, sc), args.repeat)
    t_lb, _ = median_time(lambda: lower_bound(g, sc), args.repeat)
    rows.append(("synthetic 100k ops, 8 scenarios (simulate)", g.n_ops, len(sc), float("nan"),
                 float("nan"), t_sim, g.n_ops / t_sim))
    lines = ["# Core throughput", "",
             f"Command: `python benchmarks/bench_core.py --repeat {args.repeat}` "
             f"(medians of {args.repeat} runs; Python {platform.python_version()}, "
             f"{platform.machine()}, 2 cores).", "",
             "| input | ops (HLO: instructions, all computations) | scenarios | read s | read ops/s | simulate s | simulate ops/s |",
             "|---|---|---|---|---|---|---|"]
    for name, n, s, tr, rr, ts, rs in rows:
        fr = "-" if tr != tr else f"{tr:.3f}"
        frr = "-" if rr != rr else f"{rr:,.0f}"
        lines.append(f"| {name} | {n:,} | {s} | {fr} | {frr} | {ts:.4f} | {rs:,.0f} |")
    lines += ["", f"Synthetic 100k-op graph, 8 scenarios: first simulation (evaluates every "
              f"symbolic size) {t_cold:.3f} s; cached {t_sim:.3f} s; lower bound "
              f"(cheap form, > 6000 ops) {t_lb:.3f} s."]
    text = "\n".join(lines) + "\n"
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
