"""The one CP-SAT runner every model uses: parameters, limits, determinism, hints, progress,
the solver's log, interruption and the best solution found so far.

``solve(model, config)`` runs a built ``cp_model.CpModel`` and returns a ``Run``: the status
(one of the names below), the solver to read values from, objective and bound, statistics,
and whether the search was interrupted.

**Determinism** (one meaning for every model and pipeline): with
``SolverConfig.deterministic=True`` the same input, options and seed give the same result
whatever the machine and its load. Every CP-SAT run then uses one worker and stops on
CP-SAT's deterministic time, ``DET_PER_SECOND`` units per second of the time limit it was
given (the wall-clock limit, ``DET_WALL_FACTOR`` times longer, only guards against hangs),
and pipelines that split their time between phases count it on a ``Clock`` that advances by
the budget each phase was handed rather than by the wall clock. ``time_limit`` is then an
approximate budget. With ``deterministic=False`` (the default) the limits are wall-clock
seconds and ``workers`` CP-SAT workers race: faster, but results may vary between runs.

**Deadline**: ``SolverConfig.deadline`` (a ``time.perf_counter()`` instant) ends every run
and every ``Clock`` made from the config, whatever their own limits (wall-clock mode): a
command's time limit counts from its start, and every phase of every pipeline stays under
it.

**Interruption**: a SIGINT (Ctrl-C) or SIGTERM while CP-SAT searches stops that search as a
time limit would; the run keeps the best solution found so far and reports
``interrupted=True``, and ``interrupted()`` stays true until the outermost
``interruptible()`` block ends (for a command, until the command ends:
``cpsched.core.signals``), so that a pipeline skips its remaining phases and returns its
best result. A second signal raises ``KeyboardInterrupt``. Interruption works in the main
thread only (elsewhere the signal is left alone).

**Log**: ``log=True`` writes CP-SAT's search log to stderr (never to stdout, which may carry
``--json`` output).
"""

from __future__ import annotations

import contextlib
import functools
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from ortools.sat.python import cp_model

from cpsched.analysis.schedule import FALLBACK, FEASIBLE, HEURISTIC, INFEASIBLE, OPTIMAL
from cpsched.core import signals
from cpsched.core.process import process_start

# Statuses of a run: CP-SAT's names (OPTIMAL, FEASIBLE and INFEASIBLE are shared with the
# schedule statuses of cpsched.analysis.schedule, which also has HEURISTIC and FALLBACK).
UNKNOWN = "UNKNOWN"
MODEL_INVALID = "MODEL_INVALID"
SOLVED = (OPTIMAL, FEASIBLE)

__all__ = [
    "SolverConfig",
    "Run",
    "Clock",
    "solve",
    "configure",
    "set_hints",
    "interruptible",
    "interrupted",
    "stoppable",
    "process_start",
    "OPTIMAL",
    "FEASIBLE",
    "INFEASIBLE",
    "UNKNOWN",
    "MODEL_INVALID",
    "HEURISTIC",
    "FALLBACK",
    "SOLVED",
    "DET_PER_SECOND",
    "status_name",
]

# Deterministic-time units per second of budget (one unit took 2-7 s of wall time on a
# loaded 2-core machine).
DET_PER_SECOND = 0.4
# Deterministic mode: wall-clock guard = this many times the budget (at least 30 s).
DET_WALL_FACTOR = 20.0
# Smallest time limit handed to CP-SAT.
MIN_SECONDS = 0.01


@dataclass
class SolverConfig:
    """How CP-SAT runs, and the one object that carries a call's solver settings from the
    top: the command line builds it once from ``--time-limit``, ``--workers``, ``--seed``,
    ``--deterministic``, ``--log`` and the command's deadline, ``cpsched.schedule``,
    ``compare`` and ``frontier`` take it as ``config=`` (or build it from their keywords),
    and a phase that needs less time or another seed makes its own with ``with_``. There
    is no deadline anywhere else. ``presolve=False`` turns CP-SAT's presolve off (the remat
    models, where it costs more than the search); ``extra`` sets any other
    ``SatParameters`` field."""

    time_limit: float = 10.0
    workers: int = 2
    seed: int = 0
    deterministic: bool = False
    log: bool = False
    presolve: bool = True
    extra: dict = field(default_factory=dict)
    # a ``time.perf_counter()`` instant no run goes past, whatever its own limit (wall-clock
    # mode only): the command's start plus its time limit, so that reading the input and
    # every phase of a pipeline count against the one limit the user gave
    deadline: float | None = None

    def with_(self, **kw: Any) -> SolverConfig:
        return replace(self, **kw)

    def seconds_left(self) -> float:
        """Seconds to the deadline (infinite without one, or in deterministic mode)."""
        if self.deadline is None or self.deterministic:
            return float("inf")
        return self.deadline - time.perf_counter()

    def cap(self, seconds: float) -> float:
        """``seconds``, cut to what is left before the deadline (never below 0)."""
        return max(0.0, min(float(seconds), self.seconds_left()))


