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

import numpy as np
from ortools.graph.python import max_flow

from cpsched.cp.memory.problem import Problem

# Above this many ops the cut bounds are not computed (one max-flow per op and scenario:
# 0.1 s at 250 ops, 1.5 s at 1,000, growing about as n squared).
CUT_MAX_OPS = 1500


def cut_op_bounds(p: Problem) -> np.ndarray:
    """``[S, n]``: a lower bound on the usage at op v's step in every order of ``p``
    (``floor`` not included); never below ``p.op_lower_bounds``."""
    n, nb, S = p.n, p.nb, p.n_scenarios
    out = p.op_lower_bounds.astype(np.int64).copy()
    if n == 0:
        return out
    anc, desc = p.anc, p.desc
    selfanc = anc | np.eye(n, dtype=bool)
    defs = np.asarray(p.buf_def, dtype=np.int64)
    bufs, users = p.user_pairs
    has_users = np.zeros(nb, dtype=bool)
    has_users[bufs] = True
    outs = np.asarray(p.buf_out, dtype=bool)
    # buffers that can be live at a step other than their own def's: needed after it
    counted = has_users | outs
    # buffers each op touches (uses or defines): live at its step whatever D is
    touch_ops = np.concatenate([users, defs[defs >= 0]])
    touch_bufs = np.concatenate([bufs, np.flatnonzero(defs >= 0)])
    key = np.unique(touch_ops * max(nb, 1) + touch_bufs)
    t_ops, t_bufs = key // max(nb, 1), key % max(nb, 1)
    t_ptr = np.searchsorted(t_ops, np.arange(n + 1))
    # node ids: ops 0..n-1, buffers n..n+nb-1, source n+nb, sink n+nb+1
    src, snk = n + nb, n + nb + 1
    prec_t = np.fromiter((v for v, ps in enumerate(p.preds) for _ in ps), dtype=np.int64)
    prec_h = np.fromiter((u for ps in p.preds for u in ps), dtype=np.int64)
    # y_b <= x_user, and y_b <= x_def (users follow the def; kept explicit so that a buffer
    # whose users are not ordered after its def cannot earn a negative cost)
    prof_all = counted & ~outs  # buffers whose liveness ends once all users are in D
    sel = prof_all[bufs]
    yb_t = np.concatenate([n + bufs[sel], n + np.flatnonzero(prof_all & (defs >= 0))])
    yb_h = np.concatenate([users[sel], defs[prof_all & (defs >= 0)]])
    inf_t = np.concatenate([prec_t, yb_t])
    inf_h = np.concatenate([prec_h, yb_h])
    for s in range(S):
        size = p.sizes[s].astype(np.int64)
        inf = int(size.sum()) + 1
        for v in range(n):
            tb = t_bufs[t_ptr[v] : t_ptr[v + 1]]
            # a buffer v uses is live at v's step if it is defined at or before it; in a
            # relaxation its def may be unordered with v: then it is live iff its def is in D
            late = tb[(defs[tb] >= 0) & ~selfanc[v, np.maximum(defs[tb], 0)]]
            live_const = int(size[tb].sum()) - int(size[late].sum())
            free = counted & (size > 0)
            free[tb] = False
            # x_def costs size (the buffer becomes live); y_b earns it back when not needed
            # after D; live-from-start buffers pay their size whatever D is
            d_sel = free & (defs >= 0)
            w_op = np.bincount(defs[d_sel], weights=size[d_sel], minlength=n).astype(np.int64)
            np.add.at(w_op, defs[late], size[late])
            c0 = int(size[free & (defs < 0)].sum())
            prof = np.where(free & ~outs, size, 0)
            forced_in = np.flatnonzero(anc[v])
            forced_out = np.flatnonzero(desc[v])
            wo = np.flatnonzero(w_op > 0)
            pb = np.flatnonzero(prof > 0)
            tails = np.concatenate(
                [inf_t, wo, np.full(pb.size, src), np.full(forced_in.size + 1, src), forced_out]
            )
            heads = np.concatenate(
                [inf_h, np.full(wo.size, snk), n + pb, forced_in, [v], np.full(forced_out.size, snk)]
            )
            caps = np.concatenate(
                [
                    np.full(inf_t.size, inf),
                    w_op[wo],
                    prof[pb],
                    np.full(forced_in.size + 1 + forced_out.size, inf),
                ]
            )
            m = max_flow.SimpleMaxFlow()
            m.add_arcs_with_capacity(
                tails.astype(np.int32), heads.astype(np.int32), caps.astype(np.int64)
            )
            if m.solve(src, snk) != m.OPTIMAL:
                continue  # keep the forced-live bound
            cut = int(m.optimal_flow()) - int(prof.sum()) + c0
            val = int(p.base[s]) + int(p.transient[s, v]) + live_const + cut
            out[s, v] = max(out[s, v], val)
    return out
