"""Graphs that PyTorch Inductor schedules, read without torch.

Two inputs:

- ``cpsched-torch-graph`` (version 1), what ``cpsched.from_torch`` / ``cpsched capture
  --torch`` record, usually gzip-compressed (``NAME.forward.torch.json.gz``)::

    {"format": "cpsched-torch-graph", "version": 1, "name": "...", "part": "forward",
     "torch_version": "2.14.1", "training": false,
     "nodes": [{"name": "op3_op4", "kind": "FusedSchedulerNode", "index": 0,
                "deps": [...],        # producers of its unmet dependencies (DFS follows these)
                "preds": [...],       # Inductor's pred_nodes (ordering)
                "fx": [...], "aten": [...], "source": "torchvision/models/resnet.py:92",
                "flops": 0, "bytes": 0}],   # Inductor's estimate_flops, bytes read + written
     "buffers": [{"name": "buf3", "node": "op3_op4", "size_alloc": 4096, "size_free": 4096,
                  "size_expr": "4*s0*64",  # when symbolic; equals the sizes at the hints
                  "succ": [...],      # nodes after which it may be freed
                  "output": false, "alloc_parent": "buf2", "mutates": "buf1"}],
     "inputs": [{"name": "arg0_1", "freeable": true, "size": 4096, "succ": [...],
                 "output": false,
                 "reader_bytes": {"op3": 128, "op7": 32}}],  # only where they differ
     "outputs": [...],
     "symbols": {"s": {"hint": 128, "min": 16, "max": 512, "symbol": "s0", "source": ...}},
     "inductor": {"order": [...], "peak": 123, "orders": {"baseline": [...], "lpmf": [...],
                  "bfs": [...], "dfs": [...]}, "peaks": {...}}}

  Fields cpsched does not use are skipped, so records of other torch versions read.

- Inductor's own ``export_graph_for_simulator`` JSON (``{"nodes": [{"name",
  "buffer_names"}], "buffers": [{"name", "size_alloc", "size_free", "is_input",
  "is_output", "deps"}]}``, written with ``reorder_for_peak_memory_debug``).

Mapping onto the IR, so that the simulator's peak of an order equals Inductor's
``estimate_peak_memory`` of it (the sum of ``size_alloc`` at each buffer's producer, less
``size_free`` after its last successor; graph outputs never freed):

- each scheduler node is one op, in the order Inductor received them (its ``index``);
  ``deps`` are its operands, the rest of ``preds`` its control predecessors;
- each freeable graph input is a ``parameter`` op defining a ``live_in`` buffer; inputs
  Inductor does not free (parameters, tangents, RNG state) are not counted, as in
  Inductor (their bytes are in ``meta["torch"]["resident_bytes"]``);
- a buffer with ``size_alloc == size_free`` is one buffer used by its ``succ``; a
  multi-output kernel allocates its outputs' bytes (``size_alloc``) while each output
  (``MultiOutput``, ``size_alloc`` 0) frees its own: each output becomes a buffer of its
  ``size_free`` bytes defined by the allocating node and used by the output node and its
  successors; bytes allocated and never freed stay to the end (``live_out``);
- mutation buffers (in-place writes, 0 bytes both ways) have no buffer: their successors
  already free the buffer they write (Inductor moves them there);
- a freeable input counts the bytes the last dep on it in Inductor's node list reads
  (``size``: in the order Inductor received; ``reader_bytes`` per reader where they differ,
  e.g. partial reads of a norm's statistics), as Inductor's pass counts every candidate
  order. Inductor re-deriving its planning info for another order counts that order's last
  reader instead (``inductor_estimate``); ``pin_last_readers`` fixes the last readers so
  that both agree on every order (the hand-back does this).

Sizes are the hints Inductor uses (``size_expr`` where symbolic: a polynomial in the
symbols, named after the user's ``Dim``s); ``meta["scenarios"]`` is the hint scenario, so
every command evaluates at the traced shapes unless ``--dim`` says otherwise.
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cpsched.core.errors import InputError
from cpsched.core.graph import Graph, GraphBuilder, OpKind
from cpsched.core.symbolic import SymExpr
from cpsched.readers.files import display_name, load_json

FORMAT = "cpsched-torch-graph"
VERSION = 1
INDUCTOR_METHODS = ("baseline", "lpmf", "bfs", "dfs")

_OPCODES = {
    "SchedulerNode": "kernel",
    "FusedSchedulerNode": "fused",
    "ExternKernelSchedulerNode": "extern",
    "NopKernelSchedulerNode": "nop",
    "ForeachKernelSchedulerNode": "foreach",
}


@dataclass(frozen=True)
class TorchProgram:
    """The graphs Inductor scheduled for one program (forward, backward, ...)."""

    name: str
    graphs: tuple[Graph, ...]
    records: tuple[Mapping[str, Any], ...]

    def __iter__(self):
        return iter(self.graphs)

    def __len__(self) -> int:
        return len(self.graphs)

    def __getitem__(self, key: int | str) -> Graph:
        if isinstance(key, str):
            for g in self.graphs:
                if g.meta.get("torch", {}).get("part") == key or g.name == key:
                    return g
            raise KeyError(f"no graph {key!r} in {self.name} (has {self.parts})")
        return self.graphs[key]

    @property
    def parts(self) -> list[str]:
        return [str(g.meta.get("torch", {}).get("part")) for g in self.graphs]

    def save(self, folder: str) -> list[str]:
        """Write each graph's record as ``folder/NAME.PART.torch.json.gz``."""
        os.makedirs(folder, exist_ok=True)
        return [
            save_record(r, os.path.join(folder, f"{self.name}.{r['part']}.torch.json.gz"))
            for r in self.records
        ]


