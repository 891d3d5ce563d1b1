"""Bad input, resource limits and all-or-nothing outputs (issue 28): every case is refused
with one line `place: reason` and exit 2 (the Python API raises ``cpsched.errors`` types),
requests past a limit are refused up front, and a command's files appear together or not
at all. ``benchmarks/reliability.py`` runs the same classes through fresh processes."""

from __future__ import annotations

import errno
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

import cpsched
from cpsched import api, generators
from cpsched.cli import main
from cpsched.errors import InputError
from cpsched.sweep.table import ResultsTable
from cpsched.writers import all_or_nothing, write_text
from cpsched.writers.json_graph import graph_to_dict

REPO = Path(__file__).resolve().parents[1]


def chain(n: int = 4, size=1024, **extra) -> dict:
    ops = [{"name": f"v{k}", "operands": [f"v{k - 1}"] if k else []} for k in range(n)]
    bufs = [
        {
            "name": f"v{k}",
            "op": f"v{k}",
            "size": size,
            "users": [f"v{k + 1}"] if k + 1 < n else [],
            "live_out": k + 1 == n,
        }
        for k in range(n)
    ]
    return dict(
        {"format": "cpsched-graph", "version": 1, "name": "chain", "ops": ops, "buffers": bufs},
        **extra,
    )


def edited(change) -> str:
    d = chain()
    change(d)
    return json.dumps(d)


def hlo(body: str) -> str:
    return f"HloModule m\n\nENTRY e {{\n{body}\n}}\n"


MLIR = """module @jit_f {
  func.func public @main(%arg0: tensor<8x4xf32>, %arg1: tensor<8x4xf32>) -> (tensor<8x4xf32>) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<8x4xf32>
    %1 = stablehlo.multiply %0, %arg1 : tensor<8x4xf32>
    return %1 : tensor<8x4xf32>
  }
}
"""
NODE_LINK = {
    "nodes": [{"id": 0, "size": 8}, {"id": 1, "size": 8}],
    "links": [{"source": 0, "target": 1}],
}


def one_line_error(argv, capsys, *words) -> str:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1, (code, out, err)
    assert lines[0].startswith("cpsched: error: "), lines
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


# -- input files ------------------------------------------------------------------------------

FILES = {
    "duration abc": (
        "g.json",
        edited(lambda d: d["ops"][1].update(attrs={"duration": "abc"})),
        "op v1: duration must be a number",
    ),
    "negative duration": (
        "g.json",
        edited(lambda d: d["ops"][1].update(attrs={"duration": -5})),
        "finite number >= 0",
    ),
    "self-loop": (
        "g.json",
        edited(lambda d: d["ops"][2]["operands"].append("v2")),
        "op v2: is one of its own operands",
    ),
    "async start names itself": (
        "g.json",
        edited(lambda d: d["ops"][1].update(async_start="v1")),
        "names itself as its async start",
    ),
    "live_in no": (
        "g.json",
        edited(lambda d: d["buffers"][0].update(live_in="no")),
        "live_in must be true or false",
    ),
    "space -1": ("g.json", edited(lambda d: d["buffers"][0].update(space=-1)), "memory space -1"),
    "duplicate scenario names": (
        "g.json",
        json.dumps(
            chain(
                scenarios={
                    "dims": [],
                    "scenarios": [{"name": "a", "values": {}}, {"name": "a", "values": {}}],
                }
            )
        ),
        "'a' is given twice",
    ),
    "node-link self-loop": (
        "g.json",
        json.dumps(dict(NODE_LINK, links=[{"source": 0, "target": 1}, {"source": 1, "target": 1}])),
        "self-loop",
    ),
    "node-link undirected": (
        "g.json",
        json.dumps(dict(NODE_LINK, directed=False)),
        "links must be directed",
    ),
    "HLO without ENTRY": (
        "m.hlo",
        "HloModule m\n\ne {\n  ROOT p = f32[8] parameter(0)\n}\n",
        "no ENTRY computation",
    ),
    "add with three operands": (
        "m.hlo",
        hlo("  p = f32[8] parameter(0)\n  ROOT a = f32[8] add(p, p, p)"),
        "add takes 2 operands, found 3",
    ),
    "gte index -1": (
        "m.hlo",
        hlo(
            "  p = f32[8] parameter(0)\n  t = (f32[8]) tuple(p)\n"
            "  ROOT g = f32[8] get-tuple-element(t), index=-1"
        ),
        "index=-1 is negative",
    ),
    "parameter(10^20)": (
        "m.hlo",
        hlo("  p = f32[8] parameter(100000000000000000000)\n  ROOT n = f32[8] negate(p)"),
        "numbers run from 0 to 0",
    ),
    "garbage replica_groups": (
        "m.hlo",
        hlo(
            "  p = f32[8] parameter(0)\n  ROOT a = f32[8] all-reduce(p), replica_groups={{0,x}},"
            " to_apply=s\n}\n\ns {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
            "  ROOT z = f32[] add(x, y)"
        ).replace("ENTRY e", "ENTRY e", 1),
        "replica_groups",
    ),
    "StableHLO truncated": ("m.mlir", MLIR[:200], "m.mlir:"),
    "StableHLO dim -5": (
        "m.mlir",
        MLIR.replace("%arg0: tensor<8x4", "%arg0: tensor<-5x4"),
        "negative dimension -5",
    ),
    "StableHLO SSA value defined twice": (
        "m.mlir",
        MLIR.replace("%1 = stablehlo.multiply %0", "%0 = stablehlo.multiply %0"),
        "redefinition of SSA value %0",
    ),
    "StableHLO without return": (
        "m.mlir",
        MLIR.replace("    return %1 : tensor<8x4xf32>\n", ""),
        "does not end in a return",
    ),
}


