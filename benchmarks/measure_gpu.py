"""XLA's, cp's and cp-overlap's orders of the corpus run on a GPU: step time, peak memory, outputs.

Two steps. ``prepare`` runs here (it needs cpsched and OR-Tools) and writes every order to
measure into ``benchmarks/measure_gpu/`` (gzip-compressed modules and ``plan.json``);
``run`` needs only jax (with its CUDA plugin) and numpy, reads that folder, and measures:

    python benchmarks/measure_gpu.py prepare [--time-limit 10]
    python3 -u benchmarks/measure_gpu.py run --out $OUT [--budget 300]
    python benchmarks/measure_gpu.py table $OUT/measure_gpu.jsonl      # markdown rows

``run`` imports nothing from cpsched: it loads ``cpsched/measure/xla_run.py`` (standard
library at module level) by path and runs it in a child process, so that an XLA abort costs
one module, not the run. For every module of ``models/hlo/gpu/`` (XLA:GPU's own optimized
modules of the corpus and bundled programs), in the orders of the plan (``xla``: XLA:GPU's
own; ``cp``: ``cpsched schedule`` defaults, the min-peak order; ``cp-overlap``: ``--objective
overlap --device h200 --budget B`` at B = XLA's order's peak, for modules with async
pairs), it compiles the module with its schedule through the CUDA plugin's PJRT C API
(``run_backend_only``), loads it into a fresh jax client, feeds seeded random inputs, checks
the outputs against XLA's order's, times ``--repeat`` steps, reads the allocator's peak and
collects per-op times from the profiler. Modules for 4 or 8 devices are compiled (memory
stats, order kept) but not run. Single-device modules run first, smallest first; ``run``
stops starting modules when ``--budget`` seconds are spent and kills the child at the
budget, so the whole command ends within about ``budget + 10`` seconds. A second run with
``--resume [FIRST.jsonl]`` (default: ``--out``'s own file) measures only the modules the
first left out.

Output, under ``--out``: ``measure_gpu.jsonl`` (one JSON object per line, written as it goes)
and ``measure_gpu.log`` (the progress lines also printed). The JSONL lines:

- ``{"kind": "run", "started", "python", "jax", "jaxlib", "argv", "budget_seconds",
  "repeat", "warmup", "profile_runs", "seed", "plan": {"made", "time_limit", ...},
  "nvidia_smi"}``; then ``{"kind": "backend", "backend", "device_kind"}`` from the child;
- per module ``{"kind": "module", "name", "devices", "async_starts", "seconds",
  "orders": {LABEL: RECORD}}`` where LABEL is ``xla``, ``cp`` or ``cp-overlap`` and RECORD
  is ``xla_run.measure``'s record plus the plan's ``predicted`` figures for that order:

  - ``error`` (only when it failed: one line), ``file``, ``module``, ``devices``,
    ``compile_seconds``;
  - ``memory``: ``PJRT_Executable_GetCompiledMemoryStats`` in bytes (``temp_bytes``,
    ``argument_bytes``, ``output_bytes``, ``alias_bytes``, ``code_bytes``, host ones);
  - ``order_kept`` (bool) and ``order_check`` (``matched``, ``input_instructions``,
    ``out_of_order``, ``dropped_by_xla``, ``added_by_xla``); ``xla_order``: the entry
    computation's instruction names in the order XLA's final module runs them;
  - ``executed``; when run: ``step_seconds`` (median of ``step_seconds_runs``, one
    synchronised execution each, inputs already on the device), ``spread`` (min, q1, q3,
    max), ``first_run_seconds``, ``outputs`` (count), ``outputs_equal`` (against ``xla``;
    ``output_check`` gives ``worst_ratio``: the largest |difference| over its allowed
    tolerance, or ``reason``), ``peak_bytes_in_use`` (the allocator of a client made for
    this one module; ``peak_scope`` says so) and ``allocator`` (all its counters);
    ``per_op`` (the ``xla`` order only: the orders of one program run the same kernels):
    ``{"planes", "stat_keys", "ops": {NAME: [seconds per step, events per step]}}`` from
    ``profile_runs`` profiled steps (kernels named by ``hlo_op`` where the tracer gives it,
    else by kernel name: XLA names a fusion's kernel after the fusion);
    when not run: ``not_run`` (why);
  - ``predicted``: cpsched's figures for the order as written (``peak_bytes``: max-live;
    ``makespan_seconds`` and ``exposed_comm_seconds`` per device preset, ``h100`` and
    ``h200``); XLA:GPU keeps the order, so this is the order it ran (``order_kept``);
- ``{"kind": "module", "name", "error"}`` for a module whose child process died (with the
  last lines it wrote), or ``"skipped"`` for one the budget left out;
- last ``{"kind": "end", "seconds", "modules_done", "modules_failed", "modules_skipped",
  "stopped_by_budget"}``.

Trying it on a CPU: ``run --platform cpu --plan DIR/plan.json`` with a plan that
``prepare --source models/hlo/corpus --dest DIR`` made from XLA:CPU modules (XLA:GPU's
modules call cuBLAS and cuDNN, which XLA:CPU has not); XLA:CPU recompiles every module, so
there ``order_kept`` is false and the orders' times differ only by noise.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLAN_DIR = os.path.join(REPO, "benchmarks", "measure_gpu")
ENGINE = os.path.join(REPO, "cpsched", "measure", "xla_run.py")
PRESETS = ("h100", "h200")
LABELS = ("xla", "cp", "cp-overlap")


def _rel(path: str) -> str:
    return os.path.relpath(path, REPO)


# -- prepare (here: needs cpsched) ----------------------------------------------------------


def _predicted(path: str) -> dict:
    """cpsched's figures for the module's own order: max-live peak, and the timeline
    model's step time and exposed communication per preset."""
    from cpsched.analysis.memory import simulate
    from cpsched.core.scenarios import static
    from cpsched.cost.timeline import timeline
    from cpsched.readers import read_graph

    g = read_graph(path)
    order = g.default_order()
    out = {"peak_bytes": int(simulate(g, order, static()).peak[0]),
           "makespan_seconds": {}, "exposed_comm_seconds": {}}
    for preset in PRESETS:
        tl = timeline(g, order, device=preset)
        out["makespan_seconds"][preset] = float(tl.makespan[0])
        out["exposed_comm_seconds"][preset] = float(tl.exposed_comm[0])
    return out


