"""``--deterministic`` means the same output whatever the machine's load.

A loaded machine is simulated by a wall clock that runs fast: every ``time.perf_counter()``
call moves it on by a second more than really passed. A pipeline whose phases end on the
wall clock then cuts them short, and its output changes; a deterministic one counts its
phases on budgets and CP-SAT's deterministic time, and gives the same output as on an idle
clock.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cpsched import api

MODELS = Path(__file__).resolve().parents[1] / "models"


def _run(path: Path, method: str, loaded_clock=None):
    g = api.read(path)
    if loaded_clock is not None:
        loaded_clock()
    s = api.schedule(g, method, time_limit=2, deterministic=True, workers=1, seed=0)
    return list(s.order), s.status, s.info.get("candidates")


@pytest.mark.parametrize("name", ["graphs/random_layered_n50_s0.json", "hlo/demo.hlo"])
def test_cp_overlap_gives_the_same_order_on_a_loaded_machine(name, loaded_clock):
    # its repair and hoisting phases ended on the wall clock, and its memory candidate
    # ('cp') ran in wall-clock mode: both gave other orders under load
    idle = _run(MODELS / name, "cp-overlap")
    assert _run(MODELS / name, "cp-overlap", loaded_clock) == idle


def test_cp_min_peak_gives_the_same_order_on_a_loaded_machine(loaded_clock):
    idle = _run(MODELS / "graphs/random_layered_n50_s0.json", "cp")
    assert _run(MODELS / "graphs/random_layered_n50_s0.json", "cp", loaded_clock) == idle


def test_the_module_driver_splits_its_time_the_same_way_on_a_loaded_machine(loaded_clock):
    # each computation's share of the time followed the wall time the ones before it took
    # (the entry's cp phases showed other deadlines under load)
    path = next(iter(sorted((MODELS / "hlo" / "corpus").glob("while_cg*.hlo*"))))

    def run(load: bool):
        g = api.read(path)
        if load:
            loaded_clock()
        r = api.schedule(g, "cp", time_limit=2, deterministic=True, workers=1, seed=0)
        phases = [
            {k: v for k, v in p.items() if not k.endswith("seconds")}
            for p in r.info.get("phases", [])
        ]
        return list(r.order), dict(r.orders or {}), phases

    idle = run(False)
    assert run(True) == idle
