"""The overlap problem's data: op and transfer durations per scenario, streams, the
reachability matrix, tick rounding, and the exact evaluation of an order (memory by the
simulator, time by ``cpsched.cost.timeline``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cpsched.analysis.memory import peak
from cpsched.core.errors import InputError
from cpsched.core.graph import Graph, OpKind
from cpsched.core.scenarios import Scenarios, static
from cpsched.core.scenarios import resolve_budget as resolve_scenario_budget
from cpsched.cost.model import Costs, async_class, estimate, is_sync_collective
from cpsched.cost.timeline import default_stream, simulate_timeline
from cpsched.cp.overlap.bounds import reach_matrix

RESOLUTION = 100_000  # ticks per scenario's total work (at least 200 per op)
MAX_LINK_PAIRS = 3_000  # exact multi-scenario mode: order literals at most
K_START = int(OpKind.ASYNC_START)


@dataclass
class OverlapProblem:
    graph: Graph
    scenarios: Scenarios
    costs: Any  # cpsched.cost.model.Costs
    comm_streams: str
    dur: np.ndarray  # [S, n] compute-stream slot (sync collectives included)
    compute: np.ndarray  # [S] compute work without sync collectives
    sync: np.ndarray  # [S] sync collective time
    starts: np.ndarray  # [P] async starts with a transfer
    dones: np.ndarray  # [P] their dones (-1: none)
    classes: tuple[str, ...]  # [P] collective:<kind> | copy | async-compute
    stream: np.ndarray  # [P] stream id
    streams: tuple[str, ...]
    ttime: np.ndarray  # [S, P]
    anc: np.ndarray | None  # anc[v, u]: u is a strict ancestor of v

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
        return simulate_timeline(
            self.graph,
            order,
            self.costs,
            self.scenarios,
            comm_streams=self.comm_streams,
            validate=False,
        )

    def tick_timeline(self, order: Sequence[int], d: np.ndarray, t: np.ndarray):
        """Timeline of ``order`` with integer tick durations ``d[C, n]``, ``t[C, P]``."""
        C = d.shape[0]
        tr = {int(a): t[:, p].astype(np.float64) for p, a in enumerate(self.starts)}
        sc = self.scenarios if C == len(self.scenarios) else copies_scenarios(C)
        return simulate_timeline(
            self.graph,
            order,
            Costs(d.astype(np.float64), tr),
            sc,
            comm_streams=self.comm_streams,
            validate=False,
        )


def copies_scenarios(c: int) -> Scenarios:
    if c == 1:
        return static()
    return Scenarios(
        tuple(f"copy{k}" for k in range(c)), (), np.zeros((c, 0), np.int64), np.ones(c) / c
    )


def build_problem(
    graph: Graph,
    scenarios: Scenarios | None = None,
    *,
    device: Any = "h100",
    profile: Any = None,
    costs: Any = None,
    comm_streams: str = "shared",
    reach: bool = True,
) -> OverlapProblem:
    """Durations and transfers of ``graph`` per scenario (``cpsched.cost.model.estimate`` unless
    ``costs`` is given: a ``Costs``, or ``(op[S, n], {start: [S]})``)."""
    scenarios = scenarios or static()
    n_s, n = len(scenarios), graph.n_ops
    if costs is None:
        costs = estimate(graph, device, scenarios, profile)
    elif not isinstance(costs, Costs):
        op, tr_in = costs
        costs = Costs(
            np.asarray(op, dtype=np.float64).reshape(-1, n),
            {int(k): np.asarray(v, dtype=np.float64).reshape(-1) for k, v in dict(tr_in).items()},
        )
    op = np.asarray(costs.op, dtype=np.float64)
    if op.ndim == 1:
        op = op[None, :]
    if op.shape[0] == 1 and n_s > 1:
        op = np.repeat(op, n_s, axis=0)
    if op.shape != (n_s, n):
        raise InputError(f"costs cover {op.shape}, expected {(n_s, n)}")
    costs = Costs(op, dict(costs.transfer), costs.unit, costs.device, costs.step_overhead)

    def tr(i: int) -> np.ndarray:
        t = costs.transfer.get(i)
        if t is None:
            return np.zeros(n_s)
        return np.broadcast_to(np.asarray(t, dtype=np.float64).reshape(-1), (n_s,)).copy()

    dur = op.copy()
    sync = np.zeros(n_s)
    rows = []
    for i in sorted(
        set(np.flatnonzero(graph.kinds == K_START).tolist()) | set(int(x) for x in costs.transfer)
    ):
        cls = async_class(graph, i)
        if cls is None:
            continue
        t = tr(i)
        if is_sync_collective(graph, i):
            dur[:, i] += t
            if cls.startswith("collective:"):
                sync += t
            continue
        if graph.kinds[i] != K_START:
            continue
        rows.append((i, int(graph.async_done[i]), cls, default_stream(cls, comm_streams), t))
    names: list[str] = []
    for r in rows:
        if r[3] not in names:
            names.append(r[3])
    P = len(rows)
    return OverlapProblem(
        graph=graph,
        scenarios=scenarios,
        costs=costs,
        comm_streams=comm_streams,
        dur=dur,
        compute=op.sum(axis=1) - 0.0,
        sync=sync,
        starts=np.array([r[0] for r in rows], dtype=np.int64),
        dones=np.array([r[1] for r in rows], dtype=np.int64),
        classes=tuple(r[2] for r in rows),
        stream=np.array([names.index(r[3]) for r in rows], dtype=np.int64),
        streams=tuple(names),
        ttime=np.stack([r[4] for r in rows], axis=1) if P else np.zeros((n_s, 0)),
        anc=reach_matrix(graph) if reach else None,
    )


@dataclass
class Candidate:
    name: str
    order: list[int]
    peak: np.ndarray  # [S]
    makespan: np.ndarray  # [S]
    exposed: np.ndarray  # [S]
    distance: int  # sum over async collective pairs of done - start index
    inflight_ok: bool
    feasible: bool = True
    timeline: Any = None

    def row(self, names: Sequence[str]) -> dict:
        return {
            "method": self.name,
            "feasible": bool(self.feasible),
            "peak_bytes": {k: int(v) for k, v in zip(names, self.peak)},
            "makespan": {k: float(v) for k, v in zip(names, self.makespan)},
            "exposed_comm": {k: float(v) for k, v in zip(names, self.exposed)},
            "distance": int(self.distance),
        }


def collective_pairs(prob: OverlapProblem) -> np.ndarray:
    return np.array(
        [
            p
            for p in range(prob.P)
            if prob.classes[p].startswith("collective:") and prob.dones[p] >= 0
        ],
        dtype=np.int64,
    )


def total_distance(prob: OverlapProblem, order: Sequence[int]) -> int:
    """Sum over async collective pairs of (done index - start index): the seed's metric."""
    sel = collective_pairs(prob)
    if sel.size == 0:
        return 0
    pos = np.empty(prob.n, dtype=np.int64)
    pos[np.asarray(order, dtype=np.int64)] = np.arange(prob.n)
    return int((pos[prob.dones[sel]] - pos[prob.starts[sel]]).sum())


