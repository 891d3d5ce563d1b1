"""Lower bounds on the joint problem's makespan that hold for every plan, in the costs'
time unit, per scenario.

Why a plan without memory limit bounds every plan within a budget: take any plan (an
order of the main ops with clones and host round trips among them) and delete its clones
and host copies, letting each late reader read the first copy of its buffer instead (its
defining op ended before the clone or the copy-out could start). The timeline simulator
runs the compute stream in the plan's order, each op at the later of the previous op's
end and its inputs' readiness, and each transfer, FIFO on its stream, at the later of its
start op's end and the previous transfer's end. Deleting work from the compute stream and
from the copy stream, and deleting the waits on copies, moves no event later (induction
over the order): the plain order that is left is no slower, and it is an order of the
graph. So the least makespan over all orders, whatever the memory, bounds the makespan of
every plan at every budget:

- ``analytic``: ``cpsched.cp.overlap.bounds.overlap_lower_bound`` on the true durations
  (compute-stream load, head + transfer + tail per collective, chains of collectives, the
  one-machine bound per stream), which holds for every order;
- ``no_memory``: the overlap model (``cp-overlap``) without a memory limit, solved for a
  while: its proven bound over all orders (the tick rounding slack taken off).

Neither depends on the budget: on programs whose communication sets the makespan they
show how much any plan, joint or sequential, can gain over the order alone (the issue's
10 % target is out of reach wherever ``bound > 0.9 * best sequential``).

``memory_cut_bound`` depends on the budget: a cut through one op ``v`` of every plan. In
any plan (an order of the main ops with any number of clones, each timed and replayed as
``cpsched.remat`` writes it), at the step of ``v``:

- every buffer defined by an ancestor of ``v`` (or a program input) and read by ``v``, by
  a descendant of ``v`` (or a program output) has a copy on the device, unless a clone of
  its defining op comes after ``v`` in the order; ``v``'s own inputs, outputs and transient
  are there too. A clone after ``v`` reads its op's inputs after ``v``: each is on the
  device at ``v`` as well, unless it is itself made again after ``v``. So the set of ops
  cloned after ``v`` must bring those bytes within the budget;
- the compute stream runs in the order: ``v`` starts no earlier than ``ES_v`` (the sum of
  its ancestors' times, and, for each async transfer whose done is an ancestor of ``v``,
  the transfer's earliest end, ``overlap_lower_bound``'s chained heads, plus the ops
  forced between the done and ``v``). After that come ``v``, its descendants and every
  clone after ``v`` (``tail_v + R``), the rest of the compute load with the clones
  (``compute - ES_v + R``), and for each transfer started by ``v`` or a descendant ``a``
  of it: the ops from ``v`` to ``a``, the clones that must come before ``a`` (of a buffer
  off the device at ``v`` that is read before ``a``), the transfer and its done's tail.
  ``T_v`` is the least over the clone sets of the largest of these (a small CP-SAT model;
  its proven bound, times rounded down), and ``makespan >= ES_v + T_v``.

With a host link, a buffer a host round trip may serve can instead be on the host at
``v``'s step. Its device copy was then freed before ``v`` by the copy-out's done, which
waits for the copy: ``v`` starts no earlier than the copies to the host of all such
buffers, one at a time on their stream, each from its op's earliest end (the one-machine
bound with release dates). No clone of its op after ``v`` (else it counts as cloned), so
every descendant of ``v`` that reads it reads a copy back issued after ``v``'s step: the
copies back run one at a time from ``v``'s end, and after each the longest of its
readers' tails (the reader and its descendants, or the reader's chain to a later
transfer, the transfer and its done's tail) follows (Jackson's bound, all released at
``v``'s end). The copies are timed as ``cpsched.cp.joint.problem.time_plan`` times them
(either way: latency + bytes / bandwidth). The choice per buffer (kept, cloned, on the host) is
one small CP-SAT model per ``v``, its proven bound. The bound is the largest over ``v``;
where no choice brings some ``v``'s step within the budget, no plan fits (``inf``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from cpsched.core.errors import CpschedError
from cpsched.cp import runtime
from cpsched.cp.joint.problem import JointProblem
from cpsched.cp.overlap.bounds import heads_tails, overlap_lower_bound, reach_matrix
from cpsched.cp.overlap.problem import OverlapProblem
from cpsched.cp.runtime import SolverConfig
from cpsched.remat.policy import recomputable_ops
from cpsched.strategies.options import solver_options
from cpsched.strategies.overlap.method import solve_overlap


def analytic_bound(base: OverlapProblem) -> np.ndarray:
    """``overlap_lower_bound`` on the true op and transfer times: [S]."""
    is_coll = np.array([c.startswith("collective:") for c in base.classes], dtype=bool)
    return overlap_lower_bound(
        base.graph,
        base.dur,
        base.starts,
        base.dones,
        base.ttime,
        base.stream,
        base.sync,
        is_coll,
        base.anc,
    ).makespan


def no_memory_bound(
    base: OverlapProblem, seconds: float, cfg: SolverConfig
) -> tuple[np.ndarray, np.ndarray | None, dict[str, Any]]:
    """The overlap model without a memory limit, ``seconds`` for its whole model (no LNS:
    only the whole model proves a bound): (bound [S], best makespan [S] or None, info).
    The bound is the model's ``makespan_lower_bound`` (at least ``analytic_bound``)."""
    g, sc = base.graph, base.scenarios
    # more than every buffer and transient at once: the budget never binds
    sizes = g.sizes(sc) if g.n_buffers else np.zeros((len(sc), 0), dtype=np.int64)
    unlimited = sizes.sum(axis=1) + g.transient_bytes(sc).sum(axis=1) + 1
    try:
        s = solve_overlap(
            g,
            sc,
            budget=unlimited,
            costs=base.costs,
            comm_streams=base.comm_streams,
            lns=False,
            time_limit=max(0.5, seconds) if cfg.deterministic else seconds,
            **solver_options(cfg),
        )
    except CpschedError as e:
        return analytic_bound(base), None, {"error": str(e)}
    lb = np.array([s.info["makespan_lower_bound"][k] for k in sc.names], dtype=np.float64)
    ms = np.array([s.info["makespan"][k] for k in sc.names], dtype=np.float64)
    return lb, ms, {"status": s.status, "makespan": [float(x) for x in ms]}


