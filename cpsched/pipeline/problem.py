"""Pipeline-parallel problem data: stages, microbatches, virtual stages, costs, memory, links.

Stages are *virtual* stages (model chunks) numbered ``0 .. p*v - 1`` in model order. Chunk
``c`` of device ``d`` is stage ``c*p + d`` (the looped placement used by Megatron-LM's
interleaved 1F1B and by Praxis' circular pipeline), so consecutive stages sit on consecutive
devices and the last stage of a round feeds device 0 again.

Per stage: forward time ``f``, input-gradient time ``b`` and weight-gradient time ``w``
(``split_backward=False`` fuses them: the backward is one action of time ``b + w``).
Activation memory per microbatch follows the zero-bubble paper's accounting (Qi et al.,
ICLR 2024, section 3): F allocates ``act``; B frees all of it but ``act_w`` (what W still
needs: the layer inputs and output gradients); W frees ``act_w``. Fused, B frees ``act``.
Memory is taken at the start of F and given back at the end of B / W.

Activation sizes may be size polynomials over named dims (``"2*b*s*1024"``, see
``cpsched.core.symbolic``): ``PipelineProblem.at(values)`` gives the concrete problem of one
scenario (``cpsched.core.scenarios``), e.g. one microbatch size.

Link: ``comm`` time units per stage-to-stage transfer on different devices. With
``comm_overlap=True`` (default) the transfer runs beside compute and only delays the
receiver; with ``False`` the sender is busy for ``comm`` after its F / B (a blocking send).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from cpsched.core.errors import InputError
from cpsched.core.symbolic import SymExpr
from cpsched.core.units import BYTE_UNITS, parse_bytes

KINDS = ("F", "B", "W")
CAP_1F1B = "1f1b"
# Past this many (stage, microbatch) pairs a problem is refused: the baselines alone take
# minutes (128 x 1024 took 6 s for one baseline on a loaded 2-core machine) and the CP
# model's memory grows with the square of a device's actions.
MAX_CELLS = 65_536
# Times are scaled to integers (up to x1000) for CP-SAT, whose bounds stay below 2^62.
MAX_TOTAL_TIME = 1e15


def _tuple(x, n: int, name: str) -> tuple:
    if isinstance(x, (int, float, str, SymExpr)):
        return (x,) * n
    t = tuple(x)
    if len(t) == 1:
        return t * n
    if len(t) != n:
        raise InputError(f"{name}: {len(t)} values given, {n} stages (p*v) expected")
    return t


@dataclass(frozen=True)
class PipelineProblem:
    p: int
    m: int
    v: int = 1
    f: tuple = (1.0,)
    b: tuple = (1.0,)
    w: tuple = (1.0,)
    act: tuple = (1,)  # per stage: int or SymExpr (bytes per microbatch)
    act_w: tuple = (0,)  # per stage: part of ``act`` held from B until W
    split_backward: bool = True
    comm: float = 0.0
    comm_overlap: bool = True
    memory_cap: object = None  # None, a number (every device), a per-device tuple, or "1f1b"
    name: str = "pipeline"
    meta: dict = field(default_factory=dict, compare=False)

    def __post_init__(self):
        for k in ("p", "m", "v"):
            val = getattr(self, k)
            if not isinstance(val, int) or isinstance(val, bool) or val < 1:
                raise InputError(f"{k} must be a positive integer, got {val!r}")
        cells = self.p * self.m * self.v
        if cells > MAX_CELLS:
            raise InputError(
                f"{self.p} stages x {self.m} microbatches x {self.v} chunks = {cells:,} "
                f"(stage, microbatch) pairs, over the limit of {MAX_CELLS:,}"
            )
        n = self.p * self.v
        for k in ("f", "b", "w"):
            t = tuple(_time(x, k) for x in _tuple(getattr(self, k), n, k))
            object.__setattr__(self, k, t)
        if any(x <= 0 for x in self.f) or any(x <= 0 for x in self.b):
            raise InputError("F and B times must be > 0")
        object.__setattr__(self, "comm", _time(self.comm, "comm"))
        work = self.m * (sum(self.f) + sum(self.b) + sum(self.w) + 2 * n * self.comm)
        if work > MAX_TOTAL_TIME:
            raise InputError(
                f"the step's total time is {work:.3g}, past the {MAX_TOTAL_TIME:.0e} limit of "
                "the solver's integer times (give the times in a larger unit)"
            )
        for k in ("act", "act_w"):
            t = tuple(
                x
                if isinstance(x, int)
                else _size_or_expr(x, k)
                if isinstance(x, (str, SymExpr))
                else _int(x, k)
                for x in _tuple(getattr(self, k), n, k)
            )
            object.__setattr__(self, k, t)
        cap = self.memory_cap
        if isinstance(cap, str):
            if cap.lower() != CAP_1F1B:
                raise InputError(f"memory cap {cap!r}: a number or '1f1b'")
            object.__setattr__(self, "memory_cap", CAP_1F1B)
        elif cap is not None:
            caps = (
                _tuple(cap, self.p, "memory_cap")
                if not isinstance(cap, (int, float))
                else (cap,) * self.p
            )
            if len(caps) != self.p:
                raise InputError(f"memory_cap: {len(caps)} values, {self.p} devices")
            object.__setattr__(self, "memory_cap", tuple(_int(c, "memory_cap") for c in caps))
        if not self.split_backward:
            # fused: one backward action of time b + w; nothing held for a separate W
            object.__setattr__(self, "b", tuple(x + y for x, y in zip(self.b, self.w)))
            object.__setattr__(self, "w", (0.0,) * n)
            object.__setattr__(self, "act_w", (0,) * n)

    # -- shape -----------------------------------------------------------------------------
    @property
    def n_stages(self) -> int:
        return self.p * self.v

    def device(self, stage: int) -> int:
        return stage % self.p

    def chunk(self, stage: int) -> int:
        return stage // self.p

    def stages_of(self, device: int) -> list[int]:
        return [c * self.p + device for c in range(self.v)]

    @property
    def kinds(self) -> tuple[str, ...]:
        return KINDS if self.split_backward else ("F", "B")

    def duration(self, kind: str, stage: int) -> float:
        return {"F": self.f, "B": self.b, "W": self.w}[kind][stage]

    def busy(self, kind: str, stage: int) -> float:
        """Device time of an action: its compute plus a blocking send when the link does not
        overlap compute."""
        t = self.duration(kind, stage)
        if not self.comm_overlap and self.comm > 0 and self.sends(kind, stage):
            t += self.comm
        return t

    def sends(self, kind: str, stage: int) -> bool:
        """Whether the action's output crosses to another device."""
        if kind == "F" and stage < self.n_stages - 1:
            return self.device(stage + 1) != self.device(stage)
        if kind == "B" and stage > 0:
            return self.device(stage - 1) != self.device(stage)
        return False

    def delay(self, kind: str, stage: int) -> float:
        """Time between the end of the action and its consumer's earliest start."""
        if self.comm > 0 and self.comm_overlap and self.sends(kind, stage):
            return self.comm
        return 0.0

    # -- symbolic sizes --------------------------------------------------------------------
    @property
    def dims(self) -> tuple[str, ...]:
        ds: set[str] = set()
        for x in self.act + self.act_w:
            if isinstance(x, SymExpr):
                ds.update(x.dims)
        return tuple(sorted(ds))

    def at(self, values: Mapping[str, int] | None = None) -> PipelineProblem:
        """The concrete problem with every size polynomial evaluated at ``values``."""
        values = dict(values or {})
        missing = [d for d in self.dims if d not in values]
        if missing:
            raise InputError(f"no value for dim(s) {', '.join(missing)}")

        def ev(x):
            return x.evaluate(values) if isinstance(x, SymExpr) else int(x)

        return replace(
            self,
            act=tuple(ev(x) for x in self.act),
            act_w=tuple(ev(x) for x in self.act_w),
            meta={**self.meta, "scenario": values},
        )

    @property
    def concrete(self) -> bool:
        return not self.dims

    def act_b(self, stage: int) -> int:
        """Bytes freed by B (the rest, ``act_w``, by W)."""
        return int(self.act[stage]) - int(self.act_w[stage])

    def device_act(self, device: int) -> int:
        return sum(int(self.act[s]) for s in self.stages_of(device))

    def caps(self) -> tuple[int, ...] | None:
        """Per-device activation caps in bytes (``"1f1b"`` resolved), or None."""
        if self.memory_cap is None:
            return None
        if self.memory_cap == CAP_1F1B:
            c = cap_1f1b(self)
            return (c,) * self.p
        assert isinstance(self.memory_cap, tuple)  # __post_init__ made it a tuple of ints
        return self.memory_cap

    def total_work(self, device: int) -> float:
        return self.m * sum(self.f[s] + self.b[s] + self.w[s] for s in self.stages_of(device))

    def check_memory_feasible(self) -> None:
        caps = self.caps()
        if caps is None:
            return
        for d in range(self.p):
            # a microbatch's chunks on a device are all held when its last chunk runs forward
            need = self.device_act(d)
            if caps[d] < need:
                raise InputError(
                    f"memory cap {caps[d]} on device {d} is below one microbatch's "
                    f"activations on it ({need}): no schedule fits"
                )