def overlap_limits(prob: OverlapProblem, overlap_limit) -> dict[str, int]:
    """In-flight limit per kind (collective kind, ``copy``, ``async-compute``)."""
    if overlap_limit is None:
        return {}
    kinds = sorted({prob.kind_of(p) for p in range(prob.P) if prob.dones[p] >= 0})
    if isinstance(overlap_limit, Mapping):
        out = {k: int(v) for k, v in overlap_limit.items() if k in kinds}
    else:
        out = {k: int(overlap_limit) for k in kinds if k not in ("copy", "async-compute")}
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


def evaluate(
    prob: OverlapProblem,
    name: str,
    order: Sequence[int],
    budget: np.ndarray | None,
    limits: Mapping[str, int],
) -> Candidate:
    """Exact peak (simulator) and timing (timeline) of a valid order."""
    order = [int(i) for i in order]
    pk = peak(prob.graph, order, prob.scenarios)
    tl = prob.timeline(order)
    ok = inflight_ok(prob, order, limits)
    feas = ok and (budget is None or bool(np.all(pk <= budget)))
    return Candidate(
        name,
        order,
        pk,
        np.asarray(tl.makespan, dtype=np.float64),
        np.asarray(tl.exposed_comm, dtype=np.float64),
        total_distance(prob, order),
        ok,
        feas,
        tl,
    )


def resolve_budget(budget, scenarios: Scenarios) -> np.ndarray | None:
    """Bytes per scenario, or None without a budget (``cpsched.core.scenarios``'s one
    budget parser)."""
    return None if budget is None else resolve_scenario_budget(budget, scenarios)


