"""A makespan lower bound for the pipeline model that sees each device's fill and drain.

``lower_bound`` (``cpsched.pipeline.schedule``) gives each device its work plus the
forward chain before its first stage. This bound is the one-machine relaxation per device
with heads and tails (the preemptive bound of Jackson's rule, exact for one machine with
release dates and delivery times when preemption is allowed, so a bound for the real,
non-preemptive problem):

- head of an action: the longest path to its start over the precedences every schedule
  (relabelled to microbatch order, which loses nothing: ``fifo_relabel``) keeps: its inputs
  plus transfer times, the previous microbatch's action of the same (stage, kind), and on a
  device with one stage the cap's in-flight limits (F of j+K after B of j);
- tail of an action: the longest path from its end to the end of the step over the same
  edges;
- load tail (``load_tails``): the tail raised by the work that must follow the action on
  another device (the drain: the last device's first-chunk backwards feed device 0, which
  still has its own backward and weight gradients of every later microbatch to run);
- per device: the actions run one at a time, each not before its head and each followed by
  its tail: Jackson's preemptive schedule (always run the released action with the longest
  tail) minimises max(end + tail), which bounds the makespan from below.

The bound counts memory only through the in-flight limits, like the model's redundant
constraints. All times are in the model's integer units.
"""

from __future__ import annotations

import heapq
from collections import defaultdict

import numpy as np

from cpsched.pipeline.model.problem import CpData
from cpsched.pipeline.schedule import Action


def precedence_edges(data: CpData) -> dict[Action, list[tuple[Action, int]]]:
    """For every action, its predecessors and the lag from a predecessor's end to its start."""
    pr = data.problem
    preds: dict[Action, list[tuple[Action, int]]] = defaultdict(list)
    for a in data.actions:
        for q in data.deps[a]:
            preds[a].append((q, data.delay[q]))
    for s in range(pr.n_stages):
        for k in pr.kinds:
            for j in range(1, pr.m):
                preds[Action(k, s, j)].append((Action(k, s, j - 1), 0))
    for s, k_b, k_w in in_flight_limits(data):
        for j in range(pr.m - k_b):
            preds[Action("F", s, j + k_b)].append((Action("B", s, j), 0))
        if k_w is not None:
            for j in range(max(0, pr.m - k_w)):
                preds[Action("F", s, j + k_w)].append((Action("W", s, j), 0))
    return preds