@pytest.mark.parametrize("case", list(FILES))
def test_bad_input_file_is_one_line(tmp_path, capsys, case):
    name, text, words = FILES[case]
    path = tmp_path / name
    path.write_text(text)
    line = one_line_error(
        ["schedule", path, "--method", "xla-default", "-o", tmp_path / "o.json"], capsys, words
    )
    assert name in line  # the place
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_truncated_stablehlo_never_an_internal_error():
    # every prefix of a small module: refused as input, never IndexError or a hang (a cut
    # inside an op's brackets looped for ever)
    from cpsched.core.errors import CpschedError

    text = MLIR.replace(
        "%1 = stablehlo.multiply %0, %arg1 : tensor<8x4xf32>",
        "%1 = stablehlo.multiply %0, %arg1 : (tensor<8x4xf32>,\n"
        "      tensor<8x4xf32>) -> tensor<8x4xf32>",
    )
    assert text != MLIR
    for cut in range(0, len(text) - 8, 3):
        with pytest.raises(CpschedError):
            api.read(text[:cut] + "\n")


def test_path_with_newline_is_a_path(tmp_path, capsys):
    odd = tmp_path / "a\nb.json"
    odd.write_text(json.dumps(chain()))
    assert main(["info", str(odd)]) == 0
    capsys.readouterr()
    # a missing one is a missing file, in one line (not HLO text)
    line = one_line_error(["info", "HloModule x\nENTRY e {\n}"], capsys, "No such file")
    assert "\\n" in line


@pytest.mark.parametrize(
    "argv,words",
    [
        (["schedule", "{g}", "--objective", "zzz", "-o", "{d}/o.json"], "invalid choice"),
        (["schedule", "{g}"], "required: -o/--output"),
        (["info", "{g}", "--frob"], "unrecognized arguments"),
        ([], "required: command"),
        (["info", "{g}", "--scenarios", "{g}", "--dim", "b=4"], "use one of them"),
        (
            [
                "schedule",
                "{g}",
                "--method",
                "xla-default",
                "--profile",
                "/dev/zero",
                "-o",
                "{d}/o.json",
            ],
            "not a regular file",
        ),
        (
            [
                "schedule",
                "{g}",
                "--method",
                "xla-default",
                "--device",
                "/dev/zero",
                "-o",
                "{d}/o.json",
            ],
            "not a regular file",
        ),
        (["schedule", "{g}", "--seed", str(2**64), "-o", "{d}/o.json"], "--seed"),
        (["pipeline", "-p", "4", "-m", "8", "--costs", "1e308,1e308,1e308"], "1e+15 limit"),
        (["pipeline", "-p", "4", "-m", "8", "--comm", "nan"], "comm: times must be finite"),
        (["pipeline", "-p", "4", "-m", "8", "--costs", "1,2"], "three times F,B,W"),
        (["pipeline", "-p", "4", "-m", "8", "--csv", "{d}/x", "--trace", "{d}/x"], "the same file"),
    ],
)
def test_bad_options_are_one_line(tmp_path, capsys, argv, words):
    g = tmp_path / "g.json"
    g.write_text(json.dumps(chain()))
    one_line_error([a.format(g=g, d=tmp_path) for a in argv], capsys, words)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json"]


