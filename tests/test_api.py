"""The Python API: one Result for every method, the one gap definition, budgets, doctests."""

import doctest
import sys

import numpy as np
import pytest

import cpsched
import cpsched.api
import cpsched.core.scenarios
import cpsched.core.units
from cpsched.api import Result, compare, methods, read, schedule, simulate
from cpsched.core.errors import InputError
from cpsched.core.scenarios import from_dim_specs, parse_budget, resolve_budget, static
from cpsched.core.units import format_bytes, format_seconds, format_time, parse_bytes
from cpsched.generators import random_layered

TINY = """{"format": "cpsched-graph", "version": 1, "name": "tiny",
 "ops": [{"name": "a"}, {"name": "b"}, {"name": "c", "operands": ["a"]},
         {"name": "d", "operands": ["b"]}, {"name": "e", "operands": ["c", "d"]}],
 "buffers": [{"op": "a", "size": "100", "users": ["c"]}, {"op": "b", "size": "100", "users": ["d"]},
             {"op": "c", "size": "10", "users": ["e"]}, {"op": "d", "size": "10", "users": ["e"]},
             {"op": "e", "size": "1", "live_out": true}],
 "order": ["a", "b", "c", "d", "e"]}"""


@pytest.mark.parametrize("module", [cpsched.api, cpsched.core.units, cpsched.core.scenarios])
def test_docstring_examples_run(module):
    res = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert res.attempted > 0 and res.failed == 0


def test_package_exports_the_api():
    for name in (
        "read",
        "schedule",
        "compare",
        "simulate",
        "methods",
        "from_networkx",
        "Result",
        "Graph",
    ):
        assert hasattr(cpsched, name), name


def test_every_method_family_returns_one_result_type():
    g = read(TINY)
    heur = schedule(g, "xla-list")
    cp = schedule(g, time_limit=3)
    plan = schedule(g, objective="remat", budget=150, time_limit=3)
    for r in (heur, cp, plan):
        assert isinstance(r, Result)
        assert r.orders[g.name] == tuple(r.order_names())
        assert set(r.peak) == {"static"} and r.seconds > 0 and r.timings["total"] > 0
    assert cp.method == "cp" and cp.status == "OPTIMAL" and cp.peak == {"static": 120}
    assert cp.bound == {"static": 120} and cp.gap == {"static": 0.0}
    assert cp.solver["engine"] == "CP-SAT" and cp.solver["time_limit"] == 3.0
    assert heur.solver == {} and heur.status == "HEURISTIC"
    assert plan.plan is not None and plan.budget == {"static": 150}
    assert plan.peak["static"] <= 150


def test_gap_is_against_the_bound_and_relative_to_the_peak():
    g = read(TINY)
    given = simulate(g)
    assert given.status == "GIVEN" and given.peak == {"static": 210}
    lb = given.bound["static"]
    assert given.gap["static"] == pytest.approx((210 - lb) / 210)
    better = given.with_bound({"static": 120})
    assert better.gap["static"] == pytest.approx(90 / 210)


def test_result_repr_is_readable():
    g = random_layered(n=12, seed=3)
    text = repr(schedule(g, time_limit=3))
    assert text.startswith("<Result cp on ") and "OPTIMAL" in text
    assert "KiB" in text and "gap 0.00 %" in text
    assert any(u in text for u in (" ms", " s", " us"))


def test_result_orders_include_other_computations_when_a_method_gives_them():
    from cpsched.api import _orders

    class WithComputations:
        computation_orders = {"body.1": ("x", "y")}

    g = read(TINY)
    out = _orders(g, [0, 1, 2, 3, 4], WithComputations())
    assert out == {"tiny": ("a", "b", "c", "d", "e"), "body.1": ("x", "y")}
    assert _orders(g, [0, 1, 2, 3, 4], None) == {"tiny": ("a", "b", "c", "d", "e")}


def test_compare_uses_the_best_proven_bound_for_every_row():
    g = read(TINY)
    c = compare(g, ["xla-list", "cp"], time_limit=3)
    rows = {r["method"]: r for r in c.rows}
    assert c.bound == {"static": 120}  # cp's proof, above the static bound
    assert rows["given"]["gap"]["static"] == pytest.approx(90 / 210, abs=1e-6)
    assert rows["cp-memory"]["gap"]["static"] == 0.0
    df = c.to_pandas()
    assert list(df["method"]) == ["given", "xla-list", "cp-memory"]
    assert set(df.columns) >= {"scenario", "peak_bytes", "lower_bound_bytes", "gap", "makespan"}
    text = str(c)
    assert "+42.9 %" in text and "210 B" in text and "vs bound" in text
    rep = c.to_dict()["reproduce"]
    assert rep["cpsched"] == cpsched.__version__ and rep["time_limit"] == 3.0
    assert {"ortools", "seed", "workers", "device", "scenarios"} <= set(rep)


