"""A BladeDISC++-style op scheduler that compares memory deltas symbolically.

Registered method ``bladedisc`` (family ``memory``).

BladeDISC's ``OpScheduler`` (``disc_op_schedule.cc``) is a port of XLA's latency-hiding
scheduler: bottom-up list scheduling from the graph outputs with XLA's approximate costs
(1000 for fusions and dots, 1 otherwise; 5000 from an async start to its done), the same
overlap limits per collective, and a pairwise comparator applied while scanning the ready
set (``chosen = better(chosen, next)``). The comparator's rules, in order:

1. no-op ops first (here: parameters, constants, forwarding ops);
2. async dones first;
3. ops that unlock an async done (an operand is one) first;
4. the op whose ready time is earlier by more than 2000 units first (less stall);
5. the op that *increases* memory more first -- bottom-up, so it lands later in program
   order. An op's delta is what it allocates (its outputs that outlive it) minus what it
   frees (inputs it is the last user of, i.e. none of their other users is placed yet),
   entry parameters excluded. Deltas are symbolic (``SymExpr``) and are compared over the
   whole scenario box (``Scenarios.box()``) with ``cpsched.core.symbolic.compare``: ALWAYS_GE /
   ALWAYS_LE decide; DEPENDS ("not sure", BladeDISC's 0) falls through to the next rules,
   the way the paper's scheduler does when its symbolic comparison cannot order two
   expressions;
6. earlier ready time first;
7. original order (later position first, bottom-up, so a full tie keeps the input order).

BladeDISC only relates expressions of the form C*S^K through product constraints between
symbols; here the comparison is exact for any polynomial sizes over the box, so fewer pairs
end up "not sure". Option ``symbolic=False`` compares plain byte counts in one scenario
(``scenario``, default the heaviest) instead -- the XLA way -- for comparison.

Input (original) order: option ``order``, else the graph's own order, else a topological
order. Options ``cost_fn``/``latency_fn``/``overlap_limit`` as for ``lhs``.

Cost: each step scans the ready set with the pairwise comparator (as BladeDISC does), so a
step is O(ready-set size); memory deltas are cached per op and symbolic comparisons per
pair of expressions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cpsched.core.adjacency import adjacency, csr_lists
from cpsched.core.gc_pause import without_gc
from cpsched.core.graph import Graph, OpKind
from cpsched.core.order import check_order_option
from cpsched.core.scenario_choice import graph_scenarios, scenario_bytes
from cpsched.core.scenarios import Scenarios
from cpsched.core.symbolic import ALWAYS_GE, ALWAYS_LE, ZERO, compare
from cpsched.heuristics.lhs import HIGH_LATENCY, LOW_LATENCY, resource_kind
from cpsched.methods import register

MEDIUM_COST, LOW_COST = 1000.0, 1.0
STALL_THRESHOLD = 2000.0  # rule 4: "buffer_lifetime_compression_threshold"


def disc_cost(graph: Graph, i: int) -> float:
    """BladeDISC's ``LatencyEstimator::NodeCost``: fusions and dots 1000, else 1."""
    return MEDIUM_COST if graph.opcodes[i] in ("fusion", "dot") else LOW_COST


def _is_noop(graph: Graph, i: int) -> bool:
    return int(graph.kinds[i]) in (OpKind.PARAMETER, OpKind.CONSTANT, OpKind.ALIAS)


def _index_of(index: dict, items: list, key: Any) -> int:
    """``key``'s position in ``items``, appended the first time it is seen."""
    k = index.get(key)
    if k is None:
        k = index[key] = len(items)
        items.append(key)
    return k


class _Comparator:
    """Memory-delta comparison between ops, on interned (allocated, freed) expression ids.

    ``sign(a, b)`` is the sign of ``(alloc_a - freed_a) - (alloc_b - freed_b)``: +1, -1, or
    0 (equal, or -- symbolically -- not sure). Results are cached per pair of delta ids.
    """

    def __init__(self, box: Mapping[str, tuple[int, int]] | None):
        self.box = dict(box) if box is not None else None
        self.ids: dict[Any, int] = {}
        self.exprs: list[Any] = []
        self.deltas: dict[tuple[int, int], int] = {}
        self.delta_parts: list[tuple[int, int]] = []
        self.cache: dict[tuple[int, int], int] = {}
        self.decided = 0
        self.depends = 0

    def intern(self, e: Any) -> int:
        return _index_of(self.ids, self.exprs, e)

    def delta(self, plus_id: int, minus_id: int) -> int:
        return _index_of(self.deltas, self.delta_parts, (plus_id, minus_id))

    def sign(self, da: int, db: int) -> int:
        if da == db:
            return 0
        hit = self.cache.get((da, db))
        if hit is None:
            pa, ma = (self.exprs[k] for k in self.delta_parts[da])
            pb, mb = (self.exprs[k] for k in self.delta_parts[db])
            hit = self._compare(pa + mb, pb + ma)
            self.cache[(da, db)] = hit
            self.cache[(db, da)] = -hit if hit != 2 else 2
        if hit == 2:
            self.depends += 1
            return 0
        if hit:
            self.decided += 1
        return hit

    def _compare(self, left: Any, right: Any) -> int:
        if self.box is None:  # plain byte counts
            return (left > right) - (left < right)
        if left == right:
            return 0
        if left.is_constant and right.is_constant:
            a, b = left.constant_value, right.constant_value
            return (a > b) - (a < b)
        r = compare(left, right, self.box)
        if r == ALWAYS_GE:
            return 1
        if r == ALWAYS_LE:
            return 0 if compare(right, left, self.box) == ALWAYS_LE else -1
        return 2  # DEPENDS: not sure


