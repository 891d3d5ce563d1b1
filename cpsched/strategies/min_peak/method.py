"""CP-SAT minimum-peak ordering across shape scenarios, with proofs.

``solve(graph, scenarios, ...)`` returns a ``Schedule`` whose order is shared by every
scenario, with the exact simulated peak and a proven lower bound per scenario.

Objectives (``objective=``):

- ``weighted`` (default): minimise ``sum_s weight_s * peak_s``;
- ``minimax``: minimise ``max_s peak_s / lb_s`` with ``lb_s`` the static lower bound of
  scenario ``s`` (``memory.lower_bound``), i.e. the worst relative distance to a bound;
- ``lexicographic``: minimise the peak of the largest scenario (largest lower bound
  first), then, with that one held at its best value, the next, and so on;
- ``budget``: every scenario's peak must fit its budget (``budget=`` one number for all, a
  sequence, or a ``{name: bytes}`` map; giving ``budget`` selects this mode). The order
  minimises ``max_s peak_s / budget_s``, so the result says how far inside (< 1) or outside
  (> 1) the budgets the best order is; when the proven bound of that ratio is above 1 the
  status is ``INFEASIBLE`` and the message gives, per scenario, the budget, the best peak
  and the proven minimum.

Pipeline (each step stops as soon as the gap is closed):

1. heuristics: the graph's own order, a greedy (``cpsched.strategies.min_peak.greedy``, linear),
   the registered memory heuristics (``cpsched.methods``, cheapest first, each only if its
   expected time fits) and a beam search (up to ``DENSE_MAX_OPS`` ops); the best one is
   the hint and the floor of the result: the returned order is never worse;
2. lower bounds: per-op forced-live bytes (``Problem.lower_bound``);
3. decomposition at cut points (``cpsched.strategies.min_peak.decompose``) for objectives that are a max
   over steps (one scenario, minimax, budget): segments are solved independently;
4. per problem: exact best-first search over downsets (``cpsched.strategies.min_peak.exact``), then the
   CP-SAT model (``cpsched.cp.memory.solve``: positions + cumulative or per-op memory rows,
   hinted, with the best bound as the peak's lower bound), then windowed refinement of
   the best order (``cpsched.strategies.min_peak.windows``), then projection lower bounds
   (``cpsched.strategies.min_peak.projection``); above ``DENSE_MAX_OPS`` ops only the large-neighbourhood
   search (``cpsched.strategies.min_peak.lns``: windows at a cost independent of the graph's size);
5. the final order is re-checked with the exact simulator (``make_schedule``).

Statuses: ``OPTIMAL`` (objective equals its proven bound), ``FEASIBLE`` (the solvers
improved on the best heuristic, gap in ``info``), ``HEURISTIC_FALLBACK`` (nothing better than
the best heuristic in time: that order is returned, with a message), ``INFEASIBLE`` (budget
mode, proven). ``info`` holds ``objective``, ``objective_value``, ``objective_bound``,
``gap``, ``message``, ``baselines`` (each heuristic's peaks), ``phases`` and
``engine``.

Progress: ``progress(objective, bound, gap, elapsed)`` is called whenever the best objective
or the proven bound moves (objective in bytes for one scenario; ``gap`` relative to the
objective; ``elapsed`` seconds): the command line prints it as one updating line.
``log=True`` writes CP-SAT's own search log to stderr.

Time: every phase gets its deadline from one ``Clock``, which ends at ``deadline`` where
one is given (``SolverConfig.deadline``: the command line's time limit counts from the
process's start, reading and writing included); ``info['phases']`` records the clock and
each phase's deadline and outcome.

Determinism and interruption follow ``cpsched.cp.runtime``: with ``deterministic=True`` every
limit is counted in work units (search expansions, CP-SAT deterministic time on one worker)
instead of seconds, so the same input and seed give a byte-identical order and
``time_limit`` is only an approximate budget; a SIGINT stops the running phase, skips the
others and returns the best order found so far with ``info['interrupted'] = True``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cpsched.analysis.memory import lower_bound as static_lower_bound
from cpsched.analysis.memory import peak as simulate_peak
from cpsched.analysis.schedule import (
    FALLBACK,
    FEASIBLE,
    INFEASIBLE,
    OPTIMAL,
    Schedule,
    make_schedule,
)
from cpsched.analysis.validate import validate_order
from cpsched.core.errors import InputError
from cpsched.core.graph import Graph
from cpsched.core.scenarios import Scenarios, resolve_budget, static
from cpsched.core.units import format_bytes_exact
from cpsched.cp.memory.bounds import order_split_bound, pair_bound
from cpsched.cp.memory.objectives import RES
from cpsched.cp.memory.problem import Problem, from_graph
from cpsched.cp.memory.scaling import make_scale
from cpsched.cp.memory.solve import ModelOptions, ObjectiveSpec, build
from cpsched.cp.memory.solve import run as run_cpsat
from cpsched.cp.runtime import (
    UNKNOWN,
    Clock,
    SolverConfig,
    interrupted,
    stoppable,
)
from cpsched.methods import load_all, register
from cpsched.strategies.min_peak import decompose as D
from cpsched.strategies.min_peak.exact import beam, best_first
from cpsched.strategies.min_peak.greedy import greedy
from cpsched.strategies.min_peak.lns import lns
from cpsched.strategies.min_peak.projection import projection_bound
from cpsched.strategies.min_peak.windows import refine

OBJECTIVES = ("weighted", "minimax", "lexicographic", "budget")
# weighted objective over several buckets: share of the time spent on each bucket alone
BUCKET_SHARE = 0.3

# Work-unit rates used in deterministic mode (calibrated on a 2-core machine).
EXPANSIONS_PER_SECOND = 20_000
# Problems above this many ops skip the whole-problem CP-SAT model (windows instead);
# above CP_FULL_SHARE_OPS it gets a smaller share of the time.
CP_MAX_OPS = 1500
CP_FULL_SHARE_OPS = 200
# Windows in a row without improvement before the refinement phase hands its time on, and
# how many starting orders (the best ones, by the objective) the refinement tries.
WINDOW_PATIENCE = 40
WINDOW_STARTS = 3
# Case splits (``cuts.order_split_bound`` for half, then ``cuts.pair_bound``): share of the
# bound phase's time, and the pairs tried in deterministic mode (RLG n1000: 528 pairs in
# about 2 s)
PAIR_SHARE = 0.25
PAIR_DET_PAIRS = 200
# cuts of the order split over the top ops (``cuts.order_split_bound``) in deterministic mode
SPLIT_DET_CUTS = 1000
# Time of the per-op minimum-cut bounds, per op squared and scenario (layered graphs on a
# loaded 2-core machine: 0.5 s at 500 ops, 1.9 s at 1,000), and the most of the time limit
# they may take before the solve skips them
CUT_SECONDS_PER_OP2 = 2e-6
CUT_TIME_SHARE = 0.2
# Beam search warm start: deterministic width (for 250 ops; scaled by 250/n), and in normal
# mode the share of the time limit it may use and its largest width.
BEAM_WIDTH = 256
BEAM_SHARE = 0.12
BEAM_MAX_WIDTH = 2000
# Time to build the whole-problem CP-SAT model, per op squared (layered graphs on a loaded
# 2-core machine: 0.23 s at 250 ops, 0.88 s at 500, 5.6 s at 1,000)
CP_BUILD_SECONDS_PER_OP2 = 4e-6
# Large-neighbourhood search (problems above DENSE_MAX_OPS ops): window width and the time
# each window's exact search may take (measured on a 10k-op layered graph, 20 s: widths
# 24/32/40 with 0.2/0.3/0.2 s per window gave peaks 12.3 / 10.7 / 10.9 % below the greedy)
LNS_WIDTH = 24
LNS_PER_WINDOW = 0.2
# Time kept for the final exact re-check of the result, per op (on top of 2 % of the limit,
# at most 0.5 s): 1M ops took about 13 s on a loaded 2-core machine
FINISH_SECONDS_PER_OP = 1.5e-5
# Warm start: the share of the time left that the registered heuristics may use, and each
# one's time per op (measured on 100k-op layered graphs on a loaded 2-core machine): one
# runs only if n times its rate fits in what is left of that share.
HEURISTIC_SHARE = 0.3
HEURISTIC_SECONDS_PER_OP = {
    "xla-bfs": 1.5e-6,
    "xla-postorder": 2.5e-6,
    "xla-dfs": 1e-5,
    "xla-list": 1.5e-5,
    "xla-default": 3e-5,
    "bladedisc": 2.5e-4,
    # Inductor's (measured at 20k ops, against xla-default and xla-list in the same run)
    "inductor-bfs": 3e-5,
    "inductor-lpmf": 3e-5,
    "inductor-dfs": 4e-5,
    "inductor-default": 6e-5,
}
DEFAULT_SECONDS_PER_OP = 1e-4
# The heuristics whose expected times add up to this run whatever the time limit (even past
# the command's deadline): cp is never worse than them, and on small graphs they take ms
HEURISTIC_FLOOR_SECONDS = 0.25
# ...and with them the greedy and a beam, on graphs up to this many ops (greedy: 0.1 s at
# 1,000 ops on a loaded 2-core machine)
FLOOR_BEAM_MAX_OPS = 1000


# -- scalar objectives (a max over steps) -----------------------------------------------------


@dataclass
class Scalar:
    """``cost = max_s coef_s * peak_s`` subject to ``peak_s <= caps_s``.

    ``coef=None`` means one scenario and cost in bytes.
    """

    kind: str  # peak | ratio | stage
    S: int
    coef: np.ndarray | None = None
    caps: np.ndarray | None = None  # bytes, per scenario (None: no caps)
    den: np.ndarray | None = None  # ratio denominators (bytes)
    stage: int = 0

    def cost(self, peaks: np.ndarray) -> float:
        peaks = np.asarray(peaks)
        if self.caps is not None and (peaks > self.caps).any():
            return float("inf")
        if self.coef is None:
            return float(peaks[0])
        return float(max(c * p for c, p in zip(self.coef, peaks)))

    def spec(self, scale) -> ObjectiveSpec:
        if self.kind == "peak":
            return ObjectiveSpec("weighted", weights=np.ones(self.S))
        if self.kind == "ratio":
            return ObjectiveSpec("minimax", minimax_lbs=self.den)
        caps = {}
        if self.caps is not None:
            for t in range(self.S):
                if t != self.stage and np.isfinite(self.caps[t]):
                    caps[t] = scale.units_floor(t, int(self.caps[t]))
        return ObjectiveSpec("stage", stage=self.stage, stage_caps=caps)

    def model_bound_to_cost(self, bound_units: float | None, scale) -> float | None:
        """A valid lower bound on ``cost`` from CP-SAT's objective bound, or None."""
        if bound_units is None or not np.isfinite(bound_units):
            return None
        if self.kind == "peak":
            return float(scale.true_lower_bound(0, int(np.ceil(bound_units - 1e-9))))
        if self.kind == "stage":
            s = self.stage
            return float(scale.true_lower_bound(s, int(np.ceil(bound_units - 1e-9))))
        if self.kind == "ratio" and bool(scale.exact.all()):
            return max(0.0, (np.ceil(bound_units - 1e-9) - 1) / RES)
        return None