def cap_1f1b(problem: PipelineProblem) -> int:
    """The 1F1B activation peak, used as the '1f1b' cap on every device (the zero-bubble
    paper's memory limit p*M_B): device ``d`` of 1F1B holds ``min(p - d, m)`` microbatches
    of its stages' activations; the cap is the largest of these (device 0 when uniform).
    For v > 1 the chunks of a device count together (same model, same device)."""
    return max(min(problem.p - d, problem.m) * problem.device_act(d) for d in range(problem.p))


def _time(x, what: str) -> float:
    if isinstance(x, bool):
        raise InputError(f"{what}: {x!r} is not a time")
    try:
        t = float(x)
    except (TypeError, ValueError):
        raise InputError(f"{what}: {x!r} is not a number") from None
    except OverflowError:
        t = math.inf
    if not (math.isfinite(t) and t >= 0):
        raise InputError(f"{what}: times must be finite and >= 0, got {x!r}")
    return t


def _is_size(text: str) -> bool:
    """``2GiB``, ``512 MB``, ``4096``: a number with a byte unit, or none."""
    body = text.strip().rstrip("BbIiKkMmGgTt ")
    unit = text.strip()[len(body) :].strip().lower()
    try:
        float(body.replace("_", ""))
    except ValueError:
        return False
    return unit in BYTE_UNITS