def save_record(record: Mapping[str, Any], path: str) -> str:
    """Write one record as gzip-compressed JSON (reproducible bytes), all-or-nothing."""
    data = gzip.compress(
        json.dumps(record, sort_keys=True, separators=(",", ":")).encode(), mtime=0
    )
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".gz")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


# -- checks ---------------------------------------------------------------------------------


def _need(value, types, what: str):
    if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
        raise InputError(f"{what} must be {_NAMES[types]}, not true/false")
    if not isinstance(value, types):
        raise InputError(f"{what} must be {_NAMES[types]}, not {type(value).__name__}")
    return value


_NAMES: dict[Any, str] = {
    list: "a list",
    dict: "an object",
    str: "a string",
    int: "an integer",
    bool: "true or false",
}


def _int(value, what: str) -> int:
    _need(value, int, what)
    if value < 0:
        raise InputError(f"{what} must not be negative, got {value}")
    return value


def _names(value, what: str) -> list[str]:
    for k, v in enumerate(_need(value, list, what)):
        _need(v, str, f"{what}[{k}]")
    return value


# -- the record -> IR ----------------------------------------------------------------------


def _size(rec: Mapping[str, Any], value: int, what: str) -> SymExpr:
    text = rec.get("size_expr")
    if text is None:
        return SymExpr.const(value)
    try:
        return SymExpr.parse(_need(text, str, f"{what}: size_expr"))
    except InputError:
        # not a polynomial (floor division, Max): the hint's bytes, as Inductor counts them
        return SymExpr.const(value)


class _Build:
    def __init__(self, name: str):
        self.b = GraphBuilder(name)
        self.node_ops: list[int] = []

    def op(self, name: str, what: str) -> int:
        if not self.b.has_op(name):
            raise InputError(f"{what}: unknown node {name!r}")
        return self.b.index(name)


def graph_from_torch_dict(data: Mapping[str, Any], path: str | None = None) -> Graph:
    """A ``cpsched-torch-graph`` record as a ``Graph`` (see the module docstring)."""
    try:
        return _from_record(data)
    except InputError as e:
        raise (e.with_path(path) if path else e) from None