def configure(solver: cp_model.CpSolver, cfg: SolverConfig, time_limit: float) -> None:
    """Set ``solver``'s parameters from ``cfg`` for a run of ``time_limit`` seconds."""
    prm = solver.parameters
    prm.num_workers = max(1, int(cfg.workers))
    prm.random_seed = int(cfg.seed)
    if cfg.deterministic:
        # one worker, stopped on deterministic time: the same search whatever the load. One
        # worker did more search per deterministic unit than an interleaved 2-worker
        # portfolio on the test graphs (4.8k vs 0 conflicts for 0.6 units).
        prm.num_workers = 1
        prm.max_deterministic_time = max(MIN_SECONDS, DET_PER_SECOND * float(time_limit))
        prm.max_time_in_seconds = max(30.0, DET_WALL_FACTOR * float(time_limit))
    else:
        prm.max_time_in_seconds = max(MIN_SECONDS, float(time_limit))
    # CP-SAT's own SIGINT handler would swallow the signal (and crashes outside the main
    # thread); ``interruptible`` handles it instead
    prm.catch_sigint_signal = False
    if not cfg.presolve:
        prm.cp_model_presolve = False
    prm.log_search_progress = bool(cfg.log)
    if cfg.log:
        prm.log_to_stdout = False
    for k, v in cfg.extra.items():
        setattr(prm, k, v)


def status_name(code: Any) -> str:
    """CP-SAT's status code as one of the names above."""
    return {
        cp_model.OPTIMAL: OPTIMAL,
        cp_model.FEASIBLE: FEASIBLE,
        cp_model.INFEASIBLE: INFEASIBLE,
        cp_model.UNKNOWN: UNKNOWN,
        cp_model.MODEL_INVALID: MODEL_INVALID,
    }.get(code, str(code))


@dataclass
class Run:
    status: str  # OPTIMAL | FEASIBLE | INFEASIBLE | UNKNOWN | MODEL_INVALID
    solver: cp_model.CpSolver  # read the solution with solver.value(...)
    objective: float | None  # of the best solution (None without one)
    bound: float | None  # proven bound of the objective (None if INFEASIBLE)
    seconds: float
    interrupted: bool = False  # stopped by SIGINT (best solution so far kept)
    stopped_at_target: bool = False  # stopped because the objective reached ``stop_at``
    stats: dict = field(default_factory=dict)

    @property
    def solved(self) -> bool:
        """A solution is available (optimal or not)."""
        return self.status in SOLVED

    @property
    def optimal(self) -> bool:
        return self.status == OPTIMAL

    def value(self, x: Any) -> int:
        return self.solver.value(x)

    def boolean_value(self, x: Any) -> bool:
        return self.solver.boolean_value(x)


Progress = Callable[[float, float, float, float], None]


def gap(objective: float, bound: float) -> float:
    """Relative gap ``|objective - bound| / |objective|`` (0 when the objective is 0)."""
    return abs(objective - bound) / abs(objective) if objective else 0.0


class _Callback(cp_model.CpSolverSolutionCallback):
    def __init__(self, on_solution, progress: Progress | None, stop_at: float | None):
        super().__init__()
        self.on_solution, self.progress, self.stop_at = on_solution, progress, stop_at
        self.t0 = time.perf_counter()
        self.count = 0
        self.hit_target = False

    def on_solution_callback(self) -> None:
        self.count += 1
        obj, bound = self.objective_value, self.best_objective_bound
        if self.on_solution is not None:
            self.on_solution(obj, bound)
        if self.progress is not None:
            try:
                self.progress(obj, bound, gap(obj, bound), time.perf_counter() - self.t0)
            except Exception:  # noqa: BLE001 - a progress display must never break a solve
                pass
        if self.stop_at is not None and obj <= self.stop_at:
            self.hit_target = True
            self.stop_search()


def solve(
    model: cp_model.CpModel,
    cfg: SolverConfig,
    time_limit: float | None = None,
    *,
    on_solution: Callable[[float, float], None] | None = None,
    on_bound: Callable[[float], None] | None = None,
    progress: Progress | None = None,
    stop_at: float | None = None,
) -> Run:
    """Run ``model`` under ``cfg`` (``time_limit`` overrides ``cfg.time_limit``).

    ``on_solution(objective, bound)`` and ``progress(objective, bound, gap, elapsed)`` are
    called on every improving solution, ``on_bound(bound)`` when the proven bound moves;
    ``stop_at`` stops the search once a (minimised) objective is at or below it.
    """
    t0 = time.perf_counter()
    solver = cp_model.CpSolver()
    # the deadline cuts every run short, whatever limit its phase computed
    limit = cfg.time_limit if time_limit is None else time_limit
    configure(solver, cfg, limit if cfg.deterministic else cfg.cap(limit))
    if cfg.log:
        solver.log_callback = _log_to_stderr
    if on_bound is not None:
        solver.best_bound_callback = on_bound
    cb = _Callback(on_solution, progress, stop_at)
    with interruptible(), _stop_on_sigint(solver) as stop:
        code = solver.solve(model, cb)
    status = status_name(code)
    objective = bound = None
    if status in SOLVED:
        objective, bound = solver.objective_value, solver.best_objective_bound
    elif status == UNKNOWN:
        bound = solver.best_objective_bound
    stats = {
        "conflicts": solver.num_conflicts,
        "branches": solver.num_branches,
        "wall": solver.wall_time,
        "solutions": cb.count,
        "deterministic_time": solver.deterministic_time,
    }
    return Run(
        status,
        solver,
        objective,
        bound,
        time.perf_counter() - t0,
        interrupted=stop["interrupted"],
        stopped_at_target=cb.hit_target,
        stats=stats,
    )