def test_compare_rejects_an_unknown_method_before_running():
    with pytest.raises(InputError, match="unknown method"):
        compare(read(TINY), ["xla-list", "nope"])


def test_simulate_takes_names_or_indices():
    g = read(TINY)
    assert simulate(g, ["a", "c", "b", "d", "e"]).peak == {"static": 120}
    assert simulate(g, [0, 2, 1, 3, 4]).peak == {"static": 120}
    with pytest.raises(InputError):
        simulate(g, ["a", "zz", "b", "d", "e"])


def test_methods_lists_the_registry():
    names = {m["name"]: m for m in methods()}
    assert names["cp"]["family"] and "xla-dfs" in names and "cp-remat" in names


def test_default_method_order_is_the_written_ranks_not_the_import_order():
    from cpsched.methods import RANKS, load_all, register

    registry = load_all()
    assert list(registry) == [n for n in RANKS if n in registry]
    # compare's default rows: the heuristics in rank order, then the solvers
    c = compare(read(TINY), time_limit=2)
    rows = [r for r in c.settings["methods"] if r != "given"]
    rank = {"cp-memory": RANKS.index("cp")}
    ranked = sorted(rows, key=lambda r: (r.startswith("cp"), rank.get(r) or RANKS.index(r)))
    assert rows == ranked and rows[0] == "xla-list" and rows[-1] == "cp-memory"
    # a method registered later without a rank is listed after every ranked one
    register("zz-test-unranked", "test", "memory")(lambda g, sc, **_: list(g.default_order()))
    try:
        assert list(load_all())[-1] == "zz-test-unranked"
        assert list(load_all())[: len(registry)] == list(registry)
    finally:
        # (``cpsched.methods`` is the api function; the module is in sys.modules)
        sys.modules["cpsched.methods"]._REGISTRY.pop("zz-test-unranked")


def test_read_accepts_paths_text_and_graphs(tmp_path):
    p = tmp_path / "tiny.json"
    p.write_text(TINY)
    g = read(str(p))
    assert read(g) is g and read(p).op_names == g.op_names == read(TINY).op_names
    # the graph carries the file it was read from (not a side table): a derived graph does not
    assert g.source_file == str(p) and read(TINY).source_file is None
    assert g.with_(name="other").source_file is None
    with pytest.raises(InputError, match="bad JSON"):
        read('{"format": ')


def test_scenarios_from_a_dict_of_dim_values():
    g = read(
        '{"nodes": [{"id": 0, "size": "4*s"}, {"id": 1, "size": 1}],'
        ' "links": [{"source": 0, "target": 1}]}'
    )
    r = simulate(g, scenarios={"s": [10, 100]})
    assert r.peak == {"s=10": 41, "s=100": 401}
    with pytest.raises(InputError, match="--dim"):
        simulate(g)


# -- budgets and units ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,expected",
    [
        ("8GiB", 8 * 2**30),
        ("512MB", 512 * 10**6),
        ("1000000", 10**6),
        ("1e6", 10**6),
        ("1.5 KiB", 1536),
        ("2kb", 2000),
        (4096, 4096),
        ("64b", 64),
    ],
)
def test_parse_bytes(text, expected):
    assert parse_bytes(text) == expected


@pytest.mark.parametrize("bad", ["8G", "lots", "-5", "5 parsecs", ""])
def test_parse_bytes_rejects(bad):
    with pytest.raises(InputError):
        parse_bytes(bad)


