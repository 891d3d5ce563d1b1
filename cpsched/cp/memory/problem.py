"""The ordering problem the CP models and the exact search work on.

A ``Problem`` is a self-contained "order these ops" instance in local indices ``0..n-1``:
the whole graph, one segment of a decomposition, a window of a fixed order, or a subset of
ops (a relaxation used for lower bounds). Its memory rule is the simulator's
(``cpsched.analysis.memory``), restated on local steps:

- buffer ``b`` is live from ``start_b`` to ``end_b`` inclusive, where ``start_b`` is the
  step of its defining op, or step 0 when ``buf_def[b] == -1`` (defined before the problem);
  ``end_b`` is the step of its last user, or the last step when ``buf_out[b]`` (needed after
  the problem), and never before ``start_b``;
- usage at step ``t`` = ``base`` + transient bytes of the op at ``t`` + live buffer bytes;
- the problem's peak is ``max(floor, max_t usage)``: ``floor`` is the peak of the part of a
  schedule that lies outside the problem (0 for a whole graph).

Everything is per scenario: ``sizes[s, b]``, ``transient[s, v]``, ``base[s]``, ``floor[s]``.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from cpsched.analysis.memory import positions, simulate
from cpsched.core.graph import Graph
from cpsched.core.scenarios import Scenarios
from cpsched.cp.memory.cuts import CUT_MAX_OPS, cut_op_bounds

# Above this many ops the n x n reachability matrices (forced-live bound, CP model domains,
# decomposition) are not built; only heuristics and windows run.
DENSE_MAX_OPS = 4000


def _csr(lists: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    if lists:
        ptr[1:] = np.cumsum([len(x) for x in lists])
    idx = np.fromiter((int(v) for x in lists for v in x), dtype=np.int64, count=int(ptr[-1]))
    return ptr, idx


@dataclass(eq=False)
class Problem:
    ops: np.ndarray  # [n] global op index of each local op
    preds: list[list[int]]  # direct precedences (local), u must come before v
    buf_def: np.ndarray  # [nb] local defining op, -1 = live from step 0
    buf_users: list[list[int]]  # [nb] local users
    buf_out: np.ndarray  # [nb] bool, live to the last step
    sizes: np.ndarray  # [S, nb] bytes
    transient: np.ndarray  # [S, n] bytes
    base: np.ndarray  # [S] bytes live at every step
    floor: np.ndarray  # [S] peak of the rest of the schedule
    name: str = "problem"
    buf_ids: np.ndarray | None = None  # [nb] global buffer index, -1 if synthetic
    meta: dict = field(default_factory=dict)

    # -- basic structure ------------------------------------------------------------------
    @property
    def n(self) -> int:
        return len(self.ops)

    @property
    def nb(self) -> int:
        return len(self.buf_def)

    @property
    def n_scenarios(self) -> int:
        return self.sizes.shape[0]

    @cached_property
    def succs(self) -> list[list[int]]:
        out: list[list[int]] = [[] for _ in range(self.n)]
        for v, ps in enumerate(self.preds):
            for u in ps:
                out[u].append(v)
        return out

    @cached_property
    def topo(self) -> list[int]:
        """A topological order (smallest local index first among ready ops)."""
        indeg = [len(p) for p in self.preds]
        ready = [v for v in range(self.n) if indeg[v] == 0]
        heapq.heapify(ready)
        out = []
        while ready:
            v = heapq.heappop(ready)
            out.append(v)
            for s in self.succs[v]:
                indeg[s] -= 1
                if indeg[s] == 0:
                    heapq.heappush(ready, s)
        if len(out) != self.n:
            raise ValueError(f"{self.name}: precedence graph has a cycle")
        return out

    @cached_property
    def anc(self) -> np.ndarray:
        """``anc[v, u]``: u is a strict ancestor of v (must come before v)."""
        n = self.n
        anc = np.zeros((n, n), dtype=bool)
        for v in self.topo:
            p = self.preds[v]
            if p:
                anc[v] = anc[p].any(axis=0)
                anc[v, p] = True
        return anc

    @cached_property
    def desc(self) -> np.ndarray:
        return np.ascontiguousarray(self.anc.T)

    @cached_property
    def comparable(self) -> np.ndarray:
        return self.anc | self.desc | np.eye(self.n, dtype=bool)

    @cached_property
    def out_bytes(self) -> np.ndarray:
        """``[S, n]`` bytes each op defines."""
        out = np.zeros((self.n_scenarios, self.n), dtype=np.int64)
        d = self.buf_def >= 0
        for s in range(self.n_scenarios):
            np.add.at(out[s], self.buf_def[d], self.sizes[s, d])
        return out

    # -- memory -----------------------------------------------------------------------------
    @cached_property
    def user_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """``(buffer, user)`` of every use, as two flat arrays (vectorised live ranges)."""
        counts = np.fromiter((len(u) for u in self.buf_users), dtype=np.int64, count=self.nb)
        users = np.fromiter(
            (u for us in self.buf_users for u in us), dtype=np.int64, count=int(counts.sum())
        )
        return np.repeat(np.arange(self.nb, dtype=np.int64), counts), users

    def live_ranges(self, order: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = self.n
        pos = positions(order, n)
        start = np.where(self.buf_def >= 0, pos[np.maximum(self.buf_def, 0)], 0)
        end = start.copy()
        bufs, users = self.user_pairs
        if len(users):
            np.maximum.at(end, bufs, pos[users])
        end = np.where(self.buf_out, n - 1, end)
        return start, end

    def usage(self, order: Sequence[int] | np.ndarray) -> np.ndarray:
        """``[S, n]`` bytes at each step of a local order (without ``floor``)."""
        n = self.n
        order = np.asarray(order, dtype=np.int64)
        start, end = self.live_ranges(order)
        delta = np.zeros((self.n_scenarios, n + 1), dtype=np.int64)
        for s in range(self.n_scenarios):
            np.add.at(delta[s], start, self.sizes[s])
            np.add.at(delta[s], end + 1, -self.sizes[s])
        use = np.cumsum(delta[:, :n], axis=1) + self.base[:, None]
        return use + self.transient[:, order]

    def peak(self, order: Sequence[int] | np.ndarray) -> np.ndarray:
        """``[S]`` peak of a local order, ``floor`` included."""
        if self.n == 0:
            return self.floor.copy()
        return np.maximum(self.usage(order).max(axis=1), self.floor)

    def is_valid(self, order: Sequence[int] | np.ndarray) -> bool:
        if sorted(order) != list(range(self.n)):
            return False
        pos = positions(order, self.n)
        return all(pos[u] < pos[v] for v, ps in enumerate(self.preds) for u in ps)

    # -- bounds -------------------------------------------------------------------------------
    @property
    def dense(self) -> bool:
        """Small enough for the n x n reachability matrices."""
        return self.n <= DENSE_MAX_OPS

    @cached_property
    def forced_live(self) -> np.ndarray:
        """``[n, nb]`` bool: buffer b is live at op v's step in every order."""
        n, nb = self.n, self.nb
        eye = np.eye(n, dtype=bool)
        selfanc = self.anc | eye  # selfanc[v, u]: u == v or u before v
        before = np.ones((n, nb), dtype=bool)
        d = self.buf_def >= 0
        before[:, d] = selfanc[:, self.buf_def[d]]
        after = np.zeros((n, nb), dtype=bool)
        selfdesc = self.desc | eye  # selfdesc[v, x]: x == v or x after v
        for b, us in enumerate(self.buf_users):
            if us:
                after[:, b] = selfdesc[:, us].any(axis=1)
        after[:, self.buf_out] = True
        live = before & after
        # a buffer that nobody uses is live at its defining step only
        for b in map(int, np.flatnonzero(d & ~self.buf_out)):
            if not self.buf_users[b]:
                live[self.buf_def[b], b] = True
        return live

    @cached_property
    def op_lower_bounds(self) -> np.ndarray:
        """``[S, n]`` bytes that are live while op v runs, in every order.

        Above ``DENSE_MAX_OPS`` ops only what v itself uses and defines is counted (no
        reachability matrices)."""
        if not self.dense:
            lb = np.zeros((self.n_scenarios, self.n), dtype=np.int64)
            bufs, users = self.user_pairs
            d = np.flatnonzero(self.buf_def >= 0)
            # (buffer, op) pairs: every user, and the defining op unless it is a user too
            b_all = np.concatenate([bufs, d])
            v_all = np.concatenate([users, self.buf_def[d]])
            key = np.unique(b_all * max(self.n, 1) + v_all)
            b_all, v_all = key // max(self.n, 1), key % max(self.n, 1)
            for s in range(self.n_scenarios):
                np.add.at(lb[s], v_all, self.sizes[s, b_all])
            return lb + self.transient + self.base[:, None]
        lb = (self.forced_live.astype(np.int64) @ self.sizes.T).T
        return lb + self.transient + self.base[:, None]

    @cached_property
    def cut_lower_bounds(self) -> np.ndarray:
        """``[S, n]`` bytes live at op v's step in every order, from one minimum cut per op
        (``cpsched.cp.memory.cuts``); never below ``op_lower_bounds``. Above
        ``CUT_MAX_OPS`` ops it is ``op_lower_bounds``."""
        if not self.dense or self.n > CUT_MAX_OPS:
            return self.op_lower_bounds
        return cut_op_bounds(self)

    @cached_property
    def lower_bound(self) -> np.ndarray:
        """``[S]`` a peak no order can beat (``floor`` included)."""
        if self.n == 0:
            return self.floor.copy()
        lb = np.maximum(self.cut_lower_bounds.max(axis=1), self.floor)
        # everything defined before the problem is live at step 0, everything needed after
        # it at the last step
        first = self.base + self.sizes[:, self.buf_def < 0].sum(axis=1)
        last = self.base + self.sizes[:, self.buf_out].sum(axis=1)
        return np.maximum(lb, np.maximum(first, last))

    def upper_limit(self) -> np.ndarray:
        """``[S]`` the largest usage any order can have (everything live at once)."""
        return self.base + self.sizes.sum(axis=1) + (self.transient.max(axis=1) if self.n else 0)


