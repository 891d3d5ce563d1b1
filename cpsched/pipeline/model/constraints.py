"""Constraints of the pipeline model.

- one device runs one action at a time (NoOverlap per device);
- an action starts after its inputs arrive: the end of the action it consumes plus the
  transfer delay when the two sit on different devices (F after the previous stage's F; B
  after the next stage's B, or the same stage's F on the last stage; W after its B);
- microbatch order per (stage, kind) is fixed: 0, 1, 2, ... This loses nothing
  (microbatches are interchangeable; ``cpsched.pipeline.schedule.fifo_relabel`` gives the
  argument) and removes the m! symmetric copies of every schedule;
- activation memory per device as a cumulative: each (stage, microbatch) holds
  ``act - act_w`` from the start of F to the end of B and ``act_w`` from the start of F to
  the end of W (the zero-bubble paper's M_B / M_W accounting), at most the cap;
- on a device with one stage the cap bounds the microbatches in flight: F of j+K waits for
  B of j, and F of j+L for W of j (implied by the cumulative with microbatch order; added to
  help the search, see ``_in_flight_limits``);
- the makespan is at least every stage's last action's end.
"""

from __future__ import annotations

from cpsched.pipeline.model.variables import Vars, memory_interval
from cpsched.pipeline.schedule import Action


def add_no_overlap(v: Vars) -> None:
    pr = v.data.problem
    for d in range(pr.p):
        v.model.add_no_overlap([v.interval[a] for a in v.data.actions if pr.device(a.stage) == d])


def add_dependencies(v: Vars) -> None:
    for a in v.data.actions:
        for q in v.data.deps[a]:
            v.model.add(v.start[a] >= v.end[q] + v.data.delay[q])


def add_microbatch_order(v: Vars) -> None:
    pr = v.data.problem
    for s in range(pr.n_stages):
        for k in pr.kinds:
            for j in range(pr.m - 1):
                v.model.add(v.start[Action(k, s, j + 1)] >= v.end[Action(k, s, j)])


def add_memory(v: Vars) -> None:
    data, pr = v.data, v.data.problem
    if data.caps is None:
        return
    for d in range(pr.p):
        stages = pr.stages_of(d)
        itvs, demands = [], []
        for s in stages:
            for j in range(pr.m):
                f = Action("F", s, j)
                if data.act_b[s] > 0:
                    itvs.append(memory_interval(v, f, Action("B", s, j), f"b{s}_{j}"))
                    demands.append(data.act_b[s])
                if data.act_w[s] > 0:
                    itvs.append(memory_interval(v, f, Action("W", s, j), f"w{s}_{j}"))
                    demands.append(data.act_w[s])
        if itvs and sum(demands) > data.caps[d]:
            v.model.add_cumulative(itvs, demands, data.caps[d])
        if len(stages) == 1:
            _in_flight_limits(v, stages[0], data.caps[d])


def _in_flight_limits(v: Vars, s: int, cap: int) -> None:
    """One stage on the device, microbatches in order: if B of j has not ended when F of
    j+K starts, microbatches j..j+K all hold their whole activation ``a``, so (K+1)a <= cap;
    hence F(j+K) waits for B(j) with K = cap // a. Likewise if W of j has not ended,
    j..j+L-1 hold at least ``a_w`` each and the new one ``a``: F(j+L) waits for W(j) with
    L = (cap - a) // a_w + 1."""
    data, pr = v.data, v.data.problem
    a = data.act_b[s] + data.act_w[s]
    if a <= 0:
        return
    k = cap // a
    for j in range(pr.m - k):
        v.model.add(v.start[Action("F", s, j + k)] >= v.end[Action("B", s, j)])
    if pr.split_backward and data.act_w[s] > 0:
        L = (cap - a) // data.act_w[s] + 1
        for j in range(max(0, pr.m - L)):
            v.model.add(v.start[Action("F", s, j + L)] >= v.end[Action("W", s, j)])


def add_makespan(v: Vars) -> None:
    pr = v.data.problem
    for s in range(pr.n_stages):
        for k in pr.kinds:
            v.model.add(v.makespan >= v.end[Action(k, s, pr.m - 1)])


def add_all(v: Vars) -> None:
    add_no_overlap(v)
    add_dependencies(v)
    add_microbatch_order(v)
    add_memory(v)
    add_makespan(v)


__all__ = [
    "add_all",
    "add_no_overlap",
    "add_dependencies",
    "add_microbatch_order",
    "add_memory",
    "add_makespan",
]
