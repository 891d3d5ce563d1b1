"""The command line's presentation and checks: default method, units, gap, --version, --help
defaults, --log on stderr, checks before any work, a closed pipe, --budget forms, the
trace's exact nesting and memory track, plot styles."""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import cpsched
from cpsched import api
from cpsched.cli import build_parser, main
from cpsched.plot import line_styles

REPO = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, PYTHONPATH=str(REPO))


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def _tiny(tmp_path):
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


def test_schedule_without_method_solves_with_cp_and_honours_the_time_limit(capsys, tmp_path):
    src, out = _tiny(tmp_path), tmp_path / "s.json"
    rc, stdout, _ = run(capsys, "schedule", str(src), "--time-limit", "3", "-o", str(out),
                        "--json")
    d = json.loads(stdout)
    assert rc == 0 and d["method"] == "cp" and d["status"] == "OPTIMAL"
    assert d["solver"]["time_limit"] == 3.0 and d["peak_bytes"] == {"static": 120}
    assert json.loads(out.read_text())["order"].index("c") < json.loads(out.read_text())["order"].index("b")
    rc, stdout, _ = run(capsys, "schedule", str(src), "--time-limit", "3", "-o", str(out))
    assert stdout.startswith("cp: OPTIMAL") and "peak 120 B" in stdout and "gap 0.00 %" in stdout
    assert "limit 3.00 s" in stdout


def test_compare_table_units_and_gap(capsys, tmp_path):
    rc, out, _ = run(capsys, "compare", str(_tiny(tmp_path)), "--time-limit", "3")
    assert rc == 0
    given = next(ln for ln in out.splitlines() if ln.startswith("given"))
    # (210 - 120) / 210 against cp's proven 120, not (210 - lb) / lb
    assert "210 B" in given and "+42.9 %" in given
    assert "best proven lower bound 120 B" in out
    assert all(any(u in ln for u in (" s", " ms", " us", " ns")) for ln in out.splitlines()[2:-1])


def test_compare_json_records_how_to_reproduce(capsys, tmp_path):
    rc, out, _ = run(capsys, "compare", str(_tiny(tmp_path)), "--time-limit", "2", "--seed", "7",
                     "--json")
    assert rc == 0
    d = json.loads(out)
    rep = d["reproduce"]
    assert rep["cpsched"] == cpsched.__version__ and rep["ortools"] == api.ortools_version()
    assert rep["time_limit"] == 2.0 and rep["seed"] == 7 and rep["workers"] == 2
    assert rep["device"] == "h100" and rep["scenarios"]["scenarios"][0]["name"] == "static"
    assert rep["command"][:2] == ["cpsched", "compare"] and "--seed" in rep["command"]
    rows = {r["method"]: r for r in d["rows"]}
    assert rows["given"]["peak_bytes"]["static"] == 210            # exact integers in JSON
    assert rows["given"]["gap"]["static"] == pytest.approx(90 / 210, abs=1e-6)


def test_version(capsys):
    assert main(["--version"]) == 0  # argparse's exit comes back as the return code
    assert capsys.readouterr().out.startswith(f"cpsched {cpsched.__version__} (ortools ")


def test_every_option_states_its_default():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = []
    for name, p in sub.choices.items():
        for a in p._actions:
            if not a.option_strings or isinstance(a, argparse._HelpAction):
                continue
            if "default" not in (a.help or "") and "required" not in (a.help or ""):
                missing.append(f"{name} {a.option_strings[0]}")
    assert missing == []


def test_budget_accepts_units_and_percentages(capsys, tmp_path):
    src, out = _tiny(tmp_path), tmp_path / "s.json"
    rc, stdout, _ = run(capsys, "schedule", str(src), "--objective", "budget", "--budget",
                        "60%", "--time-limit", "3", "-o", str(out), "--json")
    d = json.loads(stdout)
    assert rc == 0 and d["budget_reference"]["reference_bytes"] == {"static": 210}
    assert d["budget_bytes"] == {"static": 126} and d["peak_bytes"]["static"] <= 126
    rc, stdout, _ = run(capsys, "schedule", str(src), "--objective", "budget", "--budget",
                        "1KiB", "--time-limit", "3", "-o", str(out))
    assert rc == 0 and "budget 1.00 KiB" in stdout
    rc, _, err = run(capsys, "schedule", str(src), "--objective", "budget", "--budget",
                     "12 parsecs", "-o", str(out))
    assert rc == 2 and "8GiB" in err and err.count("\n") == 1


