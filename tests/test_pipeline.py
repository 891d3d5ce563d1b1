"""Pipeline schedules: closed forms of the published baselines, the replay validator, the
CP-SAT model, the exports and the CLI.

Closed forms (uniform stages, no transfer time, a = activation bytes per microbatch and
stage, fused backward = one action of time B):

- GPipe (Huang et al. 2019) and 1F1B / PipeDream-Flush (Narayanan et al. 2021): makespan
  (m+p-1)(F+B), so the idle share of device time is (p-1)/(m+p-1) and idle over useful time
  is (p-1)/m (Narayanan et al., SC'21, eq. for t_pb/t_id). Peaks: GPipe m*a on every device;
  1F1B min(p-d, m)*a on device d.
- Interleaved 1F1B (Narayanan et al., SC'21 section 2.2.2), v chunks each F/v, B/v:
  idle/useful = (p-1)/(v*m). Peak on device d: min(2(p-d-1)+(v-1)p+1, m*v) chunks (the
  Megatron-LM warm-up count plus the one in flight in the steady phase) when m > p.
- Praxis circular repeat R=v: the loop runs m*v+p-1 iterations of which m*v are useful on
  each device, forward and backward alike: idle share (p-1)/(m*v+p-1); every chunk of every
  microbatch is held at the turn: peak m*v chunk activations.
- ZB-H1 (Qi et al., ICLR 2024, section 3.1): bubble (p-1)(F+B-W) per device, so makespan
  m(F+B+W) + (p-1)(F+B-W); the paper states it for W small enough to fill the gaps (we check
  F=B=W and the B=2F, W=F family). Peak on device d: (p-d)*a + d*a_w <= p*a (1F1B's).
- ZB-H2: only the unavoidable start-up remains: device p-1 cannot start before (p-1)F, so
  makespan >= (p-1)F + m(F+B+W), and ZB-H2 meets it. Peak on device d:
  (2(p-d)-1)*a + (2d+1)*a_w <= 2p*a once m >= 2p.
"""

from __future__ import annotations

import json

import pytest

from cpsched.core.errors import InputError, ScheduleError
from cpsched.pipeline import baselines
from cpsched.pipeline.export import from_torch_csv, to_json, to_torch_csv, to_trace
from cpsched.pipeline.problem import PipelineProblem, cap_1f1b, uniform
from cpsched.pipeline.schedule import (Action, fifo_relabel, lower_bound,
                                       replay)

GRID = [(2, 2), (2, 5), (4, 4), (4, 8), (4, 13), (8, 8), (8, 24)]


def fused(p, m, v=1, f=1.0, b=2.0, act=None):
    return uniform(p, m, v, f=f, b=b, w=0.0, act=act if act is not None else 4,
                   split_backward=False)


@pytest.mark.parametrize("p,m", GRID)
@pytest.mark.parametrize("method", ["gpipe", "1f1b"])
def test_gpipe_1f1b_bubble_and_peak(p, m, method):
    pr = fused(p, m)
    r = baselines.build(pr, method).replay
    assert r.makespan == pytest.approx((m + p - 1) * 3.0)
    assert r.bubble_fraction == pytest.approx((p - 1) / (m + p - 1))
    assert r.bubble_ratio == pytest.approx((p - 1) / m)
    want = [m * 4] * p if method == "gpipe" else [min(p - d, m) * 4 for d in range(p)]
    assert list(r.peak) == want


@pytest.mark.parametrize("p,m,v", [(2, 4, 2), (4, 8, 2), (4, 8, 4), (4, 12, 3), (8, 16, 2),
                                   (4, 4, 2)])
def test_interleaved_bubble_and_peak(p, m, v):
    pr = fused(p, m, v, f=1.0 / v, b=2.0 / v, act=1)
    r = baselines.build(pr, "interleaved").replay
    assert r.bubble_ratio == pytest.approx((p - 1) / (v * m))
    if m > p:
        assert list(r.peak) == [min(2 * (p - d - 1) + (v - 1) * p + 1, m * v) for d in range(p)]
    else:  # Megatron runs every forward first when m == p
        assert list(r.peak) == [m * v] * p


