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


def short_path(path: str) -> str:
    """A source file's name without the machine's folders: from the installed package's
    name on (``torchvision/models/resnet.py``), a relative path as it is, else the base name.

    >>> short_path("/x/lib/python3.12/site-packages/flax/linen/linear.py"), short_path("m/a.py")
    ('flax/linen/linear.py', 'm/a.py')
    """
    parts = path.replace("\\", "/").split("/")
    for marker in ("site-packages", "dist-packages"):
        if marker in parts:
            return "/".join(parts[parts.index(marker) + 1 :])
    if path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":"):
        return parts[-1]
    return path.replace("\\", "/")