def _no_work(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("work started before the options were checked")
    monkeypatch.setattr(api, "schedule", boom)
    monkeypatch.setattr(api, "compare", boom)
    monkeypatch.setattr(api, "read", boom)


def test_outputs_checked_before_any_work(capsys, tmp_path, monkeypatch):
    src = _tiny(tmp_path)
    before = src.read_text()
    _no_work(monkeypatch)
    for argv, needle in (
            (["-o", str(src)], "overwrite the input"),
            (["-o", str(tmp_path / "s.json"), "--trace", str(src)], "overwrite the input"),
            (["-o", str(tmp_path / "s.json"), "--trace", str(tmp_path / "s.json")], "same file"),
            (["-o", str(tmp_path / "nodir" / "s.json")], "does not exist"),
            (["-o", str(tmp_path)], "directory"),
            (["-o", str(tmp_path / "s.json"), "--budget", "lots"], "budget"),
            (["-o", str(tmp_path / "s.json"), "--time-limit", "0"], "above 0")):
        rc, _, err = run(capsys, "schedule", str(src), *argv)
        assert rc == 2 and needle in err and err.count("\n") == 1, (argv, err)
    assert src.read_text() == before


def test_plot_without_matplotlib_fails_before_solving(capsys, tmp_path, monkeypatch):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    _no_work(monkeypatch)
    rc, _, err = run(capsys, "compare", str(_tiny(tmp_path)), "--plot", str(tmp_path / "m.png"))
    assert rc == 2 and "matplotlib" in err and err.count("\n") == 1


def test_closed_pipe_is_quiet():
    p = subprocess.Popen([sys.executable, "-m", "cpsched.cli", "methods", "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, cwd=REPO)
    p.stdout.close()       # the reader is gone before cpsched writes anything
    err = p.stderr.read().decode()
    assert p.wait() == 0 and err == ""


def test_log_goes_to_stderr_and_json_stays_clean(tmp_path):
    code = ("import os, sys; from cpsched.cli import stdout_to_stderr\n"
            "with stdout_to_stderr(True):\n"
            "    os.write(1, b'solver log line\\n'); print('python log line')\n"
            "print('{}')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV)
    assert r.stdout == "{}\n" and "solver log line" in r.stderr and "python log line" in r.stderr
    src = REPO / "models" / "graphs" / "random_layered_n50_s0.json"
    # 10 s: a limit that runs out while a loaded machine is still starting is refused
    r = subprocess.run([sys.executable, "-m", "cpsched.cli", "schedule", str(src), "--log",
                        "--json", "--time-limit", "10", "-o", str(tmp_path / "s.json")],
                       capture_output=True, text=True, env=ENV)
    assert r.returncode == 0 and json.loads(r.stdout)["method"] == "cp"


def test_trace_slices_nest_exactly_and_carry_memory(capsys, tmp_path):
    src = REPO / "models" / "hlo" / "demo.hlo"
    out, trace = tmp_path / "o.hlo", tmp_path / "t.json"
    rc, _, _ = run(capsys, "schedule", str(src), "--method", "gpu-postprocess", "-o", str(out),
                   "--trace", str(trace))
    assert rc == 0
    ev = json.loads(trace.read_text())["traceEvents"]
    tracks = {}
    for e in ev:
        if e["ph"] == "X":
            # Perfetto reads a microsecond value x as llround(x * 1000) nanoseconds: every
            # boundary must sit on that grid, so that ts + dur of one slice is exactly the
            # ts of the slice that follows it
            b, d = round(e["ts"] * 1000), round(e["dur"] * 1000)
            assert abs(b - e["ts"] * 1000) < 1e-6 and abs(d - e["dur"] * 1000) < 1e-6
            tracks.setdefault((e["pid"], e["tid"]), []).append((b, b + d))
    assert tracks
    for spans in tracks.values():
        spans.sort(key=lambda s: (s[0], -s[1]))
        open_ = []
        for b, e in spans:
            while open_ and open_[-1] <= b:
                open_.pop()
            assert not open_ or e <= open_[-1], "a slice overlaps the next one"
            open_.append(e)
    counters = [e for e in ev if e["ph"] == "C"]
    assert counters and all(e["name"] == "memory" for e in counters)
    peak = api.simulate(api.read(str(src)), api.read(str(src)).default_order()).peak
    got = max(e["args"]["bytes"] for e in counters)
    assert 0 < got and isinstance(got, int)
    assert got <= max(api.schedule(str(src), "gpu-postprocess").peak.values())
    assert peak  # the module reads and simulates


def test_plot_styles_differ_for_every_method():
    names = [f"m{k}" for k in range(40)]
    styles = line_styles(names)
    assert len(set(styles.values())) == 40
    assert styles["m0"] != styles["m10"]              # same colour, other dashes