@dataclass
class Outcome:
    order: list[int]  # local order
    cost: float
    bound: float
    engine: str
    proven: bool = False  # cost is optimal (to the objective's resolution)


@dataclass
class Ctx:
    clock: Clock  # wall seconds, or in deterministic mode the budget handed out
    cfg: SolverConfig
    progress: Callable[[float, float, float, float], None] | None
    opts: ModelOptions
    phases: list = field(default_factory=list)
    display: Callable[[float], float] = lambda x: x  # cost -> shown objective
    best_shown: float | None = None
    bound_shown: float | None = None
    phase: str = ""
    combine: Callable | None = None  # segment (cost, bound) -> whole-problem (cost, bound)
    window_engine: str = "search"
    cheap_cuts: bool = False  # no time for the minimum-cut bounds: the parts skip them too
    warm_start: dict = field(default_factory=dict)  # what the warm start did, for the record
    stop_cost: float | None = None  # stop once a scalar cost is at or below this, or the
    #                                   bound proves it out of reach

    def settled(self, cost: float, bound: float) -> bool:
        return self.stop_cost is not None and (cost <= self.stop_cost or bound > self.stop_cost)

    @property
    def deadline(self) -> float:
        return self.clock.deadline

    def now(self) -> float:
        """The clock deadlines are measured on (``cpsched.cp.runtime.Clock``)."""
        return self.clock.now()

    def spend(self, seconds: float) -> None:
        self.clock.spend(seconds)

    def left(self) -> float:
        return self.clock.left()

    def elapsed(self) -> float:
        return self.clock.elapsed()

    def report(
        self, objective: float | None = None, bound: float | None = None, phase: str | None = None
    ) -> None:
        if self.combine is not None:
            objective, bound = self.combine(objective, bound)
        if objective is not None:
            self.best_shown = (
                objective if self.best_shown is None else min(self.best_shown, objective)
            )
        if bound is not None:
            self.bound_shown = bound if self.bound_shown is None else max(self.bound_shown, bound)
        if phase is not None:
            self.phase = phase
        if self.progress is None:
            return
        o, b = self.best_shown, self.bound_shown
        if o is None or b is None:
            return
        b = min(b, o)
        gap = max(0.0, (o - b) / o) if o > 0 else 0.0
        self.progress(float(o), float(b), float(gap), float(self.elapsed()))

    def work(self, seconds: float) -> int | None:
        return int(max(1000, seconds * EXPANSIONS_PER_SECOND)) if self.cfg.deterministic else None


def _scalar_cost_local(p: Problem, order: Sequence[int], sc: Scalar) -> float:
    return sc.cost(p.peak(order))


def solve_scalar(
    p: Problem,
    sc: Scalar,
    hint: list[int],
    ctx: Ctx,
    *,
    deadline: float,
    known_bound: float = 0.0,
    use_search: bool = True,
    use_cpsat: bool = True,
    use_refine: bool = True,
    use_bounds: bool = True,
    starts: Sequence[list[int]] = (),
) -> Outcome:
    """Best order of one problem for a scalar objective, with a proven bound.

    ``starts``: other (local) orders the window refinement also starts from: it gets stuck
    in local optima, and on RLG n250 two of four starts reached the optimum (105,170) in
    30 s where the other two stopped at 112,970.
    """
    s = _ScalarSearch(p, sc, hint, ctx, deadline, max(known_bound, _static_scalar_bound(p, sc)))
    ctx.report(s.disp(s.best_cost), s.disp(s.bound), "hint")
    if s.done():
        return s.outcome()
    total = s.left()
    # 1. exact search over downsets (proves small / narrow problems outright)
    if use_search and p.n <= 2000:
        s.exact_phase(total)
        if s.done():
            return s.outcome()
    # 2. windowed refinement of the best order (exact search on windows of 40 steps); above
    # DENSE_MAX_OPS ops the large-neighbourhood search, whose windows cost the same at any
    # size, gets all the time
    if use_refine and p.n > 8 and not p.dense:
        s.lns_phase()
        if s.done():
            return s.outcome()
    elif use_refine and p.n > 8:
        s.window_phase(0.35 if (use_cpsat or use_bounds) else 1.0, starts)
        if s.done():
            return s.outcome()
    # 3. CP-SAT on the whole problem, hinted with the best order; skipped when building the
    # model alone would outlast the time left (wall-clock mode only)
    build_guess = CP_BUILD_SECONDS_PER_OP2 * p.n * p.n
    if use_cpsat and p.n <= CP_MAX_OPS and not ctx.cfg.deterministic and build_guess > s.left():
        s.note("cp-sat", time.perf_counter(), status="skipped", build_guess=round(build_guess, 3))
    elif use_cpsat and p.n <= CP_MAX_OPS:
        # measured: after the windows, CP-SAT rarely improves graphs of a few hundred ops
        # within minutes and its bound stays at the static one, so it gets less there
        s.cpsat_phase((0.4 if p.n <= CP_FULL_SHARE_OPS else 0.2) if use_bounds else 1.0)
        if s.done():
            return s.outcome()
    # 4. lower bounds: case splits on the relative order of the ops with the largest cut
    # bounds (minimum cuts), on pairs of them, then projections
    if use_bounds and p.n > 8 and sc.kind == "peak" and sc.coef is None and p.dense:
        s.pair_phase()
        if s.done():
            return s.outcome()
    if use_bounds and p.n > 8:
        s.projection_phase()
    return s.outcome()


