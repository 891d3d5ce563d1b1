"""Which scenario a single-scenario algorithm uses, and its bytes.

Heuristics compare byte counts in ONE scenario. The ``scenario`` option picks it (a
scenario name or an index); the default is the scenario with the largest weight (the first
one on ties), i.e. the shape bucket that occurs most often. Symbolic comparisons over all
scenarios are the BladeDISC method's business, not these helpers'."""

from __future__ import annotations

from typing import Any

import numpy as np

from cpsched.core.errors import InputError
from cpsched.core.graph import Graph
from cpsched.core.scenarios import Scenarios, from_json, static


def scenario_index(scenarios: Scenarios | None, which: Any = None) -> int:
    """Index of the scenario a heuristic uses: ``which`` (name or index) or the heaviest."""
    if scenarios is None or len(scenarios) == 0:
        return 0
    if which is None:
        return int(np.argmax(scenarios.weights))  # first maximum on ties
    if isinstance(which, (int, np.integer)) and not isinstance(which, bool):
        k = int(which)
        if not -len(scenarios) <= k < len(scenarios):
            raise InputError(f"scenario index {k} is out of range 0..{len(scenarios) - 1}")
        return k % len(scenarios)
    name = str(which)
    if name in scenarios.names:
        return scenarios.names.index(name)
    if name.lstrip("-").isdigit():
        return scenario_index(scenarios, int(name))
    raise InputError(f"unknown scenario {name!r}; known: {', '.join(scenarios.names)}")


def scenario_bytes(graph: Graph, scenarios: Scenarios | None, which: Any = None) -> np.ndarray:
    """Device bytes of every buffer in the chosen scenario, ``[n_buffers]`` int64."""
    if not graph.n_buffers:
        return np.zeros(0, dtype=np.int64)
    scenarios = graph_scenarios(graph, scenarios, check=False)
    try:
        return graph.sizes(scenarios)[scenario_index(scenarios, which)]
    except InputError:
        graph_scenarios(graph, None)  # the clear message for a symbolic graph
        raise


def graph_scenarios(graph: Graph, scenarios: Scenarios | None, check: bool = True) -> Scenarios:
    """``scenarios`` if given, else the ones stored with the graph, else the static one
    (an error for a graph with symbolic sizes, unless ``check`` is off)."""
    if scenarios is not None and len(scenarios):
        return scenarios
    stored = graph.meta.get("scenarios")
    if stored:
        return from_json(dict(stored))
    if check and graph.dims:
        raise InputError(
            f"graph {graph.name} has symbolic sizes ({', '.join(graph.dims)}): "
            "give scenarios (dim values) to size its buffers"
        )
    return static()
