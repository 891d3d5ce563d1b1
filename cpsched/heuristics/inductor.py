"""PyTorch Inductor's peak-memory reordering (``torch/_inductor/memory.py``), re-implemented on
cpsched's graph IR.

Registered methods (family ``memory``):

- ``inductor-lpmf``: "least peak memory first" (``topological_sort_lpmf``). It tracks the
  live bytes and the highest so far; among the ready nodes, one whose outputs fit under that
  high-water mark is taken by least (bytes allocated - bytes it frees), else the node with
  the fewest bytes allocated; ties by original index. A buffer frees when its last user
  runs (a node that is the last user of one of its reads frees it; an output nobody reads
  frees at once); graph outputs never free. It starts from the freeable inputs' bytes with
  the high-water mark at least the outputs' bytes.
- ``inductor-bfs``: ``topological_sort_bfs``: a heap of ready nodes keyed by the sorted
  steps at which their predecessors ran (earliest first), ties by index.
- ``inductor-dfs``: ``topological_sort_dfs``: post-order DFS started from every node in
  ascending (bytes allocated + bytes read, index), visiting dependences in the same order.
- ``inductor-default``: ``reorder_for_peak_memory``: the incoming order, LPMF, BFS and
  DFS, the least estimated peak kept (the first of equal ones, in that order).

Mapping onto the IR (exact on graphs read from Inductor, ``cpsched.readers.torch_graph``,
so the orders are Inductor's own; on any other graph a faithful analogue):

- Inductor's nodes are the ops other than the parameters and constants that have no
  predecessor (Inductor's graph inputs); those go first, in index order, and count as run;
- a node's "index" is its position among the nodes in op index order (for torch graphs,
  the order Inductor's pass received them in); the incoming order is that order;
- a node's predecessors for BFS's priority are its operands and control predecessors; DFS
  visits its operands, then any other predecessor still unvisited (on Inductor's graphs
  every one of those is reached through the operands already);
- bytes allocated are the bytes of the buffers an op defines; bytes read those of the
  buffers it uses, less those it only frees as a multi-output kernel's output
  (``alloc_views``, see the torch reader).

Sizes: Inductor compares byte counts at the size hints; with symbolic sizes every method here
works in ONE scenario: option ``scenario`` (a name or index), default the heaviest one (a
graph read from torch has one, its hints).
"""

from __future__ import annotations

import heapq
from typing import Any

from cpsched.analysis.memory import peak as simulated_peak
from cpsched.core.gc_pause import without_gc
from cpsched.core.graph import Graph, OpKind
from cpsched.core.order import validate_order
from cpsched.core.scenario_choice import graph_scenarios, scenario_bytes, scenario_index
from cpsched.core.scenarios import Scenarios
from cpsched.methods import register


class _View:
    """The graph as Inductor's memory pass sees it, in one scenario (plain lists)."""

    def __init__(self, graph: Graph, scenarios: Scenarios | None, which: Any, sized=True):
        self.graph = graph
        n = graph.n_ops
        nbytes = (
            scenario_bytes(graph, scenarios, which).tolist() if sized else [0] * graph.n_buffers
        )
        kinds = graph.kinds.tolist()
        pred_lists = [graph.preds(i).tolist() for i in range(n)]
        self.pre = [
            i
            for i in range(n)
            if kinds[i] in (OpKind.PARAMETER, OpKind.CONSTANT) and not pred_lists[i]
        ]
        pre = set(self.pre)
        self.nodes = [i for i in range(n) if i not in pre]
        self.index = [-1] * n
        for k, i in enumerate(self.nodes):
            self.index[i] = k
        self.nbytes = nbytes
        self.preds = [[p for p in pred_lists[i] if p not in pre] for i in range(n)]
        self.succs = [[s for s in graph.succs(i).tolist() if s not in pre] for i in range(n)]
        self.direct = []
        for i in range(n):
            d = list(dict.fromkeys(graph.operands(i).tolist() + graph.control_preds(i).tolist()))
            self.direct.append([p for p in d if p not in pre])
        self.defines = [graph.defines(i).tolist() for i in range(n)]
        self.uses = [graph.uses(i).tolist() for i in range(n)]
        self.users = [graph.buffer_users(j).tolist() for j in range(graph.n_buffers)]
        self.live_out = graph.buffer_live_out.tolist()
        self.size = [sum(nbytes[j] for j in self.defines[i]) for i in range(n)]
        names = graph.buffer_names
        self.views = []
        for i in range(n):
            v = set(graph.attrs(i).get("alloc_views", ()))
            self.views.append([j for j in self.uses[i] if names[j] in v])


