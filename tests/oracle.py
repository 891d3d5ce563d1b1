"""An independent reference for the memory model, written from README.md's "Memory model".

``RichSpec`` is a plain description of a small graph that uses every feature of the model:
entry parameters (live-in; donated or kept to the end), results (live-out), several buffers
per op, buffers with no users, buffers whose user is not a data operand (a forwarded value),
host-space (``S(5)``) buffers, per-op transients, control edges, async start/done pairs and
sizes that depend on a shape dim ``s``. ``build()`` turns it into a ``cpsched`` graph through
the public ``GraphBuilder``; the reference simulator and precedence check below read the spec,
never the graph, so a bug in the graph's derived arrays or in ``cpsched.analysis`` cannot
cancel out.

Reference rules (README "Memory model"):
- a buffer is live from the step of its defining op to the step of its last user, inclusive;
- an entry parameter (live-in) is live from step 0; if it is not donated, to the last step;
- a result (live-out) is live to the last step;
- host-space buffers take no device memory;
- an op's transient bytes exist only at its own step;
- an op must come after its operands, its control predecessors, the definer of every buffer
  it uses, and (for an async done) its async start.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np

from cpsched.core.graph import GraphBuilder, OpKind
from cpsched.core.scenarios import Scenarios

HOST_SPACE = 5


@dataclass
class Buf:
    op: int                  # defining op
    a: int                   # size = a * s + c bytes
    c: int
    users: list[int]
    live_in: bool = False
    live_out: bool = False
    space: int = 0


@dataclass
class Op:
    name: str
    kind: OpKind
    operands: list[int] = field(default_factory=list)
    control: list[int] = field(default_factory=list)
    transient: tuple[int, int] = (0, 0)      # a * s + c bytes
    async_start: int | None = None           # for a done: its start


@dataclass
class RichSpec:
    name: str
    ops: list[Op]
    bufs: list[Buf]

    # -- the cpsched graph -------------------------------------------------------------------
    def build(self):
        b = GraphBuilder(self.name)
        for op in self.ops:
            b.add_op(op.name, op.kind.name.lower(), kind=op.kind,
                     operands=[self.ops[u].name for u in op.operands],
                     control_preds=[self.ops[u].name for u in op.control],
                     transient=_expr(*op.transient))
        for op in self.ops:
            if op.async_start is not None:
                b.pair_async(self.ops[op.async_start].name, op.name)
        for k, buf in enumerate(self.bufs):
            b.add_buffer(self.ops[buf.op].name, _expr(buf.a, buf.c),
                         users=[self.ops[u].name for u in buf.users], name=f"b{k}",
                         live_in=buf.live_in, live_out=buf.live_out, space=buf.space)
        return b.build()

    # -- the reference ---------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return len(self.ops)

    def preds(self) -> list[set[int]]:
        out = [set(op.operands) | set(op.control) for op in self.ops]
        for buf in self.bufs:
            for u in buf.users:
                if u != buf.op:
                    out[u].add(buf.op)
        for v, op in enumerate(self.ops):
            if op.async_start is not None:
                out[v].add(op.async_start)
        return out

    def respects(self, order) -> bool:
        """The reference validator: a permutation that puts every predecessor first."""
        if sorted(order) != list(range(self.n)):
            return False
        pos = {v: t for t, v in enumerate(order)}
        return all(pos[u] < pos[v] for v, ps in enumerate(self.preds()) for u in ps)

    def orders(self, limit: int | None = None) -> list[list[int]]:
        """Every valid order (or the first ``limit``), by plain backtracking."""
        preds = self.preds()
        out: list[list[int]] = []

        def rec(seq, placed):
            if limit is not None and len(out) >= limit:
                return
            if len(seq) == self.n:
                out.append(list(seq))
                return
            for v in range(self.n):
                if v not in placed and preds[v] <= placed:
                    seq.append(v)
                    placed.add(v)
                    rec(seq, placed)
                    seq.pop()
                    placed.discard(v)
        rec([], set())
        return out

    def device_bytes(self, s_values) -> np.ndarray:
        """``[S, B]`` device bytes of every buffer (host buffers: 0)."""
        s = np.asarray(s_values, dtype=np.int64)[:, None]
        a = np.array([bf.a for bf in self.bufs], dtype=np.int64)[None, :]
        c = np.array([bf.c for bf in self.bufs], dtype=np.int64)[None, :]
        dev = np.array([bf.space == 0 for bf in self.bufs])[None, :]
        return np.where(dev, a * s + c, 0)

    def transient_bytes(self, s_values) -> np.ndarray:
        s = np.asarray(s_values, dtype=np.int64)[:, None]
        a = np.array([op.transient[0] for op in self.ops], dtype=np.int64)[None, :]
        c = np.array([op.transient[1] for op in self.ops], dtype=np.int64)[None, :]
        return a * s + c

    def usage(self, orders, s_values) -> np.ndarray:
        """``usage[k, s, t]``: bytes at step ``t`` of order ``k`` in scenario ``s``, by the
        rules above, one buffer at a time (loops over buffers, vectorised over orders)."""
        orders = np.asarray(orders, dtype=np.int64).reshape(-1, self.n)
        K, n = orders.shape
        pos = np.empty_like(orders)
        pos[np.arange(K)[:, None], orders] = np.arange(n)[None, :]
        sizes = self.device_bytes(s_values)                  # [S, B]
        steps = np.arange(n)[None, :]
        use = np.zeros((K, len(s_values), n), dtype=np.int64)
        for k, buf in enumerate(self.bufs):
            first = np.zeros(K, dtype=np.int64) if buf.live_in else pos[:, buf.op]
            last = pos[:, buf.op]
            for u in buf.users:
                last = np.maximum(last, pos[:, u])
            if buf.live_out:
                last = np.full(K, n - 1)
            live = (steps >= first[:, None]) & (steps <= last[:, None])     # [K, n]
            use += live[:, None, :] * sizes[None, :, k, None]
        trans = self.transient_bytes(s_values)                              # [S, n]
        use += np.transpose(trans[:, orders], (1, 0, 2))
        return use

    def peaks(self, orders, s_values) -> np.ndarray:
        """``[K, S]`` peak bytes of each order."""
        return self.usage(orders, s_values).max(axis=2)


def _expr(a: int, c: int) -> str:
    if a and c:
        return f"{a}*s + {c}"
    if a:
        return f"{a}*s"
    return str(c)


def scenarios(s_values, weights=None) -> Scenarios:
    s_values = list(s_values)
    w = np.full(len(s_values), 1.0 / len(s_values)) if weights is None else np.asarray(weights)
    return Scenarios(tuple(f"s={v}" for v in s_values), ("s",),
                     np.array([[v] for v in s_values]), w)


def rich_spec(seed: int, n_compute: int = 5, *, params: int | None = None,
              asyncs: int | None = None, symbolic: bool = True, host: bool = True,
              transients: bool = True, control: bool = True, p_edge: float = 0.35) -> RichSpec:
    """A random graph with parameters, computes, an async pair, and every buffer kind."""
    rng = random.Random(seed)
    ops: list[Op] = []
    bufs: list[Buf] = []
    n_params = rng.randint(1, 2) if params is None else params
    n_async = rng.randint(0, 1) if asyncs is None else asyncs

    def size():
        a = rng.choice([0, 0, 1, 2, 3]) if symbolic else 0
        return a, rng.randint(1, 9)

    for p in range(n_params):
        ops.append(Op(f"p{p}", OpKind.PARAMETER))
        a, c = size()
        donated = rng.random() < 0.5
        bufs.append(Buf(len(ops) - 1, a, c, [], live_in=True, live_out=not donated))
    first_buf = {v: k for k, v in reversed(list(enumerate(b.op for b in bufs)))}
    kinds = [OpKind.COMPUTE] * n_compute
    # an async pair is a start and a done among the computes (start earlier)
    pairs = []
    for _ in range(n_async):
        i = rng.randrange(0, max(1, n_compute - 1))
        j = rng.randrange(i + 1, n_compute) if i + 1 < n_compute else None
        if j is not None and kinds[i] == OpKind.COMPUTE and kinds[j] == OpKind.COMPUTE:
            kinds[i], kinds[j] = OpKind.ASYNC_START, OpKind.ASYNC_DONE
            pairs.append((i, j))
    base = len(ops)
    for i in range(n_compute):
        v = base + i
        cand = list(range(v))
        operands = sorted(u for u in cand if rng.random() < p_edge)
        if not operands and cand and rng.random() < 0.8:
            operands = [rng.choice(cand)]
        t = (rng.choice([0, 0, 1]) if symbolic else 0, rng.choice([0, 0, 0, 2, 5]))
        op = Op(f"v{i}", kinds[i], operands=operands,
                transient=t if transients else (0, 0))
        ops.append(op)
        a, c = size()
        space = HOST_SPACE if host and rng.random() < 0.15 else 0
        bufs.append(Buf(v, a, c, [], space=space))
        first_buf[v] = len(bufs) - 1
        if rng.random() < 0.3:
            a, c = size()
            bufs.append(Buf(v, a, c, []))           # a second output
    for i, j in pairs:
        ops[base + j].async_start = base + i
    # data users: each operand's first buffer
    for v, op in enumerate(ops):
        for u in op.operands:
            if v not in bufs[first_buf[u]].users:
                bufs[first_buf[u]].users.append(v)
    # a forwarded use: a later op reads a buffer without a data edge to its definer
    for k, buf in enumerate(bufs):
        later = [v for v in range(buf.op + 1, len(ops)) if buf.op not in ops[v].operands]
        if later and rng.random() < 0.2:
            buf.users.append(rng.choice(later))
    if control and len(ops) > 2 and rng.random() < 0.6:
        v = rng.randrange(2, len(ops))
        u = rng.randrange(0, v)
        if u not in ops[v].operands:
            ops[v].control.append(u)
    # results: the last compute's first buffer, and some buffers nobody reads
    bufs[first_buf[len(ops) - 1]].live_out = True
    for buf in bufs:
        if not buf.users and not buf.live_in and rng.random() < 0.4:
            buf.live_out = True
    return RichSpec(f"rich{seed}", ops, bufs)


def count_orders_up_to(spec: RichSpec, cap: int) -> int:
    return len(spec.orders(limit=cap + 1))


__all__ = ["RichSpec", "Buf", "Op", "rich_spec", "scenarios", "count_orders_up_to",
           "HOST_SPACE"]


def fanout_spec(seed: int, users: int = 3, side: int = 2) -> RichSpec:
    """A parameter read by ``x``, whose big buffer has ``users`` unordered readers; ``side``
    independent ops with transients can run between those readers; one op joins all.
    (Random graphs rarely put an op between two unordered last users of one buffer.)"""
    rng = random.Random(seed)
    ops = [Op("p", OpKind.PARAMETER), Op("x", OpKind.COMPUTE, operands=[0])]
    bufs = [Buf(0, rng.choice([0, 1]), rng.randint(1, 5), [1], live_in=True,
                live_out=rng.random() < 0.5),
            Buf(1, rng.choice([0, 2, 4]), rng.randint(10, 30), [])]
    for i in range(users):
        ops.append(Op(f"u{i}", OpKind.COMPUTE, operands=[1],
                      transient=(0, rng.choice([0, 0, 3]))))
        bufs[1].users.append(len(ops) - 1)
        bufs.append(Buf(len(ops) - 1, rng.choice([0, 1]), rng.randint(1, 8), []))
    for i in range(side):
        ops.append(Op(f"w{i}", OpKind.COMPUTE, operands=[0],
                      transient=(rng.choice([0, 1, 2]), rng.randint(5, 25))))
        bufs[0].users.append(len(ops) - 1)
        bufs.append(Buf(len(ops) - 1, 0, rng.randint(1, 8), []))
    join = len(ops)
    ops.append(Op("z", OpKind.COMPUTE, operands=list(range(2, join))))
    for buf in bufs[2:]:
        buf.users.append(join)
    bufs.append(Buf(join, 0, 1, [], live_out=True))
    return RichSpec(f"fanout{seed}", ops, bufs)
