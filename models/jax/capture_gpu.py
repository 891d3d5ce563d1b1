"""Capture XLA:GPU's own schedules of the corpus programs into ``models/hlo/gpu/``.

Needs a machine with an NVIDIA GPU and jax with its CUDA plugin; nothing else in cpsched
needs one. Every program of ``corpus_programs.py`` (and the bundled programs of
``capture.py``) is compiled by XLA:GPU in its own child process and the jitted step's
module is kept as XLA wrote it after all of its passes: fused, with async collectives
(``*-start`` / ``*-done``) placed by XLA:GPU's latency-hiding scheduler, ``is_scheduled=true``.
These are the baselines cpsched is compared against on GPU, and its reader's stress test.

Programs written for 4 or 8 devices run on one GPU through jax's mock topology
(``jax_mock_gpu_topology=1xNx1``: N hosts of one GPU each, NCCL mocked), which compiles
exactly the module an N-GPU job would get; its collectives then run as no-ops, so only the
compilation matters here. From the repository root::

    python models/jax/capture_gpu.py [--only a,b] [--jobs 4] [--out models/hlo/gpu]

Per program it writes ``NAME.hlo.gz`` (``*gpu_after_optimizations.txt``) and
``NAME.buffer-assignment.txt.gz``, and a ``manifest.json`` with the device, versions, flags,
instruction and collective counts and XLA's buffer-assignment totals; a program XLA:GPU
could not compile is listed with its reason instead.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import capture as cpu_capture  # noqa: E402  (beside this script)

CHILD_SECONDS = 300
OUT_DIR = os.path.join(cpu_capture.HLO_DIR, "gpu")
KEEP = ((r"gpu_after_optimizations\.txt", ".hlo"),
        (r"gpu_after_optimizations-buffer-assignment\.txt", ".buffer-assignment.txt"))


def programs() -> dict[str, tuple[str, int, str]]:
    """name -> (builder, devices, description) for the corpus and the bundled programs."""
    from corpus_programs import CORPUS
    out = {n: (b, dev, desc) for n, (b, dev, _family, desc) in CORPUS.items()}
    for n, (b, needs8, extra, desc) in cpu_capture.PROGRAMS.items():
        if not extra:  # the .memopt twins differ only by an XLA:CPU flag
            out[n] = (b, 8 if needs8 else 1, desc)
    return out


def _global_device_put(jax) -> None:
    """Let the programs' ``jax.device_put(value, sharding)`` work with devices of other
    (mock) processes: each process makes the global array from the same host value, as a
    multi-process job does (``jax.make_array_from_callback``)."""
    import numpy as np

    plain = jax.device_put

    def put(x, device=None, *args, **kwargs):
        if isinstance(device, jax.sharding.Sharding) and not device.is_fully_addressable:
            def one(v):
                host = np.asarray(v)
                return jax.make_array_from_callback(host.shape, device, lambda i: host[i])
            return jax.tree.map(one, x)
        if device is not None and not isinstance(device, jax.sharding.Sharding) and not (
                hasattr(device, "platform")):
            return jax.tree.map(lambda v, s: put(v, s), x, device)
        return plain(x, device, *args, **kwargs)

    jax.device_put = put


def child(name: str) -> None:
    import jax
    import jaxlib

    builder, devices, _ = programs()[name]
    if devices > 1:  # before the first use of a backend
        jax.config.update("jax_mock_gpu_topology", f"1x{devices}x1")
        _global_device_put(jax)
    try:
        if hasattr(cpu_capture, builder):
            fn, args, fname = getattr(cpu_capture, builder)()
        else:
            import corpus_programs
            fn, args, fname = getattr(corpus_programs, builder)()
    except Exception as e:
        first = (str(e).strip().splitlines() or [""])[0][:300]
        print(json.dumps({"build_error": f"{type(e).__name__}: {first}"}))
        raise SystemExit(1) from None
    ran, why = True, ""
    try:
        if devices > 1:  # compiled only: the other (mock) processes never join a collective
            fn.lower(*args).compile()
            ran, why = False, "compiled only (mock devices)"
        else:
            jax.block_until_ready(fn(*args))
    except Exception as e:  # the dump is written once XLA has compiled it
        ran, why = False, f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
    dev = jax.devices()[0]
    print(json.dumps({"function": fname, "jax": jax.__version__,
                      "jaxlib": getattr(jaxlib, "__version__", jax.__version__),
                      "devices": len(jax.devices()), "device_kind": dev.device_kind,
                      "ran": ran, "run_error": why}))


def _pick(dump: str, function: str, suffix_re: str) -> str | None:
    pat = re.compile(r"module_\d+\.jit_" + re.escape(function) + r"\..*" + suffix_re + "$")
    hits = sorted(f for f in os.listdir(dump) if pat.match(f))
    return os.path.join(dump, hits[-1]) if hits else None


def capture_one(name: str, out_dir: str, extra_flags: list[str]) -> dict:
    _, devices, desc = programs()[name]
    dump = tempfile.mkdtemp(prefix=f"xla_gpu_{name}_")
    flags = ["--xla_dump_to=" + dump, "--xla_dump_hlo_as_text", *extra_flags]
    if devices > 1:
        # XLA:GPU shares autotuning results among a job's processes by default and would
        # wait for the mock ones forever; each tunes for itself here (same kernels)
        flags.append("--xla_gpu_shard_autotuning=false")
    env = dict(os.environ, XLA_FLAGS=" ".join(flags), JAX_PLATFORMS="cuda",
               XLA_PYTHON_CLIENT_PREALLOCATE="false")
    try:
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", name],
                              env=env, capture_output=True, text=True, timeout=CHILD_SECONDS)
    except subprocess.TimeoutExpired:
        shutil.rmtree(dump, ignore_errors=True)
        return {"description": desc, "devices": devices,
                "error": f"no result in {CHILD_SECONDS} s"}
    entry: dict = {"description": desc, "devices": devices,
                   "xla_flags": [f for f in flags if not f.startswith("--xla_dump_to=")]
                   + ["--xla_dump_to=DIR"]}
    try:
        if proc.returncode:
            said = [ln for ln in proc.stdout.strip().splitlines() if "build_error" in ln]
            if said:
                entry["error"] = json.loads(said[-1])["build_error"]
            else:
                tail = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()][-1:]
                entry["error"] = f"child exit {proc.returncode}: {tail[0][:300] if tail else ''}"
            return entry
        info = json.loads(proc.stdout.strip().splitlines()[-1])
        entry.update(info)
        files, texts = [], {}
        for suffix_re, ext in KEEP:
            src = _pick(dump, info["function"], suffix_re)
            if src is None:
                entry["error"] = f"XLA wrote no *{suffix_re}"
                return entry
            with open(src) as f:
                texts[ext] = cpu_capture.sanitize(f.read())
            cpu_capture._write_gz(os.path.join(out_dir, name + ext + ".gz"), texts[ext])
            files.append(name + ext + ".gz")
        entry["files"] = files
        summary = cpu_capture.module_summary(texts[".hlo"])
        entry["instructions"] = summary["instructions"]
        entry["entry_instructions"] = summary["entry_instructions"]
        entry["control_flow"] = summary["control_flow"]
        entry["async_starts"] = len(re.findall(r"\s[a-z\-]*-start\(", texts[".hlo"]))
        entry["xla_memory"] = cpu_capture.buffer_assignment_numbers(
            texts[".buffer-assignment.txt"])
        return entry
    finally:
        shutil.rmtree(dump, ignore_errors=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=OUT_DIR)
    ap.add_argument("--only", default="", help="comma-separated program names")
    ap.add_argument("--jobs", type=int, default=4, help="programs compiled at once")
    ap.add_argument("--xla-flag", action="append", default=[],
                    help="an extra XLA flag for every program (repeatable)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        child(a.child)
        return
    names = [n for n in a.only.split(",") if n] or sorted(programs())
    os.makedirs(a.out, exist_ok=True)
    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        results = dict(zip(names, pool.map(lambda n: capture_one(n, a.out, a.xla_flag),
                                           names)))
    for n, e in results.items():
        state = e.get("error") or (f"{e['instructions']} instructions, "
                                   f"{e['async_starts']} async starts")
        print(f"{n}: {state}", file=sys.stderr)
    ok = [e for e in results.values() if "error" not in e]
    manifest = {
        "about": "XLA:GPU's optimized, scheduled modules of the corpus programs, written "
                 "by models/jax/capture_gpu.py. Files are gzip-compressed text.",
        "device_kind": ok[0]["device_kind"] if ok else None,
        "jax": ok[0]["jax"] if ok else None, "jaxlib": ok[0]["jaxlib"] if ok else None,
        "programs": dict(sorted(results.items()))}
    with open(os.path.join(a.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