@without_gc
def lpmf_order(
    graph: Graph,
    scenarios: Scenarios | None = None,
    scenario: Any = None,
    threshold: int | None = None,
) -> list[int]:
    """Inductor's ``topological_sort_lpmf`` (see the module docstring)."""
    v = _View(graph, scenarios, scenario)
    nb = v.nbytes
    if threshold is None:
        threshold = int(
            graph.meta.get("torch", {}).get("size_threshold_for_succ_based_strategy", 0)
        )
    indeg = [len(v.preds[i]) for i in range(graph.n_ops)]
    ready = {i for i in v.nodes if indeg[i] == 0}
    outdeg = [len(v.users[j]) + (1 if v.live_out[j] else 0) for j in range(graph.n_buffers)]
    live = sum(nb[j] for i in v.pre for j in v.defines[i])
    unfreed = set(graph.meta.get("torch", {}).get("unfreed_buffers", ()))
    names = graph.buffer_names
    output_bytes = sum(
        nb[j] for j in range(graph.n_buffers) if v.live_out[j] and names[j] not in unfreed
    )
    high = max(live, output_bytes)
    gap = high - live
    to_free = [0] * graph.n_ops
    for i in v.nodes:
        for j in v.uses[i]:
            if outdeg[j] == 1:
                to_free[i] += nb[j]
        for j in v.defines[i]:
            if outdeg[j] == 0:
                to_free[i] += nb[j]
    first_succ = [
        min((v.index[s] for s in v.succs[i]), default=len(v.nodes)) for i in range(graph.n_ops)
    ]
    out = list(v.pre)
    index, size = v.index, v.size
    while ready:
        if threshold > 0 and min(size[i] for i in ready) > threshold:
            sel = min(ready, key=lambda i: (first_succ[i], index[i]))
        else:
            sel = min(
                ready,
                key=lambda i: (size[i] if size[i] > gap else 0, size[i] - to_free[i], index[i]),
            )
        ready.remove(sel)
        out.append(sel)
        live += size[sel]
        high = max(high, live)
        live -= to_free[sel]
        gap = high - live
        for s in v.succs[sel]:
            indeg[s] -= 1
            if indeg[s] == 0:
                ready.add(s)
        for j in v.uses[sel]:
            outdeg[j] -= 1
            if outdeg[j] == 1:
                for u in v.users[j]:
                    to_free[u] += nb[j]
    return out


@without_gc
def bfs_order(graph: Graph, scenarios: Scenarios | None = None, scenario: Any = None) -> list[int]:
    """Inductor's ``topological_sort_bfs``: earliest-run predecessors first."""
    v = _View(graph, scenarios, scenario, sized=False)  # the order needs no sizes
    indeg = [len(v.preds[i]) for i in range(graph.n_ops)]
    step = [-1] * graph.n_ops
    heap: list[tuple[tuple[int, ...], int, int]] = [
        ((), v.index[i], i) for i in v.nodes if indeg[i] == 0
    ]
    heapq.heapify(heap)
    out = list(v.pre)
    k = 0
    while heap:
        _, _, sel = heapq.heappop(heap)
        step[sel] = k
        k += 1
        out.append(sel)
        for s in v.succs[sel]:
            indeg[s] -= 1
            if indeg[s] == 0:
                prio = tuple(sorted({step[p] for p in v.direct[s]}))
                heapq.heappush(heap, (prio, v.index[s], s))
    return out


