"""The joint problem's data: the overlap problem (op and transfer times, streams,
reachability), the memory budget, the host link, and which buffers may leave the device
for a while (a *gap*) by recomputation or by a host round trip; plus the exact evaluation of
a plan (replay for memory, the timeline simulator on the plan written into the graph for
time).

A gap of buffer ``b`` (defined by op ``a``): the device copy is dropped at ``F_b`` after the
readers that come before it (*early* readers) and a second copy serves the others (*late*
readers): either a clone of ``a`` run on the compute stream after ``F_b`` (remat), or a
copy to the host after ``a`` and back before the first late reader (offload). One gap per
buffer and scenario; every plan of ``cp-remat`` with one copy per buffer is of this form.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cpsched.analysis.memory import peak as order_peak
from cpsched.core.errors import ScheduleError
from cpsched.core.graph import Graph
from cpsched.core.scenarios import Scenarios
from cpsched.cost.model import Costs, async_class
from cpsched.cost.timeline import Timelines, simulate_timeline
from cpsched.cp.overlap.problem import OverlapProblem
from cpsched.remat.events import Event
from cpsched.remat.policy import evictable_buffers, recomputable_ops
from cpsched.remat.rewrite import plan_to_graph
from cpsched.remat.skeleton import Evict, Regen, Skeleton
from cpsched.remat.timing import TransferModel

# the full model (every pair of independent ops ordered by a literal) up to this many ops;
# larger graphs get the separate methods in sequence
MAX_JOINT_OPS = 400


@dataclass
class JointProblem:
    base: OverlapProblem  # graph, scenarios, costs, op and transfer times, reachability
    budget: np.ndarray  # [S] bytes
    transfer: TransferModel | None  # host link (None: no offload)
    host_time: np.ndarray  # [S, B] one host copy of each buffer, in the costs' unit
    remat_buffers: np.ndarray  # [B] bool: a clone of its defining op may serve late readers
    evict_buffers: np.ndarray  # [B] bool: a host round trip may serve late readers

    @property
    def graph(self) -> Graph:
        return self.base.graph

    @property
    def scenarios(self) -> Scenarios:
        return self.base.scenarios

    @property
    def gap_buffers(self) -> list[int]:
        return [int(b) for b in np.flatnonzero(self.remat_buffers | self.evict_buffers)]


def build_joint_problem(
    base: OverlapProblem,
    budget: np.ndarray,
    transfer: TransferModel | None,
    *,
    remat: bool = True,
    evict: bool = True,
) -> JointProblem:
    """Which buffers may have a gap: read by some op other than their definition, and
    defined by a recomputable op that defines only them (remat), or evictable with a host
    link given (offload)."""
    g, sc = base.graph, base.scenarios
    B = g.n_buffers
    sizes = g.sizes(sc) if B else np.zeros((len(sc), 0), dtype=np.int64)
    read = np.array([g.buffer_users(j).size > 0 for j in range(B)], dtype=bool)
    ok = read & (sizes > 0).any(axis=0) if B else read
    rem = np.zeros(B, dtype=bool)
    if remat and B:
        clon = recomputable_ops(g)
        for j in np.flatnonzero(ok):
            a = int(g.buffer_def[j])
            rem[j] = bool(clon[a] and g.defines(a).size == 1)
    ev = np.zeros(B, dtype=bool)
    if evict and transfer is not None and B:
        ev = ok & evictable_buffers(g)
    host = transfer.times(sizes) if transfer is not None and B else np.zeros_like(sizes, float)
    return JointProblem(base, np.asarray(budget, dtype=np.int64), transfer, host, rem, ev)


# -- evaluation of a plan -------------------------------------------------------------------


@dataclass
class PlanTiming:
    """One scenario's plan, run by the timeline simulator on the plan written as a graph."""

    makespan: float
    exposed_comm: float
    exposed_copy: float
    recompute: float
    peak: int
    timeline: Timelines