def test_interleaved_needs_m_divisible_by_p():
    with pytest.raises(InputError, match="divisible"):
        baselines.build(fused(4, 6, 2), "interleaved")


@pytest.mark.parametrize("p,m,v", [(2, 4, 1), (4, 4, 2), (4, 8, 2), (4, 9, 3), (8, 8, 4)])
def test_circular_bubble_and_peak(p, m, v):
    pr = fused(p, m, v, f=1.0 / v, b=2.0 / v, act=1)
    r = baselines.build(pr, "circular").replay
    assert r.bubble_fraction == pytest.approx((p - 1) / (m * v + p - 1))
    assert list(r.peak) == [m * v] * p


@pytest.mark.parametrize("costs", [(1, 1, 1), (1, 2, 1), (2, 2, 1), (2, 3, 1), (2, 4, 2)])
@pytest.mark.parametrize("p,m", [(2, 5), (4, 8), (4, 16), (8, 16)])
def test_zb_h1_bubble_and_memory(costs, p, m):
    F, B, W = costs
    pr = uniform(p, m, f=F, b=B, w=W, act=4, act_w=1)
    r = baselines.build(pr, "zb-h1").replay
    assert r.makespan == pytest.approx(m * (F + B + W) + (p - 1) * (F + B - W))
    assert list(r.peak) == [(p - d) * 4 + d * 1 for d in range(p)]
    assert max(r.peak) <= cap_1f1b(pr)


@pytest.mark.parametrize("costs", [(1, 1, 1), (1, 2, 1), (2, 2, 1), (1, 2, 2), (1, 1, 2),
                                   (3, 4, 2)])
@pytest.mark.parametrize("p,m", [(2, 5), (4, 8), (4, 16), (8, 16)])
def test_zb_h2_meets_the_start_up_bound(costs, p, m):
    F, B, W = costs
    pr = uniform(p, m, f=F, b=B, w=W, act=4, act_w=1)
    r = baselines.build(pr, "zb-h2").replay
    assert r.makespan == pytest.approx((p - 1) * F + m * (F + B + W))
    assert r.makespan == pytest.approx(lower_bound(pr))
    assert max(r.peak) <= 2 * cap_1f1b(pr)
    if m >= 2 * p:
        assert list(r.peak) == [(2 * (p - d) - 1) * 4 + (2 * d + 1) for d in range(p)]


def test_zero_bubble_beats_1f1b_by_the_papers_margin():
    # F=B=W: 1F1B (W right after B) idles (p-1)(F+B+W); ZB-H1 (p-1)(F+B-W) = one third
    p, m = 4, 12
    pr = uniform(p, m, f=1, b=1, w=1, split_backward=False)
    one = baselines.build(pr, "1f1b").replay
    h1 = baselines.build(uniform(p, m, f=1, b=1, w=1), "zb-h1").replay
    assert one.idle == pytest.approx(3 * h1.idle)


def test_non_zb_baselines_run_w_right_after_b():
    pr = uniform(4, 8, f=1, b=1, w=1)
    for name in ("gpipe", "1f1b"):
        for lst in baselines.build(pr, name).actions:
            for i, a in enumerate(lst):
                if a.kind == "W":
                    assert lst[i - 1] == Action("B", a.stage, a.mb)


# -- replay / validator -----------------------------------------------------------------

