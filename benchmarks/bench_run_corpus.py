"""Does every module cpsched writes compute what XLA's own order computes? On XLA:CPU.

    CPSCHED_JAX_PYTHON=PY python benchmarks/bench_run_corpus.py      # writes results_run_corpus.md

For every corpus program (the bundled dumps in models/hlo/ and models/hlo/corpus/, XLA:CPU's
default-scheduler variant; ``--variants all`` adds the memory-optimized ones), cpsched writes
a module with every method and objective exactly as ``tests/xla/test_xla_accepts.py`` does
(each heuristic, cp, cp-overlap with ``--async-collectives``, the GPU post-processors on the
split graph, cp-remat with and without eviction and cp-joint at the tightest of 80/90/97/100
% of the given order's peak that they meet; 2 s solver limits). ``cpsched run``'s machinery
(``cpsched.measure.measure_group``) then runs the source module and all of its written
modules in one child process on the same seeded inputs and compares each one's outputs with
the source's: integers exactly, floats within rtol 1e-4 (f32) or 2e-2 (bf16/f16) of |ref| +
max|ref|. The table counts, per program, the modules written, those whose outputs equal
the source's, those that differ, and those XLA:CPU would not run (with the reason); runs
cpsched refused (no module written) are listed apart.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import hashlib
import importlib.util
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from cpsched.measure import jax_python, measure_group  # noqa: E402


def _writer():
    """``write_all`` of the XLA acceptance test: the same modules, written the same way."""
    path = REPO / "tests" / "xla" / "test_xla_accepts.py"
    spec = importlib.util.spec_from_file_location("xla_accepts_test", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.write_all


def sources(variants: str) -> list[Path]:
    seen, out = set(), []
    for p in sorted((REPO / "models" / "hlo").glob("*.hlo")):
        if (variants == "default") == (".memopt." in p.name) and variants != "all":
            continue
        digest = hashlib.sha256(p.read_bytes()).hexdigest()
        if digest not in seen:  # demo.hlo is a copy of one of the dumps
            seen.add(digest)
            out.append(p)
    for p in sorted((REPO / "models" / "hlo" / "corpus").glob("*.hlo.gz")):
        if (variants == "default") == (".memopt." in p.name) and variants != "all":
            continue
        out.append(p)
    return out


def check_source(src: Path, tmp: Path, python: str, write_all) -> dict:
    plain = tmp / src.name.removesuffix(".gz")
    if src.suffix == ".gz":
        with gzip.open(src, "rb") as f:
            plain.write_bytes(f.read())
    else:
        shutil.copy(src, plain)
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        written, refused = write_all(plain, tmp)
    t_write = time.perf_counter() - t0
    row = {"program": src.name.removesuffix(".gz").removesuffix(".hlo"), "written": len(written),
           "refused": refused, "equal": [], "differ": {}, "not_run": {},
           "write_seconds": round(t_write, 1)}
    if not written:
        return row
    t0 = time.perf_counter()
    try:
        recs = measure_group([str(plain)] + [str(p) for p in written], reference=0, repeat=1,
                             platform="cpu", python=python)
    except Exception as e:  # the child died: every module of this program is unrun
        row["not_run"] = {p.name: f"child process: {e}" for p in written}
        return row
    row["run_seconds"] = round(time.perf_counter() - t0, 1)
    src_rec = recs[0]
    if "error" in src_rec:
        row["not_run"] = {p.name: f"the source itself: {src_rec['error']}" for p in written}
        return row
    for p, rec in zip(written, recs[1:]):
        name = p.name.removeprefix(plain.stem + ".").removesuffix(".hlo")
        if "error" in rec:
            row["not_run"][name] = rec["error"]
        elif rec.get("outputs_equal"):
            row["equal"].append(name)
        else:
            row["differ"][name] = rec.get("output_check", {}).get("reason", "")
    return row


def _shown(argv: list[str]) -> list[str]:
    """The command's arguments without those that only say where results go."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in ("--out", "--json", "--rows"):
            skip = True
        elif not a.startswith(("--out=", "--json=", "--rows=")):
            out.append(a)
    return out


_VARIANTS = {"default": "dumps with XLA:CPU's default scheduler",
             "memopt": "dumps with XLA:CPU's memory-optimized scheduler",
             "all": "dumps with each of XLA:CPU's two schedulers"}


def _variant(argv: list[str]) -> str:
    for k, a in enumerate(argv):
        if a.startswith("--variants="):
            return a.split("=", 1)[1]
        if a == "--variants" and k + 1 < len(argv):
            return argv[k + 1]
    return "default"


