"""Per-op lower bounds from minimum cuts ("closure" bounds).

While op ``v`` runs at step ``t``, the ops at steps ``<= t`` form a downset ``D`` of the
precedence order that holds ``v``, its ancestors, and none of its descendants. Every
buffer ``b`` that ``v`` does not touch is live at ``t`` exactly when it is defined in ``D``
(or before the problem) and is needed after ``D`` (``buf_out``, or some user outside
``D``). So the usage at ``v``'s step is at least

    base + transient(v) + bytes v uses or defines + min over such D of cut(D)

with ``cut(D)`` the bytes of the untouched buffers that ``D`` leaves live. The forced-live
bound (``Problem.op_lower_bounds``) counts only the buffers live for *every* such ``D``;
the minimum over ``D`` also sees that delaying an op keeps its inputs live while running
it early makes its outputs live -- an optimizer update either holds the old parameter and
moments or the new ones, whichever order is chosen.

The minimum is a closure problem (``x_u = 1`` iff ``u`` in ``D``, ``y_b = 1`` iff every
user of ``b`` is in ``D``; cost ``size_b * (x_def(b) - y_b)``, constraints ``x_u <= x_p``
for every predecessor ``p`` of ``u`` and ``y_b <= x_u`` for every user ``u``), solved as a
minimum s-t cut (Picard 1976): one max-flow per op and scenario.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
from ortools.graph.python import max_flow

# Above this many ops the cut bounds are not computed (one max-flow per op and scenario:
# 0.1 s at 250 ops, 1.5 s at 1,000, growing about as n squared).
CUT_MAX_OPS = 1500


class CutData(Protocol):
    """What the cut bounds read of a memory problem (``cpsched.cp.memory.problem.Problem``,
    which calls them: a protocol here keeps this module below it)."""

    preds: list[list[int]]
    buf_def: np.ndarray
    buf_out: np.ndarray
    sizes: np.ndarray
    transient: np.ndarray
    base: np.ndarray

    @property
    def n(self) -> int: ...
    @property
    def nb(self) -> int: ...
    @property
    def n_scenarios(self) -> int: ...
    @property
    def anc(self) -> np.ndarray: ...
    @property
    def desc(self) -> np.ndarray: ...
    @property
    def user_pairs(self) -> tuple[np.ndarray, np.ndarray]: ...
    @property
    def op_lower_bounds(self) -> np.ndarray: ...


class CutBounds:
    """The minimum-cut bound of op ``v``'s step, optionally with more ops forced into or out
    of the downset ``D`` (for case splits on the relative order of two ops)."""

    def __init__(self, p: CutData) -> None:
        n, nb = p.n, p.nb
        self.p = p
        self.selfanc = p.anc | np.eye(n, dtype=bool)
        self.selfdesc = p.desc | np.eye(n, dtype=bool)
        defs = np.asarray(p.buf_def, dtype=np.int64)
        self.defs = defs
        bufs, users = p.user_pairs
        has_users = np.zeros(nb, dtype=bool)
        has_users[bufs] = True
        self.outs = outs = np.asarray(p.buf_out, dtype=bool)
        # buffers that can be live at a step other than their own def's: needed after it
        self.counted = has_users | outs
        # buffers each op touches (uses or defines): live at its step (see ``late``)
        touch_ops = np.concatenate([users, defs[defs >= 0]])
        touch_bufs = np.concatenate([bufs, np.flatnonzero(defs >= 0)])
        key = np.unique(touch_ops * max(nb, 1) + touch_bufs)
        self.t_ops, self.t_bufs = key // max(nb, 1), key % max(nb, 1)
        self.t_ptr = np.searchsorted(self.t_ops, np.arange(n + 1))
        # node ids: ops 0..n-1, buffers n..n+nb-1, source n+nb, sink n+nb+1
        self.src, self.snk = n + nb, n + nb + 1
        prec_t = np.fromiter((v for v, ps in enumerate(p.preds) for _ in ps), dtype=np.int64)
        prec_h = np.fromiter((u for ps in p.preds for u in ps), dtype=np.int64)
        # y_b <= x_user, and y_b <= x_def (users follow the def in a graph; kept explicit so
        # that in a relaxation a buffer whose users are not after its def earns nothing)
        prof_all = self.counted & ~outs  # buffers no longer live once all users are in D
        sel = prof_all[bufs]
        with_def = prof_all & (defs >= 0)
        self.inf_t = np.concatenate([prec_t, n + bufs[sel], n + np.flatnonzero(with_def)])
        self.inf_h = np.concatenate([prec_h, users[sel], defs[with_def]])

    def value(
        self, v: int, s: int = 0, into: Sequence[int] = (), out_of: Sequence[int] = ()
    ) -> int | None:
        """Least usage at ``v``'s step over downsets holding ``v``, its ancestors and the
        ops ``into`` (with their ancestors), and none of ``v``'s descendants nor of the ops
        ``out_of`` (with their descendants); None when no such downset exists.
        ``floor`` is not included."""
        p, n, defs, outs = self.p, self.p.n, self.defs, self.outs
        size = p.sizes[s].astype(np.int64)
        inf = int(size.sum()) + 1
        forced_in = self.selfanc[[v, *into]].any(axis=0)
        forced_out = self.selfdesc[list(out_of)].any(axis=0) | p.desc[v]
        if (forced_in & forced_out).any():
            return None
        tb = self.t_bufs[self.t_ptr[v] : self.t_ptr[v + 1]]
        # a buffer v uses is live at v's step if it is defined at or before it; in a
        # relaxation its def may be unordered with v: then it is live iff its def is in D
        late = tb[(defs[tb] >= 0) & ~self.selfanc[v, np.maximum(defs[tb], 0)]]
        live_const = int(size[tb].sum()) - int(size[late].sum())
        free = self.counted & (size > 0)
        free[tb] = False
        # x_def costs size (the buffer becomes live); y_b earns it back when no longer
        # needed after D; live-from-start buffers pay their size whatever D is
        d_sel = free & (defs >= 0)
        w_op = np.bincount(defs[d_sel], weights=size[d_sel], minlength=n).astype(np.int64)
        np.add.at(w_op, defs[late], size[late])
        c0 = int(size[free & (defs < 0)].sum())
        prof = np.where(free & ~outs, size, 0)
        f_in, f_out = np.flatnonzero(forced_in), np.flatnonzero(forced_out)
        wo, pb = np.flatnonzero(w_op > 0), np.flatnonzero(prof > 0)
        src, snk = self.src, self.snk
        tails = np.concatenate(
            [self.inf_t, wo, np.full(pb.size, src), np.full(f_in.size, src), f_out]
        )
        heads = np.concatenate(
            [self.inf_h, np.full(wo.size, snk), n + pb, f_in, np.full(f_out.size, snk)]
        )
        caps = np.concatenate(
            [
                np.full(self.inf_t.size, inf),
                w_op[wo],
                prof[pb],
                np.full(f_in.size + f_out.size, inf),
            ]
        )
        m = max_flow.SimpleMaxFlow()
        m.add_arcs_with_capacity(
            tails.astype(np.int32), heads.astype(np.int32), caps.astype(np.int64)
        )
        if m.solve(src, snk) != m.OPTIMAL:
            return 0  # a solver failure gives no bound (0 is one); None means infeasible
        cut = int(m.optimal_flow()) - int(prof.sum()) + c0
        return int(p.base[s]) + int(p.transient[s, v]) + live_const + cut


def cut_op_bounds(p: CutData) -> np.ndarray:
    """``[S, n]``: a lower bound on the usage at op v's step in every order of ``p``
    (``floor`` not included); never below ``p.op_lower_bounds``."""
    out = p.op_lower_bounds.astype(np.int64).copy()
    if p.n == 0:
        return out
    cb = CutBounds(p)
    for s in range(p.n_scenarios):
        for v in range(p.n):
            val = cb.value(v, s)
            if val is not None:
                out[s, v] = max(out[s, v], val)
    return out
