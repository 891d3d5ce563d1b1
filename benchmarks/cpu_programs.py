"""The corpus programs run on XLA:CPU with per-op profiles: what the ``cpu`` preset is fitted
from (``fit_cpu_preset.py``) and held to (``bench_measured.py``).

Each program (the bundled dumps in models/hlo/ and models/hlo/corpus/, XLA:CPU's
default-scheduler variant) is compiled by XLA:CPU (which fuses and schedules it again), run
``repeat`` timed steps on seeded inputs (median), then ``profile_runs`` profiled steps for
per-op times; its record keeps XLA's final module, which cpsched reads back to predict the
step time of the order XLA ran. One child process per program (``cpsched.measure``).
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from cpsched.core.scenarios import static  # noqa: E402
from cpsched.cost.model import load_device  # noqa: E402
from cpsched.cost.timeline import timeline  # noqa: E402
from cpsched.measure import jax_python, measure_group  # noqa: E402
from cpsched.measure.fit import op_samples  # noqa: E402
from cpsched.readers import read_graph  # noqa: E402


def sources() -> list[Path]:
    """The bundled dumps (demo.hlo is a copy of sharded_dp_tp: left out) and the corpus,
    XLA:CPU's default-scheduler variant."""
    out = [
        p
        for p in sorted((REPO / "models" / "hlo").glob("*.hlo"))
        if ".memopt." not in p.name and p.name != "demo.hlo"
    ]
    out += [
        p
        for p in sorted((REPO / "models" / "hlo" / "corpus").glob("*.hlo.gz"))
        if ".memopt." not in p.name
    ]
    return out


def program_name(p: Path) -> str:
    return p.name.removesuffix(".gz").removesuffix(".hlo")


def environment(python: str) -> dict:
    jax_version = subprocess.run(
        [python, "-c", "import jax; print(jax.__version__)"], capture_output=True, text=True
    ).stdout.strip()
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = None
    return {
        "jax": jax_version,
        "machine": f"{platform.machine()} {os.cpu_count()} cores",
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "load_1min": load,
    }


def final_graph(final_text: str):
    """cpsched's graph of XLA's final module (its entry computation, in the order run)."""
    with tempfile.TemporaryDirectory(prefix="cpu-programs-") as tmp:
        path = os.path.join(tmp, "final.hlo")
        with open(path, "w") as f:
            f.write(final_text)
        return read_graph(path)


def predict(graph, device) -> float:
    """The timeline model's step time, in seconds, of the graph's own order."""
    dev = load_device(device)
    tl = timeline(graph, graph.default_order(), device=dev, scenarios=static())
    return float(tl.makespan[0]) * dev.seconds_per_unit


def predict_step(row: dict, device) -> float:
    """The predicted step of a measured program on this host: the timeline's step for one
    device; for a module of N devices, which XLA:CPU runs as N devices in one process on
    the same cores, ``N * colocated_devices_factor`` times one device's work plus one step
    overhead (``cpsched.measure.run.colocated_step``, as ``cpsched run`` reports it)."""
    from cpsched.measure.run import colocated_step

    dev = load_device(device)
    return colocated_step(predict(row["_graph"], dev), row.get("devices", 1), dev)


def measure(src: Path, python: str, repeat: int, profile_runs: int) -> dict:
    """One program's record: step times, per-op samples, and its final graph (``_graph``,
    not serialised)."""
    name = program_name(src)
    row: dict = {"program": name, "file": str(src.relative_to(REPO))}
    t0 = time.perf_counter()
    try:
        rec = measure_group(
            [str(src)],
            reference=None,
            repeat=repeat,
            platform="cpu",
            python=python,
            profile_runs=profile_runs,
            final_text=True,
        )[0]
    except Exception as e:  # the child died: this program is not measured
        row["error"] = f"child process: {e}"
        return row
    row["seconds"] = round(time.perf_counter() - t0, 1)
    if "error" in rec:
        row["error"] = rec["error"]
        return row
    row["devices"] = rec.get("devices", 1)
    row["step_seconds"] = rec["step_seconds"]
    row["spread"] = rec.get("spread")
    row["step_seconds_runs"] = rec.get("step_seconds_runs")
    per_op = rec.get("per_op") or {}
    if "error" in per_op:
        row["profile_error"] = per_op["error"]
    row["profiled_seconds"] = sum(v[0] for v in (per_op.get("ops") or {}).values())
    row["final_text"] = rec["final_text"]
    g = final_graph(rec["final_text"])
    row["_graph"] = g
    row["samples"] = [s.__dict__ for s in op_samples(g, per_op, name, row["devices"])]
    return row


