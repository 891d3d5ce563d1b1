"""``run_module``: run a written module on XLA and hold it to a reference order and to the model.

The measuring itself is ``cpsched.measure.xla_run`` (jax's PJRT clients), run in a child
process of a Python that has jax: this one when it has, else the one named by
``CPSCHED_JAX_PYTHON``. jax is never imported here, so the core needs no jax; without one
``run_module`` refuses in one line. What it adds to the child's record is cpsched's own
figure for the order XLA ran: the timeline model's step time of XLA's final module read back
(``predicted_seconds``, with the device preset that made it).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from typing import Any

from cpsched.core.errors import CpschedError, InputError
from cpsched.core.scenarios import static
from cpsched.cost.model import DEFAULT_DEVICE, Device, default_device, load_device
from cpsched.cost.timeline import timeline
from cpsched.readers import read_graph

ENGINE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "xla_run.py")
DEFAULT_REPEAT = 10
JAX_PYTHON_ENV = "CPSCHED_JAX_PYTHON"


@dataclass(frozen=True)
class RunRecord:
    """One module run on XLA, beside its reference.

    ``outputs_equal``: the outputs equal the reference's on the same seeded inputs (exact
    for integers, ``output_check['rtols']`` for floats; ``None`` without a reference);
    ``step_seconds``: median wall time of ``repeat`` synchronised executions, inputs on the
    device (``spread``: min, q1, q3, max); ``predicted_seconds``: cpsched's timeline model's
    step time for the order XLA ran, with device preset ``device``; ``order_kept``: XLA ran
    the module's own order (XLA:GPU keeps it; XLA:CPU compiles the program again and
    schedules it itself); ``xla_order``: the entry computation's instructions in the order
    XLA's final module runs them; ``memory``: XLA's compiled memory stats in bytes;
    ``peak_bytes_in_use``: the device allocator's peak (GPU only).
    """

    module: str
    reference: str | None
    platform: str
    device_kind: str
    outputs_equal: bool | None
    output_check: dict
    step_seconds: float | None
    spread: dict
    step_seconds_runs: list
    predicted_seconds: float | None
    device: str
    order_kept: bool
    order_check: dict
    xla_order: list
    memory: dict
    peak_bytes_in_use: int | None
    repeat: int
    seed: int
    compile_seconds: float
    reference_run: dict | None = None
    per_op: dict | None = None
    notes: list = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def jax_python() -> str | None:
    """A Python that has jax and jaxlib: this one, else ``$CPSCHED_JAX_PYTHON``."""
    if importlib.util.find_spec("jax") and importlib.util.find_spec("jaxlib"):
        return sys.executable
    py = os.environ.get(JAX_PYTHON_ENV)
    if py and os.path.exists(py):
        return py
    return None


def _child(python: str, job: dict, platform: str, timeout: float | None) -> list[dict]:
    """The child's records for the job's one group; an XLA abort becomes an InputError."""
    env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false", TF_CPP_MIN_LOG_LEVEL="2")
    if platform == "cpu":
        env["JAX_PLATFORMS"] = "cpu"
    with tempfile.TemporaryDirectory(prefix="cpsched-run-") as tmp:
        path = os.path.join(tmp, "job.json")
        with open(path, "w") as f:
            json.dump(job, f)
        try:
            p = subprocess.run(
                [python, ENGINE, "worker", path],
                capture_output=True,
                text=True,
                env=env,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            raise InputError(f"no result within {timeout:g} s") from None
    records = None
    for line in p.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if "fatal" in msg:
            raise InputError(msg["fatal"])
        if "records" in msg:
            records = msg["records"]
    if records is None:
        lines = [ln.strip() for ln in p.stderr.splitlines() if ln.strip()]
        why = next(
            (
                ln
                for ln in reversed(lines)
                if "Check failed" in ln or "RET_CHECK" in ln or "rror" in ln
            ),
            lines[-1] if lines else "",
        )
        raise InputError(f"XLA stopped the process (exit {p.returncode}): {why[:300]}")
    return records


def measure_group(
    paths: list[str],
    reference: int | None = 0,
    repeat: int = 1,
    seed: int = 0,
    platform: str = "auto",
    python: str | None = None,
    timeout: float | None = None,
    profile_runs: int = 0,
    final_text: bool = False,
) -> list[dict]:
    """``xla_run.measure``'s records for several modules of one program (the same
    parameters), run in one child process on the same inputs, outputs held to
    ``paths[reference]``'s. A module that cannot be run has ``error`` in its record; a
    child that dies raises ``InputError``. ``profile_runs``: profiled steps for per-op
    times (``per_op``); ``final_text``: each record carries XLA's final module
    (``final_text``)."""
    python = python or jax_python()
    if python is None:
        raise InputError(f"needs jax and jaxlib, or {JAX_PYTHON_ENV}")
    job = {
        "platform": platform,
        "repeat": repeat,
        "warmup": 1,
        "seed": seed,
        "profile_runs": profile_runs,
        "final_text": final_text,
        "groups": [{"paths": list(paths), "reference": reference}],
    }
    return _child(python, job, platform, timeout)


def _predicted(final_text: str, device: str | None) -> tuple[float | None, str | None, str | None]:
    """The timeline model's step time of XLA's final module in its own order, the preset
    that made it (``device``, else the default for the module: ``cpu`` for XLA:CPU's), and
    a note where cpsched cannot read the module."""
    with tempfile.TemporaryDirectory(prefix="cpsched-run-") as tmp:
        path = os.path.join(tmp, "final.hlo")
        with open(path, "w") as f:
            f.write(final_text)
        try:
            g = read_graph(path)
            device = device or default_device(g)
            tl = timeline(g, g.default_order(), device=device, scenarios=static())
        except CpschedError as e:  # XLA wrote something cpsched cannot read: say so
            why = str(e).split(": ", 1)[-1]
            return None, device, f"cpsched cannot read XLA's final module: {why}"
    return float(tl.makespan[0]) * load_device(device).seconds_per_unit, device, None


def colocated_step(one: float, devices: int, device: str | Device) -> float:
    """The step of a module for ``devices`` devices that all run in one process on the same
    cores (XLA:CPU's), from one device's predicted step: ``N * colocated_devices_factor``
    times its work plus one step overhead; one device's step where the preset has no
    factor."""
    dev = load_device(device)
    if devices <= 1 or dev.colocated_devices_factor <= 0:
        return one
    work = one - dev.step_overhead
    return devices * dev.colocated_devices_factor * work + dev.step_overhead


def run_module(
    module: str,
    reference: str | None = None,
    repeat: int = DEFAULT_REPEAT,
    seed: int = 0,
    platform: str = "auto",
    device: str | None = None,
    profile_runs: int = 0,
    python: str | None = None,
    timeout: float | None = None,
) -> RunRecord:
    """Compile ``module`` (HLO text, ``.gz`` too) on XLA, run it on seeded random inputs,
    check its outputs against ``reference``'s on the same inputs, time ``repeat`` steps.

    ``platform``: ``cpu``, ``gpu`` or ``auto`` (a GPU when jax has one). ``device``: the
    preset of ``predicted_seconds`` (default: ``cpu`` for XLA:CPU's final module, else
    ``h100``). Raises ``InputError`` (one line) for
    a module that cannot be run: unreadable, a token or opaque parameter, a backend that
    refuses it, no jax.
    """
    for path in (module, reference):
        if path is not None and not os.path.isfile(path):
            raise InputError("no such file", path=path)
    if repeat < 1:
        raise InputError(f"--repeat must be at least 1, got {repeat}")
    if device is not None:
        load_device(device)  # an unknown preset is refused before anything runs
    python = python or jax_python()
    if python is None:
        raise InputError(
            "cpsched run needs jax and jaxlib: pip install 'cpsched[jax]', or set "
            f"{JAX_PYTHON_ENV} to a Python that has them"
        )
    paths = [module] + ([reference] if reference else [])
    records = measure_group(
        paths,
        reference=1 if reference else None,
        repeat=repeat,
        seed=seed,
        platform=platform,
        python=python,
        timeout=timeout,
        profile_runs=profile_runs,
        final_text=True,
    )
    for path, rec in zip(paths, records):
        if "error" in rec:
            raise InputError(rec["error"], path=path)
    mine = records[0]
    predicted, used, note = _predicted(mine.pop("final_text"), device)
    notes = [note] if note else []
    if mine.get("platform") == "cpu":
        notes.append(
            "XLA:CPU compiles the program again (fusion and scheduling): the order "
            "it ran is its own, reported as xla_order"
        )
        n = mine.get("devices") or 1
        if n > 1:
            factor = load_device(used).colocated_devices_factor if used else 0.0
            if predicted is not None and used and factor > 0:
                predicted = colocated_step(predicted, n, used)
                notes.append(
                    f"its {n} devices run in this one process on the same cores: the "
                    f"measured step holds all of their work, predicted_seconds {n} x "
                    f"{factor:g} (the {used} preset's colocated_devices_factor) x one "
                    "device's, plus one step overhead"
                )
            else:
                notes.append(
                    f"its {n} devices run in this one process on the same cores: the "
                    "measured step holds all of their work, predicted_seconds one device's"
                )
    ref_run = None
    if reference:
        theirs = records[1]
        ref_pred, _, _ = _predicted(theirs.pop("final_text"), used)
        n = theirs.get("devices") or 1
        if ref_pred is not None and n > 1 and theirs.get("platform") == "cpu" and used:
            ref_pred = colocated_step(ref_pred, n, used)
        ref_run = {
            k: theirs.get(k)
            for k in (
                "step_seconds",
                "spread",
                "memory",
                "order_kept",
                "peak_bytes_in_use",
                "compile_seconds",
            )
        }
        ref_run["predicted_seconds"] = ref_pred
    return RunRecord(
        module=module,
        reference=reference,
        platform=mine["platform"],
        device_kind=mine["device_kind"],
        outputs_equal=mine.get("outputs_equal"),
        output_check=mine.get("output_check") or {},
        step_seconds=mine.get("step_seconds"),
        spread=mine.get("spread") or {},
        step_seconds_runs=mine.get("step_seconds_runs") or [],
        predicted_seconds=predicted,
        device=used or DEFAULT_DEVICE,
        order_kept=bool(mine.get("order_kept")),
        order_check=mine.get("order_check") or {},
        xla_order=mine.get("xla_order") or [],
        memory=mine.get("memory") or {},
        peak_bytes_in_use=mine.get("peak_bytes_in_use"),
        repeat=repeat,
        seed=seed,
        compile_seconds=mine.get("compile_seconds", 0.0),
        reference_run=ref_run,
        per_op=mine.get("per_op"),
        notes=notes,
    )
