"""CP-SAT collective overlap: hide communication behind compute under a memory budget.

``solve_overlap(graph, scenarios, ...)`` returns a ``Schedule`` whose order minimises the
makespan (equivalently the exposed communication) of ``cpsched.cost.timeline``'s execution
model, keeping peak memory within a budget in every scenario. Registered as method
``cp-overlap`` (family ``overlap``; it applies to graphs with collectives or async ops).

Execution model (the timeline's): one compute stream runs the ops back to back in the
order; an async start issues its transfer when its own slot ends, on its stream (one
shared ``comm`` stream for collectives, or one per kind), FIFO; the done waits on the
compute stream until the transfer has ended; a sync collective occupies the compute stream
for its transfer time. Times come from ``cpsched.cost.model.estimate`` (device, profile).

Time-indexed CP-SAT model (``objective='makespan'``):

- every op ``i`` is a fixed-size interval ``[s_i, s_i + d_i)`` on the compute stream
  (``NoOverlap``), ``d_i`` in integer ticks. Ops that take time, allocate a buffer, have
  transient bytes or start a transfer take at least one tick; the others may take zero
  (a zero-size interval cannot sit inside another one, and the memory at such a step is
  never above the previous timed step's). The instruction order is the order of the
  starts, zero-tick ops first at a tie, then the base order;
- every data/control/buffer/async dependence ``u -> v`` is ``s_v >= s_u + d_u``;
- every async transfer ``p`` (start ``a``, done ``b``) is an interval ``[x_p, x_p + t_p)``
  with ``x_p >= s_a + d_a`` and ``s_b >= x_p + t_p``; transfers of one stream do not
  overlap and are FIFO in the order of their starts: a literal per pair of unordered starts
  decides both the compute order of the starts and the order of the transfers;
- memory: every buffer is an interval from its defining op's start (0 if live-in) to the
  end of its last user (the horizon if live-out) with its bytes as demand, every op's
  transient bytes an interval over the op, and one ``Cumulative`` per scenario with the
  budget as capacity. The compute stream runs one op at a time, so the usage inside op
  ``v`` equals the simulator's usage at ``v``'s step: the memory model is exact. Small
  graphs also get a redundant step model over pairwise order literals ("buffer live at
  op v" Booleans, one linear constraint per op and scenario), whose propagation proves the
  XLA test modules optimal in well under a second;
- optional in-flight limits (XLA LHS ``*_overlap_limit``): a ``Cumulative`` of capacity
  ``N`` per collective kind over the ``[start, done]`` spans;
- the analytic lower bound (``overlap_bounds``) on the tick durations bounds the makespan;
- objective: the makespan. With several scenarios the durations differ per scenario but
  the order is shared: ``scenario_mode='exact'`` keeps one time copy per scenario, tied
  by one order literal per pair of independent ops, and minimises the weighted makespan
  (``scenario_objective='weighted'``, weights of the scenarios, seconds) or the largest
  makespan relative to its lower bound (``'minimax'``); ``'aggregate'`` (automatic for
  larger graphs) solves one copy on weighted durations and evaluates every scenario
  exactly.

Search: the whole model runs for about a third of the time, then a window LNS re-solves
``k`` consecutive positions of the best order with the rest fixed (times before the
window fixed too, memory exact in steps inside it), on windows placed at the dones that
stall the compute stream; ``k`` grows while windows are solved to optimality quickly.
Hints: every heuristic, plus ``overlap_hints.budget_repair`` (orders over the budget made
feasible by shortening in-flight spans) and ``budget_hoist`` (starts up / dones down as far
as the budget allows).

Status: ``OPTIMAL`` when the whole model was solved to optimality (optimal for the
timeline up to ``info['model']['rounding_slack']``, the tick rounding) or the makespan meets
the lower bound; ``FEASIBLE`` when the solver beat every heuristic; ``HEURISTIC_FALLBACK``
when a heuristic order (possibly hoisted or repaired) was at least as good.

``objective='distance'`` is the seed's surrogate: unit durations (the times are
instruction positions), maximise the sum over async collectives of done index minus start
index, same memory model. Both results are evaluated with the real timeline.

Every order the solver returns is re-simulated: memory by ``cpsched.analysis.memory`` (must be
within the budget), time by ``cpsched.cost.timeline``. The heuristics (``gpu-postprocess``,
``eager-cluster``, ``lhs`` when registered, the memory schedulers, the graph's own order)
are evaluated the same way; the best one within budget is the solver's hint and its
fallback, so the result is never worse than it.

``info`` of the returned schedule: per scenario ``makespan``, ``exposed_comm``,
``makespan_lower_bound``, ``exposed_comm_lower_bound``, ``exposed_gap``; ``budget``;
``hint`` (method, makespan, exposed comm); ``candidates``; ``pairs`` (one row per async
pair or sync collective: start, done, start/done index, distance, transfer time, overlapped
time under the hint and under the result); ``model`` (size, mode, tick, claimed makespan).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from ortools.sat.python import cp_model

from cpsched.cp import runtime
from cpsched.cp.runtime import Clock, SolverConfig, stoppable
from cpsched.cp.overlap.bounds import heads_tails, overlap_lower_bound, reach_matrix
from cpsched.core.errors import InputError
from cpsched.core.graph import Graph, OpKind
from cpsched.methods import register
from cpsched.core.scenarios import Scenarios, static
from cpsched.analysis.schedule import (FALLBACK, FEASIBLE, HEURISTIC, INFEASIBLE, OPTIMAL, Schedule,
                              make_schedule)

METHOD = "cp-overlap"
DEFAULT_TIME_LIMIT = 10.0
RESOLUTION = 100_000          # ticks per scenario's total work (at least 200 per op)
MAX_LINK_PAIRS = 3_000        # exact multi-scenario mode: order literals at most
ORDER_LITERAL_PAIRS = 5_000  # single scenario: explicit order literals up to this many
POSITION_MEMORY_MAX = 6_000   # (buffer groups x ops) for the redundant step memory model
MAX_FIFO_PAIRS = 20_000       # FIFO literals per model at most (else transfers may reorder)
OVERLAP_HEURISTICS = ("gpu-postprocess", "eager-cluster", "lhs")
MEMORY_METHODS = ("xla-default", "cp")
_K_START = int(OpKind.ASYNC_START)


# -------------------------------------------------------------------------------------------
# The problem: durations, transfers, streams
# -------------------------------------------------------------------------------------------

@dataclass
class OverlapProblem:
    graph: Graph
    scenarios: Scenarios
    costs: Any                      # cpsched.cost.model.Costs
    comm_streams: str
    dur: np.ndarray                 # [S, n] compute-stream slot (sync collectives included)
    compute: np.ndarray             # [S] compute work without sync collectives
    sync: np.ndarray                # [S] sync collective time
    starts: np.ndarray              # [P] async starts with a transfer
    dones: np.ndarray               # [P] their dones (-1: none)
    classes: tuple[str, ...]        # [P] collective:<kind> | copy | async-compute
    stream: np.ndarray              # [P] stream id
    streams: tuple[str, ...]
    ttime: np.ndarray               # [S, P]
    anc: np.ndarray | None          # anc[v, u]: u is a strict ancestor of v

    @property
    def n(self) -> int:
        return self.graph.n_ops

    @property
    def P(self) -> int:
        return int(self.starts.size)

    def kind_of(self, p: int) -> str:
        c = self.classes[p]
        return c.split(":", 1)[1] if c.startswith("collective:") else c

    def timeline(self, order: Sequence[int]):
        from cpsched.cost.timeline import simulate_timeline
        return simulate_timeline(self.graph, order, self.costs, self.scenarios,
                                 comm_streams=self.comm_streams, validate=False)

    def tick_timeline(self, order: Sequence[int], d: np.ndarray, t: np.ndarray):
        """Timeline of ``order`` with integer tick durations ``d[C, n]``, ``t[C, P]``."""
        from cpsched.cost.model import Costs
        from cpsched.cost.timeline import simulate_timeline
        C = d.shape[0]
        tr = {int(a): t[:, p].astype(np.float64) for p, a in enumerate(self.starts)}
        sc = self.scenarios if C == len(self.scenarios) else _copies_scenarios(C)
        return simulate_timeline(self.graph, order, Costs(d.astype(np.float64), tr),
                                 sc, comm_streams=self.comm_streams, validate=False)


def _copies_scenarios(c: int) -> Scenarios:
    if c == 1:
        return static()
    return Scenarios(tuple(f"copy{k}" for k in range(c)), (), np.zeros((c, 0), np.int64),
                     np.ones(c) / c)


def build_problem(graph: Graph, scenarios: Scenarios | None = None, *, device: Any = "h100",
                  profile: Any = None, costs: Any = None, comm_streams: str = "shared",
                  reach: bool = True) -> OverlapProblem:
    """Durations and transfers of ``graph`` per scenario (``cpsched.cost.model.estimate`` unless
    ``costs`` is given: a ``Costs``, or ``(op[S, n], {start: [S]})``)."""
    from cpsched.cost.model import Costs, async_class, estimate, is_sync_collective
    from cpsched.cost.timeline import default_stream
    scenarios = scenarios or static()
    n_s, n = len(scenarios), graph.n_ops
    if costs is None:
        costs = estimate(graph, device, scenarios, profile)
    elif not isinstance(costs, Costs):
        op, tr = costs
        costs = Costs(np.asarray(op, dtype=np.float64).reshape(-1, n),
                      {int(k): np.asarray(v, dtype=np.float64).reshape(-1)
                       for k, v in dict(tr).items()})
    op = np.asarray(costs.op, dtype=np.float64)
    if op.ndim == 1:
        op = op[None, :]
    if op.shape[0] == 1 and n_s > 1:
        op = np.repeat(op, n_s, axis=0)
    if op.shape != (n_s, n):
        raise InputError(f"costs cover {op.shape}, expected {(n_s, n)}")
    costs = Costs(op, dict(costs.transfer), costs.unit, costs.device)

    def tr(i: int) -> np.ndarray:
        t = costs.transfer.get(i)
        if t is None:
            return np.zeros(n_s)
        return np.broadcast_to(np.asarray(t, dtype=np.float64).reshape(-1), (n_s,)).copy()

    dur = op.copy()
    sync = np.zeros(n_s)
    rows = []
    for i in sorted(set(np.flatnonzero(graph.kinds == _K_START).tolist())
                    | set(int(x) for x in costs.transfer)):
        cls = async_class(graph, i)
        if cls is None:
            continue
        t = tr(i)
        if is_sync_collective(graph, i):
            dur[:, i] += t
            if cls.startswith("collective:"):
                sync += t
            continue
        if graph.kinds[i] != _K_START:
            continue
        rows.append((i, int(graph.async_done[i]), cls, default_stream(cls, comm_streams), t))
    names: list[str] = []
    for r in rows:
        if r[3] not in names:
            names.append(r[3])
    P = len(rows)
    return OverlapProblem(
        graph=graph, scenarios=scenarios, costs=costs, comm_streams=comm_streams, dur=dur,
        compute=op.sum(axis=1) - 0.0, sync=sync,
        starts=np.array([r[0] for r in rows], dtype=np.int64),
        dones=np.array([r[1] for r in rows], dtype=np.int64),
        classes=tuple(r[2] for r in rows),
        stream=np.array([names.index(r[3]) for r in rows], dtype=np.int64),
        streams=tuple(names),
        ttime=np.stack([r[4] for r in rows], axis=1) if P else np.zeros((n_s, 0)),
        anc=reach_matrix(graph) if reach else None)


# -------------------------------------------------------------------------------------------
# Candidates (heuristic orders), exact evaluation
# -------------------------------------------------------------------------------------------

@dataclass
class Candidate:
    name: str
    order: list[int]
    peak: np.ndarray          # [S]
    makespan: np.ndarray      # [S]
    exposed: np.ndarray       # [S]
    distance: int             # sum over async collective pairs of done - start index
    inflight_ok: bool
    feasible: bool = True
    timeline: Any = None

    def row(self, names: Sequence[str]) -> dict:
        return {"method": self.name, "feasible": bool(self.feasible),
                "peak_bytes": {k: int(v) for k, v in zip(names, self.peak)},
                "makespan": {k: float(v) for k, v in zip(names, self.makespan)},
                "exposed_comm": {k: float(v) for k, v in zip(names, self.exposed)},
                "distance": int(self.distance)}


def _collective_pairs(prob: OverlapProblem) -> np.ndarray:
    return np.array([p for p in range(prob.P) if prob.classes[p].startswith("collective:")
                     and prob.dones[p] >= 0], dtype=np.int64)


def total_distance(prob: OverlapProblem, order: Sequence[int]) -> int:
    """Sum over async collective pairs of (done index - start index): the seed's metric."""
    sel = _collective_pairs(prob)
    if sel.size == 0:
        return 0
    pos = np.empty(prob.n, dtype=np.int64)
    pos[np.asarray(order, dtype=np.int64)] = np.arange(prob.n)
    return int((pos[prob.dones[sel]] - pos[prob.starts[sel]]).sum())