def test_budget_forms_resolve_per_scenario():
    sc = from_dim_specs(["s=1,2"])
    assert resolve_budget("1KiB", sc).tolist() == [1024, 1024]
    assert resolve_budget("1KiB,2KiB", sc).tolist() == [1024, 2048]
    assert resolve_budget({"s=1": 5, "s=2": "1kB"}, sc).tolist() == [5, 1000]
    assert resolve_budget("90%", sc, reference=[1000, 2000]).tolist() == [900, 1800]
    assert resolve_budget("50%,700", sc, reference=[1000, 2000]).tolist() == [500, 700]
    assert parse_budget("90%").relative and not parse_budget("90").relative
    with pytest.raises(InputError, match="reference peak"):
        resolve_budget("90%", sc)
    with pytest.raises(InputError, match="3 values for 2"):
        resolve_budget("1,2,3", sc)
    with pytest.raises(InputError, match="percentage"):
        parse_budget("x%")
    with pytest.raises(InputError, match="above 0"):
        parse_budget("0%")


def test_percent_budget_is_of_the_input_orders_peak():
    g = read(TINY)  # its own order peaks at 210 B, the best one at 120 B
    r = schedule(g, objective="budget", budget="60%", time_limit=3)
    ref = r.info["budget_reference"]
    assert ref["reference_bytes"] == {"static": 210} and r.budget == {"static": 126}
    assert r.status == "OPTIMAL" and r.peak["static"] <= 126
    arr, _ = cpsched.api.resolve_budget(g, static(), "50%")
    assert arr.tolist() == [105]


def test_units_print_with_their_unit():
    assert format_bytes(210) == "210 B" and format_bytes(3 * 2**20) == "3.00 MiB"
    assert format_seconds(2.294e-06) == "2.29 us" and format_seconds(1.5) == "1.50 s"
    assert format_time(43048, "xla") == "43.0 ms (xla)" and format_time(7, "file") == "7 units"
    assert np.isfinite(float(format_seconds(0.25).split()[0]))


def test_read_hlo_text_equals_reading_the_file():
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "models" / "hlo" / "mlp_train.hlo"
    a, b = read(path.read_text()), read(str(path))
    assert a.op_names == b.op_names and a.n_buffers == b.n_buffers
    assert simulate(a).peak == simulate(b).peak


def test_solver_settings_as_one_config_or_as_keywords_not_both():
    from cpsched.cp.runtime import SolverConfig

    g = read(TINY)
    cfg = SolverConfig(time_limit=2, workers=1, seed=3, deterministic=True)
    r = schedule(g, config=cfg)
    assert (r.solver["time_limit"], r.solver["workers"], r.solver["seed"]) == (2, 1, 3)
    assert r.solver["deterministic"] is True
    assert r.order == schedule(g, time_limit=2, workers=1, seed=3, deterministic=True).order
    with pytest.raises(InputError, match="seed given both"):
        schedule(g, config=cfg, seed=4)
    with pytest.raises(InputError, match="given both"):
        compare(g, ["cp"], config=cfg, deterministic=True)


def test_frontier_takes_deterministic_and_records_it():
    from cpsched.api import frontier

    g = cpsched.generators.random_layered(n=10, seed=2)
    f = frontier(g, points=2, time_limit=1, deterministic=True, deadline=0.0)
    # deterministic: the deadline (already past here) is not used, every point is solved
    assert f.settings["deterministic"] is True
    assert all("ran out" not in str(p.get("message", "")) for p in f.points)


def test_every_family_is_given_the_one_configs_settings(monkeypatch):
    # --deterministic reaches the remat family too (it was once dropped there): the method
    # receives the config's settings, and the result records what it was given
    import cpsched.api as api_module
    from cpsched.cp.runtime import SolverConfig
    from cpsched.methods import get

    seen = {}
    g = cpsched.generators.random_layered(n=12, seed=3)
    cfg = SolverConfig(time_limit=3, workers=1, seed=5, deterministic=True)
    for name in ("cp-remat", "cp-joint", "cp", "cp-overlap", "xla-dfs"):
        m = get(name)

        def spy(graph, sc, _fn=m.fn, _name=name, **kw):
            seen[_name] = {k: kw.get(k) for k in ("time_limit", "workers", "seed", "deterministic")}
            return _fn(graph, sc, **kw)

        monkeypatch.setattr(api_module, "get_method", lambda n, _m=m, _spy=spy: (
            __import__("dataclasses").replace(_m, fn=_spy)))
        try:
            r = schedule(g, name, config=cfg, budget="100%" if m.family == "remat" else None)
        except cpsched.api.BudgetError:
            continue
        if r.solver:
            assert r.solver["deterministic"] is True and r.solver["seed"] == 5
    for name in ("cp-remat", "cp-joint", "cp", "xla-dfs"):
        assert seen[name] == {"time_limit": 3.0, "workers": 1, "seed": 5, "deterministic": True}
