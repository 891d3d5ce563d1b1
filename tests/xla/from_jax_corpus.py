"""``from_jax`` on one corpus program against the Graph read from its stored dump.

Run with the jax environment's Python from the repository root (cpsched importable)::

    .venv-jax/bin/python tests/xla/from_jax_corpus.py NAME [--memopt] [--corpus DIR]

It sets ``XLA_FLAGS`` as ``models/jax/capture.py --corpus`` did for that program (host
device count, the memory-optimized scheduler flag for the ``.memopt`` twin) before jax is
imported (XLA reads them once per process), builds the program with its builder from
``models/jax/corpus_programs.py``, calls ``cpsched.from_jax(fn, *args, stage="optimized")``,
reads ``DIR/NAME[.memopt].hlo.gz`` (default ``models/hlo/corpus``: the corpus captured with
the same jax; ``models/hlo/corpus-jax0.10`` for jax 0.10) with ``cpsched.read`` and prints one JSON
line: ``{"name", "equal", "differences", "n_ops", "pytree_parameters", "peak"}``
(the peak simulated in the dump's own order; ``pytree_parameters``: parameters whose
``op_name`` attribute is an argument's pytree path, ``params['w1']``).

The names are the dump's, parameters included (their pytree path is their ``op_name``).

Newer XLA (jax 0.11 on) prints get-tuple-elements in the dump as ``%t#1`` operand suffixes,
while the module ``compile().as_text()`` gives (what ``from_jax`` reads) has them as
instructions of their own, named and placed where XLA's schedule put them. For such a dump
the graphs are compared modulo get-tuple-elements (``compare_modulo_gte``): every other op,
its operands (a get-tuple-element taken as its tuple and index), buffers, users, live flags
and the order of those ops must be equal; transients and the peak may differ by the few
bytes of tuple pointer tables whose last reader moved (at most ``TABLE_SLACK``).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MEMOPT_FLAG = "--xla_cpu_scheduler_type=CPU_SCHEDULER_TYPE_MEMORY_OPTIMIZED"
ARRAYS = ("kinds", "operands_ptr", "operands_idx", "control_ptr", "control_idx",
          "async_start", "async_done", "buffer_def", "buffer_users_ptr", "buffer_users_idx",
          "buffer_live_in", "buffer_live_out", "buffer_space")


def _first_difference(a, b) -> str:
    if len(a) != len(b):
        return f"length {len(a)} != {len(b)}"
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"first at {i}: {x!r} != {y!r}"
    return "equal"


def expected_op_names(d) -> tuple[str, ...]:
    """The op names from_jax should give: the dump's."""
    return tuple(d.op_names)


def compare(g, d) -> list[str]:
    """What differs between the from_jax graph ``g`` and the dump's graph ``d``."""
    import numpy as np
    from cpsched.analysis.memory import simulate

    out = []
    if g.n_ops != d.n_ops:
        return [f"n_ops {g.n_ops} != {d.n_ops}"]
    expected = expected_op_names(d)
    for label, a, b in (("op names", g.op_names, expected), ("opcodes", g.opcodes, d.opcodes),
                        ("buffer sizes", g.buffer_sizes, d.buffer_sizes),
                        ("transient", g.transient, d.transient),
                        ("original order", g.original_order or (), d.original_order or ())):
        if tuple(a) != tuple(b):
            out.append(f"{label}: {_first_difference(tuple(a), tuple(b))}")
    if dict(g.collectives) != dict(d.collectives):
        out.append("collectives differ")
    for arr in ARRAYS:
        if not np.array_equal(getattr(g, arr), getattr(d, arr)):
            out.append(f"{arr} differ")
    if not out:
        order = list(d.original_order or d.default_order())
        pg, pd = int(simulate(g, order).peak[0]), int(simulate(d, order).peak[0])
        if pg != pd:
            out.append(f"simulated peak {pg} != {pd}")
    return out


TABLE_SLACK = 1024  # bytes: tuple pointer tables (8 bytes an element) freed at another step


