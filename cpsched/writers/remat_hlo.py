"""A remat / offload plan written into its HLO module, one module per shape bucket.

One order serves every scenario but the active clones and copies may differ per bucket, and
an HLO module has one instruction list: so ``output`` carries the plan of the last (largest)
bucket, which is also checked in every other bucket (memory grows with the dims, so it is the
safe module when the shape is not known), and with several buckets each bucket's own module
goes to ``OUT.<bucket>.hlo``. Every module is read back, validated and re-simulated before
anything is written; the plan JSON goes to ``OUT.plan.json``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

from cpsched.analysis.memory import simulate
from cpsched.core.errors import InputError, ScheduleError
from cpsched.core.graph import Graph, OpKind
from cpsched.core.scenarios import Scenarios
from cpsched.core.units import format_bytes_exact
from cpsched.readers.hlo.convert import module_graphs, read_hlo_module
from cpsched.readers.hlo.parser import HloModule, parse_hlo_text
from cpsched.remat.events import COMPUTE, FREE
from cpsched.remat.plan import RematResult
from cpsched.writers import check_target, write_json, write_text
from cpsched.writers.hlo import (
    async_module_text,
    remat_module_text,
    verify_async_module,
    verify_remat_module,
)


def bucket_path(output: str, name: str) -> str:
    """``out.hlo`` + bucket ``s<=512`` -> ``out.s_512.hlo`` (the name made file-safe)."""
    stem, ext = os.path.splitext(output)
    return f"{stem}.{re.sub(r'[^A-Za-z0-9_.-]+', '_', name).strip('_') or 'bucket'}{ext}"


def remat_hlo_paths(output: str, scenarios: Scenarios) -> tuple[dict[int, str], str]:
    """Module path per bucket (the last bucket at ``output``) and the plan JSON's path."""
    last = len(scenarios) - 1
    paths = {
        s: (output if s == last else bucket_path(output, scenarios.names[s]))
        for s in range(len(scenarios))
    }
    plan_path = output + ".plan.json"
    if len(set(paths.values()) | {plan_path}) != len(scenarios) + 1:
        raise InputError("two buckets map to one file name; rename the scenarios", path=output)
    return paths, plan_path


def async_remat_module_text(
    module,
    graph: Graph,
    events,
    convert: Callable[[Graph], Graph],
    scenarios: Scenarios,
    budget: int,
    comment: str | None = None,
) -> tuple[str, str, dict[str, Any]]:
    """A plan of ``graph`` (``convert`` applied to a computation of ``module``: its sync
    collectives split into start/done pairs) written as HLO in two steps: the plan with each
    collective at its start's position (``remat_module_text`` on the computation as it is),
    then that module's collectives written as async pairs (``async_module_text``), each done
    before the op that follows it in the plan. Read back, validated and re-simulated (the
    peak within ``budget``). Returns (text, computation, what was written)."""
    sync = module_graphs(module)[graph.name]
    index = {n: i for i, n in enumerate(sync.op_names)}
    bindex = {n: j for j, n in enumerate(sync.buffer_names)}
    events1 = []
    dones_before: dict[str, list[str]] = {}
    pending: list[str] = []
    seen: set[int] = set()
    for code, x in events:
        code, x = int(code), int(x)
        if code != COMPUTE:
            name = graph.buffer_names[x]
            if code == FREE and name not in bindex:
                continue  # the async form's own state (tuple table, contexts)
            if name not in bindex:
                raise InputError(f"buffer {name!r} of the plan is not in {sync.name!r}")
            events1.append((code, bindex[name]))
            continue
        attrs = graph.attrs(x)
        orig = str(attrs.get("converted_from", graph.op_names[x]))
        if int(graph.kinds[x]) == OpKind.ASYNC_DONE and "converted_from" in attrs:
            pending.append(orig)
            continue
        if x not in seen:
            dones_before.setdefault(orig, []).extend(pending)
            pending = []
        seen.add(x)
        if orig not in index:
            raise InputError(f"op {orig!r} of the plan is not in {sync.name!r}")
        events1.append((code, index[orig]))
    w1 = remat_module_text(module, sync, events1, comment=comment)
    module1 = parse_hlo_text(w1.text)
    g1 = module_graphs(module1)[w1.computation]
    assert g1.original_order is not None  # written is_scheduled=true
    g1c = convert(g1)
    cidx = {n: i for i, n in enumerate(g1c.op_names)}
    start_of: dict[str, int] = {}
    done_of: dict[str, int] = {}
    for i in range(g1c.n_ops):
        src = g1c.attrs(i).get("converted_from")
        if src is not None and int(g1c.kinds[i]) == OpKind.ASYNC_START:
            start_of[str(src)] = i
            done_of[str(src)] = int(g1c.async_done[i])
    order: list[int] = []
    names1 = [g1.op_names[i] for i in g1.original_order]
    for k, n in enumerate(names1):
        if k == len(names1) - 1:
            for c in pending:  # dones the plan left at the end: before the root
                order.append(done_of[c])
        for c in dones_before.get(n, ()):
            if c in done_of:
                order.append(done_of[c])
        order.append(start_of[n] if n in start_of else cidx[n])
    w2 = async_module_text(module1, g1c, order, computation=w1.computation)
    back, peaks = verify_async_module(w2.text, w2, scenarios)
    if int(peaks[0]) > int(budget):
        raise ScheduleError(
            f"the written module peaks at {format_bytes_exact(peaks[0])}, above the budget {format_bytes_exact(budget)}"
        )
    info = {
        "clones": dict(w1.clones),
        "evictions": [list(e) for e in w1.evictions],
        "prefetches": [list(p) for p in w1.prefetches],
        "async_pairs": {k: list(v) for k, v in w2.pairs.items()},
        "peak_bytes": int(peaks[0]),
    }
    return w2.text, w2.computation, info