def _from_record(data: Mapping[str, Any]) -> Graph:
    _need(data, dict, "the file")
    if data.get("format") != FORMAT:
        raise InputError(f"not a {FORMAT} file")
    version = _need(data.get("version", 1), int, "version")
    if version > VERSION:
        raise InputError(f"{FORMAT} version {version} is newer than this cpsched reads ({VERSION})")
    nodes = _need(data.get("nodes"), list, "nodes")
    buffers = _need(data.get("buffers", []), list, "buffers")
    inputs = _need(data.get("inputs", []), list, "inputs")
    inductor = _need(data.get("inductor", {}), dict, "inductor")
    name = str(data.get("name", "torch_graph"))
    g = _Build(name)
    b = g.b
    # freeable inputs first: parameter ops, every one ready at the start
    resident = 0
    input_ops = []
    for k, rec in enumerate(inputs):
        _need(rec, dict, f"inputs[{k}]")
        iname = _need(rec.get("name"), str, f"inputs[{k}]: name")
        size = _int(rec.get("size", 0), f"input {iname}: size")
        if not rec.get("freeable", False):
            resident += size
            continue
        input_ops.append((iname, rec, size))
    for iname, _, _ in input_ops:
        b.add_op(iname, "parameter", OpKind.PARAMETER)
    for k, rec in enumerate(nodes):
        _need(rec, dict, f"nodes[{k}]")
        nname = _need(rec.get("name"), str, f"nodes[{k}]: name")
        kind = str(rec.get("kind", ""))
        attrs: dict[str, Any] = {"kind": kind} if kind else {}
        for key in ("fx", "aten"):
            if isinstance(rec.get(key), list):
                attrs[key] = [str(x) for x in rec[key]]
        if isinstance(rec.get("source"), str):
            attrs["source"] = rec["source"]
        aten = attrs.get("aten") or []
        opcode = _OPCODES.get(kind, kind or "kernel")
        if opcode == "extern" and aten:
            opcode = aten[0]
        flops = rec.get("flops", 0)
        nbytes = rec.get("bytes", 0)
        try:
            g.node_ops.append(
                b.add_op(
                    nname,
                    opcode,
                    OpKind.COMPUTE,
                    flops=_int(flops, f"node {nname}: flops"),
                    bytes_accessed=_int(nbytes, f"node {nname}: bytes"),
                    attrs=attrs,
                )
            )
        except InputError as e:
            raise InputError(f"nodes[{k}]: {e.reason}") from None
    for k, rec in enumerate(nodes):
        what = f"node {rec['name']}"
        deps = _names(rec.get("deps", []), f"{what}: deps")
        for d in deps:
            b.add_operand(g.node_ops[k], g.op(d, f"{what}: deps"))
        for p in _names(rec.get("preds", deps), f"{what}: preds"):
            if p not in deps:
                b.add_control_pred(g.node_ops[k], g.op(p, f"{what}: preds"))
    for iname, rec, size in input_ops:
        users = [
            g.op(u, f"input {iname}: succ")
            for u in _names(rec.get("succ", []), f"input {iname}: succ")
        ]
        if size:
            b.add_buffer(
                iname,
                _size(rec, size, f"input {iname}"),
                users=users,
                name=iname,
                live_in=True,
                live_out=bool(rec.get("output", False)),
            )
    unfreed = _add_buffers(g, buffers)
    order = inductor.get("order")
    if order is not None:
        ops = [g.op(x, "inductor: order") for x in _names(order, "inductor: order")]
        if sorted(ops) != sorted(g.node_ops):
            raise InputError("inductor: order does not list every node once")
        b.original_order = [b.index(x[0]) for x in input_ops] + ops
    meta: dict[str, Any] = {
        "source": "torch",
        "torch": {
            "part": data.get("part"),
            "torch_version": data.get("torch_version"),
            "training": bool(data.get("training", False)),
            "resident_bytes": resident,
            "unfreed_buffers": unfreed,
            "inductor_peak": inductor.get("peak"),
            "inductor_peaks": dict(inductor.get("peaks") or {}),
            "inductor_orders": {
                k: list(v) for k, v in (inductor.get("orders") or {}).items() if isinstance(v, list)
            },
            "size_threshold_for_succ_based_strategy": inductor.get(
                "size_threshold_for_succ_based_strategy", 0
            ),
        },
    }
    symbols = data.get("symbols") or {}
    if symbols:
        _need(symbols, dict, "symbols")
        meta["torch"]["symbols"] = symbols
        hints = {k: _int(v.get("hint"), f"symbols: {k}: hint") for k, v in symbols.items()}
        meta["scenarios"] = {
            "dims": sorted(hints),
            "scenarios": [{"name": "hint", "values": hints, "weight": 1.0}],
        }
    b.meta.update(meta)
    return b.build()


