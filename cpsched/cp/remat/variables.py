"""Variables of the remat model (``cpsched.strategies.remat.method`` documents the time grid), their
hints from a plan, and the plan read back from a solution."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from cpsched.cp.remat.problem import Spec
from cpsched.remat.skeleton import Evict, Regen, Skeleton


class Vars:
    """The model and its variables. Main step ``t`` owns slots ``G*t .. G*t+G-1``: the main
    op runs in the last one (``A0[v]``: a constant in the fixed-order model, an expression of
    ``posv[v]`` in the joint one), clones ``R[v, k]`` in the ``G-1`` slots before it, with a
    reserved literal ``Q[v, k]`` and a presence literal per scenario ``P[v, k][s]``. Buffer
    copy ``k`` of ``b`` is retained until ``E[b, k][s]``; ``x`` chooses the copy a read uses;
    eviction has ``V[b][s]`` (active), ``rb[b]`` / ``gb[b]`` (free / prefetch steps) and
    ``X[b, s]`` (exposed prefetch time)."""

    def __init__(self, spec: Spec):
        self.sp = spec
        n, G, S = spec.graph.n_ops, spec.G, spec.n_s
        self.m = cp_model.CpModel()
        self.n, self.H = n, G * n
        self.fixed = spec.order is not None
        self.pos: np.ndarray | None = None
        self.posv: list[Any] = []
        self.A0: list[Any] = []
        # clone copies: (v, k) -> slot var, reserved lit, presence per scenario
        self.R: dict[tuple[int, int], Any] = {}
        self.Q: dict[tuple[int, int], Any] = {}
        self.P: dict[tuple[int, int], list[Any]] = {}
        self.st: dict[tuple[int, int], Any] = {}
        self.sub: dict[tuple[int, int], Any] = {}
        self.K = np.ones(n, dtype=np.int64)
        # reads: buffer -> list of (slot expr, presence per scenario or None, reader key)
        self.reads: dict[int, list[tuple[Any, list[Any] | None, tuple[int, int]]]] = {}
        # retention ends: E[b, k][s]
        self.E: dict[tuple[int, int], list[Any]] = {}
        self.x: dict[tuple[int, tuple[int, int], int, int], Any] = {}
        self.V: dict[int, list[Any]] = {}
        self.rb: dict[int, Any] = {}
        self.gb: dict[int, Any] = {}
        self.X: dict[tuple[int, int], Any] = {}
        self.y: dict[tuple[int, int], Any] = {}
        self.intervals: list[list[tuple[Any, int]]] = [[] for _ in range(S)]
        # interval length vars with how their ends are made, so a hint can fill them in:
        # (var, start, end), a start/end being ("at", slot), ("main", v), ("clone", v, k),
        # ("free", b), ("fetch", b) or ("E", b, k, s) (E + 1)
        self.lengths: list[tuple[Any, tuple, tuple]] = []
        self.capvar: list[Any] = []
        self.cost: list[Any] = []

    def start0(self, b: int) -> tuple:
        g = self.sp.graph
        return ("at", 0) if g.buffer_live_in[b] else ("main", int(g.buffer_def[b]))

    # -- hints ---------------------------------------------------------------------------
    def hint(self, skeleton: Skeleton, active: Sequence[Sequence[int]]) -> None:
        sp, g, m, G, H = self.sp, self.sp.graph, self.m, self.sp.G, self.H
        S = sp.n_s
        order = list(skeleton.order)
        n = self.n
        pos = np.empty(n, dtype=np.int64)
        pos[np.asarray(order)] = np.arange(n)
        if not self.fixed:
            for v in range(n):
                m.add_hint(self.posv[v], int(pos[v]))
        A0 = [int(G * pos[v] + G - 1) for v in range(n)]
        # copies per op, shared over scenarios
        per_op: dict[int, list[tuple[int, float, int]]] = {}
        union = sorted(set(c for a in active for c in a))
        for cid in union:
            c = skeleton.candidates[cid]
            if isinstance(c, Regen):
                per_op.setdefault(c.op, []).append((c.step, c.sub, cid))
        # a heuristic's skeleton may order clones by fractional subs: slots can be floats
        slot_of: dict[tuple[int, int], float] = {}
        cid_of: dict[tuple[int, int], int] = {}
        for v, lst in per_op.items():
            lst.sort()
            for k, (t, sb, cid) in enumerate(lst[: int(self.K[v]) - 1], start=1):
                if (v, k) not in self.R:
                    continue
                slot = G * t + min(sb, G - 2)
                slot_of[v, k] = slot
                cid_of[v, k] = cid
                m.add_hint(self.R[v, k], int(slot))  # add_hint keeps int(value) anyway
                m.add_hint(self.Q[v, k], 1)
                if (v, k) in self.st:
                    m.add_hint(self.st[v, k], t)
                    m.add_hint(self.sub[v, k], int(min(sb, G - 2)))
        for (v, k), q in self.Q.items():
            if (v, k) not in slot_of:
                # an absent copy: every variable still gets a value (a complete hint is
                # taken as a first solution; a partial one often is not)
                m.add_hint(q, 0)
                m.add_hint(self.R[v, k], 0)
                if (v, k) in self.st:
                    m.add_hint(self.st[v, k], 0)
                    m.add_hint(self.sub[v, k], 0)
        evs = {}
        for cid in union:
            c = skeleton.candidates[cid]
            if isinstance(c, Evict) and c.buffer in self.rb:
                evs[c.buffer] = (c, cid)
        steps: dict[tuple[str, int], int] = {}
        for b in self.rb:
            if b in evs:
                r, gg = evs[b][0].free_step, evs[b][0].in_step
            else:
                _, _, rdom, gdom = sp.evict_cands[b]
                r, gg = min(rdom), max(gdom)
            steps["free", b], steps["fetch", b] = r, gg
            m.add_hint(self.rb[b], r)
            m.add_hint(self.gb[b], gg)
        end_hint: dict[tuple[int, int, int], int] = {}
        for s in range(S):
            act = set(active[s])
            pres = {(v, k): (cid_of.get((v, k)) in act) for (v, k) in self.P}
            if S > 1:
                for (v, k), p in self.P.items():
                    m.add_hint(p[s], int(pres[v, k]))
            for b, Vs in self.V.items():
                m.add_hint(Vs[s], int(b in evs and evs[b][1] in act))
            # serve reads with the most recent present copy
            for b in range(g.n_buffers):
                v = int(g.buffer_def[b])
                K = int(self.K[v])
                starts = [0 if g.buffer_live_in[b] else A0[v]] + [
                    slot_of[v, k] if pres.get((v, k)) else None for k in range(1, K)
                ]
                ends = [s0 if s0 is not None else None for s0 in starts]
                for _slot, _pr, key in self.reads.get(b, []):
                    w, j = key
                    sl = A0[w] if j == 0 else slot_of.get((w, j))
                    if j > 0 and not pres.get((w, j)):
                        for k in range(K):
                            if (b, key, k, s) in self.x:
                                m.add_hint(self.x[b, key, k, s], 0)
                        continue
                    assert sl is not None  # a present clone has a slot
                    best = 0
                    for k in range(K):
                        start_k = starts[k]
                        if start_k is not None and start_k < sl:
                            best = k
                    end_best = ends[best]
                    assert end_best is not None  # starts[best] is set (k = 0 always is)
                    ends[best] = max(end_best, sl)
                    for k in range(K):
                        if (b, key, k, s) in self.x:
                            m.add_hint(self.x[b, key, k, s], int(k == best))
                for k in range(K):
                    e = self.E[b, k][s]
                    val = ends[k] or 0
                    if g.buffer_live_out[b]:
                        val = H - 1
                    if isinstance(e, int):
                        val = e
                    else:
                        m.add_hint(e, int(val))
                    end_hint[b, k, s] = int(val)

        def at(spec) -> float:
            kind = spec[0]
            if kind == "at":
                return int(spec[1])
            if kind == "main":
                return A0[spec[1]]
            if kind == "clone":
                return slot_of.get((spec[1], spec[2]), 0)
            if kind in ("free", "fetch"):
                return G * steps[kind, spec[1]]
            return end_hint[spec[1], spec[2], spec[3]] + 1

        for var, a, e in self.lengths:
            m.add_hint(var, int(min(H, max(1, at(e) - at(a)))))

    # -- solution -------------------------------------------------------------------------

    def extract(self, solver: cp_model.CpSolver) -> tuple[Skeleton, list[list[int]]]:
        sp, G = self.sp, self.sp.G
        S = sp.n_s
        if self.fixed:
            assert sp.order is not None  # a fixed model has its order
            order = list(sp.order)
        else:
            order = sorted(range(self.n), key=lambda v: solver.value(self.posv[v]))
        cands: list = []
        active: list[list[int]] = [[] for _ in range(S)]
        for (v, k), q in sorted(self.Q.items()):
            if not solver.boolean_value(q):
                continue
            r = int(solver.value(self.R[v, k]))
            cid = len(cands)
            cands.append(Regen(v, r // G, r % G))
            for s in range(S):
                if solver.boolean_value(self.P[v, k][s]):
                    active[s].append(cid)
        for b, Vs in sorted(self.V.items()):
            on = [s for s in range(S) if solver.boolean_value(Vs[s])]
            if not on:
                continue
            a, c = sp.evict_cands[b][:2]
            cid = len(cands)
            rank = int(min(solver.value(self.y[b, s]) for s in on))
            cands.append(
                Evict(b, a + 1, int(solver.value(self.rb[b])), int(solver.value(self.gb[b])), rank)
            )
            for s in on:
                active[s].append(cid)
        return Skeleton(tuple(order), tuple(cands)), active


def make_vars(spec: Spec) -> Vars:
    """Main slots (fixed, or positions with dependences and distinct steps), clone copies
    (slots within their allowed steps, reserved and per-scenario presence literals, copies of
    one op ordered, one clone per slot), and every read's slot."""
    mdl = Vars(spec)
    g, m = spec.graph, mdl.m
    n, G, S, H = g.n_ops, spec.G, spec.n_s, mdl.H
    fixed = mdl.fixed
    # main slots
    if fixed:
        pos = np.empty(n, dtype=np.int64)
        pos[np.asarray(spec.order)] = np.arange(n)
        mdl.pos = pos
        mdl.A0 = [int(G * pos[v] + G - 1) for v in range(n)]
    else:
        mdl.posv = [m.new_int_var(0, n - 1, f"pos{v}") for v in range(n)]
        for v in range(n):
            for u in g.preds(v):
                m.add(mdl.posv[int(u)] < mdl.posv[v])
        mdl.A0 = [G * mdl.posv[v] + (G - 1) for v in range(n)]
        # distinct steps: a NoOverlap of unit intervals (AllDifferent would be expanded
        # into n^2 literals by presolve)
        m.add_no_overlap([m.new_fixed_size_interval_var(mdl.posv[v], 1, f"M{v}") for v in range(n)])
    regen_intervals = []
    for v in sorted(spec.regen_ops):
        mdl.K[v] = spec.copies
        for k in range(1, spec.copies):
            if fixed:
                steps = spec.stage_domain.get(v, [])
                if not steps:
                    mdl.K[v] = k
                    break
                dom = cp_model.Domain.from_intervals([[G * t, G * t + G - 2] for t in steps])
                r = m.new_int_var_from_domain(dom, f"R{v}_{k}")
            else:
                st = m.new_int_var(0, n - 1, f"st{v}_{k}")
                sb = m.new_int_var(0, G - 2, f"sb{v}_{k}")
                r = m.new_int_var(0, H - 1, f"R{v}_{k}")
                m.add(r == G * st + sb)
                mdl.st[v, k], mdl.sub[v, k] = st, sb
            q = m.new_bool_var(f"Q{v}_{k}")
            if not fixed:
                m.add(r > mdl.A0[v]).only_enforce_if(q)
            ps = [m.new_bool_var(f"P{v}_{k}_{s}") for s in range(S)] if S > 1 else [q]
            if S > 1:
                for p in ps:
                    m.add_implication(p, q)
                m.add_bool_or(ps).only_enforce_if(q)
            mdl.R[v, k], mdl.Q[v, k], mdl.P[v, k] = r, q, ps
            if k > 1:
                m.add_implication(q, mdl.Q[v, k - 1])
                for s in range(S):
                    m.add_implication(ps[s], mdl.P[v, k - 1][s])
                m.add(r > mdl.R[v, k - 1]).only_enforce_if(q)
            if not fixed:
                for c in g.uses(v):
                    for w in spec.writers[int(c)]:
                        m.add(r < mdl.A0[w]).only_enforce_if(q)
            regen_intervals.append(m.new_optional_fixed_size_interval_var(r, 1, q, f"I{v}_{k}"))
    if regen_intervals:
        m.add_no_overlap(regen_intervals)
    for w in range(n):
        for b in g.uses(w):
            mdl.reads.setdefault(int(b), []).append((mdl.A0[w], None, (w, 0)))
            for k in range(1, int(mdl.K[w])):
                mdl.reads[int(b)].append((mdl.R[w, k], mdl.P[w, k], (w, k)))
    # a program input stays until its parameter op has run (the plan's rule, as the replay
    # checks it): a "read" at that op's slot, which matters only for an input no op reads
    for b in map(int, np.flatnonzero(g.buffer_live_in)):
        d = int(g.buffer_def[b])
        mdl.reads.setdefault(b, []).append((mdl.A0[d], None, (d, 0)))
    return mdl
