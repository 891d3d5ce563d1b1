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
