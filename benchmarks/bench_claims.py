"""Claims against the written files, and budgets against what is written, over every
program of the repository and the peer cases (the main suite's ``tests/test_claims.py``
and ``tests/test_promises.py`` check a share of these; this runs them all).

Every run goes through the command line's entry point (``cpsched.cli.main``, in this
process: start-up is not what is measured):

- claims: ``schedule INPUT --method M -o OUT --json`` for every order method (the memory
  and overlap heuristics, ``cp`` and ``cp-overlap`` at ``--time-limit 2``), then
  ``simulate INPUT --schedule OUT --json`` and, for HLO, ``simulate OUT --json``: the peak
  printed must be the one claimed, per scenario.
- budgets: ``schedule INPUT --method M --budget B -o OUT --json`` for ``cp``, ``cp-overlap``,
  a memory heuristic and the remat heuristics at 95 % of the input order's peak and at a
  byte budget just above the proven minimum; an exit 0 must leave a file whose peak
  (``simulate`` of the written module, or the plan's replayed peak for JSON) is within the
  budget, an exit 2 must leave no file.

    python benchmarks/bench_claims.py            # writes benchmarks/results_claims.md
    python benchmarks/bench_claims.py --quick    # the main suite's share, printed only
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from cpsched import api  # noqa: E402
from cpsched.cli import main  # noqa: E402
from cpsched.methods import load_all  # noqa: E402

SHARED = REPO.parent / "shared" / "peer-cases"
RESULTS = REPO / "benchmarks" / "results_claims.md"
SOLVER_LIMIT = "2"
BUDGET_METHODS = ["cp", "cp-overlap", "xla-dfs", "remat-span", "remat-xla", "remat-dtr",
                  "remat-sqrt"]


def inputs(quick: bool) -> list[Path]:
    hlo = REPO / "models" / "hlo"
    out = sorted(hlo.glob("*.hlo")) + sorted((hlo / "corpus").glob("*.hlo.gz"))
    out += sorted((REPO / "models" / "graphs").glob("*.json"))
    if SHARED.is_dir():
        out += sorted((SHARED / "xla").glob("*.hlo")) + sorted((SHARED / "xla-models").glob("*.hlo"))
        out += sorted((SHARED / "moccasin").glob("*.json"))
    if quick:
        out = [p for p in out if ".memopt." not in p.name and "llama" not in p.name][:12]
    return out


def run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


def peaks_of(text: str) -> dict | None:
    try:
        return json.loads(text)["peak_bytes"]
    except (ValueError, KeyError):
        return None


def check_claims(src: Path, tmp: Path, stats: dict, bad: list) -> None:
    g = api.read(str(src))
    hlo = api.hlo_module_of(g) is not None
    names = [m.name for m in load_all().values()
             if m.family in ("memory", "overlap") and m.applies(g)]
    for name in names:
        out = tmp / f"{src.name.split('.')[0]}.{name}{'.hlo' if hlo else '.json'}"
        argv = ["schedule", src, "--method", name, "-o", out, "--json"]
        if api.is_solver(name):
            argv += ["--time-limit", SOLVER_LIMIT]
        rc, stdout, _ = run(*argv)
        if rc != 0:
            stats["refused"] += 1
            continue
        claimed = peaks_of(stdout)
        stats["written"] += 1
        rc, stdout, err = run("simulate", src, "--schedule", out, "--json")
        seen = [peaks_of(stdout)]
        if hlo:
            seen.append(peaks_of(run("simulate", out, "--json")[1]))
        if any(s != claimed for s in seen):
            bad.append(f"{src.name} {name}: claimed {claimed}, simulated {seen} {err.strip()}")
        out.unlink(missing_ok=True)


def check_budgets(src: Path, tmp: Path, stats: dict, bad: list) -> None:
    g = api.read(str(src))
    sc = api.scenarios_for(g)
    if len(sc) > 1:
        return
    hlo = api.hlo_module_of(g) is not None
    given = api.simulate(g).peak[sc.names[0]]
    floor = int(api.known_lower_bound(g, sc)[0][0])
    for budget in ("95%", str(max(floor + 1, (floor + given) // 2))):
        for name in BUDGET_METHODS:
            out = tmp / f"b.{name}{'.hlo' if hlo else '.json'}"
            argv = ["schedule", src, "--method", name, "--budget", budget, "-o", out, "--json"]
            if api.is_solver(name):
                argv += ["--time-limit", SOLVER_LIMIT]
            rc, stdout, err = run(*argv)
            stats["budget_runs"] += 1
            written = [out, Path(str(out) + ".plan.json")]
            if rc == 2:
                stats["budget_refused"] += 1
                if any(p.exists() for p in written):
                    bad.append(f"{src.name} {name} {budget}: refused but wrote a file")
                continue
            if rc != 0:
                bad.append(f"{src.name} {name} {budget}: exit {rc}: {err.strip()[:200]}")
                continue
            d = json.loads(stdout)
            limit = d["budget_bytes"][sc.names[0]]
            if hlo:  # the written module, clones and host copies included
                peak = peaks_of(run("simulate", out, "--json")[1])[sc.names[0]]
            elif not name.startswith("remat"):  # the written order, as the input's
                peak = peaks_of(run("simulate", src, "--schedule", out, "--json")[1])
                peak = peak[sc.names[0]]
            else:  # a plan JSON: its peak, replayed before it was written
                peak = json.loads(out.read_text())["peak_bytes"][sc.names[0]]
            stats["budget_kept"] += 1
            if peak > limit:
                bad.append(f"{src.name} {name} {budget}: exit 0 with {peak} B > budget {limit} B")
            for p in written:
                p.unlink(missing_ok=True)


def main_() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="12 inputs, nothing written")
    args = ap.parse_args()
    t0 = time.perf_counter()
    stats = dict(inputs=0, written=0, refused=0, budget_runs=0, budget_kept=0, budget_refused=0)
    bad: list[str] = []
    with tempfile.TemporaryDirectory() as d:
        for src in inputs(args.quick):
            stats["inputs"] += 1
            check_claims(src, Path(d), stats, bad)
            check_budgets(src, Path(d), stats, bad)
            print(src.name, stats, len(bad), flush=True)
    seconds = time.perf_counter() - t0
    lines = [
        "# Claims against written files, budgets against what is written",
        "",
        "Made by `python benchmarks/bench_claims.py` (every program under `models/hlo`, its",
        "corpus with both XLA:CPU orders, `models/graphs` and the peer cases; solvers at",
        f"`--time-limit {SOLVER_LIMIT}`; budgets: 95 % of the input order's peak and half way",
        "between the static bound and that peak).",
        "",
        "| figure | count |",
        "|---|---|",
        f"| inputs | {stats['inputs']} |",
        f"| schedules written (method x input) | {stats['written']} |",
        f"| methods that refused an input | {stats['refused']} |",
        f"| claimed peak != simulate of the written file | {sum('claimed' in b for b in bad)} |",
        f"| budget runs | {stats['budget_runs']} |",
        f"| ... written with exit 0 (all within their budget unless listed) | {stats['budget_kept']} |",
        f"| ... refused with exit 2 | {stats['budget_refused']} |",
        f"| written over the budget with exit 0, or refused but written | "
        f"{sum('budget' in b or 'refused' in b for b in bad)} |",
        "",
        f"{seconds:.0f} s on a shared 2-core machine.",
    ]
    if bad:
        lines += ["", "Problems:", ""] + [f"- {b}" for b in bad]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.quick:
        RESULTS.write_text(text)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main_())
