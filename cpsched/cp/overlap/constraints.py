"""Constraint families of the overlap model (``cpsched.strategies.overlap.method`` documents the
model): the compute stream, dependences, order literals, transfers and their FIFO streams,
memory (cumulative, and the redundant step model over order literals), in-flight limits;
``build`` puts them together."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cpsched.cp.overlap.bounds import heads_tails
from cpsched.cp.overlap.problem import Infeasible, OverlapProblem, reduced_edges
from cpsched.cp.overlap.variables import Vars, make_vars

POSITION_MEMORY_MAX = 6_000  # (buffer groups x ops) for the redundant step memory model


def compute_stream(V: Vars) -> None:
    """One op at a time on the compute stream; the makespan ends after every sink."""
    g, m = V.prob.graph, V.m
    sinks = np.flatnonzero(np.diff(g.succ_ptr) == 0)
    for c in range(V.C):
        m.add_no_overlap(V.iv[c])
        for i in sinks:
            m.add(V.M[c] >= V.s[c][i] + int(V.d[c, i]))


def precedences(V: Vars) -> None:
    """``s_v >= s_u + d_u`` for the reduced dependences (inside a window: between window
    ops, plus the fixed chain of the others and the window's two neighbours)."""
    prob, m, d, n = V.prob, V.m, V.d, V.prob.n
    edges = reduced_edges(prob.graph, prob.anc)
    V.stats["precedences"] = len(edges)
    window = V.window
    for u, v in edges:
        if window is not None and not (V.wgrp[u] == 1 and V.wgrp[v] == 1):
            continue  # implied by the fixed chain
        for c in range(V.C):
            m.add(V.s[c][v] >= V.s[c][u] + int(d[c, u]))
    if window is None:
        return
    w_order, wa, wb = window
    fixed = [int(v) for k, v in enumerate(w_order) if not (wa <= k < wb)]
    for u, v in zip(fixed, fixed[1:]):
        for c in range(V.C):
            m.add(V.s[c][v] >= V.s[c][u] + int(d[c, u]))
    for v in V.wops:
        for c in range(V.C):
            if wa > 0:
                u = int(w_order[wa - 1])
                m.add(V.s[c][v] >= V.s[c][u] + int(d[c, u]))
            if wb < n:
                u = int(w_order[wb])
                m.add(V.s[c][u] >= V.s[c][v] + int(d[c, v]))


def order_literals(V: Vars, every_pair: bool) -> None:
    """Order literals between the window's free ops, or (``every_pair``) between all pairs
    of independent ops: they tie the time copies to one order."""
    anc = V.prob.anc
    if V.window is not None:
        for k, i in enumerate(V.wops):
            for j in V.wops[k + 1 :]:
                if V.before(i, j) is None:
                    V.order_lit(i, j)
        V.stats["order_literals"] = len(V.lit)
    elif every_pair:
        assert anc is not None  # problems are built with reachability (reach=True)
        iu, ju = np.triu_indices(V.prob.n, 1)
        free = ~(anc[iu, ju] | anc[ju, iu])
        for i, j in zip(iu[free].tolist(), ju[free].tolist()):
            V.order_lit(i, j)
        V.stats["order_literals"] = len(V.lit)


def transfers(V: Vars, fifo_order: bool) -> None:
    """Every async transfer ``p`` (start ``a``, done ``b``) is an interval ``[x_p, x_p +
    t_p)`` after ``a`` and before ``b``; transfers of one stream do not overlap."""
    prob, m, d, t, horizon = V.prob, V.m, V.d, V.t, V.H
    P = prob.P
    if not P:
        return
    window, prefix_times = V.window, V.prefix_times
    for c in range(V.C):
        dc = d[c].astype(np.float64)
        from_head, tail = heads_tails(prob.anc, dc[None, :])
        fixed_x = {}
        if window is not None and prefix_times is not None:
            tb = np.rint(np.asarray(prefix_times.transfer_begin)).astype(np.int64)
            for k_row, a_op in enumerate(prefix_times.pair_start):
                if V.wgrp[int(a_op)] == 0:
                    fixed_x[int(a_op)] = int(tb[c, k_row])
        for p in range(P):
            a, b = int(prob.starts[p]), int(prob.dones[p])
            if a in fixed_x:
                x = m.new_constant(fixed_x[a])
                V.x[c].append(x)
                if b >= 0:
                    m.add(V.s[c][b] >= x + int(t[c, p]))
                else:
                    m.add(V.M[c] >= x + int(t[c, p]))
                continue
            lo = int(from_head[0, a] + d[c, a])
            hi = int(horizon[c]) - int(t[c, p]) - (int(tail[0, b]) if b >= 0 else 0)
            x = m.new_int_var(lo, max(lo, hi), f"x{c}_{p}")
            if hi < lo:
                raise Infeasible("horizon below a transfer's head and tail")
            V.x[c].append(x)
            m.add(x >= V.s[c][a] + int(d[c, a]))
            if b >= 0:
                m.add(V.s[c][b] >= x + int(t[c, p]))
            else:
                m.add(V.M[c] >= x + int(t[c, p]))
        for r in range(len(prob.streams)):
            sel = [p for p in range(P) if prob.stream[p] == r and t[c, p] > 0]
            if len(sel) > 1:
                m.add_no_overlap(
                    [
                        m.new_fixed_size_interval_var(V.x[c][p], int(t[c, p]), f"T{c}_{p}")
                        for p in sel
                    ]
                )
    V.fifo = fifo_order
    if fifo_order:
        fifo(V)


def fifo(V: Vars) -> None:
    """Transfers of one stream run first-in first-out in the order of their starts: one
    literal per pair of unordered starts decides both orders."""
    prob, m = V.prob, V.m
    n_lit = 0
    for r in range(len(prob.streams)):
        sel = [p for p in range(prob.P) if prob.stream[p] == r]
        for k, p in enumerate(sel):
            for q in sel[k + 1 :]:
                a, b = int(prob.starts[p]), int(prob.starts[q])
                known = V.before(a, b)
                for c in range(V.C):
                    if known is True:
                        m.add(V.x[c][q] >= V.x[c][p] + int(V.t[c, p]))
                    elif known is False:
                        m.add(V.x[c][p] >= V.x[c][q] + int(V.t[c, q]))
                if known is not None:
                    continue
                lit = V.order_lit(a, b)
                n_lit += 1
                for c in range(V.C):
                    m.add(V.x[c][q] >= V.x[c][p] + int(V.t[c, p])).only_enforce_if(lit)
                    m.add(V.x[c][p] >= V.x[c][q] + int(V.t[c, q])).only_enforce_if(~lit)
    V.stats["fifo_literals"] = n_lit


def memory(V: Vars, budget: np.ndarray, peak_vars: bool) -> None:
    """Buffer groups (same definition, same last users) as intervals with their bytes, op
    transients over the op, one ``Cumulative`` per scenario with the budget as capacity
    (``peak_vars``: the capacity a variable, for the peak tie-breaker)."""
    prob, m = V.prob, V.m
    g = prob.graph
    sc = prob.scenarios
    sizes = g.sizes(sc)  # [S, B]
    trans = g.transient_bytes(sc)  # [S, n]
    H0 = int(V.H[0])
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
                sub = anc[np.ix_(us, us)]  # sub[a, b]: us[b] is an ancestor of us[a]
                users = [u for k, u in enumerate(users) if not sub[:, k].any()]
            ekey = tuple(sorted(users))
        key = (skey, ekey)
        if key in groups:
            groups[key] = groups[key] + sz
        else:
            groups[key] = sz.astype(np.int64).copy()
    V.groups = groups
    V.const_bytes = const
    if V.window is not None:
        # outside the window memory is as in the given order; inside, exact in steps
        memory_positions(V, budget, groups, const, trans, V.wops)
        return
    if V.lit and prob.anc is not None and len(groups) * prob.n <= POSITION_MEMORY_MAX:
        memory_positions(V, budget, groups, const, trans, range(prob.n))
    ivs, dem = [], []
    ends: dict[tuple, Any] = {}
    V.buffer_ends = []
    for (skey, ekey), sz in groups.items():
        start = 0 if skey == -1 else V.s[0][skey]
        if ekey == "H":
            end: Any = H0
        elif len(ekey) == 1:
            end = V.end_expr(ekey[0])
        else:
            end = ends.get(ekey)
            if end is None:
                end_lo = max(int(V.lo[0][u]) + int(V.d[0, u]) for u in ekey)
                end = m.new_int_var(end_lo, H0, "E")
                for u in ekey:
                    m.add(end >= V.end_expr(u))
                ends[ekey] = end
                V.buffer_ends.append((end, ekey))
        ivs.append(V.span(start, end, H0, "buf"))
        dem.append(sz)
    for i in range(prob.n):
        if trans[:, i].any():
            ivs.append(V.iv[0][i])
            dem.append(trans[:, i].astype(np.int64))
    V.mem_groups = len(ivs)
    V.stats["memory_intervals"] = len(ivs)
    dem_arr = np.stack(dem, axis=1) if dem else np.zeros((len(sc), 0), np.int64)
    for k in range(len(sc)):
        cap = int(budget[k]) - int(const[k])
        if cap < 0:
            raise Infeasible(f"live-through buffers alone exceed the budget in {sc.names[k]}")
        dk = dem_arr[k]
        nz = np.flatnonzero(dk > 0)
        if nz.size == 0:
            continue
        gcd = int(np.gcd.reduce(dk[nz]))
        if not peak_vars and int(dk[nz].sum()) <= cap:
            continue  # can never bind
        capv: Any = cap // gcd
        if peak_vars:
            capv = m.new_int_var(0, cap // gcd, f"peak{k}")
            V.peak_vars.append((capv, gcd, int(const[k])))
        m.add_cumulative([ivs[i] for i in nz], [int(x) // gcd for x in dk[nz]], capv)


def memory_positions(V: Vars, budget, groups, const, trans, ops) -> None:
    """Redundant, exact memory in steps over the order literals: buffer group ``b`` is
    live at op ``v`` iff its definition is not after ``v`` and some end op is not
    before ``v``; one linear constraint per op and scenario."""
    m = V.m
    keys = list(groups)
    n_z = 0

    def before(u: int, v: int):
        """True / False / literal for "u at or before v"."""
        if u == v:
            return True
        known = V.before(u, v)
        if known is not None:
            return known
        return V.order_lit(u, v)

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
                raise Infeasible("an op's own buffers exceed the budget")
            tk = [(z, int(sz[k])) for z, sz in terms if sz[k] > 0]
            if sum(w for _, w in tk) > cap:
                m.add(sum(w * z for z, w in tk) <= cap)
    V.stats["position_memory_literals"] = n_z


def inflight_limits(V: Vars, limits: Mapping[str, int], inflight_var: bool) -> None:
    """XLA LHS's in-flight limits: a ``Cumulative`` of capacity ``N`` per collective kind over
    the ``[start, done]`` spans; ``inflight_var``: one variable for all collectives."""
    prob, m = V.prob, V.m
    spans: dict[str, list[Any]] = {}
    for p in range(prob.P):
        b = int(prob.dones[p])
        if b < 0:
            continue
        kind = prob.kind_of(p)
        if kind not in limits and not (inflight_var and prob.classes[p].startswith("collective:")):
            continue
        a = int(prob.starts[p])
        e = V.end_expr(b)
        spans.setdefault(kind, []).append(V.span(V.s[0][a], e, int(V.H[0]), f"span{p}"))
    for kind, ivs in spans.items():
        if kind in limits and len(ivs) > limits[kind]:
            m.add_cumulative(ivs, [1] * len(ivs), int(limits[kind]))
    if inflight_var:
        allc = [iv for k, ivs in spans.items() for iv in ivs if k not in ("copy", "async-compute")]
        if allc:
            V.inflight = m.new_int_var(0, len(allc), "inflight")
            m.add_cumulative(allc, [1] * len(allc), V.inflight)


# hints and extraction -----------------------------------------------------------------


def build(
    prob: OverlapProblem,
    d: np.ndarray,
    t: np.ndarray,
    horizon: np.ndarray,
    *,
    budget: np.ndarray | None,
    limits: Mapping[str, int],
    transfers_on: bool,
    fifo_order: bool,
    peak_vars: bool = False,
    inflight_var: bool = False,
    order_literals_all: bool = False,
    window: tuple[Sequence[int], int, int] | None = None,
    prefix_times: Any = None,
) -> Vars:
    """The time-indexed model over ``C = d.shape[0]`` time copies sharing one order."""
    V = make_vars(prob, d, t, horizon, window=window, prefix_times=prefix_times)
    compute_stream(V)
    precedences(V)
    order_literals(V, V.C > 1 or order_literals_all)
    if transfers_on:
        transfers(V, fifo_order)
    if budget is not None:
        memory(V, budget, peak_vars)
    inflight_limits(V, limits, inflight_var)
    return V
