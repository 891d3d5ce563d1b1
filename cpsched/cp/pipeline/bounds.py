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
- per device: the actions run one at a time, each not before its head and each followed by
  its tail: Jackson's preemptive schedule (always run the released action with the longest
  tail) minimises max(end + tail), which bounds the makespan from below.

The bound counts memory only through the in-flight limits, like the model's redundant
constraints. All times are in the model's integer units.
"""

from __future__ import annotations

import heapq
from collections import defaultdict

from cpsched.cp.pipeline.problem import CpData
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
    ``heads_and_tails`` when already computed)."""
    pr = data.problem
    if head is None or tail is None:
        head, tail = heads_and_tails(data)
    best = max((head[a] + data.busy[a] + tail[a] for a in data.actions), default=0)
    by_device: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    for a in data.actions:
        by_device[pr.device(a.stage)].append((head[a], data.busy[a], tail[a]))
    for jobs in by_device.values():
        best = max(best, jackson_preemptive(jobs))
    return best


__all__ = ["device_bound", "heads_and_tails", "jackson_preemptive", "precedence_edges"]
