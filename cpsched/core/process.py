"""When this process started: a command's time limit counts from there (the interpreter's
start and the imports included). Standard library only: the command line reads it first."""

from __future__ import annotations

import os
import time

__all__ = ["process_start", "short_time_text"]

_process_start: float | None = None


def process_start() -> float:
    """When this process started, on the ``perf_counter`` clock (from ``/proc`` where there
    is one, else the first call)."""
    global _process_start
    if _process_start is None:
        now = time.perf_counter()
        try:
            with open("/proc/self/stat") as f:
                ticks = int(f.read().rsplit(")", 1)[1].split()[19])
            with open("/proc/uptime") as f:
                uptime = float(f.read().split()[0])
            age = uptime - ticks / os.sysconf("SC_CLK_TCK")
            _process_start = now - min(max(0.0, age), 60.0)
        except (OSError, ValueError, IndexError):
            _process_start = now
    return _process_start


def short_time_text(avail: float | None, limit: float | None, what: str = "the solver") -> str:
    """A note when ``what`` had less than half of the time limit (start-up and reading the
    input took the rest; a percentage budget's reference, the input order's peak, takes
    no time to speak of); empty otherwise."""
    if avail is None or not limit or avail >= 0.5 * limit:
        return ""
    from cpsched.core.units import format_seconds  # (this module is read before any other)

    return (
        f"note: {what} had {format_seconds(max(0.0, avail))} of the "
        f"{format_seconds(limit)} time limit (starting, reading the input took the rest); a "
        "longer --time-limit gives it more"
    )
