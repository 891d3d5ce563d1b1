"""What a result offers in Python: ``Result.write`` (the command line's writing and checks),
``Frontier.table / records / to_pandas / plot``, and ``compare(methods=[...])`` (and the
command line's ``--methods``)."""

from __future__ import annotations

import json

import pytest
from helpers import HLO_MODELS

import cpsched
from cpsched import cli
from cpsched.api import compare, frontier, schedule, simulate
from cpsched.core.errors import InfeasibleError, InputError
from cpsched.generators import random_layered
from cpsched.readers.hlo.convert import read_hlo_module

MLP = HLO_MODELS / "mlp_train.hlo"


def test_write_json_reads_back_with_the_same_peak(tmp_path):
    g = random_layered(n=14, seed=5)
    r = schedule(g, time_limit=3)
    out = tmp_path / "order.json"
    assert r.write(out) == [str(out)]
    data = json.loads(out.read_text())
    assert data["method"] == "cp" and data["order"] == r.order_names()
    assert simulate(g, data["order"]).peak == r.peak


def test_write_hlo_gives_the_scheduled_module(tmp_path):
    r = schedule(str(MLP), "xla-dfs")
    out = tmp_path / "mlp.dfs.hlo"
    assert r.write(out) == [str(out)]
    module = read_hlo_module(str(out))
    assert module.is_scheduled
    entry = [i.name for i in module.entry.instructions]
    assert entry == list(r.orders[module.entry.name])
    # the written module re-simulates to the claimed peak
    back = simulate(cpsched.read(str(out)))
    assert back.peak == r.peak
    # .json asks for the schedule JSON instead
    js = tmp_path / "mlp.json"
    r.write(js)
    assert json.loads(js.read_text())["format"] == "cpsched-schedule"


def test_write_refuses_inputs_and_infeasible_results(tmp_path):
    src = tmp_path / "in.hlo"
    src.write_text(MLP.read_text())
    r = schedule(cpsched.read(str(src)), "xla-dfs")
    with pytest.raises(InputError):
        r.write(src)  # never over the input it was read from? it is a plain path: refused
    assert src.read_text() == MLP.read_text()
    g = random_layered(n=10, seed=1)
    with pytest.raises((InfeasibleError, InputError)):
        schedule(g, budget=1, time_limit=2).write(tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()


def test_write_non_hlo_graph_as_hlo_is_refused(tmp_path):
    r = schedule(random_layered(n=8, seed=2), "xla-dfs")
    out = tmp_path / "x.json"
    r.write(out)  # a JSON graph writes JSON whatever the name says
    assert json.loads(out.read_text())["format"] == "cpsched-schedule"


def test_frontier_table_records_pandas_plot(tmp_path):
    f = frontier(random_layered(n=10, seed=1), points=3, time_limit=2)
    assert isinstance(f, cpsched.Frontier)
    text = f.table()
    assert "makespan (" in text and "model" in text or "op times" in text
    recs = f.records()
    points = [x for x in recs if x["kind"] == "point"]
    assert len(points) == len(f.points) and {x["kind"] for x in recs} == {"point", "baseline"}
    assert all(x["peak_bytes"] is None or x["peak_bytes"] > 0 for x in recs)
    df = f.to_pandas()
    assert list(df.columns)[:3] == ["kind", "method", "status"] and len(df) == len(recs)
    assert repr(f) == text
    pytest.importorskip("matplotlib", reason="Frontier.plot needs matplotlib")
    png = f.plot(tmp_path / "f.png")
    assert open(png, "rb").read(4) == b"\x89PNG"


def test_compare_a_subset_of_methods(capsys, tmp_path):
    g = random_layered(n=12, seed=3)
    c = compare(g, ["xla-dfs", "cp"], time_limit=2)
    assert [row["method"] for row in c.rows] == ["given", "xla-dfs", "cp-memory"]
    with pytest.raises(InputError):
        compare(g, ["cp"], solvers=False)
    path = tmp_path / "g.json"
    path.write_text(json.dumps(cpsched.writers.json_graph.graph_to_dict(g)))
    rc = cli.main(["compare", str(path), "--methods", "xla-dfs,xla-list", "--json"])
    d = json.loads(capsys.readouterr()[0])
    assert rc == 0 and [row["method"] for row in d["rows"]] == ["given", "xla-dfs", "xla-list"]
    rc = cli.main(["compare", str(path), "--methods", "nope"])
    _, err = capsys.readouterr()
    assert rc == 2 and "nope" in err and err.count("\n") == 1
    rc = cli.main(["compare", str(path), "--methods", ","])
    _, err = capsys.readouterr()
    assert rc == 2 and err.count("\n") == 1


def test_compare_table_names_the_device_model(capsys):
    c = compare(str(MLP), ["xla-dfs"])
    head = c.table().splitlines()[1]
    # an XLA:CPU module: the cpu preset by default
    assert "makespan (cpu model)" in head and "exposed comm (cpu model)" in head
    c = compare(str(MLP), ["xla-dfs"], device="a100")
    assert "makespan (a100 model)" in c.table()


def test_write_async_collectives_module(tmp_path):
    demo = HLO_MODELS / "demo.hlo"
    g = cpsched.read(str(demo), async_collectives=True)
    if not g.meta.get("async_collectives"):
        pytest.skip("demo.hlo has no synchronous collective to split")
    r = schedule(g, "xla-dfs")
    out = tmp_path / "demo.async.hlo"
    r.write(out)
    text = out.read_text()
    assert "-start(" in text and "-done(" in text
    back = cpsched.read(str(out))
    assert (back.async_done >= 0).sum() >= 1
