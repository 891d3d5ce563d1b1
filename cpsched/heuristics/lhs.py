"""A latency-hiding list scheduler in the style of XLA's ``LatencyHidingScheduler``.

Registered method ``lhs`` (family ``overlap``).

Bottom-up list scheduling over the dependence graph, in reverse time, as in XLA's
``DefaultSchedulerCore``:
- the roots (ops without successors) are ready at time 0; after an op is placed at
  ``t = max(now, succ.ready + latency(op -> succ))`` the clock moves to ``t + cost(op)``;
  a predecessor whose successors are all placed becomes ready at
  ``max(now, max(succ.ready + latency))``; the output is the reverse of the picks;
- costs and latencies: XLA's ``ApproximateLatencyEstimator`` by default (loop fusion
  1000, output fusion / convolution 5000, anything else 1; 5000 from an async start to
  its done, 1 on any other edge). Option ``device`` (a ``cpsched.cost.model`` preset such as
  ``h100`` or ``xla-gpu-approx``, with optional ``profile``) takes op times and transfer
  latencies from the cost model instead; options ``cost_fn(op_index) -> time`` and
  ``latency_fn(start_index, done_index) -> time`` override either;
- resources: an async collective's done *occupies* one unit of its kind (bottom-up) and
  its start releases it; at most ``overlap_limit`` units per kind are in flight (an int
  for every kind, or a mapping ``{kind: limit}``, missing kinds 1; kinds are collective
  names such as ``all-gather`` or ``collective-permute``). An op that calls computations
  needs as many units as those computations hold async collectives (option
  ``called_resources = {computation: {kind: count}}``, see
  ``called_resources_from_module``), so it cannot run while that would exceed the limit;
- memory pressure: with ``memory_limit`` (bytes, in the scenario chosen by ``scenario``)
  a tracker follows the live bytes bottom-up (entry parameters excluded, as in XLA); above
  half the limit candidates that raise memory less win, and option ``rerun=k`` re-runs
  with 0.9x the limit up to k times while the tracked peak exceeds it;
- selection (first rule that separates two candidates wins), the rules of XLA's
  ``ReadySetLt`` that apply to this IR, in XLA's order: get-tuple-element/bitcast first;
  memory (over the limit: smaller increase; then: no peak above the limit); async dones
  that occupy a resource first ("done first" = issue the wait as late as possible);
  less stall (ready time not in the future); with ``aggressive=True``: starts with no
  async depth last; starts that free a backed-up resource; with ``aggressive=True``:
  larger async depth, less wasted latency; ops that unlock an async done; with
  ``aggressive=True``: ops that make more ops ready; smaller memory increase (when the
  tracker is active); finally the input order (later input position first, bottom-up, so
  full ties keep the input order).

The memory rules are XLA's greedy ones: with the tracker over the limit the op that adds
the fewest bytes wins, so an op that would make large inputs live can be deferred again and
again while its outputs stay live. On adversarial graphs that raises the peak instead of
lowering it (see ``benchmarks/results_heuristics.md``: a limit of 2x the input order's
peak ends 11x above it on the 100k-op random graph); the tests show it helping on a fan.

Input order (the original positions for the last rule): option ``order``, else the graph's
own order, else ``xla-default`` (XLA runs the LHS on an already memory-scheduled module).

The ready set lives in heaps split by (nop, waiting/ready) for plain ops, so a step costs
O(log n) plus a scan over the few ready ops that hold resources; the memory-pressure and
aggressive rules depend on the moment, and while they are active each step scans the
whole ready set (XLA's own cost).

XLA's extra edges from readers of a buffer that an async done writes over (a while body's
loop state) to the start come from the HLO reader, as control edges of the graph.

Not modelled: force-delay/force-early annotations, scheduling groups, selective overlap,
target-defined resources.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from cpsched.core.adjacency import adjacency, csr_lists
from cpsched.core.gc_pause import without_gc
from cpsched.core.graph import Graph, OpKind
from cpsched.core.opclass import attr, collective_kind
from cpsched.core.order import check_order_option
from cpsched.core.scenario_choice import graph_scenarios, scenario_bytes, scenario_index
from cpsched.core.scenarios import Scenarios
from cpsched.core.transforms import SPLIT_OPCODES
from cpsched.cost import model as cm
from cpsched.heuristics.xla_memory import xla_default
from cpsched.methods import register

LOW_COST, MEDIUM_COST, HIGH_COST = 1.0, 1000.0, 5000.0
LOW_LATENCY, HIGH_LATENCY = 1.0, 5000.0
_NOP = ("get-tuple-element", "bitcast")


def approximate_cost(graph: Graph, i: int) -> float:
    """XLA's ``ApproximateLatencyEstimator::NodeCost``."""
    op = graph.opcodes[i]
    if op == "fusion":
        fk = str(attr(graph, i, "fusion_kind", "") or "").lower().lstrip("k")
        if fk == "loop":
            return MEDIUM_COST
        if fk == "output":
            return HIGH_COST
        return LOW_COST
    if op == "convolution":
        return HIGH_COST
    return LOW_COST


