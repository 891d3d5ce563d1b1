"""Same results before and after a change that must not change behaviour.

Runs every method (and the other commands that print figures) with ``--deterministic
--workers 1 --seed 0`` on the bundled modules, the corpus and the peer cases, and keeps
what each run printed and wrote, normalized (wall-clock figures dropped, paths replaced by
placeholders). ``check`` compares two captures case by case.

    python benchmarks/same_results.py capture OUT [--tier quick|full] [--ref REV]
    python benchmarks/same_results.py check BEFORE AFTER [--stable BEFORE2]
    python benchmarks/same_results.py recheck BEFORE AFTER   # the cases that differ, again
    python benchmarks/same_results.py run [--tier quick] [--ref main] [--after REV]  # both, check

``--ref REV`` captures the package as it is at git revision REV (``git archive`` of
``cpsched/`` into a scratch folder, run with the inputs of this checkout); without it the
checkout itself runs (``--after REV`` in ``run``: that revision). ``run`` keeps the REV capture under ``.same_results/`` keyed by its
commit, so a second check against the same base only runs the checkout. Budgets are
explicit bytes (90 % of the input order's peak per scenario, from the capture's own
``simulate``), so both sides get the same numbers. Intended changes are listed in
benchmarks/same_results_expected.json (case glob and reason); every other difference exits 1.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import fnmatch
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXPECTED = REPO / "benchmarks" / "same_results_expected.json"
CACHE = REPO / ".same_results"
COMMON = ["--deterministic", "--workers", "1", "--seed", "0"]
TIME_LIMIT = {"quick": "2", "full": "5"}
# wall-clock figures (and the phase budgets cut from the wall time left): differ run to run
# whatever the code
WALL_KEYS = {"seconds", "wall", "wall_s", "timings", "elapsed", "clock_limit"}
WALL_TEXT = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?\s?(?:s|ms|seconds)\b")

QUICK_INPUTS = [
    "models/hlo/demo.hlo",
    "models/graphs/mlp_train.json",
    "models/graphs/random_layered_n50_s0.json",
    "corpus:while_cg",
    "peer:xla/latency_hiding_scheduler_test__AllGatherAsyncSimple.hlo",
]


def peer_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg).resolve()
    env = os.environ.get("CPSCHED_SHARED_DIR")
    return (Path(env) if env else REPO.parent / "shared").resolve() / "peer-cases"


def inputs(tier: str, peers: Path) -> list[Path]:
    corpus = REPO / "models" / "hlo" / "corpus"

    def resolve(spec: str) -> list[Path]:
        if spec.startswith("corpus:"):
            return sorted(corpus.glob(spec[7:] + "*.hlo*"))[:1]
        if spec.startswith("peer:"):
            p = peers / spec[5:]
            return [p] if p.exists() else []
        return [REPO / spec]

    if tier == "quick":
        return [p for s in QUICK_INPUTS for p in resolve(s)]
    found = sorted((REPO / "models" / "hlo").glob("*.hlo"))
    found += sorted((REPO / "models" / "graphs").glob("*.json"))
    found += sorted((REPO / "models" / "stablehlo").glob("*.mlir"))
    found += sorted((REPO / "models" / "stablehlo").glob("*.hlo"))
    found += sorted(corpus.glob("*.hlo.gz")) + sorted((REPO / "models/hlo/gpu").glob("*.hlo.gz"))
    for sub, pat in (("moccasin", "*.json"), ("xla", "*.hlo"), ("xla-models", "*.hlo")):
        found += sorted((peers / sub).glob(pat))
    return found


def case_id(path: Path, peers: Path) -> str:
    try:
        rel = path.relative_to(REPO)
    except ValueError:
        rel = Path("peer") / path.relative_to(peers)
    return str(rel).replace("/", "~")


def out_suffix(path: Path) -> str:
    name = path.name.removesuffix(".gz")
    return ".hlo" if name.endswith(".hlo") else ".json"


# --- running -----------------------------------------------------------------------------


def run_cli(src: Path, cwd: Path, argv: list[str], wall: float) -> tuple[int, str, str]:
    env = dict(os.environ, PYTHONPATH=str(src), PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
    try:
        p = subprocess.run(
            [sys.executable, "-m", "cpsched", *argv],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=wall,
        )
    except subprocess.TimeoutExpired:
        return -9, "", "timeout"
    return p.returncode, p.stdout, p.stderr


def normalize_json(obj, subs):
    if isinstance(obj, dict):
        return {
            k: normalize_json(v, subs)
            for k, v in obj.items()
            if k not in WALL_KEYS and not k.endswith("_seconds")
        }
    if isinstance(obj, list):
        return [normalize_json(v, subs) for v in obj]
    if isinstance(obj, str):
        return normalize_text(obj, subs)
    return obj


def normalize_text(text: str, subs) -> str:
    for old, new in subs:
        text = text.replace(old, new)
    return text


def normalize(data: str, subs, name: str) -> str:
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError):
        return normalize_text(data, subs)
    return json.dumps(normalize_json(obj, subs), indent=1) + "\n"


def variants(
    path: Path, tier: str, methods: list[dict], budget: str | None, collectives: bool
) -> list[tuple[str, list[str]]]:
    """(variant name, argv after the input path; OUT is the case's output stem)."""
    tl = ["--time-limit", TIME_LIMIT[tier]]
    sfx = out_suffix(path)
    out = []
    for m in methods:
        extra = ["--budget", budget] if m["family"] == "remat" and budget else []
        out.append(
            (
                f"schedule.{m['name']}",
                [
                    "schedule",
                    "--method",
                    m["name"],
                    "-o",
                    "OUT" + sfx,
                    "--json",
                    *tl,
                    *COMMON,
                    *extra,
                ],
            )
        )
    for obj in ("minimax", "lexicographic", "distance"):
        out.append(
            (
                f"objective.{obj}",
                ["schedule", "--objective", obj, "-o", "OUT" + sfx, "--json", *tl, *COMMON],
            )
        )
    if budget:
        for obj in ("budget", "remat", "time"):
            out.append(
                (
                    f"objective.{obj}",
                    [
                        "schedule",
                        "--objective",
                        obj,
                        "--budget",
                        budget,
                        "-o",
                        "OUT" + sfx,
                        "--json",
                        *tl,
                        *COMMON,
                    ],
                )
            )
        out.append(
            (
                "remat.keep-order",
                [
                    "schedule",
                    "--objective",
                    "remat",
                    "--keep-order",
                    "--budget",
                    budget,
                    "-o",
                    "OUT" + sfx,
                    "--json",
                    *tl,
                    *COMMON,
                ],
            )
        )
        out.append(
            (
                "remat.evict",
                [
                    "schedule",
                    "--objective",
                    "remat",
                    "--evict",
                    "--bandwidth",
                    "1e9",
                    "--budget",
                    budget,
                    "-o",
                    "OUT" + sfx,
                    "--json",
                    *tl,
                    *COMMON,
                ],
            )
        )
    out.append(
        (
            "overlap.slack",
            [
                "schedule",
                "--objective",
                "overlap",
                "--slack",
                "0.1",
                "-o",
                "OUT" + sfx,
                "--json",
                *tl,
                *COMMON,
            ],
        )
    )
    if collectives:
        out.append(
            (
                "overlap.async",
                [
                    "schedule",
                    "--objective",
                    "overlap",
                    "--async-collectives",
                    "-o",
                    "OUT" + sfx,
                    "--json",
                    *tl,
                    *COMMON,
                ],
            )
        )
    out.append(
        (
            "trace",
            [
                "schedule",
                "--method",
                "xla-list",
                "-o",
                "OUT" + sfx,
                "--trace",
                "OUT.trace.json",
                "--json",
                *tl,
                *COMMON,
            ],
        )
    )
    out.append(("info", ["info", "--json"]))
    out.append(("convert", ["convert", "-o", "OUT.json"]))
    if tier == "full" or path.stat().st_size < 100_000:
        out.append(("compare.json", ["compare", "--json", *tl, *COMMON]))
        out.append(("frontier", ["frontier", "--points", "3", "--json", *tl, *COMMON]))
    if tier == "full":
        out.append(("compare.csv", ["compare", "--csv", "OUT.csv", *tl, *COMMON]))
    return out


def run_case(
    src: Path,
    work: Path,
    blobs: Path,
    subs,
    path: Path,
    cid: str,
    name: str,
    argv: list[str],
    wall: float,
) -> dict:
    d = work / cid / name
    d.mkdir(parents=True, exist_ok=True)
    stem = str(d / "out")
    full = [argv[0], str(path), *[a.replace("OUT", stem) for a in argv[1:]]]
    rc, stdout, stderr = run_cli(src, d, full, wall)
    subs = [*subs, (stem, "<out>"), (str(d), "<out>")]
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    err = normalize_text(WALL_TEXT.sub("<t>", lines[-1]), subs) if lines else ""
    arts = {"stdout": normalize(stdout, subs, "stdout")}
    for f in sorted(d.iterdir()):
        data = f.read_bytes()
        try:
            text = data.decode()
        except UnicodeDecodeError:
            arts[f.name] = data
            continue
        arts[f.name] = normalize(text, subs, f.name) if f.suffix == ".json" else text
    hashes = {}
    for k, v in arts.items():
        b = v if isinstance(v, bytes) else v.encode()
        h = hashlib.sha256(b).hexdigest()[:16]
        (blobs / h).write_bytes(b)
        hashes[k] = h
    shutil.rmtree(d, ignore_errors=True)
    return {
        "case": f"{cid}/{name}",
        "argv": [normalize_text(a, subs) for a in full],
        "rc": rc,
        "stderr": err,
        "artifacts": hashes,
    }


def source_tree(ref: str | None, scratch: Path) -> tuple[Path, str]:
    if ref is None:
        return REPO, "worktree"
    commit = subprocess.run(
        ["git", "rev-parse", ref], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.strip()
    dest = scratch / "src"
    dest.mkdir(parents=True, exist_ok=True)
    arch = subprocess.run(
        ["git", "archive", commit, "cpsched"], cwd=REPO, capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=arch, check=True)
    return dest, commit


def capture(
    out: Path, tier: str, ref: str | None, jobs: int, peers: Path, only: str | None = None
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    blobs = out / "blobs"
    blobs.mkdir(exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="same_results."))
    try:
        src, commit = source_tree(ref, scratch)
        subs = [(str(src), "<repo>"), (str(REPO), "<repo>"), (str(peers), "<peer>")]
        rc, text, err = run_cli(src, REPO, ["methods", "--json"], 120)
        methods = json.loads(text)
        tasks = []
        for path in inputs(tier, peers):
            cid = case_id(path, peers)
            if only and not any(fnmatch.fnmatch(cid, g) for g in only.split(",")):
                continue
            rc, text, err = run_cli(src, REPO, ["simulate", str(path), "--json"], 300)
            budget, collectives = None, False
            if rc == 0:
                sim = json.loads(text)
                budget = ",".join(str(int(v * 0.9)) for v in sim["peak_bytes"].values())
            rc_i, info, _ = run_cli(src, REPO, ["info", str(path), "--json"], 300)
            if rc_i == 0:
                collectives = bool(json.loads(info).get("collectives"))
            wall = max(30.0, 20 * float(TIME_LIMIT[tier])) * 3
            for name, argv in variants(path, tier, methods, budget, collectives):
                tasks.append((path, cid, name, argv, wall))
        work = scratch / "work"
        rows = []
        with cf.ThreadPoolExecutor(max_workers=jobs) as ex:
            futs = [ex.submit(run_case, src, work, blobs, subs, *t) for t in tasks]
            for k, f in enumerate(cf.as_completed(futs), 1):
                rows.append(f.result())
                if k % 25 == 0:
                    print(f"  {k}/{len(tasks)} cases", file=sys.stderr, flush=True)
        rows.sort(key=lambda r: r["case"])
        with open(out / "cases.jsonl", "w") as fh:
            for r in rows:
                fh.write(json.dumps(r) + "\n")
        (out / "meta.json").write_text(
            json.dumps({"tier": tier, "source": commit, "cases": len(rows), "only": only}, indent=1)
            + "\n"
        )
        print(f"captured {len(rows)} cases of {commit} into {out}", file=sys.stderr)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


# --- checking ----------------------------------------------------------------------------


def load(d: Path) -> dict[str, dict]:
    with open(d / "cases.jsonl") as fh:
        return {r["case"]: r for r in map(json.loads, fh)}


def first_difference(a, b, path="$") -> str:
    if type(a) is not type(b):
        return path
    if isinstance(a, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return f"{path}.{k}"
            if a[k] != b[k]:
                return first_difference(a[k], b[k], f"{path}.{k}")
        if list(a) != list(b):
            return f"{path} (key order only)"
        return path
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path} (length {len(a)} vs {len(b)})"
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return first_difference(x, y, f"{path}[{i}]")
    return path


def explain(before: Path, after: Path, name: str, ha: str | None, hb: str | None) -> str:
    if ha is None or hb is None:
        return f"{name}: only in {'after' if ha is None else 'before'}"
    a, b = (before / "blobs" / ha).read_bytes(), (after / "blobs" / hb).read_bytes()
    try:
        ja, jb = json.loads(a), json.loads(b)
    except ValueError:
        la, lb = a.decode(errors="replace").splitlines(), b.decode(errors="replace").splitlines()
        line = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
        return f"{name}: line {line + 1}"
    return f"{name}: {first_difference(ja, jb)}"


def expected_changes() -> list[tuple[str, str]]:
    if not EXPECTED.exists():
        return []
    data = json.loads(EXPECTED.read_text())
    return [(e["case"], e["reason"]) for e in data["changes"]]


def check(before: Path, after: Path, stable: Path | None) -> int:
    a, b = load(before), load(after)
    meta = json.loads((after / "meta.json").read_text())
    if meta.get("only"):  # a partial capture: compare the inputs it ran
        globs = meta["only"].split(",")
        a = {k: v for k, v in a.items() if any(fnmatch.fnmatch(k.split("/")[0], g) for g in globs)}
    s = load(stable) if stable else {}
    allowed = expected_changes()
    same = unstable = expected = 0
    bad = []
    for case in sorted(set(a) | set(b)):
        ra, rb = a.get(case), b.get(case)
        if ra is None or rb is None:
            bad.append(f"{case}: only in {'before' if rb is None else 'after'}")
            continue
        keys = ("rc", "stderr", "artifacts")
        if all(ra[k] == rb[k] for k in keys):
            same += 1
            continue
        if case in s and any(ra[k] != s[case][k] for k in keys):
            unstable += 1
            print(f"unstable (differs between the two before runs): {case}")
            continue
        why = next((r for g, r in allowed if fnmatch.fnmatch(case, g)), None)
        if why:
            expected += 1
            print(f"expected change: {case}: {why}")
            continue
        parts = []
        if ra["rc"] != rb["rc"]:
            parts.append(f"exit {ra['rc']} -> {rb['rc']}")
        if ra["stderr"] != rb["stderr"]:
            parts.append(f"stderr {ra['stderr']!r} -> {rb['stderr']!r}")
        fa, fb = ra["artifacts"], rb["artifacts"]
        for name in sorted(set(fa) | set(fb)):
            if fa.get(name) != fb.get(name):
                parts.append(explain(before, after, name, fa.get(name), fb.get(name)))
        bad.append(f"{case}: " + "; ".join(parts))
    for line in bad:
        print("DIFFERS " + line)
    print(
        f"{same} identical, {len(bad)} differ, {expected} expected changes, "
        f"{unstable} unstable, of {len(set(a) | set(b))} cases"
    )
    return 1 if bad else 0


def recheck(before: Path, after: Path, jobs: int, peers: Path) -> int:
    """Run every case that differs once more with both revisions: a case whose BEFORE
    revision does not reproduce its own capture is unstable (its output depends on the
    machine's load, not on the change); one whose AFTER rerun matches BEFORE was a flake;
    the rest differ."""
    a, b = load(before), load(after)
    meta_a = json.loads((before / "meta.json").read_text())
    meta_b = json.loads((after / "meta.json").read_text())
    keys = ("rc", "stderr", "artifacts")
    cases = [c for c in sorted(set(a) & set(b)) if any(a[c][k] != b[c][k] for k in keys)]
    scratch = Path(tempfile.mkdtemp(prefix="same_results."))
    verdict: dict[str, str] = {}
    try:
        blobs = scratch / "blobs"
        blobs.mkdir()
        srcs = {}
        for side, meta in (("before", meta_a), ("after", meta_b)):
            ref = None if meta["source"] == "worktree" else meta["source"]
            srcs[side] = source_tree(ref, scratch / side)[0]
        wall = max(30.0, 20 * float(TIME_LIMIT[meta_a["tier"]])) * 3

        def rerun(side: str, case: str) -> dict:
            argv = a[case]["argv"]
            path = Path(argv[1].replace("<repo>", str(REPO)).replace("<peer>", str(peers)))
            template = [argv[0], *[x.replace("<out>", "OUT") for x in argv[2:]]]
            subs = [(str(srcs[side]), "<repo>"), (str(REPO), "<repo>"), (str(peers), "<peer>")]
            cid, name = case.split("/", 1)
            return run_case(
                srcs[side], scratch / side / "work", blobs, subs, path, cid, name, template, wall
            )

        with cf.ThreadPoolExecutor(max_workers=jobs) as ex:
            futs = {
                (side, c): ex.submit(rerun, side, c) for c in cases for side in ("before", "after")
            }
            for c in cases:
                ra, rb = futs["before", c].result(), futs["after", c].result()
                if any(ra[k] != a[c][k] for k in keys):
                    verdict[c] = "unstable: the before revision does not reproduce its own output"
                elif all(rb[k] == a[c][k] for k in keys):
                    verdict[c] = "identical on a second run (a flake of the first)"
                else:
                    verdict[c] = "DIFFERS"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for c in cases:
        print(f"{c}: {verdict[c]}")
    bad = sum(v == "DIFFERS" for v in verdict.values())
    print(
        f"{len(cases)} cases rechecked: {bad} differ, "
        f"{sum(v.startswith('unstable') for v in verdict.values())} unstable, "
        f"{sum(v.startswith('identical') for v in verdict.values())} identical on a second run"
    )
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("capture", "run"):
        p = sub.add_parser(name)
        if name == "capture":
            p.add_argument("out", type=Path)
        p.add_argument("--tier", choices=("quick", "full"), default="quick")
        p.add_argument(
            "--ref",
            default=None if name == "capture" else "main",
            help="git revision to capture (default: the checkout; run: main)",
        )
        p.add_argument("--jobs", type=int, default=1)
        p.add_argument("--peer-cases", default=None)
        p.add_argument(
            "--only",
            default=None,
            help="input globs (case ids, comma separated), for a partial run",
        )
        if name == "run":
            p.add_argument(
                "--after", default=None, help="git revision to compare (default: the checkout)"
            )
    p = sub.add_parser("check")
    p.add_argument("before", type=Path)
    p.add_argument("after", type=Path)
    p.add_argument("--stable", type=Path, default=None)
    p = sub.add_parser("recheck", help="run the cases that differ once more, with both sides")
    p.add_argument("before", type=Path)
    p.add_argument("after", type=Path)
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--peer-cases", default=None)
    args = ap.parse_args(argv)
    if args.cmd == "check":
        return check(args.before, args.after, args.stable)
    if args.cmd == "recheck":
        return recheck(args.before, args.after, args.jobs, peer_dir(args.peer_cases))
    peers = peer_dir(args.peer_cases)
    if args.cmd == "capture":
        capture(args.out, args.tier, args.ref, args.jobs, peers, args.only)
        return 0
    commit = subprocess.run(
        ["git", "rev-parse", args.ref], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.strip()
    suffix = f"-{args.only}" if args.only else ""
    base = CACHE / f"{commit[:12]}-{args.tier}{suffix.replace('*', '_')}"
    if not (base / "cases.jsonl").exists():
        capture(base, args.tier, args.ref, args.jobs, peers, args.only)
    mine = CACHE / f"{args.after or 'worktree'}-{args.tier}{suffix.replace('*', '_')}"
    shutil.rmtree(mine, ignore_errors=True)
    capture(mine, args.tier, args.after, args.jobs, peers, args.only)
    return check(base, mine, None)


if __name__ == "__main__":
    sys.exit(main())
