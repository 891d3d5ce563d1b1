"""Every module cpsched writes is accepted by XLA's own parser and schedule check.

Writes modules with every method and objective (each heuristic, cp, overlap with
``--async-collectives``, remat with and without eviction, the joint model with
``--async-collectives``) for the bundled dumps in models/hlo/ and the corpus in
models/hlo/corpus/ (captured with the newest jax), XLA's scheduler-test modules in
../shared/peer-cases/xla, and, with fewer methods (their syntax is what they add), the
default-order modules of the jax 0.10 corpus (models/hlo/corpus-jax0.10/); then runs
``tests/xla/xla_accepts.py`` on them with two XLAs:

- the newest jax's, whose Python ``CPSCHED_JAX_PYTHON`` names (``.venv-jax``);
- the pinned jax 0.10.2's, named by ``CPSCHED_JAX_PINNED_PYTHON`` (``.venv-jax-0.10``),
  on the modules written from a source its parser reads (newer XLA prints syntax it
  rejects, e.g. get-tuple-elements as ``%t#1`` operands).

Run it with ``make test-xla`` (creates both environments, sets both variables); each check
whose environment is missing is skipped with the reason.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHECKER = Path(__file__).with_name("xla_accepts.py")
PEERS = Path(os.environ.get("CPSCHED_SHARED_DIR", REPO.parent / "shared")) / "peer-cases" / "xla"
TIME_LIMIT = "2"
HEURISTICS = ["xla-list", "xla-dfs", "xla-postorder", "xla-bfs", "xla-default",
              "gpu-postprocess", "eager-cluster", "lhs", "bladedisc"]


def jax_python(var: str = "CPSCHED_JAX_PYTHON") -> str | None:
    """The jax environment's Python named by ``var`` (``make test-xla`` sets it; a plain
    ``make test`` leaves these minutes-long checks out), if it has jaxlib."""
    py = os.environ.get(var)
    if not py or not Path(py).exists():
        return None
    probe = subprocess.run([py, "-c", "import jaxlib._hlo"], capture_output=True)
    return py if probe.returncode == 0 else None


def _bundled() -> list[Path]:
    seen, out = set(), []
    for p in sorted((REPO / "models" / "hlo").glob("*.hlo")):
        digest = hashlib.sha256(p.read_bytes()).hexdigest()
        if digest not in seen:          # demo.hlo is a copy of one of the dumps
            seen.add(digest)
            out.append(p)
    return out


def _corpus() -> list[Path]:
    return sorted((REPO / "models" / "hlo" / "corpus").glob("*.hlo.gz"))


def _corpus_jax010() -> list[Path]:
    """The jax 0.10 corpus's default-order modules and bundled dumps (the memopt twins
    have the same syntax)."""
    old = REPO / "models" / "hlo" / "corpus-jax0.10"
    return [p for p in sorted(old.glob("*.hlo.gz")) + sorted((old / "bundled").glob("*.hlo.gz"))
            if ".memopt." not in p.name]


def _plain(src: Path, tmp: Path) -> Path:
    if src.suffix != ".gz":
        return src
    dest = tmp / "input" / src.name[:-3]
    dest.parent.mkdir(exist_ok=True)
    with gzip.open(src, "rb") as f:
        dest.write_bytes(f.read())
    return dest


def _peers() -> list[Path]:
    return sorted(PEERS.glob("*.hlo")) if PEERS.is_dir() else []


def _cli(args: list[str]) -> tuple[int, str]:
    from cpsched.cli import main
    import contextlib
    import io
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main(args)
    return rc, err.getvalue().strip()


def write_all(src: Path, out: Path, syntax_only: bool = False) -> tuple[list[Path], dict[str, str]]:
    """Every method's and objective's module for ``src`` under ``out`` (``syntax_only``: one
    heuristic, cp, overlap with async collectives and remat: each way of writing a module
    once); returns the files written and, for each run cpsched refused, its reason."""
    from cpsched.analysis.memory import simulate
    from cpsched.core.scenarios import static
    from cpsched.readers import read_graph
    runs: dict[str, list[str]] = {m: ["--method", m] for m in HEURISTICS}
    runs["cp"] = ["--objective", "weighted", "--time-limit", TIME_LIMIT]
    runs["overlap"] = ["--objective", "overlap", "--async-collectives",
                       "--time-limit", TIME_LIMIT]
    for m in ("gpu-postprocess", "lhs"):      # the post-processors on the split graph too
        runs[f"{m}-async"] = ["--method", m, "--async-collectives"]
    if syntax_only:
        runs = {k: runs[k] for k in ("xla-list", "cp", "overlap")}
    from cpsched.core.errors import CpschedError
    written, refused = [], {}
    try:
        g = read_graph(str(src))
    except CpschedError as e:   # the reader's refusal: nothing to hand to XLA
        return written, {"read": str(e)}
    peak = int(simulate(g, g.default_order(), static()).peak[0])

    def run(name: str, args: list[str]) -> bool:
        path = out / f"{src.stem}.{name}.hlo"
        rc, err = _cli(["schedule", str(src), *args, "-o", str(path)])
        if rc == 0 and path.exists():
            written.append(path)
            written.extend(sorted(out.glob(f"{src.stem}.{name}.*.hlo")))   # per-bucket
            refused.pop(name, None)
            return True
        refused[name] = err or f"exit {rc}"
        return False

    for name, args in runs.items():
        run(name, args)
    # remat needs a budget it can meet: the tightest of these that a plan is found for (the
    # given order's own peak, the last, always fits: then the plan adds nothing)
    remats = (("remat", "remat", []), ("remat-evict", "remat", ["--evict"]),
              ("joint", "time", ["--async-collectives"]))
    for name, objective, more in remats[:1] if syntax_only else remats:
        for fraction in (0.8, 0.9, 0.97, 1.0):
            budget = str(int(peak * fraction))
            if run(name, ["--objective", objective, "--budget", budget,
                          "--time-limit", TIME_LIMIT, *more]):
                break
    return written, refused


JAX_PYTHON = jax_python()
PINNED_PYTHON = jax_python("CPSCHED_JAX_PINNED_PYTHON")
NEWEST_MISSING = ("the newest jax's XLA runs with `make test-xla` (or CPSCHED_JAX_PYTHON=a "
                  "Python with jaxlib; jax 0.11 and later need Python >= 3.12)")
PINNED_MISSING = ("jax 0.10.2's XLA runs with `make test-xla` (or "
                  "CPSCHED_JAX_PINNED_PYTHON=a Python with jaxlib 0.10.2)")


def check(paths: list[Path], python: str | None = None) -> list[dict]:
    py = python or JAX_PYTHON
    proc = subprocess.run([py, str(CHECKER), *map(str, paths)], capture_output=True, text=True)
    recs = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(recs) == len(paths), proc.stderr[-2000:]
    return recs


def _rejections(recs: list[dict]) -> list[str]:
    return [f"{Path(r['file']).name}: {r.get('stage')}: {r.get('error')}" for r in recs
            if not r["ok"]]


needs_jax = pytest.mark.skipif(JAX_PYTHON is None, reason=NEWEST_MISSING)
needs_any_jax = pytest.mark.skipif(JAX_PYTHON is None and PINNED_PYTHON is None,
                                   reason=f"{NEWEST_MISSING}; {PINNED_MISSING}")


@needs_jax
def test_checker_rejects_what_xla_rejects(tmp_path):
    src = (REPO / "tests" / "data" / "hlo" / "collectives_sync.hlo").read_text()
    ok = tmp_path / "ok.hlo"
    ok.write_text(src)
    undefined = tmp_path / "undefined.hlo"
    undefined.write_text(src.replace("tanh(%h)", "tanh(%nope)"))
    two_users = tmp_path / "two_users.hlo"
    two_users.write_text(src.replace(
        "%ar = f32[64,32]{1,0} all-reduce(%h), channel_id=1, replica_groups={{0,1,2,3}}, "
        "use_global_device_ids=true, to_apply=%sum",
        "%ars = f32[64,32]{1,0} all-reduce-start(%h), channel_id=1, replica_groups={{0,1,2,3}}"
        ", to_apply=%sum\n  %ar = f32[64,32]{1,0} all-reduce-done(%ars)\n"
        "  %extra = f32[64,32]{1,0} negate(%ars)"))
    # an all-gather pair whose done does not have the start's result shape
    bad_shape = tmp_path / "bad_shape.hlo"
    bad_shape.write_text(src.replace(
        "%ag = f32[256,32]{1,0} all-gather(f32[64,32]{1,0} %t), channel_id=2, "
        "replica_groups={{0,1,2,3}}, dimensions={0}, use_global_device_ids=true",
        "%ags = (f32[64,32]{1,0}, f32[256,32]{1,0}) all-gather-start(%t), channel_id=2, "
        "replica_groups={{0,1,2,3}}, dimensions={0}, use_global_device_ids=true\n"
        "  %ag = f32[256,32]{1,0} all-gather-done(%ags)").replace(
        "%ag = f32[256,32]{1,0} all-gather-done", "%ag = f32[128,32]{1,0} all-gather-done")
        .replace("f32[256,32]{1,0}, f32[64,32]{1,0}) tuple", "f32[128,32]{1,0}, f32[64,32]{1,0}) tuple")
        .replace("f32[256,32], f32[64,32]) {", "f32[128,32], f32[64,32]) {"))
    # a scheduled module whose text order reads a value before it is computed
    lines = src.replace("HloModule sync_collectives,", "HloModule sync_collectives, "
                        "is_scheduled=true,").splitlines()
    t = next(k for k, ln in enumerate(lines) if "%t = " in ln)
    h = next(k for k, ln in enumerate(lines) if "%h = " in ln)
    lines[t], lines[h] = lines[h], lines[t]
    misordered = tmp_path / "misordered.hlo"
    misordered.write_text("\n".join(lines))
    scheduled = tmp_path / "scheduled.hlo"
    scheduled.write_text(src.replace("HloModule sync_collectives,",
                                     "HloModule sync_collectives, is_scheduled=true,"))
    recs = {Path(r["file"]).name: r
            for r in check([ok, undefined, two_users, misordered, scheduled, bad_shape])}
    assert not recs["bad_shape.hlo"]["ok"] and recs["bad_shape.hlo"]["stage"] == "async", \
        recs["bad_shape.hlo"]
    assert recs["ok.hlo"]["ok"], recs["ok.hlo"]
    assert recs["scheduled.hlo"]["ok"] and recs["scheduled.hlo"]["scheduled"]
    assert not recs["misordered.hlo"]["ok"]
    assert not recs["undefined.hlo"]["ok"] and recs["undefined.hlo"]["stage"] == "parse"
    assert not recs["two_users.hlo"]["ok"] and recs["two_users.hlo"]["stage"] == "async"


SOURCES = [(p, False) for p in _bundled() + _corpus() + _peers()] + \
    [(p, True) for p in _corpus_jax010()]


@needs_any_jax
@pytest.mark.parametrize("src,syntax_only", SOURCES,
                         ids=[("jax0.10/" if s else "") + p.name for p, s in SOURCES])
def test_xla_accepts_every_written_module(src, syntax_only, tmp_path):
    plain = _plain(src, tmp_path)
    written, refused = write_all(plain, tmp_path, syntax_only)
    if not written:
        pytest.skip(f"cpsched writes no module for {src.name}: {refused}")
    checked = []
    if JAX_PYTHON is not None:
        recs = check(written)
        assert not _rejections(recs), "\n".join(_rejections(recs))
        assert all(r["scheduled"] for r in recs)
        checked.append("newest")
    pinned_note = PINNED_MISSING
    if PINNED_PYTHON is not None:
        (source,) = check([plain], PINNED_PYTHON)
        if source["ok"]:
            recs = check(written, PINNED_PYTHON)
            assert not _rejections(recs), "jax 0.10.2: " + "\n".join(_rejections(recs))
            checked.append("0.10.2")
        else:   # the source's syntax is newer than this parser: nothing to compare
            pinned_note = f"jax 0.10.2 rejects the source itself: {source.get('error')}"
    assert checked
    if refused or "0.10.2" not in checked:  # shown in the log, not a failure of acceptance
        print(f"{src.name}: checked with {checked}"
              + ("" if "0.10.2" in checked else f"; not with jax 0.10.2: {pinned_note}")
              + (f"; cpsched refused {sorted(refused)}: {refused}" if refused else ""),
              file=sys.stderr)


@pytest.mark.skipif(PINNED_PYTHON is None, reason=PINNED_MISSING)
def test_pinned_xla_reads_the_jax010_corpus_and_not_the_compact_syntax(tmp_path):
    """The pinned parser is a real second check: it reads the jax 0.10 captures, and
    rejects the newest capture's compact get-tuple-element operands (so the skips above
    are XLA's, not the test's)."""
    old = _plain(REPO / "models" / "hlo" / "corpus-jax0.10" / "cnn_train.hlo.gz"
                 if (REPO / "models" / "hlo" / "corpus-jax0.10" / "cnn_train.hlo.gz").exists()
                 else REPO / "models" / "hlo" / "corpus-jax0.10" / "resnet_bn.hlo.gz",
                 tmp_path)
    new = tmp_path / "compact.hlo"
    new.write_text("HloModule m, is_scheduled=true\n\nENTRY %main (p: f32[4]) -> f32[4] {\n"
                   "  %p = f32[4]{0} parameter(0)\n"
                   "  %t = (f32[4]{0}, f32[4]{0}) tuple(%p, %p)\n"
                   "  ROOT %a = f32[4]{0} add(%t#0, %t#1)\n}\n")
    recs = {Path(r["file"]).name: r for r in check([old, new], PINNED_PYTHON)}
    assert recs[old.name]["ok"], recs[old.name]
    assert not recs["compact.hlo"]["ok"] and recs["compact.hlo"]["stage"] == "parse"
    if JAX_PYTHON is not None:
        (rec,) = check([new])
        assert rec["ok"], rec


@needs_jax
@pytest.mark.parametrize("name", ["pipeline_circular.hlo.gz", "pipeline_circular.memopt.hlo.gz"])
def test_xla_accepts_the_pipeline_loop_body_placement(name, tmp_path):
    """``cpsched pipeline --from-hlo``: the loop bodies' collective-permutes written as
    start/done pairs at cp-overlap's positions; XLA parses the module, verifies its schedule
    and finds both pairs."""
    out = tmp_path / f"{name}.placed.hlo"
    rc, err = _cli(["pipeline", "--from-hlo", str(REPO / "models" / "hlo" / "corpus" / name),
                    "--time-limit", TIME_LIMIT, "-o", str(out)])
    assert rc == 0, err
    (rec,) = check([out])
    assert rec["ok"], rec
    assert rec["scheduled"] and rec["async_pairs"] == 2
