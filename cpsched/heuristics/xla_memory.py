"""XLA's memory-minimising sequential schedulers (``hlo_memory_scheduler.cc``), re-implemented
on cpsched's graph IR.

Registered methods (family ``memory``):

- ``xla-list``: the greedy list scheduler. Priority of a ready op = (bytes it frees −
  bytes it defines, number of data users), larger first; effective scalars jump the queue;
  parameters and constants define 0 bytes and their buffers are never "freed"; a buffer is
  freed only by its last unscheduled user; live-out buffers are never freed; among equal
  priorities the most recently (re)inserted op wins (LIFO); after each step the ready op
  that became the last user of a buffer is re-prioritised.
- ``xla-dfs``: post-order DFS from the root that visits operands with more transitive
  ``extra_users`` first, then larger transitive ``total_sizes``, then by name;
  unreachable (dead) roots are visited before the root.
- ``xla-postorder``: ``MakeInstructionPostOrder`` (DFS from each op without users, in
  instruction order; operand 0 finished first; control predecessors before operands).
- ``xla-bfs``: FIFO Kahn order (the "wave front" BFScheduler).
- ``xla-default``: list, DFS and post-order; keeps the lowest simulated peak, ties going to
  list, then DFS, then post-order. On an HLO module the three each order every computation
  and the module's peak decides, once (``DefaultMemoryScheduler::Run``; ``cpsched.api``
  makes that choice from ``Method.choice``). Option ``postprocess``, a function ``(graph, order) ->
  order`` (XLA's scheduler takes its post-processor the same way), is applied to each
  candidate before scoring it; ``gpu-postprocess`` passes XLA's GPU post-processor.

Sizes: XLA compares byte counts, so with symbolic sizes every method here works in ONE
scenario: option ``scenario`` (a name or an index), default the scenario with the largest
weight. The result is a valid order for every scenario; only its quality is tuned to one.

Mapping onto the IR (where XLA's HLO notions have no exact twin):
- "instruction order" is op index order (readers create ops in text order);
- an op becomes ready when all its dependences in the IR (data, control, buffer, async) are
  scheduled, a superset of XLA's operands + control predecessors, so every order is valid;
- XLA's "values used by X" (flattened operand value sets) are ``graph.uses(X)``, which
  already resolve forwarding through get-tuple-element / tuple / bitcast;
- the root is ``graph.meta['root']`` when a reader records it, else the last op without
  successors in the graph's default order;
- after a step XLA re-scores the ready users of the step's operand *instructions*; here the
  re-scored ops are the remaining users of buffers whose use count just dropped to one,
  which is the set whose priority can actually change (identical on graphs without
  forwarding, a superset otherwise).

Every method is O((ops + dependences) log ops); a 100,000-op graph takes about a second.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cpsched.analysis.memory import peak
from cpsched.core.adjacency import adjacency, csr_lists
from cpsched.core.gc_pause import without_gc
from cpsched.core.graph import Graph, OpKind
from cpsched.core.opclass import is_effective_scalar
from cpsched.core.scenario_choice import scenario_bytes, scenario_index
from cpsched.core.scenarios import Scenarios, static
from cpsched.methods import register

_BIG = 1 << 62  # the (INT64_MAX, INT64_MAX) priority of effective scalars


def _ignored_ops(graph: Graph) -> list[bool]:
    k = graph.kinds
    return ((k == OpKind.PARAMETER) | (k == OpKind.CONSTANT)).tolist()


def _bytes_defined(graph: Graph, nbytes: np.ndarray, ignored: list[bool]) -> list[int]:
    n = graph.n_ops
    out = np.zeros(n, dtype=np.int64)
    if graph.n_buffers:
        np.add.at(out, graph.buffer_def, nbytes)
    out[np.asarray(ignored, dtype=bool)] = 0
    return out.tolist()


# -- list scheduler ------------------------------------------------------------------------------


@without_gc
def list_order(graph: Graph, nbytes: np.ndarray) -> list[int]:
    """XLA's ``ListScheduler`` with buffer sizes ``nbytes``."""
    n = graph.n_ops
    if n == 0:
        return []
    adj = adjacency(graph)
    ign_op = _ignored_ops(graph)
    defined = _bytes_defined(graph, nbytes, ign_op)
    uses = csr_lists(graph.uses_ptr, graph.uses_idx)
    users_of = csr_lists(graph.buffer_users_ptr, graph.buffer_users_idx)
    size = nbytes.tolist()
    bdef = graph.buffer_def.tolist()
    live_out = graph.buffer_live_out.tolist()
    # buffers whose freeing earns no credit: defined by a parameter or constant, or live-in
    ign_buf = [ign_op[bdef[j]] or bool(li) for j, li in enumerate(graph.buffer_live_in.tolist())]
    count = [len(users_of[j]) + (1 if live_out[j] else 0) for j in range(graph.n_buffers)]
    n_users = [len(u) for u in adj.users]
    scalar = [is_effective_scalar(graph, i) for i in range(n)] if graph.op_attrs else [False] * n
    special = {}
    for i, op in enumerate(graph.opcodes):
        if op == "outfeed" and graph.attrs(i).get("outfeed_config"):
            special[i] = _BIG
        elif op == "infeed" and graph.attrs(i).get("infeed_config"):
            special[i] = -_BIG

    def priority(i: int) -> tuple[int, int]:
        if scalar[i]:
            return (_BIG, _BIG)
        if i in special:
            return (special[i], n_users[i])
        freed = 0
        for j in uses[i]:
            if count[j] == 1 and not ign_buf[j]:
                freed += size[j]
        return (freed - defined[i], n_users[i])

    indeg = [len(p) for p in adj.preds]
    scheduled = [False] * n
    cur: list[tuple[int, int] | None] = [None] * n  # priority of a queued op
    seq_of = [0] * n
    heap: list[tuple[int, int, int, int]] = []
    seq = 0

    def push(i: int, p: tuple[int, int]) -> None:
        nonlocal seq
        seq += 1
        cur[i] = p
        seq_of[i] = seq
        heapq.heappush(heap, (-p[0], -p[1], -seq, i))

    for i in range(n):
        if indeg[i] == 0:
            push(i, priority(i))
    out: list[int] = []
    succs = adj.succs
    while heap:
        _, _, negseq, best = heapq.heappop(heap)
        if scheduled[best] or seq_of[best] != -negseq:
            continue
        scheduled[best] = True
        cur[best] = None
        out.append(best)
        hit_one = []
        for j in uses[best]:
            count[j] -= 1
            if count[j] == 1:
                hit_one.append(j)
        for s in succs[best]:
            indeg[s] -= 1
            if indeg[s] == 0:
                push(s, priority(s))
        if hit_one:
            ops_pos = {o: k for k, o in enumerate(graph.operands(best).tolist())}
            affected = []
            for j in hit_one:
                if ign_buf[j] or size[j] == 0 or live_out[j]:
                    continue
                for u in users_of[j]:
                    if not scheduled[u]:
                        if cur[u] is not None:
                            affected.append((ops_pos.get(bdef[j], len(ops_pos)), u))
                        break
            seen = set()
            for _, u in sorted(affected):
                if u in seen:
                    continue
                seen.add(u)
                p = priority(u)
                if p != cur[u]:
                    push(u, p)
    if len(out) != n:  # pragma: no cover - Graph.build rejects cycles
        raise RuntimeError("list scheduler did not schedule every op")
    return out


