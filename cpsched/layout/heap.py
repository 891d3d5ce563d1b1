"""XLA's heap placement: ``GlobalDecreasingSizeBestFitHeap`` fed by an alloc/free event
stream, as XLA's heap simulator drives it.

Time is the event counter: every allocation, hand-over and free of a non-empty buffer is
one tick (XLA's ``current_time_``), so the intervals are in event order, not in schedule
steps. Buffers handed over in place (``share_with``) are placed together with the buffer
they continue, at the largest size of the group. Buffers are then placed one at a time in
a fixed order (``spatial``: largest first; ``temporal``: longest-lived first), each into
the smallest free gap that holds it over its lifetime and those of its colocations (best
fit, ties to the lowest offset), or on top of the heap. ``best_heap`` runs both orders and
keeps the smaller heap, spatial on a tie, as XLA's ``ChooseBestHeapAlgorithm`` does.

Buffer keys must be ordered the way XLA orders its values (by id): they break ties.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

_INF = 1 << 62


def align_up(x: int, alignment: int) -> int:
    return (x + alignment - 1) // alignment * alignment if alignment > 1 else x


@dataclass
class _Interval:
    key: Any
    size: int
    start: int
    end: int = -1
    colocations: list[Any] = field(default_factory=list)
    need_allocation: bool = True


class EventHeap:
    """The event stream of one heap: ``alloc``, ``share_with``, ``free`` in order."""

    def __init__(self) -> None:
        self.intervals: dict[Hashable, _Interval] = {}
        self.zero: list[Hashable] = []  # empty buffers: offset 0, no tick
        self.time = 0

    def alloc(self, key: Hashable, size: int) -> None:
        if size == 0:
            self.zero.append(key)
            return
        if key in self.intervals:
            raise ValueError(f"buffer {key!r} allocated twice")
        self.intervals[key] = _Interval(key, size, self.time)
        self.time += 1

    def share_with(self, key: Hashable, other: Hashable, size: int) -> None:
        if size == 0:
            self.zero.append(key)
            return
        self.intervals[other].colocations.append(key)
        self.intervals[key] = _Interval(key, size, self.time, need_allocation=False)
        self.time += 1

    def free(self, key: Hashable, size: int) -> None:
        if size == 0:
            return
        iv = self.intervals[key]
        if iv.end == -1:
            iv.end = self.time
            self.time += 1


def _colocations(ivs: dict[Hashable, _Interval], iv: _Interval) -> list[_Interval]:
    out: list[_Interval] = []
    seen: set[Hashable] = set()
    work = [iv]
    while work:
        cur = work.pop()
        for k in cur.colocations:
            if k not in seen:
                seen.add(k)
                c = ivs[k]
                out.append(c)
                work.append(c)
    return out


def place(
    heap: EventHeap, order: str = "spatial", alignment: int = 1
) -> tuple[int, dict[Hashable, tuple[int, int]]]:
    """Place every buffer of ``heap``: ``(heap size, {key: (offset, size)})``."""
    ivs = heap.intervals
    groups: list[tuple[tuple, _Interval, list[_Interval], int]] = []
    for iv in ivs.values():
        col = _colocations(ivs, iv)
        lo = min([iv.start] + [c.start for c in col])
        hi = max([iv.end] + [c.end for c in col])
        size = max([iv.size] + [c.size for c in col])
        if order == "spatial":
            sort_key: tuple = (-iv.size, iv.start - iv.end, iv.key)
        elif order == "temporal":
            sort_key = (lo - hi, -iv.size, iv.key)
        else:
            raise ValueError(f"unknown heap order {order!r}")
        groups.append((sort_key, iv, col, size))
    groups.sort(key=lambda g: g[0])
    # committed chunks: parallel lists (start, end, offset, end offset)
    starts: list[int] = []
    ends: list[int] = []
    offs: list[int] = []
    tops: list[int] = []
    placed: dict[Hashable, tuple[int, int]] = {k: (0, 0) for k in heap.zero}
    heap_size = 0
    for _, iv, col, size in groups:
        if not iv.need_allocation:
            continue
        used: list[tuple[int, int]] = []
        for s, e in [(iv.start, iv.end)] + [(c.start, c.end) for c in col]:
            for k in range(len(starts)):
                if starts[k] <= e and ends[k] >= s:
                    used.append((offs[k], tops[k]))
        offset = _best_fit(used, iv.size, size, alignment)
        heap_size = max(heap_size, offset + size)
        for member in [iv] + col:
            placed[member.key] = (offset, size)
            starts.append(member.start)
            ends.append(member.end)
            offs.append(offset)
            tops.append(offset + size)
    return heap_size, placed


def _best_fit(used: list[tuple[int, int]], size: int, group_size: int, alignment: int) -> int:
    """The smallest free gap (lowest offset on a tie) that holds ``group_size`` at an
    aligned offset; gaps narrower than the buffer's own ``size`` are not candidates."""
    if not used:
        return 0
    used.sort()
    free: list[tuple[int, int]] = []
    free_start = 0
    cur_off, cur_end = used[0]
    for off, end in used[1:]:
        if off < cur_end:
            cur_end = max(cur_end, end)
            continue
        if cur_off - free_start >= size:
            free.append((free_start, cur_off))
        free_start = max(free_start, align_up(cur_end, alignment))
        cur_off, cur_end = off, end
    if cur_off - free_start >= size:
        free.append((free_start, cur_off))
    free_start = max(free_start, align_up(cur_end, alignment))
    free.append((free_start, _INF))
    best, best_size = -1, _INF
    for lo, hi in free:
        start = align_up(lo, alignment)
        if hi - group_size < start:
            continue
        if best < 0 or hi - lo < best_size:
            best, best_size = start, hi - lo
    return best


def best_heap(heap: EventHeap, alignment: int = 1) -> tuple[int, dict[Hashable, tuple[int, int]]]:
    """Spatial and temporal placement, the smaller heap kept (spatial on a tie)."""
    best = None
    for order in ("spatial", "temporal"):
        got = place(heap, order, alignment)
        if best is None or got[0] < best[0]:
            best = got
    assert best is not None
    return best


__all__ = ["EventHeap", "place", "best_heap", "align_up"]
