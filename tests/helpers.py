"""Small graph builders shared by tests."""

from __future__ import annotations

import random

import numpy as np

from cpsched.core.graph import GraphBuilder


def chain_graph(sizes=(10, 20, 30)):
    b = GraphBuilder("chain")
    prev = prev_buf = None
    for k, s in enumerate(sizes):
        i = b.add_op(f"op{k}", "add", operands=[prev] if prev is not None else [])
        if prev is not None:
            b.add_buffer_user(prev_buf, i)
        prev_buf = b.add_buffer(i, s)
        prev = i
    return b.build()


def random_dag(n: int, seed: int, p: float = 0.3, max_size: int = 100, live_out_last=True):
    """A random DAG: op k may use the output of any earlier op."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder(f"rand{n}_{seed}")
    bufs = []
    for k in range(n):
        preds = [j for j in range(k) if rng.random() < p]
        i = b.add_op(f"v{k}", "op", operands=[f"v{j}" for j in preds])
        for j in preds:
            b.add_buffer_user(bufs[j], i)
        bufs.append(b.add_buffer(i, int(rng.integers(1, max_size))))
    if live_out_last:
        b.set_live_out(bufs[-1])
    return b.build()


def orders_from_preds(preds, limit=None):
    """Every order in which each op comes after its ``preds`` (lexicographic, at most
    ``limit``)."""
    n = len(preds)
    ps = [set(map(int, x)) for x in preds]
    count = 0

    def rec(done, placed):
        nonlocal count
        if limit is not None and count >= limit:
            return
        if len(done) == n:
            count += 1
            yield list(done)
            return
        for i in range(n):
            if i not in placed and ps[i] <= placed:
                done.append(i)
                placed.add(i)
                yield from rec(done, placed)
                done.pop()
                placed.discard(i)

    yield from rec([], set())


def all_topological_orders(graph):
    yield from orders_from_preds([graph.preds(i) for i in range(graph.n_ops)])


def brute_force_peak(sizes_by_step):
    return max(sizes_by_step)


def train_chain(L=4, size=10, dur=1.0, sym=None, fw_dur=None, name="train_chain"):
    """f0..f{L-1} forward, then b{L-1}..b0 backward; b_i reads b_{i+1} and f_{i-1}.
    Buffers are ``sym`` (a size expression) or ``size`` bytes; forward op i takes
    ``fw_dur(i)`` (default ``dur``), backward ops ``dur``."""
    b = GraphBuilder(name)
    fw, bufs, prev = [], {}, None
    for i in range(L):
        o = b.add_op(f"f{i}", "op", operands=[prev] if prev is not None else [],
                     attrs={"duration": dur if fw_dur is None else fw_dur(i)})
        if prev is not None:
            b.add_buffer_user(bufs[prev], o)
        bufs[o] = b.add_buffer(o, sym or size)
        fw.append(o)
        prev = o
    g = prev
    for i in reversed(range(L)):
        ops = [g] + ([fw[i - 1]] if i > 0 else [])
        o = b.add_op(f"b{i}", "op", operands=ops, attrs={"duration": dur})
        for x in ops:
            b.add_buffer_user(bufs[x], o)
        bufs[o] = b.add_buffer(o, sym or size)
        g = o
    b.original_order = list(range(2 * L))
    return b.build()


# -- the captured XLA dumps (models/hlo) ---------------------------------------------------

HLO_MODELS = __import__("pathlib").Path(__file__).resolve().parents[1] / "models" / "hlo"
# the corpus captured with the newest jax, and the jax 0.10 capture kept as a second syntax
# corpus (older printing: get-tuple-elements as instructions of their own)
CORPORA = {"newest": HLO_MODELS / "corpus", "jax0.10": HLO_MODELS / "corpus-jax0.10"}
# the bundled dumps (models/hlo/*.hlo, plain text) and their jax 0.10 capture (gzipped)
BUNDLED = {"newest": HLO_MODELS, "jax0.10": HLO_MODELS / "corpus-jax0.10" / "bundled"}


def read_text(path) -> str:
    """A dump file's text, gzip-compressed (``.gz``) or not."""
    import gzip

    path = str(path)
    if path.endswith(".gz"):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return f.read()
    with open(path, encoding="utf-8") as f:
        return f.read()


def dump_stems(folder) -> list[str]:
    """The modules of a dump folder that have XLA's live-range file beside them, as
    ``NAME`` (plain) or ``NAME`` of ``NAME.hlo.gz`` (gzipped)."""
    from pathlib import Path

    folder = Path(folder)
    out = []
    for p in sorted(folder.glob("*.live-range.txt*")):
        stem, gz = p.name.split(".live-range.txt")[0], p.name.endswith(".gz")
        if (folder / (stem + (".hlo.gz" if gz else ".hlo"))).exists():
            out.append(stem)
    return out


def dump_file(folder, stem: str, kind: str):
    """``folder/stem.kind`` or ``folder/stem.kind.gz``, whichever exists."""
    from pathlib import Path

    plain = Path(folder) / f"{stem}.{kind}"
    return plain if plain.exists() else plain.with_name(plain.name + ".gz")


def random_topological_names(preds: dict[str, set[str]], rng: random.Random) -> list[str]:
    """A random order of the names in ``preds`` in which each name comes after all of its
    predecessors (``preds[name]``)."""
    users: dict[str, list[str]] = {n: [] for n in preds}
    for n, ps in preds.items():
        for q in ps:
            users[q].append(n)
    waiting = {n: len(ps) for n, ps in preds.items()}
    ready = [n for n, k in waiting.items() if k == 0]
    out = []
    while ready:
        n = ready.pop(rng.randrange(len(ready)))
        out.append(n)
        for u in users[n]:
            waiting[u] -= 1
            if waiting[u] == 0:
                ready.append(u)
    assert len(out) == len(preds), "the predecessors form a cycle"
    return out


def random_topological_order(comp, rng: random.Random) -> list[str]:
    """A random order of an HLO computation's instructions that respects operands and
    control predecessors."""
    return random_topological_names(
        {i.name: set(i.operands) | set(i.control_predecessors) for i in comp.instructions}, rng
    )


def pipeline_device_orders(pr) -> list[list[tuple]]:
    """Every order of each device's pipeline actions (F, B, W of its stages and microbatches)
    in which each stage's and microbatch's kinds come in the order F, B, W: an action needs
    the earlier kinds of its own stage and microbatch, on the same device, so every other
    order fails in ``replay`` and a brute force over these finds the same optimum (p=2, m=2:
    20 orders per device instead of 720)."""
    import itertools

    from cpsched.pipeline.schedule import Action

    out = []
    for d in range(pr.p):
        acts = [Action(k, s, j) for s in pr.stages_of(d) for j in range(pr.m) for k in pr.kinds]
        keep = []
        for o in itertools.permutations(acts):
            pos = {a: i for i, a in enumerate(o)}
            if all(
                pos[Action(k, a.stage, a.mb)] < pos[a]
                for a in o
                for k in pr.kinds[: pr.kinds.index(a.kind)]
            ):
                keep.append(o)
        out.append(keep)
    return out
