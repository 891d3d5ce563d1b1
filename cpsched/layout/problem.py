"""A layout problem: buffers with fixed lifetimes ``[lower, upper)`` and sizes; a layout
gives each an offset so that two buffers live at the same time never share a byte.

CSV (the format of the MiniMalloc benchmark): a header ``id,lower,upper,size`` and one
row per buffer; a solution adds an ``offset`` column. ``lower`` and ``upper`` are integers
(``upper`` exclusive), ``size`` a non-negative integer, ``id`` any text, unique.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from cpsched.analysis.memory import live_ranges
from cpsched.core.errors import InputError
from cpsched.core.graph import Graph
from cpsched.core.inputs import load_json, read_text
from cpsched.core.scenarios import Scenarios, static

COLUMNS = ("id", "lower", "upper", "size")


@dataclass(frozen=True)
class Buffer:
    id: str
    lower: int  # first time step it is live
    upper: int  # first step it is no longer live (exclusive)
    size: int


@dataclass
class LayoutProblem:
    buffers: list[Buffer]
    name: str = ""

    def __len__(self) -> int:
        return len(self.buffers)

    def sections(self) -> tuple[list[int], list[list[int]]]:
        """The times where the live set changes and, for each stretch between two such
        times, the indices of the buffers live there (the buffers of nonzero size)."""
        points = sorted({b.lower for b in self.buffers} | {b.upper for b in self.buffers})
        at = {t: k for k, t in enumerate(points)}
        live: list[list[int]] = [[] for _ in range(max(len(points) - 1, 0))]
        for i, b in enumerate(self.buffers):
            if b.size:
                for k in range(at[b.lower], at[b.upper]):
                    live[k].append(i)
        return points, live

    def max_live(self) -> int:
        """The most bytes live at one time: no layout fits in less."""
        if not self.buffers:
            return 0
        lower = np.array([b.lower for b in self.buffers], dtype=np.int64)
        upper = np.array([b.upper for b in self.buffers], dtype=np.int64)
        size = np.array([b.size for b in self.buffers], dtype=np.int64)
        times = np.concatenate([lower, upper])
        delta = np.concatenate([size, -size])
        # at one time, frees (negative) before allocations: [lower, upper) is half-open
        key = np.lexsort((delta, times))
        return int(max(np.cumsum(delta[key]).max(), 0))


def read_csv(path: str) -> LayoutProblem:
    """A problem from CSV; a bad row is an ``InputError`` naming the file and line."""
    text = read_text(path)
    return parse_csv(text, path)


def parse_csv(text: str, path: str = "<csv>") -> LayoutProblem:
    rows = csv.reader(io.StringIO(text))
    header = next(rows, None)
    if header is None:
        raise InputError(
            "empty file; a layout CSV starts with the header id,lower,upper,size", path
        )
    names = [h.strip() for h in header]
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise InputError(
            f"the header lacks column{'s' if len(missing) > 1 else ''} {','.join(missing)} "
            "(needs id,lower,upper,size)",
            path,
            line=1,
        )
    col = {c: names.index(c) for c in COLUMNS}
    buffers: list[Buffer] = []
    seen: dict[str, int] = {}
    for row in rows:
        line = rows.line_num
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(names):
            raise InputError(f"{len(row)} fields, the header has {len(names)}", path, line=line)
        ident = row[col["id"]].strip()
        if not ident:
            raise InputError("empty id", path, line=line)
        if ident in seen:
            raise InputError(f"id {ident!r} again (first on line {seen[ident]})", path, line=line)
        seen[ident] = line
        lower, upper, size = (_integer(row[col[c]], c, path, line) for c in COLUMNS[1:])
        if upper <= lower:
            raise InputError(
                f"buffer {ident!r}: upper {upper} is not above lower {lower} "
                "(lifetimes are [lower, upper))",
                path,
                line=line,
            )
        if size < 0:
            raise InputError(f"buffer {ident!r}: negative size {size}", path, line=line)
        buffers.append(Buffer(ident, lower, upper, size))
    return LayoutProblem(buffers, name=path)


def _integer(cell: str, column: str, path: str, line: int) -> int:
    s = cell.strip()
    try:
        return int(s)
    except ValueError:
        raise InputError(f"{column} {s!r} is not an integer", path, line=line) from None


def read_solution(path: str) -> tuple[LayoutProblem, list[int]]:
    """A solution: CSV ``id,lower,upper,size,offset`` or the JSON ``cpsched layout``
    writes (its ``buffers``)."""
    if path.lower().endswith(".json"):
        data = load_json(path)
        rows = data.get("buffers") if isinstance(data, dict) else None
        if not isinstance(rows, list):
            raise InputError("a layout JSON has a list 'buffers'", path)
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(COLUMNS + ("offset",))
        for k, r in enumerate(rows):
            if not isinstance(r, dict) or any(c not in r for c in COLUMNS + ("offset",)):
                raise InputError(f"buffers[{k}] needs id, lower, upper, size and offset", path)
            w.writerow([r[c] for c in COLUMNS + ("offset",)])
        text = out.getvalue()
    else:
        text = read_text(path)
    problem = parse_csv(text, path)
    rows_ = csv.reader(io.StringIO(text))
    header = [h.strip() for h in next(rows_)]
    if "offset" not in header:
        raise InputError(
            "the header lacks column offset (a solution is id,lower,upper,size,offset)",
            path,
            line=1,
        )
    k = header.index("offset")
    offsets = []
    for row in rows_:
        if any(cell.strip() for cell in row):
            offsets.append(_integer(row[k], "offset", path, rows_.line_num))
    return problem, offsets


def csv_text(problem: LayoutProblem, offsets: Sequence[int]) -> str:
    """The solution as CSV: ``id,lower,upper,size,offset``."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(COLUMNS + ("offset",))
    for b, x in zip(problem.buffers, offsets):
        w.writerow([b.id, b.lower, b.upper, b.size, x])
    return out.getvalue()


