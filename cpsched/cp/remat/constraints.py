"""Constraint families of the remat model: buffer copies (retention, coverage of every
read, eviction holes), transient bytes, copy streams, memory per scenario; ``build`` puts
them together (the objective is ``cpsched.cp.remat.objectives``)."""

from __future__ import annotations

import numpy as np
from ortools.sat.python import cp_model

from cpsched.cp.remat.problem import Spec
from cpsched.cp.remat.variables import Vars, make_vars


def buffer(mdl: Vars, b: int) -> None:
    """Buffer ``b``'s copies: retention ends per scenario, eviction variables, every read
    inside a present copy, copies of one op disjoint and ordered, retention intervals."""
    sp, g, m, G, H = mdl.sp, mdl.sp.graph, mdl.m, mdl.sp.G, mdl.H
    S = sp.n_s
    v = int(g.buffer_def[b])
    K = int(mdl.K[v])
    live_in = bool(g.buffer_live_in[b])
    live_out = bool(g.buffer_live_out[b])
    rs = mdl.reads.get(b, [])
    start0 = 0 if live_in else mdl.A0[v]
    size = sp.sizes[:, b]
    ev = b in sp.evict_cands and K >= 1
    # copy 0 end per scenario
    fixed_reads = [r for r in rs if r[1] is None and isinstance(r[0], (int, np.integer))]
    lb = max([int(r[0]) for r in fixed_reads], default=None)
    for k in range(K):
        Es: list[cp_model.IntVar | int] = []
        for s in range(S):
            st = start0 if k == 0 else mdl.R[v, k]
            if k == 0 and K == 1 and live_out:
                Es.append(H - 1)
                continue
            if k == 0 and K == 1 and mdl.fixed and not ev and all(r[1] is None for r in rs):
                Es.append(int(max([int(start0)] + [int(r[0]) for r in rs])))
                continue
            lo = 0
            if k == 0 and K == 1 and lb is not None:
                lo = lb
            if mdl.fixed and k == 0:
                lo = max(lo, int(start0))
            e = m.new_int_var(lo, H - 1, f"E{b}_{k}_{s}")
            m.add(e >= st)
            Es.append(e)
        mdl.E[b, k] = Es
    if K > 1 and live_out:
        raise AssertionError("program outputs are never cloned")
    # eviction variables (copy 0)
    if ev:
        a, c, rdom, gdom = sp.evict_cands[b]
        r = m.new_int_var_from_domain(cp_model.Domain.from_values(rdom), f"r{b}")
        gg = m.new_int_var_from_domain(cp_model.Domain.from_values(gdom), f"g{b}")
        m.add(gg >= r)
        mdl.rb[b], mdl.gb[b] = r, gg
        mdl.V[b] = [m.new_bool_var(f"V{b}_{s}") for s in range(S)]
    # coverage
    for slot, pres, key in rs:
        for s in range(S):
            p = None if pres is None else pres[s]
            if K == 1:
                e = mdl.E[b, 0][s]
                if isinstance(e, int):
                    if not isinstance(slot, (int, np.integer)):
                        ct = m.add(e >= slot)
                        if p is not None:
                            ct.only_enforce_if(p)
                else:
                    ct = m.add(e >= slot)
                    if p is not None:
                        ct.only_enforce_if(p)
                if ev and p is not None:
                    hole(mdl, b, s, slot, [p])
                continue
            xs = []
            for k in range(K):
                xv = m.new_bool_var(f"x{b}_{key[0]}_{key[1]}_{k}_{s}")
                mdl.x[b, key, k, s] = xv
                xs.append(xv)
                if k > 0:
                    m.add_implication(xv, mdl.P[v, k][s])
                    m.add(mdl.R[v, k] < slot).only_enforce_if(xv)
                m.add(mdl.E[b, k][s] >= slot).only_enforce_if(xv)
                if k == 0 and ev and p is not None:
                    hole(mdl, b, s, slot, [xv])
            if p is None:
                m.add_exactly_one(xs)
            else:
                m.add(sum(xs) == p)
    # copies of one op are disjoint and ordered (per scenario)
    for k in range(1, K):
        for s in range(S):
            m.add(mdl.R[v, k] > mdl.E[b, k - 1][s]).only_enforce_if(mdl.P[v, k][s])
    # intervals
    for k in range(K):
        for s in range(S):
            if size[s] <= 0:
                continue
            e = mdl.E[b, k][s]
            st = start0 if k == 0 else mdl.R[v, k]
            if k == 0 and not ev:
                if isinstance(e, int) and isinstance(st, (int, np.integer)):
                    iv = m.new_fixed_size_interval_var(int(st), int(e) - int(st) + 1, f"B{b}")
                else:
                    sz = m.new_int_var(1, H, f"L{b}_{s}")
                    iv = m.new_interval_var(st, sz, e + 1, f"B{b}_{s}")
                    mdl.lengths.append((sz, mdl.start0(b), ("E", b, 0, s)))
                mdl.intervals[s].append((iv, int(size[s])))
            elif k == 0:
                V = mdl.V[b][s]
                nv = V.Not()
                sz = m.new_int_var(1, H, f"L{b}_{s}")
                iv = m.new_optional_interval_var(st, sz, e + 1, nv, f"B{b}_{s}")
                mdl.lengths.append((sz, mdl.start0(b), ("E", b, 0, s)))
                mdl.intervals[s].append((iv, int(size[s])))
                sz1 = m.new_int_var(1, H, f"L1{b}_{s}")
                iv1 = m.new_optional_interval_var(st, sz1, G * mdl.rb[b], V, f"B1{b}_{s}")
                mdl.lengths.append((sz1, mdl.start0(b), ("free", b)))
                sz2 = m.new_int_var(1, H, f"L2{b}_{s}")
                iv2 = m.new_optional_interval_var(G * mdl.gb[b], sz2, e + 1, V, f"B2{b}_{s}")
                mdl.lengths.append((sz2, ("fetch", b), ("E", b, 0, s)))
                mdl.intervals[s].append((iv1, int(size[s])))
                mdl.intervals[s].append((iv2, int(size[s])))
            else:
                sz = m.new_int_var(1, H, f"L{b}_{k}_{s}")
                iv = m.new_optional_interval_var(st, sz, e + 1, mdl.P[v, k][s], f"B{b}_{k}_{s}")
                mdl.lengths.append((sz, ("clone", v, k), ("E", b, k, s)))
                mdl.intervals[s].append((iv, int(size[s])))


