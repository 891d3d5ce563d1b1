"""Fit a device preset's roofline figures to measured per-op times.

The cost model (``cpsched.cost.model``) times a compute op as
``max(flops / peak, bytes / bandwidth) + launch_overhead``, with the fp32 or the bf16 peak by
the op's dtype. ``op_samples`` pairs the ops of a module (XLA's final module, read by cpsched)
with the per-op times a profiler measured for them (``xla_run.profile_ops``: seconds and
events per step, keyed by instruction name); ``fit_roofline`` picks the four figures that
make the model's per-op times closest to the measured ones, and ``preset`` writes them as a
device file (``load_device`` reads it) that names where they came from.

Closest means: the least weighted absolute log ratio ``sum w * |log(model / measured)|``,
with every program weighing the same and ``w`` an op's share of its program's measured time,
so that the ops that make up a step count as much as they weigh in it, a factor of two off is the same error on a 1 us op as on a 1 ms
one, and a few ops a busy machine slowed down (the profiler sees every preemption) pull
the figures less than squares would let them. The search is a grid over log-spaced figures, refined twice around the best point
(numpy only; four figures do not need an optimizer library).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from cpsched.core.graph import Graph, OpKind
from cpsched.core.scenarios import static
from cpsched.cost.model import collective_of, load_device, op_times
from cpsched.cost.timeline import timeline

# Ops whose cost the model does not take from the roofline of their own flops and bytes:
# loops and conditionals (their bodies' ops are timed one by one), calls, and collectives.
_COMPOSITE = frozenset({"while", "conditional", "call", "async-start", "async-done"})


@dataclass(frozen=True)
class Sample:
    """One op's measured time beside the figures the model times it from.

    ``seconds``: measured time per call (one event); ``calls``: events per step;
    ``flops`` and ``bytes``: cpsched's figures for one call; ``fp32``: timed at the fp32
    peak (``None``: the dtype is unknown, the preset's default applies)."""

    program: str
    op: str
    opcode: str
    flops: float
    bytes: float
    fp32: bool | None
    seconds: float
    calls: float


def op_samples(
    graph: Graph, per_op: Mapping[str, Any], program: str = "", devices: int = 1
) -> list[Sample]:
    """The ops of ``graph`` the profiler timed (``per_op['ops']``: ``{name: [seconds per
    step, events per step]}``), as ``Sample``s. Per step counts are divided by ``devices``
    (a module for N devices run in one process gives N events of each op per step). Ops
    the roofline does not time (loops, calls, collectives, aliases) are left out."""
    ops = per_op.get("ops") or {}
    if not ops:
        return []
    flops = graph._eval(graph.flops, static())[0].astype(np.float64)
    nbytes = graph._eval(graph.bytes_accessed, static())[0].astype(np.float64)
    out = []
    compute = (int(OpKind.COMPUTE), int(OpKind.CONTROL_FLOW))
    for name, (sec, cnt) in ops.items():
        j = graph._index.get(name)
        if j is None or int(graph.kinds[j]) not in compute or cnt <= 0 or sec <= 0:
            continue
        opcode = graph.opcodes[j]
        if opcode in _COMPOSITE or collective_of(graph, j) is not None:
            continue
        attrs = graph.op_attrs.get(j) or {}
        dt = attrs.get("dtype", attrs.get("element_type"))
        fp32 = None if dt is None else str(dt).lower() in ("f32", "fp32", "float32", "tf32")
        per_call = sec / cnt
        out.append(
            Sample(
                program,
                name,
                str(opcode),
                float(flops[j]),
                float(nbytes[j]),
                fp32,
                per_call,
                cnt / max(devices, 1),
            )
        )
    return out


@dataclass(frozen=True)
class Fit:
    """Fitted figures (SI units) and how well they match the samples they came from."""

    peak_flops_fp32: float
    peak_flops_bf16: float
    bandwidth: float
    launch_overhead: float
    samples: int
    programs: int
    measured_seconds: float  # sum of the samples' time per step
    modelled_seconds: float  # the model's time for the same ops and calls
    median_abs_log_ratio: float

    def file_keys(self) -> dict[str, float]:
        """The device-file keys (``load_device``) these figures set."""
        return {
            "fp32_tflops": _round(self.peak_flops_fp32 / 1e12),
            "bf16_tflops": _round(self.peak_flops_bf16 / 1e12),
            "hbm_gbps": _round(self.bandwidth / 1e9),
            "launch_overhead_us": _round(self.launch_overhead / 1e-6),
        }


def _round(x: float) -> float:
    return float(f"{x:.4g}")


def model_seconds(
    samples: list[Sample], p32: float, p16: float, bw: float, launch: float, default_fp32: bool
) -> np.ndarray:
    """The roofline's time per call of every sample."""
    f = np.array([s.flops for s in samples])
    b = np.array([s.bytes for s in samples])
    is32 = np.array([default_fp32 if s.fp32 is None else s.fp32 for s in samples])
    peak = np.where(is32, p32, p16)
    return np.maximum(f / peak, b / bw) + launch


def _search(
    f: np.ndarray,
    b: np.ndarray,
    t: np.ndarray,
    w: np.ndarray,
    grids: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> tuple[float, float, float, float]:
    """The (peak, bandwidth, launch) of three grids with the least weighted absolute log
    ratio, and that error."""
    gp, gb, gl = grids
    best = (math.inf, 0.0, 0.0, 0.0)
    lt = np.log(t)
    for p in gp:
        comp = f / p  # [n]
        # [B, n] then [B, L, n]
        roof = np.maximum(comp[None, :], b[None, :] / gb[:, None])
        pred = roof[:, None, :] + gl[None, :, None]
        err = (np.abs(np.log(pred) - lt) * w).sum(axis=2)
        k = int(np.argmin(err))
        e = float(err.flat[k])
        if e < best[0]:
            ib, il = divmod(k, len(gl))
            best = (e, float(p), float(gb[ib]), float(gl[il]))
    return best[1], best[2], best[3], best[0]


def _around(x: float, span: float, n: int) -> np.ndarray:
    return np.exp(np.linspace(math.log(x) - span, math.log(x) + span, n))


def fit_roofline(
    samples: Iterable[Sample],
    default_fp32: bool = True,
    peak_range: tuple[float, float] = (1e8, 1e16),
    bandwidth_range: tuple[float, float] = (1e8, 1e13),
    launch_range: tuple[float, float] = (1e-8, 1e-3),
) -> Fit:
    """Peak FLOP/s (fp32, bf16), bandwidth (bytes/s) and launch overhead (s) that fit
    ``samples`` best (module doc). The fp32 peak, bandwidth and launch overhead are fitted
    together on every sample (bf16 ones at a bf16 peak tied to the fp32 one); the bf16
    peak is then fitted alone on the bf16 samples with the other three held, or left equal
    to the fp32 one when there are none with flops."""
    samples = [s for s in samples if s.seconds > 0]
    if not samples:
        raise ValueError("no samples to fit")
    t = np.array([s.seconds for s in samples])
    calls = np.array([s.calls for s in samples])
    # every program weighs the same (a step's error is per program), each op within it by
    # its share of the program's measured time
    w = t * calls
    programs = np.array([s.program for s in samples])
    for p in set(programs.tolist()):
        mine = programs == p
        w[mine] = w[mine] / w[mine].sum()
    w = w / w.sum()
    f = np.array([s.flops for s in samples])
    b = np.array([s.bytes for s in samples])
    grids = (
        np.geomspace(*peak_range, 33),
        np.geomspace(*bandwidth_range, 31),
        np.geomspace(*launch_range, 31),
    )
    p, bw, lo, _ = _search(f, b, t, w, grids)
    for span in (0.6, 0.12):
        p, bw, lo, _ = _search(
            f, b, t, w, (_around(p, span, 25), _around(bw, span, 25), _around(lo, span, 25))
        )
    is16 = np.array([not (default_fp32 if s.fp32 is None else s.fp32) for s in samples])
    p16 = p
    if (is16 & (f > 0)).any():
        best = (math.inf, p)
        for cand in np.geomspace(p / 1e3, p * 1e3, 241):
            pred = np.maximum(f / np.where(is16, cand, p), b / bw) + lo
            e = float((np.abs(np.log(pred) - np.log(t)) * w).sum())
            if e < best[0]:
                best = (e, float(cand))
        p16 = best[1]
    pred = model_seconds(samples, p, p16, bw, lo, default_fp32)
    return Fit(
        peak_flops_fp32=p,
        peak_flops_bf16=p16,
        bandwidth=bw,
        launch_overhead=lo,
        samples=len(samples),
        programs=len({s.program for s in samples}),
        measured_seconds=float((t * calls).sum()),
        modelled_seconds=float((pred * calls).sum()),
        median_abs_log_ratio=float(np.median(np.abs(np.log(pred / t)))),
    )


@dataclass(frozen=True)
class Step:
    """One measured program for the step fit: the model's step time is
    ``base + ops * launch_overhead + step_overhead`` (``base``: its timeline with both
    at 0; ``ops``: how many op launches the timeline counts), ``measured`` the median."""

    program: str
    base: float
    ops: float
    measured: float


@dataclass(frozen=True)
class StepFit:
    """Launch and step overheads fitted to whole steps, and how well they match them."""

    launch_overhead: float
    step_overhead: float
    programs: int
    median_abs_log_ratio: float

    def file_keys(self) -> dict[str, float]:
        return {
            "launch_overhead_us": _round(self.launch_overhead / 1e-6),
            "step_overhead_us": _round(self.step_overhead / 1e-6),
        }


def step_terms(graph: Graph, device: Mapping[str, Any], program: str = "", measured=0.0) -> Step:
    """``Step`` of ``graph``'s own order under ``device`` (a device file's keys) with its
    launch and step overheads set aside: two timelines, at 0 and at 1 us per launch."""

    def span(launch_us: float) -> float:
        dev = load_device({**device, "launch_overhead_us": launch_us, "step_overhead_us": 0.0})
        tl = timeline(graph, graph.default_order(), device=dev, scenarios=static())
        return float(tl.makespan[0]) * dev.seconds_per_unit

    base = span(0.0)
    return Step(program, base, (span(1.0) - base) / 1e-6, float(measured))


def predicted(step: Step, fit: StepFit) -> float:
    """The model's step time of a ``Step`` under fitted overheads."""
    return step.base + step.ops * fit.launch_overhead + fit.step_overhead


def fit_steps(steps: Iterable[Step]) -> StepFit:
    """The launch overhead (per op) and step overhead (per execution) that make the model's
    step times closest to the measured ones (the least sum of absolute log ratios): what the
    runtime spends between and around the ops, which the per-op events do not hold."""
    steps = [s for s in steps if s.measured > 0]
    if not steps:
        raise ValueError("no measured steps to fit")
    base = np.array([s.base for s in steps])
    ops = np.array([s.ops for s in steps])
    lm = np.log(np.array([s.measured for s in steps]))

    def search(gl: np.ndarray, gs: np.ndarray) -> tuple[float, float, float]:
        pred = base[None, None, :] + ops[None, None, :] * gl[:, None, None] + gs[None, :, None]
        err = np.abs(np.log(np.maximum(pred, 1e-15)) - lm).sum(axis=2)
        k = int(np.argmin(err))
        i, j = divmod(k, len(gs))
        return float(gl[i]), float(gs[j]), float(err.flat[k])

    gl = np.concatenate([[0.0], np.geomspace(1e-8, 1e-3, 61)])
    gs = np.concatenate([[0.0], np.geomspace(1e-7, 1.0, 71)])
    lo, so, _ = search(gl, gs)
    for span in (0.5, 0.1):
        gl2 = _around(lo, span, 41) if lo > 0 else np.concatenate([[0.0], gl[1:8]])
        gs2 = _around(so, span, 41) if so > 0 else np.concatenate([[0.0], gs[1:8]])
        lo, so, _ = search(gl2, gs2)
    pred = base + ops * lo + so
    return StepFit(
        launch_overhead=lo,
        step_overhead=so,
        programs=len(steps),
        median_abs_log_ratio=float(np.median(np.abs(np.log(pred) - lm))),
    )


@dataclass(frozen=True)
class ScaleFit:
    """A factor on the roofline's op times, a launch overhead per op and a step overhead,
    fitted to whole steps."""

    scale: float
    launch_overhead: float
    step_overhead: float
    programs: int
    median_abs_log_ratio: float


def fit_scale(steps: Iterable[Step]) -> ScaleFit:
    """The factor ``k`` on the roofline's op times, the launch overhead ``L`` per op and the
    step overhead ``S`` that make ``S + k * base + L * ops`` closest to the measured steps
    (least sum of absolute log ratios). ``k`` takes what the per-op events miss in
    proportion to the work (a busy machine's preemptions, cache effects between ops),
    ``L`` what the runtime spends per op (a loop's body ops count every iteration), ``S``
    per execution."""
    steps = [s for s in steps if s.measured > 0]
    if not steps:
        raise ValueError("no measured steps to fit")
    base = np.array([s.base for s in steps])
    ops = np.array([s.ops for s in steps])
    lm = np.log(np.array([s.measured for s in steps]))

    def search(gk, gl, gs) -> tuple[float, float, float]:
        best = (math.inf, 0.0, 0.0, 0.0)
        for k in gk:
            pred = k * base[None, None, :] + gl[:, None, None] * ops + gs[None, :, None]
            err = np.abs(np.log(np.maximum(pred, 1e-15)) - lm).sum(axis=2)
            i = int(np.argmin(err))
            if float(err.flat[i]) < best[0]:
                a, b = divmod(i, len(gs))
                best = (float(err.flat[i]), float(k), float(gl[a]), float(gs[b]))
        return best[1], best[2], best[3]

    def grid(x: float, span: float, first: np.ndarray) -> np.ndarray:
        return _around(x, span, 21) if x > 0 else first[:8]

    gl0 = np.concatenate([[0.0], np.geomspace(1e-8, 1e-3, 41)])
    gs0 = np.concatenate([[0.0], np.geomspace(1e-7, 1.0, 57)])
    k, lo, so = search(np.geomspace(0.05, 100, 81), gl0, gs0)
    for span in (0.4, 0.08):
        k, lo, so = search(_around(k, span, 21), grid(lo, span * 3, gl0), grid(so, span * 3, gs0))
    pred = k * base + lo * ops + so
    return ScaleFit(k, lo, so, len(steps), float(np.median(np.abs(np.log(pred) - lm))))


# -- the additive per-class model (``op_time = "sum"``) ---------------------------------------

# What each term of ``op_time = "sum"`` charges, in the order of ``SumProgram.op_terms``'s
# columns: a launch, a byte moved, a matmul flop, a flop outside matmuls, a byte of a large
# buffer an op defines (``fresh_buffer_mib``), a byte of a mapped buffer it defines
# (``mapped_buffer_mib``).
SUM_TERMS = (
    "launch_overhead_us",
    "hbm_gbps",
    "fp32_tflops",
    "vector_tflops",
    "fresh_memory_gbps",
    "mapped_memory_gbps",
)
# The buffers whose first writes the fifth term charges: at least this large (MiB). Not
# fitted: glibc's malloc hands out blocks from 128 KiB on by mmap, raising that threshold
# up to 32 MiB as blocks are freed; on the measured programs 0.5, 1 and 2 MiB fit alike
FRESH_BUFFER_MIB = 1.0
# The buffers that are mapped afresh on every allocation: past the ceiling of glibc's
# adaptive mmap threshold (DEFAULT_MMAP_THRESHOLD_MAX, 32 MiB on 64-bit hosts; mallopt(3)),
# so their pages fault every execution however often they were freed before. Not fitted
MAPPED_BUFFER_MIB = 32.0
# How much each program's profiled ops weigh in the fit, together, beside its step (1): the
# per-op events are inflated where XLA:CPU runs independent ops at once on the cores and by
# the profiler itself, the steps are what the model is held to
OP_WEIGHT = 0.2


@dataclass(frozen=True)
class SumProgram:
    """One measured program for the additive fit: its step's terms (``step_terms``: the
    timeline's makespan of XLA's order with one term's unit cost 1 and the others 0), its
    profiled ops' terms (``op_terms``, one row per op, with ``op_seconds`` and ``op_calls``
    beside them), its median step and device count."""

    program: str
    step_terms: np.ndarray  # [len(SUM_TERMS)]
    op_terms: np.ndarray  # [n, len(SUM_TERMS)]
    op_seconds: np.ndarray  # [n] per call
    op_calls: np.ndarray  # [n] per step
    measured: float
    devices: int


def _unit_device(term: int, fresh_mib: float = FRESH_BUFFER_MIB) -> Any:
    """A ``cpu``-like device whose op time is term ``term``'s work alone (one unit per
    launch, byte or flop; the other terms free)."""
    free = 1e30
    return load_device(
        {
            "name": f"unit-{SUM_TERMS[term]}",
            "op_time": "sum",
            "default_dtype": "fp32",
            "launch_overhead_us": 1e6 if term == 0 else 0.0,  # 1 s per launch
            "hbm_gbps": 1e-9 if term == 1 else free,  # 1 s per byte
            "fp32_tflops": 1e-12 if term == 2 else free,
            "bf16_tflops": 1e-12 if term == 2 else free,
            "vector_tflops": 1e-12 if term == 3 else free,
            "fresh_memory_gbps": 1e-9 if term == 4 else 0.0,  # 0: not charged
            "fresh_buffer_mib": fresh_mib,
            "mapped_memory_gbps": 1e-9 if term == 5 else 0.0,  # 0: not charged
            "mapped_buffer_mib": MAPPED_BUFFER_MIB,
            # every device of XLA:CPU is in one process: its transfers are memory copies
            "nvlink_gbps": 1e-9 if term == 1 else free,
            "network_gbps": 1e-9 if term == 1 else free,
            "pcie_gbps": 1e-9 if term == 1 else free,
            "step_overhead_us": 0.0,
        }
    )


def sum_program(
    graph: Graph,
    per_op_samples: Iterable[Sample],
    program: str,
    measured: float,
    devices: int,
    fresh_mib: float = FRESH_BUFFER_MIB,
) -> SumProgram:
    """``SumProgram`` of XLA's final module ``graph`` and its profiled ``Sample``s."""
    step = np.zeros(len(SUM_TERMS))
    samples = list(per_op_samples)
    idx = [graph._index[s.op] for s in samples]
    cols = np.zeros((len(samples), len(SUM_TERMS)))
    for k in range(len(SUM_TERMS)):
        dev = _unit_device(k, fresh_mib)
        tl = timeline(graph, graph.default_order(), device=dev, scenarios=static())
        step[k] = float(tl.makespan[0])
        if idx:
            cols[:, k] = op_times(graph, dev, static())[0, idx]
    return SumProgram(
        program,
        step,
        cols,
        np.array([s.seconds for s in samples]),
        np.array([s.calls for s in samples]),
        float(measured),
        int(devices),
    )


@dataclass(frozen=True)
class SumFit:
    """The additive model's figures (SI: s per launch, bytes/s, FLOP/s, FLOP/s, bytes/s of
    fresh memory, s per step, and the colocated devices' factor) and how well they match."""

    launch_overhead: float
    bandwidth: float
    matmul_flops: float
    vector_flops: float
    fresh_bandwidth: float
    step_overhead: float
    colocated_factor: float
    programs: int
    samples: int
    multi_programs: int
    op_median_abs_log_ratio: float  # profiled ops of single-device programs
    step_median_abs_log_ratio: float  # single-device steps
    fresh_buffer_mib: float = FRESH_BUFFER_MIB
    mapped_bandwidth: float = 0.0  # bytes/s of mapped buffers (0: not charged)

    def file_keys(self) -> dict[str, Any]:
        return {
            "op_time": "sum",
            "launch_overhead_us": _round(self.launch_overhead / 1e-6),
            "hbm_gbps": _round(self.bandwidth / 1e9),
            "fp32_tflops": _round(self.matmul_flops / 1e12),
            "bf16_tflops": _round(self.matmul_flops / 1e12),
            "vector_tflops": _round(self.vector_flops / 1e12),
            "fresh_memory_gbps": _round(self.fresh_bandwidth / 1e9),
            "fresh_buffer_mib": self.fresh_buffer_mib,
            "mapped_memory_gbps": _round(self.mapped_bandwidth / 1e9),
            "mapped_buffer_mib": MAPPED_BUFFER_MIB,
            "step_overhead_us": _round(self.step_overhead / 1e-6),
            "colocated_devices_factor": _round(self.colocated_factor),
        }

    def theta(self) -> np.ndarray:
        return np.array(
            [
                self.launch_overhead,
                1 / self.bandwidth,
                1 / self.matmul_flops,
                1 / self.vector_flops,
                1 / self.fresh_bandwidth,
                1 / self.mapped_bandwidth if self.mapped_bandwidth > 0 else 0.0,
                self.step_overhead,
            ]
        )


def _nonneg_rel_fit(a: np.ndarray, m: np.ndarray, w: np.ndarray, rounds: int = 40) -> np.ndarray:
    """Coefficients ``th >= 0`` that make ``a @ th`` close to ``m`` in relative terms: the
    weighted sum of |log(a @ th / m)|, approached by iteratively reweighted least squares on
    ``a @ th / m - 1`` (a coefficient that comes out negative is dropped, as in an active
    set method)."""
    n = a.shape[1]
    ww = w.copy()
    th = np.zeros(n)
    for _ in range(rounds):
        act = np.ones(n, dtype=bool)
        sol = np.zeros(0)
        for _ in range(n):
            am = a[:, act] / m[:, None] * np.sqrt(ww)[:, None]
            sol = np.linalg.lstsq(am, np.sqrt(ww), rcond=None)[0]
            if (sol < 0).any():
                act[np.flatnonzero(act)[int(np.argmin(sol))]] = False
                continue
            break
        th = np.zeros(n)
        th[act] = sol
        r = np.abs(np.log(np.maximum(a @ th, 1e-15) / m))
        ww = w / np.maximum(r, 0.02)
    return th


def sum_predict(p: SumProgram, theta: np.ndarray, colocated: float) -> float:
    """The model's step of ``p`` (seconds): ``S + terms @ theta`` for one device; a module
    for N devices on one host ``N * colocated * terms @ theta + S``."""
    n = len(SUM_TERMS)
    one = float(p.step_terms @ theta[:n])
    if p.devices > 1:
        return p.devices * colocated * one + float(theta[n])
    return one + float(theta[n])


def fit_sum(
    programs: Iterable[SumProgram],
    op_weight: float = OP_WEIGHT,
    fresh_mib: float = FRESH_BUFFER_MIB,
) -> SumFit:
    """The additive model's seven figures (a launch's, a byte's, a matmul flop's, another
    flop's, a fresh large buffer's byte's and a mapped buffer's byte's cost, and the step
    overhead) fitted together on
    the profiled ops and the median steps of the single-device programs: each program's ops
    weigh as their shares of its profiled time, ``op_weight`` in all, its step 1; the least
    weighted relative error (``_nonneg_rel_fit``). Then the colocated devices' factor: the
    median over the multi-device programs of measured / (N * one device's work), with the
    step overhead taken off. ``fresh_mib``: the threshold the programs' terms were made
    with (``sum_program``), recorded in the figures."""
    programs = [p for p in programs if p.measured > 0]
    single = [p for p in programs if p.devices <= 1]
    if not single:
        raise ValueError("no single-device programs to fit")
    n = len(SUM_TERMS)
    rows, target, weight = [], [], []
    for p in single:
        ok = p.op_seconds > 0
        if not ok.any():
            continue
        share = p.op_seconds[ok] * p.op_calls[ok]
        share = op_weight * share / share.sum()
        for t, s, w in zip(p.op_terms[ok], p.op_seconds[ok], share):
            rows.append(np.r_[t, 0.0])
            target.append(s)
            weight.append(w)
    n_ops = len(rows)
    for p in single:
        rows.append(np.r_[p.step_terms, 1.0])
        target.append(p.measured)
        weight.append(1.0)
    a, m, w = np.array(rows), np.array(target), np.array(weight)
    th = _nonneg_rel_fit(a, m, w)
    tiny = 1e-30  # a term the fit dropped: free, not infinite
    multi = [p for p in programs if p.devices > 1]
    ratios = [
        (p.measured - th[n]) / (p.devices * float(p.step_terms @ th[:n]))
        for p in multi
        if float(p.step_terms @ th[:n]) > 0
    ]
    # a fit on very few programs can put the step overhead above a multi-device step: the
    # factor stays positive (a preset's 0 would mean "not such a device")
    colocated = max(float(np.median(ratios)), 1e-3) if ratios else 1.0
    ops = a[:n_ops] @ th
    op_err = np.abs(np.log(np.maximum(ops, 1e-15) / m[:n_ops]))
    step_err = [abs(math.log(sum_predict(p, th, colocated) / p.measured)) for p in single]
    return SumFit(
        launch_overhead=float(th[0]),
        bandwidth=1 / max(float(th[1]), tiny),
        matmul_flops=1 / max(float(th[2]), tiny),
        vector_flops=1 / max(float(th[3]), tiny),
        fresh_bandwidth=1 / max(float(th[4]), tiny),
        step_overhead=float(th[n]),
        colocated_factor=colocated,
        programs=len(programs),
        samples=n_ops,
        multi_programs=len(ratios),
        op_median_abs_log_ratio=float(np.median(op_err)) if len(op_err) else math.nan,
        step_median_abs_log_ratio=float(np.median(step_err)),
        fresh_buffer_mib=fresh_mib,
        mapped_bandwidth=1 / float(th[5]) if th[5] > 0 else 0.0,
    )


def preset(
    base: Mapping[str, Any],
    figures: Mapping[str, float],
    name: str,
    description: str,
    sources: Mapping[str, str],
) -> dict[str, Any]:
    """A device file: ``base``'s keys with the fitted ``figures`` (file keys) and a source
    for each (``sources``: by key, or ``"*"`` for all of them)."""
    out = dict(base)
    out["name"] = name
    out["description"] = description
    out.update(figures)
    merged = dict(out.get("sources") or {})
    for key in figures:
        merged[key] = sources.get(key, sources.get("*", ""))
    out["sources"] = merged
    return out


__all__ = [
    "Sample",
    "Fit",
    "Step",
    "StepFit",
    "op_samples",
    "fit_roofline",
    "fit_steps",
    "fit_scale",
    "ScaleFit",
    "step_terms",
    "predicted",
    "model_seconds",
    "preset",
    "SUM_TERMS",
    "SumProgram",
    "SumFit",
    "sum_program",
    "sum_predict",
    "fit_sum",
]
