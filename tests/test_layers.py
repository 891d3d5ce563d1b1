"""Layers import downwards only, and no import forms a circle.

Every module of the package has a rank (``RANKS``, the longest matching prefix wins). An
import, wherever it is written (module level, inside a function, or under
``TYPE_CHECKING``), must go to a lower rank, or to the same rank inside the same package
unit (the package of the prefixes that placed them). A few pairs are forbidden whatever their ranks
(``FORBIDDEN``), and the module graph, type-only edges included, has no cycle.

``PENDING_EDGES`` and ``PENDING_CYCLES`` list the violations that exist today. They can only
shrink: a new violation fails, and so does an entry that no longer exists (delete it).
A new module that matches no prefix fails too: give it a rank here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

REPO = Path(__file__).resolve().parents[1]
PKG = REPO / "cpsched"

# prefix -> rank. The model: core < analysis < cost < readers | remat < writers < methods
# < heuristics | cp (models) < strategies < drivers < api < sweep < command lines < cli.
RANKS: dict[str, int] = {
    "cpsched.core": 0,
    "cpsched.version": 0,
    "cpsched.analysis": 1,
    "cpsched.generators": 1,
    "cpsched.pipeline.problem": 1,
    "cpsched.pipeline.schedule": 1,
    "cpsched.layout.heap": 1,
    "cpsched.cost": 2,
    "cpsched.layout.problem": 2,
    "cpsched.remat": 3,
    "cpsched.readers": 3,
    "cpsched.writers": 4,
    "cpsched.methods": 5,
    "cpsched.heuristics": 6,
    "cpsched.cp": 6,
    "cpsched.pipeline.baselines": 6,
    "cpsched.pipeline.model": 6,
    "cpsched.layout.cp": 6,
    "cpsched.layout.search": 6,
    "cpsched.strategies": 7,
    "cpsched.layout.solve": 7,
    "cpsched.pipeline.model.solve": 7,  # runs the model through cp.runtime
    "cpsched.pipeline": 8,
    "cpsched.layout": 8,
    "cpsched.result": 9,
    "cpsched.api": 9,
    "cpsched.plot": 9,
    "cpsched.capture": 9,
    "cpsched.errors": 9,
    "cpsched.measure": 9,
    "cpsched.sweep": 10,
    "cpsched.torch_order": 10,
    "cpsched.cli_args": 10,
    "cpsched.pipeline.cli": 11,
    "cpsched.layout.cli": 11,
    "cpsched.measure.cli": 11,
    "cpsched.sweep.cli": 11,
    "cpsched.cli": 12,
    "cpsched.console": 12,
    "cpsched.__main__": 13,
    "cpsched": 13,
}

# (importer prefix, imported prefix): never, whatever the ranks say
FORBIDDEN: list[tuple[str, str]] = [
    ("cpsched.heuristics", "cpsched.cp"),
    ("cpsched.cp", "cpsched.heuristics"),
    ("cpsched.cp", "cpsched.methods"),
    ("cpsched.cp", "cpsched.strategies"),
    ("cpsched.pipeline.model", "cpsched.pipeline.solve"),
    ("cpsched.pipeline.model", "cpsched.pipeline.baselines"),
    ("cpsched.remat", "cpsched.readers"),
    ("cpsched.readers", "cpsched.remat"),
]

# Violations that exist today (importer, imported): the list can only shrink.
PENDING_EDGES: set[tuple[str, str]] = set()
# Cycles that exist today, each as its sorted module list (type-only imports included).
PENDING_CYCLES: list[list[str]] = []
# Registered methods come from these packages only (cp holds models, not methods).
METHOD_PACKAGES_TARGET = ("cpsched.heuristics", "cpsched.strategies")


def module_files() -> dict[str, Path]:
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        parts = p.relative_to(REPO).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


def _target(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if path.name != "__init__.py":
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def edges(mods: dict[str, Path]) -> set[tuple[str, str]]:
    """Every import of a cpsched module, wherever it is written (type-only ones too)."""
    out = set()
    for name, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _target(name, path, node)
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names
                ]
            for t in targets:
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t.split(".")[0] == "cpsched" and t != name:
                    out.add((name, t))
    return out


def placement(module: str) -> tuple[str, int] | None:
    """(the prefix that places the module, its rank), or None."""
    best = None
    for prefix, rank in RANKS.items():
        if module == prefix or module.startswith(prefix + "."):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, rank)
    return best


def unit(prefix: str) -> str:
    """The package a prefix stands for: itself, or a module's package."""
    path = REPO.joinpath(*prefix.split("."))
    return prefix.rpartition(".")[0] if path.with_suffix(".py").exists() else prefix


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def violations(graph_edges: set[tuple[str, str]]) -> set[tuple[str, str]]:
    bad = set()
    for a, b in graph_edges:
        pa, pb = placement(a), placement(b)
        assert pa and pb, (a, b)
        if any(_under(a, x) and _under(b, y) for x, y in FORBIDDEN):
            bad.add((a, b))
        elif pb[1] > pa[1] or (pb[1] == pa[1] and unit(pb[0]) != unit(pa[0])):
            bad.add((a, b))
    return bad


