"""Front ends: each turns one input format into the ``Graph`` IR.

``read_graph(path)`` picks the reader from the file's content.
"""

from __future__ import annotations

from cpsched.core.errors import InputError
from cpsched.core.inputs import (  # noqa: F401
    BOM,
    check_input_file,
    is_gzip,
    load_json,
    loads_json,
    read_bytes,
    read_text,
)
from cpsched.readers.detect import looks_like_mlir, sniff_format
from cpsched.readers.files import display_name
from cpsched.readers.hlo.verify import read_verified_graph
from cpsched.readers.json_graph import read_json_graph
from cpsched.readers.nx_json import read_nx_json
from cpsched.readers.stablehlo import read_stablehlo_graph
from cpsched.readers.torch_graph import read_torch_graph


def read_graph(path: str, **options):
    """Read any supported input into a ``Graph`` (the entry computation for HLO)."""
    kind = sniff_format(path)
    if kind == "cpsched-json":
        return read_json_graph(path)
    if kind == "nx-json":
        return read_nx_json(path)
    if kind == "torch":
        return read_torch_graph(path)
    if kind == "mlir":
        return read_stablehlo_graph(path)
    if kind == "cpsched-schedule":
        raise InputError(
            "this is a schedule file, not a graph; pass the graph it belongs to", path=path
        )
    return read_verified_graph(path, **options)


def read_input_text(path: str) -> str:
    """The text of an input file, checked, gunzipped when compressed, UTF-8 (BOM dropped)."""
    return read_text(path)


__all__ = [
    "read_graph",
    "sniff_format",
    "looks_like_mlir",
    "load_json",
    "display_name",
    "read_json_graph",
    "read_nx_json",
    "read_torch_graph",
    "read_verified_graph",
    "read_text",
    "read_input_text",
    "check_input_file",
    "is_gzip",
]
