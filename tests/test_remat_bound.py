"""The fixed-order lower bound on added time: never above a plan that exists (brute force,
the CP model, the offload baseline), and not trivially zero."""

import pytest

from cpsched.strategies.remat.method import solve_remat
from cpsched.heuristics.remat import offload_remat
from cpsched.analysis.memory import simulate
from cpsched.remat.bound import added_time_lower_bound
from cpsched.remat.plan import TransferModel, op_durations

from helpers import train_chain
from test_remat_cp import fixed_order_cases


@pytest.mark.parametrize("seed", [0, 2, 3, 4, 6])
def test_bound_never_above_the_brute_force_optimum(seed):
    for g, dur, order, budget, want in fixed_order_cases(seed):
        bound = added_time_lower_bound(g, order, budget, dur)[0]
        if want is None:
            continue
        assert bound <= want + 1e-9


def test_bound_is_positive_where_something_must_be_recomputed():
    g = train_chain(6, 100, 10.0, name="chain")
    order = g.default_order()
    dur = op_durations(g)
    peak = int(simulate(g, order).peak[0])
    assert added_time_lower_bound(g, order, peak, dur)[0] == 0
    bound = added_time_lower_bound(g, order, peak - 100, dur)[0]
    res = solve_remat(g, None, peak - 100, reorder=False, durations=dur, time_limit=10,
                      workers=2)
    assert 0 < bound <= res.added_time[0] + 1e-9


@pytest.mark.parametrize("bandwidth", [0.5, 2.0, 8.0, 1000.0])
def test_eviction_plans_never_beat_the_bound(bandwidth):
    g = train_chain(6, 100, 10.0, fw_dur=lambda i: 50.0, name="chain")
    order = g.default_order()
    dur = op_durations(g)
    peak = int(simulate(g, order).peak[0])
    budget = peak - 200
    tm = TransferModel(bandwidth)
    bound = added_time_lower_bound(g, order, budget, dur, transfer=tm)[0]
    remat_only = added_time_lower_bound(g, order, budget, dur)[0]
    assert bound <= remat_only
    res = solve_remat(g, None, budget, evict=True, transfer=tm, reorder=False, durations=dur,
                      time_limit=10, workers=2)
    assert bound <= res.added_time[0] + 1e-9
    off = offload_remat(g, None, budget, transfer=tm, durations=dur)
    if (off.peak <= budget).all():
        assert bound <= off.added_time[0] + 1e-9
    if bandwidth <= 0.5:
        # a link this slow moves too little before the peak: recomputing is still needed
        assert bound > 0
