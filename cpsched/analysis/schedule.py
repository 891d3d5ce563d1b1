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
