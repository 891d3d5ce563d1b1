"""The package's structure in figures, at one or more git revisions: imports that point up a
layer (or sideways) by the rules of tests/test_layers.py, import circles (type-only imports
included), functions over 150 lines, functions of cyclomatic complexity above 20 (ruff C901),
and duplicate pairs (the ``duplicates`` scan, runs of six or more alike lines), if that
command is on PATH.

    python benchmarks/restructure_counts.py REV [REV ...]

Each revision's ``cpsched/`` is taken with ``git archive``, so the checkout is not touched.
The layer rules are always today's (this checkout's tests/test_layers.py), so that revisions
are judged alike. Prints a markdown table, one column per revision.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _layers_module():
    spec = importlib.util.spec_from_file_location("_layers", REPO / "tests" / "test_layers.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


def _long_functions(pkg: Path, limit: int = 150) -> list[str]:
    out = []
    for p in sorted(pkg.rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > limit:
                    out.append(f"{p.relative_to(pkg.parent)}:{node.name} ({n})")
    return out


def _complex(pkg: Path) -> int:
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    p = subprocess.run(
        [ruff, "check", "--no-cache", "--isolated", "--select", "C901", "--config",
         "lint.mccabe.max-complexity=20", "--output-format", "json", str(pkg)],
        capture_output=True, text=True,
    )
    return len(json.loads(p.stdout or "[]"))


def _duplicates(pkg: Path) -> str:
    exe = shutil.which("duplicates")
    if exe is None:
        return "n/a"
    p = subprocess.run([exe, "--repo", str(pkg), "--most", "1", "--seconds", "300"],
                       capture_output=True, text=True)
    first = p.stdout.strip().splitlines()[0] if p.stdout.strip() else ""
    return first.split(" pairs")[0].split()[-1] if " pairs" in first else first


def counts(rev: str, layers) -> dict[str, object]:
    tmp = Path(tempfile.mkdtemp(prefix="restructure_counts."))
    try:
        arch = subprocess.run(["git", "archive", rev, "cpsched"], cwd=REPO,
                              capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=arch, check=True)
        pkg = tmp / "cpsched"
        layers.REPO, layers.PKG = tmp, pkg
        mods = layers.module_files()
        edges = layers.edges(mods)
        unplaced = [m for m in mods if layers.placement(m) is None]
        placed = {(a, b) for a, b in edges if a not in unplaced and b not in unplaced}
        up = layers.violations(placed)
        cyc = layers.cycles(edges)
        cp_lines = sum(len(p.read_text().splitlines()) for p in (pkg / "cp").rglob("*.py"))
        all_lines = sum(len(p.read_text().splitlines()) for p in pkg.rglob("*.py"))
        return {
            "modules": len(mods),
            "lines in cpsched/ (cp/)": f"{all_lines:,} ({cp_lines:,})",
            "imports up a layer or sideways": len(up),
            "import circles (type-only included)": len(cyc),
            "modules with no rank": len(unplaced),
            "functions over 150 lines": len(_long_functions(pkg)),
            "functions of complexity above 20": _complex(pkg),
            "duplicate pairs": _duplicates(pkg),
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str]) -> int:
    revs = argv or ["HEAD"]
    layers = _layers_module()
    cols = {}
    for rev in revs:
        short = subprocess.run(["git", "rev-parse", "--short", rev], cwd=REPO,
                               capture_output=True, text=True, check=True).stdout.strip()
        cols[short] = counts(rev, layers)
    keys = list(next(iter(cols.values())))
    print("| figure | " + " | ".join(cols) + " |")
    print("|---|" + "---|" * len(cols))
    for k in keys:
        print(f"| {k} | " + " | ".join(str(c[k]) for c in cols.values()) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
