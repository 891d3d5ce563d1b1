"""Does XLA:GPU keep a schedule cpsched wrote? Compiles scheduled HLO modules for the GPU.

    python tests/xla/xla_gpu_keeps.py FILE.hlo[.gz]...   # one JSON line per file

Needs an NVIDIA GPU and jax's CUDA plugin (its PJRT C API library). jax itself compiles only
StableHLO, which carries no schedule, so this talks to the plugin's PJRT C API directly
(ctypes) and hands it the module as a serialized ``HloModuleProto`` (format ``"hlo"``) with
its ``schedule``, compiled with ``run_backend_only``: XLA:GPU then skips its HLO passes, and
its scheduling step keeps a module that already has a schedule, as XLA's own
``RunAndCompareNoHloPasses`` tests rely on. What it reports per file:

- ``kept``: every instruction of the input that is still in XLA's final module appears in
  the same relative order in XLA's final sequence of that computation (XLA's post-scheduling
  passes may add instructions, e.g. command buffers, or drop dead ones: counted apart);
- XLA:GPU's buffer assignment of that order: ``temp_bytes`` (the preallocated temp buffer
  every run allocates), argument and output bytes, as ``PJRT_Executable_GetCompiledMemoryStats``
  gives them.

Modules with several partitions compile on one GPU through the plugin's mock topology
(``enable_mock_nccl``, N hosts of one GPU), as ``capture_gpu.py`` does for the capture.
"""

from __future__ import annotations

import ctypes as C
import glob
import gzip
import json
import os
import re
import sys

# Indices of the function pointers used here in the PJRT_Api table (after its struct_size,
# extension_start and 24-byte version header); the table only ever grows at its end.
_FN = {"Error_Destroy": 0, "Error_Message": 1, "Plugin_Initialize": 3, "Client_Create": 10,
       "Client_Destroy": 11, "Client_Compile": 20, "Executable_Destroy": 40,
       "Executable_OptimizedProgram": 48, "LoadedExecutable_Destroy": 50,
       "LoadedExecutable_GetExecutable": 51, "Executable_GetCompiledMemoryStats": 96}
_PAD = 32  # spare 8-byte words after every argument struct: a newer plugin may read more


def _args(*fields):
    """An argument struct: struct_size, extension_start, the fields, spare room."""
    cls = type("Args", (C.Structure,), {"_fields_": [("struct_size", C.c_size_t),
                                                     ("extension_start", C.c_void_p),
                                                     *fields,
                                                     ("_spare", C.c_int64 * _PAD)]})
    return cls


class NamedValue(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("extension_start", C.c_void_p),
                ("name", C.c_char_p), ("name_size", C.c_size_t), ("type", C.c_int),
                ("value", C.c_int64), ("value_size", C.c_size_t)]


class Program(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("extension_start", C.c_void_p),
                ("code", C.c_void_p), ("code_size", C.c_size_t),
                ("format", C.c_char_p), ("format_size", C.c_size_t),
                ("_spare", C.c_int64 * _PAD)]


ErrorMessage = _args(("error", C.c_void_p), ("message", C.c_void_p),
                     ("message_size", C.c_size_t))
ErrorDestroy = _args(("error", C.c_void_p))
PluginInit = _args()
ClientCreate = _args(("create_options", C.c_void_p), ("num_options", C.c_size_t),
                     ("kv_get", C.c_void_p), ("kv_get_arg", C.c_void_p),
                     ("kv_put", C.c_void_p), ("kv_put_arg", C.c_void_p),
                     ("client", C.c_void_p), ("kv_try_get", C.c_void_p),
                     ("kv_try_get_arg", C.c_void_p))
ClientDestroy = _args(("client", C.c_void_p))
Compile = _args(("client", C.c_void_p), ("program", C.POINTER(Program)),
                ("compile_options", C.c_char_p), ("compile_options_size", C.c_size_t),
                ("executable", C.c_void_p))
GetExecutable = _args(("loaded", C.c_void_p), ("executable", C.c_void_p))
Optimized = _args(("executable", C.c_void_p), ("program", C.POINTER(Program)))
MemoryStats = _args(("executable", C.c_void_p),
                    *[(n, C.c_int64) for n in (
                        "code", "argument", "output", "alias", "temp", "host_code",
                        "host_argument", "host_output", "host_alias", "host_temp", "peak")])
ExecDestroy = _args(("executable", C.c_void_p))
LoadedDestroy = _args(("executable", C.c_void_p))


def _new(cls, **kw):
    a = cls(**kw)
    # A plugin checks struct_size >= its own struct's size: claim the spare room too.
    a.struct_size = C.sizeof(cls)
    return a


