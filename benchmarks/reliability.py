"""Hostile inputs, options, disks and signals through the command line: every regression
case of the reliability work, run as a user would run it (a fresh ``python -m cpsched`` per
case), plus bad calls into the Python API and a fuzz corpus, both run in-process.

    python benchmarks/reliability.py --out benchmarks/results_reliability.md

Each case runs in a folder of its own, with its input files and, where the case says so,
an older version of every output. What is counted (the targets of issue 28):

- tracebacks on stderr, and exit codes outside 0 / 2 / 130 / 143;
- inputs changed: any file there that is not one of the command's outputs is modified,
  replaced or relinked; older outputs changed: a run that fails (exit 2) or is stopped
  before it wrote anything leaves every older output as it was;
- partial outputs: a new file after a failed run, a temporary file left behind, or an
  output the command must write missing after exit 0;
- outputs over their budget with exit 0: the written output, simulated by ``cpsched
  simulate`` (or, for a remat plan JSON, by the independent replay of its steps), peaks
  above the budget it was given;
- claimed figures that differ from ``simulate`` on the written output: the peak the
  command printed (``--json``) against the written file's own;
- time limits overrun: the wall time of a run with ``--time-limit S`` from the process's
  start past S + max(1 s, 5 %);
- bad calls into the Python API (``api_bad_calls``) that do not raise the error type of
  ``cpsched.errors`` they should (a built-in TypeError / ValueError / OverflowError, or no
  error at all);
- and, per case, the expected exit code and one line on stderr for exit 2.

"Full disk" cases cap the size of any file the command writes (``RLIMIT_FSIZE``: a write
past it fails with EFBIG, as one on a full disk fails with ENOSPC), so that some of a
command's files can be written and others cannot; the "disk" cases put one output in a
read-only folder (as root the child runs under ``setpriv`` without the capabilities that
pass over permissions), on ``/dev/full``, or send the report on stdout to a full disk.
Exits 1 when any case fails. ``tests/test_reliability_fast.py`` runs a fast subset.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import resource
import signal
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

ALLOWED = {0, 2, 130, 143}
COUNTS = ("tracebacks", "exit codes outside 0/2/130/143", "inputs changed",
          "older outputs changed", "partial outputs", "outputs over budget with exit 0",
          "claimed figures != simulate", "time limits overrun",
          "API calls not refused with cpsched's errors", "other failures")
API_COUNT = "API calls not refused with cpsched's errors"


# -- inputs -------------------------------------------------------------------------------

def chain_graph(n: int = 6, size: int | str = 1024, version=1, sort_keys=False,
                pad: int = 0) -> str:
    """A cpsched-graph JSON chain of ``n`` ops (``pad`` extra ops make it long)."""
    n = n + pad
    ops = [{"name": f"v{k}", "operands": [f"v{k - 1}"] if k else []} for k in range(n)]
    bufs = [{"name": f"v{k}", "op": f"v{k}", "size": size,
             "users": [f"v{k + 1}"] if k + 1 < n else [], "live_out": k + 1 == n}
            for k in range(n)]
    return json.dumps({"format": "cpsched-graph", "version": version, "name": "chain",
                       "ops": ops, "buffers": bufs}, sort_keys=sort_keys)


def edited_chain(change) -> str:
    """``chain_graph()`` with ``change(dict)`` applied."""
    d = json.loads(chain_graph())
    change(d)
    return json.dumps(d)


def wide_graph(n: int = 300, seed: int = 1, dim: str | None = None) -> str:
    """A random layered graph big enough that ``cp`` runs for seconds."""
    from cpsched.generators import random_layered
    from cpsched.writers.json_graph import graph_to_dict
    return json.dumps(graph_to_dict(random_layered(n=n, seed=seed, dim=dim)))


HLO_OK = """HloModule ok

ENTRY e {
  p0 = f32[8] parameter(0)
  p1 = f32[8] parameter(1)
  a = f32[8] add(p0, p1)
  ROOT n = f32[8] negate(a)
}
"""


def hlo(body: str) -> str:
    return f"HloModule bad\n\nENTRY e {{\n{body}\n}}\n"


# A module with a while loop (its body is scheduled too) and a reducer: the case the issue
# found claimed peaks differing from `simulate` on the written module.
HLO_WHILE = """HloModule loop

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

