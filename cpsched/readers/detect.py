"""What format an input is in, decided in one place for files and for text in memory.

``sniff_format(path)`` reads a file's first bytes; ``text_format(text)`` looks at text the
caller already holds (``api.read`` of a string). Both answer from the same rules:

- ``{`` first: JSON, told apart by the ``format`` it declares (``json_format``);
- a ``.mlir`` name, or text that opens as an MLIR module or function, or mentions
  ``stablehlo.`` / ``mhlo.`` ops outside an HLO module: MLIR (StableHLO);
- anything else: HLO text (a module, or a schedule file that lists op names).
"""

from __future__ import annotations

import os
import re

from cpsched.core.errors import InputError
from cpsched.core.inputs import BOM, read_bytes
from cpsched.readers.torch_graph import looks_like_simulator_json

# How much of a file the detector reads.
HEAD_BYTES = 4096
MLIR_SUFFIXES = (".mlir", ".mlir.gz")
# How text that opens an MLIR module (or a bare function) starts.
MLIR_STARTS = ("module @", "module {", "module attributes", "func.func", "builtin.module")
# What a string given where a path or a program's text may stand starts with when it is text.
TEXT_STARTS = ("{", "HloModule")
_JSON_FORMATS = ("cpsched-graph", "cpsched-schedule", "cpsched-torch-graph")
# sniff_format's names of the JSON formats (the rest are the same).
_SNIFFED = {"cpsched-graph": "cpsched-json", "cpsched-torch-graph": "torch"}


def json_format(path: str, head: str, whole: bool) -> str:
    """The ``format`` a JSON file declares; the whole file is searched when the first
    bytes do not say (keys may come in any order, e.g. sorted)."""
    for fmt in _JSON_FORMATS:
        if f'"{fmt}"' in head:
            return fmt
    if looks_like_simulator_json(head):
        return "cpsched-torch-graph"
    if whole:
        return "nx-json"
    text = read_bytes(path).decode("utf-8", errors="replace")
    m = re.search(r'"format"\s*:\s*"(' + "|".join(_JSON_FORMATS) + r')"', text)
    if m:
        return m.group(1)
    return "cpsched-torch-graph" if looks_like_simulator_json(text) else "nx-json"


def looks_like_mlir(path: str, text: str) -> bool:
    """Whether a file named ``path`` that starts with ``text`` is MLIR (StableHLO)."""
    if path.endswith(MLIR_SUFFIXES):
        return True
    # attribute aliases (#loc = ...) and // comments come before the module in MLIR files
    head = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith(("#", "//")))[
        :2048
    ].lstrip()
    return head.startswith(MLIR_STARTS) or (
        ("stablehlo." in head or "mhlo." in head) and not head.startswith("HloModule")
    )


def text_format(text: str, name: str = "") -> str:
    """``json``, ``mlir`` or ``hlo``: the format of ``text``, the start of an input named
    ``name`` (``""`` for text in memory)."""
    body = text.lstrip(BOM + " \t\r\n")
    if body.startswith("{"):
        return "json"
    if name.lower().endswith(".json"):
        # a JSON array or number would otherwise be read as HLO text, and refused as such
        raise InputError(
            "a graph JSON is an object ({...}: a cpsched graph or a node-link graph); "
            f"this file starts with {body[:12]!r}",
            path=name,
        )
    if looks_like_mlir(name, body):
        return "mlir"
    return "hlo"


def sniff_format(path: str) -> str:
    """``hlo``, ``mlir``, ``cpsched-json``, ``cpsched-schedule``, ``torch`` (a
    ``cpsched-torch-graph`` record or Inductor's simulator JSON) or ``nx-json``."""
    head = read_bytes(path, limit=HEAD_BYTES)
    text = head.decode("utf-8", errors="replace").lstrip(BOM + " \t\r\n")
    if not text:
        raise InputError("file is empty", path=path)
    kind = text_format(text, path)
    if kind == "json":
        kind = json_format(path, text, whole=len(head) < HEAD_BYTES)
        return _SNIFFED.get(kind, kind)
    return kind


def is_hlo_module(text: str) -> bool:
    """Whether text detected as ``hlo`` holds a module (else a list of op names)."""
    return "HloModule" in text or "ENTRY" in text


def is_text(source: str) -> bool:
    """Whether a string given where a path or an input's text may stand is the text: it
    has a line break, is longer than a path, or opens as JSON or HLO and names no file."""
    return not (
        "\n" not in source
        and len(source) < HEAD_BYTES
        and (os.path.exists(source) or not source.lstrip(BOM + " \t\r").startswith(TEXT_STARTS))
    )
