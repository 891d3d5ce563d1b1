"""``cpsched sweep`` on a local Ray: the same rows as the local pool, a rerun skips them, a
sweep killed halfway (kill -9 of the driver's process group) resumes with no key twice,
and tasks ask Ray for as many CPUs as they have workers.

Ray lives in its own environment (``make ray-env`` creates ``.venv-ray``); these tests run
the command line with that environment's Python, named by ``CPSCHED_RAY_PYTHON``
(``make test-ray`` sets it), and skip with the reason where it is not set.
"""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def ray_python() -> str | None:
    py = os.environ.get("CPSCHED_RAY_PYTHON")
    if not py or not Path(py).exists():
        return None
    py = os.path.abspath(py)  # the sweeps run in other folders (not resolve: a venv's python is a link)
    probe = subprocess.run([py, "-c", "import ray, cpsched"], capture_output=True, cwd=REPO)
    return py if probe.returncode == 0 else None


RAY_PY = ray_python()
pytestmark = pytest.mark.skipif(
    RAY_PY is None,
    reason="needs ray: CPSCHED_RAY_PYTHON names no Python with ray and cpsched "
    "(`make test-ray` creates .venv-ray and sets it)",
)
ENV = dict(os.environ, PYTHONPATH=str(REPO), RAY_USAGE_STATS_ENABLED="0")

SPEC = """\
graphs = ["layered:n=20,seed=0..3"]
methods = ["cp", "xla-dfs", "xla-list"]
time_limits = [2]
workers = [1, 2]
"""
# the same spec in YAML (ray brings PyYAML along)
SPEC_YAML = """\
graphs: ["layered:n=20,seed=0..3"]
methods: [cp, xla-dfs, xla-list]
time_limits: [2]
workers: [1, 2]
"""


def sweep(*args, cwd, timeout=300):
    return subprocess.run([RAY_PY, "-m", "cpsched", "sweep", *map(str, args)], env=ENV,
                          cwd=cwd, capture_output=True, text=True, timeout=timeout)


def rows(path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_ray_rows_match_the_local_pool_and_rerun_skips(tmp_path):
    (tmp_path / "s.yaml").write_text(SPEC_YAML)
    (tmp_path / "s.toml").write_text(SPEC)
    r = sweep("s.yaml", "-o", "ray.csv", "--jobs", "2", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "on Ray" in r.stdout and "ray is not installed" not in r.stderr
    r2 = sweep("s.toml", "-o", "local.csv", "--backend", "local", "--jobs", "2", cwd=tmp_path)
    assert r2.returncode == 0, r2.stderr
    on_ray, local = rows(tmp_path / "ray.csv"), rows(tmp_path / "local.csv")
    # 4 graphs x (cp with 1 and 2 workers + 2 heuristics); the YAML and TOML specs agree
    assert len(on_ray) == 16 and {r["key"] for r in on_ray} == {r["key"] for r in local}
    by_key = {r["key"]: r for r in local}
    for row in on_ray:
        assert row["status"] != "ERROR", row["error"]
        if row["status"] in ("OPTIMAL", "HEURISTIC"):
            assert row["peak_bytes"] == by_key[row["key"]]["peak_bytes"]
    before = (tmp_path / "ray.csv").read_bytes()
    r = sweep("s.yaml", "-o", "ray.csv", cwd=tmp_path)
    assert r.returncode == 0 and "16 were in" in r.stdout and "0 ran now" in r.stdout
    assert (tmp_path / "ray.csv").read_bytes() == before


def test_a_solve_wider_than_the_cluster_is_refused(tmp_path):
    (tmp_path / "s.toml").write_text(SPEC.replace("workers = [1, 2]", "workers = [3]"))
    r = sweep("s.toml", "--jobs", "2", "--backend", "ray", cwd=tmp_path)
    assert r.returncode == 2 and "asks for 3 workers but the Ray cluster has 2 CPUs" in r.stderr


def test_kill_9_halfway_on_ray_resumes(tmp_path):
    n = 40
    (tmp_path / "s.toml").write_text(
        f'graphs = ["layered:n=30,seed=0..{n - 1}"]\n'
        'methods = ["xla-dfs", "xla-list", "cp"]\ntime_limits = [0.5]\n')
    table = tmp_path / "s.csv"
    proc = subprocess.Popen([RAY_PY, "-m", "cpsched", "sweep", "s.toml", "--jobs", "2"],
                            env=ENV, cwd=tmp_path, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        if table.exists() and table.read_text().count("\n") > 30:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the sweep ended before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = len(rows(table))
    assert 0 < done < 3 * n
    r = sweep("s.toml", "--jobs", "2", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    keys = [row["key"] for row in rows(table)]
    assert len(keys) == 3 * n and len(set(keys)) == 3 * n
