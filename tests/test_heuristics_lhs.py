"""Latency-hiding scheduler: the upstream LHS test assertions on the saved HLO modules,
sync-collective splitting, overlap limits, the memory limit and pluggable costs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cpsched.core.graph import Collective, GraphBuilder, OpKind
from cpsched.core.transforms import convert_sync_collectives, pair_names
from cpsched.heuristics.lhs import (HIGH_LATENCY, approximate_cost, called_resources_from_module,
                                    lhs, lhs_schedule)
from cpsched.analysis.memory import peak
from cpsched.methods import load_all
from cpsched.core.symbolic import SymExpr
from cpsched.analysis.validate import validate_order

XLA_CASES = Path(__file__).resolve().parents[1].parent / "shared" / "peer-cases" / "xla"
# LatencyHidingSchedulerTest's SchedulerConfig: collective_permute_overlap_limit = 5,
# send_recv_overlap_limit = INT32_MAX, everything else 1.
LHS_TEST_LIMITS = {"collective-permute": 5, "send-recv": 2**31 - 1}


def names(g, order):
    return [g.op_names[i] for i in order]


def pos(g, order):
    return {g.op_names[i]: k for k, i in enumerate(order)}


def find(g, order, opcode_suffix, op_name):
    """Position of the op whose opcode ends with ``opcode_suffix`` and whose metadata
    op_name is ``op_name`` (how the upstream tests look ops up)."""
    for k, i in enumerate(order):
        if g.opcodes[i].endswith(opcode_suffix) and g.attrs(i).get("op_name") == op_name:
            return k
    raise KeyError((opcode_suffix, op_name))


def read_case(name):
    if not XLA_CASES.is_dir():
        pytest.skip("shared peer cases are not next to the checkout")
    hlo = pytest.importorskip("cpsched.readers.hlo.convert")
    path = XLA_CASES / f"latency_hiding_scheduler_test__{name}.hlo"
    return hlo, path


def run_case(name, limits=LHS_TEST_LIMITS, **options):
    hlo, path = read_case(name)
    g0 = hlo.read_hlo_graph(str(path))
    g = convert_sync_collectives(g0)         # what AsyncCollectiveCreator does first
    order, stats = lhs_schedule(g, overlap_limit=limits, **options)
    validate_order(g, order)
    assert stats["forced"] == 0
    return g0, g, order


def test_all_gather_async_simple():
    _, g, order = run_case("AllGatherAsyncSimple")
    assert find(g, order, "all-gather-done", "ag0") == pos(g, order)["a2"] - 1


def test_all_gather_async_balance():
    _, g, order = run_case("AllGatherAsyncBalance")
    p = pos(g, order)
    for ag, conv in (("ag0", "c0"), ("ag1", "c1")):
        start = find(g, order, "all-gather-start", ag)
        assert start < p[conv] < find(g, order, "all-gather-done", ag)


def test_two_collective_permute_types_overlap():
    g0, g, order = run_case("TwoCollectivePermuteTypesOverlap")
    assert len(order) == g0.n_ops + 6
    p = pos(g, order)
    for cp, conv in (("cp0", "c0"), ("cp2", "c0"), ("cp4", "c0"),
                     ("cp1", "c1"), ("cp3", "c1"), ("cp5", "c1")):
        start = find(g, order, "collective-permute-start", cp)
        done = find(g, order, "collective-permute-done", cp)
        assert start < p[conv] < done, cp


def test_existing_single_collective_permute_async():
    g0, g, order = run_case("ExistingSingleCollectivePermuteAsyncTest")
    assert g is g0                            # already async: nothing to split
    p = pos(g, order)
    assert find(g, order, "collective-permute-start", "cp0") < p["c0"]
    assert p["c0"] <= find(g, order, "collective-permute-done", "cp0")


def test_all_to_all_async_balance():
    _, g, order = run_case("AllToAllAsyncBalance")
    p = pos(g, order)
    assert find(g, order, "async-start", "ata0") < p["c0"] < find(g, order, "async-done", "ata0")
    assert find(g, order, "async-start", "ata1") < p["c1"] < find(g, order, "async-done", "ata1")


@pytest.mark.parametrize("limit,start_after_while", [(2, True), (3, False)])
def test_while_overlap_limit(limit, start_after_while):
    hlo, path = read_case("WhileOverlapLimit")
    module = hlo.read_hlo_module(str(path))
    called = called_resources_from_module(hlo.module_graphs(module))
    assert called["while_body"] == {"collective-permute": 2}
    _, g, order = run_case("WhileOverlapLimit", limits={"collective-permute": limit},
                           called_resources=called)
    start, _ = pair_names(g, "collective-permute.3")
    p = pos(g, order)
    assert (p[start] > p["while"]) == start_after_while


def test_while_loop_aliasing_bug():
    # XLA's WhileLoopAliasingBug: the body's result at index 0 is written over the loop
    # state's buffer that add0 still reads (through the bitcast), so the start of
    # collective-permute.2 may not be hoisted above add0.
    hlo, path = read_case("WhileLoopAliasingBug")
    body = hlo.module_graphs(hlo.read_hlo_module(str(path)))["while_body"]
    assert ("add0", "collective-permute.2") in body.meta["alias_order_edges"]
    g = convert_sync_collectives(body)
    order, stats = lhs_schedule(g, overlap_limit=LHS_TEST_LIMITS)
    validate_order(g, order)
    start, done = pair_names(g, "collective-permute.2")
    p = pos(g, order)
    assert p["add0"] < p[start] < p[done]
    # the overlap itself survives: negate still runs while the transfer is in flight
    assert p[start] < p["negate"] < p[done]


def test_while_overlap_needs_the_called_resources():
    # without telling the scheduler what the body holds, the limit cannot bite
    _, g, order = run_case("WhileOverlapLimit", limits={"collective-permute": 2})
    start, _ = pair_names(g, "collective-permute.3")
    p = pos(g, order)
    assert p[start] < p["while"]


# -- convert_sync_collectives ------------------------------------------------------------------

def sync_graph():
    b = GraphBuilder("sync")
    b.add_op("p", "parameter", OpKind.PARAMETER)
    b.add_op("x", "fusion", operands=["p"], attrs={"fusion_kind": "kLoop", "op_name": "x"})
    b.add_op("ar", "all-reduce", operands=["x"], attrs={"op_name": "grad"})
    b.add_op("ata", "all-to-all", operands=["x"])
    b.add_op("y", "add", operands=["ar", "ata"], control_preds=["x"])
    b.set_collective("ar", Collective("all-reduce", SymExpr.parse("4*s"), 8))
    b.add_buffer("p", 16, users=["x"], live_in=True, live_out=True)
    b.add_buffer("x", "4*s", users=["ar", "ata"])
    b.add_buffer("ar", "4*s", users=["y"])
    b.add_buffer("ata", "4*s", users=["y"])
    b.add_buffer("y", "4*s", live_out=True)
    b.original_order = [0, 1, 2, 3, 4]
    return b.build()


def test_convert_sync_collectives_splits_into_pairs():
    g0 = sync_graph()
    g = convert_sync_collectives(g0)
    # one more buffer: the all-to-all's async-start state (tuple table 16 B + operand
    # tuple 8 B, as XLA's async form allocates them); an all-reduce-start has none
    assert g.n_ops == g0.n_ops + 2 and g.n_buffers == g0.n_buffers + 1
    js = g.buffer_names.index("ata.async_state")
    assert str(g.buffer_sizes[js]) == "24"
    s, d = pair_names(g, "ar")
    si, di = g.op_index(s), g.op_index(d)
    assert g.kind(si) == OpKind.ASYNC_START and g.kind(di) == OpKind.ASYNC_DONE
    assert g.opcodes[si] == "all-reduce-start" and g.opcodes[di] == "all-reduce-done"
    assert int(g.async_done[si]) == di and int(g.async_start[di]) == si
    assert g.attrs(si)["op_name"] == "grad" and g.collectives[si].kind == "all-reduce"
    assert not g.collectives[si].is_sync
    s2, d2 = pair_names(g, "ata")
    assert g.opcodes[g.op_index(s2)] == "async-start"
    assert g.attrs(g.op_index(s2))["async_wrapped_opcode"] == "all-to-all"
    # the in-flight buffer: defined by the start, used by the done and the old users
    j = g.buffer_names.index("ar")
    assert int(g.buffer_def[j]) == si
    assert set(names(g, g.buffer_users(j))) == {d, "y"}
    # the input stays live until the done
    jx = g.buffer_names.index("x")
    assert {s, d, s2, d2} <= set(names(g, g.buffer_users(jx)))
    # input order: start, done at the op's position
    assert names(g, g.original_order) == ["p", "x", s, d, s2, d2, "y"]
    # y still depends on the dones
    assert set(names(g, g.preds(g.op_index("y")))) >= {d, d2, "x"}
    from cpsched.core.scenarios import from_dim_specs
    validate_order(g, lhs(g, from_dim_specs(["s=8,64"])))
    assert convert_sync_collectives(g) is g


def test_convert_keeps_peak_of_the_same_order():
    g0 = sync_graph()
    g = convert_sync_collectives(g0, keep_inputs_live=False)
    from cpsched.core.scenarios import from_dim_specs
    sc = from_dim_specs(["s=8,64"])
    # the same order: the same peak plus the all-to-all's 24 B of async state in flight
    assert list(peak(g, g.original_order, sc)) == [
        int(v) + 24 for v in peak(g0, g0.original_order, sc)]


# -- resources, memory and costs on hand-built graphs -----------------------------------------

def overlap_graph(n_coll=4, kind="all-gather"):
    """A chain of convolutions and ``n_coll`` independent collectives whose results meet
    at the end: the LHS should hide each transfer behind a convolution."""
    b = GraphBuilder("ov")
    b.add_op("p", "parameter", OpKind.PARAMETER)
    prev = "p"
    for k in range(n_coll):
        b.add_op(f"c{k}", "convolution", operands=[prev])
        prev = f"c{k}"
    for k in range(n_coll):
        b.add_op(f"s{k}", f"{kind}-start", OpKind.ASYNC_START, operands=["p"])
        b.add_op(f"d{k}", f"{kind}-done", OpKind.ASYNC_DONE, operands=[f"s{k}"])
        b.pair_async(f"s{k}", f"d{k}")
        b.set_collective(f"s{k}", Collective(kind, SymExpr.const(64), 2))
    b.add_op("out", "tuple", OpKind.ALIAS, operands=[prev] + [f"d{k}" for k in range(n_coll)])
    b.add_buffer("p", 64, users=["c0"] + [f"s{k}" for k in range(n_coll)]
                 + [f"d{k}" for k in range(n_coll)], live_in=True, live_out=True)
    for k in range(n_coll):
        b.add_buffer(f"c{k}", 64, users=[f"c{k + 1}" if k + 1 < n_coll else "out"],
                     live_out=k + 1 == n_coll)
        b.add_buffer(f"s{k}", 64, users=[f"d{k}", "out"], live_out=True)
    return b.build()


def max_in_flight(g, order, kind):
    p = {i: k for k, i in enumerate(order)}
    events = []
    for s in range(g.n_ops):
        d = int(g.async_done[s])
        if d >= 0 and g.collectives.get(s) and g.collectives[s].kind == kind:
            events.append((p[s], 1))
            events.append((p[d], -1))
    cur = best = 0
    for _, e in sorted(events, key=lambda x: (x[0], x[1])):
        cur += e
        best = max(best, cur)
    return best


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_overlap_limit_is_respected_and_used(limit):
    g = overlap_graph(4)
    order, stats = lhs_schedule(g, overlap_limit=limit)
    validate_order(g, order)
    assert stats["forced"] == 0
    assert max_in_flight(g, order, "all-gather") == limit
    # per-kind limits: another kind's limit does not apply
    order2, _ = lhs_schedule(g, overlap_limit={"collective-permute": 4, "default": limit})
    assert max_in_flight(g, order2, "all-gather") == limit


def test_each_transfer_hides_behind_a_convolution():
    g = overlap_graph(4)
    order = lhs(g)
    p = pos(g, order)
    convs = sorted(p[f"c{k}"] for k in range(4))
    for k in range(4):
        inside = [c for c in convs if p[f"s{k}"] < c < p[f"d{k}"]]
        assert len(inside) == 1


def test_latency_fn_and_cost_fn_change_the_overlap():
    g = overlap_graph(1)
    conv_cost = {g.op_index(f"c{k}"): 5000.0 for k in range(1)}
    text = ["p", "c0", "s0", "d0", "out"]
    # a 1-unit transfer needs no hiding: the input order stands, start next to done
    order = lhs(g, order=text, cost_fn=lambda i: conv_cost.get(i, 1.0),
                latency_fn=lambda s, d: 1.0)
    validate_order(g, order)
    assert names(g, order) == text
    # a long transfer is hidden behind the convolution
    order = lhs(g, order=text, cost_fn=lambda i: conv_cost.get(i, 1.0),
                latency_fn=lambda s, d: HIGH_LATENCY)
    p = pos(g, order)
    assert p["s0"] < p["c0"] < p["d0"]


def test_approximate_costs():
    b = GraphBuilder("c")
    b.add_op("a", "fusion", attrs={"fusion_kind": "kLoop"})
    b.add_op("b", "fusion", attrs={"fusion_kind": "kOutput"})
    b.add_op("c", "convolution")
    b.add_op("d", "add")
    g = b.build()
    assert [approximate_cost(g, i) for i in range(4)] == [1000.0, 5000.0, 5000.0, 1.0]


def test_device_cost_model_option():
    g = overlap_graph(2)
    for dev in ("xla-approx", "h100"):
        order = lhs(g, device=dev)
        validate_order(g, order)
    # the xla-approx device reproduces the built-in estimator
    assert lhs(g, device="xla-approx") == lhs(g)


def fan_graph(k=6):
    """k independent (big -> small) pairs, the input order computes every big first."""
    b = GraphBuilder("fan")
    b.add_op("p", "parameter", OpKind.PARAMETER)
    for j in range(k):
        b.add_op(f"x{j}", "add", operands=["p"])
    for j in range(k):
        b.add_op(f"r{j}", "reduce", operands=[f"x{j}"])
    b.add_op("out", "tuple", OpKind.ALIAS, operands=[f"r{j}" for j in range(k)])
    b.add_buffer("p", 8, users=[f"x{j}" for j in range(k)], live_in=True, live_out=True)
    for j in range(k):
        b.add_buffer(f"x{j}", 1000, users=[f"r{j}"])
        b.add_buffer(f"r{j}", 1, users=["out"], live_out=True)
    b.original_order = list(range(2 * k + 2))
    return b.build()


def test_memory_limit_lowers_the_peak():
    g = fan_graph(6)
    free, st0 = lhs_schedule(g)
    assert names(g, free) == names(g, g.original_order)      # no pressure: input order kept
    assert int(peak(g, free)[0]) >= 6000
    tight, st1 = lhs_schedule(g, memory_limit=2500)
    validate_order(g, tight)
    assert int(peak(g, tight)[0]) <= 2100
    assert st1["peak"] < st0["peak"]


def test_rerun_shrinks_the_limit_while_the_peak_exceeds_it():
    g = fan_graph(6)
    _, st = lhs_schedule(g, memory_limit=500, rerun=3)
    assert st["runs"] == 4 and st["memory_limit"] == pytest.approx(500 * 0.9 ** 3)
    _, st = lhs_schedule(g, memory_limit=10_000, rerun=3)
    assert st["runs"] == 1


# -- random graphs ------------------------------------------------------------------------------

def random_async_graph(n, seed, p=0.25, share=0.3, kinds=("all-reduce", "all-gather",
                                                          "collective-permute")):
    rng = np.random.default_rng(seed)
    b = GraphBuilder(f"lhs{n}_{seed}")
    outs = []
    for k in range(n):
        srcs = [outs[j] for j in range(len(outs)) if rng.random() < p]
        if srcs and rng.random() < share:
            kind = kinds[int(rng.integers(len(kinds)))]
            s = b.add_op(f"s{k}", f"{kind}-start", OpKind.ASYNC_START,
                         operands=[o for o, _ in srcs])
            d = b.add_op(f"d{k}", f"{kind}-done", OpKind.ASYNC_DONE, operands=[s])
            b.pair_async(s, d)
            b.set_collective(s, Collective(kind, SymExpr.const(64), 2))
            for _, buf in srcs:
                b.add_buffer_user(buf, s)
            outs.append((f"d{k}", b.add_buffer(s, int(rng.integers(1, 50)), users=[d])))
        else:
            opc = ["add", "convolution", "fusion"][int(rng.integers(3))]
            i = b.add_op(f"v{k}", opc, operands=[o for o, _ in srcs],
                         attrs={"fusion_kind": "kLoop"} if opc == "fusion" else None)
            for _, buf in srcs:
                b.add_buffer_user(buf, i)
            outs.append((f"v{k}", b.add_buffer(i, int(rng.integers(1, 50)))))
    if outs:
        b.set_live_out(outs[-1][1])
    return b.build()


# Share of the random examples below in which the limit must bind (the unlimited schedule
# exceeds it); measured 29 of 60. The old hypothesis version bound in 6 of 50 examples.
MIN_BINDING = 20


def test_lhs_orders_are_valid_and_respect_limits():
    import random
    rng = random.Random(0)
    binding = 0
    for _ in range(60):
        n, seed, limit = rng.randint(10, 40), rng.randint(0, 100_000), rng.randint(1, 3)
        aggressive, mem = rng.random() < 0.5, rng.choice([None, 50, 400])
        g = random_async_graph(n, seed, p=0.12, share=0.5)
        free, _ = lhs_schedule(g, overlap_limit=100, aggressive=aggressive, memory_limit=mem)
        order, stats = lhs_schedule(g, overlap_limit=limit, aggressive=aggressive,
                                    memory_limit=mem)
        validate_order(g, order)
        assert stats["forced"] == 0
        kinds = ("all-reduce", "all-gather", "collective-permute")
        for kind in kinds:
            assert max_in_flight(g, order, kind) <= limit
        binding += any(max_in_flight(g, free, kind) > limit for kind in kinds)
    assert binding >= MIN_BINDING, binding


def test_lhs_on_every_xla_peer_case():
    if not XLA_CASES.is_dir():
        pytest.skip("shared peer cases are not next to the checkout")
    hlo = pytest.importorskip("cpsched.readers.hlo.convert")
    for path in sorted(XLA_CASES.glob("*.hlo")):
        g = convert_sync_collectives(hlo.read_hlo_graph(str(path)))
        validate_order(g, lhs(g))
        validate_order(g, lhs(g, aggressive=True, memory_limit=1 << 20))


def test_method_is_registered():
    m = load_all()["lhs"]
    assert m.family == "overlap"
    g = overlap_graph(2)
    assert m.fn(g, None, unknown_option=True) == lhs(g)


# -- GPU pipeline cases: memory scheduler + post-processor, then the LHS with GPU costs ---------

def gpu_pipeline(g, **options):
    """``ScheduleGpuModule`` with LHS on: the post-processed memory schedule is the LHS
    input order; costs from XLA's GpuLatencyEstimator (the ``xla-gpu-approx`` device)."""
    from cpsched.heuristics.gpu_postprocess import gpu_postprocess
    base = gpu_postprocess(g)
    order, stats = lhs_schedule(g, order=base, device="xla-gpu-approx", **options)
    validate_order(g, order)
    assert stats["forced"] == 0
    return order