def as_records(problem: LayoutProblem, offsets: Sequence[int]) -> list[dict]:
    """The solution as JSON records: id, lower, upper, size, offset."""
    return [
        {"id": b.id, "lower": b.lower, "upper": b.upper, "size": b.size, "offset": int(x)}
        for b, x in zip(problem.buffers, offsets)
    ]


def layout_top(problem: LayoutProblem, offsets: Sequence[int]) -> int:
    """The capacity a layout needs: the highest byte any buffer reaches."""
    return max((x + b.size for b, x in zip(problem.buffers, offsets) if b.size), default=0)


def overlaps(
    problem: LayoutProblem, offsets: Sequence[int] | Mapping[str, int], capacity: int | None = None
) -> list[str]:
    """What is wrong with a layout, one line each (none: it is valid): a buffer without an
    offset, a negative offset, one past ``capacity``, two live at one time that share
    bytes."""
    bufs = problem.buffers
    if isinstance(offsets, Mapping):
        got = offsets
        off = [got.get(b.id) for b in bufs]
    else:
        off = list(offsets)
    errors: list[str] = []
    for b, x in zip(bufs, off):
        if x is None:
            errors.append(f"buffer {b.id}: no offset")
        elif x < 0:
            errors.append(f"buffer {b.id}: negative offset {x}")
        elif capacity is not None and x + b.size > capacity:
            errors.append(f"buffer {b.id}: ends at {x + b.size}, past the capacity {capacity}")
    # sweep over time: at each allocation, compare with the buffers live then
    events = sorted(
        (i for i, b in enumerate(bufs) if b.size and off[i] is not None),
        key=lambda i: bufs[i].lower,
    )
    live: list[int] = []
    for i in events:
        b = bufs[i]
        live = [j for j in live if bufs[j].upper > b.lower]
        xi = off[i]
        assert xi is not None
        for j in live:
            xj = off[j]
            assert xj is not None
            if xi < xj + bufs[j].size and xj < xi + b.size:
                errors.append(
                    f"buffers {bufs[j].id} and {b.id} are live together at {b.lower} and "
                    f"share bytes [{max(xi, xj)}, {min(xi + b.size, xj + bufs[j].size)})"
                )
        live.append(i)
    return errors


def problem_from_lifetimes(
    names: Iterable[str],
    start: Sequence[int] | np.ndarray,
    end: Sequence[int] | np.ndarray,
    sizes: Sequence[int] | np.ndarray,
) -> LayoutProblem:
    """A problem from inclusive ``(start, end)`` steps (``analysis.memory.live_ranges``)."""
    return LayoutProblem(
        [Buffer(str(n), int(s), int(e) + 1, int(z)) for n, s, e, z in zip(names, start, end, sizes)]
    )


def problem_from_graph(
    graph: Graph, order: Sequence[int], scenario: int = 0, scenarios: Scenarios | None = None
) -> LayoutProblem:
    """The buffers of ``graph`` under ``order`` (step ``t`` is ``[t, t + 1)``), with each
    step's transient bytes as a buffer of its own: the problem's most bytes live at one
    time is the order's peak (``analysis.memory.simulate``)."""
    sc = scenarios or static()
    order_arr = np.asarray(order, dtype=np.int64)
    start, end = live_ranges(graph, order_arr)
    sizes = graph.sizes(sc)[scenario]
    names = list(graph.buffer_names)
    p = problem_from_lifetimes(names, start, end, sizes)
    transient = graph.transient_bytes(sc)[scenario]
    for t, op in enumerate(order_arr.tolist()):
        if transient[op]:
            p.buffers.append(
                Buffer(f"transient:{graph.op_names[op]}", t, t + 1, int(transient[op]))
            )
    return p
