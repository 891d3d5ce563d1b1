"""Pipeline schedules as per-device action lists, and the independent replay that checks them.

A schedule is, per device, the ordered list of its actions ``Action(kind, stage, mb)`` with
``kind`` in F (forward), B (input gradient, or the whole backward when fused) and W (weight
gradient). ``replay`` is the validator every schedule passes before it is returned or
written: it needs nothing but the problem and the lists (times claimed by a solver are
checked, never trusted) and

- checks that every (kind, stage, microbatch) appears exactly once, on the stage's device;
- runs an event simulation: each action starts as soon as its device is free and its inputs
  have arrived (F after the previous stage's F, B after the next stage's B or, on the last
  stage, after its own F, W after its B; plus the transfer time across devices), so no two
  actions of a device overlap; a list that can never run (a cycle through the devices) is a
  deadlock and is rejected;
- accounts activation memory per device in list order (F takes ``act`` at its start, B
  frees ``act - act_w`` and W ``act_w`` at their ends) and checks it against the caps;
- when the solver's start times are given, checks them too (no overlap, dependencies with
  transfer times) and that the replay is not later than they claim.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from cpsched.core.errors import ScheduleError
from cpsched.pipeline.problem import PipelineProblem

EPS = 1e-6


class Action(NamedTuple):
    """One F, B or W of one stage and microbatch; a named tuple (ordered, hashed and
    compared as ``(kind, stage, mb)``) because the schedulers hash millions of them."""

    kind: str
    stage: int
    mb: int

    def __str__(self) -> str:
        return f"{self.stage}{self.kind}{self.mb}"


@dataclass
class Replay:
    start: dict
    end: dict
    makespan: float
    work: tuple  # busy time per device
    peak: tuple  # activation peak per device (bytes)
    memory_ok: bool
    caps: tuple | None

    @property
    def idle(self) -> float:
        return len(self.work) * self.makespan - sum(self.work)

    @property
    def bubble_fraction(self) -> float:
        """Idle share of all device time: ``1 - sum(work) / (p * makespan)``; the GPipe / 1F1B
        figure (p-1)/(m+p-1) with uniform costs."""
        total = len(self.work) * self.makespan
        return self.idle / total if total > 0 else 0.0

    @property
    def bubble_ratio(self) -> float:
        """Idle time over useful time, Narayanan et al.'s ``t_pb / t_id``: (p-1)/m for 1F1B,
        (p-1)/(v*m) for interleaved 1F1B, with uniform costs."""
        w = sum(self.work)
        return self.idle / w if w > 0 else 0.0


def deps(problem: PipelineProblem, a: Action) -> list[Action]:
    """The actions whose results ``a`` consumes."""
    last = problem.n_stages - 1
    if a.kind == "F":
        return [Action("F", a.stage - 1, a.mb)] if a.stage > 0 else []
    if a.kind == "B":
        if a.stage == last:
            return [Action("F", a.stage, a.mb)]
        return [Action("B", a.stage + 1, a.mb), Action("F", a.stage, a.mb)]
    return [Action("B", a.stage, a.mb)]


def all_actions(problem: PipelineProblem) -> list[Action]:
    return [
        Action(k, s, j)
        for s in range(problem.n_stages)
        for j in range(problem.m)
        for k in problem.kinds
    ]


def check_complete(problem: PipelineProblem, actions: Sequence[Sequence[Action]]) -> None:
    if len(actions) != problem.p:
        raise ScheduleError(f"{len(actions)} action lists for {problem.p} devices")
    seen: dict[Action, int] = {}
    for d, lst in enumerate(actions):
        for a in lst:
            if (
                a.kind not in problem.kinds
                or not (0 <= a.stage < problem.n_stages)
                or not (0 <= a.mb < problem.m)
            ):
                raise ScheduleError(f"device {d}: action {a} is not part of this problem")
            if problem.device(a.stage) != d:
                raise ScheduleError(
                    f"device {d}: action {a} belongs to device {problem.device(a.stage)}"
                )
            if a in seen:
                raise ScheduleError(f"action {a} appears twice")
            seen[a] = d
    missing = [a for a in all_actions(problem) if a not in seen]
    if missing:
        raise ScheduleError(f"{len(missing)} actions missing, e.g. {missing[0]}")


def replay(
    problem: PipelineProblem,
    actions: Sequence[Sequence[Action]],
    claimed: Mapping[Action, float] | None = None,
    check_memory: bool = True,
) -> Replay:
    """Simulate the lists; raise ``ScheduleError`` if they are incomplete, deadlock, break a
    cap (with ``check_memory``) or if ``claimed`` start times are infeasible."""
    if not problem.concrete:
        raise ScheduleError("replay needs concrete sizes: use problem.at(values)")
    check_complete(problem, actions)
    p = problem.p
    start: dict[Action, float] = {}
    end: dict[Action, float] = {}
    ptr = [0] * p
    free = [0.0] * p
    remaining = sum(len(x) for x in actions)
    while remaining:
        progress = False
        for d in range(p):
            while ptr[d] < len(actions[d]):
                a = actions[d][ptr[d]]
                ready = 0.0
                ok = True
                for q in deps(problem, a):
                    if q not in end:
                        ok = False
                        break
                    ready = max(ready, end[q] + problem.delay(q.kind, q.stage))
                if not ok:
                    break
                t = max(ready, free[d])
                start[a] = t
                end[a] = t + problem.busy(a.kind, a.stage)
                free[d] = end[a]
                ptr[d] += 1
                remaining -= 1
                progress = True
        if not progress:
            stuck = ", ".join(
                f"device {d} at {actions[d][ptr[d]]}" for d in range(p) if ptr[d] < len(actions[d])
            )
            raise ScheduleError(f"deadlock: no device can proceed ({stuck})")
    makespan = max(end.values()) if end else 0.0
    work = tuple(sum(problem.busy(a.kind, a.stage) for a in lst) for lst in actions)
    peaks = []
    for lst in actions:
        cur = peak = 0
        for a in lst:
            if a.kind == "F":
                cur += int(problem.act[a.stage])
                peak = max(peak, cur)
            elif a.kind == "B":
                cur -= problem.act_b(a.stage)
            else:
                cur -= int(problem.act_w[a.stage])
        peaks.append(peak)
    caps = problem.caps()
    mem_ok = caps is None or all(pk <= c for pk, c in zip(peaks, caps))
    if check_memory and not mem_ok:
        assert caps is not None
        d = next(i for i in range(p) if peaks[i] > caps[i])
        raise ScheduleError(f"device {d}: activation peak {peaks[d]} over the cap {caps[d]}")
    if claimed is not None:
        _check_claimed(problem, actions, claimed, makespan)
    return Replay(start, end, makespan, work, tuple(peaks), mem_ok, caps)


def _check_claimed(problem, actions, claimed, makespan) -> None:
    tol = EPS * max(1.0, makespan)
    cend = {}
    for d, lst in enumerate(actions):
        prev_end = 0.0
        for a in lst:
            if a not in claimed:
                raise ScheduleError(f"no claimed start for {a}")
            s = float(claimed[a])
            if s < prev_end - tol:
                raise ScheduleError(
                    f"device {d}: {a} starts at {s} before the previous action ends ({prev_end})"
                )
            cend[a] = s + problem.busy(a.kind, a.stage)
            prev_end = cend[a]
    for lst in actions:
        for a in lst:
            for q in deps(problem, a):
                need = cend[q] + problem.delay(q.kind, q.stage)
                if claimed[a] < need - tol:
                    raise ScheduleError(
                        f"{a} starts at {claimed[a]} before its input {q} arrives ({need})"
                    )


def lower_bound(problem: PipelineProblem) -> float:
    """A makespan no schedule can beat (memory ignored): for each device, the earliest time
    any of its stages can get an input (the forward chain before its first stage), plus all
    of its work; with a fused backward, also the backward chain that must follow the device's
    last action. Also one microbatch's full critical path."""
    S = problem.n_stages
    head = [0.0] * S
    for s in range(1, S):
        head[s] = head[s - 1] + problem.busy("F", s - 1) + problem.delay("F", s - 1)
    tail = [0.0] * S  # after B(s) ends: the backward chain down to stage 0
    for s in range(1, S):
        tail[s] = tail[s - 1] + problem.delay("B", s) + problem.busy("B", s - 1)
    best = 0.0
    for d in range(problem.p):
        st = problem.stages_of(d)
        h = min(head[s] for s in st)
        t = 0.0 if problem.split_backward else min(tail[s] for s in st)
        work = problem.m * sum(problem.busy(k, s) for s in st for k in problem.kinds)
        best = max(best, h + work + t)
    path = head[S - 1] + problem.busy("F", S - 1) + problem.busy("B", S - 1) + tail[S - 1]
    if problem.split_backward:
        path += problem.busy("W", 0)
    return max(best, path)