class PjrtError(RuntimeError):
    pass


class Plugin:
    """The CUDA plugin's PJRT C API: just what compiling a scheduled module needs."""

    def __init__(self, path: str | None = None):
        path = path or plugin_path()
        lib = C.CDLL(path)
        lib.GetPjrtApi.restype = C.c_void_p
        self.api = lib.GetPjrtApi()
        header = (C.c_size_t * 2).from_address(self.api)
        version = (C.c_int * 2).from_address(self.api + 16 + 16)
        self.version = (version[0], version[1])
        self.table_bytes = header[0]
        self._lib = lib
        self.call("Plugin_Initialize", _new(PluginInit))

    def _fn(self, name: str):
        offset = 16 + 24 + 8 * _FN[name]
        if offset + 8 > self.table_bytes:
            raise PjrtError(f"the plugin's API table has no {name}")
        ptr = C.c_void_p.from_address(self.api + offset).value
        return C.CFUNCTYPE(C.c_void_p, C.c_void_p)(ptr)

    def call(self, name: str, args) -> None:
        err = self._fn(name)(C.addressof(args))
        if err:
            m = _new(ErrorMessage, error=err)
            self._fn("Error_Message")(C.addressof(m))
            text = C.string_at(m.message, m.message_size).decode(errors="replace")
            self._fn("Error_Destroy")(C.addressof(_new(ErrorDestroy, error=err)))
            raise PjrtError(f"{name}: {text}")

    def client(self, devices: int = 1):
        opts = [("preallocate", 4, 0)]
        if devices > 1:
            opts += [("enable_mock_nccl", 4, 1), ("num_nodes", 1, devices),
                     ("mock_gpu_topology", 0, f"1x{devices}x1")]
        keep, arr = [], (NamedValue * len(opts))()
        for i, (name, typ, val) in enumerate(opts):
            nb = name.encode()
            keep.append(nb)
            arr[i].struct_size = C.sizeof(NamedValue)
            arr[i].name, arr[i].name_size, arr[i].type = nb, len(nb), typ
            if typ == 0:
                vb = C.c_char_p(val.encode())
                keep.append(vb)
                arr[i].value = C.cast(vb, C.c_void_p).value
                arr[i].value_size = len(val)
            else:
                arr[i].value, arr[i].value_size = int(val), 1
        args = _new(ClientCreate, create_options=C.addressof(arr), num_options=len(opts))
        self.call("Client_Create", args)
        return args.client

    def compile_scheduled(self, client, module_proto: bytes, options: bytes) -> dict:
        buf = C.create_string_buffer(module_proto, len(module_proto))
        fmt = b"hlo"
        prog = Program(code=C.addressof(buf), code_size=len(module_proto), format=fmt,
                       format_size=len(fmt))
        prog.struct_size = C.sizeof(Program)
        args = _new(Compile, client=client, program=C.pointer(prog),
                    compile_options=options, compile_options_size=len(options))
        self.call("Client_Compile", args)
        loaded = args.executable
        try:
            g = _new(GetExecutable, loaded=loaded)
            self.call("LoadedExecutable_GetExecutable", g)
            exe = g.executable
            try:
                out = Program(format=fmt, format_size=len(fmt))
                out.struct_size = C.sizeof(Program)
                o = _new(Optimized, executable=exe, program=C.pointer(out))
                self.call("Executable_OptimizedProgram", o)
                code = C.create_string_buffer(out.code_size)
                out.code = C.addressof(code)
                self.call("Executable_OptimizedProgram", o)
                stats = _new(MemoryStats, executable=exe)
                self.call("Executable_GetCompiledMemoryStats", stats)
                return {"optimized": code.raw[:out.code_size],
                        "format": C.string_at(out.format, out.format_size).decode(),
                        "temp_bytes": stats.temp, "argument_bytes": stats.argument,
                        "output_bytes": stats.output, "alias_bytes": stats.alias,
                        "code_bytes": stats.code}
            finally:
                self._fn("Executable_Destroy")(C.addressof(_new(ExecDestroy, executable=exe)))
        finally:
            self._fn("LoadedExecutable_Destroy")(
                C.addressof(_new(LoadedDestroy, executable=loaded)))


