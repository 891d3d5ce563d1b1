"""Registry of scheduling methods, by stable name (``cpsched methods`` lists them), and the
one contract every method keeps.

Every method is one function with one signature::

    fn(graph: Graph, scenarios: Scenarios, *, time_limit, workers, seed, deterministic,
       log, deadline=None, **options) -> list[int] | Schedule | RematResult

- **Settings.** The solver settings come from one ``cpsched.cp.runtime.SolverConfig``,
  which ``cpsched.api`` builds once per call and spreads into these keywords at its one
  call site (the remat family too). A method ends by
  ``deadline`` (a ``time.perf_counter()`` instant; wall-clock mode only) and reads no
  global state: the program a graph was read from is ``graph.program``.
- **Options.** Options a method does not know are ignored, so that one set serves all;
  a name no method reads (``METHOD_OPTIONS``) is refused before any method runs.
- **Answer.** A heuristic returns an order (op indices of the entry computation). A
  method that reports more returns a ``Schedule`` (status, lower bound, claimed peak,
  the orders of called computations, ``info``); the remat family returns a
  ``RematResult``. ``cpsched.api`` validates every answer (the order against the
  simulator, byte for byte; the plan by replay) and makes the ``Result`` in one place
  (``api._to_result``); a method never validates for its caller. What a method reports in
  ``info`` becomes its family's typed record (``cpsched.analysis.records``).
- **Errors.** A method raises only ``CpschedError`` subclasses; ``InfeasibleError`` says
  a budget is proven impossible.
- **Signals.** Interrupted, a method returns the best answer found so far, with
  ``info["interrupted"] = True``.

Modules register their methods at import time with ``register``; ``load_all`` finds them
itself: it imports every module of the packages in ``METHOD_PACKAGES`` (a new method
module needs no list to be edited), skipping those whose optional dependency is missing.
Methods are listed in the order of ``RANKS`` (compare's rows, the frontier's baselines),
not in the order their modules happen to be imported; a method missing from it comes after,
in registration order. Which method is the default (``cp``) is the API's choice and may
change.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cpsched.core.errors import InputError

if TYPE_CHECKING:  # the package's start loads this module: nothing heavy at import
    from cpsched.core.graph import Graph


@dataclass(frozen=True)
class Method:
    name: str
    fn: Callable
    summary: str
    family: str  # memory | overlap | remat | solver
    applies: Callable[[Graph], bool] = lambda g: True
    # a choice among other methods made once for a whole module (XLA's
    # DefaultMemoryScheduler): each of these orders every computation, the least module
    # peak wins, ties to the first listed. ``fn`` makes the same choice on one graph.
    choice: tuple[str, ...] = ()
    # position wherever methods are listed by default (``RANKS``); lower first
    rank: int = 0


# The order in which methods are listed by default: compare's rows (heuristics, then the
# solvers), the frontier's baselines, ``load_all``. Written down so that moving a method to
# another module cannot reorder a table.
RANKS = (
    "xla-list",
    "xla-dfs",
    "xla-postorder",
    "xla-bfs",
    "xla-default",
    "lhs",
    "bladedisc",
    "gpu-postprocess",
    "eager-cluster",
    "inductor-lpmf",
    "inductor-bfs",
    "inductor-dfs",
    "inductor-default",
    "remat-xla",
    "remat-span",
    "remat-sqrt",
    "remat-dtr",
    "remat-offload",
    "cp-overlap",
    "cp",
    "cp-remat",
    "remat-fixed-order",
    "cp-joint",
)
_RANK = {name: k for k, name in enumerate(RANKS)}

_REGISTRY: dict[str, Method] = {}

# Every option some method reads (beyond the solver settings every call passes: time_limit,
# workers, seed, deterministic, log, progress, budget, objective, deadline). An option outside this
# set is a typo: ``schedule(g, slak=0.1)`` and a sweep's ``{method = "cp", slak = 0.1}`` are
# refused instead of silently ignored. tests/test_reliability.py checks the solvers'
# keyword parameters against it.
METHOD_OPTIONS = frozenset(
    """
aggressive bandwidth baselines bounds budget_methods called_resources comm_streams
convert_sync copies cost_fn costs cpsat decompose depth device durations evict heuristics
hint hoist known latency latency_fn lns margin max_candidates memory_limit method_name model order
overhead_cap overlap_limit postprocess profile remat reorder rerun resolution scenario
scenario_mode scenario_objective search secondary sequential slack stop_when_fits sub_slots
symbolic transfer window_engine windows
""".split()
)


def check_options(options, what: str = "option") -> None:
    """Raise ``InputError`` for an option name no method reads (with the nearest name)."""
    for k in options:
        if k not in METHOD_OPTIONS:
            near = difflib.get_close_matches(str(k), METHOD_OPTIONS, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise InputError(f"unknown {what} {k!r}: no method reads it{hint}")


# Packages whose modules register methods when imported (walked, not listed).
METHOD_PACKAGES = ("cpsched.heuristics", "cpsched.strategies")
_discovered = False


def register(
    name: str,
    summary: str,
    family: str,
    applies: Callable[[Graph], bool] | None = None,
    choice: tuple[str, ...] = (),
):
    def deco(fn):
        # unranked methods after the ranked ones, in registration order
        rank = _RANK.get(name, len(RANKS) + len(_REGISTRY))
        _REGISTRY[name] = Method(
            name, fn, summary, family, applies or (lambda g: True), choice, rank
        )
        return fn

    return deco


def method_modules() -> list[str]:
    """Every module of ``METHOD_PACKAGES``: package by package, sorted by name within each."""
    names = []
    for pkg_name in METHOD_PACKAGES:
        pkg = importlib.import_module(pkg_name)
        names += sorted(
            m.name for m in pkgutil.walk_packages(pkg.__path__, pkg_name + ".") if not m.ispkg
        )
    return names


def _discover() -> None:
    global _discovered
    if _discovered:
        return
    for mod in method_modules():
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as e:
            # an optional dependency (jax, ...) that is not installed: skip its methods
            if e.name is None or e.name.split(".")[0] == "cpsched":
                raise
    _discovered = True


def load_all() -> dict[str, Method]:
    """Every registered method by name, in ``RANKS`` order, found by importing the method
    packages."""
    _discover()
    return {m.name: m for m in sorted(_REGISTRY.values(), key=lambda m: m.rank)}


def get(name: str) -> Method:
    methods = load_all()
    if name not in methods:
        raise InputError(f"unknown method {name!r}; `cpsched methods` lists them")
    return methods[name]
