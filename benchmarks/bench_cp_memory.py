"""Minimum-peak ordering (method ``cp``) on the Moccasin / Checkmate graphs.

    python benchmarks/bench_cp_memory.py checkmate --runs 3
    python benchmarks/bench_cp_memory.py rlg --time-limit 60 --sizes 100,250,500,1000
    python benchmarks/bench_cp_memory.py rlg --time-limit 300 --sizes 250,500
    python benchmarks/bench_cp_memory.py naive --time-limit 60
    python benchmarks/bench_cp_memory.py models --time-limit 60 --runs 3
    python benchmarks/bench_cp_memory.py bounds --time-limit 60
    python benchmarks/bench_cp_memory.py xla --time-limit 60
    python benchmarks/bench_cp_memory.py hlo --limits 60,300
    python benchmarks/bench_cp_memory.py buckets --time-limit 60

The checkmate and rlg suites are also sweep specs (``benchmarks/sweeps/checkmate.toml``,
``rlg.toml``): ``cpsched sweep benchmarks/sweeps/checkmate.toml`` runs the cp and heuristic
columns, resumably, on Ray or a local pool (``benchmarks/sweeps/README.md``).

Each suite prints a markdown table and, with ``--write``, replaces its own section of
``benchmarks/results_cp_memory.md`` (between ``<!-- auto:SUITE -->`` markers), keeping the
rest of the file. Every order is re-checked by the exact simulator (``make_schedule``);
peaks and bounds are bytes (the graphs' own units). 2 CP-SAT workers throughout.
"""

from __future__ import annotations

import argparse
import platform
import os
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CPSCHED_SHARED_DIR", REPO.parent / "shared"))
MOCCASIN = SHARED / "peer-cases" / "moccasin"
RESULTS = REPO / "benchmarks" / "results_cp_memory.md"
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from cpsched.cp.memory.solve import ModelOptions, ObjectiveSpec, build  # noqa: E402
from cpsched.cp.memory.solve import run
from cpsched.cp.runtime import SolverConfig  # noqa: E402
from cpsched.cp.memory.naive import solve_naive  # noqa: E402
from cpsched.cp.memory.problem import from_graph  # noqa: E402
from cpsched.strategies.min_peak.exact import best_first  # noqa: E402
from cpsched.strategies.min_peak.method import solve  # noqa: E402
from cpsched.analysis.memory import peak  # noqa: E402
from cpsched.readers.nx_json import read_nx_json  # noqa: E402
from cpsched.core.scenarios import static  # noqa: E402


def checkmate_files() -> list[Path]:
    return sorted(p for p in MOCCASIN.glob("*_nx.json"))


def rlg_file(n: int) -> Path:
    return next(MOCCASIN.glob(f"random_layered_n{n}_*.json"))


def short(path: Path) -> str:
    name = path.name.replace("_nx.json", "").replace(".json", "")
    m = re.match(r"random_layered_n(\d+)_", name)
    return f"RLG n{m.group(1)}" if m else name


def fmt(x) -> str:
    if x is None:
        return "–"
    if isinstance(x, float) and not x.is_integer():
        return f"{x:,.2f}"
    return f"{int(x):,}"


def pct(a, b) -> str:
    return "–" if a is None or b in (None, 0) else f"{100.0 * (a - b) / b:+.1f} %"


# -- suites ---------------------------------------------------------------------------------------