def _field(message: bytes, number: int) -> bytes:
    """The bytes of a length-delimited field of a serialized protobuf message."""

    def varint(i: int) -> tuple[int, int]:
        value = shift = 0
        while True:
            b = message[i]
            value |= (b & 0x7F) << shift
            i, shift = i + 1, shift + 7
            if b < 0x80:
                return value, i

    i = 0
    while i < len(message):
        key, i = varint(i)
        wire = key & 7
        if wire == 0:
            _, i = varint(i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            size, i = varint(i)
            if key >> 3 == number:
                return message[i:i + size]
            i += size
        else:
            raise ValueError(f"unexpected protobuf wire type {wire}")
    raise ValueError(f"no field {number}")


def plugin_path() -> str:
    import importlib.util

    for name in ("jax_plugins.xla_cuda13", "jax_plugins.xla_cuda12"):
        try:
            spec = importlib.util.find_spec(name)
        except ModuleNotFoundError:
            spec = None
        if spec and spec.submodule_search_locations:
            for d in spec.submodule_search_locations:
                hits = glob.glob(os.path.join(d, "xla_cuda_plugin*.so"))
                if hits:
                    return hits[0]
    raise SystemExit("no jax CUDA plugin (jax_plugins.xla_cuda13/12) found")


def compile_options(replicas: int, partitions: int) -> bytes:
    """A CompileOptionsProto for the module's device count, with run_backend_only set."""
    import numpy as np
    from jaxlib import _jax

    opts = _jax.CompileOptions()
    opts.num_replicas = replicas
    opts.num_partitions = partitions
    ebo = opts.executable_build_options
    ebo.num_replicas, ebo.num_partitions = replicas, partitions
    ebo.use_spmd_partitioning = partitions > 1
    ids = np.arange(replicas * partitions).reshape(replicas, partitions)
    opts.device_assignment = _jax.DeviceAssignment.create(ids)
    raw = opts.SerializeAsString()
    # executable_build_options (field 3) once more with run_backend_only (field 11) = true:
    # protobuf merges a repeated embedded message into the first.
    return raw + bytes([0x1A, 0x02, 0x58, 0x01])


def sequences(module) -> dict[str, list[str]]:
    """Instruction names per non-fusion computation in text order: the schedule, for a
    module printed with is_scheduled=true."""
    text = module.to_string()
    scheduled = {c.name for c in module.make_nonfusion_computations()}
    out: dict[str, list[str]] = {}
    cur = None
    for line in text.splitlines():
        m = re.match(r"^(?:ENTRY\s+)?%?([\w.\-]+)\s.*\{\s*$", line)
        if m and not line.startswith((" ", "HloModule")):
            cur = m.group(1)
            out[cur] = []
            continue
        if line.startswith("}"):
            cur = None
            continue
        m = re.match(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=", line)
        if cur is not None and m:
            out[cur].append(m.group(1))
    return {k: v for k, v in out.items() if k in scheduled}


def compare(before: dict[str, list[str]], after: dict[str, list[str]]) -> dict:
    kept, moved, missing, added = True, [], 0, 0
    for comp, seq in before.items():
        if comp not in after:
            continue
        got = after[comp]
        pos = {n: i for i, n in enumerate(got)}
        common = [n for n in seq if n in pos]
        missing += len(seq) - len(common)
        added += len(set(got) - set(seq))
        idx = [pos[n] for n in common]
        bad = [common[i + 1] for i in range(len(idx) - 1) if idx[i + 1] < idx[i]]
        if bad:
            kept = False
            moved.append(f"{comp}: {len(bad)} out of order, first {bad[0]}")
    return {"kept": kept, "out_of_order": moved[:5], "dropped_by_xla": missing,
            "added_by_xla": added}


def check(plugin: Plugin, clients: dict, path: str) -> dict:
    from jaxlib import _hlo

    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        text = f.read()
    head = text.split("\n", 1)[0]
    replicas = int((re.search(r"replica_count=(\d+)", head) or [0, 1])[1])
    partitions = int((re.search(r"num_partitions=(\d+)", head) or [0, 1])[1])
    devices = replicas * partitions
    module = _hlo.hlo_module_from_text(text)
    if devices not in clients:
        clients[devices] = plugin.client(devices)
    res = plugin.compile_scheduled(clients[devices], module.as_serialized_hlo_module_proto(),
                                   compile_options(replicas, partitions))
    optimized = res.pop("optimized")
    if res["format"] == "hlo_with_config":  # HloModuleProtoWithConfig: hlo_module is field 1
        optimized = _field(optimized, 1)
    final = _hlo.HloModule.from_serialized_hlo_module_proto(optimized)
    return {"file": os.path.basename(path), "devices": devices,
            **compare(sequences(module), sequences(final)), **res}


def main(argv: list[str]) -> int:
    plugin = Plugin()
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