def plan_costs(prob: JointProblem, plan_graph: Graph, s: int) -> Costs:
    """Times of the plan graph's ops in scenario ``s``: a main op or a clone takes its
    original op's time, a host copy ``host_time`` of its buffer, copy-start/done ops none."""
    g, base = prob.graph, prob.base
    index = {name: i for i, name in enumerate(g.op_names)}
    n = plan_graph.n_ops
    op = np.zeros((1, n))
    tr: dict[int, np.ndarray] = {}
    sizes = plan_graph.sizes(prob.scenarios.only(s)) if plan_graph.n_buffers else None
    for i in range(n):
        name = plan_graph.op_names[i]
        orig = plan_graph.attrs(i).get("remat_of", name)
        k = index.get(orig)
        if k is not None and plan_graph.opcodes[i] == g.opcodes[k]:
            op[0, i] = base.costs.op[s, k]
            if k in base.costs.transfer:
                v = np.asarray(base.costs.transfer[k], dtype=float).reshape(-1)
                tr[i] = v[[s if v.size > 1 else 0]]
        elif async_class(plan_graph, i) == "copy" and plan_graph.async_done[i] >= 0:
            assert sizes is not None and prob.transfer is not None
            # A copy moves the buffer it reads or the one it writes, whichever lives on the
            # device: a copy-out's result is the host copy, which holds no device bytes.
            out, inp = plan_graph.defines(i), plan_graph.uses(i)
            nbytes = max(
                int(sizes[0, out].sum()) if out.size else 0,
                int(sizes[0, inp].sum()) if inp.size else 0,
            )
            tr[i] = np.array([float(prob.transfer.times(np.array([nbytes]))[0])])
    return Costs(op, tr, base.costs.unit, base.costs.device, base.costs.step_overhead)


def scenario_costs(prob: JointProblem, s: int) -> Costs:
    """The graph's own op and transfer times in scenario ``s`` (``plan_costs`` of a plan
    that adds no op, without building its graph)."""
    c = prob.base.costs
    tr = {}
    for k, v in c.transfer.items():
        v = np.asarray(v, dtype=float).reshape(-1)
        tr[k] = v[[s if v.size > 1 else 0]]
    return Costs(c.op[s : s + 1], tr, c.unit, c.device)


def time_order(prob: JointProblem, order: Sequence[int], s: int) -> PlanTiming:
    """``time_plan`` of a plan that only orders the graph's ops (no clone, no host copy),
    on the graph itself: writing a 100k-op plan as a new graph took seconds."""
    g = prob.graph
    one = prob.scenarios.only(s)
    order = [int(v) for v in order]
    tl = simulate_timeline(
        g,
        order,
        scenario_costs(prob, s),
        one,
        comm_streams=prob.base.comm_streams,
        validate=True,
    )
    t = tl[0]
    pk = int(order_peak(g, order, one)[0])
    return PlanTiming(float(t.makespan), float(t.exposed_comm), float(t.exposed_copy), 0.0, pk, tl)


def time_plan(prob: JointProblem, events: Sequence[Event], s: int) -> PlanTiming:
    """Makespan, exposed communication and copies, recompute time and peak of one scenario's
    event list (the events as ``cpsched.remat`` materializes them)."""
    pg, order = plan_to_graph(prob.graph, events)
    one = prob.scenarios.only(s)
    costs = plan_costs(prob, pg, s)
    tl = simulate_timeline(
        pg, order, costs, one, comm_streams=prob.base.comm_streams, validate=True
    )
    t = tl[0]
    rec = float(sum(costs.op[0, i] for i in range(pg.n_ops) if "remat_of" in pg.attrs(i)))
    pk = int(order_peak(pg, order, one)[0])
    return PlanTiming(float(t.makespan), float(t.exposed_comm), float(t.exposed_copy), rec, pk, tl)


