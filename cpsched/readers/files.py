"""Reading input files: JSON with errors at their line and column, display names."""

from __future__ import annotations

import json
import os

from cpsched.core.errors import InputError


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