# -- DFS and post-order ----------------------------------------------------------------------------


def _root(graph: Graph, succs: list[list[int]]) -> int:
    name = graph.meta.get("root")
    if isinstance(name, str) and name in graph.op_names:
        return graph.op_index(name)
    order = graph.original_order if graph.original_order is not None else range(graph.n_ops)
    for i in reversed(order):
        if not succs[i]:
            return i
    return graph.n_ops - 1


_NEW, _VISITING, _VISITED = 0, 1, 2


def _dfs_post_order(
    graph: Graph, roots: Sequence[int], push: Callable[[int, list[int], list[int]], None]
) -> list[int]:
    """Iterative depth-first search from each root, every op after the ops ``push(op,
    stack, state)`` put on the stack (its unvisited predecessors, the last pushed visited
    first); ops no root reaches follow in topological order (not in XLA's world: they
    reach a user-less op only through non-operand edges)."""
    state = [_NEW] * graph.n_ops
    out: list[int] = []
    for r in roots:
        if state[r] == _VISITED:
            continue
        stack = [r]
        while stack:
            cur = stack[-1]
            st = state[cur]
            if st != _NEW:
                stack.pop()
                if st == _VISITING:
                    state[cur] = _VISITED
                    out.append(cur)
                continue
            state[cur] = _VISITING
            push(cur, stack, state)
    if len(out) != graph.n_ops:
        seen = set(out)
        out.extend(i for i in graph.topological_order() if i not in seen)
    return out


