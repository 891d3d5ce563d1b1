"""What each method family reports beyond a ``Result``'s own fields, as typed records.

A method returns its extra figures as a mapping (``Schedule.info``, ``RematResult.info``);
``record_for`` turns that mapping into the record of the method's family once, where the
result is made (``cpsched.api``), and everything above reads the record's fields. A
record's ``to_dict()`` is the JSON view: the same keys, values and key order the method
reported, which is what ``--json`` and the schedule files write (``Result.info`` is that
view, read-only).

Vocabulary (one meaning per name):

- **problem**: what the user asks to solve, ``schedule(objective=...)`` / ``--objective``
  (``weighted``, ``minimax``, ``lexicographic``, ``budget``, ``overlap``, ``distance``,
  ``remat``, ``time``: ``cpsched.api.PROBLEMS``). The option keeps its name for users.
- **objective**: the quantity a method minimizes (``OverlapRecord.objective``:
  ``makespan`` or ``distance``; ``JointRecord.objective``: ``time``, the makespan of the
  plan).
- **scenario_weighting**: how the scenarios' figures are combined (``weighted``,
  ``minimax``, ``lexicographic``; cp's ``budget`` mode is the peak under a budget). The
  JSON keeps its format-1 keys: ``objective`` for cp (``MinPeakRecord``) and
  ``scenario_objective`` for cp-overlap and cp-joint.
- **objective_value** / **objective_bound**: the solver's value of its objective and the
  bound it proved (``MinPeakRecord``).

Keys a record type does not name are kept in ``extra`` (nothing a method reports is
lost); ``tests/test_records.py`` checks that the methods report none on its inputs.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, ClassVar

# the record's own bookkeeping, never a reported key
_OWN = ("module", "extra", "key_order")


@dataclass(frozen=True)
class ModuleRecord:
    """A method run on every computation of an HLO module (``cpsched.strategies.module``)."""

    # per computation: name, ops, method, status, peak and bound, seconds
    computations: list[Mapping[str, Any]] | None = None
    # cp kept the module's own orders where XLA allocated less for them
    kept_input_orders: bool | None = None
    # the module's peak under its input orders, per scenario
    input_peak_bytes: Mapping[str, int] | None = None
    # the entry computation's own message, where the module's replaced it
    entry_message: str | None = None
    # a module-level choice (``xla-default``): the one selected, each one's module peak
    choice: Mapping[str, Any] | None = None
    # cp's search among orders of no higher peak judged by XLA's allocation
    allocation_search: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Record(Mapping[str, Any]):
    """Figures every family may report. Read the fields; ``to_dict()`` (and the record as a
    read-only mapping) is the JSON view, in the order the method reported the keys."""

    # why the result is what it is (a fallback, a time limit), for the user
    message: str | None = None
    # a signal stopped the search: the best answer found so far
    interrupted: bool | None = None
    # why the lower bound is weak (the minimum-cut bound skipped, the solver not started)
    lower_bound_note: str | None = None
    weak_bound: str | None = None
    # a percentage budget: the text given, what it is a share of, that peak in bytes
    budget_reference: Mapping[str, Any] | None = None
    # where the method ran on a whole HLO module
    module: ModuleRecord | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    key_order: tuple[str, ...] = ()

    # JSON key -> field name, where they differ (format-1 keys kept, see the module doc)
    JSON_KEYS: ClassVar[Mapping[str, str]] = {}

    def to_dict(self) -> dict[str, Any]:
        """The JSON view: every reported key, in the order reported."""
        return {k: self[k] for k in self.key_order}

    def __getitem__(self, key: str) -> Any:
        if key not in self.key_order:
            raise KeyError(key)
        name = self.JSON_KEYS.get(key, key)
        if name in _field_names(type(self)) and name not in _OWN:
            return getattr(self, name)
        if self.module is not None and name in _field_names(ModuleRecord):
            return getattr(self.module, name)
        return self.extra[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.key_order)

    def __len__(self) -> int:
        return len(self.key_order)

    @classmethod
    def from_info(cls, info: Mapping[str, Any]) -> Record:
        """The record of a method's reported mapping (keys it does not name go to
        ``extra``)."""
        own = _field_names(cls)
        mod = _field_names(ModuleRecord)
        values: dict[str, Any] = {}
        module: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, v in info.items():
            name = cls.JSON_KEYS.get(key, key)
            if name in own and name not in _OWN:
                values[name] = v
            elif name in mod:
                module[name] = v
            else:
                extra[key] = v
        return cls(
            **values,
            module=ModuleRecord(**module) if module else None,
            extra=extra,
            key_order=tuple(info),
        )

    def view(self) -> Mapping[str, Any]:
        """``to_dict()`` as a read-only mapping."""
        return MappingProxyType(self.to_dict())


@dataclass(frozen=True)
class MinPeakRecord(Record):
    """``cp``: the min-peak portfolio (``cpsched.strategies.min_peak``)."""

    JSON_KEYS: ClassVar[Mapping[str, str]] = {"objective": "scenario_weighting"}

    # weighted | minimax | lexicographic | budget (JSON key ``objective``)
    scenario_weighting: str | None = None
    # the solver's objective value and proven bound (scaled bytes), and their gap
    objective_value: float | None = None
    objective_bound: float | None = None
    gap: float | None = None
    # each heuristic's peak per scenario, and the best of them
    baselines: Mapping[str, list[int]] | None = None
    best_heuristic: str | None = None
    seed: int | None = None
    deterministic: bool | None = None
    # what produced the order (``cp-sat``, ``exact``, ``heuristic:NAME``...)
    engine: str | None = None
    # each phase: its name, seconds, clock limit, what it found or skipped
    phases: list[Mapping[str, Any]] | None = None


@dataclass(frozen=True)
class TimedRecord(Record):
    """What the families that time an order report alike (cp-overlap, cp-joint): the
    objective, the scenario weighting, and per scenario the makespan and the exposed
    communication in ``unit`` (the cost model's time unit), within ``budget`` bytes."""

    JSON_KEYS: ClassVar[Mapping[str, str]] = {"scenario_objective": "scenario_weighting"}

    objective: str | None = None  # cp-overlap: makespan | distance; cp-joint: time
    scenario_weighting: str | None = None  # JSON key ``scenario_objective``
    unit: str | None = None
    budget: Mapping[str, int] | None = None
    makespan: Mapping[str, float] | None = None
    exposed_comm: Mapping[str, float] | None = None
    chosen: str | None = None  # the candidate returned
    solver_status: str | None = None
    model: Mapping[str, Any] | None = None  # the CP model's size and runs
    errors: Mapping[str, str] | None = None  # candidates that failed, and why


@dataclass(frozen=True)
class OverlapRecord(TimedRecord):
    """``cp-overlap``: collective overlap under a memory budget."""

    comm_streams: int | None = None
    budget_source: str | None = None
    compute_time: Mapping[str, float] | None = None
    makespan_lower_bound: Mapping[str, float] | None = None
    exposed_comm_lower_bound: Mapping[str, float] | None = None
    exposed_gap: Mapping[str, float] | None = None
    lower_bound_kind: Mapping[str, str] | None = None
    distance: int | None = None
    # the heuristic that hinted the solver, every candidate
    hint: Mapping[str, Any] | None = None
    candidates: list[Mapping[str, Any]] | None = None
    overlap_limit: Mapping[str, Any] | None = None
    # each async pair's start, done and distance before and after
    pairs: list[Mapping[str, Any]] | None = None


@dataclass(frozen=True)
class RematHeuristicRecord(Record):
    """A remat / offload heuristic (``remat-xla``, ``-span``, ``-sqrt``, ``-dtr``,
    ``-offload``): its own search figures."""

    iterations: int | None = None
    chain_depth: int | None = None
    greedy_clones: int | None = None
    k: int | None = None
    stashed: int | None = None
    evictions: int | None = None
    improved: int | None = None
    rounds: int | None = None


@dataclass(frozen=True)
class RematRecord(RematHeuristicRecord):
    """``cp-remat`` and ``remat-fixed-order``: the plan searched with the order (its answer
    may be a baseline's plan: ``from_baseline``, with that heuristic's figures)."""

    # the least peak any plan reaches, per scenario (no plan goes below it)
    proven_min_bytes: Mapping[str, int] | None = None
    added_time_lower_bound: list[float] | None = None
    added_time_lower_bound_pct: list[float] | None = None
    meets_lower_bound: bool | None = None
    model_optimal: bool | None = None
    min_peak_status: str | None = None
    # the peak of each order tried, and the order the plan is on
    order_peaks: Mapping[str, list[int]] | None = None
    order_from: str | None = None
    baselines: Mapping[str, Any] | None = None
    baseline_errors: Mapping[str, str] | None = None
    cp: Mapping[str, Any] | None = None
    cp_fixed_status: str | None = None
    cp_joint_status: str | None = None
    from_baseline: str | None = None
    breakpoints: Any = None
    timings: Mapping[str, float] | None = None


@dataclass(frozen=True)
class JointRecord(TimedRecord):
    """``cp-joint``: order, overlap and remat together, least time within a budget."""

    exposed_copy: Mapping[str, float] | None = None
    recompute: Mapping[str, float] | None = None
    peak_bytes: Mapping[str, int] | None = None
    makespan_bound: Mapping[str, float] | None = None
    weighted_bound: float | None = None
    bound_scope: str | None = None
    budget_free_bound: Mapping[str, float] | None = None
    memory_cut: Any = None
    memory_cut_bound: Mapping[str, float] | None = None
    no_memory: Any = None
    proven_min_bytes: Mapping[str, int] | None = None
    # the separate methods in sequence (order, overlap, remat), each row's figures
    sequential: list[Mapping[str, Any]] | None = None
    note: str | None = None


# the record type of each method, by name; other methods by family (``record_for``)
RECORD_TYPES: Mapping[str, type[Record]] = {
    "cp": MinPeakRecord,
    "cp-overlap": OverlapRecord,
    "cp-remat": RematRecord,
    "remat-fixed-order": RematRecord,
    "cp-joint": JointRecord,
}


def record_for(method: str, family: str, info: Mapping[str, Any]) -> Record:
    """The typed record of what ``method`` (of ``family``) reported in ``info``."""
    cls = RECORD_TYPES.get(method) or (RematHeuristicRecord if family == "remat" else Record)
    return cls.from_info(info)


def _field_names(cls: type) -> frozenset[str]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = frozenset(f.name for f in fields(cls))
    return names


_FIELDS: dict[type, frozenset[str]] = {}