def measure_all(only: set[str], repeat: int, profile_runs: int, log=print) -> tuple[list, dict]:
    python = jax_python()
    if python is None:
        raise SystemExit("needs jax: run from a Python with jax, or set CPSCHED_JAX_PYTHON")
    env = environment(python)
    rows = []
    for src in sources():
        if only and program_name(src) not in only:
            continue
        row = measure(src, python, repeat, profile_runs)
        rows.append(row)
        if "error" in row:
            log(f"{row['program']}: {row['error']}")
        else:
            log(
                f"{row['program']}: step {row['step_seconds'] * 1e3:.3f} ms, "
                f"{len(row['samples'])} ops profiled ({row['seconds']} s)"
            )
    try:
        env["load_1min_end"] = os.getloadavg()[0]
    except OSError:
        pass
    return rows, env


def save_raw(path: str, rows: list[dict], env: dict) -> None:
    """The measurements (steps, per-op samples, XLA's final modules) as gzip JSON, so that
    the fit and the table can be made again without measuring (``load_raw``)."""
    import gzip
    import json

    keep = [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]
    with gzip.open(path, "wt") as f:
        json.dump({"env": env, "rows": keep}, f)


def load_raw(path: str) -> tuple[list[dict], dict]:
    import gzip
    import json

    with gzip.open(path, "rt") as f:
        data = json.load(f)
    for r in data["rows"]:
        if "final_text" in r:
            r["_graph"] = final_graph(r["final_text"])
    return data["rows"], data["env"]


# -- the fit ---------------------------------------------------------------------------------

# The keys the fit does not set. XLA:CPU's collectives between the devices of one process
# are memory copies: their bandwidth is set to the fitted memory bandwidth after the fit.
BASE = {
    "name": "cpu",
    "default_dtype": "fp32",
    "nvlink_latency_us": 0.0,
    "network_latency_us": 0.0,
    "pcie_latency_us": 0.0,
    "collective_launch_us": 0.0,
    "gpus_per_node": 1024,
}
BASE_SOURCES = {
    "nvlink_gbps": "not fitted: XLA:CPU's collectives between the devices of one process are "
    "memory copies, so the fitted memory bandwidth",
    "network_gbps": "as nvlink_gbps (every device of XLA:CPU is in one process)",
    "pcie_gbps": "as nvlink_gbps (host memory is the device's memory)",
    "nvlink_latency_us": "not fitted, 0: a collective between XLA:CPU's devices in one "
    "process is timed as the memory copy of its bytes; what its rendezvous costs beyond "
    "that is in colocated_devices_factor (fitted on the multi-device programs' steps)",
    "network_latency_us": "as nvlink_latency_us",
    "pcie_latency_us": "as nvlink_latency_us (a host copy is a memory copy)",
    "collective_launch_us": "as nvlink_latency_us",
    "gpus_per_node": "every XLA:CPU device is in one process: never the network class",
}


def single_device(row: dict) -> bool:
    return "error" not in row and row.get("devices", 1) == 1


def sum_program(row: dict):
    """The row's ``SumProgram`` (``cpsched.measure.fit``), computed once and kept."""
    from cpsched.measure.fit import Sample, sum_program

    if "_sum" not in row:
        row["_sum"] = sum_program(
            row["_graph"],
            [Sample(**s) for s in row["samples"]],
            row["program"],
            row["step_seconds"],
            row.get("devices", 1),
        )
    return row["_sum"]


def mapped_programs(rows: list[dict]) -> list[str]:
    """The programs whose modules define buffers that the ``mapped_memory_gbps`` term
    charges (``mapped_buffer_mib`` and up): the only ones that fit that figure."""
    from cpsched.measure.fit import SUM_TERMS

    k = SUM_TERMS.index("mapped_memory_gbps")
    return [
        r["program"]
        for r in rows
        if "error" not in r and "_graph" in r and sum_program(r).step_terms[k] >= 1
    ]


def fit_device(rows: list[dict], exclude: str | None = None) -> tuple[dict, object]:
    """A ``cpu`` device mapping fitted on ``rows`` (all but ``exclude``): the additive
    per-class op time (``op_time = "sum"``: a launch, a byte moved, a matmul flop, a flop
    outside matmuls, a byte of a large buffer defined) and the step overhead on the
    single-device programs' profiled ops and steps together, then the colocated devices'
    factor on the multi-device programs' steps (``cpsched.measure.fit.fit_sum``)."""
    from cpsched.measure.fit import fit_sum

    use = [r for r in rows if "error" not in r and r["program"] != exclude]
    sf = fit_sum(sum_program(r) for r in use)
    dev = {**BASE, **sf.file_keys()}
    for key in ("nvlink_gbps", "network_gbps", "pcie_gbps"):
        dev[key] = dev["hbm_gbps"]
    return dev, sf


def shown_args(argv: list[str], hidden: tuple[str, ...]) -> list[str]:
    """The command's arguments without the options (and their values) in ``hidden``: those
    that only say where results go."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in hidden:
            skip = True
        elif not a.startswith(tuple(h + "=" for h in hidden)):
            out.append(a)
    return out
