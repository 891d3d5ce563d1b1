"""Real JAX programs: XLA's two orders against the best heuristic and cp, and whether XLA
accepts the module cpsched writes. Regenerate the table with

    python benchmarks/bench_real_programs.py --time-limit 30 \
        --out benchmarks/results_real_programs.md

Programs: every ``models/hlo/*.hlo`` and ``models/hlo/corpus/*.hlo.gz`` dump (XLA:CPU's
default order) that has a ``.memopt`` twin (the same program in XLA:CPU's memory-optimized
order); ``--only NAME`` picks some. Per program, everything through the command line, as a
user runs it (``cpsched info`` / ``cpsched schedule ... --json``):

- XLA default / XLA memopt: the simulated peak of each dump's own schedule (cpsched's
  accounting), and XLA's own figure, the peak of its ``*.live-range.txt`` (HloLiveRange);
- best heuristic: the lowest simulated peak among the heuristics (``cpsched methods``,
  memory and overlap families), with its name;
- cp: ``schedule --objective weighted --time-limit T``; its proven lower bound and the gap
  ``(peak - bound) / peak``;
- XLA: whether XLA's parser and schedule check accept the module cp wrote
  (``tests/xla/xla_accepts.py`` run with the jax environment, ``.venv-jax`` or
  ``CPSCHED_JAX_PYTHON``; "not checked" without one).

A program that fails anywhere becomes a row with the error; the run goes on.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

HEURISTICS = ["xla-list", "xla-dfs", "xla-postorder", "xla-bfs", "xla-default",
              "gpu-postprocess", "eager-cluster", "lhs", "bladedisc"]
CHECKER = REPO / "tests" / "xla" / "xla_accepts.py"


def programs() -> list[tuple[str, Path, Path]]:
    """(name, default-order dump, directory) for each program with a memopt twin."""
    out = []
    hlo = REPO / "models" / "hlo"
    for p in sorted(hlo.glob("*.hlo")):
        if not p.name.endswith(".memopt.hlo") and (hlo / (p.stem + ".memopt.hlo")).exists():
            out.append((p.stem, p, hlo))
    corpus = hlo / "corpus"
    for p in sorted(corpus.glob("*.hlo.gz")):
        stem = p.name[:-len(".hlo.gz")]
        if not stem.endswith(".memopt") and (corpus / f"{stem}.memopt.hlo.gz").exists():
            out.append((f"corpus/{stem}", p, corpus))
    return out


def plain(path: Path, tmp: Path) -> Path:
    """A readable copy of ``path`` (gzip files are unpacked into ``tmp``)."""
    if path.suffix != ".gz":
        return path
    dest = tmp / path.name[:-3]
    with gzip.open(path, "rb") as f, open(dest, "wb") as g:
        shutil.copyfileobj(f, g)
    return dest


class CliError(RuntimeError):
    """The command line refused: its one error line."""


def cli_json(args: list[str]) -> dict:
    """Run the command line in-process with ``--json``; raise with its error line."""
    from cpsched.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([*args, "--json"])
    if rc != 0:
        msg = err.getvalue().strip().splitlines()
        raise CliError(msg[-1] if msg else f"exit {rc}")
    return json.loads(out.getvalue())


def one(d: dict, key: str) -> int:
    """The single scenario's value of a per-scenario mapping (the dumps are static)."""
    v = d[key]
    return int(next(iter(v.values()))) if isinstance(v, dict) else int(v)


def xla_peak(directory: Path, stem: str, tmp: Path) -> int | None:
    from cpsched.readers.hlo.live_range import read_xla_live_range
    for name in (f"{stem}.live-range.txt", f"{stem}.live-range.txt.gz"):
        if (directory / name).exists():
            return read_xla_live_range(str(plain(directory / name, tmp))).peak_bytes
    return None


def jax_python() -> str | None:
    env = os.environ.get("CPSCHED_JAX_PYTHON")
    if env:
        return env
    cand = REPO / ".venv-jax" / "bin" / "python"
    return str(cand) if cand.exists() else None


def xla_accepts(path: Path) -> str:
    py = jax_python()
    if py is None:
        return "not checked"
    proc = subprocess.run([py, str(CHECKER), str(path)], capture_output=True, text=True)
    recs = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    if not recs:
        return "checker failed: " + (proc.stderr.strip().splitlines() or ["?"])[-1][:120]
    r = recs[0]
    return "yes" if r["ok"] else f"no ({r.get('stage')}: {str(r.get('error'))[:160]})"


