"""Inject known memory-model bugs into a scratch copy of the repository and report which
tests catch each one (issue 18: every bug must be caught by at least two tests).

    python benchmarks/inject_bugs.py [--tests tests/] [--only a,b] [--markdown OUT.md]

The repository's tracked files are copied into a temporary directory (the checkout is never
touched), one bug is applied there by an exact text replacement, and pytest runs on the copy.
A bug whose text is not found (the code moved) is reported as ``not applied``, never as
caught.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# id -> (what, file, old text, new text)
BUGS = {
    "a": ("per-op CP memory row: buffer live only if the op precedes ALL its last users",
          "cpsched/cp/memory/constraints.py",
          "clause_sets = [[u] for u in cand_users]",
          "clause_sets = [list(cand_users)]"),
    "b": ("validate_schedule checks the claimed peak of scenario 0 only",
          "cpsched/analysis/validate.py",
          "for name, c, s in zip(scenarios.names, claimed, sim):",
          "for name, c, s in list(zip(scenarios.names, claimed, sim))[:1]:"),
    "c": ("live-in buffers start at their defining op, not at step 0",
          "cpsched/analysis/memory.py",
          "start = np.where(graph.buffer_live_in, 0, start)",
          "start = start"),
    "d": ("operation transients dropped from the cumulative constraint",
          "cpsched/cp/memory/constraints.py",
          "if V.op_intervals[v] is not None and sc.transient[s, v] > 0:",
          "if False:"),
    "e": ("buffers freed at their last use instead of after it",
          "cpsched/analysis/memory.py",
          "end[has] = np.maximum(end[has], seg_max)",
          "end[has] = np.maximum(end[has], seg_max - 1)"),
    "f": ("validator checks data operands only (ignores control, buffer and async edges)",
          "cpsched/core/order.py",  # the order check the validator calls
          "succ_rows = np.repeat(np.arange(n), np.diff(graph.pred_ptr))\n"
          "    bad = pos[graph.pred_idx] >= pos[succ_rows]",
          "succ_rows = np.repeat(np.arange(n), np.diff(graph.operands_ptr))\n"
          "    bad = pos[graph.operands_idx] >= pos[succ_rows]"),
}


def tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO,
                         capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if line]


def scratch_copy(dest: Path) -> None:
    for rel in tracked_files():
        src = REPO / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    shared = REPO.parent / "shared"
    if shared.is_dir() and not (dest.parent / "shared").exists():
        # tests find peer cases beside the checkout
        (dest.parent / "shared").symlink_to(shared)


def run_bug(bug: str, tests: list[str]) -> dict:
    what, rel, old, new = BUGS[bug]
    with tempfile.TemporaryDirectory(prefix="cpsched-bug-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        scratch_copy(root)
        path = root / rel
        text = path.read_text()
        if text.count(old) != 1:
            return {"bug": bug, "what": what, "applied": False, "failed": [], "rc": None}
        path.write_text(text.replace(old, new))
        env_path = str(root)
        cmd = [sys.executable, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", *tests]
        env = dict(os.environ, PYTHONPATH=env_path)
        proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env)
        failed = sorted(set(re.findall(r"^FAILED (\S+)", proc.stdout, flags=re.M)))
        errors = sorted(set(re.findall(r"^ERROR (\S+)", proc.stdout, flags=re.M)))
        return {"bug": bug, "what": what, "applied": True, "failed": failed + errors,
                "rc": proc.returncode, "tail": proc.stdout.strip().splitlines()[-1:]}


def grouped(failed: list[str]) -> dict[str, int]:
    """Failing test ids by test function (parametrized cases counted)."""
    out: dict[str, int] = {}
    for t in failed:
        key = t.split("[")[0]
        out[key] = out.get(key, 0) + 1
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tests", nargs="*", default=["tests"])
    ap.add_argument("--only", default=",".join(BUGS))
    ap.add_argument("--markdown", help="write the table here")
    args = ap.parse_args(argv)
    rows = []
    for bug in args.only.split(","):
        r = run_bug(bug, args.tests)
        rows.append(r)
        status = "not applied" if not r["applied"] else f"{len(r['failed'])} tests fail"
        print(f"bug {bug} ({r['what']}): {status}", flush=True)
        for t, k in grouped(r["failed"]).items():
            print(f"    {t} ({k})", flush=True)
    lines = ["| bug | what | failing tests | by test function (failing cases) |",
             "|---|---|---|---|"]
    for r in rows:
        cell = "not applied" if not r["applied"] else \
            f"{len(r['failed'])} | " + ", ".join(f"`{t}` ({k})"
                                                  for t, k in grouped(r["failed"]).items())
        lines.append(f"| {r['bug']} | {r['what']} | {cell} |")
    if args.markdown:
        Path(args.markdown).write_text("\n".join(lines) + "\n")
    caught_twice = all(r["applied"] and len(r["failed"]) >= 2 for r in rows)
    print("every bug caught by at least two tests" if caught_twice else
          "SOME BUG IS CAUGHT BY FEWER THAN TWO TESTS")
    return 0 if caught_twice else 1


if __name__ == "__main__":
    sys.exit(main())
