"""The result object every scheduler returns, checked by the validator when it is made."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cpsched.analysis.memory import lower_bound as _lb
from cpsched.analysis.validate import validate_schedule
from cpsched.core.graph import Graph
from cpsched.core.scenarios import Scenarios, static

# Statuses, strongest first.
OPTIMAL = "OPTIMAL"  # proven optimal for the stated objective
FEASIBLE = "FEASIBLE"  # solver found it, gap printed
HEURISTIC = "HEURISTIC"  # a heuristic's order
FALLBACK = "HEURISTIC_FALLBACK"  # solver could not improve in time: best heuristic returned
INFEASIBLE = "INFEASIBLE"  # budget cannot be met (proven)


@dataclass(frozen=True)
class Schedule:
    graph: Graph
    order: tuple[int, ...]
    method: str
    scenarios: Scenarios
    peak_bytes: np.ndarray  # [S] simulated, exact bytes
    lower_bound_bytes: np.ndarray  # [S]
    status: str = HEURISTIC
    seconds: float = 0.0
    info: Mapping[str, Any] = field(default_factory=dict)
    # every non-entry sequential computation of an HLO module (while bodies and conditions,
    # branches, called computations) -> its instruction names in the chosen order; ``order``
    # is the entry's. Empty: the called computations keep the input's order.
    computation_orders: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def peak_by_name(self) -> dict[str, int]:
        return {n: int(v) for n, v in zip(self.scenarios.names, self.peak_bytes)}

    def lower_bound_by_name(self) -> dict[str, int]:
        return {n: int(v) for n, v in zip(self.scenarios.names, self.lower_bound_bytes)}

    def gap(self) -> dict[str, float]:
        """Relative gap (peak - bound) / peak per scenario."""
        return {
            n: (float(p - b) / float(p) if p else 0.0)
            for n, p, b in zip(self.scenarios.names, self.peak_bytes, self.lower_bound_bytes)
        }

    def order_names(self) -> list[str]:
        return [self.graph.op_names[i] for i in self.order]


def place_inline_ops(graph: Graph, order: Sequence[int]) -> list[int]:
    """``order`` with each op of ``graph.meta["inline_ops"]`` moved to just before its first
    user, where a reader of the written text puts it.

    Those ops have no line of their own in HLO text (XLA prints a get-tuple-element as a
    ``t#i`` operand of its user; older texts nest instructions in operand lists): whatever
    position a scheduler gave one, the module written and read back has it right before its
    first user, and the tuple it reads stays live until then. Chains of them (``t#1#0``)
    keep their own order in front of that user.

    >>> from cpsched.readers.hlo.convert import read_hlo_text
    >>> g = read_hlo_text('''HloModule m
    ... ENTRY e {
    ...   p = f32[8] parameter(0)
    ...   t = (f32[8], f32[8]) tuple(p, p)
    ...   q = f32[8] negate(p)
    ...   ROOT r = f32[8] add(t#1, q)
    ... }''')
    >>> [g.op_names[i] for i in place_inline_ops(g, [0, 1, 3, 2, 4])]
    ['p', 't', 'q', 't#1', 'r']
    """
    names = graph.meta.get("inline_ops") if graph.meta else None
    if not names:
        return [int(i) for i in order]
    inline = {graph.op_index(n) for n in names if n in graph._index}
    if not inline:
        return [int(i) for i in order]
    pos = {int(v): k for k, v in enumerate(order)}

    def anchor(v: int, seen: dict[int, int]) -> int:
        # position of the first non-inline op that reads v, directly or through inline ops
        if v in seen:
            return seen[v]
        best = len(order)
        for u in graph.succs(v):
            u = int(u)
            best = min(best, anchor(u, seen) if u in inline else pos[u])
        seen[v] = best
        return best

    seen: dict[int, int] = {}
    before: dict[int, list[int]] = {}
    for v in order:
        v = int(v)
        if v in inline:
            before.setdefault(anchor(v, seen), []).append(v)
    for k, group in before.items():
        if k < len(order) and len(group) > 1:
            rank = _reading_order(graph, int(order[k]), inline)
            group.sort(key=lambda v: rank.get(v, len(rank)))
    out: list[int] = []
    for k, v in enumerate(order):
        out.extend(before.pop(k, ()))
        if int(v) not in inline:
            out.append(int(v))
    out.extend(before.pop(len(order), ()))
    return out


def _reading_order(graph: Graph, user: int, inline: set[int]) -> dict[int, int]:
    """Rank of each inline op in the order a reader meets them in ``user``'s text: its
    operands left to right, each one's own inline operands first."""
    rank: dict[int, int] = {}

    def visit(v: int) -> None:
        for q in graph.operands(v):
            q = int(q)
            if q in inline and q not in rank:
                visit(q)
        if v in inline and v not in rank:
            rank[v] = len(rank)

    visit(user)
    return rank


def make_schedule(
    graph: Graph,
    order: Sequence[int],
    method: str,
    scenarios: Scenarios | None = None,
    *,
    status: str = HEURISTIC,
    seconds: float = 0.0,
    lower_bound: np.ndarray | None = None,
    claimed_peak: Sequence[int] | np.ndarray | Mapping[str, int] | None = None,
    info: Mapping[str, Any] | None = None,
    computation_orders: Mapping[str, Sequence[str]] | None = None,
) -> Schedule:
    """Validate ``order`` (raises ``ScheduleError``), simulate it, and wrap it up."""
    scenarios = scenarios or static()
    peak = validate_schedule(graph, order, scenarios, claimed_peak, what=f"{method} schedule")
    placed = place_inline_ops(graph, order)
    if placed != [int(i) for i in order]:
        # the order as it will be written and read back (see place_inline_ops)
        new_peak = validate_schedule(graph, placed, scenarios, None, what=f"{method} schedule")
        if status == OPTIMAL and (new_peak > peak).any():
            status = FEASIBLE  # proven for the solver's placement, not for the one written
        order, peak = placed, new_peak
    lb = _lb(graph, scenarios) if lower_bound is None else np.asarray(lower_bound, dtype=np.int64)
    lb = np.minimum(lb, peak)  # a bound above a valid schedule would be a bug; never print it
    return Schedule(
        graph,
        tuple(int(i) for i in order),
        method,
        scenarios,
        peak,
        lb,
        status,
        seconds,
        dict(info or {}),
        {k: tuple(v) for k, v in (computation_orders or {}).items()},
    )
