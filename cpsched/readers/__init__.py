"""Front ends: each turns one input format into the ``Graph`` IR.

``read_graph(path)`` picks the reader from the file's content.
"""

from __future__ import annotations

import re

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
from cpsched.readers.files import display_name
from cpsched.readers.hlo.verify import read_verified_graph
from cpsched.readers.json_graph import read_json_graph
from cpsched.readers.nx_json import read_nx_json
from cpsched.readers.stablehlo import read_stablehlo_graph
from cpsched.readers.torch_graph import looks_like_simulator_json, read_torch_graph


def _json_format(path: str, head: str, whole: bool) -> str:
    """The ``format`` a JSON file declares; the whole file is searched when the first
    bytes do not say (keys may come in any order, e.g. sorted)."""
    for fmt in ("cpsched-graph", "cpsched-schedule", "cpsched-torch-graph"):
        if f'"{fmt}"' in head:
            return fmt
    if looks_like_simulator_json(head):
        return "cpsched-torch-graph"
    if whole:
        return "nx-json"
    text = read_bytes(path).decode("utf-8", errors="replace")
    m = re.search(r'"format"\s*:\s*"(cpsched-graph|cpsched-schedule|cpsched-torch-graph)"', text)
    if m:
        return m.group(1)
    return "cpsched-torch-graph" if looks_like_simulator_json(text) else "nx-json"


def looks_like_mlir(path: str, text: str) -> bool:
    """Whether a file named ``path`` that starts with ``text`` is MLIR (StableHLO)."""
    if path.endswith((".mlir", ".mlir.gz")):
        return True
    head = "\n".join(ln for ln in text.splitlines() if not ln.startswith("#"))[:2048].lstrip()
    return head.startswith(
        ("module @", "module {", "module attributes", "func.func", "builtin.module")
    ) or (("stablehlo." in head or "mhlo." in head) and not head.startswith("HloModule"))


def sniff_format(path: str) -> str:
    """``hlo``, ``mlir``, ``cpsched-json``, ``cpsched-schedule``, ``torch`` (a
    ``cpsched-torch-graph`` record or Inductor's simulator JSON) or ``nx-json``."""
    head = read_bytes(path, limit=4096)
    text = head.decode("utf-8", errors="replace").lstrip(BOM + " \t\r\n")
    if not text:
        raise InputError("file is empty", path=path)
    if text.startswith("{"):
        kind = _json_format(path, text, whole=len(head) < 4096)
        return {"cpsched-graph": "cpsched-json", "cpsched-torch-graph": "torch"}.get(kind, kind)
    if looks_like_mlir(path, text):
        return "mlir"
    return "hlo"


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