def copy_out_before_back(plan_graph: Graph, order: Sequence[int]) -> list[int]:
    """``order`` with each host round trip put in the form a skeleton has: the copy-out's
    start (``buf.evictK.start``) after the last reader of the device copy, its done after
    that, and the copy back (``buf.prefetchK.start``) after the done. The plan graph orders
    a copy-out only after the buffer's definition and a copy back only after the copy-out's
    start, so an order may break this. Moving the copy-out later and its done earlier
    keeps the order valid and the device copy's life no longer (the host copy takes no
    device memory). A round trip whose copy back comes before a reader of the device copy
    is left as it is (the read-back refuses it)."""
    out = [int(v) for v in order]
    names = {plan_graph.op_names[v]: v for v in out}
    for name, q in names.items():
        if ".prefetch" not in name or not name.endswith(".start"):
            continue
        base = name.replace(".prefetch", ".evict")[: -len(".start")]
        s, d = names.get(base + ".start"), names.get(base + ".done")
        if s is None or d is None:
            continue
        dev = [int(x) for x in plan_graph.uses(s) if plan_graph.buffer_space[int(x)] == 0]
        readers = [int(u) for x in dev for u in plan_graph.buffer_users(x) if u not in (s, d)]
        pos = {v: k for k, v in enumerate(out)}
        last = max((pos[u] for u in readers), default=-1)
        if last > pos[q]:
            continue
        if pos[s] < last:
            out.remove(s)
            out.insert(out.index(readers[[pos[u] for u in readers].index(last)]) + 1, s)
        if out.index(d) < out.index(s):
            out.remove(d)
            out.insert(out.index(s) + 1, d)
        if out.index(d) > out.index(q):
            out.remove(d)
            out.insert(out.index(q), d)
    return out


def skeleton_from_plan_order(
    graph: Graph, plan_graph: Graph, order: Sequence[int]
) -> tuple[Skeleton, list[int]]:
    """A plan graph's order (``plan_to_graph``'s names: ``op.rematK`` clones, ``buf.evictK``
    and ``buf.prefetchK`` copy pairs) read back as a skeleton of ``graph`` and the active
    candidates: main ops give the steps, a clone or a copy event sits at the step of the
    next main op."""
    ops = {name: i for i, name in enumerate(graph.op_names)}
    bufs = {name: b for b, name in enumerate(graph.buffer_names)}
    main: list[int] = []
    cands: list[Regen | Evict] = []
    sub: dict[int, int] = {}
    evict_at: dict[int, list[int]] = {}  # buffer -> [out step, free step]
    device: dict[int, list[int]] = {}  # buffer -> its device copy read by the copy-out
    rank: dict[int, int] = {}
    off: set[int] = set()  # plan-graph device copies whose copy to the host has started
    for i in order:
        name = plan_graph.op_names[int(i)]
        attrs = plan_graph.attrs(int(i))
        step = len(main)
        if ".evict" not in name and off.intersection(int(x) for x in plan_graph.uses(int(i))):
            raise ScheduleError(
                f"{name} reads a device copy after its copy to the host started: not a plan "
                "of this form"
            )
        if "remat_of" in attrs:
            sub[step] = sub.get(step, 0) + 1
            cands.append(Regen(ops[attrs["remat_of"]], step, sub[step] - 1))
        elif name in ops and plan_graph.opcodes[int(i)] == graph.opcodes[ops[name]]:
            main.append(ops[name])
        else:
            for tag in (".evict", ".prefetch"):
                if tag not in name:
                    continue
                b = bufs[name[: name.rindex(tag)]]
                if tag == ".evict":
                    evict_at.setdefault(b, []).append(step)
                    if name.endswith(".start"):
                        device[b] = [
                            int(x)
                            for x in plan_graph.uses(int(i))
                            if plan_graph.buffer_space[int(x)] == 0
                        ]
                        off.update(device[b])
                elif name.endswith(".start"):
                    if len(evict_at.get(b, ())) != 2:  # the copy back before the copy-out ends
                        raise ScheduleError(
                            f"{name} comes before {graph.buffer_names[b]}'s copy to the host "
                            "is done: not a plan of this form"
                        )
                    out_step, free_step = evict_at.pop(b)
                    for x in device.pop(b, []):
                        off.discard(x)
                    rank[step] = rank.get(step, 0) + 1
                    cands.append(Evict(b, out_step, free_step, step, rank[step] - 1))
    return Skeleton(tuple(main), tuple(cands)), list(range(len(cands)))
