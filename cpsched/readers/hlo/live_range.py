"""XLA-style live ranges (``HloLiveRange``), to calibrate the reader against XLA's own dumps.

The analysis itself is ``cpsched.readers.hlo.dataflow`` (the one XLA's buffer assignment
uses); this module presents it value by value and reads XLA's dump. XLA's rules rather than
cpsched's IR (reference notes, section 2.4):
- the schedule is flattened from the entry: before a call or conditional its called
  computations, before a while its condition then its body, before the first instruction
  of an async chain its wrapped computation; callee instructions get earlier times;
- one HLO value per (defining instruction, shape index) under XLA's dataflow rules (SSA,
  bitcasts do not define values, constants do); a value starts at its definition
  (parameters: the start of their computation) and ends at its last position (a root
  position counts as the end of the computation) or last use, whichever is later; read-only
  entry parameters live to the end of the schedule;
- values that share an HloBuffer (input/output aliasing, in-place ops, while and conditional
  merges) are normalised into touching, non-overlapping intervals.

``parse_xla_live_range`` reads the ``*-live-range.txt`` file XLA writes next to a module
(``HloLiveRange::ToString``), so tests can compare the two value for value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from cpsched.core.errors import InputError
from cpsched.readers.hlo.dataflow import analyse
from cpsched.readers.hlo.parser import HloInstruction, HloModule, Shape


@dataclass
class XlaValue:
    id: int
    computation: str
    instruction: str
    index: tuple[int, ...]
    shape: Shape | None  # the value's own subshape
    def_shape: Shape | None  # the defining instruction's shape
    is_phi: bool = False
    positions: list[tuple[str, str, tuple[int, ...]]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.instruction}{{{','.join(map(str, self.index))}}}"

    def byte_size(self) -> int:
        return self.shape.byte_size() if self.shape is not None else 0


@dataclass
class XlaLiveRanges:
    schedule_end_time: int
    sequence: list[str]  # flattened instruction names
    values: list[XlaValue]
    start: dict[int, int]  # value id -> first step
    end: dict[int, int]  # value id -> last step (inclusive)
    buffer_of: dict[int, int]  # value id -> buffer (alias set) id
    computations: list[str] = field(default_factory=list)  # computation of each step

    @property
    def ranges(self) -> dict[str, tuple[int, int]]:
        return {
            v.name: (self.start[v.id], self.end[v.id]) for v in self.values if v.id in self.start
        }

    def peak_moment(self) -> int:
        """XLA's ``ComputePeakMemoryMoment``: it sizes each value by its *defining
        instruction's* shape and adds the values starting at a step before removing those
        that ended the step before."""
        starts: dict[int, int] = {}
        ends: dict[int, int] = {}
        for v in self.values:
            if v.id not in self.start:
                continue
            size = v.def_shape.byte_size() if v.def_shape is not None else 0
            starts[self.start[v.id]] = starts.get(self.start[v.id], 0) + size
            ends[self.end[v.id] + 1] = ends.get(self.end[v.id] + 1, 0) + size
        usage = peak = 0
        peak_time = None
        for t in sorted(set(starts) | set(ends)):
            usage += starts.get(t, 0)
            if usage > peak:
                peak, peak_time = usage, t
            usage -= ends.get(t, 0)
        return peak_time or 0

    def usage(self, module: HloModule) -> np.ndarray:
        """Bytes in use at each step of the flattened schedule, each HloBuffer counted once
        (the largest of its values live at that step) and constants left out: the
        accounting cpsched's simulator uses (XLA's own peak listing counts both values of
        an in-place hand-over and the constants too)."""
        n = self.schedule_end_time
        per: dict[int, np.ndarray] = {}
        for v in self.values:
            if module.by_name[v.computation].index[v.instruction].opcode == "constant":
                continue
            s, e = self.start[v.id], min(self.end[v.id], n - 1)
            row = per.setdefault(self.buffer_of[v.id], np.zeros(n, dtype=np.int64))
            row[s : e + 1] = np.maximum(row[s : e + 1], v.byte_size())
        # per is not empty: the sum is an array, not sum()'s start value 0
        return sum(per.values()) if per else np.zeros(n, dtype=np.int64)  # type: ignore[return-value]

    def usage_per_entry_step(self, module: HloModule) -> list[tuple[str, int]]:
        """``(entry instruction, bytes)`` per entry step: at a while / conditional / call
        the most bytes over its called computations' steps and its own, which is what
        the caller's simulation charges for that one step."""
        u = self.usage(module)
        out = []
        prev = -1
        for t, (comp, name) in enumerate(zip(self.computations, self.sequence)):
            if comp == module.entry.name:
                out.append((name, int(u[prev + 1 : t + 1].max())))
                prev = t
        return out

    def live_at(self, t: int) -> list[tuple[str, int]]:
        """Values live at step ``t`` with their bytes, in XLA's listing order."""
        out = [
            (v.byte_size(), v.instruction, v.index, v.name)
            for v in self.values
            if v.id in self.start and self.start[v.id] <= t <= self.end[v.id]
        ]
        out.sort(key=lambda x: (-x[0], x[1], x[2]))
        return [(name, size) for size, _, _, name in out]

    def to_text(self) -> str:
        lines = [f"HloLiveRange (max {self.schedule_end_time}):", "  InstructionSequence:"]
        lines += [f"    {k}:{n}" for k, n in enumerate(self.sequence)]
        lines.append("  BufferLiveRange:")
        lines += [
            f"    {v.name}:{self.start[v.id]}-{self.end[v.id]}"
            for v in self.values
            if v.id in self.start
        ]
        t = self.peak_moment()
        lines.append(f"  Live ranges at {t} (peak):")
        total = 0
        for name, size in self.live_at(t):
            total += size
            lines.append(f"    {name}: {size} bytes (cumulative: {total} bytes)")
        return "\n".join(lines) + "\n"


