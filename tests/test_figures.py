"""Figures and traces a researcher can use as they are: axes in B/KiB/MiB and ns/us/ms with
no offsets, the device model named on every time axis, a lower-bound line on memory plots,
titles that say whose order is drawn, no empty stream panels, one legend entry per distinct
heuristic point, and traces that can be merged (each order's processes get their own ids)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import cpsched
import cpsched.cost.timeline
import cpsched.plot
import cpsched.readers.files
import cpsched.writers.trace
from cpsched import cli
from cpsched.api import compare, schedule, simulate
from cpsched.plot import baseline_groups, byte_scale, time_scale
from cpsched.writers.trace import merge_traces, timeline_to_trace

# an all-reduce pair beside a compute chain (sizes in s), and the same without it
COLL = {
    "format": "cpsched-graph", "version": 1, "name": "coll",
    "ops": [{"name": "p", "opcode": "parameter", "kind": "parameter"},
            {"name": "a", "operands": ["p"], "flops": "1000000*s"},
            {"name": "b", "operands": ["p"], "flops": "1000000*s"},
            {"name": "ars", "opcode": "all-reduce-start", "kind": "async-start",
             "operands": ["a"],
             "collective": {"kind": "all-reduce", "bytes": "4096*s", "group_size": 8}},
            {"name": "ard", "opcode": "all-reduce-done", "kind": "async-done",
             "operands": ["ars"], "async_start": "ars"},
            {"name": "c", "operands": ["b"], "flops": "4000000*s"},
            {"name": "d", "operands": ["c"], "flops": "4000000*s"},
            {"name": "e", "operands": ["ard", "d"]}],
    "buffers": [{"op": "p", "size": "16", "users": ["a", "b"], "live_in": True,
                 "live_out": True},
                {"op": "a", "size": "100*s", "users": ["ars"]},
                {"op": "b", "size": "10*s", "users": ["c"]},
                {"op": "ars", "size": "100*s", "users": ["ard"]},
                {"op": "ard", "size": "100*s", "users": ["e"]},
                {"op": "c", "size": "50*s", "users": ["d"]},
                {"op": "d", "size": "5*s", "users": ["e"]},
                {"op": "e", "size": "1", "live_out": True}],
    "order": ["p", "a", "ars", "ard", "b", "c", "d", "e"]}


def _no_collectives() -> dict:
    return {"format": "cpsched-graph", "version": 1, "name": "plain",
            "ops": [{"name": "a", "flops": "1000000"}, {"name": "b", "flops": "1000000"},
                    {"name": "c", "operands": ["a", "b"], "flops": "1000000"}],
            "buffers": [{"op": "a", "size": "3000", "users": ["c"]},
                        {"op": "b", "size": "2000", "users": ["c"]},
                        {"op": "c", "size": "100", "live_out": True}],
            "order": ["a", "b", "c"]}


@pytest.fixture
def coll(tmp_path):
    p = tmp_path / "coll.json"
    p.write_text(json.dumps(COLL))
    return p


@pytest.mark.parametrize("module", [cpsched.plot, cpsched.writers.trace, cpsched.cost.timeline,
                                    cpsched.readers.files])
def test_docstring_examples_run(module):
    import doctest

    res = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert res.attempted > 0 and res.failed == 0


@pytest.mark.parametrize("largest, scale", [(900, (1, "B")), (5000, (1024, "KiB")),
                                            (3 * 2**30, (2**30, "GiB"))])
def test_byte_axis_shows_numbers_below_1024(largest, scale):
    assert byte_scale(largest) == scale
    assert 1 <= largest / scale[0] < 1024


@pytest.mark.parametrize("value, unit, want", [(3.3e-4, "s", "us"), (0.0123, "s", "ms"),
                                               (2.5, "s", "s"), (4e-8, "s", "ns"),
                                               (43000, "xla", "ms"), (7, "file", "units")])
def test_time_axis_unit_follows_the_figures(value, unit, want):
    factor, name = time_scale(value, unit)
    assert name == want
    if unit != "file":
        assert 1 <= value * factor < 1000


# -- figures (matplotlib) -------------------------------------------------------------------

mpl = pytest.importorskip("matplotlib", reason="figures need matplotlib (the plot extra)")


def _texts(ax) -> list[str]:
    ax.figure.canvas.draw()
    out = [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()]
    return out + [ax.xaxis.get_offset_text().get_text(), ax.yaxis.get_offset_text().get_text()]


def _legend(ax) -> list[str]:
    leg = ax.get_legend()
    return [t.get_text() for t in leg.get_texts()] if leg else []


def test_compare_figure_streams_of_the_input_and_cp_overlap(coll):
    c = compare(str(coll), ["xla-dfs", "cp-overlap"], scenarios=["s=2,8"], time_limit=3)
    fig = cpsched.plot.memory_figure(
        {n: cpsched.api.memory_profile(r) for n, r in c.results.items()},
        "t", c._streams_shown(), bound=c.bound)
    axes = fig.axes
    assert len(axes) == 3  # one memory panel per scenario, then the streams
    lanes = [t.get_text() for t in axes[-1].get_yticklabels()]
    assert any(t.startswith("given: compute") for t in lanes)
    assert any(t.startswith("cp-overlap: compute") for t in lanes)
    assert any(t.startswith("cp-overlap: comm") for t in lanes)
    xlabel = axes[-1].get_xlabel()
    assert "h100 model" in xlabel and xlabel.split("(")[1].split(",")[0] in ("ns", "us", "ms")
    for ax in axes:
        texts = _texts(ax)
        assert not any("e-" in t or "e+" in t or t.startswith("+") for t in texts), texts
    # the memory panels: bytes with a unit, the bound as a legend entry, each row's peak
    for ax, n in zip(axes[:2], c.scenarios.names):
        assert ax.get_ylabel() in ("live memory (B)", "live memory (KiB)")
        legend = _legend(ax)
        assert any(t.startswith("lower bound (any order)") for t in legend)
        assert {t.split(":")[0] for t in legend} >= {"given", "xla-dfs", "cp-overlap"}
        line = next(ln for ln in ax.get_lines() if ln.get_label().startswith("lower bound"))
        assert line.get_ydata()[0] * byte_scale(max(r.peak[n] for r in c.results.values())
                                                )[0] == pytest.approx(c.bound[n])
    mpl.pyplot.close(fig)


def test_no_streams_panel_without_collectives(tmp_path):
    c = compare(json.dumps(_no_collectives()), ["xla-dfs", "cp"], time_limit=2)
    fig = cpsched.plot.memory_figure(
        {n: cpsched.api.memory_profile(r) for n, r in c.results.items()}, "t",
        c._streams_shown(), bound=c.bound)
    assert len(fig.axes) == 1  # a lone compute stream is one solid bar: not drawn
    mpl.pyplot.close(fig)


def test_result_plot_names_the_method_and_draws_the_bound(tmp_path, monkeypatch):
    seen = {}
    monkeypatch.setattr(cpsched.api, "plot_memory",
                        lambda profiles, path, **kw: seen.update(kw, names=list(profiles)))
    r = schedule(cpsched.generators.random_layered(n=12, seed=3), time_limit=2)
    r.plot(tmp_path / "m.png")
    assert "cp's order" in seen["title"] and seen["names"] == ["cp"]
    assert seen["bound"] == dict(r.bound)
    simulate(r.graph).plot(tmp_path / "g.png")
    assert "the input's own order" in seen["title"] or "a topological order" in seen["title"]


def test_simulate_plot_title_names_the_schedule_method(capsys, coll, tmp_path, monkeypatch):
    out = tmp_path / "cp.json"
    assert cli.main(["schedule", str(coll), "--dim", "s=2", "-o", str(out),
                     "--time-limit", "2"]) == 0
    seen = {}
    monkeypatch.setattr(cli, "plot_memory", lambda profiles, path, **kw: seen.update(
        kw, names=list(profiles)))
    rc = cli.main(["simulate", str(coll), "--dim", "s=2", "--schedule", str(out), "--plot",
                   str(tmp_path / "p.png")])
    assert rc == 0
    assert seen["names"] == ["cp"] and "cp's order (cp.json)" in seen["title"]
    assert seen["bound"] and all(v > 0 for v in seen["bound"].values())
    rc = cli.main(["simulate", str(coll), "--dim", "s=2", "--plot", str(tmp_path / "q.png")])
    assert rc == 0 and "the input's own order" in seen["title"]
    capsys.readouterr()


def test_png_is_written(coll, tmp_path):
    c = compare(str(coll), ["xla-dfs"], scenarios=["s=2"], time_limit=2)
    path = c.plot(tmp_path / "c.png")
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_frontier_labels_do_not_collide():
    rows = [{"method": m, "peak_bytes": p, "makespan": t, "exposed_comm": 0.0}
            for m, p, t in (("given", 100, 3e-4), ("xla-list", 100, 3e-4),
                            ("xla-dfs", 120, 3e-4), ("lhs", 150, 2e-4))]
    points = [{"budget_bytes": b, "status": "OPTIMAL", "peak_bytes": b, "makespan": t,
               "makespan_bound": t * 0.9, "exposed_comm": 0.0}
              for b, t in ((90, 4e-4), (160, 2e-4))]
    assert baseline_groups(rows) == [(["given", "xla-list"], 100, 3e-4),
                                     (["xla-dfs"], 120, 3e-4), (["lhs"], 150, 2e-4)]
    fig = cpsched.plot.frontier_figure(points, rows, title="g", unit="s", model="h100 model")
    ax = fig.axes[0]
    assert len(ax.texts) == 0  # no labels printed over the points: a legend
    legend = _legend(ax)
    assert "given, xla-list" in legend and len(legend) == len(set(legend)) == 5
    assert ax.get_ylabel() == "makespan (us, h100 model)" and "B)" in ax.get_xlabel()
    assert not any("e-" in t for t in _texts(ax))
    mpl.pyplot.close(fig)


# -- traces ---------------------------------------------------------------------------------


def test_simulate_trace_of_the_input_order(capsys, coll, tmp_path):
    trace = tmp_path / "given.json"
    rc = cli.main(["simulate", str(coll), "--dim", "s=2", "--trace", str(trace)])
    out, _ = capsys.readouterr()
    assert rc == 0 and "h100 model" in out
    data = json.loads(trace.read_text())
    names = {e["args"]["name"] for e in data["traceEvents"] if e.get("name") == "process_name"}
    assert names == {"coll [s=2] given"}
    assert data["otherData"]["times"] == "h100 model"
    xs = {e["name"] for e in data["traceEvents"] if e.get("ph") == "X"}
    assert {"a", "b", "c", "d", "ars", "ard"} <= xs


def test_traces_of_two_orders_merge(coll, tmp_path):
    g = cpsched.read(str(coll))
    sc = cpsched.api.scenarios_for(g, ["s=2,8"])
    given = simulate(g, scenarios=sc)
    cp = schedule(g, "cp-overlap", scenarios=sc, time_limit=2)
    a = timeline_to_trace(cpsched.api.timeline(given), label="given")
    b = timeline_to_trace(cpsched.api.timeline(cp), label="cp-overlap")
    pids_a = {e["pid"] for e in a["traceEvents"]}
    pids_b = {e["pid"] for e in b["traceEvents"]}
    assert len(pids_a) == len(pids_b) == 2 and not pids_a & pids_b
    flows = [{e["id"] for e in t["traceEvents"] if e.get("ph") in "stf"} for t in (a, b)]
    assert flows[0] and flows[1] and not flows[0] & flows[1]
    merged = merge_traces([a, b])
    assert len(merged["traceEvents"]) == len(a["traceEvents"]) + len(b["traceEvents"])
    # the same order traced twice gets the same ids (a trace is reproducible)
    again = timeline_to_trace(cpsched.api.timeline(given), label="given")
    assert again == a


def test_remat_trace_has_the_plans_clones(capsys, tmp_path):
    from helpers import train_chain

    g = train_chain(L=6, size=100, dur=1.0)
    path = tmp_path / "chain.json"
    path.write_text(json.dumps(cpsched.writers.json_graph.graph_to_dict(g)))
    out, trace = tmp_path / "plan.json", tmp_path / "t.json"
    rc = cli.main(["schedule", str(path), "--objective", "remat", "--budget", "70%",
                   "--keep-order", "--time-limit", "5", "-o", str(out), "--trace", str(trace)])
    text, err = capsys.readouterr()
    assert rc == 0, err
    data = json.loads(trace.read_text())
    xs = [e["name"] for e in data["traceEvents"] if e.get("ph") == "X"]
    plan = json.loads(out.read_text())
    assert any(plan["plan_table"].values())  # 70 %: something is recomputed
    assert any(x.endswith(".remat1") for x in xs)
    assert f"wrote {trace}" in text
    assert np.isfinite([e["ts"] for e in data["traceEvents"] if "ts" in e]).all()


def test_simulate_trace_device_and_profile(capsys, coll, tmp_path):
    traces = {}
    for name, extra in (("h100", []), ("a100", ["--device", "a100"])):
        t = tmp_path / f"{name}.json"
        assert cli.main(["simulate", str(coll), "--dim", "s=8", "--trace", str(t), *extra]) == 0
        traces[name] = json.loads(t.read_text())
    assert traces["a100"]["otherData"]["times"] == "a100 model"
    assert traces["a100"]["otherData"]["makespan"] != traces["h100"]["otherData"]["makespan"]
    prof = tmp_path / "prof.json"
    prof.write_text(json.dumps({"d": 5000.0}))  # d measured at 5 ms
    t = tmp_path / "p.json"
    assert cli.main(["simulate", str(coll), "--dim", "s=8", "--trace", str(t),
                     "--profile", str(prof)]) == 0
    d = next(e for e in json.loads(t.read_text())["traceEvents"]
             if e.get("ph") == "X" and e["name"] == "d")
    assert d["dur"] == pytest.approx(5000.0)
    capsys.readouterr()