def _canonical(g, module) -> dict:
    """The graph read from ``module``'s entry, with get-tuple-elements folded into the
    operands that read them: op key -> (opcode, kind, operands, control preds), buffers by
    defining op, the order of the other ops, transients, the peak in the graph's order."""
    from cpsched.analysis.memory import simulate

    entry = module.entry.instructions
    assert len(entry) == g.n_ops and [i.opcode for i in entry] == list(g.opcodes)
    by_name = {ins.name: k for k, ins in enumerate(entry)}

    def key(i: int) -> str:
        ins = entry[i]
        if ins.opcode == "parameter":
            return f"parameter({ins.parameter_number})"
        if ins.opcode == "get-tuple-element":
            src = by_name[ins.operands[0]]
            return f"{key(src)}#{int(ins.attrs['index'])}"
        return ins.name

    gte = [ins.opcode == "get-tuple-element" for ins in entry]
    ops = {}
    for i in range(g.n_ops):
        if not gte[i]:
            ops[key(i)] = (g.opcodes[i], int(g.kinds[i]), tuple(key(int(o)) for o in
                                                               g.operands(i)),
                           tuple(sorted(key(int(c)) for c in g.control_preds(i))))
    buffers: dict[str, list] = {}
    for j in range(g.n_buffers):
        buffers.setdefault(key(int(g.buffer_def[j])), []).append((
            str(g.buffer_sizes[j]), tuple(sorted({key(int(u)) for u in g.buffer_users(j)})),
            bool(g.buffer_live_in[j]), bool(g.buffer_live_out[j])))
    order = [key(i) for i in (g.original_order or range(g.n_ops)) if not gte[i]]
    transient = {key(i): int(g.transient[i].constant_value) for i in range(g.n_ops)
                 if not gte[i] and g.transient[i].is_constant}
    peak = int(simulate(g, list(g.original_order or g.default_order())).peak[0])
    return {"ops": ops, "buffers": {k: sorted(v) for k, v in buffers.items()},
            "order": order, "transient": transient, "peak": peak}


def compare_modulo_gte(g, gm, d, dm) -> list[str]:
    """What differs between the from_jax graph ``g`` (module ``gm``) and the dump's graph
    ``d`` (module ``dm``) other than where the get-tuple-elements are (module docstring)."""
    a, b = _canonical(g, gm), _canonical(d, dm)
    out = []
    for label in ("ops", "buffers"):
        if a[label] != b[label]:
            diff = sorted(k for k in set(a[label]) | set(b[label])
                          if a[label].get(k) != b[label].get(k))
            out.append(f"{label}: {len(diff)} differ, first {diff[:3]}: "
                       f"{[a[label].get(k) for k in diff[:1]]} != "
                       f"{[b[label].get(k) for k in diff[:1]]}")
    if a["order"] != b["order"]:
        out.append("order of the ops other than get-tuple-elements differs")
    worst = max((abs(a["transient"].get(k, 0) - v) for k, v in b["transient"].items()),
                default=0)
    if worst > TABLE_SLACK:
        out.append(f"a transient differs by {worst} bytes")
    if abs(a["peak"] - b["peak"]) > TABLE_SLACK:
        out.append(f"simulated peak {a['peak']} != {b['peak']}")
    return out


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    memopt = "--memopt" in args
    corpus = REPO / "models" / "hlo" / "corpus"
    if "--corpus" in args:
        k = args.index("--corpus")
        corpus = Path(args[k + 1])
        del args[k : k + 2]
    name = next(a for a in args if not a.startswith("--"))
    sys.path[:0] = [str(REPO), str(REPO / "models" / "jax")]
    import corpus_programs
    builder, devices, _, _ = corpus_programs.CORPUS[name]
    flags = ([f"--xla_force_host_platform_device_count={devices}"] if devices > 1 else []) \
        + ([MEMOPT_FLAG] if memopt else [])
    # the capture's flags, without the dump ones (they change no compilation pass)
    os.environ["XLA_FLAGS"] = " ".join(flags)
    os.environ["JAX_PLATFORMS"] = "cpu"
    import cpsched
    import cpsched.readers.jax_frontend as jf
    from cpsched.analysis.memory import simulate
    from cpsched.readers.hlo.parser import parse_hlo_text, read_hlo_module

    fn, fargs, _ = getattr(corpus_programs, builder)()
    seen: dict[str, str] = {}     # the text from_jax reads, for its get-tuple-elements
    compile_text = jf.optimized_hlo_text
    jf.optimized_hlo_text = lambda *a, **k: seen.setdefault("text", compile_text(*a, **k))
    g = cpsched.from_jax(fn, *fargs, stage="optimized")
    label = name + (".memopt" if memopt else "")
    d = cpsched.read(str(corpus / f"{label}.hlo.gz"))
    dm = read_hlo_module(str(corpus / f"{label}.hlo.gz"))
    compact = any(i.synthetic and "#" in i.name for i in dm.entry.instructions)
    diffs = compare_modulo_gte(g, parse_hlo_text(seen["text"]), d, dm) if compact \
        else compare(g, d)
    order = list(d.original_order or d.default_order())
    pytree = sum(1 for i in range(g.n_ops) if g.opcodes[i] == "parameter"
                 and "[" in str(g.attrs(i).get("op_name", "")))
    print(json.dumps({"name": label, "equal": not diffs, "differences": diffs,
                      "modulo_get_tuple_elements": compact,
                      "n_ops": d.n_ops, "pytree_parameters": pytree,
                      "peak": int(simulate(d, order).peak[0])}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
