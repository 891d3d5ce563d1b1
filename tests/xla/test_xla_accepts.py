"""Every module cpsched writes is accepted by XLA's own parser and schedule check.

Writes modules with every method and objective (each heuristic, cp, overlap with
``--async-collectives``, remat with and without eviction) for the bundled dumps in
models/hlo/ (the corpus in models/hlo/corpus/ included) and XLA's scheduler-test modules
in ../shared/peer-cases/xla, and runs
``tests/xla/xla_accepts.py`` on them with the jax environment's Python, named by
``CPSCHED_JAX_PYTHON``. Run it with ``make test-xla`` (creates ``.venv-jax``, sets it).
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


def jax_python() -> str | None:
    """The jax environment's Python named by ``CPSCHED_JAX_PYTHON`` (``make test-xla`` sets
    it; a plain ``make test`` leaves these minutes-long checks out), if it has jaxlib."""
    py = os.environ.get("CPSCHED_JAX_PYTHON")
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


def _plain(src: Path, tmp: Path) -> Path:
    if src.suffix != ".gz":
        return src
    dest = tmp / "input" / src.name[:-3]
    dest.parent.mkdir()
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


def write_all(src: Path, out: Path) -> tuple[list[Path], dict[str, str]]:
    """Every method's and objective's module for ``src`` under ``out``; returns the files
    written and, for each run cpsched refused, its one-line reason."""
    from cpsched.analysis.memory import simulate
    from cpsched.core.scenarios import static
    from cpsched.readers import read_graph
    runs: dict[str, list[str]] = {m: ["--method", m] for m in HEURISTICS}
    runs["cp"] = ["--objective", "weighted", "--time-limit", TIME_LIMIT]
    runs["overlap"] = ["--objective", "overlap", "--async-collectives",
                       "--time-limit", TIME_LIMIT]
    for m in ("gpu-postprocess", "lhs"):      # the post-processors on the split graph too
        runs[f"{m}-async"] = ["--method", m, "--async-collectives"]
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
    for name, more in (("remat", []), ("remat-evict", ["--evict"])):
        for fraction in (0.8, 0.9, 0.97, 1.0):
            budget = str(int(peak * fraction))
            if run(name, ["--objective", "remat", "--budget", budget,
                          "--time-limit", TIME_LIMIT, *more]):
                break
    return written, refused


JAX_PYTHON = jax_python()


def check(paths: list[Path]) -> list[dict]:
    py = JAX_PYTHON
    proc = subprocess.run([py, str(CHECKER), *map(str, paths)], capture_output=True, text=True)
    recs = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(recs) == len(paths), proc.stderr[-2000:]
    return recs


needs_jax = pytest.mark.skipif(JAX_PYTHON is None, reason="XLA acceptance runs with `make "
                               "test-xla` (or CPSCHED_JAX_PYTHON=a Python with jaxlib)")


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


@needs_jax
@pytest.mark.parametrize("src", _bundled() + _corpus() + _peers(), ids=lambda p: p.name)
def test_xla_accepts_every_written_module(src, tmp_path):
    written, refused = write_all(_plain(src, tmp_path), tmp_path)
    if not written:
        pytest.skip(f"cpsched writes no module for {src.name}: {refused}")
    recs = check(written)
    bad = [f"{Path(r['file']).name}: {r.get('stage')}: {r.get('error')}" for r in recs
           if not r["ok"]]
    assert not bad, "\n".join(bad)
    assert all(r["scheduled"] for r in recs)
    if refused:     # shown with -rs / in the log, not a failure of XLA's acceptance
        print(f"{src.name}: cpsched refused {sorted(refused)}: {refused}", file=sys.stderr)


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
