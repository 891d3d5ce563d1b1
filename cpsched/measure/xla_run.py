"""Compile an HLO module through PJRT, run it on seeded inputs, time it, read back what XLA ran.

This file imports nothing from cpsched and only the standard library at module level (numpy
and jax inside functions): ``benchmarks/measure_gpu.py`` loads it on its own, by path, on
machines that have jax and numpy but not cpsched's solver dependencies. ``cpsched run``
(``cpsched.measure.run``) drives it in a child process (``python xla_run.py worker JOB``), so
that an XLA ``CHECK`` failure, which aborts the process, becomes a one-line refusal.

Two backends, one record per module (``measure``):

- **cpu**: jaxlib's CPU client. jax compiles StableHLO only, so the module is converted to a
  plain HLO program first (``logical_text``: fusions become calls of their bodies, bitcasts
  become the transposes and reshape they stand for, layouts and ``is_scheduled`` dropped) and
  compiled through XLA:CPU's whole pipeline: XLA:CPU fuses and schedules it again, and
  ``order_kept`` says so.
- **gpu**: the CUDA plugin's PJRT C API (ctypes, ``Plugin``), given the module itself as an
  ``HloModuleProto`` with its schedule and ``run_backend_only``: XLA:GPU skips its HLO passes
  and keeps a module that already has a schedule. The executable is serialized and loaded
  into a jax client of the same plugin, which runs it. A module for N > 1 devices compiles
  through the plugin's mock topology (N hosts of one GPU) and is not run (one GPU).

What a record holds: the compiled memory stats (``PJRT_Executable_GetCompiledMemoryStats``),
on a GPU the allocator's ``peak_bytes_in_use`` (a fresh client per module, so the peak is
this module's), the order XLA ran (its final module's entry sequence) and whether the input's
order survived in it, the outputs' check against a reference module run on the same inputs,
the step time of ``repeat`` runs (median and spread), and optionally per-op times from the
profiler's per-op events (``hlo_op``).

Inputs: every parameter gets seeded random values of its shape (floats uniform in [-1, 1),
integers in [0, 4), booleans fair coins), a different stream per device and parameter; a
token or opaque parameter cannot be fed and is refused. Outputs are compared exactly for
integers and booleans and, for floats, element-wise within ``rtol * (|ref| + max|ref|)``
with ``rtol`` from ``FLOAT_RTOL`` (f64 1e-9, f32 1e-4, f16/bf16 2e-2, 8-bit floats 0.25);
NaNs must sit at the same places.
"""

from __future__ import annotations

import ctypes as C
import glob
import gzip
import json
import os
import re
import statistics
import sys
import threading
import time
from typing import Any

FLOAT_RTOL = {
    "float64": 1e-9,
    "complex128": 1e-9,
    "float32": 1e-4,
    "complex64": 1e-4,
    "float16": 2e-2,
    "bfloat16": 2e-2,
}
FLOAT8_RTOL = 0.25
INT_RANGE = (0, 4)


class MeasureError(Exception):
    """A module that cannot be measured, in one line (the place, then the reason)."""


# -- HLO text ------------------------------------------------------------------------------


def read_text(path: str) -> str:
    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rt") as f:
                return f.read()
        with open(path) as f:
            return f.read()
    except (OSError, UnicodeDecodeError, EOFError) as e:
        raise MeasureError(f"{path}: cannot read: {e}") from None


def header(text: str) -> dict[str, Any]:
    """The ``HloModule`` line's facts: name, replica and partition counts, whether it is
    scheduled, and the donated parameter numbers (``input_output_alias``)."""
    first = text.lstrip().split("\n", 1)[0]
    if not first.startswith("HloModule"):
        raise MeasureError("not an HLO module: the text does not start with 'HloModule'")
    name = first.split()[1].rstrip(",") if len(first.split()) > 1 else "module"
    replicas = int((re.search(r"replica_count=(\d+)", first) or [0, 1])[1])
    partitions = int((re.search(r"num_partitions=(\d+)", first) or [0, 1])[1])
    donated = sorted(
        {
            int(p)
            for p in re.findall(
                r"\(\s*(\d+)\s*,\s*\{[^}]*\}\s*,\s*(?:may|must)"
                r"-alias\s*\)",
                first,
            )
        }
    )
    return {
        "name": name,
        "replicas": replicas,
        "partitions": partitions,
        "devices": replicas * partitions,
        "scheduled": "is_scheduled=true" in first,
        "donated": donated,
    }