def resource_kind(graph: Graph, i: int) -> str | None:
    """The resource an async start releases / its done occupies (None: not tracked)."""
    k = int(graph.kinds[i])
    if k not in (OpKind.ASYNC_START, OpKind.ASYNC_DONE):
        return None
    op = graph.opcodes[i]
    if op in ("copy-start", "copy-done"):
        return "copy"
    return collective_kind(graph, i)


def called_resources_from_module(graphs: Mapping[str, Graph]) -> dict[str, dict[str, int]]:
    """Async collectives held by each computation, counting called computations too.

    ``graphs`` maps computation names to graphs (``cpsched.readers.hlo.convert.module_graphs``).
    A computation holds one unit per async collective done and per sync collective that
    ``convert_sync_collectives`` would split (XLA's LHS test harness splits those first).
    """
    memo: dict[str, dict[str, int]] = {}

    def visit(name: str, stack: tuple = ()) -> dict[str, int]:
        if name in memo:
            return memo[name]
        g = graphs.get(name)
        out: dict[str, int] = {}
        if g is None or name in stack:
            return out
        for i in range(g.n_ops):
            kind = None
            if int(g.kinds[i]) == OpKind.ASYNC_DONE:
                kind = resource_kind(g, i)
            elif int(g.kinds[i]) == OpKind.COMPUTE and g.opcodes[i] in SPLIT_OPCODES:
                kind = g.opcodes[i]
            if kind:
                out[kind] = out.get(kind, 0) + 1
            for c in attr(g, i, "called_computations", ()) or ():
                for kk, v in visit(str(c), stack + (name,)).items():
                    out[kk] = out.get(kk, 0) + v
        memo[name] = out
        return out

    for name in graphs:
        visit(name)
    return memo


class _Model:
    """Costs, latencies and resources of one graph, as plain lists."""

    def __init__(self, graph: Graph, scenarios: Scenarios | None, options: Mapping[str, Any]):
        n = graph.n_ops
        self.n = n
        k = scenario_index(scenarios, options.get("scenario")) if scenarios else 0
        cost = [0.0] * n
        pair_latency = {}
        device = options.get("device")
        if device is not None:
            sc = graph_scenarios(graph, scenarios)
            est = cm.estimate(graph, device, sc, options.get("profile"))
            cost = [float(x) for x in est.op[k]]
            for s, t in est.transfer.items():
                d = int(graph.async_done[s])
                if d >= 0:
                    pair_latency[s] = float(t[k])
                else:  # a sync collective: its transfer is its run time
                    cost[s] += float(t[k])
        else:
            cost = [approximate_cost(graph, i) for i in range(n)]
            for s in np.flatnonzero(graph.async_done >= 0).tolist():
                pair_latency[s] = HIGH_LATENCY
        cost_fn: Callable | None = options.get("cost_fn")
        if cost_fn is not None:
            cost = [float(cost_fn(i)) for i in range(n)]
        latency_fn: Callable | None = options.get("latency_fn")
        if latency_fn is not None:
            for s in np.flatnonzero(graph.async_done >= 0).tolist():
                pair_latency[s] = float(latency_fn(s, int(graph.async_done[s])))
        self.cost = cost
        self.done_of = graph.async_done.tolist()
        self.pair_latency = pair_latency
        # resources
        self.releases: list[str | None] = [None] * n
        self.occupies: list[str | None] = [None] * n
        self.needs: list[dict[str, int] | None] = [None] * n
        called = options.get("called_resources") or {}
        for i in range(n):
            kd = int(graph.kinds[i])
            if kd in (OpKind.ASYNC_START, OpKind.ASYNC_DONE):
                r = resource_kind(graph, i)
                if r is not None:
                    if kd == OpKind.ASYNC_START:
                        self.releases[i] = r
                    else:
                        self.occupies[i] = r
                        self.needs[i] = {r: 1}
            comps = attr(graph, i, "called_computations")
            own = attr(graph, i, "async_resources")
            if comps or own:
                need: dict[str, int] = dict(own or {})
                for c in comps or ():
                    for r, v in (called.get(str(c)) or {}).items():
                        need[r] = need.get(r, 0) + int(v)
                if need:
                    base = self.needs[i] or {}
                    for r, v in base.items():
                        need[r] = need.get(r, 0) + v
                    self.needs[i] = need
        lim = options.get("overlap_limit", 1)
        if isinstance(lim, Mapping):
            self.limits = {str(a): int(b) for a, b in lim.items()}
            self.default_limit = int(self.limits.pop("default", 1))
        else:
            self.limits = {}
            self.default_limit = int(lim)

    def latency(self, u: int, v: int) -> float:
        if self.done_of[u] == v:
            return self.pair_latency.get(u, LOW_LATENCY)
        return LOW_LATENCY

    def limit(self, r: str) -> int:
        return self.limits.get(r, self.default_limit)


