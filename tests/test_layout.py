"""Memory layout: the exact search, the CP-SAT model, the solver around them, and
``cpsched layout`` (CSV and graph inputs, the validator, bad rows)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from cpsched.cli import main
from cpsched.layout.cp import CpLayout
from cpsched.layout.problem import (
    Buffer,
    LayoutProblem,
    csv_text,
    layout_top,
    overlaps,
    parse_csv,
    problem_from_graph,
)
from cpsched.layout.search import EXHAUSTED, FOUND, Instance, portfolio_search, search
from cpsched.layout.solve import greedy, solve_layout

REPO = Path(__file__).resolve().parents[1]

# MiniMalloc's README example: 12 bytes, and no less
EXAMPLE = "id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\nb4,9,21,4\nb5,0,21,4\n"

# most bytes live at one time 6, yet no layout fits in less than 7 (found by a random
# search over tightly packed instances; CP-SAT agrees)
GAP = [
    (0, 1, 3),
    (0, 2, 3),
    (1, 3, 2),
    (1, 4, 1),
    (2, 3, 1),
    (2, 3, 1),
    (2, 4, 1),
    (3, 5, 1),
    (3, 5, 3),
    (4, 5, 2),
]


def _problem(rows) -> LayoutProblem:
    return LayoutProblem([Buffer(f"b{i}", lo, hi, s) for i, (lo, hi, s) in enumerate(rows)])


def _instance(p: LayoutProblem) -> Instance:
    return Instance(
        [b.lower for b in p.buffers], [b.upper for b in p.buffers], [b.size for b in p.buffers]
    )


def _tight(rng: random.Random) -> LayoutProblem:
    """Buffers added at random while they fit a capacity at every time: full, so that
    the most bytes live at one time is often not enough."""
    steps, cap = rng.randint(3, 6), rng.randint(3, 7)
    load = [0] * steps
    rows = []
    for _ in range(50):
        lo = rng.randrange(steps)
        hi = rng.randint(lo + 1, steps)
        s = rng.choice([1, 2, 2, 3, 3, 4])
        if all(load[t] + s <= cap for t in range(lo, hi)):
            for t in range(lo, hi):
                load[t] += s
            rows.append((lo, hi, s))
    return _problem(rows)


# -- the problem ------------------------------------------------------------------------------


def test_max_live_is_half_open():
    # [0, 2) and [2, 4) are never live together
    assert _problem([(0, 2, 5), (2, 4, 7)]).max_live() == 7
    assert _problem([(0, 3, 5), (2, 4, 7)]).max_live() == 12
    assert LayoutProblem([]).max_live() == 0


def test_overlaps_finds_each_kind():
    p = _problem([(0, 3, 4), (2, 5, 4), (5, 6, 4)])
    assert overlaps(p, [0, 4, 0]) == []
    assert overlaps(p, [0, 4, 0], capacity=8) == []
    errs = overlaps(p, [0, 3, 0], capacity=7)
    assert errs == ["buffers b0 and b1 are live together at 2 and share bytes [3, 4)"]
    assert any("past the capacity" in e for e in overlaps(p, [0, 4, 0], capacity=7))
    assert any("negative offset" in e for e in overlaps(p, [-1, 4, 0]))
    assert any("no offset" in e for e in overlaps(p, {"b0": 0, "b1": 4}))
    # [2, 5) and [5, 6) are not live together: the same bytes are fine
    assert overlaps(p, [0, 4, 4]) == []


def test_csv_round_trip_keeps_ids_with_commas():
    p = parse_csv('id,lower,upper,size\n"a,1",0,2,8\nb,1,3,8\n')
    assert [b.id for b in p.buffers] == ["a,1", "b"]
    text = csv_text(p, [0, 8])
    assert text.splitlines()[0] == "id,lower,upper,size,offset"
    again = parse_csv(text)
    assert again.buffers == p.buffers


# -- the search and the model -------------------------------------------------------------------


def test_search_proves_the_gap_and_cp_sat_agrees():
    p = _problem(GAP)
    assert p.max_live() == 6
    r = search(_instance(p), 6)
    assert r.status == EXHAUSTED
    r7 = search(_instance(p), 7)
    assert r7.status == FOUND
    assert overlaps(p, r7.offsets, 7) == []
    assert CpLayout(p).solve(6, 20, 10).status == "INFEASIBLE"
    best = solve_layout(p, None, time_limit=10, workers=1)
    assert (best.status, best.capacity_bytes, best.lower_bound_bytes) == ("OPTIMAL", 7, 7)


@pytest.mark.parametrize("seed", range(4))
def test_search_and_cp_sat_find_the_same_least_capacity(seed):
    rng = random.Random(seed)
    for _ in range(25):
        p = _tight(rng)
        r = solve_layout(p, None, time_limit=20, workers=1)
        c = CpLayout(p).solve(None, sum(b.size for b in p.buffers), 20)
        assert r.status == "OPTIMAL" and c.status == "OPTIMAL"
        assert r.capacity_bytes == c.capacity_bytes == r.lower_bound_bytes
        assert overlaps(p, r.offsets, r.capacity_bytes) == []
        assert layout_top(p, r.offsets) == r.capacity_bytes


def test_both_engines_visit_the_same_nodes():
    rng = random.Random(5)
    for _ in range(30):
        p = _tight(rng)
        inst = _instance(p)
        for cap in (p.max_live(), p.max_live() + 1):
            a = search(inst, cap, "TLA", engine="lists")
            b = search(inst, cap, "TLA", engine="arrays")
            assert (a.status, a.nodes, a.offsets) == (b.status, b.nodes, b.offsets)
    with pytest.raises(ValueError):
        search(_instance(_problem(GAP)), 7, engine="gpu")
    with pytest.raises(ValueError):
        search(_instance(_problem(GAP)), 7, preorder="TX")


def test_every_preorder_is_complete():
    p = _problem(GAP)
    for pre in ("TA", "AT", "TLA", "ZTA"):
        for engine in ("lists", "arrays"):
            assert search(_instance(p), 6, pre, engine=engine).status == EXHAUSTED
            assert search(_instance(p), 7, pre, engine=engine).status == FOUND


def test_search_decomposes_and_keeps_zero_sizes():
    # two independent halves and a zero-size buffer: each half packs on its own
    p = _problem([(0, 2, 4), (1, 3, 4), (5, 7, 8), (6, 8, 1), (0, 9, 0)])
    r = search(_instance(p), 9)
    assert r.status == FOUND
    assert overlaps(p, r.offsets, 9) == []
    assert r.offsets[4] == 0


def test_portfolio_stops_at_the_deadline():
    p = _problem(GAP)
    r = portfolio_search(_instance(p), 6, deadline=0.0)
    assert r.status == "aborted"


def test_greedy_is_a_valid_layout():
    rng = random.Random(7)
    for _ in range(20):
        p = _tight(rng)
        for order in ("size", "time"):
            offs = greedy(p, order)
            assert overlaps(p, offs) == []
            assert layout_top(p, offs) >= p.max_live()


def test_two_solvers_side_by_side():
    rng = random.Random(11)
    for _ in range(10):
        p = _tight(rng)
        r = solve_layout(p, None, time_limit=20, workers=2)
        assert r.status == "OPTIMAL"
        assert overlaps(p, r.offsets, r.capacity_bytes) == []


def test_capacity_modes():
    p = _problem(GAP)
    fits = solve_layout(p, 9, time_limit=10)
    assert fits.status in ("OPTIMAL", "FEASIBLE") and fits.capacity_bytes <= 9
    assert overlaps(p, fits.offsets, 9) == []
    no = solve_layout(p, 6, time_limit=10)
    assert (no.status, no.offsets, no.lower_bound_bytes) == ("INFEASIBLE", None, 7)
    below = solve_layout(p, 5, time_limit=10)
    assert below.status == "INFEASIBLE" and below.lower_bound_bytes == 6


def test_out_of_time_is_unknown():
    # no time at all: only the greedy layouts (6 bytes), not within the 5 that fit
    p = _problem([(1, 3, 1), (2, 3, 3), (0, 2, 2), (1, 2, 2), (0, 1, 3), (2, 3, 1)])
    assert min(layout_top(p, greedy(p, o)) for o in ("size", "time")) == 6
    r = solve_layout(p, 5, deadline=0.0)
    assert r.status == "UNKNOWN" and r.offsets is None and r.lower_bound_bytes == 5
    r = solve_layout(p, None, deadline=0.0)
    assert (r.status, r.capacity_bytes, r.lower_bound_bytes) == ("FEASIBLE", 6, 5)
    r = solve_layout(p, None, time_limit=10, workers=1)
    assert (r.status, r.capacity_bytes, r.found_by) == ("OPTIMAL", 5, "search")


# -- the command --------------------------------------------------------------------------------


def test_cli_writes_the_example(tmp_path, capsys):
    src = tmp_path / "in.csv"
    src.write_text(EXAMPLE)
    out = tmp_path / "out.csv"
    assert main(["layout", str(src), "-o", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["status"], data["capacity_bytes"], data["lower_bound_bytes"]) == (
        "OPTIMAL",
        12,
        12,
    )
    lines = out.read_text().splitlines()
    assert lines[0] == "id,lower,upper,size,offset"
    assert len(lines) == 6
    assert main(["layout", str(out), "--check", "--capacity", "12"]) == 0
    assert "valid" in capsys.readouterr().out
    js = tmp_path / "out.json"
    assert main(["layout", str(src), "-o", str(js)]) == 0
    assert main(["layout", str(js), "--check"]) == 0
    assert len(json.loads(js.read_text())["buffers"]) == 5


def test_cli_infeasible_capacity_writes_nothing(tmp_path, capsys):
    src = tmp_path / "gap.csv"
    src.write_text(csv_text(_problem(GAP), [0] * len(GAP)))
    out = tmp_path / "out.csv"
    assert main(["layout", str(src), "--capacity", "6", "-o", str(out), "--json"]) == 2
    cap = capsys.readouterr()
    assert json.loads(cap.out)["status"] == "INFEASIBLE"
    assert "no layout fits in 6 bytes: at least 7" in cap.err
    assert not out.exists()
    assert main(["layout", str(src), "--capacity", "7B", "-o", str(out)]) == 0
    assert main(["layout", str(out), "--check", "--capacity", "7"]) == 0


def test_cli_check_reports_overlaps(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("id,lower,upper,size,offset\na,0,3,4,0\nb,2,5,4,2\n")
    assert main(["layout", str(bad), "--check"]) == 1
    out = capsys.readouterr().out
    assert "buffers a and b are live together at 2 and share bytes [2, 4)" in out
    no_offsets = tmp_path / "plain.csv"
    no_offsets.write_text(EXAMPLE)
    assert main(["layout", str(no_offsets), "--check"]) == 2
    assert "offset" in capsys.readouterr().err


@pytest.mark.parametrize(
    "body,where,reason",
    [
        ("a,0,3,-4\n", ":2:", "negative size -4"),
        ("a,0,3,4\nb,3,3,4\n", ":3:", "upper 3 is not above lower 3"),
        ("a,5,3,4\n", ":2:", "upper 3 is not above lower 5"),
        ("a,0,3,4\na,1,3,4\n", ":3:", "id 'a' again (first on line 2)"),
        ("a,0,x,4\n", ":2:", "upper 'x' is not an integer"),
        ("a,0,3\n", ":2:", "3 fields, the header has 4"),
        (",0,3,4\n", ":2:", "empty id"),
    ],
)
def test_cli_bad_rows(tmp_path, capsys, body, where, reason):
    src = tmp_path / "in.csv"
    src.write_text("id,lower,upper,size\n" + body)
    out = tmp_path / "out.csv"
    assert main(["layout", str(src), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert f"{src}{where}" in err and reason in err
    assert not out.exists()


def test_cli_bad_header(tmp_path, capsys):
    src = tmp_path / "in.csv"
    src.write_text("id,lower,size\na,0,4\n")
    assert main(["layout", str(src)]) == 2
    assert "lacks column upper" in capsys.readouterr().err
    src.write_text("")
    assert main(["layout", str(src)]) == 2
    assert "empty file" in capsys.readouterr().err


def test_cli_graph_input_reaches_the_orders_peak(tmp_path, capsys):
    hlo = REPO / "models" / "hlo" / "mlp_train.hlo"
    out = tmp_path / "mlp.csv"
    assert main(["layout", str(hlo), "-o", str(out), "--json", "--time-limit", "30"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "OPTIMAL"
    assert data["capacity_bytes"] == data["lower_bound_bytes"] == data["peak_bytes"]
    assert main(["layout", str(out), "--check", "--capacity", str(data["peak_bytes"])]) == 0


def test_graph_problem_max_live_is_the_peak():
    from cpsched import api
    from cpsched.analysis.memory import simulate

    g = api.read(REPO / "models" / "hlo" / "cnn_train.hlo")
    for order in (g.default_order(), api.schedule(g, method="xla-dfs").order):
        p = problem_from_graph(g, order)
        assert p.max_live() == int(simulate(g, order).peak[0])


def test_cli_schedule_is_for_graphs(tmp_path, capsys):
    src = tmp_path / "in.csv"
    src.write_text(EXAMPLE)
    sched = tmp_path / "s.txt"
    sched.write_text("x\n")
    assert main(["layout", str(src), "--schedule", str(sched)]) == 2
    assert "--schedule is for a graph input" in capsys.readouterr().err


def test_cli_orders_then_lays_out(tmp_path, capsys):
    hlo = REPO / "models" / "hlo" / "mlp_train.hlo"
    out = tmp_path / "mlp.json"
    args = ["layout", str(hlo), "--method", "cp", "--time-limit", "6", "-o", str(out), "--json"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["method"] == "cp"
    assert data["capacity_bytes"] == data["peak_bytes"] >= data["order_lower_bound_bytes"]
    own = REPO / "models" / "hlo" / "mlp_train.hlo"
    assert main(["layout", str(own), "--json"]) == 0
    assert data["peak_bytes"] <= json.loads(capsys.readouterr().out)["peak_bytes"]
    assert main(["layout", str(out), "--check"]) == 0
    src = tmp_path / "in.csv"
    src.write_text(EXAMPLE)
    assert main(["layout", str(src), "--method", "cp"]) == 2
    assert "--method is for a graph input" in capsys.readouterr().err