def xla_live_ranges(
    module: HloModule, computation_orders: Mapping[str, Sequence[str]] | None = None
) -> XlaLiveRanges:
    """HloLiveRange of the module's entry under the given orders (default: text order)."""
    an = analyse(module, computation_orders)
    prog, flow, live = an.prog, an.flow, an.live
    values = []
    start: dict[int, int] = {}
    end: dict[int, int] = {}
    for vid in sorted(live.ranges):
        v = flow.values[vid]
        comp = prog.parent[v.instruction]
        values.append(
            XlaValue(
                vid,
                comp.name,
                v.instruction.name,
                v.index,
                v.shape,
                v.instruction.shape,
                v.is_phi,
                [(prog.parent[p].name, p.name, i) for p, i in v.positions],
            )
        )
        r = live.ranges[vid]
        start[vid], end[vid] = r.start, r.end
    return XlaLiveRanges(
        live.end_time,
        [i.name for i in live.sequence],
        values,
        start,
        end,
        {vid: an.aliases.buffer_of[vid] for vid in start},
        [prog.parent[i].name for i in live.sequence],
    )


def orders_from_sequence(module: HloModule, sequence: Sequence[str]) -> dict[str, list[str]]:
    """Each computation's order from XLA's flattened ``InstructionSequence`` of ``module``
    (a live-range dump's), for ``xla_live_ranges``.

    Newer XLA prints a get-tuple-element as an operand suffix (``%t#1``) instead of a line of
    its own, so the text does not say where XLA's schedule put it; the dump lists it under
    XLA's own name (``get-tuple-element.8``). The reader's get-tuple-element for ``t#1``
    takes such an unknown slot: the first one, in text order, whose tuple is already placed,
    from the computation of the slot's neighbours."""
    comp_of: dict[str, str] = {}
    pending: dict[str, list[HloInstruction]] = {}
    for comp in module.computations:
        for ins in comp.instructions:
            if ins.synthetic and ins.opcode == "get-tuple-element" and "#" in ins.name:
                pending.setdefault(comp.name, []).append(ins)
            else:
                comp_of[ins.name] = comp.name
    orders: dict[str, list[str]] = {c.name: [] for c in module.computations}
    placed: set[str] = set()
    known = [comp_of.get(n) for n in sequence]
    for k, name in enumerate(sequence):
        where = known[k]
        if where is not None:
            orders[where].append(name)
            placed.add(name)
            continue
        near: list[str] = [c for c in known[k - 1 :: -1] if c][:1] if k else []
        near += [c for c in known[k + 1 :] if c][:1]
        for c in dict.fromkeys(near + list(pending)):
            ready = [i for i in pending.get(c, ()) if i.operands[0] in placed]
            if ready:
                pending[c].remove(ready[0])
                orders[c].append(ready[0].name)
                placed.add(ready[0].name)
                break
        else:
            raise InputError(f"{name!r} of the sequence is not an instruction of the module")
    return {c: o for c, o in orders.items() if o}