class _ScalarSearch:
    """``solve_scalar``'s phases on one problem: the best order so far, its cost, the
    proven bound and which engine found it. Each phase takes its share of the time left
    before ``deadline`` (on ``ctx``'s clock) and records itself in ``ctx.phases``."""

    def __init__(self, p: Problem, sc: Scalar, hint: list[int], ctx: Ctx, deadline, bound):
        self.p, self.sc, self.ctx, self.deadline = p, sc, ctx, deadline
        self.best = list(hint)
        self.best_cost = _scalar_cost_local(p, self.best, sc)
        self.bound = bound
        self.engine = "hint"
        self.proven = False
        self.disp = ctx.display

    def left(self) -> float:
        return 0.0 if interrupted() else self.deadline - self.ctx.now()

    def done(self) -> bool:
        return (
            self.proven
            or self.best_cost <= self.bound * (1 + 1e-12)
            or self.left() <= 0
            or self.ctx.settled(self.best_cost, self.bound)
        )

    def outcome(self) -> Outcome:
        return _outcome(self.best, self.best_cost, self.bound, self.engine, self.proven)

    def note(self, phase, t, **kw):
        p = self.p
        self.ctx.phases.append(
            {
                "phase": phase,
                "problem": p.name,
                "n": p.n,
                "seconds": round(time.perf_counter() - t, 3),
                **kw,
            }
        )

    def close(self, phase: str, t: float, tail: dict | None = None, **kw) -> None:
        """A phase's record (``kw``, its best cost and bound, ``tail``), and the progress
        report."""
        self.note(phase, t, **kw, cost=self.best_cost, bound=self.bound, **(tail or {}))
        self.ctx.report(self.disp(self.best_cost), self.disp(self.bound), phase)

    def _take(self, order: list[int], engine: str) -> None:
        """Keep ``order`` if it costs less than the best so far."""
        c = _scalar_cost_local(self.p, order, self.sc)
        if c < self.best_cost:
            self.best, self.best_cost, self.engine = order, c, engine

    def exact_phase(self, total: float) -> None:
        p, ctx, disp = self.p, self.ctx, self.disp
        t = time.perf_counter()
        tl = max(0.05, (0.1 if p.n <= 200 else 0.05) * total)
        ctx.spend(tl)
        r = best_first(
            p,
            upper=self.best_cost,
            time_limit=tl * (10 if ctx.cfg.deterministic else 1),
            coef=self.sc.coef,
            caps=self.sc.caps,
            lower=self.bound,
            max_expansions=ctx.work(tl),
            max_states=1_000_000,
            on_bound=lambda b: ctx.report(None, disp(b), "search"),
        )
        if r.order is not None and r.cost < self.best_cost:
            self.best, self.best_cost, self.engine = r.order, r.cost, "search"
        if r.proven:
            self.bound = max(
                self.bound, min(self.best_cost, r.bound if r.order is None else r.cost)
            )
            self.proven = True
        else:
            self.bound = max(self.bound, r.bound)
        self.close("search", t, reason=r.reason, expanded=r.expanded, states=r.states)

    def lns_phase(self) -> None:
        p, ctx, disp = self.p, self.ctx, self.disp
        t = time.perf_counter()
        started = ctx.elapsed()
        det = ctx.cfg.deterministic
        alloc = self.left()
        ctx.spend(alloc)
        new, lst = lns(
            p,
            self.best,
            deadline=float("inf") if det else self.deadline,
            coef=self.sc.coef,
            width=LNS_WIDTH,
            per_window=1e9 if det else LNS_PER_WINDOW,
            max_expansions=ctx.work(LNS_PER_WINDOW) if det else None,
            max_windows=int(max(1, alloc / LNS_PER_WINDOW)) if det else None,
            engine=ctx.window_engine,
            cfg=ctx.cfg,
            on_improve=lambda pk, el: ctx.report(disp(pk), None, "lns"),
            clock=ctx.now,
        )
        self._take(new, self.engine + "+lns")
        self.note(
            "lns",
            t,
            at=round(started, 3),
            deadline=round(self.deadline - ctx.clock.t0, 3),
            windows=lst.windows,
            improved=lst.improved,
            stopped=lst.stopped,
            cost=self.best_cost,
            history=[(round(e, 3), v) for e, v in lst.history],
        )

    def window_phase(self, share: float, starts: Sequence[list[int]]) -> None:
        """Window refinement from the best order and up to ``WINDOW_STARTS - 1`` others,
        half of ``share`` of the time left to the first."""
        p, ctx, sc = self.p, self.ctx, self.sc
        t = time.perf_counter()
        alloc = share * self.left()
        det = ctx.cfg.deterministic
        dl = float("inf") if det else time.perf_counter() + alloc
        ctx.spend(alloc)
        reached = [self.best_cost]

        def on_imp(o):
            reached[0] = min(reached[0], _scalar_cost_local(p, o, sc))
            ctx.report(self.disp(reached[0]), None, "window")

        def at_bound() -> bool:
            # an order at the proven bound (the cut bounds make this common) ends the phase
            return reached[0] <= self.bound * (1 + 1e-12) or ctx.settled(reached[0], self.bound)

        runs = [self.best] + [list(o) for o in starts][: WINDOW_STARTS - 1]
        shares = [0.5] + [0.5 / max(1, len(runs) - 1)] * (len(runs) - 1) if len(runs) > 1 else [1.0]
        n_win = n_imp = 0
        for k, (start, sh) in enumerate(zip(runs, shares)):
            a_k = sh * alloc
            if det:
                dl_k = float("inf")
            else:
                # unused time of a run that got stuck goes to the next ones
                rest = sum(shares[k:])
                dl_k = min(dl, time.perf_counter() + (dl - time.perf_counter()) * sh / rest)
            new, st = refine(
                p,
                start,
                deadline=dl_k,
                width=min(40, p.n),
                coef=sc.coef,
                per_window=1e9 if det else 2.0,
                max_expansions=ctx.work(0.5) if det else None,
                max_windows=int(max(1, 4 * a_k)) if det else None,
                patience=WINDOW_PATIENCE,
                on_improve=on_imp,
                should_stop=at_bound,
                engine=ctx.window_engine,
                cfg=ctx.cfg,
            )
            n_win += st.windows
            n_imp += st.improved
            self._take(new, self.engine + "+window")
            if self.done():
                break
        self.note("window", t, windows=n_win, improved=n_imp, starts=len(runs), cost=self.best_cost)

    def cpsat_phase(self, share: float) -> None:
        p, ctx, sc, disp = self.p, self.ctx, self.sc, self.disp
        t = time.perf_counter()
        tl = max(0.05, share * self.left())
        ctx.spend(tl)
        scale = make_scale(p)
        built = build(
            p,
            sc.spec(scale),
            ctx.opts,
            scale=scale,
            hint=self.best,
            peak_lower_bytes=_peak_lower_from_bound(p, sc, self.bound),
        )

        def on_sol(obj, bnd):
            ctx.report(None, None, "cp-sat")

        def on_bnd(bnd):
            c = sc.model_bound_to_cost(bnd, scale)
            if c is not None:
                ctx.report(None, disp(c), "cp-sat")

        stop = None
        if ctx.stop_cost is not None and sc.kind == "peak" and built.objective.coefs is not None:
            # model units are rounded up: at most this many units fit the target
            stop = float(built.objective.coefs[0] * scale.units_floor(0, int(ctx.stop_cost)))
        if not ctx.cfg.deterministic:
            # building the model took time too (seconds at 1,000 ops on a loaded machine)
            tl = min(tl, max(0.01, self.left()))
        run = run_cpsat(built, ctx.cfg, tl, on_solution=on_sol, on_bound=on_bnd, stop_at=stop)
        if run.order is not None:
            self._take(run.order, "cp-sat")
        cb = (
            sc.model_bound_to_cost(run.bound, scale)
            if run.status in (OPTIMAL, FEASIBLE, UNKNOWN)
            else None
        )
        if cb is not None:
            self.bound = max(self.bound, min(self.best_cost, cb))
        if run.status == OPTIMAL and bool(scale.exact.all()):
            # exact scaling: the model optimum is the true optimum (minimax: to 1/RES)
            self.proven = True
        stats = {k: run.stats[k] for k in ("conflicts", "solutions")}
        self.close("cp-sat", t, stats, status=run.status, model=built.info)

    def pair_phase(self) -> None:
        p, ctx = self.p, self.ctx
        t = time.perf_counter()
        det = ctx.cfg.deterministic
        tl = PAIR_SHARE * self.left()
        ctx.spend(tl)
        split, cuts = order_split_bound(
            p,
            upper=self.best_cost,
            deadline=float("inf") if det else time.perf_counter() + tl / 2,
            max_cuts=SPLIT_DET_CUTS if det else None,
        )
        pair, tried = pair_bound(
            p,
            upper=self.best_cost,
            deadline=float("inf") if det else t + tl,
            max_pairs=PAIR_DET_PAIRS if det else None,
        )
        pb = max(float(split), float(pair), float(p.floor[0]))
        if pb > self.bound:
            self.bound = pb
            ctx.report(self.disp(self.best_cost), self.disp(self.bound), "pairs")
        self.note("pairs", t, split=split, cuts=cuts, pair=pair, tried=tried, bound=self.bound)

    def projection_phase(self) -> None:
        p, ctx, disp = self.p, self.ctx, self.disp
        t = time.perf_counter()
        tl = self.left()
        det = ctx.cfg.deterministic
        ctx.spend(tl)
        b, bst = projection_bound(
            p,
            self.best,
            upper=self.best_cost,
            deadline=float("inf") if det else time.perf_counter() + tl,
            coef=self.sc.coef,
            caps=self.sc.caps,
            per_try=1e9 if det else max(1.0, tl / 3),
            max_expansions=ctx.work(tl / 4),
            max_tries=(4 if det else None),
            on_bound=lambda x: ctx.report(None, disp(x), "bound"),
            known=self.bound,
        )
        self.bound = max(self.bound, b)
        self.note(
            "bound",
            t,
            tries=len(bst.tried),
            bound=self.bound,
            best_window=max(bst.tried, key=lambda x: x[2])[:3] if bst.tried else None,
        )
        ctx.report(disp(self.best_cost), disp(self.bound), "bound")