def in_flight_limits(data: CpData) -> list[tuple[int, int, int | None]]:
    """(stage, K, L) for every device that holds one stage under a cap: F of j+K waits for
    B of j, and F of j+L for W of j (L None when W frees nothing); see
    ``constraints._in_flight_limits`` for why."""
    pr = data.problem
    out: list[tuple[int, int, int | None]] = []
    if data.caps is None:
        return out
    for d in range(pr.p):
        stages = pr.stages_of(d)
        if len(stages) != 1:
            continue
        s = stages[0]
        a = data.act_b[s] + data.act_w[s]
        if a <= 0:
            continue
        cap = data.caps[d]
        L = None
        if pr.split_backward and data.act_w[s] > 0:
            L = (cap - a) // data.act_w[s] + 1
        out.append((s, cap // a, L))
    return out


def heads_and_tails(data: CpData) -> tuple[dict[Action, int], dict[Action, int]]:
    preds = precedence_edges(data)
    succs: dict[Action, list[tuple[Action, int]]] = defaultdict(list)
    indeg = {a: 0 for a in data.actions}
    for a, lst in preds.items():
        for q, lag in lst:
            succs[q].append((a, lag))
            indeg[a] += 1
    order = [a for a in data.actions if indeg[a] == 0]
    for a in order:  # Kahn: order grows while it is walked
        for b, _lag in succs[a]:
            indeg[b] -= 1
            if indeg[b] == 0:
                order.append(b)
    if len(order) != len(data.actions):
        raise AssertionError("pipeline precedences have a cycle")
    head = dict.fromkeys(data.actions, 0)
    for a in order:
        h = head[a] + data.busy[a]
        for b, lag in succs[a]:
            if h + lag > head[b]:
                head[b] = h + lag
    tail = dict.fromkeys(data.actions, 0)
    for a in reversed(order):
        for b, lag in succs[a]:
            t = lag + data.busy[b] + tail[b]
            if t > tail[a]:
                tail[a] = t
    return head, tail


Family = tuple[str, int]  # (kind, stage): the actions of one kind and stage, every microbatch


def family_lags(data: CpData) -> tuple[list[Family], dict[Family, dict[Family, int]]]:
    """The (kind, stage) families in reverse topological order of the one-microbatch graph
    (sinks first), and for each family f the longest lag from the end of (f, j) to the start
    of (g, j), same microbatch j, for every family g that depends on f (the input edges and
    their transfer times; every microbatch has the same graph)."""
    pr = data.problem
    fams = [(k, s) for s in range(pr.n_stages) for k in pr.kinds]
    succ: dict[Family, list[tuple[Family, int]]] = defaultdict(list)
    for k, s in fams:
        for q in data.deps[Action(k, s, 0)]:
            succ[(q.kind, q.stage)].append(((k, s), data.delay[q]))
    busy = {f: data.busy[Action(f[0], f[1], 0)] for f in fams}
    indeg = dict.fromkeys(fams, 0)
    for f in fams:
        for g, _ in succ[f]:
            indeg[g] += 1
    order = [f for f in fams if indeg[f] == 0]
    for f in order:  # Kahn
        for g, _ in succ[f]:
            indeg[g] -= 1
            if indeg[g] == 0:
                order.append(g)
    order.reverse()
    lags: dict[Family, dict[Family, int]] = {}
    for f in order:
        out: dict[Family, int] = {}
        for g, lag in succ[f]:
            out[g] = max(out.get(g, lag), lag)
            for x, lx in lags[g].items():
                val = lag + busy[g] + lx
                if val > out.get(x, -1):
                    out[x] = val
        lags[f] = out
    return order, lags


def load_tails(data: CpData, tail: dict[Action, int]) -> dict[Action, int]:
    """Tails raised by the load the action leaves to each device (sound for every schedule
    in microbatch order, so a bound for the problem: ``fifo_relabel``).

    Argument. Let a = (f, j) end at e. For a family g that depends on f with same-microbatch
    lag r_g (``family_lags``), every (g, j') with j' >= j waits for a: a path runs from a to
    (g, j) and on through the microbatch order (g, j) -> (g, j+1) -> ... -> (g, j'), so it
    starts at e + r_g or later. Take a set G of such families on one device d (with a's own
    family on a's device too: (f, j+1), ..., (f, m-1) start after e, r = 0). Device d runs
    all their members one at a time, so the last of them ends at or after
    e + min r_g + sum of their times, and the step goes on for at least that member's tail,
    at least min over G of the tail of (g, m-1) (tails only shrink along a family: (g, j')
    is followed by (g, j'+1)). Hence tail(a) >= min r + sum of times + min tail; the bound
    takes G = every such family on d whose r and tail reach chosen thresholds (the best
    sets of Jackson's bound have this shape), the best over devices and thresholds.

    The new tails go on back through the input edges and the microbatch order (a family's
    successors are done first); the in-flight edges of the cap are only in the ``tail``
    given (computed by ``heads_and_tails``), which stays a floor. Model time units."""
    pr = data.problem
    m = pr.m
    order, lags = family_lags(data)
    busy = {f: data.busy[Action(f[0], f[1], 0)] for f in order}
    direct: dict[Family, list[tuple[Family, int]]] = defaultdict(list)
    for k, s in order:
        for q in data.deps[Action(k, s, 0)]:
            direct[(q.kind, q.stage)].append(((k, s), data.delay[q]))
    left = m - np.arange(m)  # members of (g, j..m-1): m - j
    T: dict[Family, np.ndarray] = {}
    for f in order:
        x = np.array([tail[Action(f[0], f[1], j)] for j in range(m)], dtype=np.int64)
        for g, lag in direct[f]:
            np.maximum(x, lag + busy[g] + T[g], out=x)
        groups: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
        for g, r in lags[f].items():
            groups[pr.device(g[1])].append((r, busy[g], int(T[g][-1])))
        for jobs in groups.values():
            np.maximum(x, _load_term(jobs, left), out=x)
        # the own family on the own device: (f, j+1..m-1), m - j - 1 members, released at e;
        # its last member's tail is x[m-1] (nothing of f follows it)
        own = groups.get(pr.device(f[1]), []) + [(0, busy[f], int(x[-1]))]
        if m > 1:
            np.maximum(x[:-1], _load_term(own, left[:-1], own_last=True), out=x[:-1])
        # the microbatch order: (f, j) is followed by (f, j+1)
        for j in range(m - 2, -1, -1):
            if busy[f] + x[j + 1] > x[j]:
                x[j] = busy[f] + x[j + 1]
        T[f] = x
    return {a: int(T[(a.kind, a.stage)][a.mb]) for a in data.actions}


def _load_term(jobs: list[tuple[int, int, int]], left: np.ndarray, own_last: bool = False):
    """Per microbatch j: the largest min r + sum of times + min tail over the sets of
    families with r >= r0 (every r0), and with tail >= q0 (every q0); family i = (r, time,
    tail) has ``left[j]`` members, the last one fewer when ``own_last`` (a's own family:
    the members after a)."""
    n = len(jobs)
    cands: list[tuple[int, int, int]] = []  # (min r + min tail, time per member, own in it)
    for key in (0, 2):  # by release, then by tail: largest first, the set grows
        lo_r = lo_q = None
        per = 0
        own = 0
        for i in sorted(range(n), key=lambda i: -jobs[i][key]):
            r, d, q = jobs[i]
            lo_r = r if lo_r is None else min(lo_r, r)
            lo_q = q if lo_q is None else min(lo_q, q)
            per += d
            own = own or (own_last and i == n - 1)
            cands.append((lo_r + lo_q, per, jobs[n - 1][1] if own else 0))
    arr = np.array(cands, dtype=np.int64)
    vals = arr[:, :1] + arr[:, 1:2] * left[None, :] - arr[:, 2:3]
    return vals.max(axis=0)


def jackson_preemptive(jobs: list[tuple[int, int, int]]) -> int:
    """min over preemptive one-machine schedules of max(end + tail), jobs (head, time, tail)."""
    jobs = sorted(jobs)
    ready: list[tuple[int, int]] = []  # (-tail, remaining time)
    t = best = 0
    i = 0
    n = len(jobs)
    while i < n or ready:
        if not ready and t < jobs[i][0]:
            t = jobs[i][0]
        while i < n and jobs[i][0] <= t:
            heapq.heappush(ready, (-jobs[i][2], jobs[i][1]))
            i += 1
        neg_tail, rem = heapq.heappop(ready)
        nxt = jobs[i][0] if i < n else None
        if nxt is not None and t + rem > nxt:
            # run until the next release, then reconsider (it may have a longer tail)
            heapq.heappush(ready, (neg_tail, rem - (nxt - t)))
            t = nxt
        else:
            t += rem
            best = max(best, t - neg_tail)
    return best


def device_bound(
    data: CpData, head: dict[Action, int] | None = None, tail: dict[Action, int] | None = None
) -> int:
    """The largest per-device Jackson bound, in model time units (``head`` and ``tail`` from
    ``heads_and_tails`` and ``load_tails`` when already computed)."""
    pr = data.problem
    if head is None or tail is None:
        head, tail = heads_and_tails(data)
        tail = load_tails(data, tail)
    best = max((head[a] + data.busy[a] + tail[a] for a in data.actions), default=0)
    by_device: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    for a in data.actions:
        by_device[pr.device(a.stage)].append((head[a], data.busy[a], tail[a]))
    for jobs in by_device.values():
        best = max(best, jackson_preemptive(jobs))
    return best


__all__ = [
    "device_bound",
    "family_lags",
    "heads_and_tails",
    "jackson_preemptive",
    "load_tails",
    "precedence_edges",
]
