"""The package's import structure: every module imports on its own in a fresh interpreter,
module-level imports form no cycle, and no function hides an import of a cpsched module
(only optional dependencies such as matplotlib, pandas or jax are imported inside
functions)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PKG = REPO / "cpsched"

# Modules still to be cleaned up by their owners: their function-level imports are known
# and counted, so the list can only shrink.
PENDING: dict[str, int] = {
    # read before any other module (the console's start-up clock); units only when a note is
    # printed
    "cpsched.core.process": 1,
}


def module_files() -> dict[str, Path]:
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        parts = p.relative_to(REPO).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = p
    return out


def _target(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if path.name != "__init__.py":
        base = base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"


def imports(module: str, path: Path, mods: dict[str, Path]):
    """(module-level cpsched imports, function-level cpsched imports as (target, line))."""
    top: set[str] = set()
    inner: list[tuple[str, int]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for ch in ast.iter_child_nodes(node):
            if _is_type_checking(ch):
                continue
            targets: list[str] = []
            if isinstance(ch, ast.Import):
                targets = [a.name for a in ch.names]
            elif isinstance(ch, ast.ImportFrom):
                base = _target(module, path, ch)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base
                           for a in ch.names]
            for t in targets:
                if t.split(".")[0] != "cpsched":
                    continue
                if in_function:
                    inner.append((t, ch.lineno))
                else:
                    top.add(t)
            visit(ch, in_function or isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                     ast.Lambda)))

    visit(ast.parse(path.read_text()), False)
    return top, inner


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in graph:
                    continue
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_module_level_imports_have_no_cycle():
    mods = module_files()
    graph = {}
    for name, path in mods.items():
        top, _ = imports(name, path, mods)
        # importing a submodule runs its packages' __init__ first (the importer's own
        # packages are already being imported)
        mine = set(_parents(name))
        graph[name] = {t for t in top if t in mods} | \
            {p for t in top for p in _parents(t) if p in mods and p != name and p not in mine}
    assert _cycles(graph) == []


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:k]) for k in range(1, len(parts))]


def test_no_function_level_imports_of_cpsched_modules():
    mods = module_files()
    found = {}
    for name, path in mods.items():
        _, inner = imports(name, path, mods)
        if inner:
            found[name] = inner
    for name, count in PENDING.items():
        assert len(found.pop(name, [])) <= count, f"{name}: more hidden imports than known"
    assert found == {}, "import these at module level (an optional dependency is the only " \
                        "reason to import inside a function)"


# Run in a fresh interpreter: the package's required dependencies are loaded once, then
# each cpsched module is imported in a child forked from that state, with no cpsched
# module loaded before it. A new interpreter per module spent most of its time loading
# ortools and numpy again (about 70 s of the suite); what each child checks is the same.
_FORK_EACH = """
import importlib, json, os, sys
import networkx, numpy, ortools.sat.python.cp_model  # the required dependencies
assert not [m for m in sys.modules if m.split(".")[0] == "cpsched"]
failed = []
for name in json.loads(sys.argv[1]):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        code, why = 0, ""
        try:
            importlib.import_module(name)
        except BaseException as e:
            code, why = 1, f"{type(e).__name__}: {e}"
        os.write(w, why.encode()[:2000])
        os._exit(code)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        why = f.read().decode()
    _, status = os.waitpid(pid, 0)
    if status != 0:
        failed.append([name, why or f"wait status {status}"])
print(json.dumps(failed))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_every_module_imports_alone_in_a_fresh_interpreter():
    import json

    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    names = list(module_files())
    p = subprocess.run([sys.executable, "-c", _FORK_EACH, json.dumps(names)], cwd=REPO,
                       env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert json.loads(p.stdout.strip().splitlines()[-1]) == []


def test_the_ir_imports_only_core():
    """The graph IR (and what it imports) stays in cpsched.core: no validator, no analysis."""
    mods = module_files()
    seen, todo = set(), ["cpsched.core.graph"]
    while todo:
        m = todo.pop()
        if m in seen or m not in mods:
            continue
        seen.add(m)
        top, _ = imports(m, mods[m], mods)
        todo += [t for t in top if t in mods]
    assert seen and all(m.startswith("cpsched.core") for m in seen), sorted(seen)
