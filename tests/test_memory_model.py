"""Edge cases of the simulator that random graphs miss (found by mutation testing)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from cpsched.analysis.memory import peak, positions, simulate
from cpsched.core.graph import GraphBuilder
from cpsched.core.scenarios import Scenarios


def test_one_op_one_buffer():
    b = GraphBuilder("one")
    b.add_op("a", "op", transient=3)
    b.add_buffer("a", 5, live_out=True)
    g = b.build()
    prof = simulate(g, [0])
    assert prof.usage.tolist() == [[8]]
    assert (prof.start.tolist(), prof.end.tolist()) == ([0], [0])


def test_empty_graph():
    g = GraphBuilder("empty").build()
    assert peak(g, []).tolist() == [0]
    assert simulate(g, []).peak_step.tolist() == [0]


def test_peak_op_and_step_per_scenario():
    # a (10*s) then b (100): the peak is at a when s is large, at b when s is small
    b = GraphBuilder("two")
    b.add_op("a", "op")
    b.add_op("b", "op")
    b.add_buffer("a", "10*s")
    b.add_buffer("b", 100)
    g = b.build()
    sc = Scenarios(("s=1", "s=50"), ("s",), np.array([[1], [50]]), np.array([0.5, 0.5]))
    prof = simulate(g, [0, 1], sc)
    assert prof.usage.tolist() == [[10, 100], [500, 100]]
    assert prof.peak_step.tolist() == [1, 0]
    assert prof.peak_op() == 1 and prof.peak_op(0) == 1 and prof.peak_op(1) == 0
    assert prof.peak_by_name() == {"s=1": 100, "s=50": 500}


def test_profiles_are_immutable_and_positions_invert_orders():
    b = GraphBuilder("c")
    b.add_op("a", "op")
    b.add_buffer("a", 1)
    prof = simulate(b.build(), [0])
    with pytest.raises(dataclasses.FrozenInstanceError):
        prof.usage = None
    assert positions([2, 0, 1], 3).tolist() == [1, 2, 0]