def memory_cut_bound(
    prob: JointProblem, seconds_per_cut: float = 1.0, *, cfg: SolverConfig | None = None
) -> tuple[np.ndarray, dict[str, Any]]:
    """The budget-dependent cut bound (module docstring): per scenario the largest over
    ops ``v`` of ``ES_v + T_v`` (``inf``: no plan fits), with the cut that gives it:
    (op, ES_v, T_v) in the costs' unit. ``cfg``: the cut models' solver options (default
    one worker); at ``cfg.deadline`` (``time.perf_counter()``, wall-clock mode) the ops not
    yet cut are left out: each cut is a bound on its own, so the largest so far still holds
    (``info['stopped']``). In deterministic mode each cut's limit is work, so the bound
    does not depend on the load."""
    cfg = SolverConfig(workers=1) if cfg is None else cfg
    deadline = None if cfg.deterministic else cfg.deadline
    base = prob.base
    g, sc = base.graph, base.scenarios
    n_s, n = base.dur.shape
    anc = base.anc if base.anc is not None else reach_matrix(g)
    if anc is None or not g.n_buffers:
        return analytic_bound(base), {"note": "no reachability"}
    dur = base.dur
    head, tail = heads_tails(anc, dur)
    es = _earliest_starts(base, anc, head)
    sizes = g.sizes(sc)
    trans = g.transient_bytes(sc)
    clon = recomputable_ops(g)
    users = [g.buffer_users(b) for b in range(g.n_buffers)]
    host = prob.evict_buffers if prob.transfer is not None else np.zeros(g.n_buffers, bool)
    pairs = [
        (int(a), int(d), c) for c, (a, d) in enumerate(zip(base.starts, base.dones)) if int(d) >= 0
    ]
    out = np.zeros(n_s)
    info: dict[str, Any] = {"cuts": []}
    for s in range(n_s):
        best = float(dur[s].sum())
        arg: tuple[str, float, float | None] | None = None
        for v in range(n):
            seconds = seconds_per_cut
            if deadline is not None:
                seconds = min(seconds, deadline - time.perf_counter())
                if seconds <= 0 or runtime.interrupted():
                    info["stopped"] = f"deadline at {g.op_names[v]}"
                    break
            after = anc[:, v].copy()  # v and its descendants
            after[v] = True
            # after v: its descendants; the compute load; each transfer whose start is v
            # or after it (the work forced from v to the start, the transfer, the tail)
            floors = [float(tail[s, v]), float(dur[s].sum() - es[s, v])]
            chains = []
            for a, d, c in pairs:
                if after[a]:
                    w = float(dur[s, after & (anc[a] | (np.arange(n) == a))].sum())
                    floors.append(w + float(base.ttime[s, c]) + float(tail[s, d]))
                    chains.append((a, len(floors) - 1))
            t = _cut_tail(
                g,
                anc,
                v,
                after,
                sizes[s],
                int(trans[s, v]),
                dur[s],
                clon,
                users,
                _HostCopies(host, prob.host_time[s], es[s], tail[s]),
                int(prob.budget[s]),
                floors,
                chains,
                seconds,
                cfg,
            )
            if t is None:  # no set of clones brings v's step within the budget
                best, arg = math.inf, (g.op_names[v], float(es[s, v]), None)
                break
            val = float(es[s, v]) + t
            if val > best:
                best, arg = val, (g.op_names[v], float(es[s, v]), t)
        out[s] = best
        info["cuts"].append(arg)
    return np.maximum(out, analytic_bound(base)), info


