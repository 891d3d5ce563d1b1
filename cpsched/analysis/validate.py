"""The validator: every schedule cpsched emits passes through ``validate_order`` (the
structural check, part of the IR: ``cpsched.core.graph``) and ``validate_schedule``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from cpsched.analysis.memory import peak
from cpsched.core.errors import ScheduleError
from cpsched.core.graph import Graph, validate_order
from cpsched.core.scenarios import Scenarios
from cpsched.core.units import format_bytes_exact

__all__ = ["validate_order", "validate_schedule"]


def validate_schedule(
    graph: Graph,
    order: Sequence[int],
    scenarios: Scenarios,
    claimed_peak: Mapping[str, int] | Sequence[int] | np.ndarray | None = None,
    what: str = "schedule",
) -> np.ndarray:
    """Validate ``order`` and re-simulate it; a claimed peak must agree byte for byte.

    Returns the simulated peak per scenario.
    """
    validate_order(graph, order, what)
    sim = peak(graph, order, scenarios)
    if claimed_peak is not None:
        if isinstance(claimed_peak, Mapping):
            claimed = [claimed_peak[name] for name in scenarios.names]
        else:
            claimed = list(claimed_peak)
        for name, c, s in zip(scenarios.names, claimed, sim):
            if int(c) != int(s):
                raise ScheduleError(
                    f"{what} of {graph.name} claims peak {format_bytes_exact(c)} in "
                    f"scenario {name}, the simulator finds {format_bytes_exact(s)}"
                )
    return sim
