"""Lower bounds on makespan and exposed communication for the overlap problem.

The setting (same as ``cpsched.cost.timeline``): one compute stream runs the ops in order; each
async start issues a transfer on its stream (FIFO), and its done waits for the transfer.
A bound here holds for **every** order, whatever the memory budget:

- compute: the compute stream must run all its work, ``C`` (op times, sync collectives
  included);
- per transfer ``c`` (start ``a``, done ``d``): every ancestor of ``a`` (and ``a``) runs
  before the transfer begins, every descendant of ``d`` (and ``d``) after it ends, all on
  the one compute stream: ``head(c) + t(c) + tail(c)``, with ``head(c)`` the sum (not the
  longest path) of the ancestors' times. Only ops that are neither ancestors of ``a`` nor
  descendants of ``d`` can hide the transfer. Heads propagate along chains of transfers:
  a transfer cannot begin before an earlier transfer whose done is its ancestor has ended
  and the ops forced between the two have run;
- per stream: transfers on one FIFO stream never overlap, so for any subset ``Q`` of its
  transfers ``min head + sum t + min tail`` (the one-machine head-body-tail bound, over the
  subsets cut by head and tail thresholds).

``exposed_comm >= makespan_bound - compute`` when the waits are all on collectives (no
copies or async compute, every collective start has its done); otherwise only the sync
collective time is certain.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cpsched.analysis.memory import reachability

# Graphs above this many ops get only the compute and plain stream bounds (the others need
# n^2 bits of reachability).
REACH_MAX_OPS = 6000


@dataclass(frozen=True)
class OverlapBound:
    makespan: np.ndarray  # [S] no order finishes earlier
    exposed_comm: np.ndarray  # [S] no order exposes less collective time
    compute: np.ndarray  # [S] compute-stream work without sync collectives
    sync: np.ndarray  # [S] sync collective time (always exposed)
    per_pair: np.ndarray  # [S, P] head + t + tail of every transfer
    which: list[str]  # per scenario: the bound that decides it


def reach_matrix(graph) -> np.ndarray | None:
    """``anc[v, u]``: u is a strict ancestor of v; ``None`` above ``REACH_MAX_OPS``."""
    if graph.n_ops > REACH_MAX_OPS:
        return None
    return reachability(graph)[0]


def heads_tails(anc: np.ndarray | None, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``head[s, i]`` = time of i's strict ancestors, ``tail[s, i]`` = time of i and its
    descendants, for durations ``d[S, n]`` (zeros without reachability)."""
    if anc is None:
        return np.zeros_like(d), d.copy()
    a = anc.astype(np.float64)
    head = d @ a.T  # sum over u of anc[i, u] * d[u]
    tail = d + d @ a  # sum over v of anc[v, i] * d[v]
    return head, tail


def overlap_lower_bound(
    graph,
    dur: np.ndarray,
    starts: np.ndarray,
    dones: np.ndarray,
    ttime: np.ndarray,
    stream: np.ndarray,
    sync_time: np.ndarray,
    collective: np.ndarray,
    anc: np.ndarray | None = None,
) -> OverlapBound:
    """Bounds per scenario.

    ``dur[S, n]``: compute-stream slot of every op (sync collective time included);
    ``starts/dones[P]``: async pairs with a transfer (done -1 if none); ``ttime[S, P]``;
    ``stream[P]``: stream id; ``sync_time[S]``; ``collective[P]``: bool, the transfer is
    a collective (not a copy or async compute).
    """
    n_s, n = dur.shape
    P = len(starts)
    C_total = dur.sum(axis=1)
    compute = C_total - sync_time
    if anc is None:
        anc = reach_matrix(graph)
    head, tail = heads_tails(anc, dur)
    lb = C_total.copy()
    which = ["compute"] * n_s
    per_pair = np.zeros((n_s, P))
    if P:
        # earliest transfer begin E, chained along transfers
        a_idx = np.asarray(starts, dtype=np.int64)
        d_idx = np.asarray(dones, dtype=np.int64)
        has_done = d_idx >= 0
        E = head[:, a_idx] + dur[:, a_idx]  # [S, P]
        Q = np.where(has_done[None, :], tail[:, np.maximum(d_idx, 0)], 0.0)
        if anc is not None and has_done.any():
            # c' -> c when done(c') is an ancestor of (or is) start(c)
            # starts in topological order: a chained predecessor is final when used
            topo = graph.topological_order()
            tpos = np.empty(n, dtype=np.int64)
            tpos[np.asarray(topo)] = np.arange(n)
            order = np.argsort(tpos[a_idx], kind="stable")
            for ci in order:
                a = a_idx[ci]
                for cj in range(P):
                    dj = d_idx[cj]
                    if dj < 0 or cj == ci:
                        continue
                    if not (anc[a, dj] or a == dj):
                        continue
                    # ops forced between done(cj) and the start of transfer ci:
                    # descendants of dj (incl.) that are ancestors of a (incl.)
                    between = anc[:, dj].copy()
                    between[dj] = True
                    mask = between & (anc[a] | (np.arange(n) == a))
                    w = dur[:, mask].sum(axis=1)
                    E[:, ci] = np.maximum(E[:, ci], E[:, cj] + ttime[:, cj] + w)
        per_pair = E + ttime + Q
        best = per_pair.max(axis=1)
        for s in range(n_s):
            if best[s] > lb[s]:
                lb[s] = best[s]
                which[s] = "pair"
        # one-machine bound per stream
        for r in np.unique(stream):
            sel = np.flatnonzero(stream == r)
            for s in range(n_s):
                e, t, q = E[s, sel], ttime[s, sel], Q[s, sel]
                v = _head_body_tail(e, t, q)
                if v > lb[s]:
                    lb[s] = v
                    which[s] = "stream"
    exposed = sync_time.copy()
    pure = bool(P == 0 or (np.all(collective) and np.all(np.asarray(dones) >= 0)))
    if pure:
        exposed = np.maximum(exposed, lb - compute)
    return OverlapBound(lb, exposed, compute, sync_time, per_pair, which)


def _head_body_tail(e: np.ndarray, t: np.ndarray, q: np.ndarray) -> float:
    """max over thresholds (h, r) of h + sum(t[e>=h, q>=r]) + r."""
    best = 0.0
    if e.size == 0:
        return best
    for h in np.unique(e):
        m = e >= h
        qq, tt = q[m], t[m]
        o = np.argsort(-qq, kind="stable")
        cs = np.cumsum(tt[o])
        best = max(best, float(np.max(h + cs + qq[o])))
    return best