# -- XLA's live-range dump ------------------------------------------------------------------


@dataclass
class XlaLiveRangeDump:
    schedule_end_time: int
    sequence: list[str]
    ranges: dict[str, tuple[int, int]]
    peak_step: int | None
    peak_values: list[tuple[str, int]]

    @property
    def peak_bytes(self) -> int:
        return sum(b for _, b in self.peak_values)


_RANGE_RE = re.compile(r"^\s+(\S+\{[\d,]*\}):(\d+)-(\d+)\s*$")
_SEQ_RE = re.compile(r"^\s+(\d+):(\S+)\s*$")
_PEAK_RE = re.compile(r"^\s+(\S+\{[\d,]*\}): (\d+) bytes \(cumulative: (\d+) bytes\)\s*$")


def parse_xla_live_range(text: str, path: str | None = None) -> XlaLiveRangeDump:
    """Read XLA's ``HloLiveRange::ToString`` text (``*-live-range.txt``)."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("HloLiveRange (max "):
        raise InputError(
            "not an XLA live-range dump (no 'HloLiveRange (max N):' line)",
            path=path,
            line=1,
            column=1,
        )
    max_time = re.search(r"\d+", lines[0])
    if max_time is None:
        raise InputError(
            "the 'HloLiveRange (max N):' line has no number", path=path, line=1, column=1
        )
    end_time = int(max_time.group())
    section = None
    seq: list[str] = []
    ranges: dict[str, tuple[int, int]] = {}
    peak_step = None
    peak: list[tuple[str, int]] = []
    for no, line in enumerate(lines[1:], start=2):
        s = line.strip()
        if s == "InstructionSequence:":
            section = "seq"
            continue
        if s == "BufferLiveRange:":
            section = "ranges"
            continue
        m = re.match(r"Live ranges at (\d+) \(peak\):", s)
        if m:
            section, peak_step = "peak", int(m.group(1))
            continue
        if s.startswith("Stack trace breakdown") or s.startswith("Peak memory could not"):
            section = None
            continue
        if section == "seq":
            m = _SEQ_RE.match(line)
            if not m or int(m.group(1)) != len(seq):
                raise InputError(f"bad instruction sequence line {s!r}", path=path, line=no)
            seq.append(m.group(2))
        elif section == "ranges":
            m = _RANGE_RE.match(line)
            if not m:
                raise InputError(f"bad live range line {s!r}", path=path, line=no)
            ranges[m.group(1)] = (int(m.group(2)), int(m.group(3)))
        elif section == "peak":
            m = _PEAK_RE.match(line)
            if m:
                peak.append((m.group(1), int(m.group(2))))
    return XlaLiveRangeDump(end_time, seq, ranges, peak_step, peak)


def read_xla_live_range(path: str) -> XlaLiveRangeDump:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return parse_xla_live_range(f.read(), path)
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", path=path) from None


__all__ = [
    "xla_live_ranges",
    "orders_from_sequence",
    "XlaLiveRanges",
    "XlaValue",
    "parse_xla_live_range",
    "read_xla_live_range",
    "XlaLiveRangeDump",
]
