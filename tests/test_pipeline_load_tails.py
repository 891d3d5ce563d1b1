"""The load tails of the pipeline bound (``bounds.load_tails``: an action's tail raised by the
work it leaves to another device) against exhaustive search, the CP model's optimum and
every schedule the baselines make.

A tail is a claim about every schedule in microbatch order: the step goes on for at least
``tail[a]`` after ``a`` ends. So the checks replay schedules relabelled to microbatch order
(``fifo_relabel``: never slower) and look at every action of every schedule."""

from __future__ import annotations

import itertools

import pytest
from ortools.sat.python import cp_model
from test_brute_force_pipeline import _sequences

from cpsched.core.errors import InputError, ScheduleError
from cpsched.pipeline.model.bounds import device_bound, heads_and_tails, load_tails
from cpsched.pipeline.model.constraints import add_all
from cpsched.pipeline.model.objectives import minimise_makespan
from cpsched.pipeline.model.problem import make_data
from cpsched.pipeline.solve import critical_path_greedy, solve
from cpsched.pipeline.model.variables import make_vars
from cpsched.pipeline import baselines
from cpsched.pipeline.problem import PipelineProblem
from cpsched.pipeline.schedule import all_actions, fifo_relabel, replay


def unbalanced(p, m, v=1, cap="1f1b", comm=0.0):
    S = p * v
    f, b, w = [2.0 / v] * S, [4.0 / v] * S, [2.0 / v] * S
    f[-1], b[-1], w[-1] = 3.0 / v, 6.0 / v, 3.0 / v
    return PipelineProblem(
        p=p, m=m, v=v, f=f, b=b, w=w, act=(8 // v,), act_w=(4 // v,), memory_cap=cap, comm=comm
    )


def bounds(pr):
    data = make_data(pr)
    head, tail = heads_and_tails(data)
    new = load_tails(data, tail)
    return data, head, tail, new


def check_tails(pr, data, head, tail, actions):
    """Every action of the relabelled schedule starts at or after its head and leaves at least
    its tail; returns the replayed makespan (None when the lists deadlock or break the cap)."""
    try:
        r = replay(pr, fifo_relabel(pr, actions))
    except ScheduleError:
        return None
    sc = data.scale
    for a in data.actions:
        assert r.start[a] >= head[a] / sc - 1e-9, a
        assert r.end[a] + tail[a] / sc <= r.makespan + 1e-9, (a, r.end[a], tail[a] / sc)
    return r.makespan


# found by a random search over tiny instances for ones where the load tails raise the
# bound; small enough to enumerate (8000 combinations of per-device orders each)
RAISED = [
    PipelineProblem(p=3, m=2, f=(3, 3, 1), b=(1, 3, 1), w=(3, 1, 3)),
    PipelineProblem(p=3, m=2, f=(2, 3, 1), b=(3, 2, 1), w=(1, 2, 1)),
]
OTHERS = [
    PipelineProblem(
        p=2, m=2, f=(1, 2), b=(3, 4), w=(2, 2), act=(2,), act_w=(1,), memory_cap="1f1b"
    ),
    PipelineProblem(p=2, m=3, f=(2, 2), b=(2, 1), w=(1, 2), split_backward=False, comm=1.0),
    PipelineProblem(
        p=4,
        m=2,
        f=(3, 1, 2, 2),
        b=(2, 3, 1, 4),
        w=(3, 2, 3, 3),
        comm=1.0,
        split_backward=False,
        memory_cap="1f1b",
    ),
]


@pytest.mark.parametrize("pr", RAISED + OTHERS, ids=lambda pr: f"p{pr.p}m{pr.m}")
def test_load_tails_hold_on_every_schedule_of_tiny_instances(pr):
    data, head, old, new = bounds(pr)
    assert all(new[a] >= old[a] for a in data.actions)
    per_dev = [[a for a in all_actions(pr) if pr.device(a.stage) == d] for d in range(pr.p)]
    best = None
    for combo in itertools.product(*(_sequences(pr, acts) for acts in per_dev)):
        mk = check_tails(pr, data, head, new, [list(s) for s in combo])
        if mk is not None:
            best = mk if best is None else min(best, mk)
    assert best is not None
    assert device_bound(data, head, new) / data.scale <= best + 1e-9
    if pr in RAISED:  # the new tails matter here, and the bound reaches the optimum
        assert device_bound(data, head, new) > device_bound(data, head, old)
        assert device_bound(data, head, new) / data.scale == pytest.approx(best)


# two devices, two chunks each, fused backward: too many orders to enumerate, so the
# reference is the CP model solved to optimality without any lower bound
CHUNKED = [
    PipelineProblem(
        p=2, m=2, v=2, f=(3, 1, 2, 1), b=(3, 2, 3, 2), w=(1, 1, 3, 2), split_backward=False
    ),
    PipelineProblem(
        p=2, m=2, v=2, f=(3, 3, 2, 1), b=(2, 1, 5, 4), w=(2, 2, 1, 1), split_backward=False
    ),
]


@pytest.mark.parametrize("pr", CHUNKED, ids=["a", "b"])
def test_load_bound_never_above_the_model_optimum_with_chunks(pr):
    data, head, old, new = bounds(pr)
    v = make_vars(data, horizon=int(sum(data.busy.values())))
    add_all(v)
    minimise_makespan(v)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_time_in_seconds = 20
    assert solver.Solve(v.model) == cp_model.OPTIMAL
    opt = solver.ObjectiveValue()
    assert device_bound(data, head, old) < device_bound(data, head, new) <= opt
    s = solve(pr, time_limit=10, workers=1)
    assert s.status == "OPTIMAL" and s.makespan * data.scale == pytest.approx(opt)


@pytest.mark.parametrize(
    "pr",
    [
        unbalanced(4, 4, 2),
        unbalanced(4, 8, 2),
        unbalanced(3, 6, 2, cap=None),
        unbalanced(4, 8, 1),
        unbalanced(4, 8, 1, comm=1.0),
        unbalanced(8, 8, 2, cap=None),
    ],
    ids=["4-4-2", "4-8-2", "3-6-2-nocap", "4-8-1", "4-8-1-comm", "8-8-2-nocap"],
)
def test_load_tails_hold_on_baseline_and_greedy_schedules(pr):
    data, head, old, new = bounds(pr)
    schedules = []
    for name in baselines.BASELINES + ("greedy",):
        try:
            schedules.append(baselines.build(pr, name).actions)
        except (InputError, ScheduleError):
            pass
    for rank in (old, new):
        g = critical_path_greedy(pr, data, rank)
        if g is not None:
            schedules.append(g.actions)
    checked = [mk for acts in schedules if (mk := check_tails(pr, data, head, new, acts))]
    assert len(checked) >= 2
    assert device_bound(data, head, new) / data.scale <= min(checked) + 1e-9


def test_load_tails_raise_the_bound_when_m_equals_p_with_chunks():
    """16 devices, 16 microbatches, 2 chunks: the last device's first-chunk backwards feed
    device 0, which still has the backward and weight gradient of every later microbatch of
    its first chunk to run; the fill-and-drain bound misses that, the load tails see it, and
    as a rank they lead the greedy to a schedule within 1 % of the new bound."""
    pr = unbalanced(16, 16, 2)
    data, head, old, new = bounds(pr)
    before, after = device_bound(data, head, old), device_bound(data, head, new)
    assert after > before
    g = critical_path_greedy(pr, data, new)
    assert g is not None
    replay(pr, g.actions)  # within the cap
    assert after / data.scale <= g.makespan <= 1.01 * after / data.scale