def _sizes(graph: Graph, scenarios: Scenarios | None, options: Mapping[str, Any]):
    """Buffer sizes as symbolic expressions compared over the scenario box, or (option
    ``symbolic=False``, or a static graph) one scenario's bytes: (symbolic, comparator,
    zero, sizes)."""
    symbolic = bool(options.get("symbolic", True)) and bool(graph.dims)
    if symbolic:
        sc = graph_scenarios(graph, scenarios)
        cmp = _Comparator(sc.box())
        zero: Any = ZERO
        size: list[Any] = [
            s if sp == 0 else ZERO for s, sp in zip(graph.buffer_sizes, graph.buffer_space.tolist())
        ]
    else:
        cmp = _Comparator(None)
        zero = 0
        size = scenario_bytes(graph, scenarios, options.get("scenario")).tolist()

    return symbolic, cmp, zero, size


def _allocations(graph: Graph, cmp, zero, size, defs, users_of) -> list[int]:
    """What each op allocates for good: its outputs that outlive it (have users or are live
    out), interned in ``cmp``."""
    n = graph.n_ops
    live_in = graph.buffer_live_in.tolist()
    live_out = graph.buffer_live_out.tolist()
    plus = []
    for i in range(n):
        p = zero
        for b in defs[i]:
            if not live_in[b] and (users_of[b] or live_out[b]):
                p = p + size[b]
        plus.append(cmp.intern(p))
    return plus


def _time_model(graph: Graph, options: Mapping[str, Any]):
    """XLA's approximate costs (or option ``cost_fn``), the async dones and each async
    pair's latency (or option ``latency_fn``)."""
    n = graph.n_ops
    cost_fn = options.get("cost_fn")
    cost = [float(cost_fn(i)) if cost_fn else disc_cost(graph, i) for i in range(n)]
    done_of = graph.async_done.tolist()
    latency_fn = options.get("latency_fn")
    pair_lat = {
        s: (float(latency_fn(s, done_of[s])) if latency_fn else HIGH_LATENCY)
        for s in range(n)
        if done_of[s] >= 0
    }

    return cost, done_of, pair_lat


def _resources(graph: Graph, options: Mapping[str, Any]):
    """Which resource each async done occupies and each start releases, and the overlap
    limits per resource (option ``overlap_limit``: a number or a mapping with ``default``)."""
    n = graph.n_ops
    occupies: list[str | None] = [None] * n
    for i in range(n):
        if int(graph.kinds[i]) == OpKind.ASYNC_DONE:
            occupies[i] = resource_kind(graph, i)
    releases = [
        resource_kind(graph, i) if int(graph.kinds[i]) == OpKind.ASYNC_START else None
        for i in range(n)
    ]
    lim = options.get("overlap_limit", 1)
    if isinstance(lim, Mapping):
        limits = {str(k): int(v) for k, v in lim.items()}
        default_limit = limits.pop("default", 1)
    else:
        limits, default_limit = {}, int(lim)
    return occupies, releases, limits, default_limit