def _add_buffers(g: _Build, buffers: Sequence[Any]) -> list[str]:
    b = g.b
    recs: dict[str, dict[str, Any]] = {}
    for k, rec in enumerate(buffers):
        _need(rec, dict, f"buffers[{k}]")
        bname = _need(rec.get("name"), str, f"buffers[{k}]: name")
        what = f"buffer {bname}"
        g.op(_need(rec.get("node"), str, f"{what}: node"), f"{what}: node")
        _int(rec.get("size_alloc", 0), f"{what}: size_alloc")
        _int(rec.get("size_free", 0), f"{what}: size_free")
        _names(rec.get("succ", []), f"{what}: succ")
        recs[bname] = rec
    # bytes each allocating buffer has left to hand to the outputs that free them
    excess = {n: r.get("size_alloc", 0) - r.get("size_free", 0) for n, r in recs.items()}

    def holder(name: str) -> str:
        """The buffer whose allocation holds the bytes ``name`` frees but did not allocate."""
        seen = set()
        cur = recs[name].get("alloc_parent")
        while cur is not None and cur in recs and cur not in seen:
            if excess[cur] > 0:
                return cur
            seen.add(cur)
            cur = recs[cur].get("alloc_parent")
        # Inductor's simulator JSON has no parents: a dep of the producing node that has
        # bytes left over
        node = recs[name]["node"]
        for dep in recs[name].get("deps", ()):
            if dep in recs and excess[dep] > 0 and dep != name:
                return dep
        raise InputError(
            f"buffer {name}: frees {recs[name].get('size_free')} bytes but allocates "
            f"{recs[name].get('size_alloc')}, and no buffer it is a view of holds the rest "
            f"(node {node})"
        )

    for bname, rec in recs.items():
        what = f"buffer {bname}"
        alloc, free = rec.get("size_alloc", 0), rec.get("size_free", 0)
        node = g.op(rec["node"], what)
        users = [g.op(u, f"{what}: succ") for u in rec["succ"]]
        live_out = bool(rec.get("output", False))
        if alloc == free:
            if alloc:
                b.add_buffer(
                    node, _size(rec, alloc, what), users=users, name=bname, live_out=live_out
                )
            continue
        if free > alloc:
            if alloc:
                b.add_buffer(
                    node, _size({}, alloc, what), users=users, name=bname, live_out=live_out
                )
            parent = holder(bname)
            need = free - alloc
            if excess[parent] < need:
                raise InputError(
                    f"{what}: frees {need} bytes more than it allocates, but {parent} "
                    f"has only {excess[parent]} left"
                )
            excess[parent] -= need
            if not users and not live_out:
                # freed after its own (output) node: that node reads it here, but in
                # Inductor it is the node's output, not a read (the DFS weighs reads)
                users = [node]
                b.op_attrs.setdefault(node, {}).setdefault("alloc_views", []).append(bname)
            b.add_buffer(
                g.op(recs[parent]["node"], what),
                _size(rec if not alloc else {}, need, what),
                users=users,
                name=bname if not alloc else f"{bname}#view",
                live_out=live_out,
            )
        elif free:
            b.add_buffer(node, _size({}, free, what), users=users, name=bname, live_out=live_out)
    # bytes allocated that no buffer frees: held to the end, as in Inductor's estimate
    # (not graph outputs, so LPMF's output-bytes floor leaves them out)
    unfreed = []
    for bname, left in excess.items():
        if left > 0:
            unfreed.append(f"{bname}#unfreed")
            b.add_buffer(
                g.op(recs[bname]["node"], bname),
                SymExpr.const(left),
                name=unfreed[-1],
                live_out=True,
            )
    return unfreed


# -- Inductor's estimate of any order -------------------------------------------------------


def _last_reader(reader_bytes: Mapping[str, int], step: Mapping[str, int]) -> str:
    return max(reader_bytes, key=lambda n: step[n])


