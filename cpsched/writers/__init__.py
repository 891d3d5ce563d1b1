"""Back ends: graphs and schedules out of the IR. Writers never overwrite an input file."""

from __future__ import annotations

import json
import os

from cpsched.core.errors import InputError


def write_text(path: str, text: str, inputs: tuple[str, ...] = ()) -> None:
    """Write ``text`` to ``path``, refusing to clobber any of the user's ``inputs``."""
    for src in inputs:
        if src and os.path.exists(path) and os.path.exists(src) and os.path.samefile(path, src):
            raise InputError(f"refusing to overwrite the input file {src}", path=path)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        raise InputError(f"cannot write: {e.strerror}", path=path) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_json(path: str, data, inputs: tuple[str, ...] = ()) -> None:
    write_text(path, json.dumps(data, indent=1) + "\n", inputs)