@without_gc
def bladedisc_schedule(
    graph: Graph, scenarios: Scenarios | None = None, **options: Any
) -> tuple[list[int], dict[str, Any]]:
    """The order and statistics: ``decided`` (pairs ordered by the memory rule),
    ``depends`` (pairs it could not order, which fell through to ready time / order)."""
    n = graph.n_ops
    if n == 0:
        return [], {"decided": 0, "depends": 0, "forced": 0}
    order = check_order_option(graph, options.get("order"))
    if order is None:
        order = graph.default_order()
    pos = [0] * n
    for k, i in enumerate(order):
        pos[i] = k
    adj = adjacency(graph)
    preds, succs = adj.preds, adj.succs

    symbolic, cmp, zero, size = _sizes(graph, scenarios, options)

    live_in = graph.buffer_live_in.tolist()
    live_out = graph.buffer_live_out.tolist()
    users_of = csr_lists(graph.buffer_users_ptr, graph.buffer_users_idx)
    uses = csr_lists(graph.uses_ptr, graph.uses_idx)
    defs = csr_lists(graph.defs_ptr, graph.defs_idx)
    plus = _allocations(graph, cmp, zero, size, defs, users_of)
    touched = [False] * graph.n_buffers  # some user already placed (bottom-up)
    delta_cache: list[int] = [-1] * n

    def delta(i: int) -> int:
        d = delta_cache[i]
        if d < 0:
            m = zero
            for b in uses[i]:
                if not touched[b] and not live_in[b] and not live_out[b]:
                    m = m + size[b]
            d = delta_cache[i] = cmp.delta(plus[i], cmp.intern(m))
        return d

    # -- time model and resources (as in the LHS) ------------------------------------------
    cost, done_of, pair_lat = _time_model(graph, options)

    def lat(u: int, v: int) -> float:
        return pair_lat[u] if done_of[u] == v else LOW_LATENCY

    occupies, releases, limits, default_limit = _resources(graph, options)
    in_flight: dict[str, int] = {}
    noop = [_is_noop(graph, i) for i in range(n)]
    is_done = [occupies[i] is not None for i in range(n)]
    op_lists = csr_lists(graph.operands_ptr, graph.operands_idx)
    unlock = [any(is_done[o] for o in op_lists[i]) for i in range(n)]

    def blocked(i: int) -> bool:
        r = occupies[i]
        if r is None:
            return False
        f = in_flight.get(r, 0)
        return f > 0 and limits.get(r, default_limit) - f < 1

    ready_time = [0.0] * n
    outdeg = [len(s) for s in succs]
    now = 0.0

    def better(a: int, b: int) -> int:
        """BladeDISC's ``ReadySetLt``: the preferred of the chosen ``a`` and the next ``b``."""
        if noop[a]:
            return a
        if noop[b]:
            return b
        if is_done[a] != is_done[b]:
            return a if is_done[a] else b
        if unlock[a] != unlock[b]:
            return a if unlock[a] else b
        ia, ib = ready_time[a] - now, ready_time[b] - now
        if ia < ib - STALL_THRESHOLD:
            return a
        if ia - STALL_THRESHOLD > ib:
            return b
        r = cmp.sign(delta(a), delta(b))
        if r > 0:
            return a
        if r < 0:
            return b
        if ia < ib:
            return a
        if ia > ib:
            return b
        return b if pos[a] < pos[b] else a

    ready = [i for i in order if outdeg[i] == 0]
    out: list[int] = []
    forced = 0
    while ready:
        chosen = -1
        for k, i in enumerate(ready):
            if blocked(i):
                continue
            if chosen < 0:
                chosen, ck = i, k
                continue
            w = better(chosen, i)
            if w != chosen:
                chosen, ck = w, k
        if chosen < 0:
            chosen, ck = ready[0], 0
            forced += 1
        ready.pop(ck)
        out.append(chosen)
        released, occupied = releases[chosen], occupies[chosen]
        if released is not None:
            in_flight[released] = in_flight.get(released, 0) - 1
        if occupied is not None:
            in_flight[occupied] = in_flight.get(occupied, 0) + 1
        t = now
        for s in succs[chosen]:
            e = ready_time[s] + lat(chosen, s)
            if e > t:
                t = e
        ready_time[chosen] = t
        now = t + cost[chosen]
        for b in uses[chosen]:
            if not touched[b]:
                touched[b] = True
                for u in users_of[b]:
                    delta_cache[u] = -1
        for p in preds[chosen]:
            outdeg[p] -= 1
            if outdeg[p] == 0:
                rt = now
                for s in succs[p]:
                    e = ready_time[s] + lat(p, s)
                    if e > rt:
                        rt = e
                ready_time[p] = rt
                ready.append(p)
    out.reverse()
    return out, {
        "decided": cmp.decided,
        "depends": cmp.depends,
        "forced": forced,
        "symbolic": symbolic,
    }


@register(
    "bladedisc",
    "BladeDISC++-style op scheduler: bottom-up, symbolic memory-delta "
    "comparison over the scenario box, falls back to ready time / order",
    "memory",
)
def bladedisc(graph: Graph, scenarios: Scenarios | None = None, **options: Any) -> list[int]:
    return bladedisc_schedule(graph, scenarios, **options)[0]


__all__ = ["bladedisc", "bladedisc_schedule", "disc_cost", "STALL_THRESHOLD"]