def inductor_estimate(record: Mapping[str, Any], order: Sequence[str]) -> int:
    """Inductor's ``estimate_peak_memory`` of ``order`` (scheduler node names) with its
    planning info made for that order (``prepare_planning_info(order)``), from the record.

    The same as the simulator's peak of the record's graph, except where a freeable input's
    size depends on which of its readers comes last (``reader_bytes``, see
    ``pin_last_readers``): Inductor sizes it by that reader's bytes.

    >>> rec = {"outputs": [], "buffers": [], "inputs": [{"name": "x", "freeable": True,
    ...        "size": 2, "succ": ["a", "b"], "reader_bytes": {"a": 8, "b": 2}}]}
    >>> inductor_estimate(rec, ["a", "b"]), inductor_estimate(rec, ["b", "a"])
    (2, 8)
    """
    step = {n: i for i, n in enumerate(order)}
    outputs = set(record.get("outputs", []))
    delta = [0] * (len(order) + 1)
    for inp in record.get("inputs", []):
        if not inp.get("freeable"):
            continue
        per = inp.get("reader_bytes") or {}
        size = per[_last_reader(per, step)] if per else inp.get("size", 0)
        delta[0] += size
        if inp["name"] not in outputs and not inp.get("output") and inp.get("succ"):
            delta[max(step[n] for n in inp["succ"]) + 1] -= size
    for buf in record.get("buffers", []):
        at = step[buf["node"]]
        delta[at] += buf.get("size_alloc", 0)
        if buf["name"] in outputs or buf.get("output"):
            continue
        end = max((step[n] for n in buf.get("succ", [])), default=at)
        delta[end + 1] -= buf.get("size_free", 0)
    live = peak = 0
    for d in delta:
        live += d
        peak = max(peak, live)
    return peak


def pin_last_readers(
    record: Mapping[str, Any], order: Sequence[str] | None = None
) -> tuple[dict[str, Any], int]:
    """A copy of ``record`` in which every freeable input whose size in Inductor's estimate
    depends on its last reader keeps the last reader it has in ``order`` (default: the
    order Inductor kept, else the node list): every other reader of it becomes a predecessor
    of that node, and the input's size is that node's bytes. Returns (record, inputs pinned).

    Why: Inductor's planning info sizes a freeable input by the bytes the last dep on it in
    the node list reads (``get_freeable_input_buf``: a partial read, e.g. a norm's per-group
    statistics, counts less than a full one), so re-estimating another order can move the
    figure by those bytes. With the last readers pinned, every valid order of the graph is
    estimated by Inductor exactly as the simulator counts it (``inductor_estimate``), and
    ``order`` stays valid. Records without ``reader_bytes`` come back unchanged.
    """
    if order is None:
        order = record.get("inductor", {}).get("order") or [n["name"] for n in record["nodes"]]
    step = {n: i for i, n in enumerate(order)}
    extra: dict[str, list[str]] = {}
    inputs = []
    pinned = 0
    for inp in record.get("inputs", []):
        per = inp.get("reader_bytes")
        if not inp.get("freeable") or not per:
            inputs.append(inp)
            continue
        for n in per:
            if n not in step:
                raise InputError(f"input {inp['name']}: reader_bytes: unknown node {n!r}")
        last = _last_reader(per, step)
        extra.setdefault(last, []).extend(n for n in per if n != last)
        m = {k: v for k, v in inp.items() if k != "reader_bytes"}
        if m.get("size") != per[last]:
            m["size"] = int(per[last])
            m.pop("size_expr", None)  # the hint's bytes of another read
        inputs.append(m)
        pinned += 1
    if not pinned:
        return dict(record), 0
    nodes = []
    for node in record["nodes"]:
        preds = list(node.get("preds", node.get("deps", [])))
        more = [p for p in dict.fromkeys(extra.get(node["name"], [])) if p not in preds]
        nodes.append({**node, "preds": preds + more} if more else node)
    out = dict(record)
    out["nodes"], out["inputs"] = nodes, inputs
    return out, pinned


# -- a training step: the forward and backward graphs as one ----------------------------------


