"""Front ends: each turns one input format into the ``Graph`` IR.

``read_graph(path)`` picks the reader from the file's content.
"""

from __future__ import annotations

import gzip
import json
import os
import zlib

from cpsched.core.errors import InputError


GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(path: str) -> bool:
    """Whether ``path`` is gzip-compressed (by its first bytes, whatever its name)."""
    try:
        with open(path, "rb") as f:
            return f.read(2) == GZIP_MAGIC
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", path=path) from None


def read_input_text(path: str) -> str:
    """The text of an input file, gunzipped when it is gzip-compressed (``foo.hlo.gz``)."""
    try:
        if is_gzip(path):
            with gzip.open(path, "rb") as f:
                raw = f.read()
        else:
            with open(path, "rb") as f:
                raw = f.read()
    except (OSError, EOFError, zlib.error) as e:
        reason = getattr(e, "strerror", None) or str(e) or type(e).__name__
        raise InputError(f"cannot read: {reason}", path=path) from None
    return raw.decode("utf-8", errors="replace")


def sniff_format(path: str) -> str:
    """``hlo``, ``cpsched-json``, ``cpsched-schedule`` or ``nx-json``."""
    try:
        if is_gzip(path):
            with gzip.open(path, "rb") as f:
                head = f.read(4096)
        else:
            with open(path, "rb") as f:
                head = f.read(4096)
    except (OSError, EOFError, zlib.error) as e:
        reason = getattr(e, "strerror", None) or str(e) or type(e).__name__
        raise InputError(f"cannot read: {reason}", path=path) from None
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
        from cpsched.readers.json_graph import read_json_graph
        return read_json_graph(path)
    if kind == "nx-json":
        from cpsched.readers.nx_json import read_nx_json
        return read_nx_json(path)
    if kind == "cpsched-schedule":
        raise InputError("this is a schedule file, not a graph; pass the graph it belongs to",
                         path=path)
    from cpsched.readers.hlo.convert import read_hlo_graph
    return read_hlo_graph(path, **options)


def load_json(path: str):
    try:
        return json.loads(read_input_text(path))
    except json.JSONDecodeError as e:
        raise InputError(f"bad JSON: {e.msg}", path=path, line=e.lineno, column=e.colno) from None
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", path=path) from None


def display_name(path: str) -> str:
    base = os.path.basename(path)
    if base.endswith(".gz"):
        base = base[:-3]
    return os.path.splitext(base)[0]