def test_replay_rejects_missing_duplicate_misplaced_and_deadlock():
    pr = uniform(2, 2, f=1, b=1, w=1)
    good = baselines.build(pr, "1f1b").actions
    replay(pr, good)
    bad = [list(x) for x in good]
    bad[0].pop()
    with pytest.raises(ScheduleError, match="missing"):
        replay(pr, bad)
    bad = [list(x) for x in good]
    bad[0].append(bad[0][0])
    with pytest.raises(ScheduleError, match="twice"):
        replay(pr, bad)
    bad = [list(x) for x in good]
    bad[0][0], bad[1][0] = bad[1][0], bad[0][0]
    with pytest.raises(ScheduleError, match="belongs to device"):
        replay(pr, bad)
    # device 0 wants B of microbatch 0 before F of microbatch 0 ran: never ready
    bad = [list(x) for x in good]
    b0 = bad[0].index(Action("B", 0, 0))
    bad[0].insert(0, bad[0].pop(b0))
    with pytest.raises(ScheduleError, match="deadlock"):
        replay(pr, bad)


def test_replay_checks_cap_and_claimed_times():
    pr = uniform(2, 4, f=1, b=1, w=1, act=2, memory_cap=4)
    gp = baselines.build(pr, "gpipe")
    assert not gp.replay.memory_ok
    with pytest.raises(ScheduleError, match="over the cap"):
        gp.validate(check_memory=True)
    ok = baselines.build(pr, "1f1b")
    claimed = dict(ok.replay.start)
    replay(pr, ok.actions, claimed)
    a = ok.actions[1][0]
    claimed[a] -= 0.5   # before its input arrives
    with pytest.raises(ScheduleError, match="before its input"):
        replay(pr, ok.actions, claimed)


def test_transfer_time_overlapped_and_blocking():
    base = dict(p=2, m=1, f=(1,), b=(1,), w=(0,), split_backward=False)
    r0 = replay(PipelineProblem(**base), baselines.one_f_one_b(PipelineProblem(**base)))
    r1 = replay(PipelineProblem(**base, comm=0.5),
                baselines.one_f_one_b(PipelineProblem(**base, comm=0.5)))
    r2 = replay(PipelineProblem(**base, comm=0.5, comm_overlap=False),
                baselines.one_f_one_b(PipelineProblem(**base)))
    assert r0.makespan == 4 and r1.makespan == 5 and r2.makespan == 5
    # blocking sends are device time: more work, not only delay
    assert sum(r2.work) == sum(r0.work) + 1.0 and sum(r1.work) == sum(r0.work)


def test_fifo_relabel_never_slower():
    pr = uniform(4, 8, 2, f=1, b=2, w=0, act=1, split_backward=False)
    circ = baselines.build(pr, "circular")
    rel = replay(pr, fifo_relabel(pr, circ.actions))
    assert rel.makespan <= circ.replay.makespan + 1e-9
    assert rel.peak == circ.replay.peak


def test_symbolic_activation_sizes_per_scenario():
    pr = PipelineProblem(p=2, m=4, act=("b*1024",), act_w=("b*256",), memory_cap=4096)
    assert pr.dims == ("b",)
    with pytest.raises(ScheduleError):
        replay(pr, baselines.one_f_one_b(pr))
    small, big = pr.at({"b": 1}), pr.at({"b": 4})
    assert small.act == (1024, 1024) and big.act_w == (1024, 1024)
    assert baselines.build(small, "1f1b").replay.memory_ok
    assert not baselines.build(big, "1f1b").replay.memory_ok


def test_bad_problem_inputs():
    with pytest.raises(InputError):
        PipelineProblem(p=0, m=1)
    with pytest.raises(InputError, match="3 values"):
        PipelineProblem(p=2, m=2, f=(1, 2, 3))
    with pytest.raises(InputError):
        PipelineProblem(p=2, m=2, memory_cap="lots")
    with pytest.raises(InputError, match="below one microbatch"):
        PipelineProblem(p=2, m=2, v=2, act=(3,), memory_cap=5).check_memory_feasible()


# -- CP-SAT ------------------------------------------------------------------------------

