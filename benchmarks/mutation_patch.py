"""Write a patch that "adds" the named functions of one module, so that
``mutmut run --use-patch-file`` mutates only them (the HLO converter is 1,800 lines; issue 18
asks for its aliasing and control-flow parts).

    python benchmarks/mutation_patch.py cpsched/readers/hlo/convert.py inplace_pairs \
        _GraphBuild.parameter ... > aliasing.patch

Names are ``function`` or ``Class.method``; the patch covers each definition's lines."""

from __future__ import annotations

import ast
import sys


def ranges(path: str, names: list[str]) -> list[tuple[int, int]]:
    tree = ast.parse(open(path).read())
    found: dict[str, tuple[int, int]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found[node.name] = (node.lineno, node.end_lineno or node.lineno)
        elif isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, ast.FunctionDef):
                    found[f"{node.name}.{sub.name}"] = (sub.lineno, sub.end_lineno or sub.lineno)
    missing = [n for n in names if n not in found]
    if missing:
        raise SystemExit(f"{path}: no function {', '.join(missing)}")
    return sorted(found[n] for n in names)


def main(argv: list[str]) -> None:
    path, names = argv[0], argv[1:]
    lines = open(path).read().splitlines()
    out = [f"--- a/{path}", f"+++ b/{path}"]
    for lo, hi in ranges(path, names):
        out.append(f"@@ -{lo - 1},0 +{lo},{hi - lo + 1} @@")
        out += ["+" + line for line in lines[lo - 1 : hi]]
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1:])
