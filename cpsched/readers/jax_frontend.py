"""From a JAX function to a ``Graph``, without dump folders (optional extra: ``cpsched[jax]``).

``from_jax(fn, *example_args, stage="optimized")`` compiles ``fn`` with ``jax.jit`` and reads
XLA's optimized HLO module (``lower(...).compile().as_text()``: the module XLA runs, what its
memory scheduler sees) with the HLO reader. ``stage="stablehlo"`` exports ``fn`` with
``jax.export`` and reads the StableHLO module; with symbolic dims (``dims=`` or example
arguments that are ``jax.ShapeDtypeStruct`` with ``jax.export.symbolic_shape``) the sizes
are polynomials in the named dims.

The optimized stage's graph is the one reading the ``--xla_dump_to`` file gives, names and
all (a parameter's pytree path, ``params['blocks'][0]['w1']``, is its ``op_name``
attribute); ``from_jax_program`` also returns the parsed module, which writing a scheduled
module needs. jax is imported only when one of these functions is called.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

from cpsched.core.errors import InputError
from cpsched.core.graph import Graph, attach_program
from cpsched.readers.hlo.convert import HloConverter
from cpsched.readers.hlo.parser import gc_paused, parse_hlo_text
from cpsched.readers.hlo.verify import verify_module
from cpsched.readers.stablehlo import read_stablehlo_text

STAGES = ("optimized", "stablehlo")


def _jax():
    try:
        import jax
        import jax.export  # noqa: F401  (jax.export is a submodule in older releases)
    except ImportError:
        raise ImportError("from_jax needs jax: pip install 'cpsched[jax]'") from None
    return jax


def _jitted(fn, jit_kwargs: Mapping[str, Any]):
    jax = _jax()
    if hasattr(fn, "lower") and hasattr(fn, "trace"):  # already jax.jit(...)
        if jit_kwargs:
            raise InputError(
                "fn is already jitted: pass jit options to jax.jit yourself, "
                f"not to from_jax ({', '.join(sorted(jit_kwargs))})"
            )
        return fn
    return jax.jit(fn, **jit_kwargs)


def _symbolic_args(
    fn, args: Sequence[Any], dims: Mapping[Any, str] | None, constraints: Sequence[str]
):
    """Replace the arguments named in ``dims`` by ``ShapeDtypeStruct``s with symbolic
    shapes (one shared scope, so equal names are the same dim)."""
    if not dims:
        return list(args)
    jax = _jax()
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        names = []
    specs = {}
    for key, spec in dims.items():
        if isinstance(key, str):
            if key not in names:
                raise InputError(f"dims: {fn!r} has no argument {key!r} (has {names})")
            key = names.index(key)
        if not 0 <= key < len(args):
            raise InputError(f"dims: argument {key} is not given")
        specs[key] = spec
    scope = jax.export.SymbolicScope(list(constraints))
    out = list(args)
    for k, spec in specs.items():
        a = args[k]
        shape = jax.export.symbolic_shape(spec, scope=scope)
        if len(shape) != len(a.shape):
            raise InputError(
                f"dims: {spec!r} has {len(shape)} dims, argument {k} has shape {tuple(a.shape)}"
            )
        out[k] = jax.ShapeDtypeStruct(shape, a.dtype)
    return out


def _is_symbolic(args) -> bool:
    jax = _jax()
    return any(
        jax.export.is_symbolic_dim(d)
        for leaf in jax.tree_util.tree_leaves(args)
        for d in getattr(leaf, "shape", ())
    )


def optimized_hlo_text(fn, *example_args, **jit_kwargs) -> str:
    """XLA's optimized HLO module for ``fn`` at the example arguments' shapes."""
    jitted = _jitted(fn, jit_kwargs)
    if _is_symbolic(example_args):
        raise InputError(
            "stage='optimized' needs concrete shapes (XLA compiles one module per "
            "shape); use stage='stablehlo' for symbolic dims, or one call per "
            "bucket"
        )
    return jitted.lower(*example_args).compile().as_text()


def stablehlo_text(
    fn,
    *example_args,
    dims: Mapping[Any, str] | None = None,
    constraints: Sequence[str] = (),
    **jit_kwargs,
) -> str:
    """``jax.export``'s StableHLO module for ``fn`` (symbolic where ``dims`` says)."""
    jax = _jax()
    args = _symbolic_args(fn, example_args, dims, constraints)
    jitted = _jitted(fn, jit_kwargs)
    return jax.export.export(jitted)(*args).mlir_module()


