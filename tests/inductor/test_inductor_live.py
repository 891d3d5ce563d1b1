"""Against a live Inductor (the torch environment: ``make test-torch``; skipped elsewhere).

- the Inductor methods re-implemented on the IR give Inductor's own orders on programs of
  the corpus captured now with the installed torch;
- ``cpsched.inductor_order`` hands cpsched's order to Inductor: the order Inductor's
  scheduler ends with is cpsched's, Inductor's estimate of it is cpsched's peak, and the
  compiled program computes what eager mode computes (outputs and gradients).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip(
    "torch", reason="torch is not installed here: run `make test-torch` (its own .venv-torch)"
)

import cpsched  # noqa: E402
from cpsched.analysis.memory import simulate  # noqa: E402
from cpsched.api import scenarios_for  # noqa: E402
from cpsched.heuristics import inductor  # noqa: E402
from cpsched.readers.torch_frontend import capture_records, schedule_only  # noqa: E402
from cpsched.readers.torch_graph import (  # noqa: E402
    graph_from_torch_dict,
    inductor_estimate,
    pin_last_readers,
)

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "models" / "torch"))
import capture as corpus  # noqa: E402  (the corpus programs)


def _nodes(g, order):
    keep = {g.op_names[i] for i in range(g.n_ops) if g.opcodes[i] != "parameter"}
    return [g.op_names[i] for i in order if g.op_names[i] in keep]


@pytest.mark.parametrize("name", ["mlp_train", "unet_train", "gpt2_train", "gcn_train",
                                  "attention_train_dynamic_seq"])
def test_inductor_methods_give_inductors_orders_now(name):
    build, _, _ = corpus.PROGRAMS[name]
    module, inputs, options = build()
    for rec in capture_records(module, *inputs, **options):
        g = graph_from_torch_dict(rec)
        assert rec["torch_version"] == torch.__version__
        peak = simulate(g, g.original_order, scenarios_for(g)).peak[0]
        assert peak == rec["inductor"]["peak"], rec["part"]
        cands = {n: o for n, o, _ in inductor.portfolio(g)}
        for method in ("baseline", "lpmf", "bfs", "dfs"):
            assert _nodes(g, cands[method]) == rec["inductor"]["orders"][method], method
        assert _nodes(g, inductor.inductor_default(g)) == rec["inductor"]["order"]


class Net(torch.nn.Module):
    """Branches whose order matters for memory: a wide and a narrow path joined late."""

    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(64, 512), torch.nn.Linear(512, 64)
        self.c, self.d = torch.nn.Linear(64, 32), torch.nn.Linear(32, 64)

    def forward(self, x):
        wide = self.b(torch.relu(self.a(x)))
        narrow = self.d(torch.tanh(self.c(x)))
        return torch.softmax(wide * narrow + x, dim=-1)


def _check_handed_back(run, n_graphs):
    assert len(run.graphs) == n_graphs
    for h in run.graphs:
        assert h.final_order == h.order  # Inductor's scheduler ends with cpsched's order
        assert h.inductor_estimate_of_order == h.peak  # and estimates it as cpsched does
        assert h.peak <= h.inductor_peak
        assert h.status == "OPTIMAL" and h.bound == h.peak


def test_handed_back_order_runs_and_matches_eager_training():
    torch.manual_seed(0)
    model, x = Net(), torch.randn(16, 64)
    ref = model(x)
    ref.sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    with cpsched.inductor_order(time_limit=10) as run:
        out = torch.compile(model)(x)
        out.sum().backward()
    torch._dynamo.reset()
    torch.testing.assert_close(out, ref)
    for p, g in zip(model.parameters(), grads):
        torch.testing.assert_close(p.grad, g)
    _check_handed_back(run, 2)


@pytest.mark.parametrize("name", ["bert_train", "unet_train"])
def test_handed_back_order_on_corpus_programs(name):
    """Scheduler only (no kernels built): the order Inductor ends with is cpsched's."""
    build, _, _ = corpus.PROGRAMS[name]
    module, inputs, options = build()
    with cpsched.inductor_order(time_limit=10) as run:
        schedule_only(module, *inputs, **options)
    assert run.graphs
    for h in run.graphs:
        assert h.final_order == h.order
        assert h.inductor_estimate_of_order == h.peak <= h.inductor_peak
        assert inductor_estimate(h.record, h.order) == h.peak
    if name == "unet_train":  # GroupNorm statistics read whole and per group
        assert sum(h.pinned_inputs for h in run.graphs) >= 10


@pytest.mark.parametrize("method", ["inductor-dfs", "lhs", "cp"])
def test_inductor_estimates_every_handed_back_order_as_cpsched(method):
    """The U-Net's backward sizes some inputs by their last reader (Inductor's planning
    info): whatever order is handed back, Inductor's estimate of it is cpsched's peak."""
    build, _, _ = corpus.PROGRAMS["unet_train"]
    module, inputs, options = build()
    with cpsched.inductor_order(method, time_limit=5) as run:
        schedule_only(module, *inputs, **options)
    assert [h.final_order == h.order for h in run.graphs] == [True] * len(run.graphs)
    assert [h.inductor_estimate_of_order - h.peak for h in run.graphs] == [0] * len(run.graphs)


