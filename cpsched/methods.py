"""Registry of scheduling methods, by stable name (``cpsched methods`` lists them).

Every method is one function with one signature::

    fn(graph: Graph, scenarios: Scenarios, **options) -> list[int]   # an order

Options a method does not know are ignored, so the command line can pass one set to all.
Solvers that report more (status, bounds) return a ``Schedule`` instead of a list.
Modules register their methods at import time with ``register``; ``load_all`` imports
the modules that hold them.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

from cpsched.core.errors import InputError
from cpsched.core.graph import Graph


@dataclass(frozen=True)
class Method:
    name: str
    fn: Callable
    summary: str
    family: str                                   # memory | overlap | remat | solver
    applies: Callable[[Graph], bool] = lambda g: True


_REGISTRY: dict[str, Method] = {}

# Modules that register methods when imported; a missing optional one is skipped.
METHOD_MODULES = (
    "cpsched.heuristics.xla_memory",
    "cpsched.heuristics.gpu_postprocess",
    "cpsched.heuristics.lhs",
    "cpsched.heuristics.bladedisc",
    "cpsched.cp.memory.solve",
    "cpsched.heuristics.remat",
    "cpsched.cp.remat.solve",
    "cpsched.cp.overlap.solve",
)


def register(name: str, summary: str, family: str,
             applies: Callable[[Graph], bool] | None = None):
    def deco(fn):
        _REGISTRY[name] = Method(name, fn, summary, family, applies or (lambda g: True))
        return fn
    return deco


def load_all() -> dict[str, Method]:
    for mod in METHOD_MODULES:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name != mod:
                raise
    return dict(_REGISTRY)


def get(name: str) -> Method:
    methods = load_all()
    if name not in methods:
        raise InputError(f"unknown method {name!r}; `cpsched methods` lists them")
    return methods[name]