def unbalanced(p, m, cap="1f1b", comm=0.0, v=1):
    S = p * v
    f, b, w = [2 / v] * S, [4 / v] * S, [2 / v] * S     # B ~ 2F, W ~ F
    f[-1], b[-1], w[-1] = 3 / v, 6 / v, 3 / v           # heavier last stage (the LM head)
    return PipelineProblem(p=p, m=m, v=v, f=f, b=b, w=w, act=(4,), act_w=(1,), comm=comm,
                           memory_cap=cap)


def test_cp_matches_zb_h1_under_1f1b_cap_and_proves_it():
    from cpsched.pipeline.solve import solve
    pr = uniform(4, 8, f=1, b=1, w=1, act=4, act_w=1, memory_cap="1f1b")
    s = solve(pr, time_limit=5)
    h1 = baselines.build(pr, "zb-h1").replay
    assert s.replay.makespan <= h1.makespan + 1e-9
    assert s.status == "OPTIMAL" and s.bound == pytest.approx(s.replay.makespan)
    assert all(pk <= c for pk, c in zip(s.replay.peak, s.replay.caps))


def test_cp_beats_every_baseline_on_unbalanced_costs():
    from cpsched.pipeline.solve import solve
    pr = unbalanced(4, 8, comm=1.0)
    s = solve(pr, time_limit=5)
    fits = [baselines.build(pr, n).replay for n in baselines.BASELINES
            if baselines.applicable(pr, n) is None]
    fits = [r for r in fits if r.memory_ok]
    assert fits
    assert s.replay.makespan < min(r.makespan for r in fits)
    assert s.bound <= s.replay.makespan + 1e-9
    assert s.bound >= lower_bound(pr) - 1e-9
    # the replay re-derives the solver's schedule from the action lists alone
    again = replay(pr, s.actions)
    assert again.makespan == pytest.approx(s.replay.makespan)


def test_cp_bound_is_a_real_bound_on_a_tiny_case():
    """p=2, m=2: every interleaving of each device's actions is enumerated (those that keep
    each microbatch's F, B, W in order: the others cannot run); the best one is the CP
    optimum."""
    from helpers import pipeline_device_orders

    from cpsched.pipeline.solve import solve
    pr = PipelineProblem(p=2, m=2, f=(1, 2), b=(2, 3), w=(1, 1), act=(2,), act_w=(1,),
                         memory_cap=4)
    best = None
    perms = pipeline_device_orders(pr)
    assert len(perms[0]) == len(perms[1]) == 20
    for o0 in perms[0]:
        for o1 in perms[1]:
            try:
                r = replay(pr, [list(o0), list(o1)])
            except ScheduleError:
                continue
            best = r.makespan if best is None else min(best, r.makespan)
    s = solve(pr, time_limit=5)
    assert s.status == "OPTIMAL"
    assert s.replay.makespan == pytest.approx(best)


def test_cp_interleaved_fused_no_cap_reaches_bound():
    from cpsched.pipeline.solve import solve
    pr = fused(2, 4, 2, f=0.5, b=1.0, act=1)
    s = solve(pr, time_limit=5)
    assert s.replay.makespan <= baselines.build(pr, "interleaved").replay.makespan + 1e-9
    assert s.status == "OPTIMAL"


# -- exports -----------------------------------------------------------------------------

def test_torch_csv_round_trip_and_action_names():
    pr = uniform(4, 8, f=1, b=1, w=1)
    s = baselines.build(pr, "zb-h1")
    text = to_torch_csv(s)
    rows = text.strip().split("\n")
    assert len(rows) == 4
    assert rows[0].split(",")[0] == "0F0"
    assert "0I0" in rows[0].split(",") and "0W0" in rows[0].split(",")
    assert from_torch_csv(text) == s.actions
    fz = baselines.build(fused(2, 2), "1f1b")
    assert "1B0" in to_torch_csv(fz).split("\n")[1].split(",")