def _value_end(s: str, i: int) -> int:
    """End of an attribute value starting at ``s[i]``: balanced braces/brackets/parens,
    quoted strings, else up to the next top-level comma."""
    depth, quote = 0, False
    while i < len(s):
        c = s[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == '"':
                quote = False
        elif c == '"':
            quote = True
        elif c in "{[(":
            depth += 1
        elif c in "}])":
            if depth == 0:
                return i
            depth -= 1
        elif c == "," and depth == 0:
            return i
        i += 1
    return i


def drop_attr(line: str, name: str) -> str:
    """``line`` without its ``, name=VALUE`` attribute (VALUE may nest)."""
    m = re.search(r",\s*" + re.escape(name) + "=", line)
    if not m:
        return line
    return line[: m.start()] + line[_value_end(line, m.end()) :]


_INSTR = re.compile(r"^(\s*)(ROOT\s+)?%?([\w.\-]+)\s*=\s*")
_ARRAY = re.compile(r"^([a-z][a-z0-9]*)\[([0-9,]*)\](\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\})?")


def _shape_and_rest(s: str) -> tuple[str, str]:
    if s.startswith("("):
        _, end = _operand_span(s)
        return s[: end + 1], s[end + 1 :].lstrip()
    m = _ARRAY.match(s)
    if not m:
        token = s.split(" ", 1)
        return token[0], token[1] if len(token) > 1 else ""
    return m.group(0), s[m.end() :].lstrip()


def _array(shape: str) -> tuple[str, list[int], list[int] | None] | None:
    """(element type, dims, minor_to_major or None) of an array shape string."""
    m = _ARRAY.match(shape)
    if not m or shape.startswith("("):
        return None
    dims = [int(d) for d in m.group(2).split(",") if d]
    layout = None
    if m.group(3):
        inner = m.group(3)[1:-1].split(":", 1)[0]
        nums = [int(x) for x in inner.split(",") if x.strip().lstrip("-").isdigit()]
        if len(nums) == len(dims):
            layout = nums
    return m.group(1), dims, layout


def _shape(et: str, dims: list[int]) -> str:
    """An array shape with its default layout written out (XLA:CPU's emitters want one)."""
    layout = ",".join(str(k) for k in reversed(range(len(dims))))
    return f"{et}[{','.join(map(str, dims))}]" + (f"{{{layout}}}" if dims else "")


def _bitcast_lines(
    indent: str, root: str, name: str, result: tuple, operand: str, op_shape: tuple
) -> list[str]:
    """A bitcast as what it means on logical shapes: transpose the operand into its physical
    (major-to-minor) order, reshape to the result's physical shape, transpose to its
    logical order."""
    et, d1, l1 = op_shape
    _, d2, l2 = result
    p1 = list(reversed(l1)) if l1 else list(range(len(d1)))
    p2 = list(reversed(l2)) if l2 else list(range(len(d2)))
    lines, cur = [], "%" + operand
    if p1 != list(range(len(d1))):
        lines.append(
            f"{indent}%{name}.lg0 = {_shape(et, [d1[i] for i in p1])} transpose({cur}), "
            f"dimensions={{{','.join(map(str, p1))}}}"
        )
        cur = f"%{name}.lg0"
    phys2 = _shape(et, [d2[i] for i in p2])
    if p2 == list(range(len(d2))):
        lines.append(f"{indent}{root}%{name} = {phys2} reshape({cur})")
        return lines
    inverse = [p2.index(k) for k in range(len(d2))]
    lines.append(f"{indent}%{name}.lg1 = {phys2} reshape({cur})")
    lines.append(
        f"{indent}{root}%{name} = {_shape(et, d2)} "
        f"transpose(%{name}.lg1), dimensions={{{','.join(map(str, inverse))}}}"
    )
    return lines


def _operand_span(rest: str) -> tuple[int, int]:
    """Start and end (exclusive) of the operand list in ``opcode(...)...``."""
    i = rest.index("(") + 1
    j = i
    while True:  # commas between operands end nothing here: only the closing paren does
        j = _value_end(rest, j)
        if j >= len(rest) or rest[j] != ",":
            return i, j
        j += 1


def _split_top(s: str) -> list[str]:
    out, i = [], 0
    while i < len(s):
        j = _value_end(s, i)
        if s[i:j].strip():
            out.append(s[i:j].strip())
        i = j + 1
    return out


def _rename(
    line: str, m: re.Match, rest_at: int, names: dict[str, str], new_name: str, root: str
) -> str:
    """``line`` (an instruction) as ``new_name`` with its operands renamed by ``names``."""
    rest = line[rest_at:]
    i, j = _operand_span(rest)
    ops = re.sub(r"%([\w.\-]+)", lambda o: "%" + names.get(o.group(1), o.group(1)), rest[i:j])
    return f"{m.group(1)}{root}%{new_name} = {line[m.end() : rest_at]}{rest[:i]}{ops}{rest[j:]}"


_COLLECTIVES = (
    "all-reduce",
    "all-gather",
    "reduce-scatter",
    "all-to-all",
    "collective-permute",
    "collective-broadcast",
    "all-reduce-start",
    "all-gather-start",
    "collective-permute-start",
    "ragged-all-to-all",
)


def _as_replicas(line: str, opcode: str) -> str:
    """One partition's collective as the same collective among replicas: a channel id
    without global device ids means partition ids (drop it: replica ids); with
    ``use_global_device_ids`` the ids are flattened and mean the same devices either way."""
    if not opcode:
        m = re.search(r"\s([a-z][a-z0-9\-]*)\(", line)
        opcode = m.group(1) if m else ""
    if opcode == "partition-id":
        return line.replace("partition-id()", "replica-id()", 1)
    if opcode in _COLLECTIVES and "use_global_device_ids=true" not in line:
        return drop_attr(line, "channel_id")
    return line


_SPLITTABLE = ("all-reduce", "all-gather", "reduce-scatter", "collective-permute")


def _split_collective(
    line: str,
    m: re.Match,
    shape: str,
    rest: str,
    opcode: str,
    as_replicas: bool,
    channels: list[int],
) -> list[str]:
    """A collective of several operands (a tuple result) as one collective per operand and
    a tuple of their results: the same values, in the form the StableHLO round trip and
    XLA:CPU's layout assignment take."""
    i, j = _operand_span(rest)
    operands = _split_top(rest[i:j])
    elements = _split_top(shape[1:-1])
    attrs = drop_attr(drop_attr(rest[j + 1 :], "backend_config"), "sharding")
    name, indent, root = m.group(3), m.group(1), m.group(2) or ""
    out = []
    for k, (o, el) in enumerate(zip(operands, elements)):
        a = attrs
        if "channel_id=" in a:  # every collective of a module has its own channel
            channels[0] += 1
            a = re.sub(r"channel_id=\d+", f"channel_id={channels[0]}", a)
        piece = f"{indent}%{name}.ar{k} = {el} {opcode}({o}){a}"
        out.append(_as_replicas(piece, opcode) if as_replicas else piece)
    out.append(
        f"{indent}{root}%{name} = {shape} tuple("
        + ", ".join(f"%{name}.ar{k}" for k in range(len(operands)))
        + ")"
    )
    return out


_ASYNC_STARTS = (
    "all-reduce-start",
    "all-gather-start",
    "collective-permute-start",
    "copy-start",
    "async-start",
)
_ASYNC_DONES = (
    "all-reduce-done",
    "all-gather-done",
    "collective-permute-done",
    "copy-done",
    "async-done",
)


def _operand_names(rest: str) -> list[str]:
    i, j = _operand_span(rest)
    # ``%x#1``: element 1 of tuple ``x`` (newer XLA prints get-tuple-elements so)
    return [
        re.search(r"%?([\w.\-]+(?:#\d+)?)$", o).group(1)  # type: ignore[union-attr]
        for o in _split_top(rest[i:j])
    ]


def _sync_line(m: re.Match, shape: str, start_op: str, start_rest: str) -> str:
    """An async pair's done written as the synchronous op it stands for (the start's
    operands and attributes, the done's shape)."""
    lead = f"{m.group(1)}{m.group(2) or ''}%{m.group(3)} = {shape} "
    if start_op == "copy-start":
        return lead + f"copy(%{_operand_names(start_rest)[0]})"
    if start_op == "async-start":  # calls a computation: inline it like a fusion's
        i, j = _operand_span(start_rest)
        callee = re.search(r"calls=%?([\w.\-]+)", start_rest)
        return lead + f"fusion({start_rest[i:j]}), kind=kLoop, calls=%{callee.group(1)}"  # type: ignore[union-attr]
    return lead + start_op[: -len("-start")] + start_rest[len(start_op) :]


def _mesh_groups(m: re.Match) -> str:
    """``replica_groups=mesh['a'=2,'b'=4] {'b'}`` (newer XLA's named form) as explicit
    groups: devices numbered row-major over the mesh axes, one group per value of the
    axes not named, its members in the named axes' order."""
    import itertools

    axes = [(a, int(n)) for a, n in re.findall(r"'([^']+)'\s*=\s*(\d+)", m.group(1))]
    named = re.findall(r"'([^']+)'", m.group(2))
    size = dict(axes)
    if not axes or any(a not in size for a in named):
        return m.group(0)  # a form not understood here: XLA's parser gets it as it was
    stride, acc = {}, 1
    for a, n in reversed(axes):
        stride[a] = acc
        acc *= n
    others = [a for a, _ in axes if a not in named]
    groups = []
    for fixed in itertools.product(*[range(size[a]) for a in others]):
        base = sum(stride[a] * v for a, v in zip(others, fixed))
        members = [
            base + sum(stride[a] * v for a, v in zip(named, idx))
            for idx in itertools.product(*[range(size[a]) for a in named])
        ]
        groups.append("{" + ",".join(map(str, members)) + "}")
    return "replica_groups={" + ",".join(groups) + "}"


def _program_header(head: str, partitions: int) -> tuple[str, int]:
    """The ``HloModule`` line of ``logical_text``'s program: not scheduled, no entry layout
    or sharding propagation, and N partitions as N replicas."""
    head = head.replace(", is_scheduled=true", "").replace("is_scheduled=true, ", "")
    for attr in (
        "entry_computation_layout",
        "allow_spmd_sharding_propagation_to_output",
        "allow_spmd_sharding_propagation_to_parameters",
    ):
        head = drop_attr(head, attr)
    if partitions > 1:
        # one program per device, as replicas: XLA:CPU compiles partitions only through its
        # SPMD partitioner, which refuses programs it has already partitioned
        head = re.sub(r",\s*replica_count=\d+", "", head)
        head = head.replace(f"num_partitions={partitions}", f"replica_count={partitions}")
    return head, partitions


def _computations(
    lines: list[str],
) -> tuple[dict[str, tuple[str, list[str]]], list[str], list[str]]:
    """The computations of a module's text after its ``HloModule`` line: name -> (header
    line, body lines), their order, and the lines before the first one."""
    comps: dict[str, tuple[str, list[str]]] = {}
    order: list[str] = []
    prefix: list[str] = []
    cur: str | None = None
    for line in lines:
        if cur is None:
            if line.strip().endswith("{") and not line.startswith((" ", "\t")):
                name_m = re.match(r"^(?:ENTRY\s+)?%?([\w.\-]+)", line)
                cur = name_m.group(1) if name_m else f"computation{len(order)}"
                comps[cur] = (line, [])
                order.append(cur)
            elif not order:
                prefix.append(line)
            continue
        if line.startswith("}"):
            cur = None
            continue
        comps[cur][1].append(line)
    return comps, order, prefix


def logical_text(text: str) -> str:
    """The module as a plain HLO program for a backend that compiles it from scratch: every
    fusion replaced by its fused computation's instructions (the fusion's root takes the
    fusion's name), every bitcast by the transposes and reshape it stands for (layouts
    decide what a bitcast means, and a StableHLO round trip loses them), backend configs,
    ``is_scheduled`` and the entry layout dropped. The values computed are the module's
    own, as the program jax first handed to XLA."""
    text = re.sub(r"/\*index=\d+\*/", "", text)
    text = re.sub(r"replica_groups=mesh\[([^\]]*)\]\s*\{([^}]*)\}", _mesh_groups, text)
    lines = text.splitlines()
    start = next((k for k, ln in enumerate(lines) if ln.startswith("HloModule")), 0)
    head, partitions = _program_header(lines[start], header(text)["partitions"])
    comps, order, prefix = _computations(lines[start + 1 :])
    fused = {
        c
        for _, body in comps.values()
        for ln in body
        if re.search(r"\b(?:fusion|async-start)\(", ln)
        for c in re.findall(r"calls=%?([\w.\-]+)", ln)
    }
    starts: dict[str, tuple[str, str]] = {}
    shapes: dict[str, tuple] = {}
    channels = [max([int(c) for c in re.findall(r"channel_id=(\d+)", text)] or [0])]

    def expand(body: list[str]) -> list[str]:
        out: list[str] = []
        for line in body:
            m = _INSTR.match(line)
            if not m:
                out.append(line)
                continue
            name, root = m.group(3), m.group(2) or ""
            line = drop_attr(line, "control-predecessors")  # orders nothing recompiled
            shape, rest = _shape_and_rest(line[m.end() :])
            op = re.match(r"([a-z][a-z0-9\-]*)\(", rest)
            opcode = op.group(1) if op else ""
            if opcode in _ASYNC_STARTS:  # written again at its done, as the sync op
                starts[name] = (opcode, rest)
                continue
            if opcode == "async-update":
                starts[name] = starts[_operand_names(rest)[0]]
                continue
            if opcode in _ASYNC_DONES:
                line = _sync_line(m, shape, *starts.pop(_operand_names(rest)[0]))
                synced = _INSTR.match(line)
                assert synced is not None  # _sync_line writes an instruction line
                m = synced
                shape, rest = _shape_and_rest(line[m.end() :])
                op = re.match(r"([a-z][a-z0-9\-]*)\(", rest)
                opcode = op.group(1) if op else ""
            arr = _array(shape)
            if arr:
                shapes[name] = arr
            elif shape.startswith("("):
                for k, el in enumerate(_split_top(shape[1:-1])):
                    if _array(el):
                        shapes[f"{name}#{k}"] = _array(el)  # type: ignore[assignment]
            callee = re.search(r"calls=%?([\w.\-]+)", rest)
            if opcode == "fusion" and callee and callee.group(1) in comps:
                operands = _operand_names(rest)
                names: dict[str, str] = {}
                inner: list[str] = []
                for fl in expand(comps[callee.group(1)][1]):
                    fm = _INSTR.match(fl)
                    if not fm:
                        continue
                    fshape, frest = _shape_and_rest(fl[fm.end() :])
                    param = re.match(r"parameter\((\d+)\)", frest)
                    if param:
                        names[fm.group(3)] = operands[int(param.group(1))]
                        continue
                    is_root = bool(fm.group(2))
                    new = name if is_root else f"{fm.group(3)}.in.{name}"
                    names[fm.group(3)] = new
                    line_in = drop_attr(
                        _rename(fl, fm, len(fl) - len(frest), names, new, root if is_root else ""),
                        "sharding",
                    )
                    inner.append(_as_replicas(line_in, "") if partitions > 1 else line_in)
                    if _array(fshape):
                        shapes[new] = _array(fshape)  # type: ignore[assignment]
                out.extend(inner)
                continue
            if (
                opcode in _SPLITTABLE
                and shape.startswith("(")
                and len(_operand_names(rest)) == len(_split_top(shape[1:-1])) > 1
            ):
                out.extend(
                    _split_collective(line, m, shape, rest, opcode, partitions > 1, channels)
                )
                continue
            if opcode == "bitcast" and arr:
                operand = re.match(r"bitcast\((?:[^%()]*\s)?%?([\w.\-]+(?:#\d+)?)\)", rest)
                if operand and operand.group(1) in shapes:
                    out.extend(
                        _bitcast_lines(
                            m.group(1), root, name, arr, operand.group(1), shapes[operand.group(1)]
                        )
                    )
                    continue
            # shardings are what the partitioner already applied: left, they would make
            # it partition the program again
            line = drop_attr(drop_attr(line, "backend_config"), "sharding")
            if partitions > 1:
                line = _as_replicas(line, opcode)
            if opcode in _COLLECTIVES and "channel_id=" in line:
                # one channel per collective: XLA:CPU's layout assignment ties the layouts
                # of collectives that share a channel (jax gives shard_map's all one)
                channels[0] += 1
                line = re.sub(r"channel_id=\d+", f"channel_id={channels[0]}", line)
            out.append(line)
        return out

    result = lines[:start] + [head] + prefix
    for c in order:
        if c in fused:
            continue
        result.append(comps[c][0])
        result.extend(expand(comps[c][1]))
        result.append("}")
        result.append("")
    # every layout the default one: what a value means no longer depends on layouts here,
    # and the StableHLO round trip mislays non-default ones (collectives, reducers)
    return re.sub(
        r"\b([a-z][a-z0-9]*)\[([0-9,]*)\]\{[^{}]*\}",
        lambda a: _shape(a.group(1), [int(d) for d in a.group(2).split(",") if d]),
        "\n".join(result) + "\n",
    )


def sequences(text: str) -> dict[str, list[str]]:
    """Instruction names per computation in text order (the schedule of a module printed
    with ``is_scheduled=true``), fused computations left out."""
    out: dict[str, list[str]] = {}
    fused: set[str] = set()
    cur = None
    for line in text.splitlines():
        if not line.startswith((" ", "\t", "HloModule", "}")) and line.rstrip().endswith("{"):
            m = re.match(r"^(?:ENTRY\s+)?%?([\w.\-]+)", line)
            cur = m.group(1) if m else None
            if cur is not None:
                out[cur] = []
            continue
        if line.startswith("}"):
            cur = None
            continue
        m = _INSTR.match(line)
        if cur is not None and m:
            out[cur].append(m.group(3))
            for callee in re.findall(r"calls=%?([\w.\-]+)", line):
                fused.add(callee)
    return {k: v for k, v in out.items() if k not in fused}


def entry_name(text: str) -> str | None:
    m = re.search(r"^ENTRY\s+%?([\w.\-]+)", text, re.M)
    return m.group(1) if m else None


def compare_orders(before: dict[str, list[str]], after: dict[str, list[str]]) -> dict:
    """Did the input's order survive? Every instruction of the input still in XLA's final
    module must keep its relative order there; XLA may add or drop a few (counted)."""
    moved, matched, missing, added, total = [], 0, 0, 0, 0
    for comp, seq in before.items():
        total += len(seq)
        got = after.get(comp)
        if got is None:
            missing += len(seq)
            continue
        pos = {n: i for i, n in enumerate(got)}
        common = [n for n in seq if n in pos]
        matched += len(common)
        missing += len(seq) - len(common)
        added += len(set(got) - set(seq))
        idx = [pos[n] for n in common]
        bad = [common[i + 1] for i in range(len(idx) - 1) if idx[i + 1] < idx[i]]
        if bad:
            moved.append(f"{comp}: {len(bad)} out of order, first {bad[0]}")
    # most instructions gone: XLA rebuilt the module (fused and scheduled it again)
    kept = not moved and total > 0 and matched >= 0.5 * total
    return {
        "kept": kept,
        "matched": matched,
        "input_instructions": total,
        "out_of_order": moved[:5],
        "dropped_by_xla": missing,
        "added_by_xla": added,
    }


# -- PJRT C API (the CUDA plugin), through ctypes -------------------------------------------

# Indices of the function pointers used here in the PJRT_Api table (after its struct_size,
# extension_start and 24-byte version header); the table only ever grows at its end.
_FN = {
    "Error_Destroy": 0,
    "Error_Message": 1,
    "Plugin_Initialize": 3,
    "Client_Create": 10,
    "Client_Destroy": 11,
    "Client_Compile": 20,
    "Executable_Destroy": 40,
    "Executable_OptimizedProgram": 48,
    "Executable_Serialize": 49,
    "LoadedExecutable_Destroy": 50,
    "LoadedExecutable_GetExecutable": 51,
    "Executable_GetCompiledMemoryStats": 96,
}
_PAD = 32  # spare 8-byte words after every argument struct: a newer plugin may read more


def _args(*fields, name: str = "Args", spare: bool = True):
    """An argument struct: struct_size, extension_start, the fields, spare room (none for
    an array element, whose size the plugin steps by)."""
    return type(
        name,
        (C.Structure,),
        {
            "_fields_": [
                ("struct_size", C.c_size_t),
                ("extension_start", C.c_void_p),
                *fields,
                *([("_spare", C.c_int64 * _PAD)] if spare else []),
            ]
        },
    )


NamedValue = _args(
    ("name", C.c_char_p),
    ("name_size", C.c_size_t),
    ("type", C.c_int),
    ("value", C.c_int64),
    ("value_size", C.c_size_t),
    name="NamedValue",
    spare=False,
)
Program = _args(
    ("code", C.c_void_p),
    ("code_size", C.c_size_t),
    ("format", C.c_char_p),
    ("format_size", C.c_size_t),
    name="Program",
)
ErrorMessage = _args(("error", C.c_void_p), ("message", C.c_void_p), ("message_size", C.c_size_t))
ErrorDestroy = _args(("error", C.c_void_p))
PluginInit = _args()
ClientCreate = _args(
    ("create_options", C.c_void_p),
    ("num_options", C.c_size_t),
    ("kv_get", C.c_void_p),
    ("kv_get_arg", C.c_void_p),
    ("kv_put", C.c_void_p),
    ("kv_put_arg", C.c_void_p),
    ("client", C.c_void_p),
    ("kv_try_get", C.c_void_p),
    ("kv_try_get_arg", C.c_void_p),
)
ClientDestroy = _args(("client", C.c_void_p))
Compile = _args(
    ("client", C.c_void_p),
    ("program", C.POINTER(Program)),
    ("compile_options", C.c_char_p),
    ("compile_options_size", C.c_size_t),
    ("executable", C.c_void_p),
)
GetExecutable = _args(("loaded", C.c_void_p), ("executable", C.c_void_p))
Optimized = _args(("executable", C.c_void_p), ("program", C.POINTER(Program)))
Serialize = _args(
    ("executable", C.c_void_p),
    ("bytes", C.c_void_p),
    ("size", C.c_size_t),
    ("serialized", C.c_void_p),
    ("deleter", C.c_void_p),
)
MemoryStats = _args(
    ("executable", C.c_void_p),
    *[
        (n, C.c_int64)
        for n in (
            "code",
            "argument",
            "output",
            "alias",
            "temp",
            "host_code",
            "host_argument",
            "host_output",
            "host_alias",
            "host_temp",
            "peak",
        )
    ],
)
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
    """The CUDA plugin's PJRT C API: what compiling a scheduled module needs."""

    def __init__(self, path: str | None = None, initialize: bool = True):
        path = path or plugin_path()
        lib = C.CDLL(path)
        lib.GetPjrtApi.restype = C.c_void_p
        self.api = lib.GetPjrtApi()
        header_ = (C.c_size_t * 2).from_address(self.api)
        version = (C.c_int * 2).from_address(self.api + 16 + 16)
        self.version = (version[0], version[1])
        self.table_bytes = header_[0]
        self._lib = lib
        if initialize:  # once per process: not again where jax has loaded the same library
            self.call("Plugin_Initialize", _new(PluginInit))

    def _fn(self, name: str):
        offset = 16 + 24 + 8 * _FN[name]
        if offset + 8 > self.table_bytes:
            raise PjrtError(f"the plugin's API table has no {name}")
        ptr = C.c_void_p.from_address(self.api + offset).value
        if not ptr:
            raise PjrtError(f"the plugin does not implement {name}")
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
        opts: list[tuple[str, int, Any]] = [("preallocate", 4, 0)]
        if devices > 1:
            opts += [
                ("enable_mock_nccl", 4, 1),
                ("num_nodes", 1, devices),
                ("mock_gpu_topology", 0, f"1x{devices}x1"),
            ]
        keep: list[Any] = []  # what the option structs point at, alive until created
        arr = (NamedValue * len(opts))()
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

    def compile_scheduled(
        self, client, module_proto: bytes, options: bytes, serialize: bool = False
    ) -> dict:
        buf = C.create_string_buffer(module_proto, len(module_proto))
        fmt = b"hlo"
        prog = Program(
            code=C.addressof(buf), code_size=len(module_proto), format=fmt, format_size=len(fmt)
        )
        prog.struct_size = C.sizeof(Program)
        args = _new(
            Compile,
            client=client,
            program=C.pointer(prog),
            compile_options=options,
            compile_options_size=len(options),
        )
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
                res = {
                    "optimized": code.raw[: out.code_size],
                    "format": C.string_at(out.format, out.format_size).decode(),
                    "temp_bytes": stats.temp,
                    "argument_bytes": stats.argument,
                    "output_bytes": stats.output,
                    "alias_bytes": stats.alias,
                    "code_bytes": stats.code,
                    "host_temp_bytes": stats.host_temp,
                    "host_argument_bytes": stats.host_argument,
                    "host_output_bytes": stats.host_output,
                }
                if serialize:
                    s = _new(Serialize, executable=exe)
                    self.call("Executable_Serialize", s)
                    res["serialized"] = C.string_at(s.bytes, s.size)
                    if s.deleter:
                        C.CFUNCTYPE(None, C.c_void_p)(s.deleter)(s.serialized)
                return res
            finally:
                self._fn("Executable_Destroy")(C.addressof(_new(ExecDestroy, executable=exe)))
        finally:
            self._fn("LoadedExecutable_Destroy")(
                C.addressof(_new(LoadedDestroy, executable=loaded))
            )


def _varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b, v = v & 0x7F, v >> 7
        out.append(b | 0x80 if v else b)
        if not v:
            return bytes(out)


def _field(number: int, data: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return _varint(number << 3 | 2) + _varint(len(data)) + data


# XLA's PrimitiveType numbers (xla_data.proto), which IFRT's DType kinds repeat, by numpy name
_PRIMITIVE_TYPE = {
    "bool": 1,
    "int8": 2,
    "int16": 3,
    "int32": 4,
    "int64": 5,
    "uint8": 6,
    "uint16": 7,
    "uint32": 8,
    "uint64": 9,
    "float16": 10,
    "float32": 11,
    "float64": 12,
    "complex64": 15,
    "bfloat16": 16,
    "complex128": 18,
    "float8_e5m2": 19,
    "float8_e4m3fn": 20,
    "int4": 21,
    "uint4": 22,
    "float8_e4m3b11fnuz": 23,
    "float8_e5m2fnuz": 24,
    "float8_e4m3fnuz": 25,
}


def ifrt_executable(pjrt_bytes: bytes, final_text: str) -> bytes:
    """What jax's ``deserialize_executable`` loads: the plugin's serialized executable behind
    IFRT's length-delimited ``SerializedXlaExecutableMetadata``.

    ``PJRT_Executable_Serialize`` gives the PJRT bytes only; jax's client (IFRT) expects the
    metadata header that its own ``serialize()`` writes first, and takes the number, element
    types and dimensions of the outputs from it (without them: "Unexpected number of
    outputs"). Fields: 1 version (3), 2 runtime name, 5 one output spec per output (1 shape
    dims, 2 dtype kind: IFRT's kinds are XLA's PrimitiveType numbers, 4 memory kind), 7 the
    computation's name, 9 the executable version (empty: PjRt-IFRT does not track one).
    """
    from jaxlib import _hlo

    module = _hlo.hlo_module_from_text(final_text)
    result = _hlo.XlaComputation(module.as_serialized_hlo_module_proto()).program_shape()
    shape = result.result_shape()
    outputs = shape.tuple_shapes() if shape.is_tuple() else [shape]
    meta = _varint(1 << 3) + _varint(3) + _field(2, b"pjrt_ifrt")
    for s in outputs:
        dims = b"".join(_varint(d) for d in s.dimensions())
        kind = _PRIMITIVE_TYPE.get(str(s.element_type()))
        if kind is None:
            raise MeasureError(f"an output of element type {s.element_type()} cannot be read back")
        spec = _field(1, _field(1, dims) if dims else b"")
        spec += _field(2, _varint(1 << 3) + _varint(kind)) + _field(4, b"device")
        meta += _field(5, spec)
    meta += _field(7, (entry_name(final_text) or "main").encode()) + _field(9, b"")
    return _varint(len(meta)) + meta + pjrt_bytes


def protobuf_field(message: bytes, number: int) -> bytes:
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
                return message[i : i + size]
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
    raise MeasureError("no jax CUDA plugin (jax_plugins.xla_cuda13 or xla_cuda12) is installed")


def compile_options(replicas: int, partitions: int, backend_only: bool = False) -> Any:
    """A CompileOptions for the module's device count (serialized, with run_backend_only,
    when ``backend_only``)."""
    import numpy as np
    from jaxlib import _jax

    opts = _jax.CompileOptions()
    opts.num_replicas = replicas
    opts.num_partitions = partitions
    ebo = opts.executable_build_options
    ebo.num_replicas, ebo.num_partitions = replicas, partitions
    # the module is one partition's program already: with nothing annotated, the
    # partitioner leaves it as it is (XLA asks for it whenever there are partitions)
    ebo.use_spmd_partitioning = partitions > 1
    ids = np.arange(replicas * partitions).reshape(replicas, partitions)
    opts.device_assignment = _jax.DeviceAssignment.create(ids)
    if not backend_only:
        # XLA:CPU's combiner merges all-reduces into tuple all-reduces whose element
        # layouts it then cannot assign (a program from jax never reaches it with several)
        ebo.debug_options.xla_disable_hlo_passes = "cpu-all-reduce-combiner"
        return opts
    # executable_build_options (field 3) once more with run_backend_only (field 11) = true:
    # protobuf merges a repeated embedded message into the first.
    return opts.SerializeAsString() + bytes([0x1A, 0x02, 0x58, 0x01])


# -- inputs and outputs ---------------------------------------------------------------------


def parameter_shapes(text: str) -> list[tuple[Any, tuple[int, ...]]]:
    """(numpy dtype, dims) of every entry parameter, from XLA's own parse of the module;
    refuses what cannot be fed."""
    from jaxlib import _hlo

    try:
        module = _hlo.hlo_module_from_text(text)
    except Exception as e:  # XLA's parser: its first line says where
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise MeasureError(f"XLA's HLO parser rejects it: {first}") from None
    shapes = (
        _hlo.XlaComputation(module.as_serialized_hlo_module_proto())
        .program_shape()
        .parameter_shapes()
    )
    out = []
    for k, s in enumerate(shapes):
        if s.is_token():
            raise MeasureError(f"parameter {k} is a token: a token cannot be fed from the host")
        if s.is_tuple():
            raise MeasureError(f"parameter {k} is a tuple: only array parameters can be fed")
        try:
            dtype = s.numpy_dtype()
        except Exception:
            raise MeasureError(
                f"parameter {k} has element type {s.element_type()}, which "
                "cannot be fed from the host (opaque)"
            ) from None
        out.append((dtype, tuple(s.dimensions())))
    return out


def make_inputs(shapes, seed: int, devices: int) -> list[list[Any]]:
    """``[parameter][device]`` host arrays: seeded, one stream per (parameter, device)."""
    import numpy as np

    out = []
    for k, (dtype, dims) in enumerate(shapes):
        per = []
        for d in range(devices):
            rng = np.random.default_rng([seed, k, d])
            kind = np.dtype(dtype).kind
            if np.dtype(dtype) == np.bool_:
                a = rng.integers(0, 2, dims).astype(np.bool_)
            elif kind in "iu":
                a = rng.integers(*INT_RANGE, dims).astype(dtype)
            elif kind == "c":
                a = (rng.uniform(-1, 1, dims) + 1j * rng.uniform(-1, 1, dims)).astype(dtype)
            else:  # floats, numpy's and ml_dtypes' (bfloat16, float8_*)
                a = rng.uniform(-1, 1, dims).astype(np.float32).astype(dtype)
            per.append(a)
        out.append(per)
    return out


def _rtol(dtype) -> float:
    name = str(dtype)
    if name.startswith("float8") or name.startswith("float4") or name.startswith("float6"):
        return FLOAT8_RTOL
    return FLOAT_RTOL.get(name, 1e-4)


def compare_outputs(got: list, ref: list) -> dict:
    """Element-wise check of ``got`` against ``ref`` (lists of host arrays, module order)."""
    import numpy as np

    if len(got) != len(ref):
        return {"equal": False, "reason": f"{len(got)} outputs, the reference has {len(ref)}"}
    worst, tols = 0.0, set()
    for k, (a, b) in enumerate(zip(got, ref)):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype != b.dtype:
            return {
                "equal": False,
                "reason": f"output {k}: {a.dtype}{list(a.shape)} against "
                f"the reference's {b.dtype}{list(b.shape)}",
            }
        kind = a.dtype.kind
        if kind in "biu" or a.dtype == np.bool_:
            bad = int(np.count_nonzero(a != b))
            if bad:
                return {
                    "equal": False,
                    "reason": f"output {k}: {bad} of {a.size} integer elements differ",
                }
            continue
        rtol = _rtol(a.dtype)
        tols.add(rtol)
        x, y = (
            a.astype(np.complex128 if kind == "c" else np.float64),
            b.astype(np.complex128 if kind == "c" else np.float64),
        )
        nan_x, nan_y = np.isnan(x), np.isnan(y)
        if not np.array_equal(nan_x, nan_y):
            return {"equal": False, "reason": f"output {k}: NaNs at different places"}
        fin = np.isfinite(y) & ~nan_y
        if not np.array_equal(x[~fin & ~nan_y], y[~fin & ~nan_y]):
            return {"equal": False, "reason": f"output {k}: infinities differ"}
        if not fin.any():
            continue
        scale = float(np.max(np.abs(y[fin])))
        err = np.abs(x[fin] - y[fin])
        allowed = rtol * (np.abs(y[fin]) + scale)
        ratio = float(np.max(err / np.where(allowed > 0, allowed, 1.0)))
        if np.any(err > allowed):
            i = int(np.argmax(err - allowed))
            return {
                "equal": False,
                "reason": f"output {k}: |difference| {float(err[i]):.3g} "
                f"above the tolerance {float(allowed[i]):.3g} "
                f"(rtol {rtol:g})",
                "worst_ratio": ratio,
            }
        worst = max(worst, ratio)
    return {"equal": True, "worst_ratio": worst, "rtols": sorted(tols)}


# -- backends ------------------------------------------------------------------------------


def _flat_outputs(results) -> list[list[Any]]:
    """``[output][device]`` arrays of an ``execute_sharded`` result."""
    return results.disassemble_into_single_device_arrays()


def _memory_stats(stats) -> dict:
    out = {}
    for field, key in (
        ("argument_size_in_bytes", "argument_bytes"),
        ("output_size_in_bytes", "output_bytes"),
        ("alias_size_in_bytes", "alias_bytes"),
        ("temp_size_in_bytes", "temp_bytes"),
        ("generated_code_size_in_bytes", "code_bytes"),
        ("host_temp_size_in_bytes", "host_temp_bytes"),
        ("peak_memory_in_bytes", "peak_bytes"),
    ):
        v = getattr(stats, field, None)
        if v is not None:
            out[key] = int(v)
    return out


class Built:
    """What compiling gave, before loading: XLA's final module, its memory stats and, on a
    GPU, the serialized executable (``None`` for a module the machine cannot run)."""

    def __init__(
        self, final_text: str, memory: dict, executable: Any = None, devices_needed: int = 1
    ):
        self.final_text, self.memory = final_text, memory
        self.executable, self.devices_needed = executable, devices_needed


class Compiled:
    """One loaded module: what XLA made of it, and how to run it."""

    def __init__(self, built: Built, loaded, devices, client):
        self.final_text, self.memory = built.final_text, built.memory
        self.loaded, self.devices, self.client = loaded, devices, client


class Backend:
    """jax's client of one platform. ``build`` compiles (thread-safe, so that modules can
    be compiled ahead while another runs), ``load`` makes it runnable."""

    platform = "cpu"

    def __init__(self):
        import jax

        self.jax = jax
        self.device_kind = jax.devices(self.platform)[0].device_kind

    def build(self, text: str) -> Built:
        raise NotImplementedError

    def load(self, built: Built) -> Compiled:
        raise NotImplementedError

    def compile(self, text: str) -> Compiled:
        return self.load(self.build(text))

    def put(self, compiled: Compiled, host: list[list[Any]], only=None) -> list[Any]:
        """Device arrays of the parameters (``only``: those indices, the rest ``None``)."""
        jax = self.jax
        out: list[Any] = []
        devs = compiled.devices
        for k, per in enumerate(host):
            if only is not None and k not in only:
                out.append(None)
                continue
            shards = [jax.device_put(per[d], devs[d]) for d in range(len(devs))]
            if len(devs) == 1:
                out.append(shards[0])
                continue
            # every device gets its own values; the array only carries them to execute
            mesh = jax.sharding.Mesh(devs, ("d",))
            sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
            out.append(jax.make_array_from_single_device_arrays(per[0].shape, sharding, shards))
        return out

    def run(self, compiled: Compiled, args: list[Any]) -> tuple[float, list[list[Any]]]:
        t0 = time.perf_counter()
        outs = compiled.loaded.execute_sharded(args).disassemble_into_single_device_arrays()
        self.jax.block_until_ready(outs)
        return time.perf_counter() - t0, outs


class CpuBackend(Backend):
    platform = "cpu"

    def __init__(self):
        super().__init__()
        self._clients: dict[int, Any] = {}

    def client_for(self, devices: int):
        default = self.jax.devices("cpu")[0].client
        if len(default.devices()) >= devices:
            return default
        if devices not in self._clients:  # N CPU devices without XLA_FLAGS at start-up
            from jaxlib import _jax

            self._clients[devices] = _jax.get_tfrt_cpu_client(
                asynchronous=True, num_devices=devices
            )
        return self._clients[devices]

    def build(self, text: str) -> Built:
        from jaxlib import _hlo, _jax

        plain = logical_text(text)
        h = header(plain)
        client = self.client_for(h["devices"])
        devs = client.devices()[: h["devices"]]
        try:
            module = _hlo.hlo_module_from_text(plain)
            mlir = _jax.mlir.hlo_to_stablehlo(module.as_serialized_hlo_module_proto())
            loaded = client.compile_and_load(
                mlir, _jax.DeviceList(tuple(devs)), compile_options(h["replicas"], h["partitions"])
            )
        except Exception as e:
            raise MeasureError(f"XLA:CPU refuses it: {_first_line(e)}") from None
        final = loaded.hlo_modules()[0].to_string()
        built = Built(final, _memory_stats(loaded.get_compiled_memory_stats()), None, h["devices"])
        built.executable = (loaded, devs, client)
        return built

    def load(self, built: Built) -> Compiled:
        loaded, devs, client = built.executable
        return Compiled(built, loaded, devs, client)


class GpuBackend(Backend):
    platform = "gpu"

    def __init__(self, fresh_clients: bool = True):
        super().__init__()
        from jaxlib import _jax

        self.plugin = Plugin(initialize=not _jax.pjrt_plugin_initialized("cuda"))
        self._compile_clients: dict[int, Any] = {}
        self._lock = threading.Lock()  # modules compile in background threads too
        self.fresh_clients = fresh_clients
        self.client_note = ""

    def client_for_run(self):
        if not self.fresh_clients:
            return self.jax.devices("gpu")[0].client
        # a client of its own per module: its allocator's peak is this module's
        from jax._src.lib import xla_client

        try:
            opts = dict(xla_client.generate_pjrt_gpu_plugin_options())
            opts["preallocate"] = False
            return xla_client.make_c_api_client("cuda", opts, None)
        except Exception as e:  # then one client for all: its peak is a running maximum
            self.fresh_clients = False
            self.client_note = f"no client per module ({_first_line(e)})"
            return self.jax.devices("gpu")[0].client

    def compile_client(self, devices: int):
        with self._lock:
            if devices not in self._compile_clients:
                self._compile_clients[devices] = self.plugin.client(devices)
            return self._compile_clients[devices]

    def build(self, text: str) -> Built:
        from jaxlib import _hlo

        h = header(text)
        try:
            module = _hlo.hlo_module_from_text(text)
        except Exception as e:
            raise MeasureError(f"XLA's HLO parser rejects it: {_first_line(e)}") from None
        n = h["devices"]
        try:
            res = self.plugin.compile_scheduled(
                self.compile_client(n),
                module.as_serialized_hlo_module_proto(),
                compile_options(h["replicas"], h["partitions"], backend_only=True),
                serialize=n == 1,
            )
        except PjrtError as e:
            raise MeasureError(f"XLA:GPU refuses it: {_first_line(e)}") from None
        optimized = res.pop("optimized")
        if res.pop("format") == "hlo_with_config":  # HloModuleProtoWithConfig: field 1
            optimized = protobuf_field(optimized, 1)
        final = _hlo.HloModule.from_serialized_hlo_module_proto(optimized).to_string()
        serialized = res.pop("serialized", None)
        return Built(final, res, serialized, n)

    def load(self, built: Built) -> Compiled:
        from jaxlib import _jax

        if built.executable is None:  # several devices: compiled for the mock topology
            return Compiled(built, None, [], None)
        client = self.client_for_run()
        devs = client.devices()[:1]
        try:
            loaded = client.deserialize_executable(
                ifrt_executable(built.executable, built.final_text),
                _jax.DeviceList(tuple(devs)),
                None,
            )
        except Exception as e:
            raise MeasureError(f"the compiled module does not load: {_first_line(e)}") from None
        return Compiled(built, loaded, devs, client)


def _first_line(e: BaseException) -> str:
    """XLA's message in one line: its first line, and where a parse error points."""
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    if not lines:
        return type(e).__name__
    where = next((ln for ln in lines[1:] if ln.startswith("was parsing")), None)
    return (lines[0] + (" " + where if where else ""))[:400]


def backend(platform: str = "auto") -> Backend:
    """The backend for ``platform`` (``cpu``, ``gpu``, or ``auto``: a GPU when jax has one)."""
    try:
        import jax
    except ImportError:
        raise MeasureError("needs jax and jaxlib (pip install 'cpsched[jax]')") from None
    if platform == "auto":
        try:
            platform = "gpu" if jax.devices("gpu") else "cpu"
        except RuntimeError:
            platform = "cpu"
    if platform == "gpu":
        try:
            jax.devices("gpu")
        except RuntimeError:
            raise MeasureError("no GPU: jax has no gpu backend on this machine") from None
        return GpuBackend()
    if platform != "cpu":
        raise MeasureError(f"unknown platform {platform!r} (cpu, gpu, auto)")
    return CpuBackend()


# -- per-op times from the profiler ---------------------------------------------------------


def profile_ops(be: Backend, compiled: Compiled, args_fn, runs: int) -> dict:
    """Per-op time of one step from the profiler's events: ``{op: [seconds, count]}`` per
    step. Ops are named by the events' ``hlo_op`` stat (XLA:CPU's thunks, XLA:GPU's kernels
    where the tracer gives it), else by the event's own name on a device plane (XLA:GPU
    names a kernel after its fusion). Events of device planes are preferred; the planes
    used and the stat keys seen are reported too. Where the events say which run they
    belong to (``run_id``), an op's time is the median over the runs of its time in each
    (``per_run``: true), so that a step the machine's other work interrupted does not
    count; else the sum over the runs divided by them."""
    from jax._src.profiler import ProfileData
    from jaxlib import _profiler

    session = _profiler.ProfilerSession()
    try:
        for _ in range(runs):
            be.run(compiled, args_fn())
    finally:
        xspace = session.stop()
    data = ProfileData.from_serialized_xspace(xspace)
    found: dict[str, dict[str, dict[Any, list[float]]]] = {}
    keys: set[str] = set()
    for plane in data.planes:
        device = plane.name.startswith("/device:")
        per: dict[str, dict[Any, list[float]]] = {}
        for line in plane.lines:
            for ev in line.events:
                stats = dict(ev.stats)
                keys.update(stats)
                op = stats.get("hlo_op") or (ev.name if device else None)
                if not op:
                    continue
                slot = per.setdefault(str(op), {}).setdefault(stats.get("run_id"), [0.0, 0.0])
                slot[0] += ev.duration_ns * 1e-9
                slot[1] += 1.0
        if per:
            found[plane.name] = per
    chosen = {k: v for k, v in found.items() if k.startswith("/device:")} or found
    by_run: dict[str, dict[Any, list[float]]] = {}
    for per in chosen.values():
        for op, runs_of in per.items():
            mine = by_run.setdefault(op, {})
            for run, (sec, cnt) in runs_of.items():
                slot = mine.setdefault(run, [0.0, 0.0])
                slot[0] += sec
                slot[1] += cnt
    ids = {run for runs_of in by_run.values() for run in runs_of}
    per_run = None not in ids and len(ids) == runs
    ops: dict[str, list[float]] = {}
    for op, runs_of in by_run.items():
        if per_run:
            vals = list(runs_of.values()) + [[0.0, 0.0]] * (runs - len(runs_of))
            ops[op] = [statistics.median(v[0] for v in vals), statistics.median(v[1] for v in vals)]
        else:
            ops[op] = [
                sum(v[0] for v in runs_of.values()) / runs,
                sum(v[1] for v in runs_of.values()) / runs,
            ]
    return {
        "planes": sorted(chosen),
        "stat_keys": sorted(keys)[:40],
        "per_run": per_run,
        "ops": {k: [round(v[0], 12), round(v[1], 3)] for k, v in ops.items()},
    }


# -- one measurement ------------------------------------------------------------------------


def _spread(xs: list[float]) -> dict:
    xs = sorted(xs)
    q = statistics.quantiles(xs, n=4, method="inclusive") if len(xs) >= 2 else [xs[0]] * 3
    return {"min": xs[0], "max": xs[-1], "q1": q[0], "q3": q[2]}


def measure(
    paths: list[str],
    reference: int | None = 0,
    repeat: int = 10,
    warmup: int = 1,
    seed: int = 0,
    platform: str = "auto",
    profile_runs: int = 0,
    with_final_text: bool = False,
    be: Backend | None = None,
    built: dict | None = None,
    profile_reference_only: bool = False,
) -> list[dict]:
    """Measure every module of ``paths`` on the same inputs; outputs are checked against the
    module at index ``reference`` (None: no check). One record per path, in ``paths``'
    order; a module that cannot be measured gets ``{"error": ...}`` and the others go on.
    ``built`` maps paths to ``Built`` results (or futures of them) compiled ahead.
    ``profile_reference_only``: per-op times of the reference alone (the orders of one
    program run the same kernels).

    Every module is compiled, loaded, checked and warmed up first; then the timed steps
    go round the modules in turn (one step of each per round), so that a drift of the
    machine (clocks, other work) falls on every order alike instead of on whichever ran
    first."""
    be = be or backend(platform)
    order = list(range(len(paths)))
    if reference is not None:  # the reference runs first: every other module is held to it
        order.remove(reference)
        order.insert(0, reference)
    results: dict[int, dict] = {}
    ready: dict[int, _Ready] = {}
    shapes, ref_out = None, None
    for i in order:
        p = paths[i]
        rec: dict[str, Any] = {"file": p, "platform": be.platform, "device_kind": be.device_kind}
        results[i] = rec
        try:
            pre = (built or {}).get(p)
            if pre is not None and hasattr(pre, "result"):
                pre = pre.result()  # raises what the compile raised
            r = _prepare_one(rec, be, read_text(p), pre, shapes, warmup, seed, with_final_text)
            if r is not None:
                ready[i] = r
        except MeasureError as e:  # what was found before (compile figures) stays
            rec["error"] = str(e)
        except Exception as e:  # a bug here or an XLA surprise: this module only
            rec["error"] = f"unexpected {type(e).__name__}: {_first_line(e)}"
        if "error" in rec:
            rec.pop("_outputs", None)
            rec.pop("_shapes", None)
            ready.pop(i, None)
            continue
        host_out = rec.pop("_outputs", None)
        own = rec.pop("_shapes")
        shapes = shapes if shapes is not None else own
        if i == reference:
            ref_out = host_out
            rec["outputs_equal"] = True if host_out is not None else None
            rec["output_check"] = {"reference": "itself"}
        elif reference is None or host_out is None:
            rec["outputs_equal"] = None
        elif ref_out is None:
            rec["outputs_equal"] = None
            rec["output_check"] = {"reason": "the reference could not be run"}
        else:
            check = compare_outputs(host_out, ref_out)
            rec["outputs_equal"] = check.pop("equal")
            rec["output_check"] = check
    times: dict[int, list[float]] = {i: [] for i in ready}
    for _ in range(repeat):
        for i in list(ready):
            try:
                times[i].append(ready[i].step())
            except Exception as e:
                results[i]["error"] = f"running it failed: {_first_line(e)}"
                ready.pop(i)
    for i, r in ready.items():
        rec = results[i]
        xs = times[i]
        rec["step_seconds"] = statistics.median(xs) if xs else r.first
        rec["step_seconds_runs"] = xs
        rec["spread"] = _spread(xs or [r.first])
        rec["timing"] = "interleaved: one step of each order per round"
        if profile_runs and not (profile_reference_only and i != reference):
            try:
                rec["per_op"] = profile_ops(be, r.compiled, r.fresh, profile_runs)
            except Exception as e:  # no profiler here: the step times still stand
                rec["per_op"] = {"error": _first_line(e)}
        r.memory_figures(rec)
    return [results[i] for i in range(len(paths))]


class _Ready:
    """A loaded module with its inputs on the device, ready for timed steps."""

    def __init__(self, be: Backend, compiled: Compiled, host, donated: set[int]):
        self.be, self.compiled, self.host, self.donated = be, compiled, host, donated
        self.args = be.put(compiled, host)
        self.first = 0.0

    def fresh(self) -> list[Any]:
        # donated parameters are consumed by a run: give them new device copies, and wait
        # for the copies, so that a timed step holds the step alone
        gone = [k for k, a in enumerate(self.args) if k in self.donated or a.is_deleted()]
        if gone:
            new = self.be.put(self.compiled, self.host, only=set(gone))
            self.be.jax.block_until_ready([new[k] for k in gone])
            self.args = [new[k] if k in gone else a for k, a in enumerate(self.args)]
        return self.args

    def step(self) -> float:
        t, outs = self.be.run(self.compiled, self.fresh())
        del outs
        return t

    def memory_figures(self, rec: dict[str, Any]) -> None:
        devs = self.compiled.devices
        stats = devs[0].memory_stats() if devs else None
        rec["peak_bytes_in_use"] = None
        if stats:
            rec["peak_bytes_in_use"] = int(stats.get("peak_bytes_in_use", 0)) or None
            rec["allocator"] = {k: int(v) for k, v in stats.items() if isinstance(v, int)}
            if isinstance(self.be, GpuBackend):
                rec["peak_scope"] = (
                    "this module"
                    if self.be.fresh_clients
                    else f"the process so far: {self.be.client_note}"
                )


def _prepare_one(
    rec: dict[str, Any],
    be: Backend,
    text: str,
    pre: Built | None,
    shapes,
    warmup: int,
    seed: int,
    with_final_text: bool,
) -> _Ready | None:
    """Compiles, loads, runs once (outputs) and warms up; fills ``rec`` as it goes, so a
    module that compiles but does not run keeps its compile figures beside the error.
    ``None`` for a module this machine cannot run."""
    import numpy as np

    h = header(text)
    own = parameter_shapes(text)
    if shapes is not None and [(str(d), s) for d, s in own] != [(str(d), s) for d, s in shapes]:
        raise MeasureError("its parameters differ from the reference's: not the same program")
    t0 = time.perf_counter()
    built = pre if pre is not None else be.build(text)
    rec.update(
        {
            "module": h["name"],
            "devices": h["devices"],
            "compile_seconds": round(time.perf_counter() - t0, 3),
            "memory": built.memory,
            "_shapes": own,
        }
    )
    before, after = sequences(text), sequences(built.final_text)
    entry = entry_name(built.final_text)
    # XLA may rename the entry computation: compare the entries under one key
    if entry in after and entry_name(text) in before:
        before["ENTRY"] = before.pop(entry_name(text) or "")
        after["ENTRY"] = after[entry]
    check = compare_orders(before, {k: v for k, v in after.items() if k != entry})
    rec["order_kept"] = check.pop("kept")
    rec["order_check"] = check
    rec["xla_order"] = after.get(entry, []) if entry else []
    if with_final_text:
        rec["final_text"] = built.final_text
    compiled = be.load(built)
    if compiled.loaded is None:
        rec["executed"] = False
        rec["not_run"] = (
            f"needs {h['devices']} devices: compiled for a mock topology of "
            f"{h['devices']} GPUs, not run on one"
        )
        rec["step_seconds"] = None
        return None
    ready = _Ready(be, compiled, make_inputs(own, seed, len(compiled.devices)), set(h["donated"]))
    try:
        first, outs = be.run(compiled, ready.fresh())
        host_out = [np.asarray(a) for per in outs for a in per]
        del outs
        for _ in range(max(warmup - 1, 0)):
            ready.step()
    except MeasureError:
        raise
    except Exception as e:
        raise MeasureError(f"running it failed: {_first_line(e)}") from None
    ready.first = first
    rec["executed"] = True
    rec["first_run_seconds"] = first
    rec["outputs"] = len(host_out)
    rec["_outputs"] = host_out
    return ready


# -- child-process entry --------------------------------------------------------------------


def _build(be: Backend, path: str) -> Built:
    return be.build(read_text(path))


def worker(job_path: str) -> int:
    """Run a job file's groups of modules and print one JSON line each: ``{"started": i}``
    before group ``i``, then ``{"group": i, "records": [...]}``. The job: ``platform``,
    ``groups`` (each ``{"paths": [...], "reference": k}``), ``repeat``, ``warmup``, ``seed``,
    ``profile_runs``, ``profile_reference_only``, ``final_text``, ``skip`` (groups already
    done), ``ahead`` (groups to
    compile ahead in background threads while one runs)."""
    from concurrent.futures import ThreadPoolExecutor

    with open(job_path) as f:
        job = json.load(f)
    be = backend(job.get("platform", "auto"))
    print(json.dumps({"backend": be.platform, "device_kind": be.device_kind}), flush=True)
    groups = job["groups"]
    todo = list(range(job.get("skip", 0), len(groups)))
    ahead = int(job.get("ahead", 0)) if be.platform == "gpu" else 0
    pool = ThreadPoolExecutor(max_workers=max(ahead, 1))
    futures: dict[str, Any] = {}

    def submit(k: int) -> None:
        for p in groups[k]["paths"]:
            if p not in futures:
                futures[p] = pool.submit(_build, be, p)

    for n, i in enumerate(todo):
        for k in todo[n : n + 1 + ahead] if ahead else []:
            submit(k)
        print(json.dumps({"started": i}), flush=True)
        g = groups[i]
        recs = measure(
            g["paths"],
            g.get("reference", 0),
            job.get("repeat", 10),
            job.get("warmup", 1),
            job.get("seed", 0),
            be=be,
            profile_runs=job.get("profile_runs", 0),
            profile_reference_only=job.get("profile_reference_only", False),
            with_final_text=job.get("final_text", False),
            built=futures,
        )
        for p in g["paths"]:
            futures.pop(p, None)
        print(json.dumps({"group": i, "records": recs}), flush=True)
    pool.shutdown(wait=False, cancel_futures=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "worker":
        try:
            sys.exit(worker(sys.argv[2]))
        except MeasureError as e:
            print(json.dumps({"fatal": str(e)}), flush=True)
            sys.exit(2)
    print("usage: python xla_run.py worker JOB.json", file=sys.stderr)
    sys.exit(2)