def _size_or_expr(x, what: str):
    """Bytes (``2GiB``, ``4096``) as an int, else a size polynomial (``4*b*2048``)."""
    if isinstance(x, str) and _is_size(x):
        return _int(x, what)
    return SymExpr.parse(x)


def _int(x, what: str) -> int:
    if isinstance(x, str) and _is_size(x) and x.strip().rstrip("0123456789.eE_+- ") != "":
        return parse_bytes(x, what)  # a size with its unit: 2GiB, 512MB
    try:
        fx = float(x)
    except (TypeError, ValueError):
        raise InputError(f"{what}: {x!r} is not a number") from None
    if fx < 0 or fx != int(fx):
        raise InputError(f"{what}: {x!r} must be a non-negative integer (bytes)")
    return int(fx)


def uniform(
    p: int,
    m: int,
    v: int = 1,
    f: float = 1.0,
    b: float = 1.0,
    w: float = 1.0,
    act: int | str = 1,
    act_w: int | str = 0,
    **kw,
) -> PipelineProblem:
    """Every stage (chunk) alike: ``f``, ``b``, ``w``, ``act`` and ``act_w`` are per stage, so
    with v > 1 pass the per-chunk figures (e.g. F/v to cut the same model finer)."""
    return PipelineProblem(p=p, m=m, v=v, f=(f,), b=(b,), w=(w,), act=(act,), act_w=(act_w,), **kw)


def from_costs(
    p: int,
    m: int,
    v: int,
    costs: Sequence[float] | None = None,
    *,
    per_stage: Mapping | None = None,
    **kw,
) -> PipelineProblem:
    """From ``F,B,W`` (every stage) or a per-stage mapping ``{"f": [...], "b": [...], ...}``."""
    if per_stage is not None:
        return PipelineProblem(p=p, m=m, v=v, **{k: per_stage[k] for k in per_stage}, **kw)
    f, b, w = (list(costs) + [0.0, 0.0, 0.0])[:3] if costs else (1.0, 1.0, 1.0)
    return PipelineProblem(p=p, m=m, v=v, f=(f,), b=(b,), w=(w,), **kw)


__all__ = ["PipelineProblem", "KINDS", "CAP_1F1B", "cap_1f1b", "uniform", "from_costs"]
