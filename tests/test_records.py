"""Result.record: every family's figures as a typed record, whose JSON view is exactly what
the method reported (keys, values and their order), with no key left untyped."""

import json
from pathlib import Path

import pytest

from cpsched.analysis.records import (
    JointRecord,
    MinPeakRecord,
    ModuleRecord,
    OverlapRecord,
    Record,
    RematHeuristicRecord,
    RematRecord,
    record_for,
)
from cpsched.api import read, schedule, simulate
from cpsched.generators import random_layered

DEMO = Path(__file__).resolve().parents[1] / "models" / "hlo" / "demo.hlo"
FAST = dict(time_limit=1, workers=1, deterministic=True)


def _reported(r) -> dict:
    """What the method reported, as api recorded it before typing (the schedule written
    carries it; a remat plan carries its own)."""
    return dict(r.schedule.info) if r.schedule is not None else dict(r.plan.info)


@pytest.fixture(scope="module")
def layered():
    return random_layered(n=14, seed=5)


@pytest.mark.parametrize(
    "method, kind",
    [("cp", MinPeakRecord), ("xla-dfs", Record), ("bladedisc", Record)],
)
def test_order_methods_give_their_record_and_the_same_view(layered, method, kind):
    r = schedule(layered, method, **FAST)
    assert type(r.record) is kind
    assert r.record.extra == {}  # every reported key has a typed field
    view = dict(r.info)
    assert view == _reported(r) and list(view) == list(_reported(r))
    assert json.dumps(r.record.to_dict()) == json.dumps(view)


def test_cp_fields_are_typed_and_the_json_keys_are_kept(layered):
    r = schedule(layered, "cp", objective="minimax", **FAST)
    rec = r.record
    assert isinstance(rec, MinPeakRecord)
    # one meaning per name: the scenario weighting is a field, "objective" stays its key
    assert rec.scenario_weighting == "minimax" and r.info["objective"] == "minimax"
    assert rec.seed == 0 and rec.phases and rec.baselines


def test_remat_records():
    g = random_layered(n=12, seed=3)  # 90 % of its input order's peak has a plan
    for method, budget, kind in (
        ("remat-span", "100%", RematHeuristicRecord),
        ("cp-remat", "90%", RematRecord),
    ):
        r = schedule(g, method, budget=budget, time_limit=5, workers=1, deterministic=True)
        assert type(r.record) is kind, method
        assert r.record.extra == {}, (method, dict(r.record.extra))
        reported = dict(_reported(r), budget_reference=r.record.budget_reference)
        assert dict(r.info) == reported and list(r.info) == list(reported)
    assert r.record.proven_min_bytes["static"] <= r.budget["static"]


def test_cp_joint_record(layered):
    peak = schedule(layered, "xla-dfs").peak["static"]
    r = schedule(layered, "cp-joint", budget=peak, **FAST)
    rec = r.record
    assert isinstance(rec, JointRecord) and rec.extra == {}
    assert rec.objective == "time" and set(rec.makespan) == {"static"}
    assert r.info["scenario_objective"] == rec.scenario_weighting
    assert list(r.info) == list(_reported(r))


def test_cp_overlap_record_on_a_module_with_collectives():
    r = schedule(read(str(DEMO)), "cp-overlap", **FAST)
    rec = r.record
    assert isinstance(rec, OverlapRecord), type(rec)
    assert rec.extra == {}, dict(rec.extra)
    assert rec.objective == "makespan" and rec.unit and set(rec.makespan) == set(r.peak)
    # read from HLO: the module's figures are a typed part of the record
    assert isinstance(rec.module, ModuleRecord) and rec.module.computations
    assert rec.module.kept_input_orders is not None
    assert list(r.info)[-1] == "kept_input_orders" and "computations" in r.info


def test_simulate_and_a_percentage_budget_give_the_shared_fields(layered):
    r = simulate(layered)
    assert type(r.record) is Record and r.record.extra == {}
    r = schedule(layered, "xla-dfs", budget="100%")
    ref = r.record.budget_reference
    assert ref["budget"] == "100%" and r.info["budget_reference"] is ref


def test_info_is_a_read_only_view(layered):
    r = schedule(layered, "cp", **FAST)
    with pytest.raises(TypeError):
        r.info["objective"] = "x"  # type: ignore[index]


def test_an_unknown_key_is_kept_in_its_place():
    info = {"objective": "weighted", "new_figure": 3, "message": "m"}
    rec = record_for("cp", "solver", info)
    assert rec.extra == {"new_figure": 3} and rec.message == "m"
    assert list(rec.to_dict().items()) == list(info.items())
    assert rec.get("absent") is None and "absent" not in rec
