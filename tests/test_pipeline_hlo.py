"""``cpsched pipeline --from-hlo``: the collective-permute placement of a ppermute pipeline
program's loop bodies (corpus: pipeline_circular, a circular pipeline in a lax.scan) by
cp-overlap against XLA's order and cpsched's model of XLA's latency-hiding scheduler; the
module written back with start/done pairs is read back independently here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cpsched.cli import main
from cpsched.core.graph import OpKind
from cpsched.core.scenarios import static
from cpsched.cost.model import estimate, load_device
from cpsched.cost.timeline import simulate_timeline
from cpsched.pipeline.from_hlo import permute_loops, place_permutes
from cpsched.readers.hlo.convert import module_graphs, read_hlo_module
from cpsched.readers.hlo.parser import parse_hlo_text

CORPUS = Path(__file__).resolve().parents[1] / "models" / "hlo" / "corpus"
PIPE = CORPUS / "pipeline_circular.hlo.gz"


@pytest.fixture(scope="module")
def report():
    return place_permutes(str(PIPE), time_limit=4)


def test_finds_both_loop_bodies_with_their_trip_counts():
    loops = permute_loops(read_hlo_module(str(PIPE)))
    assert len(loops) == 2  # the forward scan and its transpose
    manifest = json.loads((CORPUS / "manifest.json").read_text())["programs"]["pipeline_circular"]
    bodies = manifest["variants"]["default"]["computations"]
    for body, loop, trips in loops:
        assert bodies[body]["role"] == "while-body"
        assert bodies[body]["opcodes"]["collective-permute"] == 1
        assert loop.startswith("while") and trips == 19  # 19 ticks in the manifest


def test_cp_hides_at_least_what_xla_and_lhs_hide_within_the_budget(report):
    for b in report.bodies:
        assert b.cp_peak <= b.budget == b.xla_peak  # default budget: XLA's peak of the body
        assert b.cp_exposed <= b.lhs_exposed + 1e-12
        assert b.cp_exposed <= b.xla_exposed + 1e-12
        assert b.cp_makespan <= b.xla_makespan + 1e-12
        assert b.pairs, "every body has its collective-permute as a pair"
        for r in b.pairs:
            assert r.xla_distance == 1  # XLA's order: the split pair back to back
            assert r.xla_hidden == 0.0
            assert r.cp_distance >= r.xla_distance
            assert 0.0 <= r.cp_hidden <= r.transfer + 1e-12
        # exposed over the loop = per iteration x trip count
        d = b.to_dict()
        assert d["cp_exposed_total"] == pytest.approx(b.cp_exposed * 19)
        assert d["xla_exposed_total"] == pytest.approx(b.xla_exposed * 19)


def test_written_module_has_cpsched_placement_read_back_independently(report):
    """Parse the written text afresh: each body holds a collective-permute-start/-done pair
    at cp-overlap's distance, and its timeline has cp-overlap's exposed communication."""
    graphs = module_graphs(parse_hlo_text(report.text))
    assert "is_scheduled=true" in report.text.split("\n", 1)[0]
    assert report.text.count("collective-permute-start(") == 2
    for b in report.bodies:
        g = graphs[b.body]
        assert g.original_order is not None
        order = list(g.original_order)
        pos = {op: k for k, op in enumerate(order)}
        starts = [i for i in range(g.n_ops) if int(g.kinds[i]) == OpKind.ASYNC_START]
        assert len(starts) == len(b.pairs) == 1
        s = starts[0]
        assert pos[int(g.async_done[s])] - pos[s] == b.pairs[0].cp_distance
        sc = static()
        tl = simulate_timeline(g, order, estimate(g, load_device("h100"), sc), sc)[0]
        assert float(tl.exposed_comm) == pytest.approx(b.cp_exposed, abs=1e-12)


def cli(*args):
    return main(list(args))


def test_cli_table_json_and_output(tmp_path, capsys):
    out = tmp_path / "placed.hlo"
    rc = cli("pipeline", "--from-hlo", str(PIPE), "--time-limit", "3", "-o", str(out))
    text = capsys.readouterr().out
    assert rc == 0
    assert text.count("loop body ") == 2 and "cp-overlap" in text and "ppermute.16" in text
    assert f"wrote {out}" in text
    assert out.read_text().count("collective-permute-done(") == 2
    rc = cli("pipeline", "--from-hlo", str(PIPE), "--time-limit", "3", "--json")
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and len(data["bodies"]) == 2
    for b in data["bodies"]:
        assert {"xla_exposed", "lhs_exposed", "cp_exposed", "cp_exposed_total"} <= set(b)
        assert b["pairs"][0]["collective"].startswith("ppermute")


def test_cli_budget_and_device(capsys):
    rc = cli(
        "pipeline",
        "--from-hlo",
        str(PIPE),
        "--time-limit",
        "3",
        "--json",
        "--budget",
        "1.6MiB",
        "--device",
        "a100",
    )
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and data["device"] == "a100"
    for b in data["bodies"]:
        assert b["budget"] == int(1.6 * 2**20)
        assert b["cp_peak"] <= b["budget"]
    rc = cli("pipeline", "--from-hlo", str(PIPE), "--time-limit", "3", "--json")
    h100 = json.loads(capsys.readouterr().out)
    # the cost model is the device's: another link gives another transfer time
    assert h100["bodies"][0]["pairs"][0]["transfer"] != data["bodies"][0]["pairs"][0]["transfer"]


@pytest.mark.parametrize(
    "args,msg",
    [
        (("--from-hlo", str(PIPE), "--stages", "4"), "--stages does not apply"),
        (
            ("--from-hlo", str(PIPE), "--budget", "1000", "--time-limit", "2"),
            "no order within the budget",
        ),
        (("--from-hlo", str(PIPE), "--budget", "lots"), "budget 'lots'"),
        (("--from-hlo", str(CORPUS / "while_cg.hlo.gz")), "no while loop body with a collective"),
        (("--from-hlo", str(PIPE), "-o", str(PIPE)), "refusing to overwrite"),
        (("-p", "4", "-m", "8", "--output", "x.hlo"), "--output applies to --from-hlo only"),
        (("-p", "4"), "--stages and --microbatches are required"),
    ],
)
def test_cli_from_hlo_errors_one_line_exit_2(args, msg, capsys):
    before = PIPE.read_bytes()
    rc = cli("pipeline", *args)
    err = capsys.readouterr().err
    assert rc == 2
    assert msg in err and err.count("\n") == 1
    assert PIPE.read_bytes() == before


def test_already_async_input_keeps_its_pairs_and_xla_distance_is_theirs(report):
    """The written module fed back in: its bodies' pairs are async already, so the input's
    order is cpsched's placement; it is measured as it stands and re-sequenced in place."""
    again = place_permutes(parse_hlo_text(report.text), time_limit=3)
    before = {b.body: b for b in report.bodies}
    for b in again.bodies:
        old = before[b.body]
        assert b.xla_exposed == pytest.approx(old.cp_exposed, abs=1e-12)
        assert b.cp_exposed <= b.xla_exposed + 1e-12
        assert b.cp_peak <= b.budget
        assert [r.xla_distance for r in b.pairs] == [r.cp_distance for r in old.pairs]
    graphs = module_graphs(parse_hlo_text(again.text))
    for b in again.bodies:
        g = graphs[b.body]
        assert g.original_order is not None
        assert [g.op_names[i] for i in g.original_order] == b.cp_order
