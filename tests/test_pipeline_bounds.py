"""The pipeline model's per-device bound (Jackson's preemptive one-machine bound over heads
and tails), the critical-path greedy, and the solver's use of both; checked against brute
force on instances small enough to enumerate."""

from __future__ import annotations

import itertools
import random

import pytest
from helpers import pipeline_device_orders

from cpsched.core.errors import ScheduleError
from cpsched.pipeline.model.bounds import device_bound, heads_and_tails, jackson_preemptive
from cpsched.pipeline.model.problem import make_data
from cpsched.pipeline.solve import critical_path_greedy, solve
from cpsched.pipeline import baselines
from cpsched.pipeline.problem import PipelineProblem
from cpsched.pipeline.schedule import Action, lower_bound, replay


def unbalanced(p, m, v=1, cap="1f1b"):
    S = p * v
    f, b, w = [2.0 / v] * S, [4.0 / v] * S, [2.0 / v] * S
    f[-1], b[-1], w[-1] = 3.0 / v, 6.0 / v, 3.0 / v
    return PipelineProblem(
        p=p, m=m, v=v, f=f, b=b, w=w, act=(8 // v,), act_w=(4 // v,), memory_cap=cap
    )


def one_machine_optimum(jobs):
    """Non-preemptive optimum of max(end + tail) over every order (jobs: head, time, tail)."""
    best = None
    for perm in itertools.permutations(jobs):
        t = worst = 0
        for h, d, q in perm:
            t = max(t, h) + d
            worst = max(worst, t + q)
        best = worst if best is None else min(best, worst)
    return best


@pytest.mark.parametrize("seed", range(40))
def test_jackson_bound_never_above_the_one_machine_optimum(seed):
    rng = random.Random(seed)
    jobs = [
        (rng.randint(0, 8), rng.randint(1, 5), rng.randint(0, 8)) for _ in range(rng.randint(1, 6))
    ]
    jb = jackson_preemptive(jobs)
    assert jb <= one_machine_optimum(jobs)
    # never below the trivial bounds either
    assert jb >= max(h + d + q for h, d, q in jobs)
    assert jb >= min(h for h, _, _ in jobs) + sum(d for _, d, _ in jobs)


@pytest.mark.parametrize("seed", range(10))
def test_jackson_bound_is_exact_when_every_job_is_released_at_once(seed):
    # with equal heads the longest-tail-first rule is optimal without preemption
    rng = random.Random(100 + seed)
    jobs = [(3, rng.randint(1, 5), rng.randint(0, 9)) for _ in range(rng.randint(1, 6))]
    assert jackson_preemptive(jobs) == one_machine_optimum(jobs)


def test_heads_follow_inputs_microbatch_order_and_in_flight_limits():
    pr = unbalanced(4, 8)
    data = make_data(pr)
    head, tail = heads_and_tails(data)
    for a in data.actions:
        for q in data.deps[a]:
            assert head[a] >= head[q] + data.busy[q] + data.delay[q]
            assert tail[q] >= data.delay[q] + data.busy[a] + tail[a]
        if a.mb > 0:
            prev = Action(a.kind, a.stage, a.mb - 1)
            assert head[a] >= head[prev] + data.busy[prev]
    # device 0 under the 1F1B cap holds p microbatches: F of mb 4 waits for B of mb 0
    assert head[Action("F", 0, 4)] >= head[Action("B", 0, 0)] + data.busy[Action("B", 0, 0)]


def _brute_force_optimum(pr):
    best = None
    for orders in itertools.product(*pipeline_device_orders(pr)):
        try:
            r = replay(pr, [list(o) for o in orders])
        except ScheduleError:
            continue
        best = r.makespan if best is None else min(best, r.makespan)
    return best


@pytest.mark.parametrize(
    "pr",
    [
        PipelineProblem(p=2, m=2, f=(1, 2), b=(2, 3), w=(1, 1), act=(2,), act_w=(1,), memory_cap=4),
        PipelineProblem(p=2, m=2, f=(2, 1), b=(3, 1), w=(1, 2), act=(2,), act_w=(1,), memory_cap=3),
        PipelineProblem(p=2, m=2, f=(1, 1), b=(1, 3), w=(2, 1), comm=1.0),
    ],
    ids=["cap4", "cap3", "comm"],
)
def test_device_bound_never_above_the_brute_force_optimum(pr):
    data = make_data(pr)
    best = _brute_force_optimum(pr)
    assert device_bound(data) / data.scale <= best + 1e-9
    s = solve(pr, time_limit=5)
    assert s.bound <= best + 1e-9 <= s.replay.makespan + 1e-9


@pytest.mark.parametrize("p,m,v", [(2, 4, 2), (4, 8, 1), (4, 8, 2), (4, 8, 4), (3, 7, 3)])
def test_device_bound_at_least_the_simple_bound(p, m, v):
    pr = unbalanced(p, m, v)
    data = make_data(pr)
    assert device_bound(data) / data.scale >= lower_bound(pr) - 1e-9


@pytest.mark.parametrize(
    "p,m,v,cap",
    [
        (2, 8, 4, "1f1b"),
        (4, 8, 2, "1f1b"),
        (4, 8, 4, "1f1b"),
        (4, 8, 4, None),
        (4, 4, 2, 9),
        (3, 7, 3, 13),
    ],
)
def test_critical_path_greedy_fits_the_cap(p, m, v, cap):
    pr = unbalanced(p, m, v, cap)
    data = make_data(pr)
    _head, tail = heads_and_tails(data)
    s = critical_path_greedy(pr, data, tail)
    assert s is not None
    r = replay(pr, s.actions)  # memory checked: raises over the cap
    assert r.makespan >= lower_bound(pr) - 1e-9


def test_critical_path_greedy_hints_chunked_pipelines_under_the_1f1b_cap():
    """The plain greedy runs B first and W only when idle; ranked by tail it keeps the
    heavy last device fed. Under the 1F1B cap with 4 chunks it is the better hint, and the
    solver's result is never slower than either."""
    pr = unbalanced(4, 8, 4)
    data = make_data(pr)
    plain = baselines.build(pr, "greedy").replay.makespan
    ranked = critical_path_greedy(pr, data, heads_and_tails(data)[1])
    assert ranked is not None and ranked.makespan < plain
    s = solve(pr, time_limit=5)
    assert s.replay.makespan <= ranked.makespan + 1e-9
    assert "greedy-critical-path" in s.info["baselines"]


def test_restarts_never_worse_and_repeat_with_the_same_seed():
    pr = unbalanced(4, 8, 2)
    data = make_data(pr)
    tail = heads_and_tails(data)[1]
    plain = critical_path_greedy(pr, data, tail)  # no deadline: the two unperturbed runs
    far = 1e18  # the run count, not the clock, ends the restarts
    a = critical_path_greedy(pr, data, tail, deadline=far, seed=3)
    b = critical_path_greedy(pr, data, tail, deadline=far, seed=3)
    assert plain is not None and a is not None and b is not None
    assert a.makespan <= plain.makespan
    assert a.actions == b.actions
    replay(pr, a.actions)  # within the cap
