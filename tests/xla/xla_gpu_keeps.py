"""Does XLA:GPU keep a schedule cpsched wrote? Compiles scheduled HLO modules for the GPU.

    python tests/xla/xla_gpu_keeps.py FILE.hlo[.gz]...   # one JSON line per file

Needs an NVIDIA GPU and jax's CUDA plugin. The work is ``cpsched/measure/xla_run.py``'s
(loaded by path: it needs jaxlib, not cpsched): the module goes to the plugin's PJRT C API as
an ``HloModuleProto`` with its schedule and ``run_backend_only``, so XLA:GPU skips its HLO
passes and keeps the schedule, and XLA's final module is read back. Per file:

- ``kept``: every instruction of the input that is still in XLA's final module appears in
  the same relative order in XLA's final sequence of that computation (XLA's post-scheduling
  passes may add instructions, e.g. command buffers, or drop dead ones: counted apart);
- XLA:GPU's buffer assignment of that order: ``temp_bytes`` (the preallocated temp buffer
  every run allocates), argument and output bytes (``PJRT_Executable_GetCompiledMemoryStats``).

Modules with several partitions compile on one GPU through the plugin's mock topology
(``enable_mock_nccl``, N hosts of one GPU). ``cpsched run`` and
``benchmarks/measure_gpu.py`` also run the modules; this only compiles them.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys

_ENGINE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "cpsched",
                       "measure", "xla_run.py")
_spec = importlib.util.spec_from_file_location("cpsched_xla_run", _ENGINE)
xr = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(xr)

_field = xr.protobuf_field


def compare(before: dict[str, list[str]], after: dict[str, list[str]]) -> dict:
    res = xr.compare_orders(before, after)
    return {k: res[k] for k in ("kept", "out_of_order", "dropped_by_xla", "added_by_xla")}


def check(plugin, clients: dict, path: str) -> dict:
    from jaxlib import _hlo

    text = xr.read_text(path)
    h = xr.header(text)
    devices = h["devices"]
    module = _hlo.hlo_module_from_text(text)
    if devices not in clients:
        clients[devices] = plugin.client(devices)
    res = plugin.compile_scheduled(clients[devices], module.as_serialized_hlo_module_proto(),
                                   xr.compile_options(h["replicas"], h["partitions"],
                                                      backend_only=True))
    optimized = res.pop("optimized")
    if res.pop("format") == "hlo_with_config":  # HloModuleProtoWithConfig: hlo_module is 1
        optimized = _field(optimized, 1)
    final = _hlo.HloModule.from_serialized_hlo_module_proto(optimized).to_string()
    return {"file": os.path.basename(path), "devices": devices,
            **compare(xr.sequences(text), xr.sequences(final)), **res}


def main(argv: list[str]) -> int:
    plugin = xr.Plugin()
    print(json.dumps({"plugin_api_version": plugin.version}), flush=True)
    clients: dict = {}
    bad = 0
    for path in argv:
        try:
            out = check(plugin, clients, path)
        except Exception as e:  # one line per file, whatever XLA says
            out = {"file": os.path.basename(path), "error": f"{type(e).__name__}: {e}"[:600]}
        bad += not out.get("kept", False)
        print(json.dumps(out), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
