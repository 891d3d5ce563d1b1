"""``cpsched sweep``: spec errors are one line with their place, a sweep writes one row per
solve with the validated peak, a rerun skips every row, and a sweep cut short (a torn last
line, a stop after k rows, kill -9 of the whole process group) resumes to the full table
with no key twice. Runs on the local process pool (no ray needed)."""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from cpsched import api
from cpsched.cli import main
from cpsched.sweep import load_spec
from cpsched.sweep.table import COLUMNS, HEADER

REPO = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, PYTHONPATH=str(REPO))

# given order 210, best order (a c b d e) 120
TINY = {"format": "cpsched-graph", "version": 1, "name": "tiny",
        "ops": [{"name": "a"}, {"name": "b"}, {"name": "c", "operands": ["a"]},
                {"name": "d", "operands": ["b"]}, {"name": "e", "operands": ["c", "d"]}],
        "buffers": [{"op": "a", "size": "100", "users": ["c"]},
                    {"op": "b", "size": "100", "users": ["d"]},
                    {"op": "c", "size": "10", "users": ["e"]},
                    {"op": "d", "size": "10", "users": ["e"]},
                    {"op": "e", "size": "1", "live_out": True}],
        "order": ["a", "b", "c", "d", "e"]}
# a chain whose sizes scale with s: peak 2 * 8 * s at the biggest step
CHAIN = {"format": "cpsched-graph", "version": 1, "name": "chain",
         "ops": [{"name": "x"}, {"name": "y", "operands": ["x"]},
                 {"name": "z", "operands": ["y"]}],
         "buffers": [{"op": "x", "size": "8*s", "users": ["y"]},
                     {"op": "y", "size": "8*s", "users": ["z"]},
                     {"op": "z", "size": "4", "live_out": True}]}


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def rows(path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture
def graphs(tmp_path):
    tiny = tmp_path / "tiny.json"
    tiny.write_text(json.dumps(TINY))
    other = dict(TINY, name="tiny2", order=["b", "d", "a", "c", "e"])
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "tiny2.json").write_text(json.dumps(other))
    return tmp_path