def read_gpu_case(name):
    if not XLA_CASES.is_dir():
        pytest.skip("shared peer cases are not next to the checkout")
    hlo = pytest.importorskip("cpsched.readers.hlo.convert")
    return hlo, XLA_CASES / f"gpu_hlo_schedule_test__{name}.hlo"


def test_lhs_cost_model_costly_ar_packs_seven_gemms():
    hlo, path = read_gpu_case("LHSCostModelCostlyAR")
    g = hlo.read_hlo_graph(str(path))
    ops = [g.opcodes[i] for i in gpu_pipeline(g)]
    assert ops.count("all-reduce-start") == ops.count("all-reduce-done") == 1
    s, d = ops.index("all-reduce-start"), ops.index("all-reduce-done")
    assert ops[s + 1:d].count("custom-call") == 7


def test_lhs_send_recv_in_while_body():
    hlo, path = read_gpu_case("LHSSendRecv")
    g = hlo.module_graphs(hlo.read_hlo_module(str(path)))["while_body"]
    order = gpu_pipeline(g, overlap_limit={"send-recv": 2**31 - 1})
    p = pos(g, order)
    assert p["recv"] < p["send"] < p["recv-done"]
    assert p["send-done"] - p["recv-done"] >= 8
    assert abs(p["send-done"] - p["result"]) < 2


def test_copy_start_done_scheduled():
    hlo, path = read_gpu_case("CopyStartDoneScheduled")
    g = hlo.read_hlo_graph(str(path))
    p = pos(g, gpu_pipeline(g))
    chain = [p[n] for n in ("copy-start.3", "tanh.14", "tanh.15", "reduce-precision.2",
                            "copy-done.3")]
    assert chain == sorted(chain)