def set_hints(model: cp_model.CpModel, pairs: Iterable[tuple[Any, Any]]) -> int:
    """Replace ``model``'s hints by ``(variable, value)`` pairs, each variable once (the
    first value given wins; constants are skipped). Returns how many were set."""
    model.clear_hints()
    seen: set[int] = set()
    for var, val in pairs:
        idx = getattr(var, "index", None)
        if idx is None or idx in seen:
            continue
        seen.add(idx)
        model.add_hint(var, val)
    return len(seen)


def _log_to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# -- interruption ------------------------------------------------------------------------------


def interrupted() -> bool:
    """A signal arrived in the current command (or outermost ``interruptible`` block)."""
    return signals.received() is not None


def interruptible() -> contextlib.AbstractContextManager[None]:
    """Inside this block a first SIGINT or SIGTERM only sets ``interrupted()`` (and stops a
    running CP-SAT search); a second one raises ``KeyboardInterrupt``. Blocks nest
    (``cpsched.core.signals.keep_work``)."""
    return signals.keep_work()


def stoppable(fn: Callable) -> Callable:
    """Decorator: run ``fn`` inside ``interruptible()`` (a pipeline's entry point)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with interruptible():
            return fn(*args, **kwargs)

    return wrapper


@contextlib.contextmanager
def _stop_on_sigint(solver: cp_model.CpSolver) -> Iterator[dict]:
    """While CP-SAT runs (the main thread inside C++, where Python handlers cannot run), a
    watcher thread reads the signal wake-up fd and stops the search on SIGINT or SIGTERM."""
    state = {"interrupted": interrupted()}
    if threading.current_thread() is not threading.main_thread():
        yield state
        return
    rd, wr = socket.socketpair()
    wr.setblocking(False)
    try:
        old_fd = signal.set_wakeup_fd(wr.fileno(), warn_on_full_buffer=False)
    except ValueError:
        rd.close()
        wr.close()
        yield state
        return
    done = threading.Event()

    def watch() -> None:
        while True:
            try:
                data = rd.recv(64)
            except OSError:
                return
            if done.is_set() or not data:
                return
            if any(sig in data for sig in signals.HANDLED):
                state["interrupted"] = True
                solver.stop_search()

    th = threading.Thread(target=watch, name="cp-sat-sigint", daemon=True)
    th.start()
    try:
        yield state
    finally:
        done.set()
        signal.set_wakeup_fd(old_fd)
        try:
            wr.send(b"\0")
        except OSError:
            pass
        th.join(1.0)
        rd.close()
        wr.close()
        state["interrupted"] = state["interrupted"] or interrupted()


# -- time --------------------------------------------------------------------------------------


class Clock:
    """Time left of a pipeline's budget. Wall-clock seconds normally; in deterministic mode
    the sum of the budgets handed to phases (``spend``), so that how the time is split does
    not depend on the machine. ``left()`` is 0 once the run was interrupted. In wall-clock
    mode the budget ends at ``deadline`` (``SolverConfig.deadline``, a ``perf_counter``
    instant: the command's start plus its time limit) if that comes first."""

    def __init__(
        self,
        time_limit: float,
        deterministic: bool = False,
        t0: float | None = None,
        deadline: float | None = None,
    ):
        self.t0 = time.perf_counter() if t0 is None else t0
        self.limit = float(time_limit)
        if not deterministic and deadline is not None:
            self.limit = max(0.0, min(self.limit, float(deadline) - self.t0))
        self.deterministic = bool(deterministic)
        self.spent = 0.0

    @classmethod
    def of(cls, cfg: SolverConfig, time_limit: float | None = None, t0: float | None = None):
        """A clock of ``time_limit`` (default ``cfg.time_limit``) under ``cfg``'s mode and
        deadline."""
        limit = cfg.time_limit if time_limit is None else time_limit
        return cls(limit, cfg.deterministic, t0, cfg.deadline)

    def now(self) -> float:
        return self.t0 + self.spent if self.deterministic else time.perf_counter()

    @property
    def deadline(self) -> float:
        return self.t0 + self.limit

    def left(self) -> float:
        if interrupted():
            return 0.0
        return self.deadline - self.now()

    def spend(self, seconds: float) -> None:
        """A phase was given ``seconds`` (counted in deterministic mode only)."""
        if self.deterministic:
            self.spent += max(0.0, float(seconds))

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0