@without_gc
def postorder(graph: Graph) -> list[int]:
    """``HloComputation::MakeInstructionPostOrder`` on the IR."""
    n = graph.n_ops
    adj = adjacency(graph)
    users, preds, xla_preds = adj.users, adj.preds, adj.xla_preds
    n_ops_ptr = graph.operands_ptr.tolist()

    def push(cur: int, stack: list[int], state: list[int]) -> None:
        xp = xla_preds[cur]
        if len(xp) != len(preds[cur]):
            extra = [p for p in preds[cur] if p not in set(xp)]
            for p in reversed(extra):  # deepest: usually visited already
                if state[p] != _VISITED:
                    stack.append(p)
        k = n_ops_ptr[cur + 1] - n_ops_ptr[cur]
        for p in reversed(xp[:k]):  # operands, last pushed first
            if state[p] != _VISITED:
                stack.append(p)
        for p in xp[k:]:  # control preds on top
            if state[p] != _VISITED:
                stack.append(p)

    return _dfs_post_order(graph, [r for r in range(n) if not users[r]], push)


def _dfs_stats(graph: Graph, nbytes: np.ndarray, post: list[int]) -> tuple[list[int], list[int]]:
    n = graph.n_ops
    adj = adjacency(graph)
    ign = _ignored_ops(graph)
    own = np.zeros(n, dtype=np.int64)
    if graph.n_buffers:
        np.add.at(own, graph.buffer_def, nbytes)
    own_l = own.tolist()
    ops = csr_lists(graph.operands_ptr, graph.operands_idx)
    extra = [0] * n
    total = [0] * n
    cumulative = 0
    for i in post:
        if ign[i]:
            continue
        u = len(adj.users[i])
        e = u - 1 if u else 0
        t = own_l[i]
        cumulative += t
        for o in ops[i]:
            e += extra[o]
            t += total[o]
        total[i] = min(t, cumulative)
        extra[i] = min(e, n)
    return extra, total


@without_gc
def dfs_order(graph: Graph, nbytes: np.ndarray) -> list[int]:
    """XLA's ``DFSMemoryScheduler``."""
    n = graph.n_ops
    if n == 0:
        return []
    adj = adjacency(graph)
    post = postorder(graph)
    extra, total = _dfs_stats(graph, nbytes, post)
    names = graph.op_names

    def key(i: int):
        return (-extra[i], -total[i], names[i])

    preds, xla_preds = adj.preds, adj.xla_preds
    root = _root(graph, adj.succs)
    starts = [i for i in range(n) if not adj.succs[i] and i != root] + [root]

    def push(cur: int, stack: list[int], state: list[int]) -> None:
        xp = xla_preds[cur]
        if len(xp) != len(preds[cur]):
            xs = set(xp)
            extra_p = sorted(
                (p for p in preds[cur] if p not in xs and state[p] != _VISITED), key=key
            )
            stack.extend(reversed(extra_p))
        kids = [p for p in xp if state[p] != _VISITED]
        if len(kids) > 1:
            kids.sort(key=key)
        stack.extend(reversed(kids))

    return _dfs_post_order(graph, starts, push)