def join_training_records(fwd: Mapping[str, Any], bwd: Mapping[str, Any]) -> dict[str, Any]:
    """One record for a training step: the forward graph's nodes, then the backward's.

    AOTAutograd's forward returns the activations it saves and its backward takes them as
    inputs under the same FX names (``fx_outputs`` of the forward, the backward's inputs):
    each such input becomes the forward's buffer, freed after its last reader in the
    backward; forward outputs the backward does not read (the loss, user outputs) stay to
    the end. Every backward node that has no predecessor in the backward waits for every
    forward node without a successor, so the forward runs first, as it does in torch. Node
    and buffer names get ``fwd/`` and ``bwd/`` in front; Inductor's orders are joined.
    """
    for rec, what in ((fwd, "forward"), (bwd, "backward")):
        _need(rec, dict, what)
        if rec.get("format") != FORMAT:
            raise InputError(f"{what}: not a {FORMAT} record")
    outs = _names(fwd.get("outputs", []), "forward: outputs")
    fx_outs = fwd.get("fx_outputs") or []
    if len(fx_outs) != len(outs):
        raise InputError("forward: fx_outputs and outputs differ in length (not a capture?)")
    saved = {fx: out for fx, out in zip(fx_outs, outs) if fx is not None}

    def ren(prefix: str, name: str) -> str:
        return f"{prefix}/{name}"

    nodes, buffers, inputs = [], [], []
    fwd_names = [n["name"] for n in fwd["nodes"]]
    has_succ = set()
    for n in fwd["nodes"]:
        has_succ.update(n.get("preds", []))
    sinks = [ren("fwd", x) for x in fwd_names if x not in has_succ]
    for prefix, rec in (("fwd", fwd), ("bwd", bwd)):
        for n in rec["nodes"]:
            m = dict(n)
            m["name"] = ren(prefix, n["name"])
            m["deps"] = [ren(prefix, d) for d in n.get("deps", [])]
            m["preds"] = [ren(prefix, d) for d in n.get("preds", n.get("deps", []))]
            if prefix == "bwd" and not m["preds"]:
                m["preds"] = list(sinks)
            nodes.append(m)
    by_fwd_buffer: dict[str, dict[str, Any]] = {}
    fwd_inputs: dict[str, dict[str, Any]] = {}
    for b in fwd["buffers"]:
        m = dict(b)
        m["name"], m["node"] = ren("fwd", b["name"]), ren("fwd", b["node"])
        m["succ"] = [ren("fwd", x) for x in b.get("succ", [])]
        for key in ("alloc_parent", "mutates"):
            if key in b:
                m[key] = ren("fwd", b[key])
        by_fwd_buffer[b["name"]] = m
        buffers.append(m)
    for i in fwd.get("inputs", []):
        m = dict(i)
        m["name"] = ren("fwd", i["name"])
        m["succ"] = [ren("fwd", x) for x in i.get("succ", [])]
        if "reader_bytes" in i:
            m["reader_bytes"] = {ren("fwd", k): v for k, v in i["reader_bytes"].items()}
        fwd_inputs[i["name"]] = m
        inputs.append(m)
    read_by_bwd: set[str] = set()
    bwd_roots = [n["name"] for n in bwd["nodes"] if not n.get("preds", n.get("deps"))]
    for i in bwd.get("inputs", []):
        out = saved.get(i["name"])
        target = by_fwd_buffer.get(out) if out else None
        if target is None and out in fwd_inputs:
            target = fwd_inputs[out]
        if target is not None:
            # saved but never read: held until the backward starts
            readers = i.get("succ") or bwd_roots
            target["succ"] = target["succ"] + [ren("bwd", x) for x in readers]
            read_by_bwd.add(target["name"])
            continue
        m = dict(i)
        m["name"] = ren("bwd", i["name"])
        m["succ"] = [ren("bwd", x) for x in i.get("succ", [])]
        if "reader_bytes" in i:
            m["reader_bytes"] = {ren("bwd", k): v for k, v in i["reader_bytes"].items()}
        inputs.append(m)
    for m in list(by_fwd_buffer.values()) + list(fwd_inputs.values()):
        if m["name"] in read_by_bwd:
            m["output"] = False  # freed after its last reader in the backward
    for b in bwd["buffers"]:
        m = dict(b)
        m["name"], m["node"] = ren("bwd", b["name"]), ren("bwd", b["node"])
        m["succ"] = [ren("bwd", x) for x in b.get("succ", [])]
        for key in ("alloc_parent", "mutates"):
            if key in b:
                m[key] = ren("bwd", b[key])
        buffers.append(m)
    order = None
    fo, bo = fwd.get("inductor", {}).get("order"), bwd.get("inductor", {}).get("order")
    if fo is not None and bo is not None:
        order = [ren("fwd", x) for x in fo] + [ren("bwd", x) for x in bo]
    symbols = dict(fwd.get("symbols") or {})
    symbols.update(bwd.get("symbols") or {})
    return {
        "format": FORMAT,
        "version": VERSION,
        "name": str(fwd.get("name", "step")).rsplit(".", 1)[0] + ".step",
        "part": "step",
        "torch_version": fwd.get("torch_version"),
        "training": True,
        "nodes": nodes,
        "buffers": buffers,
        "inputs": inputs,
        "outputs": [],
        "symbols": symbols,
        "inductor": {"order": order} if order else {},
    }


