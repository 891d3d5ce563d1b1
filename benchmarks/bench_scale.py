"""Anytime at scale: ``cpsched schedule --time-limit T`` on layered graphs of 1k to 1M ops.

    python benchmarks/bench_scale.py --sizes 1000,10000,100000,1000000 \\
        --limits 1000:10,10000:30,100000:60,100000:300,1000000:300 --repeat 3 \\
        --signal 100000:300:60 --out benchmarks/results_scale.md

Graphs: ``cpsched.generators.layered(n, preds=5, seed=0)`` (about 5 predecessors per op,
layers of ``0.6 sqrt(n)`` ops), written as cpsched JSON into ``--workdir`` (a temporary
folder by default). Each run is the command line in a child process, default method
(``cp``) and options: the wall time is measured around the child (interpreter start,
reading, solving, checking and writing included), the peak RSS is the child's
(``wait4``), the written schedule is read back and checked with the validator, and the
peak is compared with the best warm-start heuristic the solver reports. Runs of one size
and limit repeat ``--repeat`` times (at most ``--max-repeat-ops`` ops; larger graphs run
once) and the table gives the median. ``--signal N:T:S`` sends SIGTERM ``S`` seconds into
a run of ``N`` ops with limit ``T`` and checks that the best schedule so far was written,
valid and marked interrupted (exit 143). The curve of peak against time is the LNS's
record of improvements in the longest run of the largest size below 1M ops.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from cpsched import api  # noqa: E402
from cpsched.analysis.validate import validate_order  # noqa: E402
from cpsched.generators import layered  # noqa: E402
from cpsched.writers import write_json  # noqa: E402
from cpsched.writers.json_graph import graph_to_dict  # noqa: E402
from cpsched.writers.schedule import read_order  # noqa: E402


def graph_file(n: int, workdir: Path) -> Path:
    path = workdir / f"layered_n{n}.json"
    if not path.exists():
        write_json(str(path), graph_to_dict(layered(n, preds=5, seed=0)))
    return path


def run_once(src: Path, limit: float, out: Path, term_after: float | None = None) -> dict:
    cmd = [sys.executable, "-m", "cpsched", "schedule", str(src), "-o", str(out)]
    cmd += ["--time-limit", str(limit), "--json"]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as so, tempfile.TemporaryFile() as se:
        child = subprocess.Popen(cmd, stdout=so, stderr=se, env=env)
        if term_after is not None:
            time.sleep(term_after)
            child.send_signal(signal.SIGTERM)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        so.seek(0)
        se.seek(0)
        stdout, stderr = so.read().decode(), se.read().decode()
    row = {
        "wall": wall,
        "rss_mb": usage.ru_maxrss / 1024,
        "code": child.returncode,
        "stderr_tail": stderr.strip().splitlines()[-3:],
    }
    try:
        summary = json.loads(stdout)
    except ValueError:
        return row
    data = json.loads(out.read_text())
    row.update(
        status=data.get("status"),
        peak=int(next(iter(data["peak_bytes"].values()))),
        best_heuristic=data.get("best_heuristic"),
        heuristic_peak=min(int(v[0]) for v in data.get("baselines", {}).values()),
        interrupted=bool(summary.get("interrupted") or data.get("interrupted")),
        phases=data.get("phases", []),
    )
    return row


def check_valid(src: Path, out: Path) -> bool:
    g = api.read(str(src))
    validate_order(g, read_order(g, str(out)))
    return True


def fmt_bytes(b: int) -> str:
    return f"{b:,}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000,1000000")
    ap.add_argument(
        "--limits",
        default="1000:10,10000:30,100000:60,100000:300,1000000:300",
        help="N:T pairs (ops:seconds), comma separated",
    )
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-repeat-ops", type=int, default=10000)
    ap.add_argument("--signal", default="", help="N:T:S, SIGTERM S seconds into a run")
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results_scale.md"))
    ap.add_argument("--json-out", default=None, help="raw rows as JSON (default: none)")
    ap.add_argument(
        "--rows-from",
        default=None,
        help="raw rows (--json-out) of an earlier run: rows of sizes and limits not run now "
        "are taken from it, and its command is shown (default: none)",
    )
    ap.add_argument(
        "--earlier-command", default="", help="the command that made --rows-from (default: none)"
    )
    args = ap.parse_args(argv)
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="cpsched-scale-"))
    workdir.mkdir(parents=True, exist_ok=True)
    sizes = [int(x) for x in args.sizes.split(",") if x]
    limits = [tuple(x.split(":")) for x in args.limits.split(",") if x]
    rows = []
    for n_s, t_s in limits:
        n, limit = int(n_s), float(t_s)
        if n not in sizes:
            continue
        t = time.perf_counter()
        src = graph_file(n, workdir)
        print(f"graph n={n}: {time.perf_counter() - t:.1f} s", flush=True)
        reps = args.repeat if n <= args.max_repeat_ops else 1
        runs = []
        for k in range(reps):
            out = workdir / f"out_n{n}_t{limit:g}_{k}.json"
            r = run_once(src, limit, out)
            r["valid"] = r.get("peak") is not None and check_valid(src, out)
            runs.append(r)
            print(
                f"n={n} T={limit:g} run {k}: wall {r['wall']:.2f} s, rss {r['rss_mb']:.0f} MB,"
                f" code {r['code']}, peak {r.get('peak')}, heuristic {r.get('heuristic_peak')},"
                f" valid {r['valid']}",
                flush=True,
            )
        rows.append({"n": n, "limit": limit, "runs": runs})
    sig_row = None
    if args.rows_from:
        old = json.loads(Path(args.rows_from).read_text())
        done = {(r["n"], r["limit"]) for r in rows}
        for r in old["rows"]:
            if (r["n"], r["limit"]) not in done:
                r["earlier"] = True
                rows.append(r)
        rows.sort(key=lambda r: (r["n"], r["limit"]))
        if not args.signal:
            sig_row = old.get("signal")
    if args.signal:
        n_s, t_s, s_s = args.signal.split(":")
        n, limit, after = int(n_s), float(t_s), float(s_s)
        src = graph_file(n, workdir)
        out = workdir / f"out_n{n}_sigterm.json"
        r = run_once(src, limit, out, term_after=after)
        r["valid"] = r.get("peak") is not None and check_valid(src, out)
        r.update(n=n, limit=limit, after=after)
        sig_row = r
        print(f"SIGTERM: code {r['code']} wall {r['wall']:.2f} valid {r['valid']}", flush=True)
    text = render(rows, sig_row, args, argv)
    Path(args.out).write_text(text)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"rows": rows, "signal": sig_row}, indent=1))
    print(f"wrote {args.out}")
    return 0


def _phase(run: dict, name: str) -> dict:
    return next((p for p in run.get("phases", []) if p.get("phase") == name), {})


HIDDEN = ("--workdir", "--json-out", "--out", "--rows-from", "--earlier-command")


def render(rows, sig_row, args, argv) -> str:
    given = list(argv if argv is not None else sys.argv[1:])
    # where the graphs and raw rows went is this machine's business, not the command's
    shown: list[str] = []
    skip = False
    for a in given:
        if skip:
            skip = False
        elif a in HIDDEN:
            skip = True
        elif a.split("=", 1)[0] not in HIDDEN:
            shown.append(a)
    cmd = "python benchmarks/bench_scale.py " + " ".join(shown)
    made = f"Made by `{cmd}`."
    if getattr(args, "earlier_command", ""):
        made += (
            f" Rows marked * come from an earlier run, `{args.earlier_command}` (which code "
            "each run used is noted below)."
        )
    out = [
        "# Anytime at scale: time limits, memory and LNS on 1k to 1M ops",
        "",
        made,
        "",
        "Graphs: `cpsched.generators.layered(n, preds=5, seed=0)`. Each run is "
        "`python -m cpsched schedule G.json -o S.json --time-limit T --json` (method `cp`, "
        "default options: 2 workers, seed 0) in a child process. Wall: measured around the "
        "child (interpreter start, reading, solving, checking, writing). Target: within "
        "max(1 s, 5 %) of T. RSS: the child's peak resident memory. Valid: the written "
        "schedule read back and checked by the validator. vs heuristic: the written peak "
        "against the best warm-start order of the same run. Medians over the repeats where "
        "there are several (the largest sizes run once). The machine is a 2-core machine "
        "shared with other jobs while these ran, so walls and solver progress vary run to "
        "run.",
        "",
        "| ops | limit | runs | wall (median) | over limit | within target | peak RSS | "
        "valid | status | best heuristic | peak | vs heuristic | LNS windows (improved) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        n, limit, runs = row["n"], row["limit"], row["runs"]
        walls = [r["wall"] for r in runs]
        wall = statistics.median(walls)
        tol = max(1.0, 0.05 * limit)
        ok = all(r["wall"] <= limit + tol for r in runs)
        rss = max(r["rss_mb"] for r in runs)
        valid = all(r.get("valid") for r in runs)
        last = runs[len(runs) // 2]
        peaks = [r.get("peak") for r in runs if r.get("peak") is not None]
        hp = [r.get("heuristic_peak") for r in runs if r.get("heuristic_peak") is not None]
        pk = int(statistics.median(peaks)) if peaks else None
        h = int(statistics.median(hp)) if hp else None
        gain = f"{100 * (pk - h) / h:+.2f} %" if pk and h else "-"
        lns = _phase(last, "lns")
        star = "*" if row.get("earlier") else ""
        out.append(
            f"| {n:,}{star} | {limit:g} s | {len(runs)} | {wall:.2f} s "
            f"(max {max(walls):.2f}) | {wall - limit:+.2f} s | {'yes' if ok else 'NO'} | "
            f"{rss:,.0f} MB | {'yes' if valid else 'NO'} | {last.get('status')} | "
            f"{last.get('best_heuristic')} {fmt_bytes(h) if h else '-'} | "
            f"{fmt_bytes(pk) if pk else '-'} | {gain} | "
            f"{lns.get('windows', '-')} ({lns.get('improved', '-')}) |"
        )
    out += ["", "## Where the time went (median run of each row)", ""]
    out.append(
        "| ops | limit | solver clock | greedy | warm start (skipped) | LNS from | LNS stopped |"
    )
    out.append("|---|---|---|---|---|---|---|")
    for row in rows:
        r = row["runs"][len(row["runs"]) // 2]
        ws, lns = _phase(r, "heuristics"), _phase(r, "lns")
        out.append(
            f"| {row['n']:,} | {row['limit']:g} s | {ws.get('clock_limit', '-')} s | "
            f"{ws.get('greedy_seconds', '-')} s | {ws.get('warm_start_seconds', '-')} s "
            f"({', '.join(ws.get('skipped', [])) or 'none'}) | "
            f"{lns.get('at', '-')} s | {lns.get('stopped', '-')} |"
        )
    # the curve: the longest run below 1M ops
    cands = [row for row in rows if row["n"] < 1_000_000]
    if cands:
        row = max(cands, key=lambda x: (x["n"], x["limit"]))
        r = row["runs"][len(row["runs"]) // 2]
        lns = _phase(r, "lns")
        hist = lns.get("history") or []
        if hist:
            at = float(lns.get("at", 0.0))
            h0 = r.get("heuristic_peak") or hist[0][1]
            out += [
                "",
                f"## Peak against time: {row['n']:,} ops, limit {row['limit']:g} s",
                "",
                "Seconds on the solver's clock (from the start of the solve; reading the "
                "graph came before). The first point is the best warm-start order.",
                "",
                "| seconds | peak (bytes) | vs best heuristic |",
                "|---|---|---|",
            ]
            step = max(1, len(hist) // 30)
            pts = hist[::step] + ([hist[-1]] if (len(hist) - 1) % step else [])
            for e, v in pts:
                out.append(f"| {at + e:.1f} | {int(v):,} | {100 * (v - h0) / h0:+.2f} % |")
    if sig_row is not None:
        r = sig_row
        out += [
            "",
            "## SIGTERM at scale",
            "",
            f"{r['n']:,} ops, limit {r['limit']:g} s, SIGTERM after {r['after']:g} s: exit "
            f"code {r['code']} (143 expected), wall {r['wall']:.2f} s, schedule written: "
            f"{'yes' if r.get('peak') else 'NO'}, valid: {'yes' if r.get('valid') else 'NO'}, "
            f"marked interrupted: {'yes' if r.get('interrupted') else 'NO'}, peak "
            f"{fmt_bytes(r['peak']) if r.get('peak') else '-'} (best heuristic "
            f"{fmt_bytes(r['heuristic_peak']) if r.get('heuristic_peak') else '-'}).",
        ]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
