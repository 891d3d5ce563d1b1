"""The published pipeline schedules, each as its paper defines it, as per-device action lists.

- ``gpipe``: Huang et al., NeurIPS 2019: every forward, then every backward (microbatch
  order, as torch's ScheduleGPipe). Peak m microbatches of activations.
- ``one_f_one_b``: PipeDream-Flush (Narayanan et al., ICML 2021; the 1F1B of Megatron-LM):
  device d runs min(p-d-1, m) warm-up forwards, then alternates one forward and one backward,
  then drains the backwards. Peak p-d microbatches.
- ``interleaved``: Megatron-LM's interleaved 1F1B (Narayanan et al., SC'21, section 2.2.2):
  v model chunks per device, microbatches in groups of p, warm-up of 2(p-d-1) + (v-1)p
  chunk-forwards (all of them when m == p), then 1F1B over chunk actions. Needs m % p == 0.
- ``circular``: Praxis' ``CircularLayerwiseShardablePipelined`` (circular_repeat = v): a
  loop of m*v + p - 1 iterations in which device d runs repeat r of microbatch j at
  iteration r*m + j + d (every microbatch through the first repeat before the second starts,
  so m >= p), and the backward is the reverse of that loop (autodiff of the scan). Peak m*v
  chunk activations.
- ``zb_h1`` / ``zb_h2``: Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, section
  3.1: B split into B (input gradient, on the critical path) and W (weight gradient, free to
  move). ZB-H1 keeps 1F1B's warm-up (p-d forwards) and F/B alternation and moves W passes
  into the bubbles, with at most d W passes outstanding on device d, so that its peak stays
  within 1F1B's p*M_B. ZB-H2 warms up with 2(p-d)-1 forwards (the ones that fill the
  bubble before the first B arrives) and keeps at most 2d+1 W passes outstanding: peak
  within 2p*M_B. W passes fill any wait of the device (the paper's figure 3 placement) and
  trail at the end.

With a split backward, the non-ZB schedules run W right after its B (the fused backward).
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Mapping

from cpsched.core.errors import InputError, ScheduleError
from cpsched.pipeline.problem import PipelineProblem
from cpsched.pipeline.schedule import Action, PipelineSchedule, deps, replay

BASELINES = ("gpipe", "1f1b", "interleaved", "circular", "zb-h1", "zb-h2")


def _bw(problem: PipelineProblem, stage: int, mb: int) -> list[Action]:
    out = [Action("B", stage, mb)]
    if problem.split_backward:
        out.append(Action("W", stage, mb))
    return out


def _need_v1(problem: PipelineProblem, name: str) -> None:
    if problem.v != 1:
        raise InputError(
            f"{name} has one stage per device: use --virtual 1 (or interleaved / "
            f"circular for v > 1)"
        )


def gpipe(problem: PipelineProblem) -> list[list[Action]]:
    _need_v1(problem, "gpipe")
    out = []
    for d in range(problem.p):
        lst = [Action("F", d, j) for j in range(problem.m)]
        for j in range(problem.m):
            lst += _bw(problem, d, j)
        out.append(lst)
    return out


def one_f_one_b(problem: PipelineProblem) -> list[list[Action]]:
    _need_v1(problem, "1f1b")
    p, m = problem.p, problem.m
    out = []
    for d in range(p):
        warm = min(p - d - 1, m)
        lst = [Action("F", d, j) for j in range(warm)]
        nb = 0
        for j in range(warm, m):
            lst.append(Action("F", d, j))
            lst += _bw(problem, d, nb)
            nb += 1
        while nb < m:
            lst += _bw(problem, d, nb)
            nb += 1
        out.append(lst)
    return out


def interleaved(problem: PipelineProblem) -> list[list[Action]]:
    p, m, v = problem.p, problem.m, problem.v
    if v == 1:
        return one_f_one_b(problem)
    if m % p:
        raise InputError(f"interleaved 1F1B needs microbatches divisible by stages (m={m}, p={p})")
    total = m * v

    def fwd(d: int, k: int) -> Action:
        c = (k % (p * v)) // p
        return Action("F", c * p + d, (k // (p * v)) * p + k % p)

    def bwd(d: int, k: int) -> list[Action]:
        c = v - 1 - (k % (p * v)) // p
        return _bw(problem, c * p + d, (k // (p * v)) * p + k % p)

    out = []
    for d in range(p):
        if m == p:
            warm = total
        else:
            warm = min(2 * (p - d - 1) + (v - 1) * p, total)
        lst = [fwd(d, k) for k in range(warm)]
        kb = 0
        for k in range(warm, total):
            lst.append(fwd(d, k))
            lst += bwd(d, kb)
            kb += 1
        while kb < total:
            lst += bwd(d, kb)
            kb += 1
        out.append(lst)
    return out


def circular(problem: PipelineProblem) -> list[list[Action]]:
    p, m, v = problem.p, problem.m, problem.v
    if m < p:
        raise InputError(
            f"the circular schedule needs at least as many microbatches as stages (m={m}, p={p})"
        )
    out = []
    for d in range(p):
        lst = [Action("F", r * p + d, j) for r in range(v) for j in range(m)]
        for r in reversed(range(v)):
            for j in reversed(range(m)):
                lst += _bw(problem, r * p + d, j)
        out.append(lst)
    return out


def _zero_bubble(
    problem: PipelineProblem,
    warmup: Callable[[int], int],
    max_pending: Callable[[int], int],
    name: str,
) -> list[list[Action]]:
    """F/B sequence fixed (warm-up forwards, then B,F alternation, then the remaining B);
    W passes placed by an event simulation: a device runs a pending W whenever its next F/B
    is not ready, and must run one when more than ``max_pending(d)`` are outstanding."""
    _need_v1(problem, name)
    if not problem.split_backward:
        raise InputError(f"{name} needs a split backward (B and W times)")
    p, m = problem.p, problem.m
    seq = []
    for d in range(p):
        w = min(warmup(d), m)
        s = [Action("F", d, j) for j in range(w)]
        for k in range(m - w):
            s += [Action("B", d, k), Action("F", d, w + k)]
        s += [Action("B", d, k) for k in range(m - w, m)]
        seq.append(s)
    end: dict[Action, float] = {}
    free = [0.0] * p
    idx = [0] * p
    pending: list[deque[int]] = [deque() for _ in range(p)]
    out: list[list[Action]] = [[] for _ in range(p)]
    stalled = [False] * p

    def ready(a: Action):
        r = 0.0
        for q in deps(problem, a):
            if q not in end:
                return None
            r = max(r, end[q] + problem.delay(q.kind, q.stage))
        return r

    def run(d: int, a: Action, t: float) -> None:
        end[a] = t + problem.busy(a.kind, a.stage)
        free[d] = end[a]
        out[d].append(a)
        if a.kind == "B":
            pending[d].append(a.mb)
        for e in range(p):
            stalled[e] = False

    def active(d: int) -> bool:
        return idx[d] < len(seq[d]) or bool(pending[d])

    while any(active(d) for d in range(p)):
        cand = [d for d in range(p) if active(d)]
        d = min(cand, key=lambda e: (free[e], stalled[e], e))
        t = free[d]
        if stalled[d]:
            # every device at this time is waiting: move each to the next event
            later = [x for x in list(end.values()) + free if x > t + 1e-12]
            if not later:
                raise ScheduleError(f"{name}: deadlock while building the schedule")
            nxt = min(later)
            for e in cand:
                if free[e] <= t + 1e-12 and stalled[e]:
                    free[e] = nxt
                    stalled[e] = False
            continue
        if idx[d] >= len(seq[d]):
            run(d, Action("W", d, pending[d].popleft()), t)
            continue
        a = seq[d][idx[d]]
        if len(pending[d]) > max_pending(d):
            run(d, Action("W", d, pending[d].popleft()), t)
            continue
        r = ready(a)
        if r is not None and r <= t + 1e-12:
            run(d, a, t)
            idx[d] += 1
        elif pending[d]:
            run(d, Action("W", d, pending[d].popleft()), t)
        elif r is not None:
            free[d] = r
        else:
            stalled[d] = True
    return out


def zb_h1(problem: PipelineProblem) -> list[list[Action]]:
    p = problem.p
    return _zero_bubble(problem, lambda d: p - d, lambda d: d, "zb-h1")


def zb_h2(problem: PipelineProblem) -> list[list[Action]]:
    p = problem.p
    return _zero_bubble(problem, lambda d: 2 * (p - d) - 1, lambda d: 2 * d + 1, "zb-h2")


_BUILDERS = {
    "gpipe": gpipe,
    "1f1b": one_f_one_b,
    "interleaved": interleaved,
    "circular": circular,
    "zb-h1": zb_h1,
    "zb-h2": zb_h2,
}


def _greedy(problem):
    """The faster of the safe greedy and the one that reserves memory for a new microbatch's
    first chunk only (more in flight; it may deadlock, then the safe one stands)."""
    best = greedy(problem)
    try:
        alt = greedy(problem, admission="chunk")
        r_alt = replay(problem, alt)
    except ScheduleError:
        return best
    if r_alt.memory_ok and r_alt.makespan < replay(problem, best, check_memory=False).makespan:
        return alt
    return best


_BUILDERS["greedy"] = _greedy


def build(problem: PipelineProblem, method: str, check_memory: bool = False) -> PipelineSchedule:
    """The baseline ``method`` on a concrete problem, replayed (memory checked against the
    caps only with ``check_memory``: baselines ignore caps; ``memory_ok`` says if they fit)."""
    if method not in _BUILDERS:
        raise InputError(f"unknown pipeline method {method!r} (one of {', '.join(BASELINES)}, cp)")
    sched = PipelineSchedule(problem, method, _BUILDERS[method](problem))
    sched.validate(check_memory=check_memory)
    return sched


def applicable(problem: PipelineProblem, method: str) -> str | None:
    """Why ``method`` cannot run on ``problem`` (None when it can)."""
    try:
        _BUILDERS[method](problem)
    except InputError as e:
        return str(e)
    return None


__all__ = [
    "BASELINES",
    "gpipe",
    "one_f_one_b",
    "interleaved",
    "circular",
    "zb_h1",
    "zb_h2",
    "build",
    "applicable",
]


class _GreedyState:
    """The state of ``greedy``'s list schedule: when each action ends, when each device is
    free, the memory each holds and has promised, and the next microbatch of each queue."""

    def __init__(self, problem: PipelineProblem, admission: str):
        p, v = problem.p, problem.v
        self.problem, self.admission = problem, admission
        self.caps = problem.caps()
        self.end: dict[Action, float] = {}
        self.free = [0.0] * p
        self.cur = [0] * p
        self.reserve = [0] * p  # memory promised to in-flight forwards
        # microbatch order per (stage, kind) loses nothing (see schedule.fifo_relabel): only
        # the head of each queue is a candidate
        self.next_f = [[0] * v for _ in range(p)]
        self.next_b = [[0] * v for _ in range(p)]
        self.left = [2 * v * problem.m for _ in range(p)]
        self.pending: list[deque[Action]] = [deque() for _ in range(p)]
        self.out: list[list[Action]] = [[] for _ in range(p)]
        self.chunk_act = [int(problem.act[s]) for s in range(problem.n_stages)]
        self.dep_cache: dict[Action, list[Action]] = {}
        self.ends: list[float] = []  # heap of action end times (the event times)

    def ready_at(self, a: Action):
        """When ``a``'s inputs have arrived; None while one is not run yet."""
        problem, end = self.problem, self.end
        r = 0.0
        qs = self.dep_cache.get(a)
        if qs is None:
            qs = self.dep_cache[a] = deps(problem, a)
        for q in qs:
            if q not in end:
                return None
            r = max(r, end[q] + problem.delay(q.kind, q.stage))
        return r

    def run(self, d, a, t):
        """Run ``a`` on device ``d`` from time ``t``."""
        problem, p, v = self.problem, self.problem.p, self.problem.v
        chunk_act, cur = self.chunk_act, self.cur
        self.end[a] = t + problem.busy(a.kind, a.stage)
        heapq.heappush(self.ends, self.end[a])
        self.free[d] = self.end[a]
        self.out[d].append(a)
        c = problem.chunk(a.stage)
        if a.kind == "F":
            cur[d] += chunk_act[a.stage]
            rest = sum(chunk_act[k * p + d] for k in range(c + 1, v))
            if c == 0:
                self.reserve[d] += rest
            else:
                self.reserve[d] -= chunk_act[a.stage]
            self.next_f[d][c] += 1
            self.left[d] -= 1
        elif a.kind == "B":
            cur[d] -= problem.act_b(a.stage)
            self.next_b[d][c] += 1
            self.left[d] -= 1
            if problem.split_backward:
                self.pending[d].append(a)
        else:
            cur[d] -= int(problem.act_w[a.stage])

    def fits(self, d, a):
        """Whether forward ``a`` fits device ``d``'s cap (admission rule for a chunk 0)."""
        caps, cur, reserve, chunk_act = self.caps, self.cur, self.reserve, self.chunk_act
        if caps is None:
            return True
        p, v = self.problem.p, self.problem.v
        c = self.problem.chunk(a.stage)
        if c == 0:
            need = sum(chunk_act[k * p + d] for k in range(v))
            if self.admission == "chunk":
                # only this chunk must fit: more microbatches in flight, may deadlock
                return cur[d] + reserve[d] + chunk_act[a.stage] <= caps[d]
            return cur[d] + reserve[d] + need <= caps[d]
        return cur[d] + chunk_act[a.stage] <= caps[d]  # already reserved

    def heads(self, d, nxt, kind):
        """The next action of ``kind`` of every chunk on device ``d``."""
        p, m = self.problem.p, self.problem.m
        return [Action(kind, c * p + d, nxt[d][c]) for c in range(self.problem.v) if nxt[d][c] < m]


