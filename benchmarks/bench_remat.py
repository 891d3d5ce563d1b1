"""Rematerialization and eviction: cp-remat against the published Moccasin / Checkmate figures,
the remat baselines, eviction vs remat only, and per-bucket plans on a symbolic graph.

    .venv/bin/python benchmarks/bench_remat.py [--quick] [--only KEY ...] [--repeats K]

Writes ``benchmarks/results_remat.md`` (and ``results_remat.json`` next to it). Every plan is
re-checked by the replay checker inside ``solve_remat``; the table reports replayed peaks
and the copy-stream timeline's added time. 2 CP-SAT workers throughout.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
MOCCASIN = SHARED / "peer-cases" / "moccasin"
sys.path.insert(0, str(REPO))

from cpsched.strategies.remat.method import solve_remat  # noqa: E402
from cpsched.core.errors import InfeasibleError  # noqa: E402
from cpsched.heuristics.remat import dtr_remat, sqrt_remat, xla_remat  # noqa: E402
from cpsched.analysis.memory import simulate  # noqa: E402
from cpsched.readers.nx_json import read_nx_json  # noqa: E402
from cpsched.remat.plan import TransferModel, replay  # noqa: E402
from cpsched.core.scenarios import Scenarios  # noqa: E402

LABELS = {"rlg250": "random_layered n250", "rlg1000": "random_layered n1000",
          "resnet50": "ResNet50 train", "fcn8": "fcn_8_vgg train"}
FILES = {
    "rlg250": "random_layered_n250_w0.43_nlv0.75_ed0.2_scd0.14.json",
    "rlg1000": "random_layered_n1000_w0.31_nlv0.75_ed0.2_scd0.14.json",
    "resnet50": "ResNet50_256_224_224_3_train_nx.json",
    "fcn8": "fcn_8_vgg_32_416_608_3_train_nx.json",
}
GIB = 1 << 30

# (key, graph, budget or fraction of the given-order peak, label, time limit, published
#  Moccasin (TDI %, s), published Checkmate MILP (TDI %, s)) -- Moccasin ICML 2023 poster,
# 16 workers; "-" = no solution within the limit.
CASES = [
    ("rlg250-90", "rlg250", 132_156, "132,156", 60, (0.9, 55.0), (0.9, 685.1)),
    ("rlg250-80", "rlg250", 117_472, "117,472", 300, (4.9, 639.5), None),
    ("resnet50-90", "resnet50", 0.9, "31.9 GiB", 60, (0.2, 65.2), (0.1, 434.1)),
    ("resnet50-80", "resnet50", 0.8, "28.4 GiB", 60, (0.3, 69.3), (0.3, 485.3)),
    ("fcn8-90", "fcn8", 0.9, "11.3 GiB", 60, (0.0, 3.1), (0.0, 6.3)),
    ("fcn8-80", "fcn8", 0.8, "10.0 GiB", 60, (0.1, 3.1), (0.1, 5.6)),
    ("rlg1000-90", "rlg1000", 547_757, "547,757", 600, (0.7, 3612.9), None),
    ("rlg1000-80", "rlg1000", 486_895, "486,895", 600, (3.4, 3611.8), None),
]

# Host links for the eviction rows, in GB/s per direction: PCIe 3.0 x16 (16, V100-class, the
# default), 4.0 x16 (32, A100), 5.0 x16 (64, H100). ResNet50's node times are read as
# microseconds (their sum, 0.41 s for a batch-256 training step, is V100-class); fcn_8_vgg's
# are FLOPs, turned into time at 15.7 TFLOP/s (V100 fp32 peak).
PCIE_GBPS = 16
EVICT = {   # graph -> (unit label, seconds per op-time unit)
    "resnet50": ("microseconds", 1e-6),
    "fcn8": ("FLOPs at 15.7 TFLOP/s", 1 / 15.7e12),
}
EVICT_CASES = ["fcn8:0.9", "fcn8:0.8", "resnet50:0.9", "resnet50:0.8", "resnet50:0.8:32",
               "resnet50:0.8:64"]


def _budget(g, b):
    peak = int(simulate(g, g.default_order()).peak[0])
    return (int(b * peak) if isinstance(b, float) else int(b)), peak


def _fmt_pub(p):
    return "–" if p is None else f"{p[0]:.1f} % / {p[1]:.0f} s"


def run_case(case, repeats: int, quick: bool) -> dict:
    key, gname, b, label, limit, mocc, chk = case
    g = read_nx_json(str(MOCCASIN / FILES[gname]))
    budget, peak = _budget(g, b)
    if quick:
        limit = min(limit, 20)
    runs = []
    for seed in range(repeats):
        t0 = time.perf_counter()
        try:
            res = solve_remat(g, None, budget, time_limit=limit, workers=2, seed=seed)
        except InfeasibleError as e:     # no plan in the limit: a table cell, not a crash
            runs.append({"tdi": None, "seconds": time.perf_counter() - t0, "peak": None,
                         "status": "no plan", "message": str(e)})
            continue
        dt = time.perf_counter() - t0
        assert replay(g, res.events[0], budget=budget).ok
        runs.append({"tdi": float(res.added_time_pct[0]), "seconds": dt, "peak": int(res.peak[0]),
                     "status": res.status, "from": res.info.get("from_baseline", "cp"),
                     "order_from": res.info.get("order_from"),
                     "first_under_budget_s": res.info.get("timings", {})})
    base = {}
    for name, fn in (("xla", xla_remat), ("sqrt", sqrt_remat), ("dtr", dtr_remat)):
        if name == "dtr" and g.n_ops > 600:
            base[name] = None
            continue
        r = fn(g, None, budget)
        base[name] = {"tdi": float(r.added_time_pct[0]), "ok": bool(r.peak[0] <= budget),
                      "peak": int(r.peak[0])}
    # the Checkmate/Moccasin setting: the given order frozen
    t0 = time.perf_counter()
    try:
        fo = solve_remat(g, None, budget, reorder=False,
                         time_limit=min(limit, 60 if not quick else 20), workers=2, seed=0)
        base["fixed"] = {"tdi": float(fo.added_time_pct[0]), "seconds": time.perf_counter() - t0,
                         "ok": True, "peak": int(fo.peak[0])}
    except InfeasibleError:
        base["fixed"] = None
    return {"key": key, "graph": LABELS[gname], "n": g.n_ops, "budget": budget, "label": label,
            "given_peak": peak, "limit": limit, "runs": runs, "baselines": base,
            "moccasin": mocc, "checkmate": chk}


def run_evict(gname: str, frac: float, gbps: float, limit: float, quick: bool) -> dict:
    g = read_nx_json(str(MOCCASIN / FILES[gname]))
    budget, peak = _budget(g, frac)
    unit, sec = EVICT[gname]
    bw = gbps * 1e9 * sec
    if quick:
        limit = min(limit, 20)
    t0 = time.perf_counter()
    rem = solve_remat(g, None, budget, reorder=False, time_limit=limit, workers=2)
    t_rem = time.perf_counter() - t0
    t0 = time.perf_counter()
    ev = solve_remat(g, None, budget, evict=True, transfer=TransferModel(bw), reorder=False,
                     time_limit=limit, workers=2)
    t_ev = time.perf_counter() - t0
    n_ev = sum(1 for c in ev.active[0] if ev.skeleton.candidates[c].kind == "evict")
    n_cl = len(ev.active[0]) - n_ev
    return {"graph": LABELS[gname], "frac": frac, "budget": budget, "unit": unit, "bandwidth": bw,
            "gbps": gbps, "remat_tdi": float(rem.added_time_pct[0]), "remat_s": t_rem,
            "evict_tdi": float(ev.added_time_pct[0]), "evict_s": t_ev,
            # no plan on this order can add less (cpsched.remat.bound)
            "remat_bound": float(rem.info["added_time_lower_bound_pct"][0]),
            "evict_bound": float(ev.info["added_time_lower_bound_pct"][0]),
            "recompute_pct": float(100 * ev.time.recompute[0] / ev.time.base[0]),
            "exposed_pct": float(100 * ev.time.exposed_transfer[0] / ev.time.base[0]),
            "evictions": n_ev, "clones": n_cl, "peak": int(ev.peak[0])}


def run_just_under(seeds=range(6), limit: float = 30.0) -> list[dict]:
    """Small random graphs at 95 % of their least peak over all orders: no order fits, and
    often no baseline either, so the CP models must find the plan."""
    from cpsched.cp.runtime import SolverConfig
    from cpsched.strategies.remat.method import min_peak_order
    from cpsched.generators import random_layered
    rows = []
    for seed in seeds:
        g = random_layered(n=60, seed=seed)
        _, pk, st = min_peak_order(g, None, cfg=SolverConfig(time_limit=20, workers=2))
        budget = int(0.95 * pk[0])
        t0 = time.perf_counter()
        try:
            r = solve_remat(g, None, budget, time_limit=limit, workers=2)
            row = {"tdi": float(r.added_time_pct[0]), "status": r.status,
                   "from": r.info.get("from_baseline", "cp")}
        except InfeasibleError:
            row = {"tdi": None, "status": "no plan", "from": None}
        xla = xla_remat(g, None, budget)
        rows.append(dict(row, seed=seed, least_peak=int(pk[0]), least_peak_status=st,
                         budget=budget, seconds=time.perf_counter() - t0, limit=limit,
                         xla_tdi=float(xla.added_time_pct[0]), xla_ok=bool(xla.peak[0] <= budget)))
        print(json.dumps(rows[-1]), flush=True)
    return rows


def _symbolic_graph():
    try:
        from cpsched.generators import transformer_train
        return transformer_train(layers=2), "transformer_train(layers=2)"
    except ImportError:  # pragma: no cover - the generator ships with the repository
        raise SystemExit("cpsched/generators.py is missing")


def run_symbolic(limit: float, quick: bool) -> dict:
    g, gdesc = _symbolic_graph()
    vals = [512, 1024, 1536, 1792, 2048]
    weights = np.array([0.35, 0.3, 0.15, 0.1, 0.1])
    lows = [1, 513, 1025, 1537, 1793]
    sc = Scenarios(tuple(f"s<={v}" for v in vals), ("b", "s"),
                   np.array([[8, v] for v in vals]), weights, np.array([[8, lo] for lo in lows]))
    peaks = simulate(g, g.default_order(), sc).peak
    budget = int(0.7 * peaks[-1])
    if quick:
        limit = min(limit, 30)
    t0 = time.perf_counter()
    res = solve_remat(g, sc, budget, time_limit=limit, workers=2)
    dt = time.perf_counter() - t0
    rows = []
    for s, name in enumerate(sc.names):
        one = sc.only(s)
        t1 = time.perf_counter()
        alone = solve_remat(g, one, budget, time_limit=limit / 2, workers=2)
        rows.append({"bucket": name, "weight": float(weights[s]), "given_peak": int(peaks[s]),
                     "peak": int(res.peak[s]), "added_pct": float(res.added_time_pct[s]),
                     "alone_added_pct": float(alone.added_time_pct[0]),
                     "alone_s": time.perf_counter() - t1, "active": len(res.active[s])})
    bp = res.info.get("breakpoints")
    return {"graph": gdesc, "budget": budget, "seconds": dt, "rows": rows,
            "candidates": len(res.skeleton.candidates), "breakpoints": bp,
            "status": res.status}


def write_md(out: Path, data: dict, argv: list[str]) -> None:
    L = []
    L.append("# Rematerialization and eviction (cp-remat)\n")
    cmds = data.get("commands") or [" ".join(argv)]
    for c in cmds:
        L.append(f"Command: `.venv/bin/python benchmarks/bench_remat.py {c}`".rstrip() + "  ")
    L.append(f"Machine: {platform.machine()}, Python {platform.python_version()}, "
             f"2 CP-SAT workers on a shared 2-core machine (timings are noisy; medians over "
             f"{data['repeats']} seed(s) where shown).  ")
    L.append(f"Date: {time.strftime('%Y-%m-%d')}\n")
    L.append("TDI = added time / sum of op times x 100 (cp-remat: clone time + exposed copy time "
             "from the plan's timeline; here no copies). Budgets: the published M column "
             "(RLG) or 0.9 / 0.8 x the given-order peak (training graphs, GiB). Published: "
             "Moccasin ICML 2023 poster, 16 workers; Checkmate = Gurobi MILP.\n")
    L.append("| graph | budget | cp-remat TDI | time (s) | status | fixed-order CP TDI (given order) | XLA greedy | sqrt(n) | DTR | Moccasin TDI / time | Checkmate TDI / time |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for c in data["cases"]:
        tdis = [r["tdi"] for r in c["runs"] if r["tdi"] is not None]
        secs = [r["seconds"] for r in c["runs"]]
        st = ", ".join(sorted({r["status"] for r in c["runs"]}))
        b = c["baselines"]

        def cell(x):
            if x is None:
                return "n/a"
            return f"{x['tdi']:.3f} %" + ("" if x["ok"] else " (over budget)")
        fo = b["fixed"]
        fo_cell = "none found" if fo is None else f"{fo['tdi']:.3f} % in {fo['seconds']:.0f} s"
        tdi_cell = (f"{statistics.median(tdis):.3f} % ({min(tdis):.3f}–{max(tdis):.3f})"
                    + (f", {len(c['runs']) - len(tdis)} run(s) without a plan"
                       if len(tdis) < len(c["runs"]) else "")) if tdis else "no plan"
        L.append(f"| {c['graph']} (n={c['n']}) | {c['label']} | {tdi_cell} "
                 f"| {statistics.median(secs):.1f} "
                 f"(limit {c['limit']}) | {st} | {fo_cell} | "
                 f"{cell(b['xla'])} | {cell(b['sqrt'])} | {cell(b['dtr'])} | "
                 f"{_fmt_pub(c['moccasin'])} | {_fmt_pub(c['checkmate'])} |")
    L.append("")
    L.append("Where the order alone meets the budget cp-remat returns it with no added time "
             "(status OPTIMAL); otherwise the plan comes from the fixed-order model on the best "
             "order found, then the joint order + clone model; it is never worse than the best "
             "baseline that meets the budget (the baselines also hint the model).\n")
    if data.get("evict"):
        L.append("## Eviction: remat + host offload vs remat only (same budget, same order, same time limit)\n")
        L.append("Host link: PCIe x16, GB/s per direction as given (3.0: 16, 4.0: 32, 5.0: 64), "
                 "copies on their own streams (device->host and host->device), first-in "
                 "first-out; exposed copy time comes from the plan's timeline. 'bound' = no "
                 "plan on this order adds less (`cpsched.remat.bound`: at each over-budget "
                 "step the bytes on the host are limited by what one copy stream moves before "
                 "it and one after it; the rest must be recomputed, cheapest first). "
                 "'most cut' = 1 - evict bound / remat-only TDI: no remat + evict plan cuts "
                 "more.\n")
        L.append("| graph | budget | op time unit (assumed) | link | limit | remat only TDI (bound) | remat + evict TDI (bound) | cut | most cut | clone % / exposed copy % | evictions / clones | time (s) remat / evict |")
        L.append("|---|---|---|---|---|---|---|---|---|---|---|---|")

        def bnd(e, k):
            return f" ({e[k]:.3f} %)" if k in e else ""
        for e in sorted(data["evict"], key=lambda e: (e["graph"], -e["frac"], e.get("gbps", 16),
                                                      e.get("limit", 120.0))):
            cut = (1 - e["evict_tdi"] / e["remat_tdi"]) * 100 if e["remat_tdi"] > 0 else float("nan")
            most = (f"{(1 - e['evict_bound'] / e['remat_tdi']) * 100:.0f} %"
                    if "evict_bound" in e and e["remat_tdi"] > 0 else "–")
            L.append(f"| {e['graph']} | {e['frac']:.1f} x peak ({e['budget'] / GIB:.2f} GiB) | "
                     f"{e['unit']} | {e.get('gbps', PCIE_GBPS):g} GB/s | "
                     f"{e.get('limit', 120.0):.0f} s | {e['remat_tdi']:.3f} %{bnd(e, 'remat_bound')} | "
                     f"{e['evict_tdi']:.3f} %{bnd(e, 'evict_bound')} | "
                     f"{cut:.0f} % | {most} | {e['recompute_pct']:.3f} / {e['exposed_pct']:.3f} | "
                     f"{e['evictions']} / {e['clones']} | {e['remat_s']:.0f} / {e['evict_s']:.0f} |")
        L.append("")
    if data.get("just_under"):
        L.append("## Just under the least peak: random_layered(n=60), budget 95 % of the least "
                 "peak over all orders\n")
        L.append("No order fits, so something must be recomputed; XLA's greedy remat on the "
                 "given order is shown for reference.\n")
        L.append("| seed | least peak | budget | cp-remat TDI | status | plan from | limit | XLA greedy |")
        L.append("|---|---|---|---|---|---|---|---|")
        for r in data["just_under"]:
            tdi = "no plan" if r["tdi"] is None else f"{r['tdi']:.3f} %"
            xla = f"{r['xla_tdi']:.3f} %" + ("" if r["xla_ok"] else " (over budget)")
            L.append(f"| {r['seed']} | {r['least_peak']:,} ({r['least_peak_status']}) | "
                     f"{r['budget']:,} | {tdi} | {r['status']} | {r['from']} | "
                     f"{r['limit']:.0f} s | {xla} |")
        L.append("")
    if data.get("symbolic"):
        s = data["symbolic"]
        L.append(f"## Per-bucket plans: {s['graph']}, buckets of s (b = 8), one order, one candidate set\n")
        L.append(f"Budget {s['budget']:,} B for every bucket (0.7 x the given-order peak at s = 2048). "
                 f"One solve over all buckets: {s['seconds']:.0f} s, {s['candidates']} candidate "
                 f"points, status {s['status']}. 'alone' = that bucket solved by itself.\n")
        L.append("| bucket | weight | given-order peak | plan peak | active candidates | added time | alone: added time |")
        L.append("|---|---|---|---|---|---|---|")
        for r in s["rows"]:
            L.append(f"| {r['bucket']} | {r['weight']:.2f} | {r['given_peak']:,} | {r['peak']:,} | "
                     f"{r['active']} | {r['added_pct']:.3f} % | {r['alone_added_pct']:.3f} % |")
        L.append("")
        bp = s.get("breakpoints")
        if bp:
            L.append(f"Exact run-time limits in `{bp['dim']}` (other dims {bp['fixed']}), budget "
                     f"{bp['budget']:,} B: the largest `{bp['dim']}` each bucket's plan fits, and "
                     "the usage polynomial that crosses the budget just above it.\n")
            L.append("| plan | fits up to | binding usage (bytes) |")
            L.append("|---|---|---|")
            for name, p in bp["plans"].items():
                L.append(f"| {name} | {bp['dim']} <= {p['limit']} | `{p['binding_usage']}` |")
            ons = sorted({v for v in bp["must_be_on_from"].values() if v is not None})
            L.append("")
            L.append(f"Candidates must turn on from {bp['dim']} = " + ", ".join(map(str, ons))
                     + " (every table plan without them exceeds the budget from there on).\n")
    # a hand-written reading of the tables (between the notes markers) survives a re-run
    notes = ""
    if out.exists():
        m = re.search(r"<!-- notes -->.*?<!-- /notes -->", out.read_text(), re.S)
        notes = m.group(0) if m else ""
    if notes:
        at = next(i for i, line in enumerate(L) if line.startswith("TDI = "))
        L[at:at] = [notes, ""]
    out.write_text("\n".join(L) + "\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="short time limits (smoke test)")
    ap.add_argument("--only", nargs="*", help="case keys, or 'evict' / 'just-under' / 'symbolic'")
    ap.add_argument("--repeats", type=int, default=3, help="seeds per case with limit <= 60 s")
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results_remat.md"))
    ap.add_argument("--evict-limit", type=float, default=120.0, help="seconds per eviction run")
    ap.add_argument("--evict-cases", nargs="*", default=None,
                    help="eviction rows to run, as GRAPH:FRACTION[:GBPS] (link default "
                         f"{PCIE_GBPS} GB/s; default rows: {' '.join(EVICT_CASES)})")
    args = ap.parse_args(argv)
    if not MOCCASIN.is_dir():
        print("shared peer cases not found next to the checkout; nothing to do")
        return 0
    only = set(args.only or [])
    data = {"repeats": args.repeats, "cases": [], "evict": [], "symbolic": None,
            "commands": [" ".join(argv if argv is not None else sys.argv[1:])]}
    for case in CASES:
        if only and case[0] not in only:
            continue
        reps = args.repeats if case[4] <= 60 else 1
        print(f"[{time.strftime('%H:%M:%S')}] {case[0]} x{reps}", flush=True)
        data["cases"].append(run_case(case, reps, args.quick))
        print(json.dumps(data["cases"][-1]["runs"]), flush=True)
    if not only or "evict" in only:
        todo = []
        for c in args.evict_cases or EVICT_CASES:
            parts = c.split(":")
            todo.append((parts[0], float(parts[1]),
                         float(parts[2]) if len(parts) > 2 else float(PCIE_GBPS)))
        for gname, frac, gbps in todo:
            print(f"[{time.strftime('%H:%M:%S')}] evict {gname} {frac} {gbps:g} GB/s", flush=True)
            row = run_evict(gname, frac, gbps, args.evict_limit, args.quick)
            row["limit"] = args.evict_limit if not args.quick else min(args.evict_limit, 20)
            data["evict"].append(row)
            print(json.dumps(data["evict"][-1]), flush=True)
    if not only or "just-under" in only:
        print(f"[{time.strftime('%H:%M:%S')}] just-under", flush=True)
        data["just_under"] = run_just_under(limit=30.0 if not args.quick else 10.0)
    if not only or "symbolic" in only:
        print(f"[{time.strftime('%H:%M:%S')}] symbolic", flush=True)
        data["symbolic"] = run_symbolic(120, args.quick)
    out = Path(args.out)
    if only and out.with_suffix(".json").exists():
        # a partial run replaces its own rows and keeps the others
        old = json.loads(out.with_suffix(".json").read_text())
        mine = {c["key"] for c in data["cases"]}
        data["cases"] = [c for c in old.get("cases", []) if c["key"] not in mine] + data["cases"]
        order = [c[0] for c in CASES]
        data["cases"].sort(key=lambda c: order.index(c["key"]) if c["key"] in order else 99)
        # eviction rows: keyed by graph, fraction, link and time limit
        ek = lambda e: (e["graph"], e["frac"], e.get("gbps", PCIE_GBPS),  # noqa: E731
                        e.get("limit", 120.0))
        mine_e = {ek(e) for e in data["evict"]}
        data["evict"] = [e for e in old.get("evict", []) if ek(e) not in mine_e] + data["evict"]
        data["symbolic"] = data["symbolic"] or old.get("symbolic")
        data["just_under"] = data.get("just_under") or old.get("just_under")
        data["commands"] = [c for c in old.get("commands", []) if c not in data["commands"]] \
            + data["commands"]
    out.with_suffix(".json").write_text(json.dumps(data, indent=1, default=str) + "\n")
    write_md(out, data, list(argv if argv is not None else sys.argv[1:]))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
