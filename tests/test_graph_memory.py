import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from cpsched.core.errors import InputError, ScheduleError
from cpsched.core.graph import GraphBuilder, OpKind
from cpsched.analysis.memory import live_ranges, lower_bound, op_lower_bounds, peak, simulate
from cpsched.core.scenarios import from_dim_specs
from cpsched.analysis.schedule import make_schedule
from cpsched.analysis.validate import validate_order, validate_schedule

from helpers import all_topological_orders, chain_graph, random_dag


def naive_peak(graph, order, values=None):
    """Reference: re-derive the usage at every step from first principles."""
    pos = {op: t for t, op in enumerate(order)}
    n = len(order)
    usage = [0] * n
    for j in range(graph.n_buffers):
        size = graph.buffer_sizes[j].evaluate(values or {})
        if graph.buffer_space[j]:
            size = 0
        s = 0 if graph.buffer_live_in[j] else pos[int(graph.buffer_def[j])]
        users = [pos[int(u)] for u in graph.buffer_users(j)]
        e = n - 1 if graph.buffer_live_out[j] else max([pos[int(graph.buffer_def[j])]] + users)
        for t in range(s, e + 1):
            usage[t] += size
    for t, op in enumerate(order):
        usage[t] += graph.transient[op].evaluate(values or {})
    return max(usage)


def test_chain_peak_and_profile():
    g = chain_graph((10, 20, 30))
    prof = simulate(g, [0, 1, 2])
    # op1 holds its input (10) and output (20); op2 holds 20 + 30
    assert prof.usage.tolist() == [[10, 30, 50]]
    assert int(prof.peak[0]) == 50 and prof.peak_op(0) == 2


def test_live_in_out_transient_and_host_space():
    b = GraphBuilder("g")
    p = b.add_op("p", "parameter", OpKind.PARAMETER)
    x = b.add_op("x", "exp", operands=["p"], transient=7)
    y = b.add_op("y", "neg", operands=["x"])
    b.add_buffer(p, 100, users=["x"], live_in=True, live_out=True)
    b.add_buffer(x, 50, users=["y"])
    b.add_buffer(x, 1000, users=["y"], space=5)  # host memory: no device bytes
    b.add_buffer(y, 5, live_out=True)
    g = b.build()
    prof = simulate(g, [0, 1, 2])
    assert prof.usage.tolist() == [[100, 157, 155]]
    assert naive_peak(g, [0, 1, 2]) == 157


def test_symbolic_sizes_per_scenario():
    b = GraphBuilder("sym")
    a = b.add_op("a", "op")
    c = b.add_op("c", "op", operands=["a"])
    b.add_buffer(a, "4*b*s", users=["c"])
    b.add_buffer(c, "s + 100")
    g = b.build()
    sc = from_dim_specs(["b=2", "s=10,1000"])
    assert peak(g, [0, 1], sc).tolist() == [80 + 110, 8000 + 1100]
    assert g.dims == ("b", "s")


def test_builder_rejects_cycle_and_unknown():
    b = GraphBuilder("cyc")
    b.add_op("a", "op")
    b.add_op("c", "op", operands=["a"])
    b.add_operand("a", "c")
    with pytest.raises(InputError, match="cycle"):
        b.build()
    b2 = GraphBuilder("u")
    with pytest.raises(InputError, match="unknown op"):
        b2.add_op("x", "op", operands=["nope"])
    with pytest.raises(InputError, match="twice"):
        b2.add_op("y", "op")
        b2.add_op("y", "op")


def test_validator_rejects_each_kind_of_bad_order():
    b = GraphBuilder("v")
    p = b.add_op("p", "parameter", OpKind.PARAMETER)
    s = b.add_op("s", "all-reduce-start", OpKind.ASYNC_START, operands=["p"])
    c = b.add_op("c", "mul", operands=["p"])
    d = b.add_op("d", "all-reduce-done", OpKind.ASYNC_DONE)
    e = b.add_op("e", "add", operands=["c"], control_preds=["d"])
    b.pair_async(s, d)
    b.add_buffer(p, 4, users=["s", "c"], live_in=True)
    b.add_buffer(s, 4, users=["d"])
    b.add_buffer(c, 4, users=["e"])
    g = b.build()
    validate_order(g, [0, 1, 2, 3, 4])
    validate_order(g, [0, 2, 1, 3, 4])
    with pytest.raises(ScheduleError, match="has 4 ops"):
        validate_order(g, [0, 1, 2, 3])
    with pytest.raises(ScheduleError, match="repeats"):
        validate_order(g, [0, 1, 2, 3, 3])
    with pytest.raises(ScheduleError, match="outside"):
        validate_order(g, [0, 1, 2, 3, 9])
    with pytest.raises(ScheduleError, match="dependence"):
        validate_order(g, [2, 0, 1, 3, 4])          # data dependence
    with pytest.raises(ScheduleError, match="dependence"):
        validate_order(g, [0, 1, 2, 4, 3])          # control dependence
    with pytest.raises(ScheduleError, match="async start after its done"):
        validate_order(g, [0, 3, 2, 1, 4])
    with pytest.raises(ScheduleError, match="claims peak"):
        validate_schedule(g, [0, 1, 2, 3, 4], make_schedule(g, [0, 1, 2, 3, 4], "t").scenarios,
                          claimed_peak=[1])


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 40), st.integers(0, 10_000))
def test_simulator_matches_reference_on_random_dags(n, seed):
    g = random_dag(n, seed)
    order = g.topological_order()
    assert int(peak(g, order)[0]) == naive_peak(g, order)
    rng = np.random.default_rng(seed)
    # a random topological order (random priorities in Kahn's algorithm)
    prio = rng.permutation(n)
    indeg = np.diff(g.pred_ptr).copy()
    ready = [i for i in range(n) if indeg[i] == 0]
    out = []
    while ready:
        ready.sort(key=lambda i: prio[i])
        i = ready.pop(0)
        out.append(i)
        for s in g.succs(i):
            indeg[s] -= 1
            if indeg[s] == 0:
                ready.append(int(s))
    validate_order(g, out)
    assert int(peak(g, out)[0]) == naive_peak(g, out)


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 8), st.integers(0, 10_000))
def test_lower_bound_is_valid_and_tight_per_op(n, seed):
    g = random_dag(n, seed, p=0.4)
    best = min(int(peak(g, o)[0]) for o in all_topological_orders(g))
    for crossing in (True, False):
        assert int(lower_bound(g, crossing=crossing)[0]) <= best
    # per-op bound: in every order the usage at v's step is at least the bound for v
    per_op = op_lower_bounds(g)[0]
    for o in all_topological_orders(g):
        prof = simulate(g, o)
        for t, v in enumerate(o):
            assert prof.usage[0, t] >= per_op[v]


def test_schedule_object():
    g = chain_graph((5, 6))
    s = make_schedule(g, [0, 1], "given")
    assert s.peak_by_name() == {"static": 11}
    assert s.order_names() == ["op0", "op1"]
    assert 0.0 <= s.gap()["static"] <= 1.0
    with pytest.raises(ScheduleError):
        make_schedule(g, [1, 0], "bad")
