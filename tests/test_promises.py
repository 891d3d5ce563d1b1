"""Answers that are right and agree: a budget is kept or refused by every method, a
percentage budget has one deterministic reference, and cp is never worse than the best
heuristic however short its time was."""

import json
import time
from pathlib import Path

import numpy as np
import pytest

from cpsched import api
from cpsched.cli import main
from cpsched.core.errors import BudgetError, InputError
from cpsched.core.scenarios import parse_budget
from cpsched.generators import random_layered
from cpsched.methods import load_all

REPO = Path(__file__).resolve().parents[1]
N50 = REPO / "models" / "graphs" / "random_layered_n50_s0.json"


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


# -- a budget is kept or refused ------------------------------------------------------------

# every method that takes --budget (or ignores it): (extra options, time limit)
BUDGET_METHODS = [
    ("cp", [], 3),
    ("cp-overlap", [], 3),
    ("xla-dfs", [], None),
    ("bladedisc", [], None),
    ("remat-span", [], None),
    ("remat-xla", [], None),
    ("remat-dtr", [], None),
    ("remat-sqrt", [], None),
    ("remat-offload", ["--bandwidth", "1000"], None),
    ("cp-remat", [], 3),
    ("remat-fixed-order", [], 3),
    ("cp-joint", [], 10),  # its separate methods and the model share the limit
]


# the methods whose search may find a recompute plan below every order's peak
SEARCHING_REMAT = ("cp-remat", "cp-joint", "remat-fixed-order")


@pytest.mark.parametrize(("method", "extra", "limit"), BUDGET_METHODS)
def test_a_budget_nothing_meets_is_refused_with_what_can_be_had(
    capsys, tmp_path, method, extra, limit
):
    # 26,000 B: below every order (the least is 29,720 B) and below what the remat
    # heuristics reach on this graph, above its proven minimum (19,680 B)
    out = tmp_path / "s.json"
    argv = ["schedule", N50, "--method", method, "--budget", "26000", "-o", out, "--json", *extra]
    if limit is not None:
        argv += ["--time-limit", limit]
    rc, stdout, err = run(capsys, *argv)
    if rc == 0 and method in SEARCHING_REMAT:
        # recomputation can go below every order (down to the proven 19,680 B): a search
        # that finds such a plan keeps the promise by writing it within the budget
        d = json.loads(stdout)
        assert d["budget_bytes"]["static"] == 26000 and d["peak_bytes"]["static"] <= 26000
        assert out.exists()
        return
    assert rc == 2 and stdout == "" and err.count("error") == 1, (rc, stdout, err)
    last = err.splitlines()[-1]  # a solver's progress lines come before it
    assert "least peak reached" in last and "(proven)" in last or "proven minimum" in last
    assert not out.exists() and not Path(str(out) + ".plan.json").exists()


@pytest.mark.parametrize(("method", "extra", "limit"), BUDGET_METHODS)
def test_a_written_result_meets_its_budget(capsys, tmp_path, method, extra, limit):
    out = tmp_path / "s.json"
    argv = ["schedule", N50, "--method", method, "--budget", "95%", "-o", out, "--json", *extra]
    if limit is not None:
        argv += ["--time-limit", limit]
    rc, stdout, err = run(capsys, *argv)
    if rc == 2:  # refused: nothing written, and the reason names the least peak reached
        assert "least peak reached" in err and not out.exists()
        return
    assert rc == 0, err
    d = json.loads(stdout)
    written = json.loads(out.read_text())
    budget = d["budget_bytes"]["static"]
    assert budget == written["budget_bytes"]["static"] == int(0.95 * 44000)
    peak = written["peak_bytes"]
    peak = peak["static"] if isinstance(peak, dict) else peak[0]
    assert peak <= budget


