"""Why the peak is where it is: the buffers live at the peak step, largest first, with the op
defining each and the program's own names and source lines (XLA's op_name metadata and
source locations in both syntaxes, the torch reader's FX/ATen names and lines)."""

from __future__ import annotations

import gzip
import json

import pytest
from helpers import CORPORA, HLO_MODELS

import cpsched
from cpsched import cli
from cpsched.api import explain_peak, format_peak_buffers, simulate

REPO = HLO_MODELS.parents[1]
TORCH = REPO / "models" / "torch"


def _adds_up(e: dict) -> bool:
    """Every byte of the peak is accounted for: the buffers shown, the rest, the scratch."""
    return sum(b["bytes"] for b in e["buffers"]) + e["more"]["bytes"] == e["peak_bytes"]


def test_hand_made_peak():
    g = cpsched.read('{"nodes": [{"id": "a", "size": 100}, {"id": "b", "size": 10},'
                     ' {"id": "c", "size": 1}, {"id": "d", "size": 1000}],'
                     ' "links": [{"source": "a", "target": "c"}, {"source": "b", "target": "c"},'
                     ' {"source": "c", "target": "d"}]}')
    e = explain_peak(simulate(g, ["a", "b", "c", "d"]))["static"]
    # at d: c (its input) and d; a and b died at c
    assert e["op"] == "d" and e["peak_bytes"] == 1001
    assert [(b["buffer"], b["bytes"]) for b in e["buffers"]] == [("d", 1000), ("c", 1)]
    assert e["buffers"][1]["live"] == [2, 3] and _adds_up(e)
    top1 = explain_peak(simulate(g, ["a", "b", "c", "d"]), top=1)["static"]
    assert len(top1["buffers"]) == 1 and top1["more"] == {"count": 1, "bytes": 1} and \
        _adds_up(top1)


def test_symbolic_scenarios_each_have_their_own_peak():
    g = cpsched.read('{"nodes": [{"id": "a", "size": "4*s"}, {"id": "b", "size": 100},'
                     ' {"id": "c", "size": 1}], "links": [{"source": "a", "target": "c"},'
                     ' {"source": "b", "target": "c"}]}')
    r = simulate(g, scenarios=["s=1,1000"])
    e = explain_peak(r, top=None)
    assert e["s=1"]["buffers"][0]["buffer"] == "b" and e["s=1000"]["buffers"][0]["buffer"] == "a"
    assert all(_adds_up(x) for x in e.values())
    assert "live at the peak of s=1000" in format_peak_buffers(e)


@pytest.mark.parametrize("corpus", ["newest", "jax0.10"])
def test_hlo_op_names_and_source_lines(corpus):
    """jax 0.12 writes stack_frame_id metadata and a StackFrames section; jax 0.10 writes
    source_file / source_line: both give the program's file and line."""
    path = CORPORA[corpus] / "adam_donated.hlo.gz"
    if not path.exists():
        pytest.skip(f"{path.name} is not in the {corpus} corpus")
    r = simulate(cpsched.read(str(path)))
    e = explain_peak(r, top=None)["static"]
    assert _adds_up(e)
    sizes = [b["bytes"] for b in e["buffers"]]
    assert sizes == sorted(sizes, reverse=True)
    computed = [b for b in e["buffers"] if b["opcode"] != "parameter" and "op_name" in b]
    assert computed and all(b["op_name"].startswith("jit(adam_donated_step)/")
                            for b in computed)
    # parameters are named by their pytree path (XLA's op_name of a parameter)
    assert "params[1]" in {b.get("op_name") for b in e["buffers"] if b["opcode"] == "parameter"}
    sources = {b["source"] for b in e["buffers"] if "source" in b}
    assert sources and all(s.startswith("models/jax/") and s.split(":")[1].isdigit()
                           for s in sources)


def test_the_line_is_the_one_the_module_names():
    """The source of an instruction is its stack frame's file location, checked by hand
    against the module's own sections."""
    path = CORPORA["newest"] / "adam_donated.hlo.gz"
    if not path.exists():
        pytest.skip("adam_donated is not in the corpus")
    text = gzip.open(path, "rt").read()
    g = cpsched.read(str(path))
    i = next(k for k in range(g.n_ops) if g.op_names[k] == "add_power_fusion")
    line = next(ln for ln in text.splitlines() if ln.lstrip().startswith("%add_power_fusion ="))
    frame = int(line.split("stack_frame_id=")[1].split("}")[0].split()[0])
    frames = text.split("\nStackFrames\n")[1].split("\n\n")[0].splitlines()
    loc_id = int(frames[frame - 1].split("file_location_id=")[1].split()[0])
    locs = text.split("\nFileLocations\n")[1].split("\n\n")[0].splitlines()
    want_line = locs[loc_id - 1].split(" line=")[1].split()[0]
    file_id = int(locs[loc_id - 1].split("file_name_id=")[1].split()[0])
    files = text.split("\nFileNames\n")[1].split("\n\n")[0].splitlines()
    want_file = files[file_id - 1].split('"')[1]
    assert g.attrs(i)["source"] == f"{want_file}:{want_line}"


def test_torch_graphs_carry_fx_aten_and_lines():
    files = sorted(TORCH.glob("*.backward.torch.json.gz"))
    if not files:
        pytest.skip("no captured torch graphs in models/torch")
    g = cpsched.read(str(files[0]))
    e = explain_peak(simulate(g), top=None)["static"]
    assert _adds_up(e)
    named = [b for b in e["buffers"] if b.get("aten")]
    assert named and all(b.get("fx") for b in named)
    assert any(b.get("source", "").split(":")[-1].isdigit() for b in named)
    assert ", ".join(named[0]["aten"]) in format_peak_buffers({"static": e})


def test_info_and_simulate_explain(capsys, tmp_path):
    path = HLO_MODELS / "mlp_train.hlo"
    rc = cli.main(["info", str(path), "--json", "--explain", "3"])
    d = json.loads(capsys.readouterr()[0])
    assert rc == 0 and len(d["peak_buffers"]["static"]["buffers"]) == 3
    assert d["peak_buffers"]["static"]["peak_bytes"] == d["peak_bytes"]["static"]
    # info shows the five largest by default; simulate only with --explain (ten)
    rc = cli.main(["info", str(path)])
    out = capsys.readouterr()[0]
    assert rc == 0 and "live at the peak" in out and len(out.split("largest first:")[1]
                                                          .strip().splitlines()) == 1 + 5 + 1
    rc = cli.main(["info", str(path), "--json", "--explain", "100"])
    rows = json.loads(capsys.readouterr()[0])["peak_buffers"]["static"]["buffers"]
    assert any(b.get("source", "").startswith("models/jax/capture.py:") for b in rows)
    rc = cli.main(["simulate", str(path)])
    assert rc == 0 and "live at the peak" not in capsys.readouterr()[0]
    rc = cli.main(["simulate", str(path), "--explain"])
    out = capsys.readouterr()[0]
    shown = out.split("largest first:")[1].strip().splitlines()
    assert rc == 0 and len([ln for ln in shown[1:] if not ln.strip().startswith("...")]) == 10
    rc = cli.main(["info", str(path), "--explain", "0", "--json"])
    assert rc == 0 and "peak_buffers" not in json.loads(capsys.readouterr()[0])
    rc = cli.main(["info", str(path), "--explain", "-1"])
    _, err = capsys.readouterr()
    assert rc == 2 and err.count("\n") == 1
