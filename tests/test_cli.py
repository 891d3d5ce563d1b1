"""The command line end to end: outputs, --json fields, one-line errors, no clobbering."""

import json
import subprocess
import sys

import pytest

from cpsched.cli import main

RLG100 = "peer-cases/moccasin/random_layered_n100_w0.27_nlv0.75_ed0.2_scd0.14.json"


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_info_json_fields(capsys, shared_dir):
    rc, out, _ = run(capsys, "info", str(shared_dir / RLG100), "--json")
    assert rc == 0
    d = json.loads(out)
    assert d["ops"] == 100
    assert d["peak_bytes"] == {"static": 46319}
    assert 0 < d["lower_bound_bytes"]["static"] <= 46319
    assert d["peak_op"]["static"]


def test_simulate_and_convert_roundtrip(capsys, shared_dir, tmp_path):
    src = str(shared_dir / RLG100)
    out_json = str(tmp_path / "g.json")
    assert run(capsys, "convert", src, "-o", out_json)[0] == 0
    rc, out, _ = run(capsys, "simulate", out_json, "--json")
    assert rc == 0 and json.loads(out)["peak_bytes"] == {"static": 46319}


def test_simulate_with_schedule_file(capsys, tmp_path):
    g = {"format": "cpsched-graph", "version": 1, "name": "t",
         "ops": [{"name": "a"}, {"name": "b"}, {"name": "c", "operands": ["a", "b"]}],
         "buffers": [{"op": "a", "size": "10", "users": ["c"]},
                     {"op": "b", "size": "20", "users": ["c"]},
                     {"op": "c", "size": "s", "live_out": True}]}
    gp = tmp_path / "g.json"
    gp.write_text(json.dumps(g))
    sp = tmp_path / "order.txt"
    sp.write_text("b\na\nc\n")
    rc, out, _ = run(capsys, "simulate", str(gp), "--schedule", str(sp), "--dim", "s=5,100", "--json")
    assert rc == 0
    d = json.loads(out)
    assert d["peak_bytes"] == {"s=5": 35, "s=100": 130}
    assert d["peak_op"]["s=5"] == "c"
    # a bad order is a one-line error
    sp.write_text("c\na\nb\n")
    rc, _, err = run(capsys, "simulate", str(gp), "--schedule", str(sp), "--dim", "s=5")
    assert rc == 2 and "dependence" in err and err.count("\n") == 1
    # symbolic graph without --dim
    rc, _, err = run(capsys, "info", str(gp))
    assert rc == 2 and "--dim" in err


@pytest.mark.parametrize("content,needle", [
    ('{"format": "cpsched-graph", "ops": [', "bad JSON"),
    ('{"format": "cpsched-graph", "version": 1, "name": "c", "ops": [{"name": "a", "operands": ["b"]},'
     ' {"name": "b", "operands": ["a"]}]}', "cycle"),
    ('{"nodes": [{"id": 0, "cost_ram": 1}], "links": [{"source": 0, "target": 7}]}', "unknown node"),
])
def test_errors_are_one_line(capsys, tmp_path, content, needle):
    p = tmp_path / "bad.json"
    p.write_text(content)
    rc, out, err = run(capsys, "info", str(p))
    assert rc == 2 and needle in err and "bad.json" in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_convert_refuses_to_overwrite_input(capsys, tmp_path, shared_dir):
    src = tmp_path / "g.json"
    src.write_text((shared_dir / RLG100).read_text())
    before = src.read_text()
    rc, _, err = run(capsys, "convert", str(src), "-o", str(src))
    assert rc == 2 and "overwrite" in err
    assert src.read_text() == before


