"""One order for every shape bucket of a real JAX program read from StableHLO with symbolic dims.

    .venv/bin/python benchmarks/bench_symbolic.py [--time-limit 60] [--remat-limit 120] [--b 8]

The graph is ``models/stablehlo/transformer_train.sym.mlir`` (``jax.export`` of a 2-layer
transformer training step with symbolic ``(b, s)``, ``s <= 2048``; see
``models/jax/symbolic.py``), read by the StableHLO reader: every size is an exact polynomial
in ``b`` and ``s``. Buckets s = 128, 512, 2048 at a fixed b.

1. ``cp`` (min-peak order): one order for all buckets (objectives ``weighted`` and
   ``minimax``) against each bucket solved alone; price = shared order's peak in a bucket
   over that bucket's own best order.
2. ``cp-remat`` at a budget of 70 % of the largest bucket's program-order peak: one order and
   one candidate set for every bucket, the per-bucket plan table and the exact breakpoints
   (largest s at which each bucket's plan fits the budget).

Writes ``benchmarks/results_symbolic.md``. 2 CP-SAT workers.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from cpsched.analysis.memory import simulate  # noqa: E402
from cpsched.core.scenarios import Scenarios  # noqa: E402
from cpsched.cp.memory.solve import solve  # noqa: E402
from cpsched.readers import read_graph  # noqa: E402

MODEL = REPO / "models" / "stablehlo" / "transformer_train.sym.mlir"
S_VALUES = (128, 512, 2048)
WEIGHTS = (0.5, 0.3, 0.2)


def pct(a: float, b: float) -> str:
    return f"{100.0 * (a - b) / b:+.2f} %" if b else "n/a"


def buckets(b: int) -> Scenarios:
    lows = [1] + [v + 1 for v in S_VALUES[:-1]]
    return Scenarios(tuple(f"s<={v}" for v in S_VALUES), ("b", "s"),
                     np.array([[b, v] for v in S_VALUES]), np.array(WEIGHTS),
                     np.array([[b, lo] for lo in lows]))


def run_cp(g, sc, limit: float) -> tuple[list[str], list[str]]:
    rows = ["| bucket | weight | program order | shared order, weighted | shared order, minimax | "
            "bucket alone: best / bound (status) | price weighted / minimax |",
            "|---|---|---|---|---|---|---|"]
    given = simulate(g, g.default_order(), sc).peak
    joint = {}
    secs = {}
    for obj in ("weighted", "minimax"):
        t0 = time.perf_counter()
        joint[obj] = solve(g, sc, objective=obj, time_limit=limit, workers=2, seed=0)
        secs[obj] = time.perf_counter() - t0
    worst = {"weighted": 0.0, "minimax": 0.0}
    for k, name in enumerate(sc.names):
        a = solve(g, sc.only(k), time_limit=limit / 2, workers=2, seed=0)
        best, lb = int(a.peak_bytes[0]), int(a.lower_bound_bytes[0])
        pw, pm = int(joint["weighted"].peak_bytes[k]), int(joint["minimax"].peak_bytes[k])
        for obj, pk in (("weighted", pw), ("minimax", pm)):
            worst[obj] = max(worst[obj], 100.0 * (pk - best) / best)
        rows.append(f"| b={sc.values[k, 0]},{name} | {sc.weights[k]:.2f} | {int(given[k]):,} | "
                    f"{pw:,} | {pm:,} | {best:,} / {lb:,} ({a.status}) | "
                    f"{pct(pw, best)} / {pct(pm, best)} |")
        print(rows[-1], flush=True)
    notes = [f"- worst bucket: {worst['weighted']:+.2f} % (weighted), {worst['minimax']:+.2f} % "
             f"(minimax); joint status {joint['weighted'].status} / {joint['minimax'].status} in "
             f"{secs['weighted']:.0f} / {secs['minimax']:.0f} s"]
    return rows, notes


def run_remat(g, sc, limit: float) -> tuple[list[str], list[str]]:
    from cpsched.cp.remat.model import solve_remat
    peaks = simulate(g, g.default_order(), sc).peak
    budget = int(0.7 * peaks[-1])
    t0 = time.perf_counter()
    res = solve_remat(g, sc, budget, time_limit=limit, workers=2)
    dt = time.perf_counter() - t0
    rows = ["| bucket | program-order peak | plan peak | fits | added time | active clones/copies "
            "| bucket alone: added time |", "|---|---|---|---|---|---|---|"]
    for s, name in enumerate(sc.names):
        alone = solve_remat(g, sc.only(s), budget, time_limit=limit / 2, workers=2)
        rows.append(f"| {name} | {int(peaks[s]):,} | {int(res.peak[s]):,} | "
                    f"{'yes' if res.peak[s] <= budget else 'NO'} | "
                    f"{float(res.added_time_pct[s]):.2f} % | {len(res.active[s])} | "
                    f"{float(alone.added_time_pct[0]):.2f} % |")
        print(rows[-1], flush=True)
    notes = [f"- budget {budget:,} B (70 % of the s<=2048 program-order peak); status "
             f"{res.status}; {len(res.skeleton.candidates)} candidates; {dt:.0f} s"]
    bp = res.info.get("breakpoints")
    if bp:
        for name, p in bp.get("plans", {}).items():
            notes.append(f"- plan of {name}: fits the budget up to s = {p['limit']}")
    else:
        notes.append("- no breakpoints reported")
    return rows, notes


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--remat-limit", type=float, default=120.0)
    ap.add_argument("--b", type=int, default=8)
    ap.add_argument("--skip-remat", action="store_true")
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results_symbolic.md"))
    args = ap.parse_args(argv)
    g = read_graph(str(MODEL))
    sc = buckets(args.b)
    cmd = "python benchmarks/bench_symbolic.py " + " ".join(argv if argv is not None
                                                            else sys.argv[1:])
    L = ["# One order for every bucket of a real program (StableHLO, symbolic dims)\n",
         f"Command: `{cmd.strip()}`  ",
         f"Machine: {platform.processor() or platform.machine()}, {time.strftime('%Y-%m-%d')}, "
         "2 CP-SAT workers\n",
         f"Graph: `{MODEL.relative_to(REPO)}` ({g.n_ops} ops, {g.n_buffers} buffers, dims "
         f"{', '.join(g.dims)}; size bounds instead of exact sizes: "
         f"{len(g.meta.get('approximations', ()))}), buckets "
         + ", ".join(sc.names) + f" at b={args.b}, weights {', '.join(map(str, WEIGHTS))}.\n",
         "## Min-peak order: one order for all buckets vs each bucket alone\n",
         f"Time limit {args.time_limit:.0f} s per joint solve, half of it per bucket alone. "
         "Peaks in bytes. Target: shared order within 2 % of each bucket alone.\n"]
    rows, notes = run_cp(g, sc, args.time_limit)
    L += rows + [""] + notes + [""]
    if not args.skip_remat:
        L += ["## Remat / offload plans per bucket (one order, one candidate set)\n",
              f"Time limit {args.remat_limit:.0f} s joint, half per bucket alone.\n"]
        rows, notes = run_remat(g, sc, args.remat_limit)
        L += rows + [""] + notes + [""]
    Path(args.out).write_text("\n".join(L))
    print("\n".join(L))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