def from_jax(
    fn,
    *example_args,
    dims: Mapping[Any, str] | None = None,
    stage: str = "optimized",
    constraints: Sequence[str] = (),
    name: str | None = None,
    **jit_kwargs,
) -> Graph:
    """The ``Graph`` of a JAX function at ``example_args`` (needs ``cpsched[jax]``).

    - ``stage="optimized"`` (default): XLA's optimized HLO module for this machine's
      backend (``jax.jit(fn).lower(...).compile().as_text()``), the graph reading its
      ``--xla_dump_to`` file gives; ``schedule`` orders every computation of the module and
      ``Result.write`` writes it back scheduled.
    - ``stage="stablehlo"``: ``jax.export``'s StableHLO, before XLA's fusion; ``dims``
      maps arguments (position or name) to symbolic shape specs (``{"x": "b, 256"}``),
      ``constraints`` such as ``["b <= 4096"]``: every size is a polynomial in the dims.

    Other keyword arguments go to ``jax.jit`` (``donate_argnums``, ``static_argnums``, ...).
    """
    g, module = from_jax_program(
        fn,
        *example_args,
        dims=dims,
        stage=stage,
        constraints=constraints,
        name=name,
        **jit_kwargs,
    )
    if module is not None:
        verify_module(module)  # what XLA's verifier refuses is not scheduled
        attach_program(g, module)  # every computation of the module is scheduled
    return g


def from_jax_program(
    fn,
    *example_args,
    dims: Mapping[Any, str] | None = None,
    stage: str = "optimized",
    constraints: Sequence[str] = (),
    name: str | None = None,
    **jit_kwargs,
):
    """``(graph, module)`` of ``fn`` at ``example_args`` (arrays or ``jax.ShapeDtypeStruct``);
    ``module`` is the parsed HLO module of the optimized stage, else None.

    - ``stage="optimized"`` (default): XLA's optimized HLO, read by the HLO reader; the
      graph has the module's own schedule as ``original_order``.
    - ``stage="stablehlo"``: the ``jax.export`` StableHLO module. ``dims`` maps arguments
      (position or name) to symbolic shape specs, e.g. ``{"tokens": "b, s"}``, with
      ``constraints`` such as ``["s <= 2048"]``; or pass ``ShapeDtypeStruct``s with
      ``jax.export.symbolic_shape`` yourself.

    Other keyword arguments go to ``jax.jit`` (``donate_argnums``, ``static_argnums``, ...).
    """
    if stage not in STAGES:
        raise InputError(f"stage must be one of {', '.join(STAGES)}, not {stage!r}")
    module = None
    if stage == "optimized":
        if dims:
            raise InputError("dims need stage='stablehlo' (XLA compiles concrete shapes)")
        text = optimized_hlo_text(fn, *example_args, **jit_kwargs)
        with gc_paused():
            module = parse_hlo_text(text)
            g = HloConverter(module).graph(None)
    else:
        g = read_stablehlo_text(
            stablehlo_text(fn, *example_args, dims=dims, constraints=constraints, **jit_kwargs)
        )
    name = name or (
        f"jit_{fn.__name__}" if stage == "optimized" and getattr(fn, "__name__", None) else None
    )
    if name:
        g = g.with_(name=name)
    return g, module


__all__ = ["from_jax", "from_jax_program", "optimized_hlo_text", "stablehlo_text", "STAGES"]
