"""StableHLO / MHLO text (``.mlir``, as JAX prints it) -> ``Graph`` with symbolic sizes."""

from cpsched.readers.stablehlo.convert import (
    StableHloConverter,
    read_stablehlo_graph,
    read_stablehlo_text,
)
from cpsched.readers.stablehlo.parser import parse_mlir_text, read_mlir_module

__all__ = [
    "read_stablehlo_graph",
    "read_stablehlo_text",
    "StableHloConverter",
    "parse_mlir_text",
    "read_mlir_module",
]