def suite_checkmate(args) -> str:
    rows = ["| graph | n | m | given-order peak | cp peak | proven bound | status | "
            "time (median) | CP-SAT model alone: status / time (median) | naive model: status / time |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for path in checkmate_files():
        g = read_nx_json(str(path))
        given = int(peak(g, g.default_order())[0])
        times, alone_t, naive_t = [], [], []
        for r in range(args.runs):
            s = solve(g, time_limit=args.time_limit, workers=2, seed=r)
            times.append(s.seconds)
            # the CP-SAT model by itself, hinted with the given order
            b = build(from_graph(g, static()), ObjectiveSpec("weighted", weights=np.ones(1)),
                      ModelOptions(), hint=g.default_order())
            a = run(b, SolverConfig(time_limit=args.time_limit, workers=2, seed=r))
            alone_t.append(a.seconds)
            t0 = time.perf_counter()
            nv = solve_naive(g, cfg=SolverConfig(time_limit=args.time_limit, seed=r))
            naive_t.append(time.perf_counter() - t0)
        rows.append(f"| {short(path)} | {g.n_ops} | {len(g.pred_idx)} | {given:,} | "
                    f"{int(s.peak_bytes[0]):,} | {int(s.lower_bound_bytes[0]):,} | {s.status} | "
                    f"{statistics.median(times):.2f} s | {a.status} / "
                    f"{statistics.median(alone_t):.2f} s | {nv['status']} / "
                    f"{statistics.median(naive_t):.2f} s |")
        print(rows[-1], flush=True)
    return "\n".join(rows)


def suite_rlg(args) -> str:
    rows = [f"| graph | time limit | given | best heuristic | cp peak | proven bound | gap | "
            f"status | vs given | vs best heuristic | elapsed | engines |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    details, medians = [], []
    for n in args.sizes:
        path = rlg_file(n)
        g = read_nx_json(str(path))
        gaps = []
        for r in range(args.runs):
            s = solve(g, time_limit=args.time_limit, workers=2, seed=r)
            base = s.info["baselines"]
            given = base["given"][0]
            heur = {k: v[0] for k, v in base.items() if k not in ("given", "hint")}
            bh = min(heur, key=heur.get)
            pk, lb = int(s.peak_bytes[0]), int(s.lower_bound_bytes[0])
            gap = (pk - lb) / pk
            gaps.append(100 * gap)
            engines = s.info.get("engine", "")
            rows.append(f"| {short(path)} | {args.time_limit:.0f} s | {given:,} | {bh} {heur[bh]:,} | "
                        f"{pk:,} | {lb:,} | {100 * gap:.1f} % | {s.status} | "
                        f"{pct(pk, given)} | {pct(pk, heur[bh])} | {s.seconds:.1f} s | {engines} |")
            print(rows[-1], flush=True)
            details.append(f"- {short(path)} run {r}: heuristics "
                           + ", ".join(f"{k} {v:,}" for k, v in sorted(heur.items(), key=lambda kv: kv[1]))
                           + "; phases " + "; ".join(_phase_txt(ph) for ph in s.info["phases"]
                                                     if ph.get("phase") != "heuristics"))
        if args.runs > 1:
            medians.append(f"- {short(path)}: median gap {statistics.median(gaps):.1f} % over "
                           f"{args.runs} runs (seeds 0-{args.runs - 1})")
    return "\n".join(rows) + "\n\n" + "\n".join(medians + details)


def _phase_txt(ph: dict) -> str:
    keys = [k for k in ("phase", "n", "seconds", "reason", "status", "cost", "bound",
                        "windows", "improved", "tries", "best_window", "segments")
            if k in ph]
    return " ".join(f"{k}={ph[k]}" for k in keys)


def suite_naive(args) -> str:
    rows = ["| graph | naive: best / bound / status (time) | cp: best / bound / status (time) |",
            "|---|---|---|"]
    for n in args.sizes:
        path = rlg_file(n)
        g = read_nx_json(str(path))
        nv = solve_naive(g, cfg=SolverConfig(time_limit=args.time_limit))
        nb = peak(g, nv["order"])[0] if nv["order"] else None
        s = solve(g, time_limit=args.time_limit)
        rows.append(f"| {short(path)} | {fmt(nb)} / {fmt(nv['bound'])} / {nv['status']} "
                    f"({nv['seconds']:.0f} s) | {int(s.peak_bytes[0]):,} / "
                    f"{int(s.lower_bound_bytes[0]):,} / {s.status} ({s.seconds:.0f} s) |")
        print(rows[-1], flush=True)
    return "\n".join(rows)


MODEL_VARIANTS = {
    "naive (no domains, no peak bound)": None,
    "cumulative, no domains, no peak bound": ModelOptions(memory="cumulative", domains=False,
                                                          peak_bound=False),
    "cumulative, no peak bound": ModelOptions(memory="cumulative", peak_bound=False),
    "cumulative, no position domains": ModelOptions(memory="cumulative", domains=False),
    "cumulative, direct edges": ModelOptions(memory="cumulative", precedence="direct"),
    "cumulative, reduction": ModelOptions(memory="cumulative", precedence="reduction"),
    "cumulative, reduction + distances": ModelOptions(memory="cumulative", precedence="distance"),
    "cumulative, closure + distances": ModelOptions(memory="cumulative", precedence="closure"),
    "cumulative, end >= users only": ModelOptions(memory="cumulative", exact_liveness=False),
    "per-op rows": ModelOptions(memory="per-op"),
    "per-op rows + cumulative": ModelOptions(memory="both"),
}


def suite_models(args) -> str:
    """The CP-SAT model alone (no search, no decomposition) on RLG n100: time to prove."""
    path = rlg_file(args.sizes[0])
    g = read_nx_json(str(path))
    p = from_graph(g, static())
    hint = g.default_order()
    rows = [f"| model ({short(path)}, hint = given order, {args.time_limit:.0f} s, "
            f"{args.runs} seeds) | proven optimal | time to prove (median) | best / bound at the limit |",
            "|---|---|---|---|"]
    for name, opts in MODEL_VARIANTS.items():
        res = []
        for seed in range(args.runs):
            if opts is None:
                r = solve_naive(g, cfg=SolverConfig(time_limit=args.time_limit, seed=seed), hint=hint)
                res.append((r["status"], r["seconds"], r["objective"], r["bound"]))
                continue
            b = build(p, ObjectiveSpec("weighted", weights=np.ones(1)), opts, hint=hint)
            r = run(b, SolverConfig(time_limit=args.time_limit, workers=2, seed=seed))
            res.append((r.status, r.seconds, r.objective, r.bound))
        proven = [x for x in res if x[0] == "OPTIMAL"]
        med = statistics.median([x[1] for x in proven]) if proven else None
        worst = max(res, key=lambda x: (x[0] != "OPTIMAL", x[1]))
        rows.append(f"| {name} | {len(proven)}/{len(res)} | "
                    f"{'–' if med is None else f'{med:.1f} s'} | "
                    f"{fmt(worst[2])} / {fmt(worst[3])} |")
        print(rows[-1], flush=True)
    return "\n".join(rows)


def suite_bounds(args) -> str:
    """Lower bounds on RLG graphs: static, CP-SAT's own, exact search, projections."""
    rows = ["| graph | static (forced live) | best order (beam+windows) | exact search bound "
            "(alone) | CP-SAT bound (alone) | projection bound | time each |",
            "|---|---|---|---|---|---|---|"]
    for n in args.sizes:
        path = rlg_file(n)
        g = read_nx_json(str(path))
        p = from_graph(g, static())
        st = int(p.lower_bound[0])
        s = solve(g, time_limit=args.time_limit, bounds=False, search=False, cpsat=False)
        ub = int(s.peak_bytes[0])
        order = list(s.order)
        r = best_first(p, upper=ub, time_limit=args.time_limit)
        sb = r.bound
        b = build(p, ObjectiveSpec("weighted", weights=np.ones(1)), ModelOptions(), hint=order)
        cr = run(b, SolverConfig(time_limit=args.time_limit, workers=2))
        from cpsched.strategies.min_peak.projection import projection_bound
        pb, pst = projection_bound(p, order, upper=ub,
                                   deadline=time.perf_counter() + args.time_limit,
                                   per_try=args.time_limit / 3)
        rows.append(f"| {short(path)} | {st:,} | {ub:,} | {fmt(sb)} | {fmt(cr.bound)} | "
                    f"{fmt(pb)} | {args.time_limit:.0f} s |")
        print(rows[-1], flush=True)
    return "\n".join(rows)


def _best_heuristic(s, skip) -> tuple[str, int]:
    """The best heuristic order among a ``solve`` result's baselines (first scenario)."""
    heur = {k: v[0] for k, v in s.info["baselines"].items() if k not in skip}
    best = min(heur, key=heur.get)
    return best, int(heur[best])


def suite_xla(args) -> str:
    """Real model graphs (HLO) from the XLA benchmark folders."""
    from cpsched.readers import read_graph
    rows = [f"| graph | ops | given | best heuristic | cp peak | proven bound | gap | status | "
            f"vs best heuristic | elapsed |", "|---|---|---|---|---|---|---|---|---|---|"]
    details, medians = [], []
    for path in sorted((SHARED / "peer-cases" / "xla-models").glob("*.hlo")):
        if args.graphs and not any(k in path.stem for k in args.graphs):
            continue
        g = read_graph(str(path))
        gaps = []
        for r in range(args.runs):
            s = solve(g, time_limit=args.time_limit, workers=2, seed=r)
            bh, bpk = _best_heuristic(s, skip=("hint",))
            pk, lb = int(s.peak_bytes[0]), int(s.lower_bound_bytes[0])
            gaps.append(100 * (pk - lb) / pk)
            rows.append(f"| {path.stem} | {g.n_ops} | {s.info['baselines']['given'][0]:,} | "
                        f"{bh} {bpk:,} | {pk:,} | {lb:,} | {gaps[-1]:.1f} % | "
                        f"{s.status} | {pct(pk, bpk)} | {s.seconds:.0f} s |")
            print(rows[-1], flush=True)
            details.append(f"- {path.stem} run {r}: "
                           + "; ".join(_phase_txt(ph) for ph in s.info["phases"]))
        if args.runs > 1:
            medians.append(f"- {path.stem}: median gap {statistics.median(gaps):.1f} % over "
                           f"{args.runs} runs (seeds 0-{args.runs - 1})")
    return "\n".join(rows) + "\n\n" + "\n".join(medians + details)


HLO_DUMPS = ("gpt2l_train", "mlp_train", "cnn_train", "sharded_dp_tp")


def suite_hlo(args) -> str:
    """Our own JAX dumps (models/hlo/): XLA's order and XLA:CPU's memory-optimized order
    (the ``.memopt`` twin of each module) against the best heuristic and cp, at each limit
    of ``--limits``."""
    from cpsched.analysis.memory import simulate
    from cpsched.readers import read_graph
    limits = [float(x) for x in args.limits.split(",")]
    rows = ["| module | ops | XLA order | XLA memopt order | best heuristic | limit | cp peak | "
            "proven bound | gap | status | vs better XLA order | vs XLA order | time |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    details = []
    for name in HLO_DUMPS:
        path = REPO / "models" / "hlo" / f"{name}.hlo"
        g = read_graph(str(path))
        xla = int(simulate(g, g.default_order()).peak[0])
        mo_path = path.with_name(f"{name}.memopt.hlo")
        mo = None
        if mo_path.exists():
            gm = read_graph(str(mo_path))
            mo = int(simulate(gm, gm.default_order()).peak[0])
        better = min(x for x in (xla, mo) if x is not None)
        for lim in limits:
            s = solve(g, time_limit=lim, workers=2)
            bh, bpk = _best_heuristic(s, skip=("hint", "given"))
            pk, lb = int(s.peak_bytes[0]), int(s.lower_bound_bytes[0])
            rows.append(f"| {name} | {g.n_ops} | {xla:,} | {fmt(mo)} | {bh} {bpk:,} | "
                        f"{lim:.0f} s | {pk:,} | {lb:,} | {100 * (pk - lb) / pk:.1f} % | "
                        f"{s.status} | {pct(pk, better)} | {pct(pk, xla)} | {s.seconds:.0f} s |")
            print(rows[-1], flush=True)
            details.append(f"- {name}, {lim:.0f} s: "
                           + "; ".join(_phase_txt(ph) for ph in s.info["phases"]))
            if s.status == "OPTIMAL":
                break
    return "\n".join(rows) + "\n\n" + "\n".join(details)


def _bucket_cases():
    """Symbolic generator graphs and their buckets: (label, graph, Scenarios)."""
    from cpsched.core.scenarios import Scenarios
    sys.path.insert(0, str(REPO))
    from cpsched.generators import mlp_train, transformer_parallel, transformer_train, unet

    def buckets(dims, rows, weights=None):
        names = tuple(",".join(f"{d}={v}" for d, v in zip(dims, r)) for r in rows)
        w = np.ones(len(rows)) / len(rows) if weights is None else np.asarray(weights, float)
        return Scenarios(names, dims, np.array(rows), w / w.sum())

    return [
        ("transformer_train(layers=2), s buckets, b=8", transformer_train(layers=2),
         buckets(("b", "s"), [(8, 256), (8, 512), (8, 1024), (8, 2048), (8, 4096)],
                 [0.3, 0.3, 0.2, 0.1, 0.1])),
        ("transformer_train(layers=4), (b, s) at 8k tokens", transformer_train(layers=4),
         buckets(("b", "s"), [(32, 256), (16, 512), (8, 1024), (4, 2048)])),
        ("transformer_parallel(dp=2, tp=4, sp=True), s buckets, b=4",
         transformer_parallel(sp=True),
         buckets(("b", "s"), [(4, 512), (4, 1024), (4, 2048), (4, 4096)])),
        ("mlp_train(layers=4), b buckets", mlp_train(),
         buckets(("b",), [(16,), (64,), (256,), (1024,), (4096,)])),
        ("unet(backward=True, spatial='h'), h buckets, b=4",
         unet(backward=True, spatial="h"),
         buckets(("b", "h"), [(4, 4), (4, 8), (4, 16), (4, 32)])),
    ]


def suite_buckets(args) -> str:
    """The price of one order for every bucket: each bucket's peak under the shared order
    (weighted and minimax objectives) against that bucket solved alone."""
    rows = ["| graph | ops | bucket | weight | shared order, weighted | shared order, minimax | "
            "bucket alone: best / bound | price (weighted / minimax vs alone best) | "
            "certified price (vs alone bound) |",
            "|---|---|---|---|---|---|---|---|---|"]
    summary = []
    for label, g, sc in _bucket_cases():
        joint = {obj: solve(g, sc, objective=obj, time_limit=args.time_limit, workers=2)
                 for obj in ("weighted", "minimax")}
        worst = {"weighted": 0.0, "minimax": 0.0}
        for k, name in enumerate(sc.names):
            one = sc.only(k)
            a = solve(g, one, time_limit=args.time_limit / 2, workers=2)
            best, lb = int(a.peak_bytes[0]), int(a.lower_bound_bytes[0])
            pw, pm = int(joint["weighted"].peak_bytes[k]), int(joint["minimax"].peak_bytes[k])
            for obj, pk in (("weighted", pw), ("minimax", pm)):
                worst[obj] = max(worst[obj], 100.0 * (pk - best) / best)
            cert = min(pw, pm)
            rows.append(f"| {label} | {g.n_ops} | {name} | {sc.weights[k]:.2f} | {pw:,} | "
                        f"{pm:,} | {best:,} / {lb:,} ({a.status}) | {pct(pw, best)} / "
                        f"{pct(pm, best)} | {pct(cert, lb)} |")
            print(rows[-1], flush=True)
        summary.append(f"- {label}: worst bucket {worst['weighted']:+.2f} % (weighted), "
                       f"{worst['minimax']:+.2f} % (minimax); joint status "
                       f"{joint['weighted'].status} / {joint['minimax'].status} in "
                       f"{joint['weighted'].seconds:.0f} / {joint['minimax'].seconds:.0f} s")
    return "\n".join(rows) + "\n\n" + "\n".join(summary)


SUITES = {"xla": suite_xla, "hlo": suite_hlo, "buckets": suite_buckets, "checkmate": suite_checkmate, "rlg": suite_rlg, "naive": suite_naive,
          "models": suite_models, "bounds": suite_bounds}


def write_section(name: str, body: str, command: str) -> None:
    text = RESULTS.read_text() if RESULTS.exists() else "# Minimum-peak ordering (`cp`)\n"
    block = (f"<!-- auto:{name} -->\nCommand: `{command}`  \n"
             f"Machine: {platform.processor() or platform.machine()}, "
             f"{time.strftime('%Y-%m-%d')}\n\n{body}\n<!-- /auto:{name} -->")
    pat = re.compile(rf"<!-- auto:{re.escape(name)} -->.*?<!-- /auto:{re.escape(name)} -->",
                     re.S)
    text = pat.sub(lambda m: block, text) if pat.search(text) else text.rstrip() + "\n\n" + block + "\n"
    RESULTS.write_text(text)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("suite", choices=sorted(SUITES))
    ap.add_argument("--time-limit", type=float, default=5.0)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--sizes", default="100,250,500,1000")
    ap.add_argument("--graphs", default="",
                    help="xla: comma-separated parts of module names to run (default: all)")
    ap.add_argument("--limits", default="60,300", help="hlo: time limits to run in turn")
    ap.add_argument("--write", action="store_true", help="update results_cp_memory.md")
    ap.add_argument("--section", default=None, help="section name (default: the suite)")
    args = ap.parse_args(argv)
    args.sizes = [int(x) for x in args.sizes.split(",")]
    args.graphs = [x for x in args.graphs.split(",") if x]
    if not MOCCASIN.exists():
        print("shared peer cases not found; nothing to do", file=sys.stderr)
        return 0
    body = SUITES[args.suite](args)
    print(body)
    if args.write:
        cmd = "python benchmarks/bench_cp_memory.py " + " ".join(
            a for a in (argv if argv is not None else sys.argv[1:]))
        write_section(args.section or args.suite, body, cmd)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
