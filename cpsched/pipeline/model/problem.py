"""Integer data of the CP-SAT pipeline model: times scaled to integers, memory in bytes.

CP-SAT needs integers. Times are multiplied by the smallest scale in ``SCALES`` that makes
every F/B/W time and the link time whole (else by the largest, rounded; the replay of the
result always uses the exact times).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd

from cpsched.pipeline.problem import PipelineProblem
from cpsched.pipeline.schedule import all_actions, deps

SCALES = (1, 2, 4, 5, 8, 10, 20, 25, 50, 100, 1000)


def time_scale(problem: PipelineProblem) -> tuple[int, bool]:
    vals = list(problem.f) + list(problem.b) + list(problem.w) + [problem.comm]
    for s in SCALES:
        if all(abs(x * s - round(x * s)) < 1e-9 for x in vals):
            return s, True
    return SCALES[-1], False


@dataclass
class CpData:
    problem: PipelineProblem
    scale: int
    exact: bool
    actions: list  # every Action
    busy: dict  # Action -> int device time
    delay: dict  # Action -> int transfer delay after it
    deps: dict  # Action -> list[Action]
    caps: tuple | None  # per device, in memory units
    act_b: list  # per stage, memory units freed by B
    act_w: list  # per stage, memory units freed by W
    mem_unit: int

    @property
    def p(self) -> int:
        return self.problem.p


def make_data(problem: PipelineProblem) -> CpData:
    scale, exact = time_scale(problem)
    acts = all_actions(problem)
    busy = {a: int(round(problem.busy(a.kind, a.stage) * scale)) for a in acts}
    delay = {a: int(round(problem.delay(a.kind, a.stage) * scale)) for a in acts}
    dep = {a: deps(problem, a) for a in acts}
    caps = problem.caps()
    act_b = [problem.act_b(s) for s in range(problem.n_stages)]
    act_w = [int(problem.act_w[s]) for s in range(problem.n_stages)]
    unit = 0
    for x in act_b + act_w + list(caps or ()):
        unit = gcd(unit, int(x))
    unit = unit or 1
    if caps is not None:
        # dividing the caps rounds down: still exact, since every demand is a multiple of unit
        caps = tuple(int(c) // unit for c in caps)
    return CpData(
        problem,
        scale,
        exact,
        acts,
        busy,
        delay,
        dep,
        caps,
        [x // unit for x in act_b],
        [x // unit for x in act_w],
        unit,
    )


__all__ = ["CpData", "make_data", "time_scale", "SCALES"]