def _earliest_starts(base: OverlapProblem, anc: np.ndarray, head: np.ndarray) -> np.ndarray:
    """``ES[s, v]``: the sum of ``v``'s ancestors' times, and for each async transfer whose
    done is ``v`` or an ancestor of it, its earliest end plus the ops forced between."""
    g, dur = base.graph, base.dur
    es = head.copy()
    if not len(base.starts):
        return es
    is_coll = np.array([c.startswith("collective:") for c in base.classes], dtype=bool)
    ob = overlap_lower_bound(
        g, dur, base.starts, base.dones, base.ttime, base.stream, base.sync, is_coll, anc
    )
    _, tail = heads_tails(anc, dur)
    for c, d in enumerate(np.asarray(base.dones, dtype=np.int64)):
        if d < 0:
            continue
        end = ob.per_pair[:, c] - tail[:, d]  # earliest begin + transfer time
        after = anc[:, d].copy()  # d and its descendants
        after[d] = True
        for v in np.flatnonzero(after):
            mask = after & anc[v]
            es[:, v] = np.maximum(es[:, v], end + dur[:, mask].sum(axis=1))
    return es


TIME_SCALE = 1e12  # times as integers for CP-SAT, rounded down (a bound stays one)


@dataclass(frozen=True)
class _HostCopies:
    """What a host round trip costs in one scenario: ``ok[b]``: ``b`` may go to the host;
    ``time[b]``: one copy of it, either way (the copies to the host share one stream, and
    so do the copies back: the one ``copy`` stream of the timeline simulator, or one per
    direction); ``es`` and ``tail``: the earliest starts
    and the tails (an op and its descendants) of the ops."""

    ok: np.ndarray
    time: np.ndarray
    es: np.ndarray
    tail: np.ndarray


def _cut_tail(
    g,
    anc,
    v,
    after,
    size,
    transient,
    dur,
    clon,
    users,
    host: _HostCopies,
    budget,
    floors,
    chains,
    seconds,
    cfg: SolverConfig,
) -> float | None:
    """``T_v``: the least time from ``ES_v`` to the end over the ways to bring the bytes on
    the device at ``v``'s step within ``budget``: each buffer there is kept, made again by
    a clone of its op after ``v``, or (``host.ok``) on the host at ``v``. Clones: at least
    ``floors[0]`` (v and its descendants) after ``v``'s start and ``floors[1]`` (the rest of
    the compute load) after ``ES_v``, plus every clone after ``v``, and ``floors[k]`` for
    ``(a, k)`` in ``chains`` (a transfer started by ``a``) plus the clones that must come
    before ``a``: those of a buffer off the device at ``v`` that a descendant of ``v`` reads
    before ``a``. Host copies: a buffer on the host at ``v`` was copied out before ``v``'s
    step (the copy-out's done, which waits for it, frees the device copy) after its op
    ended, so ``v`` starts after those copies, one at a time on the copy stream
    (the one-machine bound with release dates); each is copied back after ``v`` (its
    copy-in is issued after ``v``'s step), and a descendant of ``v`` that reads it waits
    for that copy-in, then runs with its own descendants: after ``v`` the copy-ins run one
    at a time, each followed by its reader's tail (Jackson's bound, all released at
    ``v``'s end). None when no choice fits (the proven bound of a small CP-SAT model)."""
    before = anc[v].copy()
    before[v] = True
    fixed, counted, cand = _at_cut(g, v, before, after, size, transient, clon, users, host)
    if fixed + sum(cand.values()) <= budget:
        return max(floors)
    if fixed > budget:
        return None
    cut = _CutModel(g, anc, v, after, before, size, dur, clon, users, host, floors, chains)
    cut.removals(cand)
    extra = cut.clone_inputs(cand, counted)
    removed = {b: cut.off.get(b, 0) + cut.out.get(b, 0) for b in cand}
    kept = sum(int(size[b]) * (1 - r) for b, r in removed.items())
    cut.m.add(kept + sum(int(size[x]) * z for x, z in extra.items()) <= budget - fixed)
    cut.makespan()
    # through the runtime: a signal stops it (its bound so far is still a bound)
    run = runtime.solve(
        cut.m, SolverConfig(workers=cfg.workers, deterministic=cfg.deterministic), seconds
    )
    if run.status == runtime.INFEASIBLE:
        return None
    if run.bound is None or run.status not in (*runtime.SOLVED, runtime.UNKNOWN):
        return max(floors)
    return max(max(floors), float(run.bound) / TIME_SCALE - float(host.es[v]))