# -- Inductor's export_graph_for_simulator JSON -----------------------------------------------


def record_from_simulator_json(data: Mapping[str, Any], name: str) -> dict[str, Any]:
    """Inductor's simulator JSON as a ``cpsched-torch-graph`` record (no orders)."""
    _need(data, dict, "the file")
    nodes = _need(data.get("nodes"), list, "nodes")
    buffers = _need(data.get("buffers"), list, "buffers")
    owner: dict[str, str] = {}
    for k, n in enumerate(nodes):
        _need(n, dict, f"nodes[{k}]")
        nname = _need(n.get("name"), str, f"nodes[{k}]: name")
        for bn in _names(n.get("buffer_names", []), f"node {nname}: buffer_names"):
            owner[bn] = nname
    reads: dict[str, list[str]] = {}
    by_name: dict[str, dict[str, Any]] = {}
    for k, buf in enumerate(buffers):
        _need(buf, dict, f"buffers[{k}]")
        bname = _need(buf.get("name"), str, f"buffers[{k}]: name")
        by_name[bname] = buf
        if not buf.get("is_input") and bname in owner:
            reads.setdefault(owner[bname], [])
            for d in _names(buf.get("deps", []), f"buffer {bname}: deps"):
                if d not in reads[owner[bname]]:
                    reads[owner[bname]].append(d)
    succ: dict[str, list[str]] = {}
    for nname, deps in reads.items():
        for d in deps:
            succ.setdefault(d, []).append(nname)
    out_nodes = []
    for i, n in enumerate(nodes):
        deps = []
        for d in reads.get(n["name"], []):
            p = owner.get(d)
            if p is not None and p != n["name"] and p not in deps:
                deps.append(p)
        out_nodes.append({"name": n["name"], "index": i, "deps": deps, "preds": deps})
    out_bufs, out_inputs = [], []
    for bname, buf in by_name.items():
        size_free = _int(buf.get("size_free", buf.get("size", 0)), f"buffer {bname}: size_free")
        if buf.get("is_input"):
            out_inputs.append(
                {
                    "name": bname,
                    "freeable": True,
                    "size": size_free,
                    "succ": succ.get(bname, []),
                    "output": bool(buf.get("is_output")),
                }
            )
        elif bname in owner:
            out_bufs.append(
                {
                    "name": bname,
                    "node": owner[bname],
                    "size_alloc": _int(
                        buf.get("size_alloc", size_free), f"buffer {bname}: size_alloc"
                    ),
                    "size_free": size_free,
                    "succ": [s for s in succ.get(bname, []) if s != owner[bname]],
                    "output": bool(buf.get("is_output")),
                    "deps": list(reads.get(owner[bname], [])),
                }
            )
    return {
        "format": FORMAT,
        "version": VERSION,
        "name": name,
        "part": "simulator",
        "nodes": out_nodes,
        "buffers": out_bufs,
        "inputs": out_inputs,
        "outputs": [b for b, r in by_name.items() if r.get("is_output")],
        "inductor": {"order": [n["name"] for n in nodes]},
    }


def read_torch_graph(path: str) -> Graph:
    """A ``cpsched-torch-graph`` file or Inductor's simulator JSON (gzip or not)."""
    data = load_json(path)
    if isinstance(data, dict) and data.get("format") == FORMAT:
        return graph_from_torch_dict(data, path)
    try:
        name = display_name(path).removesuffix(".torch")
        rec = record_from_simulator_json(data, name)
    except InputError as e:
        raise e.with_path(path) from None
    return graph_from_torch_dict(rec, path)


def looks_like_simulator_json(head: str) -> bool:
    """Whether a JSON file's first bytes look like Inductor's simulator export."""
    return '"buffer_names"' in head or ('"size_alloc"' in head and '"size_free"' in head)


__all__ = [
    "FORMAT",
    "VERSION",
    "TorchProgram",
    "graph_from_torch_dict",
    "read_torch_graph",
    "record_from_simulator_json",
    "save_record",
    "looks_like_simulator_json",
    "join_training_records",
    "inductor_estimate",
    "pin_last_readers",
    "INDUCTOR_METHODS",
]
