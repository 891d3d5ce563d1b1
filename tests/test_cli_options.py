"""Every option of every subcommand (``cpsched <cmd> --help``) has an observable effect, and
no output option may name any input (the file is left byte for byte as it was)."""

from __future__ import annotations

import csv
import importlib.util
import json
import math

import pytest

from cpsched.cli import build_parser, main
from cpsched.sweep.run import ray_installed

# p (kept parameter) feeds a -> all-reduce pair and b -> c -> d; e joins both. Sizes in s.
GRAPH = {
    "format": "cpsched-graph", "version": 1, "name": "cli",
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

# given order: the peak is at ars (p + a + ars = 16 + 200 s), also the least over all orders
PEAK = {2: 16 + 200 * 2, 8: 16 + 200 * 8}

# A sync all-reduce (for --async-collectives) and a graph where the order matters (for cp).
SYNC = {"format": "cpsched-graph", "version": 1, "name": "sync",
        "ops": [{"name": "x"}, {"name": "ar", "opcode": "all-reduce", "operands": ["x"],
                                "collective": {"kind": "all-reduce", "bytes": "64",
                                               "group_size": 2}},
                {"name": "y", "operands": ["ar"]}],
        "buffers": [{"op": "x", "size": "64", "users": ["ar"]},
                    {"op": "ar", "size": "64", "users": ["y"]},
                    {"op": "y", "size": "8", "live_out": True}]}
TINY = {"format": "cpsched-graph", "version": 1, "name": "tiny",
        "ops": [{"name": "a", "flops": "1000000000"}, {"name": "b", "flops": "1000000000"},
                {"name": "c", "operands": ["a"], "flops": "1000000000"},
                {"name": "d", "operands": ["b"], "flops": "1000000000"},
                {"name": "e", "operands": ["c", "d"], "flops": "1000000000"}],
        "buffers": [{"op": "a", "size": "100", "users": ["c"]},
                    {"op": "b", "size": "100", "users": ["d"]},
                    {"op": "c", "size": "10", "users": ["e"]},
                    {"op": "d", "size": "10", "users": ["e"]},
                    {"op": "e", "size": "1", "live_out": True}],
        "order": ["a", "b", "c", "d", "e"]}       # given 210, best (a c b d e) 120


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def ok_json(capsys, *argv):
    if "--json" not in argv:
        argv = argv + ("--json",)
    rc, out, err = run(capsys, *argv)
    assert rc == 0, err
    return json.loads(out)


@pytest.fixture
def g(tmp_path):
    p = tmp_path / "g.json"
    p.write_text(json.dumps(GRAPH))
    return p


@pytest.fixture
def tiny(tmp_path):
    p = tmp_path / "tiny.json"
    p.write_text(json.dumps(TINY))
    return p


def options_of(cmd: str) -> set[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return {s for a in sub.choices[cmd]._actions for s in a.option_strings
            if s.startswith("--") and s != "--help"}


# Every option listed here has a test below; a new option without one fails this test.
TESTED = {
    # --explain: tests/test_explain.py; simulate's --trace, --device, --profile:
    # tests/test_figures.py; compare's --methods: tests/test_api_results.py
    "info": {"--dim", "--weights", "--scenarios", "--json", "--explain"},
    "simulate": {"--dim", "--weights", "--scenarios", "--json", "--schedule", "--plot",
                 "--trace", "--explain", "--device", "--profile"},
    "convert": {"--dim", "--weights", "--scenarios", "--json", "--output",
                "--async-collectives"},
    "methods": {"--json"},
    "schedule": {"--dim", "--weights", "--scenarios", "--json", "--time-limit", "--workers",
                 "--seed", "--deterministic", "--async-collectives", "--device", "--profile",
                 "--output", "--method", "--objective", "--budget", "--slack", "--evict",
                 "--bandwidth", "--keep-order", "--trace", "--log"},
    "compare": {"--dim", "--weights", "--scenarios", "--json", "--time-limit", "--workers",
                "--seed", "--deterministic", "--async-collectives", "--device", "--profile",
                "--csv", "--plot", "--no-solver", "--methods"},
    # tests/test_joint.py
    "frontier": {"--dim", "--weights", "--scenarios", "--json", "--time-limit", "--workers",
                 "--seed", "--deterministic", "--async-collectives", "--device", "--profile",
                 "--points", "--evict", "--bandwidth", "--plot"},
    "sweep": {"--out", "--summary", "--plot", "--backend", "--address", "--jobs",
              "--max-solves", "--dry-run"},
}


@pytest.mark.parametrize("cmd", sorted(TESTED))
def test_every_option_is_covered(cmd):
    assert options_of(cmd) == TESTED[cmd]


# -- scenarios: --dim, --weights, --scenarios, --json ---------------------------------------

@pytest.mark.parametrize("cmd", ["info", "simulate"])
def test_dim_gives_one_exact_peak_per_scenario(capsys, g, cmd):
    d = ok_json(capsys, cmd, g, "--dim", "s=2,8")
    assert d["peak_bytes"] == {f"s={k}": v for k, v in PEAK.items()}


def test_weights_and_scenarios_file_reach_the_objective(capsys, g, tmp_path):
    out = tmp_path / "s.json"
    d = ok_json(capsys, "schedule", g, "--dim", "s=2,8", "--weights", "0.9,0.1",
                "--time-limit", "2", "-o", out, "--json")
    assert [s["weight"] for s in d["scenarios"]["scenarios"]] == [0.9, 0.1]
    assert d["objective_value"] == pytest.approx(0.9 * PEAK[2] + 0.1 * PEAK[8])
    sc = tmp_path / "scen.json"
    sc.write_text(json.dumps({"dims": ["s"], "scenarios": [
        {"name": "small", "values": {"s": 2}, "weight": 1},
        {"name": "big", "values": {"s": 8}, "weight": 3}]}))
    for cmd in ("info", "simulate"):
        assert ok_json(capsys, cmd, g, "--scenarios", sc)["peak_bytes"] == \
            {"small": PEAK[2], "big": PEAK[8]}
    d = ok_json(capsys, "schedule", g, "--scenarios", sc, "--time-limit", "2", "-o", out,
                "--json")
    assert d["objective_value"] == pytest.approx(0.25 * PEAK[2] + 0.75 * PEAK[8])
    d = ok_json(capsys, "compare", g, "--scenarios", sc, "--no-solver", "--json")
    assert {r["method"] for r in d["rows"]} >= {"given", "xla-default"}
    assert next(r for r in d["rows"] if r["method"] == "given")["peak_bytes"] == \
        {"small": PEAK[2], "big": PEAK[8]}
    # weights for the wrong number of scenarios: one line, exit 2
    rc, _, err = run(capsys, "info", g, "--dim", "s=2,8", "--weights", "1,2,3")
    assert rc == 2 and err.count("\n") == 1


def test_convert_keeps_scenarios_and_async_collectives_split(capsys, tmp_path):
    src = tmp_path / "sync.json"
    src.write_text(json.dumps(SYNC))
    plain, split = tmp_path / "plain.json", tmp_path / "split.json"
    assert run(capsys, "convert", src, "-o", plain)[0] == 0
    assert run(capsys, "convert", src, "-o", split, "--async-collectives", "--json")[0] == 0
    assert ok_json(capsys, "info", plain)["async_pairs"] == 0
    assert ok_json(capsys, "info", split)["async_pairs"] == 1
    # the same split on the fly for schedule and compare
    out = tmp_path / "o.json"
    d = ok_json(capsys, "schedule", src, "--async-collectives", "--method", "gpu-postprocess",
                "-o", out, "--json")
    assert len(d["orders"]["sync"]) == 4
    d = ok_json(capsys, "compare", src, "--async-collectives", "--no-solver", "--json")
    assert all(len(r.get("order", [0] * 4)) == 4 for r in d["rows"])


def test_methods_json_lists_every_method(capsys):
    d = ok_json(capsys, "methods", "--json")
    names = {m["name"] for m in (d if isinstance(d, list) else d["methods"])}
    assert {"cp", "cp-overlap", "cp-remat", "xla-default", "lhs", "remat-xla"} <= names


# -- solver options -----------------------------------------------------------------------

def test_time_limit_workers_seed_are_recorded(capsys, tiny, tmp_path):
    out = tmp_path / "s.json"
    d = ok_json(capsys, "schedule", tiny, "--time-limit", "1.5", "--workers", "1",
                "--seed", "7", "-o", out, "--json")
    assert d["solver"]["time_limit"] == 1.5 and d["solver"]["workers"] == 1
    assert d["solver"]["seed"] == 7 and d["peak_bytes"] == {"static": 120}
    d = ok_json(capsys, "compare", tiny, "--time-limit", "1", "--workers", "1", "--seed", "3",
                "--json")
    cp = next(r for r in d["rows"] if r["method"] in ("cp", "cp-memory"))
    assert cp["peak_bytes"] == {"static": 120}


def test_deterministic_runs_give_the_same_order(capsys, tmp_path):
    from cpsched.generators import random_layered
    from cpsched.writers.json_graph import graph_to_dict
    src = tmp_path / "rl.json"
    src.write_text(json.dumps(graph_to_dict(random_layered(n=30, seed=5))))
    orders = []
    for k in range(2):
        out = tmp_path / f"d{k}.json"
        d = ok_json(capsys, "schedule", src, "--deterministic", "--time-limit", "1",
                    "-o", out, "--json")
        assert d["solver"]["deterministic"] is True and d["deterministic"] is True
        orders.append(json.loads(out.read_text())["order"])
    assert orders[0] == orders[1]
    d = ok_json(capsys, "compare", src, "--deterministic", "--time-limit", "1", "--json")
    assert d["rows"]


def test_log_goes_to_stderr(capsys, tiny, tmp_path):
    rc, out, err = run(capsys, "schedule", tiny, "--log", "--objective", "budget",
                       "--budget", "500", "--time-limit", "1", "-o", tmp_path / "s.json",
                       "--json")
    assert rc == 0 and json.loads(out)["peak_bytes"] == {"static": 120}


# -- objectives, methods, budgets ------------------------------------------------------------

@pytest.mark.parametrize("objective", ["weighted", "minimax", "lexicographic"])
def test_memory_objectives(capsys, g, tmp_path, objective):
    d = ok_json(capsys, "schedule", g, "--dim", "s=2,8", "--objective", objective,
                "--time-limit", "2", "-o", tmp_path / "s.json", "--json")
    assert d["method"] == "cp" and d["objective"] == objective
    assert d["peak_bytes"] == {f"s={k}": v for k, v in PEAK.items()}
    assert d["status"] == "OPTIMAL"


def test_budget_objective_feasible_and_not(capsys, tiny, tmp_path):
    out = tmp_path / "s.json"
    d = ok_json(capsys, "schedule", tiny, "--objective", "budget", "--budget", "120",
                "--time-limit", "2", "-o", out, "--json")
    assert d["status"] == "OPTIMAL" and d["peak_bytes"] == {"static": 120}
    rc, _, err = run(capsys, "schedule", tiny, "--objective", "budget", "--budget", "119",
                     "--time-limit", "2", "-o", out)
    assert rc == 2 and "120" in err


@pytest.mark.parametrize("objective", ["overlap", "distance"])
def test_overlap_objectives_slack_sets_the_budget(capsys, g, tmp_path, objective):
    for slack in ("0", "0.5"):
        d = ok_json(capsys, "schedule", g, "--dim", "s=2,8", "--objective", objective,
                    "--slack", slack, "--time-limit", "2", "-o", tmp_path / "o.json",
                    "--json")
        assert d["method"] == "cp-overlap"
        best = {k: v for k, v in PEAK.items()}       # the given order is min-peak here
        want = {f"s={k}": math.floor(v * (1 + float(slack))) for k, v in best.items()}
        assert d["budget"] == want
        assert all(d["peak_bytes"][n] <= want[n] for n in want)
    # with room, the done moves after the independent chain (hides the all-reduce)
    order = d["orders"]["cli"]
    assert order.index("ard") > order.index("d")


def test_device_and_profile_change_the_timeline(capsys, g, tmp_path):
    out = tmp_path / "o.json"
    base = ["schedule", g, "--dim", "s=2", "--objective", "overlap", "--time-limit", "2",
            "-o", out, "--json"]
    h100 = ok_json(capsys, *base)["makespan"]["s=2"]
    a100 = ok_json(capsys, *base, "--device", "a100")["makespan"]["s=2"]
    assert a100 != h100
    prof = tmp_path / "prof.json"
    prof.write_text(json.dumps({"c": 1000.0, "d": 1000.0}))      # microseconds
    slow = ok_json(capsys, *base, "--profile", prof)["makespan"]["s=2"]
    assert slow >= 2000e-6 > h100
    rows = ok_json(capsys, "compare", g, "--dim", "s=2", "--profile", prof, "--device",
                   "a100", "--no-solver", "--json")["rows"]
    assert min(r["makespan"]["s=2"] for r in rows) >= 2000e-6


def test_remat_options_and_outputs(capsys, tiny, tmp_path):
    out = tmp_path / "r.json"
    d = ok_json(capsys, "schedule", tiny, "--objective", "remat", "--budget", "120",
                "--time-limit", "3", "-o", out, "--json")
    # reordering alone fits 120 (a c b d e): nothing is added
    assert d["peak_bytes"]["static"] <= 120 and d["added_time_pct"]["static"] == 0
    # --keep-order: the given order (peak 210) stays; only clones / copies bring it down
    d = ok_json(capsys, "schedule", tiny, "--objective", "remat", "--budget", "150",
                "--keep-order", "--evict", "--bandwidth", "1e12", "--time-limit", "3",
                "-o", out, "--json")
    assert d["peak_bytes"]["static"] <= 150 and d["order"] == TINY["order"]
    assert d["candidates"] and d["added_time_pct"]["static"] > 0
    assert json.loads(out.read_text())["format"] == "cpsched-remat"
    rc, _, err = run(capsys, "schedule", tiny, "--evict", "-o", out)
    assert rc == 2 and "remat" in err


def test_every_registered_order_method_writes_a_valid_schedule(capsys, g, tmp_path):
    import cpsched
    out = tmp_path / "m.json"
    names = [m["name"] for m in cpsched.methods() if m["family"] in ("memory", "overlap")]
    for name in names:
        d = ok_json(capsys, "schedule", g, "--dim", "s=2", "--method", name,
                    "--time-limit", "1", "-o", out, "--json")
        assert d["method"] == name
        # the written schedule re-simulates to the printed peak
        sim = ok_json(capsys, "simulate", g, "--dim", "s=2", "--schedule", out, "--json")
        assert sim["peak_bytes"] == d["peak_bytes"]


# -- outputs: --trace, --plot, --csv, --no-solver ---------------------------------------------

def test_trace_has_every_op_and_a_memory_track(capsys, g, tmp_path):
    out, trace = tmp_path / "s.json", tmp_path / "t.json"
    d = ok_json(capsys, "schedule", g, "--dim", "s=2", "--method", "xla-default",
                "-o", out, "--trace", trace, "--json")
    events = json.loads(trace.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    names = {e.get("name") for e in events if e.get("ph") == "X"}
    assert set(GRAPH_OPS) <= names
    counters = [e for e in events if e.get("ph") == "C"]
    assert counters and max(max(v for v in e["args"].values()) for e in counters) == \
        d["peak_bytes"]["s=2"]


GRAPH_OPS = [op["name"] for op in GRAPH["ops"] if op.get("kind") != "parameter"]


def test_csv_and_no_solver(capsys, tiny):
    rc, out, _ = run(capsys, "compare", tiny, "--csv", "--time-limit", "1")
    lines = out.splitlines()
    assert rc == 0 and lines[0].startswith("method,status,scenario,peak_bytes")
    assert any(ln.startswith("cp") for ln in lines[1:])
    rc, out, _ = run(capsys, "compare", tiny, "--csv", "--no-solver")
    methods = {ln.split(",")[0] for ln in out.splitlines()[1:]}
    assert "given" in methods and not any(m.startswith("cp") for m in methods)


def test_plot_files_are_pngs(capsys, g, tmp_path):
    pytest.importorskip("matplotlib", reason="--plot needs matplotlib (optional)")
    for argv in (["simulate", g, "--dim", "s=2"], ["compare", g, "--dim", "s=2", "--no-solver"]):
        png = tmp_path / f"{argv[0]}.png"
        assert run(capsys, *argv, "--plot", png)[0] == 0
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -- never write onto an input ------------------------------------------------------------------

def _refuses(capsys, victim, argv):
    before = victim.read_bytes()
    rc, _, err = run(capsys, *argv)
    assert rc == 2, (argv, err)
    assert err.count("\n") == 1 and "Traceback" not in err
    assert victim.read_bytes() == before


def test_no_output_option_overwrites_any_input(capsys, g, tmp_path):
    sc = tmp_path / "scen.json"
    sc.write_text(json.dumps({"dims": ["s"], "scenarios": [{"values": {"s": 2}}]}))
    prof = tmp_path / "prof.json"
    prof.write_text(json.dumps({"c": 1.0}))
    order = tmp_path / "order.txt"
    order.write_text("\n".join(GRAPH["order"]) + "\n")
    out = tmp_path / "out.json"
    cases = [
        (g, ["convert", g, "-o", g]),
        (sc, ["convert", g, "--scenarios", sc, "-o", sc]),
        (g, ["schedule", g, "--dim", "s=2", "-o", g]),
        (g, ["schedule", g, "--dim", "s=2", "-o", out, "--trace", g]),
        (sc, ["schedule", g, "--scenarios", sc, "-o", sc]),
        (sc, ["schedule", g, "--scenarios", sc, "-o", out, "--trace", sc]),
        (prof, ["schedule", g, "--dim", "s=2", "--profile", prof, "-o", prof]),
        (prof, ["schedule", g, "--dim", "s=2", "--profile", prof, "-o", out, "--trace", prof]),
        (g, ["compare", g, "--dim", "s=2", "--plot", g]),
        (sc, ["compare", g, "--scenarios", sc, "--plot", sc]),
        (g, ["simulate", g, "--dim", "s=2", "--plot", g]),
        (order, ["simulate", g, "--dim", "s=2", "--schedule", order, "--plot", order]),
        (g, ["schedule", g, "--dim", "s=2", "--objective", "remat", "--budget", "90%",
             "-o", g]),
    ]
    for victim, argv in cases:
        _refuses(capsys, victim, argv)
    # and the trace may not be the schedule output either
    rc, _, err = run(capsys, "schedule", g, "--dim", "s=2", "-o", out, "--trace", out)
    assert rc == 2 and not out.exists()


# -- sweep --------------------------------------------------------------------------------------

HAS_RAY = ray_installed()
HAS_MPL = importlib.util.find_spec("matplotlib") is not None


@pytest.fixture
def sweep_spec(tmp_path, tiny):
    p = tmp_path / "sw.toml"
    p.write_text('graphs = ["tiny.json"]\nmethods = ["cp", "xla-dfs", "xla-list"]\n'
                 'time_limits = [2]\n')
    return p


def _table(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_sweep_out_and_summary_name_the_files(capsys, sweep_spec, tmp_path):
    table, md = tmp_path / "r.csv", tmp_path / "r-summary.md"
    rc, out, err = run(capsys, "sweep", sweep_spec, "--out", table, "--summary", md,
                       "--backend", "local")
    assert rc == 0, err
    assert len(_table(table)) == 3 and not (tmp_path / "sw.csv").exists()
    assert "| tiny.json | 5 | cp |" in md.read_text() and f"wrote {md}" in out
    # default: the table beside the spec, the summary beside the table
    rc, _, _ = run(capsys, "sweep", sweep_spec, "--backend", "local")
    assert rc == 0 and len(_table(tmp_path / "sw.csv")) == 3 and (tmp_path / "sw.md").exists()


def test_sweep_plot_needs_matplotlib(capsys, sweep_spec, tmp_path):
    png = tmp_path / "p.png"
    rc, out, err = run(capsys, "sweep", sweep_spec, "--plot", png, "--backend", "local")
    if HAS_MPL:
        assert rc == 0 and png.read_bytes()[:4] == b"\x89PNG"
    else:
        assert rc == 2 and "matplotlib" in err and not png.exists()
        assert not (tmp_path / "sw.csv").exists()  # refused before any work
        rc, out, _ = run(capsys, "sweep", sweep_spec, "--backend", "local")
        assert rc == 0 and "matplotlib is not installed: no plot" in out


def test_sweep_backend_local_or_ray(capsys, sweep_spec):
    rc, _, err = run(capsys, "sweep", sweep_spec, "--backend", "local", "--max-solves", "1")
    assert rc == 0 and "ray is not installed" not in err
    rc, out, err = run(capsys, "sweep", sweep_spec, "--backend", "auto", "--max-solves", "1")
    assert rc == 0
    if not HAS_RAY:
        assert err.count("ray is not installed: running on a local pool") == 1
        rc, _, err = run(capsys, "sweep", sweep_spec, "--backend", "ray")
        assert rc == 2 and err.count("\n") == 1 and "needs ray" in err


def test_sweep_address_needs_ray_and_not_the_local_pool(capsys, sweep_spec):
    rc, _, err = run(capsys, "sweep", sweep_spec, "--address", "auto", "--backend", "local")
    assert rc == 2 and "--address needs --backend ray" in err
    if not HAS_RAY:
        rc, _, err = run(capsys, "sweep", sweep_spec, "--address", "ray://head:10001")
        assert rc == 2 and err.count("\n") == 1 and "--address needs ray" in err


def test_sweep_jobs_must_be_positive_and_bounds_the_pool(capsys, sweep_spec):
    rc, _, err = run(capsys, "sweep", sweep_spec, "--jobs", "0")
    assert rc == 2 and "--jobs must be at least 1" in err
    rc, out, err = run(capsys, "sweep", sweep_spec, "--jobs", "1", "--backend", "local")
    assert rc == 0 and "of 1 cores busy" in out


def test_sweep_max_solves_stops_early(capsys, sweep_spec, tmp_path):
    rc, out, _ = run(capsys, "sweep", sweep_spec, "--max-solves", "2", "--backend", "local")
    assert rc == 0 and len(_table(tmp_path / "sw.csv")) == 2
    rc, _, err = run(capsys, "sweep", sweep_spec, "--max-solves", "0")
    assert rc == 2 and "--max-solves" in err


def test_sweep_dry_run_counts_and_writes_nothing(capsys, sweep_spec, tmp_path):
    rc, out, _ = run(capsys, "sweep", sweep_spec, "--dry-run")
    assert rc == 0 and "3 solves, 0 already in" in out and "3 solves to run" in out
    assert not (tmp_path / "sw.csv").exists() and not (tmp_path / "sw.md").exists()