@without_gc
def dfs_order(graph: Graph, scenarios: Scenarios | None = None, scenario: Any = None) -> list[int]:
    """Inductor's ``topological_sort_dfs``: light nodes (bytes written + read) first."""
    v = _View(graph, scenarios, scenario)
    nb = v.nbytes
    weight = [0] * graph.n_ops
    for i in v.nodes:
        views = set(v.views[i])
        weight[i] = v.size[i] + sum(nb[j] for j in v.uses[i] if j not in views)

    def key(i: int) -> tuple[int, int]:
        return (weight[i], v.index[i])

    seen = [False] * graph.n_ops
    for i in v.pre:
        seen[i] = True
    out = list(v.pre)

    def children(i: int):
        first = sorted((p for p in v.direct[i] if p in operand_set[i]), key=key)
        yield from first
        rest = sorted((p for p in v.preds[i] if p not in operand_set[i]), key=key)
        yield from rest

    operand_set = [set(graph.operands(i).tolist()) for i in range(graph.n_ops)]
    for root in sorted(v.nodes, key=key):
        if seen[root]:
            continue
        seen[root] = True
        stack = [(root, children(root))]
        while stack:
            node, it = stack[-1]
            for c in it:
                if not seen[c]:
                    seen[c] = True
                    stack.append((c, children(c)))
                    break
            else:
                stack.pop()
                out.append(node)
    return out


def incoming_order(graph: Graph) -> list[int]:
    """The order Inductor's pass received: op index order (parameters first) when it is
    a valid order, else the graph's own order."""
    v_pre = [
        i
        for i in range(graph.n_ops)
        if graph.kinds[i] in (OpKind.PARAMETER, OpKind.CONSTANT) and not graph.preds(i).size
    ]
    pre = set(v_pre)
    order = v_pre + [i for i in range(graph.n_ops) if i not in pre]
    try:
        validate_order(graph, order)
    except Exception:
        return graph.default_order()
    return order


def portfolio(
    graph: Graph, scenarios: Scenarios | None = None, scenario: Any = None
) -> list[tuple[str, list[int], int]]:
    """``(name, order, estimated peak)`` of ``reorder_for_peak_memory``'s candidates, in
    its order: the incoming order ("baseline"), LPMF, BFS, DFS."""
    sc = graph_scenarios(graph, scenarios, check=False)
    k = scenario_index(sc, scenario)
    one = sc.only(k)
    out = []
    for name, order in (
        ("baseline", incoming_order(graph)),
        ("lpmf", lpmf_order(graph, sc, k)),
        ("bfs", bfs_order(graph, sc, k)),
        ("dfs", dfs_order(graph, sc, k)),
    ):
        out.append((name, order, int(simulated_peak(graph, order, one)[0])))
    return out


@register("inductor-lpmf", "Inductor topological_sort_lpmf: least peak memory first", "memory")
def inductor_lpmf(graph: Graph, scenarios: Scenarios | None = None, **options: Any) -> list[int]:
    return lpmf_order(graph, scenarios, options.get("scenario"))


@register(
    "inductor-bfs", "Inductor topological_sort_bfs: earliest-run predecessors first", "memory"
)
def inductor_bfs(graph: Graph, scenarios: Scenarios | None = None, **options: Any) -> list[int]:
    return bfs_order(graph, scenarios, options.get("scenario"))


@register("inductor-dfs", "Inductor topological_sort_dfs: light nodes first, post-order", "memory")
def inductor_dfs(graph: Graph, scenarios: Scenarios | None = None, **options: Any) -> list[int]:
    return dfs_order(graph, scenarios, options.get("scenario"))


@register(
    "inductor-default",
    "Inductor reorder_for_peak_memory: least estimate of incoming/LPMF/BFS/DFS",
    "memory",
)
def inductor_default(graph: Graph, scenarios: Scenarios | None = None, **options: Any) -> list[int]:
    cands = portfolio(graph, scenarios, options.get("scenario"))
    return min(cands, key=lambda c: c[2])[1]
