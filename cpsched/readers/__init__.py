"""Front ends: each turns one input format into the ``Graph`` IR.

``read_graph(path)`` picks the reader from the file's content.
"""

from __future__ import annotations

import json
import os

from cpsched.core.errors import InputError


def _looks_like_mlir(path: str, text: str) -> bool:
    if path.endswith(".mlir"):
        return True
    head = "\n".join(ln for ln in text.splitlines() if not ln.startswith("#"))[:2048].lstrip()
    return head.startswith(("module @", "module {", "module attributes", "func.func",
                            "builtin.module")) or (
        ("stablehlo." in head or "mhlo." in head) and not head.startswith("HloModule"))


def sniff_format(path: str) -> str:
    """``hlo``, ``mlir``, ``cpsched-json``, ``cpsched-schedule`` or ``nx-json``."""
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
    if _looks_like_mlir(path, text):
        return "mlir"
    return "hlo"


def read_graph(path: str, **options):
    """Read any supported input into a ``Graph`` (the entry computation for HLO)."""
    kind = sniff_format(path)
    if kind == "cpsched-json":
        from cpsched.readers.json_graph import read_json_graph
        return read_json_graph(path)
    if kind == "nx-json":
        from cpsched.readers.nx_json import read_nx_json
        return read_nx_json(path)
    if kind == "mlir":
        from cpsched.readers.stablehlo import read_stablehlo_graph
        return read_stablehlo_graph(path)
    if kind == "cpsched-schedule":
        raise InputError("this is a schedule file, not a graph; pass the graph it belongs to",
                         path=path)
    from cpsched.readers.hlo.convert import read_hlo_graph
    return read_hlo_graph(path, **options)


def load_json(path: str):
    try:
        with open(path) as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise InputError(f"bad JSON: {e.msg}", path=path, line=e.lineno, column=e.colno) from None
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", path=path) from None


def display_name(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]
