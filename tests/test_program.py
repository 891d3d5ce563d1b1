"""A graph read from HLO carries its module (``Graph.program``), so that every computation
of it is scheduled; graphs built any other way, and graphs derived from it, carry none."""

from __future__ import annotations

from pathlib import Path

import cpsched
from cpsched.core.transforms import convert_sync_collectives
from cpsched.generators import random_layered

HLO = Path(__file__).resolve().parents[1] / "models" / "hlo" / "demo.hlo"


def test_a_graph_read_from_hlo_carries_its_module():
    g = cpsched.read(str(HLO))
    assert g.program is not None
    assert g.program.entry.name == g.name or g.name in {c.name for c in g.program.computations}
    # the same from text in memory
    assert cpsched.read(HLO.read_text()).program is not None


def test_derived_and_generated_graphs_carry_no_program():
    g = cpsched.read(str(HLO))
    assert g.with_(name="renamed").program is None
    assert g.with_(name="renamed", program=g.program).program is g.program
    assert convert_sync_collectives(g).program is None
    assert random_layered(n=10).program is None


def test_the_module_is_what_a_module_schedule_uses():
    g = cpsched.read(str(HLO))
    r = cpsched.schedule(g, method="xla-list")
    assert r.graph.program is g.program
    assert "computations" in r.info  # scheduled as a module, not as the entry alone