def test_the_api_raises_with_the_refused_result():
    g = api.read(str(N50))
    with pytest.raises(BudgetError) as e:
        api.schedule(g, "remat-span", budget=26000)
    assert e.value.reached == {"static": 44000} and e.value.proven == {"static": 19680}
    assert isinstance(e.value.result, api.Result) and e.value.result.peak == e.value.reached


@pytest.mark.parametrize("value", ["0.9", 0.9, "0.5", np.float64(0.25)])
def test_a_fraction_is_refused_as_the_percentage_it_meant(value):
    with pytest.raises(InputError, match=r"did you mean \d+%\?"):
        parse_budget(value)


@pytest.mark.parametrize("value", ["0", 0, "1.5", "0.1B"])
def test_a_budget_of_no_whole_bytes_is_refused(value):
    with pytest.raises(InputError, match="above 0 bytes|whole"):
        parse_budget(value)


def test_the_cli_refuses_a_fraction_before_any_work(capsys, tmp_path):
    rc, _, err = run(capsys, "schedule", N50, "--budget", "0.9", "-o", tmp_path / "s.json")
    assert rc == 2 and "did you mean 90%?" in err and err.count("\n") == 1


# -- a percentage has one deterministic reference -------------------------------------------


def test_a_percentage_is_of_the_input_orders_peak_as_simulate_prints_it(capsys, tmp_path):
    rc, stdout, _ = run(capsys, "simulate", N50, "--json")
    given = json.loads(stdout)["peak_bytes"]["static"]
    budgets = set()
    for limit in (1, 3):  # the time limit does not move the reference
        rc, stdout, err = run(
            capsys,
            "schedule",
            N50,
            "--method",
            "remat-span",
            "--budget",
            "90%",
            "--time-limit",
            limit,
            "-o",
            tmp_path / f"p{limit}.json",
            "--json",
        )
        assert rc == 0, err
        d = json.loads(stdout)
        ref = d["budget_reference"]
        assert (
            ref["reference_bytes"] == {"static": given} and "input's own order" in ref["reference"]
        )
        budgets.add(d["budget_bytes"]["static"])
    assert budgets == {int(0.9 * given)}
    rc, stdout, _ = run(
        capsys,
        "schedule",
        N50,
        "--method",
        "remat-span",
        "--budget",
        "90%",
        "-o",
        tmp_path / "t.json",
    )
    assert "90% of the peak of the input's own order, 42.97 KiB" in stdout