def test_trace_has_every_action_once_at_replayed_times():
    pr = uniform(2, 3, f=1, b=1, w=1, comm=0.5, act=2)
    s = baselines.build(pr, "1f1b")
    tr = to_trace(s)
    xs = [e for e in tr["traceEvents"] if e["ph"] == "X" and e["cat"] in "FBW"]
    assert len(xs) == 2 * 3 * 3
    for e in xs:
        a = Action(e["args"]["kind"], e["args"]["stage"], e["args"]["microbatch"])
        assert e["ts"] == pytest.approx(s.replay.start[a])
    sends = [e for e in tr["traceEvents"] if e.get("cat") == "transfer"]
    assert len(sends) == 2 * 3      # one F send and one B send per microbatch
    json.dumps(tr)
    assert to_json(s)["torch_actions"][0][0] == "0F0"


# -- CLI ---------------------------------------------------------------------------------

def cli(*args):
    from cpsched.cli import main
    return main(list(args))


def test_cli_all_json(capsys):
    rc = cli("pipeline", "--stages", "4", "--microbatches", "8", "--costs", "2,4,2",
             "--act", "4", "--act-w", "1", "--memory-cap", "1f1b", "--time-limit", "3", "--json")
    assert rc == 0
    rows = json.loads(capsys.readouterr().out)
    by = {r["method"]: r for r in rows}
    assert set(by) == {"gpipe", "1f1b", "interleaved", "circular", "zb-h1", "zb-h2", "cp"}
    for k in ("method", "status", "makespan", "bubble_fraction", "peak_activation", "bound"):
        assert k in by["cp"]
    assert by["cp"]["makespan"] <= by["zb-h1"]["makespan"]
    assert by["gpipe"]["status"] == "OVER_CAP"


def test_cli_writes_csv_and_trace(tmp_path, capsys):
    c, t = tmp_path / "s.csv", tmp_path / "t.json"
    rc = cli("pipeline", "-p", "2", "-m", "4", "--method", "1f1b", "--csv", str(c),
             "--trace", str(t))
    assert rc == 0
    assert c.read_text().startswith("0F0,")
    assert json.loads(t.read_text())["traceEvents"]
    assert "1f1b" in capsys.readouterr().out


@pytest.mark.parametrize("args,msg", [
    (("--costs", "a,b"), "--costs"),
    (("--memory-cap", "lots"), "--memory-cap"),
    (("--method", "interleaved", "--virtual", "2", "-m", "6"), "divisible"),
    (("--act", "b*4"), "--dim"),
])
def test_cli_errors_one_line_exit_2(args, msg, capsys):
    base = ["pipeline", "-p", "4", "-m", "8"]
    if "-m" in args:
        base = ["pipeline", "-p", "4"]
    rc = cli(*base, *args)
    err = capsys.readouterr().err
    assert rc == 2
    assert msg in err and err.count("\n") == 1


def test_cli_costs_file_error_has_position(tmp_path, capsys):
    f = tmp_path / "c.json"
    f.write_text('{"f": [1, 2],\n "b": [2, 2] "w": 1}')
    rc = cli("pipeline", "-p", "2", "-m", "2", "--costs-file", str(f))
    err = capsys.readouterr().err
    assert rc == 2 and f"{f}:2:" in err


def test_cli_costs_file_per_stage(tmp_path, capsys):
    f = tmp_path / "c.json"
    f.write_text(json.dumps({"f": [2, 2, 2, 3], "b": [4, 4, 4, 6], "w": [2, 2, 2, 3],
                             "act": [4], "act_w": [1], "memory_cap": "1f1b"}))
    rc = cli("pipeline", "-p", "4", "-m", "8", "--costs-file", str(f), "--method", "zb-h1",
             "--json")
    assert rc == 0
    assert json.loads(capsys.readouterr().out)["makespan"] == 104


@pytest.mark.parametrize("p,m,v,cap", [(2, 8, 4, "1f1b"), (4, 8, 2, "1f1b"), (4, 8, 4, None),
                                       (4, 4, 2, 9), (3, 7, 3, 13)])
