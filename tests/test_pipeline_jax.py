"""The JAX reference executor runs every baseline and the CP schedule on 4 host CPU devices
(shard_map + ppermute) and must give the unpipelined step's loss and gradients.

Runs where jax is installed (the jax environment: ``make jax-env``, then
``.venv-jax/bin/python -m pytest tests/test_pipeline_jax.py``), or with
``CPSCHED_JAX_PYTHON`` naming a Python that has jax. The executor runs in a child process
so that XLA's host device count can be set before jax starts.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cpsched.pipeline import baselines
from cpsched.pipeline.problem import PipelineProblem, uniform

REPO = Path(__file__).resolve().parents[1]


def _jax_python() -> str | None:
    env = os.environ.get("CPSCHED_JAX_PYTHON")
    if env:
        return env
    if importlib.util.find_spec("jax") is not None:
        return sys.executable
    return None


PY = _jax_python()
pytestmark = pytest.mark.skipif(
    PY is None, reason="jax is not installed here: run in the jax env (make jax-env) or set "
                       "CPSCHED_JAX_PYTHON")

CHILD = r"""
import json, sys
from cpsched.pipeline.jax_executor import ensure_host_devices
ensure_host_devices(4)
from cpsched.pipeline.jax_executor import check, run_schedule, init_params, reference_grads
from cpsched.pipeline.problem import uniform
from cpsched.pipeline.schedule import Action
req = json.load(sys.stdin)
out = {}
for name, job in req.items():
    pr = uniform(4, job["m"], job["v"], split_backward=job["split"])
    acts = [[Action(k, s, j) for k, s, j in lst] for lst in job["actions"]]
    try:
        out[name] = {"ok": True, **check(pr, acts)}
    except AssertionError as e:
        out[name] = {"ok": False, "error": str(e).splitlines()[0]}
print(json.dumps(out))
"""


def _run_child(jobs: dict) -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO), JAX_PLATFORMS="cpu")
    res = subprocess.run([PY, "-c", CHILD], input=json.dumps(jobs), capture_output=True,
                         text=True, env=env, timeout=600, cwd=str(REPO))
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def _job(pr: PipelineProblem, actions) -> dict:
    return {"m": pr.m, "v": pr.v, "split": pr.split_backward,
            "actions": [[(a.kind, a.stage, a.mb) for a in lst] for lst in actions]}


def test_every_schedule_gives_the_unpipelined_gradients():
    jobs = {}
    for name, v, split in [("gpipe", 1, False), ("1f1b", 1, True), ("zb-h1", 1, True),
                           ("zb-h2", 1, True), ("interleaved", 2, False), ("circular", 2, True)]:
        pr = uniform(4, 8, v, split_backward=split)
        jobs[name] = _job(pr, baselines.build(pr, name).actions)
    pytest.importorskip("ortools", reason="the CP schedule needs ortools")
    from cpsched.pipeline.solve import solve
    pr = PipelineProblem(p=4, m=8, f=(2, 2, 2, 3), b=(4, 4, 4, 6), w=(2, 2, 2, 3), act=(4,),
                         act_w=(1,), comm=1.0, memory_cap="1f1b")
    cp = solve(pr, time_limit=3)
    jobs["cp"] = _job(pr, cp.actions)
    prv = uniform(4, 4, 2, act=1, memory_cap=6)
    jobs["cp-v2"] = _job(prv, solve(prv, time_limit=3).actions)
    res = _run_child(jobs)
    for name in jobs:
        assert res[name]["ok"], (name, res[name])
        assert res[name]["max_abs_dw"] < 1e-5


def test_the_check_fails_when_the_executor_is_fed_a_wrong_table(monkeypatch):
    """Guard against a vacuous comparison: the same run with the received activations
    dropped must disagree with the reference."""
    child = CHILD.replace(
        "from cpsched.pipeline.jax_executor import check,",
        "import cpsched.pipeline.jax_executor as jx\n"
        "_tt = jx.tick_table\n"
        "def _broken(pr, a):\n"
        "    t = _tt(pr, a); t.recv_f[:, :, 0] = 0; return t\n"
        "jx.tick_table = _broken\n"
        "from cpsched.pipeline.jax_executor import check,")
    pr = uniform(4, 4, 1, split_backward=True)
    jobs = {"1f1b": _job(pr, baselines.build(pr, "1f1b").actions)}
    env = dict(os.environ, PYTHONPATH=str(REPO), JAX_PLATFORMS="cpu")
    res = subprocess.run([PY, "-c", child], input=json.dumps(jobs), capture_output=True,
                         text=True, env=env, timeout=600, cwd=str(REPO))
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["1f1b"]["ok"] is False
