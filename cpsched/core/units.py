"""Bytes and times for people: parsing ``8GiB`` / ``512MB`` and printing ``1.50 MiB`` / ``3.2 ms``.

Tables print these; ``--json`` and the API keep exact integers (bytes) and floats (times).
"""

from __future__ import annotations

import re

from cpsched.core.errors import InputError
from cpsched.core.symbolic import SIZE_LIMIT

# Decimal (SI) and binary prefixes; a bare number is bytes.
BYTE_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
_SIZE = re.compile(r"^\s*([0-9][0-9_]*(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*$")


def parse_bytes(text: str | int | float, what: str = "size") -> int:
    """``'8GiB'`` -> 8589934592, ``'512MB'`` -> 512000000, ``'1e6'`` -> 1000000.

    Units: B, kB/MB/GB/TB (powers of 1000), KiB/MiB/GiB/TiB (powers of 1024), any case.

    >>> parse_bytes('1.5KiB'), parse_bytes('2 MB'), parse_bytes(4096)
    (1536, 2000000, 4096)
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value: float | int = text
    else:
        m = _SIZE.match(str(text))
        unit = m.group(2).lower() if m else ""
        if not m or unit not in BYTE_UNITS:
            raise InputError(
                f"{what} {text!r}: expected bytes such as 1000000, 512MB or 8GiB "
                "(units B, kB, MB, GB, TB, KiB, MiB, GiB, TiB)"
            )
        value = float(m.group(1).replace("_", "")) * BYTE_UNITS[unit]
    if value != value or value < 0:
        raise InputError(f"{what} {text!r}: must be a number of bytes, not negative")
    if value > SIZE_LIMIT:  # infinity included
        raise InputError(f"{what} {text!r}: past the 2^62-byte limit")
    return int(value)


def format_bytes(v: float) -> str:
    """Human-readable bytes with binary units.

    >>> format_bytes(512), format_bytes(1536), format_bytes(3 * 2**30)
    ('512 B', '1.50 KiB', '3.00 GiB')
    """
    v = float(v)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(v) < 1024 or unit == "TiB":
            return f"{v:.0f} {unit}" if unit == "B" else f"{v:.2f} {unit}"
        v /= 1024
    raise AssertionError("unreachable")


def format_bytes_exact(v: float) -> str:
    """Human-readable bytes with the exact count beside them, for messages whose figure a
    user may type back (a budget): ``12.84 MiB (13,466,152 B)``; ``512 B`` alone.

    >>> format_bytes_exact(512), format_bytes_exact(13466152)
    ('512 B', '12.84 MiB (13,466,152 B)')
    """
    v = int(v)
    short = format_bytes(v)
    return short if abs(v) < 1024 else f"{short} ({v:,} B)"


def format_seconds(seconds: float) -> str:
    """A duration in s, ms, us or ns, with three significant figures.

    >>> format_seconds(2.294e-06), format_seconds(0.0125), format_seconds(75.0)
    ('2.29 us', '12.5 ms', '75.0 s')
    """
    s = float(seconds)
    a = abs(s)
    if a == 0:
        return "0 s"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")):
        if a >= scale or unit == "ns":
            v = s / scale
            return f"{v:#.3g} {unit}" if abs(v) < 100 else f"{v:.0f} {unit}"
    raise AssertionError("unreachable")


# Time units of the cost model (``cpsched.cost.model``): seconds; XLA's abstract units, one of
# which XLA's latency estimator takes as one microsecond; or the input file's own units.
def format_time(value: float, unit: str = "s") -> str:
    """A time in the cost model's ``unit`` with its unit written out.

    >>> format_time(0.5), format_time(43048, "xla"), format_time(12, "file")
    ('500 ms', '43.0 ms (xla)', '12 units')
    """
    if unit == "s":
        return format_seconds(value)
    if unit == "xla":
        return f"{format_seconds(float(value) * 1e-6)} (xla)"
    return f"{float(value):,.6g} units"


__all__ = [
    "BYTE_UNITS",
    "parse_bytes",
    "format_bytes",
    "format_bytes_exact",
    "format_seconds",
    "format_time",
]
