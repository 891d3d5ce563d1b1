"""Constraint families of the joint model (``cpsched.strategies.joint.method`` documents the model):
the overlap model's compute stream, dependences, order literals and collective transfers,
plus gaps (clone or host round trip), the host copy stream and memory per scenario;
``build`` puts them together."""

from __future__ import annotations

from typing import Any

import numpy as np

from cpsched.cp.joint.problem import JointProblem
from cpsched.cp.joint.variables import JointVars, Reader, make_vars
from cpsched.cp.overlap import constraints as overlap
from cpsched.cp.overlap.problem import Infeasible
from cpsched.remat.policy import inplace_writers


def readers(prob: JointProblem) -> dict[int, list[Reader]]:
    """Every buffer's readers: its main users, and the clones (of remat buffers) whose
    defining op reads it."""
    g = prob.graph
    out: dict[int, list[Reader]] = {
        b: [("op", int(u)) for u in g.buffer_users(b)] for b in range(g.n_buffers)
    }
    for b in np.flatnonzero(prob.remat_buffers):
        a = int(g.buffer_def[b])
        for j in g.uses(a):
            out[int(j)].append(("clone", int(b)))
    return out


def _span(J: JointVars, reader: Reader, c: int) -> tuple[Any, Any, Any]:
    """(start, end, presence) of a reader in copy ``c``."""
    V, g = J.V, J.prob.graph
    kind, x = reader
    if kind == "op":
        return V.s[c][x], V.s[c][x] + int(V.d[c, x]), True
    a = int(g.buffer_def[x])
    s = J.clone_start[x][c]
    return s, s + int(V.d[c, a]), J.remat[x][c]


def _when(*lits) -> list[Any]:
    return [x for x in lits if x is not True]


def gaps(J: JointVars, rd: dict[int, list[Reader]]) -> None:
    """Per gap buffer and copy: at most one kind; early readers end before the drop (before
    the copy-out starts when offloaded); late readers start after the clone / the copy back
    and end before the second copy's end; a clone starts after the drop, a copy-out after
    the definition, the drop after the copy-out, the copy back after the drop."""
    prob, V, m, g = J.prob, J.V, J.m, J.prob.graph
    writers = inplace_writers(g)
    for b in prob.gap_buffers:
        a = int(g.buffer_def[b])
        for c in range(J.C):
            rem = J.lit_or_false(J.remat, b, c)
            ev = J.lit_or_false(J.evict, b, c)
            kinds = [x for x in (rem, ev) if x is not False]
            if len(kinds) == 2:
                m.add_at_most_one(kinds)
            F, L = J.drop[b][c], J.second_end[b][c]
            m.add(F >= V.s[c][a] + int(V.d[c, a]))
            if rem is not False:
                R = J.clone_start[b][c]
                m.add(R >= F).only_enforce_if(rem)
                m.add(L >= R + int(V.d[c, a])).only_enforce_if(rem)
                m.add(V.M[c] >= R + int(V.d[c, a])).only_enforce_if(rem)
                # a clone reads its op's inputs: an offloaded input cannot serve it, and one
                # overwritten in place must be read before its writer runs
                for j in g.uses(a):
                    if int(j) in J.evict:
                        m.add_bool_or([~rem, ~J.evict[int(j)][c]])
                    for wr in writers[int(j)]:
                        m.add(V.s[c][wr] >= R + int(V.d[c, a])).only_enforce_if(rem)
            if ev is not False:
                tau = int(J.host[c, b])
                O, P = J.out_start[b][c], J.back_start[b][c]
                m.add(O >= V.s[c][a] + int(V.d[c, a])).only_enforce_if(ev)
                m.add(F >= O + tau).only_enforce_if(ev)
                m.add(P >= F).only_enforce_if(ev)
                m.add(L >= P + tau).only_enforce_if(ev)
                m.add(V.M[c] >= P + tau).only_enforce_if(ev)
            if not kinds:
                m.add(L == 0)
            for r in rd[b]:
                st, en, pres = _span(J, r, c)
                if not kinds:
                    m.add(F >= en).only_enforce_if(_when(pres))
                    continue
                late = m.new_bool_var(f"late{b}_{r[0]}{r[1]}_{c}")
                J.late.setdefault((b, r), []).append(late)
                m.add(sum(kinds) >= 1).only_enforce_if(late)
                if pres is not True:
                    m.add_implication(late, pres)
                m.add(F >= en).only_enforce_if(_when(~late, pres))
                m.add(L >= en).only_enforce_if(late)
                if rem is not False:
                    m.add(st >= J.clone_start[b][c] + int(V.d[c, a])).only_enforce_if([late, rem])
                if ev is not False:
                    tau = int(J.host[c, b])
                    m.add(en <= J.out_start[b][c]).only_enforce_if(_when(~late, pres, ev))
                    m.add(st >= J.back_start[b][c] + tau).only_enforce_if([late, ev])