def hole(mdl: Vars, b: int, s: int, slot, conds: list) -> None:
    """A clone's read served by copy 0 of an evicted buffer comes before the device copy
    is freed, or no earlier than the step of the next main read: the copy-stream timing
    only checks that the prefetch is done by then (a clone reading it just after the
    prefetch is issued would stall on it)."""
    m, G = mdl.m, mdl.sp.G
    c = mdl.sp.evict_cands[b][1]
    beta = m.new_bool_var(f"beta{b}_{s}")
    V = mdl.V[b][s]
    m.add(slot <= G * mdl.rb[b] - 1).only_enforce_if([V, beta] + conds)
    m.add(slot >= G * c).only_enforce_if([V, beta.Not()] + conds)


def copy_streams(mdl: Vars) -> None:
    """Copy-stream timing from the main steps' start times ``T`` (clones and stalls
    left out). Copy-outs run first-in first-out in issue order (step, then buffer), as
    a CUDA stream does; a copy-in starts within the step before which its buffer is
    allocated (so issue order is start order) and the streams do not overlap."""
    sp, m = mdl.sp, mdl.m
    S = sp.n_s
    order = sp.order
    # evictions (mdl.V) come only with a fixed order and transfer times
    assert order is not None and sp.tau is not None
    chain = sorted(mdl.V, key=lambda b: (sp.evict_cands[b][0], b))
    for s in range(S):
        T = [0] + [int(x) for x in np.cumsum([int(sp.dur[s, v]) for v in order])]
        horizon = int(T[-1]) + int(sp.tau[s].max(initial=0)) * (len(mdl.V) + 2) + 1
        Text = T + [horizon]
        prev = None
        outs, ins = [], []
        for b in chain:
            a, c, rdom, gdom = sp.evict_cands[b]
            tau = int(sp.tau[s, b])
            V = mdl.V[b][s]
            x = m.new_int_var(int(T[a + 1]), horizon, f"xo{b}_{s}")
            z = m.new_int_var(0, horizon, f"z{b}_{s}")
            if prev is not None:
                m.add(z >= prev)
                m.add(x >= prev).only_enforce_if(V)
            m.add(z >= x + tau).only_enforce_if(V)
            prev = z
            outs.append(m.new_optional_fixed_size_interval_var(x, max(tau, 1), V, f"D2H{b}_{s}"))
            y = m.new_int_var(int(T[a + 1]), horizon, f"yi{b}_{s}")
            mdl.y[b, s] = y
            ins.append(m.new_optional_fixed_size_interval_var(y, max(tau, 1), V, f"H2D{b}_{s}"))
            Tr = m.new_int_var(0, int(T[-1]), f"Tr{b}_{s}")
            m.add_element(mdl.rb[b], T, Tr)
            Tg = m.new_int_var(0, int(T[-1]), f"Tg{b}_{s}")
            m.add_element(mdl.gb[b], T, Tg)
            Tg1 = m.new_int_var(0, horizon, f"Tg1{b}_{s}")
            m.add_element(mdl.gb[b] + 1, Text, Tg1)
            m.add(Tr >= x + tau).only_enforce_if(V)
            m.add(y >= x + tau).only_enforce_if(V)
            m.add(y >= Tg).only_enforce_if(V)
            m.add(y < Tg1).only_enforce_if(V)
            X = m.new_int_var(0, horizon, f"X{b}_{s}")
            m.add(X >= y + tau - int(T[c])).only_enforce_if(V)
            m.add(X == 0).only_enforce_if(V.Not())
            mdl.X[b, s] = X
            # an evicted copy is read again after the prefetch
            m.add(mdl.E[b, 0][s] >= sp.G * mdl.gb[b]).only_enforce_if(V)
        if sp.streams == 1:
            m.add_no_overlap(outs + ins)
        else:
            m.add_no_overlap(ins)


