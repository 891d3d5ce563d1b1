"""Reading input files: JSON (through ``cpsched.core.inputs``: size-checked, strict numbers,
errors at their line and column) and display names."""

from __future__ import annotations

import os

from cpsched.core.inputs import load_json  # noqa: F401  (size-checked, typed JSON)


def display_name(path: str) -> str:
    """The file's name without folder and extension (``foo.hlo.gz`` -> ``foo``)."""
    base = os.path.basename(path)
    if base.endswith(".gz"):
        base = base[:-3]
    return os.path.splitext(base)[0]