def _random_order(rec, rng):
    preds = {n["name"]: set(n.get("deps", [])) | set(n.get("preds", [])) for n in rec["nodes"]}
    users = {n: [] for n in preds}
    for n, ps in preds.items():
        for q in ps:
            users[q].append(n)
    waiting = {n: len(ps) for n, ps in preds.items()}
    ready, out = sorted(n for n, k in waiting.items() if k == 0), []
    while ready:
        out.append(ready.pop(rng.randrange(len(ready))))
        for u in users[out[-1]]:
            waiting[u] -= 1
            if not waiting[u]:
                ready.append(u)
    return out


def test_inductor_estimate_on_the_record_is_inductors_on_random_orders():
    """``inductor_estimate`` (no torch) against Inductor's ``prepare_planning_info`` +
    ``estimate_peak_memory`` on random orders of the U-Net's live graphs; and with the last
    readers pinned, the simulator's peak of the pinned graph against Inductor's too."""
    import random

    from torch._inductor import config, memory
    from torch._inductor.virtualized import V
    from torch.utils._ordered_set import OrderedSet

    from cpsched.readers.torch_frontend import SizeSymbols, snapshot

    rng = random.Random(0)
    checked = []

    def probe(nodes):
        sched = nodes[0].scheduler
        ins = OrderedSet(V.graph.graph_inputs.keys())
        outs = OrderedSet(V.graph.get_output_names())
        rec = snapshot(nodes, sched.name_to_buf, sched.name_to_fused_node, ins, outs,
                       SizeSymbols({}))
        rec.update(format="cpsched-torch-graph", version=1, name="probe")
        rec["inductor"]["order"] = rec["inductor"]["orders"]["baseline"]
        by_name = {n.get_name(): n for n in nodes}

        def torch_estimate(order):
            ordered = [by_name[x] for x in order]
            _, freeable = memory.prepare_planning_info(
                ordered, sched.name_to_buf, sched.name_to_fused_node, ins, outs)
            return int(memory.estimate_peak_memory(ordered, freeable, outs)[0])

        pinned, n = pin_last_readers(rec)
        g = graph_from_torch_dict(pinned)
        params = [i for i in range(g.n_ops) if g.opcodes[i] == "parameter"]
        for _ in range(10):
            order = _random_order(rec, rng)
            assert inductor_estimate(rec, order) == torch_estimate(order)
            order = _random_order(pinned, rng)
            ids = params + [g.op_index(x) for x in order]
            assert simulate(g, ids, scenarios_for(g)).peak[0] == torch_estimate(order)
        checked.append(n)
        torch_estimate(list(by_name))  # the planning info of the order Inductor goes on with
        return nodes

    build, _, _ = corpus.PROGRAMS["unet_train"]
    module, inputs, options = build()
    with config.patch(_post_fusion_custom_pass=probe):
        schedule_only(module, *inputs, **options)
    assert len(checked) == 2 and sum(checked) >= 10


SCRIPT = '''
import torch

def build():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
    return net, (torch.randn(4, 32),), {"training": True}

def broken():
    return 3
'''


def test_capture_command_writes_graphs_every_command_reads(tmp_path):
    import json
    import subprocess

    script = tmp_path / "model.py"
    script.write_text(SCRIPT)
    run = lambda *a: subprocess.run([sys.executable, "-m", "cpsched", *a],  # noqa: E731
                                    capture_output=True, text=True, cwd=tmp_path)
    r = run("capture", "--torch", f"{script}:build", "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    written = r.stdout.split()
    assert [Path(p).name for p in written] == ["build.forward.torch.json",
                                               "build.backward.torch.json"]
    # the time limit counts from the process's start: room for importing under load
    r = run("compare", written[1], "--json", "--time-limit", "30")
    assert r.returncode == 0, r.stderr
    rows = {row["method"]: row for row in json.loads(r.stdout)["rows"]}
    cp, ind = rows["cp-memory"]["peak_bytes"], rows["inductor-default"]["peak_bytes"]
    assert all(cp[s] <= ind[s] for s in cp)
    assert rows["given"]["peak_bytes"] == ind  # the stored order is what Inductor kept
    r = run("capture", "--torch", f"{script}:broken", "-o", str(tmp_path / "out"))
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0


def test_from_torch_program_saves_and_reads_back(tmp_path):
    from cpsched.readers import read_graph

    torch.manual_seed(0)
    block = corpus.AttentionBlock(d=32, heads=2)
    seq = torch.export.Dim("seq", min=8, max=256)
    prog = cpsched.from_torch(block, torch.randn(2, 64, 32), training=True,
                              dynamic_shapes={"x": {1: seq}}, name="block")
    assert prog.parts == ["forward", "backward"]
    fwd = prog["forward"]
    assert fwd.dims == ("seq",)
    sym = fwd.meta["torch"]["symbols"]["seq"]
    assert (sym["hint"], sym["min"], sym["max"]) == (64, 8, 256)
    for path, g in zip(prog.save(str(tmp_path)), prog):
        back = read_graph(path)
        assert back.op_names == g.op_names and back.buffer_sizes == g.buffer_sizes
        assert back.original_order == g.original_order
    # the stored order is Inductor's, at its own estimate (at the hint)
    for g, rec in zip(prog, prog.records):
        assert simulate(g, g.original_order, scenarios_for(g)).peak[0] == rec["inductor"]["peak"]