def write_remat_hlo(
    source: str | HloModule,
    output: str,
    graph: Graph,
    scenarios: Scenarios,
    result: RematResult,
    method: str,
    data: dict[str, Any],
    inputs: tuple[str, ...] = (),
    convert: Callable[[Graph], Graph] | None = None,
) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """Write the plan's module(s) and ``data`` (the plan JSON, which gains ``hlo_module``);
    ``source``: the HLO file the graph was read from, or its parsed module.
    ``convert``: the graph's collectives were split by it (``--async-collectives``): write
    them as async pairs too (``async_remat_module_text``).

    Returns the paths written (the main module first, the plan JSON last) and, per bucket,
    what went into its module (clones, evictions, prefetches, the peak read back)."""
    module = read_hlo_module(source) if isinstance(source, str) else source
    sc = scenarios
    last = len(sc) - 1
    paths, plan_path = remat_hlo_paths(output, sc)
    protect = ((source,) if isinstance(source, str) else ()) + tuple(inputs)
    for path in list(paths.values()) + [plan_path]:
        check_target(path, protect)
    texts, info = {}, {}
    for s in sorted(paths, key=lambda k: k != last):
        name, budget = sc.names[s], int(result.budget[s])
        comment = (
            (
                f"cpsched {method}: remat plan of bucket {name} ({s + 1} of {len(sc)}), "
                f"budget {format_bytes_exact(budget)}; every bucket's plan: {os.path.basename(plan_path)}"
            )
            if len(sc) > 1
            else None
        )
        if convert is not None:
            text, comp, extra = async_remat_module_text(
                module, graph, result.events[s], convert, sc.only(s), budget, comment
            )
            texts[s] = text
            info[name] = {
                "output": paths[s],
                "computation": comp,
                "scenario": name,
                "budget_bytes": budget,
                **extra,
            }
            if s == last and len(sc) > 1:
                info[name]["fits_buckets"] = [name]
            continue
        w = remat_module_text(module, graph, result.events[s], comment=comment)
        starts = [start for _, start, _ in w.evictions]
        # the house rule: what leaves the program is read back, validated and re-simulated
        back, peak = verify_remat_module(
            w.text, w.computation, sc.only(s), budget, starts, plan_peak=int(result.peak[s])
        )
        texts[s] = w.text
        info[name] = {
            "output": paths[s],
            "computation": w.computation,
            "scenario": name,
            "peak_bytes": peak,
            "budget_bytes": budget,
            "clones": dict(w.clones),
            "evictions": [list(e) for e in w.evictions],
            "prefetches": [list(p) for p in w.prefetches],
        }
        if s == last and len(sc) > 1:
            # the module read back, simulated in every bucket
            assert back.original_order is not None  # read back from a scheduled module
            peaks = simulate(back, back.original_order, sc).peak
            info[name]["fits_buckets"] = [name] + [
                sc.names[o] for o in range(last) if peaks[o] <= result.budget[o]
            ]
    top = info[sc.names[last]]
    data["hlo_module"] = dict(top, **({"per_bucket": info} if len(sc) > 1 else {}))
    for s in sorted(paths):
        write_text(paths[s], texts[s], inputs=protect)
    write_json(plan_path, data, inputs=protect)
    ordered = [sc.names[last]] + [sc.names[s] for s in range(last)]
    return [paths[last]] + [paths[s] for s in range(last)] + [plan_path], {
        n: info[n] for n in ordered
    }


__all__ = ["bucket_path", "remat_hlo_paths", "write_remat_hlo", "async_remat_module_text"]
