"""Candidate orders for the overlap solver: the memory schedulers' orders and every overlap
heuristic under several option sets (its default input, each memory order as input, memory
limits and approximate costs for ``lhs``). They are hints and the floor of the result."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from cpsched.analysis.schedule import Schedule
from cpsched.analysis.validate import validate_order
from cpsched.core.graph import Graph
from cpsched.core.scenarios import Scenarios
from cpsched.methods import load_all

OVERLAP_HEURISTICS = ("gpu-postprocess", "eager-cluster", "lhs")
MEMORY_METHODS = ("xla-default", "cp")


def run_method(name: str, graph: Graph, scenarios: Scenarios, opts: dict) -> list[int] | None:
    m = load_all().get(name)
    if m is None or not m.applies(graph):
        return None
    out = m.fn(graph, scenarios, **opts)
    order = list(out.order) if isinstance(out, Schedule) else [int(i) for i in out]
    validate_order(graph, order, what=f"{name} order")
    return order


def memory_candidates(
    graph: Graph, scenarios: Scenarios, methods: Sequence[str], opts: dict, errors: dict
) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    if graph.original_order is not None:
        out["given"] = list(graph.original_order)
    out["topological"] = graph.topological_order()
    for name in methods:
        try:
            order = run_method(name, graph, scenarios, dict(opts))
        except Exception as e:  # a peer method's failure must not sink the solver
            errors[name] = f"{type(e).__name__}: {e}"
            continue
        if order is not None:
            out[name] = order
    return out


def heuristic_variants(
    name: str, budget: np.ndarray, bases: Mapping[str, list[int]], opts: Mapping[str, Any]
) -> list[tuple[str, dict]]:
    """Option sets to run overlap heuristic ``name`` with: its default input, each memory
    order as input, and for ``lhs`` memory limits at fractions of the budget (its tracker
    leaves parameters out, so the budget itself may not be enough) and XLA's approximate
    costs instead of the device's."""
    out = [(name, dict(opts))]
    for b, o in bases.items():
        out.append((f"{name}({b})", dict(opts, order=o)))
    if name == "lhs":
        lim = int(np.max(budget))
        for f in (1.0, 0.85, 0.7, 0.55, 0.4):
            out.append((f"lhs[mem={f:g}]", dict(opts, memory_limit=int(lim * f), rerun=3)))
        base = {k: v for k, v in opts.items() if k not in ("device", "profile")}
        out.append(("lhs[approx]", base))
        out.append(("lhs[approx,mem=1]", dict(base, memory_limit=lim, rerun=3)))
    return out


def overlap_candidates(
    graph: Graph,
    scenarios: Scenarios,
    methods: Sequence[str],
    bases: Mapping[str, list[int]],
    budget: np.ndarray,
    opts: dict,
    errors: dict,
    deadline: float | None = None,
    on_order: Callable[[str, list[int]], Any] | None = None,
) -> dict[str, list[int]]:
    """Orders of every overlap heuristic under each of its ``heuristic_variants``; with
    ``deadline`` (``time.perf_counter()``) no run starts that would end past it, judged by
    the longest run so far (the default variant of each heuristic comes first).
    ``on_order(label, order)`` runs on each order found, timed with its run (the caller's
    evaluation of it: a timeline of 100k ops takes a second)."""
    found: dict[str, list[int]] = {}
    variants = [
        (name, v) for name in methods for v in heuristic_variants(name, budget, bases, opts)
    ]
    slowest = 0.0
    # each heuristic's own input first: the variants of one are worth less than another
    for name, (label, o) in sorted(variants, key=lambda nv: nv[1][0] != nv[0]):
        t0 = time.perf_counter()
        if deadline is not None and t0 + slowest > deadline:
            errors[label] = "skipped: it would not end within the time limit"
            continue
        try:
            order = run_method(name, graph, scenarios, o)
        except Exception as e:
            errors[label] = f"{type(e).__name__}: {e}"
            slowest = max(slowest, time.perf_counter() - t0)
            continue
        if order is not None:
            found[label] = order
            if on_order is not None:
                on_order(label, order)
        slowest = max(slowest, time.perf_counter() - t0)
    # in the variants' own order (ties between candidates go to the first)
    return {label: found[label] for _, (label, _) in variants if label in found}


def family(label: str) -> str:
    """The heuristic a candidate label comes from (``lhs[mem=0.7]`` -> ``lhs``)."""
    return label.split("[", 1)[0].split("(", 1)[0]