def _outcome(order, cost, bound, engine, proven) -> Outcome:
    proven = proven or cost <= bound * (1 + 1e-12)
    return Outcome(
        list(order), cost, min(bound, cost) if not proven or bound <= cost else cost, engine, proven
    )


def _static_scalar_bound(p: Problem, sc: Scalar) -> float:
    lb = p.lower_bound
    if sc.coef is None:
        return float(lb[0])
    if sc.kind == "stage":
        return float(lb[sc.stage])
    return float(max(c * x for c, x in zip(sc.coef, lb)))


def _peak_lower_from_bound(p: Problem, sc: Scalar, bound: float) -> np.ndarray:
    lb = p.lower_bound.astype(np.int64).copy()
    if sc.kind in ("peak",) and np.isfinite(bound):
        lb[0] = max(lb[0], int(np.ceil(bound)))
    elif sc.kind == "stage" and np.isfinite(bound):
        lb[sc.stage] = max(lb[sc.stage], int(np.ceil(bound)))
    return lb


# -- the public entry point -----------------------------------------------------------------


def _budgets(budget, scenarios: Scenarios) -> np.ndarray:
    """Bytes per scenario (``cpsched.core.scenarios``'s one budget parser)."""
    return resolve_budget(budget, scenarios)


def _candidates(
    graph: Graph, scenarios: Scenarios, P: Problem, hint, ctx: Ctx, heuristics: bool, coef
) -> dict[str, list[int]]:
    """The warm-start orders, cheapest first, each only if its expected time fits the part
    of the time limit the heuristics may use (``HEURISTIC_SHARE``); the given order always."""
    out: dict[str, list[int]] = {"given": graph.default_order()}
    if hint is not None:
        out["hint"] = [int(v) for v in hint]
    n = P.n
    t_start = ctx.now()
    notes = ctx.warm_start
    # the heuristics' own deadline (a share of what is left); the greedy may use the rest
    # of the time limit, since without it a large graph has only the given order
    h_deadline = t_start + HEURISTIC_SHARE * max(0.0, ctx.left())

    def fits(seconds: float, until: float) -> bool:
        return ctx.cfg.deterministic or (ctx.now() + seconds <= until and ctx.left() > 0)

    if n:
        t = time.perf_counter()
        # the same order either way; the bitset beam's time predicts its wider runs below
        if P.dense:
            go, _ = beam(P, 1, coef=coef)
        else:
            go, _ = greedy(P, coef=coef, should_stop=lambda: ctx.left() <= 0)
        per_width = max(1e-6, time.perf_counter() - t)
        if go is not None:
            out["greedy"] = go
        notes.update(greedy_seconds=round(per_width, 3), greedy_complete=go is not None)
    skipped = []
    floor = HEURISTIC_FLOOR_SECONDS  # what the cheap ones may take past the deadline
    if heuristics:
        try:
            methods = sorted(
                load_all().items(),
                key=lambda kv: (HEURISTIC_SECONDS_PER_OP.get(kv[0], DEFAULT_SECONDS_PER_OP), kv[0]),
            )
            for name, m in methods:
                if m.family != "memory" or name == "cp":
                    continue
                guess = n * HEURISTIC_SECONDS_PER_OP.get(name, DEFAULT_SECONDS_PER_OP)
                if guess <= floor:
                    floor -= guess
                elif not fits(guess, h_deadline):
                    skipped.append(name)
                    continue
                try:
                    if not m.applies(graph):
                        continue
                    r = m.fn(graph, scenarios)
                    order = list(r.order) if isinstance(r, Schedule) else [int(v) for v in r]
                    out[name] = order
                except Exception:  # a broken heuristic must not break the solver
                    continue
        except Exception:
            pass
    # beam: the greedy's time (width 1) predicts the cost per unit of width; the widest
    # beam that fits in BEAM_SHARE of the time limit (fixed width when deterministic). Its
    # downsets are bitsets of n bits, so above DENSE_MAX_OPS ops it is left out.
    bo = None
    if n and P.dense:
        if ctx.cfg.deterministic:
            width = max(8, min(BEAM_WIDTH, BEAM_WIDTH * 250 // max(n, 1)))
            bo, _ = beam(P, width, coef=coef, time_limit=1e9)
        else:
            budget = min(BEAM_SHARE * ctx.cfg.time_limit, max(0.0, h_deadline - ctx.now()))
            width = int(min(BEAM_MAX_WIDTH, 0.6 * budget / per_width))
            if width >= 2:
                bo, _ = beam(P, width, coef=coef, time_limit=max(0.2, budget))
    elif n:
        skipped.append("beam")
    if bo is not None:
        out["beam"] = bo
    notes.update(
        warm_start_seconds=round(ctx.now() - t_start, 3),
        deadline=round(h_deadline - ctx.clock.t0, 3),
        skipped=skipped,
    )
    return out


@stoppable
def solve(
    graph: Graph,
    scenarios: Scenarios | None = None,
    *,
    objective: str = "weighted",
    budget=None,
    time_limit: float = 10.0,
    workers: int = 2,
    seed: int = 0,
    deterministic: bool = False,
    log: bool = False,
    progress: Callable[[float, float, float, float], None] | None = None,
    hint: Sequence[int] | None = None,
    model: ModelOptions | None = None,
    decompose: bool = True,
    heuristics: bool = True,
    search: bool = True,
    cpsat: bool = True,
    windows: bool = True,
    bounds: bool = True,
    window_engine: str = "search",
    stop_when_fits: bool = False,
    deadline: float | None = None,
) -> Schedule:
    """Minimum-peak order shared by all scenarios (see the module docstring).

    ``deadline``: a ``time.perf_counter()`` instant the solve ends by, whatever
    ``time_limit`` says (wall-clock mode only; see ``cpsched.cp.runtime``).

    ``stop_when_fits`` (budget objective): stop as soon as an order fits every budget, or
    a bound proves that none does, instead of looking for the order furthest inside them
    (rematerialization's first phase).

    The switches (``decompose``, ``heuristics``, ``search``, ``cpsat``, ``windows``,
    ``bounds``) turn pipeline steps off for experiments; ``window_engine`` is ``search`` or
    ``cpsat`` (see ``cpsched.strategies.min_peak.windows``).
    """
    t0 = time.perf_counter()
    scenarios = scenarios or static()
    S = len(scenarios)
    if budget is not None and objective == "weighted":
        objective = "budget"
    if objective not in OBJECTIVES:
        raise InputError(f"unknown objective {objective!r}; one of {', '.join(OBJECTIVES)}")
    if objective == "budget" and budget is None:
        raise InputError("objective 'budget' needs a budget")
    cfg = SolverConfig(
        time_limit=time_limit,
        workers=workers,
        seed=seed,
        deterministic=deterministic,
        log=log,
        deadline=deadline,
    )
    ctx = _context(graph, cfg, t0, progress, model, window_engine)
    if not deterministic and deadline is not None and ctx.left() <= 0:
        # the command's deadline passed before the solve began (reading a large graph on a
        # loaded machine): the input's own order, without building the problem
        return _heuristics_only(graph, scenarios, objective, budget, ctx, seed, t0)
    P = from_graph(graph, scenarios)
    weak_bound = _skip_cuts_if_short(P, ctx, S)
    if not P.dense:
        # too large for reachability: heuristics + windows only (cheap bound)
        decompose = search = cpsat = bounds = False
    # the graph's crossing bound needs n x n reachability (6.5 s at 5,000 ops on a loaded
    # machine): only where the problem is dense, above that the cheap bound
    crossing = None if P.dense else False
    lb_static = np.maximum(
        static_lower_bound(graph, scenarios, crossing=crossing), P.lower_bound
    ).astype(np.int64)
    weights = np.asarray(scenarios.weights, dtype=float)
    budgets = _budgets(budget, scenarios) if objective == "budget" else None
    den = np.maximum(lb_static, 1).astype(float)
    key, scalar = _objective_key(objective, S, weights, den, budgets, lb_static)
    ctx.display = lambda c: c
    if stop_when_fits and objective == "budget" and scalar is not None:
        assert budgets is not None
        ctx.stop_cost = float(budgets[0]) if scalar.kind == "peak" else 1.0

    # 1. heuristics
    coef_h = None if (scalar is None or scalar.coef is None) else scalar.coef
    cands = _candidates(graph, scenarios, P, hint, ctx, heuristics, coef_h)
    baselines, best_name, best_order, best_peaks = _best_candidate(graph, scenarios, cands, key)
    heur_key = key(best_peaks)
    info = _heuristics_record(ctx, t0, objective, baselines, best_name, weak_bound)
    lower = lb_static.copy()
    finish = _Finish(graph, scenarios, key, info, ctx, t0)
    # trivially optimal: every scenario at its lower bound
    if (best_peaks <= lower).all():
        ok = objective != "budget" or (budgets is not None and (best_peaks <= budgets).all())
        if ok:
            return finish(
                best_order,
                OPTIMAL,
                lower,
                "heuristic:" + best_name,
                _obj_bound(objective, lower, weights, den, budgets, key),
            )
    switches = (decompose, search, cpsat, windows, bounds)
    if scalar is not None:  # 2. the scalar path (a max over steps): decomposition + engines
        best = (best_name, best_order, best_peaks)
        whole = _Whole(graph, scenarios, objective, key, weights, den, budgets, lower)
        return whole.scalar(P, scalar, cands, baselines, best, ctx, finish, switches)
    # 3. several scenarios, weighted or lexicographic: the whole model
    multi = _Multi(graph, scenarios, P, key, best_order, best_peaks, lower, weights, ctx)
    if objective == "weighted":
        return multi.weighted(heur_key, finish, *switches[1:])
    return multi.lexicographic(heur_key, finish, *switches[1:])


def _heuristics_record(ctx: Ctx, t0, objective, baselines, best_name, weak_bound) -> dict:
    """The heuristics phase into ``ctx.phases``, and the start of the result's ``info``."""
    cfg = ctx.cfg
    ctx.phases.append(
        {
            "phase": "heuristics",
            "seconds": round(time.perf_counter() - t0, 3),
            "best": best_name,
            # the budget every phase's deadline comes from (cut short by ``deadline``
            # where one is given), and the warm start's record
            "clock_limit": round(ctx.clock.limit, 3),
            "command_deadline": cfg.deadline is not None and not cfg.deterministic,
            **ctx.warm_start,
        }
    )
    info: dict[str, Any] = {
        "objective": objective,
        "baselines": baselines,
        "best_heuristic": best_name,
        "seed": cfg.seed,
        "deterministic": cfg.deterministic,
        "phases": ctx.phases,
    }
    if weak_bound:
        info["weak_bound"] = weak_bound
    return info


def _context(graph, cfg: SolverConfig, t0, progress, model, window_engine) -> Ctx:
    """The solve's context, on a clock that leaves a little time for the final exact
    re-check."""
    margin = min(0.5, 0.02 * float(cfg.time_limit)) + FINISH_SECONDS_PER_OP * graph.n_ops
    ctx = Ctx(
        Clock(
            float(cfg.time_limit) - margin,
            cfg.deterministic,
            t0,
            None if cfg.deadline is None else cfg.deadline - margin,
        ),
        cfg,
        progress,
        model or ModelOptions(),
    )
    ctx.window_engine = window_engine
    return ctx


def _skip_cuts_if_short(P: Problem, ctx: Ctx, S: int) -> str:
    """Where the minimum-cut bounds would take too much of a short time limit (wall-clock
    mode), ``P`` keeps the forced-live bounds only; returns why, or ``''``."""
    if ctx.cfg.deterministic or CUT_SECONDS_PER_OP2 * P.n * P.n * S <= CUT_TIME_SHARE * ctx.left():
        return ""
    ctx.cheap_cuts = True
    P.cut_lower_bounds = P.op_lower_bounds
    return "the minimum-cut bound was skipped for the time limit"


def _objective_key(objective, S, weights, den, budgets, lb_static) -> tuple[Any, Scalar | None]:
    """How to compare exact peaks (``key`` gives a float, or a tuple for lexicographic,
    compared only with its own kind), and the scalar form where the objective is a max."""
    key: Any  # Any, not Callable: the branches give callables of different return types
    if objective == "weighted" or (objective == "lexicographic" and S == 1):
        key = lambda pk: float(np.dot(weights, pk)) if S > 1 else float(pk[0])
        scalar = Scalar("peak", S) if S == 1 else None
    elif objective == "minimax":
        key = lambda pk: float(max(p / d for p, d in zip(pk, den)))
        scalar = Scalar("ratio", S, coef=1.0 / den, den=den) if S > 1 else Scalar("peak", S)
    elif objective == "budget":
        assert budgets is not None
        bden = np.maximum(budgets, 1).astype(float)
        key = lambda pk: float(max(p / d for p, d in zip(pk, bden)))
        scalar = Scalar("ratio", S, coef=1.0 / bden, den=bden) if S > 1 else None
        if S == 1:
            key = lambda pk: float(pk[0])
            scalar = Scalar("peak", S)
    else:  # lexicographic with several scenarios
        lex = [int(s) for s in np.argsort(-lb_static, kind="stable")]
        key = lambda pk: tuple(int(pk[s]) for s in lex)
        scalar = None
    return key, scalar


def _best_candidate(graph, scenarios, cands: dict, key):
    """Each valid candidate's peaks (``baselines``) and the best one: name, order, peaks."""
    baselines = {}
    best_name, best_order, best_peaks = None, None, None
    for name, order in cands.items():
        try:
            pk = simulate_peak(graph, order, scenarios)
        except Exception:
            continue
        try:
            validate_order(graph, order)
        except Exception:
            continue
        baselines[name] = [int(x) for x in pk]
        if best_order is None or key(pk) < key(best_peaks):
            best_name, best_order, best_peaks = name, list(order), pk
    # "given" (the graph's own order) is always a valid candidate
    assert best_name is not None and best_order is not None and best_peaks is not None
    return baselines, best_name, best_order, best_peaks


class _Finish:
    """The solve's last step: the chosen order's exact figures into ``info``, and the
    schedule."""

    def __init__(self, graph, scenarios, key, info: dict, ctx: Ctx, t0: float):
        self.graph, self.scenarios, self.key = graph, scenarios, key
        self.info, self.ctx, self.t0 = info, ctx, t0

    def __call__(self, order, status, lower_b, engine, obj_bound, message="") -> Schedule:
        info = self.info
        pk = simulate_peak(self.graph, order, self.scenarios)
        kv = self.key(pk)
        info.update(
            engine=engine,
            objective_value=kv if not isinstance(kv, tuple) else list(kv),
            objective_bound=obj_bound,
            message=message,
        )
        if interrupted():
            info["interrupted"] = True
        if isinstance(kv, tuple) or obj_bound is None:
            info["gap"] = None
        else:
            info["gap"] = float(max(0.0, (kv - obj_bound) / kv)) if kv else 0.0
        sched = make_schedule(
            self.graph,
            order,
            "cp",
            self.scenarios,
            status=status,
            seconds=time.perf_counter() - self.t0,
            lower_bound=lower_b,
            info=info,
        )
        self.ctx.report(None, None, "done")
        return sched


class _Whole:
    """The objective's figures the scalar path turns its answer into: the status, the
    bound and the message of the whole problem."""

    def __init__(self, graph, scenarios, objective, key, weights, den, budgets, lower):
        self.graph, self.scenarios, self.objective, self.key = graph, scenarios, objective, key
        self.weights, self.den, self.budgets, self.lower = weights, den, budgets, lower

    def obj_bound(self) -> Any:
        return _obj_bound(
            self.objective, self.lower, self.weights, self.den, self.budgets, self.key
        )

    def scalar(
        self, P, scalar, cands, baselines, best, ctx, finish, switches: tuple[bool, ...]
    ) -> Schedule:
        """Decomposition and the engines on ``scalar``, started from the best candidate
        (and, for the window refinement, the next best different ones)."""
        graph, scenarios, key, lower = self.graph, self.scenarios, self.key, self.lower
        best_name, best_order, best_peaks = best
        ranked = sorted(
            (key(simulate_peak(graph, o, scenarios)), nm)
            for nm, o in cands.items()
            if nm in baselines and nm != best_name
        )
        starts, seen = [], {tuple(best_order)}
        for _, nm in ranked:
            if tuple(cands[nm]) not in seen:
                seen.add(tuple(cands[nm]))
                starts.append(list(cands[nm]))
        decompose, search, cpsat, windows, bounds = switches
        order, cost, bound, engine, sproven = _solve_scalar_whole(
            P,
            scalar,
            best_order,
            ctx,
            decompose,
            search,
            cpsat,
            windows,
            bounds,
            starts=starts[: WINDOW_STARTS - 1],
        )
        heur_key = key(best_peaks)
        pk = simulate_peak(graph, order, scenarios)
        if key(pk) > heur_key:  # never worse than the best heuristic
            order, pk, sproven = best_order, best_peaks, False
        if scalar.kind == "peak":
            lower[0] = max(lower[0], int(np.ceil(bound - 1e-9)))
        obj_bound = self.obj_bound()
        if scalar.kind == "ratio":
            obj_bound = max(obj_bound, bound)
        kv = key(pk)
        proven = sproven or kv <= obj_bound * (1 + 1e-9)
        proven = proven or (scalar.kind == "peak" and int(pk[0]) <= lower[0])
        if proven and scalar.kind == "peak":
            lower[0] = max(lower[0], int(pk[0]))
            obj_bound = self.obj_bound()
        figures = (self.objective, proven, kv, heur_key, self.budgets, pk, lower, obj_bound)
        return finish(
            order,
            *_status(*figures, scenarios),
            engine,
            obj_bound,
            *_message(*figures, scenarios),
        )


def _obj_bound(objective, lower, weights, den, budgets, key):
    if objective == "weighted":
        return float(np.dot(weights, lower)) if len(lower) > 1 else float(lower[0])
    if objective == "minimax":
        return float(max(l / d for l, d in zip(lower, den)))
    if objective == "budget":
        if len(lower) == 1:
            return float(lower[0])
        return float(max(l / b for l, b in zip(lower, np.maximum(budgets, 1))))
    return float(lower[0]) if len(lower) == 1 else None


def _status(
    objective, proven, kv, heur_key, budgets, pk, lower, obj_bound, scenarios
) -> tuple[str, np.ndarray]:
    if objective == "budget":
        fits = bool((pk <= budgets).all())
        if fits:
            return OPTIMAL if proven else FEASIBLE, lower
        infeasible = (
            bool((lower > budgets).any())
            or (len(pk) > 1 and obj_bound is not None and obj_bound > 1.0)
            or (len(pk) == 1 and obj_bound is not None and obj_bound > budgets[0])
        )
        if infeasible or proven:
            return INFEASIBLE, lower
        return FALLBACK if kv >= heur_key else FEASIBLE, lower
    if proven:
        return OPTIMAL, lower
    if kv < heur_key:
        return FEASIBLE, lower
    return FALLBACK, lower


def _message(
    objective, proven, kv, heur_key, budgets, pk, lower, obj_bound, scenarios
) -> tuple[str]:
    if objective == "budget" and not (pk <= budgets).all():
        parts = [
            f"{n}: budget {format_bytes_exact(b)}, best peak {format_bytes_exact(p)}, proven "
            f"minimum >= {format_bytes_exact(l)}"
            for n, b, p, l in zip(scenarios.names, budgets, pk, lower)
        ]
        infeasible = (
            _status(objective, proven, kv, heur_key, budgets, pk, lower, obj_bound, scenarios)[0]
            == INFEASIBLE
        )
        head = (
            "budget cannot be met (proven)"
            if infeasible
            else "budget not met by any order found (not proven impossible)"
        )
        return (head + "; " + "; ".join(parts),)
    if not proven and kv >= heur_key:
        return (
            "the solvers found nothing better than the best heuristic within the time "
            "limit; returning it",
        )
    return ("",)


def _solve_scalar_whole(
    P: Problem,
    sc: Scalar,
    hint: list[int],
    ctx: Ctx,
    decompose: bool,
    search: bool,
    cpsat: bool,
    windows: bool,
    bounds: bool,
    starts: Sequence[list[int]] = (),
):
    flags = dict(use_search=search, use_cpsat=cpsat, use_refine=windows, use_bounds=bounds)
    parts = D.split(P, hint) if decompose else []
    if ctx.cheap_cuts:
        for q in parts:
            q.cut_lower_bounds = q.op_lower_bounds
    if len(parts) <= 1:
        out = solve_scalar(P, sc, hint, ctx, deadline=ctx.deadline, starts=starts, **flags)
        return out.order, out.cost, out.bound, out.engine, out.proven
    # segments: each gets as floor the other segments' lower bounds (see decompose)
    pos = np.empty(P.n, dtype=np.int64)
    pos[np.asarray(hint)] = np.arange(P.n)
    seg_lb = np.stack([q.lower_bound for q in parts])  # [K, S]
    # hard segments first: their time share is proportional to size among undecided ones
    orders: list[list[int]] = []
    costs, bnds, proofs, engines = [], [], [], set()
    ctx.phases.append({"phase": "decompose", "segments": len(parts), "sizes": [q.n for q in parts]})
    todo = [k for k, q in enumerate(parts)]
    for k, q in enumerate(parts):
        others = np.delete(seg_lb, k, axis=0)
        q.floor = np.maximum(P.floor, others.max(axis=0)) if len(others) else P.floor.copy()
    seg_cost = [sc.cost(q.peak(list(range(q.n)))) for q in parts]
    seg_bound = [_static_scalar_bound(q, sc) for q in parts]
    current = [0]

    def combine(c, b):
        k = current[0]
        if c is not None:
            seg_cost[k] = min(seg_cost[k], c)
            c = max(seg_cost)
        if b is not None:
            seg_bound[k] = max(seg_bound[k], b)
            b = max(seg_bound)
        return c, b

    ctx.combine = combine
    for idx, k in enumerate(todo):
        q = parts[k]
        current[0] = k
        local_hint = list(range(q.n))  # window ops are listed in hint order
        loc = {int(v): i for i, v in enumerate(q.ops)}
        q_starts = [[loc[v] for v in o if v in loc] for o in starts]
        rest = sum(parts[j].n for j in todo[idx:])
        share = ctx.left() * (q.n / max(1, rest))
        out = solve_scalar(
            q, sc, local_hint, ctx, deadline=ctx.now() + max(0.0, share), starts=q_starts, **flags
        )
        orders.append([int(q.ops[v]) for v in out.order])
        costs.append(out.cost)
        bnds.append(out.bound)
        proofs.append(out.proven)
        engines.add(out.engine)
    ctx.combine = None
    order = [v for o in orders for v in o]
    cost = sc.cost(P.peak(order))
    bound = max(bnds) if bnds else 0.0
    # every segment optimal (given its floor) => the concatenation is optimal
    proven = all(proofs)
    used = sorted({x for e in engines for x in e.split("+")})
    return order, cost, min(bound, cost), f"decomposed({len(parts)}):" + "+".join(used), proven


def _one_bucket(
    P: Problem,
    s: int,
    caps: np.ndarray,
    order,
    ctx: Ctx,
    deadline: float,
    known: float,
    search,
    cpsat,
    windows,
    bounds,
) -> Outcome:
    """Best order for bucket ``s`` alone (the other buckets only held under ``caps``), with
    its proven bound."""
    S = len(caps)
    sc = Scalar("stage", S, coef=np.eye(S)[s], caps=np.array(caps, dtype=float), stage=s)
    return solve_scalar(
        P,
        sc,
        order,
        ctx,
        deadline=deadline,
        known_bound=known,
        use_search=search,
        use_cpsat=cpsat,
        use_refine=windows,
        use_bounds=bounds,
    )


class _Multi:
    """Several scenarios, weighted or lexicographic (the objectives that are no max over
    steps): the best order so far, its peaks and which engine found it."""

    def __init__(self, graph, scenarios, P, key, order, peaks, lower, weights, ctx: Ctx):
        self.graph, self.scenarios, self.P, self.key = graph, scenarios, P, key
        self.order, self.pk, self.engine = list(order), peaks, "heuristic"
        self.lower, self.weights, self.ctx = lower, weights, ctx
        self.scale = make_scale(P)

    def _better(self, order, engine: str) -> bool:
        """Keep ``order`` (found by ``engine``) if its peaks are better than the best's."""
        pk2 = simulate_peak(self.graph, order, self.scenarios)
        if self.key(pk2) < self.key(self.pk):
            self.order, self.pk, self.engine = order, pk2, engine
            return True
        return False

    def weighted(self, heur_key, finish, search, cpsat, windows, bounds) -> Schedule:
        P, key, lower, weights = self.P, self.key, self.lower, self.weights
        if bounds:
            self._buckets(search, cpsat, windows, bounds)
        obj_bound = float(np.dot(weights, lower))
        if cpsat and P.n <= CP_MAX_OPS and key(self.pk) > obj_bound * (1 + 1e-9):
            obj_bound = self._cpsat(obj_bound, windows)
        if windows and self.ctx.left() > 0.05 and P.n > 8 and key(self.pk) > obj_bound * (1 + 1e-9):
            self._windows()
        pk = self.pk
        kv = key(pk)
        proven = kv <= obj_bound * (1 + 1e-9)
        figures = ("weighted", proven, kv, heur_key, None, pk, lower, obj_bound, self.scenarios)
        return finish(self.order, *_status(*figures), self.engine, obj_bound, *_message(*figures))

    def _buckets(self, search, cpsat, windows, bounds) -> None:
        """Each bucket alone first (a share of the time): its proven bound raises the
        weighted bound (sum of w_s x min peak_s is one), and its order may be a better
        start for all buckets."""
        ctx, lower = self.ctx, self.lower
        S = len(self.scenarios)
        share = ctx.left() * BUCKET_SHARE / S
        for s in np.argsort(-self.weights * lower, kind="stable").tolist():
            out = _one_bucket(
                self.P,
                s,
                np.full(S, np.inf),
                self.order,
                ctx,
                ctx.now() + share,
                float(lower[s]),
                search,
                cpsat,
                windows,
                bounds,
            )
            lower[s] = max(lower[s], int(np.ceil(out.bound - 1e-9)))
            self._better(list(out.order), out.engine)

    def _cpsat(self, obj_bound: float, windows: bool) -> float:
        """The whole weighted model, hinted with the best order; returns the bound."""
        ctx, scale, weights = self.ctx, self.scale, self.weights
        t = time.perf_counter()
        built = build(
            self.P,
            ObjectiveSpec("weighted", weights=weights),
            ctx.opts,
            scale=scale,
            hint=self.order,
            peak_lower_bytes=self.lower,
        )
        tl = max(0.05, ctx.left() * (0.7 if windows else 1.0))
        ctx.spend(tl)
        run = run_cpsat(
            built, ctx.cfg, tl, on_solution=lambda o, b: ctx.report(None, None, "cp-sat")
        )
        if run.order is not None:
            self._better(run.order, "cp-sat")
        if run.status == OPTIMAL and bool(scale.exact.all()) and run.peaks_units is not None:
            proven = sum(
                w * int(u) * scale.unit[s] for s, (w, u) in enumerate(zip(weights, run.peaks_units))
            )
            obj_bound = max(obj_bound, min(self.key(self.pk), float(proven)))
        ctx.phases.append(
            {
                "phase": "cp-sat",
                "seconds": round(time.perf_counter() - t, 3),
                "status": run.status,
                "model": built.info,
            }
        )
        return obj_bound

    def _windows(self) -> None:
        ctx, P, weights = self.ctx, self.P, self.weights
        coef = weights / np.maximum(weights.max(), 1e-12)
        det = ctx.cfg.deterministic
        alloc = ctx.left()
        new, st = (refine if P.dense else _lns_multi)(
            P,
            self.order,
            deadline=float("inf") if det else ctx.deadline,
            width=min(40, P.n),
            coef=coef,
            per_window=1e9 if det else 2.0,
            max_expansions=ctx.work(0.5) if det else None,
            max_windows=int(max(1, 4 * alloc)) if det else None,
            engine=ctx.window_engine,
            cfg=ctx.cfg,
        )
        ctx.spend(alloc)
        self._better(new, self.engine + "+window")
        ctx.phases.append(
            {
                "phase": "window",
                "seconds": round(st.seconds, 3),
                "windows": st.windows,
                "improved": st.improved,
            }
        )

    def lexicographic(self, heur_key, finish, search, cpsat, windows, bounds) -> Schedule:
        """Largest scenario first, each stage capped by the earlier optima."""
        ctx, lower, key = self.ctx, self.lower, self.key
        S = len(self.scenarios)
        lex = [int(s) for s in np.argsort(-lower, kind="stable")]
        caps = np.full(S, np.inf)
        all_proven = True
        order, pk, engine = self.order, self.pk, self.engine
        for i, s in enumerate(lex):
            stages_left = S - i
            dl = ctx.now() + max(0.0, ctx.left() / stages_left)
            out = _one_bucket(
                self.P, s, caps, order, ctx, dl, float(lower[s]), search, cpsat, windows, bounds
            )
            pk2 = simulate_peak(self.graph, out.order, self.scenarios)
            if key(pk2) <= key(pk):
                order, pk = out.order, pk2
                engine = out.engine
            lower[s] = max(lower[s], int(np.ceil(min(out.bound, pk[s]) - 1e-9)))
            if pk[s] > lower[s]:
                all_proven = False
            caps[s] = pk[s]
        kv = key(pk)
        status = OPTIMAL if all_proven else (FEASIBLE if kv < heur_key else FALLBACK)
        msg = (
            ""
            if status != FALLBACK
            else (
                "the solvers found nothing better than the best "
                "heuristic within the time limit; returning it"
            )
        )
        return finish(order, status, lower, engine, None, msg)


def _cheap_heuristics(graph: Graph, scenarios: Scenarios, seconds: float) -> dict[str, list[int]]:
    """The registered memory heuristics, cheapest first, while their expected times add up
    to at most ``seconds`` (``HEURISTIC_SECONDS_PER_OP``): milliseconds on small graphs."""
    out: dict[str, list[int]] = {}
    methods = sorted(
        load_all().items(),
        key=lambda kv: (HEURISTIC_SECONDS_PER_OP.get(kv[0], DEFAULT_SECONDS_PER_OP), kv[0]),
    )
    for name, m in methods:
        guess = graph.n_ops * HEURISTIC_SECONDS_PER_OP.get(name, DEFAULT_SECONDS_PER_OP)
        if m.family != "memory" or guess > seconds:
            continue
        seconds -= guess
        try:
            if m.applies(graph):
                r = m.fn(graph, scenarios)
                out[name] = list(r.order) if isinstance(r, Schedule) else [int(v) for v in r]
        except Exception:  # noqa: BLE001 - a broken heuristic must not break the solver
            continue
    return out


def _heuristics_only(graph, scenarios, objective, budget, ctx: Ctx, seed, t0) -> Schedule:
    """The best of the graph's own order and the cheap heuristics (``_cheap_heuristics``,
    ``HEURISTIC_FLOOR_SECONDS``), with the cheap lower bound: what is returned when no time
    is left when the solve begins, so that cp is never worse than those heuristics."""
    lower = np.asarray(static_lower_bound(graph, scenarios, crossing=False), dtype=np.int64)
    weights = np.asarray(scenarios.weights, dtype=float)
    if objective == "budget":
        den = np.maximum(_budgets(budget, scenarios), 1).astype(float)
        key = lambda pk: float(np.max(pk / den))  # noqa: E731
    elif objective == "minimax":
        den = np.maximum(lower, 1).astype(float)
        key = lambda pk: float(np.max(pk / den))  # noqa: E731
    else:  # weighted; lexicographic by its largest scenario first
        key = lambda pk: float(weights @ pk)  # noqa: E731
    t_floor = time.perf_counter() + HEURISTIC_FLOOR_SECONDS
    cands = {"given": graph.default_order()}
    cands.update(_cheap_heuristics(graph, scenarios, HEURISTIC_FLOOR_SECONDS))
    if 0 < graph.n_ops <= FLOOR_BEAM_MAX_OPS:
        # the warm start's greedy and a beam as wide as the floor's time left allows (on
        # small graphs often the optimum, in milliseconds)
        P = from_graph(graph, scenarios)
        t = time.perf_counter()
        go, _ = beam(P, 1)
        per_width = max(1e-6, time.perf_counter() - t)
        if go is not None:
            cands["greedy"] = go
        left = t_floor - time.perf_counter()
        width = int(min(BEAM_MAX_WIDTH, 0.6 * left / per_width))
        if width >= 2:
            bo, _ = beam(P, width, time_limit=left)
            if bo is not None:
                cands["beam"] = bo
    baselines = {}
    best_name = "given"
    for name, order in cands.items():
        pk = simulate_peak(graph, order, scenarios)
        baselines[name] = [int(x) for x in pk]
        if key(pk) < key(np.asarray(baselines[best_name])):
            best_name = name
    info: dict[str, Any] = {
        "objective": objective,
        "baselines": baselines,
        "best_heuristic": best_name,
        "seed": seed,
        "deterministic": False,
        "phases": [
            {
                "phase": "heuristics",
                "seconds": round(time.perf_counter() - t0, 3),
                "best": best_name,
                "clock_limit": round(ctx.clock.limit, 3),
                "command_deadline": True,
                "skipped": ["problem", "greedy", "beam", "lns"],
            }
        ],
        "engine": "heuristic:" + best_name,
        "objective_value": None,
        "objective_bound": None,
        "gap": None,
        "message": "the time limit was reached before the solver began; returning the "
        f"best of the input's order and the fast heuristics ({best_name})",
        "weak_bound": "the time limit was reached before any bound but the forced-live one",
    }
    if interrupted():
        info["interrupted"] = True
    return make_schedule(
        graph,
        cands[best_name],
        "cp",
        scenarios,
        status=FALLBACK,
        seconds=time.perf_counter() - t0,
        lower_bound=lower,
        info=info,
    )


def _lns_multi(P: Problem, order, *, width: int, per_window: float, **kw):
    """``refine``'s call for graphs above DENSE_MAX_OPS: the LNS, whose windows do not
    cost time linear in the graph, with its own window width and time per window."""
    return lns(
        P,
        order,
        width=min(width, LNS_WIDTH),
        per_window=min(per_window, LNS_PER_WINDOW),
        clock=time.perf_counter,
        **kw,
    )


# the options of ``solve`` a registered call passes on (the others are other methods')
CP_OPTIONS = (
    "objective",
    "budget",
    "time_limit",
    "workers",
    "seed",
    "deterministic",
    "log",
    "progress",
    "deadline",
)


@register("cp", "CP-SAT + exact search: minimum-peak order across scenarios, with proofs", "solver")
def cp_method(graph: Graph, scenarios: Scenarios | None = None, **options: Any) -> Schedule:
    return solve(graph, scenarios, **{k: v for k, v in options.items() if k in CP_OPTIONS})
