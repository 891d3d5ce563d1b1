"""PyTorch Inductor's memory heuristics against cpsched on the torch corpus (``models/torch/``).

    .venv/bin/python benchmarks/bench_torch.py [--time-limit 10]            # core sections
    .venv-torch/bin/python benchmarks/bench_torch.py --time-limit 10        # + hand-back (torch)

(``make torch-env`` makes ``.venv-torch``; without torch the hand-back section says it was not
run.) Writes ``benchmarks/results_torch.md``:

1. every corpus graph read, and cpsched's peak of Inductor's order against Inductor's own
   ``estimate_peak_memory`` (stored at capture);
2. per graph: Inductor's portfolio (incoming order, LPMF, BFS, DFS; the kept one is
   ``inductor-default``), each re-run by cpsched's ``inductor-*`` methods and checked against
   the orders Inductor chose; ``cp`` (``cpsched.schedule(g)``) with its proven bound and gap;
3. the PR #134874 rows (AlexNet bs 128, VGG16 bs 64 training);
4. symbolic: for each program with a dynamic dim, cp's one order over buckets of the dim
   against Inductor's order (made at the size hint) at each bucket;
5. remat: AOTAutograd's ``activation_memory_budget`` (captures in ``models/torch/remat/``)
   against cp's remat at the same peaks;
6. hand-back (torch only): each corpus program compiled under ``cpsched.inductor_order``
   (scheduler only, no kernels): the order Inductor's scheduler ends with against cp's; with
   kernels built and run against eager mode: ``bench_torch_handback.py`` (its own table).

Bytes are Inductor's accounting at the size hints (the traced shapes): the sum of live
scheduler buffers and freeable inputs; parameters are not counted (see the README).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import cpsched  # noqa: E402
from cpsched.analysis.memory import simulate  # noqa: E402
from cpsched.api import scenarios_for  # noqa: E402
from cpsched.core.scenarios import Scenarios  # noqa: E402
from cpsched.heuristics import inductor  # noqa: E402
from cpsched.readers import read_graph  # noqa: E402

CORPUS = REPO / "models" / "torch"
OUT = REPO / "benchmarks" / "results_torch.md"
MIB = 1 << 20


def mib(x) -> str:
    return f"{x / MIB:,.2f}"


def nodes_of(g, order):
    keep = {g.op_names[i] for i in range(g.n_ops) if g.opcodes[i] != "parameter"}
    return [g.op_names[i] for i in order if g.op_names[i] in keep]


def corpus_rows(time_limit: float):
    manifest = json.loads((CORPUS / "manifest.json").read_text())
    rows = []
    for prog, info in manifest["programs"].items():
        for ginfo in info["graphs"]:
            path = CORPUS / ginfo["file"]
            rec = json.loads(gzip.decompress(path.read_bytes()))
            g = read_graph(str(path))
            sc = scenarios_for(g)
            acct = int(simulate(g, g.original_order, sc).peak[0])
            cands = {n: (o, p) for n, o, p in inductor.portfolio(g)}
            same = all(
                nodes_of(g, cands[m][0]) == rec["inductor"]["orders"][m]
                for m in ("baseline", "lpmf", "bfs", "dfs")
            )
            default = inductor.inductor_default(g)
            same = same and nodes_of(g, default) == rec["inductor"]["order"]
            t = time.perf_counter()
            res = cpsched.schedule(g, time_limit=time_limit)
            secs = time.perf_counter() - t
            s = res.scenarios.names[0]
            rows.append(
                {
                    "program": prog,
                    "part": ginfo["part"],
                    "nodes": len(rec["nodes"]),
                    "inductor": rec["inductor"]["peak"],
                    "accounting_equal": acct == rec["inductor"]["peak"],
                    "orders_equal": same,
                    "peaks": {m: cands[m][1] for m in ("baseline", "lpmf", "bfs", "dfs")},
                    "cp": int(res.peak[s]),
                    "bound": int(res.bound[s]),
                    "gap": float(res.gap[s]),
                    "status": res.status,
                    "seconds": secs,
                    "training": info["training"],
                }
            )
            print(f"{prog}.{ginfo['part']}: {rows[-1]['inductor']} -> {rows[-1]['cp']}", flush=True)
    return rows


def symbolic_rows(time_limit: float):
    """cp's one order over buckets of each dynamic dim vs Inductor's hint order per bucket."""
    manifest = json.loads((CORPUS / "manifest.json").read_text())
    out = []
    for prog, info in manifest["programs"].items():
        if not info["dynamic"]:
            continue
        for ginfo in info["graphs"]:
            g = read_graph(str(CORPUS / ginfo["file"]))
            syms = g.meta["torch"]["symbols"]
            (dim, s), = syms.items()
            lo, hi, hint = s["min"], s["max"], s["hint"]
            values = sorted({lo, hint, (hint + hi) // 2, hi} | ({hint // 2} if hint // 2 > lo else set()))
            sc = Scenarios(
                tuple(f"{dim}={v}" for v in values), (dim,), [[v] for v in values], [1.0] * len(values)
            )
            res = cpsched.schedule(g, scenarios=sc, time_limit=time_limit)
            ind = simulate(g, g.original_order, sc).peak
            alone = []
            for k in range(len(values)):
                r = cpsched.schedule(g, scenarios=sc.only(k), time_limit=time_limit / 2)
                alone.append(int(r.bound[sc.names[k]]))
            out.append(
                {
                    "graph": f"{prog}.{ginfo['part']}",
                    "dim": dim,
                    "hint": hint,
                    "buckets": [
                        {
                            "value": v,
                            "inductor": int(ind[k]),
                            "cp": int(res.peak[sc.names[k]]),
                            "bound": alone[k],
                        }
                        for k, v in enumerate(values)
                    ],
                }
            )
            print(f"symbolic {out[-1]['graph']}", flush=True)
    return out


def remat_rows(time_limit: float):
    """AOTAutograd's activation_memory_budget against cp's remat at the same peaks.

    For each training program captured at each budget (``models/torch/remat/``), the step
    (forward then backward, ``join_training_records``) in Inductor's orders: its peak, and
    its compute time on the h100 roofline from Inductor's FLOP and byte counts; added time
    is over the step at budget 1.0. cp: ``cpsched.schedule(step at 1.0, objective="remat",
    budget=that peak)``.
    """
    from cpsched.core.errors import CpschedError
    from cpsched.readers.torch_graph import graph_from_torch_dict, join_training_records
    from cpsched.remat.timing import op_durations

    folder = CORPUS / "remat"
    if not (folder / "manifest.json").exists():
        return None
    manifest = json.loads((folder / "manifest.json").read_text())
    out = []
    for prog, info in manifest["programs"].items():
        steps = {}
        for b, files in info["budgets"].items():
            recs = {json.loads(gzip.decompress((folder / f).read_bytes()))["part"]: f for f in files}
            load = lambda part, recs=recs: json.loads(gzip.decompress((folder / recs[part]).read_bytes()))  # noqa: E731
            steps[float(b)] = graph_from_torch_dict(join_training_records(load("forward"), load("backward")))
        base = steps[1.0]
        t_base = float(op_durations(base).sum())
        rows = []
        for b in sorted(steps, reverse=True):
            g = steps[b]
            sc = scenarios_for(g)
            peak = int(simulate(g, g.original_order, sc).peak[0])
            added = 100 * (float(op_durations(g).sum()) - t_base) / t_base
            row = {"budget": b, "aot_peak": peak, "aot_added_pct": added}
            try:
                res = cpsched.schedule(base, objective="remat", budget=peak, time_limit=time_limit)
                s = res.scenarios.names[0]
                row.update(
                    cp_peak=int(res.peak[s]),
                    cp_added_pct=float(res.plan.added_time_pct[0]) if res.plan is not None else 0.0,
                    cp_status=res.status,
                )
            except CpschedError as e:
                row.update(cp_peak=None, cp_added_pct=None, cp_status=f"refused: {e}")
            rows.append(row)
            print(f"remat {prog} {b}: {row}", flush=True)
        out.append({"program": prog, "ops": base.n_ops, "base_seconds": t_base, "rows": rows})
    return out


def handback_rows(time_limit: float):
    try:
        import torch  # noqa: F401
    except ImportError:
        return None
    sys.path.insert(0, str(CORPUS))
    import capture as corpus  # the corpus programs

    from cpsched.readers.torch_frontend import schedule_only

    out = []
    for name, (build, _, _) in corpus.PROGRAMS.items():
        module, inputs, options = build()
        with cpsched.inductor_order(time_limit=time_limit) as run:
            schedule_only(module, *inputs, **options)
        for h in run.graphs:
            out.append(
                {
                    "program": name,
                    "nodes": len(h.order),
                    "final_is_cp": h.final_order == h.order,
                    "estimate_equals_cp": h.inductor_estimate_of_order == h.peak,
                    "cp": h.peak,
                    "inductor": h.inductor_peak,
                    "pinned": h.pinned_inputs,
                }
            )
        print(f"hand-back {name}: {len(run.graphs)} graphs", flush=True)
    return out


def write(rows, sym, rem, hb, args, seconds):
    L = []
    L.append("# PyTorch Inductor's memory heuristics against cpsched\n")
    cmd = "python benchmarks/bench_torch.py " + " ".join(sys.argv[1:])
    L.append(
        f"Made by `{cmd.strip()}` ({'.venv-torch' if hb is not None else '.venv'}), "
        f"{seconds / 60:.1f} min on {platform.machine()}, {os.cpu_count()} cores shared with "
        f"other jobs (timings measured under load). cp: `cpsched.schedule(g)` "
        f"(method `cp`, {args.time_limit:g} s, 2 workers, seed 0). Corpus: `models/torch/` "
        f"(captured with torch {json.loads((CORPUS / 'manifest.json').read_text())['torch_version']}, "
        "Inductor on the CPU; `make torch-corpus`).\n"
    )
    L.append(
        "Bytes: Inductor's own accounting (`estimate_peak_memory`) at the traced shapes: "
        "scheduler buffers from their producer to their last successor, freeable graph inputs "
        "(not parameters, tangents or RNG state) to their last reader, outputs to the end. "
        "MiB = 2^20 bytes.\n"
    )
    n = len(rows)
    acc = sum(r["accounting_equal"] for r in rows)
    same = sum(r["orders_equal"] for r in rows)
    le = sum(r["cp"] <= r["inductor"] for r in rows)
    better = [r for r in rows if r["cp"] < r["inductor"]]
    proven = sum(r["status"] == "OPTIMAL" for r in rows)
    L.append("## Summary\n")
    L.append(f"- graphs read: {n} of {n} ({len({r['program'] for r in rows})} programs)")
    L.append(f"- cpsched's peak of Inductor's order equals Inductor's estimate: {acc} of {n}")
    L.append(
        f"- `inductor-lpmf/-bfs/-dfs/-default` give Inductor's own orders (all four and the kept "
        f"one): {same} of {n}"
    )
    L.append(f"- cp at or below `inductor-default`: {le} of {n}; strictly below: {len(better)}")
    L.append(f"- cp proven optimal (bound = peak): {proven} of {n}")
    if better:
        best = max(better, key=lambda r: (r["inductor"] - r["cp"]) / r["inductor"])
        L.append(
            f"- largest saving: {best['program']}.{best['part']}, "
            f"{mib(best['inductor'])} -> {mib(best['cp'])} MiB "
            f"({100 * (best['inductor'] - best['cp']) / best['inductor']:.1f} %)"
        )
    L.append("")
    L.append("## Per graph\n")
    L.append(
        "Peaks in MiB. `kept` is Inductor's choice (`inductor-default`); `bound` is cp's proven "
        "lower bound on any order's peak; gap = (cp - bound) / cp.\n"
    )
    L.append(
        "| graph | nodes | incoming | LPMF | BFS | DFS | **Inductor (kept)** | **cp** | bound | gap | cp vs Inductor | cp s |"
    )
    L.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for r in rows:
        p = r["peaks"]
        d = 100 * (r["cp"] - r["inductor"]) / r["inductor"] if r["inductor"] else 0.0
        L.append(
            f"| {r['program']}.{r['part']} | {r['nodes']} | {mib(p['baseline'])} | {mib(p['lpmf'])} "
            f"| {mib(p['bfs'])} | {mib(p['dfs'])} | {mib(r['inductor'])} | {mib(r['cp'])} "
            f"| {mib(r['bound'])} | {100 * r['gap']:.2f} % | {d:+.1f} % | {r['seconds']:.1f} |"
        )
    L.append("")
    L.append("## PR #134874's rows, re-measured\n")
    L.append(
        "PyTorch PR #134874 reported, for the peak-memory pass on GPU (estimated peak, GB): "
        "AlexNet bs 128 1.17 -> 0.99, VGG16 bs 64 4.10 -> 3.57. Here: the same torchvision "
        "models and batch sizes at 224x224, training, captured on the CPU with the torch above "
        "(CPU fusion differs from GPU's, so the graphs and figures are not the PR's). "
        "`incoming` is the order before the pass, `Inductor` the one it keeps.\n"
    )
    L.append("| graph | incoming (MiB) | Inductor (MiB) | cp (MiB) | bound (MiB) | status |")
    L.append("|---|--:|--:|--:|--:|---|")
    for r in rows:
        if r["program"] in ("alexnet_train_bs128", "vgg16_train_bs64"):
            L.append(
                f"| {r['program']}.{r['part']} | {mib(r['peaks']['baseline'])} | {mib(r['inductor'])} "
                f"| {mib(r['cp'])} | {mib(r['bound'])} | {r['status']} |"
            )
    L.append("")
    L.append("## Symbolic shapes: one cp order for every bucket\n")
    L.append(
        "Programs with a dynamic dim (`torch.export.Dim` with a range, marked dynamic for "
        "`torch.compile`): Inductor orders the graph once, at the size hint (the traced value); "
        "cp orders it once for all buckets (equal weights, `cpsched.schedule(g, scenarios=...)`). "
        "Each cell: peak (MiB) at that value of the dim; `best` is the bound of cp on that "
        "bucket alone. `over` = Inductor / cp - 1.\n"
    )
    flagged = []
    for s in sym:
        L.append(f"**{s['graph']}** ({s['dim']}, hint {s['hint']})\n")
        L.append("| " + s["dim"] + " | Inductor | cp (one order) | best alone (bound) | over |")
        L.append("|--:|--:|--:|--:|--:|")
        for b in s["buckets"]:
            over = b["inductor"] / b["cp"] - 1 if b["cp"] else 0.0
            if over >= 0.10 and b["value"] != s["hint"]:
                flagged.append((s["graph"], b["value"], over))
            L.append(
                f"| {b['value']} | {mib(b['inductor'])} | {mib(b['cp'])} | {mib(b['bound'])} | {100 * over:+.1f} % |"
            )
        L.append("")
    if flagged:
        L.append(
            "Inductor's size-hint order at least 10 % above cp's one order at another bucket: "
            + "; ".join(f"{g} at {v} ({100 * o:+.1f} %)" for g, v, o in flagged)
            + ".\n"
        )
    else:
        worst = max(
            ((s["graph"], b["value"], b["inductor"] / b["cp"] - 1) for s in sym for b in s["buckets"] if b["cp"]),
            key=lambda x: x[2],
            default=None,
        )
        L.append(
            "No corpus program has Inductor's size-hint order 10 % or more above cp's one order "
            "at another bucket"
            + (f" (the largest excess: {worst[0]} at {worst[1]}, {100 * worst[2]:+.1f} %)." if worst else ".")
            + "\n"
        )
    L.append("## Remat: cp against AOTAutograd's activation memory budget\n")
    if rem is None:
        L.append("Not run: `models/torch/remat/` is missing (`make torch-corpus`).\n")
    else:
        L.append(
            "Each training program captured with `torch._functorch.config.activation_memory_budget` "
            "at every budget below (AOTAutograd's knapsack over saved activations picks what the "
            "backward recomputes); the step is the forward then the backward as one graph "
            "(saved activations freed after their last reader in the backward), in Inductor's "
            "orders. `AOT peak` is its peak in Inductor's accounting; added time is the step's "
            "compute time over the step at budget 1.0, on the `h100` roofline from Inductor's own "
            "FLOP and byte counts per node. cp: `cpsched.schedule(step at 1.0, objective=\"remat\", "
            f"budget=AOT peak, time_limit={args.remat_time_limit:g})`: order, recomputation "
            "and its added time on the same model.\n"
        )
        for p in rem:
            L.append(f"**{p['program']}** ({p['ops']} ops, step {p['base_seconds'] * 1e6:,.1f} us at budget 1.0)\n")
            L.append("| budget | AOT peak (MiB) | AOT added | cp peak (MiB) | cp added | cp within | status |")
            L.append("|--:|--:|--:|--:|--:|:-:|---|")
            solved = [r for r in p["rows"] if r["cp_peak"] is not None]
            mono = all(
                a["cp_peak"] <= b["cp_peak"]
                for a in solved
                for b in solved
                if a["aot_peak"] < b["aot_peak"]
            )
            for r in p["rows"]:
                if r["cp_peak"] is None:
                    L.append(f"| {r['budget']:g} | {mib(r['aot_peak'])} | {r['aot_added_pct']:+.2f} % | - | - | - | {r['cp_status']} |")
                    continue
                L.append(
                    f"| {r['budget']:g} | {mib(r['aot_peak'])} | {r['aot_added_pct']:+.2f} % "
                    f"| {mib(r['cp_peak'])} | {r['cp_added_pct']:+.2f} % "
                    f"| {'yes' if r['cp_peak'] <= r['aot_peak'] else 'NO'} | {r['cp_status']} |"
                )
            L.append("")
            costly = [r for r in solved if r["aot_added_pct"] > 0.01]
            if costly:
                L.append(
                    f"Where AOTAutograd recomputes ({len(costly)} budgets), cp adds less time at "
                    f"the same peak at {sum(r['cp_added_pct'] < r['aot_added_pct'] for r in costly)} "
                    f"of them (median added time: AOT "
                    f"{sorted(r['aot_added_pct'] for r in costly)[len(costly) // 2]:.1f} %, cp "
                    f"{sorted(r['cp_added_pct'] for r in costly)[len(costly) // 2]:.1f} %)."
                )
            L.append(
                f"cp within every budget: {all(r['cp_peak'] is None or r['cp_peak'] <= r['aot_peak'] for r in p['rows'])}; "
                f"cp's peak never rises as the budget (AOT's peak) falls: {mono}; "
                f"AOT's peak falls with its budget: "
                f"{all(a['aot_peak'] <= b['aot_peak'] for a in p['rows'] for b in p['rows'] if a['budget'] < b['budget'])}.\n"
            )
    L.append("## Hand-back: cp's order compiled by Inductor\n")
    if hb is None:
        L.append("Not run: torch is not installed in this environment (`make torch-env`).\n")
    else:
        ok = sum(h["final_is_cp"] for h in hb)
        est = sum(h["estimate_equals_cp"] for h in hb)
        L.append(
            "`with cpsched.inductor_order(time_limit=...)`: every graph of every corpus program "
            "compiled with cp's order through Inductor's `_post_fusion_custom_pass` "
            "(`reorder_for_peak_memory` off), up to the scheduler (no kernels built). Built and "
            "run against eager mode (outputs and gradients): `benchmarks/bench_torch_handback.py`"
            " -> `results_torch_handback.md`.\n"
        )
        L.append(f"- graphs: {len(hb)}; Inductor's final order is cp's: {ok} of {len(hb)}")
        L.append(
            f"- Inductor's `estimate_peak_memory` of it (planning info made for cp's order) "
            f"equals cp's peak: {est} of {len(hb)}; freeable inputs whose last reader was kept "
            f"as in Inductor's order (their size is that reader's bytes): "
            f"{sum(h.get('pinned', 0) for h in hb)}, in {sum(bool(h.get('pinned')) for h in hb)} graphs"
        )
        L.append(
            f"- cp's peak at or below what Inductor's own pass would keep: "
            f"{sum(h['cp'] <= h['inductor'] for h in hb)} of {len(hb)}\n"
        )
        L.append(
            "Kernels built and run against a float64 eager step, per program pass or FAIL: "
            "`results_torch_handback.md` (its own command; not copied here, so that neither "
            "table goes stale when the other is made again).\n"
        )
    OUT.write_text("\n".join(L) + "\n")
    (OUT.with_suffix(".json")).write_text(
        json.dumps({"graphs": rows, "symbolic": sym, "remat": rem, "handback": hb}, indent=1) + "\n"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--remat-time-limit", type=float, default=20.0)
    ap.add_argument("--no-handback", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows = corpus_rows(args.time_limit)
    sym = symbolic_rows(args.time_limit)
    rem = remat_rows(args.remat_time_limit)
    hb = None if args.no_handback else handback_rows(min(args.time_limit, 5.0))
    write(rows, sym, rem, hb, args, time.perf_counter() - t0)
    print(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
