"""One order for every shape bucket of a real JAX program read from StableHLO with symbolic dims.

    .venv/bin/python benchmarks/bench_symbolic.py [--time-limit 60] [--remat-limit 120] [--b 8]

The graph is ``models/stablehlo/transformer_train.sym.mlir`` (``jax.export`` of a 2-layer
transformer training step with symbolic ``(b, s)``, ``s <= 2048``; see
``models/jax/symbolic.py``), read by the StableHLO reader: every size is an exact polynomial
in ``b`` and ``s``. Buckets s = 128, 512, 2048 at a fixed b.

1. ``cp`` (min-peak order): each bucket solved alone, then one order for all buckets (joint
   ``minimax``, ``weighted`` and twice ``weighted`` with weights 1 / each bucket's best peak,
   each hinted with the best order so far); the shared order is the candidate with the smallest
   worst price; price = its peak in a bucket over that bucket's own best order.
2. ``cp-remat`` at one budget for every bucket (``--budget-frac`` x the largest bucket's best
   order peak): one order and one candidate set, the per-bucket plan table and the exact
   breakpoints (largest s at which each bucket's plan fits the budget).

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
from cpsched.strategies.min_peak.method import solve  # noqa: E402
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
    """Each bucket alone first (half the limit each), then one order for all buckets:
    the joint ``minimax`` and ``weighted`` solves, each hinted with the alone order that is
    best in every bucket; the shared order kept is the one with the smallest worst price."""
    given = simulate(g, g.default_order(), sc).peak
    alone, t_alone = [], []
    for k in range(len(sc)):
        t0 = time.perf_counter()
        alone.append(solve(g, sc.only(k), time_limit=limit / 2, workers=2, seed=0))
        t_alone.append(time.perf_counter() - t0)
    best = np.array([int(a.peak_bytes[0]) for a in alone])

    def worst(order) -> tuple[float, np.ndarray]:
        pk = simulate(g, list(order), sc).peak
        return float(np.max((pk - best) / best)), pk

    cands = {f"alone order of {sc.names[k]}": a.order for k, a in enumerate(alone)}
    cands["program order"] = tuple(g.default_order())
    hint_name = min(cands, key=lambda n: worst(cands[n])[0])
    joint, secs = {}, {}
    # "relative": the weighted objective with weights 1 / (bucket's best peak), i.e. the sum
    # of the buckets' peaks relative to their own best, so no bucket's bytes dominate
    rel = Scenarios(sc.names, sc.dims, sc.values, (1.0 / best) / (1.0 / best).sum(), sc.lower)
    for obj, scen, objective in (("minimax", sc, "minimax"), ("weighted", sc, "weighted"),
                                 ("relative", rel, "weighted")):
        hint = min(cands, key=lambda n: worst(cands[n])[0])
        t0 = time.perf_counter()
        joint[obj] = solve(g, scen, objective=objective, time_limit=limit, workers=2, seed=0,
                           hint=list(cands[hint]))
        secs[obj] = time.perf_counter() - t0
        cands[f"joint {obj}"] = joint[obj].order
    # any order is an upper bound on a bucket's optimum: price against the best peak known
    # for the bucket from any solve (alone or joint), which is stricter than against alone
    peaks = {n: simulate(g, list(o), sc).peak for n, o in cands.items()}
    known = np.minimum(best, np.min(np.array(list(peaks.values())), axis=0))
    # a second relative solve: weights 1 / best known peak, from the best shared order so far
    rel2 = Scenarios(sc.names, sc.dims, sc.values, (1.0 / known) / (1.0 / known).sum(),
                     sc.lower)
    hint = min(peaks, key=lambda n: float(np.max((peaks[n] - known) / known)))
    t0 = time.perf_counter()
    joint["relative 2"] = solve(g, rel2, objective="weighted", time_limit=limit, workers=2,
                                seed=1, hint=list(cands[hint]))
    secs["relative 2"] = time.perf_counter() - t0
    cands["joint relative 2"] = joint["relative 2"].order
    peaks["joint relative 2"] = simulate(g, list(cands["joint relative 2"]), sc).peak
    known = np.minimum(known, peaks["joint relative 2"])
    scored = {n: (float(np.max((p - known) / known)), p) for n, p in peaks.items()}
    shared = min(scored, key=lambda n: scored[n][0])
    rows = ["| bucket | weight | program order | bucket alone: best / bound (status, s) | "
            "joint minimax | joint weighted | joint relative | best known (any order) | "
            "shared order | price vs alone / vs best known |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for k, name in enumerate(sc.names):
        a = alone[k]
        pm, pw = int(joint["minimax"].peak_bytes[k]), int(joint["weighted"].peak_bytes[k])
        pr = int(joint["relative"].peak_bytes[k])
        ps = int(scored[shared][1][k])
        rows.append(f"| b={sc.values[k, 0]},{name} | {sc.weights[k]:.2f} | {int(given[k]):,} | "
                    f"{int(best[k]):,} / {int(a.lower_bound_bytes[0]):,} ({a.status}, "
                    f"{t_alone[k]:.0f}) | {pm:,} | {pw:,} | {pr:,} | {int(known[k]):,} | {ps:,} | "
                    f"{pct(ps, best[k])} / {pct(ps, known[k])} |")
        print(rows[-1], flush=True)
    notes = [f"- shared order: {shared} (each joint solve is hinted with the best candidate so "
             f"far, first {hint_name}); worst bucket "
             f"{100 * scored[shared][0]:+.2f} % over the best peak known for that bucket, "
             f"{100 * float(np.max((scored[shared][1] - best) / best)):+.2f} % over that bucket "
             "solved alone",
             "- worst bucket per candidate (vs best known): " + "; ".join(
                 f"{n} {100 * v[0]:+.2f} %" for n, v in scored.items()),
             f"- joint status minimax {joint['minimax'].status} ({secs['minimax']:.0f} s), "
             f"weighted {joint['weighted'].status} ({secs['weighted']:.0f} s), relative "
             f"{joint['relative'].status} ({secs['relative']:.0f} s), relative 2 "
             f"{joint['relative 2'].status} ({secs['relative 2']:.0f} s); 'relative' = weighted "
             "with weights 1 / (bucket's best peak alone), 'relative 2' = the same with the best "
             "peaks known after the first three joint solves, hinted with the best shared order "
             "so far"]
    return rows, notes, known


def run_remat(g, sc, limit: float, ref: np.ndarray, frac: float
              ) -> tuple[list[str], list[str]]:
    """``cp-remat`` with one budget for every bucket: ``frac`` x the largest bucket's best
    order peak (``ref``), so that bucket needs clones or copies and the others may not."""
    from cpsched.core.errors import InfeasibleError
    from cpsched.strategies.remat.method import solve_remat
    budget = int(frac * ref[-1])
    t0 = time.perf_counter()
    try:
        res = solve_remat(g, sc, budget, time_limit=limit, workers=2)
    except InfeasibleError as e:
        return [], [f"- budget {budget:,} B: {e}"]
    dt = time.perf_counter() - t0
    rows = ["| bucket | best order peak (cp) | plan peak | fits | added time | "
            "active clones/copies | bucket alone: added time |",
            "|---|---|---|---|---|---|---|"]
    for s, name in enumerate(sc.names):
        try:
            alone = solve_remat(g, sc.only(s), budget, time_limit=limit / 2, workers=2)
            alone_txt = f"{float(alone.added_time_pct[0]):.2f} %"
        except InfeasibleError:
            alone_txt = "no plan in time"
        rows.append(f"| {name} | {int(ref[s]):,} | {int(res.peak[s]):,} | "
                    f"{'yes' if res.peak[s] <= budget else 'NO'} | "
                    f"{float(res.added_time_pct[s]):.2f} % | {len(res.active[s])} | "
                    f"{alone_txt} |")
        print(rows[-1], flush=True)
    notes = [f"- budget {budget:,} B ({frac:.0%} of the largest bucket's best order peak); "
             f"status {res.status}; {len(res.skeleton.candidates)} candidates; {dt:.0f} s"]
    bp = res.info.get("breakpoints")
    if bp:
        for name, p in bp.get("plans", {}).items():
            notes.append(f"- plan of {name}: fits the budget up to s = {p['limit']} "
                         f"(binding usage above it: {p.get('binding_usage')})")
    else:
        notes.append("- no breakpoints reported")
    return rows, notes


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--remat-limit", type=float, default=120.0)
    ap.add_argument("--b", type=int, default=8)
    ap.add_argument("--skip-remat", action="store_true")
    ap.add_argument("--budget-frac", type=float, default=0.9,
                    help="remat budget: this fraction of the largest bucket's best peak")
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
         f"Time limit {args.time_limit:.0f} s per joint solve, half of it per bucket alone "
         "(solved first). "
         "Peaks in bytes. Target: shared order within 2 % of each bucket alone.\n"]
    rows, notes, ref = run_cp(g, sc, args.time_limit)
    L += rows + [""] + notes + [""]
    if not args.skip_remat:
        L += ["## Remat plans per bucket (one order, one candidate set)\n",
              f"Time limit {args.remat_limit:.0f} s joint, half per bucket alone.\n"]
        rows, notes = run_remat(g, sc, args.remat_limit, ref, args.budget_frac)
        L += rows + [""] + notes + [""]
    out = Path(args.out)
    if out.exists():   # hand-written reading notes between the markers survive a re-run
        import re
        m = re.search(r"<!-- notes -->.*?<!-- /notes -->", out.read_text(), re.S)
        if m:
            L.insert(4, m.group(0) + "\n")
        # so does the hand-written from_jax section at the end (a test's outcome, not a run)
        m = re.search(r"<!-- from_jax -->.*?<!-- /from_jax -->", out.read_text(), re.S)
        if m:
            L.append(m.group(0) + "\n")
    out.write_text("\n".join(L))
    print("\n".join(L))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
