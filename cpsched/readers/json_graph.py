"""cpsched's own JSON graph format (``"format": "cpsched-graph"``, version 1).

Layout (fields with default values may be left out)::

    {"format": "cpsched-graph", "version": 1, "name": "...",
     "ops": [{"name": "dot.1", "opcode": "dot", "kind": "compute",
              "operands": ["p0", "p1"], "control_preds": [],
              "flops": "2*b*s*4096", "bytes_accessed": "...", "transient": "0",
              "async_start": null,                       # for async updates/dones
              "collective": {"kind": "all-reduce", "bytes": "4*b*s", "group_size": 8,
                             "replica_groups": [[0, 1]], "channel_id": 1, "is_sync": false},
              "attrs": {...}}],
     "buffers": [{"name": "dot.1", "op": "dot.1", "size": "4*b*s*1024",
                  "users": ["add.2"], "live_in": false, "live_out": false, "space": 0}],
     "order": ["p0", ...] or null,
     "scenarios": {...} or null,                         # see cpsched.core.scenarios.from_json
     "meta": {...}}

Sizes, flops and bytes are symbolic expressions kept as strings (``cpsched.core.symbolic``).
"""

from __future__ import annotations

from cpsched.core.errors import InputError
from cpsched.core.graph import Collective, Graph, GraphBuilder, OpKind, buffer_flags, op_costs
from cpsched.core.scenarios import from_json
from cpsched.core.symbolic import SymExpr
from cpsched.readers.files import load_json

FORMAT = "cpsched-graph"
VERSION = 1
KIND_NAMES = {k.name.lower().replace("_", "-"): k for k in OpKind}


def _typed(value, types, what: str, path: str | None):
    if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
        raise InputError(
            f"{what} must be {_TYPE_NAMES.get(types, types)}, not true/false", path=path
        )
    if not isinstance(value, types):
        raise InputError(
            f"{what} must be {_TYPE_NAMES.get(types, types)}, not {type(value).__name__}", path=path
        )
    return value


_TYPE_NAMES = {
    list: "a list",
    dict: "an object",
    int: "an integer",
    str: "a string",
    (int, str): "an integer or a size expression string",
}


def _check_shape(data, path: str | None) -> None:
    """The types of the fields read below, so that a wrong type is a one-line error."""
    _typed(data, dict, "the file", path)
    _typed(data.get("version", 0), int, "version", path)
    _typed(data.get("ops"), list, "ops", path)
    for key in ("buffers",):
        _typed(data.get(key, []), list, key, path)
    for key in ("order",):
        if data.get(key) is not None:
            _typed(data[key], list, key, path)
    for key in ("meta", "scenarios"):
        if data.get(key) is not None:
            _typed(data[key], dict, key, path)
    for k, op in enumerate(data["ops"]):
        _typed(op, dict, f"op #{k}", path)
        _typed(op.get("name"), (int, str), f"op #{k}: name", path)
        for key in ("operands", "control_preds"):
            _typed(op.get(key, []), list, f"op {op['name']}: {key}", path)
        for key in ("flops", "bytes_accessed", "transient"):
            _typed(op.get(key, 0), (int, str), f"op {op['name']}: {key}", path)
        if op.get("attrs") is not None:
            _typed(op["attrs"], dict, f"op {op['name']}: attrs", path)
        if op.get("collective"):
            _typed(op["collective"], dict, f"op {op['name']}: collective", path)
    for k, buf in enumerate(data.get("buffers", [])):
        _typed(buf, dict, f"buffer #{k}", path)
        name = buf.get("name", f"#{k}")
        _typed(buf.get("size", 0), (int, str), f"buffer {name}: size", path)
        _typed(buf.get("users", []), list, f"buffer {name}: users", path)
        _typed(buf.get("space", 0), int, f"buffer {name}: space", path)


def graph_from_dict(data: dict, path: str | None = None) -> Graph:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(f"not a {FORMAT} file", path=path)
    _typed(data.get("version", 0), int, "version", path)
    if data.get("version", 0) > VERSION:
        raise InputError(
            f"{FORMAT} version {data.get('version')} is newer than this cpsched reads ({VERSION})",
            path=path,
        )
    _check_shape(data, path)
    b = GraphBuilder(str(data.get("name", "graph")))
    try:
        ops = data["ops"]
        for k, op in enumerate(ops):
            kind = KIND_NAMES.get(str(op.get("kind", "compute")))
            if kind is None:
                raise InputError(f"op #{k} ({op.get('name')}): unknown kind {op.get('kind')!r}")
            b.add_op(
                str(op["name"]),
                str(op.get("opcode", op.get("kind", "compute"))),
                kind,
                **op_costs(op),
                attrs=op.get("attrs"),
            )
        for k, op in enumerate(ops):
            for o in op.get("operands", ()):
                b.add_operand(k, str(o))
            for c in op.get("control_preds", ()):
                b.add_control_pred(k, str(c))
            if op.get("async_start") is not None:
                b.pair_async(str(op["async_start"]), k)
            c = op.get("collective")
            if c:
                b.set_collective(k, Collective.from_record(c))
        for k, buf in enumerate(data.get("buffers", ())):
            where = f"buffer {buf.get('name', '#' + str(k))}"
            try:
                size = SymExpr.parse(buf.get("size", 0))
            except (InputError, ValueError) as e:
                raise InputError(f"{where}: {getattr(e, 'reason', e)}") from None
            b.add_buffer(
                str(buf["op"]),
                size,
                users=[str(u) for u in buf.get("users", ())],
                name=None if buf.get("name") is None else str(buf["name"]),
                **buffer_flags(buf),
            )
        if data.get("order") is not None:
            b.original_order = [b.index(str(x)) for x in data["order"]]
        b.meta.update(data.get("meta") or {})
        if data.get("scenarios"):
            try:
                from_json(data["scenarios"])  # checked here, where the file is known
            except InputError as e:
                raise InputError(
                    f"scenarios: {e.reason.removeprefix('scenarios JSON: ')}"
                ) from None
            b.meta["scenarios"] = data["scenarios"]
    except InputError as e:
        raise (e.with_path(path) if path else e) from None
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError, IndexError) as e:
        raise InputError(f"bad {FORMAT} content: {type(e).__name__} {e}", path=path) from None
    try:
        return b.build()
    except InputError as e:
        raise (e.with_path(path) if path else e) from None
    except Exception as e:
        raise InputError(str(e), path=path) from None


def read_json_graph(path: str) -> Graph:
    return graph_from_dict(load_json(path), path)
