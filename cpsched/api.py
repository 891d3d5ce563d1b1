"""The Python API: read a graph, schedule it with any method, compare methods, simulate orders.

Every function here is also re-exported from ``cpsched``:

>>> import cpsched
>>> g = cpsched.generators.random_layered(n=12, seed=3)
>>> r = cpsched.schedule(g, time_limit=5)
>>> r.status, r.peak == r.bound
('OPTIMAL', True)

Every method returns one ``Result`` (order per computation, status, peak and bound per
scenario, gap, the remat plan when there is one, timings, the solver's settings), checked
by the validator before it is returned. The command line (``cpsched.cli``) is a thin layer
over these functions.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import platform
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, NamedTuple

import numpy as np

from cpsched import generators  # noqa: F401  (re-exported: ``cpsched.generators``)
from cpsched.analysis.memory import lower_bound as static_lower_bound
from cpsched.analysis.memory import simulate as simulate_memory
from cpsched.analysis.records import OverlapRecord, Record, TimedRecord, record_for
from cpsched.analysis.schedule import INFEASIBLE, Schedule, make_schedule
from cpsched.core import arguments, signals
from cpsched.core.errors import (
    BudgetError,
    CpschedError,
    InfeasibleError,
    InputError,
    InputTypeError,
    LimitError,
)
from cpsched.core.graph import Graph, attach_program, attach_source_file
from cpsched.core.inputs import loads_json
from cpsched.core.nx_graph import from_networkx as convert
from cpsched.core.plain import to_plain
from cpsched.core.scenario_choice import scenario_index
from cpsched.core.scenarios import (
    Budget,
    Scenarios,
    from_dim_specs,
    from_json,
    parse_budget,
    static,
)
from cpsched.core.transforms import convert_sync_collectives
from cpsched.core.units import format_bytes, format_bytes_exact, format_seconds, format_time
from cpsched.cost.model import default_device, estimate, load_device, load_profile
from cpsched.cost.timeline import simulate_timeline
from cpsched.cp.memory.cuts import CUT_MAX_OPS
from cpsched.cp.memory.problem import from_graph as cut_problem
from cpsched.cp.remat.problem import min_memory_bound
from cpsched.cp.runtime import SolverConfig
from cpsched.methods import Method, check_options, load_all
from cpsched.methods import get as get_method
from cpsched.plot import plot_frontier, plot_memory
from cpsched.readers import read_graph, sniff_format
from cpsched.readers.detect import is_text, text_format
from cpsched.readers.hlo.buffer_assignment import allocation_figures
from cpsched.readers.hlo.convert import HloConverter, read_hlo_module, scheduled_computations
from cpsched.readers.hlo.parser import parse_hlo_text
from cpsched.readers.hlo.verify import verify_module
from cpsched.readers.jax_frontend import from_jax  # jax is imported when called
from cpsched.readers.json_graph import graph_from_dict
from cpsched.readers.nx_json import graph_from_node_link
from cpsched.readers.stablehlo.convert import read_stablehlo_text
from cpsched.readers.torch_frontend import from_torch  # torch too, when called
from cpsched.remat.plan import RematResult, remat_result_to_dict
from cpsched.remat.rewrite import plan_to_graph
from cpsched.strategies.allocation import refine_module_schedule
from cpsched.strategies.frontier import (
    DEFAULT_POINT_TIME_LIMIT,
    DEFAULT_POINTS,
    MAX_FRONTIER_POINTS,
)
from cpsched.strategies.frontier import Frontier as JointFrontier
from cpsched.strategies.frontier import frontier as joint_frontier
from cpsched.strategies.min_peak.method import (
    CUT_SECONDS_PER_OP2,
    DEFAULT_SECONDS_PER_OP,
    HEURISTIC_SECONDS_PER_OP,
)
from cpsched.strategies.module import module_lower_bound, schedule_module
from cpsched.version import __version__, ortools_version
from cpsched.writers import all_or_nothing, write_json, write_text
from cpsched.writers.hlo import (
    async_module_text,
    verify_async_module,
    write_hlo,
    write_module_schedule,
)
from cpsched.writers.remat_hlo import write_remat_hlo
from cpsched.writers.schedule import schedule_to_dict


class Problem(NamedTuple):
    """What ``schedule(objective=NAME)`` (``--objective NAME``) asks for: the method that
    solves it, and the value it passes as that method's ``objective`` option (cp: the
    scenario weighting, or ``budget``; cp-overlap: the objective, makespan or distance;
    cp-remat and cp-joint: ``time``). Vocabulary: ``cpsched.analysis.records``."""

    method: str
    option: str


# The problems by the name the user gives (the option keeps the name ``objective``).
PROBLEMS: dict[str, Problem] = {
    "weighted": Problem("cp", "weighted"),
    "minimax": Problem("cp", "minimax"),
    "lexicographic": Problem("cp", "lexicographic"),
    "budget": Problem("cp", "budget"),
    "overlap": Problem("cp-overlap", "makespan"),
    "distance": Problem("cp-overlap", "distance"),
    "remat": Problem("cp-remat", "time"),
    "time": Problem("cp-joint", "time"),
}
# the name it had (pairs of method and option; kept for callers of the API)
OBJECTIVES = PROBLEMS
# The min-peak solver is registered as ``cp``; in tables it sits beside ``cp-overlap``.
ROW_NAMES = {"cp": "cp-memory"}
DEFAULT_TIME_LIMIT = 10.0
# Methods whose own default differs (remat searches order and plan: longer).
DEFAULT_TIME_LIMITS = {"cp-remat": 60.0, "remat-fixed-order": 60.0, "cp-joint": 30.0}
DEFAULT_WORKERS = 2
DEFAULT_SEED = 0
GIVEN = "GIVEN"  # status of the input's own order (``simulate``, compare's ``given`` row)


def is_solver(name: str) -> bool:
    """True for the CP-SAT methods (``cp``, ``cp-overlap``, ``cp-remat``)."""
    return name in ("cp", "cp-memory") or name.startswith("cp-")


# -- results -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    """One method's schedule of one graph, validated.

    Attributes
    ----------
    graph : Graph
        The graph scheduled (for a remat plan: the graph before clones and copies).
    method : str
        The registered name of the method (``given`` for ``simulate``'s order).
    status : str
        ``OPTIMAL`` (proven for the method's objective), ``FEASIBLE`` (a solver's, not
        proven), ``HEURISTIC``, ``HEURISTIC_FALLBACK`` (a solver returned the best
        heuristic), ``INFEASIBLE`` (the budget proven impossible), ``GIVEN`` (the input's
        own order), or a remat plan's status (``OVER_BUDGET``...).
    scenarios : Scenarios
        The shape scenarios; one order serves them all. Every per-scenario mapping below is
        keyed by their names.
    order : tuple of int
        The entry computation's order (op indices; ``order_names()`` gives names).
    orders : dict
        Order per computation (op names): the entry computation, and every other computation
        the method ordered.
    peak : dict
        Bytes per scenario: the simulated peak of the order (of the plan, for remat).
    bound : dict
        Bytes per scenario: the best proven lower bound on the peak of any order. Empty for
        remat plans (their peak is set by the budget).
    gap : dict
        ``(peak - bound) / peak`` per scenario (a fraction; empty for remat plans).
    seconds : float
        Wall time of the call, reading the budget's reference and validation included.
    budget : dict or None
        Bytes per scenario the method was asked to fit (None: no budget).
    plan : RematResult or None
        The remat / offload plan (clones, evictions, prefetches per scenario); None for an
        order.
    schedule : Schedule or None
        The validated schedule the figures come from (peak and bound as byte arrays per
        scenario, the computations' orders); None for a remat plan.
    timings : dict
        Seconds: ``total``, ``method``, and each phase the method reports.
    solver : dict
        The solver settings that reproduce the result (``engine``, ``ortools``,
        ``time_limit``, ``workers``, ``seed``, ``deterministic``, and ``seconds_available``
        where a deadline cut the solver's share); empty for heuristics.
    record : Record
        What the method's family reports beyond these fields, typed
        (``cpsched.analysis.records``): ``MinPeakRecord`` (cp), ``OverlapRecord``
        (cp-overlap), ``RematRecord`` (cp-remat, remat-fixed-order), ``JointRecord``
        (cp-joint), ``RematHeuristicRecord`` (the remat heuristics), ``Record`` (the
        others). Every record has ``message``, ``interrupted``, ``lower_bound_note``,
        ``budget_reference`` and, on an HLO module, ``module`` (``ModuleRecord``).
    info : mapping (read-only)
        ``record`` as the JSON view: the keys the method reported, in its order (what
        ``--json`` and the schedule files write).
    """

    graph: Graph
    method: str
    status: str
    scenarios: Scenarios
    order: tuple[int, ...]
    orders: Mapping[str, tuple[str, ...]]
    peak: Mapping[str, int]
    bound: Mapping[str, int]
    gap: Mapping[str, float]
    seconds: float
    budget: Mapping[str, int] | None = None
    plan: RematResult | None = None
    schedule: Schedule | None = None
    timings: Mapping[str, float] = field(default_factory=dict)
    solver: Mapping[str, Any] = field(default_factory=dict)
    record: Record = field(default_factory=Record)

    @property
    def info(self) -> Mapping[str, Any]:
        """``record``'s JSON view, read-only."""
        return self.record.view()

    def order_names(self) -> list[str]:
        """The entry computation's order as op names."""
        return [self.graph.op_names[i] for i in self.order]

    def write(self, path: str | os.PathLike, *, async_collectives: bool | None = None) -> list[str]:
        """Write the schedule to ``path``, checked as the command line checks it; returns the
        paths written.

        A graph read from HLO (a file, HLO text, or ``from_jax``) gives the module with every
        ordered computation re-sequenced (``is_scheduled=true``, read back and re-simulated
        first), unless ``path`` ends in ``.json``; other graphs give the schedule JSON. A
        remat plan gives its module (or plan JSON) and ``PATH.plan.json``. An infeasible
        result is refused, and nothing is written over an existing input.
        ``async_collectives`` (default: as the graph was read) writes the collectives that
        ``read(..., async_collectives=True)`` split as start/done pairs.

        Examples
        --------
        >>> import cpsched, tempfile, os, json
        >>> r = cpsched.schedule(cpsched.generators.random_layered(n=12, seed=3), time_limit=5)
        >>> out = os.path.join(tempfile.mkdtemp(), "order.json")
        >>> r.write(out) == [out], json.load(open(out))["method"]
        (True, 'cp')
        """
        path = arguments.text(os.fspath(path), "path")
        if self.status == INFEASIBLE:
            raise InfeasibleError(self.record.message or "the budget cannot be met")
        if async_collectives is None:
            async_collectives = bool(self.graph.meta.get("async_collectives"))
        source = source_file(self.graph)
        from_hlo = self.graph.program is not None or (
            source is not None and sniff_format(source) == "hlo"
        )
        as_hlo = from_hlo and not path.lower().endswith(".json")
        return write(
            self,
            path,
            source if as_hlo else None,
            as_hlo=as_hlo,
            async_collectives=async_collectives,
            inputs=(source,) if source else (),
        )["written"]

    def peak_buffers(self, top: int | None = 10) -> dict[str, dict[str, Any]]:
        """Why the peak is where it is: per scenario, the buffers live at the peak step,
        largest first (at most ``top``), with the op that defines each and the program's
        own names and source lines where the input carries them (``explain_peak``)."""
        return explain_peak(self, top=top)

    def plot(self, path: str | os.PathLike, *, title: str | None = None) -> str:
        """Draw the live memory of the order at every step, with the lower bound on any
        order's peak, to ``path`` (PNG, SVG or PDF; needs matplotlib); returns ``path``."""
        path = arguments.text(os.fspath(path), "path")
        plot_memory(
            {self.method: memory_profile(self)},
            path,
            title=title or f"{self.graph.name}: live memory of {whose_order(self)}",
            bound=dict(self.bound) or None,
        )
        return path

    def with_bound(self, bound: Mapping[str, int]) -> Result:
        """The same result measured against a better bound (e.g. the best of a comparison)."""
        b = {n: min(int(bound[n]), int(self.peak[n])) for n in self.peak}
        return replace(self, bound=b, gap=_gap(self.peak, b))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary: exact integer bytes, times in seconds, orders by name."""
        out: dict[str, Any] = {
            "graph": self.graph.name,
            "method": self.method,
            "status": self.status,
            "scenarios": list(self.scenarios.names),
            "peak_bytes": dict(self.peak),
            "lower_bound_bytes": dict(self.bound),
            "gap": {n: round(v, 6) for n, v in self.gap.items()},
            "seconds": round(self.seconds, 6),
            "timings": to_plain(dict(self.timings)),
            "orders": {k: list(v) for k, v in self.orders.items()},
        }
        if self.budget is not None:
            out["budget_bytes"] = dict(self.budget)
        if self.solver:
            out["solver"] = to_plain(dict(self.solver))
        if self.plan is not None:
            out["added_time_pct"] = {
                n: round(float(v), 6)
                for n, v in zip(self.scenarios.names, self.plan.added_time_pct)
            }
        return out

    def __repr__(self) -> str:
        head = f"<Result {self.method} on {self.graph.name}: {self.status}, {self.graph.n_ops} ops"
        lines = [head]
        for n in self.scenarios.names:
            text = f"  {n}: peak {format_bytes(self.peak[n])}"
            if n in self.bound:
                text += f", bound {format_bytes(self.bound[n])}, gap {100 * self.gap[n]:.2f} %"
            if self.budget is not None:
                text += f", budget {format_bytes(self.budget[n])}"
            if self.plan is not None:
                s = self.scenarios.names.index(n)
                text += f", added time {float(self.plan.added_time_pct[s]):.2f} %"
            lines.append(text)
        rec = self.record
        makespan = rec.makespan if isinstance(rec, TimedRecord) else None
        if isinstance(rec, TimedRecord) and isinstance(makespan, Mapping) and makespan:
            unit = rec.unit or "s"
            lines.append(
                "  makespan "
                + ", ".join(f"{n} {format_time(v, unit)}" for n, v in makespan.items())
            )
        lines.append(f"  time {format_seconds(self.seconds)}>")
        return "\n".join(lines)


def whose_order(r: Result) -> str:
    """Whose order a result is, for a title: ``cp's order``, ``the input's own order``."""
    if r.method != "given":
        return f"{r.method}'s order"
    own = r.graph.original_order
    if own is not None and tuple(own) == tuple(r.order):
        return "the input's own order"
    if own is None and tuple(r.graph.default_order()) == tuple(r.order):
        return "a topological order"
    return "the given order"


def _gap(peak: Mapping[str, int], bound: Mapping[str, int]) -> dict[str, float]:
    return {n: (float(peak[n] - bound[n]) / float(peak[n]) if peak[n] else 0.0) for n in bound}


def _by_name(sc: Scenarios, arr) -> dict[str, int]:
    return {n: int(v) for n, v in zip(sc.names, arr)}


def _timings(total: float, schedule_seconds: float, info: Mapping[str, Any]) -> dict[str, float]:
    out = {"total": round(total, 6), "method": round(float(schedule_seconds), 6)}
    for ph in info.get("phases") or ():
        if isinstance(ph, Mapping) and "seconds" in ph and "phase" in ph:
            key = str(ph["phase"])
            out[key] = round(out.get(key, 0.0) + float(ph["seconds"]), 6)
    return out


def _orders(
    graph: Graph, order: Sequence[int], schedule: Schedule | None
) -> dict[str, tuple[str, ...]]:
    # keyed by the computation's own name (a graph read from HLO may be renamed: from_jax)
    out = {
        str(graph.meta.get("computation") or graph.name): tuple(graph.op_names[i] for i in order)
    }
    # per-computation orders of called computations, where the method gives them
    extra = getattr(schedule, "computation_orders", None) or {}
    for comp, names in extra.items():
        out.setdefault(str(comp), tuple(names))
    return out


def _solver_settings(
    name: str, cfg: SolverConfig, seconds_available: float | None
) -> dict[str, Any]:
    """What reproduces a solver's result (empty for heuristics): the engine, its version and
    the settings it was given, and the seconds it had where a deadline cut its share."""
    if not is_solver(name):
        return {}
    return {
        "engine": "CP-SAT",
        "ortools": ortools_version(),
        "time_limit": cfg.time_limit,
        "workers": cfg.workers,
        "seed": cfg.seed,
        "deterministic": cfg.deterministic,
        **(
            {"seconds_available": round(float(seconds_available), 3)}
            if seconds_available is not None
            else {}
        ),
    }


# -- reading ---------------------------------------------------------------------------------


def from_networkx(G, name: str | None = None) -> Graph:
    """A ``Graph`` from a ``networkx.DiGraph`` (the inverse of ``Graph.to_networkx()``).

    Plain graphs work too: each node defines one buffer of ``size`` bytes (an int, or an
    expression over named dims such as ``"4*s"``) that lives until its last successor ran,
    ``duration`` is its op time, and edges are data dependences.

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.DiGraph()
    >>> G.add_node("x", size=1024); G.add_node("y", size="4*s"); G.add_edge("x", "y")
    >>> g = from_networkx(G)
    >>> g.op_names, str(g.buffer_sizes[1])
    (('x', 'y'), '4*s')
    >>> from_networkx(g.to_networkx()).op_names
    ('x', 'y')
    """
    if not (hasattr(G, "is_directed") and hasattr(G, "nodes")):
        raise InputTypeError(f"from_networkx takes a networkx.DiGraph, not {type(G).__name__}")
    if name is not None and not isinstance(name, str):
        raise InputTypeError(f"name must be a string, not {type(name).__name__}")
    # networkx takes 0.1 s to import: only when a networkx graph is converted
    g = convert(G, name)
    if g.n_ops == 0:
        raise InputError(f"{g.name}: the graph has no ops; nothing to schedule")
    return g


def read(source, *, async_collectives: bool = False) -> Graph:
    """A ``Graph`` from a file path, HLO text, JSON text, a ``networkx.DiGraph`` or a ``Graph``.

    Parameters
    ----------
    source : str, os.PathLike, Graph or networkx.DiGraph
        XLA HLO text (as ``--xla_dump_to`` writes it), StableHLO / MLIR text, cpsched graph
        JSON, or networkx node-link JSON (Checkmate / Moccasin): as a path, or the text
        itself.
    async_collectives : bool, default False
        Split synchronous collectives into start/done pairs (what XLA's GPU pipeline does).

    Examples
    --------
    >>> g = read('{"nodes": [{"id": 0, "size": 100}, {"id": 1, "size": "4*s"}],'
    ...          ' "links": [{"source": 0, "target": 1}]}')
    >>> g.n_ops, g.dims
    (2, ('s',))
    """
    async_collectives = arguments.flag(async_collectives, "async_collectives")
    if isinstance(source, Graph):
        g = source
    elif hasattr(source, "is_directed") and hasattr(source, "nodes"):
        g = from_networkx(source)
    elif isinstance(source, os.PathLike):
        # a path object is always a path, even with a newline or a brace in its name
        g = _read_path(os.fspath(source))
    elif not isinstance(source, str):
        raise InputTypeError(
            "read takes a path, HLO or JSON text, a Graph or a networkx.DiGraph, not "
            f"{type(source).__name__}"
        )
    else:
        g = _read_text(source) if is_text(source) else _read_path(source)
    if g.n_ops == 0:
        raise InputError(f"{g.name}: the graph has no ops; nothing to schedule")
    if async_collectives:
        source = source_file(g)
        g = convert_sync_collectives(g)
        if source:
            attach_source_file(g, source)  # the same input, to be kept from being overwritten
    return g


def async_collectives_note(graph: Graph) -> str | None:
    """What ``async_collectives`` did to a graph ``read`` with it, where it split nothing
    (the module's collectives are already async start/done pairs, or it has none): a line for
    the user, who asked to treat collectives as async and gets that. None where it split."""
    if graph.meta.get("async_collectives"):
        return None
    pairs = sum(
        1
        for k in map(int, np.flatnonzero(graph.async_start >= 0))
        if int(graph.async_start[k]) in graph.collectives or k in graph.collectives
    )
    if pairs:
        return (
            f"--async-collectives: the module's {pairs} collective(s) are already async "
            "start/done pairs; they are scheduled as they are, none split"
        )
    return "--async-collectives: the graph has no collective to treat as async"


def _read_path(path: str) -> Graph:
    if not path:
        raise InputError("the input path is empty")
    if sniff_format(path) == "hlo":
        g = _entry_graph(verify_module(read_hlo_module(path)))
    else:
        g = read_graph(path)
    # the graph remembers its file, so that ``Result.write`` never writes over the input
    return attach_source_file(g, path)


def source_file(graph: Graph) -> str | None:
    """The file ``graph`` was read from (by ``read``: ``graph.source_file``, else its
    program's file), or None."""
    module = graph.program
    return graph.source_file or (module.path if module is not None else None)


def _entry_graph(module) -> Graph:
    verify_module(module)  # what XLA's verifier refuses is not scheduled
    # the graph remembers its module, so that every computation of it (while bodies,
    # branches, called computations) is scheduled, not only the entry
    return attach_program(HloConverter(module).graph(None), module)


def hlo_module_of(graph: Graph):
    """The parsed HLO module ``graph`` was read from (its entry computation), or None:
    ``graph.program``."""
    return graph.program


def _read_text(text: str) -> Graph:
    body = text.lstrip("\ufeff \t\r\n")
    kind = text_format(body)
    if kind == "json":
        data = loads_json(body, "<text>")
        if isinstance(data, dict) and data.get("format") == "cpsched-graph":
            return graph_from_dict(data, "<text>")
        return graph_from_node_link(data, "<text>")
    if kind == "mlir":
        return read_stablehlo_text(body, path="<text>")
    return _entry_graph(verify_module(parse_hlo_text(body)))


def _graph_scenarios(graph: Graph) -> Scenarios:
    if graph.meta.get("scenarios"):
        return from_json(dict(graph.meta["scenarios"]))
    return static()


def scenarios_for(graph: Graph, scenarios=None, weights=None) -> Scenarios:
    """The scenarios to use: a ``Scenarios``; ``{"s": [128, 512]}`` (their product);
    ``["s=128,512"]``; a scenarios JSON dict or file; else the graph's own, else static.
    Raises ``InputError`` when a symbolic dim of the graph has no value."""
    by_dims = (
        bool(scenarios)
        and not isinstance(scenarios, (Scenarios, str))
        and not (isinstance(scenarios, Mapping) and "scenarios" in scenarios)
    )
    if weights is not None and not by_dims:
        raise InputError(
            "--weights needs --dim (it weighs the scenarios --dim makes; a "
            "scenarios file has its own weights)"
        )
    if isinstance(scenarios, Scenarios):
        sc = scenarios
    elif isinstance(scenarios, Mapping) and "scenarios" in scenarios:
        sc = from_json(scenarios)
    elif isinstance(scenarios, Mapping):
        specs = []
        for d, vals in scenarios.items():
            values = [vals] if isinstance(vals, (int, np.integer)) else vals
            if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
                raise InputTypeError(f"scenarios[{d!r}] must be a list of integers, not {vals!r}")
            ints = [arguments.integer(v, f"scenarios[{d!r}] value", low=1) for v in values]
            specs.append(f"{d}={','.join(map(str, ints))}")
        sc = from_dim_specs(specs, weights)
    elif isinstance(scenarios, str):
        sc = from_json(scenarios)
    elif scenarios is not None:
        given = list(scenarios) if isinstance(scenarios, Iterable) else None
        if given is None or not all(isinstance(x, str) for x in given):
            raise InputTypeError(
                "scenarios must be a Scenarios, {dim: [values]}, ['dim=v1,v2'] or a "
                "scenarios JSON dict or file"
            )
        sc = from_dim_specs(given, weights) if given else _graph_scenarios(graph)
    else:
        sc = _graph_scenarios(graph)
    missing = sorted(set(graph.dims) - set(sc.dims))
    if missing:
        raise InputError(
            f"{graph.name} has symbolic dims {', '.join(missing)}: give their "
            "values with --dim NAME=V1,V2,... or --scenarios FILE"
        )
    return sc


# -- one method ------------------------------------------------------------------------------


def methods() -> list[dict[str, str]]:
    """Every registered method: ``name``, ``family`` and a one-line ``summary``.

    Examples
    --------
    >>> names = [m["name"] for m in methods()]
    >>> "cp" in names and "xla-default" in names
    True
    """
    return [
        {"name": m.name, "family": m.family, "summary": m.summary}
        for m in sorted(load_all().values(), key=lambda m: (m.family, m.name))
    ]


def budget_reference(graph: Graph, scenarios: Scenarios) -> tuple[np.ndarray, str]:
    """The peak per scenario that percentage budgets are a share of: the input's own order
    (what ``simulate`` and ``info`` print for it; the reference Checkmate and Moccasin use),
    or the graph's topological order where the input has none. Deterministic: no search."""
    what = (
        "the peak of the input's own order"
        if graph.original_order is not None
        else "the peak of the graph's topological order (the input has no order)"
    )
    return simulate_memory(graph, graph.default_order(), scenarios).peak.astype(np.int64), what


def resolve_budget(graph: Graph, scenarios: Scenarios, budget) -> tuple[np.ndarray, dict[str, Any]]:
    """Bytes per scenario for ``budget`` (``8GiB``, ``512MB``, bytes, ``90%``, per scenario).
    A percentage is of ``budget_reference`` (the input order's peak); the second value
    records that reference (empty for byte budgets)."""
    b = parse_budget(budget, scenarios)
    if not b.relative:
        return b.resolve(scenarios), {}
    peaks, what = budget_reference(graph, scenarios)
    ref = {"budget": b.text, "reference": what, "reference_bytes": _by_name(scenarios, peaks)}
    return b.resolve(scenarios, peaks), ref


def schedule(
    graph,
    method: str | None = None,
    *,
    objective: str | None = None,
    scenarios=None,
    time_limit: float | None = None,
    workers: int = DEFAULT_WORKERS,
    seed: int = DEFAULT_SEED,
    deterministic: bool = False,
    budget=None,
    log: bool = False,
    progress: Callable | None = None,
    deadline: float | None = None,
    config: SolverConfig | None = None,
    **options: Any,
) -> Result:
    """Schedule ``graph`` with one method and return its validated ``Result``.

    Parameters
    ----------
    graph : Graph, path, text or networkx.DiGraph
        Anything ``read`` takes.
    method : str, optional
        A name from ``methods()``. Default ``cp`` (minimum peak, with a proven bound), or the
        method that solves ``objective``.
    objective : str, optional
        Which problem (``PROBLEMS``): ``weighted`` (default of ``cp``), ``minimax``,
        ``lexicographic``, ``budget`` (min-peak order, ``cp``); ``overlap`` / ``distance``
        (collective overlap, ``cp-overlap``); ``remat`` (recompute / evict to fit
        ``budget``, ``cp-remat``); ``time`` (least makespan within ``budget``, ``cp-joint``).
    scenarios : Scenarios, dict or list, optional
        Shape scenarios (see ``scenarios_for``); default the graph's own, else static.
    time_limit : float, optional
        Solver seconds (heuristics ignore it); default 10, 60 for ``cp-remat`` and
        ``remat-fixed-order``.
    workers, seed : int, default 2 and 0
        CP-SAT threads and random seed.
    deterministic : bool, default False
        Count limits in work units, not seconds: same input and seed, same order.
    budget : int, str, sequence or dict, optional
        Memory budget: bytes, ``"8GiB"``, ``"512MB"``, ``"90%"`` (of the peak of the
        input's own order, ``budget_reference``), one per scenario as a list or
        ``{scenario: value}``. A result over it is refused: ``BudgetError`` says the least
        peak the method reached and the proven minimum.
    log : bool, default False
        CP-SAT's search log.
    progress : callable, optional
        ``progress(objective, bound, gap, elapsed)`` while a solver runs.
    deadline : float, optional
        A ``time.perf_counter()`` instant by which a solver returns, every phase included;
        default: the call's start plus
        ``time_limit``. Ignored with ``deterministic`` (limits are work units there).
    config : SolverConfig, optional
        ``time_limit``, ``workers``, ``seed``, ``deterministic``, ``log`` and ``deadline`` as
        one object (``cpsched.cp.runtime.SolverConfig``; what the command line passes),
        instead of the keywords one by one (giving both is an ``InputError``).
    **options
        Method options (``slack``, ``evict``, ``device``, ``profile``, ``bandwidth``,
        ``reorder``...); options this method does not use are ignored, a name no method
        reads (a typo) is an ``InputError``.

    Returns
    -------
    Result

    Examples
    --------
    >>> import cpsched
    >>> g = cpsched.generators.random_layered(n=12, seed=3)
    >>> best = schedule(g, time_limit=5)
    >>> dfs = schedule(g, "xla-dfs")
    >>> best.peak["static"] <= dfs.peak["static"], best.gap["static"]
    (True, 0.0)
    >>> plan = schedule(g, objective="remat", budget="90%", time_limit=5)
    >>> plan.peak["static"] <= plan.budget["static"] < best.peak["static"]
    True
    """
    t0 = time.perf_counter()
    time_limit, workers, seed, deterministic, log, deadline = _one_way(
        config, time_limit, workers, seed, deterministic, log, deadline
    )
    _check_solver_options(method, time_limit, workers, seed, deterministic=deterministic, log=log)
    deadline = _checked_deadline(deadline)
    if objective is not None:
        arguments.text(objective, "objective")
    if progress is not None and not callable(progress):
        raise InputTypeError(f"progress must be callable, not {type(progress).__name__}")
    check_options(options)
    _check_method_options(options)
    g = read(graph)
    sc = scenarios_for(g, scenarios)
    name, opts = _method_and_options(method, objective, options)
    opts.setdefault("device", default_device(g))  # the preset of every time figure
    m = get_method(name)
    if time_limit is None:
        time_limit = DEFAULT_TIME_LIMITS.get(m.name, DEFAULT_TIME_LIMIT)
    if not is_solver(m.name) or deterministic:
        deadline = None
    elif deadline is None:
        deadline = t0 + float(time_limit)
    cfg = SolverConfig(
        time_limit=float(time_limit),
        workers=int(workers),
        seed=int(seed),
        deterministic=bool(deterministic),
        log=bool(log),
        deadline=deadline,
    )
    if progress is not None:
        opts["progress"] = progress
    # a solver keeps its best result on a signal; the signal stays seen until the call ends,
    # so that one before the solve (reading, the budget's reference) stops the solve too
    with signals.keep_work() if deadline is not None else contextlib.nullcontext():
        return _schedule(g, sc, m, opts, cfg, budget, objective, t0)  # objective: the problem


def _one_way(
    config: SolverConfig | None,
    time_limit,
    workers,
    seed,
    deterministic,
    log,
    deadline,
    default_time_limit: float | None = None,
) -> tuple:
    """The solver settings, given as ``config`` or as the keywords (their defaults left
    alone; ``InputError`` where both are given)."""
    if config is None:
        return time_limit, workers, seed, deterministic, log, deadline
    loose = {
        "time_limit": time_limit is not None and time_limit != default_time_limit,
        "workers": workers != DEFAULT_WORKERS,
        "seed": seed != DEFAULT_SEED,
        "deterministic": bool(deterministic),
        "log": bool(log),
        "deadline": deadline is not None,
    }
    given = [k for k, v in loose.items() if v]
    if given:
        raise InputError(
            f"{', '.join(given)} given both as a keyword and in config: give the solver "
            "settings one way"
        )
    c = config
    return c.time_limit, c.workers, c.seed, c.deterministic, c.log, c.deadline


def _solver_keywords(cfg: SolverConfig) -> dict[str, Any]:
    """``cfg`` as the keywords every registered method takes (the one place the settings
    are spread out; ``deadline`` only where there is one)."""
    out: dict[str, Any] = {
        "time_limit": cfg.time_limit,
        "workers": cfg.workers,
        "seed": cfg.seed,
        "deterministic": cfg.deterministic,
        "log": cfg.log,
    }
    if cfg.deadline is not None:
        out["deadline"] = cfg.deadline
    return out


def _schedule(
    g: Graph,
    sc: Scenarios,
    m: Method,
    opts: dict[str, Any],
    cfg: SolverConfig,
    budget,
    problem: str | None,
    t0: float,
) -> Result:
    budget_bytes: dict[str, int] | None = None
    reference: dict[str, Any] = {}
    if budget is not None:
        arr, reference = resolve_budget(g, sc, budget)
        budget_bytes = _by_name(sc, arr)
        opts["budget"] = [int(v) for v in arr]
    stopped_by = signals.received()
    if stopped_by is not None:
        # stopped before the solve began (in the budget's reference): nothing to keep
        raise signals.Interrupted(stopped_by)
    # the solver's share of the limit; the command line says so when it is under half
    available = None if cfg.deadline is None else max(0.0, cfg.deadline - time.perf_counter())
    call = _Call(opts, cfg, available, budget_bytes, reference, t0)
    if opts.get("objective") == "budget" and budget is None:
        raise InputError("--objective budget needs --budget (bytes, 8GiB or 90%)")
    if m.family == "remat":
        if budget is None:
            raise InputError(
                f"--objective {problem or 'remat'} needs --budget (bytes, 8GiB or 90%)"
            )
        return kept_budget(_remat_result(g, sc, m, call))
    for flag in ("reorder", "bandwidth", "evict"):
        if opts.get(flag) not in (None, False) or (flag == "reorder" and flag in opts):
            raise InputError(
                f"--{'keep-order' if flag == 'reorder' else flag} applies to --objective remat only"
            )
    module = g.program
    if module is not None:
        return kept_budget(_run_module(module, g, sc, m, call))
    return kept_budget(_run(g, sc, m, call))


@dataclass(frozen=True)
class _Call:
    """One ``schedule`` call as its helpers see it: the method's options, the solver
    settings, and what the result records (the solver's share of the limit, the budget and
    its reference, the call's start)."""

    opts: Mapping[str, Any]
    cfg: SolverConfig
    seconds_available: float | None
    budget_bytes: Mapping[str, int] | None
    reference: Mapping[str, Any]
    t0: float


def kept_budget(r: Result) -> Result:
    """``r`` when its peak is within its budget in every scenario (or it has none), else
    ``BudgetError``: a budget is kept or refused, whichever method ran and however short its
    time was. The message gives per scenario the least peak the method reached and the proven
    minimum (no order, or for plans no plan, goes below it), so the user knows which budget
    can be had."""
    if r.budget is None or all(r.peak[n] <= r.budget[n] for n in r.scenarios.names):
        return r
    if r.plan is not None:
        proven = getattr(r.record, "proven_min_bytes", None)  # RematRecord, JointRecord
        if not proven:
            proven = _by_name(r.scenarios, min_memory_bound(r.graph, r.scenarios)[0])
        what = "no plan"
    else:
        proven, what = r.bound, "no order"
    reached = {n: int(r.peak[n]) for n in r.scenarios.names}
    proven = {n: int(proven[n]) for n in r.scenarios.names}
    parts = [
        f"{n}: budget {_bytes_text(r.budget[n])}, least peak reached {_bytes_text(reached[n])}, "
        f"{what} goes below {_bytes_text(proven[n])} (proven)"
        for n in r.scenarios.names
        if reached[n] > r.budget[n]
    ]
    impossible = any(proven[n] > r.budget[n] for n in r.scenarios.names)
    if impossible:
        tail = "the budget is below the proven minimum"
    elif r.plan is not None:
        tail = "not proven impossible: " + (
            "a longer --time-limit, or --evict, may meet it"
            if is_solver(r.method)
            else "--objective remat (cp-remat: order and plan searched together) may meet it"
        )
    else:
        tail = (
            "not proven impossible: "
            + ("a longer --time-limit may meet it; " if is_solver(r.method) else "")
            + "--objective remat (recompute and, with --evict, offload) may meet it"
        )
    raise BudgetError(
        f"{r.method} ({r.status}) did not meet the budget; nothing written: "
        + "; ".join(parts)
        + f"; {tail}",
        reached=reached,
        proven=proven,
        result=r,
    )


def _bytes_text(v: int) -> str:
    return format_bytes_exact(v)


def _check_solver_options(method, time_limit, workers, seed=DEFAULT_SEED, **flags) -> None:
    """Every argument of the solver family, checked before any work (``InputTypeError`` for
    a wrong type, ``InputError`` for a value out of range)."""
    if method is not None and not arguments.text(method, "method").strip():
        raise InputError("the method name is empty; see methods()")
    if time_limit is not None:
        arguments.time_limit(time_limit)
    arguments.workers(workers)
    arguments.seed(seed)
    for k, v in flags.items():
        if v is not None:
            arguments.flag(v, k)


def _checked_deadline(deadline: Any) -> float | None:
    """A ``time.perf_counter()`` instant (any finite number; one in the past leaves no
    time), or None."""
    return None if deadline is None else arguments.number(deadline, "deadline", low=-math.inf)


def _check_method_options(options: Mapping[str, Any]) -> None:
    """The numeric and on/off method options the command line also takes."""
    if options.get("slack") is not None:
        arguments.number(options["slack"], "slack", strict=False)
    if options.get("bandwidth") is not None:
        arguments.number(options["bandwidth"], "bandwidth")
    for k in ("evict", "reorder"):
        if options.get(k) is not None:
            arguments.flag(options[k], k)
    for k in ("device", "profile"):
        v = options.get(k)
        if (
            v is not None
            and not isinstance(v, (str, os.PathLike, Mapping))
            and not hasattr(v, "unit")
        ):
            raise InputTypeError(f"{k} must be a preset name or a file, not {type(v).__name__}")


def _method_and_options(
    method: str | None, problem: str | None, options: Mapping[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The method that runs for ``method`` and ``problem`` (``schedule``'s ``objective``),
    and its options (the problem's ``objective`` option added)."""
    opts = {k: v for k, v in options.items() if v is not None}
    if problem is not None:
        if problem not in PROBLEMS:
            raise InputError(f"unknown objective {problem!r}; one of {', '.join(PROBLEMS)}")
        solver, option = PROBLEMS[problem]
        method = {"cp-memory": "cp"}.get(method or "", method)
        if (
            method
            and method != solver
            and not (solver == "cp-remat" and method.startswith("remat"))
        ):
            raise InputError(f"--objective {problem} is solved by {solver}, not {method}")
        opts["objective"] = option
        method = method or solver
    name = {"cp-memory": "cp"}.get(method or "cp", method or "cp")
    return name, opts


def resolve_method(method: str | None = None, objective: str | None = None) -> str:
    """The registered name of the method ``schedule(method=..., objective=...)`` runs."""
    return _method_and_options(method, objective, {})[0]


def _validated(
    g: Graph, sc: Scenarios, m: Method, opts: Mapping[str, Any], cfg: SolverConfig
) -> Schedule:
    """Run one method on one graph; its order checked and simulated by the validator."""
    t0 = time.perf_counter()
    out = m.fn(g, sc, **opts, **_solver_keywords(cfg))
    dt = time.perf_counter() - t0
    if isinstance(out, Schedule):
        # re-validate: a solver's claim is checked against the simulator, byte for byte
        return make_schedule(
            g,
            out.order,
            out.method,
            sc,
            status=out.status,
            seconds=out.seconds or dt,
            lower_bound=out.lower_bound_bytes,
            claimed_peak=[int(v) for v in out.peak_bytes],
            info=out.info,
            computation_orders=out.computation_orders,
        )
    return make_schedule(g, out, m.name, sc, seconds=dt)


def _run(g: Graph, sc: Scenarios, m: Method, call: _Call) -> Result:
    s = _validated(g, sc, m, call.opts, call.cfg)
    return _result(g, sc, m, s, call)


# the share of cp's time limit on an HLO module kept for orders judged by XLA's allocation
# (``strategies.allocation``), and the buffer assignments per second of limit it may compute
# in deterministic mode
ALLOCATION_SEARCH_SHARE = 0.2
ALLOCATION_EVALUATIONS_PER_SECOND = 20

# the memory heuristics that cp also tries on every computation of a module, judged by XLA's
# accounting (a solver's objective counts a loop body's state through the gap XLA leaves)
MODULE_ALTERNATIVES = ("xla-list", "xla-dfs", "xla-postorder")


def _run_module(module, g: Graph, sc: Scenarios, m: Method, call: _Call) -> Result:
    """Every sequential computation of ``module`` ordered by ``m``, callees first
    (``cpsched.strategies.module``). A solver's time limit is shared among the computations
    and its result is never worse than the module's own orders nor than the memory
    heuristics'; heuristics do per computation what the compiler's would. A method that is
    a module-level choice (``Method.choice``: ``xla-default``) runs each of its methods on
    the whole module and keeps the least module peak, ties to the first, as XLA's
    ``DefaultMemoryScheduler::Run`` does; ``info['choice']`` gives each one's peak."""
    choice = None
    opts, cfg = call.opts, call.cfg
    if m.choice:
        k = scenario_index(sc, opts.get("scenario"))
        runs = {name: _lift(module, sc, get_method(name), opts, cfg, m.name) for name in m.choice}
        chosen = min(m.choice, key=lambda name: int(runs[name].peak[k]))  # ties: first
        ms = runs[chosen]
        choice = {
            "selected": chosen,
            "scenario": sc.names[k],
            "module_peak_bytes": {name: int(runs[name].peak[k]) for name in m.choice},
        }
    else:
        ms = _lift(module, sc, m, opts, cfg, m.name)
    s = ms.schedule
    attach_program(s.graph, module)
    r = _result(s.graph, sc, m, s, call)
    info = dict(r.info)
    info["computations"] = [vars(c) for c in ms.computations]
    info["kept_input_orders"] = ms.kept_input
    if choice is not None:
        info["choice"] = choice
    return replace(r, orders=dict(ms.orders), record=record_for(m.name, m.family, info))


def _lift(module, sc: Scenarios, m: Method, opts: Mapping[str, Any], cfg: SolverConfig, label: str):
    """``m`` on every sequential computation of ``module`` (``schedule_module``); cp's
    orders then judged by what XLA allocates for them (``refine_module_schedule``)."""
    t0 = time.perf_counter()
    solver = is_solver(m.name)
    # a share of cp's time limit is kept for a search among orders of no higher peak
    refine = m.name == "cp" and len(sc) == 1
    cp_cfg = cfg
    if refine and cfg.time_limit:
        kept = ALLOCATION_SEARCH_SHARE * cfg.time_limit
        cp_cfg = cfg.with_(
            time_limit=cfg.time_limit - kept,
            deadline=None if cfg.deadline is None else cfg.deadline - kept,
        )

    def per_computation(graph: Graph, scen: Scenarios, seconds: float | None):
        c = cp_cfg if seconds is None else cp_cfg.with_(time_limit=max(seconds, 0.1))
        return _validated(graph, scen, m, opts, c)

    alternatives = []
    if m.name == "cp":
        for name in MODULE_ALTERNATIVES:
            fn = get_method(name).fn
            alternatives.append(lambda graph, scen, seconds, fn=fn: fn(graph, scen))
    ms = schedule_module(
        module,
        per_computation,
        scenarios=sc,
        time_limit=cp_cfg.time_limit if solver else None,
        deterministic=cfg.deterministic,
        method=label,
        never_worse=(m.name == "cp"),
        alternatives=alternatives,
        peak_objective=(m.family != "overlap"),
    )
    if not refine or not all(s.is_constant for s in ms.schedule.graph.buffer_sizes):
        return ms
    # the search ends within the method's own time limit (a compare row's share), and by
    # the command's deadline
    end = cfg.deadline
    if not cfg.deterministic and cfg.time_limit:
        own = t0 + cfg.time_limit
        end = own if end is None else min(end, own)
    return refine_module_schedule(
        ms,
        deadline=end,
        max_evaluations=(
            int(ALLOCATION_EVALUATIONS_PER_SECOND * (cfg.time_limit or 10.0))
            if cfg.deterministic
            else None
        ),
        seed=cfg.seed,
    )


# The minimum-cut bound (``cpsched.cp.memory.cuts``) is part of the bound every command
# shows where its expected time (per op squared and scenario: ``strategies.min_peak.method``'s rate) is
# at most this; above it the bound is the forced-live one, labelled weak.
CUT_BOUND_MAX_SECONDS = 2.5
WEAK_BOUND = "weak: forced-live bytes only"


def known_lower_bound(
    graph: Graph, scenarios: Scenarios | None = None, *, seconds: float | None = None
) -> tuple[np.ndarray, str]:
    """The best lower bound on the peak of any order that needs no search, per scenario,
    with a note that is empty for the usual bound and says why where it is weak. The usual
    bound: the bytes forced live at each op and the minimum cut per op (``info``,
    ``simulate``, ``compare`` and every method's result start from it; solvers may prove
    more). For a graph read from HLO, the module's bound (``module_lower_bound``: every
    called computation at the least it could need in any order). The cut bound costs about
    ``n^2`` per scenario: above ``CUT_BOUND_MAX_SECONDS`` of it (or ``seconds``, what is
    left of a time limit) only the forced-live bytes are counted, and the note says so.
    Computed once per graph and scenarios.

    >>> g = read('{"nodes": [{"id": 0, "size": 100}, {"id": 1, "size": 10},'
    ...          ' {"id": 2, "size": 1}], "links": [{"source": 0, "target": 2},'
    ...          ' {"source": 1, "target": 2}]}')
    >>> known_lower_bound(g)
    (array([111]), '')
    """
    sc = scenarios or static()
    module = graph.program
    if module is not None:
        return module_lower_bound(module, sc), ""
    n = graph.n_ops
    guess = CUT_SECONDS_PER_OP2 * n * n * len(sc)
    key = json.dumps(sc.to_json(), sort_keys=True)
    known = _KNOWN_BOUNDS.get(graph, {}).get(key)  # (one skipped for time is not kept)
    if known is not None:
        return known[0].copy(), known[1]
    lb = static_lower_bound(graph, sc)
    if n <= CUT_MAX_OPS and guess <= CUT_BOUND_MAX_SECONDS:
        if seconds is not None and guess > seconds:
            return lb, f"{WEAK_BOUND}, the minimum-cut bound skipped for the time limit"
        known = np.maximum(lb, cut_problem(graph, sc).lower_bound).astype(np.int64), ""
    else:
        known = lb, f"{WEAK_BOUND}, the minimum-cut bound skipped at {n:,} ops"
    _KNOWN_BOUNDS.setdefault(graph, {})[key] = known
    return known[0].copy(), known[1]


# known_lower_bound's results by graph (while it lives) and scenarios: every row of a
# comparison asks for the same bound
_KNOWN_BOUNDS: weakref.WeakKeyDictionary[Graph, dict[str, tuple[np.ndarray, str]]] = (
    weakref.WeakKeyDictionary()
)


def _result(g: Graph, sc: Scenarios, m: Method, s: Schedule, call: _Call) -> Result:
    """An order method's validated schedule as a ``Result``: its bound raised to the best
    known one where the method proved none better."""
    info = _reported(s.info, call)
    if is_solver(m.name):
        if info.get("weak_bound") and s.status != "OPTIMAL":
            info["lower_bound_note"] = f"{WEAK_BOUND}, {info['weak_bound']}"
    elif g.program is None:  # a module's result has the module's bound already
        deadline = call.cfg.deadline
        left = None if deadline is None else deadline - time.perf_counter()
        lb, note = known_lower_bound(g, sc, seconds=left)
        lb = np.minimum(np.maximum(lb, s.lower_bound_bytes), s.peak_bytes)
        s = replace(s, lower_bound_bytes=lb.astype(np.int64))
        if note:
            info["lower_bound_note"] = note
    s = replace(s, info=info)  # the schedule written says what the result says
    return _to_result(g, sc, m, call, s, info)


def _remat_result(g: Graph, sc: Scenarios, m: Method, call: _Call) -> Result:
    opts = {k: v for k, v in call.opts.items() if k != "slack"}  # an overlap option
    res: RematResult = m.fn(g, sc, **opts, **_solver_keywords(call.cfg))
    return _to_result(g, sc, m, call, res, _reported(res.info, call))


def _reported(info: Mapping[str, Any], call: _Call) -> dict[str, Any]:
    """What a method reported, with the budget's reference where the budget was a share."""
    return {**info, **({"budget_reference": call.reference} if call.reference else {})}


def _to_result(
    g: Graph,
    sc: Scenarios,
    m: Method,
    call: _Call,
    answer: Schedule | RematResult,
    info: Mapping[str, Any],
) -> Result:
    """The one place a method's validated answer becomes a ``Result``: an order (a
    ``Schedule``: peak, bound and gap) or a remat plan (its peak within its budget)."""
    total = time.perf_counter() - call.t0
    figures: dict[str, Any]
    if isinstance(answer, RematResult):
        order = tuple(int(i) for i in answer.skeleton.order)
        figures = dict(
            method=answer.method,
            order=order,
            orders=_orders(g, order, None),
            peak=_by_name(sc, answer.peak),
            bound={},
            gap={},
            budget=_by_name(sc, answer.budget),
            plan=answer,
        )
    else:
        peak, bound = answer.peak_by_name(), answer.lower_bound_by_name()
        figures = dict(
            method=m.name,
            order=answer.order,
            orders=_orders(g, answer.order, answer),
            peak=peak,
            bound=bound,
            gap=_gap(peak, bound),
            budget=call.budget_bytes,
            schedule=answer,
        )
    return Result(
        graph=g,
        status=answer.status,
        scenarios=sc,
        seconds=total,
        timings=_timings(total, answer.seconds, answer.info),
        solver=_solver_settings(m.name, call.cfg, call.seconds_available),
        record=record_for(m.name, m.family, info),
        **figures,
    )


def simulate(
    graph,
    order: Sequence[int] | Sequence[str] | Mapping[str, Sequence[str]] | None = None,
    scenarios=None,
) -> Result:
    """Validate and simulate one order (op indices or names; default the graph's own order,
    else a topological one). Raises ``ScheduleError`` for an invalid order.

    For a graph read from HLO, ``order`` may also give the order of every computation by
    name (``Result.orders``, or what ``writers.schedule.read_module_orders`` reads from a
    scheduled module): loop bodies, branches and called computations are then simulated in
    their given orders too, as the module written with them would be. So
    ``simulate(g, r.orders).peak == r.peak`` for every method's result ``r``.

    Examples
    --------
    >>> g = read('{"nodes": [{"id": 0, "size": 100}, {"id": 1, "size": 10},'
    ...          ' {"id": 2, "size": 1}], "links": [{"source": 0, "target": 2},'
    ...          ' {"source": 1, "target": 2}]}')
    >>> simulate(g, ["1", "0", "2"]).peak
    {'static': 111}
    """
    t0 = time.perf_counter()
    g = read(graph)
    sc = scenarios_for(g, scenarios)
    if isinstance(order, Mapping):
        g, order = _with_computation_orders(g, order)
    if order is None:
        idx = g.default_order()
    else:
        if isinstance(order, (str, bytes)) or not isinstance(order, Iterable):
            raise InputTypeError(f"order must be a list of op names or indices, not {order!r}")
        idx = []
        for x in order:
            if isinstance(x, str):
                try:
                    idx.append(g.op_index(x))
                except KeyError as e:
                    raise InputError(str(e.args[0])) from None
            else:
                idx.append(arguments.integer(x, "an op index in order", high=g.n_ops - 1))
    lb, note = known_lower_bound(g, sc)
    s = make_schedule(
        g,
        idx,
        "given",
        sc,
        status=GIVEN,
        lower_bound=lb,
        info={"lower_bound_note": note} if note else None,
    )
    peak, bound = s.peak_by_name(), s.lower_bound_by_name()
    total = time.perf_counter() - t0
    return Result(
        graph=g,
        method="given",
        status=GIVEN,
        scenarios=sc,
        order=s.order,
        orders=_orders(g, s.order, None),
        peak=peak,
        bound=bound,
        gap=_gap(peak, bound),
        seconds=total,
        schedule=s,
        timings={"total": round(total, 6)},
        record=Record.from_info(s.info),
    )


def _with_computation_orders(
    g: Graph, orders: Mapping[str, Sequence[str]]
) -> tuple[Graph, list[str]]:
    """The entry graph rebuilt with every called computation in its order from ``orders``
    (callees carry their peak under that order), and the entry's order."""
    module = g.program
    entry = module.entry.name if module is not None else g.name
    unknown = sorted(
        set(orders) - ({entry} | set(scheduled_computations(module) if module else ()))
    )
    if unknown:
        raise InputError(
            f"the schedule orders computation(s) {', '.join(unknown[:3])} that {g.name} "
            "does not have"
        )
    if entry not in orders:
        raise InputError(f"the schedule gives no order for the entry computation {entry}")
    if module is not None and len(orders) > 1:
        g = HloConverter(module, {k: list(v) for k, v in orders.items()}).graph(entry)
        attach_program(g, module)
    return g, [str(x).lstrip("%") for x in orders[entry]]


def _note_allocation(
    allocation: dict[str, dict[str, dict[str, int]]], results: Mapping[str, Result], row: str
) -> None:
    """``allocation[row] = xla_allocation(results[row])``, reusing the figures of an earlier
    row with the same orders (heuristics often agree)."""
    r = results[row]
    same = next(
        (a for k, a in allocation.items() if dict(results[k].orders) == dict(r.orders)), None
    )
    allocation[row] = same if same is not None else xla_allocation(r)


def xla_allocation(result: Result) -> dict[str, dict[str, int]]:
    """What XLA's buffer assignment reserves for ``result``'s order of an HLO module, per
    scenario: ``temp_bytes`` (``compiled.memory_analysis().temp_size_in_bytes``: the
    preallocated temp buffer) and ``allocated_bytes`` (all allocations, parameters and
    outputs included: the memory-usage report's total). Empty when the graph was not read
    from HLO, or the schedule is a remat plan (its clones are not the module's)."""
    module = result.graph.program
    if module is None or result.plan is not None:
        return {}
    figures = allocation_figures(module, result.orders)
    if figures is None:
        return {}
    return {k: {n: v for n in result.scenarios.names} for k, v in figures.items()}


def memory_profile(result: Result):
    """Memory over time (``MemoryProfile``: bytes live per step and scenario) of a result's
    order."""
    return simulate_memory(result.graph, result.order, result.scenarios)


def explain_peak(result: Result, *, top: int | None = 10) -> dict[str, dict[str, Any]]:
    """Per scenario: where the peak of ``result``'s order is and what is live there.

    ``{"peak_bytes", "step", "op", "buffers": [...], "more": {"count", "bytes"}}``; the
    buffers live at the (first) peak step, largest first (the ``top`` largest; None: all),
    and the scratch bytes of the op running there (its ``transient``: a fusion's scratch, a
    loop's or call's own peak). Each buffer: ``buffer``, ``bytes``, ``op`` and ``opcode``
    (the op that defines it), ``live`` (first and last step; ``parameter`` / ``output``
    where it is live throughout), and where the input carries them, the program's own
    names and lines: ``op_name`` (XLA's metadata), ``fx`` and ``aten`` (PyTorch),
    ``source`` (``file.py:LINE``).

    Examples
    --------
    >>> g = read('{"nodes": [{"id": "a", "size": 100}, {"id": "b", "size": 10},'
    ...          ' {"id": "c", "size": 1}], "links": [{"source": "a", "target": "c"},'
    ...          ' {"source": "b", "target": "c"}]}')
    >>> e = explain_peak(simulate(g, ["a", "b", "c"]))["static"]
    >>> e["peak_bytes"], e["op"], [(b["buffer"], b["bytes"]) for b in e["buffers"]]
    (111, 'c', [('a', 100), ('b', 10), ('c', 1)])
    """
    _check_result(result)
    if top is not None:
        top = arguments.integer(top, "top", low=0)
    g, sc = result.graph, result.scenarios
    prof = memory_profile(result)
    sizes = g.sizes(sc)
    transient = g.transient_bytes(sc)
    out: dict[str, dict[str, Any]] = {}
    last = max(len(result.order) - 1, 0)
    for s, name in enumerate(sc.names):
        step = int(prof.peak_step[s])
        op = int(prof.order[step]) if len(prof.order) else -1
        live = np.flatnonzero((prof.start <= step) & (prof.end >= step) & (sizes[s] > 0))
        live = live[np.argsort(-sizes[s][live], kind="stable")]
        rows = []
        for b in live:
            d = int(g.buffer_def[b])
            start, end = int(prof.start[b]), int(prof.end[b])
            row = {
                "buffer": g.buffer_names[b],
                "bytes": int(sizes[s][b]),
                "op": g.op_names[d],
                "opcode": g.opcodes[d],
                "live": [start, end],
            }
            if g.buffer_live_in[b]:
                row["kind"] = "parameter"
            elif g.buffer_live_out[b] and end == last:
                row["kind"] = "output"
            rows.append(_with_program_names(row, g.attrs(d)))
        scratch = int(transient[s][op]) if op >= 0 else 0
        if scratch > 0:
            row = {
                "buffer": f"{g.op_names[op]} (scratch)",
                "bytes": scratch,
                "op": g.op_names[op],
                "opcode": g.opcodes[op],
                "live": [step, step],
                "kind": "scratch",
            }
            rows.append(_with_program_names(row, g.attrs(op)))
            rows.sort(key=lambda r: -r["bytes"])
        shown = rows if top is None else rows[:top]
        rest = rows[len(shown) :]
        out[name] = {
            "peak_bytes": int(prof.peak[s]),
            "step": step,
            "op": g.op_names[op] if op >= 0 else None,
            "buffers": shown,
            "more": {"count": len(rest), "bytes": int(sum(r["bytes"] for r in rest))},
        }
    return out


def _with_program_names(row: dict[str, Any], attrs: Mapping[str, Any]) -> dict[str, Any]:
    """The program's own names of an op, where the reader kept them."""
    if attrs.get("op_name"):
        row["op_name"] = str(attrs["op_name"])
    for key in ("fx", "aten"):
        if attrs.get(key):
            row[key] = list(attrs[key])
    if attrs.get("source"):
        row["source"] = str(attrs["source"])
    return row


def format_peak_buffers(explained: Mapping[str, Mapping[str, Any]]) -> str:
    """``explain_peak``'s answer as text: per scenario, one line per buffer (size, buffer,
    the op defining it, the program's name and source line)."""
    lines: list[str] = []
    multi = len(explained) > 1
    for name, e in explained.items():
        lines.append(
            f"live at the peak{f' of {name}' if multi else ''}: {format_bytes(e['peak_bytes'])} "
            f"at step {e['step']} ({e['op']}), largest first:"
        )
        rows = [("bytes", "buffer", "defined by", "live", "program (source)")]
        for b in e["buffers"]:
            live = b.get("kind") or f"{b['live'][0]}-{b['live'][1]}"
            program = b.get("op_name") or ""
            if not program and (b.get("fx") or b.get("aten")):
                program = ", ".join(b.get("aten") or b.get("fx") or [])
            if b.get("source"):
                program = f"{program} ({b['source']})" if program else b["source"]
            defined = b["opcode"] if b["op"] == b["buffer"] else f"{b['op']} ({b['opcode']})"
            rows.append((format_bytes(b["bytes"]), b["buffer"], defined, live, program))
        widths = [max(len(r[c]) for r in rows) for c in range(4)]
        for r in rows:
            lines.append(
                "  "
                + "  ".join(
                    [r[0].rjust(widths[0])] + [r[c].ljust(widths[c]) for c in range(1, 4)] + [r[4]]
                ).rstrip()
            )
        more = e["more"]
        if more["count"]:
            lines.append(f"  ... and {more['count']} smaller, {format_bytes(more['bytes'])} in all")
    return "\n".join(lines)


# -- compare ---------------------------------------------------------------------------------


@dataclass
class Comparison:
    """Every method's result on one graph, measured against the best proven bound.

    ``rows`` are records (one per method; ``error`` rows for methods that failed);
    ``to_pandas()`` gives one row per method and scenario; ``str()`` the table the command
    line prints; ``to_dict()`` the JSON with everything needed to reproduce it."""

    graph: Graph
    scenarios: Scenarios
    results: dict[str, Result]
    bound: dict[str, int]
    timelines: dict[str, Any]
    settings: dict[str, Any]
    errors: dict[str, str] = field(default_factory=dict)
    time_unit: str = "s"
    bound_note: str = ""  # why the bound is weak, where it is (``known_lower_bound``)
    allocation: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)

    @property
    def rows(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for name in self.settings["methods"]:
            if name in self.errors:
                out.append({"method": name, "error": self.errors[name]})
                continue
            r = self.results.get(name)
            if r is None:
                continue
            row: dict[str, Any] = {
                "method": name,
                "status": r.status,
                "peak_bytes": dict(r.peak),
                "gap": {n: round(v, 6) for n, v in r.gap.items()},
                "seconds": round(r.seconds, 6),
            }
            row.update(self.allocation.get(name, {}))
            row["budget"] = _row_budget(name, r)
            if r.record.interrupted:
                row["interrupted"] = True  # cut by a signal: its best result so far
            tl = self.timelines.get(name)
            if tl is not None:
                row["makespan"] = {n: float(v) for n, v in zip(self.scenarios.names, tl.makespan)}
                row["exposed_comm"] = {
                    n: float(v) for n, v in zip(self.scenarios.names, tl.exposed_comm)
                }
            out.append(row)
        return out

    def records(self) -> list[dict[str, Any]]:
        """Flat records: one per method and scenario (what a DataFrame wants)."""
        out = []
        for row in self.rows:
            if "error" in row:
                out.append({"method": row["method"], "error": row["error"]})
                continue
            for n in self.scenarios.names:
                rec: dict[str, Any] = {
                    "method": row["method"],
                    "status": row["status"],
                    "scenario": n,
                    "peak_bytes": row["peak_bytes"][n],
                    "lower_bound_bytes": self.bound[n],
                    **{k: row[k][n] for k in ("temp_bytes", "allocated_bytes") if k in row},
                    "gap": row["gap"][n],
                    "seconds": row["seconds"],
                }
                if "makespan" in row:
                    rec["makespan"] = row["makespan"][n]
                    rec["exposed_comm"] = row["exposed_comm"][n]
                out.append(rec)
        return out

    def to_pandas(self):
        """``records()`` as a pandas DataFrame (pandas comes with ortools)."""
        return _data_frame(self.records())

    def to_dict(self) -> dict[str, Any]:
        return {
            "graph": self.graph.name,
            "ops": self.graph.n_ops,
            "scenarios": list(self.scenarios.names),
            "time_unit": self.time_unit,
            "time_model": self.model,
            "device": self.settings.get("device"),
            "lower_bound_bytes": dict(self.bound),
            "lower_bound_note": self.bound_note,
            "gap_definition": "(peak - bound) / peak, bound = the best proven lower "
            "bound of any row or the static bound (forced-live bytes and minimum cuts)",
            "reproduce": dict(self.settings),
            "rows": self.rows,
        }

    def table(self) -> str:
        return format_comparison(self)

    @property
    def model(self) -> str:
        """What the time columns come from: ``h100 model``, ``the input's op times``."""
        tl = next(iter(self.timelines.values()), None)
        return tl.model if tl is not None else f"{self.settings.get('device')} model"

    def plot(self, path: str | os.PathLike, *, inputs: Sequence[str] = ()) -> str:
        """Live memory of every row's order (one line each, with the best lower bound) and,
        where the program has collectives or copies, the streams of the input's order and
        of cp-overlap's (needs matplotlib); never over ``inputs``. Returns ``path``."""
        path = arguments.text(os.fspath(path), "path")
        if not self.results:
            raise InputError(
                f"{path}: nothing to draw: no row of the comparison has a result "
                "(every row failed or was not run); nothing written"
            )
        profiles = {n: memory_profile(r) for n, r in self.results.items()}
        plot_memory(
            profiles,
            path,
            title=f"{self.graph.name}: live memory of each method's order",
            inputs=tuple(inputs),
            timelines=self._streams_shown(),
            bound=dict(self.bound),
        )
        return path

    def _streams_shown(self) -> dict[str, Any]:
        """The timelines a figure shows: the input's order (or the first row) beside the
        solver's overlap order (else the fastest row): before and after."""
        tls = self.timelines
        if not tls:
            return {}
        before: str = "given" if "given" in tls else next(iter(tls))
        solver = [n for n in ("cp-overlap", "cp-memory") if n in tls]
        after: str = solver[0] if solver else min(tls, key=lambda n: tls[n].expected_makespan)
        return {n: tls[n] for n in dict.fromkeys((before, after))}

    def __repr__(self) -> str:
        return self.table()


def _data_frame(records: list[dict[str, Any]]):
    """``records`` as a pandas DataFrame (pandas is imported here: it comes with ortools,
    and only a caller who asks for a frame pays for it)."""
    try:
        import pandas as pd
    except ImportError:
        raise InputError("to_pandas needs pandas: pip install pandas") from None
    return pd.DataFrame.from_records(records)


def _row_budget(name: str, r: Result) -> dict[str, Any] | None:
    """The memory budget a row was solved under (None: the method's own peak, no budget)."""
    rec = r.record
    b = r.budget or (rec.budget if isinstance(rec, TimedRecord) else None)
    if not b:
        return None
    if "@" in name:
        source = f"{name.split('@', 1)[1]}'s peak"
    else:
        own = isinstance(rec, OverlapRecord) and "budget_source" in rec
        source = str(rec.budget_source) if isinstance(rec, OverlapRecord) and own else "given"
    return {"bytes": {k: int(v) for k, v in dict(b).items()}, "source": source}


def format_comparison(c: Comparison) -> str:
    """The comparison as a text table: bytes in KiB/MiB/GiB, times with units."""
    sc = c.scenarios
    multi = len(sc) > 1
    head = f"{c.graph.name}: {c.graph.n_ops} ops; best proven lower bound " + ", ".join(
        f"{n} {format_bytes(v)}" if multi else format_bytes(v) for n, v in c.bound.items()
    )
    if c.bound_note:
        head += f" ({c.bound_note})"
    xla = bool(c.allocation)  # an HLO module: what XLA's buffer assignment reserves
    model = c.model
    header = (
        ["method", "status"]
        + [f"peak {n}" if multi else "peak" for n in sc.names]
        + (["XLA temp", "allocated"] if xla else [])
        + ["vs bound", f"makespan ({model})", f"exposed comm ({model})", "budget", "time"]
    )
    table: list[list[str]] = []
    for row in c.rows:
        if "error" in row:
            table.append([row["method"], "ERROR", row["error"]])
            continue
        status = row["status"] + (" (interrupted)" if row.get("interrupted") else "")
        cells = [row["method"], status] + [format_bytes(row["peak_bytes"][n]) for n in sc.names]
        if xla:
            for key in ("temp_bytes", "allocated_bytes"):
                cells.append(format_bytes(max(row[key].values())) if key in row else "-")
        cells.append(f"+{100 * max(row['gap'].values()):.1f} %")
        if "makespan" in row:
            cells.append(format_time(max(row["makespan"].values()), c.time_unit))
            cells.append(format_time(max(row["exposed_comm"].values()), c.time_unit))
        else:
            cells += ["-", "-"]
        bud = row.get("budget")
        cells.append(format_bytes(max(bud["bytes"].values())) if bud else "none")
        cells.append(format_seconds(row["seconds"]))
        table.append(cells)
    # an ERROR row's message runs on past the columns instead of widening one of them
    widths = [
        max(len(r[i]) for r in [header] + [t for t in table if len(t) > i and t[1] != "ERROR"])
        for i in range(len(header))
    ]
    lines = [head, "  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    for r in table:
        lines.append("  ".join(str(x).ljust(w) for x, w in zip(r, widths)).rstrip())
    note = (
        "vs bound: (peak - bound) / peak, worst scenario; budget: the memory a row was "
        "held to (none: its own peak); cp-overlap@ROW: cp-overlap at ROW's peak"
    )
    if c.allocation:
        note += (
            "; XLA temp / allocated: what XLA's buffer assignment reserves for the row's "
            "order (its temp buffer / all allocations, parameters and outputs included)"
        )
    if multi:
        note += "; makespan, exposed comm: worst scenario"
    if c.time_unit == "xla":
        note += "; (xla): XLA's cost units, 1 unit taken as 1 us"
    elif c.time_unit == "file":
        note += "; units: the input file's own time units"
    lines.append(note)
    stopped = c.settings.get("interrupted")
    if stopped is not None:
        lines.append(
            "interrupted: the rows above finished (one marked interrupted was cut short); "
            + (f"not run: {', '.join(stopped['not_run'])}" if stopped["not_run"] else "")
        )
    return "\n".join(lines)


def _best_bounds(
    g: Graph, sc: Scenarios, results: Mapping[str, Result], deadline: float | None
) -> tuple[dict[str, int], str]:
    """The best proven lower bound per scenario among the rows and the graph's known bound,
    and the known bound's note (empty where a row proved more)."""
    lb, note = known_lower_bound(
        g, sc, seconds=None if deadline is None else deadline - time.perf_counter()
    )
    best = {n: int(lb[s]) for s, n in enumerate(sc.names)}
    for r in results.values():
        for n, b in r.bound.items():
            if b > best[n]:
                best[n] = int(b)
                note = ""  # a row proved more than the weak bound
    return best, note


def _compare_settings(
    rows: list[str],
    sc: Scenarios,
    cfg: SolverConfig,
    solvers: bool,
    device: str,
    profile: str | None,
    async_collectives: bool,
) -> dict[str, Any]:
    """What reproduces a comparison: versions, machine, rows and every setting."""
    return {
        "cpsched": __version__,
        "ortools": ortools_version(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "methods": rows,
        "time_limit": float(cfg.time_limit),
        "workers": int(cfg.workers),
        "seed": int(cfg.seed),
        "deterministic": bool(cfg.deterministic),
        "solvers": bool(solvers),
        "device": device,
        "profile": profile,
        "async_collectives": bool(async_collectives),
        "scenarios": sc.to_json(),
    }


def _compare_row(
    g: Graph, sc: Scenarios, name: str, cfg: SolverConfig, opts: Mapping[str, Any]
) -> Result:
    """One row of ``compare``: the input's own order (``given``) or the method's schedule
    with the row's solver settings and options (the cost model)."""
    if name == "given":
        return simulate(g, g.original_order, sc)
    return schedule(g, name, scenarios=sc, config=cfg, **opts)


def compare(
    graph,
    methods: Iterable[str] | None = None,
    *,
    scenarios=None,
    time_limit: float = DEFAULT_TIME_LIMIT,
    workers: int = DEFAULT_WORKERS,
    seed: int = DEFAULT_SEED,
    deterministic: bool = False,
    solvers: bool = True,
    device: str | None = None,
    profile: str | None = None,
    as_dataframe: bool = False,
    async_collectives: bool = False,
    progress: Callable[[str], None] | None = None,
    deadline: float | None = None,
    config: SolverConfig | None = None,
):
    """Run every order method (or ``methods``) on one graph, side by side.

    Parameters
    ----------
    graph : Graph, path, text or networkx.DiGraph
        Anything ``read`` takes.
    methods : list of str, optional
        Default: the input's own order (``given``, when it has one), every memory and
        overlap heuristic that applies, then the solvers (unless ``solvers=False``).
    time_limit, workers, seed, deterministic
        Each solver's settings (default 10 s, 2 threads, seed 0, limits in seconds).
    deadline : float, optional
        A ``time.perf_counter()`` instant by which the comparison ends (wall-clock mode):
        each solver row gets at most ``time_limit`` and its share of the time left, and
        rows that find no time left are listed as not run.
    config : SolverConfig, optional
        ``time_limit``, ``workers``, ``seed``, ``deterministic`` and ``deadline`` as one
        object, instead of the keywords (giving both is an ``InputError``).
    device, profile : str
        Cost model for makespan and exposed communication (``h100``, ``a100``, ``cpu``,
        ``xla-approx`` or a file; default ``cpu`` for a module XLA:CPU optimized, else
        ``h100``), and measured op times.
    as_dataframe : bool, default False
        Return ``Comparison.to_pandas()`` instead of the ``Comparison``.

    Returns
    -------
    Comparison or pandas.DataFrame
        Each row's ``gap`` is ``(peak - bound) / peak`` against the best proven bound of all
        rows.

    Examples
    --------
    >>> import cpsched
    >>> g = cpsched.generators.random_layered(n=12, seed=3)
    >>> c = compare(g, ["xla-dfs", "cp"], time_limit=5)
    >>> [row["method"] for row in c.rows], c.rows[2]["gap"]
    (['given', 'xla-dfs', 'cp-memory'], {'static': 0.0})
    >>> compare(g, ["xla-dfs"], as_dataframe=True)[["method", "scenario"]].values.tolist()
    [['given', 'static'], ['xla-dfs', 'static']]
    """
    time_limit, workers, seed, deterministic, _, deadline = _one_way(
        config, time_limit, workers, seed, deterministic, False, deadline, DEFAULT_TIME_LIMIT
    )
    _check_solver_options(
        None, time_limit, workers, seed, deterministic=deterministic, solvers=solvers
    )
    deadline = _checked_deadline(deadline)
    if methods is not None:
        if isinstance(methods, str) or not isinstance(methods, Iterable):
            raise InputTypeError("methods must be a list of method names")
        methods = list(methods)  # a generator is read once, here
        if not all(isinstance(m, str) for m in methods):
            raise InputTypeError("methods must be a list of method names")
        if not methods:
            raise InputError("methods is empty: give method names, or None for every method")
        if not solvers and any(is_solver(m) for m in methods):
            raise InputError("solvers=False (--no-solver) and a solver among the methods: use one")
    g = read(graph, async_collectives=async_collectives)
    sc = scenarios_for(g, scenarios)
    names = _compare_methods(g, methods, solvers)
    device = device if device is not None else default_device(g)
    costs = _costs(g, sc, device, profile)
    results: dict[str, Result] = {}
    timelines: dict[str, Any] = {}
    errors: dict[str, str] = {}
    rows: list[str] = []
    if deterministic:
        deadline = None
    # every row's solver settings (its time limit is its share) and its options
    cfg = SolverConfig(
        time_limit=time_limit,
        workers=workers,
        seed=seed,
        deterministic=deterministic,
        deadline=deadline,
    )
    opts = dict(device=device, profile=profile)
    t_start = time.perf_counter()
    solvers_left = sum(is_solver(n) for n in names)
    not_run: list[str] = []
    allocation: dict[str, dict[str, dict[str, int]]] = {}
    # a signal stops the comparison after the row it cuts (marked interrupted), and the
    # command's hard stop coming after the rows (a loaded machine) does not throw them away:
    # the rows finished so far are kept
    with signals.keep_work():
        for name in names:
            row = ROW_NAMES.get(name, name)
            if signals.received() is not None:
                not_run.append(row)
                continue
            rows.append(row)
            if progress is not None:
                progress(row)
            limit = _row_time_limit(time_limit, deadline, solvers_left)
            if is_solver(name):
                solvers_left -= 1
            if limit <= 0:
                errors[row] = "not run: the time limit ran out"
                continue
            why = _row_would_overrun(name, g, limit, deadline, t_start)
            if why:
                errors[row] = f"not run: {why}"
                continue
            try:
                r = _compare_row(g, sc, name, cfg.with_(time_limit=limit), opts)
            except CpschedError as e:
                errors[row] = str(e)
                continue
            results[row] = r
            timelines[row] = simulate_timeline(g, r.order, costs, sc)
            # XLA's allocation figures of each row as it ends, so that the next rows' time
            # shares count them (rows of one order share one buffer assignment)
            _note_allocation(allocation, results, row)
        if solvers and methods is None and "cp-overlap" in results and signals.received() is None:
            _overlap_at_baselines(
                g, sc, results, timelines, errors, rows, costs, progress, cfg, opts
            )
        for row in results:
            if row not in allocation:
                _note_allocation(allocation, results, row)
        best, note = _best_bounds(g, sc, results, deadline)
    results = {k: r.with_bound(best) for k, r in results.items()}
    settings = _compare_settings(rows, sc, cfg, solvers, device, profile, async_collectives)
    if signals.received() is not None:
        # the row the signal cut is marked in its result; these never started
        settings["interrupted"] = {"not_run": not_run}
    unit = next(iter(timelines.values())).unit if timelines else "s"
    allocation = {row: a for row, a in allocation.items() if a}
    c = Comparison(g, sc, results, best, timelines, settings, errors, unit, note, allocation)
    return c.to_pandas() if as_dataframe else c


# ``compare`` solves cp-overlap again at the peak of at most this many baseline rows that
# used more memory than its default budget: timing rows are then compared at equal memory
MAX_EQUAL_MEMORY_ROWS = 4
# ...that used at least this much more memory (a few bytes more would repeat cp-overlap's row)
EQUAL_MEMORY_MARGIN = 0.01


def _overlap_at_baselines(
    g, sc, results, timelines, errors, rows, costs, progress, cfg: SolverConfig, opts
) -> None:
    """Rows ``cp-overlap@ROW``: cp-overlap with ROW's own peak as its budget, for each
    baseline row that had at least 1 % more memory than cp-overlap's default budget (the best
    memory-only peak), or any more and less exposed communication than cp-overlap, so every
    timing row has a solver row at its own memory beside it."""
    ov = results["cp-overlap"]
    held = ov.record.budget if isinstance(ov.record, TimedRecord) else None
    own = dict(ov.budget or held or ov.peak)  # what it was held to
    registry = load_all()

    def timing_first(row: str) -> int:  # the overlap heuristics are what this row is for
        m = registry.get(row)
        return 0 if m is not None and m.family == "overlap" else 1

    chosen: list[tuple[str, tuple[int, ...]]] = []
    for row in sorted(results, key=timing_first):
        if is_solver(row) or row.startswith("cp-"):
            continue
        peak = results[row].peak
        key = tuple(int(peak[n]) for n in sc.names)
        if any(peak[n] > own[n] for n in sc.names) and row in timelines:
            # a few bytes more than cp-overlap was held to, and it hides more: solved again
            # at that memory, or the table would compare the two at unequal memory
            mine, theirs = timelines["cp-overlap"], timelines[row]
            hides_more = bool((theirs.exposed_comm < mine.exposed_comm).any())
        else:
            hides_more = False
        if not hides_more and all(peak[n] <= own[n] * (1 + EQUAL_MEMORY_MARGIN) for n in sc.names):
            continue
        if any(
            all(abs(a - b) <= EQUAL_MEMORY_MARGIN * b for a, b in zip(key, other))
            for _, other in chosen
        ):
            continue  # about the memory of a row already chosen
        if len(chosen) >= MAX_EQUAL_MEMORY_ROWS:
            break
        chosen.append((row, key))
    # the rows share the time left (the first one took all of it, and the last rows of the
    # bundled demo were not run)
    for k, (row, key) in enumerate(chosen):
        if signals.received() is not None:
            break
        label = f"cp-overlap@{row}"
        rows.append(label)
        if progress is not None:
            progress(label)
        limit = _row_time_limit(cfg.time_limit, cfg.deadline, len(chosen) - k)
        why = _row_would_overrun("cp-overlap", g, limit, cfg.deadline, 0.0)
        if limit <= 0 or why:  # no time at all reads as such, not as "-0.0 s left"
            errors[label] = f"not run: {'the time limit ran out' if limit <= 0 else why}"
            break
        try:
            r = schedule(
                g,
                "cp-overlap",
                scenarios=sc,
                budget=list(key),
                config=cfg.with_(time_limit=limit),
                **opts,
            )
        except CpschedError as e:
            errors[label] = str(e)
            continue
        results[label] = r
        timelines[label] = simulate_timeline(g, r.order, costs, sc)


# A solver's own work before its search (its problem, warm start and checks), per op: a
# cp-overlap row at 10,000 ops took 1.4 s with no time to search on a loaded 2-core machine
SOLVER_START_SECONDS_PER_OP = 1e-4
# The heuristic rows (listed first) may take this share of a comparison's time: the rest is
# the solvers'
HEURISTICS_SHARE = 0.5


def _row_would_overrun(
    name: str, g: Graph, limit: float, deadline: float | None, t_start: float
) -> str:
    """Why row ``name`` is not run before ``deadline`` (empty: it is run): a heuristic that
    would end past its share of the time, a solver whose time is less than its own work
    before a search."""
    if deadline is None:
        return ""
    if is_solver(name):
        need = SOLVER_START_SECONDS_PER_OP * g.n_ops
        return (
            f"{format_seconds(limit)} left for it, less than its setup (about "
            f"{format_seconds(need)} at {g.n_ops} ops)"
            if limit < need
            else ""
        )
    guess = _heuristic_seconds(name, g)
    until = t_start + HEURISTICS_SHARE * (deadline - t_start)
    if time.perf_counter() + guess > until:
        return f"no time (about {format_seconds(guess)} at {g.n_ops} ops)"
    return ""


def _heuristic_seconds(name: str, g: Graph) -> float:
    """About how long heuristic ``name`` takes on ``g`` (0 for solvers and the given order,
    which keep to their limit): the rates the min-peak solver plans its warm start with."""
    if is_solver(name) or name == "given":
        return 0.0
    return g.n_ops * HEURISTIC_SECONDS_PER_OP.get(name, DEFAULT_SECONDS_PER_OP)


def _row_time_limit(time_limit: float, deadline: float | None, solvers_left: int) -> float:
    """A row's time limit: ``time_limit``, and no more than its share of what is left before
    ``deadline`` (the rows still to solve share it; a heuristic row needs none but time)."""
    if deadline is None:
        return float(time_limit)
    left = deadline - time.perf_counter()
    return min(float(time_limit), left / max(1, solvers_left))


@dataclass
class Frontier(JointFrontier):
    """The memory-time frontier of one graph (``frontier``): ``points`` (cp-joint at each
    budget) and ``baselines`` (every heuristic at its own peak), bytes and the cost model's
    time unit (``unit``; ``settings["model"]`` names the device model).

    ``records()`` gives flat rows (one per point or baseline and scenario),
    ``to_pandas()`` them as a DataFrame, ``table()`` the text the command line prints,
    ``plot(path)`` the figure, ``to_dict()`` the JSON."""

    def records(self) -> list[dict[str, Any]]:
        """One record per point or baseline and scenario: ``kind`` (``point`` /
        ``baseline``), ``method``, ``status``, ``scenario``, ``budget_bytes``, ``peak_bytes``,
        ``makespan``, ``makespan_bound``, ``exposed_comm`` (times in ``unit``)."""

        def at(v, n):
            return v.get(n) if isinstance(v, dict) else v

        out: list[dict[str, Any]] = []
        for kind, rows in (("point", self.points), ("baseline", self.baselines)):
            for row in rows:
                for n in self.scenarios:
                    out.append(
                        {
                            "kind": kind,
                            "method": row.get("method", "cp-joint"),
                            "status": row.get("status", "HEURISTIC"),
                            "scenario": n,
                            "budget_bytes": at(row.get("budget_bytes"), n),
                            "peak_bytes": at(row.get("peak_bytes"), n),
                            "makespan": at(row.get("makespan"), n),
                            "makespan_bound": at(row.get("makespan_bound"), n),
                            "exposed_comm": at(row.get("exposed_comm"), n),
                        }
                    )
        return out

    def to_pandas(self):
        """``records()`` as a pandas DataFrame (pandas comes with ortools)."""
        return _data_frame(self.records())

    def table(self) -> str:
        return format_frontier(self)

    def plot(self, path: str | os.PathLike, *, inputs: Sequence[str] = ()) -> str:
        """Makespan against the budget, with the bound and every heuristic (needs
        matplotlib), never over ``inputs``; returns ``path``."""
        path = arguments.text(os.fspath(path), "path")
        plot_frontier(
            self.points,
            self.baselines,
            path,
            title=f"{self.graph}: memory-time frontier (cp-joint)",
            unit=self.unit,
            inputs=tuple(inputs),
            model=str(self.settings.get("model", "")),
            scenario=self.scenarios[0] if len(self.scenarios) > 1 else None,
        )
        return path

    def __repr__(self) -> str:
        return self.table()


def format_frontier(f: JointFrontier) -> str:
    """Points and baselines as text, bytes and times with units (first scenario's figures);
    the time columns name the device model."""

    def first(v):
        return next(iter(v.values())) if isinstance(v, dict) else v

    rng = f.settings["budget_range"]
    model = f.settings.get("model", "cost model")
    multi = len(f.scenarios) > 1
    head = ["budget", "status", "peak", f"makespan ({model})", "bound", "exposed comm"]
    rows: list[list[str]] = []
    for p in f.points:
        if p.get("makespan") is None:
            rows.append([format_bytes(first(p["budget_bytes"])), p["status"], "no plan"])
            continue
        b = p.get("makespan_bound")
        rows.append(
            [
                format_bytes(first(p["budget_bytes"])),
                p["status"],
                format_bytes(first(p["peak_bytes"])),
                format_time(first(p["makespan"]), f.unit),
                format_time(first(b), f.unit) if b is not None else "-",
                format_time(first(p["exposed_comm"]), f.unit)
                + (" (plan of a tighter budget)" if "carried_from" in p else ""),
            ]
        )
    widths = [
        max(len(r[c]) for r in [head] + [r for r in rows if len(r) > 3]) for c in range(len(head))
    ]
    k = len(f.points)
    lines = [
        f"{f.graph}: memory-time frontier, {k} budget{'s' if k != 1 else ''} from "
        f"{format_bytes(first(rng['low']))} ({rng['low_source']}) to "
        f"{format_bytes(first(rng['high']))} ({rng['high_source']}), "
        f"{f.settings['time_limit_per_point']:g} s each",
        "  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip(),
    ]
    for cells in rows:
        lines.append("  ".join(x.ljust(w) for x, w in zip(cells, widths)).rstrip())
    lines.append(f"heuristics (their own peak, no budget; times: {model}):")
    for b in f.baselines:
        lines.append(
            f"  {b['method']:<16} peak {format_bytes(first(b['peak_bytes'])):>11}, makespan "
            f"{format_time(first(b['makespan']), f.unit)}, exposed comm "
            f"{format_time(first(b['exposed_comm']), f.unit)}"
        )
    if multi:  # points are kept by all scenarios together (weighted)
        lines.append(f"figures of scenario {f.scenarios[0]} of {len(f.scenarios)}; --json: all")
    lines.append(f"time {format_seconds(f.settings['seconds'])}")
    return "\n".join(lines)


def frontier(
    graph,
    *,
    points: int = DEFAULT_POINTS,
    scenarios=None,
    time_limit: float = DEFAULT_POINT_TIME_LIMIT,
    evict: bool = False,
    bandwidth: float | None = None,
    device: str | None = None,
    profile: str | None = None,
    workers: int = DEFAULT_WORKERS,
    seed: int = DEFAULT_SEED,
    deterministic: bool = False,
    async_collectives: bool = False,
    progress: Callable[[str], None] | None = None,
    deadline: float | None = None,
    config: SolverConfig | None = None,
) -> Frontier:
    """The memory-time frontier of ``graph``: ``cp-joint`` at ``points`` budgets from the
    least peak a plan reaches to the fastest order's peak (``time_limit`` seconds each, and
    with ``deadline``, a ``time.perf_counter()`` instant, no solve past it), with every
    heuristic's (peak, makespan); see ``cpsched.strategies.frontier``. ``deterministic``
    counts every solve's limit in work units (and drops ``deadline``), as in ``schedule``;
    ``config`` gives ``time_limit`` (per point), ``workers``, ``seed``, ``deterministic`` and
    ``deadline`` as one object instead of the keywords.

    Examples
    --------
    >>> import cpsched
    >>> f = frontier(cpsched.generators.random_layered(n=12, seed=3), points=3, time_limit=2)
    >>> [p["status"] != "ERROR" for p in f.points]
    [True, True, True]
    """
    time_limit, workers, seed, deterministic, _, deadline = _one_way(
        config, time_limit, workers, seed, deterministic, False, deadline, DEFAULT_POINT_TIME_LIMIT
    )
    _check_solver_options(None, time_limit, workers, seed, evict=evict, deterministic=deterministic)
    deadline = _checked_deadline(deadline)
    if deterministic:
        deadline = None  # limits are work units: the same points whatever the load
    if bandwidth is not None:
        arguments.number(bandwidth, "bandwidth")
    if arguments.integer(points, "points") < 2:
        raise InputError(f"--points must be at least 2 (got {points})")
    if points > MAX_FRONTIER_POINTS:
        raise LimitError(
            f"--points {points}: at most {MAX_FRONTIER_POINTS} budgets (each is a solve of "
            "up to the time limit)"
        )
    g = read(graph, async_collectives=async_collectives)
    sc = scenarios_for(g, scenarios)
    f = joint_frontier(
        g,
        sc,
        points=int(points),
        time_limit=float(time_limit),
        evict=evict,
        bandwidth=bandwidth,
        device=device if device is not None else default_device(g),
        profile=profile,
        progress=progress,
        cfg=SolverConfig(
            workers=int(workers),
            seed=int(seed),
            deterministic=bool(deterministic),
            deadline=None if deterministic else deadline,
        ),
    )
    return Frontier(**{k.name: getattr(f, k.name) for k in fields(f)})


def _compare_methods(g: Graph, methods: Iterable[str] | None, solvers: bool) -> list[str]:
    registry = load_all()
    names = ["given"] if g.original_order is not None else []
    if methods is not None:
        for m in methods:
            m = {"cp-memory": "cp"}.get(m, m)
            if m != "given":
                get_method(m)  # unknown names: one clear error before any work
                names.append(m)
        return names
    # order methods only: remat plans need a budget and answer a different question
    order_methods = [
        m for m in registry.values() if m.family in ("memory", "overlap", "solver") and m.applies(g)
    ]
    names += [m.name for m in order_methods if not is_solver(m.name)]
    if solvers:
        names += [m.name for m in order_methods if is_solver(m.name)]
    return names


def _costs(g: Graph, sc: Scenarios, device, profile):
    return estimate(g, load_device(device), sc, load_profile(profile) if profile else None)


def _check_result(result) -> None:
    if not isinstance(result, Result):
        raise InputTypeError(f"expected a Result, not {type(result).__name__}")


def timeline(result: Result, device: str | None = None, profile: str | None = None):
    """The cost model's timeline (makespan, exposed communication per scenario) of a result
    (of its main order; ``plan_timelines`` for a remat plan's clones and copies);
    ``device``: default ``cpu`` for a module XLA:CPU optimized, else ``h100``."""
    _check_result(result)
    device = device if device is not None else default_device(result.graph)
    return simulate_timeline(
        result.graph,
        result.order,
        _costs(result.graph, result.scenarios, device, profile),
        result.scenarios,
    )


def plan_timelines(
    result: Result, device: str | None = None, profile: str | None = None
) -> dict[str, Any]:
    """A remat plan's timeline per scenario (``{scenario: Timelines}``): the plan written
    into the graph (clones as ops, host copies as async copy pairs: ``plan_to_graph``),
    under the cost model (``device``: default ``cpu`` for a module XLA:CPU optimized, else
    ``h100``)."""
    _check_result(result)
    device = device if device is not None else default_device(result.graph)
    if result.plan is None:
        raise InputError(f"{result.method}: not a remat plan (use timeline)")
    plan, out = result.plan, {}
    for s, name in enumerate(result.scenarios.names):
        sc = result.scenarios.only(s)
        pg, order = plan_to_graph(plan.graph, plan.events[s])
        out[name] = simulate_timeline(pg, order, _costs(pg, sc, device, profile), sc)
    return out


__all__ = [
    "Result",
    "Comparison",
    "read",
    "schedule",
    "compare",
    "frontier",
    "Frontier",
    "simulate",
    "methods",
    "from_networkx",
    "from_jax",
    "from_torch",
    "scenarios_for",
    "budget_reference",
    "resolve_budget",
    "timeline",
    "plan_timelines",
    "memory_profile",
    "explain_peak",
    "format_peak_buffers",
    "format_frontier",
    "format_comparison",
    "Budget",
    "BudgetError",
    "known_lower_bound",
    "kept_budget",
    "INFEASIBLE",
    "OBJECTIVES",
    "PROBLEMS",
]


# -- writing ---------------------------------------------------------------------------------


@all_or_nothing()
def write(
    result: Result,
    output: str,
    source: str | None = None,
    *,
    async_collectives: bool = False,
    inputs: Sequence[str] = (),
    annotate: Mapping[str, Any] | None = None,
    as_hlo: bool | None = None,
) -> dict[str, Any]:
    """Write ``result`` as the command line does, never over ``source`` nor any of
    ``inputs`` (and only over a regular file, atomically). ``annotate``: extra top-level
    fields of the JSON written (e.g. ``{"interrupted": True}``). ``as_hlo``: write HLO
    (default: when ``source`` is an HLO file); without ``source`` the module is the one
    the graph was read from.

    HLO in (``source`` an HLO file): the module with every ordered computation re-sequenced
    (``is_scheduled=true``); for a remat plan, the module with the plan written in (and one
    module per bucket, and the plan JSON at ``OUTPUT.plan.json``), each read back and
    checked first. Otherwise the schedule JSON (or the plan JSON). All files or none:
    they are renamed into place together once every one is written. Returns ``written`` (the
    paths), ``data`` (the JSON written or its summary) and, for remat HLO, ``buckets``."""
    _check_result(result)
    arguments.text(output, "output")
    hlo = bool(source) and sniff_format(str(source)) == "hlo" if as_hlo is None else as_hlo
    if hlo and not source and result.graph.program is None:
        raise InputError(f"{result.graph.name} was not read from HLO: write a .json schedule")
    inputs = ((source,) if source else ()) + tuple(p for p in inputs if p)
    if result.plan is not None:
        data = remat_result_to_dict(result.plan)
        data.update(annotate or {})
        if "budget_reference" in result.record:
            data["budget_reference"] = result.record.budget_reference
        if hlo:
            written, buckets = write_remat_hlo(
                str(source) if source else result.graph.program,
                output,
                result.graph,
                result.scenarios,
                result.plan,
                result.method,
                data,
                inputs=inputs,
                # only where read split something: an already async module is written as is
                convert=convert_sync_collectives
                if async_collectives and result.graph.meta.get("async_collectives")
                else None,
            )
            return {"written": written, "data": data, "buckets": buckets}
        write_json(output, data, inputs=inputs)
        return {"written": [output], "data": data}
    if result.schedule is None:
        raise InputError(f"{result.method}: nothing to write")
    data = schedule_to_dict(result.schedule)
    if result.budget is not None:
        # what the schedule was held to, beside what it reached (peak_bytes)
        data["budget_bytes"] = dict(result.budget)
        if "budget_reference" in result.record:
            data["budget_reference"] = result.record.budget_reference
    data.update(annotate or {})
    if hlo:
        module = result.graph.program or read_hlo_module(str(source))
        if async_collectives and result.graph.meta.get("async_collectives"):
            text, note = _async_hlo_text(module, result)
            write_text(output, text, inputs=inputs)
            return {"written": [output], "data": data, "async": note}
        if all(n in result.orders for n in scheduled_computations(module)):
            # a sequence for every computation: is_scheduled=true, read back and re-simulated
            text = write_module_schedule(
                module, result.orders, result.scenarios, expected_peak=result.schedule.peak_bytes
            )
        else:
            text = write_hlo(module, dict(result.orders))
        write_text(output, text, inputs=inputs)
    else:
        write_json(output, data, inputs=inputs)
    return {"written": [output], "data": data}


def _async_hlo_text(module, result: Result) -> tuple[str, str]:
    """The module in ``result``'s order with each collective that ``async_collectives``
    split written as XLA's start/done pair (``cpsched.writers.hlo.async_module_text``), read
    back, validated and re-simulated before anything is written; and a one-line note."""
    w = async_module_text(module, result.graph, result.order)
    _back, peaks = verify_async_module(w.text, w, result.scenarios)
    # the split graph gives a start only the collective's result; XLA's start also holds
    # its tuple table (and collective-permute's two u32 contexts), a few bytes more
    same = all(int(p) == int(result.peak[n]) for p, n in zip(peaks, result.scenarios.names))
    peak_text = (
        "same peak"
        if same
        else "peak "
        + ", ".join(f"{n} {format_bytes_exact(p)}" for n, p in zip(result.scenarios.names, peaks))
        + " (start tuple tables and contexts included)"
    )
    return w.text, (
        f"{len(w.pairs)} collective(s) written as async start/done pairs "
        f"({len(w.wrapped)} as async-start calling a wrapped computation); read "
        f"back: order valid, {peak_text}"
    )


__all__ += ["write", "resolve_method"]
