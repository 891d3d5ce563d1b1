"""When this process started: a command's time limit counts from there (the interpreter's
start and the imports included). Standard library only: the command line reads it first."""

from __future__ import annotations

import os
import time

__all__ = ["process_start"]

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