@without_gc
def bfs_order(graph: Graph) -> list[int]:
    """XLA's ``BFScheduler``: Kahn's algorithm with a FIFO queue."""
    adj = adjacency(graph)
    indeg = [len(p) for p in adj.preds]
    q = deque(i for i in range(graph.n_ops) if indeg[i] == 0)
    out = []
    succs = adj.succs
    while q:
        i = q.popleft()
        out.append(i)
        for s in succs[i]:
            indeg[s] -= 1
            if indeg[s] == 0:
                q.append(s)
    return out


# -- registered methods ----------------------------------------------------------------------------


def _nbytes(graph: Graph, scenarios: Scenarios | None, options: dict) -> np.ndarray:
    return scenario_bytes(graph, scenarios, options.get("scenario"))


@register(
    "xla-list", "XLA ListMemoryScheduler: greedy bytes-freed-minus-defined, LIFO ties", "memory"
)
def xla_list(graph: Graph, scenarios: Scenarios | None = None, **options: Any) -> list[int]:
    return list_order(graph, _nbytes(graph, scenarios, options))


@register(
    "xla-dfs", "XLA DFSMemoryScheduler: post-order DFS, heavy/fan-out operands first", "memory"
)
def xla_dfs(graph: Graph, scenarios: Scenarios | None = None, **options: Any) -> list[int]:
    return dfs_order(graph, _nbytes(graph, scenarios, options))


@register("xla-postorder", "XLA PostOrderScheduler: MakeInstructionPostOrder", "memory")
def xla_postorder(graph: Graph, scenarios: Scenarios | None = None, **options: Any) -> list[int]:
    return postorder(graph)


@register("xla-bfs", "XLA BFScheduler: FIFO wave-front order (concurrency, not memory)", "memory")
def xla_bfs(graph: Graph, scenarios: Scenarios | None = None, **options: Any) -> list[int]:
    return bfs_order(graph)


def _one_scenario(scenarios: Scenarios | None, which: Any) -> Scenarios:
    if scenarios is None or len(scenarios) == 0:
        return static()
    k = scenario_index(scenarios, which)
    return scenarios.only(k)


def default_candidates(
    graph: Graph, scenarios: Scenarios | None = None, **options: Any
) -> list[tuple[str, list[int], int]]:
    """(name, order, simulated peak in the chosen scenario) for list, DFS and post-order."""
    nbytes = _nbytes(graph, scenarios, options)
    one = _one_scenario(scenarios, options.get("scenario"))
    cands = [
        ("xla-list", list_order(graph, nbytes)),
        ("xla-dfs", dfs_order(graph, nbytes)),
        ("xla-postorder", postorder(graph)),
    ]
    post = options.get("postprocess")
    if post is not None:
        cands = [(name, list(post(graph, order))) for name, order in cands]
    return [(name, order, int(peak(graph, order, one)[0])) for name, order in cands]


@register(
    "xla-default",
    "XLA DefaultMemoryScheduler: list, DFS and post-order each on the whole module, the "
    "least module peak kept",
    "memory",
    choice=("xla-list", "xla-dfs", "xla-postorder"),
)
def xla_default(graph: Graph, scenarios: Scenarios | None = None, **options: Any) -> list[int]:
    """On one graph: the lowest simulated peak of list, DFS and post-order, ties in that
    order. On a module the choice is made once for all computations (``Method.choice``),
    as ``DefaultMemoryScheduler::Run`` does, not per computation."""
    cands = default_candidates(graph, scenarios, **options)
    best = min(range(len(cands)), key=lambda k: (cands[k][2], k))
    return cands[best][1]


__all__ = [
    "list_order",
    "dfs_order",
    "postorder",
    "bfs_order",
    "default_candidates",
    "xla_list",
    "xla_dfs",
    "xla_postorder",
    "xla_bfs",
    "xla_default",
]
