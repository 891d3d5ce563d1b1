"""The validator's every refusal, with the exact one-line reason a user sees."""

from __future__ import annotations

import numpy as np
import pytest

from cpsched.analysis.validate import validate_order, validate_schedule
from cpsched.core.errors import ScheduleError
from cpsched.core.graph import GraphBuilder, OpKind
from cpsched.core.scenarios import Scenarios, static


def three_free_ops():
    """a, b, c with no dependences: every permutation is valid."""
    b = GraphBuilder("free3")
    for name in "abc":
        b.add_op(name, "op")
        b.add_buffer(name, 1)
    return b.build()


def chain_and_async():
    b = GraphBuilder("g")
    b.add_op("x", "op")
    b.add_op("y", "op", operands=["x"])
    b.add_op("s", "all-gather-start", kind=OpKind.ASYNC_START)
    b.add_op("d", "all-gather-done", kind=OpKind.ASYNC_DONE)
    b.pair_async("s", "d")
    b.add_buffer("x", 3, users=["y"])
    b.add_buffer("y", 5, live_out=True)
    return b.build()


def test_every_permutation_of_independent_ops_is_valid():
    g = three_free_ops()
    for order in ([0, 1, 2], [2, 1, 0], [1, 0, 2], (2, 0, 1), np.array([1, 2, 0])):
        validate_order(g, order)


@pytest.mark.parametrize("order,msg", [
    ([0, 1], "schedule of free3 has 2 ops, the graph has 3"),
    ([0, 1, 2, 0], "schedule of free3 has 4 ops, the graph has 3"),
    ([0, 1, 3], "schedule of free3 names op index outside 0..2"),
    ([-1, 0, 1], "schedule of free3 names op index outside 0..2"),
    ([0, 2, 2], "schedule of free3 repeats an op and misses 'b'"),
    ([1, 1, 0], "schedule of free3 repeats an op and misses 'c'"),
    ([2, 2, 2], "schedule of free3 repeats an op and misses 'a'"),
])
def test_bad_permutations_are_refused_with_their_reason(order, msg):
    with pytest.raises(ScheduleError) as e:
        validate_order(three_free_ops(), order)
    assert str(e.value) == msg


def test_the_caller_names_what_is_checked():
    with pytest.raises(ScheduleError, match="^the input's own schedule of free3 has 1 ops"):
        validate_order(three_free_ops(), [0], what="the input's own schedule")


def test_a_broken_dependence_names_both_ops_and_steps():
    g = chain_and_async()
    validate_order(g, [0, 1, 2, 3])
    validate_order(g, [2, 0, 3, 1])
    with pytest.raises(ScheduleError) as e:
        validate_order(g, [1, 0, 2, 3])
    assert str(e.value) == "schedule of g breaks a dependence: 'y' (step 0) comes before 'x' (step 1)"
    with pytest.raises(ScheduleError) as e:
        validate_order(g, [0, 1, 3, 2], what="lhs schedule")
    assert str(e.value) == ("lhs schedule of g breaks an async start after its done: 'd' "
                            "(step 2) comes before 's' (step 3)")


def test_empty_graph_and_empty_order():
    g = GraphBuilder("empty").build()
    validate_order(g, [])
    assert validate_schedule(g, [], static()).tolist() == [0]


def test_validate_schedule_returns_the_simulated_peak_and_checks_claims():
    g = chain_and_async()
    sc = Scenarios(("one", "two"), ("s",), np.array([[1], [2]]), np.array([0.5, 0.5]))
    assert validate_schedule(g, [0, 1, 2, 3], sc).tolist() == [8, 8]
    assert validate_schedule(g, [0, 1, 2, 3], sc, [8, 8]).tolist() == [8, 8]
    assert validate_schedule(g, [0, 1, 2, 3], sc, {"two": 8, "one": 8}).tolist() == [8, 8]
    with pytest.raises(ScheduleError) as e:
        validate_schedule(g, [0, 1, 2, 3], sc, [8, 9])
    assert str(e.value) == ("schedule of g claims peak 9 B in scenario two, the "
                            "simulator finds 8 B")
    with pytest.raises(ScheduleError, match="^cp schedule of g claims peak 7 B in scenario one"):
        validate_schedule(g, [0, 1, 2, 3], sc, {"one": 7, "two": 8}, what="cp schedule")
    # an invalid order is refused before any claim is looked at
    with pytest.raises(ScheduleError, match="breaks a dependence"):
        validate_schedule(g, [1, 0, 2, 3], sc, [8, 8])