def greedy(
    problem: PipelineProblem,
    f_order: str = "depth",
    b_order: str = "mb",
    w_policy: str = "lazy",
    admission: str = "safe",
    rank: Mapping[Action, float] | None = None,
) -> list[list[Action]]:
    """cpsched's memory-aware list schedule (not a published baseline; a hint for the CP
    model where no baseline fits the cap, e.g. interleaved chunks under the 1F1B cap).

    Whenever a device is free it runs, among the actions whose inputs have arrived: a B
    (lowest microbatch first), else an F that fits the cap (deepest chunk first, then lowest
    microbatch), else a pending W, else it waits. A microbatch enters a device (its chunk-0
    F) only if the cap still leaves room for the rest of its chunks and for the remaining
    chunks of every microbatch already on the device, so a forward can never be blocked for
    memory forever (B and W need none).

    Variants: ``f_order`` "depth" (deepest chunk first) or "mb"; ``b_order`` "mb" or
    "stage"; ``w_policy`` "lazy" (W only when nothing else is ready) or "eager" (W right
    after its B); ``admission`` "safe" (above) or "chunk" (room for the new chunk only: more
    in flight, may deadlock).

    With ``rank`` (a number per action, e.g. its tail: the longest path from its end to the
    end of the step), the kinds lose their fixed precedence: among the ready B's, the F's
    that fit and the oldest pending W, the highest rank runs (a W last on ties). Ranked by
    tail this is critical-path list scheduling, which keeps the bottleneck device fed; the
    admission rule still guards memory."""
    problem.check_memory_feasible()
    p = problem.p
    st = _GreedyState(problem, admission)
    left, pending, free, ends = st.left, st.pending, st.free, st.ends
    next_f, next_b = st.next_f, st.next_b
    ready_at, run, fits, heads = st.ready_at, st.run, st.fits, st.heads

    stalled = [False] * p

    while any(left[d] or pending[d] for d in range(p)):
        cand = [d for d in range(p) if left[d] or pending[d]]
        d = min(cand, key=lambda e: (free[e], stalled[e], e))
        t = free[d]
        if stalled[d]:
            # every device at this time waits: move them to the next event
            while ends and ends[0] <= t + 1e-12:
                heapq.heappop(ends)
            later = ends[:1] + [free[e] for e in cand if free[e] > t + 1e-12]
            if not later:
                raise ScheduleError("greedy: no device can proceed")
            for e in cand:
                if stalled[e] and free[e] <= t + 1e-12:
                    free[e] = min(later)
                    stalled[e] = False
            continue
        if rank is not None:
            cands = [
                a
                for a in heads(d, next_b, "B") + heads(d, next_f, "F")
                if (r := ready_at(a)) is not None
                and r <= t + 1e-12
                and (a.kind == "B" or fits(d, a))
            ]
            if pending[d]:
                b = pending[d][0]
                cands.append(Action("W", b.stage, b.mb))
            if not cands:
                stalled[d] = True
                continue
            a = max(cands, key=lambda a: (rank[a], a.kind != "W"))
            if a.kind == "W":
                pending[d].popleft()
            run(d, a, t)
            stalled = [False] * p
            continue
        if w_policy == "eager" and pending[d]:
            b = pending[d].popleft()
            run(d, Action("W", b.stage, b.mb), t)
            stalled = [False] * p
            continue
        rb = [
            ((a.mb, a.stage) if b_order == "mb" else (a.stage, a.mb), a)
            for a in heads(d, next_b, "B")
            if (r := ready_at(a)) is not None and r <= t + 1e-12
        ]
        if rb:
            run(d, min(rb)[1], t)
            stalled = [False] * p
            continue
        rf = [
            ((-problem.chunk(a.stage), a.mb) if f_order == "depth" else (a.mb, -a.stage), a)
            for a in heads(d, next_f, "F")
            if (r := ready_at(a)) is not None and r <= t + 1e-12 and fits(d, a)
        ]
        if rf:
            run(d, min(rf)[1], t)
            stalled = [False] * p
            continue
        if pending[d]:
            b = pending[d].popleft()
            run(d, Action("W", b.stage, b.mb), t)
            stalled = [False] * p
            continue
        stalled[d] = True
    return st.out