def test_console_script_no_traceback(tmp_path):
    p = tmp_path / "missing.hlo"
    r = subprocess.run([sys.executable, "-m", "cpsched.cli", "info", str(p)],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.strip().startswith("cpsched: error:") and "Traceback" not in r.stderr


def _tiny_graph(tmp_path):
    g = {"format": "cpsched-graph", "version": 1, "name": "tiny",
         "ops": [{"name": "a"}, {"name": "b"}, {"name": "c", "operands": ["a"]},
                 {"name": "d", "operands": ["b"]}, {"name": "e", "operands": ["c", "d"]}],
         "buffers": [{"op": "a", "size": "100", "users": ["c"]},
                     {"op": "b", "size": "100", "users": ["d"]},
                     {"op": "c", "size": "10", "users": ["e"]},
                     {"op": "d", "size": "10", "users": ["e"]},
                     {"op": "e", "size": "1", "live_out": True}],
         "order": ["a", "b", "c", "d", "e"]}
    p = tmp_path / "tiny.json"
    p.write_text(json.dumps(g))
    return p


def test_schedule_min_peak_writes_validated_schedule(capsys, tmp_path):
    src = _tiny_graph(tmp_path)
    out = tmp_path / "s.json"
    rc, stdout, _ = run(capsys, "schedule", str(src), "--objective", "weighted",
                        "--time-limit", "5", "-o", str(out), "--json")
    assert rc == 0
    sched = json.loads(out.read_text())
    # given order peaks at 210 (a, b, c all live); a, c, b, d, e peaks at 120
    assert sched["status"] == "OPTIMAL" and sched["peak_bytes"] == {"static": 120}
    assert sched["order"].index("c") < sched["order"].index("b")
    rc, stdout, _ = run(capsys, "simulate", str(src), "--schedule", str(out), "--json")
    assert json.loads(stdout)["peak_bytes"] == {"static": 120}


def test_schedule_impossible_budget_is_one_line_error(capsys, tmp_path):
    src = _tiny_graph(tmp_path)
    out = tmp_path / "s.json"
    rc, _, err = run(capsys, "schedule", str(src), "--objective", "budget", "--budget", "119",
                     "--time-limit", "5", "-o", str(out))
    errors = [ln for ln in err.splitlines() if ln.startswith("cpsched: error:")]
    assert rc == 2 and len(errors) == 1 and "120" in errors[0] and "Traceback" not in err
    assert not out.exists()


def test_schedule_heuristic_method_and_unknown(capsys, tmp_path):
    src = _tiny_graph(tmp_path)
    out = tmp_path / "s.json"
    assert run(capsys, "schedule", str(src), "--method", "xla-list", "-o", str(out))[0] == 0
    assert json.loads(out.read_text())["method"] == "xla-list"
    rc, _, err = run(capsys, "schedule", str(src), "--method", "nope", "-o", str(out))
    assert rc == 2 and "unknown method" in err


def test_compare_json_rows(capsys, tmp_path):
    src = _tiny_graph(tmp_path)
    rc, out, _ = run(capsys, "compare", str(src), "--time-limit", "3", "--json")
    assert rc == 0
    d = json.loads(out)
    rows = {r["method"]: r for r in d["rows"]}
    assert {"given", "xla-list", "xla-dfs", "xla-default", "cp-memory"} <= set(rows)
    assert rows["cp-memory"]["peak_bytes"]["static"] == 120
    assert rows["given"]["peak_bytes"]["static"] == 210
    assert all(r["peak_bytes"]["static"] >= d["lower_bound_bytes"]["static"] for r in rows.values())
    assert "makespan" in rows["given"] and "exposed_comm" in rows["given"]
    rc, out, _ = run(capsys, "compare", str(src), "--csv", "--no-solver")
    assert rc == 0 and out.splitlines()[0].startswith("method,status,scenario,peak_bytes")
    assert "cp-memory" not in out


def test_capture_target_that_is_not_a_python_file(tmp_path):
    from cpsched.capture import load_function
    from cpsched.core.errors import InputError
    script = tmp_path / "model.txt"
    script.write_text("def f():\n    return 1\n")
    with pytest.raises(InputError, match="not a Python script"):
        load_function(f"{script}:f")


def test_frontier_passes_deterministic_on(capsys, tmp_path):
    from cpsched.generators import random_layered
    from cpsched.writers.json_graph import graph_to_dict

    src = tmp_path / "g.json"
    src.write_text(json.dumps(graph_to_dict(random_layered(n=10, seed=2))))
    src = str(src)
    argv = ["frontier", src, "--points", "2", "--time-limit", "1", "--json"]
    rc, out, _ = run(capsys, *argv, "--deterministic", "--workers", "1")
    assert rc == 0 and json.loads(out)["settings"]["deterministic"] is True
    rc, out, _ = run(capsys, *argv)
    assert rc == 0 and json.loads(out)["settings"]["deterministic"] is False