def test_greedy_fits_the_cap_and_never_deadlocks(p, m, v, cap):
    pr = unbalanced(p, m, v=v, cap=cap)
    s = baselines.build(pr, "greedy", check_memory=True)
    assert s.replay.memory_ok
    assert s.replay.makespan >= lower_bound(pr) - 1e-9


def test_cp_with_chunks_under_the_1f1b_cap_is_hinted_by_greedy():
    from cpsched.pipeline.solve import solve
    pr = unbalanced(2, 4, v=2)
    assert all(not baselines.build(pr, n).replay.memory_ok for n in ("interleaved", "circular"))
    s = solve(pr, time_limit=3)
    assert s.info["hint"] == "greedy"
    assert s.replay.makespan <= baselines.build(pr, "greedy").replay.makespan + 1e-9


def test_greedy_refuses_a_cap_below_one_microbatch():
    with pytest.raises(InputError, match="below one microbatch"):
        baselines.build(unbalanced(4, 4, v=2, cap=5), "greedy")


def _simulate_comms(rows, stage_rank):
    """A run of the compute_comms lists with PyTorch's readiness rules: a receive needs the
    peer's send posted, a forward (input gradient) needs its receive or the producer on the
    same rank; sends are asynchronous. Returns True when every rank finishes."""
    import re
    rx = re.compile(r"^(\d+)(F|I|B|W|SEND_F|RECV_F|SEND_B|RECV_B)(\d+)$")
    lists = [[rx.match(c).groups() for c in row] for row in rows]
    done = [set() for _ in rows]
    ptr = [0] * len(rows)
    last = max(int(s) for row in lists for s, _, _ in row)
    while any(ptr[r] < len(lists[r]) for r in range(len(rows))):
        moved = False
        for r, lst in enumerate(lists):
            while ptr[r] < len(lst):
                s, k, j = lst[ptr[r]]
                s = int(s)
                ok = True
                if k == "RECV_F":
                    ok = (str(s - 1), "SEND_F", j) in done[stage_rank(s - 1)]
                elif k == "RECV_B":
                    ok = (str(s + 1), "SEND_B", j) in done[stage_rank(s + 1)]
                elif k == "F" and s > 0:
                    ok = (str(s), "RECV_F", j) in done[r] or (str(s - 1), "F", j) in done[r]
                elif k in ("I", "B") and s < last:
                    ok = (str(s), "RECV_B", j) in done[r]
                if not ok:
                    break
                done[r].add((str(s), k, j))
                ptr[r] += 1
                moved = True
        if not moved:
            return False
    return True


@pytest.mark.parametrize("method,v", [("1f1b", 1), ("zb-h1", 1), ("interleaved", 2), ("circular", 2)])
def test_torch_compute_comms_rows_pair_up_and_run(method, v):
    from cpsched.pipeline.export import torch_rows
    pr = uniform(4, 8, v)
    s = baselines.build(pr, method)
    rows = torch_rows(s, "compute_comms")
    flat = [c for row in rows for c in row]
    sends = [c for c in flat if "SEND" in c]
    recvs = [c for c in flat if "RECV" in c]
    assert len(sends) == len(recvs) == 2 * pr.m * (pr.n_stages - 1)
    assert _simulate_comms(rows, pr.device)
    # compute cells unchanged and in the same order
    assert [[c for c in row if "SEND" not in c and "RECV" not in c] for row in rows] == \
        [r.split(",") for r in to_torch_csv(s).strip().split("\n")]


def test_compute_comms_simulation_catches_a_late_receive():
    from cpsched.pipeline.export import torch_rows
    pr = uniform(2, 2)
    rows = torch_rows(baselines.build(pr, "1f1b"), "compute_comms")
    i = rows[1].index("1RECV_F0")
    rows[1][i], rows[1][i + 1] = rows[1][i + 1], rows[1][i]   # forward before its receive
    assert not _simulate_comms(rows, pr.device)
