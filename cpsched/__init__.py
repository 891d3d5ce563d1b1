"""cpsched: constraint-solver schedules for ML compiler graphs, beside the compilers' heuristics.

The Python API (``cpsched.api``): ``read``, ``schedule``, ``compare``, ``simulate``,
``frontier``, ``methods``, ``from_networkx``, ``from_jax`` (needs ``cpsched[jax]``), ``from_torch``
and ``inductor_order`` (need ``cpsched[torch]``); every method returns one ``Result``.
"""

from cpsched import generators  # noqa: E402
from cpsched.api import (  # noqa: E402
    Comparison,
    Result,
    compare,
    from_jax,
    from_networkx,
    from_torch,
    frontier,
    methods,
    read,
    schedule,
    simulate,
)
from cpsched.core.graph import Collective, Graph, GraphBuilder, OpKind  # noqa: E402
from cpsched.core.symbolic import SymExpr  # noqa: E402
from cpsched.torch_order import inductor_order  # noqa: E402  (torch imported when entered)
from cpsched.version import __version__  # noqa: E402

__all__ = [
    "Graph",
    "GraphBuilder",
    "OpKind",
    "Collective",
    "SymExpr",
    "__version__",
    "Result",
    "Comparison",
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
]
