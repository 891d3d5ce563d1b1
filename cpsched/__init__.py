"""cpsched: constraint-solver schedules for ML compiler graphs, beside the compilers' heuristics."""

from cpsched.core.graph import Collective, Graph, GraphBuilder, OpKind
from cpsched.core.symbolic import SymExpr

__version__ = "0.1.0"


def from_jax(fn, *example_args, **options):  # lazy: jax is an optional extra
    from cpsched.readers.jax_frontend import from_jax as _from_jax
    return _from_jax(fn, *example_args, **options)


from_jax.__doc__ = "See ``cpsched.readers.jax_frontend.from_jax`` (needs ``cpsched[jax]``)."
__all__ = ["Graph", "GraphBuilder", "OpKind", "Collective", "SymExpr", "from_jax", "__version__"]