def _limits(prob: OverlapProblem, overlap_limit) -> dict[str, int]:
    """In-flight limit per kind (collective kind, ``copy``, ``async-compute``)."""
    if overlap_limit is None:
        return {}
    kinds = sorted({prob.kind_of(p) for p in range(prob.P) if prob.dones[p] >= 0})
    if isinstance(overlap_limit, Mapping):
        out = {k: int(v) for k, v in overlap_limit.items() if k in kinds}
    else:
        out = {k: int(overlap_limit) for k in kinds
               if k not in ("copy", "async-compute")}
    for k, v in out.items():
        if v < 1:
            raise InputError(f"overlap limit for {k} must be >= 1, got {v}")
    return out


def inflight_ok(prob: OverlapProblem, order: Sequence[int], limits: Mapping[str, int]) -> bool:
    if not limits:
        return True
    pos = np.empty(prob.n, dtype=np.int64)
    pos[np.asarray(order, dtype=np.int64)] = np.arange(prob.n)
    for kind, cap in limits.items():
        delta = np.zeros(prob.n + 1, dtype=np.int64)
        for p in range(prob.P):
            if prob.dones[p] >= 0 and prob.kind_of(p) == kind:
                delta[pos[prob.starts[p]]] += 1
                delta[pos[prob.dones[p]] + 1] -= 1
        if np.cumsum(delta).max(initial=0) > cap:
            return False
    return True


def evaluate(prob: OverlapProblem, name: str, order: Sequence[int], budget: np.ndarray | None,
             limits: Mapping[str, int]) -> Candidate:
    """Exact peak (simulator) and timing (timeline) of a valid order."""
    from cpsched.analysis.memory import peak
    order = [int(i) for i in order]
    pk = peak(prob.graph, order, prob.scenarios)
    tl = prob.timeline(order)
    ok = inflight_ok(prob, order, limits)
    feas = ok and (budget is None or bool(np.all(pk <= budget)))
    return Candidate(name, order, pk, np.asarray(tl.makespan, dtype=np.float64),
                     np.asarray(tl.exposed_comm, dtype=np.float64), total_distance(prob, order),
                     ok, feas, tl)


def _run_method(name: str, graph: Graph, scenarios: Scenarios, opts: dict) -> list[int] | None:
    from cpsched.methods import load_all
    from cpsched.analysis.validate import validate_order
    m = load_all().get(name)
    if m is None or not m.applies(graph):
        return None
    out = m.fn(graph, scenarios, **opts)
    order = list(out.order) if isinstance(out, Schedule) else [int(i) for i in out]
    validate_order(graph, order, what=f"{name} order")
    return order


def memory_candidates(graph: Graph, scenarios: Scenarios, methods: Sequence[str],
                      opts: dict, errors: dict) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    if graph.original_order is not None:
        out["given"] = list(graph.original_order)
    out["topological"] = graph.topological_order()
    for name in methods:
        try:
            order = _run_method(name, graph, scenarios, dict(opts))
        except Exception as e:  # a peer method's failure must not sink the solver
            errors[name] = f"{type(e).__name__}: {e}"
            continue
        if order is not None:
            out[name] = order
    return out


def heuristic_variants(name: str, budget: np.ndarray, bases: Mapping[str, list[int]],
                       opts: Mapping[str, Any]) -> list[tuple[str, dict]]:
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


def overlap_candidates(graph: Graph, scenarios: Scenarios, methods: Sequence[str],
                       bases: Mapping[str, list[int]], budget: np.ndarray, opts: dict,
                       errors: dict) -> dict[str, list[int]]:
    """Orders of every overlap heuristic under each of its ``heuristic_variants``."""
    out: dict[str, list[int]] = {}
    for name in methods:
        for label, o in heuristic_variants(name, budget, bases, opts):
            try:
                order = _run_method(name, graph, scenarios, o)
            except Exception as e:
                errors[label] = f"{type(e).__name__}: {e}"
                continue
            if order is not None:
                out[label] = order
    return out


def family(label: str) -> str:
    """The heuristic a candidate label comes from (``lhs[mem=0.7]`` -> ``lhs``)."""
    return label.split("[", 1)[0].split("(", 1)[0]