# -- constructors ---------------------------------------------------------------------------


def _split(flat: np.ndarray, ptr: np.ndarray) -> list[list[int]]:
    """CSR rows as lists of Python ints (one ``tolist`` instead of a numpy slice per row)."""
    values, bounds = flat.tolist(), ptr.tolist()
    return [values[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def from_graph(graph: Graph, scenarios: Scenarios) -> Problem:
    """The whole graph as a problem."""
    n = graph.n_ops
    preds = _split(graph.pred_idx, graph.pred_ptr)
    sizes = np.asarray(graph.sizes(scenarios), dtype=np.int64)
    trans = np.asarray(graph.transient_bytes(scenarios), dtype=np.int64)
    all_users = _split(graph.buffer_users_idx, graph.buffer_users_ptr)
    nonzero = sizes.any(axis=0)
    live_in, live_out = graph.buffer_live_in, graph.buffer_live_out
    both = nonzero & live_in & live_out
    base = sizes[:, both].sum(axis=1).astype(np.int64)
    keep_arr = np.flatnonzero(nonzero & ~both).astype(np.int64)
    defs = graph.buffer_def[keep_arr].astype(np.int64)
    users = [all_users[b] for b in keep_arr.tolist()]
    for i in np.flatnonzero(live_in[keep_arr]).tolist():
        # live from step 0 to the later of its def and its users
        users[i] = sorted(set(users[i]) | {int(defs[i])})
        defs[i] = -1
    return Problem(
        ops=np.arange(n, dtype=np.int64),
        preds=preds,
        buf_def=defs,
        buf_users=users,
        buf_out=np.asarray(live_out[keep_arr], dtype=bool),
        sizes=sizes[:, keep_arr].reshape(len(scenarios), -1),
        transient=trans,
        base=base,
        floor=np.zeros(len(scenarios), dtype=np.int64),
        name=graph.name,
        buf_ids=keep_arr,
    )


def window(full: Problem, order: Sequence[int] | np.ndarray, a: int, b: int) -> Problem:
    """Steps ``[a, b)`` of a valid order of ``full``, with everything else fixed.

    Reordering the window's ops (respecting their own precedences) keeps the whole order
    valid and leaves the usage of every step outside the window unchanged, so the whole
    order's peak is ``max(floor, window peak)``. ``ops`` of the result are indices of
    ``full``'s ops.
    """
    order = np.asarray(order, dtype=np.int64)
    n = full.n
    a, b = max(0, a), min(n, b)
    ops = order[a:b]
    local = np.full(n, -1, dtype=np.int64)
    local[ops] = np.arange(len(ops))
    pos = positions(order, n)
    usage = full.usage(order)
    outside = np.concatenate([usage[:, :a], usage[:, b:]], axis=1)
    floor = np.maximum(full.floor, outside.max(axis=1) if outside.shape[1] else 0)
    preds = [[int(local[u]) for u in full.preds[v] if local[u] >= 0] for v in ops]
    start, end = full.live_ranges(order)
    S = full.n_scenarios
    base = full.base.copy()
    defs, users, outs, keep = [], [], [], []
    for j in range(full.nb):
        if end[j] < a or start[j] >= b:
            continue
        if start[j] < a and end[j] >= b:
            base += full.sizes[:, j]
            continue
        d = int(full.buf_def[j])
        dl = int(local[d]) if d >= 0 else -1
        us = [int(local[u]) for u in full.buf_users[j] if local[u] >= 0]
        out = bool(full.buf_out[j]) or any(pos[u] >= b for u in full.buf_users[j])
        defs.append(dl)
        users.append(us)
        outs.append(out)
        keep.append(j)
    keep_arr = np.asarray(keep, dtype=np.int64)
    return Problem(
        ops=np.asarray(ops, dtype=np.int64),
        preds=preds,
        buf_def=np.asarray(defs, dtype=np.int64),
        buf_users=users,
        buf_out=np.asarray(outs, dtype=bool),
        sizes=full.sizes[:, keep_arr].reshape(S, -1),
        transient=full.transient[:, ops],
        base=base,
        floor=floor,
        name=f"{full.name}[{a}:{b}]",
        buf_ids=keep_arr,
    )


def induced(full: Problem, subset: Sequence[int] | np.ndarray) -> Problem:
    """A relaxation on a subset of ops: its optimum is a lower bound of ``full``'s.

    Keeps the buffers defined in the subset (and those live from step 0), users restricted
    to the subset, and the precedences implied between subset ops (transitively). Any order
    of ``full`` restricted to the subset is valid here and every one of its steps holds no
    more bytes than the same op's step in the full order, so ``opt(induced) <= opt(full)``.
    ``floor`` is dropped (set to 0); ``ops`` are indices of ``full``'s ops.
    """
    subset = np.asarray(sorted(set(int(v) for v in subset)), dtype=np.int64)
    n = full.n
    local = np.full(n, -1, dtype=np.int64)
    local[subset] = np.arange(len(subset))
    anc = full.anc
    sub_anc = anc[np.ix_(subset, subset)]
    # transitive reduction inside the subset: u -> v kept if no w in subset between them
    preds = []
    for i in range(len(subset)):
        a = np.flatnonzero(sub_anc[i])
        if a.size:
            # u is redundant if some other ancestor w of v (in subset) has u as ancestor
            red = sub_anc[np.ix_(a, a)].any(axis=0)
            preds.append([int(u) for u in a[~red]])
        else:
            preds.append([])
    defs, users, outs, keep = [], [], [], []
    for j in range(full.nb):
        d = int(full.buf_def[j])
        if d >= 0 and local[d] < 0:
            continue
        us = [int(local[u]) for u in full.buf_users[j] if local[u] >= 0]
        out = bool(full.buf_out[j])
        if d < 0 and not us and not out:
            continue
        defs.append(int(local[d]) if d >= 0 else -1)
        users.append(us)
        outs.append(out)
        keep.append(j)
    return _sub_problem(full, subset, preds, defs, users, outs, keep, "|")


def project(
    full: Problem,
    subset: Sequence[int] | np.ndarray,
    ref_order: Sequence[int] | None = None,
    early: bool = True,
) -> Problem:
    """A relaxation on a subset ``W`` of ops that keeps the buffers crossing it.

    Like ``induced`` but a buffer defined outside ``W`` is kept when some ``W`` op ``y`` lies
    between its defining op ``x`` and one of its users (``x`` before ``y``, ``y`` at or before
    that user): it is treated as defined by ``y`` (it is live at ``y`` in every order, and
    from ``y`` on until its last user). A user outside ``W`` is replaced by its latest
    ``W`` ancestors (each one runs before it). Every buffer's live steps in the relaxation
    are live in the full order too, so ``opt(project) <= opt(full)``. Among candidate
    ``y``, the one earliest in ``ref_order`` is taken (any choice is valid).

    ``early``: a buffer whose defining op precedes every ``W`` op is live from the
    relaxation's first step instead (it is live at every ``W`` op's step up to its last
    user in every full order), which counts it also at the ``W`` ops that an order of the
    relaxation runs before ``y``.
    """
    subset = np.asarray(sorted(set(int(v) for v in subset)), dtype=np.int64)
    n = full.n
    inW = np.zeros(n, dtype=bool)
    inW[subset] = True
    local = np.full(n, -1, dtype=np.int64)
    local[subset] = np.arange(len(subset))
    anc = full.anc
    rank = positions(ref_order if ref_order is not None else full.topo, n)
    base_rel = induced(full, subset)
    selfanc = anc | np.eye(n, dtype=bool)

    def w_ancestors(u: int) -> list[int]:
        """Latest W ops at or before u (maximal W elements of ancestors-or-self)."""
        if inW[u]:
            return [u]
        a = np.flatnonzero(anc[u] & inW)
        if a.size == 0:
            return []
        red = anc[np.ix_(a, a)].any(axis=0)
        return [int(x) for x in a[~red]]

    defs, users, outs, keep = [], [], [], []
    for j in range(full.nb):
        d = int(full.buf_def[j])
        us_full = full.buf_users[j]
        out = bool(full.buf_out[j])
        rel_users: set[int] = set()
        for u in us_full:
            rel_users.update(w_ancestors(u))
        if d >= 0 and not inW[d]:
            # candidates y in W: after d, and at or before some user (or anything after d
            # when the buffer is needed after the problem)
            cand = inW & anc[:, d]
            if not out:
                cand &= selfanc[us_full].any(axis=0) if us_full else False
            c = np.flatnonzero(cand)
            if c.size == 0:
                continue
            if early and bool(anc[subset, d].all()):
                dl = -1
            else:
                y = int(c[np.argmin(rank[c])])
                dl = int(local[y])
                rel_users = {u for u in rel_users if u != y}
        else:
            dl = int(local[d]) if d >= 0 else -1
            if d < 0 and not rel_users and not out:
                continue
        defs.append(dl)
        users.append(sorted(int(local[u]) for u in rel_users))
        outs.append(out)
        keep.append(j)
    return _sub_problem(full, subset, base_rel.preds, defs, users, outs, keep, "~")


def _sub_problem(full: Problem, subset, preds, defs, users, outs, keep, mark: str) -> Problem:
    """The relaxation of ``full`` on the ops ``subset`` with the kept buffers ``keep``
    (their local defining ops, users and live-out flags), floor 0."""
    S = full.n_scenarios
    keep_arr = np.asarray(keep, dtype=np.int64)
    return Problem(
        ops=subset,
        preds=preds,
        buf_def=np.asarray(defs, dtype=np.int64),
        buf_users=users,
        buf_out=np.asarray(outs, dtype=bool),
        sizes=full.sizes[:, keep_arr].reshape(S, -1),
        transient=full.transient[:, subset],
        base=full.base.copy(),
        floor=np.zeros(S, dtype=np.int64),
        name=f"{full.name}{mark}{len(subset)}",
        buf_ids=keep_arr,
    )


def to_global(problem: Problem, local_order: Sequence[int]) -> list[int]:
    return [int(problem.ops[v]) for v in local_order]


def check_against_simulator(
    graph: Graph, scenarios: Scenarios, problem: Problem, order: Sequence[int]
) -> bool:
    """Debug helper: the problem's peak of a whole-graph order equals the simulator's."""
    return bool(np.array_equal(problem.peak(order), simulate(graph, order, scenarios).peak))