def transients(mdl: Vars) -> None:
    """An op's transient bytes over its slot (and over each present clone's slot)."""
    spec, m = mdl.sp, mdl.m
    for v in range(mdl.n):
        for s in range(spec.n_s):
            if spec.trans[s, v] > 0:
                iv = (
                    m.new_fixed_size_interval_var(mdl.A0[v], 1, f"T{v}")
                    if not mdl.fixed
                    else m.new_fixed_size_interval_var(int(mdl.A0[v]), 1, f"T{v}")
                )
                mdl.intervals[s].append((iv, int(spec.trans[s, v])))
                for k in range(1, int(mdl.K[v])):
                    iv = m.new_optional_fixed_size_interval_var(
                        mdl.R[v, k], 1, mdl.P[v, k][s], f"T{v}_{k}"
                    )
                    mdl.intervals[s].append((iv, int(spec.trans[s, v])))


def memory(mdl: Vars) -> None:
    """One cumulative per scenario over every retention interval and transient, capacity
    the scenario's scaled budget (a variable under the peak objective)."""
    spec, m = mdl.sp, mdl.m
    for s in range(spec.n_s):
        ivs = [iv for iv, d in mdl.intervals[s] if d > 0]
        ds = [d for iv, d in mdl.intervals[s] if d > 0]
        if spec.objective == "peak":
            cv = m.new_int_var(
                0, int(spec.sizes[s].sum() + spec.trans[s].max(initial=0)), f"cap{s}"
            )
            mdl.capvar.append(cv)
            m.add_cumulative(ivs, ds, cv)
        else:
            assert spec.cap is not None  # the time objective has a budget
            m.add_cumulative(ivs, ds, int(spec.cap[s]))


def build(spec: Spec) -> Vars:
    """Variables and every constraint family (no objective yet)."""
    mdl = make_vars(spec)
    for b in range(spec.graph.n_buffers):
        buffer(mdl, b)
    transients(mdl)
    if mdl.V:
        copy_streams(mdl)
    memory(mdl)
    return mdl