def _at_cut(
    g, v, before, after, size, transient, clon, users, host: _HostCopies
) -> tuple[int, set[int], dict[int, int]]:
    """The bytes on the device at ``v``'s step in every plan, the buffers they count, and
    the buffers a clone or a host copy may take off (buffer -> bytes)."""
    reads_v = set(int(b) for b in g.uses(v))
    fixed = transient  # bytes at v's step in every plan
    counted: set[int] = set()  # the buffers in ``fixed``
    cand: dict[int, int] = {}  # buffer -> bytes, removable by a clone or a host copy
    for b in range(g.n_buffers):
        if size[b] <= 0:
            continue
        d = int(g.buffer_def[b])
        if d == v or b in reads_v:
            fixed += int(size[b])
            counted.add(b)
            continue
        made = bool(g.buffer_live_in[b]) or bool(before[d])
        read = bool(g.buffer_live_out[b]) or bool(after[users[b]].any())
        if not (made and read):
            continue
        if (clon[d] and not g.buffer_live_in[b]) or host.ok[b]:
            cand[b] = int(size[b])
        else:
            fixed += int(size[b])
            counted.add(b)
    return fixed, counted, cand


def _ticks(x: float) -> int:
    return int(math.floor(x * TIME_SCALE))


class _CutModel:
    """The small CP-SAT model of ``_cut_tail`` at op ``v``: which ops are cloned after ``v``
    (``y``), which buffers a clone makes again (``off``) or the host holds (``out``, with
    the tail after its copy back in ``q``), and the makespan they imply."""

    def __init__(self, g, anc, v, after, before, size, dur, clon, users, host, floors, chains):
        self.g, self.anc, self.v, self.after, self.before = g, anc, v, after, before
        self.size, self.dur, self.clon, self.users, self.host = size, dur, clon, users, host
        self.floors, self.chains = floors, chains
        self.m = cp_model.CpModel()
        self.y: dict[int, Any] = {}  # op cloned after v
        self.off: dict[int, Any] = {}  # buffer off the device at v, made again by a clone
        self.out: dict[int, Any] = {}  # buffer on the host at v
        self.q: dict[int, float] = {}  # the tail after its copy back

    def clone(self, a: int):
        if a not in self.y:
            self.y[a] = self.m.new_bool_var(f"y{a}")
        return self.y[a]

    def to_host(self, b: int, tail_after: float):
        self.out[b] = self.m.new_bool_var(f"h{b}")
        self.q[b] = tail_after
        return self.out[b]

    def _tail_after_copy_back(self, b: int) -> float:
        """Every descendant of ``v`` that reads ``b`` waits for a copy back: the longest of
        their tails, and of their chains to a later transfer's end and its tail."""
        anc, after, dur, floors = self.anc, self.after, self.dur, self.floors
        ds = [int(u) for u in self.users[b] if after[u]]
        tails = [float(self.host.tail[u]) for u in ds]
        for a_start, k in self.chains:
            reach = anc[a_start].copy()
            reach[a_start] = True
            w_v = float(dur[after & reach].sum())
            for u in ds:
                if reach[u]:
                    from_u = anc[:, u].copy()
                    from_u[u] = True
                    tails.append(floors[k] - w_v + float(dur[from_u & reach].sum()))
        return max(tails, default=0.0)

    def removals(self, cand: dict[int, int]) -> None:
        """Each candidate buffer is kept, made again by a clone, or on the host."""
        g, m = self.g, self.m
        for b in cand:
            d = int(g.buffer_def[b])
            ways = []
            if self.clon[d] and not g.buffer_live_in[b]:
                self.off[b] = m.new_bool_var(f"g{b}")
                m.add_implication(self.off[b], self.clone(d))
                ways.append(self.off[b])
            if self.host.ok[b]:
                ways.append(self.to_host(b, self._tail_after_copy_back(b)))
            m.add(sum(ways) <= 1)

    def clone_inputs(self, cand: dict[int, int], counted: set[int]) -> dict[int, Any]:
        """Inputs of clones: on the device at v unless made again after v (clones of
        clones) or on the host at v (then copied back for the clone: no reader's tail
        counted). Returns buffer -> literal 'on the device at v for a clone'."""
        g, m, y, clon, size = self.g, self.m, self.y, self.clon, self.size
        extra: dict[int, Any] = {}
        todo = list(y)
        while todo:
            a = todo.pop()
            for x in g.uses(a):
                x = int(x)
                if size[x] <= 0 or x in cand or x in counted:
                    continue  # counted already
                d = int(g.buffer_def[x])
                z = extra.get(x)
                if z is None:
                    z = extra[x] = m.new_bool_var(f"z{x}")
                    if clon[d] and not g.buffer_live_in[x] and self.before[d]:
                        if d not in y:
                            self.clone(d)
                            todo.append(d)
                    if self.host.ok[x] and self.before[d]:
                        self.to_host(x, 0.0)
                # x on the device at v if a clone reads it, its definer is not cloned and it
                # is not on the host
                gone = -self.out[x] if x in self.out else 0
                if clon[d] and not g.buffer_live_in[x] and d in y:
                    m.add(z >= y[a] - y[d] + gone)
                else:
                    m.add(z >= y[a] + gone)
        return extra

    def makespan(self) -> None:
        """The makespan ``M`` from ``v``'s start ``S``: the floors, the clones after ``v``,
        the clones forced before a later transfer, and the host copies either side."""
        g, m, y, dur, floors, host = self.g, self.m, self.y, self.dur, self.floors, self.host
        es_v = float(host.es[self.v])
        top = _ticks(es_v + max(floors) + float(dur.sum()) + float(host.time.sum()) * 2) + 1
        for b in self.out:
            top += _ticks(self.q[b])
        M = m.new_int_var(0, top, "M")  # the makespan
        S = m.new_int_var(_ticks(es_v), top, "S")  # v's start
        every = sum(_ticks(dur[a]) * y[a] for a in y)
        m.add(M >= _ticks(es_v + floors[1]) + every)
        m.add(M >= S + _ticks(floors[0]) + every)
        for a_start, k in self.chains:
            reach = self.anc[a_start].copy()  # the ops that come before the start
            reach[a_start] = True
            early: dict[int, list[Any]] = {}
            for b, gb in self.off.items():
                if (self.after & reach)[self.users[b]].any():
                    early.setdefault(int(g.buffer_def[b]), []).append(gb)
            if not early:
                m.add(M >= S + _ticks(floors[k]))
                continue
            forced = []
            for a, gbs in early.items():
                f = m.new_bool_var(f"f{a}_{k}")
                for gb in gbs:
                    m.add_implication(gb, f)
                forced.append(_ticks(dur[a]) * f)
            m.add(M >= S + _ticks(floors[k]) + sum(forced))
        if self.out:
            self._host_copies(M, S)
        m.minimize(M)

    def _host_copies(self, M, S) -> None:
        g, m, out, host, dur = self.g, self.m, self.out, self.host, self.dur
        h = {b: _ticks(float(host.time[b])) for b in out}
        # copies out, before v: from the end of the buffer's op, one at a time
        r = {
            b: _ticks(float(host.es[int(g.buffer_def[b])] + dur[int(g.buffer_def[b])])) for b in out
        }
        for k in out:
            m.add(S >= r[k] * out[k] + sum(h[b] * out[b] for b in out if r[b] >= r[k]))
        # copies back, after v's end: one at a time, each followed by its reader's tail
        qt = {b: _ticks(self.q[b]) for b in out}
        dv = _ticks(float(dur[self.v]))
        for k in out:
            m.add(M >= S + dv + qt[k] * out[k] + sum(h[b] * out[b] for b in out if qt[b] >= qt[k]))


__all__ = ["analytic_bound", "memory_cut_bound", "no_memory_bound"]
