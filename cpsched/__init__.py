"""cpsched: constraint-solver schedules for ML compiler graphs, beside the compilers' heuristics."""

from cpsched.core.graph import Collective, Graph, GraphBuilder, OpKind
from cpsched.core.symbolic import SymExpr

__version__ = "0.1.0"
__all__ = ["Graph", "GraphBuilder", "OpKind", "Collective", "SymExpr", "__version__"]
