"""Pausing the cyclic garbage collector around hot loops: the schedulers and readers
allocate millions of small lists and tuples and hold no cycles, and the collector's repeated
full scans of the growing heap otherwise cost as much as the work itself on 100k-op
graphs."""

from __future__ import annotations

import contextlib
import functools
import gc


@contextlib.contextmanager
def no_gc():
    """Pause the cyclic garbage collector: the schedulers allocate millions of small lists
    and tuples and hold no cycles, and the collector's repeated full scans of the growing
    heap otherwise cost as much as the scheduling itself on 100k-op graphs."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def without_gc(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with no_gc():
            return fn(*args, **kwargs)

    return wrapper