# -- resource limits --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv,words",
    [
        (
            [
                "info",
                "{g}",
                "--dim",
                "a=" + ",".join(map(str, range(1, 1001))),
                "--dim",
                "b=" + ",".join(map(str, range(1, 1001))),
            ],
            "1,000,000 scenarios",
        ),
        (["frontier", "{g}", "--points", "1000000"], "from 2 to 200"),
        (["pipeline", "--stages", "100000", "--microbatches", "100000"], "over the limit"),
    ],
)
def test_limits_refuse_up_front(tmp_path, capsys, argv, words):
    g = tmp_path / "g.json"
    g.write_text(json.dumps(chain(size="4*a*b" if "--dim" in argv else 1024)))
    one_line_error([a.format(g=g) for a in argv], capsys, words)


@pytest.mark.parametrize(
    "spec,words",
    [
        (
            'graphs = ["layered:n=10,seed=0"]\nmethods = ["cp"]\nseeds = "0..100000000"\n',
            "s.toml:3: seeds[0]",
        ),
        ('graphs = ["layered:n=-5,seed=0"]\nmethods = ["xla-default"]\n', "n must be >= 3"),
        (
            'graphs = ["layered:n=10,seed=0"]\nmethods = [{method = "xla-default", slak = 1}]\n',
            "did you mean 'slack'",
        ),
    ],
)
def test_sweep_spec_refused_when_read(tmp_path, capsys, spec, words):
    (tmp_path / "s.toml").write_text(spec)
    one_line_error(["sweep", tmp_path / "s.toml", "-o", tmp_path / "t.csv"], capsys, words)
    assert not (tmp_path / "t.csv").exists()


# -- the Python API -------------------------------------------------------------------------
# The bad calls (issue 28's and more) are the harness's catalog, run by
# tests/test_reliability_fast.py.


def test_method_options_cover_the_solvers_keywords():
    # a keyword a solver takes but METHOD_OPTIONS lacks would be refused as a typo
    import inspect

    from cpsched.strategies.joint.method import solve_joint
    from cpsched.strategies.min_peak.method import solve
    from cpsched.strategies.overlap.method import solve_overlap
    from cpsched.strategies.remat.method import solve_remat
    from cpsched.methods import METHOD_OPTIONS

    settings = {
        "budget",
        "objective",
        "time_limit",
        "workers",
        "seed",
        "deterministic",
        "log",
        "progress",
        "deadline",
    }
    for fn in (solve_joint, solve, solve_overlap, solve_remat):
        params = list(inspect.signature(fn).parameters.values())[2:]
        names = {p.name for p in params if p.kind != p.VAR_KEYWORD}
        assert names - settings <= METHOD_OPTIONS, (fn.__name__, names - settings - METHOD_OPTIONS)


# -- all-or-nothing outputs -------------------------------------------------------------------


def test_staged_files_appear_together_or_not_at_all(tmp_path, monkeypatch):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("old a\n")
    real_fsync = os.fsync
    calls = []

    def fsync(fd):
        calls.append(fd)
        if len(calls) == 2:  # the second file meets a full disk
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(InputError, match="No space left"), all_or_nothing():
        write_text(str(a), "new a\n")
        assert a.read_text() == "old a\n"  # staged, not yet in place
        write_text(str(b), "new b\n")
    assert a.read_text() == "old a\n" and not b.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]  # no temporary left
    monkeypatch.setattr(os, "fsync", real_fsync)
    with all_or_nothing():
        write_text(str(a), "new a\n")
        write_text(str(b), "new b\n")
    assert a.read_text() == "new a\n" and b.read_text() == "new b\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_FSIZE as a full disk")
def test_trace_on_a_full_disk_leaves_the_older_output(tmp_path):
    g = tmp_path / "g.json"
    g.write_text(json.dumps(graph_to_dict(generators.random_layered(n=200))))
    (tmp_path / "o.json").write_text("older\n")
    (tmp_path / "t.json").write_text("older trace\n")

    def small_disk():  # files past 20 kB fail to write (EFBIG), like a full disk
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))

    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "cpsched",
            "schedule",
            str(g),
            "--method",
            "xla-dfs",
            "-o",
            str(tmp_path / "o.json"),
            "--trace",
            str(tmp_path / "t.json"),
        ],
        preexec_fn=small_disk,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert (tmp_path / "o.json").read_text() == "older\n"
    assert (tmp_path / "t.json").read_text() == "older trace\n"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["g.json", "o.json", "t.json"]