def test_a_percentage_on_hlo_is_of_the_modules_own_peak():
    path = REPO / "models" / "hlo" / "corpus" / "while_cg.hlo.gz"
    g = api.read(str(path))
    arr, ref = api.resolve_budget(g, api.scenarios_for(g), "50%")
    given = api.simulate(g).peak["static"]
    assert ref["reference_bytes"] == {"static": given} and arr.tolist() == [given // 2]


# -- cp is never worse than the best heuristic ------------------------------------------------


def _memory_heuristic_peaks(g, sc):
    out = {}
    for name, m in load_all().items():
        if m.family == "memory" and m.applies(g):
            out[name] = int(api.schedule(g, name, scenarios=sc).peak[sc.names[0]])
    return out


@pytest.mark.parametrize("source", ["n50", "layered300"])
def test_cp_past_its_deadline_returns_the_best_heuristic(source):
    g = api.read(str(N50)) if source == "n50" else random_layered(n=300, seed=4)
    sc = api.scenarios_for(g)
    # start-up ate the whole limit
    r = api.schedule(g, time_limit=1, deadline=time.perf_counter() - 1.0)
    best = min(_memory_heuristic_peaks(g, sc).values())
    assert r.peak["static"] <= best
    assert "fast heuristics" in r.info["message"]
    if source == "n50":
        assert r.peak["static"] == 29720  # the optimum (a beam search finds it in ms)


def test_cp_with_a_budget_past_its_deadline_meets_what_a_heuristic_meets(capsys, tmp_path):
    g = api.read(str(N50))
    r = api.schedule(g, budget=30000, time_limit=1, deadline=time.perf_counter() - 1.0)
    assert r.peak["static"] <= 30000 == r.budget["static"]


def test_a_sweep_row_over_its_budget_says_so_with_the_least_peak_reached():
    from cpsched.sweep.solve import OVER_BUDGET, solve_task

    payload = {
        "key": "k",
        "graph": {"label": "n50", "path": str(N50), "family": None, "params": {}},
        "label": "remat-span",
        "method": "remat-span",
        "objective": None,
        "method_options": {},
        "scenarios": None,
        "time_limit": 1.0,
        "seed": 0,
        "workers": 1,
        "budget": 26000,
        "deterministic": False,
        "options_text": "",
    }
    row = solve_task(payload)
    assert row["status"] == OVER_BUDGET and row["peak_bytes"] == 44000
    assert "least peak reached" in row["error"]


# -- frontier: a point wherever a plan is known, none beaten by a baseline it shows ----------


def _dominated(base: dict, point: dict, names) -> bool:
    """``base`` is at most ``point``'s peak and makespan in every scenario, below in one."""

    def v(d, key, n):
        x = d[key]
        return x[n] if isinstance(x, dict) else x

    le = all(
        v(base, "peak_bytes", n) <= v(point, "peak_bytes", n)
        and v(base, "makespan", n) <= v(point, "makespan", n) * (1 + 1e-12)
        for n in names
    )
    lt = any(
        v(base, "peak_bytes", n) < v(point, "peak_bytes", n)
        or v(base, "makespan", n) < v(point, "makespan", n) * (1 - 1e-12)
        for n in names
    )
    return le and lt


def _small_parallel():
    from cpsched.generators import transformer_parallel

    return transformer_parallel(layers=1, dp=2, tp=2, d_model=64, heads=2, d_ff=128, vocab=256)


def test_frontier_keeps_every_known_plan_when_the_joint_model_finds_none(monkeypatch):
    """With the joint model and the separate methods finding nothing, every point still
    has the best known plan that fits it (the low end's, a heuristic's), never NO_PLAN."""
    import cpsched.strategies.joint.method as joint

    monkeypatch.setattr(joint, "_sequential", lambda *a, **k: ([], None))

    def nothing(*a, **k):
        raise joint.Infeasible("no model in this test")

    monkeypatch.setattr(joint, "_solve_model", nothing)
    g = _small_parallel()
    f = api.frontier(g, points=4, time_limit=2, scenarios={"b": [2], "s": [64]})
    assert f.points and all(p.get("makespan") is not None for p in f.points), f.points
    names = f.scenarios
    for p in f.points:
        assert not any(_dominated(b, p, names) for b in f.baselines), p
        assert p["peak_bytes"] <= p["budget_bytes"]


def test_frontier_points_are_never_beaten_by_a_baseline_it_shows():
    g = _small_parallel()
    f = api.frontier(g, points=3, time_limit=2, scenarios={"b": [2], "s": [64]})
    for p in f.points:
        assert p.get("makespan") is not None
        assert not any(_dominated(b, p, f.scenarios) for b in f.baselines), p
    # the top of the range: the least peak among the fastest orders shown
    fastest = min(b["makespan"] for b in f.baselines)
    top = f.points[-1]
    assert top["makespan"] <= fastest * (1 + 1e-12)


def test_frontier_solves_each_distinct_budget_once(monkeypatch):
    import cpsched.strategies.frontier as fr

    calls = []
    real = fr.solve_joint

    def counting(*a, **k):
        calls.append(a[2])
        return real(*a, **k)

    monkeypatch.setattr(fr, "solve_joint", counting)
    g = api.read(str(REPO / "models" / "graphs" / "unet.json"))  # least peak = fastest's
    f = api.frontier(g, points=10, time_limit=1)
    assert len(f.points) == len(calls) == 1 and f.settings["points"] == 1