def resolve_budget(budget, scenarios: Scenarios) -> np.ndarray | None:
    if budget is None:
        return None
    if isinstance(budget, Mapping):
        try:
            vals = [int(budget[k]) for k in scenarios.names]
        except KeyError as e:
            raise InputError(f"budget names no value for scenario {e}") from None
    elif isinstance(budget, (int, float, np.integer, np.floating)):
        vals = [int(budget)] * len(scenarios)
    else:
        vals = [int(v) for v in budget]
        if len(vals) == 1:
            vals = vals * len(scenarios)
    if len(vals) != len(scenarios):
        raise InputError(f"budget has {len(vals)} values for {len(scenarios)} scenarios")
    return np.asarray(vals, dtype=np.int64)


# -------------------------------------------------------------------------------------------
# The CP-SAT model
# -------------------------------------------------------------------------------------------

class _Model:
    """Time-indexed model over ``C`` time copies sharing one order (see module doc)."""

    def __init__(self, prob: OverlapProblem, d: np.ndarray, t: np.ndarray, horizon: np.ndarray,
                 *, budget: np.ndarray | None, limits: Mapping[str, int], transfers: bool,
                 fifo: bool, peak_vars: bool = False, inflight_var: bool = False,
                 order_literals: bool = False,
                 window: tuple[Sequence[int], int, int] | None = None,
                 prefix_times: Any = None):
        """``window = (order, a, b)``: only the ops at positions ``a..b-1`` of ``order``
        may move; the others keep their order and side of the window (LNS).
        ``prefix_times``: the tick timeline of that order, whose times before the window
        do not depend on it and are fixed."""
        self.prob = prob
        g = prob.graph
        n, P = prob.n, prob.P
        self.C = C = d.shape[0]
        self.d, self.t, self.H = d, t, horizon
        self.m = m = cp_model.CpModel()
        anc = prob.anc
        self.stats: dict[str, Any] = {"ops": n, "pairs": P, "copies": C}
        self.sizes: list[tuple[Any, Any, Any]] = []      # (size var, start, end) to hint
        self.window = window
        if window is not None:
            w_order, wa, wb = window
            self.wpos = np.empty(n, dtype=np.int64)
            self.wpos[np.asarray(w_order, dtype=np.int64)] = np.arange(n)
            self.wgrp = np.where(self.wpos < wa, 0, np.where(self.wpos < wb, 1, 2))
            self.wops = [int(v) for v in w_order[wa:wb]]
        # -- op intervals ---------------------------------------------------------------
        self.s: list[list[Any]] = []
        self.iv: list[list[Any]] = []
        self.M: list[Any] = []
        self.lo: list[np.ndarray] = []
        for c in range(C):
            dc = d[c].astype(np.float64)
            head, tail = heads_tails(anc, dc[None, :])
            lo = head[0].astype(np.int64)
            hi = int(horizon[c]) - tail[0].astype(np.int64)
            if (hi < lo).any():
                raise _Infeasible("horizon below the compute work")
            self.lo.append(lo)
            sc, ic = [], []
            fixed_s = None
            if window is not None and prefix_times is not None:
                fixed_s = np.rint(np.asarray(prefix_times.start)[c]).astype(np.int64)
            for i in range(n):
                if fixed_s is not None and self.wgrp[i] == 0:
                    v = m.new_constant(int(fixed_s[i]))
                    sc.append(v)
                    ic.append(m.new_fixed_size_interval_var(v, int(d[c, i]), f"I{c}_{i}"))
                    continue
                v = m.new_int_var(int(lo[i]), int(hi[i]), f"s{c}_{i}")
                sc.append(v)
                ic.append(m.new_fixed_size_interval_var(v, int(d[c, i]), f"I{c}_{i}"))
            m.add_no_overlap(ic)
            self.s.append(sc)
            self.iv.append(ic)
            Mc = m.new_int_var(0, int(horizon[c]), f"M{c}")
            self.M.append(Mc)
            succ_cnt = np.diff(g.succ_ptr)
            for i in np.flatnonzero(succ_cnt == 0):
                m.add(Mc >= sc[i] + int(d[c, i]))
        # -- precedences ------------------------------------------------------------------
        edges = _reduced_edges(g, anc)
        self.stats["precedences"] = len(edges)
        for u, v in edges:
            if window is not None and not (self.wgrp[u] == 1 and self.wgrp[v] == 1):
                continue                                  # implied by the fixed chain
            for c in range(C):
                m.add(self.s[c][v] >= self.s[c][u] + int(d[c, u]))
        if window is not None:
            w_order, wa, wb = window
            fixed = [int(v) for k, v in enumerate(w_order) if not (wa <= k < wb)]
            for u, v in zip(fixed, fixed[1:]):
                for c in range(C):
                    m.add(self.s[c][v] >= self.s[c][u] + int(d[c, u]))
            for v in self.wops:
                for c in range(C):
                    if wa > 0:
                        u = int(w_order[wa - 1])
                        m.add(self.s[c][v] >= self.s[c][u] + int(d[c, u]))
                    if wb < n:
                        u = int(w_order[wb])
                        m.add(self.s[c][u] >= self.s[c][v] + int(d[c, v]))
        # -- order literals tying the copies --------------------------------------------------
        self.lit: dict[tuple[int, int], Any] = {}
        if window is not None:
            for k, i in enumerate(self.wops):
                for j in self.wops[k + 1:]:
                    if self._before(i, j) is None:
                        self._order_lit(i, j)
            self.stats["order_literals"] = len(self.lit)
        elif C > 1 or order_literals:
            iu, ju = np.triu_indices(n, 1)
            free = ~(anc[iu, ju] | anc[ju, iu])
            for i, j in zip(iu[free].tolist(), ju[free].tolist()):
                self._order_lit(i, j)
            self.stats["order_literals"] = len(self.lit)
        # -- transfers ----------------------------------------------------------------------
        self.x: list[list[Any]] = [[] for _ in range(C)]
        self.fifo = fifo and transfers
        if transfers and P:
            for c in range(C):
                dc = d[c].astype(np.float64)
                head, tail = heads_tails(anc, dc[None, :])
                fixed_x = {}
                if window is not None and prefix_times is not None:
                    tb = np.rint(np.asarray(prefix_times.transfer_begin)).astype(np.int64)
                    for k_row, a_op in enumerate(prefix_times.pair_start):
                        if self.wgrp[int(a_op)] == 0:
                            fixed_x[int(a_op)] = int(tb[c, k_row])
                for p in range(P):
                    a, b = int(prob.starts[p]), int(prob.dones[p])
                    if a in fixed_x:
                        x = m.new_constant(fixed_x[a])
                        self.x[c].append(x)
                        if b >= 0:
                            m.add(self.s[c][b] >= x + int(t[c, p]))
                        else:
                            m.add(self.M[c] >= x + int(t[c, p]))
                        continue
                    lo = int(head[0, a] + d[c, a])
                    hi = int(horizon[c]) - int(t[c, p]) - (int(tail[0, b]) if b >= 0 else 0)
                    x = m.new_int_var(lo, max(lo, hi), f"x{c}_{p}")
                    if hi < lo:
                        raise _Infeasible("horizon below a transfer's head and tail")
                    self.x[c].append(x)
                    m.add(x >= self.s[c][a] + int(d[c, a]))
                    if b >= 0:
                        m.add(self.s[c][b] >= x + int(t[c, p]))
                    else:
                        m.add(self.M[c] >= x + int(t[c, p]))
                for r in range(len(prob.streams)):
                    sel = [p for p in range(P) if prob.stream[p] == r and t[c, p] > 0]
                    if len(sel) > 1:
                        m.add_no_overlap([m.new_fixed_size_interval_var(
                            self.x[c][p], int(t[c, p]), f"T{c}_{p}") for p in sel])
            if self.fifo:
                self._add_fifo()
        # -- memory -------------------------------------------------------------------------
        self.peak_vars: list[Any] = []
        self.mem_groups = 0
        if budget is not None:
            self._add_memory(budget, peak_vars)
        # -- in-flight limits ---------------------------------------------------------------
        self.inflight: Any = None
        self._add_limits(limits, inflight_var)

    # helpers -------------------------------------------------------------------------------
    def _order_lit(self, i: int, j: int):
        """Literal "i before j" for independent ops (created once, enforced in all copies)."""
        key = (i, j) if i < j else (j, i)
        lit = self.lit.get(key)
        if lit is None:
            a, b = key
            lit = self.m.new_bool_var(f"b{a}_{b}")
            for c in range(self.C):
                self.m.add(self.s[c][b] >= self.s[c][a] + int(self.d[c, a])).only_enforce_if(lit)
                self.m.add(self.s[c][a] >= self.s[c][b] + int(self.d[c, b])).only_enforce_if(~lit)
            self.lit[key] = lit
        return lit if i < j else ~lit

    def _before(self, u: int, v: int) -> bool | None:
        """True/False when the graph (or the fixed part of a window) orders u and v."""
        if self.window is not None:
            gu, gv = self.wgrp[u], self.wgrp[v]
            if gu != gv:
                return bool(gu < gv)
            if gu != 1:
                return bool(self.wpos[u] < self.wpos[v])
        anc = self.prob.anc
        if anc is None:
            return None
        if anc[v, u]:
            return True
        if anc[u, v]:
            return False
        return None

    def _add_fifo(self):
        prob, m = self.prob, self.m
        n_lit = 0
        for r in range(len(prob.streams)):
            sel = [p for p in range(prob.P) if prob.stream[p] == r]
            for k, p in enumerate(sel):
                for q in sel[k + 1:]:
                    a, b = int(prob.starts[p]), int(prob.starts[q])
                    known = self._before(a, b)
                    for c in range(self.C):
                        if known is True:
                            m.add(self.x[c][q] >= self.x[c][p] + int(self.t[c, p]))
                        elif known is False:
                            m.add(self.x[c][p] >= self.x[c][q] + int(self.t[c, q]))
                    if known is not None:
                        continue
                    lit = self._order_lit(a, b)
                    n_lit += 1
                    for c in range(self.C):
                        m.add(self.x[c][q] >= self.x[c][p] + int(self.t[c, p])).only_enforce_if(lit)
                        m.add(self.x[c][p] >= self.x[c][q] + int(self.t[c, q])).only_enforce_if(~lit)
        self.stats["fifo_literals"] = n_lit

    def _span(self, start, end, H: int, name: str):
        """Interval from ``start`` to ``end`` (constants, variables or ``var + const``)."""
        m = self.m
        if isinstance(start, int) or isinstance(end, int):
            return m.new_interval_var(start, end - start, end, name)
        size = m.new_int_var(0, H, name + "_len")
        self.sizes.append((size, start, end))
        return m.new_interval_var(start, size, end, name)

    def _end_expr(self, i: int):
        return self.s[0][i] + int(self.d[0, i])

    def _add_memory(self, budget: np.ndarray, peak_vars: bool):
        prob, m = self.prob, self.m
        g = prob.graph
        sc = prob.scenarios
        sizes = g.sizes(sc)                             # [S, B]
        trans = g.transient_bytes(sc)                   # [S, n]
        H0 = int(self.H[0])
        anc = prob.anc
        const = np.zeros(len(sc), dtype=np.int64)
        groups: dict[tuple, np.ndarray] = {}
        for j in range(g.n_buffers):
            sz = sizes[:, j]
            if not sz.any():
                continue
            li, lo = bool(g.buffer_live_in[j]), bool(g.buffer_live_out[j])
            if li and lo:
                const += sz
                continue
            dfn = int(g.buffer_def[j])
            skey = -1 if li else dfn
            if lo:
                ekey: Any = "H"
            else:
                users = [int(u) for u in g.buffer_users(j)]
                if not users:
                    users = [dfn]
                elif anc is not None and len(users) > 1:
                    # the last user is never an ancestor of another user
                    us = np.asarray(users)
                    sub = anc[np.ix_(us, us)]           # sub[a, b]: us[b] is an ancestor of us[a]
                    users = [u for k, u in enumerate(users) if not sub[:, k].any()]
                ekey = tuple(sorted(users))
            key = (skey, ekey)
            if key in groups:
                groups[key] = groups[key] + sz
            else:
                groups[key] = sz.astype(np.int64).copy()
        self.groups = groups
        self.const_bytes = const
        if self.window is not None:
            # outside the window memory is as in the given order; inside, exact in steps
            self._add_memory_positions(budget, groups, const, trans, self.wops)
            return
        if self.lit and prob.anc is not None \
                and len(groups) * prob.n <= POSITION_MEMORY_MAX:
            self._add_memory_positions(budget, groups, const, trans, range(prob.n))
        ivs, dem = [], []
        ends: dict[tuple, Any] = {}
        self.buffer_ends: list[tuple[Any, tuple]] = []
        for (skey, ekey), sz in groups.items():
            start = 0 if skey == -1 else self.s[0][skey]
            if ekey == "H":
                end: Any = H0
            elif len(ekey) == 1:
                end = self._end_expr(ekey[0])
            else:
                end = ends.get(ekey)
                if end is None:
                    lo = max(int(self.lo[0][u]) + int(self.d[0, u]) for u in ekey)
                    end = m.new_int_var(lo, H0, "E")
                    for u in ekey:
                        m.add(end >= self._end_expr(u))
                    ends[ekey] = end
                    self.buffer_ends.append((end, ekey))
            ivs.append(self._span(start, end, H0, "buf"))
            dem.append(sz)
        for i in range(prob.n):
            if trans[:, i].any():
                ivs.append(self.iv[0][i])
                dem.append(trans[:, i].astype(np.int64))
        self.mem_groups = len(ivs)
        self.stats["memory_intervals"] = len(ivs)
        dem_arr = np.stack(dem, axis=1) if dem else np.zeros((len(sc), 0), np.int64)
        for k in range(len(sc)):
            cap = int(budget[k]) - int(const[k])
            if cap < 0:
                raise _Infeasible(f"live-through buffers alone exceed the budget in {sc.names[k]}")
            dk = dem_arr[k]
            nz = np.flatnonzero(dk > 0)
            if nz.size == 0:
                continue
            gcd = int(np.gcd.reduce(dk[nz]))
            if not peak_vars and int(dk[nz].sum()) <= cap:
                continue                                      # can never bind
            capv: Any = cap // gcd
            if peak_vars:
                capv = m.new_int_var(0, cap // gcd, f"peak{k}")
                self.peak_vars.append((capv, gcd, int(const[k])))
            m.add_cumulative([ivs[i] for i in nz], [int(x) // gcd for x in dk[nz]], capv)

    def _add_memory_positions(self, budget, groups, const, trans, ops):
        """Redundant, exact memory in steps over the order literals: buffer group ``b`` is
        live at op ``v`` iff its definition is not after ``v`` and some end op is not
        before ``v``; one linear constraint per op and scenario."""
        m = self.m
        keys = list(groups)
        n_z = 0

        def before(u: int, v: int):
            """True / False / literal for "u at or before v"."""
            if u == v:
                return True
            known = self._before(u, v)
            if known is not None:
                return known
            return self._order_lit(u, v)

        for v in ops:
            terms: list[tuple[Any, np.ndarray]] = []
            fixed = const.copy() + trans[:, v]
            for key in keys:
                skey, ekey = key
                a = True if skey == -1 else before(skey, v)
                if a is False:
                    continue
                always = ekey == "H"
                ors: list[Any] = []
                if not always:
                    for u in ekey:
                        b = before(v, u)
                        if b is True:
                            always = True
                            break
                        if b is not False:
                            ors.append(b)
                    if not always and not ors:
                        continue
                if a is True and always:
                    fixed = fixed + groups[key]
                    continue
                if always:
                    ors = [True]
                z = m.new_bool_var("live")
                n_z += 1
                for lit in ors:
                    clause = [z]
                    if a is not True:
                        clause.append(~a)
                    if lit is not True:
                        clause.append(~lit)
                    m.add_bool_or(clause)
                terms.append((z, groups[key]))
            for k in range(len(budget)):
                cap = int(budget[k]) - int(fixed[k])
                if cap < 0:
                    raise _Infeasible("an op's own buffers exceed the budget")
                tk = [(z, int(sz[k])) for z, sz in terms if sz[k] > 0]
                if sum(w for _, w in tk) > cap:
                    m.add(sum(w * z for z, w in tk) <= cap)
        self.stats["position_memory_literals"] = n_z

    def _add_limits(self, limits: Mapping[str, int], inflight_var: bool):
        prob, m = self.prob, self.m
        spans: dict[str, list[Any]] = {}
        for p in range(prob.P):
            b = int(prob.dones[p])
            if b < 0:
                continue
            kind = prob.kind_of(p)
            if kind not in limits and not (inflight_var and prob.classes[p].startswith("collective:")):
                continue
            a = int(prob.starts[p])
            e = self._end_expr(b)
            spans.setdefault(kind, []).append(self._span(self.s[0][a], e, int(self.H[0]),
                                                         f"span{p}"))
        for kind, ivs in spans.items():
            if kind in limits and len(ivs) > limits[kind]:
                m.add_cumulative(ivs, [1] * len(ivs), int(limits[kind]))
        if inflight_var:
            allc = [iv for k, ivs in spans.items() for iv in ivs
                    if k not in ("copy", "async-compute")]
            if allc:
                self.inflight = m.new_int_var(0, len(allc), "inflight")
                m.add_cumulative(allc, [1] * len(allc), self.inflight)

    # hints and extraction -----------------------------------------------------------------
    def hint(self, order: Sequence[int], tl) -> None:
        """Hint every variable from the tick timeline ``tl`` of ``order``."""
        m = self.m
        m.clear_hints()
        done: set[int] = set()
        add = m.add_hint

        def hint1(var, val) -> None:                 # constants are shared: hint each once
            if var.index not in done:
                done.add(var.index)
                add(var, val)

        m = _HintProxy(m, hint1)
        pos = np.empty(self.prob.n, dtype=np.int64)
        pos[np.asarray(order, dtype=np.int64)] = np.arange(self.prob.n)
        start = np.rint(np.asarray(tl.start)).astype(np.int64)      # [C, n]
        for c in range(self.C):
            for i, v in enumerate(self.s[c]):
                m.add_hint(v, int(start[c, i]))
            ends = start[c] + self.d[c]
            mk = int(ends.max()) if self.prob.n else 0
            if self.x[c]:
                row_of = {int(a): k for k, a in enumerate(tl.pair_start)}
                tb = np.rint(np.asarray(tl.transfer_begin)).astype(np.int64)
                for p, x in enumerate(self.x[c]):
                    val = int(tb[c, row_of[int(self.prob.starts[p])]])
                    m.add_hint(x, val)
                    mk = max(mk, val + int(self.t[c, p]))
            m.add_hint(self.M[c], mk)
        for (i, j), lit in self.lit.items():
            m.add_hint(lit, bool(pos[i] < pos[j]))
        ends_h = {}
        for end, users in getattr(self, "buffer_ends", []):
            val = int(max(start[0, u] + self.d[0, u] for u in users))
            ends_h[end.index] = val
            m.add_hint(end, val)
        known = {v.index: int(start[0, i]) for i, v in enumerate(self.s[0])}
        known.update(ends_h)

        def value(e) -> int:
            if isinstance(e, (int, np.integer)):
                return int(e)
            coeffs, const = _affine(e)
            return sum(c * known[i] for i, c in coeffs) + const

        for size, st, en in self.sizes:
            m.add_hint(size, max(0, value(en) - value(st)))
        if self.peak_vars or self.inflight is not None:
            from cpsched.analysis.memory import peak
            if self.peak_vars:
                pk = peak(self.prob.graph, order, self.prob.scenarios)
                for k, (v, gcd, const) in enumerate(self.peak_vars):
                    m.add_hint(v, max(0, -(-(int(pk[k]) - const) // gcd)))
            if self.inflight is not None:
                m.add_hint(self.inflight, _max_inflight(self.prob, pos))

    def order_from(self, solver: cp_model.CpSolver) -> list[int]:
        """Ops by start time; at a tie, zero-tick ops first, then the base order."""
        st = np.array([solver.value(v) for v in self.s[0]], dtype=np.int64)
        if self.window is not None:
            rank = self.wpos
        else:
            rank = np.empty(self.prob.n, dtype=np.int64)
            rank[np.asarray(self.prob.graph.topological_order())] = np.arange(self.prob.n)
        keys = np.lexsort((rank, self.d[0] > 0, st))
        return [int(i) for i in keys]


def _reduced_edges(g: Graph, anc: np.ndarray | None) -> list[tuple[int, int]]:
    """Direct dependences ``(u, v)`` minus those implied through another predecessor."""
    out = []
    for v in range(g.n_ops):
        ps = g.preds(v)
        if ps.size > 1 and anc is not None:
            implied = anc[ps].any(axis=0)
            ps = ps[~implied[ps]]
        out.extend((int(u), v) for u in ps)
    return out


def _max_inflight(prob: OverlapProblem, pos: np.ndarray) -> int:
    delta = np.zeros(prob.n + 1, dtype=np.int64)
    for p in range(prob.P):
        if prob.dones[p] >= 0 and prob.classes[p].startswith("collective:"):
            delta[pos[prob.starts[p]]] += 1
            delta[pos[prob.dones[p]] + 1] -= 1
    return int(np.cumsum(delta).max(initial=0))


class _HintProxy:
    """``add_hint`` through a de-duplicating function; everything else from the model."""

    def __init__(self, model, fn):
        self._model, self.add_hint = model, fn

    def __getattr__(self, name):
        return getattr(self._model, name)


def _affine(e) -> tuple[list[tuple[int, int]], int]:
    """``([(var index, coef)], constant)`` of a linear expression."""
    from ortools.sat.python.cp_model_helper import FlatIntExpr
    f = FlatIntExpr(e)
    return [(v.index, int(c)) for v, c in zip(f.vars, f.coeffs)], int(f.offset)


class _Infeasible(Exception):
    pass


def _solve(model: cp_model.CpModel, cfg: SolverConfig, time_limit: float,
           progress: Callable | None = None) -> runtime.Run:
    return runtime.solve(model, cfg, max(0.05, float(time_limit)), progress=progress)


# -------------------------------------------------------------------------------------------
# Entry point
# -------------------------------------------------------------------------------------------

def _ticks(values: np.ndarray, tick: float, floor1: bool) -> np.ndarray:
    q = np.rint(values / tick).astype(np.int64)
    if floor1:
        return np.maximum(q, 1)
    return np.where(values > 0, np.maximum(q, 1), 0)


@stoppable
def solve_overlap(graph: Graph, scenarios: Scenarios | None = None, *,
                  budget: Any = None, slack: float = 0.0, objective: str = "makespan",
                  scenario_objective: str = "weighted", device: Any = "h100",
                  profile: Any = None, costs: Any = None, comm_streams: str = "shared",
                  overlap_limit: Any = None, secondary: str | None = None,
                  convert_sync: bool = False, hint: Sequence[int | str] | None = None,
                  heuristics: Sequence[str] = OVERLAP_HEURISTICS,
                  budget_methods: Sequence[str] = MEMORY_METHODS,
                  scenario_mode: str = "auto", resolution: int = RESOLUTION,
                  hoist: bool = True, lns: bool = True,
                  time_limit: float | None = DEFAULT_TIME_LIMIT, workers: int | None = 2,
                  seed: int | None = 0, log: bool | None = False,
                  deterministic: bool | None = None, progress: Callable | None = None,
                  **_ignored: Any) -> Schedule:
    """Order ``graph`` to hide communication behind compute within a memory budget.

    ``budget``: bytes (one number, one per scenario, or ``{scenario: bytes}``); default
    the peak of the best memory-only order (``budget_methods``, the graph's own order, a
    topological order) times ``1 + slack``. ``objective``: ``'makespan'`` (also accepted:
    ``'overlap'``) or ``'distance'``. ``comm_streams``: ``'shared'`` or ``'per-kind'``.
    ``overlap_limit``: at most N in-flight async collectives per kind (int, or
    ``{kind: N}``). ``secondary``: ``'peak'`` or ``'inflight'`` as a tie-breaker after the
    makespan. ``convert_sync``: split sync collectives into start/done pairs first (the
    schedule is then of the converted graph). ``hint``: an extra candidate order.
    """
    t0 = time.perf_counter()
    scenarios = scenarios or static()
    time_limit = DEFAULT_TIME_LIMIT if time_limit is None else float(time_limit)
    workers = 2 if workers is None else int(workers)
    seed = 0 if seed is None else int(seed)
    cfg = SolverConfig(time_limit, workers, seed, bool(deterministic), bool(log))
    objective = {"overlap": "makespan", None: "makespan"}.get(objective, objective)
    if objective in ("weighted", "minimax"):
        scenario_objective, objective = objective, "makespan"
    if objective not in ("makespan", "distance"):
        raise InputError(f"cp-overlap objective is 'makespan' or 'distance', not {objective!r}")
    if scenario_objective not in ("weighted", "minimax"):
        raise InputError(f"scenario objective is 'weighted' or 'minimax', not {scenario_objective!r}")
    if secondary not in (None, "peak", "inflight"):
        raise InputError(f"secondary is 'peak' or 'inflight', not {secondary!r}")
    if slack < 0:
        raise InputError("slack must be >= 0")
    if convert_sync:
        try:
            from cpsched.heuristics.common import convert_sync_collectives
        except ImportError:
            raise InputError("converting sync collectives needs cpsched.heuristics.common") from None
        graph = convert_sync_collectives(graph)

    prob = build_problem(graph, scenarios, device=device, profile=profile, costs=costs,
                         comm_streams=comm_streams)
    names = scenarios.names
    limits = _limits(prob, overlap_limit)
    errors: dict[str, str] = {}
    hopts = {"device": device, "seed": seed, "comm_streams": comm_streams}
    if profile is not None:
        hopts["profile"] = profile

    # -- budget -------------------------------------------------------------------------------
    mem_methods = list(budget_methods)
    t_mem = min(0.15 * time_limit, 10.0)
    mem_opts = dict(hopts, time_limit=t_mem, workers=workers)
    mem_orders = memory_candidates(graph, scenarios, mem_methods, mem_opts, errors)
    from cpsched.analysis.memory import lower_bound as mem_lb, peak as mem_peak
    lbm = np.maximum(mem_lb(graph, scenarios), 1)
    mem_peaks = {k: mem_peak(graph, o, scenarios) for k, o in mem_orders.items()}
    best_mem = min(mem_peaks, key=lambda k: (float(np.max(mem_peaks[k] / lbm)),
                                             float(np.sum(mem_peaks[k]))))
    budget_arr = resolve_budget(budget, scenarios)
    budget_source = "given"
    if budget_arr is None:
        budget_arr = np.floor(mem_peaks[best_mem] * (1.0 + float(slack))).astype(np.int64)
        budget_arr = np.maximum(budget_arr, mem_peaks[best_mem])
        budget_source = f"{best_mem} peak x (1 + {slack:g})"

    # -- candidates ----------------------------------------------------------------------------
    cand_orders: dict[str, list[int]] = dict(mem_orders)
    heur = [h for h in heuristics if h != METHOD]
    cand_orders.update(overlap_candidates(graph, scenarios, heur,
                                          {best_mem: mem_orders[best_mem]}, budget_arr,
                                          dict(hopts), errors))
    if hint is not None:
        from cpsched.heuristics.common import check_order_option
        cand_orders["hint"] = check_order_option(graph, hint)
    # -- bounds ---------------------------------------------------------------------------------
    is_coll = np.array([c.startswith("collective:") for c in prob.classes], dtype=bool)
    lb = overlap_lower_bound(graph, prob.dur, prob.starts, prob.dones, prob.ttime, prob.stream,
                             prob.sync, is_coll, prob.anc)
    ref = np.maximum(lb.makespan, 1e-30)
    w = scenarios.weights

    cands: list[Candidate] = []
    seen: set[tuple] = set()
    for k, o in cand_orders.items():
        key = tuple(o)
        if key in seen:
            continue
        seen.add(key)
        cands.append(evaluate(prob, k, o, budget_arr, limits))


    def score(c: Candidate) -> tuple:
        if objective == "distance":
            main = -float(c.distance)
        elif scenario_objective == "weighted":
            main = float(w @ c.makespan)
        else:
            main = float(np.max(c.makespan / ref))
        return (main, float(np.max(c.peak / np.maximum(budget_arr, 1))))

    # budget-aware hoisting of the best few feasible orders (and the memory order)
    if objective == "makespan" and prob.P and hoist:
        from cpsched.cp.overlap.hints import budget_hoist

        def ms_obj(o: list[int]) -> float:
            tl = prob.timeline(o)
            ms = np.asarray(tl.makespan, dtype=np.float64)
            return float(w @ ms) if scenario_objective == "weighted" else float(np.max(ms / ref))

        from cpsched.cp.overlap.hints import budget_repair
        deadline = t0 + 0.3 * time_limit
        for c in sorted((c for c in cands if not c.feasible and c.inflight_ok), key=score)[:4]:
            o = budget_repair(graph, scenarios, c.order, budget_arr, prob.starts, prob.dones,
                              ms_obj, deadline=deadline)
            if o is not None and tuple(o) not in seen:
                seen.add(tuple(o))
                cands.append(evaluate(prob, f"repair({c.name})", o, budget_arr, limits))
        pool0 = sorted((c for c in cands if c.feasible), key=score)[:3]
        mem_c = next((c for c in cands if c.name == best_mem and c.feasible), None)
        if mem_c is not None and mem_c not in pool0:
            pool0.append(mem_c)
        deadline = t0 + 0.4 * time_limit
        for c in pool0:
            o = budget_hoist(graph, scenarios, c.order, budget_arr, prob.starts, prob.dones,
                             ms_obj, (lambda o: inflight_ok(prob, o, limits)) if limits else None,
                             deadline=deadline)
            if tuple(o) not in seen:
                seen.add(tuple(o))
                cands.append(evaluate(prob, f"hoist({c.name})", o, budget_arr, limits))

    feasible = [c for c in cands if c.feasible]
    best_heur = min(feasible, key=score) if feasible else None
    hint_cand = best_heur or min(cands, key=lambda c: float(np.max(c.peak / budget_arr)))

    # -- solve -----------------------------------------------------------------------------------
    model_info: dict[str, Any] = {"objective": objective}
    solver_status = "NOT_RUN"
    sol_cand: Candidate | None = None
    solver_bound_ms: np.ndarray | None = None
    proven = False
    clock = Clock(time_limit, cfg.deterministic, t0)
    if cfg.deterministic and objective == "makespan" and prob.P and hoist:
        clock.spend(0.4 * time_limit)           # the hoisting phase's nominal share
    remaining = clock.left()
    nothing_to_do = prob.P == 0 or (objective == "distance" and _collective_pairs(prob).size == 0)
    if nothing_to_do:
        model_info["note"] = ("no async transfer: every order has the same makespan"
                              if prob.P == 0 else "no async collective pair: distance is 0")
        proven = best_heur is not None
    else:
        try:
            if objective == "makespan":
                def score_fn(o: list[int]) -> float:
                    c = evaluate(prob, "lns", o, budget_arr, limits)
                    return score(c)[0] if c.feasible else math.inf

                out = _solve_makespan(prob, hint_cand, best_heur is not None, budget_arr,
                                      limits, scenario_objective, scenario_mode, resolution,
                                      secondary, max(0.1, remaining), cfg, progress, ref,
                                      score_fn, lns)
            else:
                out = _solve_distance(prob, hint_cand, best_heur is not None, budget_arr, limits,
                                      max(0.1, remaining), cfg, progress)
            order, solver_status, model_info2, solver_bound_ms, proven = out
            model_info.update(model_info2)
            if order is not None:
                sol_cand = evaluate(prob, METHOD, order, budget_arr, limits)
        except _Infeasible as e:
            solver_status = INFEASIBLE
            model_info["note"] = str(e)

    # -- choose -------------------------------------------------------------------------------
    pool = [c for c in ([sol_cand] if sol_cand is not None else []) + cands if c.feasible]
    if pool:
        final = min(pool, key=score)
        if sol_cand is not None and sol_cand.feasible and score(sol_cand) <= score(final):
            final = sol_cand
    else:
        final = min(cands, key=lambda c: float(np.max(c.peak / budget_arr)))
    if not final.feasible:
        status = INFEASIBLE if solver_status == INFEASIBLE else FALLBACK
    elif proven and (final is sol_cand or sol_cand is None
                     or score(final) <= score(sol_cand)):
        status = OPTIMAL
    elif final is sol_cand and best_heur is not None and score(sol_cand) < score(best_heur):
        status = FEASIBLE
    elif final is sol_cand and best_heur is None:
        status = FEASIBLE
    else:
        status = FALLBACK if not nothing_to_do else HEURISTIC

    # -- bounds and report ----------------------------------------------------------------------
    ms_lb = lb.makespan.copy()
    if solver_bound_ms is not None:
        ms_lb = np.maximum(ms_lb, solver_bound_ms)
    ex_lb = lb.exposed_comm.copy()
    pure = bool(prob.P == 0 or (np.all(is_coll) and np.all(prob.dones >= 0)))
    if pure:
        ex_lb = np.maximum(ex_lb, ms_lb - lb.compute)
    ms_lb = np.minimum(ms_lb, final.makespan)
    ex_lb = np.clip(ex_lb, 0.0, final.exposed)
    if objective == "makespan" and final.feasible and np.all(final.makespan <= ms_lb * (1 + 1e-9)):
        status = OPTIMAL
    tl_hint = best_heur.timeline if best_heur is not None else None
    info: dict[str, Any] = {
        "objective": objective, "scenario_objective": scenario_objective,
        "unit": prob.costs.unit, "comm_streams": comm_streams,
        "budget": {k: int(v) for k, v in zip(names, budget_arr)},
        "budget_source": budget_source,
        "makespan": {k: float(v) for k, v in zip(names, final.makespan)},
        "exposed_comm": {k: float(v) for k, v in zip(names, final.exposed)},
        "compute_time": {k: float(v) for k, v in zip(names, lb.compute)},
        "makespan_lower_bound": {k: float(v) for k, v in zip(names, ms_lb)},
        "exposed_comm_lower_bound": {k: float(v) for k, v in zip(names, ex_lb)},
        "exposed_gap": {k: (float((e - b) / e) if e > 0 else 0.0)
                        for k, e, b in zip(names, final.exposed, ex_lb)},
        "lower_bound_kind": dict(zip(names, lb.which)),
        "distance": int(final.distance),
        "chosen": final.name,
        "hint": ({"method": best_heur.name, **best_heur.row(names)} if best_heur else None),
        "candidates": [c.row(names) for c in cands],
        "solver_status": solver_status,
        "model": model_info,
        "overlap_limit": dict(limits),
        "errors": errors,
        "pairs": _pair_table(final.timeline, tl_hint, names),
    }
    if runtime.interrupted():
        info["interrupted"] = True
    if not final.feasible:
        info["message"] = "no order within the budget was found; returned the lowest-peak one"
    elif final is not sol_cand and sol_cand is not None:
        info["message"] = f"the solver did not beat {final.name}; returned it"
    return make_schedule(graph, final.order, METHOD, scenarios, status=status,
                         seconds=time.perf_counter() - t0, claimed_peak=final.peak, info=info)


def _pair_table(tl_after, tl_before, names: Sequence[str]) -> list[dict]:
    rows = []
    before = {}
    if tl_before is not None:
        for k in range(tl_before.pair_start.size):
            before[int(tl_before.pair_start[k])] = k
    g = tl_after.graph

    def dist(tl, k):
        di = int(tl.pair_done_index[k])
        return di - int(tl.pair_start_index[k]) if di >= 0 else 0

    for k in range(tl_after.pair_start.size):
        a = int(tl_after.pair_start[k])
        d = int(tl_after.pair_done[k])
        row = {"start": g.op_names[a], "done": g.op_names[d] if d >= 0 else None,
               "class": tl_after.pair_class[k], "sync": bool(tl_after.pair_sync[k]),
               "start_index": int(tl_after.pair_start_index[k]),
               "done_index": int(tl_after.pair_done_index[k]),
               "distance": dist(tl_after, k),
               "transfer_time": {n: float(v) for n, v in zip(names, tl_after.transfer_time[:, k])},
               "overlapped_after": {n: float(v) for n, v in zip(names, tl_after.overlapped[:, k])},
               "exposed_after": {n: float(v) for n, v in zip(names, tl_after.wait[:, k])}}
        kb = before.get(a)
        if kb is not None:
            row["start_index_before"] = int(tl_before.pair_start_index[kb])
            row["done_index_before"] = int(tl_before.pair_done_index[kb])
            row["distance_before"] = dist(tl_before, kb)
            row["overlapped_before"] = {n: float(v) for n, v in
                                        zip(names, tl_before.overlapped[:, kb])}
        rows.append(row)
    return rows


def _copy_durations(prob: OverlapProblem, mode: str, scenario_objective: str, ref: np.ndarray,
                    resolution: int):
    """Time copies: ``(d[C, n], t[C, P], tick[C], copy scenario weights)``."""
    n_s = len(prob.scenarios)
    if mode == "aggregate" and n_s > 1:
        if scenario_objective == "weighted":
            c = prob.scenarios.weights
        else:
            c = 1.0 / (n_s * ref)
        dur = (c[:, None] * prob.dur).sum(axis=0)[None, :]
        tt = (c[:, None] * prob.ttime).sum(axis=0)[None, :]
    else:
        dur, tt = prob.dur, prob.ttime
    res = max(int(resolution), 200 * prob.n)
    total = dur.sum(axis=1) + tt.sum(axis=1)
    tick = np.where(total > 0, total / res, 1.0)
    d = np.stack([_ticks(dur[c], tick[c], True) for c in range(dur.shape[0])])
    # ops that take no time and allocate nothing may take 0 ticks: their step's memory is
    # never above the previous timed op's, and a zero-size interval cannot sit inside
    # another one of the NoOverlap
    q = np.stack([np.rint(dur[c] / tick[c]) for c in range(dur.shape[0])])
    d = np.where(zero_time_ops(prob)[None, :] & (q == 0).all(axis=0)[None, :], 0, d)
    t = np.stack([_ticks(tt[c], tick[c], False) for c in range(dur.shape[0])]) \
        if prob.P else np.zeros((dur.shape[0], 0), np.int64)
    # rounding slack: how much longer than the true times the tick model can be
    over = (np.maximum(d * tick[:, None] - dur, 0).sum(axis=1)
            + (np.maximum(t * tick[:, None] - tt, 0).sum(axis=1) if prob.P else 0))
    return d, t, tick, over


def zero_time_ops(prob: OverlapProblem) -> np.ndarray:
    """Ops that may take zero ticks: not an async start, no transient bytes, and no device
    buffer they define other than live-in ones."""
    g = prob.graph
    sizes = g.sizes(prob.scenarios)
    allocates = (sizes > 0).any(axis=0) & ~g.buffer_live_in
    out = np.ones(g.n_ops, dtype=bool)
    out[g.buffer_def[allocates]] = False
    out[g.kinds == _K_START] = False
    out[(g.transient_bytes(prob.scenarios) > 0).any(axis=0)] = False
    return out


def _floor1(d: np.ndarray, ops=None) -> np.ndarray:
    """Durations with at least one tick (for all ops, or for ``ops``): ops ordered by
    literals must not tie."""
    out = d.copy()
    if ops is None:
        return np.maximum(out, 1)
    ops = np.asarray(list(ops), dtype=np.int64)
    out[:, ops] = np.maximum(out[:, ops], 1)
    return out


def _pick_mode(prob: OverlapProblem, mode: str) -> str:
    if len(prob.scenarios) == 1:
        return "single"
    if mode in ("exact", "aggregate"):
        if mode == "exact" and prob.anc is None:
            return "aggregate"
        return mode
    if prob.anc is None:
        return "aggregate"
    n = prob.n
    free = n * (n - 1) // 2 - int(prob.anc.sum())
    return "exact" if free <= MAX_LINK_PAIRS else "aggregate"


def _free_pairs(prob: OverlapProblem) -> int:
    """Pairs of ops the graph leaves unordered."""
    if prob.anc is None:
        return prob.n * (prob.n - 1) // 2
    return prob.n * (prob.n - 1) // 2 - int(prob.anc.sum())


def _fifo_pairs(prob: OverlapProblem) -> int:
    cnt = 0
    for r in range(len(prob.streams)):
        k = int((prob.stream == r).sum())
        cnt += k * (k - 1) // 2
    return cnt


def _objective(model: "_Model", prob: OverlapProblem, scenario_objective: str, tick, ref,
               horizon):
    """The makespan objective over the time copies, and its integer coefficients."""
    m, C = model.m, model.C
    if C == 1:
        return model.M[0], np.ones(1, dtype=np.int64), None
    if scenario_objective == "weighted":
        c = prob.scenarios.weights * tick
        coef = np.maximum(np.rint(1000 * c / c.max()), 1).astype(np.int64)
        return sum(int(coef[k]) * model.M[k] for k in range(C)), coef, None
    r = tick / ref                                  # makespan ratio per tick
    coef = np.maximum(np.rint(1e6 * r / r.max()), 1).astype(np.int64)
    z = m.new_int_var(0, int(max(int(coef[k]) * int(horizon[k]) for k in range(C))), "z")
    for k in range(C):
        m.add(z >= int(coef[k]) * model.M[k])
    return z, coef, z


def _tick_objective(ms_ticks: np.ndarray, coef: np.ndarray, minimax: bool) -> int:
    v = coef * np.asarray(ms_ticks, dtype=np.int64)
    return int(v.max() if minimax else v.sum())


def _solve_makespan(prob, hint_cand, hint_ok, budget, limits, scenario_objective, scenario_mode,
                    resolution, secondary, time_limit, cfg, progress, ref, score_fn=None,
                    lns=True):
    clock = Clock(time_limit, cfg.deterministic)
    mode = _pick_mode(prob, scenario_mode)
    d, t, tick, over = _copy_durations(prob, mode, scenario_objective, ref, resolution)
    C = d.shape[0]
    d_lns = d
    lit_mode = C > 1 or _free_pairs(prob) <= ORDER_LITERAL_PAIRS
    if lit_mode:
        d = _floor1(d)
        over = over + (d - d_lns).sum(axis=1) * tick
    tl_h = prob.tick_timeline(hint_cand.order, d, t)
    hint_ms = np.atleast_1d(np.rint(tl_h.makespan)).astype(np.int64)
    serial = d.sum(axis=1) + t.sum(axis=1)
    horizon = hint_ms if hint_ok else serial
    fifo = _fifo_pairs(prob) <= MAX_FIFO_PAIRS
    model = _Model(prob, d, t, horizon, budget=budget, limits=limits, transfers=True, fifo=fifo,
                   peak_vars=secondary == "peak", inflight_var=secondary == "inflight",
                   order_literals=lit_mode and C == 1)
    m = model.m
    # the analytic bound on the tick durations is valid in the model: give it to the solver
    is_coll = np.array([c.startswith("collective:") for c in prob.classes], dtype=bool)
    lb_t = overlap_lower_bound(prob.graph, d.astype(np.float64), prob.starts, prob.dones,
                               t.astype(np.float64), prob.stream, np.zeros(C), is_coll,
                               prob.anc).makespan
    info_lb = [int(math.ceil(x - 1e-6)) for x in lb_t]
    for c in range(C):
        if info_lb[c] > int(horizon[c]):
            raise _Infeasible("horizon below the lower bound")
        m.add(model.M[c] >= info_lb[c])
    obj, coef, z = _objective(model, prob, scenario_objective, tick, ref, horizon)
    m.minimize(obj)
    model.hint(hint_cand.order, tl_h)
    info = {"mode": mode, "tick": [float(x) for x in tick], "fifo": fifo,
            "rounding_slack": [float(x) for x in over], **model.stats,
            "hint_makespan_ticks": [int(x) for x in hint_ms], "bound_ticks": info_lb}
    use_lns = lns and hint_ok and score_fn is not None
    share = 0.35 if use_lns else 1.0
    t_main = time_limit * share * (0.8 if secondary else 1.0)
    t1 = time.perf_counter()
    run = _solve(m, cfg, t_main, progress)
    clock.spend(t_main)
    solver = run.solver
    info["solve_seconds"] = round(time.perf_counter() - t1, 3)
    name = run.status
    if not run.solved:
        if run.status == runtime.INFEASIBLE:
            raise _Infeasible("the model is infeasible under the budget")
        if not use_lns:
            return None, name, info, None, False
        order = list(hint_cand.order)
    else:
        order = model.order_from(solver)
        info["claimed_makespan"] = [float(solver.value(model.M[c]) * tick[c]) for c in range(C)]
        info["objective_value"] = float(solver.objective_value)
        info["objective_bound"] = float(solver.best_objective_bound)
    # optimal in the tick model: optimal for the timeline up to info.model.rounding_slack
    proven = run.optimal and mode in ("single", "exact") and fifo
    bound_ms = None
    if mode == "single" and fifo and run.solved:
        bound_ms = np.array([max(0.0, solver.best_objective_bound * tick[0] - over[0])])
    if use_lns and not proven:
        if score_fn(order) > score_fn(hint_cand.order):
            order = list(hint_cand.order)
        remaining = clock.left() - (0.2 * time_limit if secondary else 0.0)
        order, lns_info = _lns(prob, order, d_lns, t, budget, limits, fifo, scenario_objective, tick,
                               ref, score_fn, remaining, cfg)
        info["lns"] = lns_info
    if secondary:
        tl_s = prob.tick_timeline(order, d, t)
        ms_s = np.atleast_1d(np.rint(tl_s.makespan)).astype(np.int64)
        m.add(obj <= _tick_objective(ms_s, coef, z is not None))
        if secondary == "peak":
            m.minimize(sum(v for v, _, _ in model.peak_vars))
        else:
            m.minimize(model.inflight)
        model.hint(order, tl_s)
        clock.spend(remaining if use_lns and not proven else 0.0)
        rest = clock.left()
        run2 = _solve(m, cfg, max(0.1, rest))
        info["secondary_status"] = run2.status
        if run2.solved:
            order = model.order_from(run2.solver)
    return order, name, info, bound_ms, proven


def _lns(prob, order, d, t, budget, limits, fifo, scenario_objective, tick, ref, score_fn,
         time_limit, cfg):
    """Window LNS: re-optimise ``k`` consecutive positions with the rest of the order fixed;
    windows sit around the dones that stall the compute stream (or at random)."""
    t0 = time.perf_counter()
    clock = Clock(time_limit, cfg.deterministic, t0)
    rng = np.random.default_rng(cfg.seed)
    n = prob.n
    cur = list(order)
    cur_score = score_fn(cur)
    k = min(n, 40)
    steps = improved = 0
    w = prob.scenarios.weights
    while True:
        left = clock.left()
        if left < 0.3 or n < 3:
            break
        pos = np.empty(n, dtype=np.int64)
        pos[np.asarray(cur)] = np.arange(n)
        tl = prob.timeline(cur)
        waits = w @ np.asarray(tl.wait) if len(w) == np.asarray(tl.wait).shape[0] \
            else np.asarray(tl.wait).mean(axis=0)
        rows = np.flatnonzero((waits > 0) & (np.asarray(tl.pair_done) >= 0))
        if rows.size and rng.random() < 0.8:
            r = int(rng.choice(rows, p=waits[rows] / waits[rows].sum()))
            i_d = int(pos[int(tl.pair_done[r])])
            i_s = int(pos[int(tl.pair_start[r])])
            if rng.random() < 0.6:
                a = i_d - int(0.7 * k)
            else:
                a = i_s - k // 3
        else:
            a = int(rng.integers(0, max(1, n - k + 1)))
        a = int(min(max(a, 0), max(0, n - k)))
        b = min(n, a + k)
        dw = _floor1(d, cur[a:b])
        tl_t = prob.tick_timeline(cur, dw, t)
        hms = np.atleast_1d(np.rint(tl_t.makespan)).astype(np.int64)
        step_limit = min(left, max(0.5, min(3.0, time_limit / 8)))
        try:
            mdl = _Model(prob, dw, t, hms, budget=budget, limits=limits, transfers=True,
                         fifo=fifo, window=(cur, a, b), prefix_times=tl_t)
        except _Infeasible:
            steps += 1
            clock.spend(step_limit)
            continue
        obj, _, _ = _objective(mdl, prob, scenario_objective, tick, ref, hms)
        mdl.m.minimize(obj)
        mdl.hint(cur, tl_t)
        ts = time.perf_counter()
        run = _solve(mdl.m, cfg.with_(seed=cfg.seed + steps), step_limit)
        clock.spend(step_limit)
        took = time.perf_counter() - ts
        if cfg.deterministic:
            took = run.stats["deterministic_time"] / runtime.DET_PER_SECOND
        steps += 1
        if run.solved:
            cand = mdl.order_from(run.solver)
            sc = score_fn(cand)
            if sc < cur_score - 1e-15:
                cur, cur_score = cand, sc
                improved += 1
        # adapt the window: grow while windows are solved to optimality quickly
        if run.optimal and took < 0.3 * step_limit:
            k = min(n, int(k * 1.25) + 1)
        elif not run.optimal:
            k = max(10, int(k * 0.8))
    return cur, {"steps": steps, "improved": improved, "window": k,
                 "seconds": round(time.perf_counter() - t0, 2)}


def _solve_distance(prob, hint_cand, hint_ok, budget, limits, time_limit, cfg, progress):
    n = prob.n
    d = np.ones((1, n), dtype=np.int64)
    t = np.zeros((1, prob.P), dtype=np.int64)
    model = _Model(prob, d, t, np.array([n]), budget=budget, limits=limits, transfers=False,
                   fifo=False)
    sel = _collective_pairs(prob)
    s = model.s[0]
    model.m.maximize(sum(s[int(prob.dones[p])] - s[int(prob.starts[p])] for p in sel))
    model.hint(hint_cand.order, prob.tick_timeline(hint_cand.order, d, t))
    run = _solve(model.m, cfg, time_limit, progress)
    info = {"mode": "positions", **model.stats}
    if not run.solved:
        if run.status == runtime.INFEASIBLE:
            raise _Infeasible("the model is infeasible under the budget")
        return None, run.status, info, None, False
    info["objective_value"] = float(run.objective)
    info["objective_bound"] = float(run.bound)
    return model.order_from(run.solver), run.status, info, None, run.optimal


# -------------------------------------------------------------------------------------------
# Registration
# -------------------------------------------------------------------------------------------

def applies(graph: Graph) -> bool:
    return bool(graph.collectives) or bool((graph.kinds == _K_START).any())


@register(METHOD, "CP-SAT: hide communication behind compute (min makespan) under a memory "
          "budget", "overlap", applies=applies)
def cp_overlap(graph: Graph, scenarios: Scenarios | None = None, **options: Any) -> Schedule:
    if "order" in options and options.get("hint") is None:
        options["hint"] = options.pop("order")
    return solve_overlap(graph, scenarios, **options)


__all__ = ["solve_overlap", "build_problem", "evaluate", "total_distance", "OverlapProblem",
           "Candidate", "cp_overlap", "applies", "METHOD"]