def measure(name: str, src: Path, directory: Path, time_limit: float, tmp: Path) -> dict:
    row: dict = {"program": name}
    stem = src.name[:-len(".hlo.gz")] if src.name.endswith(".gz") else src.stem
    default = plain(src, tmp)
    memopt = plain(directory / (src.name.replace(".hlo", ".memopt.hlo")), tmp)
    info = cli_json(["info", str(default)])
    row["ops"] = info["ops"]
    row["xla_default"] = one(info, "peak_bytes")
    row["xla_memopt"] = one(cli_json(["info", str(memopt)]), "peak_bytes")
    row["xla_default_own"] = xla_peak(directory, stem, tmp)
    row["xla_memopt_own"] = xla_peak(directory, stem + ".memopt", tmp)
    best = None
    for m in HEURISTICS:
        try:
            d = cli_json(["schedule", str(default), "--method", m, "-o",
                          str(tmp / f"{stem}.{m}.hlo")])
        except Exception as e:      # one heuristic failing does not lose the row
            row.setdefault("heuristic_errors", {})[m] = str(e)
            continue
        p = one(d, "peak_bytes")
        if best is None or p < best[1]:
            best = (m, p)
    if best is not None:
        row["best_heuristic"], row["best_heuristic_peak"] = best
    out = tmp / f"{stem}.cp.hlo"
    t0 = time.perf_counter()
    d = cli_json(["schedule", str(default), "--objective", "weighted",
                  "--time-limit", str(time_limit), "-o", str(out)])
    row["cp_seconds"] = round(time.perf_counter() - t0, 1)
    row["cp_status"] = d.get("status")
    row["cp"] = one(d, "peak_bytes")
    row["bound"] = one(d, "lower_bound_bytes")
    row["gap"] = (row["cp"] - row["bound"]) / row["cp"] if row["cp"] else 0.0
    xla_best = min(row["xla_default"], row["xla_memopt"])
    row["cp_vs_xla"] = (row["cp"] - xla_best) / xla_best if xla_best else 0.0
    row["xla_accepts"] = xla_accepts(out)
    return row


def fmt(v) -> str:
    text = f"{v:,}" if isinstance(v, int) else ("-" if v is None else str(v))
    return text.replace("|", "/").replace("\n", " ")


def table(rows: list[dict], time_limit: float, command: str) -> str:
    lines = [
        "# Real programs: XLA's orders, the best heuristic and cp",
        "",
        f"Command: `{command}`",
        "",
        "Peaks in bytes. *ops*: `cpsched info`'s op count. "
        "*XLA default* / *XLA memopt*: the simulated peak of the dump's own "
        "schedule (XLA:CPU's default order and its memory-optimized one), with XLA's own "
        "figure (the peak of its HloLiveRange file) after the slash. *best heuristic*: the "
        "lowest peak of cpsched's heuristics. *cp*: `cpsched schedule --objective weighted "
        f"--time-limit {time_limit:g}`, its proven lower bound and gap = (peak - bound) / peak; "
        "*cp vs XLA* = (cp - the lower of the two XLA peaks) / that peak, by cpsched's "
        "accounting (negative: cp is lower). "
        "*XLA accepts*: XLA's parser and schedule check (tests/xla/xla_accepts.py) on the "
        "module cp wrote.",
        "",
        "| program | ops | XLA default (ours / XLA) | XLA memopt (ours / XLA) | best heuristic "
        "| cp | bound | gap | cp vs XLA | cp s | XLA accepts |",
        "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['program']} | error: {fmt(r['error'])} ||||||||||")
            continue
        best = (f"{r['best_heuristic']} {fmt(r['best_heuristic_peak'])}"
                if "best_heuristic" in r else "-")
        lines.append(
            f"| {r['program']} | {fmt(r['ops'])} "
            f"| {fmt(r['xla_default'])} / {fmt(r['xla_default_own'])} "
            f"| {fmt(r['xla_memopt'])} / {fmt(r['xla_memopt_own'])} | {best} "
            f"| {fmt(r['cp'])} | {fmt(r['bound'])} | {100 * r['gap']:.2f} % "
            f"| {100 * r['cp_vs_xla']:+.2f} % "
            f"| {r['cp_seconds']} | {fmt(r['xla_accepts'])} |")
    errs = [(r["program"], m, e) for r in rows for m, e in r.get("heuristic_errors", {}).items()]
    if errs:
        lines += ["", "Heuristics that failed (left out of *best heuristic*):", ""]
        lines += [f"- {p}, {m}: {fmt(e)}" for p, m, e in errs]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=30.0, help="cp seconds per program")
    ap.add_argument("--only", action="append", default=[], help="program name (repeatable)")
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results_real_programs.md"))
    args = ap.parse_args(argv)
    command = "python benchmarks/bench_real_programs.py --time-limit " \
              f"{args.time_limit:g} --out benchmarks/results_real_programs.md" + \
              "".join(f" --only {o}" for o in args.only)
    rows = []
    for name, src, directory in programs():
        if args.only and name not in args.only:
            continue
        print(f"{name} ...", file=sys.stderr, flush=True)
        with tempfile.TemporaryDirectory() as tmp:
            try:
                row = measure(name, src, directory, args.time_limit, Path(tmp))
            except Exception as e:  # a failing program is a row, never the end of the run
                what = str(e) if isinstance(e, CliError) else f"{type(e).__name__}: {e}"
                row = {"program": name, "error": what[:300]}
            # messages name the unpacked copies: keep only their file names
            row = json.loads(json.dumps(row).replace(tmp + os.sep, ""))
        rows.append(row)
        print(f"  {row}", file=sys.stderr, flush=True)
    text = table(rows, args.time_limit, command)
    Path(args.out).write_text(text)
    Path(args.out).with_suffix(".json").write_text(json.dumps(rows, indent=1) + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