def table(rows: list[dict], argv: list[str], env: dict) -> str:
    total = sum(r["written"] for r in rows)
    equal = sum(len(r["equal"]) for r in rows)
    differ = sum(len(r["differ"]) for r in rows)
    not_run = sum(len(r["not_run"]) for r in rows)
    lines = [
        "# Written modules run on XLA:CPU: outputs against the source order",
        "",
        "Command: `" + " ".join(["CPSCHED_JAX_PYTHON=PY python benchmarks/bench_run_corpus.py",
                                 *_shown(argv)]) + "`",
        "",
        f"jax {env['jax']} on {env['machine']} (XLA:CPU), {env['date']}; measured while other "
        "work shared the machine's 2 cores (only outputs are compared here, no times).",
        "",
        f"**{equal} of {total} written modules ({100 * equal / max(total, 1):.1f} %) compute "
        f"the source order's outputs**; {differ} differ; {not_run} could not be run. Sources: "
        f"the {len(rows)} programs' {_VARIANTS[_variant(argv)]}. Every "
        "method and objective, as `tests/xla/test_xla_accepts.py` writes them (2 s solver "
        "limits; remat and joint at the tightest of 80/90/97/100 % of the given order's peak "
        "that they meet). Inputs: seeded uniform [-1, 1) floats, integers in [0, 4); floats "
        "compared within rtol 1e-4 (f32), 2e-2 (bf16/f16) of |ref| + max|ref|, integers "
        "exactly.",
        "",
        "| program | written | outputs equal | differ | not run | cpsched refused |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        refused = ", ".join(sorted(r["refused"])) or "-"
        lines.append(f"| {r['program']} | {r['written']} | {len(r['equal'])} | "
                     f"{len(r['differ']) or '-'} | {len(r['not_run']) or '-'} | {refused} |")
    if any(r["program"] == "demo" for r in rows):
        lines += ["", "demo: `models/hlo/demo.hlo`, the bundled copy of sharded_dp_tp "
                  "(byte-identical, so that file is not run twice)."]
    problems = [(r["program"], k, v, "differ") for r in rows for k, v in r["differ"].items()]
    problems += [(r["program"], k, v, "not run") for r in rows for k, v in r["not_run"].items()]
    if problems:
        lines += ["", "## Modules that differ or did not run", ""]
        lines += [f"- {p} {k} ({what}): {v}" for p, k, v, what in problems]
    refusals = [(r["program"], k, v) for r in rows for k, v in r["refused"].items()]
    if refusals:
        lines += ["", "## Runs cpsched refused (no module written)", ""]
        lines += [f"- {p} {k}: {v.splitlines()[0][:200] if v else ''}" for p, k, v in refusals]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", choices=("default", "memopt", "all"), default="default",
                    help="XLA:CPU's default-scheduler dumps, its memory-optimized ones, or both")
    ap.add_argument("--only", default="", help="comma-separated program names")
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results_run_corpus.md"))
    ap.add_argument("--json", help="also write the per-program rows as JSON here")
    ap.add_argument("--rows", help="only write the table, from a --json file of an earlier "
                    "run (its environment line as given by --env)")
    ap.add_argument("--env", help="with --rows: 'jax=VERSION,date=YYYY-MM-DD'")
    a = ap.parse_args(argv)
    if a.rows:
        rows = json.loads(Path(a.rows).read_text())
        given = dict(kv.split("=", 1) for kv in (a.env or "").split(",") if "=" in kv)
        env = {"jax": given.get("jax", "?"), "date": given.get("date", "?"),
               "machine": f"{platform.machine()} {os.cpu_count()} cores"}
        Path(a.out).write_text(table(rows, [x for x in argv if not x.startswith("--env")
                                            and x != a.env], env))
        return 0
    python = jax_python()
    if python is None:
        print("bench_run_corpus: needs CPSCHED_JAX_PYTHON (a Python with jax)", file=sys.stderr)
        return 2
    jax_version = subprocess.run([python, "-c", "import jax; print(jax.__version__)"],
                                 capture_output=True, text=True).stdout.strip()
    only = {n for n in a.only.split(",") if n}
    write_all = _writer()
    rows = []
    for src in sources(a.variants):
        name = src.name.removesuffix(".gz").removesuffix(".hlo")
        if only and name not in only:
            continue
        with tempfile.TemporaryDirectory(prefix="run-corpus-") as tmp:
            row = check_source(src, Path(tmp), python, write_all)
        rows.append(row)
        print(f"{row['program']}: {len(row['equal'])}/{row['written']} equal, "
              f"{len(row['differ'])} differ, {len(row['not_run'])} not run "
              f"({row['write_seconds']} s writing, {row.get('run_seconds', 0)} s running)",
              flush=True)
    env = {"jax": jax_version, "machine": f"{platform.machine()} {os.cpu_count()} cores",
           "date": time.strftime("%Y-%m-%d")}
    Path(a.out).write_text(table(rows, argv, env))
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    bad = sum(len(r["differ"]) + len(r["not_run"]) for r in rows)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
