"""Checks of the arguments the Python API and the command line take: a wrong type is an
``InputTypeError`` (also a ``TypeError``), a value out of range an ``InputError`` (also a
``ValueError``), a request past a resource limit a ``LimitError``; each names the argument.

>>> seed(2**64, "seed")
Traceback (most recent call last):
...
cpsched.core.errors.InputError: seed must be an integer from 0 to 2147483647 (got 18446744073709551616)
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from cpsched.core.errors import InputError, InputTypeError, LimitError

# CP-SAT's random seed is a 32-bit signed integer.
MAX_SEED = 2**31 - 1
# More CP-SAT threads than this only slow a solve down (each holds a copy of the model).
MAX_WORKERS = 256
# About 31 years: a longer limit is a mistake (10**400 is one), not a request.
MAX_TIME_LIMIT = 1e9


def _type_name(value: Any) -> str:
    return type(value).__name__


def number(
    value: Any, what: str, *, low: float = 0.0, strict: bool = True, high: float | None = None
) -> float:
    """``value`` as a finite float above ``low`` (``strict``) or at least ``low``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputTypeError(f"{what} must be a number, not {_type_name(value)} {value!r}")
    try:
        v = float(value)
    except OverflowError:
        v = math.inf
    if not (math.isfinite(v) and (v > low if strict else v >= low)):
        raise InputError(
            f"{what} must be a finite number {'above' if strict else 'at least'} {low:g} "
            f"(got {value!r})"
        )
    if high is not None and v > high:
        raise LimitError(f"{what} must be at most {high:g} (got {value!r})")
    return v


def integer(value: Any, what: str, *, low: int = 0, high: int | None = None) -> int:
    """``value`` as an int from ``low`` to ``high`` (a float such as 2.5 is refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputTypeError(f"{what} must be an integer, not {_type_name(value)} {value!r}")
    v = int(value)
    if v < low or (high is not None and v > high):
        if high is None:
            raise InputError(f"{what} must be at least {low} (got {v})")
        raise InputError(f"{what} must be an integer from {low} to {high} (got {v})")
    return v


def flag(value: Any, what: str) -> bool:
    """``value`` as a bool: only True/False (a string such as "no" is true to ``bool``)."""
    if not isinstance(value, (bool, numbers.Integral)) or value not in (0, 1):
        raise InputTypeError(f"{what} must be True or False, not {value!r}")
    return bool(value)


def time_limit(value: Any, what: str = "time_limit") -> float:
    return number(value, what, high=MAX_TIME_LIMIT)


def workers(value: Any, what: str = "workers") -> int:
    v = integer(value, what, low=1)
    if v > MAX_WORKERS:
        raise LimitError(f"{what} {v}: at most {MAX_WORKERS} CP-SAT threads")
    return v


def seed(value: Any, what: str = "seed") -> int:
    return integer(value, what, low=0, high=MAX_SEED)


def text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise InputTypeError(f"{what} must be a string, not {_type_name(value)} {value!r}")
    return value


__all__ = [
    "number",
    "integer",
    "flag",
    "time_limit",
    "workers",
    "seed",
    "text",
    "MAX_SEED",
    "MAX_WORKERS",
    "MAX_TIME_LIMIT",
]
