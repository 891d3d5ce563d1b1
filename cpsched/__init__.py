"""cpsched: constraint-solver schedules for ML compiler graphs, beside the compilers' heuristics.

The Python API (``cpsched.api``): ``read``, ``schedule``, ``compare``, ``simulate``,
``frontier``, ``explain_peak``, ``methods``, ``from_networkx``, ``from_jax`` (needs ``cpsched[jax]``), ``from_torch``
and ``inductor_order`` (need ``cpsched[torch]``); every method returns one ``Result``.
``run_module`` runs a written HLO module on XLA (needs jax) and returns a ``RunRecord``.
"""

import importlib
from typing import TYPE_CHECKING, Any

# the method registry module, loaded first so that the name ``methods`` defined below (the
# API's listing) is not replaced by the submodule when something imports it later
from cpsched import methods as _registry  # noqa: F401
from cpsched.version import __version__

if TYPE_CHECKING:
    from cpsched import generators
    from cpsched.api import (
        Comparison,
        Frontier,
        Result,
        compare,
        explain_peak,
        from_jax,
        from_networkx,
        from_torch,
        frontier,
        read,
        schedule,
        simulate,
    )
    from cpsched.core.graph import Collective, Graph, GraphBuilder, OpKind
    from cpsched.core.symbolic import SymExpr
    from cpsched.measure.run import RunRecord, run_module
    from cpsched.torch_order import inductor_order

# Where each public name lives. Importing them on first use keeps ``import cpsched.cli``
# (the command line's start, which counts against its time limit) from loading every
# reader, solver and OR-Tools before the command is known.
_EXPORTS = {
    "Graph": "cpsched.core.graph",
    "GraphBuilder": "cpsched.core.graph",
    "OpKind": "cpsched.core.graph",
    "Collective": "cpsched.core.graph",
    "SymExpr": "cpsched.core.symbolic",
    "Result": "cpsched.api",
    "Comparison": "cpsched.api",
    "Frontier": "cpsched.api",
    "explain_peak": "cpsched.api",
    "read": "cpsched.api",
    "schedule": "cpsched.api",
    "compare": "cpsched.api",
    "frontier": "cpsched.api",
    "simulate": "cpsched.api",
    "from_networkx": "cpsched.api",
    "from_jax": "cpsched.api",
    "from_torch": "cpsched.api",
    "inductor_order": "cpsched.torch_order",
    "generators": "cpsched.generators",
    "run_module": "cpsched.measure.run",
    "RunRecord": "cpsched.measure.run",
}

__all__ = [
    "Graph",
    "GraphBuilder",
    "OpKind",
    "Collective",
    "SymExpr",
    "__version__",
    "Result",
    "Comparison",
    "Frontier",
    "explain_peak",
    "read",
    "schedule",
    "compare",
    "frontier",
    "simulate",
    "methods",
    "from_networkx",
    "from_jax",
    "from_torch",
    "inductor_order",
    "generators",
    "run_module",
    "RunRecord",
]


def methods() -> list[dict[str, str]]:
    """Every registered method: name, family, summary (``cpsched.api.methods``)."""
    return importlib.import_module("cpsched.api").methods()


def __getattr__(name: str) -> Any:
    where = _EXPORTS.get(name)
    if where is None:
        raise AttributeError(f"module 'cpsched' has no attribute {name!r}")
    module = importlib.import_module(where)
    value = module if where == f"cpsched.{name}" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
