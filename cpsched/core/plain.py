"""JSON-ready copies of nested results (numpy scalars and arrays, tuples, mappings)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def to_plain(v):
    """``v`` with mappings as dicts (string keys), sequences as lists and numpy values as
    Python numbers, so ``json.dumps`` takes it."""
    if isinstance(v, Mapping):
        return {str(k): to_plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [to_plain(x) for x in v]
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return v