def cycles(graph_edges: set[tuple[str, str]]) -> list[list[str]]:
    g = nx.DiGraph(list(graph_edges))
    return sorted(sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1)


def test_every_module_has_a_rank():
    unplaced = [m for m in module_files() if placement(m) is None]
    assert unplaced == [], "give these a rank in RANKS (tests/test_layers.py)"


def test_imports_point_down():
    found = violations(edges(module_files()))
    new = sorted(found - PENDING_EDGES)
    gone = sorted(PENDING_EDGES - found)
    assert new == [], "imports that point up a layer or sideways"
    assert gone == [], "fixed: delete these from PENDING_EDGES"


def test_no_import_cycles():
    found = cycles(edges(module_files()))
    new = [c for c in found if c not in PENDING_CYCLES]
    gone = [c for c in PENDING_CYCLES if c not in found]
    assert new == [], "import cycles (type-only imports count)"
    assert gone == [], "fixed: delete these from PENDING_CYCLES"


def test_methods_come_from_heuristics_and_strategies():
    from cpsched.methods import METHOD_PACKAGES

    assert METHOD_PACKAGES == METHOD_PACKAGES_TARGET


@pytest.mark.parametrize(
    "edge, caught",
    [
        (("cpsched.core.graph", "cpsched.api"), True),  # up
        (("cpsched.cp.memory.problem", "cpsched.heuristics.xla_memory"), True),  # sideways
        (("cpsched.cp.memory.problem", "cpsched.methods"), True),  # forbidden pair
        (("cpsched.cp.memory.problem", "cpsched.strategies.module"), True),  # up
        (("cpsched.api", "cpsched.cli"), True),  # nothing imports the CLI
        (("cpsched.cp.memory.variables", "cpsched.cp.memory.problem"), False),  # same unit
        (("cpsched.strategies.remat.method", "cpsched.heuristics.remat"), False),  # down
        (("cpsched.api", "cpsched.core.graph"), False),  # down
    ],
)
def test_the_rules_catch_what_they_should(edge, caught):
    assert (edge in violations({edge})) is caught


def test_the_cycle_finder_counts_type_only_imports(tmp_path):
    assert cycles({("a", "b"), ("b", "a"), ("c", "a")}) == [["a", "b"]]
    # a type-only import is an edge like any other
    mod = tmp_path / "cpsched" / "x"
    mod.mkdir(parents=True)
    (mod / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from cpsched.x.b import B\n"
    )
    (mod / "b.py").write_text("from cpsched.x.a import A\n")
    mods = {"cpsched.x.a": mod / "a.py", "cpsched.x.b": mod / "b.py"}
    assert cycles(edges(mods)) == [["cpsched.x.a", "cpsched.x.b"]]


def test_the_documented_layout_matches_the_tree():
    """Every package path the README's layout table and docs/package.md name exists, and
    every package of cpsched/ is in docs/package.md."""
    import re

    readme = (REPO / "README.md").read_text()
    layout = readme[readme.index("## Layout") :]
    layout = layout[: layout.find("\n## ", 3) if "\n## " in layout[3:] else None]
    package = (REPO / "docs" / "package.md").read_text()
    named = set(re.findall(r"`(cpsched/[\w/]+?)/?`", layout + package))
    missing = sorted(
        p for p in named if not (REPO / p).exists() and not (REPO / f"{p}.py").exists()
    )
    assert missing == [], "the layout names paths that do not exist"
    packages = sorted(p.name for p in PKG.iterdir() if (p / "__init__.py").exists())
    absent = [p for p in packages if f"`cpsched/{p}/`" not in package]
    assert absent == [], "packages that docs/package.md does not describe"