cond {
  p = (s32[], f32[64], f32[64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[64], f32[64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[64] get-tuple-element(p), index=1
  y = f32[64] get-tuple-element(p), index=2
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  e = f32[64] exponential(x)
  t = f32[64] tanh(y)
  m = f32[64] multiply(e, t)
  x2 = f32[64] add(m, x)
  ROOT r = (s32[], f32[64], f32[64]) tuple(i2, x2, y)
}

ENTRY main {
  a = f32[64] parameter(0)
  b = f32[64] parameter(1)
  z = s32[] constant(0)
  c = f32[64] negate(a)
  d = f32[64] exponential(b)
  t0 = (s32[], f32[64], f32[64]) tuple(z, c, d)
  w = (s32[], f32[64], f32[64]) while(t0), condition=cond, body=body
  r1 = f32[64] get-tuple-element(w), index=1
  r2 = f32[64] get-tuple-element(w), index=2
  s = f32[64] add(r1, r2)
  zero = f32[] constant(0)
  ROOT red = f32[] reduce(s, zero), dimensions={0}, to_apply=add
}
"""

MLIR = """module @jit_f {
  func.func public @main(%arg0: tensor<8x4xf32>, %arg1: tensor<8x4xf32>) -> (tensor<8x4xf32>) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<8x4xf32>
    %1 = stablehlo.multiply %0, %arg1 : tensor<8x4xf32>
    %2 = stablehlo.negate %1 : tensor<8x4xf32>
    return %2 : tensor<8x4xf32>
  }
}
"""

NODE_LINK = {"nodes": [{"id": 0, "size": 8}, {"id": 1, "size": 16}, {"id": 2, "size": 8}],
             "links": [{"source": 0, "target": 1}, {"source": 1, "target": 2}]}


def node_link(**changes) -> str:
    return json.dumps(dict(NODE_LINK, **changes))


def corpus_file(rel: str) -> str:
    return (REPO / rel).read_text()


HLO_BAD = {
    "unknown opcode": hlo("  p0 = f32[8] parameter(0)\n  ROOT f = f32[8] frobnicate(p0)"),
    "gte index past the tuple": hlo(
        "  p0 = f32[8] parameter(0)\n  t = (f32[8], f32[8]) tuple(p0, p0)\n"
        "  ROOT g = f32[8] get-tuple-element(t), index=99"),
    "done fed by a non-start": hlo(
        "  p0 = f32[8] parameter(0)\n  n = f32[8] negate(p0)\n"
        "  ROOT d = f32[16] all-gather-done(n)"),
    "two parameter(0)": hlo(
        "  p0 = f32[8] parameter(0)\n  p1 = f32[8] parameter(0)\n"
        "  ROOT a = f32[8] add(p0, p1)"),
    "add with inconsistent shapes": hlo(
        "  p0 = f32[8] parameter(0)\n  p1 = f32[4] parameter(1)\n"
        "  ROOT a = f32[8] add(p0, p1)"),
}


@dataclass
class Case:
    group: str
    name: str
    argv: list[str]                    # after `cpsched`; {d} is the case's folder
    expect: int | tuple[int, ...]      # the exit code(s) that are right
    files: dict[str, str | bytes] = field(default_factory=dict)
    # fifo:NAME, symlink:NAME->TARGET, hardlink:NAME->TARGET, env:K=V, chardev:NAME,
    # rodir:NAME (a read-only folder), dir:NAME, stdout:full, stdout:closed, stderr:closed
    setup: str = ""
    signal: int | None = None          # sent after `signal_after` seconds
    signal_after: float = 0.0
    outputs: tuple[str, ...] = ()      # files the command may write
    required: tuple[str, ...] = ()     # files it must write when it exits 0
    older: bool = False                # every output exists beforehand (an older output)
    check: str = ""                    # "interrupted", "figure", "budget", "table", "rows"
    fsize: int | None = None           # RLIMIT_FSIZE: a write past it fails (a full disk)
    time_limit: float | None = None    # the --time-limit the wall time is held to
    max_seconds: float | None = None   # a resource limit must answer within this
    budget: int | None = None          # bytes: the written output's peak must not pass it
    dims: tuple[str, ...] = ()         # --dim arguments for the check's `simulate`
    lock_holder: bool = False          # a sweep on the same table runs while this one starts
G = {"g.json": chain_graph()}
GS = {"g.json": chain_graph(size="4*b")}




def earlier_cases() -> list[Case]:
    """The cases of the first reliability round (data loss, sizes, input errors)."""
    out: list[Case] = []
    add = out.append
    sched = ["schedule", "{d}/g.json", "--method", "xla-default"]
    # -- data loss ----------------------------------------------------------------------
    add(Case("data loss", "--trace names the input", sched + ["-o", "{d}/out.json", "--trace",
             "{d}/g.json"], 2, dict(G)))
    add(Case("data loss", "-o names --scenarios", ["schedule", "{d}/g.json", "--method",
             "xla-default", "--scenarios", "{d}/sc.json", "-o", "{d}/sc.json"], 2,
             dict(G, **{"sc.json": json.dumps({"dims": [], "scenarios": [
                 {"name": "static", "values": {}}]})})))
    add(Case("data loss", "-o names --profile", sched + ["--profile", "{d}/p.json", "-o",
             "{d}/p.json"], 2, dict(G, **{"p.json": json.dumps({"v0": 1.0})})))
    add(Case("data loss", "-o names --device file", sched + ["--device", "{d}/dev.json",
             "-o", "{d}/dev.json"], 2, dict(G, **{"dev.json": json.dumps({"name": "x"})})))
    add(Case("data loss", "-o names --schedule (simulate --plot)", [
        "simulate", "{d}/g.json", "--schedule", "{d}/s.txt", "--plot", "{d}/s.txt"], 2,
        dict(G, **{"s.txt": "\n".join(f"v{k}" for k in range(6)) + "\n"})))
    add(Case("data loss", "--trace through a symlink to the input", sched + [
        "-o", "{d}/out.json", "--trace", "{d}/link.json"], 2, dict(G),
        setup="symlink:link.json->g.json"))
    add(Case("data loss", "-o is a FIFO", sched + ["-o", "{d}/fifo"], 2, dict(G),
             setup="fifo:fifo"))
    # a null device made in the case's folder (needs root; skipped otherwise): a run of an
    # unfixed cpsched must not replace the machine's own /dev/null
    add(Case("data loss", "-o is a device node", sched + ["-o", "{d}/null"], 2, dict(G),
             setup="chardev:null"))
    add(Case("data loss", "-o is a symlink", sched + ["-o", "{d}/olink"], 2,
             dict(G, **{"other.txt": "keep me\n"}), setup="symlink:olink->other.txt"))
    add(Case("data loss", "--trace into a missing folder", sched + [
        "-o", "{d}/out.json", "--trace", "{d}/missing/t.json"], 2, dict(G)))
    add(Case("data loss", "remat bucket file names the input", [
        "schedule", "{d}/m.dyn_4.hlo", "--objective", "remat", "--budget", "1GiB",
        "--time-limit", "2", "-o", "{d}/m.hlo", "--dim", "dyn=4,8"], 2,
        {"m.dyn_4.hlo": HLO_OK.replace("f32[8]", "f32[?]")}))
    add(Case("data loss", "-o plan JSON names --scenarios", [
        "schedule", "{d}/g.json", "--objective", "remat", "--budget", "90%", "--time-limit",
        "2", "--scenarios", "{d}/o.json.plan.json", "-o", "{d}/o.json"], 2,
        dict(G, **{"o.json.plan.json": json.dumps({"dims": [], "scenarios": [
            {"name": "static", "values": {}}]})})))
    add(Case("data loss", "valid run writes -o and --trace", sched + [
        "-o", "{d}/out.json", "--trace", "{d}/t.json"], 0, dict(G),
        outputs=("out.json", "t.json")))
    # -- wrong answers --------------------------------------------------------------------
    add(Case("wrong answer", "five 4e18-byte buffers", sched + ["-o", "{d}/out.json"], 2,
             {"g.json": chain_graph(5, size=4 * 10**18)}))
    add(Case("wrong answer", "--dim b=2^63-1", sched + ["-o", "{d}/out.json", "--dim",
             f"b={2**63 - 1}"], 2, dict(GS)))
    add(Case("wrong answer", "--dim b=10^30", sched + ["-o", "{d}/out.json", "--dim",
             f"b={10**30}"], 2, dict(GS)))
    add(Case("wrong answer", "size 2^63 in JSON", sched + ["-o", "{d}/out.json"], 2,
             {"g.json": chain_graph(size=2**63)}))
    add(Case("wrong answer", "HLO array past 2^62 bytes", ["info", "{d}/m.hlo"], 2,
             {"m.hlo": hlo("  p0 = f32[9999999999,9999999999] parameter(0)\n"
                           "  ROOT n = f32[8] negate(p0)")}))
    add(Case("wrong answer", "--budget 1e400", sched + ["-o", "{d}/out.json", "--budget",
             "1e400"], 2, dict(G)))
    # -- exit 3 became input errors -------------------------------------------------------
    info = ["info", "{d}/g.json"]
    add(Case("input error", "size 1e400 in JSON", info, 2,
             {"g.json": chain_graph().replace('"size": 1024', '"size": 1e400')}))
    add(Case("input error", "size NaN in JSON", info, 2,
             {"g.json": chain_graph().replace('"size": 1024', '"size": NaN')}))
    add(Case("input error", "size Infinity in JSON", info, 2,
             {"g.json": chain_graph().replace('"size": 1024', '"size": Infinity')}))
    add(Case("input error", "ops is a string", info, 2, {"g.json": json.dumps(
        {"format": "cpsched-graph", "version": 1, "ops": "abc"})}))
    add(Case("input error", "version \"two\"", info, 2, {"g.json": chain_graph(version="two")}))
    add(Case("input error", "nodes is a dict", info, 2, {"g.json": json.dumps(
        {"nodes": {"a": 1}, "links": []})}))
    add(Case("input error", "link without target", info, 2, {"g.json": json.dumps(
        {"nodes": [{"id": 0}, {"id": 1}], "links": [{"source": 0}]})}))
    add(Case("input error", "empty node-link graph (info)", info, 2, {"g.json": json.dumps(
        {"nodes": [], "links": []})}))
    add(Case("input error", "empty node-link graph (schedule)", sched + ["-o", "{d}/o.json"],
             2, {"g.json": json.dumps({"nodes": [], "links": []})}))
    add(Case("input error", "binary file starting with {", info, 2,
             {"g.json": b"{\x00\xff\xfe\x81binary" + bytes(range(256))}))
    add(Case("input error", "/dev/zero", ["info", "/dev/zero"], 2))
    add(Case("input error", "a FIFO as the input", ["info", "{d}/in.fifo"], 2,
             setup="fifo:in.fifo"))
    add(Case("input error", "scenarios file with a string for the list", [
        "info", "{d}/g.json", "--scenarios", "{d}/sc.json"], 2,
        dict(G, **{"sc.json": json.dumps({"dims": [], "scenarios": "x"})})))
    add(Case("input error", "scenarios file with a dim value of 1e300", [
        "info", "{d}/g.json", "--scenarios", "{d}/sc.json"], 2,
        dict(GS, **{"sc.json": json.dumps({"dims": ["b"], "scenarios": [
            {"values": {"b": 1e300}}]})})))
    add(Case("input error", "file over CPSCHED_MAX_INPUT_BYTES", info, 2, dict(G),
             setup="env:CPSCHED_MAX_INPUT_BYTES=100"))
    # -- valid input refused --------------------------------------------------------------
    add(Case("valid input", "cpsched JSON with sorted keys (format past 4 KiB)", info, 0,
             {"g.json": chain_graph(pad=200, sort_keys=True)}))
    add(Case("valid input", "JSON with a UTF-8 BOM", info, 0,
             {"g.json": "\ufeff" + chain_graph()}))
    add(Case("valid input", "HLO with a UTF-8 BOM", ["info", "{d}/m.hlo"], 0,
             {"m.hlo": "\ufeff" + HLO_OK}))
    # -- options accepted without complaint -------------------------------------------------
    for v in ("-1", "0", "nan", "inf"):
        add(Case("option", f"--time-limit {v}", ["schedule", "{d}/g.json", "--time-limit", v,
                 "-o", "{d}/o.json"], 2, dict(G)))
    add(Case("option", "--workers 0", ["schedule", "{d}/g.json", "--workers", "0", "-o",
             "{d}/o.json"], 2, dict(G)))
    add(Case("option", "--method \"\"", ["schedule", "{d}/g.json", "--method", "", "-o",
             "{d}/o.json"], 2, dict(G)))
    add(Case("option", "--weights nan,1,1", ["schedule", "{d}/g.json", "--dim", "b=1,2,3",
             "--weights", "nan,1,1", "-o", "{d}/o.json"], 2, dict(GS)))
    add(Case("option", "--weights without --dim", ["schedule", "{d}/g.json", "--weights",
             "1", "-o", "{d}/o.json"], 2, dict(G)))
    for name, text in HLO_BAD.items():
        add(Case("hlo", name, ["info", "{d}/m.hlo"], 2, {"m.hlo": text}))
    return out


def _out_for(name: str) -> str:
    return "out.hlo" if name.endswith(".hlo") else "out.json"


def bad_input_cases() -> list[Case]:
    """Issue 28's bad input, each file through ``info``, ``schedule`` (over an older output)
    and ``compare --no-solver``: one line, exit 2, the older output untouched."""
    mlir_cut = {f"StableHLO truncated at {k}": MLIR[:k] for k in (120, 200, 260, 297)}
    files: dict[str, tuple[str, str]] = {
        "duration \"abc\"": ("g.json", edited_chain(
            lambda d: d["ops"][1].update(attrs={"duration": "abc"}))),
        "negative duration": ("g.json", edited_chain(
            lambda d: d["ops"][1].update(attrs={"duration": -5.0}))),
        "duration NaN as a string": ("g.json", edited_chain(
            lambda d: d["ops"][1].update(attrs={"duration": "nan"}))),
        "self-loop in graph JSON": ("g.json", edited_chain(
            lambda d: d["ops"][2]["operands"].append("v2"))),
        "control self-loop": ("g.json", edited_chain(
            lambda d: d["ops"][2].update(control_preds=["v2"]))),
        "async start naming itself": ("g.json", edited_chain(
            lambda d: d["ops"][1].update(async_start="v1"))),
        "live_in \"no\"": ("g.json", edited_chain(
            lambda d: d["buffers"][0].update(live_in="no"))),
        "live_out 2": ("g.json", edited_chain(lambda d: d["buffers"][0].update(live_out=2))),
        "space -1": ("g.json", edited_chain(lambda d: d["buffers"][0].update(space=-1))),
        "space 300": ("g.json", edited_chain(lambda d: d["buffers"][0].update(space=300))),
        "duplicate scenario names": ("g.json", edited_chain(lambda d: d.update(scenarios={
            "dims": [], "scenarios": [{"name": "a", "values": {}},
                                      {"name": "a", "values": {}}]}))),
        "node-link self-loop": ("g.json", node_link(links=NODE_LINK["links"] + [
            {"source": 1, "target": 1}])),
        "node-link directed: false": ("g.json", node_link(directed=False)),
        "node-link negative duration": ("g.json", node_link(nodes=[
            {"id": 0, "size": 8, "duration": -1}, {"id": 1, "size": 8}, {"id": 2, "size": 8}])),
        "HLO without ENTRY": ("m.hlo", HLO_OK.replace("ENTRY e", "e")),
        "add with three operands": ("m.hlo", hlo(
            "  p0 = f32[8] parameter(0)\n  ROOT a = f32[8] add(p0, p0, p0)")),
        "negate with two operands": ("m.hlo", hlo(
            "  p0 = f32[8] parameter(0)\n  ROOT a = f32[8] negate(p0, p0)")),
        "get-tuple-element index=-1": ("m.hlo", hlo(
            "  p0 = f32[8] parameter(0)\n  t = (f32[8], f32[8]) tuple(p0, p0)\n"
            "  ROOT g = f32[8] get-tuple-element(t), index=-1")),
        "parameter(10^20)": ("m.hlo", hlo(
            "  p0 = f32[8] parameter(100000000000000000000)\n  ROOT n = f32[8] negate(p0)")),
        "parameter(5) alone": ("m.hlo", hlo(
            "  p0 = f32[8] parameter(5)\n  ROOT n = f32[8] negate(p0)")),
        "garbage replica_groups": ("m.hlo", HLO_WHILE.replace(
            "ROOT red = f32[] reduce(s, zero)", "ar = f32[64] all-reduce(s), "
            "replica_groups={{0,x},{zz}}, to_apply=add\n  ROOT red = f32[] reduce(ar, zero)")),
        "replica_groups naming a device twice": ("m.hlo", HLO_WHILE.replace(
            "ROOT red = f32[] reduce(s, zero)", "ar = f32[64] all-reduce(s), "
            "replica_groups={{0,1},{1,2}}, to_apply=add\n  ROOT red = f32[] reduce(ar, zero)")),
        "async start naming itself (HLO)": ("m.hlo", hlo(
            "  p0 = f32[8] parameter(0)\n  s = (f32[8], f32[8]) all-reduce-start(s), "
            "replica_groups={}\n  ROOT d = f32[8] all-reduce-done(s)")),
        "StableHLO dim -5": ("m.mlir", MLIR.replace("%arg1: tensor<8x4xf32>",
                                                    "%arg1: tensor<-5x4xf32>")),
        "StableHLO SSA value defined twice": ("m.mlir", MLIR.replace(
            "%1 = stablehlo.multiply %0", "%0 = stablehlo.multiply %0")),
        "StableHLO function without return": ("m.mlir", MLIR.replace(
            "    return %2 : tensor<8x4xf32>\n", "")),
        "StableHLO return of two values for one": ("m.mlir", MLIR.replace(
            "return %2 :", "return %2, %1 :")),
        **{k: ("m.mlir", v) for k, v in mlir_cut.items()},
    }
    out: list[Case] = []
    for name, (fname, text) in files.items():
        o = _out_for(fname)
        out.append(Case("bad input", f"{name} (info)", ["info", f"{{d}}/{fname}"], 2,
                        {fname: text}))
        out.append(Case("bad input", f"{name} (schedule)", [
            "schedule", f"{{d}}/{fname}", "--method", "xla-default", "-o", f"{{d}}/{o}"], 2,
            {fname: text}, outputs=(o,), older=True))
        out.append(Case("bad input", f"{name} (compare)", [
            "compare", f"{{d}}/{fname}", "--no-solver"], 2, {fname: text}))
    g = {"g.json": chain_graph()}
    sched = ["schedule", "{d}/g.json", "--method", "xla-default", "-o", "{d}/out.json"]
    pipe = ["pipeline", "--stages", "4", "--microbatches", "8"]
    opt = [
        ("pipeline --costs 1e308,1e308,1e308", pipe + ["--costs", "1e308,1e308,1e308"], {}),
        ("pipeline --costs nan,1,1", pipe + ["--costs", "nan,1,1"], {}),
        ("pipeline --costs 1,2", pipe + ["--costs", "1,2"], {}),
        ("pipeline --costs 1,2,3,4", pipe + ["--costs", "1,2,3,4"], {}),
        ("pipeline --comm nan", pipe + ["--comm", "nan"], {}),
        ("pipeline --comm -1", pipe + ["--comm", "-1"], {}),
        ("pipeline --memory-cap 1 below every schedule", pipe + ["--act", "100",
                                                                 "--memory-cap", "1"], {}),
        ("pipeline --csv x --trace x", pipe + ["--csv", "{d}/x", "--trace", "{d}/x"], {}),
        ("pipeline --stages 0", ["pipeline", "--stages", "0", "--microbatches", "8"], {}),
        ("pipeline --costs-file /dev/zero", pipe + ["--costs-file", "/dev/zero"], {}),
        ("--scenarios with --dim", ["info", "{d}/g.json", "--scenarios", "{d}/sc.json",
                                    "--dim", "b=4"],
         dict(g, **{"sc.json": json.dumps({"dims": [], "scenarios": [
             {"name": "static", "values": {}}]})})),
        ("/dev/zero as --profile", sched + ["--profile", "/dev/zero"], g),
        ("/dev/zero as --device", sched + ["--device", "/dev/zero"], g),
        ("a folder as --profile", sched + ["--profile", "{d}"], g),
        ("missing input path with a newline", ["info", "HloModule x\nENTRY e {\n}"], {}),
        ("--seed 2^64", sched + ["--seed", str(2**64)], g),
        ("--seed -1", sched + ["--seed", "-1"], g),
        ("--workers 1000000", sched + ["--workers", "1000000"], g),
        ("--time-limit 1e400", sched + ["--time-limit", "1e400"], g),
        ("--points 1", ["frontier", "{d}/g.json", "--points", "1"], g),
        ("--objective zzz (argparse)", sched + ["--objective", "zzz"], g),
        ("-o missing (argparse)", ["schedule", "{d}/g.json"], g),
        ("--workers x (argparse)", sched + ["--workers", "x"], g),
        ("unknown option (argparse)", ["info", "{d}/g.json", "--frob"], g),
        ("no command (argparse)", [], {}),
        ("unknown command (argparse)", ["frobnicate"], {}),
    ]
    for name, argv, files_ in opt:
        out.append(Case("bad option", name, argv, 2, dict(files_), outputs=("out.json",)))
    specs = {
        "sweep generator n=-5": 'graphs = ["layered:n=-5,seed=0"]\nmethods = ["xla-default"]\n',
        "sweep generator seed=-1": 'graphs = ["layered:n=10,seed=-1"]\nmethods = ["xla-dfs"]\n',
        "sweep unknown option in a method table":
            'graphs = ["layered:n=10,seed=0"]\nmethods = [{method = "xla-default", frob = 3}]\n',
        "sweep option typo in options": 'graphs = ["layered:n=10,seed=0"]\n'
                                        'methods = ["cp"]\noptions = {slak = 0.1}\n',
        "sweep seeds -3..2": 'graphs = ["layered:n=10,seed=0"]\nmethods = ["cp"]\n'
                             'seeds = "-3..2"\n',
    }
    for name, text in specs.items():
        out.append(Case("bad option", name, ["sweep", "{d}/s.toml", "-o", "{d}/t.csv"], 2,
                        {"s.toml": text}, outputs=("t.csv", "t.md")))
    return out


def limit_cases() -> list[Case]:
    """Requests that used to run until killed: refused at once (within 30 s of start)."""
    many = ",".join(str(v) for v in range(1, 1001))
    gs = {"g.json": chain_graph(size="4*a*b")}
    g = {"g.json": chain_graph()}
    rows = [
        ("--dim 1000 x 1000 values (10^6 scenarios)", ["info", "{d}/g.json", "--dim",
                                                       f"a={many}", "--dim", f"b={many}"], gs),
        ("--dim 1000 x 1000 values (schedule)", ["schedule", "{d}/g.json", "--method", "cp",
                                                 "--dim", f"a={many}", "--dim", f"b={many}",
                                                 "-o", "{d}/o.json"], gs),
        ("frontier --points 1000000", ["frontier", "{d}/g.json", "--points", "1000000"], g),
        ("pipeline --stages 100000 --microbatches 100000",
         ["pipeline", "--stages", "100000", "--microbatches", "100000"], {}),
        ("pipeline --stages 1000 --microbatches 1000 --virtual 8",
         ["pipeline", "--stages", "1000", "--microbatches", "1000", "--virtual", "8"], {}),
        ("sweep seeds 0..100000000", ["sweep", "{d}/s.toml", "-o", "{d}/t.csv"],
         {"s.toml": 'graphs = ["layered:n=10,seed=0"]\nmethods = ["cp"]\n'
                    'seeds = "0..100000000"\n'}),
        ("sweep graphs seed=0..10^9", ["sweep", "{d}/s.toml", "-o", "{d}/t.csv"],
         {"s.toml": 'graphs = ["layered:n=10,seed=0..1000000000"]\nmethods = ["xla-dfs"]\n'}),
        ("sweep generator n=10^12", ["sweep", "{d}/s.toml", "-o", "{d}/t.csv"],
         {"s.toml": 'graphs = ["layered:n=1000000000000,seed=0"]\nmethods = ["xla-dfs"]\n'}),
    ]
    return [Case("limit", name, argv, 2, files, outputs=("o.json", "t.csv", "t.md"),
                 max_seconds=30.0) for name, argv, files in rows]


def all_or_nothing_cases() -> list[Case]:
    """Several files per command, one of them on a full disk: none changes, none appears.
    The same commands with room for every file write all of them (exit 0)."""
    wide = {"g.json": wide_graph(300)}
    dyn = {"m.hlo": HLO_OK.replace("f32[8]", "f32[?]")}
    mlp = {"m.hlo": corpus_file("models/hlo/mlp_train.hlo")}
    remat = ["schedule", "{d}/m.hlo", "--method", "remat-span", "--budget", "1GiB",
             "--time-limit", "10", "-o", "{d}/o.hlo"]
    rows = [
        # (name, argv, files, outputs, fsize that fails one file but not all)
        ("-o and --trace (trace too big)", ["schedule", "{d}/g.json", "--method", "lhs", "-o",
                                            "{d}/o.json", "--trace", "{d}/t.json"], wide,
         ("o.json", "t.json"), 20_000),
        ("remat module and plan JSON (module too big)", remat, mlp,
         ("o.hlo", "o.hlo.plan.json"), 20_000),
        ("per-bucket modules and plan JSON (plan too big)", remat + ["--dim", "dyn=4,8"], dyn,
         ("o.hlo", "o.dyn_4.hlo", "o.hlo.plan.json"), 1_000),
        ("pipeline --csv and --trace (trace too big)", [
            "pipeline", "-p", "4", "-m", "8", "--method", "1f1b", "--csv", "{d}/p.csv",
            "--trace", "{d}/p.json"], {}, ("p.csv", "p.json"), 5_000),
        ("convert -o (too big)", ["convert", "{d}/g.json", "-o", "{d}/c.json"], wide,
         ("c.json",), 20_000),
        ("schedule HLO -o (too big)", ["schedule", "{d}/m.hlo", "--method", "xla-dfs", "-o",
                                       "{d}/o.hlo"], mlp, ("o.hlo",), 20_000),
    ]
    out: list[Case] = []
    for name, argv, files, outs, fsize in rows:
        out.append(Case("all-or-nothing", f"full disk: {name}", argv, 2, dict(files),
                        outputs=outs, older=True, fsize=fsize))
        out.append(Case("all-or-nothing", f"room: {name.split(' (')[0]}", argv, 0, dict(files),
                        outputs=outs, required=outs, older=True))
    spec = {"s.toml": 'graphs = ["layered:n=12,seed=0..29"]\nmethods = ["xla-dfs", "xla-list"]\n'}
    out.append(Case("all-or-nothing", "full disk: sweep table (whole rows only)", [
        "sweep", "{d}/s.toml", "-o", "{d}/t.csv", "--backend", "local", "--jobs", "1"], 2,
        dict(spec), outputs=("t.csv", "t.md"), fsize=3_000, check="table"))
    out.append(Case("all-or-nothing", "second sweep on a table in use", [
        "sweep", "{d}/s.toml", "-o", "{d}/t.csv", "--backend", "local", "--jobs", "1"], 2,
        {"s.toml": 'graphs = ["layered:n=200,seed=0..3"]\nmethods = ["cp"]\ntime_limits = [20]\n'
                   'workers = [1]\n'}, outputs=("t.csv", "t.md"), lock_holder=True))
    return out


ORDER_METHODS = ("xla-default", "xla-list", "xla-dfs", "xla-postorder", "xla-bfs", "bladedisc",
                 "lhs", "eager-cluster", "gpu-postprocess")


def figure_cases() -> list[Case]:
    """Claimed peaks against ``simulate`` on the written file, for every order method, on a
    JSON graph, a symbolic one over two buckets, a node-link graph, a module with a while
    loop and a training step from the corpus (issue 28: answers class)."""
    inputs = [
        ("layered JSON", "g.json", wide_graph(80, seed=4), ()),
        ("symbolic JSON b=2,8", "g.json", wide_graph(60, seed=5, dim="b"), ("b=2,8",)),
        ("node-link", "g.json", node_link(), ()),
        ("while loop HLO", "m.hlo", HLO_WHILE, ()),
        ("mlp_train HLO", "m.hlo", corpus_file("models/hlo/mlp_train.hlo"), ()),
    ]
    out: list[Case] = []
    for label, fname, text, dims in inputs:
        o = _out_for(fname)
        for method in ORDER_METHODS + ("cp",):
            argv = ["schedule", f"{{d}}/{fname}", "--method", method, "-o", f"{{d}}/{o}",
                    "--json"] + [x for dim in dims for x in ("--dim", dim)]
            if method == "cp":
                argv += ["--time-limit", "10"]
            out.append(Case("figure", f"{method} on {label}", argv, 0, {fname: text},
                            outputs=(o,), required=(o,), check="figure", dims=dims))
    return out


def budget_cases() -> list[Case]:
    """A budget is a promise (issue 28: answers class): exit 0 only with every written
    output within its budget, else a refusal (exit 2)."""
    g = {"g.json": wide_graph(40, seed=2)}
    out: list[Case] = []
    remat = ("remat-span", "remat-xla", "remat-dtr", "remat-sqrt", "remat-offload", "cp-remat")
    for method in remat:
        for budget in ("90%", "70%", "20000"):
            argv = ["schedule", "{d}/g.json", "--method", method, "--budget", budget,
                    "--time-limit", "10", "-o", "{d}/o.json", "--json"]
            out.append(Case("budget", f"{method} --budget {budget}", argv, (0, 2), dict(g),
                            outputs=("o.json",), required=("o.json",), check="budget",
                            budget=int(budget) if budget.isdigit() else None))
    for budget in ("90%", "12KiB"):
        argv = ["schedule", "{d}/g.json", "--objective", "budget", "--budget", budget,
                "--time-limit", "10", "-o", "{d}/o.json", "--json"]
        out.append(Case("budget", f"cp --objective budget --budget {budget}", argv, (0, 2),
                        dict(g), outputs=("o.json",), required=("o.json",), check="budget",
                        budget=12 * 1024 if budget == "12KiB" else None))
    out.append(Case("budget", "--budget 0.9 (a fraction)", [
        "schedule", "{d}/g.json", "--method", "remat-span", "--budget", "0.9", "-o",
        "{d}/o.json"], 2, dict(g), outputs=("o.json",)))
    out.append(Case("budget", "remat-span on the while-loop HLO --budget 1GiB", [
        "schedule", "{d}/m.hlo", "--method", "remat-span", "--budget", "1GiB", "--time-limit",
        "3", "-o", "{d}/o.hlo", "--json"], (0, 2), {"m.hlo": HLO_WHILE},
        outputs=("o.hlo", "o.hlo.plan.json"), required=("o.hlo",), check="budget",
        budget=2**30))
    return out


def time_limit_cases() -> list[Case]:
    """``--time-limit 2`` on a 1k-op graph holds from the process's start (issue 28:
    deadline class): each run must end within 2 s + max(1 s, 5 %)."""
    g = {"g.json": wide_graph(1000, seed=7)}
    rows = [
        ("schedule (cp)", ["schedule", "{d}/g.json", "-o", "{d}/o.json"]),
        ("schedule --objective overlap", ["schedule", "{d}/g.json", "--objective", "overlap",
                                          "-o", "{d}/o.json"]),
        ("schedule --objective remat --budget 90%", ["schedule", "{d}/g.json", "--objective",
                                                     "remat", "--budget", "90%", "-o",
                                                     "{d}/o.json"]),
        ("schedule --objective time --budget 90%", ["schedule", "{d}/g.json", "--objective",
                                                    "time", "--budget", "90%", "-o",
                                                    "{d}/o.json"]),
        ("compare", ["compare", "{d}/g.json"]),
        ("frontier", ["frontier", "{d}/g.json", "--points", "4"]),
        ("pipeline --method cp", ["pipeline", "-p", "8", "-m", "64", "--method", "cp"]),
    ]
    return [Case("time limit", f"--time-limit 2: {name}", argv + ["--time-limit", "2"], (0, 2),
                 dict(g), outputs=("o.json", "o.json.plan.json"), time_limit=2.0)
            for name, argv in rows]


def signal_cases(quick: bool = False) -> list[Case]:
    """SIGINT and SIGTERM at start-up and mid-solve (issue 28: signals class): exit 130 /
    143, no traceback, and what is written is the marked best-so-far or nothing."""
    wide = {"g.json": wide_graph(300)}
    sweep = {"s.toml": 'graphs = ["layered:n=200,seed=0..3"]\nmethods = ["cp"]\n'
                       'time_limits = [30]\nworkers = [1]\n'}
    rows = [
        ("schedule (cp)", ["schedule", "{d}/g.json", "--time-limit", "60", "-o", "{d}/o.json"],
         wide, ("o.json",), "interrupted"),
        ("schedule --objective remat", ["schedule", "{d}/g.json", "--objective", "remat",
                                        "--budget", "90%", "--time-limit", "60", "-o",
                                        "{d}/o.json"], wide, ("o.json",), ""),
        ("compare", ["compare", "{d}/g.json", "--time-limit", "30"], wide, (), ""),
        ("frontier", ["frontier", "{d}/g.json", "--time-limit", "10", "--points", "4"], wide,
         (), ""),
        ("pipeline --method cp", ["pipeline", "-p", "8", "-m", "64", "--method", "cp",
                                  "--time-limit", "60", "--csv", "{d}/p.csv"], {}, ("p.csv",),
         ""),
        ("sweep", ["sweep", "{d}/s.toml", "-o", "{d}/t.csv", "--backend", "local"], sweep,
         ("t.csv", "t.md"), ""),
    ]
    times = (0.3, 6.0) if quick else (0.3, 1.5, 6.0)
    out: list[Case] = []
    for name, argv, files, outs, check in rows:
        for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
            for after in times:
                out.append(Case("signal", f"{signal.Signals(sig).name} at {after:g} s: {name}",
                                argv, code, dict(files), signal=sig, signal_after=after,
                                outputs=outs, check=check))
    return out


def more_signal_cases(quick: bool = False) -> list[Case]:
    """Signals where the first round had none: the first second of a solving command (the
    imports, the reading, a percentage budget's reference), the budget-reference and greedy
    phases of remat and of ``--objective time``, the memory-only phase of ``--slack``, a
    pipeline long enough to be cut mid-solve, and ``compare`` / ``frontier`` cut while they
    solve (they print the finished rows or points and say so)."""
    wide = {"g.json": wide_graph(300)}
    big = {"g.json": wide_graph(1000, seed=7)}
    mlp = {"m.hlo": corpus_file("models/hlo/mlp_train.hlo")}
    rows = [
        ("remat --budget 70% (1k ops)", ["schedule", "{d}/g.json", "--objective", "remat",
                                         "--budget", "70%", "--time-limit", "60", "-o",
                                         "{d}/o.json"], big, ("o.json", "o.json.plan.json"),
         "", (0.1, 0.5, 0.9, 2.0, 4.0)),
        ("--objective time --budget 90%", ["schedule", "{d}/g.json", "--objective", "time",
                                           "--budget", "90%", "--time-limit", "60", "-o",
                                           "{d}/o.json"], wide, ("o.json", "o.json.plan.json"),
         "", (0.1, 0.5, 0.9, 2.0, 4.0)),
        ("--objective overlap --slack 0.1", ["schedule", "{d}/g.json", "--objective",
                                             "overlap", "--slack", "0.1", "--time-limit", "60",
                                             "-o", "{d}/o.json"], wide, ("o.json",), "",
         (0.5, 2.0, 4.0)),
        ("cp on 1k ops", ["schedule", "{d}/g.json", "--time-limit", "60", "-o", "{d}/o.json"],
         big, ("o.json",), "", (0.05, 0.2, 0.9)),
        ("pipeline -p 16 -m 128 --method cp", ["pipeline", "-p", "16", "-m", "128", "--method",
                                               "cp", "--time-limit", "60", "--csv",
                                               "{d}/p.csv", "--trace", "{d}/p.json"], {},
         ("p.csv", "p.json"), "", (0.5, 2.0, 5.0)),
        ("compare (rows kept)", ["compare", "{d}/g.json", "--time-limit", "30"], wide, (),
         "rows", (4.0, 8.0)),
        ("frontier --points 12 (points kept)", ["frontier", "{d}/m.hlo", "--time-limit", "10",
                                                "--points", "12"], mlp, (), "rows",
         (2.5, 4.0)),
    ]
    out: list[Case] = []
    for name, argv, files, outs, check, times in rows:
        if quick:
            times = times[:1] + times[-1:]
        for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
            for after in times:
                out.append(Case("signal", f"{signal.Signals(sig).name} at {after:g} s: {name}",
                                argv, code, dict(files), signal=sig, signal_after=after,
                                outputs=outs, check=check))
    return out


def disk_cases() -> list[Case]:
    """Full-disk-like failures beside ``RLIMIT_FSIZE``: the second output in a read-only
    folder or on ``/dev/full``, the report on stdout to a full disk or a closed stdout. A
    command that fails writes nothing and leaves every older output as it was."""
    g = {"g.json": chain_graph()}
    mlp = {"m.hlo": corpus_file("models/hlo/mlp_train.hlo")}
    sched = ["schedule", "{d}/g.json", "--method", "xla-dfs"]
    remat = ["schedule", "{d}/m.hlo", "--method", "remat-span", "--budget", "90%",
             "--time-limit", "10"]
    pipe = ["pipeline", "-p", "4", "-m", "8", "--method", "1f1b"]
    rows = [
        # (name, argv, files, outputs, expect, setup)
        ("--trace in a read-only folder", sched + ["-o", "{d}/o.json", "--trace",
                                                   "{d}/ro/t.json"], g, ("o.json",), 2,
         "rodir:ro"),
        ("-o in a read-only folder, --trace beside", sched + ["-o", "{d}/ro/o.json",
                                                              "--trace", "{d}/t.json"], g,
         ("t.json",), 2, "rodir:ro"),
        ("remat module and plan in a read-only folder", remat + ["-o", "{d}/ro/o.hlo"], mlp,
         (), 2, "rodir:ro"),
        ("pipeline --trace in a read-only folder", pipe + ["--csv", "{d}/p.csv", "--trace",
                                                           "{d}/ro/p.json"], {}, ("p.csv",),
         2, "rodir:ro"),
        ("convert -o in a read-only folder", ["convert", "{d}/g.json", "-o",
                                              "{d}/ro/c.json"], g, (), 2, "rodir:ro"),
        ("sweep table in a read-only folder", ["sweep", "{d}/s.toml", "-o", "{d}/ro/t.csv"],
         {"s.toml": 'graphs = ["layered:n=12,seed=0..1"]\nmethods = ["xla-dfs"]\n'}, (), 2,
         "rodir:ro"),
        ("--trace /dev/full", sched + ["-o", "{d}/o.json", "--trace", "/dev/full"], g,
         ("o.json",), 2, ""),
        ("-o /dev/full, --trace beside", sched + ["-o", "/dev/full", "--trace",
                                                  "{d}/t.json"], g, ("t.json",), 2, ""),
        ("pipeline --csv /dev/full", pipe + ["--csv", "/dev/full", "--trace", "{d}/p.json"],
         {}, ("p.json",), 2, ""),
        ("remat plan beside a module -o /dev/full", remat + ["-o", "/dev/full"], mlp, (), 2,
         ""),
        ("report on stdout to a full disk", sched + ["-o", "{d}/o.json", "--trace",
                                                     "{d}/t.json"], g, ("o.json", "t.json"),
         2, "stdout:/dev/full"),
        ("--json report to a full disk", sched + ["-o", "{d}/o.json", "--json"], g,
         ("o.json",), 2, "stdout:/dev/full"),
        ("compare report to a full disk", ["compare", "{d}/g.json", "--no-solver"], g, (), 2,
         "stdout:/dev/full"),
        ("stdout closed (files still written)", sched + ["-o", "{d}/o.json"], g, ("o.json",),
         0, "stdout:closed"),
        ("stderr closed, bad input", ["info", "{d}/g.json"], {"g.json": "{"}, (), 2,
         "stderr:closed"),
    ]
    out: list[Case] = []
    for name, argv, files, outs, expect, setup in rows:
        out.append(Case("disk", name, argv, expect, dict(files), setup=setup, outputs=outs,
                        required=outs if expect == 0 else (), older=True))
    return out


def more_budget_cases() -> list[Case]:
    """Every method that takes ``--budget``, at several values from loose to impossible, on
    a plain and a symbolic graph; and every spelling of a fraction, refused with the
    percentage it meant."""
    g = {"g.json": wide_graph(40, seed=2)}
    gs = {"g.json": wide_graph(30, seed=3, dim="b")}
    out: list[Case] = []
    solvers = {"cp-remat": "10", "cp-joint": "10", "remat-fixed-order": "10",
               "cp": "5", "cp-overlap": "5"}
    methods = ("remat-span", "remat-xla", "remat-dtr", "remat-sqrt", "remat-offload",
               "cp-remat", "cp-joint", "remat-fixed-order", "cp", "cp-overlap", "lhs",
               "xla-dfs", "xla-default", "bladedisc")
    for method in methods:
        budgets = ["100%", "50%", "25%", "150%", "9000", "1MiB"]
        if method in solvers:
            budgets = ["100%", "50%", "9000"]
        for budget in budgets:
            argv = ["schedule", "{d}/g.json", "--method", method, "--budget", budget,
                    "-o", "{d}/o.json", "--json"]
            if method in solvers:
                argv += ["--time-limit", solvers[method]]
            if method == "cp" and budget != "100%":
                argv += ["--objective", "budget"]
            b = None if budget.endswith("%") else (2**20 if budget == "1MiB" else int(budget))
            out.append(Case("budget", f"{method} --budget {budget}", argv, (0, 2), dict(g),
                            outputs=("o.json", "o.json.plan.json"), required=("o.json",),
                            check="budget", budget=b))
    for method in ("remat-span", "remat-dtr", "xla-dfs", "cp-remat"):
        argv = ["schedule", "{d}/g.json", "--method", method, "--budget", "80%,40%",
                "--dim", "b=2,8", "-o", "{d}/o.json", "--json", "--time-limit", "10"]
        out.append(Case("budget", f"{method} --budget 80%,40% over b=2,8", argv, (0, 2),
                        dict(gs), outputs=("o.json", "o.json.plan.json"),
                        required=("o.json",), check="budget", dims=("b=2,8",)))
    fractions = ("0.9", ".9", "0.5", "0.99", "0.9,0.8", "1.5", "0", "-0.9", "90 %", "%",
                 "nan%", "inf%", "-10%", "0%", "1e400%", "", ",", "9 0%", "90%%", "0x10",
                 "1e3", "12 KiB", "12KB", "12kib", "1.5KiB", "1e-3GiB")
    for budget in fractions:
        argv = ["schedule", "{d}/g.json", "--method", "remat-span", "--budget", budget, "-o",
                "{d}/o.json", "--json"]
        out.append(Case("budget", f"--budget {budget!r}", argv, (0, 2), dict(g),
                        outputs=("o.json", "o.json.plan.json"), required=("o.json",),
                        check="budget", older=True))
    return out


def more_input_cases() -> list[Case]:
    """More hostile files and options than the issue listed: empty and odd JSON, deep
    nesting, cycles, dangling names, a 30,000-op chain (recursion), CRLF line ends, paths
    that spell the input another way, hard links, tiny time limits, odd --dim values."""
    def chain_edit(change):
        return {"g.json": edited_chain(change)}
    n = 30_000
    long_chain = {"g.json": chain_graph(n=n)}
    files = {
        "empty file": ("g.json", ""),
        "whitespace only": ("g.json", " \n\t\n"),
        "JSON {}": ("g.json", "{}"),
        "JSON []": ("g.json", "[]"),
        "JSON 42": ("g.json", "42"),
        "JSON null": ("g.json", "null"),
        "JSON nested 100,000 deep": ("g.json", "[" * 100_000),
        "JSON object nested 100,000 deep": ("g.json", '{"a":' * 100_000),
        "cycle in graph JSON": ("g.json", edited_chain(
            lambda d: d["ops"][0]["operands"].append("v5"))),
        "operand names no op": ("g.json", edited_chain(
            lambda d: d["ops"][2]["operands"].append("zz"))),
        "buffer of no op": ("g.json", edited_chain(lambda d: d["buffers"][1].update(op="zz"))),
        "user names no op": ("g.json", edited_chain(
            lambda d: d["buffers"][1]["users"].append("zz"))),
        "two ops of one name": ("g.json", edited_chain(
            lambda d: d["ops"][3].update(name="v2"))),
        "size -8": ("g.json", chain_graph(size=-8)),
        "size 1.5": ("g.json", chain_graph(size=1.5)),
        "size \"4*\"": ("g.json", chain_graph(size="4*")),
        "size true": ("g.json", chain_graph(size=True)),
        "node-link cycle": ("g.json", node_link(links=NODE_LINK["links"] + [
            {"source": 2, "target": 0}])),
        "node-link size -1": ("g.json", node_link(nodes=[
            {"id": 0, "size": -1}, {"id": 1, "size": 8}, {"id": 2, "size": 8}])),
        "node-link link to a missing node": ("g.json", node_link(links=NODE_LINK["links"] + [
            {"source": 2, "target": 9}])),
        "HLO cycle": ("m.hlo", hlo("  p0 = f32[8] parameter(0)\n  a = f32[8] add(p0, b)\n"
                                   "  ROOT b = f32[8] add(p0, a)")),
        "HLO operand never defined": ("m.hlo", hlo(
            "  p0 = f32[8] parameter(0)\n  ROOT a = f32[8] add(p0, zz)")),
        "HLO two ROOTs": ("m.hlo", hlo("  p0 = f32[8] parameter(0)\n  ROOT a = f32[8] "
                                       "negate(p0)\n  ROOT b = f32[8] negate(a)")),
        "HLO name defined twice": ("m.hlo", hlo(
            "  p0 = f32[8] parameter(0)\n  a = f32[8] negate(p0)\n"
            "  ROOT a = f32[8] negate(a)")),
        "HLO while without body": ("m.hlo", HLO_WHILE.replace(", body=body", "")),
        "HLO calls a missing computation": ("m.hlo", HLO_WHILE.replace("to_apply=add",
                                                                      "to_apply=nope")),
        "HLO shape f32[8,": ("m.hlo", hlo("  p0 = f32[8, parameter(0)\n  ROOT n = f32[8] "
                                          "negate(p0)")),
        "HLO dim -1": ("m.hlo", hlo("  p0 = f32[-1] parameter(0)\n  ROOT n = f32[-1] "
                                    "negate(p0)")),
        "HLO cut in half": ("m.hlo", HLO_WHILE[:len(HLO_WHILE) // 2]),
        "StableHLO unknown op": ("m.mlir", MLIR.replace("stablehlo.negate", "stablehlo.frob")),
        "StableHLO operand never defined": ("m.mlir", MLIR.replace("stablehlo.negate %1",
                                                                   "stablehlo.negate %9")),
    }
    out: list[Case] = []
    for name, (fname, text) in files.items():
        o = _out_for(fname)
        out.append(Case("more input", f"{name} (info)", ["info", f"{{d}}/{fname}"], 2,
                        {fname: text}))
        out.append(Case("more input", f"{name} (schedule)", [
            "schedule", f"{{d}}/{fname}", "--method", "xla-dfs", "-o", f"{{d}}/{o}"], 2,
            {fname: text}, outputs=(o,), older=True))
    valid = [
        ("HLO with CRLF line ends", ["info", "{d}/m.hlo"], {"m.hlo": HLO_OK.replace(
            "\n", "\r\n")}, ""),
        ("HLO with tabs", ["info", "{d}/m.hlo"], {"m.hlo": HLO_OK.replace("  ", "\t")}, ""),
        ("op names with spaces, quotes and non-ASCII", ["schedule", "{d}/g.json", "--method",
                                                        "xla-dfs", "-o", "{d}/o.json"],
         {"g.json": chain_graph().replace('"v1"', '"a \\"b\\" \u00e9\u4e2d"')}, ""),
    ]
    for method in ("xla-dfs", "xla-postorder", "xla-list", "bladedisc", "lhs"):
        valid.append((f"{n:,}-op chain through {method}", [
            "schedule", "{d}/g.json", "--method", method, "-o", "{d}/o.json"], long_chain, ""))
    for name, argv, files_, setup in valid:
        outs = ("o.json",) if "-o" in argv else ()
        out.append(Case("more input", name, argv, 0, dict(files_), setup=setup, outputs=outs,
                        required=outs))
    g = {"g.json": chain_graph()}
    gs = {"g.json": chain_graph(size="4*b")}
    sched = ["schedule", "{d}/g.json", "--method", "xla-dfs"]
    opts = [
        ("-o spelled ./g.json", sched + ["-o", "{d}/./g.json"], g, ""),
        ("-o spelled sub/../g.json", sched + ["-o", "{d}/sub/../g.json"], g, "dir:sub"),
        ("-o a hard link of the input", sched + ["-o", "{d}/h.json"], g,
         "hardlink:h.json->g.json"),
        ("input is a folder", ["info", "{d}/sub"], {}, "dir:sub"),
        ("--dim b=", ["info", "{d}/g.json", "--dim", "b="], gs, ""),
        ("--dim =4", ["info", "{d}/g.json", "--dim", "=4"], gs, ""),
        ("--dim b=0", ["info", "{d}/g.json", "--dim", "b=0"], gs, ""),
        ("--dim b=1.5", ["info", "{d}/g.json", "--dim", "b=1.5"], gs, ""),
        ("--dim b=-4", ["info", "{d}/g.json", "--dim", "b=-4"], gs, ""),
        ("--dim b=4 --dim b=8", ["info", "{d}/g.json", "--dim", "b=4", "--dim", "b=8"], gs, ""),
        ("--dim zz=4 (no such dim)", ["info", "{d}/g.json", "--dim", "zz=4"], gs, ""),
        ("--weights 1,2 for 3 scenarios", ["info", "{d}/g.json", "--dim", "b=1,2,3",
                                           "--weights", "1,2"], gs, ""),
        ("--weights=-1,1", ["info", "{d}/g.json", "--dim", "b=1,2", "--weights=-1,1"], gs,
         ""),
        ("--device nope", sched + ["-o", "{d}/o.json", "--device", "nope"], g, ""),
        ("--profile missing", sched + ["-o", "{d}/o.json", "--profile", "{d}/nope.json"], g, ""),
        ("--slack nan", ["schedule", "{d}/g.json", "--objective", "overlap", "--slack", "nan",
                         "-o", "{d}/o.json"], g, ""),
        ("--slack -1", ["schedule", "{d}/g.json", "--objective", "overlap", "--slack", "-1",
                        "-o", "{d}/o.json"], g, ""),
        ("--bandwidth -1", ["schedule", "{d}/g.json", "--objective", "remat", "--budget",
                            "90%", "--evict", "--bandwidth", "-1", "-o", "{d}/o.json"], g, ""),
        ("--seed 1.5", sched + ["-o", "{d}/o.json", "--seed", "1.5"], g, ""),
        ("--budget for a heuristic that takes none (xla-bfs)", sched[:3] + [
            "xla-bfs", "--budget", "1", "-o", "{d}/o.json"], g, ""),
        ("CPSCHED_MAX_INPUT_BYTES=abc", ["info", "{d}/g.json"], g,
         "env:CPSCHED_MAX_INPUT_BYTES=abc"),
        ("pipeline -p 4 -m 0", ["pipeline", "-p", "4", "-m", "0"], {}, ""),
        ("pipeline --virtual 0", ["pipeline", "-p", "4", "-m", "8", "--virtual", "0"], {}, ""),
        ("pipeline --act -1", ["pipeline", "-p", "4", "-m", "8", "--act", "-1"], {}, ""),
        ("pipeline --method nope", ["pipeline", "-p", "4", "-m", "8", "--method", "nope"], {},
         ""),
        ("simulate --schedule with a missing op", ["simulate", "{d}/g.json", "--schedule",
                                                   "{d}/s.txt"],
         dict(g, **{"s.txt": "v0\nv1\nv2\n"}), ""),
        ("simulate --schedule out of order", ["simulate", "{d}/g.json", "--schedule",
                                              "{d}/s.txt"],
         dict(g, **{"s.txt": "\n".join(f"v{k}" for k in reversed(range(6))) + "\n"}), ""),
        ("simulate --schedule naming an op twice", ["simulate", "{d}/g.json", "--schedule",
                                                    "{d}/s.txt"],
         dict(g, **{"s.txt": "\n".join(["v0"] + [f"v{k}" for k in range(6)]) + "\n"}), ""),
    ]
    for name, argv, files_, setup in opts:
        expect: int | tuple[int, ...] = (0, 2) if "hard link" in name else 2
        out.append(Case("more input", name, argv, expect, dict(files_), setup=setup,
                        outputs=("o.json", "h.json")))
    tiny = ["schedule", "{d}/g.json", "-o", "{d}/o.json", "--time-limit"]
    for v in ("1e-9", "0.001"):
        out.append(Case("more input", f"--time-limit {v}", tiny + [v], (0, 2), dict(g),
                        outputs=("o.json",), time_limit=float(v)))
    return out


def cases(quick: bool = False) -> list[Case]:
    return (earlier_cases() + bad_input_cases() + more_input_cases() + limit_cases()
            + all_or_nothing_cases() + disk_cases() + figure_cases() + budget_cases()
            + more_budget_cases() + time_limit_cases() + signal_cases(quick)
            + more_signal_cases(quick))


# -- the Python API (in process) -------------------------------------------------------------

def api_bad_calls() -> dict[str, tuple]:
    """Bad calls into the Python API, each with the error type of cpsched's own that it
    must raise (``cpsched.errors``): {name: (call, error type)}. Issue 28 found 27 raising
    the built-in TypeError / ValueError / OverflowError or accepted."""
    import math

    import networkx as nx

    import cpsched
    from cpsched import api, generators
    from cpsched.errors import InputError as IE
    from cpsched.errors import InputTypeError as TE
    from cpsched.errors import LimitError as LE
    from cpsched.errors import ScheduleError as SE

    g = generators.random_layered(n=12, seed=3)
    gs = generators.random_layered(n=12, seed=3, dim="b")
    done = api.schedule(g, "xla-dfs")

    def nx_graph(size=8, **extra):
        G = nx.DiGraph(**extra)
        G.add_node(0, size=size)
        G.add_node(1, size=8)
        G.add_edge(0, 1)
        return G

    def sched(**kw):
        return lambda: api.schedule(g, **kw)

    def on_sym(scen, method="xla-dfs"):
        return lambda: api.schedule(gs, method, scenarios=scen)

    def remat(budget, method="remat-span"):
        return lambda: api.schedule(g, method, budget=budget)

    calls = {
        "read(nx.Graph())": (lambda: api.read(nx.Graph()), IE),
        "read(None)": (lambda: api.read(None), TE),
        "read(42)": (lambda: api.read(42), TE),
        "read(b'HloModule x')": (lambda: api.read(b"HloModule x"), TE),
        "read('')": (lambda: api.read(""), IE),
        "read(a missing path)": (lambda: api.read("no/such/file.hlo"), IE),
        "read(['a'])": (lambda: api.read(["a"]), TE),
        "read(g, async_collectives='yes')": (lambda: api.read(g, async_collectives="yes"), TE),
        "from_networkx(None)": (lambda: api.from_networkx(None), TE),
        "from_networkx(nx.Graph())": (lambda: api.from_networkx(nx.Graph()), IE),
        "from_networkx(undirected path)": (lambda: api.from_networkx(nx.path_graph(3)), IE),
        "from_networkx(a cycle)": (lambda: api.from_networkx(
            nx.DiGraph([(0, 1), (1, 0)])), IE),
        "from_networkx(a self-loop)": (lambda: api.from_networkx(
            nx.DiGraph([(0, 1), (1, 1)])), IE),
        "from_networkx(no sizes)": (lambda: api.from_networkx(nx.DiGraph([(0, 1)])), IE),
        "from_networkx(size=-1)": (lambda: api.from_networkx(nx_graph(-1)), IE),
        "from_networkx(size='4*')": (lambda: api.from_networkx(nx_graph("4*")), IE),
        "from_networkx(size=nan)": (lambda: api.from_networkx(nx_graph(math.nan)), IE),
        "from_networkx(size=2**70)": (lambda: api.from_networkx(nx_graph(2**70)), IE),
        "from_networkx(name=5)": (lambda: api.from_networkx(nx_graph(), name=5), TE),
        "from_networkx(MultiDiGraph in cpsched's layout)": (lambda: api.from_networkx(
            nx.MultiDiGraph(g.to_networkx())), IE),
        "time_limit='5'": (sched(time_limit="5"), TE),
        "time_limit=10**400": (sched(time_limit=10**400), IE),
        "time_limit=nan": (sched(time_limit=math.nan), IE),
        "time_limit=inf": (sched(time_limit=math.inf), IE),
        "time_limit=-1": (sched(time_limit=-1), IE),
        "time_limit=True": (sched(time_limit=True), TE),
        "workers=2.5": (sched(workers=2.5), TE),
        "workers=0": (sched(workers=0), IE),
        "workers='2'": (sched(workers="2"), TE),
        "workers=10**6": (sched(workers=10**6), LE),
        "seed=2**64": (sched(seed=2**64), IE),
        "seed=-1": (sched(seed=-1), IE),
        "seed=1.5": (sched(seed=1.5), TE),
        "seed=None": (sched(seed=None), TE),
        "deterministic='no'": (sched(deterministic="no"), TE),
        "log=2": (lambda: api.schedule(g, "xla-dfs", log=2), TE),
        "slack=nan": (sched(objective="overlap", slack=math.nan), IE),
        "slack=-1": (sched(objective="overlap", slack=-1), IE),
        "slack=inf": (sched(objective="overlap", slack=math.inf), IE),
        "slack='x'": (sched(objective="overlap", slack="x"), TE),
        "method=5": (lambda: api.schedule(g, 5), TE),
        "method='nope'": (lambda: api.schedule(g, "nope"), IE),
        "method=''": (lambda: api.schedule(g, ""), IE),
        "objective='nope'": (sched(objective="nope"), IE),
        "objective=3": (sched(objective=3), TE),
        "scenarios={'b': [1.5]}": (on_sym({"b": [1.5]}), TE),
        "scenarios={'s': [1.5]} on a static graph": (lambda: api.schedule(
            g, "xla-dfs", scenarios={"s": [1.5]}), TE),
        "scenarios={'b': [0]}": (on_sym({"b": [0]}), IE),
        "scenarios={'b': [-3]}": (on_sym({"b": [-3]}), IE),
        "scenarios={'b': [2**70]}": (on_sym({"b": [2**70]}), IE),
        "scenarios={'b': []}": (on_sym({"b": []}), IE),
        "scenarios={'b': '4'}": (on_sym({"b": "4"}), TE),
        "scenarios={'b': [True]}": (on_sym({"b": [True]}), TE),
        "scenarios={'b': [nan]}": (on_sym({"b": [math.nan]}), TE),
        "scenarios={'zz': [4]}": (on_sym({"zz": [4]}), IE),
        "scenarios={} on a symbolic graph": (on_sym({}), IE),
        "scenarios=5": (on_sym(5), TE),
        "scenarios=[5]": (on_sym([5]), TE),
        "scenarios={'b': 1..1999} (past 1024)": (on_sym({"b": list(range(1, 2000))}), LE),
        "budget=object()": (sched(objective="remat", budget=object()), TE),
        "budget=-1": (remat(-1), IE),
        "budget=0": (remat(0), IE),
        "budget=0.9": (remat(0.9), IE),
        "budget='0.9'": (remat("0.9"), IE),
        "budget=nan": (remat(math.nan), IE),
        "budget=10**400": (remat(10**400), IE),
        "budget=True": (remat(True), IE),
        "budget='-10%'": (remat("-10%"), IE),
        "budget='abc'": (remat("abc"), IE),
        "budget=[1000, 2000] for one scenario": (remat([1000, 2000]), IE),
        "budget={'zz': 10**6}": (remat({"zz": 10**6}), IE),
        "budget='1%' (below any plan)": (remat("1%"), cpsched.errors.InfeasibleError),
        "objective='remat' without a budget": (sched(objective="remat"), IE),
        "unknown option slak=0.1": (lambda: api.schedule(g, "xla-dfs", slak=0.1), IE),
        "deadline='x'": (sched(deadline="x"), TE),
        "deadline=nan": (sched(deadline=math.nan), IE),
        "progress=5": (sched(progress=5), TE),
        "device='nope'": (sched(objective="overlap", device="nope", time_limit=2), IE),
        "device=5": (sched(objective="overlap", device=5, time_limit=2), TE),
        "profile=5": (sched(objective="overlap", profile=5, time_limit=2), TE),
        "bandwidth=-1": (lambda: api.schedule(g, "remat-offload", budget="90%",
                                              bandwidth=-1), IE),
        "bandwidth='x'": (lambda: api.schedule(g, "remat-offload", budget="90%",
                                               bandwidth="x"), TE),
        "compare(methods='xla-dfs')": (lambda: api.compare(g, methods="xla-dfs"), TE),
        "compare(methods=[5])": (lambda: api.compare(g, methods=[5]), TE),
        "compare(methods=['nope'])": (lambda: api.compare(g, methods=["nope"]), IE),
        "compare(methods=[])": (lambda: api.compare(g, methods=[]), IE),
        "compare(time_limit=-1)": (lambda: api.compare(g, time_limit=-1), IE),
        "compare(None)": (lambda: api.compare(None), TE),
        "frontier(points=2.5)": (lambda: api.frontier(g, points=2.5), TE),
        "frontier(points=0)": (lambda: api.frontier(g, points=0), IE),
        "frontier(points=-3)": (lambda: api.frontier(g, points=-3), IE),
        "frontier(points=10**6)": (lambda: api.frontier(g, points=10**6), LE),
        "frontier(time_limit='1')": (lambda: api.frontier(g, time_limit="1"), TE),
        "simulate(order=[None] * n)": (lambda: api.simulate(g, [None] * g.n_ops), TE),
        "simulate(order one short)": (lambda: api.simulate(g, list(range(g.n_ops - 1))), SE),
        "simulate(order repeating op 0)": (lambda: api.simulate(g, [0] * g.n_ops), SE),
        "simulate(order with -1)": (lambda: api.simulate(
            g, [-1] + list(range(1, g.n_ops))), IE),
        "simulate(order of unknown names)": (lambda: api.simulate(g, ["zz"] * g.n_ops), IE),
        "simulate(order=5)": (lambda: api.simulate(g, 5), TE),
        "simulate(order of floats)": (lambda: api.simulate(
            g, [float(i) for i in range(g.n_ops)]), TE),
        "simulate(order reversed)": (lambda: api.simulate(
            g, list(reversed(range(g.n_ops)))), SE),
        "simulate(None, [0])": (lambda: api.simulate(None, [0]), TE),
        "write(None, path)": (lambda: api.write(None, "o.json"), TE),
        "write(result, None)": (lambda: api.write(done, None), TE),
        "write(result, 5)": (lambda: api.write(done, 5), TE),
        "write(result, a missing folder)": (lambda: api.write(done, "no/such/dir/o.json"), IE),
        "write(result, '/dev/full')": (lambda: api.write(done, "/dev/full"), IE),
        "random_layered(n=-5)": (lambda: generators.random_layered(n=-5), IE),
        "random_layered(n=2.5)": (lambda: generators.random_layered(n=2.5), TE),
        "random_layered(n=10**9)": (lambda: generators.random_layered(n=10**9), LE),
        "random_layered(seed='x')": (lambda: generators.random_layered(n=10, seed="x"), TE),
        "SymExpr.parse(None)": (lambda: cpsched.SymExpr.parse(None), TE),
        "SymExpr.parse('b+')": (lambda: cpsched.SymExpr.parse("b+"), IE),
        "SymExpr.parse('')": (lambda: cpsched.SymExpr.parse(""), IE),
        "SymExpr.parse('2**b')": (lambda: cpsched.SymExpr.parse("2**b"), IE),
        "SymExpr.parse('1e400')": (lambda: cpsched.SymExpr.parse("1e400"), IE),
        "scenarios_for(weights=[nan])": (lambda: api.scenarios_for(
            gs, {"b": [4]}, weights=[math.nan]), IE),
        "scenarios_for(weights=[1, 2]) for one": (lambda: api.scenarios_for(
            gs, {"b": [4]}, weights=[1, 2]), IE),
        "scenarios_for(weights=[-1])": (lambda: api.scenarios_for(
            gs, {"b": [4]}, weights=[-1]), IE),
        "scenarios_for(weights='x')": (lambda: api.scenarios_for(
            gs, {"b": [4]}, weights="x"), IE),
    }
    return calls


def api_runs() -> list[dict]:
    """Every bad call of ``api_bad_calls`` in this process: a case passes when it raises
    its error type (a subclass of cpsched's own), and, as issue 28 asks of old callers, the
    built-in type it stands for (``InputTypeError`` is a ``TypeError``, ``InputError`` a
    ``ValueError``). Working folder: a temporary one (a call that wrongly writes, writes
    there)."""
    from cpsched.errors import CpschedError, InputError, InputTypeError
    rows = []
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="cpsched-api-") as tmp:
        os.chdir(tmp)
        try:
            calls = api_bad_calls()
            for name, (fn, kind) in calls.items():
                t0 = time.perf_counter()
                problems: list[str] = []
                try:
                    fn()
                    problems.append("accepted")
                    message = ""
                except CpschedError as e:
                    message = f"{type(e).__name__}: {e}"
                    if not isinstance(e, kind):
                        problems.append(f"raised {type(e).__name__}, expected {kind.__name__}")
                    builtin = TypeError if kind is InputTypeError else (
                        ValueError if issubclass(kind, InputError) else None)
                    if builtin is not None and not isinstance(e, builtin):
                        problems.append(f"not a {builtin.__name__}")
                except Exception as e:  # noqa: BLE001 - what is counted
                    message = ""
                    problems.append(f"raw {type(e).__name__}: {e}")
                rows.append({"group": "api", "case": name, "exit": "raise",
                             "expect": kind.__name__, "ok": not problems, "problems": problems,
                             "message": message.replace(tmp, "."),
                             "seconds": time.perf_counter() - t0,
                             "counted": {API_COUNT} if problems else set()})
        finally:
            os.chdir(cwd)
    return rows


# -- a fuzz corpus through the command line (in process) ------------------------------------

FUZZ_TOKENS = ["{", "}", "(", ")", "[", "]", ",", ":", "=", '"', "\n", "-1", "0", "99",
               "1e400", "NaN", "null", "true", "[]", "{}", "f32[]", "ROOT ", "parameter(0)",
               "index=7", "frobnicate", "\x00", "\ufeff", "9223372036854775808", "*", "^",
               "-done", "-start", '"nodes"', '"links"', '"ops"', '"size"', "ENTRY", "\xff",
               "%0", "tensor<-1x", "return", "stablehlo.add", '"directed": false', "-5",
               '"duration": -1', '"live_in": "no"', "replica_groups={{x}}", ", body=body",
               "condition=cond", "to_apply=add", "calls=%x", "while(t0)", "tuple()",
               "(s32[], f32[64])", "index=-1", "f32[?]", "s32[-5]", "%arg9", "func.func",
               '"async_start": "v1"', '"control_preds": ["v0"]', '"space": 1']


def mutate(text: str, rng) -> str:
    """A few random edits of ``text``: deletions, insertions, replacements, truncation."""
    for _ in range(rng.randint(1, 4)):
        if not text:
            break
        i = rng.randrange(len(text))
        kind = rng.choice(["delete", "insert", "replace", "truncate"])
        if kind == "delete":
            text = text[:i] + text[i + rng.randint(1, 12):]
        elif kind == "insert":
            text = text[:i] + rng.choice(FUZZ_TOKENS) + text[i:]
        elif kind == "replace":
            tok = rng.choice(FUZZ_TOKENS)
            text = text[:i] + tok + text[i + len(tok):]
        else:
            text = text[:i]
    return text


def fuzz_corpus(n: int, seed: int = 0) -> dict:
    """``n`` mutated HLO / StableHLO / cpsched JSON / node-link files through ``cpsched
    info`` and ``cpsched schedule --method xla-default``, in this process: exit codes
    counted, every input checked unchanged, and a failed schedule checked to leave no
    file behind."""
    import contextlib
    import io
    import random

    from cpsched.cli import main as cli_main
    rng = random.Random(seed)
    seeds = [(HLO_OK, ".hlo"), (chain_graph(), ".json"), (node_link(), ".json"),
             (MLIR, ".mlir"), (HLO_WHILE, ".hlo")]
    codes: dict[int, int] = {}
    modified = partial = 0
    with tempfile.TemporaryDirectory(prefix="cpsched-fuzz-") as tmp:
        for k in range(n):
            base, ext = seeds[k % len(seeds)]
            path = Path(tmp) / f"in{k}{ext}"
            path.write_bytes(mutate(base, rng).encode("utf-8", errors="surrogatepass"))
            before = path.read_bytes()
            out = Path(tmp) / f"out{k}{'.hlo' if ext == '.hlo' else '.json'}"
            for argv in (["info", str(path), "--dim", "s=4"],
                         ["schedule", str(path), "--method", "xla-default", "--dim", "s=4",
                          "-o", str(out)]):
                with contextlib.redirect_stdout(io.StringIO()), \
                        contextlib.redirect_stderr(io.StringIO()):
                    try:
                        code = cli_main(argv)
                    except SystemExit as e:
                        code = int(e.code or 0)
                codes[code] = codes.get(code, 0) + 1
                if argv[0] == "schedule" and code != 0 and out.exists():
                    partial += 1
            modified += path.read_bytes() != before
        partial += sum(1 for p in Path(tmp).iterdir() if p.name.endswith(".tmp"))
    return {"runs": sum(codes.values()), "codes": dict(sorted(codes.items())),
            "modified": modified, "partial": partial}


# -- running ------------------------------------------------------------------------------

def _digest(path: Path) -> str:
    st = path.lstat()
    if stat.S_ISLNK(st.st_mode):
        return "link:" + os.readlink(path)
    if not stat.S_ISREG(st.st_mode):
        return f"mode:{stat.S_IFMT(st.st_mode)}"
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _snapshot(folder: Path) -> dict[str, str]:
    return {p.name: _digest(p) for p in folder.iterdir()}


def _cpsched(args: list[str], env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cpsched"] + args, env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def _peaks_of_written(case: Case, d: Path, env: dict, out: str) -> tuple[dict | None, str]:
    """The written output's own peak per scenario: ``simulate`` on it (a module: its own
    order, loop bodies included; a schedule JSON: against the input), or the independent
    replay of a remat plan's steps. (None, why) when it cannot be had."""
    path = d / out
    inp = next(iter(case.files))
    dims = [x for dim in case.dims for x in ("--dim", dim)]
    if out.endswith(".hlo"):
        p = _cpsched(["simulate", str(path), "--json"] + dims, env, d)
    else:
        data = json.loads(path.read_text())
        if data.get("format") == "cpsched-remat":
            return _replayed_plan(d / inp, data, case.dims)
        p = _cpsched(["simulate", str(d / inp), "--schedule", str(path), "--json"] + dims,
                     env, d)
    if p.returncode != 0:
        return None, "simulate refused the written output: " + p.stderr.strip()[-200:]
    return json.loads(p.stdout)["peak_bytes"], ""


def _replayed_plan(graph_path: Path, plan: dict, dims) -> tuple[dict | None, str]:
    from cpsched import api
    from cpsched.remat.events import events_from_names
    from cpsched.remat.replay import replay
    g = api.read(str(graph_path))
    sc = api.scenarios_for(g, list(dims) or None)
    steps = plan["steps"]
    peaks = {}
    for k, name in enumerate(sc.names):
        own = steps[name] if isinstance(steps, dict) else steps
        r = replay(g, events_from_names(g, own), sc.only(k))
        if r.errors:
            return None, f"the plan's steps do not replay: {r.errors[0]}"
        peaks[name] = int(r.peak[0])
    return peaks, ""


def _check_written(case: Case, d: Path, env: dict, stdout: str) -> tuple[list[str], set[str]]:
    """The figure and budget checks of an output written with exit 0."""
    problems: list[str] = []
    counted: set[str] = set()
    out = case.required[0]
    peaks, why = _peaks_of_written(case, d, env, out)
    if peaks is None:
        return [why], {"claimed figures != simulate"}
    try:
        claimed = json.loads(stdout)
    except json.JSONDecodeError:
        claimed = {}
    said = claimed.get("peak_bytes") or {}
    if said and {k: int(v) for k, v in said.items()} != {k: int(v) for k, v in peaks.items()}:
        problems.append(f"claims peak {said}, the written output simulates to {peaks}")
        counted.add("claimed figures != simulate")
    if case.check == "budget":
        budget = claimed.get("budget_bytes") or {}
        for name, peak in peaks.items():
            limit = case.budget if case.budget is not None else budget.get(name)
            if limit is None:
                problems.append("no budget stated in the output")
                counted.add("outputs over budget with exit 0")
            elif peak > int(limit):
                problems.append(f"{name}: written output peaks at {peak} B, over its budget "
                                f"{int(limit)} B, with exit 0")
                counted.add("outputs over budget with exit 0")
    return problems, counted


def _whole_table(path: Path) -> str:
    """'' when the CSV table ends on a whole row and every row has the header's fields."""
    import csv
    if not path.exists():
        return ""
    text = path.read_text()
    if not text:
        return "an empty table"
    if not text.endswith("\n"):
        return "a torn last row"
    rows = list(csv.reader(text.splitlines()))
    bad = [k for k, r in enumerate(rows) if len(r) != len(rows[0])]
    return f"rows {bad} are torn" if bad else ""


def _hold_table(case: Case, d: Path, env: dict) -> subprocess.Popen:
    """A first sweep writing the table, for the case of a second one."""
    argv = [a.replace("{d}", str(d)) for a in case.argv]
    p = subprocess.Popen([sys.executable, "-m", "cpsched"] + argv, env=env, cwd=d,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    table = d / "t.csv"
    while time.monotonic() < deadline and not table.exists():
        time.sleep(0.2)
    time.sleep(0.5)
    return p


def read_only_skipped() -> bool:
    """True where a folder cannot be made read-only for the child: root (who writes
    anywhere) without ``setpriv`` to drop that power."""
    import shutil
    return os.geteuid() == 0 and shutil.which("setpriv") is None


def run_case(case: Case, root: Path) -> dict:
    d = Path(tempfile.mkdtemp(dir=root))
    for name, content in case.files.items():
        (d / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("CPSCHED_DEBUG", None)
    prefix: list[str] = []
    streams: dict[str, object] = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    read_only: list[Path] = []
    for setup in filter(None, case.setup.split(";")):
        kind, _, arg = setup.partition(":")
        if kind == "fifo":
            os.mkfifo(d / arg)
        elif kind in ("symlink", "hardlink"):
            link, target = arg.split("->")
            if kind == "symlink":
                os.symlink(target, d / link)
            else:
                os.link(d / target, d / link)
        elif kind == "chardev":
            try:
                os.mknod(d / arg, stat.S_IFCHR | 0o666, os.makedev(1, 3))
            except (PermissionError, AttributeError):
                return {"group": case.group, "case": case.name, "exit": "-",
                        "expect": case.expect, "ok": True, "problems": [],
                        "message": "skipped: mknod needs root", "seconds": 0.0,
                        "counted": set()}
        elif kind == "env":
            k, v = arg.split("=", 1)
            env[k] = v
        elif kind == "dir":
            (d / arg).mkdir()
        elif kind == "rodir":
            # read-only for the child even as root: it runs without the capabilities that
            # pass over file permissions
            if read_only_skipped():
                return {"group": case.group, "case": case.name, "exit": "-",
                        "expect": case.expect, "ok": True, "problems": [],
                        "message": "skipped: root without setpriv", "seconds": 0.0,
                        "counted": set()}
            (d / arg).mkdir()
            read_only.append(d / arg)
            if os.geteuid() == 0:
                prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
        elif kind in ("stdout", "stderr"):
            streams[kind] = subprocess.DEVNULL if arg == "closed" else open(arg, "w")
            if arg == "closed":
                # the descriptor closed in the child, as ``>&-`` does
                prefix = ["sh", "-c", f'exec "$0" "$@" {1 if kind == "stdout" else 2}>&-']
    if case.older:
        for o in case.outputs:
            if (d / o).parent.is_dir():
                (d / o).write_text(f"an older {o}\n")
    for folder in read_only:
        folder.chmod(0o555)
    holder = _hold_table(case, d, env) if case.lock_holder else None
    before = _snapshot(d)
    argv = [a.replace("{d}", str(d)) for a in case.argv]
    limit = case.fsize

    def child_setup() -> None:
        # Ctrl-C as a terminal delivers it, also where this harness runs as a background
        # job (which inherits SIGINT ignored, and a child would keep ignoring it)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    t0 = time.perf_counter()
    p = subprocess.Popen(prefix + [sys.executable, "-m", "cpsched"] + argv, env=env, cwd=d,
                         stdout=streams["stdout"], stderr=streams["stderr"], text=True,
                         preexec_fn=child_setup)
    ended_first = False  # the command ended before its signal's moment (a quiet machine)
    if case.signal is not None:
        time.sleep(case.signal_after)
        ended_first = p.poll() is not None
        if not ended_first:
            p.send_signal(case.signal)
    try:
        stdout, stderr = p.communicate(timeout=max(120.0, 3 * (case.max_seconds or 0)))
    except subprocess.TimeoutExpired:
        p.kill()
        stdout, stderr = p.communicate()
    stdout, stderr = stdout or "", stderr or ""
    seconds = time.perf_counter() - t0
    for stream in streams.values():
        if hasattr(stream, "close"):
            stream.close()
    for folder in read_only:
        folder.chmod(0o755)
    if holder is not None:
        holder.send_signal(signal.SIGTERM)
        holder.wait(timeout=120)
    after = _snapshot(d)
    problems: list[str] = []
    counted: set[str] = set()
    expect = case.expect if isinstance(case.expect, tuple) else (case.expect,)
    code = p.returncode
    early = ""
    if case.signal is not None and code == -case.signal:
        # killed while the interpreter itself was starting, before any line of cpsched ran
        # (no handler can exist yet; on a loaded machine that takes over the signal's
        # moment): the shell reports 128 + N, as for a handled signal, and nothing is written
        code = 128 + case.signal
        early = ("killed by the signal while Python was starting, before cpsched's first "
                 f"line (the shell's status {code}); nothing written")
    if ended_first and code == 0:
        # nothing to interrupt: a finished run is judged as any run is (its outputs below)
        expect = (0,)
        early = "ended before the signal was sent (nothing to interrupt)"
    if code not in expect:
        problems.append(f"exit {code}, expected {' or '.join(map(str, expect))}")
        counted.add("other failures")
    if code not in ALLOWED:
        problems.append(f"exit {code} not in {sorted(ALLOWED)}")
        counted.add("exit codes outside 0/2/130/143")
    if "Traceback" in stderr:
        problems.append("traceback: " + (stderr.strip().splitlines() or [""])[-1][:200])
        counted.add("tracebacks")
    outputs = set(case.outputs)
    for name, dig in before.items():
        if after.get(name) == dig:
            continue
        if name not in outputs:
            problems.append(f"{name} modified")
            counted.add("inputs changed")
        elif case.older and code not in (0,) and not (code in (130, 143) and case.check):
            problems.append(f"the older {name} changed though the run failed")
            counted.add("older outputs changed")
    made = sorted(set(after) - set(before))
    strays = [m for m in made if m not in outputs]
    if strays:
        problems.append("unexpected files: " + ", ".join(strays))
        counted.add("partial outputs" if any(m.endswith(".tmp") for m in strays)
                    or code != 0 else "other failures")
    # a sweep's table is a journal: the whole rows written before the failure stay (a rerun
    # goes on from them); _whole_table checks that no row is torn
    journal = {"t.csv"} if case.check == "table" else set()
    if code == 2 and [m for m in made if m in outputs - journal]:
        problems.append("a failed run left new outputs: " + ", ".join(
            m for m in made if m in outputs - journal))
        counted.add("partial outputs")
    if code == 0:
        missing = [o for o in case.required if not (d / o).exists()
                   or (case.older and after.get(o) == before.get(o))]
        if missing:
            problems.append("exit 0 without writing " + ", ".join(missing))
            counted.add("partial outputs")
    if case.check == "table":
        torn = _whole_table(d / "t.csv")
        if torn:
            problems.append(f"t.csv: {torn}")
            counted.add("partial outputs")
    err_lines = [ln for ln in stderr.splitlines() if ln.strip()]
    if code == 2 and len(err_lines) != 1 and not case.lock_holder and \
            "stderr:closed" not in case.setup:
        problems.append(f"{len(err_lines)} lines on stderr")
        counted.add("other failures")
    if case.max_seconds is not None and seconds > case.max_seconds:
        problems.append(f"took {seconds:.1f} s, over {case.max_seconds:g} s")
        counted.add("other failures")
    if case.time_limit is not None:
        allowed = case.time_limit + max(1.0, 0.05 * case.time_limit)
        if seconds > allowed:
            problems.append(f"took {seconds:.1f} s with --time-limit {case.time_limit:g} "
                            f"(allowed {allowed:.1f} s)")
            counted.add("time limits overrun")
    note = ""
    if case.check in ("figure", "budget") and code == 0 and case.required and \
            (d / case.required[0]).exists():
        more, extra = _check_written(case, d, env, stdout)
        problems += more
        counted |= extra
        note = "written output simulated: figures agree" + (
            ", within budget" if case.check == "budget" else "") if not more else ""
    if case.check == "interrupted" and code in expect and not ended_first:
        o = d / "o.json"
        if o.exists():
            if not json.loads(o.read_text()).get("interrupted"):
                problems.append("o.json not marked interrupted")
                counted.add("other failures")
            check = _cpsched(["simulate", str(d / "g.json"), "--schedule", str(o)], env, d)
            if check.returncode != 0:
                problems.append("o.json is not a valid schedule: " + check.stderr.strip())
                counted.add("partial outputs")
            note = "wrote the best schedule so far, marked interrupted (valid)"
        elif early:
            note = early
        elif "nothing written" in stderr:
            note = "no schedule came back: nothing written"
        else:
            problems.append("no output and no message")
            counted.add("other failures")
    if case.check == "rows" and code in (130, 143) and not early:
        said = (stdout + stderr).lower()
        if not any(w in said for w in ("interrupted", "terminated")):
            problems.append("stopped without saying so")
            counted.add("other failures")
        elif "nothing written" not in said and not stdout.strip():
            problems.append("stopped, but printed none of the finished rows")
            counted.add("other failures")
        else:
            note = ("printed the finished rows, the cut one marked" if stdout.strip()
                    else "stopped before any row finished: nothing printed, and said so")
    if not problems:
        counted = set()
    message = note or early or (err_lines[-1] if err_lines else (stdout.strip().splitlines() or [""])[0])
    return {"group": case.group, "case": case.name, "exit": code,
            "expect": "/".join(map(str, expect)), "ok": not problems, "problems": problems,
            "message": message.replace(str(d) + "/", "").replace(str(d), "."),
            "seconds": seconds, "counted": counted}


def table(rows: list[dict]) -> str:
    lines = ["| group | case | exit (expected) | s | ok | message / problems |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        msg = "; ".join(r["problems"]) if r["problems"] else r["message"]
        msg = msg.replace("|", "\\|").replace("\n", " ")
        if len(msg) > 160:
            msg = msg[:157] + "..."
        lines.append(f"| {r['group']} | {r['case'].replace('|', '/')} | {r['exit']} "
                     f"({r['expect']}) | {r['seconds']:.1f} | {'yes' if r['ok'] else '**NO**'} "
                     f"| {msg} |")
    return "\n".join(lines)


def counts_table(rows: list[dict], fz: dict | None) -> tuple[str, dict[str, int]]:
    counts = {k: sum(k in r["counted"] for r in rows) for k in COUNTS}
    if fz is not None:
        counts["exit codes outside 0/2/130/143"] += sum(
            v for c, v in fz["codes"].items() if c not in ALLOWED)
        counts["inputs changed"] += fz["modified"]
        counts["partial outputs"] += fz["partial"]
    groups = sorted({r["group"] for r in rows}, key=[r["group"] for r in rows].index)
    lines = ["| count | target | " + " | ".join(groups) + (" | fuzz" if fz else "") + " | all |",
             "|---|---|" + "---|" * (len(groups) + (2 if fz else 1))]
    for k in COUNTS:
        per = [sum(k in r["counted"] for r in rows if r["group"] == g) for g in groups]
        fz_n = ""
        if fz is not None:
            fz_n = {"exit codes outside 0/2/130/143": sum(
                v for c, v in fz["codes"].items() if c not in ALLOWED),
                "inputs changed": fz["modified"], "partial outputs": fz["partial"]}.get(k, 0)
        lines.append(f"| {k} | 0 | " + " | ".join(map(str, per))
                     + (f" | {fz_n}" if fz is not None else "") + f" | {counts[k]} |")
    runs = [sum(r["group"] == g for r in rows) for g in groups]
    lines.append("| runs | | " + " | ".join(map(str, runs))
                 + (f" | {fz['runs']}" if fz is not None else "")
                 + f" | {len(rows) + (fz['runs'] if fz else 0)} |")
    return "\n".join(lines), counts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="write the Markdown results here (default: stdout only)")
    ap.add_argument("-k", default="", help="only cases whose group or name contains this")
    ap.add_argument("--fuzz", type=int, default=1000,
                    help="mutated inputs run through info and schedule (default: 1000)")
    ap.add_argument("--jobs", type=int, default=2,
                    help="cases run side by side; signal and time-limit cases run one at a "
                         "time beside them (default: 2)")
    ap.add_argument("--quick", action="store_true",
                    help="signals at two moments instead of three (default: three)")
    args = ap.parse_args(argv)
    chosen = [c for c in cases(args.quick) if args.k in c.name or args.k in c.group]
    alone = [c for c in chosen if c.signal is not None or c.time_limit is not None
             or c.lock_holder]
    together = [c for c in chosen if c not in alone]
    rows: dict[int, dict] = {}
    t_start = time.perf_counter()

    def show(r: dict) -> None:
        print(f"{'ok ' if r['ok'] else 'FAIL'} {r['exit']!s:>3} {r['seconds']:5.1f}s "
              f"{r['group']}: {r['case']}: {'; '.join(r['problems']) or r['message']}"[:300],
              flush=True)

    with tempfile.TemporaryDirectory(prefix="cpsched-reliability-") as tmp:
        # the signal and time-limit cases one at a time, beside the others
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool, \
                concurrent.futures.ThreadPoolExecutor(1) as single:
            futures = {pool.submit(run_case, c, Path(tmp)): chosen.index(c) for c in together}
            futures.update({single.submit(run_case, c, Path(tmp)): chosen.index(c)
                            for c in alone})
            for f in concurrent.futures.as_completed(futures):
                rows[futures[f]] = f.result()
                show(rows[futures[f]])
    ordered = [rows[k] for k in sorted(rows)]
    if not args.k or args.k in "api":
        for r in api_runs():
            ordered.append(r)
            show(r)
    fz = fuzz_corpus(args.fuzz) if args.fuzz > 0 else None
    counts_md, counts = counts_table(ordered, fz)
    bad = [r for r in ordered if not r["ok"]]
    runs = len(ordered) + (fz["runs"] if fz else 0)
    n_api = sum(r["group"] == "api" for r in ordered)
    summary = (f"{runs} hostile runs: {len(ordered) - n_api} cases in fresh processes and "
               f"{n_api} bad calls into the Python API in-process "
               f"({len(ordered) - len(bad)} of the {len(ordered)} as expected)"
               + (f" and {fz['runs']} fuzz runs in-process ({args.fuzz} mutated inputs of five "
                  f"formats through `info` and `schedule`, seed 0; exit codes {fz['codes']})"
                  if fz else "")
               + f"; {time.perf_counter() - t_start:.0f} s.")
    print(summary)
    print(counts_md)
    if args.out:
        # the section bench_deadlines.py keeps in this file stays as it was
        old = Path(args.out).read_text() if Path(args.out).exists() else ""
        begin, end = "<!-- bench_deadlines -->", "<!-- /bench_deadlines -->"
        kept = old[old.index(begin):old.index(end) + len(end)] + "\n" if begin in old and \
            end in old else ""
        Path(args.out).write_text(
            "# Reliability: hostile inputs, options, disks and signals\n\n"
            "Made by `python benchmarks/reliability.py --out benchmarks/results_reliability.md`"
            f" (Python {sys.version.split()[0]}; {os.cpu_count()} cores, load average "
            f"{os.getloadavg()[0]:.1f} at the end: the seconds column and the time-limit rows "
            "depend on it; a signal case whose command ended before its signal's moment is "
            "judged as a normal run and says so). Each case runs "
            "`python -m cpsched ARGS` in a fresh folder (the `api` group: one bad call into the "
            "Python API each, in-process); what each count means is in the script's "
            "docstring. A case passes when its exit code is the expected one and it "
            "adds to no count.\n\n" + summary + "\n\n" + counts_md + "\n\n"
            + "## Cases\n\n" + table(ordered) + "\n" + ("\n" + kept if kept else ""))
    return 1 if bad or any(counts.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