def reduced_edges(g: Graph, anc: np.ndarray | None) -> list[tuple[int, int]]:
    """Direct dependences ``(u, v)`` minus those implied through another predecessor."""
    out: list[tuple[int, int]] = []
    for v in range(g.n_ops):
        ps = g.preds(v)
        if ps.size > 1 and anc is not None:
            implied = anc[ps].any(axis=0)
            ps = ps[~implied[ps]]
        out.extend((int(u), v) for u in ps)
    return out


def max_inflight(prob: OverlapProblem, pos: np.ndarray) -> int:
    delta = np.zeros(prob.n + 1, dtype=np.int64)
    for p in range(prob.P):
        if prob.dones[p] >= 0 and prob.classes[p].startswith("collective:"):
            delta[pos[prob.starts[p]]] += 1
            delta[pos[prob.dones[p]] + 1] -= 1
    return int(np.cumsum(delta).max(initial=0))


class Infeasible(Exception):
    """The model (or a window of it) cannot meet the budget or the horizon."""


def ticks(values: np.ndarray, tick: float, floor1: bool) -> np.ndarray:
    q = np.rint(values / tick).astype(np.int64)
    if floor1:
        return np.maximum(q, 1)
    return np.where(values > 0, np.maximum(q, 1), 0)


def copy_durations(
    prob: OverlapProblem,
    mode: str,
    scenario_objective: str,
    ref: np.ndarray,
    resolution: int,
    per_op: int = 200,
):
    """Time copies: ``(d[C, n], t[C, P], tick[C], copy scenario weights)``; the total work is
    ``max(resolution, per_op * n)`` ticks."""
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
    res = max(int(resolution), int(per_op) * prob.n)
    total = dur.sum(axis=1) + tt.sum(axis=1)
    tick = np.where(total > 0, total / res, 1.0)
    d = np.stack([ticks(dur[c], tick[c], True) for c in range(dur.shape[0])])
    # ops that take no time and allocate nothing may take 0 ticks: their step's memory is
    # never above the previous timed op's, and a zero-size interval cannot sit inside
    # another one of the NoOverlap
    q = np.stack([np.rint(dur[c] / tick[c]) for c in range(dur.shape[0])])
    d = np.where(zero_time_ops(prob)[None, :] & (q == 0).all(axis=0)[None, :], 0, d)
    t = (
        np.stack([ticks(tt[c], tick[c], False) for c in range(dur.shape[0])])
        if prob.P
        else np.zeros((dur.shape[0], 0), np.int64)
    )
    # rounding slack: how much longer than the true times the tick model can be
    over = np.maximum(d * tick[:, None] - dur, 0).sum(axis=1) + (
        np.maximum(t * tick[:, None] - tt, 0).sum(axis=1) if prob.P else 0
    )
    return d, t, tick, over


def zero_time_ops(prob: OverlapProblem) -> np.ndarray:
    """Ops that may take zero ticks: not an async start, no transient bytes, and no device
    buffer they define other than live-in ones."""
    g = prob.graph
    sizes = g.sizes(prob.scenarios)
    allocates = (sizes > 0).any(axis=0) & ~g.buffer_live_in
    out = np.ones(g.n_ops, dtype=bool)
    out[g.buffer_def[allocates]] = False
    out[g.kinds == K_START] = False
    out[(g.transient_bytes(prob.scenarios) > 0).any(axis=0)] = False
    return out


def floor1(d: np.ndarray, ops=None) -> np.ndarray:
    """Durations with at least one tick (for all ops, or for ``ops``): ops ordered by
    literals must not tie."""
    out = d.copy()
    if ops is None:
        return np.maximum(out, 1)
    ops = np.asarray(list(ops), dtype=np.int64)
    out[:, ops] = np.maximum(out[:, ops], 1)
    return out


def pick_mode(prob: OverlapProblem, mode: str) -> str:
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


def free_pairs(prob: OverlapProblem) -> int:
    """Pairs of ops the graph leaves unordered."""
    if prob.anc is None:
        return prob.n * (prob.n - 1) // 2
    return prob.n * (prob.n - 1) // 2 - int(prob.anc.sum())


def fifo_pairs(prob: OverlapProblem) -> int:
    cnt = 0
    for r in range(len(prob.streams)):
        k = int((prob.stream == r).sum())
        cnt += k * (k - 1) // 2
    return cnt
