"""Units everywhere: bytes in KiB/MiB/GiB in tables, messages and progress lines (the exact
count beside a figure a user may type back), sizes with units accepted where bytes are asked
for (``pipeline --act 2GiB``), and every time column naming the device model that made it."""

from __future__ import annotations

import io
import json
import re

import pytest

from cpsched import cli
from cpsched.api import compare, frontier, schedule
from cpsched.core.errors import CpschedError
from cpsched.core.units import format_bytes_exact
from cpsched.generators import random_layered
from cpsched.pipeline.problem import PipelineProblem

RAW_BYTES = re.compile(r"\b\d{5,}\b(?! B\))")  # a long bare number, not the exact "(12,345 B)"


def run(capsys, *argv):
    rc = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_exact_figure_beside_the_human_one():
    assert format_bytes_exact(100) == "100 B"
    assert format_bytes_exact(3 * 2**20 + 1) == "3.00 MiB (3,145,729 B)"


def test_pipeline_act_and_cap_take_sizes(capsys):
    rc, out, err = run(capsys, "pipeline", "-p", "4", "-m", "8", "--act", "2GiB",
                       "--memory-cap", "9GiB", "--method", "1f1b")
    assert rc == 0, err
    assert "8.00 GiB, 6.00 GiB, 4.00 GiB, 2.00 GiB (cap 9.00 GiB)" in out
    assert "makespan (--costs units)" in out and not RAW_BYTES.search(out)
    d = json.loads(run(capsys, "pipeline", "-p", "4", "-m", "8", "--act", "2GiB",
                       "--method", "1f1b", "--json")[1])
    assert d["peak_activation"][0] == 4 * 2 * 2**30  # the JSON keeps exact bytes
    assert PipelineProblem(p=2, m=2, act=("512MB",)).act == (512 * 10**6,) * 2
    # without --act each microbatch's activations count one
    rc, out, _ = run(capsys, "pipeline", "-p", "2", "-m", "4", "--method", "1f1b")
    assert rc == 0 and "2 act, 1 act" in out and "act gives their bytes" in out
    rc, _, err = run(capsys, "pipeline", "-p", "2", "-m", "4", "--act", "2XB")
    assert rc == 2 and err.count("\n") == 1


def test_pipeline_over_cap_message_in_bytes(capsys, tmp_path):
    rc, _, err = run(capsys, "pipeline", "-p", "4", "-m", "8", "--act", "2GiB", "--memory-cap",
                     "3GiB", "--method", "1f1b", "--csv", tmp_path / "x.csv")
    assert rc == 2 and "8.00 GiB" in err and not (tmp_path / "x.csv").exists()


def test_budget_messages_in_human_bytes():
    g = random_layered(n=40, seed=4)
    with pytest.raises(CpschedError) as e:
        schedule(g, "cp-remat", budget="1KiB", time_limit=3)
    text = str(e.value)
    assert "1.00 KiB (1,024 B)" in text and "KiB" in text.split("minimum")[1]
    assert not RAW_BYTES.search(text.replace("(1,024 B)", ""))


def test_progress_line_shows_the_peak_in_bytes(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    show = cli._progress_printer(peak_bytes=True)
    show(3 * 2**20, 2 * 2**20, 1 / 3, 1.5)
    assert "peak 3.00 MiB  bound 2.00 MiB  gap 33.33 %" in err.getvalue()
    show = cli._progress_printer(peak_bytes=False)
    show(1200, 1000, 1 / 6, 1.5)
    assert "(model units)" in err.getvalue().splitlines()[-1]


def test_frontier_progress_in_bytes():
    lines = []
    frontier(random_layered(n=10, seed=1), points=2, time_limit=1, progress=lines.append)
    budgets = [ln for ln in lines if ln.startswith("point ")]
    assert budgets and all(re.search(r"budget [\d.]+ (B|KiB|MiB)", ln) for ln in budgets)


def test_time_columns_name_the_device_model(capsys, tmp_path):
    g = random_layered(n=12, seed=3)
    c = compare(g, ["xla-dfs"])
    d = c.to_dict()
    assert d["time_model"] == c.model
    path = tmp_path / "g.json"
    from cpsched.writers.json_graph import graph_to_dict

    path.write_text(json.dumps(graph_to_dict(g)))
    rc, out, _ = run(capsys, "compare", path, "--methods", "xla-dfs", "--csv")
    head, *rows = out.splitlines()
    assert rc == 0 and head.endswith(",time_model") and rows[0].endswith(c.model)
    f = frontier(g, points=2, time_limit=1)
    assert f"makespan ({f.settings['model']})" in f.table()
