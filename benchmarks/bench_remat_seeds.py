"""cp-remat on the RLG n1000 (Moccasin RLG4) budgets, several seeds, one run at a time.

    .venv/bin/python benchmarks/bench_remat_seeds.py [--budgets 486895,547757] [--seeds 0,1,2]
        [--time-limit 600] [--baselines-only]

The same call as ``bench_remat.py``'s long rows (``solve_remat(graph, None, budget,
time_limit=..., workers=2, seed=...)``), repeated over seeds so that medians can be reported,
with each phase's added time (the baselines, ``remat-lns``, the CP models) and timings.
``--baselines-only`` runs the remat baselines on the three orders cp-remat tries (given,
XLA's memory order, and the min-peak order found in 60 s), without time caps.
Prints one line per run and the medians; the results file is written by hand from them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CPSCHED_SHARED_DIR", REPO.parent / "shared"))
RLG1000 = (
    SHARED / "peer-cases" / "moccasin" / "random_layered_n1000_w0.31_nlv0.75_ed0.2_scd0.14.json"
)
sys.path.insert(0, str(REPO))

from cpsched.strategies.min_peak.method import solve as solve_min_peak  # noqa: E402
from cpsched.strategies.remat.method import solve_remat  # noqa: E402
from cpsched.heuristics.remat import BASELINES  # noqa: E402
from cpsched.heuristics.xla_memory import xla_default  # noqa: E402
from cpsched.readers.nx_json import read_nx_json  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--budgets", default="486895,547757")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--time-limit", type=float, default=600.0)
    ap.add_argument("--baselines-only", action="store_true")
    args = ap.parse_args(argv)
    if not RLG1000.exists():
        print("shared peer cases not found next to the checkout; nothing to do")
        return 0
    g = read_nx_json(str(RLG1000))
    budgets = [int(b) for b in args.budgets.split(",")]
    if args.baselines_only:
        orders = {"given": list(g.default_order()), "xla-default": list(xla_default(g, None))}
        orders["min-peak"] = list(solve_min_peak(g, time_limit=60, workers=2).order)
        for b in budgets:
            for key, o in orders.items():
                for name, fn in BASELINES.items():
                    if name == "remat-dtr":
                        continue
                    t0 = time.perf_counter()
                    r = fn(g, None, b, order=o, time_limit=600)
                    print(
                        f"{b} {key} {name}: {float(r.added_time_pct[0]):.3f} % {r.status} "
                        f"({time.perf_counter() - t0:.1f} s)",
                        flush=True,
                    )
        return 0
    for b in budgets:
        tdis = []
        for seed in (int(s) for s in args.seeds.split(",")):
            t0 = time.perf_counter()
            r = solve_remat(g, None, b, time_limit=args.time_limit, workers=2, seed=seed)
            tdis.append(float(r.added_time_pct[0]))
            base = r.info.get("baselines", {})
            best_base = min(
                ((v["added_time_pct"][0], k) for k, v in base.items() if v["peak_bytes"][0] <= b),
                default=(float("nan"), "none"),
            )
            print(
                f"{b} seed {seed}: {tdis[-1]:.3f} % {r.status} in "
                f"{time.perf_counter() - t0:.0f} s; best baseline {best_base[1]} "
                f"{best_base[0]:.3f} %; searches "
                + ", ".join(
                    f"{k} {v['added_time_pct'][0]:.3f} %"
                    for k, v in base.items()
                    if k.startswith(("remat-lns", "remat-segments"))
                )
                + f"; order peaks {r.info.get('order_peaks')}"
                f"; cp fixed {r.info.get('cp_fixed_status')}, joint "
                f"{r.info.get('cp_joint_status')}; timings {r.info.get('timings')}",
                flush=True,
            )
        print(
            f"{b} median {statistics.median(tdis):.3f} % over {len(tdis)} seeds "
            f"(min {min(tdis):.3f}, max {max(tdis):.3f})",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