def _schedule(src: str, dst_gz: str, time_limit: float, extra: list[str]) -> dict:
    """``cpsched schedule`` into a gzip-compressed module; its JSON report's summary."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "order.hlo")
        p = subprocess.run([sys.executable, "-m", "cpsched", "schedule", src, "-o", out,
                            "--time-limit", str(time_limit), "--json", *extra],
                           capture_output=True, text=True)
        if p.returncode != 0 or not os.path.exists(out):
            return {"error": (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]}
        with open(out, "rb") as f, gzip.open(dst_gz, "wb", compresslevel=9) as g:
            shutil.copyfileobj(f, g)
        report = json.loads(p.stdout)
        keep = ("method", "objective", "status", "engine", "peak_bytes", "lower_bound_bytes",
                "gap", "input_peak_bytes", "makespan", "exposed_comm", "budget", "device",
                "message", "seconds")
        return {k: report[k] for k in keep if k in report}


def prepare(args) -> int:
    source = os.path.abspath(args.source)
    dest = os.path.abspath(args.dest)
    os.makedirs(dest, exist_ok=True)
    manifest_path = os.path.join(source, "manifest.json")
    with open(manifest_path) as f:
        manifest = json.load(f)
    programs = manifest.get("programs") or manifest.get("variants") or {}
    only = {n for n in args.only.split(",") if n}
    modules = []
    for name in sorted(programs):
        info = programs[name]
        src = os.path.join(source, f"{name}.hlo.gz")
        if (only and name not in only) or not os.path.exists(src):
            continue
        t0 = time.perf_counter()
        xla = {"path": _rel(src), "predicted": _predicted(src)}
        orders = {"xla": xla}
        runs = [("cp", [])]
        default = info.get("variants", {}).get("default", {})
        overlap = ["--objective", "overlap", "--device", "h200",
                   "--budget", str(xla["predicted"]["peak_bytes"])]
        if info.get("async_starts"):
            runs.append(("cp-overlap", overlap))
        elif default.get("collectives"):  # XLA:CPU's sync collectives: split them first
            runs.append(("cp-overlap", overlap + ["--async-collectives"]))
        for label, extra in runs:
            dst = os.path.join(dest, f"{name}.{label}.hlo.gz")
            report = _schedule(src, dst, args.time_limit, extra)
            entry: dict = {"schedule": report}
            if "error" not in report:
                entry["path"] = _rel(dst)
                entry["predicted"] = _predicted(dst)
            orders[label] = entry
        modules.append({"name": name, "devices": info.get("devices", 1),
                        "async_starts": info.get("async_starts", 0),
                        "instructions": info.get("instructions", default.get("instructions")),
                        "orders": orders})
        print(f"{name}: " + ", ".join(
            f"{k} {'error: ' + v['schedule']['error'] if 'error' in v.get('schedule', {}) else 'ok'}"
            for k, v in orders.items()) + f" ({time.perf_counter() - t0:.0f} s)", flush=True)
    from cpsched.version import __version__

    plan = {"about": "orders to measure with benchmarks/measure_gpu.py run",
            "made": time.strftime("%Y-%m-%d"), "cpsched": __version__,
            "source": _rel(source), "time_limit": args.time_limit,
            "command": "python benchmarks/measure_gpu.py prepare " + " ".join(args.argv),
            "modules": modules}
    with open(os.path.join(dest, "plan.json"), "w") as f:
        json.dump(plan, f, indent=1)
    print(f"wrote {len(modules)} modules' orders to {_rel(dest)}", flush=True)
    return 0


# -- run (the GPU machine: jax and numpy only) ----------------------------------------------


class Log:
    def __init__(self, path: str):
        self.f = open(path, "a", buffering=1)
        self.t0 = time.perf_counter()

    def __call__(self, msg: str) -> None:
        line = f"[{time.perf_counter() - self.t0:6.1f} s] {msg}"
        print(line, flush=True)
        self.f.write(line + "\n")


def _versions() -> dict:
    out = {"python": sys.version.split()[0]}
    for mod in ("jax", "jaxlib"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception as e:  # reported, not fatal: the child says what it found
            out[mod] = f"unavailable: {e}"
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,clocks.max.sm,"
                              "driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        out["nvidia_smi"] = smi.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        out["nvidia_smi"] = None
    return out


def _reader(stream, q: queue.Queue) -> None:
    for line in stream:
        q.put(line)
    q.put(None)


def run(args) -> int:
    t_start = time.perf_counter()
    deadline = t_start + args.budget
    os.makedirs(args.out, exist_ok=True)
    out_path = os.path.join(args.out, "measure_gpu.jsonl")
    log = Log(os.path.join(args.out, "measure_gpu.log"))
    with open(args.plan) as f:
        plan = json.load(f)
    only = {n for n in args.only.split(",") if n}
    measured = set()
    previous = out_path if args.resume == "" else args.resume
    if previous and os.path.exists(previous):  # a second run adds the modules still missing
        with open(previous) as f:
            for line in f:
                with contextlib.suppress(ValueError):
                    rec = json.loads(line)
                    if rec.get("kind") == "module" and "orders" in rec:
                        measured.add(rec["name"])
    modules = [m for m in plan["modules"]
               if (not only or m["name"] in only) and m["name"] not in measured]
    # single-device modules (the ones that run) first, smallest first
    modules.sort(key=lambda m: (m["devices"] > 1, m.get("instructions") or 0, m["name"]))
    groups, labels = [], []
    for m in modules:
        present = [lb for lb in LABELS if m["orders"].get(lb, {}).get("path")]
        groups.append({"paths": [os.path.join(REPO, m["orders"][lb]["path"]) for lb in present],
                       "reference": 0})
        labels.append(present)
    job = {"platform": args.platform, "groups": groups, "repeat": args.repeat,
           "warmup": args.warmup, "seed": args.seed, "profile_runs": args.profile_runs,
           "profile_reference_only": True, "ahead": args.ahead}
    out = open(out_path, "a", buffering=1)

    def emit(obj: dict) -> None:
        out.write(json.dumps(obj) + "\n")

    emit({"kind": "run", "started": time.strftime("%Y-%m-%d %H:%M:%S"), **_versions(),
          "argv": sys.argv[1:], "budget_seconds": args.budget, "repeat": args.repeat,
          "warmup": args.warmup, "profile_runs": args.profile_runs, "seed": args.seed,
          "xla_flags": args.xla_flags if args.platform != "cpu" else "",
          "plan": {k: plan.get(k) for k in ("made", "cpsched", "source", "time_limit",
                                            "command")}})
    log(f"{len(groups)} modules, {sum(len(g['paths']) for g in groups)} orders; budget "
        f"{args.budget:.0f} s; output {os.path.basename(out_path)}"
        + (f"; {len(measured)} measured before, left out" if measured else ""))
    env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false", TF_CPP_MIN_LOG_LEVEL="2",
               PYTHONUNBUFFERED="1")
    if args.platform == "cpu":
        env["JAX_PLATFORMS"] = "cpu"
    elif args.xla_flags:
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " " + args.xla_flags).strip()
    done: set[int] = set()
    recorded: set[int] = set()  # modules with a line of their own
    fatal = ""
    failed = 0
    stopped = False
    tmp = tempfile.mkdtemp(prefix="measure_gpu_")
    next_group = 0
    while next_group < len(groups) and not stopped:
        if deadline - time.perf_counter() < args.min_start:
            stopped = True
            break
        job["skip"] = next_group
        job_path = os.path.join(tmp, "job.json")
        with open(job_path, "w") as f:
            json.dump(job, f)
        err_path = os.path.join(tmp, f"stderr.{next_group}.txt")
        err = open(err_path, "w")
        child = subprocess.Popen([args.python, "-u", ENGINE, "worker", job_path],
                                 stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        q: queue.Queue = queue.Queue()
        threading.Thread(target=_reader, args=(child.stdout, q), daemon=True).start()
        current, t_group = None, time.perf_counter()
        while True:
            left = deadline - time.perf_counter()
            try:
                line = q.get(timeout=max(left, 0.01))
            except queue.Empty:
                line = "TIMEOUT"
            if line == "TIMEOUT":
                stopped = True
                child.kill()
                if current is not None:
                    m = modules[current]
                    emit({"kind": "module", "name": m["name"], "devices": m["devices"],
                          "error": "stopped: the time budget ran out while it was measured"})
                    log(f"{m['name']}: stopped by the time budget")
                    recorded.add(current)
                    next_group = current + 1
                break
            if line is None:  # the child ended
                child.wait()
                if current is not None:  # it died on this module
                    m = modules[current]
                    with open(err_path) as f:
                        tail = [ln.strip() for ln in f.read().splitlines() if ln.strip()][-6:]
                    emit({"kind": "module", "name": m["name"], "devices": m["devices"],
                          "error": f"the child process died (exit {child.returncode})",
                          "stderr_tail": tail})
                    log(f"{m['name']}: child died (exit {child.returncode}): "
                        f"{tail[-1] if tail else ''}")
                    failed += 1
                    recorded.add(current)
                    next_group = current + 1
                else:
                    next_group = len(groups)
                    if child.returncode:
                        with open(err_path) as f:
                            tail = f.read().strip().splitlines()[-6:]
                        log(f"child exited {child.returncode}: {' | '.join(tail)}")
                        emit({"kind": "fatal", "exit": child.returncode, "stderr_tail": tail})
                        fatal = fatal or f"the child exited {child.returncode} before it"
                break
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if "backend" in msg:
                emit({"kind": "backend", **msg})
                log(f"child ready: {msg['backend']} ({msg['device_kind']})")
            elif "fatal" in msg:
                emit({"kind": "fatal", "error": msg["fatal"]})
                log(f"fatal: {msg['fatal']}")
                fatal = msg["fatal"]
            elif "started" in msg:
                current, t_group = msg["started"], time.perf_counter()
                log(f"{modules[current]['name']}: {', '.join(labels[current])} ...")
            elif "group" in msg:
                i = msg["group"]
                m = modules[i]
                orders = {}
                for lb, rec in zip(labels[i], msg["records"]):
                    rec["predicted"] = m["orders"][lb].get("predicted")
                    orders[lb] = rec
                emit({"kind": "module", "name": m["name"], "devices": m["devices"],
                      "async_starts": m.get("async_starts", 0),
                      "seconds": round(time.perf_counter() - t_group, 2), "orders": orders})
                done.add(i)
                recorded.add(i)
                log(f"{m['name']}: " + "; ".join(_summary(lb, r) for lb, r in orders.items()))
                current = None
                next_group = i + 1
        err.close()
    skipped = [modules[i]["name"] for i in range(len(groups)) if i not in recorded]
    why = "the time budget ran out first" if stopped else (fatal or "the child ended first")
    for name in skipped:
        emit({"kind": "module", "name": name, "skipped": why})
    seconds = round(time.perf_counter() - t_start, 1)
    emit({"kind": "end", "seconds": seconds, "modules_done": len(done),
          "modules_failed": failed, "modules_skipped": len(skipped),
          "stopped_by_budget": stopped})
    log(f"done in {seconds} s: {len(done)} modules measured, {failed} failed, "
        f"{len(skipped)} not measured ({why if skipped else '-'})")
    out.close()
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if fatal else 0


def _summary(label: str, r: dict) -> str:
    if "error" in r:
        return f"{label} error: {r['error'][:120]}"
    parts = [label, "kept" if r.get("order_kept") else "NOT kept"]
    if r.get("memory", {}).get("temp_bytes") is not None:
        parts.append(f"temp {r['memory']['temp_bytes'] / 2**20:.2f} MiB")
    if r.get("executed"):
        parts.append(f"step {r['step_seconds'] * 1e3:.3f} ms")
        if r.get("peak_bytes_in_use"):
            parts.append(f"peak {r['peak_bytes_in_use'] / 2**20:.2f} MiB")
        parts.append("outputs equal" if r.get("outputs_equal") else
                     f"OUTPUTS DIFFER ({r.get('output_check', {}).get('reason', '')})"
                     if r.get("outputs_equal") is False else "outputs unchecked")
    else:
        parts.append("not run")
    return " ".join(parts)


# -- table (anywhere: json only) -----------------------------------------------------------


def _mib(b) -> str:
    return f"{b / 2**20:.2f}" if isinstance(b, (int, float)) else "-"


def _ms(s) -> str:
    return f"{s * 1e3:.3f}" if isinstance(s, (int, float)) else "-"


def table(args) -> int:
    """Markdown rows of a run's JSONL: per module and order, the measured step time beside
    the predicted one, XLA's memory figures beside cpsched's peak."""
    runs, modules = [], {}
    with open(args.results) as f:
        for line in f:
            rec = json.loads(line)
            if rec.get("kind") == "run":
                runs.append(rec)
            elif rec.get("kind") == "module":
                modules[rec["name"]] = rec  # a later run's line wins
    preset = args.preset
    head = runs[-1] if runs else {}
    out = [f"Measured: jax {head.get('jax', '?')}, {head.get('nvidia_smi') or 'device ?'}; "
           f"{head.get('repeat', '?')} timed steps per order (median), predictions with the "
           f"`{preset}` preset for the order as written (XLA:GPU keeps it: `kept`).", "",
           "| program | devices | order | kept | outputs | step ms (q1-q3) | predicted ms | "
           "predicted / measured | XLA temp MiB | peak in use MiB | cpsched peak MiB |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    within, counted, moves = 0, 0, []
    for name in sorted(modules):
        m = modules[name]
        if "orders" not in m:
            why = m.get("error") or m.get("skipped") or "?"
            out.append(f"| {name} | {m.get('devices', '-')} | - | - | {why} | | | | | | |")
            continue
        for label, r in m["orders"].items():
            pred = (r.get("predicted") or {}).get("makespan_seconds", {}).get(preset)
            step = r.get("step_seconds")
            ratio = f"{pred / step:.2f}" if pred and step else "-"
            if label == "xla" and pred and step:
                counted += 1
                within += abs(pred / step - 1) <= 0.15
            sp = r.get("spread") or {}
            outputs = ("equal" if r.get("outputs_equal") else "DIFFER"
                       if r.get("outputs_equal") is False else "-")
            if "error" in r:
                outputs = "error: " + r["error"][:80]
            step_text = (f"{_ms(step)} ({_ms(sp.get('q1'))}-{_ms(sp.get('q3'))})"
                         if step else (r.get("not_run", "-")[:40] if not step else "-"))
            kept = "yes" if r.get("order_kept") else ("no" if "order_kept" in r else "-")
            out.append(f"| {name} | {m['devices']} | {label} | {kept} | {outputs} | "
                       f"{step_text} | {_ms(pred)} | {ratio} | "
                       f"{_mib((r.get('memory') or {}).get('temp_bytes'))} | "
                       f"{_mib(r.get('peak_bytes_in_use'))} | "
                       f"{_mib((r.get('predicted') or {}).get('peak_bytes'))} |")
        x, o = m["orders"].get("xla", {}), m["orders"].get("cp-overlap", {})
        px = (x.get("predicted") or {}).get("makespan_seconds", {}).get(preset)
        po = (o.get("predicted") or {}).get("makespan_seconds", {}).get(preset)
        if px and po and (px - po) / px > 0.05:
            sx, so = x.get("step_seconds"), o.get("step_seconds")
            moves.append(f"- {name}: cp-overlap predicted {100 * (px - po) / px:.1f} % faster; "
                         + (f"measured {100 * (sx - so) / sx:+.1f} %" if sx and so else
                            "not run on one GPU"))
    out += ["", f"XLA's order: predicted within 15 % of the measured median on {within} of "
            f"{counted} programs run (`{preset}` preset, not refitted)."]
    if moves:
        out += ["", "Where cp-overlap's predicted gain over XLA's order exceeds 5 %:", *moves]
    print("\n".join(out))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare", help="compute the orders to measure (needs cpsched)")
    p.add_argument("--source", default=os.path.join(REPO, "models", "hlo", "gpu"),
                   help="folder of NAME.hlo.gz modules and their manifest.json "
                        "(default: models/hlo/gpu)")
    p.add_argument("--dest", default=PLAN_DIR, help="output folder (default: %(default)s)")
    p.add_argument("--time-limit", type=float, default=10.0,
                   help="cpsched's solver seconds per order (default: 10)")
    p.add_argument("--only", default="", help="comma-separated module names")
    r = sub.add_parser("run", help="measure the plan's orders (needs jax and numpy only)")
    r.add_argument("--out", required=True, help="output folder")
    r.add_argument("--plan", default=os.path.join(PLAN_DIR, "plan.json"))
    r.add_argument("--budget", type=float, default=300.0,
                   help="wall-clock seconds for the whole run (default: 300)")
    r.add_argument("--repeat", type=int, default=20, help="timed steps per order (default: 20)")
    r.add_argument("--warmup", type=int, default=3, help="untimed steps first (default: 3)")
    r.add_argument("--profile-runs", type=int, default=3,
                   help="profiled steps per order for per-op times (default: 3; 0: none)")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--platform", default="gpu", choices=("gpu", "cpu", "auto"))
    r.add_argument("--ahead", type=int, default=0,
                   help="modules compiled ahead in background threads while one is timed "
                        "(default: 0: a compile beside the timed steps puts milliseconds "
                        "of noise into them)")
    r.add_argument("--xla-flags", default="--xla_gpu_enable_command_buffer=",
                   help="XLA_FLAGS for the child (default: %(default)s: no command buffers, "
                        "so that the profiler sees every kernel and a step is its kernels)")
    r.add_argument("--min-start", type=float, default=15.0,
                   help="start no child with fewer seconds left (default: 15)")
    r.add_argument("--only", default="", help="comma-separated module names")
    r.add_argument("--resume", nargs="?", const="", default=None, metavar="JSONL",
                   help="leave out the modules measured in an earlier run's JSONL (default "
                        "without a file: --out's measure_gpu.jsonl)")
    r.add_argument("--python", default=sys.executable, help="interpreter for the child")
    t = sub.add_parser("table", help="markdown rows of a run's measure_gpu.jsonl (anywhere)")
    t.add_argument("results", help="measure_gpu.jsonl")
    t.add_argument("--preset", default="h200", help="which prediction (default: h200)")
    a = ap.parse_args(argv)
    a.argv = argv[1:]
    return {"prepare": prepare, "run": run, "table": table}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