@without_gc
class _BottomUpPass:
    """One bottom-up LHS pass over ``graph`` (XLA's ``DefaultSchedulerCore``): ops become
    ready when all their users are scheduled; ``pick`` chooses among the ready ones by
    XLA's rule chain (``key``) and ``place`` schedules one, advancing the clock, the
    resources in flight and the memory tracker."""

    def __init__(
        self,
        graph: Graph,
        order: list[int],
        model: _Model,
        nbytes: np.ndarray,
        memory_limit: float | None,
        aggressive: bool,
    ):
        n = graph.n_ops
        self.n, self.model = n, model
        self.memory_limit, self.aggressive = memory_limit, aggressive
        adj = adjacency(graph)
        self.preds, self.succs = adj.preds, adj.succs
        self.pos = pos = [0] * n
        for k, i in enumerate(order):
            pos[i] = k
        self.cost, self.lat = model.cost, model.latency
        self.releases, self.occupies, self.needs = model.releases, model.occupies, model.needs
        self.nop = [
            graph.opcodes[i] in _NOP or bool(attr(graph, i, "is_effective_bitcast", False))
            for i in range(n)
        ]
        op_lists = csr_lists(graph.operands_ptr, graph.operands_idx)
        self.unlock = [any(self.occupies[o] is not None for o in op_lists[i]) for i in range(n)]
        self.is_res = [self.needs[i] is not None or self.releases[i] is not None for i in range(n)]
        self.depth = self._async_depth(graph) if aggressive else [0.0] * n
        self._memory_tracker(graph, nbytes)
        self.in_flight: dict[str, int] = {}
        self.in_queue: dict[str, int] = {}  # ready-but-unscheduled occupiers per resource
        self.ready_time = [0.0] * n
        self.outdeg = [len(s) for s in self.succs]
        self.more_ready = [0] * n  # preds that this op's placement makes ready
        for p in range(n):
            if self.outdeg[p] == 1:
                self.more_ready[self.succs[p][0]] += 1
        self.scheduled = [False] * n
        self.now = 0.0
        self.next_ready: list[float] = []  # ready times in the future (for kAvoidWaste)
        # plain ready ops: avail[nop] = heap of (-unlock, -pos, i); wait[nop] = heap of
        # (ready_time, -unlock, -pos, i); also a flat list (for the vectorised scan);
        # resource ops in their own list
        self.avail: tuple[list, list] = ([], [])
        self.wait: tuple[list, list] = ([], [])
        self.plain_ready: list[int] = []
        self.plain_at: dict[int, int] = {}
        self.res_ready: list[int] = []
        self.vec: dict[str, np.ndarray] | None = None  # numpy mirrors for the vectorised scan
        self.forced = 0
        for i in order:  # bottom roots, in input order
            if self.outdeg[i] == 0:
                self.add_ready(i)

    def _async_depth(self, graph: Graph) -> list[float]:
        """Top-down, latency-weighted depth that grows at supported dones."""
        depth = [0.0] * self.n
        for v in graph.topological_order():
            dv = 0.0
            if self.occupies[v] is not None:
                for p in self.preds[v]:
                    dv = max(dv, depth[p] + self.lat(p, v))
            else:
                for p in self.preds[v]:
                    dv = max(dv, depth[p])
            depth[v] = dv
        return depth

    def _memory_tracker(self, graph: Graph, nbytes: np.ndarray) -> None:
        """Bottom-up memory: entry parameters (live-in) are not tracked. ``alloc[i]`` = bytes
        of i's inputs not live yet (kept up to date as buffers go live); ``freed[i]`` = bytes
        of i's outputs that are live, fixed once i is ready."""
        n = self.n
        self.size = size = nbytes.tolist()
        self.tracked = tracked = [
            (not li) and s > 0 for li, s in zip(graph.buffer_live_in.tolist(), size)
        ]
        self.live = live = [
            bool(lo) and t for lo, t in zip(graph.buffer_live_out.tolist(), tracked)
        ]
        self.usage = sum(s for s, l in zip(size, live) if l)
        self.mem_peak = self.usage
        self.uses = csr_lists(graph.uses_ptr, graph.uses_idx)
        self.defs = csr_lists(graph.defs_ptr, graph.defs_idx)
        self.users_of = csr_lists(graph.buffer_users_ptr, graph.buffer_users_idx)
        self.track_memory = self.memory_limit is not None
        self.alloc = [0] * n
        self.freed = [0] * n
        if self.track_memory:
            for i in range(n):
                a = 0
                for b in self.uses[i]:
                    if tracked[b] and not live[b]:
                        a += size[b]
                self.alloc[i] = a

    # -- the ready set ----------------------------------------------------------------------
    def increase(self, i: int) -> tuple[int, int]:
        return self.alloc[i] - self.freed[i], self.alloc[i]

    def blocked(self, i: int) -> bool:
        nd = self.needs[i]
        if not nd:
            return False
        for r, c in nd.items():
            f = self.in_flight.get(r, 0)
            if f > 0 and self.model.limit(r) - f < c:
                return True
        return False

    def constrained(self, i: int) -> bool:
        r = self.releases[i]
        return (
            r is not None
            and self.model.limit(r) - self.in_flight.get(r, 0) <= 0
            and self.in_queue.get(r, 0) > 0
        )

    def add_ready(self, i: int) -> None:
        occ = self.occupies[i]
        if occ is not None:
            self.in_queue[occ] = self.in_queue.get(occ, 0) + 1
        if self.track_memory:
            f = 0
            for b in self.defs[i]:
                if self.live[b]:
                    f += self.size[b]
            self.freed[i] = f
        if self.is_res[i]:
            self.res_ready.append(i)
            return
        self.plain_at[i] = len(self.plain_ready)
        self.plain_ready.append(i)
        if self.ready_time[i] <= self.now:
            heapq.heappush(self.avail[self.nop[i]], (-self.unlock[i], -self.pos[i], i))
        else:
            heapq.heappush(
                self.wait[self.nop[i]], (self.ready_time[i], -self.unlock[i], -self.pos[i], i)
            )

    def drop_plain(self, i: int) -> None:
        k = self.plain_at.pop(i)
        last = self.plain_ready.pop()
        if last != i:
            self.plain_ready[k] = last
            self.plain_at[last] = k

    def plain_top(self, cls: int) -> int:
        h = self.avail[cls]
        while h and self.scheduled[h[0][2]]:
            heapq.heappop(h)
        if h:
            return h[0][2]
        w = self.wait[cls]
        while w and self.scheduled[w[0][3]]:
            heapq.heappop(w)
        return w[0][3] if w else -1

    def refresh(self) -> None:
        for cls in (0, 1):
            w = self.wait[cls]
            while w and w[0][0] <= self.now:
                _, a, b, i = heapq.heappop(w)
                if not self.scheduled[i]:
                    heapq.heappush(self.avail[cls], (a, b, i))

    # -- XLA's rule chain -------------------------------------------------------------------
    def key(self, i: int, pressure: bool, over: bool) -> list:
        aggressive = self.aggressive
        now = self.now
        stall = self.ready_time[i] - now
        if stall < 0:
            stall = 0.0
        key: list = [self.nop[i]]
        inc = (0, 0)
        if pressure:
            inc = self.increase(i)
            key.append(-inc[0] if over else 0)
            key.append(inc[1] + self.usage <= self.memory_limit)
        key.append(self.occupies[i] is not None)
        key.append(-stall)
        rel = self.releases[i] is not None
        cons = rel and self.constrained(i)
        if aggressive:
            key.append(not (rel and self.depth[i] == 0 and not cons))
        key.append(cons)
        if aggressive:
            key.append(self.depth[i])
            nr = self.next_ready
            key.append(-abs(nr[0] - now - self.cost[i]) if nr else 0.0)
        key.append(self.unlock[i])
        if aggressive:
            key.append(self.more_ready[i])
        key.append(-inc[0] if pressure else 0)
        key.append(self.pos[i])
        return key

    def vector_best(self, pressure: bool, over: bool) -> int:
        """The plain ready op with the largest ``key``, by one lexsort."""
        if self.vec is None:
            self.vec = {
                "nop": np.asarray(self.nop, dtype=np.int8),
                "unlock": np.asarray(self.unlock, dtype=np.int8),
                "pos": np.asarray(self.pos, dtype=np.int64),
                "depth": np.asarray(self.depth, dtype=np.float64),
                "cost": np.asarray(self.cost, dtype=np.float64),
            }
        vec, ready, now = self.vec, self.plain_ready, self.now
        m = len(ready)
        idx = np.fromiter(ready, dtype=np.int64, count=m)
        rt = self.ready_time
        stall = np.maximum(
            np.fromiter((rt[i] for i in ready), dtype=np.float64, count=m) - now, 0.0
        )
        keys = [-vec["pos"][idx]]  # least significant first
        if pressure:
            al = np.fromiter((self.alloc[i] for i in ready), dtype=np.int64, count=m)
            fr = np.fromiter((self.freed[i] for i in ready), dtype=np.int64, count=m)
            inc = al - fr
            keys.append(inc)
        if self.aggressive:
            keys.append(-np.fromiter((self.more_ready[i] for i in ready), dtype=np.int64, count=m))
        keys.append(-vec["unlock"][idx])
        if self.aggressive:
            if self.next_ready:
                keys.append(np.abs(self.next_ready[0] - now - vec["cost"][idx]))
            keys.append(-vec["depth"][idx])
        keys.append(stall)
        if pressure:
            keys.append(-((al + self.usage) <= self.memory_limit).astype(np.int8))
            if over:
                keys.append(inc)
        keys.append(-vec["nop"][idx])
        return int(idx[np.lexsort(keys)[0]])

    def pick(self) -> int:
        """The ready op to schedule next (bottom-up)."""
        self.refresh()
        pressure = self.memory_limit is not None and self.usage > self.memory_limit / 2
        over = pressure and self.usage >= self.memory_limit
        cands: list[int] = []
        if self.plain_ready:
            if pressure or self.aggressive:
                cands.append(self.vector_best(pressure, over))
            else:
                for cls in (1, 0):
                    t = self.plain_top(cls)
                    if t >= 0:
                        cands.append(t)
                        break
        cands.extend(i for i in self.res_ready if not self.blocked(i))
        if not cands:
            if not self.res_ready:  # pragma: no cover - a DAG always has a ready op
                raise RuntimeError("LHS: nothing is ready")
            cands = list(self.res_ready)  # every ready op exceeds a limit: take one anyway
            self.forced += 1
        best = cands[0]
        if len(cands) > 1:
            best_key = self.key(best, pressure, over)
            for i in cands[1:]:
                kk = self.key(i, pressure, over)
                if kk > best_key:
                    best, best_key = i, kk
        return best

    def place(self, best: int) -> None:
        """Schedule ``best``: clock, resources, memory, and the predecessors it makes ready."""
        self.scheduled[best] = True
        if self.is_res[best]:
            self.res_ready.remove(best)
        else:
            self.drop_plain(best)
        r = self.releases[best]
        if r is not None:
            self.in_flight[r] = self.in_flight.get(r, 0) - 1
        r = self.occupies[best]
        if r is not None:
            self.in_flight[r] = self.in_flight.get(r, 0) + 1
            self.in_queue[r] -= 1
        lat, ready_time, next_ready = self.lat, self.ready_time, self.next_ready
        t = self.now
        for s_ in self.succs[best]:
            e = ready_time[s_] + lat(best, s_)
            if e > t:
                t = e
        ready_time[best] = t
        now = self.now = t + self.cost[best]
        while next_ready and next_ready[0] < now:
            heapq.heappop(next_ready)
        # memory (before releasing predecessors: their ``freed`` reads the new liveness)
        live, size = self.live, self.size
        for b in self.uses[best]:
            if self.tracked[b] and not live[b]:
                live[b] = True
                self.usage += size[b]
                if self.track_memory:
                    sb = size[b]
                    for u in self.users_of[b]:
                        self.alloc[u] -= sb
        if self.usage > self.mem_peak:
            self.mem_peak = self.usage
        for b in self.defs[best]:
            if live[b]:
                live[b] = False
                self.usage -= size[b]
        outdeg = self.outdeg
        for p in self.preds[best]:
            outdeg[p] -= 1
            if outdeg[p] == 0:
                rt = now
                for s_ in self.succs[p]:
                    e = ready_time[s_] + lat(p, s_)
                    if e > rt:
                        rt = e
                ready_time[p] = rt
                self.add_ready(p)
                if rt > now:
                    heapq.heappush(next_ready, rt)
            elif outdeg[p] == 1 and self.aggressive:
                for s_ in self.succs[p]:
                    if not self.scheduled[s_]:
                        self.more_ready[s_] += 1
                        break

    def run(self) -> tuple[list[int], dict[str, Any]]:
        out: list[int] = []
        while len(out) < self.n:
            best = self.pick()
            out.append(best)
            self.place(best)
        out.reverse()
        return out, {"total_time": self.now, "peak": self.mem_peak, "forced": self.forced}