@dataclass
class PipelineSchedule:
    problem: PipelineProblem
    method: str
    actions: list  # [device] -> list[Action]
    status: str = "HEURISTIC"
    bound: float | None = None
    claimed: dict | None = None  # solver start times, checked by the replay
    info: dict = field(default_factory=dict)
    replay: Replay | None = None

    def validate(self, check_memory: bool = True) -> Replay:
        self.replay = replay(self.problem, self.actions, self.claimed, check_memory)
        return self.replay

    @property
    def makespan(self) -> float:
        return (self.replay or self.validate(False)).makespan

    def summary(self) -> dict:
        r = self.replay or self.validate(False)
        bound = self.bound if self.bound is not None else lower_bound(self.problem)
        return {
            "method": self.method,
            "status": self.status,
            "makespan": _num(r.makespan),
            "bubble_fraction": round(r.bubble_fraction, 6),
            "bubble_ratio": round(r.bubble_ratio, 6),
            "peak_activation": list(r.peak),
            "memory_cap": list(r.caps) if r.caps is not None else None,
            "memory_ok": r.memory_ok,
            "bound": _num(bound),
            "gap": round((r.makespan - bound) / r.makespan, 6) if r.makespan > 0 else 0.0,
            **({k: v for k, v in self.info.items() if k in ("message", "seconds")}),
        }


