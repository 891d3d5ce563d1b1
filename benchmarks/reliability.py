"""Hostile inputs and options through the command line: every regression case of the
reliability work, run as a user would run it (a fresh ``python -m cpsched`` per case).

    python benchmarks/reliability.py [--out benchmarks/results_reliability.md]

For every case it checks the exit code against the expected one, that the exit code is one
of 0 / 2 / 130 / 143, that no input file (nor any file that is not the command's output)
was modified, created-over or replaced, and that stderr is at most one line for exit 2.
Exits 1 when any case fails.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
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


def wide_graph(n: int = 300, seed: int = 1) -> str:
    """A random layered graph big enough that ``cp`` runs for seconds."""
    from cpsched.generators import random_layered
    from cpsched.writers.json_graph import graph_to_dict
    return json.dumps(graph_to_dict(random_layered(n=n, seed=seed)))


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
    expect: int
    files: dict[str, str | bytes] = field(default_factory=dict)
    setup: str = ""                    # fifo:NAME, symlink:NAME->TARGET, env:K=V
    signal: int | None = None          # sent after `signal_after` seconds
    signal_after: float = 0.0
    outputs: tuple[str, ...] = ()      # files the command may write
    check: str = ""                    # extra check on success: "interrupted"


G = {"g.json": chain_graph()}
GS = {"g.json": chain_graph(size="4*b")}


def cases() -> list[Case]:
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
    # -- interruption -------------------------------------------------------------------
    wide = {"g.json": wide_graph()}
    for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        add(Case("interrupt", f"{signal.Signals(sig).name} during cp", [
            "schedule", "{d}/g.json", "--time-limit", "60", "-o", "{d}/o.json"], code, wide,
            signal=sig, signal_after=6.0, outputs=("o.json",), check="interrupted"))
    return out


# -- a fuzz corpus through the command line (in process) ------------------------------------

FUZZ_TOKENS = ["{", "}", "(", ")", "[", "]", ",", ":", "=", '"', "\n", "-1", "0", "99",
               "1e400", "NaN", "null", "true", "[]", "{}", "f32[]", "ROOT ", "parameter(0)",
               "index=7", "frobnicate", "\x00", "\ufeff", "9223372036854775808", "*", "^",
               "-done", "-start", '"nodes"', '"links"', '"ops"', '"size"', "ENTRY", "\xff"]


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
    """``n`` mutated HLO / cpsched JSON / node-link files through ``cpsched info`` and
    ``cpsched schedule --method xla-default``, in this process: exit codes counted, and
    every input checked unchanged."""
    import contextlib
    import io
    import random

    from cpsched.cli import main as cli_main
    rng = random.Random(seed)
    seeds = [(HLO_OK, ".hlo"), (chain_graph(), ".json"),
             (json.dumps({"nodes": [{"id": 0, "size": 8}, {"id": 1, "size": "4*s"}],
                          "links": [{"source": 0, "target": 1}]}), ".json")]
    codes: dict[int, int] = {}
    modified = 0
    with tempfile.TemporaryDirectory(prefix="cpsched-fuzz-") as tmp:
        for k in range(n):
            base, ext = seeds[k % len(seeds)]
            path = Path(tmp) / f"in{k}{ext}"
            path.write_bytes(mutate(base, rng).encode("utf-8", errors="surrogatepass"))
            before = path.read_bytes()
            for argv in (["info", str(path), "--dim", "s=4"],
                         ["schedule", str(path), "--method", "xla-default", "--dim", "s=4",
                          "-o", str(Path(tmp) / f"out{k}.json")]):
                with contextlib.redirect_stdout(io.StringIO()), \
                        contextlib.redirect_stderr(io.StringIO()):
                    try:
                        code = cli_main(argv)
                    except SystemExit as e:
                        code = int(e.code or 0)
                codes[code] = codes.get(code, 0) + 1
            modified += path.read_bytes() != before
    return {"runs": sum(codes.values()), "codes": dict(sorted(codes.items())),
            "modified": modified}


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


def run_case(case: Case, root: Path) -> dict:
    d = Path(tempfile.mkdtemp(dir=root))
    for name, content in case.files.items():
        (d / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("CPSCHED_DEBUG", None)
    if case.setup.startswith("fifo:"):
        os.mkfifo(d / case.setup[5:])
    elif case.setup.startswith("symlink:"):
        link, target = case.setup[8:].split("->")
        os.symlink(target, d / link)
    elif case.setup.startswith("chardev:"):
        try:
            os.mknod(d / case.setup[8:], stat.S_IFCHR | 0o666, os.makedev(1, 3))
        except (PermissionError, AttributeError):
            return {"group": case.group, "case": case.name, "exit": "-", "expect": case.expect,
                    "ok": True, "problems": [], "message": "skipped: mknod needs root",
                    "seconds": 0.0}
    elif case.setup.startswith("env:"):
        k, v = case.setup[4:].split("=", 1)
        env[k] = v
    before = _snapshot(d)
    argv = [a.replace("{d}", str(d)) for a in case.argv]
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "cpsched"] + argv, env=env, cwd=d,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if case.signal is not None:
        time.sleep(case.signal_after)
        p.send_signal(case.signal)
    try:
        stdout, stderr = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        stdout, stderr = p.communicate()
    seconds = time.perf_counter() - t0
    after = _snapshot(d)
    problems = []
    if p.returncode != case.expect:
        problems.append(f"exit {p.returncode}, expected {case.expect}")
    if p.returncode not in ALLOWED:
        problems.append(f"exit {p.returncode} not in {sorted(ALLOWED)}")
    for name, dig in before.items():
        if after.get(name) != dig:
            problems.append(f"{name} modified")
    made = sorted(set(after) - set(before) - set(case.outputs))
    if made:
        problems.append("unexpected files: " + ", ".join(made))
    err_lines = [ln for ln in stderr.splitlines() if ln.strip()]
    if p.returncode == 2 and len(err_lines) != 1:
        problems.append(f"{len(err_lines)} lines on stderr")
    if "Traceback" in stderr:
        problems.append("traceback")
    note = ""
    if case.check == "interrupted" and p.returncode == case.expect:
        o = d / "o.json"
        if o.exists():
            # the best schedule so far: marked, and valid (simulate re-validates it)
            if not json.loads(o.read_text()).get("interrupted"):
                problems.append("o.json not marked interrupted")
            check = subprocess.run([sys.executable, "-m", "cpsched", "simulate",
                                    str(d / "g.json"), "--schedule", str(o)], env=env,
                                   capture_output=True, text=True)
            if check.returncode != 0:
                problems.append("o.json is not a valid schedule: " + check.stderr.strip())
            note = "wrote the best schedule so far, marked interrupted (valid)"
        elif "nothing written" in stderr:
            # allowed when the method returned no schedule (e.g. a solver without the
            # runtime that keeps its best solution on a signal)
            note = "no schedule came back: nothing written"
        else:
            problems.append("no output and no message")
    message = note or (err_lines[-1] if err_lines else (stdout.strip().splitlines() or [""])[0])
    return {"group": case.group, "case": case.name, "exit": p.returncode,
            "expect": case.expect, "ok": not problems, "problems": problems,
            "message": message.replace(str(d) + "/", "").replace(str(d), "."),
            "seconds": seconds}


def table(rows: list[dict]) -> str:
    lines = ["| group | case | exit (expected) | ok | message / problems |",
             "|---|---|---|---|---|"]
    for r in rows:
        msg = "; ".join(r["problems"]) if r["problems"] else r["message"]
        msg = msg.replace("|", "\\|")
        if len(msg) > 140:
            msg = msg[:137] + "..."
        lines.append(f"| {r['group']} | {r['case']} | {r['exit']} ({r['expect']}) | "
                     f"{'yes' if r['ok'] else '**NO**'} | {msg} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="write the Markdown results here (default: stdout only)")
    ap.add_argument("-k", default="", help="only cases whose name contains this")
    ap.add_argument("--fuzz", type=int, default=300,
                    help="mutated inputs run through info and schedule (default: 300)")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="cpsched-reliability-") as tmp:
        for case in cases():
            if args.k in case.name:
                rows.append(run_case(case, Path(tmp)))
                r = rows[-1]
                print(f"{'ok ' if r['ok'] else 'FAIL'} {r['exit']:>3} {r['case']}: "
                      f"{'; '.join(r['problems']) or r['message']}", flush=True)
    bad = [r for r in rows if not r["ok"]]
    text = table(rows)
    summary = (f"{len(rows)} cases, {len(rows) - len(bad)} as expected; inputs modified: "
               f"{sum(any('modified' in p for p in r['problems']) for r in rows)}; exit codes "
               f"outside 0/2/130/143: {sum(r['exit'] not in ALLOWED for r in rows)}")
    fz = fuzz_corpus(args.fuzz) if args.fuzz > 0 else None
    if fz is not None:
        summary += (f"\n\nFuzz corpus: {args.fuzz} mutated inputs (HLO, cpsched JSON, "
                    f"node-link; seed 0) through `info` and `schedule --method xla-default`: "
                    f"{fz['runs']} runs, exit codes {fz['codes']}, inputs modified: "
                    f"{fz['modified']}.")
        if set(fz["codes"]) - {0, 2} or fz["modified"]:
            bad.append({"case": "fuzz corpus"})
    print(summary)
    if args.out:
        Path(args.out).write_text(
            "# Reliability: hostile inputs and options\n\n"
            "Made by `python benchmarks/reliability.py --out benchmarks/results_reliability.md`"
            f" (Python {sys.version.split()[0]}). Each case runs `python -m cpsched ARGS` in a "
            "fresh folder; a case passes when its exit code is the expected one, no file "
            "there other than the command's outputs changed (contents, type, link target), "
            "an error is exactly one line on stderr, and an interrupted solve wrote its valid "
            "best schedule marked `interrupted`, or nothing when the method returned none. "
            "Whether a solver returns its best schedule on a signal is up to its runtime "
            "(`cpsched/cp/runtime.py` keeps CP-SAT's best solution and stops the pipeline); "
            "the message column says which happened.\n\n" + summary + "\n\n" + text + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