def clone_inputs(J: JointVars, rd: dict[int, list[Reader]]) -> dict[int, list[Any]]:
    """End variables of plain buffers (no gap) that a clone may read: after every reader."""
    prob, V, m, g = J.prob, J.V, J.m, J.prob.graph
    gap = set(prob.gap_buffers)
    for b in range(g.n_buffers):
        if b in gap or g.buffer_live_out[b] or not any(r[0] == "clone" for r in rd[b]):
            continue
        J.ends[b] = []
        for c in range(J.C):
            E = m.new_int_var(0, int(V.H[c]), f"E{b}_{c}")
            for r in rd[b]:
                _, en, pres = _span(J, r, c)
                m.add(E >= en).only_enforce_if(_when(pres))
            J.ends[b].append(E)
    return J.ends


def copy_stream(J: JointVars) -> None:
    """Host copies share one copy stream (the timeline's ``copy`` stream)."""
    for c in range(J.C):
        if len(J.copy_ivs[c]) > 1:
            J.m.add_no_overlap(J.copy_ivs[c])


def memory(J: JointVars) -> None:
    """One ``Cumulative`` per scenario over its own time copy: every device buffer from its
    definition (0 if live-in) to its end (the horizon if live-out); a gap buffer as its first
    copy up to the drop plus the optional second copy; op and clone transients; the budget
    as capacity (live-through buffers taken off it)."""
    prob, V, m, g = J.prob, J.V, J.m, J.prob.graph
    sc = prob.scenarios
    sizes = g.sizes(sc) if g.n_buffers else np.zeros((len(sc), 0), dtype=np.int64)
    trans = g.transient_bytes(sc)
    gap = set(prob.gap_buffers)
    for c in range(J.C):
        H = int(V.H[c])
        s = V.s[c]
        ivs: list[Any] = []
        dem: list[int] = []
        const = 0
        ends: dict[tuple[int, ...], Any] = {}

        def add(iv, nbytes: int, ivs=ivs, dem=dem) -> None:
            if nbytes > 0:
                ivs.append(iv)
                dem.append(int(nbytes))

        for b in range(g.n_buffers):
            sz = int(sizes[c, b])
            if sz <= 0:
                continue
            li, lo = bool(g.buffer_live_in[b]), bool(g.buffer_live_out[b])
            if li and lo:
                const += sz
                continue
            start: Any = 0 if li else s[int(g.buffer_def[b])]
            if b in gap:
                F = J.drop[b][c]
                add(V.span(start, F, H, f"m{b}_{c}"), sz)
                L = J.second_end[b][c]
                if b in J.remat:
                    R = J.clone_start[b][c]
                    size = m.new_int_var(0, H, f"rl{b}_{c}")
                    J.second_sizes.append((c, b, size, "remat"))
                    add(m.new_optional_interval_var(R, size, L, J.remat[b][c], f"rm{b}_{c}"), sz)
                if b in J.evict:
                    P = J.back_start[b][c]
                    size = m.new_int_var(0, H, f"pl{b}_{c}")
                    J.second_sizes.append((c, b, size, "evict"))
                    add(m.new_optional_interval_var(P, size, L, J.evict[b][c], f"pm{b}_{c}"), sz)
                continue
            end: Any
            if lo:
                end = H
            elif b in J.ends:
                end = J.ends[b][c]
            else:
                users = tuple(sorted(int(u) for u in g.buffer_users(b))) or (int(g.buffer_def[b]),)
                if len(users) == 1:
                    end = s[users[0]] + int(V.d[c, users[0]])
                else:
                    end = ends.get(users)
                    if end is None:
                        end = m.new_int_var(0, H, f"E{c}_{len(ends)}")
                        for u in users:
                            m.add(end >= s[u] + int(V.d[c, u]))
                        ends[users] = end
                        J.group_ends.append((c, end, users))
            add(V.span(start, end, H, f"m{b}_{c}"), sz)
        for i in range(g.n_ops):
            add(V.iv[c][i], int(trans[c, i]))
        for b in J.remat:
            a = int(g.buffer_def[b])
            add(J.clone_iv[b][c], int(trans[c, a]))
        cap = int(prob.budget[c]) - const
        if cap < 0:
            raise Infeasible(f"live-through buffers alone exceed the budget in {sc.names[c]}")
        if ivs and sum(dem) > cap:
            gcd = int(np.gcd.reduce(np.asarray(dem, dtype=np.int64)))
            m.add_cumulative(ivs, [x // gcd for x in dem], cap // gcd)
        J.stats[f"memory_intervals_{c}"] = len(ivs)


def build(
    prob: JointProblem,
    d: np.ndarray,
    t: np.ndarray,
    host: np.ndarray,
    horizon: np.ndarray,
    *,
    fifo_order: bool = True,
    window=None,
) -> JointVars:
    """The joint model over one time copy per scenario sharing one order; ``window =
    (order, a, b)``: the ops outside positions ``a..b-1`` keep their order (clones, copies
    and every gap decision stay free)."""
    J = make_vars(prob, d, t, host, horizon, window)
    V = J.V
    for c in range(J.C):
        V.iv[c].extend(J.clone_iv[b][c] for b in J.remat)  # clones run on the compute stream
    overlap.compute_stream(V)
    overlap.precedences(V)
    overlap.order_literals(V, J.C > 1)
    overlap.transfers(V, fifo_order)
    rd = readers(prob)
    gaps(J, rd)
    clone_inputs(J, rd)
    copy_stream(J)
    memory(J)
    J.stats.update(V.stats)
    return J