def test_second_sweep_writer_is_refused(tmp_path):
    first = ResultsTable(str(tmp_path / "t.csv"))
    try:
        with pytest.raises(InputError, match="another sweep is writing this table"):
            ResultsTable(str(tmp_path / "t.csv"))
    finally:
        first.close()
    ResultsTable(str(tmp_path / "t.csv")).close()  # free again once the first is done


def test_sweep_table_keeps_whole_rows_on_a_full_disk(tmp_path, monkeypatch):
    path = tmp_path / "t.csv"
    table = ResultsTable(str(path))
    table.append({"key": "k1", "status": "OK"})
    real_write = os.write

    def half_then_full(fd, data):
        real_write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(InputError, match="1 new row"):
        table.append({"key": "k2", "status": "OK"})
    monkeypatch.setattr(os, "write", real_write)
    table.close()
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and lines[1].startswith("k1,")  # header and the whole row


def test_new_sweep_table_never_left_empty(tmp_path):
    path = tmp_path / "t.csv"
    ResultsTable(str(path)).close()  # no row landed: the table it made is gone again
    assert not path.exists()


# -- found by benchmarks/reliability.py ------------------------------------------------------

HLO_CALLS = """HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  p = f32[8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add
}
"""


@pytest.mark.parametrize(
    "edit,words",
    [
        ((", to_apply=add", ""), "reduce without to_apply="),
        (
            ("ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add",
             "ROOT r = f32[] call(z, z)"),
            "call without to_apply=",
        ),
    ],
)
def test_op_without_its_computation_is_refused(tmp_path, capsys, edit, words):
    # a reduce or call naming no computation was an internal error (unpacking the callees)
    path = tmp_path / "m.hlo"
    path.write_text(HLO_CALLS.replace(*edit))
    assert path.read_text() != HLO_CALLS
    one_line_error(["info", path], capsys, words, "m.hlo:")


def test_while_without_body_is_refused(tmp_path, capsys):
    src = tmp_path / "w.hlo"
    src.write_text(
        "HloModule w\n\ncond {\n  p = (s32[]) parameter(0)\n"
        "  i = s32[] get-tuple-element(p), index=0\n  n = s32[] constant(4)\n"
        "  ROOT lt = pred[] compare(i, n), direction=LT\n}\n\n"
        "ENTRY e {\n  z = s32[] constant(0)\n  t = (s32[]) tuple(z)\n"
        "  ROOT w = (s32[]) while(t), condition=cond\n}\n"
    )
    one_line_error(["info", src], capsys, "while without body=")


def test_unknown_device_refused_for_every_method(tmp_path, capsys):
    g = tmp_path / "g.json"
    g.write_text(json.dumps(chain()))
    one_line_error(
        ["schedule", g, "--method", "xla-dfs", "--device", "nope", "-o", tmp_path / "o.json"],
        capsys,
        "unknown device 'nope'",
    )
    assert not (tmp_path / "o.json").exists()


def test_budget_past_a_float_is_refused():
    with pytest.raises(InputError, match="2\\^62"):
        api.schedule(generators.random_layered(n=12, seed=3), "remat-span", budget=10**400)


def test_compare_reads_a_generator_of_methods_once():
    g = generators.random_layered(n=12, seed=3)
    rows = api.compare(g, (m for m in ["xla-dfs", "xla-list"])).rows
    assert {r["method"] for r in rows} >= {"xla-dfs", "xla-list"}
    with pytest.raises(InputError, match="empty"):
        api.compare(g, [])


def test_plain_multidigraph_is_read_as_its_dependences():
    G = nx.MultiDiGraph()
    for n in "abc":
        G.add_node(n, size=8)
    G.add_edges_from([("a", "b"), ("a", "b"), ("b", "c")])
    g = cpsched.from_networkx(G)
    assert g.n_ops == 3
    assert api.simulate(g, ["a", "b", "c"]).peak["static"] == 16


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_report_on_a_full_stdout_fails_before_any_file(tmp_path):
    g = tmp_path / "g.json"
    g.write_text(json.dumps(chain()))
    with open("/dev/full", "w") as full:
        p = subprocess.run(
            [sys.executable, "-m", "cpsched", "schedule", str(g), "--method", "xla-dfs", "-o",
             str(tmp_path / "o.json")],
            stdout=full, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
            env=dict(os.environ, PYTHONPATH=str(REPO)),
        )
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and "stdout" in p.stderr and "Traceback" not in p.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == ["g.json"]