def _num(x: float):
    return int(x) if float(x).is_integer() else round(float(x), 6)


def order_from_times(problem: PipelineProblem, times: Mapping[Action, float]) -> list[list[Action]]:
    out: list[list[Action]] = [[] for _ in range(problem.p)]
    for a in sorted(times, key=lambda a: (times[a], a.stage, a.mb, a.kind)):
        out[problem.device(a.stage)].append(a)
    return out


def fifo_relabel(
    problem: PipelineProblem, actions: Sequence[Sequence[Action]]
) -> list[list[Action]]:
    """The same lists with the k-th F (B, W) of each stage given microbatch k.

    Microbatches are interchangeable, so this never makes a schedule slower or bigger: at the
    k-th action of a kind on a stage, k actions of the kind it waits for have finished on the
    neighbour stage (each action has its own input), so the k-th of them has too; memory
    counts do not depend on labels. The CP model uses this to fix microbatch order."""
    out = []
    for lst in actions:
        count: dict[tuple[str, int], int] = {}
        new = []
        for a in lst:
            k = count.get((a.kind, a.stage), 0)
            count[(a.kind, a.stage)] = k + 1
            new.append(Action(a.kind, a.stage, k))
        out.append(new)
    return out


def flatten(actions: Iterable[Iterable[Action]]) -> list[Action]:
    return [a for lst in actions for a in lst]


__all__ = [
    "Action",
    "Replay",
    "PipelineSchedule",
    "replay",
    "deps",
    "lower_bound",
    "all_actions",
    "order_from_times",
]
