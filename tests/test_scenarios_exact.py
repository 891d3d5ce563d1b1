"""Scenarios and budgets, value by value (written against survivors of mutation testing)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from cpsched.core.errors import InputError
from cpsched.core.scenarios import (Budget, Scenarios, buckets_from_lengths, from_dim_specs,
                                    from_json, parse_budget, pick_bucket, resolve_budget,
                                    static)


def two():
    return Scenarios(("a", "b"), ("s", "t"), [[1, 2], [3, 4]], [1, 3])


def test_fields_are_converted_and_frozen():
    sc = two()
    assert sc.values.dtype == np.int64 and sc.values.shape == (2, 2)
    assert sc.weights.dtype == np.float64 and sc.weights.tolist() == [1.0, 3.0]
    assert sc.lower is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        sc.names = ()
    low = Scenarios(("a",), ("s",), [[8]], [1.0], lower=[[5]])
    assert low.lower.dtype == np.int64 and low.lower.shape == (1, 1)


def test_only_as_dicts_box_to_json():
    sc = Scenarios(("a", "b"), ("s",), [[4], [16]], [0.25, 0.75], lower=[[1], [5]])
    three = Scenarios(("a", "b", "c"), ("s",), [[4], [16], [32]], [1, 1, 1],
                      lower=[[1], [5], [17]])
    assert three.only(0).lower.tolist() == [[1]] and three.only(1).values.tolist() == [[16]]
    one = sc.only(1)
    assert one.names == ("b",) and one.values.tolist() == [[16]]
    assert one.weights.tolist() == [1.0] and one.lower.tolist() == [[5]]
    assert two().only(0).lower is None
    assert two().as_dicts() == [{"s": 1, "t": 2}, {"s": 3, "t": 4}]
    assert sc.box() == {"s": (1, 16)}
    assert two().box() == {"s": (1, 3), "t": (1, 4)}
    assert sc.to_json() == {"dims": ["s"], "scenarios": [
        {"name": "a", "values": {"s": 4}, "weight": 0.25, "lower": {"s": 1}},
        {"name": "b", "values": {"s": 16}, "weight": 0.75, "lower": {"s": 5}}]}
    assert "lower" not in two().to_json()["scenarios"][0]


def test_static_is_one_unit_scenario():
    st = static()
    assert st.names == ("static",) and st.dims == () and st.values.shape == (1, 0)
    assert st.weights.tolist() == [1.0] and st.as_dicts() == [{}]


def test_dim_specs_names_values_weights():
    sc = from_dim_specs([" b=1,8", "s=128, 512,"], [1, 1, 1, 5])
    assert sc.names == ("b=1,s=128", "b=1,s=512", "b=8,s=128", "b=8,s=512")
    assert sc.dims == ("b", "s") and sc.values.tolist() == [[1, 128], [1, 512], [8, 128], [8, 512]]
    assert sc.weights.tolist() == [0.125, 0.125, 0.125, 0.625]
    assert from_dim_specs(["s=2"], "").weights.tolist() == [1.0]
    assert from_dim_specs(["s=2,3"], "0,1").weights.tolist() == [0.0, 1.0]
    assert from_dim_specs([]).names == ("",) and len(from_dim_specs([])) == 1


@pytest.mark.parametrize("specs,weights,msg", [
    (["s"], None, "--dim 's': expected NAME=V1,V2,..."),
    (["s=x"], None, "--dim 's=x': values must be integers"),
    (["s="], None, "--dim 's=': give at least one value, each >= 1"),
    (["s=1,0"], None, "--dim 's=1,0': give at least one value, each >= 1"),
    (["s=1", "s=2"], None, "--dim s given twice"),
    (["s=1=2"], None, "--dim 's=1=2': values must be integers"),
    (["s=1,2"], "1", "--weights has 1 values for 2 scenarios"),
    (["s=1,2"], "a,b", "--weights 'a,b': expected numbers"),
    (["s=1,2"], "1,-1", "--weights must be finite, non-negative and not all zero"),
    (["s=1,2"], "0,0", "--weights must be finite, non-negative and not all zero"),
])
def test_dim_spec_errors_say_why(specs, weights, msg):
    with pytest.raises(InputError) as e:
        from_dim_specs(specs, weights)
    assert str(e.value) == msg


def test_from_json_defaults_and_errors():
    sc = from_json({"dims": ["s"], "scenarios": [{"values": {"s": 2}},
                                                  {"name": "big", "values": {"s": 9}, "weight": 3}]})
    assert sc.names == ("s=2", "big") and sc.weights.tolist() == [0.25, 0.75]
    assert sc.lower is None
    with pytest.raises(InputError) as e:
        from_json({"dims": ["s"], "scenarios": [{"values": {}}]})
    assert str(e.value) == "scenarios JSON: missing or bad field 's'"
    with pytest.raises(InputError) as e:
        from_json({"dims": ["s"], "scenarios": []})
    assert str(e.value) == "scenarios JSON lists no scenario"
    with pytest.raises(InputError) as e:
        from_json("no/such/file.json")
    assert e.value.reason == "cannot read: No such file or directory"
    assert e.value.path == "no/such/file.json"


def test_buckets_exact():
    sc = buckets_from_lengths("s", [10, 20, 30, 300, 310, 2000], 3, round_to=64)
    assert sc.names == ("s<=64", "s<=320", "s<=2048")
    assert sc.values.tolist() == [[64], [320], [2048]]
    assert sc.lower.tolist() == [[1], [65], [321]]
    assert sc.weights.tolist() == pytest.approx([0.5, 2 / 6, 1 / 6])
    assert buckets_from_lengths("s", [7], 1).values.tolist() == [[7]]
    # lengths on a boundary belong to the lower bucket only
    edge = buckets_from_lengths("s", [10, 64, 64, 64, 100, 128], 2, round_to=64)
    assert edge.values.tolist() == [[64], [128]]
    assert edge.weights.tolist() == pytest.approx([4 / 6, 2 / 6])
    for bad in (([], 2), ([1, 2], 0)):
        with pytest.raises(InputError) as e:
            buckets_from_lengths("s", *bad)
        assert str(e.value) == "need at least one observed length and k >= 1"


def test_pick_bucket_smallest_fitting():
    sc = Scenarios(("a", "b", "c"), ("s",), [[64], [32], [128]], [1, 1, 1])
    assert pick_bucket(sc, {"s": 32}) == 1 and pick_bucket(sc, {"s": 33}) == 0
    assert pick_bucket(sc, {"s": 128}) == 2
    with pytest.raises(InputError, match="no bucket holds"):
        pick_bucket(sc, {"s": 129})
    low = Scenarios(("a", "b"), ("s",), [[64], [128]], [1, 1], lower=[[1], [65]])
    assert pick_bucket(low, {"s": 64}) == 0 and pick_bucket(low, {"s": 65}) == 1


def test_budgets_parse_and_resolve():
    sc = two()
    assert parse_budget("1KiB,90%").parts == (1024, 0.9)
    assert parse_budget(512).parts == (512,) and parse_budget(512).text == "512"
    assert parse_budget(np.int64(7)).parts == (7,)
    assert parse_budget([np.int64(5), "2KB"]).parts == (5, 2000)
    b = parse_budget({"b": "50%", "a": 100}, sc)
    assert b.parts == (100, 0.5) and b.relative
    assert parse_budget(b) is b
    assert not parse_budget("8GiB").relative
    assert b.resolve(sc, [10, 301]).tolist() == [100, 150]
    assert Budget((0.9,)).resolve(2, [100, 11]).tolist() == [90, 9]
    assert Budget((7,)).resolve(3).tolist() == [7, 7, 7]
    assert resolve_budget("10,20", sc).tolist() == [10, 20]
    with pytest.raises(InputError, match="2 values for 3 scenarios"):
        Budget((1, 2), "1,2").resolve(3)
    with pytest.raises(InputError, match="needs a reference peak"):
        Budget((0.5,), "50%").resolve(sc)
    for bad, msg in [("", "give bytes"), ("x%", "expected a percentage"),
                     ("0%", "must be finite and above 0"), ({"a": 1}, "needs the scenarios")]:
        with pytest.raises(InputError, match=msg):
            parse_budget(bad)
    with pytest.raises(InputError, match="no value for scenario"):
        parse_budget({"a": 1}, sc)


def _msg(fn, *args):
    with pytest.raises(InputError) as e:
        fn(*args)
    return str(e.value)


def test_budget_messages_and_texts_exactly():
    sc = two()
    assert _msg(Budget((1, 2), "1,2").resolve, 3) == "budget 1,2: 2 values for 3 scenarios"
    assert _msg(Budget((1, 2)).resolve, 3) == "budget [1, 2]: 2 values for 3 scenarios"
    assert _msg(Budget((0.5,), "50%").resolve, sc) == \
        "budget 50%: a percentage needs a reference peak"
    assert _msg(parse_budget, {"a": 1}) == "a budget by scenario name needs the scenarios"
    assert _msg(parse_budget, {"a": 1}, sc) == "budget names no value for scenario 'b'"
    assert _msg(parse_budget, "") == \
        "budget '': give bytes (8GiB, 512MB) or a percentage (90%)"
    assert _msg(parse_budget, "x%") == "budget 'x%': expected a percentage such as 90%"
    assert _msg(parse_budget, "0%") == "budget '0%': the percentage must be finite and above 0"
    assert _msg(parse_budget, "abc").startswith("budget 'abc': expected bytes")
    assert _msg(parse_budget, [-5]) == "budget -5: must be a number of bytes, not negative"
    assert parse_budget("10, 20").text == "10, 20"
    assert parse_budget([5, "2KB"]).text == "5,2KB"
    assert Budget((1,)).text == ""
    with pytest.raises(dataclasses.FrozenInstanceError):
        Budget((1,)).parts = (2,)
    assert _msg(pick_bucket, Scenarios(("a",), ("s",), [[4]], [1]), {"s": 5}) == \
        "no bucket holds {'s': 5}"
