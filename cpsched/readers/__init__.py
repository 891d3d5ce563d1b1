"""Front ends: each turns one input format into the ``Graph`` IR.

``read_graph(path)`` picks the reader from the file's content.
"""

from __future__ import annotations

from cpsched.core.errors import InputError
from cpsched.readers.files import display_name, load_json
from cpsched.readers.hlo.convert import read_hlo_graph
from cpsched.readers.json_graph import read_json_graph
from cpsched.readers.nx_json import read_nx_json


def sniff_format(path: str) -> str:
    """``hlo``, ``cpsched-json``, ``cpsched-schedule`` or ``nx-json``."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", path=path) from None
    text = head.decode("utf-8", errors="replace").lstrip()
    if not text:
        raise InputError("file is empty", path=path)
    if text.startswith("{"):
        if '"cpsched-graph"' in text:
            return "cpsched-json"
        if '"cpsched-schedule"' in text:
            return "cpsched-schedule"
        return "nx-json"
    return "hlo"


def read_graph(path: str, **options):
    """Read any supported input into a ``Graph`` (the entry computation for HLO)."""
    kind = sniff_format(path)
    if kind == "cpsched-json":
        return read_json_graph(path)
    if kind == "nx-json":
        return read_nx_json(path)
    if kind == "cpsched-schedule":
        raise InputError("this is a schedule file, not a graph; pass the graph it belongs to",
                         path=path)
    return read_hlo_graph(path, **options)


__all__ = ["read_graph", "sniff_format", "load_json", "display_name", "read_json_graph",
           "read_nx_json", "read_hlo_graph"]
