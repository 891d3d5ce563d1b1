"""``xla-default`` is XLA's current ``DefaultMemoryScheduler::Run``: list, DFS and
post-order each order the whole module, and the least module peak is kept once (ties: list,
then DFS, then post-order), not the best of the three per computation.

Checked against XLA's own dumps of the corpus programs. XLA:CPU does not run that scheduler:
its memory-optimized dump (``.memopt``) is ``DFSMemoryScheduler``'s module schedule and its
default dump is ``BFScheduler``'s (the concurrency-optimized one, kept when affordable). So
``xla-bfs`` must give the default dump's sequences (24 of the 28 programs; the other four
have loop bodies whose instruction list the text does not give), and wherever ``xla-dfs``
gives the memory-optimized dump's sequences (10 of 28), ``xla-default`` (which may pick DFS)
is at most that dump's module peak, and equal to it when it picks DFS."""

from __future__ import annotations

from pathlib import Path

import pytest

from cpsched import api
from cpsched.strategies.module import schedule_module
from cpsched.heuristics.xla_memory import xla_default
from cpsched.readers.hlo.convert import computation_orders, read_hlo_module

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "models" / "hlo" / "corpus"
PROGRAMS = sorted(p for p in CORPUS.glob("*.hlo.gz") if ".memopt." not in p.name)
# the scan-over-layers step of the issue: the per-computation mix gave 2,216,048 B, below
# every one of XLA's three module schedules
FSDP = CORPUS / "fsdp_scan.hlo.gz"


def _orders(r: api.Result) -> dict[str, list[str]]:
    return {k: list(v) for k, v in r.orders.items()}


@pytest.mark.parametrize("src", PROGRAMS, ids=[p.name.split(".")[0] for p in PROGRAMS])
def test_xla_default_is_one_module_choice_checked_against_xlas_dumps(src):
    g = api.read(str(src))
    r = api.schedule(g, "xla-default")
    choice = r.info["choice"]
    peaks = choice["module_peak_bytes"]
    names = ["xla-list", "xla-dfs", "xla-postorder"]
    assert list(peaks) == names
    first_least = next(n for n in names if peaks[n] == min(peaks.values()))
    assert choice["selected"] == first_least and r.peak["static"] == peaks[first_least]
    # one algorithm's orders for every computation, as that algorithm gives them alone
    alone = {n: api.schedule(g, n) for n in names}
    assert _orders(r) == _orders(alone[first_least])
    assert {n: x.peak["static"] for n, x in alone.items()} == peaks
    # XLA's memory-optimized dump is its DFS schedule: where ours gives the same sequences,
    # the module choice is at most that dump's peak (and equal to it when it takes DFS)
    memopt_path = src.with_name(src.name.replace(".hlo.gz", ".memopt.hlo.gz"))
    memopt = computation_orders(read_hlo_module(str(memopt_path)))
    if _orders(alone["xla-dfs"]) == memopt:
        xla_dfs_peak = api.simulate(str(memopt_path)).peak["static"]
        assert peaks["xla-dfs"] == xla_dfs_peak
        assert r.peak["static"] <= xla_dfs_peak
        if choice["selected"] == "xla-dfs":
            assert r.peak["static"] == xla_dfs_peak


# Loop bodies where the text does not give XLA's instruction list: their compact
# get-tuple-elements (``param#k``, jax 0.12) are placed by the reader, and BFS's FIFO order
# follows the instruction list
COMPACT_GTE_BODIES = {"fsdp_scan", "nested_scan", "scan_remat_names", "scan_remat_offload"}


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(
            p,
            marks=pytest.mark.xfail(
                p.name.split(".")[0] in COMPACT_GTE_BODIES,
                reason="compact get-tuple-elements: XLA's instruction list is not in the text",
                strict=True,
            ),
        )
        for p in PROGRAMS
    ],
    ids=[p.name.split(".")[0] for p in PROGRAMS],
)
def test_xla_bfs_gives_xlas_default_dump(src):
    """XLA:CPU's default dump is its BFScheduler's schedule (the concurrency-optimized
    one, kept when affordable and always with collectives): xla-bfs gives its sequences."""
    g = api.read(str(src))
    assert _orders(api.schedule(g, "xla-bfs")) == computation_orders(read_hlo_module(str(src)))


def test_xla_default_is_never_below_all_three_module_schedules():
    """The per-computation best of the three (what xla-default used to be) goes below
    every schedule XLA's scheduler can return on this scan-over-layers step."""
    g = api.read(str(FSDP))
    sc = api.scenarios_for(g)
    r = api.schedule(g, "xla-default")
    peaks = {n: api.schedule(g, n).peak["static"] for n in ("xla-list", "xla-dfs", "xla-postorder")}
    assert r.peak["static"] == min(peaks.values())
    mix = schedule_module(
        api.hlo_module_of(g), lambda gr, s, _: xla_default(gr, s), scenarios=sc, never_worse=False
    )
    assert int(mix.peak[0]) < min(peaks.values())


def test_on_one_graph_the_choice_is_the_same():
    path = REPO / "models" / "graphs" / "random_layered_n50_s0.json"
    g = api.read(str(path))
    r = api.schedule(g, "xla-default")
    peaks = [api.schedule(g, n).peak["static"] for n in ("xla-list", "xla-dfs", "xla-postorder")]
    assert r.peak["static"] == min(peaks)
