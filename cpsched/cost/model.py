"""Cost model: how long each op and each asynchronous transfer takes, per scenario.

Three sources of times, in this order of precedence:

1. a **profile** (``load_profile``): measured microseconds per op name, like XLA's PGLE
   profile. For an async start the number is its start->done latency (the transfer), as
   in XLA's ``ProfileGuidedLatencyEstimator``; for any other op, its run time.
2. an op's own ``attrs['duration']`` (graphs read from Checkmate/Moccasin node-link files
   carry compute time directly). It is used **as is, in the file's units** (those files use
   arbitrary units), and ``Costs.unit`` is then ``"file"``.
3. the **device model** (``Device``):

   - compute ops (``COMPUTE``, ``CONTROL_FLOW``): roofline
     ``max(flops / peak, bytes_accessed / hbm_bandwidth) + launch_overhead * launches``; the
     peak is the fp32 one for ops whose ``attrs['dtype']`` is f32, else the bf16 one;
     ``launches`` is 1, or for a loop, conditional or call the ops its bodies launch
     (``attrs['launches']``, the HLO reader's: a loop's body ops times its trip count).
     A preset with ``op_time = "sum"`` (the ``cpu`` one) adds the terms instead:
     ``matmul_flops / peak + other flops / vector_tflops + bytes_moved / hbm_bandwidth +
     launch_overhead * launches``, plus the bytes of the buffers of at least
     ``fresh_buffer_mib`` the op defines over ``fresh_memory_gbps`` (where set); the HLO
     reader's ``attrs['matmul_flops']`` (dots, convolutions, matmul custom-calls, inside
     fusions and bodies too) and ``attrs['bytes_moved']`` (in-place updates and slices
     count the part they touch), a loop's summed over its body times its trip count;
   - parameters, constants, aliases, async starts/updates/dones themselves: 0 (their work
     is the transfer, timed separately);
   - collectives (the start of an async pair, or a sync collective), alpha-beta with ring
     factors over the group size ``p``::

         all-reduce                       2(p-1)/p * bytes/bw + 2(p-1) * alpha
         all-gather, reduce-scatter       (p-1)/p * bytes/bw  + (p-1) * alpha
         all-to-all                       (p-1)/p * bytes/bw  + (p-1) * alpha
         collective-broadcast             bytes/bw            + (p-1) * alpha
         collective-permute, send, recv   bytes/bw            + alpha

     plus ``collective_launch_us``. ``bytes`` is ``Collective.bytes`` read as the full
     tensor (all-reduce: the buffer; all-gather: the gathered output; reduce-scatter: the
     unscattered input), the convention of nccl-tests' bus bandwidth. ``bw``/``alpha``
     are the NVLink figures when every replica group fits in one node of
     ``gpus_per_node`` GPUs, else the network (inter-node) figures; ``attrs['link']``
     (``nvlink`` / ``network``) forces a class. ``p <= 1``: 0 for the ring kinds.
   - copies (``copy-start``/``copy-done``): with a buffer outside device memory (host,
     memory space 5) PCIe ``latency + bytes / pcie_bandwidth``; device to device
     ``2 * bytes / hbm_bandwidth`` (read and write); send/recv with
     ``attrs['is_host_transfer']`` count as host copies too;
   - other async ops (``fusion-start``, async compute): the roofline of the wrapped work
     (flops and bytes summed over start, updates and done).

Units. Physical devices give **seconds**. The ``xla-approx`` device reproduces XLA's
``ApproximateLatencyEstimator`` in its **abstract units** (XLA's
``CyclesPerMicrosecond() == 1``, so a unit reads as a microsecond): node cost 1000 for a
loop fusion, 5000 for an output fusion or convolution, 1 for everything else; 5000 for
every async start->done pair (and, here, for a sync collective). ``xla-gpu-approx`` is
XLA's ``GpuLatencyEstimator`` on top of that: 0 for nop instructions, 1000 for custom
calls. Profiles are in microseconds and are converted to the device's unit.

Device presets live next to this module (``cpsched/cost/devices/*.json``) with a source for
every figure; ``load_device`` takes a preset name, or a TOML (Python 3.11+) or JSON file
whose keys override a preset named by ``extends``.

Device preset sources (full text in the JSON files):
- h100: NVIDIA H100 Tensor Core GPU datasheet (SXM5: 989.4 TFLOP/s dense bf16, 67 fp32,
  3.35 TB/s HBM3, NVLink 4 900 GB/s bidirectional = 450 each way, PCIe 5 128 GB/s
  bidirectional = 64 each way); DGX H100 guide (400 Gb/s ConnectX-7 per GPU).
- a100: NVIDIA A100 Tensor Core GPU datasheet (SXM4 80 GB: 312 TFLOP/s dense bf16, 19.5
  fp32, 2,039 GB/s HBM2e, NVLink 3 600 GB/s bidirectional = 300 each way, PCIe 4 64 GB/s
  bidirectional = 32 each way); DGX A100 guide (200 Gb/s ConnectX-6 per GPU).
- launch overheads: XLA's GPU performance model estimates (1 us per kernel, 5 us per
  NCCL kernel); per-step latencies are estimates to calibrate with nccl-tests.
- cpu: fitted to XLA:CPU on the machine at hand by ``benchmarks/fit_cpu_preset.py``
  (``op_time = "sum"``: its rates, launch, step overhead and colocated devices' factor on
  the profiler's per-op times and measured steps; ``cpsched.measure.fit.fit_sum``); the
  default (``default_device``) for modules XLA:CPU optimized.
- h200-fitted: the h200 preset with its compute, memory, launch and step figures fitted
  the same way to measured H200 runs (``benchmarks/fit_gpu_preset.py``).

``step_overhead_us`` is the runtime's fixed cost of one execution of the module (dispatch,
synchronisation), added once to the timeline's makespan; the datasheet presets leave it 0.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import Any

import numpy as np

from cpsched.core.errors import InputError
from cpsched.core.graph import Collective, Graph, OpKind
from cpsched.core.inputs import check_input_file, load_json, read_text
from cpsched.core.scenarios import Scenarios, static
from cpsched.core.symbolic import evaluate_many

# --------------------------------------------------------------------------------------
# Device
# --------------------------------------------------------------------------------------

UNIT_SECONDS = "s"
UNIT_XLA = "xla"  # XLA's abstract cost units (1 unit = 1 us by XLA's convention)
UNIT_FILE = "file"  # the input file's own units (node-link 'duration')

# XLA ApproximateLatencyEstimator constants (latency_hiding_scheduler.h).
XLA_LOW_COST = 1.0
XLA_MEDIUM_COST = 1000.0
XLA_HIGH_COST = 5000.0
XLA_LOW_LATENCY = 1.0
XLA_HIGH_LATENCY = 5000.0

# GpuLatencyEstimator's nop instructions (cost 0).
_XLA_GPU_NOPS = frozenset(
    {
        "get-tuple-element",
        "bitcast",
        "constant",
        "parameter",
        "tuple",
        "partition-id",
        "replica-id",
        "opt-barrier",
    }
)

_K_COMPUTE = int(OpKind.COMPUTE)
_K_PARAMETER = int(OpKind.PARAMETER)
_K_CONSTANT = int(OpKind.CONSTANT)
_K_ALIAS = int(OpKind.ALIAS)
_K_START = int(OpKind.ASYNC_START)
_K_UPDATE = int(OpKind.ASYNC_UPDATE)
_K_DONE = int(OpKind.ASYNC_DONE)
_K_CONTROL = int(OpKind.CONTROL_FLOW)

_G = 1e9
_T = 1e12
_US = 1e-6

# file key -> (Device field, scale from the file's unit to SI)
_FILE_KEYS: dict[str, tuple[str, float]] = {
    "bf16_tflops": ("peak_flops_bf16", _T),
    "fp32_tflops": ("peak_flops_fp32", _T),
    "hbm_gbps": ("hbm_bandwidth", _G),
    "nvlink_gbps": ("nvlink_bandwidth", _G),
    "nvlink_latency_us": ("nvlink_latency", _US),
    "network_gbps": ("network_bandwidth", _G),
    "network_latency_us": ("network_latency", _US),
    "pcie_gbps": ("pcie_bandwidth", _G),
    "pcie_latency_us": ("pcie_latency", _US),
    "launch_overhead_us": ("launch_overhead", _US),
    "collective_launch_us": ("collective_launch", _US),
    "step_overhead_us": ("step_overhead", _US),
    "gpus_per_node": ("gpus_per_node", 1),
    "vector_tflops": ("peak_flops_vector", _T),
    "colocated_devices_factor": ("colocated_devices_factor", 1),
    "fresh_memory_gbps": ("fresh_memory_bandwidth", _G),
    "fresh_buffer_mib": ("fresh_buffer_min", 2**20),
    "mapped_memory_gbps": ("mapped_memory_bandwidth", _G),
    "mapped_buffer_mib": ("mapped_buffer_min", 2**20),
}
_PLAIN_KEYS = ("name", "description", "default_dtype", "sources", "extends", "op_time")


@dataclass(frozen=True)
class Device:
    """Peak figures of one accelerator, in SI units (FLOP/s, bytes/s, seconds).

    Bandwidths are per direction, per GPU. ``mode`` is ``"roofline"`` for physical
    devices, ``"xla-approx"`` / ``"xla-gpu-approx"`` for XLA's abstract estimators.
    """

    name: str
    peak_flops_bf16: float = 0.0
    peak_flops_fp32: float = 0.0
    hbm_bandwidth: float = 0.0
    nvlink_bandwidth: float = 0.0  # intra-node
    nvlink_latency: float = 0.0  # alpha per ring step, intra-node
    network_bandwidth: float = 0.0  # inter-node, per GPU
    network_latency: float = 0.0  # alpha per ring step, inter-node
    pcie_bandwidth: float = 0.0  # host <-> device copies
    pcie_latency: float = 0.0
    launch_overhead: float = 0.0  # per compute kernel
    collective_launch: float = 0.0  # per collective
    # per execution of the module (the runtime's dispatch and synchronisation, which no op's
    # time holds): added once to the timeline's makespan; 0 in the datasheet presets
    step_overhead: float = 0.0
    gpus_per_node: int = 8
    default_dtype: str = "bf16"
    mode: str = "roofline"
    # how a compute op's time is made of its work (module doc): ``"roofline"`` (the max of
    # flops and bytes), or ``"sum"`` (matmul flops at the fp32/bf16 peak, other flops at
    # ``peak_flops_vector``, bytes moved at the bandwidth, added)
    op_time: str = "roofline"
    peak_flops_vector: float = 0.0  # FLOP/s outside matmuls (``op_time = "sum"``)
    # a module for N devices that all run in one process on the same cores (XLA:CPU's
    # devices): its step is about N * factor * one device's work (0: not such a device)
    colocated_devices_factor: float = 0.0
    # ``op_time = "sum"``: an op that defines a buffer of at least ``fresh_buffer_min``
    # bytes also pays its bytes at ``fresh_memory_bandwidth`` (a runtime that allocates
    # large buffers afresh every execution: the first write into each page faults); 0: not
    fresh_memory_bandwidth: float = 0.0
    fresh_buffer_min: float = 0.0
    # ``op_time = "sum"``: an op that defines a buffer of at least ``mapped_buffer_min``
    # bytes pays its bytes at ``mapped_memory_bandwidth`` on top (glibc's malloc maps such
    # blocks afresh on every allocation, past its adaptive threshold's 32 MiB ceiling, so
    # every page of them faults every execution); 0: not charged
    mapped_memory_bandwidth: float = 0.0
    mapped_buffer_min: float = 0.0
    description: str = ""
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)

    @property
    def unit(self) -> str:
        return UNIT_SECONDS if self.mode == "roofline" else UNIT_XLA

    @property
    def seconds_per_unit(self) -> float:
        return 1.0 if self.unit == UNIT_SECONDS else _US

    def link(self, klass: str) -> tuple[float, float]:
        """``(bandwidth, latency)`` of a link class: ``nvlink``, ``network`` or ``pcie``."""
        if klass == "nvlink":
            return self.nvlink_bandwidth, self.nvlink_latency
        if klass == "network":
            return self.network_bandwidth, self.network_latency
        if klass == "pcie":
            return self.pcie_bandwidth, self.pcie_latency
        raise InputError(f"unknown link class {klass!r} (nvlink, network, pcie)")

    def to_dict(self) -> dict[str, Any]:
        """The file form (the keys ``load_device`` reads)."""
        out: dict[str, Any] = {"name": self.name}
        if self.description:
            out["description"] = self.description
        for key, (attr, scale) in _FILE_KEYS.items():
            v = getattr(self, attr)
            out[key] = int(v) if attr == "gpus_per_node" else float(v) / scale
        out["default_dtype"] = self.default_dtype
        if self.mode != "roofline":
            out["mode"] = self.mode
        if self.op_time != "roofline":
            out["op_time"] = self.op_time
        if self.sources:
            out["sources"] = dict(self.sources)
        return out

    def validate(self) -> Device:
        if self.mode not in ("roofline", "xla-approx", "xla-gpu-approx"):
            raise InputError(f"device {self.name}: unknown mode {self.mode!r}")
        if self.op_time not in ("roofline", "sum"):
            raise InputError(f"device {self.name}: op_time is roofline or sum")
        if self.op_time == "sum" and not (
            self.peak_flops_vector > 0 and math.isfinite(self.peak_flops_vector)
        ):
            raise InputError(f"device {self.name}: op_time sum needs vector_tflops > 0")
        if self.mode == "roofline":
            for attr in (
                "peak_flops_bf16",
                "peak_flops_fp32",
                "hbm_bandwidth",
                "nvlink_bandwidth",
                "network_bandwidth",
                "pcie_bandwidth",
            ):
                v = getattr(self, attr)
                if not (v > 0 and math.isfinite(v)):
                    raise InputError(f"device {self.name}: {attr} must be positive, got {v}")
        for attr in (
            "nvlink_latency",
            "network_latency",
            "pcie_latency",
            "launch_overhead",
            "collective_launch",
            "step_overhead",
            "colocated_devices_factor",
            "fresh_memory_bandwidth",
            "fresh_buffer_min",
            "mapped_memory_bandwidth",
            "mapped_buffer_min",
        ):
            v = getattr(self, attr)
            if not (v >= 0 and math.isfinite(v)):
                raise InputError(f"device {self.name}: {attr} must be >= 0, got {v}")
        if self.gpus_per_node < 1:
            raise InputError(f"device {self.name}: gpus_per_node must be >= 1")
        if self.default_dtype not in ("bf16", "fp32"):
            raise InputError(f"device {self.name}: default_dtype is bf16 or fp32")
        return self


XLA_APPROX = Device(
    "xla-approx", mode="xla-approx", description="XLA ApproximateLatencyEstimator (abstract units)"
)
XLA_GPU_APPROX = Device(
    "xla-gpu-approx",
    mode="xla-gpu-approx",
    description="XLA GpuLatencyEstimator without profile (abstract units)",
)
_ABSTRACT = {"xla-approx": XLA_APPROX, "xla-gpu-approx": XLA_GPU_APPROX}


DEFAULT_DEVICE = "h100"
CPU_DEVICE = "cpu"


def default_device(graph: Graph | None = None) -> str:
    """The preset a time figure uses when none is given: ``cpu`` (fitted to XLA:CPU by
    ``benchmarks/fit_cpu_preset.py``) for a module XLA:CPU optimized, which the HLO reader
    tells by the backend configs XLA:CPU leaves in it (``graph.meta['backend']``), else
    ``h100``."""
    if graph is not None and graph.meta.get("backend") == "cpu" and CPU_DEVICE in preset_names():
        return CPU_DEVICE
    return DEFAULT_DEVICE


def preset_names() -> list[str]:
    """Names ``load_device`` accepts without a path."""
    names = set(_ABSTRACT)
    try:
        for entry in resources.files("cpsched.cost").joinpath("devices").iterdir():
            stem, ext = os.path.splitext(entry.name)
            if ext in (".json", ".toml"):
                names.add(stem)
    except (FileNotFoundError, NotADirectoryError):
        pass
    return sorted(names)


def _read_mapping(path: str) -> dict:
    ext = os.path.splitext(path)[1].lower()
    if ext == ".toml":
        try:
            import tomllib  # Python 3.11+
        except ModuleNotFoundError:
            raise InputError(
                "TOML device files need Python 3.11 or newer (tomllib); "
                "give the same keys as a JSON file instead",
                path=path,
            ) from None
        try:
            check_input_file(path)
            with open(path, "rb") as f:
                return tomllib.load(f)
        except OSError as e:
            raise InputError(f"cannot read: {e.strerror}", path=path) from None
        except tomllib.TOMLDecodeError as e:
            raise InputError(f"bad TOML: {e}", path=path) from None
    data = load_json(path)
    if not isinstance(data, dict):
        raise InputError("a device file holds one object of keys", path=path)
    return data


def _preset_mapping(name: str) -> dict:
    base = resources.files("cpsched.cost").joinpath("devices")
    for ext in (".json", ".toml"):
        entry = base.joinpath(name + ext)
        if entry.is_file():
            with resources.as_file(entry) as p:
                return _read_mapping(str(p))
    raise InputError(
        f"unknown device {name!r}; presets: {', '.join(preset_names())}, or give a .toml/.json file"
    )


def device_from_mapping(
    data: Mapping[str, Any], base: Device | None = None, path: str | None = None, _depth: int = 0
) -> Device:
    """A ``Device`` from file keys (see ``_FILE_KEYS``), on top of ``base`` or ``extends``."""
    data = dict(data)
    if _depth > 8:
        raise InputError("device 'extends' chain is too deep (a cycle?)", path=path)
    ext = data.pop("extends", None)
    if ext is not None:
        base = load_device(str(ext), _depth=_depth + 1)
    changes: dict[str, Any] = {}
    unknown = [k for k in data if k not in _FILE_KEYS and k not in _PLAIN_KEYS and k != "mode"]
    if unknown:
        raise InputError(
            f"unknown device key(s) {', '.join(sorted(unknown))}; known: "
            f"{', '.join(sorted(list(_FILE_KEYS) + ['name', 'description', 'default_dtype', 'mode', 'op_time', 'extends']))}",
            path=path,
        )
    for key, value in data.items():
        if key in _FILE_KEYS:
            attr, scale = _FILE_KEYS[key]
            try:
                changes[attr] = int(value) if attr == "gpus_per_node" else float(value) * scale
            except (TypeError, ValueError):
                raise InputError(
                    f"device key {key}: expected a number, got {value!r}", path=path
                ) from None
        elif key == "sources":
            merged = dict(base.sources) if base else {}
            merged.update({str(k): str(v) for k, v in (value or {}).items()})
            changes["sources"] = merged
        elif key in ("name", "description", "default_dtype", "mode", "op_time"):
            changes[key] = str(value)
    if base is None:
        if "name" not in changes:
            changes["name"] = os.path.splitext(os.path.basename(path))[0] if path else "device"
        dev = Device(**changes)
    else:
        dev = replace(base, **changes)
    try:
        return dev.validate()
    except InputError as e:
        raise (e.with_path(path) if path else e) from None


def load_device(
    name_or_path: str | Device | Mapping[str, Any],
    overrides: Mapping[str, Any] | None = None,
    _depth: int = 0,
) -> Device:
    """A preset (``h100``, ``a100``, ``xla-approx``, ``xla-gpu-approx``), or a TOML/JSON
    file of keys such as ``bf16_tflops``, ``hbm_gbps``, ``nvlink_gbps``, ``pcie_gbps``,
    ``*_latency_us``, ``launch_overhead_us``; ``extends = "h100"`` starts from a preset.
    ``overrides`` (same keys) apply last."""
    if isinstance(name_or_path, Device):
        dev = name_or_path
    elif isinstance(name_or_path, Mapping):
        dev = device_from_mapping(name_or_path, _depth=_depth)
    else:
        key = str(name_or_path)
        if key in _ABSTRACT:
            dev = _ABSTRACT[key]
        elif os.path.sep in key or key.endswith((".json", ".toml")) or os.path.isfile(key):
            dev = device_from_mapping(_read_mapping(key), path=key, _depth=_depth)
        else:
            dev = device_from_mapping(_preset_mapping(key.lower()), _depth=_depth)
    if overrides:
        dev = device_from_mapping(overrides, base=dev)
    return dev


# --------------------------------------------------------------------------------------
# Profiles (PGLE)
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Profile:
    """Measured times in microseconds: ``costs`` per op name, and ``latencies`` per
    ``(source, target)`` pair (XLA's ProfiledInstructionsProto ``latencies``)."""

    costs: Mapping[str, float]
    latencies: Mapping[tuple[str, str], float] = field(default_factory=dict)


_REMAT = re.compile(r"(\.remat\d*)+$")
_COSTS_BLOCK = re.compile(r"\bcosts\s*:?\s*\{([^{}]*)\}", re.S)
_LAT_BLOCK = re.compile(r"\blatencies\s*:?\s*\{([^{}]*)\}", re.S)
_FIELD_STR = r'\b{}\s*:\s*"((?:[^"\\]|\\.)*)"'
_FIELD_NUM = r"\b{}\s*:\s*([-+0-9.eE]+|inf|nan)"


def _base_name(name: str) -> str:
    # 'fingerprint::instr' -> 'instr' (cpsched has no module fingerprint to compare with);
    # '.rematN' copies are averaged into the original, as XLA's PGLE does.
    if "::" in name:
        name = name.split("::", 1)[1]
    return _REMAT.sub("", name)


def _average(pairs) -> dict:
    acc: dict[Any, list[float]] = {}
    for k, v in pairs:
        acc.setdefault(k, []).append(float(v))
    return {k: sum(v) / len(v) for k, v in acc.items()}


def parse_profile_text(text: str, path: str | None = None) -> Profile:
    """XLA's text proto (``costs { name: "ar-start" cost_us: 12.5 }``) or JSON
    (``{"name": us}``, or ``{"costs": {"name": us}}``)."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(
                f"bad JSON: {e.msg}", path=path, line=e.lineno, column=e.colno
            ) from None
        return profile_from_mapping(data, path)
    costs, lats = [], []
    for m in _COSTS_BLOCK.finditer(text):
        body = m.group(1)
        n = re.search(_FIELD_STR.format("name"), body)
        c = re.search(_FIELD_NUM.format("cost_us"), body)
        if not n or not c:
            raise InputError(
                f"profile entry without name or cost_us: {m.group(0).strip()!r}", path=path
            )
        costs.append((_base_name(n.group(1)), float(c.group(1))))
    for m in _LAT_BLOCK.finditer(text):
        body = m.group(1)
        s = re.search(_FIELD_STR.format("source"), body)
        t = re.search(_FIELD_STR.format("target"), body)
        c = re.search(_FIELD_NUM.format("latency_us"), body)
        if s and t and c:
            lats.append(((_base_name(s.group(1)), _base_name(t.group(1))), float(c.group(1))))
    if not costs and not lats and text.strip():
        raise InputError("no 'costs { name: ... cost_us: ... }' entries found", path=path)
    return _checked(Profile(_average(costs), _average(lats)), path)


def profile_from_mapping(data: Mapping[str, Any], path: str | None = None) -> Profile:
    if "costs" in data and isinstance(data["costs"], (Mapping, list)):
        raw = data["costs"]
        items = (
            raw.items() if isinstance(raw, Mapping) else [(e["name"], e["cost_us"]) for e in raw]
        )
    else:
        items = data.items()
    try:
        costs = _average((_base_name(str(k)), float(v)) for k, v in items)
    except (TypeError, ValueError, KeyError) as e:
        raise InputError(f"profile: expected {{name: microseconds}}, got {e}", path=path) from None
    return _checked(Profile(costs), path)


def _checked(p: Profile, path: str | None) -> Profile:
    for k, v in list(p.costs.items()) + [(f"{a}->{b}", v) for (a, b), v in p.latencies.items()]:
        if not (v >= 0 and math.isfinite(v)):
            raise InputError(f"profile: {k} has time {v}; times are finite and >= 0", path=path)
    return p


def load_profile(source: str | Mapping[str, Any] | Profile | None) -> Profile | None:
    """A profile from a path (``.json`` or XLA ``.pbtxt`` text proto), a dict, or ``None``."""
    if source is None or isinstance(source, Profile):
        return source
    if isinstance(source, Mapping):
        return profile_from_mapping(source)
    return parse_profile_text(read_text(str(source)), str(source))


# --------------------------------------------------------------------------------------
# Per-op classification
# --------------------------------------------------------------------------------------

_RING2 = {"all-reduce"}
_RING1 = {"all-gather", "reduce-scatter", "all-to-all", "ragged-all-to-all"}
_P2P = {"collective-permute", "send", "recv"}

STREAM_COPY = "copy"
STREAM_ASYNC_COMPUTE = "async-compute"


def _strip_async_suffix(opcode: str) -> str:
    for suf in ("-start", "-done", "-update"):
        if opcode.endswith(suf):
            return opcode[: -len(suf)]
    return opcode


def is_copy_start(graph: Graph, i: int) -> bool:
    return graph.kinds[i] == _K_START and graph.opcodes[i].startswith("copy-start")


def collective_of(graph: Graph, i: int) -> Collective | None:
    """The collective of op ``i`` (its own entry, or guessed from an async opcode such as
    ``all-reduce-start`` when a reader left the entry out)."""
    c = graph.collectives.get(i)
    if c is not None:
        return c
    if graph.kinds[i] == _K_START:
        base = _strip_async_suffix(graph.opcodes[i])
        if base in _RING2 | _RING1 | _P2P | {"collective-broadcast"}:
            return Collective(
                kind=base,
                bytes=graph.bytes_accessed[i],
                group_size=int(graph.attrs(i).get("group_size", 1)),
            )
    return None


def async_class(graph: Graph, i: int) -> str | None:
    """What the transfer of async start ``i`` (or sync collective ``i``) is:
    ``collective:<kind>``, ``copy`` or ``async-compute``; ``None`` for other ops."""
    kind = graph.kinds[i]
    c = collective_of(graph, i)
    if c is not None and kind != _K_UPDATE and kind != _K_DONE:
        if c.kind in ("send", "recv") and graph.attrs(i).get("is_host_transfer"):
            return STREAM_COPY  # device <-> host, over PCIe
        return f"collective:{c.kind}"
    if kind == _K_START:
        return STREAM_COPY if is_copy_start(graph, i) else STREAM_ASYNC_COMPUTE
    return None


def is_sync_collective(graph: Graph, i: int) -> bool:
    """A collective that runs on the compute stream: a plain (non-async) collective op, or
    an async pair marked ``is_sync`` (XLA runs those synchronously)."""
    c = collective_of(graph, i)
    if c is None or graph.kinds[i] in (_K_DONE, _K_UPDATE):
        return False
    return graph.kinds[i] != _K_START or c.is_sync


def async_starts(graph: Graph) -> np.ndarray:
    return np.flatnonzero(graph.kinds == _K_START)


def timed_transfers(graph: Graph) -> list[int]:
    """Ops that get a transfer time: every async start and every sync collective."""
    out = set(int(i) for i in async_starts(graph))
    out.update(int(i) for i in graph.collectives if graph.kinds[i] not in (_K_DONE, _K_UPDATE))
    return sorted(out)


# --------------------------------------------------------------------------------------
# Times
# --------------------------------------------------------------------------------------


def _eval(graph: Graph, exprs, scenarios: Scenarios) -> np.ndarray:
    return graph._eval(exprs, scenarios).astype(np.float64)


def _raw_sizes(graph: Graph, scenarios: Scenarios) -> np.ndarray:
    # every memory space (graph.sizes() zeroes host buffers, and caches that view)
    return evaluate_many(graph.buffer_sizes, scenarios.dims, scenarios.values).astype(np.float64)


def _is_fp32(attrs: Mapping[str, Any]) -> bool | None:
    dt = attrs.get("dtype", attrs.get("element_type"))
    if dt is None:
        return None
    return str(dt).lower() in ("f32", "fp32", "float32", "tf32")


def _fusion_kind(graph: Graph, i: int) -> str:
    a = graph.attrs(i)
    k = str(a.get("fusion_kind", a.get("kind", ""))).lower()
    return (
        k[1:]
        if k.startswith("k") and len(k) > 1 and k[1:] in ("loop", "output", "input", "custom")
        else k
    )


def _xla_node_cost(graph: Graph, i: int, gpu: bool) -> float:
    op = graph.opcodes[i]
    if gpu:
        if op in _XLA_GPU_NOPS or graph.kinds[i] in (_K_PARAMETER, _K_CONSTANT, _K_ALIAS):
            return 0.0
        if op == "custom-call":
            return XLA_MEDIUM_COST
    if op == "fusion" or op.startswith("fusion"):
        fk = _fusion_kind(graph, i)
        if fk == "loop":
            return XLA_MEDIUM_COST
        if fk == "output":
            return XLA_HIGH_COST
    if op == "convolution":
        return XLA_HIGH_COST
    return XLA_LOW_COST


def _has_duration(graph: Graph) -> bool:
    return any("duration" in a for a in graph.op_attrs.values())


def _unit(graph: Graph, device: Device) -> str:
    return UNIT_FILE if _has_duration(graph) and device.mode == "roofline" else device.unit


def _roofline(
    graph: Graph, device: Device, flops: np.ndarray, nbytes: np.ndarray, ops: np.ndarray
) -> np.ndarray:
    """``[S, len(ops)]`` roofline times + launch overhead of the given ops."""
    default_fp32 = device.default_dtype == "fp32"
    peak = np.full(len(ops), device.peak_flops_fp32 if default_fp32 else device.peak_flops_bf16)
    if graph.op_attrs:
        for k, i in enumerate(ops):
            a = graph.op_attrs.get(int(i))
            f = _is_fp32(a) if a else None
            if f is not None:
                peak[k] = device.peak_flops_fp32 if f else device.peak_flops_bf16
    launches = np.ones(len(ops))
    if graph.op_attrs:
        for k, i in enumerate(ops):
            a = graph.op_attrs.get(int(i))
            if a and "launches" in a:  # a loop launches its body's ops every iteration
                launches[k] = float(a["launches"])
    if device.op_time == "sum":
        return _summed(graph, device, flops, nbytes, ops, peak, launches)
    roof = np.maximum(flops / peak[None, :], nbytes / device.hbm_bandwidth)
    return roof + device.launch_overhead * launches[None, :]


_MATMUL_OPCODES = frozenset({"dot", "convolution"})


def fresh_bytes(
    graph: Graph, ops: np.ndarray, min_bytes: float, scenarios: Scenarios
) -> np.ndarray:
    """``[S, len(ops)]`` bytes of the buffers each op defines that hold at least
    ``min_bytes`` (device memory only)."""
    sizes = graph.sizes(scenarios).astype(np.float64)  # [S, n_buffers], device only
    big = np.where(sizes >= min_bytes, sizes, 0.0)
    owner = np.asarray(graph.buffer_def, dtype=np.int64)
    keep = owner >= 0
    out = np.zeros((sizes.shape[0], len(ops)))
    for s in range(sizes.shape[0]):
        per_op = np.bincount(owner[keep], weights=big[s, keep], minlength=graph.n_ops)
        out[s] = per_op[np.asarray(ops, dtype=np.int64)]
    return out


def _summed(
    graph: Graph,
    device: Device,
    flops: np.ndarray,
    nbytes: np.ndarray,
    ops: np.ndarray,
    peak: np.ndarray,
    launches: np.ndarray,
) -> np.ndarray:
    """``op_time = "sum"``: matmul flops at the matmul peak, the other flops at the vector
    peak, the bytes moved at the bandwidth and the launches, added (a loop's time is then
    its body's, whatever the mix of its ops). The HLO reader's ``attrs['matmul_flops']``
    and ``attrs['bytes_moved']`` (in-place updates and slices move part of a buffer) where
    it gave them; else a dot's or convolution's flops are matmul flops, and the bytes are
    ``bytes_accessed``."""
    mm = np.zeros_like(flops)
    moved = nbytes.copy()
    for k, i in enumerate(ops):
        a = graph.op_attrs.get(int(i)) if graph.op_attrs else None
        if a and "matmul_flops" in a:
            mm[:, k] = np.minimum(float(a["matmul_flops"]), flops[:, k])
        elif graph.opcodes[int(i)] in _MATMUL_OPCODES:
            mm[:, k] = flops[:, k]
        if a and "bytes_moved" in a:
            moved[:, k] = float(a["bytes_moved"])
    t = mm / peak[None, :] + (flops - mm) / device.peak_flops_vector + moved / device.hbm_bandwidth
    return t + device.launch_overhead * launches[None, :]


def op_times(
    graph: Graph,
    device: Device | str,
    scenarios: Scenarios | None = None,
    profile: Profile | Mapping | str | None = None,
) -> np.ndarray:
    """Compute-stream time of every op, ``[S, n_ops]``, in the device's unit (module doc):
    seconds for physical devices, XLA units for ``xla-approx``, the file's units for ops
    with ``attrs['duration']``. Collectives and async starts/dones are 0 here; their
    transfers come from ``collective_times``."""
    device = load_device(device) if not isinstance(device, Device) else device
    scenarios = scenarios or static()
    profile = load_profile(profile)
    n, n_s = graph.n_ops, len(scenarios)
    out = np.zeros((n_s, n), dtype=np.float64)
    kinds = graph.kinds
    if device.mode != "roofline":
        gpu = device.mode == "xla-gpu-approx"
        for i in range(n):
            out[:, i] = _xla_node_cost(graph, i, gpu)
    else:
        real = np.flatnonzero((kinds == _K_COMPUTE) | (kinds == _K_CONTROL))
        if graph.collectives:
            real = real[~np.isin(real, np.fromiter(graph.collectives, dtype=np.int64))]
        if real.size:
            flops = _eval(graph, graph.flops, scenarios)[:, real]
            nbytes = _eval(graph, graph.bytes_accessed, scenarios)[:, real]
            out[:, real] = _roofline(graph, device, flops, nbytes, real)
            if device.op_time == "sum" and device.fresh_memory_bandwidth > 0:
                out[:, real] += fresh_bytes(graph, real, device.fresh_buffer_min, scenarios) / (
                    device.fresh_memory_bandwidth
                )
            if device.op_time == "sum" and device.mapped_memory_bandwidth > 0:
                out[:, real] += fresh_bytes(graph, real, device.mapped_buffer_min, scenarios) / (
                    device.mapped_memory_bandwidth
                )
    for i, a in graph.op_attrs.items():
        if "duration" in a:
            out[:, i] = float(a["duration"])
    if profile is not None:
        scale = _US / device.seconds_per_unit
        for name, us in profile.costs.items():
            j = graph._index.get(name)
            if j is not None and kinds[j] != _K_START:
                out[:, j] = us * scale
    return out


def _ring(kind: str, p: int) -> tuple[float, int]:
    """(bandwidth factor, latency steps) of one collective over ``p`` ranks."""
    if kind in _P2P:
        return 1.0, 1
    if p <= 1:
        return 0.0, 0
    if kind in _RING2:
        return 2.0 * (p - 1) / p, 2 * (p - 1)
    if kind in _RING1:
        return (p - 1) / p, p - 1
    if kind == "collective-broadcast":
        return 1.0, p - 1
    # unknown kinds: treat like an all-gather
    return (p - 1) / p, p - 1


def _group_size(c: Collective) -> int:
    if c.group_size > 1 or not c.replica_groups:
        return max(int(c.group_size), 1)
    return max(len(g) for g in c.replica_groups)


def link_class(graph: Graph, i: int, c: Collective, device: Device) -> str:
    forced = graph.attrs(i).get("link")
    if forced:
        return str(forced)
    if c.replica_groups:
        npn = device.gpus_per_node
        within = all(len({r // npn for r in g}) <= 1 for g in c.replica_groups)
        return "nvlink" if within else "network"
    return "nvlink" if _group_size(c) <= device.gpus_per_node else "network"


def _async_ops(graph: Graph, start: int) -> list[int]:
    """Start, its updates and its done."""
    members = [start] + [int(j) for j in np.flatnonzero(graph.async_start == start)]
    return members


def collective_times(
    graph: Graph,
    device: Device | str,
    scenarios: Scenarios | None = None,
    profile: Profile | Mapping | str | None = None,
) -> dict[int, np.ndarray]:
    """Transfer time ``[S]`` of every async start (collective, copy, or async compute) and
    of every sync collective, keyed by op index, in the device's unit."""
    device = load_device(device) if not isinstance(device, Device) else device
    scenarios = scenarios or static()
    profile = load_profile(profile)
    n_s = len(scenarios)
    ops = timed_transfers(graph)
    out: dict[int, np.ndarray] = {}
    if not ops:
        return out
    abstract = device.mode != "roofline"
    classes = {i: async_class(graph, i) for i in ops}
    # a "collective:" class means collective_of(graph, i) is set
    colls = {
        i: c
        for i in ops
        if (classes[i] or "").startswith("collective:")
        and (c := collective_of(graph, i)) is not None
    }
    coll_bytes: dict[int, np.ndarray] = {}
    if colls and not abstract:
        keys = list(colls)
        vals = evaluate_many([colls[i].bytes for i in keys], scenarios.dims, scenarios.values)
        coll_bytes = {i: vals[:, k].astype(np.float64) for k, i in enumerate(keys)}
    raw_sizes = None
    flops_all = bytes_all = None
    for i in ops:
        cls = classes[i]
        if abstract:
            t = np.full(n_s, XLA_HIGH_LATENCY)
        elif i in colls:
            c = colls[i]
            factor, steps = _ring(c.kind, _group_size(c))
            bw, alpha = device.link(link_class(graph, i, c, device))
            t = factor * coll_bytes[i] / bw + steps * alpha + device.collective_launch
        elif cls == STREAM_COPY and (hc := collective_of(graph, i)) is not None:  # host send/recv
            nbytes = evaluate_many([hc.bytes], scenarios.dims, scenarios.values)[:, 0].astype(
                np.float64
            )
            t = device.pcie_latency + nbytes / device.pcie_bandwidth
        elif cls == STREAM_COPY:
            if raw_sizes is None:
                raw_sizes = _raw_sizes(graph, scenarios)
            members = _async_ops(graph, i)
            bufs = np.unique(np.concatenate([graph.defines(j) for j in members] + [graph.uses(i)]))
            host = bool((graph.buffer_space[bufs] != 0).any()) if bufs.size else False
            sized = [b for b in bufs if graph.buffer_def[b] in members] or list(bufs)
            nbytes = raw_sizes[:, sized].max(axis=1) if sized else np.zeros(n_s)
            if not sized or not nbytes.any():
                if bytes_all is None:
                    bytes_all = _eval(graph, graph.bytes_accessed, scenarios)
                nbytes = bytes_all[:, i]
            if host or graph.attrs(i).get("link") == "pcie":
                t = device.pcie_latency + nbytes / device.pcie_bandwidth
            else:
                t = 2.0 * nbytes / device.hbm_bandwidth + device.launch_overhead
        else:  # async compute
            if flops_all is None:
                flops_all = _eval(graph, graph.flops, scenarios)
                bytes_all = _eval(graph, graph.bytes_accessed, scenarios)
            member_ops = np.asarray(_async_ops(graph, i), dtype=np.int64)
            assert bytes_all is not None  # evaluated with flops_all
            f = flops_all[:, member_ops].sum(axis=1, keepdims=True)
            b = bytes_all[:, member_ops].sum(axis=1, keepdims=True)
            t = _roofline(graph, device, f, b, np.asarray([i]))[:, 0]
        out[i] = np.asarray(t, dtype=np.float64).reshape(n_s).copy()
    for i, a in graph.op_attrs.items():
        if i in out and "latency" in a:  # a reader-supplied latency, in the device unit
            out[i][:] = float(a["latency"])
    if profile is not None:
        scale = _US / device.seconds_per_unit
        for i in out:
            name = graph.op_names[i]
            us = profile.costs.get(name)
            d = int(graph.async_done[i]) if graph.kinds[i] == _K_START else -1
            if d >= 0 and (name, graph.op_names[d]) in profile.latencies:
                us = profile.latencies[(name, graph.op_names[d])]
            if us is not None:
                out[i][:] = us * scale
    return out


@dataclass(frozen=True)
class Costs:
    """Everything the timeline needs: ``op[S, n]`` compute-stream times, ``transfer``
    times ``{op: [S]}`` of async starts and sync collectives, and their unit."""

    op: np.ndarray
    transfer: Mapping[int, np.ndarray]
    unit: str = UNIT_SECONDS
    device: str = ""
    step_overhead: float = 0.0  # once per execution, in ``unit`` (``Device.step_overhead``)

    @property
    def seconds_per_unit(self) -> float | None:
        return {UNIT_SECONDS: 1.0, UNIT_XLA: _US}.get(self.unit)


def estimate(
    graph: Graph,
    device: Device | str,
    scenarios: Scenarios | None = None,
    profile: Profile | Mapping | str | None = None,
) -> Costs:
    """``op_times`` and ``collective_times`` together, with their unit."""
    device = load_device(device) if not isinstance(device, Device) else device
    scenarios = scenarios or static()
    profile = load_profile(profile)
    unit = _unit(graph, device)
    return Costs(
        op_times(graph, device, scenarios, profile),
        collective_times(graph, device, scenarios, profile),
        unit,
        device.name,
        device.step_overhead / device.seconds_per_unit if unit != UNIT_FILE else 0.0,
    )


__all__ = [
    "Device",
    "Profile",
    "Costs",
    "load_device",
    "load_profile",
    "preset_names",
    "default_device",
    "DEFAULT_DEVICE",
    "parse_profile_text",
    "op_times",
    "collective_times",
    "estimate",
    "async_class",
    "is_sync_collective",
    "collective_of",
    "link_class",
    "XLA_APPROX",
    "XLA_GPU_APPROX",
    "UNIT_SECONDS",
    "UNIT_XLA",
    "UNIT_FILE",
]