def lhs_order(
    graph: Graph,
    order: list[int],
    model: _Model,
    nbytes: np.ndarray,
    memory_limit: float | None = None,
    aggressive: bool = False,
) -> tuple[list[int], dict[str, Any]]:
    """One bottom-up LHS pass. Returns the order and statistics."""
    if graph.n_ops == 0:
        return [], {"total_time": 0.0, "peak": 0, "forced": 0}
    return _BottomUpPass(graph, order, model, nbytes, memory_limit, aggressive).run()


def _input_order(
    graph: Graph, scenarios: Scenarios | None, options: Mapping[str, Any]
) -> list[int]:
    order = check_order_option(graph, options.get("order"))
    if order is not None:
        return order
    if graph.original_order is not None:
        return list(graph.original_order)
    return xla_default(graph, scenarios, scenario=options.get("scenario"))


def lhs_schedule(
    graph: Graph, scenarios: Scenarios | None = None, **options: Any
) -> tuple[list[int], dict[str, Any]]:
    """The LHS order and statistics (``total_time`` in cost units, tracker ``peak``,
    ``forced`` = steps where every ready op exceeded an overlap limit, ``runs``)."""
    order = _input_order(graph, scenarios, options)
    model = _Model(graph, scenarios, options)
    nbytes = scenario_bytes(graph, scenarios, options.get("scenario"))
    limit = options.get("memory_limit")
    limit = float(limit) if limit is not None else None
    aggressive = bool(options.get("aggressive", False))
    result, stats = lhs_order(graph, order, model, nbytes, limit, aggressive)
    runs = 1
    for _ in range(int(options.get("rerun", 0) or 0)):
        if limit is None or stats["peak"] <= limit:
            break
        limit *= 0.9
        result, stats = lhs_order(graph, order, model, nbytes, limit, aggressive)
        runs += 1
    stats["runs"] = runs
    stats["memory_limit"] = limit
    return result, stats


@register(
    "lhs",
    "Latency-hiding list scheduler (XLA LHS style): bottom-up, overlap limits "
    "per collective, optional memory limit",
    "overlap",
)
def lhs(graph: Graph, scenarios: Scenarios | None = None, **options: Any) -> list[int]:
    return lhs_schedule(graph, scenarios, **options)[0]


__all__ = [
    "lhs",
    "lhs_schedule",
    "lhs_order",
    "approximate_cost",
    "resource_kind",
    "called_resources_from_module",
    "LOW_COST",
    "MEDIUM_COST",
    "HIGH_COST",
    "HIGH_LATENCY",
]
