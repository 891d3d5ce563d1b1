"""Schedule JSON (``"format": "cpsched-schedule"``) and reading an order back from a file."""

from __future__ import annotations

from typing import Any

from cpsched.analysis.schedule import Schedule
from cpsched.core.errors import InputError
from cpsched.core.graph import Graph
from cpsched.core.plain import to_plain
from cpsched.readers import load_json, read_text, sniff_format
from cpsched.readers.detect import is_hlo_module
from cpsched.readers.hlo.convert import computation_orders
from cpsched.readers.hlo.parser import parse_hlo_text
from cpsched.readers.hlo.verify import read_verified_graph, verify_module

FORMAT = "cpsched-schedule"
VERSION = 1


def schedule_to_dict(schedule: Schedule) -> dict[str, Any]:
    out: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "graph": schedule.graph.name,
        "method": schedule.method,
        "status": schedule.status,
        "order": schedule.order_names(),
        "peak_bytes": schedule.peak_by_name(),
        "lower_bound_bytes": schedule.lower_bound_by_name(),
        "gap": {k: round(v, 6) for k, v in schedule.gap().items()},
        "solve_seconds": round(float(schedule.seconds), 3),
    }
    if schedule.scenarios.dims:
        out["scenarios"] = schedule.scenarios.to_json()
    for k, v in schedule.info.items():
        if k not in out:
            out[k] = to_plain(v)
    return out


def order_from_names(graph: Graph, names: list[str], path: str | None = None) -> list[int]:
    out = []
    for k, name in enumerate(names):
        try:
            out.append(graph.op_index(str(name)))
        except KeyError:
            raise InputError(
                f"schedule entry #{k + 1} names op {name!r}, which {graph.name} does not have",
                path=path,
            ) from None
    return out


def schedule_method(path: str) -> str | None:
    """The method a schedule JSON names (None for other files, or a JSON without one)."""
    if sniff_format(path) != "cpsched-schedule":
        return None
    method = load_json(path).get("method")
    return method if isinstance(method, str) and method else None


def read_module_orders(path: str) -> dict[str, list[str]] | None:
    """Every computation's order (instruction names, entry included) from a scheduled HLO
    module, so that reordered loop bodies and branches count too; None for a schedule file
    of another kind (JSON, names one per line)."""
    if sniff_format(path) != "hlo":
        return None
    text = read_text(path)
    if not is_hlo_module(text):
        return None
    module = verify_module(parse_hlo_text(text, path))
    if not module.is_scheduled:
        raise InputError("HLO module is not scheduled (no is_scheduled=true)", path=path)
    return computation_orders(module)


def read_order(graph: Graph, path: str) -> list[int]:
    """An order for ``graph`` from a schedule JSON, a scheduled HLO module, or a text file
    with one op name per line."""

    kind = sniff_format(path)
    if kind == "cpsched-schedule":
        data = load_json(path)
        return order_from_names(graph, list(data.get("order") or []), path)
    if kind == "hlo":
        text = read_text(path)
        if is_hlo_module(text):
            other = read_verified_graph(path)
            if other.original_order is None:
                raise InputError("HLO module is not scheduled (no is_scheduled=true)", path=path)
            return order_from_names(graph, [other.op_names[i] for i in other.original_order], path)
        names = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
        return order_from_names(graph, names, path)
    raise InputError(
        "not a schedule: expected schedule JSON, scheduled HLO or a list of op names", path=path
    )