def spec(tmp_path, text: str, name: str = "s.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


SMALL = 'graphs = ["tiny.json", "g/*.json"]\nmethods = ["cp", "xla-dfs"]\ntime_limits = [2]\n'


# -- spec errors ------------------------------------------------------------------------------

BAD = [
    ('graphs = ["tiny.json"\nmethods = ["cp"]\n', "s.toml:2:", "bad TOML"),
    ('graphs = ["tiny.json"]\nmethods = ["cp"]\ngrpahs = 1\n', "s.toml:3: grpahs", "unknown key"),
    ('graphs = ["tiny.json"]\nmethods = ["cp",\n  "cq"]\n', "s.toml:3: methods[1]",
     "unknown method 'cq'"),
    ('graphs = ["tiny.json", "nope/*.json"]\nmethods = ["cp"]\n', "s.toml:1: graphs[1]",
     "matches no file"),
    ('graphs = ["layered:n=10,m=3"]\nmethods = ["cp"]\n', "graphs[0]", "no parameter 'm'"),
    ('graphs = ["tiny.json"]\nmethods = ["cp"]\ntime_limits = [1, -2]\n',
     "s.toml:3: time_limits[1]", "above 0"),
    ('graphs = ["tiny.json"]\nmethods = ["cp"]\nseeds = ["x"]\n', "seeds[0]", "range"),
    ('graphs = ["tiny.json"]\nmethods = ["remat-xla"]\n', "methods", "needs a budget"),
    ('graphs = ["tiny.json"]\nmethods = ["cp"]\nbudgets = ["90%"]\n', "budgets",
     "no method takes a budget"),
    ('graphs = ["tiny.json"]\nmethods = ["remat-xla"]\nbudgets = ["lots"]\n', "budgets[0]", ""),
    ('graphs = ["tiny.json"]\nmethods = ["cp", "cp"]\n', "methods[1]", "listed twice"),
    ('graphs = ["tiny.json"]\nmethods = ["cp"]\nscenarios = ["s=0"]\n', "scenarios[0]", ""),
    ('methods = ["cp"]\n', "graphs", "required"),
    ('graphs = ["tiny.json"]\nmethods = [{objective = "minimax"}]\n', "methods[0]",
     "method = NAME"),
    ('graphs = ["tiny.json"]\nmethods = [{method = "xla-dfs", objective = "overlap"}]\n',
     "methods[0]", "solved by cp-overlap"),
    ('graphs = ["tiny.json"]\nmethods = [""]\n', "methods[0]", "method = NAME"),
    ('graphs = ["tiny.json"]\nmethods = ["cp"]\n[options]\ntime_limit = 3\n', "s.toml:4: options",
     "set by the spec's time_limits"),
]


@pytest.mark.parametrize("text,place,reason", BAD)
def test_spec_errors_are_one_line_with_the_place(capsys, graphs, text, place, reason):
    p = spec(graphs, text)
    rc, out, err = run(capsys, "sweep", p, "--dry-run")
    assert rc == 2 and out == "" and err.count("\n") == 1, err
    assert place in err and reason in err, err
    assert "Traceback" not in err and not (graphs / "s.csv").exists()


def test_yaml_needs_pyyaml_or_reads_like_toml(capsys, graphs):
    p = spec(graphs, "graphs: [tiny.json]\nmethods: [xla-dfs]\n", "s.yaml")
    rc, out, err = run(capsys, "sweep", p, "--dry-run")
    if importlib.util.find_spec("yaml") is None:
        assert rc == 2 and err.count("\n") == 1 and "PyYAML" in err
    else:
        assert rc == 0 and "1 solves" in out
    bad = spec(graphs, "graphs: [tiny.json]\nmethods: cp\n  x: [\n", "t.yaml")
    rc, _, err = run(capsys, "sweep", bad, "--dry-run")
    assert rc == 2 and err.count("\n") == 1 and "t.yaml" in err


def test_other_suffix_is_refused(capsys, graphs):
    rc, _, err = run(capsys, "sweep", spec(graphs, SMALL, "s.json"), "--dry-run")
    assert rc == 2 and ".toml" in err


def test_cross_product_drops_settings_a_method_ignores(graphs):
    p = spec(graphs, 'graphs = ["layered:n=12,seed=0..2", "tiny.json"]\n'
             'methods = ["cp", "xla-dfs", {method = "remat-xla", label = "rx"}]\n'
             'time_limits = [1, 2]\nseeds = "0..1"\nworkers = [1, 2]\nbudgets = ["90%", 500]\n')
    s = load_spec(str(p))
    tasks = s.tasks()
    by = Counter(t.method.label for t in tasks)
    # cp: 4 graphs x 2 limits x 2 seeds x 2 workers; xla-dfs once per graph; remat-xla: its
    # CP-SAT settings and budgets, one worker (it is not a CP-SAT method)
    assert by == {"cp": 4 * 2 * 2 * 2, "xla-dfs": 4, "rx": 4 * 2 * 2 * 2}
    assert len({t.key for t in tasks}) == len(tasks)
    assert {t.graph.label for t in tasks} >= {"layered:n=12,seed=2", "tiny.json"}


def test_key_follows_the_graph_content_method_and_options(graphs):
    p = spec(graphs, 'graphs = ["tiny.json"]\nmethods = ["cp"]\ntime_limits = [1]\n')
    k1 = load_spec(str(p)).tasks()[0].key
    assert load_spec(str(p)).tasks()[0].key == k1
    p.write_text('graphs = ["tiny.json"]\nmethods = ["cp"]\ntime_limits = [2]\n')
    assert load_spec(str(p)).tasks()[0].key != k1
    p.write_text('graphs = ["tiny.json"]\nmethods = ["cp"]\ntime_limits = [1]\n')
    (graphs / "tiny.json").write_text(json.dumps(dict(TINY, name="changed")))
    assert load_spec(str(p)).tasks()[0].key != k1


# -- a sweep, rerun, resume -------------------------------------------------------------------


def test_small_sweep_writes_validated_rows_and_rerun_skips_all(capsys, graphs):
    p = spec(graphs, SMALL)
    rc, out, err = run(capsys, "sweep", p, "--jobs", "2")
    assert rc == 0, err
    table = graphs / "s.csv"
    assert table.read_text().startswith(HEADER)
    rs = rows(table)
    assert len(rs) == 4 and len({r["key"] for r in rs}) == 4
    assert {(r["graph"], r["method"]) for r in rs} == {
        (g, m) for g in ("tiny.json", "g/tiny2.json") for m in ("cp", "xla-dfs")}
    for r in rs:
        assert r["status"] != "ERROR" and r["n_ops"] == "5" and r["error"] == ""
        # the row's peak is what the simulator gives for the method's own schedule
        expect = api.schedule(str(graphs / r["graph"]), r["method"], time_limit=2, workers=1)
        assert int(r["peak_bytes"]) == expect.peak["static"]
    cp = [r for r in rs if r["method"] == "cp"]
    assert {int(r["peak_bytes"]) for r in cp} == {120} and {r["status"] for r in cp} == {"OPTIMAL"}
    assert all(r["time_limit"] == "2.0" and r["seed"] == "0" for r in cp)
    assert "4 solves; 0 were in" in out and "4 ran now (0 failed)" in out
    summary = (graphs / "s.md").read_text()
    assert "| tiny.json | 5 | cp |" in summary and "**120 B**" in summary
    before = table.read_bytes()
    rc, out, _ = run(capsys, "sweep", p)
    assert rc == 0 and "4 were in" in out and "0 ran now" in out
    assert table.read_bytes() == before


def test_a_failing_solve_is_a_row_not_the_end_of_the_sweep(capsys, graphs):
    (graphs / "chain.json").write_text(json.dumps(CHAIN))  # symbolic: needs scenarios
    (graphs / "broken.json").write_text('{"format": "cpsched-graph", "ops": [')
    p = spec(graphs, 'graphs = ["chain.json", "broken.json", "tiny.json"]\n'
             'methods = ["xla-dfs"]\n')
    rc, out, err = run(capsys, "sweep", p)
    assert rc == 0, err
    by = {r["graph"]: r for r in rows(graphs / "s.csv")}
    assert by["tiny.json"]["status"] == "HEURISTIC"
    assert by["chain.json"]["status"] == "ERROR" and "symbolic dims s" in by["chain.json"]["error"]
    assert by["broken.json"]["status"] == "ERROR" and "JSON" in by["broken.json"]["error"]
    assert "2 failed" in out


def test_scenarios_give_the_heaviest_scenarios_peak(capsys, graphs):
    (graphs / "chain.json").write_text(json.dumps(CHAIN))
    p = spec(graphs, 'graphs = ["chain.json"]\nmethods = ["xla-dfs"]\n'
             'scenarios = [{s = [2, 8]}, "s=3"]\n')
    assert run(capsys, "sweep", p)[0] == 0
    got = {r["options"]: (r["scenario"], int(r["peak_bytes"])) for r in rows(graphs / "s.csv")}
    assert sorted(got.values()) == [("s=3", 16 * 3), ("s=8", 16 * 8)]


def test_torn_last_line_is_trimmed_and_the_sweep_completes(capsys, graphs):
    p = spec(graphs, SMALL)
    assert run(capsys, "sweep", p)[0] == 0
    table = graphs / "s.csv"
    full = rows(table)
    data = table.read_bytes()
    last = data.rstrip(b"\n").rfind(b"\n") + 1
    table.write_bytes(data[: last + 30])  # the last row cut in the middle
    rc, out, err = run(capsys, "sweep", p)
    assert rc == 0 and "trimmed a torn last line" in err and "1 ran now" in out
    again = rows(table)
    assert len(again) == 4 and Counter(r["key"] for r in again) == Counter(r["key"] for r in full)
    # only the header left, itself torn
    table.write_bytes(HEADER.encode()[:10])
    rc, out, _ = run(capsys, "sweep", p)
    assert rc == 0 and "4 ran now" in out and len(rows(table)) == 4


def test_stop_after_k_rows_then_resume_without_duplicates(capsys, graphs):
    p = spec(graphs, 'graphs = ["layered:n=10,seed=0..5"]\nmethods = ["xla-dfs", "xla-list"]\n')
    rc, out, _ = run(capsys, "sweep", p, "--max-solves", "5")
    assert rc == 0 and len(rows(graphs / "s.csv")) == 5
    rc, out, _ = run(capsys, "sweep", p)
    assert rc == 0 and "5 were in" in out and "7 ran now" in out
    keys = [r["key"] for r in rows(graphs / "s.csv")]
    assert len(keys) == 12 and len(set(keys)) == 12


def test_kill_9_halfway_resumes_to_the_full_table(graphs):
    n_graphs = 60
    p = spec(graphs, f'graphs = ["layered:n=40,seed=0..{n_graphs - 1}"]\n'
             'methods = ["xla-dfs", "xla-list", "bladedisc", "cp"]\ntime_limits = [0.5]\n')
    table = graphs / "s.csv"
    proc = subprocess.Popen([sys.executable, "-m", "cpsched", "sweep", str(p), "--jobs", "2"],
                            env=ENV, cwd=graphs, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if table.exists() and table.read_text().count("\n") > 40:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the sweep finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)  # the driver and its pool, at once
    proc.wait()
    done = len(rows(table))
    assert 0 < done < 4 * n_graphs
    r = subprocess.run([sys.executable, "-m", "cpsched", "sweep", str(p), "--jobs", "2"],
                       env=ENV, cwd=graphs, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    keys = [row["key"] for row in rows(table)]
    assert len(keys) == 4 * n_graphs and len(set(keys)) == len(keys)
    assert f"{4 * n_graphs - done} ran now" in r.stdout or "trimmed" in r.stderr


def test_outputs_never_replace_an_input(capsys, graphs):
    p = spec(graphs, SMALL)
    before = (graphs / "tiny.json").read_bytes()
    for args in (["-o", graphs / "tiny.json"], ["--summary", p], ["-o", graphs / "t.csv",
                                                                  "--summary", graphs / "t.csv"]):
        rc, _, err = run(capsys, "sweep", p, *args)
        assert rc == 2 and err.count("\n") == 1, err
    assert (graphs / "tiny.json").read_bytes() == before and p.read_text() == SMALL


def test_a_table_of_something_else_is_refused(capsys, graphs):
    other = graphs / "other.csv"
    other.write_text("a,b\n1,2\n")
    rc, _, err = run(capsys, "sweep", spec(graphs, SMALL), "-o", other)
    assert rc == 2 and "not a cpsched sweep table" in err
    assert other.read_text() == "a,b\n1,2\n"


def test_columns_are_the_documented_ones():
    assert COLUMNS[:3] == ("key", "graph", "n_ops") and "error" in COLUMNS
    assert {"method", "options", "seed", "time_limit", "status", "peak_bytes", "bound", "gap",
            "makespan", "wall_s"} <= set(COLUMNS)


@pytest.mark.parametrize("sig,code,group", [(signal.SIGINT, 130, True),
                                            (signal.SIGTERM, 143, False)])
def test_a_signal_stops_the_sweep_cleanly_and_it_resumes(graphs, sig, code, group):
    # Ctrl-C reaches the whole process group, SIGTERM only the driver
    p = spec(graphs, 'graphs = ["layered:n=30,seed=0..99"]\n'
             'methods = ["xla-dfs", "xla-list", "bladedisc", "cp"]\ntime_limits = [0.5]\n')
    table = graphs / "s.csv"
    # a background job inherits SIGINT ignored (as a shell's `cmd &` does): restore it
    proc = subprocess.Popen([sys.executable, "-m", "cpsched", "sweep", str(p), "--jobs", "2"],
                            env=ENV, cwd=graphs, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if table.exists() and table.read_text().count("\n") > 20:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the sweep ended before the signal"
    (os.killpg if group else os.kill)(proc.pid, sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "Traceback" not in err and "run the same command again" in out
    done = len(rows(table))
    assert f"{done} of 400 rows" in out
    r = subprocess.run([sys.executable, "-m", "cpsched", "sweep", str(p)], env=ENV, cwd=graphs,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and f"{done} were in" in r.stdout
    keys = [row["key"] for row in rows(table)]
    assert len(keys) == 400 and len(set(keys)) == 400


def test_parquet_table_needs_pyarrow(capsys, graphs):
    p = spec(graphs, SMALL)
    out = graphs / "r.parquet"
    rc, _, err = run(capsys, "sweep", p, "-o", out)
    if importlib.util.find_spec("pyarrow") is None:
        assert rc == 2 and err.count("\n") == 1 and "pyarrow" in err
        assert not out.exists() and not (graphs / "r.parquet.journal.csv").exists()
    else:
        import pyarrow.parquet as pq

        assert rc == 0, err
        t = pq.read_table(out)
        assert t.num_rows == 4 and t.column_names == list(COLUMNS)
        assert len(rows(graphs / "r.parquet.journal.csv")) == 4
